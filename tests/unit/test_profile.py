"""The opt-in profile of compiled code (backends/llvm_profile.py, runtime/profile.py) and the
work estimate that decides a parallel loop's team (backends/llvm_parallel.py).

- Timers are emitted only for ops marked `irkit.profile`; ordinary code has none.
- `Model.profile` names each kernel by its model line, counts one call per step for the
  kernels a step runs, and leaves the model's variables as they were, on either engine.
- A parallel loop whose inner loops' bounds are computed inside its body (a BLIS nest's
  `min(K - pc, kc)`) is costed by those bounds' first-iteration values and gets a team;
  a bound that is not index arithmetic (a loaded value) still counts its loop once.
"""

from __future__ import annotations

import ctypes
import textwrap

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends.llvm_cpu import compile_module, emit_llvm_ir, openmp_library  # noqa: E402
from irkit.backends.llvm_profile import counters_name  # noqa: E402
from irkit.interpreter import interpret  # noqa: E402
from irkit.parser import parse_module  # noqa: E402

#: rows of `a` scaled by `w`, in blocks of 64 rows whose inner bound is min(n - i, 64)
#: (computed in the body, as a tiled nest does) or a value loaded from `lim` (`LOADED`)
BLOCKED = """
func.func @scale(%a: memref<?x?xf32>, %lim: memref<1xindex>, %w: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memory.dim %a, 0 : memref<?x?xf32>
  %m = memory.dim %a, 1 : memref<?x?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c64) {
    %rest = arith.subi %n, %i : index
    %rows = BOUND
    loop.for %r = %c0 to %rows step %c1 {
      %row = arith.addi %i, %r : index
      loop.for %j = %c0 to %m step %c1 {
        %v = memory.load %a[%row, %j] : memref<?x?xf32>
        %u = arith.mulf %v, %w : f32
        memory.store %u, %a[%row, %j] : memref<?x?xf32>
      }
    }
  } {irkit.profile = 0 : i64}
  return
}
"""
COMPUTED = "arith.minsi %rest, %c64 : index"
LOADED = "memory.load %lim[%c0] : memref<1xindex>"


def _module(bound: str):
    return parse_module(textwrap.dedent(BLOCKED.replace("BOUND", bound)))


def _counters(jit) -> ctypes.Array:
    """Region 0's counters: nanoseconds, calls, threads."""
    return (ctypes.c_int64 * 3).from_address(jit.global_address(counters_name(0)))


def test_timers_only_where_asked():
    marked = _module(COMPUTED)
    assert "clock_gettime" in emit_llvm_ir(marked)
    assert counters_name(0) in emit_llvm_ir(marked)
    plain = parse_module(textwrap.dedent(BLOCKED.replace("BOUND", COMPUTED).replace(
        " {irkit.profile = 0 : i64}", "")))
    assert "clock_gettime" not in emit_llvm_ir(plain)
    assert "irkit_profile" not in emit_llvm_ir(plain)


@pytest.mark.skipif(openmp_library() is None, reason="no OpenMP runtime (libgomp)")
@pytest.mark.parametrize("bound, team", [(COMPUTED, 2), (LOADED, 1)])
def test_inner_bounds_computed_in_the_body_count(bound, team, monkeypatch):
    """512 x 256 elements: 3 ops each, 2^18 units of work, enough for two threads of
    `MIN_WORK_PER_THREAD` (spinning ones: `llvm_cpu.threads_sleep`), when the row loop's
    trip count (64) is known; counted once (the bound is loaded), the body looks like a
    single row's work."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("GOMP_SPINCOUNT", "1000")
    module = _module(bound)
    jit = compile_module(module, 2, threads=2)
    a = np.random.default_rng(0).standard_normal((512, 256), dtype=np.float32)
    lim = np.array([64], np.int64)
    want = a.copy()
    interpret(module, "scale", want, lim, np.float32(1.5))
    jit.scale(a, lim, np.float32(1.5))
    np.testing.assert_array_equal(a, want)
    ns, calls, threads = _counters(jit)
    assert calls == 1 and ns > 0
    assert threads == team


MODEL = """
model tiny {
  input x: f32[B, 16]
  input labels: i32[B]
  param w: f32[16, 4] = glorot(seed=1)
  param b: f32[4] = zeros
  loss = cross_entropy(x @ w + b, labels)
  output loss
  train loss with sgd(lr=0.1)
}
"""


@pytest.mark.parametrize("engine", ["jit", "interpreter"])
def test_model_profile_names_kernels_and_leaves_the_model(tmp_path, engine):
    path = tmp_path / "tiny.irk"
    path.write_text(textwrap.dedent(MODEL))
    model = irkit.load_model(path, engine=engine, cache=False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    labels = rng.integers(0, 4, size=8).astype(np.int32)
    before = {k: np.array(v) for k, v in model.variables.items()}
    prof = model.profile("train_step", threads=1, repeat=3, x=x, labels=labels)
    for k, v in before.items():
        np.testing.assert_array_equal(model.variables[k], v)
    kernels = prof.kernels()
    assert kernels and all(k.location and k.location[0].endswith("tiny.irk") for k in kernels)
    lines = {k.location[1] for k in kernels}
    assert lines <= {7, 9} and 7 in lines          # the loss line and the optimizer's
    ran = [k for k in kernels if k.calls]
    assert ran and all(k.calls == 1 for k in ran)   # one step, each kernel once
    assert 0 < sum(k.seconds for k in kernels) < 2 * prof.step_seconds
    table = str(prof)
    assert "cross_entropy(x @ w + b, labels)" in table and "other" in table
    with pytest.raises(ValueError, match="no compiled function 'nope'"):
        model.profile("nope", repeat=1, x=x, labels=labels)
