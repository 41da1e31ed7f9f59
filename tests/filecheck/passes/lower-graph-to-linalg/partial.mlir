// RUN: irkit-opt %s -p lower-graph-to-linalg | FileCheck %s

// Without full=true the pass is partial: ops no rule converts stay (here the dataflow
// switch), as do the variables and their reads and assigns (state, for bufferize); the
// ops around them are converted, reading and feeding them as tensors.
// CHECK-LABEL: graph.variable @w
// CHECK-LABEL: func.func @f(
// CHECK:         %[[W:.*]] = graph.read @w : tensor<4xf32>
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[S:.*]]:2 = graph.switch %[[E]], %{{.*}}
// CHECK:         graph.assign @w, %[[E]] : tensor<4xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[S]]#0 : tensor<4xf32>)
// CHECK:           math.exp
graph.variable @w : tensor<4xf32> init zeros
func.func @f(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %w = graph.read @w : tensor<4xf32>
  %e = graph.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %0:2 = graph.switch %e, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  graph.assign @w, %e : tensor<4xf32>
  %r = graph.exp %0#0 : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
