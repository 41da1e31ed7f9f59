// RUN: irkit-opt %s -p graph-merge-matmuls | FileCheck %s

graph.variable @wq : tensor<32x32xf32> init normal {seed = 1 : i64}
graph.variable @wk : tensor<32x32xf32> init normal {seed = 2 : i64}
graph.variable @wv : tensor<32x32xf32> init normal {seed = 3 : i64}

// An attention block's projections: q, k, v read x @ wq, x @ wk, x @ wv. They become one
// matmul on the weights' reads concatenated along N and a split into three parts along
// the result's last axis, each typed as the matmul it replaces.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x32xf32>)
// CHECK: %[[Q:.*]] = graph.read @wq
// CHECK: %[[K:.*]] = graph.read @wk
// CHECK: %[[V:.*]] = graph.read @wv
// CHECK-NEXT: %[[W:.*]] = graph.concat %[[Q]], %[[K]], %[[V]] {axis = 1 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x96xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.matmul %[[X]], %[[W]] : (tensor<?x?x32xf32>, tensor<32x96xf32>) -> tensor<?x?x96xf32>
// CHECK-NEXT: %[[P:.*]]:3 = graph.split %[[Y]] {axis = 2 : i64, sections = 3 : i64} : (tensor<?x?x96xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
// CHECK-NOT: graph.matmul %[[X]]
// CHECK: %[[T:.*]] = graph.transpose %[[P]]#1
// CHECK: graph.matmul %[[P]]#0, %[[T]]
// CHECK: graph.matmul %{{.*}}, %[[P]]#2
func.func @qkv(%x: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %wq = graph.read @wq : tensor<32x32xf32>
  %wk = graph.read @wk : tensor<32x32xf32>
  %wv = graph.read @wv : tensor<32x32xf32>
  %q = graph.matmul %x, %wq : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %k = graph.matmul %x, %wk : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %v = graph.matmul %x, %wv : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %kt = graph.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<?x?x32xf32>) -> tensor<?x32x?xf32>
  %s = graph.matmul %q, %kt : (tensor<?x?x32xf32>, tensor<?x32x?xf32>) -> tensor<?x?x?xf32>
  %p = graph.softmax %s {axis = -1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o = graph.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %o : tensor<?x?x32xf32>
}

// Unequal widths: the split takes one constant size operand per part.
// CHECK-LABEL: func.func @unequal_widths
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[A:.*]]: tensor<8x3xf32>, %[[B:.*]]: tensor<8x5xf32>)
// CHECK-NEXT: %[[W:.*]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.matmul %[[X]], %[[W]] : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[N3:.*]] = graph.constant dense<3> : tensor<i64>
// CHECK-NEXT: %[[N5:.*]] = graph.constant dense<5> : tensor<i64>
// CHECK-NEXT: %[[P:.*]]:2 = graph.split %[[Y]], %[[N3]], %[[N5]] {axis = 1 : i64, sections = 2 : i64} : (tensor<?x8xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x3xf32>, tensor<?x5xf32>)
// CHECK-NEXT: return %[[P]]#0, %[[P]]#1
func.func @unequal_widths(%x: tensor<?x8xf32>, %a: tensor<8x3xf32>, %b: tensor<8x5xf32>)
    -> (tensor<?x3xf32>, tensor<?x5xf32>) {
  %ya = graph.matmul %x, %a : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %yb = graph.matmul %x, %b : (tensor<?x8xf32>, tensor<8x5xf32>) -> tensor<?x5xf32>
  return %ya, %yb : tensor<?x3xf32>, tensor<?x5xf32>
}

// Different left operands share nothing: both matmuls stay.
// CHECK-LABEL: func.func @different_x
// CHECK-NOT: graph.concat
// CHECK: graph.matmul %arg0, %arg2
// CHECK-NEXT: graph.matmul %arg1, %arg3
// CHECK-NOT: graph.split
func.func @different_x(%x: tensor<?x8xf32>, %z: tensor<?x8xf32>, %a: tensor<8x4xf32>,
                       %b: tensor<8x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %ya = graph.matmul %x, %a : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %yb = graph.matmul %z, %b : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %ya, %yb : tensor<?x4xf32>, tensor<?x4xf32>
}

// Different K: x's K is unknown, so each weight's K agrees with it alone; the weights
// cannot be concatenated (3 and 5 rows), and the matmuls stay apart.
// CHECK-LABEL: func.func @different_k
// CHECK-NOT: graph.concat
// CHECK: graph.matmul %arg0, %arg1
// CHECK-NEXT: graph.matmul %arg0, %arg2
// CHECK-NOT: graph.split
func.func @different_k(%x: tensor<?x?xf32>, %a: tensor<3x4xf32>, %b: tensor<5x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %ya = graph.matmul %x, %a : (tensor<?x?xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  %yb = graph.matmul %x, %b : (tensor<?x?xf32>, tensor<5x4xf32>) -> tensor<?x4xf32>
  return %ya, %yb : tensor<?x4xf32>, tensor<?x4xf32>
}

// Batched or vector right operands are not merged (their batch structure would differ).
// CHECK-LABEL: func.func @batched_or_vector_rhs
// CHECK-NOT: graph.concat
// CHECK-NOT: graph.split
func.func @batched_or_vector_rhs(%x: tensor<2x4x8xf32>, %a: tensor<2x8x3xf32>,
                                 %b: tensor<2x8x3xf32>, %v: tensor<8xf32>, %u: tensor<8xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %ya = graph.matmul %x, %a : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  %yb = graph.matmul %x, %b : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  %yv = graph.matmul %x, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  %yu = graph.matmul %x, %u : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  return %ya, %yb, %yv, %yu : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A weight computed from the first product cannot move above it: the first two merge,
// the third stays.
// CHECK-LABEL: func.func @weight_after_anchor
// CHECK: %[[W:.*]] = graph.concat %arg1, %arg2
// CHECK-NEXT: %[[Y:.*]] = graph.matmul %arg0, %[[W]]
// CHECK-NEXT: %[[P:.*]]:2 = graph.split %[[Y]]
// CHECK-NEXT: %[[T:.*]] = graph.transpose %arg0
// CHECK-NEXT: %[[C:.*]] = graph.matmul %[[T]], %[[P]]#0
// CHECK-NEXT: graph.matmul %arg0, %[[C]]
func.func @weight_after_anchor(%x: tensor<?x8xf32>, %a: tensor<8x8xf32>, %b: tensor<8x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %ya = graph.matmul %x, %a : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %xt = graph.transpose %x : (tensor<?x8xf32>) -> tensor<8x?xf32>
  %c = graph.matmul %xt, %ya : (tensor<8x?xf32>, tensor<?x8xf32>) -> tensor<8x8xf32>
  %yc = graph.matmul %x, %c : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %yb = graph.matmul %x, %b : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %s = graph.add %yc, %yb : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %ya, %s : tensor<?x8xf32>, tensor<?x8xf32>
}

// The rule: x with 4 rows does fewer than min-rows (16) multiply-adds per weight element
// the concat copies, so non-constant weights are not merged ...
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: graph.concat
func.func @few_rows(%x: tensor<4x8xf32>, %a: tensor<8x4xf32>, %b: tensor<8x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %ya = graph.matmul %x, %a : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %yb = graph.matmul %x, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %ya, %yb : tensor<4x4xf32>, tensor<4x4xf32>
}

// ... but constant weights are concatenated once, by folding: merged at any size.
// CHECK-LABEL: func.func @few_rows_constant_weights
// CHECK: graph.concat
// CHECK-NEXT: graph.matmul
// CHECK-NEXT: graph.split
// CHECK-NOT: graph.matmul
func.func @few_rows_constant_weights(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %a = graph.constant dense<1.0> : tensor<8x4xf32>
  %b = graph.constant dense<2.0> : tensor<8x4xf32>
  %ya = graph.matmul %x, %a : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %yb = graph.matmul %x, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %ya, %yb : tensor<4x4xf32>, tensor<4x4xf32>
}
