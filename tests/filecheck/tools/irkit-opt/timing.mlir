// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(canonicalize,cse),symbol-dce)' --mlir-timing -o /dev/null 2>&1 | FileCheck %s
// CHECK: ... Execution time report ...
// CHECK: Total Execution Time: {{[0-9.]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  'func.func' Pipeline
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    Canonicalize (canonicalize)
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)    CSE (cse)
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  SymbolDCE (symbol-dce)
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// CHECK-NEXT: {{[0-9.]+}} (100.0%)  Total

func.func @f(%a: f32) -> f32 {
  return %a : f32
}
func.func @g(%a: f32) -> f32 {
  return %a : f32
}
