"""The buffers of a fused nest (a `fusion.group` lowered by `lower-linalg-to-loop`): values
passed between its ops forwarded in registers, the rest shrunk to one point's slice.

After lowering, a group is one loop over its outer dims whose body holds each member's nest
in turn; a member's result reaches the next member through a buffer, stored by one and
loaded by the other. Two rewrites remove that traffic:

1. **Forwarding.** In the body of the outer loop (its top level, where the stores of the
   values each point computes once sit, and the loads of the values read once per point),
   a load of the element an earlier store wrote is that store's value, while nothing in
   between may have written it (a store nested in a member's loop, a copy, an op whose
   effects are unknown); a store that a later one to the same element overwrites before
   anything may read it is erased (a fill's initial value that the reduction's first step
   already took in a register). `memory-forward-stores` does this
   (passes/memory_forward_stores.py, which says when two buffers may share memory), here
   and again on every block once the loops are vectorized. A buffer of the group's
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
from irkit.ir import Block, Value
from irkit.types import INDEX, MemRefType
from irkit.dialects.arith import materialize_constant
from irkit.dialects.memory import AllocOp, DeallocOp, DimOp, LoadOp, StoreOp
from irkit.passes.memory_forward_stores import forward_stores


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
