// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Control flow of the graph dialect in custom and generic form: the dataflow pair
// graph.switch / graph.merge, and the structured graph.if / graph.yield. A graph.yield
// without operands is implicit in the custom form.

// CHECK-LABEL: func.func @switch_merge(
// CHECK-SAME:      %[[X:.*]]: tensor<?xf32>, %[[P:.*]]: tensor<i1>)
// CHECK-NEXT:    %[[S:.*]]:2 = graph.switch %[[X]], %[[P]] : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[S]]#1
// CHECK-NEXT:    %[[M:.*]]:2 = graph.merge %[[S]]#0, %[[N]] : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
// CHECK-NEXT:    return %[[M]]#0, %[[M]]#1 : tensor<?xf32>, tensor<i32>
// GENERIC-LABEL: sym_name = "switch_merge"
// GENERIC:       "graph.switch"(%arg0, %arg1) : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
// GENERIC:       "graph.merge"(%{{.*}}#0, %{{.*}}) : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
func.func @switch_merge(%x: tensor<?xf32>, %p: tensor<i1>) -> (tensor<?xf32>, tensor<i32>) {
  %f, %t = graph.switch %x, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %n = graph.neg %t : (tensor<?xf32>) -> tensor<?xf32>
  %v, %i = graph.merge %f, %n : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
  return %v, %i : tensor<?xf32>, tensor<i32>
}

// A merge of three inputs (one live at a time) is valid IR too.
// CHECK-LABEL: func.func @merge3(
// CHECK:         graph.merge %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<i32>)
func.func @merge3(%a: tensor<2xi32>, %b: tensor<2xi32>, %c: tensor<2xi32>) -> tensor<2xi32> {
  %v, %i = graph.merge %a, %b, %c : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<i32>)
  return %v : tensor<2xi32>
}

// CHECK-LABEL: func.func @if_results(
// CHECK-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]]:2 = graph.if %[[P]] -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:      %[[A:.*]] = graph.add %[[X]], %[[Y]]
// CHECK-NEXT:      graph.yield %[[A]], %[[X]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      graph.yield %[[Y]], %[[Y]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// GENERIC-LABEL: sym_name = "if_results"
// GENERIC:       "graph.if"(%arg0) ({
// GENERIC:         "graph.yield"(%{{.*}}, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> ()
// GENERIC-NEXT:  }, {
// GENERIC-NEXT:    "graph.yield"(%arg2, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> ()
// GENERIC-NEXT:  }) : (tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
func.func @if_results(%p: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = graph.if %p -> (tensor<4xf32>, tensor<4xf32>) {
    %a = graph.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %a, %x : tensor<4xf32>, tensor<4xf32>
  } else {
    graph.yield %y, %y : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// Without results the else region may be left out, and so may an empty graph.yield.
// CHECK-LABEL: func.func @if_no_else(
// CHECK-NEXT:    graph.if %{{.*}} {
// CHECK-NEXT:      graph.assign @w, %{{.*}} : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// GENERIC-LABEL: sym_name = "if_no_else"
// GENERIC:       "graph.if"(%arg0) ({
// GENERIC-NEXT:    "graph.assign"
// GENERIC-NEXT:    "graph.yield"() : () -> ()
// GENERIC-NEXT:  }, {
// GENERIC-NEXT:  }) : (tensor<i1>) -> ()
graph.variable @w : tensor<3xf32> init zeros
func.func @if_no_else(%p: tensor<i1>, %x: tensor<3xf32>) {
  graph.if %p {
    graph.assign @w, %x : tensor<3xf32>
  }
  return
}

// Nested ifs; the inner one reads values from two levels up.
// CHECK-LABEL: func.func @if_nested(
// CHECK:         graph.if %{{.*}} -> (tensor<f32>) {
// CHECK-NEXT:      %[[I:.*]] = graph.if %{{.*}} -> (tensor<f32>) {
// CHECK-NEXT:        graph.yield %{{.*}} : tensor<f32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        graph.yield %{{.*}} : tensor<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      graph.yield %[[I]] : tensor<f32>
// CHECK-NEXT:    } else {
func.func @if_nested(%p: tensor<i1>, %q: tensor<i1>, %a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %r = graph.if %p -> (tensor<f32>) {
    %i = graph.if %q -> (tensor<f32>) {
      graph.yield %a : tensor<f32>
    } else {
      graph.yield %b : tensor<f32>
    }
    graph.yield %i : tensor<f32>
  } else {
    graph.yield %b : tensor<f32>
  }
  return %r : tensor<f32>
}
