"""Output buffers for tests that call compiled code in destination-passing style.

A compiled function writes its outputs into buffers the caller allocates. Tests fill them
with garbage first, values no correct result is likely to hold, so that an element the
function forgot to write makes the comparison fail instead of passing by luck on zeros.
"""

from __future__ import annotations

import numpy as np


def garbage(shape, dtype) -> np.ndarray:
    """A buffer of `shape` and `dtype` whose every element must be overwritten to pass."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.full(shape, 12345.0, dtype)
    if dtype.kind == "b":
        return np.ones(shape, dtype)
    return np.full(shape, 77, dtype)


def garbage_like(like: np.ndarray) -> np.ndarray:
    """`garbage` with the shape and dtype of `like`."""
    return garbage(like.shape, like.dtype)
