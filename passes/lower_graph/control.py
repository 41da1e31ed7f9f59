"""Lowerings of graph/control.py's conditionals: the structured `graph.if` becomes a
`loop.if`; the dataflow `graph.switch` and `graph.merge` are located errors that name the
fix.

**graph.if.** The predicate, a 0-d i1 tensor, is loaded from its buffer (`memory.load`) and
is the condition of a `loop.if`; each region's ops are lowered into the corresponding branch
by the same rules (`FunctionLowering.lower_block`, so nested ifs recurse), and only the
taken branch runs: an assign inside a branch is a copy into the variable's buffer made only
when that branch is taken. Each result gets its buffer in one of two ways:

- *before the `loop.if`*, when it is known there: the function's output buffer when the
  result is returned (destination passing, as for any op), or a fresh `memory.alloc` when
  its type is static. Each branch writes it: the value a branch yields is computed straight
  into it when an op of that branch makes it (the branch plans it as its destination, the
  way the function plans its returned values), else (a value from above, an argument, a
  variable's buffer, one yielded twice) the yield is a `memory.copy` into it;
- *by the branch*, when a size is `?` and the result is not returned: the sizes are only
  known once a branch has run (the two branches may even disagree), so the `loop.if` yields
  a memref. A branch yields the fresh buffer its value was computed in, handing its
  ownership to the `loop.if` (it is not freed in the branch), or else a fresh copy; the
  result is freed after its last use like any temporary.

Buffers made inside a branch are freed inside it; buffers from above that a branch reads
live until after the whole `loop.if` (`core`'s liveness counts a nested use at the op that
holds it).

**graph.switch / graph.merge.** A switch/merge pair means "compute only along the live
edge": deadness flows through the dataflow graph, and a value is dead or alive per run, not
per element, so there is no loop nest that computes it. The structured form of the same
conditional is `graph.if`, which `graph-raise-control-flow` rebuilds from switch/merge;
running that pass first is the fix. It is not called from here: it rewrites the whole
function (it moves ops into regions), while a lowering rule runs in the middle of a walk
over the old block, which it must not change under the walk.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.dialects.loop import IfOp as LoopIfOp, YieldOp as LoopYieldOp
from irkit.dialects.memory import CopyOp, LoadOp
from irkit.passes.lower_graph.core import (
    FunctionLowering, LoweringError, buffer_type, lowers,
)


@lowers("graph.if")
def lower_if(lw: FunctionLowering, op: Operation) -> None:
    cond = lw.b.create(LoadOp, lw.buffer(op.operands[0]), []).results[0]
    # dests[i]: result i's buffer, made before the loop.if; None: the loop.if yields one
    dests: list[Value | None] = []
    for r in op.results:
        t = buffer_type(r.type, op)
        out = lw.out_for.get(r)
        if out is not None:
            lw.define(r, out)
            dests.append(out)
        elif all(d is not None for d in t.shape):
            buf = lw.temp(t, [lw.index(d) for d in t.shape])
            lw.owned[r] = buf
            lw.define(r, buf)
            dests.append(buf)
        else:
            dests.append(None)
    yielded_types = [buffer_type(r.type, op) for r, d in zip(op.results, dests) if d is None]
    new = LoopIfOp.build(cond, result_types=yielded_types, regions=2, location=op.location)
    for old_region, new_region in zip(op.regions, new.regions):
        if not old_region.blocks:
            continue
        block = Block([])
        new_region.add_block(block)
        _lower_branch(lw, old_region.blocks[0], block, dests)
    lw.b.insert(new)
    k = 0
    for r, d in zip(op.results, dests):
        if d is None:
            lw.define(r, new.results[k])
            lw.owned[r] = new.results[k]
            k += 1


def _lower_branch(lw: FunctionLowering, old: Block, block: Block,
                  dests: list[Value | None]) -> None:
    """Lower the branch `old` into `block`, its yield writing or yielding the results."""
    term = old.terminator
    if term is None or term.name != "graph.yield":
        raise LoweringError("internal error: a graph.if branch without graph.yield",
                            old.parent_op.location)
    # Destination passing inside the branch: a value an op of the branch makes and yields
    # into a buffer known before the loop.if is computed straight into it.
    for v, d in zip(term.operands, dests):
        if d is not None and not isinstance(v, BlockArgument) and v.owner.parent is old \
                and v not in lw.out_for:
            lw.out_for[v] = d

    def finish(y: Operation, frees: list[Value]) -> None:
        b = lw.b
        yielded: list[Value] = []
        handed: set[Value] = set()
        for v, d in zip(y.operands, dests):
            src = lw.buffer(v)
            if d is not None:
                if src is not d:
                    b.create(CopyOp, src, d)
            elif lw.owned.get(v) is src and v not in handed and \
                    not isinstance(v, BlockArgument) and v.owner.parent is old:
                lw.owned.pop(v)             # the loop.if's result now; not freed here
                handed.add(v)
                yielded.append(src)
            else:
                buf = lw.temp(src.type, lw.sizes(src))
                b.create(CopyOp, src, buf)
                yielded.append(buf)
        lw._free(frees)
        b.create(LoopYieldOp, yielded, result_types=[])

    builder = Builder.at_end(block)
    builder.location = lw.b.location
    lw.lower_block(old, builder, "graph.yield", finish)


@lowers("graph.switch", "graph.merge")
def lower_dataflow_conditional(lw: FunctionLowering, op: Operation) -> None:
    raise LoweringError(
        f"cannot lower '{op.name}': dataflow deadness has no loop form; run "
        "graph-raise-control-flow first (it rebuilds switch/merge as graph.if)",
        op.location)
