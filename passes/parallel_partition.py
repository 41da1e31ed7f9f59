"""parallel-partition: rewrite each function of a module holding a `parallel.grid` into the
one SPMD program every rank runs (MLIR's `shard` partitioning, GSPMD's SPMD partitioner).

Every value keeps its meaning: what a rank holds, read through the value's sharding (its
blocks concatenated, its partial terms summed), is the value of the unpartitioned program.
The pass makes each rank hold its piece: types become local (split sizes divided), and
where an op needs its operands placed otherwise than they are, collectives convert them,
from the fixed table of OneFlow's SBP and DTensor's redistribute:

| from -> to             | collective                                     |
| partial -> replicate   | `all_reduce`                                   |
| partial -> split(d)    | `reduce_scatter` (dim d)                       |
| split(d) -> replicate  | `all_gather` (dim d)                           |
| split(i) -> split(j)   | `all_to_all` (split j, concat i)               |
| replicate -> split(d)  | `all_slice` (this rank's block: no message)    |

`conversion_steps` applies it to whole shardings, one grid axis a step: first the splits
that must go (innermost axis first, since a dimension split by several axes is nested, the
lower axis outside; an `all_to_all` where the axis moves to the dimension it splits next),
then the partial sums (one `all_reduce` over all axes that reduce, or a `reduce_scatter`
into the split wanted), then the slices. Replicate -> partial is never needed by the
propagation's options and is an error.

Per op, the options are those of `parallel-propagate` (the same chooser, on the final
placements): the operands are converted to what the chosen option needs, the op gets its
local result types (a `graph.reshape` or `graph.broadcast_to` also its local `shape`), a
split mean factor multiplies the result by 1/size (cross_entropy's batch), `graph.dim` of a
split dimension multiplies the local size back to the global one, and a result whose
propagated sharding differs from what the op makes is converted after it. `parallel.shard`
becomes the conversion of its operand. Each conversion of a value is made once.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import (
    ArrayAttr, DenseArrayAttr, IntegerAttr, StringAttr, SymbolRefAttr, TypeAttr,
)
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.types import I64, FunctionType, RankedTensorType
from irkit.dialects.func import FuncOp
from irkit.dialects.graph import (
    BroadcastToOp, ConstantOp, DimOp, MulOp, ReshapeOp, VariableOp,
)
from irkit.dialects.parallel import (
    PARTIAL, REPLICATE, AllGatherOp, AllReduceOp, AllSliceOp, AllToAllOp, GridInfo,
    ReduceScatterOp, ShardOp, Sharding, Split, local_type, split_count,
)
from irkit.passes.parallel_propagate import (
    ModulePlan, byte_size, choose, modules_with_grids, op_options, propagate,
)


def conversion_steps(src: Sharding, dst: Sharding) -> list[tuple]:
    """The collectives taking a value from `src` to `dst`: (kind, axes, properties) each,
    kind one of all_gather, all_to_all, all_reduce, reduce_scatter, all_slice (see the
    module docstring). ValueError if `dst` has a partial placement `src` lacks."""
    cur, want = list(src.placements), list(dst.placements)
    n = len(cur)

    def order(pl, d) -> list:
        return [a for a in range(n) if pl[a] == Split(d)]

    def joins(a: int, e: int) -> bool:
        """Whether a split of `e` on axis `a` now is where `dst` nests it."""
        have = order(cur, e)
        return all(b < a for b in have) and order(want, e)[:len(have) + 1] == have + [a]
    steps = []
    dims = sorted({p.dim for p in cur + want if isinstance(p, Split)})
    for d in dims:
        have, target = order(cur, d), order(want, d)
        p = 0
        while p < min(len(have), len(target)) and have[p] == target[p]:
            p += 1
        for a in reversed(have[p:]):
            t = want[a]
            if isinstance(t, Split) and t.dim != d and joins(a, t.dim):
                steps.append(("all_to_all", (a,), {"split_dim": t.dim, "concat_dim": d}))
                cur[a] = t
            else:
                steps.append(("all_gather", (a,), {"dim": d}))
                cur[a] = REPLICATE
    reduce = []
    for a in range(n):
        if cur[a] == PARTIAL and want[a] != PARTIAL:
            t = want[a]
            if isinstance(t, Split) and joins(a, t.dim):
                steps.append(("reduce_scatter", (a,), {"dim": t.dim}))
                cur[a] = t
            else:
                reduce.append(a)
                cur[a] = REPLICATE
    if reduce:
        steps.append(("all_reduce", tuple(reduce), {}))
    for d in dims:
        for a in order(want, d)[len(order(cur, d)):]:
            steps.append(("all_slice", (a,), {"dim": d}))
            cur[a] = Split(d)
    if cur != want:
        raise ValueError(f"cannot convert {src} to {dst}: a partial sum is made by the ops, "
                         f"not by a conversion")
    return steps


_COLLECTIVES = {"all_gather": AllGatherOp, "all_to_all": AllToAllOp,
                "all_reduce": AllReduceOp, "reduce_scatter": ReduceScatterOp,
                "all_slice": AllSliceOp}


class Partitioner:
    """One function's rewrite (see the module docstring)."""

    def __init__(self, fn: FuncOp, plan: ModulePlan, assigned: dict) -> None:
        self.fn, self.plan, self.grid = fn, plan, plan.grid
        self.assigned = assigned            # value -> its propagated Sharding
        self.current: dict = {}             # value -> the Sharding it holds now
        self.memo: dict = {}                # (value, Sharding) -> converted value
        self.requested: set = set()

    def local(self, t, s: Sharding, location) -> RankedTensorType:
        return _local(self.grid, t, s, location)

    def size(self, v: Value) -> int:
        """The global bytes of `v` (a value the pass made has those of what it converts)."""
        return self.sizes[v] if v in self.sizes else byte_size(v)

    def known(self, axis: int):
        return lambda v: (self.current.get(v) or self.assigned[v]).placements[axis]

    # ----- conversions -----------------------------------------------------------------

    def convert(self, v: Value, dst: Sharding, b: Builder, location) -> Value:
        src = self.current[v]
        if src == dst:
            return v
        key = (v, dst)
        if key in self.memo:
            return self.memo[key]
        try:
            steps = conversion_steps(src, dst)
        except ValueError as e:
            raise IRError(str(e), location) from None
        x = v
        for kind, axes, props in steps:
            x = self._emit(kind, x, axes, props, b, location)
        self.sizes[x] = self.size(v)
        for axis, p in enumerate(dst.placements):
            self.requested.add((v, axis, p))
        self.current[x] = dst
        self.memo[key] = x
        return x

    def _emit(self, kind: str, x: Value, axes: tuple, props: dict, b: Builder, location):
        k = self.grid.group_size(axes)
        shape = list(x.type.shape)

        def resize(d: int, grow: bool) -> None:
            n = shape[d]
            if n is not None:
                if not grow and n % k:
                    raise IRError(f"size {n} of dimension {d} does not split into {k}",
                                  location)
                shape[d] = n * k if grow else n // k
        if kind == "all_gather":
            resize(props["dim"], True)
        elif kind in ("reduce_scatter", "all_slice"):
            resize(props["dim"], False)
        elif kind == "all_to_all":
            resize(props["split_dim"], False)
            resize(props["concat_dim"], True)
        t = RankedTensorType(tuple(shape), x.type.element)
        op = _COLLECTIVES[kind].build(
            x, grid=SymbolRefAttr(self.grid.name),
            axes=ArrayAttr([StringAttr(self.grid.axes[a]) for a in axes]),
            **{k2: IntegerAttr(v, I64) for k2, v in props.items()},
            result_types=[t], location=location)
        b.insert(op)
        return op.results[0]

    def _scaled(self, v: Value, factor, b: Builder, location) -> Value:
        c = ConstantOp.create(np.asarray(factor), v.type.element, location=location)
        b.insert(c)
        m = MulOp.create(v, c.results[0], location=location)
        b.insert(m)
        return m.results[0]

    # ----- the rewrite -----------------------------------------------------------------

    def run(self) -> None:
        block = self.fn.regions[0].blocks[0]
        # Options and sizes are read from the global types, before any becomes local.
        n = len(self.grid.shape)
        self.options = {op: [op_options(op, a, self.plan) for a in range(n)]
                        for op in block.ops}
        self.sizes = {v: byte_size(v) for v in self.assigned}
        for a in block.args:
            self.current[a] = self.assigned[a]
            a.type = self.local(a.type, self.assigned[a], self.fn.location)
        for op in list(block.ops):
            if isinstance(op, ShardOp):
                v = self.convert(op.operand, op.value(), Builder.before(op), op.location)
                op.results[0].replace_all_uses_with(v)
                op.erase()
            else:
                self.rewrite(op)
        outs = [o.type for o in block.last.operands]
        self.fn.properties["function_type"] = TypeAttr(
            FunctionType([a.type for a in block.args], outs))
        self.fn.attributes["parallel.grid"] = SymbolRefAttr(self.grid.name)

    def rewrite(self, op: Operation) -> None:
        n = len(self.grid.shape)
        opts = [choose(op, axis, self.plan, self.known(axis), self.requested,
                       self.options[op][axis], self.size)
                for axis in range(n)]
        before = Builder.before(op)
        for i, use in enumerate(op._operands):
            v = use.value
            have = self.current[v]
            need = Sharding(self.grid.name, tuple(
                have.placements[a] if opts[a].operands[i] is None else opts[a].operands[i]
                for a in range(n)))
            use.set(self.convert(v, need, before, op.location))
        op.attributes.pop("parallel.shardings", None)
        after = Builder.after(op)
        for i, r in enumerate(op.results):
            made = Sharding(self.grid.name, tuple(opts[a].results[i] for a in range(n)))
            r.type = self.local(r.type, made, op.location)
            self.current[r] = made
            value = r
            k = int(np.prod([self.grid.shape[a] for a in range(n) if opts[a].mean]))
            if k > 1:
                value = self._scaled(r, 1.0 / k, after, op.location)
            if isinstance(op, DimOp):
                k = split_count(self.grid, self.current[op.x],
                                op.props()["axis"] % op.x.type.rank)
                if k > 1:
                    value = self._scaled(r, k, after, op.location)
            self.current[value] = made
            value = self.convert(value, self.assigned[r], after, op.location)
            if value is not r:
                new_ops = set()
                x = value
                while x is not r:
                    new_ops.add(x.owner)
                    x = x.owner.operands[0]
                r.replace_uses_if(value, lambda use: use.owner not in new_ops)
        if isinstance(op, (ReshapeOp, BroadcastToOp)):
            old = op.props()["shape"]
            new = [-1 if s == -1 else d for s, d in zip(old, op.results[0].type.shape)]
            op.properties["shape"] = DenseArrayAttr(I64, new)


def _local(grid: GridInfo, t, s: Sharding, location):
    """The local type of a value of type `t` placed as `s`; a located error if a static size
    does not divide."""
    if not isinstance(t, RankedTensorType):
        return t
    try:
        return local_type(grid, s, t)
    except ValueError as e:
        raise IRError(f"cannot place {t} as {s}: {e}", location) from None


def partition(module: Operation) -> None:
    """Partition every function of `module` (which holds a grid and is not partitioned yet:
    `modules_with_grids`) and localize its variables."""
    block = module.regions[0].blocks[0]
    plan, per_fn = propagate(module)
    for fn, assigned in per_fn.items():
        Partitioner(fn, plan, assigned).run()
    for op in block.ops:
        if isinstance(op, VariableOp):
            s = plan.variables.get(op.var_name, plan.replicated())
            op.properties["type"] = TypeAttr(_local(plan.grid, op.tensor_type, s, op.location))


@register_pass
class ParallelPartition(Pass):
    """Rewrite every function of a module holding a `parallel.grid` into its SPMD program
    (see the module docstring for the conversion table).

    Algorithm:
    1. run `parallel-propagate` (it keeps what an earlier run wrote), so every value has a
       sharding;
    2. per function, give the arguments their local types; then, in program order, per op:
       choose its option per grid axis (the propagation's chooser, on the final placements),
       convert each operand to what the option needs (once per value and sharding), give the
       results their local types, scale split means and `graph.dim`s, and convert each
       result to its propagated sharding for its users;
    3. give each `graph.variable` its local type; mark the functions `parallel.grid = @g`.
    """

    name = "parallel-partition"

    def run(self, op: Operation) -> None:
        for m in modules_with_grids(op):
            partition(m)

