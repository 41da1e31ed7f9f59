// RUN: irkit-opt %s -p 'lower-graph-to-loop{output-sizes=true}' | FileCheck %s

// With output-sizes, a function whose outputs have `?` sizes gets a sibling that computes
// them from the inputs' sizes alone: the slice of the entry block that bufferize built them
// with (memory.dim and arith), nothing that reads or writes data.

// The slice is a view of the input, copied into the output.
// CHECK-LABEL: func.func @tail(
// CHECK:         %[[V:.*]] = memory.subview
// CHECK-NEXT:    memory.copy %[[V]], %{{.*}} : memref<?xf32, strided<[1], offset: ?>> to memref<?xf32>
// CHECK:         return
// CHECK-LABEL: func.func @tail_output_sizes(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xf32> {graph.name = "x"}, %[[S:[^:]*]]: memref<1xi64> {graph.output_sizes = {{\[\[}}0, 0]]})
// CHECK-SAME:      attributes {graph.output_sizes_of = "tail"}
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0 : memref<?xf32>
// CHECK-NEXT:    %[[LO:.*]] = arith.minsi %[[ONE]], %[[N]] : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.subi %[[N]], %[[LO]] : index
// CHECK-NEXT:    %[[SIZE:.*]] = arith.maxsi %[[LEN]], %[[ZERO]] : index
// CHECK-NEXT:    %[[S64:.*]] = arith.index_cast %[[SIZE]] : index to i64
// CHECK:         memory.store %[[S64]], %[[S]][%{{.*}}] : memref<1xi64>
// CHECK-NOT:     memory.load
// CHECK-NOT:     loop.parallel
// CHECK:         return
func.func @tail(%x: tensor<?xf32> {graph.name = "x"}) -> tensor<?xf32> {
  %0 = graph.slice %x {starts = array<i64: 1>, steps = array<i64: 1>, stops = array<i64: 9223372036854775807>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// Static outputs need no sizes function.
// CHECK-LABEL: func.func @static(
// CHECK-NOT:   func.func @static_output_sizes
func.func @static(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
