"""Data and tensor parallel training on MPI ranks: the MLP's compiled step at B=1024 on 1 and
2 ranks of this machine, and the partition report's bytes per step against the analytic
count.

    python bench/bench_parallel.py            # starts the 2-rank runs with mpiexec itself

1 rank: `load_model("examples/mlp.irk", engine="jit")` on the whole batch of 1024. 2 ranks,
`mpiexec -n 2`: data parallel, each rank `data_parallel=2` on its 512 rows, the gradients
summed by the compiled code's MPI_Allreduce; tensor parallel, each rank
`examples/parallel/mlp_tp.irk` (the same MLP, w1 split by columns and w2 by rows, Megatron-
LM's) on the whole batch, one MPI_Allreduce of the logits per step. The median of 30 steps
after 3 warm-ups; OMP_NUM_THREADS=1 in all, so that 2 ranks use 2 cores and 1 rank 1 (the
load average is printed: on a shared machine the ratio says as much about the neighbours as
about irkit). The bytes: what `irkit.passes.parallel_report` counts for each train_step,
against 4 bytes per parameter counted from the DSL's shapes plus the loss's 4 (data), and
the B x 10 logits' 4 bytes each (tensor).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MLP = ROOT / "examples" / "mlp.irk"
MLP_TP = ROOT / "examples" / "parallel" / "mlp_tp.irk"
BATCH, STEPS, WARMUP = 1024, 30, 3


def _batch(rows: slice):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, 64)).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    return {"x": x[rows], "labels": y[rows]}


def median_step_ms(model, batch, barrier=None) -> float:
    times = []
    for i in range(WARMUP + STEPS):
        if barrier is not None:
            barrier()
        t0 = time.perf_counter()
        model.train_step(**batch)
        if i >= WARMUP:
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def worker(kind: str) -> None:
    """One of the 2 ranks (under mpiexec), data or tensor parallel."""
    from mpi4py import MPI
    import irkit
    world = MPI.COMM_WORLD
    r, n = world.Get_rank(), world.Get_size()
    if kind == "data":
        m = irkit.load_model(MLP, engine="jit", data_parallel=n, cache=False)
        rows = BATCH // n
        batch = _batch(slice(r * rows, (r + 1) * rows))
    else:
        m = irkit.load_model(MLP_TP, engine="jit", cache=False)
        batch = _batch(slice(None))
    ms = median_step_ms(m, batch, world.Barrier)
    times = world.gather(ms)
    if r == 0:
        print(f"STEP_MS {max(times):.4f}")


def report_bytes(kind: str) -> tuple[int, int]:
    """(bytes the report counts for the train_step, the analytic count)."""
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.pass_manager import PassManager
    from irkit.passes import pipeline, register_all
    from irkit.passes.parallel_report import collective_traffic
    from irkit.runtime.distributed import partition_passes
    register_all()
    path = MLP if kind == "data" else MLP_TP
    module = model_modules(compile_source(path.read_text(), str(path)))[path.stem]
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(module)
    passes = partition_passes(2 if kind == "data" else None)
    PassManager.parse(f"builtin.module({passes})").run(module)
    counted = sum(t.payload(BATCH) for t in collective_traffic(module)
                  if t.function == "train_step")
    params = 64 * 128 + 128 + 128 * 10 + 10
    return counted, 4 * params + 4 if kind == "data" else BATCH * 10 * 4


def two_ranks_ms(kind: str) -> float | None:
    mpiexec = Path(sys.executable).with_name("mpiexec")
    proc = subprocess.run([str(mpiexec), "-n", "2", sys.executable, __file__, "--worker", kind],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("STEP_MS")]
    if proc.returncode or not line:
        print(proc.stdout + proc.stderr)
        return None
    return float(line[0].split()[1])


def main() -> int:
    if "--worker" in sys.argv:
        worker(sys.argv[sys.argv.index("--worker") + 1])
        return 0
    import irkit
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    m = irkit.load_model(MLP, engine="jit", threads=1, cache=False)
    one = median_step_ms(m, _batch(slice(None)))
    status = 0
    for kind in ("data", "tensor"):
        two = two_ranks_ms(kind)
        if two is None:
            return 1
        print(f"MLP train_step, B={BATCH}, {kind} parallel: 1 rank {one:.3f} ms, 2 ranks "
              f"{two:.3f} ms (speedup {one / two:.2f}x)")
        counted, analytic = report_bytes(kind)
        print(f"  all_reduce bytes per step: report {counted}, analytic {analytic} "
              f"({'equal' if counted == analytic else 'DIFFERENT'})")
        status |= counted != analytic
    return status


if __name__ == "__main__":
    sys.exit(main())
