// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s

// Reductions: a `loop.parallel` over the axes kept, inside it a `loop.for` nest over the
// reduced axes carrying the accumulator from the reduction's identity; with keepdims the
// reduced axis is stored at index 0.

// CHECK-LABEL: func.func @sum_keepdims(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x?x8xf32>, %[[OUT:[^:]*]]: memref<?x1x8xf32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[B:.*]] = memory.dim %[[X]], 0
// CHECK-DAG:     %[[R:.*]] = memory.dim %[[X]], 1
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[K:[^,)]*]]) = (%[[C0]], %[[C0]]) to (%[[B]], %[[C8]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[S:.*]] = loop.for %[[J:[^ ]*]] = %[[C0]] to %[[R]] step %[[C1]] iter_args(%[[ACC:[^ ]*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memory.load %[[X]][%[[I]], %[[J]], %[[K]]] : memref<?x?x8xf32>
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:        loop.yield %[[N]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[S]], %[[OUT]][%[[I]], %[[C0]], %[[K]]] : memref<?x1x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @sum_keepdims(%x: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// Reducing every axis: no parallel loop, a nest of `loop.for`s from -inf (IEEE maximum:
// a NaN anywhere gives NaN), stored into the rank-0 output.
// CHECK-LABEL: func.func @max_all(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32>, %[[OUT:[^:]*]]: memref<f32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NOT:     loop.parallel
// CHECK:         %[[M:.*]] = loop.for %[[I:[^ ]*]] = {{.*}} iter_args(%[[A:[^ ]*]] = %[[NEGINF]]) -> (f32) {
// CHECK-NEXT:      %[[M2:.*]] = loop.for %[[J:[^ ]*]] = {{.*}} iter_args(%[[B:[^ ]*]] = %[[A]]) -> (f32) {
// CHECK-NEXT:        %[[V:.*]] = memory.load %[[X]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[MX:.*]] = arith.maximumf %[[B]], %[[V]] : f32
// CHECK-NEXT:        loop.yield %[[MX]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %[[M2]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    memory.store %[[M]], %[[OUT]][] : memref<f32>
func.func @max_all(%x: tensor<?x4xf32>) -> tensor<f32> {
  %0 = graph.reduce_max %x : (tensor<?x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The mean divides by the element count, read at run time and converted once.
// CHECK-LABEL: func.func @mean_rows(
// CHECK:         %[[N:.*]] = memory.dim %{{.*}}, 0 : memref<?x3xf32>
// CHECK:         %[[NI:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:    %[[NF:.*]] = arith.sitofp %[[NI]] : i64 to f32
// CHECK:         loop.parallel
// CHECK:           %[[S:.*]] = loop.for
// CHECK:           arith.divf %[[S]], %[[NF]] : f32
func.func @mean_rows(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = graph.reduce_mean %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// argmax carries (best, index): a greater element, or the first NaN, takes over.
// CHECK-LABEL: func.func @argmax(
// CHECK:         loop.parallel (%[[I:[^,)]*]]) =
// CHECK-NEXT:      %[[R:.*]]:2 = loop.for %[[J:[^ ]*]] = {{.*}} iter_args(%[[BEST:[^ ]*]] = %{{.*}}, %[[AT:[^ ]*]] = %{{.*}}) -> (f32, index) {
// CHECK:             %[[GT:.*]] = arith.cmpf ogt, %[[V:[^,)]*]], %[[BEST]] : f32
// CHECK:             %[[TAKE:.*]] = arith.ori %[[GT]], %{{.*}} : i1
// CHECK-NEXT:        %[[NB:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK-NEXT:        %[[NA:.*]] = arith.select %[[TAKE]], %[[J]], %[[AT]] : index
// CHECK-NEXT:        loop.yield %[[NB]], %[[NA]] : f32, index
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[IDX:.*]] = arith.index_cast %[[R]]#1 : index to i64
// CHECK-NEXT:      memory.store %[[IDX]], %{{.*}}[%[[I]]] : memref<?xi64>
func.func @argmax(%x: tensor<?x10xf32>) -> tensor<?xi64> {
  %0 = graph.argmax %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}
