// RUN: mlir-opt %s -split-input-file -allow-unregistered-dialect -cse
//
// cse: identical pure ops, commutative operands, attributes that make ops differ, ops with
// effects, nested regions and dominance. Input of bench/mlir_conformance.py.

func.func @duplicates(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
  %0 = arith.addi %a, %b : i32
  %1 = arith.addi %a, %b : i32
  %2 = arith.addi %b, %a : i32
  %3 = arith.muli %0, %1 : i32
  %4 = arith.muli %1, %0 : i32
  return %0, %2, %3, %4 : i32, i32, i32, i32
}

// -----

func.func @attributes_differ(%x: f32, %y: f32) -> (f32, f32, f32, i1, i1) {
  %0 = arith.addf %x, %y : f32
  %1 = arith.addf %x, %y fastmath<fast> : f32
  %2 = arith.addf %x, %y : f32
  %3 = arith.cmpf olt, %x, %y : f32
  %4 = arith.cmpf ogt, %y, %x : f32
  return %0, %1, %2, %3, %4 : f32, f32, f32, i1, i1
}

// -----

func.func @constants() -> (i32, i32, f32, f32, i64) {
  %0 = arith.constant 5 : i32
  %1 = arith.constant 5 : i32
  %2 = arith.constant 5.0 : f32
  %3 = arith.constant 5.0 : f32
  %4 = arith.constant 5 : i64
  return %0, %1, %2, %3, %4 : i32, i32, f32, f32, i64
}

// -----

func.func private @effect(i32) -> i32

func.func @calls_stay(%a: i32) -> (i32, i32) {
  %0 = func.call @effect(%a) : (i32) -> i32
  %1 = func.call @effect(%a) : (i32) -> i32
  return %0, %1 : i32, i32
}

// -----

func.func @unregistered_effects(%a: i32) -> (i32, i32) {
  %0 = "ext.read"(%a) : (i32) -> i32
  %1 = "ext.read"(%a) : (i32) -> i32
  return %0, %1 : i32, i32
}

// -----

func.func @into_regions(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %a, %c1 : i32
  %r = "ext.region"() ({
    %c1_0 = arith.constant 1 : i32
    %1 = arith.addi %a, %c1_0 : i32
    "ext.yield"(%1) : (i32) -> ()
  }) : () -> i32
  %2 = arith.addi %0, %r : i32
  return %2 : i32
}

// -----

// An unregistered op's region may be isolated from above: MLIR's CSE does not reuse an
// outer value inside it (issue 17, defect 3).
func.func @isolated_unknown(%a: i32) -> i32 {
  %c7 = arith.constant 7 : i32
  "ext.isolated"() ({
    %c7_0 = arith.constant 7 : i32
    "ext.use"(%c7_0) : (i32) -> ()
    "ext.end"() : () -> ()
  }) : () -> ()
  %0 = arith.addi %a, %c7 : i32
  return %0 : i32
}

// -----

func.func @siblings(%c: i1, %a: i32) -> i32 {
  %r = "ext.if"(%c) ({
    %0 = arith.muli %a, %a : i32
    "ext.yield"(%0) : (i32) -> ()
  }, {
    %0 = arith.muli %a, %a : i32
    "ext.yield"(%0) : (i32) -> ()
  }) : (i1) -> i32
  %1 = arith.muli %a, %a : i32
  %2 = arith.addi %r, %1 : i32
  return %2 : i32
}

// -----

func.func @dead_duplicates(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %a, %a : i32
  return %0 : i32
}
