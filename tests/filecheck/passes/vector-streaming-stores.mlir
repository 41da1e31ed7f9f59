// RUN: irkit-opt %s -p 'vector-streaming-stores{min-bytes=1048576}' | FileCheck %s

// A 1-D parallel nest of symbolic size: versioned on the bytes it stores (64 per
// iteration) against min-bytes and on its contiguous run against min-run-bytes (4096 by
// default); the streaming copy is strip-mined into chunks of 256 KiB = 4096 iterations
// of 16 lanes (65536 elements), each ending in a fence; the else region is the nest as it
// was, ordinary stores.
// CHECK-LABEL: func.func @dynamic(
// CHECK-DAG:     %[[CHUNK:.*]] = arith.constant 65536 : index
// CHECK-DAG:     %[[MIN:.*]] = arith.constant 1048576 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[N:.*]] = memory.dim %arg0, 0
// CHECK:         %[[TRIPS:.*]] = arith.ceildivsi %[[N]], %[[C16]] : index
// CHECK:         %[[BIG:.*]] = arith.cmpi sge, %{{.*}}, %[[MIN]] : index
// CHECK:         %[[COND:.*]] = arith.andi %[[BIG]], %{{.*}} : i1
// CHECK:         loop.if %[[COND]] {
// CHECK-NEXT:      loop.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[CHUNK]]) {
// CHECK-NEXT:        %[[E:.*]] = arith.addi %[[T]], %[[CHUNK]] : index
// CHECK-NEXT:        %[[END:.*]] = arith.minsi %[[E]], %[[N]] : index
// CHECK-NEXT:        loop.parallel (%[[I:.*]]) = (%[[T]]) to (%[[END]]) step (%[[C16]]) {
// CHECK-NEXT:          %[[V:.*]] = memory.vector_load %arg0[%[[I]]]
// CHECK-NEXT:          memory.vector_store %[[V]], %arg1[%[[I]]] {nontemporal = true}
// CHECK-NEXT:        }
// CHECK-NEXT:        memory.fence
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      loop.parallel (%[[I2:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[C16]]) {
// CHECK-NEXT:        %[[V2:.*]] = memory.vector_load %arg0[%[[I2]]]
// CHECK-NOT:         nontemporal
// CHECK-NEXT:        memory.vector_store %[[V2]], %arg1[%[[I2]]] : memref<?xf32>, vector<16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NOT:     memory.fence
// CHECK:         return
func.func @dynamic(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c16) {
    %v = memory.vector_load %a[%i] : memref<?xf32>, vector<16xf32>
    memory.vector_store %v, %out[%i] : memref<?xf32>, vector<16xf32>
  }
  return
}

// 16 KiB, known statically, is below min-bytes: nothing changes, no byte count is left.
// CHECK-LABEL: func.func @static_small(
// CHECK-NOT:     arith.constant 64 :
// CHECK-NOT:     loop.if
// CHECK:         loop.parallel
// CHECK-NOT:     nontemporal
// CHECK-NOT:     memory.fence
// CHECK:         return
func.func @static_small(%a: memref<4096xf32>, %out: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c4096 = arith.constant 4096 : index
  loop.parallel (%i) = (%c0) to (%c4096) step (%c16) {
    %v = memory.vector_load %a[%i] : memref<4096xf32>, vector<16xf32>
    memory.vector_store %v, %out[%i] : memref<4096xf32>, vector<16xf32>
  }
  return
}

// 4 MiB, known statically, is above it: streamed without a run-time test; a row stores
// 4 KiB, so a chunk is 64 rows.
// CHECK-LABEL: func.func @static_large(
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C1024:.*]] = arith.constant 1024 : index
// CHECK-NOT:     loop.if
// CHECK:         loop.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[C1024]]) step (%[[C64]]) {
// CHECK-NEXT:      %[[E:.*]] = arith.addi %[[T]], %[[C64]] : index
// CHECK-NEXT:      %[[END:.*]] = arith.minsi %[[E]], %[[C1024]] : index
// CHECK-NEXT:      loop.parallel (%[[I:.*]], %[[J:.*]]) = (%[[T]], %{{[0-9]+}})
// CHECK-SAME:          to (%[[END]], %[[C1024]])
// CHECK-NEXT:        memory.vector_load
// CHECK-NEXT:        memory.vector_store %{{.*}}, %arg1[%[[I]], %[[J]]] {nontemporal = true}
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.fence
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @static_large(%a: memref<1024x1024xf32>, %out: memref<1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  loop.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c16) {
    %v = memory.vector_load %a[%i, %j] : memref<1024x1024xf32>, vector<16xf32>
    memory.vector_store %v, %out[%i, %j] : memref<1024x1024xf32>, vector<16xf32>
  }
  return
}

// A loop.for runs on the calling thread: one fence after it, no strip-mining.
// CHECK-LABEL: func.func @sequential(
// CHECK:         loop.if %{{.*}} {
// CHECK-NEXT:      loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        memory.vector_load
// CHECK-NEXT:        memory.vector_store %{{.*}}, %arg1[%[[I]]] {nontemporal = true}
// CHECK-SAME:          : memref<?xf32>, vector<8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.fence
// CHECK-NEXT:    } else {
// CHECK-NEXT:      loop.for
// CHECK-NEXT:        memory.vector_load
// CHECK-NEXT:        memory.vector_store %{{.*}}, %arg1[%{{.*}}] : memref<?xf32>, vector<8xf32>
func.func @sequential(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c8 {
    %v = memory.vector_load %a[%i] : memref<?xf32>, vector<8xf32>
    memory.vector_store %v, %out[%i] : memref<?xf32>, vector<8xf32>
  }
  return
}

// Each store of the inner loop writes another row: lines would be left half written by
// streaming stores, so the nest keeps ordinary ones.
// CHECK-LABEL: func.func @column_walk(
// CHECK-NOT:     loop.if
// CHECK-NOT:     nontemporal
// CHECK-NOT:     memory.fence
// CHECK:         return
func.func @column_walk(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.parallel (%j) = (%c0) to (%m) step (%c16) {
    loop.for %i = %c0 to %n step %c1 {
      %v = memory.vector_load %a[%i, %j] : memref<?x?xf32>, vector<16xf32>
      memory.vector_store %v, %out[%i, %j] : memref<?x?xf32>, vector<16xf32>
    }
  }
  return
}

// Rows of symbolic length: a chunk is max(1, 256 KiB / the bytes of a row) rows, computed
// in the streaming version.
// CHECK-LABEL: func.func @rows(
// CHECK-DAG:     %[[CB:.*]] = arith.constant 262144 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[N:.*]] = memory.dim %arg0, 0
// CHECK:         %[[M:.*]] = memory.dim %arg0, 1
// CHECK:         %[[ROWB:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         loop.if %{{.*}} {
// CHECK-NEXT:      %[[D:.*]] = arith.maxsi %[[ROWB]], %[[C1]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[CB]], %[[D]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.maxsi %[[Q]], %[[C1]] : index
// CHECK-NEXT:      %[[STEP:.*]] = arith.muli %{{.*}}, %[[R]] : index
// CHECK-NEXT:      loop.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[STEP]]) {
// CHECK:             loop.parallel (%{{.*}}, %{{.*}}) = (%[[T]], %{{.*}}) to (%{{.*}}, %[[M]])
// CHECK:               memory.vector_store {{.*}} {nontemporal = true}
// CHECK:             memory.fence
// CHECK:         } else {
func.func @rows(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c16) {
    %v = memory.vector_load %a[%i, %j] : memref<?x?xf32>, vector<16xf32>
    memory.vector_store %v, %out[%i, %j] : memref<?x?xf32>, vector<16xf32>
  }
  return
}

// The inner loop's bound is computed inside the nest, so its bytes cannot be counted
// before it: left alone.
// CHECK-LABEL: func.func @inner_bound(
// CHECK-NOT:     nontemporal
// CHECK-NOT:     memory.fence
// CHECK:         return
func.func @inner_bound(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %m = memory.dim %a, 1 : memref<?x?xf32>
    loop.for %j = %c0 to %m step %c16 {
      %v = memory.vector_load %a[%i, %j] : memref<?x?xf32>, vector<16xf32>
      memory.vector_store %v, %out[%i, %j] : memref<?x?xf32>, vector<16xf32>
    }
  }
  return
}

// A loop.parallel inside a loop.for is forked on every iteration, where no point ends a
// thread's share: left alone.
// CHECK-LABEL: func.func @parallel_in_for(
// CHECK-NOT:     nontemporal
// CHECK-NOT:     memory.fence
// CHECK:         return
func.func @parallel_in_for(%a: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.for %i = %c0 to %n step %c1 {
    loop.parallel (%j) = (%c0) to (%m) step (%c16) {
      %v = memory.vector_load %a[%i, %j] : memref<?x?xf32>, vector<16xf32>
      memory.vector_store %v, %out[%i, %j] : memref<?x?xf32>, vector<16xf32>
    }
  }
  return
}
// A loop.for that carries a sum as well as storing: the loop.if gives the sum of the version
// that ran, and its users read the loop.if's result.
// CHECK-LABEL: func.func @carried(
// CHECK:         %[[R:.*]] = loop.if %{{.*}} -> (vector<16xf32>) {
// CHECK-NEXT:      %[[S1:.*]] = loop.for %{{.*}} iter_args(%{{.*}}) -> (vector<16xf32>) {
// CHECK:             memory.vector_store {{.*}} {nontemporal = true}
// CHECK:           }
// CHECK-NEXT:      memory.fence
// CHECK-NEXT:      loop.yield %[[S1]] : vector<16xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[S2:.*]] = loop.for
// CHECK-NOT:         nontemporal
// CHECK:           }
// CHECK-NEXT:      loop.yield %[[S2]] : vector<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = vector.reduction <add>, %[[R]]
// CHECK-NEXT:    return %[[T]]
func.func @carried(%a: memref<?xf32>, %out: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %n = memory.dim %a, 0 : memref<?xf32>
  %s = loop.for %i = %c0 to %n step %c16 iter_args(%acc = %zero) -> (vector<16xf32>) {
    %v = memory.vector_load %a[%i] : memref<?xf32>, vector<16xf32>
    memory.vector_store %v, %out[%i] : memref<?xf32>, vector<16xf32>
    %next = arith.addf %acc, %v : vector<16xf32>
    loop.yield %next : vector<16xf32>
  }
  %t = vector.reduction <add>, %s : vector<16xf32> into f32
  return %t : f32
}
