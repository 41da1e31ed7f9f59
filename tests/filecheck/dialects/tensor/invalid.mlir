// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// One verifier rule per chunk, located at the offending op. Every message here is also a
// substring of what MLIR 22 reports, so `mlir-opt --split-input-file --verify-diagnostics`
// accepts this file too (tests/unit/test_tensor_dialect.py runs it); rules irkit checks
// beyond MLIR, and its custom-syntax errors, are in invalid_irkit.mlir.

// --verify-diagnostics checks only the line of a diagnostic. This second run pins the column
// once: an op's error points at the op's name (after `%0 = `), as MLIR's does.
// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s
func.func @empty_sizes(%n: index) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'tensor.empty' op incorrect number of dynamic sizes
  // expected-error @+1 {{'tensor.empty' op incorrect number of dynamic sizes, has 1, expected 0}}
  %e = tensor.empty(%n) : tensor<4x4xf32>
  return
}

// -----

func.func @empty_unranked(%n: index) {
  // expected-error @+1 {{must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %e = "tensor.empty"(%n) : (index) -> tensor<*xf32>
  return
}

// -----

func.func @dim_of_scalar(%t: tensor<f32>, %i: index) {
  // expected-error @+1 {{must be non-0-ranked or unranked tensor, but got 'tensor<f32>'}}
  %d = tensor.dim %t, %i : tensor<f32>
  return
}

// -----

func.func @cast_element(%t: tensor<4xf32>) {
  // expected-error @+1 {{'tensor.cast' op operand type 'tensor<4xf32>' and result type 'tensor<4xi32>' are cast incompatible}}
  %c = tensor.cast %t : tensor<4xf32> to tensor<4xi32>
  return
}

// -----

func.func @cast_size(%t: tensor<1xf32>) {
  // expected-error @+1 {{operand type 'tensor<1xf32>' and result type 'tensor<2xf32>' are cast incompatible}}
  %c = tensor.cast %t : tensor<1xf32> to tensor<2xf32>
  return
}

// -----

func.func @cast_rank(%t: tensor<4xf32>) {
  // expected-error @+1 {{operand type 'tensor<4xf32>' and result type 'tensor<4x1xf32>' are cast incompatible}}
  %c = tensor.cast %t : tensor<4xf32> to tensor<4x1xf32>
  return
}

// -----

func.func @extract_type(%t: tensor<4xf32>, %i: index) {
  // expected-error @+1 {{'tensor.extract' op failed to verify that result type matches element type of tensor}}
  %x = "tensor.extract"(%t, %i) : (tensor<4xf32>, index) -> i32
  return
}

// -----

func.func @extract_indices(%t: tensor<?xf32>) {
  // expected-error @+1 {{incorrect number of indices for extract_element}}
  %x = tensor.extract %t[] : tensor<?xf32>
  return
}

// -----

func.func @extract_unranked(%t: tensor<*xf32>, %i: index) {
  // expected-error @+1 {{must be ranked tensor of any type values, but got 'tensor<*xf32>'}}
  %x = "tensor.extract"(%t, %i) : (tensor<*xf32>, index) -> f32
  return
}

// -----

func.func @insert_scalar_type(%t: tensor<4xf32>, %i: index, %x: i32) {
  // expected-error @+1 {{'tensor.insert' op failed to verify that scalar type matches element type of dest}}
  %r = "tensor.insert"(%x, %t, %i) : (i32, tensor<4xf32>, index) -> tensor<4xf32>
  return
}

// -----

func.func @insert_result_type(%t: tensor<4xf32>, %i: index, %x: f32) {
  // expected-error @+1 {{'tensor.insert' op failed to verify that result type matches type of dest}}
  %r = "tensor.insert"(%x, %t, %i) : (f32, tensor<4xf32>, index) -> tensor<?xf32>
  return
}

// -----

func.func @insert_indices(%t: tensor<?xf32>, %x: f32) {
  // expected-error @+1 {{incorrect number of indices}}
  %r = tensor.insert %x into %t[] : tensor<?xf32>
  return
}

// -----

func.func @from_elements_type(%x: f32) {
  // expected-error @+1 {{'tensor.from_elements' op failed to verify that operand types match result element type}}
  %t = "tensor.from_elements"(%x) : (f32) -> tensor<1xi32>
  return
}

// -----

func.func @from_elements_count(%x: f32) {
  // expected-error @+1 {{'tensor.from_elements' op failed to verify that operand types match result element type}}
  %t = "tensor.from_elements"(%x) : (f32) -> tensor<2xf32>
  return
}

// -----

func.func @from_elements_dynamic(%x: f32) {
  // expected-error @+1 {{must be statically shaped tensor of any type values, but got 'tensor<?xf32>'}}
  %t = "tensor.from_elements"(%x) : (f32) -> tensor<?xf32>
  return
}

// -----

func.func @splat_sizes(%v: f32, %m: index) {
  // expected-error @+1 {{incorrect number of dynamic sizes, has 1, expected 2}}
  %w = tensor.splat %v[%m] : tensor<?x8x?xf32>
  return
}

// -----

func.func @splat_type(%v: f32) {
  // expected-error @+1 {{failed to verify that operand type matches element type of result}}
  %w = "tensor.splat"(%v) : (f32) -> tensor<8xf64>
  return
}

// -----

func.func @generate_extents(%m: index) -> tensor<?x3x?xf32> {
  // expected-error @+1 {{'tensor.generate' op incorrect number of dynamic sizes, has 1, expected 2}}
  %t = tensor.generate %m {
  ^bb0(%i: index, %j: index, %k: index):
    %e = arith.constant 8.0 : f32
    tensor.yield %e : f32
  } : tensor<?x3x?xf32>
  return %t : tensor<?x3x?xf32>
}

// -----

func.func @generate_arguments(%m: index, %n: index) -> tensor<?x3x?xf32> {
  // expected-error @+1 {{must have one body argument per input dimension}}
  %t = tensor.generate %m, %n {
  ^bb0(%i: index, %j: index):
    %e = arith.constant 8.0 : f32
    tensor.yield %e : f32
  } : tensor<?x3x?xf32>
  return %t : tensor<?x3x?xf32>
}

// -----

func.func @generate_argument_type(%m: index, %n: index) -> tensor<?x3x?xf32> {
  // expected-error @+1 {{all body arguments must be index}}
  %t = tensor.generate %m, %n {
  ^bb0(%i: index, %j: index, %k: i64):
    %e = arith.constant 8.0 : f32
    tensor.yield %e : f32
  } : tensor<?x3x?xf32>
  return %t : tensor<?x3x?xf32>
}

// -----

func.func @generate_yield_type(%m: index, %n: index) -> tensor<?x3x?xf32> {
  // expected-error @+1 {{body must be terminated with a `yield` operation of the tensor element type}}
  %t = tensor.generate %m, %n {
  ^bb0(%i: index, %j: index, %k: index):
    %e = arith.constant 8 : i32
    tensor.yield %e : i32
  } : tensor<?x3x?xf32>
  return %t : tensor<?x3x?xf32>
}

// -----

func.func @yield_parent(%v: f32) {
  // expected-error @+1 {{'tensor.yield' op expects parent op to be one of 'tensor.generate}}
  tensor.yield %v : f32
}

// -----

func.func @slice_offsets_vs_sizes(%t: tensor<?x?x?xf32>, %a: index) {
  // expected-error @+1 {{expected mixed offsets rank to match mixed sizes rank (3 vs 2) so the rank of the result type is well-formed.}}
  %s = tensor.extract_slice %t[0, 0, 0] [%a, %a] [1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  return
}

// -----

func.func @slice_sizes_vs_strides(%t: tensor<8x8xf32>) {
  // expected-error @+1 {{expected mixed sizes rank to match mixed strides rank (2 vs 1) so the rank of the result type is well-formed.}}
  %s = tensor.extract_slice %t[0, 0] [4, 4] [1] : tensor<8x8xf32> to tensor<4x4xf32>
  return
}

// -----

func.func @slice_rank(%t: tensor<?x?x?xf32>, %a: index) {
  // expected-error @+1 {{expected 3 offset values, got 2}}
  %s = tensor.extract_slice %t[0, 0] [%a, %a] [1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  return
}

// -----

func.func @slice_dynamic_count(%t: tensor<8x8xf32>, %i: index) {
  // expected-error @+1 {{expected the number of 'offsets' to match the number of dynamic entries in 'static_offsets' (1 vs 0)}}
  %s = "tensor.extract_slice"(%t, %i) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 4>, static_strides = array<i64: 1, 1>}> : (tensor<8x8xf32>, index) -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_negative_offset(%t: tensor<8xf32>) {
  // expected-error @+1 {{expected offsets to be non-negative, but got -1}}
  %s = tensor.extract_slice %t[-1] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return
}

// -----

func.func @slice_negative_size(%t: tensor<8xf32>) {
  // expected-error @+1 {{expected sizes to be non-negative, but got -1}}
  %s = tensor.extract_slice %t[0] [-1] [1] : tensor<8xf32> to tensor<?xf32>
  return
}

// -----

func.func @slice_result_rank(%t: tensor<?xf32>) {
  // expected-error @+1 {{expected rank to be smaller or equal to the other rank.}}
  %s = tensor.extract_slice %t[0] [4] [1] : tensor<?xf32> to tensor<?x?xf32>
  return
}

// -----

func.func @slice_result_element(%t: tensor<?xf32>) {
  // expected-error @+1 {{expected element type to be 'f32'}}
  %s = tensor.extract_slice %t[0] [4] [1] : tensor<?xf32> to tensor<4xi8>
  return
}

// -----

func.func @slice_static_size(%t: tensor<16xf32>) {
  // expected-error @+1 {{expected type to be 'tensor<4xf32>' or a rank-reduced version. (size mismatch)}}
  %s = tensor.extract_slice %t[0] [4] [1] : tensor<16xf32> to tensor<6xf32>
  return
}

// -----

func.func @slice_dynamic_size(%t: tensor<8x16x4xf32>, %n: index) {
  // expected-error @+1 {{expected type to be 'tensor<?x4x4xf32>' or a rank-reduced version. (size mismatch)}}
  %s = tensor.extract_slice %t[0, 0, 0] [%n, 4, 4] [1, 1, 1] : tensor<8x16x4xf32> to tensor<4x4x4xf32>
  return
}

// -----

func.func @slice_drops_dynamic(%t: tensor<?x8xf32>, %n: index) {
  // A rank-reduced slice drops static unit sizes only.
  // expected-error @+1 {{expected type to be 'tensor<?x1xf32>' or a rank-reduced version. (size mismatch)}}
  %s = tensor.extract_slice %t[0, 0] [%n, 1] [1, 1] : tensor<?x8xf32> to tensor<1xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%t: tensor<8xf32>) {
  // expected-error @+1 {{slice along dimension 0 runs out-of-bounds: 9 >= 8}}
  %s = tensor.extract_slice %t[6] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return
}

// -----

func.func @slice_out_of_bounds_stride(%t: tensor<8xf32>) {
  // expected-error @+1 {{slice along dimension 0 runs out-of-bounds: 9 >= 8}}
  %s = tensor.extract_slice %t[0] [4] [3] : tensor<8xf32> to tensor<4xf32>
  return
}

// -----

func.func @slice_offset_out_of_bounds(%t: tensor<8xf32>) {
  // MLIR's rule: a static offset must be inside the dimension, even for an empty slice.
  // expected-error @+1 {{offset 0 is out-of-bounds: 8 >= 8}}
  %s = tensor.extract_slice %t[8] [0] [1] : tensor<8xf32> to tensor<0xf32>
  return
}

// -----

func.func @insert_slice_result(%t: tensor<8x8xf32>, %s: tensor<4x4xf32>) {
  // expected-error @+1 {{failed to verify that expected result type to match dest type}}
  %r = "tensor.insert_slice"(%s, %t) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 4>, static_strides = array<i64: 1, 1>}> : (tensor<4x4xf32>, tensor<8x8xf32>) -> tensor<8x?xf32>
  return
}

// -----

func.func @insert_slice_rank(%t: tensor<?x?x?xf32>, %s: tensor<?x?xf32>, %a: index) {
  // expected-error @+1 {{expected 3 offset values, got 2}}
  %r = tensor.insert_slice %s into %t[0, 0] [%a, %a] [1, 1] : tensor<?x?xf32> into tensor<?x?x?xf32>
  return
}

// -----

func.func @insert_slice_source_rank(%t: tensor<?xf32>, %s: tensor<?x?xf32>) {
  // expected-error @+1 {{expected rank to be smaller or equal to the other rank.}}
  %r = tensor.insert_slice %s into %t[0] [4] [1] : tensor<?x?xf32> into tensor<?xf32>
  return
}

// -----

func.func @insert_slice_source_element(%t: tensor<?xf32>, %s: tensor<4xi8>) {
  // expected-error @+1 {{expected element type to be 'f32'}}
  %r = tensor.insert_slice %s into %t[0] [4] [1] : tensor<4xi8> into tensor<?xf32>
  return
}

// -----

func.func @insert_slice_source_size(%t: tensor<8x8xf32>, %s: tensor<4x4xf32>) {
  // expected-error @+1 {{expected type to be 'tensor<4x1xf32>' or a rank-reduced version. (size mismatch)}}
  %r = tensor.insert_slice %s into %t[0, 0] [4, 1] [1, 1] : tensor<4x4xf32> into tensor<8x8xf32>
  return
}

// -----

func.func @insert_slice_out_of_bounds(%t: tensor<8x8xf32>, %s: tensor<4x4xf32>) {
  // expected-error @+1 {{slice along dimension 1 runs out-of-bounds: 9 >= 8}}
  %r = tensor.insert_slice %s into %t[0, 6] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x8xf32>
  return
}

// -----

func.func @collapse_static(%t: tensor<2x3x2x4x5xf32>) -> tensor<2x3x20xf32> {
  // expected-error @+1 {{expected dimension 2 of collapsed type to be static value of 40}}
  %c = tensor.collapse_shape %t [[0], [1], [2, 3, 4]] : tensor<2x3x2x4x5xf32> into tensor<2x3x20xf32>
  return %c : tensor<2x3x20xf32>
}

// -----

func.func @collapse_dynamic(%t: tensor<2x?xf32>) {
  // expected-error @+1 {{expected dimension 0 of collapsed type to be dynamic since one or more of the corresponding dimensions in the expanded type is dynamic}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<2x?xf32> into tensor<6xf32>
  return
}

// -----

func.func @collapse_rank(%t: tensor<2x3xf32>) {
  // expected-error @+1 {{'tensor.collapse_shape' op expected the expanded type, 'tensor<2x3xf32>' to have a higher (or same) rank than the collapsed type, 'tensor<2x3x1xf32>'.}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<2x3xf32> into tensor<2x3x1xf32>
  return
}

// -----

func.func @collapse_group_count(%t: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected collapsed rank (2) to equal the number of reassociation maps (1).}}
  %c = tensor.collapse_shape %t [[0, 1, 2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return
}

// -----

func.func @collapse_not_covering(%t: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected reassociation map #0 to have size equal to the expanded rank (3), but it is  2.}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<2x3x4xf32> into tensor<24xf32>
  return
}

// -----

func.func @collapse_not_contiguous(%t: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected reassociation map #0 to be valid and contiguous.}}
  %c = tensor.collapse_shape %t [[0, 2], [1]] : tensor<2x3x4xf32> into tensor<8x3xf32>
  return
}

// -----

func.func @collapse_empty_group(%t: tensor<2x3xf32>) {
  // expected-error @+1 {{reassociation indices must not be empty}}
  %c = tensor.collapse_shape %t [[0, 1], []] : tensor<2x3xf32> into tensor<6x1xf32>
  return
}

// -----

func.func @collapse_element(%t: tensor<2x3xf32>) {
  // expected-error @+1 {{expected collapsed type to be 'tensor<6xf32>', but got 'tensor<6xi32>'}}
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<2x3xf32> into tensor<6xi32>
  return
}

// -----

func.func @expand_static(%t: tensor<2x3x20xf32>) -> tensor<2x3x2x4x5xf32> {
  // expected-error @+1 {{expected dimension 2 of collapsed type to be static value of 40}}
  %e = tensor.expand_shape %t [[0], [1], [2, 3, 4]] output_shape [2, 3, 2, 4, 5] : tensor<2x3x20xf32> into tensor<2x3x2x4x5xf32>
  return %e : tensor<2x3x2x4x5xf32>
}

// -----

func.func @expand_mixed(%t: tensor<?x?xf32>, %n: index) -> tensor<?x4x5xf32> {
  // expected-error @+1 {{expected dimension 1 of collapsed type to be static value of 5}}
  %e = tensor.expand_shape %t [[0, 1], [2]] output_shape [%n, 4, 5] : tensor<?x?xf32> into tensor<?x4x5xf32>
  return %e : tensor<?x4x5xf32>
}

// -----

func.func @expand_output_rank(%t: tensor<2xf32>) {
  // expected-error @+1 {{expected number of static shape dims to be equal to the output rank (3) but found 2 inputs instead}}
  %e = tensor.expand_shape %t [[0, 1, 2]] output_shape [1, 2] : tensor<2xf32> into tensor<1x1x2xf32>
  return
}

// -----

func.func @expand_dynamic_count(%t: tensor<?xf32>, %n: index) {
  // expected-error @+1 {{mismatch in dynamic dims in output_shape and static_output_shape: static_output_shape has 2 dynamic dims while output_shape has 1 values}}
  %e = "tensor.expand_shape"(%t, %n) <{reassociation = [[0, 1]], static_output_shape = array<i64: -9223372036854775808, -9223372036854775808>}> : (tensor<?xf32>, index) -> tensor<?x?xf32>
  return
}

// -----

func.func @expand_element(%t: tensor<6xf32>) {
  // expected-error @+1 {{expected collapsed type to be 'tensor<6xi32>', but got 'tensor<6xf32>'}}
  %e = tensor.expand_shape %t [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xi32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{requires at least one input}}
  %c = tensor.concat dim(0) : () -> tensor<1x2x3xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<1xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{rank of concatenated inputs must match result rank}}
  %c = tensor.concat dim(0) %a, %b : (tensor<1xf32>, tensor<1xf32>) -> tensor<2x1xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<3xf32>) {
  // expected-error @+1 {{concatenation dim must be less than the tensor rank}}
  %c = tensor.concat dim(1) %a : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @concat_element(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // expected-error @+1 {{inputs and result element type must match}}
  %c = tensor.concat dim(0) %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return
}

// -----

func.func @concat_other_dim(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{static concatenation size mismatch along non-concatenated dimension 1}}
  %c = tensor.concat dim(0) %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<7x5xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<3xf32>) {
  // (MLIR's message lacks a space after the result type; irkit's has it.)
  // expected-error @+1 {{does not match inferred shape 'tensor<6xf32>' static sizes}}
  %c = tensor.concat dim(0) %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<7xf32>
  return
}

// -----

func.func @concat_dim_type(%a: tensor<3xf32>) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute}}
  %c = "tensor.concat"(%a) <{dim = 0 : i32}> : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @pad_result(%t: tensor<?x2x3x4xi32>, %n: index, %v: i32) -> tensor<?x?x?x8xf32> {
  // expected-error @+1 {{specified type 'tensor<?x?x?x8xf32>' does not match the inferred type 'tensor<?x?x?x9xi32>'}}
  %p = tensor.pad %t low[1, %n, 2, 2] high[1, 2, %n, 3] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %v : i32
  } : tensor<?x2x3x4xi32> to tensor<?x?x?x8xf32>
  return %p : tensor<?x?x?x8xf32>
}

// -----

func.func @pad_less_static(%t: tensor<4xf32>, %v: f32) {
  // expected-error @+1 {{specified type 'tensor<?xf32>' does not match the inferred type 'tensor<7xf32>'}}
  %p = tensor.pad %t low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<?xf32>
  return
}

// -----

func.func @pad_amounts(%t: tensor<4xf32>, %v: f32) {
  // expected-error @+1 {{failed to infer expectedType from sourceType 'tensor<4xf32>', specified resultType is 'tensor<7xf32>'}}
  %p = tensor.pad %t low[1, 2] high[2] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<7xf32>
  return
}

// -----

func.func @pad_block_arguments(%t: tensor<?x4xi32>, %v: i32) -> tensor<?x9xi32> {
  // expected-error @+1 {{expected the block to have 2 arguments}}
  %p = tensor.pad %t low[1, 2] high[2, 3] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %v : i32
  } : tensor<?x4xi32> to tensor<?x9xi32>
  return %p : tensor<?x9xi32>
}

// -----

func.func @pad_block_argument_type(%t: tensor<?x4xi32>, %v: i32) -> tensor<?x9xi32> {
  // expected-error @+1 {{op expected block argument 1 to be an index}}
  %p = tensor.pad %t low[1, 2] high[2, 3] {
  ^bb0(%i: i32, %j: i32):
    tensor.yield %v : i32
  } : tensor<?x4xi32> to tensor<?x9xi32>
  return %p : tensor<?x9xi32>
}

// -----

func.func @pad_yield_type(%t: tensor<?x4xi32>, %v: i8) -> tensor<?x9xi32> {
  // expected-error @+1 {{op expected yield type to match shape element type}}
  %p = tensor.pad %t low[1, 2] high[2, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : i8
  } : tensor<?x4xi32> to tensor<?x9xi32>
  return %p : tensor<?x9xi32>
}

// -----

func.func @pad_two_blocks(%t: tensor<4xf32>, %v: f32) {
  // expected-error @+1 {{'tensor.pad' op expects region}}
  %p = tensor.pad %t low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  ^bb1:
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<7xf32>
  return
}
