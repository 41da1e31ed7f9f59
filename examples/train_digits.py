"""Train the lecture's models on handwritten digits: compiled to a shared library by default.

    python examples/train_digits.py                       # the MLP and logistic regression, as .so
    python examples/train_digits.py --models mlp          # the MLP only (the demo's main job)
    python examples/train_digits.py --engine interpreter  # dev mode: every op through numpy
    python examples/train_digits.py --engine jit          # compiled in process (MCJIT)
    mpiexec -n 2 python examples/train_digits.py --data-parallel 2   # on 2 MPI ranks

With `--engine so` (the default) each model file is compiled by irkit-compile's own entry point
into `BUILD/<model>.so` (with `<model>.h` and `<model>.so.json`; the same as
`irkit-compile examples/<model>.irk -o build/<model>.so`) and loaded with `irkit.load`. The
`train` clause is the `@train_step` function (forward graph, backward graph from the autodiff
pass, the optimizer's update), lowered to loops and compiled; `Model.train_step` calls it on
one minibatch, `Model.forward` scores the test set after each epoch. All three engines have
the same API and learn the same way (same data order, same initial parameters).

The data is scikit-learn's bundled digits set (1,797 8x8 images, 10 classes; no download),
pixels scaled to [0, 1], split 75/25 into train and test sets with a fixed seed.

- `examples/logreg.irk`: softmax regression on MNIST-sized 28x28 inputs (784 features) with
  one-hot labels, `sgd(lr=0.5)`. Each 8x8 digit is drawn in the middle of a blank 28x28
  canvas; the weights of the blank pixels get zero gradients and stay zero, so this is
  logistic regression on the 64 pixels. Target: >= 95% test accuracy.
- `examples/mlp.irk`: 64 -> 128 (ReLU) -> 10 with integer labels, `adam(lr=1e-3)`.
  Target: >= 96% test accuracy.

Both use minibatches of 16 for 20 epochs, shuffled by a seeded generator, so a run is
deterministic. Per epoch: a progress bar on stderr (when it is a terminal; `--no-progress`
turns it off), then the loss and test accuracy. At the end: the median training-step time,
for the MLP next to the same step written by hand in numpy (`bench/bench_train.py`'s
`NumpyMLP`, timed on the first epoch's batches from the same initial parameters), and the
checkpoint (`Model.save`: every variable, optimizer state included, in `BUILD/<model>.npz`;
`Model.restore` reads it back). For the MLP the parameters w1, b1, w2, b2 are also written as
raw float32 to `BUILD/mlp.params.bin`, the file `examples/infer_digits.c` reads.
The exit status is 1 when a model misses its target.

`--data-parallel N` trains on N MPI ranks started by `mpiexec -n N` (the extra `irkit[mpi]`),
as PyTorch's DistributedDataParallel does: `load_model(..., data_parallel=N)`, the compiled
step calling MPI (`--engine jit`, which it implies in place of `so`; or the interpreter).
Each minibatch is dealt to the ranks in N equal blocks of rows (the rows of an epoch's
last minibatch past a multiple of N are skipped, so that every rank's block is as large),
the gradients are summed over the ranks inside the step, and every rank keeps the same
parameters; the test set is scored in N equal blocks (the last one padded with copies of
the last image, which are not counted; ranks must be given equal blocks) and the correct
answers summed. Rank 0
prints and writes the checkpoint. `--data-parallel 1` in one process trains on exactly the
same minibatches: it prints the accuracy N ranks reach.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import irkit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_train import NumpyMLP  # noqa: E402

ENGINES = ("so", "jit", "interpreter")
#: the MLP's parameters in the order of examples/infer_digits.c (and of mlp.h's arguments)
MLP_PARAMS = ("w1", "b1", "w2", "b2")


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


def compile_library(task: Task, build: Path) -> Path:
    """`irkit-compile <task>.irk -o BUILD/<task>.so` (in process): the library, its header and
    its metadata. Raises SystemExit if the compiler reports an error."""
    from irkit.tools.compile import main as irkit_compile
    build.mkdir(parents=True, exist_ok=True)
    lib = build / f"{task.name}.so"
    t0 = time.perf_counter()
    if irkit_compile([str(task.path), "-o", str(lib)]) != 0:
        raise SystemExit(f"irkit-compile failed on {task.path}")
    print(f"compiled {_rel(task.path)} -> {_rel(lib)} (+ {lib.with_suffix('.h').name}, "
          f"{lib.name}.json) in {time.perf_counter() - t0:.1f} s")
    return lib


def load(task: Task, engine: str, build: Path, data_parallel: int | None = None) -> irkit.Model:
    if data_parallel is not None:
        t0 = time.perf_counter()
        model = irkit.load_model(task.path, model=task.name, engine=engine,
                                 data_parallel=data_parallel)
        print(f"loaded {_rel(task.path)} data parallel on {data_parallel} ranks [{engine}] "
              f"in {time.perf_counter() - t0:.1f} s")
        return model
    if engine == "so":
        return irkit.load(compile_library(task, build), model=task.name)
    t0 = time.perf_counter()
    model = irkit.load_model(task.path, model=task.name, engine=engine)
    if engine == "jit":
        print(f"compiled {_rel(task.path)} in process (MCJIT) in "
              f"{time.perf_counter() - t0:.1f} s")
    return model


class Progress:
    """A one-line `\\r` progress bar on stderr, redrawn at most ~40 times per epoch."""

    def __init__(self, enabled: bool, width: int = 30) -> None:
        self.enabled = enabled
        self.width = width

    def draw(self, label: str, done: int, total: int) -> None:
        if not self.enabled or (done != total and done % max(1, total // 40)):
            return
        filled = self.width * done // total
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (self.width - filled)}] "
                         f"{done}/{total}")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * (self.width + 40) + "\r")
            sys.stderr.flush()


def train(task: Task, data: Split, args) -> float:
    """Train one model from its initial parameters; return its final test accuracy."""
    build = Path(args.build_dir)
    model = load(task, args.engine, build, args.data_parallel)
    print(f"--- {task.name}: {model!r}, optimizer {_optimizer(task)} ---")
    ranks = Ranks(args.data_parallel)
    numpy_ref = (NumpyMLP({k: np.array(model.variables[k]) for k in MLP_PARAMS})
                 if task.name == "mlp" and args.data_parallel is None else None)
    rng = np.random.default_rng(args.seed)
    n, bs, epochs = len(data.x_train), args.batch_size, args.epochs
    steps_per_epoch = -(-n // bs)
    progress = Progress(args.progress)
    step_times: list[float] = []
    numpy_times: list[float] = []
    accuracy = 0.0
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        loss_sum = 0.0
        for i, start in enumerate(range(0, n, bs)):
            idx = ranks.block(order[start:start + bs])
            batch = task.inputs(data.x_train[idx], data.y_train[idx])
            if numpy_ref is not None and epoch == 1:     # the same step by hand, same batch
                t = time.perf_counter()
                numpy_ref.step(batch["x"], batch["labels"])
                numpy_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            loss = model.train_step(**batch)["loss"]
            step_times.append(time.perf_counter() - t)
            loss_sum += float(loss) * len(idx) * ranks.size
            progress.draw(f"epoch {epoch:3}/{epochs}", i + 1, steps_per_epoch)
        rows, real = ranks.padded_block(len(data.y_test))
        test = task.inputs(data.x_test[rows], data.y_test[rows])
        pred = task.scores(model.forward(**test)).argmax(axis=1)
        right = (pred == data.y_test[rows])[real]
        accuracy = ranks.sum(int(right.sum())) / len(data.y_test)
        progress.clear()
        print(f"epoch {epoch:3}/{epochs}  train loss {loss_sum / n:.4f}  "
              f"test accuracy {accuracy:6.2%}  ({time.perf_counter() - t0:5.1f} s)", flush=True)
    took = time.perf_counter() - t0
    verdict = "reached" if accuracy >= task.target else "MISSED"
    print(f"{task.name}: {accuracy:.2%} test accuracy ({verdict} the {task.target:.0%} target) "
          f"after {len(step_times)} steps in {took:.1f} s")
    step = statistics.median(step_times)
    line = f"training step (batch {bs}, median): irkit [{args.engine}] {step * 1e3:.3f} ms"
    if numpy_times:
        ref = statistics.median(numpy_times)
        line += (f", numpy by hand {ref * 1e3:.3f} ms "
                 f"(irkit takes {step / ref:.2f}x numpy's time)")
    print(line)
    if ranks.rank:
        return accuracy
    build.mkdir(parents=True, exist_ok=True)
    ckpt = build / f"{task.name}.npz"
    model.save(ckpt)
    print(f"checkpoint: {_rel(ckpt)} ({len(list(model.variables))} variables; "
          f"model.restore('{_rel(ckpt)}') reads it back)")
    if task.name == "mlp":
        raw = build / "mlp.params.bin"
        with open(raw, "wb") as f:
            for k in MLP_PARAMS:
                np.ascontiguousarray(model.variables[k], np.float32).tofile(f)
        print(f"parameters for examples/infer_digits.c: {_rel(raw)} "
              f"(raw float32 {', '.join(MLP_PARAMS)})")
    return accuracy


class Ranks:
    """This process's share of the data under `--data-parallel N` (all of it without)."""

    def __init__(self, data_parallel: int | None) -> None:
        self.world = None
        self.rank, self.size = 0, 1
        if data_parallel is not None:
            from mpi4py import MPI
            self.world = MPI.COMM_WORLD
            self.rank, self.size = self.world.Get_rank(), self.world.Get_size()

    def block(self, rows: np.ndarray) -> np.ndarray:
        """This rank's block of `rows`: equal blocks, the rows past a multiple of the rank
        count dropped."""
        rows = rows[:len(rows) - len(rows) % self.size]
        return np.array_split(rows, self.size)[self.rank]

    def padded_block(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """This rank's equal block of the row indices 0..n-1 padded to a multiple of the
        rank count with copies of the last, and which of its rows are not padding."""
        rows = np.array_split(np.arange(-(-n // self.size) * self.size), self.size)[self.rank]
        return np.minimum(rows, n - 1), rows < n

    def sum(self, x: int) -> int:
        return x if self.world is None else self.world.allreduce(x)


def _rel(p: Path) -> str:
    p = Path(p).resolve()
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


def _optimizer(task: Task) -> str:
    """The optimizer of the model's `train` clause, read from its graph module."""
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.symbols import lookup_symbol_in
    module = model_modules(compile_file(str(task.path)))[task.name]
    attr = lookup_symbol_in(module, "train_step").attributes["graph.optimizer"]
    d = {k: v.value for k, v in attr.value.items()}
    return d.pop("name") + "(" + ", ".join(f"{k}={v:g}" for k, v in d.items()) + ")"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="logreg,mlp",
                    help="comma-separated, from: " + ", ".join(TASKS))
    ap.add_argument("--engine", default="so", choices=ENGINES,
                    help="so: compile to BUILD/<model>.so and irkit.load it (default); jit: "
                         "compile in process; interpreter: dev mode")
    ap.add_argument("--build-dir", default=str(ROOT / "build"), metavar="BUILD",
                    help="where the library, header and checkpoint go (default: build/)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0, help="split and shuffling seed")
    ap.add_argument("--data-parallel", type=int, default=None, metavar="N",
                    help="train on N MPI ranks (mpiexec -n N): each minibatch split over "
                         "them, the gradients summed (implies --engine jit unless "
                         "--engine interpreter)")
    ap.add_argument("--no-progress", dest="progress", action="store_false",
                    help="no progress bar (it is drawn only when stderr is a terminal)")
    args = ap.parse_args(argv)
    args.progress = args.progress and sys.stderr.isatty()
    if args.data_parallel is not None:
        if args.engine == "so":
            args.engine = "jit"
        if Ranks(args.data_parallel).rank:          # one rank speaks for all
            sys.stdout = open(os.devnull, "w")
            args.progress = False
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in TASKS]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r} (choose from {', '.join(TASKS)})")
    data = load_digits_split(args.seed)
    print(f"digits: {len(data.x_train)} training and {len(data.x_test)} test images, "
          f"8x8 pixels in [0, 1]; minibatches of {args.batch_size}, {args.epochs} epochs; "
          f"engine {args.engine}")
    t0 = time.perf_counter()
    missed = []
    for name in names:
        if train(TASKS[name], data, args) < TASKS[name].target:
            missed.append(name)
    print(f"total wall time {time.perf_counter() - t0:.1f} s")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
