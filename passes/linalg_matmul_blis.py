"""linalg-matmul-blis: float32 contractions on memrefs (matmuls, batched matmuls,
convolutions and their gradients) to a BLIS-style blocked, packed, register-blocked loop nest.

Which ops. A `linalg.matmul`, `linalg.batch_matmul`, `linalg.conv_2d_nchw_fchw` or
`linalg.generic` on memrefs whose body adds a product of float32 inputs into its output, in
f32 or widened into f64 (what lower-graph-to-linalg's `Accumulator` emits for `graph.matmul`,
`graph.conv2d` and the convolution gradients), every index a linear form of the loop dims:
passes/blis/contraction.py splits the loops into batch, M, N and K groups (a matmul has one
dim in each; a convolution per image is M = filters, N = output pixels, K = channels x
window) and the factors into A's side and B's. The packing steps read the factors at any
point of the groups, so a convolution's input window goes straight into B's packed panel
(im2col into the panel, no im2col buffer), and the output is stored in NCHW. A
`fusion.group` holding such an op is dissolved (the blocked nest is not a per-point body),
and its epilogue (the elementwise members after the contraction: truncation, bias,
activation, residual, mask, an optimizer's update) is applied at the micro-kernel's final
store where it runs on vectors (passes/blis/epilogue.py says which members qualify; not a
convolution's, whose N is two dims); what does not qualify runs after the nest, as its own
nest, as before.

The f64 accumulator. The graph's contraction writes a temporary f64 buffer that a zero fill
precedes and an epilogue (`truncf`, bias, relu, ...) reads. Three rewrites cut its
traffic: the fill is folded (the first K block stores its sums instead of adding them to C,
which it then never reads; where K is dynamic, the fill runs after the nest under
`K == 0`, and a last K step that is also the first, all of K one chunk, adds nothing from
C: the weight gradients' K is the batch); a buffer whose trailing dims are B's (a
convolution's output pixels) is collapsed into one row, so that the micro-kernel stores
whole vectors where an NCHW row (12 floats in examples/cnn.irk) is shorter than one; and
where the epilogue stays its own nest (not applied at the store) and all of a static K is
one chunk, the buffer is made float32 (`contraction.narrowed`): its values were float32
sums widened, which the epilogue truncated again, the same values in twice the bytes. The
MLP 784-256-10 step's dz @ w2^T (K = 10, its epilogue the ReLU mask and b1's column sums)
at B=1024 (`Model.profile`, median of three fresh processes each way, us, f64 / f32): the
nest 148 / 72 and the epilogue 184 / 121 on 1 thread; 86 / 54 and 70 / 52 on 2.

The nest (BLIS's five loops around a micro-kernel; Van Zee and van de Geijn, 2015):

    for batch...                                      loop.for per batch dim
      for jc in [0, N) step nc                        L3 block of B's columns
        for pc in [0, K) step kc                      L1/L2 block of the reduction
          loop.parallel p: pack B[pc.., jc..] into Bp[p][k][nr]        (zero-padded columns)
          loop.parallel i in [0, blocks x parts)      threads split the row blocks (and,
                                                      for few blocks, parts of the columns)
            Ap = alloc; pack A[ic.., pc..] into Ap[q][k][mr]           (zero-padded rows)
                                    (only where A is several factors or dims: else read
                                    where it lies, "A read where it lies" below)
            for jr: for ir:                           register tiles of mr x nr
              micro-kernel: mr * nr/lanes vector accumulators carried by a loop.for over
              k < kc (`iter_args`), one vector load of Bp per lane group, one broadcast of
              A per row, `math.fma` each (vfmadd231ps, the broadcast folded into it)
              store: C[tile] += acc (vector loads and stores; `arith.extf` first for an
              f64 C), or, for a tile crossing M or N, the accumulators through a scratch
              tile and one loop over its valid part; with an epilogue, the last K step's
              store instead adds what waits and runs the epilogue into its outputs, by
              that loop over the scratch tile for every tile

Code size. The store is where a nest's code was: unrolled over a tile's mr x nr / lanes
vectors (24 on AVX-512), with an `if` per vector at the edges and the epilogue copied into
each, it was 85% of the ops the pass made for the MLP (9.8k of 11.6k; 13.2k ops at the loop
stage, 24k LLVM instructions, LLVM's time 5 of the 7 s to its first training step). Only
the hot store (every K chunk of a whole tile, no epilogue) stays unrolled; the edges and the
epilogue run as one loop over the scratch tile's valid rows, by whole vectors, then element
by element (`Blis.each_point`): one vector and one scalar copy of each (the MLP: 1.2k ops of
stores, 2.8k ops at the loop stage, 12.7k LLVM instructions). The scratch round trip is
once per tile for the epilogue: 1024^3 with its epilogue at 1.05x numpy's GFLOP/s (1.01x
before), plain 0.96x (1.00x; 1 thread, load 3, within this machine's noise), the MLP train
step (B=128, 1024) 1.29 and 10.4 ms against 1.47 and 10.5 ms (bench/run.py, 1 thread).

The epilogue at the store. The sums of a tile's earlier K steps wait (`nest.NOWHERE`,
`TILE`, `BLOCKS`): nowhere when all of K is one chunk (static, <= `chunk`); in a per-tile
buffer (mr x nr, C's element type, one per row block) when K is one block of several
chunks; and where K has several blocks or is dynamic, a block's chunks in the per-tile
buffer and the earlier blocks' sums in the accumulator (C) itself, which each block's last
chunk adds to its own and stores back (or, in the last block, passes through the epilogue;
`Blis.block_step`): one round trip of C per block, where adding each chunk into C had been
one per chunk's store. In the first two cases the f64 accumulator is erased, so where an
epilogue is applied a static K of up to `kc-epilogue` (1024) is made one block (kc = K):
the accuracy contract is unchanged (f32 sums of `chunk` products, added up in f64 in the
per-tile buffer). Measured (1 thread, bench/bench_matmul.py --epilogue, `relu(a @ b + c)`,
load 1.5, numpy's OpenBLAS in the same round): 1024^3 99.3 GFLOP/s (numpy 98.5; epilogue
as its own nest, kc = 256: 90.1); 2048x2048x512 102.1 (numpy 93.2; own nest: 68.0: the 32
MB f64 accumulator, written, faulted in and read back, was a third of the time). Where K
is dynamic and 0 the nest stores nothing: the members are kept under a `loop.if` on K ==
0, reading the filled accumulator (filled under the same condition just before). A dynamic
K (a weight gradient's batch, or bench/run.py's `a @ b` with symbolic sizes) cannot be
made one block at compile time: its blocks are `kc-dynamic` (1024) long, so that a K up to
that is one block at run time, whose sums never touch C (the f64 accumulator stays, for
longer K, and is never read). Measured (fresh processes, alternated, median ms, C added
per chunk with blocks of 512 / per block with blocks of 1024): bench/run.py's matmul
1024^3 21.9 and 21.7 / 20.8 and 20.8 on 1 thread (96 / 103 GFLOP/s; a static K, one block,
105), 11.5 and 11.8 / 11.3 and 10.3 on 2; the MLP 784-256-10 step's weight gradient x^T @
dz at B=1024 (`Model.profile`, 1 thread) 3.91 and 4.05 / 3.85 and 4.07, within this
machine's noise, its C (784 x 256 f64) a fifth of the matmul's; its step at B=128 (K one
chunk either way) 1.048 and 1.033 / 1.034 and 1.036.

Threads. The row blocks are the threads' unit; where static M is one row block and there
is a batch dim (a convolution's filters are few: 8 and 16 in examples/cnn.irk), the outer
batch loop (the images) is the `loop.parallel` instead, each iteration packing its own B.
OpenMP's static schedule gives each thread a run of consecutive iterations, so the team's
balance is the blocks': M's ceil(M / mr) register tiles are dealt into the fewest blocks
of at most mc rows, their count rounded up to a multiple of `row-blocks` (8; at most one
block per tile), block i starting at tile i * tiles / blocks (`Blis.block_rows`): sizes
differ by at most one tile, and so do the shares of a team whose size divides the count.
Blocks of mc rows split unevenly: the MLP's x @ w1 at B = 1024 was 9 blocks of 126 rows,
5 : 4 on two threads (1.64x at best), at B = 128 two blocks of 126 and 2 rows (the second
thread idle); now 16 blocks of 10-11 tiles (88 : 83 tiles) and 8 of 2-3 (11 : 11). The
count is index arithmetic on a dynamic M (the batch), made once before the nest.

Where a static M is fewer row blocks than `row-blocks`, the blocks alone leave the team
short of work units, and each thread reads all of B for its few rows: the logistic
regression's weight gradient, swapped to dz^T x (M = 10 classes, N = 784 pixels, K = the
batch), was two blocks of 5 rows, each reading all of x (313 KB at B = 100), half of it from
the other core's cache. So each block's column tiles are cut into parts
(`Blis.column_parts`), enough for `row-blocks` items in all (at most one part per column
tile), and the threads split the items part-major (item i: block i mod blocks, part i /
blocks), so that a thread's items share their columns of B. The step on 2 threads, `.so`
builds alternated, both orders: 48.2 / 47.4 -> 46.4 / 46.2 us. A dynamic M keeps one part.

A filter gradient has no batch dim: its images are in K (K = images x pixels), and its M,
the filters, is one row block, so it ran on one thread. Where K's one dynamic dim (the
images) leaves at least `MIN_IMAGE_K` (64) of K per image, the nest runs per image instead
(`split_images`): that dim becomes a batch dim of a contraction into partial sums
`P[image, m, n]`, whose images the threads split as above, and a `loop.parallel` over C's
elements then adds each element's images in order (`add_images`, from 0 where the zero
fill was folded). examples/cnn.irk, B=64: conv1's filter gradient (8 x 9, 144 per image)
took 81 us on 2 threads, 45 split (`Model.profile`); the step, `.so` builds alternated,
0.561 -> 0.536 and 0.555 -> 0.527 ms on 2 threads, 0.646 -> 0.659 and 0.661 -> 0.672 on 1
(the images' own nests and the sum cost 2%). conv2's (16 x 72, 16 per image) is left whole:
split, the step was no faster.

A read where it lies. The micro-kernel reads one A value per row and k step and broadcasts
it; it can do so from A itself as well as from a packed panel (`Blis.a_rows`, each tile
row's index made once per tile; rows past M read row M - 1: computed, never stored), where
A is one factor with one M and one K dim (no index split per element): the tile's mr rows
are mr streams, and the block they come from stays in L2 across the column tiles as a
packed one would. Packing copied A into k-major panels by strided stores, which LLVM
vectorized into scatters (`vscatterqps`, a multiply per index vector): a cost with no
return. So A is packed only where it has several factors (a folded batchnorm's scale times
the filter), several M or K dims (a convolution's K is channels x window), or is packed
once for the whole op (`Blis.a_once`); `direct-a=false` packs it as before. First used
where N fits one column tile (the logistic regression's x @ w 100 x 10 x 784: 37 us against
66 packed; its x^T @ dz 36 against 78), then everywhere. Measured in-process, alternated,
median ms, packed / read where it lies: the MLP 784-256-10 step at B=1024 9.89 / 9.24 and
9.06 / 8.42 (two runs) on 1 thread, 4.71 / 4.36 on 2; at B=128 1.129 / 1.049 on 1 and
0.632 / 0.578 on 2; matmul 1024^3 22.1 / 21.6 on 1, 11.05 / 10.82 on 2; 2048 x 4096 x 512
(M x K x N) 89.4 / 84.0, 4096 x 4096 x 256 97.3 / 85.2, 512 x 8192 x 512 45.2 / 42.9,
3000^3 577 / 570, 200 x 4096 x 4096 75.1 / 75.3; the cnn (1.61 / 1.61) and the logistic
regression (0.0645 / 0.0630) unchanged. One exception since (`Blis.a_readable`): an A that
runs along M with its k steps a cache line or more apart (the MLP's weight gradient x^T @
dz: a tile's values at one k side by side, the next k 3136 bytes on) is packed. On the
2-vCPU Xeon VM its reads where it lies were a line per k step the prefetchers did not
fetch ahead: the step at B = 1024 went from 5.57 to 5.43 ms (medians of four alternated
runs, both orders) on 1 thread. (The measurements above, packed everywhere against nowhere,
came from another machine, a Zen 4.)

B read where it lies, for a few rows. Packing B copies its K x N panel so that every read
of it by the micro-kernel is contiguous; where M is a few register tiles, each B row feeds
so few tiles that the copy costs more than it saves. A plain `x @ w` (B one row-major 2-d
factor, N a whole number of vectors) then reads B where it lies (`Blis.b_choosable`) when M
is at most `direct-b-tiles` (64) register tiles: decided here for a static M; for a
dynamic M (the batch) by a flag computed once at run time, which skips the packing and
picks one of two copies of the micro-kernel's k loop (the tile's stores are shared): one
loop per nest more, and each keeps its own addressing (one `loop.if` yielding a window
of either had cost the packed path a shift per step: MLP B=1024 +1.4%). Measured
(in-process, alternated, median ms, packed / chosen, MLP 784-256-10 step): B=128 1.18 /
1.15 on 1 thread, 0.77 / 0.74 on 2; B=1024 9.68 / 9.62 and 5.07 / 5.08 (packed either
way); by batch, B read where it lies / packed, 1 thread: 64 0.62 / 0.64, 256 2.50 / 2.60,
384 3.82 / 3.88, 512 5.37 / 5.33, 1024 11.1 / 10.5.

Thin tiles. Rows of a tile past M compute row M - 1's sums and are never stored, so where M
is a batch of one the kernel ran 6 times the multiply-adds it needed (6-row tiles). A tile
with fewer than half its rows inside M (the last tile of a dynamic M; of a static M, only
where its last tile is that thin: a static M picks its tile height by the cost model) runs
a two-row kernel per pair of those rows (`Blis.thin`), reading B where it lies where the
nest may, their sums through the tile's scratch into the usual stores; only where K is
dynamic or at least `nest.THIN_MIN_K` (64). Measured (MLP 784-256-10 forward, 1 thread,
`.so` builds alternated in one process, both orders, median us): B=1 28.8-30.7 ->
27.4-27.9, B=2 28.4-29.7 -> 26.9-27.0 (most of a call is Python's); its x @ w1
(`Model.profile`) 17.6 -> 13.0 at B=1, 15.5 -> 13.1 at B=2, bound by B's rows, 1 KB apart,
streaming from L2 (a one-row kernel for an odd row took 12-13 us: not worth a third
kernel's compile time). The cost is compile time: a fresh process to examples/mlp.irk's
first training step (cold cache, medians of six alternated, from `import irkit`) 0.770 s
with `thin-rows=false`, 0.795 s with thin tiles. `thin-rows=false` computes whole tiles.

Few columns. Where N, static, leaves more than a quarter of its vectors' lanes idle, the
vectors run along another dim instead, every lane busy:
- along K, as dot products (passes/blis/dot.py), where A is read along K at stride 1 and
  K, static, is at least a vector and at most `chunk` vectors (the logistic regression's
  x @ w, the MLP's h @ w2): B transposed once (K x N), a tile of rows times a group of
  columns in vector accumulators, their lanes summed at the end;
- along M, the sides swapped (`contraction.swapped`, `nest.transpose_wins`), where A is
  read along M at stride 1 and M, static, is a multiple of the lanes (the weight gradients
  x^T @ dz and h^T @ dz): the same nest with B = x read where it lies by whole vectors
  (`nest.b_readable`: no packed B panel), dz^T packed as A, and C, whose rows now run
  along the nest's M, stored element by element, rows innermost; but where an epilogue
  runs at the store and M is whole tiles (`Blis.by_columns`), the tile is transposed in
  registers (`vector.shuffle`: its row vectors laid end to end, then interleaved) and
  each of C's rows in the tile is one vector through the epilogue. The logistic
  regression's x^T @ dz with SGD's update had spent a third of its time in the scalar
  epilogue; its step (1 thread, `.so` builds alternated in one process) 47.7 -> 45.7 us.
  Where, besides, the update reads only buffers laid out as C (rows of exactly M) and
  scalars (`epilogue.flat_ok`), the register tile takes all of M's rows (`schedule`'s
  `whole_m`) and a tile's columns are one run of consecutive elements of C, of the
  buffers (each collapsed to one run by `memory.collapse_shape`) and of the transposed
  tile: the update runs over the run by whole vectors (`Blis.final_flat`), where a row
  of 10 had been a vector of 5 twice (AVX-512 splits each into 4 + 1). The logistic
  regression's step (B = 100, raw calls, both builds in one process, alternated): 30.8
  -> 27.5 us on 1 thread, 25.8 -> 23.8 on 2; at B = 1, 7.6 -> 6.0.
Measured (1 thread, median of 300 interleaved calls of the compiled function, load 1.2,
numpy in the same rounds; the call itself costs about 12 us of Python): x @ w (100 x 10 x
784) 42.3 against 55.4 us (numpy 29.8; the kernel 15.3 us in the training step's
`Model.profile`, 26.6 before in its own: 49k FMAs, at this machine's one 16-lane FMA a
cycle), x^T @ dz 33.1 against 37.5
(numpy 21.6); bench/run.py's logistic regression step, one process per variant pinned to
one core, four alternating rounds of 3 s (load 1.9-2.0), median 63.2-64.8 against
80.1-81.7 us (numpy by hand 78.4-79.3), its MLP step at B = 128 1396-1398 against
1435-1476 us (numpy 1338-1360).
`dot=false` and `transpose=false` keep the N-wide tile.

Numerics. The kernel accumulates in float32 with fused multiply-adds from zero and adds the
partial sums into C (BLIS's beta = 1), so C's initial value is included and a K loop of length
0 leaves C alone (where a zero fill was folded, the first block's sums are stored: beta = 0
once, the same values). A side of several factors (a folded batchnorm's scale times the
filter) is multiplied out in float32 while packing, but for A's factors on M alone (the
batchnorm scale of a filter gradient's dz): those multiply the tile's sums once per chunk
(`nest.row_factors`; the CNN step of examples/cnn.irk, 1 thread, 0.656 -> 0.642 ms). The
blocking reassociates the op's sequential sum: results are not bit-equal to
lower-linalg-to-loop's. The float32 accumulators run `chunk` (128) k steps before they are
added into C: with an f64 C the chunks add up without further loss, so the error is that of
float32 sums of 128 products, combined.
Measured max |error| / sum|a*b| over 1024 x 1024 outputs of positive data (the worst case: no
cancellation), in units of eps32, against the C * log2(K) bound of
tests/unit/test_reduction_accuracy.py: K = 1024: 1.17 (chunk 64), 2.28 (128), 4.96 (256),
bound 10; K = 64, 128, 256 with chunk = K: 5.3, 6.5, 9.8 against 6, 7, 8, where numpy's
OpenBLAS gives 5.3, 6.5, 9.5 (it sums all of K in float32). So chunk 128 holds the bound
where numpy does (256 would not: 9.8 at K = 256); on 64 x 64 outputs, K = 200, 256, 1024,
4096: 4.0, 3.0, 1.7, 0.97 (chunk 64: 2.1, 2.0, 0.87, 0.46; numpy 7.3, 6.5, 5.6, 3.3).
Against 64 it halves the stores of a tile's sums (24 vectors widened and added into C or
the per-tile buffer per chunk): the MLP's x @ w1 at B = 128, 1 thread, 590 against 630 us
(numpy 497; best of 300, load 17). For an f32 C the chunk sums add up in f32 as well.

Sizes (`schedule`): the register tile from the target (`irkit.target.of` the op: this
machine, or the CPU the module's `irkit.target` names): `nv` vectors
of `lanes` float32 across n and `mr` rows, the pair with the most fused multiply-adds per
operand fetched (mr * nv / (mr + nv)) among those whose mr * nv accumulators, nv B vectors and
one broadcast fit the vector registers, with at least 8 accumulators in flight (4-cycle FMA
latency, two FMA pipes): 6 x 64 on AVX-512 (32 zmm; against 14 x 32 and 8 x 48 on 1024^3:
38.8, 33.4 and 37.8 GFLOP/s in one loaded round), 4 x 24 on AVX2; for static sizes the
score is weighted by the share of the tiles' FMAs inside M x N (a convolution's 16 x 16 gets
16 x 16, not 6 x 64, which would compute four times its work). Cache blocks: kc = 256
(a kc x nr B micro-panel stays in L1 across the row tiles), mc the multiple of mr whose A
block (mc x kc) fills half of the L2, at most 128 rows (the row blocks are the threads'
unit: more of them balance a team; 1024^3 at 1 thread: 44.9 GFLOP/s with mc = 120 against
38.7 with 504, numpy 44.1, one loaded round), nc the multiple of nr whose B panel (kc x nc) fills
half of the L3 share; `chunk` (above). Options override each.

Threshold. Below `min-flops` (2 * batch * M * N * K, all sizes static; default 2^18) the op
is left to lower-linalg-to-loop. Measured with bench/bench_matmul.py (1 thread, against the table's
plain nest): the blocked nest was faster at every size tried, 32x128x32 (2^18 flops: 9.6 vs
8.1 GFLOP/s), 64x64x64 (18 vs 12), the MLP's 128x10x128 (7.1 vs 4.3) and 128x128x64 (41
vs 13); below 2^18 packing is most of the work and the plain nest is kept (a vectorized
plain nest may move the threshold up: measure again). Convolutions (`--conv`, 1 thread,
median ms of a forward and both gradients, the machine at load 4.8): examples/cnn.irk's
training step at batch 64 2.21 (plain nest 6.60, PyTorch eager 2.29); 64x8x6x6 * 16x8x3x3
1.02 (4.25, PyTorch 0.40); 32x32x32x32 * 64x32x3x3 141 (2208, PyTorch 75); a second round
at load 5.3: 2.07 against PyTorch's 1.69 for the training step (parity within the noise of
this shared machine, not yet a clear win). What is left
is mostly packing: a small convolution's B panel is its im2col, one load, index split and
store per element, scalar.
"""

from __future__ import annotations

from dataclasses import replace

from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, Operation
from irkit.pass_manager import Pass, register_pass
from irkit.target import SCHEDULE_ATTRIBUTE, SCHEDULE_KNOBS, Target
from irkit.target import of as target_of
from irkit.types import I64, INDEX, MemRefType
from irkit.dialects import arith
from irkit.dialects.fusion import GroupOp
from irkit.dialects.loop import ParallelOp, YieldOp
from irkit.dialects.memory import AllocOp, DeallocOp, DimOp, LoadOp, StoreOp
from irkit.passes.blis import epilogue as epilogues
from irkit.passes.blis.contraction import (
    Contraction, contractions, flatten_accumulator, narrowed, swapped, zero_fill,
)
from irkit.passes.blis.dot import Dot, dot_schedule, dot_wins
from irkit.passes.blis.epilogue import Epilogue
from irkit.passes.blis.nest import (
    NOWHERE, TILE, Blis, b_in_place, schedule, transpose_wins, vector_lanes,
)
from irkit.passes.lower_linalg_to_loop import IndexConstants


def dissolve(group: GroupOp, op: Operation) -> list[Operation]:
    """Run a `fusion.group`'s ops one after another, in its place; the ones after `op`."""
    ops = list(group.body.ops)[:-1]
    for o in ops:
        o.move_before(group)
    group.erase()
    return ops[ops.index(op) + 1:]


def _place_members(ep: Epilogue, blis: Blis) -> None:
    """After the nest, the members are erased: the nest ran them. Where K is dynamic they
    are kept under `K == 0` (the nest then stores nothing; they read the filled
    accumulator)."""
    c, e = blis.c, blis.e
    if c.static(c.k) is not None:
        for m in ep.ops():
            m.erase()
        return
    at = Builder.before(c.op)
    e.if_(at, e.eq(at, blis.K, 0), lambda b: [b.insert(m.detach()) for m in ep.ops()],
          lambda b: None)


def _keep_for_empty_k(fill: Operation, blis: Blis) -> None:
    """The zero fill of an output whose K is dynamic, folded into the nest (its first K
    step stores), runs after it only where K == 0 (the nest then stores nothing)."""
    at = Builder.before(blis.c.op)
    blis.e.if_(at, blis.e.eq(at, blis.K, 0), lambda b: b.insert(fill.detach()),
               lambda b: None)


#: `split_images`: the least work per image (K's other dims) worth a nest of its own
MIN_IMAGE_K = 64
#: and the largest partial sums it may keep, in bytes (images x M x N of C's element), for
#: a batch of `IMAGES_ASSUMED` (the count is known at run time only)
MAX_PARTIAL_BYTES = 1 << 20
IMAGES_ASSUMED = 256


def split_images(c: Contraction, s) -> Contraction | None:
    """The contraction per image, into partial sums (`images x C`), where its output is one
    row block and K runs over the images: a filter gradient (M = filters, N = channels x
    window, K = images x pixels) otherwise runs on one thread, since threads split the row
    blocks. The images dim is K's one dynamic dim (the batch); the partial sums
    `P[image, ...]`, C's indices after the image's, make it a batch dim, which the
    nest splits between threads (`Blis.per_image`), each image storing its own sums; then
    `add_images` adds them up into C. Only where each image has at least `MIN_IMAGE_K` of
    K and the partial sums fit `MAX_PARTIAL_BYTES` (None otherwise)."""
    m, n = c.static(c.m), c.static(c.n)
    if c.batch or c.transposed or m is None or n is None or m > s.mc or \
            any(d is None for d in c.c.type.shape):
        return None
    dynamic = [k for k in c.k if not isinstance(c.extents[k], int)]
    if len(dynamic) != 1:
        return None
    d = dynamic[0]
    rest = [k for k in c.k if k != d]
    per_image = c.static(rest)
    if not rest or per_image is None or per_image < MIN_IMAGE_K:
        return None
    images = c.extents[d]
    elem = c.c.type.element
    if (elem.width // 8) * m * n * IMAGES_ASSUMED > MAX_PARTIAL_BYTES:
        return None
    b = Builder.before(c.op)
    count = b.create(DimOp, images[0], axis=IntegerAttr(images[1], I64),
                     location=c.op.location).result
    partial = b.create(AllocOp, [count], result_types=[MemRefType(
        (None, *c.c.type.shape), elem)], location=c.op.location).result
    return replace(c, c=partial, c_forms=[({d: 1}, 0), *c.c_forms], batch=[d], k=rest)


def add_images(whole: Contraction, partial, blis: Blis, fill: Operation | None) -> None:
    """C (+)= the sum over images of the partial sums `split_images` made, then their
    buffer freed: a `loop.parallel` over C's elements, each summing its images in order
    (from 0 where C's zero fill was folded, its fill erased; else from C's value)."""
    e, loc = blis.e, blis.e.location
    c = whole.c
    shape = c.type.shape
    b = Builder.after(blis.c.op)
    images = b.create(DimOp, partial, axis=IntegerAttr(0, I64), location=loc).result
    zero = e.v(0)
    one = e.v(1)
    loop = ParallelOp.build([zero] * len(shape), [e.v(x) for x in shape], [one] * len(shape),
                            result_types=[], regions=1, location=loc)
    block = Block([INDEX] * len(shape))
    loop.regions[0].add_block(block)
    b.insert(loop)
    inner = Builder.at_end(block)
    idx = list(block.args)
    if fill is not None:
        start = e.fconst(inner, 0.0, c.type.element)
        fill.erase()
    else:
        start = inner.create(LoadOp, c, idx, location=loc).result

    def add(b2: Builder, i, carried):
        x = b2.create(LoadOp, partial, [i, *idx], location=loc).result
        return [b2.create(arith.AddFOp, carried[0], x, location=loc).result]
    total = e.for_(inner, 0, images, 1, add, [start])[0]
    inner.create(StoreOp, total, c, idx, location=loc)
    inner.create(YieldOp, [], result_types=[], location=loc)
    Builder.after(loop).create(DeallocOp, partial, location=loc)


def drop_temporary(buffer) -> None:
    """Erase a temporary only its frees (and unused reads of its sizes) still use. One whose
    sizes something else still reads (a `memory.dim` giving another loop's bound) stays:
    allocated and never written, which costs memory, not correctness."""
    users = list(buffer.users)
    if any(u.results and any(r.has_uses() for r in u.results) for u in users):
        return
    for u in users:
        u.erase()
    buffer.owner.erase()


#: the module attribute that carries measured sizes (`irkit.runtime.tuning`), and the sizes
#: an entry may set
CONFIGS, TUNABLE = SCHEDULE_ATTRIBUTE, SCHEDULE_KNOBS


def _module_of(op: Operation) -> Operation | None:
    """The innermost `builtin.module` around `op` (a model's module in a file of several)."""
    op = op.parent_op
    while op is not None and op.name != "builtin.module":
        op = op.parent_op
    return op


def tuned_configs(root: Operation | None) -> dict[int, dict[str, int]]:
    """The sizes of module `root`'s `blis.configs` attribute by ordinal (the contraction's
    place in this pass's walk of that module, the innermost around it):
    `[{ordinal = 1 : i64, kc = 128 : i64}, ...]`, what
    `irkit-compile --autotune` measured. They override the cost model and the pass options
    for that contraction's BLIS nest (not a dot-product nest, whose shape is fixed); a
    `kc` is the K block even where an epilogue would make K one longer block. A
    malformed attribute is an error at the module, not a silent default."""
    attr = root.attributes.get(CONFIGS) if root is not None else None
    if attr is None:
        return {}

    def bad(why: str) -> IRError:
        return IRError(f"linalg-matmul-blis: '{CONFIGS}' {why}: expected an array of "
                       f"dictionaries {{ordinal = N : i64, <{'|'.join(TUNABLE)}> = N : i64, "
                       "...}", root.location)
    if not isinstance(attr, ArrayAttr):
        raise bad("is not an array")
    out = {}
    for entry in attr:
        if not isinstance(entry, DictionaryAttr):
            raise bad("holds an entry that is not a dictionary")
        values = dict(entry.value)
        if not all(isinstance(v, IntegerAttr) for v in values.values()):
            raise bad("holds a value that is not an integer")
        sizes = {k: v.value for k, v in values.items()}
        ordinal = sizes.pop("ordinal", None)
        unknown = sorted(set(sizes) - set(TUNABLE))
        if ordinal is None or ordinal < 0 or unknown or any(v < 1 for v in sizes.values()):
            raise bad(f"entry {{{', '.join(f'{k} = {v}' for k, v in values.items())}}} "
                      "has no ordinal, an unknown key or a size below 1")
        out[ordinal] = sizes
    return out


@register_pass
class LinalgMatmulBlis(Pass):
    """Float32 contractions on memrefs to the BLIS nest (see the module docstring).

    Algorithm:
      1. Collect the structured ops on memrefs; generalize each matmul, batch matmul and
         NCHW convolution, and match the contraction (linear maps, the body's product,
         the batch / M / N / K groups).
      2. Skip it when its static sizes are small (`min-flops`); else dissolve the
         `fusion.group` it is in, if any, and find the epilogue among the group's ops after
         it (`epilogue.find`); collapse its temporary f64 output's trailing N dims into
         one, and fold the zero fill before it.
      3. Pick the schedule (register tile from the target, cache blocks from the cache
         sizes and options) and build the nest before the op: B's packed buffer at the top,
         batch, jc and pc loops, B packed by a `loop.parallel` over its panels, a
         `loop.parallel` over row blocks of at most mc rows (their count a multiple of
         `row-blocks`, sizes within one tile of each other) each reading A where it lies
         (or, where A is several factors or dims, packing its A block into a buffer) and
         running the micro-kernel over its mr x nr tiles, adding each chunk's sums into
         C (storing, in the first K block, where the fill was folded), or, where there is
         an epilogue, into a per-tile buffer, C only at a block's end, and at the last K
         step adding what waits and running the epilogue into its outputs; erase the op
         and the members (kept under `K == 0` for a dynamic K), and the accumulator where
         no sums wait in it; an accumulator left to its own readers whose static K is one
         chunk is made float32 (`narrowed`). Where N is few columns (module docstring):
         dot products along K (`dot.Dot`), or the sides swapped first.

    Options: `mr`, `nr`, `mc`, `kc`, `nc`, `lanes` (0: from the target and the cost model),
    `chunk` (k steps per float32 partial sum), `row-blocks` (the row blocks' count a
    multiple of it, for even thread shares; 1: as few as `mc` allows), `direct-a=false`
    (A packed even where it can be read where it lies), `thin-rows=false` (a tile mostly past
    M computes all its rows, not by pairs), `dot=false` and `transpose=false` (few
    columns keep the N-wide tile, not dot products along K or the sides swapped),
    `align-start=false` (dot products from k = 0 wherever A lies: results independent of
    its placement, `dot.Dot.aligned_start`),
    `l2-bytes` / `l3-bytes` (the cache sizes the blocks are made for), `min-flops` (0:
    every match), `parallel=false` (every loop a `loop.for`), `epilogue=false` (the
    epilogue its own nest, as before), `kc-epilogue` (the largest static K made one
    block for an epilogue; 0: none), `kc-dynamic` (the least K block of a dynamic K
    with an epilogue; 0: `kc`) and `direct-b-tiles` (B read where it lies up to that many
    row tiles; 0: always packed).
    """

    name = "linalg-matmul-blis"
    mr: int = 0
    nr: int = 0
    mc: int = 0
    kc: int = 256
    kc_epilogue: int = 1024
    kc_dynamic: int = 1024
    direct_b_tiles: int = 64
    nc: int = 0
    chunk: int = 128
    lanes: int = 0
    l2_bytes: int = 1 << 20
    l3_bytes: int = 16 << 20
    min_flops: int = 1 << 18
    row_blocks: int = 8
    direct_a: bool = True
    thin_rows: bool = True
    transpose: bool = True
    dot: bool = True
    align_start: bool = True
    parallel: bool = True
    epilogue: bool = True

    def run(self, root: Operation) -> None:
        constants = IndexConstants()
        # every module's measured sizes, read (and checked) first; ordinals count per module
        configs = {m: tuned_configs(m) for m in root.walk()
                   if m.name == "builtin.module" and CONFIGS in m.attributes}
        counts: dict = {}
        for op, generic, c in contractions(root, self._worth_it):
            home = _module_of(op)
            ordinal = counts[home] = counts.get(home, -1) + 1
            target = target_of(op)
            c, ep, dot, fill = self.prepare(op, generic, c, target)
            lanes = vector_lanes(self, target)
            dynamic_fill = fill is not None and c.static(c.k) is None
            if fill is not None and not dynamic_fill:
                fill.erase()
            if ep is not None:
                for alloc in ep.hoisted:
                    alloc.move_before(op if generic is op else generic)
            sizes = tuple(c.static(g) for g in (c.m, c.n, c.k))
            one_block = ep is not None and fill is not None
            tuned = configs.get(home, {}).get(ordinal) or {}
            # a measured kc is the block, over kc-epilogue's and kc-dynamic's longer ones
            options = replace(self, **tuned, **({"kc_epilogue": 0, "kc_dynamic": 0}
                                                if "kc" in tuned else {}))
            whole_m = ep is not None and epilogues.flat_ok(ep, c) or \
                not dot and b_in_place(c, lanes, self.direct_b_tiles)
            kind, s = (Dot, dot_schedule(lanes, target, *sizes[1:], self.chunk)) \
                if dot else (Blis, schedule(options, sizes, target, one_block, whole_m))
            if ep is None and fill is not None and not dynamic_fill:
                c = narrowed(c, s.chunk)
            split = None if dot or ep is not None or not self.parallel else \
                split_images(c, s)
            if split is not None:                # per image into a partial sum, then added
                whole, c = c, split
                s = schedule(options, tuple(c.static(g) for g in (c.m, c.n, c.k)), target)
            blis = kind(c, s, constants, self.parallel, fill is not None or split is not None,
                        self.l2_bytes, ep, self.direct_a, self.direct_b_tiles,
                        thin_rows=self.thin_rows)
            blis.align_start = self.align_start
            blis.emit()
            if split is not None:
                add_images(whole, c.c, blis, fill)
            elif dynamic_fill:
                _keep_for_empty_k(fill, blis)
            if ep is not None:
                _place_members(ep, blis)
            generic.erase()
            if generic is not op:
                op.erase()
            if ep is not None and blis.waits in (NOWHERE, TILE):
                drop_temporary(c.c)

    def prepare(self, op: Operation, generic, c: Contraction, target: Target) -> tuple:
        """(the contraction the nest computes, its epilogue or None, whether it runs as dot
        products, its zero fill or None) of a matched op (the class docstring's step 2):
        its `fusion.group` dissolved, its accumulator flattened. What the nest is built
        from, and what `irkit-compile --autotune` reports each site's schedule by."""
        group = op.parent_op
        ep = None
        if isinstance(group, GroupOp):
            following = dissolve(group, op)
            if self.epilogue and c.static(c.k) != 0:
                ep = epilogues.find(c, following, {op, generic})
        c = flatten_accumulator(c)
        dot, c = self.layout(c, target)
        if ep is not None and not dot and not c.transposed and \
                not epilogues.vector_ok(ep, c):
            ep = None                            # measured slower element by element
        return c, ep, dot, zero_fill(c, dynamic_k=True)

    def layout(self, c: Contraction, target: Target) -> tuple[bool, Contraction]:
        """(whether `c` runs as dot products along K, the contraction the nest computes:
        `c`, or `c` with its sides swapped); the module docstring's few columns."""
        lanes = vector_lanes(self, target)
        if self.dot and dot_wins(c, lanes, self.l2_bytes // 2):
            return True, c
        if self.transpose and transpose_wins(c, lanes):
            return False, swapped(c)             # its epilogue element by element, as C's
        return False, c

    def _worth_it(self, c: Contraction) -> bool:
        """Whether the static sizes leave enough work for packing to pay (module docstring);
        a dynamic size counts as large."""
        size = c.static(c.batch + c.m + c.n + c.k)
        return size is None or 2 * size >= self.min_flops
