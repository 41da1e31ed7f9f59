// RUN: irkit-opt %s -p 'lower-graph-to-linalg{full=true}' --split-input-file --verify-diagnostics

// With full=true, an op no rule converts is an error at the op, naming it (dataflow switch
// and merge have no structured form: graph-raise-control-flow makes them a graph.if first).

func.func @f(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{no lower-graph-to-linalg rule for 'graph.switch' yet}}
  %0:2 = graph.switch %e, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}
