// RUN: irkit-opt %s -p linalg-generalize-named-ops --allow-unregistered-dialect --split-input-file | FileCheck %s

// Every named op becomes the `linalg.generic` with its maps, iterator types and body; the
// generic op that was already there stays; uses move to the new results.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<4x16xf32>)
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[C]] : tensor<4x16xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[Z]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[R]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = linalg.matmul {test.dropped} ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A transposed operand keeps its map; integer inputs are cast as the op says.
// CHECK-LABEL: func.func @matmul_transposed_unsigned(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:           arith.extui %{{.*}} : i8 to i32
// CHECK-NEXT:      arith.extui %{{.*}} : i8 to i32
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      arith.addi
func.func @matmul_transposed_unsigned(%a: tensor<8x4xi8>, %b: tensor<8x16xi8>, %c: tensor<4x16xi32>) -> tensor<4x16xi32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      {cast = #linalg.type_fn<cast_unsigned>}
      ins(%a, %b : tensor<8x4xi8>, tensor<8x16xi8>) outs(%c : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %0 : tensor<4x16xi32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:           arith.extf %{{.*}} : f16 to f32
func.func @batch_matmul(%a: tensor<2x4x8xf16>, %b: tensor<2x8x16xf16>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf16>, tensor<2x8x16xf16>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// On buffers: no results.
// CHECK-LABEL: func.func @fill(
// CHECK-SAME:      %[[V:.*]]: f32, %[[M:.*]]: memref<?x8xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[V]] : f32) outs(%[[M]] : memref<?x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[X]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @fill(%v: f32, %m: memref<?x8xf32>) {
  linalg.fill ins(%v : f32) outs(%m : memref<?x8xf32>)
  return
}

// -----

// The input is read through the inverse permutation.
// CHECK-LABEL: func.func @transpose(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3x4xf32>) outs(%arg1 : tensor<4x2x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[X]] : f32
func.func @transpose(%a: tensor<2x3x4xf32>, %t: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %0 = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%t : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
func.func @broadcast(%v: tensor<3xf32>, %o: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = linalg.broadcast ins(%v : tensor<3xf32>) outs(%o : tensor<2x3x4xf32>) dimensions = [0, 2]
  return %0 : tensor<2x3x4xf32>
}

// -----

// The user's body is kept as written (the short form's operand order included).
// CHECK-LABEL: func.func @map_reduce(
// CHECK:         %[[M:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.subf %[[X]], %[[Y]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[M]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %{{.*}} = arith.maximumf %[[ACC]], %[[IN]] : f32
func.func @map_reduce(%a: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.map { arith.subf } ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a : tensor<4x8xf32>)
  %1 = linalg.reduce { arith.maximumf } ins(%0 : tensor<4x8xf32>) outs(%r : tensor<4xf32>) dimensions = [1]
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_pool(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-NOT:     linalg.memoized_indexing_maps
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4 * 2, d3 + d5 * 2)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.pooling
func.func @conv_pool(%x: tensor<1x3x9x9xf32>, %k: tensor<4x3x3x3xf32>, %o: tensor<1x4x4x4xf32>,
                     %w: tensor<2x2xf32>, %p: tensor<1x3x7x7xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x3x7x7xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>}
      ins(%x, %k : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = linalg.pooling_nchw_max {dilations = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x9x9xf32>, tensor<2x2xf32>) outs(%p : tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<1x3x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           arith.divsi
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           math.exp
func.func @elementwise(%i: tensor<8xi32>, %f: tensor<8xf32>) -> (tensor<8xi32>, tensor<8xf32>) {
  %0 = linalg.div ins(%i, %i : tensor<8xi32>, tensor<8xi32>) outs(%i : tensor<8xi32>) -> tensor<8xi32>
  %1 = linalg.exp ins(%f : tensor<8xf32>) outs(%f : tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xi32>, tensor<8xf32>
}

// -----

// A generic op is left alone; a named op in a generic's body is generalized too.
// CHECK-LABEL: func.func @nested(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%arg0 : tensor<2xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32):
// CHECK-NEXT:      "test.region"() ({
// CHECK-NEXT:        linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%arg2 : f32) outs(%arg1 : memref<f32>) {
// CHECK-NOT:     linalg.fill
func.func @nested(%o: tensor<2xf32>, %m: memref<f32>, %v: f32) -> tensor<2xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%o : tensor<2xf32>) {
  ^bb0(%x: f32):
    "test.region"() ({
      linalg.fill ins(%v : f32) outs(%m : memref<f32>)
      "test.end"() : () -> ()
    }) : () -> ()
    linalg.yield %x : f32
  } -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
