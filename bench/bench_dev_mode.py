#!/usr/bin/env python3
"""Dev-mode benchmark: `.irk` models compiled to graph IR and run in the interpreter.

    python bench/bench_dev_mode.py [--batches 64,1024] [--repeat 20]

Per bundled example it reports:

- **compile**: `.irk` text to a verified graph module (lark parse, lowering with shape
  inference, verification), and `canonicalize,cse` on the result; best of `--repeat`.
- **forward**: `Model.forward` in the interpreter (input checking, one numpy call per op)
  against the same model written directly in numpy, on the same inputs and parameters,
  best of `--repeat`, with the ratio numpy/irkit (1.0 means no overhead) and the largest
  difference between the two results. Only models with a numpy twin below take part.

It is a benchmark, not a test: it prints numbers and never fails on them.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import irkit
from irkit.frontend.dsl import compile_file, model_modules
from irkit.pass_manager import PassManager
from irkit.tools import register_all

ROOT = Path(__file__).resolve().parents[1]


def _softmax(z: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def logreg_numpy(v: dict, x: np.ndarray, y: np.ndarray) -> dict:
    probs = _softmax(x @ v["W"] + v["b"], axis=1)
    return {"probs": probs, "loss": np.mean(-np.sum(y * np.log(probs), axis=1))}


def mlp_numpy(v: dict, x: np.ndarray, labels: np.ndarray) -> dict:
    logits = np.maximum(x @ v["w1"] + v["b1"], 0) @ v["w2"] + v["b2"]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return {"logits": logits, "loss": -logp[np.arange(len(labels)), labels].mean()}


def attention_inputs(rng, n):
    return {"x": rng.normal(size=(n, 16, 32)).astype(np.float32)}


def _labels(rng, n):
    return rng.integers(0, 10, size=n).astype(np.int32)


# model file -> (numpy twin or None, inputs for a batch of n)
MODELS = {
    "logreg": (logreg_numpy, lambda rng, n: {
        "x": rng.random((n, 784), dtype=np.float32),
        "y": np.eye(10, dtype=np.float32)[_labels(rng, n)]}),
    "mlp": (mlp_numpy, lambda rng, n: {
        "x": rng.normal(size=(n, 64)).astype(np.float32), "labels": _labels(rng, n)}),
    "cnn": (None, lambda rng, n: {
        "images": rng.normal(size=(n, 1, 12, 12)).astype(np.float32),
        "labels": _labels(rng, n)}),
    "attention": (None, attention_inputs),
}


def best(fn, repeat: int) -> tuple[float, object]:
    """The fastest of `repeat` calls of `fn`, and what the last one returned."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def fmt_ms(s: float) -> str:
    return f"{s * 1e3:9.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="64,1024")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    print(f"irkit dev mode on {platform.machine()} {platform.processor() or ''}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'model':10} {'parse+lower+verify':>20} {'canonicalize,cse':>18} {'ops':>5}")
    register_all()
    pipeline = PassManager.parse("canonicalize,cse")
    rows = []
    for name, (twin, make_inputs) in MODELS.items():
        path = str(ROOT / "examples" / f"{name}.irk")
        t_compile, top = best(lambda: compile_file(path), max(3, args.repeat // 4))
        t_opt, _ = best(lambda: pipeline.run(compile_file(path)), max(3, args.repeat // 4))
        t_opt -= t_compile
        n_ops = sum(1 for _ in model_modules(top)[name].walk())
        print(f"{name:10} {fmt_ms(t_compile):>20} {fmt_ms(max(t_opt, 0.0)):>18} {n_ops:5}")
        rows.append((name, twin, make_inputs, irkit.Model(model_modules(top)[name])))

    print(f"\n{'model':10} {'batch':>6} {'irkit forward':>14} {'numpy':>12} "
          f"{'numpy/irkit':>12} {'max |diff|':>11}")
    for name, twin, make_inputs, model in rows:
        for n in batches:
            inputs = make_inputs(np.random.default_rng(0), n)
            t_irkit, out = best(lambda: model.forward(**inputs), args.repeat)
            if twin is None:
                print(f"{name:10} {n:6} {fmt_ms(t_irkit):>14} {'-':>12} {'-':>12} {'-':>11}")
                continue
            params = dict(model.variables)
            t_np, ref = best(lambda: twin(params, **inputs), args.repeat)
            diff = max(float(np.max(np.abs(out[k] - ref[k]))) for k in ref)
            print(f"{name:10} {n:6} {fmt_ms(t_irkit):>14} {fmt_ms(t_np):>12} "
                  f"{t_np / t_irkit:12.2f} {diff:11.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
