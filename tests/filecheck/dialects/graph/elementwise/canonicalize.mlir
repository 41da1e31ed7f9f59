// RUN: irkit-opt %s -p canonicalize --verify-each=numeric | FileCheck %s

// Folds and canonicalization patterns of the elementwise graph ops. Every rule is exact in
// IEEE arithmetic (signed zeros and NaN included); the functions marked "not folded" show the
// familiar rules that are not. --verify-each=numeric runs every function before and after.

// ----- constant folding -----------------------------------------------------------------------

// All-constant expressions become one constant (results chosen to be exact in any libm):
// sqrt([1, 4]) * [1, 4] + exp(0) = [2, 9]; [1, 4] > 1 = [false, true]; and
// cast(where(not(not(that)), [1, 4], [-1, -4]) + 1) to i8 = [0, 5].
// CHECK-LABEL: func.func @constant_expression
// CHECK-DAG: %[[F:.*]] = graph.constant dense<[2.000000e+00, 9.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = graph.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: %[[I:.*]] = graph.constant dense<[0, 5]> : tensor<2xi8>
// CHECK-NOT: graph.{{add|mul|sqrt|exp|cmp|not|cast|neg|where}}
// CHECK: return %[[F]], %[[B]], %[[I]]
func.func @constant_expression() -> (tensor<2xf32>, tensor<2xi1>, tensor<2xi8>) {
  %a = graph.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %z = graph.constant dense<0.0> : tensor<f32>
  %e = graph.exp %z : (tensor<f32>) -> tensor<f32>
  %s = graph.sqrt %a : (tensor<2xf32>) -> tensor<2xf32>
  %m = graph.mul %s, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = graph.add %m, %e : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %c = graph.cmp %a, %e {predicate = "gt"} : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  %n = graph.not %c : (tensor<2xi1>) -> tensor<2xi1>
  %b = graph.not %n : (tensor<2xi1>) -> tensor<2xi1>
  %k = graph.neg %a : (tensor<2xf32>) -> tensor<2xf32>
  %w = graph.where %b, %a, %k : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %t = graph.add %w, %e : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %i = graph.cast %t : (tensor<2xf32>) -> tensor<2xi8>
  return %r, %c, %i : tensor<2xf32>, tensor<2xi1>, tensor<2xi8>
}

// A float -> int cast of a value out of the target's range (or NaN) is not folded: C leaves
// the result undefined, as MLIR's fptosi folder does.
// CHECK-LABEL: func.func @cast_out_of_range_not_folded
// CHECK: %[[C:.*]] = graph.constant dense<3.000000e+02> : tensor<f32>
// CHECK: %[[R:.*]] = graph.cast %[[C]] : (tensor<f32>) -> tensor<i8>
// CHECK: return %[[R]]
func.func @cast_out_of_range_not_folded() -> tensor<i8> {
  %c = graph.constant dense<300.0> : tensor<f32>
  %r = graph.cast %c : (tensor<f32>) -> tensor<i8>
  return %r : tensor<i8>
}

// Constants of commutative ops move to the right (the folder does it), and cmp swaps its
// predicate to do the same.
// CHECK-LABEL: func.func @constants_to_the_right
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[A:.*]] = graph.add %[[X]], %[[C]]
// CHECK: %[[M:.*]] = graph.maximum %[[X]], %[[C]]
// CHECK: %[[P:.*]] = graph.cmp %[[X]], %[[C]] {predicate = "gt"}
// CHECK: %[[Q:.*]] = graph.cmp %[[X]], %[[C]] {predicate = "le"}
// CHECK: return %[[A]], %[[M]], %[[P]], %[[Q]]
func.func @constants_to_the_right(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xi1>) {
  %c = graph.constant dense<2.0> : tensor<f32>
  %a = graph.add %c, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %m = graph.maximum %c, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %p = graph.cmp %c, %x {predicate = "lt"} : (tensor<f32>, tensor<3xf32>) -> tensor<3xi1>
  %q = graph.cmp %c, %x {predicate = "ge"} : (tensor<f32>, tensor<3xf32>) -> tensor<3xi1>
  return %a, %m, %p, %q : tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xi1>
}

// ----- units and absorbing elements ----------------------------------------------------------

// x + -0.0, x - 0.0, 1.0 * x, x / 1.0, x ** 1.0; x + 0, x - 0, x * 1 for integers.
// CHECK-LABEL: func.func @units
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<?xi32>)
// CHECK-NOT: graph.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[I]], %[[I]], %[[I]]
func.func @units(%x: tensor<4xf32>, %i: tensor<?xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) {
  %mz = graph.constant dense<-0.0> : tensor<4xf32>
  %pz = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %i0 = graph.constant dense<0> : tensor<1xi32>
  %i1 = graph.constant dense<1> : tensor<i32>
  %0 = graph.add %x, %mz : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.sub %x, %pz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = graph.mul %one, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.div %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %4 = graph.pow %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = graph.add %i0, %i : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi32>
  %6 = graph.sub %i, %i0 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
  %7 = graph.mul %i, %i1 : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xi32>, tensor<?xi32>, tensor<?xi32>
}

// Integers: x * 0 = 0 and x - x = 0. Floats: x ** 0.0 = x ** -0.0 = 1 (IEEE pow, NaN too).
// CHECK-LABEL: func.func @absorbing
// CHECK-DAG: %[[Z:.*]] = graph.constant dense<0> : tensor<2x3xi64>
// CHECK-DAG: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK-NOT: graph.{{mul|sub|pow}}
// CHECK: return %[[Z]], %[[Z]], %[[ONE]], %[[ONE]]
func.func @absorbing(%i: tensor<2x3xi64>, %x: tensor<3xf32>) -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<3xf32>, tensor<3xf32>) {
  %z = graph.constant dense<0> : tensor<i64>
  %pz = graph.constant dense<0.0> : tensor<f32>
  %mz = graph.constant dense<-0.0> : tensor<f32>
  %0 = graph.mul %i, %z : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
  %1 = graph.sub %i, %i : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %2 = graph.pow %x, %pz : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %3 = graph.pow %x, %mz : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<3xf32>, tensor<3xf32>
}

// Not folded: x + 0.0 (-0.0 + 0.0 is +0.0), x * 0.0 (NaN, inf, -0.0), x - x and x / x (NaN,
// inf), and exp(log(x)) (NaN for x < 0).
// CHECK-LABEL: func.func @ieee_not_folded
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[A:.*]] = graph.add %[[X]], %[[Z:.*]] :
// CHECK: %[[M:.*]] = graph.mul %[[X]], %[[Z]] :
// CHECK: %[[S:.*]] = graph.sub %[[X]], %[[X]] :
// CHECK: %[[D:.*]] = graph.div %[[X]], %[[X]] :
// CHECK: %[[L:.*]] = graph.log %[[X]] :
// CHECK: %[[E:.*]] = graph.exp %[[L]] :
// CHECK: return %[[A]], %[[M]], %[[S]], %[[D]], %[[E]]
func.func @ieee_not_folded(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %pz = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.add %x, %pz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.mul %x, %pz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = graph.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.div %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.log %x : (tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.exp %l : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// x * 1 -> x needs the product to have x's shape at run time, not just its type: here the
// constant broadcasts x (3 elements, or a `?` that may be 1, or a new leading axis).
// Only %b folds: a size-1 constant never stretches x.
// CHECK-LABEL: func.func @broadcast_blocks_unit
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<1xf32>)
// CHECK: %[[A:.*]] = graph.mul %[[X]], %[[ONE3:.*]] : (tensor<?xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[C:.*]] = graph.mul %[[X]], %[[ONE3]] : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
// CHECK: %[[D:.*]] = graph.mul %[[X]], %{{.*}} : (tensor<?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
// CHECK: %[[E:.*]] = graph.mul %[[Y]], %[[ONE3]] : (tensor<1xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return %[[A]], %[[X]], %[[C]], %[[D]], %[[E]]
func.func @broadcast_blocks_unit(%x: tensor<?xf32>, %y: tensor<1xf32>) -> (tensor<3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2x?xf32>, tensor<3xf32>) {
  %one3 = graph.constant dense<1.0> : tensor<3xf32>
  %one1 = graph.constant dense<1.0> : tensor<1xf32>
  %one21 = graph.constant dense<1.0> : tensor<2x1xf32>
  %a = graph.mul %x, %one3 : (tensor<?xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = graph.mul %x, %one1 : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  // The result type may be less precise than the operands imply: still not x's shape.
  %c = graph.mul %x, %one3 : (tensor<?xf32>, tensor<3xf32>) -> tensor<?xf32>
  %d = graph.mul %x, %one21 : (tensor<?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %e = graph.mul %y, %one3 : (tensor<1xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %a, %b, %c, %d, %e : tensor<3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<2x?xf32>, tensor<3xf32>
}

// ----- logic, max and min --------------------------------------------------------------------

// CHECK-LABEL: func.func @logic
// CHECK-SAME: (%[[P:.*]]: tensor<3xi1>)
// CHECK-DAG: %[[T:.*]] = graph.constant dense<true> : tensor<3xi1>
// CHECK-DAG: %[[F:.*]] = graph.constant dense<false> : tensor<3xi1>
// CHECK-NOT: graph.{{and|or|not}}
// CHECK: return %[[P]], %[[F]], %[[P]], %[[T]], %[[P]], %[[P]], %[[P]]
func.func @logic(%p: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %t = graph.constant dense<true> : tensor<i1>
  %f = graph.constant dense<false> : tensor<i1>
  %0 = graph.and %p, %t : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  %1 = graph.and %f, %p : (tensor<i1>, tensor<3xi1>) -> tensor<3xi1>
  %2 = graph.or %p, %f : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  %3 = graph.or %p, %t : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  %4 = graph.and %p, %p : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %5 = graph.or %p, %p : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %n = graph.not %p : (tensor<3xi1>) -> tensor<3xi1>
  %6 = graph.not %n : (tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @max_min_self
// CHECK-SAME: (%[[X:.*]]: tensor<?x2xf32>, %[[I:.*]]: tensor<i8>)
// CHECK-NOT: graph.
// CHECK: return %[[X]], %[[X]], %[[I]]
func.func @max_min_self(%x: tensor<?x2xf32>, %i: tensor<i8>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<i8>) {
  %0 = graph.maximum %x, %x : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = graph.minimum %x, %x : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %2 = graph.maximum %i, %i : (tensor<i8>, tensor<i8>) -> tensor<i8>
  return %0, %1, %2 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<i8>
}

// ----- unary laws and negation ---------------------------------------------------------------

// -(-x) = x, |(|x|)| = |x|, relu(relu(x)) = relu(x), |-x| = |x|.
// CHECK-LABEL: func.func @unary_laws
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[I:.*]]: tensor<4xi32>)
// CHECK-NOT: graph.neg
// CHECK: %[[A:.*]] = graph.abs %[[X]] : (tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: %[[B:.*]] = graph.abs %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
// CHECK-NOT: graph.
// CHECK: return %[[X]], %[[A]], %[[R]], %[[B]]
func.func @unary_laws(%x: tensor<?xf32>, %i: tensor<4xi32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<4xi32>, tensor<4xi32>) {
  %n = graph.neg %x : (tensor<?xf32>) -> tensor<?xf32>
  %0 = graph.neg %n : (tensor<?xf32>) -> tensor<?xf32>
  %a = graph.abs %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.abs %a : (tensor<?xf32>) -> tensor<?xf32>
  %r = graph.relu %i : (tensor<4xi32>) -> tensor<4xi32>
  %2 = graph.relu %r : (tensor<4xi32>) -> tensor<4xi32>
  %m = graph.neg %i : (tensor<4xi32>) -> tensor<4xi32>
  %3 = graph.abs %m : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2, %3 : tensor<?xf32>, tensor<?xf32>, tensor<4xi32>, tensor<4xi32>
}

// Not folded: sqrt, exp, sigmoid... are neither involutions nor idempotent.
// CHECK-LABEL: func.func @unary_not_folded
// CHECK: graph.sqrt
// CHECK: graph.sqrt
// CHECK: graph.sigmoid
// CHECK: graph.sigmoid
func.func @unary_not_folded(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = graph.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  %0 = graph.sqrt %s : (tensor<4xf32>) -> tensor<4xf32>
  %g = graph.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.sigmoid %g : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// x - (-y) = x + y, x + (-y) = x - y, (-x) + y = y - x, -x * -y = x * y, -x / -y = x / y:
// negation is exact, so these hold for floats bit for bit.
// CHECK-LABEL: func.func @negations
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK-NOT: graph.neg
// CHECK: %[[A:.*]] = graph.add %[[X]], %[[Y]]
// CHECK-NEXT: %[[B:.*]] = graph.sub %[[X]], %[[Y]]
// CHECK-NEXT: %[[C:.*]] = graph.sub %[[X]], %[[Y]]
// CHECK-NEXT: %[[D:.*]] = graph.mul %[[X]], %[[Y]]
// CHECK-NEXT: %[[E:.*]] = graph.div %[[X]], %[[Y]]
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @negations(%x: tensor<3xf32>, %y: tensor<f32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %nx = graph.neg %x : (tensor<3xf32>) -> tensor<3xf32>
  %ny = graph.neg %y : (tensor<f32>) -> tensor<f32>
  %0 = graph.sub %x, %ny : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = graph.add %x, %ny : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = graph.add %ny, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = graph.mul %nx, %ny : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %4 = graph.div %nx, %ny : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// x * -1 = -x, -0.0 - x = -x, 0 - x = -x (integers). Not 0.0 - x: for x = +0.0 it is +0.0.
// CHECK-LABEL: func.func @to_neg
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<3xi16>)
// CHECK: %[[A:.*]] = graph.neg %[[X]]
// CHECK-NEXT: %[[B:.*]] = graph.neg %[[X]]
// CHECK-NEXT: %[[C:.*]] = graph.neg %[[I]]
// CHECK-NEXT: %[[D:.*]] = graph.neg %[[I]]
// CHECK-NEXT: %[[E:.*]] = graph.sub %{{.*}}, %[[X]]
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @to_neg(%x: tensor<3xf32>, %i: tensor<3xi16>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi16>, tensor<3xi16>, tensor<3xf32>) {
  %m1 = graph.constant dense<-1.0> : tensor<f32>
  %mz = graph.constant dense<-0.0> : tensor<3xf32>
  %pz = graph.constant dense<0.0> : tensor<f32>
  %im1 = graph.constant dense<-1> : tensor<i16>
  %i0 = graph.constant dense<0> : tensor<i16>
  %0 = graph.mul %m1, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = graph.sub %mz, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = graph.mul %i, %im1 : (tensor<3xi16>, tensor<i16>) -> tensor<3xi16>
  %3 = graph.sub %i0, %i : (tensor<i16>, tensor<3xi16>) -> tensor<3xi16>
  %4 = graph.sub %pz, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xi16>, tensor<3xi16>, tensor<3xf32>
}

// ----- comparisons ---------------------------------------------------------------------------

// x p x for integers: lt, gt, ne are false, le, ge, eq true. For floats only lt and gt fold:
// NaN <= NaN is false and NaN != NaN true.
// CHECK-LABEL: func.func @cmp_self
// CHECK-SAME: (%[[I:.*]]: tensor<2xi32>, %[[X:.*]]: tensor<2xf32>)
// CHECK-DAG: %[[T:.*]] = graph.constant dense<true> : tensor<2xi1>
// CHECK-DAG: %[[F:.*]] = graph.constant dense<false> : tensor<2xi1>
// CHECK: %[[LE:.*]] = graph.cmp %[[X]], %[[X]] {predicate = "le"}
// CHECK-NEXT: %[[EQ:.*]] = graph.cmp %[[X]], %[[X]] {predicate = "eq"}
// CHECK-NEXT: %[[NE:.*]] = graph.cmp %[[X]], %[[X]] {predicate = "ne"}
// CHECK-NEXT: return %[[F]], %[[T]], %[[F]], %[[T]], %[[T]], %[[F]], %[[F]], %[[F]], %[[LE]], %[[EQ]], %[[NE]]
func.func @cmp_self(%i: tensor<2xi32>, %x: tensor<2xf32>) -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %0 = graph.cmp %i, %i {predicate = "lt"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %1 = graph.cmp %i, %i {predicate = "le"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %2 = graph.cmp %i, %i {predicate = "gt"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %3 = graph.cmp %i, %i {predicate = "ge"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %4 = graph.cmp %i, %i {predicate = "eq"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %5 = graph.cmp %i, %i {predicate = "ne"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %6 = graph.cmp %x, %x {predicate = "lt"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %7 = graph.cmp %x, %x {predicate = "gt"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %8 = graph.cmp %x, %x {predicate = "le"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %9 = graph.cmp %x, %x {predicate = "eq"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %10 = graph.cmp %x, %x {predicate = "ne"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// not(x < y) = x >= y for integers; for floats it stays (NaN compares false both ways).
// CHECK-LABEL: func.func @not_of_cmp
// CHECK-SAME: (%[[I:.*]]: tensor<3xi8>, %[[J:.*]]: tensor<3xi8>, %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK: %[[A:.*]] = graph.cmp %[[I]], %[[J]] {predicate = "ge"}
// CHECK-NEXT: %[[B:.*]] = graph.cmp %[[I]], %[[J]] {predicate = "ne"}
// CHECK-NEXT: %[[C:.*]] = graph.cmp %[[X]], %[[Y]] {predicate = "lt"}
// CHECK-NEXT: %[[D:.*]] = graph.not %[[C]]
// CHECK-NEXT: return %[[A]], %[[B]], %[[D]]
func.func @not_of_cmp(%i: tensor<3xi8>, %j: tensor<3xi8>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %0 = graph.cmp %i, %j {predicate = "lt"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>
  %1 = graph.not %0 : (tensor<3xi1>) -> tensor<3xi1>
  %2 = graph.cmp %i, %j {predicate = "eq"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>
  %3 = graph.not %2 : (tensor<3xi1>) -> tensor<3xi1>
  %4 = graph.cmp %x, %y {predicate = "lt"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %5 = graph.not %4 : (tensor<3xi1>) -> tensor<3xi1>
  return %1, %3, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// ----- where ---------------------------------------------------------------------------------

// where(c, x, x) = x; where(true, x, y) = x; where(false, x, y) = y; where(not c, x, y) =
// where(c, y, x).
// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.*]]: tensor<3xi1>, %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NOT: graph.not
// CHECK: %[[W:.*]] = graph.where %[[C]], %[[Y]], %[[X]]
// CHECK-NEXT: return %[[X]], %[[X]], %[[Y]], %[[W]]
func.func @where(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %t = graph.constant dense<true> : tensor<i1>
  %f = graph.constant dense<false> : tensor<3xi1>
  %0 = graph.where %c, %x, %x : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = graph.where %t, %x, %y : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = graph.where %f, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %n = graph.not %c : (tensor<3xi1>) -> tensor<3xi1>
  %3 = graph.where %n, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// Not folded: the chosen value would have to be broadcast (by the condition or the other
// value), and a condition that is not a splat.
// CHECK-LABEL: func.func @where_not_folded
// CHECK-COUNT-3: graph.where
// CHECK-NOT: graph.where
func.func @where_not_folded(%c: tensor<2x3xi1>, %x: tensor<3xf32>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %t = graph.constant dense<true> : tensor<i1>
  %m = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %0 = graph.where %c, %x, %x : (tensor<2x3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.where %t, %s, %x : (tensor<i1>, tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = graph.where %m, %x, %s : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// ----- cast ----------------------------------------------------------------------------------

// A cast to the same type is x; a round trip through an exact widening is x (i32 -> f64 ->
// i32, i8 -> i32 -> i8, i1 -> f32 -> i1); a chain after an exact widening is one cast.
// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[I:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<3xi8>, %[[P:.*]]: tensor<3xi1>, %[[H:.*]]: tensor<3xf16>)
// CHECK: %[[A:.*]] = graph.cast %[[B]] : (tensor<3xi8>) -> tensor<3xf32>
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[P]] : (tensor<3xi1>) -> tensor<3xi64>
// CHECK-NEXT: %[[D:.*]] = graph.cast %[[H]] : (tensor<3xf16>) -> tensor<3xbf16>
// CHECK-NEXT: return %[[I]], %[[I]], %[[B]], %[[P]], %[[A]], %[[C]], %[[D]]
func.func @casts(%i: tensor<3xi32>, %b: tensor<3xi8>, %p: tensor<3xi1>, %h: tensor<3xf16>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<3xi1>, tensor<3xf32>, tensor<3xi64>, tensor<3xbf16>) {
  %0 = graph.cast %i : (tensor<3xi32>) -> tensor<3xi32>
  %f = graph.cast %i : (tensor<3xi32>) -> tensor<3xf64>
  %1 = graph.cast %f : (tensor<3xf64>) -> tensor<3xi32>
  %w = graph.cast %b : (tensor<3xi8>) -> tensor<3xi32>
  %2 = graph.cast %w : (tensor<3xi32>) -> tensor<3xi8>
  %pf = graph.cast %p : (tensor<3xi1>) -> tensor<3xf32>
  %3 = graph.cast %pf : (tensor<3xf32>) -> tensor<3xi1>
  %bw = graph.cast %b : (tensor<3xi8>) -> tensor<3xi16>
  %4 = graph.cast %bw : (tensor<3xi16>) -> tensor<3xf32>
  %5 = graph.cast %pf : (tensor<3xf32>) -> tensor<3xi64>
  %hw = graph.cast %h : (tensor<3xf16>) -> tensor<3xf64>
  %6 = graph.cast %hw : (tensor<3xf64>) -> tensor<3xbf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<3xi32>, tensor<3xi32>, tensor<3xi8>, tensor<3xi1>, tensor<3xf32>, tensor<3xi64>, tensor<3xbf16>
}

// Not folded: a lossy first step (f32 -> i32 truncates, i32 -> f32 rounds, i32 -> i8 wraps),
// and float -> float -> int (out-of-range conversions depend on the source width).
// CHECK-LABEL: func.func @casts_not_folded
// CHECK-COUNT-8: graph.cast
// CHECK-NOT: graph.cast
func.func @casts_not_folded(%x: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi64>) {
  %0 = graph.cast %x : (tensor<3xf32>) -> tensor<3xi32>
  %1 = graph.cast %0 : (tensor<3xi32>) -> tensor<3xf32>
  %2 = graph.cast %i : (tensor<3xi32>) -> tensor<3xf32>
  %3 = graph.cast %2 : (tensor<3xf32>) -> tensor<3xi32>
  %4 = graph.cast %i : (tensor<3xi32>) -> tensor<3xi8>
  %5 = graph.cast %4 : (tensor<3xi8>) -> tensor<3xi32>
  %6 = graph.cast %x : (tensor<3xf32>) -> tensor<3xf64>
  %7 = graph.cast %6 : (tensor<3xf64>) -> tensor<3xi64>
  return %1, %3, %5, %7 : tensor<3xf32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi64>
}
