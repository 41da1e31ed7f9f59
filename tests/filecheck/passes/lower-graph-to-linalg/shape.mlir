// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// transpose: linalg.transpose into an empty of the permuted sizes.
// CHECK-LABEL: func.func @transpose(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3x4xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x4xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<4x?x3xf32>
// CHECK:         %[[R:.*]] = linalg.transpose ins(%[[X]] : tensor<?x3x4xf32>) outs(%[[E]] : tensor<4x?x3xf32>) permutation = [2, 0, 1]
// CHECK:         return %[[R]]
func.func @transpose(%x: tensor<?x3x4xf32>) -> tensor<4x?x3xf32> {
  %r = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
  return %r : tensor<4x?x3xf32>
}

// A reshape regroups axes: the batch axis pairs with itself, [28, 28] with [784].
// CHECK-LABEL: func.func @flatten(
// CHECK:         %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<?x28x28xf32> into tensor<?x784xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK-NOT:     graph.check
// CHECK:         return %[[R]]
func.func @flatten(%x: tensor<?x28x28xf32>) -> tensor<?x784xf32> {
  %r = graph.reshape %x {shape = array<i64: -1, 784>} : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
  return %r : tensor<?x784xf32>
}

// [2, 3, 4] -> [6, 2, 2]: [2, 3] collapse into 6, 4 expands into [2, 2].
// CHECK-LABEL: func.func @regroup(
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [6, 2, 2] : tensor<6x4xf32> into tensor<6x2x2xf32>
func.func @regroup(%x: tensor<2x3x4xf32>) -> tensor<6x2x2xf32> {
  %r = graph.reshape %x {shape = array<i64: 6, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<6x2x2xf32>
  return %r : tensor<6x2x2xf32>
}

// No grouping is provable: one group, through 1-d. The inferred -1 divides x's count
// exactly (6 is a multiple of 3), so nothing is checked.
// CHECK-LABEL: func.func @general(
// CHECK:         %[[N:.*]] = arith.divui
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<?x6xf32> into tensor<?xf32>
// CHECK:         tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [%[[N]], 3] : tensor<?xf32> into tensor<?x3xf32>
// CHECK-NOT:     graph.check
func.func @general(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %r = graph.reshape %x {shape = array<i64: -1, 3>} : (tensor<?x6xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// 4 * N elements into rows of 6: checked with the interpreter's message, and x's view cut
// to the result's count (an inferred -1 rounds down), so it stays in bounds regardless.
// CHECK-LABEL: func.func @checked(
// CHECK:         %[[TOTAL:.*]] = arith.muli
// CHECK:         %[[COUNT:.*]] = arith.muli
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[TOTAL]], %[[COUNT]] : index
// CHECK:         graph.check %[[OK]], %[[TOTAL]], %[[COUNT]] {message = "'graph.reshape' failed: cannot reshape array of size {value} into shape (-1, 6)"} : index, index
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape
// CHECK:         %[[CUT:.*]] = tensor.extract_slice %[[FLAT]][0] [%[[COUNT]]] [1]
// CHECK:         tensor.expand_shape %[[CUT]]
func.func @checked(%x: tensor<?x4xf32>) -> tensor<?x6xf32> {
  %r = graph.reshape %x {shape = array<i64: -1, 6>} : (tensor<?x4xf32>) -> tensor<?x6xf32>
  return %r : tensor<?x6xf32>
}

// Sizes from graph.dim are read as the index they are (no trip through a tensor); the
// count of y is checked against them, and a failed check makes the first `?` size 0.
// CHECK-LABEL: func.func @back(
// CHECK-SAME:      %[[Y:[^:]*]]: tensor<?x64xf32>, %[[X:[^:]*]]: tensor<?x?x64xf32>)
// CHECK-DAG:     %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x64xf32>
// CHECK-DAG:     %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x64xf32>
// CHECK:         %[[OK:.*]] = arith.cmpi eq
// CHECK:         graph.check %[[OK]]
// CHECK-SAME:        into shape (-1, -1, 64) of {bound} elements
// CHECK:         %[[N0:.*]] = arith.select %[[OK]], %[[N]], %{{.*}} : index
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [%[[N0]], %[[T]], 64]
// CHECK-NOT:     tensor.extract %
func.func @back(%y: tensor<?x64xf32>, %x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x?x64xf32>) -> tensor<i64>
  %t = graph.dim %x {axis = 1 : i64} : (tensor<?x?x64xf32>) -> tensor<i64>
  %r = graph.reshape %y, %n, %t {shape = array<i64: -1, -1, 64>} : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>
  return %r : tensor<?x?x64xf32>
}

// A static result of a `?` input: x's elements cut or padded to 16, the one copy.
// CHECK-LABEL: func.func @static_of_dynamic(
// CHECK:         graph.check
// CHECK:         %[[KEEP:.*]] = arith.minsi
// CHECK:         %[[CUT:.*]] = tensor.extract_slice %{{.*}}[0] [%[[KEEP]]] [1]
// CHECK:         %[[PAD:.*]] = tensor.pad %[[CUT]] low[0] high[%{{.*}}]
// CHECK:         %[[FIT:.*]] = tensor.cast %[[PAD]] : tensor<?xf32> to tensor<16xf32>
// CHECK:         tensor.expand_shape %[[FIT]] {{\[}}[0, 1]] output_shape [2, 8]
func.func @static_of_dynamic(%x: tensor<?x4xf32>) -> tensor<2x8xf32> {
  %r = graph.reshape %x {shape = array<i64: 2, 8>} : (tensor<?x4xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// broadcast_to: the static size-1 axis is collapsed away, then linalg.broadcast adds it
// back with the missing leading axis; the -1 entry is the size operand's value.
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<1x3xf32>, %[[NT:[^:]*]]: tensor<i64>)
// CHECK:         %[[NV:.*]] = tensor.extract %[[NT]][] : tensor<i64>
// CHECK:         %[[N:.*]] = arith.index_cast %[[NV]] : i64 to index
// CHECK:         %[[V:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4x3xf32>
// CHECK:         linalg.broadcast ins(%[[V]] : tensor<3xf32>) outs(%[[E]] : tensor<?x4x3xf32>) dimensions = [0, 1]
func.func @broadcast(%x: tensor<1x3xf32>, %n: tensor<i64>) -> tensor<?x4x3xf32> {
  %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 4, 3>} : (tensor<1x3xf32>, tensor<i64>) -> tensor<?x4x3xf32>
  return %r : tensor<?x4x3xf32>
}

// A `?` axis that may be 1 at run time: an elementwise copy reading x at select(n == 1, 0, i).
// CHECK-LABEL: func.func @broadcast_select(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3xf32>
// CHECK:         %[[UNIT:.*]] = arith.cmpi eq
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[AT:.*]] = arith.select %[[UNIT]], %{{.*}}, %[[I]] : index
// CHECK:           tensor.extract %[[X]][%[[AT]], %{{.*}}]
// CHECK-NOT:     linalg.broadcast
func.func @broadcast_select(%x: tensor<?x3xf32>, %n: tensor<i64>) -> tensor<?x3xf32> {
  %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 3>} : (tensor<?x3xf32>, tensor<i64>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// dim: the size, as an i64 in a 0-d tensor.
// CHECK-LABEL: func.func @dim(
// CHECK:         %[[N:.*]] = tensor.dim
// CHECK:         %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK:         %[[R:.*]] = tensor.from_elements %[[I]] : tensor<i64>
// CHECK:         return %[[R]]
func.func @dim(%x: tensor<?x3xf32>) -> tensor<i64> {
  %n = graph.dim %x {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<i64>
  return %n : tensor<i64>
}
