"""LLVM rule for `loop.parallel`: a loop nest, run sequentially or by an OpenMP team.

The iterations of a parallel loop are unordered, so any schedule is valid. Without the
OpenMP runtime (`ModuleLowering.openmp` false: libgomp not found) and for a `loop.parallel`
nested in another, the loop is a plain loop nest in row-major order, as the interpreter runs
it.

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

How many threads: the module's global `irkit_num_threads` (i32, hidden; 0 by default), set
after loading (`JitModule.set_threads`, the C API's `irkit_init` / `irkit_set_threads`):
0 means OpenMP's own default, `omp_get_max_threads()` (OMP_NUM_THREADS, else every core).
The code never asks for more threads than dimension 0 has iterations, nor more than its work
pays for: each thread must get at least `MIN_WORK_PER_THREAD` units of work (one op of the
body executed once; a nested loop counts its trip count on the first iteration of the loops
around it, where its bounds are index arithmetic: `_StartValues`; others count once).
GOMP_parallel costs about 1 us on this 2-core machine when the pool is awake and 10 us
once it sleeps (as it does at once: `llvm_cpu` sets GOMP_SPINCOUNT=0); 2^15 units are
10-30 us of scalar work, so a region costs a fraction of what it splits. A loop with fewer
units than two threads need runs on the calling thread, through a direct call of the same
outlined function (no second copy of the body), told by its context not to split: called
from a thread of some other OpenMP team (a C program's own parallel region), it must not
take that team's chunk.

libgomp's threads spin a while at barriers and between regions before they sleep (its
default wait policy). That is the fastest on a machine of one's own, and the worst on an
oversubscribed one: a thread spinning for a descheduled teammate holds a core the teammate
needs, and a region can cost a scheduler time slice. Measured here with other jobs keeping
the load at 4 on 2 cores, the MLP's B=1024 training step took a median 150 ms on 2 threads
against 7 ms on one (best 1.9 vs 3.0 ms); `OMP_WAIT_POLICY=passive` brought it back to
7 ms. So the JIT has libgomp's threads sleep at once (`llvm_cpu`); a C program sets its own
policy (OMP_WAIT_POLICY=passive on a shared machine).

Algorithm:

1. Captures: the values the body uses that are defined outside the op, and the op's bounds
   and steps, in the order they are first used.
2. The body is outlined into an internal `void __irkit_parallel_<n>(ptr ctx)`; the context
   is the struct `{captures..., i64 trips, i1 split}`. With `split`, the thread `tid` of a
   team of `nth` runs iterations [tid*q + min(tid, r), that + q + (tid < r)) of dimension 0
   (q, r = divmod(trips, nth): chunks differ by at most one iteration); without, all of
   them. `iv0 = lb0 + t * step0`; the other dimensions are nested inside, sequentially.
3. At the op: trips = the trip count of dimension 0, work = the product of every
   dimension's trip count times the body's cost on its first iteration (`_block_cost`),
   team = min(requested or omp_get_max_threads(), trips, work / MIN_WORK_PER_THREAD). A
   team of two or more runs `GOMP_parallel(fn, &ctx, team, 0)`; otherwise `fn(&ctx)` runs
   here with split false.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit.attributes import IntegerAttr
from irkit.dialects import arith
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.rewrite import constant_value
from irkit.backends.llvm_lowering import FunctionLowering, emit_loop, emit_loop_nest, lowers
from irkit.backends.llvm_profile import count_team
from irkit.backends.llvm_types import I1, I32, I64, PTR, VOID

#: the least work (body ops executed) worth a thread of its own; see the module docstring
MIN_WORK_PER_THREAD = 1 << 15
#: the global holding the requested thread count (0: OpenMP's default)
THREADS_GLOBAL = "irkit_num_threads"
#: the C runtime functions the lowering calls (libgomp)
_OMP_FUNCTIONS = {
    "GOMP_parallel": ir.FunctionType(VOID, [PTR, PTR, I32, I32]),
    "omp_get_thread_num": ir.FunctionType(I32, []),
    "omp_get_num_threads": ir.FunctionType(I32, []),
    "omp_get_max_threads": ir.FunctionType(I32, []),
}


@lowers("loop.parallel")
def _parallel(lw: FunctionLowering, op, args):
    if lw.ml.openmp and not lw.in_parallel:
        _openmp_parallel(lw, op)
        return
    n = len(args) // 3
    lbs, ubs, steps = args[:n], args[n:2 * n], args[2 * n:]
    block = op.regions[0].blocks[0]

    def body(ivs):
        for a, iv in zip(block.args, ivs):
            lw.values[a] = iv
        lw.lower_block(block)
    emit_loop_nest(lw, lbs, ubs, steps, body)


def _captures(op) -> list[Value]:
    """The values `op`'s body reads from outside it, and its own operands, in first-use order."""
    seen: dict[Value, None] = dict.fromkeys(op.operands)
    for nested in op.regions[0].blocks[0].ops:
        for inner in nested.walk():
            for v in inner.operands:
                if v not in seen and op.is_defined_outside(v):
                    seen[v] = None
    return list(seen)


def _omp(lw: FunctionLowering, name: str) -> ir.Function:
    return lw.ml.declare_runtime(name, _OMP_FUNCTIONS[name], lw.op)


def threads_global(lw: FunctionLowering) -> ir.GlobalVariable:
    """The module's `irkit_num_threads` (created on first use): hidden, so that two libraries
    in one process never share it, yet visible to the library's own C code and to MCJIT."""
    return lw.ml.hidden_global(THREADS_GLOBAL, I32)


def _trip_count(b: ir.IRBuilder, lb: ir.Value, ub: ir.Value, step: ir.Value) -> ir.Value:
    """(ub - lb - 1) / step + 1 when lb < ub, else 0 (exact as unsigned; step > 0)."""
    span = b.sub(b.sub(ub, lb), ir.Constant(I64, 1))
    return b.select(b.icmp_signed("<", lb, ub),
                    b.add(b.udiv(span, step), ir.Constant(I64, 1)), ir.Constant(I64, 0))


#: integer ops whose value on a body's first iteration the cost estimate may compute
#: before the loop: pure, no regions, no trap (`_DIVIDING` only by a constant other than 0)
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

    def value(self, v: Value) -> ir.Value | None:
        if self.outer.is_defined_outside(v):
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
        if isinstance(op, _DIVIDING):
            divisor = constant_value(op.rhs)
            if not isinstance(divisor, IntegerAttr) or not divisor.value:
                return None
        elif not isinstance(op, _INDEX_ARITH) or op.regions:
            return None
        args = [self.value(x) for x in op.operands]
        if any(a is None for a in args):
            return None
        lw, where = self.lw, self.lw.op
        lw.op = op
        out = lw.ml.rules[op.name](lw, op, args)
        lw.op = where
        return out[v.index] if isinstance(out, (list, tuple)) else out


def _block_cost(lw: FunctionLowering, start: _StartValues, block: Block) -> ir.Value:
    """The work of one execution of `block` (in `start.outer`'s body): one unit per op, a
    nested loop's body times its trip count on the first iteration (`_StartValues`), once
    where that count is not index arithmetic."""
    b = lw.builder
    units, terms = 0, []
    for op in block.ops:
        if not op.regions:
            units += not isinstance(op, arith.ConstantOp)
            continue
        inner = ir.Constant(I64, 0)
        for region in op.regions:
            for blk in region.blocks:
                inner = b.add(inner, _block_cost(lw, start, blk))
        for dim in zip(*(_loop_bounds(op) or ())):
            lb, ub, step = (start.value(v) for v in dim)
            if lb is not None and ub is not None and step is not None:
                inner = b.mul(inner, _trip_count(b, lb, ub, umax(b, step, 1)))
        terms.append(inner)
    total = ir.Constant(I64, units)
    for t in terms:
        total = b.add(total, t)
    return total


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


def _openmp_parallel(lw: FunctionLowering, op) -> None:
    b = lw.builder
    captures = _captures(op)
    ctx_type = ir.LiteralStructType([lw.get(v).type for v in captures] + [I64, I1])
    outlined = _outline(lw, op, captures, ctx_type)
    dims = list(zip(op.lower_bounds, op.upper_bounds, op.steps))
    trips = [_trip_count(b, *(lw.get(v) for v in dim)) for dim in dims]
    work = _block_cost(lw, _StartValues(lw, op), op.regions[0].blocks[0])
    for t in trips:
        work = b.mul(work, t)

    def umin(x, y):
        return b.select(b.icmp_unsigned("<", x, y), x, y)

    requested = b.load(threads_global(lw), typ=I32)
    team = b.select(b.icmp_signed(">", requested, ir.Constant(I32, 0)), requested,
                    b.call(_omp(lw, "omp_get_max_threads"), []))
    team = umin(umin(b.sext(team, I64), trips[0]),
                b.udiv(work, ir.Constant(I64, MIN_WORK_PER_THREAD)))
    split = b.icmp_unsigned(">", team, ir.Constant(I64, 1))
    count_team(lw, op, umax(b, team, 1))
    ctx = ir.Constant(ctx_type, None)
    for i, v in enumerate(captures + [None, None]):
        value = lw.get(v) if v is not None else trips[0] if i == len(captures) else split
        ctx = b.insert_value(ctx, value, i)
    slot = lw.alloca(ctx_type)
    b.store(ctx, slot)
    with b.if_else(split) as (threaded, inline):
        with threaded:
            b.call(_omp(lw, "GOMP_parallel"),
                   [outlined, slot, b.trunc(team, I32), ir.Constant(I32, 0)])
        with inline:
            b.call(outlined, [slot])


def _outline(lw: FunctionLowering, op, captures: list[Value],
             ctx_type: ir.LiteralStructType) -> ir.Function:
    """`void __irkit_parallel_<n>(ptr ctx)`: this thread's chunk of dimension 0."""
    ml = lw.ml
    fn = ir.Function(ml.llmod, ir.FunctionType(VOID, [PTR]),
                     name=ml.unique_name("__irkit_parallel_"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")       # one copy of the body, called from both paths
    inner = FunctionLowering(ml, fn, op)
    inner.in_parallel = True
    b = inner.builder
    ctx = b.load(fn.args[0], typ=ctx_type)
    for i, v in enumerate(captures):
        inner.values[v] = b.extract_value(ctx, i)
    trips = b.extract_value(ctx, len(captures))
    split = b.extract_value(ctx, len(captures) + 1)
    nth = b.select(split, b.sext(b.call(_omp(inner, "omp_get_num_threads"), []), I64),
                   ir.Constant(I64, 1))
    tid = b.select(split, b.sext(b.call(_omp(inner, "omp_get_thread_num"), []), I64),
                   ir.Constant(I64, 0))
    q, r = b.udiv(trips, nth), b.urem(trips, nth)
    more = b.icmp_unsigned("<", tid, r)
    begin = b.add(b.mul(tid, q), b.select(more, tid, r))
    end = b.add(b.add(begin, q), b.zext(more, I64))
    lbs = [inner.get(v) for v in op.lower_bounds]
    ubs = [inner.get(v) for v in op.upper_bounds]
    steps = [inner.get(v) for v in op.steps]
    block = op.regions[0].blocks[0]

    def body(ivs):
        for a, iv in zip(block.args, ivs):
            inner.values[a] = iv
        inner.lower_block(block)

    def outer(t, carried):
        iv0 = inner.builder.add(lbs[0], inner.builder.mul(t, steps[0], flags=["nsw"]),
                                flags=["nsw"])
        emit_loop_nest(inner, lbs[1:], ubs[1:], steps[1:], lambda ivs: body([iv0, *ivs]))
        return []
    emit_loop(inner, begin, end, ir.Constant(I64, 1), [], outer)
    inner.builder.ret_void()
    inner.finish()
    return fn
