// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s

// Cross-entropy with integer labels: one `loop.for` over the batch carrying the sum; per
// row the maximum, the sum of exponentials, and the label's log-softmax term, 0 for a label
// out of range (read at class 0, then discarded). The loss is -sum / B.

// CHECK-LABEL: func.func @ce(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x10xf32>, %[[L:[^:]*]]: memref<?xi32>, %[[OUT:[^:]*]]: memref<f32> {graph.output = 0 : i64})
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK:         %[[B:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[SUM:.*]] = loop.for %[[I:[^ ]*]] = %[[C0]] to %[[B]] step %{{.*}} iter_args(%[[ACC:[^ ]*]] = %[[ZERO]]) -> (f32) {
// CHECK:           arith.maximumf
// CHECK:           math.exp
// CHECK:           %[[LOG:.*]] = math.log
// CHECK:           %[[LBL:.*]] = memory.load %[[L]][%[[I]]] : memref<?xi32>
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[AT:.*]] = arith.select %[[OK]], %{{.*}}, %[[C0]] : index
// CHECK:           memory.load %[[X]][%[[I]], %[[AT]]] : memref<?x10xf32>
// CHECK:           %[[TERM:.*]] = arith.select %[[OK]], %{{.*}}, %[[ZERO]] : f32
// CHECK:           %[[NEXT:.*]] = arith.addf %[[ACC]], %[[TERM]] : f32
// CHECK:           loop.yield %[[NEXT]] : f32
// CHECK:         %[[NEG:.*]] = arith.negf %[[SUM]] : f32
// CHECK:         %[[LOSS:.*]] = arith.divf %[[NEG]], %{{.*}} : f32
// CHECK:         memory.store %[[LOSS]], %[[OUT]][] : memref<f32>
func.func @ce(%x: tensor<?x10xf32>, %l: tensor<?xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// mse: a `loop.for` nest over the broadcast shape, the sum divided by the element count.

// CHECK-LABEL: func.func @mse(
// CHECK:         loop.for
// CHECK:           loop.for
// CHECK:             %[[D:.*]] = arith.subf
// CHECK:             %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK:             arith.addf %{{.*}}, %[[SQ]] : f32
// CHECK:         arith.divf
func.func @mse(%p: tensor<?x1xf32>, %q: tensor<3xf32>) -> tensor<f32> {
  %0 = graph.mse %p, %q : (tensor<?x1xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// one_hot: the index sign-extended to i64 and compared with the position along the new axis.

// CHECK-LABEL: func.func @hot(
// CHECK:         loop.parallel (%[[I:[^,]*]], %[[K:[^)]*]]) =
// CHECK-NEXT:      %[[V:.*]] = memory.load %{{.*}}[%[[I]]] : memref<?xi32>
// CHECK-NEXT:      %[[W:.*]] = arith.extsi %[[V]] : i32 to i64
// CHECK-NEXT:      %[[KK:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpi eq, %[[W]], %[[KK]] : i64
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[EQ]]
// CHECK-NEXT:      memory.store %[[R]], %{{.*}}[%[[I]], %[[K]]] : memref<?x4xf32>
func.func @hot(%l: tensor<?xi32>) -> tensor<?x4xf32> {
  %0 = graph.one_hot %l {depth = 4 : i64} : (tensor<?xi32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// gather: a negative index plus the row count; out of range reads as zero.

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[T:[^:]*]]: memref<?x8xf32>, %[[IDS:[^:]*]]: memref<?xi64>, %[[OUT:[^:]*]]: memref<?x8xf32>
// CHECK:         %[[ROWS:.*]] = memory.dim %[[T]], 0
// CHECK:         %[[N:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK:         loop.parallel (%[[I:[^,]*]], %[[J:[^)]*]]) =
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[IDS]][%[[I]]] : memref<?xi64>
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[V]], %{{.*}} : i64
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[V]], %[[N]] : i64
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[V]] : i64
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[E:.*]] = memory.load %[[T]][%[[ROW]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[OK]], %[[E]], %{{.*}} : f32
// CHECK-NEXT:      memory.store %[[R]], %[[OUT]][%[[I]], %[[J]]] : memref<?x8xf32>
func.func @gather(%t: tensor<?x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = graph.gather %t, %i : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// scatter_add: dest copied into the result, then the index positions in order (a `loop.for`:
// duplicates accumulate), each row's elements in parallel; a skipped update adds -0.0.

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME:      %[[D:[^:]*]]: memref<?x8xf32>, %[[IDS:[^:]*]]: memref<?xi64>, %[[U:[^:]*]]: memref<?x8xf32>, %[[OUT:[^:]*]]: memref<?x8xf32>
// CHECK-DAG:     %[[NZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:         memory.copy %[[D]], %[[OUT]] : memref<?x8xf32> to memref<?x8xf32>
// CHECK:         loop.for %[[P:[^ ]*]] =
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]]
// CHECK:           loop.parallel (%[[J:[^)]*]]) =
// CHECK-NEXT:        %[[V:.*]] = memory.load %[[U]][%[[P]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:        %[[A:.*]] = arith.select %[[OK]], %[[V]], %[[NZ]] : f32
// CHECK-NEXT:        %[[OLD:.*]] = memory.load %[[OUT]][%[[ROW]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[A]] : f32
// CHECK-NEXT:        memory.store %[[NEW]], %[[OUT]][%[[ROW]], %[[J]]] : memref<?x8xf32>
func.func @scatter(%d: tensor<?x8xf32>, %i: tensor<?xi64>, %u: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = graph.scatter_add %d, %i, %u : (tensor<?x8xf32>, tensor<?xi64>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// slice `x[-1::-2]` of a run-time size n: start max(n - 1, -1), count
// ceil(max(start - (-1), 0) / 2), element i read at start - 2 i.

// CHECK-LABEL: func.func @reverse(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xf32>, %[[OUT:[^:]*]]: memref<?xf32>
// CHECK-DAG:     %[[M1:.*]] = arith.constant -1 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0
// CHECK-NEXT:    %[[S0:.*]] = arith.addi %[[N]], %[[M1]] : index
// CHECK-NEXT:    %[[START:.*]] = arith.maxsi %[[S0]], %[[M1]] : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %[[START]], %[[M1]] : index
// CHECK-NEXT:    %[[POS:.*]] = arith.maxsi %[[SPAN]], %[[C0]] : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[POS]], %[[C1]] : index
// CHECK-NEXT:    %[[COUNT:.*]] = arith.divui %[[UP]], %[[C2]] : index
// CHECK-NEXT:    loop.parallel (%[[I:[^)]*]]) = (%[[C0]]) to (%[[COUNT]]) step (%[[C1]]) {
// CHECK-NEXT:      %[[OFF:.*]] = arith.muli %[[I]], %[[C2]] : index
// CHECK-NEXT:      %[[AT:.*]] = arith.subi %[[START]], %[[OFF]] : index
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[X]][%[[AT]]] : memref<?xf32>
// CHECK-NEXT:      memory.store %[[V]], %[[OUT]][%[[I]]] : memref<?xf32>
func.func @reverse(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.slice %x {starts = array<i64: -1>, stops = array<i64: -9223372036854775807>, steps = array<i64: -2>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// concat: one parallel copy per input, the second at the first's run-time size along axis 0.

// CHECK-LABEL: func.func @concat(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x3xf32>, %[[B:[^:]*]]: memref<2x3xf32>, %[[OUT:[^:]*]]: memref<?x3xf32>
// CHECK:         %[[N:.*]] = memory.dim %[[A]], 0
// CHECK:         loop.parallel (%[[I:[^,]*]], %[[J:[^)]*]]) =
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[A]][%[[I]], %[[J]]]
// CHECK-NEXT:      memory.store %[[V]], %[[OUT]][%[[I]], %[[J]]]
// CHECK:         loop.parallel (%[[K:[^,]*]], %[[L:[^)]*]]) =
// CHECK-NEXT:      %[[AT:.*]] = arith.addi %[[K]], %[[N]] : index
// CHECK-NEXT:      %[[W:.*]] = memory.load %[[B]][%[[K]], %[[L]]] : memref<2x3xf32>
// CHECK-NEXT:      memory.store %[[W]], %[[OUT]][%[[AT]], %[[L]]] : memref<?x3xf32>
func.func @concat(%a: tensor<?x3xf32>, %b: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
