// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s

// matmul: a `loop.parallel` over the result, a `loop.for` over K carrying the dot product.
// f32 factors are widened to f64 (their product is exact there), the sum carried in f64 and
// rounded once; integers stay in their type (and wrap).

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x784xf32>, %[[W:[^:]*]]: memref<784x10xf32>,
// CHECK-SAME:      %[[OUT:[^:]*]]: memref<?x10xf32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[K:.*]] = arith.constant 784 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:     %[[N:.*]] = memory.dim %[[X]], 0 : memref<?x784xf32>
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]]) = (%[[C0]], %[[C0]]) to (%[[N]], %[[C10]]) step (%[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[DOT:.*]] = loop.for %[[KV:[^ ]*]] = %[[C0]] to %[[K]] step %[[C1]] iter_args(%[[ACC:[^ ]*]] = %[[ZERO]]) -> (f64) {
// CHECK-NEXT:        %[[A:.*]] = memory.load %[[X]][%[[I]], %[[KV]]] : memref<?x784xf32>
// CHECK-NEXT:        %[[B:.*]] = memory.load %[[W]][%[[KV]], %[[J]]] : memref<784x10xf32>
// CHECK-NEXT:        %[[AB:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[P:.*]] = arith.extf %[[AB]] : f32 to f64
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f64
// CHECK-NEXT:        loop.yield %[[S]] : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[DOT]] : f64 to f32
// CHECK-NEXT:      memory.store %[[R]], %[[OUT]][%[[I]], %[[J]]] : memref<?x10xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @matmul(%x: tensor<?x784xf32>, %w: tensor<784x10xf32>) -> tensor<?x10xf32> {
  %0 = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// Batched, with numpy's batch broadcasting: lhs's batch axis of size 1 is read at 0.
// CHECK-LABEL: func.func @batched(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x1x3x4xi32>, %[[B:[^:]*]]: memref<5x4x?xi32>, %[[OUT:[^:]*]]: memref<?x5x3x?xi32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.parallel (%[[B0:[^,)]*]], %[[B1:[^,)]*]], %[[M:[^,)]*]], %[[N:[^,)]*]]) =
// CHECK-NEXT:      loop.for %[[K:[^ ]*]] = {{.*}} iter_args(%[[ACC:[^ ]*]] = %[[ZERO]]) -> (i32) {
// CHECK-NEXT:        memory.load %[[A]][%[[B0]], %[[C0]], %[[M]], %[[K]]] : memref<?x1x3x4xi32>
// CHECK-NEXT:        memory.load %[[B]][%[[B1]], %[[K]], %[[N]]] : memref<5x4x?xi32>
// CHECK-NEXT:        arith.muli
// CHECK-NEXT:        arith.addi %[[ACC]]
func.func @batched(%a: tensor<?x1x3x4xi32>, %b: tensor<5x4x?xi32>) -> tensor<?x5x3x?xi32> {
  %0 = graph.matmul %a, %b : (tensor<?x1x3x4xi32>, tensor<5x4x?xi32>) -> tensor<?x5x3x?xi32>
  return %0 : tensor<?x5x3x?xi32>
}

// A vector operand's axis is absent: [K] x [K, N] -> [N].
// CHECK-LABEL: func.func @vector_matrix(
// CHECK:         loop.parallel (%[[N:[^,)]*]]) =
// CHECK-NEXT:      loop.for %[[K:[^ ]*]] =
// CHECK-NEXT:        memory.load %{{.*}}[%[[K]]] : memref<4xf32>
// CHECK-NEXT:        memory.load %{{.*}}[%[[K]], %[[N]]] : memref<4x?xf32>
func.func @vector_matrix(%v: tensor<4xf32>, %m: tensor<4x?xf32>) -> tensor<?xf32> {
  %0 = graph.matmul %v, %m : (tensor<4xf32>, tensor<4x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
