"""lower-graph-to-loop, op by op: each graph function is run by the interpreter before and
after lowering, and the lowered function (output buffers allocated here with numpy, filled
with garbage that must be overwritten) must give the graph interpreter's results: exactly
for integers and booleans, to float rounding for floats (NaN where NaN). Dynamic sizes are
exercised with several run-time shapes, sizes of 1 that broadcast among them.

The lowered interpreter run also checks memory discipline: every buffer the function
allocates is freed by the time it returns (and the memory dialect's interpreter reports any
read of freed memory, any out-of-bounds index, any copy between overlapping buffers).
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.attributes import numpy_dtype
from irkit.diagnostics import IRError
from irkit.interpreter import Interpreter, to_value
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.types import MemRefType
from irkit.passes.lower_graph_to_loop import LowerGraphToLoop
from output_buffers import garbage


def lower(src: str, **options):
    """Parse `src`, lower it (verifying after the pass) and return the new module, whose
    text must read back as itself."""
    m = parse_module(src)
    PassManager().add(LowerGraphToLoop(**options)).run(m)
    text = str(m)
    assert str(parse_module(text)) == text
    return m


def run_graph(m, fn: str, args):
    f = lookup_symbol_in(m, fn)
    ftype = f.properties["function_type"].value
    vals = [to_value(a, t) for a, t in zip(args, ftype.inputs)]
    interp = Interpreter(m)
    with np.errstate(all="ignore"):
        out = interp.call(f, vals)
    return [np.asarray(o) for o in out], interp.state.get("graph.variables", {})


def run_lowered(m, fn: str, args, out_likes, variables: dict, status=None):
    """Call lowered `fn`: inputs, then output buffers shaped like `out_likes`, then the
    variable buffers its arguments name (initialized from `variables`), then its status
    buffer if it has one (`status`, three zeros by default, which must stay zero: the
    inputs are in range)."""
    f = lookup_symbol_in(m, fn)
    ftype = f.properties["function_type"].value
    attrs = f.properties.get("arg_attrs")
    outs = [garbage(o.shape, o.dtype) for o in out_likes]
    expect_ok = status is None
    status = np.zeros(3, np.int64) if status is None else status
    vals = []
    n_in = len(args)
    for i, t in enumerate(ftype.inputs):
        if i < n_in:
            a = args[i]
            vals.append(np.array(a, numpy_dtype(t.element), order="C")
                        if isinstance(t, MemRefType) else to_value(a, t))
        elif i < n_in + len(outs):
            vals.append(outs[i - n_in])
        elif "graph.status" in attrs[i].value:
            vals.append(status)
        else:
            name = attrs[i].value["graph.variable"].value
            vals.append(variables[name])
    interp = Interpreter(m)
    with np.errstate(all="ignore"):
        interp.call(f, vals)
    leaked = interp.state.get("memory.allocated", {})
    assert not leaked, f"{len(leaked)} buffers allocated and never freed"
    assert not (expect_ok and status[0]), f"a run-time check failed: status {status}"
    return outs


def status_args(m, fn: str) -> list:
    """[a zeroed status buffer] when lowered `fn` checks something at run time, else []."""
    attrs = lookup_symbol_in(m, fn).properties.get("arg_attrs")
    return [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []


def same(got, want, rtol=1e-5, atol=1e-6, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check(src: str, *arg_sets, fn: str = "f", rtol=1e-5, atol=1e-6, **options):
    """Lower `src` and compare `fn` with the graph program on each tuple of arguments."""
    graph = parse_module(src)
    graph.verify()
    initial = _initial_variables(graph)
    lowered = lower(src, **options)
    for args in arg_sets:
        want, want_vars = run_graph(graph, fn, args)
        variables = {k: v.copy() for k, v in initial.items()}
        got = run_lowered(lowered, fn, args, want, variables)
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, rtol, atol, f"result #{i}")
        for name, w in want_vars.items():
            same(variables[name], w, rtol, atol, f"variable @{name}")
    return lowered


def _initial_variables(m) -> dict:
    return {op.properties["sym_name"].value: op.initial_value()
            for op in m.walk() if op.name == "graph.variable"}


def rand(*shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    if np.dtype(dtype).kind == "f":
        return rng.normal(size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)


def unary(name: str, t: str = "f32", shape: str = "?x3") -> str:
    ty = f"tensor<{shape}x{t}>" if shape else f"tensor<{t}>"
    return f"""
func.func @f(%x: {ty}) -> {ty} {{
  %0 = graph.{name} %x : ({ty}) -> {ty}
  return %0 : {ty}
}}"""


def binary(name: str, a: str, b: str, r: str, attrs: str = "") -> str:
    return f"""
func.func @f(%x: tensor<{a}>, %y: tensor<{b}>) -> tensor<{r}> {{
  %0 = graph.{name} %x, %y {attrs}: (tensor<{a}>, tensor<{b}>) -> tensor<{r}>
  return %0 : tensor<{r}>
}}"""


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

SPECIAL = np.array([[0.0, -0.0, 1.5], [-2.5, np.inf, -np.inf], [np.nan, 30.0, -40.0]],
                   np.float32)

FLOAT_UNARY = ["neg", "abs", "exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "sigmoid",
               "relu", "gelu", "softplus"]


@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_unary(name):
    check(unary(name), (rand(4, 3),), (rand(1, 3),), (SPECIAL,), (np.zeros((0, 3),
                                                                         np.float32),),
          rtol=2e-6)


DTYPES = {"i8": np.int8, "i32": np.int32, "i64": np.int64}
NP = {**DTYPES, "i1": np.bool_, "f32": np.float32, "f64": np.float64}


@pytest.mark.parametrize("name", ["neg", "abs", "relu"])
@pytest.mark.parametrize("t", sorted(DTYPES))
def test_integer_unary(name, t):
    x = rand(5, 3, dtype=DTYPES[t])
    x[0, 0] = np.iinfo(DTYPES[t]).min               # -min wraps to min, as numpy's does
    check(unary(name, t), (x,))


def test_not():
    check(unary("not", "i1"), (rand(3, 3, dtype=bool),))


def test_scalar_unary():
    check(unary("exp", shape=""), (np.float32(0.5),))


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]


@pytest.mark.parametrize("name", BINARY)
def test_float_binary_broadcasting(name):
    # x: [?, 3] against y: [?, 1, 3] -> [?, ?, 3]; the `?` sizes broadcast at run time.
    src = binary(name, "?x3xf32", "?x1x3xf32", "?x?x3xf32")
    x = np.abs(rand(4, 3)) if name == "pow" else rand(4, 3)
    check(src, (x, rand(2, 1, 3)), (x[:1], rand(2, 1, 3)), (x, rand(1, 1, 3)))


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_nan_and_signed_zeros(name):
    """NaN propagates, and +0 > -0 exactly (the sign of a zero result is compared too)."""
    a = np.array([np.nan, 1.0, 0.0, -0.0, np.nan, -np.inf], np.float32)
    b = np.array([1.0, np.nan, -0.0, 0.0, np.nan, 3.0], np.float32)
    src = binary(name, "?xf32", "?xf32", "?xf32")
    want, _ = run_graph(parse_module(src), "f", (a, b))
    (got,) = run_lowered(lower(src), "f", (a, b), want, {})
    same(got, want[0])
    assert np.array_equal(np.signbit(got), np.signbit(want[0]))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "maximum", "minimum"])
def test_integer_binary_wraps(name):
    src = binary(name, "4x?xi8", "?xi8", "4x?xi8")
    x = rand(4, 5, dtype=np.int8)
    x[0, 0] = 127
    check(src, (x, rand(5, dtype=np.int8)), (x, rand(1, dtype=np.int8)))


@pytest.mark.parametrize("name", ["and", "or"])
def test_logic(name):
    check(binary(name, "?x1xi1", "3xi1", "?x3xi1"),
          (rand(4, 1, dtype=bool), rand(3, dtype=bool)))


def test_static_broadcast_of_scalar_and_unit_axes():
    check(binary("mul", "2x1x4xf32", "f32", "2x1x4xf32"), (rand(2, 1, 4), np.float32(3.0)))
    check(binary("add", "2x1xf32", "1x5xf32", "2x5xf32"), (rand(2, 1), rand(1, 5)))


@pytest.mark.parametrize("pred", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_cmp(pred):
    attrs = f'{{predicate = "{pred}"}} '
    a = SPECIAL.reshape(-1)
    check(binary("cmp", "?xf32", "?xf32", "?xi1", attrs), (a, a[::-1].copy()), (a, a[:1]))
    check(binary("cmp", "?xi32", "?xi32", "?xi1", attrs),
          (rand(6, dtype=np.int32), rand(6, dtype=np.int32, seed=1)))
    t, f = np.array([True, True, False, False]), np.array([True, False, True, False])
    check(binary("cmp", "4xi1", "4xi1", "4xi1", attrs), (t, f))


def test_where():
    src = """
func.func @f(%c: tensor<?x1xi1>, %x: tensor<?x3xf32>, %y: tensor<f32>) -> tensor<?x3xf32> {
  %0 = graph.where %c, %x, %y : (tensor<?x1xi1>, tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}"""
    check(src, (rand(4, 1, dtype=bool), rand(4, 3), np.float32(-1)),
          (rand(1, 1, dtype=bool), rand(4, 3), np.float32(2)))


@pytest.mark.parametrize("src_t,dst_t", [
    ("f32", "i32"), ("i32", "f32"), ("f32", "i1"), ("i1", "f32"), ("i1", "i32"),
    ("i32", "i64"), ("i64", "i8"), ("f32", "f64"), ("f64", "f32"), ("i32", "i1"),
    ("i8", "f64"), ("f32", "f32"),
])
def test_cast(src_t, dst_t):
    src = f"""
func.func @f(%x: tensor<?x{src_t}>) -> tensor<?x{dst_t}> {{
  %0 = graph.cast %x : (tensor<?x{src_t}>) -> tensor<?x{dst_t}>
  return %0 : tensor<?x{dst_t}>
}}"""
    x = np.array([0.0, -0.0, 1.5, -2.5, 100.7, -7.0, 3.0], np.float64)
    if src_t == "i1":
        x = np.array([True, False, True])
    elif src_t.startswith("i"):
        x = np.array([0, 1, -1, 127, -128, 300, -70000], np.int64)
    check(src, (x.astype(NP[src_t]),))


def test_zeros_like_and_constants():
    src = """
func.func @f(%x: tensor<?x2xi32>)
    -> (tensor<?x2xi32>, tensor<2x3xf32>, tensor<2x2xi32>, tensor<i1>) {
  %0 = graph.zeros_like %x : (tensor<?x2xi32>) -> tensor<?x2xi32>
  %1 = graph.constant dense<2.5> : tensor<2x3xf32>
  %2 = graph.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>
  %3 = graph.constant dense<true> : tensor<i1>
  %4 = graph.add %0, %2 : (tensor<?x2xi32>, tensor<2x2xi32>) -> tensor<?x2xi32>
  return %4, %1, %2, %3 : tensor<?x2xi32>, tensor<2x3xf32>, tensor<2x2xi32>, tensor<i1>
}"""
    check(src, (rand(2, 2, dtype=np.int32),), (rand(1, 2, dtype=np.int32),))


def test_large_constant_is_an_error():
    values = ", ".join(str(i) for i in range(300))
    src = f"""
func.func @f() -> tensor<300xi32> {{
  %0 = graph.constant dense<[{values}]> : tensor<300xi32>
  return %0 : tensor<300xi32>
}}"""
    with pytest.raises(IRError, match="max-constant-elements=256"):
        lower(src)
    check(src, (), max_constant_elements=300)


# ---------------------------------------------------------------------------------------------
# Reductions, argmax, softmax
# ---------------------------------------------------------------------------------------------


def reduce_src(name: str, a: str, r: str, attrs: str) -> str:
    return f"""
func.func @f(%x: tensor<{a}>) -> tensor<{r}> {{
  %0 = graph.{name} %x {attrs} : (tensor<{a}>) -> tensor<{r}>
  return %0 : tensor<{r}>
}}"""


REDUCTIONS = [
    # operand, result, attributes
    ("?x3x4", "?", "{axes = array<i64: 1, 2>}"),
    ("?x3x4", "1x3x1", "{axes = array<i64: 0, -1>, keepdims = true}"),
    ("?x3x4", "", ""),
    ("?x3x4", "1x1x1", "{keepdims = true}"),
    ("?x3x4", "?x4", "{axes = array<i64: 1>}"),
    ("?x3x4", "3x4", "{axes = array<i64: 0>}"),
    ("", "", ""),
]


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"])
@pytest.mark.parametrize("a,r,attrs", REDUCTIONS)
def test_float_reductions(name, a, r, attrs):
    t = lambda s: f"{s}xf32" if s else "f32"            # noqa: E731
    src = reduce_src(name, t(a), t(r), attrs)
    x = rand(2, 3, 4) if a else np.float32(1.5)
    y = rand(1, 3, 4) if a else np.float32(-2)
    check(src, (x,), (y,))
    if a and name != "reduce_mean":
        x[1, 2, 3] = np.nan                             # max and min propagate NaN
        check(src, (x,))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min"])
def test_integer_reductions_wrap(name):
    src = reduce_src(name, "?x5xi8", "5xi8", "{axes = array<i64: 0>}")
    x = np.full((9, 5), 100, np.int8)
    x[3] = -128
    check(src, (x,), (rand(3, 5, dtype=np.int8),))


def test_mean_of_empty_axis_is_nan():
    check(reduce_src("reduce_mean", "?x2xf32", "2xf32", "{axes = array<i64: 0>}"),
          (np.zeros((0, 2), np.float32),), (rand(3, 2),))


@pytest.mark.parametrize("axis,r,keep", [(1, "?", False), (0, "3", False), (-1, "?x1", True)])
def test_argmax(axis, r, keep):
    src = reduce_src("argmax", "?x3xf32", f"{r}xi64",
                     f"{{axis = {axis} : i64, keepdims = {str(keep).lower()}}}")
    ties = np.array([[1, 1, 0], [2, 5, 5], [-1, -3, -1], [0, 0, 0]], np.float32)
    nans = np.array([[1, np.nan, np.nan], [np.nan, 5, 7], [-np.inf, -np.inf, -np.inf]],
                    np.float32)
    check(src, (ties,), (nans,), (rand(1, 3),))


def test_argmax_integers():
    check(reduce_src("argmax", "4x?xi32", "4xi64", "{axis = 1 : i64}"),
          (np.array([[3, 3, 1], [-5, -2, -2], [0, 9, 9], [-2147483648] * 3], np.int32),))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax(name, axis):
    src = reduce_src(name, "?x4xf32", "?x4xf32", f"{{axis = {axis} : i64}}")
    rows = np.array([[1000, 0, -1000, 1], [-np.inf] * 4, [np.inf, 0, 0, 0],
                     [1, np.nan, 0, 0]], np.float32)
    check(src, (rand(3, 4) * 10,), (rand(1, 4),), (rows,))


# ---------------------------------------------------------------------------------------------
# Matmul
# ---------------------------------------------------------------------------------------------


MATMULS = [
    # lhs, rhs, result, shapes at run time
    ("?x4", "4x?", "?x?", [((3, 4), (4, 5)), ((1, 4), (4, 1))]),
    ("?x?", "?x2", "?x2", [((3, 0), (0, 2)), ((2, 5), (5, 2))]),
    ("2x?x3x4", "?x4x5", "2x?x3x5", [((2, 3, 3, 4), (3, 4, 5)), ((2, 1, 3, 4), (6, 4, 5)),
                                     ((2, 6, 3, 4), (1, 4, 5))]),
    ("4", "?x4x3", "?x3", [((4,), (2, 4, 3))]),
    ("?x3x4", "4", "?x3", [((2, 3, 4), (4,))]),
    ("?", "?", "", [((5,), (5,)), ((0,), (0,))]),
]


@pytest.mark.parametrize("a,b,r,shapes", MATMULS)
def test_matmul(a, b, r, shapes):
    t = lambda s: f"{s}xf32" if s else "f32"            # noqa: E731
    src = binary("matmul", t(a), t(b), t(r))
    check(src, *[(rand(*sa), rand(*sb, seed=1)) for sa, sb in shapes], rtol=1e-5, atol=1e-5)


def test_integer_matmul_wraps():
    src = binary("matmul", "?x3xi16", "3x2xi16", "?x2xi16")
    a = np.full((2, 3), 300, np.int16)
    check(src, (a, np.full((3, 2), 200, np.int16)), (rand(4, 3, dtype=np.int16),
                                                     rand(3, 2, dtype=np.int16)))


# ---------------------------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("perm,r", [("", "4x3x?"), ("1, 2, 0", "3x4x?"), ("0, 2, 1", "?x4x3")])
def test_transpose(perm, r):
    attrs = f"{{perm = array<i64: {perm}>}}" if perm else ""
    check(reduce_src("transpose", "?x3x4xf32", f"{r}xf32", attrs), (rand(2, 3, 4),))


def test_reshape_inferred_and_sized():
    src = """
func.func @f(%x: tensor<?x3x4xf32>, %y: tensor<?x?x2xi32>)
    -> (tensor<?x12xf32>, tensor<4x?x3xf32>, tensor<?x?x2xi32>, tensor<?xf32>) {
  %0 = graph.reshape %x {shape = array<i64: -1, 12>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  %1 = graph.reshape %x {shape = array<i64: 4, -1, 3>} : (tensor<?x3x4xf32>) -> tensor<4x?x3xf32>
  %n = graph.dim %y {axis = 0 : i64} : (tensor<?x?x2xi32>) -> tensor<i64>
  %m = graph.dim %y {axis = 1 : i64} : (tensor<?x?x2xi32>) -> tensor<i64>
  %2 = graph.reshape %y, %m, %n {shape = array<i64: -1, -1, 2>}
      : (tensor<?x?x2xi32>, tensor<i64>, tensor<i64>) -> tensor<?x?x2xi32>
  %3 = graph.reshape %0 {shape = array<i64: -1>} : (tensor<?x12xf32>) -> tensor<?xf32>
  return %0, %1, %2, %3 : tensor<?x12xf32>, tensor<4x?x3xf32>, tensor<?x?x2xi32>, tensor<?xf32>
}"""
    check(src, (rand(2, 3, 4), rand(3, 4, 2, dtype=np.int32)),
          (rand(4, 3, 4), rand(1, 2, 2, dtype=np.int32)))


def test_reshape_to_and_from_scalars():
    src = """
func.func @f(%x: tensor<1x1xf32>) -> (tensor<f32>, tensor<1x1x1xf32>) {
  %0 = graph.reshape %x {shape = array<i64>} : (tensor<1x1xf32>) -> tensor<f32>
  %1 = graph.reshape %0 {shape = array<i64: 1, 1, 1>} : (tensor<f32>) -> tensor<1x1x1xf32>
  return %0, %1 : tensor<f32>, tensor<1x1x1xf32>
}"""
    check(src, (rand(1, 1),))


def test_broadcast_to_and_dim():
    src = """
func.func @f(%x: tensor<?x1xf32>, %y: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<i64>, tensor<3x?x4xf32>) {
  %n = graph.dim %y {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<i64>
  %0 = graph.broadcast_to %x, %n {shape = array<i64: 5, -1>}
      : (tensor<?x1xf32>, tensor<i64>) -> tensor<?x?xf32>
  %m = graph.dim %x {axis = -2 : i64} : (tensor<?x1xf32>) -> tensor<i64>
  %1 = graph.broadcast_to %x, %m {shape = array<i64: 3, -1, 4>}
      : (tensor<?x1xf32>, tensor<i64>) -> tensor<3x?x4xf32>
  return %0, %n, %1 : tensor<?x?xf32>, tensor<i64>, tensor<3x?x4xf32>
}"""
    check(src, (rand(5, 1), rand(2, 3)), (rand(1, 1), rand(2, 2)))


# ---------------------------------------------------------------------------------------------
# Variables, outputs, the calling convention
# ---------------------------------------------------------------------------------------------


VARIABLES = """
graph.variable @a : tensor<3xf32> init normal {seed = 1 : i64}
graph.variable @unused : tensor<2xf32> init zeros
graph.variable @b : tensor<3xf32> init uniform {seed = 2 : i64}
"""


def test_signature_and_argument_attributes():
    src = VARIABLES + """
func.func @f(%x: tensor<?x3xf32> {graph.name = "x"}, %k: index, %s: tensor<f32>)
    -> (tensor<?x3xf32> {graph.name = "y"}, tensor<f32>) {
  %w = graph.read @b : tensor<3xf32>
  %0 = graph.mul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  graph.assign @a, %w : tensor<3xf32>
  return %0, %s : tensor<?x3xf32>, tensor<f32>
}"""
    m = lower(src)
    f = lookup_symbol_in(m, "f")
    ftype = f.properties["function_type"].value
    assert [str(t) for t in ftype.inputs] == [
        "memref<?x3xf32>", "index", "memref<f32>",            # inputs
        "memref<?x3xf32>", "memref<f32>",                     # outputs
        "memref<3xf32>", "memref<3xf32>"]                     # @a, @b: declaration order
    assert ftype.results == ()
    attrs = [a.value for a in f.properties["arg_attrs"]]
    assert attrs[0]["graph.name"].value == "x"
    assert attrs[3]["graph.output"].value == 0 and attrs[3]["graph.name"].value == "y"
    assert attrs[4]["graph.output"].value == 1
    assert [attrs[i]["graph.variable"].value for i in (5, 6)] == ["a", "b"]
    assert "res_attrs" not in f.properties
    assert not any(op.name.startswith("graph.") for op in m.walk())
    # the declarations became a module attribute (the initializers a runtime needs)
    decls = [d.value for d in m.attributes["graph.variables"]]
    assert [d["name"].value for d in decls] == ["a", "unused", "b"]
    assert str(decls[0]["type"].value) == "tensor<3xf32>"
    assert decls[0]["initializer"].value == "normal"
    assert decls[0]["init_args"].value["seed"].value == 1
    kept = lower(src, keep_variables=True)
    assert "graph.variables" not in kept.attributes
    assert sum(op.name == "graph.variable" for op in kept.walk()) == 3


def test_read_before_assign_sees_the_old_value():
    # %old is used after the assign: it must be a snapshot. %b's read needs none.
    src = VARIABLES + """
func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %old = graph.read @a : tensor<3xf32>
  %b = graph.read @b : tensor<3xf32>
  %new = graph.add %old, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  graph.assign @a, %new : tensor<3xf32>
  %again = graph.read @a : tensor<3xf32>
  %sum = graph.add %old, %again : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d = graph.mul %sum, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %d, %old : tensor<3xf32>, tensor<3xf32>
}"""
    m = check(src, (rand(3),))
    copies = [op for op in m.walk() if op.name == "memory.copy"]
    # the snapshot of @a into its output, and the assign: no other copy
    assert len(copies) == 2


def test_swap_variables():
    src = VARIABLES + """
func.func @f() {
  %a = graph.read @a : tensor<3xf32>
  %b = graph.read @b : tensor<3xf32>
  graph.assign @a, %b : tensor<3xf32>
  graph.assign @b, %a : tensor<3xf32>
  return
}"""
    check(src, ())


def test_assign_of_a_read_and_read_returned():
    src = VARIABLES + """
func.func @f() -> tensor<3xf32> {
  %a = graph.read @a : tensor<3xf32>
  graph.assign @a, %a : tensor<3xf32>
  %b = graph.read @b : tensor<3xf32>
  graph.assign @b, %b : tensor<3xf32>
  return %b : tensor<3xf32>
}"""
    m = check(src, ())
    assert [op.name for op in m.walk() if op.name.startswith("memory.")] == ["memory.copy"]


def test_outputs_written_in_place():
    """A returned value is computed into its output; a value returned twice, an argument
    and a value also used later are copied where they must be."""
    src = """
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0 = graph.exp %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.neg %0 : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1, %0, %x : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}"""
    m = check(src, (rand(4),))
    names = [op.name for op in m.walk() if op.name.startswith("memory.")]
    assert "memory.alloc" not in names
    assert names.count("memory.copy") == 2


def test_temporaries_are_freed_after_their_last_use():
    src = """
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = graph.exp %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.neg %0 : (tensor<?xf32>) -> tensor<?xf32>
  %2 = graph.sin %x : (tensor<?xf32>) -> tensor<?xf32>
  %3 = graph.add %1, %2 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %dead = graph.cos %x : (tensor<?xf32>) -> tensor<?xf32>
  return %3 : tensor<?xf32>
}"""
    m = check(src, (rand(5),))
    f = lookup_symbol_in(m, "f")
    top = list(f.regions[0].blocks[0].ops)
    allocs = [op for op in top if op.name == "memory.alloc"]
    assert len(allocs) == 4                             # %0, %1, %2, %dead; %3 is the output
    for a in allocs:
        buf = a.results[0]
        frees = [top.index(u) for u in buf.users if u.name == "memory.dealloc"]
        readers = [top.index(_top(u, f)) for u in buf.users if u.name != "memory.dealloc"]
        assert len(frees) == 1
        # freed after the loop nest of its last reader, before the next op's nest
        assert frees[0] > max(readers)
        assert all(op.name in ("memory.dealloc", "func.return")
                   for op in top[max(readers) + 1:frees[0] + 1])


def _top(op, f):
    """The op of `f`'s body that holds `op`."""
    while op.parent_op is not f:
        op = op.parent_op
    return op


def test_sequential_loops_option():
    src = binary("add", "?x3xf32", "3xf32", "?x3xf32")
    m = check(src, (rand(2, 3), rand(3)), parallel=False)
    names = {op.name for op in m.walk()}
    assert "loop.parallel" not in names and "loop.for" in names


def test_functions_without_tensors_are_left_alone():
    src = """
func.func @g(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}
func.func @f(%x: tensor<2xf32>, %k: f32) -> (tensor<2xf32>, f32) {
  %0 = arith.mulf %k, %k : f32
  return %x, %0 : tensor<2xf32>, f32
}"""
    m = lower(src)
    g = lookup_symbol_in(m, "g")
    assert str(g.properties["function_type"].value) == "(f32) -> f32"
    f = lookup_symbol_in(m, "f")
    assert str(f.properties["function_type"].value) == \
        "(memref<2xf32>, f32, memref<2xf32>) -> f32"
    x = rand(2)
    out = np.zeros(2, np.float32)
    from irkit.interpreter import interpret
    assert interpret(m, "f", x, np.float32(3), out) == np.float32(9)
    np.testing.assert_array_equal(out, x)


# ---------------------------------------------------------------------------------------------
# What is not lowered yet
# ---------------------------------------------------------------------------------------------


def test_calls_of_graph_functions_are_errors():
    src = """
func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    with pytest.raises(IRError, match="cannot bufferize 'func.call' of '@g': the callee's "
                                      "signature changes"):
        lower(src)


_LADDER_SRC = """
graph.variable @w : tensor<3xf32> init zeros
func.func @f(%p: tensor<i1>, %x: tensor<?x3xf32>, %i: tensor<?xi64>, %u: tensor<?x3xf32>)
    -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %w = graph.read @w : tensor<3xf32>
  %a = graph.add %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %t = graph.slice %a {starts = array<i64: 1, 0>, stops = array<i64: 9223372036854775807,
      9223372036854775807>, steps = array<i64: 1, 1>} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %s = graph.scatter_add %a, %i, %u
      : (tensor<?x3xf32>, tensor<?xi64>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %r = graph.if %p -> (tensor<?x3xf32>) {
    %e = graph.exp %s : (tensor<?x3xf32>) -> tensor<?x3xf32>
    graph.yield %e : tensor<?x3xf32>
  } else {
    graph.yield %s : tensor<?x3xf32>
  }
  %m = graph.reduce_sum %r {axes = array<i64: 0>} : (tensor<?x3xf32>) -> tensor<3xf32>
  graph.assign @w, %m : tensor<3xf32>
  return %r, %t : tensor<?x3xf32>, tensor<?x3xf32>
}"""


@pytest.mark.parametrize("options, spelled", [
    ({}, "lower-graph-to-linalg{full=true},bufferize,lower-linalg-to-loop"),
    ({"parallel": False, "keep_variables": True, "output_sizes": True},
     "lower-graph-to-linalg{full=true},"
     "bufferize{parallel=false keep-variables=true output-sizes=true},"
     "lower-linalg-to-loop{parallel=false}"),
])
def test_the_pass_is_the_three_passes_of_the_ladder(options, spelled):
    """lower-graph-to-loop is a named pipeline: its output is, to the character, that of the
    three passes spelled out, each with the options it owns."""
    combined = lower(_LADDER_SRC, **options)
    m = parse_module(_LADDER_SRC)
    PassManager.parse(spelled).run(m)
    assert str(combined) == str(m)
    text = str(combined)
    assert ("loop.parallel" in text) == options.get("parallel", True)
    assert ("graph.variable @w" in text) == options.get("keep_variables", False)
    assert ("@f_output_sizes" in text) == options.get("output_sizes", False)


def test_the_pass_forwards_max_constant_elements():
    src = """
func.func @f() -> tensor<3xi32> {
  %c = graph.constant dense<[1, 2, 3]> : tensor<3xi32>
  return %c : tensor<3xi32>
}"""
    with pytest.raises(IRError, match="max-constant-elements=2"):
        lower(src, max_constant_elements=2)
    check(src, (), max_constant_elements=3)


def test_describe_lists_the_lowering():
    """An op's entry is in the table of the pass of the ladder that lowers it: matmul's in
    lower-graph-to-linalg, scatter_add's (no structured form) in bufferize."""
    from irkit.tools.describe import describe, lowering_tables_of
    from irkit.passes.bufferize import Bufferize
    from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg
    tables = lowering_tables_of([LowerGraphToLoop, LowerGraphToLinalg, Bufferize])
    text = describe("graph.matmul", tables)
    assert "lower-graph-to-linalg" in text and "graph_to_linalg/matmul.py" in text
    assert "bufferize " not in text
    text = describe("graph.scatter_add", tables)
    assert "bufferize " in text and "bufferization/scatter.py" in text


# ---------------------------------------------------------------------------------------------
# A DSL model end to end
# ---------------------------------------------------------------------------------------------


LOGREG = """model logreg {
  input x: f32[N, 6]
  input y: f32[N, 3]
  param W: f32[6, 3] = normal(std=0.5, seed=3)
  param b: f32[3] = zeros
  probs = softmax(x @ W + b, axis=1)
  loss = mean(-sum(y * log(probs), axis=1))
  output probs, loss
  train loss with sgd(lr=0.5)
}"""


def test_dsl_training_steps():
    """The lecture's logistic regression from the DSL, differentiated: three SGD steps of the
    lowered @train_step update the variable buffers as the graph program updates its
    variables, and @forward then predicts the same probabilities."""
    from irkit.frontend.dsl import compile_source, model_modules
    top = compile_source(LOGREG, "logreg.irk")
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    graph = model_modules(top)["logreg"]
    lowered = lower(str(graph))
    state: dict = {}
    variables = _initial_variables(graph)
    rng = np.random.default_rng(0)
    for step in range(3):
        n = 5 - step
        x = rng.normal(size=(n, 6)).astype(np.float32)
        y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, n)]
        f = lookup_symbol_in(graph, "train_step")
        with np.errstate(all="ignore"):
            (want,) = Interpreter(graph, state).call(f, [x, y])
        (got,) = run_lowered(lowered, "train_step", (x, y), [np.asarray(want)], variables)
        same(got, np.asarray(want), what=f"loss of step {step}")
        for name, w in state["graph.variables"].items():
            same(variables[name], w, rtol=1e-5, atol=1e-6, what=f"@{name} after step {step}")
    x = rng.normal(size=(4, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    f = lookup_symbol_in(graph, "forward")
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in Interpreter(graph, state).call(f, [x, y])]
    got = run_lowered(lowered, "forward", (x, y), want, variables)
    for g, w in zip(got, want):
        same(g, w, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Compiled code (the llvmlite backend) runs the lowered functions
# ---------------------------------------------------------------------------------------------


def _backend():
    pytest.importorskip("llvmlite")
    try:
        from irkit.backends.llvm_cpu import compile_module
    except ImportError as e:                            # pragma: no cover - backend absent
        pytest.skip(f"the llvm_cpu backend is not available: {e}")
    return compile_module


COMPILED = {
    "broadcast_reduce_argmax": ("""
func.func @f(%x: tensor<?x4xf32>, %y: tensor<4xf32>, %z: tensor<?x4xi32>)
    -> (tensor<?xf32>, tensor<?xi64>, tensor<4x?xf32>, tensor<?x4xi32>, tensor<f32>) {
  %0 = graph.add %x, %y : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = graph.gelu %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = graph.reduce_max %1 {axes = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  %3 = graph.argmax %x {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?xi64>
  %4 = graph.log_softmax %0 {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %5 = graph.transpose %4 : (tensor<?x4xf32>) -> tensor<4x?xf32>
  %6 = graph.relu %z : (tensor<?x4xi32>) -> tensor<?x4xi32>
  %7 = graph.reduce_mean %1 : (tensor<?x4xf32>) -> tensor<f32>
  return %2, %3, %5, %6, %7
      : tensor<?xf32>, tensor<?xi64>, tensor<4x?xf32>, tensor<?x4xi32>, tensor<f32>
}""", lambda: (rand(5, 4), rand(4), rand(5, 4, dtype=np.int32))),
    "batched_matmul_reshape": ("""
func.func @f(%a: tensor<?x3x4xf32>, %b: tensor<4x2xf32>) -> (tensor<?x6xf32>, tensor<?x2x3xf32>) {
  %0 = graph.matmul %a, %b : (tensor<?x3x4xf32>, tensor<4x2xf32>) -> tensor<?x3x2xf32>
  %1 = graph.reshape %0 {shape = array<i64: -1, 6>} : (tensor<?x3x2xf32>) -> tensor<?x6xf32>
  %n = graph.dim %a {axis = 0 : i64} : (tensor<?x3x4xf32>) -> tensor<i64>
  %2 = graph.transpose %0 {perm = array<i64: 0, 2, 1>} : (tensor<?x3x2xf32>) -> tensor<?x2x3xf32>
  return %1, %2 : tensor<?x6xf32>, tensor<?x2x3xf32>
}""", lambda: (rand(3, 3, 4), rand(4, 2))),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_lowered_function_matches_the_interpreter(name):
    compile_module = _backend()
    src, make_args = COMPILED[name]
    graph = parse_module(src)
    args = make_args()
    want, _ = run_graph(graph, "f", args)
    lowered = lower(src)
    jit = compile_module(lowered)
    outs = [garbage(w.shape, w.dtype) for w in want]
    status = status_args(lowered, "f")              # a reshape's count is checked
    jit.f(*args, *outs, *status)
    for st in status:
        np.testing.assert_array_equal(st, [0, 0, 0])
    for i, (g, w) in enumerate(zip(outs, want)):
        same(g, w, rtol=1e-5, atol=1e-6, what=f"result #{i}")


def test_compiled_training_steps():
    """The DSL's logistic regression, lowered and compiled: SGD steps on the variable buffers
    the caller owns give the graph interpreter's losses and parameters."""
    compile_module = _backend()
    from irkit.frontend.dsl import compile_source, model_modules
    top = compile_source(LOGREG, "logreg.irk")
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    graph = model_modules(top)["logreg"]
    lowered = lower(str(graph))
    PassManager.parse("builtin.module(canonicalize,cse)").run(lowered)
    jit = compile_module(lowered)
    state: dict = {}
    variables = _initial_variables(graph)
    rng = np.random.default_rng(1)
    for step in range(3):
        x = rng.normal(size=(6, 6)).astype(np.float32)
        y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)]
        with np.errstate(all="ignore"):
            (want,) = Interpreter(graph, state).call(lookup_symbol_in(graph, "train_step"),
                                                     [x, y])
        loss = np.zeros((), np.float32)
        jit.train_step(x, y, loss, variables["W"], variables["b"])
        same(loss, np.asarray(want), rtol=1e-5, atol=1e-6, what=f"loss of step {step}")
        for k, w in state["graph.variables"].items():
            same(variables[k], w, rtol=1e-5, atol=1e-6, what=f"@{k} after step {step}")
