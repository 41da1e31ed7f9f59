"""Affine expressions, maps and integer sets (`affine_map<...>`, `affine_set<...>`).

Expressions are small immutable trees over dims `d<i>`, symbols `s<i>` and integer constants
with `+`, `*`, `mod`, `floordiv` and `ceildiv`. Subtraction is `a + b * -1` as in MLIR and is
printed back as `a - b`. They can be evaluated, which the interpreter uses for memref layouts.
"""

from __future__ import annotations

from dataclasses import dataclass


class AffineExpr:
    __slots__ = ()
    prec = 3

    def evaluate(self, dims, syms) -> int:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class AffineDim(AffineExpr):
    position: int

    def __str__(self):
        return f"d{self.position}"

    def evaluate(self, dims, syms):
        return dims[self.position]


@dataclass(frozen=True, slots=True)
class AffineSymbol(AffineExpr):
    position: int

    def __str__(self):
        return f"s{self.position}"

    def evaluate(self, dims, syms):
        return syms[self.position]


@dataclass(frozen=True, slots=True)
class AffineConst(AffineExpr):
    value: int

    def __str__(self):
        return str(self.value)

    def evaluate(self, dims, syms):
        return self.value


_PREC = {"add": 1, "mul": 2, "mod": 2, "floordiv": 2, "ceildiv": 2}
_SPELL = {"add": "+", "mul": "*", "mod": "mod", "floordiv": "floordiv", "ceildiv": "ceildiv"}


@dataclass(frozen=True, slots=True)
class AffineBinary(AffineExpr):
    kind: str
    lhs: AffineExpr
    rhs: AffineExpr

    @property
    def prec(self):
        return _PREC[self.kind]

    def __str__(self):
        lhs, rhs, kind = self.lhs, self.rhs, self.kind
        if kind == "add":
            # a + b * -c  prints as  a - b * c ;  a + -c  prints as  a - c
            if isinstance(rhs, AffineConst) and rhs.value < 0:
                return f"{lhs} - {-rhs.value}"
            if (isinstance(rhs, AffineBinary) and rhs.kind == "mul"
                    and isinstance(rhs.rhs, AffineConst) and rhs.rhs.value < 0):
                c = -rhs.rhs.value
                term = _wrap(rhs.lhs, 2) if c != 1 else _wrap(rhs.lhs, 1)
                return f"{lhs} - {term}" + (f" * {c}" if c != 1 else "")
            return f"{lhs} + {_wrap(rhs, 1)}"
        return f"{_wrap(lhs, 2)} {_SPELL[kind]} {_wrap(rhs, 2)}"

    def evaluate(self, dims, syms):
        a = self.lhs.evaluate(dims, syms)
        b = self.rhs.evaluate(dims, syms)
        kind = self.kind
        if kind == "add":
            return a + b
        if kind == "mul":
            return a * b
        if kind == "mod":
            return a % b
        if kind == "floordiv":
            return a // b
        return -((-a) // b)


def _wrap(e: AffineExpr, min_prec: int) -> str:
    """Parenthesize `e` unless it binds tighter than `min_prec` (always safe to reparse)."""
    return str(e) if e.prec > min_prec else f"({e})"


def add(a: AffineExpr, b: AffineExpr) -> AffineExpr:
    return AffineBinary("add", a, b)


def neg(a: AffineExpr) -> AffineExpr:
    if isinstance(a, AffineConst):
        return AffineConst(-a.value)
    return AffineBinary("mul", a, AffineConst(-1))


@dataclass(frozen=True, slots=True)
class AffineMap:
    num_dims: int
    num_symbols: int
    results: tuple

    def __str__(self):
        dims = ", ".join(f"d{i}" for i in range(self.num_dims))
        syms = ", ".join(f"s{i}" for i in range(self.num_symbols))
        syms = f"[{syms}]" if self.num_symbols else ""
        return f"({dims}){syms} -> ({', '.join(map(str, self.results))})"

    def evaluate(self, dims, syms=()) -> tuple:
        return tuple(r.evaluate(dims, syms) for r in self.results)

    @staticmethod
    def identity(n: int) -> "AffineMap":
        return AffineMap(n, 0, tuple(AffineDim(i) for i in range(n)))

    def compose(self, other: "AffineMap") -> "AffineMap":
        """`self o other` (MLIR's `compose`): `other`'s results stand for `self`'s dims, so
        the result takes `other`'s inputs to `self`'s results. The symbols are `other`'s,
        then `self`'s."""
        if len(other.results) != self.num_dims:
            raise ValueError(f"cannot compose {self} with {other}: {self.num_dims} dims, "
                             f"{len(other.results)} results")
        syms = tuple(AffineSymbol(other.num_symbols + i) for i in range(self.num_symbols))
        return AffineMap(other.num_dims, other.num_symbols + self.num_symbols,
                         tuple(replace_dims_and_symbols(e, other.results, syms)
                               for e in self.results))

    def is_projected_permutation(self) -> bool:
        """Each result a distinct bare dim (MLIR's `isProjectedPermutation`, without its
        zero results): the map picks and reorders some of its inputs."""
        positions = [e.position for e in self.results if isinstance(e, AffineDim)]
        return len(positions) == len(self.results) == len(set(positions))

    def is_permutation(self) -> bool:
        """A projected permutation that uses every dim: invertible."""
        return self.is_projected_permutation() and len(self.results) == self.num_dims

    def inverse_permutation(self) -> "AffineMap":
        """The inverse of a permutation map (MLIR's `inversePermutation`): `m.compose(
        m.inverse_permutation())` is the identity."""
        if not self.is_permutation() or self.num_symbols:
            raise ValueError(f"{self} is not a permutation")
        inverse = [AffineDim(0)] * self.num_dims
        for i, e in enumerate(self.results):
            inverse[e.position] = AffineDim(i)
        return AffineMap(len(self.results), 0, tuple(inverse))


def replace_dims_and_symbols(e: AffineExpr, dims, syms) -> AffineExpr:
    """`e` with each `d<i>` replaced by `dims[i]` and each `s<i>` by `syms[i]` (MLIR's
    `replaceDimsAndSymbols`); nothing is simplified."""
    if isinstance(e, AffineDim):
        return dims[e.position]
    if isinstance(e, AffineSymbol):
        return syms[e.position]
    if isinstance(e, AffineBinary):
        return AffineBinary(e.kind, replace_dims_and_symbols(e.lhs, dims, syms),
                            replace_dims_and_symbols(e.rhs, dims, syms))
    return e


@dataclass(frozen=True, slots=True)
class IntegerSet:
    """Constraints `expr >= 0` or `expr == 0` (`eq` flag per constraint)."""

    num_dims: int
    num_symbols: int
    constraints: tuple
    eq_flags: tuple

    def __str__(self):
        dims = ", ".join(f"d{i}" for i in range(self.num_dims))
        syms = ", ".join(f"s{i}" for i in range(self.num_symbols))
        syms = f"[{syms}]" if self.num_symbols else ""
        cons = ", ".join(f"{c} {'==' if eq else '>='} 0"
                         for c, eq in zip(self.constraints, self.eq_flags))
        return f"({dims}){syms} : ({cons})"
