// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s

// The func dialect in custom form: definitions and declarations, visibility, argument and
// result attributes, calls (direct and indirect), func.constant, multiple blocks.

// CHECK-LABEL: func.func private @decl(i32, f32) -> f32
func.func private @decl(i32, f32) -> f32

// CHECK-LABEL: func.func nested @nested_decl()
func.func nested @nested_decl()

// CHECK-LABEL: func.func @empty() {
// CHECK-NEXT:    return
// CHECK-NEXT:  }
func.func @empty() {
  return
}

// CHECK-LABEL: func.func @identity(
// CHECK-SAME:      %[[X:.*]]: f32) -> f32 {
// CHECK-NEXT:    return %[[X]] : f32
func.func @identity(%x: f32) -> f32 {
  return %x : f32
}

// CHECK-LABEL: func.func @multi(
// CHECK-SAME:      %[[A:.*]]: tensor<?x784xf32>, %[[B:.*]]: index) -> (index, tensor<?x784xf32>)
// CHECK-NEXT:    return %[[B]], %[[A]] : index, tensor<?x784xf32>
func.func @multi(%a: tensor<?x784xf32>, %b: index) -> (index, tensor<?x784xf32>) {
  return %b, %a : index, tensor<?x784xf32>
}

// CHECK-LABEL: func.func @arg_attrs(
// CHECK-SAME:      %{{.*}}: memref<4xf32> {test.noalias}, %{{.*}}: i64 {test.n = 1 : i64})
// CHECK-SAME:      -> (i1 {test.res})
func.func @arg_attrs(%m: memref<4xf32> {test.noalias}, %n: i64 {test.n = 1 : i64})
    -> (i1 {test.res}) {
  %t = call @make_bool() : () -> i1
  return %t : i1
}

// CHECK-LABEL: func.func private @make_bool() -> i1 attributes {llvm.emit_c_interface}
func.func private @make_bool() -> i1 attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @calls(
// CHECK-SAME:      %[[A:.*]]: f32, %[[B:.*]]: i32) -> f32 {
// CHECK-NEXT:    %[[R:.*]] = call @decl(%[[B]], %[[A]]) : (i32, f32) -> f32
// CHECK-NEXT:    %[[F:.*]] = constant @decl : (i32, f32) -> f32
// CHECK-NEXT:    %[[S:.*]] = call_indirect %[[F]](%[[B]], %[[R]]) : (i32, f32) -> f32
// CHECK-NEXT:    call @empty() : () -> ()
// CHECK-NEXT:    return %[[S]] : f32
func.func @calls(%a: f32, %b: i32) -> f32 {
  %r = call @decl(%b, %a) : (i32, f32) -> f32
  %f = constant @decl : (i32, f32) -> f32
  %s = call_indirect %f(%b, %r) : (i32, f32) -> f32
  func.call @empty() : () -> ()
  return %s : f32
}

// CHECK-LABEL: func.func @pair() -> (f32, f32) {
// CHECK:         %[[P:.*]]:2 = call @pair() : () -> (f32, f32)
// CHECK-NEXT:    return %[[P]]#1, %[[P]]#0 : f32, f32
func.func @pair() -> (f32, f32) {
  %p:2 = call @pair() : () -> (f32, f32)
  return %p#1, %p#0 : f32, f32
}
