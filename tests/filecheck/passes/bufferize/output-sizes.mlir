// RUN: irkit-opt %s -p 'bufferize{output-sizes=true}' | FileCheck %s

// With output-sizes, a function whose outputs have `?` sizes gets a sibling computing them
// from the inputs' sizes alone: the slice of the entry block the sizes were built with
// (the empty's size for the map's output, the sum of the parts for the concat).

// CHECK-LABEL: func.func @tail(
// CHECK:         linalg.map
// CHECK:         return
// CHECK-LABEL: func.func @tail_output_sizes(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xf32> {graph.name = "x"}, %[[S:[^:]*]]: memref<2xi64> {graph.output_sizes = {{\[\[}}0, 0], [1, 0]]})
// CHECK-SAME:      attributes {graph.output_sizes_of = "tail"}
// CHECK:         %[[N:.*]] = memory.dim %[[X]], 0 : memref<?xf32>
// CHECK-NEXT:    %[[M:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK-NEXT:    %[[SUM:.*]] = arith.addi %[[N]], %[[N]] : index
// CHECK-NEXT:    %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
// CHECK:         memory.store %[[M64]], %[[S]][%{{.*}}] : memref<2xi64>
// CHECK-NEXT:    %[[SUM64:.*]] = arith.index_cast %[[SUM]] : index to i64
// CHECK:         memory.store %[[SUM64]], %[[S]][%{{.*}}] : memref<2xi64>
// CHECK-NOT:     linalg
// CHECK:         return
func.func @tail(%x: tensor<?xf32> {graph.name = "x"}) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = arith.subi %n, %c1 : index
  %s = tensor.extract_slice %x[1] [%m] [1] : tensor<?xf32> to tensor<?xf32>
  %e = tensor.empty(%m) : tensor<?xf32>
  %r = linalg.map { math.exp } ins(%s : tensor<?xf32>) outs(%e : tensor<?xf32>)
  %cat = tensor.concat dim(0) %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %r, %cat : tensor<?xf32>, tensor<?xf32>
}
