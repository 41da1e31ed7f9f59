// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s
// RUN: irkit-opt %s -p autodiff,canonicalize,cse --verify-each=numeric | FileCheck %s
// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s --check-prefix=MULS

// The lectures' worked examples, as backward (and tangent) graphs after the autodiff pass
// and canonicalize,cse. The seed 1 of a scalar loss folds away: no multiplication by one is
// left, no zeros are added, and the forward values are reused, never recomputed (each
// forward op appears once, before the derivative ops).

// y = ln(x1) + x1 x2 - sin(x2): dy/dx1 = 1/x1 + x2, dy/dx2 = x1 - cos(x2).
// CHECK-LABEL: func.func @seed_ad(
// CHECK-SAME:      %[[X1:.*]]: tensor<f32>, %[[X2:.*]]: tensor<f32>)
// CHECK-DAG:     %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[LOG:.*]] = graph.log %[[X1]]
// CHECK-DAG:     %[[P:.*]] = graph.mul %[[X1]], %[[X2]]
// CHECK-DAG:     %[[SIN:.*]] = graph.sin %[[X2]]
// CHECK:         %[[Y:.*]] = graph.sub %{{.*}}, %[[SIN]]
// CHECK-NOT:     graph.mul
// CHECK-NOT:     graph.log
// CHECK-NOT:     graph.sin
// CHECK-DAG:     %[[COS:.*]] = graph.cos %[[X2]]
// CHECK-DAG:     %[[INV:.*]] = graph.div %[[ONE]], %[[X1]]
// CHECK-DAG:     %[[D1:.*]] = graph.add %[[X2]], %[[INV]]
// CHECK-DAG:     %[[D2:.*]] = graph.sub %[[X1]], %[[COS]]
// CHECK-NOT:     graph.mul
// CHECK-NOT:     graph.zeros_like
// CHECK:         return %[[Y]], %[[D1]], %[[D2]]
func.func @seed_ad(%x1: tensor<f32>, %x2: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %l = graph.log %x1 : (tensor<f32>) -> tensor<f32>
  %p = graph.mul %x1, %x2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = graph.add %l, %p : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %s = graph.sin %x2 : (tensor<f32>) -> tensor<f32>
  %y = graph.sub %a, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g:2 = autodiff.grad %y wrt %x1, %x2 : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %y, %g#0, %g#1 : tensor<f32>, tensor<f32>, tensor<f32>
}

// Forward mode, one sweep per input (the lecture's tangent table): the same derivatives,
// and the forward ops the tangents do not need are gone.
// CHECK-LABEL: func.func @seed_ad_forward(
// CHECK-SAME:      %[[X1:.*]]: tensor<f32>, %[[X2:.*]]: tensor<f32>)
// CHECK-NOT:     graph.log
// CHECK-NOT:     graph.sin
// CHECK-NOT:     graph.mul
// CHECK-DAG:     %[[INV:.*]] = graph.div %{{.*}}, %[[X1]]
// CHECK-DAG:     %[[T1:.*]] = graph.add %[[INV]], %[[X2]]
// CHECK-DAG:     %[[COS:.*]] = graph.cos %[[X2]]
// CHECK-DAG:     %[[T2:.*]] = graph.sub %[[X1]], %[[COS]]
// CHECK:         return %[[T1]], %[[T2]]
func.func @seed_ad_forward(%x1: tensor<f32>, %x2: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %l = graph.log %x1 : (tensor<f32>) -> tensor<f32>
  %p = graph.mul %x1, %x2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = graph.add %l, %p : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %s = graph.sin %x2 : (tensor<f32>) -> tensor<f32>
  %y = graph.sub %a, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %t1 = autodiff.jvp %y wrt %x1 along %one : (tensor<f32>) -> tensor<f32>
  %t2 = autodiff.jvp %y wrt %x2 along %one : (tensor<f32>) -> tensor<f32>
  return %t1, %t2 : tensor<f32>, tensor<f32>
}

// y_hat = w x + b, L = (y_hat - y)^2: dL/db = 2 (y_hat - y) and dL/dw = dL/db * x, sharing
// the factor; pow with the constant exponent 2 leaves no pow of 1 (and no log of the base).
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:      %[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<f32>, %[[W:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>)
// CHECK-DAG:     %[[TWO:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[WX:.*]] = graph.mul %[[W]], %[[X]]
// CHECK:         %[[YH:.*]] = graph.add %[[WX]], %[[B]]
// CHECK:         %[[E:.*]] = graph.sub %[[YH]], %[[Y]]
// CHECK:         %[[L:.*]] = graph.pow %[[E]], %[[TWO]]
// CHECK-NOT:     graph.pow
// CHECK-NOT:     graph.log
// CHECK-NOT:     graph.sub
// CHECK:         %[[DB:.*]] = graph.mul %[[E]], %[[TWO]]
// CHECK:         %[[DW:.*]] = graph.mul %[[DB]], %[[X]]
// CHECK-NOT:     graph.
// CHECK:         return %[[L]], %[[DW]], %[[DB]]
func.func @linear(%x: tensor<f32>, %y: tensor<f32>, %w: tensor<f32>, %b: tensor<f32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %wx = graph.mul %w, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %yh = graph.add %wx, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %e = graph.sub %yh, %y : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %L = graph.pow %e, %two : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g:2 = autodiff.grad %L wrt %w, %b : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %L, %g#0, %g#1 : tensor<f32>, tensor<f32>, tensor<f32>
}

// f = (exp(v1) + 1) exp(v1): df/dv1 = ((e + 1) + e) e, with e = exp(v1) computed once.
// CHECK-LABEL: func.func @exp_example(
// CHECK-SAME:      %[[V:.*]]: tensor<f32>)
// CHECK:         %[[E:.*]] = graph.exp %[[V]]
// CHECK:         %[[A:.*]] = graph.add %[[E]], %{{.*}}
// CHECK:         %[[F:.*]] = graph.mul %[[A]], %[[E]]
// CHECK-NOT:     graph.exp
// CHECK:         %[[S:.*]] = graph.add %{{.*}}, %{{.*}}
// CHECK:         %[[G:.*]] = graph.mul %[[S]], %[[E]]
// CHECK-NOT:     graph.
// CHECK:         return %[[F]], %[[G]]
func.func @exp_example(%v: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %e = graph.exp %v : (tensor<f32>) -> tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.add %e, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %f = graph.mul %a, %e : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g = autodiff.grad %f wrt %v : (tensor<f32>) -> tensor<f32>
  return %f, %g : tensor<f32>, tensor<f32>
}

// Grad of grad: f'' = (4 e + 1) e. The second derivative is the first's graph
// differentiated again; exp is still computed once and only one product is left.
// CHECK-LABEL: func.func @exp_second(
// CHECK:         %[[E:.*]] = graph.exp
// CHECK-NOT:     graph.exp
// CHECK:         %[[H:.*]] = graph.mul %{{.*}}, %[[E]]
// CHECK-NOT:     graph.
// CHECK:         return %[[H]]
// MULS-LABEL:    func.func @exp_second(
// MULS-COUNT-1:  graph.mul
// MULS-NOT:      graph.mul
func.func @exp_second(%v: tensor<f32>) -> tensor<f32> {
  %e = graph.exp %v : (tensor<f32>) -> tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.add %e, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %f = graph.mul %a, %e : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g = autodiff.grad %f wrt %v : (tensor<f32>) -> tensor<f32>
  %h = autodiff.grad %g wrt %v : (tensor<f32>) -> tensor<f32>
  return %h : tensor<f32>
}
