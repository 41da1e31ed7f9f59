"""Rules for the shape ops (graph/shape.py): transpose, reshape, broadcast_to, dim; and the
size arithmetic the shape-like families share (`IndexArith`, `index_of`, `as_type`).

- transpose: `linalg.transpose` into a `tensor.empty` of the permuted sizes.
- reshape: the elements keep their row-major order, so a reshape only regroups axes:
  `tensor.collapse_shape` then `tensor.expand_shape`, MLIR's reshapes (no element moves;
  bufferization makes them views). `regroup` pairs groups of x's axes with groups of the
  result's whose element counts provably agree (static products, or the very same `?` size
  value on both sides), from the front and from the back; what is left in the middle is one
  group. So `?x28x28 -> ?x784` collapses `[[0], [1, 2]]` and expands nothing, and a general
  reshape collapses to 1-d and expands (one group).
  Where the counts may differ at run time (a `?` size on one side that the other does not
  name), the interpreter's check is a `graph.check` with today's message
  (`cannot reshape array of size {value} into shape (-1, 3)`), and the rule keeps every
  view in bounds whatever the outcome, as the loop rule guards its copy: x is flattened and
  cut to the result's count (an inferred -1 rounds down, so the count never exceeds x's);
  with sizes from operands, a failed check makes the first `?` size 0; a static result of a
  `?` input is padded up to its count (`tensor.pad`), the only case that copies.
- broadcast_to: `linalg.broadcast` of x along the axes it lacks; x's static size-1 axes
  that stretch are first collapsed away (`tensor.collapse_shape`). An axis of unknown size
  that may be 1 at run time while the target differs has no such form: an elementwise copy
  (`core.elementwise`, reading x with a select); a splat constant is a `linalg.fill`.
- dim: `tensor.from_elements` of the size as i64. A size operand of reshape, broadcast_to,
  split or one_hot (a 0-d integer tensor) is read back as an index by `index_of`: the index
  itself where it came from a `graph.dim` converted here (no trip through a tensor), the
  number of a splat constant, else a `tensor.extract`.

Run-time sizes come from `cv.sizes` (tracked `tensor.dim`s); each rule records the sizes of
what it makes (`cv.know_sizes`), so later ops share them.
"""

from __future__ import annotations

from typing import Sequence

from irkit.affine import AffineDim
from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.rewrite import constant_value
from irkit.types import I64, INDEX, IndexType, RankedTensorType
from irkit.dialects.arith import AddIOp, IndexCastOp
from irkit.dialects.graph import TensorSpec, checked_axis, full_perm
from irkit.dialects.linalg import make_broadcast, make_transpose
from irkit.dialects.tensor import (
    DimOp, FromElementsOp, cast, collapse_shape, expand_shape, extract, extract_slice,
    from_elements, pad,
)
from irkit.passes.graph_to_linalg.core import (
    FunctionConversion, Read, converts, elementwise,
)

# ---------------------------------------------------------------------------------------------
# Sizes: ints where static, index values where not
# ---------------------------------------------------------------------------------------------


class IndexArith:
    """`index` arithmetic on mixed sizes (ints where known, `index` Values where not): ints
    fold in Python, anything else becomes `arith` ops at `cv.b`, so a rule states a formula
    once for static and dynamic shapes and gets constants where it can."""

    def __init__(self, cv: FunctionConversion) -> None:
        self.cv = cv

    def known(self, x) -> int | None:
        """The int `x` is: itself, or the value of an `arith.constant` index."""
        if isinstance(x, int):
            return x
        attr = constant_value(x)
        if isinstance(attr, IntegerAttr) and isinstance(x.type, IndexType):
            return attr.value
        return None

    def mixed(self, x):
        """`x` as an int where it is a constant, else the Value."""
        k = self.known(x)
        return x if k is None else k

    def value(self, x) -> Value:
        """`x` as an `index` Value (a hoisted constant for an int)."""
        k = self.known(x)
        return self.cv.index(k) if k is not None else x

    def _binary(self, name: str, a, b, fold):
        ka, kb = self.known(a), self.known(b)
        if ka is not None and kb is not None:
            return fold(ka, kb)
        return self.cv.scalars().op(name, self.value(a), self.value(b))

    def add(self, a, b):
        if self.known(b) == 0:
            return self.mixed(a)
        if self.known(a) == 0:
            return self.mixed(b)
        return self._binary("arith.addi", a, b, lambda x, y: x + y)

    def sub(self, a, b):
        if self.known(b) == 0:
            return self.mixed(a)
        return self._binary("arith.subi", a, b, lambda x, y: x - y)

    def mul(self, a, b):
        if self.known(b) == 1:
            return self.mixed(a)
        if self.known(a) == 1:
            return self.mixed(b)
        return self._binary("arith.muli", a, b, lambda x, y: x * y)

    def floordiv(self, a, b):
        """Floor division (signed, rounding toward -inf, as Python's `//`)."""
        if self.known(b) == 1:
            return self.mixed(a)
        return self._binary("arith.floordivsi", a, b, lambda x, y: x // y)

    def ceildiv(self, a, b):
        if self.known(b) == 1:
            return self.mixed(a)
        return self._binary("arith.ceildivsi", a, b, lambda x, y: -(-x // y))

    def min(self, a, b):
        return self._binary("arith.minsi", a, b, min)

    def max(self, a, b):
        return self._binary("arith.maxsi", a, b, max)

    def product(self, xs: Sequence) -> object:
        total = 1
        for x in xs:
            total = self.mul(total, x)
        return total

    def sum(self, xs: Sequence) -> object:
        total = 0
        for x in xs:
            total = self.add(total, x)
        return total

    def terms(self, x) -> tuple[int, list]:
        """`x` as a sum: (its constant part, the other terms) through `arith.addi`s."""
        k = self.known(x)
        if k is not None:
            return k, []
        add = x.defining_op(AddIOp)
        if add is None:
            return 0, [x]
        (c1, t1), (c2, t2) = self.terms(add.lhs), self.terms(add.rhs)
        return c1 + c2, t1 + t2

    def same(self, a, b) -> bool:
        """Whether sizes `a` and `b` are provably equal: the same sum of the same values."""
        (ca, ta), (cb, tb) = self.terms(a), self.terms(b)
        if ca != cb or len(ta) != len(tb):
            return False
        left = list(tb)
        for v in ta:
            match = next((w for w in left if w is v), None)
            if match is None:
                return False
            left.remove(match)
        return True


def static_or(cv: FunctionConversion, t: RankedTensorType, sizes: Sequence[Value]
              ) -> list[Value]:
    """`sizes` with the static sizes of type `t` as constants (a result type may state a size
    its operands' types leave `?`)."""
    return [cv.index(d) if d is not None else s for d, s in zip(t.shape, sizes)]


def mixed_sizes(cv: FunctionConversion, t: RankedTensorType, sizes: Sequence[Value]) -> list:
    """The sizes of type `t` as the tensor builders take them: ints where `t` is static, the
    Values of `sizes` where it is `?`."""
    return [d if d is not None else s for d, s in zip(t.shape, sizes)]


def as_type(cv: FunctionConversion, v: Value, t: RankedTensorType,
            sizes: Sequence[Value] | None = None) -> Value:
    """`v` as type `t` (`tensor.cast` where the types differ only in what is static), its
    sizes `sizes` recorded when given."""
    out = cast(cv.b, v, t)
    if sizes is not None:
        cv.know_sizes(out, sizes)
    return out


def index_of(cv: FunctionConversion, v: Value) -> Value:
    """The `index` a size operand (a 0-d integer tensor) holds: the index a converted
    `graph.dim` wrapped, the number of a splat constant, or a `tensor.extract` cast to
    index (at `cv.b`)."""
    splat = cv.splat_value(v)
    if splat is not None:
        return cv.index(splat)
    made = v.defining_op(FromElementsOp)
    if made is not None:
        (element,) = made.elements
        wrapped = element.defining_op(IndexCastOp)
        if wrapped is not None and isinstance(wrapped.in_.type, IndexType):
            return wrapped.in_
    return cv.scalars().cast(extract(cv.b, v, []), INDEX)


def drop_unit_axes(cv: FunctionConversion, v: Value, unit: Sequence[int]) -> Value:
    """`v` without its static size-1 axes `unit` (`tensor.collapse_shape`): each joins the
    group of the kept axis before it (the first kept axis, for leading ones)."""
    if not unit:
        return v
    kept = [a for a in range(v.type.rank) if a not in unit]
    groups: list[list[int]] = [[] for _ in kept]
    owner = 0
    for a in range(v.type.rank):
        if a in unit:
            if groups:
                groups[owner].append(a)
        else:
            owner = kept.index(a)
            groups[owner].append(a)
    out = collapse_shape(cv.b, v, groups)
    cv.know_sizes(out, [cv.size(v, a) for a in kept])
    return out


# ---------------------------------------------------------------------------------------------
# graph.transpose, graph.dim
# ---------------------------------------------------------------------------------------------


@converts("graph.transpose")
def convert_transpose(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.x, op.result.type
    perm = full_perm(op.props()["perm"], x.type.rank)
    xs = cv.sizes(x)
    sizes = static_or(cv, t, [xs[p] for p in perm])
    if list(perm) == list(range(len(perm))):
        return [as_type(cv, x, t, sizes)]
    out = cv.empty(t, sizes)
    # linalg.transpose wants each input size to be the init's exactly (`?` only with `?`):
    # where the result type knows more, the input is cast to it first.
    src_type = RankedTensorType(tuple(t.shape[perm.index(a)] for a in range(len(perm))),
                                x.type.element)
    result = make_transpose(cv.b, as_type(cv, x, src_type, xs), out, perm).results[0]
    cv.know_sizes(result, sizes)
    return [result]


@converts("graph.dim")
def convert_dim(cv: FunctionConversion, op: Operation) -> list[Value]:
    x = op.x
    axis = checked_axis(op.props()["axis"], TensorSpec.of(x.type))
    n = cv.scalars().cast(cv.size(x, axis), I64)
    return [from_elements(cv.b, [n], op.result.type)]


# ---------------------------------------------------------------------------------------------
# graph.broadcast_to
# ---------------------------------------------------------------------------------------------


def target_sizes(cv: FunctionConversion, op: Operation, total: Value | None = None
                 ) -> list[Value]:
    """The result sizes of a reshape or broadcast_to: static ones from the result type, a -1
    entry of `shape` from the next `sizes` operand, and (reshape without `sizes`) the one -1
    as x's element count `total` divided by the other entries (`arith.divui`)."""
    shape = op.props()["shape"]
    rshape = op.result.type.shape
    given = iter([index_of(cv, s) for s in op.sizes])
    out = []
    for i, d in enumerate(shape):
        g = next(given) if d == -1 and op.sizes else None
        if rshape[i] is not None:
            out.append(cv.index(rshape[i]))
        elif g is not None:
            out.append(g)
        elif d != -1:
            out.append(cv.index(d))
        else:                                       # the inferred -1 of a reshape
            known = 1
            for e in shape:
                known *= e if e != -1 else 1
            out.append(cv.scalars().op("arith.divui", total, cv.index(known)))
    return out


@converts("graph.broadcast_to")
def convert_broadcast_to(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.x, op.result.type
    sizes = target_sizes(cv, op)
    read = Read(cv, x, t.shape, sizes)
    if read.kind == "splat":
        return [cv.filled(t, sizes, read.splat)]
    if read.kind == "extract":
        return [elementwise(cv, [x], t, lambda s, xs: xs[0], sizes)]
    offset = t.rank - x.type.rank
    stretched = [a for a, e in enumerate(read.exprs) if not isinstance(e, AffineDim)]
    added = list(range(offset)) + [offset + a for a in stretched]
    if not added:
        return [as_type(cv, x, t, sizes)]
    src = drop_unit_axes(cv, x, stretched)
    # linalg.broadcast wants each kept input size to be the init's exactly (`?` only with
    # `?`): the input is cast to the result's sizes along the kept axes first.
    kept = [a for a in range(t.rank) if a not in set(added)]
    src = cast(cv.b, src, RankedTensorType(tuple(t.shape[a] for a in kept), t.element))
    result = make_broadcast(cv.b, src, cv.empty(t, sizes), added).results[0]
    cv.know_sizes(result, sizes)
    return [result]


# ---------------------------------------------------------------------------------------------
# graph.reshape
# ---------------------------------------------------------------------------------------------


def _pairs_from_front(src: Sequence, dst: Sequence, same) -> tuple[list, int, int]:
    """Groups (x's axes, the result's axes) from the front whose element counts provably
    agree: equal static products, or one `?` axis on each side that `same(i, j)` says hold
    one size value. Returns the pairs and how many axes of each side they took."""
    pairs, i, j = [], 0, 0
    while i < len(src) and j < len(dst):
        if src[i] is None or dst[j] is None:
            if src[i] is None and dst[j] is None and same(i, j):
                pairs.append(([i], [j]))
                i, j = i + 1, j + 1
                continue
            break
        gi, gj, pi, pj = [i], [j], src[i], dst[j]
        while pi != pj:
            if pi < pj and i + len(gi) < len(src) and src[i + len(gi)] is not None:
                pi *= src[i + len(gi)]
                gi.append(i + len(gi))
            elif pj < pi and j + len(gj) < len(dst) and dst[j + len(gj)] is not None:
                pj *= dst[j + len(gj)]
                gj.append(j + len(gj))
            else:
                return pairs, i, j
        pairs.append((gi, gj))
        i, j = i + len(gi), j + len(gj)
    return pairs, i, j


def reassociation(src: Sequence, dst: Sequence, same) -> list[tuple[list, list]] | None:
    """Pairs of axis groups (of x, of the result) that regroup `src` into `dst` (static shapes
    with None for `?`) when their total counts are equal: the provable pairs from the front,
    then from the back, and one group of whatever is left in the middle. A middle left with
    axes on one side only holds static 1s, which join a neighbouring group. None when that
    is impossible (a `?` left alone on one side)."""
    front, i, j = _pairs_from_front(src, dst, same)
    rs, rd = list(reversed(src[i:])), list(reversed(dst[j:]))
    back, bi, bj = _pairs_from_front(rs, rd, lambda a, b: same(len(src) - 1 - a,
                                                                 len(dst) - 1 - b))
    back = [([len(src) - 1 - a for a in reversed(g)], [len(dst) - 1 - b for b in reversed(h)])
            for g, h in reversed(back)]
    mid = (list(range(i, len(src) - bi)), list(range(j, len(dst) - bj)))
    pairs = front + back
    if mid[0] and mid[1]:
        pairs = front + [mid] + back
    elif mid[0] or mid[1]:
        side = 0 if mid[0] else 1
        lonely = [(src, dst)[side][a] for a in mid[side]]
        if any(d != 1 for d in lonely):
            return None
        if not pairs:
            return [] if not mid[1 - side] else None
        k = len(front) - 1 if front else 0             # the group before, else the one after
        merged = sorted(pairs[k][side] + mid[side])
        pairs[k] = (merged, pairs[k][1]) if side == 0 else (pairs[k][0], merged)
    return pairs


def regroup(cv: FunctionConversion, x: Value, t: RankedTensorType, sizes: Sequence[Value],
            pairs: list[tuple[list, list]]) -> Value:
    """x reshaped to `t` (sizes `sizes`) through the axis groups `pairs`: collapse x's
    groups, cast where a group's size is static on one side only, expand the result's."""
    src_groups = [g for g, _ in pairs]
    dst_groups = [h for _, h in pairs]
    v = x
    if len(src_groups) != x.type.rank or any(len(g) != 1 for g in src_groups):
        v = collapse_shape(cv.b, x, src_groups)
    mid = []
    for h in dst_groups:
        dims = [t.shape[a] for a in h]
        mid.append(None if None in dims else _product(dims))
    v = cast(cv.b, v, RankedTensorType(tuple(mid), t.element))
    if len(dst_groups) != t.rank or any(len(h) != 1 for h in dst_groups):
        v = expand_shape(cv.b, v, dst_groups, mixed_sizes(cv, t, sizes))
    v = cast(cv.b, v, t)
    cv.know_sizes(v, sizes)
    return v


def _product(dims) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


def _count_is_equal(cv: FunctionConversion, op: Operation, x: Value, t: RankedTensorType,
                    sizes: Sequence[Value]) -> bool:
    """Whether x and the result provably hold as many elements: equal static products with
    the same `?` size values on both sides; or an inferred -1 whose other entries divide
    x's static product (the -1 is then exact)."""
    shape = op.props()["shape"]
    x_static = _product(d for d in x.type.shape if d is not None)
    if not op.sizes and -1 in shape:
        known = _product(e for e in shape if e != -1)
        return known != 0 and x_static % known == 0
    x_dyn = [cv.size(x, a) for a, d in enumerate(x.type.shape) if d is None]
    t_dyn = [s for s, d in zip(sizes, t.shape) if d is None]
    t_static = _product(d for d in t.shape if d is not None)
    if x_static != t_static or len(x_dyn) != len(t_dyn):
        return False
    left = list(t_dyn)
    for v in x_dyn:
        if not any(v is w for w in left):
            return False
        left.remove(next(w for w in left if w is v))
    return True


def _flatten(cv: FunctionConversion, x: Value) -> Value:
    """x as a 1-d tensor of its elements in row-major order."""
    rank = x.type.rank
    if rank == 1:
        return x
    if rank == 0:
        return expand_shape(cv.b, x, [], [1])
    return collapse_shape(cv.b, x, [list(range(rank))])


def _checked_reshape(cv: FunctionConversion, op: Operation, x: Value, t: RankedTensorType,
                     sizes: list[Value], total: Value) -> Value:
    """A reshape whose counts may differ at run time: the interpreter's check, then a 1-d
    view of x cut (or padded) to the result's count, whatever the check says (see the module
    docstring), expanded to the result."""
    shape = op.props()["shape"]
    inferred = not op.sizes and -1 in shape
    ix = IndexArith(cv)
    s = cv.scalars()
    count = ix.value(ix.product(sizes))
    ok = s.cmp("eq", total, count)
    for g in op.sizes:                          # a negative size operand is numpy's error too
        size = index_of(cv, g)
        if size.defining_op(DimOp) is None:     # (a tensor's size is not negative)
            ok = s.and_(ok, s.cmp("ge", size, cv.index(0)))
    target = "(" + ", ".join(map(str, shape)) + ")"
    message = f"cannot reshape array of size {{value}} into shape {target}"
    cv.check(ok, total, count, message if inferred else message + " of {bound} elements")
    flat = _flatten(cv, x)
    dynamic = [a for a, d in enumerate(t.shape) if d is None]
    if inferred:                                # count <= total: a prefix of x
        flat = extract_slice(cv.b, flat, [0], [ix.mixed(count)])
    elif dynamic:                               # failed: no elements at all
        first = dynamic[0]
        sizes[first] = s.select(ok, sizes[first], cv.index(0))
        flat = extract_slice(cv.b, flat, [0], [s.select(ok, count, cv.index(0))])
    else:                                       # a static count: x cut or padded to it
        keep = ix.min(total, count)
        flat = extract_slice(cv.b, flat, [0], [keep])
        zero = cv.constant(0, t.element)
        flat = pad(cv.b, flat, [0], [ix.sub(count, keep)], zero)
    if t.rank == 0:
        one = cast(cv.b, flat, RankedTensorType((1,), t.element))
        return collapse_shape(cv.b, one, [])
    return regroup(cv, flat, t, sizes, [([0], list(range(t.rank)))])


@converts("graph.reshape")
def convert_reshape(cv: FunctionConversion, op: Operation) -> list[Value]:
    x, t = op.x, op.result.type
    ix = IndexArith(cv)
    inferred = not op.sizes and -1 in op.props()["shape"]
    total = ix.value(ix.product(cv.sizes(x))) if inferred else None
    sizes = target_sizes(cv, op, total)
    if not _count_is_equal(cv, op, x, t, sizes):
        if total is None:
            total = ix.value(ix.product(cv.sizes(x)))
        return [_checked_reshape(cv, op, x, t, sizes, total)]

    def same(i: int, j: int) -> bool:
        return cv.size(x, i) is sizes[j]

    pairs = reassociation(x.type.shape, t.shape, same)
    if pairs is None:                           # a `?` of size 1 at run time: one group
        pairs = [(list(range(x.type.rank)), list(range(t.rank)))]
        if x.type.rank == 0 or t.rank == 0:
            return [_checked_reshape(cv, op, x, t, sizes, ix.value(ix.product(cv.sizes(x))))]
    for g, h in pairs:                          # a `?` axis for a `?` axis: the same size
        if len(g) == len(h) == 1 and x.type.shape[g[0]] is None and t.shape[h[0]] is None:
            sizes[h[0]] = cv.size(x, g[0])
    return [regroup(cv, x, t, sizes, pairs)]


__all__ = ["IndexArith", "static_or", "mixed_sizes", "as_type", "index_of", "drop_unit_axes",
           "target_sizes", "reassociation", "regroup"]
