// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s

// Backward (and forward) graphs of the elementwise ops after the usual clean-up. The rules
// reuse forward results instead of recomputing them, and once the seeds' multiplications by
// one are folded no waste is left: every op below is one the derivative needs.

// The lectures' example, y = log(x1) + x1 x2 - sin(x2) seeded with 1:
// dy/dx1 = 1/x1 + x2 and dy/dx2 = x1 - cos(x2). The forward ops are dead (only the gradients
// are returned) and no multiplication (by the seed 1, or by -1 from the sub) is left.
// CHECK-LABEL: func.func @lecture
// CHECK-SAME: (%[[X1:[^:]*]]: tensor<f32>, %[[X2:[^:]*]]: tensor<f32>)
// CHECK-NOT: graph.{{mul|neg|log|sin}}
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[COS:.*]] = graph.cos %[[X2]]
// CHECK-DAG: %[[INV:.*]] = graph.div %[[ONE]], %[[X1]]
// CHECK-DAG: %[[D1:.*]] = graph.add %[[X2]], %[[INV]]
// CHECK-DAG: %[[D2:.*]] = graph.sub %[[X1]], %[[COS]]
// CHECK-NOT: graph.{{mul|neg|log|sin}}
// CHECK: return %[[D1]], %[[D2]]
func.func @lecture(%x1: tensor<f32>, %x2: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %l = graph.log %x1 : (tensor<f32>) -> tensor<f32>
  %m = graph.mul %x1, %x2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = graph.add %l, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %s = graph.sin %x2 : (tensor<f32>) -> tensor<f32>
  %y = graph.sub %a, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %d1, %d2 = autodiff.grad %y wrt %x1, %x2 : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %d1, %d2 : tensor<f32>, tensor<f32>
}

// Forward results reused: sigmoid' = y (1 - y), sqrt' = 1 / 2y, tanh' = 1 - y^2, exp' = y.
// Each forward op appears once; the backward chain reads their results.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[TWO:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[E:.*]] = graph.exp %[[X]]
// CHECK: %[[T:.*]] = graph.tanh %[[E]]
// CHECK: %[[Q:.*]] = graph.sqrt %[[T]]
// CHECK: %[[Y:.*]] = graph.sigmoid %[[Q]]
// CHECK-NOT: graph.{{exp|tanh|sqrt|sigmoid}}
// CHECK: %[[OMY:.*]] = graph.sub %[[ONE]], %[[Y]]
// CHECK: %[[DSIG:.*]] = graph.mul %[[Y]], %[[OMY]]
// CHECK: %[[G1:.*]] = graph.mul %[[S]], %[[DSIG]]
// CHECK: %[[TWOQ:.*]] = graph.mul %[[Q]], %[[TWO]]
// CHECK: %[[G2:.*]] = graph.div %[[G1]], %[[TWOQ]]
// CHECK: %[[TT:.*]] = graph.mul %[[T]], %[[T]]
// CHECK: %[[OMTT:.*]] = graph.sub %[[ONE]], %[[TT]]
// CHECK: %[[G3:.*]] = graph.mul %[[G2]], %[[OMTT]]
// CHECK: %[[G4:.*]] = graph.mul %[[G3]], %[[E]]
// CHECK-NOT: graph.{{exp|tanh|sqrt|sigmoid}}
// CHECK: return %[[Y]], %[[G4]]
func.func @reuse(%x: tensor<4xf32>, %s: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %t = graph.tanh %e : (tensor<4xf32>) -> tensor<4xf32>
  %q = graph.sqrt %t : (tensor<4xf32>) -> tensor<4xf32>
  %y = graph.sigmoid %q : (tensor<4xf32>) -> tensor<4xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %g : tensor<4xf32>, tensor<4xf32>
}

// relu passes the cotangent where x > 0 (slope 0 at 0), without multiplying.
// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[P:.*]] = graph.cmp %[[X]], %[[Z]] {predicate = "gt"}
// CHECK: %[[G:.*]] = graph.where %[[P]], %[[S]], %[[Z]]
// CHECK-NOT: graph.mul
// CHECK: return %[[G]]
func.func @relu(%x: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// A broadcast operand's cotangent is summed over the axes it was broadcast along.
// CHECK-LABEL: func.func @mul_broadcast
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>, %[[B:[^:]*]]: tensor<3xf32>,
// CHECK-SAME: %[[S:[^:]*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[DX:.*]] = graph.mul %[[S]], %[[B]] : {{.*}} -> tensor<2x3xf32>
// CHECK-DAG: %[[SX:.*]] = graph.mul %[[S]], %[[X]]
// CHECK-DAG: %[[DB:.*]] = graph.reduce_sum %[[SX]] {axes = array<i64: 0>, keepdims = false}
// CHECK-SAME: -> tensor<3xf32>
// CHECK: return %[[DX]], %[[DB]]
func.func @mul_broadcast(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %s: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<3xf32>) {
  %y = graph.mul %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %dx, %db = autodiff.grad %y seed %s wrt %x, %b
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return %dx, %db : tensor<2x3xf32>, tensor<3xf32>
}

// q = (x - y) / y: dq/dx = s/y, and s/y is shared by dq/dy = -(s/y) q - s/y; the quotient q
// is reused, not recomputed, and the two negations of dq/dy fold into one neg and a sub.
// CHECK-LABEL: func.func @sub_div
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>, %[[Y:[^:]*]]: tensor<3xf32>,
// CHECK-SAME: %[[S:[^:]*]]: tensor<3xf32>)
// CHECK: %[[D:.*]] = graph.sub %[[X]], %[[Y]]
// CHECK: %[[Q:.*]] = graph.div %[[D]], %[[Y]]
// CHECK: %[[SY:.*]] = graph.div %[[S]], %[[Y]]
// CHECK-NOT: graph.div
// CHECK: %[[M:.*]] = graph.mul %[[SY]], %[[Q]]
// CHECK: %[[N:.*]] = graph.neg %[[M]]
// CHECK: %[[DY:.*]] = graph.sub %[[N]], %[[SY]]
// CHECK: return %[[Q]], %[[SY]], %[[DY]]
func.func @sub_div(%x: tensor<3xf32>, %y: tensor<3xf32>, %s: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %d = graph.sub %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %q = graph.div %d, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dx, %dy = autodiff.grad %q seed %s wrt %x, %y
      : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %q, %dx, %dy : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// x^3: 3 x^2, with the exponent's arithmetic folded and the guards of a zero exponent (and
// the exponent's own derivative) gone, since the exponent is a constant.
// CHECK-LABEL: func.func @pow_constant_exponent
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>, %[[S:[^:]*]]: tensor<3xf32>)
// CHECK-DAG: %[[TWO:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[THREE:.*]] = graph.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NOT: graph.{{where|cmp|log|sub}}
// CHECK: %[[SQ:.*]] = graph.pow %[[X]], %[[TWO]]
// CHECK: %[[D:.*]] = graph.mul %[[SQ]], %[[THREE]]
// CHECK: %[[G:.*]] = graph.mul %[[S]], %[[D]]
// CHECK-NOT: graph.{{where|cmp|log|sub}}
// CHECK: return %[[G]]
func.func @pow_constant_exponent(%x: tensor<3xf32>, %s: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant dense<3.0> : tensor<f32>
  %y = graph.pow %x, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %g = autodiff.grad %y seed %s wrt %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// x^p in both: dx = s p x^(p-1), but 0 where x = p = 0 (x^0 = 1); dp = s ln(x) x^p, but 0
// where x = 0 (0^p = 0), reusing x^p and summed over the axis p was broadcast along. The
// comparison x == 0 is shared.
// CHECK-LABEL: func.func @pow_both
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>, %[[P:[^:]*]]: tensor<f32>, %[[S:[^:]*]]: tensor<3xf32>)
// CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[Y:.*]] = graph.pow %[[X]], %[[P]]
// CHECK: %[[PM1:.*]] = graph.sub %[[P]], %[[ONE]]
// CHECK: %[[XPM1:.*]] = graph.pow %[[X]], %[[PM1]]
// CHECK: %[[PX:.*]] = graph.mul %[[P]], %[[XPM1]]
// CHECK: %[[PZ:.*]] = graph.cmp %[[P]], %[[ZERO]] {predicate = "eq"}
// CHECK: %[[AT0:.*]] = graph.where %[[PZ]], %[[ZERO]], %[[PX]]
// CHECK: %[[XZ:.*]] = graph.cmp %[[X]], %[[ZERO]] {predicate = "eq"}
// CHECK: %[[DYDX:.*]] = graph.where %[[XZ]], %[[AT0]], %[[PX]]
// CHECK: %[[DX:.*]] = graph.mul %[[S]], %[[DYDX]]
// CHECK-NOT: graph.cmp
// CHECK: %[[SAFE:.*]] = graph.where %[[XZ]], %[[ONE]], %[[X]]
// CHECK: %[[LN:.*]] = graph.log %[[SAFE]]
// CHECK: %[[DYDP:.*]] = graph.mul %[[LN]], %[[Y]]
// CHECK: %[[SD:.*]] = graph.mul %[[S]], %[[DYDP]]
// CHECK: %[[DP:.*]] = graph.reduce_sum %[[SD]] {axes = array<i64: 0>, keepdims = false}
// CHECK: return %[[DX]], %[[DP]]
func.func @pow_both(%x: tensor<3xf32>, %p: tensor<f32>, %s: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<f32>) {
  %y = graph.pow %x, %p : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %dx, %dp = autodiff.grad %y seed %s wrt %x, %p
      : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>)
  return %dx, %dp : tensor<3xf32>, tensor<f32>
}

// maximum: one comparison, shared by both operands' selections; ties go to x.
// CHECK-LABEL: func.func @maximum
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>, %[[Y:[^:]*]]: tensor<3xf32>,
// CHECK-SAME: %[[S:[^:]*]]: tensor<3xf32>)
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[GE:.*]] = graph.cmp %[[X]], %[[Y]] {predicate = "ge"}
// CHECK-NOT: graph.cmp
// CHECK: %[[DX:.*]] = graph.where %[[GE]], %[[S]], %[[Z]]
// CHECK: %[[DY:.*]] = graph.where %[[GE]], %[[Z]], %[[S]]
// CHECK: return %[[DX]], %[[DY]]
func.func @maximum(%x: tensor<3xf32>, %y: tensor<3xf32>, %s: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>) {
  %m = graph.maximum %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dx, %dy = autodiff.grad %m seed %s wrt %x, %y
      : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %dx, %dy : tensor<3xf32>, tensor<3xf32>
}

// where is transposed by selecting the cotangent (the condition gets none); a float cast
// sends the cotangent back to the source type.
// CHECK-LABEL: func.func @where_cast
// CHECK-SAME: (%[[C:[^:]*]]: tensor<3xi1>, %[[X:[^:]*]]: tensor<3xf16>, %[[Y:[^:]*]]: tensor<f32>,
// CHECK-SAME: %[[S:[^:]*]]: tensor<3xf32>)
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[WX:.*]] = graph.where %[[C]], %[[S]], %[[Z]]
// CHECK-DAG: %[[WY:.*]] = graph.where %[[C]], %[[Z]], %[[S]]
// CHECK-DAG: %[[DY:.*]] = graph.reduce_sum %[[WY]] {axes = array<i64: 0>, keepdims = false}
// CHECK-SAME: -> tensor<f32>
// CHECK-DAG: %[[DX:.*]] = graph.cast %[[WX]] : (tensor<3xf32>) -> tensor<3xf16>
// CHECK: return %[[DX]], %[[DY]]
func.func @where_cast(%c: tensor<3xi1>, %x: tensor<3xf16>, %y: tensor<f32>, %s: tensor<3xf32>)
    -> (tensor<3xf16>, tensor<f32>) {
  %h = graph.cast %x : (tensor<3xf16>) -> tensor<3xf32>
  %w = graph.where %c, %h, %y : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %dx, %dy = autodiff.grad %w seed %s wrt %x, %y
      : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf16>, tensor<f32>)
  return %dx, %dy : tensor<3xf16>, tensor<f32>
}

// Forward mode: tanh(x) b along (vx, vb) is vx (1 - t^2) b + vb t, from the same partials.
// A lone tangent of an operand that the other widens (b + t along b) gets zeros of the
// result's shape added, which broadcasts it.
// CHECK-LABEL: func.func @jvp
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3xf32>, %[[B:[^:]*]]: tensor<3xf32>,
// CHECK-SAME: %[[VX:[^:]*]]: tensor<2x3xf32>, %[[VB:[^:]*]]: tensor<3xf32>)
// CHECK-DAG: %[[ZEROS:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[T:.*]] = graph.tanh %[[X]]
// CHECK: %[[TT:.*]] = graph.mul %[[T]], %[[T]]
// CHECK: %[[D:.*]] = graph.sub %[[ONE]], %[[TT]]
// CHECK: %[[TX:.*]] = graph.mul %[[VX]], %[[D]]
// CHECK: %[[TXB:.*]] = graph.mul %[[TX]], %[[B]]
// CHECK: %[[TBT:.*]] = graph.mul %[[VB]], %[[T]]
// CHECK: %[[TY:.*]] = graph.add %[[TXB]], %[[TBT]]
// CHECK: %[[TZ:.*]] = graph.add %[[VB]], %[[ZEROS]] : {{.*}} -> tensor<2x3xf32>
// CHECK: return %[[TY]], %[[TZ]]
func.func @jvp(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %vx: tensor<2x3xf32>, %vb: tensor<3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = graph.tanh %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = graph.mul %t, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %ty = autodiff.jvp %y wrt %x, %b along %vx, %vb
      : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %z = graph.add %b, %t : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %tz = autodiff.jvp %z wrt %b along %vb : (tensor<3xf32>) -> tensor<2x3xf32>
  return %ty, %tz : tensor<2x3xf32>, tensor<2x3xf32>
}
