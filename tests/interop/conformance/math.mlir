// RUN: mlir-opt %s -split-input-file
//
// math in custom form: elementwise functions on scalars, vectors and tensors, with and
// without fastmath flags; the constant chunks are what canonicalize folds in both tools.
// Input of bench/mlir_conformance.py.

func.func @transcendental(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.log %x : f32
  %2 = math.sin %x fastmath<afn> : f32
  %3 = math.cos %x : f32
  %4 = math.tanh %x : f32
  %5 = math.sqrt %x : f32
  %6 = math.rsqrt %x : f32
  %7 = math.erf %x : f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

func.func @rounding(%x: f64) -> (f64, f64, f64, f64, f64, f64) {
  %0 = math.absf %x : f64
  %1 = math.ceil %x : f64
  %2 = math.floor %x : f64
  %3 = math.round %x : f64
  %4 = math.roundeven %x : f64
  %5 = math.trunc %x : f64
  return %0, %1, %2, %3, %4, %5 : f64, f64, f64, f64, f64, f64
}

// -----

func.func @binary(%x: f32, %y: f32, %z: f32) -> (f32, f32, f32, f32) {
  %0 = math.powf %x, %y : f32
  %1 = math.atan2 %x, %y : f32
  %2 = math.copysign %x, %y : f32
  %3 = math.fma %x, %y, %z : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

func.func @integer(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32) {
  %0 = math.absi %a : i32
  %1 = math.ctlz %a : i32
  %2 = math.cttz %a : i32
  %3 = math.ctpop %a : i32
  %c3 = arith.constant 3 : i32
  %4 = math.ipowi %b, %c3 : i32
  return %0, %1, %2, %3, %4 : i32, i32, i32, i32, i32
}

// -----

func.func @shaped(%v: vector<4xf32>, %t: tensor<2x2xf64>) -> (vector<4xf32>, tensor<2x2xf64>, vector<4xi1>) {
  %0 = math.exp2 %v : vector<4xf32>
  %1 = math.log1p %t : tensor<2x2xf64>
  %2 = math.isnan %v : vector<4xf32>
  return %0, %1, %2 : vector<4xf32>, tensor<2x2xf64>, vector<4xi1>
}

// -----

// Constant operands: both canonicalizers fold these to constants.
func.func @folds() -> (f32, f64, i32, f32, f32, i32) {
  %c4 = arith.constant 4.0 : f32
  %c2 = arith.constant 2.0 : f64
  %cm5 = arith.constant -5 : i32
  %cneg = arith.constant -2.5 : f32
  %0 = math.sqrt %c4 : f32
  %1 = math.log2 %c2 : f64
  %2 = math.absi %cm5 : i32
  %3 = math.absf %cneg : f32
  %4 = math.floor %cneg : f32
  %5 = math.ctpop %cm5 : i32
  return %0, %1, %2, %3, %4, %5 : f32, f64, i32, f32, f32, i32
}

// -----

func.func @fpowi(%x: f32, %n: i32) -> f32 {
  %0 = math.fpowi %x, %n : f32, i32
  return %0 : f32
}

// -----

// math.clampf (issue 17, defect 6: valid MLIR irkit rejected).
func.func @clamp(%x: f32, %lo: f32, %hi: f32) -> f32 {
  %0 = math.clampf %x to [%lo, %hi] : f32
  return %0 : f32
}
