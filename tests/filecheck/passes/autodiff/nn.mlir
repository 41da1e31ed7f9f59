// RUN: irkit-opt %s -p autodiff,canonicalize,cse | FileCheck %s

// Derivatives of the neural-network ops. Convolution and pooling differentiate into their
// backward ops (graph.conv2d_backprop_input, ...), which differentiate into each other again;
// the normalizations into elementwise and reduce ops. Only what a requested gradient needs
// survives canonicalization.

// Reverse mode: one backward op per operand, with conv2d's stride and padding. The forward
// input is the shape operand of conv2d_backprop_input, the weight that of
// conv2d_backprop_filter; the forward conv2d itself is not needed.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[S:.*]]: tensor<?x4x4x4xf32>)
// CHECK-NEXT: %[[DX:.*]] = graph.conv2d_backprop_input %[[S]], %[[W]], %[[X]] {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<?x3x8x8xf32>
// CHECK-NEXT: %[[DW:.*]] = graph.conv2d_backprop_filter %[[X]], %[[S]], %[[W]] {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK-SAME: -> tensor<4x3x3x3xf32>
// CHECK-NEXT: return %[[DX]], %[[DW]]
func.func @conv2d(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %s: tensor<?x4x4x4xf32>)
    -> (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  %y = graph.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
  %g:2 = autodiff.grad %y seed %s wrt %x, %w : (tensor<?x4x4x4xf32>, tensor<?x4x4x4xf32>) -> (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>)
  return %g#0, %g#1 : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>
}

// The weight's gradient alone (a first layer, whose input is data): no backprop_input.
// CHECK-LABEL: func.func @conv2d_weight_only
// CHECK-NOT: graph.conv2d_backprop_input
// CHECK: graph.conv2d_backprop_filter
// CHECK-NOT: graph.conv2d_backprop_input
// CHECK: return
func.func @conv2d_weight_only(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                              %s: tensor<?x4x6x6xf32>) -> tensor<4x3x3x3xf32> {
  %y = graph.conv2d %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %g = autodiff.grad %y seed %s wrt %w : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  return %g : tensor<4x3x3x3xf32>
}

// Forward mode, by bilinearity: conv2d(tx, w) + conv2d(x, tw).
// CHECK-LABEL: func.func @conv2d_jvp
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[TX:.*]]: tensor<?x3x8x8xf32>, %[[TW:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NEXT: %[[A:.*]] = graph.conv2d %[[TX]], %[[W]]
// CHECK-NEXT: %[[B:.*]] = graph.conv2d %[[X]], %[[TW]]
// CHECK-NEXT: %[[T:.*]] = graph.add %[[A]], %[[B]]
// CHECK-NEXT: return %[[T]]
func.func @conv2d_jvp(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                      %tx: tensor<?x3x8x8xf32>, %tw: tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32> {
  %y = graph.conv2d %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %t = autodiff.jvp %y wrt %x, %w along %tx, %tw : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  return %t : tensor<?x4x6x6xf32>
}

// Hessian-vector product of |conv2d(x, w)|^2 / 2 in w (its gradient is backprop_filter(x, y),
// seeded with y itself): H v = backprop_filter(x, conv2d(x, v)). The forward y is dead.
// CHECK-LABEL: func.func @conv2d_hvp
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[V:.*]]: tensor<4x3x3x3xf32>)
// CHECK-NEXT: %[[Y:.*]] = graph.conv2d %[[X]], %[[V]]
// CHECK-NEXT: %[[H:.*]] = graph.conv2d_backprop_filter %[[X]], %[[Y]], %[[W]]
// CHECK-NEXT: return %[[H]]
func.func @conv2d_hvp(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                      %v: tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32> {
  %y = graph.conv2d %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %g = autodiff.grad %y seed %y wrt %w : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  %h = autodiff.jvp %g wrt %w along %v : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32>
  return %h : tensor<4x3x3x3xf32>
}

// Grad of grad: dx = backprop_input(s, w) is bilinear in (s, w); the cotangent u of dx
// flows to w as backprop_filter(u, s) and to s as conv2d(u, w).
// CHECK-LABEL: func.func @conv2d_grad_of_grad
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[S:.*]]: tensor<?x4x6x6xf32>, %[[U:.*]]: tensor<?x3x8x8xf32>)
// CHECK-NOT: graph.conv2d_backprop_input
// CHECK-DAG: %[[DS:.*]] = graph.conv2d %[[U]], %[[W]]
// CHECK-DAG: %[[DW:.*]] = graph.conv2d_backprop_filter %[[U]], %[[S]], %[[W]]
// CHECK-NEXT: return %[[DW]], %[[DS]]
func.func @conv2d_grad_of_grad(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                               %s: tensor<?x4x6x6xf32>, %u: tensor<?x3x8x8xf32>)
    -> (tensor<4x3x3x3xf32>, tensor<?x4x6x6xf32>) {
  %y = graph.conv2d %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %gx = autodiff.grad %y seed %s wrt %x : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x3x8x8xf32>
  %h:2 = autodiff.grad %gx seed %u wrt %w, %s : (tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>) -> (tensor<4x3x3x3xf32>, tensor<?x4x6x6xf32>)
  return %h#0, %h#1 : tensor<4x3x3x3xf32>, tensor<?x4x6x6xf32>
}

// Both poolings of one input: each cotangent goes through its pooling's backward op (x is
// max_pool2d_grad's input, avg_pool2d_grad's shape operand), and the two are summed.
// CHECK-LABEL: func.func @pooling
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x6x6xf32>, %[[S:.*]]: tensor<?x2x3x3xf32>, %[[T:.*]]: tensor<?x2x2x2xf32>)
// CHECK-DAG: %[[A:.*]] = graph.avg_pool2d_grad %[[T]], %[[X]] {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>}
// CHECK-DAG: %[[M:.*]] = graph.max_pool2d_grad %[[X]], %[[S]] {kernel = array<i64: 2, 2>, stride = array<i64>}
// CHECK-NOT: pool2d
// CHECK: %[[G:.*]] = graph.add
// CHECK-NEXT: return %[[G]]
func.func @pooling(%x: tensor<?x2x6x6xf32>, %s: tensor<?x2x3x3xf32>, %t: tensor<?x2x2x2xf32>)
    -> tensor<?x2x6x6xf32> {
  %a = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<?x2x6x6xf32>) -> tensor<?x2x3x3xf32>
  %b = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<?x2x6x6xf32>) -> tensor<?x2x2x2xf32>
  %g = autodiff.grad %a, %b seed %s, %t wrt %x : (tensor<?x2x3x3xf32>, tensor<?x2x2x2xf32>, tensor<?x2x3x3xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x6x6xf32>
  return %g : tensor<?x2x6x6xf32>
}

// max_pool2d's tangent picks v at each window's maximum (max_pool2d_grad_grad). The
// gradient of |max_pool2d(x)|^2 / 2 is max_pool2d_grad(x, y); along v it changes only
// through y, since the selection is locally constant in x: H v = max_pool2d_grad(x, J v),
// with J v shared with the jvp by CSE.
// CHECK-LABEL: func.func @max_pool_jvp_hvp
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x6x6xf32>, %[[V:.*]]: tensor<?x2x6x6xf32>)
// CHECK-NEXT: %[[JV:.*]] = graph.max_pool2d_grad_grad %[[X]], %[[V]]
// CHECK-NEXT: %[[HV:.*]] = graph.max_pool2d_grad %[[X]], %[[JV]]
// CHECK-NEXT: return %[[JV]], %[[HV]]
func.func @max_pool_jvp_hvp(%x: tensor<?x2x6x6xf32>, %v: tensor<?x2x6x6xf32>)
    -> (tensor<?x2x3x3xf32>, tensor<?x2x6x6xf32>) {
  %a = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<?x2x6x6xf32>) -> tensor<?x2x3x3xf32>
  %t = autodiff.jvp %a wrt %x along %v : (tensor<?x2x6x6xf32>) -> tensor<?x2x3x3xf32>
  %g = autodiff.grad %a seed %a wrt %x : (tensor<?x2x3x3xf32>, tensor<?x2x3x3xf32>) -> tensor<?x2x6x6xf32>
  %h = autodiff.jvp %g wrt %x along %v : (tensor<?x2x6x6xf32>) -> tensor<?x2x6x6xf32>
  return %t, %h : tensor<?x2x3x3xf32>, tensor<?x2x6x6xf32>
}

// batchnorm's input gradient is the cotangent times the per-channel scale gamma / sqrt(var
// + eps), reshaped to broadcast along axis 1; none of the parameter sums is built.
// CHECK-LABEL: func.func @batchnorm_input
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x4x4xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<?x8x4x4xf32>)
// CHECK-NEXT: %[[EPS:.*]] = graph.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT: %[[VE:.*]] = graph.add %[[V]], %[[EPS]]
// CHECK-NEXT: %[[R:.*]] = graph.rsqrt %[[VE]]
// CHECK-NEXT: %[[SC:.*]] = graph.mul %[[G]], %[[R]]
// CHECK-NEXT: %[[SCB:.*]] = graph.reshape %[[SC]] {shape = array<i64: -1, 1, 1>} : (tensor<8xf32>) -> tensor<8x1x1xf32>
// CHECK-NEXT: %[[DX:.*]] = graph.mul %[[S]], %[[SCB]]
// CHECK-NEXT: return %[[DX]]
func.func @batchnorm_input(%x: tensor<?x8x4x4xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                           %g: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<?x8x4x4xf32>)
    -> tensor<?x8x4x4xf32> {
  %y = graph.batchnorm %x, %m, %v, %g, %b : (tensor<?x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x4x4xf32>
  %d = autodiff.grad %y seed %s wrt %x : (tensor<?x8x4x4xf32>, tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  return %d : tensor<?x8x4x4xf32>
}

// The scale and shift: dgamma = sum(s * (x - mean)) / sqrt(var + eps) and dbeta = sum(s),
// summed over every axis but the channel axis; nothing of the input gradient is left.
// CHECK-LABEL: func.func @batchnorm_params
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x4x4xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<?x8x4x4xf32>)
// CHECK: %[[R:.*]] = graph.rsqrt
// CHECK: %[[MB:.*]] = graph.reshape %[[M]] {shape = array<i64: -1, 1, 1>}
// CHECK: %[[C:.*]] = graph.sub %[[X]], %[[MB]]
// CHECK: %[[DB:.*]] = graph.reduce_sum %[[S]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<?x8x4x4xf32>) -> tensor<8xf32>
// CHECK: %[[SC:.*]] = graph.mul %[[S]], %[[C]]
// CHECK: %[[SUM:.*]] = graph.reduce_sum %[[SC]] {axes = array<i64: 0, 2, 3>, keepdims = false}
// CHECK: %[[DG:.*]] = graph.mul %[[SUM]], %[[R]]
// CHECK-NOT: graph.mul
// CHECK: return %[[DG]], %[[DB]]
func.func @batchnorm_params(%x: tensor<?x8x4x4xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>,
                            %g: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<?x8x4x4xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %y = graph.batchnorm %x, %m, %v, %g, %b : (tensor<?x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x4x4xf32>
  %d:2 = autodiff.grad %y seed %s wrt %g, %b : (tensor<?x8x4x4xf32>, tensor<?x8x4x4xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %d#0, %d#1 : tensor<8xf32>, tensor<8xf32>
}

// layernorm over the last axis: the statistics are recomputed once (two passes, as the op
// computes them) and shared; with xh = (x - mean) * rstd and g = s * gamma,
// dx = rstd * (g - mean(g) - xh * mean(xh * g)), dgamma = sum(s * xh), dbeta = sum(s).
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.*]]: tensor<?x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>, %[[S:.*]]: tensor<?x16x64xf32>)
// CHECK: %[[MU:.*]] = graph.reduce_mean %[[X]] {axes = array<i64: 2>, keepdims = true}
// CHECK-NEXT: %[[C:.*]] = graph.sub %[[X]], %[[MU]]
// CHECK-NEXT: %[[C2:.*]] = graph.mul %[[C]], %[[C]]
// CHECK-NEXT: %[[VAR:.*]] = graph.reduce_mean %[[C2]] {axes = array<i64: 2>, keepdims = true}
// CHECK-NEXT: %[[VE:.*]] = graph.add %[[VAR]]
// CHECK-NEXT: %[[R:.*]] = graph.rsqrt %[[VE]]
// CHECK-NEXT: %[[XH:.*]] = graph.mul %[[C]], %[[R]]
// CHECK-NEXT: %[[SG:.*]] = graph.mul %[[S]], %[[G]] : (tensor<?x16x64xf32>, tensor<64xf32>)
// CHECK-NEXT: %[[M1:.*]] = graph.reduce_mean %[[SG]]
// CHECK-NEXT: %[[D1:.*]] = graph.sub %[[SG]], %[[M1]]
// CHECK-NEXT: %[[P:.*]] = graph.mul %[[XH]], %[[SG]]
// CHECK-NEXT: %[[M2:.*]] = graph.reduce_mean %[[P]]
// CHECK-NEXT: %[[Q:.*]] = graph.mul %[[XH]], %[[M2]]
// CHECK-NEXT: %[[D2:.*]] = graph.sub %[[D1]], %[[Q]]
// CHECK-NEXT: %[[DX:.*]] = graph.mul %[[D2]], %[[R]]
// CHECK-NEXT: %[[SXH:.*]] = graph.mul %[[S]], %[[XH]]
// CHECK-NEXT: %[[DG:.*]] = graph.reduce_sum %[[SXH]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_sum %[[S]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK-NEXT: return %[[DX]], %[[DG]], %[[DB]]
func.func @layernorm(%x: tensor<?x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                     %s: tensor<?x16x64xf32>)
    -> (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %y = graph.layernorm %x, %g, %b : (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x16x64xf32>
  %d:3 = autodiff.grad %y seed %s wrt %x, %g, %b : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> (tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
  return %d#0, %d#1, %d#2 : tensor<?x16x64xf32>, tensor<64xf32>, tensor<64xf32>
}
