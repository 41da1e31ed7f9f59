"""parallel-propagate: give every value of a partitioned module a sharding, from the
annotations and the ops' sharding rules (MLIR's `sharding-propagation`, Shardy's factor
propagation, one grid axis at a time).

This module also holds what `parallel-partition` shares with it: the **options** an op has
on one grid axis and their **cost**, so that both passes read an op the same way.

An op's options on grid axis a, from its rule (`irkit.sharding_rules`):

- `replicate`: every operand and result whole on a;
- `factor f` (a splittable factor): the operands' and results' dims mapped to f split on a,
  the rest replicated; a reduction factor leaves the results partial on a (a mean factor
  also scales them by 1/size(a), which the partitioner inserts);
- `partial g` (a linear group g): the operands of g partial on a, the others replicated,
  the results partial.

Ops the rules do not cover have one option each: `graph.read` gives its variable's
placement, `graph.assign` and `func.return` ask for the variable's or the function result's
placement, `parallel.shard` fixes its result, `graph.dim` takes any placement (its result,
the global size, is replicated), and an op without a rule (or with regions) runs on
replicated operands, with a remark saying so.

**Cost** of an option: the bytes each rank sends to convert the values whose placement is
already known to what the option needs (operands before the op, results after it), plus
`ALPHA` per collective (the latency of one message, as bytes at link bandwidth, so that one
all_reduce beats a reduce_scatter and an all_gather of the same bytes). On a group of k
ranks and a value of B bytes: all_gather and reduce_scatter B(k-1)/k, all_reduce 2B(k-1)/k
(ring), all_to_all B(k-1)/k^2. A local slice (replicate -> split) costs no message now but is
charged as the all_gather that takes the value back to the replicated world, and a
reduce_scatter (partial -> split) likewise with its all_gather, so splits come from
annotations and rules, never from cutting replicated data or partial sums cheaply (a
Megatron layer pair's partial output is all_reduced, not scattered by rows the backward
would gather again); replicate -> partial is not offered. A conversion some earlier
decision already asked for is free (it is made once). A `?` dimension counts as `DYNAMIC`
elements. Ties go to the earlier option (replicate, then partial groups, then factors).

Algorithm (per function of a module holding a `parallel.grid`):

1. Known placements: arguments and op results with a `parallel.sharding(s)` attribute
   (earlier runs), `parallel.shard` results, `graph.read` results (the variable's placement:
   the module's `parallel.variables`, a `parallel.shard` right on a read, else replicated),
   and the operands of `func.return` (the result's `parallel.sharding`, else the annotation of the
   value returned, else replicated);
   all of these are fixed.
2. Sweep the ops forward, then backward, until a sweep assigns nothing: for each op and grid
   axis where some of its values are known and some are not, choose the cheapest option and
   give the unknown values what it says (operands: what it needs; results: what it makes).
   A value is assigned once; a later op that wants another placement converts it.
3. Values still unknown are replicated. Write `parallel.shardings` (one per result) on every
   op, `parallel.sharding` on arguments and results, and `parallel.variables` on the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.attributes import ArrayAttr, DictionaryAttr
from irkit.diagnostics import IRError, emit_remark
from irkit.ir import Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.types import RankedTensorType
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.dialects.graph import AssignOp, DimOp, ReadOp, VariableOp
from irkit.dialects.parallel import (
    PARTIAL, REPLICATE, GridInfo, GridOp, ShardOp, Sharding, Split, variable_shardings,
)

#: the latency of one collective, in bytes at link bandwidth (5 us at 12.5 GB/s)
ALPHA = 65536
#: the number of elements a `?` dimension is taken to have
DYNAMIC = 1024
INFINITE = float("inf")


@dataclass(frozen=True)
class Option:
    """What an op does on one grid axis: the placement each operand needs (None: any) and
    each result gets, and whether the results must be scaled by 1/size (a split mean)."""

    operands: tuple
    results: tuple
    mean: bool = False


def byte_size(v: Value) -> int:
    t = v.type
    if not isinstance(t, RankedTensorType):
        return 0
    n = 1
    for d in t.shape:
        n *= DYNAMIC if d is None else d
    return n * max(1, (getattr(t.element, "width", 32) + 7) // 8)


def conversion_cost(src, dst, nbytes: int, k: int) -> float:
    """What converting a value of `nbytes` from placement `src` to `dst` on an axis of `k`
    ranks costs (see the module docstring)."""
    if dst is None or src == dst or k == 1:
        return 0
    share = nbytes * (k - 1) / k
    if dst == PARTIAL:
        return INFINITE
    if src == PARTIAL:                         # all_reduce; a reduce_scatter charged
        return ALPHA + 2 * share if dst == REPLICATE else 2 * (ALPHA + share)  # with its gather
    if src == REPLICATE:
        return ALPHA + share                   # the slice, charged as its gather back
    if dst == REPLICATE:
        return ALPHA + share
    return ALPHA + share / k                   # split(i) -> split(j): all_to_all


class ModulePlan:
    """A module's grid, its variables' placements (see `variable_shardings`), and what a
    conversion costs on its axes (`cost`, `conversion_cost`'s signature: a grid of real
    ranks; `parallel-pipeline` prices its virtual micro-batch axis otherwise)."""

    def __init__(self, module: Operation, cost=conversion_cost) -> None:
        self.cost = cost
        block = module.regions[0].blocks[0]
        grids = [op for op in block.ops if isinstance(op, GridOp)]
        if len(grids) != 1:
            raise IRError(f"a module partitioned across ranks holds one parallel.grid, this "
                          f"one {len(grids)}", module.location)
        self.module = module
        self.grid: GridInfo = grids[0].info()
        self.variables = _variable_placements(module)

    def replicated(self) -> Sharding:
        return Sharding.replicated(self.grid.name, len(self.grid.shape))

    def var_sharding(self, op: Operation) -> Sharding:
        return self.variables.get(op.properties["variable"].root, self.replicated())


def _variable_placements(module: Operation) -> dict:
    """name -> Sharding: the module's `parallel.variables`, then `parallel.shard`s applied
    right to a `graph.read` (an annotation of the variable itself), then an optimizer's
    state: a variable `<param>.<state>` of its param's type (`w1.adam_m`, the naming of
    `irkit.frontend.optimizers`) lies as its param does, so that the update of a split
    param runs on its blocks (Megatron's optimizer is as sharded as its weights)."""
    out = variable_shardings(module)
    for op in module.walk():
        if isinstance(op, ShardOp) and isinstance(op.operand.defining_op(), ReadOp):
            name = op.operand.defining_op().properties["variable"].root
            s = op.value()
            if out.setdefault(name, s) != s:
                raise IRError(f"variable '@{name}' is annotated both {out[name]} and {s}",
                              op.location)
    variables = {op.var_name: op for op in module.regions[0].blocks[0].ops
                 if isinstance(op, VariableOp)}
    for name, var in variables.items():
        param = variables.get(name.rsplit(".", 1)[0]) if "." in name else None
        if name not in out and param is not None and param.var_name in out and \
                param.tensor_type == var.tensor_type:
            out[name] = out[param.var_name]
    return out


def result_sharding(fn: FuncOp, i: int, plan: ModulePlan) -> Sharding:
    """Result `i`'s placement: its `parallel.sharding`, else the annotation of the value
    returned (a `parallel.shard` result), else replicated."""
    attrs = fn.properties.get("res_attrs")
    a = attrs.value[i].value.get("parallel.sharding") if attrs is not None else None
    if a is not None:
        return Sharding.of_attr(a)
    shard = fn.regions[0].blocks[0].last.operands[i].defining_op()
    return shard.value() if isinstance(shard, ShardOp) else plan.replicated()


def op_options(op: Operation, axis: int, plan: ModulePlan, remarks: set | None = None) -> list:
    """The options of `op` on grid axis `axis` (see the module docstring)."""
    nres = len(op.results)
    if isinstance(op, ShardOp):
        p = op.value().placements[axis]
        return [Option((p,), (p,))]
    if isinstance(op, ReadOp):
        return [Option((), (plan.var_sharding(op).placements[axis],))]
    if isinstance(op, AssignOp):
        return [Option((plan.var_sharding(op).placements[axis],), ())]
    if isinstance(op, ReturnOp):
        fn = op.parent_op
        return [Option(tuple(result_sharding(fn, i, plan).placements[axis]
                             for i in range(len(op.operands))), ())]
    if isinstance(op, DimOp):
        return [Option((None,), (REPLICATE,))]
    rule = getattr(op, "sharding_rule", None)
    rule = rule() if rule is not None and not op.regions else None
    replicate = Option((REPLICATE,) * len(op.operands), (REPLICATE,) * nres)
    if rule is None:
        if remarks is not None and op not in remarks and op.operands and nres:
            remarks.add(op)
            emit_remark(f"'{op.name}' has no sharding rule: it runs on replicated operands",
                        op.location)
        return [replicate]
    out = [replicate]
    for group in rule.linear:
        out.append(Option(tuple(PARTIAL if i in group else REPLICATE
                                for i in range(len(op.operands))), (PARTIAL,) * nres))
    k = plan.grid.shape[axis]
    for f in rule.splittable():
        if not _divides(op, rule, f, k):
            continue
        kind = rule.kind(f)
        ins = tuple(_placement(dims, f, REPLICATE) for dims in rule.operands)
        outs = tuple(_placement(dims, f, REPLICATE if kind == "parallel" else PARTIAL)
                     for dims in rule.results)
        out.append(Option(ins, outs, kind == "mean"))
    return out


def _placement(dims: tuple, f: str, otherwise):
    return Split(dims.index(f)) if f in dims else otherwise


def _divides(op: Operation, rule, f: str, k: int) -> bool:
    """Whether every static dimension mapped to `f` splits into `k` blocks."""
    for values, dims_list in ((op.operands, rule.operands), (op.results, rule.results)):
        for v, dims in zip(values, dims_list):
            for d, g in zip(v.type.shape, dims):
                if g == f and d is not None and d % k:
                    return False
    return True


def choose(op: Operation, axis: int, plan: ModulePlan, known, requested: set, options: list,
           size=byte_size) -> Option:
    """The cheapest of `options` (`op_options` of `op` on `axis`) given `known(value)` (a
    placement or None) and `size(value)` (its global bytes); `requested` holds the (value,
    axis, placement) conversions already asked for."""
    k = plan.grid.shape[axis]
    best, best_cost = None, INFINITE
    for opt in options:
        cost = 0.0
        for v, need in zip(op.operands, opt.operands):
            have = known(v)
            if have is not None and (v, axis, need) not in requested:
                cost += plan.cost(have, need, size(v), k)
        for r, made in zip(op.results, opt.results):
            want = known(r)
            if want is not None:
                cost += plan.cost(made, want, size(r), k)
        if best is None or cost < best_cost:
            best, best_cost = opt, cost
    return best


class Propagation:
    """The state of one function's propagation (see the module docstring)."""

    def __init__(self, fn: FuncOp, plan: ModulePlan, remarks: set) -> None:
        self.fn, self.plan, self.remarks = fn, plan, remarks
        self.n = len(plan.grid.shape)
        self.placement: dict = {}
        self.requested: set = set()
        self.ops = [op for op in fn.regions[0].blocks[0].ops]

    def known(self, axis: int):
        return lambda v: self.placement[v][axis] if v in self.placement else None

    def fix(self, v: Value, s: Sharding, what: str, location) -> None:
        if s.grid != self.plan.grid.name:
            raise IRError(f"{what} is placed on grid '@{s.grid}', but the module's grid is "
                          f"'@{self.plan.grid.name}'", location)
        if len(s.placements) != self.n:
            raise IRError(f"{what}: {s} has {len(s.placements)} placements for a grid of "
                          f"rank {self.n}", location)
        self.placement[v] = list(s.placements)

    def seed(self) -> None:
        fn, plan = self.fn, self.plan
        attrs = fn.properties.get("arg_attrs")
        for i, a in enumerate(fn.regions[0].blocks[0].args):
            s = attrs.value[i].value.get("parallel.sharding") if attrs is not None else None
            if s is not None:
                self.fix(a, Sharding.of_attr(s), f"argument #{i}", fn.location)
        for op in self.ops:
            if op.regions:
                raise IRError(f"parallel partitioning does not enter ops with regions "
                              f"('{op.name}')", op.location)
            stored = op.attributes.get("parallel.shardings")
            if stored is not None:
                for r, s in zip(op.results, stored.value):
                    self.fix(r, Sharding.of_attr(s), f"'{op.name}' result", op.location)
            elif isinstance(op, ShardOp):
                self.fix(op.results[0], op.value(), "the annotation", op.location)
            elif isinstance(op, ReadOp):
                self.fix(op.results[0], plan.var_sharding(op), "the variable", op.location)
            elif isinstance(op, ReturnOp):
                for i, v in enumerate(op.operands):
                    if v not in self.placement:
                        self.fix(v, result_sharding(fn, i, plan), f"result #{i}", op.location)

    def decide(self, op: Operation, axis: int) -> bool:
        values = list(op.operands) + list(op.results)
        known = self.known(axis)
        states = [known(v) is not None for v in values]
        if not any(states) or all(states):
            return False
        opt = choose(op, axis, self.plan, known, self.requested,
                     op_options(op, axis, self.plan, self.remarks))
        changed = False
        for v, need in zip(op.operands, opt.operands):
            if known(v) is None:
                if need is not None:
                    self._assign(v, axis, need)
                    changed = True
            elif need is not None and need != known(v):
                self.requested.add((v, axis, need))
        for r, made in zip(op.results, opt.results):
            if known(r) is None:
                self._assign(r, axis, made)
                changed = True
        return changed

    def _assign(self, v: Value, axis: int, p) -> None:
        self.placement.setdefault(v, [None] * self.n)[axis] = p

    def run(self) -> dict:
        self.seed()
        changed = True
        while changed:
            changed = False
            for order in (self.ops, self.ops[::-1]):
                for op in order:
                    for axis in range(self.n):
                        changed |= self.decide(op, axis)
        values = list(self.fn.regions[0].blocks[0].args) + \
            [r for op in self.ops for r in op.results]
        out = {}
        for v in values:
            ps = self.placement.get(v, [None] * self.n)
            out[v] = Sharding(self.plan.grid.name,
                              tuple(REPLICATE if p is None else p for p in ps))
        return out


def propagate(module: Operation, remarks: set | None = None, cost=conversion_cost) -> tuple:
    """Run the propagation on every function of `module` (which holds a grid) and write
    the attributes, conversions priced by `cost` (`ModulePlan`); returns the plan and, per
    function, value -> Sharding."""
    plan = ModulePlan(module, cost)
    remarks = set() if remarks is None else remarks
    result = {}
    for fn in list(module.regions[0].blocks[0].ops):
        if isinstance(fn, FuncOp) and fn.regions[0].blocks:
            shardings = Propagation(fn, plan, remarks).run()
            _write(fn, shardings, plan)
            result[fn] = shardings
    _write_variables(module, plan)
    return plan, result


def _write(fn: FuncOp, shardings: dict, plan: ModulePlan) -> None:
    block = fn.regions[0].blocks[0]
    res = []
    for op in block.ops:
        if op.results and not isinstance(op, ShardOp):
            op.attributes["parallel.shardings"] = ArrayAttr(
                [shardings[r].to_attr() for r in op.results])
        if isinstance(op, ReturnOp):
            res = [result_sharding(fn, i, plan) for i in range(len(op.operands))]
    _set_boundary(fn, "arg_attrs", [shardings[a] for a in block.args])
    _set_boundary(fn, "res_attrs", res)


def _set_boundary(fn: FuncOp, key: str, shardings: list) -> None:
    attrs = fn.properties.get(key)
    old = [dict(d.value) for d in attrs.value] if attrs is not None else \
        [{} for _ in shardings]
    for d, s in zip(old, shardings):
        d["parallel.sharding"] = s.to_attr()
    if old:
        fn.properties[key] = ArrayAttr([DictionaryAttr(d) for d in old])


def _write_variables(module: Operation, plan: ModulePlan) -> None:
    if plan.variables:
        module.attributes["parallel.variables"] = DictionaryAttr(
            {k: s.to_attr() for k, s in sorted(plan.variables.items())})


def modules_with_grids(root: Operation) -> list[Operation]:
    """The modules (`root` included) that hold a `parallel.grid` directly and are not
    partitioned yet (no function marked `parallel.grid`: `parallel-partition` and
    `parallel-pipeline` mark the programs they make)."""
    return [m for m in root.walk() if m.name == "builtin.module" and m.regions and
            any(isinstance(op, GridOp) for op in m.regions[0].blocks[0].ops) and
            not any(isinstance(op, FuncOp) and "parallel.grid" in op.attributes
                    for op in m.regions[0].blocks[0].ops)]


@register_pass
class ParallelPropagate(Pass):
    """Give every value of every function in a module holding a `parallel.grid` a sharding
    (see the module docstring for the options, the cost model and the algorithm).

    Algorithm:
    1. seed the known placements (annotations, variables, function results);
    2. sweep forward and backward over each function's ops to a fixpoint, choosing per op
       and grid axis the cheapest option given the known placements, and assigning the
       unknown ones from it;
    3. replicate what is left; write the shardings as attributes.
    """

    name = "parallel-propagate"

    def run(self, op: Operation) -> None:
        for m in modules_with_grids(op):
            propagate(m)

