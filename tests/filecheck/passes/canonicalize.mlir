// RUN: irkit-opt %s -p canonicalize --allow-unregistered-dialect --split-input-file | FileCheck %s
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3 region-simplify=false}))' --allow-unregistered-dialect --split-input-file | FileCheck %s --check-prefix=NOSIMPLIFY

// What the driver does for every dialect: fold, hoist and deduplicate constants, move
// constants to the right of commutative ops, erase dead pure ops. The per-dialect folds and
// patterns are tested in tests/filecheck/dialects/<dialect>/canonicalize.mlir.

// Folded results become one constant per value, at the top of the function.
// CHECK-LABEL: func.func @fold_and_dedup
func.func @fold_and_dedup(%a: i32) -> (i32, i32, i32) {
  // CHECK-NEXT: [[C5:%.*]] = arith.constant 5 : i32
  // CHECK-NEXT: [[S:%.*]] = arith.addi %arg0, [[C5]] : i32
  // CHECK-NEXT: return [[C5]], [[S]], [[C5]]
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %0 = arith.addi %c2, %c3 : i32
  %1 = arith.addi %a, %0 : i32
  %c5 = arith.constant 5 : i32
  return %0, %1, %c5 : i32, i32, i32
}

// A constant operand of a commutative op moves to the right.
// CHECK-LABEL: func.func @commutative_constant_right
func.func @commutative_constant_right(%a: f32) -> f32 {
  // CHECK: [[C:%.*]] = arith.constant 2.000000e+00 : f32
  // CHECK: arith.mulf %arg0, [[C]] : f32
  %c = arith.constant 2.0 : f32
  %0 = arith.mulf %c, %a : f32
  return %0 : f32
}

// Dead pure ops go, ops with effects stay.
// CHECK-LABEL: func.func @dead_code
func.func @dead_code(%a: f32) {
  // CHECK-NOT: math.exp
  // CHECK-NOT: arith.addf
  // CHECK: "test.effect"
  // CHECK-NEXT: return
  %0 = math.exp %a : f32
  %1 = arith.addf %0, %0 : f32
  "test.effect"() : () -> ()
  return
}

// Folding to an existing value: x * 1.0 is x, and the constant dies with it.
// CHECK-LABEL: func.func @fold_to_value
func.func @fold_to_value(%a: f32) -> f32 {
  // CHECK-NEXT: return %arg0 : f32
  %one = arith.constant 1.0 : f32
  %0 = arith.mulf %a, %one : f32
  return %0 : f32
}

// An unregistered op might be isolated from above, so constants inside its regions stay
// there (they are deduplicated within that region only).
// CHECK-LABEL: func.func @unregistered_region
func.func @unregistered_region(%a: i64) -> i64 {
  // CHECK-NEXT: [[C:%.*]] = arith.constant 4 : i64
  // CHECK-NEXT: "test.region"() ({
  // CHECK-NEXT:   [[IN:%.*]] = arith.constant 4 : i64
  // CHECK-NEXT:   "test.use"([[IN]], [[IN]])
  // CHECK: arith.addi %arg0, [[C]]
  "test.region"() ({
    %c = arith.constant 4 : i64
    %d = arith.constant 4 : i64
    "test.use"(%c, %d) : (i64, i64) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  %c4 = arith.constant 4 : i64
  %0 = arith.addi %a, %c4 : i64
  return %0 : i64
}

// -----

// Blocks unreachable from the entry are erased when region-simplify is on.
// CHECK-LABEL: func.func @unreachable
// CHECK-NOT: ^bb2
// CHECK-NOT: "test.dead"
// NOSIMPLIFY-LABEL: func.func @unreachable
// NOSIMPLIFY: "test.dead"
func.func @unreachable(%a: i32) -> i32 {
  "test.br"()[^bb1] : () -> ()
^bb1:
  return %a : i32
^bb2:
  "test.dead"() : () -> ()
  "test.br"()[^bb1] : () -> ()
}
