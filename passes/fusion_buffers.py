"""The buffers of a fused nest (a `fusion.group` lowered by `lower-linalg-to-loop`): values
passed between its ops forwarded in registers, the rest shrunk to one point's slice.

After lowering, a group is one loop over its outer dims whose body holds each member's nest
in turn; a member's result reaches the next member through a buffer, stored by one and
loaded by the other. Two rewrites remove that traffic:

1. **Forwarding.** In the body of the outer loop (its top level, where the stores of the
   values each point computes once sit, and the loads of the values read once per point),
   a load of the element the last store to that buffer wrote is that store's value. A
   store is forgotten when an op in between may write the buffer (a store nested in a
   member's loop, a copy, an op whose effects are unknown), or a buffer that may share its
   memory (any two but a fresh allocation and another); a store that a later one to the
   same element overwrites before anything may read it is erased (a fill's initial value
   that the reduction's first step already took in a register). A buffer of the group's
   own (allocated inside the group by `bufferize`) that is then only written is not needed
   at all: its stores, its free and its allocation go. That is the scalar intermediate of
   an epilogue or of a row reduction: a register.
2. **Shrinking.** A buffer of the group's own still read (a row that a member loops over
   after another wrote it) is indexed by the outer loops' values first in every access
   (the legality rule of `fusion_cost.outer_dims`), so one point only needs the rest of
   it: it is allocated inside the outer loop's body with the remaining extents, freed at
   the end of it, and every access drops the outer indices. Where an access does not start
   with them, the buffer stays whole, before the loop. A group without outer loops (scalar
   work run in order, `lower-linalg-to-loop`) has no slice to shrink to: its own buffers
   still read stay as they are.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.types import INDEX, MemRefType
from irkit.dialects.arith import materialize_constant
from irkit.dialects.memory import (
    FREE, READ, WRITE, AllocOp, DeallocOp, DimOp, LoadOp, StoreOp, effects_of,
)


def optimize(body: Block, local: list[AllocOp], ivs: list[Value]) -> None:
    """Forward the stores of `body` (the outer loop's body of a fused nest whose induction
    values are `ivs`; with none, the body of a group without outer loops, its members'
    nests in order) and drop or shrink its own buffers `local` (allocated before it)."""
    forward_stores(body)
    for alloc in local:
        buf = alloc.memref
        sizes = _sizes(alloc)
        for u in [u for u in buf.users if isinstance(u, DimOp)]:
            u.result.replace_all_uses_with(sizes[u.properties["axis"].value])
            u.erase()
        if all(isinstance(u, DeallocOp) or (isinstance(u, StoreOp) and u.memref is buf)
               for u in buf.users):
            for u in list(buf.users):
                u.erase()
            alloc.erase()
        elif ivs:
            shrink(alloc, body, ivs, sizes)


def forward_stores(body: Block) -> None:
    """Replace each top-level load of `body` by the value the last store to the same
    element wrote, while nothing in between may have written it, and erase a top-level
    store that a later one to the same element overwrites unread (module docstring)."""
    known: dict[Value, tuple[tuple, Value]] = {}
    unread: dict[Value, StoreOp] = {}
    for op in list(body.ops):
        if isinstance(op, LoadOp):
            entry = known.get(op.memref)
            if entry is not None and entry[0] == tuple(op.indices):
                op.result.replace_all_uses_with(entry[1])
                op.erase()
            else:
                _forget(unread, op.memref)
        elif isinstance(op, StoreOp):
            earlier = unread.get(op.memref)
            if earlier is not None and tuple(earlier.indices) == tuple(op.indices):
                earlier.erase()
            _forget(known, op.memref)
            _forget(unread, op.memref)
            known[op.memref] = (tuple(op.indices), op.value)
            unread[op.memref] = op
        else:
            reads, writes = _accesses(op)
            for buf in reads:
                _forget(unread, buf)
            for buf in writes:
                _forget(known, buf)


def _forget(table: dict, buf: Value | None) -> None:
    """Drop what `table` holds of the buffers `buf` may alias (None: of every buffer)."""
    for b in list(table):
        if buf is None or _may_alias(b, buf):
            del table[b]


def _may_alias(a: Value, b: Value) -> bool:
    """Two buffers may share memory unless one is a fresh allocation and they differ."""
    return a is b or not (isinstance(a.owner, AllocOp) or isinstance(b.owner, AllocOp))


def _accesses(op: Operation) -> tuple[list, list]:
    """The buffers `op` or the ops nested in it may read, and may write (None: any)."""
    reads: list[Value | None] = []
    writes: list[Value | None] = []
    for nested in op.walk():
        if nested.regions or has_trait(nested, Terminator):
            continue
        effects = effects_of(nested)
        if effects is None:
            return [None], [None]
        reads += [buf for effect, buf in effects if effect == READ]
        writes += [buf for effect, buf in effects if effect in (WRITE, FREE)]
    return reads, writes


def shrink(alloc: AllocOp, body: Block, ivs: list[Value], sizes: list[Value]) -> None:
    """Make `alloc` (a buffer of the fused nest's own, before the loop of `body`) one
    point's slice inside `body`, when every access starts with the outer indices `ivs`;
    `sizes`: its extents as index values."""
    buf, k = alloc.memref, len(ivs)
    accesses = [u for u in buf.users if isinstance(u, (LoadOp, StoreOp))]
    if any(u.memref is not buf or list(u.indices)[:k] != ivs for u in accesses) or \
            any(not isinstance(u, (LoadOp, StoreOp, DeallocOp)) for u in buf.users):
        return
    t: MemRefType = buf.type
    slice_type = MemRefType(t.shape[k:], t.element)
    start = Builder.at_start(body)
    start.location = alloc.location
    dynamic = [s for s, d in zip(sizes[k:], t.shape[k:]) if d is None]
    new = start.create(AllocOp, dynamic, result_types=[slice_type]).results[0]
    Builder.before(body.last).create(DeallocOp, new, location=alloc.location)
    for u in accesses:
        b = Builder.before(u)
        rest = list(u.indices)[k:]
        if isinstance(u, LoadOp):
            u.result.replace_all_uses_with(b.create(LoadOp, new, rest).result)
        else:
            b.create(StoreOp, u.value, new, rest)
        u.erase()
    for u in list(buf.users):
        u.erase()
    alloc.erase()


def _sizes(alloc: AllocOp) -> list[Value]:
    """Each axis of `alloc`'s buffer as an index value: its size operand, or a constant
    made before it (unused ones are left to canonicalize)."""
    dynamic = iter(alloc.dynamic_sizes)
    out = []
    for d in alloc.memref.type.shape:
        if d is None:
            out.append(next(dynamic))
        else:
            c = materialize_constant(IntegerAttr(d, INDEX), INDEX, alloc.location)
            alloc.parent.insert_before(alloc, c)
            out.append(c.results[0])
    return out
