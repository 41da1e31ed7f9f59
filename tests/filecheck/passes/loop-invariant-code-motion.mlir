// RUN: irkit-opt %s -p loop-invariant-code-motion --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(loop-invariant-code-motion))' --allow-unregistered-dialect | FileCheck %s

// An op leaves a loop when it is pure, safe to run even if the loop runs zero times, and
// reads only values defined outside the loop. Hoisted ops keep their order.

// CHECK-LABEL: func.func @hoist_invariant(
// CHECK-SAME:      %[[LB:.*]]: index, %[[UB:.*]]: index, %[[X:.*]]: f32)
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[X]], %[[TWO]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[M]], %[[X]] : f32
// CHECK-NEXT:    loop.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[C1]] {
// CHECK-NEXT:      %[[K:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK-NEXT:      "test.use"(%[[S]], %[[K]]) : (f32, i32) -> ()
// CHECK-NEXT:    }
func.func @hoist_invariant(%lb: index, %ub: index, %x: f32) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %x, %two : f32
    %k = arith.index_cast %i : index to i32
    %s = arith.addf %m, %x : f32
    "test.use"(%s, %k) : (f32, i32) -> ()
  }
  return
}

// Values carried from one iteration to the next are not invariant.
// CHECK-LABEL: func.func @iter_args_not_invariant(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[D:.*]] = arith.mulf %arg2, %arg2 : f32
// CHECK-NEXT:    loop.for %{{.*}} = %arg0 to %arg1 step %[[C1]] iter_args(%[[A:.*]] = %arg2) -> (f32) {
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[A]], %[[D]] : f32
// CHECK-NEXT:      loop.yield %[[N]] : f32
func.func @iter_args_not_invariant(%lb: index, %ub: index, %x: f32) -> f32 {
  %c1 = arith.constant 1 : index
  %r = loop.for %i = %lb to %ub step %c1 iter_args(%a = %x) -> (f32) {
    %d = arith.mulf %x, %x : f32
    %n = arith.addf %a, %d : f32
    loop.yield %n : f32
  }
  return %r : f32
}

// One run hoists through every level: `%a` leaves both loops, `%b` (which reads the outer
// induction variable) only the inner one.
// CHECK-LABEL: func.func @nested(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[A:.*]] = arith.addi %arg0, %arg1 : index
// CHECK-NEXT:    loop.for %[[I:.*]] = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:      %[[B:.*]] = arith.muli %[[I]], %[[A]] : index
// CHECK-NEXT:      loop.for %[[J:.*]] = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:        %[[C:.*]] = arith.addi %[[J]], %[[B]] : index
// CHECK-NEXT:        "test.use"(%[[C]]) : (index) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @nested(%lb: index, %ub: index) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    loop.for %j = %lb to %ub step %c1 {
      %a = arith.addi %lb, %ub : index
      %b = arith.muli %i, %a : index
      %c = arith.addi %j, %b : index
      "test.use"(%c) : (index) -> ()
    }
  }
  return
}

// A pure inner loop that does not depend on the outer one leaves it whole, when its step is
// a positive constant (so it surely terminates); with an unknown step it stays.
// CHECK-LABEL: func.func @invariant_inner_loop(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R:.*]] = loop.for %{{.*}} = %arg0 to %arg1 step %[[C1]] iter_args
// CHECK:         }
// CHECK-NEXT:    loop.for %{{.*}} = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:      %[[Q:.*]] = loop.for %{{.*}} = %arg0 to %arg1 step %arg2 iter_args
// CHECK:           }
// CHECK-NEXT:      "test.use"(%[[R]], %[[Q]]) : (f32, f32) -> ()
// CHECK-NEXT:    }
func.func @invariant_inner_loop(%lb: index, %ub: index, %step: index, %x: f32) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    %r = loop.for %j = %lb to %ub step %c1 iter_args(%a = %x) -> (f32) {
      %s = arith.addf %a, %x : f32
      loop.yield %s : f32
    }
    %q = loop.for %j = %lb to %ub step %step iter_args(%a = %x) -> (f32) {
      %s = arith.addf %a, %x : f32
      loop.yield %s : f32
    }
    "test.use"(%r, %q) : (f32, f32) -> ()
  }
  return
}

// Nothing leaves a loop.if: that would run it when the condition is false. An invariant
// loop.if leaves the loop as a whole.
// CHECK-LABEL: func.func @not_out_of_if(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[W:.*]] = loop.if %arg2 -> (f32) {
// CHECK-NEXT:      %[[E:.*]] = arith.mulf %arg3, %arg3 : f32
// CHECK-NEXT:      loop.yield %[[E]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      loop.yield %arg3 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[I:.*]] = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:      %[[P:.*]] = arith.cmpi slt, %[[I]], %arg1 : index
// CHECK-NEXT:      %[[V:.*]] = loop.if %[[P]] -> (f32) {
// CHECK-NEXT:        %[[D:.*]] = arith.addf %arg3, %arg3 : f32
// CHECK-NEXT:        loop.yield %[[D]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        loop.yield %arg3 : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      "test.use"(%[[V]], %[[W]]) : (f32, f32) -> ()
// CHECK-NEXT:    }
func.func @not_out_of_if(%lb: index, %ub: index, %c: i1, %x: f32) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    %p = arith.cmpi slt, %i, %ub : index
    %v = loop.if %p -> (f32) {
      %d = arith.addf %x, %x : f32
      loop.yield %d : f32
    } else {
      loop.yield %x : f32
    }
    %w = loop.if %c -> (f32) {
      %e = arith.mulf %x, %x : f32
      loop.yield %e : f32
    } else {
      loop.yield %x : f32
    }
    "test.use"(%v, %w) : (f32, f32) -> ()
  }
  return
}

// Ops with side effects (here an unregistered op, whose effects are unknown) stay, and so
// does everything that reads their results. So does a loop.if that holds one.
// CHECK-LABEL: func.func @side_effects(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[P:.*]] = arith.addf %arg2, %arg2 : f32
// CHECK-NEXT:    loop.for %{{.*}} = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:      %[[E:.*]] = "test.effect"(%arg2) : (f32) -> f32
// CHECK-NEXT:      %[[U:.*]] = arith.mulf %[[E]], %[[P]] : f32
// CHECK-NEXT:      loop.if %arg3 {
// CHECK-NEXT:        "test.effect"() : () -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:      "test.use"(%[[U]]) : (f32) -> ()
// CHECK-NEXT:    }
func.func @side_effects(%lb: index, %ub: index, %x: f32, %c: i1) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    %e = "test.effect"(%x) : (f32) -> f32
    %p = arith.addf %x, %x : f32
    %u = arith.mulf %e, %p : f32
    loop.if %c {
      "test.effect"() : () -> ()
    }
    "test.use"(%u) : (f32) -> ()
  }
  return
}

// Integer division may trap: it leaves a loop (which might run zero times) only when the
// divisor is a constant that cannot trap.
// CHECK-LABEL: func.func @speculation(
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : i32
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %arg2, %[[C7]] : i32
// CHECK-NEXT:    %[[CM1:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    loop.for %{{.*}} = %arg0 to %arg1 step %[[C1]] {
// CHECK-NEXT:      %[[D:.*]] = arith.divsi %arg2, %arg3 : i32
// CHECK-NEXT:      %[[N:.*]] = arith.remsi %arg2, %[[CM1]] : i32
// CHECK-NEXT:      "test.use"(%[[Q]], %[[D]], %[[N]]) : (i32, i32, i32) -> ()
// CHECK-NEXT:    }
func.func @speculation(%lb: index, %ub: index, %a: i32, %b: i32) {
  %c1 = arith.constant 1 : index
  loop.for %i = %lb to %ub step %c1 {
    %c7 = arith.constant 7 : i32
    %q = arith.divsi %a, %c7 : i32
    %d = arith.divsi %a, %b : i32
    %cm1 = arith.constant -1 : i32
    %n = arith.remsi %a, %cm1 : i32
    "test.use"(%q, %d, %n) : (i32, i32, i32) -> ()
  }
  return
}

// Memory (hoist-memory=true, the default). A load of memory the loop does not write leaves
// it, and a load/store pair of one element becomes a carried value stored once after the
// loop. The inner loop's bounds are not known to be non-empty, so it is versioned on
// running at least once (the hoisted loads would otherwise run where they never did); the
// comparison, invariant in the outer loop, leaves that too.
// CHECK-LABEL: func.func @memory(
// CHECK:         %[[NE:.*]] = arith.cmpi slt, %{{.*}}, %[[M:.*]] : index
// CHECK-NEXT:    loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.if %[[NE]] {
// CHECK-NEXT:        %[[S:.*]] = memory.load %arg2[] : memref<f32>
// CHECK-NEXT:        %[[O:.*]] = memory.load %arg1[%[[I]]] : memref<?xf32>
// CHECK-NEXT:        %[[R:.*]] = loop.for %[[K:.*]] = %{{.*}} to %[[M]] step %{{.*}} iter_args(%[[A:.*]] = %[[O]]) -> (f32) {
// CHECK-NEXT:          %[[X:.*]] = memory.load %arg0[%[[I]], %[[K]]]
// CHECK-NEXT:          %[[Y:.*]] = arith.mulf %[[X]], %[[S]] : f32
// CHECK-NEXT:          %[[Z:.*]] = arith.addf %[[A]], %[[Y]] : f32
// CHECK-NEXT:          loop.yield %[[Z]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        memory.store %[[R]], %arg1[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @memory(%a: memref<?x?xf32>, %out: memref<?xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.for %i = %c0 to %n step %c1 {
    loop.for %k = %c0 to %m step %c1 {
      %scale = memory.load %s[] : memref<f32>
      %o = memory.load %out[%i] : memref<?xf32>
      %x = memory.load %a[%i, %k] : memref<?x?xf32>
      %y = arith.mulf %x, %scale : f32
      %z = arith.addf %o, %y : f32
      memory.store %z, %out[%i] : memref<?xf32>
    }
  }
  return
}

// A loop that surely runs (constant bounds) needs no version. A load of a buffer the loop
// writes elsewhere stays, and so does every load when an op's effects are unknown.
// CHECK-LABEL: func.func @memory_stays(
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[B:.*]] = memory.load %arg1[%[[C0]]] : memref<8xf32>
// CHECK-NEXT:    loop.for %[[I:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:      %[[X:.*]] = memory.load %arg0[%[[C0]]] : memref<8xf32>
// CHECK-NEXT:      %[[Y:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:      memory.store %[[Y]], %arg0[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:      memory.load %arg1[%[[C0]]]
// CHECK-NEXT:      "test.effect"()
func.func @memory_stays(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %x = memory.load %a[%c0] : memref<8xf32>
    %b0 = memory.load %b[%c0] : memref<8xf32>
    %y = arith.addf %x, %b0 : f32
    memory.store %y, %a[%i] : memref<8xf32>
  }
  loop.for %i = %c0 to %c8 step %c1 {
    %b0 = memory.load %b[%c0] : memref<8xf32>
    "test.effect"() : () -> ()
    "test.use"(%b0) : (f32) -> ()
  }
  return
}
