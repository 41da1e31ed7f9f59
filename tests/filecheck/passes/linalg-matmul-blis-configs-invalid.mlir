// RUN: irkit-opt %s -p linalg-matmul-blis --split-input-file --verify-diagnostics

// A malformed config is an error at the module, never a silent default.

// expected-error @+1 {{linalg-matmul-blis: 'blis.configs' entry {ordinal = 0 : i64, unroll = 4 : i64} has no ordinal, an unknown key or a size below 1}}
module attributes {blis.configs = [{ordinal = 0 : i64, unroll = 4 : i64}]} {
  func.func @f(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
    linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>)
    return
  }
}

// -----

// expected-error @+1 {{linalg-matmul-blis: 'blis.configs' is not an array}}
module attributes {blis.configs = 3 : i64} {
  func.func @f(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
    linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>)
    return
  }
}
