"""Compiled calls' output arrays (irkit.runtime.outputs): a large output is reused by the next
call only when nothing else holds it, never while the caller still sees it."""

from __future__ import annotations

import numpy as np
import pytest

import irkit
from irkit.runtime.outputs import ALIGN, MIN_BYTES, PAGE, PAGE_OFFSET, OutputArrays

SHAPE = (512, 1024)                    # 2 MiB of float32: above MIN_BYTES


def test_an_output_nobody_holds_is_reused_aligned():
    arrays = OutputArrays()
    a = arrays.get("y", SHAPE, np.float32)
    assert a.ctypes.data % ALIGN == 0 and a.shape == SHAPE and a.dtype == np.float32
    assert a.ctypes.data % PAGE == PAGE_OFFSET              # away from numpy's 16 (4K aliasing)
    address = a.ctypes.data
    del a
    b = arrays.get("y", SHAPE, np.float32)
    assert b.ctypes.data == address


@pytest.mark.parametrize("hold", [
    lambda a: a,                       # the array itself
    lambda a: a[3:],                   # a view
    lambda a: a.T,
    lambda a: a.reshape(-1),
    lambda a: a.view(np.int32),
    lambda a: {"y": a},                # inside a result dict
    lambda a: memoryview(a),           # an exported buffer
])
def test_an_output_still_held_is_not_reused(hold):
    arrays = OutputArrays()
    a = arrays.get("y", SHAPE, np.float32)
    a.fill(1.0)
    held = hold(a)
    del a
    b = arrays.get("y", SHAPE, np.float32)
    b.fill(2.0)
    seen = np.asarray(held["y"] if isinstance(held, dict) else held)
    assert (seen.view(np.float32) == 1.0).all()


def test_other_shapes_types_and_keys_get_their_own():
    arrays = OutputArrays()
    a = arrays.get("y", SHAPE, np.float32)
    del a
    assert arrays.get("y", (1024, 512), np.float32).shape == (1024, 512)
    b = arrays.get("z", SHAPE, np.float32)
    c = arrays.get("z", SHAPE, np.float64)
    assert b.ctypes.data != c.ctypes.data and c.dtype == np.float64


def test_small_outputs_are_fresh_each_call():
    arrays = OutputArrays()
    small = (MIN_BYTES // 4 - 1,)
    a = arrays.get("y", small, np.float32)
    assert arrays.get("y", small, np.float32) is not a
    assert not arrays._kept


SOURCE = """
model ew {
  input x: f32[N]
  y = x * 2.0 + 1.0
  output y
}
"""


def test_compiled_calls_never_overwrite_a_result_the_caller_holds(tmp_path):
    path = tmp_path / "ew.irk"
    path.write_text(SOURCE)
    m = irkit.load_model(str(path), engine="jit", cache=False)
    n = MIN_BYTES                              # 4 MiB of float32 out
    first = m.forward(x=np.ones(n, np.float32))["y"]
    view = first[5:]
    second = m.forward(x=np.zeros(n, np.float32))["y"]
    np.testing.assert_array_equal(first, 3.0)
    np.testing.assert_array_equal(view, 3.0)
    np.testing.assert_array_equal(second, 1.0)
    address = second.ctypes.data
    del second
    third = m.forward(x=np.full(n, 2.0, np.float32))["y"]
    assert third.ctypes.data == address        # reused: nobody held it
    np.testing.assert_array_equal(third, 5.0)
    np.testing.assert_array_equal(first, 3.0)
