"""The matrix product, `graph.matmul`, with numpy.matmul's rules (batch dims broadcast,
vector operands promoted and their axis dropped again).

It is neither a reduction nor elementwise: its shape rule contracts one axis and broadcasts
the others, so it has a module of its own, next to `reduce.py`, whose shape-exact
derivative helper (`with_unit_axes`) it imports.

The shape rule is written once, in `infer`, over dims that may be ints, None (`?`) or DSL
symbols (`N`); it only ever compares dims through `unify_dim`/`broadcast_dim`, so
`f32[N, 784] x f32[784, 10]` is `f32[N, 10]` and `f32[N, 784] x f32[M, 10]` is an error that
names both shapes. The product keeps the operands' element type (no widening), and it has
no algebraic canonicalization: `x @ I -> x` is not exact (the op's docstring says why).
"""

from __future__ import annotations

import numpy as np

from irkit.ad_rules import ADBuilder
from irkit.sharding_rules import ShardingRule
from irkit.ir import Value
from irkit.opdef import AnyTensor, Operand, Pure, Result
from irkit.dialects.graph.base import (
    GraphOp, ShapeError, TensorSpec, broadcast_dim, graph, is_float, same_dtype, unify_dim,
)
from irkit.dialects.graph.reduce import check_numeric, with_unit_axes

_TRAITS = (Pure(),)


@graph.op
class MatmulOp(GraphOp):
    """Matrix product with numpy.matmul's rules: `[..., M, K] x [..., K, N] -> [..., M, N]`
    with the batch dims `...` broadcast; a 1-D operand is a row (lhs) or column (rhs) vector
    whose axis is dropped from the result, so vector x vector is a scalar.

    No algebraic canonicalization: `x @ I -> x` and `x @ 0 -> 0` are wrong when x holds inf
    or NaN (`inf * 0` is NaN, which the product would spread along the row).

        %y = graph.matmul %x, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
    """

    name = "graph.matmul"
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        a, b = args
        t = same_dtype(a, b)
        check_numeric(a)
        if a.rank == 0 or b.rank == 0:
            raise ShapeError(f"cannot multiply {a} by {b}: matmul needs operands of rank >= 1")
        # Promote vectors to matrices as numpy does, remembering which axes to drop again.
        lhs = a.shape if a.rank > 1 else (1,) + a.shape
        rhs = b.shape if b.rank > 1 else b.shape + (1,)
        try:
            unify_dim(lhs[-1], rhs[-2])
        except ValueError:
            raise ShapeError(f"cannot multiply {a} by {b}: inner dimensions {lhs[-1]} and "
                             f"{rhs[-2]} differ") from None
        lb, rb = lhs[:-2], rhs[:-2]
        n = max(len(lb), len(rb))
        batch = [1] * n
        for dims in (lb, rb):
            for i, d in enumerate(dims, n - len(dims)):
                try:
                    batch[i] = broadcast_dim(batch[i], d)
                except ValueError:
                    raise ShapeError(f"cannot multiply {a} by {b}: batch dimensions "
                                     f"{list(lb)} and {list(rb)} do not broadcast") from None
        out = tuple(batch) + ((lhs[-2],) if a.rank > 1 else ()) + \
            ((rhs[-1],) if b.rank > 1 else ())
        return [TensorSpec(out, t)]

    def evaluate(self, a, b):
        return np.asarray(np.matmul(a, b), dtype=a.dtype)

    # Derivatives. For matrices, d(A B) = dA B + A dB, so the cotangents are ct B^T and
    # A^T ct, summed over the batch dims the operand was broadcast along. A vector operand
    # is a matrix with a unit axis that the result lacks: the rules put that axis back into
    # ct, and where it is the contracted one the product is an outer product (a broadcast
    # multiply, no sum to do).

    def is_differentiable(self) -> bool:
        """Integer products are piecewise constant."""
        return is_float(self.lhs.type.element)

    def jvp(self, ad: ADBuilder, tangents: list) -> list:
        ta, tb = tangents
        terms = ([ad.op("graph.matmul", ta, self.rhs)] if ta is not None else []) + \
            ([ad.op("graph.matmul", self.lhs, tb)] if tb is not None else [])
        return [ad.as_type(ad.sum(terms), self.result) if terms else None]

    def vjp(self, ad: ADBuilder, cts: list) -> list:
        (ct,) = cts
        a, b = self.lhs, self.rhs
        ra, rb, rc = a.type.rank, b.type.rank, ct.type.rank
        if ra == 1 and rb == 1:                             # dot product: ct is a scalar
            return [ad.as_type(ad.op("graph.mul", ct, b), a),
                    ad.as_type(ad.op("graph.mul", ct, a), b)]
        if ra == 1:                                         # ct: [..., N], b: [..., K, N]
            col = ct if rc == 1 else with_unit_axes(ad, ct, (rc,))
            ga = _sum_all_but(ad, ad.op("graph.matmul", b, col), rb - 2)
            row = ct if rc == 1 else with_unit_axes(ad, ct, (rc - 1,))
            gb = ad.op("graph.mul", with_unit_axes(ad, a, (1,)), row)
        elif rb == 1:                                       # ct: [..., M], a: [..., M, K]
            ga = ad.op("graph.mul", with_unit_axes(ad, ct, (rc,)), b)
            row = ct if rc == 1 else with_unit_axes(ad, ct, (rc - 1,))
            gb = _sum_all_but(ad, ad.op("graph.matmul", row, a), ra - 1)
        else:
            ga = ad.unbroadcast(ad.op("graph.matmul", ct, _swap_last(ad, b)), a)
            gb = ad.unbroadcast(ad.op("graph.matmul", _swap_last(ad, a), ct), b)
        return [ad.as_type(ga, a), ad.as_type(gb, b)]


    def sharding_rule(self) -> ShardingRule:
        """`[..., M, K] x [..., K, N]`: the batch dims, M and N parallel, K a partial sum
        (split on both operands, each rank multiplies its slices: Megatron's row-parallel
        layer); linear in each operand, so a partial operand gives a partial product. A
        batch dim one operand broadcasts (size 1) has no factor there."""
        a, b, out = self.lhs.type, self.rhs.type, self.results[0].type
        nb = out.rank - (a.rank > 1) - (b.rank > 1)

        def batch(t) -> list:
            own = t.rank - 2
            return [None if d == 1 and out.shape[i] != 1 else f"b{i}"
                    for i, d in enumerate(t.shape[:own], nb - own)]
        lhs = batch(a) + ["m", "k"] if a.rank > 1 else ["k"]
        rhs = batch(b) + ["k", "n"] if b.rank > 1 else ["k"]
        res = [f"b{i}" for i in range(nb)] + (["m"] if a.rank > 1 else []) + \
            (["n"] if b.rank > 1 else [])
        return ShardingRule((tuple(lhs), tuple(rhs)), (tuple(res),), {"k": "sum"},
                            frozenset(), ((0,), (1,)))


def _swap_last(ad: ADBuilder, v: Value) -> Value:
    """v with its last two axes swapped (a batch of transposed matrices)."""
    r = v.type.rank
    return ad.op("graph.transpose", v, perm=list(range(r - 2)) + [r - 1, r - 2])


def _sum_all_but(ad: ADBuilder, v: Value, keep: int) -> Value:
    """v summed over every axis but `keep` (to undo a vector's promotion and the batch)."""
    if v.type.rank == 1:
        return v
    axes = [i for i in range(v.type.rank) if i != keep]
    return ad.op("graph.reduce_sum", v, axes=axes)
