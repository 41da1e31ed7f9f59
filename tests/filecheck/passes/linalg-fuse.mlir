// RUN: irkit-opt %s -p linalg-fuse | FileCheck %s
// RUN: irkit-opt %s -p 'linalg-fuse,bufferize,lower-linalg-to-loop,canonicalize,cse' \
// RUN:   --verify-each=numeric | FileCheck %s --check-prefix=LOOP

// linalg-fuse groups structured ops that share outer parallel loops into fusion.groups;
// lower-linalg-to-loop makes each group one loop nest whose intermediates live in
// registers (one value per point) or in a per-point buffer (a row).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>

// A matmul accumulating in f64, its truncation, the bias and the relu: one epilogue group
// over both output dims; in loops, one loop.parallel, the accumulator a register, no buffer
// but the output.
// CHECK-LABEL: func.func @matmul_bias_relu(
// CHECK:         %[[G:.*]] = fusion.group {kind = "epilogue", outer_dims = 2 : i64} -> (tensor<?x16xf32>) {
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           arith.truncf
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           fusion.yield %{{.*}} : tensor<?x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]
// LOOP-LABEL:  func.func @matmul_bias_relu(
// LOOP-NOT:      memory.alloc
// LOOP:          loop.parallel (%[[I:.*]], %[[J:.*]]) =
// LOOP-NEXT:       %[[ACC:.*]] = loop.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64) {
// LOOP:            }
// LOOP:            arith.truncf %[[ACC]]
// LOOP:            %[[R:.*]] = arith.maximumf
// LOOP-NEXT:       memory.store %[[R]], %{{.*}}[%[[I]], %[[J]]]
// LOOP-NEXT:     }
// LOOP-NOT:      loop.parallel
// LOOP:          return
func.func @matmul_bias_relu(%x: tensor<?x8xf32> {graph.dims = ["B", 8]}, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %fzero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e64 = tensor.empty(%n) : tensor<?x16xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%e64 : tensor<?x16xf64>) -> tensor<?x16xf64>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<?x16xf64>) {
  ^bb0(%a: f32, %bb: f32, %o: f64):
    %p = arith.mulf %a, %bb : f32
    %pe = arith.extf %p : f32 to f64
    %s = arith.addf %o, %pe : f64
    linalg.yield %s : f64
  } -> tensor<?x16xf64>
  %e32 = tensor.empty(%n) : tensor<?x16xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%mm : tensor<?x16xf64>) outs(%e32 : tensor<?x16xf32>) {
  ^bb0(%a: f64, %o: f32):
    %v = arith.truncf %a : f64 to f32
    linalg.yield %v : f32
  } -> tensor<?x16xf32>
  %z = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%t, %b : tensor<?x16xf32>, tensor<16xf32>) outs(%e32 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %v = arith.addf %a, %c : f32
    linalg.yield %v : f32
  } -> tensor<?x16xf32>
  %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%z : tensor<?x16xf32>) outs(%e32 : tensor<?x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %fzero : f32
    linalg.yield %v : f32
  } -> tensor<?x16xf32>
  return %h : tensor<?x16xf32>
}

// Row softmax: the row max and the row sum of exponentials (reductions) and the
// normalization, one group per row. In loops: one loop.parallel over the rows; the max and
// the sum are registers (no buffer), each row's loops run inside.
// CHECK-LABEL: func.func @row_softmax(
// CHECK:         %[[G:.*]] = fusion.group {kind = "reduction", outer_dims = 1 : i64} -> (tensor<?x10xf32>) {
// CHECK-COUNT-2:   linalg.fill
// CHECK:           fusion.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]
// LOOP-LABEL:  func.func @row_softmax(
// LOOP-NOT:      memory.alloc
// LOOP:          loop.parallel (%[[R:.*]]) =
// LOOP-NEXT:       %[[MAX:.*]] = loop.for
// LOOP:            %[[SUM:.*]] = loop.for
// LOOP:            loop.for
// LOOP:              arith.divf %{{.*}}, %[[SUM]]
// LOOP:              memory.store %{{.*}}, %{{.*}}[%[[R]], %{{.*}}]
// LOOP-NOT:      loop.parallel
// LOOP:          return
func.func @row_softmax(%x: tensor<?x10xf32> {graph.dims = ["B", 10]}) -> tensor<?x10xf32> {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x10xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x10xf32>) outs(%m0 : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %o, %a : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %m : tensor<?x10xf32>, tensor<?xf32>) outs(%s0 : tensor<?xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x2 = math.exp %d : f32
    %v = arith.addf %o, %x2 : f32
    linalg.yield %v : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n) : tensor<?x10xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %m, %s : tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x10xf32>) {
  ^bb0(%a: f32, %mx: f32, %sm: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x2 = math.exp %d : f32
    %v = arith.divf %x2, %sm : f32
    linalg.yield %v : f32
  } -> tensor<?x10xf32>
  return %p : tensor<?x10xf32>
}

// E = D + (A + B) * C as three kernels (as if elementwise fusion had not merged them): one
// elementwise group, its two intermediates registers.
// CHECK-LABEL: func.func @elementwise_chain(
// CHECK:         fusion.group {kind = "elementwise", outer_dims = 1 : i64} -> (tensor<?xf32>) {
// CHECK-COUNT-3:   linalg.generic
// LOOP-LABEL:  func.func @elementwise_chain(
// LOOP-NOT:      memory.alloc
// LOOP:          loop.parallel (%[[I:.*]]) =
// LOOP-NEXT:       memory.load
// LOOP-NEXT:       memory.load
// LOOP-NEXT:       %[[S:.*]] = arith.addf
// LOOP-NEXT:       memory.load
// LOOP-NEXT:       %[[P:.*]] = arith.mulf %[[S]]
// LOOP-NEXT:       memory.load
// LOOP-NEXT:       %[[E:.*]] = arith.addf %{{.*}}, %[[P]]
// LOOP-NEXT:       memory.store %[[E]], %{{.*}}[%[[I]]]
// LOOP-NEXT:     }
// LOOP-NEXT:     return
func.func @elementwise_chain(%a: tensor<?xf32> {graph.dims = ["N"]}, %b: tensor<?xf32>, %c: tensor<?xf32>, %d: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %t1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %t2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%t1, %c : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %t3 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%d, %t2 : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %t3 : tensor<?xf32>
}

// Two independent ops reading one input over one iteration space: one horizontal group,
// one sweep over %g.
// CHECK-LABEL: func.func @horizontal_pair(
// CHECK:         %[[G:.*]]:2 = fusion.group {kind = "horizontal", outer_dims = 2 : i64} -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK:         return %[[G]]#0, %[[G]]#1
// LOOP-LABEL:  func.func @horizontal_pair(
// LOOP:          loop.parallel
// LOOP-NOT:      loop.parallel
// LOOP:          return
func.func @horizontal_pair(%g: tensor<4x8xf32>, %m: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g, %m : tensor<4x8xf32>, tensor<4x8xi1>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %k: i1, %o: f32):
    %v = arith.select %k, %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %r2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r1, %r2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// Refused: a column sum (reduction outermost) of an elementwise result shares no outer
// parallel dim with it; both stay their own kernels.
// CHECK-LABEL: func.func @refused_column_sum(
// CHECK-NOT:     fusion.group
// CHECK:         return
func.func @refused_column_sum(%x: tensor<?x8xf32> {graph.dims = ["B", 8]}) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%sq : tensor<?x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %o, %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Scalar work shares no loop: Adam's bias corrections (0-d generics, iterators []), one
// chained to the step count, two reading it, are one scalar group without outer loops. In
// loops: straight-line code, the step count a register, no buffer but the outputs.
// CHECK-LABEL: func.func @scalar_chain(
// CHECK:         %[[G:.*]]:2 = fusion.group {kind = "scalar", outer_dims = 0 : i64} -> (tensor<f32>, tensor<f32>) {
// CHECK-COUNT-3:   linalg.generic
// CHECK:           fusion.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1
// LOOP-LABEL:  func.func @scalar_chain(
// LOOP-NOT:      memory.alloc
// LOOP:          %[[T:.*]] = memory.load %{{.*}}[] : memref<f64>
// LOOP-NEXT:     %[[T1:.*]] = arith.addf %[[T]]
// LOOP-NOT:      memory.store
// LOOP:          math.powf %{{.*}}, %[[T1]]
// LOOP:          memory.store
// LOOP:          math.powf %{{.*}}, %[[T1]]
// LOOP:          memory.store
// LOOP-NEXT:     return
func.func @scalar_chain(%step: tensor<f64>) -> (tensor<f32>, tensor<f32>) {
  %one = arith.constant 1.0 : f64
  %b1 = arith.constant 0.9 : f64
  %b2 = arith.constant 0.999 : f64
  %lr = arith.constant 0.001 : f64
  %e64 = tensor.empty() : tensor<f64>
  %e32 = tensor.empty() : tensor<f32>
  %t = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%step : tensor<f64>) outs(%e64 : tensor<f64>) {
  ^bb0(%a: f64, %o: f64):
    %v = arith.addf %a, %one : f64
    linalg.yield %v : f64
  } -> tensor<f64>
  %c1 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%t : tensor<f64>) outs(%e32 : tensor<f32>) {
  ^bb0(%a: f64, %o: f32):
    %p = math.powf %b1, %a : f64
    %d = arith.subf %one, %p : f64
    %q = arith.divf %lr, %d : f64
    %r = arith.truncf %q : f64 to f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %c2 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%t : tensor<f64>) outs(%e32 : tensor<f32>) {
  ^bb0(%a: f64, %o: f32):
    %p = math.powf %b2, %a : f64
    %d = arith.subf %one, %p : f64
    %s = math.sqrt %d : f64
    %r = arith.truncf %s : f64 to f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %c1, %c2 : tensor<f32>, tensor<f32>
}

// A loss: the full reduction over the batch into a 0-d f64 (with its fill) and the 0-d
// generic that scales and rounds it are one scalar group. In loops: one loop.for over the
// batch carrying the sum, then the scalar epilogue on that register, stored once: no buffer
// for the sum.
// CHECK-LABEL: func.func @loss(
// CHECK:         %[[G:.*]] = fusion.group {kind = "scalar", outer_dims = 0 : i64} -> (tensor<f32>) {
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        iterator_types = ["reduction"]
// CHECK:           linalg.generic
// CHECK-SAME:        iterator_types = []
// CHECK:           fusion.yield %{{.*}} : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]
// LOOP-LABEL:  func.func @loss(
// LOOP-NOT:      memory.alloc
// LOOP:          %[[SUM:.*]] = loop.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64) {
// LOOP:          }
// LOOP-NEXT:     %[[NEG:.*]] = arith.negf %[[SUM]] : f64
// LOOP-NEXT:     %[[MEAN:.*]] = arith.divf %[[NEG]]
// LOOP-NEXT:     %[[R:.*]] = arith.truncf %[[MEAN]]
// LOOP-NEXT:     memory.store %[[R]], %{{.*}}[] : memref<f32>
// LOOP-NEXT:     return
func.func @loss(%x: tensor<?xf32> {graph.dims = ["B"]}) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f64
  %e64 = tensor.empty() : tensor<f64>
  %z = linalg.fill ins(%zero : f64) outs(%e64 : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x : tensor<?xf32>) outs(%z : tensor<f64>) {
  ^bb0(%a: f32, %o: f64):
    %l = math.log %a : f32
    %le = arith.extf %l : f32 to f64
    %v = arith.addf %o, %le : f64
    linalg.yield %v : f64
  } -> tensor<f64>
  %e32 = tensor.empty() : tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : tensor<f64>) outs(%e32 : tensor<f32>) {
  ^bb0(%a: f64, %o: f32):
    %ng = arith.negf %a : f64
    %d = arith.divf %ng, %nf : f64
    %r = arith.truncf %d : f64 to f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %m : tensor<f32>
}

// A scalar group does not swallow parallel work: the 0-d scale and its square are one
// scalar group; the elementwise op over the batch that reads the result stays a kernel of
// its own (with its loop.parallel), and the column sum with its fill does not become a
// scalar group either (it has a parallel loop).
// CHECK-LABEL: func.func @scalar_beside_parallel(
// CHECK:         %[[G:.*]] = fusion.group {kind = "scalar", outer_dims = 0 : i64} -> (tensor<f32>) {
// CHECK-COUNT-2:   linalg.generic
// CHECK:           fusion.yield
// CHECK-NEXT:    }
// CHECK-NOT:     fusion.group
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%{{.*}}, %[[G]] :
// CHECK-NOT:     fusion.group
// CHECK:         return
// LOOP-LABEL:  func.func @scalar_beside_parallel(
// LOOP:          %[[S:.*]] = arith.mulf %[[A:.*]], %[[A]] : f32
// LOOP-NEXT:     memory.store %[[S]], %{{.*}}[] : memref<f32>
// LOOP:          loop.parallel (%{{.*}}, %{{.*}}) =
// LOOP:            arith.mulf
// LOOP:          loop.parallel
// LOOP:          return
func.func @scalar_beside_parallel(%x: tensor<?x8xf32> {graph.dims = ["B", 8]}, %k: tensor<f32>) -> (tensor<?x8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty() : tensor<f32>
  %s1 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%k : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %two : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %s2 = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s1 : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<f32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %s2 : tensor<?x8xf32>, tensor<f32>) outs(%e : tensor<?x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %v = arith.mulf %a, %s : f32
    linalg.yield %v : f32
  } -> tensor<?x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %o, %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %y, %c : tensor<?x8xf32>, tensor<8xf32>
}
