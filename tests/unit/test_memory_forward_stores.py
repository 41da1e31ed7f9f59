"""memory-forward-stores keeps every program's results: random straight-line blocks of
scalar and vector loads and stores to two allocations, a function argument and a view that
overlaps one of the allocations, at constant and run-time indices, give the same loaded
values and the same final buffers interpreted before and after the pass (hypothesis); and
on the model that motivated it, the pass removes the reloads and the compiled step still
equals the interpreter's."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager

#: (name, type, columns): the buffers a random block touches; `v` is columns [2, 6) of `a`
BUFFERS = (("a", "memref<4x8xf32>", 8), ("b", "memref<4x8xf32>", 8),
           ("m", "memref<4x8xf32>", 8), ("v", "memref<4x4xf32, strided<[8, 1], offset: 2>>", 4))


def _index(draw, limit: int, consts: dict) -> str:
    """An index below `limit`: a constant (at most 3), or the run-time `%i` (0-3) or `%j`
    (0-1)."""
    choice = draw(st.sampled_from(["const", "const", "i", "j"]))
    if choice == "i" and limit >= 4:
        return "%i"
    if choice == "j" and limit >= 2:
        return "%j"
    c = draw(st.integers(0, min(limit, 4) - 1))
    consts[c] = f"%c{c}"
    return consts[c]


@st.composite
def blocks(draw):
    """(function text, number of results): a random block of accesses, each at one of a
    few places drawn first, so that accesses meet, overlap and alias often."""
    consts: dict[int, str] = {}
    places = []
    for _ in range(draw(st.integers(1, 4))):
        name, t, cols = draw(st.sampled_from(BUFFERS))
        width = draw(st.sampled_from([1, 2, 4]))
        places.append((name, t, width, _index(draw, 2, consts),
                       _index(draw, cols - width + 1, consts)))
    body, results, types = [], [], []
    for n in range(draw(st.integers(1, 12))):
        name, t, width, row, col = draw(st.sampled_from(places))
        vt = f"vector<{width}xf32>"
        if draw(st.booleans()):                     # a store of an argument's value
            if width == 1:
                body.append(f"memory.store %x{draw(st.integers(0, 2))}, %{name}[{row}, {col}] "
                            f": {t}")
            else:
                body.append(f"memory.vector_store %w{width}, %{name}[{row}, {col}] : {t}, {vt}")
        elif width == 1:
            body.append(f"%r{n} = memory.load %{name}[{row}, {col}] : {t}")
            results.append(f"%r{n}")
            types.append("f32")
        else:
            body.append(f"%r{n} = memory.vector_load %{name}[{row}, {col}] : {t}, {vt}")
            results.append(f"%r{n}")
            types.append(vt)
    consts.update({0: "%c0"})
    lines = [f"{v} = arith.constant {c} : index" for c, v in sorted(consts.items())]
    text = "\n    ".join(lines + body)
    return f"""
func.func @f(%m: memref<4x8xf32>, %oa: memref<4x8xf32>, %ob: memref<4x8xf32>, %i: index,
             %j: index, %x0: f32, %x1: f32, %x2: f32, %w2: vector<2xf32>,
             %w4: vector<4xf32>) -> ({", ".join(types)}) {{
    %a = memory.alloc() : memref<4x8xf32>
    %b = memory.alloc() : memref<4x8xf32>
    memory.copy %oa, %a : memref<4x8xf32> to memref<4x8xf32>
    memory.copy %ob, %b : memref<4x8xf32> to memref<4x8xf32>
    %v = memory.subview %a[0, 2][4, 4][1, 1] : memref<4x8xf32> to {BUFFERS[3][1]}
    {text}
    memory.copy %a, %oa : memref<4x8xf32> to memref<4x8xf32>
    memory.copy %b, %ob : memref<4x8xf32> to memref<4x8xf32>
    memory.dealloc %a : memref<4x8xf32>
    memory.dealloc %b : memref<4x8xf32>
    return {", ".join(results)}{" : " if results else ""}{", ".join(types)}
}}
""", len(results)


def _run(text: str, passes: str | None, i: int, j: int):
    m = parse_module(text)
    if passes:
        PassManager.parse(passes).run(m)
        m.verify()
    rng = np.random.default_rng(0)
    bufs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(3)]
    got = interpret(m, "f", *bufs, i, j, np.float32(1.5), np.float32(-2.0), np.float32(7.0),
                    np.array([3, 4], np.float32), np.array([5, 6, 7, 8], np.float32))
    got = got if isinstance(got, tuple) else () if got is None else (got,)
    return [np.asarray(g) for g in got], bufs, m


@settings(max_examples=200, deadline=None)
@given(program=blocks(), i=st.integers(0, 3), j=st.integers(0, 1))
def test_forwarding_keeps_loaded_values_and_buffers(program, i, j):
    text, _ = program
    want, want_bufs, _ = _run(text, None, i, j)
    got, got_bufs, _ = _run(text, "memory-forward-stores", i, j)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(got_bufs, want_bufs):
        np.testing.assert_array_equal(g, w)


def test_a_reload_of_a_stored_row_is_the_stored_value():
    """The case the pass is for: a row stored as a vector of 8 and one of 2, then reloaded
    after a store to another buffer; both reloads go, and a store overwritten unread goes."""
    text = """
func.func @f(%row: memref<?x10xf32>, %max: memref<?xf32>, %i: index, %a: vector<8xf32>,
             %b: vector<2xf32>, %s: f32) -> (vector<8xf32>, vector<2xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  memory.store %s, %max[%i] : memref<?xf32>
  memory.vector_store %a, %row[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  memory.vector_store %b, %row[%i, %c8] : memref<?x10xf32>, vector<2xf32>
  memory.store %s, %max[%i] : memref<?xf32>
  %x = memory.vector_load %row[%i, %c0] : memref<?x10xf32>, vector<8xf32>
  %y = memory.vector_load %row[%i, %c8] : memref<?x10xf32>, vector<2xf32>
  return %x, %y : vector<8xf32>, vector<2xf32>
}
"""
    m = parse_module(text)
    PassManager.parse("memory-forward-stores").run(m)
    names = [op.name for op in m.walk()]
    assert names.count("memory.vector_load") == 0
    assert names.count("memory.store") == 1
    row, mx = np.zeros((2, 10), np.float32), np.zeros(2, np.float32)
    a, b = np.arange(8, dtype=np.float32), np.array([9, 10], np.float32)
    x, y = interpret(m, "f", row, mx, 1, a, b, np.float32(3))
    np.testing.assert_array_equal(x, a)
    np.testing.assert_array_equal(y, b)
    np.testing.assert_array_equal(row[1], np.concatenate([a, b]))
    assert mx[1] == 3


def test_a_long_block_remembers_its_last_accesses():
    """A block of 100 stores to one buffer, then a load of each element, last first: the
    pass remembers the last MAX_KNOWN accesses of a buffer (a fully unrolled loop stays
    linear to walk), so the loads of those are forwarded and the others stay; the values
    are right."""
    from irkit.passes.memory_forward_stores import MAX_KNOWN
    n = 100
    consts = "\n  ".join(f"%c{i} = arith.constant {i} : index" for i in range(n))
    stores = "\n  ".join(f"memory.store %x{i % 3}, %m[%c{i}] : memref<{n}xf32>"
                         for i in range(n))
    loads = "\n  ".join(f"%r{i} = memory.load %m[%c{i}] : memref<{n}xf32>"
                         for i in reversed(range(n)))
    text = f"""
func.func @f(%m: memref<{n}xf32>, %x0: f32, %x1: f32, %x2: f32) -> ({", ".join(["f32"] * n)}) {{
  {consts}
  {stores}
  {loads}
  return {", ".join(f"%r{i}" for i in range(n))} : {", ".join(["f32"] * n)}
}}
"""
    m = parse_module(text)
    PassManager.parse("memory-forward-stores").run(m)
    loads_left = sum(op.name == "memory.load" for op in m.walk())
    assert loads_left == n - MAX_KNOWN
    got = interpret(m, "f", np.zeros(n, np.float32), np.float32(1), np.float32(2),
                    np.float32(3))
    np.testing.assert_array_equal(np.array(got), np.array([1, 2, 3] * 33 + [1], np.float32))
