// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// What irkit reports in its own words: rules it checks beyond MLIR 22 (which accepts the
// first chunks, or crashes on them), operand constraints (irkit names the operand where MLIR
// numbers it), and errors of the custom syntax. invalid.mlir holds the rules both tools share.

func.func @expand_output_shape_disagrees(%t: tensor<6xf32>) {
  // MLIR 22 accepts an output_shape that contradicts the result type.
  // expected-error @+1 {{'tensor.expand_shape' op output_shape entry #0 is 3, but the result type 'tensor<2x3xf32>' has size 2 there}}
  %e = tensor.expand_shape %t [[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<2x3xf32>
  return
}

// -----

func.func @concat_negative_dim(%a: tensor<3xf32>) {
  // MLIR 22's verifier crashes on this one.
  // expected-error @+1 {{'tensor.concat' op concatenation dim must be non-negative}}
  %c = tensor.concat dim(-1) %a : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @pad_dynamic_count(%t: tensor<4xf32>, %v: f32, %n: index) {
  // expected-error @+1 {{'tensor.pad' op expected the number of 'low' values to match the number of dynamic entries in 'static_low' (1 vs 0)}}
  %p = "tensor.pad"(%t, %n) <{operandSegmentSizes = array<i32: 1, 1, 0>, static_high = array<i64: 2>, static_low = array<i64: 1>}> ({
  ^bb0(%i: index):
    "tensor.yield"(%v) : (f32) -> ()
  }) : (tensor<4xf32>, index) -> tensor<7xf32>
  return
}

// -----

func.func @yield_two_values(%t: tensor<4xf32>, %v: f32) {
  %p = tensor.pad %t low[1] high[2] {
  ^bb0(%i: index):
    // expected-error @+1 {{'tensor.yield' op requires a single operand}}
    "tensor.yield"(%v, %v) : (f32, f32) -> ()
  } : tensor<4xf32> to tensor<7xf32>
  return
}

// -----

func.func @extract_index_type(%t: tensor<4xf32>, %i: i32) {
  // expected-error @+1 {{'tensor.extract' op operand #1 must be variadic of index, but got 'i32'}}
  %x = "tensor.extract"(%t, %i) : (tensor<4xf32>, i32) -> f32
  return
}

// -----

func.func @slice_size_type(%t: tensor<8xf32>, %n: i64) {
  // expected-error @+1 {{'tensor.extract_slice' op operand #1 must be variadic of index, but got 'i64'}}
  %s = "tensor.extract_slice"(%t, %n) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: -9223372036854775808>, static_strides = array<i64: 1>}> : (tensor<8xf32>, i64) -> tensor<?xf32>
  return
}

// -----

func.func @reassociation_attribute(%t: tensor<2x3xf32>) {
  // expected-error @+1 {{'tensor.collapse_shape' op attribute 'reassociation' failed to satisfy constraint: Array of 64-bit integer array attributes}}
  %c = "tensor.collapse_shape"(%t) <{reassociation = [[0 : i32, 1 : i32]]}> : (tensor<2x3xf32>) -> tensor<6xf32>
  return
}

// -----

func.func @from_elements_count(%x: f32) {
  // expected-error @+1 {{1 operands present, but expected 2}}
  %t = tensor.from_elements %x : tensor<2xf32>
  return
}

// -----

func.func @from_elements_unranked(%x: i32) {
  // expected-error @+1 {{invalid kind of type specified: expected a ranked tensor type, got 'tensor<*xi32>'}}
  %t = tensor.from_elements %x : tensor<*xi32>
  return
}

// -----

func.func @slice_list_entry(%t: tensor<8xf32>) {
  // expected-error @+1 {{expected an integer or an SSA value}}
  %s = tensor.extract_slice %t[x] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return
}

// -----

func.func @insert_slice_into(%t: tensor<8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{expected 'into'}}
  %r = tensor.insert_slice %s into %t[0] [4] [1] : tensor<4xf32> to tensor<8xf32>
  return
}

// -----

func.func @expand_without_output_shape(%t: tensor<6xf32>) {
  // expected-error @+1 {{expected 'output_shape'}}
  %e = tensor.expand_shape %t [[0, 1]] : tensor<6xf32> into tensor<2x3xf32>
  return
}
