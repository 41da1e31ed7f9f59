"""AffineMap composition, permutation tests and inversion (irkit/affine.py), checked by
evaluating maps at points: `(f o g)(x) == f(g(x))`, `p(p^-1(x)) == x`."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from irkit.affine import (
    AffineBinary, AffineConst, AffineDim, AffineMap, AffineSymbol, replace_dims_and_symbols,
)


@st.composite
def exprs(draw, num_dims: int, depth: int = 2):
    """Affine expressions over `num_dims` dims: sums, products by constants, mod and
    floordiv by positive constants."""
    if depth == 0 or draw(st.booleans()):
        if num_dims and draw(st.integers(0, 3)):
            return AffineDim(draw(st.integers(0, num_dims - 1)))
        return AffineConst(draw(st.integers(-3, 5)))
    lhs = draw(exprs(num_dims, depth - 1))
    kind = draw(st.sampled_from(["add", "mul", "mod", "floordiv"]))
    if kind == "add":
        return AffineBinary(kind, lhs, draw(exprs(num_dims, depth - 1)))
    return AffineBinary(kind, lhs, AffineConst(draw(st.integers(1, 4))))


@st.composite
def maps(draw, num_dims: int, num_results: int):
    return AffineMap(num_dims, 0, tuple(draw(exprs(num_dims)) for _ in range(num_results)))


@st.composite
def composable(draw):
    a, b, c = (draw(st.integers(0, 3)) for _ in range(3))
    outer = draw(maps(b, c))
    inner = draw(maps(a, b))
    point = draw(st.lists(st.integers(-5, 9), min_size=a, max_size=a))
    return outer, inner, point


@given(composable())
def test_compose_evaluates_as_the_maps_in_turn(case):
    outer, inner, point = case
    composed = outer.compose(inner)
    assert composed.num_dims == inner.num_dims and len(composed.results) == len(outer.results)
    assert composed.evaluate(point) == outer.evaluate(inner.evaluate(point))


@given(st.permutations(range(4)), st.integers(0, 4))
def test_inverse_permutation_undoes_the_permutation(perm, n):
    perm = [p for p in perm if p < n]
    m = AffineMap(n, 0, tuple(AffineDim(p) for p in perm))
    assert m.is_permutation() and m.is_projected_permutation()
    inverse = m.inverse_permutation()
    assert m.compose(inverse) == AffineMap.identity(n)
    assert inverse.compose(m) == AffineMap.identity(n)
    point = list(range(10, 10 + n))
    assert inverse.evaluate(m.evaluate(point)) == tuple(point)


@pytest.mark.parametrize("results, projected, permutation", [
    ((AffineDim(1), AffineDim(0)), True, True),
    ((AffineDim(1),), True, False),                                 # a projection
    ((), True, False),                                              # to a scalar
    ((AffineDim(0), AffineDim(0)), False, False),                   # a diagonal
    ((AffineDim(0), AffineConst(0)), False, False),
    ((AffineBinary("add", AffineDim(0), AffineDim(1)), AffineDim(1)), False, False),
])
def test_permutation_kinds(results, projected, permutation):
    m = AffineMap(2, 0, results)
    assert m.is_projected_permutation() == projected
    assert m.is_permutation() == permutation
    if not permutation:
        with pytest.raises(ValueError):
            m.inverse_permutation()


def test_compose_checks_arity_and_keeps_symbols():
    outer = AffineMap(2, 1, (AffineBinary("add", AffineDim(1), AffineSymbol(0)),))
    inner = AffineMap(1, 1, (AffineSymbol(0), AffineDim(0)))
    composed = outer.compose(inner)
    assert composed.num_symbols == 2
    assert str(composed) == "(d0)[s0, s1] -> (d0 + s1)"
    assert composed.evaluate([3], [100, 7]) == (10,)
    with pytest.raises(ValueError):
        inner.compose(inner)


def test_replace_dims_and_symbols():
    e = AffineBinary("mul", AffineBinary("add", AffineDim(0), AffineSymbol(0)), AffineConst(2))
    got = replace_dims_and_symbols(e, [AffineDim(3)], [AffineConst(5)])
    assert str(got) == "(d3 + 5) * 2"
