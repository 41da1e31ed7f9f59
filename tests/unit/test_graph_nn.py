"""graph.conv2d, pooling, batchnorm and layernorm: numpy semantics against naive nested-loop
references written here (random shapes, strides, paddings via hypothesis), and the shape
functions on symbolic dims, as the DSL frontend calls them."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from irkit.dialects.graph import ShapeError, TensorSpec
from irkit.dialects.graph.nn import (
    AvgPool2dOp, BatchNormOp, Conv2dOp, LayerNormOp, MaxPool2dOp,
)
from irkit.interpreter import interpret
from irkit.ir import Block
from irkit.parser import parse_module
from irkit.types import F16, F32, F64, I32, RankedTensorType

SETTINGS = settings(max_examples=60, deadline=None)


# ----- running one op -------------------------------------------------------------------------


def _ttype(shape, dtype=F32) -> str:
    return str(RankedTensorType(tuple(shape), dtype))


def run_op(op: str, args: list[np.ndarray], result_shape, attrs: str = "", dtype=F32):
    """`op` applied to `args` through the IR: printed, parsed, verified and interpreted, so
    the test also covers the syntax and the verifier's agreement with the result type."""
    ins = [_ttype(a.shape, dtype) for a in args]
    out = _ttype(result_shape, dtype)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(ins))
    names = ", ".join(f"%a{i}" for i in range(len(args)))
    attrs = f" {{{attrs}}}" if attrs else ""
    text = (f"func.func @f({params}) -> {out} {{\n"
            f"  %r = graph.{op} {names}{attrs} : ({', '.join(ins)}) -> {out}\n"
            f"  return %r : {out}\n}}\n")
    m = parse_module(text)
    m.verify()
    return interpret(m, "f", *args)


def _build(cls, arrays, **props):
    """The op over the arguments of a detached block typed like `arrays`, to time
    `evaluate` alone (no parsing, no interpreter)."""
    dt = {np.dtype(np.float32): F32, np.dtype(np.float64): F64}[arrays[0].dtype]
    block = Block([RankedTensorType(a.shape, dt) for a in arrays])
    return cls.create(*block.args, **props)


def _ints(name: str, values) -> str:
    return f"{name} = array<i64: {', '.join(map(str, values))}>"


# ----- naive references -----------------------------------------------------------------------


def conv2d_ref(x, w, stride, padding):
    """Direct definition: every output element is a sum over channels and kernel taps of
    the input at (i*s + di - p), with zero outside the input."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    (sh, sw), (ph, pw) = stride, padding
    oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for b in range(n):
        for f in range(o):
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ch in range(c):
                        for di in range(kh):
                            for dj in range(kw):
                                r, q = i * sh + di - ph, j * sw + dj - pw
                                if 0 <= r < h and 0 <= q < wd:
                                    acc += float(x[b, ch, r, q]) * float(w[f, ch, di, dj])
                    out[b, f, i, j] = acc
    return out


def pool_ref(x, kernel, stride, reduce):
    n, c, h, wd = x.shape
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    window = [float(x[b, ch, i * sh + di, j * sw + dj])
                              for di in range(kh) for dj in range(kw)]
                    out[b, ch, i, j] = reduce(window)
    return out


def batchnorm_ref(x, mean, var, gamma, beta, eps):
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        c = idx[1]
        out[idx] = ((float(x[idx]) - mean[c]) / np.sqrt(float(var[c]) + eps) * gamma[c]
                    + beta[c])
    return out


def layernorm_ref(x, gamma, beta, axis, eps):
    """Loop over every line along `axis`; statistics in float64 by the textbook formulas."""
    x64 = np.moveaxis(x.astype(np.float64), axis, -1)
    out = np.zeros(x64.shape)
    for idx in np.ndindex(x64.shape[:-1]):
        line = x64[idx]
        mu = sum(line) / len(line)
        var = sum((v - mu) ** 2 for v in line) / len(line)
        out[idx] = [(v - mu) / np.sqrt(var + eps) * g + b for v, g, b in zip(line, gamma, beta)]
    return np.moveaxis(out, -1, axis)


def _rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ----- conv2d ---------------------------------------------------------------------------------


@SETTINGS
@given(n=st.integers(1, 2), c=st.integers(1, 3), o=st.integers(1, 3),
       h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 4), kw=st.integers(1, 4),
       sh=st.integers(1, 3), sw=st.integers(1, 3), ph=st.integers(0, 2), pw=st.integers(0, 2),
       seed=st.integers(0, 2**32 - 1))
def test_conv2d_matches_loops(n, c, o, h, w, kh, kw, sh, sw, ph, pw, seed):
    assume(h + 2 * ph >= kh and w + 2 * pw >= kw)
    rng = np.random.default_rng(seed)
    x, wt = _rand(rng, (n, c, h, w)), _rand(rng, (o, c, kh, kw))
    want = conv2d_ref(x, wt, (sh, sw), (ph, pw))
    got = run_op("conv2d", [x, wt], want.shape,
                 f"{_ints('stride', (sh, sw))}, {_ints('padding', (ph, pw))}")
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv2d_f64_and_dynamic_batch():
    rng = np.random.default_rng(0)
    x, w = _rand(rng, (3, 2, 6, 5), np.float64), _rand(rng, (4, 2, 3, 2), np.float64)
    want = conv2d_ref(x, w, (2, 1), (1, 0))
    text = """
    func.func @f(%x: tensor<?x2x6x5xf64>, %w: tensor<4x2x3x2xf64>) -> tensor<?x4x3x4xf64> {
      %r = graph.conv2d %x, %w {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>}
        : (tensor<?x2x6x5xf64>, tensor<4x2x3x2xf64>) -> tensor<?x4x3x4xf64>
      return %r : tensor<?x4x3x4xf64>
    }"""
    got = interpret(parse_module(text), "f", x, w)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_conv2d_is_fast_on_an_mnist_batch():
    """The interpreter trains small CNNs: a 64-image 28x28 batch through 32 3x3 filters must
    take milliseconds, not the seconds a Python loop over output pixels would."""
    rng = np.random.default_rng(1)
    x, w = _rand(rng, (64, 1, 28, 28)), _rand(rng, (32, 1, 3, 3))
    op = _build(Conv2dOp, [x, w], stride=(1, 1), padding=(1, 1))
    start = time.perf_counter()
    y = op.evaluate(x, w)
    elapsed = time.perf_counter() - start
    assert y.shape == (64, 32, 28, 28) and y.dtype == np.float32
    # one output pixel by hand: the 3x3 window around (5, 7) of image 3, filter 9
    want = float(np.sum(x[3, 0, 4:7, 6:9].astype(np.float64) * w[9, 0]))
    assert abs(float(y[3, 9, 5, 7]) - want) < 1e-4
    assert elapsed < 1.0, f"conv2d took {elapsed:.2f}s"


# ----- pooling --------------------------------------------------------------------------------


@SETTINGS
@given(n=st.integers(1, 2), c=st.integers(1, 3), h=st.integers(1, 8), w=st.integers(1, 8),
       kh=st.integers(1, 3), kw=st.integers(1, 3), stride=st.none() | st.tuples(
           st.integers(1, 3), st.integers(1, 3)),
       avg=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_pool_matches_loops(n, c, h, w, kh, kw, stride, avg, seed):
    assume(h >= kh and w >= kw)
    x = _rand(np.random.default_rng(seed), (n, c, h, w))
    reduce = (lambda v: sum(v) / len(v)) if avg else max
    want = pool_ref(x, (kh, kw), stride or (kh, kw), reduce)
    attrs = _ints("kernel", (kh, kw)) + (f", {_ints('stride', stride)}" if stride else "")
    got = run_op("avg_pool2d" if avg else "max_pool2d", [x], want.shape, attrs)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_max_pool_propagates_nan():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    x[0, 0, 1, 1] = np.nan
    got = run_op("max_pool2d", [x], (1, 1, 2, 2), _ints("kernel", (2, 2)))
    assert np.isnan(got[0, 0, 0, 0])
    assert got[0, 0, 1, 1] == 15.0 and got[0, 0, 0, 1] == 7.0 and got[0, 0, 1, 0] == 13.0


# ----- normalization --------------------------------------------------------------------------


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
       eps=st.sampled_from([0.0, 1e-5, 0.1]), seed=st.integers(0, 2**32 - 1))
def test_batchnorm_matches_loops(shape, eps, seed):
    rng = np.random.default_rng(seed)
    c = shape[1]
    x, mean, gamma, beta = (_rand(rng, s) for s in (shape, c, c, c))
    var = rng.uniform(0.1, 2.0, c).astype(np.float32)
    # eps 1e-5 is left out of the IR: the property's default must be that value
    attrs = f"epsilon = {eps!r} : f64" if eps != 1e-5 else ""
    got = run_op("batchnorm", [x, mean, var, gamma, beta], shape, attrs)
    want = batchnorm_ref(x, mean, var, gamma, beta, eps)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data(),
       seed=st.integers(0, 2**32 - 1))
def test_layernorm_matches_loops(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    rng = np.random.default_rng(seed)
    d = shape[axis]
    # an offset mean makes E[x^2] - E[x]^2 lose digits in f32; the two-pass form must not
    x = (_rand(rng, shape) + np.float32(100.0))
    gamma, beta = _rand(rng, d), _rand(rng, d)
    want = layernorm_ref(x, gamma, beta, axis, 1e-5)
    got = run_op("layernorm", [x, gamma, beta], shape, f"axis = {axis} : i64")
    assert got.dtype == np.float32 and got.shape == tuple(shape)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=2e-3)


def test_layernorm_default_axis_is_last():
    x = np.array([[1.0, 2.0, 3.0, 6.0]], np.float32)
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    got = run_op("layernorm", [x, ones, zeros], (1, 4))
    mu, sd = 3.0, np.sqrt(((x - 3.0) ** 2).mean() + 1e-5)
    np.testing.assert_allclose(got, (x - mu) / sd, rtol=1e-5)


# ----- shape functions on symbolic dims -------------------------------------------------------


def spec(*shape, dtype=F32) -> TensorSpec:
    return TensorSpec(tuple(shape), dtype)


CONV = {"stride": (1, 1), "padding": (0, 0)}


def test_conv2d_shape_keeps_the_symbolic_batch():
    (out,) = Conv2dOp.infer([spec("N", 1, 28, 28), spec(8, 1, 5, 5)], CONV)
    assert out == spec("N", 8, 24, 24)
    (out,) = Conv2dOp.infer([spec("N", 3, 32, 32), spec(16, 3, 3, 3)],
                            {"stride": (2, 2), "padding": (1, 1)})
    assert out == spec("N", 16, 16, 16)     # (32 + 2 - 3) // 2 + 1


def test_conv2d_shape_symbolic_channels_and_spatial():
    (out,) = Conv2dOp.infer([spec("N", "C", "H", 9), spec("O", "C", 3, 3)],
                            {"stride": (1, 1), "padding": (1, 0)})
    assert out == spec("N", "O", "H", 7)    # "same" along H keeps the symbol
    (out,) = Conv2dOp.infer([spec("N", "C", "H", None), spec(4, None, 3, 3)],
                            {"stride": (2, 1), "padding": (1, 1)})
    assert out == spec("N", 4, None, None)


def test_conv2d_channel_errors_speak_in_symbols():
    with pytest.raises(ShapeError, match="conv2d: input has 3 channels but the weight "
                                         "expects 4"):
        Conv2dOp.infer([spec("N", 3, 8, 8), spec(2, 4, 3, 3)], CONV)
    # a symbol never equals a number
    with pytest.raises(ShapeError, match="input has C channels but the weight expects 3"):
        Conv2dOp.infer([spec("N", "C", 8, 8), spec(2, 3, 3, 3)], CONV)


@pytest.mark.parametrize("args,props,message", [
    ([spec("N", 1, 8), spec(2, 1, 3, 3)], CONV, "input must have rank 4"),
    ([spec("N", 1, 8, 8), spec(2, 1, 3, 3, dtype=F64)], CONV, "element types differ"),
    ([spec("N", 1, 8, 8, dtype=I32), spec(2, 1, 3, 3, dtype=I32)], CONV, "floating-point"),
    ([spec("N", 1, 8, 8), spec(2, 1, 3, 3)], {"stride": (1, 1, 1), "padding": (0, 0)},
     "stride must have 2 entries"),
    ([spec("N", 1, 8, 8), spec(2, 1, 3, 3)], {"stride": (1, 1), "padding": (0, -1)},
     "padding entries must be non-negative"),
    ([spec("N", 1, 2, 8), spec(2, 1, 3, 3)], CONV,
     "kernel height 3 is larger than the input height 2"),
])
def test_conv2d_shape_errors(args, props, message):
    with pytest.raises(ShapeError, match=message):
        Conv2dOp.infer(args, props)


def test_pool_shapes():
    (out,) = MaxPool2dOp.infer([spec("N", 8, 28, 28)], {"kernel": (2, 2), "stride": ()})
    assert out == spec("N", 8, 14, 14)
    (out,) = AvgPool2dOp.infer([spec("N", "C", None, 7)], {"kernel": (3, 2), "stride": (1, 2)})
    assert out == spec("N", "C", None, 3)
    (out,) = AvgPool2dOp.infer([spec("N", 4, "H", "W", dtype=F16)],
                               {"kernel": (1, 1), "stride": ()})
    assert out == spec("N", 4, "H", "W", dtype=F16)
    with pytest.raises(ShapeError, match="max_pool2d: kernel must have 2 entries"):
        MaxPool2dOp.infer([spec("N", 8, 28, 28)], {"kernel": (2,), "stride": ()})
    with pytest.raises(ShapeError, match="kernel width 5 is larger than the input width 4"):
        MaxPool2dOp.infer([spec("N", 8, 28, 4)], {"kernel": (5, 5), "stride": ()})


def test_batchnorm_shapes():
    p = spec(16)
    (out,) = BatchNormOp.infer([spec("N", 16, 7, 7), p, p, p, p], {"epsilon": 1e-5})
    assert out == spec("N", 16, 7, 7)
    # an unknown channel count is learned from the parameters
    (out,) = BatchNormOp.infer([spec("N", None), p, p, p, p], {"epsilon": 1e-5})
    assert out == spec("N", 16)
    c = spec("C")
    (out,) = BatchNormOp.infer([spec("N", "C", 5), c, c, c, c], {"epsilon": 1e-5})
    assert out == spec("N", "C", 5)
    with pytest.raises(ShapeError, match="batchnorm: mean has C entries but the input has 16 "
                                         "channels"):
        BatchNormOp.infer([spec("N", 16), c, p, p, p], {"epsilon": 1e-5})


def test_layernorm_shapes():
    g = spec("D")
    (out,) = LayerNormOp.infer([spec("N", "T", "D"), g, g], {"axis": -1, "epsilon": 1e-5})
    assert out == spec("N", "T", "D")
    (out,) = LayerNormOp.infer([spec("N", None, 4), spec(10), spec(10)],
                               {"axis": 1, "epsilon": 1e-5})
    assert out == spec("N", 10, 4)
    with pytest.raises(ShapeError, match="axis -3 is out of range for rank 2"):
        LayerNormOp.infer([spec("N", 4), spec(4), spec(4)], {"axis": -3, "epsilon": 1e-5})
    with pytest.raises(ShapeError, match="layernorm: gamma has 5 entries but the input has 4 "
                                         "features"):
        LayerNormOp.infer([spec("N", 4), spec(5), spec(4)], {"axis": -1, "epsilon": 1e-5})
