// RUN: irkit-opt %s -p parallel-propagate --split-input-file | FileCheck %s
// RUN: irkit-opt %s -p parallel-propagate --split-input-file 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=REMARK

// Propagation from annotations through the ops' sharding rules, forward and backward.

// Data parallel: x split along the batch; the parameter (a variable not annotated) stays
// replicated, so the first matmul is split along M, the bias add along the batch, and the
// mean of the loss over a split batch is a partial sum. The returned loss is replicated.
// CHECK-LABEL: func.func @data_parallel(
// CHECK-SAME:    parallel.sharding = #parallel.sharding<@g, [split(0)]>
// CHECK-SAME:    parallel.sharding = #parallel.sharding<@g, [split(0)]>
// CHECK-SAME:    -> (tensor<f32> {parallel.sharding = #parallel.sharding<@g, [replicate]>})
// CHECK:         graph.read @w
// CHECK:         graph.matmul {{.*}}parallel.shardings = [#parallel.sharding<@g, [split(0)]>]
// CHECK:         graph.cross_entropy {{.*}}parallel.shardings = [#parallel.sharding<@g, [partial(sum)]>]
// CHECK:         graph.neg {{.*}}parallel.shardings = [#parallel.sharding<@g, [replicate]>]
module {
  parallel.grid @g(shape = [2], axes = ["data"])
  graph.variable @w : tensor<8x4xf32> init zeros
  func.func @data_parallel(%x: tensor<?x8xf32>, %labels: tensor<?xi32>) -> tensor<f32> {
    %xs = parallel.shard %x to #parallel.sharding<@g, [split(0)]> : tensor<?x8xf32>
    %w = graph.read @w : tensor<8x4xf32>
    %y = graph.matmul %xs, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
    %l = graph.cross_entropy %y, %labels : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
    %n = graph.neg %l : (tensor<f32>) -> tensor<f32>
    return %n : tensor<f32>
  }
}

// -----

// Backward: only the result is annotated (split by columns); the propagation runs back
// through the elementwise op to the matmul, which splits its N factor: the weight (an
// argument here) is split by columns, x stays replicated.
// CHECK-LABEL: func.func @backward(
// CHECK-SAME:    %arg0: tensor<4x8xf32> {parallel.sharding = #parallel.sharding<@g, [replicate]>}
// CHECK-SAME:    %arg1: tensor<8x6xf32> {parallel.sharding = #parallel.sharding<@g, [split(1)]>}
// CHECK:         graph.matmul {{.*}}parallel.shardings = [#parallel.sharding<@g, [split(1)]>]
// CHECK:         graph.tanh {{.*}}parallel.shardings = [#parallel.sharding<@g, [split(1)]>]
module {
  parallel.grid @g(shape = [2], axes = ["model"])
  func.func @backward(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
    %y = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    %t = graph.tanh %y : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %s = parallel.shard %t to #parallel.sharding<@g, [split(1)]> : tensor<4x6xf32>
    return %s : tensor<4x6xf32>
  }
}

// -----

// A softmax needs its axis whole: a split along it does not pass through; the cheaper way
// to run the op on pieces is to re-split the rows (an all_to_all moves a quarter of what a
// gather would). A returned annotated value keeps its annotation.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    -> (tensor<4x8xf32> {parallel.sharding = #parallel.sharding<@g, [split(1)]>})
// CHECK:         graph.softmax {{.*}}parallel.shardings = [#parallel.sharding<@g, [split(0)]>]
module {
  parallel.grid @g(shape = [2], axes = ["a"])
  func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %xs = parallel.shard %x to #parallel.sharding<@g, [split(1)]> : tensor<4x8xf32>
    %y = graph.softmax %xs {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = graph.tanh %y : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = parallel.shard %t to #parallel.sharding<@g, [split(1)]> : tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

// An op without a sharding rule runs replicated, and says so.
module {
  parallel.grid @g(shape = [2], axes = ["data"])
  func.func @no_rule(%x: tensor<4x8xf32>, %i: tensor<2xi64>) -> tensor<2x8xf32> {
    %xs = parallel.shard %x to #parallel.sharding<@g, [split(0)]> : tensor<4x8xf32>
    // REMARK: remark: 'graph.gather' has no sharding rule: it runs on replicated operands
    %g = graph.gather %xs, %i : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
    return %g : tensor<2x8xf32>
  }
}
