// RUN: irkit-opt %s -p canonicalize --allow-unregistered-dialect | FileCheck %s

// loop.for: zero trips fold to the inits, one trip inlines the body, a loop whose results
// are unused and whose body is pure is dead. loop.if on a constant inlines the taken region.

// CHECK-LABEL: func.func @zero_trip_results(
// CHECK-SAME:      %[[X:.*]]: f32) -> f32
// CHECK-NOT:     loop.for
// CHECK:         return %[[X]] : f32
func.func @zero_trip_results(%x: f32) -> f32 {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = loop.for %i = %c4 to %c4 step %c1 iter_args(%a = %x) -> (f32) {
    %n = arith.addf %a, %a : f32
    "test.effect"() : () -> ()
    loop.yield %n : f32
  }
  return %r : f32
}

// Bounds compare signed: 0 to -1 runs zero times even in i32.
// CHECK-LABEL: func.func @zero_trip_signed(
// CHECK-NOT:     loop.for
// CHECK-NOT:     test.effect
// CHECK:         return
func.func @zero_trip_signed() {
  %c0 = arith.constant 0 : i32
  %cm1 = arith.constant -1 : i32
  %c1 = arith.constant 1 : i32
  loop.for %i = %c0 to %cm1 step %c1 : i32 {
    "test.effect"() : () -> ()
  }
  return
}

// CHECK-LABEL: func.func @single_trip(
// CHECK-SAME:      %[[X:.*]]: f32) -> f32
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[A:.*]] = arith.addf %[[X]], %[[X]] : f32
// CHECK:         "test.use"(%[[C3]], %[[A]]) : (index, f32) -> ()
// CHECK-NOT:     loop.for
// CHECK:         return %[[A]] : f32
func.func @single_trip(%x: f32) -> f32 {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %r = loop.for %i = %c3 to %c5 step %c8 iter_args(%a = %x) -> (f32) {
    %n = arith.addf %a, %a : f32
    "test.use"(%i, %n) : (index, f32) -> ()
    loop.yield %n : f32
  }
  return %r : f32
}

// Two trips, or bounds unknown: the loop stays.
// CHECK-LABEL: func.func @kept(
// CHECK:         loop.for
// CHECK:         loop.for
// CHECK:         return
func.func @kept(%n: index, %x: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = loop.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.addf %a, %x : f32
    loop.yield %s : f32
  }
  %t = loop.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.addf %a, %x : f32
    loop.yield %s : f32
  }
  return %r, %t : f32, f32
}

// A pure loop nobody reads is dead; one with an effect is not.
// CHECK-LABEL: func.func @dead_loops(
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    loop.for %{{.*}} = %[[C0]] to %arg0 step %[[C1]] {
// CHECK-NEXT:      "test.effect"() : () -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @dead_loops(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (f32) {
    %s = arith.addf %a, %x : f32
    loop.yield %s : f32
  }
  loop.for %i = %c0 to %n step %c1 {
    %s = arith.addf %x, %x : f32
  }
  loop.for %i = %c0 to %n step %c1 {
    "test.effect"() : () -> ()
  }
  return
}

// CHECK-LABEL: func.func @constant_if(
// CHECK-SAME:      %[[X:.*]]: f32, %[[Y:.*]]: f32) -> (f32, f32)
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    "test.effect"() : () -> ()
// CHECK-NEXT:    return %[[M]], %[[Y]] : f32, f32
func.func @constant_if(%x: f32, %y: f32) -> (f32, f32) {
  %t = arith.constant true
  %f = arith.constant false
  %a = loop.if %t -> (f32) {
    %m = arith.mulf %x, %y : f32
    loop.yield %m : f32
  } else {
    "test.effect"() : () -> ()
    loop.yield %x : f32
  }
  %b = loop.if %f -> (f32) {
    loop.yield %x : f32
  } else {
    "test.effect"() : () -> ()
    loop.yield %y : f32
  }
  loop.if %f {
    "test.effect"() : () -> ()
  }
  return %a, %b : f32, f32
}

// A dynamic condition stays; an if with nothing to do and no results is dead.
// CHECK-LABEL: func.func @dynamic_if(
// CHECK-NEXT:    loop.if %arg0 {
// CHECK-NEXT:      "test.effect"() : () -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @dynamic_if(%c: i1, %x: f32) {
  loop.if %c {
    "test.effect"() : () -> ()
  }
  loop.if %c {
    %s = arith.addf %x, %x : f32
  } else {
  }
  return
}

// loop.parallel: a dimension with zero trips erases the loop, effects and all (bounds
// compare signed; equal bounds are zero trips even when unknown).
// CHECK-LABEL: func.func @parallel_zero_trips(
// CHECK-NOT:     loop.parallel
// CHECK-NOT:     test.effect
// CHECK:         return
func.func @parallel_zero_trips(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cm1 = arith.constant -1 : index
  loop.parallel (%i, %j) = (%c0, %c4) to (%n, %c4) step (%c1, %c1) {
    "test.effect"(%i, %j) : (index, index) -> ()
  }
  loop.parallel (%i) = (%c0) to (%cm1) step (%c1) {
    "test.effect"(%i) : (index) -> ()
  }
  loop.parallel (%i, %j) = (%c0, %n) to (%c4, %n) step (%c1, %c1) {
    "test.effect"(%i, %j) : (index, index) -> ()
  }
  return
}

// A dimension with one trip is dropped, its induction variable := its lower bound; when no
// dimension is left the body is inlined. A width of one is one trip whatever the step.
// CHECK-LABEL: func.func @parallel_single_trips(
// CHECK-SAME:      %[[N:.*]]: index, %[[S:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK:         loop.parallel (%[[I:.*]]) = (%[[C0]]) to (%[[N]]) step (%[[C1]]) {
// CHECK-NEXT:      "test.effect"(%[[I]], %[[C3]]) : (index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    "test.effect"(%[[C0]], %[[C3]]) : (index, index) -> ()
// CHECK-NEXT:    "test.effect"(%[[C3]]) : (index) -> ()
// CHECK-NOT:     loop.parallel
// CHECK:         return
func.func @parallel_single_trips(%n: index, %s: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.parallel (%i, %j) = (%c0, %c3) to (%n, %c4) step (%c1, %c8) {
    "test.effect"(%i, %j) : (index, index) -> ()
  }
  loop.parallel (%i, %j) = (%c0, %c3) to (%c1, %c8) step (%c1, %c8) {
    "test.effect"(%i, %j) : (index, index) -> ()
  }
  loop.parallel (%i) = (%c3) to (%c4) step (%s) {
    "test.effect"(%i) : (index) -> ()
  }
  return
}

// Two trips, unknown bounds, or a dynamic step over a width above one: the loop stays. A
// loop whose body is pure is dead; one with an effect is not.
// CHECK-LABEL: func.func @parallel_kept(
// CHECK-SAME:      %[[N:.*]]: index, %[[S:.*]]: index, %[[X:.*]]: f32)
// CHECK:         loop.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:      "test.effect"
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%[[N]], %{{.*}}) step (%{{.*}}, %[[S]]) {
// CHECK-NEXT:      "test.effect"
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @parallel_kept(%n: index, %s: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.parallel (%i) = (%c0) to (%c2) step (%c1) {
    "test.effect"(%i) : (index) -> ()
  }
  loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c2) step (%c1, %s) {
    "test.effect"(%i, %j) : (index, index) -> ()
  }
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %y = arith.addf %x, %x : f32
  }
  return
}
