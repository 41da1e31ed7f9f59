"""Lowerings of graph_control.py's dataflow conditionals: `graph.switch` and `graph.merge`
are located errors that name the fix.

A switch/merge pair means "compute only along the live edge": deadness flows through the
dataflow graph, and a value is dead or alive per run, not per element, so there is no loop
nest that computes it. The structured form of the same conditional is `graph.if`, which
`graph-raise-control-flow` rebuilds from switch/merge; running that pass first is the fix.
It is not called from here: it rewrites the whole function (it moves ops into regions),
while a lowering rule runs in the middle of a walk over the old block, which it must not
change under the walk.

`graph.if` itself (-> `loop.if` on the predicate loaded from its 0-d buffer, each region
lowered into its branch, results written to buffers allocated before the `loop.if`) is not
lowered yet: `core.FunctionLowering._last_uses` rejects every op with regions over tensors
before any rule is consulted, so a rule registered here would never run.
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.passes.lower_graph.core import FunctionLowering, LoweringError, lowers


@lowers("graph.switch", "graph.merge")
def lower_dataflow_conditional(lw: FunctionLowering, op: Operation) -> None:
    raise LoweringError(
        f"cannot lower '{op.name}': dataflow deadness has no loop form; run "
        "graph-raise-control-flow first (it rebuilds switch/merge as graph.if)",
        op.location)
