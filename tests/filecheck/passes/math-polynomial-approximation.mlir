// RUN: irkit-opt %s -p math-polynomial-approximation | FileCheck %s
// RUN: irkit-opt %s -p 'math-polynomial-approximation{ops=log}' | FileCheck %s --check-prefix=ONLY-LOG

// exp on f32: clamp, k = x log2 e rounded by adding 1.5 * 2^23 + 254 (the sum's low bits
// hold k plus two exponent biases), Cody-Waite reduction in two fmas, the polynomial, and
// 2^k as two factors whose biased exponents are the bits shifted right by one and the
// rest, each shifted into place; (1 + u) times the first is one fma.
// CHECK-LABEL: func.func @exp_scalar
// CHECK-NOT: math.exp
// CHECK: arith.cmpf olt
// CHECK: [[MAGIC:%.*]] = arith.constant 0x4B4000FE : f32
// CHECK: [[SHIFTED:%.*]] = math.fma %{{.*}}, %{{.*}}, [[MAGIC]] : f32
// CHECK: math.fma
// CHECK: [[BITS:%.*]] = arith.bitcast [[SHIFTED]] : f32 to i32
// CHECK: [[HALF:%.*]] = arith.shrui [[BITS]], %{{.*}} : i32
// CHECK: [[E1:%.*]] = arith.shli [[HALF]], [[C23:%.*]] : i32
// CHECK-NEXT: [[F1:%.*]] = arith.bitcast [[E1]] : i32 to f32
// CHECK-NEXT: [[REST:%.*]] = arith.subi [[BITS]], [[HALF]] : i32
// CHECK-NEXT: [[E2:%.*]] = arith.shli [[REST]], [[C23]] : i32
// CHECK-NEXT: [[F2:%.*]] = arith.bitcast [[E2]] : i32 to f32
// CHECK-NEXT: [[P:%.*]] = math.fma %{{.*}}, [[F1]], [[F1]] : f32
// CHECK-NEXT: [[R:%.*]] = arith.mulf [[P]], [[F2]] : f32
// CHECK-NOT: arith.addf
// CHECK-NOT: math.exp
// CHECK: return [[R]] : f32
// ONLY-LOG-LABEL: func.func @exp_scalar
// ONLY-LOG: math.exp %arg0 : f32
func.func @exp_scalar(%x: f32) -> f32 {
  %r = math.exp %x : f32
  return %r : f32
}

// The same ops lane by lane on a vector, constants as splats.
// CHECK-LABEL: func.func @exp_vector
// CHECK-NOT: math.exp
// CHECK: arith.constant dense<-1.040000e+02> : vector<16xf32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.bitcast {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shli {{.*}} : vector<16xi32>
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: math.exp
// CHECK: return {{.*}} : vector<16xf32>
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.exp %x : vector<16xf32>
  return %r : vector<16xf32>
}

// f64 is left to LLVM's intrinsic (the C library).
// CHECK-LABEL: func.func @exp_f64
// CHECK: math.exp %arg0 : f64
// CHECK-LABEL: func.func @log_f64
// CHECK: math.log %arg0 : vector<4xf64>
func.func @exp_f64(%x: f64) -> f64 {
  %r = math.exp %x : f64
  return %r : f64
}
func.func @log_f64(%x: vector<4xf64>) -> vector<4xf64> {
  %r = math.log %x : vector<4xf64>
  return %r : vector<4xf64>
}

// log: exponent and mantissa from the bits, specials by select.
// CHECK-LABEL: func.func @log_scalar
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrsi
// CHECK: arith.andi
// CHECK: arith.cmpf ult
// CHECK: [[R:%.*]] = arith.select
// CHECK: return [[R]] : f32
// ONLY-LOG-LABEL: func.func @log_scalar
// ONLY-LOG-NOT: math.log
// ONLY-LOG: return
func.func @log_scalar(%x: f32) -> f32 {
  %r = math.log %x : f32
  return %r : f32
}

// log1p, expm1, log2 and tanh, as sigmoid, softplus and gelu lower to them.
// CHECK-LABEL: func.func @others
// CHECK-NOT: math.log1p
// CHECK-NOT: math.expm1
// CHECK-NOT: math.log2
// CHECK-NOT: math.tanh
// CHECK: math.copysign
// CHECK: return
func.func @others(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>,
                                         vector<8xf32>) {
  %a = math.log1p %x : vector<8xf32>
  %b = math.expm1 %x : vector<8xf32>
  %c = math.log2 %x : vector<8xf32>
  %d = math.tanh %x : vector<8xf32>
  return %a, %b, %c, %d : vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
}
