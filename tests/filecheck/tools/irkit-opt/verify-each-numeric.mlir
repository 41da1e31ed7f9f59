// --verify-each=numeric runs every function on generated inputs before and after each pass
// and stops at the first pass that changes a result, naming it and writing a reproducer.

// RUN: not irkit-opt %s --load-pass-plugin=%test_passes -p canonicalize,cse,test-miscompile,dce --verify-each=numeric --numeric-reproducer=%t.repro.mlir 2>&1 | FileCheck %s
// CHECK: verify-each-numeric.mlir:[[# @LINE + 13]]:1: error: pass 'test-miscompile' changed the numeric results of the module
// CHECK: numeric mismatch in @blend, result #0
// CHECK: note: reproducer written to {{.*}}.repro.mlir

// The reproducer runs just the failing pass, as the pipeline nested it, on the IR before it.
// RUN: FileCheck %s --input-file=%t.repro.mlir --check-prefix=REPRO
// REPRO: // {{RUN}}: irkit-opt %s --pass-pipeline='builtin.module(func.func(test-miscompile))'
// REPRO: // Reproducer: pass 'test-miscompile' changed the numeric results of this module.
// REPRO: func.func @blend

// Correct passes pass.
// RUN: irkit-opt %s -p canonicalize,cse,dce --verify-each=numeric | FileCheck %s --check-prefix=OK
// OK: func.func @blend
func.func @blend(%a: f32, %b: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %a, %b : f32
  %1 = arith.mulf %0, %one : f32
  %2 = arith.mulf %a, %b : f32
  %3 = arith.mulf %b, %a : f32
  %4 = arith.subf %2, %3 : f32
  %5 = arith.addf %1, %4 : f32
  return %5 : f32
}
