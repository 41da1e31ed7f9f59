// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Reductions, argmax, softmax, losses and matmul of the graph dialect in custom and generic
// form. Properties left out take their defaults (axes = all, keepdims = false, axis = -1),
// which the printer writes out.

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:      %[[X:.*]]: tensor<?x10xf32>, %[[I:.*]]: tensor<2x3x4xi32>)
// CHECK:         graph.reduce_sum %[[X]] {axes = array<i64: 1>, keepdims = false} : (tensor<?x10xf32>) -> tensor<?xf32>
// CHECK:         graph.reduce_sum %[[X]] {axes = array<i64>, keepdims = false} : (tensor<?x10xf32>) -> tensor<f32>
// CHECK:         graph.reduce_mean %[[X]] {axes = array<i64: 0>, keepdims = true} : (tensor<?x10xf32>) -> tensor<1x10xf32>
// CHECK:         graph.reduce_max %[[X]] {axes = array<i64: -1>, keepdims = true} : (tensor<?x10xf32>) -> tensor<?x1xf32>
// CHECK:         graph.reduce_min %[[I]] {axes = array<i64: 2, 0>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<3xi32>
// GENERIC-LABEL: sym_name = "reductions"
// GENERIC:       "graph.reduce_sum"(%arg0) <{axes = array<i64: 1>, keepdims = false}> : (tensor<?x10xf32>) -> tensor<?xf32>
// GENERIC:       "graph.reduce_min"(%arg1) <{axes = array<i64: 2, 0>, keepdims = false}>
func.func @reductions(%x: tensor<?x10xf32>, %i: tensor<2x3x4xi32>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
  %1 = graph.reduce_sum %x : (tensor<?x10xf32>) -> tensor<f32>
  %2 = graph.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<?x10xf32>) -> tensor<1x10xf32>
  %3 = graph.reduce_max %x {axes = array<i64: -1>, keepdims = true} : (tensor<?x10xf32>) -> tensor<?x1xf32>
  %4 = graph.reduce_min %i {axes = array<i64: 2, 0>} : (tensor<2x3x4xi32>) -> tensor<3xi32>
  return
}

// A scalar reduces over its zero axes.
// CHECK-LABEL: func.func @scalar_reduction(
// CHECK:         graph.reduce_sum %{{.*}} {axes = array<i64>, keepdims = false} : (tensor<f32>) -> tensor<f32>
func.func @scalar_reduction(%x: tensor<f32>) -> tensor<f32> {
  %0 = graph.reduce_sum %x : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @argmax(
// CHECK:         graph.argmax %{{.*}} {axis = -1 : i64, keepdims = false} : (tensor<?x10xf32>) -> tensor<?xi64>
// CHECK:         graph.argmax %{{.*}} {axis = 0 : i64, keepdims = true} : (tensor<?x10xf32>) -> tensor<1x10xi64>
// GENERIC-LABEL: sym_name = "argmax"
// GENERIC:       "graph.argmax"(%arg0) <{axis = -1 : i64, keepdims = false}>
func.func @argmax(%x: tensor<?x10xf32>) {
  %0 = graph.argmax %x : (tensor<?x10xf32>) -> tensor<?xi64>
  %1 = graph.argmax %x {axis = 0 : i64, keepdims = true} : (tensor<?x10xf32>) -> tensor<1x10xi64>
  return
}

// CHECK-LABEL: func.func @softmax(
// CHECK:         graph.softmax %{{.*}} {axis = -1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
// CHECK:         graph.log_softmax %{{.*}} {axis = 0 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
// GENERIC-LABEL: sym_name = "softmax"
// GENERIC:       "graph.softmax"(%arg0) <{axis = -1 : i64}>
// GENERIC:       "graph.log_softmax"(%arg0) <{axis = 0 : i64}>
func.func @softmax(%x: tensor<?x10xf32>) {
  %0 = graph.softmax %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %1 = graph.log_softmax %x {axis = 0 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return
}

// Integer class indices or float targets; both give a scalar loss.
// CHECK-LABEL: func.func @losses(
// CHECK-SAME:      %[[X:.*]]: tensor<?x10xf32>, %[[L:.*]]: tensor<?xi64>, %[[P:.*]]: tensor<?x10xf32>, %[[Y:.*]]: tensor<4x1xf32>)
// CHECK:         graph.cross_entropy %[[X]], %[[L]] : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
// CHECK:         graph.cross_entropy %[[X]], %[[P]] : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<f32>
// CHECK:         graph.mse %[[Y]], %[[Y]] : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
// GENERIC-LABEL: sym_name = "losses"
// GENERIC:       "graph.cross_entropy"(%arg0, %arg1) : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
// GENERIC:       "graph.mse"(%arg3, %arg3) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
func.func @losses(%x: tensor<?x10xf32>, %l: tensor<?xi64>, %p: tensor<?x10xf32>, %y: tensor<4x1xf32>) {
  %0 = graph.cross_entropy %x, %l : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  %1 = graph.cross_entropy %x, %p : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<f32>
  %2 = graph.mse %y, %y : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<f32>
  return
}

// Matrix x matrix, batched with broadcast batch dims, and the 1-D promotions of numpy.matmul.
// CHECK-LABEL: func.func @matmul(
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<2x1x4x3xf32>, tensor<5x3x6xf32>) -> tensor<2x5x4x6xf32>
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<3xf32>, tensor<5x3x6xf32>) -> tensor<5x6xf32>
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<?x784xf32>, tensor<784xf32>) -> tensor<?xf32>
// CHECK:         graph.matmul %{{.*}}, %{{.*}} : (tensor<3xi32>, tensor<3xi32>) -> tensor<i32>
// GENERIC-LABEL: sym_name = "matmul"
// GENERIC:       "graph.matmul"(%arg0, %arg1) : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
func.func @matmul(%x: tensor<?x784xf32>, %w: tensor<784x10xf32>, %a: tensor<2x1x4x3xf32>,
                  %b: tensor<5x3x6xf32>, %v: tensor<3xf32>, %u: tensor<784xf32>, %i: tensor<3xi32>) {
  %0 = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  %1 = graph.matmul %a, %b : (tensor<2x1x4x3xf32>, tensor<5x3x6xf32>) -> tensor<2x5x4x6xf32>
  %2 = graph.matmul %v, %b : (tensor<3xf32>, tensor<5x3x6xf32>) -> tensor<5x6xf32>
  %3 = graph.matmul %x, %u : (tensor<?x784xf32>, tensor<784xf32>) -> tensor<?xf32>
  %4 = graph.matmul %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<i32>
  return
}
