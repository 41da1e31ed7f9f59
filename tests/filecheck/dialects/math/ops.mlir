// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @float
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32, %[[V:.*]]: vector<4xf32>)
func.func @float(%x: f32, %y: f32, %z: f32, %v: vector<4xf32>) {
  // CHECK: math.exp %[[X]] : f32
  // GENERIC: "math.exp"(%{{.*}}) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
  %0 = math.exp %x : f32
  // CHECK: math.exp2 %[[X]] fastmath<fast> : f32
  // GENERIC: "math.exp2"(%{{.*}}) <{fastmath = #arith.fastmath<fast>}> : (f32) -> f32
  %1 = math.exp2 %x fastmath<fast> : f32
  // CHECK: math.expm1 %[[X]] : f32
  %2 = math.expm1 %x : f32
  // CHECK: math.log %[[X]] : f32
  %3 = math.log %x : f32
  // CHECK: math.log2 %[[X]] : f32
  %4 = math.log2 %x : f32
  // CHECK: math.log10 %[[X]] : f32
  %5 = math.log10 %x : f32
  // CHECK: math.log1p %[[X]] : f32
  %6 = math.log1p %x : f32
  // CHECK: math.sqrt %[[X]] : f32
  %7 = math.sqrt %x : f32
  // CHECK: math.rsqrt %[[X]] : f32
  %8 = math.rsqrt %x : f32
  // CHECK: math.cbrt %[[X]] : f32
  %9 = math.cbrt %x : f32
  // CHECK: math.sin %[[X]] : f32
  %10 = math.sin %x : f32
  // CHECK: math.cos %[[X]] : f32
  %11 = math.cos %x : f32
  // CHECK: math.tan %[[X]] : f32
  %12 = math.tan %x : f32
  // CHECK: math.tanh %[[X]] : f32
  %13 = math.tanh %x : f32
  // CHECK: math.asin %[[X]] : f32
  %14 = math.asin %x : f32
  // CHECK: math.acos %[[X]] : f32
  %15 = math.acos %x : f32
  // CHECK: math.atan %[[X]] : f32
  %16 = math.atan %x : f32
  // CHECK: math.atan2 %[[X]], %[[Y]] : f32
  %17 = math.atan2 %x, %y : f32
  // CHECK: math.sinh %[[X]] : f32
  %18 = math.sinh %x : f32
  // CHECK: math.cosh %[[X]] : f32
  %19 = math.cosh %x : f32
  // CHECK: math.asinh %[[X]] : f32
  %20 = math.asinh %x : f32
  // CHECK: math.acosh %[[X]] : f32
  %21 = math.acosh %x : f32
  // CHECK: math.atanh %[[X]] : f32
  %22 = math.atanh %x : f32
  // CHECK: math.erf %[[X]] : f32
  %23 = math.erf %x : f32
  // CHECK: math.erfc %[[X]] : f32
  %24 = math.erfc %x : f32
  // CHECK: math.absf %[[X]] : f32
  %25 = math.absf %x : f32
  // CHECK: math.ceil %[[X]] : f32
  %26 = math.ceil %x : f32
  // CHECK: math.floor %[[X]] : f32
  %27 = math.floor %x : f32
  // CHECK: math.round %[[X]] : f32
  %28 = math.round %x : f32
  // CHECK: math.roundeven %[[X]] : f32
  %29 = math.roundeven %x : f32
  // CHECK: math.trunc %[[X]] : f32
  %30 = math.trunc %x : f32
  // CHECK: math.powf %[[X]], %[[Y]] : f32
  %31 = math.powf %x, %y : f32
  // CHECK: math.fma %[[X]], %[[Y]], %[[Z]] fastmath<contract> : f32
  // GENERIC: "math.fma"(%{{.*}}, %{{.*}}, %{{.*}}) <{fastmath = #arith.fastmath<contract>}> : (f32, f32, f32) -> f32
  %32 = math.fma %x, %y, %z fastmath<contract> : f32
  // CHECK: math.copysign %[[X]], %[[Y]] : f32
  %33 = math.copysign %x, %y : f32
  // CHECK: math.isnan %[[V]] : vector<4xf32>
  // GENERIC: "math.isnan"(%{{.*}}) <{fastmath = #arith.fastmath<none>}> : (vector<4xf32>) -> vector<4xi1>
  %34 = math.isnan %v : vector<4xf32>
  // CHECK: math.isinf %[[X]] : f32
  %35 = math.isinf %x : f32
  // CHECK: math.isfinite %[[X]] : f32
  %36 = math.isfinite %x : f32
  // CHECK: math.isnormal %[[X]] : f32
  %37 = math.isnormal %x : f32
  // CHECK: math.sincos %[[X]] : f32
  // GENERIC: "math.sincos"(%{{.*}}) <{fastmath = #arith.fastmath<none>}> : (f32) -> (f32, f32)
  %38:2 = math.sincos %x : f32
  // CHECK: math.sin %[[V]] : vector<4xf32>
  %39 = math.sin %v : vector<4xf32>
  return
}

// CHECK-LABEL: func.func @integer
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32, %[[X:.*]]: f32)
func.func @integer(%a: i32, %b: i32, %x: f32) {
  // CHECK: math.absi %[[A]] : i32
  // GENERIC: "math.absi"(%{{.*}}) : (i32) -> i32
  %0 = math.absi %a : i32
  // CHECK: math.ctlz %[[A]] : i32
  %1 = math.ctlz %a : i32
  // CHECK: math.cttz %[[A]] : i32
  %2 = math.cttz %a : i32
  // CHECK: math.ctpop %[[A]] : i32
  %3 = math.ctpop %a : i32
  // CHECK: math.ipowi %[[A]], %[[B]] : i32
  %4 = math.ipowi %a, %b : i32
  // CHECK: math.fpowi %[[X]], %[[A]] fastmath<afn> : f32, i32
  %5 = math.fpowi %x, %a fastmath<afn> : f32, i32
  return
}
