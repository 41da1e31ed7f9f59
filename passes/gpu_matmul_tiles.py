"""gpu-matmul-tiles: float32 contractions on memrefs to a shared-memory tiled, register-blocked
`gpu.launch` (the classic SGEMM kernel), with the contraction's epilogue at the store.

Which ops: those linalg-matmul-blis computes (passes/blis/contraction.py matches them: a
matmul, batch matmul or NCHW convolution, or a generic adding a product of f32 inputs into
f32 or into a widened f64 output, every index linear in the loop dims, the loops split into
batch, M, N and K groups). Its recognition, index splitting and epilogue (passes/blis/
epilogue.py) are used as they are; only the schedule differs.

The kernel. A block computes a `tile-m` x `tile-n` tile of C (flat M and N; one grid
dimension each, x over N, y over M, z over the flat batch), with `tile-m / thread-m` x
`tile-n / thread-n` threads each owning a `thread-m` x `thread-n` register block of it:
rows `ty + i * (tile-m / thread-m)`, columns `tx + j * (tile-n / thread-n)` (strided, so a
warp's stores and shared-memory reads go to consecutive columns):

    acc[thread-m][thread-n] = 0                         registers (loop.for iter_args)
    for k0 in [0, K) step tile-k:
      As[kk][r] = A(m0 + r, k0 + kk)  or 0 outside      cooperative loads, every thread a
      Bs[kk][c] = B(k0 + kk, n0 + c)  or 0 outside      strided share, coalesced along k / n
      gpu.barrier                                        the tiles are written
      part = 0; for kk < tile-k: part[i][j] = fma(As[kk][row i], Bs[kk][col j], part[i][j])
      acc += part                                        (extf first into an f64 C)
      gpu.barrier                                        the tiles are read
    for each (i, j) inside M x N: C = acc (+ C's value) -> the epilogue, or stored

A(m, k) is the product of A's factors at the point, B's likewise (a convolution's window
read straight from its input, as in BLIS's packing). Sizes need not be multiples of the
tiles: loads outside M, N or K give zeros (which add nothing), stores outside are skipped.

Numerics: irkit's contraction sums f32 products in f64 (the graph's f64 accumulator). Here,
as in the CPU's BLIS nest, each thread sums `tile-k` products in f32 with fused
multiply-adds (chunks of 16 by default, against BLIS's 64: within the bound of
tests/unit/test_reduction_accuracy.py) and adds each chunk into its f64 register
accumulator, so the f64 sum costs one f64 add per `tile-k` FMAs. An f32 C gets f32 chunk
sums, added in f32, as BLIS does.

The output. Where the zero fill before the op is folded (static, non-zero K:
`contraction.zero_fill`), the sums are stored, not added to C; where the contraction is in
a `fusion.group` with an epilogue (truncation, bias, activation, ...: `epilogue.find`),
each point's sum goes through the epilogue's ops into the group's outputs and the f64
accumulator buffer is dropped when nothing reads it any more.

Tiles fitted to the problem. Where M, N or K is static and smaller than the tile, the tile
shrinks to it: `thread-m` to at most M, `tile-m` to M rounded up to a multiple of
`thread-m` (the block's rows of threads cover it), the same for N, and `tile-k` to at most
K. A 2 x 10 output over K = 784 (logreg's forward at batch 2) is then one block of 3
threads with a 2 x 12 tile, not a 64 x 64 tile of 256 threads 98% padding: a GPU idles
less, the interpreter runs 15k multiply-adds instead of 3.2M.

Where it runs: in the nvptx ladder's `loop` row, after `bufferize` (the op is on memrefs)
and before `lower-linalg-to-loop`, where linalg-matmul-blis stands in the CPU's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.types import F32, I64
from irkit.dialects import arith
from irkit.dialects.fusion import GroupOp
from irkit.dialects.math import FmaOp
from irkit.dialects.memory import DimOp, LoadOp, StoreOp
from irkit.passes.blis import epilogue as epilogues
from irkit.passes.blis.contraction import Contraction, contractions, zero_fill
from irkit.passes.blis.epilogue import Epilogue
from irkit.passes.blis.nest import Blis, Emitter, Index
from irkit.passes.gpu_block import Kernel, all_of, guarded
from irkit.passes.linalg_matmul_blis import dissolve, drop_temporary
from irkit.passes.lower_linalg_to_loop import IndexConstants


@dataclass(frozen=True)
class _Sizes:
    """A kernel's tile of C, its K step and each thread's register block."""

    tile_m: int
    tile_n: int
    tile_k: int
    thread_m: int
    thread_n: int

    def fitted(self, m: Index, n: Index, k: Index) -> "_Sizes":
        """The sizes shrunk to the static extents smaller than the tiles (module
        docstring); a dynamic extent keeps its tile."""
        tile_m, thread_m = _fit(self.tile_m, self.thread_m, m)
        tile_n, thread_n = _fit(self.tile_n, self.thread_n, n)
        tile_k = min(self.tile_k, max(k, 1)) if isinstance(k, int) else self.tile_k
        return replace(self, tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, thread_m=thread_m,
                       thread_n=thread_n)


def _fit(tile: int, thread: int, size: Index) -> tuple[int, int]:
    """(tile, thread block) along a dim of `size`: the thread block at most the size, the
    tile at most the size rounded up to a multiple of the thread block."""
    if not isinstance(size, int):
        return tile, thread
    thread = min(thread, max(size, 1))
    return min(tile, -(-max(size, 1) // thread) * thread), thread


class _Tiles:
    """The tiled kernel of one matched contraction, built before its op (module
    docstring). Index splitting, linear forms, the factors' product and C's indices are
    the BLIS nest's own methods (`Blis.split`, `at`, `product`, `c_index`), which read
    only `c`, `e`, `extent` and `ivs` (the batch dims' values, in the kernel)."""

    split = Blis.split
    at = Blis.at
    product = Blis.product
    c_index = Blis.c_index
    widen = Blis.widen

    def __init__(self, options: "GpuMatmulTiles", c: Contraction, constants: IndexConstants,
                 overwrite: bool, ep: Epilogue | None) -> None:
        self.o = _Sizes(options.tile_m, options.tile_n, options.tile_k, options.thread_m,
                       options.thread_n)
        self.c, self.overwrite, self.ep = c, overwrite, ep
        self.e = Emitter(c.op, constants)
        self.top = Builder.before(c.op)
        self.extent: list[Index] = [x if isinstance(x, int) else self.top.create(
            DimOp, x[0], axis=IntegerAttr(x[1], I64), location=self.e.location).result
            for x in c.extents]
        self.ivs: dict[int, Index] = {}
        self.acc_type = c.c.type.element

    def flat(self, group: list[int]) -> Index:
        size: Index = 1
        for d in group:
            size = self.e.mul(self.top, size, self.extent[d])
        return size

    def emit(self) -> None:
        c, e, top = self.c, self.e, self.top
        self.M, self.N, self.K = (self.flat(g) for g in (c.m, c.n, c.k))
        self.o = o = self.o.fitted(self.M, self.N, self.K)
        grid = [e.ceildiv(top, self.N, o.tile_n), e.ceildiv(top, self.M, o.tile_m),
                self.flat(c.batch)]
        grid = [max(g, 1) if isinstance(g, int) else       # at least one block: guards
                top.create(arith.MaxSIOp, g, e.v(1)).result for g in grid]
        self.tx, self.ty = o.tile_n // o.thread_n, o.tile_m // o.thread_m
        kernel = Kernel(e, top, grid, (self.tx, self.ty), [((o.tile_k, o.tile_m), F32),
                                                            ((o.tile_k, o.tile_n), F32)])
        self.kernel = kernel
        b = kernel.body
        bx, by, bz = kernel.block_id
        tx, ty = kernel.thread_id[:2]
        self.ivs = self.split(b, bz, c.batch) if c.batch else {}
        self.m0 = e.mul(b, by, o.tile_m)
        self.n0 = e.mul(b, bx, o.tile_n)
        #: the thread's rows and columns in the tile (strided: module docstring)
        self.rows = [e.v(e.add(b, ty, i * self.ty)) for i in range(o.thread_m)]
        self.cols = [e.v(e.add(b, tx, j * self.tx)) for j in range(o.thread_n)]
        zeros = [e.fconst(b, 0.0, self.acc_type)] * (o.thread_m * o.thread_n)
        accs = e.for_(b, 0, self.K, o.tile_k, self.k_tile, zeros)
        self.store(b, accs)

    # ----- one K tile -----------------------------------------------------------------------

    def k_tile(self, b: Builder, k0: Value, accs: list[Value]) -> list[Value]:
        o, e, kernel = self.o, self.e, self.kernel
        a_tile, b_tile = kernel.shared
        kernel.strided(b, o.tile_m * o.tile_k, lambda b2, i: self.load_a(b2, i, k0, a_tile))
        kernel.strided(b, o.tile_k * o.tile_n, lambda b2, i: self.load_b(b2, i, k0, b_tile))
        kernel.barrier(b)
        zeros = [e.fconst(b, 0.0, F32)] * len(accs)
        parts = e.for_(b, 0, o.tile_k, 1, lambda b2, kk, p: self.step(b2, kk, p), zeros)
        kernel.barrier(b)
        loc = e.location
        return [b.create(arith.AddFOp, acc, self.widen(b, part, self.acc_type),
                         location=loc).result for acc, part in zip(accs, parts)]

    def load_a(self, b: Builder, i: Value, k0: Value, tile: Value) -> None:
        """Element i of the A tile (k fastest): `As[kk][r] = A(m0 + r, k0 + kk)`."""
        e, c = self.e, self.c
        r, kk = e.div(b, i, self.o.tile_k), e.rem(b, i, self.o.tile_k)
        m, k = e.add(b, self.m0, r), e.add(b, k0, kk)
        inside = all_of(e, b, [e.lt(b, m, self.M), e.lt(b, k, self.K)])
        value = guarded(e, b, inside, lambda b2: self.product(
            b2, c.a, self.ivs | self.split(b2, m, c.m) | self.split(b2, k, c.k)), F32)
        b.create(StoreOp, value, tile, [e.v(kk), e.v(r)], location=e.location)

    def load_b(self, b: Builder, i: Value, k0: Value, tile: Value) -> None:
        """Element i of the B tile (n fastest): `Bs[kk][j] = B(k0 + kk, n0 + j)`."""
        e, c = self.e, self.c
        kk, j = e.div(b, i, self.o.tile_n), e.rem(b, i, self.o.tile_n)
        k, n = e.add(b, k0, kk), e.add(b, self.n0, j)
        inside = all_of(e, b, [e.lt(b, k, self.K), e.lt(b, n, self.N)])
        value = guarded(e, b, inside, lambda b2: self.product(
            b2, c.b, self.ivs | self.split(b2, k, c.k) | self.split(b2, n, c.n)), F32)
        b.create(StoreOp, value, tile, [e.v(kk), e.v(j)], location=e.location)

    def step(self, b: Builder, kk: Value, parts: list[Value]) -> list[Value]:
        """One k of the register block: thread-m + thread-n shared loads, their outer
        product accumulated with fused multiply-adds."""
        o, loc = self.o, self.e.location
        a_tile, b_tile = self.kernel.shared
        a = [b.create(LoadOp, a_tile, [kk, r], location=loc).result for r in self.rows]
        w = [b.create(LoadOp, b_tile, [kk, j], location=loc).result for j in self.cols]
        return [b.create(FmaOp, a[i], w[j], parts[i * o.thread_n + j], location=loc).result
                for i in range(o.thread_m) for j in range(o.thread_n)]

    # ----- the store ------------------------------------------------------------------------

    def store(self, b: Builder, accs: list[Value]) -> None:
        """Each point of the register block inside M x N: its sum (plus C's value unless
        the fill was folded) through the epilogue, or into C."""
        o, e = self.o, self.e
        for i, r in enumerate(self.rows):
            m = e.add(b, self.m0, r)
            for j, col in enumerate(self.cols):
                n = e.add(b, self.n0, col)
                inside = all_of(e, b, [e.lt(b, m, self.M), e.lt(b, n, self.N)])
                acc = accs[i * o.thread_n + j]
                e.if_(b, inside, lambda b2, m=m, n=n, acc=acc: self.point(b2, m, n, acc),
                      lambda b2: None)

    def point(self, b: Builder, m: Index, n: Index, acc: Value) -> None:
        c, e = self.c, self.e
        index = self.c_index(b, m, n)
        if not self.overwrite:
            old = b.create(LoadOp, c.c, index, location=e.location).result
            acc = b.create(arith.AddFOp, old, acc, location=e.location).result
        if self.ep is None:
            b.create(StoreOp, acc, c.c, index, location=e.location)
            return
        dims = self.ivs | self.split(b, m, c.m) | self.split(b, n, c.n)
        epilogues.apply(self.ep, self, b, acc, dims, 1)


@register_pass
class GpuMatmulTiles(Pass):
    """Float32 contractions on memrefs to shared-memory tiled GPU launches (module
    docstring).

    Algorithm:
      1. Collect the structured ops on memrefs; generalize each matmul, batch matmul and
         NCHW convolution and match the contraction (passes/blis/contraction.py).
      2. Dissolve the `fusion.group` it is in, if any, and find the epilogue among the
         group's ops after it; fold the zero fill before it (static, non-zero K).
      3. Fit the tiles to the static extents smaller than them (module docstring).
         Build the launch before the op: ceil(N / tile-n) x ceil(M / tile-m) x batch
         blocks of (tile-n / thread-n) x (tile-m / thread-m) threads, two workgroup tiles
         (tile-k x tile-m of A, tile-k x tile-n of B); per K tile, cooperative guarded
         loads, a barrier, each thread's thread-m x thread-n fused multiply-adds per k,
         the chunk added into its accumulators, a barrier; then the guarded stores through
         the epilogue.
      4. Erase the op and the epilogue's members; drop the accumulator buffer when only
         its frees use it.

    Options: `tile-m`, `tile-n`, `tile-k` (the block's tile of C and its K step),
    `thread-m`, `thread-n` (each thread's register block; they divide `tile-m` and
    `tile-n`, and the block has at most 1024 threads).
    """

    name = "gpu-matmul-tiles"
    tile_m: int = 64
    tile_n: int = 64
    tile_k: int = 16
    thread_m: int = 4
    thread_n: int = 4

    def run(self, root: Operation) -> None:
        self.check(root)
        constants = IndexConstants()
        for op, generic, c in contractions(root):
            self.rewrite(op, generic, c, constants)

    def check(self, root: Operation) -> None:
        sizes = (self.tile_m, self.tile_n, self.tile_k, self.thread_m, self.thread_n)
        threads = (self.tile_m // max(self.thread_m, 1)) * (self.tile_n // max(self.thread_n, 1))
        if min(sizes) < 1 or self.tile_m % self.thread_m or self.tile_n % self.thread_n \
                or threads > 1024:
            raise IRError(f"{self.name}: the tiles must be positive, thread-m must divide "
                          f"tile-m and thread-n tile-n, and a block have at most 1024 threads "
                          f"(got tile-m={self.tile_m}, tile-n={self.tile_n}, "
                          f"tile-k={self.tile_k}, thread-m={self.thread_m}, "
                          f"thread-n={self.thread_n})", root.location)

    def rewrite(self, op: Operation, generic, c: Contraction,
                constants: IndexConstants) -> None:
        group = op.parent_op
        ep = None
        if isinstance(group, GroupOp):
            following = dissolve(group, op)
            ep = epilogues.find(c, following, {op, generic})
        fill = zero_fill(c)
        if fill is not None:
            fill.erase()
        if ep is not None:
            for alloc in ep.hoisted:
                alloc.move_before(op if generic is op else generic)
        _Tiles(self, c, constants, fill is not None, ep).emit()
        if ep is not None:
            for m in ep.ops():
                m.erase()
        generic.erase()
        if generic is not op:
            op.erase()
        if ep is not None and fill is not None:
            drop_temporary(c.c)
