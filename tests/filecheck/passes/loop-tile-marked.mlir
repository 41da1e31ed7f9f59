// RUN: irkit-opt %s -p 'loop-tile{select=marked}' 2>/dev/null | FileCheck %s
// RUN: irkit-opt %s -p 'loop-tile{select=marked}' --verify-diagnostics

// select=marked tiles only the loops marked `loop.tile`, by the mark's sizes, wherever they
// are; the mark is removed. Unmarked outermost loops stay.
// CHECK-LABEL: func.func @marked(
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %arg1 step %{{.*}} {
// CHECK-NEXT:      loop.for %[[T:.*]] = %{{.*}} to %arg1 step %[[C4:.*]] {
// CHECK-NEXT:        %[[E:.*]] = arith.addi %[[T]], %[[C4]] : index
// CHECK-NEXT:        %[[U:.*]] = arith.minsi %[[E]], %arg1 : index
// CHECK-NEXT:        loop.for %{{.*}} = %[[T]] to %[[U]] step
// CHECK-NOT:     loop.tile
func.func @marked(%a: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 {
    loop.for %j = %c0 to %n step %c1 {
      %x = memory.load %a[%i, %j] : memref<?x?xf32>
      %y = arith.addf %x, %x : f32
      memory.store %y, %a[%i, %j] : memref<?x?xf32>
    } {loop.tile = [4]}
  }
  return
}

// A marked loop that cannot be tiled gets a remark even without remarks=true.
func.func @refused(%a: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{loop not tiled: no loop of the band has a tile size smaller than its trip count}}
  loop.for %i = %c1 to %n step %c1 {
    %x = memory.load %a[%i] : memref<?xf32>
    memory.store %x, %a[%i] : memref<?xf32>
  } {loop.tile = [0]}
  return
}
