// RUN: irkit-opt %s | irkit-opt | FileCheck %s
// RUN: irkit-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The neural-network ops of the graph dialect print in the uniform tensor-op syntax, with
// their properties (defaults included, as MLIR stores them) in the attribute dictionary.

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x28x28xf32>, %[[W:.*]]: tensor<8x1x3x3xf32>)
func.func @conv2d(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>)
    -> (tensor<?x8x26x26xf32>, tensor<?x8x14x14xf32>) {
  // CHECK: graph.conv2d %[[X]], %[[W]] {padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
  // CHECK-SAME: : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x26x26xf32>
  // GENERIC: "graph.conv2d"(%{{.*}}, %{{.*}}) <{padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}>
  %0 = graph.conv2d %x, %w : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x26x26xf32>
  // (28 + 2*1 - 3) // 2 + 1 = 14
  // CHECK: graph.conv2d %[[X]], %[[W]] {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
  // CHECK-SAME: -> tensor<?x8x14x14xf32>
  %1 = graph.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x14x14xf32>
  return %0, %1 : tensor<?x8x26x26xf32>, tensor<?x8x14x14xf32>
}

// Unknown spatial sizes stay unknown; a "same" convolution (stride 1, 2*pad + 1 == kernel)
// keeps them.
// CHECK-LABEL: func.func @conv2d_dynamic
func.func @conv2d_dynamic(%x: tensor<?x?x?x?xf64>, %w: tensor<4x3x5x5xf64>)
    -> (tensor<?x4x?x?xf64>, tensor<?x4x?x?xf64>) {
  // CHECK: graph.conv2d {{.*}} : (tensor<?x?x?x?xf64>, tensor<4x3x5x5xf64>) -> tensor<?x4x?x?xf64>
  %0 = graph.conv2d %x, %w : (tensor<?x?x?x?xf64>, tensor<4x3x5x5xf64>) -> tensor<?x4x?x?xf64>
  // CHECK: graph.conv2d {{.*}}padding = array<i64: 2, 2>{{.*}} -> tensor<?x4x?x?xf64>
  %1 = graph.conv2d %x, %w {padding = array<i64: 2, 2>} : (tensor<?x?x?x?xf64>, tensor<4x3x5x5xf64>) -> tensor<?x4x?x?xf64>
  return %0, %1 : tensor<?x4x?x?xf64>, tensor<?x4x?x?xf64>
}

// CHECK-LABEL: func.func @pooling
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x28x28xf32>)
func.func @pooling(%x: tensor<?x8x28x28xf32>)
    -> (tensor<?x8x14x14xf32>, tensor<?x8x26x26xf32>, tensor<?x8x9x9xf32>) {
  // The stride defaults to the kernel size (stored as the empty array).
  // CHECK: graph.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, stride = array<i64>}
  // CHECK-SAME: : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  // GENERIC: "graph.max_pool2d"(%{{.*}}) <{kernel = array<i64: 2, 2>, stride = array<i64>}>
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  // CHECK: graph.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>}
  // CHECK-SAME: -> tensor<?x8x26x26xf32>
  %1 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x26x26xf32>
  // (28 - 4) // 3 + 1 = 9
  // CHECK: graph.avg_pool2d %[[X]] {kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>}
  // CHECK-SAME: : (tensor<?x8x28x28xf32>) -> tensor<?x8x9x9xf32>
  // GENERIC: "graph.avg_pool2d"(%{{.*}}) <{kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>}>
  %2 = graph.avg_pool2d %x {kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x9x9xf32>
  return %0, %1, %2 : tensor<?x8x14x14xf32>, tensor<?x8x26x26xf32>, tensor<?x8x9x9xf32>
}

// CHECK-LABEL: func.func @batchnorm
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x14x14xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
func.func @batchnorm(%x: tensor<?x8x14x14xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                     %g: tensor<8xf32>, %b: tensor<8xf32>)
    -> (tensor<?x8x14x14xf32>, tensor<4x8xf32>) {
  // CHECK: graph.batchnorm %[[X]], %[[M]], %[[V]], %[[G]], %[[B]] {epsilon = 1.000000e-05 : f64}
  // CHECK-SAME: -> tensor<?x8x14x14xf32>
  // GENERIC: "graph.batchnorm"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{epsilon = 1.000000e-05 : f64}>
  %0 = graph.batchnorm %x, %m, %v, %g, %b : (tensor<?x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x14x14xf32>
  // Rank 2 input [N, C] (after a dense layer); the channel count comes from the parameters.
  // CHECK: %[[F:.*]] = graph.constant
  // CHECK: graph.batchnorm %[[F]], %[[M]], %[[V]], %[[G]], %[[B]] {epsilon = 1.000000e-03 : f64}
  // CHECK-SAME: -> tensor<4x8xf32>
  %f = graph.constant dense<1.0> : tensor<4x8xf32>
  %1 = graph.batchnorm %f, %m, %v, %g, %b {epsilon = 1.0e-3 : f64} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<?x8x14x14xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[G16:.*]]: tensor<16xf32>)
func.func @layernorm(%x: tensor<?x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                     %g16: tensor<16xf32>) -> (tensor<?x16x64xf32>, tensor<?x16x64xf32>) {
  // CHECK: graph.layernorm %[[X]], %[[G]], %[[B]] {axis = -1 : i64, epsilon = 1.000000e-05 : f64}
  // CHECK-SAME: : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  // GENERIC: "graph.layernorm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = -1 : i64, epsilon = 1.000000e-05 : f64}>
  %0 = graph.layernorm %x, %g, %b : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  // CHECK: graph.layernorm %[[X]], %[[G16]], %[[G16]] {axis = 1 : i64, epsilon = 1.000000e-03 : f64}
  %1 = graph.layernorm %x, %g16, %g16 {axis = 1 : i64, epsilon = 1.0e-3 : f64} : (tensor<?x16x64xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16x64xf32>
  return %0, %1 : tensor<?x16x64xf32>, tensor<?x16x64xf32>
}

// The backward ops of conv2d and pooling. Those whose result has the shape of a forward
// operand take that operand last, for its shape only: with a stride the input size is not a
// function of the output size (inputs of 27 and 28 both give (H - 3) // 2 + 1 = 13).
// CHECK-LABEL: func.func @conv2d_backward
// CHECK-SAME: (%[[X:.*]]: tensor<?x1x28x28xf32>, %[[X27:.*]]: tensor<?x1x27x27xf32>, %[[W:.*]]: tensor<8x1x3x3xf32>, %[[DY:.*]]: tensor<?x8x13x13xf32>)
func.func @conv2d_backward(%x: tensor<?x1x28x28xf32>, %x27: tensor<?x1x27x27xf32>,
                           %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x13x13xf32>)
    -> (tensor<?x1x28x28xf32>, tensor<?x1x27x27xf32>, tensor<8x1x3x3xf32>) {
  // CHECK: graph.conv2d_backprop_input %[[DY]], %[[W]], %[[X]] {padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
  // CHECK-SAME: : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32>
  // GENERIC: "graph.conv2d_backprop_input"(%{{.*}}, %{{.*}}, %{{.*}}) <{padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}>
  %0 = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 2>} : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32>
  // CHECK: graph.conv2d_backprop_input %[[DY]], %[[W]], %[[X27]]
  // CHECK-SAME: -> tensor<?x1x27x27xf32>
  %1 = graph.conv2d_backprop_input %dy, %w, %x27 {stride = array<i64: 2, 2>} : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x27x27xf32>) -> tensor<?x1x27x27xf32>
  // CHECK: graph.conv2d_backprop_filter %[[X]], %[[DY]], %[[W]] {padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
  // CHECK-SAME: : (tensor<?x1x28x28xf32>, tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  // GENERIC: "graph.conv2d_backprop_filter"(%{{.*}}, %{{.*}}, %{{.*}}) <{padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}>
  %2 = graph.conv2d_backprop_filter %x, %dy, %w {stride = array<i64: 2, 2>} : (tensor<?x1x28x28xf32>, tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  return %0, %1, %2 : tensor<?x1x28x28xf32>, tensor<?x1x27x27xf32>, tensor<8x1x3x3xf32>
}

// Unknown sizes come from the operands that know them: the batch from the gradient, the
// spatial sizes from the shape operand, the channels from the weight or the input.
// CHECK-LABEL: func.func @conv2d_backward_dynamic
func.func @conv2d_backward_dynamic(%x: tensor<?x?x?x?xf64>, %w: tensor<4x3x5x5xf64>,
                                   %wd: tensor<?x?x?x?xf64>, %dy: tensor<2x4x?x?xf64>)
    -> (tensor<2x3x?x?xf64>, tensor<4x3x?x?xf64>) {
  // CHECK: graph.conv2d_backprop_input {{.*}} : (tensor<2x4x?x?xf64>, tensor<4x3x5x5xf64>, tensor<?x?x?x?xf64>) -> tensor<2x3x?x?xf64>
  %0 = graph.conv2d_backprop_input %dy, %w, %x {padding = array<i64: 2, 2>} : (tensor<2x4x?x?xf64>, tensor<4x3x5x5xf64>, tensor<?x?x?x?xf64>) -> tensor<2x3x?x?xf64>
  // CHECK: graph.conv2d_backprop_filter {{.*}} : (tensor<?x?x?x?xf64>, tensor<2x4x?x?xf64>, tensor<?x?x?x?xf64>) -> tensor<4x?x?x?xf64>
  %1 = graph.conv2d_backprop_filter %x, %dy, %wd : (tensor<?x?x?x?xf64>, tensor<2x4x?x?xf64>, tensor<?x?x?x?xf64>) -> tensor<4x?x?x?xf64>
  // A result type may be more precise than the operands give.
  // CHECK: graph.conv2d_backprop_filter {{.*}} -> tensor<4x3x?x?xf64>
  %2 = graph.conv2d_backprop_filter %x, %dy, %wd : (tensor<?x?x?x?xf64>, tensor<2x4x?x?xf64>, tensor<?x?x?x?xf64>) -> tensor<4x3x?x?xf64>
  return %0, %2 : tensor<2x3x?x?xf64>, tensor<4x3x?x?xf64>
}

// CHECK-LABEL: func.func @pooling_backward
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x28x28xf32>, %[[DY:.*]]: tensor<?x8x14x14xf32>, %[[DY9:.*]]: tensor<?x8x9x9xf32>)
func.func @pooling_backward(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x8x14x14xf32>,
                            %dy9: tensor<?x8x9x9xf32>)
    -> (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>, tensor<?x8x28x28xf32>) {
  // CHECK: graph.max_pool2d_grad %[[X]], %[[DY]] {kernel = array<i64: 2, 2>, stride = array<i64>}
  // CHECK-SAME: : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32>
  // GENERIC: "graph.max_pool2d_grad"(%{{.*}}, %{{.*}}) <{kernel = array<i64: 2, 2>, stride = array<i64>}>
  %0 = graph.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32>
  // CHECK: graph.max_pool2d_grad_grad %[[X]], %[[X]] {kernel = array<i64: 2, 2>, stride = array<i64>}
  // CHECK-SAME: : (tensor<?x8x28x28xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  // GENERIC: "graph.max_pool2d_grad_grad"(%{{.*}}, %{{.*}}) <{kernel = array<i64: 2, 2>, stride = array<i64>}>
  %1 = graph.max_pool2d_grad_grad %x, %x {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  // (28 - 4) // 3 + 1 = 9
  // CHECK: graph.avg_pool2d_grad %[[DY9]], %[[X]] {kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>}
  // CHECK-SAME: : (tensor<?x8x9x9xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x28x28xf32>
  // GENERIC: "graph.avg_pool2d_grad"(%{{.*}}, %{{.*}}) <{kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>}>
  %2 = graph.avg_pool2d_grad %dy9, %x {kernel = array<i64: 4, 4>, stride = array<i64: 3, 3>} : (tensor<?x8x9x9xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x28x28xf32>
  return %0, %1, %2 : tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>, tensor<?x8x28x28xf32>
}
