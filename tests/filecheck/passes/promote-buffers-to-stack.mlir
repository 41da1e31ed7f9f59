// RUN: irkit-opt %s -p promote-buffers-to-stack | FileCheck %s
// RUN: irkit-opt %s -p 'promote-buffers-to-stack{max-alloc-size-in-bytes=1024}' | FileCheck %s --check-prefix=SMALL

// A loop body's buffer, freed in the body (a packed panel per image): on the stack, its
// dealloc gone, its attributes kept. With a limit of 1 KiB (the 4 KiB panel is larger) it
// stays (SMALL).
// CHECK-LABEL: func.func @per_iteration(
// CHECK:         loop.parallel
// CHECK-NEXT:      %[[P:.*]] = memory.alloca() {alignment = 128 : i64} : memref<4x256xf32>
// CHECK-NOT:       memory.alloc
// CHECK:           memory.store %{{.*}}, %[[P]]
// CHECK-NOT:       memory.dealloc
// CHECK:         return
// SMALL-LABEL: func.func @per_iteration(
// SMALL:           %[[P:.*]] = memory.alloc() {alignment = 128 : i64} : memref<4x256xf32>
// SMALL:           memory.dealloc %[[P]] : memref<4x256xf32>
func.func @per_iteration(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %out, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %p = memory.alloc() {alignment = 128 : i64} : memref<4x256xf32>
    %v = memory.load %out[%i] : memref<?xf32>
    memory.store %v, %p[%c0, %c0] : memref<4x256xf32>
    %w = memory.load %p[%c0, %c0] : memref<4x256xf32>
    memory.store %w, %out[%i] : memref<?xf32>
    memory.dealloc %p : memref<4x256xf32>
  }
  return
}

// Kept: a dynamic size; a buffer larger than 64 KiB; one freed in another block (under a
// condition); one never freed (returned). A buffer that a loop uses and its own block
// frees afterwards lives within one execution of that block: promoted.
// CHECK-LABEL: func.func @kept(
// CHECK:         memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         memory.alloc() : memref<16385xf32>
// CHECK:         %[[COND:.*]] = memory.alloc() : memref<8xf32>
// CHECK:         loop.if
// CHECK-NEXT:      memory.dealloc %[[COND]]
// CHECK:         %[[LOOP:.*]] = memory.alloca() : memref<4xf32>
// CHECK:         loop.for
// CHECK-NEXT:      memory.store %{{.*}}, %[[LOOP]]
// CHECK-NOT:     memory.dealloc %[[LOOP]]
// CHECK:         memory.alloc() : memref<2xf32>
// CHECK-NOT:     memory.alloca
// CHECK:         return
func.func @kept(%n: index, %flag: i1) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %a = memory.alloc(%n) : memref<?xf32>
  memory.dealloc %a : memref<?xf32>
  %b = memory.alloc() : memref<16385xf32>
  memory.dealloc %b : memref<16385xf32>
  %c = memory.alloc() : memref<8xf32>
  loop.if %flag {
    memory.dealloc %c : memref<8xf32>
  }
  %d = memory.alloc() : memref<4xf32>
  loop.for %i = %c0 to %n step %c1 {
    memory.store %f, %d[%c0] : memref<4xf32>
  }
  memory.dealloc %d : memref<4xf32>
  %r = memory.alloc() : memref<2xf32>
  return %r : memref<2xf32>
}
