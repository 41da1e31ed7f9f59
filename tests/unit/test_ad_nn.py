"""Derivatives of the neural-network ops (graph_nn.py, graph_nn_grad.py) against finite
differences.

Each op is differentiated through the IR (`autodiff.grad` / `autodiff.jvp`, expanded by
`-p autodiff,canonicalize,cse` and interpreted) in float64 at random sizes, strides, paddings
and dynamic (`?`) dims drawn by hypothesis, and compared with central differences of the op's
own numpy semantics (the forward function interpreted):

- forward mode: J v equals (f(x + hv) - f(x - hv)) / 2h, elementwise;
- reverse mode: (s^T J_i) . u equals s . (J_i u) by finite differences, per operand, along
  random directions u (a random direction exposes any wrong entry with probability 1);
- the two modes agree: (s^T J) . v == s . (J v).

The backward ops (conv2d_backprop_input, ...) are checked the same way as forward ops, and
second derivatives through conv2d and max_pool2d (Hessian-vector products, grad of grad) are
checked against finite differences of the forward function or of the gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from irkit.dialects import load_all
from irkit.interpreter import interpret
from irkit.ir import Block
from irkit.opdef import lookup_op
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.types import F16, F32, F64, RankedTensorType

load_all()
SETTINGS = settings(max_examples=25, deadline=None)
H = 1e-6
RTOL = 1e-6


# ----- building and running derivative functions ----------------------------------------------


def _type(shape, dynamic=(), dtype=F64) -> RankedTensorType:
    """A tensor type of `shape` whose axes in `dynamic` are `?`."""
    return RankedTensorType(tuple(None if i in dynamic else d for i, d in enumerate(shape)),
                            dtype)


def _attr(v) -> str:
    if isinstance(v, (tuple, list)):
        return "array<i64" + (": " + ", ".join(map(str, v)) if v else "") + ">"
    return f"{v} : i64" if isinstance(v, int) else f"{float(v):.17e} : f64"


def _results(types) -> str:
    text = ", ".join(map(str, types))
    return text if len(types) == 1 else f"({text})"


class Case:
    """`name` applied to operands of types `types` with Python-valued `props`; `diff` lists
    the operands derivatives are taken with respect to. Builds three functions of the
    operands: @f (the op), @vjp (+ a seed: the cotangents of the `diff` operands) and @jvp
    (+ one tangent per `diff` operand: the result's tangent)."""

    def __init__(self, name: str, types: list, props: dict, diff: list[int]) -> None:
        self.types, self.diff = types, diff
        op = lookup_op(name).create(*Block(types).args, **props)
        self.out = op.results[0].type
        attrs = ", ".join(f"{k} = {_attr(v)}" for k, v in sorted(props.items()))
        operands = ", ".join(f"%a{i}" for i in range(len(types)))
        self.line = (f"%y = {name} {operands}{' {' + attrs + '}' if attrs else ''} : "
                     f"({', '.join(map(str, types))}) -> {self.out}")
        self.module = parse_module(self._text(), f"<{name}>")
        PassManager.parse("autodiff,canonicalize,cse").run(self.module)

    def _fn(self, fname: str, extra: list, body: str, outs: list, rets: str) -> str:
        args = [f"%a{i}: {t}" for i, t in enumerate(self.types)] + extra
        return (f"func.func @{fname}({', '.join(args)}) -> {_results(outs)} {{\n"
                f"  {self.line}\n  {body}\n  return {rets} : {', '.join(map(str, outs))}\n}}\n")

    def _text(self) -> str:
        xs = ", ".join(f"%a{i}" for i in self.diff)
        x_types = [self.types[i] for i in self.diff]
        k = len(self.diff)
        grads = "%g" if k == 1 else f"%g:{k}"
        grad = (f"{grads} = autodiff.grad %y seed %s wrt {xs} : ({self.out}, {self.out}) -> "
                f"{_results(x_types)}")
        jvp = (f"%t = autodiff.jvp %y wrt {xs} along {', '.join(f'%v{i}' for i in self.diff)}"
               f" : ({', '.join(map(str, x_types))}) -> {self.out}")
        rets = "%g" if k == 1 else ", ".join(f"%g#{j}" for j in range(k))
        return (self._fn("f", [], "", [self.out], "%y")
                + self._fn("vjp", [f"%s: {self.out}"], grad, x_types, rets)
                + self._fn("jvp", [f"%v{i}: {self.types[i]}" for i in self.diff], jvp,
                           [self.out], "%t"))

    def f(self, args):
        return interpret(self.module, "f", *args)

    def vjp(self, args, seed) -> list:
        out = interpret(self.module, "vjp", *args, seed)
        return list(out) if isinstance(out, tuple) else [out]

    def jvp(self, args, tangents):
        return interpret(self.module, "jvp", *args, *tangents)

    def fd(self, args, directions: dict):
        """(f(x + h v) - f(x - h v)) / 2h, the operands in `directions` moving."""
        plus = [a + H * directions[i] if i in directions else a for i, a in enumerate(args)]
        minus = [a - H * directions[i] if i in directions else a for i, a in enumerate(args)]
        return (self.f(plus) - self.f(minus)) / (2 * H)


def _unit(rng, shape) -> np.ndarray:
    v = rng.normal(size=shape)
    return v / max(np.linalg.norm(v), 1e-300)


def check(case: Case, args: list, rng) -> None:
    """Both modes against finite differences, and against each other."""
    y = case.f(args)
    seed = rng.normal(size=y.shape)
    grads = case.vjp(args, seed)
    assert len(grads) == len(case.diff)
    for i, g in zip(case.diff, grads):
        assert g.shape == args[i].shape and g.dtype == np.float64
        u = _unit(rng, args[i].shape)
        jv = case.fd(args, {i: u})
        want, got = float(np.sum(seed * jv)), float(np.sum(g * u))
        scale = np.linalg.norm(seed) * max(np.linalg.norm(jv), 1.0)
        assert abs(got - want) <= RTOL * scale, f"vjp wrt operand #{i}: {got} vs FD {want}"

    directions = {i: _unit(rng, args[i].shape) for i in case.diff}
    want = case.fd(args, directions)
    got = case.jvp(args, [directions[i] for i in case.diff])
    assert got.shape == y.shape
    np.testing.assert_allclose(got, want, rtol=RTOL,
                               atol=RTOL * max(float(np.max(np.abs(want), initial=0)), 1.0))

    # s . (J v) == (s^T J) . v, both from the IR: tight, no finite differences involved.
    dual = sum(float(np.sum(g * directions[i])) for i, g in zip(case.diff, grads))
    primal = float(np.sum(seed * got))
    assert abs(dual - primal) <= 1e-10 * np.linalg.norm(seed) * max(np.linalg.norm(got), 1.0)


# ----- random problems -------------------------------------------------------------------------


@st.composite
def conv_problems(draw):
    """(x shape, w shape, stride, padding, dynamic axes of x) with a non-empty output."""
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    assume(h + 2 * padding[0] >= kh and w + 2 * padding[1] >= kw)
    dynamic = draw(st.sampled_from([(), (0,), (0, 2, 3), (0, 1, 2, 3)]))
    return (n, c, h, w), (o, c, kh, kw), stride, padding, dynamic


@st.composite
def pool_problems(draw):
    """(x shape, kernel, stride or (), dynamic axes of x) with a non-empty output."""
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    kernel = (draw(st.integers(1, min(h, 3))), draw(st.integers(1, min(w, 3))))
    stride = draw(st.one_of(st.just(()), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    dynamic = draw(st.sampled_from([(), (0,), (0, 2, 3)]))
    return (n, c, h, w), kernel, stride, dynamic


def _conv_out(xs, ws, stride, padding) -> tuple:
    return (xs[0], ws[0], *((xs[2 + i] + 2 * padding[i] - ws[2 + i]) // stride[i] + 1
                            for i in range(2)))


def _pool_out(xs, kernel, stride) -> tuple:
    stride = stride or kernel
    return (*xs[:2], *((xs[2 + i] - kernel[i]) // stride[i] + 1 for i in range(2)))


def _distinct(rng, shape) -> np.ndarray:
    """Values 0.1 apart in random order: no two elements of a window tie, even after a
    finite-difference step, so max pooling is differentiable there."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) - np.prod(shape) / 2) * 0.1


# ----- convolution -----------------------------------------------------------------------------


@SETTINGS
@given(p=conv_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d(p, seed):
    xs, ws, stride, padding, dyn = p
    rng = np.random.default_rng(seed)
    case = Case("graph.conv2d", [_type(xs, dyn), _type(ws)],
                {"stride": stride, "padding": padding}, [0, 1])
    check(case, [rng.normal(size=xs), rng.normal(size=ws)], rng)


@SETTINGS
@given(p=conv_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d_backprop_input(p, seed):
    """Bilinear in (grad, weight); the input operand only gives the shape."""
    xs, ws, stride, padding, dyn = p
    rng = np.random.default_rng(seed)
    ys = _conv_out(xs, ws, stride, padding)
    case = Case("graph.conv2d_backprop_input", [_type(ys, dyn[:1]), _type(ws), _type(xs, dyn)],
                {"stride": stride, "padding": padding}, [0, 1])
    check(case, [rng.normal(size=ys), rng.normal(size=ws), rng.normal(size=xs)], rng)


@SETTINGS
@given(p=conv_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d_backprop_filter(p, seed):
    """Bilinear in (input, grad); the weight operand only gives the shape."""
    xs, ws, stride, padding, dyn = p
    rng = np.random.default_rng(seed)
    ys = _conv_out(xs, ws, stride, padding)
    case = Case("graph.conv2d_backprop_filter", [_type(xs, dyn), _type(ys, dyn[:1]), _type(ws)],
                {"stride": stride, "padding": padding}, [0, 1])
    check(case, [rng.normal(size=xs), rng.normal(size=ys), rng.normal(size=ws)], rng)


def test_conv2d_backward_against_direct_sums():
    """The backward ops against their definitions as sums, written out loop by loop: every
    output cotangent element goes back to the input taps and weight taps of its window
    (padding and the rows a stride leaves over get nothing)."""
    rng = np.random.default_rng(7)
    x, w = rng.normal(size=(2, 2, 6, 5)), rng.normal(size=(3, 2, 3, 2))
    (sh, sw), (ph, pw) = (2, 3), (1, 0)
    dy = rng.normal(size=_conv_out(x.shape, w.shape, (sh, sw), (ph, pw)))
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    for n, o, i, j in np.ndindex(*dy.shape):
        for c, di, dj in np.ndindex(*w.shape[1:]):
            r, q = i * sh + di - ph, j * sw + dj - pw
            if 0 <= r < x.shape[2] and 0 <= q < x.shape[3]:
                dx[n, c, r, q] += dy[n, o, i, j] * w[o, c, di, dj]
                dw[o, c, di, dj] += dy[n, o, i, j] * x[n, c, r, q]
    props = {"stride": (sh, sw), "padding": (ph, pw)}
    args = Block([_type(a.shape) for a in (dy, w, x)]).args
    op_in = lookup_op("graph.conv2d_backprop_input").create(*args, **props)
    np.testing.assert_allclose(op_in.evaluate(dy, w, x), dx, rtol=1e-12, atol=1e-12)
    args = Block([_type(a.shape) for a in (x, dy, w)]).args
    op_w = lookup_op("graph.conv2d_backprop_filter").create(*args, **props)
    np.testing.assert_allclose(op_w.evaluate(x, dy, w), dw, rtol=1e-12, atol=1e-12)


# ----- pooling ---------------------------------------------------------------------------------


@SETTINGS
@given(p=pool_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_max_pool2d(p, seed):
    xs, kernel, stride, dyn = p
    rng = np.random.default_rng(seed)
    case = Case("graph.max_pool2d", [_type(xs, dyn)], {"kernel": kernel, "stride": stride}, [0])
    check(case, [_distinct(rng, xs)], rng)


@SETTINGS
@given(p=pool_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_avg_pool2d(p, seed):
    xs, kernel, stride, dyn = p
    rng = np.random.default_rng(seed)
    case = Case("graph.avg_pool2d", [_type(xs, dyn)], {"kernel": kernel, "stride": stride}, [0])
    check(case, [rng.normal(size=xs)], rng)


@SETTINGS
@given(p=pool_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_pool_backward_ops(p, seed):
    """max_pool2d_grad and max_pool2d_grad_grad are linear in their second operand (the
    first, x, only selects); avg_pool2d_grad in its first (the second only gives the shape)."""
    xs, kernel, stride, dyn = p
    rng = np.random.default_rng(seed)
    ys = _pool_out(xs, kernel, stride)
    props = {"kernel": kernel, "stride": stride}
    x, tx, dy = _distinct(rng, xs), rng.normal(size=xs), rng.normal(size=ys)
    tx_t, x_t, y_t = _type(xs, dyn), _type(xs, dyn), _type(ys, dyn[:1])
    check(Case("graph.max_pool2d_grad", [x_t, y_t], props, [1]), [x, dy], rng)
    check(Case("graph.max_pool2d_grad_grad", [x_t, tx_t], props, [1]), [x, tx], rng)
    check(Case("graph.avg_pool2d_grad", [y_t, x_t], props, [0]), [dy, x], rng)


def test_max_pool_selection_carries_no_derivative():
    """The selecting input of max_pool2d_grad is piecewise constant: its gradient is zero."""
    case = Case("graph.max_pool2d_grad", [_type((1, 1, 4, 4)), _type((1, 1, 2, 2))],
                {"kernel": (2, 2)}, [0])
    rng = np.random.default_rng(0)
    (g,) = case.vjp([_distinct(rng, (1, 1, 4, 4)), rng.normal(size=(1, 1, 2, 2))],
                    rng.normal(size=(1, 1, 4, 4)))
    assert not g.any()


def test_max_pool_ties_route_to_the_first_maximum():
    """Equal values in a window: the gradient goes to the first in row-major order, once,
    also where overlapping windows share the maximum."""
    case = Case("graph.max_pool2d", [_type((1, 1, 2, 3))], {"kernel": (2, 2), "stride": (1, 1)},
                [0])
    x = np.array([[[[1.0, 5.0, 5.0], [5.0, 2.0, 5.0]]]])
    (g,) = case.vjp([x], np.array([[[[10.0, 100.0]]]]))
    np.testing.assert_array_equal(g, [[[[0.0, 110.0, 0.0], [0.0, 0.0, 0.0]]]])


# ----- normalization ---------------------------------------------------------------------------


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=4),
       dyn=st.sampled_from([(), (0,), (0, 1)]), eps=st.sampled_from([1e-5, 0.1]),
       diff=st.sampled_from([[0, 1, 2, 3, 4], [0], [1, 4], [2, 3], [4]]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_batchnorm(shape, dyn, eps, diff, seed):
    """All five operands: the statistics too (a variance kept away from 0)."""
    rng = np.random.default_rng(seed)
    c = shape[1]
    case = Case("graph.batchnorm", [_type(shape, dyn)] + [_type((c,))] * 4, {"epsilon": eps},
                diff)
    args = [rng.normal(size=shape), rng.normal(size=c), rng.uniform(0.5, 2.0, size=c),
            rng.normal(size=c), rng.normal(size=c)]
    check(case, args, rng)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data(),
       seed=st.integers(0, 2 ** 32 - 1))
def test_layernorm(shape, data, seed):
    rng = np.random.default_rng(seed)
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    dyn = data.draw(st.sets(st.integers(0, rank - 1)))
    diff = data.draw(st.sampled_from([[0, 1, 2], [0], [1, 2], [2]]))
    d = shape[axis]
    case = Case("graph.layernorm", [_type(shape, dyn), _type((d,)), _type((d,))],
                {"axis": axis, "epsilon": 1e-3}, diff)
    check(case, [rng.normal(size=shape), rng.normal(size=d), rng.normal(size=d)], rng)


# ----- second order ----------------------------------------------------------------------------


def _run(text: str, *args):
    m = parse_module(text, "<second order>")
    PassManager.parse("autodiff,canonicalize,cse").run(m)
    return m, interpret(m, "f", *args)


def _conv_text(xs, ws, ys, props: str, dyn: bool) -> tuple[str, str, str, str]:
    x = str(_type(xs, (0,) if dyn else ()))
    y = str(_type(ys, (0,) if dyn else ()))
    w = str(_type(ws))
    return x, w, y, f"graph.conv2d %x, %w {props} : ({x}, {w}) -> {y}"


@SETTINGS
@given(p=conv_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d_hessian_vector_product(p, seed):
    """f(w) = sum(conv2d(x, w)^2) / 2 is quadratic in w, so u . H v is its mixed central
    difference exactly (up to rounding), and H v the central difference of its gradient."""
    xs, ws, stride, padding, dyn = p
    rng = np.random.default_rng(seed)
    ys = _conv_out(xs, ws, stride, padding)
    props = f"{{stride = {_attr(stride)}, padding = {_attr(padding)}}}"
    x_t, w_t, y_t, conv = _conv_text(xs, ws, ys, props, bool(dyn))
    text = f"""func.func @f(%x: {x_t}, %w: {w_t}, %v: {w_t}) -> ({w_t}, {w_t}, {w_t}) {{
  %y = {conv}
  %sq = graph.mul %y, %y : ({y_t}, {y_t}) -> {y_t}
  %l = graph.reduce_sum %sq : ({y_t}) -> tensor<f64>
  %g = autodiff.grad %y seed %y wrt %w : ({y_t}, {y_t}) -> {w_t}
  %h = autodiff.jvp %g wrt %w along %v : ({w_t}) -> {w_t}
  %g2 = autodiff.grad %l wrt %w : (tensor<f64>) -> {w_t}
  %h2 = autodiff.jvp %g2 wrt %w along %v : ({w_t}) -> {w_t}
  return %g, %h, %h2 : {w_t}, {w_t}, {w_t}
}}"""
    x, w, v, u = (rng.normal(size=sh) for sh in (xs, ws, ws, ws))
    m, (_, hv, hv2) = _run(text, x, w, v)
    # The loss written out, sum(y * y) = 2 f (through the rules of mul and reduce_sum).
    np.testing.assert_allclose(hv2, 2 * hv, rtol=1e-10, atol=1e-10)

    def grad(wv):
        return interpret(m, "f", x, wv, v)[0]

    conv_op = lookup_op("graph.conv2d").create(*Block([_type(xs), _type(ws)]).args,
                                               stride=stride, padding=padding)

    def loss(wv):
        return 0.5 * float(np.sum(conv_op.evaluate(x, wv) ** 2))

    h = 1e-2
    mixed = (loss(w + h * u + h * v) - loss(w + h * u - h * v) - loss(w - h * u + h * v)
             + loss(w - h * u - h * v)) / (4 * h * h)
    scale = max(np.linalg.norm(u) * np.linalg.norm(hv), 1.0)
    assert abs(float(np.sum(u * hv)) - mixed) <= 1e-7 * scale
    fd = (grad(w + H * v) - grad(w - H * v)) / (2 * H)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-6 * max(np.abs(fd).max(), 1.0))


@SETTINGS
@given(p=conv_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_conv2d_grad_of_grad(p, seed):
    """dx = grad of conv2d(x, w) seeded with s; the gradient of u . dx with respect to w and
    s against central differences of the first gradient (linear in each, so exact)."""
    xs, ws, stride, padding, dyn = p
    rng = np.random.default_rng(seed)
    ys = _conv_out(xs, ws, stride, padding)
    props = f"{{stride = {_attr(stride)}, padding = {_attr(padding)}}}"
    x_t, w_t, y_t, conv = _conv_text(xs, ws, ys, props, bool(dyn))
    text = f"""func.func @f(%x: {x_t}, %w: {w_t}, %s: {y_t}, %u: {x_t})
    -> ({x_t}, {w_t}, {y_t}) {{
  %y = {conv}
  %gx = autodiff.grad %y seed %s wrt %x : ({y_t}, {y_t}) -> {x_t}
  %h:2 = autodiff.grad %gx seed %u wrt %w, %s : ({x_t}, {x_t}) -> ({w_t}, {y_t})
  return %gx, %h#0, %h#1 : {x_t}, {w_t}, {y_t}
}}"""
    x, w, s, u = (rng.normal(size=sh) for sh in (xs, ws, ys, xs))
    m, (_, dw, ds) = _run(text, x, w, s, u)
    for name, grad, move in (("w", dw, 1), ("s", ds, 2)):
        d = _unit(rng, grad.shape)
        args = [x, w, s, u]
        plus, minus = list(args), list(args)
        plus[move], minus[move] = args[move] + H * d, args[move] - H * d
        want = (np.sum(u * interpret(m, "f", *plus)[0])
                - np.sum(u * interpret(m, "f", *minus)[0])) / (2 * H)
        scale = max(np.linalg.norm(u) * np.linalg.norm(grad), 1.0)
        assert abs(float(np.sum(grad * d)) - want) <= 1e-6 * scale, name


@SETTINGS
@given(p=pool_problems(), seed=st.integers(0, 2 ** 32 - 1))
def test_max_pool2d_hessian_vector_product(p, seed):
    """f(x) = sum(max_pool2d(x)^2) / 2: H v = max_pool2d_grad(x, J v), against central
    differences of the gradient (the selection does not change within the step)."""
    xs, kernel, stride, dyn = p
    rng = np.random.default_rng(seed)
    ys = _pool_out(xs, kernel, stride)
    x_t, y_t = _type(xs, dyn), _type(ys, dyn[:1])
    props = f"{{kernel = {_attr(kernel)}, stride = {_attr(stride)}}}"
    text = f"""func.func @f(%x: {x_t}, %v: {x_t}) -> ({x_t}, {x_t}) {{
  %y = graph.max_pool2d %x {props} : ({x_t}) -> {y_t}
  %g = autodiff.grad %y seed %y wrt %x : ({y_t}, {y_t}) -> {x_t}
  %h = autodiff.jvp %g wrt %x along %v : ({x_t}) -> {x_t}
  return %g, %h : {x_t}, {x_t}
}}"""
    x, v = _distinct(rng, xs), _unit(rng, xs)
    m, (_, hv) = _run(text, x, v)
    fd = (interpret(m, "f", x + H * v, v)[0] - interpret(m, "f", x - H * v, v)[0]) / (2 * H)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op", ["layernorm", "batchnorm"])
def test_normalization_hessian_vector_product(op):
    """f = sum(norm(x)^2) / 2 in x: H v against central differences of the gradient. Needs
    the rules of the elementwise and reduce ops the normalizations differentiate into."""
    rng = np.random.default_rng(3)
    t = "tensor<?x3x4xf64>"
    if op == "layernorm":
        line = f"%y = graph.layernorm %x, %p, %q : ({t}, tensor<4xf64>, tensor<4xf64>) -> {t}"
        params = [rng.normal(size=4), rng.normal(size=4)]
        p_types = "tensor<4xf64>"
    else:
        line = (f"%y = graph.batchnorm %x, %p, %r, %p, %q : ({t}, tensor<3xf64>, "
                f"tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> {t}")
        params = [rng.normal(size=3), rng.normal(size=3)]
        p_types = "tensor<3xf64>"
    extra = ", %r: tensor<3xf64>" if op == "batchnorm" else ""
    text = f"""func.func @f(%x: {t}, %v: {t}, %p: {p_types}, %q: {p_types}{extra})
    -> ({t}, {t}) {{
  {line}
  %g:2 = autodiff.grad %y seed %y wrt %x, %p : ({t}, {t}) -> ({t}, {p_types})
  %h = autodiff.jvp %g#0 wrt %x along %v : ({t}) -> {t}
  return %g#0, %h : {t}, {t}
}}"""
    if op == "batchnorm":
        params.append(rng.uniform(0.5, 2.0, size=3))
    x, v = rng.normal(size=(2, 3, 4)), _unit(rng, (2, 3, 4))
    m, (_, hv) = _run(text, x, v, *params)
    fd = (interpret(m, "f", x + H * v, v, *params)[0]
          - interpret(m, "f", x - H * v, v, *params)[0]) / (2 * H)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-6 * max(np.abs(fd).max(), 1.0))


# ----- element types ---------------------------------------------------------------------------

#: (op, operand shapes, props, differentiated operands, positive operands)
_TYPED_CASES = [
    ("graph.conv2d", [(2, 2, 5, 5), (3, 2, 3, 3)], {"stride": (2, 1), "padding": (1, 0)},
     [0, 1], ()),
    ("graph.conv2d_backprop_input", [(2, 3, 2, 2), (3, 2, 3, 3), (2, 2, 5, 5)],
     {"stride": (2, 2)}, [0, 1], ()),
    ("graph.conv2d_backprop_filter", [(2, 2, 5, 5), (2, 3, 2, 2), (3, 2, 3, 3)],
     {"stride": (2, 2)}, [0, 1], ()),
    ("graph.max_pool2d", [(2, 2, 5, 5)], {"kernel": (2, 2), "stride": (1, 1)}, [0], ()),
    ("graph.avg_pool2d", [(2, 2, 5, 5)], {"kernel": (3, 2)}, [0], ()),
    ("graph.max_pool2d_grad", [(2, 2, 5, 5), (2, 2, 2, 2)], {"kernel": (2, 2)}, [1], ()),
    ("graph.max_pool2d_grad_grad", [(2, 2, 5, 5), (2, 2, 5, 5)], {"kernel": (2, 2)}, [1], ()),
    ("graph.avg_pool2d_grad", [(2, 2, 2, 2), (2, 2, 5, 5)], {"kernel": (2, 2)}, [0], ()),
    ("graph.batchnorm", [(2, 3, 2), (3,), (3,), (3,), (3,)], {}, [0, 1, 2, 3, 4], (2,)),
    ("graph.layernorm", [(2, 3, 4), (3,), (3,)], {"axis": 1}, [0, 1, 2], ()),
]


@pytest.mark.parametrize("dtype", [F16, F32], ids=str)
@pytest.mark.parametrize("name,shapes,props,diff,positive", _TYPED_CASES,
                         ids=[c[0] for c in _TYPED_CASES])
def test_rules_keep_the_element_type(name, shapes, props, diff, positive, dtype):
    """In f16 and f32 the derivatives are built in that type (constants included: the graph
    dialect never promotes) and agree with the f64 ones, which the tests above check
    against finite differences, to the type's precision."""
    rng = np.random.default_rng(1)
    args = [np.abs(rng.normal(size=sh)) + 0.5 if i in positive else _distinct(rng, sh)
            for i, sh in enumerate(shapes)]
    seed = None
    results = {}
    for t in (F64, dtype):
        case = Case(name, [_type(sh, (0,), t) for sh in shapes], props, diff)
        np_t = np.float64 if t is F64 else np.dtype(str(t).replace("f", "float"))
        cast = [a.astype(np_t) for a in args]
        y = case.f(cast)
        if seed is None:
            seed = rng.normal(size=y.shape)
        grads = case.vjp(cast, seed.astype(np_t))
        tangent = case.jvp(cast, [np.ones_like(cast[i]) for i in diff])
        assert all(g.dtype == np_t for g in grads) and tangent.dtype == np_t
        results[t] = [*grads, tangent]
    tol = 2e-2 if dtype is F16 else 1e-4
    for got, want in zip(results[dtype], results[F64]):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol,
                                   atol=tol * max(np.abs(want).max(), 1.0))
