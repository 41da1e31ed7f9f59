// RUN: irkit-opt %s -p 'loop-unroll-and-jam{factor=2 remarks=true}' 2>/dev/null | FileCheck %s
// RUN: irkit-opt %s -p 'loop-unroll-and-jam{factor=2 remarks=true}' --verify-diagnostics

// y = A x: two rows per iteration of the outer loop, one fused inner loop carrying both
// sums; each row's load of y before, its store after; the original loop for the last row.
// CHECK-LABEL: func.func @matvec(
// CHECK:         %[[REM:.*]] = arith.remsi %[[N:.*]], %{{.*}} : index
// CHECK-NEXT:    %[[SPLIT:.*]] = arith.subi %[[N]], %[[REM]] : index
// CHECK-NEXT:    loop.for %[[I:.*]] = %{{.*}} to %[[SPLIT]] step %[[C2:.*]] {
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[I]], %[[C1:.*]] : index
// CHECK-NEXT:      %[[Y0:.*]] = memory.load %arg2[%[[I]]]
// CHECK-NEXT:      %[[Y1:.*]] = memory.load %arg2[%[[I1]]]
// CHECK-NEXT:      %[[R:.*]]:2 = loop.for %[[K:.*]] = {{.*}} iter_args(%[[A0:.*]] = %[[Y0]], %[[A1:.*]] = %[[Y1]]) -> (f32, f32) {
// CHECK-NEXT:        memory.load %arg0[%[[I]], %[[K]]]
// CHECK:             %[[S0:.*]] = arith.addf %[[A0]],
// CHECK-NEXT:        memory.load %arg0[%[[I1]], %[[K]]]
// CHECK:             %[[S1:.*]] = arith.addf %[[A1]],
// CHECK-NEXT:        loop.yield %[[S0]], %[[S1]] : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memory.store %[[R]]#0, %arg2[%[[I]]]
// CHECK-NEXT:      memory.store %[[R]]#1, %arg2[%[[I1]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} = %[[SPLIT]] to %[[N]] step %[[C1]] {
func.func @matvec(%a: memref<?x?xf32>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.for %i = %c0 to %n step %c1 {
    %init = memory.load %y[%i] : memref<?xf32>
    %r = loop.for %k = %c0 to %m step %c1 iter_args(%acc = %init) -> (f32) {
      %p = memory.load %a[%i, %k] : memref<?x?xf32>
      %q = memory.load %x[%k] : memref<?xf32>
      %s = arith.mulf %p, %q : f32
      %t = arith.addf %acc, %s : f32
      loop.yield %t : f32
    }
    memory.store %r, %y[%i] : memref<?xf32>
  }
  return
}

// Every iteration reads y[0], which iteration 0 writes: jamming would reorder them.
// CHECK-LABEL: func.func @dependent(
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memory.load %arg0[%{{.*}}]
// CHECK-NEXT:      loop.for
func.func @dependent(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %y, 0 : memref<?xf32>
  // expected-remark @+1 {{loop not unrolled and jammed: two iterations of the outer loop may touch one memory location}}
  loop.for %i = %c0 to %n step %c1 {
    %init = memory.load %y[%c0] : memref<?xf32>
    %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
      %t = arith.addf %acc, %acc : f32
      loop.yield %t : f32
    }
    memory.store %r, %y[%i] : memref<?xf32>
  }
  return
}

// The inner loop's trip count depends on the outer loop (a triangle).
func.func @triangle(%y: memref<?xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %y, 0 : memref<?xf32>
  // expected-remark @+1 {{loop not unrolled and jammed: the inner loop's bounds depend on the outer loop}}
  loop.for %i = %c0 to %n step %c1 {
    loop.for %k = %c0 to %i step %c1 {
      memory.store %x, %y[%i] : memref<?xf32>
    }
  }
  return
}
