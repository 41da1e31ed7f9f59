"""gpu-map-parallel-loops: put every function's memory work on the GPU, each top-level
parallel loop nest as a grid, the rest in one-thread launches; the host keeps the sizes.

It runs at the memory level, after plan-memory: the arena and the other top-level buffers
are already planned, so they stay host-side allocations (of device memory) that launches
receive, and plan-memory's liveness never has to look into a launch. At the loop level the
launches would hide every buffer use from it.

What a function becomes. The host computes sizes, offsets and views (index arithmetic,
`memory.dim`, `memory.view`), allocates and frees, branches on what it computed, and
launches; it never loads or stores. Every op that touches memory contents runs in a
`gpu.launch`:

- a top-level `loop.parallel` becomes a grid: its iteration space flattened (x; or, with
  `two-d`, its last dimension on x for coalesced accesses and the others flattened on y),
  each thread's linear id guarded by `loop.if id < total` and delinearized (the last
  dimension fastest) into the loop's induction values. Each thread runs `per-thread`
  iterations along x, `block` apart (`ceil(total / (block * per-thread))` blocks; a warp's
  accesses stay consecutive), their ops interleaved where all of them are in bounds, so
  that a thread has that many loads in flight: with one 4-byte load per thread, an H200
  kept too few bytes in flight to stream at its bandwidth (tanh(x * a + b) over 2^26
  floats: 58% of a device copy's);
- other memory work -- a `loop.for`, a `memory.load`/`store`/`check`, a `loop.if` that
  yields values, and every op that uses what such work computed -- runs in a one-thread
  launch; consecutive ones share it (pure host ops between them stay on the host, since
  nothing the launch computes flows into them);
- a top-level `memory.copy` becomes a parallel loop of loads and stores first (a grid, not
  one thread copying a whole buffer);
- a guarded copy -- a `loop.if` on a value computed on the device (a status word read,
  `status == 0`) whose then-block holds only `memory.copy`s: how a training step commits
  its variables when no check failed -- becomes a parallel loop whose every iteration
  recomputes the condition and copies its element under it; consecutive guarded copies
  of one static shape share one loop. Left as they were, they ran in a one-thread launch
  (one thread copying the buffers: the MLP's 3 x 32 KB commit took ~2 ms on an H200);
- a `loop.if` without results whose condition the host computed stays on the host, its
  branches mapped in turn.

A value computed in one launch and used by a later one (a scalar result, say a sum) goes
through a 0-d device buffer: allocated on the host before the first launch, stored by it,
loaded at the start of each launch that uses it, freed at the end of the block. A
`loop.parallel` nested in a launch runs sequentially there (a `loop.for` nest): the thread
is the unit of parallelism.
"""

from __future__ import annotations

from irkit.ad_rules import captured_values
from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.types import I64, INDEX, MemRefType
from irkit.dialects import arith
from irkit.dialects.arith.base import CMPI_PREDICATES
from irkit.dialects.func import FuncOp
from irkit.dialects.gpu import (
    AllocOp as GpuAllocOp, DeallocOp as GpuDeallocOp, LaunchFuncOp, LaunchOp, MemcpyOp,
)
from irkit.dialects.loop import ForOp, IfOp, ParallelOp, YieldOp
from irkit.dialects.memory import (
    READ, WRITE, AllocOp, CopyOp, DeallocOp, DimOp, LoadOp, MemRef, StoreOp, effects_of,
)
from irkit.passes.constant_pool import ConstantPool
from irkit.passes.loop_transforms import is_identified, root_of

_ULT = IntegerAttr(CMPI_PREDICATES.index("ult"), I64)
#: host ops of the gpu dialect (a second run of the pass leaves them where they are)
_GPU_HOST_OPS = (LaunchOp, LaunchFuncOp, GpuAllocOp, GpuDeallocOp, MemcpyOp)


@register_pass
class GpuMapParallelLoops(Pass):
    """Map each function's parallel loops to GPU grids and its other memory work to
    one-thread launches (module docstring).

    Algorithm:
      1. In each function body, top-level `memory.copy` ops become parallel loops of
         loads and stores; each run of guarded copies (module docstring) becomes one
         parallel loop whose iterations clone the ops computing each condition (loads of
         buffers no copy writes, pure ops; they stand right before their `loop.if` and
         nothing else uses them) and copy their element where it holds.
      2. Walk the block in order, sorting each op: a `loop.parallel` whose bounds the host
         knows is a grid; an op that reads or writes memory, has unknown effects, or uses a
         value computed on the device is device work; a `loop.if` without results on a host
         condition is a host branch (its blocks walked the same way); an op without effects
         stays on the host and does not interrupt device work; anything else (allocations,
         frees, the return) is host work that ends the current run of device work.
      3. Each run of device work moves into one `gpu.launch` of one thread, placed after
         its last op. Each grid becomes a `gpu.launch` of `ceil(n / block-size)` blocks
         per mapped dimension (`n` the trip counts' product, at least one block; along x
         `ceil(n / (block-size * per-thread))`) whose threads recompute the induction
         values from their global ids: `per-thread` ids along x, `(b * per-thread + j) *
         block-size + t`; where the last of them is below `n`, the body cloned for each
         id, op by op interleaved (the iterations of a parallel loop are independent, so
         any interleaving is one of its orders); else each clone under `id < n`.
      4. Results used outside their launch go through 0-d device buffers; a
         `loop.parallel` left inside a launch becomes a `loop.for` nest.

    Options: `block-size` threads per block; `two-d`: nests of two or more dimensions on
    a 2-D grid, `block-x` threads along x (the last dimension), `block-size / block-x`
    along y; `per-thread`: iterations per thread along x (1: one each, the body moved,
    not cloned).
    """

    name = "gpu-map-parallel-loops"
    block_size: int = 256
    two_d: bool = False
    block_x: int = 32
    per_thread: int = 4

    def run(self, root: Operation) -> None:
        if self.block_size < 1 or self.per_thread < 1 or \
                (self.two_d and not 0 < self.block_x <= self.block_size):
            raise IRError(f"{self.name}: block-size and per-thread must be positive and "
                          f"block-x in [1, block-size], got {self.block_size}, "
                          f"{self.per_thread} and {self.block_x}", root.location)
        for fn in [o for o in root.walk() if isinstance(o, FuncOp) and not o.is_declaration]:
            _FunctionMapper(self, fn).run()


class _FunctionMapper:
    """The mapping of one function (see the pass)."""

    def __init__(self, options: GpuMapParallelLoops, fn: FuncOp) -> None:
        self.options = options
        self.fn = fn
        self.pool = ConstantPool(fn.entry, fn.location)
        #: values computed on the device so far
        self.device: set[Value] = set()
        self.launches: list[LaunchOp] = []

    def run(self) -> None:
        self.map_block(self.fn.entry)
        for launch in list(self.launches):
            self.spill_escaping_values(launch)
        for launch in self.launches:
            for loop in [o for o in launch.walk() if isinstance(o, ParallelOp)]:
                _serialize(loop)

    def const(self, n: int) -> Value:
        return self.pool.get(n, INDEX)

    # ----- sorting the ops of a block -----------------------------------------------------

    def map_block(self, block: Block) -> None:
        _predicate_guarded_copies(block, self.const)
        run: list[Operation] = []
        ops = [new for op in list(block.ops)
               for new in (self.copy_as_loop(op) if isinstance(op, CopyOp) else [op])]
        for op in ops:
            kind = self.kind(op)
            if kind == "pure":
                continue
            if kind == "device":
                run.append(op)
                self.device.update(op.results)
                continue
            self.sequential(run)
            run = []
            if kind == "grid":
                self.grid(op)
            elif kind == "branch":
                for region in op.regions:
                    for b in region.blocks:
                        self.map_block(b)
        self.sequential(run)

    def kind(self, op: Operation) -> str:
        """'grid', 'branch', 'device', 'pure' (no effects: stays) or 'host' (see step 2)."""
        if isinstance(op, _GPU_HOST_OPS) or has_trait(op, Terminator):
            return "host"
        uses = op.operands + (captured_values(op) if op.regions else [])
        on_device = any(v in self.device for v in uses)
        if isinstance(op, ParallelOp) and not any(v in self.device for v in op.operands):
            return "grid"
        if isinstance(op, IfOp) and not op.results and op.condition not in self.device:
            return "branch"
        effects = effects_of(op)
        if on_device or effects is None or any(e in (READ, WRITE) for e, _ in effects):
            return "device"
        return "host" if effects else "pure"

    def copy_as_loop(self, copy: CopyOp) -> list[Operation]:
        """`memory.copy` as a parallel loop of element loads and stores (a 0-d copy: the
        load and the store): the ops that replace it."""
        b = Builder.before(copy)
        t = copy.target.type
        sizes = [self.const(d) if d is not None else b.create(
            DimOp, copy.source, axis=IntegerAttr(k, I64), result_types=[INDEX]).result
            for k, d in enumerate(t.shape)]
        if not sizes:
            load = b.create(LoadOp, copy.source, [], result_types=[t.element])
            store = b.create(StoreOp, load.result, copy.target, [])
            copy.erase()
            return [load, store]
        loop = ParallelOp.build([self.const(0)] * len(sizes), sizes, [self.const(1)] * len(sizes),
                                result_types=[], regions=1, location=copy.location)
        body = loop.regions[0].add_block(Block([INDEX] * len(sizes)))
        inner = Builder.at_end(body)
        v = inner.create(LoadOp, copy.source, list(body.args), result_types=[t.element]).result
        inner.create(StoreOp, v, copy.target, list(body.args))
        inner.create(YieldOp, [], result_types=[])
        b.insert(loop)
        copy.erase()
        return [loop]

    # ----- building launches ----------------------------------------------------------------

    def sequential(self, ops: list[Operation]) -> None:
        """One launch of one thread running `ops`, placed after the last of them."""
        if not ops:
            return
        one = self.const(1)
        launch = LaunchOp.create([one] * 3, [one] * 3, location=ops[0].location)
        ops[-1].parent.insert_after(ops[-1], launch)
        end = launch.body.blocks[0].last
        for op in ops:
            op.move_before(end)
        self.launches.append(launch)

    def grid(self, loop: ParallelOp) -> None:
        """The launch that runs `loop`'s iterations, `per-thread` of them per thread along
        x (step 3)."""
        b = Builder.before(loop)
        n = len(loop.lower_bounds)
        counts = [_trip_count(b, lb, ub, step, self.const(0))
                  for lb, ub, step in zip(loop.lower_bounds, loop.upper_bounds, loop.steps)]
        opt = self.options
        if opt.two_d and n >= 2:
            groups = [[n - 1], list(range(n - 1))]
            sizes = [opt.block_x, max(opt.block_size // opt.block_x, 1)]
        else:
            groups, sizes = [list(range(n))], [opt.block_size]
        per = opt.per_thread
        totals = [_product(b, [counts[k] for k in g], self.const(1)) for g in groups]
        grid = [b.create(arith.MaxSIOp, b.create(arith.CeilDivSIOp, total, self.const(
            size * (per if d == 0 else 1))).result, self.const(1)).result
            for d, (total, size) in enumerate(zip(totals, sizes))]
        pad = [self.const(1)] * (3 - len(groups))
        launch = LaunchOp.create(grid + pad, [self.const(s) for s in sizes] + pad,
                                 location=loop.location)
        b.insert(launch)
        self.launches.append(launch)
        inner = Builder.before(launch.body.blocks[0].last)
        ids = launch.ids
        first = inner.create(arith.MulIOp, ids[0], self.const(per)).result if per > 1 \
            else ids[0]
        base = inner.create(arith.AddIOp, inner.create(
            arith.MulIOp, first, ids[9]).result, ids[3]).result
        others = [inner.create(arith.AddIOp, inner.create(
            arith.MulIOp, ids[d], ids[9 + d]).result, ids[3 + d]).result
            for d in range(1, len(groups))]
        #: each of the thread's iterations: its ids along the grid dimensions
        points = [[base if j == 0 else inner.create(arith.AddIOp, base, inner.create(
            arith.MulIOp, self.const(j), ids[9]).result).result] + others for j in range(per)]
        if per == 1:
            then = _guard(inner, _in_bounds(inner, points[0], totals), loop.location)
            ivs = self.induction_values(Builder.at_end(then), loop, points[0], groups, counts)
            body = loop.body.blocks[0]
            for arg, iv in zip(body.args, ivs):
                arg.replace_all_uses_with(iv)
            for op in list(body.ops):       # its loop.yield ends the guard's then block
                then.append(op.detach())
            loop.erase()
            return
        self.coarse_body(inner, loop, points, totals, groups, counts)

    def coarse_body(self, inner: Builder, loop: ParallelOp, points: list, totals: list,
                    groups: list, counts: list) -> None:
        """A thread's `per-thread` iterations: where all of them are inside the iteration
        space (every block but the last), the body's ops interleaved -- the first op of
        each iteration, then the second of each, ... -- so that the iterations' loads are
        issued together, before any of their values is needed (the iterations of a
        parallel loop are independent: any interleaving is one of its orders); else each
        iteration under its own bounds check."""
        full = _in_bounds(inner, points[-1], totals)
        op = IfOp.build(full, result_types=[], regions=2, location=loop.location)
        fast, slow = op.regions[0].add_block(Block()), op.regions[1].add_block(Block())
        inner.insert(op)
        body = loop.body.blocks[0]
        ops = [o for o in body.ops if not isinstance(o, YieldOp)]
        fb = Builder.at_end(fast)
        mappings = [dict(zip(body.args, self.induction_values(fb, loop, p, groups, counts)))
                    for p in points]
        for o in ops:
            for mapping in mappings:
                fb.insert(o.clone(mapping))
        fb.create(YieldOp, [], result_types=[])
        sb = Builder.at_end(slow)
        for p in points:
            then = _guard(sb, _in_bounds(sb, p, totals), loop.location)
            then.append(YieldOp.build([], result_types=[]))
            tb = Builder.before(then.last)
            mapping = dict(zip(body.args, self.induction_values(tb, loop, p, groups, counts)))
            for o in ops:
                tb.insert(o.clone(mapping))
        sb.create(YieldOp, [], result_types=[])
        loop.erase()

    def induction_values(self, b: Builder, loop: ParallelOp, ids: list, groups: list,
                         counts: list) -> list[Value]:
        """The loop's induction values at the grid position `ids` (delinearized along each
        grid dimension, the last loop dimension fastest)."""
        ivs: list = [None] * len(loop.lower_bounds)
        for gid, g in zip(ids, groups):
            for k, index in zip(g, _delinearize(b, gid, [counts[k] for k in g])):
                ivs[k] = b.create(arith.AddIOp, loop.lower_bounds[k], b.create(
                    arith.MulIOp, index, loop.steps[k]).result).result
        return ivs

    def spill_escaping_values(self, launch: LaunchOp) -> None:
        """Results of ops of `launch` used outside it go through 0-d device buffers."""
        for op in list(launch.body.blocks[0].ops):
            for r in op.results:
                outside = [u for u in r.uses if not launch.is_ancestor_of(u.owner)]
                if outside:
                    self.spill(r, launch, outside)

    def spill(self, value: Value, launch: LaunchOp, uses) -> None:
        t = value.type
        users = {id(u.owner): u.owner for u in uses}.values()
        buf_type = MemRefType([], t)
        if not MemRef(buf_type):
            raise IRError(f"'{value.owner.name}': a {t} computed on the device is used "
                          f"outside its launch", value.owner.location)
        buf = Builder.before(launch).create(AllocOp, [], result_types=[buf_type]).result
        Builder.after(value.owner).create(StoreOp, value, buf, [])
        block = launch.parent
        Builder.before(block.last).create(DeallocOp, buf)
        for user in users:
            target = next((a for a in [user, *user.ancestors()] if isinstance(a, LaunchOp)),
                          None)
            if target is None:
                raise IRError(f"'{user.name}' on the host uses a value computed on the "
                              f"device", user.location)
            entry = target.body.blocks[0]
            loaded = Builder.at_start(entry).create(LoadOp, buf, [], result_types=[t]).result
            value.replace_uses_if(loaded, lambda u: target.is_ancestor_of(u.owner))


# ---------------------------------------------------------------------------------------------
# Guarded copies
# ---------------------------------------------------------------------------------------------


class _GuardedCopy:
    """`loop.if %c { memory.copy ... }` (module docstring): the if, its copies, the ops
    computing `%c` right before it (`chain`, in block order), and the buffers (roots) it
    reads and writes."""

    def __init__(self, op: IfOp, copies: list[CopyOp], chain: list[Operation]) -> None:
        self.op, self.copies, self.chain = op, copies, chain
        self.shape = copies[0].target.type.shape
        self.writes = {root_of(c.target) for c in copies}
        self.reads = {root_of(c.source) for c in copies} | {
            root_of(o.memref) for o in chain if isinstance(o, LoadOp)}

    def first(self) -> Operation:
        return self.chain[0] if self.chain else self.op

    def joins(self, run: list["_GuardedCopy"]) -> bool:
        """Whether this guarded copy may share the loop of `run`: right after it, the same
        static shape, and no buffer one of them writes touched by another."""
        if self.first().prev_op is not run[-1].op or self.shape != run[0].shape or \
                None in self.shape:
            return False
        reads = set().union(*(g.reads for g in run))
        writes = set().union(*(g.writes for g in run))
        return not (self.writes & (reads | writes) or writes & self.reads)


def _guarded_copy(op: Operation) -> _GuardedCopy | None:
    """`op` as a guarded copy whose condition may be recomputed per element, or None: its
    buffers are identified ones (allocations, arguments), the copies read none of those
    they write, and the chain loads none of them."""
    if not isinstance(op, IfOp) or op.results or op.parent is None:
        return None
    then = op.regions[0].blocks[0].ops if op.regions[0].blocks else []
    other = op.regions[1].blocks[0].ops if op.regions[1].blocks else []
    copies = [o for o in then if not isinstance(o, YieldOp)]
    if not copies or not all(isinstance(c, CopyOp) for c in copies) or \
            any(not isinstance(o, YieldOp) for o in other):
        return None
    shape = copies[0].target.type.shape
    if not shape or any(c.target.type.shape != shape or c.source.type.shape != shape
                        for c in copies):
        return None
    chain = _condition_chain(op)
    if chain is None:
        return None
    g = _GuardedCopy(op, copies, chain)
    if not all(is_identified(r) for r in g.reads | g.writes) or g.reads & g.writes:
        return None
    return g


def _condition_chain(op: IfOp) -> list[Operation] | None:
    """The ops right before `op` that compute its condition (pure ops without regions,
    loads) and that nothing else uses, in block order; they are cloned into the loop. The
    walk stops at a value used elsewhere or made by an op without operands (a constant):
    it stays where it is and the loop captures it. None where an op of the chain is
    anything else."""
    chain: list[Operation] = []
    members: set[Operation] = {op}
    needed = {op.condition}
    prev = op.prev_op
    while prev is not None and any(r in needed for r in prev.results):
        if not prev.operands or any(u.owner not in members for r in prev.results
                                    for u in r.uses):
            break
        if prev.regions or not (isinstance(prev, LoadOp) or effects_of(prev) == []):
            return None
        chain.insert(0, prev)
        members.add(prev)
        needed.update(prev.operands)
        prev = prev.prev_op
    return chain


def _predicate_guarded_copies(block: Block, const) -> None:
    """Each run of consecutive guarded copies of one shape in `block` -> one parallel loop
    (step 1); the loop stands where the run's last `loop.if` stood."""
    found = [g for g in map(_guarded_copy, block.ops) if g is not None]
    chains = {op for g in found for op in g.chain}
    ifs = {g.op: g for g in found}
    run: list[_GuardedCopy] = []
    for op in list(block.ops):
        if op in chains:
            continue
        g = ifs.get(op)
        if run and (g is None or not g.joins(run)):
            _predicated_loop(run, const)
            run = []
        if g is not None:
            run.append(g)
    if run:
        _predicated_loop(run, const)


def _predicated_loop(run: list[_GuardedCopy], const) -> None:
    last = run[-1].op
    b = Builder.before(last)
    source = run[0].copies[0].source
    sizes = [const(d) if d is not None else b.create(
        DimOp, source, axis=IntegerAttr(k, I64), result_types=[INDEX]).result
        for k, d in enumerate(run[0].shape)]
    rank = len(sizes)
    loop = ParallelOp.build([const(0)] * rank, sizes, [const(1)] * rank, result_types=[],
                            regions=1, location=last.location)
    body = loop.regions[0].add_block(Block([INDEX] * rank))
    inner = Builder.at_end(body)
    ivs = list(body.args)
    for g in run:
        mapping: dict = {}
        for op in g.chain:
            inner.insert(op.clone(mapping))
        cond = mapping.get(g.op.condition, g.op.condition)
        guard = IfOp.build(cond, result_types=[], regions=2, location=g.op.location)
        then = guard.regions[0].add_block(Block())
        guard.regions[1].add_block(Block()).append(YieldOp.build([], result_types=[]))
        tb = Builder.at_end(then)
        for copy in g.copies:
            v = tb.create(LoadOp, copy.source, ivs, result_types=[copy.source.type.element],
                          location=copy.location).result
            tb.create(StoreOp, v, copy.target, ivs, location=copy.location)
        tb.create(YieldOp, [], result_types=[])
        inner.insert(guard)
    inner.create(YieldOp, [], result_types=[])
    b.insert(loop)
    for g in run:
        g.op.erase()
        for op in reversed(g.chain):
            op.erase()


# ---------------------------------------------------------------------------------------------
# Index arithmetic
# ---------------------------------------------------------------------------------------------


def _in_bounds(b: Builder, ids: list[Value], totals: list[Value]) -> Value:
    """Whether every grid id is below its total."""
    cond = None
    for gid, total in zip(ids, totals):
        c = b.create(arith.CmpIOp, gid, total, predicate=_ULT).result
        cond = c if cond is None else b.create(arith.AndIOp, cond, c).result
    return cond


def _guard(b: Builder, cond: Value, location) -> Block:
    """A `loop.if cond` without results inserted at `b`: its then block, empty (the caller
    ends it with a yield), the else block empty but for its yield."""
    guard = IfOp.build(cond, result_types=[], regions=2, location=location)
    then = guard.regions[0].add_block(Block())
    guard.regions[1].add_block(Block()).append(YieldOp.build([], result_types=[]))
    b.insert(guard)
    return then


def _trip_count(b: Builder, lb: Value, ub: Value, step: Value, zero: Value) -> Value:
    """max(ceil((ub - lb) / step), 0): how many times a loop dimension runs."""
    width = b.create(arith.SubIOp, ub, lb).result
    trips = b.create(arith.CeilDivSIOp, width, step).result
    return b.create(arith.MaxSIOp, trips, zero).result


def _product(b: Builder, values: list[Value], one: Value) -> Value:
    out = one
    for v in values:
        out = b.create(arith.MulIOp, out, v).result
    return out


def _delinearize(b: Builder, linear: Value, counts: list[Value]) -> list[Value]:
    """The indices of `linear` in a row-major box of `counts` (the last one fastest)."""
    out = []
    for count in reversed(counts[1:]):
        out.append(b.create(arith.RemUIOp, linear, count).result)
        linear = b.create(arith.DivUIOp, linear, count).result
    out.append(linear)
    return out[::-1]


def _serialize(loop: ParallelOp) -> None:
    """A `loop.parallel` as the equivalent `loop.for` nest (its iterations in row-major
    order, one valid order of unordered iterations)."""
    b = Builder.before(loop)
    block = loop.body.blocks[0]
    ivs = []
    for lb, ub, step in zip(loop.lower_bounds, loop.upper_bounds, loop.steps):
        nest = ForOp.build(lb, ub, step, [], result_types=[], regions=1, location=loop.location)
        inner = nest.regions[0].add_block(Block([INDEX]))
        inner.append(YieldOp.build([], result_types=[], location=loop.location))
        b.insert(nest)
        ivs.append(inner.args[0])
        b = Builder.before(inner.last)
    for arg, iv in zip(block.args, ivs):
        arg.replace_all_uses_with(iv)
    for op in list(block.ops):
        if isinstance(op, YieldOp):
            continue
        op.move_before(b.ip.before)
    loop.erase()
