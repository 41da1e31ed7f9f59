// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// Reductions become a linalg.generic with one loop per operand axis: the reduced axes are
// "reduction" loops, the output is indexed by the kept ones. A float32 sum is carried in an
// f64 output filled with 0.0 (each element widened by arith.extf), then rounded once by an
// elementwise generic; with keepdims that generic writes the result's unit axis directly.

// CHECK-LABEL: func.func @sum_keepdims(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[B:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?x8xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[B]]) : tensor<?x8xf64>
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[E]] : tensor<?x8xf64>) -> tensor<?x8xf64>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<?x?x8xf32>) outs(%[[F]] : tensor<?x8xf64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[W]] : f64
// CHECK-NEXT:      linalg.yield %[[N]] : f64
// CHECK-NEXT:    } -> tensor<?x8xf64>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty(%[[B]]) : tensor<?x1x8xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]] : tensor<?x8xf64>) outs(%[[E2]] : tensor<?x1x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[RT:.*]] = arith.truncf %[[T]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[RT]] : f32
// CHECK-NEXT:    } -> tensor<?x1x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<?x1x8xf32>
func.func @sum_keepdims(%x: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// A float64 sum is compensated (Neumaier): two f64 outputs, the sum and the compensation;
// the finishing generic adds them where the sum is finite.
// CHECK-LABEL: func.func @sum_f64(
// CHECK:         %[[S:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x?xf64>) outs(%{{.*}}, %{{.*}} : tensor<4xf64>, tensor<4xf64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f64, %[[SUM:.*]]: f64, %[[COMP:.*]]: f64):
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[SUM]], %[[V]] : f64
// CHECK-NEXT:      %[[A:.*]] = math.absf %[[SUM]] : f64
// CHECK-NEXT:      %[[B:.*]] = math.absf %[[V]] : f64
// CHECK-NEXT:      %[[KEEP:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f64
// CHECK-NEXT:      %[[BIG:.*]] = arith.select %[[KEEP]], %[[SUM]], %[[V]] : f64
// CHECK-NEXT:      %[[SMALL:.*]] = arith.select %[[KEEP]], %[[V]], %[[SUM]] : f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[BIG]], %[[T]] : f64
// CHECK-NEXT:      %[[ERR:.*]] = arith.addf %[[D]], %[[SMALL]] : f64
// CHECK-NEXT:      %[[C:.*]] = arith.addf %[[COMP]], %[[ERR]] : f64
// CHECK-NEXT:      linalg.yield %[[T]], %[[C]] : f64, f64
// CHECK:         linalg.generic {{.*}} ins(%[[S]]#0, %[[S]]#1 : tensor<4xf64>, tensor<4xf64>)
// CHECK:           arith.cmpf olt
// CHECK:           arith.addf
// CHECK:           arith.select
// CHECK-NOT:       arith.truncf
func.func @sum_f64(%x: tensor<4x?xf64>) -> tensor<4xf64> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<4x?xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// Integers add in their own type (wrapping): no second generic; keepdims is a
// tensor.expand_shape of the reduced tensor.
// CHECK-LABEL: func.func @sum_int(
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<4x5xi32>) outs(%{{.*}} : tensor<5xi32>)
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i32
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xi32> into tensor<1x5xi32>
// CHECK-NEXT:    return %[[R]]
func.func @sum_int(%x: tensor<4x5xi32>) -> tensor<1x5xi32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x5xi32>) -> tensor<1x5xi32>
  return %0 : tensor<1x5xi32>
}

// A mean divides the wide sum by the element count (computed once, at the function level,
// from the run-time sizes) before rounding.
// CHECK-LABEL: func.func @mean_all(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x3xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK-NEXT:    %[[COUNT:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK-NEXT:    %[[F:.*]] = arith.sitofp %[[I]] : i64 to f64
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<?x3xf32>) outs(%{{.*}} : tensor<f64>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%[[S]] : tensor<f64>) outs(%{{.*}} : tensor<f32>) {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.divf %[[T]], %[[F]] : f64
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[D]] : f64 to f32
func.func @mean_all(%x: tensor<?x3xf32>) -> tensor<f32> {
  %0 = graph.reduce_mean %x : (tensor<?x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// max has no identity: where a reduced size is `?`, a graph.check that the axis is not
// empty (numpy's message), then the fold from -inf with IEEE maximumf.
// CHECK-LABEL: func.func @max_all(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x4xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi ne, %[[N]], %[[C0]] : index
// CHECK-NEXT:    graph.check %[[OK]], %[[N]], %[[C0]] {message = "'graph.reduce_max' failed: zero-size array to reduction operation maximum which has no identity"} : index, index
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<?x4xf32>) outs(%[[F]] : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32):
// CHECK-NEXT:      %[[MX:.*]] = arith.maximumf %[[M]], %[[V]] : f32
func.func @max_all(%x: tensor<?x4xf32>) -> tensor<f32> {
  %0 = graph.reduce_max %x : (tensor<?x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Static sizes: no check. Integer min is signed, from the type's maximum.
// CHECK-LABEL: func.func @min_int_rows(
// CHECK-NOT:     graph.check
// CHECK:         %[[TOP:.*]] = arith.constant 2147483647 : i32
// CHECK:         linalg.fill ins(%[[TOP]] : i32)
// CHECK:           arith.minsi
func.func @min_int_rows(%x: tensor<3x4xi32>) -> tensor<3xi32> {
  %0 = graph.reduce_min %x {axes = array<i64: 1>} : (tensor<3x4xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// argmax carries (best value, its index as i64 from linalg.index); a NaN is taken when it is
// the first one.
// CHECK-LABEL: func.func @argmax_keepdims(
// CHECK:         graph.check %{{.*}} {message = "'graph.argmax' failed: attempt to get argmax of an empty sequence"}
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x?xf32>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[AT:.*]]: i64):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[V]], %[[BEST]] : f32
// CHECK-NEXT:      %[[VNAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-NEXT:      %[[BNAN:.*]] = arith.cmpf uno, %[[BEST]], %[[BEST]] : f32
// CHECK:           %[[TAKE:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[NB:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK-NEXT:      %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      %[[NA:.*]] = arith.select %[[TAKE]], %[[I64]], %[[AT]] : i64
// CHECK-NEXT:      linalg.yield %[[NB]], %[[NA]] : f32, i64
// CHECK:         tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
func.func @argmax_keepdims(%x: tensor<2x?xf32>) -> tensor<2x1xi64> {
  %0 = graph.argmax %x {axis = 1 : i64, keepdims = true} : (tensor<2x?xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}
