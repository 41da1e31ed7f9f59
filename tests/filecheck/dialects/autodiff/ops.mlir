// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The autodiff dialect's requests parse and print back in custom form, through a second
// irkit-opt and through the generic form (operandSegmentSizes tells the operand groups
// apart there and is elided from the custom form). Nothing is expanded: no pass runs.

// A scalar loss needs no seed: it is seeded with 1.
// CHECK-LABEL: func.func @grad_unseeded(
// CHECK-SAME:      %[[W:.*]]: tensor<4x2xf32>, %[[B:.*]]: tensor<2xf32>, %[[X:.*]]: tensor<?x4xf32>)
// CHECK:         %[[L:.*]] = graph.reduce_sum
// CHECK-NEXT:    %[[G:.*]]:2 = autodiff.grad %[[L]] wrt %[[W]], %[[B]] : (tensor<f32>) -> (tensor<4x2xf32>, tensor<2xf32>)
// CHECK-NEXT:    return %[[G]]#0, %[[G]]#1 : tensor<4x2xf32>, tensor<2xf32>
// GENERIC-LABEL: sym_name = "grad_unseeded"
// GENERIC:       "autodiff.grad"(%{{.*}}, %arg0, %arg1) <{operandSegmentSizes = array<i32: 1, 0, 2>}> : (tensor<f32>, tensor<4x2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>)
func.func @grad_unseeded(%w: tensor<4x2xf32>, %b: tensor<2xf32>, %x: tensor<?x4xf32>)
    -> (tensor<4x2xf32>, tensor<2xf32>) {
  %h = graph.matmul %x, %w : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
  %y = graph.add %h, %b : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?x2xf32>
  %l = graph.reduce_sum %y : (tensor<?x2xf32>) -> tensor<f32>
  %dw, %db = autodiff.grad %l wrt %w, %b : (tensor<f32>) -> (tensor<4x2xf32>, tensor<2xf32>)
  return %dw, %db : tensor<4x2xf32>, tensor<2xf32>
}

// A seeded request: the vector-Jacobian product s^T J of a non-scalar value; one result
// prints without parentheses.
// CHECK-LABEL: func.func @grad_seeded(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf64>, %[[S:.*]]: tensor<3xf64>)
// CHECK-NEXT:    %[[Y:.*]] = graph.tanh %[[X]]
// CHECK-NEXT:    %[[G:.*]] = autodiff.grad %[[Y]] seed %[[S]] wrt %[[X]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    return %[[G]] : tensor<3xf64>
// GENERIC-LABEL: sym_name = "grad_seeded"
// GENERIC:       "autodiff.grad"(%{{.*}}, %arg1, %arg0) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
func.func @grad_seeded(%x: tensor<3xf64>, %s: tensor<3xf64>) -> tensor<3xf64> {
  %y = graph.tanh %x : (tensor<3xf64>) -> tensor<3xf64>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %g : tensor<3xf64>
}

// Several values with their seeds: the gradient of s1 . y1 + s2 . y2.
// CHECK-LABEL: func.func @grad_many(
// CHECK:         autodiff.grad %{{.*}}, %{{.*}} seed %{{.*}}, %{{.*}} wrt %{{.*}} : (tensor<2xf32>, tensor<f32>, tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
func.func @grad_many(%x: tensor<2xf32>, %s1: tensor<2xf32>, %s2: tensor<f32>) -> tensor<2xf32> {
  %y1 = graph.exp %x : (tensor<2xf32>) -> tensor<2xf32>
  %y2 = graph.reduce_max %x : (tensor<2xf32>) -> tensor<f32>
  %g = autodiff.grad %y1, %y2 seed %s1, %s2 wrt %x
      : (tensor<2xf32>, tensor<f32>, tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %g : tensor<2xf32>
}

// Forward mode: the tangent of y when x moves along v (J v).
// CHECK-LABEL: func.func @jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[Y:.*]] = graph.reduce_sum %[[X]]
// CHECK-NEXT:    %[[T:.*]] = autodiff.jvp %[[Y]] wrt %[[X]] along %[[V]] : (tensor<3xf32>) -> tensor<f32>
// CHECK-NEXT:    return %[[T]] : tensor<f32>
// GENERIC-LABEL: sym_name = "jvp"
// GENERIC:       "autodiff.jvp"(%{{.*}}, %arg0, %arg1) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
func.func @jvp(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<f32> {
  %y = graph.reduce_sum %x : (tensor<3xf32>) -> tensor<f32>
  %t = autodiff.jvp %y wrt %x along %v : (tensor<3xf32>) -> tensor<f32>
  return %t : tensor<f32>
}

// Several values and inputs at once; a request may use another's results (a Hessian-vector
// product is the jvp of a grad), and takes attributes.
// CHECK-LABEL: func.func @hvp(
// CHECK:         %[[G:.*]]:2 = autodiff.grad %[[L:.*]] wrt %[[A:.*]], %[[B:.*]] : (tensor<f64>) -> (tensor<2xf64>, tensor<f64>)
// CHECK-NEXT:    %[[H:.*]]:2 = autodiff.jvp %[[G]]#0, %[[G]]#1 wrt %[[A]], %[[B]] along %{{.*}}, %{{.*}} {note = "hvp"} : (tensor<2xf64>, tensor<f64>) -> (tensor<2xf64>, tensor<f64>)
// CHECK-NEXT:    return %[[H]]#0, %[[H]]#1
func.func @hvp(%a: tensor<2xf64>, %b: tensor<f64>, %va: tensor<2xf64>, %vb: tensor<f64>)
    -> (tensor<2xf64>, tensor<f64>) {
  %p = graph.mul %a, %b : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  %l = graph.reduce_sum %p : (tensor<2xf64>) -> tensor<f64>
  %g:2 = autodiff.grad %l wrt %a, %b : (tensor<f64>) -> (tensor<2xf64>, tensor<f64>)
  %h:2 = autodiff.jvp %g#0, %g#1 wrt %a, %b along %va, %vb {note = "hvp"}
      : (tensor<2xf64>, tensor<f64>) -> (tensor<2xf64>, tensor<f64>)
  return %h#0, %h#1 : tensor<2xf64>, tensor<f64>
}
