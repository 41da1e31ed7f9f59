// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The tensor dialect in custom form (MLIR's spelling) and in generic form. Slice offsets,
// sizes and strides, pad amounts and expand_shape's output shape are MLIR's mixed lists:
// static entries live in `static_*` properties (kDynamic, -9223372036854775808, where an
// operand stands), operands in segments.

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME:      %[[T:.*]]: tensor<?x784xf32>, %[[N:.*]]: index)
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() {tag} : tensor<3x10xi1>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D:.*]] = tensor.dim %[[T]], %[[C0]] : tensor<?x784xf32>
// CHECK-NEXT:    %[[D2:.*]] = tensor.dim {tag} %[[E]], %[[C0]] : tensor<?x10xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.cast %[[T]] : tensor<?x784xf32> to tensor<4x?xf32>
// CHECK-NEXT:    %[[U:.*]] = tensor.cast %[[C]] {tag} : tensor<4x?xf32> to tensor<*xf32>
// CHECK-NEXT:    %[[D3:.*]] = tensor.dim %[[U]], %[[N]] : tensor<*xf32>
// GENERIC-LABEL: sym_name = "shapes"
// GENERIC:       %[[E:.*]] = "tensor.empty"(%arg1) : (index) -> tensor<?x10xf32>
// GENERIC:       "tensor.empty"() {tag} : () -> tensor<3x10xi1>
// GENERIC:       "tensor.dim"(%arg0, %{{.*}}) : (tensor<?x784xf32>, index) -> index
// GENERIC:       "tensor.cast"(%arg0) : (tensor<?x784xf32>) -> tensor<4x?xf32>
func.func @shapes(%t: tensor<?x784xf32>, %n: index) -> (index, index, index) {
  %e = tensor.empty(%n) : tensor<?x10xf32>
  %e2 = tensor.empty() {tag} : tensor<3x10xi1>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %t, %c0 : tensor<?x784xf32>
  %d2 = tensor.dim {tag} %e, %c0 : tensor<?x10xf32>
  %c = tensor.cast %t : tensor<?x784xf32> to tensor<4x?xf32>
  %u = tensor.cast %c {tag} : tensor<4x?xf32> to tensor<*xf32>
  %d3 = tensor.dim %u, %n : tensor<*xf32>
  return %d, %d2, %d3 : index, index, index
}

// CHECK-LABEL: func.func @elements(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4xf32>, %[[I:.*]]: index, %[[F:.*]]: f32, %[[S:.*]]: tensor<i32>)
// CHECK-NEXT:    %[[X:.*]] = tensor.extract %[[T]][%[[I]], %[[I]]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = tensor.extract %[[S]][] {tag} : tensor<i32>
// CHECK-NEXT:    %[[R:.*]] = tensor.insert %[[F]] into %[[T]][%[[I]], %[[I]]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[FE:.*]] = tensor.from_elements %[[F]], %[[X]], %[[F]], %[[X]] : tensor<2x2xf32>
// CHECK-NEXT:    %[[FE0:.*]] = tensor.from_elements %[[Y]] : tensor<i32>
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.from_elements {tag} : tensor<0xf32>
// CHECK-NEXT:    %[[SP:.*]] = tensor.splat %[[F]] : tensor<2x3xf32>
// CHECK-NEXT:    %[[SP2:.*]] = tensor.splat %[[F]][%[[I]]] {tag} : tensor<?x3xf32>
// GENERIC-LABEL: sym_name = "elements"
// GENERIC:       "tensor.extract"(%arg0, %arg1, %arg1) : (tensor<?x4xf32>, index, index) -> f32
// GENERIC:       "tensor.extract"(%arg3) {tag} : (tensor<i32>) -> i32
// GENERIC:       "tensor.insert"(%arg2, %arg0, %arg1, %arg1) : (f32, tensor<?x4xf32>, index, index) -> tensor<?x4xf32>
// GENERIC:       "tensor.from_elements"(%arg2, %{{.*}}, %arg2, %{{.*}}) : (f32, f32, f32, f32) -> tensor<2x2xf32>
// GENERIC:       "tensor.from_elements"() {tag} : () -> tensor<0xf32>
// GENERIC:       "tensor.splat"(%arg2, %arg1) {tag} : (f32, index) -> tensor<?x3xf32>
func.func @elements(%t: tensor<?x4xf32>, %i: index, %f: f32, %s: tensor<i32>) {
  %x = tensor.extract %t[%i, %i] : tensor<?x4xf32>
  %y = tensor.extract %s[] {tag} : tensor<i32>
  %r = tensor.insert %f into %t[%i, %i] : tensor<?x4xf32>
  %fe = tensor.from_elements %f, %x, %f, %x : tensor<2x2xf32>
  %fe0 = tensor.from_elements %y : tensor<i32>
  %empty = tensor.from_elements {tag} : tensor<0xf32>
  %sp = tensor.splat %f : tensor<2x3xf32>
  %sp2 = tensor.splat %f[%i] {tag} : tensor<?x3xf32>
  return
}

// CHECK-LABEL: func.func @generate(
// CHECK-SAME:      %[[N:.*]]: index)
// CHECK-NEXT:    %[[G:.*]] = tensor.generate %[[N]] {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[I]], %[[J]] : index
// CHECK-NEXT:      tensor.yield %[[S]] : index
// CHECK-NEXT:    } : tensor<?x3xindex>
// CHECK-NEXT:    %[[G2:.*]] = tensor.generate {
// CHECK-NEXT:    ^bb0(%{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[N]] {tag} : index
// CHECK-NEXT:    } {tag} : tensor<4xindex>
// GENERIC-LABEL: sym_name = "generate"
// GENERIC:       "tensor.generate"(%arg0) ({
// GENERIC:       "tensor.yield"(%{{.*}}) : (index) -> ()
// GENERIC:       }) : (index) -> tensor<?x3xindex>
func.func @generate(%n: index) -> (tensor<?x3xindex>, tensor<4xindex>) {
  %g = tensor.generate %n {
  ^bb0(%i: index, %j: index):
    %s = arith.addi %i, %j : index
    tensor.yield %s : index
  } : tensor<?x3xindex>
  %g2 = tensor.generate {
  ^bb0(%i: index):
    tensor.yield %n {tag} : index
  } {tag} : tensor<4xindex>
  return %g, %g2 : tensor<?x3xindex>, tensor<4xindex>
}

// CHECK-LABEL: func.func @slices(
// CHECK-SAME:      %[[T:.*]]: tensor<?x?xf32>, %[[O:.*]]: index, %[[N:.*]]: index, %[[U:.*]]: tensor<8x16xf32>)
// CHECK-NEXT:    %[[A:.*]] = tensor.extract_slice %[[T]][%[[O]], 0] [4, %[[N]]] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
// CHECK-NEXT:    %[[B:.*]] = tensor.extract_slice %[[U]][%[[O]], 1] [1, 8] [1, 2] {tag} : tensor<8x16xf32> to tensor<8xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.extract_slice %[[U]][3, 4] [1, 1] [1, 1] : tensor<8x16xf32> to tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = tensor.insert_slice %[[A]] into %[[T]][%[[O]], 0] [4, %[[N]]] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.insert_slice %[[B]] into %[[U]][7, 0] [1, 8] [1, 2] {tag} : tensor<8xf32> into tensor<8x16xf32>
// CHECK-NEXT:    %[[F:.*]] = tensor.extract_slice %[[U]][0, 15] [8, 4] [1, -5] : tensor<8x16xf32> to tensor<8x4xf32>
// GENERIC-LABEL: sym_name = "slices"
// GENERIC:       "tensor.extract_slice"(%arg0, %arg1, %arg2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 4, -9223372036854775808>, static_strides = array<i64: 1, 1>}> : (tensor<?x?xf32>, index, index) -> tensor<4x?xf32>
// GENERIC:       "tensor.extract_slice"(%arg3, %arg1) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, static_offsets = array<i64: -9223372036854775808, 1>, static_sizes = array<i64: 1, 8>, static_strides = array<i64: 1, 2>}> {tag} : (tensor<8x16xf32>, index) -> tensor<8xf32>
// GENERIC:       "tensor.insert_slice"(%{{.*}}, %arg0, %arg1, %arg2) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 4, -9223372036854775808>, static_strides = array<i64: 1, 1>}> : (tensor<4x?xf32>, tensor<?x?xf32>, index, index) -> tensor<?x?xf32>
func.func @slices(%t: tensor<?x?xf32>, %o: index, %n: index, %u: tensor<8x16xf32>) {
  %a = tensor.extract_slice %t[%o, 0] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>
  %b = tensor.extract_slice %u[%o, 1][1, 8][1, 2] {tag} : tensor<8x16xf32> to tensor<8xf32>
  %c = tensor.extract_slice %u[3, 4] [1, 1] [1, 1] : tensor<8x16xf32> to tensor<f32>
  %d = tensor.insert_slice %a into %t[%o, 0] [4, %n] [1, 1] : tensor<4x?xf32> into tensor<?x?xf32>
  %e = tensor.insert_slice %b into %u[7, 0] [1, 8] [1, 2] {tag} : tensor<8xf32> into tensor<8x16xf32>
  %f = tensor.extract_slice %u[0, 15] [8, 4] [1, -5] : tensor<8x16xf32> to tensor<8x4xf32>
  return
}

// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:      %[[T:.*]]: tensor<?x4x8xf32>, %[[N:.*]]: index, %[[S:.*]]: tensor<1x1xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [%[[N]], 4, 8] : tensor<?x8xf32> into tensor<?x4x8xf32>
// CHECK-NEXT:    %[[C0:.*]] = tensor.collapse_shape %[[S]] [] {tag} : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT:    %[[E0:.*]] = tensor.expand_shape %[[C0]] [] output_shape [1, 1, 1] {tag} : tensor<f32> into tensor<1x1x1xf32>
// GENERIC-LABEL: sym_name = "reshapes"
// GENERIC:       %[[C:.*]] = "tensor.collapse_shape"(%arg0) <{reassociation = {{\[\[}}0, 1], [2]]}> : (tensor<?x4x8xf32>) -> tensor<?x8xf32>
// GENERIC:       "tensor.expand_shape"(%[[C]], %arg1) <{reassociation = {{\[\[}}0, 1], [2]], static_output_shape = array<i64: -9223372036854775808, 4, 8>}> : (tensor<?x8xf32>, index) -> tensor<?x4x8xf32>
// GENERIC:       "tensor.collapse_shape"(%arg2) <{reassociation = []}> {tag} : (tensor<1x1xf32>) -> tensor<f32>
func.func @reshapes(%t: tensor<?x4x8xf32>, %n: index, %s: tensor<1x1xf32>) {
  %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [%n, 4, 8] : tensor<?x8xf32> into tensor<?x4x8xf32>
  %c0 = tensor.collapse_shape %s [] {tag} : tensor<1x1xf32> into tensor<f32>
  %e0 = tensor.expand_shape %c0 [] output_shape [1, 1, 1] {tag} : tensor<f32> into tensor<1x1x1xf32>
  return
}

// CHECK-LABEL: func.func @concat_pad(
// CHECK-SAME:      %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<?x4xf32>, %[[N:.*]]: index, %[[Z:.*]]: f32)
// CHECK-NEXT:    %[[C:.*]] = tensor.concat dim(0) %[[A]], %[[B]] : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT:    %[[C1:.*]] = tensor.concat dim(1) %[[A]] {tag} : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %[[A]] low[1, %[[N]]] high[2, 0] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[Z]] : f32
// CHECK-NEXT:    } : tensor<3x4xf32> to tensor<6x?xf32>
// CHECK-NEXT:    %[[Q:.*]] = tensor.pad %[[B]] nofold low[0, 0] high[0, 0] {
// CHECK-NEXT:    ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[I]], %[[J]] : index
// CHECK-NEXT:      %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT:      %[[KF:.*]] = arith.sitofp %[[KI]] : i32 to f32
// CHECK-NEXT:      tensor.yield %[[KF]] : f32
// CHECK-NEXT:    } {tag} : tensor<?x4xf32> to tensor<?x4xf32>
// GENERIC-LABEL: sym_name = "concat_pad"
// GENERIC:       "tensor.concat"(%arg0, %arg1) <{dim = 0 : i64}> : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// GENERIC:       "tensor.pad"(%arg0, %arg2) <{operandSegmentSizes = array<i32: 1, 1, 0>, static_high = array<i64: 2, 0>, static_low = array<i64: 1, -9223372036854775808>}> ({
// GENERIC:       "tensor.pad"(%arg1) <{nofold, operandSegmentSizes = array<i32: 1, 0, 0>, static_high = array<i64: 0, 0>, static_low = array<i64: 0, 0>}> ({
func.func @concat_pad(%a: tensor<3x4xf32>, %b: tensor<?x4xf32>, %n: index, %z: f32) {
  %c = tensor.concat dim(0) %a, %b : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %c1 = tensor.concat dim(1) %a {tag} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %p = tensor.pad %a low[1, %n] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<3x4xf32> to tensor<6x?xf32>
  %q = tensor.pad %b nofold low[0, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    %k = arith.addi %i, %j : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    tensor.yield %kf : f32
  } {tag} : tensor<?x4xf32> to tensor<?x4xf32>
  return
}
