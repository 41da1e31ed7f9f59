// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// Folders of the math dialect. Constant folds use inputs whose results are exact in any
// implementation, so the expected text does not depend on the last bits of a library's exp
// (numpy's float32 kernels are not correctly rounded: log10(100) folds to 2.00000024).
// MLIR 22 folds the elementary functions for f32/f64 only and none of the identities below;
// irkit folds f16, rsqrt, cbrt, fma, fpowi and sincos as well.

// exp, exp2, expm1, log, log2, log10, log1p of 0 or 1.
// CHECK-LABEL: func.func @exp_log_fold
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[ONE]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]]
func.func @exp_log_fold() -> (f32, f32, f32, f32, f32, f32, f32) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %r0 = math.exp %c0 : f32
  %r1 = math.exp2 %c0 : f32
  %r2 = math.expm1 %c0 : f32
  %r3 = math.log %c1 : f32
  %r4 = math.log2 %c1 : f32
  %r5 = math.log10 %c1 : f32
  %r6 = math.log1p %c0 : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : f32, f32, f32, f32, f32, f32, f32
}

// sqrt(4), rsqrt(4), cbrt(0)
// CHECK-LABEL: func.func @root_fold
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[TWO]], %[[HALF]], %[[ZERO]]
func.func @root_fold() -> (f32, f32, f32) {
  %c0 = arith.constant 0.0 : f32
  %c4 = arith.constant 4.0 : f32
  %r0 = math.sqrt %c4 : f32
  %r1 = math.rsqrt %c4 : f32
  %r2 = math.cbrt %c0 : f32
  return %r0, %r1, %r2 : f32, f32, f32
}

// Trigonometric and hyperbolic functions (and inverses) at 0 or 1.
// CHECK-LABEL: func.func @trig_fold
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[ZERO]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ONE]],
// CHECK-SAME: %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ZERO]], %[[ONE]]
func.func @trig_fold() -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %c0 = arith.constant 0.0 : f32
  %c1 = arith.constant 1.0 : f32
  %r0 = math.sin %c0 : f32
  %r1 = math.cos %c0 : f32
  %r2 = math.tan %c0 : f32
  %r3 = math.tanh %c0 : f32
  %r4 = math.atan %c0 : f32
  %r5 = math.sinh %c0 : f32
  %r6 = math.cosh %c0 : f32
  %r7 = math.asin %c0 : f32
  %r8 = math.acos %c1 : f32
  %r9 = math.asinh %c0 : f32
  %r10 = math.acosh %c1 : f32
  %r11 = math.atanh %c0 : f32
  %r12 = math.erfc %c0 : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12
      : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
}

// |-2.5| and the five roundings of -2.5.
// CHECK-LABEL: func.func @abs_rounding_fold
// CHECK-DAG: %[[P25:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-DAG: %[[M2:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-DAG: %[[M3:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[P25]], %[[M2]], %[[M3]], %[[M3]], %[[M2]], %[[M2]]
func.func @abs_rounding_fold() -> (f32, f32, f32, f32, f32, f32) {
  %b = arith.constant -2.5 : f32
  %r0 = math.absf %b : f32
  %r1 = math.ceil %b : f32
  %r2 = math.floor %b : f32
  %r3 = math.round %b : f32
  %r4 = math.roundeven %b : f32
  %r5 = math.trunc %b : f32
  return %r0, %r1, %r2, %r3, %r4, %r5 : f32, f32, f32, f32, f32, f32
}

// 2 ** -3, copysign(2, -3), fma(2, -3, 2), 2 ** 3 (fpowi), and f64.
// CHECK-LABEL: func.func @binary_fold
// CHECK-DAG: %[[P:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[C:.*]] = arith.constant -2.000000e+00 : f32
// CHECK-DAG: %[[F:.*]] = arith.constant -4.000000e+00 : f32
// CHECK-DAG: %[[I:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG: %[[D:.*]] = arith.constant 4.000000e+00 : f64
// CHECK-DAG: %[[A:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[P]], %[[C]], %[[F]], %[[I]], %[[D]], %[[A]]
func.func @binary_fold() -> (f32, f32, f32, f32, f64, f32) {
  %a = arith.constant 2.0 : f32
  %b = arith.constant -3.0 : f32
  %z = arith.constant 0.0 : f32
  %n = arith.constant 3 : i32
  %d = arith.constant 2.0 : f64
  %r0 = math.powf %a, %b : f32
  %r1 = math.copysign %a, %b : f32
  %r2 = math.fma %a, %b, %a : f32
  %r3 = math.fpowi %a, %n : f32, i32
  %r4 = math.powf %d, %d : f64
  %r5 = math.atan2 %z, %a : f32
  return %r0, %r1, %r2, %r3, %r4, %r5 : f32, f32, f32, f32, f64, f32
}

// CHECK-LABEL: func.func @f16_fold
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f16
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f16
// CHECK-NOT: math.
// CHECK: return %[[ONE]], %[[TWO]]
func.func @f16_fold() -> (f16, f16) {
  %z = arith.constant 0.0 : f16
  %f = arith.constant 4.0 : f16
  %r0 = math.exp %z : f16
  %r1 = math.sqrt %f : f16
  return %r0, %r1 : f16, f16
}

// |-5|, ctlz(3) = 30, cttz(3) = 0, ctpop(-5) = 31, (-5) ** 3.
// CHECK-LABEL: func.func @int_fold
// CHECK-DAG: %[[A:.*]] = arith.constant 5 : i32
// CHECK-DAG: %[[L:.*]] = arith.constant 30 : i32
// CHECK-DAG: %[[T:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[P:.*]] = arith.constant 31 : i32
// CHECK-DAG: %[[I:.*]] = arith.constant -125 : i32
// CHECK-NOT: math.
// CHECK: return %[[A]], %[[L]], %[[T]], %[[P]], %[[I]]
func.func @int_fold() -> (i32, i32, i32, i32, i32) {
  %a = arith.constant -5 : i32
  %b = arith.constant 3 : i32
  %r0 = math.absi %a : i32
  %r1 = math.ctlz %b : i32
  %r2 = math.cttz %b : i32
  %r3 = math.ctpop %a : i32
  %r4 = math.ipowi %a, %b : i32
  return %r0, %r1, %r2, %r3, %r4 : i32, i32, i32, i32, i32
}

// 0 ** -1 is poison: not folded.
// CHECK-LABEL: func.func @ipowi_poison_kept
// CHECK: math.ipowi
func.func @ipowi_poison_kept() -> i32 {
  %z = arith.constant 0 : i32
  %m = arith.constant -1 : i32
  %r = math.ipowi %z, %m : i32
  return %r : i32
}

// CHECK-LABEL: func.func @predicates_fold
// CHECK-DAG: %[[T:.*]] = arith.constant true
// CHECK-DAG: %[[F:.*]] = arith.constant false
// CHECK-NOT: math.
// CHECK: return %[[T]], %[[F]], %[[F]], %[[F]], %[[T]]
func.func @predicates_fold() -> (i1, i1, i1, i1, i1) {
  %nan = arith.constant 0x7FC00000 : f32
  %one = arith.constant 1.0 : f32
  %r0 = math.isnan %nan : f32
  %r1 = math.isinf %nan : f32
  %r2 = math.isfinite %nan : f32
  %r3 = math.isnormal %nan : f32
  %r4 = math.isnormal %one : f32
  return %r0, %r1, %r2, %r3, %r4 : i1, i1, i1, i1, i1
}

// CHECK-LABEL: func.func @sincos_fold
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[ZERO]], %[[ONE]]
func.func @sincos_fold() -> (f32, f32) {
  %a = arith.constant 0.0 : f32
  %s, %c = math.sincos %a : f32
  return %s, %c : f32, f32
}

// log and sqrt of a negative number are NaN, a well-defined value (MLIR does not fold them).
// CHECK-LABEL: func.func @log_negative_fold
// CHECK: %[[NAN:.*]] = arith.constant 0x
// CHECK-NEXT: return %[[NAN]], %[[NAN]]
func.func @log_negative_fold() -> (f32, f32) {
  %a = arith.constant -1.0 : f32
  %r0 = math.log %a : f32
  %r1 = math.sqrt %a : f32
  return %r0, %r1 : f32, f32
}

// |(|x|)| -> |x|; |-x| -> |x|
// CHECK-LABEL: func.func @absf_of_absf_negf
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[A:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: %[[B:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @absf_of_absf_negf(%x: f32) -> (f32, f32) {
  %a = math.absf %x : f32
  %r0 = math.absf %a : f32
  %n = arith.negf %x : f32
  %r1 = math.absf %n : f32
  return %r0, %r1 : f32, f32
}

// A rounding op of a rounded value is the identity: floor(floor(x)), round(trunc(x)), ...
// CHECK-LABEL: func.func @rounding_of_rounding
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[F:.*]] = math.floor %[[X]] : f32
// CHECK-NEXT: %[[C:.*]] = math.ceil %[[X]] : f32
// CHECK-NEXT: %[[T:.*]] = math.trunc %[[X]] : f32
// CHECK-NEXT: %[[E:.*]] = math.roundeven %[[X]] : f32
// CHECK-NEXT: return %[[F]], %[[C]], %[[T]], %[[E]]
func.func @rounding_of_rounding(%x: f32) -> (f32, f32, f32, f32) {
  %a = math.floor %x : f32
  %r0 = math.floor %a : f32
  %b = math.ceil %x : f32
  %r1 = math.ceil %b : f32
  %c = math.trunc %x : f32
  %r2 = math.round %c : f32
  %d = math.roundeven %x : f32
  %r3 = math.floor %d : f32
  return %r0, %r1, %r2, %r3 : f32, f32, f32, f32
}

// floor(sqrt(x)) is not sqrt(x).
// CHECK-LABEL: func.func @rounding_of_other_kept
// CHECK: math.sqrt
// CHECK-NEXT: math.floor
func.func @rounding_of_other_kept(%x: f32) -> f32 {
  %a = math.sqrt %x : f32
  %r = math.floor %a : f32
  return %r : f32
}

// x ** 1 -> x, x ** 0 -> 1 (0 ** 0 and NaN ** 0 are 1 too) for ipowi, fpowi and powf.
// CHECK-LABEL: func.func @power_identities
// CHECK-SAME: (%[[X:[a-z0-9]+]]: i32, %[[F:[a-z0-9]+]]: f32)
// CHECK-DAG: %[[I1:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: math.
// CHECK: return %[[X]], %[[I1]], %[[F]], %[[F1]], %[[F]], %[[F1]], %[[F1]]
func.func @power_identities(%x: i32, %f: f32) -> (i32, i32, f32, f32, f32, f32, f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0.0 : f32
  %mz = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %r0 = math.ipowi %x, %c1 : i32
  %r1 = math.ipowi %x, %c0 : i32
  %r2 = math.fpowi %f, %c1 : f32, i32
  %r3 = math.fpowi %f, %c0 : f32, i32
  %r4 = math.powf %f, %one : f32
  %r5 = math.powf %f, %z : f32
  %r6 = math.powf %f, %mz : f32
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : i32, i32, f32, f32, f32, f32, f32
}

// x ** 2 and x ** 0.5 are not rewritten (pow is not x * x to the last bit, and
// sqrt(-0.0) is -0.0 where pow(-0.0, 0.5) is +0.0).
// CHECK-LABEL: func.func @powf_kept
// CHECK: math.powf
// CHECK: math.powf
func.func @powf_kept(%x: f32) -> (f32, f32) {
  %c2 = arith.constant 2.0 : f32
  %ch = arith.constant 0.5 : f32
  %r0 = math.powf %x, %c2 : f32
  %r1 = math.powf %x, %ch : f32
  return %r0, %r1 : f32, f32
}

// copysign(x, x) -> x
// CHECK-LABEL: func.func @copysign_same
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[Y:[a-z0-9]+]]: f32)
// CHECK-NEXT: %[[R:.*]] = math.copysign %[[X]], %[[Y]] : f32
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @copysign_same(%x: f32, %y: f32) -> (f32, f32) {
  %r0 = math.copysign %x, %x : f32
  %r1 = math.copysign %x, %y : f32
  return %r0, %r1 : f32, f32
}
