#!/usr/bin/env python3
"""Training-step benchmark: examples/mlp.irk in dev mode and compiled against numpy and PyTorch.

    python bench/bench_train.py [--batches 32,256] [--repeat 30] [--engines interpreter,jit]

One step is forward, backward and an Adam update of the four parameters of the MLP
(64 -> 128 -> 10, ReLU, mean softmax cross-entropy, integer labels). Per batch size it
reports the best time of `--repeat` steps for:

- **irkit** per engine: `Model.train_step` (the `@train_step` function that the `train`
  clause becomes: forward graph, backward graph built by the autodiff pass, optimizer
  update as graph ops and variable assignments) in the interpreter (`interpreter`: one
  numpy call per op) and compiled by the LLVM backend in process (`jit`: lowered to loops,
  memory planned, -O2 for the host CPU, one thread);
- **numpy**: the same step written by hand (what a person would write without a framework);
- **torch**: `torch.nn.functional` forward, `loss.backward()`, `torch.optim.Adam.step()`,
  when PyTorch is installed (float32, CPU, threads as PyTorch sets them).

Ratios are peer time / irkit time (1.0: as fast as the peer), for each engine. All three start from the same
parameters, and the loss after the timed steps is printed for each as a sanity check: they
run the same number of steps on the same batch, so the losses agree to float32 rounding.
It is a benchmark, not a test: it never fails on its numbers.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import irkit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dev_mode import best  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


class NumpyMLP:
    """The step by hand: forward, backprop, Adam (PyTorch's formulas)."""

    def __init__(self, params: dict) -> None:
        self.p = {k: v.copy() for k, v in params.items()}
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, x: np.ndarray, labels: np.ndarray) -> float:
        p = self.p
        z1 = x @ p["w1"] + p["b1"]
        h = np.maximum(z1, 0)
        logits = h @ p["w2"] + p["b2"]
        z = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        probs = e / e.sum(axis=1, keepdims=True)
        n = len(labels)
        loss = -np.log(probs[np.arange(n), labels]).mean()
        d_logits = probs
        d_logits[np.arange(n), labels] -= 1
        d_logits /= n
        grads = {"w2": h.T @ d_logits, "b2": d_logits.sum(axis=0)}
        d_z1 = (d_logits @ p["w2"].T) * (z1 > 0)
        grads["w1"] = x.T @ d_z1
        grads["b1"] = d_z1.sum(axis=0)
        self.t += 1
        for k, g in grads.items():
            self.m[k] = B1 * self.m[k] + (1 - B1) * g
            self.v[k] = B2 * self.v[k] + (1 - B2) * g * g
            m_hat = self.m[k] / (1 - B1 ** self.t)
            v_hat = self.v[k] / (1 - B2 ** self.t)
            p[k] -= (LR * m_hat / (np.sqrt(v_hat) + EPS)).astype(p[k].dtype)
        return float(loss)


def torch_step_fn(params: dict):
    try:
        import torch
    except ImportError:
        return None
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.Adam(tp.values(), lr=LR, betas=(B1, B2), eps=EPS)

    def step(x, labels):
        opt.zero_grad()
        h = torch.relu(x @ tp["w1"] + tp["b1"])
        loss = torch.nn.functional.cross_entropy(h @ tp["w2"] + tp["b2"], labels)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step, torch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="32,256")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--engines", default="interpreter,jit",
                    help="irkit engines to time (interpreter, jit)")
    args = ap.parse_args()
    engines = args.engines.split(",")
    print(f"MLP 64-128-10 training step (forward + backward + Adam) on {platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    models = {e: irkit.load_model(ROOT / "examples" / "mlp.irk", engine=e) for e in engines}
    print(f"{'batch':>6} {'engine':>12} {'irkit':>10} {'numpy':>10} {'torch':>10} "
          f"{'numpy/irkit':>12} {'torch/irkit':>12}   final loss irkit / numpy / torch")
    for n in (int(b) for b in args.batches.split(",")):
        rng = np.random.default_rng(0)
        x = rng.normal(size=(n, 64)).astype(np.float32)
        labels = rng.integers(0, 10, size=n).astype(np.int32)
        fresh = irkit.load_model(ROOT / "examples" / "mlp.irk")
        params = {k: np.array(fresh.variables[k]) for k in ("w1", "b1", "w2", "b2")}
        ref = NumpyMLP(params)
        t_np, loss_np = best(lambda: ref.step(x, labels), args.repeat)
        t_t = loss_t = None
        torch_fn = torch_step_fn(params)
        if torch_fn is not None:
            step, torch = torch_fn
            tx, tl = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
            t_t, loss_t = best(lambda: step(tx, tl), args.repeat)
        for engine, model in models.items():
            for k in fresh.variables:                # every engine from the same state
                model.variables[k] = np.array(fresh.variables[k])
            t_ir, loss_ir = best(lambda: float(model.train_step(x=x, labels=labels)["loss"]),
                                 args.repeat)
            torch_cols = f"{t_t * 1e3:8.2f}ms" if t_t is not None else f"{'-':>10}"
            ratio_t = f"{t_t / t_ir:12.2f}" if t_t is not None else f"{'-':>12}"
            loss_t_s = f"{loss_t:.5f}" if loss_t is not None else "-"
            print(f"{n:6} {engine:>12} {t_ir * 1e3:8.3f}ms {t_np * 1e3:8.3f}ms {torch_cols:>10} "
                  f"{t_np / t_ir:12.2f} {ratio_t}   {loss_ir:.5f} / {loss_np:.5f} / {loss_t_s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
