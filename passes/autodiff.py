"""autodiff: replace `autodiff.grad` and `autodiff.jvp` by the graph ops that compute them."""

from __future__ import annotations

from irkit.ad_rules import ADBuilder
from irkit.frontend.ad_engine import jvp_graph, vjp_graph
from irkit.builder import Builder
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_pure


def _scope(op: Operation) -> list[Operation]:
    """The ops before `op` in its block: what its derivative is taken through."""
    out = []
    prev = op.prev_op
    while prev is not None:
        out.append(prev)
        prev = prev.prev_op
    out.reverse()
    return out


def expand(op: Operation) -> None:
    """Build the derivative `op` asks for just before it, then replace and erase it."""
    b = Builder.before(op)
    b.location = op.location
    ad = ADBuilder(b)
    boundary = op.prev_op           # the ops built below go between this op and `op`
    if op.name == "autodiff.grad":
        seeds = list(op.seeds)
        if not seeds:
            seeds = [ad.op("graph.reshape", ad.scalar(1.0, y), shape=list(y.type.shape))
                     if y.type.rank else ad.scalar(1.0, y) for y in op.ys]
        outs = vjp_graph(_scope(op), list(op.ys), seeds, list(op.xs), b, at=op)
        like = op.xs
    else:
        outs = jvp_graph(_scope(op), list(op.xs), list(op.tangents), list(op.ys), b, at=op)
        like = op.ys
    for r, v, x in zip(op.results, outs, like):
        r.replace_all_uses_with(v if v is not None else ad.zeros_like(x))
    last = op.prev_op
    op.erase()
    _erase_unused(last, boundary)


def _erase_unused(last: Operation | None, boundary: Operation | None) -> None:
    """Erase the pure ops without uses among those the expansion built (from `last` back
    to `boundary`, exclusive): rules build every operand's derivative, and the ones nobody
    asked for (the labels' gradient when only the logits' is wanted) should not wait for
    a later DCE."""
    op = last
    while op is not None and op is not boundary:
        prev = op.prev_op
        if is_pure(op) and not any(r.has_uses() for r in op.results):
            op.erase()
        op = prev


@register_pass
class Autodiff(Pass):
    """Expand every `autodiff.grad` and `autodiff.jvp` into graph ops.

    Algorithm: visit the derivative ops in program order (pre-order, so one inside a region
    is reached after the ops before its parent). For each, the scope is the ops that precede
    it in its block; `irkit.frontend.ad_engine.vjp_graph` (reverse mode) or `jvp_graph`
    (forward mode) builds the derivative there, right before the op, reusing the forward
    values, and the op's results are replaced by it. An x that no y depends on gets zeros.
    Since the output is ordinary graph ops, a derivative op that uses another's results (grad
    of grad) sees the first one already expanded. Run `canonicalize,cse` afterwards to fold the seeds'
    multiplications by one and share what the rules computed twice.
    """

    name = "autodiff"

    def run(self, op: Operation) -> None:
        todo = [o for o in op.walk(post_order=False)
                if o.name in ("autodiff.grad", "autodiff.jvp")]
        for o in todo:
            expand(o)
