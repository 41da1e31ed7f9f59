// Warnings emitted by a pass and verifier errors are matched against annotations.
// RUN: irkit-opt %s --split-input-file --verify-diagnostics --load-pass-plugin=%test_passes -p test-emit-warning

// expected-warning @+1 {{function 'f' seen}}
func.func @f() {
  return
}

// -----

func.func @g(%a: i32) -> f32 {
  // expected-error @+1 {{'func.return' op type of return operand 0 ('i32') doesn't match function result type ('f32')}}
  return %a : i32
}

// -----

// A missing diagnostic and an unexpected one both fail, at the annotation and at the op.
// RUN: not irkit-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s
// CHECK: verify-diagnostics.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: expected warning "function 'h' seen" was not produced
// expected-warning @+1 {{function 'h' seen}}
func.func @h() {
  return
}
