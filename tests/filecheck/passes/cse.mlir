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
func.func @nested_uses_outer(%a: f32, %c: i1) -> f32 {
  // CHECK: [[X:%.*]] = math.exp %arg0
  %0 = math.exp %a : f32
  // CHECK: loop.if
  loop.if %c {
    // CHECK-NOT: math.exp
    // CHECK: "test.use"([[X]])
    %1 = math.exp %a : f32
    "test.use"(%1) : (f32) -> ()
  }
  return %0 : f32
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
  "test.use"(%0) : (f32) -> ()
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

// The regions of an unregistered op may be isolated from above (MLIR assumes the worst of an
// op it does not know), so no value defined outside is ever made a use inside: the inner
// exp stays, though equal ops inside still merge among themselves.
// CHECK-LABEL: func.func @unregistered_region_may_be_isolated
func.func @unregistered_region_may_be_isolated(%a: f32) -> f32 {
  // CHECK: [[X:%.*]] = math.exp %arg0
  %0 = math.exp %a : f32
  // CHECK: "test.isolated"() ({
  // CHECK-NEXT: [[Y:%.*]] = math.exp %arg0
  // CHECK-NEXT: "test.use"([[Y]], [[Y]])
  "test.isolated"() ({
    %1 = math.exp %a : f32
    %2 = math.exp %a : f32
    "test.use"(%1, %2) : (f32, f32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  // CHECK: return [[X]]
  return %0 : f32
}

// Its blocks still follow dominance: ^bb1 and ^bb2 keep their own exp, ^bb3's two merge.
// CHECK-LABEL: func.func @unregistered_region_has_dominance
func.func @unregistered_region_has_dominance(%a: f32, %c: i1) {
  "test.cfg"() ({
    "test.cond_br"(%c)[^bb1, ^bb2] : (i1) -> ()
  // CHECK: ^bb1:
  // CHECK-NEXT: [[B1:%.*]] = math.exp %arg0
  // CHECK-NEXT: "test.use"([[B1]])
  ^bb1:
    %1 = math.exp %a : f32
    "test.use"(%1) : (f32) -> ()
    "test.br"()[^bb3] : () -> ()
  // CHECK: ^bb2:
  // CHECK-NEXT: [[B2:%.*]] = math.exp %arg0
  // CHECK-NEXT: "test.use"([[B2]])
  ^bb2:
    %2 = math.exp %a : f32
    "test.use"(%2) : (f32) -> ()
    "test.br"()[^bb3] : () -> ()
  // CHECK: ^bb3:
  // CHECK-NEXT: [[B3:%.*]] = math.exp %arg0
  // CHECK-NEXT: "test.use"([[B3]], [[B3]])
  ^bb3:
    %3 = math.exp %a : f32
    %4 = math.exp %a : f32
    "test.use"(%3, %4) : (f32, f32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// As MLIR's CSE does, ops found trivially dead when the walk reaches them (pure, no result
// used, not a terminator) are erased: the sqrt and the mulf. The addf is still used by the
// mulf when it is reached, so it stays, as in MLIR (`dce` removes whole dead chains). Ops
// with effects stay.
// CHECK-LABEL: func.func @trivially_dead
// CHECK-NEXT: arith.addf %arg0, %arg0 : f32
// CHECK-NEXT: "test.read"()
// CHECK-NEXT: return %arg0 : f32
func.func @trivially_dead(%a: f32) -> f32 {
  %0 = math.sqrt %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %1, %a : f32
  %3 = "test.read"() : () -> f32
  return %a : f32
}

// A duplicate of a dead op is not merged into it: the dead one is erased first and the
// second, now the first of its kind, is the one that stays.
// CHECK-LABEL: func.func @dead_then_duplicate
// CHECK-NEXT: [[N:%.*]] = arith.negf %arg0
// CHECK-NEXT: return [[N]]
func.func @dead_then_duplicate(%a: f32) -> f32 {
  %0 = arith.negf %a : f32
  %1 = arith.negf %a : f32
  return %1 : f32
}
