// RUN: irkit-opt %s -p symbol-dce --allow-unregistered-dialect | FileCheck %s

// Public symbols stay; private ones stay only while something live refers to them.

// CHECK-LABEL: func.func @main
// CHECK: call @used
// CHECK: constant @by_constant
func.func @main(%a: f32) -> f32 {
  %0 = func.call @used(%a) : (f32) -> f32
  %f = func.constant @by_constant : (f32) -> f32
  return %0 : f32
}

// CHECK: func.func private @used
// CHECK: call @used_transitively
func.func private @used(%a: f32) -> f32 {
  %0 = func.call @used_transitively(%a) : (f32) -> f32
  return %0 : f32
}

// CHECK: func.func private @used_transitively
func.func private @used_transitively(%a: f32) -> f32 {
  return %a : f32
}

// CHECK: func.func private @by_constant
func.func private @by_constant(%a: f32) -> f32 {
  return %a : f32
}

// Dead: nothing refers to it. Also dead: @dead_cycle_a and @dead_cycle_b only refer to each
// other.
// CHECK-NOT: @unused
// CHECK-NOT: @dead_cycle
func.func private @unused(%a: f32) -> f32 {
  return %a : f32
}
func.func private @dead_cycle_a(%a: f32) -> f32 {
  %0 = func.call @dead_cycle_b(%a) : (f32) -> f32
  return %0 : f32
}
func.func private @dead_cycle_b(%a: f32) -> f32 {
  %0 = func.call @dead_cycle_a(%a) : (f32) -> f32
  return %0 : f32
}

// A public function stays even when unused.
// CHECK: func.func @public_unused
func.func @public_unused() {
  return
}

// Nested symbol tables: @inner::@helper is referenced, so the private nested module stays;
// @unreferenced_inner does not.
// CHECK: module @inner
// CHECK: func.func @helper
// CHECK-NOT: @unreferenced_inner
module @inner attributes {sym_visibility = "private"} {
  func.func @helper() {
    return
  }
}
module @unreferenced_inner attributes {sym_visibility = "private"} {
}
// CHECK: func.func @refers_nested
func.func @refers_nested() {
  "test.use_symbol"() {ref = @inner::@helper} : () -> ()
  return
}
