// RUN: irkit-opt %s --split-input-file --verify-diagnostics

// Each chunk holds one error, located at the offending op. Messages follow MLIR's memref
// dialect where it has one.

// --verify-diagnostics checks only the line of a diagnostic. This second run pins the column
// once: an op's error points at the op's name (after `%a = `), as MLIR's does.
// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s
func.func @alloc_sizes(%n: index) {
  // CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'memory.alloc' op dimension operand count
  // expected-error @+1 {{'memory.alloc' op dimension operand count does not equal memref dynamic dimension count}}
  %a = memory.alloc(%n) : memref<4x4xf32>
  return
}

// -----

func.func @alloc_layout() {
  // expected-error @+1 {{'memory.alloc' op requires the identity layout (a contiguous buffer), got strided<[8, 1]>}}
  %a = memory.alloc() : memref<4x8xf32, strided<[8, 1]>>
  return
}

// -----

func.func @alloca_dynamic() {
  // expected-error @+1 {{'memory.alloca' op requires a static shape (a stack slot of a fixed size), got memref<?xf32>}}
  %a = "memory.alloca"() : () -> memref<?xf32>
  return
}

// -----

func.func @alloca_layout() {
  // expected-error @+1 {{'memory.alloca' op requires the identity layout (a contiguous buffer), got strided<[8, 1]>}}
  %a = memory.alloca() : memref<4x8xf32, strided<[8, 1]>>
  return
}

// -----

func.func @alloc_size_type(%n: i64) {
  // expected-error @+1 {{'memory.alloc' op operand #0 must be variadic of index, but got 'i64'}}
  %a = "memory.alloc"(%n) : (i64) -> memref<?xf32>
  return
}

// -----

func.func @alloc_vector_elements() {
  // expected-error @+1 {{'memory.alloc' op result #0 must be ranked memref of integer, index, float or complex elements, but got 'memref<4xvector<4xf32>>'}}
  %a = memory.alloc() : memref<4xvector<4xf32>>
  return
}

// -----

func.func @arena_not_bytes() {
  // expected-error @+1 {{'memory.arena' op result #0 must be 1-D memref of i8 with the identity layout, but got 'memref<64xf32>'}}
  %a = memory.arena() : memref<64xf32>
  return
}

// -----

func.func @arena_missing_size() {
  // expected-error @+1 {{'memory.arena' op requires a size operand exactly when the arena size is dynamic}}
  %a = memory.arena() : memref<?xi8>
  return
}

// -----

func.func @load_rank(%m: memref<?x4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'memory.load' op incorrect number of indices for load, expected 2 but got 1}}
  %x = memory.load %m[%i] : memref<?x4xf32>
  return %x : f32
}

// -----

func.func @load_index_type(%m: memref<?xf32>, %i: i32) -> f32 {
  // expected-error @+1 {{'memory.load' op operand #1 must be variadic of index, but got 'i32'}}
  %x = "memory.load"(%m, %i) : (memref<?xf32>, i32) -> f32
  return %x : f32
}

// -----

func.func @load_result_type(%m: memref<?xf32>, %i: index) -> f64 {
  // expected-error @+1 {{'memory.load' op result type f64 does not match the memref element type f32}}
  %x = "memory.load"(%m, %i) : (memref<?xf32>, index) -> f64
  return %x : f64
}

// -----

func.func @store_rank(%m: memref<?x4xf32>, %x: f32, %i: index) {
  // expected-error @+1 {{'memory.store' op incorrect number of indices for store, expected 2 but got 3}}
  memory.store %x, %m[%i, %i, %i] : memref<?x4xf32>
  return
}

// -----

func.func @store_value_type(%m: memref<?xf32>, %x: i32, %i: index) {
  // expected-error @+1 {{'memory.store' op value type i32 does not match the memref element type f32}}
  "memory.store"(%x, %m, %i) : (i32, memref<?xf32>, index) -> ()
  return
}

// -----

func.func @store_not_memref(%t: tensor<4xf32>, %x: f32, %i: index) {
  // expected-error @+1 {{'memory.store' op operand #1 must be ranked memref of integer, index, float or complex elements, but got 'tensor<4xf32>'}}
  "memory.store"(%x, %t, %i) : (f32, tensor<4xf32>, index) -> ()
  return
}

// -----

func.func @vector_element(%m: memref<?x8xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_load' op vector element type f64 does not match the memref element type f32}}
  %v = memory.vector_load %m[%i, %i] : memref<?x8xf32>, vector<4xf64>
  return
}

// -----

func.func @vector_2d(%m: memref<?x8xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_load' op requires a 1-D fixed-length vector, got vector<2x4xf32>}}
  %v = memory.vector_load %m[%i, %i] : memref<?x8xf32>, vector<2x4xf32>
  return
}

// -----

func.func @vector_scalable(%m: memref<?x8xf32>, %v: vector<[4]xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_store' op requires a 1-D fixed-length vector, got vector<[4]xf32>}}
  memory.vector_store %v, %m[%i, %i] : memref<?x8xf32>, vector<[4]xf32>
  return
}

// -----

func.func @vector_too_long(%m: memref<?x4xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_load' op a vector of 8 elements does not fit in the last dimension (size 4)}}
  %v = memory.vector_load %m[%i, %i] : memref<?x4xf32>, vector<8xf32>
  return
}

// -----

func.func @vector_stride(%m: memref<4x8xf32, strided<[16, 2]>>, %v: vector<4xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_store' op requires a unit stride in the last dimension, got 2}}
  memory.vector_store %v, %m[%i, %i] : memref<4x8xf32, strided<[16, 2]>>, vector<4xf32>
  return
}

// -----

func.func @vector_indices(%m: memref<?x8xf32>, %i: index) {
  // expected-error @+1 {{'memory.vector_load' op incorrect number of indices for load, expected 2 but got 1}}
  %v = memory.vector_load %m[%i] : memref<?x8xf32>, vector<4xf32>
  return
}

// -----

func.func @vector_rank0(%m: memref<f32>) {
  // expected-error @+1 {{'memory.vector_load' op requires a memref of rank at least 1}}
  %v = memory.vector_load %m[] : memref<f32>, vector<1xf32>
  return
}

// -----

func.func @copy_element(%a: memref<4xf32>, %b: memref<4xf64>) {
  // expected-error @+1 {{'memory.copy' op requires the same element type for source and target, got f32 and f64}}
  memory.copy %a, %b : memref<4xf32> to memref<4xf64>
  return
}

// -----

func.func @copy_shape(%a: memref<4x8xf32>, %b: memref<4x7xf32>) {
  // expected-error @+1 {{'memory.copy' op requires compatible shapes for source and target, got memref<4x8xf32> and memref<4x7xf32>}}
  memory.copy %a, %b : memref<4x8xf32> to memref<4x7xf32>
  return
}

// -----

func.func @copy_rank(%a: memref<?xf32>, %b: memref<?x?xf32>) {
  // expected-error @+1 {{'memory.copy' op requires compatible shapes for source and target}}
  memory.copy %a, %b : memref<?xf32> to memref<?x?xf32>
  return
}

// -----

func.func @address_of_a_scalar(%x: f32) -> index {
  // expected-error @+1 {{'memory.address' op operand #0 must be ranked memref of integer, index, float or complex elements, but got 'f32'}}
  %p = "memory.address"(%x) : (f32) -> index
  return %p : index
}

// -----

func.func @dim_axis(%m: memref<?x4xf32>) -> index {
  // expected-error @+1 {{'memory.dim' op axis 2 is out of range for a memref of rank 2}}
  %d = memory.dim %m, 2 : memref<?x4xf32>
  return %d : index
}

// -----

func.func @dim_negative(%m: memref<?x4xf32>) -> index {
  // expected-error @+1 {{'memory.dim' op axis -1 is out of range for a memref of rank 2}}
  %d = memory.dim %m, -1 : memref<?x4xf32>
  return %d : index
}

// -----

func.func @dim_no_axis(%m: memref<?x4xf32>) -> index {
  // expected-error @+1 {{'memory.dim' op requires attribute 'axis'}}
  %d = "memory.dim"(%m) : (memref<?x4xf32>) -> index
  return %d : index
}

// -----

func.func @view_source(%a: memref<64xi32>, %o: index) {
  // expected-error @+1 {{'memory.view' op operand #0 must be 1-D memref of i8 with the identity layout, but got 'memref<64xi32>'}}
  %v = "memory.view"(%a, %o) : (memref<64xi32>, index) -> memref<4xf32>
  return
}

// -----

func.func @view_layout(%a: memref<?xi8>, %o: index) {
  // expected-error @+1 {{'memory.view' op requires the result to have the identity layout (a contiguous view), got strided<[8, 1]>}}
  %v = memory.view %a[%o][] : memref<?xi8> to memref<4x8xf32, strided<[8, 1]>>
  return
}

// -----

func.func @view_sizes(%a: memref<?xi8>, %o: index) {
  // expected-error @+1 {{'memory.view' op incorrect number of size operands for type}}
  %v = memory.view %a[%o][] : memref<?xi8> to memref<?x4xf32>
  return
}

// -----

func.func @view_misaligned(%a: memref<?xi8>) {
  %c6 = arith.constant 6 : index
  // expected-error @+1 {{'memory.view' op byte offset 6 is not a multiple of the element size (4 bytes)}}
  %v = memory.view %a[%c6][] : memref<?xi8> to memref<4xf32>
  return
}

// -----

func.func @view_out_of_bounds(%a: memref<64xi8>) {
  %c48 = arith.constant 48 : index
  // expected-error @+1 {{'memory.view' op view of 32 bytes at byte offset 48 runs out of the 64-byte buffer}}
  %v = memory.view %a[%c48][] : memref<64xi8> to memref<8xf32>
  return
}

// -----

func.func @view_bits(%a: memref<?xi8>, %o: index) {
  // expected-error @+1 {{'memory.view' op requires an element type with a size in memory, got i128}}
  %v = memory.view %a[%o][] : memref<?xi8> to memref<4xi128>
  return
}

// -----

func.func @subview_count(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op expected 2 offset values, got 1}}
  %s = memory.subview %m[0][4][1] : memref<8x8xf32> to memref<4xf32>
  return
}

// -----

func.func @subview_dynamic_count(%m: memref<8x8xf32>, %i: index) {
  // expected-error @+1 {{'memory.subview' op expected 1 dynamic offset values, got 0}}
  %s = "memory.subview"(%m) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 4, 8>, static_strides = array<i64: 1, 1>}> : (memref<8x8xf32>) -> memref<4x8xf32, strided<[8, 1], offset: ?>>
  return
}

// -----

func.func @subview_negative(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op expected sizes to be non-negative, but got -1}}
  %s = memory.subview %m[0, 0][4, -1][1, 1] : memref<8x8xf32> to memref<4x?xf32, strided<[8, 1]>>
  return
}

// -----

func.func @subview_out_of_bounds(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op slice along dimension 0 runs out-of-bounds: 9 >= 8}}
  %s = memory.subview %m[6, 0][4, 8][1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 48>>
  return
}

// -----

func.func @subview_strided_out_of_bounds(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op slice along dimension 1 runs out-of-bounds: 8 >= 8}}
  %s = memory.subview %m[0, 0][4, 5][2, 2] : memref<8x8xf32> to memref<4x5xf32, strided<[16, 2]>>
  return
}

// -----

func.func @subview_layout(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op expected result type to be 'memref<4x8xf32, strided<[8, 1]>>' (mismatch of result layout), but got 'memref<4x8xf32, strided<[?, 1], offset: ?>>'}}
  %s = memory.subview %m[0, 0][4, 8][1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

func.func @subview_static_offset(%m: memref<8x8xf32>, %i: index) {
  // expected-error @+1 {{'memory.subview' op expected result type to be 'memref<4x8xf32, strided<[8, 1], offset: ?>>' (mismatch of result layout), but got 'memref<4x8xf32, strided<[8, 1], offset: 3>>'}}
  %s = memory.subview %m[%i, 0][4, 8][1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 3>>
  return
}

// -----

func.func @subview_sizes(%m: memref<8x8xf32>) {
  // expected-error @+1 {{'memory.subview' op expected result type to be 'memref<4x8xf32, strided<[8, 1]>>' (mismatch of result sizes), but got 'memref<?x8xf32, strided<[8, 1]>>'}}
  %s = memory.subview %m[0, 0][4, 8][1, 1] : memref<8x8xf32> to memref<?x8xf32, strided<[8, 1]>>
  return
}

// -----

// The identity layout means contiguous: with a dynamic source stride that is not known.
func.func @subview_identity_dynamic(%m: memref<?x?xf32>, %n: index) {
  // expected-error @+1 {{'memory.subview' op expected result type to be 'memref<4x?xf32, strided<[?, 1]>>' (mismatch of result layout), but got 'memref<4x?xf32>'}}
  %s = memory.subview %m[0, 0][4, %n][1, 1] : memref<?x?xf32> to memref<4x?xf32>
  return
}

// -----

func.func @subview_element(%m: memref<8xf32>) {
  // expected-error @+1 {{'memory.subview' op expected result type to be 'memref<4xf32, strided<[1]>>' (mismatch of element type), but got 'memref<4xf64>'}}
  %s = memory.subview %m[0][4][1] : memref<8xf32> to memref<4xf64>
  return
}

// -----

func.func @subview_affine(%m: memref<8x8xf32, affine_map<(d0, d1) -> (d1, d0)>>) {
  // expected-error @+1 {{'memory.subview' op requires a strided or identity source layout, got affine_map<(d0, d1) -> (d1, d0)>}}
  %s = memory.subview %m[0, 0][4, 4][1, 1] : memref<8x8xf32, affine_map<(d0, d1) -> (d1, d0)>> to memref<4x4xf32>
  return
}

// -----

func.func @subview_syntax(%m: memref<8xf32>) {
  // expected-error @+1 {{expected an integer or an SSA value}}
  %s = memory.subview %m[?][4][1] : memref<8xf32> to memref<4xf32>
  return
}

// -----

func.func @load_not_memref(%t: tensor<4xf32>, %i: index) {
  // expected-error @+1 {{expected a ranked memref type, got 'tensor<4xf32>'}}
  %x = memory.load %t[%i] : tensor<4xf32>
  return
}

// -----

func.func @check_code(%ok: i1, %v: i64, %s: memref<3xi64>) {
  // expected-error @+1 {{'memory.check' op requires a code of at least 1 (0 means no error), got 0}}
  memory.check %ok, %v, %v, %s {code = 0 : i64, message = "bad"} : memref<3xi64>
  return
}

// -----

func.func @check_status(%ok: i1, %v: i64, %s: memref<4xi64>) {
  // expected-error @+1 {{'memory.check' op operand #3 must be memref<3xi64> (code, value, bound), but got 'memref<4xi64>'}}
  memory.check %ok, %v, %v, %s {code = 1 : i64, message = "bad"} : memref<4xi64>
  return
}

// -----

func.func @check_value(%ok: i1, %v: index, %s: memref<3xi64>) {
  // expected-error @+1 {{'memory.check' op operand #1 must be i64, but got 'index'}}
  "memory.check"(%ok, %v, %v, %s) <{code = 1 : i64, message = "bad"}> : (i1, index, index, memref<3xi64>) -> ()
  return
}

// -----

func.func @collapse_not_contiguous(%m: memref<?x10xf32, strided<[20, 1]>>) {
  // expected-error @+1 {{'memory.collapse_shape' op invalid source layout map or collapsing non-contiguous dims}}
  %c = memory.collapse_shape %m [[0, 1]] : memref<?x10xf32, strided<[20, 1]>> into memref<?xf32>
  return
}

// -----

func.func @collapse_layout(%m: memref<4x10x3xf32, strided<[60, 3, 1]>>) {
  // expected-error @+1 {{'memory.collapse_shape' op expected collapsed type to be 'memref<4x30xf32, strided<[60, 1]>>' but found 'memref<4x30xf32>'}}
  %c = memory.collapse_shape %m [[0], [1, 2]] : memref<4x10x3xf32, strided<[60, 3, 1]>> into memref<4x30xf32>
  return
}

// -----

func.func @collapse_size(%m: memref<4x10xf32>) {
  // expected-error @+1 {{'memory.collapse_shape' op expected dimension 0 of collapsed type to be static value of 40}}
  %c = memory.collapse_shape %m [[0, 1]] : memref<4x10xf32> into memref<41xf32>
  return
}

// -----

func.func @collapse_groups(%m: memref<4x10xf32>) {
  // expected-error @+1 {{'memory.collapse_shape' op expected reassociation map #0 to be valid and contiguous.}}
  %c = memory.collapse_shape %m [[1, 0]] : memref<4x10xf32> into memref<40xf32>
  return
}
