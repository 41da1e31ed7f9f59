// RUN: irkit-opt %s -p memory-forward-stores --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(memory-forward-stores))' --allow-unregistered-dialect | FileCheck %s

// A load of what the block stored before is the stored value; a second load of an element
// is the first load's value.
// CHECK-LABEL: func.func @store_then_load(
// CHECK-SAME:      %[[M:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[X:.*]]: f32)
// CHECK-NEXT:    memory.store %[[X]], %[[M]][%[[I]]] : memref<?xf32>
// CHECK-NEXT:    %[[J:.*]] = arith.addi %[[I]], %[[I]] : index
// CHECK-NEXT:    %[[L:.*]] = memory.load %[[M]][%[[J]]] : memref<?xf32>
// CHECK-NEXT:    return %[[X]], %[[L]], %[[L]] : f32, f32, f32
func.func @store_then_load(%m: memref<?xf32>, %i: index, %x: f32) -> (f32, f32, f32) {
  memory.store %x, %m[%i] : memref<?xf32>
  %a = memory.load %m[%i] : memref<?xf32>
  %j = arith.addi %i, %i : index
  %b = memory.load %m[%j] : memref<?xf32>
  %c = memory.load %m[%j] : memref<?xf32>
  return %a, %b, %c : f32, f32, f32
}

// A row of 10 as a vector of 8 and one of 2: the stores to columns [0, 8) and [8, 10) are
// apart, as are the stores to other allocations and to the function's arguments, so both
// reloads are forwarded. Constant indices are compared by value.
// CHECK-LABEL: func.func @row_of_two_vectors(
// CHECK-SAME:      %[[OUT:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[A:.*]]: vector<8xf32>, %[[B:.*]]: vector<2xf32>, %[[S:.*]]: f32)
// CHECK:         %[[ROW:.*]] = memory.alloc
// CHECK:         %[[MAX:.*]] = memory.alloc
// CHECK-NEXT:    memory.vector_store %[[A]], %[[ROW]][%[[I]], %{{.*}}] : memref<?x10xf32>, vector<8xf32>
// CHECK-NEXT:    memory.vector_store %[[B]], %[[ROW]][%[[I]], %{{.*}}] : memref<?x10xf32>, vector<2xf32>
// CHECK-NEXT:    memory.store %[[S]], %[[MAX]][%[[I]]] : memref<?xf32>
// CHECK-NEXT:    memory.store %[[S]], %[[OUT]][%[[I]]] : memref<?xf32>
// CHECK-NOT:     memory.vector_load
// CHECK:         return %[[A]], %[[B]] : vector<8xf32>, vector<2xf32>
func.func @row_of_two_vectors(%out: memref<?xf32>, %i: index, %a: vector<8xf32>,
                              %b: vector<2xf32>, %s: f32) -> (vector<8xf32>, vector<2xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %row = memory.alloc(%i) : memref<?x10xf32>
  %max = memory.alloc(%i) : memref<?xf32>
  memory.vector_store %a, %row[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  memory.vector_store %b, %row[%i, %c8] : memref<?x10xf32>, vector<2xf32>
  memory.store %s, %max[%i] : memref<?xf32>
  memory.store %s, %out[%i] : memref<?xf32>
  %c0b = arith.constant 0 : index
  %x = memory.vector_load %row[%i, %c0b] : memref<?x10xf32>, vector<8xf32>
  %y = memory.vector_load %row[%i, %c8] : memref<?x10xf32>, vector<2xf32>
  return %x, %y : vector<8xf32>, vector<2xf32>
}

// Stores that may touch the element forget it: one that overlaps (columns [4, 6) of
// [0, 8)), one at an index that is not a constant, one through a view of the same
// buffer.
// CHECK-LABEL: func.func @overlaps_forget(
// CHECK-COUNT-3: memory.vector_load
// CHECK-NOT:     memory.vector_load
// CHECK:         return
func.func @overlaps_forget(%m: memref<?x10xf32>, %i: index, %j: index, %a: vector<8xf32>,
                           %b: vector<2xf32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  memory.vector_store %a, %m[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  memory.vector_store %b, %m[%i, %c4] : memref<?x10xf32>, vector<2xf32>
  %x = memory.vector_load %m[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  memory.vector_store %a, %m[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  memory.vector_store %b, %m[%i, %j] : memref<?x10xf32>, vector<2xf32>
  %y = memory.vector_load %m[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  %s = memory.subview %m[0, 0][%i, 10][1, 1] : memref<?x10xf32> to memref<?x10xf32, strided<[10, 1]>>
  memory.vector_store %b, %s[%i, %c4] : memref<?x10xf32, strided<[10, 1]>>, vector<2xf32>
  %z = memory.vector_load %m[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  return %x, %y, %z : vector<8xf32>, vector<8xf32>, vector<8xf32>
}

// Columns apart by their constants are not apart where the last stride is not 1: with a
// stride of 0 every column is the same element.
// CHECK-LABEL: func.func @not_unit_stride(
// CHECK:         %[[X:.*]] = memory.load
// CHECK:         return %[[X]]
func.func @not_unit_stride(%m: memref<4x4xf32, strided<[4, 0]>>, %i: index, %a: f32,
                           %b: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memory.store %a, %m[%i, %c0] : memref<4x4xf32, strided<[4, 0]>>
  memory.store %b, %m[%i, %c1] : memref<4x4xf32, strided<[4, 0]>>
  %x = memory.load %m[%i, %c0] : memref<4x4xf32, strided<[4, 0]>>
  return %x : f32
}

// A store overwritten before anything may read it is erased; one read in between stays.
// CHECK-LABEL: func.func @dead_stores(
// CHECK-SAME:      %[[M:.*]]: memref<4xf32>, %[[N:.*]]: memref<4xf32>, %[[I:.*]]: index, %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-NEXT:    memory.store %[[A]], %[[M]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    memory.copy %[[M]], %[[N]]
// CHECK-NEXT:    memory.store %[[B]], %[[M]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    return
func.func @dead_stores(%m: memref<4xf32>, %n: memref<4xf32>, %i: index, %a: f32, %b: f32) {
  memory.store %b, %m[%i] : memref<4xf32>
  memory.store %a, %m[%i] : memref<4xf32>
  memory.copy %m, %n : memref<4xf32> to memref<4xf32>
  memory.store %b, %m[%i] : memref<4xf32>
  return
}

// An op whose effects are unknown forgets everything; a loop that writes the buffer forgets
// it; a loop that writes another buffer does not. A nested block starts from nothing.
// CHECK-LABEL: func.func @ops_between(
// CHECK:         "test.anything"()
// CHECK-NEXT:    %[[A:.*]] = memory.load
// CHECK:         loop.for
// CHECK:           memory.load
// CHECK:         }
// CHECK-NEXT:    %[[B:.*]] = memory.load
// CHECK:         loop.for
// CHECK:         }
// CHECK-NEXT:    return %[[A]], %[[B]], %[[B]] : f32, f32, f32
func.func @ops_between(%m: memref<4xf32>, %n: memref<4xf32>, %i: index, %x: f32)
    -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  memory.store %x, %m[%i] : memref<4xf32>
  "test.anything"() : () -> ()
  %a = memory.load %m[%i] : memref<4xf32>
  loop.for %k = %c0 to %c4 step %c1 {
    %v = memory.load %m[%i] : memref<4xf32>
    memory.store %v, %m[%k] : memref<4xf32>
  }
  %b = memory.load %m[%i] : memref<4xf32>
  loop.for %k = %c0 to %c4 step %c1 {
    memory.store %x, %n[%k] : memref<4xf32>
  }
  %c = memory.load %m[%i] : memref<4xf32>
  return %a, %b, %c : f32, f32, f32
}
