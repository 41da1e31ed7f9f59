"""The `tensor` dialect (MLIR's): creating, reading, slicing and reshaping tensors.

These are MLIR 22's `tensor` ops with MLIR's names, semantics, verifier rules, custom syntax
and generic form, so that irkit's structured-kernel level (`linalg` on tensors) is valid input
to `mlir-opt` and reads back what it prints. Tensors are values: every op that "changes" one
makes a new tensor, and all ops here are `Pure`.

Ops, by module:

- `shape.py`: `tensor.empty` (a shape, contents undefined), `tensor.dim`, `tensor.cast`;
- `elements.py`: `tensor.extract` / `tensor.insert` (one element), `tensor.from_elements`,
  `tensor.splat`, `tensor.generate` and the `tensor.yield` ending its body;
- `slices.py`: `tensor.extract_slice` / `tensor.insert_slice` (static and dynamic offsets,
  sizes and strides, rank-reducing slices), `tensor.concat`;
- `reshape.py`: `tensor.collapse_shape` / `tensor.expand_shape` (reassociation indices;
  `expand_shape` states its `output_shape`);
- `pad.py`: `tensor.pad` (a region gives the padding value);
- `base.py`: what they share: constraints, mixed static/dynamic lists, rank reduction,
  custom-syntax and interpreter helpers.

Each module builds on `base.py` and the ones listed before it; this package imports them in
that order and re-exports their public names.

Builders for passes. Each takes a `Builder` (or `PatternRewriter`), inserts the op at its
insertion point with its location, and returns the result value. A mixed list is a list of
`int | Value` (MLIR's `OpFoldResult`): an int is a static entry, an `index` value a dynamic
one.

- `empty(builder, type, dynamic_sizes=())`; `empty_mixed(builder, sizes, element)`
- `dim(builder, value, k)` (`k` an int or an index value); `mixed_size(builder, value, k)`
  and `mixed_sizes(builder, value)` give ints for static sizes and `tensor.dim` values for
  dynamic ones; `index_constant(builder, n)`
- `cast(builder, value, type)` (the value itself when the type is already `type`)
- `extract(builder, source, indices)`; `insert(builder, scalar, dest, indices)`
- `from_elements(builder, elements, type)`; `splat(builder, value, type, dynamic_sizes=())`
- `generate(builder, type, dynamic_extents, body)`, `body(b, indices) -> element value`
- `extract_slice(builder, source, offsets, sizes, strides=None, result_type=None)`:
  strides default to 1; the result type is the window's sizes unless `result_type` asks for
  a rank-reduced one
- `insert_slice(builder, source, dest, offsets, sizes, strides=None)`
- `concat(builder, dim, inputs, result_type=None)`
- `collapse_shape(builder, value, reassociation)` (result type inferred)
- `expand_shape(builder, value, reassociation, output_shape)` (mixed output sizes)
- `pad(builder, source, low, high, pad_value, nofold=False)` (`pad_value` defined outside)

Ops with mixed lists answer `mixed_offsets()`, `mixed_sizes()`, `mixed_strides()` (slices),
`mixed_low()` / `mixed_high()` (pad), `mixed_output_shape()` (expand_shape) and
`mixed_sizes()` (empty), each a list of `int | Value`; slices also say which window
dimensions their type drops (`dropped_dims()`).

Interfaces, duck-typed so that other dialects can take part: an op with `result_dim(axis)`
names the value a dynamic result size equals, and a destination-style op with
`tied_init(result)` names the operand whose shape the result has; `tensor.dim` folds through
both (see `shape.py`).

Semantics. The interpreter is the checking reference: what MLIR leaves undefined (an index or
window out of bounds, a cast to a size the tensor does not have, sizes that do not split a
dimension, a negative padding) is an `InterpreterError` naming the op. The contents of
`tensor.empty` are undefined and read as NaN / -1 / true. A tensor is a numpy array that no
op writes to once made: `tensor.insert` and `tensor.insert_slice` copy, while `tensor.cast`
and the reshapes may return their operand's array or a view of it.
"""

from irkit.opdef import Dialect

tensor = Dialect("tensor", "Tensor creation, slicing and reshaping (MLIR's tensor).",
                 allows_unknown_ops=True)

# The modules below register their ops on `tensor` (defined above, before they import it).
from irkit.dialects.arith import materialize_constant  # noqa: E402

# Folded scalars, index sizes and constant tensors are `arith.constant`s, as in MLIR.
tensor.constant_materializer = materialize_constant

from irkit.dialects.tensor.base import DYNAMIC_INDEX, Mixed  # noqa: E402
from irkit.dialects.tensor.shape import (  # noqa: E402
    CastOp, DimOp, EmptyOp, cast, dim, empty, empty_mixed, index_constant, mixed_size,
    mixed_sizes,
)
from irkit.dialects.tensor.elements import (  # noqa: E402
    ExtractOp, FromElementsOp, GenerateOp, InsertOp, SplatOp, YieldOp, extract, from_elements,
    generate, insert, splat,
)
from irkit.dialects.tensor.slices import (  # noqa: E402
    ConcatOp, ExtractSliceOp, InsertSliceOp, concat, extract_slice, insert_slice,
)
from irkit.dialects.tensor.reshape import (  # noqa: E402
    CollapseShapeOp, ExpandShapeOp, collapse_shape, expand_shape,
)
from irkit.dialects.tensor.pad import PadOp, pad  # noqa: E402

__all__ = [
    "tensor", "DYNAMIC_INDEX", "Mixed",
    "CastOp", "DimOp", "EmptyOp", "cast", "dim", "empty", "empty_mixed", "index_constant",
    "mixed_size", "mixed_sizes",
    "ExtractOp", "FromElementsOp", "GenerateOp", "InsertOp", "SplatOp", "YieldOp", "extract",
    "from_elements", "generate", "insert", "splat",
    "ConcatOp", "ExtractSliceOp", "InsertSliceOp", "concat", "extract_slice", "insert_slice",
    "CollapseShapeOp", "ExpandShapeOp", "collapse_shape", "expand_shape",
    "PadOp", "pad",
]
