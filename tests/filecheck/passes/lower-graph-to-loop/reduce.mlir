// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s

// Reductions: a `loop.parallel` over the axes kept, inside it a `loop.for` nest over the
// reduced axes carrying the accumulator from the reduction's identity; with keepdims the
// reduced axis is stored at index 0. A float32 sum is carried in f64, each element widened,
// and rounded once after the loop (passes/lower_graph/accumulate.py).

// CHECK-LABEL: func.func @sum_keepdims(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x?x8xf32>, %[[OUT:[^:]*]]: memref<?x1x8xf32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[B:.*]] = memory.dim %[[X]], 0
// CHECK-DAG:     %[[R:.*]] = memory.dim %[[X]], 1
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[K:[^,)]*]]) = (%[[C0]], %[[C0]]) to (%[[B]], %[[C8]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[S:.*]] = loop.for %[[J:[^ ]*]] = %[[C0]] to %[[R]] step %[[C1]] iter_args(%[[ACC:[^ ]*]] = %[[ZERO]]) -> (f64) {
// CHECK-NEXT:        %[[V:.*]] = memory.load %[[X]][%[[I]], %[[J]], %[[K]]] : memref<?x?x8xf32>
// CHECK-NEXT:        %[[W:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[ACC]], %[[W]] : f64
// CHECK-NEXT:        loop.yield %[[N]] : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[S]] : f64 to f32
// CHECK-NEXT:      memory.store %[[T]], %[[OUT]][%[[I]], %[[C0]], %[[K]]] : memref<?x1x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @sum_keepdims(%x: tensor<?x?x8xf32>) -> tensor<?x1x8xf32> {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x?x8xf32>) -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// Reducing every axis: no parallel loop, a nest of `loop.for`s from -inf (IEEE maximum:
// a NaN anywhere gives NaN), stored into the rank-0 output.
// A max has no identity: numpy raises for the max of no element, so a `?` size that may be 0
// is checked first; the status buffer that records the error is the last argument.
// CHECK-LABEL: func.func @max_all(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32>, %[[OUT:[^:]*]]: memref<f32> {graph.output = 0 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0 : memref<?x4xf32>
// CHECK-NEXT:    %[[NONEMPTY:.*]] = arith.cmpi ne, %[[N]], %[[ZERO]] : index
// CHECK:         memory.check %[[NONEMPTY]], %{{.*}}, %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.reduce_max' failed: zero-size array to reduction operation maximum which has no identity"} : memref<3xi64>
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

// The mean divides the wide sum by the element count (read at run time and converted once),
// then rounds once.
// CHECK-LABEL: func.func @mean_rows(
// CHECK:         %[[N:.*]] = memory.dim %{{.*}}, 0 : memref<?x3xf32>
// CHECK:         %[[NI:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:    %[[NF:.*]] = arith.sitofp %[[NI]] : i64 to f64
// CHECK:         loop.parallel
// CHECK:           %[[S:.*]] = loop.for
// CHECK:           %[[M:.*]] = arith.divf %[[S]], %[[NF]] : f64
// CHECK-NEXT:      arith.truncf %[[M]] : f64 to f32
func.func @mean_rows(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = graph.reduce_mean %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// argmax carries (best, index): a greater element, or the first NaN, takes over.
// The reduced axis has 10 elements: nothing to check, no status argument.
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:      memref<?xi64> {graph.output = 0 : i64}) {
// CHECK-NOT:     memory.check
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

// A float64 sum is compensated (Neumaier): the carried (sum, compensation) gains the part of
// each addition that rounding lost, taken from the operand of smaller magnitude; the result
// is sum + compensation, or the plain sum when that is not finite.
// CHECK-LABEL: func.func @sum_f64(
// CHECK:         %[[R:.*]]:2 = loop.for %{{.*}} iter_args(%[[S:[^ ]*]] = %[[Z:[^,]*]], %[[C:[^ ]*]] = %[[Z]]) -> (f64, f64) {
// CHECK-NEXT:      %[[X:.*]] = memory.load
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[S]], %[[X]] : f64
// CHECK-NEXT:      %[[AS:.*]] = math.absf %[[S]] : f64
// CHECK-NEXT:      %[[AX:.*]] = math.absf %[[X]] : f64
// CHECK-NEXT:      %[[KEEP:.*]] = arith.cmpf oge, %[[AS]], %[[AX]] : f64
// CHECK-NEXT:      %[[BIG:.*]] = arith.select %[[KEEP]], %[[S]], %[[X]] : f64
// CHECK-NEXT:      %[[SMALL:.*]] = arith.select %[[KEEP]], %[[X]], %[[S]] : f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[BIG]], %[[T]] : f64
// CHECK-NEXT:      %[[LOST:.*]] = arith.addf %[[D]], %[[SMALL]] : f64
// CHECK-NEXT:      %[[NC:.*]] = arith.addf %[[C]], %[[LOST]] : f64
// CHECK-NEXT:      loop.yield %[[T]], %[[NC]] : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[FIN:.*]] = math.isfinite %[[R]]#0 : f64
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[R]]#0, %[[R]]#1 : f64
// CHECK-NEXT:    %[[OUT:.*]] = arith.select %[[FIN]], %[[SUM]], %[[R]]#0 : f64
// CHECK-NEXT:    memory.store %[[OUT]]
func.func @sum_f64(%x: tensor<?xf64>) -> tensor<f64> {
  %0 = graph.reduce_sum %x : (tensor<?xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}

// Integer sums stay in their type and wrap, as np.sum(x, dtype=x.dtype): nothing widened.
// CHECK-LABEL: func.func @sum_i32(
// CHECK:         loop.for %{{.*}} iter_args(%[[A:[^ ]*]] = %{{.*}}) -> (i32) {
// CHECK-NEXT:      %[[V:.*]] = memory.load
// CHECK-NEXT:      %[[N:.*]] = arith.addi %[[A]], %[[V]] : i32
// CHECK-NEXT:      loop.yield %[[N]] : i32
// CHECK-NOT:     arith.extsi
func.func @sum_i32(%x: tensor<?xi32>) -> tensor<i32> {
  %0 = graph.reduce_sum %x : (tensor<?xi32>) -> tensor<i32>
  return %0 : tensor<i32>
}
