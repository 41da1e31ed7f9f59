"""Liveness for plan-memory: which allocs join the arena, and when each one is live.

Positions number the ops of the function body in program order (pre-order), descending into
the regions of `loop.if` (the then region before the else region) but into no other region:
the ops of a loop (`loop.for`, `loop.parallel`, or any region op other than `loop.if`) share
the position of the outermost such op, the nest they run in. Allocs are planned where they
have a position of their own: in the body (the *function level*) and in `loop.if` regions,
however deeply nested, with no loop in between; those inside loops stay allocs (one buffer
per iteration would need the trip count).

Why branches get positions of their own: the two regions of an `if` never both run in one
call, so with disjoint ranges of positions the temporaries of the then region never conflict
with those of the else region (their intervals do not intersect) and may share memory, while
a buffer live across the whole `if` (touched before and after it) covers both ranges and
conflicts with both. This is sound because a call visits positions in increasing order,
skipping the range of the branch not taken (all iterations of a loop run at its one
position): when A's interval ends before B's begins, every touch of A happens before every
touch of B, so B may overwrite A's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.rewrite import is_pure
from irkit.types import MemRefType
from irkit.dialects.loop import IfOp
from irkit.dialects.memory import AllocOp, DeallocOp, byte_size, effects_of
from irkit.passes import plan_memory_sizes as sz

#: the ops whose results a size computed inside a branch may come from: moved to the function
#: entry, they run on calls where the branch does not, so they must not trap (no division,
#: no load: a division by zero guarded by the branch's condition would fault at entry)
SPECULATABLE = frozenset({
    "arith.constant", "memory.dim", "arith.addi", "arith.subi", "arith.muli", "arith.select",
    "arith.cmpi", "arith.maxui", "arith.minui", "arith.maxsi", "arith.minsi",
    "arith.index_cast",
})


@dataclass(eq=False)
class Buffer:
    """An alloc the plan places in the arena.

    `start`/`end` are positions (see the module docstring): the first and last op that reads
    or writes the buffer or an alias of it (`memory.dim` and views touch no memory, so they
    do not count); an escaping buffer is live to the end of the function. `home` is the block
    of the alloc: the function body or a `loop.if` region."""

    alloc: AllocOp
    raw: object                 # bytes, an expression
    size: object                # bytes rounded up to sz.ALIGNMENT
    start: int
    end: int
    touches: list               # (position, op) of every op that reads or writes it
    aliased: bool               # something else (a view, a subview) refers to its memory
    escapes: bool
    deallocs: list
    home: Block
    slot: object = None         # the plan_memory.Slot it is placed in

    @property
    def in_branch(self) -> bool:
        return self.home.parent_op is not None and isinstance(self.home.parent_op, IfOp)


@dataclass(eq=False)
class Liveness:
    """What `find_buffers` found: the positioned ops, the planned buffers and the rest."""

    ops: list                   # the ops that have a position, by position
    buffers: list               # planned, by position
    skipped: list               # (alloc, reason) of positioned allocs left alone
    in_loops: int               # allocs inside loops (no position of their own), left alone
    hoist: set                  # pure ops computing sizes, to move to the entry
    resolved: dict              # memory.dim op -> the value it equals (sz.dim_through_if)


def number(block: Block) -> list[Operation]:
    """The ops of `block` in pre-order, descending into `loop.if` regions only."""
    out: list[Operation] = []
    for op in block.ops:
        out.append(op)
        if isinstance(op, IfOp):
            for region in op.regions:
                for b in region.blocks:
                    out += number(b)
    return out


def position(op: Operation, pos: dict) -> int:
    """`op`'s position, or that of its nearest positioned ancestor: the outermost loop below
    the positioned ops (loops are not descended into)."""
    while op not in pos:
        op = op.parent_op
    return pos[op]


def _inside(op: Operation, block: Block) -> bool:
    """Whether `op` is in `block` or nested anywhere below it."""
    while op is not None:
        if op.parent is block:
            return True
        op = op.parent_op
    return False


class _NotPlanned(Exception):
    """Why an alloc stays an alloc (the report says it)."""


def _uses(buf: Value, home: Block, pos: dict) -> tuple[list, bool, bool, list]:
    """(touches, aliased, escapes, deallocs) of the buffer `buf` allocated in `home`, or
    `_NotPlanned`.

    Follows aliases made by pure ops without regions (views, subviews). An op that reads or
    writes through known effects is a touch at its position; a call, a yield, an op with
    regions taking the buffer, or any op of unknown effects is an escape. An escape that
    could hand the memory on to another value (a yield, an op with regions or memref
    results), which might be freed later, leaves the buffer alone; a branch buffer must also
    stay in its region."""
    touches, deallocs = [], []
    aliased = escapes = False
    work = [buf]
    while work:
        v = work.pop()
        for use in v.uses:
            u = use.owner
            if not _inside(u, home):
                raise _NotPlanned("it is used outside its branch")
            p = position(u, pos)
            if isinstance(u, DeallocOp):
                if v is not buf or u.parent is not home:
                    raise _NotPlanned("it is freed inside a region or through an alias")
                deallocs.append(u)
            elif u.name == "func.return":
                raise _NotPlanned("it is returned")
            elif not u.regions and is_pure(u) and not has_trait(u, Terminator):
                memrefs = [r for r in u.results if isinstance(r.type, MemRefType)]
                aliased = aliased or bool(memrefs)
                work += memrefs
            elif not u.regions and effects_of(u) is not None and \
                    not has_trait(u, Terminator) and \
                    not any(isinstance(r.type, MemRefType) for r in u.results):
                touches.append((p, u))
            else:                                   # a call, a yield, a region op, unknown
                if u.regions or has_trait(u, Terminator) or \
                        any(isinstance(r.type, MemRefType) for r in u.results):
                    # another value may carry the memory on, and be freed: part of the arena
                    raise _NotPlanned(f"it may be handed on to another value ({u.name} takes "
                                      "it)")
                touches.append((p, u))
                escapes = True
    if len(deallocs) > 1:
        raise _NotPlanned("it is freed more than once")
    return touches, aliased, escapes, deallocs


def _blocker(v: Value, body: Block, branches: set, ops: dict) -> Operation | Value | None:
    """None if `v` can be computed at the function entry, else the op (or value) that keeps
    it from moving there. Movable: an argument of the function; the result of a pure body op
    without regions, or of a `SPECULATABLE` op in a branch, whose operands are movable (those
    ops join `ops`, mapped to None); a `memory.dim` of a `loop.if` result that
    `sz.dim_through_if` sees to be a movable value (it joins `ops`, mapped to that value:
    the rewrite replaces it)."""
    if isinstance(v, BlockArgument):
        return None if v.owner is body else v
    o = v.owner
    if o in ops:
        return None
    same = sz.dim_through_if(v)
    if same is not None:
        why = _blocker(same, body, branches, ops)
        if why is None:
            ops[o] = same
        return why
    if o.parent is body:
        movable = not o.regions and not o.successors and is_pure(o)
    else:
        movable = o.parent in branches and o.name in SPECULATABLE
    if not movable:
        return o
    for x in o.operands:
        why = _blocker(x, body, branches, ops)
        if why is not None:
            return why
    ops[o] = None
    return None


def _analyze(alloc: AllocOp, k: int, body: Block, branches: set, pos: dict,
             found: "Liveness") -> Buffer | str:
    """The `Buffer` of the alloc at position `k`, or why it stays an alloc."""
    t = alloc.memref.type
    esize = byte_size(t.element)
    if esize is None:
        return f"its elements ({t.element}) have no size in memory"
    if t.memory_space is not None:
        return f"it is in memory space {t.memory_space}"
    home = alloc.parent
    try:
        touches, aliased, escapes, deallocs = _uses(alloc.memref, home, pos)
    except _NotPlanned as e:
        return str(e)
    needed: dict = {}
    for v in alloc.dynamic_sizes:
        why = _blocker(v, body, branches, needed)
        if why is None:
            continue
        if isinstance(why, Operation) and why.parent in branches:
            return (f"its size is computed in a branch by {why.name}: only ops that cannot "
                    "trap (index arithmetic without division, memory.dim, constants) move "
                    "from a branch to the function entry")
        return "its size is computed by an op that cannot move to the function entry"
    found.hoist |= {o for o, same in needed.items() if same is None}
    found.resolved |= {o: same for o, same in needed.items() if same is not None}
    raw = esize
    for d in t.shape:
        if d is not None:
            raw = sz.mul(raw, d)
    for v in alloc.dynamic_sizes:
        raw = sz.mul(raw, v)
    last = len(pos) - 1
    start = min((p for p, _ in touches), default=k)
    end = last if escapes else max((p for p, _ in touches), default=k)
    return Buffer(alloc, raw, sz.align(raw), start, end, touches, aliased, escapes, deallocs,
                  home)


def find_buffers(body: Block) -> Liveness:
    """Number the function body, then analyze every alloc: those with a position (in the
    body or in `loop.if` regions) are planned or skipped with a reason; the others, inside
    loops, are counted."""
    ops = number(body)
    pos = {op: k for k, op in enumerate(ops)}
    branches = {b for op in ops if isinstance(op, IfOp) for r in op.regions for b in r.blocks}
    found = Liveness(ops, [], [], 0, set(), {})
    for op in body.parent_op.walk(post_order=False):
        if not isinstance(op, AllocOp):
            continue
        if op not in pos:
            found.in_loops += 1
            continue
        b = _analyze(op, pos[op], body, branches, pos, found)
        if isinstance(b, str):
            found.skipped.append((op, b))
        else:
            found.buffers.append(b)
    found.buffers.sort(key=lambda b: pos[b.alloc])
    found.skipped.sort(key=lambda s: pos[s[0]])
    return found
