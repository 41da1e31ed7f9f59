// RUN: irkit-opt %s --split-input-file --verify-diagnostics

func.func @absf_int(%a: i32) {
  // expected-error @+1 {{'math.absf' op operand #0 must be floating-point-like}}
  %0 = math.absf %a : i32
  return
}

// -----

func.func @absi_float(%x: f32) {
  // expected-error @+1 {{'math.absi' op operand #0 must be signless-integer-like}}
  %0 = math.absi %x : f32
  return
}

// -----

func.func @fma_types(%x: f32, %h: f16) {
  // expected-error @+1 {{'math.fma' op requires the same type for all operands and results}}
  %0 = "math.fma"(%x, %x, %h) : (f32, f32, f16) -> f32
  return
}

// -----

func.func @isnan_result(%x: f32) {
  // expected-error @+1 {{'math.isnan' op failed to verify that result type has i1 element type and same shape as operands}}
  %0 = "math.isnan"(%x) : (f32) -> vector<4xi1>
  return
}

// -----

func.func @fpowi_result(%x: f32, %a: i32) {
  // expected-error @+1 {{'math.fpowi' op failed to verify that all of {lhs, result} have same type}}
  %0 = "math.fpowi"(%x, %a) : (f32, i32) -> f64
  return
}

// -----

func.func @sincos_results(%x: f32) {
  // expected-error @+1 {{operation defines 2 results but was provided 1 to bind}}
  %0 = math.sincos %x : f32
  return
}
