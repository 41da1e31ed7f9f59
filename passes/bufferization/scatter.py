"""`graph.scatter_add`, the one graph op with no structured form, straight to loops over
buffers.

`scatter_add(dest, indices, updates)` writes `r[indices[pos]] += updates[pos]` for every
index position `pos`, two positions possibly naming one row, in numpy's `add.at` order. A
linalg op writes each output element from one parallel point, at an affine map of its
loops: an indirect, possibly repeated write is not one (graph_to_linalg/indexing.py), so
`lower-graph-to-linalg` keeps the op and this rule lowers it the way MLIR lowers such ops
(`tensor.scatter` and friends) through `scf`:

- the result gets a buffer as any result does (`Bufferization.dest`: the one planned for
  it, such as its output, else a fresh one), which first receives a copy of `dest`
  (`memory.copy`);
- a `loop.for` nest over the index positions, in order (a row picked twice receives both
  updates, in order), with a `loop.parallel` over the row's elements inside:
  `r[i, rest] += updates[pos, rest]`, added in the element type as numpy's `add.at` does.

The row `i` is numpy's: a negative index counts from the end. An index still outside
[0, rows) is the interpreter's error (numpy's "index 7 is out of bounds for axis 0 with
size 4", the index as given): `FunctionBuffers.check` records it for the caller to raise,
and the row is not written (a `loop.if`), so no memory out of range is touched.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Value
from irkit.types import I64, INDEX
from irkit.dialects.graph import ScatterAddOp
from irkit.dialects.memory import CopyOp, LoadOp, StoreOp
from irkit.passes.bufferization.function import Bufferization, bufferizes

#: numpy's message for an index out of range, as the interpreter reports it
OUT_OF_BOUNDS = "index {value} is out of bounds for axis 0 with size {bound}"


def _load(b: Builder, buf: Value, indices: list[Value]) -> Value:
    return b.create(LoadOp, buf, list(indices)).results[0]


def checked_row(bz: Bufferization, b: Builder, op: ScatterAddOp, idx: Value,
                pos: list[Value], rows: Value) -> tuple[Value, Value]:
    """(the row `idx[pos]` names, as an index, 0 when out of range; whether it is in range),
    at `b`; an index out of range is recorded as `op`'s error. `rows` is the row count as an
    i64 (converted once, before the loops). The caller touches the row only under `ok`."""
    s = bz.scalars(b)
    zero = bz.constant(0, I64)
    given = s.cast(_load(b, idx, pos), I64)
    i = s.select(s.cmp("lt", given, zero), s.add(given, rows), given)
    ok = s.and_(s.cmp("ge", i, zero), s.cmp("lt", i, rows))
    bz.check(ok, given, rows, OUT_OF_BOUNDS, op, b)
    return s.select(ok, s.cast(i, INDEX), bz.index(0)), ok


@bufferizes("graph.scatter_add")
def bufferize_scatter_add(bz: Bufferization, op: ScatterAddOp) -> None:
    dest, idx, upd = bz.buffer(op.dest), bz.buffer(op.indices), bz.buffer(op.updates)
    ds = bz.sizes(dest)
    out = bz.dest(op.result, ds)
    if out is not dest:
        bz.b.create(CopyOp, dest, out)
    rows = bz.scalars().cast(ds[0], I64)

    def position(b: Builder, pos: list[Value], carried: list[Value]) -> list[Value]:
        row, ok = checked_row(bz, b, op, idx, pos, rows)

        def element(ib: Builder, ivs: list[Value]) -> None:
            at = [row] + ivs
            total = bz.scalars(ib).add(_load(ib, out, at), _load(ib, upd, pos + ivs))
            ib.create(StoreOp, total, out, at)

        bz.when(ok, lambda tb: bz.parallel_nest(ds[1:], element, tb), b=b)
        return []

    bz.for_nest(bz.sizes(idx), [], position)
