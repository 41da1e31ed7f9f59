// RUN: irkit-opt %s --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The loop dialect in custom form (MLIR's scf syntax) and in generic form. A `loop.yield`
// without operands is implicit in the custom form and explicit in the generic one.

// CHECK-LABEL: func.func @for_no_iter_args(
// CHECK-SAME:      %[[LB:.*]]: index, %[[UB:.*]]: index, %[[S:.*]]: index)
// CHECK-NEXT:    loop.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[S]] {
// CHECK-NEXT:      "test.use"(%[[I]]) : (index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "for_no_iter_args"
// GENERIC:       "loop.for"(%arg0, %arg1, %arg2) ({
// GENERIC-NEXT:  ^bb0(%[[I:.*]]: index):
// GENERIC-NEXT:    "test.use"(%[[I]]) : (index) -> ()
// GENERIC-NEXT:    "loop.yield"() : () -> ()
// GENERIC-NEXT:  }) : (index, index, index) -> ()
func.func @for_no_iter_args(%lb: index, %ub: index, %step: index) {
  loop.for %i = %lb to %ub step %step {
    "test.use"(%i) : (index) -> ()
  }
  return
}

// An explicit empty yield reads the same as an implicit one.
// CHECK-LABEL: func.func @for_explicit_yield
// CHECK-NEXT:    loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @for_explicit_yield(%lb: index, %ub: index, %step: index) {
  loop.for %i = %lb to %ub step %step {
    loop.yield
  }
  return
}

// CHECK-LABEL: func.func @for_iter_args(
// CHECK-SAME:      %[[LB:.*]]: index, %[[UB:.*]]: index, %[[X:.*]]: f32) -> f32
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[R:.*]] = loop.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[C1]]
// CHECK-SAME:        iter_args(%[[ACC:.*]] = %[[Z]]) -> (f32) {
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:      loop.yield %[[N]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]] : f32
// GENERIC-LABEL: sym_name = "for_iter_args"
// GENERIC:       "loop.for"(%arg0, %arg1, %{{.*}}, %{{.*}}) ({
// GENERIC-NEXT:  ^bb0(%{{.*}}: index, %{{.*}}: f32):
// GENERIC:         "loop.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT:  }) : (index, index, index, f32) -> f32
func.func @for_iter_args(%lb: index, %ub: index, %x: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = loop.for %i = %lb to %ub step %c1 iter_args(%acc = %zero) -> (f32) {
    %n = arith.addf %acc, %x : f32
    loop.yield %n : f32
  }
  return %r : f32
}

// Several carried values, a single result type written without parentheses on input, and
// bounds of a signless integer type (written after a colon); attributes follow the body.
// CHECK-LABEL: func.func @for_integer_bounds(
// CHECK-SAME:      %[[LB:.*]]: i32, %[[UB:.*]]: i32, %[[A:.*]]: f32, %[[B:.*]]: i64)
// CHECK:         %[[R:.*]]:2 = loop.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[C2:[0-9]+]]
// CHECK-SAME:        iter_args(%[[P:.*]] = %[[A]], %[[Q:.*]] = %[[B]]) -> (f32, i64) : i32 {
// CHECK-NEXT:      %[[E:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[Q]], %[[E]] : i64
// CHECK-NEXT:      loop.yield %[[P]], %[[S]] : f32, i64
// CHECK-NEXT:    } {test.tag = 1 : i64}
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1 : f32, i64
// GENERIC-LABEL: sym_name = "for_integer_bounds"
// GENERIC:       }) {test.tag = 1 : i64} : (i32, i32, i32, f32, i64) -> (f32, i64)
func.func @for_integer_bounds(%lb: i32, %ub: i32, %a: f32, %b: i64) -> (f32, i64) {
  %c2 = arith.constant 2 : i32
  %r:2 = loop.for %i = %lb to %ub step %c2 iter_args(%p = %a, %q = %b) -> (f32, i64) : i32 {
    %e = arith.extsi %i : i32 to i64
    %s = arith.addi %q, %e : i64
    loop.yield %p, %s : f32, i64
  } {test.tag = 1}
  return %r#0, %r#1 : f32, i64
}

// CHECK-LABEL: func.func @nested(
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (index) {
// CHECK-NEXT:      %[[IN:.*]] = loop.for %[[J:.*]] = %[[I]] to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %[[X]]) -> (index) {
// CHECK-NEXT:        %[[S:.*]] = arith.addi %[[Y]], %[[J]] : index
// CHECK-NEXT:        loop.yield %[[S]] : index
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %[[IN]] : index
// CHECK-NEXT:    }
func.func @nested(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%x = %c0) -> index {
    %in = loop.for %j = %i to %n step %c1 iter_args(%y = %x) -> (index) {
      %s = arith.addi %y, %j : index
      loop.yield %s : index
    }
    loop.yield %in : index
  }
  return %r : index
}

// CHECK-LABEL: func.func @if_results(
// CHECK-SAME:      %[[C:.*]]: i1, %[[A:.*]]: f32, %[[B:.*]]: f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = loop.if %[[C]] -> (f32) {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      loop.yield %[[S]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      loop.yield %[[B]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]] : f32
// GENERIC-LABEL: sym_name = "if_results"
// GENERIC:       "loop.if"(%arg0) ({
// GENERIC:         "loop.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT:  }, {
// GENERIC-NEXT:    "loop.yield"(%arg2) : (f32) -> ()
// GENERIC-NEXT:  }) : (i1) -> f32
func.func @if_results(%c: i1, %a: f32, %b: f32) -> f32 {
  %r = loop.if %c -> (f32) {
    %s = arith.addf %a, %b : f32
    loop.yield %s : f32
  } else {
    loop.yield %b : f32
  }
  return %r : f32
}

// Without results the else region may be left out (generic form: an empty region).
// CHECK-LABEL: func.func @if_no_else(
// CHECK-NEXT:    loop.if %{{.*}} {
// CHECK-NEXT:      "test.effect"() : () -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.if %{{.*}} {
// CHECK-NEXT:    } else {
// CHECK-NEXT:      "test.effect"() : () -> ()
// CHECK-NEXT:    } {test.tag}
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "if_no_else"
// GENERIC:         "loop.yield"() : () -> ()
// GENERIC-NEXT:  }, {
// GENERIC-NEXT:  }) : (i1) -> ()
func.func @if_no_else(%c: i1) {
  loop.if %c {
    "test.effect"() : () -> ()
  }
  loop.if %c {
  } else {
    "test.effect"() : () -> ()
  } {test.tag}
  return
}

// The generic form reads back into the custom one.
// CHECK-LABEL: func.func @generic_input(
// CHECK-NEXT:    %[[R:.*]] = loop.for %{{.*}} = %arg0 to %arg1 step %arg1 iter_args(%{{.*}} = %arg2) -> (f32) {
// CHECK-NEXT:      %[[T:.*]] = loop.if %arg3 -> (f32) {
func.func @generic_input(%lb: index, %ub: index, %x: f32, %c: i1) -> f32 {
  %r = "loop.for"(%lb, %ub, %ub, %x) ({
  ^bb0(%i: index, %acc: f32):
    %t = "loop.if"(%c) ({
      "loop.yield"(%acc) : (f32) -> ()
    }, {
      "loop.yield"(%x) : (f32) -> ()
    }) : (i1) -> f32
    "loop.yield"(%t) : (f32) -> ()
  }) : (index, index, index, f32) -> f32
  return %r : f32
}

// loop.parallel: MLIR's scf.parallel syntax without reductions. The generic form carries
// the three groups' sizes in `operandSegmentSizes`, as MLIR does.
// CHECK-LABEL: func.func @parallel_2d(
// CHECK-SAME:      %[[LB:.*]]: index, %[[UB:.*]]: index, %[[N:.*]]: index)
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    loop.parallel (%[[I:.*]], %[[J:.*]]) = (%[[LB]], %[[LB]]) to (%[[UB]], %[[N]]) step (%[[C1]], %[[C2]]) {
// CHECK-NEXT:      "test.use"(%[[I]], %[[J]]) : (index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "parallel_2d"
// GENERIC:       "loop.parallel"(%arg0, %arg0, %arg1, %arg2, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 2, 2, 2>}> ({
// GENERIC-NEXT:  ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// GENERIC-NEXT:    "test.use"(%[[I]], %[[J]]) : (index, index) -> ()
// GENERIC-NEXT:    "loop.yield"() : () -> ()
// GENERIC-NEXT:  }) : (index, index, index, index, index, index) -> ()
func.func @parallel_2d(%lb: index, %ub: index, %n: index) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.parallel (%i, %j) = (%lb, %lb) to (%ub, %n) step (%c1, %c2) {
    "test.use"(%i, %j) : (index, index) -> ()
  }
  return
}

// One dimension; an explicit empty yield reads the same as an implicit one; attributes follow
// the body; a loop.for nests inside.
// CHECK-LABEL: func.func @parallel_1d(
// CHECK-SAME:      %[[N:.*]]: index, %[[X:.*]]: f32)
// CHECK:         loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK-NEXT:      %[[S:.*]] = loop.for %[[J:.*]] = %[[I]] to %[[N]] step %{{.*}} iter_args(%[[A:.*]] = %[[X]]) -> (f32) {
// CHECK-NEXT:        %[[T:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK-NEXT:        loop.yield %[[T]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      "test.use"(%[[S]]) : (f32) -> ()
// CHECK-NEXT:    } {test.tag = 1 : i64}
// CHECK-NEXT:    loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "parallel_1d"
// GENERIC:       <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
// GENERIC:       }) {test.tag = 1 : i64} : (index, index, index) -> ()
func.func @parallel_1d(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = loop.for %j = %i to %n step %c1 iter_args(%a = %x) -> (f32) {
      %t = arith.addf %a, %x : f32
      loop.yield %t : f32
    }
    "test.use"(%s) : (f32) -> ()
  } {test.tag = 1}
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    loop.yield
  }
  return
}

// Three dimensions in generic form read back into the custom one.
// CHECK-LABEL: func.func @parallel_generic_input(
// CHECK-NEXT:    loop.parallel (%[[I:.*]], %[[J:.*]], %[[K:.*]]) = (%arg0, %arg0, %arg0) to (%arg1, %arg1, %arg1) step (%arg2, %arg2, %arg2) {
// CHECK-NEXT:      "test.use"(%[[K]], %[[J]], %[[I]]) : (index, index, index) -> ()
// CHECK-NEXT:    }
func.func @parallel_generic_input(%lb: index, %ub: index, %s: index) {
  "loop.parallel"(%lb, %lb, %lb, %ub, %ub, %ub, %s, %s, %s) <{operandSegmentSizes = array<i32: 3, 3, 3>}> ({
  ^bb0(%i: index, %j: index, %k: index):
    "test.use"(%k, %j, %i) : (index, index, index) -> ()
    "loop.yield"() : () -> ()
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  return
}
