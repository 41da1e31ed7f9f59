#!/usr/bin/env python3
"""Matmul GFLOP/s: irkit's compiled `a @ b` (float32) against numpy's BLAS, one run.

    python bench/bench_matmul.py [--threads 1,2] [--repeat 9] [--sizes 1024x1024x1024,...]
                                 [--blis 'linalg-matmul-blis{kc=128}']

Each size (M x N x K) is the DSL model `c = a @ b` with `a: f32[M, K]`, `b: f32[K, N]`,
compiled by the pipeline table (passes/pipeline.py) with `--blis` (the pass and its options,
default `linalg-matmul-blis`) inserted right after `bufferize`, where it belongs, and once
without it (`plain`, what the table does today; skipped above `--plain-max` flops, where it
takes minutes). The compiled function is called on numpy arrays; numpy's `a @ b` is timed
in the same round. Each column is the best and the median of `--repeat` calls after a
warm-up; the ratio is irkit's median GFLOP/s over numpy's.

`--epilogue` times the graph's matmul with its epilogue instead, `y = relu(a @ b + c)`
(`c: f32[N]`), with the pass applying it at the micro-kernel's store (`blis`) and without
(`epilogue=false`: the epilogue its own nest, `blis-sep`); numpy runs `matmul` into `y`,
then `+=` and `maximum` in place.

`--conv` times convolutions instead, against PyTorch eager (median ms of a forward and its
two gradients, and examples/cnn.irk's training step at batch 64: irkit's JIT through the
pipeline table, with and without the pass), each shape `N,C,H,W,F,padding`:

    python bench/bench_matmul.py --conv [--conv-shapes 64,8,6,6,16,0,...] [--threads 1]

Each thread count runs in its own worker process with `OMP_NUM_THREADS` and the BLAS thread
counts set before numpy is imported and the process pinned to that many cores, so numpy's
BLAS and irkit's OpenMP loops see the same cores. The load average is printed next to the
numbers: the machine is shared, and a ratio from one round is what to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

DEFAULT_SIZES = "64x128x64,256x256x256,1024x1024x1024,2048x2048x512"
MODEL = """
model mm {{
  input a: f32[{m}, {k}]
  input b: f32[{k}, {n}]
  c = a @ b
  output c
}}
"""
EPILOGUE_MODEL = """
model mm {{
  input a: f32[{m}, {k}]
  input b: f32[{k}, {n}]
  input c: f32[{n}]
  y = relu(a @ b + c)
  output y
}}
"""


def without_epilogue(blis: str) -> str:
    """The pass entry `blis` with `epilogue=false` added to its options."""
    if "{" in blis:
        return blis.replace("{", "{epilogue=false ", 1)
    return blis + "{epilogue=false}"


def _pipeline(blis: str) -> str:
    """The table's passes to the compiled stage, `blis` after bufferize ("" for none)."""
    from irkit.passes import pipeline
    entries = pipeline.passes_between(None, pipeline.compiled_stage()).split(",bufferize")
    if not blis:
        return ",bufferize".join(entries)
    head, tail = entries
    rest = tail.split(",", 1)                      # "{output-sizes=true}", the rest
    return f"{head},bufferize{rest[0]},{blis},{rest[1]}"


def compiled(m: int, n: int, k: int, blis: str, threads: int, model: str = MODEL):
    """The compiled `forward(a, b, c)` of the model (`forward(a, b, c, y)` of
    EPILOGUE_MODEL), over memrefs."""
    from irkit.backends.llvm_cpu import compile_module
    from irkit.frontend.dsl import compile_source
    from irkit.pass_manager import PassManager
    from irkit.symbols import lookup_symbol_in
    from irkit.tools import register_all
    register_all()
    top = compile_source(model.format(m=m, n=n, k=k), "mm.irk")
    PassManager.parse(_pipeline(blis)).run(top)
    module = lookup_symbol_in(top, "mm")
    return compile_module(module, 2, threads=threads).forward


def _times(fn, repeat: int) -> list[float]:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def worker(threads: int, sizes: list, repeat: int, blis: str, plain_max: float,
           epilogue: bool = False) -> list:
    import numpy as np
    rows = []
    for m, n, k in sizes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        bias = rng.standard_normal(n).astype(np.float32)
        c = np.empty((m, n), np.float32)
        flops = 2.0 * m * n * k
        row = {"size": f"{m}x{n}x{k}", "threads": threads}
        exact = a.astype(np.float64) @ b.astype(np.float64)
        if epilogue:
            args = (a, b, bias, c)
            exact = np.maximum(exact + bias, 0)

            def numpy_engine():
                np.matmul(a, b, out=c)
                c.__iadd__(bias)
                np.maximum(c, 0, out=c)
            engines = {"numpy": numpy_engine}
            fns = {"blis": compiled(m, n, k, blis, threads, EPILOGUE_MODEL),
                   "plain": compiled(m, n, k, without_epilogue(blis), threads,
                                     EPILOGUE_MODEL)}
        else:
            args = (a, b, c)
            engines = {"numpy": lambda: np.matmul(a, b, out=c)}
            fns = {"blis": compiled(m, n, k, blis, threads)}
            if flops <= plain_max:
                fns["plain"] = compiled(m, n, k, "", threads)
        for name, fn in fns.items():
            fn(*args)
            row[f"{name}_maxerr"] = float(np.max(np.abs(c - exact)))
            engines[name] = lambda fn=fn: fn(*args)
        for name, fn in engines.items():      # one round: numpy and irkit interleaved
            t = _times(fn, repeat)
            row[name] = (flops / min(t) / 1e9, flops / statistics.median(t) / 1e9)
        row["load"] = os.getloadavg()[0]
        rows.append(row)
    return rows


CONV_SHAPES = "64,1,12,12,8,1;64,8,6,6,16,0;32,32,32,32,64,1"
CONV_MODEL = """
model conv {{
  input x: f32[{n}, {c}, {h}, {w}]
  param k: f32[{f}, {c}, 3, 3] = he(seed=1)
  y = conv2d(x, k, padding={p})
  loss = sum(y * y)
  output y
  grad loss wrt x, k
}}
"""


def _jit_model(path, disable: bool, threads: int):
    """`irkit.load_model(path)` on the JIT, without linalg-matmul-blis when `disable`."""
    import irkit
    return irkit.load_model(path, engine="jit", threads=threads, cache=False,
                            disable=["linalg-matmul-blis"] if disable else ())


def _torch_cnn_step(model, images, labels):
    import numpy as np
    import torch
    F = torch.nn.functional
    p = {k: torch.tensor(np.array(v), requires_grad=k not in ("mu1", "var1"))
         for k, v in model.variables.items()
         if k in ("k1", "mu1", "var1", "g1", "b1", "k2", "w", "b")}
    opt = torch.optim.SGD([p[k] for k in ("k1", "g1", "b1", "k2", "w", "b")], lr=0.01,
                          momentum=0.9)
    ti, tl = torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))

    def step():
        opt.zero_grad()
        h = F.batch_norm(F.conv2d(ti, p["k1"], padding=1), p["mu1"], p["var1"], p["g1"],
                         p["b1"], training=False, eps=1e-5)
        h2 = F.relu(F.conv2d(F.max_pool2d(F.relu(h), 2), p["k2"]))
        logits = F.avg_pool2d(h2, 2, 2).reshape(-1, 64) @ p["w"] + p["b"]
        loss = F.cross_entropy(logits, tl)
        loss.backward()
        opt.step()
    return step


def conv_worker(threads: int, shapes: list, repeat: int) -> list:
    """Median milliseconds of irkit (blis / plain) and PyTorch eager per workload."""
    import tempfile
    from pathlib import Path

    import numpy as np
    import torch
    torch.set_num_threads(threads)
    rows = []
    root = Path(__file__).resolve().parents[1]
    rng = np.random.default_rng(0)
    images = rng.standard_normal((64, 1, 12, 12), dtype=np.float32)
    labels = rng.integers(0, 10, 64).astype(np.int32)
    cnn = root / "examples" / "cnn.irk"
    engines = {name: (lambda m=_jit_model(cnn, name == "plain", threads):
                      m.train_step(images=images, labels=labels))
               for name in ("blis", "plain")}
    engines["torch"] = _torch_cnn_step(_jit_model(cnn, False, threads), images, labels)
    rows.append({"workload": "cnn.irk train step B=64"} |
                {k: statistics.median(_times(f, repeat)) * 1e3 for k, f in engines.items()})
    with tempfile.TemporaryDirectory() as tmp:
        for n, c, h, w, f, pad in shapes:
            path = Path(tmp) / f"conv{n}_{c}_{h}_{f}.irk"
            path.write_text(CONV_MODEL.format(n=n, c=c, h=h, w=w, f=f, p=pad))
            x = rng.standard_normal((n, c, h, w), dtype=np.float32)
            tx = torch.from_numpy(x).requires_grad_()
            tk = torch.randn(f, c, 3, 3, requires_grad=True)

            def torch_step():
                y = torch.nn.functional.conv2d(tx, tk, padding=pad)
                (y * y).sum().backward()
            engines = {name: (lambda m=_jit_model(path, name == "plain", threads):
                              m.forward(x=x)) for name in ("blis", "plain")}
            engines["torch"] = torch_step
            rows.append({"workload": f"conv {n}x{c}x{h}x{w} * {f}x{c}x3x3 pad {pad}, "
                                     "forward + 2 gradients"} |
                        {k: statistics.median(_times(fn, repeat)) * 1e3
                         for k, fn in engines.items()})
    for row in rows:
        row["load"] = os.getloadavg()[0]
    return rows


def _run_worker(threads: int, argv: list[str]) -> list:
    """This script's `--worker threads` in a process pinned to `threads` cores, with the
    thread counts of OpenMP and the BLAS set before anything is imported."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    cores = sorted(os.sched_getaffinity(0))[:threads]
    out = subprocess.run([sys.executable, __file__, "--worker", str(threads), *argv],
                         env=env, capture_output=True, text=True, check=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, cores))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--sizes", default=DEFAULT_SIZES)
    ap.add_argument("--blis", default="linalg-matmul-blis")
    ap.add_argument("--plain-max", type=float, default=3e8)
    ap.add_argument("--epilogue", action="store_true")
    ap.add_argument("--conv", action="store_true")
    ap.add_argument("--conv-shapes", default=CONV_SHAPES)
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",")]
    shapes = [tuple(map(int, s.split(","))) for s in args.conv_shapes.split(";")]
    if args.worker is not None:
        rows = conv_worker(args.worker, shapes, args.repeat) if args.conv else \
            worker(args.worker, sizes, args.repeat, args.blis, args.plain_max, args.epilogue)
        print(json.dumps(rows))
        return 0
    print(f"load average before: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}")
    if args.conv:
        print("| workload | threads | irkit blis ms | irkit plain ms | PyTorch eager ms | "
              "torch/blis | load |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for threads in map(int, args.threads.split(",")):
            for r in _run_worker(threads, ["--conv", "--conv-shapes", args.conv_shapes,
                                           "--repeat", str(args.repeat)]):
                print(f"| {r['workload']} | {threads} | {r['blis']:.2f} | {r['plain']:.2f} "
                      f"| {r['torch']:.2f} | {r['torch'] / r['blis']:.2f} | {r['load']:.1f} |")
        return 0
    other = "irkit blis-sep med" if args.epilogue else "irkit plain med"
    print(f"| size MxNxK | threads | numpy GFLOP/s best/med | irkit blis best/med | "
          f"blis/numpy | {other} | load |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for threads in map(int, args.threads.split(",")):
        for r in _run_worker(threads, ["--sizes", args.sizes, "--repeat", str(args.repeat),
                                       "--blis", args.blis, "--plain-max", str(args.plain_max)]
                             + ["--epilogue"] * args.epilogue):
            plain = f"{r['plain'][1]:.2f}" if "plain" in r else "-"
            print(f"| {r['size']} | {r['threads']} | {r['numpy'][0]:.1f} / {r['numpy'][1]:.1f} "
                  f"| {r['blis'][0]:.1f} / {r['blis'][1]:.1f} "
                  f"| {r['blis'][1] / r['numpy'][1]:.2f} | {plain} | {r['load']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
