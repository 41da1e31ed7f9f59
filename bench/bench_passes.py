#!/usr/bin/env python3
"""Pass-pipeline benchmark: `canonicalize,cse` on gen_chain modules, against mlir-opt and xDSL.

    python bench/bench_passes.py [--sizes 10000,100000] [--repeat 3] [--xdsl-max 10000]

For each size it reports, per tool:

- **ops/s end to end**: the CLI reads the generic-form file, runs canonicalize then CSE
  (verifying after each pass, as all three tools do by default) and prints the result;
  ops/s is the input op count over the best wall time of `--repeat` runs (start-up included).
  The commands are `irkit-opt f -p canonicalize,cse`, `mlir-opt f -canonicalize -cse` and
  `xdsl-opt f -p canonicalize,cse`.
- **ops left**: how many ops the output holds (module and function included), which shows
  how strong each pipeline is on the same input (gen_chain plants duplicates for CSE and
  `x * 1.0` for canonicalize).
- **numerics** (irkit's output, and mlir-opt's read back through irkit): both are run through
  the interpreter on the inputs `--verify-each=numeric` would draw and compared with the
  input program's results.

Ratios are irkit over the peer in the same run (>1: irkit faster). This is a benchmark, not
a test: it prints numbers next to the target (15,000 ops/s at 100k ops) and never fails.
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ir import GEN_CHAIN, find_tools, fmt_num, fmt_ratio, load_gen_chain  # noqa: E402

TARGET_OPS_PER_S = 15_000
_OP_NAME = re.compile(r'^\s*(?:%[^=]+=\s*)?"[\w$.]+"\(', re.M)


def pipeline_command(tool: str, prefix: list[str], path: Path) -> list[str]:
    if tool == "irkit-opt":
        return [*prefix, str(path), "-p", "canonicalize,cse", "--mlir-print-op-generic"]
    if tool == "mlir-opt":
        return [*prefix, str(path), "-canonicalize", "-cse", "--mlir-print-op-generic"]
    return [*prefix, str(path), "-p", "canonicalize,cse", "--print-op-generic"]


def run_best(cmd: list[str], repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        if elapsed < best:
            best, out = elapsed, proc.stdout
    return best, out


def count_ops(generic_text: str) -> int:
    """Ops in a generic-form module: every `"dialect.op"(` that starts a statement."""
    return len(_OP_NAME.findall(generic_text))


def numerics(original: str, optimized: str) -> str:
    """'equal' when `optimized` computes what `original` does on generated inputs."""
    from irkit.numeric_check import NumericChecker
    from irkit.parser import parse_module
    from irkit.tools import register_all
    register_all()
    checker = NumericChecker(seed=0, trials=1)
    checker.record(parse_module(original, "original.mlir"))
    if not checker.checked:
        return "not run: " + "; ".join(checker.skipped.values())
    mismatch = checker.check(parse_module(optimized, "optimized.mlir"))
    return "equal" if mismatch is None else "DIFFERENT: " + mismatch.format().splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--xdsl-max", type=int, default=10_000,
                    help="largest size xdsl-opt runs on (it is slow)")
    ap.add_argument("--numerics-max", type=int, default=10_000,
                    help="largest size whose results are compared in the interpreter")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    tools = find_tools()
    gen = load_gen_chain()
    print(f"canonicalize,cse on {GEN_CHAIN.name} modules; {platform.machine()}, "
          f"Python {platform.python_version()}; tools: {', '.join(tools)}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            text = gen.generate(n)
            path = Path(tmp) / f"chain{n}.mlir"
            path.write_text(text)
            n_in = count_ops(text)
            print(f"\n== {n} ops (input: {n_in} ops incl. module and func) ==")
            results = {}
            for tool, prefix in tools.items():
                if tool == "xdsl-opt" and n > args.xdsl_max:
                    continue
                repeat = 1 if tool == "xdsl-opt" else args.repeat
                try:
                    seconds, out = run_best(pipeline_command(tool, prefix, path), repeat)
                except RuntimeError as e:
                    print(f"  {tool:10s} failed: {str(e).splitlines()[0]}")
                    continue
                results[tool] = (seconds, out)
                rate = n_in / seconds
                print(f"  {tool:10s} {seconds:8.3f} s  {fmt_num(rate, ',.0f'):>9s} ops/s  "
                      f"ops left {count_ops(out):>7,d}")
            irk = results.get("irkit-opt")
            if irk:
                rate = n_in / irk[0]
                for peer in ("mlir-opt", "xdsl-opt"):
                    if peer in results:
                        print(f"  irkit-opt / {peer}: "
                              f"{fmt_ratio(rate, n_in / results[peer][0])} ops/s")
                flag = "met" if rate >= TARGET_OPS_PER_S else "missed"
                print(f"  target >= {TARGET_OPS_PER_S:,} ops/s: {flag}")
            if n <= args.numerics_max:
                for tool in ("irkit-opt", "mlir-opt"):
                    if tool in results:
                        print(f"  numerics of {tool} output vs input: "
                              f"{numerics(text, results[tool][1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
