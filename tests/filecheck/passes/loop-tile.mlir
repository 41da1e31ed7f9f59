// RUN: irkit-opt %s -p 'loop-tile{tile-sizes=32,16 remarks=true}' 2>/dev/null | FileCheck %s
// RUN: irkit-opt %s -p 'loop-tile{tile-sizes=32,16 remarks=true}' --verify-diagnostics

// A band of two loop.for with dynamic bounds: the tile loops step 32 and 16, and each
// point loop ends at min(tile start + size, ub).
// CHECK-LABEL: func.func @band(
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[N:.*]] = memory.dim %arg0, 0
// CHECK-DAG:     %[[M:.*]] = memory.dim %arg0, 1
// CHECK:         loop.for %[[TI:.*]] = %{{.*}} to %[[N]] step %[[C32]] {
// CHECK-NEXT:      loop.for %[[TJ:.*]] = %{{.*}} to %[[M]] step %[[C16]] {
// CHECK-NEXT:        %[[EI:.*]] = arith.addi %[[TI]], %[[C32]] : index
// CHECK-NEXT:        %[[UI:.*]] = arith.minsi %[[EI]], %[[N]] : index
// CHECK-NEXT:        %[[EJ:.*]] = arith.addi %[[TJ]], %[[C16]] : index
// CHECK-NEXT:        %[[UJ:.*]] = arith.minsi %[[EJ]], %[[M]] : index
// CHECK-NEXT:        loop.for %[[I:.*]] = %[[TI]] to %[[UI]] step %{{.*}} {
// CHECK-NEXT:          loop.for %[[J:.*]] = %[[TJ]] to %[[UJ]] step %{{.*}} {
// CHECK-NEXT:            memory.load %arg0[%[[J]], %[[I]]]
// CHECK-NEXT:            memory.store %{{.*}}, %arg1[%[[I]], %[[J]]]
func.func @band(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.for %i = %c0 to %n step %c1 {
    loop.for %j = %c0 to %m step %c1 {
      %x = memory.load %a[%j, %i] : memref<?x?xf32>
      memory.store %x, %b[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// A loop.parallel: the tile loop is parallel over the tiles, the point loop parallel
// within one. 64 is a multiple of 32 (no min); 100 is not a multiple of 16.
// CHECK-LABEL: func.func @parallel(
// CHECK:         loop.parallel (%[[TI:.*]], %[[TJ:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[C100:.*]]) step (%[[C32:.*]], %[[C16:.*]]) {
// CHECK-NEXT:      %[[UI:.*]] = arith.addi %[[TI]], %[[C32]] : index
// CHECK-NEXT:      %[[EJ:.*]] = arith.addi %[[TJ]], %[[C16]] : index
// CHECK-NEXT:      %[[UJ:.*]] = arith.minsi %[[EJ]], %[[C100]] : index
// CHECK-NEXT:      loop.parallel (%{{.*}}, %{{.*}}) = (%[[TI]], %[[TJ]]) to (%[[UI]], %[[UJ]]) step
func.func @parallel(%a: memref<64x100xf32>, %b: memref<100x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  loop.parallel (%i, %j) = (%c0, %c0) to (%c64, %c100) step (%c1, %c1) {
    %x = memory.load %a[%i, %j] : memref<64x100xf32>
    memory.store %x, %b[%j, %i] : memref<100x64xf32>
  }
  return
}

// A loop that carries a value is strip-mined: the tile loop carries it too.
// CHECK-LABEL: func.func @reduction(
// CHECK:         %[[R:.*]] = loop.for %[[T:.*]] = {{.*}} iter_args(%[[A:.*]] = %arg1) -> (f32) {
// CHECK:           %[[IN:.*]] = loop.for %{{.*}} = %[[T]] to %{{.*}} iter_args(%{{.*}} = %[[A]]) -> (f32) {
// CHECK:           loop.yield %[[IN]] : f32
// CHECK:         return %[[R]] : f32
func.func @reduction(%a: memref<?xf32>, %init: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {
    %x = memory.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

// a[i][j] = a[i-1][j+1] carries a dependence of distance (1, -1): tiling would reverse it.
// CHECK-LABEL: func.func @not_permutable(
// CHECK-NEXT:    arith.constant
// CHECK-NEXT:    memory.dim
// CHECK-NEXT:    loop.for
// CHECK-NEXT:      loop.for
func.func @not_permutable(%a: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  // expected-remark @+1 {{loop not tiled: the band is not fully permutable (a dependence would be reversed)}}
  loop.for %i = %c1 to %n step %c1 {
    loop.for %j = %c1 to %n step %c1 {
      %i1 = arith.subi %i, %c1 : index
      %j1 = arith.addi %j, %c1 : index
      %x = memory.load %a[%i1, %j1] : memref<?x?xf32>
      memory.store %x, %a[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// A constant trip count no larger than the tile size leaves the loop untiled.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     arith.minsi
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memory.store
func.func @small(%a: memref<8xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-remark @+1 {{loop not tiled: no loop of the band has a tile size smaller than its trip count}}
  loop.for %i = %c0 to %c8 step %c1 {
    memory.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// An op with unknown effects makes the dependences unknown.
// CHECK-LABEL: func.func @unknown_effects(
// CHECK-NOT:     arith.minsi
func.func @unknown_effects(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{loop not tiled: the dependences of the band are unknown: 'func.call' has unknown memory effects}}
  loop.for %i = %c0 to %n step %c1 {
    loop.for %j = %c0 to %n step %c1 {
      func.call @g(%i, %j) : (index, index) -> ()
    }
  }
  return
}
func.func private @g(index, index)
