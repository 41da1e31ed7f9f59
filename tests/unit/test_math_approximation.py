"""Accuracy of `math-polynomial-approximation`: f32 exp, expm1, log, log2, log1p and tanh
written out in the IR, compiled through the LLVM backend on vector<16xf32> and on scalars,
against numpy.

The reference is numpy in float64 rounded once to float32 (the correctly rounded result but
for astronomically rare ties); the error is counted in ulps of float32 (distance between the
bit patterns ordered as integers, +0 and -0 equal; NaN against NaN is 0, NaN against a
number is infinite). Inputs: 2^20 bit patterns evenly spaced over all 2^32 (both signs,
zeros, subnormals, huge values, infinities, NaNs), 2^20 values evenly spaced over each
function's interesting range, 2^20 small positive and negative values (subnormals up to
~2.5e-3, where expm1, log1p and tanh must be accurate), and the special values.

Each is checked twice: written for this CPU (with fma) and for `--cpu=generic` (x86-64's
SSE2, no fma: a multiply and an add, ln 2 split for exact plain products), compiled for
that CPU.

Measured max error (this machine, AMD EPYC with AVX-512; vector and scalar code agree to the
bit), the same with and without fma:

    exp 1, expm1 1, log 1, log2 2, log1p 1, tanh 1 ulp;
    numpy's own float32 kernels on the same inputs: exp 3, expm1 3, log 3, log2 2,
    log1p 2, tanh 1 ulp.

The bounds asserted are these numbers. The interpreter runs the rewritten IR (numpy float32
op by op) and gives the compiled code's bits exactly.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from irkit.backends.llvm_cpu import compile_module, pass_target
from irkit.dialects import load_all
from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import register_all
from irkit.target import TARGET_ATTRIBUTE, attribute

load_all()
register_all()

#: op -> (numpy reference, max ulps measured, the range swept densely)
FUNCTIONS = {
    "exp": (np.exp, 1, (-104.0, 89.0)),
    "expm1": (np.expm1, 1, (-30.0, 89.0)),
    "log": (np.log, 1, (0.0, 3e38)),
    "log2": (np.log2, 2, (0.0, 3e38)),
    "log1p": (np.log1p, 1, (-1.0, 3e38)),
    "tanh": (np.tanh, 1, (-12.0, 12.0)),
}


def _kernels(op: str) -> str:
    """`@vec_op` (16 lanes at a time) and `@scalar_op` over memref<?xf32>, to compile."""
    return f"""
func.func @vec_{op}(%x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c16 {{
    %v = memory.vector_load %x[%i] : memref<?xf32>, vector<16xf32>
    %r = math.{op} %v : vector<16xf32>
    memory.vector_store %r, %y[%i] : memref<?xf32>, vector<16xf32>
  }}
  return
}}
func.func @scalar_{op}(%x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c1 {{
    %v = memory.load %x[%i] : memref<?xf32>
    %r = math.{op} %v : f32
    memory.store %r, %y[%i] : memref<?xf32>
  }}
  return
}}
"""


def _whole(op: str) -> str:
    """`@whole_op` on one vector value, for the interpreter (not compiled: LLVM takes a
    minute over a vector<8192xf32> of SSE2 code)."""
    return f"""
func.func @whole_{op}(%v: vector<{_WHOLE}xf32>) -> vector<{_WHOLE}xf32> {{
  %r = math.{op} %v : vector<{_WHOLE}xf32>
  return %r : vector<{_WHOLE}xf32>
}}
"""


_WHOLE = 8192


#: the CPUs the expansion is written and compiled for: this one (fma) and x86-64's baseline
CPUS = ("native", "generic")


@functools.cache
def _module(cpu: str = "native", build=_kernels):
    """The `build` functions of every op, expanded for `cpu`."""
    m = parse_module("\n".join(build(op) for op in FUNCTIONS))
    if cpu != "native":
        m.attributes[TARGET_ATTRIBUTE] = attribute(pass_target(cpu))
    PassManager.parse("math-polynomial-approximation").run(m)
    return m


@functools.cache
def _compiled(cpu: str = "native"):
    return compile_module(_module(cpu), 2, cpu=cpu)


def _run(kind: str, op: str, x: np.ndarray, cpu: str = "native") -> np.ndarray:
    """The compiled `kind` kernel of `op` on x (any length: padded to 16 lanes)."""
    pad = np.zeros(-len(x) % 16, np.float32)
    xs = np.concatenate([x.astype(np.float32), pad])
    y = np.empty_like(xs)
    _compiled(cpu)[f"{kind}_{op}"](xs, y)
    return y[:len(x)]


def _ordered(a: np.ndarray) -> np.ndarray:
    """float32 bits as integers in the order of the floats (+0 and -0 both 0)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    gn, wn = np.isnan(got), np.isnan(want)
    d = np.abs(_ordered(got) - _ordered(want)).astype(np.float64)
    d[gn != wn] = np.inf
    d[gn & wn] = 0
    return d


def reference(op: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return FUNCTIONS[op][0](x.astype(np.float64)).astype(np.float32)


N = 1 << 20


def sweeps(op: str) -> dict[str, np.ndarray]:
    lo, hi = FUNCTIONS[op][2]
    small = (np.arange(N, dtype=np.uint32) * 1013).view(np.float32)
    return {
        "all bit patterns": (np.arange(N, dtype=np.uint64) * 4096 + 1234).astype(
            np.uint32).view(np.float32),
        "range": np.linspace(lo, hi, N, dtype=np.float64).astype(np.float32),
        "small positive": small,
        "small negative": -small,
    }


F32 = np.finfo(np.float32)
SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 2.0, 0.5, F32.tiny, -F32.tiny,
     F32.max, -F32.max, F32.smallest_subnormal, -F32.smallest_subnormal, 1e-40, -1e-40,
     F32.eps, 1 - F32.epsneg, 1 + F32.eps, -1 + F32.epsneg, -1 - F32.eps,
     88.72283, 88.72284, 88.7229, 89.0, 100.0, -87.33654, -87.3366, -103.97207, -103.97208,
     -104.0, -150.0, -17.32868, -30.0, 9.010913, 9.0109135, 1.0, 0.9999999, 1.0000001,
     0.6931472, 0.70710677, 1.4142135, 1e-20, -1e-20, 0.5493061],
    np.float32)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("op", FUNCTIONS)
def test_accuracy_vector_and_scalar(op, cpu):
    bound = FUNCTIONS[op][1]
    for name, x in [*sweeps(op).items(), ("special values", SPECIALS)]:
        want = reference(op, x)
        vec, scal = _run("vec", op, x, cpu), _run("scalar", op, x, cpu)
        err = ulps(vec, want)
        worst = int(np.argmax(err))
        assert err.max() <= bound, (f"{op} on {name}: {err.max()} ulps at x = {x[worst]!r} "
                                    f"(got {vec[worst]!r}, want {want[worst]!r})")
        assert np.array_equal(vec.view(np.uint32), scal.view(np.uint32)), (op, name)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("op", FUNCTIONS)
def test_special_values_exactly(op, cpu):
    """Specials come out exactly as numpy's: the sign of zero, infinities and NaN."""
    got = _run("vec", op, SPECIALS, cpu)
    want = reference(op, SPECIALS)
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
    for x, g, w in zip(SPECIALS[exact], got[exact], want[exact]):
        assert (np.isnan(g) and np.isnan(w)) or g.tobytes() == w.tobytes(), (op, x, g, w)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("op", FUNCTIONS)
def test_interpreter_gives_the_compiled_bits(op, cpu):
    """The interpreter's numpy float32 arithmetic on the rewritten ops is the compiled
    code's, to the bit (math.fma is rounded once in both; without fma, the multiply and
    the add round each)."""
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.integers(0, 2 ** 32, _WHOLE - len(SPECIALS), dtype=np.uint64).astype(
            np.uint32).view(np.float32), SPECIALS])
    x[: _WHOLE // 2] = np.linspace(*FUNCTIONS[op][2], _WHOLE // 2, dtype=np.float32)
    with np.errstate(all="ignore"):
        interpreted = np.asarray(interpret(_module(cpu, _whole), f"whole_{op}", x), np.float32)
    compiled = _run("vec", op, x, cpu)
    nan = np.isnan(compiled)
    assert np.array_equal(nan, np.isnan(interpreted))
    assert np.array_equal(compiled[~nan].view(np.uint32), interpreted[~nan].view(np.uint32))


def test_no_math_op_left_and_f64_untouched():
    text = """
    func.func @f(%x: f32, %v: vector<8xf32>, %d: f64, %w: vector<4xf64>) -> (f32, f64) {
      %a = math.tanh %x : f32
      %b = math.log1p %v : vector<8xf32>
      %c = math.exp %d : f64
      %e = math.log %w : vector<4xf64>
      return %a, %c : f32, f64
    }
    """
    m = parse_module(text)
    PassManager.parse("math-polynomial-approximation").run(m)
    names = [o.name for o in m.walk()]
    assert "math.tanh" not in names and "math.log1p" not in names
    assert "math.exp" in names and "math.log" in names


def test_ops_option_restricts_and_rejects_unknown_names():
    from irkit.pass_manager import PassPipelineError
    m = parse_module("""
    func.func @f(%x: f32) -> (f32, f32) {
      %a = math.tanh %x : f32
      %b = math.exp %x : f32
      return %a, %b : f32, f32
    }
    """)
    PassManager.parse("math-polynomial-approximation{ops=exp}").run(m)
    names = [o.name for o in m.walk()]
    assert "math.tanh" in names and "math.exp" not in names
    with pytest.raises(PassPipelineError, match="unknown op 'sin'"):
        PassManager.parse("math-polynomial-approximation{ops=exp,sin}")


GRAPH = """
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %a = graph.sigmoid %x : (tensor<?xf32>) -> tensor<?xf32>
  %b = graph.softplus %x : (tensor<?xf32>) -> tensor<?xf32>
  %c = graph.gelu %x : (tensor<?xf32>) -> tensor<?xf32>
  return %a, %b, %c : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
"""


def test_sigmoid_softplus_gelu_follow():
    """The graph ops lower (lower-graph-to-loop) to exp, log1p and tanh, which the pass
    rewrites; against float64 numpy of the same formulas, measured: sigmoid 2 ulps for
    |x| < 10 (numpy's float32 body: 3; beyond, 1 / (1 + e^-x) itself is inexact for both),
    softplus 1 ulp everywhere (numpy's logaddexp: 1), gelu within 4.8e-7 absolute (its
    tanh form cancels near 1 + tanh = 0 for numpy too: 4.8e-7)."""
    m = parse_module(GRAPH)
    PassManager.parse("lower-graph-to-loop,math-polynomial-approximation").run(m)
    assert not any(o.name in ("math.exp", "math.log1p", "math.tanh") for o in m.walk())
    x = np.concatenate([np.linspace(-30, 30, N, dtype=np.float32),
                        (np.arange(N // 4, dtype=np.uint32) * 16384 + 77).view(np.float32)])
    outs = [np.empty_like(x) for _ in range(3)]
    compile_module(m, 2).f(x, *outs)
    sigmoid, softplus, gelu = outs
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        want_sigmoid = (1 / (1 + np.exp(-x64))).astype(np.float32)
        want_softplus = np.logaddexp(0, x64).astype(np.float32)
        u = np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)
        want_gelu = (0.5 * x64 * (1 + np.tanh(u))).astype(np.float32)
    small = np.abs(x) < 10
    assert ulps(sigmoid, want_sigmoid)[small].max() <= 2
    assert ulps(softplus, want_softplus).max() <= 1
    finite = np.isfinite(want_gelu)
    assert np.array_equal(np.isnan(gelu), np.isnan(want_gelu))
    assert np.abs(gelu[finite].astype(np.float64) - want_gelu[finite]).max() <= 4.8e-7


def test_interpreter_fma_rounds_once():
    """math.fma on f32 in the interpreter is one rounding, as the hardware's: the exact
    1 + 2^-11 + 2^-24 + 2^-80 rounds up, where rounding to f64 first would make a tie that
    rounds to even, an ulp low."""
    m = parse_module("""
    func.func @f(%a: f32, %b: f32, %c: f32) -> f32 {
      %r = math.fma %a, %b, %c : f32
      return %r : f32
    }
    """)
    a, c = np.float32(1 + 2 ** -12), np.float32(2.0 ** -80)
    want = np.float32(1 + 2 ** -11 + 2 ** -23)
    assert interpret(m, "f", a, a, c) == want == compile_module(m, 2).f(a, a, c)
