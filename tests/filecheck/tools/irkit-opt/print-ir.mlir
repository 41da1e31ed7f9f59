// RUN: irkit-opt %s -p canonicalize,cse --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// AFTER: // -----// IR Dump After Canonicalize (canonicalize) //----- //
// AFTER-NEXT: module {
// AFTER: arith.addf
// AFTER: arith.addf
// AFTER: // -----// IR Dump After CSE (cse) //----- //
// AFTER: arith.addf
// AFTER-NOT: arith.addf

// RUN: irkit-opt %s -p canonicalize,cse --mlir-print-ir-before=cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// BEFORE-NOT: IR Dump After
// BEFORE: // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-NOT: IR Dump

// RUN: irkit-opt %s -p canonicalize,cse --mlir-print-ir-after=canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: IR Dump After Canonicalize (canonicalize)
// ONE-NOT: IR Dump

// Nested pipelines print the op the pass ran on, or the module with module scope.
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: IR Dump After CSE (cse)
// NESTED-NEXT: func.func @f
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(cse))' --mlir-print-ir-after-all --mlir-print-ir-module-scope -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCOPE
// SCOPE: IR Dump After CSE (cse)
// SCOPE-NEXT: module {

// A pass that breaks the IR: the verifier names the op and the rule, a note names the pass,
// and --mlir-print-ir-after-failure shows the broken IR.
// RUN: not irkit-opt %s --load-pass-plugin=%test_passes -p test-break-ir --mlir-print-ir-after-failure 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: // -----// IR Dump After TestBreakIR (test-break-ir) Failed //----- //
// FAIL: return{{$}}
// FAIL: print-ir.mlir:[[# @LINE + 7]]:3: error: 'func.return' op has 0 operands, but enclosing function (@f) returns 1
// FAIL: note: the IR does not verify after pass 'test-break-ir' ran on 'builtin.module'

func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  return %2 : f32
}
