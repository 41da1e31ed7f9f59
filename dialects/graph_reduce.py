"""Graph ops that combine many elements into fewer: reductions, argmax, softmax, losses, matmul.

Every op here follows numpy's reference semantics and keeps the operand's element type (an
f32 sum is an f32 tensor, an i8 sum wraps in i8: no widening behind the user's back), except
`argmax`, whose result holds i64 indices.

Shape rules are written once, in `infer`, over dims that may be ints, None (`?`) or DSL
symbols (`N`); they only ever compare dims through `unify_dim`/`broadcast_dim`, so
`f32[N, 784] x f32[784, 10]` is `f32[N, 10]` and `f32[N, 784] x f32[M, 10]` is an error that
names both shapes.

Numerics: softmax and log_softmax subtract the row maximum before exponentiating (so large
logits do not overflow), and cross_entropy goes through log_softmax rather than
`log(softmax(x))` (so a confident wrong prediction costs a large finite loss, not inf).

Canonicalization keeps to rewrites that give equal values for every input, inf and NaN
included: reducing axes of size 1 is the identity (or a reshape that drops them), argmax over
an axis of size 1 is 0, and `log(softmax(x))` becomes `log_softmax(x)` (more accurate, never
less). Tempting algebra that is *not* exact is left out and said so next to the op (`matmul` by an
identity or a zero matrix: `inf * 0` is NaN).
"""

from __future__ import annotations

import numpy as np

from irkit.ir import Operation
from irkit.opdef import AnyTensor, Operand, Pure, Result, registered_ops
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import I1, I64, RankedTensorType
from irkit.dialects.graph import (
    BoolProp, ConstantOp, GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, broadcast_dim,
    broadcast_shapes, graph, is_float, is_int, require_float, same_dtype, unify_dim,
)

_TRAITS = (Pure(),)


# ---------------------------------------------------------------------------------------------
# Axis helpers
# ---------------------------------------------------------------------------------------------


def _axis(axis: int, spec: TensorSpec) -> int:
    """`axis` of `spec` in [0, rank). Unlike `norm_axis`, a scalar has no axis at all: numpy
    rejects `axis=0` on a 0-d array, and an op that works along an axis needs one."""
    if not -spec.rank <= axis < spec.rank:
        raise ShapeError(f"axis {axis} is out of range for rank {spec.rank}")
    return axis % spec.rank


def _axes(axes: tuple, spec: TensorSpec) -> tuple:
    """The sorted, non-negative axes a reduction works on; `()` means all of them."""
    if not axes:
        return tuple(range(spec.rank))
    out = [_axis(a, spec) for a in axes]
    for i, a in enumerate(out):
        if a in out[:i]:
            raise ShapeError(f"axes {list(axes)} name axis {a} twice")
    return tuple(sorted(out))


def _reduced_shape(spec: TensorSpec, axes: tuple, keepdims: bool) -> tuple:
    """The shape left after reducing `axes`: those dims dropped, or kept as 1."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(spec.shape))
    return tuple(d for i, d in enumerate(spec.shape) if i not in axes)


def _check_numeric(spec: TensorSpec) -> None:
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


def _replace_with(rewriter: PatternRewriter, op: Operation, new: Operation) -> None:
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
    _replace_with(rewriter, op, new)
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
        if not _unit_axes_only(op, _axes(op.props()["axes"], TensorSpec.of(x.type))):
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
        axis = _axis(op.props()["axis"], TensorSpec.of(x.type))
        t = op.result.type
        if x.type.shape[axis] != 1 or not t.has_static_shape:
            return False
        _replace_with(rewriter, op, ConstantOp.create(np.zeros(t.shape, np.int64), I64,
                                                      location=op.location))
        return True


class LogOfSoftmax(RewritePattern):
    """`log(softmax(x, axis)) -> log_softmax(x, axis)`: equal in exact arithmetic, and the
    right side is never less accurate: softmax underflows to 0 (log gives -inf) for logits
    ~100 below the row maximum, where log_softmax keeps the finite `x - max - log(sum)`."""

    root = "graph.log"      # graph_elementwise makes its unary op classes from a table

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        sm = op.operand.owner_op
        if not isinstance(sm, SoftmaxOp):
            return False
        _replace_with(rewriter, op, LogSoftmaxOp.create(sm.operand, axis=sm.props()["axis"],
                                                        location=op.location))
        return True


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

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        cls._check_dtype(x)
        axes = _axes(props["axes"], x)
        return [x.with_shape(_reduced_shape(x, axes, props["keepdims"]))]

    @classmethod
    def _check_dtype(cls, x: TensorSpec) -> None:
        _check_numeric(x)

    def evaluate(self, x):
        p = self.props()
        r = self._kernel(x, axis=_np_axes(p["axes"], x.ndim), keepdims=p["keepdims"])
        return np.asarray(r, dtype=x.dtype)


@graph.op
class ReduceSumOp(ReduceOp):
    """Sum over `axes`, in the operand's element type (integers wrap).

        %r = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x10xf32>) -> tensor<?xf32>
    """

    name = "graph.reduce_sum"

    @staticmethod
    def _kernel(x, axis, keepdims):
        return np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


@graph.op
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over `axes`; floating point only (an integer mean has no integer
    answer). The mean of an empty axis is NaN, as in numpy.

        %r = graph.reduce_mean %x {keepdims = true} : (tensor<4x3xf32>) -> tensor<1x1xf32>
    """

    name = "graph.reduce_mean"

    @classmethod
    def _check_dtype(cls, x: TensorSpec) -> None:
        require_float(x, "the operand")

    @staticmethod
    def _kernel(x, axis, keepdims):
        n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
        total = np.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / x.dtype.type(n)


@graph.op
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes` (NaN if any element is NaN; an empty axis is an error at run time,
    since max has no identity).

        %r = graph.reduce_max %x {axes = array<i64: -1>} : (tensor<4x3xf32>) -> tensor<4xf32>
    """

    name = "graph.reduce_max"

    @staticmethod
    def _kernel(x, axis, keepdims):
        return np.max(x, axis=axis, keepdims=keepdims)


@graph.op
class ReduceMinOp(ReduceOp):
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
    traits = _TRAITS
    canonicalization_patterns = (ArgmaxUnitAxis,)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        _check_numeric(x)
        axis = _axis(props["axis"], x)
        return [TensorSpec(_reduced_shape(x, (axis,), props["keepdims"]), I64)]

    def evaluate(self, x):
        p = self.props()
        r = np.argmax(x, axis=p["axis"] % x.ndim, keepdims=p["keepdims"])
        return np.asarray(r, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Softmax and losses
# ---------------------------------------------------------------------------------------------


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Stable log-softmax along `axis`: `s - log(sum(exp(s)))` with `s = x - max(x)`.

    Shifting by the maximum makes the largest exponent e^0 = 1, so the sum neither overflows
    nor is zero. A row whose maximum is not finite is shifted by 0 instead (an all -inf row
    stays -inf - log(0) = NaN as in the plain formula, a +inf entry gives NaN, not a crash).
    """
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, x.dtype.type(0))
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True, dtype=x.dtype))


class _AxisFloatOp(GraphOp):
    """A float -> float op along one axis, shape preserved (softmax, log_softmax)."""

    __slots__ = ()
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(default=-1)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        require_float(x, "the operand")
        _axis(props["axis"], x)
        return [x]


@graph.op
class SoftmaxOp(_AxisFloatOp):
    """`exp(x) / sum(exp(x))` along `axis`, computed as exp(log_softmax(x)) so that large
    logits do not overflow.

        %p = graph.softmax %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
    """

    name = "graph.softmax"
    canonicalization_patterns = (LogOfSoftmax,)

    def evaluate(self, x):
        axis = self.props()["axis"] % x.ndim
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - np.where(np.isfinite(m), m, x.dtype.type(0)))
        return np.asarray(e / np.sum(e, axis=axis, keepdims=True, dtype=x.dtype), x.dtype)


@graph.op
class LogSoftmaxOp(_AxisFloatOp):
    """`x - log(sum(exp(x)))` along `axis`, shifted by the maximum (see `log_softmax`).

        %l = graph.log_softmax %x {axis = 0 : i64} : (tensor<5x3xf32>) -> tensor<5x3xf32>
    """

    name = "graph.log_softmax"

    def evaluate(self, x):
        return np.asarray(log_softmax(x, self.props()["axis"] % x.ndim), x.dtype)


@graph.op
class CrossEntropyOp(GraphOp):
    """Mean over the batch of the negative log-likelihood of the labels under
    softmax(logits): `-mean_b log_softmax(logits)[b, label_b]`.

    `labels` is either integer class indices `[B]` (each in [0, C), checked at run time) or
    float targets `[B, C]` of the logits' type (one-hot rows or probabilities), for which the
    row loss is `-sum_c labels[b, c] * log_softmax(logits)[b, c]`.

        %l = graph.cross_entropy %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
    """

    name = "graph.cross_entropy"
    logits = Operand(AnyTensor)
    labels = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        logits, labels = args
        require_float(logits, "the logits")
        if logits.rank != 2:
            raise ShapeError(f"logits must be [batch, classes], got {logits}")
        if is_int(labels.dtype):
            want = 1
        elif is_float(labels.dtype):
            same_dtype(logits, labels)
            want = 2
        else:
            raise ShapeError(f"labels must be integer class indices or float targets, "
                             f"got {labels}")
        if labels.rank != want:
            kind = "integer labels must be [batch]" if want == 1 else \
                "float labels must be [batch, classes]"
            raise ShapeError(f"{kind}, got {labels} for logits {logits}")
        for what, a, b in zip(("batch", "class"), logits.shape, labels.shape):
            try:
                unify_dim(a, b)
            except ValueError:
                raise ShapeError(f"{what} sizes of logits {logits} and labels {labels} "
                                 f"differ") from None
        return [TensorSpec((), logits.dtype)]

    def evaluate(self, logits, labels):
        lsm = log_softmax(logits, 1)
        batch, classes = logits.shape
        if labels.ndim == 1:
            bad = (labels < 0) | (labels >= classes)
            if bad.any():
                raise ValueError(f"label {labels[bad][0]} is out of range for {classes} "
                                 f"classes")
            picked = lsm[np.arange(batch), labels.astype(np.intp)]
        else:
            picked = np.sum(labels * lsm, axis=1, dtype=logits.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = -np.sum(picked, dtype=logits.dtype) / logits.dtype.type(batch)
        return np.asarray(loss, logits.dtype)


@graph.op
class MseOp(GraphOp):
    """Mean squared error `mean((pred - target)^2)` over every element of the broadcast
    difference, as a scalar.

        %loss = graph.mse %pred, %target : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
    """

    name = "graph.mse"
    pred = Operand(AnyTensor)
    target = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        pred, target = args
        t = same_dtype(pred, target)
        require_float(pred, "the operands")
        broadcast_shapes(pred, target)
        return [TensorSpec((), t)]

    def evaluate(self, pred, target):
        d = pred - target
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.sum(d * d, dtype=d.dtype) / d.dtype.type(d.size)
        return np.asarray(r, pred.dtype)


# ---------------------------------------------------------------------------------------------
# Matrix product
# ---------------------------------------------------------------------------------------------


@graph.op
class MatmulOp(GraphOp):
    """Matrix product with numpy.matmul's rules: `[..., M, K] x [..., K, N] -> [..., M, N]`
    with the batch dims `...` broadcast; a 1-D operand is a row (lhs) or column (rhs) vector
    whose axis is dropped from the result, so vector x vector is a scalar.

    No algebraic canonicalization: `x @ I -> x` and `x @ 0 -> 0` are wrong when x holds inf
    or NaN (`inf * 0` is NaN, which the product would spread along the row).

        %y = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
    """

    name = "graph.matmul"
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        a, b = args
        t = same_dtype(a, b)
        _check_numeric(a)
        if a.rank == 0 or b.rank == 0:
            raise ShapeError(f"cannot multiply {a} by {b}: matmul needs operands of rank >= 1")
        # Promote vectors to matrices as numpy does, remembering which axes to drop again.
        lhs = a.shape if a.rank > 1 else (1,) + a.shape
        rhs = b.shape if b.rank > 1 else b.shape + (1,)
        try:
            unify_dim(lhs[-1], rhs[-2])
        except ValueError:
            raise ShapeError(f"cannot multiply {a} by {b}: inner dimensions {lhs[-1]} and "
                             f"{rhs[-2]} differ") from None
        lb, rb = lhs[:-2], rhs[:-2]
        n = max(len(lb), len(rb))
        batch = [1] * n
        for dims in (lb, rb):
            for i, d in enumerate(dims, n - len(dims)):
                try:
                    batch[i] = broadcast_dim(batch[i], d)
                except ValueError:
                    raise ShapeError(f"cannot multiply {a} by {b}: batch dimensions "
                                     f"{list(lb)} and {list(rb)} do not broadcast") from None
        out = tuple(batch) + ((lhs[-2],) if a.rank > 1 else ()) + \
            ((rhs[-1],) if b.rank > 1 else ())
        return [TensorSpec(out, t)]

    def evaluate(self, a, b):
        return np.asarray(np.matmul(a, b), dtype=a.dtype)
