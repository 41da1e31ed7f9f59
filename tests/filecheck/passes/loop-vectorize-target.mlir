// RUN: irkit-opt %s -p loop-vectorize --split-input-file | FileCheck %s
// RUN: irkit-opt %s -p linalg-matmul-blis --split-input-file | FileCheck %s --check-prefix=BLIS

// The module's `irkit.target` (what `irkit-compile --cpu` sets) sizes the code, whatever
// this machine has: 128-bit registers hold 4 floats, so the loop steps by 4, and the BLIS
// register tile is 4 floats wide.
// CHECK-LABEL: func.func @scale(
// CHECK:         loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%[[C4:.*]]) {
// CHECK:           memory.vector_load %arg0[%[[I]]] : memref<64xf32>, vector<4xf32>
// CHECK-NOT:     vector<8xf32>
// CHECK-NOT:     vector<16xf32>
module attributes {irkit.target = {llc_bytes = 1048576 : i64, name = "sse2-box", vector_bits = 128 : i64, vector_registers = 16 : i64}} {
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

// BLIS-LABEL: func.func @matmul(
// BLIS:         math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// BLIS-NOT:     vector<8xf32>
// BLIS-NOT:     vector<16xf32>
module attributes {irkit.target = {llc_bytes = 1048576 : i64, name = "sse2-box", vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @matmul(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
    linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
    return
  }
}

// -----

// Without a fused multiply-add (`fma = false`), the micro-kernel multiplies and adds: a
// `math.fma` would be a call to the C library's fmaf per lane.
// BLIS-LABEL: func.func @matmul_nofma(
// BLIS-NOT:     math.fma
// BLIS:         [[P:%.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<4xf32>
// BLIS-NEXT:    arith.addf [[P]], %{{.*}} : vector<4xf32>
// BLIS-NOT:     math.fma
module attributes {irkit.target = {fma = false, llc_bytes = 1048576 : i64, name = "x86-64", vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @matmul_nofma(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
    linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
    return
  }
}
