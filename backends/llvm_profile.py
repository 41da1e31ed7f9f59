"""Opt-in timing of regions of compiled code: what `irkit.runtime.profile` reads.

An op carrying the discardable attribute `irkit.profile = N : i64` is timed: the code its
rule emits is bracketed by two reads of the monotonic clock (`clock_gettime`, a vDSO call
of some 20 ns on Linux), and the elapsed nanoseconds and one call are added to the
module's global `irkit_profile_N` (`[3 x i64]`: nanoseconds, calls, threads). A
`loop.parallel` run by OpenMP adds the size of the team it started to the third counter
(`llvm_parallel`), so a profile tells how many of a region's calls ran on threads and on
how many.

Nothing is emitted for an op without the attribute: the pipeline never sets it, only the
profiler does, on a copy of the lowered module it compiles for itself, so code compiled
the ordinary way pays nothing. The counters are added on the calling thread, outside any
parallel region (a timed op is a top-level loop nest of a function, or an outermost
`loop.parallel` inside one), so plain adds are race free. The globals are hidden, as the
thread count is (`llvm_parallel.threads_global`): two libraries never share them, and
MCJIT still finds them by name. (`lw` below is the op's `llvm_lowering.FunctionLowering`,
not imported: that module calls this one.)
"""

from __future__ import annotations

import time
from typing import Callable

import llvmlite.ir as ir

from irkit.ir import Operation
from irkit.backends.llvm_types import I32, I64, PTR

#: the discardable attribute that asks for an op to be timed, and its region number
PROFILE_ATTR = "irkit.profile"
#: the counters of one region: nanoseconds, calls, threads started
COUNTERS = ir.ArrayType(I64, 3)
#: `struct timespec` on LP64 systems: seconds and nanoseconds
_TIMESPEC = ir.LiteralStructType([I64, I64])


def counters_name(region: int) -> str:
    """The global that holds region `region`'s counters."""
    return f"irkit_profile_{region}"


def profile_region(op: Operation) -> int | None:
    """The region number `op` is timed under, or None (the usual case)."""
    attr = op.attributes.get(PROFILE_ATTR)
    return None if attr is None else attr.value


def _now(lw) -> ir.Value:
    """Nanoseconds on the monotonic clock."""
    b = lw.builder
    clock = lw.ml.declare_runtime("clock_gettime", ir.FunctionType(I32, [I32, PTR]), lw.op)
    slot = lw.alloca(_TIMESPEC)
    b.call(clock, [ir.Constant(I32, time.CLOCK_MONOTONIC), slot])
    ts = b.load(slot, typ=_TIMESPEC)
    return b.add(b.mul(b.extract_value(ts, 0), ir.Constant(I64, 1_000_000_000)),
                 b.extract_value(ts, 1))


def _add(lw, region: int, index: int, amount: ir.Value) -> None:
    b = lw.builder
    counters = lw.ml.hidden_global(counters_name(region), COUNTERS)
    ptr = b.gep(counters, [ir.Constant(I32, 0), ir.Constant(I32, index)])
    b.store(b.add(b.load(ptr, typ=I64), amount), ptr)


def timed(lw, region: int, emit: Callable[[], object]):
    """`emit()` (an op's rule), bracketed by clock reads that add its time and one call to
    region `region`'s counters; returns what `emit` returns."""
    start = _now(lw)
    out = emit()
    _add(lw, region, 0, lw.builder.sub(_now(lw), start))
    _add(lw, region, 1, ir.Constant(I64, 1))
    return out


def count_team(lw, op: Operation, team: ir.Value) -> None:
    """Add the team size a timed `loop.parallel` chose (1: it ran on the calling thread)."""
    region = profile_region(op)
    if region is not None:
        _add(lw, region, 2, team)
