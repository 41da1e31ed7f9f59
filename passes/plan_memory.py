"""plan-memory: one arena per function for its temporaries, at planned 64-byte-aligned offsets.

A function lowered to loops allocates a fresh buffer per temporary (`memory.alloc`) and frees
it after its last use (`memory.dealloc`). This pass replaces those by one byte buffer per
function (`memory.arena`, allocated at entry, freed before the return) and a typed
`memory.view` of it per temporary, at an offset chosen so that buffers live at the same time
never overlap while the arena stays close to the lower bound: the most bytes live at any one
point. docs/memory_planning.md explains the model, the algorithms and their bounds.

Sizes may be dynamic: the offsets are then expressions in the run-time sizes (index values),
emitted as `arith` ops at entry, and sound for every value of those sizes.

Temporaries of a `loop.if` branch join the arena too (their views stay in the branch): the
two branches never both run, so liveness gives them disjoint positions and the temporaries
of one branch share memory with those of the other.

The pieces, in the order the pass uses them: size expressions (`plan_memory_sizes`: a tiny
folding expression language over index values), liveness (`plan_memory_liveness`: positions,
intervals, which allocs are planned), in-place reuse, offset assignment (static best-fit;
with dynamic sizes, placements compiled as stackings), the rewrite (`apply_plan`) and the
report.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import Diagnostic, emit
from irkit.ir import Block, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value
from irkit.types import I8, MemRefType
from irkit.dialects.loop import ForOp, IfOp, ParallelOp
from irkit.dialects.memory import (
    AllocOp, ArenaOp, DeallocOp, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp, ViewOp,
    byte_size,
)
from irkit.passes import plan_memory_sizes as sz
from irkit.passes.plan_memory_liveness import Buffer, find_buffers
from irkit.passes.plan_memory_sizes import size_leaves, size_value

#: placements the order search tries after the heuristic orders, at most, and fewer for many
#: slots (a placement costs about slots² steps)
_SEARCH_BUDGET = 10_000
_SEARCH_WORK = 20_000_000
#: the search stops once the arena is within this factor of the peak
_SEARCH_TARGET = 1.01
#: the sizes every dynamic size takes, in turn, to find the orders a dynamic plan chooses
#: from; also each static dimension of the buffers and its neighbours (below)
_SEARCH_SIZES = (1, 4096)

# ---------------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------------

@dataclass(eq=False)
class Slot:
    """One offset in the arena: a buffer, or a chain of buffers reused in place."""

    buffers: list
    start: int
    end: int
    size: object
    offset: object = 0


@dataclass(eq=False)
class FunctionPlan:
    """What `plan_function` found and decided; `apply_plan` rewrites the function by it."""

    func: Operation
    ops: list                   # the ops that have a position (plan_memory_liveness), by it
    buffers: list               # planned, by position
    skipped: list               # (alloc, reason) of allocs with a position left alone
    in_loops: int               # allocs inside loops (no position of their own), left alone
    hoist: set                  # pure ops computing sizes, to move to the entry
    resolved: dict              # memory.dim op -> the value it equals, to replace it by
    hint: int
    slots: list = field(default_factory=list)
    arena: object = 0
    strategy: str = ""

    def env(self, sizes: dict | None = None) -> dict:
        """Every size value the plan reads -> its value in `sizes`, else the hint."""
        found: dict = {}
        for b in self.buffers:
            sz.symbols(b.raw, found)
        sizes = sizes or {}
        return {v: sizes.get(v, self.hint) for v in found}

    def is_static(self) -> bool:
        return all(isinstance(b.size, int) for b in self.buffers)

    def offsets(self, env: dict) -> list[int]:
        """The byte offset of each buffer (in `buffers` order) at the sizes of `env`."""
        memo: dict = {}
        return [sz.evaluate(b.slot.offset, env, memo) for b in self.buffers]

    def arena_bytes(self, env: dict) -> int:
        return sz.evaluate(self.arena, env)

    def lower_bound(self, env: dict, in_place: bool = True) -> tuple[int, int]:
        """(the most aligned bytes live at one position, the first position with that many);
        with `in_place`, a chain reused in place counts once."""
        live = self.slots if in_place else self.buffers
        return _peak(live, [sz.evaluate(x.size, env) for x in live])


def plan_function(func: Operation, *, in_place: bool = True,
                  hint: int = 64) -> FunctionPlan | None:
    """Liveness, in-place reuse and offsets for `func` (nothing is changed): None for a
    declaration or a body of several blocks (unstructured control flow is not planned)."""
    region = func.regions[0] if func.regions else None
    if region is None or len(region.blocks) != 1:
        return None
    live = find_buffers(region.blocks[0])
    plan = FunctionPlan(func, live.ops, live.buffers, live.skipped, live.in_loops, live.hoist,
                        live.resolved, hint)
    _make_slots(plan, in_place)
    _assign_offsets(plan)
    return plan


# ---------------------------------------------------------------------------------------------
# In-place reuse
# ---------------------------------------------------------------------------------------------


def _same_shape(a: AllocOp, b: AllocOp) -> bool:
    ta, tb = a.memref.type, b.memref.type
    return (ta.shape == tb.shape and byte_size(ta.element) == byte_size(tb.element)
            and list(a.dynamic_sizes) == list(b.dynamic_sizes))


def _const_step(v: Value) -> int | None:
    a = constant_value(v)
    return a.value if isinstance(a, IntegerAttr) else None


def _loop_ivs(block: Block, outer: Operation) -> dict | None:
    """Induction variable -> its step, for every loop from `block` up to `outer` inclusive;
    None if anything other than a `loop.for` / `loop.parallel` is on the way."""
    ivs: dict = {}
    op = block.parent_op
    while True:
        if isinstance(op, ForOp):
            ivs[op.induction_var] = op.step
        elif isinstance(op, ParallelOp):
            ivs.update(zip(op.induction_vars, op.steps))
        else:
            return None
        if op is outer:
            return ivs
        op = op.parent_op


def can_reuse_in_place(a: Buffer, b: Buffer, outer: Operation) -> bool:
    """Whether `b` may take `a`'s memory in `outer` (the op at the position where `a` dies and
    `b` is first written: the outermost loop there, in the body or in a branch): every
    iteration of the loop nest reads `a` at one element (or vector) and then writes `b` at
    the same index, the index being all the nest's induction variables; so each element of
    `a` is read before the same bytes are overwritten, and by no other iteration.
    Conservative: one block of accesses, plain loads and stores, same shape and element size,
    and both allocated in one block (a branch buffer never takes the memory of a buffer from
    outside its branch, nor gives its own away to one)."""
    if a.escapes or b.escapes or a.aliased or b.aliased or not _same_shape(a.alloc, b.alloc) \
            or a.home is not b.home:
        return False
    reads = [u for p, u in a.touches if p == a.end]
    writes = [u for p, u in b.touches if p == b.start]
    if not all(isinstance(u, (LoadOp, VectorLoadOp)) for u in reads) or \
            not all(isinstance(u, (StoreOp, VectorStoreOp)) for u in writes):
        return False
    accesses = reads + writes
    block = accesses[0].parent
    if any(u.parent is not block for u in accesses):
        return False
    order = {op: i for i, op in enumerate(block.ops)}
    if max(order[u] for u in reads) > min(order[u] for u in writes):
        return False
    index = list(accesses[0].indices)
    width = {u.results[0].type.shape[0] if isinstance(u, VectorLoadOp) else
             u.value.type.shape[0] if isinstance(u, VectorStoreOp) else 1 for u in accesses}
    if any(list(u.indices) != index for u in accesses) or len(width) != 1:
        return False
    ivs = _loop_ivs(block, outer)
    if ivs is None or len(set(index)) != len(index) or set(index) != set(ivs):
        return False
    (n,) = width
    step = _const_step(ivs[index[-1]]) if index else None
    return n == 1 or (step is not None and step >= n)


def _make_slots(plan: FunctionPlan, in_place: bool) -> None:
    """One slot per buffer, except that a buffer first written where another dies takes that
    one's slot when `can_reuse_in_place` allows (each donor gives its slot once)."""
    donated: set = set()
    for b in sorted(plan.buffers, key=lambda b: b.start):
        donor = None
        if in_place:
            for a in plan.buffers:
                if a is not b and a not in donated and a.end == b.start and \
                        a.slot is not None and a.slot.end == b.start and \
                        can_reuse_in_place(a, b, plan.ops[b.start]):
                    donor = a
                    break
        if donor is None:
            b.slot = Slot([b], b.start, b.end, b.size)
            plan.slots.append(b.slot)
        else:
            donated.add(donor)
            b.slot = donor.slot
            b.slot.buffers.append(b)
            b.slot.end = max(b.slot.end, b.end)


# ---------------------------------------------------------------------------------------------
# Offsets
# ---------------------------------------------------------------------------------------------


def _overlap(x: Slot, y: Slot) -> bool:
    return x.start <= y.end and y.start <= x.end


def _orders(slots: list, sizes: list[int]) -> dict[str, list[int]]:
    """The placement orders tried: largest first (TFLite's greedy by size), program order,
    and longest-lived first; ties broken by program order."""
    idx = range(len(slots))
    return {
        "size": sorted(idx, key=lambda i: (-sizes[i], slots[i].start, i)),
        "program order": sorted(idx, key=lambda i: (slots[i].start, i)),
        "lifetime": sorted(idx, key=lambda i: (slots[i].start - slots[i].end, -sizes[i], i)),
    }


def _conflicts(slots: list) -> list[list[int]]:
    """For each slot, the slots live at the same time as it (an interval graph)."""
    return [[j for j, y in enumerate(slots) if j != i and _overlap(x, y)]
            for i, x in enumerate(slots)]


def _place_static(conflicts: list, sizes: list[int], order: list[int], best_fit: bool,
                  limit: int | None = None) -> list | None:
    """Offsets, placing slots in `order`: each goes into the smallest (best fit) or lowest
    (first fit) gap between the slots already placed that overlap it in time, sorted by
    offset, or on top of them all when no gap is big enough. None as soon as a slot would
    end above `limit` (a search discarding a worse order early)."""
    offsets: list = [None] * len(sizes)
    for i in order:
        size = sizes[i]
        taken = [(offsets[j], sizes[j]) for j in conflicts[i] if offsets[j] is not None]
        # the hot loop of the order search (`_best_static` places many orders at every
        # size tried): comparisons inlined, and first fit stops at its gap
        taken.sort()
        prev, best, best_gap = 0, None, None
        for o, n in taken:
            gap = o - prev
            if gap >= size and (best is None or gap < best_gap):
                best, best_gap = prev, gap
                if not best_fit:
                    break
            if o + n > prev:
                prev = o + n
        offsets[i] = prev if best is None else best
        if limit is not None and offsets[i] + size > limit:
            return None
    return offsets


def _stacking(conflicts: list, offsets: list[int]) -> tuple:
    """A placement (`offsets` at some sizes) as a stacking: (the slots in the order of their
    offsets, for each slot the slots it rests on). Each slot rests on the slots live at the
    same time as it that are lower there, less those another of them already rests on
    (transitively): the offset `max(top of each)` then keeps it above all of them at any
    sizes, and the fewer terms, the less code. Where no size is 0 the placement keeps the
    slots that overlap in time apart, so its offsets are above those of the stacking, the
    least ones that are: at those sizes the stacking's arena is at most the placement's.
    The same resting sets give the same offsets at every size, so they are the stacking's
    identity (`_assign_offsets` merges equal ones)."""
    order = sorted(range(len(offsets)), key=lambda i: (offsets[i], i))
    rank = [0] * len(offsets)
    for k, i in enumerate(order):
        rank[i] = k
    under = [0] * len(offsets)      # bit j of under[i]: slot j is below slot i, transitively
    rests: list = [()] * len(offsets)
    for i in order:
        lower = [j for j in conflicts[i] if rank[j] < rank[i]]
        covered = 0
        for j in lower:
            covered |= under[j]
        rests[i] = tuple(sorted(j for j in lower if not covered >> j & 1))
        for j in lower:
            covered |= 1 << j
        under[i] = covered
    return tuple(order), tuple(rests)


def _stacked(stacking: tuple, sizes: list[int]) -> int:
    """The arena of `stacking` at these sizes: each slot on top of those it rests on."""
    order, rests = stacking
    tops = [0] * len(sizes)
    arena = 0
    for i in order:
        offset = 0
        for j in rests[i]:
            if tops[j] > offset:
                offset = tops[j]
        tops[i] = offset + sizes[i]
        if tops[i] > arena:
            arena = tops[i]
    return arena


def _stacked_offsets(slots: list, stacking: tuple) -> tuple[list, object]:
    """(offset expression of each slot, arena expression) of `stacking`: each offset the
    largest top of the slots it rests on, the arena the largest top of a slot nothing rests
    on (any other top is at most the offset of a slot above it)."""
    order, rests = stacking
    offsets: list = [None] * len(slots)
    tops: list = [None] * len(slots)
    for i in order:
        offset = 0
        for j in rests[i]:
            offset = sz.maximum(offset, tops[j])
        offsets[i] = offset
        tops[i] = sz.add(offset, slots[i].size)
    rested_on = {j for r in rests for j in r}
    arena = 0
    for i in order:
        if i not in rested_on:
            arena = sz.maximum(arena, tops[i])
    return offsets, arena


def _arena_static(offsets: list[int], sizes: list[int]) -> int:
    return max((o + n for o, n in zip(offsets, sizes)), default=0)


def _peak(live: list, sizes: list[int]) -> tuple[int, int]:
    """(the most bytes live at one position, the first position with that many) of slots or
    buffers (`start`, `end`) of these sizes: no placement needs less."""
    best = (0, 0)
    for p in sorted({t.start for t in live}):
        total = sum(n for t, n in zip(live, sizes) if t.start <= p <= t.end)
        if total > best[0]:
            best = (total, p)
    return best


def _best_static(slots: list, conflicts: list, sizes: list[int]) -> tuple:
    """(arena, strategy, offsets, order) of the best placement found for these sizes: the
    heuristic orders with best fit and with first fit (`_place_static`), then, while the
    arena is more than _SEARCH_TARGET times the peak, a randomized search: alternately
    one slot of the best order moved to another place and a fresh random order (restarts:
    moves alone get stuck), each kept when the arena does not grow (so plateaus are
    crossed), for at most _SEARCH_BUDGET placements. Seeded by the slot count:
    deterministic. `conflicts` is `_conflicts(slots)`."""
    best = None
    for name, order in _orders(slots, sizes).items():
        for best_fit in (True, False):
            offsets = _place_static(conflicts, sizes, order, best_fit)
            arena = _arena_static(offsets, sizes)
            if best is None or arena < best[0]:
                best = (arena, name, offsets, order, best_fit)
    arena, name, offsets, order, best_fit = best
    target = _SEARCH_TARGET * _peak(slots, sizes)[0]
    rng = random.Random(len(slots))
    searched = False
    budget = min(_SEARCH_BUDGET, _SEARCH_WORK // len(slots) ** 2) if len(order) > 2 else 0
    for k in range(budget):
        if arena <= target:
            break
        cand = list(order)
        if k % 2:                               # a fresh random order (a restart)
            rng.shuffle(cand)
        else:                                   # or one slot of the best moved elsewhere
            cand.insert(rng.randrange(len(cand)), cand.pop(rng.randrange(len(cand))))
        offs = _place_static(conflicts, sizes, cand, best_fit, limit=arena)
        if offs is not None:
            a = _arena_static(offs, sizes)
            searched |= a < arena
            arena, offsets, order = a, offs, cand
    fit = "best fit" if best_fit else "first fit"
    strategy = f"{name}, {fit}" + (", improved by search" if searched else "")
    return arena, strategy, offsets, order


def _search_sizes(plan: FunctionPlan) -> list[int]:
    """Where the order of the slots' sizes can change: sizes are products of dynamic and
    static dimensions, so one buffer overtakes another as a dynamic size passes a static
    one (`T*T` against `T*32` at 32). Each static dimension above 1, one less and one more,
    and _SEARCH_SIZES and the hint for the extremes."""
    dims = {d for b in plan.buffers for d in b.alloc.memref.type.shape
            if d is not None and d > 1}
    return sorted({*_SEARCH_SIZES, plan.hint, *dims, *(d - 1 for d in dims),
                   *(d + 1 for d in dims)})


def _cover(arenas: list[list[int]]) -> list[int]:
    """The fewest candidates (greedy set cover; `arenas[c][k]`: candidate c's arena at size
    point k) such that at each point one of them is within _SEARCH_TARGET of the best
    candidate there: each one chosen becomes run-time code, so those that never win are
    left out. Ties go to the first candidate."""
    points = range(len(arenas[0]))
    best = [min(a[k] for a in arenas) for k in points]
    good = [{k for k, a in enumerate(row) if a <= _SEARCH_TARGET * best[k]} for row in arenas]
    left, chosen = set(points), []
    while left:
        c = max(range(len(arenas)), key=lambda c: (len(good[c] & left), -c))
        chosen.append(c)
        left -= good[c]
    return chosen


def _assign_offsets(plan: FunctionPlan) -> None:
    """Static sizes: `_best_static`. Dynamic sizes: the placement `_best_static` finds with
    every independent size (see `size_leaves`) set to each of `_search_sizes` (and with
    several of them also at 16 random mixes), each made a stacking (`_stacking`: offsets
    that are sums and maxima of sizes, sound at every size), the fewest of them that are
    near the best at each point of a geometric grid up to 8192 (eight sizes an octave) and
    at 80 random mixes (`_cover`), and at run time the offsets of the one whose arena is
    smallest."""
    slots = plan.slots
    if not slots:
        return
    conflicts = _conflicts(slots)
    if plan.is_static():
        sizes = [s.size for s in slots]
        plan.arena, plan.strategy, offsets, _ = _best_static(slots, conflicts, sizes)
    else:
        values = list(plan.env())                # the run-time sizes the slots' sizes read
        leaves: dict = {}
        for v in values:
            size_leaves(v, leaves)
        symbols = sorted(leaves, key=str)

        def sizes_at(n) -> list[int]:
            """The slots' sizes with every dynamic size n, or each symbol its own of n's."""
            value = dict(zip(symbols, n)) if isinstance(n, tuple) else dict.fromkeys(symbols, n)
            memo: dict = {}
            env = {v: size_value(v, value, memo) for v in values}
            return [sz.evaluate(s.size, env) for s in slots]
        searched: list = _search_sizes(plan)
        grid = sorted({*searched, *(round(2 ** (k / 8)) for k in range(105))})
        mixed: list = []
        if len(symbols) > 1:                     # sizes that differ from one another too
            rng = random.Random(len(symbols))
            mixed = [tuple(rng.choice(grid) for _ in symbols) for _ in range(80)]
            searched += mixed[:16]
        # a stacking found at several sizes is one: the first stands for it
        found: dict = {}
        for n in searched:
            stacking = _stacking(conflicts, _best_static(slots, conflicts, sizes_at(n))[2])
            found.setdefault(stacking[1], stacking)
        candidates = list(found.values())
        at = [sizes_at(n) for n in grid + mixed]
        chosen = [candidates[c] for c in
                  _cover([[_stacked(c, sizes) for sizes in at] for c in candidates])]
        offsets = arena = None
        for stacking in chosen:
            mine, size = _stacked_offsets(slots, stacking)
            if offsets is None:
                offsets, arena = mine, size
                continue
            keep = sz.le(arena, size)
            offsets = [sz.select(keep, a, b) for a, b in zip(offsets, mine)]
            arena = sz.select(keep, arena, size)
        plan.arena = arena
        tried = f"of {len(candidates)} found at {len(searched)} sizes"
        plan.strategy = (f"stacked in {len(chosen)} orders ({tried}), the smallest chosen "
                         "at run time" if len(chosen) > 1 else
                         f"stacked in one order ({tried}; within 1% of the best of "
                         "them at every size tried)")
    for s, o in zip(slots, offsets):
        s.offset = o


# ---------------------------------------------------------------------------------------------
# Rewrite
# ---------------------------------------------------------------------------------------------


def apply_plan(plan: FunctionPlan) -> None:
    """Move the size computations to the entry, compute the offsets and the arena there,
    make each planned alloc a view of the arena where the alloc was (in a branch too: the
    entry dominates it), drop their deallocs, and free the arena before the return.

    The size ops move in position order (pre-order, branches included), which keeps every
    definition before its uses; the anchor, the first op that stays, is a body op, since the
    ops before it all move and so have no regions."""
    if not plan.buffers:
        return
    block = plan.ops[0].parent
    same = {}                       # a resolved dim -> the value it equals, through chains
    for dim in plan.resolved:
        v = dim.results[0]
        while v.owner in plan.resolved:
            v = plan.resolved[v.owner]
        same[dim.results[0]] = v
    for old, new in same.items():   # equal values, and `new` moves to the entry
        old.replace_all_uses_with(new)
        old.owner.erase()
    first = next(k for k, op in enumerate(plan.ops) if op not in plan.hoist)
    anchor = plan.ops[first]
    for op in plan.ops[first:]:
        if op in plan.hoist:
            op.move_before(anchor)
    b = Builder.before(anchor)
    b.location = plan.func.location
    em = sz.Emitter(b, same)
    offsets = {s: em.value(s.offset) for s in plan.slots}
    if isinstance(plan.arena, int):
        arena = b.create(ArenaOp, None, result_types=[MemRefType((plan.arena,), I8)])
    else:
        arena = b.create(ArenaOp, em.value(plan.arena), result_types=[MemRefType((None,), I8)])
    base = arena.results[0]
    for buf in plan.buffers:
        alloc = buf.alloc
        view = Builder.before(alloc).create(
            ViewOp, base, offsets[buf.slot], list(alloc.dynamic_sizes),
            result_types=[alloc.memref.type], attributes=dict(alloc.attributes))
        alloc.memref.replace_all_uses_with(view.results[0])
        for d in buf.deallocs:
            d.erase()
        alloc.erase()
    for op in list(block.ops):
        if op.name == "func.return":
            Builder.before(op).create(DeallocOp, base)


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def memory_report(plan: FunctionPlan) -> Diagnostic:
    """A remark on the function: arena bytes, the lower bound, their ratio, and a note per
    buffer live at the peak (at its alloc's location: the source line that made it)."""
    name = plan.func.properties["sym_name"].value
    env = plan.env()
    arena = plan.arena_bytes(env)
    bound, peak = plan.lower_bound(env)
    separate, _ = plan.lower_bound(env, in_place=False)
    ratio = f"{arena / bound:.2f}" if bound else "1.00"
    where = "" if plan.is_static() else \
        f" (sizes known at run time; figures with every dynamic size = {plan.hint})"
    reused = len(plan.buffers) - len(plan.slots)
    text = (f"memory plan of @{name}{where}: arena {arena} bytes, lower bound {bound} bytes "
            f"(most bytes live at one point), ratio {ratio}; {len(plan.buffers)} buffers in "
            f"{len(plan.slots)} slots ({reused} reused in place; {separate} bytes live at most "
            f"without that), {len(plan.skipped)} left as allocs, {plan.in_loops} allocs inside "
            f"loops left as they are")
    branched = sum(b.in_branch for b in plan.buffers)
    if branched:
        text += f"; {branched} of the buffers in branches"
    if plan.buffers:
        text += f"; placed by {plan.strategy}"
    d = Diagnostic("remark", text, plan.func.location)
    for b in plan.buffers:
        if b.start <= peak <= b.end:
            d.attach_note(f"live at the peak: {b.alloc.memref.type}, "
                          f"{sz.evaluate(b.size, env)} bytes at offset "
                          f"{sz.evaluate(b.slot.offset, env)}", b.alloc.location)
    for alloc, why in plan.skipped:
        where = " in a branch" if isinstance(alloc.parent.parent_op, IfOp) else ""
        d.attach_note(f"left as an alloc{where}: {why}", alloc.location)
    return d


@register_pass
class PlanMemory(Pass):
    """Place each function's temporaries in one arena at planned, 64-byte-aligned offsets.

    Algorithm:
      1. Number the ops in pre-order, descending into `loop.if` regions (then before else)
         but not into loops (`plan_memory_liveness`).
      2. Take the `memory.alloc`s that have a position: in the body or in `loop.if` regions
         (those inside loops stay as they are); leave out those that are returned, freed in
         a region, handed on to another value (yielded, taken by an op with regions or
         memref results: that value could be freed), of elements without a size in memory,
         or sized by an op that cannot move to the entry (out of a branch, only ops that
         cannot trap move; a `memory.dim` of a `loop.if` result is the size both regions'
         yielded allocs share, if they do); in a branch, also those used outside it.
      3. Liveness over the positions: a use nested in a loop counts at the loop's position;
         aliases (views, subviews) are followed; a buffer lives from the first op that
         touches its memory to the last, to the end if it escapes (a call, an op of
         unknown effects). `memory.dim` and deallocs touch no memory. The two branches of an
         `if` have disjoint positions: their temporaries never conflict.
      4. In-place reuse (`in-place`): a buffer first written by the loop nest where another
         of the same shape, allocated in the same block, dies, reading it element by element
         at the same index, takes that buffer's slot.
      5. Offsets: with static sizes, greedy placement into the gaps of the offset-sorted
         slots overlapping in time, best and first fit, largest-first, program and
         longest-lived orders: the smallest arena wins. With dynamic sizes, placements found
         at sample sizes become stackings: each slot's offset the largest top of the lower
         slots live with it, sums and maxima of the sizes evaluated at run time (sound for
         any sizes); of several, the one with the smallest arena is chosen there.
      6. Rewrite: size ops move to the entry, then the offsets, one `memory.arena`, a
         `memory.view` in place of each alloc (same location and attributes), no deallocs
         for them, and one `memory.dealloc` of the arena before the return.
      7. With `report`, a remark per function: arena, lower bound (most bytes live at one
         point), their ratio, and a note at each buffer live at the peak.
    """

    name = "plan-memory"
    # Any op: a function is planned on its own, and a module (nested ones included: a model
    # file is a module of model modules) has each of its functions planned.
    anchor = None
    report: bool = False
    in_place: bool = True
    dynamic_size_hint: int = 64

    def run(self, op: Operation) -> None:
        funcs = [op] if op.name == "func.func" else \
            [f for f in op.walk(post_order=False) if f.name == "func.func"]
        for f in funcs:
            self._plan(f)

    def _plan(self, op: Operation) -> None:
        plan = plan_function(op, in_place=self.in_place, hint=self.dynamic_size_hint)
        if plan is None:
            blocks = len(op.regions[0].blocks) if op.regions else 0
            if self.report and blocks > 1:
                emit(Diagnostic("remark", f"memory plan: not planned, the body has {blocks} "
                                          "blocks (only structured control flow is)",
                                op.location))
            return
        if self.report:
            emit(memory_report(plan))
        apply_plan(plan)
