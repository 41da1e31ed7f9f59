#!/usr/bin/env python3
"""IR-infrastructure speed benchmark: parse + verify + print (generic form), against peers.

    python bench/bench_ir.py [--sizes 10000,100000] [--repeat 3] [--xdsl-max 10000]

What it measures, and why this way:

- **throughput** (ops/second) end to end on the generic-form modules that
  `../shared/bench/gen_chain.py` writes (arith/math chains, the shape of real lowered IR).
  irkit is timed twice: in-process (`parse_module` + `print_op`, what the Python API costs)
  and through the `irkit-opt` CLI (what a user of the tool waits for, start-up included).
  Peers are timed as CLIs only, since that is the one interface all three share:
  `xdsl-opt f.mlir` and `mlir-opt f.mlir --mlir-print-op-generic`. Each figure is the best
  of `--repeat` runs: the minimum is the least noisy estimate of what the code costs.
- **peak memory** (bytes per op): each tool runs as the child of a small Python wrapper that
  reads `RUSAGE_CHILDREN.ru_maxrss` after it exits; the peak on an empty module is
  subtracted, so interpreter and library start-up do not count against the IR.
- **start-up**: the median wall time of the CLI on an empty module.

Ratios are irkit's figure over the peer's measured in the same run (ops/s: >1 means irkit is
faster; memory: <1 means irkit is smaller). xDSL parses about 1,300 ops/s, so by default it
runs only on sizes up to `--xdsl-max` and only once; the run stays under about 3 minutes.

This is a benchmark, not a test: it prints numbers next to the project's targets and never
fails on them.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN_CHAIN = ROOT.parent / "shared" / "bench" / "gen_chain.py"
MLIR_OPT_FALLBACK = Path("/usr/lib/llvm-22/bin/mlir-opt")
EMPTY_MODULE = "builtin.module {\n}\n"

TARGET_OPS_PER_S = 20_000   # at 100k ops, in-process
TARGET_BYTES_PER_OP = 2048
TARGET_STARTUP_S = 0.15

# Runs a command as a child and prints the child's peak RSS in KiB (Linux reports KiB).
# A fresh wrapper per measurement, because RUSAGE_CHILDREN keeps the maximum over all the
# children a process ever waited for.
_PEAK_WRAPPER = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "if r.returncode:\n"
    "    sys.stderr.write(r.stderr.decode(errors='replace')); sys.exit(r.returncode)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def load_gen_chain():
    """Import `gen_chain.py` from ../shared by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("gen_chain", GEN_CHAIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def find_tools() -> dict[str, list[str]]:
    """The command prefix of each CLI that is installed; irkit-opt always is (this Python)."""
    tools = {}
    irkit_opt = shutil.which("irkit-opt")
    tools["irkit-opt"] = [irkit_opt] if irkit_opt else [sys.executable, "-m", "irkit.tools.opt"]
    xdsl = shutil.which("xdsl-opt")
    if xdsl:
        tools["xdsl-opt"] = [xdsl]
    mlir = shutil.which("mlir-opt") or (str(MLIR_OPT_FALLBACK)
                                        if MLIR_OPT_FALLBACK.exists() else None)
    if mlir:
        tools["mlir-opt"] = [mlir]
    return tools


def tool_command(tool: str, prefix: list[str], path: Path) -> list[str]:
    """The command that parses, verifies and prints `path` with `tool`."""
    if tool == "irkit-opt":
        return [*prefix, str(path), "--allow-unregistered-dialect", "--mlir-print-op-generic"]
    if tool == "mlir-opt":
        return [*prefix, str(path), "--mlir-print-op-generic"]
    return [*prefix, str(path)]


def time_command(cmd: list[str], repeat: int) -> float:
    """Best wall time of `repeat` runs; output is discarded, a failure aborts loudly."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()[-2000:]}")
        best = min(best, elapsed)
    return best


def peak_rss_bytes(cmd: list[str]) -> int:
    out = subprocess.run([sys.executable, "-c", _PEAK_WRAPPER, *cmd], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    return int(out.stdout.strip()) * 1024


def time_in_process(text: str, repeat: int) -> float:
    """Best time of parse + verify + generic print inside this interpreter."""
    from irkit.parser import parse_module
    from irkit.printer import print_op
    from irkit.tools import register_all
    register_all()                                       # every dialect known, as the tools do
    print_op(parse_module(EMPTY_MODULE, "warmup.mlir"))  # imports and registries: not timed
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        module = parse_module(text, "bench.mlir", allow_unregistered=True)
        print_op(module, generic=True)
        best = min(best, time.perf_counter() - t0)
        del module
    return best


def fmt_ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def fmt_num(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def mark(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000",
                    help="comma-separated op counts (default: 10000,100000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per figure (best kept)")
    ap.add_argument("--xdsl-max", type=int, default=10_000,
                    help="largest size xdsl-opt runs on (it is slow; default 10000)")
    ap.add_argument("--startup-runs", type=int, default=7, help="runs for the start-up median")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    if not GEN_CHAIN.exists():
        print(f"bench_ir: skipped: {GEN_CHAIN} is absent (the shared folder is not here)")
        return 0
    gen_chain = load_gen_chain()
    tools = find_tools()
    print(f"irkit IR benchmark: parse + verify + print (generic), best of {args.repeat}")
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{len(os.sched_getaffinity(0))} CPUs; "
          f"peers: {', '.join(t for t in tools if t != 'irkit-opt') or 'none installed'}")

    rows = []        # (size, label, seconds, ops/s, bytes/op)
    results = {}     # (size, label) -> (ops/s, bytes/op)
    with tempfile.TemporaryDirectory(prefix="irkit-bench-") as tmp:
        tmpdir = Path(tmp)
        empty = tmpdir / "empty.mlir"
        empty.write_text(EMPTY_MODULE)
        base_rss = {t: peak_rss_bytes(tool_command(t, p, empty)) for t, p in tools.items()}
        startup = {}
        for t, p in tools.items():
            cmd = tool_command(t, p, empty)
            runs = [time_command(cmd, 1) for _ in range(args.startup_runs)]
            startup[t] = statistics.median(runs)

        for n in sizes:
            path = tmpdir / f"chain_{n}.mlir"
            text = gen_chain.generate(n)
            path.write_text(text)
            secs = time_in_process(text, args.repeat)
            results[(n, "irkit (in-process)")] = (n / secs, None)
            rows.append((n, "irkit (in-process)", secs, n / secs, None))
            for t, p in tools.items():
                if t == "xdsl-opt" and n > args.xdsl_max:
                    continue
                cmd = tool_command(t, p, path)
                reps = 1 if t == "xdsl-opt" else args.repeat
                secs = time_command(cmd, reps)
                per_op = max(0, peak_rss_bytes(cmd) - base_rss[t]) / n
                label = f"{t} (CLI)"
                results[(n, label)] = (n / secs, per_op)
                rows.append((n, label, secs, n / secs, per_op))

    print()
    head = (f"{'ops':>8}  {'tool':<20} {'time s':>8} {'ops/s':>10} {'B/op':>8}"
            f"  {'vs xdsl':>8} {'vs mlir':>8}  target")
    print(head)
    print("-" * len(head))
    for n, label, secs, ops, per_op in rows:
        vs_x = vs_m = ""
        target = ""
        if label.startswith("irkit"):
            x = results.get((n, "xdsl-opt (CLI)"), (None, None))
            m = results.get((n, "mlir-opt (CLI)"), (None, None))
            # The in-process figure has no CLI start-up; compare it against the CLIs anyway
            # (it is what an API user gets), but the CLI row is the like-for-like ratio.
            vs_x = fmt_ratio(ops, x[0])
            vs_m = fmt_ratio(ops, m[0])
            if label == "irkit (in-process)" and n >= 100_000:
                target = f">= {TARGET_OPS_PER_S:,} ops/s: {mark(ops >= TARGET_OPS_PER_S)}"
            if label == "irkit-opt (CLI)":
                target = f"< {TARGET_BYTES_PER_OP} B/op: {mark(per_op < TARGET_BYTES_PER_OP)}"
        print(f"{n:>8}  {label:<20} {secs:>8.3f} {ops:>10,.0f} {fmt_num(per_op, '>8,.0f'):>8}"
              f"  {vs_x:>8} {vs_m:>8}  {target}")

    print()
    print("memory ratios (irkit-opt B/op over peer B/op, same size):")
    for n in sizes:
        mine = results.get((n, "irkit-opt (CLI)"), (None, None))[1]
        parts = []
        for peer in ("xdsl-opt", "mlir-opt"):
            theirs = results.get((n, f"{peer} (CLI)"), (None, None))[1]
            if theirs:
                parts.append(f"vs {peer} {fmt_ratio(mine, theirs)}")
        print(f"  {n:>8} ops: {', '.join(parts) or '-'}")

    print()
    print(f"start-up on an empty module (median of {args.startup_runs}):")
    for t, secs in startup.items():
        note = ""
        if t == "irkit-opt":
            note = f"  target < {TARGET_STARTUP_S} s: {mark(secs < TARGET_STARTUP_S)}"
        ratio = ""
        if t != "irkit-opt":
            ratio = f"  (irkit-opt / {t}: {fmt_ratio(startup['irkit-opt'], secs)})"
        print(f"  {t:<10} {secs:6.3f} s{note}{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
