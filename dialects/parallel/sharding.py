"""Grids, placements and shardings: the `parallel` dialect's data, and their numpy meaning.

A **grid** is an n-d array of ranks with named axes (`GridInfo`: shape `[2, 2]`, axes
`["data", "model"]`); rank r has coordinates `coords(r)` in row-major order. A tensor's
**sharding** names its grid and gives, per grid axis, a **placement** (OneFlow's SBP,
PyTorch DTensor's placements): `split(d)` (each rank of the axis holds one contiguous
block of dimension d), `replicate` (each holds the whole), `partial(sum)` (each holds a
term; the value is their sum). Written as the dialect attribute
`#parallel.sharding<@grid, [split(0), replicate]>` (one entry per grid axis).

When several axes split one dimension, the one with the lower index is the outer split
(DTensor's order): with `[split(0), split(0)]` on a 2x2 grid, rank (i, j) holds block
`2 i + j` of 4. `block_index` says which block a rank holds; `local_piece` cuts a global
array down to a rank's piece and `assemble` puts the pieces back together, which is how a
runtime hands inputs to ranks and reads results (and variables) back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import reduce

import numpy as np

from irkit.attributes import OpaqueAttr
from irkit.types import RankedTensorType


@dataclass(frozen=True)
class Split:
    """Each rank of the axis holds one block of dimension `dim`."""
    dim: int

    def __str__(self) -> str:
        return f"split({self.dim})"


@dataclass(frozen=True)
class Replicate:
    """Each rank of the axis holds the whole value."""

    def __str__(self) -> str:
        return "replicate"


@dataclass(frozen=True)
class Partial:
    """Each rank of the axis holds a term of a sum (the only reduction kept: it is what a
    row-parallel matmul and a gradient of replicated weights produce)."""

    def __str__(self) -> str:
        return "partial(sum)"


REPLICATE = Replicate()
PARTIAL = Partial()

_PLACEMENT = re.compile(r"\s*(?:split\(\s*(\d+)\s*\)|(replicate)|(partial\(\s*sum\s*\)))\s*")


class ShardingSyntaxError(ValueError):
    """A `#parallel.sharding<...>` attribute that does not parse."""


@dataclass(frozen=True)
class Sharding:
    """A tensor's placement on each axis of grid `grid` (a symbol name)."""

    grid: str
    placements: tuple

    def __str__(self) -> str:
        return f"#parallel.sharding<@{self.grid}, [{', '.join(map(str, self.placements))}]>"

    def to_attr(self) -> OpaqueAttr:
        return OpaqueAttr(str(self)[1:])

    @staticmethod
    def replicated(grid: str, rank: int) -> "Sharding":
        return Sharding(grid, (REPLICATE,) * rank)

    @staticmethod
    def parse(body: str) -> "Sharding":
        """From an attribute body `parallel.sharding<@g, [split(0), replicate]>`."""
        m = re.fullmatch(r"parallel\.sharding<\s*@([\w.$-]+)\s*,\s*\[(.*)\]\s*>", body, re.S)
        if m is None:
            raise ShardingSyntaxError(f"expected #parallel.sharding<@grid, [placements]>, "
                                      f"got #{body}")
        items = m.group(2).split(",") if m.group(2).strip() else []
        out = []
        for item in items:
            p = _PLACEMENT.fullmatch(item)
            if p is None:
                raise ShardingSyntaxError(f"unknown placement '{item.strip()}': expected "
                                          f"split(<dim>), replicate or partial(sum)")
            out.append(Split(int(p.group(1))) if p.group(1) else
                       REPLICATE if p.group(2) else PARTIAL)
        return Sharding(m.group(1), tuple(out))

    @staticmethod
    def of_attr(a) -> "Sharding":
        if not isinstance(a, OpaqueAttr):
            raise ShardingSyntaxError(f"expected a #parallel.sharding attribute, got "
                                      f"{a.format()}")
        return Sharding.parse(a.body)

    def splitters(self, dim: int) -> list[int]:
        """The grid axes splitting `dim`, outer first."""
        return [a for a, p in enumerate(self.placements) if p == Split(dim)]


@dataclass(frozen=True)
class GridInfo:
    """A grid's shape and axis names, and the rank arithmetic on them."""

    name: str
    shape: tuple
    axes: tuple

    @property
    def size(self) -> int:
        return reduce(lambda a, b: a * b, self.shape, 1)

    def axis_index(self, name: str) -> int:
        return self.axes.index(name)

    def coords(self, rank: int) -> tuple:
        return tuple(int(c) for c in np.unravel_index(rank, self.shape)) if self.shape else ()

    def rank_of(self, coords) -> int:
        return int(np.ravel_multi_index(tuple(coords), self.shape)) if self.shape else 0

    def group_size(self, axes) -> int:
        return reduce(lambda a, b: a * b, (self.shape[a] for a in axes), 1)

    def group(self, rank: int, axes) -> list[int]:
        """The ranks that differ from `rank` only along `axes` (grid axis indices), ordered
        by their coordinates on `axes`, the first axis outermost."""
        base = list(self.coords(rank))
        out = []
        for sub in np.ndindex(*[self.shape[a] for a in axes]):
            c = list(base)
            for a, v in zip(axes, sub):
                c[a] = v
            out.append(self.rank_of(c))
        return out

    def index_in_group(self, rank: int, axes) -> int:
        c = self.coords(rank)
        return int(np.ravel_multi_index([c[a] for a in axes], [self.shape[a] for a in axes])) \
            if axes else 0


def split_count(grid: GridInfo, sharding: Sharding, dim: int) -> int:
    """Into how many blocks `dim` is split."""
    return grid.group_size(sharding.splitters(dim))


def block_index(grid: GridInfo, sharding: Sharding, dim: int, rank: int) -> int:
    """Which block of `dim` rank `rank` holds (outer axes first)."""
    return grid.index_in_group(rank, sharding.splitters(dim))


def local_type(grid: GridInfo, sharding: Sharding, t: RankedTensorType) -> RankedTensorType:
    """The type of one rank's piece: static split sizes divided (they must divide), `?`
    kept; a ValueError names what does not divide."""
    shape = []
    for d, n in enumerate(t.shape):
        k = split_count(grid, sharding, d)
        if n is not None and n % k:
            raise ValueError(f"dimension {d} of {t} (size {n}) is not divisible into {k} "
                             f"blocks")
        shape.append(n if n is None else n // k)
    return RankedTensorType(tuple(shape), t.element)


def global_type(grid: GridInfo, sharding: Sharding, t: RankedTensorType) -> RankedTensorType:
    """The type of the whole value whose piece has type `t`."""
    shape = tuple(n if n is None else n * split_count(grid, sharding, d)
                  for d, n in enumerate(t.shape))
    return RankedTensorType(shape, t.element)


def local_piece(x: np.ndarray, grid: GridInfo, sharding: Sharding, rank: int) -> np.ndarray:
    """Rank `rank`'s piece of the global array `x`: its block of each split dimension; a
    partial placement keeps the whole value on the first rank of the axis and zeros on the
    others (their sum is x)."""
    x = np.asarray(x)
    index = []
    for d, n in enumerate(x.shape):
        k = split_count(grid, sharding, d)
        if n % k:
            raise ValueError(f"dimension {d} of an array of shape {list(x.shape)} is not "
                             f"divisible into {k} blocks")
        b = block_index(grid, sharding, d, rank)
        index.append(slice(b * (n // k), (b + 1) * (n // k)))
    piece = np.array(x[tuple(index)], order="C")        # (ascontiguousarray makes 0-d 1-d)
    coords = grid.coords(rank)
    if any(p == PARTIAL and coords[a] for a, p in enumerate(sharding.placements)):
        piece = np.zeros_like(piece)
    return piece


def assemble(pieces: list, grid: GridInfo, sharding: Sharding) -> np.ndarray:
    """The global value from every rank's piece (indexed by rank): blocks concatenated,
    partial terms summed (in float64 for floats, then rounded once), replicated copies taken
    from the first rank holding them."""
    first = np.asarray(pieces[0])
    shape = [n * split_count(grid, sharding, d) for d, n in enumerate(first.shape)]
    partial_axes = [a for a, p in enumerate(sharding.placements) if p == PARTIAL]
    wide = np.float64 if first.dtype.kind == "f" else first.dtype
    out = np.zeros(shape, dtype=wide)
    for rank in range(grid.size):
        c = grid.coords(rank)
        if any(c[a] for a, p in enumerate(sharding.placements)
               if p == REPLICATE):
            continue
        index = []
        for d, n in enumerate(first.shape):
            b = block_index(grid, sharding, d, rank)
            index.append(slice(b * n, (b + 1) * n))
        if partial_axes:
            out[tuple(index)] += pieces[rank]
        else:
            out[tuple(index)] = pieces[rank]
    return out.astype(first.dtype)
