"""gpu-matmul-tiles: float32 contractions on memrefs to a shared-memory tiled, register-blocked
`gpu.launch` (the classic SGEMM kernel), with the contraction's epilogue at the store.

Which ops: those linalg-matmul-blis computes (passes/blis/contraction.py matches them: a
matmul, batch matmul or NCHW convolution, or a generic adding a product of f32 inputs into
f32 or into a widened f64 output, every index linear in the loop dims, the loops split into
batch, M, N and K groups). Its recognition, index splitting and epilogue (passes/blis/
epilogue.py) are used as they are; only the schedule differs.

The kernel. A block computes a `tile-m` x `tile-n` tile of C (flat M and N; one grid
dimension each, x over N, y over M, z over the flat batch), with `tile-m / thread-m` x
`tile-n / thread-n` threads each owning a `thread-m` x `thread-n` register block of it. A
thread's rows are groups of 4 consecutive ones (where 4 divides thread-m; else single
rows), the threads' groups side by side: `ty * 4 + i % 4 + (i // 4) * (tile-m / thread-m) *
4`, columns likewise, so that a warp's shared-memory reads go to consecutive words (no bank
conflicts) and each group is 16 aligned bytes:

    acc[thread-m][thread-n] = 0; f = fetch(0)           registers (loop.for iter_args)
    for k0 in [0, K) step tile-k:
      As[kk][r], Bs[kk][c] = f                          the thread's share of the tiles
      gpu.barrier                                        the tiles are written
      f = fetch(k0 + tile-k) if k0 + tile-k < K else 0  in flight during the FMAs below
      part = 0; for kk < tile-k (unrolled):
        part[i][j] = fma(As[kk][row i], Bs[kk][col j], part[i][j])
      gpu.barrier                                        the tiles are read
      acc += part                                        (extf first into an f64 C)
    for each (i, j) inside M x N: C = acc (+ C's value) -> the epilogue, or stored

    fetch(k0): A(m0 + r, k0 + kk) for the thread's elements of the A tile (k fastest),
    B(k0 + kk, n0 + c) for those of the B tile (n fastest): element tid + j * threads for
    each j (coalesced), all the loads issued before any of their values is stored

Fetching the next tiles into registers before the multiply-adds of this one hides the
global loads' latency behind them (one barrier pair per tile, no second shared buffer).
The A tile's rows are padded by 4 floats where rows come in groups of 4: the threads
storing one row of it hold consecutive k, which without the padding all fall in one bank.
Bounds checks are emitted only along the extents that are not static multiples of their
tile: a 4096^3 product has none.

Large problems. Where M, N and the batch are static and tiles of twice the rows still give
at least `grow-blocks` blocks (128 by default: about one per multiprocessor of an H100 or
H200, which is what fits of blocks this large), the tile and the register block double
along M: 128 x 64 tiles of 8 x 4 per thread, twice the multiply-adds per shared load of B.
Measured on an H200, float32, median of 20 (ms; cuBLAS through CuPy in the same process):

    tile (register block), tile-k     4096^3    2048^3    1024^3
    64 x 64 (4 x 4), 16               9.75      1.10
    64 x 64 (4 x 4), 32               7.09      0.850     0.111
    128 x 128 (8 x 8), 16             5.89      0.788
    128 x 64 (8 x 4), 16              6.99      0.891
    128 x 64 (8 x 4), 32              5.27      0.670     0.096
    cuBLAS                            2.73      0.366     0.079

128 x 128 of 8 x 8 holds 64 f64 accumulators, 128 registers: ptxas spills at tile-k 16 and
more at 32 (the prefetched tiles take registers too), so the larger tile loses to 128 x 64
at tile-k 32. Smaller or dynamic problems keep 64 x 64 tiles, which give more blocks (the
MLP's matmuls at batch 1024 are 8 to 32 blocks of them; its train step took 0.301 ms with
tile-k 16 and 0.302 with 32).

A(m, k) is the product of A's factors at the point, B's likewise (a convolution's window
read straight from its input, as in BLIS's packing). Sizes need not be multiples of the
tiles: loads outside M, N or K give zeros (which add nothing), stores outside are skipped.

Numerics: irkit's contraction sums f32 products in f64 (the graph's f64 accumulator). Here,
as in the CPU's BLIS nest, each thread sums `tile-k` products in f32 with fused
multiply-adds (chunks of 32 by default, against BLIS's 64: within the bound of
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
from irkit.passes.gpu_block import Kernel, all_of, guarded, selected
from irkit.passes.linalg_matmul_blis import dissolve, drop_temporary
from irkit.passes.lower_linalg_to_loop import IndexConstants

#: the attribute that tells the backend a load's address alignment in bytes (MLIR's name;
#: read by backends/nvptx/kernels.py, whose constant it mirrors: passes do not import
#: backends)
ALIGNMENT_ATTR = "alignment"


@dataclass(frozen=True)
class _Sizes:
    """A kernel's tile of C, its K step and each thread's register block."""

    tile_m: int
    tile_n: int
    tile_k: int
    thread_m: int
    thread_n: int

    def grown(self, m: Index, n: Index, batch: Index, min_blocks: int) -> "_Sizes":
        """The tile and register block doubled along M where M, N and the batch are static
        and the doubled tiles still give at least `min_blocks` blocks (module docstring:
        large problems)."""
        if min_blocks <= 0 or not all(isinstance(x, int) for x in (m, n, batch)):
            return self
        blocks = -(-m // (2 * self.tile_m)) * -(-n // self.tile_n) * max(batch, 1)
        shared = 4 * self.tile_k * (2 * self.tile_m + _VECTOR + self.tile_n)
        if blocks < min_blocks or shared > _STATIC_SHARED:
            return self
        return replace(self, tile_m=2 * self.tile_m, thread_m=2 * self.thread_m)

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
        self.min_blocks = options.grow_blocks
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
        self.o = o = self.o.grown(self.M, self.N, self.flat(c.batch),
                                  self.min_blocks).fitted(self.M, self.N, self.K)
        grid = [e.ceildiv(top, self.N, o.tile_n), e.ceildiv(top, self.M, o.tile_m),
                self.flat(c.batch)]
        grid = [max(g, 1) if isinstance(g, int) else       # at least one block: guards
                top.create(arith.MaxSIOp, g, e.v(1)).result for g in grid]
        self.tx, self.ty = o.tile_n // o.thread_n, o.tile_m // o.thread_m
        #: the A tile's rows padded by a vector, so that the threads storing one column of
        #: it (consecutive k) hit different banks
        self.a_rows = o.tile_m + (_VECTOR if _vector(o.thread_m) > 1 else 0)
        kernel = Kernel(e, top, grid, (self.tx, self.ty), [((o.tile_k, self.a_rows), F32),
                                                            ((o.tile_k, o.tile_n), F32)])
        self.kernel = kernel
        b = kernel.body
        bx, by, bz = kernel.block_id
        tx, ty = kernel.thread_id[:2]
        self.ivs = self.split(b, bz, c.batch) if c.batch else {}
        self.m0 = e.mul(b, by, o.tile_m)
        self.n0 = e.mul(b, bx, o.tile_n)
        #: which extents need bounds checks (not a static multiple of their tile)
        self.ragged_m = not _multiple(self.M, o.tile_m)
        self.ragged_n = not _multiple(self.N, o.tile_n)
        self.ragged_k = not _multiple(self.K, o.tile_k)
        #: the thread's rows and columns in the tile (module docstring)
        self.rows = [e.v(p) for p in _lanes(e, b, ty, self.ty, o.thread_m)]
        self.cols = [e.v(p) for p in _lanes(e, b, tx, self.tx, o.thread_n)]
        zeros = [e.fconst(b, 0.0, self.acc_type)] * (o.thread_m * o.thread_n)
        first = self.fetch(b, 0)
        out = e.for_(b, 0, self.K, o.tile_k, self.k_tile, zeros + first)
        self.store(b, out[:len(zeros)])

    # ----- one K tile -----------------------------------------------------------------------

    def k_tile(self, b: Builder, k0: Value, carried: list[Value]) -> list[Value]:
        """Store the fetched tiles, fetch the next ones (their loads in flight during the
        multiply-adds), multiply-add this one (module docstring)."""
        o, e, kernel = self.o, self.e, self.kernel
        n = o.thread_m * o.thread_n
        accs, fetched = carried[:n], carried[n:]
        self.put(b, fetched)
        kernel.barrier(b)
        after = e.add(b, k0, o.tile_k)
        following = selected(e, b, e.lt(b, after, self.K), lambda b2: self.fetch(b2, after),
                             [v.type for v in fetched])
        parts = [e.fconst(b, 0.0, F32)] * n
        for kk in range(o.tile_k):          # unrolled: the shared loads' addresses are
            parts = self.step(b, e.v(kk), parts)   # constants apart, vectorizable
        kernel.barrier(b)
        loc = e.location
        return [b.create(arith.AddFOp, acc, self.widen(b, part, self.acc_type),
                         location=loc).result for acc, part in zip(accs, parts)] + following

    def tile_elements(self):
        """(tile, size, element) of the A and B tiles: `element(builder, i, k0)` is the
        value of element i of the tile at K offset k0, 0 outside the problem."""
        o = self.o
        return [(0, o.tile_m * o.tile_k, self.a_element),
                (1, o.tile_k * o.tile_n, self.b_element)]

    def fetch(self, b: Builder, k0: Index) -> list[Value]:
        """This thread's elements of the A and B tiles at K offset `k0`, in registers: all
        the loads before any store to shared memory, so that they are in flight together."""
        out = []
        for _, size, element in self.tile_elements():
            for i, owned in self.kernel.owned(b, size):
                out.append(element(b, i, k0, owned))
        return out

    def put(self, b: Builder, values: list[Value]) -> None:
        """The fetched elements into the workgroup tiles."""
        e, it = self.e, iter(values)
        for tile, size, _ in self.tile_elements():
            for i, owned in self.kernel.owned(b, size):
                v = next(it)
                store = (lambda b2, i=i, v=v, tile=tile: self.put_one(b2, tile, i, v))
                if owned is None:
                    store(b)
                else:
                    e.if_(b, owned, store, lambda b2: None)

    def put_one(self, b: Builder, tile: int, i: Index, v: Value) -> None:
        e, o = self.e, self.o
        if tile == 0:           # As[kk][r]: element i of A's tile is (r, kk), k fastest
            index = [e.rem(b, i, o.tile_k), e.div(b, i, o.tile_k)]
        else:                   # Bs[kk][j]: n fastest
            index = [e.div(b, i, o.tile_n), e.rem(b, i, o.tile_n)]
        b.create(StoreOp, v, self.kernel.shared[tile], [e.v(x) for x in index],
                 location=e.location)

    def a_element(self, b: Builder, i: Index, k0: Index, owned: Value | None) -> Value:
        """`A(m0 + r, k0 + kk)` of element i = (r, kk) of the A tile."""
        e, c = self.e, self.c
        r, kk = e.div(b, i, self.o.tile_k), e.rem(b, i, self.o.tile_k)
        m, k = e.add(b, self.m0, r), e.add(b, k0, kk)
        checks = [owned] + [e.lt(b, m, self.M)] * self.ragged_m + \
            [e.lt(b, k, self.K)] * self.ragged_k
        return self.load(b, checks, lambda b2: self.product(
            b2, c.a, self.ivs | self.split(b2, m, c.m) | self.split(b2, k, c.k)))

    def b_element(self, b: Builder, i: Index, k0: Index, owned: Value | None) -> Value:
        """`B(k0 + kk, n0 + j)` of element i = (kk, j) of the B tile."""
        e, c = self.e, self.c
        kk, j = e.div(b, i, self.o.tile_n), e.rem(b, i, self.o.tile_n)
        k, n = e.add(b, k0, kk), e.add(b, self.n0, j)
        checks = [owned] + [e.lt(b, k, self.K)] * self.ragged_k + \
            [e.lt(b, n, self.N)] * self.ragged_n
        return self.load(b, checks, lambda b2: self.product(
            b2, c.b, self.ivs | self.split(b2, k, c.k) | self.split(b2, n, c.n)))

    def load(self, b: Builder, checks: list, value) -> Value:
        """`value(builder)` where every check holds (guarded), else 0; unguarded where
        there is nothing to check."""
        checks = [x for x in checks if x is not None]
        if not checks:
            return value(b)
        return guarded(self.e, b, all_of(self.e, b, checks), value, F32)

    def step(self, b: Builder, kk: Value, parts: list[Value]) -> list[Value]:
        """One k of the register block: thread-m + thread-n shared loads, their outer
        product accumulated with fused multiply-adds."""
        o, loc = self.o, self.e.location
        a_tile, b_tile = self.kernel.shared
        a = [self.shared_load(b, a_tile, kk, r, i, o.thread_m) for i, r in enumerate(self.rows)]
        w = [self.shared_load(b, b_tile, kk, j, i, o.thread_n) for i, j in enumerate(self.cols)]
        return [b.create(FmaOp, a[i], w[j], parts[i * o.thread_n + j], location=loc).result
                for i in range(o.thread_m) for j in range(o.thread_n)]

    def shared_load(self, b: Builder, tile: Value, kk: Value, at: Value, i: int,
                    thread: int) -> Value:
        """Element (kk, at) of a workgroup tile, the i-th of the thread's row (column)
        positions; the first of a group of 4 consecutive ones is 16-byte aligned (the tile
        is, its rows are a multiple of 4 floats long, and the group starts at a multiple
        of 4): its `alignment` lets the backend read the group with one vector load."""
        load = b.create(LoadOp, tile, [kk, at], location=self.e.location)
        if _vector(thread) > 1 and i % _VECTOR == 0:
            load.attributes[ALIGNMENT_ATTR] = IntegerAttr(4 * _VECTOR, I64)
        return load.result

    # ----- the store ------------------------------------------------------------------------

    def store(self, b: Builder, accs: list[Value]) -> None:
        """Each point of the register block inside M x N: its sum (plus C's value unless
        the fill was folded) through the epilogue, or into C."""
        o, e = self.o, self.e
        for i, r in enumerate(self.rows):
            m = e.add(b, self.m0, r)
            for j, col in enumerate(self.cols):
                n = e.add(b, self.n0, col)
                checks = [e.lt(b, m, self.M)] * self.ragged_m + \
                    [e.lt(b, n, self.N)] * self.ragged_n
                acc = accs[i * o.thread_n + j]
                if not checks:
                    self.point(b, m, n, acc)
                    continue
                e.if_(b, all_of(e, b, checks), lambda b2, m=m, n=n, acc=acc:
                      self.point(b2, m, n, acc), lambda b2: None)

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


#: the static shared memory a block may declare (bytes)
_STATIC_SHARED = 48 * 1024
#: the width of the groups of consecutive rows (columns) a thread owns: 4 floats, what one
#: 128-bit shared-memory load reads
_VECTOR = 4


def _vector(thread: int) -> int:
    return _VECTOR if thread % _VECTOR == 0 else 1


def _lanes(e: Emitter, b: Builder, t: Value, count: int, thread: int) -> list[Index]:
    """The `thread` positions thread `t` of `count` owns along a tile of `count * thread`:
    groups of `v` consecutive ones (`v` = 4 where it divides `thread`, else 1), the
    threads' groups side by side, then the next group of each thread:
    `t * v + i % v + (i // v) * count * v`. Consecutive threads read consecutive groups
    (no bank conflicts), and a group is one 128-bit load."""
    v = _vector(thread)
    base = e.mul(b, t, v)
    return [e.add(b, base, i % v + (i // v) * count * v) for i in range(thread)]


def _multiple(size: Index, tile: int) -> bool:
    """Whether `size` is statically a positive multiple of `tile` (no bounds checks)."""
    return isinstance(size, int) and size > 0 and size % tile == 0


@register_pass
class GpuMatmulTiles(Pass):
    """Float32 contractions on memrefs to shared-memory tiled GPU launches (module
    docstring).

    Algorithm:
      1. Collect the structured ops on memrefs; generalize each matmul, batch matmul and
         NCHW convolution and match the contraction (passes/blis/contraction.py).
      2. Dissolve the `fusion.group` it is in, if any, and find the epilogue among the
         group's ops after it; fold the zero fill before it (static, non-zero K).
      3. Grow the tiles for large static problems, fit them to the static extents smaller
         than them (module docstring). Build the launch before the op: ceil(N / tile-n) x
         ceil(M / tile-m) x batch blocks of (tile-n / thread-n) x (tile-m / thread-m)
         threads, two workgroup tiles (tile-k x tile-m of A, its rows padded, tile-k x
         tile-n of B); the first tiles' elements fetched into registers; per K tile, those
         stored into the tiles, a barrier, the next tile's elements fetched, each thread's
         thread-m x thread-n fused multiply-adds per k, a barrier, the chunk added into its
         accumulators; then the stores (guarded where an extent is ragged) through the
         epilogue.
      4. Erase the op and the epilogue's members; drop the accumulator buffer when only
         its frees use it.

    Options: `tile-m`, `tile-n`, `tile-k` (the block's tile of C and its K step),
    `thread-m`, `thread-n` (each thread's register block; they divide `tile-m` and
    `tile-n`, and the block has at most 1024 threads); `grow-blocks`: a static problem
    whose tile and register block doubled along M still make at least this many blocks
    gets them doubled (0: never; the default, 128, is about one block per multiprocessor
    of an H100 or H200).
    """

    name = "gpu-matmul-tiles"
    tile_m: int = 64
    tile_n: int = 64
    tile_k: int = 32
    thread_m: int = 4
    thread_n: int = 4
    grow_blocks: int = 128

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
