// RUN: irkit-opt %s -p 'loop-reduction-interchange{run-bytes=128 remarks=true}' 2>/dev/null | FileCheck %s
// RUN: irkit-opt %s -p 'loop-reduction-interchange{run-bytes=128 remarks=true}' --verify-diagnostics

// A bias gradient with a ReLU mask: db[j] += dz[i, j] where z[i, j] > 0, dz stored too.
// Runs of 128 bytes (two vectors of 16 floats) split the 256 columns; each run walks the
// rows, its sums loaded from db and stored back at every row.
// CHECK-LABEL: func.func @column_sums(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK:         %[[N:.*]] = memory.dim %arg0, 0
// CHECK-NEXT:    loop.parallel (%[[JJ:.*]]) = (%[[C0]]) to (%[[C256]]) step (%[[C32]]) {
// CHECK-NEXT:      %[[END:.*]] = arith.addi %[[JJ]], %[[C32]] : index
// CHECK-NEXT:      loop.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT:        loop.parallel (%[[J:.*]]) = (%[[JJ]]) to (%[[END]]) step (%[[C16]]) {
// CHECK-NEXT:          %[[ACC:.*]] = memory.vector_load %arg2[%[[J]]] : memref<256xf64>, vector<16xf64>
// CHECK-NEXT:          %[[Z:.*]] = memory.vector_load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[D:.*]] = memory.vector_load %arg1[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[POS:.*]] = arith.cmpf ogt, %[[Z]],
// CHECK-NEXT:          %[[DZ:.*]] = arith.select %[[POS]], %[[D]],
// CHECK-NEXT:          %[[WIDE:.*]] = arith.extf %[[DZ]]
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[ACC]], %[[WIDE]] : vector<16xf64>
// CHECK-NEXT:          memory.vector_store %[[DZ]], %arg3[%[[I]], %[[J]]]
// CHECK-NEXT:          memory.vector_store %[[NEW]], %arg2[%[[J]]] : memref<256xf64>, vector<16xf64>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @column_sums(%z: memref<?x256xf32>, %dh: memref<?x256xf32>, %db: memref<256xf64>,
                       %dz: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.000000e+00> : vector<16xf32>
  %n = memory.dim %z, 0 : memref<?x256xf32>
  loop.parallel (%j) = (%c0) to (%c256) step (%c16) {
    %init = memory.vector_load %db[%j] : memref<256xf64>, vector<16xf64>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (vector<16xf64>) {
      %x = memory.vector_load %z[%i, %j] : memref<?x256xf32>, vector<16xf32>
      %d = memory.vector_load %dh[%i, %j] : memref<?x256xf32>, vector<16xf32>
      %pos = arith.cmpf ogt, %x, %zero : vector<16xf32>
      %v = arith.select %pos, %d, %zero : vector<16xi1>, vector<16xf32>
      %w = arith.extf %v : vector<16xf32> to vector<16xf64>
      %s = arith.addf %acc, %w : vector<16xf64>
      memory.vector_store %v, %dz[%i, %j] : memref<?x256xf32>, vector<16xf32>
      loop.yield %s : vector<16xf64>
    }
    memory.vector_store %r, %db[%j] : memref<256xf64>, vector<16xf64>
  }
  return
}

// Scalar sums over columns whose count is known at run time only: the run is cut at it.
// CHECK-LABEL: func.func @dynamic_columns(
// CHECK:         loop.parallel (%[[JJ:.*]]) = (%{{.*}}) to (%[[M:.*]]) step (%[[C32:.*]]) {
// CHECK-NEXT:      %[[ADD:.*]] = arith.addi %[[JJ]], %[[C32]] : index
// CHECK-NEXT:      %[[END:.*]] = arith.minsi %[[ADD]], %[[M]] : index
// CHECK-NEXT:      loop.for %[[I:.*]] =
// CHECK-NEXT:        loop.parallel (%[[J:.*]]) = (%[[JJ]]) to (%[[END]]) step (%{{.*}}) {
// CHECK-NEXT:          memory.load %arg1[%[[J]]] : memref<?xf32>
// CHECK-NEXT:          memory.load %arg0[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:          arith.addf
// CHECK-NEXT:          memory.store
func.func @dynamic_columns(%a: memref<?x?xf32>, %sums: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.parallel (%j) = (%c0) to (%m) step (%c1) {
    %init = memory.load %sums[%j] : memref<?xf32>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memory.load %a[%i, %j] : memref<?x?xf32>
      %s = arith.addf %acc, %x : f32
      loop.yield %s : f32
    }
    memory.store %r, %sums[%j] : memref<?xf32>
  }
  return
}

// Row sums walk along the rows already.
// CHECK-LABEL: func.func @row_sums(
// CHECK:         loop.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      memory.load %arg1[%[[I]]]
// CHECK-NEXT:      loop.for
func.func @row_sums(%a: memref<?x256xf32>, %sums: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = memory.dim %a, 0 : memref<?x256xf32>
  // expected-remark @+1 {{reduction not interchanged: the reduction loop walks no buffer down its columns}}
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %init = memory.load %sums[%i] : memref<?xf32>
    %r = loop.for %j = %c0 to %c256 step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memory.load %a[%i, %j] : memref<?x256xf32>
      %s = arith.addf %acc, %x : f32
      loop.yield %s : f32
    }
    memory.store %r, %sums[%i] : memref<?xf32>
  }
  return
}

// Rows of 16 floats (64 bytes) are within one run of 128: the walk is in order already.
// CHECK-LABEL: func.func @one_run(
// CHECK:         loop.parallel
// CHECK-NEXT:      memory.vector_load %arg1
// CHECK-NEXT:      loop.for
func.func @one_run(%a: memref<?x16xf32>, %sums: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?x16xf32>
  // expected-remark @+1 {{reduction not interchanged: a row is one run already}}
  loop.parallel (%j) = (%c0) to (%c16) step (%c16) {
    %init = memory.vector_load %sums[%j] : memref<16xf32>, vector<16xf32>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (vector<16xf32>) {
      %x = memory.vector_load %a[%i, %j] : memref<?x16xf32>, vector<16xf32>
      %s = arith.addf %acc, %x : vector<16xf32>
      loop.yield %s : vector<16xf32>
    }
    memory.vector_store %r, %sums[%j] : memref<16xf32>, vector<16xf32>
  }
  return
}

// The loop reads the sums' buffer: the running sum in memory would be seen.
// CHECK-LABEL: func.func @reads_its_sums(
// CHECK:         loop.parallel
// CHECK-NEXT:      memory.load %arg1
// CHECK-NEXT:      loop.for
func.func @reads_its_sums(%a: memref<?x64xf32>, %sums: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memory.dim %a, 0 : memref<?x64xf32>
  // expected-remark @+1 {{reduction not interchanged: the reduction loop touches a sum's buffer}}
  loop.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %init = memory.load %sums[%j] : memref<64xf32>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memory.load %a[%i, %j] : memref<?x64xf32>
      %y = memory.load %sums[%c0] : memref<64xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      loop.yield %s : f32
    }
    memory.store %r, %sums[%j] : memref<64xf32>
  }
  return
}

// The sum is stored somewhere else than its init was loaded from.
// CHECK-LABEL: func.func @moved_sums(
// CHECK:         loop.parallel
// CHECK-NEXT:      memory.load %arg1
// CHECK-NEXT:      loop.for
func.func @moved_sums(%a: memref<?x64xf32>, %init_sums: memref<64xf32>,
                      %sums: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memory.dim %a, 0 : memref<?x64xf32>
  // expected-remark @+1 {{reduction not interchanged: a carried value is not stored where its init was loaded}}
  loop.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %init = memory.load %init_sums[%j] : memref<64xf32>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memory.load %a[%i, %j] : memref<?x64xf32>
      %s = arith.addf %acc, %x : f32
      loop.yield %s : f32
    }
    memory.store %r, %sums[%j] : memref<64xf32>
  }
  return
}

// A load before the loop that is not an init would be read at every row instead of once.
// CHECK-LABEL: func.func @other_load(
// CHECK:         loop.parallel
// CHECK-NEXT:      memory.load %arg1
// CHECK-NEXT:      memory.load %arg2
// CHECK-NEXT:      loop.for
func.func @other_load(%a: memref<?x64xf32>, %sums: memref<64xf32>, %scale: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memory.dim %a, 0 : memref<?x64xf32>
  // expected-remark @+1 {{reduction not interchanged: 'memory.load' before the reduction loop touches memory}}
  loop.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %init = memory.load %sums[%j] : memref<64xf32>
    %k = memory.load %scale[%j] : memref<64xf32>
    %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %x = memory.load %a[%i, %j] : memref<?x64xf32>
      %p = arith.mulf %x, %k : f32
      %s = arith.addf %acc, %p : f32
      loop.yield %s : f32
    }
    memory.store %r, %sums[%j] : memref<64xf32>
  }
  return
}

// Two sums in one buffer: row by row, one's store would be what the other loads next.
// CHECK-LABEL: func.func @shared_buffer(
// CHECK:         loop.parallel
// CHECK-NEXT:      memory.load %arg1
// CHECK-NEXT:      memory.load %arg1
// CHECK-NEXT:      loop.for
func.func @shared_buffer(%a: memref<?x64xf32>, %sums: memref<2x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memory.dim %a, 0 : memref<?x64xf32>
  // expected-remark @+1 {{reduction not interchanged: two sums share a buffer}}
  loop.parallel (%j) = (%c0) to (%c64) step (%c1) {
    %i0 = memory.load %sums[%c0, %j] : memref<2x64xf32>
    %i1 = memory.load %sums[%c1, %j] : memref<2x64xf32>
    %r:2 = loop.for %i = %c0 to %n step %c1 iter_args(%p = %i0, %q = %i1) -> (f32, f32) {
      %x = memory.load %a[%i, %j] : memref<?x64xf32>
      %s = arith.addf %p, %x : f32
      %t = arith.mulf %q, %x : f32
      loop.yield %s, %t : f32, f32
    }
    memory.store %r#0, %sums[%c0, %j] : memref<2x64xf32>
    memory.store %r#1, %sums[%c1, %j] : memref<2x64xf32>
  }
  return
}
