"""Differential fuzzing campaign: random DSL models run by the interpreter, the JIT and a
shared library, each against a float64 numpy reference with an error bound per op; mutated
DSL and IR text against the frontends' diagnostics. A benchmark-style script: it never
asserts, it counts and reports.

    .venv/bin/python bench/fuzz_campaign.py --programs 10000 --jobs 2
    .venv/bin/python bench/fuzz_campaign.py --programs 300 --seed 7 --out build/fuzz

Algorithm (one batch of `--batch` programs is one task of a worker process):

1. Draw programs with the test suite's hypothesis generators, seeded by (seed, batch):
   `test_dsl_numpy.expr` expression trees (elementwise, reductions, softmax, where, matmul,
   transpose, broadcasting) combined into models with 1-3 random outputs (an input may be
   one), plus templates around cross_entropy, gather and one_hot with integer inputs. The
   symbolic size N is 0, 1, small or large (up to 100,003 rows).
2. Write all of the batch's models into one `.irk` file (`model m0 {...} model m1 {...}`):
   the interpreter runs each (`load_model(path, model=...)`, engine "interpreter"); one
   LLVM compile of every model's functions serves the JIT (the functions `engine="jit"`
   compiles, renamed `<model>_<fn>` as in a library); one `irkit-compile batch.irk -o
   batch.so` (in process) serves `irkit.load(batch.so, model=...)`.
3. Each program runs on 3 input sets: normal values, then two adversarial ones drawn from
   huge and tiny magnitudes (subnormals included), cancellation (1e7 + small), NaN/inf/-0,
   ties, constant 0.1 (sum accuracy) and out-of-range indices.
4. The reference is the generator's numpy closure evaluated in float64 on `Tracked` arrays,
   which carry beside each value a bound on how far any float32 evaluation of the op may
   stray from it (a running error analysis, u = 2^-24):
     add/sub     ea + eb + u|r|            mul   |a|eb + |b|ea + ea eb + u|r|
     div         (|a|eb + |b|ea) / (|b|(|b| - eb)) + u|r|    (unbounded if |b| <= eb)
     exp         e^x expm1(ex) + 4u|r|     log/log1p  ex / (y - ex) + 4u|r|
     tanh/sin/cos/abs/neg/max/min   the operands' bound (1-Lipschitz) + 4u|r|
     sum, mean, matmul over k terms  sum of bounds + g(k) u sum|terms|,
                 g(k) = min(k, 256) + 2 ceil(log2 k): blocked or pairwise accumulation
                 (numpy's) fits, float32 sequential accumulation over k >> 256 does not
     where       the chosen side's bound; either side's, plus their gap, if the
                 comparison is within the operands' bounds
   plus 2^-126 per op (flushing subnormals to zero). Where |r| + e, or a sum's sum|terms|,
   exceeds float32's largest value the bound is infinite (float32 may overflow where float64
   does not), and so is any result of an operand with an infinite bound; such elements are
   not checked (the report counts them). A checked element passes if it is within its bound, NaN
   where the reference is NaN, or the same infinity. Integers and one_hot must be exact.
5. Errors: where the reference raises (an index out of range, numpy's empty max), every
   engine must raise a clean error (ValueError or IRError) that names the op; where it
   does not, none may. Disagreement is a mismatch; any other exception is a traceback.
6. Mutants: example models mutated token by token (`test_dsl_errors.mutants`) through
   `compile_source`, and IR (`test_corruption`'s valid texts and the batch's graph IR,
   token and byte corruption) through `irkit-opt -p canonicalize,cse` in process. Each
   must succeed or give a `file:line:col: error:` diagnostic; another exception is a
   traceback.
7. A worker that dies (segfault) is a crash, one silent for `--program-timeout` seconds a
   hang; the parent names the program it was on, restarts the batch without it, and saves
   it. Every failing program is saved under `--out` (model.irk, inputs.npz, repro.txt with
   a one-line command), and a table of counts ends the run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import multiprocessing as mp
import re
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "property")]

from hypothesis import HealthCheck, Phase, given, seed as hseed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import test_corruption as tcorr  # noqa: E402
import test_dsl_errors as tdsl  # noqa: E402
import test_dsl_numpy as tdn  # noqa: E402

U = 2.0 ** -24                       # float32 unit roundoff
TINY = 2.0 ** -126                   # float32's smallest normal: the cost of flushing to zero
F32_MAX = float(np.finfo(np.float32).max)
MATH_ULPS = 4
COUNTS = {"checked": 0, "unbounded": 0}    # output elements within a finite bound, or not
EMPTY_EXTREMUM = [False]             # set by a max/min of nothing during a reference run


# ---------------------------------------------------------------------------------------------
# The reference: float64 values with a float32 error bound
# ---------------------------------------------------------------------------------------------


def _mul0(a, b):
    """a * b elementwise, with 0 * inf = 0 (an exact operand adds no error)."""
    with np.errstate(all="ignore"):
        r = np.multiply(a, b)
    return np.where((np.asarray(a) == 0) | (np.asarray(b) == 0), 0.0, r)


def _rounding(v, ulps=1):
    av = np.abs(v)
    return np.where(np.isfinite(av), ulps * U * av + TINY, 0.0)


def _gamma(k: int) -> float:
    return (min(k, 256) + 2 * math.ceil(math.log2(max(k, 1)))) * U


def _settle(v, e):
    """Unbounded where float32 may overflow; no NaN bounds."""
    with np.errstate(all="ignore"):
        e = np.where(np.isnan(e), np.inf, e)
        e = np.where(np.isfinite(v) & (np.abs(v) + e > F32_MAX), np.inf, e)
    return Tracked(v, e)


def _parts(x):
    if isinstance(x, Tracked):
        return x.v, x.e
    v = np.asarray(x, dtype=np.float64)
    if np.asarray(x).dtype.kind == "b":
        return np.asarray(x), np.zeros(v.shape)
    # a constant the compiled code holds in float32: its rounding is its error
    return v, np.abs(v - v.astype(np.float32).astype(np.float64))


class Tracked(np.lib.mixins.NDArrayOperatorsMixin):
    """A float64 array `v` with a bound `e` on |float32 evaluation - v|, elementwise; a bool
    array (a comparison) carries in `e` where it may come out the other way."""

    def __init__(self, v, e) -> None:
        self.v = np.asarray(v)
        self.e = np.broadcast_to(np.asarray(e, dtype=np.float64), self.v.shape)

    @property
    def shape(self):
        return self.v.shape

    def __getitem__(self, idx):
        return Tracked(self.v[idx], self.e[idx])

    def sum(self, axis=None, keepdims=False):
        return _reduce_sum(self, axis, keepdims, mean=False)

    def max(self, axis=None, keepdims=False):
        return self._extremum(np.max, -np.inf, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        return self._extremum(np.min, np.inf, axis, keepdims)

    def _extremum(self, fn, identity, axis, keepdims):
        """A max or min; one over an empty axis is +-inf here, and marks the run as one
        where the engines need only agree with each other (numpy has no answer)."""
        if self.v.size == 0 or (axis is not None and self.v.shape[axis] == 0):
            EMPTY_EXTREMUM[0] = True
        return Tracked(fn(self.v, axis=axis, keepdims=keepdims, initial=identity),
                       np.max(self.e, axis=axis, keepdims=keepdims, initial=0.0))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs or ufunc.__name__ not in _UFUNCS:
            return NotImplemented
        parts = [_parts(x) for x in inputs]
        with np.errstate(all="ignore"):
            r = _UFUNCS[ufunc.__name__](*parts)
        if ufunc.__name__ != "matmul":
            # an operand float32 may hold as anything (inf, NaN) makes the result anything:
            # 0 * inf is NaN, not 0
            wild = np.zeros(r.shape, bool)
            for _, e in parts:
                wild = wild | np.isinf(e)
            r = Tracked(r.v, np.where(wild, np.inf, r.e))
        return r

    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ not in _FUNCTIONS:
            return NotImplemented
        with np.errstate(all="ignore"):
            return _FUNCTIONS[func.__name__](*args, **kwargs)


def _add(a, b, sign=1.0):
    v = a[0] + sign * b[0]
    return _settle(v, a[1] + b[1] + _rounding(v))


def _mul(a, b):
    v = a[0] * b[0]
    return _settle(v, _mul0(np.abs(a[0]), b[1]) + _mul0(np.abs(b[0]), a[1]) + _mul0(a[1], b[1])
                   + _rounding(v))


def _div(a, b):
    v = a[0] / b[0]
    room = np.abs(b[0]) - b[1]
    num = _mul0(np.abs(a[0]), b[1]) + _mul0(np.abs(b[0]), a[1])
    e = np.where(num == 0, 0.0, num / (np.abs(b[0]) * room))
    return _settle(v, np.where(room > 0, e, np.inf) + _rounding(v))


def _power(a, p):
    k = float(p[0])
    v = a[0] ** k
    slope = abs(k) * (np.abs(a[0]) + a[1]) ** max(abs(k) - 1, 0)
    return _settle(v, _mul0(slope, a[1]) + _rounding(v, 2 * MATH_ULPS))


def _lipschitz(fn, cap=np.inf):
    def rule(a):
        v = fn(a[0])
        return _settle(v, np.minimum(a[1], cap) + _rounding(v, MATH_ULPS))
    return rule


def _exp(a):
    v = np.exp(a[0])
    return _settle(v, _mul0(v, np.expm1(a[1])) + _rounding(v, MATH_ULPS))


def _log_rule(fn, shift):
    def rule(a):
        v = fn(a[0])
        room = a[0] + shift - a[1]
        e = np.where(a[1] == 0, 0.0, a[1] / room)
        return _settle(v, np.where(room > 0, e, np.inf) + _rounding(v, MATH_ULPS))
    return rule


def _extreme(fn):
    def rule(a, b):
        return _settle(fn(a[0], b[0]), np.maximum(a[1], b[1]))
    return rule


def _less(a, b):
    unsure = np.abs(a[0] - b[0]) <= a[1] + b[1]
    return Tracked(a[0] < b[0], unsure.astype(np.float64))


def _matmul(a, b):
    k = a[0].shape[-1]
    v = a[0] @ b[0]
    terms = _nan_inf(np.abs(a[0]) @ np.abs(b[0]))
    e = (_nan_inf(np.abs(a[0]) @ b[1]) + _nan_inf(a[1] @ np.abs(b[0])) + a[1] @ b[1]
         + _gamma(k) * terms + _rounding(v))
    return _settle(v, np.where(terms > F32_MAX, np.inf, e))   # a partial sum may overflow


def _nan_inf(x):
    return np.where(np.isnan(x), np.inf, x)


_UFUNCS = {
    "add": _add, "subtract": lambda a, b: _add(a, b, -1.0), "multiply": _mul,
    "divide": _div, "true_divide": _div, "power": _power, "matmul": _matmul,
    "negative": lambda a: Tracked(-a[0], a[1]), "absolute": lambda a: Tracked(np.abs(a[0]), a[1]),
    "tanh": _lipschitz(np.tanh, 2.0), "sin": _lipschitz(np.sin, 2.0),
    "cos": _lipschitz(np.cos, 2.0), "exp": _exp,
    "log": _log_rule(np.log, 0.0), "log1p": _log_rule(np.log1p, 1.0),
    "maximum": _extreme(np.maximum), "minimum": _extreme(np.minimum), "less": _less,
}


def _reduce_sum(x, axis=None, keepdims=False, mean=False, dtype=None):
    v, e = _parts(x)
    k = v.size if axis is None else v.shape[axis]
    s = np.sum(v, axis=axis, keepdims=keepdims)
    terms = _nan_inf(np.sum(np.abs(v), axis=axis, keepdims=keepdims))
    err = np.sum(e, axis=axis, keepdims=keepdims) + _gamma(k) * terms
    err = np.where(terms > F32_MAX, np.inf, err)             # a partial sum may overflow
    if not mean:
        return _settle(s, err + _rounding(s))
    m = s / k if k else s * np.nan
    return _settle(m, (err / k if k else 0.0 * err) + _rounding(m))


def _where(c, a, b):
    (cv, unsure), (av, ae), (bv, be) = _parts(c), _parts(a), _parts(b)
    v = np.where(cv, av, bv)
    e = np.where(unsure > 0, np.maximum(ae, be) + np.abs(av - bv), np.where(cv, ae, be))
    return _settle(v, e)


_FUNCTIONS = {
    "sum": lambda x, axis=None, keepdims=False: _reduce_sum(x, axis, keepdims),
    "mean": lambda x, axis=None, keepdims=False: _reduce_sum(x, axis, keepdims, mean=True),
    "amax": lambda x, axis=None, keepdims=False: x.max(axis, keepdims),
    "max": lambda x, axis=None, keepdims=False: x.max(axis, keepdims),
    "amin": lambda x, axis=None, keepdims=False: x.min(axis, keepdims),
    "min": lambda x, axis=None, keepdims=False: x.min(axis, keepdims),
    "transpose": lambda x, axes=None: Tracked(np.transpose(x.v, axes), np.transpose(x.e, axes)),
    "where": _where,
}


def within_bound(got: np.ndarray, ref: Tracked) -> np.ndarray:
    """Elementwise: `got` (an engine's float32 result) agrees with the reference."""
    g = np.asarray(got, dtype=np.float64)
    v, e = ref.v.astype(np.float64), ref.e
    with np.errstate(all="ignore"):
        return (~np.isfinite(e)) | (np.isnan(v) & np.isnan(g)) | (g == v) | \
            (np.abs(g - v) <= e)


# ---------------------------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------------------------

SIZES = [0, 1, 1, 2, 3, 5, 8, 33, 1000, 100_003]
MODES = ["normal", "wide", "huge", "tiny", "cancel", "special", "ties", "const", "oob"]
MAX_ELEMENTS = 3_000_000


@dataclass
class Program:
    """One generated model: its body, inputs, and the reference of each output."""

    body: list[str]
    inputs: list[tuple[str, tuple, str]]       # name, shape ("N" symbolic), "f32" or "i32"
    outputs: list[str]
    reference: dict                            # output -> fn(env of Tracked) -> Tracked
    index_ops: dict = field(default_factory=dict)   # int input -> (op, table size, strict)

    def source(self, name: str) -> str:
        decl = [f"  input {n}: {t}[{', '.join(map(str, s))}]" if s else f"  input {n}: {t}"
                for n, s, t in self.inputs]
        return "\n".join([f"model {name} {{", *decl, *self.body,
                          f"  output {', '.join(self.outputs)}", "}"])


@st.composite
def expression_programs(draw) -> Program:
    """1-3 expressions of `test_dsl_numpy.expr` over shared inputs; the outputs a random
    non-empty, ordered choice of them and of the inputs."""
    prog = tdn.Program()
    rank = draw(st.integers(1, 3))
    body, refs = [], {}
    for i in range(draw(st.integers(1, 3))):
        shape = ("N",) + tuple(draw(st.integers(1, 4)) for _ in range(rank - 1))
        text, fn = draw(tdn.expr(prog, shape, draw(st.integers(1, 4))))
        body.append(f"  o{i} = {text}")
        refs[f"o{i}"] = fn
    if draw(st.integers(0, 9)) == 0:          # sometimes an input is an output too
        name = draw(st.sampled_from([n for n, _ in prog.inputs]))
        refs[name] = (lambda env, name=name: env[name])
    names = sorted(refs)
    outs = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True))
    if not any(o.startswith("o") for o in outs):
        outs.append("o0")
    return Program(body, [(n, s, "f32") for n, s in prog.inputs], outs,
                   {o: refs[o] for o in outs})


def _cross_entropy(x: Tracked, labels: np.ndarray) -> Tracked:
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]
    picked = x[np.arange(x.shape[0]), labels.astype(np.intp)]
    return np.mean(lse - picked, axis=0)


@st.composite
def index_programs(draw) -> Program:
    """cross_entropy, gather or one_hot of a generated expression, with integer indices."""
    prog = tdn.Program()
    kind = draw(st.sampled_from(["cross_entropy", "gather", "one_hot"]))
    c = draw(st.integers(1, 5))
    if kind == "cross_entropy":
        text, fn = draw(tdn.expr(prog, ("N", c), draw(st.integers(0, 3))))
        body = [f"  o0 = cross_entropy({text}, lab)"]
        ref = lambda env: _cross_entropy(fn(env), env["lab"].v)      # noqa: E731
        idx_shape = ("N",)
    elif kind == "gather":
        text, fn = draw(tdn.expr(prog, (c, 3), draw(st.integers(0, 3))))
        body = [f"  o0 = gather({text}, lab)"]
        ref = lambda env: fn(env)[env["lab"].v.astype(np.intp)]      # noqa: E731
        idx_shape = ("N",)
    else:
        text, fn = draw(tdn.expr(prog, ("N", c), draw(st.integers(0, 3))))
        body = [f"  o0 = one_hot(lab, {c}) * {text}"]
        ref = lambda env: Tracked(                                    # noqa: E731
            (env["lab"].v[:, None] == np.arange(c)).astype(np.float64), 0.0) * fn(env)
        idx_shape = ("N",)
    inputs = [(n, s, "f32") for n, s in prog.inputs] + [("lab", idx_shape, "i32")]
    return Program(body, inputs, ["o0"], {"o0": ref}, {"lab": (kind, c)})


@st.composite
def cases(draw):
    """A program, and its (N, input mode) triples to run."""
    prog = draw(index_programs() if draw(st.integers(0, 3)) == 0 else expression_programs())
    runs = [(draw(st.sampled_from(SIZES[1:8])), "normal")]
    for _ in range(2):
        runs.append((draw(st.sampled_from(SIZES)), draw(st.sampled_from(MODES))))
    return prog, runs, draw(st.integers(0, 2 ** 32 - 1))


def draw_batch(strategy, count: int, seed: int) -> list:
    """`count` examples of a hypothesis strategy, the same ones for the same seed."""
    out: list = []

    @hseed(seed)
    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out[:count]


def _f32_values(rng, shape, mode: str) -> np.ndarray:
    x = rng.normal(size=shape)
    if mode == "wide":
        x *= 10.0 ** rng.uniform(-40, 38, size=shape)
    elif mode == "huge":
        x *= 10.0 ** rng.uniform(30, 38.5, size=shape)
    elif mode == "tiny":
        x *= 10.0 ** rng.uniform(-45, -36, size=shape)
    elif mode == "cancel":
        x = np.where(rng.integers(0, 2, size=shape) == 0, 1e7, -1e7) + x
    elif mode == "special":
        pick = rng.integers(0, 12, size=shape)
        x = np.select([pick == 0, pick == 1, pick == 2, pick == 3, pick == 4],
                      [np.nan, np.inf, -np.inf, -0.0, 0.0], x)
    elif mode == "ties":
        x = rng.integers(-1, 3, size=shape).astype(np.float64)
    elif mode == "const":
        x = np.full(shape, 0.1)
    with np.errstate(over="ignore"):
        return x.astype(np.float32)


def make_inputs(prog: Program, n: int, mode: str, rng) -> dict:
    env = {}
    for name, shape, dtype in prog.inputs:
        concrete = tuple(n if d == "N" else d for d in shape)
        if dtype == "f32":
            env[name] = _f32_values(rng, concrete, mode)
            continue
        kind, size = prog.index_ops[name]
        idx = rng.integers(0, size, size=concrete)
        if mode == "oob" and idx.size:
            idx.flat[rng.integers(0, idx.size)] = rng.choice([size, -1, -size - 1, 2 ** 31 - 1])
        env[name] = idx.astype(np.int32)
    return env


def size_for(prog: Program, n: int) -> int:
    """N, shrunk until no input holds more than MAX_ELEMENTS elements."""
    while n > 1:
        biggest = max(int(np.prod([n if d == "N" else d for d in s])) for _, s, _ in prog.inputs)
        if biggest <= MAX_ELEMENTS:
            break
        n //= 10
    return n


def expected(prog: Program, env: dict) -> tuple[dict | None, str | None]:
    """The reference outputs; or (None, op) when the reference raises for these inputs; or
    (None, "agree") when only agreement with the interpreter can be asked."""
    for name, (kind, size) in prog.index_ops.items():
        idx = env[name]
        lo = -size if kind == "gather" else 0
        # one_hot of an index out of range is a row of zeros (as TensorFlow's), which the
        # reference computes; gather and cross_entropy raise
        if kind != "one_hot" and np.any((idx < lo) | (idx >= size)):
            return None, kind
    tracked = {k: Tracked(v.astype(np.float64), 0.0) for k, v in env.items()}
    EMPTY_EXTREMUM[0] = False
    with np.errstate(all="ignore"):
        want = {o: fn(tracked) for o, fn in prog.reference.items()}
    return (None, "agree") if EMPTY_EXTREMUM[0] else (want, None)


# ---------------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------------


def _clean(e: BaseException) -> bool:
    from irkit.diagnostics import IRError
    return isinstance(e, (ValueError, IRError))


def build_engines(path: Path, names: list[str]) -> tuple[dict, dict, list]:
    """(interpreter models, {engine: {name: model}}, [(name, engine, error)]) for the models
    of one batch file: the JIT as one LLVM module, the library through irkit-compile."""
    import irkit
    from irkit.backends.llvm_cpu import compile_module
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.exporters.library import flat_module
    from irkit.runtime.compiled import CompiledRunner, IRText, lower_model_with_graph
    from irkit.runtime.engines import CompiledEngine, expand_derivatives
    from irkit.runtime.model import Model
    text = path.read_text()
    interp = {n: Model(expand_derivatives(m))
              for n, m in model_modules(compile_source(text, str(path))).items()}
    failures, pairs = [], {}
    for n, m in model_modules(compile_source(text, str(path))).items():
        try:
            pairs[n] = lower_model_with_graph(m)
        except Exception as e:                                  # noqa: BLE001
            failures.append((n, "lowering", e))
    jm = compile_module(flat_module({n: p[1] for n, p in pairs.items()}))
    jit = {}
    for n, (graph, lowered) in pairs.items():
        fns = {k[len(n) + 1:]: f for k, f in jm.functions.items() if k.startswith(f"{n}_")}
        runner = CompiledRunner(lowered, fns, jm, graph=IRText(graph))
        jit[n] = Model.from_engine(n, CompiledEngine(runner, "jit"))
    ok = [n for n in names if n in pairs]
    lib = {}
    for _ in range(10):                 # a model the library build rejects is left out
        rc, err = _compile_library(path, text, ok)
        if rc == 0:
            lib = {n: irkit.load(path.with_suffix(".so"), model=n) for n in ok}
            break
        bad = [n for n in dict.fromkeys(re.findall(r"\b(m\d+)_\w+", err)) if n in ok]
        for n in bad or ["*"]:          # every model the compiler's messages name
            failures.append((n, "irkit-compile", RuntimeError(err)))
        if not bad:
            break
        ok = [n for n in ok if n not in bad]
    return interp, {"jit": jit, "so": lib}, failures


def _compile_library(path: Path, text: str, names: list[str]) -> tuple[int, str]:
    """`irkit-compile` (in process) of the models `names` of `text` into `path`.so."""
    from irkit.tools.compile import main as compile_main
    src = path.with_name(path.stem + "_lib.irk")
    src.write_text("\n".join(t for t in _split_models(text) if _model_name(t) in names) + "\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = compile_main([str(src), "-o", str(path.with_suffix(".so"))])
    return rc, err.getvalue().strip()


def _split_models(text: str) -> list[str]:
    return ["model " + p for p in text.split("model ")[1:]]


def _model_name(text: str) -> str:
    return text.split()[1]


# ---------------------------------------------------------------------------------------------
# One batch (in a worker)
# ---------------------------------------------------------------------------------------------


@dataclass
class Finding:
    kind: str                       # mismatch, traceback, crash, hang
    program: int                    # index in the campaign
    engine: str
    message: str
    source: str = ""
    inputs: dict = field(default_factory=dict)


def run_call(model, env: dict):
    try:
        with np.errstate(all="ignore"):
            return model.forward(**env), None
    except Exception as e:                                       # noqa: BLE001
        return None, e


def agree(first, got, exc) -> str | None:
    """None when an engine's outcome is the interpreter's (`first`: outputs or exception)."""
    if isinstance(first, BaseException) or exc is not None:
        if isinstance(first, BaseException) and exc is not None:
            return None
        said = (f"raised {type(first).__name__}: {str(first).splitlines()[0]}"
                if isinstance(first, BaseException) else "returned")
        return f"the interpreter {said}; this engine " + \
            (f"raised {type(exc).__name__}: {exc}" if exc is not None else "returned")
    for o, g in first.items():
        if np.shape(got[o]) != np.shape(g) or \
                not np.array_equal(np.asarray(got[o]), g, equal_nan=True):
            return f"output {o}: {got[o]!r} where the interpreter gives {g!r}"
    return None


def judge(prog: Program, env, want, err_op, got, exc, engine: str) -> str | None:
    """None when `engine`'s outcome agrees with the reference, else what is wrong."""
    if err_op is not None:
        if exc is None:
            return f"returned where the reference raises ({err_op})"
        if not _clean(exc):
            return None
        if err_op in ("gather", "cross_entropy", "one_hot") and err_op not in str(exc):
            return f"error does not name {err_op}: {exc}"
        return None
    if exc is not None:
        return None if not _clean(exc) else f"raised {type(exc).__name__}: {exc}"
    for o, ref in want.items():
        g = got[o]
        if np.shape(g) != ref.shape:
            return f"output {o}: shape {np.shape(g)}, expected {ref.shape}"
        ok = within_bound(g, ref)
        bounded = int(np.isfinite(ref.e).sum())
        COUNTS["checked"] += bounded
        COUNTS["unbounded"] += ref.e.size - bounded
        if not ok.all():
            i = np.argwhere(~ok)[0]
            i = tuple(i)
            return (f"output {o}: {(~ok).sum()} of {ok.size} beyond the bound, e.g. at {i}: "
                    f"{np.asarray(g)[i]!r} vs reference {ref.v[i]!r} +- {ref.e[i]:.3g}")
    return None


def run_batch(task: dict, conn) -> None:
    """Generate, build and run one batch; report progress and findings through `conn`."""
    b, k, seed, skip = task["batch"], task["size"], task["seed"], task["skip"]
    out: dict = {"programs": 0, "runs": 0, "clean_errors": 0, "findings": [],
                 "mutants": 0, "skipped": 0}
    tmp = Path(tempfile.mkdtemp(prefix=f"irkit-fuzz-{b}-"))
    try:
        conn.send(("stage", "generate", -1))
        batch = draw_batch(cases(), task["draw"], seed * 100_003 + b)[:k]
        names = [f"m{i}" for i in range(len(batch))]
        live = [i for i in range(len(batch)) if b * k + i not in skip]
        path = tmp / "batch.irk"
        path.write_text("\n".join(batch[i][0].source(names[i]) for i in live) + "\n")
        conn.send(("stage", "compile", -1))
        interp, compiled, failures = build_engines(path, [names[i] for i in live])
        for n, what, e in failures:
            i = names.index(n) if n in names else -1
            out["findings"].append(Finding("mismatch", b * k + i, what,
                                           f"{what} failed: {str(e)[:400]}",
                                           batch[i][0].source(n) if i >= 0 else ""))
        for i in live:
            pid = b * k + i
            conn.send(("stage", "run", pid))
            out["programs"] += 1
            _run_program(pid, batch[i], names[i], interp, compiled, out)
        conn.send(("stage", "mutants", -1))
        _run_mutants(task, batch, interp, out, tmp)
    except Exception:                                            # noqa: BLE001
        out["findings"].append(Finding("traceback", -1, "campaign",
                                       traceback.format_exc()[-1500:]))
    out.update(COUNTS)
    conn.send(("done", out, None))


def _run_program(pid, case, name, interp, compiled, out) -> None:
    prog, runs, seed = case
    rng = np.random.default_rng(seed)
    for n, mode in runs:
        n = size_for(prog, n)
        env = make_inputs(prog, n, mode, rng)
        want, err_op = expected(prog, env)
        engines = [("interpreter", interp.get(name))] + \
            [(e, compiled[e].get(name)) for e in ("jit", "so")]
        first = None
        for engine, model in engines:
            if model is None:
                continue
            out["runs"] += 1
            got, exc = run_call(model, env)
            if exc is not None and _clean(exc):
                out["clean_errors"] += 1
            if exc is not None and not _clean(exc):
                msg = "".join(traceback.format_exception(exc))[-1200:]
                out["findings"].append(Finding("traceback", pid, engine, msg,
                                               prog.source(name), env))
                continue
            if engine == "interpreter":
                first = exc if exc is not None else got
            if err_op == "agree":
                problem = agree(first, got, exc) if first is not None else None
            else:
                problem = judge(prog, env, want, err_op, got, exc, engine)
            if problem:
                out["findings"].append(Finding("mismatch", pid, engine,
                                               f"N={n} inputs={mode}: {problem}",
                                               prog.source(name), env))


_HEAD = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: ", re.M)


#: a TimeoutError after that many seconds (the corruption test's guard against a hang)
_alarm = tcorr.time_limit


def _run_mutants(task: dict, batch, interp, out: dict, tmp: Path) -> None:
    from irkit.frontend.dsl import DSLError, compile_source
    from irkit.printer import print_op
    from irkit.tools.opt import main as opt_main
    count = task["mutants"]
    seed = task["seed"] * 100_003 + task["batch"]
    for name, text in draw_batch(tdsl.mutants(), count, seed):
        out["mutants"] += 1
        try:
            with _alarm(20):
                compile_source(text, name)
        except DSLError as e:
            if not _HEAD.match(str(e)):
                out["findings"].append(Finding("mismatch", -1, "dsl-mutant",
                                               f"unlocated: {str(e)[:300]}", text))
        except TimeoutError:
            out["findings"].append(Finding("hang", -1, "dsl-mutant", "compile_source", text))
        except Exception:                                        # noqa: BLE001
            out["findings"].append(Finding("traceback", -1, "dsl-mutant",
                                           traceback.format_exc()[-1200:], text))
    graph_ir = [print_op(m.module) for m in list(interp.values())[:3]]

    @st.composite
    def ir_mutants(draw):
        text = draw(st.sampled_from(graph_ir) if graph_ir and draw(st.booleans())
                    else tcorr.valid_texts())
        corrupt = tcorr.token_corruption if draw(st.booleans()) else tcorr.byte_corruption
        return draw(corrupt(text))

    f = tmp / "mutant.mlir"
    for text in draw_batch(ir_mutants(), count, seed + 1):
        out["mutants"] += 1
        f.write_text(text, encoding="utf-8", errors="surrogatepass")
        err = io.StringIO()
        try:
            with _alarm(20), contextlib.redirect_stderr(err), \
                    contextlib.redirect_stdout(io.StringIO()):
                rc = opt_main([str(f), "-p", "canonicalize,cse", "--allow-unregistered-dialect",
                               "-o", str(tmp / "out.mlir")])
            if rc != 0 and not _HEAD.search(err.getvalue()):
                out["findings"].append(Finding("mismatch", -1, "irkit-opt",
                                               f"rc {rc}, unlocated: {err.getvalue()[:300]}",
                                               text))
        except TimeoutError:
            out["findings"].append(Finding("hang", -1, "irkit-opt", "irkit-opt", text))
        except BaseException:                                    # noqa: BLE001
            out["findings"].append(Finding("traceback", -1, "irkit-opt",
                                           traceback.format_exc()[-1200:], text))


# ---------------------------------------------------------------------------------------------
# The campaign (parent): workers, crashes, hangs, the report
# ---------------------------------------------------------------------------------------------


def _worker(task, conn) -> None:
    run_batch(task, conn)
    conn.close()


def campaign(args) -> int:
    ctx = mp.get_context("fork")
    batches = math.ceil(args.programs / args.batch)
    queue = [{"batch": b, "size": min(args.batch, args.programs - b * args.batch),
              "seed": args.seed, "skip": set(), "mutants": args.mutants, "draw": args.batch}
             for b in range(batches)]
    totals = {"programs": 0, "runs": 0, "clean_errors": 0, "mutants": 0, "checked": 0,
              "unbounded": 0}
    findings: list[Finding] = []
    running: dict = {}
    start = time.time()
    out_dir = Path(args.out)
    while queue or running:
        while queue and len(running) < args.jobs and time.time() - start < args.time_limit:
            task = queue.pop(0)
            parent, child = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_worker, args=(task, child), daemon=True)
            p.start()
            child.close()
            running[parent] = {"p": p, "task": task, "stage": "start", "pid": -1,
                               "since": time.time(), "done": False}
        if not running:
            break
        for conn in wait(list(running), timeout=1.0):
            r = running[conn]
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                _finish(r, conn, running, queue, findings, args)
                continue
            if msg[0] == "stage":
                r["stage"], r["pid"], r["since"] = msg[1], msg[2], time.time()
            else:
                result = msg[1]
                for key in totals:
                    totals[key] += result[key]
                findings.extend(result["findings"])
                r["done"] = True
                _finish(r, conn, running, queue, findings, args)
        for conn, r in list(running.items()):
            limit = args.program_timeout * (4 if r["stage"] in ("compile", "mutants") else 1)
            if time.time() - r["since"] > limit:
                r["p"].kill()
                r["hung"] = True
                _finish(r, conn, running, queue, findings, args)
        done = totals["programs"]
        if args.progress and done:
            rate = done / (time.time() - start) * 60
            print(f"\r{done} programs, {len(findings)} findings, {rate:.0f}/min",
                  end="", file=sys.stderr, flush=True)
    elapsed = time.time() - start
    if args.progress:
        print(file=sys.stderr)
    report(totals, findings, elapsed, out_dir, args)
    return 0


def _finish(r, conn, running, queue, findings, args) -> None:
    """A worker is over: if it died or hung, count that, and requeue its batch without the
    program it was on (a crash while compiling loses the batch)."""
    r["p"].join(timeout=5)
    del running[conn]
    conn.close()
    if r["done"]:
        return
    kind = "hang" if r.get("hung") else "crash"
    code = r["p"].exitcode
    task = r["task"]
    what = f"{kind} during {r['stage']} (exit code {code}) of batch {task['batch']}"
    findings.append(Finding(kind, r["pid"], r["stage"], what))
    if r["pid"] >= 0:
        queue.append({**task, "skip": task["skip"] | {r["pid"]}})


def report(totals: dict, findings: list[Finding], elapsed: float, out_dir: Path, args) -> None:
    counts = {k: sum(1 for f in findings if f.kind == k)
              for k in ("mismatch", "traceback", "crash", "hang")}
    rows = [("programs", totals["programs"]), ("engine runs", totals["runs"]),
            ("clean errors (agreed or not)", totals["clean_errors"]),
            ("output elements checked", totals["checked"]),
            ("  unbounded (may overflow)", totals["unbounded"]),
            ("mutants (DSL + IR)", totals["mutants"]),
            ("mismatches", counts["mismatch"]), ("tracebacks", counts["traceback"]),
            ("crashes", counts["crash"]), ("hangs", counts["hang"]),
            ("seconds", round(elapsed, 1)),
            ("programs / minute", round(totals["programs"] / max(elapsed, 1e-9) * 60))]
    print(f"\nfuzz campaign: --programs {args.programs} --seed {args.seed} "
          f"--batch {args.batch} --jobs {args.jobs}")
    for name, value in rows:
        print(f"  {name:<30} {value:>10}")
    if not findings:
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    groups: dict = {}
    for f in findings:
        text = f.message.splitlines()[-1] if f.kind == "traceback" else f.message
        text = re.sub(r"^N=\d+ inputs=\w+: |\S*/\S*", "", text)
        sig = (f.kind, f.engine, re.sub(r"[-+0-9.e]+|'[^']*'|array\(.*", "#", text)[:80])
        groups.setdefault(sig, []).append(f)
    print(f"\n{len(groups)} distinct findings (saved under {out_dir}/):")
    for (kind, engine, _), fs in sorted(groups.items(), key=lambda g: -len(g[1])):
        f = fs[0]
        d = save(f, out_dir, args)
        print(f"  {len(fs):>5} x {kind} [{engine}] {f.message.splitlines()[-1][:150]}\n"
              f"          {d}/repro.txt")


def save(f: Finding, out_dir: Path, args) -> Path:
    d = out_dir / f"{f.kind}-{f.engine}-p{f.program}"
    d.mkdir(parents=True, exist_ok=True)
    if f.source:
        (d / ("model.irk" if f.program >= 0 else "input.txt")).write_text(f.source)
    if f.inputs:
        np.savez(d / "inputs.npz", **f.inputs)
    name = _model_name(f.source) if f.source.startswith("model ") else None
    lines = [f.message, ""]
    if f.program >= 0:
        lines.append(f".venv/bin/python bench/fuzz_campaign.py --seed {args.seed} "
                     f"--batch {args.batch} --only {f.program}")
    if name and f.inputs:
        engine = {"so": "jit", "interpreter": "interpreter"}.get(f.engine, "jit")
        lines.append(f".venv/bin/python -c \"import irkit, numpy as np; "
                     f"d = dict(np.load('{d}/inputs.npz')); m = irkit.load_model('{d}/model.irk', "
                     f"model='{name}', engine='{engine}'); print(m.forward(**d))\"")
    (d / "repro.txt").write_text("\n".join(lines) + "\n")
    return d


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=50, help="models per .irk file")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--mutants", type=int, default=20,
                    help="DSL mutants and IR mutants per batch (each)")
    ap.add_argument("--time-limit", type=float, default=3600.0,
                    help="seconds after which no new batch starts")
    ap.add_argument("--program-timeout", type=float, default=60.0,
                    help="seconds one program may run before it counts as a hang")
    ap.add_argument("--out", default="build/fuzz", help="where failing programs are saved")
    ap.add_argument("--only", type=int, default=None,
                    help="rerun one program (its index in the campaign) and print findings")
    ap.add_argument("--no-progress", dest="progress", action="store_false")
    args = ap.parse_args(argv)
    if args.only is not None:
        return rerun_one(args)
    return campaign(args)


def rerun_one(args) -> int:
    """Regenerate the batch of program `--only` and run that program alone, in process."""
    b, i = divmod(args.only, args.batch)
    case = draw_batch(cases(), args.batch, args.seed * 100_003 + b)[i]
    tmp = Path(tempfile.mkdtemp(prefix="irkit-fuzz-one-"))
    path = tmp / "batch.irk"
    path.write_text(case[0].source(f"m{i}") + "\n")
    print(path.read_text())
    out = {"programs": 0, "runs": 0, "clean_errors": 0, "findings": []}
    interp, compiled, failures = build_engines(path, [f"m{i}"])
    for n, what, e in failures:
        print(f"{what} failed: {e}")
    _run_program(args.only, case, f"m{i}", interp, compiled, out)
    for f in out["findings"]:
        print(f"{f.kind} [{f.engine}] {f.message}")
    print(f"{len(out['findings'])} findings in {out['runs']} engine runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
