#!/usr/bin/env python3
"""Where compile time goes: each phase of compiling a model file with the JIT, one markdown
row per model, and the wall time of fresh processes (cold and warm compile cache).

    python bench/compile_time.py [examples/mlp.irk examples/cnn.irk ...] [--no-processes]
                                 [--verify-each]

Phases (seconds, in this process, cold: nothing cached), in two tables: CPU time (every
thread of the process together; what a shared machine's load changes least) and wall time:

- `dsl`: the front end (lark parse, graph IR, verification);
- one column per row of the pipeline table (`irkit.passes.pipeline.STAGES`): its passes,
  `verify` (the verification after each row, or after each pass with `--verify-each` as
  before the JIT's pipeline verified by row; inside the other columns) shown apart; the
  backend does not verify its input again (`_run_rows` just did);
- `translate`, `optimize`, `codegen`: the LLVM backend compiling what the first step needs
  (the JIT compiles each entry on its first call: `train_step` and what it calls where the
  model trains, else `forward`): IRBuilder translation with the parse of its text, the
  pass pipeline, the host functions at -O1, machine code; its
  `partitions` compiled side by side (`llvm_partition`; `--partitions N`: N of the
  outlined loops and at most N more of the host functions): their wall time is the
  slowest partition's, their CPU time all of theirs, and `llvm_critical` the CPU time of
  the slowest partition's parse, optimization and code generation, what LLVM takes where
  each partition has a core;
- `cache`: `load_model` storing this compile (printing the entry's texts, writing it, and
  loading it); `load`: MCJIT loading the object, the interface parsed;
- `total` (the cold compile, `cache` included), next to `warm`: `load_model` again, a hit
  on the entry just written.

Then, unless `--no-processes`: a fresh `python -c` to the first MLP training step, cold and
warm, and `irkit-compile` of each model to a shared library, cold and warm, each with its
wall time and the CPU time it and its children (cc, the linker) used: on a busy machine the
wall time swings by 2x from run to run, the CPU time far less, and the two together show
what overlapping LLVM with the rest (`llvm_cpu.start_object`) hides. It prints the load
average it ran under; it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FIRST_STEP = """
import time, numpy as np
t0 = time.perf_counter()
import irkit
m = irkit.load_model({path!r}, engine="jit")
x = np.zeros((32, 64), np.float32); labels = np.zeros(32, np.int32)
m.train_step(x=x, labels=labels)
print(time.perf_counter() - t0)
"""


class _Clock:
    """Wall and CPU seconds of phases, by name: a Python phase's CPU time is this thread's
    (`timed`; LLVM may be compiling an earlier model on other threads meanwhile), the LLVM
    steps' and the total's every thread's."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def add(self, name: str, wall: float, cpu: float) -> None:
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu

    def timed(self, name: str, fn, *args, **kwargs):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            self.add(name, time.perf_counter() - t, time.thread_time() - c)


def phases(path: Path, verify_each: bool) -> _Clock:
    """The phase times (wall and CPU s) of one cold JIT compile of `path`'s only model, and
    of a warm load."""
    import irkit
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.ir import Operation
    from irkit.passes import pipeline
    from irkit.runtime import compile_cache, engines
    from irkit.runtime.compiled import compile_models
    clock = _Clock()
    real_verify = Operation.verify

    def timed_verify(self, *args, **kwargs):
        return clock.timed("verify", real_verify, self, *args, **kwargs)

    def make_pm(start, stop):
        pm = pipeline.pass_manager(start, stop, verify_each=verify_each)
        run = pm.run
        pm.run = lambda op: clock.timed(stop, run, op)
        return pm
    text = path.read_text()
    t0, c0 = time.perf_counter(), time.process_time()
    models = clock.timed("dsl", lambda: model_modules(compile_source(text, str(path))))
    Operation.verify = timed_verify
    try:
        compiled = compile_models(models, make_pm=make_pm)
    finally:
        Operation.verify = real_verify
    name = next(iter(models))
    entry = "train_step" if "train_step" in compiled.runner(name).entries else "forward"
    code = compiled.entry_object(name, entry)
    ms, cpu_ms = code.timings, code.timings["cpu_ms"]
    # the LLVM steps: wall, the slowest partition's; CPU, every partition's together
    clock.add("translate", (ms["translate_ms"] + ms["parse_ms"]) / 1e3,
              (cpu_ms["translate_ms"] + cpu_ms["parse_ms"]) / 1e3)
    for step in ("optimize", "codegen"):
        clock.add(step, ms[step + "_ms"] / 1e3, cpu_ms[step + "_ms"] / 1e3)
    clock.add("partitions", ms["partitions"], ms["partitions"])
    # on an idle machine with a core per partition, LLVM takes its slowest partition's time
    clock.cpu["llvm_critical"] = cpu_ms["slowest_partition_ms"] / 1e3
    with tempfile.TemporaryDirectory() as cache:
        os.environ["IRKIT_CACHE_DIR"] = cache
        # the entry `load_model` itself writes (its key, its options), this compile in it
        engines.compile_models = lambda *args, **kwargs: compiled
        compile_cache.stats.clear()
        try:
            clock.timed("cache", irkit.load_model, path, engine="jit")
        finally:
            engines.compile_models = compile_models
        assert compile_cache.stats["stores"] == 1, "the compile was not stored"
        clock.timed("load", lambda: compiled.runner(name).function(entry))
        clock.add("total", time.perf_counter() - t0, time.process_time() - c0)
        clock.timed("warm", irkit.load_model, path, engine="jit")
        assert compile_cache.stats["hits"] == 1, "the warm load missed the cache"
    return clock


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def processes(paths: list[Path]) -> list[tuple[str, float, float]]:
    """(what, wall seconds, CPU seconds) of fresh processes: the first MLP step, and
    irkit-compile to .so."""
    rows = []
    compiler = Path(sys.executable).with_name("irkit-compile")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, IRKIT_CACHE_DIR=cache)
        code = FIRST_STEP.format(path=str(ROOT / "examples" / "mlp.irk"))
        for label in ("cold", "warm"):
            t0, c0 = time.perf_counter(), _children_cpu()
            subprocess.run([sys.executable, "-c", code], env=env, check=True,
                           capture_output=True)
            rows.append((f"fresh process to first MLP train step, JIT, {label}",
                         time.perf_counter() - t0, _children_cpu() - c0))
        for path in paths:
            for label in ("cold", "warm"):
                t0, c0 = time.perf_counter(), _children_cpu()
                r = subprocess.run([str(compiler), str(path), "-o",
                                    str(Path(out) / f"{path.stem}.so")],
                                   env=env, capture_output=True, text=True)
                failed = "" if r.returncode == 0 else " (failed)"
                rows.append((f"irkit-compile {path.name} to .so, {label}{failed}",
                             time.perf_counter() - t0, _children_cpu() - c0))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", type=Path,
                    default=[ROOT / "examples" / n for n in ("mlp.irk", "cnn.irk",
                                                             "attention.irk", "logreg.irk")])
    ap.add_argument("--no-processes", action="store_true")
    ap.add_argument("--verify-each", action="store_true",
                    help="verify after every pass, not after every row")
    ap.add_argument("--partitions", type=int,
                    help="compile each module in this many partitions (default: a core each)")
    args = ap.parse_args()
    from irkit.passes import pipeline
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    stages = [s.name for s in pipeline.STAGES if s.passes]
    if args.partitions is not None:
        from irkit.backends import llvm_cpu
        llvm_cpu.compile_partitions = lambda: args.partitions
    cols = ["dsl", *stages, "verify", "translate", "optimize", "codegen", "partitions",
            "llvm_critical", "cache", "load", "total", "warm"]
    clocks = [(path, phases(path, args.verify_each)) for path in args.models]
    for kind in ("cpu", "wall"):
        print(f"\n{kind} s:\n\n| model | " + " | ".join(cols) + " |")
        print("| --- |" + " --- |" * len(cols))
        for path, clock in clocks:
            times = getattr(clock, kind)
            print(f"| {path.name} | " + " | ".join(
                f"{times[c]:.0f}" if c == "partitions" else "-" if c not in times else
                f"{times[c]:.3f}" for c in cols) + " |")
    if not args.no_processes:
        print("\n| fresh process | wall s | CPU s |\n| --- | --- | --- |")
        for what, dt, cpu in processes(args.models):
            print(f"| {what} | {dt:.2f} | {cpu:.2f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
