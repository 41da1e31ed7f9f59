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
  // CHECK: error: 'loop.for' op operand #0 must be signless integer or index, but got 'f32'
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
  // CHECK: error: 'loop.for' op expects region #0 to have 0 or 1 blocks
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
  // CHECK: error: 'loop.yield' op expects parent op to be one of 'loop.for', 'loop.parallel', 'loop.if'
  "loop.yield"(%x) : (f32) -> ()
}

// -----

func.func @if_condition(%c: i32) {
  // CHECK: error: 'loop.if' op operand #0 must be i1, but got 'i32'
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

// -----

func.func @parallel_counts(%lb: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.parallel' op expects the same number of lower bounds, upper bounds and steps, but got 2, 2 and 1
  "loop.parallel"(%lb, %lb, %lb, %lb, %lb) <{operandSegmentSizes = array<i32: 2, 2, 1>}> ({
  ^bb0(%i: index, %j: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index, index, index) -> ()
  return
}

// -----

func.func @parallel_no_dims() {
  // CHECK: error: 'loop.parallel' op needs at least one tuple element for lower_bounds, upper_bounds and steps
  "loop.parallel"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> ({
    "loop.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @parallel_zero_step(%lb: index, %ub: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'loop.parallel' op constant step operand must be positive
  loop.parallel (%i, %j) = (%lb, %lb) to (%ub, %ub) step (%c1, %c0) {
  }
  return
}

// -----

func.func @parallel_negative_step(%lb: index, %ub: index) {
  %c = arith.constant -2 : index
  // CHECK: error: 'loop.parallel' op constant step operand must be positive
  loop.parallel (%i) = (%lb) to (%ub) step (%c) {
  }
  return
}

// -----

func.func @parallel_bound_type(%lb: i32) {
  // CHECK: error: 'loop.parallel' op operand #0 must be variadic of index, but got 'i32'
  "loop.parallel"(%lb, %lb, %lb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (i32, i32, i32) -> ()
  return
}

// -----

func.func @parallel_no_body_block(%lb: index) {
  // CHECK: error: 'loop.parallel' op expects a body region with one block
  "loop.parallel"(%lb, %lb, %lb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @parallel_iv_count(%lb: index) {
  // CHECK: error: 'loop.parallel' op expects the same number of induction variables: 2 as bound and step values: 1
  "loop.parallel"(%lb, %lb, %lb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
  ^bb0(%i: index, %j: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @parallel_iv_type(%lb: index) {
  // CHECK: error: 'loop.parallel' op expects arguments for the induction variable to be of index type
  "loop.parallel"(%lb, %lb, %lb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
  ^bb0(%i: i64):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  return
}

// -----

func.func @parallel_results(%lb: index) {
  // CHECK: error: 'loop.parallel' op requires zero results
  %r = "loop.parallel"(%lb, %lb, %lb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> index
  return
}

// -----

func.func @parallel_yield_values(%lb: index, %x: f32) {
  loop.parallel (%i) = (%lb) to (%lb) step (%lb) {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'loop.yield' op has 1 operands, but parent 'loop.parallel' has 0 results
    loop.yield %x : f32
  }
  return
}

// -----

func.func @parallel_bound_count(%lb: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:42: error: expected 2 upper bounds (one per induction variable), found 1
  loop.parallel (%i, %j) = (%lb, %lb) to (%lb) step (%lb, %lb) {
  }
  return
}

// -----

func.func @parallel_step_count(%lb: index) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:58: error: expected 2 steps (one per induction variable), found 3
  loop.parallel (%i, %j) = (%lb, %lb) to (%lb, %lb) step (%lb, %lb, %lb) {
  }
  return
}

// -----

func.func @parallel_float_bound(%x: f32) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:25: error: use of value '%x' expects different type than prior uses: 'index' vs 'f32'
  loop.parallel (%i) = (%x) to (%x) step (%x) {
  }
  return
}
