// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// matmul: one linalg.generic, the result's axes parallel and K a reduction last, each
// operand read through its map. f32 factors are multiplied in f32, the product widened and
// summed in a zero-filled f64 output, then rounded once by an elementwise generic.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x784xf32>, %[[W:[^:]*]]: tensor<784x10xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x784xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf64>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[E]] : tensor<?x10xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<?x784xf32>, tensor<784x10xf32>) outs(%[[ACC]] : tensor<?x10xf64>) {
// CHECK-NEXT:    ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32, %[[O:[^:]*]]: f64):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[PW:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[PW]] : f64
// CHECK-NEXT:      linalg.yield %[[S]] : f64
// CHECK:         %[[E2:.*]] = tensor.empty(%[[N]]) : tensor<?x10xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x10xf64>) outs(%[[E2]] : tensor<?x10xf32>)
// CHECK:           arith.truncf {{.*}} : f64 to f32
// CHECK:         return %[[R]]
// CHECK-NOT:     graph.
func.func @matmul(%x: tensor<?x784xf32>, %w: tensor<784x10xf32>) -> tensor<?x10xf32> {
  %0 = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// Batch axes broadcast through the maps: lhs's batch axis of static size 1 is read at 0,
// rhs lacks the leading one. Integers sum in their own type (wrapping): no rounding generic.
// CHECK-LABEL: func.func @batched(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:           arith.muli
// CHECK-NEXT:      arith.addi
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @batched(%a: tensor<?x1x3x4xi32>, %b: tensor<5x4x?xi32>) -> tensor<?x5x3x?xi32> {
  %0 = graph.matmul %a, %b : (tensor<?x1x3x4xi32>, tensor<5x4x?xi32>) -> tensor<?x5x3x?xi32>
  return %0 : tensor<?x5x3x?xi32>
}

// A vector operand's axis is absent from its map and from the result: [K] x [B, K, N].
// f16 factors are widened before the product (theirs could overflow in f16).
// CHECK-LABEL: func.func @vector(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK-NEXT:    ^bb0(%[[A:[^:]*]]: f16, %[[B:[^:]*]]: f16, %[[O:[^:]*]]: f64):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f16 to f64
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : f16 to f64
// CHECK-NEXT:      arith.mulf %[[AW]], %[[BW]] : f64
// CHECK:           arith.truncf {{.*}} : f64 to f16
func.func @vector(%v: tensor<4xf16>, %b: tensor<2x4x3xf16>) -> tensor<2x3xf16> {
  %0 = graph.matmul %v, %b : (tensor<4xf16>, tensor<2x4x3xf16>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// f64: Neumaier's compensated sum, two outputs, combined once per element.
// CHECK-LABEL: func.func @f64(
// CHECK:         %{{.*}}:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK:           math.absf
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK:         linalg.generic
// CHECK:           math.absf
// CHECK:           arith.select
func.func @f64(%a: tensor<3x4xf64>, %b: tensor<4xf64>) -> tensor<3xf64> {
  %0 = graph.matmul %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// Integer matrices: the named ops compute numpy's wrapping products exactly.
// CHECK-LABEL: func.func @integer(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x4xi64>, %[[B:[^:]*]]: tensor<4x?xi64>)
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<?x?xi64>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<?x4xi64>, tensor<4x?xi64>) outs(%[[Z]] : tensor<?x?xi64>)
// CHECK:         return %[[R]]
func.func @integer(%a: tensor<?x4xi64>, %b: tensor<4x?xi64>) -> tensor<?x?xi64> {
  %0 = graph.matmul %a, %b : (tensor<?x4xi64>, tensor<4x?xi64>) -> tensor<?x?xi64>
  return %0 : tensor<?x?xi64>
}

// CHECK-LABEL: func.func @integer_batch(
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xi32>, tensor<2x4x5xi32>)
func.func @integer_batch(%a: tensor<2x3x4xi32>, %b: tensor<2x4x5xi32>) -> tensor<2x3x5xi32> {
  %0 = graph.matmul %a, %b : (tensor<2x3x4xi32>, tensor<2x4x5xi32>) -> tensor<2x3x5xi32>
  return %0 : tensor<2x3x5xi32>
}

// Two `?` batch sizes, either of which may be 1 at run time: no affine map reads that, so
// each operand is first broadcast to the result's batch size by a copy that selects.
// CHECK-LABEL: func.func @dynamic_batches(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x3x4xf32>, %[[B:[^:]*]]: tensor<?x4x2xf32>)
// CHECK-DAG:     %[[NB:.*]] = tensor.dim %[[B]]
// CHECK-DAG:     %[[NA:.*]] = tensor.dim %[[A]]
// CHECK-DAG:     %[[UA:.*]] = arith.cmpi eq, %[[NA]]
// CHECK:         %[[N:.*]] = arith.select %[[UA]], %[[NB]], %[[NA]] : index
// CHECK:         %[[CA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x3x4xf32>)
// CHECK:           tensor.extract %[[A]]
// CHECK:         %[[CB:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x4x2xf32>)
// CHECK:           tensor.extract %[[B]]
// CHECK:         linalg.generic {{.*}} ins(%[[CA]], %[[CB]] : tensor<?x3x4xf32>, tensor<?x4x2xf32>)
func.func @dynamic_batches(%a: tensor<?x3x4xf32>, %b: tensor<?x4x2xf32>) -> tensor<?x3x2xf32> {
  %0 = graph.matmul %a, %b : (tensor<?x3x4xf32>, tensor<?x4x2xf32>) -> tensor<?x3x2xf32>
  return %0 : tensor<?x3x2xf32>
}
