// RUN: irkit-opt %s -p 'parallel-data{ranks=4},parallel-propagate,parallel-partition,parallel-simplify' | FileCheck %s
// RUN: irkit-opt %s -p 'parallel-data{ranks=2},parallel-propagate,parallel-partition,parallel-simplify,lower-graph-to-linalg,bufferize' | FileCheck %s --check-prefix=BUF

// Data parallel without annotations: the batch of every input split over a `data` axis,
// the variable replicated; its gradient's partial sum gets one all_reduce, which bufferize
// turns into an in-place mpi.allreduce on the gradient's buffer; the per-row output
// (dynamic first size) stays split, so no all_gather.

module @m {
  graph.variable @w : tensor<8x4xf32> init zeros
  // CHECK: parallel.grid @data_parallel(shape = [4], axes = ["data"])
  // CHECK-LABEL: func.func @step
  // CHECK-SAME: parallel.sharding = #parallel.sharding<@data_parallel, [split(0)]>
  // CHECK-NOT: parallel.all_gather
  // CHECK: %[[G:.*]] = graph.matmul %{{.*}}, %arg1
  // CHECK-NEXT: %[[S:.*]] = parallel.all_reduce %[[G]] on @data_parallel ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
  // CHECK: graph.assign @w, %[[S]]
  // BUF-LABEL: func.func @step
  // BUF-NOT: memory.copy
  // BUF: mpi.allreduce %[[B:.*]], %[[B]] : memref<8x4xf32>, memref<8x4xf32>
  func.func @step(%x: tensor<?x8xf32>, %d: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %w = graph.read @w : tensor<8x4xf32>
    %y = graph.matmul %x, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
    %xt = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<?x8xf32>) -> tensor<8x?xf32>
    %g = graph.matmul %xt, %d : (tensor<8x?xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
    graph.assign @w, %g : tensor<8x4xf32>
    return %y : tensor<?x4xf32>
  }
}
