"""parallel-data: data parallelism for a model written without annotations (PyTorch's
DistributedDataParallel, as a pass): `irkit-compile --data-parallel N`,
`load_model(..., data_parallel=N)`.

Every input's first dimension (its batch) is split over a one-axis grid of `ranks` ranks,
and every variable is replicated, so each rank is given its own slice of the batch and the
variables stay identical on all ranks. Nothing else is said: `parallel-propagate` and
`parallel-partition`, run after it, find the rest from the ops' sharding rules. Run after
autodiff, the gradients of the replicated parameters come out of the rules as partial sums
and get their `all_reduce`, the loss (a mean over the split batch) its scaling and
`all_reduce`, and the optimizer's update then runs on the summed gradients, the same on
every rank.

What each rank gets back: a result whose first dimension is dynamic (`?`: the batch, as the
DSL's symbolic `B` is) stays split, so a rank receives its own rows (its slice of the
logits), as a DDP replica does; any other result (the loss, a gradient, a statically
shaped output) is whole on every rank.

Algorithm (per module holding function definitions and no `parallel.grid` of its own; a
module with a grid was annotated by hand and is left as it is):
1. insert `parallel.grid @data_parallel(shape = [ranks], axes = ["data"])` first;
2. give each function argument of rank >= 1 without a `parallel.sharding` the placement
   `split(0)`, and each result of rank >= 1 whose first size is `?` the same.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr, DictionaryAttr
from irkit.builder import Builder
from irkit.ir import Operation
from irkit.pass_manager import Pass, PassPipelineError, register_pass
from irkit.types import RankedTensorType
from irkit.dialects.parallel import GridOp, Sharding, Split

#: the grid's symbol and axis name
GRID = "data_parallel"
AXIS = "data"


def _annotate(fn: Operation, attrs_name: str, types, wanted) -> None:
    """Add `parallel.sharding = split(0)` to the argument or result attributes (`attrs_name`)
    of `fn` at the positions whose type `wanted` accepts, unless they have one."""
    old = fn.properties.get(attrs_name)
    dicts = [dict(a.value) for a in old.value] if old is not None else [{} for _ in types]
    split = Sharding(GRID, (Split(0),)).to_attr()
    for d, t in zip(dicts, types):
        if isinstance(t, RankedTensorType) and t.rank >= 1 and wanted(t):
            d.setdefault("parallel.sharding", split)
    fn.properties[attrs_name] = ArrayAttr([DictionaryAttr(d) for d in dicts])


def _functions(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].blocks[0].ops
            if op.name == "func.func" and op.regions[0].blocks]


@register_pass
class ParallelData(Pass):
    """Split every input's batch over `ranks` ranks, variables replicated (see the module
    docstring).

    Algorithm:
      1. find the modules that hold function definitions and no `parallel.grid`;
      2. insert the one-axis grid `@data_parallel` of `ranks` ranks in each;
      3. annotate every function's ranked arguments, and its results with a dynamic first
         size, with `split(0)` on that grid (an annotation already there wins).
    """

    name = "parallel-data"
    ranks: int = 2

    def run(self, op: Operation) -> None:
        if self.ranks < 1:
            raise PassPipelineError(f"'parallel-data' option 'ranks': expected a positive "
                                    f"number of ranks, got {self.ranks}")
        for module in [m for m in op.walk() if m.name == "builtin.module"]:
            block = module.regions[0].blocks[0]
            if any(isinstance(o, GridOp) for o in block.ops) or not _functions(module):
                continue
            Builder.before(block.first).insert(
                GridOp.create(GRID, [self.ranks], [AXIS], location=module.location))
            for fn in _functions(module):
                ftype = fn.properties["function_type"].value
                _annotate(fn, "arg_attrs", ftype.inputs, lambda t: True)
                _annotate(fn, "res_attrs", ftype.results, lambda t: t.shape[0] is None)
