"""Data parallel training on MPI ranks: the MLP's compiled step at B=1024 on 1 and 2 ranks of
this machine, and the partition report's bytes per step against the analytic count.

    python bench/bench_parallel.py            # starts the 2-rank run with mpiexec itself

1 rank: `load_model("examples/mlp.irk", engine="jit")` on the whole batch of 1024; 2 ranks:
`mpiexec -n 2`, each rank `data_parallel=2` on its 512 rows, the gradients summed by the
compiled code's MPI_Allreduce. The median of 30 steps after 3 warm-ups; OMP_NUM_THREADS=1 in
both, so that 2 ranks use 2 cores and 1 rank 1 (the load average is printed: on a shared
machine the ratio says as much about the neighbours as about irkit). The bytes: what
`irkit.passes.parallel_report` counts for the data parallel train_step, against 4 bytes per
parameter counted from the DSL's shapes plus the loss's 4.
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


def worker() -> None:
    """One of the 2 ranks (under mpiexec)."""
    from mpi4py import MPI
    import irkit
    world = MPI.COMM_WORLD
    r, n = world.Get_rank(), world.Get_size()
    m = irkit.load_model(MLP, engine="jit", data_parallel=n, cache=False)
    rows = BATCH // n
    ms = median_step_ms(m, _batch(slice(r * rows, (r + 1) * rows)), world.Barrier)
    times = world.gather(ms)
    if r == 0:
        print(f"STEP_MS {max(times):.4f}")


def report_bytes() -> tuple[int, int]:
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.pass_manager import PassManager
    from irkit.passes import pipeline, register_all
    from irkit.passes.parallel_report import collective_traffic
    from irkit.runtime.distributed import data_parallel_passes
    register_all()
    module = model_modules(compile_source(MLP.read_text(), str(MLP)))["mlp"]
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(module)
    PassManager.parse(f"builtin.module({data_parallel_passes(2)})").run(module)
    counted = sum(t.payload(BATCH) for t in collective_traffic(module)
                  if t.function == "train_step")
    params = 64 * 128 + 128 + 128 * 10 + 10
    return counted, 4 * params + 4


def main() -> int:
    if "--worker" in sys.argv:
        worker()
        return 0
    import irkit
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    m = irkit.load_model(MLP, engine="jit", threads=1, cache=False)
    one = median_step_ms(m, _batch(slice(None)))
    mpiexec = Path(sys.executable).with_name("mpiexec")
    proc = subprocess.run([str(mpiexec), "-n", "2", sys.executable, __file__, "--worker"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("STEP_MS")]
    if proc.returncode or not line:
        print(proc.stdout + proc.stderr)
        return 1
    two = float(line[0].split()[1])
    print(f"MLP train_step, B={BATCH}: 1 rank {one:.3f} ms, 2 ranks {two:.3f} ms "
          f"(speedup {one / two:.2f}x)")
    counted, analytic = report_bytes()
    print(f"all_reduce bytes per step: report {counted}, analytic {analytic} "
          f"({'equal' if counted == analytic else 'DIFFERENT'})")
    return 0 if counted == analytic else 1


if __name__ == "__main__":
    sys.exit(main())
