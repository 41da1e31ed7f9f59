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

// A padded convolution reads a clamped index and selects 0 outside the input.

// CHECK-LABEL: func.func @conv(
// CHECK:         loop.parallel
// CHECK:           loop.for {{.*}} -> (f32)
// CHECK:             arith.minsi
// CHECK:             memory.load
// CHECK:             arith.select
// CHECK:             arith.mulf
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
