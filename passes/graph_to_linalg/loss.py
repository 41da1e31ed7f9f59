"""Rules for the ops of graph/loss.py: softmax, log_softmax, cross_entropy and mse, as
reduction and elementwise `linalg.generic`s, summing with `core.Accumulator` (its docstring
has the bound).

- softmax and log_softmax read their input twice, where the numpy reference (graph/loss.py)
  reads it three times: the maximum m (a reduction generic from -inf), then one reduction
  generic that sums `exp(x - shift)` (shift = m, or 0 where m is not finite) wide with
  `core.Accumulator` and also stores, per element, what the last step needs: softmax's
  `e = exp(x - shift)`, log_softmax's `z = x - shift`. That output is indexed by every
  loop, the reduction's too (`(d0, d1) -> (d0, d1)` under `["parallel", "reduction"]`), so
  each point writes its own element (the loop level stores it every iteration). A small
  elementwise generic rounds once per slice what the last step needs from the wide sum S
  (softmax: its reciprocal 1 / S; log_softmax: log S), and the last generic reads the
  stored tensor, not x, and overwrites it in place (it is that generic's `outs`, its
  element the output block argument, so `bufferize` gives the result the stored tensor's
  buffer): `e * (1 / S)` or `z - log S`. The exponentials and the wide sum are the
  reference's (graph/loss.py) bit for bit: the same f32 exponential, computed once instead
  of twice, the same wide sum in the same order. Why: the exponential is the costly part
  of a softmax, and a third sweep over x is memory traffic (issue 13: at most two passes
  over the input). The shift is recomputed in each body from m (a select), rather than
  stored in a tensor of its own.
- softmax multiplies by the reciprocal where the reference divides: a vector division
  costs 5-10 times a multiplication (AVX-512 `vdivps` against `vmulps`), 0.25 ms of a
  4096 x 1024 f32 softmax. The error bound is the division's: the reference rounds S to
  the element type and then the quotient, `e / S (1 + d1)^-1 (1 + d2)`; this rounds the
  wide reciprocal once and then the product, `e / S (1 + d1) (1 + d2)`, |d1|, |d2| <= u
  (half an ulp) either way, so both are within about one ulp of e / S, and they differ
  from each other by at most one ulp. With a finite maximum, S is at least 1 (the
  maximum's own term) and at most n (every term is at most 1), so 1 / S is a normal number
  of f32 or f64; f16 (and bf16, for symmetry with it) keep the division, since 1 / S is
  subnormal in f16 for rows over 2^14 elements. Specials agree with the quotient's: a row
  of -inf has S = 0 and gives 0 * inf = NaN, as 0 / 0; a +inf element makes S = +inf and
  1 / S = 0, so inf * 0 = NaN and finite * 0 = 0, as inf / inf and finite / inf; NaN stays
  NaN.
- cross_entropy, logits [B, C]: the row maximum and the wide sum of exponentials as above,
  log_sum rounded per row; then the row terms and their sum over the batch in one
  reduction generic into a 0-d wide output, and `-(sum) / B` rounded once.
  Integer labels: the term is `(x[b, label] - shift) - log_sum`, the logit read with
  `tensor.extract` at the label, after a `graph.check` that the label is in [0, C)
  (numpy's message); the index is clamped to 0 when it is not, so nothing out of range is
  read. Float targets [B, C]: the terms `labels[b, c] * ((x[b, c] - shift) - log_sum)`
  over both axes, each widened and added in the same wide sum.
- mse: `sum((p - q)^2) / n` over the broadcast shape of the operands (read as elementwise
  operands are, `core.Read`), the difference taken in the accumulation type, then rounded.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.types import I64, INDEX, FloatType
from irkit.dialects.graph import TensorSpec, checked_axis
from irkit.dialects.linalg import PARALLEL, REDUCTION, IndexOp
from irkit.dialects.tensor import ExtractOp
from irkit.passes.graph_to_linalg.core import (
    Accumulator, FunctionConversion, Read, broadcast_shape, broadcast_sizes, converts,
    identity_map, projection, read_all,
)
from irkit.passes.graph_to_linalg.reduce import (
    kept_axes, lowest, reduce_generic, reduced_sizes, reduced_type,
)


def _shift(s, m):
    """The maximum to subtract: m, or 0 where it is not finite."""
    return s.select(s.isfinite(m), m, s.const(0.0, m))


def slice_max(cv: FunctionConversion, x: Value, axis: int) -> Value:
    """The maximum of `x` along `axis`, from -inf (so an empty axis gives -inf)."""
    init = cv.filled(reduced_type(x, (axis,)), reduced_sizes(cv, x, (axis,)),
                     lowest(x.type.element, -1))
    return reduce_generic(cv, x, (axis,), [init], lambda s, a: [s.max(a[1], a[0])])[0]


def exp_sum(cv: FunctionConversion, acc: Accumulator, x: Value, axis: int, m: Value,
            keep: str | None = None) -> list[Value]:
    """The carried tensors of the sum of `exp(x - shift(m))` along `axis`; with `keep`
    ("exp" or "shifted"), then one more tensor of x's shape holding each element's
    `exp(x - shift)` or `x - shift`, stored as the sum goes (see the module docstring)."""
    rank = x.type.rank
    outs = acc.outputs(cv, reduced_type(x, (axis,)).shape, reduced_sizes(cv, x, (axis,)))
    row_map = projection(rank, kept_axes(rank, (axis,)))
    n = acc.count
    maps = [identity_map(rank), row_map] + [row_map] * n
    if keep is not None:
        outs.append(cv.empty(x.type, cv.sizes(x)))
        maps.append(identity_map(rank))

    def body(s, args):
        shifted = s.sub(args[0], _shift(s, args[1]))
        e = s.exp(shifted)
        stored = [] if keep is None else [e if keep == "exp" else shifted]
        return acc.add(s, args[2:2 + n], e) + stored

    iterators = [REDUCTION if a == axis else PARALLEL for a in range(rank)]
    return cv.generic([x, m], outs, maps, iterators, body)


def _softmax(cv: FunctionConversion, op: Operation, log: bool) -> list[Value]:
    x, t = op.operand, op.result.type
    axis = checked_axis(op.props()["axis"], TensorSpec.of(x.type))
    rank = x.type.rank
    acc = Accumulator(t.element)
    m = slice_max(cv, x, axis)
    *carried, stored = exp_sum(cv, acc, x, axis, m, keep="shifted" if log else "exp")
    row_type = reduced_type(x, (axis,))
    scale = not log and t.element.width >= 32   # e * (1 / sum): see the module docstring
    if log:
        total = acc.finish(cv, carried, row_type, lambda s, v: s.log(v))
    elif scale:
        total = acc.finish(cv, carried, row_type, lambda s, v: s.div(s.const(1.0, v), v))
    else:
        total = acc.finish(cv, carried, row_type)
    row_map = projection(rank, kept_axes(rank, (axis,)))

    def body(s, args):                          # in place: the stored element is the output's
        tot, v = args
        if log:
            return [s.sub(v, tot)]
        return [s.mul(v, tot) if scale else s.div(v, tot)]

    return cv.generic([total], [stored], [row_map, identity_map(rank)], [PARALLEL] * rank,
                      body)


@converts("graph.softmax")
def convert_softmax(cv: FunctionConversion, op: Operation) -> list[Value]:
    return _softmax(cv, op, log=False)


@converts("graph.log_softmax")
def convert_log_softmax(cv: FunctionConversion, op: Operation) -> list[Value]:
    return _softmax(cv, op, log=True)


@converts("graph.cross_entropy")
def convert_cross_entropy(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, labels, t = op.logits, op.labels, op.result.type
    et = t.element
    acc = Accumulator(et)
    batch, classes = cv.sizes(x)
    m = slice_max(cv, x, 1)
    log_sum = acc.finish(cv, exp_sum(cv, acc, x, 1, m), reduced_type(x, (1,)),
                         lambda s, v: s.log(v))
    outs = acc.outputs(cv, (), [])
    n = acc.count
    top = cv.scalars()
    if isinstance(labels.type.element, FloatType):
        # float targets: sum over (b, c) of labels[b, c] * ((x[b, c] - shift) - log_sum[b])
        row = projection(2, [0])

        def soft(s, args):
            elem, target, mx, ls = args[:4]
            lsm = s.sub(s.sub(elem, _shift(s, mx)), ls)
            return acc.add(s, args[4:4 + n], s.mul(target, lsm))

        maps = [identity_map(2), identity_map(2), row, row] + [projection(2, [])] * n
        carried = cv.generic([x, labels, m, log_sum], outs, maps, [REDUCTION] * 2, soft)
    else:
        n_classes = top.cast(classes, I64)

        def hard(s, args):
            label, mx, ls = args[:3]
            wide = s.cast(label, I64)
            ok = s.and_(s.cmp("ge", wide, s.const(0, I64)), s.cmp("lt", wide, n_classes))
            cv.check(ok, wide, n_classes, "label {value} is out of range for {bound} classes",
                     s.b)
            at = s.select(ok, s.cast(wide, INDEX), s.const(0, INDEX))      # clamped
            i = s.b.create(IndexOp, dim=IntegerAttr(0, I64)).result
            picked = s.b.create(ExtractOp, x, [i, at]).result
            return acc.add(s, args[3:3 + n], s.sub(s.sub(picked, _shift(s, mx)), ls))

        row = projection(1, [0])
        maps = [row, row, row] + [projection(1, [])] * n
        carried = cv.generic([labels, m, log_sum], outs, maps, [REDUCTION], hard)
    count = top.cast(batch, acc.type)
    return [acc.finish(cv, carried, t, lambda s, v: s.div(s.neg(v), count))]


@converts("graph.mse")
def convert_mse(cv: FunctionConversion, op: Operation) -> list[Value]:
    p, q, t = op.pred, op.target, op.result.type
    acc = Accumulator(t.element)
    shape = broadcast_shape(p.type.shape, q.type.shape)
    sizes = broadcast_sizes(cv, shape, [p, q])
    rank = len(shape)
    reads = [Read(cv, v, shape, sizes) for v in (p, q)]
    inputs = [r.v for r in reads if r.kind == "input"]
    outs = acc.outputs(cv, (), [])
    n = acc.count

    def body(s, args):
        a, b = read_all(reads, args[:len(inputs)], s)
        d = s.sub(acc.widen(s, a), acc.widen(s, b))
        return acc.add(s, args[len(inputs):len(inputs) + n], s.mul(d, d))

    maps = [r.map for r in reads if r.kind == "input"] + [projection(rank, [])] * n
    carried = cv.generic(inputs, outs, maps, [REDUCTION] * rank, body, domain=sizes)
    top = cv.scalars()
    total = cv.index(1)
    for size in sizes:
        total = size if total is cv.index(1) else top.mul(total, size)
    count = top.cast(total, acc.type)
    return [acc.finish(cv, carried, t, lambda s, v: s.div(v, count))]


__all__ = ["slice_max", "exp_sum"]
