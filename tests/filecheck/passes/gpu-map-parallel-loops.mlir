// RUN: irkit-opt %s --split-input-file -p 'gpu-map-parallel-loops{block-size=8 per-thread=1},canonicalize,cse' | FileCheck %s
// RUN: irkit-opt %s --split-input-file -p 'gpu-map-parallel-loops{two-d=true block-size=32 block-x=8 per-thread=1}' | FileCheck %s --check-prefix=TWOD
// RUN: irkit-opt %s --split-input-file -p 'gpu-map-parallel-loops{block-size=8 per-thread=2},canonicalize,cse' | FileCheck %s --check-prefix=COARSE

// A parallel nest becomes a grid over its flattened iteration space: ceil(n * 4 / 8) blocks
// (at least one), each thread's id guarded and delinearized (the last dimension fastest).
// The reduction and the scalar code after it run in one one-thread launch; the copy is a
// grid of loads and stores. The host keeps the sizes.

// CHECK-LABEL: func.func @scale_and_sum(
// CHECK-SAME:      %[[A:[^:]*]]: memref<?x4xf32>, %[[OUT:[^:]*]]: memref<?x4xf32>, %[[TOTAL:[^:]*]]: memref<f32>, %[[COPY:[^:]*]]: memref<?x4xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[N:.*]] = memory.dim %[[A]], 0
// CHECK:         %[[TOTALN:.*]] = arith.muli %{{.*}}, %[[C4]] : index
// CHECK-NEXT:    %[[CEIL:.*]] = arith.ceildivsi %[[TOTALN]], %[[C8]] : index
// CHECK-NEXT:    %[[GRID:.*]] = arith.maxsi %[[CEIL]], %[[C1]] : index
// CHECK-NEXT:    gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[SX:.*]] = %[[C8]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) {
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[BX]], %[[SX]] : index
// CHECK-NEXT:      %[[ID:.*]] = arith.addi %[[M]], %[[TX]] : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[TOTALN]] : index
// CHECK-NEXT:      loop.if %[[IN]] {
// CHECK-NEXT:        %[[J:.*]] = arith.remui %[[ID]], %[[C4]] : index
// CHECK-NEXT:        %[[I:.*]] = arith.divui %[[ID]], %[[C4]] : index
// CHECK-NEXT:        %[[X:.*]] = memory.load %[[A]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]]
// CHECK-NEXT:        memory.store %[[Y]], %[[OUT]][%[[I]], %[[J]]]
// CHECK:           gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    gpu.launch blocks(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%{{.*}}) in (%{{.*}} = %[[C1]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) {
// CHECK-NEXT:      %[[S:.*]] = loop.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK:           %[[TWICE:.*]] = arith.mulf %[[S]]
// CHECK-NEXT:      memory.store %[[TWICE]], %[[TOTAL]][]
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    }
// CHECK:         gpu.launch
// CHECK:             %[[E:.*]] = memory.load %[[OUT]]
// CHECK-NEXT:        memory.store %[[E]], %[[COPY]]
// CHECK-NOT:     memory.copy
// CHECK:         return
// TWOD-LABEL: func.func @scale_and_sum(
// TWOD:         gpu.launch blocks(%[[BX:.*]], %[[BY:.*]], %{{.*}}) in ({{.*}}) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%[[SX:.*]] = %{{.*}}, %[[SY:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) {
// TWOD-NEXT:      %{{.*}} = arith.muli %[[BX]], %[[SX]] : index
// TWOD-NEXT:      %[[IDX:.*]] = arith.addi %{{.*}}, %[[TX]] : index
// TWOD-NEXT:      %{{.*}} = arith.muli %[[BY]], %[[SY]] : index
// TWOD-NEXT:      %[[IDY:.*]] = arith.addi %{{.*}}, %[[TY]] : index
// TWOD:           memory.load %{{.*}}[%{{.*}}, %{{.*}}]
func.func @scale_and_sum(%a: memref<?x4xf32>, %out: memref<?x4xf32>, %total: memref<f32>,
                         %copy: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %n = memory.dim %a, 0 : memref<?x4xf32>
  loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c4) step (%c1, %c1) {
    %x = memory.load %a[%i, %j] : memref<?x4xf32>
    %y = arith.mulf %x, %two : f32
    memory.store %y, %out[%i, %j] : memref<?x4xf32>
  }
  %s = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memory.load %a[%i, %c0] : memref<?x4xf32>
    %next = arith.addf %acc, %x : f32
    loop.yield %next : f32
  }
  %twice = arith.mulf %s, %two : f32
  memory.store %twice, %total[] : memref<f32>
  memory.copy %out, %copy : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// A scalar computed in one launch and used in a later one goes through a 0-d device
// buffer; the allocation between them is the host's and ends the first launch.

// CHECK-LABEL: func.func @spill(
// CHECK-SAME:      %{{[^:]*}}: memref<4xf32>, %[[B:[^:]*]]: memref<4xf32>)
// CHECK:         %[[BUF:.*]] = memory.alloc() : memref<f32>
// CHECK-NEXT:    gpu.launch
// CHECK-NEXT:      %[[S:.*]] = loop.for
// CHECK:           memory.store %[[S]], %[[BUF]][] : memref<f32>
// CHECK-NEXT:      gpu.terminator
// CHECK:         %[[TMP:.*]] = memory.alloc() : memref<4xf32>
// CHECK:         gpu.launch
// CHECK-NEXT:      %[[L:.*]] = memory.load %[[BUF]][] : memref<f32>
// CHECK:             memory.store %[[L]], %[[TMP]]
// CHECK:         gpu.launch
// CHECK:             memory.load %[[TMP]]
// CHECK:         memory.dealloc %[[TMP]]
// CHECK-NEXT:    memory.dealloc %[[BUF]] : memref<f32>
// CHECK-NEXT:    return
func.func @spill(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %s = loop.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memory.load %a[%i] : memref<4xf32>
    %next = arith.addf %acc, %x : f32
    loop.yield %next : f32
  }
  %tmp = memory.alloc() : memref<4xf32>
  loop.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memory.store %s, %tmp[%i] : memref<4xf32>
  }
  memory.copy %tmp, %b : memref<4xf32> to memref<4xf32>
  memory.dealloc %tmp : memref<4xf32>
  return
}

// -----

// A branch on a host value stays on the host, its work mapped inside; a parallel loop
// nested in a launch runs as a loop.for nest.

// CHECK-LABEL: func.func @branch(
// CHECK:         loop.if %{{.*}} {
// CHECK-NEXT:      gpu.launch
// CHECK:         }
// CHECK:         gpu.launch
// CHECK-NEXT:      loop.for
// CHECK-NEXT:        loop.for
// CHECK-NOT:     loop.parallel
func.func @branch(%a: memref<4x4xf32>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  loop.if %flag {
    memory.store %one, %a[%c0, %c0] : memref<4x4xf32>
  }
  loop.for %k = %c0 to %c4 step %c1 {
    loop.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
      memory.store %one, %a[%i, %j] : memref<4x4xf32>
    }
  }
  return
}

// -----

// Guarded copies (a training step's commit: each variable copied from its new value when
// the status word is 0): the two of one shape share one grid of 16 / 8 = 2 blocks whose
// threads each read the status and copy their element under it, the third (another shape)
// its own grid. No one-thread launch copies a buffer.

// CHECK-LABEL: func.func @commit(
// CHECK-SAME:      %[[S:[^:]*]]: memref<3xi64>, %[[N1:[^:]*]]: memref<4x4xf32>, %[[V1:[^:]*]]: memref<4x4xf32>, %[[N2:[^:]*]]: memref<4x4xf32>, %[[V2:[^:]*]]: memref<4x4xf32>, %[[N3:[^:]*]]: memref<?xf32>, %[[V3:[^:]*]]: memref<?xf32>)
// CHECK:         gpu.launch blocks(%{{.*}}) in (%{{[^ ]*}} = %[[TWO:[^,]*]],
// CHECK:           loop.if
// CHECK:             %[[W1:.*]] = memory.load %[[S]]
// CHECK-NEXT:        %[[OK1:.*]] = arith.cmpi eq, %[[W1]]
// CHECK-NEXT:        loop.if %[[OK1]] {
// CHECK-NEXT:          %[[X1:.*]] = memory.load %[[N1]]
// CHECK-NEXT:          memory.store %[[X1]], %[[V1]]
// CHECK:             %[[W2:.*]] = memory.load %[[S]]
// CHECK-NEXT:        %[[OK2:.*]] = arith.cmpi eq, %[[W2]]
// CHECK-NEXT:        loop.if %[[OK2]] {
// CHECK-NEXT:          %[[X2:.*]] = memory.load %[[N2]]
// CHECK-NEXT:          memory.store %[[X2]], %[[V2]]
// CHECK:           gpu.terminator
// CHECK:         memory.dim %[[N3]], 0
// CHECK:         gpu.launch
// CHECK:             memory.load %[[S]]
// CHECK:               memory.load %[[N3]]
// CHECK-NEXT:          memory.store %{{.*}}, %[[V3]]
// CHECK-NOT:     memory.copy
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @commit(%status: memref<3xi64>, %new1: memref<4x4xf32>, %v1: memref<4x4xf32>,
                  %new2: memref<4x4xf32>, %v2: memref<4x4xf32>, %new3: memref<?xf32>,
                  %v3: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %w1 = memory.load %status[%c0] : memref<3xi64>
  %ok1 = arith.cmpi eq, %w1, %z : i64
  loop.if %ok1 {
    memory.copy %new1, %v1 : memref<4x4xf32> to memref<4x4xf32>
  }
  %w2 = memory.load %status[%c0] : memref<3xi64>
  %ok2 = arith.cmpi eq, %w2, %z : i64
  loop.if %ok2 {
    memory.copy %new2, %v2 : memref<4x4xf32> to memref<4x4xf32>
  }
  %w3 = memory.load %status[%c0] : memref<3xi64>
  %ok3 = arith.cmpi eq, %w3, %z : i64
  loop.if %ok3 {
    memory.copy %new3, %v3 : memref<?xf32> to memref<?xf32>
  }
  return
}

// -----

// A guarded copy whose copy writes the status its condition reads stays as it was: one
// thread runs it.

// CHECK-LABEL: func.func @kept(
// CHECK:         gpu.launch blocks(%{{.*}}) in (%{{[^ ]*}} = %[[ONE:[^,]*]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]]) threads(%{{.*}}) in (%{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]], %{{[^ ]*}} = %[[ONE]])
// CHECK:           loop.if
// CHECK-NEXT:        memory.copy
func.func @kept(%status: memref<4xi64>, %other: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  %w = memory.load %status[%c0] : memref<4xi64>
  %ok = arith.cmpi eq, %w, %z : i64
  loop.if %ok {
    memory.copy %other, %status : memref<4xi64> to memref<4xi64>
  }
  return
}

// -----

// Two iterations per thread (per-thread=2): ceil(n / 16) blocks of 8 threads; thread t of
// block b takes ids 16b + t and 16b + t + 8 (coalesced). Where both are inside (all blocks
// but the last), the two iterations' ops are interleaved, their loads first; else each
// runs under its own check (the second one's is the first's, merged by cse).

// COARSE-LABEL: func.func @coarse(
// COARSE-SAME:      %[[X:[^:]*]]: memref<?xf32>, %[[Y:[^:]*]]: memref<?xf32>)
// COARSE-DAG:     %[[C16:.*]] = arith.constant 16 : index
// COARSE:         %[[N:.*]] = memory.dim %[[X]], 0
// COARSE:         arith.ceildivsi %{{.*}}, %[[C16]] : index
// COARSE:         gpu.launch blocks(%[[BX:[^,]*]], {{.*}} threads(%[[TX:[^,]*]], %{{.*}}) in (%[[SX:[^ ]*]] = {{.*}}) {
// COARSE:           %[[B2:.*]] = arith.muli %[[BX]], %{{.*}} : index
// COARSE-NEXT:      %[[BS:.*]] = arith.muli %[[B2]], %[[SX]] : index
// COARSE-NEXT:      %[[I0:.*]] = arith.addi %[[BS]], %[[TX]] : index
// COARSE-NEXT:      %[[I1:.*]] = arith.addi %[[I0]], %[[SX]] : index
// COARSE-NEXT:      %[[FULL:.*]] = arith.cmpi ult, %[[I1]], %{{.*}} : index
// COARSE-NEXT:      loop.if %[[FULL]] {
// COARSE-NEXT:        %[[A0:.*]] = memory.load %[[X]][%[[I0]]]
// COARSE-NEXT:        %[[A1:.*]] = memory.load %[[X]][%[[I1]]]
// COARSE-NEXT:        %[[E0:.*]] = math.exp %[[A0]]
// COARSE-NEXT:        %[[E1:.*]] = math.exp %[[A1]]
// COARSE-NEXT:        memory.store %[[E0]], %[[Y]][%[[I0]]]
// COARSE-NEXT:        memory.store %[[E1]], %[[Y]][%[[I1]]]
// COARSE-NEXT:      } else {
// COARSE-NEXT:        %[[IN0:.*]] = arith.cmpi ult, %[[I0]], %{{.*}} : index
// COARSE-NEXT:        loop.if %[[IN0]] {
// COARSE-NEXT:          memory.load %[[X]][%[[I0]]]
// COARSE:             loop.if %[[FULL]] {
// COARSE-NEXT:          memory.load %[[X]][%[[I1]]]
func.func @coarse(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memory.load %x[%i] : memref<?xf32>
    %e = math.exp %v : f32
    memory.store %e, %y[%i] : memref<?xf32>
  }
  return
}
