"""Lowerings of the reductions and argmax (graph/reduce.py) and of softmax and log_softmax
(graph/loss.py): a `loop.parallel` over the axes that are kept, and inside it `loop.for`s
over the reduced axes carrying the accumulator (`iter_args`).

Accumulators start at the reduction's identity, so an empty axis gives what numpy's
`initial=` would (sum 0, mean 0/0 = NaN). max, min and argmax have no identity: numpy (the
interpreter) raises when the reduced axes hold no element, whatever the kept axes' sizes, and
the lowered code records the same error with `lw.check` (`_check_not_empty`); the value it
stores meanwhile (-inf / +inf, the integer limits, index 0) is never returned.

- sum and mean add with an `accumulate.Accumulator`: floats in f64 (f64 itself
  compensated), rounded once to the element type, so the error is about one ulp where
  numpy's pairwise sum has O(log n) (the bound is in accumulate.py); integers wrap, as
  `np.sum(dtype=x.dtype)`. mean divides the wide sum by the element count before rounding.
- max and min use IEEE `maximum`/`minimum`: a NaN anywhere makes the result NaN.
- argmax keeps (best value, its index) and takes a new element when it is greater, or when
  it is the first NaN (numpy's argmax returns the first NaN's index).
- softmax and log_softmax make three passes over their axis per slice, as the numpy
  reference does: the maximum m (shifted by 0 where it is not finite), then the sum of
  `exp(x - m)` (softmax stores the exponentials on the way; the sum is accumulated wide and
  rounded once, after the `log` for log_softmax), then the normalization.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import I64, Type
from irkit.dialects.graph import TensorSpec
from irkit.dialects.graph import checked_axis, reduction_axes
from irkit.passes.lower_graph.accumulate import Accumulator
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import load, store
from irkit.passes.lower_graph.scalar import Scalars, is_float


def lowest(t: Type, sign: int):
    """-inf (sign -1) or +inf for floats; the signed limits of integer type `t`."""
    if is_float(t):
        return sign * float("inf")
    w = t.width
    return -(1 << (w - 1)) if sign < 0 else (1 << (w - 1)) - 1


def _with_axes(kept_ivs: list[Value], reduced_ivs: list[Value], axes: tuple,
               rank: int) -> list[Value]:
    """Full operand indices from the kept axes' ivs and the reduced axes' ivs."""
    kept, red = iter(kept_ivs), iter(reduced_ivs)
    return [next(red) if a in axes else next(kept) for a in range(rank)]


def _reduce(lw: FunctionLowering, op: Operation, axes: tuple, keepdims: bool,
            inits: list, step, finish) -> None:
    """The loop structure shared by the reductions: `step(s, carried, x, reduced_ivs)` gives
    the next carried values, `finish(s, carried)` the element stored."""
    buf = lw.buffer(op.operands[0])
    rank = buf.type.rank
    xs = lw.sizes(buf)
    kept = [a for a in range(rank) if a not in axes]
    if keepdims:
        out_sizes = [lw.index(1) if a in axes else xs[a] for a in range(rank)]
    else:
        out_sizes = [xs[a] for a in kept]
    out = lw.dest(op.results[0], out_sizes)
    red_sizes = [xs[a] for a in axes]

    def body(b: Builder, ivs: list[Value]) -> None:
        def inner(ib: Builder, rivs: list[Value], carried: list[Value]) -> list[Value]:
            x = load(ib, buf, _with_axes(ivs, rivs, axes, rank))
            return step(Scalars(lw, ib), carried, x, rivs)

        carried = lw.for_nest(red_sizes, inits, inner, b)
        value = finish(Scalars(lw, b), carried)
        idx = _with_axes(ivs, [lw.index(0)] * len(axes), axes, rank) if keepdims else ivs
        store(b, value, out, idx)

    lw.parallel_nest([xs[a] for a in kept], body)


def _props(op: Operation) -> tuple[tuple, bool]:
    p = op.props()
    return reduction_axes(p["axes"], TensorSpec.of(op.operands[0].type)), p["keepdims"]


def _check_not_empty(lw: FunctionLowering, op: Operation, axes: tuple, message: str) -> None:
    """Record numpy's error for a reduction without identity over no element: the product
    of the reduced axes' sizes must not be 0. Only the `?` sizes are multiplied (a static
    one is known nonzero, or makes the count 0); nothing is emitted when all are static."""
    buf = lw.buffer(op.operands[0])
    static = [buf.type.shape[a] for a in axes]
    if all(d is not None and d > 0 for d in static):
        return
    top = Scalars(lw, lw.b)
    count = lw.index(0) if 0 in static else None
    for a in axes if count is None else ():
        if static[axes.index(a)] is None:
            size = lw.size(buf, a)
            count = size if count is None else top.mul(count, size)
    lw.check(top.cmp("ne", count, lw.index(0)), count, lw.index(0), message, op)


@lowers("graph.reduce_max", "graph.reduce_min")
def lower_reduce_extremum(lw: FunctionLowering, op: Operation) -> None:
    t = op.results[0].type.element
    axes, keepdims = _props(op)
    is_max = op.name == "graph.reduce_max"
    what = "maximum" if is_max else "minimum"
    _check_not_empty(lw, op, axes, f"zero-size array to reduction operation {what} which has "
                     "no identity")

    def step(s: Scalars, carried, x, rivs):
        return [s.max(carried[0], x) if is_max else s.min(carried[0], x)]

    init = lw.constant(lowest(t, -1 if is_max else 1), t)
    _reduce(lw, op, axes, keepdims, [init], step, lambda s, c: c[0])


def _sum(lw: FunctionLowering, op: Operation, acc: Accumulator, finish) -> None:
    """A reduction by `acc`; `finish(s, sum)` maps the wide sum to the element stored."""
    axes, keepdims = _props(op)
    _reduce(lw, op, axes, keepdims, acc.inits(), lambda s, c, x, rivs: acc.add(s, c, x),
            lambda s, c: finish(s, acc.result(s, c)))


@lowers("graph.reduce_sum")
def lower_reduce_sum(lw: FunctionLowering, op: Operation) -> None:
    acc = Accumulator(lw, op.results[0].type.element)
    _sum(lw, op, acc, acc.round)


@lowers("graph.reduce_mean")
def lower_reduce_mean(lw: FunctionLowering, op: Operation) -> None:
    """The wide sum divided by the element count of the reduced axes (read at run time
    where they are `?`, converted to the accumulation type once, before the loops), then
    rounded once."""
    acc = Accumulator(lw, op.results[0].type.element)
    axes, _ = _props(op)
    buf = lw.buffer(op.operands[0])
    top = Scalars(lw, lw.b)
    n = lw.index(1)
    for a in axes:
        n = lw.size(buf, a) if n is lw.index(1) else top.mul(n, lw.size(buf, a))
    count = top.count(n, acc.type)
    _sum(lw, op, acc, lambda s, total: acc.round(s, s.div(total, count)))


@lowers("graph.argmax")
def lower_argmax(lw: FunctionLowering, op: Operation) -> None:
    x_type = op.operands[0].type
    t = x_type.element
    p = op.props()
    axis = checked_axis(p["axis"], TensorSpec.of(x_type))
    _check_not_empty(lw, op, (axis,), "attempt to get argmax of an empty sequence")

    def step(s: Scalars, carried, x, rivs):
        best, at = carried
        take = s.cmp("gt", x, best)
        if is_float(t):                                 # the first NaN wins
            take = s.or_(take, s.and_(s.isnan(x), s.not_(s.isnan(best))))
        return [s.select(take, x, best), s.select(take, rivs[0], at)]

    _reduce(lw, op, (axis,), p["keepdims"], [lw.constant(lowest(t, -1), t), lw.index(0)],
            step, lambda s, c: s.cast(c[1], I64))


def _softmax(lw: FunctionLowering, op: Operation, log: bool) -> None:
    buf = lw.buffer(op.operands[0])
    t = buf.type.element
    rank = buf.type.rank
    axis = checked_axis(op.props()["axis"], TensorSpec.of(op.operands[0].type))
    xs = lw.sizes(buf)
    out = lw.dest(op.results[0], xs)
    others = [a for a in range(rank) if a != axis]

    def body(b: Builder, ivs: list[Value]) -> None:
        def at(i: Value) -> list[Value]:
            return _with_axes(ivs, [i], (axis,), rank)

        def max_step(ib, r, c):
            return [Scalars(lw, ib).max(c[0], load(ib, buf, at(r[0])))]

        (m,) = lw.for_nest([xs[axis]], [lw.constant(lowest(t, -1), t)], max_step, b)
        s = Scalars(lw, b)
        shift = s.select(s.math("isfinite", m), m, lw.constant(0.0, t))

        def exp_term(ib, r):
            si = Scalars(lw, ib)
            e = si.math("exp", si.sub(load(ib, buf, at(r[0])), shift))
            if not log:
                store(ib, e, out, at(r[0]))
            return e

        acc = Accumulator(lw, t)
        wide = acc.sum([xs[axis]], exp_term, b)
        if log:
            log_total = acc.round(s, s.math("log", wide))
        else:
            total = acc.round(s, wide)

        def norm_step(ib, r, c):
            si = Scalars(lw, ib)
            if log:                                     # (x - m) - log(sum)
                y = si.sub(si.sub(load(ib, buf, at(r[0])), shift), log_total)
            else:                                       # e / sum
                y = si.div(load(ib, out, at(r[0])), total)
            store(ib, y, out, at(r[0]))
            return []

        lw.for_nest([xs[axis]], [], norm_step, b)

    lw.parallel_nest([xs[a] for a in others], body)


@lowers("graph.softmax")
def lower_softmax(lw: FunctionLowering, op: Operation) -> None:
    _softmax(lw, op, log=False)


@lowers("graph.log_softmax")
def lower_log_softmax(lw: FunctionLowering, op: Operation) -> None:
    _softmax(lw, op, log=True)

