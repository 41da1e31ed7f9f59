// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s
// RUN: irkit-opt %s -p lower-graph-to-loop --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Run-time checks: what the interpreter raises on (an index out of range, a split or reshape
// whose sizes do not fit) becomes a `memory.check` at the graph op's location, writing the
// status argument that the first check adds after every other (`{graph.status}`). Codes
// count the function's checks from 1; the message is the interpreter's, with {value} and
// {bound} for what the check records. Nothing is read out of range after a failed check:
// an index is clamped, a size that does not fit reads from a buffer padded to it.

// Two checked ops: codes 1 and 2, one status argument, after the outputs; each check at its
// op's line, inside the loop that reads each index (the row is clamped to 0 when out of
// range).
// CHECK-LABEL: func.func @two(
// CHECK-SAME:      %[[OUT1:[^:]*]]: memref<?x8xf32> {graph.output = 1 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         loop.parallel
// CHECK:           %[[OK:.*]] = arith.andi
// CHECK-NEXT:      memory.check %[[OK]], %{{.*}}, %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.gather' failed: index {value} is out of bounds for axis 0 with size {bound}"} : memref<3xi64>
// CHECK:           %[[ROW:.*]] = arith.select %[[OK]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      memory.load %{{.*}}[%[[ROW]], %{{.*}}] : memref<?x8xf32>
// CHECK:         loop.for
// CHECK:           memory.check %{{.*}}, %{{.*}}, %{{.*}}, %[[ST]] {code = 2 : i64, message = "'graph.cross_entropy' failed: label {value} is out of range for {bound} classes"} : memref<3xi64>
// CHECK-NOT:     memory.check
// CHECK:         return
// LOC-LABEL:     func.func @two(
// LOC:           memory.check {{.*}} {code = 1 : i64, {{.*}} loc("checks.mlir":24:8)
// LOC:           memory.check {{.*}} {code = 2 : i64, {{.*}} loc("checks.mlir":26:8)
func.func @two(%t: tensor<?x8xf32>, %i: tensor<?xi32>, %x: tensor<?x4xf32>, %l: tensor<?xi32>)
    -> (tensor<f32>, tensor<?x8xf32>) {
  %0 = graph.gather %t, %i : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
       loc("checks.mlir":24:8)
  %1 = graph.cross_entropy %x, %l : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
       loc("checks.mlir":26:8)
  return %1, %0 : tensor<f32>, tensor<?x8xf32>
}

// Nothing to check (one_hot of an index out of range is a row of zeros; a split of a static
// size the verifier checked): no status argument.
// CHECK-LABEL: func.func @unchecked(
// CHECK-SAME:      %{{[^:]*}}: memref<2x4xf32> {graph.output = 2 : i64})
// CHECK-NOT:     memory.check
// CHECK:         return
func.func @unchecked(%l: tensor<?xi32>, %x: tensor<4x4xf32>)
    -> (tensor<?x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = graph.one_hot %l {depth = 3 : i64} : (tensor<?xi32>) -> tensor<?x3xf32>
  %1:2 = graph.split %x {axis = 0 : i64, sections = 2 : i64} : (tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  return %0, %1#0, %1#1 : tensor<?x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// split into equal parts of a run-time size: the size must divide; the parts round down, so
// the copies (of views of x) need no guard.
// CHECK-LABEL: func.func @split_equal(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x8xf32>, {{.*}}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[PART:.*]] = arith.floordivsi %[[N]], %[[C3]] : index
// CHECK-NEXT:    %[[REM:.*]] = arith.remui %[[N]], %[[C3]] : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK-NEXT:    %[[NL:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:    %[[C3L:.*]] = arith.index_cast %[[C3]] : index to i64
// CHECK-NEXT:    memory.check %[[OK]], %[[NL]], %[[C3L]], %[[ST]] {code = 1 : i64, message = "'graph.split' failed: array split does not result in an equal division (axis 0 of size {value} into {bound} sections)"}
// CHECK-NOT:     loop.if
// CHECK:         memory.subview %[[X]][0, 0] [%[[PART]], 8] [1, 1]
// CHECK:         memory.subview %[[X]][%[[PART]], 0] [%[[PART]], 8] [1, 1]
func.func @split_equal(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %0:3 = graph.split %x {axis = 0 : i64, sections = 3 : i64} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// split into parts of run-time sizes: none negative and their sum the axis size, else the
// parts (clamped at 0) would read past x: they are read from a copy of x padded with zeros
// to the parts' total.
// CHECK-LABEL: func.func @split_sized(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x2xf32>,
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0
// CHECK:         %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpi eq, %[[SUM]], %[[N]] : index
// CHECK-NEXT:    %[[NONNEG1:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[OK1:.*]] = arith.andi %[[EQ]], %[[NONNEG1]] : i1
// CHECK-NEXT:    %[[NONNEG2:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[OK:.*]] = arith.andi %[[OK1]], %[[NONNEG2]] : i1
// CHECK:         memory.check %[[OK]], %{{.*}}, %{{.*}}, %{{.*}} {code = 1 : i64, message = "'graph.split' failed: part sizes (adding up to {value}) do not add up to the axis size {bound}"}
// CHECK-NOT:     loop.if
// CHECK:         %[[A:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[B:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[TOTAL:.*]] = arith.addi %[[A]], %[[B]] : index
// CHECK-NEXT:    %[[OVER:.*]] = arith.subi %[[TOTAL]], %[[N]] : index
// CHECK-NEXT:    %[[PAD:.*]] = arith.maxsi %[[OVER]], %{{.*}} : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.addi %[[N]], %[[PAD]] : index
// CHECK-NEXT:    %[[P:.*]] = memory.alloc(%[[LEN]]) : memref<?x2xf32>
// CHECK:         loop.parallel
// CHECK:         %[[IN:.*]] = memory.subview %[[P]][0, 0] [%[[N]], 2] [1, 1]
// CHECK-NEXT:    memory.copy %[[X]], %[[IN]]
// CHECK-NEXT:    memory.subview %[[P]][0, 0] [%[[A]], 2] [1, 1]
// CHECK-NEXT:    memory.subview %[[P]][%[[A]], 0] [%[[B]], 2] [1, 1]
func.func @split_sized(%x: tensor<?x2xf32>, %m: tensor<i64>, %n: tensor<i64>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %0:2 = graph.split %x, %m, %n {axis = 0 : i64, sections = 2 : i64} : (tensor<?x2xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<?x2xf32>, tensor<?x2xf32>
}

// reshape to a static shape from a run-time size: the element counts must agree; the copy
// reads at most the elements x has (min(count, 8)), the rest of the result is zeros.
// CHECK-LABEL: func.func @reshape_static(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32>, {{.*}}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0
// CHECK-NEXT:    %[[COUNT:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK-NEXT:    %[[OK:.*]] = arith.cmpi eq, %[[COUNT]], %[[C8:.*]] : index
// CHECK:         memory.check %[[OK]], %{{.*}}, %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.reshape' failed: cannot reshape array of size {value} into shape (2, 4) of {bound} elements"}
// CHECK-NOT:     loop.if
// CHECK:         %[[TAKE:.*]] = arith.minsi %[[COUNT]], %[[C8]] : index
// CHECK-NEXT:    memory.subview %{{.*}}[0] [%[[TAKE]]] [1]
func.func @reshape_static(%x: tensor<?x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.reshape %x {shape = array<i64: 2, 4>} : (tensor<?x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// reshape with an inferred -1: the count must divide; the result rounds down, no guard.
// CHECK-LABEL: func.func @reshape_inferred(
// CHECK:         memory.check %{{.*}} {code = 1 : i64, message = "'graph.reshape' failed: cannot reshape array of size {value} into shape (-1, 3)"}
// CHECK-NOT:     loop.if
// CHECK:         memory.copy
func.func @reshape_inferred(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
  %0 = graph.reshape %x {shape = array<i64: -1, 3>} : (tensor<?x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
