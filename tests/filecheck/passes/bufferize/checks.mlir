// RUN: irkit-opt %s -p bufferize | FileCheck %s

// graph.check, at function level or in a structured op's body, is a memory.check into the
// status buffer, which the first check adds as the last argument {graph.status}; codes
// count 1, 2, ... in program order, value and bound are stored as i64, the message is
// kept for the runtime to report. A check that holds whatever the inputs records nothing,
// and a function without checks has no status argument.

// CHECK-LABEL: func.func @labels(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?xi64>, %[[N:[^:]*]]: index, %[[R:[^:]*]]: memref<?xi64> {graph.output = 0 : i64},
// CHECK-SAME:      %[[ST:[^:]*]]: memref<3xi64> {graph.status})
// CHECK:         %[[POS:.*]] = arith.cmpi sgt, %[[N]]
// CHECK-NEXT:    %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT:    %[[Z64:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT:    memory.check %[[POS]], %[[N64]], %[[Z64]], %[[ST]] {code = 1 : i64, message = "'graph.foo' failed: {value} classes, need more than {bound}"} : memref<3xi64>
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<?xi64>) outs(%[[R]] : memref<?xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: i64, %{{.*}}: i64):
// CHECK:           %[[OK:.*]] = arith.cmpi slt, %[[V]], %{{.*}} : i64
// CHECK:           memory.check %[[OK]], %[[V]], %{{.*}}, %[[ST]] {code = 2 : i64, message = "'graph.foo' failed: label {value} is out of range for {bound} classes"} : memref<3xi64>
// CHECK-NEXT:      linalg.yield %[[V]] : i64

// CHECK-LABEL: func.func @always(
// CHECK-SAME:      %{{[^:]*}}: memref<4xf32>, %{{[^:]*}}: memref<4xf32> {graph.output = 0 : i64}) {
// CHECK-NOT:     memory.check
// CHECK:         return
func.func @labels(%x: tensor<?xi64>, %n: index) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %pos = arith.cmpi sgt, %n, %c0 : index
  graph.check %pos, %n, %c0 {message = "'graph.foo' failed: {value} classes, need more than {bound}"} : index, index
  %m = tensor.dim %x, %c0 : tensor<?xi64>
  %e = tensor.empty(%m) : tensor<?xi64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%v: i64, %o: i64):
    %ni = arith.index_cast %n : index to i64
    %ok = arith.cmpi slt, %v, %ni : i64
    graph.check %ok, %v, %n {message = "'graph.foo' failed: label {value} is out of range for {bound} classes"} : i64, index
    linalg.yield %v : i64
  } -> tensor<?xi64>
  return %r : tensor<?xi64>
}

func.func @always(%x: tensor<4xf32>) -> tensor<4xf32> {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  graph.check %true, %c0, %c0 {message = "never"} : index, index
  return %x : tensor<4xf32>
}
