"""Graph ops that pick elements by integer indices: `one_hot`, `gather` (an embedding
lookup) and `scatter_add`, the transpose of gather.

The indices are values, not properties, so their range is known only at run time: gather and
scatter_add raise on an index out of range (and folding declines such constants), while
one_hot gives a row of zeros. No derivative flows through indices: `one_hot` is
`NonDifferentiable`, and gather and scatter_add are linear in their other operands, each the
other's transpose. They follow the conventions of `shape.py` and import its helpers.
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import Linear, NonDifferentiable
from irkit.sharding_rules import ShardingRule
from irkit.opdef import AnyTensor, Operand, Pure, Result, VarOperand
from irkit.types import F32
from irkit.dialects.graph.base import (
    GraphOp, IntProp, ShapeError, TensorSpec, graph, is_int, same_dtype, unify_dim,
)
from irkit.dialects.graph.shape import check_size_operands, emit_typed, format_shape

_TRAITS = (Pure(),)


def _require_int(spec: TensorSpec, what: str) -> None:
    if not is_int(spec.dtype):
        raise ShapeError(f"{what} must have an integer element type, got {spec}")


@graph.op
class OneHotOp(GraphOp):
    """f32 one-hot vectors: `r[..., k] = 1.0 if indices[...] == k else 0.0` for k in
    [0, depth). An index outside [0, depth) gives a row of zeros (TensorFlow's rule), not an
    error: labels such as -1 for "ignore" then contribute nothing. A depth of -1 is the
    `sizes` operand, a 0-d integer known at run time (as in `graph.reshape`): the derivative
    of a cross-entropy whose class count the types leave open needs it.

        %r = graph.one_hot %labels {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
        %s = graph.one_hot %labels, %n {depth = -1 : i64}
            : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>

    Not differentiable: the result is piecewise constant in the (integer) indices.
    """

    name = "graph.one_hot"
    indices = Operand(AnyTensor)
    sizes = VarOperand(AnyTensor, doc="the depth, a 0-d integer tensor, when `depth` is -1")
    result = Result(AnyTensor)
    depth = IntProp(doc="the number of classes (length of the new last axis); -1: `sizes`")
    traits = _TRAITS + (NonDifferentiable(),)

    @classmethod
    def infer(cls, args, props):
        indices, *sizes = args
        _require_int(indices, "one_hot indices")
        check_size_operands(sizes)
        depth = props["depth"]
        if depth == -1 and len(sizes) != 1:
            raise ShapeError(f"depth -1 needs one size operand, got {len(sizes)}")
        if depth != -1 and sizes:
            raise ShapeError(f"a static depth takes no size operand, got {len(sizes)}")
        if depth < -1:
            raise ShapeError(f"depth must be non-negative, got {depth}")
        if depth == -1:             # the size the operand holds, where known (`graph.dim`)
            depth = sizes[0].value
            if type(depth) is int and depth < 0:
                raise ShapeError(f"one_hot depth must be non-negative, got {depth}")
        return [TensorSpec(indices.shape + (depth,), F32)]

    def sharding_rule(self) -> ShardingRule | None:
        """The indices' axes parallel; the classes whole. None with a run-time depth."""
        if self.sizes:
            return None
        dims = tuple(f"d{i}" for i in range(self.indices.type.rank))
        return ShardingRule((dims,), (dims + ("c",),), whole=frozenset({"c"}))

    def evaluate(self, indices, *sizes):
        depth = int(sizes[0]) if sizes else self.props()["depth"]
        if depth < 0:
            raise ValueError(f"one_hot depth must be non-negative, got {depth}")
        return (indices[..., None] == np.arange(depth)).astype(np.float32)


@graph.op
class GatherOp(GraphOp):
    """Rows of `table` picked by `indices` (an embedding lookup): `table[indices]`, of shape
    `indices.shape + table.shape[1:]`. Negative indices count from the end, as in numpy; an
    index out of range is a run-time error.

        %r = graph.gather %table, %ids
            : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>

    Transpose (vjp), in the table (no derivative flows through the indices): the
    cotangent's rows added into zeros at the rows they were picked from (`graph.scatter_add`),
    so a row picked twice gets both.
    """

    name = "graph.gather"
    table = Operand(AnyTensor)
    indices = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        table, indices = args
        _check_rows(table, indices, "a table", "gather")
        return [TensorSpec(indices.shape + table.shape[1:], table.dtype)]

    def evaluate(self, table, indices):
        return np.asarray(table[indices], dtype=table.dtype)

    def _poison(self, table, indices) -> bool:
        """Folding declines out-of-range indices: the error belongs to run time."""
        return _out_of_range(table, indices)

    def nondiff_operands(self):
        return (1,)

    def transpose(self, ad, cts):
        return [emit_typed(ad, ScatterAddOp, ad.zeros_like(self.table), self.indices, cts[0],
                           type=self.table.type), None]


def _check_rows(table: TensorSpec, indices: TensorSpec, what: str, op: str) -> None:
    """The checks gather and scatter_add share: rows to index, and integer indices."""
    if table.rank < 1:
        raise ShapeError(f"needs {what} of rank at least 1, got {table}")
    _require_int(indices, f"{op} indices")


def _out_of_range(table, indices) -> bool:
    n = table.shape[0]
    return bool(np.any((indices < -n) | (indices >= n)))


@graph.op
class ScatterAddOp(GraphOp):
    """`dest` with row `updates[j]` added into row `dest[indices[j]]` for every index
    position j, rows picked several times receiving every update (numpy's `add.at`;
    TensorFlow's `unsorted_segment_sum` when dest is zeros). It is the transpose of
    `graph.gather`, and takes the same indices: `updates` has shape
    `indices.shape + dest.shape[1:]`, negative indices count from the end, one out of range
    is a run-time error.

        %r = graph.scatter_add %dest, %ids, %rows
            : (tensor<1000x64xf32>, tensor<?x16xi32>, tensor<?x16x64xf32>) -> tensor<1000x64xf32>

    Transpose (vjp), as the op is linear in dest and updates together (not in the
    indices): dest gets the cotangent, updates its rows gathered at the indices.
    """

    name = "graph.scatter_add"
    dest = Operand(AnyTensor)
    indices = Operand(AnyTensor)
    updates = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        dest, indices, updates = args
        _check_rows(dest, indices, "a dest", "scatter_add")
        dtype = same_dtype(dest, updates)
        want = indices.shape + dest.shape[1:]
        if updates.rank != len(want):
            raise ShapeError(f"updates {updates} do not have the shape {format_shape(want)} of the "
                             f"indices {indices} and rows of {dest}")
        for i, (a, b) in enumerate(zip(updates.shape, want)):
            try:
                unify_dim(a, b)
            except ValueError:
                raise ShapeError(f"updates {updates} do not have the shape {format_shape(want)} of "
                                 f"the indices {indices} and rows of {dest}: dimension {i} "
                                 "differs") from None
        return [dest.with_dtype(dtype)]

    def evaluate(self, dest, indices, updates):
        want = indices.shape + dest.shape[1:]
        if updates.shape != want:       # numpy would broadcast the updates silently
            raise ValueError(f"updates of shape {updates.shape}, expected {want}")
        out = np.array(dest)
        np.add.at(out, indices, updates)
        return out

    def _poison(self, dest, indices, updates) -> bool:
        """Folding declines out-of-range indices: the error belongs to run time."""
        return _out_of_range(dest, indices)

    def nondiff_operands(self):
        return (1,)

    def transpose(self, ad, cts):
        (ct,) = cts
        return [ad.as_type(ct, self.dest), None,
                emit_typed(ad, GatherOp, ct, self.indices, type=self.updates.type)]
