// RUN: irkit-opt %s -p canonicalize --verify-each=numeric | FileCheck %s

// The nn ops fold through their numpy semantics when every operand is constant (values
// chosen so every result is exact in f32), and a pooling window of 1x1 moved by 1 is the
// identity. Nothing else is rewritten: a conv or a normalization with a runtime operand has
// no algebraic identity worth the special case.

// [[1 2 3], [4 5 6], [7 8 9]] (*) 2x2 ones = [[1+2+4+5, 2+3+5+6], [4+5+7+8, 5+6+8+9]]
// CHECK-LABEL: func.func @conv2d_fold
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<{{\[\[\[\[}}1.200000e+01, 1.600000e+01], [2.400000e+01, 2.800000e+01]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @conv2d_fold() -> tensor<1x1x2x2xf32> {
  %x = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %y = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// Padding 1 with stride 2 over a 1x1 input of 5: only the centre tap of the 3x3 kernel
// (weight 2) lands on it.
// CHECK-LABEL: func.func @conv2d_fold_padded
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<1.000000e+01> : tensor<1x1x1x1xf32>
// CHECK-NEXT: return %[[C]]
func.func @conv2d_fold_padded() -> tensor<1x1x1x1xf32> {
  %x = graph.constant dense<5.0> : tensor<1x1x1x1xf32>
  %w = graph.constant dense<2.0> : tensor<1x1x3x3xf32>
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// max and mean of [[1 2], [3 4]]
// CHECK-LABEL: func.func @pool_fold
// CHECK-DAG: %[[MAX:.*]] = graph.constant dense<4.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-DAG: %[[AVG:.*]] = graph.constant dense<2.500000e+00> : tensor<1x1x1x1xf32>
// CHECK-NOT: pool2d
// CHECK: return %[[MAX]], %[[AVG]]
func.func @pool_fold() -> (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) {
  %x = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  %1 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  return %0, %1 : tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>
}

// (2 - 1) / sqrt(4 + 0) * 3 + 0.5 = 2
// CHECK-LABEL: func.func @batchnorm_fold
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @batchnorm_fold() -> tensor<2x3xf32> {
  %x = graph.constant dense<2.0> : tensor<2x3xf32>
  %m = graph.constant dense<1.0> : tensor<3xf32>
  %v = graph.constant dense<4.0> : tensor<3xf32>
  %g = graph.constant dense<3.0> : tensor<3xf32>
  %b = graph.constant dense<0.5> : tensor<3xf32>
  %y = graph.batchnorm %x, %m, %v, %g, %b {epsilon = 0.0 : f64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// [1, 3] has mean 2 and biased variance 1: normalized to [-1, 1], then * 2 + 1.
// CHECK-LABEL: func.func @layernorm_fold
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<{{\[\[}}-1.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @layernorm_fold() -> tensor<1x2xf32> {
  %x = graph.constant dense<[[1.0, 3.0]]> : tensor<1x2xf32>
  %g = graph.constant dense<2.0> : tensor<2xf32>
  %b = graph.constant dense<1.0> : tensor<2xf32>
  %y = graph.layernorm %x, %g, %b {epsilon = 0.0 : f64} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// pool(x) -> x for a 1x1 window with stride 1 (given or defaulted to the kernel).
// CHECK-LABEL: func.func @pool_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x5x5xf32>)
// CHECK-NOT: pool2d
// CHECK: return %[[X]], %[[X]]
func.func @pool_identity(%x: tensor<?x8x5x5xf32>) -> (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) {
  %0 = graph.max_pool2d %x {kernel = array<i64: 1, 1>} : (tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  %1 = graph.avg_pool2d %x {kernel = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  return %0, %1 : tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>
}

// A 1x1 window with stride 2 subsamples: kept. So is a 1x1 pool whose result type knows
// more than its input's (replacing it would lose the static sizes).
// CHECK-LABEL: func.func @pool_not_identity
// CHECK: graph.max_pool2d
// CHECK: graph.avg_pool2d
// CHECK: return
func.func @pool_not_identity(%x: tensor<?x8x5x5xf32>, %y: tensor<?x8x?x?xf32>)
    -> (tensor<?x8x3x3xf32>, tensor<?x8x5x5xf32>) {
  %0 = graph.max_pool2d %x {kernel = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x5x5xf32>) -> tensor<?x8x3x3xf32>
  %1 = graph.avg_pool2d %y {kernel = array<i64: 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x5x5xf32>
  return %0, %1 : tensor<?x8x3x3xf32>, tensor<?x8x5x5xf32>
}

// Runtime operands: nothing to fold.
// CHECK-LABEL: func.func @no_fold
// CHECK: graph.conv2d
// CHECK: graph.layernorm
func.func @no_fold(%x: tensor<?x1x4x4xf32>, %v: tensor<3x4xf32>) -> (tensor<?x1x3x3xf32>, tensor<3x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d %x, %w : (tensor<?x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<?x1x3x3xf32>
  %g = graph.constant dense<1.0> : tensor<4xf32>
  %1 = graph.layernorm %v, %g, %g : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0, %1 : tensor<?x1x3x3xf32>, tensor<3x4xf32>
}

// The backward ops fold like the others. A 2x2 all-ones kernel over a 3x3 input: each
// input element receives the gradient (1) of every window covering it.
// CHECK-LABEL: func.func @backprop_fold
// CHECK-DAG: %[[DX:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00, 1.000000e+00], [2.000000e+00, 4.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00, 1.000000e+00]]]]> : tensor<1x1x3x3xf32>
// The 2x2 filter's gradient: the sum of the 2x2 windows of [[1 2 3], [4 5 6], [7 8 9]].
// CHECK-DAG: %[[DW:.*]] = graph.constant dense<{{\[\[\[\[}}1.200000e+01, 1.600000e+01], [2.400000e+01, 2.800000e+01]]]]> : tensor<1x1x2x2xf32>
// The gradient 5 goes to the maximum 4; a 2x2 average spreads it as 5/4 each.
// CHECK-DAG: %[[MAX:.*]] = graph.constant dense<{{\[\[\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 5.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-DAG: %[[AVG:.*]] = graph.constant dense<1.250000e+00> : tensor<1x1x2x2xf32>
// CHECK-DAG: %[[GG:.*]] = graph.constant dense<4.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NOT: graph.conv2d_backprop
// CHECK-NOT: pool2d
// CHECK: return %[[DX]], %[[DW]], %[[MAX]], %[[AVG]], %[[GG]]
func.func @backprop_fold() -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>,
                               tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) {
  %x = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %dy = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %0 = graph.conv2d_backprop_input %dy, %w, %x : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %1 = graph.conv2d_backprop_filter %x, %dy, %w : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<5.0> : tensor<1x1x1x1xf32>
  %2 = graph.max_pool2d_grad %p, %g {kernel = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %3 = graph.avg_pool2d_grad %g, %p {kernel = array<i64: 2, 2>} : (tensor<1x1x1x1xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %4 = graph.max_pool2d_grad_grad %p, %p {kernel = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  return %0, %1, %2, %3, %4 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>
}

// Ties go to the first maximum in row-major window order, as max_pool2d's value does.
// CHECK-LABEL: func.func @max_pool_grad_ties
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<{{\[\[\[\[}}5.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @max_pool_grad_ties() -> tensor<1x1x2x2xf32> {
  %p = graph.constant dense<3.0> : tensor<1x1x2x2xf32>
  %g = graph.constant dense<5.0> : tensor<1x1x1x1xf32>
  %0 = graph.max_pool2d_grad %p, %g {kernel = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// With a 1x1 window moved by 1 every backward op passes its cotangent (or tangent) through.
// CHECK-LABEL: func.func @pool_backward_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x5x5xf32>, %[[D:.*]]: tensor<?x8x5x5xf32>)
// CHECK-NOT: pool2d
// CHECK: return %[[D]], %[[D]], %[[D]]
func.func @pool_backward_identity(%x: tensor<?x8x5x5xf32>, %d: tensor<?x8x5x5xf32>)
    -> (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) {
  %0 = graph.max_pool2d_grad %x, %d {kernel = array<i64: 1, 1>} : (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  %1 = graph.max_pool2d_grad_grad %x, %d {kernel = array<i64: 1, 1>} : (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  %2 = graph.avg_pool2d_grad %d, %x {kernel = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  return %0, %1, %2 : tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>
}

// A 1x1 window moved by 2 leaves elements no window reads: kept.
// CHECK-LABEL: func.func @pool_backward_not_identity
// CHECK: graph.max_pool2d_grad
// CHECK: graph.avg_pool2d_grad
// CHECK: return
func.func @pool_backward_not_identity(%x: tensor<?x8x5x5xf32>, %d: tensor<?x8x3x3xf32>)
    -> (tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>) {
  %0 = graph.max_pool2d_grad %x, %d {kernel = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x5x5xf32>, tensor<?x8x3x3xf32>) -> tensor<?x8x5x5xf32>
  %1 = graph.avg_pool2d_grad %d, %x {kernel = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x3x3xf32>, tensor<?x8x5x5xf32>) -> tensor<?x8x5x5xf32>
  return %0, %1 : tensor<?x8x5x5xf32>, tensor<?x8x5x5xf32>
}
