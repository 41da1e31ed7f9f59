"""Where a compiled step's time goes: each kernel's share, named by its model line.

    prof = model.profile("train_step", x=x, labels=labels, threads=2)
    print(prof)            # one row per kernel, its parallel regions under it

As `jax.profiler` or PyTorch's profiler do for their ops, this times the loop nests of a
compiled function. A *kernel* is one top-level loop nest of the lowered function (one per
structured op or `fusion.group`: lower-linalg-to-loop's nest, or a BLIS matmul's five
loops); a *region* is an outermost `loop.parallel` inside a kernel that is not the kernel
itself (a BLIS nest runs a packing region and a compute region per block of K), the unit
the OpenMP runtime forks and joins.

Algorithm:

1. Lower the model's graph module by the pipeline table (as the JIT does; nothing cached).
2. Mark each kernel and each region with `irkit.profile = N` (`backends/llvm_profile`):
   the backend brackets them with clock reads adding to per-region counters (nanoseconds,
   calls, threads started). Ordinary compiles never carry the attribute: the timers cost
   nothing unless a profile is asked for.
3. Compile that module in process, copy the variables (the model's own are not updated:
   a profiled `train_step` leaves the model as it was), run the function twice to warm
   up, zero the counters and run it `repeat` times, timing each call from Python too.
4. Per kernel and region: mean time per call of the function, calls per step, its share of
   the step, and the mean team size per call (1: it ran on the calling thread). What no
   kernel covers (argument checks, allocation of outputs, code between kernels, the
   timers themselves: about 50 ns a kernel) is the step's `other` row.

Each timer reads the clock on the calling thread before and after the nest, so a region's
time includes its fork and join: a region whose time is much more than its work divided by
the team size is paying for the fork (see `backends/llvm_parallel`).
"""

from __future__ import annotations

import ctypes
import statistics
import time
from dataclasses import dataclass

import numpy as np

from irkit.attributes import IntegerAttr
from irkit.diagnostics import SOURCES, resolve_file_line_col
from irkit.ir import Operation
from irkit.symbols import symbol_name
from irkit.types import I64
from irkit.dialects.loop import ParallelOp
from irkit.backends.llvm_profile import COUNTERS, PROFILE_ATTR, counters_name
from irkit.runtime.compiled import CompiledRunner, IRText, lower_model_with_graph


@dataclass
class Row:
    """One timed kernel or region: where it comes from and what it cost per step."""

    kind: str                    # "kernel" or "region"
    function: str
    location: tuple | None       # (file, line, col) of the op the loops came from
    seconds: float = 0.0         # mean per step
    calls: float = 0.0           # per step
    team: float | None = None    # mean threads per call, of a `loop.parallel`

    def source(self) -> str:
        """`file:line:col` and the model text from that column on (shortened)."""
        if self.location is None:
            return "(no location)"
        file, line, col = self.location
        text = SOURCES.line_text(file, line) or ""
        snippet = text[max(col - 1, 0):].strip()
        if len(snippet) > 40:
            snippet = snippet[:37] + "..."
        return f"{file.rsplit('/', 1)[-1]}:{line}:{col} {snippet}".rstrip()


@dataclass
class Profile:
    """The kernels of one function (with their regions) and the step's time."""

    function: str
    threads: int
    step_seconds: float          # mean over the repeats, timed from Python (as the rows)
    rows: list[Row]

    def kernels(self) -> list[Row]:
        return [r for r in self.rows if r.kind == "kernel"]

    def __str__(self) -> str:
        step = self.step_seconds
        covered = sum(r.seconds for r in self.kernels())
        lines = [f"profile of {self.function}, {self.threads or 'default'} thread(s): "
                 f"{step * 1e6:.1f} us per step (mean)",
                 f"{'us/step':>9} {'share':>6} {'calls':>6} {'team':>5}  kernel / region"]
        for r in self.rows:
            indent = "  " if r.kind == "kernel" else "    - "
            team = "-" if r.team is None else f"{r.team:.2g}"
            lines.append(f"{r.seconds * 1e6:9.1f} {100 * r.seconds / step:5.1f}% "
                         f"{r.calls:6.3g} {team:>5}{indent}{r.source()}")
        other = step - covered
        lines.append(f"{other * 1e6:9.1f} {100 * other / step:5.1f}%"
                     f"{'':13}  other (calls, checks, outputs, code between kernels)")
        return "\n".join(lines)


def _mark(lowered: Operation, function: str) -> list[tuple[Operation, Row]]:
    """Give each kernel of `function` (its top-level ops with regions) and each outermost
    `loop.parallel` below one a region number; (op, row) in order."""
    marked: list[tuple[Operation, Row]] = []

    def mark(op: Operation, kind: str) -> None:
        op.attributes[PROFILE_ATTR] = IntegerAttr(len(marked), I64)
        marked.append((op, Row(kind, function, resolve_file_line_col(op.location))))

    def regions_below(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if isinstance(inner, ParallelOp) or inner.name == "omp.parallel":
                        mark(inner, "region")
                    else:
                        regions_below(inner)

    for fn in lowered.regions[0].blocks[0].ops:
        if fn.name != "func.func" or fn.properties["sym_name"].value != function:
            continue
        for op in fn.regions[0].blocks[0].ops:
            if op.regions:
                mark(op, "kernel")
                if not isinstance(op, ParallelOp) and op.name != "omp.parallel":
                    regions_below(op)
    return marked


def profile_module(module: Operation, function: str, inputs: dict, variables: dict, *,
                   threads: int = 0, repeat: int = 20, disable=(),
                   pass_options: str = "") -> Profile:
    """Profile `function` of the graph module `module` (one model's, as `Model.module`)
    on `inputs`, starting from copies of `variables`, on `threads` threads (0: OpenMP's
    default), lowered without the passes in `disable` and with the options `pass_options`
    sets; see the module docstring."""
    from irkit.backends.llvm_cpu import compile_module
    graph, lowered = lower_model_with_graph(module, disable=disable, pass_options=pass_options)
    marked = _mark(lowered, function)
    if not any(r.kind == "kernel" for _, r in marked):
        raise ValueError(f"the model has no compiled function {function!r} with loops")
    jm = compile_module(lowered, threads=threads)
    runner = CompiledRunner(lowered, dict(jm.functions), jm, graph=IRText(graph))
    store = {k: np.array(v) for k, v in variables.items()}
    addresses = [jm.global_address(counters_name(i)) for i in range(len(marked))]
    if not all(addresses):
        raise RuntimeError("the compiled code lacks the counters of a timed region")
    counters = [(ctypes.c_int64 * COUNTERS.count).from_address(a) for a in addresses]
    name = symbol_name(module) or "model"
    for _ in range(2):
        runner.run(function, name, inputs, store)
    for c in counters:
        ctypes.memset(c, 0, ctypes.sizeof(c))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        runner.run(function, name, inputs, store)
        times.append(time.perf_counter() - t0)
    rows = []
    for (_, row), c in zip(marked, counters):
        row.seconds = c[0] * 1e-9 / repeat
        row.calls = c[1] / repeat
        row.team = c[2] / c[1] if c[2] else None      # None: not a parallel loop itself
        rows.append(row)
    return Profile(function, threads, statistics.fmean(times), rows)
