"""LLVM rule for `loop.parallel`: a loop nest, run sequentially or split over threads.

The iterations of a parallel loop are unordered, so any schedule is valid. With one thread
(`ModuleLowering.threads == 1`, the default) and for a `loop.parallel` nested in another,
the loop is a plain loop nest in row-major order, as the interpreter runs it.

With `threads = T > 1`, each outermost `loop.parallel` runs on up to T POSIX threads,
created and joined each time the loop runs (about 10-50 us per thread: worth it for loops
that run for milliseconds, not for tiny ones).

Algorithm:

1. Captures: the values the body uses that are defined outside the op, and the op's bounds
   and steps, in the order they are first used.
2. The body is outlined into an internal function `ptr __irkit_parallel_<n>(ptr ctx)`
   (pthread's start-routine signature). The context is the struct `{captures..., i64 begin,
   i64 end}`; the function runs iterations `begin <= t < end` of the first dimension
   (`iv0 = lb0 + t * step0`) with the other dimensions nested inside, sequentially.
3. At the op: `n` = the trip count of dimension 0 and `chunk = ceil(n / T)`; context `k`
   covers `[k * chunk, min((k + 1) * chunk, n))`. Contexts 1..T-1 with work are started with
   `pthread_create` (run on the calling thread instead if that fails), context 0 runs on the
   calling thread, then the started threads are joined.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit.ir import Value
from irkit.backends.llvm_lowering import FunctionLowering, emit_loop, emit_loop_nest, lowers
from irkit.backends.llvm_types import I8, I32, I64, PTR

@lowers("loop.parallel")
def _parallel(lw: FunctionLowering, op, args):
    n = len(args) // 3
    lbs, ubs, steps = args[:n], args[n:2 * n], args[2 * n:]
    block = op.regions[0].blocks[0]
    if lw.ml.threads > 1 and not lw.in_parallel:
        _threaded(lw, op, lw.ml.threads)
        return

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


def _threaded(lw: FunctionLowering, op, threads: int) -> None:
    b = lw.builder
    captures = _captures(op)
    ctx_type = ir.LiteralStructType([lw.get(v).type for v in captures] + [I64, I64])
    outlined = _outline(lw, op, captures, ctx_type)
    lb, ub, step = (lw.get(g[0]) for g in (op.lower_bounds, op.upper_bounds, op.steps))
    # Trip count of dimension 0: (ub - lb - 1) / step + 1 when lb < ub (exact as unsigned).
    span = b.sub(b.sub(ub, lb), ir.Constant(I64, 1))
    trips = b.select(b.icmp_signed("<", lb, ub),
                     b.add(b.udiv(span, step), ir.Constant(I64, 1)), ir.Constant(I64, 0))
    t = ir.Constant(I64, threads)
    chunk = b.udiv(b.add(trips, ir.Constant(I64, threads - 1)), t)
    contexts = lw.alloca(ir.ArrayType(ctx_type, threads))
    tids = lw.alloca(ir.ArrayType(I64, threads))
    started = lw.alloca(ir.ArrayType(I8, threads))
    ctx = ir.Constant(ctx_type, None)
    for i, v in enumerate(captures):
        ctx = b.insert_value(ctx, lw.get(v), i)
    create = lw.ml.declare_runtime("pthread_create", ir.FunctionType(I32, [PTR] * 4), op)
    join = lw.ml.declare_runtime("pthread_join", ir.FunctionType(I32, [I64, PTR]), op)
    null = ir.Constant(PTR, None)
    zero32 = ir.Constant(I32, 0)

    def umin(x, y):
        return b.select(b.icmp_unsigned("<", x, y), x, y)

    def slot(array, k):
        return b.gep(array, [zero32, ir.Constant(I32, k)], inbounds=True)

    for k in range(threads):
        begin = umin(b.mul(ir.Constant(I64, k), chunk), trips)
        end = umin(b.mul(ir.Constant(I64, k + 1), chunk), trips)
        c = b.insert_value(b.insert_value(ctx, begin, len(captures)), end, len(captures) + 1)
        b.store(c, slot(contexts, k))
        if k == 0:
            continue
        b.store(ir.Constant(I8, 0), slot(started, k))
        with b.if_then(b.icmp_unsigned("<", begin, end)):
            rc = b.call(create, [slot(tids, k), null, outlined, slot(contexts, k)])
            ok = b.icmp_signed("==", rc, zero32)
            b.store(b.zext(ok, I8), slot(started, k))
            with b.if_then(b.not_(ok)):
                b.call(outlined, [slot(contexts, k)])      # no thread: run it here
    b.call(outlined, [slot(contexts, 0)])
    for k in range(1, threads):
        flag = b.load(slot(started, k), typ=I8)
        with b.if_then(b.icmp_unsigned("!=", flag, ir.Constant(I8, 0))):
            b.call(join, [b.load(slot(tids, k), typ=I64), null])


def _outline(lw: FunctionLowering, op, captures: list[Value],
             ctx_type: ir.LiteralStructType) -> ir.Function:
    """`ptr __irkit_parallel_<n>(ptr ctx)`: the iterations [begin, end) of dimension 0."""
    ml = lw.ml
    fn = ir.Function(ml.llmod, ir.FunctionType(PTR, [PTR]),
                     name=ml.unique_name("__irkit_parallel_"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    inner = FunctionLowering(ml, fn, op)
    inner.in_parallel = True
    b = inner.builder
    ctx = b.load(fn.args[0], typ=ctx_type)
    for i, v in enumerate(captures):
        inner.values[v] = b.extract_value(ctx, i)
    begin = b.extract_value(ctx, len(captures))
    end = b.extract_value(ctx, len(captures) + 1)
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
    inner.builder.ret(ir.Constant(PTR, None))
    inner.finish()
    return fn
