// RUN: irkit-opt %s -p bufferize | FileCheck %s

// Destination passing (docs/lowering.md's calling convention): a linalg op on tensors becomes
// the same op on memrefs, writing each result where its init lives when that is safe.

// Returned values are computed in their outputs, and so is everything that is only ever
// overwritten on the way there: the fill and the reduction into it (output 1), the sum
// that the last op updates in place (output 0). No buffer, no copy.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x3xf32> {graph.name = "x"}, %[[Y:[^:]*]]: memref<?x3xf32>,
// CHECK-SAME:      %[[Z:[^:]*]]: memref<?x3xf32> {graph.name = "z", graph.output = 0 : i64},
// CHECK-SAME:      %[[S:[^:]*]]: memref<?xf32> {graph.output = 1 : i64}) {
// CHECK-NOT:     memory.alloc
// CHECK:         linalg.generic
// CHECK-SAME:        ins(%[[X]], %[[Y]] : memref<?x3xf32>, memref<?x3xf32>) outs(%[[Z]] : memref<?x3xf32>) {
// CHECK:           arith.addf
// CHECK:         }
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : memref<?xf32>)
// CHECK-NEXT:    linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Z]] : memref<?x3xf32>) outs(%[[S]] : memref<?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : memref<?x3xf32>) outs(%[[Z]] : memref<?x3xf32>)
// CHECK:           arith.mulf
// CHECK-NOT:     memory.copy
// CHECK:         return{{$}}
func.func @chain(%x: tensor<?x3xf32> {graph.name = "x"}, %y: tensor<?x3xf32>)
    -> (tensor<?x3xf32> {graph.name = "z"}, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  %e2 = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%r : tensor<?x3xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x3xf32>) outs(%r : tensor<?x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<?x3xf32>
  return %r2, %s : tensor<?x3xf32>, tensor<?xf32>
}

// %a's buffer is fresh and nothing reads %a after the op that updates it: that op writes
// in place, the result takes the buffer over and frees it after its own last use.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4xf32>, %[[OUT:[^:]*]]: memref<4xf32> {graph.output = 0 : i64})
// CHECK:         %[[A:.*]] = memory.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:         linalg.map { math.sqrt } ins(%[[A]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT:    return

func.func @in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>)
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.map { math.sqrt } ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>)
  return %c : tensor<4xf32>
}


// The same update while %a is still read later: it writes a copy. An argument is never
// written: an op whose body reads its init gets a copy of it (here in its output); one
// whose body does not (a map) writes its output without one.
// CHECK-LABEL: func.func @copied(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4xf32>, %[[C:[^:]*]]: memref<4xf32> {graph.output = 0 : i64},
// CHECK-SAME:      %[[D:[^:]*]]: memref<4xf32> {graph.output = 1 : i64}, %[[F:[^:]*]]: memref<4xf32> {graph.output = 2 : i64})
// CHECK:         %[[A:.*]] = memory.alloc() : memref<4xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK-NEXT:    %[[B:.*]] = memory.alloc() : memref<4xf32>
// CHECK-NEXT:    memory.copy %[[A]], %[[B]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK:         linalg.map { arith.mulf } ins(%[[A]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]]
// CHECK-NEXT:    memory.dealloc %[[B]]
// CHECK-NEXT:    memory.copy %[[X]], %[[D]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[D]] : memref<4xf32>)
// CHECK:         linalg.map { math.exp } ins(%[[C]] : memref<4xf32>) outs(%[[F]] : memref<4xf32>)
// CHECK-NEXT:    return
func.func @copied(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>)
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %c = linalg.map { arith.mulf } ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>)
  %d = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%x : tensor<4xf32>) {
  ^bb0(%o: f32):
    %s = arith.negf %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %f = linalg.map { math.exp } ins(%c : tensor<4xf32>) outs(%x : tensor<4xf32>)
  return %c, %d, %f : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

func.func @splat(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %two = arith.constant dense<2.0> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>

// Constants. A splat that a generic reads is its scalar there (map `-> ()`); it still fills
// a buffer for the readers that need one (here its output, the matmul's init, which is
// copied into the matmul's output first: the matmul adds to it). Other constants are
// stored element by element.
// CHECK-LABEL: func.func @splat(
// CHECK-SAME:      %[[X:[^:]*]]: memref<2x4xf32>, %[[Q:[^:]*]]: memref<2x4xf32> {graph.output = 0 : i64},
// CHECK-SAME:      %[[TWO:[^:]*]]: memref<2x4xf32> {graph.output = 1 : i64})
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[C2]] : f32) outs(%[[TWO]] : memref<2x4xf32>)
// CHECK-NEXT:    %[[P:.*]] = memory.alloc() : memref<2x4xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:        ins(%[[X]], %[[C2]] : memref<2x4xf32>, f32) outs(%[[P]] : memref<2x4xf32>)
// CHECK:         %[[K:.*]] = memory.alloc() : memref<2x2xf32>
// CHECK-COUNT-4: memory.store %{{.*}}, %[[K]][%{{.*}}, %{{.*}}] : memref<2x2xf32>
// CHECK-NEXT:    memory.copy %[[TWO]], %[[Q]] : memref<2x4xf32> to memref<2x4xf32>
// CHECK-NEXT:    linalg.matmul ins(%[[K]], %[[P]] : memref<2x2xf32>, memref<2x4xf32>) outs(%[[Q]] : memref<2x4xf32>)
// CHECK-NEXT:    memory.dealloc %[[P]]
// CHECK-NEXT:    memory.dealloc %[[K]]
// CHECK-NEXT:    return
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %two : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %k = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %q = linalg.matmul ins(%k, %p : tensor<2x2xf32>, tensor<2x4xf32>) outs(%two : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %q, %two : tensor<2x4xf32>, tensor<2x4xf32>
}
