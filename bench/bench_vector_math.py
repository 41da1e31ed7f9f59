#!/usr/bin/env python3
"""Vector math benchmark: f32 exp, tanh, log (and log1p) over 10^7 elements, one thread.

    python bench/bench_vector_math.py [--n 10000000] [--repeat 10]

For each function it times, on the same input (best of `--repeat`):

- **numpy**: `np.f(x, out=y)` (numpy's own SIMD float32 kernels);
- **libm scalar / libm x16**: a compiled loop over `memref<?xf32>` calling `math.f` on one
  element / on `vector<16xf32>` (the LLVM backend's lowering: an LLVM intrinsic or C-library
  call, which LLVM scalarizes lane by lane);
- **poly scalar / poly x16**: the same two loops after `math-polynomial-approximation`.

and prints each time with its ratio to numpy (above 1: faster than numpy), the largest error
in ulps of each result against float64 numpy rounded to float32, and whether LLVM's loop
vectorizer turned the scalar polynomial loop into vector code (`<N x float>` in its
optimized LLVM IR). It is a benchmark, not a test: it never fails on its numbers.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from irkit.backends.llvm_cpu import compile_module
from irkit.dialects import load_all
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import register_all

FUNCTIONS = {"exp": (np.exp, (-80.0, 80.0)), "tanh": (np.tanh, (-10.0, 10.0)),
             "log": (np.log, (1e-30, 1e30)), "log1p": (np.log1p, (-0.9, 1e6))}


def kernel(op: str, lanes: int) -> str:
    """`@k(x, y)`: y = op(x) over memref<?xf32>, `lanes` elements at a time."""
    t = f"vector<{lanes}xf32>" if lanes > 1 else "f32"
    load = "memory.vector_load" if lanes > 1 else "memory.load"
    store = "memory.vector_store" if lanes > 1 else "memory.store"
    suffix = f", {t}" if lanes > 1 else ""
    return f"""
func.func @k(%x: memref<?xf32>, %y: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %step = arith.constant {lanes} : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %step {{
    %v = {load} %x[%i] : memref<?xf32>{suffix}
    %r = math.{op} %v : {t}
    {store} %r, %y[%i] : memref<?xf32>{suffix}
  }}
  return
}}
"""


def compiled(op: str, lanes: int, poly: bool):
    m = parse_module(kernel(op, lanes))
    if poly:
        PassManager.parse("math-polynomial-approximation").run(m)
    return compile_module(m, 3)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def max_ulps(got: np.ndarray, want: np.ndarray) -> int:
    def ordered(a):
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.abs(ordered(got) - ordered(want)).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    load_all()
    register_all()
    n = args.n - args.n % 16
    rng = np.random.default_rng(0)
    print(f"# vector math, f32, n = {n}, 1 thread, {platform.processor() or platform.machine()}")
    print("| function | numpy | libm scalar | libm x16 | poly scalar | poly x16 | "
          "max ulp (numpy / poly) | loop vectorized |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for op, (ref, (lo, hi)) in FUNCTIONS.items():
        x = rng.uniform(lo, hi, n).astype(np.float32)
        want = ref(x.astype(np.float64)).astype(np.float32)
        y = np.empty_like(x)
        t_np = best(lambda: ref(x, out=y), args.repeat)
        np_err = max_ulps(y, want)
        cells, vectorized, poly_err = [], "", 0
        for poly in (False, True):
            for lanes in (1, 16):
                jit = compiled(op, lanes, poly)
                t = best(lambda: jit.k(x, y), args.repeat)
                if poly:
                    poly_err = max(poly_err, max_ulps(y, want))
                    if lanes == 1:
                        vectorized = "yes" if "x float>" in jit.llvm_ir else "no"
                cells.append(f"{t * 1e3:.1f} ms ({t_np / t:.2f}x)")
        print(f"| {op} | {t_np * 1e3:.1f} ms | " + " | ".join(cells)
              + f" | {np_err} / {poly_err} | {vectorized} |")


if __name__ == "__main__":
    main()
