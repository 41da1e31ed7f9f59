// RUN: irkit-opt %s -p parallel-partition --split-input-file | FileCheck %s

// Partitioning into the SPMD program every rank runs: local types, and the collectives the
// conversion table asks for.

// Megatron-LM's MLP block: w1 split by columns, w2 by rows. The first matmul and the relu
// run on column blocks with no communication; the second multiplies blocks of K, which
// leaves partial sums: one all_reduce for the pair. The variables get their local types.
// CHECK-LABEL: module attributes {parallel.variables = {w1 = #parallel.sharding<@g, [split(1)]>, w2 = #parallel.sharding<@g, [split(0)]>}}
// CHECK:         graph.variable @w1 : tensor<8x8xf32>
// CHECK:         graph.variable @w2 : tensor<8x4xf32>
// CHECK-LABEL:   func.func @mlp_block(
// CHECK-SAME:      attributes {parallel.grid = @g}
// CHECK:           %[[H:.*]] = graph.matmul %arg0, %{{.*}} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK:           %[[R:.*]] = graph.relu %[[H]] : (tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK:           %[[Y:.*]] = graph.matmul %[[R]], %{{.*}} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
// CHECK:           %[[S:.*]] = parallel.all_reduce %[[Y]] on @g ["model"] : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK-NOT:       parallel.
// CHECK:           return %[[S]]
module {
  parallel.grid @g(shape = [2], axes = ["model"])
  graph.variable @w1 : tensor<8x16xf32> init normal {seed = 1 : i64}
  graph.variable @w2 : tensor<16x4xf32> init normal {seed = 2 : i64}
  func.func @mlp_block(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
    %0 = graph.read @w1 : tensor<8x16xf32>
    %w1 = parallel.shard %0 to #parallel.sharding<@g, [split(1)]> : tensor<8x16xf32>
    %1 = graph.read @w2 : tensor<16x4xf32>
    %w2 = parallel.shard %1 to #parallel.sharding<@g, [split(0)]> : tensor<16x4xf32>
    %h = graph.matmul %x, %w1 : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %r = graph.relu %h : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %y = graph.matmul %r, %w2 : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
    return %y : tensor<?x4xf32>
  }
}

// -----

// Data parallel, the gradient of a replicated weight: x^T dy contracts the split batch, so
// each rank has a partial sum, all_reduced before the update (which is replicated, as the
// variable is). The mean loss over a split batch: each rank's mean scaled by 1/2, summed.
// The global batch size `graph.dim` reads is the local one times 2.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %arg0: tensor<?x8xf32> {parallel.sharding = #parallel.sharding<@g, [split(0)]>}
// CHECK:         %[[L:.*]] = graph.cross_entropy
// CHECK:         %[[H:.*]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         %[[LS:.*]] = graph.mul %[[L]], %[[H]]
// CHECK:         %[[LR:.*]] = parallel.all_reduce %[[LS]] on @g ["data"] : tensor<f32> -> tensor<f32>
// CHECK:         %[[N:.*]] = graph.dim %arg0 {axis = 0 : i64}
// CHECK:         %[[TWO:.*]] = graph.constant dense<2> : tensor<i64>
// CHECK:         graph.mul %[[N]], %[[TWO]]
// CHECK:         %[[G:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<8x?xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
// CHECK:         %[[GR:.*]] = parallel.all_reduce %[[G]] on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK:         %[[U:.*]] = graph.sub %{{.*}}, %[[GR]]
// CHECK:         graph.assign @w, %[[U]] : tensor<8x4xf32>
// CHECK:         return %[[LR]]
module {
  parallel.grid @g(shape = [2], axes = ["data"])
  graph.variable @w : tensor<8x4xf32> init zeros
  func.func @step(%x: tensor<?x8xf32>, %dy: tensor<?x4xf32>, %labels: tensor<?xi32>) -> tensor<f32> {
    %xs = parallel.shard %x to #parallel.sharding<@g, [split(0)]> : tensor<?x8xf32>
    %w = graph.read @w : tensor<8x4xf32>
    %y = graph.matmul %xs, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
    %l = graph.cross_entropy %y, %labels : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
    %n = graph.dim %xs {axis = 0 : i64} : (tensor<?x8xf32>) -> tensor<i64>
    %xt = graph.transpose %xs {perm = array<i64: 1, 0>} : (tensor<?x8xf32>) -> tensor<8x?xf32>
    %g = graph.matmul %xt, %dy : (tensor<8x?xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
    %u = graph.sub %w, %g : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    graph.assign @w, %u : tensor<8x4xf32>
    return %l : tensor<f32>
  }
}

// -----

// The conversion table, one annotation each: split -> replicate is an all_gather, split(i)
// -> split(j) an all_to_all, replicate -> split a local all_slice; on a 2-D grid each axis
// converts in its own step.
// CHECK-LABEL: func.func @table(
// CHECK:         %[[A:.*]] = parallel.all_to_all %arg0 on @g ["a"] {concat_dim = 0 : i64, split_dim = 1 : i64} : tensor<2x8xf32> -> tensor<4x4xf32>
// CHECK:         %[[B:.*]] = parallel.all_gather %[[A]] on @g ["a"] {dim = 1 : i64} : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK:         %[[C:.*]] = parallel.all_slice %[[B]] on @g ["b"] {dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK:         return %[[C]]
module {
  parallel.grid @g(shape = [2, 2], axes = ["a", "b"])
  func.func @table(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = parallel.shard %x to #parallel.sharding<@g, [split(0), replicate]> : tensor<4x8xf32>
    %1 = parallel.shard %0 to #parallel.sharding<@g, [split(1), replicate]> : tensor<4x8xf32>
    %2 = parallel.shard %1 to #parallel.sharding<@g, [replicate, replicate]> : tensor<4x8xf32>
    %3 = parallel.shard %2 to #parallel.sharding<@g, [replicate, split(1)]> : tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
}
