"""lower-graph-to-loop: graph functions (tensors, value semantics) to loop nests over buffers
(`loop`, `memory`, `arith`, `math`) in one step, as the named pipeline of the three passes
that make the middle of the ladder:

    lower-graph-to-linalg{full=true}, bufferize, lower-linalg-to-loop

It is what MLIR calls a named pass pipeline (`PassPipelineRegistration`): a name for a
sequence of passes, with options that reach the passes they belong to. It keeps the name
`irkit-opt -p lower-graph-to-loop` has always had for "graph functions to loops", now that
the work is done level by level; the compile pipeline (`passes/pipeline.py`) spells the
three passes in two rows instead, so that `--emit=linalg` can stop between them.
docs/lowering.md describes the result (the calling convention, the checks, the variables).
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, PassManager, register_pass
from irkit.passes.bufferize import Bufferize
from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg
from irkit.passes.lower_linalg_to_loop import LowerLinalgToLoop


@register_pass
class LowerGraphToLoop(Pass):
    """Lower graph functions to loop nests over memrefs, outputs written in place: the
    pipeline `lower-graph-to-linalg{full=true},bufferize,lower-linalg-to-loop`.

    Algorithm:
      1. `lower-graph-to-linalg{full=true}`: every graph op becomes linalg and tensor ops on
         tensors, except the variables, `graph.if`, `graph.check` and `graph.scatter_add`;
         any other graph op left is an error naming it.
      2. `bufferize`: tensors to memrefs in destination-passing style (the calling
         convention of docs/lowering.md: an output memref per tensor result, a memref per
         variable, a status buffer for run-time errors), in place where safe; the
         `graph.variable` declarations become the module's `graph.variables` attribute;
         `graph.scatter_add` becomes loops directly. Afterwards no tensor is left.
      3. `lower-linalg-to-loop`: every structured op its `loop.parallel` / `loop.for` nest.
      The module is verified after each step (a step that breaks the IR is named).

    Options, forwarded: `parallel=false` makes every loop a `loop.for` (both passes that
    write loops); `max-constant-elements`, `keep-variables` and `output-sizes` are
    `bufferize`'s. `--print-ir-after-all` shows the module after the whole pipeline; spell
    the three passes to see each level.
    """

    name = "lower-graph-to-loop"
    anchor = "builtin.module"
    parallel: bool = True
    max_constant_elements: int = 256
    keep_variables: bool = False
    output_sizes: bool = False

    def stages(self) -> list[Pass]:
        """The passes this one runs, in order, with the options forwarded."""
        return [
            LowerGraphToLinalg(full=True),
            Bufferize(parallel=self.parallel, max_constant_elements=self.max_constant_elements,
                      keep_variables=self.keep_variables, output_sizes=self.output_sizes),
            LowerLinalgToLoop(parallel=self.parallel),
        ]

    def run(self, op: Operation) -> None:
        pm = PassManager(self.anchor)
        for p in self.stages():
            pm.add(p)
        pm.run(op)
