// RUN: irkit-opt %s -p parallel-simplify | FileCheck %s

// Chains of collectives on one group become fewer, cheaper ones.

parallel.grid @g(shape = [2], axes = ["data"])

// The sum, each rank keeping its block, is a reduce_scatter (half the bytes moved).
// CHECK-LABEL: func.func @reduce_then_slice(
// CHECK:         %[[R:.*]] = parallel.reduce_scatter %arg0 on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NOT:     parallel.all_reduce
// CHECK:         return %[[R]]
func.func @reduce_then_slice(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = parallel.all_reduce %x on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
  %1 = parallel.all_slice %0 on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// A reduce_scatter gathered back is one all_reduce.
// CHECK-LABEL: func.func @scatter_then_gather(
// CHECK:         %[[R:.*]] = parallel.all_reduce %arg0 on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @scatter_then_gather(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = parallel.reduce_scatter %x on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  %1 = parallel.all_gather %0 on @g ["data"] {dim = 0 : i64} : tensor<4x4xf32> -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// Inverse pairs cancel: slice then gather, gather then slice, all_to_all and back.
// CHECK-LABEL: func.func @inverses(
// CHECK-NOT:     parallel.
// CHECK:         return %arg0, %arg1, %arg0
func.func @inverses(%x: tensor<8x4xf32>, %y: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>) {
  %0 = parallel.all_slice %x on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  %1 = parallel.all_gather %0 on @g ["data"] {dim = 0 : i64} : tensor<4x4xf32> -> tensor<8x4xf32>
  %2 = parallel.all_gather %y on @g ["data"] {dim = 1 : i64} : tensor<4x4xf32> -> tensor<4x8xf32>
  %3 = parallel.all_slice %2 on @g ["data"] {dim = 1 : i64} : tensor<4x8xf32> -> tensor<4x4xf32>
  %4 = parallel.all_to_all %x on @g ["data"] {concat_dim = 0 : i64, split_dim = 1 : i64} : tensor<8x4xf32> -> tensor<16x2xf32>
  %5 = parallel.all_to_all %4 on @g ["data"] {concat_dim = 1 : i64, split_dim = 0 : i64} : tensor<16x2xf32> -> tensor<8x4xf32>
  return %1, %3, %5 : tensor<8x4xf32>, tensor<4x4xf32>, tensor<8x4xf32>
}

// Different dims, or a first collective used elsewhere, change nothing / keep it.
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[A:.*]] = parallel.all_slice %arg0 on @g ["data"] {dim = 0 : i64}
// CHECK:         parallel.all_gather %[[A]] on @g ["data"] {dim = 1 : i64}
// CHECK:         %[[S:.*]] = parallel.all_reduce %arg0
// CHECK:         parallel.reduce_scatter %arg0
// CHECK:         return {{.*}}, %[[S]]
func.func @kept(%x: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<8x4xf32>) {
  %0 = parallel.all_slice %x on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  %1 = parallel.all_gather %0 on @g ["data"] {dim = 1 : i64} : tensor<4x4xf32> -> tensor<4x8xf32>
  %2 = parallel.all_reduce %x on @g ["data"] : tensor<8x4xf32> -> tensor<8x4xf32>
  %3 = parallel.all_slice %2 on @g ["data"] {dim = 0 : i64} : tensor<8x4xf32> -> tensor<4x4xf32>
  return %1, %3, %2 : tensor<4x8xf32>, tensor<4x4xf32>, tensor<8x4xf32>
}
