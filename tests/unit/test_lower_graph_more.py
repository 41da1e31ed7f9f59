"""lower-graph-to-loop for the losses (cross_entropy, mse), the indexing ops (one_hot,
gather, scatter_add) and the slicing ops (slice, insert_slice, concat, split): each graph
function run by the interpreter before and after lowering, with the helpers of
test_lower_graph.py (garbage-filled outputs, freed temporaries, exact integers, floats to
rounding), several run-time sizes for the `?` axes; one compiled by the LLVM backend; and
the DSL's MLP (examples/mlp.irk), forward and Adam training steps, end to end.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.dialects.graph.slicing import END

from test_lower_graph import (
    _backend, _initial_variables, check, lower, rand, run_graph, run_lowered, same,
)
from output_buffers import garbage

ROOT = pathlib.Path(__file__).resolve().parents[2]


def labels(n: int, classes: int, dtype=np.int32, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, classes, n).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("xt,lt", [("?x5", "?xi32"), ("?x?", "?xi64"), ("4x5", "4xi32"),
                                   ("?x5", "?x5xf32"), ("?x?", "?x?xf32")])
def test_cross_entropy(xt, lt):
    src = f"""
func.func @f(%x: tensor<{xt}xf32>, %l: tensor<{lt}>) -> tensor<f32> {{
  %0 = graph.cross_entropy %x, %l : (tensor<{xt}xf32>, tensor<{lt}>) -> tensor<f32>
  return %0 : tensor<f32>
}}"""
    hard = "i" in lt.rsplit("x", 1)[1]
    sets = []
    for n in ((4,) if xt.startswith("4") else (4, 1, 0)):
        x = rand(n, 5, seed=n) * 3
        if hard:
            y = labels(n, 5, np.int64 if "i64" in lt else np.int32, seed=n)
        else:                               # probabilities, and a row not summing to one
            y = np.abs(rand(n, 5, seed=n + 1))
        sets.append((x, y))
    check(src, *sets)


def test_cross_entropy_large_and_infinite_logits():
    """The row maximum is subtracted (no overflow), and shifted by 0 where not finite (an
    inf logit gives NaN, as in the interpreter)."""
    src = """
func.func @f(%x: tensor<?x3xf32>, %l: tensor<?xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
    big = np.array([[1000.0, -1000.0, 3.0], [80.0, 90.0, 100.0]], np.float32)
    inf = np.array([[np.inf, 0.0, 1.0], [1.0, 2.0, 3.0]], np.float32)
    check(src, (big, np.array([1, 2], np.int32)), (inf, np.array([0, 1], np.int32)))


def test_cross_entropy_out_of_range_label_is_recorded():
    """The interpreter raises; the lowered code records the first bad label (its value and
    the class count) in the status buffer under the check's code, for the caller to raise.
    (Before the run-time checks the row silently contributed 0.)"""
    src = """
func.func @f(%x: tensor<?x3xf32>, %l: tensor<?xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %x, %l : (tensor<?x3xf32>, tensor<?xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
    x = rand(3, 3)
    status = np.zeros(3, np.int64)
    run_lowered(lower(src), "f", (x, np.array([1, 3, -1], np.int32)),
                [np.zeros((), np.float32)], {}, status)
    np.testing.assert_array_equal(status, [1, 3, 3])       # the first bad label: 3, of 3


@pytest.mark.parametrize("a,b", [("?x3", "?x3"), ("?x1", "3"), ("?", "?"), ("2x?", "?x1"),
                                 ("", "?x2")])
def test_mse_broadcasting(a, b):
    ta = f"tensor<{a}xf32>" if a else "tensor<f32>"
    tb = f"tensor<{b}xf32>"
    src = f"""
func.func @f(%p: {ta}, %q: {tb}) -> tensor<f32> {{
  %0 = graph.mse %p, %q : ({ta}, {tb}) -> tensor<f32>
  return %0 : tensor<f32>
}}"""

    def shape(s, n):
        return tuple(n if d == "?" else int(d) for d in s.split("x")) if s else ()

    sets = []
    for n, m in ((4, 4), (1, 4), (4, 1), (0, 0)):
        sa = shape(a, n)
        sb = shape(b, m)
        if a == "2x?":
            sa, sb = (2, n), (m, 1)
        if not a:
            sb = (m, 2)
        try:
            np.broadcast_shapes(sa, sb)
        except ValueError:
            continue
        sets.append((rand(*sa, seed=n), rand(*sb, seed=m + 9)))
    check(src, *sets)


# ---------------------------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------------------------


def test_one_hot_static_and_sized_depth():
    src = """
func.func @f(%i: tensor<?x2xi32>, %j: tensor<?xi64>, %n: tensor<i64>)
    -> (tensor<?x2x4xf32>, tensor<?x?xf32>) {
  %0 = graph.one_hot %i {depth = 4 : i64} : (tensor<?x2xi32>) -> tensor<?x2x4xf32>
  %1 = graph.one_hot %j, %n {depth = -1 : i64} : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x2x4xf32>, tensor<?x?xf32>
}"""
    i = np.array([[0, 3], [4, -1], [2, 2]], np.int32)          # 4 and -1: rows of zeros
    j = np.array([0, 5, -3, 2, 1 << 40], np.int64)
    check(src, (i, j, np.int64(3)), (i[:1], j[:0], np.int64(0)), (i[:0], j, np.int64(6)))


def test_gather_negative_indices():
    src = """
func.func @f(%t: tensor<?x3xf32>, %i: tensor<?x2xi32>, %v: tensor<?xi64>, %k: tensor<?xi64>)
    -> (tensor<?x2x3xf32>, tensor<?xi64>) {
  %0 = graph.gather %t, %i : (tensor<?x3xf32>, tensor<?x2xi32>) -> tensor<?x2x3xf32>
  %1 = graph.gather %v, %k : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  return %0, %1 : tensor<?x2x3xf32>, tensor<?xi64>
}"""
    i = np.array([[0, -1], [4, -5], [2, 2]], np.int32)
    v = np.array([7, -8, 9], np.int64)
    k = np.array([-3, 2, 0, -1, 1], np.int64)
    check(src, (rand(5, 3), i, v, k), (rand(1, 3), np.array([[0, -1]], np.int32), v, k[:0]))


def test_gather_out_of_range_is_recorded():
    """The interpreter raises; the lowered code records the index as given (-3, not the
    wrapped -1) and the row count, and reads no row for it. (Before the run-time checks it
    silently read zeros.) A status already holding an error keeps it: the first one wins."""
    src = """
func.func @f(%t: tensor<?x2xi32>, %i: tensor<?xi32>) -> tensor<?x2xi32> {
  %0 = graph.gather %t, %i : (tensor<?x2xi32>, tensor<?xi32>) -> tensor<?x2xi32>
  return %0 : tensor<?x2xi32>
}"""
    t = np.array([[1, 2], [3, 4]], np.int32)
    i = np.array([1, -3, -2], np.int32)
    m = lower(src)
    status = np.zeros(3, np.int64)
    (got,) = run_lowered(m, "f", (t, i), [np.zeros((3, 2), np.int32)], {}, status)
    np.testing.assert_array_equal(status, [1, -3, 2])
    np.testing.assert_array_equal(got[[0, 2]], [[3, 4], [1, 2]])
    earlier = np.array([5, 6, 7], np.int64)
    run_lowered(m, "f", (t, i), [np.zeros((3, 2), np.int32)], {}, earlier)
    np.testing.assert_array_equal(earlier, [5, 6, 7])


def test_scatter_add_duplicates_accumulate():
    src = """
func.func @f(%d: tensor<?x3xf32>, %i: tensor<?x2xi32>, %u: tensor<?x2x3xf32>,
             %e: tensor<4xi32>, %j: tensor<?xi64>, %w: tensor<?xi32>)
    -> (tensor<?x3xf32>, tensor<4xi32>) {
  %0 = graph.scatter_add %d, %i, %u
      : (tensor<?x3xf32>, tensor<?x2xi32>, tensor<?x2x3xf32>) -> tensor<?x3xf32>
  %1 = graph.scatter_add %e, %j, %w : (tensor<4xi32>, tensor<?xi64>, tensor<?xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<?x3xf32>, tensor<4xi32>
}"""
    i = np.array([[0, -1], [2, 2], [-5, 4]], np.int32)
    j = np.array([3, -1, 0, 3, -4], np.int64)
    e = np.array([1, 2, 2147483647, 4], np.int32)                # wraps, as numpy
    w = np.array([1, 2, 3, 4, 5], np.int32)
    check(src, (rand(5, 3), i, rand(3, 2, 3), e, j, w),
          (rand(1, 3), np.zeros((0, 2), np.int32), rand(0, 2, 3), e, j[:0], w[:0]))


def test_scatter_add_into_an_argument_leaves_it_alone():
    """The result is a copy of dest: the argument buffer is not written."""
    src = """
func.func @f(%d: tensor<3xf32>, %i: tensor<2xi32>, %u: tensor<2xf32>) -> tensor<3xf32> {
  %0 = graph.scatter_add %d, %i, %u : (tensor<3xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    d = np.array([1, -0.0, 3], np.float32)
    before = d.copy()
    (got,) = run_lowered(lower(src), "f", (d, np.array([0, 0], np.int32),
                                           np.array([1, 2], np.float32)),
                         [np.zeros(3, np.float32)], {})
    np.testing.assert_array_equal(d, before)
    np.testing.assert_array_equal(got, [4, -0.0, 3])
    assert np.signbit(got[1])


# ---------------------------------------------------------------------------------------------
# Slicing
# ---------------------------------------------------------------------------------------------

BOUNDS = [0, 1, 2, 3, 5, 9, -1, -2, -4, -9, END, -END]


def _slice_src(bounds, shape: str) -> str:
    from irkit.dialects.graph import TensorSpec
    from irkit.dialects.graph.slicing import slice_shape
    starts, stops, steps = zip(*bounds)
    dims = [None if d == "?" else int(d) for d in shape.split("x")]
    rshape = slice_shape(TensorSpec(tuple(dims), None),
                         {"starts": starts, "stops": stops, "steps": steps})
    r = "x".join("?" if d is None else str(d) for d in rshape)
    arr = ", ".join

    def ints(v):
        return f"array<i64: {arr(str(x) for x in v)}>"

    props = f"starts = {ints(starts)}, stops = {ints(stops)}, steps = {ints(steps)}"
    return f"""
func.func @f(%x: tensor<{shape}xi32>) -> tensor<{r}xi32> {{
  %0 = graph.slice %x {{{props}}} : (tensor<{shape}xi32>) -> tensor<{r}xi32>
  return %0 : tensor<{r}xi32>
}}
func.func @g(%x: tensor<{shape}xi32>, %s: tensor<{r}xi32>) -> tensor<{shape}xi32> {{
  %0 = graph.insert_slice %s, %x {{{props}}}
      : (tensor<{r}xi32>, tensor<{shape}xi32>) -> tensor<{shape}xi32>
  return %0 : tensor<{shape}xi32>
}}"""


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(BOUNDS), st.sampled_from(BOUNDS),
                          st.sampled_from([1, 2, 3, -1, -2, -3])), min_size=2, max_size=2),
       st.sampled_from(["?x?", "?x6", "5x?", "5x6"]))
def test_slice_and_insert_slice(bounds, shape):
    """Any Python bounds and steps, on static and run-time sizes (0, 1, 5, 6, 7 along the
    `?` axes); insert_slice puts the slice back (into other values) at the same bounds."""
    src = _slice_src(bounds, shape)
    sets_f, sets_g = [], []
    for n, m in ((5, 6), (0, 1), (7, 0), (1, 7)):
        s = (n if shape[0] == "?" else 5, m if shape[-1] == "?" else 6)
        x = np.arange(s[0] * s[1], dtype=np.int32).reshape(s)
        piece = x[tuple(slice(*b) for b in bounds)]
        sets_f.append((x,))
        sets_g.append((-x, piece + 1000))
    check(src, *sets_f, fn="f")
    check(src, *sets_g, fn="g")


def test_concat_and_split():
    src = """
func.func @f(%a: tensor<?x2xf32>, %b: tensor<3x2xf32>, %c: tensor<?x2xf32>, %m: tensor<i64>,
             %n: tensor<i64>)
    -> (tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>,
        tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>) {
  %0 = graph.concat %a, %b, %c {axis = 0 : i64}
      : (tensor<?x2xf32>, tensor<3x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = graph.concat %a, %a {axis = -1 : i64} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
  %2:2 = graph.split %a {axis = 1 : i64, sections = 2 : i64}
      : (tensor<?x2xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>)
  %3:2 = graph.split %0, %m, %n {axis = 0 : i64, sections = 2 : i64}
      : (tensor<?x2xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
  %4 = graph.split %c {axis = 0 : i64, sections = 1 : i64} : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %0, %1, %2#0, %2#1, %3#0, %3#1, %4 : tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x1xf32>,
      tensor<?x1xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>
}"""
    check(src, (rand(4, 2), rand(3, 2), rand(2, 2), np.int64(6), np.int64(3)),
          (rand(0, 2), rand(3, 2), rand(1, 2), np.int64(0), np.int64(4)))


def test_split_into_equal_parts_of_a_runtime_size():
    src = """
func.func @f(%x: tensor<2x?xi32>) -> (tensor<2x?xi32>, tensor<2x?xi32>, tensor<2x?xi32>) {
  %0:3 = graph.split %x {axis = -1 : i64, sections = 3 : i64}
      : (tensor<2x?xi32>) -> (tensor<2x?xi32>, tensor<2x?xi32>, tensor<2x?xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x?xi32>, tensor<2x?xi32>, tensor<2x?xi32>
}"""
    check(src, *[(rand(2, n, dtype=np.int32),) for n in (6, 0, 3, 9)])


# ---------------------------------------------------------------------------------------------
# Compiled
# ---------------------------------------------------------------------------------------------

COMPILED = """
func.func @f(%x: tensor<?x5xf32>, %l: tensor<?xi32>, %t: tensor<?x5xf32>, %n: tensor<i64>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<?x?xf32>, tensor<?x2x5xf32>,
        tensor<?x5xf32>, tensor<?x2xf32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %0 = graph.cross_entropy %x, %l : (tensor<?x5xf32>, tensor<?xi32>) -> tensor<f32>
  %1 = graph.cross_entropy %x, %t : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<f32>
  %2 = graph.mse %x, %t : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<f32>
  %3 = graph.one_hot %l, %n {depth = -1 : i64} : (tensor<?xi32>, tensor<i64>) -> tensor<?x?xf32>
  %i = graph.reshape %l {shape = array<i64: -1, 2>} : (tensor<?xi32>) -> tensor<?x2xi32>
  %4 = graph.gather %x, %i : (tensor<?x5xf32>, tensor<?x2xi32>) -> tensor<?x2x5xf32>
  %5 = graph.scatter_add %t, %i, %4
      : (tensor<?x5xf32>, tensor<?x2xi32>, tensor<?x2x5xf32>) -> tensor<?x5xf32>
  %6 = graph.slice %x {starts = array<i64: -1, 4>, stops = array<i64: -9223372036854775807, 0>,
                       steps = array<i64: -1, -3>} : (tensor<?x5xf32>) -> tensor<?x2xf32>
  %7 = graph.insert_slice %6, %t {starts = array<i64: -1, 4>,
                                  stops = array<i64: -9223372036854775807, 0>,
                                  steps = array<i64: -1, -3>}
      : (tensor<?x2xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %8 = graph.concat %x, %7 {axis = 0 : i64} : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %9:2 = graph.split %8 {axis = 0 : i64, sections = 2 : i64}
      : (tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>)
  return %0, %1, %2, %3, %4, %5, %6, %9#0, %9#1 : tensor<f32>, tensor<f32>, tensor<f32>,
      tensor<?x?xf32>, tensor<?x2x5xf32>, tensor<?x5xf32>, tensor<?x2xf32>, tensor<?x5xf32>,
      tensor<?x5xf32>
}"""


def test_compiled_matches_the_interpreter():
    compile_module = _backend()
    graph = parse_module(COMPILED)
    lowered = lower(COMPILED)
    PassManager.parse("builtin.module(canonicalize,cse)").run(lowered)
    jit = compile_module(lowered)
    for n in (6, 2):
        x, t = rand(n, 5, seed=n), np.abs(rand(n, 5, seed=n + 3))
        lab = labels(n, min(n, 5), seed=n)          # valid classes, and rows of x to gather
        args = (x, lab, t, np.array(7, np.int64))
        want, _ = run_graph(graph, "f", args)
        outs = [garbage(w.shape, w.dtype) for w in want]
        status = np.zeros(3, np.int64)              # gather, cross_entropy: checked
        jit.f(*args, *outs, status)
        np.testing.assert_array_equal(status, [0, 0, 0])
        for i, (g, w) in enumerate(zip(outs, want)):
            same(g, w, what=f"result #{i} (batch {n})")


# ---------------------------------------------------------------------------------------------
# The DSL's MLP end to end
# ---------------------------------------------------------------------------------------------


def test_dsl_mlp_forward_and_training_steps():
    """examples/mlp.irk differentiated (cross_entropy with integer labels, one_hot in its
    gradient, Adam): three lowered @train_step calls update the variable buffers as the graph
    program updates its variables, and @forward (logits, loss, d_w1, d_b2) agrees."""
    from irkit.frontend.dsl import compile_file, model_modules
    top = compile_file(str(ROOT / "examples" / "mlp.irk"))
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    graph = model_modules(top)["mlp"]
    lowered = lower(str(graph))
    state: dict = {}
    variables = _initial_variables(graph)
    rng = np.random.default_rng(0)
    for step in range(3):
        n = 5 - step
        x = rng.normal(size=(n, 64)).astype(np.float32)
        y = rng.integers(0, 10, n).astype(np.int32)
        f = lookup_symbol_in(graph, "train_step")
        with np.errstate(all="ignore"):
            (want,) = Interpreter(graph, state).call(f, [x, y])
        (got,) = run_lowered(lowered, "train_step", (x, y), [np.asarray(want)], variables)
        same(got, np.asarray(want), what=f"loss of step {step}")
        for name, w in state["graph.variables"].items():
            same(variables[name], w, rtol=1e-4, atol=1e-5, what=f"@{name} after step {step}")
    x = rng.normal(size=(4, 64)).astype(np.float32)
    y = np.array([0, 9, 3, 3], np.int32)
    f = lookup_symbol_in(graph, "forward")
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in Interpreter(graph, state).call(f, [x, y])]
    got = run_lowered(lowered, "forward", (x, y), want, variables)
    for i, (g, w) in enumerate(zip(got, want)):
        same(g, w, rtol=1e-4, atol=1e-5, what=f"forward result #{i}")
