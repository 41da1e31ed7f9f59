// RUN: irkit-opt %s --allow-unregistered-dialect | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | irkit-opt --allow-unregistered-dialect | FileCheck %s
// RUN: irkit-opt %s --allow-unregistered-dialect --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The linalg dialect in MLIR 22's custom syntax, and in generic form: every op carries its
// body region there (named ops build theirs), `linalg.generic` stores its iterator types as
// #linalg.iterator_type<...>, matmul always stores its indexing maps, and the sliding-window
// ops carry MLIR's `linalg.memoized_indexing_maps`.

// CHECK-LABEL: func.func @generic(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[ACC:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {doc = "row sums", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"], library_call = "row_sum"} ins(%[[A]] : tensor<4x8xf32>) outs(%[[ACC]] : tensor<4xf32>) attrs = {test.tag = 1 : i64} {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[X]], %[[S]] : f32
// CHECK-NEXT:      linalg.yield %[[N]] : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    return %[[R]]
// GENERIC-LABEL: sym_name = "generic"
// GENERIC:       "linalg.generic"(%arg0, %arg1) <{doc = "row sums", indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], library_call = "row_sum", operandSegmentSizes = array<i32: 1, 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32):
// GENERIC-NEXT:    "linalg.index"() <{dim = 1 : i64}> : () -> index
// GENERIC:         "linalg.yield"(%{{.*}}) : (f32) -> ()
// GENERIC-NEXT:  }) {test.tag = 1 : i64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @generic(%a: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"],
                       doc = "row sums", library_call = "row_sum"}
      ins(%a : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) attrs = {test.tag = 1} {
  ^bb0(%x: f32, %s: f32):
    %i = linalg.index 1 : index
    %n = arith.addf %x, %s : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// On buffers: no results; a scalar input with an empty map; several outputs; no inputs.
// CHECK-LABEL: func.func @generic_buffers(
// CHECK-SAME:      %[[M:.*]]: memref<?x8xf64>, %[[V:.*]]: f64, %[[O1:.*]]: memref<?xf64>, %[[O2:.*]]: memref<?xf64>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[M]], %[[V]] : memref<?x8xf64>, f64) outs(%[[O1]], %[[O2]] : memref<?xf64>, memref<?xf64>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64):
// CHECK:           linalg.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%[[O1]] : memref<?xf64>) {
// GENERIC-LABEL: sym_name = "generic_buffers"
// GENERIC:       "linalg.generic"(%arg0, %arg1, %arg2, %arg3)
// GENERIC-SAME:    operandSegmentSizes = array<i32: 2, 2>
// GENERIC:       }) : (memref<?x8xf64>, f64, memref<?xf64>, memref<?xf64>) -> ()
// GENERIC:       "linalg.generic"(%arg2)
// GENERIC-SAME:    operandSegmentSizes = array<i32: 0, 1>
func.func @generic_buffers(%m: memref<?x8xf64>, %v: f64, %o1: memref<?xf64>, %o2: memref<?xf64>) {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%m, %v : memref<?x8xf64>, f64) outs(%o1, %o2 : memref<?xf64>, memref<?xf64>) {
  ^bb0(%x: f64, %scale: f64, %s: f64, %mx: f64):
    %p = arith.mulf %x, %scale : f64
    %n = arith.addf %p, %s : f64
    %m2 = arith.maximumf %x, %mx : f64
    linalg.yield %n, %m2 : f64, f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%o1 : memref<?xf64>) {
  ^bb0(%old: f64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f64
    linalg.yield %f : f64
  }
  return
}

// Two results, and the generic form read back into the custom one.
// CHECK-LABEL: func.func @generic_two_results(
// CHECK:         %{{.*}}:2 = linalg.generic
// CHECK-SAME:      outs(%{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xi32>) {
// CHECK:         } -> (tensor<4xi32>, tensor<4xi32>)
// CHECK-LABEL: func.func @generic_input(
// CHECK-NEXT:    %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%arg0 : tensor<3xf32>) {
func.func @generic_two_results(%a: tensor<4x2xi32>, %o: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x2xi32>) outs(%o, %o : tensor<4xi32>, tensor<4xi32>) {
  ^bb0(%x: i32, %s: i32, %m: i32):
    %n = arith.addi %x, %s : i32
    %k = arith.maxsi %x, %m : i32
    linalg.yield %n, %k : i32, i32
  } -> (tensor<4xi32>, tensor<4xi32>)
  return %r#0, %r#1 : tensor<4xi32>, tensor<4xi32>
}
func.func @generic_input(%o: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "linalg.generic"(%o) <{indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%x: f32):
    "linalg.yield"(%x) : (f32) -> ()
  }) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @fill(
// CHECK-SAME:      %[[Z:.*]]: f32, %[[T:.*]]: tensor<4x8xf32>, %[[M:.*]]: memref<?xi8>, %[[B:.*]]: i8)
// CHECK-NEXT:    %[[R:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[T]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    linalg.fill {test.tag} ins(%[[B]] : i8) outs(%[[M]] : memref<?xi8>)
// GENERIC-LABEL: sym_name = "fill"
// GENERIC:       "linalg.fill"(%arg0, %arg1) <{operandSegmentSizes = array<i32: 1, 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// GENERIC-NEXT:    "linalg.yield"(%[[V]]) : (f32) -> ()
// GENERIC-NEXT:  }) : (f32, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:       "linalg.fill"(%arg3, %arg2) <{operandSegmentSizes = array<i32: 1, 1>}> ({
// GENERIC:       }) {test.tag} : (i8, memref<?xi8>) -> ()
func.func @fill(%z: f32, %t: tensor<4x8xf32>, %m: memref<?xi8>, %b: i8) -> tensor<4x8xf32> {
  %r = linalg.fill ins(%z : f32) outs(%t : tensor<4x8xf32>) -> tensor<4x8xf32>
  linalg.fill {test.tag} ins(%b : i8) outs(%m : memref<?xi8>)
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @copies(
// CHECK-NEXT:    %{{.*}} = linalg.transpose ins(%arg0 : tensor<2x3x4xf32>) outs(%arg1 : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK-NEXT:    %{{.*}} = linalg.broadcast ins(%arg2 : tensor<3xf32>) outs(%arg0 : tensor<2x3x4xf32>) dimensions = [0, 2] {test.tag}
// CHECK-NEXT:    linalg.transpose ins(%arg3 : memref<?x5xi32>) outs(%arg4 : memref<5x?xi32>) permutation = [1, 0]
// GENERIC-LABEL: sym_name = "copies"
// GENERIC:       "linalg.transpose"(%arg0, %arg1) <{permutation = array<i64: 2, 0, 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// GENERIC-NEXT:    "linalg.yield"(%[[X]]) : (f32) -> ()
// GENERIC-NEXT:  }) : (tensor<2x3x4xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
// GENERIC:       "linalg.broadcast"(%arg2, %arg0) <{dimensions = array<i64: 0, 2>}> ({
// GENERIC:       }) {test.tag} : (tensor<3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
func.func @copies(%a: tensor<2x3x4xf32>, %t: tensor<4x2x3xf32>, %v: tensor<3xf32>,
                  %m: memref<?x5xi32>, %mt: memref<5x?xi32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%t : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  %1 = linalg.broadcast ins(%v : tensor<3xf32>) outs(%a : tensor<2x3x4xf32>) dimensions = [0, 2] {test.tag}
  linalg.transpose ins(%m : memref<?x5xi32>) outs(%mt : memref<5x?xi32>) permutation = [1, 0]
  return %0, %1 : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// The short form stands for a body that is one op on the inputs (reduce: on init, input).
// CHECK-LABEL: func.func @map_reduce(
// CHECK-NEXT:    %{{.*}} = linalg.map { arith.addf } ins(%arg0, %arg0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%arg1 : tensor<4x8xf32>)
// CHECK-NEXT:    %{{.*}} = linalg.map { arith.addi {overflowFlags = #arith.overflow<nsw>} } ins(%arg3, %arg3 : tensor<4xi32>, tensor<4xi32>) outs(%arg3 : tensor<4xi32>)
// CHECK-NEXT:    %{{.*}} = linalg.map ins(%arg0 : tensor<4x8xf32>) outs(%arg1 : tensor<4x8xf32>) {test.tag}
// CHECK-NEXT:      (%[[X:.*]]: f32, %[[O:.*]]: f32) {
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]], %[[O]] : f32
// CHECK-NEXT:        linalg.yield %[[Y]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    %{{.*}} = linalg.reduce { arith.maximumf } ins(%arg0 : tensor<4x8xf32>) outs(%arg2 : tensor<4xf32>) dimensions = [1]
// CHECK-NEXT:    %{{.*}} = linalg.reduce ins(%arg0 : tensor<4x8xf32>) outs(%arg2 : tensor<4xf32>) dimensions = [1]
// CHECK-NEXT:      (%[[X:.*]]: f32, %[[S:.*]]: f32) {
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[X]], %[[S]] : f32
// CHECK-NEXT:        linalg.yield %[[N]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    %{{.*}}:2 = linalg.reduce ins(%arg0, %arg0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%arg2, %arg2 : tensor<4xf32>, tensor<4xf32>) dimensions = [1]
// CHECK-NEXT:      (%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32) {
// GENERIC-LABEL: sym_name = "map_reduce"
// GENERIC:       "linalg.map"(%arg0, %arg0, %arg1) ({
// GENERIC-NEXT:  ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// GENERIC-NEXT:    %[[S:.*]] = "arith.addf"(%[[A]], %[[B]]) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT:    "linalg.yield"(%[[S]]) : (f32) -> ()
// GENERIC-NEXT:  }) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC:       "linalg.reduce"(%arg0, %arg2) <{dimensions = array<i64: 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// GENERIC-NEXT:    %[[M:.*]] = "arith.maximumf"(%[[ACC]], %[[X]]) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC:       "linalg.reduce"(%arg0, %arg0, %arg2, %arg2) <{dimensions = array<i64: 1>}> ({
func.func @map_reduce(%a: tensor<4x8xf32>, %o: tensor<4x8xf32>, %r: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4x8xf32>, tensor<4xi32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = linalg.map { arith.addf } ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%o : tensor<4x8xf32>)
  %1 = linalg.map { arith.addi {overflowFlags = #arith.overflow<nsw>} } ins(%i, %i : tensor<4xi32>, tensor<4xi32>) outs(%i : tensor<4xi32>)
  %2 = linalg.map ins(%a : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) {test.tag}
    (%x: f32, %old: f32) {
      %y = arith.mulf %x, %old : f32
      linalg.yield %y : f32
    }
  %3 = linalg.reduce { arith.maximumf } ins(%a : tensor<4x8xf32>) outs(%r : tensor<4xf32>) dimensions = [1]
  // Operands (in, init) are not the short form's (init, in): printed in full.
  %4 = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%r : tensor<4xf32>) dimensions = [1]
    (%x: f32, %s: f32) {
      %n = arith.addf %x, %s : f32
      linalg.yield %n : f32
    }
  %5:2 = linalg.reduce ins(%a, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%r, %r : tensor<4xf32>, tensor<4xf32>) dimensions = [1]
    (%x: f32, %y: f32, %s: f32, %m: f32) {
      %n = arith.addf %s, %x : f32
      %k = arith.maximumf %m, %y : f32
      linalg.yield %n, %k : f32, f32
    }
  return %0, %1, %2, %3, %5#0, %5#1 : tensor<4x8xf32>, tensor<4xi32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @contractions(
// CHECK-NEXT:    %{{.*}} = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%arg2 : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %{{.*}} = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%arg3, %arg1 : tensor<8x4xf32>, tensor<8x16xf32>) outs(%arg2 : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %{{.*}} = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%arg4, %arg4 : tensor<4x4xi8>, tensor<4x4xi8>) outs(%arg5 : tensor<4x4xi32>) -> tensor<4x4xi32>
// CHECK-NEXT:    %{{.*}} = linalg.batch_matmul ins(%arg6, %arg7 : tensor<2x4x8xf16>, tensor<2x8x16xf16>) outs(%arg8 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT:    linalg.matmul ins(%arg9, %arg9 : memref<?x?xf64>, memref<?x?xf64>) outs(%arg9 : memref<?x?xf64>)
// GENERIC-LABEL: sym_name = "contractions"
// GENERIC:       "linalg.matmul"(%arg0, %arg1, %arg2) <{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// GENERIC-NEXT:    %[[P:.*]] = "arith.mulf"(%[[A]], %[[B]]) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT:    %[[S:.*]] = "arith.addf"(%[[C]], %[[P]]) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
// GENERIC-NEXT:    "linalg.yield"(%[[S]]) : (f32) -> ()
// GENERIC:       "linalg.matmul"(%arg4, %arg4, %arg5) <{cast = #linalg.type_fn<cast_unsigned>, indexing_maps =
// GENERIC:         "arith.extui"(%{{.*}}) : (i8) -> i32
// GENERIC:         "arith.muli"
// GENERIC:       "linalg.batch_matmul"(%arg6, %arg7, %arg8) <{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC:         "arith.extf"(%{{.*}}) : (f16) -> f32
func.func @contractions(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>,
                        %at: tensor<8x4xf32>, %q: tensor<4x4xi8>, %qc: tensor<4x4xi32>,
                        %ba: tensor<2x4x8xf16>, %bb: tensor<2x8x16xf16>, %bc: tensor<2x4x16xf32>,
                        %m: memref<?x?xf64>) {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                      affine_map<(m, n, k) -> (k, n)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%at, %b : tensor<8x4xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = linalg.matmul {cast = #linalg.type_fn<cast_unsigned>} ins(%q, %q : tensor<4x4xi8>, tensor<4x4xi8>) outs(%qc : tensor<4x4xi32>) -> tensor<4x4xi32>
  %3 = linalg.batch_matmul ins(%ba, %bb : tensor<2x4x8xf16>, tensor<2x8x16xf16>) outs(%bc : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  linalg.matmul ins(%m, %m : memref<?x?xf64>, memref<?x?xf64>) outs(%m : memref<?x?xf64>)
  "test.use"(%0, %1, %2, %3) : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x4xi32>, tensor<2x4x16xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @windows(
// CHECK-NEXT:    %{{.*}} = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%arg0, %arg1 : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%arg2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %{{.*}} = linalg.conv_2d_nchw_fchw ins(%arg0, %arg1 : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%arg3 : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
// CHECK-NEXT:    %{{.*}} = linalg.pooling_nchw_max {dilations = dense<2> : tensor<2xi64>} ins(%arg0, %arg4 : tensor<1x3x9x9xf32>, tensor<2x2xf32>) outs(%arg5 : tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32>
// CHECK-NEXT:    %{{.*}} = linalg.pooling_nchw_sum {strides = dense<[2, 1]> : tensor<2xi64>} ins(%arg0, %arg4 : tensor<1x3x9x9xf32>, tensor<2x2xf32>) outs(%arg6 : tensor<1x3x4x8xf32>) -> tensor<1x3x4x8xf32>
// GENERIC-LABEL: sym_name = "windows"
// GENERIC:       "linalg.conv_2d_nchw_fchw"(%arg0, %arg1, %arg2) <{dilations = dense<1> : tensor<2xi64>, operandSegmentSizes = array<i32: 2, 1>, strides = dense<2> : tensor<2xi64>}> ({
// GENERIC:       }) {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// GENERIC:       "linalg.pooling_nchw_max"(%arg0, %arg4, %arg5) <{dilations = dense<2> : tensor<2xi64>, operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC-NEXT:  ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %[[O:.*]]: f32):
// GENERIC-NEXT:    %[[M:.*]] = "arith.maximumf"(%[[O]], %[[X]])
// GENERIC:       }) {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4 * 2, d3 + d5 * 2)>,
// GENERIC:       "linalg.pooling_nchw_sum"(%arg0, %arg4, %arg6)
// GENERIC:         "arith.addf"
func.func @windows(%x: tensor<1x3x9x9xf32>, %k: tensor<4x3x3x3xf32>, %o: tensor<1x4x4x4xf32>,
                   %o1: tensor<1x4x7x7xf32>, %w: tensor<2x2xf32>, %p: tensor<1x3x7x7xf32>,
                   %ps: tensor<1x3x4x8xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %k : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = linalg.conv_2d_nchw_fchw ins(%x, %k : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%o1 : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %2 = linalg.pooling_nchw_max {dilations = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x9x9xf32>, tensor<2x2xf32>) outs(%p : tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32>
  %3 = linalg.pooling_nchw_sum {strides = dense<[2, 1]> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x9x9xf32>, tensor<2x2xf32>) outs(%ps : tensor<1x3x4x8xf32>) -> tensor<1x3x4x8xf32>
  "test.use"(%0, %1, %2, %3) : (tensor<1x4x4x4xf32>, tensor<1x4x7x7xf32>, tensor<1x3x7x7xf32>, tensor<1x3x4x8xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @elementwise(
// CHECK-NEXT:    %{{.*}} = linalg.add ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%arg2 : tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = linalg.sub ins(
// CHECK-NEXT:    %{{.*}} = linalg.mul ins(
// CHECK-NEXT:    %{{.*}} = linalg.div ins(
// CHECK-NEXT:    %{{.*}} = linalg.max ins(
// CHECK-NEXT:    %{{.*}} = linalg.min ins(
// CHECK-NEXT:    %{{.*}} = linalg.exp ins(%arg0 : tensor<8xf32>) outs(%arg2 : tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %{{.*}} = linalg.log ins(
// CHECK-NEXT:    %{{.*}} = linalg.abs ins(
// CHECK-NEXT:    %{{.*}} = linalg.ceil ins(
// CHECK-NEXT:    %{{.*}} = linalg.floor ins(
// CHECK-NEXT:    %{{.*}} = linalg.negf ins(
// CHECK-NEXT:    %{{.*}} = linalg.sqrt ins(
// CHECK-NEXT:    %{{.*}} = linalg.rsqrt ins(
// CHECK-NEXT:    %{{.*}} = linalg.tanh ins(
// CHECK-NEXT:    %{{.*}} = linalg.erf ins(
// CHECK-NEXT:    linalg.add ins(%arg3, %arg3 : memref<?xi32>, memref<?xi32>) outs(%arg3 : memref<?xi32>)
// CHECK-NEXT:    linalg.max ins(%arg3, %arg3 : memref<?xi32>, memref<?xi32>) outs(%arg3 : memref<?xi32>)
// GENERIC-LABEL: sym_name = "elementwise"
// GENERIC:       "linalg.add"(%arg0, %arg1, %arg2) <{operandSegmentSizes = array<i32: 2, 1>}> ({
// GENERIC:         "arith.addf"
// GENERIC:       "linalg.sub"
// GENERIC:         "arith.subf"
// GENERIC:       "linalg.mul"
// GENERIC:         "arith.mulf"
// GENERIC:       "linalg.div"
// GENERIC:         "arith.divf"
// GENERIC:       "linalg.max"
// GENERIC:         "arith.maximumf"
// GENERIC:       "linalg.min"
// GENERIC:         "arith.minimumf"
// GENERIC:       "linalg.exp"(%arg0, %arg2) <{operandSegmentSizes = array<i32: 1, 1>}> ({
// GENERIC:         "math.exp"
// GENERIC:       "linalg.abs"
// GENERIC:         "math.absf"
// GENERIC:       "linalg.negf"
// GENERIC:         "arith.negf"
// GENERIC:       "linalg.add"(%arg3, %arg3, %arg3)
// GENERIC:         "arith.addi"
// GENERIC:       "linalg.max"(%arg3, %arg3, %arg3)
// GENERIC:         "arith.maxsi"
func.func @elementwise(%a: tensor<8xf32>, %b: tensor<8xf32>, %o: tensor<8xf32>, %m: memref<?xi32>) {
  %0 = linalg.add ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %1 = linalg.sub ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.mul ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %3 = linalg.div ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %4 = linalg.max ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %5 = linalg.min ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %6 = linalg.exp ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %7 = linalg.log ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %8 = linalg.abs ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %9 = linalg.ceil ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %10 = linalg.floor ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %11 = linalg.negf ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %12 = linalg.sqrt ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %13 = linalg.rsqrt ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %14 = linalg.tanh ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  %15 = linalg.erf ins(%a : tensor<8xf32>) outs(%o : tensor<8xf32>) -> tensor<8xf32>
  linalg.add ins(%m, %m : memref<?xi32>, memref<?xi32>) outs(%m : memref<?xi32>)
  linalg.max ins(%m, %m : memref<?xi32>, memref<?xi32>) outs(%m : memref<?xi32>)
  "test.use"(%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> ()
  return
}
