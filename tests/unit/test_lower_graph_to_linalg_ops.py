"""lower-graph-to-linalg on matmul, the shape, slicing and indexing ops and the layers of
graph/nn.py (passes/graph_to_linalg/{matmul,shape,slicing,indexing,nn}.py).

Each case is a graph function built here from an op's own shape function (so its types are
the ones a program would have, `?` where an operand's are), run by the interpreter before
and after the pass on random inputs: results equal exactly for integers, to float rounding
for floats (NaN where NaN). The converted function must hold no graph op but the
`graph.check`s the rules emit, and its text reads back as itself. Shapes are static and
`?`; batch axes broadcast; convolution and pooling run with strides and paddings.

Run-time errors (an uneven split, a reshape whose count is off, an index out of range, a
negative depth) must fail the converted function as they fail the graph program: the
interpreter raises at the `graph.check`, with the graph op's own message.

Where the converted function is only linalg, tensor, arith and math (no `graph.check`), it
also goes through MLIR's own pipeline (tests/mlir_oracle.py, skipped without the tools),
whose results must be the interpreter's on the converted function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import format_attr_entry
from irkit.interpreter import Interpreter, InterpreterError, to_value
from irkit.ir import Block
from irkit.opdef import lookup_op
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from irkit.types import F32, F64, I32, I64, RankedTensorType
from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg

from mlir_oracle import missing_tools, run_mlir

END = 9223372036854775807
DTYPES = {F32: np.float32, F64: np.float64, I32: np.int32, I64: np.int64}
PROPERTY = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------------
# Graph functions from the ops' shape functions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    name: str
    type: RankedTensorType


def ttype(shape, element=F32) -> RankedTensorType:
    return RankedTensorType(tuple(shape), element)


class Fn:
    """A graph function `@f` written op by op; each op's result types come from its class
    (`create` on placeholder operands of the operands' types)."""

    def __init__(self) -> None:
        self.args: list[Val] = []
        self.lines: list[str] = []

    def arg(self, t: RankedTensorType) -> Val:
        v = Val(f"%a{len(self.args)}", t)
        self.args.append(v)
        return v

    def op(self, name: str, *groups, **props):
        """`name` on operand groups (a Val, or a list of Vals for a variadic operand)."""
        flat = [v for g in groups for v in (g if isinstance(g, list) else [g])]
        scratch = list(Block([v.type for v in flat]).args)
        it = iter(scratch)
        built = [[next(it) for _ in g] if isinstance(g, list) else next(it) for g in groups]
        op = lookup_op(name).create(*built, **props)
        entries = {**op.properties, **op.attributes}
        entries.pop("operandSegmentSizes", None)
        attrs = (" {" + ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items()))
                 + "}") if entries else ""
        types = [r.type for r in op.results]
        lhs = f"%r{len(self.lines)}"
        self.lines.append(f"{lhs}{':' + str(len(types)) if len(types) > 1 else ''} = {name} "
                          f"{', '.join(v.name for v in flat)}{attrs} : "
                          f"({', '.join(str(v.type) for v in flat)}) -> "
                          f"{_types(types)}")
        out = [Val(lhs if len(types) == 1 else f"{lhs}#{i}", t) for i, t in enumerate(types)]
        return out[0] if len(out) == 1 else out

    def text(self, *results: Val) -> str:
        args = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        body = "".join(f"  {line}\n" for line in self.lines)
        ret = f"  return {', '.join(r.name for r in results)} : " \
              f"{', '.join(str(r.type) for r in results)}\n"
        return f"func.func @f({args}) -> {_types([r.type for r in results])} {{\n{body}{ret}}}\n"


def _types(types) -> str:
    s = ", ".join(map(str, types))
    return s if len(types) == 1 else f"({s})"


def declared(shape, dynamic, element=F32) -> RankedTensorType:
    """`shape` with the axes `dynamic` marks as `?`."""
    return ttype([None if d else n for n, d in zip(shape, dynamic)], element)


# ---------------------------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------------------------


def convert(src: str):
    m = parse_module(src)
    PassManager().add(LowerGraphToLinalg()).run(m)
    text = str(m)
    assert str(parse_module(text)) == text
    left = {op.name for op in m.walk() if op.name.startswith("graph.")}
    assert left <= {"graph.check"}, f"graph ops left: {left}\n{text}"
    return m


def run(m, args) -> list[np.ndarray]:
    f = lookup_symbol_in(m, "f")
    ftype = f.properties["function_type"].value
    with np.errstate(all="ignore"):
        out = Interpreter(m).call(f, [to_value(a, t) for a, t in zip(args, ftype.inputs)])
    return [np.asarray(o) for o in out]


def assert_same(got, want, rtol=2e-6, atol=1e-6) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


def check(src: str, *arg_sets, rtol=2e-6, atol=1e-6):
    """The converted function gives the graph program's results on every argument set;
    returns the converted module."""
    graph = parse_module(src)
    graph.verify()
    m = convert(src)
    for args in arg_sets:
        assert_same(run(m, args), run(graph, args), rtol, atol)
    return m


def check_fails(src: str, args, message: str):
    """The graph program fails on `args`, and so does the converted one, with `message`."""
    graph = parse_module(src)
    with pytest.raises(InterpreterError):
        run(graph, args)
    m = convert(src)
    with pytest.raises(InterpreterError) as e:
        run(m, args)
    assert e.value.diagnostic.message == message
    return m


def pure(m) -> bool:
    """Whether the converted module is only linalg, tensor, arith, math and func."""
    return all(op.name.split(".")[0] in ("builtin", "func", "linalg", "tensor", "arith", "math")
               for op in m.walk())


def mlir_agrees(m, *arg_sets, rtol=1e-6, atol=1e-7) -> None:
    """MLIR's own pipeline gives the interpreter's results on the converted module."""
    assert pure(m), print_op(m)
    if missing_tools():
        pytest.skip(f"MLIR toolchain missing: {missing_tools()}")
    text = print_op(m, generic=True)
    for args in arg_sets:
        got = run_mlir(text, "f", [np.ascontiguousarray(a) for a in args])
        assert_same([np.asarray(g) for g in got], run(m, args), rtol, atol)


def rand(shape, element=F32, seed=0, low=-100, high=100) -> np.ndarray:
    rng = np.random.default_rng(seed + 31 * len(shape) + int(np.sum(shape)))
    dtype = DTYPES[element]
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(low, high, size=shape).astype(dtype)


def count(m, name: str) -> int:
    return sum(op.name == name for op in m.walk())


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------


@st.composite
def matmul_cases(draw):
    """Operand shapes numpy's matmul accepts (vectors, batches broadcasting through static
    1s and missing axes), a dtype, and which axes the types leave `?`."""
    ra, rb = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    batch = [draw(st.integers(2, 3)) for _ in range(max(ra, rb) - 2)]

    def batch_of(r):
        dims = batch[len(batch) - max(r - 2, 0):]
        return [1 if draw(st.integers(0, 2)) == 0 else d for d in dims]

    a = ([m, k] if ra > 1 else [k]) if ra < 3 else batch_of(ra) + [m, k]
    b = ([k, n] if rb > 1 else [k]) if rb < 3 else batch_of(rb) + [k, n]
    element = draw(st.sampled_from([F32, F64, I32]))
    dyn_a = [draw(st.booleans()) for _ in a]
    dyn_b = [draw(st.booleans()) for _ in b]
    return a, b, element, dyn_a, dyn_b


def matmul_src(a, b, element, dyn_a, dyn_b) -> str:
    f = Fn()
    x, y = f.arg(declared(a, dyn_a, element)), f.arg(declared(b, dyn_b, element))
    return f.text(f.op("graph.matmul", x, y))


@PROPERTY
@given(matmul_cases())
def test_matmul(case):
    a, b, element, dyn_a, dyn_b = case
    m = check(matmul_src(*case), [rand(a, element), rand(b, element, seed=1)],
              rtol=2e-5, atol=1e-5)
    assert count(m, "linalg.generic") + count(m, "linalg.matmul") + \
        count(m, "linalg.batch_matmul") >= 1


def test_matmul_dynamic_batch_broadcast_at_run_time():
    """`?` batch axes on both sides, 1 on one side at run time: the operand is broadcast by
    a copy first; with the very same batch size value, read as it is."""
    src = matmul_src([2, 3, 4], [2, 4, 5], F32, [True, False, False], [True, False, False])
    m = check(src, [rand([1, 3, 4]), rand([3, 4, 5], seed=1)],
              [rand([3, 3, 4]), rand([1, 4, 5], seed=1)],
              [rand([2, 3, 4]), rand([2, 4, 5], seed=1)], rtol=2e-5, atol=1e-5)
    assert count(m, "linalg.generic") == 4          # two copies, the product, the rounding


def test_matmul_shared_batch_size_needs_no_copy():
    """Attention's product: both batch sizes are the one `tensor.dim` of x."""
    f = Fn()
    x = f.arg(ttype([None, None, 4]))
    xt = f.op("graph.transpose", x, perm=[0, 2, 1])
    m = check(f.text(f.op("graph.matmul", x, xt)), [rand([2, 3, 4])], rtol=2e-5, atol=1e-5)
    assert count(m, "linalg.generic") == 2


def test_matmul_numerics_are_the_wide_sum():
    """f32 products summed in f64 and rounded once: 2^24 + 1 - 2^24 is 1, where a float32
    sum gives 0."""
    src = matmul_src([1, 3], [3, 1], F32, [False, False], [False, False])
    a = np.array([[2.0 ** 24, 1.0, -(2.0 ** 24)]], np.float32)
    b = np.ones((3, 1), np.float32)
    (got,) = run(convert(src), [a, b])
    assert got[0, 0] == 1.0


def test_integer_matmul_uses_the_named_ops():
    m = check(matmul_src([3, 4], [4, 2], I32, [False, True], [True, False]),
              [rand([3, 4], I32), rand([4, 2], I32, seed=1)])
    assert count(m, "linalg.matmul") == 1 and count(m, "linalg.generic") == 0
    m = check(matmul_src([2, 3, 4], [2, 4, 5], I64, [False] * 3, [False] * 3),
              [rand([2, 3, 4], I64), rand([2, 4, 5], I64, seed=1)])
    assert count(m, "linalg.batch_matmul") == 1


#: (declared shapes, dtype, `?` masks, the run-time shapes)
MATMUL_ORACLE = [
    ([5, 7], [7, 3], F32, [True, False], [False, False], [5, 7], [7, 3]),
    ([2, 1, 3, 4], [5, 4, 2], F32, [True, False, False, False], [False, False, True],
     [2, 1, 3, 4], [5, 4, 2]),
    ([4], [4, 3], F64, [False], [False, False], [4], [4, 3]),
    ([3, 4], [4, 2], I32, [False, False], [False, False], [3, 4], [4, 2]),
    ([2, 3, 4], [2, 4, 5], F32, [True, False, False], [True, False, False],
     [1, 3, 4], [2, 4, 5]),
]


@pytest.mark.parametrize("case", MATMUL_ORACLE)
def test_matmul_mlir_oracle(case):
    a, b, element = case[5], case[6], case[2]
    mlir_agrees(convert(matmul_src(*case[:5])), [rand(a, element), rand(b, element, seed=1)])


# ---------------------------------------------------------------------------------------------
# transpose, reshape, broadcast_to, dim
# ---------------------------------------------------------------------------------------------


@PROPERTY
@given(st.lists(st.integers(1, 4), max_size=4).flatmap(
    lambda s: st.tuples(st.just(s), st.permutations(range(len(s))),
                        st.lists(st.booleans(), min_size=len(s), max_size=len(s)))))
def test_transpose(case):
    shape, perm, dyn = case
    f = Fn()
    x = f.arg(declared(shape, dyn))
    m = check(f.text(f.op("graph.transpose", x, perm=list(perm))), [rand(shape)])
    if list(perm) != sorted(perm):
        assert count(m, "linalg.transpose") == 1


def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_cases(draw):
    """(x's shape, the target `shape` with at most one -1, which x axes are `?`)."""
    shape = draw(st.lists(st.integers(1, 4), max_size=4))
    factors = _factors(int(np.prod(shape, dtype=np.int64)))
    rank = draw(st.integers(0 if not factors else 1, 4))
    target = [1] * rank
    for p in factors:
        target[draw(st.integers(0, rank - 1))] *= p
    if rank and draw(st.booleans()):
        target[draw(st.integers(0, rank - 1))] = -1
    return shape, target, [draw(st.booleans()) for _ in shape]


@PROPERTY
@given(reshape_cases())
def test_reshape(case):
    shape, target, dyn = case
    f = Fn()
    x = f.arg(declared(shape, dyn))
    m = check(f.text(f.op("graph.reshape", x, [], shape=target)), [rand(shape)])
    assert count(m, "linalg.generic") == 0          # views, no copy


def test_reshape_keeps_groups():
    """[?, 28, 28] -> [-1, 784] collapses [[0], [1, 2]] and reads the batch size from x."""
    f = Fn()
    x = f.arg(ttype([None, 28, 28]))
    m = check(f.text(f.op("graph.reshape", x, [], shape=[-1, 784])), [rand([3, 28, 28])])
    (collapse,) = [op for op in m.walk() if op.name == "tensor.collapse_shape"]
    assert str(collapse.properties["reassociation"]) == "[[0], [1, 2]]"
    assert count(m, "tensor.expand_shape") == 0 and count(m, "graph.check") == 0


def test_reshape_with_size_operands():
    """The cotangent of [?, ?, 64] -> [-1, 64]: regrouped into x's own sizes (graph.dim),
    which need no check; sizes given as arguments are checked."""
    f = Fn()
    y, x = f.arg(ttype([None, 4])), f.arg(ttype([None, None, 4]))
    dims = [f.op("graph.dim", x, axis=0), f.op("graph.dim", x, axis=1)]
    m = check(f.text(f.op("graph.reshape", y, dims, shape=[-1, -1, 4])),
              [rand([6, 4]), rand([2, 3, 4])])
    assert count(m, "graph.check") == 1             # the count of y against x's sizes
    f = Fn()
    y, n0, n1 = f.arg(ttype([None, 4])), f.arg(ttype([], I64)), f.arg(ttype([], I64))
    src = f.text(f.op("graph.reshape", y, [n0, n1], shape=[-1, -1, 4]))
    check(src, [rand([6, 4]), np.int64(3), np.int64(2)], [rand([0, 4]), np.int64(0),
                                                          np.int64(5)])
    check_fails(src, [rand([6, 4]), np.int64(4), np.int64(2)],
                "'graph.reshape' failed: cannot reshape array of size 24 into shape "
                "(-1, -1, 4) of 32 elements")


def test_reshape_count_mismatch_fails():
    f = Fn()
    x = f.arg(ttype([None, 4]))
    src = f.text(f.op("graph.reshape", x, [], shape=[-1, 6]))
    m = check(src, [rand([3, 4])], [rand([0, 4])])
    check_fails(src, [rand([5, 4])],
                "'graph.reshape' failed: cannot reshape array of size 20 into shape (-1, 6)")
    assert count(m, "graph.check") == 1
    f = Fn()                                        # a static result of a `?` input
    x = f.arg(ttype([None, 4]))
    src = f.text(f.op("graph.reshape", x, [], shape=[2, 8]))
    check(src, [rand([4, 4])])
    check_fails(src, [rand([3, 4])], "'graph.reshape' failed: cannot reshape array of size "
                                     "12 into shape (2, 8) of 16 elements")


@st.composite
def broadcast_cases(draw):
    """(x's shape, the target shape, which target entries are -1 sizes operands, which x
    axes are `?`)."""
    target = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    drop = draw(st.integers(0, len(target)))
    shape = [1 if draw(st.integers(0, 2)) == 0 else d for d in target[drop:]]
    given = [draw(st.booleans()) for _ in target]
    return shape, target, given, [draw(st.booleans()) for _ in shape]


@PROPERTY
@given(broadcast_cases())
def test_broadcast_to(case):
    shape, target, given, dyn = case
    f = Fn()
    x = f.arg(declared(shape, dyn))
    sizes = [f.arg(ttype([], I64)) for g in given if g]
    r = f.op("graph.broadcast_to", x, sizes, shape=[-1 if g else d
                                                    for g, d in zip(given, target)])
    check(f.text(r), [rand(shape)] + [np.int64(d) for g, d in zip(given, target) if g])


def test_broadcast_to_of_a_size_one_at_run_time_and_of_a_splat():
    f = Fn()
    x, n = f.arg(ttype([None, 3])), f.arg(ttype([], I64))
    src = f.text(f.op("graph.broadcast_to", x, [n], shape=[2, -1, 3]))
    m = check(src, [rand([1, 3]), np.int64(4)], [rand([4, 3]), np.int64(4)])
    assert count(m, "linalg.generic") == 1          # a select: no linalg.broadcast form
    src = """
    func.func @f(%n: tensor<i64>) -> tensor<?x3xf32> {
      %c = graph.constant dense<2.5> : tensor<1x3xf32>
      %r = graph.broadcast_to %c, %n {shape = array<i64: -1, 3>}
          : (tensor<1x3xf32>, tensor<i64>) -> tensor<?x3xf32>
      return %r : tensor<?x3xf32>
    }"""
    m = check(src, [np.int64(4)])
    assert count(m, "linalg.fill") == 1 and count(m, "linalg.broadcast") == 0


def test_dim():
    f = Fn()
    x = f.arg(ttype([None, 3]))
    n = f.op("graph.dim", x, axis=0)
    m = check(f.text(n, f.op("graph.dim", x, axis=-1)), [rand([5, 3])], [rand([0, 3])])
    assert count(m, "tensor.from_elements") == 2


SHAPE_ORACLE = [
    ("graph.transpose", [None, 3, 4], [2, 3, 4], dict(perm=[2, 0, 1])),
    ("graph.reshape", [None, 6], [4, 6], dict(shape=[-1, 2, 3])),
    ("graph.reshape", [2, 3, 4], [2, 3, 4], dict(shape=[4, -1])),
    ("graph.broadcast_to", [1, 3], [1, 3], dict(shape=[2, 4, 3])),
]


@pytest.mark.parametrize("case", SHAPE_ORACLE)
def test_shape_mlir_oracle(case):
    name, declared_shape, shape, props = case
    f = Fn()
    x = f.arg(ttype(declared_shape))
    groups = [x, []] if name != "graph.transpose" else [x]
    m = convert(f.text(f.op(name, *groups, **props)))
    mlir_agrees(m, [rand(shape)])


# ---------------------------------------------------------------------------------------------
# slice, insert_slice, concat, split
# ---------------------------------------------------------------------------------------------


BOUNDS = st.sampled_from([0, 1, 2, 5, -1, -2, -5, END, -END])


@st.composite
def slice_cases(draw):
    shape = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
    starts = [draw(BOUNDS) for _ in shape]
    stops = [draw(BOUNDS) for _ in shape]
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
    return shape, starts, stops, steps, [draw(st.booleans()) for _ in shape]


@PROPERTY
@given(slice_cases())
def test_slice(case):
    shape, starts, stops, steps, dyn = case
    f = Fn()
    x = f.arg(declared(shape, dyn))
    m = check(f.text(f.op("graph.slice", x, starts=starts, stops=stops, steps=steps)),
              [rand(shape)])
    assert count(m, "linalg.generic") == 0


@PROPERTY
@given(slice_cases())
def test_insert_slice(case):
    shape, starts, stops, steps, dyn = case
    index = tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps))
    window = np.zeros(shape)[index].shape
    f = Fn()
    src, dest = f.arg(ttype(window)), f.arg(declared(shape, dyn))
    check(f.text(f.op("graph.insert_slice", src, dest, starts=starts, stops=stops,
                      steps=steps)), [rand(window, seed=1), rand(shape)])


@st.composite
def concat_cases(draw):
    rank = draw(st.integers(1, 3))
    axis = draw(st.integers(-rank, rank - 1))
    base = [draw(st.integers(1, 3)) for _ in range(rank)]
    shapes = []
    for _ in range(draw(st.integers(1, 3))):
        s = list(base)
        s[axis] = draw(st.integers(0, 3))
        shapes.append(s)
    return shapes, axis, [[draw(st.booleans()) for _ in range(rank)] for _ in shapes]


@PROPERTY
@given(concat_cases())
def test_concat(case):
    shapes, axis, dyns = case
    f = Fn()
    xs = [f.arg(declared(s, d)) for s, d in zip(shapes, dyns)]
    check(f.text(f.op("graph.concat", xs, axis=axis)),
          [rand(s, seed=i) for i, s in enumerate(shapes)])


@PROPERTY
@given(st.integers(1, 4), st.integers(0, 1), st.integers(1, 3), st.booleans())
def test_split_equal(sections, axis, per, dyn):
    shape = [sections * per, 3] if axis == 0 else [2, sections * per]
    f = Fn()
    x = f.arg(declared(shape, [dyn, dyn]))
    parts = f.op("graph.split", x, [], axis=axis, sections=sections)
    parts = parts if isinstance(parts, list) else [parts]
    check(f.text(*parts), [rand(shape)])


def test_split_checks():
    f = Fn()
    x = f.arg(ttype([None, 3]))
    src = f.text(*f.op("graph.split", x, [], axis=0, sections=2))
    check(src, [rand([4, 3])], [rand([0, 3])])
    check_fails(src, [rand([3, 3])], "'graph.split' failed: array split does not result in "
                                     "an equal division (axis 0 of size 3 into 2 sections)")
    f = Fn()                                        # parts of run-time sizes
    x, m, n = f.arg(ttype([None, 2])), f.arg(ttype([], I64)), f.arg(ttype([], I64))
    src = f.text(*f.op("graph.split", x, [m, n], axis=0, sections=2))
    module = check(src, [rand([5, 2]), np.int64(2), np.int64(3)],
                   [rand([5, 2]), np.int64(0), np.int64(5)])
    assert count(module, "tensor.pad") == 1
    message = ("'graph.split' failed: part sizes (adding up to {}) do not add up to the axis "
               "size {}")
    check_fails(src, [rand([5, 2]), np.int64(4), np.int64(3)], message.format(7, 5))
    check_fails(src, [rand([5, 2]), np.int64(-1), np.int64(6)], message.format(5, 5))


def test_split_by_sizes_of_its_concat():
    """The cotangent of a concat of two `?`-sized inputs, split by their graph.dims: the
    parts provably fill the axis, so nothing is checked or copied."""
    f = Fn()
    a, b = f.arg(ttype([None, 2])), f.arg(ttype([None, 2]))
    c = f.op("graph.concat", [a, b], axis=0)
    dims = [f.op("graph.dim", a, axis=0), f.op("graph.dim", b, axis=0)]
    m = check(f.text(*f.op("graph.split", c, dims, axis=0, sections=2)),
              [rand([3, 2]), rand([1, 2], seed=1)], [rand([0, 2]), rand([2, 2], seed=1)])
    assert count(m, "graph.check") == 0 and count(m, "tensor.pad") == 0


SLICING_ORACLE = [
    ("slice", [None, 6], [5, 6], dict(starts=[-2, 5], stops=[-END, 0], steps=[-2, -2])),
    ("slice", [4, None], [4, 7], dict(starts=[1, 0], stops=[END, -1], steps=[2, 3])),
    ("concat", [None, 3], [2, 3], dict(axis=0)),
    ("split", [4, 6], [4, 6], dict(axis=1, sections=3)),
]


@pytest.mark.parametrize("case", SLICING_ORACLE)
def test_slicing_mlir_oracle(case):
    name, declared_shape, shape, props = case
    f = Fn()
    x = f.arg(ttype(declared_shape))
    if name == "slice":
        results = [f.op("graph.slice", x, **props)]
        args = [rand(shape)]
    elif name == "concat":
        y = f.arg(ttype(declared_shape))
        results = [f.op("graph.concat", [x, y, x], **props)]
        args = [rand(shape), rand(shape, seed=1)]
    else:
        results = f.op("graph.split", x, [], **props)
        args = [rand(shape)]
    mlir_agrees(convert(f.text(*results)), args)


def test_insert_slice_mlir_oracle():
    f = Fn()
    src, dest = f.arg(ttype([2, 3])), f.arg(ttype([None, 6]))
    r = f.op("graph.insert_slice", src, dest, starts=[-1, 5], stops=[-END, -END],
             steps=[-2, -2])
    mlir_agrees(convert(f.text(r)), [rand([2, 3], seed=1), rand([4, 6])])


# ---------------------------------------------------------------------------------------------
# one_hot, gather
# ---------------------------------------------------------------------------------------------


@PROPERTY
@given(st.lists(st.integers(0, 3), max_size=2), st.integers(0, 4), st.booleans(),
       st.sampled_from([I32, I64]))
def test_one_hot(shape, depth, sized, element):
    f = Fn()
    idx = f.arg(declared(shape, [True] * len(shape), element))
    if sized:
        n = f.arg(ttype([], I64))
        r = f.op("graph.one_hot", idx, [n], depth=-1)
        args = [rand(shape, element, low=-2, high=depth + 2), np.int64(depth)]
    else:
        r = f.op("graph.one_hot", idx, [], depth=depth)
        args = [rand(shape, element, low=-2, high=depth + 2)]
    check(f.text(r), args)


def test_one_hot_negative_depth_fails():
    f = Fn()
    idx, n = f.arg(ttype([3], I64)), f.arg(ttype([], I64))
    src = f.text(f.op("graph.one_hot", idx, [n], depth=-1))
    check_fails(src, [np.array([0, 1, 2]), np.int64(-2)],
                "'graph.one_hot' failed: one_hot depth must be non-negative, got -2")


@PROPERTY
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.lists(st.integers(0, 3), max_size=2), st.booleans(), st.sampled_from([I32, I64]))
def test_gather(table_shape, idx_shape, dyn, element):
    rows = table_shape[0]
    f = Fn()
    table = f.arg(declared(table_shape, [dyn] * len(table_shape)))
    idx = f.arg(declared(idx_shape, [dyn] * len(idx_shape), element))
    check(f.text(f.op("graph.gather", table, idx)),
          [rand(table_shape), rand(idx_shape, element, low=-rows, high=rows)])


def test_gather_out_of_range_fails():
    f = Fn()
    table, idx = f.arg(ttype([None, 3])), f.arg(ttype([None], I32))
    src = f.text(f.op("graph.gather", table, idx))
    check_fails(src, [rand([4, 3]), np.array([1, 9, -2], np.int32)],
                "'graph.gather' failed: index 9 is out of bounds for axis 0 with size 4")
    check_fails(src, [rand([4, 3]), np.array([-5], np.int32)],
                "'graph.gather' failed: index -5 is out of bounds for axis 0 with size 4")


def test_scatter_add_has_no_rule():
    """Indirect writes: the op stays for bufferize (see indexing.py)."""
    src = """
    func.func @f(%d: tensor<4x3xf32>, %i: tensor<2xi32>, %u: tensor<2x3xf32>)
        -> tensor<4x3xf32> {
      %r = graph.scatter_add %d, %i, %u
          : (tensor<4x3xf32>, tensor<2xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
      return %r : tensor<4x3xf32>
    }"""
    m = parse_module(src)
    PassManager().add(LowerGraphToLinalg()).run(m)
    assert count(m, "graph.scatter_add") == 1


def test_indexing_mlir_oracle():
    f = Fn()
    idx = f.arg(ttype([None], I32))
    mlir_agrees(convert(f.text(f.op("graph.one_hot", idx, [], depth=4))),
                [np.array([0, 3, -1, 4, 2], np.int32)])


# ---------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------


def _out(h, k, s, p):
    return (h + 2 * p - k) // s + 1


conv_case = st.tuples(
    st.integers(1, 2), st.integers(1, 3), st.integers(1, 3),       # N, C, O
    st.integers(1, 3), st.integers(1, 3),                          # KH, KW
    st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(0, 2),  # strides, pads
    st.integers(0, 4), st.integers(0, 4),                          # extra H, W
    st.sampled_from(["static", "batch", "all"]), st.sampled_from([F32, F64]))


def _conv(case):
    n, c, o, kh, kw, sh, sw, ph, pw, eh, ew, dyn, element = case
    h, w = max(kh - 2 * ph, 1) + eh, max(kw - 2 * pw, 1) + ew
    xs, ws = [n, c, h, w], [o, c, kh, kw]
    ys = [n, o, _out(h, kh, sh, ph), _out(w, kw, sw, pw)]
    mask = {"static": [False] * 4, "batch": [True, False, False, False], "all": [True] * 4}[dyn]
    props = dict(stride=[sh, sw], padding=[ph, pw])
    return xs, ws, ys, mask, element, props


@PROPERTY
@given(conv_case)
def test_conv2d(case):
    xs, ws, ys, mask, element, props = _conv(case)
    f = Fn()
    x, w = f.arg(declared(xs, mask, element)), f.arg(declared(ws, mask, element))
    check(f.text(f.op("graph.conv2d", x, w, **props)),
          [rand(xs, element), rand(ws, element, seed=1)], rtol=2e-5, atol=1e-5)


@PROPERTY
@given(conv_case)
def test_conv2d_backprop_input(case):
    """A weight of `?` kernel size is flipped by a copy; a static one through the map."""
    xs, ws, ys, mask, element, props = _conv(case)
    f = Fn()
    dy, w = f.arg(declared(ys, mask, element)), f.arg(declared(ws, mask, element))
    x = f.arg(declared(xs, mask, element))
    m = check(f.text(f.op("graph.conv2d_backprop_input", dy, w, x, **props)),
              [rand(ys, element, seed=2), rand(ws, element, seed=1), rand(xs, element)],
              rtol=2e-5, atol=1e-5)
    assert count(m, "tensor.extract") == (1 if mask[2] else 0)


@PROPERTY
@given(conv_case)
def test_conv2d_backprop_filter(case):
    xs, ws, ys, mask, element, props = _conv(case)
    f = Fn()
    x, dy = f.arg(declared(xs, mask, element)), f.arg(declared(ys, mask, element))
    w = f.arg(declared(ws, mask, element))
    check(f.text(f.op("graph.conv2d_backprop_filter", x, dy, w, **props)),
          [rand(xs, element), rand(ys, element, seed=2), rand(ws, element, seed=1)],
          rtol=2e-5, atol=1e-5)


def test_conv2d_backprop_input_large_padding():
    """A padding of the kernel size or more: cotangent rows that only meet the padding are
    cut off before the canvas."""
    case = (1, 2, 2, 1, 2, 1, 2, 3, 2, 1, 2, "batch", F32)
    xs, ws, ys, mask, element, props = _conv(case)
    f = Fn()
    dy, w, x = (f.arg(declared(s, mask)) for s in (ys, ws, xs))
    m = check(f.text(f.op("graph.conv2d_backprop_input", dy, w, x, **props)),
              [rand(ys, seed=2), rand(ws, seed=1), rand(xs)], rtol=2e-5, atol=1e-5)
    assert count(m, "tensor.extract_slice") == 1


CONV_ORACLE = [
    (2, 3, 2, 3, 2, 2, 1, 1, 0, 2, 1, "batch", F32),
    (1, 2, 3, 2, 3, 1, 2, 0, 2, 3, 0, "static", F64),
    (1, 1, 2, 3, 3, 2, 2, 1, 1, 1, 2, "all", F32),
]


@pytest.mark.parametrize("case", CONV_ORACLE)
def test_conv_mlir_oracle(case):
    xs, ws, ys, mask, element, props = _conv(case)
    x, w, dy = rand(xs, element), rand(ws, element, seed=1), rand(ys, element, seed=2)
    for name, shapes, args in (("graph.conv2d", [xs, ws], [x, w]),
                               ("graph.conv2d_backprop_input", [ys, ws, xs], [dy, w, x]),
                               ("graph.conv2d_backprop_filter", [xs, ys, ws], [x, dy, w])):
        f = Fn()
        vals = [f.arg(declared(s, mask, element)) for s in shapes]
        mlir_agrees(convert(f.text(f.op(name, *vals, **props))), args, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------


pool_case = st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 3),
                      st.integers(1, 3), st.sampled_from([None, (1, 1), (2, 1), (1, 3)]),
                      st.integers(0, 4), st.integers(0, 4), st.booleans(),
                      st.sampled_from([F32, F64]))


def _pool(case):
    n, c, kh, kw, stride, eh, ew, dyn, element = case
    xs = [n, c, kh + eh, kw + ew]
    s = stride or (kh, kw)
    ys = [n, c, (xs[2] - kh) // s[0] + 1, (xs[3] - kw) // s[1] + 1]
    props = dict(kernel=[kh, kw]) | (dict(stride=list(stride)) if stride else {})
    return xs, ys, [dyn, False, dyn, dyn], element, props


def _pool_input(xs, element, ties: bool, seed=0):
    x = rand(xs, element, seed=seed)
    if ties:                                   # equal maxima and a NaN
        x = np.round(x)
        if x.size > 3:
            x.flat[3] = np.nan
    return x


@PROPERTY
@given(pool_case, st.booleans())
def test_pools(case, ties):
    xs, ys, mask, element, props = _pool(case)
    for name in ("graph.max_pool2d", "graph.avg_pool2d"):
        f = Fn()
        x = f.arg(declared(xs, mask, element))
        check(f.text(f.op(name, x, **props)), [_pool_input(xs, element, ties)])


@PROPERTY
@given(pool_case, st.booleans())
def test_pool_grads(case, ties):
    xs, ys, mask, element, props = _pool(case)
    x = _pool_input(xs, element, ties)
    dy, t = rand(ys, element, seed=1), rand(xs, element, seed=2)
    for name, shapes, args in (("graph.max_pool2d_grad", [xs, ys], [x, dy]),
                               ("graph.max_pool2d_grad_grad", [xs, xs], [x, t]),
                               ("graph.avg_pool2d_grad", [ys, xs], [dy, x])):
        f = Fn()
        vals = [f.arg(declared(s, mask, element)) for s in shapes]
        check(f.text(f.op(name, *vals, **props)), args)


def test_max_pool2d_grad_routes_to_the_first_maximum():
    """Ties go to the first tap in row-major order, a NaN wins; overlapping windows add."""
    f = Fn()
    x, dy = f.arg(ttype([1, 1, 2, 3])), f.arg(ttype([1, 1, 1, 2]))
    src = f.text(f.op("graph.max_pool2d_grad", x, dy, kernel=[2, 2], stride=[1, 1]))
    xv = np.array([[[[1.0, 5.0, 5.0], [5.0, np.nan, 0.0]]]], np.float32)
    dyv = np.array([[[[10.0, 100.0]]]], np.float32)
    (got,) = run(convert(src), [xv, dyv])
    np.testing.assert_array_equal(got, [[[[0.0, 0.0, 0.0], [0.0, 110.0, 0.0]]]])
    xv = np.array([[[[1.0, 5.0, 5.0], [5.0, 2.0, 0.0]]]], np.float32)
    (got,) = run(convert(src), [xv, dyv])
    np.testing.assert_array_equal(got, [[[[0.0, 110.0, 0.0], [0.0, 0.0, 0.0]]]])


POOL_ORACLE = [
    (2, 2, 2, 2, None, 1, 3, True, F32),
    (1, 2, 3, 2, (1, 1), 2, 0, False, F64),
    (1, 1, 2, 3, (2, 1), 3, 2, True, F32),
]


@pytest.mark.parametrize("case", POOL_ORACLE)
def test_pool_mlir_oracle(case):
    xs, ys, mask, element, props = _pool(case)
    x = _pool_input(xs, element, ties=True)
    dy, t = rand(ys, element, seed=1), rand(xs, element, seed=2)
    for name, shapes, args in (("graph.max_pool2d", [xs], [x]),
                               ("graph.avg_pool2d", [xs], [x]),
                               ("graph.max_pool2d_grad", [xs, ys], [x, dy]),
                               ("graph.max_pool2d_grad_grad", [xs, xs], [x, t]),
                               ("graph.avg_pool2d_grad", [ys, xs], [dy, x])):
        f = Fn()
        vals = [f.arg(declared(s, mask, element)) for s in shapes]
        mlir_agrees(convert(f.text(f.op(name, *vals, **props))), args)


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------


@PROPERTY
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.booleans(),
       st.sampled_from([F32, F64]))
def test_batchnorm(shape, dyn, element):
    f = Fn()
    x = f.arg(declared(shape, [dyn] * len(shape), element))
    params = [f.arg(declared([shape[1]], [dyn], element)) for _ in range(4)]
    r = f.op("graph.batchnorm", x, *params, epsilon=1e-3)
    var = np.abs(rand([shape[1]], element, seed=2))
    check(f.text(r), [rand(shape, element), rand([shape[1]], element, seed=1), var,
                      rand([shape[1]], element, seed=3), rand([shape[1]], element, seed=4)])


@PROPERTY
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3).flatmap(
    lambda s: st.tuples(st.just(s), st.integers(-len(s), len(s) - 1))),
    st.booleans(), st.sampled_from([F32, F64]))
def test_layernorm(case, dyn, element):
    shape, axis = case
    f = Fn()
    x = f.arg(declared(shape, [dyn] * len(shape), element))
    g, b = (f.arg(declared([shape[axis]], [dyn], element)) for _ in range(2))
    xv = rand(shape, element) * 3 + 10              # a large mean: two passes matter
    check(f.text(f.op("graph.layernorm", x, g, b, axis=axis)),
          [xv, rand([shape[axis]], element, seed=1), rand([shape[axis]], element, seed=2)],
          rtol=2e-5, atol=2e-5)


def test_normalization_mlir_oracle():
    for element in (F32, F64):
        f = Fn()
        x = f.arg(ttype([None, 3, 2], element))
        params = [f.arg(ttype([3], element)) for _ in range(4)]
        args = [rand([2, 3, 2], element), rand([3], element, seed=1),
                np.abs(rand([3], element, seed=2)), rand([3], element, seed=3),
                rand([3], element, seed=4)]
        mlir_agrees(convert(f.text(f.op("graph.batchnorm", x, *params))), args)
        f = Fn()
        x = f.arg(ttype([None, 5], element))
        g, b = f.arg(ttype([5], element)), f.arg(ttype([5], element))
        mlir_agrees(convert(f.text(f.op("graph.layernorm", x, g, b, axis=1))),
                    [rand([3, 5], element), rand([5], element, seed=1),
                     rand([5], element, seed=2)])
