"""The `linalg` dialect (MLIR's): structured kernels.

Each op is a loop nest stated as data: an iteration space of parallel and reduction loops,
one affine map per operand from the loop indices to its indices, and a scalar body. On
tensors an op returns new values (one per output, destination-passing style); on memrefs it
writes its outputs in place. MLIR 22's names, syntax (custom and generic form) and verifier
messages, so irkit's output at this level is valid input to MLIR's own pipeline.

Parts, in import order (each builds on the ones before, none on the ones after):

- `structured.py`: the structured-op interface every op implements (`StructuredOp`: inputs,
  outputs, maps, iterators, loop ranges, generalization, effects, verification) and the
  shared custom-syntax pieces; its docstring documents the interface passes code against;
- `semantics.py`: the reference semantics (numpy over the iteration space);
- `generic.py`: `linalg.generic`, `linalg.yield`, `linalg.index`; the builders
  `make_generic`, `build_body` and `generalize`;
- `named.py`: the bases of the named ops (`NamedOp`, `FixedBodyOp`, `DPSNamedOp`),
  `linalg.fill`, `transpose`, `broadcast`;
  `map_reduce.py`: `linalg.map`, `linalg.reduce` (bodies from their user, and MLIR's short
  form); `contraction.py`: `matmul`, `batch_matmul`; `convolution.py`:
  `conv_2d_nchw_fchw`, `pooling_nchw_max`, `pooling_nchw_sum`; `elementwise.py`: `add`,
  `sub`, `mul`, `div`, `max`, `min`, `exp`, `log`, `abs`, `ceil`, `floor`, `negf`, `sqrt`,
  `rsqrt`, `tanh`, `erf`.
"""

from irkit.opdef import Dialect

linalg = Dialect("linalg", "Structured ops: an iteration space, indexing maps, iterator "
                 "types and a scalar body (MLIR's linalg).", allows_unknown_ops=True)

from irkit.dialects.linalg.structured import (  # noqa: E402
    ITERATOR_ATTRS, PARALLEL, REDUCTION, LoopIndex, StructuredOp, iterator_types_attr,
    maps_attr, scalar_type,
)
from irkit.dialects.linalg.generic import (  # noqa: E402
    GenericOp, IndexOp, YieldOp, build_body, generalize, make_generic,
)
from irkit.dialects.linalg.named import (  # noqa: E402
    BroadcastOp, DPSNamedOp, FillOp, FixedBodyOp, NamedOp, TransposeOp, cast, make_broadcast,
    make_fill, make_transpose,
)
from irkit.dialects.linalg.map_reduce import (  # noqa: E402
    MapOp, ReduceOp, make_map, make_reduce,
)
from irkit.dialects.linalg.contraction import (  # noqa: E402
    CAST_SIGNED, CAST_UNSIGNED, BatchMatmulOp, MatmulOp, make_batch_matmul, make_matmul,
)
from irkit.dialects.linalg.convolution import (  # noqa: E402
    Conv2DNchwFchwOp, PoolingNchwMaxOp, PoolingNchwSumOp, make_conv_2d_nchw_fchw,
    make_pooling_nchw, window_attr,
)
from irkit.dialects.linalg.elementwise import (  # noqa: E402
    AbsOp, AddOp, CeilOp, DivOp, ErfOp, ExpOp, FloorOp, LogOp, MaxOp, MinOp, MulOp, NegFOp,
    RsqrtOp, SqrtOp, SubOp, TanhOp,
)

__all__ = [
    "linalg", "StructuredOp", "PARALLEL", "REDUCTION", "ITERATOR_ATTRS", "LoopIndex",
    "iterator_types_attr", "maps_attr", "scalar_type",
    "GenericOp", "YieldOp", "IndexOp", "make_generic", "build_body", "generalize",
    "NamedOp", "FixedBodyOp", "DPSNamedOp", "FillOp", "TransposeOp", "BroadcastOp", "MapOp",
    "ReduceOp",
    "cast", "make_fill", "make_transpose", "make_broadcast", "make_map", "make_reduce",
    "MatmulOp", "BatchMatmulOp", "CAST_SIGNED", "CAST_UNSIGNED", "make_matmul",
    "make_batch_matmul",
    "Conv2DNchwFchwOp", "PoolingNchwMaxOp", "PoolingNchwSumOp", "make_conv_2d_nchw_fchw",
    "make_pooling_nchw", "window_attr",
    "AddOp", "SubOp", "MulOp", "DivOp", "MaxOp", "MinOp", "ExpOp", "LogOp", "AbsOp",
    "CeilOp", "FloorOp", "NegFOp", "SqrtOp", "RsqrtOp", "TanhOp", "ErfOp",
]
