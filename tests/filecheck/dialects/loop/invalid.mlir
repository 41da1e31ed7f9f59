// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s

// Each chunk holds one error, located at the offending op. Messages follow MLIR's scf where
// it has one.

func.func @bounds_types(%lb: index, %ub: i32) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op requires the same type for lower_bound, upper_bound and step
  "loop.for"(%lb, %ub, %lb) ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (index, i32, index) -> ()
  return
}

// -----

func.func @float_bounds(%lb: f32) {
  // CHECK: error: 'loop.for' op operand 'lower_bound' must be signless integer or index, but got 'f32'
  "loop.for"(%lb, %lb, %lb) ({
  ^bb0(%i: f32):
    "loop.yield"() : () -> ()
  }) : (f32, f32, f32) -> ()
  return
}

// -----

func.func @zero_step(%lb: index, %ub: index) {
  %c0 = arith.constant 0 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.for' op constant step operand must be positive
  loop.for %i = %lb to %ub step %c0 {
  }
  return
}

// -----

func.func @negative_step(%lb: i8, %ub: i8) {
  %c = arith.constant -1 : i8
  // CHECK: error: 'loop.for' op constant step operand must be positive
  loop.for %i = %lb to %ub step %c : i8 {
  }
  return
}

// -----

func.func @result_count(%lb: index, %x: f32) {
  // CHECK: error: 'loop.for' op mismatch in number of loop-carried values and defined values
  %r:2 = "loop.for"(%lb, %lb, %lb, %x) ({
  ^bb0(%i: index, %a: f32):
    "loop.yield"(%a) : (f32) -> ()
  }) : (index, index, index, f32) -> (f32, f32)
  return
}

// -----

func.func @no_body_block(%lb: index) {
  // CHECK: error: 'loop.for' op expects a body region with one block
  "loop.for"(%lb, %lb, %lb) ({
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @two_body_blocks(%lb: index) {
  // CHECK: error: 'loop.for' op expects region 'body' to have 0 or 1 blocks
  "loop.for"(%lb, %lb, %lb) ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  ^bb1:
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @body_arg_count(%lb: index, %x: f32) {
  // CHECK: error: 'loop.for' op expects the body block to have 2 arguments (the induction variable and one per iter_arg), but it has 1
  %r = "loop.for"(%lb, %lb, %lb, %x) ({
  ^bb0(%i: index):
    "loop.yield"(%x) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  return
}

// -----

func.func @iv_type(%lb: index) {
  // CHECK: error: 'loop.for' op expected induction variable to be same type as bounds and step
  "loop.for"(%lb, %lb, %lb) ({
  ^bb0(%i: i64):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @init_type(%lb: index, %x: f32) {
  // CHECK: error: 'loop.for' op types mismatch between 0th iter operand and defined value
  %r = "loop.for"(%lb, %lb, %lb, %x) ({
  ^bb0(%i: index, %a: f64):
    "loop.yield"(%a) : (f64) -> ()
  }) : (index, index, index, f32) -> f64
  return
}

// -----

func.func @region_arg_type(%lb: index, %x: f32) {
  // CHECK: error: 'loop.for' op types mismatch between 0th iter region arg and defined value
  %r = "loop.for"(%lb, %lb, %lb, %x) ({
  ^bb0(%i: index, %a: f64):
    "loop.yield"(%x) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  return
}

// -----

func.func @iter_args_types(%lb: index, %x: f32) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:64: error: expected 1 iter_args types, found 2
  %r = loop.for %i = %lb to %lb step %lb iter_args(%a = %x) -> (f32, f32) {
    loop.yield %a : f32
  }
  return
}

// -----

func.func @for_yield_count(%lb: index, %x: f32) -> f32 {
  %r = loop.for %i = %lb to %lb step %lb iter_args(%a = %x) -> (f32) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.yield' op has 0 operands, but parent 'loop.for' has 1 results
  }
  return %r : f32
}

// -----

func.func @for_yield_type(%lb: index, %x: f32, %y: f64) -> f32 {
  %r = loop.for %i = %lb to %lb step %lb iter_args(%a = %x) -> (f32) {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'loop.yield' op type of operand #0 ('f64') doesn't match the type of result #0 of parent 'loop.for' ('f32')
    loop.yield %y : f64
  }
  return %r : f32
}

// -----

func.func @yield_values_types(%x: f32) {
  %c = arith.constant true
  loop.if %c {
    // CHECK: error: expected 1 types, found 2
    loop.yield %x : f32, f32
  }
  return
}

// -----

func.func @yield_outside(%x: f32) {
  // CHECK: error: 'loop.yield' op expects parent op to be one of 'loop.for', 'loop.if'
  "loop.yield"(%x) : (f32) -> ()
}

// -----

func.func @if_condition(%c: i32) {
  // CHECK: error: 'loop.if' op operand 'condition' must be i1, but got 'i32'
  "loop.if"(%c) ({
    "loop.yield"() : () -> ()
  }, {
  }) : (i32) -> ()
  return
}

// -----

func.func @if_no_then_block(%c: i1) {
  // CHECK: error: 'loop.if' op expects the then region to have exactly one block
  "loop.if"(%c) ({
  }, {
  }) : (i1) -> ()
  return
}

// -----

func.func @if_results_no_else(%c: i1, %x: f32) -> f32 {
  // CHECK: error: 'loop.if' op must have an else block if defining values
  %r = loop.if %c -> (f32) {
    loop.yield %x : f32
  }
  return %r : f32
}

// -----

func.func @if_block_args(%c: i1) {
  // CHECK: error: 'loop.if' op expects the else region's block to have no arguments
  "loop.if"(%c) ({
    "loop.yield"() : () -> ()
  }, {
  ^bb0(%a: i1):
    "loop.yield"() : () -> ()
  }) : (i1) -> ()
  return
}

// -----

func.func @if_yield_count(%c: i1, %x: f32) -> f32 {
  %r = loop.if %c -> (f32) {
    loop.yield %x : f32
  } else {
    // CHECK: error: 'loop.yield' op has 2 operands, but parent 'loop.if' has 1 results
    loop.yield %x, %x : f32, f32
  }
  return %r : f32
}
