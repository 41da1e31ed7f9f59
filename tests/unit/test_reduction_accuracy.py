"""Compiled reductions are at least as accurate as numpy's pairwise summation (issue 12,
defect 1), in the JIT and in a shared library, at sizes up to 3*10^7.

The contract, for every compiled op that adds up n floats:

    |computed - exact| <= C * log2(n) * EPS32 * sum|terms|,    C = 1, EPS32 = 2^-23

the error growth of a pairwise float32 sum (numpy's), where `exact` is numpy in float64 on the
same float32 inputs and `terms` are what the op adds (the elements, the exponentials, the
products, ...). A sequential float32 sum, what compiled code did before, breaks it: 3*10^7
ones added up to 16,777,216 and a million copies of 0.1 to 100,958. Each op's test states
how the sum's error reaches its result (a probability is relative to its sum, a logarithm
turns it into an absolute error, a mean is divided by its count).

The compiled sums are carried in f64 (f64 itself compensated: `Accumulator` in
passes/graph_to_linalg/core.py) and promise more, checked where the terms are the inputs themselves: about one float32 ulp,
|error| <= 2^-24 * (|S| + sum|x|), and for float64 |error| <= 2 * 2^-53 * |S| + O(n * 2^-106)
* sum|x|, which a sequential float64 sum fails on the data below.

Models are compiled once per module (one file of models, one JIT per model and one `.so` for
them all) and shared by every size; every op is tried on at least 10^7 terms (sum and mean
on 3*10^7), except the average pool over a 1024x1024 window.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import irkit
from irkit.tools.compile import main as compile_main

pytest.importorskip("llvmlite")

HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))
C = 1.0
EPS32 = float(np.finfo(np.float32).eps)         # 2^-23
EPS64 = 2.0 ** -53                              # float64 unit roundoff

MODELS = """
model red {
  input x: f32[N]
  s = sum(x)
  m = mean(x)
  output s, m
}

model red64 {
  input x: f64[N]
  s = sum(x)
  m = mean(x)
  output s, m
}

model red16 {
  input x: f16[N]
  s = sum(x)
  output s
}

model sm {
  input x: f32[B, C]
  p = softmax(x)
  l = log_softmax(x)
  output p, l
}

model ce {
  input x: f32[B, C]
  input y: i32[B]
  input t: f32[B, C]
  hard = cross_entropy(x, y)
  soft = cross_entropy(x, t)
  output hard, soft
}

model err {
  input p: f32[N]
  input q: f32[N]
  loss = mse(p, q)
  output loss
}

model ln {
  input x: f32[B, D]
  input g: f32[D]
  input b: f32[D]
  y = layernorm(x, g, b)
  output y
}

model bn {
  input x: f32[N, 2, 4, 4]
  param mu: f32[2] = constant(0.5)
  param var: f32[2] = constant(1.0)
  param gamma: f32[2] = ones
  param beta: f32[2] = zeros
  loss = sum(batchnorm(x, mu, var, gamma, beta))
  output loss
  grad loss wrt gamma, mu
}

model mm {
  input a: f32[2, K]
  input b: f32[K, 3]
  c = a @ b
  output c
}

model conv {
  input x: f32[1, C, H, W]
  input w: f32[1, C, 1, 1]
  param k: f32[1, 1, 1, 1] = ones
  y = conv2d(x, w)
  loss = sum(conv2d(x[0:1, 0:1], k))
  output y, loss
  grad loss wrt k
}

model pool {
  input x: f32[1, 1, 1024, 1024]
  y = avg_pool2d(x, [1024, 1024])
  output y
}
"""


@pytest.fixture(scope="module")
def models_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("accuracy") / "acc.irk"
    path.write_text(MODELS)
    return path


@pytest.fixture(scope="module", params=["jit", "so"])
def compiled(request, models_file):
    """name -> the compiled model: in-process JIT, or the shared library through ctypes."""
    cache = {}
    if request.param == "so":
        if not HAS_CC:
            pytest.skip("no C compiler to link a shared library")
        so = models_file.parent / "acc.so"
        assert compile_main([str(models_file), "-o", str(so)]) == 0

        def get(name):
            if name not in cache:
                cache[name] = irkit.load(so, model=name)
            return cache[name]
    else:
        def get(name):
            if name not in cache:
                cache[name] = irkit.load_model(models_file, model=name, engine="jit")
            return cache[name]
    return get


def within(got, exact, n: int, scale, what: str) -> None:
    """|got - exact| <= C * log2(n) * EPS32 * scale, elementwise (`scale`: sum|terms|)."""
    bound = C * math.log2(max(n, 2)) * EPS32 * np.asarray(scale, np.float64)
    err = np.abs(np.asarray(got, np.float64) - exact)
    assert np.all(err <= bound), \
        f"{what}: error {np.max(err):.3g} exceeds C*log2(n)*eps32*sum|x| = {np.min(bound):.3g}"


def _data(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    if kind == "ones":
        return np.ones(n, np.float32)
    if kind == "tenths":
        return np.full(n, 0.1, np.float32)
    return rng.standard_normal(n).astype(np.float32)        # cancellation: |S| << sum|x|


# ----- sum and mean ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind, n", [
    ("ones", 10), ("ones", 3 * 10**7), ("tenths", 1000), ("tenths", 10**7),
    ("normal", 10**5), ("normal", 10**7),
])
def test_sum_and_mean(compiled, kind, n):
    x = _data(kind, n)
    wide = x.astype(np.float64)
    exact, abs_sum = float(np.sum(wide)), float(np.sum(np.abs(wide)))
    out = compiled("red").forward(x=x)
    within(out["s"], exact, n, abs_sum, f"sum of {n} {kind}")
    within(out["m"], exact / n, n, abs_sum / n, f"mean of {n} {kind}")
    # what the f64 accumulator promises: about one float32 ulp of sum|x|
    assert abs(float(out["s"]) - exact) <= 2.0**-24 * (abs(exact) + abs_sum)
    assert abs(float(out["m"]) - exact / n) <= 2.0**-24 * (abs(exact) + abs_sum) / n


def test_the_data_catches_a_sequential_float32_sum():
    """The sizes above are large enough that the old lowering (a float32 running sum) fails."""
    for kind, n in [("ones", 3 * 10**7), ("tenths", 10**7)]:
        x = _data(kind, n)
        sequential = np.cumsum(x, dtype=np.float32)[-1]         # left to right, in float32
        with pytest.raises(AssertionError):
            within(sequential, float(np.sum(x, dtype=np.float64)), n, n * float(x[0]), kind)


def test_float64_sum_is_compensated(compiled):
    """Huge and tiny magnitudes mixed: a sequential float64 sum loses the small terms; the
    compensated one is within 2 * 2^-53 * |S| + 4 * n * 2^-106 * sum|x| of the exact sum
    (math.fsum, correctly rounded)."""
    n = 10**5
    rng = np.random.default_rng(64)
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
    x[1::2] = -x[::2] + rng.standard_normal(n // 2)             # pairs that cancel to O(1)
    exact, abs_sum = math.fsum(x), float(np.sum(np.abs(x)))
    bound = 2 * EPS64 * abs(exact) + 4 * n * EPS64**2 * abs_sum
    assert abs(np.cumsum(x)[-1] - exact) > bound                # the data needs compensation
    out = compiled("red64").forward(x=x)
    assert abs(float(out["s"]) - exact) <= bound
    assert abs(float(out["m"]) - exact / n) <= bound / n + EPS64 * abs(exact / n)


def test_float16_sum_is_not_stuck(compiled):
    """A float16 running sum of ones stops at 2048; the f64 accumulator does not."""
    n = 10**4
    out = compiled("red16").forward(x=np.ones(n, np.float16))
    assert float(out["s"]) == n


# ----- softmax, log_softmax, cross_entropy ----------------------------------------------------


def _logits(shape, seed=0):
    """Multiples of 1/64 in [-8, 8): x - max is exact in float32, so the only rounding that
    grows with n is the sum's."""
    return (np.random.default_rng(seed).integers(-512, 512, shape) / 64).astype(np.float32)


@pytest.mark.parametrize("shape", [(3, 10), (1, 10**7)])
def test_softmax_and_log_softmax(compiled, shape):
    x = _logits(shape)
    n = shape[1]
    z = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    total = np.exp(z).sum(axis=1, keepdims=True)
    out = compiled("sm").forward(x=x)
    # all terms positive: each probability is off by the sum's relative error
    p = np.exp(z) / total
    within(out["p"], p, n, p, "softmax")
    # log(sum) turns the sum's relative error into an absolute one
    lsm = z - np.log(total)
    within(out["l"], lsm, n, 1 + np.abs(lsm), "log_softmax")


@pytest.mark.parametrize("shape", [(5, 7), (2_500_000, 4), (1, 10**7)])
def test_cross_entropy(compiled, shape):
    b, c = shape
    x = _logits(shape, seed=1)
    rng = np.random.default_rng(2)
    y = rng.integers(0, c, b).astype(np.int32)
    t = rng.random(shape).astype(np.float32)
    t /= t.sum(axis=1, keepdims=True)
    z = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    log_total = np.log(np.exp(z).sum(axis=1, keepdims=True))
    lsm = z - log_total
    out = compiled("ce").forward(x=x, y=y, t=t)
    # the loss is -mean over rows; each row's term is a log-softmax entry (its error: the
    # row sum's relative error, plus roundings of |z| and log(sum))
    hard = lsm[np.arange(b), y]
    scale = np.mean(1 + np.abs(z[np.arange(b), y]) + log_total[:, 0])
    within(out["hard"], -hard.mean(), b * c, scale, "cross_entropy (labels)")
    soft = (t.astype(np.float64) * lsm).sum(axis=1)
    scale = np.mean((t * (1 + np.abs(z) + log_total)).sum(axis=1))
    within(out["soft"], -soft.mean(), b * c, scale, "cross_entropy (targets)")


# ----- mse, layernorm, batchnorm --------------------------------------------------------------


@pytest.mark.parametrize("n", [10, 10**4, 10**7])
def test_mse(compiled, n):
    rng = np.random.default_rng(n)
    p, q = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    sq = (p.astype(np.float64) - q) ** 2
    out = compiled("err").forward(p=p, q=q)
    within(out["loss"], sq.mean(), n, sq.mean(), "mse")      # positive terms: sum|t| = sum


@pytest.mark.parametrize("d", [16, 10**7])
def test_layernorm_long_axis(compiled, d):
    """The mean is a sum/d: its error, at most C*log2(d)*eps32*mean|x|, reaches y divided by
    the standard deviation; the variance and the elementwise steps add a relative error."""
    rng = np.random.default_rng(d)
    x = (0.1 + 0.01 * rng.random((2, d))).astype(np.float32)    # mean >> std: no slack
    g, b = np.ones(d, np.float32), np.zeros(d, np.float32)
    wide = x.astype(np.float64)
    mu = wide.mean(axis=1, keepdims=True)
    std = np.sqrt(((wide - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    y = (wide - mu) / std
    out = compiled("ln").forward(x=x, g=g, b=b)
    within(out["y"], y, d, np.abs(y) + np.abs(wide).mean(axis=1, keepdims=True) / std,
           "layernorm")


def test_batchnorm_and_its_gradients(compiled):
    """sum(batchnorm(x)) and its gradient in gamma are sums over 10^7 and 5*10^6 elements."""
    n = 312_500
    x = (1 + np.random.default_rng(5).random((n, 2, 4, 4))).astype(np.float32)
    r = 1 / np.sqrt(1.0 + 1e-5)
    c = x.astype(np.float64) - 0.5
    out = compiled("bn").forward(x=x)
    within(out["loss"], (c * r).sum(), x.size, np.abs(c * r).sum(), "sum(batchnorm)")
    per_channel = x.size // 2
    within(out["d_gamma"], (c * r).sum(axis=(0, 2, 3)), per_channel,
           np.abs(c * r).sum(axis=(0, 2, 3)), "d gamma")
    within(out["d_mu"], np.full(2, -per_channel * r), per_channel, per_channel * r, "d mu")


# ----- matmul, conv2d, avg_pool2d ---------------------------------------------------------------


@pytest.mark.parametrize("k", [5, 10**7])
def test_matmul_long_k(compiled, k):
    rng = np.random.default_rng(k)
    a, b = rng.random((2, k)).astype(np.float32), rng.random((k, 3)).astype(np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    out = compiled("mm").forward(a=a, b=b)
    within(out["c"], a64 @ b64, k, np.abs(a64) @ np.abs(b64), "matmul")


def test_conv2d_and_its_filter_gradient(compiled):
    """A 1x1 convolution over 10^7 channels (one dot product), and the gradient of
    sum(conv2d(x, k)) in the 1x1 kernel k: a sum over a 3200x3200 image (10^7 pixels)."""
    c = 10**7
    rng = np.random.default_rng(7)
    x = rng.random((1, c, 1, 1)).astype(np.float32)
    w = rng.random((1, c, 1, 1)).astype(np.float32)
    prod = x.astype(np.float64).ravel() * w.ravel()
    out = compiled("conv").forward(x=x, w=w)
    within(out["y"].ravel(), prod.sum(), c, prod.sum(), "conv2d")
    image = (0.1 + 0.01 * rng.random((1, 1, 3200, 3200))).astype(np.float32)
    out = compiled("conv").forward(x=image, w=np.ones((1, 1, 1, 1), np.float32))
    total = image.astype(np.float64).sum()
    within(out["loss"], total, image.size, total, "sum(conv2d)")
    within(out["d_k"].ravel(), total, image.size, total, "conv2d filter gradient")


def test_avg_pool_over_a_large_window(compiled):
    x = (0.1 + 0.01 * np.random.default_rng(8).random((1, 1, 1024, 1024))).astype(np.float32)
    mean = x.astype(np.float64).mean()
    within(compiled("pool").forward(x=x)["y"].ravel(), mean, x.size, mean, "avg_pool2d")
