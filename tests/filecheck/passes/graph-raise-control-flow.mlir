// RUN: irkit-opt %s -p graph-raise-control-flow --verify-each=numeric | FileCheck %s
// RUN: irkit-opt %s -p graph-raise-control-flow --verify-diagnostics

// Switch/merge conditionals (the DSL's dataflow form) become graph.if regions; subgraphs that
// are no conditional stay as they are, with a remark saying why.

// `sum(x) < sum(y) ? x + z : y * y`: every value a branch reads comes through a switch.
// CHECK-LABEL: func.func @gate(
// CHECK-SAME:      %[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf32>, %[[Z:.*]]: tensor<?xf32>)
// CHECK:         %[[P:.*]] = graph.cmp
// CHECK-NOT:     graph.switch
// CHECK:         %[[R:.*]] = graph.if %[[P]] -> (tensor<?xf32>) {
// CHECK-NEXT:      %[[A:.*]] = graph.add %[[X]], %[[Z]]
// CHECK-NEXT:      graph.yield %[[A]] : tensor<?xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[B:.*]] = graph.mul %[[Y]], %[[Y]]
// CHECK-NEXT:      graph.yield %[[B]] : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     graph.merge
// CHECK:         return %[[R]] : tensor<?xf32>
func.func @gate(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>) -> tensor<?xf32> {
  %sx = graph.reduce_sum %x : (tensor<?xf32>) -> tensor<f32>
  %sy = graph.reduce_sum %y : (tensor<?xf32>) -> tensor<f32>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %zf, %zt = graph.switch %z, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %yf, %yt = graph.switch %y, %p : (tensor<?xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<?xf32>)
  %a = graph.add %xt, %zt : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %b = graph.mul %yf, %yf : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r, %i = graph.merge %b, %a : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<i32>)
  return %r : tensor<?xf32>
}

// Branches of several ops with two results, merged in (true, false) order; a branch result
// that reads no switch output (the constant) is itself switched; the merge indices become
// casts of the predicate (negated for the (true, false) order).
// CHECK-LABEL: func.func @several(
// CHECK-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>
// CHECK:         %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK:         %[[R:.*]]:2 = graph.if %[[P]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:      %[[E:.*]] = graph.exp %[[X]]
// CHECK-NEXT:      %[[S:.*]] = graph.sin %[[E]]
// CHECK-NEXT:      %[[M:.*]] = graph.mul %[[S]], %[[E]]
// CHECK-NEXT:      graph.yield %[[M]], %[[C]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[N:.*]] = graph.neg %[[X]]
// CHECK-NEXT:      graph.yield %[[X]], %[[N]] : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[NP:.*]] = graph.not %[[P]]
// CHECK-NEXT:    %[[I:.*]] = graph.cast %[[NP]] : (tensor<i1>) -> tensor<i32>
// CHECK-NOT:     graph.switch
// CHECK-NOT:     graph.merge
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[I]]
func.func @several(%p: tensor<i1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<i32>) {
  %c = graph.constant dense<1.0> : tensor<3xf32>
  %xf, %xt = graph.switch %x, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %cf, %ct = graph.switch %c, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %e = graph.exp %xt : (tensor<3xf32>) -> tensor<3xf32>
  %s = graph.sin %e : (tensor<3xf32>) -> tensor<3xf32>
  %m = graph.mul %s, %e : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %n = graph.neg %xf : (tensor<3xf32>) -> tensor<3xf32>
  %r0, %i0 = graph.merge %m, %xf : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  %r1, %i1 = graph.merge %ct, %n : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %r0, %r1, %i0 : tensor<3xf32>, tensor<3xf32>, tensor<i32>
}

// `if a < b { if c < d { x + x } else { x * x } } else { y }`, as the DSL emits it: the inner
// conditional is raised first and then moves, whole, into the outer then region.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<f32>, %[[B:[^:]*]]: tensor<f32>, %[[C:[^:]*]]: tensor<f32>,
// CHECK-SAME:      %[[D:[^:]*]]: tensor<f32>, %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK:         %[[P:.*]] = graph.cmp %[[A]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = graph.if %[[P]] -> (tensor<4xf32>) {
// CHECK-NEXT:      %[[Q:.*]] = graph.cmp %[[C]], %[[D]]
// CHECK-NEXT:      %[[IN:.*]] = graph.if %[[Q]] -> (tensor<4xf32>) {
// CHECK-NEXT:        %[[S:.*]] = graph.add %[[X]], %[[X]]
// CHECK-NEXT:        graph.yield %[[S]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[M:.*]] = graph.mul %[[X]], %[[X]]
// CHECK-NEXT:        graph.yield %[[M]]
// CHECK-NEXT:      }
// CHECK-NEXT:      graph.yield %[[IN]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      graph.yield %[[Y]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @nested(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>,
                  %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %p = graph.cmp %a, %b {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %cf, %ct = graph.switch %c, %p : (tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %df, %dt = graph.switch %d, %p : (tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %xf, %xt = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %yf, %yt = graph.switch %y, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %q = graph.cmp %ct, %dt {predicate = "lt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %xqf, %xqt = graph.switch %xt, %q : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %s = graph.add %xqt, %xqt : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = graph.mul %xqf, %xqf : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %in, %ini = graph.merge %m, %s : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  %r, %ri = graph.merge %yf, %in : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %r : tensor<4xf32>
}

// Hand-written order: the first result is used before a value the second branch reads is
// computed. The if goes after that value, and the (pure) reader of its result sinks below it.
// CHECK-LABEL: func.func @interleaved(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[P:.*]]: tensor<i1>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[YY:.*]] = graph.mul %[[Y]], %[[Y]]
// CHECK-NEXT:    %[[R:.*]]:2 = graph.if %[[P]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:      %[[A:.*]] = graph.neg %[[X]]
// CHECK-NEXT:      %[[C:.*]] = graph.sin %[[X]]
// CHECK-NEXT:      %[[C2:.*]] = graph.add %[[C]], %[[YY]]
// CHECK-NEXT:      graph.yield %[[A]], %[[C2]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[B:.*]] = graph.exp %[[X]]
// CHECK-NEXT:      %[[D:.*]] = graph.cos %[[X]]
// CHECK-NEXT:      graph.yield %[[B]], %[[D]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[U:.*]] = graph.add %[[R]]#0, %[[R]]#0
// CHECK-NEXT:    return %[[U]], %[[R]]#1
func.func @interleaved(%x: tensor<3xf32>, %p: tensor<i1>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %xf, %xt = graph.switch %x, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %a = graph.neg %xt : (tensor<3xf32>) -> tensor<3xf32>
  %b = graph.exp %xf : (tensor<3xf32>) -> tensor<3xf32>
  %m1, %i1 = graph.merge %b, %a : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  %u = graph.add %m1, %m1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %yy = graph.mul %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = graph.sin %xt : (tensor<3xf32>) -> tensor<3xf32>
  %c2 = graph.add %c, %yy : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = graph.cos %xf : (tensor<3xf32>) -> tensor<3xf32>
  %m2, %i2 = graph.merge %d, %c2 : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %u, %m2 : tensor<3xf32>, tensor<3xf32>
}

// A branch without results: the variable update runs only when the predicate holds.
// CHECK-LABEL: func.func @update(
// CHECK-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    graph.if %[[P]] {
// CHECK-NEXT:      graph.assign @v, %[[X]] : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = graph.read @v
// CHECK-NEXT:    return %[[R]]
graph.variable @v : tensor<3xf32> init zeros
func.func @update(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %xf, %xt = graph.switch %x, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  graph.assign @v, %xt : tensor<3xf32>
  %r = graph.read @v : tensor<3xf32>
  return %r : tensor<3xf32>
}

// Not conditionals: an op reads both sides, and a branch value reaches the return unmerged.
// CHECK-LABEL: func.func @both_sides(
// CHECK:         graph.switch
// CHECK:         graph.add
// CHECK:         graph.merge
// CHECK-NOT:     graph.if
func.func @both_sides(%p: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-remark @+1 {{switches on this predicate were not raised to graph.if: 'graph.add' uses values of both branches}}
  %xf, %xt = graph.switch %x, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %a = graph.add %xf, %xt : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r, %i = graph.merge %a, %xt : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @unmerged(
// CHECK:         graph.switch
// CHECK-NOT:     graph.if
func.func @unmerged(%p: tensor<i1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // expected-remark @+1 {{a branch value reaches 'func.return' without a graph.merge}}
  %xf, %xt = graph.switch %x, %p : (tensor<3xf32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xf32>)
  %n = graph.neg %xt : (tensor<3xf32>) -> tensor<3xf32>
  %r, %i = graph.merge %xf, %n : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %r, %n : tensor<3xf32>, tensor<3xf32>
}
