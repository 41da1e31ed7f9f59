// RUN: irkit-opt %s -p bufferize | FileCheck %s

// The graph op no structured op expresses (scatter_add: indirect writes) is lowered straight
// to loops by its bufferize rule, in the same buffer map as every other op: it reads the
// buffer the map wrote, writes the function's output, and numbers its run-time check after
// the graph.check before it (one status buffer, codes in program order). The index
// positions run in order (a loop.for: a row named twice gets both updates), a row's
// elements in parallel, and a row out of range is not written.

// CHECK-LABEL: func.func @scatter(
// CHECK-SAME:      %[[D:[^:]*]]: memref<?x3xf32>, %[[I:[^:]*]]: memref<?xi64>, %[[U:[^:]*]]: memref<?x3xf32>, %[[N:[^:]*]]: index,
// CHECK-SAME:      %[[OUT:[^:]*]]: memref<?x3xf32> {graph.output = 0 : i64}, %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         memory.check %{{.*}}, %[[ST]] {code = 1 : i64, message = "'graph.foo' failed: {value} <= {bound}"}
// CHECK:         %[[A:.*]] = memory.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[D]] : memref<?x3xf32>) outs(%[[A]] : memref<?x3xf32>)
// CHECK-NEXT:    memory.copy %[[A]], %[[OUT]]
// CHECK:         loop.for
// CHECK:           memory.load %[[I]]
// CHECK:           memory.check %[[OK:[^,]*]], %{{.*}}, %[[ST]] {code = 2 : i64, message = "'graph.scatter_add' failed: index {value} is out of bounds for axis 0 with size {bound}"}
// CHECK:           loop.if %[[OK]] {
// CHECK-NEXT:        loop.parallel
// CHECK:               memory.store %{{.*}}, %[[OUT]]
// CHECK:         memory.dealloc %[[A]]
// CHECK-NOT:     graph.
func.func @scatter(%d: tensor<?x3xf32>, %i: tensor<?xi64>, %u: tensor<?x3xf32>, %n: index) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %pos = arith.cmpi sgt, %n, %c0 : index
  graph.check %pos, %n, %c0 {message = "'graph.foo' failed: {value} <= {bound}"} : index, index
  %m = tensor.dim %d, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%m) : tensor<?x3xf32>
  %a = linalg.map { math.exp } ins(%d : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  %s = graph.scatter_add %a, %i, %u : (tensor<?x3xf32>, tensor<?xi64>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %s : tensor<?x3xf32>
}
