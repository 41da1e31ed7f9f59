"""The shape ops of the graph dialect (dialects/graph_shape.py, graph_slice.py,
graph_indexing.py).

- Evaluation: hypothesis draws shapes, permutations, slices (negative steps and clamped bounds
  included), broadcast targets and split/concat layouts; each op runs through the parser,
  verifier and interpreter, and its result must equal an index formula written here, with
  exactly the element type and shape of the inferred result type.
- Shape functions with DSL symbols (`N`): symbols flow through, never equal a number, and a
  reshape's -1 becomes the one symbol left after cancelling (`[N, 28, 28] -> [-1, 784]`).
- Canonicalization: the patterns and folds keep what a function computes, and remove the ops
  they are meant to remove.
"""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irkit.attributes import format_attr_entry, numpy_dtype
from irkit.dialects import load_all
from irkit.dialects.graph import ShapeError, TensorSpec
from irkit.dialects.graph import indexing as gi
from irkit.dialects.graph import shape as gs
from irkit.dialects.graph import slicing as gsl
from irkit.interpreter import interpret
from irkit.parser import parse_module, parse_type
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.types import F32, I32, I64, RankedTensorType

load_all()

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
END = 9223372036854775807

_NP_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32"}


def _type_of(a: np.ndarray) -> str:
    return str(RankedTensorType(a.shape, {"f32": F32, "i64": I64, "i32": I32}[
        _NP_TYPES[a.dtype]]))


def run(cls, arrays, arg_types=None, **props):
    """Build `cls` on function arguments holding `arrays` (typed `arg_types`, default their
    static types) with Python `props`, verify, interpret; return (results, result types)."""
    arg_types = arg_types or [_type_of(a) for a in arrays]
    specs = [TensorSpec.of(parse_type(t)) for t in arg_types]
    full = {pd.name: pd.to_py(pd.default) for pd in cls.spec.props if pd.optional}
    full.update(props)
    out_types = [str(s.to_type()) for s in cls.infer(specs, full)]
    attrs = ", ".join(format_attr_entry(k, v)
                      for k, v in sorted(cls.py_props_to_attrs(props).items()))
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    uses = ", ".join(f"%a{i}" for i in range(len(arg_types)))
    res = ", ".join(out_types)
    names = ", ".join(f"%r#{i}" for i in range(len(out_types)))
    text = f"""
    func.func @f({args}) -> ({res}) {{
      %r:{len(out_types)} = {cls.name} {uses} {{{attrs}}} : ({", ".join(arg_types)}) -> ({res})
      return {names} : {res}
    }}"""
    m = parse_module(textwrap.dedent(text))
    m.verify()
    out = interpret(m, "f", *arrays)
    outs = [out] if len(out_types) == 1 else list(out)
    return outs, [parse_type(t) for t in out_types]


def check_typed(outs, types) -> None:
    """Each result is an array of its type's element type, with the type's static sizes."""
    for v, t in zip(outs, types):
        assert isinstance(v, np.ndarray)
        assert v.dtype == np.dtype(numpy_dtype(t.element))
        assert v.ndim == t.rank
        assert all(d is None or d == n for d, n in zip(t.shape, v.shape)), (v.shape, t)


def shapes(min_rank=0, max_rank=4, max_side=4, min_side=0):
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank) \
        .map(tuple)


def arange(shape, dtype=np.float32) -> np.ndarray:
    """Distinct values, so a wrong index shows as a wrong value."""
    return (np.arange(int(np.prod(shape, dtype=np.int64))) + 1).astype(dtype).reshape(shape)


# ----- transpose -------------------------------------------------------------------------------


@st.composite
def transposes(draw):
    shape = draw(shapes(max_rank=4))
    perm = draw(st.permutations(range(len(shape))))
    return shape, tuple(perm)


@SETTINGS
@given(transposes())
def test_transpose_moves_axis_perm_i_to_i(case):
    shape, perm = case
    x = arange(shape)
    (r,), types = run(gs.TransposeOp, [x], perm=perm)
    check_typed([r], types)
    assert r.shape == tuple(shape[p] for p in perm)
    for idx in itertools.product(*map(range, r.shape)):
        src = [0] * len(shape)
        for i, p in enumerate(perm):
            src[p] = idx[i]
        assert r[idx] == x[tuple(src)]


def test_transpose_default_reverses():
    x = arange((2, 3, 4))
    (r,), _ = run(gs.TransposeOp, [x])
    assert r.shape == (4, 3, 2) and r[3, 1, 0] == x[0, 1, 3]


# ----- reshape ---------------------------------------------------------------------------------


@st.composite
def reshapes(draw):
    shape = draw(shapes(max_rank=4, min_side=1))
    n = int(np.prod(shape, dtype=np.int64))
    # A target: the count's prime factors dealt into a random number of axes.
    factors = [p for p in (2, 3, 5, 7) for _ in range(_multiplicity(n, p))]
    k = draw(st.integers(0, 4))
    target = [1] * k if k else []
    for f in factors:
        if not target:
            target = [1]
        target[draw(st.integers(0, len(target) - 1))] *= f
    if not target and n == 1:
        target = []
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return shape, tuple(target)


def _multiplicity(n: int, p: int) -> int:
    k = 0
    while n % p == 0:
        n //= p
        k += 1
    return k


@SETTINGS
@given(reshapes())
def test_reshape_keeps_row_major_order(case):
    shape, target = case
    x = arange(shape)
    (r,), types = run(gs.ReshapeOp, [x], shape=target)
    check_typed([r], types)
    known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
    want = tuple(x.size // known if d == -1 else d for d in target)
    assert r.shape == want
    assert list(r.flat) == list(x.flat)


def test_reshape_dynamic_input():
    x = arange((5, 28, 28))
    (r,), types = run(gs.ReshapeOp, [x], ["tensor<?x28x28xf32>"], shape=(-1, 784))
    assert str(types[0]) == "tensor<?x784xf32>"
    assert r.shape == (5, 784) and r[4, 783] == x[4, 27, 27]


# ----- slice -----------------------------------------------------------------------------------


def python_slice(start: int, stop: int, step: int, n: int) -> list[int]:
    """The indices `range(n)[start:stop:step]` selects, from the language reference's rules
    (written out, not through `slice.indices`)."""
    def clamp(i, lo, hi):
        if i < 0:
            i += n
        return min(max(i, lo), hi)
    if step > 0:
        i, j = clamp(start, 0, n), clamp(stop, 0, n)
        return list(range(i, j, step))
    i, j = clamp(start, -1, n - 1), clamp(stop, -1, n - 1)
    out = []
    while i > j:
        out.append(i)
        i += step
    return out


bounds = st.one_of(st.integers(-6, 6), st.sampled_from([END, -END - 1]))


@st.composite
def slices(draw):
    shape = draw(shapes(max_rank=3, max_side=5))
    r = len(shape)
    starts = tuple(draw(st.lists(bounds, min_size=r, max_size=r)))
    stops = tuple(draw(st.lists(bounds, min_size=r, max_size=r)))
    steps = tuple(draw(st.lists(st.integers(-3, 3).filter(bool), min_size=r, max_size=r)))
    return shape, starts, stops, steps


@SETTINGS
@given(slices())
def test_slice_follows_python_rules(case):
    shape, starts, stops, steps = case
    x = arange(shape)
    (r,), types = run(gsl.SliceOp, [x], starts=starts, stops=stops, steps=steps)
    check_typed([r], types)
    picks = [python_slice(a, b, c, n) for a, b, c, n in zip(starts, stops, steps, shape)]
    assert r.shape == tuple(len(p) for p in picks)
    for idx in itertools.product(*map(range, r.shape)):
        assert r[idx] == x[tuple(p[i] for p, i in zip(picks, idx))]


def test_slice_dynamic_axis():
    x = arange((5, 6))
    (r,), types = run(gsl.SliceOp, [x], ["tensor<?x6xf32>"], starts=(-1, 1),
                      stops=(-END - 1, 5), steps=(-1, 2))
    assert str(types[0]) == "tensor<?x2xf32>"       # a reversed whole axis keeps its size
    assert r.shape == (5, 2) and r[0, 0] == x[4, 1] and r[4, 1] == x[0, 3]


# ----- broadcast_to and dim --------------------------------------------------------------------


@st.composite
def broadcasts(draw):
    """x's shape, a target shape it broadcasts to, and which target entries are -1."""
    target = draw(shapes(max_rank=4, max_side=3))
    k = draw(st.integers(0, len(target)))
    x_shape = tuple(1 if draw(st.booleans()) else d for d in target[len(target) - k:])
    dynamic = tuple(draw(st.booleans()) for _ in target)
    return x_shape, target, dynamic


@SETTINGS
@given(broadcasts())
def test_broadcast_to_repeats_size_one_axes(case):
    x_shape, target, dynamic = case
    x = arange(x_shape)
    sizes = [np.asarray(d, np.int64) for d, dyn in zip(target, dynamic) if dyn]
    shape = tuple(-1 if dyn else d for d, dyn in zip(target, dynamic))
    (r,), types = run(gs.BroadcastToOp, [x, *sizes],
                      [_type_of(x)] + ["tensor<i64>"] * len(sizes), shape=shape)
    check_typed([r], types)
    assert r.shape == target
    lead = len(target) - len(x_shape)
    for idx in itertools.product(*map(range, target)):
        src = tuple(0 if n == 1 else i for i, n in zip(idx[lead:], x_shape))
        assert r[idx] == x[src]


def test_dim_then_broadcast_to():
    text = """
    func.func @f(%x: tensor<?x3xf32>, %b: tensor<4xf32>) -> (tensor<i64>, tensor<?x4xf32>) {
      %n = graph.dim %x {axis = -2 : i64} : (tensor<?x3xf32>) -> tensor<i64>
      %r = graph.broadcast_to %b, %n {shape = array<i64: -1, 4>}
        : (tensor<4xf32>, tensor<i64>) -> tensor<?x4xf32>
      return %n, %r : tensor<i64>, tensor<?x4xf32>
    }"""
    m = parse_module(textwrap.dedent(text))
    m.verify()
    b = arange((4,))
    n, r = interpret(m, "f", np.zeros((7, 3), np.float32), b)
    assert n.shape == () and n.dtype == np.int64 and int(n) == 7
    assert r.shape == (7, 4) and r.dtype == np.float32 and (r == b[None, :]).all()


# ----- concat and split ------------------------------------------------------------------------


@st.composite
def concats(draw):
    base = list(draw(shapes(min_rank=1, max_rank=3, max_side=3)))
    axis = draw(st.integers(-len(base), len(base) - 1))
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    return base, axis, sizes


@SETTINGS
@given(concats())
def test_concat_places_inputs_at_running_offsets(case):
    base, axis, sizes = case
    ax = axis % len(base)
    xs = []
    for k, n in enumerate(sizes):
        shape = base[:ax] + [n] + base[ax + 1:]
        xs.append(arange(shape) + 100 * k)
    (r,), types = run(gsl.ConcatOp, xs, axis=axis)
    check_typed([r], types)
    assert r.shape == tuple(base[:ax] + [sum(sizes)] + base[ax + 1:])
    offset = 0
    for x, n in zip(xs, sizes):
        for idx in itertools.product(*map(range, x.shape)):
            at = idx[:ax] + (idx[ax] + offset,) + idx[ax + 1:]
            assert r[at] == x[idx]
        offset += n


@SETTINGS
@given(shapes(min_rank=1, max_rank=3, max_side=3), st.integers(1, 4), st.data())
def test_split_cuts_equal_consecutive_parts(shape, sections, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    shape = shape[:ax] + (shape[ax] * sections,) + shape[ax + 1:]
    x = arange(shape)
    outs, types = run(gsl.SplitOp, [x], axis=axis, sections=sections)
    check_typed(outs, types)
    assert len(outs) == sections
    part = shape[ax] // sections
    for k, r in enumerate(outs):
        assert r.shape == shape[:ax] + (part,) + shape[ax + 1:]
        for idx in itertools.product(*map(range, r.shape)):
            at = idx[:ax] + (idx[ax] + k * part,) + idx[ax + 1:]
            assert r[idx] == x[at]


# ----- one_hot and gather ----------------------------------------------------------------------


@SETTINGS
@given(shapes(max_rank=3, max_side=3), st.integers(0, 5), st.data())
def test_one_hot_marks_in_range_indices(shape, depth, data):
    idx = np.asarray(data.draw(st.lists(st.integers(-2, 6), min_size=int(np.prod(shape)),
                                        max_size=int(np.prod(shape)))), np.int64).reshape(shape)
    (r,), types = run(gi.OneHotOp, [idx], depth=depth)
    check_typed([r], types)
    assert r.shape == shape + (depth,)
    for at in itertools.product(*map(range, shape)):
        for k in range(depth):
            assert r[at + (k,)] == (1.0 if idx[at] == k else 0.0)


@SETTINGS
@given(shapes(min_rank=1, max_rank=3, min_side=1, max_side=3), shapes(max_rank=2, max_side=3),
       st.sampled_from([np.int32, np.int64]), st.data())
def test_gather_picks_rows(table_shape, idx_shape, dtype, data):
    table = arange(table_shape)
    n = table_shape[0]
    count = int(np.prod(idx_shape))
    idx = np.asarray(data.draw(st.lists(st.integers(-n, n - 1), min_size=count,
                                        max_size=count)), dtype).reshape(idx_shape)
    (r,), types = run(gi.GatherOp, [table, idx])
    check_typed([r], types)
    assert r.shape == idx_shape + table_shape[1:]
    for at in itertools.product(*map(range, idx_shape)):
        row = int(idx[at]) % n
        assert (r[at] == table[row]).all()


# ----- shape functions with DSL symbols --------------------------------------------------------


def spec(*dims, dtype=F32) -> TensorSpec:
    return TensorSpec(tuple(dims), dtype)


def shape_of(cls, *args, **props) -> tuple:
    full = {pd.name: pd.to_py(pd.default) for pd in cls.spec.props if pd.optional}
    full.update(props)
    return tuple(s.shape for s in cls.infer(list(args), full))


@pytest.mark.parametrize("x,target,want", [
    (("N", 28, 28), (-1, 784), ("N", 784)),
    (("N", 784), (-1, 28, 28), ("N", 28, 28)),
    (("N", 4), ("N", -1), ("N", 4)),
    (("N", 2, 3), (6, -1), (6, "N")),
    (("N", 3), (-1, 2), (None, 2)),                 # N*3/2 is no single dim
    (("N", "M"), (-1,), (None,)),
    ((None, 3), (-1, 3), (None, 3)),
    (("N", 6), (-1, "N"), (6, "N")),
    ((2, 3), (-1,), (6,)),
])
def test_reshape_symbolic(x, target, want):
    assert shape_of(gs.ReshapeOp, spec(*x), shape=target) == (want,)


@pytest.mark.parametrize("x,target,message", [
    (("N", 3), ("N", 4), "cannot reshape f32[N, 3] into [N, 4]: 3*N elements, not 4*N"),
    ((3, 5), (4, 4), "cannot reshape f32[3, 5] into [4, 4]: 15 elements, not 16"),
    ((3, 5), (-1, -1), "shape [-1, -1] has more than one -1"),
    ((0, 5), (-1, 0), "cannot infer the -1 of [-1, 0]: the other sizes multiply to 0"),
])
def test_reshape_errors(x, target, message):
    with pytest.raises(ShapeError, match=message.replace("[", r"\[").replace("*", r"\*")):
        shape_of(gs.ReshapeOp, spec(*x), shape=target)


def test_symbols_flow_through_transpose_concat_split_slice():
    assert shape_of(gs.TransposeOp, spec("N", 3)) == ((3, "N"),)
    assert shape_of(gsl.ConcatOp, spec("N", 3), spec("N", 5), axis=1) == (("N", 8),)
    assert shape_of(gsl.ConcatOp, spec("N", 3), spec(0, 3), axis=0) == (("N", 3),)
    assert shape_of(gsl.ConcatOp, spec("N", 3), spec("M", 3), axis=0) == ((None, 3),)
    assert shape_of(gsl.ConcatOp, spec(None, 3), spec("N", 3), axis=1) == (("N", 6),)
    assert shape_of(gsl.SplitOp, spec("N", 6), axis=1, sections=3) == (("N", 2),) * 3
    assert shape_of(gsl.SplitOp, spec("N", 6), sections=2) == ((None, 6),) * 2
    assert shape_of(gsl.SplitOp, spec("N", 6), sections=1) == (("N", 6),)
    whole, part = (0, END, 1), (1, END, 1)
    assert shape_of(gsl.SliceOp, spec("N", "N"), starts=(whole[0], part[0]),
                    stops=(END, END), steps=(1, 1)) == (("N", None),)
    assert shape_of(gsl.SliceOp, spec("N"), starts=(-1,), stops=(-END - 1,), steps=(-1,)) == \
        (("N",),)
    assert shape_of(gi.OneHotOp, spec("N", dtype=I64), depth=10) == (("N", 10),)
    assert shape_of(gi.GatherOp, spec("V", 64), spec("N", 16, dtype=I32)) == (("N", 16, 64),)
    assert shape_of(gs.DimOp, spec("N", 3), axis=0) == ((),)


def test_symbols_in_broadcast_to():
    n = spec(dtype=I64)
    # The DSL passes symbols in `shape`, with or without a size operand for each.
    assert shape_of(gs.BroadcastToOp, spec(10), shape=("N", 10)) == (("N", 10),)
    assert shape_of(gs.BroadcastToOp, spec(10), n, shape=("N", 10)) == (("N", 10),)
    # A -1 where x's axis is not 1 must be x's size.
    assert shape_of(gs.BroadcastToOp, spec("N", 1), n, n, shape=(-1, -1)) == (("N", None),)
    assert shape_of(gs.BroadcastToOp, spec(1, "N"), shape=(3, "N")) == ((3, "N"),)
    with pytest.raises(ShapeError, match=r"cannot broadcast f32\[N\] to \[10\]"):
        shape_of(gs.BroadcastToOp, spec("N"), shape=(10,))
    with pytest.raises(ShapeError, match="has 1 dynamic"):
        shape_of(gs.BroadcastToOp, spec(3), shape=(-1, 3))


def test_symbol_never_equals_a_number():
    with pytest.raises(ShapeError, match=r"cannot concatenate f32\[N, 3\] and f32\[10, 3\]"):
        shape_of(gsl.ConcatOp, spec("N", 3), spec(10, 3), axis=1)
    with pytest.raises(ShapeError, match="axis 1 is out of range for rank 1"):
        shape_of(gs.DimOp, spec("N"), axis=1)
    with pytest.raises(ShapeError, match="axis 0 is out of range for rank 0"):
        shape_of(gsl.SplitOp, spec(), sections=1)


# ----- canonicalization ------------------------------------------------------------------------


def _f32(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def canonicalized(text: str):
    m = parse_module(textwrap.dedent(text))
    m.verify()
    c = parse_module(textwrap.dedent(text))
    PassManager.parse("canonicalize").run(c)
    c.verify()
    return m, c


def count(m, name: str) -> int:
    return sum(1 for op in m.walk() if op.name == name)


@SETTINGS
@given(st.permutations(range(4)), st.permutations(range(4)))
def test_transpose_chain_composes(p, q):
    shape = (2, 3, 4, 5)
    mid = tuple(shape[i] for i in p)
    out = tuple(mid[i] for i in q)
    text = f"""
    func.func @f(%x: {_f32(shape)}) -> {_f32(out)} {{
      %0 = graph.transpose %x {{perm = array<i64: {", ".join(map(str, p))}>}}
        : ({_f32(shape)}) -> {_f32(mid)}
      %1 = graph.transpose %0 {{perm = array<i64: {", ".join(map(str, q))}>}}
        : ({_f32(mid)}) -> {_f32(out)}
      return %1 : {_f32(out)}
    }}"""
    m, c = canonicalized(text)
    x = arange(shape)
    want = interpret(m, "f", x)
    got = interpret(c, "f", x)
    assert got.shape == want.shape and (got == want).all()
    identity = [p[i] for i in q] == [0, 1, 2, 3]
    assert count(c, "graph.transpose") == (0 if identity else 1)


def test_folds_keep_results_and_remove_ops():
    text = """
    func.func @f(%x: tensor<?x6xf32>, %y: tensor<2x3xf32>)
        -> (tensor<?x2x3xf32>, tensor<?x6xf32>, tensor<2x3xf32>, tensor<i64>, tensor<4x2x3xf32>) {
      %0 = graph.reshape %x {shape = array<i64: -1, 3, 2>}
        : (tensor<?x6xf32>) -> tensor<?x3x2xf32>
      %1 = graph.reshape %0 {shape = array<i64: -1, 2, 3>}
        : (tensor<?x3x2xf32>) -> tensor<?x2x3xf32>
      %2 = graph.slice %x {starts = array<i64: 0, -6>, stops = array<i64: 9223372036854775807, 6>,
                           steps = array<i64: 1, 1>} : (tensor<?x6xf32>) -> tensor<?x6xf32>
      %3 = graph.concat %2 {axis = 0 : i64} : (tensor<?x6xf32>) -> tensor<?x6xf32>
      %4 = graph.split %y {axis = 1 : i64, sections = 1 : i64}
        : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %5 = graph.broadcast_to %4 {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %6 = graph.dim %5 {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<i64>
      %c = graph.constant dense<2.5> : tensor<3xf32>
      %7 = graph.broadcast_to %c {shape = array<i64: 4, 2, 3>}
        : (tensor<3xf32>) -> tensor<4x2x3xf32>
      return %1, %3, %5, %6, %7
        : tensor<?x2x3xf32>, tensor<?x6xf32>, tensor<2x3xf32>, tensor<i64>, tensor<4x2x3xf32>
    }"""
    m, c = canonicalized(text)
    x, y = arange((5, 6)), arange((2, 3)) * 7
    for a, b in zip(interpret(m, "f", x, y), interpret(c, "f", x, y)):
        assert a.shape == b.shape and a.dtype == b.dtype and (a == b).all()
    assert count(c, "graph.reshape") == 1
    for name in ("graph.slice", "graph.concat", "graph.split", "graph.broadcast_to",
                 "graph.dim"):
        assert count(c, name) == 0, print_op(c)


def test_fold_declines_out_of_range_gather():
    """A constant gather with a bad index is left for run time to report, not a crash of
    canonicalize."""
    text = """
    func.func @f() -> tensor<2xf32> {
      %t = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %i = graph.constant dense<[0, 5]> : tensor<2xi32>
      %r = graph.gather %t, %i : (tensor<3xf32>, tensor<2xi32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    }"""
    _, c = canonicalized(text)
    assert count(c, "graph.gather") == 1
