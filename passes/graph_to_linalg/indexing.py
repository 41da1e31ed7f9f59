"""Rules for the ops that pick elements by integer indices (graph/indexing.py): one_hot and
gather. `graph.scatter_add` has none, on purpose (below).

- one_hot: one all-parallel `linalg.generic` over `indices.shape + [depth]`, the indices
  read through a projection (`(d0, d1) -> (d0)`) and the class from `linalg.index`:
  `1.0 if indices[...] == k else 0.0`, compared in i64 as numpy does (the index
  sign-extended, k converted), so an index outside [0, depth) matches no k: a row of
  zeros, as in the interpreter. The depth is the property, or the `sizes` operand's value
  (`shape.index_of`), which numpy requires to be non-negative: a `graph.check` with the
  interpreter's message, and a negative depth reads as 0.
- gather: one all-parallel generic over the result `indices.shape + table.shape[1:]`,
  the indices read through a projection onto their axes; the body reads the table with
  `tensor.extract` at `[row, the other loops]` (an indirect read, which a generic body may
  do). The row is numpy's: negative indices count from the end. An index still outside
  [0, rows) is the interpreter's error (numpy's "index 7 is out of bounds for axis 0 with
  size 4", the index as given): a `graph.check` in the body with that message, and the row
  clamped to 0 so that nothing out of range is read (compiled code records the error and
  runs on).

`graph.scatter_add` writes `dest[indices[j]] += updates[j]` for every index position j: an
indirect write, two positions possibly naming one row (numpy's `add.at` order). No
structured op expresses that (a linalg op's outputs are indexed by affine maps of its
loops, and each output element belongs to one parallel point), so there is no rule here:
the op stays at this level and `bufferize` lowers it straight to loops over buffers, as MLIR
lowers such ops (`tensor.scatter` and friends) through `scf` rather than through `linalg`.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.types import F32, I64, INDEX
from irkit.dialects.linalg import IndexOp
from irkit.dialects.tensor import extract
from irkit.passes.graph_to_linalg.core import (
    FunctionConversion, converts, identity_map, parallel, projection,
)
from irkit.passes.graph_to_linalg.shape import IndexArith, index_of, static_or

#: numpy's message for an index out of range, as the interpreter reports it
OUT_OF_BOUNDS = "index {value} is out of bounds for axis 0 with size {bound}"


def _loop_index(s, loop: int) -> Value:
    """The index of loop `loop` at the body's point (`linalg.index`)."""
    return s.b.create(IndexOp, dim=IntegerAttr(loop, I64)).result


@converts("graph.one_hot")
def convert_one_hot(cv: FunctionConversion, op: Operation) -> list[Value]:
    indices, t = op.indices, op.result.type
    rank = indices.type.rank
    depth = op.props()["depth"]
    if depth == -1:
        given = index_of(cv, op.sizes[0])
        s = cv.scalars()
        cv.check(s.cmp("ge", given, cv.index(0)), given, cv.index(0),
                 "one_hot depth must be non-negative, got {value}")
        depth_size = IndexArith(cv).value(IndexArith(cv).max(given, 0))
    else:
        depth_size = cv.index(depth)
    sizes = static_or(cv, t, cv.sizes(indices) + [depth_size])
    out = cv.empty(t, sizes)

    def body(s, args):
        i = s.cast(args[0], I64)
        k = s.cast(_loop_index(s, rank), I64)
        return [s.select(s.cmp("eq", i, k), s.const(1.0, F32), s.const(0.0, F32))]

    maps = [projection(rank + 1, range(rank)), identity_map(rank + 1)]
    return cv.generic([indices], [out], maps, parallel(rank + 1), body)


@converts("graph.gather")
def convert_gather(cv: FunctionConversion, op: Operation) -> list[Value]:
    table, indices, t = op.table, op.indices, op.result.type
    n, rank = indices.type.rank, t.rank
    table_sizes = cv.sizes(table)
    sizes = static_or(cv, t, cv.sizes(indices) + table_sizes[1:])
    static_rows = table.type.shape[0]
    rows = cv.constant(static_rows, I64) if static_rows is not None else \
        cv.scalars().cast(table_sizes[0], I64)
    out = cv.empty(t, sizes)

    def body(s, args):
        i = s.cast(args[0], I64)
        zero = s.const(0, I64)
        wrapped = s.select(s.cmp("lt", i, zero), s.add(i, rows), i)
        ok = s.and_(s.cmp("ge", wrapped, zero), s.cmp("lt", wrapped, rows))
        cv.check(ok, i, rows, OUT_OF_BOUNDS, s.b)
        row = s.select(ok, s.cast(wrapped, INDEX), s.const(0, INDEX))
        rest = [_loop_index(s, loop) for loop in range(n, rank)]
        return [extract(s.b, table, [row] + rest)]

    maps = [projection(rank, range(n)), identity_map(rank)]
    return cv.generic([indices], [out], maps, parallel(rank), body)


__all__ = ["OUT_OF_BOUNDS", "convert_one_hot", "convert_gather"]
