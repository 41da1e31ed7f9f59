// RUN: irkit-opt %s -p loop-vectorize --split-input-file --verify-diagnostics

// A malformed target is an error at the module that carries it, never a silent default.

// expected-error @+1 {{'irkit.target' must be a dictionary {name = "...", vector_bits = N : i64, vector_registers = N : i64, llc_bytes = N : i64[, fma = true|false]} (N >= 0), got {name = "x", vector_bits = 256 : i64}}}
module attributes {irkit.target = {name = "x", vector_bits = 256 : i64}} {
  func.func @scale(%a: memref<64xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    loop.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %x = memory.load %a[%i] : memref<64xf32>
      %y = arith.mulf %x, %s : f32
      memory.store %y, %a[%i] : memref<64xf32>
    }
    return
  }
}

// -----

// `fma` is a boolean.

// expected-error @+1 {{'irkit.target' must be a dictionary {name = "...", vector_bits = N : i64, vector_registers = N : i64, llc_bytes = N : i64[, fma = true|false]} (N >= 0), got {fma = 1 : i64, llc_bytes = 1048576 : i64, name = "x", vector_bits = 256 : i64, vector_registers = 16 : i64}}}
module attributes {irkit.target = {fma = 1 : i64, llc_bytes = 1048576 : i64, name = "x", vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @scale(%a: memref<64xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    loop.parallel (%i) = (%c0) to (%c64) step (%c1) {
      %x = memory.load %a[%i] : memref<64xf32>
      %y = arith.mulf %x, %s : f32
      memory.store %y, %a[%i] : memref<64xf32>
    }
    return
  }
}
