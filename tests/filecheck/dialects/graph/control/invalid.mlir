// RUN: irkit-opt %s --split-input-file --verify-diagnostics

func.func @switch_pred_not_scalar(%x: tensor<4xf32>, %p: tensor<4xi1>) {
  // expected-error @+1 {{'graph.switch' op the predicate of graph.switch must be a 0-d i1 tensor (tensor<i1>), got i1[4]}}
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @switch_pred_not_i1(%x: tensor<4xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{must be a 0-d i1 tensor (tensor<i1>), got f32}}
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @switch_result_type(%x: tensor<4xf32>, %p: tensor<i1>) {
  // expected-error @+1 {{'graph.switch' op result types must be the type of data (tensor<4xf32>), got tensor<?xf32>}}
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<?xf32>, tensor<4xf32>)
  return
}

// -----

func.func @merge_types_differ(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.merge' op inputs must all have one type: f32[4] and f32[3]}}
  %v, %i = graph.merge %a, %b : (tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<i32>)
  return
}

// -----

func.func @merge_index_type(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.merge' op result #1 has type tensor<i64>, but the operands give tensor<i32>}}
  %v, %i = graph.merge %a, %b : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i64>)
  return
}

// -----

func.func @merge_no_inputs() {
  // expected-error @+1 {{'graph.merge' op needs at least one input}}
  %v, %i = "graph.merge"() : () -> (tensor<4xf32>, tensor<i32>)
  return
}

// -----

func.func @if_pred_type(%p: tensor<2xi1>, %x: tensor<f32>) {
  // expected-error @+1 {{'graph.if' op predicate must be tensor<i1>, got tensor<2xi1>}}
  "graph.if"(%p) ({
    "graph.yield"() : () -> ()
  }, {
  }) : (tensor<2xi1>) -> ()
  return
}

// -----

func.func @if_results_need_else(%p: tensor<i1>, %x: tensor<f32>) {
  // expected-error @+1 {{'graph.if' op must have an else block if defining values}}
  %r = graph.if %p -> (tensor<f32>) {
    graph.yield %x : tensor<f32>
  }
  return
}

// -----

func.func @yield_count(%p: tensor<i1>, %x: tensor<f32>) {
  %r = graph.if %p -> (tensor<f32>) {
    graph.yield %x : tensor<f32>
  } else {
    // expected-error @+1 {{'graph.yield' op has 2 operands, but parent 'graph.if' has 1 results}}
    graph.yield %x, %x : tensor<f32>, tensor<f32>
  }
  return
}

// -----

func.func @yield_type(%p: tensor<i1>, %x: tensor<f32>, %y: tensor<2xf32>) {
  %r = graph.if %p -> (tensor<f32>) {
    // expected-error @+1 {{'graph.yield' op type of operand #0 ('tensor<2xf32>') doesn't match the type of result #0 of parent 'graph.if' ('tensor<f32>')}}
    graph.yield %y : tensor<2xf32>
  } else {
    graph.yield %x : tensor<f32>
  }
  return
}

// -----

func.func @yield_outside_if(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.yield' op expects parent op 'graph.if'}}
  graph.yield %x : tensor<f32>
}

// -----

func.func @if_block_args(%p: tensor<i1>) {
  // expected-error @+1 {{'graph.if' op expects the then region's block to have no arguments}}
  "graph.if"(%p) ({
  ^bb0(%a: tensor<f32>):
    "graph.yield"() : () -> ()
  }, {
  }) : (tensor<i1>) -> ()
  return
}
