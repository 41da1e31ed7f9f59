"""Math on the GPU through libdevice: every `math` op compiles for NVPTX (and ptxas accepts
the result) in f16, f32 and f64, and libdevice's f32 functions -- the very bitcode the
kernels link -- are as accurate as CUDA documents, measured against numpy in float64 with
the functions compiled for this CPU (tests/libdevice_host.py: the nvvm intrinsics they use
emulated, the hardware approximations correctly rounded)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irkit.backends.nvptx import emit_ptx, find_libdevice, find_ptxas, ptxas
from irkit.backends.nvptx.libdevice import MATH_FUNCTIONS
from irkit.dialects import register_all
from irkit.parser import parse_module

register_all()
pytestmark = pytest.mark.skipif(find_libdevice() is None, reason="libdevice is not installed")

_BINARY = ("math.powf", "math.copysign", "math.atan2")
_TERNARY = ("math.fma",)


def _all_math_kernel(t: str) -> str:
    """One kernel applying every math op with a libdevice rule to element 0 of `%a`."""
    lines = ["%c0 = arith.constant 0 : index", f"%x = memory.load %a[%c0] : memref<4x{t}>",
             "%n = arith.constant 3 : i32", f"%p = math.fpowi %x, %n : {t}, i32",
             f"%s, %c = math.sincos %x : {t}"]
    for i, op in enumerate(MATH_FUNCTIONS):
        operands = ", ".join(["%x"] * (2 if op in _BINARY else 3 if op in _TERNARY else 1))
        lines += [f"%r{i} = {op} {operands} : {t}",
                  f"memory.store %r{i}, %a[%c0] : memref<4x{t}>"]
    body = "\n      ".join(lines)
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m {{
    gpu.func @k(%a: memref<4x{t}>) kernel {{
      {body}
      gpu.return
    }}
  }}
}}"""


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_every_math_op_compiles_for_nvptx(t):
    ptx, _ = emit_ptx(parse_module(_all_math_kernel(t), "math.mlir"))
    assert "__nv_" not in ptx and ".extern" not in ptx     # libdevice linked in, inlined
    if find_ptxas() is not None:
        ptxas(ptx, "sm_90")


#: function -> (domain (lo, hi), float64 reference, CUDA's documented bound in ulp): the
#: CUDA C Programming Guide's table of single-precision functions (sqrtf is IEEE: 0.5)
ACCURACY = {
    "exp": ((-87, 88), np.exp, 2), "exp2": ((-126, 127), np.exp2, 2),
    "log": ((1e-30, 1e30), np.log, 1), "log2": ((1e-30, 1e30), np.log2, 1),
    "log10": ((1e-30, 1e30), np.log10, 2), "tanh": ((-30, 30), np.tanh, 2),
    "sqrt": ((0, 1e30), np.sqrt, 0.5), "erf": ((-5, 5), np.vectorize(math.erf), 2),
    "erfc": ((-5, 10), np.vectorize(math.erfc), 4), "log1p": ((-0.99, 1e10), np.log1p, 1),
    "expm1": ((-80, 88), np.expm1, 1), "atan": ((-30, 30), np.arctan, 2),
    "asin": ((-1, 1), np.arcsin, 2), "acos": ((-1, 1), np.arccos, 2),
    "sinh": ((-88, 88), np.sinh, 3), "cosh": ((-88, 88), np.cosh, 2),
    "asinh": ((-30, 30), np.arcsinh, 3), "acosh": ((1, 1e10), np.arccosh, 4),
    "atanh": ((-0.999, 0.999), np.arctanh, 3), "cbrt": ((-30, 30), np.cbrt, 1),
}


def _sample(lo: float, hi: float, n: int, rng) -> np.ndarray:
    """`n` f32 points of [lo, hi], log-uniform over wide positive ranges, plus the ends."""
    if lo > 0 and hi / lo > 1e6:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    else:
        x = rng.uniform(lo, hi, n)
    return np.concatenate([x, [lo, hi]]).astype(np.float32)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    ok = np.isfinite(want) & (np.abs(want) < np.finfo(np.float32).max)
    spacing = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
    return np.abs(got[ok].astype(np.float64) - want[ok]) / spacing


@pytest.fixture(scope="module")
def host_libdevice():
    from tests.libdevice_host import host_functions
    fns, missing = host_functions(list(ACCURACY) + ["pow", "atan2"])
    assert not missing, f"not emulated: {missing}"
    return fns


@pytest.mark.parametrize("name", list(ACCURACY))
def test_unary_accuracy_against_numpy(host_libdevice, name):
    (lo, hi), reference, bound = ACCURACY[name]
    x = _sample(lo, hi, 2000, np.random.default_rng(len(name)))
    fn = host_libdevice[name]
    got = np.array([fn(float(v)) for v in x], np.float32)
    err = _ulps(got, reference(x.astype(np.float64)))
    assert err.max() <= bound, f"{name}f: {err.max():.2f} ulp at most, CUDA says {bound}"


@pytest.mark.parametrize("name, reference, bound", [("pow", np.power, 4),
                                                     ("atan2", np.arctan2, 3)])
def test_binary_accuracy_against_numpy(host_libdevice, name, reference, bound):
    rng = np.random.default_rng(7)
    x = rng.uniform(0 if name == "pow" else -30, 30, 2000).astype(np.float32)
    y = rng.uniform(-5, 5, 2000).astype(np.float32)
    fn = host_libdevice[name]
    got = np.array([fn(float(a), float(b)) for a, b in zip(x, y)], np.float32)
    err = _ulps(got, reference(x.astype(np.float64), y.astype(np.float64)))
    assert err.max() <= bound, f"{name}f: {err.max():.2f} ulp at most, CUDA says {bound}"


def test_special_values(host_libdevice):
    """IEEE special cases as numpy has them: infinities, NaN, signed zero, subnormals kept
    (no flushing: `__nvvm_reflect("__CUDA_FTZ")` is 0)."""
    exp, log, tanh, sqrt = (host_libdevice[n] for n in ("exp", "log", "tanh", "sqrt"))
    assert exp(float("-inf")) == 0.0 and exp(float("inf")) == float("inf")
    assert log(0.0) == float("-inf") and math.isnan(log(-1.0))
    assert tanh(float("inf")) == 1.0 and math.copysign(1.0, tanh(-0.0)) == -1.0
    assert exp(-100.0) == pytest.approx(float(np.float32(np.exp(-100.0))), rel=1e-6)
    assert sqrt(1e-40) == pytest.approx(1e-20, rel=1e-6)
