"""The output arrays of compiled calls: large ones aligned to cache lines and reused from the
call before once nothing else holds them.

Why. A compiled function writes its outputs into arrays the runner allocates per call. An
array of tens of MB is a fresh `mmap` every time (glibc maps blocks above its threshold,
at most 32 MiB, and unmaps them on free), so each call first takes a page fault per 4 KiB
page and has the kernel zero it: measured on the fused elementwise kernel E = D + (A+B)*C
over 10^7 float32 (40 MB out), 1 thread, a call took 14.1 ms of which the kernel is 8.9 ms
(58% against 92% of the STREAM add bandwidth). PyTorch's caching allocator and JAX's
donated buffers answer the same cost; here, the runner keeps each large output of the last
call and hands it out again when the caller has dropped every reference to it (the array,
and any view of it). Then the kernel runs on warm pages: 7.3 ms, 2.1x numpy's
`d + (a + b) * c` (numbers from the streaming stores' measurements: one process, load 2).

Aligned to 64 bytes (a cache line; numpy's own arrays start 16 bytes past one), so that a
vector store of 16 floats never straddles two lines and non-temporal stores take their whole
width (`vector-streaming-stores`). And placed 1088 bytes into a 4 KiB page, not 64: a
kernel that loads x[i + d] soon after it stored y[i] stalls when the two addresses agree in
their low 12 bits (the CPU takes the load for a reload of the store: "4K aliasing"), and
numpy's large inputs start 16 bytes into a page, so an output at 64 made d = 12 floats.
Measured on the 4096 x 1024 row softmax, 1 thread, its input 16 bytes into a page (best of
15, six rounds): the output at 64 bytes into a page 2.67 ms; at 16 (the input's offset)
2.33; at 1088, 2112 or 3136 bytes 2.30-2.37.

Whether an array is still held is read from reference counts: the runner's own references
are counted once, on a pair made here (`_BASELINE`), and any count above them is a reference
the caller holds. A view of an output refers to the buffer the output is a view of (numpy
points a view's `base` at the array that owns the memory), so the buffer's count is read too.
A caller that kept only a raw pointer (`ctypes.data`) after dropping the array kept no
reference: as with freed memory, what it points to is no longer its own.

Small outputs (under `MIN_BYTES`) are allocated fresh: malloc serves them from its pools.
Threads: the runner's `prepare` holds the array in its `outs` list while the call runs, so
another thread's call sees it held and allocates its own.
"""

from __future__ import annotations

import math
import sys

import numpy as np

#: the outputs smaller than this are allocated fresh each call
MIN_BYTES = 1 << 20
#: the alignment of a kept output's first element
ALIGN = 64
#: where in a 4 KiB page a kept output starts: a multiple of `ALIGN`, and far from numpy's
#: large arrays, which start 16 bytes into a page (glibc's mmap header; see the docstring)
PAGE, PAGE_OFFSET = 4096, 1088


def aligned_empty(shape: tuple, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(buffer, array): an uninitialized `array` of `shape` and `dtype` whose data starts
    `PAGE_OFFSET` bytes into a 4 KiB page inside `buffer`, the bytes that own it."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    buffer = np.empty(nbytes + PAGE, np.uint8)
    skip = (PAGE_OFFSET - buffer.ctypes.data) % PAGE
    return buffer, buffer[skip:skip + nbytes].view(dtype).reshape(shape)


def _counts(pair: tuple[np.ndarray, np.ndarray]) -> tuple[int, int]:
    buffer, array = pair
    return sys.getrefcount(buffer), sys.getrefcount(array)


def _baseline() -> tuple[int, int]:
    """The reference counts `_counts` reads of a kept pair nobody else holds, in this
    Python (the interpreter's own counting differs between versions)."""
    kept = {0: aligned_empty((1,), np.uint8)}
    return _counts(kept[0])


_BASELINE = _baseline()


class OutputArrays:
    """A runner's output arrays, keyed by (function, output index)."""

    def __init__(self) -> None:
        self._kept: dict = {}

    def get(self, key, shape: tuple, dtype) -> np.ndarray:
        """An uninitialized array for output `key`: the last call's, when it is large, of
        this shape and type, and nobody else holds it; else a new one (kept when large)."""
        dtype = np.dtype(dtype)
        # math.prod, not np.prod: that builds an array from the tuple, 3 us per call, which
        # was 5% of the logistic regression's step (64 -> 59 us) and a quarter of a tiny one's
        if math.prod(shape) * dtype.itemsize < MIN_BYTES:
            return np.empty(shape, dtype)
        pair = self._kept.get(key)
        if pair is not None and pair[1].shape == tuple(shape) and pair[1].dtype == dtype \
                and _counts(pair) == _BASELINE:
            return pair[1]
        self._kept[key] = pair = aligned_empty(tuple(shape), dtype)
        return pair[1]
