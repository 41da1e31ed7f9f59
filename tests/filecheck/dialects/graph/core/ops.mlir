// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s

// The graph dialect's storage: constants, and variables with their initializers, read and
// assigned by functions. Each parses and prints back in custom form, also via generic form.

// Variables print their type, their initializer and its arguments (if any), sorted by name.
// CHECK: graph.variable @w : tensor<4x3xf32> init normal {seed = 1 : i64, std = 5.000000e-02 : f64}
graph.variable @w : tensor<4x3xf32> init normal {seed = 1 : i64, std = 5.000000e-02 : f64}
// CHECK: graph.variable @b : tensor<3xf32> init zeros
graph.variable @b : tensor<3xf32> init zeros
// CHECK: graph.variable @step : tensor<i64> init ones
graph.variable @step : tensor<i64> init ones
// CHECK: graph.variable @scale : tensor<2x2xf64> init constant {value = 2.500000e-01 : f64}
graph.variable @scale : tensor<2x2xf64> init constant {value = 2.500000e-01 : f64}
// CHECK: graph.variable @u : tensor<8xf32> init uniform {high = 5.000000e-01 : f64, low = -5.000000e-01 : f64}
graph.variable @u : tensor<8xf32> init uniform {low = -5.000000e-01 : f64, high = 5.000000e-01 : f64}
// CHECK: graph.variable @g : tensor<3x2x3x3xf32> init glorot {seed = 7 : i64}
graph.variable @g : tensor<3x2x3x3xf32> init glorot {seed = 7 : i64}
// CHECK: graph.variable @h : tensor<16x4xf32> init he
graph.variable @h : tensor<16x4xf32> init he

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xf32>, tensor<f32>, tensor<2x2xi32>, tensor<3xi1>, tensor<0xf32>) {
  // CHECK: %[[A:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %a = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // A rank-0 tensor is a scalar.
  // CHECK: %[[S:.*]] = graph.constant dense<-0.000000e+00> : tensor<f32>
  %s = graph.constant dense<-0.0> : tensor<f32>
  // A splat prints as one value.
  // CHECK: %[[I:.*]] = graph.constant dense<7> : tensor<2x2xi32>
  %i = graph.constant dense<7> : tensor<2x2xi32>
  // CHECK: %[[B:.*]] = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %b = graph.constant dense<[true, false, true]> : tensor<3xi1>
  // An empty tensor (MLIR prints `dense<>`; irkit prints `dense<[]>`, accepted by both).
  // CHECK: %[[E:.*]] = graph.constant dense<{{(\[\])?}}> : tensor<0xf32>
  %e = graph.constant dense<> : tensor<0xf32>
  // CHECK: return %[[A]], %[[S]], %[[I]], %[[B]], %[[E]]
  return %a, %s, %i, %b, %e : tensor<2xf32>, tensor<f32>, tensor<2x2xi32>, tensor<3xi1>, tensor<0xf32>
}

// A training step in miniature: read the parameters, compute, assign the update.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[G:.*]]: tensor<3xf32>)
func.func @train_step(%g: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: %[[B:.*]] = graph.read @b : tensor<3xf32>
  %b = graph.read @b : tensor<3xf32>
  // CHECK: %[[N:.*]] = graph.sub %[[B]], %[[G]]
  %n = graph.sub %b, %g : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.assign @b, %[[N]] : tensor<3xf32>
  graph.assign @b, %n : tensor<3xf32>
  // CHECK: %[[K:.*]] = graph.read @step : tensor<i64>
  %k = graph.read @step : tensor<i64>
  // CHECK: graph.assign @step, %[[K]] : tensor<i64>
  graph.assign @step, %k : tensor<i64>
  // CHECK: return %[[N]] : tensor<3xf32>
  return %n : tensor<3xf32>
}
