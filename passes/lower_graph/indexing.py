"""Lowerings of the ops that pick elements by integer indices (graph/indexing.py): one_hot,
gather and scatter_add.

- one_hot: a `loop.parallel` over `indices.shape + [depth]` storing
  `1.0 if indices[...] == k else 0.0`, the comparison in i64 as numpy's (the indices
  sign-extended, k converted): an index outside [0, depth) matches no k, a row of zeros, as
  in the interpreter (not an error there either). The depth is the property, or the `sizes`
  operand's value.
- gather: a `loop.parallel` over the index positions reading `i = indices[pos]`, plus the
  table's row count when negative (numpy's rule), then a parallel copy of row `table[i]`
  into `r[pos]`.
- scatter_add: `dest` copied into the result (`memory.copy`), then a `loop.for` nest over
  the index positions, in order (a row picked twice receives both updates, in numpy's
  `add.at` order), with a `loop.parallel` over the row's elements inside: `r[i, rest] +=
  updates[pos, rest]`, i wrapped as for gather.

An index of gather or scatter_add still out of [0, rows) after wrapping is the interpreter's
error (numpy's "index 7 is out of bounds for axis 0 with size 4", the index as given):
`FunctionLowering.check` records it for the caller to raise, and the row is neither read nor
written (a `loop.if`), so no memory out of range is touched.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import F32, I64
from irkit.dialects.memory import CopyOp
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import load, store
from irkit.passes.lower_graph.scalar import Scalars


@lowers("graph.one_hot")
def lower_one_hot(lw: FunctionLowering, op: Operation) -> None:
    idx = lw.buffer(op.operands[0])
    depth = op.props()["depth"]
    d = lw.index_of(op.operands[1]) if depth == -1 else lw.index(depth)
    sizes = lw.sizes(idx) + [d]
    out = lw.dest(op.results[0], sizes)
    one, zero = lw.constant(1.0, F32), lw.constant(0.0, F32)

    def body(b: Builder, ivs: list[Value]) -> None:
        s = Scalars(lw, b)
        i = s.cast(load(b, idx, ivs[:-1]), I64)
        hit = s.cmp("eq", i, s.cast(ivs[-1], I64))
        store(b, s.select(hit, one, zero), out, ivs)

    lw.parallel_nest(sizes, body)


def row_index(lw: FunctionLowering, s: Scalars, i: Value, n: Value) -> tuple[Value, Value]:
    """(the row `i` names as an index, 0 when out of range; whether it is in range): an
    integer index read from an indices tensor, negative counting from the end; `n` is the
    row count as an i64 (converted once, before the loops)."""
    i = s.cast(i, I64)
    zero = lw.constant(0, I64)
    i = s.select(s.cmp("lt", i, zero), s.add(i, n), i)
    ok = s.and_(s.cmp("ge", i, zero), s.cmp("lt", i, n))
    return s.select(ok, s.cast(i, lw.index(0).type), lw.index(0)), ok


#: numpy's message for an index out of range, as the interpreter reports it
_OUT_OF_BOUNDS = "index {value} is out of bounds for axis 0 with size {bound}"


def checked_row(lw: FunctionLowering, b: Builder, op: Operation, idx: Value, pos: list[Value],
                rows: Value) -> tuple[Value, Value]:
    """`row_index` of `idx[pos]`, checked: an index out of range is recorded as `op`'s
    error (see the module docstring). Returns (row, ok); the caller touches the row only
    under `ok`."""
    s = Scalars(lw, b)
    i = s.cast(load(b, idx, pos), I64)
    row, ok = row_index(lw, s, i, rows)
    lw.check(ok, i, rows, _OUT_OF_BOUNDS, op, b)
    return row, ok


@lowers("graph.gather")
def lower_gather(lw: FunctionLowering, op: Operation) -> None:
    table, idx = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    ts = lw.sizes(table)
    out = lw.dest(op.results[0], lw.sizes(idx) + ts[1:])
    rows = Scalars(lw, lw.b).cast(ts[0], I64)

    def position(b: Builder, pos: list[Value]) -> None:
        row, ok = checked_row(lw, b, op, idx, pos, rows)

        def copy(eb: Builder, ivs: list[Value]) -> None:
            store(eb, load(eb, table, [row] + ivs), out, pos + ivs)

        lw.when(ok, lambda tb: lw.parallel_nest(ts[1:], copy, tb), b=b)

    lw.parallel_nest(lw.sizes(idx), position)


@lowers("graph.scatter_add")
def lower_scatter_add(lw: FunctionLowering, op: Operation) -> None:
    dest, idx, upd = (lw.buffer(v) for v in op.operands)
    ds = lw.sizes(dest)
    out = lw.dest(op.results[0], ds)
    if out is not dest:
        lw.b.create(CopyOp, dest, out)
    rows = Scalars(lw, lw.b).cast(ds[0], I64)

    def position(b: Builder, pos: list[Value], carried: list[Value]) -> list[Value]:
        row, ok = checked_row(lw, b, op, idx, pos, rows)

        def element(ib: Builder, ivs: list[Value]) -> None:
            at = [row] + ivs
            store(ib, Scalars(lw, ib).add(load(ib, out, at), load(ib, upd, pos + ivs)), out, at)

        lw.when(ok, lambda tb: lw.parallel_nest(ds[1:], element, tb), b=b)
        return []

    lw.for_nest(lw.sizes(idx), [], position)
