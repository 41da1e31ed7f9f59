// RUN: not irkit-opt %s --split-input-file 2>&1 | FileCheck %s

// Every thread of the team runs the code between the loops: it must not write shared memory,
// nor read it after a worksharing loop, nor may a worksharing loop write a private buffer.

func.func @store_in_region(%a: memref<?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  omp.parallel {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'memory.store' op cannot run on every thread of an 'omp.parallel' team: it has memory effects on shared memory outside a 'loop.parallel' (move it out of the region, or make the buffer private: allocated in the region)
    memory.store %v, %a[%c0] : memref<?xf32>
    omp.terminator
  }
  return
}

// -----

func.func @store_in_shared_loop(%a: memref<?xf32>, %v: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    loop.for %k = %c0 to %n step %c1 {
      // CHECK: invalid.mlir:[[# @LINE + 1]]:7: error: 'memory.store' op cannot run on every thread
      memory.store %v, %a[%k] : memref<?xf32>
    }
    omp.terminator
  }
  return
}

// -----

func.func @read_after_a_worksharing_loop(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = arith.constant 1.0 : f32
  omp.parallel {
    loop.parallel (%i) = (%c0) to (%n) step (%c1) {
      memory.store %p, %a[%i] : memref<?xf32>
    }
    // CHECK: invalid.mlir:[[# @LINE + 1]]:10: error: 'memory.load' op cannot run on every thread
    %x = memory.load %a[%c0] : memref<?xf32>
    omp.terminator
  }
  return
}

// -----

func.func @private_written_by_the_team(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = arith.constant 1.0 : f32
  omp.parallel {
    %t = memory.alloca() : memref<64xf32>
    loop.parallel (%i) = (%c0) to (%n) step (%c1) {
      // CHECK: invalid.mlir:[[# @LINE + 1]]:7: error: 'memory.store' op writes a private buffer of its 'omp.parallel' team in a worksharing 'loop.parallel' (each thread would fill only its own chunk of its own copy)
      memory.store %p, %t[%i] : memref<64xf32>
    }
    omp.terminator
  }
  return
}

// -----

func.func @nested(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    // CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'omp.parallel' op cannot be nested in 'loop.parallel' (one level of threads)
    omp.parallel {
      omp.terminator
    }
  }
  return
}

// -----

func.func @stray_terminator() {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'omp.terminator' op expects parent op 'omp.parallel'
  omp.terminator
}
