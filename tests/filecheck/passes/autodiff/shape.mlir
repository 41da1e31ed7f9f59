// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s

// Derivatives of the shape ops. Each is linear, so its gradient is its transpose: the
// inverse permutation, the reshape back, the sum over broadcast axes, slices of a concat's
// cotangent, a concat of a split's, the cotangent inserted into zeros for a slice, and
// scattered (repeats adding up) for a gather. The backward graphs are checked op by op
// (CHECK-NEXT), so anything built in vain (a forward op, a reshape to the type a value
// already has, a graph.dim of a static size) fails the test.

// The inverse of perm [1, 2, 0] is [2, 0, 1]; the forward transpose is not needed.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME:      (%[[X:.*]]: tensor<2x?x4xf32>, %[[S:.*]]: tensor<?x4x2xf32>)
// CHECK-NEXT:    %[[G:.*]] = graph.transpose %[[S]] {perm = array<i64: 2, 0, 1>} : (tensor<?x4x2xf32>) -> tensor<2x?x4xf32>
// CHECK-NEXT:    return %[[G]]
func.func @transpose(%x: tensor<2x?x4xf32>, %s: tensor<?x4x2xf32>) -> tensor<2x?x4xf32> {
  %y = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x?x4xf32>) -> tensor<?x4x2xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x4x2xf32>, tensor<?x4x2xf32>) -> tensor<2x?x4xf32>
  return %g : tensor<2x?x4xf32>
}

// Two transposes back are composed into one.
// CHECK-LABEL: func.func @transpose_twice
// CHECK-SAME:      (%[[X:.*]]: tensor<2x3x4xf32>, %[[S:.*]]: tensor<4x2x3xf32>)
// CHECK-NEXT:    %[[G:.*]] = graph.transpose %[[S]] {perm = array<i64: 1, 2, 0>}
// CHECK-NEXT:    return %[[G]]
func.func @transpose_twice(%x: tensor<2x3x4xf32>, %s: tensor<4x2x3xf32>) -> tensor<2x3x4xf32> {
  %t = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %y = graph.transpose %t {perm = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  return %g : tensor<2x3x4xf32>
}

// One unknown size of x: the reshape back infers it (-1), no graph.dim.
// CHECK-LABEL: func.func @reshape_flatten
// CHECK-SAME:      (%[[X:.*]]: tensor<?x28x28xf32>, %[[S:.*]]: tensor<?x784xf32>)
// CHECK-NEXT:    %[[G:.*]] = graph.reshape %[[S]] {shape = array<i64: -1, 28, 28>} : (tensor<?x784xf32>) -> tensor<?x28x28xf32>
// CHECK-NEXT:    return %[[G]]
func.func @reshape_flatten(%x: tensor<?x28x28xf32>, %s: tensor<?x784xf32>) -> tensor<?x28x28xf32> {
  %y = graph.reshape %x {shape = array<i64: -1, 784>} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x784xf32>, tensor<?x784xf32>) -> tensor<?x28x28xf32>
  return %g : tensor<?x28x28xf32>
}

// [B, T, 64] -> [B * T, 64]: the way back needs both run-time sizes, read from x.
// CHECK-LABEL: func.func @reshape_two_unknown
// CHECK-SAME:      (%[[X:.*]]: tensor<?x?x64xf32>, %[[S:.*]]: tensor<?x64xf32>)
// CHECK-NEXT:    %[[B:.*]] = graph.dim %[[X]] {axis = 0 : i64}
// CHECK-NEXT:    %[[T:.*]] = graph.dim %[[X]] {axis = 1 : i64}
// CHECK-NEXT:    %[[G:.*]] = graph.reshape %[[S]], %[[B]], %[[T]] {shape = array<i64: -1, -1, 64>} : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>
// CHECK-NEXT:    return %[[G]]
func.func @reshape_two_unknown(%x: tensor<?x?x64xf32>, %s: tensor<?x64xf32>) -> tensor<?x?x64xf32> {
  %y = graph.reshape %x {shape = array<i64: -1, 64>} : (tensor<?x?x64xf32>) -> tensor<?x64xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x?x64xf32>
  return %g : tensor<?x?x64xf32>
}

// A new leading axis is summed away, a stretched size-1 axis summed with keepdims; nothing
// flows into the size operand, and no reshape is needed after the sums.
// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME:      (%[[B:.*]]: tensor<10xf32>, %[[C:.*]]: tensor<1x10xf32>, %[[X:.*]]: tensor<?x784xf32>, %[[S:.*]]: tensor<?x10xf32>)
// CHECK-NEXT:    %[[DC:.*]] = graph.reduce_sum %[[S]] {axes = array<i64: 0>, keepdims = true} : (tensor<?x10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.reduce_sum %[[S]] {axes = array<i64: 0>, keepdims = false} : (tensor<?x10xf32>) -> tensor<10xf32>
// CHECK-NEXT:    return %[[DB]], %[[DC]]
func.func @broadcast_to(%b: tensor<10xf32>, %c: tensor<1x10xf32>, %x: tensor<?x784xf32>, %s: tensor<?x10xf32>) -> (tensor<10xf32>, tensor<1x10xf32>) {
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  %y = graph.broadcast_to %b, %n {shape = array<i64: -1, 10>} : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>
  %z = graph.broadcast_to %c, %n {shape = array<i64: -1, 10>} : (tensor<1x10xf32>, tensor<i64>) -> tensor<?x10xf32>
  %g:2 = autodiff.grad %y, %z seed %s, %s wrt %b, %c : (tensor<?x10xf32>, tensor<?x10xf32>, tensor<?x10xf32>, tensor<?x10xf32>) -> (tensor<10xf32>, tensor<1x10xf32>)
  return %g#0, %g#1 : tensor<10xf32>, tensor<1x10xf32>
}

// Each input's part of the cotangent is sliced out at static offsets.
// CHECK-LABEL: func.func @concat
// CHECK-SAME:      (%[[A:.*]]: tensor<?x3xf32>, %[[B:.*]]: tensor<?x5xf32>, %[[S:.*]]: tensor<?x8xf32>)
// CHECK-NEXT:    %[[DA:.*]] = graph.slice %[[S]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>, stops = array<i64: 9223372036854775807, 3>} : (tensor<?x8xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.slice %[[S]] {starts = array<i64: 0, 3>, steps = array<i64: 1, 1>, stops = array<i64: 9223372036854775807, 8>} : (tensor<?x8xf32>) -> tensor<?x5xf32>
// CHECK-NEXT:    return %[[DA]], %[[DB]]
func.func @concat(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>, %s: tensor<?x8xf32>) -> (tensor<?x3xf32>, tensor<?x5xf32>) {
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
  %g:2 = autodiff.grad %y seed %s wrt %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> (tensor<?x3xf32>, tensor<?x5xf32>)
  return %g#0, %g#1 : tensor<?x3xf32>, tensor<?x5xf32>
}

// One input of unknown size along the axis: the parts after it are cut from the back, and
// no size is read at run time.
// CHECK-LABEL: func.func @concat_one_unknown
// CHECK-SAME:      (%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<?x4xf32>, %[[C:.*]]: tensor<3x4xf32>, %[[S:.*]]: tensor<?x4xf32>)
// CHECK-NEXT:    %[[DA:.*]] = graph.slice %[[S]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>, stops = array<i64: 2, 9223372036854775807>} : (tensor<?x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.slice %[[S]] {starts = array<i64: 2, 0>, steps = array<i64: 1, 1>, stops = array<i64: -3, 9223372036854775807>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[DC:.*]] = graph.slice %[[S]] {starts = array<i64: -3, 0>, steps = array<i64: 1, 1>, stops = array<i64: 9223372036854775807, 9223372036854775807>} : (tensor<?x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    return %[[DA]], %[[DB]], %[[DC]]
func.func @concat_one_unknown(%a: tensor<2x4xf32>, %b: tensor<?x4xf32>, %c: tensor<3x4xf32>, %s: tensor<?x4xf32>) -> (tensor<2x4xf32>, tensor<?x4xf32>, tensor<3x4xf32>) {
  %y = graph.concat %a, %b, %c {axis = 0 : i64} : (tensor<2x4xf32>, tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %g:3 = autodiff.grad %y seed %s wrt %a, %b, %c : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<2x4xf32>, tensor<?x4xf32>, tensor<3x4xf32>)
  return %g#0, %g#1, %g#2 : tensor<2x4xf32>, tensor<?x4xf32>, tensor<3x4xf32>
}

// Two: the offsets are known at run time only, so the cotangent is split into parts of the
// inputs' sizes (the static one's a constant).
// CHECK-LABEL: func.func @concat_unknown_sizes
// CHECK-SAME:      (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<2x4xf32>, %[[C:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<?x4xf32>)
// CHECK-NEXT:    %[[TWO:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK-NEXT:    %[[NA:.*]] = graph.dim %[[A]] {axis = 0 : i64}
// CHECK-NEXT:    %[[NC:.*]] = graph.dim %[[C]] {axis = 0 : i64}
// CHECK-NEXT:    %[[G:.*]]:3 = graph.split %[[S]], %[[NA]], %[[TWO]], %[[NC]] {axis = 0 : i64, sections = 3 : i64} : (tensor<?x4xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>)
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @concat_unknown_sizes(%a: tensor<?x4xf32>, %b: tensor<2x4xf32>, %c: tensor<?x4xf32>, %s: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>) {
  %y = graph.concat %a, %b, %c {axis = 0 : i64} : (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %g:3 = autodiff.grad %y seed %s wrt %a, %b, %c : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>)
  return %g#0, %g#1, %g#2 : tensor<?x4xf32>, tensor<2x4xf32>, tensor<?x4xf32>
}

// Only the second part is used: the first part's zeros (a constant, as the type is
// static) stand in for its missing cotangent.
// CHECK-LABEL: func.func @split_one_part
// CHECK-SAME:      (%[[X:.*]]: tensor<4x6xf32>, %[[S:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.concat %[[Z]], %[[S]] {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
// CHECK-NEXT:    return %[[G]]
func.func @split_one_part(%x: tensor<4x6xf32>, %s: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %p:2 = graph.split %x {axis = 1 : i64, sections = 2 : i64} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %g = autodiff.grad %p#1 seed %s wrt %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// x[:, 1:5:2]: the cotangent goes back to columns 1 and 3 of zeros shaped like x at run time.
// CHECK-LABEL: func.func @slice
// CHECK-SAME:      (%[[X:.*]]: tensor<?x6xf32>, %[[S:.*]]: tensor<?x2xf32>)
// CHECK-NEXT:    %[[Z:.*]] = graph.zeros_like %[[X]]
// CHECK-NEXT:    %[[G:.*]] = graph.insert_slice %[[S]], %[[Z]] {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>, stops = array<i64: 9223372036854775807, 5>} : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
// CHECK-NEXT:    return %[[G]]
func.func @slice(%x: tensor<?x6xf32>, %s: tensor<?x2xf32>) -> tensor<?x6xf32> {
  %y = graph.slice %x {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x6xf32>
  return %g : tensor<?x6xf32>
}

// An embedding's gradient: the cotangent rows added into zeros at the looked-up rows.
// CHECK-LABEL: func.func @gather
// CHECK-SAME:      (%[[T:.*]]: tensor<1000x64xf32>, %[[I:.*]]: tensor<?x16xi32>, %[[S:.*]]: tensor<?x16x64xf32>)
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<1000x64xf32>
// CHECK-NEXT:    %[[G:.*]] = graph.scatter_add %[[Z]], %[[I]], %[[S]] : (tensor<1000x64xf32>, tensor<?x16xi32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
// CHECK-NEXT:    return %[[G]]
func.func @gather(%t: tensor<1000x64xf32>, %ids: tensor<?x16xi32>, %s: tensor<?x16x64xf32>) -> tensor<1000x64xf32> {
  %y = graph.gather %t, %ids : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
  %g = autodiff.grad %y seed %s wrt %t : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
  return %g : tensor<1000x64xf32>
}

// Forward mode needs no rule: the linear ops applied to the tangents (zeros for %a, which
// does not move). The forward split and concat are not needed.
// CHECK-LABEL: func.func @jvp
// CHECK-SAME:      (%[[X:.*]]: tensor<?x6xf32>, %[[A:.*]]: tensor<?x2xf32>, %[[TX:.*]]: tensor<?x6xf32>)
// CHECK-NEXT:    %[[P:.*]]:3 = graph.split %[[TX]] {axis = 1 : i64, sections = 3 : i64}
// CHECK-NEXT:    %[[Z:.*]] = graph.zeros_like %[[A]]
// CHECK-NEXT:    %[[T:.*]] = graph.concat %[[P]]#2, %[[Z]] {axis = 1 : i64}
// CHECK-NEXT:    return %[[T]]
func.func @jvp(%x: tensor<?x6xf32>, %a: tensor<?x2xf32>, %tx: tensor<?x6xf32>) -> tensor<?x4xf32> {
  %p:3 = graph.split %x {axis = 1 : i64, sections = 3 : i64} : (tensor<?x6xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
  %y = graph.concat %p#2, %a {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %t = autodiff.jvp %y wrt %x along %tx : (tensor<?x6xf32>) -> tensor<?x4xf32>
  return %t : tensor<?x4xf32>
}

// The transpose of the transpose is the op again: differentiating the slice's gradient
// with respect to its seed gives the slice of the new seed (slice(insert_slice) folds).
// CHECK-LABEL: func.func @slice_grad_of_grad
// CHECK-SAME:      (%[[X:.*]]: tensor<?x6xf32>, %[[S:.*]]: tensor<?x2xf32>, %[[W:.*]]: tensor<?x6xf32>)
// CHECK-NEXT:    %[[H:.*]] = graph.slice %[[W]] {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>, stops = array<i64: 9223372036854775807, 5>}
// CHECK-NEXT:    return %[[H]]
func.func @slice_grad_of_grad(%x: tensor<?x6xf32>, %s: tensor<?x2xf32>, %w: tensor<?x6xf32>) -> tensor<?x2xf32> {
  %y = graph.slice %x {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x6xf32>
  %h = autodiff.grad %g seed %w wrt %s : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x2xf32>
  return %h : tensor<?x2xf32>
}

// Likewise scatter_add's transpose in its updates is a gather.
// CHECK-LABEL: func.func @gather_grad_of_grad
// CHECK-SAME:      (%[[T:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<?xi64>, %[[S:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<10x4xf32>)
// CHECK-NEXT:    %[[H:.*]] = graph.gather %[[W]], %[[I]]
// CHECK-NEXT:    return %[[H]]
func.func @gather_grad_of_grad(%t: tensor<10x4xf32>, %ids: tensor<?xi64>, %s: tensor<?x4xf32>, %w: tensor<10x4xf32>) -> tensor<?x4xf32> {
  %y = graph.gather %t, %ids : (tensor<10x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  %g = autodiff.grad %y seed %s wrt %t : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<10x4xf32>
  %h = autodiff.grad %g seed %w wrt %s : (tensor<10x4xf32>, tensor<10x4xf32>) -> tensor<?x4xf32>
  return %h : tensor<?x4xf32>
}

// one_hot is not differentiable, and a gradient that does not pass through it leaves it
// alone: only x's part of the concat's cotangent is taken, and the forward one_hot is gone.
// CHECK-LABEL: func.func @one_hot_passed_by
// CHECK-SAME:      (%[[L:.*]]: tensor<?xi64>, %[[X:.*]]: tensor<?x2xf32>, %[[S:.*]]: tensor<?x12xf32>)
// CHECK-NEXT:    %[[G:.*]] = graph.slice %[[S]] {starts = array<i64: 0, 10>
// CHECK-NEXT:    return %[[G]]
func.func @one_hot_passed_by(%labels: tensor<?xi64>, %x: tensor<?x2xf32>, %s: tensor<?x12xf32>) -> tensor<?x2xf32> {
  %h = graph.one_hot %labels {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
  %y = graph.concat %h, %x {axis = 1 : i64} : (tensor<?x10xf32>, tensor<?x2xf32>) -> tensor<?x12xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x2xf32>
  return %g : tensor<?x2xf32>
}
