"""The loop dialect and loop-invariant code motion: loop.for / loop.parallel / loop.if run in
the interpreter as numpy says they should, and LICM (and canonicalize's loop folds) keep every
program's results, on hand-written programs and on random bounds and steps (hypothesis)."""

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


# ----- loop.parallel -------------------------------------------------------------------------
#
# A parallel loop has no results: what it does is seen only through effects. Until the memory
# dialect lands, the tests observe iterations through `testpar.store %v[%i, %j]`, a test-only
# op (registered for this module only, so the registry-driven contract tests never see it)
# that records (indices, value) in the interpreter's state, in the order the stores ran.


@pytest.fixture(scope="module")
def record_op():
    from irkit.opdef import AnyType, Dialect, Index, Op, Operand, VarOperand, \
        unregister_dialect
    testpar = Dialect("testpar", "Test-only effects for loop.parallel.")

    @testpar.op
    class StoreOp(Op):
        """Records `(indices, value)`; it has effects, so no pass may erase or move it.

            "testpar.store"(%v, %i) : (f32, index) -> ()
        """

        name = "testpar.store"
        value = Operand(AnyType)
        indices = VarOperand(Index)

        def interpret(self, interp, values):
            interp.state.setdefault("stores", []).append((tuple(values[1:]), values[0]))
            return []

    yield StoreOp
    unregister_dialect("testpar")


def run_stores(m, *args) -> list:
    """The (indices, value) pairs `@f` stored, in the order it stored them."""
    from irkit.interpreter import Interpreter, to_value
    from irkit.symbols import lookup_symbol_in
    fn = lookup_symbol_in(m, "f")
    types = fn.properties["function_type"].value.inputs
    interp = Interpreter(m)
    with np.errstate(all="ignore"):
        interp.call(fn, [to_value(a, t) for a, t in zip(args, types)])
    return interp.state.get("stores", [])


def as_grid(stores, shape) -> np.ndarray:
    """Stores into a NaN-filled array; every index must be stored at most once (the loop's
    iterations are independent, so no two may write the same place)."""
    out = np.full(shape, np.nan)
    seen = set()
    for idx, v in stores:
        assert idx not in seen, f"index {idx} stored twice"
        seen.add(idx)
        out[idx] = v
    return out


# out[i, j] = sin(x) * i + j over a strided 2-D index space; sin(x) is loop-invariant.
PARALLEL_2D = """
func.func @f(%lb0: index, %ub0: index, %s0: index, %lb1: index, %ub1: index, %s1: index,
             %x: f64) {
  loop.parallel (%i, %j) = (%lb0, %lb1) to (%ub0, %ub1) step (%s0, %s1) {
    %sx = math.sin %x : f64
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %jj = arith.index_cast %j : index to i64
    %fj = arith.sitofp %jj : i64 to f64
    %p = arith.mulf %sx, %fi : f64
    %v = arith.addf %p, %fj : f64
    "testpar.store"(%v, %i, %j) : (f64, index, index) -> ()
  }
  return
}
"""


def parallel_2d_ref(lb0, ub0, s0, lb1, ub1, s1, x, shape) -> np.ndarray:
    out = np.full(shape, np.nan)
    i, j = np.meshgrid(np.arange(lb0, ub0, s0), np.arange(lb1, ub1, s1), indexing="ij")
    out[i, j] = np.sin(x) * i + j
    return out


@settings(max_examples=60, deadline=None)
@given(lb0=st.integers(0, 6), ub0=st.integers(0, 9), s0=st.integers(1, 4),
       lb1=st.integers(0, 6), ub1=st.integers(0, 9), s1=st.integers(1, 4),
       x=st.floats(-3, 3, allow_nan=False))
def test_parallel_matches_numpy(record_op, lb0, ub0, s0, lb1, ub1, s1, x):
    args = (lb0, ub0, s0, lb1, ub1, s1, x)
    got = as_grid(run_stores(module(PARALLEL_2D), *args), (9, 9))
    want = parallel_2d_ref(*args, (9, 9))
    np.testing.assert_array_equal(got, want)


def test_parallel_runs_in_row_major_order(record_op):
    """The interpreter's order (one valid order of unordered iterations) is row-major."""
    stores = run_stores(module(PARALLEL_2D), 0, 3, 1, 1, 7, 3, 0.0)
    assert [idx for idx, _ in stores] == [(i, j) for i in range(3) for j in range(1, 7, 3)]


def test_parallel_nested_in_for_and_for_in_parallel(record_op):
    """A loop.for inside each iteration reads the parallel loop's induction variable and the
    values defined above both loops; row sums of an upper-triangular pattern."""
    m = module("""
    func.func @f(%n: index, %x: i64) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        %s = loop.for %j = %i to %n step %c1 iter_args(%a = %x) -> (i64) {
          %jj = arith.index_cast %j : index to i64
          %t = arith.addi %a, %jj : i64
          loop.yield %t : i64
        }
        "testpar.store"(%s, %i) : (i64, index) -> ()
      }
      return
    }
    """)
    n, x = 6, 10
    got = dict(run_stores(m, n, x))
    assert got == {(i,): x + sum(range(i, n)) for i in range(n)}


@pytest.mark.parametrize("step", [0, -1])
def test_parallel_non_positive_dynamic_step_is_an_error(record_op, step):
    with pytest.raises(InterpreterError, match="'loop.parallel' step must be positive"):
        run_stores(module(PARALLEL_2D), 0, 3, 1, 0, 3, step, 0.0)


def test_licm_hoists_out_of_parallel(record_op):
    m = after(PARALLEL_2D, "loop-invariant-code-motion")
    (par,) = ops_of(m, "loop.parallel")
    fn = m.body.blocks[0].first
    assert [op.name for op in fn.body.blocks[0].ops][:1] == ["math.sin"]
    assert "math.sin" not in [op.name for op in par.body.blocks[0].ops]
    args = (1, 5, 2, 0, 4, 1, 0.7)
    np.testing.assert_array_equal(as_grid(run_stores(m, *args), (9, 9)),
                                  parallel_2d_ref(*args, (9, 9)))


def test_licm_hoists_parallel_nest_through_levels(record_op):
    """An invariant deep in a loop.for inside a loop.parallel leaves both; a loop.parallel
    with a dynamic step is not speculatable, so a pure one stays inside a loop.for."""
    m = after("""
    func.func @f(%n: index, %s: index, %x: f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        loop.for %j = %c0 to %n step %c1 {
          %y = arith.mulf %x, %x : f32
          "testpar.store"(%y, %i, %j) : (f32, index, index) -> ()
        }
      }
      loop.for %k = %c0 to %n step %c1 {
        loop.parallel (%i) = (%c0) to (%n) step (%s) {
          %z = arith.addf %x, %x : f32
        }
        loop.parallel (%i) = (%c0) to (%n) step (%c1) {
          %z = arith.addf %x, %x : f32
        }
      }
      return
    }
    """, "loop-invariant-code-motion")
    fn = m.body.blocks[0].first
    top = [op.name for op in fn.body.blocks[0].ops]
    assert top == ["arith.constant", "arith.constant", "arith.mulf", "loop.parallel",
                   "arith.addf", "arith.addf", "loop.parallel", "loop.for", "func.return"]
    (outer_for,) = [op for op in fn.body.blocks[0].ops if op.name == "loop.for"]
    (stays,) = [op for op in outer_for.body.blocks[0].ops if op.name == "loop.parallel"]
    assert stays.steps[0] is fn.body.blocks[0].args[1]
    assert dict(run_stores(m, 3, 1, 2.0)) == {(i, j): 4.0 for i in range(3) for j in range(3)}


@settings(max_examples=60, deadline=None)
@given(lb0=st.integers(0, 4), ub0=st.integers(0, 6), s0=st.integers(1, 4),
       lb1=st.integers(0, 4), ub1=st.integers(0, 6), s1=st.integers(1, 4),
       x=st.floats(-3, 3, allow_nan=False))
def test_passes_preserve_random_constant_parallel_loops(record_op, lb0, ub0, s0, lb1, ub1, s1,
                                                         x):
    """With constant bounds canonicalize may erase the loop, drop dimensions or inline it; the
    set of stores (their order is not part of the meaning) stays the same."""
    text = (PARALLEL_2D.replace("%lb0: index, %ub0: index, %s0: index, %lb1: index, "
                                "%ub1: index, %s1: index,\n             ", "")
            .replace("loop.parallel", CONSTS.format(lb0=lb0, ub0=ub0, s0=s0, lb1=lb1,
                                                    ub1=ub1, s1=s1) + "  loop.parallel"))
    want = parallel_2d_ref(lb0, ub0, s0, lb1, ub1, s1, x, (7, 7))
    np.testing.assert_array_equal(as_grid(run_stores(module(text), x), (7, 7)), want)
    for pipeline in ("loop-invariant-code-motion", "canonicalize",
                     "loop-invariant-code-motion,canonicalize,cse"):
        got = as_grid(run_stores(after(text, pipeline), x), (7, 7))
        np.testing.assert_array_equal(got, want, err_msg=pipeline)


CONSTS = """%lb0 = arith.constant {lb0} : index
  %ub0 = arith.constant {ub0} : index
  %s0 = arith.constant {s0} : index
  %lb1 = arith.constant {lb1} : index
  %ub1 = arith.constant {ub1} : index
  %s1 = arith.constant {s1} : index
"""


def test_canonicalize_parallel_single_and_zero_trips(record_op):
    text = PARALLEL_2D.replace("%lb0: index, %ub0: index, %s0: index, %lb1: index, "
                               "%ub1: index, %s1: index,\n             ", "")
    sx = np.sin(1.0)
    one_dim = text.replace("loop.parallel", CONSTS.format(lb0=2, ub0=3, s0=1, lb1=0, ub1=6,
                                                          s1=5) + "  loop.parallel")
    m = after(one_dim, "canonicalize")
    (par,) = ops_of(m, "loop.parallel")
    assert len(par.lower_bounds) == 1 and len(par.body.blocks[0].args) == 1
    assert print_op(module(print_op(m))) == print_op(m)
    assert dict(run_stores(m, 1.0)) == {(2, 0): 2 * sx, (2, 5): 2 * sx + 5}
    single = text.replace("loop.parallel", CONSTS.format(lb0=2, ub0=3, s0=1, lb1=4, ub1=6,
                                                         s1=5) + "  loop.parallel")
    m = after(single, "canonicalize")
    assert not ops_of(m, "loop.parallel")
    assert dict(run_stores(m, 1.0)) == {(2, 4): 2 * sx + 4}
    zero = text.replace("loop.parallel", CONSTS.format(lb0=0, ub0=3, s0=1, lb1=4, ub1=4,
                                                       s1=1) + "  loop.parallel")
    m = after(zero, "canonicalize")
    assert not ops_of(m, "loop.parallel") and not run_stores(m, 1.0)


def test_pure_parallel_loop_is_dead_but_one_with_effects_is_not(record_op):
    m = after("""
    func.func @f(%n: index, %x: f32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        %y = arith.mulf %x, %x : f32
      }
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        "testpar.store"(%x, %i) : (f32, index) -> ()
      }
      return
    }
    """, "canonicalize")
    assert len(ops_of(m, "loop.parallel")) == 1


def test_parallel_custom_form_is_mlir_scf_parallel():
    """irkit's custom form, renamed to scf, is what mlir-opt prints for scf.parallel (minus
    the scf.reduce terminator it always shows); the generic form passes as an unknown op."""
    import re
    import shutil
    import subprocess
    exe = shutil.which("/usr/lib/llvm-22/bin/mlir-opt") or shutil.which("mlir-opt")
    if exe is None:
        pytest.skip("mlir-opt not found")
    m = module(PARALLEL_2D.replace('"testpar.store"', '"test.store"'))
    ours = print_op(m)
    scf = ours.replace("loop.parallel", "scf.parallel")
    out = subprocess.run([exe, "--allow-unregistered-dialect", "-"], input=scf,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    theirs = re.sub(r"\n\s*scf\.reduce\s*\n", "\n", out.stdout)
    strip = re.compile(r"%[\w#:.$-]+")
    assert strip.sub("%_", theirs).split() == strip.sub("%_", scf).split()
    generic = print_op(m, generic=True)
    out = subprocess.run([exe, "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"],
                         input=generic, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == generic.strip()
