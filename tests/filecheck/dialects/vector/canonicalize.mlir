// RUN: irkit-opt %s -p canonicalize --allow-unregistered-dialect | FileCheck %s

// vector.broadcast of a constant is a dense constant (MLIR folds splats only; any constant
// here), of a broadcast one broadcast, to its own type nothing. vector.reduction of constants
// folds (lanes combined in order, as the interpreter does; MLIR leaves these); over copies of
// one scalar it is that scalar when the kind is idempotent or there is one lane.

// CHECK-LABEL: func.func @broadcast_constants(
// CHECK-DAG:     %[[A:.*]] = arith.constant dense<1.500000e+00> : vector<8xf32>
// CHECK-DAG:     %[[B:.*]] = arith.constant dense<{{\[}}[1, 2], [1, 2], [1, 2]]> : vector<3x2xi32>
// CHECK-DAG:     %[[C:.*]] = arith.constant dense<true> : vector<4xi1>
// CHECK-NOT:     vector.broadcast
// CHECK:         "test.use"(%[[A]], %[[B]], %[[C]])
func.func @broadcast_constants() {
  %f = arith.constant 1.5 : f32
  %a = vector.broadcast %f : f32 to vector<8xf32>
  %v = arith.constant dense<[1, 2]> : vector<2xi32>
  %b = vector.broadcast %v : vector<2xi32> to vector<3x2xi32>
  %t = arith.constant true
  %c = vector.broadcast %t : i1 to vector<4xi1>
  "test.use"(%a, %b, %c) : (vector<8xf32>, vector<3x2xi32>, vector<4xi1>) -> ()
  return
}

// CHECK-LABEL: func.func @broadcast_chains(
// CHECK-SAME:      %[[X:.*]]: f32, %[[V:.*]]: vector<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = vector.broadcast %[[X]] : f32 to vector<2x4xf32>
// CHECK-NEXT:    "test.use"(%[[B]], %[[V]]) : (vector<2x4xf32>, vector<4xf32>) -> ()
// CHECK-NEXT:    return
func.func @broadcast_chains(%x: f32, %v: vector<4xf32>) {
  %a = vector.broadcast %x : f32 to vector<4xf32>
  %b = vector.broadcast %a : vector<4xf32> to vector<2x4xf32>
  %same = vector.broadcast %v : vector<4xf32> to vector<4xf32>
  "test.use"(%b, %same) : (vector<2x4xf32>, vector<4xf32>) -> ()
  return
}

// f32 lanes added in order: ((1e8 + 1) + 1) - 1e8 is 0 in f32 (a tree would give 2).
// CHECK-LABEL: func.func @reduction_constants(
// CHECK-DAG:     %[[S:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[M:.*]] = arith.constant -7 : i32
// CHECK-DAG:     %[[X:.*]] = arith.constant -13 : i32
// CHECK-DAG:     %[[N:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG:     %[[F:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NOT:     vector.reduction
// CHECK:         "test.use"(%[[S]], %[[M]], %[[X]], %[[N]], %[[F]])
func.func @reduction_constants() {
  %v = arith.constant dense<[1.0e8, 1.0, 1.0, -1.0e8]> : vector<4xf32>
  %s = vector.reduction <add>, %v : vector<4xf32> into f32
  %i = arith.constant dense<[4, -7, 2, 9]> : vector<4xi32>
  %m = vector.reduction <minsi>, %i : vector<4xi32> into i32
  %acc = arith.constant 5 : i32
  %x = vector.reduction <xor>, %i, %acc : vector<4xi32> into i32
  %n = arith.constant dense<[1.0, 0x7FC00000, -3.0]> : vector<3xf32>
  %mx = vector.reduction <maximumf>, %n : vector<3xf32> into f32
  %mn = vector.reduction <minnumf>, %n, %s : vector<3xf32> into f32
  "test.use"(%s, %m, %x, %mx, %mn) : (f32, i32, i32, f32, f32) -> ()
  return
}

// CHECK-LABEL: func.func @reduction_of_broadcast(
// CHECK-SAME:      %[[X:.*]]: f32, %[[I:.*]]: i32)
// CHECK:         %[[B:.*]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK-NEXT:    %[[S:.*]] = vector.reduction <add>, %[[B]] : vector<8xf32> into f32
// CHECK-NEXT:    %[[Q:.*]] = vector.reduction <maxnumf>, %[[B]], %[[X]] : vector<8xf32> into f32
// CHECK-NEXT:    "test.use"(%[[X]], %[[I]], %[[S]], %[[X]], %[[Q]]) : (f32, i32, f32, f32, f32) -> ()
func.func @reduction_of_broadcast(%x: f32, %i: i32) {
  %b = vector.broadcast %x : f32 to vector<8xf32>
  %bi = vector.broadcast %i : i32 to vector<4xi32>
  %one = vector.broadcast %x : f32 to vector<1xf32>
  %m = vector.reduction <minimumf>, %b : vector<8xf32> into f32
  %a = vector.reduction <or>, %bi : vector<4xi32> into i32
  %s = vector.reduction <add>, %b : vector<8xf32> into f32
  %p = vector.reduction <mul>, %one : vector<1xf32> into f32
  %q = vector.reduction <maxnumf>, %b, %x : vector<8xf32> into f32
  "test.use"(%m, %a, %s, %p, %q) : (f32, i32, f32, f32, f32) -> ()
  return
}

// A vector accumulator through a loop: elementwise folds apply to vectors (x * 1.0 -> x).
// CHECK-LABEL: func.func @vector_identities(
// CHECK-SAME:      %[[X:.*]]: vector<8xf32>)
// CHECK-NEXT:    %[[R:.*]] = vector.reduction <add>, %[[X]] : vector<8xf32> into f32
// CHECK-NEXT:    return %[[R]] : f32
func.func @vector_identities(%x: vector<8xf32>) -> f32 {
  %one = arith.constant 1.0 : f32
  %ones = vector.broadcast %one : f32 to vector<8xf32>
  %y = arith.mulf %x, %ones : vector<8xf32>
  %r = vector.reduction <add>, %y : vector<8xf32> into f32
  return %r : f32
}

// Both ops are pure: unused, they go.
// CHECK-LABEL: func.func @dead(
// CHECK-NEXT:    return
func.func @dead(%x: f32, %v: vector<4xi32>) {
  %b = vector.broadcast %x : f32 to vector<8xf32>
  %r = vector.reduction <add>, %v : vector<4xi32> into i32
  return
}

// vector.extract folds as MLIR's does: any element of a splat of x is x, an element or a
// row of a constant is a constant, and an empty position is the vector itself.

// CHECK-LABEL: func.func @extract_folds(
// CHECK-SAME:      %[[X:.*]]: f32, %[[V:.*]]: vector<16xf32>)
// CHECK-DAG:     %[[ROW:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : vector<4xf32>
// CHECK-DAG:     %[[E:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-NOT:     vector.extract
// CHECK:         return %[[X]], %[[E]], %[[ROW]], %[[V]]
func.func @extract_folds(%x: f32, %v: vector<16xf32>) -> (f32, f32, vector<4xf32>, vector<16xf32>) {
  %b = vector.broadcast %x : f32 to vector<16xf32>
  %a = vector.extract %b[5] : f32 from vector<16xf32>
  %c = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : vector<2x4xf32>
  %e = vector.extract %c[1, 2] : f32 from vector<2x4xf32>
  %r = vector.extract %c[0] : vector<4xf32> from vector<2x4xf32>
  %i = vector.extract %v[] : vector<16xf32> from vector<16xf32>
  return %a, %e, %r, %i : f32, f32, vector<4xf32>, vector<16xf32>
}
