// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every shape op in its custom form, round-tripped; dynamic sizes (`?`) flow through the
// inferred result types the verifier checks.

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x4xf32>)
func.func @transpose(%x: tensor<2x?x4xf32>) -> (tensor<?x4x2xf32>, tensor<4x?x2xf32>) {
  // CHECK: graph.transpose %[[X]] {perm = array<i64: 1, 2, 0>} : (tensor<2x?x4xf32>) -> tensor<?x4x2xf32>
  // GENERIC: "graph.transpose"(%{{.*}}) <{perm = array<i64: 1, 2, 0>}> : (tensor<2x?x4xf32>) -> tensor<?x4x2xf32>
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x?x4xf32>) -> tensor<?x4x2xf32>
  // The default permutation reverses the axes.
  // CHECK: graph.transpose %[[X]] {perm = array<i64>} : (tensor<2x?x4xf32>) -> tensor<4x?x2xf32>
  %1 = graph.transpose %x : (tensor<2x?x4xf32>) -> tensor<4x?x2xf32>
  return %0, %1 : tensor<?x4x2xf32>, tensor<4x?x2xf32>
}

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<?x28x28xf32>, %[[Y:.*]]: tensor<3x4xi32>)
func.func @reshape(%x: tensor<?x28x28xf32>, %y: tensor<3x4xi32>) -> (tensor<?x784xf32>, tensor<2x6xi32>, tensor<12xi32>) {
  // CHECK: graph.reshape %[[X]] {shape = array<i64: -1, 784>} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  %0 = graph.reshape %x {shape = array<i64: -1, 784>} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  // CHECK: graph.reshape %[[Y]] {shape = array<i64: 2, -1>} : (tensor<3x4xi32>) -> tensor<2x6xi32>
  %1 = graph.reshape %y {shape = array<i64: 2, -1>} : (tensor<3x4xi32>) -> tensor<2x6xi32>
  // CHECK: graph.reshape %[[Y]] {shape = array<i64: 12>} : (tensor<3x4xi32>) -> tensor<12xi32>
  %2 = graph.reshape %y {shape = array<i64: 12>} : (tensor<3x4xi32>) -> tensor<12xi32>
  return %0, %1, %2 : tensor<?x784xf32>, tensor<2x6xi32>, tensor<12xi32>
}

// With size operands, each -1 is the next one: a regrouping into several run-time sizes.
// CHECK-LABEL: func.func @reshape_sizes
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<i64>, %[[T:.*]]: tensor<i64>)
func.func @reshape_sizes(%x: tensor<?x64xf32>, %b: tensor<i64>, %t: tensor<i64>) -> tensor<?x?x64xf32> {
  // CHECK: graph.reshape %[[X]], %[[B]], %[[T]] {shape = array<i64: -1, -1, 64>} : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>
  // GENERIC: "graph.reshape"(%{{.*}}, %{{.*}}, %{{.*}}) <{shape = array<i64: -1, -1, 64>}> : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>
  %0 = graph.reshape %x, %b, %t {shape = array<i64: -1, -1, 64>} : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// graph.dim reads a run-time size; graph.broadcast_to takes it for its -1 entry.
// CHECK-LABEL: func.func @dim_broadcast_to
// CHECK-SAME: (%[[X:.*]]: tensor<?x784xf32>, %[[B:.*]]: tensor<10xf32>, %[[S:.*]]: tensor<f32>)
func.func @dim_broadcast_to(%x: tensor<?x784xf32>, %b: tensor<10xf32>, %s: tensor<f32>) -> (tensor<?x10xf32>, tensor<3x2xf32>) {
  // CHECK: %[[N:.*]] = graph.dim %[[X]] {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  // GENERIC: "graph.dim"(%{{.*}}) <{axis = 0 : i64}> : (tensor<?x784xf32>) -> tensor<i64>
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>
  // CHECK: graph.broadcast_to %[[B]], %[[N]] {shape = array<i64: -1, 10>} : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>
  // GENERIC: "graph.broadcast_to"(%{{.*}}, %{{.*}}) <{shape = array<i64: -1, 10>}> : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>
  %0 = graph.broadcast_to %b, %n {shape = array<i64: -1, 10>} : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>
  // CHECK: graph.broadcast_to %[[S]] {shape = array<i64: 3, 2>} : (tensor<f32>) -> tensor<3x2xf32>
  %1 = graph.broadcast_to %s {shape = array<i64: 3, 2>} : (tensor<f32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<?x10xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @concat_split
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<?x5xf32>)
func.func @concat_split(%a: tensor<2x3xf32>, %b: tensor<?x5xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[C:.*]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<?x5xf32>) -> tensor<2x8xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<?x5xf32>) -> tensor<2x8xf32>
  // CHECK: %[[P:.*]]:2 = graph.split %[[C]] {axis = -1 : i64, sections = 2 : i64} : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // GENERIC: "graph.split"(%{{.*}}) <{axis = -1 : i64, sections = 2 : i64}> : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %p:2 = graph.split %c {axis = -1 : i64, sections = 2 : i64} : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK: return %[[C]], %[[P]]#0, %[[P]]#1
  return %c, %p#0, %p#1 : tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A split's default axis is 0; a dynamic axis splits into parts of unknown size.
// CHECK-LABEL: func.func @split_dynamic
func.func @split_dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK: graph.split %{{.*}} {axis = 0 : i64, sections = 3 : i64} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  %p:3 = graph.split %x {sections = 3 : i64} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %p#2 : tensor<?x4xf32>
}

// A split into parts of run-time sizes, one size operand per part.
// CHECK-LABEL: func.func @split_sizes
// CHECK-SAME: (%[[X:.*]]: tensor<?x6xf32>, %[[M:.*]]: tensor<i64>, %[[N:.*]]: tensor<i64>)
func.func @split_sizes(%x: tensor<?x6xf32>, %m: tensor<i64>, %n: tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: %[[P:.*]]:2 = graph.split %[[X]], %[[M]], %[[N]] {axis = 0 : i64, sections = 2 : i64} : (tensor<?x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  // GENERIC: "graph.split"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 0 : i64, sections = 2 : i64}> : (tensor<?x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  %p:2 = graph.split %x, %m, %n {sections = 2 : i64} : (tensor<?x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  return %p#0, %p#1 : tensor<?x6xf32>, tensor<?x6xf32>
}

// Python slices: x[:, 1:5:2], x[::-1, -2:], and a whole dynamic axis kept whole.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<?x6xf32>, %[[Y:.*]]: tensor<4x6xf32>)
func.func @slice(%x: tensor<?x6xf32>, %y: tensor<4x6xf32>) -> (tensor<?x2xf32>, tensor<4x2xf32>) {
  // CHECK: graph.slice %[[X]] {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>, stops = array<i64: 9223372036854775807, 5>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  %0 = graph.slice %x {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  // CHECK: graph.slice %[[Y]] {starts = array<i64: -1, -2>, steps = array<i64: -1, 1>, stops = array<i64: -9223372036854775808, 9223372036854775807>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %1 = graph.slice %y {starts = array<i64: -1, -2>, stops = array<i64: -9223372036854775808, 9223372036854775807>, steps = array<i64: -1, 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<?x2xf32>, tensor<4x2xf32>
}

// CHECK-LABEL: func.func @one_hot_gather
// CHECK-SAME: (%[[L:.*]]: tensor<?xi64>, %[[T:.*]]: tensor<1000x64xf32>, %[[I:.*]]: tensor<?x16xi32>)
func.func @one_hot_gather(%labels: tensor<?xi64>, %table: tensor<1000x64xf32>, %ids: tensor<?x16xi32>) -> (tensor<?x10xf32>, tensor<?x16x64xf32>) {
  // CHECK: graph.one_hot %[[L]] {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
  %0 = graph.one_hot %labels {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
  // CHECK: graph.gather %[[T]], %[[I]] : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
  // GENERIC: "graph.gather"(%{{.*}}, %{{.*}}) : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
  %1 = graph.gather %table, %ids : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
  return %0, %1 : tensor<?x10xf32>, tensor<?x16x64xf32>
}

// A depth known at run time: depth = -1 takes the size operand.
// CHECK-LABEL: func.func @one_hot_sized
// CHECK: graph.one_hot %{{.*}}, %{{.*}} {depth = -1 : i64} : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>
func.func @one_hot_sized(%labels: tensor<?xi64>, %n: tensor<i64>) -> tensor<?x?xf32> {
  %0 = graph.one_hot %labels, %n {depth = -1 : i64} : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// The transposes of slice and gather: insert_slice puts src at x[:, 1:5:2] of dest;
// scatter_add adds rows into dest at the indices.
// CHECK-LABEL: func.func @insert_slice_scatter_add
// CHECK-SAME: (%[[S:.*]]: tensor<?x2xf32>, %[[D:.*]]: tensor<?x6xf32>, %[[T:.*]]: tensor<1000x64xf32>, %[[I:.*]]: tensor<?x16xi32>, %[[R:.*]]: tensor<?x16x64xf32>)
func.func @insert_slice_scatter_add(%s: tensor<?x2xf32>, %d: tensor<?x6xf32>, %t: tensor<1000x64xf32>, %ids: tensor<?x16xi32>, %rows: tensor<?x16x64xf32>) -> (tensor<?x6xf32>, tensor<1000x64xf32>) {
  // CHECK: graph.insert_slice %[[S]], %[[D]] {starts = array<i64: 0, 1>, steps = array<i64: 1, 2>, stops = array<i64: 9223372036854775807, 5>} : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  // GENERIC: "graph.insert_slice"(%{{.*}}, %{{.*}}) <{starts = array<i64: 0, 1>, steps = array<i64: 1, 2>, stops = array<i64: 9223372036854775807, 5>}> : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x2xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  // CHECK: graph.scatter_add %[[T]], %[[I]], %[[R]] : (tensor<1000x64xf32>, tensor<?x16xi32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
  // GENERIC: "graph.scatter_add"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1000x64xf32>, tensor<?x16xi32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
  %1 = graph.scatter_add %t, %ids, %rows : (tensor<1000x64xf32>, tensor<?x16xi32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>
  return %0, %1 : tensor<?x6xf32>, tensor<1000x64xf32>
}
