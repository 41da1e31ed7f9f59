// RUN: irkit-opt %s -p bufferize | FileCheck %s

// graph.if: a loop.if on the loaded predicate, each branch bufferized by the same rules.
// A returned result is its output buffer, written by the branches (the then branch's map
// does not read its init %a, which lives on after the if and is not overwritten; the else
// branch computes in the output and updates it in place). A dynamic result that is not
// returned is a buffer each branch allocates and yields; it is freed after its last use.

// CHECK-LABEL: func.func @cond(
// CHECK-SAME:      %[[P:[^:]*]]: memref<i1>, %[[X:[^:]*]]: memref<?x3xf32>, %[[R:[^:]*]]: memref<?x3xf32> {graph.output = 0 : i64}, %[[U:[^:]*]]: memref<?x3xf32> {graph.output = 1 : i64})
// CHECK:         %[[A:.*]] = memory.alloc(%[[N:.*]]) : memref<?x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[X]] : memref<?x3xf32>) outs(%[[A]] : memref<?x3xf32>)
// CHECK-NEXT:    %[[C1:.*]] = memory.load %[[P]][] : memref<i1>
// CHECK-NEXT:    loop.if %[[C1]] {
// CHECK-NEXT:      linalg.map { arith.mulf } ins(%[[X]], %[[A]] : memref<?x3xf32>, memref<?x3xf32>) outs(%[[R]] : memref<?x3xf32>)
// CHECK-NEXT:    } else {
// CHECK-NEXT:      linalg.map { math.sqrt } ins(%[[X]] : memref<?x3xf32>) outs(%[[R]] : memref<?x3xf32>)
// CHECK-NEXT:      linalg.generic {{.*}} outs(%[[R]] : memref<?x3xf32>)
// CHECK:         %[[C2:.*]] = memory.load %[[P]][] : memref<i1>
// CHECK-NEXT:    %[[T:.*]] = loop.if %[[C2]] -> (memref<?x3xf32>) {
// CHECK-NEXT:      %[[COPY:.*]] = memory.alloc(%[[N]]) : memref<?x3xf32>
// CHECK-NEXT:      memory.copy %[[A]], %[[COPY]]
// CHECK-NEXT:      loop.yield %[[COPY]] : memref<?x3xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[F:.*]] = memory.alloc(%[[N]]) : memref<?x3xf32>
// CHECK-NEXT:      linalg.map { arith.mulf } ins(%[[A]], %[[A]] : memref<?x3xf32>, memref<?x3xf32>) outs(%[[F]] : memref<?x3xf32>)
// CHECK-NEXT:      loop.yield %[[F]] : memref<?x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    linalg.map { arith.subf } ins(%[[T]], %[[A]] : memref<?x3xf32>, memref<?x3xf32>) outs(%[[U]] : memref<?x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[A]]
// CHECK-NEXT:    memory.dealloc %[[T]]
// CHECK-NEXT:    return
func.func @cond(%p: tensor<i1>, %x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %e = tensor.empty(%n) : tensor<?x3xf32>
  %a = linalg.map { math.exp } ins(%x : tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  %r = graph.if %p -> (tensor<?x3xf32>) {
    %b = linalg.map { arith.mulf } ins(%x, %a : tensor<?x3xf32>, tensor<?x3xf32>) outs(%a : tensor<?x3xf32>)
    graph.yield %b : tensor<?x3xf32>
  } else {
    %e2 = tensor.empty(%n) : tensor<?x3xf32>
    %c = linalg.map { math.sqrt } ins(%x : tensor<?x3xf32>) outs(%e2 : tensor<?x3xf32>)
    %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        outs(%c : tensor<?x3xf32>) {
    ^bb0(%o: f32):
      %s = arith.negf %o : f32
      linalg.yield %s : f32
    } -> tensor<?x3xf32>
    graph.yield %d : tensor<?x3xf32>
  }
  %t = graph.if %p -> (tensor<?x3xf32>) {
    graph.yield %a : tensor<?x3xf32>
  } else {
    %f = linalg.map { arith.mulf } ins(%a, %a : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
    graph.yield %f : tensor<?x3xf32>
  }
  %u = linalg.map { arith.subf } ins(%t, %a : tensor<?x3xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>)
  return %r, %u : tensor<?x3xf32>, tensor<?x3xf32>
}
