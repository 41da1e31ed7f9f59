// RUN: irkit-opt %s | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s

// math.clampf, which MLIR has and irkit once rejected, in MLIR's syntax (the CHECK lines are
// mlir-opt's printing of this file; tests/unit/test_mlir_conformance.py has mlir-opt read
// irkit's output and checks the interpreter's clamp).

// CHECK-LABEL: func.func @clampf(
// CHECK-SAME:      %[[X:.*]]: f32, %[[LO:.*]]: f32, %[[HI:.*]]: f32, %[[V:.*]]: vector<4xf16>)
// CHECK-NEXT:    math.clampf %[[X]] to [%[[LO]], %[[HI]]] : f32
// CHECK-NEXT:    math.clampf %[[X]] to [%[[LO]], %[[HI]]] fastmath<nnan,ninf> : f32
// CHECK-NEXT:    math.clampf %[[V]] to [%[[V]], %[[V]]] : vector<4xf16>
// GENERIC:       "math.clampf"(%arg0, %arg1, %arg2) <{fastmath = #arith.fastmath<none>}> : (f32, f32, f32) -> f32
// GENERIC:       "math.clampf"(%arg0, %arg1, %arg2) <{fastmath = #arith.fastmath<nnan,ninf>}> : (f32, f32, f32) -> f32
func.func @clampf(%x: f32, %lo: f32, %hi: f32, %v: vector<4xf16>) -> (f32, f32, vector<4xf16>) {
  %0 = math.clampf %x to [%lo, %hi] : f32
  %1 = math.clampf %x to [%lo, %hi] fastmath<nnan,ninf> : f32
  %2 = math.clampf %v to [%v, %v] : vector<4xf16>
  return %0, %1, %2 : f32, f32, vector<4xf16>
}
