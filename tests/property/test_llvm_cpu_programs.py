"""Compiled code computes what the interpreter computes, on random programs (hypothesis).

1. Random arith/math programs (`programs.programs`, the pass-soundness generator). The LLVM
   backend compiles loop-level code (scalars, vectors, memrefs), not value-semantics
   tensors, so each static `tensor<...>` becomes the `vector<...>` of the same shape (the
   ops are elementwise either way) and functions over the dynamic `tensor<?xf64>` are left
   out (a caller of one has such a value too, so it goes as well). Every remaining public
   function runs compiled (at -O0 and -O2) and interpreted, on the checker's random inputs
   and on inputs salted with NaN, infinities and signed zeros.

   Which results must agree bit for bit: everything computed by exactly rounded operations
   (IEEE arithmetic, min/max, comparisons, conversions, rounding, integer ops), where both
   sides are specified to the bit. A value downstream of a C-library function (exp, sin,
   pow, erf, ...) may differ by an ulp, since the interpreter rounds the f64 result once
   and the C library computes in the type itself, and later ops may magnify that: such
   floats are compared within a tolerance and such integers (a comparison of nearly equal
   values can flip) not at all. `math.copysign` counts as inexact too, because it shows the
   sign of a NaN, which IEEE leaves unspecified (LLVM's constant folder and the x86
   instructions pick different signs).

2. Loop programs over memrefs: elementwise binary ops and sums over 2-D buffers of random
   sizes, as `loop.for` or `loop.parallel` nests, scalar or vectorized by 4 with a scalar
   tail, on contiguous buffers or strided numpy views (negative steps included), parallel
   loops on one thread or several, against numpy and the interpreter.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from irkit.interpreter import interpret
from irkit.numeric_check import make_inputs
from irkit.parser import parse_module
from irkit.symbols import lookup_symbol_in
from irkit.backends.llvm_cpu import compile_module
from programs import programs

import irkit.dialects.memory  # noqa: F401

PROGRAMS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
KERNELS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: ops whose f32/f64 results the C library computes to within an ulp or so (and copysign,
#: which exposes NaN signs; fma, which the interpreter rounds twice)
INEXACT = frozenset(
    "math." + n for n in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                          "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2",
                          "asinh", "acosh", "atanh", "erf", "erfc", "cbrt", "powf", "fpowi",
                          "fma", "copysign", "sincos"))


def loop_level(text: str) -> tuple[str, list[str]]:
    """The program with static tensors as vectors and without dynamic-tensor functions."""
    kept = [f for f in text.split("\n\n") if "tensor<?" not in f]
    return "\n\n".join(kept).replace("tensor<", "vector<") + "\n", [
        f.split("@", 1)[1].split("(", 1)[0] for f in kept if not f.startswith("func.func private")]


def inexact_results(module, name: str, memo: dict | None = None) -> list[bool]:
    """Per result of `@name`: whether it may depend on an inexact op (see the docstring)."""
    memo = {} if memo is None else memo
    if name in memo:
        return memo[name]
    fn = lookup_symbol_in(module, name)
    tainted: set = set()
    for op in fn.walk():
        if op.name == "func.return":
            memo[name] = [v in tainted for v in op.operands]
            continue
        dirty = op.name in INEXACT or any(v in tainted for v in op.operands)
        if op.name == "func.call":
            callee = op.properties["callee"].root
            dirty = dirty or any(inexact_results(module, callee, memo)) or \
                any(o.name in INEXACT for o in lookup_symbol_in(module, callee).walk())
        if dirty:
            tainted.update(op.results)
    return memo[name]


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -3.5, 1e-3])


def salted(values: list, rng: np.random.Generator) -> list:
    """`values` with about half of the float elements replaced by special values."""
    out = []
    for v in values:
        a = np.asarray(v)
        if a.dtype.kind == "f":
            pick = SPECIALS[rng.integers(0, len(SPECIALS), size=a.shape)].astype(a.dtype)
            a = np.where(rng.random(size=a.shape) < 0.5, pick, a).astype(a.dtype)
            v = a[()] if a.ndim == 0 else a
        out.append(v)
    return out


def agree(got, want, loose: bool, where: str) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, where
    if w.dtype.kind != "f":
        assert loose or np.array_equal(g, w), where
        return
    if loose:
        assert np.allclose(g, w, rtol=1e-3, atol=1e-5, equal_nan=True) or \
            not np.all(np.isfinite(w)), where
        return
    nan = np.isnan(w)
    assert np.array_equal(np.isnan(g), nan), where
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[w.dtype.itemsize]
    assert np.array_equal(np.where(nan, 0, g).view(bits), np.where(nan, 0, w).view(bits)), where


@pytest.mark.parametrize("opt_level", [0, 2])
@PROGRAMS
@given(program=programs(), seed=st.integers(0, 2 ** 32 - 1))
def test_random_programs_compile_to_what_the_interpreter_computes(opt_level, program, seed):
    text, entries = loop_level(program[0])
    assume(entries)
    module = parse_module(text, filename="<generated>")
    module.verify()
    jit = compile_module(module, opt_level)
    rng = np.random.default_rng(seed)
    for name in entries:
        fn = lookup_symbol_in(module, name)
        loose = inexact_results(module, name)
        plain = make_inputs(fn, rng)
        for args in (plain, salted(plain, rng)):
            with np.errstate(all="ignore"):
                want = interpret(module, name, *args)
            got = jit[name](*args)
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            for i, (g, w) in enumerate(zip(got, want)):
                agree(g, w, loose[i], f"@{name} result #{i} on {args}\n{text}")


# ----- loop programs over memrefs ---------------------------------------------------------------

_DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
_OPS = {"add": ("arith.addf", "arith.addi", np.add), "sub": ("arith.subf", "arith.subi",
                                                              np.subtract),
        "mul": ("arith.mulf", "arith.muli", np.multiply),
        "max": ("arith.maximumf", "arith.maxsi", np.maximum),
        "min": ("arith.minimumf", "arith.minsi", np.minimum)}


def _memref(t: str, strided: bool) -> str:
    return f"memref<?x?x{t}, strided<[?, ?], offset: ?>>" if strided else f"memref<?x?x{t}>"


def elementwise_kernel(t: str, op: str, strided: bool, parallel: bool, vector: bool) -> str:
    """`c = a op b` over 2-D buffers: a loop.for or loop.parallel nest; with `vector`, the
    inner loop takes 4 elements at a time and a scalar loop does the rest."""
    arith = _OPS[op][0 if t.startswith("f") else 1]
    m = _memref(t, strided)

    def body(j: str, vt: str, load: str, store: str) -> str:
        return f"""
        %x = {load} %a[%i, {j}] : {m}{vt}
        %y = {load} %b[%i, {j}] : {m}{vt}
        %z = {arith} %x, %y : {vt[2:] or t}
        {store} %z, %c[%i, {j}] : {m}{vt}"""
    scalar = body("%j", "", "memory.load", "memory.store")
    if vector:
        vec = body("%j", f", vector<4x{t}>", "memory.vector_load", "memory.vector_store")
        inner = f"""
        %c4 = arith.constant 4 : index
        %tail = arith.remui %cols, %c4 : index
        %main = arith.subi %cols, %tail : index
        loop.for %j = %c0 to %main step %c4 {{{vec}
        }}
        loop.for %j = %main to %cols step %c1 {{{scalar}
        }}"""
    else:
        inner = f"""
        loop.for %j = %c0 to %cols step %c1 {{{scalar}
        }}"""
    if parallel and not vector:
        nest = f"""
      loop.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {{{scalar}
      }}"""
    elif parallel:
        nest = f"""
      loop.parallel (%i) = (%c0) to (%rows) step (%c1) {{{inner}
      }}"""
    else:
        nest = f"""
      loop.for %i = %c0 to %rows step %c1 {{{inner}
      }}"""
    return f"""
    func.func @kernel(%a: {m}, %b: {m}, %c: {m}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = memory.dim %a, 0 : {m}
      %cols = memory.dim %a, 1 : {m}{nest}
      return
    }}"""


def sum_kernel(t: str, strided: bool) -> str:
    m = _memref(t, strided)
    zero = "0.0" if t.startswith("f") else "0"
    add = "arith.addf" if t.startswith("f") else "arith.addi"
    return f"""
    func.func @kernel(%a: {m}) -> {t} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant {zero} : {t}
      %rows = memory.dim %a, 0 : {m}
      %cols = memory.dim %a, 1 : {m}
      %s = loop.for %i = %c0 to %rows step %c1 iter_args(%acc = %z) -> ({t}) {{
        %r = loop.for %j = %c0 to %cols step %c1 iter_args(%x = %acc) -> ({t}) {{
          %v = memory.load %a[%i, %j] : {m}
          %y = {add} %x, %v : {t}
          loop.yield %y : {t}
        }}
        loop.yield %r : {t}
      }}
      return %s : {t}
    }}"""


@st.composite
def buffers(draw, t: str, count: int, strided: bool):
    """`count` 2-D arrays of one random shape: contiguous, or strided views of bigger ones."""
    rows, cols = draw(st.integers(0, 7)), draw(st.integers(0, 19))
    dtype = _DTYPES[t]
    out = []
    for _ in range(count):
        if strided:
            si, sj = draw(st.sampled_from([1, 2, -1, -3])), draw(st.sampled_from([1, 2, -2]))
            big = np.zeros((rows * abs(si) + 1, cols * abs(sj) + 2), dtype)
            oi, oj = (0 if si > 0 else big.shape[0] - 1), (1 if sj > 0 else big.shape[1] - 1)
            view = big[oi::si, oj::sj][:rows, :cols]
        else:
            view = np.zeros((rows, cols), dtype)
        if t.startswith("f"):
            elems = st.floats(-1e3, 1e3, width=32)
        else:
            bound = 2 ** 31 - 1 if t == "i32" else 2 ** 62
            elems = st.integers(-bound, bound)
        values = draw(st.lists(elems, min_size=rows * cols, max_size=rows * cols))
        view[...] = np.array(values, dtype).reshape(rows, cols)
        out.append(view)
    return out


def twin(view: np.ndarray) -> np.ndarray:
    """A copy of `view` that is laid out the same way (a view of a copy of its base)."""
    if view.base is None:
        return view.copy()
    base = view.base.copy()
    start = view.__array_interface__["data"][0] - view.base.__array_interface__["data"][0]
    return np.ndarray(view.shape, view.dtype, buffer=base, offset=start, strides=view.strides)


@pytest.mark.parametrize("opt_level", [0, 2, 3])
@KERNELS
@given(data=st.data())
def test_elementwise_loops_over_memrefs(opt_level, data):
    t = data.draw(st.sampled_from(sorted(_DTYPES)))
    op = data.draw(st.sampled_from(sorted(_OPS)))
    strided, parallel = data.draw(st.booleans()), data.draw(st.booleans())
    vector = not strided and data.draw(st.booleans())
    src = textwrap.dedent(elementwise_kernel(t, op, strided, parallel, vector))
    module = parse_module(src)
    a, b, c = data.draw(buffers(t, 3, strided))
    mine, ref = twin(c), twin(c)
    threads = data.draw(st.sampled_from([1, 3])) if parallel else 1
    compile_module(module, opt_level, threads=threads).kernel(a, b, mine)
    interpret(module, "kernel", a, b, ref)
    with np.errstate(over="ignore"):
        expect = _OPS[op][2](a, b)
    assert np.array_equal(mine, expect) and np.array_equal(ref, expect), src


@pytest.mark.parametrize("opt_level", [0, 2])
@KERNELS
@given(data=st.data())
def test_sums_over_memrefs(opt_level, data):
    t = data.draw(st.sampled_from(sorted(_DTYPES)))
    strided = data.draw(st.booleans())
    module = parse_module(textwrap.dedent(sum_kernel(t, strided)))
    (a,) = data.draw(buffers(t, 1, strided))
    got = compile_module(module, opt_level).kernel(a)
    want = interpret(module, "kernel", a)
    assert type(got) is type(want) and (got == want), (got, want)   # same order: same sum
    if t.startswith("f"):
        assert np.isclose(got, a.sum(dtype=np.float64), rtol=1e-4, atol=1e-2)
    else:
        with np.errstate(over="ignore"):
            assert got == a.sum(dtype=_DTYPES[t])
