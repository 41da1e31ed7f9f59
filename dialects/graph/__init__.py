"""The `graph` dialect: tensors with value semantics, the top of the lowering ladder.

Every op takes and returns ranked tensors and follows numpy's semantics, broadcasting
included. The dialect is split by meaning, each part importing only parts before it:

- `base` — what every family shares: `TensorSpec` and the shape functions, `GraphOp` (one
  custom syntax, Python-valued properties, folding through the numpy semantics), the
  storage (`graph.constant`, `graph.variable` / `read` / `assign`) and the variables'
  initial values;
- `control` — `switch` and `merge` (dataflow form) and the structured `graph.if`;
- `elementwise` — unary and binary arithmetic and logic (a table row an op), `zeros_like`;
  `compare` — `cmp`, `where`, `cast`;
- `reduce` — reductions, argmax; `matmul` — the matrix product; `loss` — softmax,
  log_softmax, cross_entropy, mse;
- `shape` — transpose, reshape, dim, broadcast_to; `slicing` — concat, split, slice,
  insert_slice; `indexing` — one_hot, gather, scatter_add;
- `nn` — conv2d, pooling, batchnorm, layernorm; `nn_grad` — the backward ops of conv2d and
  pooling.

Importing the package registers every op; its namespace holds the public names of all
parts (`from irkit.dialects.graph import MatmulOp, TensorSpec, ShapeError`).
"""

from irkit.dialects.graph.base import *  # noqa: F401,F403
from irkit.dialects.graph.control import *  # noqa: F401,F403
from irkit.dialects.graph.elementwise import *  # noqa: F401,F403
from irkit.dialects.graph.compare import *  # noqa: F401,F403
from irkit.dialects.graph.reduce import *  # noqa: F401,F403
from irkit.dialects.graph.matmul import *  # noqa: F401,F403
from irkit.dialects.graph.loss import *  # noqa: F401,F403
from irkit.dialects.graph.shape import *  # noqa: F401,F403
from irkit.dialects.graph.slicing import *  # noqa: F401,F403
from irkit.dialects.graph.indexing import *  # noqa: F401,F403
from irkit.dialects.graph.nn import *  # noqa: F401,F403
from irkit.dialects.graph.nn_grad import *  # noqa: F401,F403
from irkit.dialects.graph.check import *  # noqa: F401,F403
