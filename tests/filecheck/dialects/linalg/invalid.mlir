// RUN: irkit-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Every verifier rule of the linalg dialect, one chunk each. Messages are MLIR 22's where it
// has the rule (mlir-opt --verify-diagnostics accepts the chunks marked "MLIR's"); the rest
// are irkit's own (rules MLIR checks elsewhere, or not at all).

// ===== The structured-op rules (shared by every op)

// MLIR's.
func.func @map_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected the number of indexing_map (1) to be equal to the number of input/output operands (2)}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @mixed_semantics(%a: tensor<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'linalg.generic' op expected to have pure tensor or buffer semantics}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// MLIR's.
func.func @map_symbols(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op unexpected symbols in indexing_map #0}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0)[s0] -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @map_dims(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected indexing_map #0 to have 2 dim(s) to match the number of loops}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @operand_rank(%a: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected operand #0 rank (2) to match the result rank of indexing_map (1)}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's: loop d1 is indexed by no operand dimension alone, so its extent is unknown.
func.func @not_invertible(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op invalid indexing maps are non-invertible: ((d0, d1) -> (d0, d0))}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's: d0's extent comes from the input (5), the output has 4.
func.func @shape_mismatch(%a: tensor<5xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 5, but found 4}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<5xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's: index d0 + d1 reaches 5 (d0 < 4, d1 < 3): the dimension needs 6 elements.
func.func @window_too_small(%a: tensor<3x3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op inferred input/output operand #0 has shape's dimension #0 to be greater than or equal to 6, but found 3}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<3x3xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @arg_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected as many non-induction variable region arguments as the number of input/output operands}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @arg_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected type of bb argument #0 ('f64') to match element or self type of the corresponding operand ('f32')}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f64, %y: f32):
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @result_count(%a: tensor<4xf32>, %b: memref<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expected the number of tensor results (1) to be equal to the number of output tensors (0)}}
  %0 = "linalg.generic"(%b) <{indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%y: f32):
    "linalg.yield"(%y) : (f32) -> ()
  }) : (memref<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @result_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'linalg.generic' op expected type of operand #1 ('tensor<4xf32>') to match type of corresponding result ('tensor<5xf32>')}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// MLIR's.
func.func @no_body(%b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op expects to have 1 region with 1 block}}
  %0 = "linalg.generic"(%b) <{indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @bad_iterator(%b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op attribute 'iterator_types' failed to satisfy constraint: Iterator type should be an enum.}}
  %0 = "linalg.generic"(%b) <{indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%y: f32):
    "linalg.yield"(%y) : (f32) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @bad_maps(%b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.generic' op attribute 'indexing_maps' failed to satisfy constraint: AffineMap array attribute}}
  %0 = "linalg.generic"(%b) <{indexing_maps = [1], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%y: f32):
    "linalg.yield"(%y) : (f32) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// irkit's: an output is where results are written, a ranked tensor or a memref.
func.func @scalar_output(%a: f32) {
  // expected-error @+1 {{'linalg.generic' op operand #0 must be variadic of ranked tensor or memref, but got 'f32'}}
  "linalg.generic"(%a) <{indexing_maps = [affine_map<() -> ()>], iterator_types = [], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%y: f32):
    "linalg.yield"(%y) : (f32) -> ()
  }) : (f32) -> ()
  return
}

// -----

// MLIR's: the custom form spells iterator types as strings.
func.func @iterator_spelling(%b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["sequential"]}
      // expected-error @+1 {{unexpected iterator_type (sequential)}}
      outs(%b : tensor<4xf32>) {
  ^bb0(%y: f32):
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ===== linalg.yield and linalg.index

// MLIR's.
func.func @yield_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // expected-error @+1 {{'linalg.yield' op expected number of yield values (2) to match the number of inits / outs operands of the enclosing LinalgOp (1)}}
    linalg.yield %x, %y : f32, f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's (operands counted from 1).
func.func @yield_type(%a: tensor<4xf32>, %b: tensor<4xf32>, %z: f64) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // expected-error @+1 {{'linalg.yield' op type of yield operand 1 ('f64') doesn't match the element type of the enclosing linalg.generic op ('f32')}}
    linalg.yield %z : f64
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// irkit's wording (MLIR: a parent-op constraint).
func.func @yield_outside(%a: f32) {
  "test.region"() ({
    // expected-error @+1 {{'linalg.yield' op expected parent op with LinalgOp interface}}
    linalg.yield %a : f32
  }) : () -> ()
  return
}

// -----

// MLIR's.
func.func @index_outside() {
  // expected-error @+1 {{'linalg.index' op expected parent op with LinalgOp interface}}
  %i = linalg.index 0 : index
  return
}

// -----

// MLIR's.
func.func @index_dim(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // expected-error @+1 {{'linalg.index' op expected dim (1) to be lower than the number of loops (1) of the enclosing LinalgOp}}
    %i = linalg.index 1 : index
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @index_negative(%b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%b : tensor<4xf32>) {
  ^bb0(%y: f32):
    // expected-error @+1 {{'linalg.index' op attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0}}
    %i = "linalg.index"() <{dim = -1 : i64}> : () -> index
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ===== linalg.fill

// MLIR's.
func.func @fill_type(%v: f64, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.fill' op expected fill value type ('f64') to match output element type ('f32')}}
  %0 = linalg.fill ins(%v : f64) outs(%b : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// irkit's (MLIR reports the region it cannot build).
func.func @fill_count(%v: f32, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.fill' expects 1 input and 1 output, got 2 and 1}}
  %0 = linalg.fill ins(%v, %v : f32, f32) outs(%b : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// MLIR's: the same in generic form, where the body is given.
func.func @fill_count_generic(%v: f32, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected op with 1 input and 1 output}}
  %0 = "linalg.fill"(%v, %v, %b) <{operandSegmentSizes = array<i32: 2, 1>}> ({
  ^bb0(%x: f32, %y: f32, %z: f32):
    "linalg.yield"(%x) : (f32) -> ()
  }) : (f32, f32, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// ===== linalg.transpose

// MLIR's.
func.func @transpose_permutation(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'linalg.transpose' op permutation is not valid}}
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>) permutation = [0, 0]
  return %0 : tensor<8x4xf32>
}

// -----

// MLIR's.
func.func @transpose_size(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'linalg.transpose' op size of permutation 3 does not match the argument rank 2}}
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>) permutation = [1, 0, 2]
  return %0 : tensor<8x4xf32>
}

// -----

// MLIR's.
func.func @transpose_ranks(%a: tensor<4x8xf32>, %b: tensor<8x4x1xf32>) -> tensor<8x4x1xf32> {
  // expected-error @+1 {{'linalg.transpose' op input rank 2 does not match init rank 3}}
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4x1xf32>) permutation = [1, 0]
  return %0 : tensor<8x4x1xf32>
}

// -----

// MLIR's.
func.func @transpose_dims(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<8x5xf32> {
  // expected-error @+1 {{'linalg.transpose' op dim(result, 1) = 5 doesn't match dim(input, permutation[1]) = 4}}
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x5xf32>) permutation = [1, 0]
  return %0 : tensor<8x5xf32>
}

// -----

// ===== linalg.broadcast

// MLIR's.
func.func @broadcast_ranks(%a: tensor<4xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.broadcast' op input rank plus added dimensions does not match init rank. input rank: 1, dimensions size: 2, init rank: 2}}
  %0 = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [1, 0]
  return %0 : tensor<4x8xf32>
}

// -----

// MLIR's.
func.func @broadcast_range(%a: tensor<4xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.broadcast' op dimension 0 is out of range. expected range: [0, 1], got: 5}}
  %0 = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [5]
  return %0 : tensor<4x8xf32>
}

// -----

// irkit's: a dimension added twice.
func.func @broadcast_unique(%a: tensor<4xf32>, %b: tensor<4x8x2xf32>) -> tensor<4x8x2xf32> {
  // expected-error @+1 {{'linalg.broadcast' op dimensions must be unique}}
  %0 = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8x2xf32>) dimensions = [1, 1]
  return %0 : tensor<4x8x2xf32>
}

// -----

// MLIR's.
func.func @broadcast_dims(%a: tensor<4xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.broadcast' op input dim 0 should match init dim 1. input: 4, init: 8}}
  %0 = linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : tensor<4x8xf32>) dimensions = [0]
  return %0 : tensor<4x8xf32>
}

// -----

// ===== linalg.map

// MLIR's.
func.func @map_arity(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.map' op expects number of operands to match the arity of mapper, but got: 3 and 2}}
  %0 = linalg.map ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%b : tensor<4xf32>)
    (%x: f32, %y: f32) {
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @map_arg_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.map' op expected element type of input 'f32' to match bbArg type 'f64'}}
  %0 = linalg.map ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>)
    (%x: f64, %y: f32) {
      linalg.yield %y : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @map_shape(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'linalg.map' op expected shape of input (4, 8) to match shape of output (8, 4)}}
  %0 = linalg.map { math.exp } ins(%a : tensor<4x8xf32>) outs(%b : tensor<8x4xf32>)
  return %0 : tensor<8x4xf32>
}

// -----

// MLIR's: the init's argument is checked by the structured rules.
func.func @map_init_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.map' op expected type of bb argument #1 ('f64') to match element or self type of the corresponding operand ('f32')}}
  %0 = linalg.map ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>)
    (%x: f32, %y: f64) {
      linalg.yield %x : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// ===== linalg.reduce

// irkit's: inputs and inits come in pairs.
func.func @reduce_odd(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{'linalg.reduce' op expects as many inits as inputs (at least one), got 1 operands}}
  "linalg.reduce"(%a) <{dimensions = array<i64: 1>}> ({
  ^bb0(%x: f32):
    "linalg.yield"(%x) : (f32) -> ()
  }) : (tensor<4x8xf32>) -> ()
  return
}

// -----

// MLIR's.
func.func @reduce_order(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.reduce' op attribute 'dimensions' failed to satisfy constraint: i64 dense array attribute should be in increasing order}}
  %0 = linalg.reduce { arith.addf } ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [1, 1]
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @reduce_input_shapes(%a: tensor<4x8xf32>, %a2: tensor<4x9xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'linalg.reduce' op expects all inputs to have the same shapes. Shape at input-index 1 is not equal to the shape at input-index 0.}}
  %0:2 = linalg.reduce ins(%a, %a2 : tensor<4x8xf32>, tensor<4x9xf32>) outs(%b, %b : tensor<4xf32>, tensor<4xf32>) dimensions = [1]
    (%x: f32, %x2: f32, %y: f32, %y2: f32) {
      linalg.yield %y, %y2 : f32, f32
    }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// MLIR's.
func.func @reduce_init_shapes(%a: tensor<4x8xf32>, %b: tensor<4xf32>, %b2: tensor<5xf32>) -> (tensor<4xf32>, tensor<5xf32>) {
  // expected-error @+1 {{'linalg.reduce' op expects all outputs to have the same shapes. Shape at output-index 1 is not equal to the shape at output-index 0.}}
  %0:2 = linalg.reduce ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%b, %b2 : tensor<4xf32>, tensor<5xf32>) dimensions = [1]
    (%x: f32, %x2: f32, %y: f32, %y2: f32) {
      linalg.yield %y, %y2 : f32, f32
    }
  return %0#0, %0#1 : tensor<4xf32>, tensor<5xf32>
}

// -----

// MLIR's.
func.func @reduce_range(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.reduce' op dimensions for reduction should be in the range [0, 1].}}
  %0 = linalg.reduce { arith.addf } ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [2]
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @reduce_rank(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'linalg.reduce' op number of dimensions after reduction 1 doesn't match the init rank 2}}
  %0 = linalg.reduce { arith.addf } ins(%a : tensor<4x8xf32>) outs(%b : tensor<4x8xf32>) dimensions = [1]
  return %0 : tensor<4x8xf32>
}

// -----

// MLIR's.
func.func @reduce_dims(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'linalg.reduce' op init dimensions [8] doesn't match input dimensions after reduction [4]}}
  %0 = linalg.reduce { arith.addf } ins(%a : tensor<4x8xf32>) outs(%b : tensor<8xf32>) dimensions = [1]
  return %0 : tensor<8xf32>
}

// -----

// MLIR's.
func.func @reduce_args(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.reduce' op mismatching number of operands and block arguments}}
  %0 = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
    (%x: f32) {
      linalg.yield %x : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @reduce_input_type(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.reduce' op input element type 'f32' does not match corresponding block argument type 'f64'}}
  %0 = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
    (%x: f64, %y: f32) {
      linalg.yield %y : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// MLIR's.
func.func @reduce_init_type(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'linalg.reduce' op output element type 'f32' does not match corresponding block argument type 'f64'}}
  %0 = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
    (%x: f32, %y: f64) {
      linalg.yield %x : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// ===== linalg.matmul and linalg.batch_matmul

// MLIR's.
func.func @matmul_shapes(%a: tensor<4x8xf32>, %b: tensor<9x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op inferred input/output operand #1 has shape's dimension #0 to be 8, but found 9}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<9x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's.
func.func @matmul_rank(%a: tensor<4x8x1xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op expected operand #0 rank (3) to match the result rank of indexing_map (2)}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x8x1xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's.
func.func @matmul_map_expr(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op Unexpected dim expression in map result.}}
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's.
func.func @matmul_broadcast(%a: tensor<4xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op Invalid broadcast requested, should be (d2).}}
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<4xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's.
func.func @matmul_map_count(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op expected the number of indexing_map (2) to be equal to the number of input/output operands (3)}}
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>]
      ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's: the output keeps its three dims.
func.func @batch_matmul_out(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.batch_matmul' op expects 3 dims, but got (2).}}
  %0 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>]
      ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// MLIR's.
func.func @batch_matmul_dims(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>, %c: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'linalg.batch_matmul' op Unexpected result dim expression (outside the set of default result dims).}}
  %0 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%c : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// irkit's wording of MLIR's attribute constraint.
func.func @matmul_cast(%a: tensor<4x8xi8>, %b: tensor<8x4xi8>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{'linalg.matmul' op attribute 'cast' failed to satisfy constraint: #linalg.type_fn<cast_signed|cast_unsigned>}}
  %0 = linalg.matmul {cast = "signed"} ins(%a, %b : tensor<4x8xi8>, tensor<8x4xi8>) outs(%c : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// ===== sliding windows

// MLIR's (a parse error there).
func.func @conv_strides(%x: tensor<1x3x32x32xf32>, %k: tensor<8x3x3x3xf32>, %o: tensor<1x8x30x30xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'linalg.conv_2d_nchw_fchw' op attribute 'strides' failed to satisfy constraint: 64-bit signless int elements attribute of shape [2]}}
  %0 = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<3xi64>}
      ins(%x, %k : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) outs(%o : tensor<1x8x30x30xf32>) -> tensor<1x8x30x30xf32>
  return %0 : tensor<1x8x30x30xf32>
}

// -----

// MLIR's: output row 30 reads input row 30 + 2 (a 3x3 window): the input needs 33 rows.
func.func @conv_window(%x: tensor<1x3x32x32xf32>, %k: tensor<8x3x3x3xf32>, %o: tensor<1x8x31x30xf32>) -> tensor<1x8x31x30xf32> {
  // expected-error @+1 {{'linalg.conv_2d_nchw_fchw' op inferred input/output operand #0 has shape's dimension #2 to be greater than or equal to 33, but found 32}}
  %0 = linalg.conv_2d_nchw_fchw ins(%x, %k : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) outs(%o : tensor<1x8x31x30xf32>) -> tensor<1x8x31x30xf32>
  return %0 : tensor<1x8x31x30xf32>
}

// -----

// MLIR's.
func.func @conv_channels(%x: tensor<1x3x32x32xf32>, %k: tensor<8x4x3x3xf32>, %o: tensor<1x8x30x30xf32>) -> tensor<1x8x30x30xf32> {
  // expected-error @+1 {{'linalg.conv_2d_nchw_fchw' op inferred input/output operand #1 has shape's dimension #1 to be 3, but found 4}}
  %0 = linalg.conv_2d_nchw_fchw ins(%x, %k : tensor<1x3x32x32xf32>, tensor<8x4x3x3xf32>) outs(%o : tensor<1x8x30x30xf32>) -> tensor<1x8x30x30xf32>
  return %0 : tensor<1x8x30x30xf32>
}

// -----

// MLIR's: the pooled channels are the output's.
func.func @pool_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<2x2xf32>, %o: tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32> {
  // expected-error @+1 {{'linalg.pooling_nchw_max' op inferred input/output operand #2 has shape's dimension #1 to be 3, but found 4}}
  %0 = linalg.pooling_nchw_max ins(%x, %w : tensor<1x3x8x8xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  return %0 : tensor<1x4x7x7xf32>
}

// -----

// irkit's (MLIR reports the region it cannot build).
func.func @pool_count(%x: tensor<1x3x8x8xf32>, %o: tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32> {
  // expected-error @+1 {{'linalg.pooling_nchw_sum' expects 2 inputs and 1 output, got 1 and 1}}
  %0 = linalg.pooling_nchw_sum ins(%x : tensor<1x3x8x8xf32>) outs(%o : tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32>
  return %0 : tensor<1x3x7x7xf32>
}

// -----

// ===== elementwise

// MLIR's message (MLIR does not locate it): inputs are not cast; the body's yield sees it.
func.func @add_types(%a: tensor<8xf16>, %o: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'linalg.yield' op type of yield operand 1 ('f16') doesn't match the element type of the enclosing linalg.generic op ('f32')}}
  %0 = linalg.add ins(%a, %a : tensor<8xf16>, tensor<8xf16>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// MLIR's: a `?` size matches only `?` (cast the input to the init's sizes first).
func.func @broadcast_dynamic_into_static(%a: tensor<?xf32>, %b: tensor<1x1xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{'linalg.broadcast' op input dim 0 should match init dim 1. input: -9223372036854775808, init: 1}}
  %0 = linalg.broadcast ins(%a : tensor<?xf32>) outs(%b : tensor<1x1xf32>) dimensions = [0]
  return %0 : tensor<1x1xf32>
}

// -----

// MLIR's.
func.func @transpose_dynamic_against_static(%a: tensor<?x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'linalg.transpose' op dim(result, 1) = 3 doesn't match dim(input, permutation[1]) = -9223372036854775808}}
  %0 = linalg.transpose ins(%a : tensor<?x2xf32>) outs(%b : tensor<2x3xf32>) permutation = [1, 0]
  return %0 : tensor<2x3xf32>
}
