"""softmax, log_softmax and layernorm read their input twice (issue 13), and compute what the
three-pass forms did (passes/graph_to_linalg/loss.py and nn.py).

- softmax / log_softmax keep the values bit for bit: the oracle is numpy doing the three
  passes by hand (row maximum, f32 exponential, sequential f64 sum, its reciprocal rounded
  once, a multiplication), against the lowered linalg run by the interpreter, whose
  `math.exp` is numpy's; and at the loop level the stored exponentials are the output
  buffer itself (no temporary) and the loop that sums and stores them is vectorized.
- layernorm's one-pass statistics (sums shifted by the row's first element) are checked on
  rows built to break a careless one-pass variance: a large offset, an outlier first
  element, a tiny first element (x - K rounded), constant rows (variance exactly 0), one
  element, no element. The oracle is numpy in float64 on the same inputs; the allowed error
  is what rounding to the element type costs: the mean and the standard deviation rounded
  once, `x - mean` and the division rounded once each, at most
  2^-p * ((2|mean| + |x|) / std + 2|y|) with p = 24 (f32) or 53 (f64) and a factor 2 of slack,
  plus, for f64, the statistics' own bound (the docstring of `convert_layernorm`: relative
  error of var <= 3 n^2 2^-53). The f64 rows with offset 1e7 fail a variance taken as
  E[x^2] - E[x]^2 in f64 by a factor 10^4.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.frontend.dsl import compile_source, model_modules
from irkit.interpreter import Interpreter, to_value
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all
from irkit.symbols import lookup_symbol_in

from tests.unit.test_lower_graph import run_lowered

pytest.importorskip("llvmlite")
register_all()

EPS = 1e-5
N = 256

LAYERNORM = """model ln{bits} {{
  input x: f{bits}[B, D]
  input g: f{bits}[D]
  input b: f{bits}[D]
  y = layernorm(x, g, b)
  output y
}}
"""

SOFTMAX = """
func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %p = graph.softmax %x {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %q = graph.softmax %x {axis = 0 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %l = graph.log_softmax %x {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %p, %q, %l : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
"""


def run_linalg(src: str, args) -> list[np.ndarray]:
    """`@f` of `src` lowered to linalg, run by the interpreter on `args`."""
    m = parse_module(src)
    PassManager.parse("lower-graph-to-linalg").run(m)
    f = lookup_symbol_in(m, "f")
    types = f.properties["function_type"].value.inputs
    with np.errstate(all="ignore"):
        out = Interpreter(m).call(f, [to_value(a, t) for a, t in zip(args, types)])
    return [np.asarray(o) for o in out]


def three_passes(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    """The three-pass softmax by hand: the same f32 exponential (`math.exp`'s meaning:
    computed in f64, rounded once), the same sequential f64 sum, its reciprocal rounded
    once to f32, and the product (log_softmax: the log of the f64 sum)."""
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        z = x - np.where(np.isfinite(m), m, np.float32(0))
        e = np.exp(z.astype(np.float64)).astype(np.float32)
        total = np.add.accumulate(e.astype(np.float64), axis=axis)
        total = np.take(total, [-1], axis=axis)
        if log:
            return z - np.log(total).astype(np.float32)
        return e * (1.0 / total).astype(np.float32)


def test_softmax_values_are_the_three_pass_ones_bit_for_bit():
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((6, 9)) * 30).astype(np.float32)
    x[1] = -np.inf                      # shift 0, exp 0, 0 / 0
    x[2, 3] = np.inf                    # a +inf logit
    x[3, 4] = np.nan
    x[4] += 80.0                        # exponentials far from 1 without the shift
    p, q, lsm = run_linalg(SOFTMAX, [x])
    np.testing.assert_array_equal(p, three_passes(x, 1, log=False))
    np.testing.assert_array_equal(q, three_passes(x, 0, log=False))
    np.testing.assert_array_equal(lsm, three_passes(x, 1, log=True))


def loop_module(source: str, name: str):
    module = model_modules(compile_source(source, f"{name}.irk"))[name]
    PassManager.parse(pipeline.passes_between(None, "loop")).run(module)
    return module


def test_softmax_writes_the_output_in_place_and_vectorizes_the_stored_exponentials():
    m = loop_module("model sm {\n  input x: f32[B, 1024]\n  y = softmax(x, axis=1)\n"
                    "  output y\n}\n", "sm")
    fn = lookup_symbol_in(m, "forward")
    ops = list(fn.walk())
    assert not [o for o in ops if o.name == "memory.alloc"], "a temporary besides y"
    # the loop that sums exp(x - max) in f64 lanes also stores each exponential, as vectors
    summing = [o for o in ops if o.name == "loop.for" and
               any("xf64>" in str(t) for t in (r.type for r in o.results))]
    assert summing, "the f64 sum of exponentials is not vectorized"
    assert any(o.name == "memory.vector_store" for o in summing[0].walk())


# ---------------------------------------------------------------------------------------------
# layernorm
# ---------------------------------------------------------------------------------------------


def adversarial_rows(dtype, offset: float) -> np.ndarray:
    """Rows of N elements: normal, a large offset, an outlier first element (K far from
    the mean: the worst case of the bound), a tiny first element (x - K not exact in f64
    for f32 data), magnitudes spread over six decades, a constant row."""
    rng = np.random.default_rng(7)
    normal = rng.standard_normal((6, N))
    rows = normal.copy()
    rows[1] += offset
    rows[2, 0] = offset
    rows[3, 0] = 1e-30
    rows[4] *= 10.0 ** rng.uniform(-3, 3, N)
    rows[5] = 3.7
    return rows.astype(dtype)


def float64_layernorm(x, g, b):
    w = x.astype(np.float64)
    mean = w.mean(axis=1, keepdims=True)
    std = np.sqrt(((w - mean) ** 2).mean(axis=1, keepdims=True) + EPS)
    return (w - mean) / std * g + b, mean, std


def assert_within_rounding(y, x, g, b, bits: int) -> None:
    exact, mean, std = float64_layernorm(x, g, b)
    u = 2.0 ** -(24 if bits == 32 else 53)
    wide = x.astype(np.float64)
    bound = 2 * u * ((2 * np.abs(mean) + np.abs(wide)) / std + 2 * np.abs(exact))
    if bits == 64:
        bound += 3 * N**2 * 2.0**-53 * np.abs(exact)
    err = np.abs(y.astype(np.float64) - exact)
    assert np.all(err <= bound), (np.argmax(np.max(err / bound, axis=1)), np.max(err / bound))


@pytest.fixture(scope="module")
def jit(tmp_path_factory):
    import irkit
    path = tmp_path_factory.mktemp("ln") / "ln.irk"
    path.write_text(LAYERNORM.format(bits=32) + LAYERNORM.format(bits=64))
    return {bits: irkit.load_model(path, model=f"ln{bits}", engine="jit", cache=False)
            for bits in (32, 64)}


def graph_layernorm(bits: int) -> str:
    t = f"tensor<?x?xf{bits}>"
    v = f"tensor<?xf{bits}>"
    return (f"func.func @f(%x: {t}, %g: {v}, %b: {v}) -> {t} {{\n"
            f"  %y = graph.layernorm %x, %g, %b : ({t}, {v}, {v}) -> {t}\n"
            f"  return %y : {t}\n}}\n")


@pytest.mark.parametrize("bits, offset", [(32, 1e4), (32, 1e7), (64, 1e7)])
def test_layernorm_on_adversarial_rows_is_within_rounding_of_float64(jit, bits, offset):
    dtype = np.float32 if bits == 32 else np.float64
    x = adversarial_rows(dtype, offset)
    g, b = np.ones(N, dtype), np.zeros(N, dtype)
    (interpreted,) = run_linalg(graph_layernorm(bits), [x, g, b])
    compiled = jit[bits].forward(x=x, g=g, b=b)["y"]
    for y in (interpreted, compiled):
        assert y.dtype == dtype
        assert_within_rounding(y, x, g, b, bits)
        np.testing.assert_array_equal(y[5], b)      # a constant row: variance exactly 0


def test_the_float64_rows_catch_an_unshifted_one_pass_variance():
    x = adversarial_rows(np.float64, 1e7)
    mean = x.mean(axis=1, keepdims=True)
    var = np.maximum((x * x).mean(axis=1, keepdims=True) - mean * mean, 0)
    y = (x - mean) / np.sqrt(var + EPS)
    with pytest.raises(AssertionError):
        assert_within_rounding(y, x, np.ones(N), np.zeros(N), 64)


@pytest.mark.parametrize("bits", [32, 64])
def test_layernorm_rows_of_one_element_and_of_none(jit, bits):
    dtype = np.float32 if bits == 32 else np.float64
    one = np.array([[5.0], [-1e30 if bits == 32 else -1e300], [0.25]], dtype)
    g, b = np.array([2.0], dtype), np.array([0.5], dtype)
    for y in (run_linalg(graph_layernorm(bits), [one, g, b])[0],
              jit[bits].forward(x=one, g=g, b=b)["y"]):
        np.testing.assert_array_equal(y, np.full_like(one, 0.5))        # (x - x) * ... + b
    empty = np.zeros((3, 0), dtype)
    none = np.zeros(0, dtype)
    assert run_linalg(graph_layernorm(bits), [empty, none, none])[0].shape == (3, 0)
    assert jit[bits].forward(x=empty, g=none, b=none)["y"].shape == (3, 0)


def test_layernorm_reads_no_element_of_an_empty_row():
    """The loop level of the compile pipeline (fused), in the interpreter, whose loads
    are bounds-checked: the first element of a row is loaded only inside its loop."""
    m = loop_module(LAYERNORM.format(bits=32), "ln32")
    empty, none = np.zeros((3, 0), np.float32), np.zeros(0, np.float32)
    (y,) = run_lowered(m, "forward", [empty, none, none], [np.zeros((3, 0), np.float32)], {})
    assert y.shape == (3, 0)
    x = adversarial_rows(np.float32, 1e4)[:, :5]
    g, b = np.ones(5, np.float32), np.zeros(5, np.float32)
    (y,) = run_lowered(m, "forward", [x, g, b], [np.zeros_like(x)], {})
    assert_within_rounding(y, x, g, b, 32)
