"""The memory dialect: buffers in the interpreter behave as numpy says they should.

- loop programs over memrefs with a dynamic dimension (sum, elementwise add, vectorized add)
  interpreted and compared with numpy;
- random subviews (hypothesis), also of subviews: the IR round-trips, and the interpreter's
  result is the numpy view that the inferred type describes (same elements, and the strides
  and offset of the type's layout), sharing memory with its source;
- an arena holding two typed views that do not overlap;
- every run-time error the reference interpreter must catch, named by op and index;
- effects: which ops are pure, what `effects_of` says, what LICM may hoist.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irkit.dialects.memory  # noqa: F401  (registers the dialect; dialects/__init__ lists it)
from irkit.dialects.memory import (
    ALLOCATE, FREE, READ, WRITE, DimOp, SubviewOp, effects_of, strides_and_offset, subview_type,
)
from irkit.interpreter import InterpreterError, interpret
from irkit.parser import parse_module, parse_type
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.rewrite import is_pure
from irkit.types import F32, INDEX, MemRefType


def module(text: str):
    m = parse_module(textwrap.dedent(text), allow_unregistered=True)
    m.verify()
    return m


def round_trips(m) -> None:
    custom = print_op(m)
    assert print_op(parse_module(custom, allow_unregistered=True)) == custom
    generic = print_op(m, generic=True)
    assert print_op(parse_module(generic, allow_unregistered=True), generic=True) == generic


def ops_of(m, name: str) -> list:
    return [op for op in m.walk() if op.name == name]


# ----- loop programs --------------------------------------------------------------------------

PROGRAMS = module("""
func.func @sum(%a: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memory.dim %a, 0 : memref<?xf32>
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memory.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    loop.yield %s : f32
  }
  return %r : f32
}

func.func @add(%a: memref<?x4xf32>, %b: memref<?x4xf32>, %c: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x4xf32>
  %m = memory.dim %a, 1 : memref<?x4xf32>
  loop.for %i = %c0 to %n step %c1 {
    loop.for %j = %c0 to %m step %c1 {
      %x = memory.load %a[%i, %j] : memref<?x4xf32>
      %y = memory.load %b[%i, %j] : memref<?x4xf32>
      %z = arith.addf %x, %y : f32
      memory.store %z, %c[%i, %j] : memref<?x4xf32>
    }
  }
  return
}

// The same in place, eight lanes at a time, through a temporary buffer.
func.func @add_vectors(%a: memref<?x8xf32>, %b: memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x8xf32>
  %t = memory.alloc(%n) : memref<?x8xf32>
  loop.for %i = %c0 to %n step %c1 {
    %x = memory.vector_load %a[%i, %c0] : memref<?x8xf32>, vector<8xf32>
    %y = memory.vector_load %b[%i, %c0] : memref<?x8xf32>, vector<8xf32>
    %z = arith.addf %x, %y : vector<8xf32>
    memory.vector_store %z, %t[%i, %c0] : memref<?x8xf32>, vector<8xf32>
  }
  memory.copy %t, %a : memref<?x8xf32> to memref<?x8xf32>
  memory.dealloc %t : memref<?x8xf32>
  return
}
""")


def test_programs_round_trip():
    round_trips(PROGRAMS)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, width=32), max_size=12))
def test_sum_matches_numpy(xs):
    a = np.array(xs, dtype=np.float32)
    want = np.float32(0)
    for x in a:                             # the program's order, in f32
        want = np.float32(want + x)
    got = interpret(PROGRAMS, "sum", a)
    assert isinstance(got, np.float32) and got == want


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 6), st.integers(0, 2**32 - 1))
def test_elementwise_add_matches_numpy(n, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((n, 4)).astype(np.float32) for _ in range(2))
    c = np.full((n, 4), -7, np.float32)
    assert interpret(PROGRAMS, "add", a, b, c) is None
    np.testing.assert_array_equal(c, a + b)     # stored into the caller's array


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 5), st.integers(0, 2**32 - 1))
def test_vectorized_add_matches_numpy(n, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((n, 8)).astype(np.float32) for _ in range(2))
    want = a + b
    interpret(PROGRAMS, "add_vectors", a, b)
    np.testing.assert_array_equal(a, want)


# ----- subviews (hypothesis) --------------------------------------------------------------------


@st.composite
def windows(draw, shape):
    """Static (offsets, sizes, strides) of an in-bounds window of `shape`."""
    offsets, sizes, strides = [], [], []
    for d in shape:
        k = draw(st.integers(0, 3))
        o = draw(st.integers(0, d))
        if o == d:
            n = 0
        elif k == 0:
            n = draw(st.integers(0, 3))
        else:
            n = draw(st.integers(0, (d - 1 - o) // k + 1))
        offsets.append(o)
        sizes.append(n)
        strides.append(k)
    return offsets, sizes, strides


@st.composite
def subview_cases(draw):
    """A source shape, which of its sizes are `?`, and one or two nested windows, each entry
    static or dynamic."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    dyn_src = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
    first = draw(windows(shape))
    levels = [first]
    if draw(st.booleans()):
        levels.append(draw(windows(first[1])))
    dynamic = [[draw(st.lists(st.booleans(), min_size=rank, max_size=rank)) for _ in range(3)]
               for _ in levels]
    return shape, dyn_src, levels, dynamic


def _subview_program(shape, dyn_src, levels, dynamic):
    """The function text, the dynamic arguments in order, and the result types."""
    src_t = MemRefType([None if d else n for n, d in zip(shape, dyn_src)], F32)
    args, values, lines, types = [], [], [], []
    cur, cur_t = "%m", src_t
    for lvl, (window, flags) in enumerate(zip(levels, dynamic)):
        entries, static = [], []
        for g, (vals, dyn) in enumerate(zip(window, flags)):
            texts, st_vals = [], []
            for i, (v, is_dyn) in enumerate(zip(vals, dyn)):
                if is_dyn:
                    name = f"%a{lvl}_{g}_{i}"
                    args.append(f"{name}: index")
                    values.append(v)
                    texts.append(name)
                    st_vals.append(None)
                else:
                    texts.append(str(v))
                    st_vals.append(v)
            entries.append("[" + ", ".join(texts) + "]")
            static.append(st_vals)
        res_t = subview_type(cur_t, *static)
        lines.append(f"  %s{lvl} = memory.subview {cur}{' '.join(entries)} : {cur_t} to {res_t}")
        types.append(res_t)
        cur, cur_t = f"%s{lvl}", res_t
    results = ", ".join(f"%s{i}" for i in range(len(levels)))
    text = (f"func.func @f(%m: {src_t}{''.join(', ' + a for a in args)}) -> "
            f"({', '.join(map(str, types))}) {{\n" + "\n".join(lines) +
            f"\n  return {results} : {', '.join(map(str, types))}\n}}\n")
    return text, values, types


def _numpy_window(a, offsets, sizes, strides):
    """The window by index arithmetic, independent of the interpreter's slicing."""
    out = np.empty(sizes, a.dtype)
    for idx in np.ndindex(*sizes):
        out[idx] = a[tuple(o + i * k for o, i, k in zip(offsets, idx, strides))]
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subview_cases())
def test_random_subviews_are_numpy_views(case):
    shape, dyn_src, levels, dynamic = case
    text, values, types = _subview_program(shape, dyn_src, levels, dynamic)
    m = module(text)
    round_trips(m)
    base = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    out = interpret(m, "f", base, *values)
    out = out if isinstance(out, tuple) else (out,)
    expect = base
    for view, t, window in zip(out, types, levels):
        expect = _numpy_window(expect, *window)
        np.testing.assert_array_equal(view, expect)
        # The layout the type states is the one the array has.
        strides, offset = strides_and_offset(t)
        for i, (s, n) in enumerate(zip(strides, view.shape)):
            if s is not None and n > 1:
                assert view.strides[i] == s * 4, (t, view.strides)
        if offset is not None and view.size:
            assert view.ctypes.data - base.ctypes.data == offset * 4, t
        # A view, not a copy: a write through it is seen in the base.
        if view.size and view.flags.writeable:
            assert np.shares_memory(view, base)


# ----- collapses (hypothesis) -------------------------------------------------------------------


@st.composite
def collapse_cases(draw):
    """A shape (rank 1-4, some sizes `?`), the rows of a bigger buffer it is a window of
    (from row `start`, every `step`-th: strided where either is not 1), the places where
    the collapse's groups may end (it must also end wherever the window's type does not
    show two dims contiguous), and a flat index."""
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    dynamic = draw(st.lists(st.sampled_from([False] * 3 + [True]), min_size=rank,
                            max_size=rank))
    start, step = draw(st.integers(0, 2)), draw(st.sampled_from([1, 1, 2]))
    cuts = draw(st.sets(st.integers(1, rank - 1), max_size=1)) if rank > 1 else set()
    flat = draw(st.integers(0, int(np.prod(shape)) - 1))
    return shape, dynamic, start, step, cuts, flat


def test_collapse_result_types():
    """The types a collapse infers: the identity stays the identity; a strided source keeps
    its offset and each group's innermost stride."""
    from irkit.dialects.memory import collapsed_layout, collapsed_shape
    t = parse_type("memref<2x?x3x4xf32, strided<[?, 12, 4, 1], offset: 7>>")
    assert collapsed_shape(t.shape, [[0], [1, 2, 3]]) == [2, None]
    layout, ok = collapsed_layout(t, [[0], [1, 2, 3]])
    assert ok and str(layout) == "strided<[?, 1], offset: 7>"
    assert not collapsed_layout(t, [[0, 1], [2, 3]])[1]        # ? != 12 * ?: not provable
    assert collapsed_layout(parse_type("memref<4x5xf32>"), [[0, 1]]) == (None, True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collapse_cases())
def test_random_collapses_are_row_major_views(case):
    """A collapse of a window of rows of a buffer, read and written at the point of its
    shape that row-major order numbers `flat`, and measured: the IR round-trips, the
    element is the window's at that number, the collapsed sizes are the groups' products,
    and the compiled function does what the interpreter does."""
    from irkit.backends.llvm_cpu import compile_module
    from irkit.dialects.memory import collapsed_layout, collapsed_shape
    shape, dynamic, start, step, cuts, flat = case
    rank = len(shape)
    rows = start + (shape[0] - 1) * step + 1
    big_t = MemRefType([rows] + [None if d else n for n, d in zip(shape[1:], dynamic[1:])], F32)
    window_t = subview_type(big_t, [start] + [0] * (rank - 1),
                            [None if d else n for n, d in zip(shape, dynamic)],
                            [step] + [1] * (rank - 1))
    strides, _ = strides_and_offset(window_t)
    cuts |= {d for d in range(1, rank) if None in (strides[d - 1], strides[d], window_t.shape[d])
             or strides[d - 1] != strides[d] * window_t.shape[d]}
    bounds = [0] + sorted(cuts) + [rank]
    groups = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
    layout, contiguous = collapsed_layout(window_t, groups)
    assert contiguous
    res_t = MemRefType(collapsed_shape(window_t.shape, groups), F32, layout)
    sizes = ", ".join(f"%n{d}" if dyn else str(n) for d, (n, dyn) in enumerate(zip(shape,
                                                                                  dynamic)))
    at = ", ".join(f"%i{g}" for g in range(len(groups)))
    m = module(f"""
    func.func @f(%m: {big_t}{"".join(f", %n{d}: index" for d in range(rank) if dynamic[d])},
                 {", ".join(f"%i{g}: index" for g in range(len(groups)))}, %x: f32)
        -> (f32, index) {{
      %w = memory.subview %m[{", ".join([str(start)] + ["0"] * (rank - 1))}] [{sizes}]
          [{", ".join([str(step)] + ["1"] * (rank - 1))}] : {big_t} to {window_t}
      %c = memory.collapse_shape %w {groups} : {window_t} into {res_t}
      %old = memory.load %c[{at}] : {res_t}
      memory.store %x, %c[{at}] : {res_t}
      %size = memory.dim %c, {len(groups) - 1} : {res_t}
      return %old, %size : f32, index
    }}""")
    round_trips(m)
    collapsed = [int(np.prod([shape[d] for d in g])) for g in groups]
    at = [int(j) for j in np.unravel_index(flat, collapsed)]
    point = tuple(int(j) for j in np.unravel_index(flat, shape))
    base = np.arange(rows * int(np.prod(shape[1:])), dtype=np.float32).reshape(
        [rows] + shape[1:])
    want = base.copy()
    window = want[start::step]
    expect = window[point]
    window[point] = -1.0
    args = [n for n, d in zip(shape, dynamic) if d] + at + [np.float32(-1.0)]
    for run in (lambda a: interpret(m, "f", a, *args),
                lambda a: compile_module(m, 2).f(a, *args)):
        got = base.copy()
        assert run(got) == (expect, collapsed[-1])
        np.testing.assert_array_equal(got, want)


def test_store_through_subview_is_seen_in_base():
    m = module("""
    func.func @f(%m: memref<4x6xf32>, %x: f32, %i: index) {
      %c0 = arith.constant 0 : index
      %s = memory.subview %m[1, %i] [2, 2] [2, 3]
          : memref<4x6xf32> to memref<2x2xf32, strided<[12, 3], offset: ?>>
      %c1 = arith.constant 1 : index
      memory.store %x, %s[%c1, %c1] : memref<2x2xf32, strided<[12, 3], offset: ?>>
      return
    }
    """)
    base = np.zeros((4, 6), np.float32)
    interpret(m, "f", base, 5.0, 2)
    want = np.zeros((4, 6), np.float32)
    want[1 + 2, 2 + 3] = 5.0
    np.testing.assert_array_equal(base, want)


def test_zero_stride_subview_repeats_an_element():
    m = module("""
    func.func @f(%m: memref<2x3xf32>) -> memref<2x4xf32, strided<[3, 0], offset: 1>> {
      %s = memory.subview %m[0, 1] [2, 4] [1, 0]
          : memref<2x3xf32> to memref<2x4xf32, strided<[3, 0], offset: 1>>
      return %s : memref<2x4xf32, strided<[3, 0], offset: 1>>
    }
    """)
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(interpret(m, "f", base), [[1] * 4, [4] * 4])


def test_subview_create_infers_the_type():
    m = module("""
    func.func @f(%m: memref<?x8xf32>, %i: index) {
      "test.use"(%m, %i) : (memref<?x8xf32>, index) -> ()
      return
    }
    """)
    use = ops_of(m, "test.use")[0]
    src, i = use.operands
    op = SubviewOp.create(src, [i, 2], [3, 4], [1, 2])
    assert str(op.result.type) == "memref<3x4xf32, strided<[8, 2], offset: ?>>"
    assert [getattr(v, "value", v) for v in op.mixed_offsets()] == [i, 2]
    assert len(op.offsets) == 1 and not op.sizes and not op.strides
    d = DimOp.create(src, 1)
    assert d.result.type is INDEX and d.fold([None]) is not None


def test_strides_and_offset_of_layouts():
    assert strides_and_offset(parse_type("memref<2x?x4xf32>")) == ((None, 4, 1), 0)
    assert strides_and_offset(parse_type("memref<?x4xf32, strided<[8, 1], offset: ?>>")) == \
        ((8, 1), None)
    assert strides_and_offset(parse_type("memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>")) \
        is None


# ----- arena ----------------------------------------------------------------------------------

ARENA = module("""
// Two temporaries in one arena: %n f32 at byte 0 and %k f64 at byte %off; each is filled with
// a pattern, and both are returned so the test can look at where they live.
func.func @arena(%bytes: index, %n: index, %off: index, %k: index)
    -> (memref<?xf32>, memref<?xf64>, memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memory.arena(%bytes) : memref<?xi8>
  %v0 = memory.view %a[%c0][%n] : memref<?xi8> to memref<?xf32>
  %v1 = memory.view %a[%off][%k] : memref<?xi8> to memref<?xf64>
  loop.for %i = %c0 to %n step %c1 {
    %ii = arith.index_cast %i : index to i64
    %x = arith.sitofp %ii : i64 to f32
    memory.store %x, %v0[%i] : memref<?xf32>
  }
  loop.for %i = %c0 to %k step %c1 {
    %ii = arith.index_cast %i : index to i64
    %x = arith.sitofp %ii : i64 to f64
    %y = arith.negf %x : f64
    memory.store %y, %v1[%i] : memref<?xf64>
  }
  return %v0, %v1, %a : memref<?xf32>, memref<?xf64>, memref<?xi8>
}
""")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 3))
def test_arena_views_do_not_overlap(n, k, gap):
    off = -(-4 * n // 64) * 64 + 64 * gap           # the next 64-byte boundary, and more
    v0, v1, arena = interpret(ARENA, "arena", off + 8 * k, n, off, k)
    np.testing.assert_array_equal(v0, np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(v1, -np.arange(k, dtype=np.float64))
    assert not np.shares_memory(v0, v1)
    assert arena.size == 0 or arena.ctypes.data % 64 == 0      # the arena is 64-byte aligned
    if k:
        assert v1.ctypes.data - arena.ctypes.data == off
        assert np.shares_memory(v1, arena)
    if n:
        assert v0.ctypes.data == arena.ctypes.data


# ----- run-time errors ------------------------------------------------------------------------

ERRORS = module("""
func.func @load(%m: memref<?x4xf32>, %i: index, %j: index) -> f32 {
  %x = memory.load %m[%i, %j] : memref<?x4xf32>
  return %x : f32
}
func.func @store(%m: memref<?x4xf32>, %x: f32, %i: index, %j: index) {
  memory.store %x, %m[%i, %j] : memref<?x4xf32>
  return
}
func.func @vload(%m: memref<?x8xf32>, %i: index, %j: index) -> vector<4xf32> {
  %v = memory.vector_load %m[%i, %j] : memref<?x8xf32>, vector<4xf32>
  return %v : vector<4xf32>
}
func.func @vstore_strided(%m: memref<?x8xf32>, %k: index, %v: vector<2xf32>) {
  %c0 = arith.constant 0 : index
  %s = memory.subview %m[0, 0] [1, 2] [1, %k] : memref<?x8xf32> to memref<1x2xf32, strided<[8, ?]>>
  memory.vector_store %v, %s[%c0, %c0] : memref<1x2xf32, strided<[8, ?]>>, vector<2xf32>
  return
}
func.func @view(%a: memref<?xi8>, %off: index, %n: index) -> memref<?xf32> {
  %v = memory.view %a[%off][%n] : memref<?xi8> to memref<?xf32>
  return %v : memref<?xf32>
}
func.func @subview(%m: memref<?xf32>, %o: index, %n: index, %k: index)
    -> memref<?xf32, strided<[?], offset: ?>> {
  %s = memory.subview %m[%o] [%n] [%k] : memref<?xf32> to memref<?xf32, strided<[?], offset: ?>>
  return %s : memref<?xf32, strided<[?], offset: ?>>
}
func.func @use_after_free(%i: index) -> f32 {
  %a = memory.alloc() : memref<4xf32>
  %s = memory.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  memory.dealloc %a : memref<4xf32>
  %x = memory.load %s[%i] : memref<2xf32, strided<[1], offset: 1>>
  return %x : f32
}
func.func @double_free() {
  %a = memory.arena() : memref<64xi8>
  memory.dealloc %a : memref<64xi8>
  memory.dealloc %a : memref<64xi8>
  return
}
func.func @free_argument(%m: memref<4xf32>) {
  memory.dealloc %m : memref<4xf32>
  return
}
func.func @free_view() {
  %a = memory.alloc() : memref<4xf32>
  %s = memory.subview %a[0] [4] [1] : memref<4xf32> to memref<4xf32>
  memory.dealloc %s : memref<4xf32>
  return
}
func.func @alloc(%n: index) -> memref<?xf32> {
  %a = memory.alloc(%n) : memref<?xf32>
  return %a : memref<?xf32>
}
func.func @copy(%a: memref<?xf32>, %b: memref<?xf32>) {
  memory.copy %a, %b : memref<?xf32> to memref<?xf32>
  return
}
func.func @overlapping_copy(%m: memref<8xf32>) {
  %a = memory.subview %m[0] [4] [1] : memref<8xf32> to memref<4xf32>
  %b = memory.subview %m[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  memory.copy %a, %b : memref<4xf32> to memref<4xf32, strided<[1], offset: 2>>
  return
}
""")


def _error(fn: str, *args) -> str:
    with pytest.raises(InterpreterError) as e:
        interpret(ERRORS, fn, *args)
    return e.value.render()


@pytest.mark.parametrize("i,j", [(3, 0), (0, 4), (-1, 0), (0, -1)])
def test_out_of_bounds_load_and_store(i, j):
    m = np.zeros((3, 4), np.float32)
    msg = _error("load", m, i, j)
    assert f"'memory.load' index [{i}, {j}] is out of bounds for a memref of shape [3, 4]" in msg
    msg = _error("store", m, 1.0, i, j)
    assert f"'memory.store' index [{i}, {j}] is out of bounds" in msg
    assert not m.any()


def test_in_bounds_load_and_store():
    m = np.zeros((3, 4), np.float32)
    interpret(ERRORS, "store", m, 2.5, 2, 3)
    assert interpret(ERRORS, "load", m, 2, 3) == np.float32(2.5)


def test_vector_access_past_the_last_dimension():
    m = np.arange(16, dtype=np.float32).reshape(2, 8)
    np.testing.assert_array_equal(interpret(ERRORS, "vload", m, 1, 4), [12, 13, 14, 15])
    assert "'memory.vector_load' index [1, 5] with 4 elements is out of bounds" in \
        _error("vload", m, 1, 5)
    assert "'memory.vector_load' index [2, 0] with 4 elements is out of bounds" in \
        _error("vload", m, 2, 0)


def test_vector_store_needs_unit_stride():
    m = np.zeros((1, 8), np.float32)
    interpret(ERRORS, "vstore_strided", m, 1, np.array([1, 2], np.float32))
    np.testing.assert_array_equal(m[0, :2], [1, 2])
    assert "needs a unit stride in the last dimension, got 3" in \
        _error("vstore_strided", m, 3, np.array([1, 2], np.float32))


def test_view_bounds_and_alignment():
    a = np.zeros(64, np.int8)
    assert interpret(ERRORS, "view", a, 16, 12).shape == (12,)
    assert "'memory.view' byte offset 6 is misaligned for f32" in _error("view", a, 6, 2)
    assert "out of bounds of a 64-byte buffer" in _error("view", a, 16, 13)
    assert "out of bounds" in _error("view", a, -4, 1)


def test_subview_bounds_at_run_time():
    m = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(interpret(ERRORS, "subview", m, 1, 3, 3), [1, 4, 7])
    assert "'memory.subview' window offsets [1] sizes [4] strides [3] is out of bounds" in \
        _error("subview", m, 1, 4, 3)
    assert "out of bounds" in _error("subview", m, 9, 0, 1)
    assert "out of bounds" in _error("subview", m, 0, 2, -1)


def test_use_after_free_and_double_free():
    assert "'memory.load' uses a buffer after it was deallocated" in _error("use_after_free", 0)
    assert "'memory.dealloc' frees a buffer that was already deallocated" in \
        _error("double_free")


def test_dealloc_only_what_alloc_made():
    assert "expects a buffer made by memory.alloc or memory.arena" in \
        _error("free_argument", np.zeros(4, np.float32))
    assert "expects a buffer made by memory.alloc or memory.arena" in _error("free_view")


def test_fresh_memory_is_poisoned_and_sizes_checked():
    a = interpret(ERRORS, "alloc", 3)
    assert a.shape == (3,) and np.isnan(a).all()
    assert "cannot allocate a negative size [-1]" in _error("alloc", -1)


def test_copy_checks_shapes_and_overlap():
    a, b = np.arange(3, dtype=np.float32), np.zeros(3, np.float32)
    interpret(ERRORS, "copy", a, b)
    np.testing.assert_array_equal(b, a)
    assert "'memory.copy' source shape [3] differs from the target shape [4]" in \
        _error("copy", a, np.zeros(4, np.float32))
    interpret(ERRORS, "copy", a, a)                  # the very same buffer: nothing to do
    assert "'memory.copy' source and target overlap" in \
        _error("overlapping_copy", np.zeros(8, np.float32))


def test_memref_arguments_are_passed_by_reference():
    with pytest.raises(ValueError, match="expected an array of float32"):
        interpret(ERRORS, "load", np.zeros((3, 4), np.float64), 0, 0)
    with pytest.raises(ValueError, match="passed by reference"):
        interpret(ERRORS, "load", [[1.0] * 4], 0, 0)
    with pytest.raises(ValueError, match=r"expected shape \[\?x4\]"):
        interpret(ERRORS, "load", np.zeros((3, 5), np.float32), 0, 0)
    with pytest.raises(ValueError, match="C-contiguous"):
        interpret(ERRORS, "load", np.zeros((4, 8), np.float32)[:, ::2], 0, 0)
    read_only = np.ones((1, 4), np.float32)
    read_only.flags.writeable = False
    assert interpret(ERRORS, "load", read_only, 0, 0) == 1
    assert "writes to a read-only buffer" in _error("store", read_only, 1.0, 0, 0)


# ----- effects --------------------------------------------------------------------------------


def test_effects_and_purity():
    m = module("""
    func.func @f(%m: memref<?x8xf32>, %i: index, %x: f32, %n: index) {
      %a = memory.alloc(%n) : memref<?x8xf32>
      %b = memory.arena(%n) : memref<?xi8>
      %v = memory.view %b[%i][%n] : memref<?xi8> to memref<?xf32>
      %s = memory.subview %m[0, 0] [2, 2] [1, 1]
          : memref<?x8xf32> to memref<2x2xf32, strided<[8, 1]>>
      %d = memory.dim %m, 0 : memref<?x8xf32>
      %y = memory.load %m[%i, %i] : memref<?x8xf32>
      memory.store %x, %a[%i, %i] : memref<?x8xf32>
      memory.copy %m, %a : memref<?x8xf32> to memref<?x8xf32>
      %c1 = arith.constant 1 : index
      loop.for %j = %i to %n step %c1 {
        memory.store %x, %m[%j, %j] : memref<?x8xf32>
      }
      memory.dealloc %a : memref<?x8xf32>
      memory.dealloc %b : memref<?xi8>
      "test.opaque"() : () -> ()
      return
    }
    """)
    fn = ops_of(m, "func.func")[0]
    ops = {}
    for op in fn.regions[0].blocks[0].ops:
        ops.setdefault(op.name, []).append(op)
    pure = {"memory.view", "memory.subview", "memory.dim"}
    for name, found in ops.items():
        if name.startswith("memory."):
            assert is_pure(found[0]) == (name in pure), name
    alloc, arena = ops["memory.alloc"][0], ops["memory.arena"][0]
    assert effects_of(alloc) == [(ALLOCATE, alloc.results[0])]
    assert effects_of(arena) == [(ALLOCATE, arena.results[0])]
    assert effects_of(ops["memory.load"][0]) == [(READ, fn.regions[0].blocks[0].args[0])]
    copy = ops["memory.copy"][0]
    assert effects_of(copy) == [(READ, copy.source), (WRITE, copy.target)]
    assert effects_of(ops["memory.dealloc"][0]) == [(FREE, alloc.results[0])]
    assert effects_of(ops["memory.view"][0]) == []
    loop = ops["loop.for"][0]
    assert effects_of(loop) == [(WRITE, fn.regions[0].blocks[0].args[0])]
    assert effects_of(ops["test.opaque"][0]) is None


def test_licm_hoists_only_what_cannot_trap():
    """dim and a static in-bounds subview leave the loop; a subview with dynamic offsets may
    be out of bounds where the loop would not have run it, so it stays, as do loads."""
    m = module("""
    func.func @f(%m: memref<8x8xf32>, %lb: index, %ub: index, %o: index) -> f32 {
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0.0 : f32
      %r = loop.for %i = %lb to %ub step %c1 iter_args(%acc = %zero) -> (f32) {
        %d = memory.dim %m, 0 : memref<8x8xf32>
        %s = memory.subview %m[1, 1] [2, 2] [1, 1]
            : memref<8x8xf32> to memref<2x2xf32, strided<[8, 1], offset: 9>>
        %t = memory.subview %m[%o, 0] [2, 2] [1, 1]
            : memref<8x8xf32> to memref<2x2xf32, strided<[8, 1], offset: ?>>
        %x = memory.load %t[%c1, %c1] : memref<2x2xf32, strided<[8, 1], offset: ?>>
        %y = memory.load %s[%c1, %c1] : memref<2x2xf32, strided<[8, 1], offset: 9>>
        %z = arith.addf %x, %y : f32
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %w = arith.addf %z, %df : f32
        %n = arith.addf %acc, %w : f32
        loop.yield %n : f32
      }
      return %r : f32
    }
    """)
    base = np.arange(64, dtype=np.float32).reshape(8, 8)
    before = interpret(m, "f", base, 0, 3, 2)
    PassManager.parse("builtin.module(func.func(loop-invariant-code-motion))").run(m)
    m.verify()
    loop = ops_of(m, "loop.for")[0]
    inside = {op.name for op in loop.walk() if op is not loop}
    assert "memory.dim" not in inside
    assert [op for op in ops_of(m, "memory.subview") if loop.is_ancestor_of(op)] == \
        [op for op in ops_of(m, "memory.subview") if op.offsets]
    assert "memory.load" in inside
    assert interpret(m, "f", base, 0, 3, 2) == before
    # The loop that does not run must not trap on the dynamic subview.
    assert interpret(m, "f", base, 0, 0, 100) == 0


def test_address_is_the_first_elements_in_both_engines():
    """`memory.address` of a buffer is the address of its first element: numpy's data
    pointer of the array (or view) passed, in the interpreter and in compiled code (the
    descriptor's aligned pointer plus its offset)."""
    pytest.importorskip("llvmlite")
    from irkit.backends.llvm_cpu import compile_module
    m = module("""
    func.func @f(%m: memref<?x4xf32, strided<[4, 1], offset: ?>>, %out: memref<1xindex>) {
      %c0 = arith.constant 0 : index
      %a = memory.address %m : memref<?x4xf32, strided<[4, 1], offset: ?>>
      memory.store %a, %out[%c0] : memref<1xindex>
      return
    }""")
    f = compile_module(m).functions["f"]
    base = np.zeros((5, 4), np.float32)
    for view in (base, base[1:], base[3:]):
        for run in (lambda out: interpret(m, "f", view, out), lambda out: f(view, out)):
            out = np.zeros(1, np.int64)
            run(out)
            assert out[0] == view.ctypes.data
