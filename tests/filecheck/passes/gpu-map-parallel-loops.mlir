// RUN: irkit-opt %s --split-input-file -p 'gpu-map-parallel-loops{block-size=8},canonicalize,cse' | FileCheck %s
// RUN: irkit-opt %s --split-input-file -p 'gpu-map-parallel-loops{two-d=true block-size=32 block-x=8}' | FileCheck %s --check-prefix=TWOD

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
