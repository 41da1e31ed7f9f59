"""lower-graph-to-linalg, op by op: each graph function is run by the interpreter before and
after the pass (linalg and tensor ops on tensors), and must give the same results: exactly
for integers and booleans, to float rounding for floats (NaN where NaN). Dynamic sizes are
run with several run-time shapes, sizes of 1 that broadcast among them. Where the converted
function uses only linalg, tensor, arith and math ops, MLIR's own pipeline runs it too
(tests/mlir_oracle.py) and the real `mlir-opt` reads its generic form back.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from irkit.diagnostics import IRError
from irkit.interpreter import Interpreter, InterpreterError, to_value
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg

from mlir_oracle import missing_tools, run_mlir


def convert(src: str, **options):
    """Parse `src`, run the pass (verifying after it) and return the new module, whose text
    must read back as itself."""
    m = parse_module(src)
    PassManager().add(LowerGraphToLinalg(**options)).run(m)
    text = str(m)
    assert str(parse_module(text)) == text
    return m


def run(m, fn: str, args) -> list[np.ndarray]:
    f = lookup_symbol_in(m, fn)
    ftype = f.properties["function_type"].value
    with np.errstate(all="ignore"):
        out = Interpreter(m).call(f, [to_value(a, t) for a, t in zip(args, ftype.inputs)])
    return [np.asarray(o) for o in out]


def assert_same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, equal_nan=True)
            same_zero = (w != 0) | (np.signbit(g) == np.signbit(w)) | np.isnan(w)
            assert same_zero.all(), (g, w)                  # signed zeros kept
        else:
            np.testing.assert_array_equal(g, w)


def check(src: str, fn: str, *arg_sets, **options):
    """The converted `fn` gives the graph interpreter's results on every argument set."""
    graph = parse_module(src)
    m = convert(src, **options)
    for args in arg_sets:
        assert_same(run(m, fn, args), run(graph, fn, args))
    return m


def op_names(m) -> list[str]:
    return [op.name for op in m.walk()]


def mlir_agrees(m, fn: str, *arg_sets) -> None:
    """MLIR's own pipeline gives the interpreter's results on the converted module."""
    if missing_tools():
        pytest.skip(f"MLIR toolchain missing: {missing_tools()}")
    text = print_op(m, generic=True)
    for args in arg_sets:
        got = run_mlir(text, fn, [np.array(a, order="C") for a in args])
        assert_same([np.asarray(g) for g in got], run(m, fn, args))


RNG = np.random.default_rng(7)


def floats(*shape, dtype=np.float32) -> np.ndarray:
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], dtype)
    flat[:min(flat.size, 5)] = specials[:min(flat.size, 5)]
    return x


def ints(*shape, dtype=np.int32) -> np.ndarray:
    info = np.iinfo(dtype)
    x = RNG.integers(-100, 100, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[:min(flat.size, 2)] = [info.max, info.min][:min(flat.size, 2)]
    return x


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

_FLOAT_UNARY = ["neg", "abs", "exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "sigmoid",
                "relu", "gelu", "softplus"]
_FLOAT_BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]


@pytest.mark.parametrize("name", _FLOAT_UNARY)
def test_float_unary_ops(name):
    src = f"""
    func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {{
      %0 = graph.{name} %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
      return %0 : tensor<?x3xf32>
    }}"""
    m = check(src, "f", [floats(4, 3)], [floats(1, 3)], [floats(0, 3)])
    names = op_names(m)
    assert names.count("linalg.generic") == 1 and f"graph.{name}" not in names


@pytest.mark.parametrize("name", _FLOAT_BINARY)
def test_float_binary_ops_broadcast(name):
    """A static size-1 axis, a missing leading axis and a `?` axis that is 1 at run time."""
    src = f"""
    func.func @f(%x: tensor<?x3xf32>, %y: tensor<1x?xf32>) -> tensor<?x3xf32> {{
      %0 = graph.{name} %x, %y : (tensor<?x3xf32>, tensor<1x?xf32>) -> tensor<?x3xf32>
      return %0 : tensor<?x3xf32>
    }}"""
    check(src, "f", [floats(4, 3), floats(1, 3)], [floats(4, 3), floats(1, 1)],
          [floats(1, 3), floats(1, 3)])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
def test_integer_ops_wrap(name):
    src = f"""
    func.func @f(%x: tensor<5xi32>, %y: tensor<5xi32>) -> tensor<5xi32> {{
      %0 = graph.{name} %x, %y : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
      %1 = graph.neg %0 : (tensor<5xi32>) -> tensor<5xi32>
      %2 = graph.abs %1 : (tensor<5xi32>) -> tensor<5xi32>
      %3 = graph.relu %2 : (tensor<5xi32>) -> tensor<5xi32>
      return %3 : tensor<5xi32>
    }}"""
    check(src, "f", [ints(5), ints(5)])


def test_logic_compare_where_cast():
    src = """
    func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>, %i: tensor<?xi32>) -> (tensor<?xi1>, tensor<?xf32>, tensor<?xi8>, tensor<?xf32>, tensor<?xi1>) {
      %lt = graph.cmp %x, %y {predicate = "lt"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
      %ne = graph.cmp %x, %y {predicate = "ne"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
      %a = graph.and %lt, %ne : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
      %o = graph.or %a, %lt : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
      %n = graph.not %o : (tensor<?xi1>) -> tensor<?xi1>
      %w = graph.where %n, %x, %y : (tensor<?xi1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      %c = graph.cast %i : (tensor<?xi32>) -> tensor<?xi8>
      %f = graph.cast %c : (tensor<?xi8>) -> tensor<?xf32>
      %b = graph.cast %x : (tensor<?xf32>) -> tensor<?xi1>
      return %n, %w, %c, %f, %b : tensor<?xi1>, tensor<?xf32>, tensor<?xi8>, tensor<?xf32>, tensor<?xi1>
    }"""
    m = check(src, "f", [floats(6), floats(6), ints(6) * 3], [floats(1), floats(1), ints(1)])
    assert not [n for n in op_names(m) if n.startswith("graph.")]


def test_broadcast_maps_splats_and_scalars():
    """How each operand is read: a static size-1 axis through the constant 0 in its map, a
    0-d operand through `(d0, d1) -> ()`, a splat constant as a scalar constant in the body
    (not an input), and a `?` axis that may be 1 with tensor.extract at select(size == 1)."""
    src = """
    func.func @f(%x: tensor<4x3xf32>, %r: tensor<1x3xf32>, %s: tensor<f32>, %d: tensor<?x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
      %c = graph.constant dense<2.5> : tensor<4x3xf32>
      %0 = graph.add %x, %r : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
      %1 = graph.mul %0, %s : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
      %2 = graph.sub %1, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      %3 = graph.add %2, %d : (tensor<4x3xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
      return %2, %3 : tensor<4x3xf32>, tensor<4x3xf32>
    }"""
    m = check(src, "f", [floats(4, 3), floats(1, 3), floats(), floats(1, 3)],
              [floats(4, 3), floats(1, 3), floats(), floats(4, 3)])
    generics = [op for op in m.walk() if op.name == "linalg.generic"]
    maps = [[str(a.value) for a in g.properties["indexing_maps"]] for g in generics]
    assert maps[0] == ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (0, d1)", "(d0, d1) -> (d0, d1)"]
    assert maps[1] == ["(d0, d1) -> (d0, d1)", "(d0, d1) -> ()", "(d0, d1) -> (d0, d1)"]
    assert len(generics[2].inputs) == 1                     # the splat is not an input
    body = [op.name for op in generics[2].regions[0].blocks[0].ops]
    assert body == ["arith.constant", "arith.subf", "linalg.yield"]
    body = [op.name for op in generics[3].regions[0].blocks[0].ops]
    assert "tensor.extract" in body and "linalg.index" in body
    assert len(generics[3].inputs) == 1                     # %d is read with tensor.extract


def test_known_sizes_need_no_broadcast_test():
    """Values derived from one argument share its tracked sizes: adding them needs no
    size == 1 test, and one tensor.dim per axis serves the whole function."""
    src = """
    func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %0 = graph.exp %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
      %1 = graph.tanh %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
      %2 = graph.add %0, %1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      return %2 : tensor<?x?xf32>
    }"""
    m = check(src, "f", [floats(2, 5)])
    names = op_names(m)
    assert names.count("tensor.dim") == 2
    assert "tensor.extract" not in names and "arith.cmpi" not in names


def test_arguments_of_one_model_symbol_share_their_size():
    """`graph.dims` naming one symbol (`B`) on two arguments: equal by the calling convention,
    so one tensor.dim serves both and neither is read as if it might broadcast. Without the
    attribute, either might be 1 at run time (the next test)."""
    src = """
    func.func @f(%x: tensor<?x3xf32> {graph.dims = ["B", 3]}, %y: tensor<?x3xf32> {graph.dims = ["B", 3]}) -> tensor<?x3xf32> {
      %0 = graph.mul %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      return %0 : tensor<?x3xf32>
    }"""
    m = check(src, "f", [floats(4, 3), floats(4, 3)])
    names = op_names(m)
    assert names.count("tensor.dim") == 1
    assert "tensor.extract" not in names and "arith.cmpi" not in names


def test_dynamic_broadcast_of_two_unknown_sizes():
    """Two `?` sizes that broadcast: the result size is select(a == 1, b, a), and either
    operand may be the one stretched at run time."""
    src = """
    func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
      %0 = graph.sub %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    m = check(src, "f", [floats(4), floats(4)], [floats(1), floats(4)], [floats(4), floats(1)],
              [floats(1), floats(1)])
    mlir_agrees(m, "f", [floats(1), floats(4)], [floats(4), floats(1)])


def test_zeros_like_and_constants():
    src = """
    func.func @f(%x: tensor<?x2xi32>) -> (tensor<?x2xi32>, tensor<2x2xi32>) {
      %z = graph.zeros_like %x : (tensor<?x2xi32>) -> tensor<?x2xi32>
      %c = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
      %s = graph.add %c, %c : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
      return %z, %s : tensor<?x2xi32>, tensor<2x2xi32>
    }"""
    m = check(src, "f", [ints(3, 2)])
    assert "linalg.fill" in op_names(m)
    consts = [op for op in m.walk() if op.name == "arith.constant"
              and str(op.results[0].type) == "tensor<2x2xi32>"]
    assert len(consts) == 1


# ---------------------------------------------------------------------------------------------
# Reductions and losses
# ---------------------------------------------------------------------------------------------

_REDUCE = """
func.func @f(%x: tensor<?x?x3xT>) -> (tensor<?x3xT>, tensor<1x?x1xT>, tensor<?xT>, tensor<T>, tensor<?x1x3xi64>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x?x3xT>) -> tensor<?x3xT>
  %1 = graph.OTHER %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<?x?x3xT>) -> tensor<1x?x1xT>
  %2 = graph.reduce_max %x {axes = array<i64: -1, 1>} : (tensor<?x?x3xT>) -> tensor<?xT>
  %3 = graph.reduce_min %x : (tensor<?x?x3xT>) -> tensor<T>
  %4 = graph.argmax %x {axis = 1 : i64, keepdims = true} : (tensor<?x?x3xT>) -> tensor<?x1x3xi64>
  return %0, %1, %2, %3, %4 : tensor<?x3xT>, tensor<1x?x1xT>, tensor<?xT>, tensor<T>, tensor<?x1x3xi64>
}
"""


@pytest.mark.parametrize("t,dtype", [("f32", np.float32), ("f64", np.float64),
                                     ("f16", np.float16)])
def test_float_reductions(t, dtype):
    src = _REDUCE.replace("xT>", f"x{t}>").replace("<T>", f"<{t}>").replace("OTHER",
                                                                                 "reduce_mean")
    m = check(src, "f", [floats(2, 4, 3, dtype=dtype)], [floats(1, 1, 3, dtype=dtype)],
              [floats(3, 2, 3, dtype=dtype)])
    assert not [n for n in op_names(m) if n.startswith("graph.") and n != "graph.check"]


def test_integer_reductions_wrap():
    src = _REDUCE.replace("xT>", "xi32>").replace("<T>", "<i32>").replace("OTHER", "reduce_sum")
    check(src, "f", [ints(2, 4, 3)], [ints(1, 1, 3)])


def test_empty_axes_sum_to_zero_and_mean_to_nan():
    src = """
    func.func @f(%x: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = graph.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
      %1 = graph.reduce_mean %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3xf32>
    }"""
    m = convert(src)
    s, mean = run(m, "f", [np.zeros((0, 3), np.float32)])
    assert (s == 0).all() and np.isnan(mean).all()


def test_float32_sums_are_carried_in_float64():
    """A million float32 copies of 0.1: numpy's float32 pairwise sum is off in the 5th
    digit at this size on strided axes; the converted sum is the f64 sum rounded once."""
    src = """
    func.func @f(%x: tensor<?x2xf32>) -> tensor<2xf32> {
      %0 = graph.reduce_sum %x {axes = array<i64: 0>} : (tensor<?x2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    x = np.full((1_000_000, 2), 0.1, np.float32)
    (got,) = run(convert(src), "f", [x])
    exact = np.float32(np.sum(x.astype(np.float64), axis=0))
    np.testing.assert_array_equal(got, exact)


_DTYPES = [("f32", np.float32), ("f64", np.float64), ("f16", np.float16)]


@pytest.mark.parametrize("t,dtype", _DTYPES)
def test_softmax_and_log_softmax_any_axis(t, dtype):
    src = """
    func.func @f(%x: tensor<?x4xT>) -> (tensor<?x4xT>, tensor<?x4xT>) {
      %0 = graph.softmax %x {axis = 0 : i64} : (tensor<?x4xT>) -> tensor<?x4xT>
      %1 = graph.log_softmax %x {axis = -1 : i64} : (tensor<?x4xT>) -> tensor<?x4xT>
      return %0, %1 : tensor<?x4xT>, tensor<?x4xT>
    }""".replace("xT>", f"x{t}>")
    rows = floats(3, 4, dtype=dtype)
    rows[2] = -np.inf                                        # a row with no finite maximum
    check(src, "f", [rows], [RNG.standard_normal((5, 4)).astype(dtype) * 5])


@pytest.mark.parametrize("t,dtype", _DTYPES)
def test_losses(t, dtype):
    src = """
    func.func @f(%x: tensor<?x4xT>, %l: tensor<?xi64>, %t: tensor<?x4xT>, %q: tensor<4xT>) -> (tensor<T>, tensor<T>, tensor<T>) {
      %0 = graph.cross_entropy %x, %l : (tensor<?x4xT>, tensor<?xi64>) -> tensor<T>
      %1 = graph.cross_entropy %x, %t : (tensor<?x4xT>, tensor<?x4xT>) -> tensor<T>
      %2 = graph.mse %t, %q : (tensor<?x4xT>, tensor<4xT>) -> tensor<T>
      return %0, %1, %2 : tensor<T>, tensor<T>, tensor<T>
    }""".replace("xT>", f"x{t}>").replace("<T>", f"<{t}>")
    x = RNG.standard_normal((6, 4)).astype(dtype)
    tg = RNG.random((6, 4)).astype(dtype)
    check(src, "f", [x, np.array([0, 3, 1, 2, 3, 0]), tg, tg[0]],
          [x[:0], np.zeros(0, np.int64), tg[:0], tg[0]])


def test_mlir_runs_reductions_and_losses():
    """MLIR's own lowering of the converted reductions agrees with the interpreter."""
    src = """
    func.func @f(%x: tensor<?x3xf32>, %t: tensor<?x3xf32>) -> (tensor<?xf32>, tensor<?x1xf32>, tensor<?xi64>, tensor<?x3xf32>, tensor<f32>, tensor<f32>) {
      %0 = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
      %1 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>
      %2 = graph.argmax %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?xi64>
      %3 = graph.log_softmax %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
      %4 = graph.cross_entropy %x, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
      %5 = graph.mse %x, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
      return %0, %1, %2, %3, %4, %5 : tensor<?xf32>, tensor<?x1xf32>, tensor<?xi64>, tensor<?x3xf32>, tensor<f32>, tensor<f32>
    }"""
    x = floats(5, 3)
    m = check(src, "f", [x, RNG.random((5, 3)).astype(np.float32)])
    mlir_agrees(m, "f", [x, RNG.random((5, 3)).astype(np.float32)])


# ---------------------------------------------------------------------------------------------
# Run-time errors
# ---------------------------------------------------------------------------------------------


def _error(m, fn, args) -> str:
    """The first line of the error running `fn` raises: `file:line:col: error: message` (the
    source line shown under it is whatever text was parsed last under that file name)."""
    with pytest.raises(InterpreterError) as e:
        run(m, fn, args)
    return str(e.value).splitlines()[0]


def test_label_out_of_range_fails_as_the_graph_op_does():
    """The first bad label (in row order) is reported, with the graph op's message and
    location, word for word what the interpreter says of the graph program."""
    src = """
    func.func @f(%x: tensor<?x4xf32>, %l: tensor<?xi32>) -> tensor<f32> {
      %0 = graph.cross_entropy %x, %l : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
      return %0 : tensor<f32>
    }"""
    m = convert(src)
    x = floats(4, 4)
    args = [x, np.array([1, 7, -1, 2], np.int32)]
    got = _error(m, "f", args)
    assert got == _error(parse_module(src), "f", args)
    assert "'graph.cross_entropy' failed: label 7 is out of range for 4 classes" in got
    assert got.startswith("<stdin>:3:12: error:")           # the graph op's location
    assert "graph.check" in op_names(m)


def test_empty_max_fails_as_numpy_does():
    src = """
    func.func @f(%x: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<?xi64>) {
      %0 = graph.reduce_max %x {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
      %1 = graph.argmax %x {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?xi64>
      return %0, %1 : tensor<3xf32>, tensor<?xi64>
    }"""
    m = convert(src)
    got = _error(m, "f", [np.zeros((0, 3), np.float32)])
    assert got == _error(parse_module(src), "f", [np.zeros((0, 3), np.float32)])
    assert "zero-size array to reduction operation maximum which has no identity" in got
    # argmax's axis is static (3): no check for it; the max's `?` axis is checked once
    assert op_names(m).count("graph.check") == 1


def test_check_op_syntax_and_vectorized_semantics():
    src = """
    func.func @f(%ok: tensor<3xi1>, %v: tensor<3xi64>) -> tensor<3xi64> {
      %c = arith.constant 10 : i64
      %e = tensor.empty() : tensor<3xi64>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%ok, %v : tensor<3xi1>, tensor<3xi64>) outs(%e : tensor<3xi64>) {
      ^bb0(%a: i1, %b: i64, %o: i64):
        graph.check %a, %b, %c {message = "'graph.x' failed: {value} is not below {bound}"} : i64, i64
        linalg.yield %b : i64
      } -> tensor<3xi64>
      return %r : tensor<3xi64>
    }"""
    m = parse_module(src)
    m.verify()
    text = str(m)
    assert str(parse_module(text)) == text
    v = np.array([4, 11, 12])
    (out,) = run(m, "f", [np.array([True, True, True]), v])
    np.testing.assert_array_equal(out, v)
    got = _error(m, "f", [np.array([True, False, False]), v])
    assert "'graph.x' failed: 11 is not below 10" in got


# ---------------------------------------------------------------------------------------------
# What stays, and the structure of the output
# ---------------------------------------------------------------------------------------------


def test_ops_without_a_rule_and_state_stay():
    """Variables, reads and assigns keep their place (bufferize gives them buffers)."""
    src = """
    graph.variable @w : tensor<3xf32> init zeros
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %w = graph.read @w : tensor<3xf32>
      %s = graph.reduce_sum %x : (tensor<3xf32>) -> tensor<f32>
      graph.assign @w, %x : tensor<3xf32>
      return %w : tensor<3xf32>
    }"""
    m = convert(src)
    names = op_names(m)
    assert {"graph.variable", "graph.read", "graph.assign"} <= set(names)
    assert "graph.reduce_sum" not in names


def test_full_names_the_first_op_left():
    src = """
    func.func @f(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {
      %0:2 = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
      return %0#0 : tensor<4xf32>
    }"""
    convert(src)                                            # partial: fine
    with pytest.raises(IRError) as e:
        convert(src, full=True)
    assert "no lower-graph-to-linalg rule for 'graph.switch' yet" in str(e.value)


def test_if_regions_are_converted():
    src = """
    func.func @f(%p: tensor<i1>, %x: tensor<?xf32>) -> tensor<?xf32> {
      %r = graph.if %p -> (tensor<?xf32>) {
        %a = graph.reduce_max %x {keepdims = true} : (tensor<?xf32>) -> tensor<1xf32>
        %s = graph.softmax %x {axis = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
        graph.yield %s : tensor<?xf32>
      } else {
        graph.yield %x : tensor<?xf32>
      }
      return %r : tensor<?xf32>
    }"""
    m = check(src, "f", [np.array(True), floats(5)], [np.array(False), floats(2)])
    names = op_names(m)
    assert "graph.if" in names and "graph.softmax" not in names and "linalg.generic" in names


# ---------------------------------------------------------------------------------------------
# The real MLIR reads the output
# ---------------------------------------------------------------------------------------------


def _mlir_opt() -> str | None:
    found = shutil.which("mlir-opt")
    fallback = Path("/usr/lib/llvm-22/bin/mlir-opt")
    return found or (str(fallback) if fallback.exists() else None)


def test_generic_output_is_mlir_and_reads_back():
    """`mlir-opt` accepts the generic form (only func, linalg, tensor, arith and math ops),
    and its own generic printing of it reads back into irkit as the same module."""
    tool = _mlir_opt()
    if tool is None:
        pytest.skip("mlir-opt not installed")
    src = """
    func.func @f(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) {
      %0 = graph.sub %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %1 = graph.gelu %0 : (tensor<?x3xf32>) -> tensor<?x3xf32>
      %2 = graph.log_softmax %1 {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
      %3 = graph.reduce_mean %2 {axes = array<i64: 1>} : (tensor<?x3xf32>) -> tensor<?xf32>
      return %2, %3 : tensor<?x3xf32>, tensor<?xf32>
    }"""
    m = convert(src)
    assert all(n.split(".")[0] in ("builtin", "func", "linalg", "tensor", "arith", "math")
               for n in op_names(m))
    text = print_op(m, generic=True)
    proc = subprocess.run([tool, "--mlir-print-op-generic"], input=text, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    back = parse_module(proc.stdout)
    assert print_op(back, generic=True) == print_op(parse_module(text), generic=True)
    mlir_agrees(m, "f", [floats(4, 3), floats(3)])


# ---------------------------------------------------------------------------------------------
# Every example model
# ---------------------------------------------------------------------------------------------

_EXAMPLES = sorted(Path(__file__).resolve().parents[2].glob("examples/*.irk"))


@pytest.mark.parametrize("path", _EXAMPLES, ids=[p.stem for p in _EXAMPLES])
def test_example_models_convert_fully(path):
    """Each example model at the `autodiff` stage (forward and training functions) converts
    with full=true: the interpreter gives the same results before and after (variables at
    their initial values, `?` sizes 3, labels 0 or 1), and `mlir-opt` accepts the generic
    form (graph.variable / read / assign and graph.check as unregistered ops)."""
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.passes import pipeline
    from irkit.types import FloatType
    rng = np.random.default_rng(0)
    for m in model_modules(compile_file(str(path))).values():
        PassManager.parse(pipeline.passes_between(None, "autodiff")).run(m)
        converted = parse_module(str(m))
        PassManager().add(LowerGraphToLinalg(full=True)).run(converted)
        for f in [op for op in m.walk() if op.name == "func.func"]:
            name = f.properties["sym_name"].value
            args = []
            for t in f.properties["function_type"].value.inputs:
                shape = tuple(3 if d is None else d for d in t.shape)
                if isinstance(t.element, FloatType):
                    args.append(RNG.standard_normal(shape).astype(np.float32))
                else:
                    args.append(rng.integers(0, 2, shape).astype(np.int64))
            got, want = run(converted, name, args), run(m, name, args)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
        tool = _mlir_opt()
        if tool is not None:
            proc = subprocess.run([tool, "--allow-unregistered-dialect"],
                                  input=print_op(converted, generic=True), capture_output=True,
                                  text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
