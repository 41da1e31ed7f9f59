"""Dev mode, end to end: a DSL model becomes graph IR and runs in the interpreter.

    python examples/run_model.py                     # examples/mlp.irk
    python examples/run_model.py examples/gate.irk

This is the project's main job until the backend lands. For `mlp.irk` it prints the graph
module's size and first lines, runs `forward` on a batch of synthetic digit-like data, checks
the outputs against the same model written directly in numpy, and shows that a parameter can
be read and assigned. For any other model it feeds random inputs of the declared shapes
(symbolic dimensions set to 8) and prints the outputs' shapes and a few values.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import irkit
from irkit.frontend.dsl import DSLError
from irkit.printer import print_op


def mlp_numpy(v: dict, x: np.ndarray, labels: np.ndarray) -> dict:
    """examples/mlp.irk written by hand: relu(x @ w1 + b1) @ w2 + b2, mean softmax CE."""
    h = np.maximum(x @ v["w1"] + v["b1"], 0)
    logits = h @ v["w2"] + v["b2"]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return {"logits": logits, "loss": -logp[np.arange(len(labels)), labels].mean()}


def synthetic_digits(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """8x8 'images': a class-dependent pattern plus noise, flattened to 64 features."""
    labels = rng.integers(0, 10, size=n).astype(np.int32)
    patterns = rng.normal(size=(10, 64)).astype(np.float32)
    x = patterns[labels] + 0.5 * rng.normal(size=(n, 64)).astype(np.float32)
    return x, labels


def random_inputs(model: irkit.Model, rng: np.random.Generator) -> dict:
    out = {}
    for spec in model.inputs:
        shape = tuple(d if isinstance(d, int) else 8 for d in spec.dims)
        if spec.dtype.kind == "f":
            out[spec.name] = rng.normal(size=shape).astype(spec.dtype)
        elif spec.dtype.kind == "b":
            out[spec.name] = rng.integers(0, 2, size=shape).astype(bool)
        else:
            out[spec.name] = rng.integers(0, 2, size=shape).astype(spec.dtype)
    return out


def main(path: str) -> int:
    t0 = time.perf_counter()
    try:
        model = irkit.load_model(path)
    except DSLError as e:
        print(e.render(), file=sys.stderr)
        return 1
    t1 = time.perf_counter()
    text = print_op(model.module)
    n_ops = sum(1 for _ in model.module.walk())
    print(f"{path}: parsed, lowered to the graph dialect and verified in {(t1 - t0) * 1e3:.0f} ms"
          f" ({n_ops} ops)")
    print("--- graph IR (first lines; `irkit-compile --emit=graph` prints it all) ---")
    print("\n".join(text.splitlines()[:8]))

    rng = np.random.default_rng(0)
    print(f"--- {model!r} ---")
    if model.name == "mlp":
        x, labels = synthetic_digits(256, rng)
        t2 = time.perf_counter()
        out = model.forward(x=x, labels=labels)
        t3 = time.perf_counter()
        ref = mlp_numpy(dict(model.variables), x, labels)
        print(f"forward on {x.shape[0]} examples in {(t3 - t2) * 1e3:.1f} ms (interpreter): "
              f"loss = {float(out['loss']):.4f} (numpy: {float(ref['loss']):.4f}), "
              f"max |logits - numpy| = {float(np.abs(out['logits'] - ref['logits']).max()):.1e}")
        model.variables["w2"] = np.zeros_like(model.variables["w2"])
        out = model.forward(x=x, labels=labels)
        print(f"after setting w2 = 0: loss = {float(out['loss']):.4f} "
              f"(ln 10 = {np.log(10):.4f}, the loss of uniform predictions)")
        return 0
    inputs = random_inputs(model, rng)
    for name, value in model.forward(**inputs).items():
        flat = np.asarray(value).ravel()
        print(f"{name}: {np.asarray(value).dtype}{list(np.shape(value))} "
              f"{np.array2string(flat[:4], precision=4)}{' ...' if flat.size > 4 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/mlp.irk"))
