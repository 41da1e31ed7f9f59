"""What a call of compiled code remembers from the calls before it, and that it never
remembers too much (backends/llvm_abi.py, runtime/compiled.py, runtime/inputs.py).

- `JitFunction`: the checks of an array depend only on its dtype, shape and strides, so a
  (shape, strides) pair checked once is not checked again; another pair is checked (and
  rejected) afresh, a wrong dtype is rejected whatever the cache holds, and every call reads
  the array's own memory. Kept descriptors (`keep_descriptors`) are dropped when the
  argument is another array, or the same one reshaped in place. Calls from several threads
  at once do not share descriptors.
- `CompiledRunner`: a variable replaced between steps (`model.variables[k] = new`) is what
  the next step reads and updates; an input or variable changed in place is read fresh;
  another input shape gives outputs of that shape.

Expected values come from numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from thread_switches import run_switching

pytest.importorskip("llvmlite")

import irkit.dialects.arith  # noqa: E402,F401
import irkit.dialects.loop  # noqa: E402,F401
import irkit.dialects.memory  # noqa: E402,F401
from irkit.backends.llvm_cpu import compile_module  # noqa: E402
from irkit.frontend.dsl import compile_source, find_model  # noqa: E402
from irkit.parser import parse_module  # noqa: E402
from irkit.runtime.model import Model  # noqa: E402

FUNCTIONS = """
func.func @scale(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memory.dim %x, 0 : memref<?xf64>
  loop.for %i = %c0 to %n step %c1 {
    %v = memory.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %two : f64
    memory.store %w, %y[%i] : memref<?xf64>
  }
  return
}
func.func @rowsum(%m: memref<?x4xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  %r = memory.dim %m, 0 : memref<?x4xf32>
  loop.for %i = %c0 to %r step %c1 {
    %s = loop.for %j = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f32) {
      %v = memory.load %m[%i, %j] : memref<?x4xf32>
      %b = arith.addf %a, %v : f32
      loop.yield %b : f32
    }
    memory.store %s, %out[%i] : memref<?xf32>
  }
  return
}
func.func @sum2d(%m: memref<?x?xf64, strided<[?, ?], offset: ?>>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = memory.dim %m, 0 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %c = memory.dim %m, 1 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %s = loop.for %i = %c0 to %r step %c1 iter_args(%acc = %z) -> (f64) {
    %t = loop.for %j = %c0 to %c step %c1 iter_args(%a = %acc) -> (f64) {
      %v = memory.load %m[%i, %j] : memref<?x?xf64, strided<[?, ?], offset: ?>>
      %b = arith.addf %a, %v : f64
      loop.yield %b : f64
    }
    loop.yield %t : f64
  }
  return %s : f64
}
"""

_JIT = {}


def jit():
    """The functions above compiled once for this module (a fresh `JitModule` per test
    would cost a compile each)."""
    if "m" not in _JIT:
        _JIT["m"] = compile_module(parse_module(FUNCTIONS), opt_level=1)
    return _JIT["m"]


# ----- JitFunction ---------------------------------------------------------------------------


def test_a_checked_shape_does_not_let_other_strides_or_dtypes_through():
    rowsum = jit().functions["rowsum"]
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros(3, np.float32)
    rowsum(m, out)
    np.testing.assert_array_equal(out, m.sum(axis=1))
    # the same shape with other strides: memref<?x4xf32> fixes row-major strides [4, 1]
    wide = np.zeros((3, 8), np.float32)[:, ::2]
    with pytest.raises(ValueError, match=r"C-contiguous array, got strides \[32, 8\]"):
        rowsum(wide, out)
    with pytest.raises(ValueError, match="expected float32 elements"):
        rowsum(m.astype(np.float64), out)
    with pytest.raises(ValueError, match="expected size 4 in dimension 1"):
        rowsum(np.zeros((3, 5), np.float32), out)
    with pytest.raises(ValueError, match="expected a numpy array"):
        rowsum(m.tolist(), out)
    rowsum(m + 1, out)                             # another array of a checked shape
    np.testing.assert_array_equal(out, (m + 1).sum(axis=1))


def test_arrays_whose_address_numpy_does_not_lend_as_a_buffer():
    scale = jit().functions["scale"]
    x = np.arange(5.0)
    x.flags.writeable = False                      # read-only: no writable buffer
    y = np.zeros(5)
    scale(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    empty = np.zeros(0)
    scale(empty, np.zeros(0))                      # no bytes at all
    sum2d = jit().functions["sum2d"]
    base = np.arange(48.0).reshape(6, 8)
    view = base[::-2, 1::3]                         # not contiguous, negative stride
    assert sum2d(view) == view.sum()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.sampled_from([1, 2, -1, -3]),
       st.sampled_from([1, 3, -2]), st.integers(0, 2))
def test_strided_views_one_after_another(rows, cols, step0, step1, start):
    """One function called with views of many shapes and strides in turn: each call sees
    its own view (the per-parameter cache of checked (shape, strides) pairs never answers
    for another pair)."""
    base = np.arange(rows * cols * 9, dtype=np.float64).reshape(rows * 3, cols * 3)
    view = base[start::step0, start::step1] if step0 > 0 else base[::step0, ::step1]
    assert jit().functions["sum2d"](view) == view.sum()
    assert jit().functions["sum2d"](base) == base.sum()


def test_kept_descriptor_follows_the_array():
    scale = jit().functions["scale"]
    scale.keep_descriptors([0])
    try:
        x, y = np.arange(6.0), np.zeros(6)
        scale(x, y)
        np.testing.assert_array_equal(y, 2 * np.arange(6.0))
        x[:] = -1.0                                    # changed in place: read fresh
        scale(x, y)
        np.testing.assert_array_equal(y, np.full(6, -2.0))
        x.shape = (2, 3)                               # the same object reshaped in place
        with pytest.raises(ValueError, match="expected a rank-1 array"):
            scale(x, y)
        x.shape = (6,)
        other = np.arange(6.0) + 10                    # another array, same shape
        scale(other, y)
        np.testing.assert_array_equal(y, 2 * other)
        long = np.arange(9.0)
        y9 = np.zeros(9)
        scale(long, y9)
        short = long[:4]                               # a view: same memory, other shape
        y9[:] = 0
        scale(short, y9)
        np.testing.assert_array_equal(y9, [0, 2, 4, 6, 0, 0, 0, 0, 0])
        with pytest.raises(ValueError, match="expected float64 elements"):
            scale(long.astype(np.float32), y9)
    finally:
        scale.keep_descriptors([])


def test_calls_from_several_threads_keep_their_own_descriptors():
    """Threads switch between filling the descriptors and the call, and the compiled code
    runs without the GIL: were the descriptor buffer shared, one thread's call would run on
    another's arrays (and leave its own output unwritten). Each thread uses its own length
    and values; a tiny switch interval makes the switches frequent."""
    scale = jit().functions["scale"]
    errors = []

    def work(k: int) -> None:
        x = np.full(3 + k, float(k + 1))
        y = np.zeros_like(x)
        for _ in range(3000):
            y[:] = 0
            scale(x, y)
            if not np.array_equal(y, 2 * x):
                errors.append(k)
                return

    run_switching(work, [(k,) for k in range(4)])
    assert errors == []


# ----- CompiledRunner ------------------------------------------------------------------------

TINY = """
model tiny {
  input x: f32[B, 3]
  input y: f32[B, 2]
  param w: f32[3, 2] = zeros
  param b: f32[2] = zeros
  p = x @ w + b
  loss = mean(sum((p - y) * (p - y), axis=1))
  output p, loss
  train loss with sgd(lr=0.1)
}
"""


@pytest.fixture(scope="module")
def tiny() -> Model:
    return Model(find_model(compile_source(TINY, "tiny.irk"), "tiny"), engine="jit")


def _sgd(x, y, w, b, lr=0.1):
    """numpy's step of TINY: (loss, new w, new b)."""
    p = x @ w + b
    loss = np.mean(np.sum((p - y) ** 2, axis=1))
    dp = 2 * (p - y) / len(x)
    return loss, w - lr * (x.T @ dp), b - lr * dp.sum(axis=0)


def _data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 3)).astype(np.float32),
            rng.standard_normal((n, 2)).astype(np.float32))


def test_a_replaced_variable_is_read_and_updated(tiny):
    x, y = _data(4, 0)
    tiny.variables["w"] = np.zeros((3, 2))
    tiny.variables["b"] = np.zeros(2)
    for _ in range(2):                               # the variables' descriptors are kept
        tiny.train_step(x=x, y=y)
    old = tiny.variables["w"]
    old_values = old.copy()
    new_w = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    tiny.variables["w"] = new_w
    b = tiny.variables["b"].copy()
    np.testing.assert_allclose(tiny.forward(x=x, y=y)["p"], x @ new_w + b, rtol=1e-5)
    loss, w1, b1 = _sgd(x, y, new_w, b)
    got = tiny.train_step(x=x, y=y)
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-5)
    np.testing.assert_allclose(tiny.variables["w"], w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tiny.variables["b"], b1, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(old, old_values)   # the replaced array is left alone


def test_inputs_and_variables_changed_in_place_are_read_fresh(tiny):
    x, y = _data(3, 1)
    tiny.variables["w"] = np.ones((3, 2))
    tiny.variables["b"] = np.zeros(2)
    first = tiny.forward(x=x, y=y)["p"]
    np.testing.assert_allclose(first, x @ np.ones((3, 2)), rtol=1e-5)
    x *= 3                                           # the same array object, new values
    tiny.variables["w"][0, :] = -2                   # the same variable array, new values
    w = tiny.variables["w"].copy()
    np.testing.assert_allclose(tiny.forward(x=x, y=y)["p"], x @ w, rtol=1e-5)


def test_another_input_shape_gives_outputs_of_that_shape(tiny):
    tiny.variables["w"] = np.full((3, 2), 0.5)
    tiny.variables["b"] = np.array([1.0, -1.0])
    w, b = tiny.variables["w"].copy(), tiny.variables["b"].copy()
    for n in (2, 5, 2, 1, 5):
        x, y = _data(n, n)
        p = tiny.forward(x=x, y=y)["p"]
        assert p.shape == (n, 2)
        np.testing.assert_allclose(p, x @ w + b, rtol=1e-5)
    with pytest.raises(ValueError, match="dimension B is 2 in input 'x' but 3 in input 'y'"):
        tiny.forward(x=_data(2, 0)[0], y=_data(3, 0)[1])


def test_a_signature_seen_before_stands_only_for_its_own_layout_and_dtype(tiny):
    """The runner's short paths are keyed by each input's type, dtype, shape and strides
    (`prepare`'s), or by its shape with the compiled call checking the rest (`run`'s): an
    input equal in shape but strided, of another dtype, or a list, goes through the full
    checks (copied, converted) after the same shape served as is."""
    tiny.variables["w"] = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    tiny.variables["b"] = np.array([0.5, -0.5], np.float32)
    w, b = tiny.variables["w"].copy(), tiny.variables["b"].copy()
    x, y = _data(4, 2)
    wide = np.zeros((4, 6), np.float32)
    wide[:, ::2] = x                                 # x's values at a stride of 2 floats
    for given in (x, wide[:, ::2], x.astype(np.float64), x.tolist(), x, wide[:, ::2]):
        np.testing.assert_allclose(tiny.forward(x=given, y=y)["p"], x @ w + b, rtol=1e-5)
    with pytest.raises(ValueError, match="input 'x' expects f32 elements, got complex64"):
        tiny.forward(x=x.astype(np.complex64), y=y)
    with pytest.raises(ValueError, match="dimension B is 4 in input 'x' but 3 in input 'y'"):
        tiny.forward(x=x, y=y[:3])


CLASSES = """
model classes {
  input x: f32[B, 4]
  input labels: i32[B]
  param w: f32[4, 3] = zeros
  loss = cross_entropy(x @ w, labels)
  output loss
  train loss with sgd(lr=0.5)
}
"""


def _counting_checks(monkeypatch, runner) -> list:
    """A list that gets one element per call of `runner`'s checked path (`prepare`)."""
    calls: list = []
    prepare = runner.prepare

    def counted(*args):
        calls.append(args[0])
        return prepare(*args)

    monkeypatch.setattr(runner, "prepare", counted)
    return calls


def test_a_recorded_shape_goes_through_the_compiled_call_and_its_errors_still_show(
        monkeypatch):
    """After a checked call, inputs of the same sizes go through the compiled model call
    (`JitFunction.model_call`) and not the checked path, which checks their dtype and
    layout itself: a wrong dtype is converted by the checked path, other sizes are checked
    and recorded in their turn, a label out of range is the located run-time error, other
    names are refused by name, and the next good call runs compiled again."""
    m = Model(find_model(compile_source(CLASSES, "classes.irk"), "classes"), engine="jit")
    ref = Model(find_model(compile_source(CLASSES, "classes.irk"), "classes"))
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    labels = np.array([0, 2, 1, 1, 0], np.int32)
    checked = _counting_checks(monkeypatch, m._engine.runner)
    # (inputs, whether the checked path takes the call)
    for (xs, n), slow in (((x, 5), True), ((x, 5), False), ((x.astype(np.float64), 5), True),
                          ((x, 5), False), ((x, 3), True), ((x, 3), False), ((x, 5), True)):
        before = len(checked)
        got = m.train_step(x=xs[:n], labels=labels[:n])["loss"]
        want = ref.train_step(x=x[:n], labels=labels[:n])["loss"]
        np.testing.assert_allclose(got, want, rtol=1e-5)
        assert len(checked) - before == slow
    np.testing.assert_allclose(m.variables["w"], ref.variables["w"], rtol=1e-5, atol=1e-7)
    bad = labels.copy()
    bad[3] = 7
    before = len(checked)
    with pytest.raises(ValueError, match=r"classes.irk:6:10: error: .*label 7 is out of range"
                                         r" for 3 classes"):
        m.train_step(x=x, labels=bad)
    assert len(checked) == before                    # raised from the compiled call's status
    with pytest.raises(ValueError, match="missing input 'labels'"):
        m.train_step(x=x, labelz=labels)
    with pytest.raises(ValueError, match="unknown input 'z'"):
        m.train_step(x=x, labels=labels, z=labels)
    w = m.variables["w"].copy()
    m.train_step(x=x, labels=labels)                 # the status was cleared
    assert not np.array_equal(m.variables["w"], w)
    assert len(checked) == before + 2


def test_the_compiled_call_gives_new_outputs_reads_replaced_variables(tiny, monkeypatch):
    """Each compiled call allocates its outputs: a result kept from one step is not written
    by the next. A variable replaced between steps is looked up again, and a store that is
    not exactly a dict goes through the checked path."""
    tiny.variables["w"] = np.full((3, 2), 0.25, np.float32)
    tiny.variables["b"] = np.zeros(2, np.float32)
    x, y = _data(4, 5)
    checked = _counting_checks(monkeypatch, tiny._engine.runner)
    tiny.forward(x=x, y=y)
    first = tiny.forward(x=x, y=y)
    kept = first["p"].copy()
    new_w = np.arange(6, dtype=np.float32).reshape(3, 2)
    tiny.variables["w"] = new_w
    second = tiny.forward(x=x, y=y)
    assert sorted(second) == ["loss", "p"] and second["p"] is not first["p"]
    np.testing.assert_array_equal(first["p"], kept)
    np.testing.assert_allclose(second["p"], x @ new_w, rtol=1e-5)
    assert len(checked) <= 1                         # the first call, if no test recorded x's
    runner = tiny._engine.runner

    class Store(dict):
        pass

    got = runner.run("forward", "tiny", {"x": x, "y": y}, Store(tiny._store))
    np.testing.assert_allclose(got["p"], x @ new_w, rtol=1e-5)
    assert checked[-1] == "forward" and len(checked) <= 2


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["f32", "f64", "strided",
                                                              "other_y"])),
                min_size=1, max_size=8))
def test_the_compiled_call_equals_numpy_through_any_sequence_of_calls(tiny, calls):
    """Calls of drawn batch sizes, dtypes and layouts, one after another: each result is
    numpy's `x @ w + b`, whatever the record holds from the calls before; inputs whose batch
    sizes disagree are the checked path's error."""
    tiny.variables["w"] = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
    tiny.variables["b"] = np.array([1.0, -2.0], np.float32)
    w, b = tiny.variables["w"].copy(), tiny.variables["b"].copy()
    for n, kind in calls:
        x, y = _data(n, n)
        xs = {"f32": x, "f64": x.astype(np.float64), "other_y": x,
              "strided": np.repeat(x, 2, axis=1)[:, ::2]}[kind]
        if kind == "other_y":
            with pytest.raises(ValueError, match=f"dimension B is {n} in input 'x' but "
                                                 f"{n + 1} in input 'y'"):
                tiny.forward(x=xs, y=_data(n + 1, n)[1])
            continue
        got = tiny.forward(x=xs, y=y)
        np.testing.assert_allclose(got["p"], x @ w + b, rtol=1e-5)
        assert got["p"].shape == (n, 2)


def test_compiled_calls_from_several_threads_with_their_own_sizes(tiny):
    """Threads calling at once with different batch sizes replace the record under each
    other (the switch interval at 1 us): every call still gets outputs of its own size and
    numpy's values."""
    tiny.variables["w"] = np.arange(6, dtype=np.float32).reshape(3, 2) / 8
    tiny.variables["b"] = np.array([0.5, 0.25], np.float32)
    w, b = tiny.variables["w"].copy(), tiny.variables["b"].copy()
    wrong: list = []

    def work(n: int) -> None:
        x, y = _data(n, n)
        for _ in range(300):
            p = tiny.forward(x=x, y=y)["p"]
            if p.shape != (n, 2) or not np.allclose(p, x @ w + b, rtol=1e-5):
                wrong.append((n, p.shape))

    run_switching(work, [(n,) for n in (1, 2, 3, 5)])
    assert not wrong


LARGE = """
model large {
  input x: f32[N]
  y = x * 2.0
  output y
}
"""


def test_large_outputs_keep_the_checked_path_and_their_pages(monkeypatch):
    """A call with an output of `MIN_BYTES` or more is not recorded: each goes through the
    checked path, whose `OutputArrays` hands the dropped output's buffer back."""
    m = Model(find_model(compile_source(LARGE, "large.irk"), "large"), engine="jit")
    checked = _counting_checks(monkeypatch, m._engine.runner)
    x = np.ones(1 << 19, np.float32)                 # 2 MiB out
    addresses = []
    for _ in range(3):
        y = m.forward(x=x)["y"]
        np.testing.assert_array_equal(y, 2 * x)
        addresses.append(y.ctypes.data)
        del y
    assert len(checked) == 3 and len(set(addresses)) == 1
    small = np.ones(4, np.float32)
    for _ in range(2):
        np.testing.assert_array_equal(m.forward(x=small)["y"], 2 * small)
    assert len(checked) == 4
