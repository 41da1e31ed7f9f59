// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Verifier rules of graph.constant, graph.variable, graph.read and graph.assign.

func.func @read_missing_variable() {
  // expected-error @+1 {{'graph.read' op '@nowhere' does not name a graph.variable}}
  %0 = graph.read @nowhere : tensor<3xf32>
  return
}

// -----

// A symbol that is not a variable does not do either.
func.func @f() {
  return
}
func.func @read_a_function() {
  // expected-error @+1 {{'graph.read' op '@f' does not name a graph.variable}}
  %0 = graph.read @f : tensor<3xf32>
  return
}

// -----

graph.variable @w : tensor<3xf32> init zeros
func.func @read_type_mismatch() {
  // expected-error @+1 {{'graph.read' op type tensor<4xf32> does not match variable @w of type tensor<3xf32>}}
  %0 = graph.read @w : tensor<4xf32>
  return
}

// -----

graph.variable @w : tensor<3xf32> init zeros
func.func @assign_type_mismatch(%v: tensor<3xf64>) {
  // expected-error @+1 {{'graph.assign' op type tensor<3xf64> does not match variable @w of type tensor<3xf32>}}
  graph.assign @w, %v : tensor<3xf64>
  return
}

// -----

graph.variable @w : tensor<3xf32> init zeros
func.func @assign_missing_variable(%v: tensor<3xf32>) {
  // expected-error @+1 {{'graph.assign' op '@v' does not name a graph.variable}}
  graph.assign @v, %v : tensor<3xf32>
  return
}

// -----

// expected-error @+1 {{'graph.variable' op unknown initializer 'xavier'; expected one of zeros, ones, constant, normal, uniform, glorot, he}}
graph.variable @w : tensor<3xf32> init xavier

// -----

// expected-error @+1 {{'graph.variable' op initializer 'constant' needs argument 'value'}}
graph.variable @w : tensor<3xf32> init constant

// -----

// expected-error @+1 {{'graph.variable' op initializer 'zeros' takes no argument 'seed'}}
graph.variable @w : tensor<3xf32> init zeros {seed = 1 : i64}

// -----

// A variable's storage is allocated once, so its shape is static.
// expected-error @+1 {{'graph.variable' op type must be a statically shaped tensor, got tensor<?x3xf32>}}
graph.variable @w : tensor<?x3xf32> init zeros

// -----

// expected-error @+1 {{'graph.variable' op type must be a statically shaped tensor, got f32}}
graph.variable @w : f32 init zeros

// -----

// expected-note @+1 {{see existing symbol definition here}}
graph.variable @w : tensor<3xf32> init zeros
// expected-error @+1 {{'graph.variable' op redefinition of symbol named 'w'}}
graph.variable @w : tensor<3xf32> init ones

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'graph.constant' op value's type must match the result type}}
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_not_dense() {
  // expected-error @+1 {{expected a dense elements attribute for graph.constant}}
  %0 = graph.constant 1.0 : f32
  return
}
