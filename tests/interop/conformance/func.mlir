// RUN: mlir-opt %s -split-input-file
//
// func: definitions and declarations, visibility, calls, indirect calls, argument and result
// attributes, several results, the unnamed-argument form. Input of bench/mlir_conformance.py.

func.func private @decl(i32) -> i32
func.func nested @nested_decl()

func.func @calls(%a: i32) -> i32 {
  %0 = call @decl(%a) : (i32) -> i32
  %1 = func.call @twice(%0) : (i32) -> i32
  return %1 : i32
}

func.func @twice(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}

// -----

func.func @indirect(%x: f32) -> f32 {
  %f = func.constant @square : (f32) -> f32
  %0 = func.call_indirect %f(%x) : (f32) -> f32
  return %0 : f32
}

func.func private @square(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  return %0 : f32
}

// -----

func.func @attrs(%a: i32 {ext.name = "a"}, %b: f32 {other.flag}) -> (i32 {ext.out})
    attributes {ext.kind = "entry"} {
  return %a : i32
}

// -----

func.func @several(%a: i64, %b: i64) -> (i64, i64, i1) {
  %lo = arith.minsi %a, %b : i64
  %hi = arith.maxsi %a, %b : i64
  %eq = arith.cmpi eq, %lo, %hi : i64
  return %lo, %hi, %eq : i64, i64, i1
}

// -----

func.func @no_results(%a: i32) {
  return
}

func.func @calls_no_results(%a: i32) -> i32 {
  call @no_results(%a) : (i32) -> ()
  return %a : i32
}

// -----

// An entry block label on a function without arguments (issue 17, defect 6).
func.func @label_no_args() -> i32 {
^bb0:
  %0 = arith.constant 1 : i32
  return %0 : i32
}

// -----

// The unnamed-argument form with an explicit entry block (issue 17, defect 6).
func.func @unnamed(f32, f32) -> f32 {
^bb0(%a: f32, %b: f32):
  %0 = arith.addf %a, %b : f32
  return %0 : f32
}
