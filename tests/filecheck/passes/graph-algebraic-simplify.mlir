// RUN: irkit-opt %s -p graph-algebraic-simplify --split-input-file | FileCheck %s
// RUN: irkit-opt %s -p 'graph-algebraic-simplify{fast-math=true}' --split-input-file | FileCheck %s --check-prefix=FAST

// Each rewrite of the pass where it applies, and a near miss where it must not.

// log(softmax(x)) is log_softmax(x), which does not underflow to log(0).
// CHECK-LABEL: func.func @log_of_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<?x10xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.log_softmax %[[X]] {axis = 1 : i64}
// CHECK-NEXT: return %[[R]]
func.func @log_of_softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %1 = graph.log %0 : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}

// -----

// The log of another probability is not a log_softmax.
// CHECK-LABEL: func.func @log_of_sigmoid
// CHECK-NEXT: graph.sigmoid
// CHECK-NEXT: graph.log
// CHECK-NOT: graph.log_softmax
func.func @log_of_sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.log %0 : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// exp(log(x)) is x where x >= +0 is known: a relu, x * x.
// CHECK-LABEL: func.func @exp_of_log_nonnegative
// CHECK-NEXT: %[[R:.*]] = graph.relu
// CHECK-NEXT: %[[S:.*]] = graph.mul %arg0, %arg0
// CHECK-NEXT: return %[[R]], %[[S]]
func.func @exp_of_log_nonnegative(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.log %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.log %3 : (tensor<4xf32>) -> tensor<4xf32>
  %5 = graph.exp %4 : (tensor<4xf32>) -> tensor<4xf32>
  return %2, %5 : tensor<4xf32>, tensor<4xf32>
}

// -----

// x of unknown sign: exp(log(x)) is NaN for x < 0, so it stays; fast-math drops it. So does
// sqrt(y), which is -0.0 for y = -0.0 (exp(log(-0.0)) = +0.0).
// CHECK-LABEL: func.func @exp_of_log_any_sign
// CHECK-NEXT: graph.log %arg0
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.sqrt
// CHECK-NEXT: graph.log
// CHECK-NEXT: graph.exp
// FAST-LABEL: func.func @exp_of_log_any_sign
// FAST-NEXT: %[[S:.*]] = graph.sqrt %arg0
// FAST-NEXT: return %arg0, %[[S]]
func.func @exp_of_log_any_sign(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.log %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.log %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.exp %3 : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %4 : tensor<4xf32>, tensor<4xf32>
}

// -----

// log(exp(x)) is x for x in [-1, 1] (a tanh), where exp cannot overflow.
// CHECK-LABEL: func.func @log_of_exp_bounded
// CHECK-NEXT: %[[T:.*]] = graph.tanh %arg0
// CHECK-NEXT: return %[[T]]
func.func @log_of_exp_bounded(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.tanh %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.exp %0 : (tensor<?xf32>) -> tensor<?xf32>
  %2 = graph.log %1 : (tensor<?xf32>) -> tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// An unbounded x stays: exp(100.0) is inf in f32, and log(inf) is not 100. fast-math drops it.
// CHECK-LABEL: func.func @log_of_exp_unbounded
// CHECK-NEXT: graph.exp %arg0
// CHECK-NEXT: graph.log
// FAST-LABEL: func.func @log_of_exp_unbounded
// FAST-NEXT: return %arg0
func.func @log_of_exp_unbounded(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.exp %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.log %0 : (tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// sum(c * x) = c * sum(x) for a 0-d c; a splat constant divisor becomes a 0-d one; negation
// hoists too.
// CHECK-LABEL: func.func @hoist_from_reductions
// CHECK-SAME: (%[[X:.*]]: tensor<?x10xf32>, %[[C:.*]]: tensor<f32>, %[[Y:.*]]: tensor<4x3xf32>)
// CHECK-DAG: %[[K:.*]] = graph.constant dense<2.500000e+00> : tensor<f32>
// CHECK-DAG: %[[S:.*]] = graph.reduce_sum %[[X]] {axes = array<i64: 0>, keepdims = false} : (tensor<?x10xf32>) -> tensor<10xf32>
// CHECK-DAG: %[[A:.*]] = graph.mul %[[S]], %[[C]] : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
// CHECK-DAG: %[[M:.*]] = graph.reduce_mean %[[Y]] {axes = array<i64: 1>, keepdims = false}
// CHECK-DAG: %[[B:.*]] = graph.div %[[M]], %[[K]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-DAG: %[[T:.*]] = graph.reduce_sum %[[Y]] {axes = array<i64>, keepdims = false}
// CHECK-DAG: %[[N:.*]] = graph.neg %[[T]]
// CHECK: return %[[A]], %[[B]], %[[N]]
func.func @hoist_from_reductions(%x: tensor<?x10xf32>, %c: tensor<f32>, %y: tensor<4x3xf32>)
    -> (tensor<10xf32>, tensor<4xf32>, tensor<f32>) {
  %0 = graph.mul %c, %x : (tensor<f32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>} : (tensor<?x10xf32>) -> tensor<10xf32>
  %k = graph.constant dense<2.5> : tensor<4x3xf32>
  %2 = graph.div %y, %k : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %4 = graph.neg %y : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %5 = graph.reduce_sum %4 : (tensor<4x3xf32>) -> tensor<f32>
  return %1, %3, %5 : tensor<10xf32>, tensor<4xf32>, tensor<f32>
}

// -----

// Not hoisted: the product has another user (it would stay, and the hoisted multiply would
// come on top); the factor is a vector, not one value; c / x is not a factor of x.
// CHECK-LABEL: func.func @no_hoist_from_reductions
// CHECK-NEXT: %[[P:.*]] = graph.mul %arg0, %arg1
// CHECK-NEXT: graph.reduce_sum %[[P]]
// CHECK-NEXT: %[[Q:.*]] = graph.mul %arg0, %arg2
// CHECK-NEXT: graph.reduce_sum %[[Q]]
// CHECK-NEXT: %[[D:.*]] = graph.div %arg1, %arg0
// CHECK-NEXT: graph.reduce_sum %[[D]]
func.func @no_hoist_from_reductions(%x: tensor<4x3xf32>, %c: tensor<f32>, %v: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = graph.mul %x, %c : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %2 = graph.mul %x, %v : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = graph.reduce_sum %2 {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %4 = graph.div %c, %x : (tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %5 = graph.reduce_sum %4 {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %1, %0, %3, %5 : tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// (c * a) @ b = c * (a @ b): the result (?x10) is no larger than the scaled operand (?x64).
// CHECK-LABEL: func.func @hoist_from_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<64x10xf32>, %[[C:.*]]: tensor<f32>)
// CHECK-NEXT: %[[P:.*]] = graph.matmul %[[A]], %[[B]]
// CHECK-NEXT: %[[R:.*]] = graph.mul %[[P]], %[[C]] : (tensor<?x10xf32>, tensor<f32>) -> tensor<?x10xf32>
// CHECK-NEXT: return %[[R]]
func.func @hoist_from_matmul(%a: tensor<?x64xf32>, %b: tensor<64x10xf32>, %c: tensor<f32>)
    -> tensor<?x10xf32> {
  %0 = graph.mul %a, %c : (tensor<?x64xf32>, tensor<f32>) -> tensor<?x64xf32>
  %1 = graph.matmul %0, %b : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  return %1 : tensor<?x10xf32>
}

// -----

// The result (?x128) is larger than the scaled operand (?x10): the multiply stays where it
// costs less.
// CHECK-LABEL: func.func @no_hoist_into_larger_result
// CHECK-NEXT: %[[S:.*]] = graph.mul %arg0, %arg2
// CHECK-NEXT: graph.matmul %[[S]], %arg1
// CHECK-NEXT: return
func.func @no_hoist_into_larger_result(%a: tensor<?x10xf32>, %b: tensor<10x128xf32>,
                                       %c: tensor<f32>) -> tensor<?x128xf32> {
  %0 = graph.mul %a, %c : (tensor<?x10xf32>, tensor<f32>) -> tensor<?x10xf32>
  %1 = graph.matmul %0, %b : (tensor<?x10xf32>, tensor<10x128xf32>) -> tensor<?x128xf32>
  return %1 : tensor<?x128xf32>
}

// -----

// An elementwise op of equally permuted operands (and a 0-d one) is the permuted op; the
// transpose then meets the next one and both cancel.
// CHECK-LABEL: func.func @sink_transpose
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT: %[[E:.*]] = graph.add %[[A]], %[[B]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[F:.*]] = graph.mul %[[E]], %[[S]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[F]]
func.func @sink_transpose(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %s: tensor<f32>)
    -> tensor<2x3xf32> {
  %0 = graph.transpose %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = graph.transpose %b {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = graph.add %0, %1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %3 = graph.mul %2, %s : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %4 = graph.transpose %3 : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// Different permutations, or a non-scalar operand that is no transpose: nothing to sink.
// A transpose with another user stays, so sinking it would add one.
// CHECK-LABEL: func.func @no_sink_transpose
// CHECK-NEXT: %[[T0:.*]] = graph.transpose %arg0 {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT: %[[T1:.*]] = graph.transpose %arg0 {perm = array<i64: 2, 1, 0>}
// CHECK-NEXT: graph.add %[[T0]], %[[T1]]
// CHECK-NEXT: graph.mul %[[T0]], %arg1
// CHECK-NEXT: graph.neg %[[T0]]
func.func @no_sink_transpose(%x: tensor<2x2x2xf32>, %y: tensor<2x2x2xf32>)
    -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %1 = graph.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %2 = graph.add %0, %1 : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %3 = graph.mul %0, %y : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %4 = graph.neg %0 : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %2, %3, %4, %0 : tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>
}

// -----

// Reshapes of one static type to one shape sink below an elementwise op; reshape chains
// compose into one.
// CHECK-LABEL: func.func @sink_reshape
// CHECK-SAME: (%[[A:.*]]: tensor<2x6xf32>, %[[B:.*]]: tensor<2x6xf32>)
// CHECK-NEXT: %[[E:.*]] = graph.sub %[[A]], %[[B]] : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[E]] {shape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
// CHECK-NEXT: return %[[R]]
func.func @sink_reshape(%a: tensor<2x6xf32>, %b: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = graph.reshape %a {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %1 = graph.reshape %b {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %2 = graph.sub %0, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = graph.reshape %2 {shape = array<i64: 12>} : (tensor<3x4xf32>) -> tensor<12xf32>
  return %3 : tensor<12xf32>
}

// -----

// Reshapes from different types regroup differently: they stay.
// CHECK-LABEL: func.func @no_sink_reshape
// CHECK-NEXT: graph.reshape %arg0
// CHECK-NEXT: graph.reshape %arg1
// CHECK-NEXT: graph.sub
func.func @no_sink_reshape(%a: tensor<2x6xf32>, %b: tensor<12xf32>) -> tensor<3x4xf32> {
  %0 = graph.reshape %a {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %1 = graph.reshape %b {shape = array<i64: 3, 4>} : (tensor<12xf32>) -> tensor<3x4xf32>
  %2 = graph.sub %0, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}

// -----

// transpose(transpose(a) @ b) = transpose(b) @ a: the transpose of a cancels, and the one
// left reads a matmul operand.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK-SAME: (%[[A:.*]]: tensor<?x8x4xf32>, %[[B:.*]]: tensor<?x8x5xf32>)
// CHECK-NEXT: %[[BT:.*]] = graph.transpose %[[B]] {perm = array<i64: 0, 2, 1>} : (tensor<?x8x5xf32>) -> tensor<?x5x8xf32>
// CHECK-NEXT: %[[P:.*]] = graph.matmul %[[BT]], %[[A]] : (tensor<?x5x8xf32>, tensor<?x8x4xf32>) -> tensor<?x5x4xf32>
// CHECK-NEXT: return %[[P]]
func.func @transpose_of_matmul(%a: tensor<?x8x4xf32>, %b: tensor<?x8x5xf32>) -> tensor<?x5x4xf32> {
  %0 = graph.transpose %a {perm = array<i64: 0, 2, 1>} : (tensor<?x8x4xf32>) -> tensor<?x4x8xf32>
  %1 = graph.matmul %0, %b : (tensor<?x4x8xf32>, tensor<?x8x5xf32>) -> tensor<?x4x5xf32>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1>} : (tensor<?x4x5xf32>) -> tensor<?x5x4xf32>
  return %2 : tensor<?x5x4xf32>
}

// -----

// Neither operand is a transpose (the rewrite would trade one transpose for two), or the
// product has another user: the transpose stays.
// CHECK-LABEL: func.func @no_transpose_of_matmul
// CHECK-NEXT: %[[P:.*]] = graph.matmul %arg0, %arg1
// CHECK-NEXT: graph.transpose %[[P]]
// CHECK-NEXT: %[[T:.*]] = graph.transpose %arg0
// CHECK-NEXT: %[[Q:.*]] = graph.matmul %[[T]], %arg1
// CHECK-NEXT: graph.transpose %[[Q]]
func.func @no_transpose_of_matmul(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = graph.matmul %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = graph.transpose %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = graph.transpose %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = graph.matmul %2, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = graph.transpose %3 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1, %4, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The mean's cotangent: 1/n broadcast to the dims of x * x, times x. The op broadcasts by
// itself, and x * x has x's shape: the broadcast goes, and x * 1.0 folds to x.
// CHECK-LABEL: func.func @drop_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x32xf32>, %[[S:.*]]: tensor<f32>)
// CHECK-NEXT: %[[R:.*]] = graph.mul %[[S]], %[[X]] : (tensor<f32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
// CHECK-NEXT: return %[[R]], %[[X]]
func.func @drop_broadcast(%x: tensor<?x?x32xf32>, %s: tensor<f32>)
    -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>) {
  %sq = graph.mul %x, %x : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %d0 = graph.dim %sq {axis = 0 : i64} : (tensor<?x?x32xf32>) -> tensor<i64>
  %d1 = graph.dim %sq {axis = -2 : i64} : (tensor<?x?x32xf32>) -> tensor<i64>
  %b = graph.broadcast_to %s, %d0, %d1 {shape = array<i64: -1, -1, 32>} : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<?x?x32xf32>
  %0 = graph.mul %b, %x : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x?x32xf32>) -> tensor<i64>
  %m = graph.dim %x {axis = 1 : i64} : (tensor<?x?x32xf32>) -> tensor<i64>
  %ones = graph.broadcast_to %one, %n, %m {shape = array<i64: -1, -1, 32>} : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<?x?x32xf32>
  %1 = graph.mul %x, %ones : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %0, %1 : tensor<?x?x32xf32>, tensor<?x?x32xf32>
}

// -----

// The dims of x * y, which may be larger than x (y may broadcast x's size-1 axes): the
// broadcast may stretch x, so it stays.
// CHECK-LABEL: func.func @keep_broadcast
// CHECK: graph.broadcast_to
// CHECK: graph.mul %{{.*}}, %arg0
func.func @keep_broadcast(%x: tensor<?x32xf32>, %y: tensor<?x32xf32>, %s: tensor<f32>)
    -> tensor<?x32xf32> {
  %p = graph.mul %x, %y : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  %d = graph.dim %p {axis = 0 : i64} : (tensor<?x32xf32>) -> tensor<i64>
  %b = graph.broadcast_to %s, %d {shape = array<i64: -1, 32>} : (tensor<f32>, tensor<i64>) -> tensor<?x32xf32>
  %0 = graph.mul %b, %x : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// In dataflow form the sizes may come from a switch's untaken branch, where they are DEAD:
// so is the broadcast, and the mul with it. Dropping the broadcast would make the mul run
// there, so it stays (y = x * t has x's shape, as in @drop_broadcast).
// CHECK-LABEL: func.func @keep_broadcast_of_dead_sizes
// CHECK: graph.broadcast_to
// CHECK: graph.mul %{{.*}}, %arg0
func.func @keep_broadcast_of_dead_sizes(%x: tensor<?xf32>, %p: tensor<i1>, %s: tensor<f32>)
    -> tensor<?xf32> {
  %t:2 = graph.switch %s, %p : (tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %y = graph.mul %x, %t#0 : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %d = graph.dim %y {axis = 0 : i64} : (tensor<?xf32>) -> tensor<i64>
  %b = graph.broadcast_to %s, %d {shape = array<i64: -1>} : (tensor<f32>, tensor<i64>) -> tensor<?xf32>
  %0 = graph.mul %b, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
