"""Lowerings of the losses of graph_loss.py: `graph.cross_entropy` and `graph.mse` (softmax
and log_softmax are in `reduce.py`, with the reductions they are made of).

Both are one scalar, a sum over everything: a single `loop.for` nest carrying the sum (the
iterations are not independent), whose result is stored into the 0-d output.

- cross_entropy, per row b of the logits: the log-softmax of the row computed as
  `log_softmax` in graph_loss.py does (the maximum m, shifted by 0 where not finite; then
  `log(sum(exp(x - m)))`), two `loop.for`s over the classes; then the row's term
  `(x[b, label] - m) - log_sum` for integer labels, or `sum_c labels[b, c] * ((x[b, c] - m)
  - log_sum)` for float targets (a third loop). The loss is `-(sum of terms) / B`, negated
  then divided as numpy does (B = 0 gives -0/0 = NaN, as there).
  An integer label outside [0, C): the interpreter raises; compiled code cannot, so the row
  contributes 0 (its logit is read at index 0 instead, then discarded by a select; a row of
  C = 0 classes is then an out-of-bounds read, as the program was an error anyway).
- mse: `sum((pred - target)^2) / n` over the broadcast shape of the two operands (read as
  elementwise operands are, `elementwise.Broadcast`), n its element count converted to the
  element type (n = 0 gives NaN, as numpy).

Sums run in index order where numpy sums pairwise: floats agree to rounding.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import I64
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import Broadcast, broadcast_sizes, load, store
from irkit.passes.lower_graph.reduce import _lowest
from irkit.passes.lower_graph.scalar import Scalars, is_float


@lowers("graph.cross_entropy")
def lower_cross_entropy(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    labels = lw.buffer(op.operands[1])
    t = x.type.element
    hard = not is_float(labels.type.element)         # integer class indices
    batch, classes = lw.sizes(x)
    out = lw.dest(op.results[0], [])
    top = Scalars(lw, lw.b)
    count = top.count(batch, t)
    zero = lw.constant(0.0, t)
    n_classes = top.cast(classes, I64) if hard else None

    def row(b: Builder, ivs: list[Value], carried: list[Value]) -> list[Value]:
        (i,) = ivs

        def max_step(ib, r, c):
            return [Scalars(lw, ib).max(c[0], load(ib, x, [i, r[0]]))]

        (m,) = lw.for_nest([classes], [lw.constant(_lowest(t, -1), t)], max_step, b)
        s = Scalars(lw, b)
        shift = s.select(s.math("isfinite", m), m, zero)

        def sum_step(ib, r, c):
            si = Scalars(lw, ib)
            return [si.add(c[0], si.math("exp", si.sub(load(ib, x, [i, r[0]]), shift)))]

        (total,) = lw.for_nest([classes], [zero], sum_step, b)
        log_total = s.math("log", total)
        if hard:
            label = s.cast(load(b, labels, [i]), I64)
            ok = s.and_(s.cmp("ge", label, lw.constant(0, I64)),
                        s.cmp("lt", label, n_classes))
            at = s.select(ok, s.cast(label, classes.type), lw.index(0))
            term = s.sub(s.sub(load(b, x, [i, at]), shift), log_total)
            term = s.select(ok, term, zero)
        else:
            def dot_step(ib, r, c):
                si = Scalars(lw, ib)
                lsm = si.sub(si.sub(load(ib, x, [i, r[0]]), shift), log_total)
                return [si.add(c[0], si.mul(load(ib, labels, [i, r[0]]), lsm))]

            (term,) = lw.for_nest([classes], [zero], dot_step, b)
        return [s.add(carried[0], term)]

    (total,) = lw.for_nest([batch], [zero], row)
    store(lw.b, top.div(top.neg(total), count), out, [])


def _broadcast_shape(shapes: list[tuple]) -> tuple:
    """numpy's broadcast of static shapes with `?` (None): a static size other than 1 wins,
    else `?` if any, else 1."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[i - (rank - len(s))] for s in shapes if i - (rank - len(s)) >= 0]
        static = [d for d in dims if d is not None and d != 1]
        out.append(static[0] if static else None if None in dims else 1)
    return tuple(out)


@lowers("graph.mse")
def lower_mse(lw: FunctionLowering, op: Operation) -> None:
    p, q = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    t = p.type.element
    shape = _broadcast_shape([p.type.shape, q.type.shape])
    sizes = broadcast_sizes(lw, shape, [p, q])
    read_p = Broadcast(lw, p, shape, sizes=sizes)
    read_q = Broadcast(lw, q, shape, sizes=sizes)
    out = lw.dest(op.results[0], [])
    top = Scalars(lw, lw.b)
    n = lw.index(1)
    for size in sizes:
        n = size if n is lw.index(1) else top.mul(n, size)
    count = top.count(n, t)

    def step(b: Builder, ivs: list[Value], carried: list[Value]) -> list[Value]:
        s = Scalars(lw, b)
        d = s.sub(read_p.load(b, ivs), read_q.load(b, ivs))
        return [s.add(carried[0], s.mul(d, d))]

    (total,) = lw.for_nest(sizes, [lw.constant(0.0, t)], step)
    store(lw.b, top.div(total, count), out, [])
