// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// conv2d: the input zero-padded by tensor.pad, then a generic with conv_2d_nchw_fchw's maps
// whose body multiplies in f32 and sums in f64; one rounding generic after.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x1x28x28xf32>, %[[W:[^:]*]]: tensor<8x1x3x3xf32>)
// CHECK:         %[[XP:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         } : tensor<?x1x28x28xf32> to tensor<?x1x30x30xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<?x8x28x28xf64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XP]], %[[W]] : tensor<?x1x30x30xf32>, tensor<8x1x3x3xf32>) outs(%[[ACC]] : tensor<?x8x28x28xf64>)
// CHECK-NEXT:    ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32, %[[O:[^:]*]]: f64):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[PW:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK-NEXT:      arith.addf %[[O]], %[[PW]] : f64
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x8x28x28xf64>)
// CHECK:           arith.truncf
func.func @conv2d(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<?x8x28x28xf32> {
  %y = graph.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x28x28xf32>
  return %y : tensor<?x8x28x28xf32>
}

// The transposed convolution: dy spread into a zero canvas at the stride (row oi lands at
// 2*oi + 3-1-0), then a stride-1 correlation with the kernel reversed in the map.
// CHECK-LABEL: func.func @backprop_input(
// CHECK-SAME:      %[[DY:[^:]*]]: tensor<?x8x13x13xf32>, %[[W:[^:]*]]: tensor<8x1x3x3xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x8x30x30xf32>)
// CHECK:         %[[CANVAS:.*]] = tensor.insert_slice %[[DY]] into %[[Z]][0, 0, 2, 2] [%{{.*}}, 8, 13, 13] [1, 1, 2, 2] : tensor<?x8x13x13xf32> into tensor<?x8x30x30xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 - d5 + 2, d3 - d6 + 2)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[CANVAS]], %[[W]] : tensor<?x8x30x30xf32>, tensor<8x1x3x3xf32>)
func.func @backprop_input(%dy: tensor<?x8x13x13xf32>, %w: tensor<8x1x3x3xf32>, %x: tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32> {
  %dx = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 2>} : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32>
  return %dx : tensor<?x1x28x28xf32>
}

// A kernel of run-time size cannot be reversed in a map: the weight is flipped by a copy
// (tensor.extract at KH-1-a, KW-1-b) and the canvas read at h + di.
// CHECK-LABEL: func.func @backprop_input_dynamic_kernel(
// CHECK-SAME:      %[[DY:[^:]*]]: tensor<?x?x?x?xf32>, %[[W:[^:]*]]: tensor<?x?x?x?xf32>
// CHECK:         %[[CANVAS:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] [1, 1, 2, 1]
// CHECK:         %[[FLIP:.*]] = linalg.generic
// CHECK:           tensor.extract %[[W]]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>, {{.*}}]{{.*}} ins(%[[CANVAS]], %[[FLIP]] :
func.func @backprop_input_dynamic_kernel(%dy: tensor<?x?x?x?xf32>, %w: tensor<?x?x?x?xf32>, %x: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %dx = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %dx : tensor<?x?x?x?xf32>
}

// backprop_filter: dy[n, o, i, j] * xpad[n, c, i + di, j + dj] summed over (n, i, j).
// CHECK-LABEL: func.func @backprop_filter(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x1x28x28xf32>, %[[DY:[^:]*]]: tensor<?x8x28x28xf32>
// CHECK:         %[[XP:.*]] = tensor.pad %[[X]]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[DY]], %[[XP]] :
func.func @backprop_filter(%x: tensor<?x1x28x28xf32>, %dy: tensor<?x8x28x28xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32> {
  %dw = graph.conv2d_backprop_filter %x, %dy, %w {padding = array<i64: 1, 1>} : (tensor<?x1x28x28xf32>, tensor<?x8x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  return %dw : tensor<8x1x3x3xf32>
}

// max_pool2d: the named pooling op into -inf (maximumf, as np.maximum).
// CHECK-LABEL: func.func @max_pool(
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<?x8x14x14xf32>)
// CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:         linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %[[WIN]] : tensor<?x8x28x28xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<?x8x14x14xf32>)
func.func @max_pool(%x: tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return %y : tensor<?x8x14x14xf32>
}

// avg_pool2d: the named sum pooling into f64 (its body is extf + addf), then / 9 and round.
// CHECK-LABEL: func.func @avg_pool(
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {{.*}} outs(%{{.*}} : tensor<2x8x3x3xf64>) -> tensor<2x8x3x3xf64>
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x8x3x3xf64>)
// CHECK:           %[[NINE:.*]] = arith.constant 9.000000e+00 : f64
// CHECK:           %[[MEAN:.*]] = arith.divf %{{.*}}, %[[NINE]] : f64
// CHECK:           arith.truncf %[[MEAN]] : f64 to f32
func.func @avg_pool(%x: tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32> {
  %y = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>} : (tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32>
  return %y : tensor<2x8x3x3xf32>
}

// f64 needs the compensated sum: a generic with the pooling maps, two outputs.
// CHECK-LABEL: func.func @avg_pool_f64(
// CHECK:         %{{.*}}:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>,
// CHECK-NOT:     linalg.pooling_nchw_sum
func.func @avg_pool_f64(%x: tensor<1x2x6x6xf64>) -> tensor<1x2x3x3xf64> {
  %y = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<1x2x6x6xf64>) -> tensor<1x2x3x3xf64>
  return %y : tensor<1x2x3x3xf64>
}

// max_pool2d_grad: each window's first maximum as a tap number (a reduction over the taps
// carrying the best value and its tap), then tap by tap a strided view of the zeroed dx
// takes dy where its window chose that tap.
// CHECK-LABEL: func.func @max_pool_grad(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8x28x28xf32>, %[[DY:[^:]*]]: tensor<?x8x14x14xf32>)
// CHECK:         %[[TAPS:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[X]], %{{.*}} : tensor<?x8x28x28xf32>, tensor<2x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<?x8x14x14xf32>, tensor<?x8x14x14xi64>)
// CHECK:           arith.cmpf ogt
// CHECK:           arith.cmpf uno
// CHECK:         %[[DX0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x8x28x28xf32>)
// CHECK:         %[[V0:.*]] = tensor.extract_slice %[[DX0]][0, 0, 0, 0] [%{{.*}}, 8, 14, 14] [1, 1, 2, 2]
// CHECK:         %[[U0:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[TAPS]]#1 : tensor<?x8x14x14xf32>, tensor<?x8x14x14xi64>) outs(%[[V0]] : tensor<?x8x14x14xf32>)
// CHECK:         %[[DX1:.*]] = tensor.insert_slice %[[U0]] into %[[DX0]][0, 0, 0, 0] [%{{.*}}, 8, 14, 14] [1, 1, 2, 2]
// CHECK:         tensor.extract_slice %[[DX1]][0, 0, 0, 1]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 1, 0]
// CHECK:         tensor.extract_slice %{{.*}}[0, 0, 1, 1]
// CHECK:         %[[LAST:.*]] = tensor.insert_slice
// CHECK:         return %[[LAST]]
func.func @max_pool_grad(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32> {
  %dx = graph.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32>
  return %dx : tensor<?x8x28x28xf32>
}

// max_pool2d_grad_grad: the same reduction carrying the tangent, read through x's map.
// CHECK-LABEL: func.func @max_pool_grad_grad(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8x28x28xf32>, %[[T:[^:]*]]: tensor<?x8x28x28xf32>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, {{.*}} ins(%[[X]], %[[T]], %{{.*}} :
// CHECK:         return %[[R]]#1
func.func @max_pool_grad_grad(%x: tensor<?x8x28x28xf32>, %t: tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32> {
  %y = graph.max_pool2d_grad_grad %x, %t {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return %y : tensor<?x8x14x14xf32>
}

// avg_pool2d_grad: tap by tap, dy / 9 added into the tap's strided view (overlapping
// windows add up, in the reference's order).
// CHECK-LABEL: func.func @avg_pool_grad(
// CHECK-COUNT-9: tensor.insert_slice %{{.*}} [1, 1, 2, 2]
// CHECK-NOT:     tensor.insert_slice
func.func @avg_pool_grad(%dy: tensor<?x8x3x3xf32>, %x: tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32> {
  %dx = graph.avg_pool2d_grad %dy, %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<?x8x3x3xf32>, tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>
  return %dx : tensor<?x8x8x8xf32>
}

// batchnorm: one elementwise generic, the parameters read at the channel.
// CHECK-LABEL: func.func @batchnorm(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NEXT:    ^bb0(%[[X:[^:]*]]: f32, %[[M:[^:]*]]: f32, %[[V:[^:]*]]: f32, %[[G:[^:]*]]: f32, %[[B:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT:      %[[VE:.*]] = arith.addf %[[V]], %[[EPS]] : f32
// CHECK-NEXT:      %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:      %[[SCALE:.*]] = arith.divf %[[G]], %[[SD]] : f32
// CHECK-NEXT:      %[[C:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[C]], %[[SCALE]] : f32
// CHECK-NEXT:      arith.addf %[[Y]], %[[B]] : f32
func.func @batchnorm(%x: tensor<64x8x14x14xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<64x8x14x14xf32> {
  %y = graph.batchnorm %x, %m, %v, %g, %b : (tensor<64x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<64x8x14x14xf32>
  return %y : tensor<64x8x14x14xf32>
}

// layernorm: two passes over x. One reduction generic gathers the shifted sums
// S1 = sum(x - K) and S2 = sum((x - K)^2) in f64, K the row's first element read through
// the map (d0, d1, d2) -> (d0, d1, 0); one generic per row makes S1/n and
// sqrt(max((S2 - S1^2/n)/n, 0) + eps), rounded once; the normalization reads x and K
// again, mean = K + S1/n rounded once. Nothing else reads x.
// CHECK-LABEL: func.func @layernorm(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x16x64xf32>
// CHECK:         %[[N:.*]] = arith.sitofp %{{.*}} : i64 to f64
// CHECK:         %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : tensor<?x16x64xf32>, tensor<?x16x64xf32>) outs(%{{.*}}, %{{.*}} : tensor<?x16xf64>, tensor<?x16xf64>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[K:.*]]: f32, %[[S1:.*]]: f64, %[[S2:.*]]: f64):
// CHECK-NEXT:      %[[VW:.*]] = arith.extf %[[V]] : f32 to f64
// CHECK-NEXT:      %[[KW:.*]] = arith.extf %[[K]] : f32 to f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[VW]], %[[KW]] : f64
// CHECK-NEXT:      %[[S1N:.*]] = arith.addf %[[S1]], %[[D]] : f64
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f64
// CHECK-NEXT:      %[[S2N:.*]] = arith.addf %[[S2]], %[[SQ]] : f64
// CHECK-NEXT:      linalg.yield %[[S1N]], %[[S2N]] : f64, f64
// CHECK-NOT:     ins(%[[X]]
// CHECK:         %[[STATS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[SUMS]]#0, %[[SUMS]]#1 : tensor<?x16xf64>, tensor<?x16xf64>) outs(%{{.*}}, %{{.*}} : tensor<?x16xf64>, tensor<?x16xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[A2:.*]] = arith.mulf %[[A]], %[[A]] : f64
// CHECK-NEXT:      %[[A2N:.*]] = arith.divf %[[A2]], %[[N]] : f64
// CHECK-NEXT:      %[[M2:.*]] = arith.subf %[[B]], %[[A2N]] : f64
// CHECK-NEXT:      %[[VAR:.*]] = arith.divf %[[M2]], %[[N]] : f64
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      %[[CL:.*]] = arith.maximumf %[[VAR]], %[[Z]] : f64
// CHECK:           %[[SD:.*]] = math.sqrt %{{.*}} : f64
// CHECK-NEXT:      %[[C:.*]] = arith.divf %[[A]], %[[N]] : f64
// CHECK-NEXT:      %[[SD32:.*]] = arith.truncf %[[SD]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[C]], %[[SD32]] : f64, f32
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[X]], %[[STATS]]#0, %[[STATS]]#1, %{{.*}}, %{{.*}} :
// CHECK-NEXT:    ^bb0(%[[V2:.*]]: f32, %[[K2:.*]]: f32, %[[OFF:.*]]: f64, %[[STD:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[K2W:.*]] = arith.extf %[[K2]] : f32 to f64
// CHECK-NEXT:      %[[MW:.*]] = arith.addf %[[K2W]], %[[OFF]] : f64
// CHECK-NEXT:      %[[MEAN:.*]] = arith.truncf %[[MW]] : f64 to f32
// CHECK-NEXT:      %[[CEN:.*]] = arith.subf %[[V2]], %[[MEAN]] : f32
// CHECK-NEXT:      arith.divf %[[CEN]], %[[STD]] : f32
// CHECK-NOT:     ins(%[[X]]
// CHECK:         return %[[Y]]
func.func @layernorm(%x: tensor<?x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x16x64xf32> {
  %y = graph.layernorm %x, %g, %b : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  return %y : tensor<?x16x64xf32>
}

// layernorm along a middle axis of size `?`: K is the first element along that axis,
// (d0, d1, d2) -> (d0, 0, d2), in both passes.
// CHECK-LABEL: func.func @layernorm_middle_axis(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4x?x8xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[X]] :
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf64>, tensor<4x8xf64>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, {{.*}} ins(%[[X]], %[[X]],
func.func @layernorm_middle_axis(%x: tensor<4x?x8xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<4x?x8xf32> {
  %y = graph.layernorm %x, %g, %b {axis = 1 : i64} : (tensor<4x?x8xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<4x?x8xf32>
  return %y : tensor<4x?x8xf32>
}
