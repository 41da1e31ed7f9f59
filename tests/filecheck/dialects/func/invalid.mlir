// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s

// Each chunk holds one error; the messages are MLIR's own, located at the offending op.

// CHECK:      invalid.mlir:[[# @LINE + 3]]:3: error: 'func.return' op type of return operand 0
// CHECK-SAME: ('i32') doesn't match function result type ('f32') in function @wrong_return_type
func.func @wrong_return_type(%arg0: i32) -> f32 {
  return %arg0 : i32
}

// -----

// CHECK:      error: 'func.return' op has 1 operands,
// CHECK-SAME: but enclosing function (@wrong_return_count) returns 2
func.func @wrong_return_count(%arg0: f32) -> (f32, f32) {
  return %arg0 : f32
}

// -----

// CHECK: error: expected named arguments for a function with a body
func.func @unnamed_args(f32) -> f32 {
^bb0(%arg0: f32):
  return %arg0 : f32
}

// -----

// CHECK: error: 'func.call' op 'nowhere' does not reference a valid function
func.func @undefined_callee(%arg0: f32) -> f32 {
  %0 = call @nowhere(%arg0) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @callee(%arg0: f32) -> f32 {
  return %arg0 : f32
}

// CHECK:      error: 'func.call' op operand type mismatch:
// CHECK-SAME: expected operand type 'f32', but provided 'i32' for operand number 0
func.func @call_type_mismatch(%arg0: i32) -> f32 {
  %0 = call @callee(%arg0) : (i32) -> f32
  return %0 : f32
}

// -----

// CHECK: error: operation 'test.op' is from an unregistered dialect
func.func @unregistered(%arg0: f32) {
  %0 = "test.op"(%arg0) : (f32) -> f32
  return
}

// -----

// CHECK: error: 'func.func' op symbol declaration cannot have public visibility
func.func @public_decl(f32) -> f32

// -----

// CHECK: error: 'func.return' op expects parent op 'func.func'
func.return

// -----

func.func @dup() {
  return
}
// CHECK: error: 'func.func' op redefinition of symbol named 'dup'
// CHECK: note: see existing symbol definition here
func.func @dup() {
  return
}

// -----

// CHECK: error: 'func.func' op type of entry block argument #0 ('i32') must match
// CHECK-SAME: the type of the corresponding argument in function signature ('f32')
"func.func"() <{function_type = (f32) -> (), sym_name = "block_arg_mismatch"}> ({
^bb0(%arg0: i32):
  "func.return"() : () -> ()
}) : () -> ()
