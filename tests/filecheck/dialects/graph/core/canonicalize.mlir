// RUN: irkit-opt %s -p canonicalize --verify-each=numeric | FileCheck %s

// Canonicalization around the graph dialect's storage: constants are deduplicated and
// hoisted to the entry of their function, unused constants disappear, and variables, reads
// and assignments stay (a read observes state, an assignment changes it).

// CHECK: graph.variable @w : tensor<3xf32> init ones
// CHECK: graph.variable @unused : tensor<2xf32> init zeros
graph.variable @w : tensor<3xf32> init ones
graph.variable @unused : tensor<2xf32> init zeros

// Two equal constants become one, at the top of the function; the unused one is erased.
// CHECK-LABEL: func.func @dedup
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[C:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NOT: graph.constant
// CHECK: %[[A:.*]] = graph.add %[[X]], %[[C]]
// CHECK-NEXT: %[[B:.*]] = graph.mul %[[A]], %[[C]]
// CHECK-NEXT: return %[[B]]
func.func @dedup(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c1 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %a = graph.add %x, %c1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dead = graph.constant dense<4.0> : tensor<f32>
  %c2 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = graph.mul %a, %c2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %b : tensor<3xf32>
}

// Constants that differ only in type or in the sign of zero stay apart.
// CHECK-LABEL: func.func @distinct
// CHECK-DAG: graph.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-DAG: graph.constant dense<-0.000000e+00> : tensor<2xf32>
// CHECK-DAG: graph.constant dense<0.000000e+00> : tensor<2xf64>
// CHECK-DAG: graph.constant dense<0> : tensor<2xi32>
func.func @distinct() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf64>, tensor<2xi32>) {
  %0 = graph.constant dense<0.0> : tensor<2xf32>
  %1 = graph.constant dense<-0.0> : tensor<2xf32>
  %2 = graph.constant dense<0.0> : tensor<2xf64>
  %3 = graph.constant dense<0> : tensor<2xi32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf64>, tensor<2xi32>
}

// A read whose value is unused still stays (it is not pure), and so does every assignment;
// a read after an assignment is not forwarded, and the two reads are not merged.
// CHECK-LABEL: func.func @state
// CHECK-SAME: (%[[V:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[R0:.*]] = graph.read @w : tensor<3xf32>
// CHECK-NEXT: graph.read @w : tensor<3xf32>
// CHECK-NEXT: %[[S:.*]] = graph.add %[[R0]], %[[V]]
// CHECK-NEXT: graph.assign @w, %[[S]] : tensor<3xf32>
// CHECK-NEXT: graph.assign @w, %[[S]] : tensor<3xf32>
// CHECK-NEXT: %[[R1:.*]] = graph.read @w : tensor<3xf32>
// CHECK-NEXT: return %[[R1]]
func.func @state(%v: tensor<3xf32>) -> tensor<3xf32> {
  %r0 = graph.read @w : tensor<3xf32>
  %unused = graph.read @w : tensor<3xf32>
  %s = graph.add %r0, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  graph.assign @w, %s : tensor<3xf32>
  graph.assign @w, %s : tensor<3xf32>
  %r1 = graph.read @w : tensor<3xf32>
  return %r1 : tensor<3xf32>
}

// A fold of a constant expression that reads no variable gives a constant even next to
// reads: 1 + 2 = 3.
// CHECK-LABEL: func.func @fold_beside_state
// CHECK: %[[C:.*]] = graph.constant dense<3.000000e+00> : tensor<3xf32>
// CHECK: %[[R:.*]] = graph.read @w
// CHECK: graph.add %[[R]], %[[C]]
func.func @fold_beside_state() -> tensor<3xf32> {
  %one = graph.constant dense<1.0> : tensor<3xf32>
  %two = graph.constant dense<2.0> : tensor<3xf32>
  %three = graph.add %one, %two : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = graph.read @w : tensor<3xf32>
  %s = graph.add %r, %three : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}
