"""canonicalize: fold every op and apply every loaded op's canonicalization patterns."""

from __future__ import annotations

from irkit.ir import Operation
from irkit.opdef import loaded_ops
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import FrozenPatternSet, RewritePattern, apply_patterns_greedily


def collect_canonicalization_patterns() -> FrozenPatternSet:
    """The `canonicalization_patterns` of every op class of the loaded dialects.

    MLIR gathers patterns from loaded dialects only; a dialect the IR never mentions has no
    op to rewrite. Entries may be pattern instances or pattern classes (instantiated here).
    """
    patterns: list[RewritePattern] = []
    seen: set[int] = set()
    for cls in list(loaded_ops().values()):
        for p in getattr(cls, "canonicalization_patterns", ()):
            if id(p) in seen:
                continue
            seen.add(id(p))
            patterns.append(p() if isinstance(p, type) else p)
    return FrozenPatternSet(patterns)


@register_pass
class Canonicalize(Pass):
    """Fold ops, deduplicate constants and apply canonicalization patterns to a fixpoint.

    Algorithm:
      1. Collect the canonicalization patterns of every op of the loaded dialects.
      2. Run the greedy driver (`irkit.rewrite.GreedyDriver`) over the op's regions:
         erase trivially dead ops, fold (constant operands to the right for commutative
         ops; results that fold to attributes become constants hoisted to the entry of
         the enclosing isolated region, one per value), else apply the best pattern.
      3. With `region-simplify`, erase unreachable blocks after each sweep.
      4. Repeat sweeps while anything changed, at most `max-iterations` times; more is an
         error (a pattern keeps undoing another).
    """

    name = "canonicalize"
    max_iterations: int = 10
    region_simplify: bool = True

    def run(self, op: Operation) -> None:
        apply_patterns_greedily(op, collect_canonicalization_patterns(),
                                max_iterations=self.max_iterations,
                                region_simplify=self.region_simplify)
