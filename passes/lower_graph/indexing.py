"""Lowerings of the ops that pick elements by integer indices (graph_indexing.py): one_hot,
gather and scatter_add.

- one_hot: a `loop.parallel` over `indices.shape + [depth]` storing
  `1.0 if indices[...] == k else 0.0`, the comparison in i64 as numpy's (the indices
  sign-extended, k converted): an index outside [0, depth) matches no k, a row of zeros, as
  in the interpreter. The depth is the property, or the `sizes` operand's value.
- gather: a `loop.parallel` over the result `indices.shape + table.shape[1:]` reading
  `table[i, rest]` with `i = indices[pos]`, plus the table's row count when negative
  (numpy's rule). An index still out of [0, rows): the interpreter raises; compiled code
  cannot, so the row reads as zeros (the load goes to row 0, and a select discards it; a
  table of 0 rows is then an out-of-bounds read, as the program was an error anyway).
- scatter_add: `dest` copied into the result (`memory.copy`), then a `loop.for` nest over
  the index positions, in order (a row picked twice receives both updates, in numpy's
  `add.at` order), with a `loop.parallel` over the row's elements inside: `r[i, rest] +=
  updates[pos, rest]`, i wrapped as for gather. An index out of range is skipped: the
  update added is the additive identity (-0.0 for floats, which leaves even -0.0 alone; 0
  for integers) at row 0.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import F32, I64
from irkit.dialects.memory import CopyOp
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import load, store
from irkit.passes.lower_graph.scalar import Scalars, is_float


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


@lowers("graph.gather")
def lower_gather(lw: FunctionLowering, op: Operation) -> None:
    table, idx = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    t = table.type.element
    ts = lw.sizes(table)
    k = idx.type.rank
    sizes = lw.sizes(idx) + ts[1:]
    out = lw.dest(op.results[0], sizes)
    zero = lw.constant(0, t)
    rows = Scalars(lw, lw.b).cast(ts[0], I64)

    def body(b: Builder, ivs: list[Value]) -> None:
        s = Scalars(lw, b)
        row, ok = row_index(lw, s, load(b, idx, ivs[:k]), rows)
        x = load(b, table, [row] + ivs[k:])
        store(b, s.select(ok, x, zero), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.scatter_add")
def lower_scatter_add(lw: FunctionLowering, op: Operation) -> None:
    dest, idx, upd = (lw.buffer(v) for v in op.operands)
    t = dest.type.element
    ds = lw.sizes(dest)
    out = lw.dest(op.results[0], ds)
    if out is not dest:
        lw.b.create(CopyOp, dest, out)
    k = idx.type.rank
    identity = lw.constant(-0.0 if is_float(t) else 0, t)
    rows = Scalars(lw, lw.b).cast(ds[0], I64)

    def position(b: Builder, pos: list[Value], carried: list[Value]) -> list[Value]:
        s = Scalars(lw, b)
        row, ok = row_index(lw, s, load(b, idx, pos), rows)

        def element(ib: Builder, ivs: list[Value]) -> None:
            si = Scalars(lw, ib)
            u = si.select(ok, load(ib, upd, pos + ivs), identity)
            at = [row] + ivs
            store(ib, si.add(load(ib, out, at), u), out, at)

        lw.parallel_nest(ds[1:], element, b)
        return []

    lw.for_nest(lw.sizes(idx)[:k], [], position)
