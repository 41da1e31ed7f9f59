// RUN: irkit-opt %s -p lower-graph-to-loop --split-input-file --verify-diagnostics | FileCheck %s

// Control flow through the whole pipeline (lower-graph-to-linalg keeps graph.if, bufferize
// makes it a loop.if, lower-linalg-to-loop lowers the kernels inside each branch).

// graph.if: a loop.if on the predicate loaded from its 0-d buffer. The returned result is
// the output buffer (destination passing): the then branch computes into it, the else
// branch copies its value from above into it. A temporary of the branch is freed there.

// CHECK-LABEL: func.func @cond(
// CHECK-SAME:    %[[P:.*]]: memref<i1>, %[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<4xf32> {graph.output = 0 : i64})
// CHECK:         %[[C:.*]] = memory.load %[[P]][] : memref<i1>
// CHECK-NEXT:    loop.if %[[C]] {
// CHECK:           %[[T:.*]] = memory.alloc() : memref<4xf32>
// CHECK:           loop.parallel
// CHECK:             memory.store %{{.*}}, %[[T]]
// CHECK:           loop.parallel
// CHECK:             memory.load %[[T]]
// CHECK:             memory.store %{{.*}}, %[[Y]]
// CHECK:           memory.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memory.copy %[[X]], %[[Y]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return
func.func @cond(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.if %p -> (tensor<4xf32>) {
    %1 = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    %2 = graph.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %2 : tensor<4xf32>
  } else {
    graph.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A dynamic result that is not returned: each branch allocates it and the loop.if yields
// the memref, freed after its last use.

// CHECK-LABEL: func.func @dyn(
// CHECK:         %[[R:.*]] = loop.if %{{.*}} -> (memref<?xf32>) {
// CHECK:           %[[A:.*]] = memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK:           loop.yield %[[A]] : memref<?xf32>
// CHECK:         } else {
// CHECK:           %[[B:.*]] = memory.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      memory.copy %{{.*}}, %[[B]]
// CHECK-NEXT:      loop.yield %[[B]] : memref<?xf32>
// CHECK:         loop.parallel
// CHECK:           memory.load %[[R]]
// CHECK:         memory.dealloc %[[R]] : memref<?xf32>
func.func @dyn(%p: tensor<i1>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.if %p -> (tensor<?xf32>) {
    %1 = graph.neg %x : (tensor<?xf32>) -> tensor<?xf32>
    graph.yield %1 : tensor<?xf32>
  } else {
    graph.yield %x : tensor<?xf32>
  }
  %2 = graph.exp %0 : (tensor<?xf32>) -> tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// Dataflow switch/merge have no structured form: the error names the pass that rebuilds them
// as graph.if.

func.func @switch(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  // expected-error @+1 {{no lower-graph-to-linalg rule for 'graph.switch' yet: dataflow deadness has no structured form; run graph-raise-control-flow first}}
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %v, %i = graph.merge %f, %t : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %v : tensor<4xf32>
}

