// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// softmax: two passes over x. The row maximum (from -inf); then one reduction generic that
// sums exp(x - shift) in f64 (shift: the maximum, or 0 where it is not finite) and stores
// each exponential in a second output indexed by both loops; the wide sum's reciprocal
// rounded once per row; then the normalization reads the stored exponentials, not x, as its
// own output (in place): e * (1 / sum), the exponential computed once, no division per
// element.
// CHECK-LABEL: func.func @softmax_rows(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x10xf32>)
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[MI:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK-NEXT:    %[[M:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x10xf32>) outs(%[[MI]] : tensor<?xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[SI:.*]] = linalg.fill ins(%[[ZERO]] : f64)
// CHECK-NEXT:    %[[EI:.*]] = tensor.empty(%{{.*}}) : tensor<?x10xf32>
// CHECK-NEXT:    %[[S:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[M]] : tensor<?x10xf32>, tensor<?xf32>) outs(%[[SI]], %[[EI]] : tensor<?xf64>, tensor<?x10xf32>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[MX:.*]]: f32, %[[ACC:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[ABS:.*]] = math.absf %[[MX]] : f32
// CHECK-NEXT:      %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-NEXT:      %[[FIN:.*]] = arith.cmpf olt, %[[ABS]], %[[INF]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[SH:.*]] = arith.select %[[FIN]], %[[MX]], %[[Z]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[SH]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[W]] : f64
// CHECK-NEXT:      linalg.yield %[[N]], %[[E]] : f64, f32
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[S]]#0 : tensor<?xf64>) outs(%{{.*}} : tensor<?xf32>)
// CHECK-NEXT:    ^bb0(%[[WS:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:      %[[INV:.*]] = arith.divf %[[ONE]], %[[WS]] : f64
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[INV]] : f64 to f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[T]] : tensor<?xf32>) outs(%[[S]]#1 : tensor<?x10xf32>)
// CHECK-NEXT:    ^bb0(%[[RECIP:.*]]: f32, %[[EXP:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.mulf %[[EXP]], %[[RECIP]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32
// CHECK:         return %[[Y]]
func.func @softmax_rows(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// f16 keeps the division: 1 / sum would be subnormal in f16 for rows over 2^14 elements.
// CHECK-LABEL: func.func @softmax_f16(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}} : tensor<?xf64>) outs(%{{.*}} : tensor<?xf16>)
// CHECK-NEXT:    ^bb0(%[[WS:.*]]: f64, %{{.*}}: f16):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[WS]] : f64 to f16
// CHECK-NEXT:      linalg.yield %[[R]] : f16
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[TOT:.*]]: f16, %[[EXP:.*]]: f16):
// CHECK-NEXT:      arith.divf %[[EXP]], %[[TOT]] : f16
// CHECK-NOT:       arith.mulf
// CHECK:         return
func.func @softmax_f16(%x: tensor<?x10xf16>) -> tensor<?x10xf16> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<?x10xf16>) -> tensor<?x10xf16>
  return %0 : tensor<?x10xf16>
}

// log_softmax along axis 0: the same two passes with axis 0 a reduction loop; the sum's
// generic stores z = x - shift, the log is taken of the wide sum before rounding, and the
// result is z - log_sum, written over z.
// CHECK-LABEL: func.func @log_softmax_cols(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<5x3xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[X]] :
// CHECK:           arith.maximumf
// CHECK:         %[[S:.*]]:2 = linalg.generic {{.*}} affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[X]], %{{.*}} : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<3xf64>, tensor<5x3xf32>)
// CHECK:           %[[SHIFTED:.*]] = arith.subf
// CHECK-NEXT:      math.exp %[[SHIFTED]]
// CHECK:           linalg.yield %{{.*}}, %[[SHIFTED]] : f64, f32
// CHECK:         %[[LS:.*]] = linalg.generic {{.*}} ins(%[[S]]#0 : tensor<3xf64>) outs(%{{.*}} : tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[WS:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[L:.*]] = math.log %[[WS]] : f64
// CHECK-NEXT:      arith.truncf %[[L]] : f64 to f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[LS]] : tensor<3xf32>) outs(%[[S]]#1 : tensor<5x3xf32>)
// CHECK-NEXT:    ^bb0(%[[LSE:.*]]: f32, %[[Z:.*]]: f32):
// CHECK-NEXT:      %[[OUT:.*]] = arith.subf %[[Z]], %[[LSE]] : f32
// CHECK-NEXT:      linalg.yield %[[OUT]] : f32
func.func @log_softmax_cols(%x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %0 = graph.log_softmax %x {axis = 0 : i64} : (tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// cross_entropy with class indices: after the row maximum and log-sum-exp, one reduction
// over the batch reads each row's logit at its label with tensor.extract, after a
// graph.check that the label is in [0, C); the index is clamped to 0 when it is not. The
// sum (f64) is negated, divided by the batch size and rounded once.
// CHECK-LABEL: func.func @xent_labels(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x4xf32>, %[[L:[^:]*]]: tensor<?xi32>)
// CHECK:         %[[B:.*]] = tensor.dim %[[X]]
// CHECK:         %[[C:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[L]], %{{.*}}, %{{.*}} : tensor<?xi32>, tensor<?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<f64>) {
// CHECK-NEXT:    ^bb0(%[[LBL:.*]]: i32, %{{.*}}: f32, %[[LS:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extsi %[[LBL]] : i32 to i64
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[GE:.*]] = arith.cmpi sge, %[[W]], %[[Z]] : i64
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[W]], %[[C]] : i64
// CHECK-NEXT:      %[[OK:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:      graph.check %[[OK]], %[[W]], %[[C]] {message = "'graph.cross_entropy' failed: label {value} is out of range for {bound} classes"} : i64, i64
// CHECK-NEXT:      %[[IX:.*]] = arith.index_cast %[[W]] : i64 to index
// CHECK-NEXT:      %[[Z0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[AT:.*]] = arith.select %[[OK]], %[[IX]], %[[Z0]] : index
// CHECK-NEXT:      %[[ROW:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[PICK:.*]] = tensor.extract %[[X]][%[[ROW]], %[[AT]]] : tensor<?x4xf32>
// CHECK:           %[[T1:.*]] = arith.subf %[[PICK]], %{{.*}} : f32
// CHECK-NEXT:      %[[T2:.*]] = arith.subf %[[T1]], %[[LS]] : f32
// CHECK-NEXT:      %[[T3:.*]] = arith.extf %[[T2]] : f32 to f64
// CHECK-NEXT:      %[[N:.*]] = arith.addf %[[ACC]], %[[T3]] : f64
// CHECK:         %[[BI:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT:    %[[BF:.*]] = arith.sitofp %[[BI]] : i64 to f64
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<f64>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f64, %{{.*}}: f32):
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[V]] : f64
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[NEG]], %[[BF]] : f64
// CHECK-NEXT:      arith.truncf %[[MEAN]] : f64 to f32
func.func @xent_labels(%x: tensor<?x4xf32>, %l: tensor<?xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// Float targets: the terms labels * log_softmax over both axes, widened, in one wide sum.
// CHECK-LABEL: func.func @xent_targets(
// CHECK-NOT:     graph.check
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<f64>)
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK-NEXT:      %[[PW:.*]] = arith.extf %[[P]] : f32 to f64
// CHECK-NEXT:      arith.addf %{{.*}}, %[[PW]] : f64
func.func @xent_targets(%x: tensor<?x4xf32>, %t: tensor<?x4xf32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %t : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// mse: the operands broadcast as elementwise operands do (the row vector through the map
// (d0, d1) -> (d1)); the difference is taken in f64, squared and summed, then divided by
// the element count and rounded.
// CHECK-LABEL: func.func @mse_broadcast(
// CHECK-SAME:      %[[P:[^:]*]]: tensor<?x3xf32>, %[[Q:[^:]*]]: tensor<3xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%[[P]], %[[Q]] : tensor<?x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<f64>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f32 to f64
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : f32 to f64
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[AW]], %[[BW]] : f64
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : f64
// CHECK-NEXT:      arith.addf %[[ACC]], %[[SQ]] : f64
// CHECK:         %[[N:.*]] = arith.muli
// CHECK:         %[[NF:.*]] = arith.sitofp
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<f64>)
// CHECK:           arith.divf %{{.*}}, %[[NF]] : f64
func.func @mse_broadcast(%p: tensor<?x3xf32>, %q: tensor<3xf32>) -> tensor<f32> {
  %0 = graph.mse %p, %q : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
