// RUN: irkit-opt %s --split-input-file --verify-diagnostics

func.func @conv2d_rank(%x: tensor<1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d: input must have rank 4 (N, C, H, W), got f32[1, 28, 28]}}
  %0 = graph.conv2d %x, %w : (tensor<1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<8x26x26xf32>
  return
}

// -----

func.func @conv2d_weight_rank(%x: tensor<?x1x28x28xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{conv2d: weight must have rank 4 (O, C, KH, KW), got f32[8, 3, 3]}}
  %0 = graph.conv2d %x, %w : (tensor<?x1x28x28xf32>, tensor<8x3x3xf32>) -> tensor<?x8x26x26xf32>
  return
}

// -----

func.func @conv2d_channels(%x: tensor<?x3x28x28xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{conv2d: input has 3 channels but the weight expects 4}}
  %0 = graph.conv2d %x, %w : (tensor<?x3x28x28xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x26x26xf32>
  return
}

// -----

func.func @conv2d_int(%x: tensor<?x1x28x28xi32>, %w: tensor<8x1x3x3xi32>) {
  // expected-error @+1 {{conv2d: input must have a floating-point element type, got i32[?, 1, 28, 28]}}
  %0 = graph.conv2d %x, %w : (tensor<?x1x28x28xi32>, tensor<8x1x3x3xi32>) -> tensor<?x8x26x26xi32>
  return
}

// -----

func.func @conv2d_mixed(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf64>) {
  // expected-error @+1 {{element types differ: f32[?, 1, 28, 28] and f64[8, 1, 3, 3]}}
  %0 = graph.conv2d %x, %w : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf64>) -> tensor<?x8x26x26xf32>
  return
}

// -----

func.func @conv2d_stride_length(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{conv2d: stride must have 2 entries (height, width), got 1}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 2>} : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x13x13xf32>
  return
}

// -----

func.func @conv2d_stride_zero(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{conv2d: stride entries must be positive, got (1, 0)}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1, 0>} : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x26x26xf32>
  return
}

// -----

func.func @conv2d_padding(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{conv2d: padding entries must be non-negative, got (-1, 0)}}
  %0 = graph.conv2d %x, %w {padding = array<i64: -1, 0>} : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x24x26xf32>
  return
}

// -----

func.func @conv2d_empty_output(%x: tensor<?x1x2x28xf32>, %w: tensor<8x1x5x3xf32>) {
  // expected-error @+1 {{conv2d: kernel height 5 is larger than the input height 2 + 2*1 padding, so the output would be empty}}
  %0 = graph.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<?x1x2x28xf32>, tensor<8x1x5x3xf32>) -> tensor<?x8x1x28xf32>
  return
}

// -----

func.func @conv2d_result(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op result #0 has type tensor<?x8x28x28xf32>, but the operands give tensor<?x8x26x26xf32>}}
  %0 = graph.conv2d %x, %w : (tensor<?x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x28x28xf32>
  return
}

// -----

func.func @pool_kernel_missing(%x: tensor<?x8x28x28xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op requires attribute 'kernel'}}
  %0 = graph.max_pool2d %x : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @pool_kernel_length(%x: tensor<?x8x28x28xf32>) {
  // expected-error @+1 {{max_pool2d: kernel must have 2 entries (height, width), got 3}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2, 2>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @pool_kernel_zero(%x: tensor<?x8x28x28xf32>) {
  // expected-error @+1 {{avg_pool2d: kernel entries must be positive, got (0, 2)}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 0, 2>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @pool_stride(%x: tensor<?x8x28x28xf32>) {
  // expected-error @+1 {{avg_pool2d: stride entries must be positive, got (-2, 2)}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: -2, 2>} : (tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @pool_too_small(%x: tensor<?x8x28x3xf32>) {
  // expected-error @+1 {{max_pool2d: kernel width 4 is larger than the input width 3, so the output would be empty}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 4, 4>} : (tensor<?x8x28x3xf32>) -> tensor<?x8x7x1xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<8x28x28xf32>) {
  // expected-error @+1 {{max_pool2d: input must have rank 4 (N, C, H, W), got f32[8, 28, 28]}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<8x28x28xf32>) -> tensor<8x14x14xf32>
  return
}

// -----

func.func @pool_int(%x: tensor<?x8x28x28xi64>) {
  // expected-error @+1 {{avg_pool2d: input must have a floating-point element type, got i64[?, 8, 28, 28]}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xi64>) -> tensor<?x8x14x14xi64>
  return
}

// -----

func.func @batchnorm_channels(%x: tensor<?x8x14x14xf32>, %p: tensor<8xf32>, %q: tensor<6xf32>) {
  // expected-error @+1 {{batchnorm: gamma has 6 entries but the input has 8 channels}}
  %0 = graph.batchnorm %x, %p, %p, %q, %p : (tensor<?x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<6xf32>, tensor<8xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @batchnorm_param_rank(%x: tensor<?x8x14x14xf32>, %p: tensor<8xf32>, %q: tensor<1x8xf32>) {
  // expected-error @+1 {{batchnorm: var must be a vector with one entry per channel of f32[?, 8, 14, 14], got f32[1, 8]}}
  %0 = graph.batchnorm %x, %p, %q, %p, %p : (tensor<?x8x14x14xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @batchnorm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) {
  // expected-error @+1 {{batchnorm: input must have rank at least 2 (N, C, ...), got f32[8]}}
  %0 = graph.batchnorm %x, %p, %p, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @batchnorm_epsilon(%x: tensor<?x8xf32>, %p: tensor<8xf32>) {
  // expected-error @+1 {{batchnorm: epsilon must be non-negative, got -0.001}}
  %0 = graph.batchnorm %x, %p, %p, %p, %p {epsilon = -1.0e-3 : f64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @batchnorm_mixed(%x: tensor<?x8xf32>, %p: tensor<8xf32>, %h: tensor<8xf16>) {
  // expected-error @+1 {{element types differ}}
  %0 = graph.batchnorm %x, %p, %p, %p, %h : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf16>) -> tensor<?x8xf32>
  return
}

// -----

func.func @layernorm_axis(%x: tensor<?x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'graph.layernorm' op axis 2 is out of range for rank 2}}
  %0 = graph.layernorm %x, %g, %g {axis = 2 : i64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layernorm_features(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{layernorm: beta has 32 entries but the input has 64 features}}
  %0 = graph.layernorm %x, %g, %b : (tensor<?x64xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layernorm_int(%x: tensor<?x64xi32>, %g: tensor<64xi32>) {
  // expected-error @+1 {{layernorm: input must have a floating-point element type, got i32[?, 64]}}
  %0 = graph.layernorm %x, %g, %g : (tensor<?x64xi32>, tensor<64xi32>, tensor<64xi32>) -> tensor<?x64xi32>
  return
}

// -----

func.func @backprop_input_gradient(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x14x14xf32>) {
  // expected-error @+1 {{'graph.conv2d_backprop_input' op conv2d_backprop_input: gradient f32[?, 8, 14, 14] does not match the convolution's output f32[?, 8, 13, 13]}}
  %0 = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 2>} : (tensor<?x8x14x14xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32>
  return
}

// -----

func.func @backprop_input_batch(%x: tensor<4x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<2x8x26x26xf32>) {
  // expected-error @+1 {{conv2d_backprop_input: gradient f32[2, 8, 26, 26] does not match the convolution's output f32[4, 8, 26, 26]}}
  %0 = graph.conv2d_backprop_input %dy, %w, %x : (tensor<2x8x26x26xf32>, tensor<8x1x3x3xf32>, tensor<4x1x28x28xf32>) -> tensor<4x1x28x28xf32>
  return
}

// -----

func.func @backprop_input_channels(%x: tensor<?x3x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x26x26xf32>) {
  // expected-error @+1 {{conv2d_backprop_input: input has 3 channels but the weight expects 1}}
  %0 = graph.conv2d_backprop_input %dy, %w, %x : (tensor<?x8x26x26xf32>, tensor<8x1x3x3xf32>, tensor<?x3x28x28xf32>) -> tensor<?x3x28x28xf32>
  return
}

// -----

func.func @backprop_input_rank(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<8x26x26xf32>) {
  // expected-error @+1 {{conv2d_backprop_input: gradient f32[8, 26, 26] does not match the convolution's output f32[?, 8, 26, 26]}}
  %0 = graph.conv2d_backprop_input %dy, %w, %x : (tensor<8x26x26xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x28x28xf32>
  return
}

// -----

func.func @backprop_input_result(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x13x13xf32>) {
  // expected-error @+1 {{'graph.conv2d_backprop_input' op result #0 has type tensor<?x1x27x27xf32>, but the operands give tensor<?x1x28x28xf32>}}
  %0 = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 2>} : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>) -> tensor<?x1x27x27xf32>
  return
}

// -----

func.func @backprop_filter_gradient(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x4x26x26xf32>) {
  // expected-error @+1 {{'graph.conv2d_backprop_filter' op conv2d_backprop_filter: gradient f32[?, 4, 26, 26] does not match the convolution's output f32[?, 8, 26, 26]}}
  %0 = graph.conv2d_backprop_filter %x, %dy, %w : (tensor<?x1x28x28xf32>, tensor<?x4x26x26xf32>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  return
}

// -----

func.func @backprop_filter_padding(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x26x26xf32>) {
  // expected-error @+1 {{conv2d_backprop_filter: padding must have 2 entries (height, width), got 1}}
  %0 = graph.conv2d_backprop_filter %x, %dy, %w {padding = array<i64: 1>} : (tensor<?x1x28x28xf32>, tensor<?x8x26x26xf32>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  return
}

// -----

func.func @backprop_filter_mixed(%x: tensor<?x1x28x28xf32>, %w: tensor<8x1x3x3xf32>, %dy: tensor<?x8x26x26xf64>) {
  // expected-error @+1 {{element types differ: f32[?, 1, 28, 28] and f64[?, 8, 26, 26] and f32[8, 1, 3, 3]}}
  %0 = graph.conv2d_backprop_filter %x, %dy, %w : (tensor<?x1x28x28xf32>, tensor<?x8x26x26xf64>, tensor<8x1x3x3xf32>) -> tensor<8x1x3x3xf32>
  return
}

// -----

func.func @max_pool_grad_gradient(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x8x28x28xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op max_pool2d_grad: gradient f32[?, 8, 28, 28] does not match the pooled input f32[?, 8, 14, 14]}}
  %0 = graph.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x28x28xf32>
  return
}

// -----

func.func @max_pool_grad_kernel(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x8x14x14xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op requires attribute 'kernel'}}
  %0 = graph.max_pool2d_grad %x, %dy : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32>
  return
}

// -----

func.func @max_pool_grad_grad_tangent(%x: tensor<?x8x28x28xf32>, %t: tensor<?x8x14x14xf32>) {
  // expected-error @+1 {{max_pool2d_grad_grad: tangent f32[?, 8, 14, 14] does not match the input f32[?, 8, 28, 28]}}
  %0 = graph.max_pool2d_grad_grad %x, %t {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x14x14xf32>
  return
}

// -----

func.func @max_pool_grad_grad_int(%x: tensor<?x8x28x28xi32>) {
  // expected-error @+1 {{max_pool2d_grad_grad: input must have a floating-point element type, got i32[?, 8, 28, 28]}}
  %0 = graph.max_pool2d_grad_grad %x, %x {kernel = array<i64: 2, 2>} : (tensor<?x8x28x28xi32>, tensor<?x8x28x28xi32>) -> tensor<?x8x14x14xi32>
  return
}

// -----

func.func @avg_pool_grad_stride(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x8x14x14xf32>) {
  // expected-error @+1 {{avg_pool2d_grad: stride entries must be positive, got (0, 2)}}
  %0 = graph.avg_pool2d_grad %dy, %x {kernel = array<i64: 2, 2>, stride = array<i64: 0, 2>} : (tensor<?x8x14x14xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x28x28xf32>
  return
}

// -----

func.func @avg_pool_grad_too_small(%x: tensor<?x8x2x28xf32>, %dy: tensor<?x8x1x9xf32>) {
  // expected-error @+1 {{avg_pool2d_grad: kernel height 3 is larger than the input height 2, so the output would be empty}}
  %0 = graph.avg_pool2d_grad %dy, %x {kernel = array<i64: 3, 3>} : (tensor<?x8x1x9xf32>, tensor<?x8x2x28xf32>) -> tensor<?x8x2x28xf32>
  return
}

// -----

func.func @avg_pool_grad_channels(%x: tensor<?x8x28x28xf32>, %dy: tensor<?x4x14x14xf32>) {
  // expected-error @+1 {{avg_pool2d_grad: gradient f32[?, 4, 14, 14] does not match the pooled input f32[?, 8, 14, 14]}}
  %0 = graph.avg_pool2d_grad %dy, %x {kernel = array<i64: 2, 2>} : (tensor<?x4x14x14xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x28x28xf32>
  return
}
