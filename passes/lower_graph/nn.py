"""Lowerings of the layers of graph/nn.py and their backward ops (graph/nn_grad.py):
convolution, pooling and normalization as loop nests that compute what the ops' numpy
`evaluate`s compute. Every sum is an `accumulate.Accumulator` (floats carried in f64, f64
compensated, rounded once: more accurate than numpy's blocked or pairwise sums); the
factors of a convolution's products are widened too, so that each product is exact.

- `conv2d` (NCHW input, OIHW weight): a `loop.parallel` over the result, a `loop.for` nest
  over (C, KH, KW) carrying the sum. Zero padding is not materialized: a tap that falls in
  the padding reads the input at a clamped (in-bounds) index and contributes 0 through a
  `select`, so no padded copy and no `loop.if` in the inner loop (with no padding every tap
  is in bounds and neither is emitted).
- `conv2d_backprop_input`: the transpose, written as a gather so that it stays parallel
  over dx: dx[n, c, h, w] = sum over (o, di, dj) of dy[n, o, oi, oj] * w[o, c, di, dj]
  where h + ph - di = oi * sh with oi in [0, OH) (likewise along w); a tap that matches no
  window contributes 0 (the same clamp-and-select).
- `conv2d_backprop_filter`: dw[o, c, di, dj] = sum over (n, i, j) of dy * xpad, parallel
  over dw.
- `max_pool2d`, `avg_pool2d`: parallel over the result, a `loop.for` over the window (no
  padding: pooling windows are always in bounds). max uses IEEE `maximum` (numpy's
  `np.maximum`: NaN propagates); avg divides the wide sum by kh*kw, then rounds.
- `max_pool2d_grad`, `avg_pool2d_grad` scatter into overlapping windows, so the output is
  zeroed and then accumulated with `loop.parallel` over (N, C) only and sequential
  `loop.for`s over the windows (in the element type: an element gets at most
  ceil(kh/sh) * ceil(kw/sw) contributions, too few to lose precision). max routes each
  window's gradient to its first maximum in row-major order (a NaN counts as the maximum,
  as `_first_max` does);
  `max_pool2d_grad_grad` gathers the tangent at that same tap.
- `batchnorm`: one parallel loop, per element `(x - mean) * (gamma / sqrt(var + eps)) +
  beta` with the parameters read at the channel index (axis 1).
- `layernorm`: parallel over the other axes; along the axis, the mean, then the mean of the
  squared deviations (two passes, as the reference does to avoid cancellation; both and
  the square root in the accumulation type, rounded once), then the normalized, scaled and
  shifted store in the element type.

Output sizes that are `?` are computed at run time with numpy's formula
`(size + 2*pad - kernel) // stride + 1` in `index` arithmetic.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.dialects.graph import norm_axis
from irkit.passes.lower_graph.accumulate import Accumulator
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.scalar import emit
from irkit.passes.lower_graph.elementwise import fill, load, store
from irkit.passes.lower_graph.scalar import Scalars


# ----- shared helpers -------------------------------------------------------------------------


def _window_props(op: Operation) -> tuple[tuple[int, int], tuple[int, int]]:
    """(kernel, stride) of a pooling op (stride defaults to the kernel)."""
    p = op.props()
    kernel = tuple(p["kernel"])
    stride = tuple(p["stride"]) if p["stride"] else kernel
    return kernel, stride


def _conv_props(op: Operation) -> tuple[tuple[int, int], tuple[int, int]]:
    p = op.props()
    return tuple(p["stride"]), tuple(p["padding"])


def _out_dim(lw: FunctionLowering, static, size: Value, kernel: Value, stride: int,
             pad: int) -> Value:
    """The window count along one axis: `static` when the result type knows it, else
    (size + 2*pad - kernel) // stride + 1 computed at the top level."""
    if static is not None:
        return lw.index(static)
    s = Scalars(lw, lw.b)
    padded = s.add(size, lw.index(2 * pad)) if pad else size
    span = s.sub(padded, kernel)
    if stride != 1:
        span = emit(lw.b, "arith.divsi", span, lw.index(stride))
    return s.add(span, lw.index(1))


def _affine(s: Scalars, lw: FunctionLowering, i: Value, stride: int, d: Value,
            offset: int) -> Value:
    """i * stride + d - offset (index)."""
    v = s.mul(i, lw.index(stride)) if stride != 1 else i
    v = s.add(v, d)
    return s.sub(v, lw.index(offset)) if offset else v


def _in_range(s: Scalars, lw: FunctionLowering, v: Value, size: Value) -> Value:
    """0 <= v < size (i1)."""
    return s.and_(s.cmp("ge", v, lw.index(0)), s.cmp("lt", v, size))


def _clamp(s: Scalars, lw: FunctionLowering, v: Value, size: Value) -> Value:
    """v clamped into [0, size - 1]: an index that is safe to load even when unused."""
    return s.min(s.max(v, lw.index(0)), s.sub(size, lw.index(1)))


def _guarded_load(s: Scalars, lw: FunctionLowering, b: Builder, buf: Value,
                  idx: list, checks: list[tuple[int, Value]]) -> Value:
    """buf[idx], or 0 where one of `checks` (axis, size) puts idx[axis] out of [0, size):
    the clamped index is loaded and the value replaced by a `select`."""
    if not checks:
        return load(b, buf, idx)
    ok = None
    idx = list(idx)
    for axis, size in checks:
        inside = _in_range(s, lw, idx[axis], size)
        ok = inside if ok is None else s.and_(ok, inside)
        idx[axis] = _clamp(s, lw, idx[axis], size)
    x = load(b, buf, idx)
    return s.select(ok, x, lw.constant(0, buf.type.element))


# ----- convolution ----------------------------------------------------------------------------


@lowers("graph.conv2d")
def lower_conv2d(lw: FunctionLowering, op: Operation) -> None:
    x, w = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    (sh, sw), (ph, pw) = _conv_props(op)
    rshape = op.results[0].type.shape
    n, c, h, wd = lw.sizes(x)
    o, _, kh, kw = lw.sizes(w)
    oh = _out_dim(lw, rshape[2], h, kh, sh, ph)
    ow = _out_dim(lw, rshape[3], wd, kw, sw, pw)
    sizes = [n if rshape[0] is None else lw.index(rshape[0]),
             o if rshape[1] is None else lw.index(rshape[1]), oh, ow]
    out = lw.dest(op.results[0], sizes)
    acc = Accumulator(lw, out.type.element)
    checks = [(2, h)] * bool(ph) + [(3, wd)] * bool(pw)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, oi, i, j = ivs

        def product(ib: Builder, r: list[Value]) -> Value:
            s = Scalars(lw, ib)
            ci, di, dj = r
            hi = _affine(s, lw, i, sh, di, ph)
            wi = _affine(s, lw, j, sw, dj, pw)
            xv = _guarded_load(s, lw, ib, x, [ni, ci, hi, wi], checks)
            return acc.product(s, xv, load(ib, w, [oi, ci, di, dj]))

        total = acc.sum([c, kh, kw], product, b)
        store(b, acc.round(Scalars(lw, b), total), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.conv2d_backprop_input")
def lower_conv2d_backprop_input(lw: FunctionLowering, op: Operation) -> None:
    dy, w, x = (lw.buffer(v) for v in op.operands)
    (sh, sw), (ph, pw) = _conv_props(op)
    sizes = lw.sizes(x)
    _, c, h, wd = sizes
    _, _, oh, ow = lw.sizes(dy)
    o, _, kh, kw = lw.sizes(w)
    out = lw.dest(op.results[0], sizes)
    t = out.type.element

    def window(s: Scalars, pos: Value, d: Value, stride: int, pad: int, count: Value):
        """(window index, whether tap d of that window covers pos)."""
        v = s.sub(s.add(pos, lw.index(pad)), d) if pad else s.sub(pos, d)
        if stride == 1:
            return v, _in_range(s, lw, v, count)
        q = emit(s.b, "arith.divsi", v, lw.index(stride))
        r = emit(s.b, "arith.remsi", v, lw.index(stride))
        ok = s.and_(s.cmp("eq", r, lw.index(0)), _in_range(s, lw, q, count))
        ok = s.and_(ok, s.cmp("ge", v, lw.index(0)))
        return q, ok

    acc = Accumulator(lw, t)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, ci, hi, wi = ivs

        def product(ib: Builder, r: list[Value]) -> Value:
            s = Scalars(lw, ib)
            oc, di, dj = r
            qi, ok_i = window(s, hi, di, sh, ph, oh)
            qj, ok_j = window(s, wi, dj, sw, pw, ow)
            ok = s.and_(ok_i, ok_j)
            g = load(ib, dy, [ni, oc, _clamp(s, lw, qi, oh), _clamp(s, lw, qj, ow)])
            g = s.select(ok, g, lw.constant(0, t))
            return acc.product(s, g, load(ib, w, [oc, ci, di, dj]))

        total = acc.sum([o, kh, kw], product, b)
        store(b, acc.round(Scalars(lw, b), total), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.conv2d_backprop_filter")
def lower_conv2d_backprop_filter(lw: FunctionLowering, op: Operation) -> None:
    x, dy, w = (lw.buffer(v) for v in op.operands)
    (sh, sw), (ph, pw) = _conv_props(op)
    sizes = lw.sizes(w)
    n, _, h, wd = lw.sizes(x)
    _, _, oh, ow = lw.sizes(dy)
    out = lw.dest(op.results[0], sizes)
    acc = Accumulator(lw, out.type.element)
    checks = [(2, h)] * bool(ph) + [(3, wd)] * bool(pw)

    def body(b: Builder, ivs: list[Value]) -> None:
        oc, ci, di, dj = ivs

        def product(ib: Builder, r: list[Value]) -> Value:
            s = Scalars(lw, ib)
            ni, i, j = r
            hi = _affine(s, lw, i, sh, di, ph)
            wi = _affine(s, lw, j, sw, dj, pw)
            xv = _guarded_load(s, lw, ib, x, [ni, ci, hi, wi], checks)
            return acc.product(s, load(ib, dy, [ni, oc, i, j]), xv)

        total = acc.sum([n, oh, ow], product, b)
        store(b, acc.round(Scalars(lw, b), total), out, ivs)

    lw.parallel_nest(sizes, body)


# ----- pooling --------------------------------------------------------------------------------


def _pool_sizes(lw: FunctionLowering, x: Value, kernel, stride, rshape) -> list[Value]:
    n, c, h, wd = lw.sizes(x)
    return [n, c,
            _out_dim(lw, rshape[2], h, lw.index(kernel[0]), stride[0], 0),
            _out_dim(lw, rshape[3], wd, lw.index(kernel[1]), stride[1], 0)]


def _tap(s: Scalars, lw: FunctionLowering, i: Value, j: Value, di: Value, dj: Value,
         stride) -> tuple[Value, Value]:
    return _affine(s, lw, i, stride[0], di, 0), _affine(s, lw, j, stride[1], dj, 0)


@lowers("graph.max_pool2d", "graph.avg_pool2d")
def lower_pool2d(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    kernel, stride = _window_props(op)
    sizes = _pool_sizes(lw, x, kernel, stride, op.results[0].type.shape)
    out = lw.dest(op.results[0], sizes)
    t = out.type.element
    is_max = op.name == "graph.max_pool2d"
    window = [lw.index(kernel[0]), lw.index(kernel[1])]
    acc = Accumulator(lw, t)
    count = lw.constant(float(kernel[0] * kernel[1]), acc.type)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, ci, i, j = ivs

        def tap(ib: Builder, r: list[Value]) -> Value:
            hi, wi = _tap(Scalars(lw, ib), lw, i, j, r[0], r[1], stride)
            return load(ib, x, [ni, ci, hi, wi])

        def max_step(ib: Builder, r: list[Value], c: list[Value]) -> list[Value]:
            return [Scalars(lw, ib).max(c[0], tap(ib, r))]

        s = Scalars(lw, b)
        if is_max:
            (y,) = lw.for_nest(window, [lw.constant(float("-inf"), t)], max_step, b)
        else:
            y = acc.round(s, s.div(acc.sum(window, tap, b), count))
        store(b, y, out, ivs)

    lw.parallel_nest(sizes, body)


def _first_max(lw: FunctionLowering, b: Builder, x: Value, ni, ci, i, j, kernel,
               stride) -> tuple[Value, Value]:
    """(di, dj) of the first maximum of window (i, j) in row-major order, a NaN counting as
    the maximum (graph/nn_grad.py's `_first_max`): the first tap taken, then a later one when
    it is greater or the first NaN."""
    s0 = Scalars(lw, b)
    first = load(b, x, [ni, ci, _affine(s0, lw, i, stride[0], lw.index(0), 0),
                        _affine(s0, lw, j, stride[1], lw.index(0), 0)])
    zero = lw.index(0)

    def step(ib: Builder, r: list[Value], c: list[Value]) -> list[Value]:
        s = Scalars(lw, ib)
        best, bi, bj = c
        hi, wi = _tap(s, lw, i, j, r[0], r[1], stride)
        v = load(ib, x, [ni, ci, hi, wi])
        take = s.or_(s.cmp("gt", v, best), s.and_(s.isnan(v), s.not_(s.isnan(best))))
        return [s.select(take, v, best), s.select(take, r[0], bi), s.select(take, r[1], bj)]

    _, bi, bj = lw.for_nest([lw.index(kernel[0]), lw.index(kernel[1])], [first, zero, zero],
                            step, b)
    return bi, bj


@lowers("graph.max_pool2d_grad")
def lower_max_pool2d_grad(lw: FunctionLowering, op: Operation) -> None:
    x, dy = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    kernel, stride = _window_props(op)
    xs = lw.sizes(x)
    out = lw.dest(op.results[0], xs)
    fill(lw, out, xs, lw.constant(0, out.type.element))
    _, _, oh, ow = lw.sizes(dy)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, ci = ivs

        def window(ib: Builder, r: list[Value], c: list[Value]) -> list[Value]:
            i, j = r
            di, dj = _first_max(lw, ib, x, ni, ci, i, j, kernel, stride)
            s = Scalars(lw, ib)
            hi, wi = _tap(s, lw, i, j, di, dj, stride)
            g = load(ib, dy, [ni, ci, i, j])
            store(ib, s.add(load(ib, out, [ni, ci, hi, wi]), g), out, [ni, ci, hi, wi])
            return []

        lw.for_nest([oh, ow], [], window, b)

    lw.parallel_nest(xs[:2], body)


@lowers("graph.max_pool2d_grad_grad")
def lower_max_pool2d_grad_grad(lw: FunctionLowering, op: Operation) -> None:
    x, tan = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    kernel, stride = _window_props(op)
    sizes = _pool_sizes(lw, x, kernel, stride, op.results[0].type.shape)
    out = lw.dest(op.results[0], sizes)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, ci, i, j = ivs
        di, dj = _first_max(lw, b, x, ni, ci, i, j, kernel, stride)
        hi, wi = _tap(Scalars(lw, b), lw, i, j, di, dj, stride)
        store(b, load(b, tan, [ni, ci, hi, wi]), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.avg_pool2d_grad")
def lower_avg_pool2d_grad(lw: FunctionLowering, op: Operation) -> None:
    dy, x = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    kernel, stride = _window_props(op)
    xs = lw.sizes(x)
    out = lw.dest(op.results[0], xs)
    t = out.type.element
    fill(lw, out, xs, lw.constant(0, t))
    _, _, oh, ow = lw.sizes(dy)
    count = lw.constant(float(kernel[0] * kernel[1]), t)

    def body(b: Builder, ivs: list[Value]) -> None:
        ni, ci = ivs

        def window(ib: Builder, r: list[Value], c: list[Value]) -> list[Value]:
            i, j = r
            share = Scalars(lw, ib).div(load(ib, dy, [ni, ci, i, j]), count)

            def tap(tb: Builder, d: list[Value], c2: list[Value]) -> list[Value]:
                s = Scalars(lw, tb)
                hi, wi = _tap(s, lw, i, j, d[0], d[1], stride)
                idx = [ni, ci, hi, wi]
                store(tb, s.add(load(tb, out, idx), share), out, idx)
                return []

            lw.for_nest([lw.index(kernel[0]), lw.index(kernel[1])], [], tap, ib)
            return []

        lw.for_nest([oh, ow], [], window, b)

    lw.parallel_nest(xs[:2], body)


# ----- normalization --------------------------------------------------------------------------


@lowers("graph.batchnorm")
def lower_batchnorm(lw: FunctionLowering, op: Operation) -> None:
    x, mean, var, gamma, beta = (lw.buffer(v) for v in op.operands)
    xs = lw.sizes(x)
    out = lw.dest(op.results[0], xs)
    t = out.type.element
    eps = lw.constant(op.props()["epsilon"], t)

    def body(b: Builder, ivs: list[Value]) -> None:
        s = Scalars(lw, b)
        ch = [ivs[1]]
        scale = s.div(load(b, gamma, ch), s.math("sqrt", s.add(load(b, var, ch), eps)))
        y = s.add(s.mul(s.sub(load(b, x, ivs), load(b, mean, ch)), scale), load(b, beta, ch))
        store(b, y, out, ivs)

    lw.parallel_nest(xs, body)


@lowers("graph.layernorm")
def lower_layernorm(lw: FunctionLowering, op: Operation) -> None:
    x, gamma, beta = (lw.buffer(v) for v in op.operands)
    rank = x.type.rank
    p = op.props()
    axis = norm_axis(p["axis"], rank)
    xs = lw.sizes(x)
    out = lw.dest(op.results[0], xs)
    acc = Accumulator(lw, out.type.element)
    eps = lw.constant(p["epsilon"], acc.type)
    count = Scalars(lw, lw.b).count(xs[axis], acc.type)
    others = [a for a in range(rank) if a != axis]

    def body(b: Builder, ivs: list[Value]) -> None:
        def at(k: Value) -> list[Value]:
            it = iter(ivs)
            return [k if a == axis else next(it) for a in range(rank)]

        s = Scalars(lw, b)
        wide_mu = s.div(acc.sum([xs[axis]], lambda ib, r: load(ib, x, at(r[0])), b), count)

        def square(ib, r):                      # deviations from the wide mean, squared wide
            si = Scalars(lw, ib)
            d = si.sub(acc.widen(si, load(ib, x, at(r[0]))), wide_mu)
            return si.mul(d, d)

        var = s.div(acc.sum([xs[axis]], square, b), count)
        std = acc.round(s, s.math("sqrt", s.add(var, eps)))
        mu = acc.round(s, wide_mu)

        def norm_step(ib, r, c):
            si = Scalars(lw, ib)
            k = r[0]
            y = si.div(si.sub(load(ib, x, at(k)), mu), std)
            store(ib, si.add(si.mul(y, load(ib, gamma, [k])), load(ib, beta, [k])), out, at(k))
            return []

        lw.for_nest([xs[axis]], [], norm_step, b)

    lw.parallel_nest([xs[a] for a in others], body)
