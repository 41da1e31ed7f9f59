// RUN: irkit-opt %s -p canonicalize --allow-unregistered-dialect | FileCheck %s

// memory.dim folds to a constant for a static size and to the size operand of the op that
// made the buffer for a dynamic one. A buffer only written and freed is erased with its
// writes; an unused load is dead; a copy onto itself copies nothing. The pure ops (dim, view,
// subview) are erased when unused; stores, copies and deallocs stay.

// CHECK-LABEL: func.func @dim_static(
// CHECK-SAME:      %[[M:.*]]: memref<?x4xf32>) -> index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    return %[[C4]] : index
func.func @dim_static(%m: memref<?x4xf32>) -> index {
  %d = memory.dim %m, 1 : memref<?x4xf32>
  return %d : index
}

// A dynamic size of an argument is only known at run time.
// CHECK-LABEL: func.func @dim_argument(
// CHECK-NEXT:    %[[D:.*]] = memory.dim %{{.*}}, 0 : memref<?x4xf32>
// CHECK-NEXT:    return %[[D]] : index
func.func @dim_argument(%m: memref<?x4xf32>) -> index {
  %d = memory.dim %m, 0 : memref<?x4xf32>
  return %d : index
}

// CHECK-LABEL: func.func @dim_alloc(
// CHECK-SAME:      %[[N0:.*]]: index, %[[N1:.*]]: index)
// CHECK-NEXT:    %[[A:.*]] = memory.alloc(%[[N0]], %[[N1]]) : memref<?x4x?xf32>
// CHECK-NEXT:    "test.use"(%[[A]]) : (memref<?x4x?xf32>) -> ()
// CHECK-NEXT:    return %[[N0]], %[[N1]] : index, index
func.func @dim_alloc(%n0: index, %n1: index) -> (index, index) {
  %a = memory.alloc(%n0, %n1) : memref<?x4x?xf32>
  "test.use"(%a) : (memref<?x4x?xf32>) -> ()
  %d0 = memory.dim %a, 0 : memref<?x4x?xf32>
  %d2 = memory.dim %a, 2 : memref<?x4x?xf32>
  return %d0, %d2 : index, index
}

// CHECK-LABEL: func.func @dim_arena_view_subview(
// CHECK-SAME:      %[[B:.*]]: index, %[[O:.*]]: index, %[[N:.*]]: index, %[[K:.*]]: index)
// CHECK-NOT:     memory.dim
// CHECK:         return %[[B]], %[[N]], %[[K]] : index, index, index
func.func @dim_arena_view_subview(%bytes: index, %o: index, %n: index, %k: index)
    -> (index, index, index) {
  %a = memory.arena(%bytes) : memref<?xi8>
  %v = memory.view %a[%o][%n] : memref<?xi8> to memref<?x4xf32>
  %s = memory.subview %v[0, 0][%k, 2][1, 2] : memref<?x4xf32> to memref<?x2xf32, strided<[4, 2]>>
  "test.use"(%s) : (memref<?x2xf32, strided<[4, 2]>>) -> ()
  %d0 = memory.dim %a, 0 : memref<?xi8>
  %d1 = memory.dim %v, 0 : memref<?x4xf32>
  %d2 = memory.dim %s, 0 : memref<?x2xf32, strided<[4, 2]>>
  return %d0, %d1, %d2 : index, index, index
}

// CHECK-LABEL: func.func @dead_alloc(
// CHECK-NEXT:    return
func.func @dead_alloc(%x: f32, %v: vector<4xf32>, %src: memref<4x4xf32>, %i: index) {
  %a = memory.alloc() : memref<4x4xf32>
  memory.store %x, %a[%i, %i] : memref<4x4xf32>
  memory.vector_store %v, %a[%i, %i] : memref<4x4xf32>, vector<4xf32>
  memory.copy %src, %a : memref<4x4xf32> to memref<4x4xf32>
  memory.dealloc %a : memref<4x4xf32>
  return
}

// A buffer that is read, or escapes through a view, stays.
// CHECK-LABEL: func.func @live_alloc(
// CHECK:         memory.alloc
// CHECK:         memory.store
// CHECK:         memory.load
// CHECK:         memory.dealloc
// CHECK:         memory.arena
// CHECK:         memory.view
// CHECK:         "test.use"
// CHECK:         memory.dealloc
func.func @live_alloc(%x: f32, %i: index) -> f32 {
  %a = memory.alloc() : memref<4xf32>
  memory.store %x, %a[%i] : memref<4xf32>
  %y = memory.load %a[%i] : memref<4xf32>
  memory.dealloc %a : memref<4xf32>
  %b = memory.arena() : memref<64xi8>
  %c0 = arith.constant 0 : index
  %v = memory.view %b[%c0][] : memref<64xi8> to memref<16xf32>
  "test.use"(%v) : (memref<16xf32>) -> ()
  memory.dealloc %b : memref<64xi8>
  return %y : f32
}

// An alloc whose address escapes into an opaque op is not dead either.
// CHECK-LABEL: func.func @escaping_alloc(
// CHECK:         memory.alloc
// CHECK:         memory.store
// CHECK:         "test.use"
func.func @escaping_alloc(%x: f32, %i: index) {
  %a = memory.alloc() : memref<4xf32>
  memory.store %x, %a[%i] : memref<4xf32>
  "test.use"(%a) : (memref<4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @unused_reads(
// CHECK-SAME:      %[[M:.*]]: memref<?x8xf32>
// CHECK-NOT:     memory.load
// CHECK-NOT:     memory.vector_load
// CHECK-NOT:     memory.view
// CHECK-NOT:     memory.subview
// CHECK-NOT:     memory.dim
// CHECK:         memory.store
// CHECK-NEXT:    return
func.func @unused_reads(%m: memref<?x8xf32>, %a: memref<128xi8>, %i: index, %x: f32) {
  %0 = memory.load %m[%i, %i] : memref<?x8xf32>
  %1 = memory.vector_load %m[%i, %i] : memref<?x8xf32>, vector<8xf32>
  %2 = memory.view %a[%i][] : memref<128xi8> to memref<4xf32>
  %3 = memory.subview %m[0, 0][2, 2][1, 1] : memref<?x8xf32> to memref<2x2xf32, strided<[8, 1]>>
  %4 = memory.dim %m, 0 : memref<?x8xf32>
  memory.store %x, %m[%i, %i] : memref<?x8xf32>
  return
}

// CHECK-LABEL: func.func @self_copy(
// CHECK-SAME:      %[[M:.*]]: memref<4xf32>, %[[N:.*]]: memref<4xf32>)
// CHECK-NEXT:    memory.copy %[[M]], %[[N]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    return
func.func @self_copy(%m: memref<4xf32>, %n: memref<4xf32>) {
  memory.copy %m, %m : memref<4xf32> to memref<4xf32>
  memory.copy %m, %n : memref<4xf32> to memref<4xf32>
  return
}

// Loads are not pure: two loads of one place around a store are not merged.
// RUN: irkit-opt %s -p cse --allow-unregistered-dialect | FileCheck %s --check-prefix=CSE
// CSE-LABEL: func.func @no_cse_across_store(
// CSE:           memory.load
// CSE-NEXT:      memory.store
// CSE-NEXT:      memory.load
// CSE-LABEL: func.func @dim_cse(
// CSE:           memory.dim
// CSE-NOT:       memory.dim
// CSE:           return
func.func @no_cse_across_store(%m: memref<4xf32>, %i: index, %x: f32) -> (f32, f32) {
  %a = memory.load %m[%i] : memref<4xf32>
  memory.store %x, %m[%i] : memref<4xf32>
  %b = memory.load %m[%i] : memref<4xf32>
  return %a, %b : f32, f32
}

func.func @dim_cse(%m: memref<?xf32>) -> (index, index) {
  %a = memory.dim %m, 0 : memref<?xf32>
  %b = memory.dim %m, 0 : memref<?xf32>
  return %a, %b : index, index
}

// A check of the constant true records nothing and is erased; one of a run-time condition
// (or of the constant false) stays, even though nothing reads the status afterwards.
// CHECK-LABEL: func.func @check_true(
// CHECK-SAME:      %[[OK:[^:]*]]: i1, %[[V:[^:]*]]: i64, %[[S:[^:]*]]: memref<3xi64>)
// CHECK-NOT:     memory.check {{.*}}code = 1
// CHECK:         memory.check %[[OK]], %[[V]], %[[V]], %[[S]] {code = 2 : i64
// CHECK-NEXT:    memory.check %{{.*}}, %[[V]], %[[V]], %[[S]] {code = 3 : i64
// CHECK-NEXT:    return
func.func @check_true(%ok: i1, %v: i64, %s: memref<3xi64>) {
  %t = arith.constant true
  %f = arith.constant false
  memory.check %t, %v, %v, %s {code = 1 : i64, message = "never"} : memref<3xi64>
  memory.check %ok, %v, %v, %s {code = 2 : i64, message = "maybe"} : memref<3xi64>
  memory.check %f, %v, %v, %s {code = 3 : i64, message = "always"} : memref<3xi64>
  return
}
