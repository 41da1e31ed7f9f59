#!/usr/bin/env python3
"""The loop transformations on real nests: milliseconds per call of compiled kernels with and
without `loop-tile`, `loop-interchange` and `loop-unroll-and-jam`, one run.

    python bench/bench_loops.py [--threads 1] [--repeat 7]

Kernels (f32, written as the `linalg.generic` the DSL's ops become, over memrefs):
- colsum: `y[j] = sum_i x[i, j]` on 4096 x 1024, the emitter's nest (`sum(x, axis=0)`);
  with `parallel=false` the parallel dimension is a `loop.for` outside the reduction loop;
- transpose: `y[i, j] = x[j, i] + 1` on 4096 x 4096;
- matvec: `y[i] = sum_k a[i, k] * b[k]` on 4096 x 4096, lowered with `parallel=false` so
  that the row loop is a `loop.for` that unroll-and-jam can take.
Each variant is `lower-linalg-to-loop`, the passes named, then `canonicalize,cse,
loop-vectorize,canonicalize,cse` (the loop stage of the pipeline table), and the passes
named to run after vectorization, compiled by the LLVM backend. Columns: the best and the
median of `--repeat` calls after a warm-up, and the median's ratio to the variant without
the transformation. The machine may be shared: the
load average is printed; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

GENERIC = """
func.func @f(%x: memref<{xs}xf32>, {extra}%y: memref<{ys}xf32>) {{
  linalg.generic {{indexing_maps = [{maps}], iterator_types = [{its}]}}
      ins(%x{extra_in} : memref<{xs}xf32>{extra_t}) outs(%y : memref<{ys}xf32>) {{
  ^bb0({args}):
    {body}
  }}
  return
}}
"""

KERNELS = {
    "colsum": dict(xs="4096x1024", ys="1024", extra="", extra_in="", extra_t="",
                   maps="affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>",
                   its='"reduction", "parallel"', args="%a: f32, %o: f32",
                   body="%s = arith.addf %o, %a : f32\n    linalg.yield %s : f32"),
    "transpose": dict(xs="4096x4096", ys="4096x4096", extra="", extra_in="", extra_t="",
                      maps="affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>",
                      its='"parallel", "parallel"', args="%a: f32, %o: f32",
                      body="%c = arith.constant 1.0 : f32\n    %s = arith.addf %a, %c : f32\n"
                           "    linalg.yield %s : f32"),
    "matvec": dict(xs="4096x4096", ys="4096", extra="%b: memref<4096xf32>, ",
                   extra_in=", %b", extra_t=", memref<4096xf32>",
                   maps="affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, "
                        "affine_map<(d0, d1) -> (d0)>",
                   its='"parallel", "reduction"', args="%a: f32, %v: f32, %o: f32",
                   body="%p = arith.mulf %a, %v : f32\n    %s = arith.addf %o, %p : f32\n"
                        "    linalg.yield %s : f32"),
}

#: (kernel, lowering options, label, passes inserted after the lowering; a "|" separates
#: those that go after loop-vectorize)
VARIANTS = [
    ("colsum", "", "parallel j, reduction i inside", ""),
    ("colsum", "{parallel=false}", "loop.for j, i inside", ""),
    ("colsum", "{parallel=false}", "+ licm (accumulator in a register)",
     "loop-invariant-code-motion"),
    ("transpose", "", "loop.parallel (i, j)", ""),
    ("transpose", "", "+ loop-tile 32x32", "loop-tile{tile-sizes=32,32}"),
    ("transpose", "", "+ loop-tile 64x64", "loop-tile{tile-sizes=64,64}"),
    ("transpose", "", "+ loop-interchange 1,0", "loop-interchange{permutation=1,0}"),
    ("matvec", "{parallel=false}", "loop.for i, k inside", ""),
    ("matvec", "{parallel=false}", "+ loop-unroll-and-jam 4",
     "loop-unroll-and-jam{factor=4}"),
    ("matvec", "{parallel=false}", "+ loop-unroll 4 (before vectorize)",
     "loop-unroll{factor=4}"),
    ("matvec", "{parallel=false}", "+ loop-unroll 4 (after vectorize)",
     "|loop-unroll{factor=4}"),
]


def compiled(kernel: str, lowering: str, passes: str, threads: int):
    from irkit.backends.llvm_cpu import compile_module
    from irkit.parser import parse_module
    from irkit.pass_manager import PassManager
    from irkit.tools import register_all
    register_all()
    m = parse_module(GENERIC.format(**KERNELS[kernel]))
    before, _, after = passes.partition("|")
    before = f"{before}," if before else ""
    after = f",{after},canonicalize,cse" if after else ""
    PassManager.parse(f"lower-linalg-to-loop{lowering},canonicalize,cse,{before}"
                      f"canonicalize,cse,loop-vectorize,canonicalize,cse{after}").run(m)
    return compile_module(m, threads=threads).f


def arrays(kernel: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    spec = KERNELS[kernel]
    shapes = [spec["xs"]] + (["4096"] if spec["extra"] else []) + [spec["ys"]]
    return [rng.normal(size=tuple(int(d) for d in s.split("x"))).astype(np.float32)
            for s in shapes]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    opts = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {opts.threads} thread(s)")
    print(f"{'kernel':10} {'variant':38} {'best ms':>8} {'median':>8} {'ratio':>6}")
    base: dict[tuple, float] = {}
    for kernel, lowering, label, passes in VARIANTS:
        f = compiled(kernel, lowering, passes, opts.threads)
        args = arrays(kernel)
        want = None
        times = []
        for _ in range(opts.repeat + 1):
            bufs = [a.copy() for a in args]
            t = time.perf_counter()
            f(*bufs)
            times.append(time.perf_counter() - t)
            want = bufs[-1] if want is None else want
        times = times[1:]
        med = statistics.median(times)
        key = (kernel, lowering)
        ref = base.setdefault(key, med) if not passes else base.get(key, med)
        print(f"{kernel:10} {label:38} {min(times) * 1e3:8.2f} {med * 1e3:8.2f} "
              f"{ref / med:6.2f}")


if __name__ == "__main__":
    main()
