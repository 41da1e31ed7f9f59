#!/usr/bin/env python3
"""What one call of compiled code costs from Python, where the work itself is next to none.

    python bench/call_overhead.py [--calls 2000] [--rounds 7] [--threads 1]

Three JIT-compiled models at tiny sizes, so that the time of a call is the runtime's own work
(checking the inputs, sizing and allocating the outputs, building the C arguments) plus a
few microseconds of compiled code:

- `noop`: `y = x + 1` on one f32;
- `mlp-forward`: bench/run.py's MLP 784-256-10 `forward` at batch 1;
- `logreg-step`: bench/run.py's logistic regression 784 -> 10, one SGD `train_step` at
  batch 1.

Each prints the median over `--rounds` rounds of the mean time of `--calls` calls, in
microseconds, with the min-max range of the rounds, and the 1-minute load average (a loaded
machine makes every number larger). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: its models)

import irkit  # noqa: E402

NOOP = """
model noop {
  input x: f32[1]
  y = x + 1.0
  output y
}"""


def _model(text: str, threads: int, tmp: Path):
    path = tmp / "m.irk"
    path.write_text(text)
    return irkit.load_model(path, engine="jit", threads=threads)


def calls(threads: int, tmp: Path) -> dict:
    """name -> a function making one call."""
    x1 = np.ones(1, np.float32)
    noop = _model(NOOP, threads, tmp)
    mlp = _model(bench.MODELS["mlp"], threads, tmp)
    logreg = _model(bench.MODELS["logreg"], threads, tmp)
    x = np.random.default_rng(0).standard_normal((1, 784), dtype=np.float32)
    labels = np.zeros(1, np.int32)
    return {"noop": lambda: noop.forward(x=x1),
            "mlp-forward": lambda: mlp.forward(x=x, labels=labels),
            "logreg-step": lambda: logreg.train_step(x=x, labels=labels)}


def timed(fn, n: int, rounds: int) -> list[float]:
    """The mean microseconds of `n` calls of `fn`, for each of `rounds` rounds."""
    for _ in range(n // 10):
        fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fns = calls(args.threads, Path(tmp))
        print(f"load average {os.getloadavg()[0]:.2f}, {args.threads} thread(s)")
        for name, fn in fns.items():
            t = timed(fn, args.calls, args.rounds)
            print(f"{name:12s} {statistics.median(t):8.1f} us per call  "
                  f"({min(t):.1f}-{max(t):.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
