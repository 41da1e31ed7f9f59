// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// One verifier rule of the elementwise graph ops per chunk. The shape functions raise the
// messages (the DSL frontend shows the same text at its source position); the verifier
// prefixes the op.

// Broadcasting aligns shapes at the right; 784 and 10 are neither equal nor 1.
func.func @broadcast_mismatch(%x: tensor<?x784xf32>, %y: tensor<10xf32>) {
  // expected-error @+1 {{'graph.add' op cannot broadcast f32[?, 784] with f32[10]}}
  %0 = graph.add %x, %y : (tensor<?x784xf32>, tensor<10xf32>) -> tensor<?x784xf32>
  return
}

// -----

func.func @where_broadcast_mismatch(%c: tensor<2xi1>, %x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.where' op cannot broadcast i1[2] with f32[3] with f32[3]}}
  %0 = graph.where %c, %x, %x : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// No implicit promotion: the program writes graph.cast.
func.func @dtype_mismatch(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'graph.mul' op element types differ: f32[4] and i32[4]}}
  %0 = graph.mul %x, %y : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_dtype_mismatch(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{'graph.where' op element types differ: f32[4] and f64[4]}}
  %0 = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @cmp_dtype_mismatch(%x: tensor<4xf32>, %y: tensor<f16>) {
  // expected-error @+1 {{'graph.cmp' op element types differ: f32[4] and f16}}
  %0 = graph.cmp %x, %y {predicate = "lt"} : (tensor<4xf32>, tensor<f16>) -> tensor<4xi1>
  return
}

// -----

func.func @float_only_unary(%x: tensor<4xi32>) {
  // expected-error @+1 {{'graph.exp' op operands need a floating-point element type, got i32[4]}}
  %0 = graph.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @float_only_binary(%x: tensor<i64>) {
  // expected-error @+1 {{'graph.div' op operands need a floating-point element type, got i64}}
  %0 = graph.div %x, %x : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return
}

// -----

// Arithmetic on i1 is the logic ops' job.
func.func @numeric_on_i1(%p: tensor<4xi1>) {
  // expected-error @+1 {{'graph.add' op operands need a numeric (non-i1) element type, got i1[4]}}
  %0 = graph.add %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @i1_only_unary(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.not' op operands need an i1 element type, got f32[4]}}
  %0 = graph.not %x : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @i1_only_binary(%x: tensor<4xi8>) {
  // expected-error @+1 {{'graph.or' op operands need an i1 element type, got i8[4]}}
  %0 = graph.or %x, %x : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return
}

// -----

func.func @where_condition_not_i1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.where' op operands need an i1 element type, got f32[4]}}
  %0 = graph.where %x, %x, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.add' op result #0 has type tensor<5xf32>, but the operands give tensor<4xf32>}}
  %0 = graph.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----

// A `?` operand unifies with the other side's 3; the result cannot claim 4.
func.func @wrong_result_dynamic(%x: tensor<?xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'graph.sub' op result #0 has type tensor<4xf32>, but the operands give tensor<3xf32>}}
  %0 = graph.sub %x, %y : (tensor<?xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @wrong_result_dtype(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.neg' op result #0 has type tensor<4xf64>, but the operands give tensor<4xf32>}}
  %0 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @cmp_result_not_i1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cmp' op result #0 has type tensor<4xf32>, but the operands give tensor<4xi1>}}
  %0 = graph.cmp %x, %x {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// A cast changes the element type only.
func.func @cast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cast' op result #0 has type tensor<3xi32>, but the operands give tensor<4xi32>}}
  %0 = graph.cast %x : (tensor<4xf32>) -> tensor<3xi32>
  return
}

// -----

func.func @wrong_result_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.neg' op requires one result}}
  %0:2 = "graph.neg"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @not_a_tensor(%x: f32) {
  // expected-error @+1 {{'graph.neg' op operand #0 must be tensor, but got 'f32'}}
  %0 = graph.neg %x : (f32) -> f32
  return
}

// -----

func.func @cmp_bad_predicate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cmp' op attribute 'predicate' failed to satisfy constraint: string attribute (one of "lt", "le", "gt", "ge", "eq", "ne")}}
  %0 = graph.cmp %x, %x {predicate = "lte"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @cmp_missing_predicate(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.cmp' op requires attribute 'predicate'}}
  %0 = graph.cmp %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @operand_type_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operand types, found 1}}
  %0 = graph.add %x, %x : (tensor<4xf32>) -> tensor<4xf32>
  return
}
