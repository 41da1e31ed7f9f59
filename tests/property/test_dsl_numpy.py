"""Random DSL programs mean what numpy says they mean.

hypothesis draws an expression tree over the elementwise, reduction, matmul and shape
builtins, at a random result shape whose first axis is the symbolic dimension `N`. Each node
is generated for a target shape, so every program is well-typed by construction: an operand
of a binary op gets the target shape or one that broadcasts to it, a reduction's operand
has an extra axis that the reduction removes, a matmul's operands share a fresh inner size.
The tree is rendered twice: as DSL text (compiled and run by the interpreter) and as a numpy
closure written here, independently of the graph dialect's kernels. Both must agree at a
random runtime value of N. The same program also goes through `canonicalize,cse`, which must
not change the results either.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import irkit
from irkit.frontend.dsl import model_modules
from irkit.runtime.model import Model

_UNARY = {
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "softplus": lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "exp": lambda x: np.exp(np.tanh(x)),        # rendered as exp(tanh(..)): stays finite
}
_BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply}
_CALL2 = {"maximum": np.maximum, "minimum": np.minimum}
_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}


class Program:
    """Collects the inputs a generated expression needs."""

    def __init__(self) -> None:
        self.inputs: list[tuple[str, tuple]] = []

    def new_input(self, shape: tuple) -> str:
        name = f"in{len(self.inputs)}"
        self.inputs.append((name, shape))
        return name


def _dims(shape) -> str:
    return "f32[" + ", ".join(map(str, shape)) + "]" if shape else "f32"


@st.composite
def _broadcast_source(draw, shape):
    """A shape that broadcasts to `shape`: some leading axes dropped, some axes set to 1."""
    drop = draw(st.integers(0, len(shape)))
    out = list(shape[drop:])
    for i in range(len(out)):
        if draw(st.booleans()) and draw(st.booleans()):
            out[i] = 1
    return tuple(out)


@st.composite
def expr(draw, prog: Program, shape: tuple, depth: int):
    """(DSL text, numpy function of the input dict) with a result of exactly `shape`, or of a
    shape that broadcasts to it when `exact` is not needed (only at leaves)."""
    kinds = ["input"]
    if depth > 0:
        kinds += ["unary", "binary", "call2", "reduce", "softmax", "where"]
        if len(shape) >= 2:
            kinds += ["matmul", "transpose"]
    kind = draw(st.sampled_from(kinds))
    if kind == "input":
        name = prog.new_input(shape)
        return name, lambda env: env[name]
    if kind == "unary":
        fn = draw(st.sampled_from(sorted(_UNARY)))
        t, f = draw(expr(prog, shape, depth - 1))
        text = f"exp(tanh({t}))" if fn == "exp" else f"{fn}({t})"
        return text, lambda env: _UNARY[fn](f(env))
    if kind in ("binary", "call2"):
        table = _BINARY if kind == "binary" else _CALL2
        op = draw(st.sampled_from(sorted(table)))
        a, fa = draw(expr(prog, shape, depth - 1))
        if draw(st.booleans()):
            c = draw(st.sampled_from([0.5, 2.0, -1.5]))
            b, fb = repr(c), (lambda env, c=c: np.float32(c))
        else:
            b, fb = draw(expr(prog, draw(_broadcast_source(shape)), depth - 1))
        if draw(st.booleans()):
            a, fa, b, fb = b, fb, a, fa
        text = f"({a} {op} {b})" if kind == "binary" else f"{op}({a}, {b})"
        return text, lambda env: table[op](fa(env), fb(env))
    if kind == "reduce":
        fn = draw(st.sampled_from(sorted(_REDUCE)))
        axis = draw(st.integers(0, len(shape)))
        size = draw(st.integers(1, 4))
        keep = draw(st.booleans())
        inner = shape[:axis] + (size,) + shape[axis:]
        t, f = draw(expr(prog, inner, depth - 1))
        if keep:
            # keepdims leaves a 1 at `axis`; a reshape-free way back is to index it away.
            idx = ", ".join([":"] * axis + ["0"])
            text = f"{fn}({t}, axis={axis}, keepdims=true)[{idx}]"
        else:
            text = f"{fn}({t}, axis={axis})"
        return text, lambda env: _REDUCE[fn](f(env), axis=axis)
    if kind == "softmax":
        axis = draw(st.integers(0, max(len(shape) - 1, 0))) if shape else None
        if axis is None:
            return draw(expr(prog, shape, depth - 1))
        t, f = draw(expr(prog, shape, depth - 1))

        def softmax(env):
            x = f(env)
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        return f"softmax({t}, axis={axis})", softmax
    if kind == "where":
        a, fa = draw(expr(prog, shape, depth - 1))
        b, fb = draw(expr(prog, shape, depth - 1))
        return (f"where({a} < {b}, {a}, {b})",
                lambda env: np.where(fa(env) < fb(env), fa(env), fb(env)))
    if kind == "matmul":
        k = draw(st.integers(1, 4))
        a, fa = draw(expr(prog, shape[:-1] + (k,), depth - 1))
        name = prog.new_input((k, shape[-1]))
        return f"({a} @ {name})", lambda env: fa(env) @ env[name]
    # transpose: the operand has the axes permuted by the inverse permutation
    perm = draw(st.permutations(range(len(shape))))
    inv = [perm.index(i) for i in range(len(shape))]
    t, f = draw(expr(prog, tuple(shape[i] for i in inv), depth - 1))
    return f"transpose({t}, perm={list(perm)})", lambda env: np.transpose(f(env), perm)


@st.composite
def programs(draw):
    rank = draw(st.integers(1, 3))
    shape = ("N",) + tuple(draw(st.integers(1, 4)) for _ in range(rank - 1))
    prog = Program()
    text, fn = draw(expr(prog, shape, draw(st.integers(1, 4))))
    lines = ["model rand {"]
    lines += [f"  input {n}: {_dims(s)}" for n, s in prog.inputs]
    lines += [f"  out = {text}", "  output out", "}"]
    n = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2 ** 16))
    return "\n".join(lines), fn, prog.inputs, n, seed


def _concrete(shape, n):
    return tuple(n if d == "N" else d for d in shape)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_match_numpy(case):
    from irkit.frontend.dsl import compile_source
    source, fn, inputs, n, seed = case
    rng = np.random.default_rng(seed)
    env = {name: rng.normal(size=_concrete(s, n)).astype(np.float32) for name, s in inputs}
    want = fn(env)
    top = compile_source(source, "rand.irk")
    model = Model(model_modules(top)["rand"])
    got = model.forward(**env)["out"]
    assert got.shape == np.shape(want), source
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=source)

    from irkit.pass_manager import PassManager
    PassManager.parse("builtin.module(canonicalize,cse)").run(top)
    irkit.verify(top)
    again = Model(model_modules(top)["rand"]).forward(**env)["out"]
    np.testing.assert_allclose(again, want, rtol=2e-5, atol=2e-5, err_msg=source)
