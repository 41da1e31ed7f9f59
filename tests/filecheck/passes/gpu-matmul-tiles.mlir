// RUN: irkit-opt %s --split-input-file -p 'gpu-matmul-tiles{tile-m=8 tile-n=4 tile-k=4 thread-m=2 thread-n=2},canonicalize,cse' | FileCheck %s
// RUN: irkit-opt %s --split-input-file -p 'gpu-matmul-tiles,canonicalize,cse' | FileCheck %s --check-prefix=FIT

// A matmul with a dynamic M becomes one launch: ceil(7 / 4) = 2 x ceil(M / 8) blocks of
// (4 / 2) x (8 / 2) threads, the A tile (4 x 8, k-major) and the B tile (4 x 4) in workgroup
// memory. Each thread fetches its 4 + 2 elements of the first tiles into registers (guarded
// loads: 7 is not a multiple of 4, nor is K = 9 of 4); each K step stores them into the
// tiles, fetches the next ones (under `k0 + 4 < K`) before its multiply-adds, carries a
// 2 x 2 register block of fused multiply-adds (the K tile unrolled), and the block is
// stored under guards, adding into C (no zero fill to fold here).

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x9xf32>, %[[B:[^:]*]]: memref<9x7xf32>, %[[C:[^:]*]]: memref<?x7xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         %[[M:.*]] = memory.dim %[[A]], 0
// CHECK-NEXT:    %[[CEIL:.*]] = arith.ceildivsi %[[M]], %[[C8]] : index
// CHECK-NEXT:    %[[GY:.*]] = arith.maxsi %[[CEIL]], %[[C1]] : index
// CHECK-NEXT:    gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C2]], %{{.*}} = %[[GY]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C2]], %{{.*}} = %[[C4]], %{{.*}} = %[[C1]]) workgroup(%[[AS:.*]] : memref<4x8xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<4x4xf32, #gpu.address_space<workgroup>>) {
// CHECK-COUNT-4:   memory.load %[[A]]
// CHECK-COUNT-2:   memory.load %[[B]]
// CHECK:           loop.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-4:     memory.store {{.*}}, %[[AS]]
// CHECK-COUNT-2:     memory.store {{.*}}, %[[BS]]
// CHECK-NEXT:        gpu.barrier
// CHECK:             loop.if {{.*}} -> (f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-4:       memory.load %[[A]]
// CHECK-COUNT-2:       memory.load %[[B]]
// CHECK:             } else {
// CHECK-COUNT-2:     memory.load %[[AS]]
// CHECK-COUNT-2:     memory.load %[[BS]]
// CHECK-COUNT-4:     math.fma
// CHECK-COUNT-12:    math.fma
// CHECK-NEXT:        gpu.barrier
// CHECK-COUNT-4:     arith.addf
// CHECK-COUNT-4:   loop.if
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.matmul
// CHECK:         return
func.func @matmul(%a: memref<?x9xf32>, %b: memref<9x7xf32>, %c: memref<?x7xf32>) {
  linalg.matmul ins(%a, %b : memref<?x9xf32>, memref<9x7xf32>) outs(%c : memref<?x7xf32>)
  return
}

// -----

// Inside a fusion.group, the zero fill is folded (K static) and the epilogue (truncation,
// bias, relu) runs at the store: the f64 accumulator is gone, the launch writes %y. (K = 3
// is one tile: canonicalize folds the K loop.)

// CHECK-LABEL: func.func @epilogue(
// CHECK-SAME:      %[[Y:[^:]*]]: memref<5x6xf32>)
// CHECK-NOT:     memory.alloc
// CHECK-NOT:     linalg.fill
// CHECK:         gpu.launch
// CHECK:           gpu.barrier
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:           loop.if
// CHECK-NEXT:        memory.load %{{.*}}[%{{.*}}] : memref<6xf32>
// CHECK-NEXT:        arith.truncf {{.*}} : f64 to f32
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        memory.store {{.*}}, %[[Y]]
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @epilogue(%a: memref<5x3xf32>, %b: memref<3x6xf32>, %bias: memref<6xf32>,
                    %y: memref<5x6xf32>) {
  %zero = arith.constant 0.0 : f64
  %fzero = arith.constant 0.0 : f32
  %acc = memory.alloc() : memref<5x6xf64>
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    linalg.fill ins(%zero : f64) outs(%acc : memref<5x6xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<5x3xf32>, memref<3x6xf32>) outs(%acc : memref<5x6xf64>) {
    ^bb0(%x: f32, %w: f32, %s: f64):
      %p = arith.mulf %x, %w : f32
      %pw = arith.extf %p : f32 to f64
      %t = arith.addf %s, %pw : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%acc, %bias : memref<5x6xf64>, memref<6xf32>) outs(%y : memref<5x6xf32>) {
    ^bb0(%v: f64, %bv: f32, %o: f32):
      %v32 = arith.truncf %v : f64 to f32
      %t = arith.addf %v32, %bv : f32
      %r = arith.maximumf %t, %fzero : f32
      linalg.yield %r : f32
    }
    memory.dealloc %acc : memref<5x6xf64>
  }
  return
}

// -----

// The default tiles (64 x 64, 4 x 4 per thread) fitted to a static 2 x 10 output over
// K = 784 (logreg's forward at batch 2): thread-m 2, tile-m 2, tile-n 10 rounded up to 12
// (three threads of 4 columns), tile-k 32 (K is larger): one block of 3 x 1 threads, each
// with 2 x 4 multiply-adds per k, 32 k per tile (unrolled).

// FIT-LABEL: func.func @fitted(
// FIT-DAG:     %[[C1:.*]] = arith.constant 1 : index
// FIT-DAG:     %[[C3:.*]] = arith.constant 3 : index
// FIT:         gpu.launch blocks(%{{.*}}) in (%{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]]) threads(%{{.*}}) in (%{{[^ ]*}} = %[[C3]], %{{[^ ]*}} = %[[C1]], %{{[^ ]*}} = %[[C1]]) workgroup(%{{.*}} : memref<32x2xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x12xf32, #gpu.address_space<workgroup>>) {
// FIT-COUNT-256:   math.fma
// FIT-NOT:         math.fma
// FIT:           gpu.terminator
func.func @fitted(%a: memref<2x784xf32>, %b: memref<784x10xf32>, %c: memref<2x10xf32>) {
  linalg.matmul ins(%a, %b : memref<2x784xf32>, memref<784x10xf32>) outs(%c : memref<2x10xf32>)
  return
}

// -----

// A large static problem: the tile and register block doubled along M (128 x 64, 8 x 4 per
// thread; 128 x 64 blocks, more than `grow-blocks`), the threads the same 16 x 16; the A
// tile's rows padded by 4 (bank conflicts of the k-major stores); each thread's 8 rows two
// groups of 4 consecutive ones, 64 apart, its 4 columns one group. tile-k fitted to K = 16.
// 8192 and 16 are multiples of their tiles: no guard anywhere (K is one tile: canonicalize
// folds the K loop).

// FIT-LABEL: func.func @grown(
// FIT-DAG:     %[[C1:.*]] = arith.constant 1 : index
// FIT-DAG:     %[[C16:.*]] = arith.constant 16 : index
// FIT-DAG:     %[[C64:.*]] = arith.constant 64 : index
// FIT-DAG:     %[[C128:.*]] = arith.constant 128 : index
// FIT:         gpu.launch blocks(%{{.*}}) in (%{{[^ ]*}} = %[[C128]], %{{[^ ]*}} = %[[C64]], %{{[^ ]*}} = %[[C1]]) threads(%[[TX:[^,]*]], %[[TY:[^,]*]], %{{.*}}) in (%{{[^ ]*}} = %[[C16]], %{{[^ ]*}} = %[[C16]], %{{[^ ]*}} = %[[C1]]) workgroup(%[[AS:.*]] : memref<16x132xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>>) {
// FIT-NOT:         loop.if
// FIT:             memory.load %[[AS]]
// FIT-COUNT-7:     memory.load %[[AS]]
// FIT-COUNT-4:     memory.load %[[BS]]
// FIT-COUNT-32:    math.fma
// FIT-NOT:         loop.if
// FIT:           gpu.terminator
func.func @grown(%a: memref<8192x16xf32>, %b: memref<16x8192xf32>, %c: memref<8192x8192xf32>) {
  linalg.matmul ins(%a, %b : memref<8192x16xf32>, memref<16x8192xf32>) outs(%c : memref<8192x8192xf32>)
  return
}
