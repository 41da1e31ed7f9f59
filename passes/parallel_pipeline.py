"""parallel-pipeline: pipeline parallelism (GPipe): a function split by its `parallel.stage`
marks into one program per stage, each run by one rank of a one-axis grid, the batch cut
into micro-batches.

`stage N { ... }` blocks of the DSL mark the forward ops they make (`parallel.stage = N`).
The pass runs after autodiff, on every function holding such marks in a module whose grid
has one axis (the pipe: rank r runs stage r), and rewrites each into stage functions
`@<name>_stage<r>` of the original signature, recorded in the module's `parallel.stages`
(`SimulatedRanks` and the MPI runtime call rank r's).

**Micro-batches** (M > 1). A micro-batched step is data parallelism in time: the batch split
over a virtual axis of M "ranks" that run one after another. So the function is partitioned
as data parallel over a scratch grid `micro` of M (`parallel-propagate` and
`parallel-partition`: every argument with a `?` first size split along it, the variables
replicated), and the SPMD program is then unrolled: an op whose operands differ per micro-
batch is cloned M times (`parallel.micro = m`), any other once; the arguments are cut by
`graph.split`, and the collectives become local ops: all_reduce the sum of the M copies (the
gradient accumulation: a parameter's gradient is a partial sum over the batch), all_gather
their concatenation, all_slice a `graph.split`. The rules make the means right: a mean
over a split batch is the mean of equal micro-batch means (cross_entropy's batch factor is
scaled by 1/M, `graph.dim` of a split batch by M), and the optimizer's update, which reads
the accumulated gradients, runs once.

The virtual axis has no links, so the propagation prices its conversions by memory, not by
messages (`accumulation_cost`): joining micro-batches (all_gather, all_to_all: a concat of
every micro-batch's piece) keeps all of them live at once and copies them, which is what
micro-batching exists to avoid; summing partial values (all_reduce) keeps one running sum;
cutting a whole value into micro-batches is a view. So a weight's gradient `x^T g` is
accumulated, one matmul per micro-batch summed (the batch is the reduced factor), even
where the network cost would gather the batch or exchange blocks of `x^T` instead.

**Stages.** Every op gets one stage (sound for any choice: a value used on another stage
than its producer's is sent there), by these rules in order:

1. an op marked by a stage block has its stage;
2. a pure op whose operands are all arguments or such ops (constants, the arguments' micro-
   batches, a transpose of an input) is *replicable*: each stage that uses it computes it;
3. an unmarked op whose location is that of marked ops of one stage has that stage: autodiff
   gives every backward op the location of the forward op it differentiates, so a layer's
   backward runs on the layer's stage (a location shared by several stages, as a function
   called from two stages, says nothing);
4. an op with operands of known stages takes the latest of them (program order: a value
   moves forward through the pipe, never back, unless the op consumes it there);
5. what is left (variable reads, the optimizer's scalar state) takes the earliest stage of
   its users; finally a variable lives on one stage, the earliest of its reads', where all
   its reads and assigns go (`parallel.variable_stages`).

**Schedule** (GPipe: all forwards, then all backwards). One global order of the ops is chosen
and each stage's program is its ops in that order, so the point-to-point messages of every
pair of stages come in the same order on both sides and a blocking send never waits on a
cycle. The order is a topological sort that picks, among the ready ops, the smallest key:
ops run once first (as soon as ready), then the forward ops of micro-batch m (the marked ops
and what they read) in micro-batch order, then the backward ones in reverse micro-batch
order. A value crossing stages is sent right after its producer (`parallel.send` on the
producer's stage, `parallel.recv` on the consumer's, `offset` the stage distance); each
result is sent from the stage that computes it to every other one at the end, so every
rank returns every result.
"""

from __future__ import annotations

import heapq

from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, SymbolRefAttr
from irkit.builtin import ModuleOp
from irkit.diagnostics import IRError
from irkit.ir import BlockArgument, Operation, Value
from irkit.pass_manager import Pass, PassPipelineError, register_pass
from irkit.rewrite import is_pure
from irkit.types import I64, RankedTensorType
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.dialects.graph import AddOp, AssignOp, ConcatOp, ReadOp, SplitOp
from irkit.dialects.parallel import (
    STAGES_ATTR, VARIABLE_STAGES_ATTR, AllGatherOp, AllReduceOp, AllSliceOp, AllToAllOp,
    PARTIAL, REPLICATE, GridInfo, GridOp, RecvOp, ReduceScatterOp, SendOp, ShardOp, Sharding,
    Split, boundary_sharding,
)
from irkit.passes.parallel_partition import Partitioner
from irkit.passes.parallel_propagate import INFINITE, modules_with_grids, propagate

#: the attribute of the DSL's stage blocks, and the micro-batch index of an unrolled op
STAGE_ATTR = "parallel.stage"
MICRO_ATTR = "parallel.micro"
#: a pipelined module's micro-batch count
MICRO_BATCHES_ATTR = "parallel.micro_batches"


# ---------------------------------------------------------------------------------------------
# Micro-batches: data parallel over a virtual axis, unrolled
# ---------------------------------------------------------------------------------------------


def micro_batch(fn: FuncOp, m: int) -> None:
    """Rewrite `fn` (in place) into the same function run on `m` micro-batches (see the
    module docstring)."""
    scratch = ModuleOp.create_empty(location=fn.location)
    block = scratch.regions[0].blocks[0]
    block.append(GridOp.create("micro", [m], ["micro"], location=fn.location))
    spmd = block.append(fn.clone())
    ftype = fn.properties["function_type"].value
    split = Sharding("micro", (Split(0),)).to_attr()
    for key, types in (("arg_attrs", ftype.inputs), ("res_attrs", ftype.results)):
        old = spmd.properties.get(key)
        dicts = [dict(d.value) for d in old.value] if old is not None else [{} for _ in types]
        for d, t in zip(dicts, types):
            if isinstance(t, RankedTensorType) and t.rank and t.shape[0] is None:
                d["parallel.sharding"] = split
        if dicts:
            spmd.properties[key] = ArrayAttr([DictionaryAttr(d) for d in dicts])
    plan, assigned = propagate(scratch, cost=accumulation_cost)
    Partitioner(spmd, plan, assigned[spmd]).run()
    _Unroll(fn, spmd, plan.grid, m).run()


def accumulation_cost(src, dst, nbytes: int, k: int) -> float:
    """What converting a value of `nbytes` from `src` to `dst` costs on the micro-batch axis
    of `k` (`conversion_cost`'s signature; see the module docstring): the bytes held live
    (and copied, for a join) beyond one micro-batch's."""
    if dst is None or src == dst or k == 1:
        return 0
    if dst == PARTIAL:
        return INFINITE
    if src == REPLICATE:
        return 0                        # each micro-batch's slice: a view
    if src == PARTIAL:
        return nbytes                   # the running sum (then a slice of it)
    return 2 * nbytes                   # a join: every micro-batch's piece live, and copied


class _Unroll:
    """The SPMD program `spmd` over the virtual axis, written into `fn` as M copies."""

    def __init__(self, fn: FuncOp, spmd: FuncOp, grid, m: int) -> None:
        self.fn, self.spmd, self.grid, self.m = fn, spmd, grid, m
        self.copies: dict = {}          # value of spmd -> [one value per micro-batch]
        self.single: dict = {}          # value of spmd -> its one value

    def value(self, v: Value, i: int) -> Value:
        return self.copies[v][i] if v in self.copies else self.single[v]

    def insert(self, op: Operation) -> Operation:
        return self.block.append(op)

    def graph(self, cls, *operands, location, **props) -> Value:
        return self.insert(cls.create(*operands, location=location, **props)).results[0]

    def run(self) -> None:
        self.block = self.fn.regions[0].blocks[0]
        for op in reversed(list(self.block.ops)):
            op.erase()
        args = self.block.args
        for i, a in enumerate(self.spmd.regions[0].blocks[0].args):
            s = boundary_sharding(self.spmd, self.grid, "arg_attrs", i)
            if s.placements[0] == Split(0):
                cut = self.insert(SplitOp.create(args[i], [], location=self.fn.location,
                                                 axis=0, sections=self.m))
                self.copies[a] = list(cut.results)
            else:
                self.single[a] = args[i]
        for op in self.spmd.regions[0].blocks[0].ops:
            if isinstance(op, ReturnOp):
                self.insert(ReturnOp.build([self.result(i, v)
                                            for i, v in enumerate(op.operands)],
                                           result_types=[], location=op.location))
            elif type(op) in _COLLECTIVES:
                out = _COLLECTIVES[type(op)](self, op)
                (self.copies if isinstance(out, list) else self.single)[op.results[0]] = out
            elif any(v in self.copies for v in op.operands):
                for i in range(self.m):
                    mapping = {v: self.value(v, i) for v in op.operands}
                    new = self.insert(op.clone(mapping))
                    new.attributes[MICRO_ATTR] = IntegerAttr(i, I64)
                    for r, n in zip(op.results, new.results):
                        self.copies.setdefault(r, []).append(n)
            else:
                new = self.insert(op.clone({v: self.single[v] for v in op.operands}))
                self.single.update(zip(op.results, new.results))

    def result(self, i: int, v: Value) -> Value:
        s = boundary_sharding(self.spmd, self.grid, "res_attrs", i)
        if s.placements[0] == Split(0):
            return self.graph(ConcatOp, self.copies[v], location=v.owner.location, axis=0)
        return self.single[v]

    def total(self, op: Operation) -> Value:
        """The sum of the M copies of `op`'s operand (in micro-batch order)."""
        parts = self.copies[op.operand]
        acc = parts[0]
        for p in parts[1:]:
            acc = self.graph(AddOp, acc, p, location=op.location)
        return acc

    def cut(self, x: Value, dim: int, location) -> list[Value]:
        return list(self.insert(SplitOp.create(x, [], location=location, axis=dim,
                                               sections=self.m)).results)

    def all_slice(self, op: AllSliceOp) -> list[Value]:
        """Copy i is block i of the replicated operand: of its one value, or of its copy i
        where each micro-batch computed it (equal copies, as a size read from a micro-
        batch times M)."""
        x, dim = op.operand, op.int_prop("dim")
        if x in self.single:
            return self.cut(self.single[x], dim, op.location)
        return [self.cut(c, dim, op.location)[i] for i, c in enumerate(self.copies[x])]

    def all_to_all(self, op: AllToAllOp) -> list[Value]:
        """Copy i is the concatenation of block i of every copy (cut along split_dim)."""
        blocks = [self.cut(x, op.int_prop("split_dim"), op.location)
                  for x in self.copies[op.operand]]
        return [self.graph(ConcatOp, [b[i] for b in blocks], location=op.location,
                           axis=op.int_prop("concat_dim")) for i in range(self.m)]


_COLLECTIVES = {
    AllReduceOp: lambda u, op: u.total(op),
    AllGatherOp: lambda u, op: u.graph(ConcatOp, u.copies[op.operand], location=op.location,
                                       axis=op.int_prop("dim")),
    AllSliceOp: lambda u, op: u.all_slice(op),
    ReduceScatterOp: lambda u, op: u.cut(u.total(op), op.int_prop("dim"), op.location),
    AllToAllOp: lambda u, op: u.all_to_all(op),
}


# ---------------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------------


def _mark(op: Operation) -> int | None:
    a = op.attributes.get(STAGE_ATTR)
    return None if a is None else a.value


def replicable_ops(ops: list[Operation]) -> set:
    """Unmarked pure ops computed from arguments and constants only (rule 2)."""
    out: set = set()
    for op in ops:
        if _mark(op) is None and not op.regions and not isinstance(op, ReadOp) and \
                is_pure(op) and op.results and \
                all(isinstance(v, BlockArgument) or v.owner in out for v in op.operands):
            out.add(op)
    return out


def assign_stages(ops: list[Operation], replicable: set, owner: dict) -> dict:
    """op -> stage for every op of `ops` but the replicable ones and the terminator (rules
    1, 3, 4, 5 of the module docstring); `owner` (variable name -> stage) is kept where it
    has the variable (an earlier function decided) and completed otherwise."""
    stage = {op: _mark(op) for op in ops if _mark(op) is not None}
    by_location: dict = {}
    for op, s in stage.items():
        by_location.setdefault(op.location, set()).add(s)
    body = [op for op in ops if op not in replicable and not isinstance(op, ReturnOp)]
    for op in body:
        if op not in stage and len(by_location.get(op.location, ())) == 1:
            stage[op] = next(iter(by_location[op.location]))
    for op in body:
        known = [stage[v.owner] for v in op.operands if v.owner in stage]
        if op not in stage and known:
            stage[op] = max(known)
    for op in reversed(body):
        if op not in stage:
            users = [stage[u] for r in op.results for u in r.users if u in stage]
            stage[op] = min(users, default=0)
    earliest: dict = {}
    for op in body:
        if isinstance(op, ReadOp):
            name = op.properties["variable"].root
            earliest[name] = min(earliest.get(name, stage[op]), stage[op])
    for name, s in earliest.items():
        owner.setdefault(name, s)
    for op in body:
        if isinstance(op, (ReadOp, AssignOp)):
            stage[op] = owner.setdefault(op.properties["variable"].root, stage[op])
    return stage


def _forward_ops(ops: list[Operation]) -> set:
    """The per-micro-batch ops of the forward pass: the marked ones and their per-micro-
    batch producers."""
    out: set = set()
    for op in reversed(ops):
        if MICRO_ATTR in op.attributes and (_mark(op) is not None or
                                            any(u in out for r in op.results
                                                for u in r.users)):
            out.add(op)
    return out


def schedule(ops: list[Operation], m: int) -> list[Operation]:
    """The global order (see the module docstring)."""
    forward = _forward_ops(ops)
    position = {op: i for i, op in enumerate(ops)}

    def key(op: Operation) -> tuple:
        a = op.attributes.get(MICRO_ATTR)
        if a is None:
            return (0, 0, position[op])
        if op in forward:
            return (1, a.value, position[op])
        return (2, m - 1 - a.value, position[op])
    waiting = {op: len({v.owner for v in op.operands if v.owner in position}) for op in ops}
    ready = [(key(op), position[op], op) for op in ops if not waiting[op]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, op = heapq.heappop(ready)
        order.append(op)
        for user in {u for r in op.results for u in r.users}:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready, (key(user), position[user], user))
    return order


# ---------------------------------------------------------------------------------------------
# Stage programs
# ---------------------------------------------------------------------------------------------


class _StageProgram:
    """One stage's function, built op by op in the global order."""

    def __init__(self, fn: FuncOp, stage: int, grid: GridInfo) -> None:
        ftype = fn.properties["function_type"].value
        name = f"{fn.properties['sym_name'].value}_stage{stage}"
        self.fn = FuncOp.create(name, ftype.inputs, ftype.results, location=fn.location)
        for key in ("arg_attrs", "res_attrs"):
            if key in fn.properties:
                self.fn.properties[key] = fn.properties[key]
        self.fn.attributes.update(fn.attributes)
        self.fn.attributes["parallel.grid"] = SymbolRefAttr(grid.name)
        self.fn.attributes[STAGE_ATTR] = IntegerAttr(stage, I64)
        self.grid = grid
        self.block = self.fn.regions[0].blocks[0]
        self.mapping = dict(zip(fn.regions[0].blocks[0].args, self.block.args))

    def get(self, v: Value) -> Value:
        """`v` here: mapped, or a replicable op's result computed here now."""
        if v not in self.mapping:
            self.emit(v.owner)
        return self.mapping[v]

    def emit(self, op: Operation) -> None:
        for v in op.operands:
            self.get(v)
        self.block.append(op.clone(self.mapping)).attributes.pop(STAGE_ATTR, None)

    def _peer(self, offset: int) -> dict:
        return {"grid": SymbolRefAttr(self.grid.name),
                "axes": ArrayAttr([StringAttr(self.grid.axes[0])]),
                "offset": IntegerAttr(offset, I64)}

    def send(self, v: Value, offset: int) -> None:
        self._micro(v, self.block.append(SendOp.build(
            self.get(v), result_types=[], location=v.owner.location, **self._peer(offset))))

    def recv(self, v: Value, offset: int) -> None:
        op = self.block.append(RecvOp.build(result_types=[v.type], location=v.owner.location,
                                            **self._peer(offset)))
        self._micro(v, op)
        self.mapping[v] = op.results[0]

    @staticmethod
    def _micro(v: Value, op: Operation) -> None:
        """A message of one micro-batch's value says so (its `?` rows are B/M: the partition
        report counts them so)."""
        if MICRO_ATTR in v.owner.attributes:
            op.attributes[MICRO_ATTR] = v.owner.attributes[MICRO_ATTR]

    def finish(self, ret: ReturnOp) -> FuncOp:
        self.block.append(ReturnOp.build([self.get(v) for v in ret.operands],
                                         result_types=[], location=ret.location))
        return self.fn


def split_stages(fn: FuncOp, grid: GridInfo, m: int, owner: dict) -> list[FuncOp]:
    """The stage functions of `fn` (see the module docstring); `owner` as `assign_stages`
    takes it."""
    ops = list(fn.regions[0].blocks[0].ops)
    replicable = replicable_ops(ops)
    stage = assign_stages(ops, replicable, owner)
    programs = [_StageProgram(fn, s, grid) for s in range(grid.size)]

    def transfer(v: Value, src: int, dst: int) -> None:
        programs[src].send(v, dst - src)
        programs[dst].recv(v, src - dst)
    for op in schedule(ops, m):
        if op in replicable or isinstance(op, ReturnOp):
            continue
        programs[stage[op]].emit(op)
        for r in op.results:
            for s in sorted({stage[u] for u in r.users if u in stage} - {stage[op]}):
                transfer(r, stage[op], s)
    ret = fn.regions[0].blocks[0].last
    for v in ret.operands:
        if v.owner in stage:
            for s in range(grid.size):
                if s != stage[v.owner] and v not in programs[s].mapping:
                    transfer(v, stage[v.owner], s)
    return [p.finish(ret) for p in programs]


def _staged(module: Operation) -> list[FuncOp]:
    return [op for op in module.regions[0].blocks[0].ops if isinstance(op, FuncOp) and
            any(_mark(o) is not None for o in op.walk())]


def pipeline_module(module: Operation, m: int) -> None:
    """Split every staged function of `module` (which holds a grid) into its stage
    functions (see the module docstring)."""
    functions = _staged(module)
    if not functions:
        return
    grid_op = next(op for op in module.regions[0].blocks[0].ops if isinstance(op, GridOp))
    grid = grid_op.info()
    if len(grid.shape) != 1:
        raise IRError(f"pipeline stages run on a grid of one axis (rank r runs stage r); "
                      f"'@{grid.name}' has {len(grid.shape)}", grid_op.location)
    if "parallel.variables" in module.attributes:
        raise IRError("pipeline stages keep their variables whole: placements of params on "
                      "a pipeline's grid are not supported", module.location)
    for fn in functions:
        for op in fn.walk():
            if isinstance(op, ShardOp):
                raise IRError("placements are not supported in a pipeline's functions",
                              op.location)
            if _mark(op) is not None and not 0 <= _mark(op) < grid.size:
                raise IRError(f"stage {_mark(op)} does not exist: grid '@{grid.name}' has "
                              f"{grid.size} ranks on axis '{grid.axes[0]}', one per stage",
                              op.location)
    stages, owner = {}, {}
    for fn in functions:
        if m > 1:
            micro_batch(fn, m)
        programs = split_stages(fn, grid, m, owner)
        for p in reversed(programs):
            module.regions[0].blocks[0].insert_after(fn, p)
        stages[fn.properties["sym_name"].value] = ArrayAttr(
            [SymbolRefAttr(p.properties["sym_name"].value) for p in programs])
        fn.erase()
    module.attributes[STAGES_ATTR] = DictionaryAttr(stages)
    module.attributes[MICRO_BATCHES_ATTR] = IntegerAttr(m, I64)
    module.attributes[VARIABLE_STAGES_ATTR] = DictionaryAttr(
        {k: IntegerAttr(v, I64) for k, v in sorted(owner.items())})


@register_pass
class ParallelPipeline(Pass):
    """Split each function marked with stages into one program per stage of a one-axis
    grid, with `micro-batches` micro-batches in a GPipe schedule (see the module docstring).

    Algorithm:
    1. with M > 1 micro-batches, partition the function as data parallel over a virtual
       axis of M and unroll the SPMD program: ops on micro-batch values cloned M times,
       collectives become sums, concatenations and splits;
    2. give every op a stage (marks, replicable ops, locations, dataflow, users), each
       variable the earliest stage that reads it;
    3. order the ops (once-ops as soon as ready, forwards by micro-batch, then backwards in
       reverse), and emit each stage's ops in that order, a send/recv pair after the
       producer of each value another stage uses; results sent to every stage at the end.
    """

    name = "parallel-pipeline"
    micro_batches: int = 1

    def run(self, op: Operation) -> None:
        if self.micro_batches < 1:
            raise PassPipelineError(f"'parallel-pipeline' option 'micro-batches': expected a "
                                    f"positive count, got {self.micro_batches}")
        for module in modules_with_grids(op):
            pipeline_module(module, self.micro_batches)
