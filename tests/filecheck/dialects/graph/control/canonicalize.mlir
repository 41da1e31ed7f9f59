// RUN: irkit-opt %s -p canonicalize --verify-each=numeric | FileCheck %s

// Canonical forms of graph control flow: a merge of one input is that input; a switch on a
// constant forwards its data when the dead side is unused; graph.if on a constant is the
// taken region, and an if drops the results nobody uses.

// CHECK-LABEL: func.func @merge_single(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[Z:.*]] = graph.constant dense<0> : tensor<i32>
// CHECK-NOT:     graph.merge
// CHECK:         return %[[X]], %[[Z]]
func.func @merge_single(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %v, %i = graph.merge %x : (tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %v, %i : tensor<3xf32>, tensor<i32>
}

// The single input may be dead (it comes from a switch), so its used index must stay dead
// with it: only the value is forwarded.
// CHECK-LABEL: func.func @merge_single_maybe_dead(
// CHECK:         %[[S:.*]]:2 = graph.switch
// CHECK-NEXT:    %[[M:.*]]:2 = graph.merge %[[S]]#1 :
// CHECK-NEXT:    %[[W:.*]]:2 = graph.merge %[[S]]#0, %[[M]]#1
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[S]]#1
// CHECK-NEXT:    %[[O:.*]]:2 = graph.merge %[[S]]#0, %[[N]]
// CHECK-NEXT:    return %[[W]]#0, %[[O]]#0
func.func @merge_single_maybe_dead(%x: tensor<i32>, %p: tensor<i1>) -> (tensor<i32>, tensor<i32>) {
  %f, %t = graph.switch %x, %p : (tensor<i32>, tensor<i1>) -> (tensor<i32>, tensor<i32>)
  %v, %i = graph.merge %t : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
  %w, %j = graph.merge %f, %i : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  %u, %k = graph.merge %v : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
  %n = graph.neg %u : (tensor<i32>) -> tensor<i32>
  %o, %l = graph.merge %f, %n : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  return %w, %o : tensor<i32>, tensor<i32>
}

// CHECK-LABEL: func.func @switch_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>)
// CHECK-NOT:     graph.switch
// CHECK:         %[[N:.*]] = graph.neg %[[X]]
// CHECK:         return %[[N]]
func.func @switch_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %true = graph.constant dense<true> : tensor<i1>
  %f, %t = graph.switch %x, %true : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %n = graph.neg %t : (tensor<3xf32>) -> tensor<3xf32>
  return %n : tensor<3xf32>
}

// The dead side is used: it stays (its users must see DEAD, which no value stands for).
// CHECK-LABEL: func.func @switch_constant_dead_used(
// CHECK:         graph.switch
// CHECK:         graph.merge
func.func @switch_constant_dead_used(%x: tensor<3xf32>) -> tensor<3xf32> {
  %false = graph.constant dense<false> : tensor<i1>
  %f, %t = graph.switch %x, %false : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %n = graph.neg %t : (tensor<3xf32>) -> tensor<3xf32>
  %v, %i = graph.merge %f, %n : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %v : tensor<3xf32>
}

// CHECK-LABEL: func.func @if_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NOT:     graph.if
// CHECK:         %[[A:.*]] = graph.add %[[X]], %[[Y]]
// CHECK-NOT:     graph.if
// CHECK:         %[[M:.*]] = graph.mul %[[Y]], %[[Y]]
// CHECK:         return %[[A]], %[[M]]
func.func @if_constant(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %true = graph.constant dense<true> : tensor<i1>
  %false = graph.constant dense<false> : tensor<i1>
  %r = graph.if %true -> (tensor<3xf32>) {
    %a = graph.add %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    graph.yield %a : tensor<3xf32>
  } else {
    graph.yield %x : tensor<3xf32>
  }
  %s = graph.if %false -> (tensor<3xf32>) {
    graph.yield %x : tensor<3xf32>
  } else {
    %m = graph.mul %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    graph.yield %m : tensor<3xf32>
  }
  return %r, %s : tensor<3xf32>, tensor<3xf32>
}

// A false predicate and no else region: the update never happens.
// CHECK-LABEL: func.func @if_constant_no_else(
// CHECK-NOT:     graph.if
// CHECK-NOT:     graph.assign
// CHECK:         return
graph.variable @w : tensor<3xf32> init zeros
func.func @if_constant_no_else(%x: tensor<3xf32>) {
  %false = graph.constant dense<false> : tensor<i1>
  graph.if %false {
    graph.assign @w, %x : tensor<3xf32>
  }
  return
}

// CHECK-LABEL: func.func @if_unused_results(
// CHECK-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = graph.if %[[P]] -> (tensor<3xf32>) {
// CHECK-NEXT:      %[[E:.*]] = graph.exp %[[X]]
// CHECK-NEXT:      graph.yield %[[E]] : tensor<3xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      graph.yield %[[X]] : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @if_unused_results(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r:3 = graph.if %p -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
    %n = graph.neg %x : (tensor<3xf32>) -> tensor<3xf32>
    %e = graph.exp %x : (tensor<3xf32>) -> tensor<3xf32>
    graph.yield %n, %e, %x : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  } else {
    graph.yield %x, %x, %x : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
  return %r#1 : tensor<3xf32>
}

// All results unused and pure regions: the if is dead code.
// CHECK-LABEL: func.func @if_dead(
// CHECK-NOT:     graph.if
// CHECK:         return
func.func @if_dead(%p: tensor<i1>, %x: tensor<3xf32>) {
  %r = graph.if %p -> (tensor<3xf32>) {
    %n = graph.neg %x : (tensor<3xf32>) -> tensor<3xf32>
    graph.yield %n : tensor<3xf32>
  } else {
    graph.yield %x : tensor<3xf32>
  }
  return
}
