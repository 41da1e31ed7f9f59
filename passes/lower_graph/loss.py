"""Lowerings of the losses of graph/loss.py: `graph.cross_entropy` and `graph.mse` (softmax
and log_softmax are in `reduce.py`, with the reductions they are made of).

Both are one scalar, a sum over everything: a single `loop.for` nest carrying the sum (the
iterations are not independent), whose result is stored into the 0-d output.

- cross_entropy, per row b of the logits: the log-softmax of the row computed as
  `log_softmax` in graph/loss.py does (the maximum m, shifted by 0 where not finite; then
  `log(sum(exp(x - m)))`), two `loop.for`s over the classes; then the row's term
  `(x[b, label] - m) - log_sum` for integer labels, or `sum_c labels[b, c] * ((x[b, c] - m)
  - log_sum)` for float targets (a third loop). The loss is `-(sum of terms) / B`, negated
  then divided as numpy does (B = 0 gives -0/0 = NaN, as there).
  An integer label outside [0, C) is the interpreter's error ("label 7 is out of range for 4
  classes"), recorded by a `memory.check` (`FunctionLowering.check`) for the caller to
  raise; the logit is then not read (a `loop.if`), so no memory out of range is touched.
- mse: `sum((pred - target)^2) / n` over the broadcast shape of the two operands (read as
  elementwise operands are, `elementwise.Broadcast`), n its element count converted to the
  accumulation type (n = 0 gives NaN, as numpy).

Every sum (over the classes, over the batch, over the elements of mse) is an
`accumulate.Accumulator`: floats are summed in f64 (f64 compensated) and rounded once, after
the division by the count, more accurately than numpy's pairwise sum (bound in accumulate.py).
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import I64
from irkit.passes.lower_graph.accumulate import Accumulator
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import Broadcast, broadcast_sizes, load, store
from irkit.passes.lower_graph.reduce import lowest
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
    acc = Accumulator(lw, t)
    count = top.count(batch, acc.type)
    zero = lw.constant(0.0, t)
    n_classes = top.cast(classes, I64) if hard else None

    def row(b: Builder, ivs: list[Value], carried: list[Value]) -> list[Value]:
        (i,) = ivs

        def max_step(ib, r, c):
            return [Scalars(lw, ib).max(c[0], load(ib, x, [i, r[0]]))]

        (m,) = lw.for_nest([classes], [lw.constant(lowest(t, -1), t)], max_step, b)
        s = Scalars(lw, b)
        shift = s.select(s.math("isfinite", m), m, zero)

        def exp_term(ib, r):
            si = Scalars(lw, ib)
            return si.math("exp", si.sub(load(ib, x, [i, r[0]]), shift))

        log_total = acc.round(s, s.math("log", acc.sum([classes], exp_term, b)))
        if hard:
            label = s.cast(load(b, labels, [i]), I64)
            ok = s.and_(s.cmp("ge", label, lw.constant(0, I64)),
                        s.cmp("lt", label, n_classes))
            lw.check(ok, label, n_classes, "label {value} is out of range for {bound} classes",
                     op, b)
            at = s.cast(label, classes.type)
            (picked,) = lw.when(ok, lambda tb: [load(tb, x, [i, at])], lambda eb: [zero], b)
            term = s.sub(s.sub(picked, shift), log_total)
        else:
            def dot_term(ib, r):
                si = Scalars(lw, ib)
                lsm = si.sub(si.sub(load(ib, x, [i, r[0]]), shift), log_total)
                return si.mul(load(ib, labels, [i, r[0]]), lsm)

            term = acc.sum([classes], dot_term, b)          # kept wide
        return acc.add(s, carried, term)

    total = acc.result(top, lw.for_nest([batch], acc.inits(), row))
    store(lw.b, acc.round(top, top.div(top.neg(total), count)), out, [])


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
    acc = Accumulator(lw, t)
    n = lw.index(1)
    for size in sizes:
        n = size if n is lw.index(1) else top.mul(n, size)
    count = top.count(n, acc.type)

    def square(b: Builder, ivs: list[Value]) -> Value:
        """(p - q)^2 computed wide (f32 operands: p - q is exact in f64 unless their
        magnitudes are 2^29 apart, and the square adds one rounding, not three)."""
        s = Scalars(lw, b)
        d = s.sub(acc.widen(s, read_p.load(b, ivs)), acc.widen(s, read_q.load(b, ivs)))
        return s.mul(d, d)

    store(lw.b, acc.round(top, top.div(acc.sum(sizes, square), count)), out, [])
