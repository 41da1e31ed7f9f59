"""Graph ops that combine many elements into fewer: the reductions (`reduce_sum`,
`reduce_mean`, `reduce_max`, `reduce_min`) and `argmax`.

Every op here follows numpy's reference semantics and keeps the operand's element type (an
f32 sum is an f32 tensor, an i8 sum wraps in i8: no widening behind the user's back), except
`argmax`, whose result holds i64 indices. Softmax and the losses (`loss.py`) and matmul
(`matmul.py`) are families of their own; they import the derivative helpers defined here.

Shape rules are written once, in `infer`, over dims that may be ints, None (`?`) or DSL
symbols (`N`): the reduced axes are dropped (or kept as size 1), and every other dim passes
through as it is, symbols included.

Canonicalization keeps to rewrites that give equal values for every input, inf and NaN
included: reducing axes of size 1 is the identity (or a reshape that drops them), and argmax
over an axis of size 1 is 0.

Derivatives (see `irkit.ad_rules`) sit on each op: sum and mean are `Linear` (their transpose
repeats the cotangent over the reduced axes), max and min send it to the elements equal to
the result, split equally among ties, and argmax is `NonDifferentiable`. The rules build
shapes only from ops whose shape functions handle `?` (reshape and broadcast_to with
`graph.dim` sizes, counts read at run time), and every cotangent or tangent they return has
the exact type of its operand or result (`ADBuilder.as_type`).
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import ADBuilder, Linear, NonDifferentiable
from irkit.sharding_rules import ShardingRule
from irkit.ir import Operation, Value
from irkit.opdef import AnyTensor, Operand, Pure, Result, registered_ops
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import I1, I64, RankedTensorType
from irkit.dialects.graph.base import (
    BoolProp, ConstantOp, GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, checked_axis, graph,
    is_float, require_float, wide_sum,
)

_TRAITS = (Pure(),)


# ---------------------------------------------------------------------------------------------
# Axis helpers
# ---------------------------------------------------------------------------------------------


def reduction_axes(axes: tuple, spec: TensorSpec) -> tuple:
    """The sorted, non-negative axes a reduction works on; `()` means all of them."""
    if not axes:
        return tuple(range(spec.rank))
    out = [checked_axis(a, spec) for a in axes]
    for i, a in enumerate(out):
        if a in out[:i]:
            raise ShapeError(f"axes {list(axes)} name axis {a} twice")
    return tuple(sorted(out))


def _reduced_shape(spec: TensorSpec, axes: tuple, keepdims: bool) -> tuple:
    """The shape left after reducing `axes`: those dims dropped, or kept as 1."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(spec.shape))
    return tuple(d for i, d in enumerate(spec.shape) if i not in axes)


def check_numeric(spec: TensorSpec) -> None:
    if spec.dtype is I1:
        raise ShapeError(f"operands need a numeric (non-i1) element type, got {spec}")


def _np_axes(axes: tuple, ndim: int):
    """The numpy `axis=` argument for a reduction's `axes` property (`()` = all axes)."""
    return tuple(a % ndim for a in axes) if axes else None


# ---------------------------------------------------------------------------------------------
# Canonicalization patterns
# ---------------------------------------------------------------------------------------------


def _unit_axes_only(op: GraphOp, axes: tuple) -> bool:
    """Whether every axis `op` works on has static size 1 (true of a scalar's zero axes)."""
    shape = op.operand.type.shape
    return all(shape[a] == 1 for a in axes)


def replace_with_op(rewriter: PatternRewriter, op: Operation, new: Operation) -> None:
    """Insert `new` (made by a `create` that takes Python values, which the rewriter's
    `build`-based helpers do not) where `op` is, and replace `op` with its results."""
    rewriter.set_insertion_point_before(op)
    rewriter.insert(new)
    rewriter.replace_op(op, new.results)


def _reshape_to(rewriter: PatternRewriter, op: GraphOp, x, t: RankedTensorType) -> bool:
    """Replace `op` by `graph.reshape x` to `t`, when the shape dialect is loaded and `t` has at
    most one dynamic dim (reshape infers one -1 from the element count, no more)."""
    reshape = registered_ops().get("graph.reshape")
    if reshape is None or sum(d is None for d in t.shape) > 1:
        return False
    new = reshape.create(x, shape=tuple(-1 if d is None else d for d in t.shape),
                         location=op.location)
    if new.results[0].type is not t:
        new.erase()
        return False
    replace_with_op(rewriter, op, new)
    return True


class ReduceUnitAxes(RewritePattern):
    """A reduction over axes that all have size 1 is the identity on the values:
    `sum([x]) = max([x]) = min([x]) = x` and `mean([x]) = x / 1 = x`, NaN and inf included.
    max and min are bit-exact; sum and mean add from +0.0, so a -0.0 element sums to +0.0
    where the rewrite keeps -0.0 (equal under `==` and every numeric comparison; only the
    sign of that zero differs). With keepdims the result type is the operand's and the op
    goes away; without, the unit dims are dropped by a `graph.reshape`. A scalar's
    reduction over its zero axes is the first case.

    One instance per reduction (`root` is its op name), made where the ops are declared."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        x = op.operand
        if not _unit_axes_only(op, reduction_axes(op.props()["axes"], TensorSpec.of(x.type))):
            return False
        if op.result.type is x.type:
            rewriter.replace_op(op, [x])
            return True
        return _reshape_to(rewriter, op, x, op.result.type)


class ArgmaxUnitAxis(RewritePattern):
    """argmax along an axis of size 1 is 0 everywhere (the only index there is, even for a
    NaN). The zeros become a constant when the result shape is static."""

    root = "graph.argmax"   # the op class is defined below, so the annotation cannot name it

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        x = op.operand
        axis = checked_axis(op.props()["axis"], TensorSpec.of(x.type))
        t = op.result.type
        if x.type.shape[axis] != 1 or not t.has_static_shape:
            return False
        replace_with_op(rewriter, op, ConstantOp.create(np.zeros(t.shape, np.int64), I64,
                        location=op.location))
        return True



# ---------------------------------------------------------------------------------------------
# Derivative helpers
# ---------------------------------------------------------------------------------------------
#
# The rules below build shapes only from ops whose shape functions handle `?`: reshape and
# broadcast_to read run-time sizes from `graph.dim` operands.


def _broadcast_like(ad: ADBuilder, v: Value, x: Value) -> Value:
    """v (whose axes are 1 or x's, aligned at the right) repeated to x's type."""
    if v.type is x.type:
        return v
    shape, sizes = ad.sizes(x, range(x.type.rank))
    return ad.op("graph.broadcast_to", v, sizes, shape=shape)


def with_unit_axes(ad: ADBuilder, v: Value, axes: tuple, like: Value | None = None) -> Value:
    """v with new size-1 axes at `axes` (sorted, non-negative positions in the result): a
    reshape, whose `?` sizes are read with `graph.dim` when there are several (a reshape
    without size operands infers a single -1): from `like` where given (a tensor of the
    result's rank with the same sizes off `axes`, whose dims the rule reads anyway), else
    from v."""
    rank = v.type.rank + len(axes)
    kept = [i for i in range(rank) if i not in axes]
    it = iter(v.type.shape)
    shape = [1 if i in axes else next(it) for i in range(rank)]
    dyn = [j for j, d in enumerate(v.type.shape) if d is None]
    sizes = [] if len(dyn) < 2 else [ad.op("graph.dim", v, axis=j) for j in dyn] \
        if like is None else [ad.op("graph.dim", like, axis=kept[j]) for j in dyn]
    return ad.op("graph.reshape", v, sizes, shape=[-1 if d is None else d for d in shape])


def element_count(ad: ADBuilder, x: Value, axes, like: Value) -> Value:
    """How many elements `x`'s `axes` hold, as a 0-d tensor of `like`'s float type: a
    constant when the sizes are static, else the product of `graph.dim`s, cast once (a count
    converts as exactly as the forward op's `dtype.type(n)`)."""
    static, dyn = 1, []
    for a in axes:
        d = x.type.shape[a]
        if d is None:
            dyn.append(ad.op("graph.dim", x, axis=a))
        else:
            static *= d
    if not dyn:
        return ad.scalar(float(static), like)
    n = dyn[0]
    for d in dyn[1:]:
        n = ad.op("graph.mul", n, d)
    if static != 1:
        n = ad.op("graph.mul", n, ad.constant(static, I64))
    return ad.op("graph.cast", n, dtype=like.type.element)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


class ReduceOp(GraphOp):
    """`%r = graph.reduce_* %x {axes = array<i64: ...>, keepdims = ...} : (A) -> R`.

    `axes` lists the axes reduced (negative ones count from the end; each at most once);
    the empty default reduces all of them, to a scalar. `keepdims` keeps reduced axes as
    size 1, so the result broadcasts against the operand (`x - reduce_max(x)`).
    """

    __slots__ = ()
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    axes = IntsProp(default=(), doc="axes to reduce; empty: all axes")
    keepdims = BoolProp(default=False, doc="keep reduced axes as size 1")
    traits = _TRAITS
    #: what a rank holds when a reduced axis is split (`irkit.sharding_rules`): "sum" or
    #: "mean" (a partial sum once scaled); None: the op needs the whole axis
    _partial: str | None = None

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        cls._check_dtype(x)
        axes = reduction_axes(props["axes"], x)
        return [x.with_shape(_reduced_shape(x, axes, props["keepdims"]))]

    @classmethod
    def _check_dtype(cls, x: TensorSpec) -> None:
        check_numeric(x)

    def evaluate(self, x):
        p = self.props()
        r = self._kernel(x, axis=_np_axes(p["axes"], x.ndim), keepdims=p["keepdims"])
        return np.asarray(r, dtype=x.dtype)

    def is_differentiable(self) -> bool:
        """An integer reduction (sum, max and min take integers) is piecewise constant."""
        return is_float(self.operand.type.element)

    def sharding_rule(self) -> ShardingRule:
        """Kept axes parallel; reduced ones a partial sum (or mean) per `_partial`, or whole;
        a sum or mean is linear, so a partial operand gives a partial result."""
        axes, rank = self._reduced(), self.operand.type.rank
        keep = self.props()["keepdims"]
        out = [None if i in axes else f"d{i}" for i in range(rank) if keep or i not in axes]
        reductions = {f"d{i}": self._partial for i in axes} if self._partial else {}
        return ShardingRule((tuple(f"d{i}" for i in range(rank)),), (tuple(out),), reductions,
                            frozenset(), ((0,),) if self._partial else ())

    def _reduced(self) -> tuple:
        return reduction_axes(self.props()["axes"], TensorSpec.of(self.operand.type))

    def _unreduce(self, ad: ADBuilder, v: Value) -> Value:
        """`v` (of the result's shape) with the reduced axes back as size 1 where it must
        have them to broadcast against the operand: not with keepdims, nor when the reduced
        axes lead (numpy aligns at the right)."""
        axes = self._reduced()
        if self.props()["keepdims"] or axes == tuple(range(len(axes))):
            return v
        return with_unit_axes(ad, v, axes, self.operand)


@graph.op
class ReduceSumOp(ReduceOp):
    """Sum over `axes`, in the operand's element type (integers wrap).

        %r = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
    """

    name = "graph.reduce_sum"
    traits = _TRAITS + (Linear(),)
    _partial = "sum"

    def transpose(self, ad: ADBuilder, cts: list) -> list:
        """Each operand element contributes once to its sum: the cotangent is repeated back
        over the reduced axes."""
        x = self.operand
        return [ad.as_type(_broadcast_like(ad, self._unreduce(ad, cts[0]), x), x)]

    @staticmethod
    def _kernel(x, axis, keepdims):
        return np.asarray(wide_sum(x, axis, keepdims), x.dtype)


@graph.op
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over `axes`; floating point only (an integer mean has no integer
    answer). The mean of an empty axis is NaN, as in numpy.

        %r = graph.reduce_mean %x {keepdims = true} : (tensor<4x3xf32>) -> tensor<1x1xf32>
    """

    name = "graph.reduce_mean"
    traits = _TRAITS + (Linear(),)
    _partial = "mean"

    def transpose(self, ad: ADBuilder, cts: list) -> list:
        """The sum's transpose divided by the element count (divided first, on the smaller
        tensor; the count is read at run time where the reduced sizes are `?`)."""
        x = self.operand
        ct = ad.op("graph.div", cts[0], element_count(ad, x, self._reduced(), x))
        return [ad.as_type(_broadcast_like(ad, self._unreduce(ad, ct), x), x)]

    @classmethod
    def _check_dtype(cls, x: TensorSpec) -> None:
        require_float(x, "the operand")

    @staticmethod
    def _kernel(x, axis, keepdims):
        n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
        total = wide_sum(x, axis, keepdims)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(total / n, x.dtype)


class _ExtremumOp(ReduceOp):
    """reduce_max and reduce_min: the derivative flows to the elements equal to the result.

    With ties the cotangent is split equally among them (TensorFlow's and JAX's convention):
    the function is not differentiable there, and the even split is the average of the
    one-sided choices, keeps `vjp` the transpose of `jvp`, and makes `max(x, x, ...)` have
    derivative 1 like x itself. A slice holding a NaN matches nothing: no gradient flows
    into it (its tangent is NaN, as its value is)."""

    __slots__ = ()

    def _ties(self, ad: ADBuilder, keepdims: bool) -> tuple:
        """The i1 mask of the elements equal to their slice's extremum, and how many there
        are per slice (a float, reduced with `keepdims`)."""
        x = self.operand
        hit = ad.op("graph.cmp", x, self._unreduce(ad, self.result), predicate="eq")
        ones = ad.op("graph.where", hit, ad.scalar(1.0, x), ad.scalar(0.0, x))
        return hit, ad.op("graph.reduce_sum", ones, axes=list(self._reduced()),
                          keepdims=keepdims)

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        hit, count = self._ties(ad, True)
        share = ad.op("graph.div", self._unreduce(ad, cts[0]), count)
        x = self.operand
        return [ad.as_type(ad.op("graph.where", hit, share, ad.scalar(0.0, x)), x)]

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        (t,) = tangents
        if t is None:
            return [None]
        hit, count = self._ties(ad, self.props()["keepdims"])
        picked = ad.op("graph.where", hit, t, ad.scalar(0.0, t))
        total = ad.op("graph.reduce_sum", picked, axes=list(self._reduced()),
                      keepdims=self.props()["keepdims"])
        return [ad.as_type(ad.op("graph.div", total, count), self.result)]


@graph.op
class ReduceMaxOp(_ExtremumOp):
    """Maximum over `axes` (NaN if any element is NaN; an empty axis is an error at run time,
    since max has no identity).

        %r = graph.reduce_max %x {axes = array<i64: -1>} : (tensor<4x3xf32>) -> tensor<4xf32>
    """

    name = "graph.reduce_max"

    @staticmethod
    def _kernel(x, axis, keepdims):
        return np.max(x, axis=axis, keepdims=keepdims)


@graph.op
class ReduceMinOp(_ExtremumOp):
    """Minimum over `axes` (NaN if any element is NaN; an empty axis is an error at run time).

        %r = graph.reduce_min %x {axes = array<i64: 0, 1>} : (tensor<2x3x4xi32>) -> tensor<4xi32>
    """

    name = "graph.reduce_min"

    @staticmethod
    def _kernel(x, axis, keepdims):
        return np.min(x, axis=axis, keepdims=keepdims)


for _cls in (ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp):
    _cls.canonicalization_patterns = (ReduceUnitAxes(_cls.name),)


@graph.op
class ArgmaxOp(GraphOp):
    """Index of the maximum along `axis` (the first one on ties; the first NaN if any, as
    numpy), as i64.

        %r = graph.argmax %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
    """

    name = "graph.argmax"
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(default=-1)
    keepdims = BoolProp(default=False)
    traits = _TRAITS + (NonDifferentiable(),)       # piecewise constant integer indices
    canonicalization_patterns = (ArgmaxUnitAxis,)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        check_numeric(x)
        axis = checked_axis(props["axis"], x)
        return [TensorSpec(_reduced_shape(x, (axis,), props["keepdims"]), I64)]

    def evaluate(self, x):
        p = self.props()
        r = np.argmax(x, axis=p["axis"] % x.ndim, keepdims=p["keepdims"])
        return np.asarray(r, dtype=np.int64)

    def sharding_rule(self) -> ShardingRule:
        """The other axes parallel; the searched axis whole."""
        p, rank = self.props(), self.operand.type.rank
        axis = p["axis"] % rank
        out = [None if i == axis else f"d{i}" for i in range(rank)
               if p["keepdims"] or i != axis]
        return ShardingRule((tuple(f"d{i}" for i in range(rank)),), (tuple(out),))
