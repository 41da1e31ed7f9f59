"""The backward ops of convolution and pooling: `graph.conv2d_backprop_input`,
`graph.conv2d_backprop_filter`, `graph.max_pool2d_grad`, `graph.max_pool2d_grad_grad`,
`graph.avg_pool2d_grad`.

They exist for the derivatives of `nn.py`'s ops and sit apart from them so that the
forward layers read on their own. They build on that module's window rules (`ConvBaseOp`,
`PoolWindowOp`, whose checks name the op they run for) and rule helpers. The forward ops'
rules build these by name (`"graph.conv2d_backprop_input"`), so nothing there depends on this
module.

Convolution and pooling get backward ops of their own, as in TensorFlow
(`Conv2DBackpropInput`, `Conv2DBackpropFilter`, `MaxPoolGrad`, `MaxPoolGradGrad`,
`AvgPoolGrad`): written with elementwise ops they would be a scatter per kernel tap. The set
is closed under differentiation, so gradients of gradients stay within it:

    conv2d(x, w)                     bilinear  -> backprop_input(dy, w), backprop_filter(x, dy)
    conv2d_backprop_input(dy, w)     bilinear  -> conv2d(g, w), backprop_filter(g, dy)
    conv2d_backprop_filter(x, dy)    bilinear  -> backprop_input(dy, g), conv2d(x, g)
    avg_pool2d(x) / avg_pool2d_grad  linear, transposes of each other
    max_pool2d(x)                    -> max_pool2d_grad (vjp), max_pool2d_grad_grad (jvp)
    max_pool2d_grad(x, dy)           linear in dy; its transpose is max_pool2d_grad_grad

A backward op whose result has the forward input's shape takes that input as an extra
operand whose values are never read (nor differentiated): with a stride the input size is not
a function of the output size, since (H + 2p - KH) // s + 1 forgets H mod s, and an operand
carries the size even where it is `?`.
"""

from __future__ import annotations

import numpy as np

from irkit.opdef import AnyTensor, Operand, Result
from irkit.dialects.graph.base import ShapeError, TensorSpec, graph, same_dtype, unify_dim
from irkit.dialects.graph.nn import (
    LINEAR_TRAITS, ConvBaseOp, PoolWindowOp, bilinear_jvp, pooled_size, short_name, typed_like,
    window_taps,
)


# ---------------------------------------------------------------------------------------------
# Shared checks
# ---------------------------------------------------------------------------------------------


def _unify(op: str, what: str, got: TensorSpec, want: TensorSpec, whose: str) -> tuple:
    """`got`'s shape, which must be `want`'s (what the forward op gives or takes), unified
    with it dim by dim (either side may be the more precise)."""
    if got.rank == want.rank:
        try:
            return tuple(unify_dim(a, b) for a, b in zip(got.shape, want.shape))
        except ValueError:
            pass
    raise ShapeError(f"{op}: {what} {got} does not match the {whose} {want}")


def _check_runtime(what: str, got: tuple, want: tuple) -> None:
    """`evaluate`'s check of an operand size that the types could not pin down (`?`)."""
    if tuple(got) != tuple(want):
        raise ValueError(f"{what} has shape {tuple(got)}, expected {tuple(want)}")


# ---------------------------------------------------------------------------------------------
# The backward ops of graph.conv2d
# ---------------------------------------------------------------------------------------------


@graph.op
class Conv2dBackpropInputOp(ConvBaseOp):
    """The cotangent of conv2d's input: the output cotangent `grad` correlated back through
    the weight (a transposed convolution), dx[n, c, i*sh + di - ph, j*sw + dj - pw] +=
    grad[n, o, i, j] * w[o, c, di, dj]. `input` gives x's shape (its values are not read);
    elements no window reads (the rows a stride leaves over) get zero.

        %dx = graph.conv2d_backprop_input %dy, %w, %x {stride = array<i64: 2, 2>}
            : (tensor<?x8x13x13xf32>, tensor<8x1x3x3xf32>, tensor<?x1x28x28xf32>)
            -> tensor<?x1x28x28xf32>

    Bilinear in (grad, w): d grad = conv2d(g, w), dw = conv2d_backprop_filter(g, grad).
    """

    name = "graph.conv2d_backprop_input"
    grad = Operand(AnyTensor, doc="[N, O, OH, OW]: the cotangent of conv2d's result")
    weight = Operand(AnyTensor, doc="[O, C, KH, KW]")
    input = Operand(AnyTensor, doc="[N, C, H, W]: conv2d's input, for its shape only")
    result = Result(AnyTensor, doc="[N, C, H, W]")

    @classmethod
    def infer(cls, args, props):
        dy, w, x = args
        y = cls._conv(x, w, props)
        n, _, _, _ = _unify(short_name(cls), "gradient", dy, y, "convolution's output")
        return [TensorSpec((n, unify_dim(x.shape[1], w.shape[1]), *x.shape[2:]),
                           same_dtype(dy, w, x))]

    def evaluate(self, dy, w, x):
        """The transpose of im2col: one product gives every window's [C, KH, KW] share,
        then each of the kh*kw taps adds its plane into a strided view of the padded input
        (taps of one window never collide, so each add is a plain strided `+=`)."""
        (sh, sw), (ph, pw) = self.props()["stride"], self.props()["padding"]
        n, c, h, wd = x.shape
        kh, kw = w.shape[2:]
        oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
        _check_runtime("the gradient", dy.shape, (n, w.shape[0], oh, ow))
        _check_runtime("the weight", w.shape[1:2], (c,))
        share = np.tensordot(dy, w, axes=([1], [0]))            # [N, OH, OW, C, KH, KW]
        out = np.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=dy.dtype)
        for di in range(kh):
            for dj in range(kw):
                out[:, :, di:di + sh * (oh - 1) + 1:sh, dj:dj + sw * (ow - 1) + 1:sw] += \
                    share[..., di, dj].transpose(0, 3, 1, 2)
        return np.ascontiguousarray(out[:, :, ph:ph + h, pw:pw + wd])

    def nondiff_operands(self):
        return (2,)

    def vjp(self, ad, cts):
        (ct,) = cts
        dy, w, props = self.grad, self.weight, self.props()
        return [typed_like(ad, dy, "graph.conv2d", ct, w, **props),
                typed_like(ad, w, "graph.conv2d_backprop_filter", ct, dy, w, **props), None]

    def jvp(self, ad, tangents):
        return bilinear_jvp(ad, self, *tangents[:2])


@graph.op
class Conv2dBackpropFilterOp(ConvBaseOp):
    """The cotangent of conv2d's weight: every window of the padded input weighted by the
    output cotangent `grad` at that window, dw[o, c, di, dj] = sum_{n, i, j} grad[n, o, i, j]
    * xpad[n, c, i*sh + di, j*sw + dj]. `weight` gives w's shape (its values are not read).

        %dw = graph.conv2d_backprop_filter %x, %dy, %w {padding = array<i64: 1, 1>}
            : (tensor<?x1x28x28xf32>, tensor<?x8x28x28xf32>, tensor<8x1x3x3xf32>)
            -> tensor<8x1x3x3xf32>

    Bilinear in (input, grad): dx = conv2d_backprop_input(grad, g), d grad = conv2d(x, g).
    """

    name = "graph.conv2d_backprop_filter"
    input = Operand(AnyTensor, doc="[N, C, H, W]: conv2d's input")
    grad = Operand(AnyTensor, doc="[N, O, OH, OW]: the cotangent of conv2d's result")
    weight = Operand(AnyTensor, doc="[O, C, KH, KW]: conv2d's weight, for its shape only")
    result = Result(AnyTensor, doc="[O, C, KH, KW]")

    @classmethod
    def infer(cls, args, props):
        x, dy, w = args
        y = cls._conv(x, w, props)
        _, o, _, _ = _unify(short_name(cls), "gradient", dy, y, "convolution's output")
        return [TensorSpec((o, unify_dim(w.shape[1], x.shape[1]), *w.shape[2:]),
                           same_dtype(x, dy, w))]

    def evaluate(self, x, dy, w):
        """im2col again: the windows contracted with the cotangent over (N, OH, OW)."""
        _check_runtime("the weight", w.shape[1:2], x.shape[1:2])
        win = self._padded_windows(x, w.shape[2:])                # [N, C, OH, OW, KH, KW]
        _check_runtime("the gradient", dy.shape, (x.shape[0], w.shape[0], *win.shape[2:4]))
        out = np.tensordot(dy, win, axes=([0, 2, 3], [0, 2, 3]))  # [O, C, KH, KW]
        return np.ascontiguousarray(out, dtype=x.dtype)

    def nondiff_operands(self):
        return (2,)

    def vjp(self, ad, cts):
        (ct,) = cts
        x, dy, props = self.input, self.grad, self.props()
        return [typed_like(ad, x, "graph.conv2d_backprop_input", dy, ct, x, **props),
                typed_like(ad, dy, "graph.conv2d", x, ct, **props), None]

    def jvp(self, ad, tangents):
        return bilinear_jvp(ad, self, *tangents[:2])


# ---------------------------------------------------------------------------------------------
# The backward ops of graph.max_pool2d and graph.avg_pool2d
# ---------------------------------------------------------------------------------------------


def _first_max(x: np.ndarray, taps: list) -> np.ndarray:
    """For every window of x, the number of the tap holding its first maximum in row-major
    order: the element max_pool2d's value is taken to come from, and so the one its
    derivative flows to. A NaN counts as the maximum (the pooled value is NaN), as in
    np.argmax; ties keep the earlier tap."""
    best, idx = None, None
    for t, tap in enumerate(taps):
        v = x[tap]
        if best is None:
            best, idx = v, np.zeros(v.shape, np.intp)
            continue
        better = (v > best) | (np.isnan(v) & ~np.isnan(best))
        best = np.where(better, v, best)
        idx[better] = t
    return idx


@graph.op
class MaxPool2dGradOp(PoolWindowOp):
    """The cotangent of max_pool2d's input: each element of `grad` (the cotangent of the
    pooled result) added to the position of its window's first maximum in `input`, zero
    elsewhere (windows that overlap add up).

        %dx = graph.max_pool2d_grad %x, %dy {kernel = array<i64: 2, 2>}
            : (tensor<?x8x28x28xf32>, tensor<?x8x14x14xf32>) -> tensor<?x8x28x28xf32>

    Linear in `grad` (transpose: max_pool2d_grad_grad); piecewise constant in `input`, whose
    derivative is zero wherever it exists (no ties), so none flows to it.
    """

    name = "graph.max_pool2d_grad"
    input = Operand(AnyTensor, doc="[N, C, H, W]: max_pool2d's input")
    grad = Operand(AnyTensor, doc="[N, C, OH, OW]: the cotangent of max_pool2d's result")
    result = Result(AnyTensor, doc="[N, C, H, W]")
    traits = LINEAR_TRAITS

    @classmethod
    def infer(cls, args, props):
        x, dy = args
        n, c, _, _ = _unify(short_name(cls), "gradient", dy, cls._pool(x, props), "pooled input")
        return [TensorSpec((n, c, *x.shape[2:]), same_dtype(x, dy))]

    def evaluate(self, x, dy):
        taps = self._taps_of(x.shape)
        idx = _first_max(x, taps)
        _check_runtime("the gradient", dy.shape, idx.shape)
        out = np.zeros_like(x)
        zero = dy.dtype.type(0)
        for t, tap in enumerate(taps):
            out[tap] += np.where(idx == t, dy, zero)
        return out

    def fold_identity(self, operands):
        return self._identity_on(self.grad)

    def nondiff_operands(self):
        return (0,)

    def transpose(self, ad, cts):
        return [None, typed_like(ad, self.grad, "graph.max_pool2d_grad_grad", self.input, cts[0],
                                 **self.props())]


@graph.op
class MaxPool2dGradGradOp(PoolWindowOp):
    """Each window's first maximum in `input`, looked up in `tangent` (a tensor of the
    input's shape): the tangent of max_pool2d's result when its input moves along `tangent`,
    and the transpose of max_pool2d_grad (TensorFlow's MaxPoolGradGrad).

        %ty = graph.max_pool2d_grad_grad %x, %tx {kernel = array<i64: 2, 2>}
            : (tensor<?x8x28x28xf32>, tensor<?x8x28x28xf32>) -> tensor<?x8x14x14xf32>

    Linear in `tangent` (transpose: max_pool2d_grad); no derivative flows to `input`.
    """

    name = "graph.max_pool2d_grad_grad"
    input = Operand(AnyTensor, doc="[N, C, H, W]: max_pool2d's input")
    tangent = Operand(AnyTensor, doc="[N, C, H, W]")
    result = Result(AnyTensor, doc="[N, C, OH, OW]")
    traits = LINEAR_TRAITS

    @classmethod
    def infer(cls, args, props):
        x, t = args
        shape = _unify(short_name(cls), "tangent", t, x, "input")
        return [cls._pool(x.with_shape(shape), props).with_dtype(same_dtype(x, t))]

    def evaluate(self, x, t):
        _check_runtime("the tangent", t.shape, x.shape)
        taps = self._taps_of(x.shape)
        idx = _first_max(x, taps)
        out = np.zeros(idx.shape, dtype=t.dtype)
        for k, tap in enumerate(taps):
            np.copyto(out, t[tap], where=idx == k)
        return out

    def fold_identity(self, operands):
        return self._identity_on(self.tangent)

    def nondiff_operands(self):
        return (0,)

    def transpose(self, ad, cts):
        return [None, typed_like(ad, self.tangent, "graph.max_pool2d_grad", self.input, cts[0],
                                 **self.props())]


@graph.op
class AvgPool2dGradOp(PoolWindowOp):
    """The cotangent of avg_pool2d's input: each element of `grad` spread evenly, divided
    by kh*kw, over its window (overlapping windows add up; elements no window covers get
    zero). `input` gives x's shape (its values are not read).

        %dx = graph.avg_pool2d_grad %dy, %x
            {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>}
            : (tensor<?x8x3x3xf32>, tensor<?x8x8x8xf32>) -> tensor<?x8x8x8xf32>

    Linear in `grad`; its transpose is avg_pool2d.
    """

    name = "graph.avg_pool2d_grad"
    grad = Operand(AnyTensor, doc="[N, C, OH, OW]: the cotangent of avg_pool2d's result")
    input = Operand(AnyTensor, doc="[N, C, H, W]: avg_pool2d's input, for its shape only")
    result = Result(AnyTensor, doc="[N, C, H, W]")
    traits = LINEAR_TRAITS

    @classmethod
    def infer(cls, args, props):
        dy, x = args
        n, c, _, _ = _unify(short_name(cls), "gradient", dy, cls._pool(x, props), "pooled input")
        return [TensorSpec((n, c, *x.shape[2:]), same_dtype(dy, x))]

    def evaluate(self, dy, x):
        kernel, stride = self._window(self.props())
        _check_runtime("the gradient", dy.shape,
                       (*x.shape[:2], *pooled_size(x.shape, kernel, stride)))
        share = dy / dy.dtype.type(kernel[0] * kernel[1])
        out = np.zeros(x.shape, dtype=dy.dtype)
        for tap in window_taps(x.shape, kernel, stride):
            out[tap] += share
        return out

    def fold_identity(self, operands):
        return self._identity_on(self.grad)

    def nondiff_operands(self):
        return (1,)

    def transpose(self, ad, cts):
        return [typed_like(ad, self.grad, "graph.avg_pool2d", cts[0], **self.props()), None]
