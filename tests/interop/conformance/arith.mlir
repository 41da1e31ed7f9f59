// RUN: mlir-opt %s -split-input-file -allow-unregistered-dialect
//
// arith in custom form, one concern a chunk: integer and float ops on scalars, vectors and
// tensors, comparisons, casts, select, constants of many types, overflow and fastmath flags.
// Input of bench/mlir_conformance.py, which runs every chunk through mlir-opt and irkit-opt.

func.func @integer(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32) {
  %c3 = arith.constant 3 : i32
  %0 = arith.addi %a, %b : i32
  %1 = arith.subi %0, %c3 overflow<nsw> : i32
  %2 = arith.muli %1, %b overflow<nsw, nuw> : i32
  %3 = arith.andi %2, %a : i32
  %4 = arith.ori %3, %b : i32
  %5 = arith.xori %4, %c3 : i32
  %6 = arith.maxsi %5, %a : i32
  %7 = arith.minui %6, %b : i32
  %8 = arith.shli %7, %c3 : i32
  %9 = arith.shrsi %8, %c3 : i32
  %10 = arith.shrui %9, %c3 : i32
  return %0, %2, %5, %7, %9, %10 : i32, i32, i32, i32, i32, i32
}

// -----

func.func @division(%a: i64) -> (i64, i64, i64, i64, i64, i64) {
  %c7 = arith.constant 7 : i64
  %0 = arith.divsi %a, %c7 : i64
  %1 = arith.divui %a, %c7 : i64
  %2 = arith.remsi %a, %c7 : i64
  %3 = arith.remui %a, %c7 : i64
  %4 = arith.ceildivsi %a, %c7 : i64
  %5 = arith.floordivsi %a, %c7 : i64
  return %0, %1, %2, %3, %4, %5 : i64, i64, i64, i64, i64, i64
}

// -----

func.func @floats(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32) {
  %0 = arith.addf %x, %y : f32
  %1 = arith.subf %0, %y fastmath<nnan, ninf> : f32
  %2 = arith.mulf %1, %x fastmath<fast> : f32
  %3 = arith.divf %2, %y : f32
  %4 = arith.remf %3, %y : f32
  %5 = arith.negf %4 : f32
  %6 = arith.maximumf %5, %x : f32
  %7 = arith.minnumf %6, %y : f32
  return %0, %3, %5, %6, %7 : f32, f32, f32, f32, f32
}

// -----

func.func @compare(%a: i16, %b: i16, %x: f64, %y: f64) -> (i1, i1, i1, i1, i1, i1) {
  %0 = arith.cmpi slt, %a, %b : i16
  %1 = arith.cmpi uge, %a, %b : i16
  %2 = arith.cmpi ne, %a, %b : i16
  %3 = arith.cmpf olt, %x, %y : f64
  %4 = arith.cmpf une, %x, %y : f64
  %5 = arith.cmpf ord, %x, %y : f64
  return %0, %1, %2, %3, %4, %5 : i1, i1, i1, i1, i1, i1
}

// -----

func.func @casts(%a: i8, %x: f32, %i: index) -> (i32, i32, i4, f64, f16, i32, f32, index, i32) {
  %0 = arith.extsi %a : i8 to i32
  %1 = arith.extui %a : i8 to i32
  %2 = arith.trunci %a : i8 to i4
  %3 = arith.extf %x : f32 to f64
  %4 = arith.truncf %x : f32 to f16
  %5 = arith.fptosi %x : f32 to i32
  %6 = arith.sitofp %a : i8 to f32
  %7 = arith.index_cast %0 : i32 to index
  %8 = arith.bitcast %x : f32 to i32
  %9 = arith.index_castui %i : index to i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %9 : i32, i32, i4, f64, f16, i32, f32, index, i32
}

// -----

func.func @select(%c: i1, %a: i32, %b: i32, %v: vector<4xi1>, %x: vector<4xf32>,
                  %y: vector<4xf32>) -> (i32, vector<4xf32>, vector<4xf32>) {
  %0 = arith.select %c, %a, %b : i32
  %1 = arith.select %v, %x, %y : vector<4xi1>, vector<4xf32>
  %2 = arith.select %c, %x, %y : vector<4xf32>
  return %0, %1, %2 : i32, vector<4xf32>, vector<4xf32>
}

// -----

func.func @shaped(%t: tensor<2x3xi32>, %u: tensor<2x3xi32>, %v: vector<8xf32>) -> (tensor<2x3xi32>, tensor<2x3xi1>, vector<8xf32>) {
  %0 = arith.addi %t, %u : tensor<2x3xi32>
  %1 = arith.cmpi sgt, %0, %u : tensor<2x3xi32>
  %c = arith.constant dense<2.5> : vector<8xf32>
  %2 = arith.mulf %v, %c : vector<8xf32>
  return %0, %1, %2 : tensor<2x3xi32>, tensor<2x3xi1>, vector<8xf32>
}

// -----

func.func @constants() -> (i1, i8, i64, index, f16, bf16, f64, tensor<3xi32>, vector<2xf32>) {
  %0 = arith.constant true
  %1 = arith.constant -128 : i8
  %2 = arith.constant 9223372036854775807 : i64
  %3 = arith.constant 42 : index
  %4 = arith.constant 6.5e-3 : f16
  %5 = arith.constant -2.5 : bf16
  %6 = arith.constant 0x7FF0000000000000 : f64
  %7 = arith.constant dense<[1, -2, 3]> : tensor<3xi32>
  %8 = arith.constant dense<[0.5, 1.0e+10]> : vector<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : i1, i8, i64, index, f16, bf16, f64, tensor<3xi32>, vector<2xf32>
}

// -----

// Wide results (issue 17, defect 6: valid MLIR irkit rejected).
func.func @extended(%a: i32, %b: i32) -> (i32, i1, i32, i32) {
  %sum, %overflow = arith.addui_extended %a, %b : i32, i1
  %low, %high = arith.mulsi_extended %a, %b : i32
  return %sum, %overflow, %low, %high : i32, i1, i32, i32
}

// -----

// Unregistered ops next to arith, under -allow-unregistered-dialect.
func.func @mixed(%a: i32) -> i32 {
  %0 = "ext.source"() : () -> i32
  %1 = arith.addi %a, %0 : i32
  "ext.sink"(%1) {note = "kept"} : (i32) -> ()
  return %1 : i32
}
