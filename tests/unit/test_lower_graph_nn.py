"""lower-graph-to-loop on the layers of graph_nn.py and graph_nn_grad.py: each op is run by
the interpreter before and after lowering (helpers of test_lower_graph.py: garbage-filled
outputs, every temporary freed) on random sizes, strides and paddings; one convolution is
also compiled by the LLVM backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.unit.test_lower_graph import check, lower, rand

F = "f32"


def t(shape) -> str:
    return "tensor<" + "x".join("?" if d is None else str(d) for d in shape) + "xf32>"


def _conv_out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def conv_src(xs, ws, stride, pad, dyn=False) -> str:
    oh, ow = _conv_out(xs[2], ws[2], stride[0], pad[0]), _conv_out(xs[3], ws[3], stride[1], pad[1])
    xt = (None, xs[1], None, None) if dyn else xs
    rt = (None, ws[0], None, None) if dyn else (xs[0], ws[0], oh, ow)
    return f"""
func.func @f(%x: {t(xt)}, %w: {t(ws)}) -> {t(rt)} {{
  %y = graph.conv2d %x, %w {{stride = array<i64: {stride[0]}, {stride[1]}>, padding = array<i64: {pad[0]}, {pad[1]}>}} : ({t(xt)}, {t(ws)}) -> {t(rt)}
  return %y : {t(rt)}
}}"""


conv_case = st.tuples(
    st.integers(1, 2), st.integers(1, 3), st.integers(1, 3),       # N, C, O
    st.integers(1, 3), st.integers(1, 3),                          # KH, KW
    st.integers(1, 3), st.integers(1, 3), st.integers(0, 2), st.integers(0, 2),  # strides, pads
    st.integers(0, 4), st.integers(0, 4))                          # extra H, W


def _conv_case(case):
    n, c, o, kh, kw, sh, sw, ph, pw, eh, ew = case
    h, w = max(kh - 2 * ph, 1) + eh, max(kw - 2 * pw, 1) + ew
    return (n, c, h, w), (o, c, kh, kw), (sh, sw), (ph, pw)


@settings(max_examples=12, deadline=None)
@given(conv_case, st.booleans())
def test_conv2d(case, dyn):
    xs, ws, stride, pad = _conv_case(case)
    check(conv_src(xs, ws, stride, pad, dyn), (rand(*xs), rand(*ws, seed=1)))


def _grad_src(name, operands, result) -> str:
    """A function applying `name` (with `{uses}` standing for its operands) to operands of
    static shapes `operands`, returning a result of shape `result`."""
    args = ", ".join(f"%a{i}: {t(s)}" for i, s in enumerate(operands))
    uses = ", ".join(f"%a{i}" for i in range(len(operands)))
    types = ", ".join(t(s) for s in operands)
    return f"""
func.func @f({args}) -> {t(result)} {{
  %y = {name.format(uses=uses)} : ({types}) -> {t(result)}
  return %y : {t(result)}
}}"""


@settings(max_examples=10, deadline=None)
@given(conv_case)
def test_conv2d_backprop_input_and_filter(case):
    xs, ws, stride, pad = _conv_case(case)
    ys = (xs[0], ws[0], _conv_out(xs[2], ws[2], stride[0], pad[0]),
          _conv_out(xs[3], ws[3], stride[1], pad[1]))
    attrs = (f"{{{{stride = array<i64: {stride[0]}, {stride[1]}>, "
             f"padding = array<i64: {pad[0]}, {pad[1]}>}}}}")
    x, w, dy = rand(*xs), rand(*ws, seed=1), rand(*ys, seed=2)
    check(_grad_src("graph.conv2d_backprop_input {uses} " + attrs, [ys, ws, xs], xs),
          (dy, w, x))
    check(_grad_src("graph.conv2d_backprop_filter {uses} " + attrs, [xs, ys, ws], ws),
          (x, dy, w))


pool_case = st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 3),
                      st.integers(1, 3), st.sampled_from([None, (1, 1), (2, 1), (1, 3)]),
                      st.integers(0, 4), st.integers(0, 4))


def _pool_case(case):
    n, c, kh, kw, stride, eh, ew = case
    xs = (n, c, kh + eh, kw + ew)
    s = stride or (kh, kw)
    ys = (n, c, (xs[2] - kh) // s[0] + 1, (xs[3] - kw) // s[1] + 1)
    attrs = f"kernel = array<i64: {kh}, {kw}>" + \
        (f", stride = array<i64: {stride[0]}, {stride[1]}>" if stride else "")
    return xs, ys, "{{" + attrs + "}}"


def _pool_input(xs, ties: bool, seed=0):
    x = rand(*xs, seed=seed)
    if ties:                                   # many equal maxima and a NaN or two
        x = np.round(x).astype(np.float32)
        if x.size > 3:
            x.flat[3] = np.nan
    return x


@settings(max_examples=12, deadline=None)
@given(pool_case, st.booleans())
def test_pools(case, ties):
    xs, ys, attrs = _pool_case(case)
    x = _pool_input(xs, ties)
    for name in ("graph.max_pool2d", "graph.avg_pool2d"):
        check(_grad_src(name + " {uses} " + attrs, [xs], ys), (x,))


@settings(max_examples=12, deadline=None)
@given(pool_case, st.booleans())
def test_pool_grads(case, ties):
    xs, ys, attrs = _pool_case(case)
    x, dy = _pool_input(xs, ties), rand(*ys, seed=3)
    check(_grad_src("graph.max_pool2d_grad {uses} " + attrs, [xs, ys], xs), (x, dy))
    check(_grad_src("graph.max_pool2d_grad_grad {uses} " + attrs, [xs, xs], ys),
          (x, rand(*xs, seed=4)))
    check(_grad_src("graph.avg_pool2d_grad {uses} " + attrs, [ys, xs], xs), (dy, x))


def test_pool_dynamic_sizes():
    src = """
func.func @f(%x: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32> {
  %y = graph.max_pool2d %x {kernel = array<i64: 2, 3>, stride = array<i64: 1, 2>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  return %y : tensor<?x2x?x?xf32>
}"""
    check(src, (rand(1, 2, 4, 5),), (rand(3, 2, 2, 7),))


def test_batchnorm():
    src = """
func.func @f(%x: tensor<?x3x?xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<?x3x?xf32> {
  %y = graph.batchnorm %x, %m, %v, %g, %b {epsilon = 1.0e-3 : f64} : (tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x?xf32>
  return %y : tensor<?x3x?xf32>
}"""
    v = np.abs(rand(3, seed=5))
    check(src, (rand(2, 3, 4), rand(3, seed=1), v, rand(3, seed=2), rand(3, seed=3)),
          (rand(1, 3, 1), rand(3, seed=1), v, rand(3, seed=2), rand(3, seed=3)))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_layernorm(axis):
    shape = (2, 5, 4)
    d = shape[axis]
    src = f"""
func.func @f(%x: tensor<?x5x4xf32>, %g: tensor<{d}xf32>, %b: tensor<{d}xf32>) -> tensor<?x5x4xf32> {{
  %y = graph.layernorm %x, %g, %b {{axis = {axis} : i64}} : (tensor<?x5x4xf32>, tensor<{d}xf32>, tensor<{d}xf32>) -> tensor<?x5x4xf32>
  return %y : tensor<?x5x4xf32>
}}"""
    if axis == 0:
        src = src.replace("?x5x4", "2x5x4")
    check(src, (rand(*shape) + 100, rand(d, seed=1), rand(d, seed=2)), rtol=1e-4, atol=1e-4)


def test_compiled_conv2d_matches_the_interpreter():
    from tests.unit.test_lower_graph import _backend, parse_module, run_graph, same
    compile_module = _backend()
    xs, ws = (2, 3, 7, 6), (4, 3, 3, 2)
    src = conv_src(xs, ws, (2, 1), (1, 1), dyn=True)
    x, w = rand(*xs), rand(*ws, seed=1)
    (want,), _ = run_graph(parse_module(src), "f", (x, w))
    jit = compile_module(lower(src))
    got = np.full_like(want, 12345.0)
    jit.f(x, w, got)
    same(got, want, rtol=1e-5, atol=1e-5)


def test_switch_and_merge_ask_for_raising_first():
    from irkit.diagnostics import IRError
    src = """
func.func @f(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
  %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
  %a = graph.neg %t : (tensor<4xf32>) -> tensor<4xf32>
  %v, %i = graph.merge %f, %a : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
  return %v : tensor<4xf32>
}"""
    with pytest.raises(IRError, match="run graph-raise-control-flow first"):
        lower(src)
