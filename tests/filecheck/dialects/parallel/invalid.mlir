// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// The parallel dialect's verifier, one rule a chunk: grids, shardings against their grid
// and the value's type, and the collectives' types against the group size.

// expected-error @+1 {{'parallel.grid' op has 2 sizes but 1 axis names}}
parallel.grid @g(shape = [2, 2], axes = ["data"])

// -----

// expected-error @+1 {{'parallel.grid' op axis names must be distinct, got ['a', 'a']}}
parallel.grid @g(shape = [2, 2], axes = ["a", "a"])

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @wrong_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{has 2 placements for a grid of rank 1}}
  %s = parallel.shard %x to #parallel.sharding<@g, [split(0), replicate]> : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @split_past_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{splits dimension 1 of tensor<8xf32>}}
  %s = parallel.shard %x to #parallel.sharding<@g, [split(1)]> : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [4], axes = ["data"])
func.func @indivisible(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{dimension 0 of tensor<6xf32> (size 6) is not divisible into 4 blocks}}
  %s = parallel.shard %x to #parallel.sharding<@g, [split(0)]> : tensor<6xf32>
  return %s : tensor<6xf32>
}

// -----

func.func @no_grid(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'@nowhere' does not name a parallel.grid}}
  %s = parallel.shard %x to #parallel.sharding<@nowhere, [replicate]> : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @bad_placement(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{unknown placement 'partial(max)': expected split(<dim>), replicate or partial(sum)}}
  %s = parallel.shard %x to #parallel.sharding<@g, [partial(max)]> : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @unknown_axis(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'parallel.all_reduce' op grid '@g' has no axis "model" (its axes: data)}}
  %r = parallel.all_reduce %x on @g ["model"] : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [2, 3], axes = ["data", "model"])
func.func @gather_multiplies(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'parallel.all_gather' op result type tensor<4x5xf32> does not match the expected tensor<4x15xf32>}}
  %r = parallel.all_gather %x on @g ["model"] {dim = 1 : i64} : tensor<4x5xf32> -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

parallel.grid @g(shape = [2, 3], axes = ["data", "model"])
func.func @scatter_divides(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'parallel.reduce_scatter' op operand size 4 of dimension 0 is not divisible by the group size 6}}
  %r = parallel.reduce_scatter %x on @g ["data", "model"] {dim = 0 : i64} : tensor<4x5xf32> -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @all_to_all_dims(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'parallel.all_to_all' op split_dim and concat_dim must differ}}
  %r = parallel.all_to_all %x on @g ["data"] {concat_dim = 1 : i64, split_dim = 1 : i64} : tensor<4x4xf32> -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @gather_dim(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'parallel.all_gather' op dim 1 is out of range for tensor<4xf32>}}
  %r = parallel.all_gather %x on @g ["data"] {dim = 1 : i64} : tensor<4xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

parallel.grid @g(shape = [2], axes = ["data"])
func.func @root(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'parallel.broadcast' op root 2 is not a member of a group of 2}}
  %r = parallel.broadcast %x on @g ["data"] {root = 2 : i64} : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

parallel.grid @g(shape = [2, 2], axes = ["stage", "data"])
func.func @one_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'parallel.send' op names exactly one grid axis}}
  parallel.send %x on @g ["stage", "data"] {offset = 1 : i64} : tensor<4xf32>
  return
}

// -----

parallel.grid @g(shape = [2], axes = ["stage"])
func.func @recv_ranked() -> tensor<*xf32> {
  // expected-error @+1 {{'parallel.recv' op receives a ranked tensor, got tensor<*xf32>}}
  %r = parallel.recv on @g ["stage"] {offset = -1 : i64} : tensor<*xf32>
  return %r : tensor<*xf32>
}
