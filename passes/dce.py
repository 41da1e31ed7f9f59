"""dce: erase ops whose results are unused and that have no effects, and unreachable blocks."""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import PatternRewriter, is_trivially_dead, simplify_regions


@register_pass
class DCE(Pass):
    """Dead code elimination.

    Algorithm:
      1. Erase blocks unreachable from their region's entry (they may hold the only uses
         of otherwise live-looking values).
      2. Visit ops bottom-up (post-order, each block last op first), erasing every trivially
         dead op: pure, not a terminator, no result used. Erasing an op can kill the
         producers of its operands; they are queued and re-examined, so a whole dead chain
         goes in one pass.
    """

    name = "dce"

    def run(self, op: Operation) -> None:
        simplify_regions(op, PatternRewriter())
        worklist = [o for o in op.walk() if o is not op]
        queued = set(worklist)
        worklist.reverse()              # pop() then yields post-order: users before producers
        while worklist:
            o = worklist.pop()
            queued.discard(o)
            if o.parent is None or not is_trivially_dead(o):
                continue
            producers = [p for p in (v.defining_op() for v in o.operands) if p is not None]
            o.erase()
            for p in producers:
                if p not in queued and p.parent is not None:
                    queued.add(p)
                    worklist.append(p)
