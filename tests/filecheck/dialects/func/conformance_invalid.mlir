// RUN: irkit-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Invalid func IR that irkit once accepted. One error a chunk, with MLIR 22's message at
// MLIR's location: mlir-opt --verify-diagnostics accepts this file too
// (tests/unit/test_mlir_conformance.py runs it where mlir-opt is installed).

// An argument or result attribute must belong to a dialect (its name has a dot).
// expected-error @+1 {{'func.func' op arguments may only have dialect attributes}}
func.func @arg_attr(%a: i32 {non_dialect_attr = 10}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op results may only have dialect attributes}}
func.func @result_attr() -> (i32 {non_dialect_attr = 10}) {
  %0 = arith.constant 0 : i32
  return %0 : i32
}

// -----

// expected-error @+1 {{'func.func' op expects argument attribute array to have the same number of elements as the number of function arguments, got 2, but expected 1}}
"func.func"() <{arg_attrs = [{test.a}, {}], function_type = (f32) -> (), sym_name = "arg_attrs_count"}> ({
^bb0(%a: f32):
  "func.return"() : () -> ()
}) : () -> ()

// -----

// The signature already says these: the attribute dictionary may not.
// expected-error @+1 {{'sym_name' is an inferred attribute and should not be specified in the explicit attribute dictionary}}
func.func @explicit_sym_name() attributes {sym_name = "x"} {
  return
}

// -----

// expected-error @+1 {{'sym_visibility' is an inferred attribute and should not be specified in the explicit attribute dictionary}}
func.func @explicit_visibility() attributes {sym_visibility = "private"} {
  return
}

// -----

// expected-error @+1 {{'function_type' is an inferred attribute and should not be specified in the explicit attribute dictionary}}
func.func @explicit_type() attributes {function_type = () -> ()} {
  return
}

// -----

// func is a dialect irkit defines in full: an op name it does not know is a mistake, even
// under --allow-unregistered-dialect.
func.func @unknown_func_op() {
  // expected-error @+1 {{unregistered operation 'func.foo_bar_op' found in dialect ('func') that does not allow unknown operations}}
  "func.foo_bar_op"() : () -> ()
  return
}

// -----

// Without argument names the body declares the arguments; they must match the signature.
// expected-error @+1 {{'func.func' op entry block must have 2 arguments to match function signature}}
func.func @unnamed_too_few(f32, f32) -> f32 {
^bb0(%a: f32):
  return %a : f32
}

// -----

// With argument names, those are the entry block's: it has no label of its own.
func.func @named_and_labelled(%x: f32) -> f32 {
// expected-error @+1 {{invalid block name in region with named arguments}}
^bb0(%a: f32):
  return %a : f32
}

// -----

// expected-error @+1 {{expected non-empty function body}}
func.func @empty_body() {
}

// -----

// expected-error @+1 {{empty block: expect at least a terminator}}
func.func @empty_block(%a: f32) {
}
