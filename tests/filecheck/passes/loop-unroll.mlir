// RUN: irkit-opt %s -p 'loop-unroll{factor=4 full-threshold=2}' | FileCheck %s

// Dynamic trip count: the main loop steps 4 up to ub - (ub - lb) rem 4, its body four
// copies threading the carried sum; the original loop runs the rest from there.
// CHECK-LABEL: func.func @dynamic(
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[N:.*]] = memory.dim %arg0, 0
// CHECK:         %[[SPAN:.*]] = arith.subi %[[N]], %[[LB:.*]] : index
// CHECK-NEXT:    %[[REM:.*]] = arith.remsi %[[SPAN]], %[[C4]] : index
// CHECK-NEXT:    %[[SPLIT:.*]] = arith.subi %[[N]], %[[REM]] : index
// CHECK-NEXT:    %[[MAIN:.*]] = loop.for %[[I:.*]] = %[[LB]] to %[[SPLIT]] step %[[C4]] iter_args(%[[A:.*]] = %arg2) -> (f32) {
// CHECK-NEXT:      %[[X0:.*]] = memory.load %arg0[%[[I]]]
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %[[A]], %[[X0]] : f32
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK-NEXT:      %[[X1:.*]] = memory.load %arg0[%[[I1]]]
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[S0]], %[[X1]] : f32
// CHECK-NEXT:      %[[I2:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[X2:.*]] = memory.load %arg0[%[[I2]]]
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %[[S1]], %[[X2]] : f32
// CHECK-NEXT:      %[[I3:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[X3:.*]] = memory.load %arg0[%[[I3]]]
// CHECK-NEXT:      %[[S3:.*]] = arith.addf %[[S2]], %[[X3]] : f32
// CHECK-NEXT:      loop.yield %[[S3]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = loop.for %{{.*}} = %[[SPLIT]] to %[[N]] step %[[C1]] iter_args(%{{.*}} = %[[MAIN]]) -> (f32) {
// CHECK:         return %[[R]] : f32
func.func @dynamic(%a: memref<?xf32>, %lb: index, %init: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %i = %lb to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

// Static trip count 10: the main loop runs to 8; the 2 left are unrolled fully (2 is at
// most full-threshold), the induction variable a constant in each copy.
// CHECK-LABEL: func.func @static(
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C9:.*]] = arith.constant 9 : index
// CHECK:         %[[MAIN:.*]] = loop.for %{{.*}} = %{{.*}} to %[[C8]] step
// CHECK:         }
// CHECK-NEXT:    %[[X8:.*]] = memory.load %arg0[%[[C8]]]
// CHECK-NEXT:    %[[S8:.*]] = arith.addf %[[MAIN]], %[[X8]] : f32
// CHECK-NEXT:    %[[X9:.*]] = memory.load %arg0[%[[C9]]]
// CHECK-NEXT:    %[[S9:.*]] = arith.addf %[[S8]], %[[X9]] : f32
// CHECK-NEXT:    return %[[S9]] : f32
func.func @static(%a: memref<10xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %r = loop.for %i = %c0 to %c10 step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%i] : memref<10xf32>
    %s = arith.addf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

// A multiple of the factor leaves no remainder loop; a trip count of 2 is unrolled fully.
// CHECK-LABEL: func.func @no_remainder(
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4:   memory.store
// CHECK-NEXT:    }
// CHECK-NOT:     loop.for
// CHECK-COUNT-2: memory.store
// CHECK-NOT:     loop.for
// CHECK:         return
func.func @no_remainder(%a: memref<16xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 {
    memory.store %x, %a[%i] : memref<16xf32>
  }
  loop.for %i = %c0 to %c2 step %c1 {
    memory.store %x, %a[%i] : memref<16xf32>
  }
  return
}

// Only innermost loops are unrolled.
// CHECK-LABEL: func.func @nest(
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %arg1 step %[[C1:.*]] {
// CHECK-NEXT:      arith.remsi
// CHECK-NEXT:      arith.subi
// CHECK-NEXT:      loop.for %{{.*}} step %{{.*}} {
// CHECK-COUNT-4:     memory.store
func.func @nest(%a: memref<?x?xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 {
    loop.for %j = %c0 to %n step %c1 {
      memory.store %x, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
