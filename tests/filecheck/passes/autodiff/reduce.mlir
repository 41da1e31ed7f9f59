// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s

// Derivatives of the reduction family: reductions, softmax, losses and matmul. Each backward
// graph is checked op by op (CHECK-NEXT), so anything the rules built in vain and
// canonicalization did not remove (a multiplication by the seed's 1, a recomputed forward
// value) fails the test.

// The gradient of mean softmax cross-entropy of a linear layer: the cotangent of the logits
// is (softmax - onehot(labels)) / B, with the seed's 1 folded into the scalar 1 / B (B is read
// at run time), once for the whole batch; b's gradient sums it over the batch, W's is x^T
// times it.
// CHECK-LABEL: func.func @linear_softmax_cross_entropy
// CHECK-SAME:      (%[[X:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[L:.*]]: tensor<?xi64>)
// CHECK-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[XW:.*]] = graph.matmul %[[X]], %[[W]]
// CHECK-NEXT:    %[[Z:.*]] = graph.add %[[XW]], %[[B]]
// CHECK-NEXT:    %[[N:.*]] = graph.dim %[[Z]] {axis = 0 : i64}
// CHECK-NEXT:    %[[NF:.*]] = graph.cast %[[N]] : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT:    %[[SCALE:.*]] = graph.div %[[ONE]], %[[NF]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = graph.softmax %[[Z]] {axis = 1 : i64}
// CHECK-NEXT:    %[[HOT:.*]] = graph.one_hot %[[L]] {depth = 3 : i64}
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[P]], %[[HOT]]
// CHECK-NEXT:    %[[DZ:.*]] = graph.mul %[[D]], %[[SCALE]] : (tensor<?x3xf32>, tensor<f32>)
// CHECK-NEXT:    %[[DB:.*]] = graph.reduce_sum %[[DZ]] {axes = array<i64: 0>, keepdims = false}
// CHECK-NEXT:    %[[XT:.*]] = graph.transpose %[[X]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[DW:.*]] = graph.matmul %[[XT]], %[[DZ]] : (tensor<4x?xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:    return %[[DW]], %[[DB]]
func.func @linear_softmax_cross_entropy(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>,
                                        %labels: tensor<?xi64>) -> (tensor<4x3xf32>, tensor<3xf32>) {
  %xw = graph.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %z = graph.add %xw, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %loss = graph.cross_entropy %z, %labels : (tensor<?x3xf32>, tensor<?xi64>) -> tensor<f32>
  %dw, %db = autodiff.grad %loss wrt %w, %b : (tensor<f32>) -> (tensor<4x3xf32>, tensor<3xf32>)
  return %dw, %db : tensor<4x3xf32>, tensor<3xf32>
}

// A static batch: 1 / B is the constant 1/8; a one-hot of another element type is cast.
// CHECK-LABEL: func.func @cross_entropy_static_f64
// CHECK-SAME:      (%[[Z:.*]]: tensor<8x3xf64>, %[[L:.*]]: tensor<8xi32>)
// CHECK-NEXT:    %[[EIGHTH:.*]] = graph.constant dense<1.250000e-01> : tensor<f64>
// CHECK-NEXT:    %[[P:.*]] = graph.softmax %[[Z]] {axis = 1 : i64}
// CHECK-NEXT:    %[[HOT:.*]] = graph.one_hot %[[L]] {depth = 3 : i64} : (tensor<8xi32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[HOT64:.*]] = graph.cast %[[HOT]] : (tensor<8x3xf32>) -> tensor<8x3xf64>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[P]], %[[HOT64]]
// CHECK-NEXT:    %[[DZ:.*]] = graph.mul %[[D]], %[[EIGHTH]]
// CHECK-NEXT:    return %[[DZ]]
func.func @cross_entropy_static_f64(%z: tensor<8x3xf64>, %labels: tensor<8xi32>) -> tensor<8x3xf64> {
  %loss = graph.cross_entropy %z, %labels : (tensor<8x3xf64>, tensor<8xi32>) -> tensor<f64>
  %dz = autodiff.grad %loss wrt %z : (tensor<f64>) -> tensor<8x3xf64>
  return %dz : tensor<8x3xf64>
}

// Float targets: rows need not sum to one, so softmax is scaled by each row's sum; the
// targets' own gradient is -log_softmax / B.
// CHECK-LABEL: func.func @cross_entropy_float_targets
// CHECK-SAME:      (%[[Z:.*]]: tensor<?x3xf32>, %[[T:.*]]: tensor<?x3xf32>)
// CHECK:         %[[SCALE:.*]] = graph.div
// CHECK-NEXT:    %[[P:.*]] = graph.softmax %[[Z]] {axis = 1 : i64}
// CHECK-NEXT:    %[[ROWS:.*]] = graph.reduce_sum %[[T]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[PR:.*]] = graph.mul %[[P]], %[[ROWS]]
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[PR]], %[[T]]
// CHECK-NEXT:    %[[DZ:.*]] = graph.mul %[[D]], %[[SCALE]]
// CHECK-NEXT:    %[[LSM:.*]] = graph.log_softmax %[[Z]] {axis = 1 : i64}
// CHECK-NEXT:    %[[NEG:.*]] = graph.neg %[[SCALE]] : (tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[DT:.*]] = graph.mul %[[LSM]], %[[NEG]]
// CHECK-NEXT:    return %[[DZ]], %[[DT]]
func.func @cross_entropy_float_targets(%z: tensor<?x3xf32>, %t: tensor<?x3xf32>)
    -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %loss = graph.cross_entropy %z, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  %g:2 = autodiff.grad %loss wrt %z, %t : (tensor<f32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
  return %g#0, %g#1 : tensor<?x3xf32>, tensor<?x3xf32>
}

// softmax: y * (s - sum(s * y)), reusing the forward y. Its Jacobian is symmetric, so
// forward mode is the same formula on the tangent.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:      (%[[X:.*]]: tensor<?x5xf32>, %[[S:.*]]: tensor<?x5xf32>, %[[V:.*]]: tensor<?x5xf32>)
// CHECK-NEXT:    %[[Y:.*]] = graph.softmax %[[X]]
// CHECK-NEXT:    %[[SY:.*]] = graph.mul %[[S]], %[[Y]]
// CHECK-NEXT:    %[[DOT:.*]] = graph.reduce_sum %[[SY]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[C:.*]] = graph.sub %[[S]], %[[DOT]]
// CHECK-NEXT:    %[[G:.*]] = graph.mul %[[Y]], %[[C]]
// CHECK-NEXT:    %[[VY:.*]] = graph.mul %[[V]], %[[Y]]
// CHECK-NEXT:    %[[TDOT:.*]] = graph.reduce_sum %[[VY]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[TC:.*]] = graph.sub %[[V]], %[[TDOT]]
// CHECK-NEXT:    %[[T:.*]] = graph.mul %[[Y]], %[[TC]]
// CHECK-NEXT:    return %[[G]], %[[T]]
func.func @softmax(%x: tensor<?x5xf32>, %s: tensor<?x5xf32>, %v: tensor<?x5xf32>)
    -> (tensor<?x5xf32>, tensor<?x5xf32>) {
  %y = graph.softmax %x : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %t = autodiff.jvp %y wrt %x along %v : (tensor<?x5xf32>) -> tensor<?x5xf32>
  return %g, %t : tensor<?x5xf32>, tensor<?x5xf32>
}

// log_softmax: s - exp(y) * sum(s); softmax is exp of the forward result, not recomputed.
// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME:      (%[[X:.*]]: tensor<?x5xf32>, %[[S:.*]]: tensor<?x5xf32>)
// CHECK-NEXT:    %[[Y:.*]] = graph.log_softmax %[[X]] {axis = 0 : i64}
// CHECK-NEXT:    %[[P:.*]] = graph.exp %[[Y]]
// CHECK-NEXT:    %[[SUM:.*]] = graph.reduce_sum %[[S]] {axes = array<i64: 0>, keepdims = true}
// CHECK-NEXT:    %[[PS:.*]] = graph.mul %[[P]], %[[SUM]]
// CHECK-NEXT:    %[[G:.*]] = graph.sub %[[S]], %[[PS]]
// CHECK-NEXT:    return %[[G]]
func.func @log_softmax(%x: tensor<?x5xf32>, %s: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %y = graph.log_softmax %x {axis = 0 : i64} : (tensor<?x5xf32>) -> tensor<?x5xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  return %g : tensor<?x5xf32>
}

// reduce_sum's transpose repeats the cotangent over the reduced axes: a reshape puts them
// back as size 1 (where two sizes are `?`, it reads them with graph.dim of the operand, which
// the broadcast needs too), then broadcast_to repeats it. Leading reduced axes need no
// reshape: broadcast_to adds them.
// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME:      (%[[X:.*]]: tensor<?x3x?xf32>, %[[S1:.*]]: tensor<?x3xf32>, %[[S2:.*]]: tensor<?x?xf32>, %[[S3:.*]]: tensor<3x?xf32>)
// CHECK-NEXT:    %[[R1:.*]] = graph.reshape %[[S1]] {shape = array<i64: -1, 3, 1>}
// CHECK-NEXT:    %[[N0:.*]] = graph.dim %[[X]] {axis = 0 : i64}
// CHECK-NEXT:    %[[N2:.*]] = graph.dim %[[X]] {axis = 2 : i64}
// CHECK-NEXT:    %[[G1:.*]] = graph.broadcast_to %[[R1]], %[[N0]], %[[N2]] {shape = array<i64: -1, 3, -1>}
// CHECK-NEXT:    %[[R2:.*]] = graph.reshape %[[S2]], %[[N0]], %[[N2]] {shape = array<i64: -1, 1, -1>}
// CHECK-SAME:        -> tensor<?x1x?xf32>
// CHECK-NEXT:    %[[G2:.*]] = graph.broadcast_to %[[R2]], %[[N0]], %[[N2]] {shape = array<i64: -1, 3, -1>}
// CHECK-NEXT:    %[[G3:.*]] = graph.broadcast_to %[[S3]], %[[N0]], %[[N2]] {shape = array<i64: -1, 3, -1>}
// CHECK-NEXT:    return %[[G1]], %[[G2]], %[[G3]]
func.func @reduce_sum(%x: tensor<?x3x?xf32>, %s1: tensor<?x3xf32>, %s2: tensor<?x?xf32>, %s3: tensor<3x?xf32>)
    -> (tensor<?x3x?xf32>, tensor<?x3x?xf32>, tensor<?x3x?xf32>) {
  %y1 = graph.reduce_sum %x {axes = array<i64: -1>} : (tensor<?x3x?xf32>) -> tensor<?x3xf32>
  %g1 = autodiff.grad %y1 seed %s1 wrt %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3x?xf32>
  %y2 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x3x?xf32>) -> tensor<?x?xf32>
  %g2 = autodiff.grad %y2 seed %s2 wrt %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x3x?xf32>
  %y3 = graph.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x3x?xf32>) -> tensor<3x?xf32>
  %g3 = autodiff.grad %y3 seed %s3 wrt %x : (tensor<3x?xf32>, tensor<3x?xf32>) -> tensor<?x3x?xf32>
  return %g1, %g2, %g3 : tensor<?x3x?xf32>, tensor<?x3x?xf32>, tensor<?x3x?xf32>
}

// reduce_mean of everything: the seed 1 divided by the element count (counted at run time
// from the `?` size), then repeated; no multiplication by one is left.
// CHECK-LABEL: func.func @reduce_mean
// CHECK-SAME:      (%[[X:.*]]: tensor<?x5xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[FIVE:.*]] = graph.constant dense<5> : tensor<i64>
// CHECK-NEXT:    %[[N0:.*]] = graph.dim %[[X]] {axis = 0 : i64}
// CHECK-NEXT:    %[[N:.*]] = graph.mul %[[N0]], %[[FIVE]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[NF:.*]] = graph.cast %[[N]] : (tensor<i64>) -> tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = graph.div %[[ONE]], %[[NF]]
// CHECK-NEXT:    %[[G:.*]] = graph.broadcast_to %[[D]], %[[N0]] {shape = array<i64: -1, 5>}
// CHECK-NEXT:    return %[[G]]
func.func @reduce_mean(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %y = graph.reduce_mean %x : (tensor<?x5xf32>) -> tensor<f32>
  %g = autodiff.grad %y wrt %x : (tensor<f32>) -> tensor<?x5xf32>
  return %g : tensor<?x5xf32>
}

// reduce_max: the cotangent goes to the elements equal to the maximum, split equally among
// ties (the count of ties per row divides it); the forward maximum is reused.
// CHECK-LABEL: func.func @reduce_max
// CHECK-SAME:      (%[[X:.*]]: tensor<4x5xf32>, %[[S:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = graph.reduce_max %[[X]] {axes = array<i64: 1>, keepdims = false}
// CHECK-NEXT:    %[[YK:.*]] = graph.reshape %[[Y]] {shape = array<i64: 4, 1>}
// CHECK-NEXT:    %[[HIT:.*]] = graph.cmp %[[X]], %[[YK]] {predicate = "eq"}
// CHECK-NEXT:    %[[HITF:.*]] = graph.where %[[HIT]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT:    %[[TIES:.*]] = graph.reduce_sum %[[HITF]] {axes = array<i64: 1>, keepdims = true}
// CHECK-NEXT:    %[[SK:.*]] = graph.reshape %[[S]] {shape = array<i64: 4, 1>}
// CHECK-NEXT:    %[[SHARE:.*]] = graph.div %[[SK]], %[[TIES]]
// CHECK-NEXT:    %[[G:.*]] = graph.where %[[HIT]], %[[SHARE]], %[[ZERO]]
// CHECK-NEXT:    return %[[G]]
func.func @reduce_max(%x: tensor<4x5xf32>, %s: tensor<4xf32>) -> tensor<4x5xf32> {
  %y = graph.reduce_max %x {axes = array<i64: 1>} : (tensor<4x5xf32>) -> tensor<4xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4x5xf32>
  return %g : tensor<4x5xf32>
}

// mse with a broadcast target: 2 (p - t) / n for the prediction; the target's gradient is
// summed over the batch first and negated after, on the smaller tensor.
// CHECK-LABEL: func.func @mse
// CHECK-SAME:      (%[[P:.*]]: tensor<?x3xf32>, %[[T:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[THREE:.*]] = graph.constant dense<3> : tensor<i64>
// CHECK-NEXT:    %[[TWO:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[P]], %[[T]]
// CHECK-NEXT:    %[[N0:.*]] = graph.dim %[[D]] {axis = 0 : i64}
// CHECK-NEXT:    %[[N:.*]] = graph.mul %[[N0]], %[[THREE]]
// CHECK-NEXT:    %[[NF:.*]] = graph.cast %[[N]]
// CHECK-NEXT:    %[[SCALE:.*]] = graph.div %[[TWO]], %[[NF]]
// CHECK-NEXT:    %[[DP:.*]] = graph.mul %[[D]], %[[SCALE]]
// CHECK-NEXT:    %[[SUM:.*]] = graph.reduce_sum %[[DP]] {axes = array<i64: 0>, keepdims = false}
// CHECK-NEXT:    %[[DT:.*]] = graph.neg %[[SUM]] : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    return %[[DP]], %[[DT]]
func.func @mse(%p: tensor<?x3xf32>, %t: tensor<3xf32>) -> (tensor<?x3xf32>, tensor<3xf32>) {
  %l = graph.mse %p, %t : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<f32>
  %g:2 = autodiff.grad %l wrt %p, %t : (tensor<f32>) -> (tensor<?x3xf32>, tensor<3xf32>)
  return %g#0, %g#1 : tensor<?x3xf32>, tensor<3xf32>
}

// Batched matmul against a shared matrix: ct B^T for the batch, and A^T ct summed over the
// batch dims B was broadcast along.
// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME:      (%[[A:.*]]: tensor<2x?x3x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[S:.*]]: tensor<2x?x3x5xf32>)
// CHECK-NEXT:    %[[BT:.*]] = graph.transpose %[[B]] {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %[[DA:.*]] = graph.matmul %[[S]], %[[BT]] : (tensor<2x?x3x5xf32>, tensor<5x4xf32>) -> tensor<2x?x3x4xf32>
// CHECK-NEXT:    %[[AT:.*]] = graph.transpose %[[A]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %[[AT]], %[[S]] : (tensor<2x?x4x3xf32>, tensor<2x?x3x5xf32>) -> tensor<2x?x4x5xf32>
// CHECK-NEXT:    %[[DB:.*]] = graph.reduce_sum %[[P]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK-NEXT:    return %[[DA]], %[[DB]]
func.func @matmul_batched(%a: tensor<2x?x3x4xf32>, %b: tensor<4x5xf32>, %s: tensor<2x?x3x5xf32>)
    -> (tensor<2x?x3x4xf32>, tensor<4x5xf32>) {
  %y = graph.matmul %a, %b : (tensor<2x?x3x4xf32>, tensor<4x5xf32>) -> tensor<2x?x3x5xf32>
  %g:2 = autodiff.grad %y seed %s wrt %a, %b : (tensor<2x?x3x5xf32>, tensor<2x?x3x5xf32>)
      -> (tensor<2x?x3x4xf32>, tensor<4x5xf32>)
  return %g#0, %g#1 : tensor<2x?x3x4xf32>, tensor<4x5xf32>
}

// A vector rhs: the matrix's gradient is an outer product (a broadcast multiply, nothing
// to sum), the vector's sums the batch of ct-row times matrix products.
// CHECK-LABEL: func.func @matmul_vector
// CHECK-SAME:      (%[[A:.*]]: tensor<2x?x4xf32>, %[[V:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<2x?xf32>)
// CHECK-NEXT:    %[[COL:.*]] = graph.reshape %[[S]] {shape = array<i64: 2, -1, 1>}
// CHECK-NEXT:    %[[DA:.*]] = graph.mul %[[COL]], %[[V]] : (tensor<2x?x1xf32>, tensor<4xf32>) -> tensor<2x?x4xf32>
// CHECK-NEXT:    %[[ROW:.*]] = graph.reshape %[[S]] {shape = array<i64: 2, 1, -1>}
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %[[ROW]], %[[A]] : (tensor<2x1x?xf32>, tensor<2x?x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT:    %[[DV:.*]] = graph.reduce_sum %[[P]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK-NEXT:    return %[[DA]], %[[DV]]
func.func @matmul_vector(%a: tensor<2x?x4xf32>, %v: tensor<4xf32>, %s: tensor<2x?xf32>)
    -> (tensor<2x?x4xf32>, tensor<4xf32>) {
  %y = graph.matmul %a, %v : (tensor<2x?x4xf32>, tensor<4xf32>) -> tensor<2x?xf32>
  %g:2 = autodiff.grad %y seed %s wrt %a, %v : (tensor<2x?xf32>, tensor<2x?xf32>)
      -> (tensor<2x?x4xf32>, tensor<4xf32>)
  return %g#0, %g#1 : tensor<2x?x4xf32>, tensor<4xf32>
}

// Forward mode of matmul, by bilinearity: ta B + A tb.
// CHECK-LABEL: func.func @matmul_jvp
// CHECK-SAME:      (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4x5xf32>, %[[TA:.*]]: tensor<?x4xf32>, %[[TB:.*]]: tensor<4x5xf32>)
// CHECK-NEXT:    %[[L:.*]] = graph.matmul %[[TA]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = graph.matmul %[[A]], %[[TB]]
// CHECK-NEXT:    %[[T:.*]] = graph.add %[[L]], %[[R]]
// CHECK-NEXT:    return %[[T]]
func.func @matmul_jvp(%a: tensor<?x4xf32>, %b: tensor<4x5xf32>, %ta: tensor<?x4xf32>, %tb: tensor<4x5xf32>)
    -> tensor<?x5xf32> {
  %y = graph.matmul %a, %b : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  %t = autodiff.jvp %y wrt %a, %b along %ta, %tb : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  return %t : tensor<?x5xf32>
}
