// RUN: irkit-opt %s -p lower-graph-to-loop --split-input-file --verify-diagnostics | FileCheck %s

// Pooling: a loop.parallel over the result, loop.fors over the window carrying the IEEE
// maximum from -inf.

// CHECK-LABEL: func.func @pool(
// CHECK-SAME:    %[[X:.*]]: memref<1x2x4x4xf32>, %[[Y:.*]]: memref<1x2x2x2xf32> {graph.output = 0 : i64})
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         loop.parallel (%[[N:.*]], %[[C:.*]], %[[I:.*]], %[[J:.*]]) =
// CHECK:           loop.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]]) -> (f32)
// CHECK:             loop.for
// CHECK:               %[[V:.*]] = memory.load %[[X]][%[[N]], %[[C]], %{{.*}}, %{{.*}}]
// CHECK:               arith.maximumf %{{.*}}, %[[V]] : f32
// CHECK:           memory.store %{{.*}}, %[[Y]][%[[N]], %[[C]], %[[I]], %[[J]]]
func.func @pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// A padded convolution reads a clamped index and selects 0 outside the input. The products
// are of f32 factors widened to f64 (exact) and summed in f64, rounded once.

// CHECK-LABEL: func.func @conv(
// CHECK:         loop.parallel
// CHECK:           loop.for {{.*}} -> (f64)
// CHECK:             arith.minsi
// CHECK:             memory.load
// CHECK:             arith.select
// CHECK:             arith.mulf {{.*}} : f32
// CHECK-NEXT:        arith.extf {{.*}} : f32 to f64
// CHECK-NOT:         arith.mulf {{.*}} : f64
// CHECK:           arith.truncf {{.*}} : f64 to f32
func.func @conv(%x: tensor<1x1x4x4xf32>, %k: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.conv2d %x, %k {padding = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @switch(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  // expected-error @+1 {{cannot lower 'graph.switch': dataflow deadness has no loop form; run graph-raise-control-flow first}}
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %v, %i = graph.merge %f, %t : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %v : tensor<4xf32>
}

// -----

// graph.if: a loop.if on the predicate loaded from its 0-d buffer. The returned result is
// the output buffer (destination passing): the then branch computes into it, the else
// branch copies its value from above into it. A temporary of the branch is freed there.

// CHECK-LABEL: func.func @cond(
// CHECK-SAME:    %[[P:.*]]: memref<i1>, %[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32> {graph.output = 0 : i64})
// CHECK:         %[[C:.*]] = memory.load %[[P]][] : memref<i1>
// CHECK-NEXT:    loop.if %[[C]] {
// CHECK:           %[[T:.*]] = memory.alloc() : memref<4xf32>
// CHECK:           loop.parallel
// CHECK:             memory.store %{{.*}}, %[[T]]
// CHECK:           loop.parallel
// CHECK:             memory.load %[[T]]
// CHECK:             memory.store %{{.*}}, %[[Y]]
// CHECK:           memory.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memory.copy %[[X]], %[[Y]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @cond(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.if %p -> (tensor<4xf32>) {
    %1 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    %2 = graph.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %2 : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A dynamic result that is not returned: each branch allocates it and the loop.if yields
// the memref, freed after its last use.

// CHECK-LABEL: func.func @dyn(
// CHECK:         %[[R:.*]] = loop.if %{{.*}} -> (memref<?xf32>) {
// CHECK:           %[[A:.*]] = memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           loop.yield %[[A]] : memref<?xf32>
// CHECK:         } else {
// CHECK:           %[[B:.*]] = memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      memory.copy %{{.*}}, %[[B]]
// CHECK-NEXT:      loop.yield %[[B]] : memref<?xf32>
// CHECK:         loop.parallel
// CHECK:           memory.load %[[R]]
// CHECK:         memory.dealloc %[[R]] : memref<?xf32>
func.func @dyn(%p: tensor<i1>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.if %p -> (tensor<?xf32>) {
    %1 = graph.neg %x : (tensor<?xf32>) -> tensor<?xf32>
    graph.yield %1 : tensor<?xf32>
  } else {
    graph.yield %x : tensor<?xf32>
  }
  %2 = graph.exp %0 : (tensor<?xf32>) -> tensor<?xf32>
  return %2 : tensor<?xf32>
}
