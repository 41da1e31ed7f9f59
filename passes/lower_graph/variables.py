"""Lowerings of `graph.read` and `graph.assign` (graph/base.py): a variable is a memref argument
of the lowered function (see `core` for the calling convention), which a runtime binds to
the variable's storage, so that an assign is seen by the next call.

A read is the variable's buffer itself, no copy, unless the variable is assigned while the
value read is still needed: the graph program's read then means the *old* value, and the
buffer is about to change under it, so the read copies it first (into its output buffer
when it is returned, else into a fresh one). An assign is a `memory.copy` into the
variable's buffer (nothing, when the value is that buffer already).

A call that fails a run-time check (`lw.check`: a label out of range in a training step)
must leave the variables as they were, as the interpreter does when it raises before the
assign: an assign that comes after a check copies only while the status says no error
(`status[0] == 0`). Assigns are the only writes to a variable's buffer, so that is enough.
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.dialects.memory import CopyOp
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import load
from irkit.passes.lower_graph.scalar import Scalars
from irkit.types import I64


def variable_name(op: Operation) -> str:
    return op.properties["variable"].root


def _overwritten_while_live(lw: FunctionLowering, read: Operation, name: str) -> bool:
    """Whether an assign to `name` comes after `read` and before the last op that uses the
    value read (the return counts as a use). An assign of the value read itself writes it
    back into its own buffer, which changes nothing."""
    pos = lw.position
    here = pos[read]
    value = read.results[0]
    last = max((pos[u] for u in value.users if u in pos), default=here)
    return any(here < pos[op] <= last and op.operands[0] is not value
               for op in lw.assigns_to(name))


@lowers("graph.read")
def lower_read(lw: FunctionLowering, op: Operation) -> None:
    name = variable_name(op)
    var = lw.var_buffers[name]
    result = op.results[0]
    if _overwritten_while_live(lw, op, name):
        snapshot = lw.dest(result, lw.sizes(var))
        lw.b.create(CopyOp, var, snapshot)
    else:
        lw.define(result, var)


@lowers("graph.assign")
def lower_assign(lw: FunctionLowering, op: Operation) -> None:
    var = lw.var_buffers[variable_name(op)]
    src = lw.buffer(op.operands[0])
    if src is var:
        return
    if lw.status is None:                   # no check before it: nothing can have failed
        lw.b.create(CopyOp, src, var)
        return
    s = Scalars(lw, lw.b)
    code = load(lw.b, lw.status, [lw.index(0)])
    lw.when(s.cmp("eq", code, lw.constant(0, I64)),
            lambda b: [b.create(CopyOp, src, var)] and None)
