"""The Python entry of a compiled function (backends/llvm_pyentry.py): a function of memref
arguments only is called through compiled code that checks and describes the arrays itself.

What must hold: the entry calls the function only with an array the checked path
(`llvm_abi._MemRefParam`) would take, describing it the same way; what it does not take, the
checked path gets, and converts or refuses with its message. And it must take every plain
ndarray of numpy's own dtype that the checked path takes, or it would not be the fast path.
"""

from __future__ import annotations

import ctypes
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import irkit.dialects.arith  # noqa: F401
import irkit.dialects.func  # noqa: F401
import irkit.dialects.loop  # noqa: F401
import irkit.dialects.memory  # noqa: F401
from irkit.backends import llvm_abi
from irkit.backends.llvm_cpu import (
    BackendError, compile_module, emit_llvm_ir, emit_object, find_c_compiler, link_shared, load_shared,
)
from irkit.backends.llvm_pyentry import PREFIX
from irkit.parser import parse_module

#: the layouts `@weigh` is compiled for, each a function of its own
LAYOUTS = {
    "identity": "memref<?x?xf32>",
    "static_cols": "memref<?x6xf32>",
    "strided": "memref<?x?xf32, strided<[?, ?], offset: ?>>",
    "unit_inner": "memref<?x?xf32, strided<[?, 1], offset: ?>>",
    "fixed": "memref<3x4xf32, strided<[12, 2], offset: 5>>",
}


def _weigh(name: str, t: str) -> str:
    """`@name(%m: t, %out)`: out = [sum of m[i, j] * (i * cols + j + 1), rows, cols], which
    reads every element at its own weight, so a wrong stride, size or start shows."""
    return f"""
    func.func @{name}(%m: {t}, %out: memref<3xf64>) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %z = arith.constant 0.0 : f64
      %r = memory.dim %m, 0 : {t}
      %c = memory.dim %m, 1 : {t}
      %s = loop.for %i = %c0 to %r step %c1 iter_args(%acc = %z) -> (f64) {{
        %t = loop.for %j = %c0 to %c step %c1 iter_args(%a = %acc) -> (f64) {{
          %v = memory.load %m[%i, %j] : {t}
          %w0 = arith.muli %i, %c : index
          %w1 = arith.addi %w0, %j : index
          %w2 = arith.addi %w1, %c1 : index
          %wi = arith.index_cast %w2 : index to i64
          %w = arith.sitofp %wi : i64 to f64
          %v64 = arith.extf %v : f32 to f64
          %p = arith.mulf %v64, %w : f64
          %b = arith.addf %a, %p : f64
          loop.yield %b : f64
        }}
        loop.yield %t : f64
      }}
      memory.store %s, %out[%c0] : memref<3xf64>
      %ri = arith.index_cast %r : index to i64
      %rf = arith.sitofp %ri : i64 to f64
      memory.store %rf, %out[%c1] : memref<3xf64>
      %ci = arith.index_cast %c : index to i64
      %cf = arith.sitofp %ci : i64 to f64
      memory.store %cf, %out[%c2] : memref<3xf64>
      return
    }}"""


SRC = "\n".join(_weigh(name, t) for name, t in LAYOUTS.items()) + """
func.func @count(%flags: memref<5xi1>, %n: memref<index>, %x: memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %s = loop.for %i = %c0 to %c5 step %c1 iter_args(%acc = %c0) -> (index) {
    %f = memory.load %flags[%i] : memref<5xi1>
    %one = arith.select %f, %c1, %c0 : index
    %b = arith.addi %acc, %one : index
    loop.yield %b : index
  }
  memory.store %s, %n[] : memref<index>
  %v = memory.load %x[] : memref<i32>
  %d = arith.addi %v, %v : i32
  memory.store %d, %x[] : memref<i32>
  return
}
func.func @scaled(%m: memref<2xf32>, %k: f32) {
  return
}
"""


_MODULE = []


def jit():
    if not _MODULE:
        _MODULE.append(compile_module(parse_module(textwrap.dedent(SRC)), 2))
    return _MODULE[0]


def _weights(a: np.ndarray) -> np.ndarray:
    rows, cols = a.shape
    return np.arange(1, rows * cols + 1, dtype=np.float64).reshape(rows, cols)


def _outcome(fn, args) -> tuple:
    """("ok", the arrays after) or ("error", message) of `fn(*args)` on copies of them."""
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if isinstance(args[0], np.ndarray) and not args[0].flags.owndata:
        mine[0] = args[0]       # a view stays the view (its layout is what is under test)
    try:
        fn(*mine)
    except ValueError as err:
        return ("error", str(err))
    return ("ok", [m.tolist() if isinstance(m, np.ndarray) else m for m in mine])


def _checked(fn, args) -> tuple:
    """`_outcome` through the checked path alone (the entry switched off)."""
    entry, fn._entry = fn._entry, None
    try:
        return _outcome(fn, args)
    finally:
        fn._entry = entry


def test_plain_functions_have_an_entry_and_others_do_not():
    m = jit()
    assert all(m[name]._entry is not None for name in [*LAYOUTS, "count"])
    assert m.scaled._entry is None            # a scalar argument: ctypes' path
    assert f"define ptr @{PREFIX}count(ptr" in emit_llvm_ir(parse_module(textwrap.dedent(SRC)))


def test_the_entry_calls_with_the_arrays_described():
    m = jit()
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = np.zeros(3)
    for name in ("identity", "static_cols"):
        assert m[name]._entry(a, out) is None              # taken
        assert out.tolist() == [float((a * _weights(a)).sum()), 4, 6]
    base = np.arange(200, dtype=np.float32).reshape(10, 20)
    for name, view in (("strided", base[7:1:-2, 3:18:4]),      # strides of either sign
                       ("fixed", base.reshape(-1)[:36].reshape(3, 12)[:, 1:9:2])):
        out[:] = 0
        assert m[name]._entry(view, out) is None
        assert out.tolist() == [float((view * _weights(view)).sum()), 3, 4]
    flags = np.array([1, 0, 1, 1, 0], np.bool_)
    n, x = np.zeros((), np.int64), np.array(21, np.int32)
    assert m.count._entry(flags, n, x) is None
    assert int(n) == 3 and int(x) == 42


@pytest.mark.parametrize("what,args,message", [
    ("a list", lambda: ([[1.0] * 6] * 2, np.zeros(3)), "expected a numpy array"),
    ("another dtype", lambda: (np.zeros((2, 6)), np.zeros(3)), "expected float32 elements"),
    ("another rank", lambda: (np.zeros(6, np.float32), np.zeros(3)), "rank-2 array"),
    ("another static size", lambda: (np.zeros((2, 5), np.float32), np.zeros(3)),
     "expected size 6 in dimension 1"),
    ("rows with gaps", lambda: (np.zeros((3, 12), np.float32)[:, :6], np.zeros(3)),
     "expected a C-contiguous array"),
    # the identity layout with no static stride: contiguous all the same (the checked path
    # took this one before, and a collapse of it read the gaps)
    ("rows with gaps, dynamic", lambda: (np.zeros((3, 12), np.float32)[:, :5], np.zeros(3)),
     "expected a C-contiguous array"),
    ("a column view", lambda: (np.zeros((6, 6), np.float32).T, np.zeros(3)),
     "expected a C-contiguous array"),
    ("too few arguments", lambda: (np.zeros((2, 6), np.float32),), "takes 2 arguments"),
])
def test_what_the_entry_does_not_take_the_checked_path_refuses(what, args, message):
    fn = jit().identity if what.endswith("dynamic") else jit().static_cols
    args = args()
    assert fn._entry(*args) is not None            # not taken: nothing was called
    with pytest.raises(ValueError, match=message):
        fn(*args)


def test_what_the_entry_leaves_the_checked_path_runs():
    """An ndarray subclass, or a dtype equal to float32 that is not numpy's own object, is
    left to the checked path, which takes it."""
    fn = jit().identity

    class Sub(np.ndarray):
        pass

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    tagged = a.view(np.dtype(np.float32, metadata={"unit": "m"}))
    for arg in (a.view(Sub), tagged):
        out = np.zeros(3)
        assert fn._entry(arg, out) is not None
        fn(arg, out)
        assert out.tolist() == [float((a * _weights(a)).sum()), 3, 4]


@st.composite
def views(draw):
    """A view of a random 2-d float32 buffer (steps of either sign, maybe transposed or
    with a dim of 0 or 1), or now and then an array the checked path refuses or converts."""
    rows, cols = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    base = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) - 7.5
    kind = draw(st.sampled_from(["view", "view", "view", "float64", "item_split", "3d"]))
    if kind == "float64":
        return base.astype(np.float64)
    if kind == "item_split":     # strides that are not multiples of the item size
        return np.lib.stride_tricks.as_strided(base, (2, 2), (6, 4))
    if kind == "3d":
        return base.reshape(1, rows, cols)
    cuts = []
    for n in (rows, cols):
        step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
        lo, hi = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
        cuts.append(slice(lo, hi, step) if step > 0 else slice(hi - 1 if hi else None,
                                                                lo - 1 if lo else None, step))
    view = base[tuple(cuts)]
    return view.T if draw(st.booleans()) else view


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(LAYOUTS)), view=views())
def test_the_entry_and_the_checked_path_agree(name, view):
    """Property: for every layout and array, the call through the entry and the call
    through the checked path alone end the same (the same arrays after, or the same
    message); the entry takes the array exactly when the checked path does (an exact
    ndarray of numpy's own float32); and what is taken reads each element where numpy has
    it."""
    fn = jit()[name]
    out = np.zeros(3)
    want = _checked(fn, (view, out))
    assert _outcome(fn, (view, out)) == want
    probe = np.zeros(3)
    taken = fn._entry(view, probe) is None
    assert taken == (want[0] == "ok")
    if taken:
        assert probe.tolist() == [float((view.astype(np.float64) * _weights(view)).sum()),
                                  *view.shape]


def test_calls_from_threads_each_get_their_own_descriptors():
    """The descriptors are on each call's stack: threads calling one function at once, each
    with its own arrays (the GIL is released around the call), all get their own answers."""
    import threading
    fn = jit().identity
    arrays = [np.full((50, 40), float(k), np.float32) for k in range(4)]
    outs = [np.zeros(3) for _ in arrays]

    def work(k):
        for _ in range(200):
            fn(arrays[k], outs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, out in enumerate(outs):
        assert out.tolist() == [float((arrays[k] * _weights(arrays[k])).sum()), 50, 40]


def test_without_numpys_array_fields_the_entry_is_not_used(monkeypatch):
    """Where the array fields are not where the entry reads them, no entry is made."""
    monkeypatch.setattr(llvm_abi, "_api", {})
    monkeypatch.setattr(llvm_abi, "_array_fields_hold", lambda: False)
    m = compile_module(parse_module(textwrap.dedent(_weigh("w", "memref<?x?xf32>"))), 2)
    assert m.w._entry is None
    a, out = np.ones((2, 3), np.float32), np.zeros(3)
    m.w(a, out)
    assert out.tolist() == [21.0, 2, 3]


@pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler to link with")
def test_a_shared_library_exports_the_entries(tmp_path):
    m = parse_module(textwrap.dedent(SRC))
    path = link_shared([emit_object(m)], tmp_path / "entries.so")
    assert ctypes.CDLL(str(path))[PREFIX + "identity"]
    lib = load_shared(path, m)
    a, out = np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(3)
    assert lib.identity._entry(a, out) is None
    assert out.tolist() == [float((a * _weights(a)).sum()), 2, 3]


def test_a_function_named_like_an_entry_is_a_located_error():
    src = """
    func.func @f(%m: memref<2xf32>) {
      return
    }
    func.func @_irkit_py_f(%m: memref<2xf32>) {
      return
    }"""
    m = parse_module(textwrap.dedent(src), filename="clash.mlir")
    with pytest.raises(BackendError, match=r"clash.mlir:2:1: error: .func.func. op cannot have its Python "
                                           r"entry: the module already defines '@_irkit_py_f'"):
        compile_module(m, 2)


def test_any_object_is_safe_to_pass():
    """The entry reads nothing of an object past its type until the type is exactly
    ndarray: objects of every kind and size come back as the fallback, with no call."""
    fn = jit().identity
    out = np.zeros(3)
    for thing in (None, 7, 2.5, "rows", b"\x00" * 64, {"a": 1}, [np.zeros((2, 2))],
                  np.float32(1.0), np.ma.masked_array(np.zeros((2, 2), np.float32)),
                  memoryview(np.zeros((2, 2), np.float32))):
        assert fn._entry(thing, out) is not None
        assert fn._entry(np.zeros((2, 2), np.float32), thing) is not None
    assert out.tolist() == [0.0, 0.0, 0.0]
