"""Rules for the layers of graph/nn.py and their backward ops (graph/nn_grad.py):
convolution, pooling and normalization as structured kernels: every dot product and window
sum is a `core.Accumulator` (float32 factors multiplied in float32, the product widened and
added in an f64 output, rounded once by a following elementwise generic; f64 compensated),
and every kernel's operands are read through affine maps, so the interpreter runs each one
vectorized and the loop level can tile it. Layout NCHW; loops are named (n, c|o, i, j) for
an output point and (c|o, di, dj) or (n, i, j) for what it sums over.

- conv2d: a `linalg.generic` with `linalg.conv_2d_nchw_fchw`'s maps,
  `x[n, c, i*sh + di, j*sw + dj] * w[o, c, di, dj]` summed over (c, di, dj) into (n, o, i,
  j), the input zero-padded first (`tensor.pad`). Not the named op: it would multiply in
  its output's type, f64 here.
- conv2d_backprop_input: the transposed convolution as a convolution. The cotangent dy is
  spread into a zero canvas Z at stride (sh, sw) (`tensor.insert_slice` with strides, at
  row `oi*sh + KH-1-ph`), so that dx[n, c, h, w] is a stride-1 correlation of Z with the
  kernel flipped: the sum over (o, di, dj) of `Z[n, o, h + KH-1 - di, w + KW-1 - dj] *
  w[o, c, di, dj]` (an affine map with negative coefficients). The canvas has
  `H + KH - 1` rows; dy rows that only ever meet the padding (a padding of KH or more) are
  cut off first (`tensor.extract_slice`). Where the kernel's size is known only at run
  time the map cannot state `KH-1`: the weight is flipped into a tensor of its own first
  (a generic reading it with `tensor.extract`) and read at `h + di`.
- conv2d_backprop_filter: `dy[n, o, i, j] * xpad[n, c, i*sh + di, j*sw + dj]` summed over
  (n, i, j) into (o, c, di, dj), x padded as for conv2d.
- max_pool2d: `linalg.pooling_nchw_max` into -inf (`arith.maximumf`: NaN propagates, as
  `np.maximum`). avg_pool2d: `linalg.pooling_nchw_sum` into an f64 output (its body, `out +
  extf(x)`, is exactly the accumulator's), then one generic divides by kh*kw and rounds;
  f64 elements need the compensated sum, so a generic with the pooling maps.
- max_pool2d_grad, avg_pool2d_grad add into overlapping windows, which no output map can
  express (an element of dx belongs to several window points). They follow the reference
  (graph/nn_grad.py) tap by tap: dx starts as zeros, and for each kernel tap (di, dj), in
  row-major order, the strided view of dx that tap touches in every window
  (`tensor.extract_slice` at (di, dj), stride (sh, sw)) gets an all-parallel generic
  adding the tap's share, and goes back in place (`tensor.insert_slice`). The share is
  `dy / (kh*kw)` for avg, and for max `dy` where the window's first maximum is that tap,
  else 0. Sums are in the element type and in the reference's order (an element gets at
  most ceil(kh/sh) * ceil(kw/sw) terms).
- The first maximum of each window is a reduction over the taps carrying (best value, what
  goes with it): take a tap when it is the first, greater, or the first NaN (NaN counts as
  the maximum, ties keep the earlier tap, as `_first_max` in graph/nn_grad.py). For
  max_pool2d_grad it carries the tap's number (i64); for max_pool2d_grad_grad it carries
  the tangent at that tap, read through the same map as x, which is the whole op.
- batchnorm: one elementwise generic, per element `(x - mean) * (gamma / sqrt(var + eps)) +
  beta`, the parameters read at the channel (`(d0, d1, d2, d3) -> (d1)`).
- layernorm: two passes over x. One reduction generic gathers a slice's statistics as
  shifted sums (`S1 = sum(x - K)`, `S2 = sum((x - K)^2)`, K the slice's first element,
  wide), one small generic per slice turns them into `S1 / n` and `sqrt(var + eps)`, and
  the elementwise `(x - mean) / std * gamma + beta` (mean = K + S1/n, rounded once) is the
  second pass; `convert_layernorm` has the algorithm and its error bound.

Output sizes that are `?` are numpy's `(size + 2*pad - kernel) // stride + 1`, computed in
`index` arithmetic (no fewer than 0 windows).
"""

from __future__ import annotations

from typing import Callable, Sequence

from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineMap
from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.types import I64, INDEX, RankedTensorType
from irkit.dialects.graph import norm_axis
from irkit.dialects.linalg import PARALLEL, REDUCTION, IndexOp, make_pooling_nchw
from irkit.dialects.linalg.convolution import window_index
from irkit.dialects.tensor import extract, extract_slice, insert_slice, pad
from irkit.passes.graph_to_linalg.core import (
    Accumulator, FunctionConversion, converts, identity_map, parallel, projection,
)
from irkit.passes.graph_to_linalg.reduce import (
    kept_axes, reduce_generic, reduced_sizes, reduced_type,
)
from irkit.passes.graph_to_linalg.shape import IndexArith, as_type, static_or


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


def _conv_props(op: Operation) -> tuple[tuple[int, int], tuple[int, int]]:
    """(stride, padding) of a convolution or its backward ops."""
    p = op.props()
    return tuple(p["stride"]), tuple(p["padding"])


def _window_props(op: Operation) -> tuple[tuple[int, int], tuple[int, int]]:
    """(kernel, stride) of a pooling op (stride defaults to the kernel)."""
    p = op.props()
    kernel = tuple(p["kernel"])
    return kernel, tuple(p["stride"]) if p["stride"] else kernel


def window_count(cv: FunctionConversion, static, size: Value, kernel, stride: int,
                 padding: int) -> Value:
    """The number of windows along one axis: `static` when a type states it, else
    max((size + 2*padding - kernel) // stride + 1, 0) at `cv.b`."""
    if static is not None:
        return cv.index(static)
    ix = IndexArith(cv)
    span = ix.sub(ix.add(size, 2 * padding), kernel)
    return ix.value(ix.max(ix.add(ix.floordiv(span, stride), 1), 0))


def _pad_spatial(cv: FunctionConversion, x: Value, padding: tuple[int, int]) -> Value:
    """x with `padding` zero rows and columns on both sides (`tensor.pad`), or x itself."""
    ph, pw = padding
    if not (ph or pw):
        return x
    amounts = [0, 0, ph, pw]
    return pad(cv.b, x, amounts, amounts, cv.constant(0, x.type.element))


def _map(num_loops: int, *exprs) -> AffineMap:
    """A map from `num_loops` loops to `exprs` (ints name loops, else affine expressions)."""
    return AffineMap(num_loops, 0, tuple(AffineDim(e) if isinstance(e, int) else e
                                         for e in exprs))


def _loop_index(s, loop: int) -> Value:
    return s.b.create(IndexOp, dim=IntegerAttr(loop, I64)).result


def _dot(cv: FunctionConversion, t: RankedTensorType, sizes: Sequence[Value],
         inputs: Sequence[Value], maps: Sequence[AffineMap], num_reduced: int) -> Value:
    """The sum of `inputs[0] * inputs[1]` (read through `maps`) over the last `num_reduced`
    loops, the first t.rank loops being the result's: the accumulator's outputs, one
    generic, then the rounding one."""
    acc = Accumulator(t.element)
    outs = acc.outputs(cv, t.shape, sizes)
    loops = t.rank + num_reduced
    n = acc.count

    def body(s, args):
        return acc.add(s, args[2:2 + n], acc.product(s, args[0], args[1]))

    out_maps = [projection(loops, range(t.rank))] * n
    carried = cv.generic(list(inputs), outs, list(maps) + out_maps,
                         [PARALLEL] * t.rank + [REDUCTION] * num_reduced, body)
    return acc.finish(cv, carried, t)


# ---------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------


@converts("graph.conv2d")
def convert_conv2d(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, w, t = op.input, op.weight, op.result.type
    (sh, sw), padding = _conv_props(op)
    n, _, h, wd = cv.sizes(x)
    o, _, kh, kw = cv.sizes(w)
    sizes = static_or(cv, t, [n, o, window_count(cv, t.shape[2], h, kh, sh, padding[0]),
                              window_count(cv, t.shape[3], wd, kw, sw, padding[1])])
    xp = _pad_spatial(cv, x, padding)
    # loops: n=d0, o=d1, i=d2, j=d3, c=d4, di=d5, dj=d6
    maps = [_map(7, 0, 4, window_index(2, 5, sh, 1), window_index(3, 6, sw, 1)),
            _map(7, 1, 4, 5, 6)]
    return [_dot(cv, t, sizes, [xp, w], maps, 3)]


@converts("graph.conv2d_backprop_filter")
def convert_conv2d_backprop_filter(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, dy, w, t = op.input, op.grad, op.weight, op.result.type
    (sh, sw), padding = _conv_props(op)
    sizes = static_or(cv, t, cv.sizes(w))
    xp = _pad_spatial(cv, x, padding)
    # loops: o=d0, c=d1, di=d2, dj=d3, n=d4, i=d5, j=d6
    maps = [_map(7, 4, 0, 5, 6),
            _map(7, 4, 1, window_index(5, 2, sh, 1), window_index(6, 3, sw, 1))]
    return [_dot(cv, t, sizes, [dy, xp], maps, 3)]


def _canvas_axis(ix: IndexArith, size, rows, kernel, stride: int, padding: int) -> tuple:
    """Along one spatial axis of conv2d_backprop_input (input size `size`, `rows` cotangent
    rows, kernel `kernel`, all mixed): (the first dy row kept, how many, where the first
    lands in the canvas, the canvas's extent). dy row oi lands at `oi*stride + q0`,
    q0 = kernel-1-padding; a row landing below 0 or past `size + kernel - 2` never meets
    dx (its windows lie in the padding)."""
    q0 = ix.sub(ix.sub(kernel, 1), padding)
    first = ix.ceildiv(ix.max(ix.sub(0, q0), 0), stride)
    last = ix.min(rows, ix.add(ix.floordiv(ix.add(ix.sub(size, 1), padding), stride), 1))
    count = ix.max(ix.sub(last, first), 0)
    extent = ix.sub(ix.add(size, kernel), 1)
    # With no row kept, `first` and the landing row may lie past the ends: clamped, so
    # that even an empty window stays within its tensor.
    at = ix.min(ix.add(ix.mul(first, stride), q0), extent)
    return ix.min(first, rows), count, at, extent


def _flipped(cv: FunctionConversion, w: Value) -> Value:
    """The weight with its kernel reversed along both spatial axes, `w[o, c, KH-1-a, KW-1-b]`
    (a generic reading w with `tensor.extract`: the sizes are known only at run time)."""
    sizes = cv.sizes(w)
    ix = IndexArith(cv)
    last = [ix.value(ix.sub(sizes[a], 1)) for a in (2, 3)]

    def body(s, args):
        o, c, a, b = (_loop_index(s, k) for k in range(4))
        return [extract(s.b, w, [o, c, s.sub(last[0], a), s.sub(last[1], b)])]

    out = cv.empty(w.type, sizes)
    return cv.generic([], [out], [identity_map(4)], parallel(4), body)[0]


@converts("graph.conv2d_backprop_input")
def convert_conv2d_backprop_input(cv: FunctionConversion, op: Operation) -> list[Value]:
    dy, w, x, t = op.grad, op.weight, op.input, op.result.type
    stride, padding = _conv_props(op)
    ix = IndexArith(cv)
    sizes = static_or(cv, t, cv.sizes(x))
    dy_sizes = [ix.mixed(s) for s in cv.sizes(dy)]
    kernel = [ix.mixed(cv.size(w, a)) for a in (2, 3)]
    axes = [_canvas_axis(ix, ix.mixed(sizes[2 + k]), dy_sizes[2 + k], kernel[k], stride[k],
                         padding[k]) for k in range(2)]
    (fi, ni, oi, hz), (fj, nj, oj, wz) = axes
    window = dy_sizes[:2] + [ni, nj]
    canvas_sizes = [ix.value(v) for v in dy_sizes[:2] + [hz, wz]]
    canvas_type = RankedTensorType(tuple(v if isinstance(v, int) else None
                                         for v in dy_sizes[:2] + [hz, wz]), dy.type.element)
    canvas = cv.filled(canvas_type, canvas_sizes, 0)
    if 0 not in (ni, nj):                       # else no cotangent row meets dx: all zeros
        part = dy
        if (fi, fj) != (0, 0) or [ni, nj] != dy_sizes[2:]:
            part = extract_slice(cv.b, dy, [0, 0, fi, fj], window)
        canvas = insert_slice(cv.b, part, canvas, [0, 0, oi, oj], window, [1, 1, *stride])
    # loops: n=d0, c=d1, h=d2, w=d3, o=d4, di=d5, dj=d6
    if all(isinstance(k, int) for k in kernel):
        reversed_tap = [AffineBinary("add", AffineBinary("add", AffineDim(2 + k),
                                                         AffineBinary("mul", AffineDim(5 + k),
                                                                      AffineConst(-1))),
                                     AffineConst(kernel[k] - 1)) for k in range(2)]
        weight = w
    else:
        reversed_tap = [AffineBinary("add", AffineDim(2 + k), AffineDim(5 + k))
                        for k in range(2)]
        weight = _flipped(cv, w)
    maps = [_map(7, 0, 4, *reversed_tap), _map(7, 4, 1, 5, 6)]
    return [_dot(cv, t, sizes, [canvas, weight], maps, 3)]


# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------


def _pooled_sizes(cv: FunctionConversion, x: Value, like: RankedTensorType, kernel,
                  stride) -> list[Value]:
    """[N, C, OH, OW] of pooling x: static where `like` (the pooled result or cotangent's
    type) states them, else x's batch and channel sizes and numpy's window counts."""
    n, c, h, wd = cv.sizes(x)
    return static_or(cv, like, [n, c, window_count(cv, like.shape[2], h, kernel[0], stride[0], 0),
                                window_count(cv, like.shape[3], wd, kernel[1], stride[1], 0)])


def _window_operand(cv: FunctionConversion, kernel, element) -> Value:
    """A tensor of the window's shape: the pooling maps read loop extents from it (its
    values are never read), as MLIR's pooling ops take one."""
    return cv.empty(RankedTensorType(tuple(kernel), element), [])


def _pool_maps(stride) -> tuple[AffineMap, AffineMap]:
    """The input's and the window's maps over loops (n, c, i, j, di, dj)."""
    return (_map(6, 0, 1, window_index(2, 4, stride[0], 1), window_index(3, 5, stride[1], 1)),
            _map(6, 4, 5))


@converts("graph.max_pool2d")
def convert_max_pool2d(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.input, op.result.type
    kernel, stride = _window_props(op)
    sizes = _pooled_sizes(cv, x, t, kernel, stride)
    out = cv.filled(t, sizes, float("-inf"))
    window = _window_operand(cv, kernel, t.element)
    result = make_pooling_nchw(cv.b, "max", x, window, out, strides=stride).results[0]
    cv.know_sizes(result, sizes)
    return [result]


@converts("graph.avg_pool2d")
def convert_avg_pool2d(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.input, op.result.type
    kernel, stride = _window_props(op)
    sizes = _pooled_sizes(cv, x, t, kernel, stride)
    acc = Accumulator(t.element)
    outs = acc.outputs(cv, t.shape, sizes)
    window = _window_operand(cv, kernel, t.element)
    if acc.compensated:
        n = acc.count
        x_map, window_map = _pool_maps(stride)
        carried = cv.generic([x, window], outs, [x_map, window_map] + [projection(6, range(4))] * n,
                             [PARALLEL] * 4 + [REDUCTION] * 2,
                             lambda s, args: acc.add(s, args[2:2 + n], args[0]))
    else:
        carried = make_pooling_nchw(cv.b, "sum", x, window, outs[0], strides=stride).results
        cv.know_sizes(carried[0], sizes)
    count = float(kernel[0] * kernel[1])
    return [acc.finish(cv, list(carried), t, lambda s, v: s.div(v, s.const(count, v)))]


def first_max(cv: FunctionConversion, x: Value, kernel, stride, sizes: Sequence[Value],
              with_value: Value | None = None) -> Value:
    """Per window of x (pooled sizes `sizes`), what goes with its first maximum (see the
    module docstring): `with_value` at that tap (a tensor of x's shape), or, without it,
    the tap's number `di * kw + dj` as an i64 tensor."""
    et = x.type.element
    x_map, window_map = _pool_maps(stride)
    pooled = tuple(IndexArith(cv).known(v) for v in sizes)
    best = cv.filled(RankedTensorType(pooled, et), sizes, float("-inf"))
    carried_type = et if with_value is not None else I64
    other = cv.filled(RankedTensorType(pooled, carried_type), sizes, 0)
    inputs = [x] + ([with_value] if with_value is not None else []) + \
        [_window_operand(cv, kernel, et)]
    maps = [x_map] * (1 + (with_value is not None)) + [window_map] + \
        [projection(6, range(4))] * 2

    def body(s, args):
        v, prev_best, prev_other = args[0], args[-2], args[-1]
        di, dj = _loop_index(s, 4), _loop_index(s, 5)
        zero = s.const(0, INDEX)
        first = s.and_(s.cmp("eq", di, zero), s.cmp("eq", dj, zero))
        better = s.or_(s.cmp("gt", v, prev_best),
                       s.and_(s.isnan(v), s.not_(s.isnan(prev_best))))
        take = s.or_(first, better)
        if with_value is not None:
            carried = args[1]
        else:
            tap = s.add(s.mul(di, s.const(kernel[1], INDEX)), dj)
            carried = s.cast(tap, I64)
        return [s.select(take, v, prev_best), s.select(take, carried, prev_other)]

    results = cv.generic(inputs, [best, other], maps, [PARALLEL] * 4 + [REDUCTION] * 2, body)
    return results[1]


def _add_at_taps(cv: FunctionConversion, dx: Value, kernel, stride, pooled: Sequence[Value],
                 inputs: Sequence[Value], share: Callable) -> Value:
    """dx with, for each kernel tap (di, dj) in row-major order, `share(s, elements, tap)`
    added to the element that tap reads in each window (see the module docstring); the
    `inputs` have the pooled sizes `pooled`."""
    ix = IndexArith(cv)
    window = [ix.mixed(v) for v in pooled]
    strides = [1, 1, *stride]
    for di in range(kernel[0]):
        for dj in range(kernel[1]):
            offsets = [0, 0, di, dj]
            view = extract_slice(cv.b, dx, offsets, window, strides)
            tap = di * kernel[1] + dj

            def body(s, args, tap=tap):
                return [s.add(args[-1], share(s, args[:-1], tap))]

            updated = cv.generic(list(inputs), [view], [identity_map(4)] * (len(inputs) + 1),
                                 parallel(4), body)[0]
            dx = insert_slice(cv.b, updated, dx, offsets, window, strides)
    return dx


@converts("graph.max_pool2d_grad")
def convert_max_pool2d_grad(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, dy, t = op.input, op.grad, op.result.type
    kernel, stride = _window_props(op)
    sizes = static_or(cv, t, cv.sizes(x))
    pooled = _pooled_sizes(cv, x, dy.type, kernel, stride)
    taps = first_max(cv, x, kernel, stride, pooled)

    def share(s, args, tap):
        g, best = args
        return s.select(s.cmp("eq", best, s.const(tap, I64)), g, s.const(0, g))

    dx = _add_at_taps(cv, cv.filled(t, sizes, 0), kernel, stride, pooled, [dy, taps], share)
    cv.know_sizes(dx, sizes)
    return [dx]


@converts("graph.max_pool2d_grad_grad")
def convert_max_pool2d_grad_grad(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, tangent, t = op.input, op.tangent, op.result.type
    kernel, stride = _window_props(op)
    sizes = _pooled_sizes(cv, x, t, kernel, stride)
    return [as_type(cv, first_max(cv, x, kernel, stride, sizes, with_value=tangent), t, sizes)]


@converts("graph.avg_pool2d_grad")
def convert_avg_pool2d_grad(cv: FunctionConversion, op: Operation) -> list[Value]:
    dy, x, t = op.grad, op.input, op.result.type
    kernel, stride = _window_props(op)
    sizes = static_or(cv, t, cv.sizes(x))
    pooled = _pooled_sizes(cv, x, dy.type, kernel, stride)
    count = float(kernel[0] * kernel[1])

    def share(s, args, tap):
        (g,) = args
        return s.div(g, s.const(count, g))

    dx = _add_at_taps(cv, cv.filled(t, sizes, 0), kernel, stride, pooled, [dy], share)
    cv.know_sizes(dx, sizes)
    return [dx]


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------


@converts("graph.batchnorm")
def convert_batchnorm(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.input, op.result.type
    params = [op.mean, op.var, op.gamma, op.beta]
    rank = x.type.rank
    eps = op.props()["epsilon"]
    out = cv.empty(t, static_or(cv, t, cv.sizes(x)))

    def body(s, args):
        v, mean, var, gamma, beta = args[:5]
        scale = s.div(gamma, s.sqrt(s.add(var, s.const(eps, v))))
        return [s.add(s.mul(s.sub(v, mean), scale), beta)]

    maps = [identity_map(rank)] + [projection(rank, [1])] * 4 + [identity_map(rank)]
    return cv.generic([x] + params, [out], maps, parallel(rank), body)


def _first_along(rank: int, axis: int) -> AffineMap:
    """`(d0, ..., dn) -> (d0, .., 0, .., dn)`: a slice's first element along `axis`."""
    return AffineMap(rank, 0, tuple(AffineConst(0) if a == axis else AffineDim(a)
                                    for a in range(rank)))


@converts("graph.layernorm")
def convert_layernorm(cv: FunctionConversion, op: Operation) -> list[Value]:
    """Layer normalization in two passes over x: the slice statistics from shifted sums in
    one pass, then the normalization.

    Algorithm (per slice along the axis: n elements x_i, K = x_0, all sums in the
    accumulation type, f64 for every float type; f64 elements compensated):
      1. one reduction generic: d_i = wide(x_i) - wide(K); S1 += d_i, S2 += d_i * d_i.
         K is read through `_first_along`'s map, inside the loop over the axis, so an empty
         slice (n = 0) never loads it (the interpreter and the loop emitter run no point of
         an empty loop, and keep a load whose index is not a bare loop index below loops
         that may be empty);
      2. per slice: c = S1 / n and std = sqrt(max((S2 - S1 * S1 / n) / n, 0) + eps),
         std rounded once to the element type (n = 0 gives NaN, as the reference's 0/0,
         for a slice with no element to write);
      3. the elementwise `(x - mean) / std * gamma + beta` in the element type, mean =
         K + c rounded once (K read again through the same map, within the slice's loop).

    Why shifted sums: `var = E[x^2] - E[x]^2` cancels catastrophically when |mean| >> std;
    shifting by a sample of the slice removes the mean's magnitude first. Exactly,
    S1 = n (mean - K) and S2 = n var + n (mean - K)^2, so var = (S2 - S1^2 / n) / n.

    Error bound (f32 elements, u = 2^-53): d_i is exact when x_i and K differ in exponent
    by less than 29 (their 24-bit significands fit in 53 bits); otherwise, or for f64
    elements, it is rounded once, a relative error u like that of d_i^2. K is a sample, so
    (K - mean)^2 <= sum_i (x_i - mean)^2 = n var: S2 <= n (n + 1) var, and S1^2 / n <=
    n^2 var. The cancellation in S2 - S1^2/n magnifies the sums' rounding by at most
    that factor n + 1 (about log2(n) bits of f64): with the f64 sums' own error of at most
    n u each, the relative error of var is <= ~3 n^2 u in the worst case (K the row's one
    outlier and every rounding the same way), and ~n u when K is a typical sample
    ((K - mean)^2 ~ var). Against f32's half ulp 2^-24 for std (whose relative error is
    half var's): below it for every n up to ~2^14 in the worst case, and up to ~2^29 in
    the typical one. The two-pass form it replaces (the wide mean, then the wide sum of
    squared deviations from it) erred by ~n u without the factor, at the price of a third
    pass over x. NaN and infinities: a non-finite element makes S2 or S1 non-finite and
    var NaN (`maximumf` keeps NaN), so the slice is NaN, as in the reference."""
    x, gamma, beta, t = op.input, op.gamma, op.beta, op.result.type
    rank = x.type.rank
    p = op.props()
    axis = norm_axis(p["axis"], rank)
    acc = Accumulator(t.element)
    n = acc.count
    count = cv.scalars().cast(cv.size(x, axis), acc.type)
    rows = reduced_sizes(cv, x, (axis,))
    row_map = projection(rank, kept_axes(rank, (axis,)))
    first = _first_along(rank, axis)
    wide_row = reduced_type(x, (axis,), acc.type)

    def shifted_sums(s, args):
        d = s.sub(acc.widen(s, args[0]), acc.widen(s, args[1]))
        return acc.add(s, args[2:2 + n], d) + acc.add(s, args[2 + n:2 + 2 * n], s.mul(d, d))

    sums = reduce_generic(cv, x, (axis,), acc.outputs(cv, wide_row.shape, rows)
                          + acc.outputs(cv, wide_row.shape, rows),
                          shifted_sums, others=[(x, first)])
    row = reduced_type(x, (axis,))
    r = row.rank

    def stats(s, args):                         # S1 / n and sqrt(var + eps), the latter rounded
        s1, s2 = acc.result(s, args[:n]), acc.result(s, args[n:2 * n])
        var = s.div(s.sub(s2, s.div(s.mul(s1, s1), count)), count)
        var = s.max(var, s.const(0.0, var))
        std = s.sqrt(s.add(var, s.const(p["epsilon"], var)))
        return [s.div(s1, count), acc.round(s, std)]

    offset, std = cv.generic(sums, [cv.empty(wide_row, rows), cv.empty(row, rows)],
                            [identity_map(r)] * (2 * n + 2), parallel(r), stats)
    out = cv.empty(t, static_or(cv, t, cv.sizes(x)))

    def normalize(s, args):
        v, k, c, sd, g, b = args[:6]
        mean = acc.round(s, s.add(acc.widen(s, k), c))
        return [s.add(s.mul(s.div(s.sub(v, mean), sd), g), b)]

    along = projection(rank, [axis])
    maps = [identity_map(rank), first, row_map, row_map, along, along, identity_map(rank)]
    return cv.generic([x, x, offset, std, gamma, beta], [out], maps, parallel(rank), normalize)


__all__ = ["window_count", "first_max"]
