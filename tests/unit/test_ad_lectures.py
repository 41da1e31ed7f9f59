"""The lectures' worked autodiff examples, with the values derived by hand.

1. `y = ln(x1) + x1 x2 - sin(x2)` at (x1, x2) = (2, 5):
   dy/dx1 = 1/x1 + x2 = 5.5 and dy/dx2 = x1 - cos(x2) = 2 - cos 5 = 1.7163378145...
2. Linear regression `y_hat = w x + b`, `L = (y_hat - y)^2` at x = 2, y = 5, w = 1, b = 0:
   y_hat = 2, L = 9, dL/dw = 2 (y_hat - y) x = -12, dL/db = 2 (y_hat - y) = -6.
3. `f = (exp(v1) + 1) exp(v1)`: df/dv1 = exp(v1) exp(v1) + (exp(v1) + 1) exp(v1)
   = (2 exp(v1) + 1) exp(v1).

Each goes through the IR (`autodiff.grad` and `autodiff.jvp`, expanded by `-p autodiff`), in
reverse and forward mode, and through the DSL's `grad ... wrt` (`load_model(...).forward`
returns `d_x1`, ...). After `autodiff,canonicalize,cse` the backward graphs carry no waste:
no multiplication by one, no addition of zeros, no forward op computed twice.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import irkit
from irkit.interpreter import InterpreterError
from irkit.pass_manager import PassManager

ROOT = Path(__file__).resolve().parents[2]

DY_DX1 = 5.5
DY_DX2 = 2.0 - math.cos(5.0)           # 1.7163378145367738


def _expand(src: str, pipeline: str = "autodiff,canonicalize,cse"):
    m = irkit.parse_module(src, "<lecture>")
    irkit.verify(m)
    PassManager.parse(pipeline).run(m)
    irkit.verify(m)
    assert not [o for o in m.walk() if o.name.startswith("autodiff.")]
    return m


def _run(m, fn: str, *args) -> list:
    out = irkit.interpret(m, fn, *args)
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


# ---------------------------------------------------------------------------------------------
# 1. y = ln(x1) + x1 x2 - sin(x2)
# ---------------------------------------------------------------------------------------------


def _seed_src(t: str) -> str:
    body = f"""
  %l = graph.log %x1 : ({t}) -> {t}
  %p = graph.mul %x1, %x2 : ({t}, {t}) -> {t}
  %a = graph.add %l, %p : ({t}, {t}) -> {t}
  %s = graph.sin %x2 : ({t}) -> {t}
  %y = graph.sub %a, %s : ({t}, {t}) -> {t}"""
    return f"""
func.func @reverse(%x1: {t}, %x2: {t}) -> ({t}, {t}, {t}) {{{body}
  %g:2 = autodiff.grad %y wrt %x1, %x2 : ({t}) -> ({t}, {t})
  return %y, %g#0, %g#1 : {t}, {t}, {t}
}}
func.func @forward(%x1: {t}, %x2: {t}, %t1: {t}, %t2: {t}) -> {t} {{{body}
  %d = autodiff.jvp %y wrt %x1, %x2 along %t1, %t2 : ({t}, {t}) -> {t}
  return %d : {t}
}}
"""


@pytest.mark.parametrize("dtype,rtol", [("f64", 1e-14), ("f32", 1e-6)])
def test_seed_example_reverse_and_forward(dtype, rtol):
    t = f"tensor<{dtype}>"
    m = _expand(_seed_src(t))
    np_t = np.float64 if dtype == "f64" else np.float32
    x1, x2 = np_t(2.0), np_t(5.0)
    y, d1, d2 = _run(m, "reverse", x1, x2)
    np.testing.assert_allclose(y, math.log(2) + 10 - math.sin(5), rtol=rtol)
    assert d1.dtype == np_t and d2.dtype == np_t
    np.testing.assert_allclose(d1, DY_DX1, rtol=rtol)
    np.testing.assert_allclose(d2, DY_DX2, rtol=rtol)
    # Forward mode: one sweep per input direction (the lecture's table of tangents).
    (f1,) = _run(m, "forward", x1, x2, np_t(1), np_t(0))
    (f2,) = _run(m, "forward", x1, x2, np_t(0), np_t(1))
    np.testing.assert_allclose(f1, DY_DX1, rtol=rtol)
    np.testing.assert_allclose(f2, DY_DX2, rtol=rtol)


def test_seed_example_batched():
    """The same function elementwise on vectors, seeded with ones: the gradient is
    elementwise too."""
    t = "tensor<3xf64>"
    body = _seed_src(t).split("func.func @reverse")[1].split("%g:2")[0].split("{", 1)[1]
    m = _expand(f"""
func.func @f(%x1: {t}, %x2: {t}, %one: {t}) -> ({t}, {t}) {{{body}
  %g:2 = autodiff.grad %y seed %one wrt %x1, %x2 : ({t}, {t}) -> ({t}, {t})
  return %g#0, %g#1 : {t}, {t}
}}""")
    x1, x2 = np.array([2.0, 1.0, 0.5]), np.array([5.0, -1.0, 3.0])
    d1, d2 = _run(m, "f", x1, x2, np.ones(3))
    np.testing.assert_allclose(d1, 1 / x1 + x2, rtol=1e-14)
    np.testing.assert_allclose(d2, x1 - np.cos(x2), rtol=1e-14)


# ---------------------------------------------------------------------------------------------
# 2. Linear regression
# ---------------------------------------------------------------------------------------------

_T = "tensor<f64>"


def _linear_src(square: str) -> str:
    sq = {"mul": f"%L = graph.mul %e, %e : ({_T}, {_T}) -> {_T}",
          "pow": f"%two = graph.constant dense<2.0> : {_T}\n"
                 f"  %L = graph.pow %e, %two : ({_T}, {_T}) -> {_T}"}[square]
    body = f"""
  %wx = graph.mul %w, %x : ({_T}, {_T}) -> {_T}
  %yh = graph.add %wx, %b : ({_T}, {_T}) -> {_T}
  %e = graph.sub %yh, %y : ({_T}, {_T}) -> {_T}
  {sq}"""
    args = f"%x: {_T}, %y: {_T}, %w: {_T}, %b: {_T}"
    return f"""
func.func @reverse({args}) -> ({_T}, {_T}, {_T}) {{{body}
  %g:2 = autodiff.grad %L wrt %w, %b : ({_T}) -> ({_T}, {_T})
  return %L, %g#0, %g#1 : {_T}, {_T}, {_T}
}}
func.func @forward({args}, %tw: {_T}, %tb: {_T}) -> {_T} {{{body}
  %d = autodiff.jvp %L wrt %w, %b along %tw, %tb : ({_T}, {_T}) -> {_T}
  return %d : {_T}
}}
"""


@pytest.mark.parametrize("square", ["mul", "pow"])
def test_linear_regression(square):
    m = _expand(_linear_src(square))
    x, y, w, b = 2.0, 5.0, 1.0, 0.0
    L, dw, db = _run(m, "reverse", x, y, w, b)
    assert float(L) == 9.0
    assert float(dw) == -12.0
    assert float(db) == -6.0
    (fw,) = _run(m, "forward", x, y, w, b, 1.0, 0.0)
    (fb,) = _run(m, "forward", x, y, w, b, 0.0, 1.0)
    assert float(fw) == -12.0
    assert float(fb) == -6.0


# ---------------------------------------------------------------------------------------------
# 3. f = (exp(v1) + 1) exp(v1)
# ---------------------------------------------------------------------------------------------


def _exp_src(t: str) -> str:
    body = f"""
  %e = graph.exp %v : ({t}) -> {t}
  %one = graph.constant dense<1.0> : tensor<f64>
  %a = graph.add %e, %one : ({t}, tensor<f64>) -> {t}
  %f = graph.mul %a, %e : ({t}, {t}) -> {t}"""
    return f"""
func.func @reverse(%v: {t}, %s: {t}) -> ({t}, {t}) {{{body}
  %g = autodiff.grad %f seed %s wrt %v : ({t}, {t}) -> {t}
  return %f, %g : {t}, {t}
}}
func.func @forward(%v: {t}, %tv: {t}) -> {t} {{{body}
  %d = autodiff.jvp %f wrt %v along %tv : ({t}) -> {t}
  return %d : {t}
}}
"""


def test_exp_example():
    t = "tensor<5xf64>"
    m = _expand(_exp_src(t))
    v = np.array([-2.0, -0.5, 0.0, 1.0, 2.5])
    want = (2 * np.exp(v) + 1) * np.exp(v)
    f, g = _run(m, "reverse", v, np.ones(5))
    np.testing.assert_allclose(f, (np.exp(v) + 1) * np.exp(v), rtol=1e-14)
    np.testing.assert_allclose(g, want, rtol=1e-14)
    (d,) = _run(m, "forward", v, np.ones(5))
    np.testing.assert_allclose(d, want, rtol=1e-14)
    assert float(want[2]) == 3.0                        # at v1 = 0: (2 + 1) * 1


# ---------------------------------------------------------------------------------------------
# The backward graphs carry no waste
# ---------------------------------------------------------------------------------------------


def _ops(m) -> list:
    return [o for o in m.walk() if o.name.startswith("graph.")]


def _const_value(v):
    owner = v.owner_op
    if owner is not None and owner.name == "graph.constant":
        return np.asarray(owner.properties["value"].array)
    return None


def _is_zeros(v) -> bool:
    owner = v.owner_op
    if owner is not None and owner.name == "graph.zeros_like":
        return True
    c = _const_value(v)
    return c is not None and bool(np.all(c == 0))


def _is_ones(v) -> bool:
    c = _const_value(v)
    return c is not None and bool(np.all(c == 1))


def assert_no_waste(m, once: tuple[str, ...]) -> Counter:
    """No `x * 1`, `x / 1`, `x + 0`, `x - 0` or zeros_like is left; each op in `once` (a
    forward op whose result the backward pass reuses) appears exactly once; no two ops are
    the same computation. Returns the op counts by name."""
    text = irkit.print_op(m)
    ops = _ops(m)
    for op in ops:
        if op.name in ("graph.mul", "graph.div"):
            assert not any(_is_ones(v) for v in op.operands[1 if op.name == "graph.div" else 0:]), \
                f"multiplication by one left:\n{text}"
        if op.name in ("graph.add", "graph.sub"):
            assert not any(_is_zeros(v) for v in op.operands), f"addition of zeros left:\n{text}"
        assert op.name != "graph.zeros_like", f"zeros_like left:\n{text}"
    counts = Counter(o.name for o in ops)
    for name in once:
        assert counts[name] == 1, f"{name} appears {counts[name]} times:\n{text}"
    keys = [(o.name, tuple(id(v) for v in o.operands), str(sorted(o.properties.items())))
            for o in ops if o.name != "graph.constant"]
    dup = [k[0] for k, n in Counter(keys).items() if n > 1]
    assert not dup, f"computed twice: {dup}\n{text}"
    return counts


def test_seed_example_backward_graph_is_lean():
    m = _expand(_seed_src("tensor<f32>"))
    fn = [o for o in m.walk() if o.name == "func.func"][0]        # @reverse
    counts = assert_no_waste(fn, once=("graph.log", "graph.sin", "graph.cos"))
    # dy/dx1 = x2 + 1/x1 and dy/dx2 = x1 - cos(x2): the only product is the forward x1*x2.
    assert counts["graph.mul"] == 1, irkit.print_op(fn)
    assert counts["graph.div"] <= 1, irkit.print_op(fn)


@pytest.mark.parametrize("square", ["mul", "pow"])
def test_linear_regression_backward_graph_is_lean(square):
    m = _expand(_linear_src(square))
    fn = [o for o in m.walk() if o.name == "func.func"][0]
    assert_no_waste(fn, once=("graph.sub",) + (("graph.pow",) if square == "pow" else ()))
    # the forward w*x + b is not recomputed
    wx = [o for o in _ops(fn) if o.name == "graph.mul" and
          {id(v) for v in o.operands} == {id(a) for a in fn.regions[0].blocks[0].args[:3:2]}]
    assert len(wx) == 1, irkit.print_op(fn)


def test_exp_example_backward_graph_is_lean():
    m = _expand(_exp_src("tensor<5xf64>"))
    for fn in (o for o in m.walk() if o.name == "func.func"):
        assert_no_waste(fn, once=("graph.exp",))


def test_interpreting_an_unexpanded_request_is_an_error():
    """autodiff.grad has no run-time meaning: the pass must expand it first."""
    m = irkit.parse_module(_seed_src("tensor<f64>"), "<lecture>")
    with pytest.raises(InterpreterError, match=r"expanded by the autodiff pass"):
        irkit.interpret(m, "reverse", 2.0, 5.0)


# ---------------------------------------------------------------------------------------------
# Through the DSL: `grad ... wrt` gives outputs d_<name>
# ---------------------------------------------------------------------------------------------


def test_dsl_seed_example():
    model = irkit.load_model(ROOT / "examples" / "seed_ad.irk")
    out = model.forward(x1=2.0, x2=5.0)
    np.testing.assert_allclose(out["y"], math.log(2) + 10 - math.sin(5), rtol=1e-6)
    np.testing.assert_allclose(out["d_x1"], DY_DX1, rtol=1e-6)
    np.testing.assert_allclose(out["d_x2"], DY_DX2, rtol=1e-6)


LINEAR = """
model linear {
  input x: f64
  input y: f64
  param w: f64 = constant(1)
  param b: f64 = zeros
  L = (w * x + b - y) ** 2
  output L
  grad L wrt w, b
}

model expo {
  input v1: f64[N]
  e = exp(v1)
  f = sum((e + 1) * e)
  output f
  grad f wrt v1
}
"""


def test_dsl_linear_regression(tmp_path):
    path = tmp_path / "lecture.irk"
    path.write_text(LINEAR)
    out = irkit.load_model(path, model="linear").forward(x=2.0, y=5.0)
    assert float(out["L"]) == 9.0
    assert float(out["d_w"]) == -12.0
    assert float(out["d_b"]) == -6.0


def test_dsl_exp_example(tmp_path):
    path = tmp_path / "lecture.irk"
    path.write_text(LINEAR)
    v = np.array([-1.0, 0.0, 0.5, 2.0])
    out = irkit.load_model(path, model="expo").forward(v1=v)
    np.testing.assert_allclose(out["d_v1"], (2 * np.exp(v) + 1) * np.exp(v), rtol=1e-14)
