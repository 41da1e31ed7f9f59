"""Training in dev mode: the lecture's models learn to read handwritten digits.

    python examples/train_digits.py                 # logistic regression, then the MLP
    python examples/train_digits.py --models mlp    # the MLP only (the demo's main job)

The data is scikit-learn's bundled digits set (1,797 8x8 images, 10 classes; no download),
pixels scaled to [0, 1], split 75/25 into train and test sets with a fixed seed. Each model
is a `.irk` file whose `train` clause becomes the `@train_step` function (forward graph,
backward graph from the autodiff pass, optimizer update as graph ops); `Model.train_step`
runs it in the interpreter on one minibatch, and `Model.forward` scores the test set after
each epoch.

- `examples/logreg.irk`: softmax regression on MNIST-sized 28x28 inputs (784 features) with
  one-hot labels, `sgd(lr=0.5)`. Each 8x8 digit is drawn in the middle of a blank 28x28
  canvas; the weights of the blank pixels get zero gradients and stay zero, so this is
  logistic regression on the 64 pixels. Target: >= 95% test accuracy.
- `examples/mlp.irk`: 64 -> 128 (ReLU) -> 10 with integer labels, `adam(lr=1e-3)`.
  Target: >= 96% test accuracy.

Both use minibatches of 16 for 20 epochs, shuffled by a seeded generator, so a run is
deterministic. The exit status is 1 when a model misses its target.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import irkit

HERE = Path(__file__).resolve().parent


@dataclass
class Split:
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits_split(seed: int = 0) -> Split:
    """The digits, pixels in [0, 1] (they are 0..16), stratified 75/25 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=seed,
                                              stratify=y)
    return Split(x_tr, y_tr, x_te, y_te)


def on_canvas(x: np.ndarray) -> np.ndarray:
    """8x8 images drawn in the middle of a 28x28 canvas, flattened to 784 features."""
    canvas = np.zeros((len(x), 28, 28), np.float32)
    canvas[:, 10:18, 10:18] = x.reshape(-1, 8, 8)
    return canvas.reshape(len(x), 784)


@dataclass
class Task:
    """How one model file sees the data: its inputs for a batch, and its scores."""

    name: str
    path: Path
    target: float

    def inputs(self, x: np.ndarray, labels: np.ndarray) -> dict:
        if self.name == "logreg":
            return {"x": on_canvas(x), "y": np.eye(10, dtype=np.float32)[labels]}
        return {"x": x, "labels": labels}

    def scores(self, out: dict) -> np.ndarray:
        return out["probs"] if self.name == "logreg" else out["logits"]


TASKS = {
    "logreg": Task("logreg", HERE / "logreg.irk", 0.95),
    "mlp": Task("mlp", HERE / "mlp.irk", 0.96),
}


def train(task: Task, data: Split, epochs: int, batch_size: int, seed: int) -> float:
    """Train one model from its initial parameters; return its final test accuracy."""
    model = irkit.load_model(task.path)
    print(f"--- {task.name}: {model!r}, optimizer {_optimizer(model)} ---")
    rng = np.random.default_rng(seed)
    test = task.inputs(data.x_test, data.y_test)
    n = len(data.x_train)
    accuracy = 0.0
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        losses = []
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            batch = task.inputs(data.x_train[idx], data.y_train[idx])
            losses.append(float(model.train_step(**batch)["loss"]) * len(idx))
        pred = task.scores(model.forward(**test)).argmax(axis=1)
        accuracy = float((pred == data.y_test).mean())
        print(f"epoch {epoch:3}/{epochs}  train loss {sum(losses) / n:.4f}  "
              f"test accuracy {accuracy:6.2%}  ({time.perf_counter() - t0:5.1f} s)")
    steps = epochs * -(-n // batch_size)
    took = time.perf_counter() - t0
    verdict = "reached" if accuracy >= task.target else "MISSED"
    print(f"{task.name}: {accuracy:.2%} test accuracy ({verdict} the {task.target:.0%} target) "
          f"after {steps} steps in {took:.1f} s ({took / steps * 1e3:.2f} ms a step)")
    return accuracy


def _optimizer(model: irkit.Model) -> str:
    from irkit.symbols import lookup_symbol_in
    attr = lookup_symbol_in(model.module, "train_step").attributes["graph.optimizer"]
    d = {k: v.value for k, v in attr.value.items()}
    return d.pop("name") + "(" + ", ".join(f"{k}={v:g}" for k, v in d.items()) + ")"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="logreg,mlp",
                    help="comma-separated, from: " + ", ".join(TASKS))
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0, help="split and shuffling seed")
    args = ap.parse_args(argv)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in TASKS]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r} (choose from {', '.join(TASKS)})")
    data = load_digits_split(args.seed)
    print(f"digits: {len(data.x_train)} training and {len(data.x_test)} test images, "
          f"8x8 pixels in [0, 1]; minibatches of {args.batch_size}, {args.epochs} epochs")
    t0 = time.perf_counter()
    missed = []
    for name in names:
        if train(TASKS[name], data, args.epochs, args.batch_size, args.seed) < TASKS[name].target:
            missed.append(name)
    print(f"total wall time {time.perf_counter() - t0:.1f} s")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
