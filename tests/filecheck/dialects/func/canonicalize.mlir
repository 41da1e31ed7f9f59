// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// A call through a known function constant becomes a direct call; equal function constants
// are one constant, and dead ones go.
// CHECK-LABEL: func.func @direct
func.func @direct(%a: f32) -> f32 {
  // CHECK-NOT: constant @id
  // CHECK-NOT: call_indirect
  // CHECK: [[X:%.*]] = call @id(%arg0) : (f32) -> f32
  // CHECK-NEXT: [[Y:%.*]] = call @id([[X]]) : (f32) -> f32
  // CHECK-NEXT: return [[Y]]
  %0 = func.constant @id : (f32) -> f32
  %1 = func.constant @id : (f32) -> f32
  %2 = func.call_indirect %0(%a) : (f32) -> f32
  %3 = func.call_indirect %1(%2) : (f32) -> f32
  return %3 : f32
}

// A function value that escapes stays a constant.
// CHECK-LABEL: func.func @escapes
// CHECK: [[F:%.*]] = constant @id : (f32) -> f32
// CHECK: return [[F]]
func.func @escapes() -> ((f32) -> f32) {
  %0 = func.constant @id : (f32) -> f32
  return %0 : (f32) -> f32
}

func.func @id(%a: f32) -> f32 {
  return %a : f32
}
