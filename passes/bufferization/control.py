"""The structured conditional: `graph.if` becomes a `loop.if`. (The dataflow `graph.switch`
and `graph.merge` never get here: `lower-graph-to-linalg{full=true}` stops at them and names
the fix, `graph-raise-control-flow`.)

The predicate, a 0-d i1 tensor, is loaded from its buffer (`memory.load`) and is the
condition of a `loop.if`; each region's ops are bufferized into the corresponding branch by
the same rules (`FunctionBuffers.lower_block`, so nested ifs recurse), and only the taken
branch runs: an assign inside a branch is a copy into the variable's buffer made only when
that branch is taken. Each result gets its buffer in one of two ways:

- *before the `loop.if`*, when it is known there: the buffer planned for the result (its
  output when it is returned, or the buffer of the op that overwrites it next, see
  `Bufferization.planned`), or a fresh `memory.alloc` when its type is static. Each branch
  writes it: the value a branch yields is computed straight into it when an op of that
  branch makes it (the branch plans it as its destination, the way the function plans its
  returned values), else (a value from above, an argument, a variable's buffer, one yielded
  twice) the yield is a `memory.copy` into it;
- *by the branch*, when a size is `?` and nothing is planned: the sizes are only known once
  a branch has run (the two branches may even disagree), so the `loop.if` yields a memref.
  A branch yields the fresh buffer its value was computed in, handing its ownership to the
  `loop.if` (it is not freed in the branch), or else a fresh copy; the result is freed
  after its last use like any temporary.

Buffers made inside a branch are freed inside it; buffers from above that a branch reads
live until after the whole `loop.if` (a nested use counts at the op that holds it).
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.dialects.graph import IfOp
from irkit.dialects.loop import IfOp as LoopIfOp, YieldOp as LoopYieldOp
from irkit.dialects.memory import CopyOp, LoadOp
from irkit.passes.bufferization.buffers import BufferizeError, buffer_type
from irkit.passes.bufferization.function import Bufferization, bufferizes


@bufferizes("graph.if")
def bufferize_if(bz: Bufferization, op: IfOp) -> None:
    cond = bz.b.create(LoadOp, bz.buffer(op.pred), []).results[0]
    # dests[i]: result i's buffer, made before the loop.if; None: the loop.if yields one
    dests: list[Value | None] = []
    for r in op.outs:
        t = buffer_type(r.type, op)
        planned = bz.planned(r)
        if planned is not None:
            bz.out_for.setdefault(r, planned)
            bz.define(r, planned)
            dests.append(planned)
        elif all(d is not None for d in t.shape):
            buf = bz.temp(t, [bz.index(d) for d in t.shape])
            bz.owned[r] = buf
            bz.define(r, buf)
            dests.append(buf)
        else:
            dests.append(None)
    yielded_types = [buffer_type(r.type, op) for r, d in zip(op.outs, dests) if d is None]
    new = LoopIfOp.build(cond, result_types=yielded_types, regions=2, location=op.location)
    for old_region, new_region in zip(op.regions, new.regions):
        if not old_region.blocks:
            continue
        block = Block([])
        new_region.add_block(block)
        _branch(bz, old_region.blocks[0], block, dests)
    bz.b.insert(new)
    k = 0
    for r, d in zip(op.outs, dests):
        if d is None:
            bz.define(r, new.results[k])
            bz.owned[r] = new.results[k]
            k += 1


def _branch(bz: Bufferization, old: Block, block: Block, dests: list[Value | None]) -> None:
    """Bufferize the branch `old` into `block`, its yield writing or yielding the results."""
    term = old.terminator
    if term is None or term.name != "graph.yield":
        raise BufferizeError("internal error: a graph.if branch without graph.yield",
                             old.parent_op.location)
    # Destination passing inside the branch: a value an op of the branch makes and yields
    # into a buffer known before the loop.if is computed straight into it.
    for v, d in zip(term.operands, dests):
        if d is not None and not isinstance(v, BlockArgument) and v.owner.parent is old \
                and v not in bz.out_for:
            bz.out_for[v] = d

    def finish(y: Operation, frees: list[Value]) -> None:
        b = bz.b
        yielded: list[Value] = []
        handed: set[Value] = set()
        for v, d in zip(y.operands, dests):
            src = bz.buffer(v)
            if d is not None:
                if src is not d:
                    b.create(CopyOp, src, d)
            elif bz.owned.get(v) is src and v not in handed and \
                    not isinstance(v, BlockArgument) and v.owner.parent is old:
                bz.owned.pop(v)             # the loop.if's result now; not freed here
                handed.add(v)
                yielded.append(src)
            else:
                buf = bz.temp(src.type, bz.sizes(src))
                b.create(CopyOp, src, buf)
                yielded.append(buf)
        bz.release(frees)
        b.create(LoopYieldOp, yielded, result_types=[])

    builder = Builder.at_end(block)
    builder.location = bz.b.location
    bz.lower_block(old, builder, "graph.yield", finish)

