// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Invalid arith IR that irkit once accepted or reported in its own words. Each chunk holds
// one error with MLIR 22's message at MLIR's location, so mlir-opt --verify-diagnostics
// accepts this file too (tests/unit/test_mlir_conformance.py runs it where mlir-opt is).

// A scalable vector is no fixed one of the same size: the shapes differ.
func.func @trunci_scalable_to_fixed(%v: vector<[4]xi32>) -> vector<4xi8> {
  // expected-error @+1 {{'arith.trunci' op requires the same shape for all operands and results}}
  %0 = arith.trunci %v : vector<[4]xi32> to vector<4xi8>
  return %0 : vector<4xi8>
}

// -----

func.func @bitcast_fixed_to_scalable(%v: vector<4xi32>) -> vector<[4]xf32> {
  // expected-error @+1 {{'arith.bitcast' op requires the same shape for all operands and results}}
  %0 = arith.bitcast %v : vector<4xi32> to vector<[4]xf32>
  return %0 : vector<[4]xf32>
}

// -----

// A cast keeps the tensor's encoding.
func.func @extsi_encodings(%t: tensor<4xi32, "foo">) -> tensor<4xi64, "bar"> {
  // expected-error @+1 {{'arith.extsi' op operand type 'tensor<4xi32, "foo">' and result type 'tensor<4xi64, "bar">' are cast incompatible}}
  %0 = arith.extsi %t : tensor<4xi32, "foo"> to tensor<4xi64, "bar">
  return %0 : tensor<4xi64, "bar">
}

// -----

func.func @sitofp_drops_encoding(%t: tensor<4xi32, "foo">) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.sitofp' op operand type 'tensor<4xi32, "foo">' and result type 'tensor<4xf32>' are cast incompatible}}
  %0 = arith.sitofp %t : tensor<4xi32, "foo"> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Compatible shapes are not enough for a cast: tensor dimensions must be equal...
func.func @extui_dynamic_to_static(%t: tensor<?xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'arith.extui' op failed to verify that input and output have the same tensor dimensions}}
  %0 = arith.extui %t : tensor<?xi32> to tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// ...and a tensor does not become a vector.
func.func @index_cast_tensor_to_vector(%t: tensor<4xi32>) -> vector<4xindex> {
  // expected-error @+1 {{'arith.index_cast' op failed to verify that input and output have the same tensor dimensions}}
  %0 = arith.index_cast %t : tensor<4xi32> to vector<4xindex>
  return %0 : vector<4xindex>
}

// -----

func.func @select_values_encodings(%c: i1, %a: tensor<4xi32, "foo">, %b: tensor<4xi32, "bar">) -> tensor<4xi32, "foo"> {
  // expected-error @+1 {{'arith.select' op failed to verify that all of {true_value, false_value, result} have same type}}
  %0 = "arith.select"(%c, %a, %b) : (i1, tensor<4xi32, "foo">, tensor<4xi32, "bar">) -> tensor<4xi32, "foo">
  return %0 : tensor<4xi32, "foo">
}

// -----

// A tensor mask carries the result's encoding.
func.func @select_mask_encoding(%c: tensor<4xi1, "bar">, %a: tensor<4xi32, "foo">) -> tensor<4xi32, "foo"> {
  // expected-error @+1 {{'arith.select' op expected condition type to have the same shape as the result type, expected 'tensor<4xi1, "foo">', but got 'tensor<4xi1, "bar">'}}
  %0 = arith.select %c, %a, %a : tensor<4xi1, "bar">, tensor<4xi32, "foo">
  return %0 : tensor<4xi32, "foo">
}

// -----

func.func @select_mask_scalable(%c: vector<[4]xi1>, %a: vector<4xi32>) -> vector<4xi32> {
  // expected-error @+1 {{'arith.select' op all non-scalar operands/results must have the same shape and base type}}
  %0 = arith.select %c, %a, %a : vector<[4]xi1>, vector<4xi32>
  return %0 : vector<4xi32>
}

// -----

// cmpi's i1 result keeps the operands' encoding; one without it is a different type.
func.func @cmpi_result_encoding(%a: tensor<4xi32, "foo">) -> tensor<4xi1> {
  // expected-error @+1 {{'arith.cmpi' op failed to verify that result type has i1 element type and same shape as operands}}
  %0 = "arith.cmpi"(%a, %a) <{predicate = 0 : i64}> : (tensor<4xi32, "foo">, tensor<4xi32, "foo">) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Operands and results are named by position, never by irkit's field names (`in_`, `lhs`).
func.func @extsi_of_float(%f: f32) -> i64 {
  // expected-error @+1 {{'arith.extsi' op operand #0 must be signless-fixed-width-integer-like, but got 'f32'}}
  %0 = "arith.extsi"(%f) : (f32) -> i64
  return %0 : i64
}

// -----

func.func @sitofp_to_int(%a: i32) -> i32 {
  // expected-error @+1 {{'arith.sitofp' op result #0 must be floating-point-like, but got 'i32'}}
  %0 = "arith.sitofp"(%a) : (i32) -> i32
  return %0 : i32
}

// -----

func.func @addi_two_results(%a: i32) {
  // expected-error @+1 {{'arith.addi' op requires one result}}
  %0:2 = "arith.addi"(%a, %a) : (i32, i32) -> (i32, i32)
  return
}

// -----

func.func @addi_one_operand(%a: i32) {
  // expected-error @+1 {{'arith.addi' op expected 2 operands, but found 1}}
  %0 = "arith.addi"(%a) : (i32) -> i32
  return
}

// -----

func.func @constant_with_region() {
  // expected-error @+1 {{'arith.constant' op requires zero regions}}
  %0 = "arith.constant"() <{value = 1 : i32}> ({
  }) : () -> i32
  return
}

// -----

// The extended ops' own rules.
func.func @addui_extended_overflow_type(%a: i32) {
  // expected-error @+1 {{'arith.addui_extended' op result #1 must be bool-like, but got 'i32'}}
  %sum, %overflow = arith.addui_extended %a, %a : i32, i32
  return
}

// -----

func.func @addui_extended_mixed(%a: i32, %b: i64) {
  // expected-error @+1 {{'arith.addui_extended' op failed to verify that all of {lhs, rhs, sum} have same type}}
  %0:2 = "arith.addui_extended"(%a, %b) : (i32, i64) -> (i32, i1)
  return
}

// -----

func.func @addui_extended_scalar_overflow(%v: vector<4xi32>) {
  // expected-error @+1 {{'arith.addui_extended' op if an operand is non-scalar, then all results must be non-scalar}}
  %sum, %overflow = arith.addui_extended %v, %v : vector<4xi32>, i1
  return
}

// -----

func.func @addui_extended_overflow_shape(%v: vector<4xi32>) {
  // expected-error @+1 {{'arith.addui_extended' op all non-scalar operands/results must have the same shape and base type}}
  %sum, %overflow = arith.addui_extended %v, %v : vector<4xi32>, vector<8xi1>
  return
}

// -----

func.func @addui_extended_one_result(%a: i32) {
  // expected-error @+1 {{'arith.addui_extended' op expected 2 results}}
  %0 = "arith.addui_extended"(%a, %a) : (i32, i32) -> i32
  return
}

// -----

func.func @mulsi_extended_high_type(%a: i32) {
  // expected-error @+1 {{'arith.mulsi_extended' op failed to verify that all of {lhs, rhs, low, high} have same type}}
  %0:2 = "arith.mulsi_extended"(%a, %a) : (i32, i32) -> (i32, i64)
  return
}

// -----

func.func @mului_extended_float(%a: f32) {
  // expected-error @+1 {{'arith.mului_extended' op operand #0 must be signless-integer-like, but got 'f32'}}
  %0:2 = "arith.mului_extended"(%a, %a) : (f32, f32) -> (f32, f32)
  return
}

// -----

// A missing token is reported where it is missing, at the end of the line, not at the next
// token on the line after (here `return`).
func.func @missing_colon(%a: i32) -> i32 {
  // expected-error @+1 {{expected ':'}}
  %0 = arith.addi %a, %a
  return %0 : i32
}

// -----

func.func @unclosed_vector_type(%a: vector<4xi32>) -> i32 {
  // expected-error @+1 {{expected '>'}}
  %0 = arith.addi %a, %a : vector<4xi32
  return %0 : i32
}
