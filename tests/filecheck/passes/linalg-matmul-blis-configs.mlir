// RUN: irkit-opt %s -p 'linalg-matmul-blis{mr=2 nr=16 lanes=8 kc=32 mc=4 nc=32 min-flops=0 dot=false direct-b-tiles=0}' | FileCheck %s

// The module's `blis.configs` (what `irkit-compile --autotune` measured,
// irkit.runtime.tuning) overrides the sizes of the contraction at its ordinal in the pass's
// walk, here the second; the first keeps the pass options: B's packed panels are
// (nc / nr) x kc x nr, and the micro-kernel carries mr * nr / lanes accumulators.

// CHECK-LABEL: func.func @first(
// CHECK:         memory.alloc() : memref<2x32x16xf32>
// CHECK:         loop.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-LABEL: func.func @second(
// CHECK:         memory.alloc() : memref<4x16x8xf32>
// CHECK:         loop.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>) {
module attributes {blis.configs = [{ordinal = 1 : i64, kc = 16 : i64, nr = 8 : i64}]} {
  func.func @first(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
    linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>)
    return
  }
  func.func @second(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
    linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>)
    return
  }
}
