// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s

// Cross-entropy with integer labels: one `loop.for` over the batch carrying the sum; per
// row the maximum, the sum of exponentials, and the label's log-softmax term; a label out of
// range is recorded in the status argument (`memory.check`) and its logit not read (checks.mlir
// has more). The loss is -sum / B. Both sums are
// carried in f64 and the loss rounded once to f32 (passes/lower_graph/accumulate.py).

// CHECK-LABEL: func.func @ce(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x10xf32>, %[[L:[^:]*]]: memref<?xi32>, %[[OUT:[^:]*]]: memref<f32> {graph.output = 0 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[WZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK:         %[[B:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[SUM:.*]] = loop.for %[[I:[^ ]*]] = %[[C0]] to %[[B]] step %{{.*}} iter_args(%[[ACC:[^ ]*]] = %[[WZERO]]) -> (f64) {
// CHECK:           arith.maximumf
// CHECK:           loop.for {{.*}} iter_args(%[[EACC:[^ ]*]] = %[[WZERO]]) -> (f64) {
// CHECK:             %[[E:.*]] = math.exp %{{.*}} : f32
// CHECK-NEXT:        %[[WE:.*]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT:        arith.addf %[[EACC]], %[[WE]] : f64
// CHECK:           %[[WLOG:.*]] = math.log %{{.*}} : f64
// CHECK-NEXT:      %[[LOG:.*]] = arith.truncf %[[WLOG]] : f64 to f32
// CHECK:           %[[LBL:.*]] = memory.load %[[L]][%[[I]]] : memref<?xi32>
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK-NEXT:      memory.check %[[OK]], %{{.*}}, %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.cross_entropy' failed: label {value} is out of range for {bound} classes"} : memref<3xi64>
// CHECK:           %[[PICK:.*]] = loop.if %[[OK]] -> (f32) {
// CHECK-NEXT:        memory.load %[[X]][%[[I]], %{{.*}}] : memref<?x10xf32>
// CHECK:           } else {
// CHECK-NEXT:        loop.yield %[[ZERO]] : f32
// CHECK:           %[[SHIFTED:.*]] = arith.subf %[[PICK]], %{{.*}} : f32
// CHECK-NEXT:      %[[TERM:.*]] = arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK:           %[[WTERM:.*]] = arith.extf %[[TERM]] : f32 to f64
// CHECK:           %[[NEXT:.*]] = arith.addf %[[ACC]], %[[WTERM]] : f64
// CHECK:           loop.yield %[[NEXT]] : f64
// CHECK:         %[[NEG:.*]] = arith.negf %[[SUM]] : f64
// CHECK:         %[[WLOSS:.*]] = arith.divf %[[NEG]], %{{.*}} : f64
// CHECK:         %[[LOSS:.*]] = arith.truncf %[[WLOSS]] : f64 to f32
// CHECK:         memory.store %[[LOSS]], %[[OUT]][] : memref<f32>
func.func @ce(%x: tensor<?x10xf32>, %l: tensor<?xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// mse: a `loop.for` nest over the broadcast shape, the sum divided by the element count;
// the operands are widened to f64, the difference squared and summed there, the mean rounded
// once.

// CHECK-LABEL: func.func @mse(
// CHECK:         loop.for
// CHECK:           loop.for
// CHECK:             %[[P:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:             %[[Q:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[P]], %[[Q]] : f64
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f64
// CHECK-NEXT:        arith.addf %{{.*}}, %[[SQ]] : f64
// CHECK:         %[[M:.*]] = arith.divf %{{.*}} : f64
// CHECK-NEXT:    arith.truncf %[[M]] : f64 to f32
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

// gather: a negative index plus the row count; one still out of range is recorded (the index
// as given) and its row not read. Per index position, a parallel copy of the row.

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[T:[^:]*]]: memref<?x8xf32>, %[[IDS:[^:]*]]: memref<?xi64>, %[[OUT:[^:]*]]: memref<?x8xf32> {graph.output = 0 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         %[[ROWS:.*]] = memory.dim %[[T]], 0
// CHECK:         %[[N:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK:         loop.parallel (%[[I:[^)]*]]) =
// CHECK-NEXT:      %[[V:.*]] = memory.load %[[IDS]][%[[I]]] : memref<?xi64>
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpi slt, %[[V]], %{{.*}} : i64
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[V]], %[[N]] : i64
// CHECK-NEXT:      %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[V]] : i64
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      memory.check %[[OK]], %[[V]], %[[N]], %[[ST]]
// CHECK-NEXT:      loop.if %[[OK]] {
// CHECK-NEXT:        loop.parallel (%[[J:[^)]*]]) =
// CHECK-NEXT:          %[[E:.*]] = memory.load %[[T]][%[[ROW]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:          memory.store %[[E]], %[[OUT]][%[[I]], %[[J]]] : memref<?x8xf32>
func.func @gather(%t: tensor<?x8xf32>, %i: tensor<?xi64>) -> tensor<?x8xf32> {
  %0 = graph.gather %t, %i : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// scatter_add: dest copied into the result, then the index positions in order (a `loop.for`:
// duplicates accumulate), each row's elements in parallel; an index out of range is recorded
// and its update not added.

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME:      %[[D:[^:]*]]: memref<?x8xf32>, %[[IDS:[^:]*]]: memref<?xi64>, %[[U:[^:]*]]: memref<?x8xf32>, %[[OUT:[^:]*]]: memref<?x8xf32> {graph.output = 0 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         memory.copy %[[D]], %[[OUT]] : memref<?x8xf32> to memref<?x8xf32>
// CHECK:         loop.for %[[P:[^ ]*]] =
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]]
// CHECK-NEXT:      memory.check %[[OK]], %{{.*}}, %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.scatter_add' failed: index {value} is out of bounds for axis 0 with size {bound}"}
// CHECK-NEXT:      loop.if %[[OK]] {
// CHECK-NEXT:        loop.parallel (%[[J:[^)]*]]) =
// CHECK-NEXT:          %[[OLD:.*]] = memory.load %[[OUT]][%[[ROW]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:          %[[V:.*]] = memory.load %[[U]][%[[P]], %[[J]]] : memref<?x8xf32>
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:          memory.store %[[NEW]], %[[OUT]][%[[ROW]], %[[J]]] : memref<?x8xf32>
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
