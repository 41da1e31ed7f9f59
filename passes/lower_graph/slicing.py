"""Lowerings of the ops that cut tensors into pieces and put them back (graph_slice.py):
slice, insert_slice, concat, split. Each is a parallel copy between index spaces.

- slice: result element `i` along an axis is x's `start + i * step`. `start` and the count
  are Python's `slice(a, b, c).indices(n)`: computed here when the axis size n is static,
  else at run time from n (`memory.dim`) with Python's clamping, before the loop: for a
  positive step bounds clamp to [0, n], for a negative one to [-1, n - 1], a negative bound
  counting from the end first; bounds of magnitude at least `END` (the largest i64) are
  infinite. The count is `ceil(max(stop - start, 0) / step)` (negated for a negative step).
- insert_slice: dest copied into the result (`memory.copy`), then a parallel copy of src
  into the slice's positions, the bounds computed as slice's over dest's sizes (src must
  have the slice's shape: the caller's guarantee, as the interpreter checks).
- concat: one parallel copy per input into the result at the running offset along the axis
  (the sum of the sizes of the inputs before it).
- split: one parallel copy per part out of x from the running offset; the parts' sizes are
  static (the result type), the `sizes` operands' values, or the axis size divided by the
  section count.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.dialects.graph import TensorSpec
from irkit.dialects.graph_shape import _axis
from irkit.dialects.graph_slice import END
from irkit.dialects.memory import CopyOp
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import load, store
from irkit.passes.lower_graph.scalar import Scalars


def _clamp_bound(lw: FunctionLowering, s: Scalars, a: int, n: Value, step: int) -> Value:
    """Python's reading of slice bound `a` on an axis of run-time size `n` (an index)."""
    lo = 0 if step > 0 else -1
    if a <= -END:
        return lw.index(lo)
    if a >= END:
        return n if step > 0 else s.sub(n, lw.index(1))
    if a < 0:                                   # from the end, then no lower than lo
        return s.max(s.add(n, lw.index(a)), lw.index(lo))
    hi = n if step > 0 else s.sub(n, lw.index(1))
    return s.min(lw.index(a), hi)


def slice_bounds(lw: FunctionLowering, n: Value, a: int, b: int, c: int,
                 static: int | None) -> tuple[Value, Value]:
    """(start, count) of `a:b:c` on an axis of size `n` (its static size `static`, or
    None): constants when static, else computed at the top, before the loops."""
    if static is not None:
        r = range(*slice(a, b, c).indices(static))
        return lw.index(r.start), lw.index(len(r))
    s = Scalars(lw, lw.b)
    start = _clamp_bound(lw, s, a, n, c)
    stop = _clamp_bound(lw, s, b, n, c)
    span = s.sub(stop, start) if c > 0 else s.sub(start, stop)
    span = s.max(span, lw.index(0))
    step = abs(c)
    if step == 1:
        return start, span
    count = s.op("arith.divui", s.add(span, lw.index(step - 1)), lw.index(step))
    return start, count


def _bounds(lw: FunctionLowering, op: Operation, buf: Value) -> list[tuple[Value, Value, int]]:
    """(start, count, step) per axis of `buf` for the op's starts/stops/steps."""
    p = op.props()
    out = []
    for a, (lo, hi, st) in enumerate(zip(p["starts"], p["stops"], p["steps"])):
        start, count = slice_bounds(lw, lw.size(buf, a), lo, hi, st, buf.type.shape[a])
        out.append((start, count, st))
    return out


def _positions(s: Scalars, lw: FunctionLowering, bounds, ivs: list[Value]) -> list[Value]:
    """The positions `start + i * step` the ivs of a slice stand for."""
    idx = []
    for (start, _, step), i in zip(bounds, ivs):
        moved = i if abs(step) == 1 else s.mul(i, lw.index(abs(step)))
        if step > 0:
            idx.append(moved if start is lw.index(0) else s.add(start, moved))
        else:                                   # walking backwards from start
            idx.append(s.sub(start, moved))
    return idx


@lowers("graph.slice")
def lower_slice(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    bounds = _bounds(lw, op, x)
    sizes = [c for _, c, _ in bounds]
    out = lw.dest(op.results[0], sizes)

    def body(b: Builder, ivs: list[Value]) -> None:
        idx = _positions(Scalars(lw, b), lw, bounds, ivs)
        store(b, load(b, x, idx), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.insert_slice")
def lower_insert_slice(lw: FunctionLowering, op: Operation) -> None:
    src, dest = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    bounds = _bounds(lw, op, dest)
    out = lw.dest(op.results[0], lw.sizes(dest))
    if out is not dest:
        lw.b.create(CopyOp, dest, out)
    sizes = lw.sizes(src)

    def body(b: Builder, ivs: list[Value]) -> None:
        idx = _positions(Scalars(lw, b), lw, bounds, ivs)
        store(b, load(b, src, ivs), out, idx)

    lw.parallel_nest(sizes, body)


def _copy_at(lw: FunctionLowering, src: Value, dst: Value, axis: int, offset: Value,
             into: bool) -> None:
    """A parallel copy of all of `src` into `dst` at `offset` along `axis` (`into`), or of
    the part of `src` at `offset` into all of `dst`."""
    small = src if into else dst
    sizes = lw.sizes(small)
    zero = lw.index(0)

    def body(b: Builder, ivs: list[Value]) -> None:
        moved = list(ivs)
        if offset is not zero:
            moved[axis] = Scalars(lw, b).add(ivs[axis], offset)
        if into:
            store(b, load(b, src, ivs), dst, moved)
        else:
            store(b, load(b, src, moved), dst, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.concat")
def lower_concat(lw: FunctionLowering, op: Operation) -> None:
    xs = [lw.buffer(v) for v in op.operands]
    rtype = op.results[0].type
    axis = _axis(op.props()["axis"], TensorSpec.of(rtype))
    s = Scalars(lw, lw.b)
    sizes = []
    for a, d in enumerate(rtype.shape):
        if d is not None:
            sizes.append(lw.index(d))
        elif a == axis:
            total = lw.index(0)
            for x in xs:
                n = lw.size(x, a)
                total = n if total is lw.index(0) else s.add(total, n)
            sizes.append(total)
        else:                                       # the inputs agree; take a `?` one
            sizes.append(lw.size(xs[0], a))
    out = lw.dest(op.results[0], sizes)
    offset = lw.index(0)
    for i, x in enumerate(xs):
        _copy_at(lw, x, out, axis, offset, into=True)
        if i + 1 < len(xs):
            n = lw.size(x, axis)
            offset = n if offset is lw.index(0) else s.add(offset, n)


@lowers("graph.split")
def lower_split(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    p = op.props()
    axis = _axis(p["axis"], TensorSpec.of(op.operands[0].type))
    n = p["sections"]
    given = [lw.index_of(v) for v in op.operands[1:]]
    s = Scalars(lw, lw.b)
    xs = lw.sizes(x)
    equal = None
    offset = lw.index(0)
    for k, r in enumerate(op.results):
        d = r.type.shape[axis]
        if d is not None:
            part = lw.index(d)
        elif given:
            part = given[k]
        elif n == 1:
            part = xs[axis]
        else:
            if equal is None:
                equal = s.op("arith.divui", xs[axis], lw.index(n))
            part = equal
        sizes = list(xs)
        sizes[axis] = part
        out = lw.dest(r, sizes)
        _copy_at(lw, x, out, axis, offset, into=False)
        if k + 1 < len(op.results):
            offset = part if offset is lw.index(0) else s.add(offset, part)
