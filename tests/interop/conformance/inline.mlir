// RUN: mlir-opt %s -split-input-file -inline='op-pipelines=func.func(canonicalize,cse)'
//
// inline with mlir-opt's pass-option syntax: private callees inlined and erased, public ones
// kept, recursion left alone, constants folded after inlining. Input of
// bench/mlir_conformance.py.

func.func @caller(%a: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %0 = call @scale(%a, %c2) : (i32, i32) -> i32
  %1 = call @scale(%0, %c2) : (i32, i32) -> i32
  return %1 : i32
}

func.func private @scale(%x: i32, %k: i32) -> i32 {
  %0 = arith.muli %x, %k : i32
  return %0 : i32
}

// -----

func.func @keeps_public(%x: f32) -> f32 {
  %0 = call @public_square(%x) : (f32) -> f32
  return %0 : f32
}

func.func @public_square(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  return %0 : f32
}

// -----

func.func @chain(%x: i64) -> i64 {
  %0 = call @a(%x) : (i64) -> i64
  return %0 : i64
}

func.func private @a(%x: i64) -> i64 {
  %0 = call @b(%x) : (i64) -> i64
  %c1 = arith.constant 1 : i64
  %1 = arith.addi %0, %c1 : i64
  return %1 : i64
}

func.func private @b(%x: i64) -> i64 {
  %c3 = arith.constant 3 : i64
  %0 = arith.muli %x, %c3 : i64
  return %0 : i64
}

// -----

func.func @recursive(%n: i32) -> i32 {
  %0 = call @self(%n) : (i32) -> i32
  return %0 : i32
}

func.func private @self(%n: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %m = arith.subi %n, %c1 : i32
  %0 = call @self(%m) : (i32) -> i32
  return %0 : i32
}

// -----

func.func @constant_arguments() -> (i32, f32) {
  %c5 = arith.constant 5 : i32
  %h = arith.constant 0.5 : f32
  %0 = call @poly(%c5) : (i32) -> i32
  %1 = call @half_plus(%h) : (f32) -> f32
  return %0, %1 : i32, f32
}

func.func private @poly(%x: i32) -> i32 {
  %0 = arith.muli %x, %x : i32
  %1 = arith.addi %0, %x : i32
  return %1 : i32
}

func.func private @half_plus(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}

// -----

func.func private @declared(i32) -> i32

func.func @declaration_stays(%a: i32) -> i32 {
  %0 = call @declared(%a) : (i32) -> i32
  return %0 : i32
}
