// RUN: irkit-opt %s -p canonicalize --split-input-file | FileCheck %s

// A team region whose one worksharing loop runs once: the loop's body is inlined, and the
// region, left without a loop to split, is its code run once where it stands (its private
// buffer a stack slot of the function).

// CHECK-LABEL: func.func @single_trip(
// CHECK-SAME:      %[[A:[^:]*]]: memref<4xf32>, %[[B:[^:]*]]: memref<4xf32>)
// CHECK-NOT:     omp.
// CHECK:         %[[T:.*]] = memory.alloca() : memref<4xf32>
// CHECK:         memory.copy %[[A]], %[[T]]
// CHECK-NEXT:    %[[X:.*]] = memory.load %[[T]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT:    memory.store %[[X]], %[[B]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT:    return
func.func @single_trip(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    %t = memory.alloca() : memref<4xf32>
    memory.copy %a, %t : memref<4xf32> to memref<4xf32>
    loop.parallel (%i) = (%c0) to (%c1) step (%c1) {
      %x = memory.load %t[%i] : memref<4xf32>
      memory.store %x, %b[%i] : memref<4xf32>
    }
    omp.terminator
  }
  return
}

// -----

// A region with a loop to split stays.

// CHECK-LABEL: func.func @kept(
// CHECK:         omp.parallel {
// CHECK-NEXT:      loop.parallel
// CHECK:           omp.terminator
func.func @kept(%b: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    loop.parallel (%i) = (%c0) to (%n) step (%c1) {
      memory.store %one, %b[%i] : memref<?xf32>
    }
    omp.terminator
  }
  return
}
