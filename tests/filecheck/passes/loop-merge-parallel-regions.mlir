// RUN: irkit-opt %s -p loop-merge-parallel-regions | FileCheck %s

// Consecutive parallel loops of a function go into one `omp.parallel` (one team, a barrier
// between the loops). The pure code between them and the allocations move before the
// region, the deallocations after it; code that touches memory ends a run; a lone loop is
// left alone.

// CHECK-LABEL: func.func @two_loops(
// CHECK-SAME:      %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK:         %[[M:.*]] = arith.addi %[[N]], %[[N]] : index
// CHECK-NEXT:    %[[T:.*]] = memory.alloc(%[[M]]) : memref<?xf32>
// CHECK-NEXT:    omp.parallel {
// CHECK-NEXT:      loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK:           }
// CHECK-NEXT:      loop.parallel (%{{.*}}) = (%{{.*}}) to (%[[M]])
// CHECK:           }
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    memory.dealloc %[[T]] : memref<?xf32>
// CHECK-NEXT:    return
func.func @two_loops(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memory.load %a[%i] : memref<?xf32>
    memory.store %x, %b[%i] : memref<?xf32>
  }
  %m = arith.addi %n, %n : index
  %t = memory.alloc(%m) : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%m) step (%c1) {
    %x = memory.load %b[%c0] : memref<?xf32>
    memory.store %x, %t[%i] : memref<?xf32>
  }
  memory.dealloc %t : memref<?xf32>
  return
}

// A store between two loops runs once, on the calling thread: it splits the run, and each
// loop alone is left as it is.
// CHECK-LABEL: func.func @store_between(
// CHECK-NOT:     omp.parallel
// CHECK:         loop.parallel
// CHECK:         memory.store
// CHECK:         loop.parallel
// CHECK-NOT:     omp.parallel
// CHECK:         return
func.func @store_between(%a: memref<?xf32>, %n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    memory.store %v, %a[%i] : memref<?xf32>
  }
  memory.store %v, %a[%c0] : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    memory.store %v, %a[%i] : memref<?xf32>
  }
  return
}

// A BLIS-like loop over K blocks, a packing and a compute loop in each: every thread counts
// the blocks, the team splits each block's loops. Alone it is still worth a region (two
// loops a block). A sequential loop that stores is no member: it stays outside.
// CHECK-LABEL: func.func @k_blocks(
// CHECK:         omp.parallel {
// CHECK-NEXT:      loop.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[KB:.*]] = arith.minsi
// CHECK-NEXT:        loop.parallel
// CHECK:             loop.parallel
// CHECK:             }
// CHECK-NEXT:      }
// CHECK-NEXT:      omp.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for
// CHECK-NOT:     omp.parallel
// CHECK:         return
func.func @k_blocks(%a: memref<?xf32>, %p: memref<64xf32>, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %pc = %c0 to %k step %c64 {
    %kb = arith.minsi %c64, %k : index
    loop.parallel (%i) = (%c0) to (%kb) step (%c1) {
      %x = memory.load %a[%i] : memref<?xf32>
      memory.store %x, %p[%i] : memref<64xf32>
    }
    loop.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memory.load %p[%c0] : memref<64xf32>
      memory.store %x, %a[%i] : memref<?xf32>
    }
  }
  loop.for %i = %c0 to %n step %c1 {
    %x = memory.load %a[%i] : memref<?xf32>
    memory.store %x, %a[%c0] : memref<?xf32>
  }
  return
}

// One parallel loop forks once anyway: nothing to merge.
// CHECK-LABEL: func.func @one_loop(
// CHECK-NOT:     omp.parallel
// CHECK:         return
func.func @one_loop(%a: memref<?xf32>, %n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    memory.store %v, %a[%i] : memref<?xf32>
  }
  return
}
