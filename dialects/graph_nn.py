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
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irkit.opdef import AnyTensor, Operand, Pure, Result
from irkit.dialects.graph import (
    Dim, FloatProp, GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, graph, is_float,
    norm_axis, same_dtype, unify_dim,
)

_TRAITS = (Pure(),)
_AXIS_NAMES = ("height", "width")


# ---------------------------------------------------------------------------------------------
# Shared shape rules
# ---------------------------------------------------------------------------------------------


def _short(cls) -> str:
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


# ---------------------------------------------------------------------------------------------
# graph.conv2d
# ---------------------------------------------------------------------------------------------


@graph.op
class Conv2dOp(GraphOp):
    """2-D cross-correlation (a deep-learning "convolution") over NCHW input with zero
    padding: out[n, o, i, j] = sum_{c, di, dj} xpad[n, c, i*sh + di, j*sw + dj] * w[o, c, di, dj].

        %y = graph.conv2d %x, %w {padding = array<i64: 1, 1>}
            : (tensor<64x1x28x28xf32>, tensor<8x1x3x3xf32>) -> tensor<64x8x28x28xf32>
    """

    name = "graph.conv2d"
    input = Operand(AnyTensor, doc="[N, C, H, W]")
    weight = Operand(AnyTensor, doc="[O, C, KH, KW]")
    result = Result(AnyTensor, doc="[N, O, OH, OW]")
    stride = IntsProp(default=(1, 1), doc="(sh, sw)")
    padding = IntsProp(default=(0, 0), doc="(ph, pw): zeros added on both sides")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        op = _short(cls)
        x, w = args
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
        return [TensorSpec((x.shape[0], w.shape[0], *spatial), dtype)]

    def evaluate(self, x, w):
        """im2col: the windows of the padded input, contracted with the weight over
        (C, KH, KW) by one tensordot (which reshapes the window view into the im2col matrix
        and calls BLAS), then moved from [N, OH, OW, O] to NCHW."""
        props = self.props()
        if x.shape[1] != w.shape[1]:
            raise ValueError(f"input has {x.shape[1]} channels but the weight expects "
                             f"{w.shape[1]}")
        ph, pw = props["padding"]
        if ph or pw:
            x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        if x.shape[2] < w.shape[2] or x.shape[3] < w.shape[3]:
            raise ValueError(f"kernel {w.shape[2:]} is larger than the padded input "
                             f"{x.shape[2:]}")
        win = _windows(x, w.shape[2:], props["stride"])           # [N, C, OH, OW, KH, KW]
        out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))   # [N, OH, OW, O]
        return np.ascontiguousarray(out.transpose(0, 3, 1, 2), dtype=x.dtype)


# ---------------------------------------------------------------------------------------------
# graph.max_pool2d, graph.avg_pool2d
# ---------------------------------------------------------------------------------------------


class _Pool2dOp(GraphOp):
    """Shared by max and average pooling: NCHW input, a (kh, kw) window moved by `stride`
    (default: the window size, so windows do not overlap), no padding."""

    __slots__ = ()
    input = Operand(AnyTensor, doc="[N, C, H, W]")
    result = Result(AnyTensor, doc="[N, C, OH, OW]")
    kernel = IntsProp(doc="(kh, kw)")
    stride = IntsProp(default=(), doc="(sh, sw); empty: the kernel size")
    traits = _TRAITS

    @classmethod
    def _window(cls, props) -> tuple[tuple[int, int], tuple[int, int]]:
        op = _short(cls)
        kernel = _pair(op, "kernel", props["kernel"], 1)
        stride = _pair(op, "stride", props["stride"], 1) if props["stride"] else kernel
        return kernel, stride

    @classmethod
    def infer(cls, args, props):
        op = _short(cls)
        (x,) = args
        _require_rank(x, 4, f"{op}: input", "N, C, H, W")
        _require_float(x, f"{op}: input")
        kernel, stride = cls._window(props)
        spatial = [_window_dim(op, _AXIS_NAMES[i], x.shape[2 + i], kernel[i], stride[i], 0)
                   for i in range(2)]
        return [x.with_shape((*x.shape[:2], *spatial))]

    def fold_identity(self, operands):
        """A 1x1 window moved by 1 selects each element once: `pool(x) -> x` (unless the
        result type is more refined than x's, which replacing would lose)."""
        kernel, stride = self._window(self.props())
        x = self.input
        if kernel == stride == (1, 1) and x.type is self.results[0].type:
            return [x]
        return None

    def evaluate(self, x):
        """Combine the kh*kw tap planes: tap (di, dj) of every window is the strided view
        x[:, :, di::sh, dj::sw] (cut to OH x OW), so kh*kw whole-array ufunc calls replace a
        reduction over a 6-D window view, whose short inner axes make numpy crawl (10-20x
        slower on an MNIST batch)."""
        kernel, stride = self._window(self.props())
        if x.shape[2] < kernel[0] or x.shape[3] < kernel[1]:
            raise ValueError(f"kernel {kernel} is larger than the input {x.shape[2:]}")
        oh, ow = ((x.shape[2 + i] - kernel[i]) // stride[i] + 1 for i in range(2))
        out = None
        for di in range(kernel[0]):
            for dj in range(kernel[1]):
                tap = x[:, :, di:di + stride[0] * (oh - 1) + 1:stride[0],
                        dj:dj + stride[1] * (ow - 1) + 1:stride[1]]
                out = np.array(tap) if out is None else self._combine(out, tap, out=out)
        return np.asarray(self._finish(out, kernel), dtype=x.dtype)

    @staticmethod
    def _finish(acc: np.ndarray, kernel: tuple) -> np.ndarray:
        return acc


@graph.op
class MaxPool2dOp(_Pool2dOp):
    """The maximum of each window (NaN if the window holds one).

        %y = graph.max_pool2d %x {kernel = array<i64: 2, 2>}
            : (tensor<64x8x28x28xf32>) -> tensor<64x8x14x14xf32>
    """

    name = "graph.max_pool2d"
    _combine = staticmethod(np.maximum)     # propagates NaN, as the docstring promises


@graph.op
class AvgPool2dOp(_Pool2dOp):
    """The mean of each window: its sum divided by kh*kw.

        %y = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>}
            : (tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32>
    """

    name = "graph.avg_pool2d"
    _combine = staticmethod(np.add)

    @staticmethod
    def _finish(acc, kernel):
        return acc / acc.dtype.type(kernel[0] * kernel[1])


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


@graph.op
class BatchNormOp(GraphOp):
    """Batch normalization in inference mode, per channel (axis 1) with running statistics:
    (x - mean) / sqrt(var + epsilon) * gamma + beta.

        %y = graph.batchnorm %x, %mean, %var, %gamma, %beta
            : (tensor<64x8x14x14xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
               tensor<8xf32>) -> tensor<64x8x14x14xf32>
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
        op = _short(cls)
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


@graph.op
class LayerNormOp(GraphOp):
    """Layer normalization over one axis: each slice along `axis` is shifted to mean 0 and
    scaled by 1/sqrt(biased variance + epsilon), then * gamma + beta (one entry per index of
    that axis).

        %y = graph.layernorm %x, %gamma, %beta
            : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
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
        op = _short(cls)
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
        centered = x - x.mean(axis=axis, keepdims=True)
        var = (centered * centered).mean(axis=axis, keepdims=True)
        y = centered / np.sqrt(var + eps) * _along(gamma, axis, x.ndim) \
            + _along(beta, axis, x.ndim)
        return np.asarray(y, dtype=x.dtype)
