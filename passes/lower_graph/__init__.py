"""The op-by-op half of `lower-graph-to-loop` (the pass itself is
`irkit.passes.lower_graph_to_loop`): the function-level bufferization (`core`) and one
lowering rule per graph op, in modules that mirror the graph dialect's families, and the
float sum they all use (`accumulate`: wide or compensated, see its bound):

- `elementwise`: graph/elementwise.py and graph/compare.py, zeros_like, constant;
- `reduce`: graph/reduce.py, and softmax/log_softmax of graph/loss.py;
- `linalg`: graph/matmul.py (matmul);
- `shape`: graph/shape.py (transpose, reshape, broadcast_to, dim);
- `variables`: graph.read and graph.assign;
- `nn`: graph/nn.py and graph/nn_grad.py (convolution, pooling, normalization, gradients);
- `loss`: cross_entropy and mse; `indexing`: one_hot, gather, scatter_add; `slicing`:
  slice, insert_slice, concat, split;
- `control`: switch and merge (an error: raise them to graph.if first).

Rules register themselves in `core.LOWERINGS` (op name -> rule) when their module is
imported, which this package does; `irkit-opt --describe graph.add` shows the entry.
"""

from irkit.passes.lower_graph.core import LOWERINGS, FunctionLowering, LoweringError, lowers
from irkit.passes.lower_graph import (  # noqa: F401
    control, elementwise, indexing, linalg, loss, nn, reduce, shape, slicing, variables,
)

__all__ = ["LOWERINGS", "FunctionLowering", "LoweringError", "lowers"]
