// RUN: irkit-opt %s -p bufferize | FileCheck %s
// RUN: irkit-opt %s -p 'bufferize{keep-variables=true}' | FileCheck %s --check-prefix=KEEP

// Variables: a memref argument per variable used, in declaration order; the declarations
// become the module attribute. A read is the variable's buffer unless the variable is
// assigned while the value read, or a view of it, is still needed: here the slice of @w is
// read after @w is assigned, so the read copies @w first. An assign is a copy into the
// variable.

// CHECK-LABEL: module attributes {graph.variables = [
// CHECK-SAME:    {initializer = "zeros", name = "w", type = tensor<4x3xf32>},
// CHECK-SAME:    {initializer = "zeros", name = "steps", type = tensor<i64>}]}
// CHECK-NOT:   graph.variable @
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:[^:]*]]: memref<4x3xf32>, %[[R:[^:]*]]: memref<2x3xf32> {graph.output = 0 : i64},
// CHECK-SAME:      %[[NEW:[^:]*]]: memref<4x3xf32> {graph.output = 1 : i64},
// CHECK-SAME:      %[[W:[^:]*]]: memref<4x3xf32> {graph.variable = "w"},
// CHECK-SAME:      %[[STEPS:[^:]*]]: memref<i64> {graph.variable = "steps"}) {
// CHECK:         %[[OLD:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK-NEXT:    memory.copy %[[W]], %[[OLD]] : memref<4x3xf32> to memref<4x3xf32>
// CHECK-NEXT:    %[[S:.*]] = memory.subview %[[OLD]][1, 0] [2, 3] [1, 1]
// CHECK-NEXT:    linalg.map { arith.subf } ins(%[[OLD]], %[[X]] : memref<4x3xf32>, memref<4x3xf32>) outs(%[[NEW]] : memref<4x3xf32>)
// CHECK-NEXT:    memory.copy %[[NEW]], %[[W]] : memref<4x3xf32> to memref<4x3xf32>
// CHECK-NEXT:    linalg.map { math.exp } ins(%[[S]] : {{.*}}) outs(%[[R]] : memref<2x3xf32>)
// CHECK-NEXT:    memory.dealloc %[[OLD]] : memref<4x3xf32>
// The read of @steps is its buffer itself: nothing reads it after the assign.
// CHECK:         linalg.map { arith.addi {{.*}} } ins(%[[STEPS]], %{{.*}} : memref<i64>, memref<i64>) outs(%[[ST1:.*]] : memref<i64>)
// CHECK:         memory.copy %[[ST1]], %[[STEPS]] : memref<i64> to memref<i64>
// CHECK:         return{{$}}

// KEEP: graph.variable @w : tensor<4x3xf32> init zeros
// KEEP: graph.variable @steps : tensor<i64> init zeros
// KEEP: func.func @step(
// KEEP-SAME: {graph.variable = "w"}
graph.variable @w : tensor<4x3xf32> init zeros
graph.variable @steps : tensor<i64> init zeros
func.func @step(%x: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %w = graph.read @w : tensor<4x3xf32>
  %s = tensor.extract_slice %w[1, 0] [2, 3] [1, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %new = linalg.map { arith.subf } ins(%w, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>)
  graph.assign @w, %new : tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %r = linalg.map { math.exp } ins(%s : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>)
  %st = graph.read @steps : tensor<i64>
  %one = arith.constant dense<1> : tensor<i64>
  %e3 = tensor.empty() : tensor<i64>
  %st1 = linalg.map { arith.addi } ins(%st, %one : tensor<i64>, tensor<i64>) outs(%e3 : tensor<i64>)
  graph.assign @steps, %st1 : tensor<i64>
  return %r, %new : tensor<2x3xf32>, tensor<4x3xf32>
}
