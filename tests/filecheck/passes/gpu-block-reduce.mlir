// RUN: irkit-opt %s -p 'gpu-block-reduce{block-size=64},canonicalize,cse' | FileCheck %s

// A row max (its fill and the reduction, a fusion.group over the rows) becomes one block
// per row; the rows are 10 long, so the block is 16 threads, not 64. Each thread folds its
// strided share of the row from -inf, the partials meet in a 16-element workgroup buffer,
// four halvings (8, 4, 2, 1) with a barrier before each and after the last, and thread 0
// combines the fill's value with element 0.

// CHECK-LABEL: func.func @row_max(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x10xf32>, %[[MX:[^:]*]]: memref<?xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[ROWS:.*]] = memory.dim %[[MX]], 0
// CHECK-NEXT:    %[[GRID:.*]] = arith.maxsi %[[ROWS]], %[[C1]] : index
// CHECK-NEXT:    gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C16]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) workgroup(%[[S:.*]] : memref<16xf32, #gpu.address_space<workgroup>>) {
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]] : index
// CHECK-NEXT:      loop.if %[[IN]] {
// CHECK-NEXT:        loop.for %{{.*}} = %[[T]] to %[[C1]] step %[[C16]] {
// CHECK-NEXT:          memory.store %[[NINF]], %[[MX]][%[[ROW]]]
// CHECK-NEXT:        }
// CHECK-NEXT:        gpu.barrier
// CHECK-NEXT:        %[[P:.*]] = loop.for %[[J:.*]] = %[[T]] to %[[C10]] step %[[C16]] iter_args(%[[ACC:.*]] = %[[NINF]]) -> (f32) {
// CHECK-NEXT:          %[[V:.*]] = memory.load %[[X]][%[[ROW]], %[[J]]]
// CHECK-NEXT:          %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:          loop.yield %[[M]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        memory.store %[[P]], %[[S]][%[[T]]]
// CHECK-COUNT-5:     gpu.barrier
// CHECK-NEXT:        %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %[[C0]] : index
// CHECK-NEXT:        loop.if %[[FIRST]] {
// CHECK-NEXT:          %[[OLD:.*]] = memory.load %[[MX]][%[[ROW]]]
// CHECK-NEXT:          %[[ALL:.*]] = memory.load %[[S]][%[[C0]]]
// CHECK-NEXT:          %[[R:.*]] = arith.maximumf %[[OLD]], %[[ALL]] : f32
// CHECK-NEXT:          memory.store %[[R]], %[[MX]][%[[ROW]]]
// CHECK-NOT:     fusion.group
// CHECK-NOT:     linalg.
func.func @row_max(%x: memref<?x10xf32>, %mx: memref<?xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  fusion.group {kind = "reduction", outer_dims = 1 : i64} {
    linalg.fill ins(%ninf : f32) outs(%mx : memref<?xf32>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<?x10xf32>) outs(%mx : memref<?xf32>) {
    ^bb0(%a: f32, %m: f32):
      %0 = arith.maximumf %m, %a : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// A per-channel sum over a dynamic batch (a batchnorm gradient's form: dims 0 and 2 reduced,
// dim 1 the block's point): the row is B x 3 points, a size computed before the launch, which
// the threads' loop reads as its bound (computed after it, it would not dominate the loop).

// CHECK-LABEL: func.func @channel_sum(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x8x3xf32>, %[[S:[^:]*]]: memref<8xf32>)
// CHECK:         %[[B:.*]] = memory.dim %[[X]], 0
// CHECK-NEXT:    %[[ROW:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK-NEXT:    gpu.launch blocks({{.*}}) threads(%[[T:[^,]*]], {{[^)]*}}) in (%{{[^ ]*}} = %[[C64:[^,]*]], {{.*}} workgroup(%{{.*}} : memref<64xf32, #gpu.address_space<workgroup>>) {
// CHECK-NEXT:      loop.for %{{.*}} = %[[T]] to %[[ROW]] step %[[C64]] iter_args(
// CHECK-NOT:     linalg.
func.func @channel_sum(%x: memref<?x8x3xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1)>],
                  iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<?x8x3xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %0 = arith.addf %acc, %a : f32
    linalg.yield %0 : f32
  }
  return
}
