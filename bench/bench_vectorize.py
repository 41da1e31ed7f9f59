#!/usr/bin/env python3
"""loop-vectorize benchmark: compiled code with and without the pass, against numpy.

    python bench/bench_vectorize.py [--repeat 20] [--batch 128]

"vector" is the pipeline table as it is (the pass in its `loop` row), "scalar" the same with
the pass disabled (`load_model(disable=["loop-vectorize"])`). Workloads (f32, one thread):

- `E = D + (A + B) * C`, N = 10^7 (numpy: the expression, and with `out=` buffers);
- a row sum of a 4096 x 1024 matrix;
- the MLP training step of examples/mlp.irk (64-128-10, Adam) at `--batch`.

It prints each time (best of `--repeat`), the ratio numpy / irkit (above 1: irkit faster)
and the speedup of the pass, checks the results agree, and counts in the MLP's assembly
what shows whether LLVM still had loops to vectorize or gathers to make: `vgather*`,
`vscatter*`, packed FMAs (`vfmadd...ps/pd`) and instructions on `zmm` registers.
It is a benchmark, not a test: it never fails on its numbers.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

import irkit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dev_mode import best  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """
model triad {
  input a: f32[N]
  input b: f32[N]
  input c: f32[N]
  input d: f32[N]
  e = d + (a + b) * c
  output e
}

model rowsum {
  input x: f32[R, C]
  s = sum(x, axis=1)
  output s
}
"""


def disabled(on: bool) -> tuple[str, ...]:
    """The passes to leave out: none for the vectorized build, loop-vectorize for the other."""
    return () if on else ("loop-vectorize",)


def load(path, model: str | None, on: bool):
    return irkit.load_model(path, model=model, engine="jit", disable=disabled(on))


def assembly_counts(on: bool) -> dict[str, int]:
    """What the MLP's assembly holds, with or without the pass."""
    from irkit.backends.llvm_cpu import emit_assembly
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.runtime.compiled import lower_model
    module = model_modules(compile_file(str(ROOT / "examples" / "mlp.irk")))["mlp"]
    asm = emit_assembly(lower_model(module, disable=disabled(on)))
    return {"vgather": len(re.findall(r"\bvgather\w+", asm)),
            "vscatter": len(re.findall(r"\bvscatter\w+", asm)),
            "vfmadd ps": len(re.findall(r"\bvfn?m(?:add|sub)\w*ps\b", asm)),
            "vfmadd pd": len(re.findall(r"\bvfn?m(?:add|sub)\w*pd\b", asm)),
            "zmm lines": sum(1 for line in asm.splitlines() if "zmm" in line),
            "lines": asm.count("\n")}


def row(name: str, t_np: float, times: dict[bool, float]) -> None:
    off, on = times[False], times[True]
    print(f"{name:<28} {t_np * 1e3:9.3f}ms {off * 1e3:9.3f}ms {on * 1e3:9.3f}ms "
          f"{t_np / off:9.2f} {t_np / on:9.2f} {off / on:9.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'workload':<28} {'numpy':>11} {'scalar':>11} {'vector':>11} "
          f"{'np/scalar':>9} {'np/vector':>9} {'speedup':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernels.irk"
        path.write_text(SOURCE)

        n = 10 ** 7
        a, b, c, d = (rng.normal(size=n).astype(np.float32) for _ in range(4))
        out = np.empty_like(a)
        t_np, want = best(lambda: d + (a + b) * c, args.repeat)

        def by_hand():
            np.add(a, b, out=out)
            np.multiply(out, c, out=out)
            return np.add(out, d, out=out)
        t_out, _ = best(by_hand, args.repeat)
        times = {}
        for on in (False, True):
            m = load(path, "triad", on)
            times[on], got = best(lambda: m.forward(a=a, b=b, c=c, d=d)["e"], args.repeat)
            np.testing.assert_array_equal(got, want)
        row("E = D + (A+B)*C, 1e7", t_np, times)
        row("  (numpy with out=)", t_out, times)

        x = rng.normal(size=(4096, 1024)).astype(np.float32)
        t_np, want = best(lambda: x.sum(axis=1), args.repeat)
        for on in (False, True):
            m = load(path, "rowsum", on)
            times[on], got = best(lambda: m.forward(x=x)["s"], args.repeat)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
        row("row sum 4096x1024", t_np, times)

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_train import NumpyMLP
    mlp = ROOT / "examples" / "mlp.irk"
    x = rng.normal(size=(args.batch, 64)).astype(np.float32)
    labels = rng.integers(0, 10, size=args.batch).astype(np.int32)
    fresh = irkit.load_model(mlp)
    params = {k: np.array(fresh.variables[k]) for k in ("w1", "b1", "w2", "b2")}
    ref = NumpyMLP(params)
    t_np, _ = best(lambda: ref.step(x, labels), args.repeat)
    losses = {}
    for on in (False, True):
        m = load(mlp, None, on)
        for k in fresh.variables:
            m.variables[k] = np.array(fresh.variables[k])
        times[on], losses[on] = best(lambda: float(m.train_step(x=x, labels=labels)["loss"]),
                                     args.repeat)
    row(f"MLP train step B={args.batch}", t_np, times)
    print(f"  final loss scalar / vector: {losses[False]:.6f} / {losses[True]:.6f}")
    for on in (False, True):
        print(f"  MLP assembly {'with' if on else 'without'} loop-vectorize: "
              + ", ".join(f"{k} {v}" for k, v in assembly_counts(on).items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
