// RUN: irkit-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect \
// RUN:   | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic \
// RUN:   | irkit-opt --allow-unregistered-dialect | FileCheck %s

// Builtin syntax MLIR accepts and irkit once rejected; the expected text is mlir-opt's for
// this file (tests/unit/test_mlir_conformance.py also has mlir-opt read irkit's output).

// `i0` (and `si0`) are types: zero-width integers, whose only value is 0.
// CHECK-LABEL: func.func private @zero_width(i0, vector<4xi0>) -> si0
func.func private @zero_width(i0, vector<4xi0>) -> si0

// CHECK-LABEL: func.func @i0_constant(
// CHECK-SAME:      %[[A:.*]]: i0) -> i0 {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 0 : i0
// CHECK-NEXT:    %[[S:.*]] = arith.addi %[[A]], %[[C]] : i0
// CHECK-NEXT:    return %[[S]] : i0
func.func @i0_constant(%a: i0) -> i0 {
  %c = arith.constant 0 : i0
  %0 = arith.addi %a, %c : i0
  return %0 : i0
}

// Blanks may stand between the sizes of a shape and its `x`s.
// CHECK-LABEL: func.func private @spaced_shapes(
// CHECK-SAME:      vector<4xi32>, vector<4x8xf32>, tensor<4x?xf32>, memref<2x3xf32>,
// CHECK-SAME:      vector<[4]xi32>, vector<4x[8]xf16>, tensor<*xf32>, tensor<4x8xf32, "enc">,
// CHECK-SAME:      tensor<4x8xf32>, vector<2x2xf32>, vector<3xbf16>)
func.func private @spaced_shapes(vector<4 x i32>, vector<4 x 8 x f32>, tensor<4 x ? x f32>,
                                 memref<2 x 3 x f32>, vector<[4] x i32>, vector<4x[8] x f16>,
                                 tensor<* x f32>, tensor<4 x 8 xf32, "enc">, tensor<4x 8xf32>,
                                 vector< 2x2 xf32 >, vector<3 xbf16>)

// A dialect attribute may carry a type, as any attribute of an unknown dialect.
// CHECK-LABEL: func.func @typed_opaque()
// CHECK-NEXT:    "test.op"() {a = #foo.attr : i32, b = #foo<"x"> : i64, c = #foo.bar<1> : f32, d = #foo.z} : () -> ()
func.func @typed_opaque() {
  "test.op"() {a = #foo.attr : i32, b = #foo<"x"> : i64, c = #foo.bar<1> : f32, d = #foo.z} : () -> ()
  return
}
