// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Messages follow MLIR's vector dialect (where MLIR has one, the same words).

func.func @broadcast_not_vector(%t: tensor<4xf32>) {
  // expected-error @+1 {{'vector.broadcast' op source type is not a vector}}
  %r = vector.broadcast %t : tensor<4xf32> to vector<4xf32>
  return
}

// -----

func.func @broadcast_element_type(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.broadcast' op failed to verify that source operand and result have same element type}}
  %r = vector.broadcast %v : vector<4xf32> to vector<4xf64>
  return
}

// -----

func.func @broadcast_scalar_element_type(%x: i32) {
  // expected-error @+1 {{'vector.broadcast' op failed to verify that source operand and result have same element type}}
  %r = vector.broadcast %x : i32 to vector<4xi64>
  return
}

// -----

func.func @broadcast_rank(%v: vector<2x4xf32>) {
  // expected-error @+1 {{'vector.broadcast' op source rank higher than destination rank}}
  %r = vector.broadcast %v : vector<2x4xf32> to vector<4xf32>
  return
}

// -----

func.func @broadcast_dims(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.broadcast' op dimension mismatch (4 vs. 8)}}
  %r = vector.broadcast %v : vector<4xf32> to vector<2x8xf32>
  return
}

// -----

func.func @broadcast_to_scalar(%x: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected a vector type, but found 'f32'}}
  %r = vector.broadcast %x : f32 to f32
  return
}

// -----

func.func @broadcast_result_generic(%x: f32) {
  // expected-error @+1 {{'vector.broadcast' op result #0 must be vector, but got 'tensor<4xf32>'}}
  %r = "vector.broadcast"(%x) : (f32) -> tensor<4xf32>
  return
}

// -----

func.func @reduction_rank(%v: vector<2x4xf32>) {
  // expected-error @+1 {{'vector.reduction' op unsupported reduction rank: 2}}
  %r = vector.reduction <add>, %v : vector<2x4xf32> into f32
  return
}

// -----

func.func @reduction_result_type(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.reduction' op failed to verify that source operand and result have same element type}}
  %r = "vector.reduction"(%v) <{kind = #vector.kind<add>}> : (vector<4xf32>) -> f64
  return
}

// -----

func.func @reduction_acc_type(%v: vector<4xf32>, %a: f64) {
  // expected-error @+1 {{'vector.reduction' op failed to verify that dest and acc have the same type}}
  %r = "vector.reduction"(%v, %a) <{kind = #vector.kind<add>}> : (vector<4xf32>, f64) -> f32
  return
}

// -----

func.func @reduction_float_kind_on_ints(%v: vector<4xi32>) {
  // expected-error @+1 {{'vector.reduction' op unsupported reduction type 'i32' for kind 'maximumf'}}
  %r = vector.reduction <maximumf>, %v : vector<4xi32> into i32
  return
}

// -----

func.func @reduction_int_kind_on_floats(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.reduction' op unsupported reduction type 'f32' for kind 'xor'}}
  %r = vector.reduction <xor>, %v : vector<4xf32> into f32
  return
}

// -----

func.func @reduction_unknown_kind(%v: vector<4xf32>) {
  // expected-error @+1 {{expected vector combining kind to be one of: add, mul, minui, minsi, minnumf, maxui, maxsi, maxnumf, and, or, xor, maximumf, minimumf}}
  %r = vector.reduction <sum>, %v : vector<4xf32> into f32
  return
}

// -----

func.func @reduction_bad_kind_attr(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.reduction' op attribute 'kind' failed to satisfy constraint: vector combining kind attribute}}
  %r = "vector.reduction"(%v) <{kind = #vector.kind<sum>}> : (vector<4xf32>) -> f32
  return
}

// -----

func.func @reduction_not_vector(%t: tensor<4xf32>) {
  // expected-error @+1 {{expected a vector type, found 'tensor<4xf32>'}}
  %r = vector.reduction <add>, %t : tensor<4xf32> into f32
  return
}

// -----

func.func @reduction_bad_fastmath(%v: vector<4xf32>) {
  // expected-error @+1 {{expected fastmath flags to be one of: none, reassoc, nnan, ninf, nsz, arcp, contract, afn, fast}}
  %r = vector.reduction <add>, %v fastmath<quick> : vector<4xf32> into f32
  return
}

// -----

func.func @shuffle_mask_range(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.shuffle' op mask index #2 out of range}}
  %r = vector.shuffle %v, %v [0, 8] : vector<4xf32>, vector<4xf32>
  return
}

// -----

func.func @shuffle_negative_mask(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.shuffle' op mask index #1 out of range}}
  %r = vector.shuffle %v, %v [-1, 2] : vector<4xf32>, vector<4xf32>
  return
}

// -----

func.func @shuffle_empty_mask(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.shuffle' op invalid mask length}}
  %r = vector.shuffle %v, %v [] : vector<4xf32>, vector<4xf32>
  return
}

// -----

func.func @shuffle_element_type(%v: vector<4xf32>, %w: vector<4xi32>) {
  // expected-error @+1 {{'vector.shuffle' op failed to verify that second operand v2 and result have same element type}}
  %r = vector.shuffle %v, %w [0, 5] : vector<4xf32>, vector<4xi32>
  return
}

// -----

func.func @shuffle_rank(%v: vector<2x4xf32>) {
  // expected-error @+1 {{'vector.shuffle' op operands must be fixed-length 1-D vectors}}
  %r = vector.shuffle %v, %v [0, 1] : vector<2x4xf32>, vector<2x4xf32>
  return
}

// -----

func.func @extract_position_range(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.extract' op expected position attribute #1 to be a non-negative integer smaller than the corresponding vector dimension}}
  %r = vector.extract %v[4] : f32 from vector<4xf32>
  return
}

// -----

func.func @extract_poison_position(%v: vector<2x4xf32>) {
  // expected-error @+1 {{'vector.extract' op expected position attribute #2 to be a non-negative integer smaller than the corresponding vector dimension}}
  %r = vector.extract %v[1, -1] : f32 from vector<2x4xf32>
  return
}

// -----

func.func @extract_position_rank(%v: vector<4xf32>) {
  // expected-error @+1 {{'vector.extract' op expected position attribute of rank no greater than vector rank 1, got 2}}
  %r = vector.extract %v[1, 1] : f32 from vector<4xf32>
  return
}

// -----

func.func @extract_result_type(%v: vector<2x4xf32>) {
  // expected-error @+1 {{'vector.extract' op result type f32 is not vector<4xf32>}}
  %r = vector.extract %v[1] : f32 from vector<2x4xf32>
  return
}

// -----

func.func @extract_dynamic_position(%v: vector<4xf32>, %i: index) {
  // expected-error @+1 {{expected a static position (irkit's vector.extract takes no dynamic ones)}}
  %r = vector.extract %v[%i] : f32 from vector<4xf32>
  return
}

// -----

func.func @extract_dynamic_position_generic(%v: vector<4xf32>, %i: index) {
  // expected-error @+1 {{'vector.extract' op dynamic positions are not supported: irkit's vector.extract takes a static position}}
  %r = "vector.extract"(%v, %i) <{static_position = array<i64: -9223372036854775808>}> : (vector<4xf32>, index) -> f32
  return
}
