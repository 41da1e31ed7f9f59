// Pipeline syntax: MLIR's nested form, the flat `-p` form, mlir-opt's one flag per pass.
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3},cse))' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: Pass Manager with 2 passes:
// NESTED-NEXT: builtin.module(func.func(canonicalize{max-iterations=3 region-simplify=true},cse))

// RUN: irkit-opt %s -p 'canonicalize{region-simplify=false},cse' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLAT
// FLAT: builtin.module(canonicalize{max-iterations=10 region-simplify=false},cse)

// A pass anchored on func.func nests itself under func.func in the flat form.
// RUN: irkit-opt %s --load-pass-plugin=%test_passes -p cse,test-miscompile --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTONEST
// AUTONEST: builtin.module(cse,func.func(test-miscompile))

// RUN: irkit-opt %s -canonicalize --cse --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLAGS
// FLAGS: builtin.module(canonicalize{max-iterations=10 region-simplify=true},cse)

// All forms give the same output.
// RUN: irkit-opt %s -p canonicalize,cse | FileCheck %s
// RUN: irkit-opt %s -canonicalize -cse | FileCheck %s
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,cse))' | FileCheck %s

// Errors name the problem and exit with 2 (usage) before reading the input.
// RUN: not irkit-opt %s -p canonicalise 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: irkit-opt: error: no pass named 'canonicalise'; did you mean 'canonicalize'? (see --list-passes)
// RUN: not irkit-opt %s -p 'canonicalize{max-iteration=3}' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: irkit-opt: error: 'canonicalize' has no option 'max-iteration' (options: max-iterations, region-simplify)
// RUN: not irkit-opt %s -p 'canonicalize{max-iterations=many}' 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: irkit-opt: error: 'canonicalize' option 'max-iterations': cannot read 'many' as int
// RUN: not irkit-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: irkit-opt: error: pipeline anchored on 'func.func' cannot run on 'builtin.module' (the root op)
// RUN: not irkit-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | FileCheck %s --check-prefix=PAREN
// PAREN: irkit-opt: error: unbalanced brackets or quotes in pass pipeline

// CHECK-LABEL: func.func @f
// CHECK-NEXT: [[X:%.*]] = arith.mulf %arg0, %arg0
// CHECK-NEXT: return [[X]], [[X]]
func.func @f(%a: f32) -> (f32, f32) {
  %one = arith.constant 1.0 : f32
  %0 = arith.mulf %a, %a : f32
  %1 = arith.mulf %a, %a : f32
  %2 = arith.mulf %1, %one : f32
  return %0, %2 : f32, f32
}
