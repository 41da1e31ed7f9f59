// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The memory dialect in custom form (MLIR's memref / vector spelling) and in generic form.
// Subview offsets, sizes and strides are MLIR's mixed lists: static entries live in the
// `static_*` properties (kDynamic where an operand stands), operands in segments.

// A stack buffer: static shape, no dealloc (it lives until its block ends).
// CHECK-LABEL: func.func @alloca(
// CHECK-NEXT:    %[[A:.*]] = memory.alloca() : memref<2x3xf32>
// CHECK-NEXT:    %[[B:.*]] = memory.alloca() {alignment = 128 : i64} : memref<i64>
// CHECK-NEXT:    return %[[A]], %[[B]]
// GENERIC-LABEL: sym_name = "alloca"
// GENERIC:       "memory.alloca"() : () -> memref<2x3xf32>
// GENERIC:       "memory.alloca"() {alignment = 128 : i64} : () -> memref<i64>
func.func @alloca() -> (memref<2x3xf32>, memref<i64>) {
  %a = memory.alloca() : memref<2x3xf32>
  %b = memory.alloca() {alignment = 128 : i64} : memref<i64>
  return %a, %b : memref<2x3xf32>, memref<i64>
}

// CHECK-LABEL: func.func @alloc_dealloc(
// CHECK-SAME:      %[[N:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = memory.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT:    %[[B:.*]] = memory.alloc() : memref<2x3xi32>
// CHECK-NEXT:    %[[C:.*]] = memory.alloc() {alignment = 64 : i64} : memref<f64>
// CHECK-NEXT:    memory.dealloc %[[A]] : memref<?x4xf32>
// CHECK-NEXT:    memory.dealloc %[[B]] : memref<2x3xi32>
// CHECK-NEXT:    memory.dealloc %[[C]] : memref<f64>
// GENERIC-LABEL: sym_name = "alloc_dealloc"
// GENERIC:       %[[A:.*]] = "memory.alloc"(%arg0) : (index) -> memref<?x4xf32>
// GENERIC:       "memory.alloc"() : () -> memref<2x3xi32>
// GENERIC:       "memory.dealloc"(%[[A]]) : (memref<?x4xf32>) -> ()
func.func @alloc_dealloc(%n: index) {
  %a = memory.alloc(%n) : memref<?x4xf32>
  %b = memory.alloc() : memref<2x3xi32>
  %c = memory.alloc() {alignment = 64 : i64} : memref<f64>
  memory.dealloc %a : memref<?x4xf32>
  memory.dealloc %b : memref<2x3xi32>
  memory.dealloc %c : memref<f64>
  return
}

// CHECK-LABEL: func.func @load_store(
// CHECK-SAME:      %[[M:.*]]: memref<?x4xf32>, %[[I:.*]]: index, %[[J:.*]]: index, %[[S:.*]]: memref<index>)
// CHECK-NEXT:    %[[X:.*]] = memory.load %[[M]][%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK-NEXT:    memory.store %[[X]], %[[M]][%[[J]], %[[I]]] : memref<?x4xf32>
// CHECK-NEXT:    %[[K:.*]] = memory.load %[[S]][] : memref<index>
// CHECK-NEXT:    memory.store %[[K]], %[[S]][] : memref<index>
// GENERIC-LABEL: sym_name = "load_store"
// GENERIC:       %[[X:.*]] = "memory.load"(%arg0, %arg1, %arg2) : (memref<?x4xf32>, index, index) -> f32
// GENERIC:       "memory.store"(%[[X]], %arg0, %arg2, %arg1) : (f32, memref<?x4xf32>, index, index) -> ()
func.func @load_store(%m: memref<?x4xf32>, %i: index, %j: index, %s: memref<index>) {
  %x = memory.load %m[%i, %j] : memref<?x4xf32>
  memory.store %x, %m[%j, %i] : memref<?x4xf32>
  %k = memory.load %s[] : memref<index>
  memory.store %k, %s[] : memref<index>
  return
}

// CHECK-LABEL: func.func @vectors(
// CHECK-SAME:      %[[M:.*]]: memref<?x8xf32>, %[[I:.*]]: index, %[[J:.*]]: index)
// CHECK-NEXT:    %[[V:.*]] = memory.vector_load %[[M]][%[[I]], %[[J]]] : memref<?x8xf32>, vector<4xf32>
// CHECK-NEXT:    memory.vector_store %[[V]], %[[M]][%[[J]], %[[I]]] : memref<?x8xf32>, vector<4xf32>
// GENERIC-LABEL: sym_name = "vectors"
// GENERIC:       %[[V:.*]] = "memory.vector_load"(%arg0, %arg1, %arg2) : (memref<?x8xf32>, index, index) -> vector<4xf32>
// GENERIC:       "memory.vector_store"(%[[V]], %arg0, %arg2, %arg1) : (vector<4xf32>, memref<?x8xf32>, index, index) -> ()
func.func @vectors(%m: memref<?x8xf32>, %i: index, %j: index) {
  %v = memory.vector_load %m[%i, %j] : memref<?x8xf32>, vector<4xf32>
  memory.vector_store %v, %m[%j, %i] : memref<?x8xf32>, vector<4xf32>
  return
}

// The address of the first element, for alignment decided at run time.
// CHECK-LABEL: func.func @address(
// CHECK-SAME:      %[[A:.*]]: memref<?x784xf32>)
// CHECK-NEXT:    %[[P:.*]] = memory.address %[[A]] : memref<?x784xf32>
// CHECK-NEXT:    return %[[P]] : index
// GENERIC-LABEL: sym_name = "address"
// GENERIC:       "memory.address"(%arg0) : (memref<?x784xf32>) -> index
func.func @address(%a: memref<?x784xf32>) -> index {
  %p = memory.address %a : memref<?x784xf32>
  return %p : index
}

// CHECK-LABEL: func.func @copy_dim(
// CHECK-SAME:      %[[A:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<3x?xf32, strided<[8, 1]>>)
// CHECK-NEXT:    memory.copy %[[A]], %[[B]] : memref<?x4xf32> to memref<3x?xf32, strided<[8, 1]>>
// CHECK-NEXT:    %[[D:.*]] = memory.dim %[[A]], 0 : memref<?x4xf32>
// CHECK-NEXT:    return %[[D]] : index
// GENERIC-LABEL: sym_name = "copy_dim"
// GENERIC:       "memory.copy"(%arg0, %arg1) : (memref<?x4xf32>, memref<3x?xf32, strided<[8, 1]>>) -> ()
// GENERIC:       "memory.dim"(%arg0) <{axis = 0 : i64}> : (memref<?x4xf32>) -> index
func.func @copy_dim(%a: memref<?x4xf32>, %b: memref<3x?xf32, strided<[8, 1]>>) -> index {
  memory.copy %a, %b : memref<?x4xf32> to memref<3x?xf32, strided<[8, 1]>>
  %d = memory.dim %a, 0 : memref<?x4xf32>
  return %d : index
}

// CHECK-LABEL: func.func @arena_views(
// CHECK-SAME:      %[[BYTES:.*]]: index, %[[OFF:.*]]: index, %[[N:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = memory.arena(%[[BYTES]]) : memref<?xi8>
// CHECK-NEXT:    %[[C64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[V0:.*]] = memory.view %[[A]][%[[C64]]][] : memref<?xi8> to memref<4x4xf32>
// CHECK-NEXT:    %[[V1:.*]] = memory.view %[[A]][%[[OFF]]][%[[N]]] : memref<?xi8> to memref<?x4xf64>
// CHECK-NEXT:    %[[S:.*]] = memory.arena() : memref<256xi8>
// CHECK-NEXT:    memory.dealloc %[[S]] : memref<256xi8>
// CHECK-NEXT:    memory.dealloc %[[A]] : memref<?xi8>
// GENERIC-LABEL: sym_name = "arena_views"
// GENERIC:       %[[A:.*]] = "memory.arena"(%arg0) : (index) -> memref<?xi8>
// GENERIC:       "memory.view"(%[[A]], %{{.*}}) : (memref<?xi8>, index) -> memref<4x4xf32>
// GENERIC:       "memory.view"(%[[A]], %arg1, %arg2) : (memref<?xi8>, index, index) -> memref<?x4xf64>
// GENERIC:       "memory.arena"() : () -> memref<256xi8>
func.func @arena_views(%bytes: index, %off: index, %n: index) {
  %a = memory.arena(%bytes) : memref<?xi8>
  %c64 = arith.constant 64 : index
  %v0 = memory.view %a[%c64][] : memref<?xi8> to memref<4x4xf32>
  %v1 = memory.view %a[%off][%n] : memref<?xi8> to memref<?x4xf64>
  %s = memory.arena() : memref<256xi8>
  memory.dealloc %s : memref<256xi8>
  memory.dealloc %a : memref<?xi8>
  return
}

// CHECK-LABEL: func.func @subviews(
// CHECK-SAME:      %[[M:.*]]: memref<?x8xf32>, %[[O0:.*]]: index, %[[O1:.*]]: index, %[[S0:.*]]: index)
// CHECK-NEXT:    memory.subview %[[M]][%[[O0]], %[[O1]]] [%[[S0]], 4] [1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT:    memory.subview %[[M]][0, 0] [4, 8] [1, 1] : memref<?x8xf32> to memref<4x8xf32, strided<[8, 1]>>
// CHECK-NEXT:    memory.subview %[[M]][0, 0] [4, 8] [1, 1] : memref<?x8xf32> to memref<4x8xf32>
// CHECK-NEXT:    memory.subview %[[M]][1, 2] [2, 3] [2, %[[S0]]] : memref<?x8xf32> to memref<2x3xf32, strided<[16, ?], offset: 10>>
// CHECK-NEXT:    memory.subview %[[M]][0, 3] [5, 4] [1, 0] : memref<?x8xf32> to memref<5x4xf32, strided<[8, 0], offset: 3>>
// GENERIC-LABEL: sym_name = "subviews"
// GENERIC:       "memory.subview"(%arg0, %arg1, %arg2, %arg3) <{operandSegmentSizes = array<i32: 1, 2, 1, 0>, static_offsets = array<i64: -9223372036854775808, -9223372036854775808>, static_sizes = array<i64: -9223372036854775808, 4>, static_strides = array<i64: 1, 1>}> : (memref<?x8xf32>, index, index, index) -> memref<?x4xf32, strided<[8, 1], offset: ?>>
// GENERIC:       "memory.subview"(%arg0) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 8>, static_strides = array<i64: 1, 1>}> : (memref<?x8xf32>) -> memref<4x8xf32, strided<[8, 1]>>
func.func @subviews(%m: memref<?x8xf32>, %o0: index, %o1: index, %s0: index) {
  %0 = memory.subview %m[%o0, %o1][%s0, 4][1, 1] : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1], offset: ?>>
  %1 = memory.subview %m[0, 0][4, 8][1, 1] : memref<?x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  %2 = memory.subview %m[0, 0] [4, 8] [1, 1] : memref<?x8xf32> to memref<4x8xf32>
  %3 = memory.subview %m[1, 2][2, 3][2, %s0] : memref<?x8xf32> to memref<2x3xf32, strided<[16, ?], offset: 10>>
  %4 = memory.subview %m[0, 3][5, 4][1, 0] : memref<?x8xf32> to memref<5x4xf32, strided<[8, 0], offset: 3>>
  return
}

// A collapse merges groups of adjacent dims: the identity layout stays the identity, a
// strided source keeps its offset and each group's innermost stride.
// CHECK-LABEL: func.func @collapses(
// CHECK-SAME:      %[[W:.*]]: memref<784x10xf32>, %[[D:.*]]: memref<4x?x8xf32>, %[[S:.*]]: memref<4x10x3xf32, strided<[60, 3, 1], offset: ?>>)
// CHECK-NEXT:    memory.collapse_shape %[[W]] {{\[}}[0, 1]] : memref<784x10xf32> into memref<7840xf32>
// CHECK-NEXT:    memory.collapse_shape %[[D]] {{\[}}[0], [1, 2]] : memref<4x?x8xf32> into memref<4x?xf32>
// CHECK-NEXT:    memory.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : memref<4x10x3xf32, strided<[60, 3, 1], offset: ?>> into memref<4x30xf32, strided<[60, 1], offset: ?>>
// GENERIC-LABEL: sym_name = "collapses"
// GENERIC:       "memory.collapse_shape"(%arg0) <{reassociation = {{\[}}[0, 1]]}> : (memref<784x10xf32>) -> memref<7840xf32>
func.func @collapses(%w: memref<784x10xf32>, %d: memref<4x?x8xf32>,
                     %s: memref<4x10x3xf32, strided<[60, 3, 1], offset: ?>>) {
  %0 = memory.collapse_shape %w [[0, 1]] : memref<784x10xf32> into memref<7840xf32>
  %1 = memory.collapse_shape %d [[0], [1, 2]] : memref<4x?x8xf32> into memref<4x?xf32>
  %2 = memory.collapse_shape %s [[0], [1, 2]] : memref<4x10x3xf32, strided<[60, 3, 1], offset: ?>> into memref<4x30xf32, strided<[60, 1], offset: ?>>
  return
}

// A subview of a strided window composes the layouts.
// CHECK-LABEL: func.func @subview_of_subview(
// CHECK:         memory.subview %{{.*}}[1, 1] [2, 2] [1, 2] : memref<4x6xf32, strided<[16, 2], offset: ?>> to memref<2x2xf32, strided<[16, 4], offset: ?>>
func.func @subview_of_subview(%m: memref<4x6xf32, strided<[16, 2], offset: ?>>) {
  %0 = memory.subview %m[1, 1][2, 2][1, 2] : memref<4x6xf32, strided<[16, 2], offset: ?>> to memref<2x2xf32, strided<[16, 4], offset: ?>>
  return
}

// A run-time check: the condition, the value and bound it records, the status buffer; the
// code and message are properties (placeholders kept as written).
// CHECK-LABEL: func.func @check(
// CHECK-SAME:      %[[OK:[^:]*]]: i1, %[[V:[^:]*]]: i64, %[[B:[^:]*]]: i64, %[[S:[^:]*]]: memref<3xi64>)
// CHECK-NEXT:    memory.check %[[OK]], %[[V]], %[[B]], %[[S]] {code = 2 : i64, message = "label {value} is out of range for {bound} classes"} : memref<3xi64>
// GENERIC-LABEL: sym_name = "check"
// GENERIC:       "memory.check"(%arg0, %arg1, %arg2, %arg3) <{code = 2 : i64, message = "label {value} is out of range for {bound} classes"}> : (i1, i64, i64, memref<3xi64>) -> ()
func.func @check(%ok: i1, %v: i64, %b: i64, %s: memref<3xi64>) {
  memory.check %ok, %v, %b, %s {code = 2 : i64, message = "label {value} is out of range for {bound} classes"} : memref<3xi64>
  return
}
