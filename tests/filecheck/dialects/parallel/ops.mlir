// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s

// The parallel dialect's ops parse and print back in custom form, directly and through the
// generic form: the grid, the sharding annotation (its attribute kept as written), the
// rank's index and every collective with the types its verifier accepts.

// CHECK: parallel.grid @g(shape = [2, 2], axes = ["data", "model"])
parallel.grid @g(shape = [2, 2], axes = ["data", "model"])
// CHECK: parallel.grid @pipe(shape = [4], axes = ["stage"])
parallel.grid @pipe(shape = [4], axes = ["stage"])

// CHECK-LABEL: func.func @annotate(
// CHECK:         %[[S:.*]] = parallel.shard %arg0 to #parallel.sharding<@g, [split(0), replicate]> : tensor<8x4xf32>
// CHECK:         %[[P:.*]] = parallel.shard %[[S]] to #parallel.sharding<@g, [partial(sum), split(1)]> : tensor<8x4xf32>
// CHECK:         return %[[P]]
func.func @annotate(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = parallel.shard %x to #parallel.sharding<@g, [split(0), replicate]> : tensor<8x4xf32>
  %p = parallel.shard %s to #parallel.sharding<@g, [partial(sum), split(1)]> : tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @collectives(
// CHECK:         parallel.axis_index on @g ["data", "model"] : tensor<i64>
// CHECK:         parallel.all_reduce %arg0 on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK:         parallel.all_gather %arg0 on @g ["model"] {dim = 1 : i64} : tensor<8x4xf32> -> tensor<8x8xf32>
// CHECK:         parallel.reduce_scatter %arg0 on @g ["data", "model"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK:         parallel.all_to_all %arg0 on @g ["model"] {concat_dim = 0 : i64, split_dim = 1 : i64} : tensor<8x4xf32> -> tensor<16x2xf32>
// CHECK:         parallel.all_slice %arg0 on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK:         parallel.broadcast %arg0 on @g ["model"] {root = 1 : i64} : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK:         parallel.all_gather %arg1 on @g ["data"] {dim = 0 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
func.func @collectives(%x: tensor<8x4xf32>, %d: tensor<?x4xf32>) {
  %i = parallel.axis_index on @g ["data", "model"] : tensor<i64>
  %0 = parallel.all_reduce %x on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
  %1 = parallel.all_gather %x on @g ["model"] {dim = 1 : i64} : tensor<8x4xf32> -> tensor<8x8xf32>
  %2 = parallel.reduce_scatter %x on @g ["data", "model"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<2x4xf32>
  %3 = parallel.all_to_all %x on @g ["model"] {concat_dim = 0 : i64, split_dim = 1 : i64} : tensor<8x4xf32> -> tensor<16x2xf32>
  %4 = parallel.all_slice %x on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  %5 = parallel.broadcast %x on @g ["model"] {root = 1 : i64} : tensor<8x4xf32> -> tensor<8x4xf32>
  %6 = parallel.all_gather %d on @g ["data"] {dim = 0 : i64} : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// CHECK-LABEL: func.func @stages(
// CHECK:         parallel.send %arg0 on @pipe ["stage"] {offset = 1 : i64} : tensor<4xf32>
// CHECK:         %[[R:.*]] = parallel.recv on @pipe ["stage"] {offset = -1 : i64} : tensor<4xf32>
// CHECK:         return %[[R]]
func.func @stages(%x: tensor<4xf32>) -> tensor<4xf32> {
  parallel.send %x on @pipe ["stage"] {offset = 1 : i64} : tensor<4xf32>
  %r = parallel.recv on @pipe ["stage"] {offset = -1 : i64} : tensor<4xf32>
  return %r : tensor<4xf32>
}
