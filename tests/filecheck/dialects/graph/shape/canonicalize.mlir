// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// Canonicalization of the shape ops: folds to an existing value or a constant, and the
// transpose / reshape chains collapsed by their patterns.

// transpose(transpose(x, p), q) = transpose(x, r) with r[i] = p[q[i]]; here r is the identity.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: graph.transpose
// CHECK: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// p = [1, 0, 2], q = [0, 2, 1]: r = [p[0], p[2], p[1]] = [1, 2, 0].
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.transpose %[[X]] {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NOT: graph.transpose
// CHECK: return %[[R]]
func.func @transpose_compose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  return %1 : tensor<3x4x2xf32>
}

// Two default (reversing) transposes cancel; an identity permutation is x.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-NOT: graph.transpose
// CHECK: return %[[X]], %[[X]]
func.func @transpose_identity(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %0 = graph.transpose %x : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %1 = graph.transpose %0 : (tensor<3x?xf32>) -> tensor<?x3xf32>
  %2 = graph.transpose %x {perm = array<i64: 0, 1>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1, %2 : tensor<?x3xf32>, tensor<?x3xf32>
}

// A transpose of a constant folds to the transposed constant.
// CHECK-LABEL: func.func @transpose_constant
// CHECK: %[[C:.*]] = graph.constant dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi32>
// CHECK-NOT: graph.transpose
// CHECK: return %[[C]]
func.func @transpose_constant() -> tensor<2x2xi32> {
  %c = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %0 = graph.transpose %c : (tensor<2x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// reshape(reshape(x, s1), s2) = reshape(x, s2): only the row-major order matters.
// CHECK-LABEL: func.func @reshape_compose
// CHECK-SAME: (%[[X:.*]]: tensor<?x28x28xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]] {shape = array<i64: -1, 784>} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
// CHECK-NOT: graph.reshape
// CHECK: return %[[R]]
func.func @reshape_compose(%x: tensor<?x28x28xf32>) -> tensor<?x784xf32> {
  %0 = graph.reshape %x {shape = array<i64: -1, 14, 56>} : (tensor<?x28x28xf32>) -> tensor<?x14x56xf32>
  %1 = graph.reshape %0 {shape = array<i64: -1, 784>} : (tensor<?x14x56xf32>) -> tensor<?x784xf32>
  return %1 : tensor<?x784xf32>
}

// A reshape chain back to x's static type is x; a reshape of a dynamic type is kept (the
// sizes might not match at run time).
// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[Y:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[Y]] {shape = array<i64: -1, 4>}
// CHECK-NOT: graph.reshape
// CHECK: return %[[X]], %[[R]]
func.func @reshape_identity(%x: tensor<3x4xf32>, %y: tensor<?x4xf32>) -> (tensor<3x4xf32>, tensor<?x4xf32>) {
  %0 = graph.reshape %x {shape = array<i64: 12>} : (tensor<3x4xf32>) -> tensor<12xf32>
  %1 = graph.reshape %0 {shape = array<i64: 3, 4>} : (tensor<12xf32>) -> tensor<3x4xf32>
  %2 = graph.reshape %y {shape = array<i64: -1, 4>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %1, %2 : tensor<3x4xf32>, tensor<?x4xf32>
}

// dim of a static axis is a constant; of a dynamic axis it stays.
// CHECK-LABEL: func.func @dim_static
// CHECK-SAME: (%[[X:.*]]: tensor<?x784xf32>)
// CHECK-DAG: %[[C:.*]] = graph.constant dense<784> : tensor<i64>
// CHECK-DAG: %[[N:.*]] = graph.dim %[[X]] {axis = 0 : i64}
// CHECK: return %[[N]], %[[C]]
func.func @dim_static(%x: tensor<?x784xf32>) -> (tensor<i64>, tensor<i64>) {
  %0 = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  %1 = graph.dim %x {axis = -1 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  return %0, %1 : tensor<i64>, tensor<i64>
}

// broadcast_to x's own static type is x; a splat constant broadcasts to a splat constant
// of the new type, however large (it is stored as one element).
// CHECK-LABEL: func.func @broadcast_to_fold
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[C:.*]] = graph.constant dense<5.000000e-01> : tensor<1000x1000xf32>
// CHECK-NOT: graph.broadcast_to
// CHECK: return %[[X]], %[[C]]
func.func @broadcast_to_fold(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1000x1000xf32>) {
  %0 = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = graph.constant dense<0.5> : tensor<1000xf32>
  %1 = graph.broadcast_to %h {shape = array<i64: 1000, 1000>} : (tensor<1000xf32>) -> tensor<1000x1000xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<1000x1000xf32>
}

// A dynamic broadcast of a splat keeps its op: the result type is not static.
// CHECK-LABEL: func.func @broadcast_to_dynamic
// CHECK: graph.broadcast_to
func.func @broadcast_to_dynamic(%x: tensor<?x784xf32>) -> tensor<?x10xf32> {
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  %z = graph.constant dense<0.0> : tensor<10xf32>
  %0 = graph.broadcast_to %z, %n {shape = array<i64: -1, 10>} : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// Slices keeping every element in order are x: [0:END] of a dynamic axis, and on a static
// axis any bounds that clamp to the whole range (a reversed size-1 axis too).
// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x5xf32>)
// CHECK-NEXT: %[[S:.*]] = graph.slice %[[X]] {starts = array<i64: 0, 0, 1>
// CHECK-NOT: graph.slice
// CHECK: return %[[X]], %[[S]]
func.func @slice_whole(%x: tensor<?x1x5xf32>) -> (tensor<?x1x5xf32>, tensor<?x1x4xf32>) {
  %0 = graph.slice %x {starts = array<i64: 0, -1, -100>, stops = array<i64: 9223372036854775807, -9223372036854775808, 100>, steps = array<i64: 1, -1, 1>} : (tensor<?x1x5xf32>) -> tensor<?x1x5xf32>
  %1 = graph.slice %x {starts = array<i64: 0, 0, 1>, stops = array<i64: 9223372036854775807, 1, 5>, steps = array<i64: 1, 1, 1>} : (tensor<?x1x5xf32>) -> tensor<?x1x4xf32>
  return %0, %1 : tensor<?x1x5xf32>, tensor<?x1x4xf32>
}

// concat of one input and split into one section are the input.
// CHECK-LABEL: func.func @concat_split_single
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>)
// CHECK-NOT: graph.concat
// CHECK-NOT: graph.split
// CHECK: return %[[X]], %[[X]]
func.func @concat_split_single(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %0 = graph.concat %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = graph.split %x {axis = 0 : i64, sections = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<?x3xf32>
}

// The composed reshape keeps the outer reshape's size operands.
// CHECK-LABEL: func.func @reshape_compose_sizes
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>, %[[B:.*]]: tensor<i64>, %[[T:.*]]: tensor<i64>)
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[X]], %[[B]], %[[T]] {shape = array<i64: -1, -1, 4>} : (tensor<?x?x4xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_compose_sizes(%x: tensor<?x?x4xf32>, %b: tensor<i64>, %t: tensor<i64>) -> tensor<?x?x4xf32> {
  %0 = graph.reshape %x {shape = array<i64: -1, 4>} : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
  %1 = graph.reshape %0, %b, %t {shape = array<i64: -1, -1, 4>} : (tensor<?x4xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x4xf32>
  return %1 : tensor<?x?x4xf32>
}

// With size operands and constants, a reshape or split whose result types are written
// static folds to constants; sizes that do not add up are left for run time to report.
// CHECK-LABEL: func.func @sized_constant_folds
// CHECK-DAG: %[[R:.*]] = graph.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-DAG: %[[P0:.*]] = graph.constant dense<1> : tensor<1xi32>
// CHECK-DAG: %[[P1:.*]] = graph.constant dense<[2, 3, 4, 5, 6]> : tensor<5xi32>
// CHECK-DAG: %[[BAD:.*]]:2 = graph.split
// CHECK: return %[[R]], %[[P0]], %[[P1]], %[[BAD]]#0
func.func @sized_constant_folds() -> (tensor<2x3xi32>, tensor<1xi32>, tensor<5xi32>, tensor<1xi32>) {
  %c = graph.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %two = graph.constant dense<2> : tensor<i64>
  %three = graph.constant dense<3> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %five = graph.constant dense<5> : tensor<i64>
  %r = graph.reshape %c, %two, %three {shape = array<i64: -1, -1>} : (tensor<6xi32>, tensor<i64>, tensor<i64>) -> tensor<2x3xi32>
  %p:2 = graph.split %c, %one, %five {sections = 2 : i64} : (tensor<6xi32>, tensor<i64>, tensor<i64>) -> (tensor<1xi32>, tensor<5xi32>)
  %q:2 = graph.split %c, %one, %three {sections = 2 : i64} : (tensor<6xi32>, tensor<i64>, tensor<i64>) -> (tensor<1xi32>, tensor<3xi32>)
  return %r, %p#0, %p#1, %q#0 : tensor<2x3xi32>, tensor<1xi32>, tensor<5xi32>, tensor<1xi32>
}

// slice(insert_slice(src, dest, bounds), bounds) is src; an insert over all of dest is src.
// CHECK-LABEL: func.func @insert_slice_fold
// CHECK-SAME: (%[[S:.*]]: tensor<?x2xf32>, %[[D:.*]]: tensor<?x6xf32>, %[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>)
// CHECK-NOT: graph.slice
// CHECK-NOT: graph.insert_slice
// CHECK: return %[[S]], %[[A]]
func.func @insert_slice_fold(%s: tensor<?x2xf32>, %d: tensor<?x6xf32>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<?x2xf32>, tensor<2x3xf32>) {
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %1 = graph.slice %0 {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  %2 = graph.insert_slice %a, %b {starts = array<i64: 0, -100>, stops = array<i64: 2, 100>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1, %2 : tensor<?x2xf32>, tensor<2x3xf32>
}

// A slice at other bounds, or an insert that leaves part of dest, stays.
// CHECK-LABEL: func.func @insert_slice_kept
// CHECK: graph.insert_slice
// CHECK: graph.slice
// CHECK: graph.insert_slice
func.func @insert_slice_kept(%s: tensor<?x2xf32>, %d: tensor<?x6xf32>, %a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> (tensor<?x2xf32>, tensor<2x3xf32>) {
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %1 = graph.slice %0 {starts = array<i64: 0, 0>, stops = array<i64: 9223372036854775807, 4>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  %2 = graph.insert_slice %a, %b {starts = array<i64: 0, 1>, stops = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1, %2 : tensor<?x2xf32>, tensor<2x3xf32>
}

// Constant operands fold: rows picked twice add up (row 1 gets 10 + 20 + 30); an index out
// of range is left for run time to report.
// CHECK-LABEL: func.func @scatter_add_constant
// CHECK-DAG: %[[C:.*]] = graph.constant dense<[1, 62, 3]> : tensor<3xi32>
// CHECK-DAG: %[[BAD:.*]] = graph.scatter_add
// CHECK: return %[[C]], %[[BAD]]
func.func @scatter_add_constant() -> (tensor<3xi32>, tensor<3xi32>) {
  %d = graph.constant dense<[1, 2, 3]> : tensor<3xi32>
  %i = graph.constant dense<[1, -2, 1]> : tensor<3xi64>
  %u = graph.constant dense<[10, 20, 30]> : tensor<3xi32>
  %out = graph.constant dense<[1, 3, 1]> : tensor<3xi64>
  %0 = graph.scatter_add %d, %i, %u : (tensor<3xi32>, tensor<3xi64>, tensor<3xi32>) -> tensor<3xi32>
  %1 = graph.scatter_add %d, %out, %u : (tensor<3xi32>, tensor<3xi64>, tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}
