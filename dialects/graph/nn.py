"""Neural-network graph ops: 2-D convolution, pooling, batch and layer normalization.

These are the layers a CNN or a transformer block is written with. Each is one class with a
shape function (symbolic batch and channel dims flow through it; spatial sizes are computed
when static, `None` when not), verifier rules raised as `ShapeError`s, and numpy reference
semantics that are fast enough to train a small model in the interpreter:

- `conv2d` is im2col: a strided sliding-window view of the padded input (no copy) contracted
  with the weight by one `np.tensordot`, so the work is a single BLAS matrix product;
- pooling combines kh*kw strided views of the input, one per kernel tap, with one ufunc;
- the normalizations broadcast their per-channel / per-feature parameters over the input.

Layout is NCHW, as in PyTorch and ONNX: `x: [N, C, H, W]`, conv weight `[O, C, KH, KW]`.

**Derivatives.** Convolution and pooling differentiate into backward ops of their own, as in
TensorFlow, defined in `nn_grad.py` (with the table of which rule builds which) on the
window rules here (`ConvBaseOp`, `PoolWindowOp`). The normalizations differentiate into
elementwise and reduce ops.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irkit.ad_rules import Linear
from irkit.opdef import AnyTensor, Operand, Pure, Result, lookup_op
from irkit.dialects.graph.base import (
    Dim, FloatProp, GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, graph, is_float,
    norm_axis, same_dtype, unify_dim, wide_sum,
)

_TRAITS = (Pure(),)
LINEAR_TRAITS = (Pure(), Linear())
_AXIS_NAMES = ("height", "width")


# ---------------------------------------------------------------------------------------------
# Shared shape rules
# ---------------------------------------------------------------------------------------------


def short_name(cls) -> str:
    """`graph.conv2d` -> `conv2d`: messages speak the DSL's words, the verifier adds the op."""
    return cls.name.split(".", 1)[1]


def _require_rank(spec: TensorSpec, rank: int, what: str, layout: str) -> None:
    if spec.rank != rank:
        raise ShapeError(f"{what} must have rank {rank} ({layout}), got {spec}")


def _require_float(spec: TensorSpec, what: str) -> None:
    if not is_float(spec.dtype):
        raise ShapeError(f"{what} must have a floating-point element type, got {spec}")


def _pair(op: str, name: str, value: tuple, minimum: int) -> tuple[int, int]:
    """A (height, width) property: exactly two entries, each at least `minimum` (1 for
    kernels and strides, 0 for paddings)."""
    if len(value) != 2:
        raise ShapeError(f"{op}: {name} must have 2 entries (height, width), got "
                         f"{len(value)}")
    for v in value:
        if v < minimum:
            kind = "positive" if minimum == 1 else "non-negative"
            raise ShapeError(f"{op}: {name} entries must be {kind}, got {tuple(value)}")
    return value[0], value[1]


def _window_dim(op: str, axis: str, size: Dim, kernel: Dim, stride: int, pad: int) -> Dim:
    """The output size of a sliding window along one axis: (size + 2*pad - kernel)//stride + 1.

    Static sizes are computed and must give at least one window. An unknown or symbolic size
    (or kernel) gives an unknown output, except when the window maps the axis onto itself
    (stride 1 and 2*pad + 1 == kernel, a "same" convolution), which keeps the symbol.
    """
    if type(size) is int and type(kernel) is int:
        padded = size + 2 * pad
        if padded < kernel:
            padding = f" + 2*{pad} padding" if pad else ""
            raise ShapeError(f"{op}: kernel {axis} {kernel} is larger than the input {axis} "
                             f"{size}{padding}, so the output would be empty")
        return (padded - kernel) // stride + 1
    if type(kernel) is int and stride == 1 and 2 * pad + 1 == kernel:
        return size
    return None


def _windows(x: np.ndarray, kernel: tuple, stride: tuple) -> np.ndarray:
    """The strided [N, C, OH, OW, KH, KW] view of every window of `x` (no copy)."""
    win = sliding_window_view(x, kernel, axis=(2, 3))
    return win[:, :, ::stride[0], ::stride[1]]


def typed_like(ad, like, name: str, *operands, **props):
    """`ad.op(name, ...)` with its result typed exactly as `like`, the value whose derivative
    it is (an operand for a cotangent, the result for a tangent). A rule must return that
    type, and the shape function may know more than it says (a channel count read from the
    weight where the input's type has `?`); a less precise result type still verifies."""
    cls = lookup_op(name)
    op = cls.build(*operands, result_types=[like.type], location=ad.location,
                   **cls.py_props_to_attrs(props))
    ad.builder.insert(op)
    return op.results[0]


def _sum_as(ad, like, terms: list):
    """terms[0] + terms[1] + ..., typed as `like` (a lone term is returned as it is)."""
    total = terms[0]
    for t in terms[1:]:
        total = typed_like(ad, like, "graph.add", total, t)
    return total


def bilinear_jvp(ad, op, ta, tb) -> list:
    """The tangent of an op bilinear in its first two operands (any later one is read for
    its shape only): op(ta, b) + op(a, tb), a term dropped where its tangent is zero."""
    a, b, *rest = op.operands
    y, props = op.results[0], op.props()
    terms = []
    if ta is not None:
        terms.append(typed_like(ad, y, op.name, ta, b, *rest, **props))
    if tb is not None:
        terms.append(typed_like(ad, y, op.name, a, tb, *rest, **props))
    return [_sum_as(ad, y, terms) if terms else None]


# ---------------------------------------------------------------------------------------------
# graph.conv2d (its backward ops: nn_grad.py)
# ---------------------------------------------------------------------------------------------


class ConvBaseOp(GraphOp):
    """Shared by conv2d and its backward ops: the window's stride and zero padding."""

    __slots__ = ()
    stride = IntsProp(default=(1, 1), doc="(sh, sw)")
    padding = IntsProp(default=(0, 0), doc="(ph, pw): zeros added on both sides")
    traits = _TRAITS

    @classmethod
    def _conv(cls, x: TensorSpec, w: TensorSpec, props) -> TensorSpec:
        """The forward convolution's result spec for input `x` and weight `w`, with their
        rank, type and channel checks (messages name this op: `cls`)."""
        op = short_name(cls)
        _require_rank(x, 4, f"{op}: input", "N, C, H, W")
        _require_rank(w, 4, f"{op}: weight", "O, C, KH, KW")
        _require_float(x, f"{op}: input")
        dtype = same_dtype(x, w)
        stride = _pair(op, "stride", props["stride"], 1)
        padding = _pair(op, "padding", props["padding"], 0)
        try:
            unify_dim(x.shape[1], w.shape[1])
        except ValueError:
            raise ShapeError(f"{op}: input has {x.shape[1]} channels but the weight expects "
                             f"{w.shape[1]}") from None
        spatial = [_window_dim(op, _AXIS_NAMES[i], x.shape[2 + i], w.shape[2 + i], stride[i],
                               padding[i]) for i in range(2)]
        return TensorSpec((x.shape[0], w.shape[0], *spatial), dtype)

    def _padded_windows(self, x: np.ndarray, kernel: tuple) -> np.ndarray:
        """The [N, C, OH, OW, KH, KW] windows of x zero-padded by `padding`."""
        props = self.props()
        ph, pw = props["padding"]
        if ph or pw:
            x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        if x.shape[2] < kernel[0] or x.shape[3] < kernel[1]:
            raise ValueError(f"kernel {tuple(kernel)} is larger than the padded input "
                             f"{x.shape[2:]}")
        return _windows(x, tuple(kernel), props["stride"])


@graph.op
class Conv2dOp(ConvBaseOp):
    """2-D cross-correlation (a deep-learning "convolution") over NCHW input with zero
    padding: out[n, o, i, j] = sum_{c, di, dj} xpad[n, c, i*sh + di, j*sw + dj] * w[o, c, di, dj].

        %y = graph.conv2d %x, %w {padding = array<i64: 1, 1>}
            : (tensor<64x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<64x8x28x28xf32>

    Bilinear in (x, w): dx = conv2d_backprop_input(dy, w), dw = conv2d_backprop_filter(x, dy).
    """

    name = "graph.conv2d"
    input = Operand(AnyTensor, doc="[N, C, H, W]")
    weight = Operand(AnyTensor, doc="[O, C, KH, KW]")
    result = Result(AnyTensor, doc="[N, O, OH, OW]")

    @classmethod
    def infer(cls, args, props):
        return [cls._conv(*args, props)]

    def evaluate(self, x, w):
        """im2col: the windows of the padded input, contracted with the weight over
        (C, KH, KW) by one tensordot (which reshapes the window view into the im2col matrix
        and calls BLAS), then moved from [N, OH, OW, O] to NCHW."""
        if x.shape[1] != w.shape[1]:
            raise ValueError(f"input has {x.shape[1]} channels but the weight expects "
                             f"{w.shape[1]}")
        win = self._padded_windows(x, w.shape[2:])                # [N, C, OH, OW, KH, KW]
        out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))   # [N, OH, OW, O]
        return np.ascontiguousarray(out.transpose(0, 3, 1, 2), dtype=x.dtype)

    def vjp(self, ad, cts):
        (ct,) = cts
        x, w, props = self.input, self.weight, self.props()
        return [typed_like(ad, x, "graph.conv2d_backprop_input", ct, w, x, **props),
                typed_like(ad, w, "graph.conv2d_backprop_filter", x, ct, w, **props)]

    def jvp(self, ad, tangents):
        return bilinear_jvp(ad, self, *tangents)


# ---------------------------------------------------------------------------------------------
# Pooling: graph.max_pool2d, graph.avg_pool2d (their backward ops: nn_grad.py)
# ---------------------------------------------------------------------------------------------


def pooled_size(shape: tuple, kernel: tuple, stride: tuple) -> tuple[int, int]:
    """(OH, OW) of pooling an NCHW array of `shape`."""
    if shape[2] < kernel[0] or shape[3] < kernel[1]:
        raise ValueError(f"kernel {kernel} is larger than the input {tuple(shape[2:])}")
    return tuple((shape[2 + i] - kernel[i]) // stride[i] + 1 for i in range(2))


def window_taps(shape: tuple, kernel: tuple, stride: tuple) -> list[tuple]:
    """For each kernel tap (di, dj), row-major, the index of an NCHW array of `shape` that
    selects that tap of every window: x[:, :, di::sh, dj::sw] cut to OH x OW. Distinct
    windows give distinct elements of one tap, so `out[tap] += v` is a scatter-add."""
    oh, ow = pooled_size(shape, kernel, stride)
    return [(slice(None), slice(None), slice(di, di + stride[0] * (oh - 1) + 1, stride[0]),
             slice(dj, dj + stride[1] * (ow - 1) + 1, stride[1]))
            for di in range(kernel[0]) for dj in range(kernel[1])]


class PoolWindowOp(GraphOp):
    """Shared by the pooling ops and their backward ops: a (kh, kw) window moved by `stride`
    (default: the window size, so windows do not overlap), no padding."""

    __slots__ = ()
    kernel = IntsProp(doc="(kh, kw)")
    stride = IntsProp(default=(), doc="(sh, sw); empty: the kernel size")

    @classmethod
    def _window(cls, props) -> tuple[tuple[int, int], tuple[int, int]]:
        op = short_name(cls)
        kernel = _pair(op, "kernel", props["kernel"], 1)
        stride = _pair(op, "stride", props["stride"], 1) if props["stride"] else kernel
        return kernel, stride

    @classmethod
    def _pool(cls, x: TensorSpec, props) -> TensorSpec:
        """The forward pooling's result spec for input `x`."""
        op = short_name(cls)
        _require_rank(x, 4, f"{op}: input", "N, C, H, W")
        _require_float(x, f"{op}: input")
        kernel, stride = cls._window(props)
        spatial = [_window_dim(op, _AXIS_NAMES[i], x.shape[2 + i], kernel[i], stride[i], 0)
                   for i in range(2)]
        return x.with_shape((*x.shape[:2], *spatial))

    def _taps_of(self, shape: tuple) -> list[tuple]:
        return window_taps(shape, *self._window(self.props()))

    def _identity_on(self, operand):
        """1x1 windows moved by 1 make the pooling and its backward ops the identity on
        `operand` (x, or the cotangent): [it] if it can stand for the result (unless the
        result type is more refined than its, which replacing would lose), else None."""
        kernel, stride = self._window(self.props())
        if kernel == stride == (1, 1) and operand.type is self.results[0].type:
            return [operand]
        return None


class _Pool2dOp(PoolWindowOp):
    """Shared by max and average pooling: NCHW input, pooled window by window."""

    __slots__ = ()
    input = Operand(AnyTensor, doc="[N, C, H, W]")
    result = Result(AnyTensor, doc="[N, C, OH, OW]")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        return [cls._pool(args[0], props)]

    def fold_identity(self, operands):
        """A 1x1 window moved by 1 selects each element once: `pool(x) -> x`."""
        return self._identity_on(self.input)

    def evaluate(self, x):
        """Combine the kh*kw tap planes: tap (di, dj) of every window is the strided view
        x[:, :, di::sh, dj::sw] (cut to OH x OW), so kh*kw whole-array ufunc calls replace a
        reduction over a 6-D window view, whose short inner axes make numpy crawl (10-20x
        slower on an MNIST batch)."""
        kernel, _ = self._window(self.props())
        out = None
        for tap in self._taps_of(x.shape):
            out = np.array(x[tap]) if out is None else self._combine(out, x[tap], out=out)
        return np.asarray(self._finish(out, kernel), dtype=x.dtype)

    @staticmethod
    def _finish(acc: np.ndarray, kernel: tuple) -> np.ndarray:
        return acc


@graph.op
class MaxPool2dOp(_Pool2dOp):
    """The maximum of each window (NaN if the window holds one).

        %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>}
            : (tensor<64x8x28x28xf32>) -> tensor<64x8x14x14xf32>

    Its derivative flows through each window's first maximum: max_pool2d_grad in reverse
    mode, max_pool2d_grad_grad in forward mode.
    """

    name = "graph.max_pool2d"
    _combine = staticmethod(np.maximum)     # propagates NaN, as the docstring promises

    def vjp(self, ad, cts):
        x = self.input
        return [typed_like(ad, x, "graph.max_pool2d_grad", x, cts[0], **self.props())]

    def jvp(self, ad, tangents):
        (t,) = tangents
        return [typed_like(ad, self.results[0], "graph.max_pool2d_grad_grad", self.input, t,
                           **self.props())]


@graph.op
class AvgPool2dOp(_Pool2dOp):
    """The mean of each window: its sum divided by kh*kw.

        %y = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>}
            : (tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32>

    Linear; its transpose is avg_pool2d_grad.
    """

    name = "graph.avg_pool2d"
    traits = LINEAR_TRAITS
    _combine = staticmethod(np.add)

    @staticmethod
    def _finish(acc, kernel):
        return acc / acc.dtype.type(kernel[0] * kernel[1])

    def transpose(self, ad, cts):
        x = self.input
        return [typed_like(ad, x, "graph.avg_pool2d_grad", cts[0], x, **self.props())]


# ---------------------------------------------------------------------------------------------
# graph.batchnorm, graph.layernorm
# ---------------------------------------------------------------------------------------------


def _check_epsilon(op: str, eps: float) -> None:
    if not eps >= 0.0:                  # also rejects NaN
        raise ShapeError(f"{op}: epsilon must be non-negative, got {eps}")


def _check_params(op: str, x: TensorSpec, params: list[tuple[str, TensorSpec]], axis: int,
                  what: str) -> tuple:
    """Each parameter is a vector with one entry per index of `x`'s `axis`; returns `x`'s
    shape with that axis unified with the parameters' length (which may be more precise)."""
    shape = list(x.shape)
    for name, p in params:
        _require_float(p, f"{op}: {name}")
        if p.rank != 1:
            raise ShapeError(f"{op}: {name} must be a vector with one entry per {what} of "
                             f"{x}, got {p}")
        try:
            shape[axis] = unify_dim(shape[axis], p.shape[0])
        except ValueError:
            raise ShapeError(f"{op}: {name} has {p.shape[0]} entries but the input has "
                             f"{x.shape[axis]} {what}s") from None
    same_dtype(x, *(p for _, p in params))
    return tuple(shape)


def _along(v: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """The vector `v` shaped to broadcast along `axis` of a rank-`rank` array."""
    shape = [1] * rank
    shape[axis] = v.shape[0]
    return v.reshape(shape)


# The derivative rules of the normalizations, in graph ops. A parameter vector meets the input
# through broadcasting along one axis, so its cotangent is a sum over all the other axes.


def _op(ad, name: str, *operands):
    return ad.op(f"graph.{name}", *operands)


def _along_axis(ad, v, axis: int, rank: int):
    """The [D] vector `v` as a value that broadcasts along `axis` of a rank-`rank` tensor:
    trailing size-1 axes added by a reshape, whose one -1 keeps a `?` size."""
    trailing = rank - 1 - axis
    return ad.op("graph.reshape", v, shape=[-1] + [1] * trailing) if trailing else v


def _sum_except(ad, v, axis: int, like):
    """`v` summed over every axis but `axis`, to a vector typed as `like`: the cotangent of
    `like`, a vector broadcast along that axis."""
    axes = [a for a in range(v.type.rank) if a != axis]
    if axes:
        return typed_like(ad, like, "graph.reduce_sum", v, axes=axes)
    return v if v.type is like.type else typed_like(ad, like, "graph.reshape", v, shape=[-1])


def _tangent(ad, full: list, vectors: list, axis: int, result):
    """The sum of tangent terms typed as the result (`full`) and of vectors along `axis`.
    Without a full term the vectors are added to zeros of the result, so that the tangent
    has the result's shape and not the vector's; None when there is no term at all."""
    if vectors:
        v = _along_axis(ad, ad.sum(vectors), axis, result.type.rank)
        full = full + [v] if full else [ad.zeros_like(result), v]
    return _sum_as(ad, result, full) if full else None


@graph.op
class BatchNormOp(GraphOp):
    """Batch normalization in inference mode, per channel (axis 1) with running statistics:
    (x - mean) / sqrt(var + epsilon) * gamma + beta.

        %y = graph.batchnorm %x, %mean, %var, %gamma, %beta
            : (tensor<64x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
               tensor<8xf32>) -> tensor<64x8x14x14xf32>

    Differentiable in all five operands (the statistics too: they may be computed in the
    graph), by elementwise and reduce ops.
    """

    name = "graph.batchnorm"
    input = Operand(AnyTensor, doc="[N, C, ...]")
    mean = Operand(AnyTensor, doc="[C]")
    var = Operand(AnyTensor, doc="[C]")
    gamma = Operand(AnyTensor, doc="[C]: scale")
    beta = Operand(AnyTensor, doc="[C]: shift")
    result = Result(AnyTensor)
    epsilon = FloatProp(default=1e-5, doc="added to the variance before the square root")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        op = short_name(cls)
        x, *params = args
        if x.rank < 2:
            raise ShapeError(f"{op}: input must have rank at least 2 (N, C, ...), got {x}")
        _require_float(x, f"{op}: input")
        _check_epsilon(op, props["epsilon"])
        shape = _check_params(op, x, list(zip(("mean", "var", "gamma", "beta"), params)), 1,
                              "channel")
        return [x.with_shape(shape)]

    def evaluate(self, x, mean, var, gamma, beta):
        eps = x.dtype.type(self.props()["epsilon"])
        mean, var, gamma, beta = (_along(v, 1, x.ndim) for v in (mean, var, gamma, beta))
        scale = gamma / np.sqrt(var + eps)
        return np.asarray((x - mean) * scale + beta, dtype=x.dtype)

    def _factors(self, ad) -> tuple:
        """Per channel: r = 1/sqrt(var + eps), s = gamma * r (the scale), and
        k = -gamma * r^2 / 2 (so that d s / d var = k * r)."""
        eps = ad.scalar(self.props()["epsilon"], self.var)
        r = _op(ad, "rsqrt", _op(ad, "add", self.var, eps))
        s = _op(ad, "mul", self.gamma, r)
        return r, s, _op(ad, "mul", s, _op(ad, "mul", r, ad.scalar(-0.5, r)))

    def vjp(self, ad, cts):
        """With c = x - mean and sums over every axis but 1: dx = ct * s, dmean = -sum(ct) *
        s, dgamma = sum(ct * c) * r, dvar = sum(ct * c) * k * r = dgamma * k, dbeta =
        sum(ct)."""
        (ct,) = cts
        x, mean, var, gamma, beta = self.operands
        rank = ct.type.rank
        r, s, k = self._factors(ad)
        c = _op(ad, "sub", x, _along_axis(ad, mean, 1, rank))
        d_beta = _sum_except(ad, ct, 1, beta)
        d_gamma = typed_like(ad, gamma, "graph.mul",
                             _sum_except(ad, _op(ad, "mul", ct, c), 1, gamma), r)
        return [typed_like(ad, x, "graph.mul", ct, _along_axis(ad, s, 1, rank)),
                typed_like(ad, mean, "graph.neg", _op(ad, "mul", d_beta, s)),
                typed_like(ad, var, "graph.mul", d_gamma, k), d_gamma, d_beta]

    def jvp(self, ad, tangents):
        """dy = dx * s + c * ds + (dbeta - dmean * s), ds = dgamma * r + dvar * k * r."""
        t_x, t_mean, t_var, t_gamma, t_beta = tangents
        y, rank = self.results[0], self.input.type.rank
        r, s, k = self._factors(ad)
        full, vectors, ds = [], [], []
        if t_x is not None:
            full.append(typed_like(ad, y, "graph.mul", t_x, _along_axis(ad, s, 1, rank)))
        if t_gamma is not None:
            ds.append(_op(ad, "mul", t_gamma, r))
        if t_var is not None:
            ds.append(_op(ad, "mul", _op(ad, "mul", t_var, k), r))
        if ds:
            c = _op(ad, "sub", self.input, _along_axis(ad, self.mean, 1, rank))
            full.append(typed_like(ad, y, "graph.mul", c, _along_axis(ad, ad.sum(ds), 1, rank)))
        if t_mean is not None:
            vectors.append(_op(ad, "neg", _op(ad, "mul", t_mean, s)))
        if t_beta is not None:
            vectors.append(t_beta)
        return [_tangent(ad, full, vectors, 1, y)]


@graph.op
class LayerNormOp(GraphOp):
    """Layer normalization over one axis: each slice along `axis` is shifted to mean 0 and
    scaled by 1/sqrt(biased variance + epsilon), then * gamma + beta (one entry per index of
    that axis).

        %y = graph.layernorm %x, %gamma, %beta
            : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>

    Differentiable in all three operands, by elementwise and reduce ops.
    """

    name = "graph.layernorm"
    input = Operand(AnyTensor)
    gamma = Operand(AnyTensor, doc="[D]: scale, D = input.shape[axis]")
    beta = Operand(AnyTensor, doc="[D]: shift")
    result = Result(AnyTensor)
    axis = IntProp(default=-1, doc="the normalized axis")
    epsilon = FloatProp(default=1e-5, doc="added to the variance before the square root")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        op = short_name(cls)
        x, gamma, beta = args
        if x.rank < 1:
            raise ShapeError(f"{op}: input must have rank at least 1, got {x}")
        _require_float(x, f"{op}: input")
        axis = norm_axis(props["axis"], x.rank)
        _check_epsilon(op, props["epsilon"])
        shape = _check_params(op, x, [("gamma", gamma), ("beta", beta)], axis, "feature")
        return [x.with_shape(shape)]

    def evaluate(self, x, gamma, beta):
        """Two passes (mean, then the mean of squared deviations) rather than E[x^2] - E[x]^2,
        which cancels catastrophically in float32 when the mean is large."""
        props = self.props()
        axis = norm_axis(props["axis"], x.ndim)
        eps = x.dtype.type(props["epsilon"])
        n = x.shape[axis]
        with np.errstate(invalid="ignore", divide="ignore"):   # float sums wide, as compiled
            mean = (wide_sum(x, axis, keepdims=True) / n).astype(x.dtype)
            centered = x - mean
            var = (wide_sum(centered * centered, axis, keepdims=True) / n).astype(x.dtype)
        y = centered / np.sqrt(var + eps) * _along(gamma, axis, x.ndim) \
            + _along(beta, axis, x.ndim)
        return np.asarray(y, dtype=x.dtype)

    def _normalized(self, ad, axis: int) -> tuple:
        """xh = (x - mean) * rstd and rstd = 1/sqrt(var + eps), as `evaluate` has them."""
        x = self.input
        c = _op(ad, "sub", x, ad.op("graph.reduce_mean", x, axes=[axis], keepdims=True))
        var = ad.op("graph.reduce_mean", _op(ad, "mul", c, c), axes=[axis], keepdims=True)
        rstd = _op(ad, "rsqrt", _op(ad, "add", var, ad.scalar(self.props()["epsilon"], x)))
        return _op(ad, "mul", c, rstd), rstd

    @staticmethod
    def _normalize_derivative(ad, g, xh, rstd, axis: int, like):
        """rstd * (g - mean(g) - xh * mean(xh * g)), means along the axis, typed as `like`:
        the Jacobian of x -> xh applied to g. It is symmetric, so this is its vjp and jvp."""
        def mean(v):
            return ad.op("graph.reduce_mean", v, axes=[axis], keepdims=True)
        centered = _op(ad, "sub", g, mean(g))
        inner = _op(ad, "sub", centered, _op(ad, "mul", xh, mean(_op(ad, "mul", xh, g))))
        return typed_like(ad, like, "graph.mul", inner, rstd)

    def vjp(self, ad, cts):
        """dx = J^T (ct * gamma) with J the normalization's Jacobian, dgamma = sum(ct * xh),
        dbeta = sum(ct) (sums over every axis but the normalized one)."""
        (ct,) = cts
        axis = norm_axis(self.props()["axis"], ct.type.rank)
        xh, rstd = self._normalized(ad, axis)
        x, gamma, beta = self.operands
        g = _op(ad, "mul", ct, _along_axis(ad, gamma, axis, ct.type.rank))
        return [self._normalize_derivative(ad, g, xh, rstd, axis, x),
                _sum_except(ad, _op(ad, "mul", ct, xh), axis, gamma),
                _sum_except(ad, ct, axis, beta)]

    def jvp(self, ad, tangents):
        """dy = (J dx) * gamma + xh * dgamma + dbeta."""
        t_x, t_gamma, t_beta = tangents
        y, rank = self.results[0], self.input.type.rank
        axis = norm_axis(self.props()["axis"], rank)
        full, vectors = [], []
        if t_x is not None or t_gamma is not None:
            xh, rstd = self._normalized(ad, axis)
        if t_x is not None:
            dxh = self._normalize_derivative(ad, t_x, xh, rstd, axis, y)
            full.append(typed_like(ad, y, "graph.mul", dxh,
                                   _along_axis(ad, self.gamma, axis, rank)))
        if t_gamma is not None:
            full.append(typed_like(ad, y, "graph.mul", xh, _along_axis(ad, t_gamma, axis, rank)))
        if t_beta is not None:
            vectors.append(t_beta)
        return [_tangent(ad, full, vectors, axis, y)]
