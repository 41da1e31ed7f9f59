#!/usr/bin/env python3
"""Fusion benchmark: training steps compiled with and without the fusion passes, one run.

    python bench/bench_fusion.py [--threads 1,2] [--repeat 20] [--batch 128]

Workloads: the MLP 784-256-10 SGD step of bench/run.py at `--batch`, and examples/cnn.irk's
training step (momentum) at batch 64. Engines, each timed in the same worker process:

- `fused`: irkit's JIT with the default pipeline (linalg-fuse-elementwise-ops, linalg-fuse);
- `unfused`: the same with both fusion passes disabled (`load_model(disable=...)`), every
  graph op its own kernel;
- `numpy`: the step by hand (MLP only), `jax.jit` (MLP only), PyTorch eager (CNN only);
- `matmuls only` (MLP only): the step's five matmuls alone (forward `x @ w1`, `h @ w2`;
  backward `g @ w2^T`, `h^T @ g`, `x^T @ dh`, each result summed so that nothing else is
  written), compiled by the same pipeline: no fusion can make the step faster than its
  matmuls, so `unfused / matmuls only` is the most any fusion could gain on this step (the
  elementwise and reduction work is all that fusion removes).

Each thread count runs in its own process pinned to that many cores (bench/run.py's worker
set-up). Per workload it also prints the bytes moved per step as the fusion report counts them
(`passes/fusion_report.py`, every dynamic dim bound to the batch), unfused and fused. Median
(min-max) ms, and unfused / fused. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as table  # noqa: E402  (bench/run.py: models, timing, the hand-written steps)

ROOT = Path(__file__).resolve().parents[1]
UNFUSED = ("linalg-fuse-elementwise-ops", "linalg-fuse")
#: the MLP step's matmuls and nothing else (bench/run.py's MLP, 784-256-10)
MATMULS = """
model matmuls {
  input x: f32[B, 784]
  input h: f32[B, 256]
  input g: f32[B, 10]
  input dh: f32[B, 256]
  param w1: f32[784, 256] = zeros
  param w2: f32[256, 10] = zeros
  forward = sum(x @ w1) + sum(h @ w2)
  backward = sum(g @ transpose(w2)) + sum(transpose(h) @ g) + sum(transpose(x) @ dh)
  output forward, backward
}
"""


def step_bytes(path: Path, model: str, batch: int) -> tuple[int, int]:
    """(unfused, fused) bytes moved by one `@train_step`, by the fusion report's count."""
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.passes import fusion_report, pipeline
    from irkit.passes.fusion_cost import Binding
    module = model_modules(compile_file(str(path)))[model]
    pipeline.pass_manager(None, "autodiff").run(module)
    binding = Binding(default=batch)
    out = []
    for disable in (UNFUSED, ()):
        m = module.clone()
        pipeline.pass_manager("autodiff", "linalg", disable=disable).run(m)
        fn = next(f for f in fusion_report.functions(m)
                  if f.properties["sym_name"].value == "train_step")
        _, cost = fusion_report.snapshot(fn, binding)
        out.append((cost.read.bytes + cost.written.bytes).evaluate(binding))
    return out[0], out[1]


def worker(threads: int, batch: int, repeat: int) -> dict:
    import numpy as np

    import irkit
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        mlp = Path(tmp) / "mlp.irk"
        mlp.write_text(table.MODELS["mlp"])
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, 784), dtype=np.float32)
        labels = rng.integers(0, 10, size=batch).astype(np.int32)
        engines = {}
        for name, disable in (("fused", ()), ("unfused", UNFUSED)):
            m = irkit.load_model(mlp, engine="jit", threads=threads, disable=disable)
            engines[name] = (lambda m=m: m.train_step(x=x, labels=labels))
        params = {k: np.array(v) for k, v in m.variables.items()}
        mm_path = Path(tmp) / "matmuls.irk"
        mm_path.write_text(MATMULS)
        mm = irkit.load_model(mm_path, engine="jit", threads=threads)
        mm_in = {"x": x, "g": rng.standard_normal((batch, 10), dtype=np.float32),
                 **{k: rng.standard_normal((batch, 256), dtype=np.float32) for k in ("h", "dh")}}
        engines["matmuls only"] = lambda: mm.forward(**mm_in)
        np_step = table._sgd_numpy({k: v.copy() for k, v in params.items()}, True)
        engines["numpy"] = lambda: np_step(x, labels)
        jax_step = table._sgd_jax(params, True)
        if jax_step is not None:
            jax = table._jax()
            jx, jl = jax.device_put(x), jax.device_put(labels)
            engines["jax"] = lambda: jax_step(jx, jl)
        results["mlp"] = {k: table.timed(f, repeat) for k, f in engines.items()}

        cnn = ROOT / "examples" / "cnn.irk"
        images = rng.standard_normal((64, 1, 12, 12), dtype=np.float32)
        clabels = rng.integers(0, 10, size=64).astype(np.int32)
        engines = {}
        for name, disable in (("fused", ()), ("unfused", UNFUSED)):
            m = irkit.load_model(cnn, engine="jit", threads=threads, disable=disable)
            engines[name] = (lambda m=m: m.train_step(images=images, labels=clabels))
        torch_engines = table.cnn_engines(threads, Path(tmp))
        if "torch" in torch_engines:
            engines["torch"] = torch_engines["torch"]
        results["cnn"] = {k: table.timed(f, repeat) for k, f in engines.items()}
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.worker])
        print(json.dumps(worker(args.worker, args.batch, args.repeat)))
        return 0
    load = os.getloadavg()[0]
    threads = [int(t) for t in args.threads.split(",")]
    runs = {}
    for t in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t),
                   MKL_NUM_THREADS=str(t))
        r = subprocess.run([sys.executable, __file__, "--worker", str(t), "--batch",
                            str(args.batch), "--repeat", str(args.repeat)],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(r.stderr[-3000:])
        runs[t] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"fusion benchmark; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print("| workload | engine | " + " | ".join(f"{t} thread(s)" for t in threads) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in threads) + " |")
    for w, label in (("mlp", f"MLP 784-256-10 SGD, B={args.batch}"),
                     ("cnn", "examples/cnn.irk, B=64")):
        for name in runs[threads[0]][w]:
            cells = []
            for t in threads:
                ts = runs[t][w][name]
                med = statistics.median(ts)
                cells.append(f"{med * 1e3:.3f} ms ({min(ts) * 1e3:.3f}-{max(ts) * 1e3:.3f})")
            print(f"| {label} | {name} | " + " | ".join(cells) + " |")
        speed = [statistics.median(runs[t][w]["unfused"]) / statistics.median(runs[t][w]["fused"])
                 for t in threads]
        print(f"| {label} | unfused / fused | " + " | ".join(f"x{s:.2f}" for s in speed) + " |")
        if "matmuls only" in runs[threads[0]][w]:
            ceiling = [statistics.median(runs[t][w]["unfused"])
                       / statistics.median(runs[t][w]["matmuls only"]) for t in threads]
            print(f"| {label} | unfused / matmuls only (fusion's ceiling) | "
                  + " | ".join(f"x{c:.2f}" for c in ceiling) + " |")
    with tempfile.TemporaryDirectory() as tmp:
        mlp = Path(tmp) / "mlp.irk"
        mlp.write_text(table.MODELS["mlp"])
        for label, path, model, batch in (("MLP", mlp, "mlp", args.batch),
                                          ("CNN", ROOT / "examples" / "cnn.irk", "cnn", 64)):
            unfused, fused = step_bytes(path, model, batch)
            print(f"\n{label} train step, bytes moved per step (fusion report's count): "
                  f"unfused {unfused}, fused {fused} ({unfused / fused:.2f}x less)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
