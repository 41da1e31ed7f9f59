// RUN: irkit-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic \
// RUN:   | irkit-opt --allow-unregistered-dialect | FileCheck %s

// Function forms MLIR accepts and irkit once rejected. Without argument names (or without
// arguments) a function's body is an ordinary region: its entry block may have a label and
// declare the arguments. Printed, they are the usual named form (mlir-opt prints this file
// the same way; tests/unit/test_mlir_conformance.py also has it read irkit's output).

// CHECK-LABEL: func.func @entry_label() {
// CHECK-NEXT:    return
// CHECK-NEXT:  }
func.func @entry_label() {
^bb0:
  return
}

// CHECK-LABEL: func.func @unnamed(
// CHECK-SAME:      %[[A:.*]]: f32, %[[B:.*]]: f32) -> f32 {
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:    return %[[S]] : f32
func.func @unnamed(f32, f32) -> f32 {
^bb0(%a: f32, %b: f32):
  %0 = arith.addf %a, %b : f32
  return %0 : f32
}

// Any label will do, and more blocks may follow.
// CHECK-LABEL: func.func @unnamed_cfg(
// CHECK-SAME:      %[[C:.*]]: i1) -> i32 {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    "test.cond_br"(%[[C]])[^bb1, ^bb2] : (i1) -> ()
// CHECK-NEXT:  ^bb1:  // pred: ^bb0
// CHECK-NEXT:    return %[[ONE]] : i32
// CHECK-NEXT:  ^bb2:  // pred: ^bb0
// CHECK-NEXT:    return %[[ONE]] : i32
func.func @unnamed_cfg(i1) -> i32 {
^entry(%c: i1):
  %0 = arith.constant 1 : i32
  "test.cond_br"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  return %0 : i32
^bb2:
  return %0 : i32
}
