// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// Canonicalization of reductions, argmax and softmax: only rewrites that keep every value
// (NaN and inf included), plus constant folding through the ops' numpy semantics.

// Reducing axes of size 1 keeps every value: sum([x]) = mean([x]) = max([x]) = min([x]) = x
// (for x = -0.0 sum and mean gave +0.0, which equals it). With keepdims the type is
// unchanged and the op goes away.
// CHECK-LABEL: func.func @unit_axes_keepdims(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf32>)
// CHECK-NOT:     graph.reduce
// CHECK:         return %[[X]], %[[X]], %[[X]], %[[X]] :
func.func @unit_axes_keepdims(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %2 = graph.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %3 = graph.reduce_min %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  return %0, %1, %2, %3 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// A scalar reduced over its zero axes is itself; a dynamic dim that is not reduced is fine.
// CHECK-LABEL: func.func @scalar_and_dynamic(
// CHECK-SAME:      %[[S:.*]]: tensor<f32>, %[[Y:.*]]: tensor<?x1xf32>)
// CHECK-NOT:     graph.reduce
// CHECK:         return %[[S]], %[[S]], %[[Y]] :
func.func @scalar_and_dynamic(%s: tensor<f32>, %y: tensor<?x1xf32>) -> (tensor<f32>, tensor<f32>, tensor<?x1xf32>) {
  %0 = graph.reduce_sum %s : (tensor<f32>) -> tensor<f32>
  %1 = graph.reduce_mean %s {keepdims = true} : (tensor<f32>) -> tensor<f32>
  %2 = graph.reduce_max %y {axes = array<i64: 1>, keepdims = true} : (tensor<?x1xf32>) -> tensor<?x1xf32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<?x1xf32>
}

// Without keepdims the unit axes are dropped by a reshape (one dynamic dim becomes -1); two
// dynamic dims left cannot be written as a reshape, so that reduction stays.
// CHECK-LABEL: func.func @unit_axes_reshape(
// CHECK-SAME:      %[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<?x1x1xf32>, %[[Z:.*]]: tensor<?x1x?xf32>, %[[S:.*]]: tensor<1x1xf32>)
// CHECK:         %[[R0:.*]] = graph.reshape %[[X]] {shape = array<i64: 4>} : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK:         %[[R1:.*]] = graph.reshape %[[Y]] {shape = array<i64: -1>} : (tensor<?x1x1xf32>) -> tensor<?xf32>
// CHECK:         %[[R2:.*]] = graph.reduce_mean %[[Z]]
// CHECK:         %[[R3:.*]] = graph.reshape %[[S]] {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
// CHECK:         return %[[R0]], %[[R1]], %[[R2]], %[[R3]] :
func.func @unit_axes_reshape(%x: tensor<4x1xf32>, %y: tensor<?x1x1xf32>, %z: tensor<?x1x?xf32>, %s: tensor<1x1xf32>) -> (tensor<4xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>) {
  %0 = graph.reduce_max %x {axes = array<i64: 1>} : (tensor<4x1xf32>) -> tensor<4xf32>
  %1 = graph.reduce_sum %y {axes = array<i64: 1, 2>} : (tensor<?x1x1xf32>) -> tensor<?xf32>
  %2 = graph.reduce_mean %z {axes = array<i64: 1>} : (tensor<?x1x?xf32>) -> tensor<?x?xf32>
  %3 = graph.reduce_min %s : (tensor<1x1xf32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>
}

// An axis that is not (statically) of size 1 is a real reduction and stays.
// CHECK-LABEL: func.func @real_reductions_kept(
// CHECK:         graph.reduce_sum %{{.*}} {axes = array<i64: 0>, keepdims = true}
// CHECK:         graph.reduce_max %{{.*}} {axes = array<i64: 1>, keepdims = true}
// CHECK:         graph.reduce_min %{{.*}} {axes = array<i64>, keepdims = true}
func.func @real_reductions_kept(%x: tensor<4x1xf32>, %y: tensor<2x?xf32>) -> (tensor<1x1xf32>, tensor<2x1xf32>, tensor<1x1xf32>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x1xf32>) -> tensor<1x1xf32>
  %1 = graph.reduce_max %y {axes = array<i64: 1>, keepdims = true} : (tensor<2x?xf32>) -> tensor<2x1xf32>
  %2 = graph.reduce_min %x {keepdims = true} : (tensor<4x1xf32>) -> tensor<1x1xf32>
  return %0, %1, %2 : tensor<1x1xf32>, tensor<2x1xf32>, tensor<1x1xf32>
}

// argmax along an axis of size 1 is index 0 everywhere.
// CHECK-LABEL: func.func @argmax_unit_axis(
// CHECK-DAG:     %[[Z:.*]] = graph.constant dense<0> : tensor<4xi64>
// CHECK-DAG:     %[[K:.*]] = graph.argmax %{{.*}} {axis = 0 : i64
// CHECK-NOT:     graph.argmax
// CHECK:         return %[[Z]], %[[K]] :
func.func @argmax_unit_axis(%x: tensor<4x1xf32>) -> (tensor<4xi64>, tensor<1xi64>) {
  %0 = graph.argmax %x : (tensor<4x1xf32>) -> tensor<4xi64>
  %1 = graph.argmax %x {axis = 0 : i64} : (tensor<4x1xf32>) -> tensor<1xi64>
  return %0, %1 : tensor<4xi64>, tensor<1xi64>
}

// log(softmax(x)) is log_softmax(x), which stays finite where softmax underflows.
// CHECK-LABEL: func.func @log_of_softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<?x10xf32>)
// CHECK-NOT:     graph.softmax
// CHECK-NOT:     graph.log %
// CHECK:         %[[L:.*]] = graph.log_softmax %[[X]] {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
// CHECK:         return %[[L]]
func.func @log_of_softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %1 = graph.log %0 : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}

// The softmax has another use, so it stays beside the new log_softmax.
// CHECK-LABEL: func.func @log_of_shared_softmax(
// CHECK-DAG:     %[[P:.*]] = graph.softmax
// CHECK-DAG:     %[[L:.*]] = graph.log_softmax
// CHECK:         return %[[P]], %[[L]]
func.func @log_of_shared_softmax(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = graph.softmax %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = graph.log %0 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>
}

// matmul by an identity is not folded: inf * 0 = NaN would make x @ I differ from x.
// CHECK-LABEL: func.func @matmul_identity_kept(
// CHECK:         graph.matmul
func.func @matmul_identity_kept(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %i = graph.constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %0 = graph.matmul %x, %i : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// Constant operands fold through the numpy semantics (values exact in binary floating point).
// CHECK-LABEL: func.func @constant_folds(
// CHECK-DAG:     %[[S:.*]] = graph.constant dense<[3.000000e+00, 7.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[M:.*]] = graph.constant dense<2.500000e+00> : tensor<f32>
// CHECK-DAG:     %[[A:.*]] = graph.constant dense<1> : tensor<2xi64>
// CHECK-DAG:     %[[P:.*]] = graph.constant dense<{{\[}}[7.000000e+00], [1.500000e+01]]> : tensor<2x1xf32>
// CHECK-DAG:     %[[E:.*]] = graph.constant dense<1.062500e+00> : tensor<f32>
// CHECK-NOT:     graph.reduce
// CHECK-NOT:     graph.argmax
// CHECK-NOT:     graph.matmul
// CHECK-NOT:     graph.mse
// CHECK:         return %[[S]], %[[M]], %[[A]], %[[P]], %[[E]] :
func.func @constant_folds() -> (tensor<2xf32>, tensor<f32>, tensor<2xi64>, tensor<2x1xf32>, tensor<f32>) {
  %c = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %v = graph.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>
  %z = graph.constant dense<[[0.0, 0.5], [2.0, 4.0]]> : tensor<2x2xf32>
  %0 = graph.reduce_sum %c {axes = array<i64: 1>} : (tensor<2x2xf32>) -> tensor<2xf32>
  %1 = graph.reduce_mean %c : (tensor<2x2xf32>) -> tensor<f32>
  %2 = graph.argmax %c : (tensor<2x2xf32>) -> tensor<2xi64>
  %3 = graph.matmul %c, %v : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %4 = graph.mse %c, %z : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<f32>, tensor<2xi64>, tensor<2x1xf32>, tensor<f32>
}
