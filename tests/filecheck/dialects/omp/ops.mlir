// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A team region in custom and generic form: the loops in it and the pure code between them
// (here inside a loop.for every thread runs), ended by an explicit omp.terminator.

// CHECK-LABEL: func.func @region(
// CHECK-SAME:      %[[A:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK:         omp.parallel {
// CHECK-NEXT:      loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK:           }
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:        %[[H:.*]] = arith.divui %[[N]], %{{.*}} : index
// CHECK-NEXT:        loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[H]]) step (%{{.*}}) {
// CHECK:         omp.terminator
// CHECK-NEXT:    }
// GENERIC:       "omp.parallel"() ({
// GENERIC:         "omp.terminator"() : () -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @region(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    loop.parallel (%i) = (%c0) to (%n) step (%c1) {
      memory.store %one, %a[%i] : memref<?xf32>
    }
    loop.for %k = %c0 to %n step %c1 {
      %h = arith.divui %n, %c2 : index
      loop.parallel (%i) = (%c0) to (%h) step (%c1) {
        %x = memory.load %a[%i] : memref<?xf32>
        memory.store %x, %a[%h] : memref<?xf32>
      }
    }
    omp.terminator
  }
  return
}

// A private buffer: every thread allocates its own, fills it from shared memory before the
// first worksharing loop, and the loop reads it.

// CHECK-LABEL: func.func @private(
// CHECK:         omp.parallel {
// CHECK-NEXT:      %[[T:.*]] = memory.alloca() : memref<4xf32>
// CHECK-NEXT:      loop.for
// CHECK-NEXT:        %[[X:.*]] = memory.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        memory.store %[[X]], %[[T]][%{{.*}}] : memref<4xf32>
// CHECK:           loop.parallel
// CHECK-NEXT:        %{{.*}} = memory.load %[[T]][%{{.*}}] : memref<4xf32>
func.func @private(%a: memref<?xf32>, %b: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  omp.parallel {
    %t = memory.alloca() : memref<4xf32>
    loop.for %k = %c0 to %c4 step %c1 {
      %x = memory.load %a[%k] : memref<?xf32>
      memory.store %x, %t[%k] : memref<4xf32>
    }
    loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
      %y = memory.load %t[%j] : memref<4xf32>
      memory.store %y, %b[%i, %j] : memref<?x4xf32>
    }
    omp.terminator
  }
  return
}
