"""A model's large variables on huge pages: side by side in one anonymous mapping that the
kernel is asked to back with 2 MiB pages (`madvise(MADV_HUGEPAGE)`, Linux's transparent
huge pages in their default "madvise" mode).

Why. numpy gives each large array its own mapping of 4 KiB pages, and where those pages
fall in physical memory decides how the array shares the caches (which are indexed by
physical address) and how many TLB entries it takes. The same compiled training step then
ran at two speeds, by the luck of where its weights fell: the MLP 784-256-10 at B=128
(bench/run.py's `mlp128`, 1 thread, 2-vCPU Xeon VM), four identical builds in one process,
ran 697-721 us, one of the four often 627-671 (three processes: 721 / 717 / 671 / 716, 712
/ 709 / 709 / 639, 722 / 725 / 660 / 723). Running each build's code on another build's
arrays showed that `w1` (784 x 256 float32, 800 KB) decided it. With `w1` copied into a
huge page, all four ran 637-657 us in every process. A 2 MiB page is contiguous in
physical memory, so the array spreads evenly over the cache sets, and it takes one TLB
entry.

What goes there (`place`): the arrays of at least `MIN_BYTES`, packed at `ALIGN`-byte
offsets into one mapping per call (a model's initial values, or the arrays a `restore`
reads, are one call each), its size rounded up to whole huge pages. Smaller arrays stay as
numpy allocates them (malloc's pools): they fit the caches whatever their pages. Where the
platform has no `MADV_HUGEPAGE` (not Linux) or the kernel refuses the advice, the mapping
is plain pages, as numpy's would be.

The mapping lives as long as any array in it: numpy's views keep the buffer, and the
buffer keeps the mapping.
"""

from __future__ import annotations

import mmap

import numpy as np

#: the arrays smaller than this are left where numpy put them
MIN_BYTES = 1 << 18
#: the huge page size the mapping is aligned to and made of (x86-64's 2 MiB)
HUGE_PAGE = 1 << 21
#: the alignment of each array in the mapping (a cache line)
ALIGN = 64


def place(values: dict) -> dict:
    """`values` (name -> array) with the arrays of at least `MIN_BYTES` copied side by side
    into one mapping advised for huge pages (module docstring); the others as they were."""
    large = [k for k, v in values.items() if v.nbytes >= MIN_BYTES]
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    if not large or not hasattr(mmap, "MADV_HUGEPAGE") or not flags:
        return dict(values)
    offsets, total = {}, 0
    for k in large:
        offsets[k] = total
        total += -(-values[k].nbytes // ALIGN) * ALIGN
    size = -(-total // HUGE_PAGE) * HUGE_PAGE
    # a private mapping (a shared one is shmem, whose huge pages are a separate setting),
    # one huge page longer than needed, so that an aligned run of `size` bytes fits in it
    region = mmap.mmap(-1, size + HUGE_PAGE, flags=flags)
    buffer = np.frombuffer(region, np.uint8)
    start = -buffer.ctypes.data % HUGE_PAGE
    try:
        region.madvise(mmap.MADV_HUGEPAGE, start, size)     # before the pages are touched
    except OSError:
        pass                                 # (transparent huge pages off: plain pages)
    out = dict(values)
    for k in large:
        v = values[k]
        at = start + offsets[k]
        out[k] = buffer[at:at + v.nbytes].view(v.dtype).reshape(v.shape)
        out[k][...] = v
    return out
