// RUN: irkit-opt %s -p canonicalize | FileCheck %s

// The tensor dialect's folders and canonicalization patterns: the cases MLIR 22's own
// `--canonicalize` simplifies, with the same results (tests/unit/test_tensor_dialect.py runs
// this file through `mlir-opt --canonicalize` against the same CHECK lines). Each function
// also shows one case that must not fold.

// ----- tensor.dim ----------------------------------------------------------------------------

// CHECK-LABEL: func.func @dim_static(
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    return %[[C4]] : index
func.func @dim_static(%t: tensor<?x4xf32>) -> index {
  %c1 = arith.constant 1 : index
  %d = tensor.dim %t, %c1 : tensor<?x4xf32>
  return %d : index
}

// CHECK-LABEL: func.func @dim_of_producers(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4xf32>, %[[N:.*]]: index, %[[F:.*]]: f32)
// CHECK-NEXT:    return %[[N]], %[[N]], %[[N]] : index, index, index
func.func @dim_of_producers(%t: tensor<?x4xf32>, %n: index, %f: f32) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %d0 = tensor.dim %e, %c0 : tensor<?x4xf32>
  %g = tensor.generate %n {
  ^bb0(%i: index):
    tensor.yield %f : f32
  } : tensor<?xf32>
  %d1 = tensor.dim %g, %c0 : tensor<?xf32>
  %s = tensor.extract_slice %t[0, 0] [%n, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
  %d2 = tensor.dim %s, %c0 : tensor<?x4xf32>
  return %d0, %d1, %d2 : index, index, index
}

// The dim of a cast, an insert or an insert_slice is the dim of what they were made from.
// CHECK-LABEL: func.func @dim_through(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<2x4xf32>, %[[F:.*]]: f32)
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D0:.*]] = tensor.dim %[[T]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[D1:.*]] = tensor.dim %[[T]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[D2:.*]] = tensor.dim %[[T]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    return %[[D0]], %[[D1]], %[[D2]] : index, index, index
func.func @dim_through(%t: tensor<?x4xf32>, %s: tensor<2x4xf32>, %f: f32) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %c = tensor.cast %t : tensor<?x4xf32> to tensor<?x?xf32>
  %d0 = tensor.dim %c, %c0 : tensor<?x?xf32>
  %r = tensor.insert_slice %s into %t[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<?x4xf32>
  %d1 = tensor.dim %r, %c0 : tensor<?x4xf32>
  %i = tensor.insert %f into %t[%c0, %c0] : tensor<?x4xf32>
  %d2 = tensor.dim %i, %c0 : tensor<?x4xf32>
  return %d0, %d1, %d2 : index, index, index
}

// Through a cast, any index (here one known only at run time).
// CHECK-LABEL: func.func @dim_dynamic_index(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4xf32>, %[[N:.*]]: index)
// CHECK-NEXT:    %[[D:.*]] = tensor.dim %[[T]], %[[N]] : tensor<?x4xf32>
// CHECK-NEXT:    return %[[D]] : index
func.func @dim_dynamic_index(%t: tensor<?x4xf32>, %n: index) -> index {
  %c = tensor.cast %t : tensor<?x4xf32> to tensor<*xf32>
  %d = tensor.dim %c, %n : tensor<*xf32>
  return %d : index
}

// An index out of range is left alone: folding it would invent a value.
// CHECK-LABEL: func.func @dim_out_of_range(
// CHECK:         %[[D:.*]] = tensor.dim
// CHECK-NEXT:    return %[[D]] : index
func.func @dim_out_of_range(%t: tensor<?x4xf32>) -> index {
  %c5 = arith.constant 5 : index
  %d = tensor.dim %t, %c5 : tensor<?x4xf32>
  return %d : index
}

// ----- tensor.cast -------------------------------------------------------------------------

// CHECK-LABEL: func.func @cast_same(
// CHECK-SAME:      %[[T:.*]]: tensor<4xf32>)
// CHECK-NEXT:    return %[[T]], %[[T]] : tensor<4xf32>, tensor<4xf32>
func.func @cast_same(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = tensor.cast %t : tensor<4xf32> to tensor<4xf32>
  %b = tensor.cast %t : tensor<4xf32> to tensor<?xf32>
  %c = tensor.cast %b : tensor<?xf32> to tensor<4xf32>
  return %a, %c : tensor<4xf32>, tensor<4xf32>
}

// A chain of casts becomes one when the middle type adds nothing; otherwise the middle cast
// is a run-time check (`?` -> 4 -> `?` asserts a size of 4) and stays.
// CHECK-LABEL: func.func @cast_chains(
// CHECK-SAME:      %[[A:.*]]: tensor<4x?xf32>, %[[B:.*]]: tensor<?xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[A]] : tensor<4x?xf32> to tensor<?x?xf32>
// CHECK-NEXT:    %[[D:.*]] = tensor.cast %[[B]] : tensor<?xf32> to tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.cast %[[D]] : tensor<4xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[C]], %[[E]]
func.func @cast_chains(%a: tensor<4x?xf32>, %b: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %0 = tensor.cast %a : tensor<4x?xf32> to tensor<?x?xf32>
  %1 = tensor.cast %0 : tensor<?x?xf32> to tensor<*xf32>
  %2 = tensor.cast %1 : tensor<*xf32> to tensor<?x?xf32>
  %3 = tensor.cast %b : tensor<?xf32> to tensor<4xf32>
  %4 = tensor.cast %3 : tensor<4xf32> to tensor<?xf32>
  return %2, %4 : tensor<?x?xf32>, tensor<?xf32>
}

// ----- tensor.extract, tensor.insert, tensor.from_elements, tensor.splat ---------------------

// CHECK-LABEL: func.func @extract_constants(
// CHECK-DAG:     %[[A:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG:     %[[B:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-DAG:     %[[C:.*]] = arith.constant 6 : i32
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]] : f32, f32, i32
func.func @extract_constants(%j: index) -> (f32, f32, i32) {
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = arith.constant dense<7.0> : tensor<2x2xf32>
  %i = arith.constant dense<[5, 6]> : tensor<2xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %c[%c1, %c0] : tensor<2x2xf32>
  %b = tensor.extract %s[%j, %j] : tensor<2x2xf32>
  %d = tensor.extract %i[%c1] : tensor<2xi32>
  return %a, %b, %d : f32, f32, i32
}

// Indices out of bounds are undefined behaviour: no fold.
// CHECK-LABEL: func.func @extract_out_of_bounds(
// CHECK:         %[[X:.*]] = tensor.extract
// CHECK-NEXT:    return %[[X]] : f32
func.func @extract_out_of_bounds() -> f32 {
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c5 = arith.constant 5 : index
  %a = tensor.extract %c[%c5, %c5] : tensor<2x2xf32>
  return %a : f32
}

// CHECK-LABEL: func.func @extract_of_producers(
// CHECK-SAME:      %[[X:.*]]: f32, %[[Y:.*]]: f32, %[[T:.*]]: tensor<?xf32>, %[[I:.*]]: index)
// CHECK-NEXT:    %[[E:.*]] = tensor.extract %[[T]][%[[I]]] : tensor<?xf32>
// CHECK-NEXT:    return %[[Y]], %[[E]] : f32, f32
func.func @extract_of_producers(%x: f32, %y: f32, %t: tensor<?xf32>, %i: index) -> (f32, f32) {
  %c1 = arith.constant 1 : index
  %fe = tensor.from_elements %x, %y : tensor<2xf32>
  %a = tensor.extract %fe[%c1] : tensor<2xf32>
  %c = tensor.cast %t : tensor<?xf32> to tensor<4xf32>
  %b = tensor.extract %c[%i] : tensor<4xf32>
  return %a, %b : f32, f32
}

// CHECK-LABEL: func.func @constant_tensors(
// CHECK-DAG:     %[[FE:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG:     %[[SP:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    return %[[FE]], %[[SP]], %[[SP]]
func.func @constant_tensors() -> (tensor<2xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = arith.constant 1.0 : f32
  %b = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %t = tensor.from_elements %a, %b : tensor<2xf32>
  %s = tensor.splat %a : tensor<4xf32>
  %ones = arith.constant dense<1.0> : tensor<4xf32>
  %r = tensor.insert %a into %ones[%c0] : tensor<4xf32>
  return %t, %s, %r : tensor<2xf32>, tensor<4xf32>, tensor<4xf32>
}

// Inserting a different value, or into a non-splat constant, stays.
// CHECK-LABEL: func.func @insert_stays(
// CHECK:         %[[R:.*]] = tensor.insert
// CHECK-NEXT:    return %[[R]] : tensor<2xf32>
func.func @insert_stays() -> tensor<2xf32> {
  %a = arith.constant 3.0 : f32
  %c0 = arith.constant 0 : index
  %s = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %t = tensor.insert %a into %s[%c0] : tensor<2xf32>
  return %t : tensor<2xf32>
}

// ----- tensor.empty -----------------------------------------------------------------------

// CHECK-LABEL: func.func @empty_constant_size(
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<3x4xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[E]] : tensor<3x4xf32> to tensor<?x4xf32>
// CHECK-NEXT:    return %[[C]] : tensor<?x4xf32>
func.func @empty_constant_size() -> tensor<?x4xf32> {
  %c3 = arith.constant 3 : index
  %e = tensor.empty(%c3) : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// Unused tensor ops are dead: they are all pure.
// CHECK-LABEL: func.func @unused(
// CHECK-NEXT:    return
func.func @unused(%t: tensor<4xf32>, %f: f32, %i: index) {
  %s = tensor.splat %f : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %x = tensor.extract %t[%i] : tensor<4xf32>
  %p = tensor.pad %t low[0] high[1] {
  ^bb0(%j: index):
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<5xf32>
  return
}

// ----- tensor.extract_slice and tensor.insert_slice ------------------------------------------

// CHECK-LABEL: func.func @slice_identity(
// CHECK-SAME:      %[[T:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<?x8xf32>, %[[N:.*]]: index)
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[U]][0, 0] [%[[N]], 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
// CHECK-NEXT:    return %[[T]], %[[S]]
func.func @slice_identity(%t: tensor<4x8xf32>, %u: tensor<?x8xf32>, %n: index)
    -> (tensor<4x8xf32>, tensor<?x8xf32>) {
  %a = tensor.extract_slice %t[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %b = tensor.extract_slice %u[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<?x8xf32>
}

// Constant sizes and offsets become static; the more static slice is cast back.
// CHECK-LABEL: func.func @slice_constant_arguments(
// CHECK-SAME:      %[[T:.*]]: tensor<?x8xf32>, %[[N:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = tensor.extract_slice %[[T]][1, 0] [2, 2] [1, 1] : tensor<?x8xf32> to tensor<2x2xf32>
// CHECK-NEXT:    %[[AC:.*]] = tensor.cast %[[A]] : tensor<2x2xf32> to tensor<?x?xf32>
// CHECK-NEXT:    %[[B:.*]] = tensor.extract_slice %[[T]][%[[N]], 0] [1, 1] [1, 1] : tensor<?x8xf32> to tensor<1xf32>
// CHECK-NEXT:    %[[BC:.*]] = tensor.cast %[[B]] : tensor<1xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[AC]], %[[BC]]
func.func @slice_constant_arguments(%t: tensor<?x8xf32>, %n: index)
    -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract_slice %t[%c1, 0] [%c2, %c2] [%c1, 1] : tensor<?x8xf32> to tensor<?x?xf32>
  %b = tensor.extract_slice %t[%n, 0] [1, %c1] [1, 1] : tensor<?x8xf32> to tensor<?xf32>
  return %a, %b : tensor<?x?xf32>, tensor<?xf32>
}

// A slice of a splat constant is a splat; of any other constant it stays.
// CHECK-LABEL: func.func @slice_of_constant(
// CHECK-DAG:     %[[SPLAT:.*]] = arith.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-DAG:     %[[C:.*]] = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[C]][1] [2] [1] : tensor<4xi32> to tensor<2xi32>
// CHECK-NEXT:    return %[[SPLAT]], %[[S]]
func.func @slice_of_constant() -> (tensor<2x3xf32>, tensor<2xi32>) {
  %ones = arith.constant dense<1.0> : tensor<4x8xf32>
  %a = tensor.extract_slice %ones[1, 2] [2, 3] [1, 1] : tensor<4x8xf32> to tensor<2x3xf32>
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %b = tensor.extract_slice %c[1] [2] [1] : tensor<4xi32> to tensor<2xi32>
  return %a, %b : tensor<2x3xf32>, tensor<2xi32>
}

// Extracting what was just inserted at the same window gives the inserted tensor; inserting
// what was just extracted from the same window of the destination changes nothing.
// CHECK-LABEL: func.func @slice_round_trips(
// CHECK-SAME:      %[[T:.*]]: tensor<8x8xf32>, %[[U:.*]]: tensor<2x4xf32>, %[[I:.*]]: index)
// CHECK-NEXT:    return %[[U]], %[[T]]
func.func @slice_round_trips(%t: tensor<8x8xf32>, %u: tensor<2x4xf32>, %i: index)
    -> (tensor<2x4xf32>, tensor<8x8xf32>) {
  %r = tensor.insert_slice %u into %t[%i, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x8xf32>
  %s = tensor.extract_slice %r[%i, 0] [2, 4] [1, 1] : tensor<8x8xf32> to tensor<2x4xf32>
  %e = tensor.extract_slice %t[%i, 4] [2, 4] [1, 1] : tensor<8x8xf32> to tensor<2x4xf32>
  %q = tensor.insert_slice %e into %t[%i, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x8xf32>
  return %s, %q : tensor<2x4xf32>, tensor<8x8xf32>
}

// A different window does not fold.
// CHECK-LABEL: func.func @slice_other_window(
// CHECK:         tensor.insert_slice
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice
// CHECK-NEXT:    return %[[S]]
func.func @slice_other_window(%t: tensor<8x8xf32>, %u: tensor<2x4xf32>, %i: index) -> tensor<2x4xf32> {
  %r = tensor.insert_slice %u into %t[%i, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x8xf32>
  %s = tensor.extract_slice %r[%i, 4] [2, 4] [1, 1] : tensor<8x8xf32> to tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @insert_identity(
// CHECK-SAME:      %[[T:.*]]: tensor<4x8xf32>, %[[U:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    return %[[U]] : tensor<4x8xf32>
func.func @insert_identity(%t: tensor<4x8xf32>, %u: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = tensor.insert_slice %u into %t[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// Constant arguments of an insert_slice become static; the source is cast to match (and a
// cast of a cast back to the source's own type disappears).
// CHECK-LABEL: func.func @insert_constant_arguments(
// CHECK-SAME:      %[[T:.*]]: tensor<8x8xf32>, %[[U:.*]]: tensor<?x4xf32>, %[[V:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[U]] : tensor<?x4xf32> to tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = tensor.insert_slice %[[C]] into %[[T]][2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x8xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor.insert_slice %[[V]] into %[[R]][4, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x8xf32>
// CHECK-NEXT:    return %[[S]]
func.func @insert_constant_arguments(%t: tensor<8x8xf32>, %u: tensor<?x4xf32>, %v: tensor<2x4xf32>)
    -> tensor<8x8xf32> {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %r = tensor.insert_slice %u into %t[%c2, 0] [%c2, 4] [1, 1] : tensor<?x4xf32> into tensor<8x8xf32>
  %cv = tensor.cast %v : tensor<2x4xf32> to tensor<?x4xf32>
  %s = tensor.insert_slice %cv into %r[%c4, 0] [%c2, 4] [1, 1] : tensor<?x4xf32> into tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// ----- tensor.collapse_shape and tensor.expand_shape ---------------------------------------

// CHECK-LABEL: func.func @reshape_round_trips(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4xf32>, %[[U:.*]]: tensor<12xf32>, %[[V:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    return %[[T]], %[[U]], %[[V]]
func.func @reshape_round_trips(%t: tensor<?x4xf32>, %u: tensor<12xf32>, %v: tensor<2x3xf32>)
    -> (tensor<?x4xf32>, tensor<12xf32>, tensor<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %t, %c0 : tensor<?x4xf32>
  %a = tensor.collapse_shape %t [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %b = tensor.expand_shape %a [[0, 1]] output_shape [%d, 4] : tensor<?xf32> into tensor<?x4xf32>
  %e = tensor.expand_shape %u [[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
  %f = tensor.collapse_shape %e [[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
  %g = tensor.collapse_shape %v [[0], [1]] : tensor<2x3xf32> into tensor<2x3xf32>
  return %b, %f, %g : tensor<?x4xf32>, tensor<12xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape_compose(
// CHECK-SAME:      %[[T:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    return %[[C]]
func.func @reshape_compose(%t: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %a = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %b = tensor.collapse_shape %a [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  return %b : tensor<24xf32>
}

// CHECK-LABEL: func.func @reshape_constant(
// CHECK-NEXT:    %[[C:.*]] = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK-NEXT:    return %[[C]]
func.func @reshape_constant() -> tensor<4xi32> {
  %c = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %a = tensor.collapse_shape %c [[0, 1]] : tensor<2x2xi32> into tensor<4xi32>
  return %a : tensor<4xi32>
}

// ----- tensor.concat and tensor.pad --------------------------------------------------------

// CHECK-LABEL: func.func @concat_single(
// CHECK-SAME:      %[[T:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[T]] : tensor<4xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[T]], %[[C]]
func.func @concat_single(%t: tensor<4xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %a = tensor.concat dim(0) %t : (tensor<4xf32>) -> tensor<4xf32>
  %b = tensor.concat dim(0) %t : (tensor<4xf32>) -> tensor<?xf32>
  return %a, %b : tensor<4xf32>, tensor<?xf32>
}

// Padding by nothing is the source (cast to the result type), unless `nofold`.
// CHECK-LABEL: func.func @pad_nothing(
// CHECK-SAME:      %[[T:.*]]: tensor<4xf32>, %[[U:.*]]: tensor<?xf32>, %[[F:.*]]: f32)
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %[[T]] nofold low[0] high[0]
// CHECK:         return %[[T]], %[[U]], %[[P]]
func.func @pad_nothing(%t: tensor<4xf32>, %u: tensor<?xf32>, %f: f32)
    -> (tensor<4xf32>, tensor<?xf32>, tensor<4xf32>) {
  %a = tensor.pad %t low[0] high[0] {
  ^bb0(%i: index):
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<4xf32>
  %b = tensor.pad %u low[0] high[0] {
  ^bb0(%i: index):
    tensor.yield %f : f32
  } : tensor<?xf32> to tensor<?xf32>
  %c = tensor.pad %t nofold low[0] high[0] {
  ^bb0(%i: index):
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<?xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @pad_constant_amounts(
// CHECK-SAME:      %[[T:.*]]: tensor<4xf32>, %[[F:.*]]: f32)
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %[[T]] low[1] high[0] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[F]] : f32
// CHECK-NEXT:    } : tensor<4xf32> to tensor<5xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[P]] : tensor<5xf32> to tensor<?xf32>
// CHECK-NEXT:    return %[[C]]
func.func @pad_constant_amounts(%t: tensor<4xf32>, %f: f32) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %p = tensor.pad %t low[%c1] high[0] {
  ^bb0(%i: index):
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}
