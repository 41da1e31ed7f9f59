// RUN: irkit-opt %s -p 'loop-unroll{factor=4 full-threshold=2}' | FileCheck %s
// RUN: irkit-opt %s -p 'loop-unroll{factor=1 full-threshold=4 full-ops=40 nests=true vectors=false},canonicalize' | FileCheck %s --check-prefix=SHORT

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

// The pipeline's use, the second run: full unrolls only, of loops of at most 4 trips
// making at most 40 ops, whole nests, no vector loops. A 2 x 2 window's maximum and its
// argmax: the inner loop goes first, then the outer one, innermost now; the induction values are
// constants in the copies, so the first-point test folds away (the first copy takes the
// point as it is) and every load's index is a constant.
// SHORT-LABEL: func.func @window(
// SHORT-NOT:     loop.for
// SHORT:         %[[X0:.*]] = memory.load %arg0[%[[C0:.*]], %[[C0]]]
// SHORT-NEXT:    %[[X1:.*]] = memory.load %arg0[%[[C0]], %[[C1:.*]]]
// SHORT-NEXT:    %[[G1:.*]] = arith.cmpf ogt, %[[X1]], %[[X0]] : f32
// SHORT-NEXT:    %[[M1:.*]] = arith.select %[[G1]], %[[X1]], %[[X0]] : f32
// SHORT-NEXT:    %[[I1:.*]] = arith.select %[[G1]], %[[C1]], %[[C0]] : index
// SHORT-COUNT-2: memory.load %arg0[%[[C1]], %{{.*}}]
// SHORT-NOT:     loop.for
// SHORT:         return %{{.*}}, %{{.*}} : f32, index
// CHECK-LABEL: func.func @window(
// CHECK:         loop.for
func.func @window(%a: memref<2x2xf32>) -> (f32, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = loop.for %i = %c0 to %c2 step %c1 iter_args(%m = %ninf, %k = %c0) -> (f32, index) {
    %s:2 = loop.for %j = %c0 to %c2 step %c1 iter_args(%m2 = %m, %k2 = %k) -> (f32, index) {
      %x = memory.load %a[%i, %j] : memref<2x2xf32>
      %first_i = arith.cmpi eq, %i, %c0 : index
      %first_j = arith.cmpi eq, %j, %c0 : index
      %first = arith.andi %first_i, %first_j : i1
      %gt = arith.cmpf ogt, %x, %m2 : f32
      %take = arith.ori %first, %gt : i1
      %i2 = arith.muli %i, %c2 : index
      %at = arith.addi %i2, %j : index
      %m3 = arith.select %take, %x, %m2 : f32
      %k3 = arith.select %take, %at, %k2 : index
      loop.yield %m3, %k3 : f32, index
    }
    loop.yield %s#0, %s#1 : f32, index
  }
  return %r#0, %r#1 : f32, index
}

// A loop that makes vectors stays (vectors=false), and so does one whose copies would be
// more than full-ops ops (4 x 11 > 40), and, without its inner loop unrolled, the loop
// around it.
// SHORT-LABEL: func.func @kept(
// SHORT:         loop.for
// SHORT:           memory.vector_load
// SHORT:         loop.for
// SHORT:           loop.for
// SHORT-COUNT-11:    arith.addf
// SHORT:           }
// SHORT:         }
func.func @kept(%a: memref<4x64xf32>, %v: vector<16xf32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %j = %c0 to %c4 step %c1 {
    %o = arith.muli %j, %c16 : index
    %w = memory.vector_load %a[%c0, %o] : memref<4x64xf32>, vector<16xf32>
    %s = arith.addf %w, %v : vector<16xf32>
    memory.vector_store %s, %a[%c0, %o] : memref<4x64xf32>, vector<16xf32>
  }
  %r = loop.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> (f32) {
    %q = loop.for %j = %c0 to %c4 step %c1 iter_args(%u = %t) -> (f32) {
      %y = memory.load %a[%i, %j] : memref<4x64xf32>
      %u1 = arith.addf %u, %y : f32
      %u2 = arith.addf %u1, %y : f32
      %u3 = arith.addf %u2, %y : f32
      %u4 = arith.addf %u3, %y : f32
      %u5 = arith.addf %u4, %y : f32
      %u6 = arith.addf %u5, %y : f32
      %u7 = arith.addf %u6, %y : f32
      %u8 = arith.addf %u7, %y : f32
      %u9 = arith.addf %u8, %y : f32
      %u10 = arith.addf %u9, %y : f32
      %u11 = arith.addf %u10, %y : f32
      loop.yield %u11 : f32
    }
    loop.yield %q : f32
  }
  return %r : f32
}
