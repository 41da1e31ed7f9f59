"""Parallel loops on OpenMP threads (backends/llvm_parallel.py): results, team sizes, settings.

- Every iteration of a `loop.parallel` runs exactly once whatever the team (the static chunks
  cover dimension 0), nested ones stay sequential, and without libgomp the code is sequential.
- Models compiled in process (MLP forward and train step, a reduction model) give the
  interpreter's results with 1, 2 and 4 threads, and the same bits at every thread count
  (the partition never changes an element's arithmetic).
- Which team each loop asks libgomp for, seen through an `LD_PRELOAD` shim that records
  every `GOMP_parallel` call: `OMP_NUM_THREADS` is honoured, `threads=` overrides it, small
  loops run inline.
- The C API's `irkit_init` / `irkit_set_threads` in a C program.

Skips without llvmlite, libgomp or (for the shim and the C program) a C compiler.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends import llvm_cpu, llvm_parallel  # noqa: E402
from irkit.backends.llvm_cpu import compile_module, find_c_compiler, openmp_library  # noqa: E402
from irkit.interpreter import interpret  # noqa: E402
from irkit.parser import parse_module  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

if openmp_library() is None:
    pytest.skip("no OpenMP runtime (libgomp)", allow_module_level=True)

#: every element of `a` incremented once per iteration of a 2-D parallel loop over part of it
#: (from row `lb` in steps of `step`), with an inner parallel loop (sequential) and a capture
COUNT = """
func.func @count(%a: memref<?x?xf64>, %lb: index, %step: index, %w: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %a, 0 : memref<?x?xf64>
  %m = memory.dim %a, 1 : memref<?x?xf64>
  loop.parallel (%i) = (%lb) to (%n) step (%step) {
    loop.parallel (%j) = (%c0) to (%m) step (%c1) {
      %v = memory.load %a[%i, %j] : memref<?x?xf64>
      %u = arith.addf %v, %w : f64
      memory.store %u, %a[%i, %j] : memref<?x?xf64>
    }
  }
  return
}
"""


#: libgomp's variables for threads that spin between regions: the work thresholds unscaled
#: (`llvm_cpu.threads_sleep`), whatever the load was when this process loaded libgomp
SPINNING = {"GOMP_SPINCOUNT": "1000"}


@pytest.fixture
def spinning(monkeypatch):
    """Team sizes as for spinning threads, in code compiled from here on."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("GOMP_SPINCOUNT", SPINNING["GOMP_SPINCOUNT"])


@pytest.fixture
def every_loop_parallel(monkeypatch, spinning):
    """Loops of any size split over the team (the work thresholds at one unit)."""
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD", 1)
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD_IN_TEAM", 1)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_every_iteration_runs_once(every_loop_parallel, threads):
    module = parse_module(textwrap.dedent(COUNT))
    jit = compile_module(module, 2, threads=threads)
    assert jit.llvm_ir.count("call void @GOMP_parallel") == 1      # the inner one is nested
    for rows, cols, lb, step in ((7, 5, 0, 1), (9, 3, 1, 2), (2, 4, 0, 1), (0, 3, 0, 1),
                                 (5, 0, 0, 1), (4, 4, 5, 1), (13, 2, 2, 5), (3, 1, 0, 1),
                                 (101, 3, 0, 1)):
        got, want = np.zeros((rows, cols)), np.zeros((rows, cols))
        jit.count(got, lb, step, 1.0)
        interpret(module, "count", want, lb, step, 1.0)
        np.testing.assert_array_equal(got, want)


def test_set_threads_between_calls(every_loop_parallel):
    module = parse_module(textwrap.dedent(COUNT))
    jit = compile_module(module, 2)
    for threads in (0, 2, 1, 5):
        jit.set_threads(threads)
        a = np.zeros((11, 4))
        jit.count(a, 0, 1, 1.0)
        np.testing.assert_array_equal(a, np.ones((11, 4)))


@pytest.mark.parametrize("bad", [-1, 2 ** 31, 1.5, "2", True])
def test_thread_counts_are_checked(bad):
    module = parse_module(textwrap.dedent(COUNT))
    with pytest.raises(ValueError, match="threads must be 0"):
        compile_module(module, 2, threads=bad)
    with pytest.raises(ValueError, match="threads must be 0"):
        irkit.load_model(ROOT / "examples" / "logreg.irk", engine="jit", threads=bad)


def test_without_libgomp_parallel_loops_are_sequential(monkeypatch):
    monkeypatch.setattr(llvm_cpu, "openmp_library", lambda: None)
    module = parse_module(textwrap.dedent(COUNT))
    jit = compile_module(module, 2, threads=4)
    assert "GOMP" not in jit.llvm_ir and "omp_get" not in jit.llvm_ir
    a = np.zeros((9, 3))
    jit.count(a, 0, 1, 2.0)
    np.testing.assert_array_equal(a, np.full((9, 3), 2.0))


def test_a_missing_libgomp_is_a_warning(monkeypatch):
    monkeypatch.setattr(llvm_cpu, "find_c_compiler", lambda: None)
    monkeypatch.setattr(llvm_cpu.ctypes.util, "find_library", lambda name: None)
    openmp_library.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="libgomp was not found.*one thread"):
            assert openmp_library() is None
    finally:
        openmp_library.cache_clear()


@pytest.mark.parametrize("env, others, cpus, spins", [
    ({}, 0.3, 2, llvm_cpu.SPIN_ROUNDS),              # quiet: a core for each of the team
    ({}, 1.0, 2, 0),                                 # another process on one of the 2 cores
    ({"OMP_NUM_THREADS": "2"}, 1.0, 4, llvm_cpu.SPIN_ROUNDS),  # a team of 2, 3 cores free
    ({"OMP_NUM_THREADS": "4"}, 1.0, 4, 0),
    ({"OMP_NUM_THREADS": "1"}, 0.0, 4, 0),           # no team: nobody to wait for
    ({"OMP_NUM_THREADS": "x"}, 0.0, 4, llvm_cpu.SPIN_ROUNDS),  # unreadable: one per core
    ({}, 0.4, 8, llvm_cpu.SPIN_ROUNDS),
    ({}, 6.5, 8, 0),
    ({}, 0.0, 1, 0),                                 # one core: nobody to wait for
    ({"PMI_RANK": "0"}, 0.0, 16, 0),                 # an MPI rank (MPICH)
    ({"OMPI_COMM_WORLD_RANK": "1"}, 0.0, 16, 0),     # an MPI rank (Open MPI)
])
def test_threads_spin_only_where_the_machine_has_room(env, others, cpus, spins):
    assert llvm_cpu.spin_rounds(env, others, cpus) == spins


@pytest.mark.parametrize("env, sleeps", [
    ({}, False),                                     # libgomp's default: spin, then sleep
    ({"GOMP_SPINCOUNT": "0"}, True),                 # spin_rounds's choice on a busy machine
    ({"GOMP_SPINCOUNT": " 0 "}, True),
    ({"GOMP_SPINCOUNT": "30000"}, False),
    ({"GOMP_SPINCOUNT": "infinite"}, False),         # libgomp: spin forever
    ({"OMP_WAIT_POLICY": "passive"}, True),
    ({"OMP_WAIT_POLICY": " PASSIVE"}, True),
    ({"OMP_WAIT_POLICY": "active", "GOMP_SPINCOUNT": "0"}, True),
    ({"OMP_WAIT_POLICY": "active"}, False),
])
def test_threads_sleep_reads_libgomps_variables(env, sleeps):
    assert llvm_cpu.threads_sleep(env) is sleeps


@pytest.mark.parametrize("loadavg, others", [
    ("1.02 0.80 0.50 1/300 4242", 0),       # the average remembers work that has ended
    ("0.10 0.80 0.50 3/300 4242", 0.10),    # a moment's burst that the average does not see
    ("2.01 1.90 1.50 3/300 4242", 2),       # busy all along
])
def test_background_load_is_what_both_views_agree_on(loadavg, others, tmp_path, monkeypatch):
    real = llvm_cpu.Path
    (tmp_path / "loadavg").write_text(loadavg + "\n")
    monkeypatch.setattr(llvm_cpu, "Path", lambda p: real(tmp_path / "loadavg")
                        if p == "/proc/loadavg" else real(p))
    assert llvm_cpu._background_load() == pytest.approx(others)


def test_a_users_wait_policy_is_left_alone():
    """libgomp reads its variables once, when it loads: a fresh process shows what the JIT
    set, and that it kept what the user set."""
    code = ("import os, irkit, numpy as np; from irkit.backends import llvm_cpu; "
            "llvm_cpu._initialize(); print(os.environ.get('GOMP_SPINCOUNT'))")
    for extra, want in (({"GOMP_SPINCOUNT": "7"}, "7"), ({"OMP_WAIT_POLICY": "passive"},
                                                         "None")):
        env = {k: v for k, v in os.environ.items()
               if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")} | extra
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out[-1] == want
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT",
                                                           "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[-1] in ("0", str(llvm_cpu.SPIN_ROUNDS)) or openmp_library() is None


# ----- team regions (omp.parallel): one fork, a barrier between the loops ----------------------

#: three passes over `a` and `b`, each reading what the one before wrote at other indices (the
#: reversed row, the row's first element), so that a missing barrier shows; the third pass in a
#: loop.for every thread of the team runs (a BLIS nest's K loop)
TEAM = """
func.func @team(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %rounds: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memory.dim %a, 0 : memref<?x?xf64>
  %m = memory.dim %a, 1 : memref<?x?xf64>
  omp.parallel {
    loop.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
      %x = memory.load %a[%i, %j] : memref<?x?xf64>
      %y = arith.addf %x, %two : f64
      memory.store %y, %b[%i, %j] : memref<?x?xf64>
    }
    loop.for %k = %c0 to %rounds step %c1 {
      %last = arith.subi %n, %c1 : index
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        %r = arith.subi %last, %i : index
        loop.for %j = %c0 to %m step %c1 {
          %x = memory.load %b[%r, %j] : memref<?x?xf64>
          %y = arith.mulf %x, %two : f64
          memory.store %y, %a[%i, %j] : memref<?x?xf64>
        }
      }
      loop.parallel (%i) = (%c0) to (%n) step (%c1) {
        loop.for %j = %c0 to %m step %c1 {
          %x = memory.load %a[%i, %c0] : memref<?x?xf64>
          %y = memory.load %a[%i, %j] : memref<?x?xf64>
          %z = arith.subf %y, %x : f64
          memory.store %z, %b[%i, %j] : memref<?x?xf64>
        }
      }
    }
    omp.terminator
  }
  return
}
"""


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("fork,in_team", [(1, 1), (1, 1 << 40), (1024, 1), (1 << 40, 1)])
def test_team_region_matches_the_interpreter(monkeypatch, spinning, threads, fork, in_team):
    """Whatever runs where -- every loop split; a forked team whose loops each run on
    thread 0 (`in_team` no loop reaches); the first loop on the calling thread before the
    fork (`fork` 1024: it has about 700 units at 37 x 5, the loop.for several thousand); no
    fork -- the interpreter's results, from one GOMP_parallel and barriers between."""
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD", fork)
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD_IN_TEAM", in_team)
    module = parse_module(textwrap.dedent(TEAM))
    jit = compile_module(module, 2, threads=threads)
    assert jit.llvm_ir.count("call void @GOMP_parallel") == 1
    assert "call void @GOMP_barrier()" in jit.llvm_ir
    rng = np.random.default_rng(1)
    for rows, cols, rounds in ((37, 5, 3), (2, 3, 1), (0, 4, 2), (101, 1, 4), (5, 0, 2)):
        a = rng.standard_normal((rows, cols))
        got, want = [a.copy(), np.zeros_like(a)], [a.copy(), np.zeros_like(a)]
        jit.team(*got, rounds)
        interpret(module, "team", *want, rounds)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


#: a private buffer (the dot-product nest's transposed B): every thread fills its own copy
#: from shared memory before the first loop, updates it between the loops (its own memory
#: only), and the worksharing loops read it
PRIVATE = """
func.func @private(%a: memref<8xf64>, %b: memref<?x8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f64
  %n = memory.dim %b, 0 : memref<?x8xf64>
  omp.parallel {
    %t = memory.alloca() : memref<8xf64>
    loop.for %j = %c0 to %c8 step %c1 {
      %x = memory.load %a[%j] : memref<8xf64>
      %y = arith.mulf %x, %x : f64
      memory.store %y, %t[%j] : memref<8xf64>
    }
    loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
      %x = memory.load %t[%j] : memref<8xf64>
      memory.store %x, %b[%i, %j] : memref<?x8xf64>
    }
    loop.for %j = %c0 to %c8 step %c1 {
      %x = memory.load %t[%j] : memref<8xf64>
      %y = arith.addf %x, %one : f64
      memory.store %y, %t[%j] : memref<8xf64>
    }
    loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
      %x = memory.load %t[%j] : memref<8xf64>
      %y = memory.load %b[%i, %j] : memref<?x8xf64>
      %z = arith.mulf %x, %y : f64
      memory.store %z, %b[%i, %j] : memref<?x8xf64>
    }
    omp.terminator
  }
  return
}
"""


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("fork,in_team", [(1, 1), (1, 1 << 40), (64, 1), (1 << 40, 1)])
def test_private_buffers_are_each_threads_own(monkeypatch, spinning, threads, fork, in_team):
    """A team region's private buffer, filled and updated by every thread in its own frame:
    the interpreter's results (the region once) whether the loops are split, run by thread
    0 alone, forked where the fills alone would not be worth a team (`fork` 64: the fills
    are team code all the same, not run on the calling thread before the fork), or not
    forked at all."""
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD", fork)
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD_IN_TEAM", in_team)
    module = parse_module(textwrap.dedent(PRIVATE))
    jit = compile_module(module, 2, threads=threads)
    rng = np.random.default_rng(2)
    a = rng.standard_normal(8)
    for rows in (0, 1, 3, 50):
        got, want = np.zeros((rows, 8)), np.zeros((rows, 8))
        jit.private(a, got)
        interpret(module, "private", a, want)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, np.tile(a * a * (a * a + 1), (rows, 1)))


def test_constants_are_computed_in_the_outlined_body(every_loop_parallel):
    """The context of an outlined loop carries what the body reads from outside and is not a
    constant: the constant bounds and the stored value are LLVM constants in the body."""
    module = parse_module(textwrap.dedent("""
        func.func @fill(%a: memref<?xf32>) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c3 = arith.constant 3 : index
          %v = arith.constant 2.5 : f32
          %n = memory.dim %a, 0 : memref<?xf32>
          %h = arith.muli %c3, %c1 : index
          loop.parallel (%i) = (%c0) to (%n) step (%h) {
            memory.store %v, %a[%i] : memref<?xf32>
          }
          return
        }"""))
    jit = compile_module(module, 0, threads=2)
    body = jit.llvm_ir[jit.llvm_ir.index("define internal void @__irkit_parallel_"):]
    ctx = re.search(r"= load (\{.*\}), ptr", body).group(1)
    assert ctx == "{ i64, { ptr, ptr, i64, [1 x i64], [1 x i64] }, i1 }"     # n, a, split
    assert "store float 2.500000e+00" in body
    a = np.zeros(10, dtype=np.float32)
    jit.fill(a)
    np.testing.assert_array_equal(a, np.where(np.arange(10) % 3 == 0, 2.5, 0).astype(np.float32))


#: a loop whose inner trip count divides by a run-time value (a BLIS nest's rows per block:
#: the row count over the block count), the division guarded in the body as a BLIS nest's is
DIVIDED = """
func.func @divided(%a: memref<?xf64>, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memory.dim %a, 0 : memref<?xf64>
  loop.parallel (%t) = (%c0) to (%c2) step (%c1) {
    %ok = arith.cmpi sgt, %d, %c0 : index
    loop.if %ok {
      %rows = arith.divui %n, %d : index
      loop.for %i = %c0 to %rows step %c1 {
        %x = memory.load %a[%i] : memref<?xf64>
        memory.store %x, %a[%i] : memref<?xf64>
      }
    }
  }
  return
}
"""


def test_vector_accesses_count_their_elements():
    """A vector load or store is one work unit per element it moves (memory-bound loops get
    threads: `llvm_parallel._op_units`); a scalar access or ALU op is one, a constant none."""
    module = parse_module(textwrap.dedent("""
        func.func @f(%m: memref<64xf32>, %i: index) {
          %v = memory.vector_load %m[%i] : memref<64xf32>, vector<16xf32>
          %w = arith.addf %v, %v : vector<16xf32>
          memory.vector_store %w, %m[%i] : memref<64xf32>, vector<16xf32>
          %x = memory.load %m[%i] : memref<64xf32>
          %c = arith.constant 1.0 : f32
          return
        }
    """))
    units = {op.name: llvm_parallel._op_units(op) for op in module.walk()
             if op.name.startswith(("memory.", "arith."))}
    assert units == {"memory.vector_load": 16, "arith.addf": 1, "memory.vector_store": 16,
                     "memory.load": 1, "arith.constant": 0}


def test_work_estimate_divides_by_run_time_values(monkeypatch, spinning):
    """The estimate counts the inner loop n / d times (d known at run time only): a team of
    two where the rows pay for it, none where they do not; d = 0, where the body never
    divides, does not trap in the estimate either."""
    from irkit.attributes import IntegerAttr
    from irkit.types import I64
    from irkit.backends.llvm_profile import COUNTERS, PROFILE_ATTR, counters_name
    import ctypes
    monkeypatch.setattr(llvm_parallel, "MIN_WORK_PER_THREAD", 1000)
    module = parse_module(textwrap.dedent(DIVIDED))
    loop = next(op for op in module.walk() if op.name == "loop.parallel")
    loop.attributes[PROFILE_ATTR] = IntegerAttr(0, I64)
    jit = compile_module(module, 2, threads=2)
    counters = (ctypes.c_int64 * COUNTERS.count).from_address(
        jit.global_address(counters_name(0)))
    for n, d, team in ((100_000, 2, 2), (100, 1, 1), (100_000, 0, None)):
        ctypes.memset(counters, 0, ctypes.sizeof(counters))
        jit.divided(np.zeros(n), d)              # d = 0: estimated as by 1, no trap
        assert counters[1] == 1 and team in (None, counters[2]), (n, d)


def _lowered_mlp(merge: bool):
    """examples/mlp.irk lowered by the pipeline, its parallel loops merged into team regions
    or not, and a runner for its compiled functions on threads."""
    from irkit.pass_manager import PassManager
    from irkit.runtime.compiled import lower_model_with_graph
    model = irkit.load_model(ROOT / "examples" / "mlp.irk")
    graph, lowered = lower_model_with_graph(model.module)
    if merge:
        PassManager.parse("loop-merge-parallel-regions").run(lowered)
    return model, graph, lowered


def test_mlp_in_team_regions_gives_the_same_bits():
    """The MLP's training step with its parallel loops merged into `omp.parallel` regions:
    the bits of the step without them, at 1, 2 and 4 threads."""
    from irkit.runtime.compiled import CompiledRunner, IRText
    inputs = _inputs("mlp", 600)
    results, regions = [], []
    for merge in (False, True):
        model, graph, lowered = _lowered_mlp(merge)
        regions.append(str(lowered).count("omp.parallel"))   # the dot nest's own, then more
        assert not merge or regions[1] > regions[0]
        for threads in (1, 2, 4) if merge else (1,):
            jm = compile_module(lowered, threads=threads)
            runner = CompiledRunner(lowered, dict(jm.functions), jm, graph=IRText(graph))
            store = {k: np.array(v) for k, v in model.variables.items()}
            losses = [runner.run("train_step", "mlp", inputs, store)["loss"] for _ in range(3)]
            results.append((losses, store))
    for losses, store in results[1:]:
        np.testing.assert_array_equal(losses, results[0][0])
        for k, v in store.items():
            np.testing.assert_array_equal(v, results[0][1][k], err_msg=k)


# ----- models: the interpreter's results, the same bits at every thread count -----------------

REDUCE = """
model red {
  input x: f32[N, 96]
  param w: f32[96, 8] = normal(std=0.1, seed=3)
  h = x @ w
  s = sum(x * x, axis=1)
  m = mean(h, axis=1)
  output s, m, h
}
"""


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """The MLP and the reduction model as files, and a compile cache of their own (each
    model is compiled once; the other thread counts load it)."""
    folder = tmp_path_factory.mktemp("threads")
    (folder / "red.irk").write_text(textwrap.dedent(REDUCE))
    old = os.environ.get("IRKIT_CACHE_DIR")
    os.environ["IRKIT_CACHE_DIR"] = str(folder / "cache")
    yield {"mlp": ROOT / "examples" / "mlp.irk", "red": folder / "red.irk"}
    if old is None:
        del os.environ["IRKIT_CACHE_DIR"]
    else:
        os.environ["IRKIT_CACHE_DIR"] = old


def _inputs(name: str, batch: int) -> dict:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((batch, 64 if name == "mlp" else 96)).astype(np.float32)
    if name == "mlp":
        return {"x": x, "labels": rng.integers(0, 10, batch).astype(np.int32)}
    return {"x": x}


@pytest.mark.parametrize("name", ["mlp", "red"])
def test_models_on_threads_match_the_interpreter(model_files, name):
    batch = 600          # every big loop of these models is split at this size
    inputs = _inputs(name, batch)
    ref = irkit.load_model(model_files[name])
    want = ref.forward(**inputs)
    results = {}
    for threads in (1, 2, 4):
        model = irkit.load_model(model_files[name], engine="jit", threads=threads)
        got = model.forward(**inputs)
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=2e-6, err_msg=k)
        if model.trainable:
            for _ in range(2):
                got["loss"] = model.train_step(**inputs)["loss"]
            got.update({f"var {v}": np.array(model.variables[v]) for v in model.variables})
        results[threads] = got
    if ref.trainable:
        for _ in range(2):
            loss = ref.train_step(**inputs)["loss"]
        np.testing.assert_allclose(results[1]["loss"], loss, rtol=1e-5)
        for v in ref.variables:
            np.testing.assert_allclose(results[1][f"var {v}"], ref.variables[v], rtol=1e-4,
                                       atol=1e-6, err_msg=v)
    for threads in (2, 4):
        for k, v in results[1].items():
            np.testing.assert_array_equal(results[threads][k], v, err_msg=f"{k}, {threads}")


# ----- team sizes, seen by a shim of GOMP_parallel ------------------------------------------------

_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
/* Records the team size of every GOMP_parallel call on stderr, then makes it. */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags) {
  static void (*real)(void (*)(void *), void *, unsigned, unsigned);
  if (!real) real = (void (*)(void (*)(void *), void *, unsigned, unsigned))
                        dlsym(RTLD_NEXT, "GOMP_parallel");
  fprintf(stderr, "GOMP_parallel %u\n", n);
  real(fn, data, n, flags);
}
"""

#: compiles COUNT, then for each thread setting calls it on a small and a large array
_PROBE = """
import sys, textwrap, numpy as np
import irkit.tools
irkit.tools.register_all()
from irkit.parser import parse_module
from irkit.backends.llvm_cpu import compile_module
jit = compile_module(parse_module(textwrap.dedent(sys.argv[1])), 2)
for threads in (0, 1, 3):
    jit.set_threads(threads)
    for rows in (4, 40000):
        print(f"case {threads} {rows}", file=sys.stderr, flush=True)
        jit.count(np.zeros((rows, 8)), 0, 1, 1.0)
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("shim")
    (folder / "shim.c").write_text(_SHIM)
    out = folder / "shim.so"
    proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(folder / "shim.c"),
                           "-ldl"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def _teams(stderr: str) -> dict[tuple[int, int], list[int]]:
    """(threads setting, rows) -> the team sizes asked for during that call."""
    teams: dict = {}
    case = None
    for line in stderr.splitlines():
        if line.startswith("case "):
            case = tuple(int(x) for x in line.split()[1:])
            teams[case] = []
        elif line.startswith("GOMP_parallel ") and case is not None:
            teams[case].append(int(line.split()[1]))
    return teams


@pytest.mark.parametrize("omp_num_threads", ["1", "2"])
def test_team_sizes_follow_omp_num_threads_and_threads(shim, omp_num_threads):
    env = {**os.environ, "LD_PRELOAD": str(shim), "OMP_NUM_THREADS": omp_num_threads,
           **SPINNING}
    env.pop("OMP_WAIT_POLICY", None)
    proc = subprocess.run([sys.executable, "-c", _PROBE, COUNT], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    teams = _teams(proc.stderr)
    default = int(omp_num_threads)
    assert teams[(0, 40000)] == ([default] if default > 1 else [])   # OMP_NUM_THREADS
    assert teams[(1, 40000)] == []                                   # threads=1: inline
    assert teams[(3, 40000)] == [3]                                  # threads= overrides
    for threads in (0, 1, 3):
        assert teams[(threads, 4)] == []                             # too little work


#: COUNT on 2 threads at 40,000 rows (about 10^6 units: a team's worth where the threads spin,
#: not where they sleep) and at 400,000 (a team's worth for both)
_PROBE_SLEEPING = """
import sys, textwrap, numpy as np
import irkit.tools
irkit.tools.register_all()
from irkit.parser import parse_module
from irkit.backends.llvm_cpu import compile_module
jit = compile_module(parse_module(textwrap.dedent(sys.argv[1])), 2, threads=2)
for rows in (40000, 400000):
    print(f"case 2 {rows}", file=sys.stderr, flush=True)
    jit.count(np.zeros((rows, 8)), 0, 1, 1.0)
"""


@pytest.mark.parametrize("wait, forks", [
    ({"GOMP_SPINCOUNT": "1000"}, [2, 2]),
    ({"GOMP_SPINCOUNT": "0"}, [0, 2]),
    ({"OMP_WAIT_POLICY": "passive"}, [0, 2]),
])
def test_sleeping_threads_need_more_work_for_a_team(shim, wait, forks):
    """Where libgomp's threads sleep between regions, a fork costs more, and a loop takes a
    team only with `2 ** SLEEPING_WORK_SHIFT` times the work (llvm_parallel)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT",
                                                           "OMP_WAIT_POLICY")}
    env |= {"LD_PRELOAD": str(shim), **wait}
    proc = subprocess.run([sys.executable, "-c", _PROBE_SLEEPING, COUNT], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    teams = _teams(proc.stderr)
    assert [max(teams[(2, rows)], default=0) for rows in (40000, 400000)] == forks


#: counts the calls of `malloc` of one size (argv-given through IRKIT_TEST_MALLOC_SIZE) and
#: prints the count at exit: how many private buffers of that size a team region allocated
_MALLOC_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static long count, size = -1;
static void report(void) { fprintf(stderr, "mallocs %ld\n", count); }
void *malloc(size_t n) {
  static void *(*real)(size_t);
  if (!real) {
    real = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    const char *s = getenv("IRKIT_TEST_MALLOC_SIZE");
    if (s) { size = atol(s); atexit(report); }
  }
  if ((long)n == size) __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
  return real(n);
}
"""

#: a team region whose private buffer (12345 f64: malloc'd, its size recognizable) every
#: thread fills; called `calls` times at `threads` threads, every loop worth a team
_PROBE_PRIVATE = """
import sys, textwrap, numpy as np
import irkit.tools
irkit.tools.register_all()
from irkit.backends import llvm_parallel
from irkit.backends.llvm_cpu import compile_module
from irkit.parser import parse_module
llvm_parallel.MIN_WORK_PER_THREAD = llvm_parallel.MIN_WORK_PER_THREAD_IN_TEAM = 1
jit = compile_module(parse_module(textwrap.dedent(sys.argv[1])), 2, threads=int(sys.argv[2]))
a, b = np.arange(8.0), np.zeros((64, 8))
for _ in range(int(sys.argv[3])):
    jit.fill(a, b)
assert (b == np.arange(8.0)).all()
"""

FILL = """
func.func @fill(%a: memref<8xf64>, %b: memref<?x8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n = memory.dim %b, 0 : memref<?x8xf64>
  omp.parallel {
    %t = memory.alloc() : memref<12345xf64>
    loop.for %j = %c0 to %c8 step %c1 {
      %x = memory.load %a[%j] : memref<8xf64>
      memory.store %x, %t[%j] : memref<12345xf64>
    }
    loop.parallel (%i, %j) = (%c0, %c0) to (%n, %c8) step (%c1, %c1) {
      %x = memory.load %t[%j] : memref<12345xf64>
      memory.store %x, %b[%i, %j] : memref<?x8xf64>
    }
    memory.dealloc %t : memref<12345xf64>
    omp.terminator
  }
  return
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_team_code_runs_once_a_thread(tmp_path, threads):
    """A forked team region runs its team code (here a private buffer's allocation and
    fill) once on each thread, and not once more on the calling thread around the fork:
    the calls that run the members before and after those worth a fork are made only
    where there are some (an empty one allocated and filled the buffer for nothing, twice
    a call: the dot nest's transposed B on two threads, 13 us against 11)."""
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "shim.c").write_text(_MALLOC_SHIM)
    out = tmp_path / "malloc_shim.so"
    proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out),
                           str(tmp_path / "shim.c"), "-ldl"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    env = {**os.environ, **SPINNING, "LD_PRELOAD": str(out),
           "IRKIT_TEST_MALLOC_SIZE": str(12345 * 8 + 64)}
    proc = subprocess.run([sys.executable, "-c", _PROBE_PRIVATE, FILL, str(threads), "5"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"mallocs (\d+)", proc.stderr).group(1) == str(5 * threads)


# ----- the C API ------------------------------------------------------------------------------

#: rows of the C program's input: enough work (after fusion and vectorization) for its loops to
#: take a team of threads rather than run inline
ROWS = 7000

_C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "red.h"
/* red.so's forward on x = 0.001 * (0, 1, ..., rows * 96 - 1), rows = argv[2], with
   irkit_init(argv[1]); prints s, then the result of irkit_set_threads(-1) and its message. */
int main(int argc, char **argv) {
  int64_t rows = atoll(argv[2]);
  int rc = irkit_init(atoi(argv[1]));
  if (rc) { printf("init %d %s\n", rc, irkit_last_error()); return 0; }
  float *x = malloc(sizeof(float) * rows * 96), *s = malloc(sizeof(float) * rows);
  float *m = malloc(sizeof(float) * rows), *h = malloc(sizeof(float) * rows * 8);
  for (int64_t i = 0; i < rows * 96; i++) x[i] = 0.001f * (float)i;
  irkit_memref_f32_2d dx = {x, x, 0, {rows, 96}, {96, 1}};
  irkit_memref_f32_1d ds = {s, s, 0, {rows}, {1}}, dm = {m, m, 0, {rows}, {1}};
  irkit_memref_f32_2d dh = {h, h, 0, {rows, 8}, {8, 1}};
  rc = red_forward_run(&dx, &ds, &dm, &dh);
  if (rc) { printf("run %d %s\n", rc, irkit_last_error()); return 0; }
  for (int64_t i = 0; i < rows; i++) printf("%.9g\n", s[i]);
  printf("set %d %s\n", irkit_set_threads(-1), irkit_last_error());
  return 0;
}
"""


@pytest.fixture(scope="module")
def c_program(tmp_path_factory):
    from irkit.tools.compile import main as irkit_compile
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("c_threads")
    (folder / "red.irk").write_text(textwrap.dedent(REDUCE))
    assert irkit_compile([str(folder / "red.irk"), "-o", str(folder / "red.so")]) == 0
    (folder / "main.c").write_text(_C_PROGRAM)
    exe = folder / "main"
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", f"-I{folder}",
                           str(folder / "main.c"), str(folder / "red.so"), "-o", str(exe),
                           f"-Wl,-rpath,{folder}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return folder, exe


def test_c_api_thread_setting(c_program, shim):
    """irkit_init's thread count, and the work a team needs: at 1,000 rows the loops take a
    team where libgomp's threads spin, and none where they sleep (irkit_set_threads reads
    OMP_WAIT_POLICY and GOMP_SPINCOUNT as llvm_cpu.threads_sleep does)."""
    folder, exe = c_program
    meta = json.loads((folder / "red.so.json").read_text())
    assert meta["target"]["cpu"] == llvm_cpu.host_cpu()[0]
    quiet = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT",
                                                             "OMP_WAIT_POLICY")}
    for threads, rows, wait, teams in (
            ("1", ROWS, {}, set()), ("2", ROWS, {}, {2}), ("2", 1000, {}, {2}),
            ("2", 1000, {"OMP_WAIT_POLICY": "passive"}, set()),
            ("2", 1000, {"GOMP_SPINCOUNT": "0"}, set())):
        x = (np.float32(0.001) * np.arange(rows * 96, dtype=np.float32)).reshape(rows, 96)
        want = irkit.load(folder / "red.so").forward(x=x)["s"]
        proc = subprocess.run([str(exe), threads, str(rows)], capture_output=True, text=True,
                              timeout=60, env={**quiet, "LD_PRELOAD": str(shim),
                                               "OMP_NUM_THREADS": "1", **wait})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        np.testing.assert_allclose(np.array(lines[:-1], dtype=np.float32), want, rtol=1e-6)
        assert lines[-1].startswith("set 1 irkit_set_threads: threads must be 0")
        assert set(_teams("case 0 0\n" + proc.stderr)[(0, 0)]) == teams, (rows, wait)
