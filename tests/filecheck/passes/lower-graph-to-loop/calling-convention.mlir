// RUN: irkit-opt %s -p lower-graph-to-loop | FileCheck %s
// RUN: irkit-opt %s -p 'lower-graph-to-loop{keep-variables=true}' | FileCheck %s --check-prefix=KEEP

// The calling convention (docs/lowering.md): inputs as memrefs, then one output memref per
// result (written in place; the function returns nothing), then one memref per variable
// the function uses, in declaration order. The declarations become a module attribute.

// CHECK-LABEL: module attributes {graph.variables = [
// CHECK-SAME:    {initializer = "zeros", name = "w", type = tensor<4x3xf32>},
// CHECK-SAME:    {initializer = "zeros", name = "steps", type = tensor<i64>}]}
// CHECK-NOT:   graph.variable @
// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:[^:]*]]: memref<?x4xf32> {graph.name = "x"}, %[[LR:[^:]*]]: memref<f32>,
// CHECK-SAME:      %[[Y:[^:]*]]: memref<?x3xf32> {graph.name = "y", graph.output = 0 : i64},
// CHECK-SAME:      %[[OLD:[^:]*]]: memref<4x3xf32> {graph.output = 1 : i64},
// CHECK-SAME:      %[[W:[^:]*]]: memref<4x3xf32> {graph.variable = "w"},
// CHECK-SAME:      %[[STEPS:[^:]*]]: memref<i64> {graph.variable = "steps"}) {
// The value read from @w is still needed (it is returned) after @w is assigned: it is
// copied first, straight into its output.
// CHECK:         memory.copy %[[W]], %[[OLD]] : memref<4x3xf32> to memref<4x3xf32>
// The matmul reads the snapshot; its sum, carried in f64, is rounded into its output.
// CHECK:         loop.parallel
// CHECK:           memory.load %[[OLD]]
// CHECK:         loop.parallel
// CHECK:           memory.store %{{.*}}, %[[Y]]
// A 0-d operand is loaded once, before the loop.
// CHECK:         %[[T:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = memory.load %[[LR]][] : memref<f32>
// CHECK-NEXT:    loop.parallel
// CHECK-NEXT:      memory.load %[[OLD]]
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[R]] : f32
// CHECK:         %[[NEW:.*]] = memory.alloc() : memref<4x3xf32>
// CHECK:         memory.dealloc %[[T]] : memref<4x3xf32>
// The assign: a copy into the variable's buffer; the temporary is freed right after.
// CHECK-NEXT:    memory.copy %[[NEW]], %[[W]] : memref<4x3xf32> to memref<4x3xf32>
// CHECK-NEXT:    memory.dealloc %[[NEW]] : memref<4x3xf32>
// A read not followed by an assign while in use is the variable's buffer itself.
// CHECK:         memory.load %[[STEPS]][] : memref<i64>
// CHECK:         memory.copy %{{.*}}, %[[STEPS]] : memref<i64> to memref<i64>
// CHECK:         return{{$}}

// KEEP: graph.variable @w : tensor<4x3xf32> init zeros
// KEEP: graph.variable @steps : tensor<i64> init zeros
// KEEP: func.func @step(
// KEEP-SAME: {graph.variable = "w"}
graph.variable @w : tensor<4x3xf32> init zeros
graph.variable @steps : tensor<i64> init zeros
func.func @step(%x: tensor<?x4xf32> {graph.name = "x"}, %lr: tensor<f32>)
    -> (tensor<?x3xf32> {graph.name = "y"}, tensor<4x3xf32>) {
  %w = graph.read @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %g = graph.mul %w, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %new = graph.sub %w, %g : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  graph.assign @w, %new : tensor<4x3xf32>
  %s = graph.read @steps : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %s1 = graph.add %s, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  graph.assign @steps, %s1 : tensor<i64>
  return %y, %w : tensor<?x3xf32>, tensor<4x3xf32>
}
