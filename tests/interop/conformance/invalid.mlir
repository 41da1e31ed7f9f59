// RUN: mlir-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics
//
// Invalid IR with MLIR 22's own diagnostics: each chunk must be rejected, with this message
// at this line. Input of bench/mlir_conformance.py, which counts for irkit-opt the chunks
// rejected, those matching MLIR's diagnostic exactly, and those wrongly accepted.

func.func @operand_types(%a: i32, %b: i64) -> i32 {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'i32' vs 'i64'}}
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

func.func @undefined(%a: i32) -> i32 {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %0 = arith.addi %a, %zz : i32
  return %0 : i32
}

// -----

func.func @return_type(%a: i32) -> f32 {
  // expected-error @+1 {{type of return operand 0 ('i32') doesn't match function result type ('f32') in function @return_type}}
  return %a : i32
}

// -----

func.func @return_count(%a: i32) -> (i32, i32) {
  // expected-error @+1 {{'func.return' op has 1 operands, but enclosing function (@return_count) returns 2}}
  return %a : i32
}

// -----

func.func @unknown_callee(%a: i32) -> i32 {
  // expected-error @+1 {{'func.call' op 'nowhere' does not reference a valid function}}
  %0 = call @nowhere(%a) : (i32) -> i32
  return %0 : i32
}

// -----

func.func private @takes_two(i32, i32) -> i32

func.func @call_arity(%a: i32) -> i32 {
  // expected-error @+1 {{'func.call' op incorrect number of operands for callee}}
  %0 = call @takes_two(%a) : (i32) -> i32
  return %0 : i32
}

// -----

func.func @trunc_wider(%a: i16) -> i32 {
  // expected-error @+1 {{'arith.trunci' op operand type 'i16' and result type 'i32' are cast incompatible}}
  %0 = arith.trunci %a : i16 to i32
  return %0 : i32
}

// -----

func.func @ext_narrower(%a: i32) -> i16 {
  // expected-error @+1 {{'arith.extsi' op operand type 'i32' and result type 'i16' are cast incompatible}}
  %0 = arith.extsi %a : i32 to i16
  return %0 : i16
}

// -----

func.func @float_constant_as_int() -> i32 {
  // MLIR reports this at the token after the type, on the next line.
  // expected-error @+2 {{floating point value not valid for specified type}}
  %0 = arith.constant 1.5 : i32
  return %0 : i32
}

// -----

func.func @bad_predicate(%a: i32) -> i1 {
  // expected-error @+1 {{custom op 'arith.cmpi' expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge]}}
  %0 = arith.cmpi foo, %a, %a : i32
  return %0 : i1
}

// -----

func.func @absf_on_int(%a: i32) -> i32 {
  // expected-error @+1 {{'math.absf' op operand #0 must be floating-point-like, but got 'i32'}}
  %0 = math.absf %a : i32
  return %0 : i32
}

// -----

func.func @select_shapes(%c: vector<2xi1>, %a: vector<4xi32>, %b: vector<4xi32>) -> vector<4xi32> {
  // expected-error @+1 {{'arith.select' op failed to verify that condition is signless i1 or has matching shape}}
  %0 = arith.select %c, %a, %b : vector<2xi1>, vector<4xi32>
  return %0 : vector<4xi32>
}

// -----

// Casts between scalable and fixed vectors (issue 17, defect 5).
func.func @scalable_to_fixed(%v: vector<[4]xi32>) -> vector<4xi8> {
  // expected-error @+1 {{'arith.trunci' op requires the same shape for all operands and results}}
  %0 = arith.trunci %v : vector<[4]xi32> to vector<4xi8>
  return %0 : vector<4xi8>
}

// -----

// An unknown op of a registered dialect, even with -allow-unregistered-dialect (defect 5).
func.func @unknown_op() {
  // expected-error @+1 {{unregistered operation 'func.foo_bar_op' found in dialect ('func') that does not allow unknown operations}}
  "func.foo_bar_op"() : () -> ()
  return
}

// -----

// A non-dialect attribute on a function argument (defect 5).
// expected-error @+1 {{'func.func' op arguments may only have dialect attributes}}
func.func @arg_attr(%a: i32 {non_dialect_attr = 10}) {
  return
}

// -----

func.func @no_terminator(%a: i32) -> i32 {
  // expected-error @+1 {{block with no terminator}}
  %0 = arith.addi %a, %a : i32
}

// -----

func.func @dominance(%a: i32) -> i32 {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  %0 = arith.addi %1, %a : i32
  // expected-note @+1 {{operand defined here}}
  %1 = arith.addi %a, %a : i32
  return %0 : i32
}

// -----

// A valid chunk among the invalid ones: it must be accepted.
func.func @valid(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}
