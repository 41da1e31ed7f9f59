// RUN: irkit-opt %s -p strip-debuginfo --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%arg0: f32 loc(unknown))
// CHECK: arith.addf %arg0, %arg0 : f32 loc(unknown)
// CHECK: return {{.*}} loc(unknown)
// CHECK-NOT: loc("
func.func @f(%a: f32 loc("in.py":1:2)) -> f32 {
  %0 = arith.addf %a, %a : f32 loc("model.irk":3:7)
  return %0 : f32 loc(fused["a.py":1:1, "b.py":2:2])
} loc("model.irk":1:1)
