// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s
// RUN: irkit-opt %s -p graph-raise-control-flow,autodiff,canonicalize,cse | FileCheck %s --check-prefix=RAISED

// Derivatives of conditionals. In dataflow form the backward graph is dataflow control flow
// too: each switch's cotangent is a merge of its two sides' (switch -> merge), and the seed
// of a merge goes back to input i through a switch on `index == i` (merge -> switch), so at
// run time the untaken branch's cotangent ops are dead. A graph.if is differentiated into
// another graph.if on the same predicate whose regions hold only what the derivative reads.

// The gate model, `sum(x) < sum(y) ? x + z : y * y`, as the DSL emits it.
// CHECK-LABEL: func.func @gate(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[Y:[^:]*]]: tensor<?xf32>, %[[Z:[^:]*]]: tensor<?xf32>, %[[S:[^:]*]]: tensor<?xf32>)
// CHECK-DAG:     %[[C0:.*]] = graph.constant dense<0> : tensor<i32>
// CHECK-DAG:     %[[C1:.*]] = graph.constant dense<1> : tensor<i32>
// CHECK:         %[[P:.*]] = graph.cmp {{.*}} {predicate = "lt"}
// CHECK:         %[[SX:.*]]:2 = graph.switch %[[X]], %[[P]]
// CHECK:         %[[SZ:.*]]:2 = graph.switch %[[Z]], %[[P]]
// CHECK:         %[[SY:.*]]:2 = graph.switch %[[Y]], %[[P]]
// CHECK:         %[[M:.*]]:2 = graph.merge
// CHECK:         %[[I0:.*]] = graph.cmp %[[M]]#1, %[[C0]] {predicate = "eq"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK:         %[[R0:.*]]:2 = graph.switch %[[S]], %[[I0]]
// CHECK:         %[[I1:.*]] = graph.cmp %[[M]]#1, %[[C1]] {predicate = "eq"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK:         %[[R1:.*]]:2 = graph.switch %[[S]], %[[I1]]
// CHECK-DAG:     graph.mul {{.*}}%[[R0]]#1
// CHECK-DAG:     %[[ZY:.*]] = graph.zeros_like %[[SY]]#1
// CHECK-DAG:     %[[GY:.*]]:2 = graph.merge %{{.*}}, %[[ZY]]
// CHECK-DAG:     %[[ZZ:.*]] = graph.zeros_like %[[SZ]]#0
// CHECK-DAG:     %[[GZ:.*]]:2 = graph.merge %[[ZZ]], %[[R1]]#1
// CHECK-DAG:     %[[ZX:.*]] = graph.zeros_like %[[SX]]#0
// CHECK-DAG:     %[[GX:.*]]:2 = graph.merge %[[ZX]], %[[R1]]#1
// CHECK-NOT:     graph.if
// CHECK:         return %[[GX]]#0, %[[GY]]#0, %[[GZ]]#0

// Raised first, the same derivative is a graph.if on the predicate: the then branch passes
// the seed to x and z (nothing of x + z is recomputed), the else branch gives y's.
// RAISED-LABEL: func.func @gate(
// RAISED-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[Y:[^:]*]]: tensor<?xf32>, %[[Z:[^:]*]]: tensor<?xf32>, %[[S:[^:]*]]: tensor<?xf32>)
// RAISED-NOT:     graph.switch
// RAISED:         %[[P:.*]] = graph.cmp {{.*}} {predicate = "lt"}
// RAISED-NEXT:    %[[G:.*]]:3 = graph.if %[[P]] -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
// RAISED-NEXT:      %[[ZY:.*]] = graph.zeros_like %[[Y]]
// RAISED-NEXT:      graph.yield %[[S]], %[[S]], %[[ZY]]
// RAISED-NEXT:    } else {
// RAISED-NOT:       graph.mul %[[Y]], %[[Y]]
// RAISED-DAG:       graph.mul {{.*}}%[[S]]
// RAISED-DAG:       %[[ZX:.*]] = graph.zeros_like %[[X]]
// RAISED-DAG:       %[[ZZ:.*]] = graph.zeros_like %[[Z]]
// RAISED:           graph.yield %[[ZX]], %[[ZZ]], %{{.*}} : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
// RAISED-NEXT:    }
// RAISED-NOT:     graph.merge
// RAISED:         return %[[G]]#0, %[[G]]#2, %[[G]]#1
func.func @gate(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>, %s: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %sx = graph.reduce_sum %x : (tensor<?xf32>) -> tensor<f32>
  %sy = graph.reduce_sum %y : (tensor<?xf32>) -> tensor<f32>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %zf, %zt = graph.switch %z, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %yf, %yt = graph.switch %y, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %a = graph.add %xt, %zt : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %b = graph.mul %yf, %yf : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r, %i = graph.merge %b, %a : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
  %g:3 = autodiff.grad %r seed %s wrt %x, %y, %z : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %g#0, %g#1, %g#2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// Forward mode switches each tangent on the predicate and merges the branches' tangents;
// the forward x + z and its switches are gone.
// CHECK-LABEL: func.func @gate_jvp(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[Y:[^:]*]]: tensor<?xf32>, %[[Z:[^:]*]]: tensor<?xf32>,
// CHECK-SAME:      %[[U:[^:]*]]: tensor<?xf32>, %[[V:[^:]*]]: tensor<?xf32>, %[[W:[^:]*]]: tensor<?xf32>)
// CHECK:         %[[P:.*]] = graph.cmp {{.*}} {predicate = "lt"}
// CHECK-NOT:     graph.switch %[[X]]
// CHECK-NOT:     graph.switch %[[Z]]
// CHECK-DAG:     %[[SU:.*]]:2 = graph.switch %[[U]], %[[P]]
// CHECK-DAG:     %[[SV:.*]]:2 = graph.switch %[[V]], %[[P]]
// CHECK-DAG:     %[[SW:.*]]:2 = graph.switch %[[W]], %[[P]]
// CHECK-DAG:     %[[TA:.*]] = graph.add %[[SU]]#1, %[[SW]]#1
// CHECK-DAG:     graph.mul {{.*}}%[[SV]]#0
// CHECK:         %[[T:.*]]:2 = graph.merge %{{.*}}, %[[TA]]
// CHECK-NEXT:    return %[[T]]#0

// RAISED-LABEL: func.func @gate_jvp(
// RAISED-SAME:      %[[X:[^:]*]]: tensor<?xf32>, %[[Y:[^:]*]]: tensor<?xf32>, %[[Z:[^:]*]]: tensor<?xf32>,
// RAISED-SAME:      %[[U:[^:]*]]: tensor<?xf32>, %[[V:[^:]*]]: tensor<?xf32>, %[[W:[^:]*]]: tensor<?xf32>)
// RAISED:         %[[P:.*]] = graph.cmp {{.*}} {predicate = "lt"}
// RAISED-NEXT:    %[[T:.*]] = graph.if %[[P]] -> (tensor<?xf32>) {
// RAISED-NEXT:      %[[TA:.*]] = graph.add %[[U]], %[[W]]
// RAISED-NEXT:      graph.yield %[[TA]]
// RAISED-NEXT:    } else {
// RAISED-NOT:       graph.mul %[[Y]], %[[Y]]
// RAISED:           graph.yield
// RAISED-NEXT:    }
// RAISED-NEXT:    return %[[T]]
func.func @gate_jvp(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>, %u: tensor<?xf32>, %v: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %sx = graph.reduce_sum %x : (tensor<?xf32>) -> tensor<f32>
  %sy = graph.reduce_sum %y : (tensor<?xf32>) -> tensor<f32>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %zf, %zt = graph.switch %z, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %yf, %yt = graph.switch %y, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %a = graph.add %xt, %zt : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %b = graph.mul %yf, %yf : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r, %i = graph.merge %b, %a : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
  %t = autodiff.jvp %r wrt %x, %y, %z along %u, %v, %w : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %t : tensor<?xf32>
}

// A graph.if written as such: its derivative if yields one cotangent per captured value,
// zeros (a constant, the shapes being static) from the branch that does not read it. The
// forward if, now unused, is gone.
// CHECK-LABEL: func.func @gate_if(
// CHECK-SAME:      %[[P:[^:]*]]: tensor<i1>, %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>, %[[Z:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]]:3 = graph.if %[[P]] -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:      graph.yield %[[S]], %[[S]], %[[ZERO]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NOT:       graph.mul %[[Y]], %[[Y]]
// CHECK:           graph.yield %[[ZERO]], %[[ZERO]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#2, %[[G]]#1
func.func @gate_if(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %s: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = graph.if %p -> (tensor<4xf32>) {
    %a = graph.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %a : tensor<4xf32>
  } else {
    %b = graph.mul %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %b : tensor<4xf32>
  }
  %g:3 = autodiff.grad %r seed %s wrt %x, %y, %z : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %g#0, %g#1, %g#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// The tangent if recomputes exp(x), which the rule of the product reads, but not the
// product itself; the branch that does not depend on x yields zeros.
// CHECK-LABEL: func.func @if_jvp(
// CHECK-SAME:      %[[P:[^:]*]]: tensor<i1>, %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>, %[[U:[^:]*]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:         %[[R:.*]] = graph.if %[[P]] -> (tensor<4xf32>) {
// CHECK:         %[[T:.*]] = graph.if %[[P]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[E:.*]] = graph.exp %[[X]]
// CHECK-NOT:       graph.mul %[[E]], %[[Y]]
// CHECK:           graph.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      graph.yield %[[ZERO]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]], %[[T]]
func.func @if_jvp(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>, %u: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = graph.if %p -> (tensor<4xf32>) {
    %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    %m = graph.mul %e, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %m : tensor<4xf32>
  } else {
    graph.yield %y : tensor<4xf32>
  }
  %t = autodiff.jvp %r wrt %x along %u : (tensor<4xf32>) -> tensor<4xf32>
  return %r, %t : tensor<4xf32>, tensor<4xf32>
}
