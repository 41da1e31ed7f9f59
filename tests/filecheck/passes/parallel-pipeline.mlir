// RUN: irkit-opt %s -p 'autodiff,canonicalize,cse,parallel-pipeline{micro-batches=2}' | FileCheck %s

// Two stages on a `pipe` axis, the batch in 2 micro-batches: stage 0 (the first matmul, its
// weight and the update of it) sends each micro-batch's activations forward before it
// receives any gradient back (GPipe); stage 1 sends the gradients of the activations back,
// last micro-batch first, and the loss (the mean of the micro-batches' means) to stage 0.
// The unmarked backward ops take the stage of the forward op at their location.
// Each weight's gradient is accumulated: one `x^T g` matmul per micro-batch, summed, never
// a concatenation of the micro-batches' activations (which would keep them all live).

module @m {
  parallel.grid @g(shape = [2], axes = ["pipe"])
  graph.variable @w1 : tensor<8x4xf32> init zeros
  graph.variable @w2 : tensor<4x2xf32> init zeros
  // CHECK: module @m attributes {{{.*}}parallel.micro_batches = 2 : i64, parallel.stages = {step = [@step_stage0, @step_stage1]}, parallel.variable_stages = {w1 = 0 : i64, w2 = 1 : i64}
  // CHECK-LABEL: func.func @step_stage0
  // CHECK-SAME: attributes {parallel.grid = @g, parallel.stage = 0 : i64}
  // CHECK: %[[X:.*]]:2 = graph.split %arg0 {axis = 0 : i64, sections = 2 : i64}
  // CHECK: %[[H0:.*]] = graph.matmul %[[X]]#0, %{{.*}} {parallel.micro = 0 : i64}
  // CHECK-NEXT: parallel.send %[[H0]] on @g ["pipe"] {offset = 1 : i64, parallel.micro = 0 : i64}
  // CHECK: %[[H1:.*]] = graph.matmul %[[X]]#1, %{{.*}} {parallel.micro = 1 : i64}
  // CHECK-NEXT: parallel.send %[[H1]] on @g ["pipe"] {offset = 1 : i64, parallel.micro = 1 : i64}
  // CHECK-NOT: parallel.send
  // CHECK: parallel.recv on @g ["pipe"] {offset = 1 : i64, parallel.micro = 1 : i64}
  // CHECK-NOT: graph.concat
  // CHECK: %[[G1:.*]] = graph.matmul {{.*}} {parallel.micro = 1 : i64} : (tensor<8x?xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  // CHECK: parallel.recv on @g ["pipe"] {offset = 1 : i64, parallel.micro = 0 : i64}
  // CHECK-NOT: graph.concat
  // CHECK: %[[G0:.*]] = graph.matmul {{.*}} {parallel.micro = 0 : i64} : (tensor<8x?xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  // CHECK-NEXT: %[[SUM0:.*]] = graph.add %[[G0]], %[[G1]] : (tensor<8x4xf32>, tensor<8x4xf32>)
  // CHECK-NEXT: graph.assign @w1, %[[SUM0]]
  // CHECK-NOT: graph.assign @w2
  // CHECK-LABEL: func.func @step_stage1
  // CHECK: parallel.recv on @g ["pipe"] {offset = -1 : i64, parallel.micro = 0 : i64} : tensor<?x4xf32>
  // CHECK: parallel.recv on @g ["pipe"] {offset = -1 : i64, parallel.micro = 1 : i64} : tensor<?x4xf32>
  // CHECK: parallel.send %{{.*}} on @g ["pipe"] {offset = -1 : i64, parallel.micro = 1 : i64} : tensor<?x4xf32>
  // CHECK-NOT: graph.concat
  // CHECK: %[[V1:.*]] = graph.matmul {{.*}} {parallel.micro = 1 : i64} : (tensor<4x?xf32>, tensor<?x2xf32>) -> tensor<4x2xf32>
  // CHECK: parallel.send %{{.*}} on @g ["pipe"] {offset = -1 : i64, parallel.micro = 0 : i64} : tensor<?x4xf32>
  // CHECK-NOT: graph.concat
  // CHECK: %[[V0:.*]] = graph.matmul {{.*}} {parallel.micro = 0 : i64} : (tensor<4x?xf32>, tensor<?x2xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: %[[SUM1:.*]] = graph.add %[[V0]], %[[V1]]
  // CHECK-NEXT: graph.assign @w2, %[[SUM1]]
  // CHECK-NOT: graph.assign @w1
  // CHECK: parallel.send %[[L:.*]] on @g ["pipe"] {offset = -1 : i64} : tensor<f32>
  // CHECK-NEXT: return %[[L]]
  func.func @step(%x: tensor<?x8xf32>) -> tensor<f32> {
    %w1 = graph.read @w1 : tensor<8x4xf32> loc("m.irk":2:1)
    %w2 = graph.read @w2 : tensor<4x2xf32> loc("m.irk":3:1)
    %h = graph.matmul %x, %w1 {parallel.stage = 0 : i64} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32> loc("m.irk":4:1)
    %y = graph.matmul %h, %w2 {parallel.stage = 1 : i64} : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32> loc("m.irk":5:1)
    %l = graph.reduce_mean %y {axes = array<i64: 0, 1>, keepdims = false, parallel.stage = 1 : i64} : (tensor<?x2xf32>) -> tensor<f32> loc("m.irk":6:1)
    %g:2 = autodiff.grad %l wrt %w1, %w2 : (tensor<f32>) -> (tensor<8x4xf32>, tensor<4x2xf32>) loc("m.irk":7:1)
    graph.assign @w1, %g#0 : tensor<8x4xf32> loc("m.irk":7:1)
    graph.assign @w2, %g#1 : tensor<4x2xf32> loc("m.irk":7:1)
    return %l : tensor<f32>
  }
}
