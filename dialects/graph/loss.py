"""Softmax and the losses: `graph.softmax`, `graph.log_softmax`, `graph.cross_entropy`,
`graph.mse`.

These are the ops a classifier or a regression ends with. They are kept apart from the plain
reductions (`reduce.py`), whose axis and derivative helpers they import. Results have
the element type of the (float) input: softmax's the shape of its operand, a loss none (a
scalar).

Numerics: softmax and log_softmax subtract the row maximum before exponentiating (so large
logits do not overflow), and cross_entropy goes through log_softmax rather than
`log(softmax(x))` (so a confident wrong prediction costs a large finite loss, not inf).

Canonicalization keeps to rewrites that give equal values for every input: `log(softmax(x))`
becomes `log_softmax(x)` (more accurate, never less).

Derivatives (see `irkit.ad_rules`) sit on each op. The rules reuse the forward results
(softmax's y, log_softmax's exp(y)), and every cotangent or tangent they return has the exact
type of its operand or result.
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import ADBuilder
from irkit.sharding_rules import ShardingRule
from irkit.ir import Operation, Value
from irkit.opdef import AnyTensor, Operand, Pure, Result
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.dialects.graph.base import (
    GraphOp, IntProp, ShapeError, TensorSpec, broadcast_shapes, graph, is_float, is_int,
    require_float, same_dtype, unify_dim, wide_sum, checked_axis,
)
from irkit.dialects.graph.reduce import element_count, replace_with_op

_TRAITS = (Pure(),)


# ---------------------------------------------------------------------------------------------
# Softmax and log_softmax
# ---------------------------------------------------------------------------------------------


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Stable log-softmax along `axis`: `s - log(sum(exp(s)))` with `s = x - max(x)`.

    Shifting by the maximum makes the largest exponent e^0 = 1, so the sum neither overflows
    nor is zero. A row whose maximum is not finite is shifted by 0 instead (an all -inf row
    stays -inf - log(0) = NaN as in the plain formula, a +inf entry gives NaN, not a crash).
    """
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)    # initial: an empty axis
    m = np.where(np.isfinite(m), m, x.dtype.type(0))
    s = x - m
    return s - np.log(wide_sum(np.exp(s), axis, keepdims=True)).astype(x.dtype)


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
        checked_axis(props["axis"], x)
        return [x]

    def sharding_rule(self) -> ShardingRule:
        """Every axis parallel but the op's own, which each element of the result reads
        whole."""
        rank = self.operand.type.rank
        dims = tuple(f"d{i}" for i in range(rank))
        return ShardingRule((dims,), (dims,), {},
                            frozenset({f"d{self.props()['axis'] % rank}"}))

    def _sum(self, ad: ADBuilder, v: Value) -> Value:
        """v summed along the op's axis, kept as size 1 to broadcast back."""
        axis = checked_axis(self.props()["axis"], TensorSpec.of(v.type))
        return ad.op("graph.reduce_sum", v, axes=[axis], keepdims=True)


class LogOfSoftmax(RewritePattern):
    """`log(softmax(x, axis)) -> log_softmax(x, axis)`: equal in exact arithmetic, and the
    right side is never less accurate: softmax underflows to 0 (log gives -inf) for logits
    ~100 below the row maximum, where log_softmax keeps the finite `x - max - log(sum)`."""

    root = "graph.log"      # elementwise makes its unary op classes from a table

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        sm = op.operand.owner_op
        if not isinstance(sm, SoftmaxOp):
            return False
        replace_with_op(rewriter, op, LogSoftmaxOp.create(sm.operand, axis=sm.props()["axis"],
                        location=op.location))
        return True


@graph.op
class SoftmaxOp(_AxisFloatOp):
    """`exp(x) / sum(exp(x))` along `axis`, computed as exp(log_softmax(x)) so that large
    logits do not overflow.

        %p = graph.softmax %x : (tensor<?x10xf32>) -> tensor<?x10xf32>
    """

    name = "graph.softmax"
    canonicalization_patterns = (LogOfSoftmax,)

    def _apply_jacobian(self, ad: ADBuilder, v: Value) -> Value:
        """`J v = y * (v - sum(v * y))` along the axis, for the Jacobian `diag(y) - y y^T` of
        each slice; it is symmetric, so this is both the vjp and the jvp."""
        y = self.result
        dot = self._sum(ad, ad.op("graph.mul", v, y))
        return ad.op("graph.mul", y, ad.op("graph.sub", v, dot))

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        return [ad.as_type(self._apply_jacobian(ad, cts[0]), self.operand)]

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        (t,) = tangents
        return [None if t is None else ad.as_type(self._apply_jacobian(ad, t), self.result)]

    def evaluate(self, x):
        axis = self.props()["axis"] % x.ndim
        m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)    # an empty axis: empty
        e = np.exp(x - np.where(np.isfinite(m), m, x.dtype.type(0)))
        return np.asarray(e / wide_sum(e, axis, keepdims=True).astype(x.dtype), x.dtype)


@graph.op
class LogSoftmaxOp(_AxisFloatOp):
    """`x - log(sum(exp(x)))` along `axis`, shifted by the maximum (see `log_softmax`).

        %l = graph.log_softmax %x {axis = 0 : i64} : (tensor<5x3xf32>) -> tensor<5x3xf32>
    """

    name = "graph.log_softmax"

    # The Jacobian of each slice is `I - 1 p^T` with p = softmax(x) = exp(y): y reused, not
    # recomputed from x.

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        """`ct - p * sum(ct)` along the axis."""
        (ct,) = cts
        p = ad.op("graph.exp", self.result)
        g = ad.op("graph.sub", ct, ad.op("graph.mul", p, self._sum(ad, ct)))
        return [ad.as_type(g, self.operand)]

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        """`t - sum(p * t)` along the axis."""
        (t,) = tangents
        if t is None:
            return [None]
        p = ad.op("graph.exp", self.result)
        t = ad.op("graph.sub", t, self._sum(ad, ad.op("graph.mul", p, t)))
        return [ad.as_type(t, self.result)]

    def evaluate(self, x):
        return np.asarray(log_softmax(x, self.props()["axis"] % x.ndim), x.dtype)


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------


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
            picked = wide_sum(labels * lsm, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = -wide_sum(picked) / batch
        return np.asarray(loss, logits.dtype)

    # Derivatives. With B the batch size, p = softmax(logits) and l = log_softmax(logits):
    #   d loss / d logits = (p - onehot(labels)) / B                    (class indices)
    #   d loss / d logits = (p * rowsum(labels) - labels) / B           (float targets)
    #   d loss / d labels = -l / B                                      (float targets)
    # The row sum stays: the op does not assume that target rows sum to one.

    def sharding_rule(self) -> ShardingRule:
        """The batch a mean: with it split, each rank's loss over its rows, scaled by its
        share of the rows, is a partial sum of the loss (the global mean is the sum of the
        local means over the group size); the classes whole (a row's softmax reads them
        all)."""
        labels = ("b", "c") if self.labels.type.rank == 2 else ("b",)
        return ShardingRule((("b", "c"), labels), ((),), {"b": "mean"})

    def nondiff_operands(self) -> tuple:
        """Class indices select entries: the loss is piecewise constant in them."""
        return (1,) if is_int(self.labels.type.element) else ()

    def _batch(self, ad: ADBuilder) -> Value:
        return element_count(ad, self.logits, (0,), self.logits)

    def _logits_direction(self, ad: ADBuilder) -> Value:
        """B times the gradient with respect to the logits (see above)."""
        x, labels = self.logits, self.labels
        p = ad.op("graph.softmax", x, axis=1)
        if is_float(labels.type.element):
            rows = ad.op("graph.reduce_sum", labels, axes=[1], keepdims=True)
            return ad.op("graph.sub", ad.op("graph.mul", p, rows), labels)
        classes = x.type.shape[1]
        if classes is None:         # the class count the logits have at run time
            hot = ad.op("graph.one_hot", labels, [ad.op("graph.dim", x, axis=1)], depth=-1)
        else:
            hot = ad.op("graph.one_hot", labels, depth=classes)
        if hot.type.element is not x.type.element:
            hot = ad.op("graph.cast", hot, dtype=x.type.element)
        return ad.op("graph.sub", p, hot)

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        scale = ad.op("graph.div", cts[0], self._batch(ad))       # a scalar: divided once
        g_logits = ad.as_type(ad.op("graph.mul", self._logits_direction(ad), scale),
                            self.logits)
        if not is_float(self.labels.type.element):
            return [g_logits, None]
        lsm = ad.op("graph.log_softmax", self.logits, axis=1)
        return [g_logits, ad.as_type(ad.op("graph.mul", lsm, ad.op("graph.neg", scale)),
                                   self.labels)]

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        """The loss is a scalar: its tangent is the gradient dotted with the tangents."""
        t_logits, t_labels = tangents
        dot = None
        if t_logits is not None:
            dot = ad.op("graph.reduce_sum",
                        ad.op("graph.mul", self._logits_direction(ad), t_logits))
        if t_labels is not None:
            lsm = ad.op("graph.log_softmax", self.logits, axis=1)
            d = ad.op("graph.reduce_sum", ad.op("graph.mul", lsm, t_labels))
            dot = ad.op("graph.neg", d) if dot is None else ad.op("graph.sub", dot, d)
        return [None if dot is None else ad.op("graph.div", dot, self._batch(ad))]


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
        wide = np.float64 if np.result_type(pred, target).kind == "f" else None
        d = np.subtract(pred, target, dtype=wide)      # as compiled: the difference in f64
        with np.errstate(invalid="ignore", divide="ignore"):
            r = wide_sum(d * d) / d.size
        return np.asarray(r, pred.dtype)

    def sharding_rule(self) -> ShardingRule:
        """Every axis of the broadcast difference a mean (see cross_entropy's rule)."""
        out = broadcast_shapes(TensorSpec.of(self.pred.type), TensorSpec.of(self.target.type))
        rank = len(out)

        def dims(t) -> tuple:
            return tuple(None if d == 1 and out[i] != 1 else f"d{i}"
                         for i, d in enumerate(t.shape, rank - t.rank))
        return ShardingRule((dims(self.pred.type), dims(self.target.type)), ((),),
                            {f"d{i}": "mean" for i in range(rank)})

    # With d = pred - target (broadcast) and n its element count, d loss = 2/n sum(d * dd):
    # the gradient is 2 d / n, summed back over the axes each operand was broadcast along.

    def _diff(self, ad: ADBuilder) -> tuple:
        """d, and the function that scales a scalar v to 2 v / n."""
        d = ad.op("graph.sub", self.pred, self.target)
        n = element_count(ad, d, range(d.type.rank), d)
        return d, lambda v: ad.op("graph.div", ad.op("graph.mul", v, ad.scalar(2.0, d)), n)

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        d, scaled = self._diff(ad)
        g = ad.op("graph.mul", d, scaled(cts[0]))
        return [ad.as_type(ad.unbroadcast(g, self.pred), self.pred),
                ad.as_type(ad.op("graph.neg", ad.unbroadcast(g, self.target)), self.target)]

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        tp, tt = tangents
        if tp is None and tt is None:
            return [None]
        dd = tp if tt is None else ad.op("graph.neg", tt) if tp is None else \
            ad.op("graph.sub", tp, tt)
        d, scaled = self._diff(ad)
        return [scaled(ad.op("graph.reduce_sum", ad.op("graph.mul", d, dd)))]
