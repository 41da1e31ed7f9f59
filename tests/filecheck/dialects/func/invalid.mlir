// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Each chunk holds one error; the messages are MLIR's own, located at the offending op.

// --verify-diagnostics checks only the line of a diagnostic. This second run pins the column
// once: an op's error points at the op's name (column 3 here), not at one of its operands.
// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s
func.func @wrong_return_type(%arg0: i32) -> f32 {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'func.return' op type of return operand 0
  // expected-error @+1 {{'func.return' op type of return operand 0 ('i32') doesn't match function result type ('f32') in function @wrong_return_type}}
  return %arg0 : i32
}

// -----

func.func @wrong_return_count(%arg0: f32) -> (f32, f32) {
  // expected-error @+1 {{'func.return' op has 1 operands, but enclosing function (@wrong_return_count) returns 2}}
  return %arg0 : f32
}

// -----

// Without argument names the body's entry block declares the arguments; it must match.
// expected-error @+1 {{'func.func' op entry block must have 2 arguments to match function signature}}
func.func @unnamed_args(f32, f32) -> f32 {
^bb0(%arg0: f32):
  return %arg0 : f32
}

// -----

func.func @undefined_callee(%arg0: f32) -> f32 {
  // expected-error @+1 {{'func.call' op 'nowhere' does not reference a valid function}}
  %0 = call @nowhere(%arg0) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @callee(%arg0: f32) -> f32 {
  return %arg0 : f32
}

func.func @call_type_mismatch(%arg0: i32) -> f32 {
  // expected-error @+1 {{'func.call' op operand type mismatch: expected operand type 'f32', but provided 'i32' for operand number 0}}
  %0 = call @callee(%arg0) : (i32) -> f32
  return %0 : f32
}

// -----

func.func @unregistered(%arg0: f32) {
  // expected-error @+1 {{operation 'test.op' is from an unregistered dialect}}
  %0 = "test.op"(%arg0) : (f32) -> f32
  return
}

// -----

// expected-error @+1 {{'func.func' op symbol declaration cannot have public visibility}}
func.func @public_decl(f32) -> f32

// -----

// expected-error @+1 {{'func.return' op expects parent op 'func.func'}}
func.return

// -----

// expected-note @+1 {{see existing symbol definition here}}
func.func @dup() {
  return
}
// expected-error @+1 {{'func.func' op redefinition of symbol named 'dup'}}
func.func @dup() {
  return
}

// -----

// expected-error @+1 {{'func.func' op type of entry block argument #0 ('i32') must match the type of the corresponding argument in function signature ('f32')}}
"func.func"() <{function_type = (f32) -> (), sym_name = "block_arg_mismatch"}> ({
^bb0(%arg0: i32):
  "func.return"() : () -> ()
}) : () -> ()
