// RUN: irkit-opt %s -p linalg-fuse-elementwise-ops --split-input-file | FileCheck %s
// RUN: irkit-opt %s -p 'linalg-fuse-elementwise-ops{max-body-ops=1}' --split-input-file | FileCheck %s --check-prefix=LIMIT
// RUN: irkit-opt %s -p linalg-fuse-elementwise-ops,canonicalize,cse --verify-each=numeric --split-input-file | FileCheck %s --check-prefix=NUM

// The interpreter gives the same results before and after (random inputs, every function).
// NUM-LABEL: func.func @chain(

// Three elementwise generics become one; %a, read by the first and the last, is one input.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[S]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[EXP]], %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    } -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[R]]
// Each body alone is within the limit, two together are not.
// LIMIT-LABEL: func.func @chain(
// LIMIT-COUNT-3: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.exp %x : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%1, %a : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// An elementwise producer (a named op) runs inside the reduction that reads it; the fill
// that starts the sum initializes an output and stays.
// CHECK-LABEL: func.func @exp_into_sum(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>)
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK-NOT:     linalg.exp
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[A]] : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[EXP]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    return %[[R]]
// NUM-LABEL: func.func @exp_into_sum(
func.func @exp_into_sum(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.exp ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Softmax: the exponentials are used by the sum and by the division. The sum's iteration
// space is theirs, so the sum computes them too, as an extra output (first) whose map uses
// the reduction loop, which the division then reads. The sum reduces, so it is no producer.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK-NOT:     linalg.exp
// CHECK:         %[[R:.*]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[A]] : tensor<4x8xf32>) outs(%[[E]], %[[F]] : tensor<4x8xf32>, tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[EXP]] : f32
// CHECK-NEXT:      linalg.yield %[[EXP]], %[[S]] : f32, f32
// CHECK-NEXT:    } -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[D:.*]] = linalg.generic {{.*}} ins(%[[R]]#0, %[[R]]#1 : tensor<4x8xf32>, tensor<4xf32>)
// CHECK:           arith.divf
// CHECK:         return %[[R]]#1, %[[D]]
// NUM-LABEL: func.func @softmax(
func.func @softmax(%a: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %r = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%r : tensor<4xf32>) -> tensor<4xf32>
  %0 = linalg.exp ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0, %1 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %1, %2 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A bias add reading a 1-d producer (its only user) through (d0, d1) -> (d1): the
// producer's input is read through that map composed with the producer's.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[T:.*]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[T]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
// NUM-LABEL: func.func @bias(
#v = affine_map<(d0) -> (d0)>
func.func @bias(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%b : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.mulf %x, %x : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A transpose feeding a matmul written as a generic folds into the matmul's map for it;
// the fill of the accumulator stays.
// CHECK-LABEL: func.func @transpose_into_matmul(
// CHECK-SAME:      %[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<8x4xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
// NUM-LABEL: func.func @transpose_into_matmul(
func.func @transpose_into_matmul(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %t0 = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%t0 : tensor<4x8xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%c0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// The producer's `linalg.index 1` is the consumer's loop 0 where the consumer reads it
// transposed.
// CHECK-LABEL: func.func @index_remapped(
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[N:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[N]] : i64 to f32
// CHECK-NEXT:      arith.mulf %[[F]], %[[X]] : f32
// CHECK-NOT:     linalg.generic
// NUM-LABEL: func.func @index_remapped(
func.func @index_remapped(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p, %a : tensor<4x8xf32>, tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

// A fill read as an input becomes its scalar in the body (of the generalized linalg.mul).
// CHECK-LABEL: func.func @fill_input(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>)
// CHECK:         %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NOT:     linalg.fill
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]] : tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf %[[X]], %[[C]] : f32
// NUM-LABEL: func.func @fill_input(
func.func @fill_input(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.mul ins(%a, %f : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Not fused: a producer with a reduction loop (its value at a point is not the point's
// own); ops that fuse with nothing keep their names.
// CHECK-LABEL: func.func @reduction_producer(
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         %[[N:.*]] = linalg.negf ins(%[[S]] : tensor<4xf32>)
// CHECK-NEXT:    return %[[N]]
// NUM-LABEL: func.func @reduction_producer(
func.func @reduction_producer(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %acc, %x : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %n = linalg.negf ins(%s : tensor<4xf32>) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// Not fused: the exponentials are also returned, and the consumer reads them broadcast
// (4 points per element): fusing would compute each one 4 times besides keeping it.
// CHECK-LABEL: func.func @would_duplicate(
// CHECK:         %[[P:.*]] = linalg.exp
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<4x8xf32>, tensor<8xf32>)
// CHECK:         return %[[R]], %[[P]]
// NUM-LABEL: func.func @would_duplicate(
func.func @would_duplicate(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.exp ins(%b : tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// Not fused: the producer's only user reads it broadcast (4 points per element), and its
// body (3 ops) is over `max-recompute-ops` (2): fusing would repeat its work 4 times.
// CHECK-LABEL: func.func @costly_broadcast(
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8xf32>)
// CHECK:         math.exp
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<4x8xf32>, tensor<8xf32>)
// NUM-LABEL: func.func @costly_broadcast(
#v = affine_map<(d0) -> (d0)>
func.func @costly_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%b : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.mulf %x, %x : f32
    %u = math.exp %t : f32
    %w = arith.addf %u, %x : f32
    linalg.yield %w : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Not fused: another user comes before the consumer, where the fused op could not be.
// CHECK-LABEL: func.func @user_before_consumer(
// CHECK:         %[[P:.*]] = linalg.exp
// CHECK:         tensor.extract %[[P]]
// CHECK-NEXT:    linalg.negf ins(%[[P]]
// NUM-LABEL: func.func @user_before_consumer(
func.func @user_before_consumer(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, f32) {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.exp ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c0 = arith.constant 0 : index
  %x = tensor.extract %p[%c0, %c0] : tensor<4x8xf32>
  %r = linalg.negf ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %x : tensor<4x8xf32>, f32
}

// -----

// Not fused: a named matmul is neither consumer nor producer (its epilogue is another
// pass's business).
// CHECK-LABEL: func.func @named_matmul(
// CHECK:         %[[X:.*]] = linalg.exp
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[X]], %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NEXT:    linalg.negf ins(%[[M]]
// NUM-LABEL: func.func @named_matmul(
func.func @named_matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.exp ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.negf ins(%m : tensor<4x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A producer that writes through a permutation (a 3-cycle, so its inverse is another
// map): its input is read through `in o out^-1 o read`, its `linalg.index 0` is the loop
// that `out^-1 o read` puts first (d2).
// CHECK-LABEL: func.func @permuted_output(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<3x4x2xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<2x3x4xf32>, tensor<3x4x2xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 2 : index
// CHECK-NOT:     linalg.generic
// NUM-LABEL: func.func @permuted_output(
func.func @permuted_output(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) -> tensor<3x4x2xf32> {
  %e = tensor.empty() : tensor<3x4x2xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2, d0)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x3x4xf32>) outs(%e : tensor<3x4x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i64
    %f = arith.sitofp %n : i64 to f32
    %t = arith.addf %x, %f : f32
    linalg.yield %t : f32
  } -> tensor<3x4x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %b : tensor<3x4x2xf32>, tensor<3x4x2xf32>) outs(%e : tensor<3x4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// One value read through two maps stays two inputs (only equal value and map merge).
// CHECK-LABEL: func.func @same_value_two_maps(
// CHECK-SAME:      %[[A:.*]]: tensor<4x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[A]] : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.subf %[[X]], %[[Y]] : f32
// NUM-LABEL: func.func @same_value_two_maps(
func.func @same_value_two_maps(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %r = linalg.sub ins(%t, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
