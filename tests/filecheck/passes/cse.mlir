// RUN: irkit-opt %s -p cse --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s -p cse --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func.func @duplicates
func.func @duplicates(%a: f32, %b: f32) -> (f32, f32) {
  // CHECK: [[X:%.*]] = arith.addf %arg0, %arg1 : f32
  // CHECK-NOT: arith.addf
  // CHECK: return [[X]], [[X]] : f32, f32
  %0 = arith.addf %a, %b : f32
  %1 = arith.addf %a, %b : f32
  return %0, %1 : f32, f32
}

// Commutative operands are a multiset: b + a is a + b.
// CHECK-LABEL: func.func @commutative
func.func @commutative(%a: i32, %b: i32) -> (i32, i32) {
  // CHECK: [[X:%.*]] = arith.muli %arg0, %arg1 : i32
  // CHECK-NOT: arith.muli
  // CHECK: return [[X]], [[X]]
  %0 = arith.muli %a, %b : i32
  %1 = arith.muli %b, %a : i32
  return %0, %1 : i32, i32
}

// Not commutative: a - b and b - a both stay.
// CHECK-LABEL: func.func @not_commutative
func.func @not_commutative(%a: i32, %b: i32) -> (i32, i32) {
  // CHECK: arith.subi %arg0, %arg1
  // CHECK: arith.subi %arg1, %arg0
  %0 = arith.subi %a, %b : i32
  %1 = arith.subi %b, %a : i32
  return %0, %1 : i32, i32
}

// Different properties (fastmath flags, predicates) keep ops apart.
// CHECK-LABEL: func.func @different_properties
func.func @different_properties(%a: f32, %b: f32) -> (f32, f32, i1, i1) {
  // CHECK: arith.addf %arg0, %arg1 : f32
  // CHECK: arith.addf %arg0, %arg1 fastmath<fast> : f32
  // CHECK: arith.cmpf olt
  // CHECK: arith.cmpf ogt
  %0 = arith.addf %a, %b : f32
  %1 = arith.addf %a, %b fastmath<fast> : f32
  %2 = arith.cmpf olt, %a, %b : f32
  %3 = arith.cmpf ogt, %a, %b : f32
  return %0, %1, %2, %3 : f32, f32, i1, i1
}

// Constants are pure ops like any other.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (i32, i32) {
  // CHECK: [[C:%.*]] = arith.constant 7 : i32
  // CHECK-NOT: arith.constant
  // CHECK: return [[C]], [[C]]
  %0 = arith.constant 7 : i32
  %1 = arith.constant 7 : i32
  return %0, %1 : i32, i32
}

// Ops with side effects (unregistered ops are assumed to have them) are never merged.
// CHECK-LABEL: func.func @side_effects
func.func @side_effects() -> (i32, i32) {
  // CHECK: "test.read"()
  // CHECK: "test.read"()
  %0 = "test.read"() : () -> i32
  %1 = "test.read"() : () -> i32
  return %0, %1 : i32, i32
}

// An op inside a nested region reuses a dominating op from outside it...
// CHECK-LABEL: func.func @nested_uses_outer
func.func @nested_uses_outer(%a: f32) {
  // CHECK: [[X:%.*]] = math.exp %arg0
  %0 = math.exp %a : f32
  // CHECK: "test.region"() ({
  "test.region"() ({
    // CHECK-NOT: math.exp
    // CHECK: "test.use"([[X]])
    %1 = math.exp %a : f32
    "test.use"(%1) : (f32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// ...but an op outside is never replaced by one defined inside a region (it does not
// dominate), and two sibling regions do not share.
// CHECK-LABEL: func.func @sibling_regions
func.func @sibling_regions(%a: f32) -> f32 {
  // CHECK: "test.region"() ({
  // CHECK-NEXT: math.sqrt
  // CHECK: "test.region"() ({
  // CHECK-NEXT: math.sqrt
  // CHECK: [[OUT:%.*]] = math.sqrt %arg0
  // CHECK: return [[OUT]]
  "test.region"() ({
    %1 = math.sqrt %a : f32
    "test.use"(%1) : (f32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  "test.region"() ({
    %2 = math.sqrt %a : f32
    "test.use"(%2) : (f32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  %3 = math.sqrt %a : f32
  return %3 : f32
}

// Functions are isolated from above: each starts with an empty table.
// CHECK-LABEL: func.func @isolated_a
// CHECK: arith.constant 3 : i64
// CHECK-LABEL: func.func @isolated_b
// CHECK: arith.constant 3 : i64
func.func @isolated_a() -> i64 {
  %0 = arith.constant 3 : i64
  return %0 : i64
}
func.func @isolated_b() -> i64 {
  %0 = arith.constant 3 : i64
  return %0 : i64
}

// In a multi-block region only dominating blocks' ops are reused: ^bb1 and ^bb2 each keep
// their own negf (neither dominates the other), the one in ^bb3 reuses the entry block's.
// CHECK-LABEL: func.func @dominance
func.func @dominance(%a: f32, %c: i1) -> f32 {
  // CHECK: [[E:%.*]] = math.absf %arg0
  %0 = math.absf %a : f32
  "test.cond_br"(%c)[^bb1, ^bb2] : (i1) -> ()
^bb1:
  // CHECK: ^bb1:
  // CHECK-NEXT: arith.negf %arg0
  %1 = arith.negf %a : f32
  "test.br"(%1)[^bb3] : (f32) -> ()
^bb2:
  // CHECK: ^bb2:
  // CHECK-NEXT: arith.negf %arg0
  %2 = arith.negf %a : f32
  "test.br"(%2)[^bb3] : (f32) -> ()
^bb3(%x: f32):
  // CHECK: ^bb3([[X:%.*]]: f32):
  // CHECK-NOT: math.absf
  // CHECK: arith.addf [[X]], [[E]]
  %3 = math.absf %a : f32
  %4 = arith.addf %x, %3 : f32
  return %4 : f32
}
