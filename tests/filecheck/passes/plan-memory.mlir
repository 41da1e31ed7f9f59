// RUN: irkit-opt %s -p plan-memory | FileCheck %s
// RUN: irkit-opt %s -p 'plan-memory{in-place=false}' | FileCheck %s --check-prefix=NOREUSE
// RUN: irkit-opt %s -p 'plan-memory{report=true}' --verify-diagnostics

// Function-level temporaries become views of one arena, allocated at entry and freed before
// the return; their deallocs go. Static sizes give constant offsets, multiples of 64.
// Here %b (128 bytes) is live with %a, then with %c: %b goes first at 0 (largest first), %a
// and %c both at 128 (they are never live at once). 192 bytes, the lower bound.
// CHECK-LABEL: func.func @static(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[ARENA:.*]] = memory.arena() : memref<192xi8>
// CHECK-NOT:     memory.alloc
// CHECK:         %[[A:.*]] = memory.view %[[ARENA]][%[[C128]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         loop.for
// CHECK:         %[[B:.*]] = memory.view %[[ARENA]][%[[C0]]][] : memref<192xi8> to memref<32xf32>
// CHECK:         loop.for
// CHECK-NOT:     memory.dealloc %[[A]]
// CHECK:         %[[C:.*]] = memory.view %[[ARENA]][%[[C128]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NOT:     memory.dealloc %[[B]]
// CHECK-NOT:     memory.dealloc %[[C]]
// CHECK:         memory.dealloc %[[ARENA]] : memref<192xi8>
// CHECK-NEXT:    return
// expected-remark @below {{memory plan of @static: arena 192 bytes, lower bound 192 bytes (most}}
func.func @static(%x: memref<16xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-note @below {{live at the peak: memref<16xf32>, 64 bytes at offset 128}}
  %a = memory.alloc() : memref<16xf32>
  loop.for %i = %c0 to %c16 step %c1 {
    %v = memory.load %x[%i] : memref<16xf32>
    memory.store %v, %a[%i] : memref<16xf32>
  }
  // expected-note @below {{live at the peak: memref<32xf32>, 128 bytes at offset 0}}
  %b = memory.alloc() : memref<32xf32>
  loop.for %i = %c0 to %c16 step %c1 {
    %v = memory.load %a[%i] : memref<16xf32>
    %j = arith.addi %i, %c16 : index
    memory.store %v, %b[%i] : memref<32xf32>
    memory.store %v, %b[%j] : memref<32xf32>
  }
  memory.dealloc %a : memref<16xf32>
  %c = memory.alloc() : memref<16xf32>
  loop.for %i = %c0 to %c16 step %c1 {
    %j = arith.addi %i, %c16 : index
    %p = memory.load %b[%i] : memref<32xf32>
    %q = memory.load %b[%j] : memref<32xf32>
    %s = arith.addf %p, %q : f32
    memory.store %s, %c[%i] : memref<16xf32>
  }
  memory.dealloc %b : memref<32xf32>
  loop.for %i = %c0 to %c16 step %c1 {
    %v = memory.load %c[%i] : memref<16xf32>
    memory.store %v, %out[%i] : memref<16xf32>
  }
  memory.dealloc %c : memref<16xf32>
  return
}

// Dynamic sizes: the size is aligned with arith at entry ((bytes + 63) & -64), the arena is
// as large as the plan's formula says, and an elementwise loop that reads %t where %t dies
// writes %u at the same offset (in-place reuse). Without reuse, %u goes after %t.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:      %[[N:[^:]*]]: index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[FOUR:.*]] = arith.constant 4 : index
// CHECK:         %[[BYTES:.*]] = arith.muli %[[FOUR]], %[[N]] : index
// CHECK:         %[[BUMP:.*]] = arith.addi %[[BYTES]], %{{.*}} : index
// CHECK:         %[[SIZE:.*]] = arith.andi %[[BUMP]], %{{.*}} : index
// CHECK:         %[[ARENA:.*]] = memory.arena(%[[SIZE]]) : memref<?xi8>
// CHECK:         memory.view %[[ARENA]][%[[ZERO]]][%[[N]]] : memref<?xi8> to memref<?xf32>
// CHECK:         memory.view %[[ARENA]][%[[ZERO]]][%[[N]]] : memref<?xi8> to memref<?xf32>
// CHECK-NOT:     memory.alloc
// CHECK:         memory.dealloc %[[ARENA]] : memref<?xi8>
// CHECK-NEXT:    return

// NOREUSE-LABEL: func.func @dynamic(
// NOREUSE:         %[[ARENA:.*]] = memory.arena(%{{.*}}) : memref<?xi8>
// NOREUSE:         memory.view %[[ARENA]][%[[OFF0:.*]]][%{{.*}}] : memref<?xi8> to memref<?xf32>
// NOREUSE:         memory.view %[[ARENA]][%[[OFF1:.*]]][%{{.*}}] : memref<?xi8> to memref<?xf32>
// NOREUSE:         memory.dealloc %[[ARENA]] : memref<?xi8>
// expected-remark-re @below {{@dynamic ({{.*}} = 64): arena 256 bytes, {{.*}}place; 512 bytes}}
func.func @dynamic(%n: index, %x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  // expected-note @below {{live at the peak: memref<?xf32>, 256 bytes at offset 0}}
  %t = memory.alloc(%n) : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memory.load %x[%i] : memref<?xf32>
    memory.store %v, %t[%i] : memref<?xf32>
  }
  %u = memory.alloc(%n) : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memory.load %t[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memory.store %w, %u[%i] : memref<?xf32>
  }
  memory.dealloc %t : memref<?xf32>
  memory.copy %u, %out : memref<?xf32> to memref<?xf32>
  memory.dealloc %u : memref<?xf32>
  return
}

// What stays: an alloc inside a loop, and one the function returns.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     memory.arena
// CHECK:         %[[R:.*]] = memory.alloc() : memref<4xf32>
// CHECK:         loop.for
// CHECK-NEXT:      %[[IN:.*]] = memory.alloc() : memref<2xf32>
// CHECK:           memory.dealloc %[[IN]] : memref<2xf32>
// CHECK:         return %[[R]]
// expected-remark @below {{1 left as allocs, 1 allocs inside loops left as they are}}
func.func @left_alone(%v: f32) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-note @below {{left as an alloc: it is returned}}
  %r = memory.alloc() : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 {
    %in = memory.alloc() : memref<2xf32>
    memory.store %v, %in[%c0] : memref<2xf32>
    %w = memory.load %in[%c0] : memref<2xf32>
    memory.store %w, %r[%i] : memref<4xf32>
    memory.dealloc %in : memref<2xf32>
  }
  return %r : memref<4xf32>
}

// Temporaries of the two regions of a `loop.if` are never live at once: %t (then) and %e
// (else) both go to offset 0, as views in their regions, and their deallocs go. %a, read in
// the then region and after the `if`, is live across both regions: it shares with neither.
// 192 bytes (a + t), the lower bound.
// CHECK-LABEL: func.func @branches(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         %[[ARENA:.*]] = memory.arena() : memref<192xi8>
// CHECK-NOT:     memory.alloc
// CHECK:         %[[A:.*]] = memory.view %[[ARENA]][%[[C128]]][] : memref<192xi8> to memref<16xf32>
// CHECK:         loop.if
// CHECK:           %[[T:.*]] = memory.view %[[ARENA]][%[[C0]]][] : memref<192xi8> to memref<32xf32>
// CHECK-NOT:       memory.dealloc %[[T]]
// CHECK:         } else {
// CHECK:           %[[E:.*]] = memory.view %[[ARENA]][%[[C0]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NOT:       memory.dealloc %[[E]]
// CHECK:         }
// CHECK-NOT:     memory.dealloc %[[A]]
// CHECK:         memory.dealloc %[[ARENA]] : memref<192xi8>
// CHECK-NEXT:    return
// expected-remark @below {{memory plan of @branches: arena 192 bytes, lower bound 192 bytes}}
func.func @branches(%x: memref<16xf32>, %c: i1, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-note @below {{live at the peak: memref<16xf32>, 64 bytes at offset 128}}
  %a = memory.alloc() : memref<16xf32>
  loop.for %i = %c0 to %c16 step %c1 {
    %v = memory.load %x[%i] : memref<16xf32>
    memory.store %v, %a[%i] : memref<16xf32>
  }
  loop.if %c {
    // expected-note @below {{live at the peak: memref<32xf32>, 128 bytes at offset 0}}
    %t = memory.alloc() : memref<32xf32>
    loop.for %i = %c0 to %c16 step %c1 {
      %j = arith.addi %i, %c16 : index
      %v = memory.load %a[%i] : memref<16xf32>
      memory.store %v, %t[%i] : memref<32xf32>
      memory.store %v, %t[%j] : memref<32xf32>
    }
    loop.for %i = %c0 to %c16 step %c1 {
      %j = arith.addi %i, %c16 : index
      %p = memory.load %t[%i] : memref<32xf32>
      %q = memory.load %t[%j] : memref<32xf32>
      %s = arith.addf %p, %q : f32
      memory.store %s, %out[%i] : memref<16xf32>
    }
    memory.dealloc %t : memref<32xf32>
  } else {
    %e = memory.alloc() : memref<16xf32>
    loop.for %i = %c0 to %c16 step %c1 {
      %v = memory.load %x[%i] : memref<16xf32>
      %w = arith.mulf %v, %v : f32
      memory.store %w, %e[%i] : memref<16xf32>
    }
    loop.for %i = %c0 to %c16 step %c1 {
      %v = memory.load %e[%i] : memref<16xf32>
      memory.store %v, %out[%i] : memref<16xf32>
    }
    memory.dealloc %e : memref<16xf32>
  }
  loop.for %i = %c0 to %c16 step %c1 {
    %v = memory.load %a[%i] : memref<16xf32>
    %o = memory.load %out[%i] : memref<16xf32>
    %s = arith.addf %v, %o : f32
    memory.store %s, %out[%i] : memref<16xf32>
  }
  memory.dealloc %a : memref<16xf32>
  return
}

// What stays in a branch: an alloc inside a loop (per iteration), and one sized by a
// division (64 / n would run at entry on calls where the branch does not: n may be 0 there).
// The one sized by n * 4 is planned, the multiply moved to the entry.
// CHECK-LABEL: func.func @branch_left_alone(
// CHECK:         %[[M:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[ARENA:.*]] = memory.arena(%{{.*}}) : memref<?xi8>
// CHECK:         loop.if
// CHECK-NEXT:      arith.divui
// CHECK-NEXT:      memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           memory.view %[[ARENA]][%{{.*}}][%[[M]]] : memref<?xi8> to memref<?xf32>
// CHECK:           loop.for
// CHECK-NEXT:        memory.alloc() : memref<2xf32>
// expected-remark @below {{1 left as allocs, 1 allocs inside loops left as they are; 1 of the}}
func.func @branch_left_alone(%n: index, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %pos = arith.cmpi ugt, %n, %c0 : index
  loop.if %pos {
    %h = arith.divui %c64, %n : index
    // expected-note @below {{alloc in a branch: its size is computed in a branch by arith.divui}}
    %d = memory.alloc(%h) : memref<?xf32>
    memory.store %one, %d[%c0] : memref<?xf32>
    %m = arith.muli %n, %c4 : index
    // expected-note @below {{live at the peak: memref<?xf32>}}
    %p = memory.alloc(%m) : memref<?xf32>
    memory.store %one, %p[%c0] : memref<?xf32>
    loop.for %i = %c0 to %c4 step %c1 {
      %in = memory.alloc() : memref<2xf32>
      %v = memory.load %d[%c0] : memref<?xf32>
      memory.store %v, %in[%c0] : memref<2xf32>
      %w = memory.load %in[%c0] : memref<2xf32>
      %u = memory.load %p[%c0] : memref<?xf32>
      %s = arith.addf %w, %u : f32
      memory.store %s, %out[%c0] : memref<2xf32>
      memory.dealloc %in : memref<2xf32>
    }
    memory.dealloc %p : memref<?xf32>
    memory.dealloc %d : memref<?xf32>
  }
  return
}
