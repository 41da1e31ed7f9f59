// RUN: mlir-opt %s -split-input-file -canonicalize=test-convergence
//
// canonicalize: identities, constant folding, pattern rewrites, one family a chunk; a chunk
// may hold look-alikes that must stay (float identities that -0.0 or NaN would break).
// Input of bench/mlir_conformance.py, which compares the op counts and results of both tools.

func.func @integer_identities(%x: i32, %y: i32) -> (i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %cm1 = arith.constant -1 : i32
  %0 = arith.addi %x, %c0 : i32
  %1 = arith.muli %c1, %y : i32
  %2 = arith.subi %x, %x : i32
  %3 = arith.andi %y, %cm1 : i32
  %4 = arith.xori %x, %x : i32
  %5 = arith.ori %y, %c0 : i32
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, i32, i32
}

// -----

func.func @constant_chains(%x: i64) -> (i64, i64) {
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c5 = arith.constant 5 : i64
  %0 = arith.addi %x, %c1 : i64
  %1 = arith.addi %0, %c2 : i64
  %2 = arith.subi %1, %c5 : i64
  %3 = arith.muli %x, %c2 : i64
  %4 = arith.muli %3, %c5 : i64
  return %2, %4 : i64, i64
}

// -----

func.func @constant_folding() -> (i32, i8, i1, f32, i32, i16) {
  %a = arith.constant 7 : i32
  %b = arith.constant -3 : i32
  %big = arith.constant 127 : i8
  %one = arith.constant 1 : i8
  %x = arith.constant 1.5 : f32
  %0 = arith.divsi %a, %b : i32
  %1 = arith.addi %big, %one : i8
  %2 = arith.cmpi slt, %b, %a : i32
  %3 = arith.mulf %x, %x : f32
  %4 = arith.floordivsi %a, %b : i32
  %5 = arith.trunci %a : i32 to i16
  return %0, %1, %2, %3, %4, %5 : i32, i8, i1, f32, i32, i16
}

// -----

func.func @casts(%a: i16, %i: index) -> (i16, i32, i16, index) {
  %0 = arith.extsi %a : i16 to i32
  %1 = arith.trunci %0 : i32 to i16
  %2 = arith.extui %a : i16 to i64
  %3 = arith.trunci %2 : i64 to i32
  %4 = arith.extsi %a : i16 to i32
  %5 = arith.extsi %4 : i32 to i64
  %6 = arith.trunci %5 : i64 to i16
  %7 = arith.index_cast %i : index to i64
  %8 = arith.index_cast %7 : i64 to index
  return %1, %3, %6, %8 : i16, i32, i16, index
}

// -----

func.func @compare_and_select(%x: i32, %y: i32, %c: i1) -> (i1, i1, i32, i32, i32) {
  %t = arith.constant true
  %0 = arith.cmpi eq, %x, %x : i32
  %1 = arith.cmpi ult, %y, %y : i32
  %2 = arith.select %t, %x, %y : i32
  %3 = arith.select %c, %y, %y : i32
  %4 = arith.select %0, %x, %y : i32
  return %0, %1, %2, %3, %4 : i1, i1, i32, i32, i32
}

// -----

func.func @floats(%x: f32) -> (f32, f32, f32, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %nzero = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = arith.mulf %x, %one : f32
  %1 = arith.addf %x, %nzero : f32
  %2 = arith.addf %x, %zero : f32
  %3 = arith.negf %x : f32
  %4 = arith.negf %3 : f32
  %5 = arith.divf %x, %one : f32
  return %0, %1, %2, %4, %5 : f32, f32, f32, f32, f32
}

// -----

func.func @shaped(%v: vector<4xi32>, %t: tensor<3xf32>) -> (vector<4xi32>, tensor<3xf32>, vector<4xi32>) {
  %z = arith.constant dense<0> : vector<4xi32>
  %one = arith.constant dense<1.0> : tensor<3xf32>
  %c2 = arith.constant dense<2> : vector<4xi32>
  %c3 = arith.constant dense<3> : vector<4xi32>
  %0 = arith.addi %v, %z : vector<4xi32>
  %1 = arith.mulf %t, %one : tensor<3xf32>
  %2 = arith.muli %c2, %c3 : vector<4xi32>
  return %0, %1, %2 : vector<4xi32>, tensor<3xf32>, vector<4xi32>
}

// -----

func.func @dead_code(%x: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %0 = arith.muli %x, %c3 : i32
  %1 = arith.addi %0, %x : i32
  %2 = math.absi %x : i32
  return %x : i32
}

// -----

func.func @wide_integers(%x: i128) -> (i128, i128) {
  %a = arith.constant 170141183460469231731687303715884105727 : i128
  %b = arith.constant 1 : i128
  %0 = arith.addi %a, %b : i128
  %1 = arith.addi %x, %0 : i128
  return %0, %1 : i128, i128
}
