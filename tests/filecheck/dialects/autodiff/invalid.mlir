// RUN: irkit-opt %s -p autodiff --split-input-file --verify-diagnostics

// The autodiff dialect's rules, one per chunk: the verifier's (types of seeds, tangents and
// results, scalar values without a seed), the parser's (signature arity), and the errors of
// the autodiff pass that expands the requests (a derivative that must flow through a
// non-differentiable op, located at that op with a note at the request; integer values).
// Running an unexpanded request in the interpreter is an error too; no tool interprets IR
// from a file, so tests/unit/test_ad_lectures.py checks that one.

// Without a seed every value must be a scalar: the gradient of a vector needs its seed.
func.func @unseeded_vector(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'autodiff.grad' op value #0 (tensor<3xf32>) is not a scalar: give a seed}}
  %g = autodiff.grad %y wrt %x : (tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// A dynamic shape may hold one element or many: it is not a scalar either.
func.func @unseeded_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'autodiff.grad' op value #0 (tensor<?xf32>) is not a scalar: give a seed}}
  %g = autodiff.grad %x wrt %x : (tensor<?xf32>) -> tensor<?xf32>
  return %g : tensor<?xf32>
}

// -----

// A seed is a cotangent of its value: the same type.
func.func @seed_type(%x: tensor<3xf32>, %s: tensor<3xf64>) -> tensor<3xf32> {
  %y = graph.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'autodiff.grad' op seeds #0 has type tensor<3xf64>, but values #0 has type tensor<3xf32>}}
  %g = autodiff.grad %y seed %s wrt %x : (tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// One seed per value, or none at all.
func.func @seed_count(%x: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  %y = graph.exp %x : (tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{'autodiff.grad' op has 2 values but 1 seeds}}
  %g = autodiff.grad %y, %x seed %s wrt %x : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

// -----

// The gradient of an x has x's type (generic form: the custom one reads the types of the
// xs from the results, so it cannot disagree).
func.func @grad_result_type(%x: tensor<f32>) -> tensor<f64> {
  // expected-error @+1 {{'autodiff.grad' op results #0 has type tensor<f64>, but xs #0 has type tensor<f32>}}
  %g = "autodiff.grad"(%x, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<f32>, tensor<f32>) -> tensor<f64>
  return %g : tensor<f64>
}

// -----

func.func @grad_result_count(%x: tensor<f32>, %z: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'autodiff.grad' op has 2 xs but 1 results}}
  %g = "autodiff.grad"(%x, %x, %z) <{operandSegmentSizes = array<i32: 1, 0, 2>}> : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

// -----

func.func @grad_nothing(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'autodiff.grad' op needs at least one value to differentiate}}
  %g = "autodiff.grad"(%x) <{operandSegmentSizes = array<i32: 0, 0, 1>}> : (tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

// -----

// The custom form's signature lists the values and seeds before '->'.
func.func @grad_signature(%x: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected 2 types before '->', one per value and seed}}
  %g = autodiff.grad %x seed %s wrt %x : (tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

// -----

func.func @grad_results(%x: tensor<f32>, %z: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected 2 result types, one per 'wrt' value}}
  %g = autodiff.grad %x wrt %x, %z : (tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

// -----

// Forward mode: one tangent per x, of the x's type.
func.func @jvp_tangent_count(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y = graph.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{expected 1 tangents, one per 'wrt' value}}
  %t = autodiff.jvp %y wrt %x along %v, %v : (tensor<3xf32>) -> tensor<3xf32>
  return %t : tensor<3xf32>
}

// -----

func.func @jvp_tangent_type(%x: tensor<3xf32>, %v: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error @+1 {{'autodiff.jvp' op tangents #0 has type tensor<3xf64>, but xs #0 has type tensor<3xf32>}}
  %t = "autodiff.jvp"(%x, %x, %v) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<3xf32>, tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return %t : tensor<3xf32>
}

// -----

func.func @jvp_result_type(%x: tensor<3xf32>) -> tensor<f32> {
  // expected-error @+1 {{'autodiff.jvp' op results #0 has type tensor<f32>, but values #0 has type tensor<3xf32>}}
  %t = "autodiff.jvp"(%x, %x, %x) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

// -----

func.func @jvp_signature(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expected 1 result types, one per value}}
  %t = autodiff.jvp %x wrt %x along %v : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %t : tensor<3xf32>
}

// -----

// The lecture's non-differentiable path: argmax, then a cast, then float arithmetic. The
// gradient of the loss would have to pass through the argmax, which has none: the error is
// located at the argmax, with a note at the request.
func.func @through_argmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'graph.argmax' op is not differentiable, but a gradient flows through it}}
  %i = graph.argmax %x {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4xi64>
  %f = graph.cast %i : (tensor<4xi64>) -> tensor<4xf32>
  %m = graph.mul %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.reduce_sum %m : (tensor<4xf32>) -> tensor<f32>
  // expected-note @+1 {{a gradient is requested here}}
  %g = autodiff.grad %l wrt %x : (tensor<f32>) -> tensor<4x10xf32>
  return %g : tensor<4x10xf32>
}

// -----

// A float -> integer -> float round trip is no way around it either.
func.func @through_int_cast(%x: tensor<3xf64>, %v: tensor<3xf64>) -> tensor<3xf64> {
  // expected-error @+1 {{'graph.cast' op is not differentiable, but a tangent flows through it}}
  %i = graph.cast %x : (tensor<3xf64>) -> tensor<3xi32>
  %f = graph.cast %i : (tensor<3xi32>) -> tensor<3xf64>
  %y = graph.sin %f : (tensor<3xf64>) -> tensor<3xf64>
  // expected-note @+1 {{a tangent is requested here}}
  %t = autodiff.jvp %y wrt %x along %v : (tensor<3xf64>) -> tensor<3xf64>
  return %t : tensor<3xf64>
}

// -----

// Comparisons carry no derivative: a float made from a predicate cannot be differentiated.
func.func @through_cmp(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.cmp' op is not differentiable, but a gradient flows through it}}
  %c = graph.cmp %x, %y {predicate = "lt"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %f = graph.cast %c : (tensor<3xi1>) -> tensor<3xf32>
  %l = graph.reduce_sum %f : (tensor<3xf32>) -> tensor<f32>
  // expected-note @+1 {{a gradient is requested here}}
  %g = autodiff.grad %l wrt %x : (tensor<f32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

// Derivatives are taken with respect to floating-point tensors only.
func.func @integer_wrt(%n: tensor<3xi32>) -> tensor<3xi32> {
  %f = graph.cast %n : (tensor<3xi32>) -> tensor<3xf32>
  %l = graph.reduce_sum %f : (tensor<3xf32>) -> tensor<f32>
  // expected-error @+1 {{'autodiff.grad' op value differentiated against #0 has type tensor<3xi32>; derivatives need a floating-point tensor}}
  %g = autodiff.grad %l wrt %n : (tensor<f32>) -> tensor<3xi32>
  return %g : tensor<3xi32>
}

// -----

func.func @integer_value(%x: tensor<3xf32>, %s: tensor<3xi64>) -> tensor<3xf32> {
  %i = graph.argmax %x {axis = 0 : i64} : (tensor<3xf32>) -> tensor<i64>
  // expected-error @+1 {{'autodiff.grad' op differentiated value #0 has type tensor<i64>; derivatives need a floating-point tensor}}
  %g = autodiff.grad %i wrt %x : (tensor<i64>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// -----

func.func @integer_jvp(%n: tensor<3xi32>, %v: tensor<3xi32>) -> tensor<3xf32> {
  %f = graph.cast %n : (tensor<3xi32>) -> tensor<3xf32>
  // expected-error @+1 {{'autodiff.jvp' op value differentiated against #0 has type tensor<3xi32>; derivatives need a floating-point tensor}}
  %t = autodiff.jvp %f wrt %n along %v : (tensor<3xi32>) -> tensor<3xf32>
  return %t : tensor<3xf32>
}
