#!/usr/bin/env python3
"""Where compile time goes: each phase of compiling a model file with the JIT, one markdown
row per model, and the wall time of fresh processes (cold and warm compile cache).

    python bench/compile_time.py [examples/mlp.irk examples/cnn.irk ...] [--no-processes]
                                 [--verify-each]

Phases (seconds, in this process, cold: nothing cached):

- `dsl`: the front end (lark parse, graph IR, verification);
- one column per row of the pipeline table (`irkit.passes.pipeline.STAGES`): its passes,
  `verify` (the verification after each row, or after each pass with `--verify-each` as
  before the JIT's pipeline verified by row; inside the other columns) shown apart; the
  backend does not verify its input again (`_run_rows` just did);
- `translate`, `optimize`, `codegen`: the LLVM backend (IRBuilder translation with the parse
  of its text, the -O2 pass pipeline, machine code);
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


def phases(path: Path, verify_each: bool) -> dict[str, float]:
    """The phase times (s) of one cold JIT compile of `path`'s only model, and a warm load."""
    import irkit
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.ir import Operation
    from irkit.passes import pipeline
    from irkit.runtime import compile_cache, engines
    from irkit.runtime.compiled import compile_models
    out: dict[str, float] = {}
    verify_s = [0.0]
    real_verify = Operation.verify

    def timed_verify(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return real_verify(self, *args, **kwargs)
        finally:
            verify_s[0] += time.perf_counter() - t

    def make_pm(start, stop):
        pm = pipeline.pass_manager(start, stop, verify_each=verify_each)
        run = pm.run

        def timed_run(op):
            t = time.perf_counter()
            run(op)
            out[stop] = out.get(stop, 0.0) + time.perf_counter() - t
        pm.run = timed_run
        return pm
    text = path.read_text()
    t0 = time.perf_counter()
    models = model_modules(compile_source(text, str(path)))
    out["dsl"] = time.perf_counter() - t0
    Operation.verify = timed_verify
    try:
        compiled = compile_models(models, make_pm=make_pm)
    finally:
        Operation.verify = real_verify
    out["verify"] = verify_s[0]
    ms = compiled.code.timings
    out["translate"] = (ms["translate_ms"] + ms["parse_ms"]) / 1e3
    out["optimize"] = ms["optimize_ms"] / 1e3
    out["codegen"] = ms["codegen_ms"] / 1e3
    with tempfile.TemporaryDirectory() as cache:
        os.environ["IRKIT_CACHE_DIR"] = cache
        # the entry `load_model` itself writes (its key, its options), this compile in it
        engines.compile_models = lambda *args, **kwargs: compiled
        compile_cache.stats.clear()
        t = time.perf_counter()
        try:
            irkit.load_model(path, engine="jit")
        finally:
            engines.compile_models = compile_models
        out["cache"] = time.perf_counter() - t
        assert compile_cache.stats["stores"] == 1, "the compile was not stored"
        t = time.perf_counter()
        compiled.runner(next(iter(models)))
        out["load"] = time.perf_counter() - t
        out["total"] = time.perf_counter() - t0
        t = time.perf_counter()
        irkit.load_model(path, engine="jit")
        out["warm"] = time.perf_counter() - t
        assert compile_cache.stats["hits"] == 1, "the warm load missed the cache"
    return out


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
    args = ap.parse_args()
    from irkit.passes import pipeline
    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    stages = [s.name for s in pipeline.STAGES if s.passes]
    cols = ["dsl", *stages, "verify", "translate", "optimize", "codegen", "cache", "load",
            "total", "warm"]
    print("| model | " + " | ".join(cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for path in args.models:
        p = phases(path, args.verify_each)
        print(f"| {path.name} | " + " | ".join(f"{p.get(c, 0.0):.3f}" for c in cols) + " |")
    if not args.no_processes:
        print("\n| fresh process | wall s | CPU s |\n| --- | --- | --- |")
        for what, dt, cpu in processes(args.models):
            print(f"| {what} | {dt:.2f} | {cpu:.2f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
