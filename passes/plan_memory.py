"""plan-memory: one arena per function for its temporaries, at planned 64-byte-aligned offsets.

A function lowered to loops allocates a fresh buffer per temporary (`memory.alloc`) and frees
it after its last use (`memory.dealloc`). This pass replaces those by one byte buffer per
function (`memory.arena`, allocated at entry, freed before the return) and a typed
`memory.view` of it per temporary, at an offset chosen so that buffers live at the same time
never overlap while the arena stays close to the lower bound: the most bytes live at any one
point. docs/memory_planning.md explains the model, the algorithms and their bounds.

Sizes may be dynamic: the offsets are then expressions in the run-time sizes (index values),
emitted as `arith` ops at entry, and sound for every value of those sizes.

The pieces, in the order the pass uses them: size expressions (`plan_memory_sizes`: a tiny
folding expression language over index values), liveness (`plan_function`), in-place reuse,
offset assignment (static best-fit, run-time first-fit), the rewrite (`apply_plan`) and the report.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import Diagnostic, emit
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value, is_pure
from irkit.types import I8, MemRefType
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.dialects.memory import (
    AllocOp, ArenaOp, DeallocOp, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp, ViewOp,
    byte_size, effects_of,
)
from irkit.passes import plan_memory_sizes as sz

#: run-time first fit tries at most this many earlier neighbours' tops; beyond, it stacks
_MAX_FIT_CANDIDATES = 8
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
# Liveness
# ---------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Buffer:
    """A function-level `memory.alloc` the plan places in the arena.

    `start`/`end` are positions in the function body (the index of a top-level op, which
    stands for everything nested in it): the first and last op that reads or writes the
    buffer or an alias of it (`memory.dim` and views touch no memory, so they do not count);
    an escaping buffer is live to the end."""

    alloc: AllocOp
    raw: object                 # bytes, an expression
    size: object                # bytes rounded up to sz.ALIGNMENT
    start: int
    end: int
    touches: list               # (position, op) of every op that reads or writes it
    aliased: bool               # something else (a view, a subview) refers to its memory
    escapes: bool
    deallocs: list
    slot: "Slot | None" = None


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
    ops: list                   # the top-level ops, by position
    buffers: list               # planned, by position
    skipped: list               # (alloc, reason) of function-level allocs left alone
    in_loops: int               # allocs nested in regions, left alone
    hoist: set                  # pure ops computing sizes, to move to the entry
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
        items = [(s.start, s.end, sz.evaluate(s.size, env)) for s in self.slots] if in_place \
            else [(b.start, b.end, sz.evaluate(b.size, env)) for b in self.buffers]
        best = (0, 0)
        for p in sorted({s for s, _, _ in items}):
            total = sum(n for s, e, n in items if s <= p <= e)
            if total > best[0]:
                best = (total, p)
        return best


def _top(block: Block, op: Operation) -> Operation:
    while op.parent is not block:
        op = op.parent_op
    return op


class _NotPlanned(Exception):
    """Why a function-level alloc stays an alloc (the report says it)."""


def _uses(buf: Value, block: Block, pos: dict) -> tuple[list, bool, bool, list]:
    """(touches, aliased, escapes, deallocs) of the buffer `buf`, or `_NotPlanned`.

    Follows aliases made by pure ops without regions (views, subviews). An op that reads or
    writes through known effects is a touch at its top-level position; a call, a yield, an
    op with regions taking the buffer, or any op of unknown effects is an escape."""
    touches, deallocs = [], []
    aliased = escapes = False
    work = [buf]
    while work:
        v = work.pop()
        for use in v.uses:
            u = use.owner
            p = pos[_top(block, u)]
            if isinstance(u, DeallocOp):
                if v is not buf or u.parent is not block:
                    raise _NotPlanned("it is freed inside a region or through an alias")
                deallocs.append(u)
            elif u.name == "func.return":
                raise _NotPlanned("it is returned")
            elif has_trait(u, Terminator):          # a yield: the value leaves the region
                touches.append((p, u))
                escapes = True
            elif not u.regions and is_pure(u):
                memrefs = [r for r in u.results if isinstance(r.type, MemRefType)]
                aliased = aliased or bool(memrefs)
                work += memrefs
            elif not u.regions and effects_of(u) is not None and \
                    not any(isinstance(r.type, MemRefType) for r in u.results):
                touches.append((p, u))
            else:
                touches.append((p, u))
                escapes = True
    if len(deallocs) > 1:
        raise _NotPlanned("it is freed more than once")
    return touches, aliased, escapes, deallocs


def _hoistable(v: Value, block: Block, ops: set) -> bool:
    """Whether `v` can be computed at the function entry: a block argument, or the result
    of a pure top-level op without regions whose operands can be (those ops join `ops`)."""
    if isinstance(v, BlockArgument):
        return v.owner is block
    o = v.owner
    if o in ops:
        return True
    if o.parent is not block or o.regions or o.successors or not is_pure(o):
        return False
    if all(_hoistable(x, block, ops) for x in o.operands):
        ops.add(o)
        return True
    return False


def _analyze(alloc: AllocOp, k: int, block: Block, pos: dict, hoist: set) -> Buffer | str:
    """The `Buffer` of a function-level alloc at position `k`, or why it stays an alloc."""
    t = alloc.memref.type
    esize = byte_size(t.element)
    if esize is None:
        return f"its elements ({t.element}) have no size in memory"
    if t.memory_space is not None:
        return f"it is in memory space {t.memory_space}"
    try:
        touches, aliased, escapes, deallocs = _uses(alloc.memref, block, pos)
    except _NotPlanned as e:
        return str(e)
    needed: set = set()
    if not all(_hoistable(v, block, needed) for v in alloc.dynamic_sizes):
        return "its size is computed by an op that cannot move to the function entry"
    hoist |= needed
    raw = esize
    for d in t.shape:
        if d is not None:
            raw = sz.mul(raw, d)
    for v in alloc.dynamic_sizes:
        raw = sz.mul(raw, v)
    last = len(pos) - 1
    start = min((p for p, _ in touches), default=k)
    end = last if escapes else max((p for p, _ in touches), default=k)
    return Buffer(alloc, raw, sz.align(raw), start, end, touches, aliased, escapes, deallocs)


def plan_function(func: Operation, *, in_place: bool = True,
                  hint: int = 64) -> FunctionPlan | None:
    """Liveness, in-place reuse and offsets for `func` (nothing is changed): None for a
    declaration or a body of several blocks (unstructured control flow is not planned)."""
    region = func.regions[0] if func.regions else None
    if region is None or len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = list(block.ops)
    pos = {op: k for k, op in enumerate(ops)}
    plan = FunctionPlan(func, ops, [], [], 0, set(), hint)
    for k, op in enumerate(ops):
        if isinstance(op, AllocOp):
            b = _analyze(op, k, block, pos, plan.hoist)
            if isinstance(b, str):
                plan.skipped.append((op, b))
            else:
                plan.buffers.append(b)
        plan.in_loops += sum(1 for o in op.walk() if o is not op and isinstance(o, AllocOp))
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
    """Whether `b` may take `a`'s memory in `outer` (the top-level op where `a` dies and `b` is
    first written): every iteration of the loop nest reads `a` at one element (or vector) and
    then writes `b` at the same index, the index being all the nest's induction variables; so
    each element of `a` is read before the same bytes are overwritten, and by no other
    iteration. Conservative: one block, plain loads and stores, same shape and element size."""
    if a.escapes or b.escapes or a.aliased or b.aliased or not _same_shape(a.alloc, b.alloc):
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
                  stack_beyond: int | None = None, limit: int | None = None) -> list | None:
    """Offsets, placing slots in `order`: each goes into the smallest (best fit) or lowest
    (first fit) gap between the slots already placed that overlap it in time, sorted by
    offset, or on top of them all when no gap is big enough, or when more than
    `stack_beyond` of them overlap it (what the run-time formula does). None as soon as a
    slot would end above `limit` (a search discarding a worse order early)."""
    offsets: list = [None] * len(sizes)
    for i in order:
        taken = sorted((offsets[j], sizes[j]) for j in conflicts[i] if offsets[j] is not None)
        stack = stack_beyond is not None and len(taken) > stack_beyond
        prev, best, best_gap = 0, None, None
        for o, n in taken:
            gap = o - prev
            if not stack and gap >= sizes[i] and (best is None or
                                                  (best_fit and gap < best_gap)):
                best, best_gap = prev, gap
            prev = max(prev, o + n)
        offsets[i] = prev if best is None else best
        if limit is not None and offsets[i] + sizes[i] > limit:
            return None
    return offsets


def _place_dynamic(slots: list, order: list[int]) -> list:
    """Offset expressions, placing slots in `order` by first fit evaluated at run time: the
    candidates are 0 and the top of each earlier overlapping slot; the lowest candidate that
    overlaps none of them wins, the highest top always does. Beyond _MAX_FIT_CANDIDATES
    neighbours only the highest top is used (a stack on top of them)."""
    offsets: list = [None] * len(slots)
    placed: list[int] = []
    for i in order:
        near = [j for j in placed if _overlap(slots[i], slots[j])]
        tops = [sz.add(offsets[j], slots[j].size) for j in near]
        top = 0
        for t in tops:
            top = sz.maximum(top, t)
        best = top
        if len(near) <= _MAX_FIT_CANDIDATES:
            for c in reversed([0] + tops):
                end = sz.add(c, slots[i].size)
                fits = True
                for j, t in zip(near, tops):
                    fits = sz.both(fits, sz.either(sz.le(end, offsets[j]), sz.le(t, c)))
                best = sz.select(fits, sz.minimum(best, c), best)
        offsets[i] = best
        placed.append(i)
    return offsets


def _arena_of(slots: list, offsets: list):
    arena = 0
    for s, o in zip(slots, offsets):
        arena = sz.maximum(arena, sz.add(o, s.size))
    return arena


def _arena_static(offsets: list[int], sizes: list[int]) -> int:
    return max((o + n for o, n in zip(offsets, sizes)), default=0)


def _peak(slots: list, sizes: list[int]) -> int:
    """The most bytes live at one position: no placement needs less."""
    return max((sum(n for t, n in zip(slots, sizes) if t.start <= p <= t.end)
                for p in {t.start for t in slots}), default=0)


def _best_static(slots: list, sizes: list[int], fits: tuple = (True, False),
                 stack_beyond: int | None = None) -> tuple:
    """(arena, strategy, offsets, order) of the best placement found for these sizes: the
    heuristic orders with each fit of `fits` (True: best fit, False: first fit; both as
    `_place_static` with `stack_beyond`), then, while
    the arena is more than _SEARCH_TARGET times the peak, a randomized search: alternately
    one slot of the best order moved to another place and a fresh random order (restarts:
    moves alone get stuck), each kept when the arena does not grow (so plateaus are
    crossed), for at most _SEARCH_BUDGET placements. Seeded by the slot count:
    deterministic."""
    conflicts = _conflicts(slots)
    best = None
    for name, order in _orders(slots, sizes).items():
        for best_fit in fits:
            offsets = _place_static(conflicts, sizes, order, best_fit, stack_beyond)
            arena = _arena_static(offsets, sizes)
            if best is None or arena < best[0]:
                best = (arena, name, offsets, order, best_fit)
    arena, name, offsets, order, best_fit = best
    target = _SEARCH_TARGET * _peak(slots, sizes)
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
        offs = _place_static(conflicts, sizes, cand, best_fit, stack_beyond, limit=arena)
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


def _cover(slots: list, candidates: list, at: list[list[int]]) -> list:
    """The fewest candidate orders (greedy set cover) such that at each size vector of `at`
    one of them is within _SEARCH_TARGET of the best candidate there: each order chosen
    becomes run-time code, so orders that never win are left out."""
    conflicts = _conflicts(slots)
    arenas = [[_arena_static(_place_static(conflicts, sizes, order, False,
                                           _MAX_FIT_CANDIDATES), sizes) for sizes in at]
              for order in candidates]
    best = [min(a[k] for a in arenas) for k in range(len(at))]
    good = [{k for k, a in enumerate(row) if a <= _SEARCH_TARGET * best[k]} for row in arenas]
    left, chosen = set(range(len(at))), []
    while left:
        c = max(range(len(candidates)), key=lambda c: (len(good[c] & left), -c))
        chosen.append(candidates[c])
        left -= good[c]
    return chosen


def _dim_symbol(v: Value):
    """What a run-time size stands for: the model's symbol (`"B"`) when it is a dimension of
    an argument whose `graph.dims` names one (such sizes are equal by the calling
    convention, checked at entry), else the value itself."""
    op = v.owner if not isinstance(v, BlockArgument) else None
    if op is None or op.name != "memory.dim" or not isinstance(op.operands[0], BlockArgument):
        return v
    arg = op.operands[0]
    attrs = arg.owner.parent_op.properties.get("arg_attrs") if arg.owner.parent_op else None
    if attrs is None or arg.index >= len(attrs.value):
        return v
    dims = dict(attrs.value[arg.index].value).get("graph.dims")
    axis = op.properties["axis"].value
    if dims is None or axis >= len(dims.value):
        return v
    name = dims.value[axis].value
    return name if isinstance(name, str) else v


_INDEX_OPS = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: max(a - b, 0),
    "arith.muli": lambda a, b: a * b, "arith.divui": lambda a, b: a // max(b, 1),
    "arith.ceildivui": lambda a, b: -(-a // max(b, 1)), "arith.maxui": max,
    "arith.minui": min, "arith.maxsi": max, "arith.minsi": min,
    "arith.divsi": lambda a, b: a // max(b, 1), "arith.ceildivsi": lambda a, b: -(-a // max(b, 1)),
    "arith.select": lambda c, a, b: a if c else b,
}
_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
         3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b,
         6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b,
         9: lambda a, b: a >= b}


def size_leaves(v: Value, out: dict) -> None:
    """The independent run-time sizes `v` is computed from: model symbols (`_dim_symbol`)
    through constants and the index arithmetic of `_INDEX_OPS` and `arith.cmpi`; any other
    value is a leaf of its own. (`sizes_at` in `_assign_offsets` varies only these.)"""
    symbol = _dim_symbol(v)
    op = None if isinstance(v, BlockArgument) else v.owner
    if isinstance(symbol, str) or op is None or \
            (op.name not in _INDEX_OPS and op.name not in ("arith.cmpi", "arith.constant")):
        out[symbol] = None
        return
    for x in op.operands:
        size_leaves(x, out)


def size_value(v: Value, leaves: dict, memo: dict) -> int:
    """`v` when the leaves of `size_leaves` have the values in `leaves`."""
    if v in memo:
        return memo[v]
    symbol = _dim_symbol(v)
    if symbol in leaves:
        r = leaves[symbol]
    elif v.owner.name == "arith.constant":
        r = v.owner.properties["value"].value
    else:
        args = [size_value(x, leaves, memo) for x in v.owner.operands]
        r = _CMPI[v.owner.properties["predicate"].value](*args) \
            if v.owner.name == "arith.cmpi" else _INDEX_OPS[v.owner.name](*args)
    memo[v] = r
    return r


def _assign_offsets(plan: FunctionPlan) -> None:
    """Static sizes: `_best_static`. Dynamic sizes: candidate orders (the heuristic orders
    at the hint, and the order `_best_static` finds with every independent size, see
    `size_leaves`, set to each of `_search_sizes`, and with several of them also at 16
    random mixes), the fewest of them that are near the best at each of those points, along
    a geometric grid up to 8192 (four sizes an octave) and at 80 random mixes (`_cover`),
    the first-fit formula of each, and at run time the offsets of the one whose arena is
    smallest."""
    slots = plan.slots
    if not slots:
        return
    if plan.is_static():
        sizes = [s.size for s in slots]
        plan.arena, plan.strategy, offsets, _ = _best_static(slots, sizes)
    else:
        leaves: dict = {}
        for v in plan.env():
            size_leaves(v, leaves)
        symbols = sorted(leaves, key=str)

        def sizes_at(n) -> list[int]:
            """The slots' sizes with every dynamic size n, or each symbol its own of n's."""
            value = dict(zip(symbols, n)) if isinstance(n, tuple) else dict.fromkeys(symbols, n)
            memo: dict = {}
            env = {v: size_value(v, value, memo) for v in plan.env()}
            return [sz.evaluate(s.size, env) for s in slots]
        grid = sorted({*_search_sizes(plan), *(round(2 ** (k / 4)) for k in range(53))})
        searched: list = list(_search_sizes(plan))
        mixed: list = []
        if len(symbols) > 1:                     # sizes that differ from one another too
            rng = random.Random(len(symbols))
            mixed = [tuple(rng.choice(grid) for _ in symbols) for _ in range(80)]
            searched += mixed[:16]
        candidates = list(_orders(slots, sizes_at(plan.hint)).values())
        candidates += [_best_static(slots, sizes_at(n), (False,), _MAX_FIT_CANDIDATES)[3]
                       for n in searched]
        chosen = _cover(slots, candidates, [sizes_at(n) for n in grid + mixed])
        offsets = arena = None
        for order in chosen:
            mine = _place_dynamic(slots, order)
            size = _arena_of(slots, mine)
            if offsets is None:
                offsets, arena = mine, size
                continue
            keep = sz.le(arena, size)
            offsets = [sz.select(keep, a, b) for a, b in zip(offsets, mine)]
            arena = sz.select(keep, arena, size)
        plan.arena = arena
        found = f"of {len(candidates)} orders found at {len(searched)} sizes"
        plan.strategy = (f"first fit in {len(chosen)} orders ({found}), the smallest chosen "
                         "at run time" if len(chosen) > 1 else
                         f"first fit in one order ({found}; within 1% of the best of "
                         "them at every size tried)")
    for s, o in zip(slots, offsets):
        s.offset = o


# ---------------------------------------------------------------------------------------------
# Rewrite
# ---------------------------------------------------------------------------------------------


def apply_plan(plan: FunctionPlan) -> None:
    """Move the size computations to the entry, compute the offsets and the arena there,
    make each planned alloc a view of the arena, drop their deallocs, and free the arena
    before the return."""
    if not plan.buffers:
        return
    block = plan.ops[0].parent
    first = next(k for k, op in enumerate(plan.ops) if op not in plan.hoist)
    anchor = plan.ops[first]
    for op in plan.ops[first:]:
        if op in plan.hoist:
            op.move_before(anchor)
    b = Builder.before(anchor)
    b.location = plan.func.location
    em = sz.Emitter(b)
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
    if plan.buffers:
        text += f"; placed by {plan.strategy}"
    d = Diagnostic("remark", text, plan.func.location)
    for b in plan.buffers:
        if b.start <= peak <= b.end:
            d.attach_note(f"live at the peak: {b.alloc.memref.type}, "
                          f"{sz.evaluate(b.size, env)} bytes at offset "
                          f"{sz.evaluate(b.slot.offset, env)}", b.alloc.location)
    for alloc, why in plan.skipped:
        d.attach_note(f"left as an alloc: {why}", alloc.location)
    return d


@register_pass
class PlanMemory(Pass):
    """Place each function's temporaries in one arena at planned, 64-byte-aligned offsets.

    Algorithm:
      1. Take the function-level `memory.alloc`s (those inside loops or branches stay as
         they are); leave out those that are returned, freed in a region, of elements that
         are not whole bytes, or sized by an op that cannot move to the entry.
      2. Liveness over the body's top-level ops: a use nested in a loop or branch counts at
         its top-level op; aliases (views, subviews) are followed; a buffer lives from the
         first op that touches its memory to the last, to the end if it escapes (a call,
         a yield, an op of unknown effects). `memory.dim` and deallocs touch no memory.
      3. In-place reuse (`in-place`): a buffer first written by the loop nest where another
         of the same shape dies, reading it element by element at the same index, takes
         that buffer's slot.
      4. Offsets: with static sizes, greedy placement into the gaps of the offset-sorted
         slots overlapping in time, best and first fit, largest-first, program and
         longest-lived orders: the smallest arena wins. With dynamic sizes, the offsets are
         first-fit formulas in the sizes, one per order, evaluated at run time (sound for
         any sizes), and the order with the smallest arena is chosen there too.
      5. Rewrite: size ops move to the entry, then the offsets, one `memory.arena`, a
         `memory.view` in place of each alloc (same location and attributes), no deallocs
         for them, and one `memory.dealloc` of the arena before the return.
      6. With `report`, a remark per function: arena, lower bound (most bytes live at one
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
