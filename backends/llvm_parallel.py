"""LLVM rules for `loop.parallel` and `omp.parallel`: loop nests, run sequentially or by an
OpenMP team.

The iterations of a parallel loop are unordered, so any schedule is valid. Without the
OpenMP runtime (`ModuleLowering.openmp` false: libgomp not found) and for a `loop.parallel`
nested in another, the loop is a plain loop nest in row-major order, as the interpreter runs
it; an `omp.parallel` is then its region, run once.

With it, each outermost `loop.parallel` is lowered as clang and GCC lower `#pragma omp
parallel for schedule(static)` for GCC's runtime, libgomp: the body is outlined into
`void fn(void *ctx)` and run by `GOMP_parallel(fn, ctx, nthreads, 0)`, which wakes the
threads of libgomp's pool (created once per process, kept between regions) and runs `fn` on
each of them and on the caller. Inside, each thread computes its own static chunk of
dimension 0 from `omp_get_thread_num()` / `omp_get_num_threads()`, as GCC's static schedule
does: no call into the runtime per chunk, no shared counter, and the same partition on every
call (a thread keeps touching the same rows: cache affinity, and results that do not depend
on timing). The work is a regular loop nest, so the dynamic schedule's load balancing
(`GOMP_loop_dynamic_*`, a locked counter per chunk) would buy nothing here.

An `omp.parallel` (dialects/omp.py, made by `loop-merge-parallel-regions` and by the
dot-product nest) is `#pragma omp parallel` around several `omp for`s: its region is
outlined the same way and forked once; every thread runs the code between the loops (pure,
or its own private buffers' and reads before the first loop: the verifier says so; a
`memory.alloca` is a slot of the outlined body's frame, each thread its own), and each
outermost `loop.parallel` in it is a worksharing loop, chunked as above. A loop worth no
split by its own work (`MIN_WORK_PER_THREAD_IN_TEAM`) runs on thread 0 alone. Before a
loop, a `GOMP_barrier` where it or the loop before it was split (its reads wait for the
other threads' writes, and theirs for its reads); two loops of thread 0 need none, nor does
the first loop the region runs (the fork ordered what came before), and the join ends the
region. Both decisions are computed alike on every thread.

How many threads: the module's global `irkit_num_threads` (i32, hidden; 0 by default), set
after loading (`JitModule.set_threads`, the C API's `irkit_init` / `irkit_set_threads`): 0
means OpenMP's own default, `omp_get_max_threads()` (OMP_NUM_THREADS, else every core). The
code never asks for more threads than a loop's dimension 0 has iterations, nor more than
its work pays for: each thread must get at least `MIN_WORK_PER_THREAD` units of work (one
op executed once, a vector load or store once per element: `_op_units`; a nested loop
counts its trip count on the first iteration of the loops around it, where its bounds are
index arithmetic: `_StartValues`, which divides by a run-time divisor too, such as a BLIS
nest's row block count; others count once). What a fork costs depends on libgomp's wait
policy (below): measured on a 2-vCPU Xeon VM, a fork and join of two threads that spin
between regions took 1.3 us, of two that sleep 74 us (a futex wake of each thread, on a
virtual machine an interrupt to an idle virtual CPU; 8-25 us on a 2-core Zen 4). One
threshold cannot serve both: the earlier 2^17, set by the Zen 4's sleeping forks, forked
the logistic regression step's (B=100) two matmuls of about 12 us each on the Xeon's
sleeping threads, 176 us a step against 45 on one thread, and kept the CNN's smaller loops
off its spinning ones (`MIN_WORK_PER_THREAD`). So the code scales both thresholds by `2 **
irkit_team_work_shift` (a hidden i64 global, 0 by default), which the loader sets to
`SLEEPING_WORK_SHIFT` where the threads sleep (`llvm_cpu.threads_sleep`; the C API's
`irkit_set_threads` reads the same two variables). A loop with fewer units than two threads
need runs on the calling thread, through a direct call of the same outlined function (no
second copy of the body), told by its context not to split: called from a thread of some
other OpenMP team (a C program's own parallel region), it must not take that team's chunk.

libgomp's threads spin a while at barriers and between regions before they sleep (its
default wait policy). That is the fastest on a machine of one's own, and the worst on an
oversubscribed one: a thread spinning for a descheduled teammate holds a core the teammate
needs, and a region can cost a scheduler time slice. Measured here with other jobs keeping
the load at 4 on 2 cores, the MLP's B=1024 training step took a median 150 ms on 2 threads
against 7 ms on one (best 1.9 vs 3.0 ms); `OMP_WAIT_POLICY=passive` brought it back to
7 ms. So the JIT lets libgomp's threads spin only where the load average left a core for
each when libgomp loaded, and never in an MPI rank (`llvm_cpu.spin_rounds`, with its
measurements); a C program sets its own policy (OMP_WAIT_POLICY=passive on a shared
machine).

Algorithm:

1. Captures: the values the op's region uses that are defined outside it, and the op's
   operands, in the order they are first used; constants and pure ops of constants are
   computed again in the outlined body instead (LLVM then sees constant strides and bounds,
   where a value loaded from the context is unknown to it).
2. The region is outlined into an internal `void __irkit_parallel_<n>(ptr ctx)`; the
   context is the struct `{captures..., i1 split}`. With `split`, in a worksharing loop the
   thread `tid` of a team of `nth` runs iterations [tid*q + min(tid, r), that + q + (tid <
   r)) of dimension 0 (q, r = divmod(trips, nth): chunks differ by at most one iteration);
   without, all of them. `iv0 = lb0 + t * step0`; the other dimensions are nested inside,
   sequentially.
3. At the op: work = its region's cost (`_block_cost`: a loop's body times its trip
   counts), team = min(requested or omp_get_max_threads(), work / least, and for a
   `loop.parallel` its trips), where least = MIN_WORK_PER_THREAD << irkit_team_work_shift.
   A team of two or more runs `GOMP_parallel(fn, &ctx, team, 0)`; otherwise `fn(&ctx)`
   runs here with split false. In an `omp.parallel`, the team runs the members from the
   first worth a fork to the last; those before and after run here, by a call of `fn`
   made only where there are some (every call runs the region's team code: a private
   buffer filled for nothing cost the dot nest's two threads 2 us in 13).
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit.dialects import arith
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.dialects.omp import holds_worksharing_loop
from irkit.ir import BlockArgument, Operation, Value
from irkit.rewrite import is_pure
from irkit.backends.llvm_lowering import (
    FunctionLowering, align_function, emit_loop, emit_loop_nest, lowers,
)
from irkit.backends.llvm_profile import count_team
from irkit.backends.llvm_types import I1, I32, I64, PTR, VOID

#: the least work (body ops executed) worth a thread of its own in a fork of threads that
#: spin between regions (module docstring): such a fork cost 1.3 us on a 2-vCPU Xeon VM. Set
#: by measurement there, two spinning threads: 2^11 to 2^14 all beat the earlier 2^17 on
#: the CNN (B=64), by as much; `.so` builds alternated in one process, both orders, medians,
#: 2^13 against 2^17: the CNN step 545-557 against 648-656 us, the MLP 784-256-10 step
#: unchanged (B=128 495 / 496 us, B=1024 3148 / 3181 us)
MIN_WORK_PER_THREAD = 1 << 13
#: the same inside an `omp.parallel` whose team is running, where a barrier costs less than
#: a fork: a loop with less than twice this runs on one thread of the team
MIN_WORK_PER_THREAD_IN_TEAM = 1 << 11
#: the global holding the requested thread count (0: OpenMP's default)
THREADS_GLOBAL = "irkit_num_threads"
#: the global scaling both work thresholds by a power of two (module docstring): 0 where
#: libgomp's threads spin between regions, `SLEEPING_WORK_SHIFT` where they sleep
WORK_SHIFT_GLOBAL = "irkit_team_work_shift"
#: where the threads sleep, a team needs 128x the work: a sleeping fork cost 74 us on a
#: 2-vCPU Xeon VM (57x a spinning one). Measured there on two sleeping threads, train steps'
#: medians (us), each threshold beside 2^17 in one process: 2^19, 2^20 and 2^21 gave the
#: CNN (B=64) 1005, 841 and 755 against 1775-1828; the MLP 784-256-10 at B=1024 3635, 3299
#: and 3554 against 3631-3814, at B=128 within 7% of each other; the logistic regression
#: (B=100) 47 at 2^19 against 190
SLEEPING_WORK_SHIFT = 7
#: the C runtime functions the lowering calls (libgomp)
_OMP_FUNCTIONS = {
    "GOMP_parallel": ir.FunctionType(VOID, [PTR, PTR, I32, I32]),
    "GOMP_barrier": ir.FunctionType(VOID, []),
    "omp_get_thread_num": ir.FunctionType(I32, []),
    "omp_get_num_threads": ir.FunctionType(I32, []),
    "omp_get_max_threads": ir.FunctionType(I32, []),
}


@lowers("loop.parallel")
def _parallel(lw: FunctionLowering, op, args):
    if not lw.in_parallel:
        if isinstance(lw, TeamLowering):
            _workshare(lw, op)
            return
        if lw.ml.openmp:
            _fork(lw, op)
            return
    n = len(args) // 3
    lbs, ubs, steps = args[:n], args[n:2 * n], args[2 * n:]
    block = op.regions[0].blocks[0]

    def body(ivs):
        for a, iv in zip(block.args, ivs):
            lw.values[a] = iv
        lw.lower_block(block)
    emit_loop_nest(lw, lbs, ubs, steps, body)


@lowers("omp.parallel")
def _team_region(lw: FunctionLowering, op, args):
    if lw.ml.openmp and not lw.in_parallel and not isinstance(lw, TeamLowering):
        _fork(lw, op)
    else:                                   # sequential: the region once, here
        lw.lower_block(op.regions[0].blocks[0])


@lowers("omp.terminator")
def _terminator(lw: FunctionLowering, op, args):
    return None                             # the outlined function returns after it


def _nested(op: Operation) -> set[int]:
    """The ids of `op` and of every op nested in it: whether a value is defined outside `op`
    is then one set lookup (`_defined_outside`), not a walk up its parents."""
    return {id(o) for o in op.walk()}


def _defined_outside(nested: set[int], v: Value) -> bool:
    """Whether `v` is defined outside the op whose `_nested` set is `nested`."""
    owner = v.owner_op
    return owner is None or id(owner) not in nested


def _rematerializable(v: Value) -> bool:
    """Whether `v` is a constant, or a pure op of constants: cheaper to compute again in an
    outlined body than to load from its context, and visible to LLVM there (a constant
    stride lets it schedule the micro-kernel's addresses; a loaded one does not)."""
    op = v.defining_op()
    if op is None or op.regions:
        return False
    if isinstance(op, arith.ConstantOp):
        return True
    return bool(op.operands) and is_pure(op) and all(_rematerializable(x) for x in op.operands)


def _captures(op) -> tuple[list[Value], list[Operation]]:
    """What `op`'s region reads from outside it, and its own operands, in first-use order:
    (the values passed in the context, the ops computed again in the outlined body, operands
    before users)."""
    seen: dict[Value, None] = {}
    again: dict[Operation, None] = {}
    inside = _nested(op)

    def use(v: Value) -> None:
        if v in seen or not _defined_outside(inside, v):
            return
        seen[v] = None
        if _rematerializable(v):
            for x in v.owner_op.operands:
                use(x)
            again[v.owner_op] = None

    for v in op.operands:
        use(v)
    for nested in op.regions[0].blocks[0].ops:
        for inner in nested.walk():
            for v in inner.operands:
                use(v)
    return [v for v in seen if v.owner_op not in again], list(again)


def _omp(lw: FunctionLowering, name: str) -> ir.Function:
    return lw.ml.declare_runtime(name, _OMP_FUNCTIONS[name], lw.op)


def threads_global(lw: FunctionLowering) -> ir.GlobalVariable:
    """The module's `irkit_num_threads` (created on first use): hidden, so that two libraries
    in one process never share it, yet visible to the library's own C code and to MCJIT."""
    return lw.ml.hidden_global(THREADS_GLOBAL, I32)


def _least_work(lw: FunctionLowering, least: int) -> ir.Value:
    """`least` units scaled by the module's `irkit_team_work_shift` (module docstring)."""
    b = lw.builder
    shift = b.load(lw.ml.hidden_global(WORK_SHIFT_GLOBAL, I64), typ=I64)
    return b.shl(ir.Constant(I64, least), shift)


def _trip_count(b: ir.IRBuilder, lb: ir.Value, ub: ir.Value, step: ir.Value) -> ir.Value:
    """(ub - lb - 1) / step + 1 when lb < ub, else 0 (exact as unsigned; step > 0)."""
    span = b.sub(b.sub(ub, lb), ir.Constant(I64, 1))
    return b.select(b.icmp_signed("<", lb, ub),
                    b.add(b.udiv(span, step), ir.Constant(I64, 1)), ir.Constant(I64, 0))


#: integer ops whose value on a body's first iteration the cost estimate may compute
#: before the loop: pure, no regions, no trap (`_DIVIDING`: by the divisor if it is positive,
#: else by 1, so that a division the body guards or never reaches cannot trap here)
_INDEX_ARITH = (arith.ConstantOp, arith.AddIOp, arith.SubIOp, arith.MulIOp, arith.MinSIOp,
                arith.MaxSIOp, arith.MinUIOp, arith.MaxUIOp, arith.IndexCastOp, arith.CmpIOp,
                arith.SelectOp)
_DIVIDING = (arith.CeilDivSIOp, arith.FloorDivSIOp, arith.DivUIOp, arith.DivSIOp,
             arith.RemUIOp, arith.RemSIOp)


class _StartValues:
    """The values index arithmetic inside `outer` has on the first iteration of every loop
    around it (each induction variable at its lower bound), computed before `outer` by the
    ops' own rules; None for a value that is not such arithmetic (a load, a carried value).

    BLIS nests and tiled loops compute their inner bounds inside the parallel body
    (`min(K - pc, kc)`, `ceildiv(rows, mr)`); counting such a loop once made a 30 us matmul
    look like a few hundred ops, run on one thread. Its first iteration's bounds are the
    full block's (the remainder comes last), a fair estimate of every iteration's."""

    def __init__(self, lw: FunctionLowering, outer: Operation) -> None:
        self.lw, self.outer = lw, outer
        self.known: dict[Value, ir.Value | None] = {}
        self._nested = _nested(outer)

    def value(self, v: Value) -> ir.Value | None:
        if _defined_outside(self._nested, v):
            return self.lw.get(v)
        if v not in self.known:
            self.known[v] = self._compute(v)
        return self.known[v]

    def _compute(self, v: Value) -> ir.Value | None:
        if isinstance(v, BlockArgument):       # an induction variable: its lower bound
            bounds = _loop_bounds(v.owner_op)
            return None if bounds is None or v.index >= len(bounds[0]) else \
                self.value(bounds[0][v.index])
        op = v.owner_op
        if not isinstance(op, _INDEX_ARITH + _DIVIDING) or op.regions:
            return None
        args = [self.value(x) for x in op.operands]
        if any(a is None for a in args):
            return None
        lw, where = self.lw, self.lw.op
        if isinstance(op, _DIVIDING):          # a block count known at run time, say
            b, d = lw.builder, args[1]
            one = ir.Constant(d.type, 1)
            args[1] = b.select(b.icmp_signed(">", d, ir.Constant(d.type, 0)), d, one)
        lw.op = op
        out = lw.ml.rules[op.name](lw, op, args)
        lw.op = where
        return out[v.index] if isinstance(out, (list, tuple)) else out


def _block_cost(lw: FunctionLowering, start: _StartValues, ops) -> ir.Value:
    """The work of one execution of `ops` (in `start.outer`): one unit per op, or per
    element for a vector load or store (`_op_units`), a loop's body times its trip count on
    the first iteration (`_StartValues`), once where that count is not index arithmetic."""
    b = lw.builder
    units, terms = 0, []
    for op in ops:
        if not op.regions:
            units += _op_units(op)
            continue
        inner = ir.Constant(I64, 0)
        for region in op.regions:
            for blk in region.blocks:
                inner = b.add(inner, _block_cost(lw, start, blk.ops))
        for dim in zip(*(_loop_bounds(op) or ())):
            lb, ub, step = (start.value(v) for v in dim)
            if lb is not None and ub is not None and step is not None:
                inner = b.mul(inner, _trip_count(b, lb, ub, umax(b, step, 1)))
        terms.append(inner)
    total = ir.Constant(I64, units)
    for t in terms:
        total = b.add(total, t)
    return total


#: the ops that move a whole vector between registers and memory (`_op_units`)
_VECTOR_ACCESSES = ("memory.vector_load", "memory.vector_store")


def _op_units(op: Operation) -> int:
    """The work units of one execution of an op without regions: none for a constant, one
    element per lane for a vector load or store, one for anything else.

    Why a vector access counts its elements. A unit was taken for about 0.25 ns (an ALU op,
    a vector FMA as much as a scalar add), and a loop of vector loads and stores (packing a
    BLIS panel, a commit, a reduction over rows) did its work at about 0.9 ns a unit: memory
    moves by the element, from caches that another core may hold. Counted as one unit, such
    loops stayed on one thread. Counted per element, measured on this 2-core machine (each
    step compiled both ways in one process, calls alternated, 2 threads, 40 rounds, median
    ms, one unit / 16 units for a 16-lane access; two runs where two numbers): cnn B=64
    1.32 / 1.20 and 1.81 / 1.66, logreg 0.063 / 0.058 and 0.092 / 0.082, MLP 784-256-10
    B=1024 5.44 / 5.36, matmul 1024^3 12.5 / 12.2, MLP B=128 1.37 / 1.36, softmax 1.23 /
    1.23. One thread is unaffected: it never forks."""
    if op.name in _VECTOR_ACCESSES:
        t = (op.results[0] if op.results else op.operands[0]).type
        return max(1, getattr(t, "num_elements", None) or 1)
    return int(not isinstance(op, arith.ConstantOp))


def umax(b: ir.IRBuilder, x: ir.Value, y: int) -> ir.Value:
    """max(x, y) of an i64 `x` as unsigned, and a constant."""
    c = ir.Constant(I64, y)
    return b.select(b.icmp_unsigned("<", x, c), c, x)


def _loop_bounds(op: Operation):
    """(lower bounds, upper bounds, steps) of a `loop.for` or `loop.parallel`, else None."""
    if isinstance(op, ForOp):
        return [op.lower_bound], [op.upper_bound], [op.step]
    if isinstance(op, ParallelOp):
        return list(op.lower_bounds), list(op.upper_bounds), list(op.steps)
    return None


def _members(op: Operation) -> list[Operation]:
    """The loops `op` runs: itself for a `loop.parallel`, else its region's parallel loops
    and the `loop.for` / `loop.if`s around some. The region's other ops, a loop filling a
    private buffer among them, are team code: every call of the outlined body runs them (a
    private buffer is filled in the frame whose loops read it)."""
    if isinstance(op, ParallelOp):
        return [op]
    return [o for o in op.regions[0].blocks[0].ops if holds_worksharing_loop(o)]


def _fork(lw: FunctionLowering, op: Operation) -> None:
    """Run `op` (an outermost `loop.parallel`, or an `omp.parallel`) on a team as large as
    its work pays for, or here (step 3 of the module docstring)."""
    b = lw.builder
    captures, again = _captures(op)
    members = _members(op)
    ranged = not isinstance(op, ParallelOp)   # the context says which members the team runs
    ctx_type = ir.LiteralStructType([lw.get(v).type for v in captures] + [I1] +
                                    [I64, I64] * ranged)
    outlined = _outline(lw, op, captures, again, ctx_type)
    start = _StartValues(lw, op)
    works = [_block_cost(lw, start, [m]) for m in members]

    def umin(x, y):
        return b.select(b.icmp_unsigned("<", x, y), x, y)

    def constant(k: int) -> ir.Constant:
        return ir.Constant(I64, k)

    # the members worth a fork: the team runs the first of them to the last
    least = _least_work(lw, MIN_WORK_PER_THREAD)
    pair = b.shl(least, constant(1))            # two threads' least work
    worth = [b.icmp_unsigned(">=", w, pair) for w in works]
    first, end, work = constant(len(members)), constant(0), constant(0)
    for k, (w, ok) in enumerate(zip(works, worth)):
        first = b.select(ok, umin(first, constant(k)), first)
        end = b.select(ok, constant(k + 1), end)
        work = b.select(b.icmp_unsigned("<", work, w), w, work)
    requested = b.load(threads_global(lw), typ=I32)
    team = b.select(b.icmp_signed(">", requested, ir.Constant(I32, 0)), requested,
                    b.call(_omp(lw, "omp_get_max_threads"), []))
    team = umin(b.sext(team, I64), b.udiv(work, least))
    if isinstance(op, ParallelOp):          # no more threads than chunks of dimension 0
        team = umin(team, _trip_count(b, *(lw.get(v) for v in _dim0(op))))
    split = b.icmp_unsigned(">", team, constant(1))
    count_team(lw, op, umax(b, team, 1))
    slot = lw.alloca(ctx_type)
    # The captured values, the same on every path, are stored into the context once, field
    # by field; each call below stores only the fields that differ (whether the team
    # splits, which members it runs). The outlined function only reads the context. (One
    # aggregate per call, built by `insertvalue`s, was 450 instructions in the MLP.)
    for i, v in enumerate(captures):
        _store_field(b, lw.get(v), slot, i)

    def run(team_split, lo, hi, call) -> None:
        for i, value in enumerate([team_split] + [lo, hi] * ranged, start=len(captures)):
            _store_field(b, value, slot, i)
        call()

    def inline(lo, hi) -> None:
        run(ir.Constant(I1, 0), lo, hi, lambda: b.call(outlined, [slot]))

    def inline_some(lo, hi) -> None:
        # only where the range holds a member: every call runs the region's team code (a
        # private buffer's fill), which a call with nothing to run would do for nothing
        with b.if_then(b.icmp_unsigned("<", lo, hi)):
            inline(lo, hi)

    with b.if_else(split) as (threaded, alone):
        with threaded:
            if ranged:                      # the members before the first worth a fork
                inline_some(constant(0), first)
            run(split, first, end, lambda: b.call(
                _omp(lw, "GOMP_parallel"),
                [outlined, slot, b.trunc(team, I32), ir.Constant(I32, 0)]))
            if ranged:                      # and those after the last
                inline_some(end, constant(len(members)))
        with alone:
            inline(constant(0), constant(len(members)))


def _store_field(b: ir.IRBuilder, value: ir.Value, slot: ir.Value, i: int) -> None:
    """Store `value` into field `i` of the struct at `slot` (a typed stack slot)."""
    b.store(value, b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True))


def _dim0(op: ParallelOp) -> tuple[Value, Value, Value]:
    return op.lower_bounds[0], op.upper_bounds[0], op.steps[0]


class TeamLowering(FunctionLowering):
    """The body of an outlined region, run by each thread of a team (or once, alone, when
    `split` is false): its outermost `loop.parallel`s are worksharing loops (`_workshare`)."""

    def __init__(self, ml, fn: ir.Function, op: Operation) -> None:
        super().__init__(ml, fn, op)
        self.region = op
        self.split: ir.Value | None = None
        self.tid: ir.Value | None = None
        self.nth: ir.Value | None = None
        #: whether the last worksharing loop run was split (a barrier then comes first)
        self.after_split = self.alloca(I1)
        self._allocas.store(ir.Constant(I1, 0), self.after_split)
        #: whether a worksharing loop has run: before the first, the fork has synchronized
        #: the team and the code each thread ran touched only its own memory (no barrier)
        self.after_loop = self.alloca(I1)
        self._allocas.store(ir.Constant(I1, 0), self.after_loop)


def _outline(lw: FunctionLowering, op: Operation, captures: list[Value],
             again: list[Operation], ctx_type: ir.LiteralStructType) -> ir.Function:
    """`void __irkit_parallel_<n>(ptr ctx)`: what one thread of the team runs (all of `op`
    when the context says not to split)."""
    ml = lw.ml
    fn = ir.Function(ml.llmod, ir.FunctionType(VOID, [PTR]),
                     name=ml.unique_name("__irkit_parallel_"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")       # one copy of the body, called from both paths
    align_function(fn, ml.function_align)
    inner = TeamLowering(ml, fn, op)
    b = inner.builder
    ctx = b.load(fn.args[0], typ=ctx_type)
    for i, v in enumerate(captures):
        inner.values[v] = b.extract_value(ctx, i)
    for c in again:
        inner.lower_op(c)
    inner.split = split = b.extract_value(ctx, len(captures))
    inner.nth = b.select(split, b.sext(b.call(_omp(inner, "omp_get_num_threads"), []), I64),
                         ir.Constant(I64, 1))
    inner.tid = b.select(split, b.sext(b.call(_omp(inner, "omp_get_thread_num"), []), I64),
                         ir.Constant(I64, 0))
    if isinstance(op, ParallelOp):
        _workshare(inner, op)
    else:
        _run_members(inner, op, b.extract_value(ctx, len(captures) + 1),
                     b.extract_value(ctx, len(captures) + 2))
    inner.builder.ret_void()
    inner.finish()
    return fn


def _run_members(lw: TeamLowering, op: Operation, lo: ir.Value, hi: ir.Value) -> None:
    """The region of `op` (an `omp.parallel`), its members (`_members`) from `lo` to `hi`
    only: the context says which run on this team and which on the calling thread alone."""
    b = lw.builder
    index = {m: k for k, m in enumerate(_members(op))}
    for inner in op.regions[0].blocks[0].ops:
        k = index.get(inner)
        if k is None:
            lw.lower_op(inner)
            continue
        here = ir.Constant(I64, k)
        with b.if_then(b.and_(b.icmp_unsigned("<=", lo, here), b.icmp_unsigned(">", hi, here))):
            lw.lower_op(inner)


def _workshare(lw: TeamLowering, op: ParallelOp) -> None:
    """This thread's static chunk of `op`'s dimension 0, the other dimensions nested inside,
    sequentially. In an `omp.parallel`, a loop too small for the team (by its own work,
    `_block_cost`) runs on thread 0 alone, and a barrier comes first where this loop or the
    one before it was split (two loops of thread 0 need none; the join ends the region)."""
    b = lw.builder
    trips = _trip_count(b, *(lw.get(v) for v in _dim0(op)))
    split, tid, nth = lw.split, lw.tid, lw.nth
    if op is not lw.region:
        work = _block_cost(lw, _StartValues(lw, op), [op])
        split = b.and_(split, b.icmp_unsigned(
            ">=", work, _least_work(lw, 2 * MIN_WORK_PER_THREAD_IN_TEAM)))
        before = b.load(lw.after_split, typ=I1)
        with b.if_then(b.and_(b.or_(split, before), b.load(lw.after_loop, typ=I1))):
            b.call(_omp(lw, "GOMP_barrier"), [])
        b.store(split, lw.after_split)
        b.store(ir.Constant(I1, 1), lw.after_loop)
        tid = b.select(split, tid, ir.Constant(I64, 0))
        nth = b.select(split, nth, ir.Constant(I64, 1))
    q, r = b.udiv(trips, nth), b.urem(trips, nth)
    more = b.icmp_unsigned("<", tid, r)
    begin = b.add(b.mul(tid, q), b.select(more, tid, r))
    end = b.add(b.add(begin, q), b.zext(more, I64))
    if op is not lw.region:             # not split: thread 0 runs it all, the others none
        mine = b.or_(split, b.icmp_unsigned("==", lw.tid, ir.Constant(I64, 0)))
        end = b.select(mine, end, begin)
    lbs = [lw.get(v) for v in op.lower_bounds]
    ubs = [lw.get(v) for v in op.upper_bounds]
    steps = [lw.get(v) for v in op.steps]
    block = op.regions[0].blocks[0]

    def body(ivs):
        for a, iv in zip(block.args, ivs):
            lw.values[a] = iv
        lw.lower_block(block)

    def outer(t, carried):
        iv0 = lw.builder.add(lbs[0], lw.builder.mul(t, steps[0], flags=["nsw"]),
                             flags=["nsw"])
        emit_loop_nest(lw, lbs[1:], ubs[1:], steps[1:], lambda ivs: body([iv0, *ivs]))
        return []
    lw.in_parallel = True               # loops nested in this one run sequentially
    emit_loop(lw, begin, end, ir.Constant(I64, 1), [], outer)
    lw.in_parallel = False
