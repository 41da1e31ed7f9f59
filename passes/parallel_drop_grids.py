"""parallel-drop-grids: the last step of lowering a partitioned program to MPI.

`bufferize` turns every collective of the `parallel` dialect into an `mpi` op on buffers
(`irkit.passes.bufferization.collectives`), which names no grid: the compiled code runs on
MPI's world, one rank per grid point. What is left of the dialect is the `parallel.grid`
symbols, which the LLVM backend (functions only at module level) cannot translate, and the
`parallel.sharding` attributes on arguments and results, which say which piece of each
input and output a rank holds and stay for the runtime.

Algorithm:
1. any op of the `parallel` dialect other than a grid, left in a function, is an error
   located at it (a collective bufferize had no rule for would have stopped there first);
2. erase every `parallel.grid` and the functions' `parallel.grid` references to it; record
   each erased grid's rank count on its module as `parallel.ranks`.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.diagnostics import IRError
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.types import I64
from irkit.dialects.parallel import GridOp


@register_pass
class ParallelDropGrids(Pass):
    """Drop the grids of a bufferized partitioned module (see the module docstring).

    Algorithm: check that no op of the `parallel` dialect but grids is left; erase the
    grids and the functions' references to them, recording the rank count as the module's
    `parallel.ranks`.
    """

    name = "parallel-drop-grids"

    def run(self, op: Operation) -> None:
        for o in op.walk():
            if o.name.startswith("parallel.") and not isinstance(o, GridOp):
                raise IRError(f"'{o.name}' is left after bufferize: compiled code runs the "
                              f"collectives bufferize turns into mpi ops only", o.location)
        for fn in op.walk():
            if fn.name == "func.func":
                fn.attributes.pop("parallel.grid", None)
        for grid in [o for o in op.walk() if isinstance(o, GridOp)]:
            module = grid.parent_op
            module.attributes["parallel.ranks"] = IntegerAttr(grid.info().size, I64)
            grid.erase()
