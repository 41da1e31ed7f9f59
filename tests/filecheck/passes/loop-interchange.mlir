// RUN: irkit-opt %s -p 'loop-interchange{permutation=1,0 remarks=true}' 2>/dev/null | FileCheck %s
// RUN: irkit-opt %s -p 'loop-interchange{permutation=1,0 remarks=true}' --verify-diagnostics
// RUN: irkit-opt %s -p 'loop-interchange' | FileCheck %s --check-prefix=AUTO

// Only the headers move: the outer loop now runs over the first dimension; the body is
// unchanged and reads the induction variables where they now are.
// CHECK-LABEL: func.func @column_walk(
// CHECK-DAG:     %[[N:.*]] = memory.dim %arg0, 0
// CHECK-DAG:     %[[M:.*]] = memory.dim %arg0, 1
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %[[M]] step
// CHECK-NEXT:        memory.load %arg0[%[[I]], %[[J]]]
// CHECK-NEXT:        memory.load %arg1[%[[I]], %[[J]]]
// CHECK:             memory.store %{{.*}}, %arg0[%[[I]], %[[J]]]
// The automatic mode makes the same choice: `j` indexes the last dimension of every access.
// AUTO-LABEL: func.func @column_walk(
// AUTO:         loop.for %[[I:.*]] = %{{.*}} to %[[N:.*]] step
// AUTO-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %[[M:.*]] step
// AUTO-NEXT:        memory.load %arg0[%[[I]], %[[J]]]
func.func @column_walk(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.for %j = %c0 to %m step %c1 {
    loop.for %i = %c0 to %n step %c1 {
      %x = memory.load %a[%i, %j] : memref<?x?xf32>
      %y = memory.load %b[%i, %j] : memref<?x?xf32>
      %z = arith.addf %x, %y : f32
      memory.store %z, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// Dimensions of a loop.parallel are independent: any permutation is legal.
// CHECK-LABEL: func.func @parallel(
// CHECK:         loop.parallel (%[[X:.*]], %[[Y:.*]]) = (%{{.*}}, %{{.*}}) to (%[[C64:.*]], %[[C100:.*]]) step
// CHECK-NEXT:      memory.load %arg0[%[[X]], %[[Y]]]
// The automatic mode leaves a transpose alone: each order has one strided access.
// AUTO-LABEL: func.func @parallel(
// AUTO:         loop.parallel (%[[Y:.*]], %[[X:.*]]) = (%{{.*}}, %{{.*}}) to (%[[C100:.*]], %[[C64:.*]]) step
// AUTO-NEXT:      memory.load %arg0[%[[X]], %[[Y]]]
func.func @parallel(%a: memref<64x100xf32>, %b: memref<100x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  loop.parallel (%j, %i) = (%c0, %c0) to (%c100, %c64) step (%c1, %c1) {
    %x = memory.load %a[%i, %j] : memref<64x100xf32>
    memory.store %x, %b[%j, %i] : memref<100x64xf32>
  }
  return
}

// Pure ops between the loops are sunk into the innermost body, making the nest perfect.
// CHECK-LABEL: func.func @sink(
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[K:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT:        memory.store %{{.*}}, %arg0[%[[I]], %[[K]]]
func.func @sink(%a: memref<?x?xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %j = %c0 to %n step %c1 {
    %k = arith.addi %j, %c1 : index
    loop.for %i = %c0 to %n step %c1 {
      memory.store %x, %a[%i, %k] : memref<?x?xf32>
    }
  }
  return
}

// An index that is not affine in the loops (`j * n`, n unknown) hides the distance.
// CHECK-LABEL: func.func @not_affine(
// CHECK:         loop.for %[[J:.*]] =
// CHECK-NEXT:      arith.muli %[[J]]
func.func @not_affine(%a: memref<?xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{loops not interchanged: the permutation [1, 0] would reverse a dependence}}
  loop.for %j = %c0 to %n step %c1 {
    %row = arith.muli %j, %n : index
    loop.for %i = %c0 to %n step %c1 {
      %k = arith.addi %row, %i : index
      memory.store %x, %a[%k] : memref<?xf32>
    }
  }
  return
}

// a[i][j] = a[i-1][j+1]: the distance (1, -1) over (j, i) would become (-1, 1).
// CHECK-LABEL: func.func @reversed(
// CHECK:         loop.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        arith.subi %[[I]]
func.func @reversed(%a: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  // expected-remark @+1 {{loops not interchanged: the permutation [1, 0] would reverse a dependence}}
  loop.for %j = %c1 to %n step %c1 {
    loop.for %i = %c1 to %n step %c1 {
      %i1 = arith.subi %i, %c1 : index
      %j1 = arith.addi %j, %c1 : index
      %x = memory.load %a[%i1, %j1] : memref<?x?xf32>
      memory.store %x, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// A loop that carries values is a band of one loop: nothing to permute.
// CHECK-LABEL: func.func @carried(
func.func @carried(%a: memref<?xf32>, %n: index, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{loops not interchanged: the permutation has 2 entries but the band is 1 deep}}
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}
