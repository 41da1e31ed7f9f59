// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// math.clampf's rules, with MLIR 22's messages (mlir-opt --verify-diagnostics accepts this
// file too; tests/unit/test_mlir_conformance.py runs it where mlir-opt is installed).

func.func @clampf_int(%a: i32) -> i32 {
  // expected-error @+1 {{'math.clampf' op operand #0 must be floating-point-like, but got 'i32'}}
  %0 = math.clampf %a to [%a, %a] : i32
  return %0 : i32
}

// -----

func.func @clampf_mixed(%a: f32, %b: f64) -> f32 {
  // expected-error @+1 {{'math.clampf' op requires the same type for all operands and results}}
  %0 = "math.clampf"(%a, %a, %b) <{fastmath = #arith.fastmath<none>}> : (f32, f32, f64) -> f32
  return %0 : f32
}

// -----

func.func @clampf_missing_bracket(%a: f32) -> f32 {
  // expected-error @+1 {{expected '['}}
  %0 = math.clampf %a to %a, %a] : f32
  return %0 : f32
}
