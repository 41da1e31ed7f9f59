"""Rules for the ops that cut tensors into pieces and put them back (graph/slicing.py):
slice, insert_slice, concat and split, as `tensor` slices (views once bufferized).

- slice: `tensor.extract_slice` with Python's bounds, per axis the offset `start`, the size
  `count` and the stride `step`. A negative step is a negative stride: MLIR's slices take
  one, and element i of the window is at `start + i * step`, which is Python's rule. start
  and count are `slice(a, b, c).indices(n)`: computed here when the axis size n is static,
  else at run time from n with Python's clamping (`slice_bounds`, the loop rule's formulas:
  a negative bound counts from the end, bounds clamp to [0, n] for a positive step and to
  [-1, n - 1] for a negative one, bounds of magnitude at least `END` are infinite, the count
  is `ceil(max(stop - start, 0) / |step|)`). An empty window along a static axis is a
  `tensor.empty` (MLIR rejects a static offset at the end of an axis even for no element);
  a run-time one walking backwards may start at -1, so its offset is `max(start, 0)`.
- insert_slice: `tensor.insert_slice` of src into dest at the same bounds (src has the
  window's shape: the caller's guarantee, which the interpreter checks; as in the loop rule
  the window takes src's sizes).
- concat: the inputs `tensor.insert_slice`d into a `tensor.empty` of the result, each at the
  running offset along the axis (what MLIR's `tensor.concat` decomposes into: one buffer,
  written in place once bufferized). Inputs of static size 0 along the axis add nothing.
- split: one `tensor.extract_slice` per part at the running offset. Part sizes are static
  (the result type), the `sizes` operands' values (`shape.index_of`), or the axis size
  divided by the section count. Where the axis size is known only at run time, what the
  interpreter checks is checked with today's messages (`graph.check`): an axis size
  divisible by the section count (floor-sized parts then stay inside x), or parts that add
  up to it, none negative. In that last case x is padded along the axis up to the parts'
  total (`tensor.pad`), and negative parts read as 0, so that no part reaches outside
  whatever the check says, as the loop rule's guard does (the one case that copies).
"""

from __future__ import annotations

from irkit.ir import Operation, Value
from irkit.types import RankedTensorType
from irkit.dialects.graph import TensorSpec, checked_axis
from irkit.dialects.graph.slicing import END
from irkit.dialects.tensor import DimOp, extract_slice, insert_slice, pad
from irkit.passes.graph_to_linalg.core import FunctionConversion, converts
from irkit.passes.graph_to_linalg.shape import IndexArith, as_type, index_of, static_or


# ---------------------------------------------------------------------------------------------
# Python's slice bounds
# ---------------------------------------------------------------------------------------------


def _clamp_bound(ix: IndexArith, a: int, n: Value, step: int):
    """Python's reading of slice bound `a` on an axis of run-time size `n`."""
    lo = 0 if step > 0 else -1
    if a <= -END:
        return lo
    if a < 0:                                   # from the end, then no lower than lo
        return ix.max(ix.add(n, a), lo)
    hi = n if step > 0 else ix.sub(n, 1)
    return hi if a >= END else ix.min(a, hi)


def slice_bounds(cv: FunctionConversion, x: Value, axis: int, a: int, b: int, c: int
                 ) -> tuple:
    """(start, count) of `a:b:c` along `axis` of `x`: ints for a static axis size, else
    index values computed at `cv.b` (see the module docstring)."""
    static = x.type.shape[axis]
    if static is not None:
        r = range(*slice(a, b, c).indices(static))
        return r.start, len(r)
    ix = IndexArith(cv)
    n = cv.size(x, axis)
    if c == 1 and (a == 0 or a <= -END) and b >= END:       # all of it, in order
        return 0, n
    start = _clamp_bound(ix, a, n, c)
    stop = _clamp_bound(ix, b, n, c)
    span = ix.max(ix.sub(stop, start) if c > 0 else ix.sub(start, stop), 0)
    return start, ix.ceildiv(span, abs(c))


def _window(cv: FunctionConversion, op: Operation, whole: Value) -> tuple[list, list, list]:
    """(offsets, counts, strides) of the op's bounds over tensor `whole`, mixed."""
    p = op.props()
    ix = IndexArith(cv)
    offsets, counts = [], []
    for axis, (a, b, c) in enumerate(zip(p["starts"], p["stops"], p["steps"])):
        start, count = slice_bounds(cv, whole, axis, a, b, c)
        if c < 0:                               # an empty window may start at -1
            start = ix.max(start, 0)
        offsets.append(ix.mixed(start))
        counts.append(ix.mixed(count))
    return offsets, counts, list(p["steps"])


@converts("graph.slice")
def convert_slice(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.x, op.result.type
    offsets, counts, strides = _window(cv, op, x)
    ix = IndexArith(cv)
    sizes = static_or(cv, t, [ix.value(c) for c in counts])
    if 0 in counts:
        return [cv.empty(t, sizes)]
    r = extract_slice(cv.b, x, offsets, counts, strides)
    return [as_type(cv, r, t, sizes)]


@converts("graph.insert_slice")
def convert_insert_slice(cv: FunctionConversion, op: Operation) -> list[Value]:
    src, dest, t = op.src, op.dest, op.result.type
    offsets, counts, strides = _window(cv, op, dest)
    dest_sizes = static_or(cv, t, cv.sizes(dest))
    if 0 in counts:
        return [as_type(cv, dest, t, dest_sizes)]
    window = []
    for a, c in enumerate(counts):              # src's sizes; static where either is
        d = src.type.shape[a]
        window.append(c if isinstance(c, int) else d if d is not None else cv.size(src, a))
    static = tuple(w if isinstance(w, int) else None for w in window)
    src = as_type(cv, src, RankedTensorType(static, src.type.element))
    r = insert_slice(cv.b, src, as_type(cv, dest, t), offsets, window, strides)
    cv.know_sizes(r, dest_sizes)
    return [r]


# ---------------------------------------------------------------------------------------------
# graph.concat, graph.split
# ---------------------------------------------------------------------------------------------


def _concat_sizes(cv: FunctionConversion, xs: list[Value], t, axis: int) -> list[Value]:
    """The result's sizes: static ones from its type; along the axis the inputs' sum; any
    other `?` axis from an input that states it, else the first input's run-time size."""
    ix = IndexArith(cv)
    sizes = []
    for a, d in enumerate(t.shape):
        if d is not None:
            sizes.append(cv.index(d))
        elif a == axis:
            sizes.append(ix.value(ix.sum([cv.size(x, a) for x in xs])))
        else:
            static = next((x.type.shape[a] for x in xs if x.type.shape[a] is not None), None)
            sizes.append(cv.index(static) if static is not None else cv.size(xs[0], a))
    return sizes


@converts("graph.concat")
def convert_concat(cv: FunctionConversion, op: Operation) -> list[Value]:
    xs, t = list(op.inputs), op.result.type
    axis = checked_axis(op.props()["axis"], TensorSpec.of(t))
    sizes = _concat_sizes(cv, xs, t, axis)
    if len(xs) == 1:
        return [as_type(cv, xs[0], t, sizes)]
    ix = IndexArith(cv)
    out = cv.empty(t, sizes)
    offset = 0
    for k, x in enumerate(xs):
        if k:
            offset = ix.add(offset, cv.size(xs[k - 1], axis))
        if ix.known(cv.size(x, axis)) == 0:
            continue
        offsets = [0] * t.rank
        offsets[axis] = offset
        window = [d if d is not None else cv.size(x, a) for a, d in enumerate(x.type.shape)]
        out = insert_slice(cv.b, x, out, offsets, window)
    cv.know_sizes(out, sizes)
    return [out]


def _check_equal_division(cv: FunctionConversion, size: Value, n: int, axis: int) -> None:
    """Equal parts of a run-time axis size: the size must be a multiple of `n`."""
    s = cv.scalars()
    ok = s.cmp("eq", s.op("arith.remui", size, cv.index(n)), cv.index(0))
    cv.check(ok, size, cv.index(n), "array split does not result in an equal division "
             f"(axis {axis} of size {{value}} into {{bound}} sections)")


def _check_parts(cv: FunctionConversion, op: Operation, size: Value, axis: int,
                 parts: list, given: bool) -> bool:
    """Parts of sizes given at run time, or static parts of a run-time axis size: none
    negative, and their sum the axis size. Returns whether a check was emitted (else
    everything is static, or the one part is all of x)."""
    ix = IndexArith(cv)
    if all(ix.known(p) is not None for p in parts + [size]):
        return False                        # the verifier checked them
    # Sizes of tensors are never negative; parts that are the sizes a concat added up (its
    # cotangent's split) provably fill the axis: then there is nothing to check.
    loose = [p for p in parts if ix.known(p) is None and p.defining_op(DimOp) is None]
    total = ix.sum(parts)
    if not loose and ix.same(total, size):
        return False
    s = cv.scalars()
    ok = s.cmp("eq", ix.value(total), size)
    for part in loose:
        ok = s.and_(ok, s.cmp("ge", part, cv.index(0)))
    if given:
        message = "part sizes (adding up to {value}) do not add up to the axis size {bound}"
    else:                                   # static parts (the result type) of a `?` axis
        message = (f"array split does not result in {len(parts)} parts of "
                   f"{op.results[0].type.shape[axis]} (axis {axis} of size {{bound}})")
    cv.check(ok, ix.value(total), size, message)
    return True


def _split_parts(cv: FunctionConversion, op: Operation, x: Value, axis: int) -> tuple:
    """(each part's size along the axis, mixed; whether it was checked against the axis
    size at run time by `_check_parts`)."""
    n = op.props()["sections"]
    given = [index_of(cv, v) for v in op.sizes]
    size = cv.size(x, axis)
    ix = IndexArith(cv)
    parts, equal = [], None
    for r in op.results:
        d = r.type.shape[axis]
        if d is not None:
            parts.append(d)
        elif given:
            parts.append(ix.mixed(given[len(parts)]))
        elif n == 1:
            parts.append(ix.mixed(size))
        else:
            if equal is None:
                equal = ix.floordiv(size, n)
                _check_equal_division(cv, size, n, axis)
            parts.append(equal)
    checked = equal is None and _check_parts(cv, op, size, axis, parts, bool(given))
    return parts, checked


@converts("graph.split")
def convert_split(cv: FunctionConversion, op: Operation) -> list[Value]:
    x = op.x
    axis = checked_axis(op.props()["axis"], TensorSpec.of(x.type))
    parts, checked = _split_parts(cv, op, x, axis)
    ix = IndexArith(cv)
    xs = cv.sizes(x)
    source = x
    if checked:                                 # parts that may not fit: see the docstring
        parts = [ix.max(p, 0) for p in parts]
        short = ix.max(ix.sub(ix.sum(parts), xs[axis]), 0)
        high = [0] * x.type.rank
        high[axis] = short
        source = pad(cv.b, x, [0] * x.type.rank, high, cv.constant(0, x.type.element))
    out, offset = [], 0
    for k, (r, part) in enumerate(zip(op.results, parts)):
        if k:
            offset = ix.add(offset, parts[k - 1])
        t = r.type
        sizes = list(xs)
        sizes[axis] = ix.value(part)
        sizes = static_or(cv, t, sizes)
        if ix.known(part) == 0:
            out.append(cv.empty(t, sizes))
            continue
        offsets = [0] * t.rank
        offsets[axis] = offset
        window = [d if d is not None else ix.mixed(s)
                  for d, s in zip(source.type.shape, sizes)]
        window[axis] = part
        piece = extract_slice(cv.b, source, offsets, window)
        out.append(as_type(cv, piece, t, sizes))
    return out


__all__ = ["slice_bounds", "convert_slice", "convert_insert_slice", "convert_concat",
           "convert_split"]
