"""parallel-simplify: fewer, cheaper collectives after `parallel-partition`.

Conversions are made one value and one use at a time, so their collectives can meet in
chains that say the same thing with less traffic. Each rule is exact (it gives every rank
the same value), over the same grid and axes:

- `all_slice(all_reduce(x), d) -> reduce_scatter(x, d)`: the sum, each rank keeping its
  block, is a reduce_scatter; it moves half the bytes of the all_reduce;
- `all_gather(reduce_scatter(x, d), d) -> all_reduce(x)`: one collective instead of two;
- `all_gather(all_slice(x, d), d) -> x`: the blocks of x put back together are x;
- `all_slice(all_gather(x, d), d) -> x`: a rank's block of the gathered value is its x;
- `all_to_all(all_to_all(x, split j, concat i), split i, concat j) -> x`: re-split back.

The first collective stays while it has other users (its result is still needed there).
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import PatternRewriter, RewritePattern, apply_patterns_greedily
from irkit.dialects.parallel import (
    AllGatherOp, AllReduceOp, AllSliceOp, AllToAllOp, GroupOp, ReduceScatterOp,
)


def _same_group(a: GroupOp, b: GroupOp) -> bool:
    return a.properties["grid"] == b.properties["grid"] and \
        a.properties["axes"] == b.properties["axes"]


def _producer(op: GroupOp, cls) -> GroupOp | None:
    """The op of class `cls` on the same group that makes `op`'s operand, or None."""
    p = op.operand.defining_op()
    return p if isinstance(p, cls) and _same_group(p, op) else None


def _with(op: GroupOp, cls, x, rewriter: PatternRewriter) -> None:
    """Replace `op` by a `cls` collective of `x` on its group, with its properties."""
    props = {k: v for k, v in op.properties.items() if k in cls.spec.prop_names}
    new = cls.build(x, result_types=[op.results[0].type], location=op.location, **props)
    rewriter.insert(new)
    rewriter.replace_op(op, new.results)


def _forward(op: GroupOp, x, rewriter: PatternRewriter) -> bool:
    """Replace `op` by `x` when the types agree (they do unless sizes are unknown)."""
    if x.type is not op.results[0].type:
        return False
    rewriter.replace_op(op, [x])
    return True


class SliceOfAllReduce(RewritePattern):
    def match_and_rewrite(self, op: AllSliceOp, rewriter: PatternRewriter) -> bool:
        p = _producer(op, AllReduceOp)
        if p is None:
            return False
        _with(op, ReduceScatterOp, p.operand, rewriter)
        return True


class GatherOfReduceScatter(RewritePattern):
    def match_and_rewrite(self, op: AllGatherOp, rewriter: PatternRewriter) -> bool:
        p = _producer(op, ReduceScatterOp)
        if p is None or p.properties["dim"] != op.properties["dim"]:
            return False
        _with(op, AllReduceOp, p.operand, rewriter)
        return True


class GatherOfSlice(RewritePattern):
    def match_and_rewrite(self, op: AllGatherOp, rewriter: PatternRewriter) -> bool:
        p = _producer(op, AllSliceOp)
        return p is not None and p.properties["dim"] == op.properties["dim"] and \
            _forward(op, p.operand, rewriter)


class SliceOfGather(RewritePattern):
    def match_and_rewrite(self, op: AllSliceOp, rewriter: PatternRewriter) -> bool:
        p = _producer(op, AllGatherOp)
        return p is not None and p.properties["dim"] == op.properties["dim"] and \
            _forward(op, p.operand, rewriter)


class AllToAllPair(RewritePattern):
    def match_and_rewrite(self, op: AllToAllOp, rewriter: PatternRewriter) -> bool:
        p = _producer(op, AllToAllOp)
        return p is not None and \
            p.properties["split_dim"] == op.properties["concat_dim"] and \
            p.properties["concat_dim"] == op.properties["split_dim"] and \
            _forward(op, p.operand, rewriter)


PATTERNS = (SliceOfAllReduce(), GatherOfReduceScatter(), GatherOfSlice(), SliceOfGather(),
            AllToAllPair())


@register_pass
class ParallelSimplify(Pass):
    """Rewrite chains of collectives into fewer, cheaper ones (see the module docstring).

    Algorithm: apply the rules as rewrite patterns, each matching the second collective of
    a pair and looking at its operand's producer, with the greedy driver to a fixpoint
    (without folding: only collectives change); a first collective left without users is
    erased by the driver as dead.
    """

    name = "parallel-simplify"

    def run(self, op: Operation) -> None:
        apply_patterns_greedily(op, PATTERNS, fold=False, region_simplify=False)
