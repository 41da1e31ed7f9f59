// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s
// RUN: irkit-opt %s -p 'lower-graph-to-loop{parallel=false}' | FileCheck %s --check-prefix=SEQ

// Elementwise ops become one loop nest over the result, written straight into the output
// argument when the value is returned. Broadcasting as numpy: an operand axis of static
// size 1 is read at index 0, a missing leading axis is not indexed at all, and the sizes of
// the fresh buffer come from `memory.dim` of the operands.

// CHECK-LABEL: func.func @add_broadcast(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32>, %[[Y:[^:]*]]: memref<?x1x4xf32>,
// CHECK-SAME:      %[[OUT:[^:]*]]: memref<?x?x4xf32> {graph.output = 0 : i64})
// CHECK-NOT:     -> 
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG:     %[[B:.*]] = memory.dim %[[Y]], 0 : memref<?x1x4xf32>
// CHECK-DAG:     %[[N:.*]] = memory.dim %[[X]], 0 : memref<?x4xf32>
// CHECK:         %[[T:.*]] = memory.alloc(%[[B]], %[[N]]) : memref<?x?x4xf32>
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]], %[[K:[^,)]*]]) = (%[[C0]], %[[C0]], %[[C0]]) to (%[[B]], %[[N]], %[[C4]]) step (%[[C1]], %[[C1]], %[[C1]]) {
// CHECK-NEXT:      %[[A:.*]] = memory.load %[[X]][%[[J]], %[[K]]] : memref<?x4xf32>
// CHECK-NEXT:      %[[YV:.*]] = memory.load %[[Y]][%[[I]], %[[C0]], %[[K]]] : memref<?x1x4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[YV]] : f32
// CHECK-NEXT:      memory.store %[[S]], %[[T]][%[[I]], %[[J]], %[[K]]] : memref<?x?x4xf32>
// CHECK-NEXT:    }
// The splat constant is read as a scalar: no load of its buffer.
// CHECK:         loop.parallel (%[[I:[^,)]*]], %[[J:[^,)]*]], %[[K:[^,)]*]]) = {{.*}} to (%[[B]], %[[N]], %[[C4]])
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[T]][%[[I]], %[[J]], %[[K]]]
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[V]], %[[TWO]] : f32
// CHECK-NEXT:      memory.store %[[M]], %[[OUT]][%[[I]], %[[J]], %[[K]]] : memref<?x?x4xf32>
// CHECK-NEXT:    }
// CHECK:         memory.dealloc %[[T]] : memref<?x?x4xf32>
// CHECK-NEXT:    memory.dealloc
// CHECK-NEXT:    return
// CHECK-NOT:     graph.

// SEQ-LABEL: func.func @add_broadcast(
// SEQ-NOT:     loop.parallel
// SEQ:         loop.for %[[I:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SEQ-NEXT:      loop.for %[[J:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SEQ-NEXT:        loop.for %[[K:[^ ]*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SEQ-NEXT:          memory.load %{{.*}}[%[[J]], %[[K]]] : memref<?x4xf32>
func.func @add_broadcast(%x: tensor<?x4xf32>, %y: tensor<?x1x4xf32>) -> tensor<?x?x4xf32> {
  %0 = graph.add %x, %y : (tensor<?x4xf32>, tensor<?x1x4xf32>) -> tensor<?x?x4xf32>
  %1 = graph.constant dense<2.0> : tensor<f32>
  %2 = graph.mul %0, %1 : (tensor<?x?x4xf32>, tensor<f32>) -> tensor<?x?x4xf32>
  return %2 : tensor<?x?x4xf32>
}

// Two unknown sizes on one axis: either may be 1 at run time. The result's size is
// `a == 1 ? b : a`, and each operand is read at `size == 1 ? 0 : i`, both comparisons
// made once, before the loop.
// CHECK-LABEL: func.func @dynamic_broadcast(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?xi32>, %[[B:[^:]*]]: memref<?xi32>, %[[OUT:[^:]*]]: memref<?xi32>
// CHECK-DAG:     %[[NA:.*]] = memory.dim %[[A]], 0
// CHECK-DAG:     %[[NB:.*]] = memory.dim %[[B]], 0
// CHECK:         %[[AONE:.*]] = arith.cmpi eq, %[[NA]], %[[C1:.*]] : index
// CHECK:         %[[N:.*]] = arith.select %[[AONE]], %[[NB]], %[[NA]] : index
// CHECK:         %[[BONE:.*]] = arith.cmpi eq, %[[NB]], %[[C1]] : index
// CHECK:         loop.parallel (%[[I:[^,)]*]]) = (%[[C0:[^,)]*]]) to (%[[N]]) step
// CHECK-NEXT:      %[[IA:.*]] = arith.select %[[AONE]], %[[C0]], %[[I]] : index
// CHECK-NEXT:      %[[VA:.*]] = memory.load %[[A]][%[[IA]]] : memref<?xi32>
// CHECK-NEXT:      %[[IB:.*]] = arith.select %[[BONE]], %[[C0]], %[[I]] : index
// CHECK-NEXT:      %[[VB:.*]] = memory.load %[[B]][%[[IB]]] : memref<?xi32>
// CHECK-NEXT:      %[[M:.*]] = arith.maxsi %[[VA]], %[[VB]] : i32
// CHECK-NEXT:      memory.store %[[M]], %[[OUT]][%[[I]]]
func.func @dynamic_broadcast(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %0 = graph.maximum %a, %b : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// Comparisons follow numpy on NaN: `ne` is unordered (true with a NaN), the others ordered.
// CHECK-LABEL: func.func @compare_select(
// CHECK:         arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @compare_select(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.cmp %x, %y {predicate = "ne"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %0 = graph.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
