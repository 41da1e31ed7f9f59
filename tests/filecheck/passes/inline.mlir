// RUN: irkit-opt %s --allow-unregistered-dialect -p inline | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect -p 'inline{default-pipeline=}' \
// RUN:   | FileCheck %s --check-prefix=NOSIMP
// RUN: irkit-opt %s --allow-unregistered-dialect -p 'inline{default-pipeline=}' \
// RUN:   --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// A private callee is inlined into its only caller and then erased.
// CHECK-NOT: @square
func.func private @square(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32 loc("square_body")
  return %0 : f32
}

// CHECK-LABEL: func.func @simple
// CHECK-SAME: (%[[X:.*]]: f32) -> f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: return %[[R]] : f32
// LOC-LABEL: func.func @simple
// LOC: arith.mulf {{.*}} loc(callsite("square_body" at "simple_call"))
func.func @simple(%x: f32) -> f32 {
  %0 = func.call @square(%x) : (f32) -> f32 loc("simple_call")
  return %0 : f32
}

// A chain of calls is inlined bottom-up: the leaf into the middle, the middle into the root.
// CHECK-NOT: @chain_
func.func private @chain_leaf(%x: i32) -> i32 {
  %0 = arith.muli %x, %x : i32
  return %0 : i32
}

func.func private @chain_mid(%x: i32) -> i32 {
  %0 = func.call @chain_leaf(%x) : (i32) -> i32
  %1 = arith.addi %0, %x : i32
  return %1 : i32
}

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[X:.*]]: i32
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[X]], %[[X]] : i32
// CHECK-NEXT: %[[A:.*]] = arith.addi %[[M]], %[[X]] : i32
// CHECK-NEXT: %[[B:.*]] = arith.muli %[[A]], %[[X]] : i32
// CHECK-NEXT: return %[[B]] : i32
func.func @chain(%x: i32) -> i32 {
  %0 = func.call @chain_mid(%x) : (i32) -> i32
  %1 = arith.muli %0, %x : i32
  return %1 : i32
}

// A public callee is inlined too, but stays: callers outside the module may need it.
// CHECK-LABEL: func.func @public_callee
// CHECK-NEXT: arith.negf
func.func @public_callee(%x: f32) -> f32 {
  %0 = arith.negf %x : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @calls_public
// CHECK-NOT: func.call
// CHECK: arith.negf
func.func @calls_public(%x: f32) -> f32 {
  %0 = func.call @public_callee(%x) : (f32) -> f32
  return %0 : f32
}

// A self-recursive function is not inlined into itself.
// CHECK-LABEL: func.func @recursive
// CHECK-NEXT: %[[A:.*]] = call @recursive(%{{.*}}) : (i32) -> i32
// CHECK-NEXT: %[[B:.*]] = call @recursive(%[[A]]) : (i32) -> i32
// CHECK-NEXT: return %[[B]]
func.func @recursive(%x: i32) -> i32 {
  %0 = func.call @recursive(%x) : (i32) -> i32
  %1 = func.call @recursive(%0) : (i32) -> i32
  return %1 : i32
}

// From outside, it is inlined once: the calls it brings along are not inlined again (else
// each round would double them).
// CHECK-LABEL: func.func @calls_recursive
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NEXT: %[[A:.*]] = call @recursive(%[[X]]) : (i32) -> i32
// CHECK-NEXT: %[[B:.*]] = call @recursive(%[[A]]) : (i32) -> i32
// CHECK-NEXT: return %[[B]]
func.func @calls_recursive(%x: i32) -> i32 {
  %0 = func.call @recursive(%x) : (i32) -> i32
  return %0 : i32
}

// Mutually recursive functions are not inlined into each other.
// CHECK-LABEL: func.func @ping
// CHECK-NEXT: call @pong
// CHECK-LABEL: func.func @pong
// CHECK-NEXT: call @ping
func.func @ping(%x: i32) -> i32 {
  %0 = func.call @pong(%x) : (i32) -> i32
  return %0 : i32
}

func.func @pong(%x: i32) -> i32 {
  %0 = func.call @ping(%x) : (i32) -> i32
  return %0 : i32
}

// A declaration has no body to inline; it stays, and so does the call.
// CHECK-LABEL: func.func private @external(i32) -> i32
func.func private @external(i32) -> i32

// CHECK-LABEL: func.func @calls_external
// CHECK-NEXT: call @external
func.func @calls_external(%x: i32) -> i32 {
  %0 = func.call @external(%x) : (i32) -> i32
  return %0 : i32
}

// A callee of several blocks would need a branch to the continuation (no cf dialect yet).
// CHECK-LABEL: func.func private @multi_block
// CHECK: "cf.br"
func.func private @multi_block(%x: i32) -> i32 {
  "cf.br"(%x)[^bb1] : (i32) -> ()
^bb1(%y: i32):
  return %y : i32
}

// CHECK-LABEL: func.func @calls_multi_block
// CHECK-NEXT: call @multi_block
func.func @calls_multi_block(%x: i32) -> i32 {
  %0 = func.call @multi_block(%x) : (i32) -> i32
  return %0 : i32
}

// `no_inline` on the call keeps it a call, and the private callee with it.
// CHECK-LABEL: func.func private @cube
func.func private @cube(%x: f32) -> f32 {
  %0 = arith.mulf %x, %x : f32
  %1 = arith.mulf %0, %x : f32
  return %1 : f32
}

// CHECK-LABEL: func.func @calls_no_inline
// CHECK-NEXT: call @cube(%{{.*}}) {no_inline}
func.func @calls_no_inline(%x: f32) -> f32 {
  %0 = func.call @cube(%x) {no_inline} : (f32) -> f32
  return %0 : f32
}

// A `func.constant` reference keeps an inlined private callee alive.
// CHECK-LABEL: func.func private @referenced
func.func private @referenced(%x: i32) -> i32 {
  %0 = arith.muli %x, %x : i32
  return %0 : i32
}

// CHECK-LABEL: func.func @takes_address
// CHECK-NEXT: constant @referenced
func.func @takes_address() -> ((i32) -> i32) {
  %f = func.constant @referenced : (i32) -> i32
  return %f : (i32) -> i32
}

// CHECK-LABEL: func.func @calls_referenced
// CHECK-NOT: func.call
// CHECK: arith.muli
func.func @calls_referenced(%x: i32) -> i32 {
  %0 = func.call @referenced(%x) : (i32) -> i32
  return %0 : i32
}

// Constants passed as arguments fold once inlined (the default pipeline, canonicalize);
// `default-pipeline=` (empty) leaves the inlined arithmetic alone.
// CHECK-NOT: @mul_add
func.func private @mul_add(%x: i32, %y: i32) -> i32 {
  %0 = arith.muli %x, %y : i32
  %1 = arith.addi %0, %x : i32
  return %1 : i32
}

// CHECK-LABEL: func.func @folds_constant_args
// CHECK-NEXT: %[[C:.*]] = arith.constant 14 : i32
// CHECK-NEXT: return %[[C]] : i32
// NOSIMP-LABEL: func.func @folds_constant_args
// NOSIMP-NEXT: %[[C2:.*]] = arith.constant 2 : i32
// NOSIMP-NEXT: %[[C6:.*]] = arith.constant 6 : i32
// NOSIMP-NEXT: %[[M:.*]] = arith.muli %[[C2]], %[[C6]] : i32
// NOSIMP-NEXT: %[[A:.*]] = arith.addi %[[M]], %[[C2]] : i32
// NOSIMP-NEXT: return %[[A]] : i32
func.func @folds_constant_args() -> i32 {
  %c2 = arith.constant 2 : i32
  %c6 = arith.constant 6 : i32
  %0 = func.call @mul_add(%c2, %c6) : (i32, i32) -> i32
  return %0 : i32
}
