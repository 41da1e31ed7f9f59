// RUN: irkit-opt %s -p graph-fold-batchnorm | FileCheck %s
// RUN: irkit-opt %s -p graph-fold-batchnorm,canonicalize | FileCheck %s --check-prefix=CANON

graph.variable @k : tensor<4x3x3x3xf32> init he {seed = 1 : i64}
graph.variable @mu : tensor<4xf32> init zeros
graph.variable @var : tensor<4xf32> init ones
graph.variable @g : tensor<4xf32> init ones
graph.variable @b : tensor<4xf32> init zeros

// Running statistics read from variables: the weight is scaled per output channel by
// s = g / sqrt(var + eps) and the normalization becomes a per-channel shift b - mu * s
// added to the new convolution (same stride and padding); the batchnorm and the old
// convolution are gone.
// CHECK-LABEL: func.func @conv_bn
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>)
// CHECK: %[[K:.*]] = graph.read @k
// CHECK-NEXT: %[[MU:.*]] = graph.read @mu
// CHECK-NEXT: %[[VAR:.*]] = graph.read @var
// CHECK-NEXT: %[[G:.*]] = graph.read @g
// CHECK-NEXT: %[[B:.*]] = graph.read @b
// CHECK-NEXT: %[[EPS:.*]] = graph.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT: %[[VE:.*]] = graph.add %[[VAR]], %[[EPS]]
// CHECK-NEXT: %[[SQ:.*]] = graph.sqrt %[[VE]]
// CHECK-NEXT: %[[S:.*]] = graph.div %[[G]], %[[SQ]]
// CHECK-NEXT: %[[S4:.*]] = graph.reshape %[[S]] {shape = array<i64: -1, 1, 1, 1>} : (tensor<4xf32>) -> tensor<4x1x1x1xf32>
// CHECK-NEXT: %[[KS:.*]] = graph.mul %[[K]], %[[S4]] : (tensor<4x3x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.conv2d %[[X]], %[[KS]] {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
// CHECK-NEXT: %[[MS:.*]] = graph.mul %[[MU]], %[[S]]
// CHECK-NEXT: %[[SH:.*]] = graph.sub %[[B]], %[[MS]]
// CHECK-NEXT: %[[SH3:.*]] = graph.reshape %[[SH]] {shape = array<i64: -1, 1, 1>} : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK-NEXT: %[[R:.*]] = graph.add %[[Y]], %[[SH3]] : (tensor<?x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<?x4x4x4xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: graph.batchnorm
func.func @conv_bn(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x4x4xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %mu = graph.read @mu : tensor<4xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b {epsilon = 1.000000e-03 : f64} : (tensor<?x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %n : tensor<?x4x4x4xf32>
}

// A conv bias ([C, 1, 1], either side of the add) goes into the shift:
// (bias - mean) * s + beta. With constant weight and statistics, canonicalize folds all the
// weight and shift math: one conv2d on a constant weight and one add of a constant remain.
// CHECK-LABEL: func.func @conv_bias_bn_constants
// CHECK: %[[BV:.*]] = graph.reshape %{{.*}} {shape = array<i64: -1>} : (tensor<2x1x1xf32>) -> tensor<2xf32>
// CHECK-NEXT: %[[D:.*]] = graph.sub %[[BV]], %{{.*}}
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[D]], %{{.*}}
// CHECK-NEXT: %[[SH:.*]] = graph.add %[[M]], %{{.*}}
// CHECK-NOT: graph.batchnorm
// CANON-LABEL: func.func @conv_bias_bn_constants
// CANON-DAG: %[[W:.*]] = graph.constant dense<{{\[}}{{\[}}{{\[}}{{\[}}2.000000e+00]]], {{\[}}{{\[}}{{\[}}5.000000e-01]]]]> : tensor<2x1x1x1xf32>
// CANON-DAG: %[[SH:.*]] = graph.constant dense<{{\[}}{{\[}}{{\[}}7.000000e+00]], {{\[}}{{\[}}-1.000000e+00]]]> : tensor<2x1x1xf32>
// CANON: %[[Y:.*]] = graph.conv2d %arg0, %[[W]]
// CANON-NEXT: %[[R:.*]] = graph.add %[[Y]], %[[SH]]
// CANON-NEXT: return %[[R]]
func.func @conv_bias_bn_constants(%x: tensor<?x1x5x5xf32>) -> tensor<?x2x5x5xf32> {
  %k = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %bias = graph.constant dense<[[[3.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %mu = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[0.25, 16.0]> : tensor<2xf32>
  %g = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = graph.constant dense<[3.0, -0.5]> : tensor<2xf32>
  %c = graph.conv2d %x, %k : (tensor<?x1x5x5xf32>, tensor<2x1x1x1xf32>) -> tensor<?x2x5x5xf32>
  %y = graph.add %bias, %c : (tensor<2x1x1xf32>, tensor<?x2x5x5xf32>) -> tensor<?x2x5x5xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b {epsilon = 0.0 : f64} : (tensor<?x2x5x5xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x5x5xf32>
  return %n : tensor<?x2x5x5xf32>
}

// The convolution's result has another user: the unnormalized value is still needed.
// CHECK-LABEL: func.func @conv_reused
// CHECK: %[[Y:.*]] = graph.conv2d
// CHECK-NEXT: %[[N:.*]] = graph.batchnorm %[[Y]]
// CHECK-NEXT: graph.add %[[N]], %[[Y]]
func.func @conv_reused(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x6x6xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %mu = graph.read @mu : tensor<4xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  %r = graph.add %n, %y : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  return %r : tensor<?x4x6x6xf32>
}

// Statistics computed from the input (training-mode batch statistics) change with every
// batch: nothing to fold into the weight.
// CHECK-LABEL: func.func @stats_from_input
// CHECK: %[[Y:.*]] = graph.conv2d
// CHECK: graph.batchnorm %[[Y]]
func.func @stats_from_input(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x6x6xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %mu = graph.reduce_mean %y {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<?x4x6x6xf32>) -> tensor<4xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  return %n : tensor<?x4x6x6xf32>
}

// A bias that is not per channel (one value per column) cannot join the shift.
// CHECK-LABEL: func.func @bias_not_per_channel
// CHECK: graph.batchnorm
func.func @bias_not_per_channel(%x: tensor<?x3x8x8xf32>, %c: tensor<6xf32>) -> tensor<?x4x6x6xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %mu = graph.read @mu : tensor<4xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %z = graph.add %y, %c : (tensor<?x4x6x6xf32>, tensor<6xf32>) -> tensor<?x4x6x6xf32>
  %n = graph.batchnorm %z, %mu, %var, %g, %b : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  return %n : tensor<?x4x6x6xf32>
}

// A training step assigns the statistics: left alone.
// CHECK-LABEL: func.func @assigns_stats
// CHECK: graph.batchnorm
func.func @assigns_stats(%x: tensor<?x3x8x8xf32>) -> tensor<?x4x6x6xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %mu = graph.read @mu : tensor<4xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  graph.assign @g, %b : tensor<4xf32>
  return %n : tensor<?x4x6x6xf32>
}

// A derivative request through the batchnorm (a training step before autodiff): left alone.
// CHECK-LABEL: func.func @differentiated
// CHECK: graph.batchnorm
// CHECK: autodiff.grad
func.func @differentiated(%x: tensor<?x3x8x8xf32>) -> tensor<4xf32> {
  %k = graph.read @k : tensor<4x3x3x3xf32>
  %mu = graph.read @mu : tensor<4xf32>
  %var = graph.read @var : tensor<4xf32>
  %g = graph.read @g : tensor<4xf32>
  %b = graph.read @b : tensor<4xf32>
  %y = graph.conv2d %x, %k : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %n = graph.batchnorm %y, %mu, %var, %g, %b : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  %l = graph.reduce_sum %n {axes = array<i64>, keepdims = false} : (tensor<?x4x6x6xf32>) -> tensor<f32>
  %d = autodiff.grad %l wrt %g : (tensor<f32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
