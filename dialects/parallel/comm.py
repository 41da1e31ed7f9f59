"""`Communicator`: what the collectives of the `parallel` dialect ask of a runtime.

The interpreter runs a collective op by calling the communicator it finds in its state
(`interp.state["parallel.communicator"]`, one per rank). The numpy meaning of every
collective is written here once, on top of two primitives a runtime supplies:

- `exchange(x, group)`: every member of `group` (ranks, in group order) contributes its `x`
  and receives the list of all contributions (an all-gather of arrays);
- `send(x, dest)` / `recv(source)`: point to point, in order per pair of ranks.

`irkit.dialects.parallel.spmd.ThreadCommunicator` implements them between threads of one
process (every rank of a grid simulated); an MPI runtime implements them with mpi4py and may
override the collectives themselves with MPI's (`Allreduce`, `Reduce_scatter_block`, ...),
as long as the results are these. Sums are taken in float64 in group order, then rounded
once, so every rank of a group gets the same bits.
"""

from __future__ import annotations

import numpy as np

from irkit.dialects.parallel.sharding import GridInfo


class Communicator:
    """One rank's handle on its grid (see the module docstring)."""

    def __init__(self, grid: GridInfo, rank: int) -> None:
        self.grid = grid
        self.rank = rank

    # ----- what a runtime supplies ------------------------------------------------------

    def exchange(self, x: np.ndarray, group: list[int]) -> list[np.ndarray]:
        raise NotImplementedError

    def send(self, x: np.ndarray, dest: int) -> None:
        raise NotImplementedError

    def recv(self, source: int) -> np.ndarray:
        raise NotImplementedError

    # ----- the collectives, over grid axes (indices) --------------------------------------

    def group(self, axes) -> list[int]:
        return self.grid.group(self.rank, axes)

    def index_in_group(self, axes) -> int:
        return self.grid.index_in_group(self.rank, axes)

    def all_reduce(self, x: np.ndarray, axes) -> np.ndarray:
        parts = self.exchange(x, self.group(axes))
        return _sum(parts, x.dtype)

    def all_gather(self, x: np.ndarray, axes, dim: int) -> np.ndarray:
        return np.concatenate(self.exchange(x, self.group(axes)), axis=dim)

    def reduce_scatter(self, x: np.ndarray, axes, dim: int) -> np.ndarray:
        total = self.all_reduce(x, axes)
        k = self.grid.group_size(axes)
        return np.ascontiguousarray(np.split(total, k, axis=dim)[self.index_in_group(axes)])

    def all_to_all(self, x: np.ndarray, axes, split_dim: int, concat_dim: int) -> np.ndarray:
        parts = self.exchange(x, self.group(axes))
        k, i = len(parts), self.index_in_group(axes)
        return np.concatenate([np.split(p, k, axis=split_dim)[i] for p in parts],
                              axis=concat_dim)

    def broadcast(self, x: np.ndarray, axes, root: int) -> np.ndarray:
        return self.exchange(x, self.group(axes))[root].copy()

    def peer(self, axis: int, offset: int) -> int | None:
        """The rank `offset` steps along `axis` from this one; None off the grid's edge."""
        c = list(self.grid.coords(self.rank))
        c[axis] += offset
        if not 0 <= c[axis] < self.grid.shape[axis]:
            return None
        return self.grid.rank_of(c)


def _sum(parts: list, dtype) -> np.ndarray:
    wide = np.float64 if np.dtype(dtype).kind == "f" else dtype
    total = np.zeros(parts[0].shape, dtype=wide)
    for p in parts:
        total = total + p.astype(wide)
    return total.astype(dtype)
