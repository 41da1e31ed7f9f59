"""The sharding rule API: what an op's sharding rule is written against (issue 16).

A partitioned program runs every op on pieces of its tensors, one piece per rank of a grid.
Which pieces an op can work on is a fact about the op, so it sits on the op's class, next to
its VJP (`sharding_rule(self) -> ShardingRule | None`); the parallel passes read it. This
module is in the core, below the dialects, for the reason `irkit.ad_rules` is: the graph
dialect declares the rules, the `parallel` dialect and passes apply them, and neither may
import the other's layer.

A rule is an einsum over named **factors** (Shardy's term; MLIR's `shard` dialect says loop
iterators): every dimension of every operand and result is mapped to a factor, or to None
when it has none (a size-1 axis broadcast against a larger one). Splitting a factor across
ranks splits every dimension mapped to it the same way, so each rank can run the op on its
pieces. What a split means depends on where the factor appears:

- in a result: **parallel**: the result comes out split along that dimension (elementwise
  ops, matmul's M and N, the kept axes of a reduction);
- in no result, listed in `reductions` as "sum": each rank holds a **partial sum** of the
  result (matmul's K, the reduced axes of `reduce_sum`); as "mean": a partial sum of the
  result once scaled by the rank's share of the count, which the partitioner multiplies in
  (cross_entropy's batch: the global mean is the sum of local means over the group size);
- in no result and not a reduction, or listed in `whole`: the op needs the **whole**
  dimension (softmax's axis, `reduce_max`'s axes): the factor is never split.

`linear` lists the operand groups the op is linear in jointly, so that partial sums pass
through it: for `add`, `((0, 1),)` (sum_r x_r + sum_r y_r = sum_r (x_r + y_r)); for `mul`,
`((0,), (1,))` (linear in each operand separately, the other one replicated). An op without a
rule (`sharding_rule` missing or returning None) runs on replicated operands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from irkit.ir import Operation
from irkit.types import RankedTensorType

Factors = tuple  # tuple[str | None, ...]: one factor (or None) per dimension


@dataclass(frozen=True)
class ShardingRule:
    """Per operand and per result, the factor of each dimension (see the module docstring)."""

    operands: tuple[Factors, ...]
    results: tuple[Factors, ...]
    reductions: Mapping[str, str] = field(default_factory=dict)
    whole: frozenset = frozenset()
    linear: tuple[tuple[int, ...], ...] = ()

    def factors(self) -> list[str]:
        """Every factor, in order of first appearance (operands first)."""
        out: dict = {}
        for dims in self.operands + self.results:
            for f in dims:
                if f is not None:
                    out.setdefault(f, None)
        return list(out)

    def kind(self, f: str) -> str:
        """"parallel", "sum", "mean" or "whole" (see the module docstring)."""
        if f in self.whole:
            return "whole"
        if any(f in dims for dims in self.results):
            return "parallel"
        return self.reductions.get(f, "whole")

    def splittable(self) -> list[str]:
        """The factors a grid axis may split."""
        return [f for f in self.factors() if self.kind(f) != "whole"]


def einsum_rule(spec: str, *, reductions: Mapping[str, str] | None = None, whole: str = "",
                linear: tuple = ()) -> ShardingRule:
    """A rule from einsum notation, one letter a factor and `_` for a dimension without one:
    `einsum_rule("mk,kn->mn", reductions={"k": "sum"}, linear=((0,), (1,)))` is matmul's."""
    ins, outs = spec.split("->")

    def dims(s: str) -> tuple:
        return tuple(None if c == "_" else c for c in s.strip())
    return ShardingRule(tuple(dims(s) for s in ins.split(",")),
                        tuple(dims(s) for s in outs.split(",")),
                        dict(reductions or {}), frozenset(whole), tuple(linear))


def elementwise_rule(op: Operation, linear: tuple = ()) -> ShardingRule:
    """The rule of an op whose results broadcast its operands as numpy does: result
    dimension i is factor `d<i>`; an operand's dimension (aligned at the right) shares it,
    unless it has size 1 where the result has not, which is a broadcast (no factor)."""
    out = op.results[0].type
    rank = out.rank
    operands = []
    for v in op.operands:
        t = v.type
        if not isinstance(t, RankedTensorType):
            return None
        dims = []
        for i, d in enumerate(t.shape, rank - t.rank):
            dims.append(None if d == 1 and out.shape[i] != 1 else f"d{i}")
        operands.append(tuple(dims))
    results = tuple(tuple(f"d{i}" for i in range(r.type.rank)) for r in op.results)
    return ShardingRule(tuple(operands), results, {}, frozenset(), tuple(linear))
