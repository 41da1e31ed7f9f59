// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | irkit-opt | FileCheck %s

// Every elementwise graph op parses and prints back in its custom form, through a second
// irkit-opt and through the generic form. Shapes cover static, dynamic (`?`) and rank-0
// tensors, and binary ops broadcast (the result type is the broadcast shape).

// CHECK-LABEL: func.func @unary_float
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<f32>)
func.func @unary_float(%x: tensor<?x4xf32>, %s: tensor<f32>) {
  // CHECK: graph.neg %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %0 = graph.neg %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.abs %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = graph.abs %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.exp %[[S]] : (tensor<f32>) -> tensor<f32>
  %2 = graph.exp %s : (tensor<f32>) -> tensor<f32>
  // CHECK: graph.log %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %3 = graph.log %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.sin %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %4 = graph.sin %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.cos %[[S]] : (tensor<f32>) -> tensor<f32>
  %5 = graph.cos %s : (tensor<f32>) -> tensor<f32>
  // CHECK: graph.tanh %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %6 = graph.tanh %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.sqrt %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %7 = graph.sqrt %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.rsqrt %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %8 = graph.rsqrt %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.sigmoid %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %9 = graph.sigmoid %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.relu %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %10 = graph.relu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.gelu %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %11 = graph.gelu %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.softplus %[[S]] : (tensor<f32>) -> tensor<f32>
  %12 = graph.softplus %s : (tensor<f32>) -> tensor<f32>
  return
}

// neg, abs and relu take integers too; not takes i1 only.
// CHECK-LABEL: func.func @unary_int_bool
// CHECK-SAME: (%[[I:.*]]: tensor<3xi32>, %[[B:.*]]: tensor<?xi1>)
func.func @unary_int_bool(%i: tensor<3xi32>, %b: tensor<?xi1>) {
  // CHECK: graph.neg %[[I]] : (tensor<3xi32>) -> tensor<3xi32>
  %0 = graph.neg %i : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: graph.abs %[[I]] : (tensor<3xi32>) -> tensor<3xi32>
  %1 = graph.abs %i : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: graph.relu %[[I]] : (tensor<3xi32>) -> tensor<3xi32>
  %2 = graph.relu %i : (tensor<3xi32>) -> tensor<3xi32>
  // CHECK: graph.not %[[B]] : (tensor<?xi1>) -> tensor<?xi1>
  %3 = graph.not %b : (tensor<?xi1>) -> tensor<?xi1>
  return
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[R:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>)
func.func @binary(%x: tensor<?x4xf32>, %r: tensor<4xf32>, %s: tensor<f32>) {
  // CHECK: graph.add %[[X]], %[[R]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %0 = graph.add %x, %r : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.sub %[[S]], %[[X]] : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = graph.sub %s, %x : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.mul %[[S]], %[[S]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = graph.mul %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK: graph.div %[[R]], %[[S]] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.div %r, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: graph.pow %[[X]], %[[S]] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %4 = graph.pow %x, %s : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  // CHECK: graph.maximum %[[X]], %[[R]] : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %5 = graph.maximum %x, %r : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: graph.minimum %[[R]], %[[R]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = graph.minimum %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// A `?` broadcast against a static size takes that size; against 1 it stays `?`.
// CHECK-LABEL: func.func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x1xf32>, %b: tensor<5x?xf32>, %c: tensor<?xi64>) {
  // CHECK: graph.add %{{.*}}, %{{.*}} : (tensor<?x1xf32>, tensor<5x?xf32>) -> tensor<5x?xf32>
  %0 = graph.add %a, %b : (tensor<?x1xf32>, tensor<5x?xf32>) -> tensor<5x?xf32>
  // CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %1 = graph.mul %c, %c : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  return
}

// CHECK-LABEL: func.func @logic
// CHECK-SAME: (%[[P:.*]]: tensor<2x3xi1>, %[[Q:.*]]: tensor<i1>)
func.func @logic(%p: tensor<2x3xi1>, %q: tensor<i1>) {
  // CHECK: graph.and %[[P]], %[[Q]] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2x3xi1>
  %0 = graph.and %p, %q : (tensor<2x3xi1>, tensor<i1>) -> tensor<2x3xi1>
  // CHECK: graph.or %[[Q]], %[[Q]] : (tensor<i1>, tensor<i1>) -> tensor<i1>
  %1 = graph.or %q, %q : (tensor<i1>, tensor<i1>) -> tensor<i1>
  return
}

// CHECK-LABEL: func.func @cmp
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[S:.*]]: tensor<f32>, %[[I:.*]]: tensor<2xi32>)
func.func @cmp(%x: tensor<?xf32>, %s: tensor<f32>, %i: tensor<2xi32>) {
  // CHECK: graph.cmp %[[X]], %[[S]] {predicate = "lt"} : (tensor<?xf32>, tensor<f32>) -> tensor<?xi1>
  %0 = graph.cmp %x, %s {predicate = "lt"} : (tensor<?xf32>, tensor<f32>) -> tensor<?xi1>
  // CHECK: graph.cmp %[[X]], %[[X]] {predicate = "le"}
  %1 = graph.cmp %x, %x {predicate = "le"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  // CHECK: graph.cmp %[[S]], %[[S]] {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %2 = graph.cmp %s, %s {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  // CHECK: graph.cmp %[[I]], %[[I]] {predicate = "ge"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %3 = graph.cmp %i, %i {predicate = "ge"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  // CHECK: graph.cmp %[[I]], %[[I]] {predicate = "eq"}
  %4 = graph.cmp %i, %i {predicate = "eq"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  // CHECK: graph.cmp %[[I]], %[[I]] {predicate = "ne"}
  %5 = graph.cmp %i, %i {predicate = "ne"} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  return
}

// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[C:.*]]: tensor<?x3xi1>, %[[X:.*]]: tensor<3xf32>, %[[S:.*]]: tensor<f32>)
func.func @where(%c: tensor<?x3xi1>, %x: tensor<3xf32>, %s: tensor<f32>) {
  // CHECK: graph.where %[[C]], %[[X]], %[[S]] : (tensor<?x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<?x3xf32>
  %0 = graph.where %c, %x, %s : (tensor<?x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<?x3xf32>
  return
}

// The target type of a cast is its result's element type.
// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[I:.*]]: tensor<?x2xi32>, %[[F:.*]]: tensor<f64>, %[[B:.*]]: tensor<4xi1>)
func.func @cast(%i: tensor<?x2xi32>, %f: tensor<f64>, %b: tensor<4xi1>) {
  // CHECK: graph.cast %[[I]] : (tensor<?x2xi32>) -> tensor<?x2xf32>
  %0 = graph.cast %i : (tensor<?x2xi32>) -> tensor<?x2xf32>
  // CHECK: graph.cast %[[F]] : (tensor<f64>) -> tensor<i8>
  %1 = graph.cast %f : (tensor<f64>) -> tensor<i8>
  // CHECK: graph.cast %[[B]] : (tensor<4xi1>) -> tensor<4xf16>
  %2 = graph.cast %b : (tensor<4xi1>) -> tensor<4xf16>
  // CHECK: graph.cast %[[I]] : (tensor<?x2xi32>) -> tensor<?x2xi1>
  %3 = graph.cast %i : (tensor<?x2xi32>) -> tensor<?x2xi1>
  return
}

// Unknown attributes ride along after the properties.
// CHECK-LABEL: func.func @discardable_attrs
func.func @discardable_attrs(%x: tensor<2xf32>) {
  // CHECK: graph.add %{{.*}}, %{{.*}} {tag = 7 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = graph.add %x, %x {tag = 7 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}
