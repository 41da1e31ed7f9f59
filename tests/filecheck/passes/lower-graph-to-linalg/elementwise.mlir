// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// Each elementwise op becomes one all-parallel linalg.generic over its result, whose body is
// the op's scalar body; the destination is a tensor.empty of the result's run-time shape.
// Broadcasting is in the indexing maps: %y (3) aligns with the last axis, (d0, d1) -> (d1).
// The second op reuses the size of %x: one tensor.dim for the whole function.
// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3xf32>, %[[Y:[^:]*]]: tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x3xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<?x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<?x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[V:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[V]] : f32
// CHECK-NEXT:    } -> tensor<?x3xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<?x3xf32>) outs(%[[E2]] : tensor<?x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[A2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[A2]] : f32
// CHECK-NEXT:      linalg.yield %[[EXP]] : f32
// CHECK-NEXT:    } -> tensor<?x3xf32>
// CHECK-NEXT:    return %[[R]] : tensor<?x3xf32>
// CHECK-NOT:     graph.
func.func @broadcast(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = graph.add %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %1 = graph.exp %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

// A static size-1 axis is read at the constant 0; a 0-d operand through (d0, d1) -> ().
// CHECK-LABEL: func.func @unit_axis_and_scalar(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.mulf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<f32>)
// CHECK:           arith.divf
func.func @unit_axis_and_scalar(%x: tensor<4x3xf32>, %r: tensor<4x1xf32>, %s: tensor<f32>) -> tensor<4x3xf32> {
  %0 = graph.mul %x, %r : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %1 = graph.div %0, %s : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// A splat constant is a scalar arith.constant in the body, not an input of the generic (the
// tensor constant itself is left for canonicalize to erase).
// CHECK-LABEL: func.func @splat(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?xf32>)
// CHECK:         arith.constant dense<2.500000e+00> : tensor<1xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[X]] : tensor<?xf32>) outs(%{{.*}} : tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[A]], %[[C]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
func.func @splat(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c = graph.constant dense<2.5> : tensor<1xf32>
  %0 = graph.maximum %x, %c : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// Two `?` sizes either of which may be 1 at run time: the result size is
// select(x == 1, y, x), and each operand is read with tensor.extract at select(size == 1, 0, i),
// the size tests made once, outside the generic.
// CHECK-LABEL: func.func @dynamic_broadcast(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[Y:[^:]*]]: tensor<?xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[NY:.*]] = tensor.dim %[[Y]]
// CHECK-DAG:     %[[YONE:.*]] = arith.cmpi eq, %[[NY]], %[[C1]] : index
// CHECK-DAG:     %[[NX:.*]] = tensor.dim %[[X]]
// CHECK-DAG:     %[[XONE:.*]] = arith.cmpi eq, %[[NX]], %[[C1]] : index
// CHECK:         %[[N:.*]] = arith.select %[[XONE]], %[[NY]], %[[NX]] : index
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[E]] : tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[IX:.*]] = arith.select %[[XONE]], %[[Z]], %[[I]] : index
// CHECK-NEXT:      %[[A:.*]] = tensor.extract %[[X]][%[[IX]]] : tensor<?xf32>
// CHECK-NEXT:      %[[IY:.*]] = arith.select %[[YONE]], %[[Z]], %[[I]] : index
// CHECK-NEXT:      %[[B:.*]] = tensor.extract %[[Y]][%[[IY]]] : tensor<?xf32>
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[D]] : f32
func.func @dynamic_broadcast(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.sub %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// The body is the op's own formula, in its numpy order of operations:
// (0.5 x) (1 + tanh(c (x + ((0.044715 x) x) x))).
// CHECK-LABEL: func.func @gelu(
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[K:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT:      %[[KX:.*]] = arith.mulf %[[K]], %[[X]] : f32
// CHECK-NEXT:      %[[KXX:.*]] = arith.mulf %[[KX]], %[[X]] : f32
// CHECK-NEXT:      %[[CUBE:.*]] = arith.mulf %[[KXX]], %[[X]] : f32
// CHECK-NEXT:      %[[C:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT:      %[[IN:.*]] = arith.addf %[[X]], %[[CUBE]] : f32
// CHECK-NEXT:      %[[U:.*]] = arith.mulf %[[C]], %[[IN]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[HX:.*]] = arith.mulf %[[HALF]], %[[X]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[U]] : f32
// CHECK-NEXT:      %[[OPT:.*]] = arith.addf %[[ONE]], %[[T]] : f32
// CHECK-NEXT:      %[[G:.*]] = arith.mulf %[[HX]], %[[OPT]] : f32
// CHECK-NEXT:      linalg.yield %[[G]] : f32
func.func @gelu(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = graph.gelu %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Integers compare signed; where is a select; a cast from i32 is sitofp.
// CHECK-LABEL: func.func @compare_where_cast(
// CHECK:         ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i1):
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[A]], %[[B]] : i32
// CHECK-NEXT:      linalg.yield %[[LT]] : i1
// CHECK:         ^bb0(%[[C:.*]]: i1, %[[P:.*]]: i32, %[[Q:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[C]], %[[P]], %[[Q]] : i32
// CHECK:           arith.sitofp %{{.*}} : i32 to f32
func.func @compare_where_cast(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %c = graph.cmp %x, %y {predicate = "lt"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %w = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %f = graph.cast %w : (tensor<4xi32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// zeros_like is a linalg.fill of the operand's run-time shape; a constant is MLIR's
// arith.constant dense<...>.
// CHECK-LABEL: func.func @zeros_and_constant(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x2xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK-NEXT:    %[[Z:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x2xf32>) -> tensor<?x2xf32>
// CHECK-NEXT:    %[[K:.*]] = arith.constant dense<[3, 4]> : tensor<2xi32>
// CHECK-NEXT:    return %[[Z]], %[[K]] : tensor<?x2xf32>, tensor<2xi32>
func.func @zeros_and_constant(%x: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<2xi32>) {
  %z = graph.zeros_like %x : (tensor<?x2xf32>) -> tensor<?x2xf32>
  %k = graph.constant dense<[3, 4]> : tensor<2xi32>
  return %z, %k : tensor<?x2xf32>, tensor<2xi32>
}
