// RUN: irkit-opt %s --allow-unregistered-dialect \
// RUN:   | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic \
// RUN:   | FileCheck %s --check-prefix=GENERIC

// The builtin dialect's ops in custom form: modules (named, nested, with attributes) and
// unrealized_conversion_cast, which keeps its `builtin.` prefix inside a function as in MLIR.

// CHECK-LABEL: module @outer attributes {test.flag, test.n = 3 : i64} {
// GENERIC:     "builtin.module"() <{sym_name = "outer"}> ({
module @outer attributes {test.flag, test.n = 3 : i64} {
  // CHECK:      module @inner {
  // CHECK-NEXT: }
  // GENERIC:    "builtin.module"() <{sym_name = "inner"}> ({
  module @inner {
  }

  // CHECK:      module {
  // CHECK-NEXT:   "test.op"() : () -> ()
  // CHECK-NEXT: }
  module {
    "test.op"() : () -> ()
  }

  // CHECK-LABEL: func.func @casts(
  // CHECK-SAME:      %[[ARG:.*]]: i32) -> f32 {
  // CHECK:         %[[F:.*]] = builtin.unrealized_conversion_cast %[[ARG]] : i32 to f32
  // CHECK:         %{{.*}}:2 = builtin.unrealized_conversion_cast %[[F]] : f32 to i64, index
  // CHECK:         builtin.unrealized_conversion_cast to i8
  // CHECK:         return %[[F]] : f32
  // GENERIC:       "builtin.unrealized_conversion_cast"(%{{.*}}) : (i32) -> f32
  // GENERIC:       "builtin.unrealized_conversion_cast"(%{{.*}}) : (f32) -> (i64, index)
  // GENERIC:       "builtin.unrealized_conversion_cast"() : () -> i8
  func.func @casts(%arg0: i32) -> f32 {
    %0 = builtin.unrealized_conversion_cast %arg0 : i32 to f32
    %1:2 = builtin.unrealized_conversion_cast %0 : f32 to i64, index
    %2 = builtin.unrealized_conversion_cast to i8
    return %0 : f32
  }
}
// GENERIC: }) {test.flag, test.n = 3 : i64} : () -> ()
