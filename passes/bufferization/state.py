"""The graph ops that stay at the structured level: variables and run-time checks.

A variable is a memref argument of the bufferized function (the calling convention of
`buffers`), which a runtime binds to the variable's storage, so that an assign is seen by
the next call.

`graph.read` is the variable's buffer itself, no copy, unless the variable is assigned while
the value read is still needed: by a later op, the return, or a view of it (a slice of a
weight read after the assign still means the old weight). The read then copies the buffer
first (into its output when it is returned).

`graph.assign` is a `memory.copy` into the variable's buffer (nothing when the value is that
buffer already). A call that fails a run-time check (a label out of range in a training
step) must leave the variables as they were, as the interpreter does when it raises before
the assign: an assign that comes after a check copies only while the status says no error
(`status[0] == 0`). Assigns are the only writes to a variable's buffer, so that is enough.

`graph.check %ok, %value, %bound` at function level is a `memory.check` into the function's
status buffer with the next code (the body of a structured op has its own rule,
`structured.BODY_RULES`), as `FunctionBuffers.record_check` writes every check, so the runtime
and the C API find the message and the location of the code they read.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation
from irkit.types import I64
from irkit.dialects.memory import CopyOp, LoadOp
from irkit.passes.bufferization import analysis
from irkit.passes.bufferization.function import Bufferization, bufferizes


@bufferizes("graph.read")
def read(bz: Bufferization, op: Operation) -> None:
    name = op.variable.root
    var = bz.var_buffers[name]
    value = op.result
    here = bz.position[op]
    last = analysis.last_position(value, bz.position)
    if any(here < bz.position[a] <= last and a.value is not value
           for a in bz.assigns_to(name)):
        snapshot = bz.dest(value, bz.sizes(var))
        bz.b.create(CopyOp, var, snapshot)
    else:
        bz.define(value, var)


@bufferizes("graph.assign")
def assign(bz: Bufferization, op: Operation) -> None:
    var = bz.var_buffers[op.variable.root]
    src = bz.buffer(op.value)
    if src is var:
        return
    if bz.status is None:                   # no check before it: nothing can have failed
        bz.b.create(CopyOp, src, var)
        return
    code = bz.b.create(LoadOp, bz.status, [bz.index(0)]).results[0]

    def copy(b: Builder) -> None:
        b.create(CopyOp, src, var)

    bz.when(bz.scalars().cmp("eq", code, bz.constant(0, I64)), copy)


@bufferizes("graph.check")
def check(bz: Bufferization, op: Operation) -> None:
    v = bz.values
    bz.record_check(v.get(op.ok, op.ok), v.get(op.value, op.value), v.get(op.bound, op.bound),
                  op.message.value, op.location, bz.b)
