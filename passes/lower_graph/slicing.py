"""Lowerings of the ops that cut tensors into pieces and put them back (graph/slicing.py):
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
  section count. Where the axis size is known only at run time, what the interpreter checks
  is checked (`FunctionLowering.check`): an axis size divisible by the section count, or
  parts that add up to it (none negative); parts that do not are then not copied at all, so
  no element outside x is read.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.rewrite import constant_value
from irkit.dialects.graph import TensorSpec
from irkit.dialects.graph import checked_axis
from irkit.dialects.graph.slicing import END
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
             into: bool, b: Builder | None = None) -> None:
    """A parallel copy of all of `src` into `dst` at `offset` along `axis` (`into`), or of
    the part of `src` at `offset` into all of `dst` (at `b`, default the top level)."""
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

    lw.parallel_nest(sizes, body, b)


@lowers("graph.concat")
def lower_concat(lw: FunctionLowering, op: Operation) -> None:
    xs = [lw.buffer(v) for v in op.operands]
    rtype = op.results[0].type
    axis = checked_axis(op.props()["axis"], TensorSpec.of(rtype))
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
    axis = checked_axis(p["axis"], TensorSpec.of(op.operands[0].type))
    n = p["sections"]
    given = [lw.index_of(v) for v in op.operands[1:]]
    s = Scalars(lw, lw.b)
    xs = lw.sizes(x)
    equal = None
    parts = []
    for r in op.results:
        d = r.type.shape[axis]
        if d is not None:
            parts.append(lw.index(d))
        elif given:
            parts.append(given[len(parts)])
        elif n == 1:
            parts.append(xs[axis])
        else:
            if equal is None:
                equal = s.op("arith.divui", xs[axis], lw.index(n))
                _check_equal_division(lw, s, op, xs[axis], n, axis)
            parts.append(equal)
    ok = _check_parts(lw, s, op, x, axis, parts, bool(given)) if equal is None else None
    dests = []
    for r, part in zip(op.results, parts):
        sizes = list(xs)
        sizes[axis] = part
        dests.append(lw.dest(r, sizes))

    def copies(b: Builder) -> None:
        offset = lw.index(0)
        for k, (out, part) in enumerate(zip(dests, parts)):
            _copy_at(lw, x, out, axis, offset, into=False, b=b)
            if k + 1 < len(parts):
                offset = part if offset is lw.index(0) else Scalars(lw, b).add(offset, part)

    if ok is None:
        copies(lw.b)
    else:
        lw.when(ok, copies)


def _check_equal_division(lw: FunctionLowering, s: Scalars, op: Operation, size: Value,
                          n: int, axis: int) -> None:
    """Equal parts of a run-time axis size: the size must be a multiple of `n` (floor-sized
    parts stay inside x, so the copies need no guard)."""
    ok = s.cmp("eq", s.op("arith.remui", size, lw.index(n)), lw.index(0))
    lw.check(ok, size, lw.index(n), "array split does not result in an equal division "
             f"(axis {axis} of size {{value}} into {{bound}} sections)", op)


def _check_parts(lw: FunctionLowering, s: Scalars, op: Operation, x: Value, axis: int,
                 parts: list[Value], given: bool) -> Value | None:
    """Parts of sizes given at run time, or static parts of a run-time axis size: none
    negative, and their sum the axis size. Returns the condition the copies need (parts
    that do not fit would read outside x), or None when everything is static."""
    size = lw.size(x, axis)
    if parts == [size] or all(constant_value(v) is not None for v in parts + [size]):
        return None                         # one part is all of x; or the verifier checked it
    total, ok = lw.index(0), None
    for part in parts:
        total = part if total is lw.index(0) else s.add(total, part)
        fits = s.cmp("ge", part, lw.index(0))
        ok = fits if ok is None else s.and_(ok, fits)
    ok = s.and_(ok, s.cmp("eq", total, size))
    if given:
        message = "part sizes (adding up to {value}) do not add up to the axis size {bound}"
    else:                                   # static parts (the result type) of a `?` axis
        message = (f"array split does not result in {len(parts)} parts of "
                   f"{op.results[0].type.shape[axis]} (axis {axis} of size {{bound}})")
    lw.check(ok, total, size, message, op)
    return ok
