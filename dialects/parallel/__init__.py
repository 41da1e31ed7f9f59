"""The `parallel` dialect: a training step partitioned across the ranks of a grid (issue 16).

The model is MLIR's `shard` dialect with OneFlow's SBP / PyTorch DTensor's placements:

- `parallel.grid @g(shape = [2, 2], axes = ["data", "model"])`: ranks with named axes;
- `#parallel.sharding<@g, [split(0), replicate]>`: per grid axis, how a tensor lies on it
  (`split(dim)`, `replicate`, `partial(sum)`); `Sharding` is its Python form;
- `%y = parallel.shard %x to #parallel.sharding<...> : T`: an annotation (identity);
- collectives on tensors over a group of grid axes: `all_reduce` (partial -> replicate),
  `all_gather` (split -> replicate), `reduce_scatter` (partial -> split), `all_to_all`
  (split(i) -> split(j)), `all_slice` (replicate -> split, local), `broadcast`, and
  `send`/`recv` for pipeline stages; `axis_index` is the rank's index along axes.

The parts: `sharding` (grids, placements, local types, cutting and assembling arrays),
`comm` (`Communicator`: the collectives' numpy meaning over a runtime's primitives), `ops`,
`spmd` (`run_spmd`, `SimulatedRanks`: all ranks in one process, on threads).

**How a program gets partitioned** (the passes, in `irkit.passes`):

1. annotate: `parallel.shard` on function arguments and on any value; a variable's
   placement in the model module's `parallel.variables` dictionary attribute
   (`{w1 = #parallel.sharding<@g, [split(1)]>}`) or by a `parallel.shard` right on a
   `graph.read` of it; variables not named there are replicated (data parallel);
2. `parallel-propagate` gives every value of every function of a module holding a
   `parallel.grid` a sharding (a `parallel.shardings` array attribute on each op, one per
   result; `parallel.sharding` on arguments and results), from the annotations and the ops'
   sharding rules (`irkit.sharding_rules`, declared on the graph ops' classes);
3. `parallel-partition` rewrites each such function into the one SPMD program every rank
   runs: local types, the collectives the conversions need, `graph.variable`s given their
   local types, the function marked `parallel.grid = @g` and its arguments and results with
   their `parallel.sharding`; `parallel-simplify` tidies the collectives afterwards.

Run it after autodiff: gradients are ordinary graph ops, so data parallelism (x split on
`data`, parameters replicated) gets its gradient all_reduce from the rules.

**Pipelines**: `parallel-pipeline{micro-batches=M}` runs first on a function whose ops carry
`parallel.stage` marks (the DSL's `stage N { }` blocks) in a module with a one-axis grid: it
cuts the function into one program per stage (`@f_stage0`, ...: the module's
`parallel.stages`), values crossing stages as `send`/`recv`, the batch into M micro-batches
(GPipe), each variable on one stage (`parallel.variable_stages`); `run_spmd` gives rank r
its stage's program (`rank_function`).

**For a runtime** (MPI, or the simulation here): each rank gets the pieces of the inputs
its argument shardings say (`local_piece`), its pieces of the variables' initial values
(`global_type` of the variable's local type, then `local_piece`), calls the same function
with a `Communicator` in the interpreter state (`"parallel.communicator"`) or between
compiled kernels, and assembles results by their result shardings (`assemble`).
"""

from irkit.dialects.parallel.sharding import *  # noqa: F401,F403
from irkit.dialects.parallel.comm import *  # noqa: F401,F403
from irkit.dialects.parallel.ops import *  # noqa: F401,F403
from irkit.dialects.parallel.spmd import *  # noqa: F401,F403
