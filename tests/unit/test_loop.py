"""The loop dialect and loop-invariant code motion: loop.for / loop.if run in the interpreter
as numpy says they should, and LICM (and canonicalize's loop folds) keep every program's
results, on hand-written programs and on random bounds and steps (hypothesis)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit.interpreter import InterpreterError, interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.printer import print_op


def module(text: str):
    return parse_module(textwrap.dedent(text), allow_unregistered=True)


def after(text: str, pipeline: str):
    """`text` parsed, run through `pipeline`, verified."""
    m = module(text)
    PassManager.parse(pipeline).run(m)
    m.verify()
    return m


def ops_of(m, name: str) -> list:
    return [op for op in m.walk() if op.name == name]


# ----- programs -------------------------------------------------------------------------------

# sum(i * x for i in range(lb, ub, step)), in f64.
SUM = """
func.func @sum(%lb: index, %ub: index, %step: index, %x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %r = loop.for %i = %lb to %ub step %step iter_args(%acc = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.mulf %fi, %x : f64
    %n = arith.addf %acc, %t : f64
    loop.yield %n : f64
  }
  return %r : f64
}
"""

# sum(i * j + x for i in range(n) for j in range(i, n)), and the number of inner trips;
# `%k` and `%x2` are loop-invariant (LICM hoists them out of both loops).
NESTED = """
func.func @nested(%n: index, %x: i64) -> (i64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %r:2 = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %cnt = %c0) -> (i64, index) {
    %in:2 = loop.for %j = %i to %n step %c1 iter_args(%a = %acc, %c = %cnt) -> (i64, index) {
      %k = arith.constant 2 : i64
      %x2 = arith.muli %x, %k : i64
      %ij = arith.muli %i, %j : index
      %v = arith.index_cast %ij : index to i64
      %s = arith.addi %a, %v : i64
      %t = arith.addi %s, %x2 : i64
      %c2 = arith.addi %c, %c1 : index
      loop.yield %t, %c2 : i64, index
    }
    loop.yield %in#0, %in#1 : i64, index
  }
  return %r#0, %r#1 : i64, index
}
"""

# Over i32 bounds: the sum of the even i in [lb, ub), plus an invariant inside a loop.if.
EVENS = """
func.func @evens(%lb: i32, %ub: i32, %y: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %z = arith.constant 0 : i32
  %r = loop.for %i = %lb to %ub step %c1 iter_args(%acc = %z) -> (i32) : i32 {
    %m = arith.remsi %i, %c2 : i32
    %even = arith.cmpi eq, %m, %z : i32
    %n = loop.if %even -> (i32) {
      %yy = arith.muli %y, %y : i32
      %s = arith.addi %acc, %i : i32
      %t = arith.addi %s, %yy : i32
      loop.yield %t : i32
    } else {
      loop.yield %acc : i32
    }
    loop.yield %n : i32
  }
  return %r : i32
}
"""


def sum_ref(lb: int, ub: int, step: int, x: float) -> float:
    return float(np.sum(np.arange(lb, ub, step, dtype=np.int64).astype(np.float64) * x))


def nested_ref(n: int, x: int) -> tuple[int, int]:
    i, j = np.triu_indices(n) if n > 0 else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return int(np.sum(i * j) + 2 * x * len(i)), len(i)


def evens_ref(lb: int, ub: int, y: int) -> int:
    i = np.arange(lb, ub, dtype=np.int64)
    even = i[i % 2 == 0]
    return int(np.int32(np.sum(even) + len(even) * y * y))


# ----- the interpreter -----------------------------------------------------------------------


@pytest.mark.parametrize("lb,ub,step", [(0, 10, 1), (3, 17, 4), (-5, 5, 3), (7, 7, 1),
                                        (9, 2, 1)])
def test_sum_reduction_matches_numpy(lb, ub, step):
    assert interpret(module(SUM), "sum", lb, ub, step, 1.5) == pytest.approx(
        sum_ref(lb, ub, step, 1.5))


def test_zero_trip_loop_returns_inits():
    m = module(SUM.replace("%zero = arith.constant 0.0", "%zero = arith.constant 4.0"))
    assert interpret(m, "sum", 5, 5, 1, 2.0) == 4.0
    assert interpret(m, "sum", 6, 5, 1, 2.0) == 4.0


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_nested_loops_match_numpy(n):
    assert interpret(module(NESTED), "nested", n, 3) == nested_ref(n, 3)


@pytest.mark.parametrize("lb,ub", [(0, 10), (-7, 4), (3, -3)])
def test_if_in_integer_loop_matches_numpy(lb, ub):
    assert int(interpret(module(EVENS), "evens", lb, ub, 3)) == evens_ref(lb, ub, 3)


@pytest.mark.parametrize("step", [0, -2])
def test_non_positive_dynamic_step_is_an_error(step):
    with pytest.raises(InterpreterError, match="step must be positive"):
        interpret(module(SUM), "sum", 0, 4, step, 1.0)


def test_if_without_else_and_nested_values():
    m = module("""
    func.func @f(%c: i1, %x: f32) -> f32 {
      %r = loop.if %c -> (f32) {
        %d = arith.addf %x, %x : f32
        loop.yield %d : f32
      } else {
        loop.yield %x : f32
      }
      loop.if %c {
        %e = arith.mulf %r, %r : f32
      }
      return %r : f32
    }
    """)
    assert interpret(m, "f", True, 2.0) == 4.0
    assert interpret(m, "f", False, 2.0) == 2.0


def test_loop_calls_function():
    """A call inside a loop body runs the callee in its own environment; the loop's body
    still reads the caller's values afterwards."""
    m = module("""
    func.func private @twice(%a: i64) -> i64 {
      %s = arith.addi %a, %a : i64
      return %s : i64
    }
    func.func @f(%n: index, %x: i64) -> i64 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (i64) {
        %t = func.call @twice(%acc) : (i64) -> i64
        %u = arith.addi %t, %x : i64
        loop.yield %u : i64
      }
      return %r : i64
    }
    """)
    acc = 1
    for _ in range(4):
        acc = 2 * acc + 1
    assert interpret(m, "f", 4, 1) == acc


# ----- LICM ----------------------------------------------------------------------------------


def test_licm_hoists_and_preserves_results():
    m = after(NESTED, "loop-invariant-code-motion")
    fn = m.body.blocks[0].first
    top = [op.name for op in fn.body.blocks[0].ops]
    # The invariant constant and multiply left both loops, in their original order.
    assert top[:5] == ["arith.constant"] * 4 + ["arith.muli"]
    for n in range(5):
        assert interpret(m, "nested", n, 3) == nested_ref(n, 3)


def test_licm_leaves_loop_if_contents():
    m = after(EVENS, "loop-invariant-code-motion")
    (if_op,) = ops_of(m, "loop.if")
    assert [op.name for op in if_op.then_region.blocks[0].ops][0] == "arith.muli"
    for lb, ub in [(0, 10), (-7, 4), (3, -3)]:
        assert int(interpret(m, "evens", lb, ub, 3)) == evens_ref(lb, ub, 3)


def test_licm_is_idempotent_and_round_trips():
    once = after(NESTED, "loop-invariant-code-motion")
    text = print_op(once)
    twice = after(text, "loop-invariant-code-motion")
    assert print_op(twice) == text


@settings(max_examples=60, deadline=None)
@given(lb=st.integers(-20, 20), ub=st.integers(-20, 20), step=st.integers(1, 7),
       x=st.floats(-4, 4, allow_nan=False).map(lambda v: round(v, 2)))
def test_licm_preserves_sum_on_random_bounds(lb, ub, step, x):
    before = module(SUM)
    hoisted = after(SUM, "loop-invariant-code-motion")
    want = interpret(before, "sum", lb, ub, step, x)
    assert interpret(hoisted, "sum", lb, ub, step, x) == want
    assert want == pytest.approx(sum_ref(lb, ub, step, x))


# A loop nest whose bounds and steps are constants (so canonicalize may fold or inline it) with
# invariant work at every level.
NEST_TEMPLATE = """
func.func @f(%x: i64) -> i64 {{
  %lb0 = arith.constant {lb0} : index
  %ub0 = arith.constant {ub0} : index
  %s0 = arith.constant {s0} : index
  %lb1 = arith.constant {lb1} : i32
  %ub1 = arith.constant {ub1} : i32
  %s1 = arith.constant {s1} : i32
  %r = loop.for %i = %lb0 to %ub0 step %s0 iter_args(%a = %x) -> (i64) {{
    %in = loop.for %j = %lb1 to %ub1 step %s1 iter_args(%b = %a) -> (i64) : i32 {{
      %k = arith.constant 3 : i64
      %xk = arith.muli %x, %k : i64
      %jj = arith.extsi %j : i32 to i64
      %ii = arith.index_cast %i : index to i64
      %p = arith.muli %ii, %jj : i64
      %s = arith.addi %b, %p : i64
      %t = arith.addi %s, %xk : i64
      loop.yield %t : i64
    }}
    loop.yield %in : i64
  }}
  return %r : i64
}}
"""


def nest_ref(lb0, ub0, s0, lb1, ub1, s1, x) -> int:
    acc = x
    for i in range(lb0, ub0, s0):
        for j in range(lb1, ub1, s1):
            acc += i * j + 3 * x
    return acc


@settings(max_examples=60, deadline=None)
@given(lb0=st.integers(-4, 4), ub0=st.integers(-4, 6), s0=st.integers(1, 4),
       lb1=st.integers(-4, 4), ub1=st.integers(-4, 6), s1=st.integers(1, 4),
       x=st.integers(-50, 50))
def test_passes_preserve_random_constant_nests(lb0, ub0, s0, lb1, ub1, s1, x):
    text = NEST_TEMPLATE.format(lb0=lb0, ub0=ub0, s0=s0, lb1=lb1, ub1=ub1, s1=s1)
    want = nest_ref(lb0, ub0, s0, lb1, ub1, s1, x)
    assert interpret(module(text), "f", x) == want
    for pipeline in ("loop-invariant-code-motion", "canonicalize",
                     "loop-invariant-code-motion,canonicalize,cse"):
        assert interpret(after(text, pipeline), "f", x) == want, pipeline


def test_canonicalize_removes_trivial_loops():
    text = NEST_TEMPLATE.format(lb0=0, ub0=1, s0=1, lb1=5, ub1=5, s1=1)
    m = after(text, "canonicalize")
    assert not ops_of(m, "loop.for")
    assert interpret(m, "f", 7) == 7
