// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Shape and element-type rules of the reductions, softmax, losses and matmul. Each chunk
// breaks one rule; the message names the shapes involved.

func.func @axis_out_of_range(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = graph.reduce_sum %x {axes = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @axis_repeated(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_max' op axes [1, -1] name axis 1 twice}}
  %0 = graph.reduce_max %x {axes = array<i64: 1, -1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scalar_has_no_axis(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.reduce_min' op axis 0 is out of range for rank 0}}
  %0 = graph.reduce_min %x {axes = array<i64: 0>} : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @wrong_result(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op result #0 has type tensor<4xf32>, but the operands give tensor<4x1xf32>}}
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @mean_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.reduce_mean' op the operand must have a floating-point element type, got i32[4]}}
  %0 = graph.reduce_mean %x : (tensor<4xi32>) -> tensor<i32>
  return
}

// -----

func.func @sum_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'graph.reduce_sum' op operands need a numeric (non-i1) element type, got i1[4]}}
  %0 = graph.reduce_sum %x : (tensor<4xi1>) -> tensor<i1>
  return
}

// -----

func.func @axes_not_i64(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op attribute 'axes' failed to satisfy constraint: i64 dense array attribute}}
  %0 = graph.reduce_sum %x {axes = array<i32: 0>} : (tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @argmax_axis(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.argmax' op axis -3 is out of range for rank 2}}
  %0 = graph.argmax %x {axis = -3 : i64} : (tensor<4x3xf32>) -> tensor<3xi64>
  return
}

// -----

func.func @argmax_result_type(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.argmax' op result #0 has type tensor<4xi32>, but the operands give tensor<4xi64>}}
  %0 = graph.argmax %x : (tensor<4x3xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @softmax_of_ints(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.softmax' op the operand must have a floating-point element type, got i32[4]}}
  %0 = graph.softmax %x : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @log_softmax_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.log_softmax' op axis -1 is out of range for rank 0}}
  %0 = graph.log_softmax %x : (tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @ce_logits_rank(%x: tensor<10xf32>, %l: tensor<i64>) {
  // expected-error @+1 {{'graph.cross_entropy' op logits must be [batch, classes], got f32[10]}}
  %0 = graph.cross_entropy %x, %l : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @ce_int_labels_rank(%x: tensor<?x10xf32>, %l: tensor<?x10xi64>) {
  // expected-error @+1 {{'graph.cross_entropy' op integer labels must be [batch], got i64[?, 10] for logits f32[?, 10]}}
  %0 = graph.cross_entropy %x, %l : (tensor<?x10xf32>, tensor<?x10xi64>) -> tensor<f32>
  return
}

// -----

func.func @ce_float_labels_rank(%x: tensor<?x10xf32>, %l: tensor<?xf32>) {
  // expected-error @+1 {{'graph.cross_entropy' op float labels must be [batch, classes], got f32[?] for logits f32[?, 10]}}
  %0 = graph.cross_entropy %x, %l : (tensor<?x10xf32>, tensor<?xf32>) -> tensor<f32>
  return
}

// -----

func.func @ce_bool_labels(%x: tensor<4x10xf32>, %l: tensor<4xi1>) {
  // expected-error @+1 {{'graph.cross_entropy' op labels must be integer class indices or float targets, got i1[4]}}
  %0 = graph.cross_entropy %x, %l : (tensor<4x10xf32>, tensor<4xi1>) -> tensor<f32>
  return
}

// -----

func.func @ce_label_dtype(%x: tensor<4x10xf32>, %l: tensor<4x10xf64>) {
  // expected-error @+1 {{'graph.cross_entropy' op element types differ: f32[4, 10] and f64[4, 10]}}
  %0 = graph.cross_entropy %x, %l : (tensor<4x10xf32>, tensor<4x10xf64>) -> tensor<f32>
  return
}

// -----

func.func @ce_batch(%x: tensor<4x10xf32>, %l: tensor<5xi64>) {
  // expected-error @+1 {{'graph.cross_entropy' op batch sizes of logits f32[4, 10] and labels i64[5] differ}}
  %0 = graph.cross_entropy %x, %l : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @ce_classes(%x: tensor<4x10xf32>, %l: tensor<4x9xf32>) {
  // expected-error @+1 {{'graph.cross_entropy' op class sizes of logits f32[4, 10] and labels f32[4, 9] differ}}
  %0 = graph.cross_entropy %x, %l : (tensor<4x10xf32>, tensor<4x9xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_broadcast(%p: tensor<4x3xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'graph.mse' op cannot broadcast f32[4, 3] with f32[4]}}
  %0 = graph.mse %p, %t : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_result_rank(%p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.mse' op result #0 has type tensor<1xf32>, but the operands give tensor<f32>}}
  %0 = graph.mse %p, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @matmul_inner(%x: tensor<?x784xf32>, %w: tensor<10x10xf32>) {
  // expected-error @+1 {{'graph.matmul' op cannot multiply f32[?, 784] by f32[10, 10]: inner dimensions 784 and 10 differ}}
  %0 = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<10x10xf32>) -> tensor<?x10xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<5x3x6xf32>) {
  // expected-error @+1 {{'graph.matmul' op cannot multiply f32[2, 4, 3] by f32[5, 3, 6]: batch dimensions [2] and [5] do not broadcast}}
  %0 = graph.matmul %a, %b : (tensor<2x4x3xf32>, tensor<5x3x6xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.matmul' op cannot multiply f32 by f32[3]: matmul needs operands of rank >= 1}}
  %0 = graph.matmul %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_dtypes(%a: tensor<2x3xf32>, %b: tensor<3x2xf64>) {
  // expected-error @+1 {{'graph.matmul' op element types differ: f32[2, 3] and f64[3, 2]}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x2xf64>) -> tensor<2x2xf32>
  return
}
