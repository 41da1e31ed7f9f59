// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// slice: tensor.extract_slice with Python's bounds, computed at run time along a `?` axis
// (start = min(1, n), count = max(n - start, 0)) and here along a static one.
// CHECK-LABEL: func.func @slice(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x6xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK:         %[[START:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK:         %[[SPAN:.*]] = arith.subi %[[N]], %[[START]] : index
// CHECK:         %[[COUNT:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK:         %[[R:.*]] = tensor.extract_slice %[[X]][%[[START]], 1] [%[[COUNT]], 2] [1, 2] : tensor<?x6xf32> to tensor<?x2xf32>
// CHECK:         return %[[R]]
func.func @slice(%x: tensor<?x6xf32>) -> tensor<?x2xf32> {
  %r = graph.slice %x {starts = array<i64: 1, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// A negative step is a negative stride; a run-time start is kept off -1 (an empty window).
// CHECK-LABEL: func.func @reversed(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[CM1:.*]] = arith.constant -1 : index
// CHECK:         %[[CLAMPED:.*]] = arith.maxsi %{{.*}}, %[[CM1]] : index
// CHECK:         %[[START:.*]] = arith.maxsi %[[CLAMPED]], %[[C0]] : index
// CHECK-NEXT:    tensor.extract_slice %{{.*}}[%[[START]], 5] [%{{.*}}, 3] [-1, -2] : tensor<?x6xf32> to tensor<?x3xf32>
func.func @reversed(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %r = graph.slice %x {starts = array<i64: -1, 5>, stops = array<i64: -9223372036854775807, 0>, steps = array<i64: -1, -2>} : (tensor<?x6xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// An empty window of a static axis: no slice (MLIR rejects its offset 4 of 4).
// CHECK-LABEL: func.func @empty(
// CHECK:         %[[R:.*]] = tensor.empty() : tensor<0x6xf32>
// CHECK-NOT:     tensor.extract_slice
// CHECK:         return %[[R]]
func.func @empty(%x: tensor<4x6xf32>) -> tensor<0x6xf32> {
  %r = graph.slice %x {starts = array<i64: 4, 0>, stops = array<i64: 9223372036854775807, 9223372036854775807>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<0x6xf32>
  return %r : tensor<0x6xf32>
}

// CHECK-LABEL: func.func @insert(
// CHECK-SAME:      %[[S:[^:]*]]: tensor<4x2xf32>, %[[D:[^:]*]]: tensor<4x6xf32>)
// CHECK:         tensor.insert_slice %[[S]] into %[[D]][0, 1] [4, 2] [1, 2] : tensor<4x2xf32> into tensor<4x6xf32>
func.func @insert(%s: tensor<4x2xf32>, %d: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = graph.insert_slice %s, %d {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>, steps = array<i64: 1, 2>} : (tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// concat: each input inserted into one empty result at the running offset.
// CHECK-LABEL: func.func @concat(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x3xf32>, %[[B:[^:]*]]: tensor<?x5xf32>)
// CHECK-DAG:     %[[NB:.*]] = tensor.dim %[[B]]
// CHECK-DAG:     %[[NA:.*]] = tensor.dim %[[A]]
// CHECK:         %[[E:.*]] = tensor.empty(%[[NA]]) : tensor<?x8xf32>
// CHECK:         %[[R1:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [%[[NA]], 3] [1, 1]
// CHECK:         %[[R2:.*]] = tensor.insert_slice %[[B]] into %[[R1]][0, 3] [%[[NB]], 5] [1, 1]
// CHECK:         return %[[R2]]
func.func @concat(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>) -> tensor<?x8xf32> {
  %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// Along a `?` axis the result's size is the sum, and the second input starts at the first's.
// CHECK-LABEL: func.func @concat_rows(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x3xf32>, %[[B:[^:]*]]: tensor<2x3xf32>)
// CHECK:         %[[NA:.*]] = tensor.dim %[[A]]
// CHECK:         %[[N:.*]] = arith.addi %[[NA]], %{{.*}} : index
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK:         %[[R1:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [%[[NA]], 3] [1, 1]
// CHECK:         tensor.insert_slice %[[B]] into %[[R1]][%[[NA]], 0] [2, 3] [1, 1]
// CHECK-NOT:     arith.addi
func.func @concat_rows(%a: tensor<?x3xf32>, %b: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %r = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// split: one slice per part; static parts need no check.
// CHECK-LABEL: func.func @split(
// CHECK-NOT:     graph.check
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [4, 2] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[0, 2] [4, 2] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[0, 4] [4, 2] [1, 1]
func.func @split(%x: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %r:3 = graph.split %x {axis = 1 : i64, sections = 3 : i64} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>)
  return %r#0, %r#1, %r#2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// Equal parts of a `?` axis: the divisibility is checked (numpy's error); floor-sized parts
// stay inside x whatever it says.
// CHECK-LABEL: func.func @split_dynamic(
// CHECK:         %[[N:.*]] = tensor.dim
// CHECK:         %[[PART:.*]] = arith.floordivsi %[[N]], %{{.*}} : index
// CHECK:         %[[REM:.*]] = arith.remui %[[N]]
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[REM]]
// CHECK:         graph.check %[[OK]], %[[N]], %{{.*}} {message = "'graph.split' failed: array split does not result in an equal division (axis 0 of size {value} into {bound} sections)"}
// CHECK:         tensor.extract_slice %{{.*}}[0, 0] [%[[PART]], 6] [1, 1]
// CHECK:         tensor.extract_slice %{{.*}}[%[[PART]], 0] [%[[PART]], 6] [1, 1]
// CHECK-NOT:     tensor.pad
func.func @split_dynamic(%x: tensor<?x6xf32>) -> (tensor<?x6xf32>, tensor<?x6xf32>) {
  %r:2 = graph.split %x {axis = 0 : i64, sections = 2 : i64} : (tensor<?x6xf32>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  return %r#0, %r#1 : tensor<?x6xf32>, tensor<?x6xf32>
}

// Parts of run-time sizes: none negative and adding up, checked; x padded up to their
// total so that parts that do not fit still read inside it.
// CHECK-LABEL: func.func @split_sized(
// CHECK:         graph.check %{{.*}} {message = "'graph.split' failed: part sizes (adding up to {value}) do not add up to the axis size {bound}"}
// CHECK-DAG:     %[[M:.*]] = arith.maxsi
// CHECK-DAG:     %[[K:.*]] = arith.maxsi
// CHECK:         %[[P:.*]] = tensor.pad %{{.*}} low[0, 0] high[%{{.*}}, 0]
// CHECK:         tensor.extract_slice %[[P]][0, 0] [%[[M]], 6] [1, 1]
// CHECK:         tensor.extract_slice %[[P]][%[[M]], 0] [%[[K]], 6] [1, 1]
func.func @split_sized(%y: tensor<?x6xf32>, %m: tensor<i64>, %n: tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>) {
  %s:2 = graph.split %y, %m, %n {axis = 0 : i64, sections = 2 : i64} : (tensor<?x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)
  return %s#0, %s#1 : tensor<?x6xf32>, tensor<?x6xf32>
}

// The cotangent of a concat of two `?`-sized inputs, split by their sizes: tensor sizes are
// never negative and provably add up to the concat's, so nothing is checked or padded.
// CHECK-LABEL: func.func @split_concat(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x2xf32>, %[[B:[^:]*]]: tensor<?x2xf32>)
// CHECK-DAG:     %[[NB:.*]] = tensor.dim %[[B]]
// CHECK-DAG:     %[[NA:.*]] = tensor.dim %[[A]]
// CHECK:         %[[C:.*]] = tensor.insert_slice %[[B]]
// CHECK-NOT:     graph.check
// CHECK-NOT:     tensor.pad
// CHECK:         tensor.extract_slice %[[C]][0, 0] [%[[NA]], 2] [1, 1]
// CHECK:         tensor.extract_slice %[[C]][%[[NA]], 0] [%[[NB]], 2] [1, 1]
func.func @split_concat(%a: tensor<?x2xf32>, %b: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>) {
  %c = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %n = graph.dim %a {axis = 0 : i64} : (tensor<?x2xf32>) -> tensor<i64>
  %m = graph.dim %b {axis = 0 : i64} : (tensor<?x2xf32>) -> tensor<i64>
  %s:2 = graph.split %c, %n, %m {axis = 0 : i64, sections = 2 : i64} : (tensor<?x2xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
  return %s#0, %s#1 : tensor<?x2xf32>, tensor<?x2xf32>
}
