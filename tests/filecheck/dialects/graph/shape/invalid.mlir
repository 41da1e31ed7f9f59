// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Shape-function errors of the shape ops, each reported at the op with a complete message.

func.func @transpose_not_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.transpose' op perm [0, 0] is not a permutation of the 2 axes of f32[2, 3]}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @transpose_short_perm(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'graph.transpose' op perm [1, 0] is not a permutation of the 3 axes of f32[2, 3, 4]}}
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.transpose' op result #0 has type tensor<2x3xf32>, but the operands give tensor<3x2xf32>}}
  %0 = graph.transpose %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape f32[3, 5] into [4, 4]: 15 elements, not 16}}
  %0 = graph.reshape %x {shape = array<i64: 4, 4>} : (tensor<3x5xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @reshape_two_holes(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'graph.reshape' op shape [-1, -1] has more than one -1}}
  %0 = graph.reshape %x {shape = array<i64: -1, -1>} : (tensor<3x4xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reshape_not_multiple(%x: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape f32[3, 5] into [-1, 4]: 15 elements are not a multiple of 4}}
  %0 = graph.reshape %x {shape = array<i64: -1, 4>} : (tensor<3x5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @reshape_negative(%x: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.reshape' op shape [-3, 5] has a negative size -3}}
  %0 = graph.reshape %x {shape = array<i64: -3, 5>} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @reshape_sizes_count(%x: tensor<3x4xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'graph.reshape' op shape [-1, -1] has 2 dynamic (-1) entries, but 1 size operands were given}}
  %0 = graph.reshape %x, %n {shape = array<i64: -1, -1>} : (tensor<3x4xf32>, tensor<i64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reshape_sizes_not_multiple(%x: tensor<3x5xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape f32[3, 5] into [-1, 4]: 15 elements are not a multiple of 4}}
  %0 = graph.reshape %x, %n {shape = array<i64: -1, 4>} : (tensor<3x5xf32>, tensor<i64>) -> tensor<?x4xf32>
  return
}

// -----

func.func @reshape_size_type(%x: tensor<4x6xf32>, %n: tensor<2xi64>) {
  // expected-error @+1 {{'graph.reshape' op size operands must be 0-d integer tensors, got i64[2]}}
  %0 = graph.reshape %x, %n {shape = array<i64: -1, 6>} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<?x6xf32>
  return
}

// -----

func.func @dim_axis(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'graph.dim' op axis 2 is out of range for rank 2}}
  %0 = graph.dim %x {axis = 2 : i64} : (tensor<?x3xf32>) -> tensor<i64>
  return
}

// -----

func.func @broadcast_to_incompatible(%x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast f32[3] to [2, 4]}}
  %0 = graph.broadcast_to %x {shape = array<i64: 2, 4>} : (tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_to_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.broadcast_to' op cannot broadcast f32[2, 3] to [3]: the target has fewer axes}}
  %0 = graph.broadcast_to %x {shape = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_to_sizes(%x: tensor<3xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'graph.broadcast_to' op shape [-1, -1, 3] has 2 dynamic (-1) entries, but 1 size operands were given}}
  %0 = graph.broadcast_to %x, %n {shape = array<i64: -1, -1, 3>} : (tensor<3xf32>, tensor<i64>) -> tensor<?x?x3xf32>
  return
}

// -----

func.func @broadcast_to_size_type(%x: tensor<3xf32>, %n: tensor<2xi64>) {
  // expected-error @+1 {{'graph.broadcast_to' op size operands must be 0-d integer tensors, got i64[2]}}
  %0 = graph.broadcast_to %x, %n {shape = array<i64: -1, 3>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.concat' op cannot concatenate f32[2, 3] and f32[3]: ranks differ}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.concat' op cannot concatenate f32[2, 3] and f32[2, 4] along axis 0: dimension 1 differs}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_types(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'graph.concat' op element types differ: f32[2] and i32[2]}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @split_divisible(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.split' op cannot split f32[4, 6] into 4 equal sections along axis 1: 6 is not divisible by 4}}
  %0:4 = graph.split %x {axis = 1 : i64, sections = 4 : i64} : (tensor<4x6xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

func.func @split_results(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.split' op expected 2 results, got 3}}
  %0:3 = graph.split %x {sections = 2 : i64} : (tensor<4x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @split_sizes_count(%x: tensor<4x6xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'graph.split' op a split into 2 sections takes 2 size operands (or none), got 1}}
  %0:2 = graph.split %x, %n {axis = 0 : i64, sections = 2 : i64} : (tensor<4x6xf32>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  return
}

// -----

func.func @slice_step_zero(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.slice' op slice step of axis 1 is 0}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, stops = array<i64: 4, 6>, steps = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @slice_entries(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.slice' op stops has 1 entries, but f32[4, 6] has rank 2}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, stops = array<i64: 4>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @one_hot_depth_without_size(%x: tensor<4xi64>) {
  // expected-error @+1 {{'graph.one_hot' op depth -1 needs one size operand, got 0}}
  %0 = graph.one_hot %x {depth = -1 : i64} : (tensor<4xi64>) -> tensor<4x?xf32>
  return
}

// -----

func.func @one_hot_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.one_hot' op one_hot indices must have an integer element type, got f32[4]}}
  %0 = graph.one_hot %x {depth = 3 : i64} : (tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gather_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gather' op gather indices must have an integer element type, got f32[3]}}
  %0 = graph.gather %t, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_scalar_table(%t: tensor<f32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'graph.gather' op needs a table of rank at least 1, got f32}}
  %0 = graph.gather %t, %i : (tensor<f32>, tensor<3xi32>) -> tensor<3xf32>
  return
}

// -----

func.func @insert_slice_shape(%s: tensor<2x3xf32>, %d: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.insert_slice' op cannot insert f32[2, 3] into the slice [2, 2] of f32[4, 6]: dimension 1 differs}}
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 4, 5>, steps = array<i64: 2, 2>} : (tensor<2x3xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @insert_slice_rank(%s: tensor<2xf32>, %d: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.insert_slice' op cannot insert f32[2] into the rank-2 slice [2, 2] of f32[4, 6]}}
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 4, 5>, steps = array<i64: 2, 2>} : (tensor<2xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @insert_slice_types(%s: tensor<2x2xf64>, %d: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.insert_slice' op element types differ: f64[2, 2] and f32[4, 6]}}
  %0 = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 4, 5>, steps = array<i64: 2, 2>} : (tensor<2x2xf64>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @scatter_add_updates(%d: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.scatter_add' op updates f32[3, 5] do not have the shape [3, 4] of the indices i32[3] and rows of f32[10, 4]: dimension 1 differs}}
  %0 = graph.scatter_add %d, %i, %u : (tensor<10x4xf32>, tensor<3xi32>, tensor<3x5xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @scatter_add_updates_rank(%d: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{'graph.scatter_add' op updates f32[3] do not have the shape [3, 4] of the indices i32[3] and rows of f32[10, 4]}}
  %0 = graph.scatter_add %d, %i, %u : (tensor<10x4xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @scatter_add_float_indices(%d: tensor<10x4xf32>, %i: tensor<3xf32>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'graph.scatter_add' op scatter_add indices must have an integer element type, got f32[3]}}
  %0 = graph.scatter_add %d, %i, %u : (tensor<10x4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @scatter_add_scalar_dest(%d: tensor<f32>, %i: tensor<3xi32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{'graph.scatter_add' op needs a dest of rank at least 1, got f32}}
  %0 = graph.scatter_add %d, %i, %u : (tensor<f32>, tensor<3xi32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----

func.func @scatter_add_types(%d: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf16>) {
  // expected-error @+1 {{'graph.scatter_add' op element types differ: f32[10, 4] and f16[3, 4]}}
  %0 = graph.scatter_add %d, %i, %u : (tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf16>) -> tensor<10x4xf32>
  return
}
