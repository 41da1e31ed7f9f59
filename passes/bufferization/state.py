"""The graph ops that stay at the structured level: variables and run-time checks.

`graph.read` is the variable's buffer itself, no copy, unless the variable is assigned while
the value read is still needed: by a later op, the return, or a view of it (a slice of a
weight read after the assign still means the old weight). The read then copies the buffer
first (into its output when it is returned). This is `lower-graph-to-loop`'s rule
(`passes/lower_graph/variables.py`) with views counted as uses; `graph.assign` keeps that
module's rule (a `memory.copy` into the variable, guarded by the status after a check).

`graph.check %ok, %value, %bound` at function level is a `memory.check` into the function's
status buffer with the next code (the body of a structured op has its own rule,
`structured.BODY_RULES`), exactly as `FunctionLowering.check` writes the loop rules' checks,
so the runtime and the C API find the message and the location of the code they read.
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.dialects.memory import CopyOp
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


@bufferizes("graph.check")
def check(bz: Bufferization, op: Operation) -> None:
    v = bz.values
    bz.record_check(v.get(op.ok, op.ok), v.get(op.value, op.value), v.get(op.bound, op.bound),
                  op.message.value, op.location, bz.b)
