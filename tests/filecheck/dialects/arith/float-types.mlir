// RUN: irkit-opt %s | FileCheck %s
// RUN: irkit-opt %s -p canonicalize | FileCheck %s --check-prefixes=FOLD,IRKIT

// Every float type MLIR 22 has: parsed, printed as mlir-opt prints it (six-digit scientific
// when that reads back exactly, else APFloat's shortest exact form, else the hex bits), and
// folded as mlir-opt's canonicalize folds it. The CHECK and FOLD lines are mlir-opt's own
// output (tests/unit/test_float_types.py replays both RUN lines with mlir-opt where it is
// installed); IRKIT lines are where irkit deliberately differs, each with the reason.

// CHECK-LABEL: func.func @every_type
// CHECK: arith.constant 1.500000e+00 : f16
// CHECK: arith.constant 5.960460e-08 : f16
// CHECK: arith.constant 6.550400e+04 : f16
// CHECK: arith.constant 1.000980e-01 : bf16
// CHECK: arith.constant 9.183550e-41 : bf16
// CHECK: arith.constant 9.997550e-02 : tf32
// CHECK: arith.constant 0x7FC00 : tf32
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: arith.constant 0x4B800000 : f32
// CHECK: arith.constant 1.000000e-01 : f64
// CHECK: arith.constant 4.940660e-324 : f64
// CHECK: arith.constant 1.00000000000000000011 : f80
// CHECK: arith.constant 3.645200e-4951 : f80
// CHECK: arith.constant 0xFFFF8000000000000000 : f80
// CHECK: arith.constant 1.50000000000000000000000000000000019 : f128
// CHECK: arith.constant 0x7FFF0000000000000000000000000000 : f128
// CHECK: arith.constant 0x7C : f8E5M2
// CHECK: arith.constant 1.525880e-05 : f8E5M2
// CHECK: arith.constant 1.015630e-01 : f8E4M3
// CHECK: arith.constant 0x7F : f8E3M4
// CHECK: arith.constant 4.480000e+02 : f8E4M3FN
// CHECK: arith.constant 0xFF : f8E4M3FN
// CHECK: arith.constant 0x80 : f8E5M2FNUZ
// CHECK: arith.constant 0.000000e+00 : f8E4M3FNUZ
// CHECK: arith.constant 1.220700e-04 : f8E4M3B11FNUZ
// CHECK: arith.constant 1.000000e+00 : f8E8M0FNU
// CHECK: arith.constant 5.877470e-39 : f8E8M0FNU
// CHECK: arith.constant 0xFF : f8E8M0FNU
// CHECK: arith.constant 2.800000e+01 : f6E3M2FN
// CHECK: arith.constant 7.500000e+00 : f6E2M3FN
// CHECK: arith.constant -6.000000e+00 : f4E2M1FN
// CHECK: arith.constant dense<[1.000000e+00, 2.500000e+00, 0x7F]> : tensor<3xf8E4M3FN>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
func.func @every_type() {
  %f16 = arith.constant 1.5 : f16
  %f16d = arith.constant 0x0001 : f16
  %f16m = arith.constant 65504.0 : f16
  %bf16 = arith.constant 0.1 : bf16
  %bf16d = arith.constant 0x0001 : bf16
  %tf32 = arith.constant 0.1 : tf32
  %tf32n = arith.constant 0x7FC00 : tf32
  %f32 = arith.constant 1.0e-5 : f32
  %f32i = arith.constant 16777216.0 : f32
  %f64 = arith.constant 0.1 : f64
  %f64d = arith.constant 0x0000000000000001 : f64
  // An f80 hex literal (this one ended in a struct.error traceback).
  %f80 = arith.constant 0x3FFF8000000000000001 : f80
  %f80d = arith.constant 0x00000000000000000001 : f80
  %f80i = arith.constant 0xFFFF8000000000000000 : f80
  %f128 = arith.constant 0x3FFF8000000000000000000000000001 : f128
  %f128i = arith.constant 0x7FFF0000000000000000000000000000 : f128
  %e5m2 = arith.constant 0x7C : f8E5M2
  %e5m2d = arith.constant 0x01 : f8E5M2
  %e4m3 = arith.constant 0.1 : f8E4M3
  %e3m4 = arith.constant 0x7F : f8E3M4
  %e4m3fn = arith.constant 448.0 : f8E4M3FN
  %e4m3fnn = arith.constant 0xFF : f8E4M3FN
  %e5m2fnuz = arith.constant 0x80 : f8E5M2FNUZ
  // No -0 in a NaN-as-negative-zero format: -0.0 is +0.
  %e4m3fnuz = arith.constant -0.0 : f8E4M3FNUZ
  %e4m3b11 = arith.constant 0x01 : f8E4M3B11FNUZ
  // Exponent only: 0.75 is a tie between 0.5 and 1.0, and the significand 1 is odd.
  %e8m0 = arith.constant 0.75 : f8E8M0FNU
  %e8m0z = arith.constant 0x00 : f8E8M0FNU
  %e8m0n = arith.constant 0xFF : f8E8M0FNU
  // Finite-only formats saturate.
  %e3m2 = arith.constant 100.0 : f6E3M2FN
  %e2m3 = arith.constant 0x1F : f6E2M3FN
  %e2m1 = arith.constant 0xF : f4E2M1FN
  // 1000.0 overflows f8E4M3FN, whose overflow is its NaN.
  %dense = arith.constant dense<[1.0, 2.5, 1000.0]> : tensor<3xf8E4M3FN>
  // MLIR's raw dense storage: two bytes a bf16.
  %densebf = arith.constant dense<"0x803F0040"> : tensor<2xbf16>
  return
}

// Signaling NaNs and NaN payloads print back as themselves.
// CHECK-LABEL: func.func @nan_payloads
// CHECK: arith.constant 0x7F800001 : f32
// CHECK: arith.constant 0xFFC00001 : f32
// CHECK: arith.constant 0x7F81 : bf16
// CHECK: arith.constant 0x7C01 : f16
// CHECK: arith.constant 0x7FF0000000000001 : f64
// CHECK: arith.constant 0x7FFF8000000000000001 : f80
// CHECK: arith.constant 0x7FFF0000000000000000000000000001 : f128
// CHECK: arith.constant 0x3FC01 : tf32
// CHECK: arith.constant 0x7D : f8E5M2
// CHECK: arith.constant dense<[0x7F800001, 0x7FC00002]> : tensor<2xf32>
// CHECK: arith.constant dense<0xFF81> : vector<4xbf16>
func.func @nan_payloads() {
  %a = arith.constant 0x7F800001 : f32
  %b = arith.constant 0xFFC00001 : f32
  %c = arith.constant 0x7F81 : bf16
  %d = arith.constant 0x7C01 : f16
  %e = arith.constant 0x7FF0000000000001 : f64
  %f = arith.constant 0x7FFF8000000000000001 : f80
  %g = arith.constant 0x7FFF0000000000000000000000000001 : f128
  %h = arith.constant 0x3FC01 : tf32
  %i = arith.constant 0x7D : f8E5M2
  %j = arith.constant dense<[0x7F800001, 0x7FC00002]> : tensor<2xf32>
  %k = arith.constant dense<0xFF81> : vector<4xbf16>
  return
}

// ----- bitcast folds to the exact bits ---------------------------------------------------

// FOLD-LABEL: func.func @bitcast_snan_f32
// FOLD: arith.constant 2139095041 : i32
// FOLD-NOT: arith.bitcast
func.func @bitcast_snan_f32() -> i32 {
  %s = arith.constant 0x7F800001 : f32
  %r = arith.bitcast %s : f32 to i32
  return %r : i32
}

// FOLD-LABEL: func.func @bitcast_snan_bf16
// FOLD: arith.constant 32641 : i16
// FOLD-NOT: arith.bitcast
func.func @bitcast_snan_bf16() -> i16 {
  %s = arith.constant 0x7F81 : bf16
  %r = arith.bitcast %s : bf16 to i16
  return %r : i16
}

// FOLD-LABEL: func.func @bitcast_snan_f16
// FOLD: arith.constant 31745 : i16
// FOLD-NOT: arith.bitcast
func.func @bitcast_snan_f16() -> i16 {
  %s = arith.constant 0x7C01 : f16
  %r = arith.bitcast %s : f16 to i16
  return %r : i16
}

// FOLD-LABEL: func.func @bitcast_f80
// FOLD: arith.constant 604453686435277732577281 : i80
// FOLD-NOT: arith.bitcast
func.func @bitcast_f80() -> i80 {
  %s = arith.constant 0x7FFF8000000000000001 : f80
  %r = arith.bitcast %s : f80 to i80
  return %r : i80
}

// FOLD-LABEL: func.func @bitcast_to_f8
// FOLD: arith.constant 0xFF : f8E4M3FN
// FOLD-NOT: arith.bitcast
func.func @bitcast_to_f8() -> f8E4M3FN {
  %i = arith.constant -1 : i8
  %r = arith.bitcast %i : i8 to f8E4M3FN
  return %r : f8E4M3FN
}

// FOLD-LABEL: func.func @bitcast_dense_snan
// FOLD: arith.constant dense<[2139095041, -8388606]> : tensor<2xi32>
// FOLD-NOT: arith.bitcast
func.func @bitcast_dense_snan() -> tensor<2xi32> {
  %s = arith.constant dense<[0x7F800001, 0xFF800002]> : tensor<2xf32>
  %r = arith.bitcast %s : tensor<2xf32> to tensor<2xi32>
  return %r : tensor<2xi32>
}

// ----- NaN rules of the folds (APFloat's) ------------------------------------------------

// An operation quiets a signaling NaN and keeps its payload.
// FOLD-LABEL: func.func @add_quiets_snan
// FOLD: arith.constant 0x7FC00001 : f32
// FOLD-NOT: arith.addf
func.func @add_quiets_snan() -> f32 {
  %s = arith.constant 0x7F800001 : f32
  %one = arith.constant 1.0 : f32
  %r = arith.addf %one, %s : f32
  return %r : f32
}

// The left NaN wins, even over a signaling one on the right.
// FOLD-LABEL: func.func @left_nan_wins
// FOLD: arith.constant 0x7FC00002 : f32
// FOLD-NOT: arith.mulf
func.func @left_nan_wins() -> f32 {
  %q = arith.constant 0x7FC00002 : f32
  %s = arith.constant 0xFF800003 : f32
  %r = arith.mulf %q, %s : f32
  return %r : f32
}

// x * 1.0 is x: the identity folds first, so the NaN stays signaling.
// FOLD-LABEL: func.func @identity_keeps_snan
// FOLD: arith.constant 0x7F800001 : f32
// FOLD-NOT: arith.mulf
func.func @identity_keeps_snan() -> f32 {
  %s = arith.constant 0x7F800001 : f32
  %one = arith.constant 1.0 : f32
  %r = arith.mulf %s, %one : f32
  return %r : f32
}

// FOLD-LABEL: func.func @negf_keeps_snan
// FOLD: arith.constant 0xFF800001 : f32
// FOLD-NOT: arith.negf
func.func @negf_keeps_snan() -> f32 {
  %s = arith.constant 0x7F800001 : f32
  %r = arith.negf %s : f32
  return %r : f32
}

// maxNum ignores a quiet NaN but not a signaling one.
// FOLD-LABEL: func.func @maxnumf_quiets_snan
// FOLD: arith.constant 0x7FC00001 : f32
// FOLD-NOT: arith.maxnumf
func.func @maxnumf_quiets_snan() -> f32 {
  %s = arith.constant 0x7F800001 : f32
  %one = arith.constant 1.0 : f32
  %r = arith.maxnumf %s, %one : f32
  return %r : f32
}

// FOLD-LABEL: func.func @invalid_gives_default_nan
// FOLD: arith.constant 0x7FC00000 : f32
// FOLD-NOT: arith.subf
func.func @invalid_gives_default_nan() -> f32 {
  %inf = arith.constant 0x7F800000 : f32
  %r = arith.subf %inf, %inf : f32
  return %r : f32
}

// FOLD-LABEL: func.func @extf_keeps_payload
// FOLD: arith.constant 0x7FF8040000000000 : f64
// FOLD-NOT: arith.extf
func.func @extf_keeps_payload() -> f64 {
  %q = arith.constant 0x7E01 : f16
  %r = arith.extf %q : f16 to f64
  return %r : f64
}

// Tensors follow the same rules lane by lane.
// FOLD-LABEL: func.func @dense_nan_lanes
// FOLD: arith.constant dense<[0x7FC00002, 0x7FC00004]> : vector<2xf32>
// FOLD-NOT: arith.addf
func.func @dense_nan_lanes() -> vector<2xf32> {
  %a = arith.constant dense<[0x7FC00002, 1.0]> : vector<2xf32>
  %b = arith.constant dense<[0xFF800003, 0x7F800004]> : vector<2xf32>
  %r = arith.addf %a, %b : vector<2xf32>
  return %r : vector<2xf32>
}

// ----- f80, f128 -------------------------------------------------------------------------

// FOLD-LABEL: func.func @extf_f80_f128
// FOLD: arith.constant 1.00000000000000000010842021724855044 : f128
// FOLD-NOT: arith.extf
func.func @extf_f80_f128() -> f128 {
  %a = arith.constant 0x3FFF8000000000000001 : f80
  %r = arith.extf %a : f80 to f128
  return %r : f128
}

// FOLD-LABEL: func.func @truncf_f128_f80
// FOLD: arith.constant 1.00000000000000000011 : f80
// FOLD-NOT: arith.truncf
func.func @truncf_f128_f80() -> f80 {
  %a = arith.constant 0x3FFF0000000000000002000000000000 : f128
  %r = arith.truncf %a : f128 to f80
  return %r : f80
}

// FOLD-LABEL: func.func @f80_arith
// FOLD: arith.constant 1.00000000000000000011 : f80
// FOLD-NOT: arith.divf
func.func @f80_arith() -> f80 {
  %a = arith.constant 0x3FFF8000000000000001 : f80
  %b = arith.constant 0x3FFF8000000000000003 : f80
  %c = arith.mulf %a, %b : f80
  %r = arith.divf %c, %b : f80
  return %r : f80
}

// FOLD-LABEL: func.func @f128_arith
// FOLD: arith.constant 5.000000e-01 : f128
// FOLD-NOT: arith.subf
func.func @f128_arith() -> f128 {
  %a = arith.constant 0x3FFF8000000000000000000000000001 : f128
  %b = arith.constant 0x3FFF0000000000000000000000000001 : f128
  %r = arith.subf %a, %b : f128
  return %r : f128
}

// FOLD-LABEL: func.func @absf_copysign_f80
// FOLD: arith.constant -1.00000000000000000011 : f80
// FOLD-NOT: math.copysign
func.func @absf_copysign_f80() -> f80 {
  %a = arith.constant -1.5 : f80
  %b = arith.constant 0x3FFF8000000000000001 : f80
  %c = math.absf %a : f80
  %r = math.copysign %b, %a : f80
  return %r : f80
}

// ----- the small formats -----------------------------------------------------------------

// FOLD-LABEL: func.func @e4m3fn_overflow_is_nan
// FOLD: arith.constant 0x7F : f8E4M3FN
// FOLD-NOT: arith.addf
func.func @e4m3fn_overflow_is_nan() -> f8E4M3FN {
  %a = arith.constant 448.0 : f8E4M3FN
  %r = arith.addf %a, %a : f8E4M3FN
  return %r : f8E4M3FN
}

// FOLD-LABEL: func.func @fnuz_divide_by_zero
// FOLD: arith.constant 0x80 : f8E4M3FNUZ
// FOLD-NOT: arith.divf
func.func @fnuz_divide_by_zero() -> f8E4M3FNUZ {
  %a = arith.constant 1.0 : f8E4M3FNUZ
  %z = arith.constant 0.0 : f8E4M3FNUZ
  %r = arith.divf %a, %z : f8E4M3FNUZ
  return %r : f8E4M3FNUZ
}

// FOLD-LABEL: func.func @finite_only_saturates
// FOLD: arith.constant 6.000000e+00 : f4E2M1FN
// FOLD-NOT: arith.sitofp
func.func @finite_only_saturates() -> f4E2M1FN {
  %i = arith.constant 7 : i32
  %r = arith.sitofp %i : i32 to f4E2M1FN
  return %r : f4E2M1FN
}

// FOLD-LABEL: func.func @e8m0_divides
// FOLD: arith.constant 1.000000e+00 : f8E8M0FNU
// FOLD-NOT: arith.divf
func.func @e8m0_divides() -> f8E8M0FNU {
  %a = arith.constant 4.0 : f8E8M0FNU
  %r = arith.divf %a, %a : f8E8M0FNU
  return %r : f8E8M0FNU
}

// FOLD-LABEL: func.func @e5m2_cmpf
// FOLD: arith.constant true
// FOLD-NOT: arith.cmpf
func.func @e5m2_cmpf() -> i1 {
  %a = arith.constant 0x7D : f8E5M2
  %b = arith.constant 1.0 : f8E5M2
  %r = arith.cmpf uno, %a, %b : f8E5M2
  return %r : i1
}

// FOLD-LABEL: func.func @tf32_mul
// FOLD: arith.constant 9.994500e-03 : tf32
// FOLD-NOT: arith.mulf
func.func @tf32_mul() -> tf32 {
  %a = arith.constant 0.1 : tf32
  %r = arith.mulf %a, %a : tf32
  return %r : tf32
}

// FOLD-LABEL: func.func @f8_to_f32
// FOLD: arith.constant 1.500000e+00 : f32
// FOLD-NOT: arith.extf
func.func @f8_to_f32() -> f32 {
  %b = arith.constant 0x3C : f8E4M3FN
  %r = arith.extf %b : f8E4M3FN to f32
  return %r : f32
}

// FOLD-LABEL: func.func @fptosi_f8
// FOLD: arith.constant -3 : i32
// FOLD-NOT: arith.fptosi
func.func @fptosi_f8() -> i32 {
  %a = arith.constant -3.5 : f8E4M3
  %r = arith.fptosi %a : f8E4M3 to i32
  return %r : i32
}

// ----- integers wider than 64 bits ---------------------------------------------------------

// FOLD-LABEL: func.func @i128_add_chain
// FOLD: %[[C:.+]] = arith.constant -170141183460469231731687303715884105724 : i128
// FOLD: arith.addi %{{.+}}, %[[C]] : i128
// FOLD-NOT: arith.addi
func.func @i128_add_chain(%x: i128) -> i128 {
  %c1 = arith.constant 170141183460469231731687303715884105727 : i128
  %c2 = arith.constant 5 : i128
  %0 = arith.addi %x, %c1 : i128
  %1 = arith.addi %0, %c2 : i128
  return %1 : i128
}

// FOLD-LABEL: func.func @i256_fold
// FOLD: arith.constant 19298681539552699237261830834781317975544997444273427339909597334652188273321 : i256
// FOLD-NOT: arith.divsi
func.func @i256_fold() -> i256 {
  %a = arith.constant 57896044618658097711785492504343953926634992332820282019728792003956564819967 : i256
  %b = arith.constant 3 : i256
  %c = arith.muli %a, %b : i256
  %r = arith.divsi %c, %b : i256
  return %r : i256
}

// FOLD-LABEL: func.func @i128_compare_shift
// FOLD-DAG: arith.constant true
// FOLD-DAG: arith.constant 1 : i128
// FOLD-NOT: arith.shrui
func.func @i128_compare_shift() -> (i1, i128) {
  %a = arith.constant -1 : i128
  %b = arith.constant 1 : i128
  %s = arith.constant 127 : i128
  %r = arith.cmpi ult, %b, %a : i128
  %t = arith.shrui %a, %s : i128
  return %r, %t : i1, i128
}

// FOLD-LABEL: func.func @wide_casts
// FOLD-DAG: arith.constant dense<[-170141183460469231731687303715884105728, 2]> : tensor<2xi128>
// FOLD-DAG: arith.constant -3 : i128
// FOLD-DAG: arith.constant 5 : i64
// FOLD-DAG: arith.constant 1.84467441E+19 : f32
// FOLD-DAG: arith.constant 1000000000000000019884624838656 : i128
// FOLD-DAG: arith.constant 85067995581805348452029386609777442817 : i128
// FOLD-DAG: arith.constant 18446744073709551613 : i128
// FOLD-DAG: arith.constant true
// FOLD-NOT: arith.{{addi|extsi|extui|trunci|sitofp|fptosi|bitcast|cmpi}}
func.func @wide_casts() -> (tensor<2xi128>, i128, i64, f32, i128, i128, i128, i1) {
  %a = arith.constant dense<[170141183460469231731687303715884105727, -5]> : tensor<2xi128>
  %b = arith.constant dense<[1, 7]> : tensor<2xi128>
  %c = arith.addi %a, %b : tensor<2xi128>
  %d = arith.constant -3 : i64
  %e = arith.extsi %d : i64 to i128
  %f = arith.constant 18446744073709551621 : i128
  %g = arith.trunci %f : i128 to i64
  %i = arith.sitofp %f : i128 to f32
  %j = arith.constant 1.0e30 : f64
  %k = arith.fptosi %j : f64 to i128
  %l = arith.constant 0x3FFF8000000000000000000000000001 : f128
  %m = arith.bitcast %l : f128 to i128
  %o = arith.extui %d : i64 to i128
  %p = arith.cmpi slt, %e, %o : i128
  return %c, %e, %g, %i, %k, %m, %o, %p : tensor<2xi128>, i128, i64, f32, i128, i128, i128, i1
}

// ----- where irkit differs from mlir-opt on purpose --------------------------------------

// MLIR reads a decimal literal as an f64 first, so `0.1 : f80` is f64's 0.1 (it prints
// 0.100000000000000005551) and an f80 constant it prints in decimal does not read back.
// irkit rounds the literal once into f80.
// FOLD-LABEL: func.func @f80_decimal_is_rounded_once
// IRKIT: arith.constant 1.000000e-01 : f80
func.func @f80_decimal_is_rounded_once() -> f80 {
  %a = arith.constant 0.1 : f80
  return %a : f80
}

// f8E8M0FNU's NaN has no payload bits; mlir-opt's extf shifts that empty payload into an
// infinity (0x7F800000). irkit keeps it a NaN.
// FOLD-LABEL: func.func @e8m0_nan_extends_to_nan
// IRKIT: arith.constant 0x7FC00000 : f32
// IRKIT-NOT: arith.extf
func.func @e8m0_nan_extends_to_nan() -> f32 {
  %a = arith.constant 0xFF : f8E8M0FNU
  %r = arith.extf %a : f8E8M0FNU to f32
  return %r : f32
}

// A result a finite-only format cannot hold (1 / 0 in f4E2M1FN) is not folded; mlir-opt
// folds it to an infinity the format has no bits for and prints 0x0.
// FOLD-LABEL: func.func @finite_only_division_by_zero
// IRKIT: arith.divf
func.func @finite_only_division_by_zero() -> f4E2M1FN {
  %a = arith.constant 1.0 : f4E2M1FN
  %z = arith.constant 0.0 : f4E2M1FN
  %r = arith.divf %a, %z : f4E2M1FN
  return %r : f4E2M1FN
}
