"""Rules for the reductions and argmax (graph/reduce.py): `linalg.generic`s with reduction
loops, summing with `core.Accumulator` (its docstring has the bound).

One loop per operand axis, in the operand's order: the reduced axes are `reduction` loops,
the others `parallel`; the operand is read with the identity map, the outputs with the kept
axes (`(d0, d1) -> (d0)`). An output starts as the reduction's identity (`linalg.fill`) and
the body folds one element into it, so an empty axis gives the identity, as numpy's
`initial=` would.

- sum and mean add with `core.Accumulator`: floats in an f64 output (f64 itself with
  Neumaier's compensation, two outputs), then one elementwise generic rounds the sum to the
  element type (a mean divides it by the element count first, in f64); integers wrap in
  their own type and need no second generic.
- max and min fold with IEEE `maximumf` / `minimumf` (`maxsi` / `minsi` for integers), from
  -inf / +inf (the integer limits).
- argmax carries two outputs, the best value and its index (i64, from `linalg.index`), and
  takes an element when it is greater, or when it is the first NaN (numpy returns the first
  NaN's index).
- `keepdims`: the rounding generic writes the result with its unit axes directly; where
  there is none, a `tensor.expand_shape` adds them.

max, min and argmax have no identity: numpy (the interpreter) raises when the reduced axes
hold no element. Where a reduced size is `?`, a `graph.check` at the function level says
so with numpy's message (`check_not_empty`); the value computed meanwhile is never used.
"""

from __future__ import annotations

from typing import Callable, Sequence

from irkit.affine import AffineMap
from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.types import I64, FloatType, RankedTensorType, Type
from irkit.dialects.graph import TensorSpec, checked_axis, reduction_axes
from irkit.dialects.linalg import PARALLEL, REDUCTION, IndexOp
from irkit.passes.graph_to_linalg.core import (
    Accumulator, FunctionConversion, converts, expand_unit_axes, identity_map, projection,
)


def lowest(t: Type, sign: int):
    """-inf (sign -1) or +inf for floats; the signed limits of integer type `t`."""
    if isinstance(t, FloatType):
        return sign * float("inf")
    w = t.width
    return -(1 << (w - 1)) if sign < 0 else (1 << (w - 1)) - 1


def kept_axes(rank: int, axes: Sequence[int]) -> list[int]:
    return [a for a in range(rank) if a not in axes]


def reduced_type(x: Value, axes: Sequence[int], element: Type | None = None
                 ) -> RankedTensorType:
    """The type of `x` reduced over `axes` (dropped), of element type `element`."""
    t = x.type
    return RankedTensorType(tuple(t.shape[a] for a in kept_axes(t.rank, axes)),
                            element or t.element)


def reduced_sizes(cv: FunctionConversion, x: Value, axes: Sequence[int]) -> list[Value]:
    return [cv.size(x, a) for a in kept_axes(x.type.rank, axes)]


def reduce_generic(cv: FunctionConversion, x: Value, axes: Sequence[int],
                   outputs: Sequence[Value], body: Callable,
                   others: Sequence[tuple[Value, AffineMap]] = ()) -> list[Value]:
    """A generic over `x`'s axes reducing `axes` into `outputs` (of `x`'s shape without
    them), reading `x` then `others` (each with its map over `x`'s loops); `body(s, args)`
    as for `cv.generic` (args: x's element, the others', then the outputs')."""
    rank = x.type.rank
    iterators = [REDUCTION if a in axes else PARALLEL for a in range(rank)]
    out_map = projection(rank, kept_axes(rank, axes))
    maps = [identity_map(rank)] + [m for _, m in others] + [out_map] * len(outputs)
    return cv.generic([x] + [v for v, _ in others], list(outputs), maps, iterators, body)


def with_keepdims(cv: FunctionConversion, v: Value, result_type: RankedTensorType,
                  axes: Sequence[int], keepdims: bool) -> Value:
    """The reduced tensor `v` as the op's result: itself, or with the unit axes back."""
    if not keepdims:
        return v
    return expand_unit_axes(cv, v, result_type, kept_axes(result_type.rank, axes))


def result_loops(rank: int, axes: Sequence[int], keepdims: bool) -> list[int]:
    """The axes of a result of rank `rank` that the reduced tensor has: the kept ones
    (keepdims), or all."""
    return kept_axes(rank, axes) if keepdims else list(range(rank))


def check_not_empty(cv: FunctionConversion, x: Value, axes: Sequence[int], message: str
                    ) -> None:
    """A `graph.check` that the reduced axes of `x` hold an element, where that depends on a
    `?` size (a static one is known nonzero, or makes the count 0, and the check fails
    whatever the input)."""
    static = [x.type.shape[a] for a in axes]
    if all(d is not None and d > 0 for d in static):
        return
    s = cv.scalars()
    if 0 in static:
        count = cv.index(0)
    else:
        dynamic = [cv.size(x, a) for a, d in zip(axes, static) if d is None]
        count = dynamic[0]
        for size in dynamic[1:]:
            count = s.mul(count, size)
    cv.check(s.cmp("ne", count, cv.index(0)), count, cv.index(0), message)


def _props(op: Operation) -> tuple[tuple, bool]:
    p = op.props()
    return reduction_axes(p["axes"], TensorSpec.of(op.operand.type)), p["keepdims"]


def wide_sum(cv: FunctionConversion, acc: Accumulator, x: Value, axes: Sequence[int]
             ) -> list[Value]:
    """The carried tensors of the sum of `x` over `axes` (see `core.Accumulator`)."""
    outs = acc.outputs(cv, reduced_type(x, axes).shape, reduced_sizes(cv, x, axes))
    n = acc.count
    return reduce_generic(cv, x, axes, outs,
                          lambda s, args: acc.add(s, args[1:1 + n], args[0]))


@converts("graph.reduce_sum")
def convert_reduce_sum(cv: FunctionConversion, op: Operation) -> list[Value]:
    axes, keepdims = _props(op)
    x, t = op.operand, op.result.type
    acc = Accumulator(t.element)
    carried = wide_sum(cv, acc, x, axes)
    if acc.type is acc.element and not acc.compensated:         # integers: the sum itself
        return [with_keepdims(cv, carried[0], t, axes, keepdims)]
    return [acc.finish(cv, carried, t, loops=result_loops(t.rank, axes, keepdims))]


@converts("graph.reduce_mean")
def convert_reduce_mean(cv: FunctionConversion, op: Operation) -> list[Value]:
    """The wide sum divided by the element count of the reduced axes (a product of sizes,
    converted to the accumulation type at the function level), then rounded once."""
    axes, keepdims = _props(op)
    x, t = op.operand, op.result.type
    acc = Accumulator(t.element)
    s = cv.scalars()
    n = None
    for a in axes:
        n = cv.size(x, a) if n is None else s.mul(n, cv.size(x, a))
    count = s.cast(n if n is not None else cv.index(1), acc.type)
    carried = wide_sum(cv, acc, x, axes)
    return [acc.finish(cv, carried, t, lambda bs, v: bs.div(v, count),
                       loops=result_loops(t.rank, axes, keepdims))]


@converts("graph.reduce_max", "graph.reduce_min")
def convert_reduce_extremum(cv: FunctionConversion, op: Operation) -> list[Value]:
    axes, keepdims = _props(op)
    x, t = op.operand, op.result.type
    is_max = op.name == "graph.reduce_max"
    what = "maximum" if is_max else "minimum"
    check_not_empty(cv, x, axes, f"zero-size array to reduction operation {what} which has "
                    "no identity")
    init = cv.filled(reduced_type(x, axes), reduced_sizes(cv, x, axes),
                     lowest(t.element, -1 if is_max else 1))

    def body(s, args):
        elem, best = args
        return [s.max(best, elem) if is_max else s.min(best, elem)]

    (r,) = reduce_generic(cv, x, axes, [init], body)
    return [with_keepdims(cv, r, t, axes, keepdims)]


@converts("graph.argmax")
def convert_argmax(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.operand, op.result.type
    p = op.props()
    axis = checked_axis(p["axis"], TensorSpec.of(x.type))
    et = x.type.element
    check_not_empty(cv, x, (axis,), "attempt to get argmax of an empty sequence")
    sizes = reduced_sizes(cv, x, (axis,))
    best0 = cv.filled(reduced_type(x, (axis,)), sizes, lowest(et, -1))
    at0 = cv.filled(reduced_type(x, (axis,), I64), sizes, 0)

    def body(s, args):
        elem, best, at = args
        take = s.cmp("gt", elem, best)
        if isinstance(et, FloatType):                       # the first NaN wins
            take = s.or_(take, s.and_(s.isnan(elem), s.not_(s.isnan(best))))
        i = s.b.create(IndexOp, dim=IntegerAttr(axis, I64)).result
        return [s.select(take, elem, best), s.select(take, s.cast(i, I64), at)]

    _, index = reduce_generic(cv, x, (axis,), [best0, at0], body)
    return [with_keepdims(cv, index, t, (axis,), p["keepdims"])]


__all__ = ["lowest", "kept_axes", "reduced_type", "reduced_sizes", "reduce_generic",
           "with_keepdims", "result_loops", "check_not_empty", "wide_sum"]
