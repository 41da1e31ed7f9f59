"""Derivatives of the elementwise graph ops, against finite differences of their `evaluate`.

- `test_unary_derivatives` / `test_binary_derivatives` / `test_where_derivatives`: on random
  float64 values (hypothesis) of random shapes (broadcasting with size-1 axes and rank
  differences, some axes `?`), `autodiff.grad` must match central finite differences of the
  op's numpy `evaluate` element by element, `autodiff.jvp` the directional difference, and
  the two must agree: s . (J v) == (s^T J) . v. Values keep away from kinks and domain edges
  by more than the step (`_DOMAINS`).
  `test_broadcast_both_ways`: each binary op with 3x1 against 4, fixed values.
- `test_*_second_order`: jvp of grad and grad of grad (Hessian-vector products) against
  finite differences of finite differences; `test_hvp_of_a_composite` against the
  hand-derived Hessian of sum(tanh(x) x x).
- `test_subgradient_conventions`, `test_pow_at_zero`: relu and abs have slope 0 at 0, max/min
  ties go to the first operand in both modes, pow is finite at x = 0 and its guard there
  leaves second derivatives elsewhere exact (hand-derived values).
- `test_lower_precision`: the rules build well-typed graphs for f16 and f32 (constants take
  the operand's element type) that agree with the float64 ones.
- `test_cast_*`, `test_non_differentiable_*`: cast is differentiable float to float only;
  comparisons and logic carry no derivative, but `where`'s condition does not need one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irkit
from irkit.dialects import load_all
from irkit.dialects.graph import TensorSpec
from irkit.ir import Operation
from irkit.opdef import lookup_op
from irkit.pass_manager import PassManager

load_all()

SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
PIPELINE = "autodiff,canonicalize,cse"
H = 1e-6            # finite-difference step for first derivatives
H2 = 1e-4           # ... and for second derivatives

# Values each operand is drawn from: "any" in [-3, 3]; "pos" in [0.3, 3] (log, sqrt, rsqrt, a
# power's base); "off0" at least 0.1 away from 0 (the kinks of abs and relu, a divisor);
# "grid" and "grid+" for max/min: 0.5 i + [0, 0.1] against 0.5 i + 0.25 + [0, 0.1], so the
# operands differ by at least 0.15 wherever they meet.
_ELEMENTS = {
    "any": st.floats(-3, 3),
    "pos": st.floats(0.3, 3),
    "off0": st.one_of(st.floats(-3, -0.1), st.floats(0.1, 3)),
    "grid": st.tuples(st.integers(-6, 6), st.floats(0, 0.1)).map(lambda p: 0.5 * p[0] + p[1]),
    "grid+": st.tuples(st.integers(-6, 6), st.floats(0, 0.1))
    .map(lambda p: 0.5 * p[0] + 0.25 + p[1]),
}
_DOMAINS = {
    "neg": ("any",), "abs": ("off0",), "exp": ("any",), "log": ("pos",), "sin": ("any",),
    "cos": ("any",), "tanh": ("any",), "sqrt": ("pos",), "rsqrt": ("pos",),
    "sigmoid": ("any",), "relu": ("off0",), "gelu": ("any",), "softplus": ("any",),
    "add": ("any", "any"), "sub": ("any", "any"), "mul": ("any", "any"),
    "div": ("any", "off0"), "pow": ("pos", "any"), "maximum": ("grid", "grid+"),
    "minimum": ("grid+", "grid"),
}
UNARY = [n for n, d in _DOMAINS.items() if len(d) == 1]
BINARY = [n for n, d in _DOMAINS.items() if len(d) == 2]


# ----- building and running -------------------------------------------------------------------


def ttype(shape, dt: str = "f64", dynamic=()) -> str:
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(shape)]
    return f"tensor<{'x'.join(dims + [dt])}>"


def result_type(op: str, types: list[str]) -> str:
    """The op's result type for operand types `types`, from its shape function."""
    specs = [TensorSpec.of(irkit.parse_type(t)) for t in types]
    return str(lookup_op(f"graph.{op}").infer(specs, {})[0].to_type())


def build(op: str, types: list[str], nondiff: int = 0) -> Operation:
    """A module with `@f(xs..., s, vs...) -> (grads..., jvp)`: the op on xs, the gradient of
    s . op(xs) wrt the differentiable xs (all but the first `nondiff`), and the tangent
    along vs. Returned after the autodiff pipeline, verified."""
    r = result_type(op, types)
    xs = [f"%x{i}" for i in range(len(types))]
    diff = list(range(nondiff, len(types)))
    dx = ", ".join(xs[i] for i in diff)
    dtys = ", ".join(types[i] for i in diff)
    params = [f"{x}: {t}" for x, t in zip(xs, types)] + [f"%s: {r}"] + \
        [f"%v{i}: {types[i]}" for i in diff]
    gs = ", ".join(f"%g{i}" for i in diff)
    text = (f"func.func @f({', '.join(params)}) -> ({dtys}, {r}) {{\n"
            f"  %r = graph.{op} {', '.join(xs)} : ({', '.join(types)}) -> {r}\n"
            f"  {gs} = autodiff.grad %r seed %s wrt {dx} : ({r}, {r}) -> ({dtys})\n"
            f"  %t = autodiff.jvp %r wrt {dx} along {', '.join(f'%v{i}' for i in diff)}"
            f" : ({dtys}) -> {r}\n"
            f"  return {gs}, %t : {dtys}, {r}\n}}\n")
    m = irkit.parse_module(text, f"<{op}>")
    PassManager.parse(PIPELINE).run(m)
    irkit.verify(m)
    return m


def reference(op: str):
    """The op's own numpy semantics (`evaluate` of a parsed instance): what derivatives are
    derivatives of."""
    m = irkit.parse_module(f"func.func @f(%a: tensor<f64>, %b: tensor<f64>, %c: tensor<i1>) {{\n"
                           + _ref_line(op) + "  return\n}\n")
    inst = next(o for o in m.walk() if o.name == f"graph.{op}")
    return inst.evaluate


def _ref_line(op: str) -> str:
    if op == "where":
        return ("  %r = graph.where %c, %a, %b : (tensor<i1>, tensor<f64>, tensor<f64>) -> "
                "tensor<f64>\n")
    if len(_DOMAINS[op]) == 1:
        return f"  %r = graph.{op} %a : (tensor<f64>) -> tensor<f64>\n"
    return f"  %r = graph.{op} %a, %b : (tensor<f64>, tensor<f64>) -> tensor<f64>\n"


def fd_gradient(f, args: list, s, which: list[int], h: float = H) -> list:
    """d(s . f(args)) / d args[i] for i in `which`, one element at a time. The difference of
    the two perturbed outputs is exact away from the perturbed element (same computation,
    same rounding), so no cancellation error scales with the size of s . f."""
    out = []
    for i in which:
        g = np.zeros_like(args[i])
        for idx in np.ndindex(args[i].shape):
            up, down = list(args), list(args)
            up[i], down[i] = args[i].copy(), args[i].copy()
            up[i][idx] += h
            down[i][idx] -= h
            g[idx] = np.sum(s * (f(*up) - f(*down))) / (2 * h)
        out.append(g)
    return out


def fd_directional(f, args: list, vs: dict, h: float = H):
    """(f(args + h v) - f(args - h v)) / 2h, moving the args named in `vs` (index -> v)."""
    up = [a + h * vs[i] if i in vs else a for i, a in enumerate(args)]
    down = [a - h * vs[i] if i in vs else a for i, a in enumerate(args)]
    return (f(*up) - f(*down)) / (2 * h)


def close(got, want, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


# ----- random shapes and values ---------------------------------------------------------------


@st.composite
def operand_shapes(draw, n: int):
    """`n` mutually broadcastable shapes (size-1 axes, different ranks), the broadcast shape,
    and for each operand the axes to type as `?`: only where the operand has the full size,
    so that each size-1 operand axis stays static and broadcasting is visible in the types
    (reverse mode sums over the axes where an operand's type says it was broadcast)."""
    shapes, out = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3,
                                                         min_side=1, max_side=3))
    dyn_axes = {i for i in range(len(out)) if draw(st.booleans()) and draw(st.booleans())}
    dynamic = []
    for s in shapes:
        lead = len(out) - len(s)
        dynamic.append({j for j, d in enumerate(s) if j + lead in dyn_axes and d == out[j + lead]})
    return list(shapes), out, dynamic


def draw_values(draw, shape, domain: str) -> np.ndarray:
    return draw(hnp.arrays(np.float64, shape, elements=_ELEMENTS[domain]))


# ----- first order ----------------------------------------------------------------------------


def check_first_order(op: str, args: list, types: list[str], s, vs: dict) -> None:
    """Gradient (seed s) and tangent (along vs: operand index -> direction; the others are
    not differentiated) of `op` on `args` against finite differences, and each against the
    other."""
    m = build(op, types, nondiff=min(vs))
    f = reference(op)
    diff = sorted(vs)
    *grads, tangent = irkit.interpret(m, "f", *args, s, *(vs[i] for i in diff))
    for g, want, a in zip(grads, fd_gradient(f, args, s, diff), (args[i] for i in diff)):
        assert g.shape == a.shape and g.dtype == np.float64
        close(g, want)
    close(tangent, fd_directional(f, args, vs))
    # s . (J v) == (s^T J) . v, both from the IR
    lhs = np.sum(s * tangent)
    rhs = sum(np.sum(g * vs[i]) for g, i in zip(grads, diff))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


def draw_directions(draw, out_shape, args: list, first: int = 0) -> tuple:
    """A seed of the result's shape and a direction for each operand from `first` on."""
    s = draw_values(draw, out_shape, "any")
    return s, {i: draw_values(draw, np.shape(args[i]), "any") for i in range(first, len(args))}


@pytest.mark.parametrize("op", UNARY)
@SETTINGS
@given(st.data())
def test_unary_derivatives(op, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    dyn = {i for i in range(len(shape)) if data.draw(st.booleans())}
    x = draw_values(data.draw, shape, _DOMAINS[op][0])
    s, vs = draw_directions(data.draw, shape, [x])
    check_first_order(op, [x], [ttype(shape, "f64", dyn)], s, vs)


@pytest.mark.parametrize("op", BINARY)
@SETTINGS
@given(st.data())
def test_binary_derivatives(op, data):
    shapes, out, dynamic = data.draw(operand_shapes(2))
    args = [draw_values(data.draw, s, d) for s, d in zip(shapes, _DOMAINS[op])]
    types = [ttype(s, "f64", dy) for s, dy in zip(shapes, dynamic)]
    check_first_order(op, args, types, *draw_directions(data.draw, out, args))


@settings(SETTINGS, max_examples=30)
@given(st.data())
def test_where_derivatives(data):
    shapes, out, dynamic = data.draw(operand_shapes(3))
    cond = data.draw(hnp.arrays(np.bool_, shapes[0]))
    args = [cond] + [draw_values(data.draw, s, "any") for s in shapes[1:]]
    types = [ttype(shapes[0], "i1", dynamic[0])] + \
        [ttype(s, "f64", dy) for s, dy in zip(shapes[1:], dynamic[1:])]
    check_first_order("where", args, types, *draw_directions(data.draw, out, args, first=1))


@pytest.mark.parametrize("op", BINARY)
def test_broadcast_both_ways(op):
    """x: 3x1 against y: 4 (each broadcast along the other's axis), fixed values."""
    rng = np.random.default_rng(1)
    lo, hi = {"pos": (0.5, 2.0), "off0": (0.5, 2.0)}.get(_DOMAINS[op][0], (-2.0, 2.0))
    x = rng.uniform(lo, hi, (3, 1))
    y = rng.uniform(0.5, 2.0, (4,)) if op == "div" else rng.uniform(-2.0, 2.0, (4,))
    if op in ("maximum", "minimum"):
        y = np.array([-1.75, -0.6, 0.45, 1.3])
        x = np.array([[-1.2], [0.1], [0.9]])
    s, vs = rng.uniform(-1, 1, (3, 4)), {0: rng.uniform(-1, 1, (3, 1)), 1: rng.uniform(-1, 1, 4)}
    check_first_order(op, [x, y], ["tensor<3x1xf64>", "tensor<4xf64>"], s, vs)


# ----- second order ---------------------------------------------------------------------------


def build_second_order(op: str, types: list[str]) -> Operation:
    """`@h(xs..., s, vs...)`: the gradient g of s . op(xs), then the Hessian-vector product
    twice: forward over reverse (jvp of g along vs) and reverse over reverse (grad of g
    seeded with vs)."""
    r = result_type(op, types)
    n = len(types)
    xs = ", ".join(f"%x{i}" for i in range(n))
    vs = ", ".join(f"%v{i}" for i in range(n))
    ts = ", ".join(types)
    g = ", ".join(f"%g{i}" for i in range(n))
    j = ", ".join(f"%j{i}" for i in range(n))
    k = ", ".join(f"%k{i}" for i in range(n))
    params = [f"%x{i}: {t}" for i, t in enumerate(types)] + [f"%s: {r}"] + \
        [f"%v{i}: {t}" for i, t in enumerate(types)]
    text = (f"func.func @h({', '.join(params)}) -> ({ts}, {ts}) {{\n"
            f"  %r = graph.{op} {xs} : ({ts}) -> {r}\n"
            f"  {g} = autodiff.grad %r seed %s wrt {xs} : ({r}, {r}) -> ({ts})\n"
            f"  {j} = autodiff.jvp {g} wrt {xs} along {vs} : ({ts}) -> ({ts})\n"
            f"  {k} = autodiff.grad {g} seed {vs} wrt {xs} : ({ts}, {ts}) -> ({ts})\n"
            f"  return {j}, {k} : {ts}, {ts}\n}}\n")
    m = irkit.parse_module(text, f"<{op} second order>")
    PassManager.parse(PIPELINE).run(m)
    irkit.verify(m)
    return m


def fd_hvp(f, args: list, s, vs: list) -> list:
    """H v of s . f by differences of differences. The ops are elementwise on operands of one
    shape, so each partial derivative is itself one elementwise central difference."""
    def grad(*a):
        return fd_gradient_elementwise(f, list(a), s, H2)
    up = grad(*(a + H2 * v for a, v in zip(args, vs)))
    down = grad(*(a - H2 * v for a, v in zip(args, vs)))
    return [(u - d) / (2 * H2) for u, d in zip(up, down)]


def fd_gradient_elementwise(f, args: list, s, h: float) -> list:
    out = []
    for i in range(len(args)):
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + h, args[i] - h
        out.append(s * (f(*up) - f(*down)) / (2 * h))
    return out


@pytest.mark.parametrize("op", UNARY)
@SETTINGS
@given(st.data())
def test_unary_second_order(op, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    x = draw_values(data.draw, shape, _DOMAINS[op][0])
    s, v = draw_values(data.draw, shape, "any"), draw_values(data.draw, shape, "any")
    m = build_second_order(op, [ttype(shape)])
    jv, kv = irkit.interpret(m, "h", x, s, v)
    f = reference(op)
    # s f''(x) v, with f'' the second central difference
    want = s * (f(x + H2) - 2 * f(x) + f(x - H2)) / H2 ** 2 * v
    close(jv, want, rtol=1e-5, atol=1e-5)
    close(kv, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", BINARY)
@SETTINGS
@given(st.data())
def test_binary_second_order(op, data):
    """Operands of one shape: the Hessian of s . f couples x and y elementwise."""
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    args = [draw_values(data.draw, shape, d) for d in _DOMAINS[op]]
    s = draw_values(data.draw, shape, "any")
    vs = [draw_values(data.draw, shape, "any") for _ in args]
    m = build_second_order(op, [ttype(shape)] * 2)
    j0, j1, k0, k1 = irkit.interpret(m, "h", *args, s, *vs)
    want = fd_hvp(reference(op), args, s, vs)
    for got in ((j0, j1), (k0, k1)):
        for g, w in zip(got, want):
            close(g, w, rtol=1e-4, atol=1e-5)       # x / y has large derivatives at small y


def test_hvp_of_a_composite():
    """H v of sum(tanh(x) * x * x) (seeded with ones), against the hand-derived Hessian
    diagonal: f = t x^2, f' = (1 - t^2) x^2 + 2 t x, f'' = 2t + 4x(1 - t^2) - 2t(1 - t^2)x^2."""
    text = """func.func @h(%x: tensor<2x3xf64>, %v: tensor<2x3xf64>)
        -> (tensor<2x3xf64>, tensor<2x3xf64>) {
      %t = graph.tanh %x : (tensor<2x3xf64>) -> tensor<2x3xf64>
      %a = graph.mul %t, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
      %b = graph.mul %a, %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
      %one = graph.constant dense<1.0> : tensor<2x3xf64>
      %g = autodiff.grad %b seed %one wrt %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
      %hv = autodiff.jvp %g wrt %x along %v : (tensor<2x3xf64>) -> tensor<2x3xf64>
      %gv = autodiff.grad %g seed %v wrt %x : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
      return %hv, %gv : tensor<2x3xf64>, tensor<2x3xf64>
    }"""
    m = irkit.parse_module(text)
    PassManager.parse(PIPELINE).run(m)
    irkit.verify(m)
    rng = np.random.default_rng(3)
    x, v = rng.uniform(-2, 2, (2, 3)), rng.uniform(-1, 1, (2, 3))
    t = np.tanh(x)
    want = (2 * t + 4 * x * (1 - t * t) - 2 * t * (1 - t * t) * x * x) * v
    hv, gv = irkit.interpret(m, "h", x, v)
    close(hv, want, rtol=1e-12, atol=1e-12)
    close(gv, want, rtol=1e-12, atol=1e-12)


# ----- conventions at kinks and domain edges (hand-derived) ----------------------------------


def grad_and_jvp(op: str, args: list) -> tuple[list, np.ndarray]:
    """Gradient seeded with ones and tangent along ones, for operands of one shape."""
    shape = np.shape(args[0])
    m = build(op, [ttype(shape)] * len(args))
    ones = np.ones(shape)
    *grads, t = irkit.interpret(m, "f", *args, ones, *([ones] * len(args)))
    return grads, t


def test_subgradient_conventions():
    x = np.array([-1.0, -0.0, 0.0, 2.0])
    (g,), t = grad_and_jvp("relu", [x])
    np.testing.assert_array_equal(g, [0, 0, 0, 1])               # relu'(0) = 0
    np.testing.assert_array_equal(t, [0, 0, 0, 1])
    (g,), t = grad_and_jvp("abs", [x])
    np.testing.assert_array_equal(g, [-1, 0, 0, 1])              # |x|'(0) = 0
    np.testing.assert_array_equal(t, [-1, 0, 0, 1])
    a, b = np.array([1.0, 2.0, -0.0, 3.0]), np.array([1.0, 1.0, 0.0, 5.0])
    for op, first in (("maximum", [1, 1, 1, 0]), ("minimum", [1, 0, 1, 1])):
        (ga, gb), t = grad_and_jvp(op, [a, b])
        np.testing.assert_array_equal(ga, first)                 # ties: the first operand
        np.testing.assert_array_equal(gb, 1 - np.array(first))
        # along (1, 1) every choice has slope 1; along (1, 0) the first operand's choices
        m = build(op, [ttype((4,))] * 2)
        _, _, t10 = irkit.interpret(m, "f", a, b, np.ones(4), np.ones(4), np.zeros(4))
        np.testing.assert_array_equal(t10, first)


def test_pow_at_zero():
    """d(x^y)/dx = 0 where y = 0 (x^0 = 1), also at x = 0; d/dy = 0 at x = 0 for y > 0
    (0^y = 0) and ln(x) x^y elsewhere, finite for x > 0."""
    x, y = np.array([0.0, 0.0, 2.0, 0.5]), np.array([0.0, 2.0, 3.0, -1.5])
    (gx, gy), _ = grad_and_jvp("pow", [x, y])
    np.testing.assert_allclose(gx, [0, 0, 3 * 4.0, -1.5 * 0.5 ** -2.5], rtol=1e-14)
    np.testing.assert_allclose(gy, [0, 0, np.log(2) * 8, np.log(0.5) * 0.5 ** -1.5],
                               rtol=1e-14)
    # The guard at x = y = 0 leaves second derivatives alone elsewhere: at y = 0 the mixed
    # one is d/dy (y x^(y-1)) = x^-1 (H v along v = (0, 1), seeded with 1).
    m = build_second_order("pow", [ttype((2,))] * 2)
    x, y = np.array([2.0, 0.5]), np.zeros(2)
    ones, zeros = np.ones(2), np.zeros(2)
    jx, _, kx, _ = irkit.interpret(m, "h", x, y, ones, zeros, ones)
    np.testing.assert_allclose(jx, 1 / x, rtol=1e-14)
    np.testing.assert_allclose(kx, 1 / x, rtol=1e-14)


# ----- element types --------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["f16", "f32"])
@pytest.mark.parametrize("op", UNARY + BINARY)
def test_lower_precision(op, dt):
    """The rules' constants and ops take the operand's element type: the graph verifies and
    gives what the float64 one gives, to the type's precision."""
    rng = np.random.default_rng(7)
    shapes = [(2, 3)] if op in UNARY else [(2, 3), (3,)]
    lo, hi = (0.5, 2.0) if op in ("log", "sqrt", "rsqrt") else (-2.0, 2.0)
    args = [rng.uniform(lo, hi, s) for s in shapes]
    if op == "pow":
        args[0] = rng.uniform(0.5, 2.0, (2, 3))
    if op == "div":
        args[1] = rng.uniform(0.5, 2.0, (3,))
    if op in ("abs", "relu"):
        args[0] = np.sign(args[0]) * np.maximum(np.abs(args[0]), 0.2)
    if op in ("maximum", "minimum"):
        args[1] = args[1] + 0.3 * (np.abs(args[1] - args[0]).min(axis=0) < 0.2)
    s = rng.uniform(-1, 1, (2, 3))
    vs = [rng.uniform(-1, 1, sh) for sh in shapes]
    outs = {}
    for t in ("f64", dt):
        m = build(op, [ttype(sh, t) for sh in shapes])
        np_t = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[t]
        res = irkit.interpret(m, "f", *(a.astype(np_t) for a in args), s.astype(np_t),
                              *(v.astype(np_t) for v in vs))
        assert all(r.dtype == np_t for r in res)
        outs[t] = res
    tol = {"f16": 3e-2, "f32": 1e-4}[dt]
    for lo_p, hi_p in zip(outs[dt], outs["f64"]):
        np.testing.assert_allclose(lo_p.astype(np.float64), hi_p, rtol=tol, atol=tol)


# ----- cast, and what has no derivative -------------------------------------------------------


def test_cast_between_floats():
    """The cotangent is cast back to the source type; the tangent forward (derivative 1)."""
    text = """func.func @f(%x: tensor<3xf32>, %s: tensor<3xf64>, %v: tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf64>) {
      %y = graph.cast %x : (tensor<3xf32>) -> tensor<3xf64>
      %g = autodiff.grad %y seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf32>
      %t = autodiff.jvp %y wrt %x along %v : (tensor<3xf32>) -> tensor<3xf64>
      return %g, %t : tensor<3xf32>, tensor<3xf64>
    }"""
    m = irkit.parse_module(text)
    PassManager.parse(PIPELINE).run(m)
    irkit.verify(m)
    s, v = np.array([1.5, -2.0, 0.25]), np.array([3.0, 0.5, -1.0], np.float32)
    g, t = irkit.interpret(m, "f", np.zeros(3, np.float32), s, v)
    assert g.dtype == np.float32 and t.dtype == np.float64
    np.testing.assert_array_equal(g, s.astype(np.float32))
    np.testing.assert_array_equal(t, v.astype(np.float64))


def _expand(text: str):
    m = irkit.parse_module(text, "t.mlir")
    PassManager.parse("autodiff").run(m)
    return m


@pytest.mark.parametrize("mid", [
    "%c = graph.cast %x : (tensor<3xf32>) -> tensor<3xi32>\n"
    "      %y = graph.cast %c : (tensor<3xi32>) -> tensor<3xf32>",
    "%c = graph.cmp %x, %x {predicate = \"lt\"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
    "      %y = graph.cast %c : (tensor<3xi1>) -> tensor<3xf32>",
    "%c = graph.cmp %x, %x {predicate = \"lt\"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>\n"
    "      %n = graph.not %c : (tensor<3xi1>) -> tensor<3xi1>\n"
    "      %a = graph.and %n, %c : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>\n"
    "      %o = graph.or %a, %c : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>\n"
    "      %y = graph.cast %o : (tensor<3xi1>) -> tensor<3xf32>",
], ids=["through-int", "through-cmp", "through-logic"])
def test_non_differentiable_path_is_an_error(mid):
    text = f"""func.func @f(%x: tensor<3xf32>, %s: tensor<3xf32>) -> tensor<3xf32> {{
      {mid}
      %g = autodiff.grad %y seed %s wrt %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %g : tensor<3xf32>
    }}"""
    with pytest.raises(Exception, match="is not differentiable"):
        _expand(text)


def test_non_differentiable_traits():
    from irkit.ad_rules import Linear, NonDifferentiable, is_differentiable
    from irkit.opdef import has_trait
    for name in ("graph.cmp", "graph.and", "graph.or", "graph.not"):
        assert NonDifferentiable in {type(t) for t in lookup_op(name).traits}, name
    for name in ("graph.neg", "graph.add", "graph.sub", "graph.where", "graph.cast"):
        assert Linear in {type(t) for t in lookup_op(name).traits}, name
    m = irkit.parse_module("""func.func @f(%x: tensor<2xf32>, %i: tensor<2xi32>) {
      %a = graph.cast %x : (tensor<2xf32>) -> tensor<2xf64>
      %b = graph.cast %x : (tensor<2xf32>) -> tensor<2xi32>
      %c = graph.cast %i : (tensor<2xi32>) -> tensor<2xf32>
      return
    }""")
    casts = [o for o in m.walk() if o.name == "graph.cast"]
    assert [is_differentiable(c) for c in casts] == [True, False, False]
    assert not has_trait(casts[0], NonDifferentiable)


def test_where_condition_needs_no_derivative():
    """relu written as where(x > 0, x, 0): the comparison on the way to cond is fine."""
    text = """func.func @f(%x: tensor<4xf64>, %s: tensor<4xf64>) -> tensor<4xf64> {
      %z = graph.constant dense<0.0> : tensor<f64>
      %c = graph.cmp %x, %z {predicate = "gt"} : (tensor<4xf64>, tensor<f64>) -> tensor<4xi1>
      %y = graph.where %c, %x, %z : (tensor<4xi1>, tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
      %g = autodiff.grad %y seed %s wrt %x : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
      return %g : tensor<4xf64>
    }"""
    m = _expand(text)
    x, s = np.array([-1.0, 2.0, 0.0, 3.0]), np.array([5.0, 6.0, 7.0, 8.0])
    np.testing.assert_array_equal(irkit.interpret(m, "f", x, s), [0, 6, 0, 8])
