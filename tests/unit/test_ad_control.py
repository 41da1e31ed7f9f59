"""Derivatives through data-dependent control flow, in both of its forms: the dataflow form
(`graph.switch`/`graph.merge`, whose backward graph is dataflow control flow again) and the
structured `graph.if`, written by hand or raised by `graph-raise-control-flow` (its
derivative is another `graph.if` on the same predicate). Also the storage ops, which the
engine must take as leaves (`graph.read`, `graph.constant`) or pass over (`graph.assign`).

Expected values are hand-derived or central finite differences of the forward program run
by the interpreter; a predicate is kept away from its switching point so a finite-difference
step never crosses it.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from irkit.interpreter import DEAD, Interpreter, interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in

AD = "autodiff,canonicalize,cse"
#: the two forms a conditional is differentiated in: as written (dataflow), and raised first
FORMS = {"dataflow": AD, "raised": "graph-raise-control-flow," + AD}


def module(text: str, pipeline: str | None = None):
    m = parse_module(textwrap.dedent(text))
    m.verify()
    if pipeline is not None:
        PassManager.parse(pipeline).run(m)
        m.verify()
    return m


def names(m) -> list[str]:
    return [op.name for op in m.walk()]


def central_vjp(f, args: list, i: int, seed, eps: float = 1e-6) -> np.ndarray:
    """seed^T (d f / d args[i]) by central differences, one element of args[i] at a time."""
    out = np.zeros_like(args[i])
    for j in np.ndindex(args[i].shape):
        hi = [a.copy() for a in args]
        lo = [a.copy() for a in args]
        hi[i][j] += eps
        lo[i][j] -= eps
        out[j] = np.sum(seed * (f(*hi) - f(*lo))) / (2 * eps)
    return out


def vec(n: int, lo: float = -2.0, hi: float = 2.0):
    return st.lists(st.floats(lo, hi), min_size=n, max_size=n).map(np.array)


# ---------------------------------------------------------------------------------------------
# The gate model: `sum(x) < sum(y) ? x + z : y * y`
# ---------------------------------------------------------------------------------------------

#: the DSL's dataflow form (tests/filecheck/dsl/gate.irk), with the derivative requests
GATE = """
func.func @forward(%x: {T}, %y: {T}, %z: {T}) -> {T} {{
  {BODY}
  return %r : {T}
}}
func.func @grad(%x: {T}, %y: {T}, %z: {T}, %s: {T}) -> ({T}, {T}, {T}) {{
  {BODY}
  %g:3 = autodiff.grad %r seed %s wrt %x, %y, %z : ({T}, {T}) -> ({T}, {T}, {T})
  return %g#0, %g#1, %g#2 : {T}, {T}, {T}
}}
func.func @jvp(%x: {T}, %y: {T}, %z: {T}, %u: {T}, %v: {T}, %w: {T}) -> {T} {{
  {BODY}
  %t = autodiff.jvp %r wrt %x, %y, %z along %u, %v, %w : ({T}, {T}, {T}) -> {T}
  return %t : {T}
}}
"""
GATE_BODY = """
  %sx = graph.reduce_sum %x : ({T}) -> tensor<{E}>
  %sy = graph.reduce_sum %y : ({T}) -> tensor<{E}>
  %p = graph.cmp %sx, %sy {{predicate = "lt"}} : (tensor<{E}>, tensor<{E}>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : ({T}, tensor<i1>) -> ({T}, {T})
  %zf, %zt = graph.switch %z, %p : ({T}, tensor<i1>) -> ({T}, {T})
  %yf, %yt = graph.switch %y, %p : ({T}, tensor<i1>) -> ({T}, {T})
  %a = graph.add %xt, %zt : ({T}, {T}) -> {T}
  %b = graph.mul %yf, %yf : ({T}, {T}) -> {T}
  %r, %i = graph.merge %b, %a : ({T}, {T}) -> ({T}, tensor<i32>)
"""


def gate(form: str | None, element: str = "f64", shape: str = "?"):
    """The gate program differentiated in `form` (None: the derivative ops left in)."""
    t = f"tensor<{shape}x{element}>"
    body = GATE_BODY.format(T=t, E=element).strip().replace("\n", "\n  ")
    return module(GATE.format(T=t, BODY=body), FORMS[form] if form else None)


def gate_inputs(draw_x, draw_y, draw_z, then: bool):
    """x, y, z with sum(x) < sum(y) exactly when `then`, by a margin of at least 1."""
    n = len(draw_x)
    gap = float(np.sum(draw_x) - np.sum(draw_y))
    y = draw_y + ((gap + 1.0) / n if then else (gap - 1.0) / n)
    return draw_x, y, draw_z


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), n=st.integers(1, 5), then=st.booleans())
def test_gate_gradient_is_the_taken_branchs(form, data, n, then):
    x, y, z = gate_inputs(data.draw(vec(n)), data.draw(vec(n)), data.draw(vec(n)), then)
    s = data.draw(vec(n))
    m = gate(form)
    gx, gy, gz = interpret(m, "grad", x, y, z, s)
    zero = np.zeros(n)
    want = (s, zero, s) if then else (zero, 2 * y * s, zero)      # d(x+z), d(y*y)
    for got, w in zip((gx, gy, gz), want):
        np.testing.assert_allclose(got, w, rtol=1e-12, atol=1e-12)
    fwd = lambda *a: interpret(m, "forward", *a)      # noqa: E731
    for i, got in enumerate((gx, gy, gz)):
        np.testing.assert_allclose(got, central_vjp(fwd, [x, y, z], i, s), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), n=st.integers(1, 5), then=st.booleans())
def test_gate_tangent_is_the_taken_branchs(form, data, n, then):
    x, y, z = gate_inputs(data.draw(vec(n)), data.draw(vec(n)), data.draw(vec(n)), then)
    u, v, w, s = (data.draw(vec(n)) for _ in range(4))
    m = gate(form)
    t = interpret(m, "jvp", x, y, z, u, v, w)
    np.testing.assert_allclose(t, u + w if then else 2 * y * v, rtol=1e-12, atol=1e-12)
    # s . (J v) == (s^T J) . v, J taken along all three inputs at once
    gx, gy, gz = interpret(m, "grad", x, y, z, s)
    np.testing.assert_allclose(np.dot(s, t), np.dot(gx, u) + np.dot(gy, v) + np.dot(gz, w),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("element", ["f16", "f32"])
@pytest.mark.parametrize("form", FORMS)
def test_gate_in_narrow_floats(form, element):
    m = gate(form, element, "4")          # verified: every derivative op has the input's type
    dt = np.float16 if element == "f16" else np.float32
    x, y, z, s = (np.array(a, dt) for a in ([1, 2, 3, 4], [2, 3, 4, 5], [1, 0, 1, 0],
                                            [.5, 1, -1, 2]))
    gx, gy, gz = interpret(m, "grad", x, y, z, s)
    assert gx.dtype == gy.dtype == gz.dtype == dt
    np.testing.assert_array_equal(gx, s)
    np.testing.assert_array_equal(gy, np.zeros(4, dt))
    gx, gy, gz = interpret(m, "grad", y, x, z, s)       # now sum(x) > sum(y): y * y
    np.testing.assert_allclose(gy, 2 * x * s, rtol=1e-3)


def test_dataflow_backward_graph_is_dataflow_and_raised_one_is_an_if():
    flow, raised = gate("dataflow"), gate("raised")
    grad = lookup_symbol_in(flow, "grad")
    # merge -> switch: the seed is routed back by `index == i` of the forward merge
    merge = next(op for op in grad.walk() if op.name == "graph.merge")
    routes = [u.owner for u in merge.index.uses]
    assert sorted(op.name for op in routes) == ["graph.cmp", "graph.cmp"]
    assert all(op.props()["predicate"] == "eq" for op in routes)
    assert {u.owner.name for r in routes for u in r.results[0].uses} == {"graph.switch"}
    # switch -> merge: one backward merge per differentiated switch
    assert names(grad).count("graph.merge") == 1 + 3
    assert "graph.if" not in names(flow)
    g = lookup_symbol_in(raised, "grad")
    assert "graph.switch" not in names(g) and "graph.merge" not in names(g)
    (back,) = [op for op in g.walk() if op.name == "graph.if"]   # the unused forward if is gone
    assert back.pred.owner.name == "graph.cmp"


# ---------------------------------------------------------------------------------------------
# Deadness in the backward graph
# ---------------------------------------------------------------------------------------------


class _Recorder(Interpreter):
    """An interpreter that records the ops it skipped because an operand was dead."""

    def __init__(self, module) -> None:
        super().__init__(module)
        self.skipped: set = set()

    def _propagate_dead(self, op, env) -> None:
        self.skipped.add(op)
        super()._propagate_dead(op, env)


def _fed_by(values) -> set:
    """The ops reachable forward through uses from `values`, stopping at merges."""
    seen, work = set(), list(values)
    while work:
        for use in work.pop().uses:
            op = use.owner
            if op.name != "graph.merge" and op not in seen:
                seen.add(op)
                work.extend(op.results)
    return seen


@pytest.mark.parametrize("then", [True, False])
def test_untaken_branchs_cotangent_ops_are_dead_and_skipped(then):
    m = gate(None, shape="3")
    fn = lookup_symbol_in(m, "grad")
    forward = set(fn.walk())
    PassManager.parse("autodiff").run(m)        # no cleanup: each rule's ops stay as built
    backward = set(fn.walk()) - forward
    switches = [op for op in fn.walk() if op.name == "graph.switch" and op in forward]
    untaken = _fed_by([s.if_false if then else s.if_true for s in switches])
    taken = _fed_by([s.if_true if then else s.if_false for s in switches])
    assert untaken & backward and taken & backward
    x, y = np.array([1., 2., 3.]), np.array([2., 3., 4.])
    if not then:
        x, y = y, x
    rec = _Recorder(m)
    env: dict = {}
    out = rec.run_region(fn.regions[0], [x, y, np.ones(3), np.array([.5, 1., 2.])], env)
    assert untaken <= rec.skipped
    assert all(env[r] is DEAD for op in untaken for r in op.results)
    assert not (taken & rec.skipped)
    assert all(o is not DEAD for o in out)


# ---------------------------------------------------------------------------------------------
# Nested conditionals, several inputs to one merge, and a raised if inside a dataflow one
# ---------------------------------------------------------------------------------------------

NESTED = """
func.func @nested(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<f64>, %d: tensor<f64>,
                  %x: tensor<4xf64>, %y: tensor<4xf64>, %s: tensor<4xf64>)
    -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %p = graph.cmp %a, %b {predicate = "lt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %cf, %ct = graph.switch %c, %p : (tensor<f64>, tensor<i1>) -> (tensor<f64>, tensor<f64>)
  %df, %dt = graph.switch %d, %p : (tensor<f64>, tensor<i1>) -> (tensor<f64>, tensor<f64>)
  %xf, %xt = graph.switch %x, %p : (tensor<4xf64>, tensor<i1>) -> (tensor<4xf64>, tensor<4xf64>)
  %yf, %yt = graph.switch %y, %p : (tensor<4xf64>, tensor<i1>) -> (tensor<4xf64>, tensor<4xf64>)
  %q = graph.cmp %ct, %dt {predicate = "lt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %xqf, %xqt = graph.switch %xt, %q : (tensor<4xf64>, tensor<i1>) -> (tensor<4xf64>, tensor<4xf64>)
  %sum = graph.add %xqt, %xqt : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %sq = graph.mul %xqf, %xqf : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %in, %ini = graph.merge %sq, %sum : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<i32>)
  %r, %ri = graph.merge %yf, %in : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<i32>)
  %g:2 = autodiff.grad %r seed %s wrt %x, %y
      : (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>)
  %t = autodiff.jvp %r wrt %x, %y along %s, %s : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %g#0, %g#1, %t : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}
"""


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("p,q", [(True, True), (True, False), (False, True), (False, False)])
def test_nested_conditionals(form, p, q):
    """`p ? (q ? x + x : x * x) : y`, differentiated in both modes along the same s."""
    m = module(NESTED, FORMS[form])
    if form == "raised":
        assert "graph.switch" not in names(m) and "graph.merge" not in names(m)
    x, y, s = np.array([1., 2., 3., 4.]), np.array([3., 4., 5., 6.]), np.array([.5, 2, -1, 3])
    zero = np.zeros(4)
    gx, gy = (2 * s if q else 2 * x * s, zero) if p else (zero, s)
    a, b = (0.0, 1.0) if p else (1.0, 0.0)             # p = a < b, q = c < d
    c, d = (0.0, 1.0) if q else (1.0, 0.0)
    got = interpret(m, "nested", a, b, c, d, x, y, s)
    np.testing.assert_allclose(got[0], gx, rtol=1e-12)
    np.testing.assert_allclose(got[1], gy, rtol=1e-12)
    np.testing.assert_allclose(got[2], gx + gy, rtol=1e-12)    # J [s, s] = gx + gy here


THREE = """
func.func @three(%p: tensor<i1>, %q: tensor<i1>, %x: tensor<2xf32>, %s: tensor<2xf32>)
    -> (tensor<2xf32>, tensor<2xf32>) {
  %x0, %x1 = graph.switch %x, %p : (tensor<2xf32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>)
  %x10, %x11 = graph.switch %x1, %q : (tensor<2xf32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>)
  %a = graph.sin %x0 : (tensor<2xf32>) -> tensor<2xf32>
  %b = graph.exp %x10 : (tensor<2xf32>) -> tensor<2xf32>
  %c = graph.mul %x11, %x11 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r, %i = graph.merge %a, %b, %c
      : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>)
  %g = autodiff.grad %r seed %s wrt %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %t = autodiff.jvp %r wrt %x along %s : (tensor<2xf32>) -> tensor<2xf32>
  return %g, %t : tensor<2xf32>, tensor<2xf32>
}
"""


@pytest.mark.parametrize("p,q", [(False, False), (False, True), (True, False), (True, True)])
def test_merge_of_three_routes_the_cotangent_to_the_live_input(p, q):
    m = module(THREE, AD)
    x, s = np.array([.3, 1.1], np.float32), np.array([2., -1.], np.float32)
    want = s * (np.cos(x) if not p else np.exp(x) if not q else 2 * x)
    g, t = interpret(m, "three", p, q, x, s)
    np.testing.assert_allclose(g, want, rtol=1e-6)
    np.testing.assert_allclose(t, want, rtol=1e-6)


MIXED = """
func.func @mixed(%p: tensor<i1>, %q: tensor<i1>, %x: tensor<3xf64>, %s: tensor<3xf64>)
    -> (tensor<3xf64>, tensor<3xf64>) {
  %xf, %xt = graph.switch %x, %p : (tensor<3xf64>, tensor<i1>) -> (tensor<3xf64>, tensor<3xf64>)
  %qf, %qt = graph.switch %q, %p : (tensor<i1>, tensor<i1>) -> (tensor<i1>, tensor<i1>)
  %in = graph.if %qt -> (tensor<3xf64>) {
    %e = graph.exp %xt : (tensor<3xf64>) -> tensor<3xf64>
    graph.yield %e : tensor<3xf64>
  } else {
    %n = graph.neg %xt : (tensor<3xf64>) -> tensor<3xf64>
    graph.yield %n : tensor<3xf64>
  }
  %sq = graph.mul %xf, %xf : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %r, %i = graph.merge %sq, %in : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<i32>)
  %g = autodiff.grad %r seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %t = autodiff.jvp %r wrt %x along %s : (tensor<3xf64>) -> tensor<3xf64>
  return %g, %t : tensor<3xf64>, tensor<3xf64>
}
"""


@pytest.mark.parametrize("p,q", [(False, False), (False, True), (True, False), (True, True)])
def test_if_on_a_dead_predicate_inside_a_dataflow_conditional(p, q):
    """When the outer branch is not taken, the inner if's predicate is dead: its derivative
    if is skipped too, and the backward merge takes the other side."""
    m = module(MIXED, AD)
    x, s = np.array([.3, -1.1, 2.]), np.array([2., -1., .5])
    want = (np.exp(x) * s if q else -s) if p else 2 * x * s
    g, t = interpret(m, "mixed", p, q, x, s)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(t, want, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Finite differences and second order
# ---------------------------------------------------------------------------------------------

BRANCHY = """
func.func @forward(%p: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
  BODY
  return %r : tensor<?xf64>
}
func.func @grad(%p: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf64>, %s: tensor<?xf64>,
                %t: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
  BODY
  %g:2 = autodiff.grad %r seed %s wrt %x, %y
      : (tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  %h = autodiff.grad %g#0 seed %t wrt %x : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  return %g#0, %g#1, %h : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
}
func.func @jvp(%p: tensor<i1>, %x: tensor<?xf64>, %y: tensor<?xf64>, %s: tensor<?xf64>,
               %t: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  BODY
  %g = autodiff.grad %r seed %s wrt %x : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %tr = autodiff.jvp %r wrt %x along %t : (tensor<?xf64>) -> tensor<?xf64>
  %hv = autodiff.jvp %g wrt %x along %t : (tensor<?xf64>) -> tensor<?xf64>
  return %tr, %hv : tensor<?xf64>, tensor<?xf64>
}
"""
#: `p ? sin(x) * x : exp(x) * y`, in dataflow form
BRANCHY_FLOW = """
  %xf, %xt = graph.switch %x, %p : (tensor<?xf64>, tensor<i1>) -> (tensor<?xf64>, tensor<?xf64>)
  %yf, %yt = graph.switch %y, %p : (tensor<?xf64>, tensor<i1>) -> (tensor<?xf64>, tensor<?xf64>)
  %a = graph.sin %xt : (tensor<?xf64>) -> tensor<?xf64>
  %b = graph.mul %a, %xt : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %e = graph.exp %xf : (tensor<?xf64>) -> tensor<?xf64>
  %c = graph.mul %e, %yf : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
  %r, %i = graph.merge %c, %b : (tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<i32>)
"""
#: the same, written as a graph.if
BRANCHY_IF = """
  %r = graph.if %p -> (tensor<?xf64>) {
    %a = graph.sin %x : (tensor<?xf64>) -> tensor<?xf64>
    %b = graph.mul %a, %x : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    graph.yield %b : tensor<?xf64>
  } else {
    %e = graph.exp %x : (tensor<?xf64>) -> tensor<?xf64>
    %c = graph.mul %e, %y : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    graph.yield %c : tensor<?xf64>
  }
"""
BRANCHY_PROGRAMS = {
    "dataflow": (BRANCHY_FLOW, AD),
    "raised": (BRANCHY_FLOW, FORMS["raised"]),
    "if": (BRANCHY_IF, AD),
}


def branchy(kind: str):
    body, pipeline = BRANCHY_PROGRAMS[kind]
    return module(BRANCHY.replace("BODY", body.strip()), pipeline)


@pytest.mark.parametrize("kind", BRANCHY_PROGRAMS)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), n=st.integers(1, 4), p=st.booleans())
def test_gradients_match_finite_differences(kind, data, n, p):
    x, y, s, t = (data.draw(vec(n)) for _ in range(4))
    m = branchy(kind)
    gx, gy, h = interpret(m, "grad", p, x, y, s, t)
    fwd = lambda x, y: interpret(m, "forward", p, x, y)        # noqa: E731
    np.testing.assert_allclose(gx, central_vjp(fwd, [x, y], 0, s), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gy, central_vjp(fwd, [x, y], 1, s), rtol=1e-6, atol=1e-7)
    # second order: t^T d(s^T J)/dx against differences of the hand-derived gradient
    grad_x = (lambda x: s * (np.cos(x) * x + np.sin(x))) if p else (lambda x: s * np.exp(x) * y)
    np.testing.assert_allclose(h, central_vjp(grad_x, [x], 0, t), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", BRANCHY_PROGRAMS)
@pytest.mark.parametrize("p", [True, False])
def test_second_order_through_a_conditional(kind, p):
    """grad of grad and jvp of grad (a Hessian-vector product) through the derivative of a
    conditional, which holds a conditional itself."""
    m = branchy(kind)
    x, y = np.array([.3, -1.2, 2.]), np.array([1.5, 2., -.5])
    s, t = np.array([.5, 2., -1.]), np.array([1., .25, 3.])
    if p:    # d/dx sin(x) x = cos(x) x + sin(x); d2 = 2 cos(x) - sin(x) x
        d1, d2 = np.cos(x) * x + np.sin(x), 2 * np.cos(x) - np.sin(x) * x
    else:
        d1, d2 = np.exp(x) * y, np.exp(x) * y
    gx, gy, h = interpret(m, "grad", p, x, y, s, t)
    np.testing.assert_allclose(gx, s * d1, rtol=1e-12)
    np.testing.assert_allclose(gy, np.zeros(3) if p else s * np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(h, t * s * d2, rtol=1e-12)
    tr, hv = interpret(m, "jvp", p, x, y, s, t)
    np.testing.assert_allclose(tr, t * d1, rtol=1e-12)
    np.testing.assert_allclose(hv, t * s * d2, rtol=1e-12)


def test_derivative_if_recomputes_only_what_the_rules_read():
    m = branchy("if")
    g = lookup_symbol_in(m, "grad")
    ifs = [op for op in g.walk() if op.name == "graph.if"]
    assert all(op.pred is g.regions[0].blocks[0].args[0] for op in ifs)
    x = g.regions[0].blocks[0].args[1]
    then_ops = list(ifs[0].then_region.blocks[0].ops)
    # d(sin(x) x) reads sin(x) and x; the product sin(x) x itself is not rebuilt
    (sin,) = [op for op in then_ops if op.name == "graph.sin"]
    assert not [op for op in then_ops if op.name == "graph.mul"
                and set(op.operands) == {sin.results[0], x}]
    else_ops = [op.name for op in ifs[0].else_region.blocks[0].ops]
    assert else_ops.count("graph.exp") == 1


INT_RESULT = """
func.func @f(%p: tensor<i1>, %x: tensor<3xf64>, %k: tensor<i32>, %s: tensor<3xf64>)
    -> (tensor<3xf64>, tensor<3xf64>) {
  %r, %j = graph.if %p -> (tensor<3xf64>, tensor<i32>) {
    %e = graph.exp %x : (tensor<3xf64>) -> tensor<3xf64>
    graph.yield %e, %k : tensor<3xf64>, tensor<i32>
  } else {
    %c = graph.constant dense<1.0> : tensor<3xf64>
    graph.yield %c, %k : tensor<3xf64>, tensor<i32>
  }
  %g = autodiff.grad %r seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %t = autodiff.jvp %r wrt %x along %s : (tensor<3xf64>) -> tensor<3xf64>
  return %g, %t : tensor<3xf64>, tensor<3xf64>
}
"""


@pytest.mark.parametrize("p", [True, False])
def test_if_with_an_integer_result_and_a_constant_branch(p):
    m = module(INT_RESULT, AD)
    x, s = np.array([.3, -1.1, 2.]), np.array([2., -1., .5])
    g, t = interpret(m, "f", p, x, np.int32(7), s)
    want = np.exp(x) * s if p else np.zeros(3)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(t, want, rtol=1e-12)


CAST_IN_BRANCH = """
func.func @f(%p: tensor<i1>, %x: tensor<3xf64>, %w: tensor<3xf64>, %s: tensor<3xf64>)
    -> tensor<3xf64> {
  %r = graph.if %p -> (tensor<3xf64>) {
    %k = graph.cast %w : (tensor<3xf64>) -> tensor<3xi32>
    %kf = graph.cast %k : (tensor<3xi32>) -> tensor<3xf64>
    %b = graph.mul %kf, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    graph.yield %b : tensor<3xf64>
  } else {
    graph.yield %x : tensor<3xf64>
  }
  %g = autodiff.grad %r seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %g : tensor<3xf64>
}
"""


def test_if_reading_a_value_not_differentiated_against_through_a_cast():
    """Without the if, w is no x and the cast is never differentiated; so with it."""
    m = module(CAST_IN_BRANCH, AD)
    x, w, s = np.array([1., 2., 3.]), np.array([1.5, 2.5, -3.7]), np.array([2., -1., .5])
    np.testing.assert_allclose(interpret(m, "f", True, x, w, s), s * np.trunc(w))
    np.testing.assert_allclose(interpret(m, "f", False, x, w, s), s)


# ---------------------------------------------------------------------------------------------
# Storage: constants and reads are leaves, an assign is passed over
# ---------------------------------------------------------------------------------------------

STEP = """
graph.variable @w : tensor<3xf64> init constant {value = 2.0 : f64}
func.func @step(%x: tensor<3xf64>, %lr: tensor<f64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %w = graph.read @w : tensor<3xf64>
  %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  %wx = graph.mul %w, %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %l = graph.mul %wx, %c : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  graph.assign @w, %l : tensor<3xf64>
  %w2 = graph.read @w : tensor<3xf64>
  %l2 = graph.mul %l, %w2 : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %g:3 = autodiff.grad %l2 seed %x wrt %w, %c, %w2
      : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>)
  %t = autodiff.jvp %l2 wrt %w along %x : (tensor<3xf64>) -> tensor<3xf64>
  %d = graph.mul %lr, %g#0 : (tensor<f64>, tensor<3xf64>) -> tensor<3xf64>
  %new = graph.sub %w2, %d : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  graph.assign @w, %new : tensor<3xf64>
  return %g#0, %t : tensor<3xf64>, tensor<3xf64>
}
"""


def test_reads_and_constants_are_leaves_and_assigns_are_passed_over():
    """l2 = (w x c) * w2, where w2 reads what the assign stored: derivatives do not flow
    through the variable, so d l2 / d w = x c w2 with w2 held fixed."""
    m = module(STEP, AD)
    fn = lookup_symbol_in(m, "step")
    assert names(fn).count("graph.assign") == 2 and names(fn).count("graph.read") == 2
    x, lr = np.array([1., 2., 3.]), 0.5
    c = np.array([1., 2., 3.])
    interp = Interpreter(m)
    w = np.full(3, 2.0)
    for _ in range(2):                  # the state carries over between steps
        w2 = w * x * c
        g, t = interp.call(fn, [x, np.asarray(lr)])
        np.testing.assert_allclose(g, x * x * c * w2, rtol=1e-12)
        np.testing.assert_allclose(t, x * x * c * w2, rtol=1e-12)
        w = w2 - lr * g
        np.testing.assert_allclose(interp.state["graph.variables"]["w"], w, rtol=1e-12)


def test_gradient_against_a_constant_and_a_second_read():
    m = module(STEP.replace("return %g#0, %t", "return %g#1, %g#2"), AD)
    x = np.array([1., 2., 3.])
    gc, gw2 = interpret(m, "step", x, 0.5)
    w, c = np.full(3, 2.0), np.array([1., 2., 3.])
    np.testing.assert_allclose(gc, x * w * x * (w * x * c), rtol=1e-12)   # d/dc (w x c) w2
    np.testing.assert_allclose(gw2, x * w * x * c, rtol=1e-12)
