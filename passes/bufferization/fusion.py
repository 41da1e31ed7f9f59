"""`fusion.group` on tensors -> `fusion.group` on memrefs (no results).

The group's ops are bufferized into the new group's body by the same rules as any block
(`FunctionBuffers.lower_block`), so what they need (fresh buffers, copies of inits, checks)
lands inside it. Each result gets its buffer before the group, as a `graph.if` result does:
the buffer planned for it (an output, the buffer of the op that overwrites it next), else a
fresh `memory.alloc` sized from the yielded value's init chain (a `tensor.empty`'s sizes, or
the buffer of an init from above); the member making the yielded value computes it straight
into that buffer (destination passing), and a yield of anything else copies.

An intermediate only members read gets its buffer inside the group (allocated and freed
there, as a branch's temporaries are), which is what lets `lower-linalg-to-loop` keep it in
registers or shrink it to one point's slice.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.dialects.fusion import GroupOp, YieldOp
from irkit.dialects.linalg import StructuredOp
from irkit.dialects.memory import CopyOp
from irkit.dialects.tensor import EmptyOp
from irkit.passes.bufferization.buffers import BufferizeError, buffer_type
from irkit.passes.bufferization.function import Bufferization, bufferizes


@bufferizes("fusion.group")
def bufferize_group(bz: Bufferization, op: GroupOp) -> None:
    op.inline_captures()
    term = op.body.last
    dests: list[Value] = []
    for r, v in zip(op.results, term.operands):
        planned = bz.planned(r)
        if planned is not None:
            bz.out_for.setdefault(r, planned)
            buf = planned
        else:
            buf = bz.temp(buffer_type(r.type, op), _sizes(bz, v, op))
            bz.owned[r] = buf
        bz.define(r, buf)
        dests.append(buf)
        if not isinstance(v, BlockArgument) and v.owner.parent is op.body and \
                v not in bz.out_for:
            bz.out_for[v] = buf
    new = GroupOp.build(result_types=[], regions=1, location=op.location,
                        kind=op.kind, outer_dims=op.outer_dims)
    block = Block([])
    new.regions[0].add_block(block)

    def finish(y: Operation, frees: list[Value]) -> None:
        for v, d in zip(y.operands, dests):
            src = bz.buffer(v)
            if src is not d:
                bz.b.create(CopyOp, src, d)
        bz.release(frees)
        bz.b.create(YieldOp, [], result_types=[])

    builder = Builder.at_end(block)
    builder.location = bz.b.location
    bz.lower_block(op.body, builder, YieldOp.name, finish)
    bz.b.insert(new)


def _sizes(bz: Bufferization, v: Value, group: GroupOp) -> list[Value]:
    """The sizes (index values before the group) of the value `v` the group yields: from its
    init chain through the members, down to a `tensor.empty` or a value from above."""
    while not isinstance(v, BlockArgument) and v.owner.parent is group.body:
        owner = v.owner
        if isinstance(owner, EmptyOp):
            return _empty_sizes(bz, owner)
        if not isinstance(owner, StructuredOp):
            break
        v = owner.outputs[v.index]
    if not isinstance(v, BlockArgument) and v.owner.parent is group.body:
        raise BufferizeError(f"cannot size the buffer of a value '{v.owner.name}' makes in a "
                             "fusion.group", group.location)
    return bz.sizes_of(v)


def _empty_sizes(bz: Bufferization, empty: EmptyOp) -> list[Value]:
    dynamic = iter(bz.values.get(s, s) for s in empty.dynamic_sizes)
    return [bz.index(d) if d is not None else next(dynamic) for d in empty.result.type.shape]
