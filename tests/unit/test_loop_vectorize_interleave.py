"""loop-vectorize's interleaved reductions (passes/loop_vectorize.py, "Interleaving"): a
short reduction body carries `interleave` vectors of partial results, then one, then the
scalar remainder. Row lengths around every boundary of those three loops (0, 1, below one
vector, one vector, below and at `interleave * width`, one vector and one element more,
many rounds) must give what the scalar loop gives: bit for bit for `maximumf` / `minimumf`
(exactly associative, NaN wins, -0 below +0) and integer sums (wrapping), and within the
reassociation bound for f64 sums of f32 terms (each sum is off by at most n * 2^-53 *
sum|x| in either order). The oracle is the interpreter running the scalar loop, computed
before the pass; the compiled loop (LLVM) must agree with the interpreter too.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.backends.llvm_cpu import compile_module
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in

SIZES = (0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100, 1000)

#: a row reduction into a 0-d result: (element type, combining op, init)
KINDS = {
    "maximumf": ("f32", "arith.maximumf", "0xFF800000"),
    "minimumf": ("f32", "arith.minimumf", "0x7F800000"),
    "addi": ("i32", "arith.addi", "0"),
}

ROW = """
func.func @f(%a: memref<?x{t}>, %out: memref<{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant {init} : {t}
  %n = memory.dim %a, 0 : memref<?x{t}>
  %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> ({t}) {{
    %x = memory.load %a[%k] : memref<?x{t}>
    %s = {op} %acc, %x : {t}
    loop.yield %s : {t}
  }}
  memory.store %r, %out[] : memref<{t}>
  return
}}
"""

WIDE_SUM = """
func.func @f(%a: memref<?xf32>, %out: memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = arith.constant 0.0 : f64
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (f64) {
    %x = memory.load %a[%k] : memref<?xf32>
    %e = arith.extf %x : f32 to f64
    %s = arith.addf %acc, %e : f64
    loop.yield %s : f64
  }
  memory.store %r, %out[] : memref<f64>
  return
}
"""


def vectorized(src: str, options: str):
    m = parse_module(src)
    PassManager.parse(f"loop-vectorize{{{options}}}").run(m)
    return m


def run(module, x: np.ndarray, out_dtype, compiled: bool = False) -> np.ndarray:
    out = np.full((), 7, out_dtype)
    if compiled:
        compile_module(module).f(x, out)
    else:
        Interpreter(module).call(lookup_symbol_in(module, "f"), [x, out])
    return out


def rows(t: str, n: int) -> list[np.ndarray]:
    """Random rows of n elements, and for floats rows whose answer hides in one lane of
    one copy: a NaN, a +-0 tie, an infinity, at the first, a middle and the last place."""
    rng = np.random.default_rng(n)
    if t == "i32":
        return [rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)]
    base = rng.standard_normal(n).astype(np.float32)
    out = [base]
    for at in {0, n // 2, n - 1} if n else ():
        for special in (np.nan, np.inf, -np.inf):
            r = base.copy()
            r[at] = special
            out.append(r)
        zeros = np.full(n, -0.0, np.float32)
        zeros[at] = 0.0
        out.append(zeros)
    return out


def test_short_reductions_are_interleaved():
    text = str(vectorized(ROW.format(t="f32", op="arith.maximumf", init="0xFF800000"),
                          "width=8"))
    assert "vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>" in text
    one = str(vectorized(ROW.format(t="f32", op="arith.maximumf", init="0xFF800000"),
                         "width=8 interleave=1"))
    assert "vector<8xf32>, vector<8xf32>" not in one


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("interleave", [2, 4])
def test_interleaved_exact_reductions_are_bit_equal(kind, interleave):
    t, op, init = KINDS[kind]
    src = ROW.format(t=t, op=op, init=init)
    scalar = parse_module(src)
    vector = vectorized(src, f"width=8 interleave={interleave}")
    dtype = np.float32 if t == "f32" else np.int32
    for n in SIZES:
        for x in rows(t, n):
            want = run(scalar, x, dtype)
            got = run(vector, x, dtype)
            assert got.tobytes() == want.tobytes(), (kind, n, x, got, want)


def test_interleaved_wide_sums_are_within_the_reassociation_bound():
    scalar = parse_module(WIDE_SUM)
    vector = vectorized(WIDE_SUM, "width=8")
    for n in SIZES:
        spread = 10.0 ** (np.arange(n) % 7)         # magnitudes over seven decades
        x = (np.random.default_rng(n).standard_normal(n) * spread).astype(np.float32)
        want = run(scalar, x, np.float64)
        got = run(vector, x, np.float64)
        bound = 2 * n * 2.0 ** -53 * float(np.sum(np.abs(x.astype(np.float64))))
        assert abs(float(got) - float(want)) <= bound, (n, got, want)


@pytest.mark.parametrize("kind", sorted(KINDS) + ["wide_sum"])
def test_compiled_interleaved_reductions_agree_with_the_interpreter(kind):
    if kind == "wide_sum":
        src, t, dtype = WIDE_SUM, "f32", np.float64
    else:
        t, op, init = KINDS[kind]
        src = ROW.format(t=t, op=op, init=init)
        dtype = np.float32 if t == "f32" else np.int32
    vector = vectorized(src, "")                      # the host's width, interleave 4
    f = compile_module(vector).f
    for n in SIZES:
        for x in rows(t, n):
            want = run(vector, x, dtype)
            got = np.full((), 7, dtype)
            f(x, got)
            if kind == "wide_sum":
                bound = 2 * n * 2.0 ** -53 * float(np.sum(np.abs(x.astype(np.float64))))
                assert abs(float(got) - float(want)) <= bound or \
                    (np.isnan(got) and np.isnan(want)) or got == want, (n, got, want)
            else:
                assert got.tobytes() == want.tobytes(), (kind, n, x, got, want)
