// RUN: irkit-opt %s -p bufferize | FileCheck %s

// The `parallel` collectives on the buffers of their values: an all_slice is a view of its
// operand's buffer (this rank's rows), so it keeps that buffer alive like any other view,
// and the buffer is not overwritten in place while the rows are still read.

parallel.grid @g(shape = [2], axes = ["data"])

// The rows are read after the slice, while the next temporary is written: the sliced
// buffer is freed after the slice's last reader, not right after the slice (which let the
// next allocation reuse the rows before they were read).
// CHECK-LABEL: func.func @slice_keeps_source_alive(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3xf32>, %[[OUT:[^:]*]]: memref<?x3xf32> {graph.output = 0 : i64})
// CHECK:         %[[A:.*]] = memory.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<?x3xf32>) outs(%[[A]] : memref<?x3xf32>)
// CHECK:         %[[R:.*]] = mpi.comm_rank : index
// CHECK:         %[[S:.*]] = memory.subview %[[A]][%{{.*}}, 0]
// CHECK-NOT:     memory.dealloc %[[A]]
// CHECK:         %[[B:.*]] = memory.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[S]] : {{.*}}) outs(%[[B]] : memref<?x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]] : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { arith.addf } ins(%[[B]], %[[B]] : {{.*}}) outs(%[[OUT]] : memref<?x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[B]] : memref<?x3xf32>
func.func @slice_keeps_source_alive(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  %s = parallel.all_slice %a on @g ["data"] {dim = 0 : i64} : tensor<?x3xf32> -> tensor<?x3xf32>
  %m = tensor.dim %s, %c0 : tensor<?x3xf32>
  %e2 = tensor.empty(%m) : tensor<?x3xf32>
  %b = linalg.map { math.sqrt } ins(%s : tensor<?x3xf32>) outs(%e2 : tensor<?x3xf32>)
  %e3 = tensor.empty(%m) : tensor<?x3xf32>
  %r = linalg.map { arith.addf } ins(%b, %b : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e3 : tensor<?x3xf32>)
  return %r : tensor<?x3xf32>
}

// The rows are read after an op that could have overwritten the sliced buffer in place:
// that buffer is left alone, and the op writes into a buffer of its own (its output here).
// CHECK-LABEL: func.func @slice_outlives_update(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x3xf32>, %[[B:[^:]*]]: memref<4x3xf32> {graph.output = 0 : i64}, %[[R:[^:]*]]: memref<2x3xf32> {graph.output = 1 : i64})
// CHECK:         %[[A:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK:         %[[S:.*]] = memory.subview %[[A]][%{{.*}}, 0] [2, 3] [1, 1] : memref<4x3xf32> to memref<2x3xf32, strided<[3, 1], offset: ?>>
// CHECK-NEXT:    linalg.map { arith.addf } ins(%[[X]], %[[X]] : memref<4x3xf32>, memref<4x3xf32>) outs(%[[B]] : memref<4x3xf32>)
// CHECK-NEXT:    linalg.map { math.sqrt } ins(%[[S]] : {{.*}}) outs(%[[R]] : memref<2x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]]
func.func @slice_outlives_update(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  %s = parallel.all_slice %a on @g ["data"] {dim = 0 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
  %b = linalg.map { arith.addf } ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%a : tensor<4x3xf32>)
  %e2 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.map { math.sqrt } ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>)
  return %b, %r : tensor<4x3xf32>, tensor<2x3xf32>
}
