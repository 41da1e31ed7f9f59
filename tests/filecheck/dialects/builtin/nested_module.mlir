// RUN: irkit-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect \
// RUN:   | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic \
// RUN:   | FileCheck %s --check-prefix=GENERIC
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic \
// RUN:   | irkit-opt --allow-unregistered-dialect | FileCheck %s

// A module nested in a function prints as MLIR prints it, which mlir-opt reads back in both
// forms (tests/unit/test_mlir_conformance.py feeds it irkit's output):
// - the numbering of values and arguments never restarts on the way down, isolated ops
//   included: the nested function's argument is %arg1 and its values go on after those of
//   the regions above it (%4, after the module's %2 and %3), so no name is defined twice in
//   the text;
// - op names drop the prefix of the default dialect of the region they are in: `func` in a
//   function body, `builtin` in a module, none in other ops' regions. So the nested module
//   is `builtin.module` (in a function) and its function `func.func` (in a module), its ops
//   `return` and `builtin.unrealized_conversion_cast` (in a function), the module's own cast
//   `unrealized_conversion_cast`. (The expected text is mlir-opt's output for this file.)

// CHECK-LABEL: func.func @outer(
// CHECK-SAME:      %arg0: f32) -> f32 {
// CHECK-NEXT:    %0 = arith.addf %arg0, %arg0 : f32
// CHECK-NEXT:    %1 = builtin.unrealized_conversion_cast %0 : f32 to i32
// CHECK-NEXT:    builtin.module {
// CHECK-NEXT:      func.func @inner(%arg1: f32) -> f32 {
// CHECK-NEXT:        %4 = arith.mulf %arg1, %arg1 : f32
// CHECK-NEXT:        %5 = builtin.unrealized_conversion_cast %4 : f32 to i32
// CHECK-NEXT:        return %4 : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %2 = "test.c"() : () -> f32
// CHECK-NEXT:      %3 = unrealized_conversion_cast %2 : f32 to i32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %0 : f32
// GENERIC-LABEL: sym_name = "outer"
// GENERIC:       ^bb0(%arg0: f32):
// GENERIC:         "builtin.module"() ({
// GENERIC-NEXT:      "func.func"() <{function_type = (f32) -> f32, sym_name = "inner"}> ({
// GENERIC-NEXT:      ^bb0(%arg1: f32):
// GENERIC-NEXT:        %4 = "arith.mulf"(%arg1, %arg1)
func.func @outer(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = builtin.unrealized_conversion_cast %0 : f32 to i32
  builtin.module {
    func.func @inner(%b: f32) -> f32 {
      %2 = arith.mulf %b, %b : f32
      %3 = builtin.unrealized_conversion_cast %2 : f32 to i32
      func.return %2 : f32
    }
    %4 = "test.c"() : () -> f32
    %5 = builtin.unrealized_conversion_cast %4 : f32 to i32
  }
  return %0 : f32
}

// Inside an unregistered op's region no dialect is the default: the module keeps `builtin.`.
// CHECK-LABEL: func.func @in_unregistered(
// CHECK:         "test.wrap"() ({
// CHECK-NEXT:      builtin.module {
// CHECK-NEXT:        func.func @f(%arg1: i32) -> i32 {
// CHECK-NEXT:          return %arg1 : i32
func.func @in_unregistered(%a: i32) {
  "test.wrap"() ({
    builtin.module {
      func.func @f(%x: i32) -> i32 {
        return %x : i32
      }
    }
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// At the top level `builtin` is the default, inside a module too.
// CHECK-LABEL: module @named {
// CHECK-NEXT:    module @deeper {
// CHECK-NEXT:      func.func private @decl(i32)
builtin.module @named {
  builtin.module @deeper {
    func.func private @decl(i32)
  }
}
