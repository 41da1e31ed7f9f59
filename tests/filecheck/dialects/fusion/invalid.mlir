// RUN: irkit-opt %s --split-input-file --verify-diagnostics

func.func @wrong_yield_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  %r = fusion.group -> (tensor<4xf16>) {
    // expected-error @+1 {{'fusion.yield' op type of operand #0 ('tensor<4xf32>') doesn't match the type of result #0 of parent 'fusion.group' ('tensor<4xf16>')}}
    fusion.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf16>
}

// -----

func.func @wrong_yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fusion.group -> (tensor<4xf32>) {
    // expected-error @+1 {{'fusion.yield' op has 2 operands, but parent 'fusion.group' has 1 results}}
    fusion.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @negative_outer_dims() {
  // expected-error @+1 {{'fusion.group' op outer_dims must be non-negative, got -1}}
  fusion.group {outer_dims = -1 : i64} {
  }
  return
}

// -----

func.func @block_arguments(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fusion.group' op expects its block to take its 0 operands' types as arguments, got (index)}}
  "fusion.group"() ({
  ^bb0(%a: index):
    "fusion.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @capture_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fusion.group' op expects its block to take its 1 operands' types as arguments, got (tensor<4xf16>)}}
  "fusion.group"(%x) ({
  ^bb0(%a: tensor<4xf16>):
    "fusion.yield"() : () -> ()
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fusion.yield' op expects parent op 'fusion.group'}}
  "fusion.yield"(%x) : (tensor<4xf32>) -> ()
  return
}
