// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// one_hot: one parallel generic over indices.shape + [depth]; the index is compared with
// the class loop in i64 (an index out of range matches no class: a row of zeros).
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME:      %[[L:[^:]*]]: tensor<?xi32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[L]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[L]] : tensor<?xi32>) outs(%[[E]] : tensor<?x10xf32>) {
// CHECK-NEXT:    ^bb0(%[[I:[^:]*]]: i32, %{{.*}}: f32):
// CHECK-NEXT:      %[[WIDE:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK-NEXT:      %[[K:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[KW:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:      %[[HIT:.*]] = arith.cmpi eq, %[[WIDE]], %[[KW]] : i64
// CHECK:           arith.select %[[HIT]]
// CHECK-NOT:     graph.check
func.func @one_hot(%labels: tensor<?xi32>) -> tensor<?x10xf32> {
  %r = graph.one_hot %labels {depth = 10 : i64} : (tensor<?xi32>) -> tensor<?x10xf32>
  return %r : tensor<?x10xf32>
}

// A depth from a size operand must not be negative (numpy's error); it is read as 0 if so.
// CHECK-LABEL: func.func @one_hot_sized(
// CHECK:         %[[D:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[OK:.*]] = arith.cmpi sge, %[[D]], %[[C0:.*]] : index
// CHECK:         graph.check %[[OK]], %[[D]], %[[C0]] {message = "'graph.one_hot' failed: one_hot depth must be non-negative, got {value}"} : index, index
// CHECK:         %[[DEPTH:.*]] = arith.maxsi %[[D]], %[[C0]] : index
// CHECK:         tensor.empty(%{{.*}}, %[[DEPTH]]) : tensor<?x?xf32>
func.func @one_hot_sized(%labels: tensor<?xi64>, %n: tensor<i64>) -> tensor<?x?xf32> {
  %r = graph.one_hot %labels, %n {depth = -1 : i64} : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// gather: a parallel generic over the result reading the indices through a projection and
// the table with tensor.extract; numpy's negative indices wrap, an index still out of range
// is checked in the body and the row clamped to 0.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[T:[^:]*]]: tensor<1000x64xf32>, %[[IDS:[^:]*]]: tensor<?x16xi32>)
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 1000 : i64
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDS]] : tensor<?x16xi32>)
// CHECK:           %[[I:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[I]]
// CHECK:           %[[UP:.*]] = arith.addi %[[I]], %[[ROWS]] : i64
// CHECK:           %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[I]] : i64
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           graph.check %[[OK]], %[[I]], %[[ROWS]] {message = "'graph.gather' failed: index {value} is out of bounds for axis 0 with size {bound}"} : i64, i64
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK:           %[[J:.*]] = linalg.index 2 : index
// CHECK:           %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[J]]] : tensor<1000x64xf32>
// CHECK:           linalg.yield %[[V]] : f32
func.func @gather(%table: tensor<1000x64xf32>, %ids: tensor<?x16xi32>) -> tensor<?x16x64xf32> {
  %r = graph.gather %table, %ids : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
  return %r : tensor<?x16x64xf32>
}

// scatter_add writes through its indices: no structured op says that, so it stays for
// bufferize, which lowers it to loops.
// CHECK-LABEL: func.func @scatter(
// CHECK:         graph.scatter_add
// CHECK-NOT:     linalg.
func.func @scatter(%d: tensor<4x3xf32>, %i: tensor<2xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = graph.scatter_add %d, %i, %u : (tensor<4x3xf32>, tensor<2xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
