"""The dot-product nest: a contraction with few output columns, vectorized along K.

Why. The BLIS micro-kernel's vectors run along N; where N is small and not a multiple of
the lanes (the logistic regression's and the MLP's 10 classes: 10 of 16 lanes on AVX-512),
most of each FMA is wasted, and a tile of 16 rows reads A by 16 broadcasts per k step
(16 streams of A's rows, more pointers than registers: LLVM spilled three of them, reloaded
every step). Where A is read along K at stride 1 (x @ w reads the rows of x) the product is
instead N dot products per row: vectors of `lanes` consecutive k, every lane busy, and one
horizontal sum per output at the end (one tree of adds for all of a tile's sums,
`lane_sums`). The weight gradient, whose A is read along M (x^T @ dz), is `swapped`
instead (nest.py).

The nest, for a row tile of `mr` rows and a group of `ng` of the N columns:

    omp.parallel {                                           a team region ("Threads")
    Bt = alloc N x K; Bt[j, k] = prod(B factors) at (k, j)   B transposed (K x N floats: w
                                                             is 31 KB), `lanes` rows at a
                                                             time in registers, by every
                                                             thread into its own Bt
    loop.parallel t over ceil(M / mr) row tiles              the threads split the rows
      for each group of columns (N split into `groups`, sizes within one):
        for k in [0, K - K % lanes) step lanes:              mr * ng vector accumulators
          a_r = A[row_r, k : k + lanes]                      (rows past M read row M - 1)
          acc[r][j] = fma(a_r, Bt[j0 + j, k : k + lanes], acc[r][j])
        s[r][j] = acc[r][j]'s lanes summed (`lane_sums`) + the tail k in [K - K % lanes, K)
        C[row_r, j0 + j] = s (or += s where no zero fill was folded; or the epilogue,
                              element by element, into its outputs)

The transpose (`transpose_rows`). Where B's rows hold the N columns side by side (w of
x @ w), `lanes` rows are `lanes` vector loads of N, laid end to end by `vector.shuffle`s and
each column picked out of them by one more (every N-th element), stored as one vector of
Bt's row: LLVM lowers the shuffles to permutes (`vpermt2ps`), about one instruction an
element, where the copy element by element was a scalar load, a store and index arithmetic
for each. The logistic regression's step (784 x 10, 1 thread, `.so` builds alternated in
one process) went from 52.2 to 47.7 us.

Threads. Every thread of the team transposes B into a Bt of its own (a private buffer of
the `omp.parallel`, dialects/omp.py: allocated and freed in the region, on each thread's
stack where `promote-buffers-to-stack` finds it small, as w's 31 KB) before the team splits
the row tiles. One shared Bt, written by the calling thread and read by all, had to move from
that core's cache to the others' on every call, line by line as the tiles asked for it:
on the 2-vCPU Xeon VM, `x @ w` at 100 x 1024 x 10 took 12.7-15.8 us on one thread and
20.8-22.2 on two (`set_threads` alternated in one process, medians), 10.7-11.1 with a Bt per
thread. The copies cost no time on the clock (each thread makes its own at once) and no
barrier (the region's first loop needs none). Without threads (`parallel=false`), one Bt
and a plain loop. The logistic regression step on 2 threads (B = 100, `.so` builds
alternated, both orders) went from 40.7 / 43.0 to 35.9 / 37.9 us (with the column parts of
nest.py); its `w` is still read across the cores after each update (the SGD step's writes
stay in the calling core's cache).

B where it lies (`b_lies`). A B given transposed, read along K at stride 1 as A is (PyTorch's
Linear weight [N, K], `x @ transpose(w)`), is Bt already: without an aligned start the nest
reads its rows where they lie, no copy and no team region for one. With one, a copy rotated
as `transpose_b` rotates, by vectors (`copy_b_rotated`, 31 KB in about 0.2 us): B read in
place from A's aligned start splits its loads over two lines wherever B's rows do not start
where A's do, and the forward step took 11.3 us where they did, 13.0 where not (x 16 bytes
into a line, w at each of the four 16-byte places; the logistic regression below, 1
thread, medians of 7 alternated rounds); with the copy 11.7 at all four, against 12.2 for
w: [784, 10] transposed. Before, B was copied element by element into a Bt of the same
layout, and its weight gradient (dz^T @ x, N = 784 not a whole number of 64-column tiles)
packed x in two row blocks of 5: the logistic regression step written that way (w: [10,
784], B = 100) took 34.2 us on 1 thread and 35.1 on 2, against 24.0 and 21.8 for w: [784,
10]; now 21.8-22.1 on 1 thread against 22.6-22.7, and on 2 threads 20.5-22.8 against
20.8-22.7, run to run (medians of 10-12 alternated rounds in one process, four processes
on 2 threads; nest.py's `b_in_place`, and `schedule`'s `whole_m` for the gradient's 10
rows).

The tile (`dot_tile`): the most FMAs per vector loaded, mr * N / (groups * mr + N) (each
group reloads A's mr vectors), among those whose mr * ng accumulators, mr A vectors and one
B vector fit the registers with two to spare: 4 rows x 2 groups of 5 on AVX-512 (25
registers), 2 x 2 of 5 on AVX2 (16 registers).

Numerics. K is summed in chunks of `lanes * chunk` (the pass's `chunk`, 128: the BLIS
nest's bound on a float32 partial sum): in a chunk each lane sums at most `chunk` products in
float32 from zero, then the lanes are added as a tree, in float32, and each chunk's sum is
added to the running total in C's element type (f64 for lower-graph-to-linalg's widened
accumulator), the products of the tail after the last whole vector to the last chunk's sum
first. The order differs from the interpreter's sequential sum: results agree to rounding,
not bit for bit. A K of one chunk (the logistic regression's 784: 49 vectors of 16) is one
loop, no running total.

Alignment (`aligned_start`). numpy's large arrays start 16 bytes past a cache line (glibc's
mmap header), so every vector of x's rows straddled two lines: the logistic regression step
took 29.5 us on 1 thread with x 16 bytes into a line and 26.6 with x on one. Where K is a
whole number of vectors (at least two, one chunk) and A's rows lie a whole number of vectors
apart, the vector loop starts at S, the first k at which the rows are aligned, read off A's
address at run time (`memory.address`), and runs over k = S + m for m in [0, K - lanes);
one more step takes the K - (K - lanes) elements left: A's first vector in the lanes before
S, its last vector in the others (an `arith.select` on the lane index), so every k is taken
once for any S. Bt is transposed rotated to match (its column m holds B's row S + m, its
last `lanes` columns B's rows 0 .. S - 1 and K - lanes + S .. K - 1), so its loads stay on
whole lines too. Measured (the step compiled both ways in one process, calls alternated,
medians of 9 rounds): 1 thread, x 16 bytes into a line 29.5 -> 28.2 us, 48 bytes 30.1 ->
28.2, on a line 26.6 -> 26.9 (the select's step); 2 threads 24.5 -> 24.0, 24.6 -> 23.7 and
23.2 -> 23.1. The weight gradient (`swapped`, nest.py) still reads x where it lies: its
column tiles shifted onto x's aligned columns (the first wrapping round) left the step at
24.86 us against 24.83, x on a line against x 16 bytes into one only 0.4 us apart.

What it costs: which k each lane sums, and so the rounding of the sum, now depends on where
A lies within a vector's bytes. The same inputs at another place in memory give results that
agree to rounding, not bit for bit (as Intel MKL's do, unless its conditional numerical
reproducibility mode is set). The same arrays give the same bits call after call, and so do
numpy's large arrays (always 16 bytes into a line) and irkit's own buffers (aligned to 64);
a batch small enough for the heap starts wherever malloc's 16-byte granules put it. A
program that needs results independent of the inputs' placement passes them aligned to 64
bytes, or runs the pass with `align-start=false` (`load_model(...,
pass_options="linalg-matmul-blis{align-start=false}")`, `irkit-compile --pass-options=`).

Longer K. The nest first took only K of one chunk, and longer ones went to the BLIS nest,
whose one column tile of 16 lanes held N = 10: a classifier head on 64 x 7 x 7 = 3136
features, `x @ w` at B = 100, took 90 us on 1 thread and 129 on 2 (13 K blocks of 256, each
packing B on the calling thread and forking the team; `set_threads` alternated in one
process). In chunks here: see `dots`.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Value
from irkit.target import Target
from irkit.types import F32, I32, I64, VectorType
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES, materialize_constant
from irkit.dialects.memory import (
    AddressOp, DeallocOp, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp,
)
from irkit.dialects.omp import ParallelOp as TeamOp, TerminatorOp as TeamEnd
from irkit.dialects.memory.view import strides_and_offset
from irkit.dialects.vector import BroadcastOp, ExtractOp, ShuffleOp
from irkit.passes.blis import epilogue as epilogues
from irkit.passes.blis.contraction import Contraction
from irkit.passes.blis.nest import Blis, Index, Schedule, contiguous_along, end_to_end


def dot_wins(c: Contraction, lanes: int, most_bytes: int) -> bool:
    """Whether `c` runs as dot products (module docstring): one factor and one dim on each
    side, no batch; N static and leaving more than a quarter of its vectors' lanes idle;
    A's last index K's one dim at stride 1 (in memory too), no other index using it; K
    static, at least one vector, and B transposed at most `most_bytes` (each thread's
    copy stays in its cache: the pass gives half the L2)."""
    if c.transposed or c.batch or len(c.a) != 1 or len(c.b) != 1 or \
            (len(c.m), len(c.n), len(c.k)) != (1, 1, 1) or lanes < 2:
        return False
    n, k, a = c.static(c.n), c.static(c.k), c.a[0]
    if n is None or k is None or 4 * n > 3 * (-(-n // lanes) * lanes) or \
            not lanes <= k or 4 * n * k > most_bytes:
        return False
    layout = strides_and_offset(a.buffer.type)
    return a.forms[-1] == ({c.k[0]: 1}, 0) and \
        not any(c.k[0] in coefs for coefs, _ in a.forms[:-1]) and \
        layout is not None and layout[0][-1] == 1


def dot_tile(registers: int, n: int) -> tuple[int, int]:
    """(mr, groups): rows per tile and how many groups the N columns are split into (module
    docstring); ties: fewer groups."""
    best, tile = -1.0, (1, n)
    for groups in range(1, n + 1):
        ng = -(-n // groups)
        for mr in range(1, 9):
            if mr * ng + mr + 1 > registers - 2:
                break
            score = mr * n / (groups * mr + n)
            if score > best:
                best, tile = score, (mr, groups)
    return tile


def dot_schedule(lanes: int, target: Target, n: int, k: int, chunk: int) -> Schedule:
    """The dot nest's sizes in `Schedule`'s fields: mr rows a tile, nr = columns a group,
    all of K one block, in chunks of `lanes * chunk` of K (`chunk` vectors: module
    docstring, Numerics)."""
    mr, groups = dot_tile(target.vector_registers, n)
    return Schedule(lanes, mr, -(-n // groups), mr, k, n, min(k, lanes * chunk),
                    fused=target.fma)


class Dot(Blis):
    """The dot-product nest of a contraction `dot_wins` takes (module docstring): Blis's
    index arithmetic, operand reads, epilogue and stores, with its own loops. Without
    `align_start` (the pass's `align-start=false`), its loop starts at k = 0 wherever A
    lies (module docstring: Alignment)."""

    align_start = True

    def emit(self) -> None:
        assert not self.row_factors, "dot_wins takes one factor a side"
        c, s, e, top = self.c, self.s, self.e, self.top
        self.M, self.N, self.K = (self.flat_size(g) for g in (c.m, c.n, c.k))
        n, k = c.static(c.n), c.static(c.k)
        tiles = e.ceildiv(top, self.M, s.mr)
        threads = self.threads and not any(p.name in ("loop.parallel", "omp.parallel")
                                           for p in c.op.ancestors())  # one level of threads
        self.k_start = self.aligned_start(top, n, k)
        if self.b_lies() and self.k_start is None:     # module docstring: B where it lies
            e.parallel(top, tiles, 1, lambda b, t: self.tile(b, None, e.mul(b, t, s.mr)),
                       threads)
            return
        inner = top
        if threads:             # each thread its own Bt (module docstring: "Threads")
            team = top.create(TeamOp, result_types=[], regions=1, location=e.location)
            team.regions[0].add_block(Block([]))
            inner = Builder.at_end(team.regions[0].blocks[0])
        bt = e.alloc(inner, (n, k))
        if self.b_lies():
            self.copy_b_rotated(inner, bt, n, k)
        else:
            self.transpose_b(inner, bt, n, k)
        e.parallel(inner, tiles, 1, lambda b, t: self.tile(b, bt, e.mul(b, t, s.mr)), threads)
        if threads:
            inner.create(DeallocOp, bt, location=e.location)
            inner.create(TeamEnd, result_types=[], location=e.location)
        else:
            Builder.after(c.op).create(DeallocOp, bt, location=e.location)

    def before_start(self, b: Builder) -> Value:
        """The lanes below the aligned start (lane < k_start): a vector of i1, the lanes the
        last step takes from the first vector of a row rather than its last."""
        lanes, loc = self.s.lanes, self.e.location
        iota = DenseElementsAttr(VectorType((lanes,), I32), np.arange(lanes, dtype=np.int32))
        lane = b.insert(materialize_constant(iota, iota.type, loc)).result
        start = b.create(arith.IndexCastOp, self.k_start, result_types=[I32],
                         location=loc).result
        starts = b.create(BroadcastOp, start, result_types=[lane.type], location=loc).result
        return b.create(arith.CmpIOp, lane, starts,
                        predicate=IntegerAttr(CMPI_PREDICATES.index("slt"), I64),
                        location=loc).result

    def copy_b_rotated(self, b: Builder, bt: Value, n: int, k: int) -> None:
        """Bt's rows from a B where it lies (rows along K), rotated to A's aligned start as
        `transpose_b` rotates (module docstring: B where it lies): a vector copy."""
        e, lanes, loc = self.e, self.s.lanes, self.e.location

        def step(b2: Builder, m0: Value, _) -> None:
            at = e.add(b2, m0, self.k_start)
            for j in range(n):
                b2.create(VectorStoreOp, self.b_vector(b2, None, j, m0, at), bt,
                          [e.v(j), m0], location=loc)
        e.for_(b, 0, k - lanes, lanes, step)
        head = self.before_start(b)
        for j in range(n):
            ends = b.create(arith.SelectOp, head, self.b_vector(b, None, j, 0, 0),
                            self.b_vector(b, None, j, 0, k - lanes), location=loc).result
            b.create(VectorStoreOp, ends, bt, [e.v(j), e.v(k - lanes)], location=loc)

    def transpose_b(self, b: Builder, bt: Value, n: int, k: int) -> None:
        """Bt[j, k] = prod(B factors) at (k, j). Where B is one buffer holding a row's N
        columns side by side (`rows_loadable`), `lanes` rows at a time by vectors (an
        in-register transpose: each row one vector load, the rows laid end to end and each
        column picked out of them by one `vector.shuffle`, stored as one vector of Bt's
        row; LLVM makes the shuffles permutes, about one instruction an element where the
        scalar copy was a load, a store and its index arithmetic); the rows left after the
        last whole group of `lanes`, and every other B, element by element."""
        e, c, lanes = self.e, self.c, self.s.lanes
        if self.k_start is not None:            # rotated (module docstring: Alignment)
            def rotated(b2: Builder, m0: Value, _) -> None:
                first = e.add(b2, m0, self.k_start)
                self.transpose_rows(b2, bt, n, m0, [e.add(b2, first, r) for r in range(lanes)])
            e.for_(b, 0, k - lanes, lanes, rotated)
            before = [e.lt(b, r, self.k_start) for r in range(lanes)]
            self.transpose_rows(b, bt, n, k - lanes, [
                b.create(arith.SelectOp, flag, e.v(r), e.v(k - lanes + r),
                         location=e.location).result for r, flag in enumerate(before)])
            return
        main = k - k % lanes if self.rows_loadable(n) else 0

        def element(b2: Builder, kk: Value, _) -> None:
            def col(b3: Builder, j: Value, _) -> None:
                x = self.product(b3, c.b, {c.k[0]: kk, c.n[0]: j})
                b3.create(StoreOp, x, bt, [j, kk], location=e.location)
            e.for_(b2, 0, n, 1, col)

        if main:
            e.for_(b, 0, main, lanes, lambda b2, k0, _: self.transpose_rows(
                b2, bt, n, k0, [e.add(b2, k0, r) for r in range(lanes)]))
        if main < k:
            e.for_(b, main, k, 1, element)

    def b_lies(self) -> bool:
        """Whether B is read where it lies, no Bt (module docstring: "B where it lies"): one
        factor read along K at stride 1, as A is (`contiguous_along`)."""
        return len(self.c.b) == 1 and contiguous_along(self.c.b[0], self.c.k[0])

    def b_vector(self, b: Builder, bt: Value | None, j: int, kk: Index,
                 at: Index) -> Value:
        """Column j's vector of B at step `kk` of the loop: Bt's row j at kk, or, with B
        where it lies (`bt` None), B's at k = `at`."""
        e, c, loc = self.e, self.c, self.e.location
        if bt is not None:
            return b.create(VectorLoadOp, bt, [e.v(j), e.v(kk)], result_types=[self.vec],
                            location=loc).result
        f, dims = c.b[0], dict(self.ivs) | {c.k[0]: at, c.n[0]: j}
        return b.create(VectorLoadOp, f.buffer, [self.at(b, form, dims) for form in f.forms],
                        result_types=[self.vec], location=loc).result

    def rows_loadable(self, n: int) -> bool:
        """Whether B is one buffer whose element (k, j) is at a last index `j + c` of unit
        stride, the other indices free of j, its last dimension static and holding all N
        columns from `c` on: a row's N columns are one vector load."""
        if len(self.c.b) != 1 or len(self.c.n) != 1:
            return False
        f, dn = self.c.b[0], self.c.n[0]
        t = f.buffer.type
        layout = strides_and_offset(t)
        coefs, const = f.forms[-1]
        return coefs == {dn: 1} and not any(dn in cs for cs, _ in f.forms[:-1]) and \
            layout is not None and layout[0][-1] == 1 and t.shape[-1] is not None and \
            0 <= const and const + n <= t.shape[-1]

    def aligned_start(self, b: Builder, n: int, k: int) -> Value | None:
        """The first k at which A's rows are aligned to a vector, in [0, lanes), computed
        at run time from A's address, or None where the nest does not align (module
        docstring: Alignment): K a whole number of vectors, at least two, one chunk; B's
        rows loadable; A's static layout such that every row starts at the same place in a
        vector (whatever index the other dims take, it moves A by whole vectors)."""
        e, c, lanes = self.e, self.c, self.s.lanes
        a, dk = c.a[0], c.k[0]
        layout = strides_and_offset(a.buffer.type)
        if not self.align_start or k % lanes or k < 2 * lanes or k > self.s.chunk or \
                not (self.rows_loadable(n) or self.b_lies()) or \
                a.buffer.type.element != F32 or \
                layout is None or None in layout[0] or layout[1] is None:
            return None
        strides, first = layout[0], 0       # memory.address includes the layout's offset
        for (coefs, const), stride in zip(a.forms, strides):
            first += const * stride
            if any(dim != dk and coef * stride % lanes for dim, coef in coefs.items()):
                return None
        address = b.create(AddressOp, a.buffer, location=e.location).result
        into = e.rem(b, e.add(b, e.div(b, address, 4), first % lanes), lanes)
        return e.rem(b, e.sub(b, lanes, into), lanes)

    def transpose_rows(self, b: Builder, bt: Value, n: int, at: Index,
                       rows: list[Index]) -> None:
        """Bt[j, at : at + lanes] for every column j, from B's rows `rows` (`lanes` of
        them)."""
        e, c, lanes, loc = self.e, self.c, self.s.lanes, self.e.location
        f = c.b[0]
        parts = []
        for r in range(lanes):
            dims = dict(self.ivs) | {c.k[0]: rows[r], c.n[0]: 0}
            idx = [self.at(b, form, dims) for form in f.forms]
            parts.append(b.create(VectorLoadOp, f.buffer, idx,
                                  result_types=[VectorType((n,), F32)], location=loc).result)
        rows = end_to_end(b, parts, loc)            # rows[r * n + j] = B[k0 + r, j]
        for j in range(n):
            col = b.create(ShuffleOp, rows, rows,
                           mask=DenseArrayAttr(I64, range(j, lanes * n, n)),
                           result_types=[self.vec], location=loc).result
            b.create(VectorStoreOp, col, bt, [e.v(j), e.v(at)], location=loc)

    def tile(self, b: Builder, bt: Value | None, m0: Index) -> None:
        """The row tile at `m0`: each group of columns, dot products over K, stored."""
        e, c, s = self.e, self.c, self.s
        m = c.static(c.m)
        whole = m is not None and m % s.mr == 0
        last = None if whole else e.sub(b, self.M, 1)
        rows = [e.add(b, m0, r) for r in range(s.mr)]
        reads = [r if last is None else e.min(b, r, last) for r in rows]
        n = c.static(c.n)
        groups = -(-n // s.nr)
        for g in range(groups):
            j0, j1 = g * n // groups, (g + 1) * n // groups
            sums = self.dots(b, bt, reads, list(range(j0, j1)))
            for r, row in enumerate(rows):
                def store(b2: Builder, r=r, row=row) -> None:
                    for j in range(j0, j1):
                        self.put(b2, sums[r * (j1 - j0) + j - j0], row, j)
                if whole:
                    store(b)
                else:
                    e.if_(b, e.lt(b, row, self.M), store, lambda b2: None)

    def dots(self, b: Builder, bt: Value | None, rows: list[Index],
             cols: list[int]) -> list[Value]:
        """sum over k of A[row, k] * Bt[j, k] for each row of `rows` and j of `cols`
        (row-major), in C's element type: per chunk of K, vector accumulators in float32 and
        a tree of their lanes; the chunks' sums added up in C's type; the tail's products
        added to the last chunk's sum (module docstring, Numerics).

        Chunks. A K of one chunk is the one loop. A longer one is a loop over the chunks
        but the last, carrying the running totals, each a vector loop and its reductions,
        then the last chunk's loop and the tail. The classifier head (3136 x 10, B = 100;
        module docstring) took 61 us on 1 thread and 41 on 2, where the BLIS nest took 90
        and 129 (`set_threads` alternated in one process, medians of 15 rounds, twice)."""
        e, c, s, loc = self.e, self.c, self.s, self.e.location
        a, dm, dk = c.a[0], c.m[0], c.k[0]
        k = c.static(c.k)
        main = k - k % s.lanes
        zero = b.create(BroadcastOp, e.fconst(b, 0.0, F32), result_types=[self.vec],
                        location=loc).result
        width = len(rows) * len(cols)

        def a_at(b2: Builder, r: int, kk: Value, cls, types) -> Value:
            idx = [self.at(b2, form, dict(self.ivs) | {dm: rows[r], dk: kk})
                   for form in a.forms]
            return b2.create(cls, a.buffer, idx, result_types=types, location=loc).result

        def fmas(b2: Builder, xs: list[Value], ys, accs: list[Value]) -> list[Value]:
            """accs + A's vectors `xs` (one a row) times B's, `ys(b2, j)` for column j."""
            out = list(accs)
            for i, j in enumerate(cols):
                y = ys(b2, j)
                for r, x in enumerate(xs):
                    at = r * len(cols) + i
                    out[at] = self.multiply_add(b2, x, y, accs[at])
            return out

        def lanes_summed(b2: Builder, accs: list[Value]) -> list[Value]:
            return lane_sums(b2, accs, loc)

        def step(b2: Builder, kk: Value, accs: list[Value]) -> list[Value]:
            shifted = kk if self.k_start is None else e.add(b2, kk, self.k_start)
            xs = [a_at(b2, r, shifted, VectorLoadOp, [self.vec]) for r in range(len(rows))]
            return fmas(b2, xs, lambda b3, j: self.b_vector(b3, bt, j, kk, shifted), accs)

        if self.k_start is not None:            # module docstring: Alignment
            accs = e.for_(b, 0, k - s.lanes, s.lanes, step, [zero] * width)
            head = self.before_start(b)
            xs = [b.create(arith.SelectOp, head, a_at(b, r, 0, VectorLoadOp, [self.vec]),
                           a_at(b, r, k - s.lanes, VectorLoadOp, [self.vec]),
                           location=loc).result for r in range(len(rows))]
            last = fmas(b, xs, lambda b2, j: self.b_vector(b2, bt, j, k - s.lanes, None), accs)
            return [self.widen(b, x, c.c.type.element) for x in lanes_summed(b, last)]

        def chunk_sums(b2: Builder, k0: Index, k1: Index) -> list[Value]:
            return lanes_summed(b2, e.for_(b2, k0, k1, s.lanes, step, [zero] * width))

        last = max(0, (main - 1) // s.chunk * s.chunk)      # where the last chunk starts
        totals = None
        if last:
            t = c.c.type.element
            start = [e.fconst(b, 0.0, t)] * width

            def chunk(b2: Builder, k0: Value, running: list[Value]) -> list[Value]:
                sums = chunk_sums(b2, k0, e.add(b2, k0, s.chunk))
                return [b2.create(arith.AddFOp, x, self.widen(b2, y, t), location=loc).result
                        for x, y in zip(running, sums)]
            totals = e.for_(b, 0, last, s.chunk, chunk, start)
        sums = chunk_sums(b, last, main)

        def tail(b2: Builder, kk: Value, partial: list[Value]) -> list[Value]:
            xs = [a_at(b2, r, kk, LoadOp, [F32]) for r in range(len(rows))]
            out = list(partial)
            for i, j in enumerate(cols):
                y = b2.create(LoadOp, bt, [e.v(j), kk], location=loc).result \
                    if bt is not None else self.product(b2, c.b, dict(self.ivs) |
                                                        {dk: kk, c.n[0]: e.v(j)})
                for r, x in enumerate(xs):
                    at = r * len(cols) + i
                    out[at] = self.multiply_add(b2, x, y, partial[at])
            return out
        if main < k:
            sums = e.for_(b, main, k, 1, tail, sums)
        sums = [self.widen(b, x, c.c.type.element) for x in sums]
        if totals is None:
            return sums
        return [b.create(arith.AddFOp, x, y, location=loc).result for x, y in zip(totals, sums)]

    def put(self, b: Builder, v: Value, row: Index, j: int) -> None:
        """C[row, j]'s final value from its sum `v` (in C's element type): stored (the zero
        fill folded) or added to C, or through the epilogue into its outputs."""
        e, c, loc = self.e, self.c, self.e.location
        idx = self.c_index(b, row, j)
        if not self.overwrite:
            old = b.create(LoadOp, c.c, idx, location=loc).result
            v = b.create(arith.AddFOp, old, v, location=loc).result
        if self.ep is None:
            b.create(StoreOp, v, c.c, idx, location=loc)
            return
        dims = dict(self.ivs) | {c.m[0]: e.v(row), c.n[0]: e.v(j)}
        epilogues.apply(self.ep, self, b, v, dims, 1)


def lane_sums(b: Builder, vectors: list[Value], location) -> list[Value]:
    """The sum of the lanes of each of `vectors` (float vectors of one power-of-two length),
    all at once: a tree of `vector.shuffle`s and `arith.addf`s over all of them, then a
    `vector.extract` per sum.

    Algorithm. An item is a vector holding the partial sums of a few of `vectors`, `w`
    consecutive lanes each (at first every vector alone, w = its lanes). Each round halves
    w: two items of the same w and count are joined, one shuffle taking the low halves of
    each source's w lanes from both, one the high halves, and one add of the two, so that
    the new item holds the sources of both, w / 2 lanes each, in a vector as long as
    before; an item without a partner is halved alone into a vector half as long. At w = 1
    each lane is one source's sum. Lane i of a source is added to lane i + w / 2 at every
    round: the order of the tree LLVM builds for a reassociating `vector.reduction <add>`
    (halves added, then their halves), so the sums have the same bits as one reduction
    each (the logistic regression's first five steps gave the same losses to the bit).
    The adds carry no `reassoc`: the tree is the order, LLVM keeps it (the same machine
    code with the flag as without), and the interpreter gives the compiled code's bits.

    Why. One reduction per vector is log2(lanes) shuffles and as many adds for each sum: on
    AVX-512 the dot nest's 20 accumulators of a 4 x 5 tile took 80 of each. The tree takes
    40 shuffles and 20 adds for all 20, and 20 extracts: the logistic regression's step
    (B = 100, 1 thread, both builds in one process, medians of 20 alternated rounds) took
    21.23 us against 21.55."""
    items = [(v, [i], v.type.shape[0]) for i, v in enumerate(vectors)]

    def halved(first: tuple, second: tuple | None) -> tuple:
        (x, sources, w) = first
        y, more = (x, []) if second is None else (second[0], second[1])
        low, high = [], []
        for base, group in ((0, sources), (len(sources) * w, more)):
            for j in range(len(group)):
                at = base + j * w
                low += range(at, at + w // 2)
                high += range(at + w // 2, at + w)
        lo, hi = (b.create(ShuffleOp, x, y, mask=DenseArrayAttr(I64, m),
                           location=location).result for m in (low, high))
        return (b.create(arith.AddFOp, lo, hi, location=location).result,
                sources + more, w // 2)

    while any(w > 1 for _, _, w in items):
        todo, items = items, []
        while todo:
            item = todo.pop(0)
            if item[2] == 1:
                items.append(item)
                continue
            mate = next((t for t in todo if t[2] == item[2] and len(t[1]) == len(item[1])),
                        None)
            if mate is not None:
                todo.remove(mate)
            items.append(halved(item, mate))
    sums: list = [None] * len(vectors)
    for v, sources, _ in items:
        for lane, i in enumerate(sources):
            sums[i] = b.create(ExtractOp, v, [], static_position=DenseArrayAttr(I64, [lane]),
                               result_types=[v.type.element], location=location).result
    return sums
