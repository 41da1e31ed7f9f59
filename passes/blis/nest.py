"""The BLIS nest of one matched contraction (passes/blis/contraction.py), and the sizes it is
built with; passes/linalg_matmul_blis.py says what it is and why.

Each loop of the nest runs over a flat index of its group (M, N or K); where an operand is
read or written, the flat index is split into the group's dims (`divui` / `remui` by the
inner extents, constants for static ones: a multiply and a shift once LLVM is done; nothing
at all for a group of one dim) and each index of the operand is its linear form at those
dims. The M split is made once per packed or stored row and the K split once per row of B's
panel. The packing loops that walk a group of several dims element by element (the columns
of B's panel: a convolution's im2col over output pixels; the steps of A's) walk it in runs
of its last dim instead (`Blis.runs`): the split once per run, the run itself a loop over
that dim. Split per element, the copy was a division, a remainder and a dozen integer ops
per float moved: in examples/cnn.irk's step, the panels of conv2's data gradient alone
were a fifth of the time (`perf`), for a contraction of 2.7 MFLOP. Where every factor of B
reads along N's last dim at stride 1 (a convolution's window row) and its extent is static,
a run that a panel covers whole is copied by vectors whose widths add up to the row (12: 8
and 4), the runs a panel cuts float by float. examples/cnn.irk's step at B=64 on 1 thread,
`.so` builds called alternately in one process, median ms: split per element 1.62, in runs
1.20; with the short loops unrolled (`loop-unroll` in the pipeline) 1.07, and whole runs by
vectors 0.86.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from irkit.attributes import DenseArrayAttr, FloatAttr, IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.target import Target, power_of_two_pieces
from irkit.types import F32, I64, INDEX, MemRefType, VectorType
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES, materialize_constant
from irkit.dialects.loop import ForOp, IfOp, ParallelOp, YieldOp
from irkit.dialects.math import FmaOp
from irkit.dialects.memory import (
    AllocOp, CollapseShapeOp, DeallocOp, DimOp, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp,
    reassociation_attr,
)
from irkit.dialects.vector import BroadcastOp, ShuffleOp
from irkit.passes.blis import epilogue as epilogues
from irkit.dialects.memory.view import strides_and_offset
from irkit.passes.blis.contraction import Contraction, Factor, Linear, swapped
from irkit.passes.blis.epilogue import Epilogue
from irkit.passes.lower_linalg_to_loop import IndexConstants

Index = int | Value
#: the row blocks are what the threads split: at most this many rows each, so that a team
#: gets several blocks per thread (1024 rows: 9 blocks of 126, not 3 of 504)
_MAX_MC = 128


# ---------------------------------------------------------------------------------------------
# The schedule: register tile and cache blocks
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """Tile sizes: register tile mr x nr (nr = nv * lanes), cache blocks mc, kc, nc; the
    number of row blocks a multiple of `row_blocks` where threads split them; whether the
    micro-kernel's multiply-adds are fused (`math.fma`, the target has the instruction) or
    a multiply and an add (a CPU without one would call the C library's `fmaf` per lane)."""

    lanes: int
    mr: int
    nr: int
    mc: int
    kc: int
    nc: int
    chunk: int
    row_blocks: int = 1
    fused: bool = True


#: bytes of a cache line: A's rows closer than this along K are read where they lie
CACHE_LINE = 64

#: the least static K for which a nest builds its thin-tile kernel (`Blis.thin`): below
#: it, the multiply-adds a thin tile spares are too few to pay for the kernel's compile time
THIN_MIN_K = 64


def register_tile(registers: int, lanes: int, m: int | None = None,
                  n: int | None = None) -> tuple[int, int]:
    """(mr, nv) with the most FMAs per operand fetched (mr * nv / (mr + nv)), times the
    share of the tiles' FMAs that fall inside static sizes `m` x `n` (a 16-column problem
    wastes three quarters of a 64-column tile), among the tiles whose accumulators, B
    vectors and broadcast fit `registers`, at least 8 accumulators (ties: more
    accumulators); (4, 1) for a target without vector registers."""
    tiles = register_tiles(registers, lanes, m, n)
    return tiles[0] if tiles else (4, 1)


def register_tiles(registers: int, lanes: int, m: int | None = None,
                   n: int | None = None) -> list[tuple[int, int]]:
    """Every (mr, nv) that `register_tile` considers, best first by its score (what
    `irkit.runtime.tuning` measures the best few of)."""
    def used(size: int | None, tile: int) -> float:
        return 1.0 if size is None else size / (-(-size // tile) * tile)

    scored = []
    for nv in range(1, 5):
        for mr in range(1, 17):
            if mr * nv + nv + 1 > registers or mr * nv < 8:
                continue
            score = (mr * nv / (mr + nv) * used(m, mr) * used(n, nv * lanes), mr * nv)
            scored.append((score, (mr, nv)))
    scored.sort(key=lambda st: st[0], reverse=True)      # stable: ties keep the first found
    return [tile for _, tile in scored]


def vector_lanes(options, target: Target) -> int:
    """float32 lanes of a vector: the `lanes` option, else the target's."""
    return options.lanes or max(1, target.lanes(4))


def schedule(options, static: tuple, target: Target, one_block: bool = False,
             whole_m: bool = False) -> Schedule:
    """Sizes for a contraction with static flat (M, N, K) sizes (None when dynamic), on
    `target` (`irkit.target.of` the op); `options` is the pass (its fields override the
    cost model's choices). `one_block` (an
    epilogue is applied at the store): a static K in one block when it is at most
    `kc-epilogue` (its sums then need no accumulator buffer); a dynamic K in blocks of at
    least `kc-dynamic`, since the sums of earlier blocks wait in the f64 accumulator, a
    round trip of C through memory (16 bytes an element) per block, none for one block.
    `whole_m`: a register tile of all of a static M's rows where one fits (the best such),
    for a swapped contraction whose epilogue then runs flat (`epilogue.flat_ok`), and for
    one that reads B where it lies (`b_in_place`): B's rows, a line or more apart along K
    (x's 3136 bytes in a weight gradient dz^T @ x), then stream from L2 once, not once per
    row block (10 classes: two blocks of 5 took 12.8 us, one of 10 rows 9.4)."""
    lanes = vector_lanes(options, target)
    m, n, k = static
    mr, nv = register_tile(target.vector_registers, lanes, m, n)
    if whole_m and m is not None:
        mr, nv = next(((r, v) for r, v in register_tiles(target.vector_registers, lanes, m, n)
                       if r == m), (mr, nv))
    mr = options.mr or mr
    nr = options.nr or nv * lanes
    if nr % lanes:
        lanes = 1                         # a tile width the vectors do not divide: scalars
    kc = options.kc
    if one_block and k is None:
        kc = max(kc, options.kc_dynamic)
    elif one_block and k <= options.kc_epilogue:
        kc = max(kc, k)
    mc = options.mc or max(mr, min(options.l2_bytes // 2 // (kc * 4), _MAX_MC) // mr * mr)
    nc = options.nc or max(nr, (options.l3_bytes // 2 // (kc * 4)) // nr * nr)
    mc, nc = -(-mc // mr) * mr, -(-nc // nr) * nr          # whole register tiles
    # no buffer larger than the op needs: blocks clipped to the static sizes, rounded up
    if m is not None:
        mc = min(mc, -(-m // mr) * mr)
    if n is not None:
        nc = min(nc, -(-n // nr) * nr)
    if k is not None:
        kc = max(1, min(kc, k))
    return Schedule(lanes, mr, nr, mc, kc, nc, min(options.chunk or kc, kc),
                    max(1, options.row_blocks), target.fma)


def row_factors(c: Contraction) -> tuple[list[Factor], list[Factor]]:
    """(A's factors that read no K dim, the others), where A has both kinds: a factor on M
    (and batch) dims only is the same for every k of a row, so it multiplies a tile's sums
    at the store instead of every element of A (`Blis.scale_rows`). A filter gradient's A
    is dz times the batchnorm scale (one per filter, M): packed as a product, by a copy
    into the k-major panel that stored one float per 32 bytes; dz alone is read where it
    lies."""
    rows = [f for f in c.a if not f.dims() & set(c.k)]
    rest = [f for f in c.a if f.dims() & set(c.k)]
    return (rows, rest) if rows and rest else ([], c.a)


def b_readable(c: Contraction, lanes: int) -> bool:
    """Whether B can be read where it lies, by whole vectors, never packed: one factor whose
    last index is the one N dim at stride 1 (in memory too) and no other index uses it, N
    static and a multiple of `lanes` (a tile past N reads the last whole vector again: its
    sums are never stored), no batch dim and one K dim (one index per k step)."""
    if len(c.b) != 1 or len(c.n) != 1 or len(c.k) != 1 or c.batch:
        return False
    n = c.static(c.n)
    return n is not None and n % lanes == 0 and contiguous_along(c.b[0], c.n[0])


def b_in_place(c: Contraction, lanes: int, direct_b_tiles: int) -> bool:
    """Whether the nest may read B where it lies instead of packing it (`Blis.b_choosable`;
    `emit` says when it does, by M against `direct_b_tiles`, 0: never): a plain `x @ w`, B
    one row-major 2-d factor [k, n] (`b_readable`; a last part tile reads B's last whole
    vector again, never stored: `Blis.b_cols`)."""
    if direct_b_tiles <= 0 or c.transposed or not b_readable(c, lanes):
        return False
    f = c.b[0]
    return f.buffer.type.rank == 2 and f.forms[0] == ({c.k[0]: 1}, 0)


def contiguous_along(f: Factor, dim: int) -> bool:
    """Whether factor `f`'s last index is `dim` itself, at stride 1 in memory, and no other
    index of `f` uses `dim`: consecutive `dim` are adjacent floats."""
    layout = strides_and_offset(f.buffer.type)
    return f.forms[-1] == ({dim: 1}, 0) and \
        not any(dim in coefs for coefs, _ in f.forms[:-1]) and \
        layout is not None and layout[0][-1] == 1


def along_rows(f: Factor, dim: int) -> bool:
    """Whether factor `f`'s last index steps by 1 with `dim` (plus any other dims: a
    window's x + kx), at stride 1 in memory, and no other index of `f` uses `dim`: with the
    other dims fixed, consecutive `dim` are adjacent floats."""
    layout = strides_and_offset(f.buffer.type)
    return f.forms[-1][0].get(dim) == 1 and \
        not any(dim in coefs for coefs, _ in f.forms[:-1]) and \
        layout is not None and layout[0][-1] == 1


def transpose_wins(c: Contraction, lanes: int) -> bool:
    """Whether the nest runs on `swapped(c)`: N, static, would leave more than a quarter of
    its vectors' lanes idle (the logistic regression's 10 classes fill 10 of 16), and
    swapped, B (A's one factor, read along M at stride 1: the weight gradient x^T @ dz reads
    the rows of x) is `b_readable`: the vectors then run along M, every lane busy, and the
    output is stored element by element (its last index is N's)."""
    n = c.static(c.n)
    if c.transposed or len(c.n) != 1 or n is None or lanes < 2 or \
            4 * n > 3 * (-(-n // lanes) * lanes):
        return False
    return b_readable(swapped(c), lanes)


# ---------------------------------------------------------------------------------------------
# Building blocks: folded index arithmetic and loops
# ---------------------------------------------------------------------------------------------


class Emitter:
    """Index arithmetic that folds constants (an int stays an int until an op needs it),
    and loop builders whose bodies are callbacks."""

    def __init__(self, near: Operation, constants: IndexConstants) -> None:
        self.near = near
        self.location = near.location
        self.constants = constants

    def v(self, x: Index) -> Value:
        return self.constants.get(self.near, x) if isinstance(x, int) else x

    def _binary(self, b: Builder, cls, fold, x: Index, y: Index) -> Index:
        if isinstance(x, int) and isinstance(y, int):
            return fold(x, y)
        return b.create(cls, self.v(x), self.v(y), location=self.location).result

    def add(self, b: Builder, x: Index, y: Index) -> Index:
        if y == 0 or x == 0:
            return x if y == 0 else y
        return self._binary(b, arith.AddIOp, lambda p, q: p + q, x, y)

    def sub(self, b: Builder, x: Index, y: Index) -> Index:
        return x if y == 0 else self._binary(b, arith.SubIOp, lambda p, q: p - q, x, y)

    def mul(self, b: Builder, x: Index, y: Index) -> Index:
        if y == 1 or x == 1:
            return x if y == 1 else y
        if y == 0 or x == 0:
            return 0
        return self._binary(b, arith.MulIOp, lambda p, q: p * q, x, y)

    def div(self, b: Builder, x: Index, y: Index) -> Index:
        """x // y of non-negative x and positive y."""
        return x if y == 1 else self._binary(b, arith.DivUIOp, lambda p, q: p // q, x, y)

    def rem(self, b: Builder, x: Index, y: Index) -> Index:
        return 0 if y == 1 else self._binary(b, arith.RemUIOp, lambda p, q: p % q, x, y)

    def min(self, b: Builder, x: Index, y: Index) -> Index:
        return self._binary(b, arith.MinSIOp, min, x, y)

    def max(self, b: Builder, x: Index, y: Index) -> Index:
        return self._binary(b, arith.MaxSIOp, max, x, y)

    def ceildiv(self, b: Builder, x: Index, y: Index) -> Index:
        if y == 1:
            return x
        return self._binary(b, arith.CeilDivSIOp, lambda p, q: -(-p // q), x, y)

    def for_(self, b: Builder, lb: Index, ub: Index, step: Index, body, inits=()) -> list:
        """A `loop.for`; `body(builder, iv, carried)` returns what it yields."""
        inits = list(inits)
        types = [v.type for v in inits]
        loop = ForOp.build(self.v(lb), self.v(ub), self.v(step), inits, result_types=types,
                           regions=1, location=self.location)
        block = Block([INDEX, *types])
        loop.regions[0].add_block(block)
        b.insert(loop)
        inner = Builder.at_end(block)
        yielded = body(inner, block.args[0], list(block.args[1:])) or []
        inner.create(YieldOp, list(yielded), result_types=[], location=self.location)
        return list(loop.results)

    def parallel(self, b: Builder, ub: Index, step: Index, body, threads: bool) -> None:
        """One `loop.parallel` dimension from 0 (a `loop.for` without `threads`)."""
        if not threads:
            self.for_(b, 0, ub, step, lambda inner, iv, _: body(inner, iv))
            return
        loop = ParallelOp.build([self.v(0)], [self.v(ub)], [self.v(step)], result_types=[],
                                regions=1, location=self.location)
        block = Block([INDEX])
        loop.regions[0].add_block(block)
        b.insert(loop)
        inner = Builder.at_end(block)
        body(inner, block.args[0])
        inner.create(YieldOp, [], result_types=[], location=self.location)

    def if_(self, b: Builder, cond: Value, then, otherwise, types=()) -> list[Value]:
        """A `loop.if`; with result `types`, `then(builder)` and `otherwise(builder)` return
        what they yield, the op's results (without, what they return is ignored)."""
        op = IfOp.build(cond, result_types=list(types), regions=2, location=self.location)
        for region, fill in zip(op.regions, (then, otherwise)):
            block = Block([])
            region.add_block(block)
            inner = Builder.at_end(block)
            yielded = fill(inner)
            inner.create(YieldOp, list(yielded) if types else [], result_types=[],
                         location=self.location)
        b.insert(op)
        return list(op.results)

    def _cmp(self, b: Builder, predicate: str, x: Index, y: Index) -> Value:
        return b.create(arith.CmpIOp, self.v(x), self.v(y),
                        predicate=IntegerAttr(CMPI_PREDICATES.index(predicate), I64),
                        location=self.location).result

    def eq(self, b: Builder, x: Index, y: Index) -> Value:
        return self._cmp(b, "eq", x, y)

    def lt(self, b: Builder, x: Index, y: Index) -> Value:
        return self._cmp(b, "slt", x, y)

    def le(self, b: Builder, x: Index, y: Index) -> Value:
        return self._cmp(b, "sle", x, y)

    def alloc(self, b: Builder, shape: tuple) -> Value:
        return b.create(AllocOp, [], result_types=[MemRefType(shape, F32)],
                        location=self.location).result

    def fconst(self, b: Builder, value: float, t) -> Value:
        c = materialize_constant(FloatAttr(value, t), t, self.location)
        return b.insert(c).results[0]


# ---------------------------------------------------------------------------------------------
# The nest
# ---------------------------------------------------------------------------------------------


#: where the sums of a tile wait for its last K step: nowhere (all of K is one chunk, an
#: epilogue applied at the store), a per-tile buffer (K one block of several chunks, an
#: epilogue), the accumulator C (no epilogue: each chunk's sums added into it), or, with an
#: epilogue where K is several blocks or dynamic, a block's chunks in the per-tile buffer
#: and the earlier blocks' sums in C, one round trip of C per block, none for one block
NOWHERE, TILE, BUFFER, BLOCKS = "nowhere", "tile", "buffer", "blocks"


def end_to_end(b: Builder, parts: list[Value], location) -> Value:
    """The 1-D vectors `parts` laid end to end in one vector, by a balanced tree of
    `vector.shuffle`s (each joins two; LLVM folds the tree into the shuffles that read it)."""
    while len(parts) > 1:
        joined = []
        for x, y in zip(parts[::2], parts[1::2]):
            size = x.type.shape[0] + y.type.shape[0]
            joined.append(b.create(ShuffleOp, x, y, mask=DenseArrayAttr(I64, range(size)),
                                   result_types=[VectorType((size,), x.type.element)],
                                   location=location).result)
        parts = joined + parts[len(joined) * 2:]
    return parts[0]


class Blis:
    """The blocked nest of one matched contraction, built before its op. `overwrite`: the
    first K block stores its sums instead of adding them (the zero fill folded).
    `epilogue`: applied at the final store (passes/blis/epilogue.py), the sums of the
    earlier K steps waiting where `waits` says. `direct_a`: A read where it lies, not packed,
    wherever that is a plain read (`a_readable`). `direct_b_tiles`: a plain
    `x @ w` reads B where it lies when M is at most that many register tiles
    (`b_choosable`; 0: never). `thin_rows`: the last tile, where fewer than half its rows
    are inside M, runs a two-row micro-kernel per pair of them (`thin`)."""

    def __init__(self, c: Contraction, s: Schedule, constants: IndexConstants,
                 threads: bool, overwrite: bool, l2_bytes: int,
                 epilogue: Epilogue | None = None, direct_a: bool = True,
                 direct_b_tiles: int = 0, thin_rows: bool = True) -> None:
        #: A's factors on M dims only, applied to the tile's sums (`row_factors`)
        self.row_factors, a = row_factors(c)
        c = replace(c, a=a)
        self.c, self.s, self.threads, self.overwrite = c, s, threads, overwrite
        self.l2_bytes = l2_bytes
        self.a_direct = direct_a and not self.a_once() and self.a_readable()
        self.b_direct = c.transposed and b_readable(c, s.lanes)
        self.direct_b_tiles = direct_b_tiles
        #: a tile with fewer than half its rows inside M runs them by pairs (`thin`)
        self.thin_rows = thin_rows
        #: where B's choice is made at run time (a dynamic M): the `i1` "read B where it
        #: lies", set by `emit`; None: `b_direct` says
        self.b_choice: Value | None = None
        self.ep = epilogue
        #: a row block's transposed tile (`final_by_columns`), set by `row_block`
        self.columns_scratch: Value | None = None
        #: the tile spans all of M and its final store runs flat (`final_flat`), through
        #: `collapsed` (buffer -> its last two dims merged), made by `emit`
        n = c.static(c.n)
        self.flat = self.by_columns() and s.mr == c.static(c.m) and n is not None and \
            n % s.lanes == 0 and epilogues.flat_ok(epilogue, c)
        self.collapsed: dict[Value, Value] = {}
        single_block = overwrite and c.static(c.k) == s.kc
        self.waits = (BUFFER if epilogue is None else BLOCKS) if not single_block else \
            NOWHERE if s.chunk >= s.kc else TILE
        self.e = Emitter(c.op, constants)
        self.vec = VectorType((s.lanes,), F32)
        self.ivs: dict[int, Index] = {}
        self.top = Builder.before(c.op)
        self.extent = [x if isinstance(x, int) else self.top.create(
            DimOp, x[0], axis=IntegerAttr(x[1], I64), location=self.e.location).result
            for x in c.extents]

    def flat_size(self, group: list[int]) -> Index:
        size: Index = 1
        for d in group:
            size = self.e.mul(self.top, size, self.extent[d])
        return size

    def split(self, b: Builder, flat: Index, group: list[int]) -> dict[int, Index]:
        """The dims of `group` (outer to inner) at its row-major flat index `flat`."""
        dims, rest = {}, flat
        for i, d in enumerate(reversed(group)):
            last = i == len(group) - 1
            dims[d] = rest if last else self.e.rem(b, rest, self.extent[d])
            if not last:
                rest = self.e.div(b, rest, self.extent[d])
        return dims

    def runs(self, b: Builder, lo: Index, count: Index, group: list[int], body,
             whole=None) -> None:
        """`body(builder, dims, flat)` for each flat index `flat` of `group` in `[lo, lo +
        count)`, in order, `dims` its split: a loop over the runs of the group's last dim
        that the range meets, each split once, around a loop over that dim within it. The
        inner loop's index is a lane index (`loop-vectorize`) wherever an operand's last
        index is that dim plus a constant, as a convolution's window is along x. With
        `whole` and that dim's extent static, a run the range covers whole is instead
        `whole(builder, dims, flat)` at its first element (`flat` the run's start)."""
        e = self.e
        last = group[-1]
        width = self.extent[last]
        if len(group) == 1 or width == 0:       # (a static 0 leaves no flat index at all)
            e.for_(b, lo, e.add(b, lo, count), 1,
                   lambda b2, n, _: body(b2, {last: n} if len(group) == 1 else
                                         self.split(b2, n, group), n))
            return
        hi = e.add(b, lo, count)

        def run(b2: Builder, r: Value, _) -> None:
            start = e.mul(b2, r, width)
            outer = self.split(b2, r, group[:-1])
            first = e.max(b2, e.sub(b2, lo, start), 0)
            end = e.min(b2, e.sub(b2, hi, start), width)

            def by_elements(b3: Builder) -> None:
                e.for_(b3, first, end, 1,
                       lambda b4, x, _: body(b4, outer | {last: x}, e.add(b4, start, x)))
            if whole is None or not isinstance(width, int):
                by_elements(b2)
                return
            covered = b2.create(arith.AndIOp, e.eq(b2, first, 0), e.eq(b2, end, width),
                                location=e.location).result
            e.if_(b2, covered, lambda b3: whole(b3, outer | {last: 0}, start), by_elements)
        e.for_(b, e.div(b, lo, width), e.ceildiv(b, hi, width), 1, run)

    def at(self, b: Builder, form: Linear, dims: dict[int, Index]) -> Value:
        """A linear form's value at `dims`."""
        coefs, const = form
        total: Index = const
        for d, coef in coefs.items():
            total = self.e.add(b, total, self.e.mul(b, dims[d], coef))
        return self.e.v(total)

    def multiply_add(self, b: Builder, x: Value, y: Value, acc: Value) -> Value:
        """x * y + acc: one `math.fma` where the schedule is fused, else a multiply and an
        add (rounded twice, as a CPU without the instruction computes it at full speed)."""
        loc = self.e.location
        if self.s.fused:
            return b.create(FmaOp, x, y, acc, location=loc).result
        xy = b.create(arith.MulFOp, x, y, location=loc).result
        return b.create(arith.AddFOp, xy, acc, location=loc).result

    def product(self, b: Builder, factors: list[Factor], dims: dict[int, Index]) -> Value:
        """The product of `factors` read at `dims`, in the body's order."""
        loc, value = self.e.location, None
        for f in factors:
            x = b.create(LoadOp, f.buffer, [self.at(b, form, dims) for form in f.forms],
                         location=loc).result
            value = x if value is None else b.create(arith.MulFOp, value, x,
                                                     location=loc).result
        return value

    def c_index(self, b: Builder, m: Index, n: Index) -> list[Value]:
        """C's indices at flat row `m` and flat column `n`."""
        c = self.c
        dims = dict(self.ivs) | self.split(b, m, c.m)
        if c.transposed:                     # its last index is M's: each index a dim's
            dims |= self.split(b, n, c.n)
            return [self.at(b, form, dims) for form in c.c_forms]
        out = [self.e.v(dims[next(iter(form[0]))]) for form in c.c_forms[:-1]]
        return out + [self.e.v(self.e.add(b, n, c.c_forms[-1][1]))]

    def emit(self) -> None:
        c, s, e, top = self.c, self.s, self.e, self.top
        self.M, self.N, self.K = (self.flat_size(g) for g in (c.m, c.n, c.k))
        if self.flat:
            self.collapse_flat()
        per_image = self.per_image()
        self.threads = self.threads and not per_image        # one level of threads
        self.tiles, self.blocks = self.row_blocks()
        self.parts = self.column_parts()
        bp_shape = (s.nc // s.nr, s.kc, s.nr)
        if not per_image and self.b_choosable():
            m, limit = c.static(c.m), self.direct_b_tiles * s.mr
            if m is not None:
                self.b_direct = m <= limit
            else:
                self.b_choice = e.le(top, self.M, limit)
        self.bp = None if per_image or self.b_direct else e.alloc(top, bp_shape)
        self.ap_all = None
        if self.a_once():
            m, k = c.static(c.m), c.static(c.k)
            self.ap_all = e.alloc(top, (-(-m // s.mr), k, s.mr))
            self.pack_a(top, self.ap_all, 0, 0, m, k)

        def batch_loop(b: Builder, depth: int) -> None:
            if depth == len(c.batch):
                e.for_(b, 0, self.N, s.nc, lambda b2, jc, _: self.column_block(b2, jc))
                return
            d = c.batch[depth]

            def body(b2, iv, _):
                self.ivs[d] = iv
                batch_loop(b2, depth + 1)
            if not (per_image and depth == 0):
                e.for_(b, 0, self.extent[d], 1, body)
                return

            def image(b2, iv):                    # each thread its own packed B
                self.bp = e.alloc(b2, bp_shape)
                body(b2, iv, [])
                b2.create(DeallocOp, self.bp, location=e.location)
            e.parallel(b, self.extent[d], 1, image, True)

        batch_loop(top, 0)
        after = Builder.after(c.op)
        for buf in (None if per_image else self.bp, self.ap_all):
            if buf is not None:
                after.create(DeallocOp, buf, location=e.location)

    def column_parts(self) -> int:
        """How many parts the threads split each row block's columns into: where a static M
        is fewer row blocks than `row_blocks`, enough parts to make up that many, at most
        one per column tile."""
        c, s = self.c, self.s
        if not self.threads or not isinstance(self.blocks, int) or \
                self.blocks >= s.row_blocks:
            return 1
        n = c.static(c.n)
        parts = -(-s.row_blocks // self.blocks)
        return parts if n is None else max(1, min(parts, -(-min(n, s.nc) // s.nr)))

    def per_image(self) -> bool:
        """Whether the threads split the outer batch loop (a convolution's images) instead of
        the row blocks: where M, static, is one row block, so the row blocks alone would
        leave all threads but one idle."""
        c, s = self.c, self.s
        m = c.static(c.m)
        return self.threads and bool(c.batch) and m is not None and m <= s.mc

    def a_once(self) -> bool:
        """Whether A is packed once for the whole op, not per block: its factors use no
        batch dim (a convolution's filter, read again for every image) and all of it, static,
        fits in half of the L2."""
        c, s = self.c, self.s
        m, k = c.static(c.m), c.static(c.k)
        return bool(c.batch) and m is not None and k is not None and \
            not any(f.dims() & set(c.batch) for f in c.a) and \
            -(-m // s.mr) * s.mr * k * 4 <= self.l2_bytes // 2

    def row_blocks(self) -> tuple[Index, Index]:
        """(tiles, blocks): the register tiles of M (at least one: no block count of 0 where
        M is 0), and how many row blocks they are dealt into: the fewest whose tiles fit mc
        rows, rounded up to a multiple of `row_blocks` where threads split them (at most one
        block per tile). Index arithmetic at run time where M is dynamic."""
        e, s, b = self.e, self.s, self.top
        tiles = e.max(b, e.ceildiv(b, self.M, s.mr), 1)
        group = s.row_blocks if self.threads else 1
        rounds = e.ceildiv(b, tiles, s.mc // s.mr * group)
        return tiles, e.min(b, e.mul(b, rounds, group), tiles)

    def block_rows(self, b: Builder, block: Value) -> tuple[Index, Index]:
        """(first row, rows) of row block `block`: blocks start at tile block * tiles //
        blocks, so that they differ by at most one tile and a team whose size divides the
        block count gets shares that do too (128 rows, mr = 6: 8 blocks of 2 or 3 tiles, a
        team of two 11 tiles each, where blocks of at most 126 rows gave it 126 rows and 2)."""
        e, s = self.e, self.s

        def start(i: Index) -> Index:
            return e.div(b, e.mul(b, i, self.tiles), self.blocks)
        first = e.mul(b, start(block), s.mr)
        end = e.min(b, e.mul(b, start(e.add(b, block, 1)), s.mr), self.M)
        return first, e.sub(b, end, first)

    def a_readable(self) -> bool:
        """Whether the micro-kernel reads A where it lies (`a_rows`) instead of a packed
        panel: one factor, one M dim and one K dim, so that each tile row's address is
        made once per tile and steps by a constant along K (no index split per element),
        and consecutive k of a row within one cache line (A runs along K, or along M with
        rows closer than a line: a logits gradient's 10 classes).

        Packing A buys nothing the micro-kernel needs: it reads one A value per row and k
        step and broadcasts it, from wherever it lies; mr rows of a block are mr streams
        that stay in L1 and L2 across the column tiles as the packed panel would. The copy
        costs: a row-major A goes into the k-major panel by strided stores, which LLVM
        vectorizes into scatters (module docstring of passes/linalg_matmul_blis.py).

        Not so where A runs along M (a weight gradient's x^T): a tile's mr values at one k
        are side by side, and the next k's a row of x further on (3136 bytes for 784
        pixels), so each k step waits for a line the hardware prefetchers, which follow
        streams within a page, do not fetch ahead. Packed, the panel is one stream. The
        MLP 784-256-10 step at B = 1024, whose x^T @ dz took 2.85 ms of 5.8 on 1 thread
        (`Model.profile`), `.so` builds alternated, both orders, twice: 5.65 / 5.57 / 5.58
        / 5.49 -> 5.53 / 5.44 / 5.43 / 5.32 ms on 1 thread, 2.94 / 2.96 -> 2.80 / 2.92 on 2;
        B = 128, the CNN and the logistic regression unchanged."""
        c = self.c
        if not (len(c.a) == 1 and len(c.m) == 1 and len(c.k) == 1):
            return False
        f, k = c.a[0], c.k[0]
        if k in f.forms[-1][0]:
            return True
        layout = strides_and_offset(f.buffer.type)
        if layout is None:
            return False
        step = 0                                # elements between A's values at k and k + 1
        for (coefs, _), stride in zip(f.forms, layout[0]):
            if coefs.get(k):
                if stride is None:
                    return False
                step += coefs[k] * stride
        return abs(step) * f.buffer.type.element.width // 8 < CACHE_LINE

    def column_block(self, b: Builder, jc: Value) -> None:
        e, s = self.e, self.s
        nb = e.min(b, s.nc, e.sub(b, self.N, jc))

        def k_block(b2: Builder, pc: Value, _) -> None:
            kb = e.min(b2, s.kc, e.sub(b2, self.K, pc))

            def pack(b3: Builder) -> None:
                e.parallel(b3, e.ceildiv(b3, nb, s.nr), 1,
                           lambda b4, p: self.pack_b(b4, p, jc, pc, kb), self.threads)
            if self.b_choice is not None:
                e.if_(b2, self.b_choice, lambda b3: None, pack)
            elif not self.b_direct:
                pack(b2)
            parts = self.parts

            def item(b3: Builder, i: Value) -> None:       # part-major: a thread's items
                if parts == 1:                              # share their columns
                    self.row_block(b3, i, jc, pc, nb, kb)
                    return
                self.row_block(b3, e.rem(b3, i, self.blocks), jc, pc, nb, kb,
                               e.div(b3, i, self.blocks), parts)
            e.parallel(b2, e.mul(b2, self.blocks, parts), 1, item, self.threads)
        e.for_(b, 0, self.K, s.kc, k_block)

    # ----- packing ----------------------------------------------------------------------------

    def pack_b(self, b: Builder, p: Value, jc: Value, pc: Value, kb: Index) -> None:
        """Bp[p, k, j] = prod(B factors) at (pc + k, jc + p * nr + j), zero past N."""
        e, c, nr = self.e, self.c, self.s.nr
        n0 = e.add(b, jc, e.mul(b, p, nr))
        cols = e.min(b, nr, e.sub(b, self.N, n0))
        zero = e.fconst(b, 0.0, F32)

        def row(b2: Builder, k: Value, _) -> None:
            kdims = dict(self.ivs) | self.split(b2, e.add(b2, pc, k), c.k)

            def copy(b3: Builder, ndims: dict, n: Index) -> None:
                x = self.product(b3, c.b, kdims | ndims)
                j = e.v(e.sub(b3, n, n0))
                b3.create(StoreOp, x, self.bp, [p, k, j], location=e.location)

            def by_vectors(b3: Builder, ndims: dict, n: Index) -> None:
                self.copy_pieces(b3, c.b, kdims | ndims, c.n[-1], self.extent[c.n[-1]],
                                 self.bp, lambda o: [p, k, e.v(e.sub(b3, e.add(b3, n, o), n0))])
            # over the flat column itself, its offset in the panel `n - n0`: loop-vectorize
            # sees a lane index and `lane - c` (vector loads of a row-major B, stores to Bp)
            self.runs(b2, n0, cols, c.n, copy,
                      by_vectors if self.b_rows_contiguous() else None)
            e.for_(b2, cols, nr, 1, lambda b3, j, _: self.store(b3, zero, self.bp, [p, k, j]))
        e.for_(b, 0, kb, 1, row)

    def b_rows_contiguous(self) -> bool:
        """Whether B's panel can be packed a run of N's last dim at a time by vectors (a
        convolution's window row: `Blis.runs`' whole runs): N is several dims, the last of
        static extent, and every factor of B reads along it at stride 1 (its last index
        that dim plus what is fixed along the run, no other index using it)."""
        c = self.c
        return self.s.lanes > 1 and len(c.n) > 1 and isinstance(self.extent[c.n[-1]], int) \
            and all(along_rows(f, c.n[-1]) for f in c.b)

    def vector_product(self, b: Builder, factors: list[Factor], dims: dict[int, Index],
                       width: int) -> Value:
        """`product` of `width` consecutive elements along the factors' last index, from
        `dims`: one vector load each (`along_rows` factors)."""
        loc, value = self.e.location, None
        vec = VectorType((width,), F32)
        for f in factors:
            x = b.create(VectorLoadOp, f.buffer, [self.at(b, form, dims) for form in f.forms],
                         result_types=[vec], location=loc).result
            value = x if value is None else b.create(arith.MulFOp, value, x,
                                                     location=loc).result
        return value

    def b_choosable(self) -> bool:
        """Whether B may be read where it lies instead of packed (`direct_b_tiles`,
        `b_in_place`). Packing copies the K x N panel once to make every read of it
        contiguous; where M is a few register tiles, each B row feeds so few tiles that
        the copy costs more than it saves (the MLP 784-256-10 step's x @ w1, B=128: 1.20
        ms packed, 1.17 direct; B=1024: 10.5 and 11.1; the weight gradient dz^T @ x of a
        logistic regression whose w is [10, 784], M = 10 classes: dot.py's "B where it
        lies")."""
        return b_in_place(self.c, self.s.lanes, self.direct_b_tiles)

    def pack_a(self, b: Builder, ap: Value, ic: Value, pc: Value, mb: Index,
               kb: Index) -> None:
        """Ap[q, k, r] = prod(A factors) at (ic + q * mr + r, pc + k), zero past M."""
        e, c, mr = self.e, self.c, self.s.mr
        zero = e.fconst(b, 0.0, F32)

        m = c.static(c.m)

        def panel(b2: Builder, q: Value, _) -> None:
            m0 = e.add(b2, ic, e.mul(b2, q, mr))
            # blocks start at whole tiles, so with M a multiple of mr every panel is whole
            rows = mr if m is not None and m % mr == 0 else \
                e.min(b2, mr, e.sub(b2, self.M, m0))

            def element(b4: Builder, r: Value, flat: Index, dims: dict) -> None:
                x = self.product(b4, c.a, dims)
                b4.create(StoreOp, x, ap, [q, e.v(e.sub(b4, flat, pc)), r],
                          location=e.location)

            if self.a_rows_contiguous():     # k outer: each step copies mr adjacent floats
                def step(b3: Builder, kdims: dict, flat: Index) -> None:
                    e.for_(b3, 0, rows, 1, lambda b4, r, _: element(
                        b4, r, flat, kdims | self.split(b4, e.add(b4, m0, r), c.m)))

                def by_pieces(b3: Builder) -> None:
                    e.for_(b3, 0, kb, 1,
                           lambda b4, k, _: self.copy_a_step(b4, ap, q, m0, pc, k))

                def by_floats(b3: Builder) -> None:
                    self.runs(b3, pc, kb, c.k, lambda b4, kdims, flat: step(
                        b4, dict(self.ivs) | kdims, flat))
                if isinstance(rows, int):
                    by_pieces(b2) if rows == mr else by_floats(b2)
                else:                        # whole panels by vectors, the last by floats
                    e.if_(b2, e.eq(b2, rows, mr), by_pieces, by_floats)
            else:                            # r outer: each row read along K
                def row(b3: Builder, r: Value, _) -> None:
                    mdims = dict(self.ivs) | self.split(b3, e.add(b3, m0, r), c.m)
                    self.runs(b3, pc, kb, c.k, lambda b4, kdims, flat: element(
                        b4, r, flat, mdims | kdims))
                e.for_(b2, 0, rows, 1, row)
            e.for_(b2, rows, mr, 1, lambda b3, r, _: e.for_(
                b3, 0, kb, 1, lambda b4, k, _: self.store(b4, zero, ap, [q, k, r])))
        e.for_(b, 0, e.ceildiv(b, mb, mr), 1, panel)

    def copy_a_step(self, b: Builder, ap: Value, q: Value, m0: Index, pc: Value,
                    k: Value) -> None:
        """Ap[q, k, :] = A's mr adjacent floats at rows m0.. and step pc + k, A's one factor
        contiguous along its M dim (`a_rows_contiguous`): by vectors of widths that add up
        to mr (6: 4 and 2), one load and one store each, where float by float LLVM made a
        loop of scalar copies: with A packed (`direct-a=false`), the MLP 784-256-10 step at
        B=1024 (1 thread, alternated, median) 9.06 ms against 8.90 by vectors; A read where
        it lies, the default, 8.81."""
        e, c = self.e, self.c
        dims = dict(self.ivs) | self.split(b, e.add(b, pc, k), c.k) | {c.m[0]: m0}
        self.copy_pieces(b, c.a, dims, c.m[0], self.s.mr, ap,
                         lambda offset: [e.v(q), e.v(k), e.v(offset)])

    def copy_pieces(self, b: Builder, factors: list[Factor], dims: dict[int, Index],
                    dim: int, count: int, dest: Value, where) -> None:
        """The factors' product at `dims` and the next `count - 1` values of `dim`, stored
        into `dest` at `where(offset)`, by pieces whose widths add up to `count`
        (`power_of_two_pieces`: 12 as 8 and 4), a vector load of each factor and one store
        each, a width of 1 a scalar. The factors read along `dim` at stride 1 (`along_rows`)."""
        e, offset = self.e, 0
        for width in power_of_two_pieces(count, self.s.lanes):
            at = dims | {dim: e.add(b, dims[dim], offset)}
            if width == 1:
                b.create(StoreOp, self.product(b, factors, at), dest, where(offset),
                         location=e.location)
            else:
                b.create(VectorStoreOp, self.vector_product(b, factors, at, width), dest,
                         where(offset), location=e.location)
            offset += width

    def a_rows_contiguous(self) -> bool:
        """Whether A's one factor has its one M dim as the last index, at stride 1 in memory
        and nowhere else (the transposed activations of a weight gradient, x^T @ dz): a
        panel is then packed k by k, mr adjacent floats each, instead of row by row down
        strided columns (a cache line per element)."""
        c = self.c
        return len(c.a) == 1 and len(c.m) == 1 and contiguous_along(c.a[0], c.m[0])

    def store(self, b: Builder, value: Value, buf: Value, indices: list) -> None:
        b.create(StoreOp, value, buf, [self.e.v(i) for i in indices], location=self.e.location)

    # ----- the register tiles -----------------------------------------------------------------

    def row_block(self, b: Builder, block: Value, jc: Value, pc: Value, nb: Index,
                  kb: Index, part: Index = 0, parts: int = 1) -> None:
        e, s = self.e, self.s
        ic, mb = self.block_rows(b, block)
        scratch = e.alloc(b, (s.mr, s.nr))
        #: the tile's f32 sums column after column, for `final_by_columns`
        self.columns_scratch = e.alloc(b, (s.nr * s.mr,)) if self.by_columns() else None
        tile_acc = None
        if self.ep is not None and self.waits in (TILE, BLOCKS):       # by columns too
            shape = (s.mr, s.nr) if self.columns_scratch is None else (s.nr * s.mr,)
            tile_acc = b.create(AllocOp, [], result_types=[
                MemRefType(shape, self.c.c.type.element)], location=e.location).result
        ap, q0, ak = None, 0, 0
        if self.ap_all is not None:
            ap, q0, ak = self.ap_all, e.div(b, ic, s.mr), pc
        elif not self.a_direct:
            ap, q0, ak = e.alloc(b, (s.mc // s.mr, s.kc, s.mr)), 0, 0
            self.pack_a(b, ap, ic, pc, mb, kb)

        def column(b2: Builder, p: Value, _) -> None:
            def tile(b3: Builder, q: Value, _) -> None:
                m0 = e.add(b3, ic, e.mul(b3, q, s.mr))
                n0 = e.add(b3, jc, e.mul(b3, p, s.nr))
                a_at = self.a_rows(b3, m0, pc) if ap is None else \
                    self.a_panel(ap, e.v(e.add(b3, q0, q)), ak)
                b_at = self.b_cols(b3, n0, pc) if self.b_direct else self.b_panel(p)
                if self.b_choice is not None:       # both: `kernel` picks at run time
                    b_at = (self.b_cols(b3, n0, pc), b_at)

                thin = self.thin_rows_at(b3, m0, ap, q0, ak, q, pc)

                def chunk(b4: Builder, k0: Index, _) -> None:
                    k1 = e.min(b4, kb, e.add(b4, k0, s.chunk))
                    accs = self.kernel(b4, a_at, b_at, k0, k1) if thin is None else \
                        self.thin(b4, thin, a_at, b_at, k0, k1, scratch)
                    accs = self.scale_rows(b4, accs, m0)
                    tile = (accs, scratch, m0, n0)
                    if self.columns_scratch is not None:    # once for every store below
                        self.transpose_tile(b4, accs)
                    if self.ep is None:
                        self.partial(b4, tile, pc, k0)
                    elif self.waits == NOWHERE:
                        self.final(b4, tile, [])
                    elif self.waits == TILE:
                        e.if_(b4, e.eq(b4, k1, kb),
                              lambda b5: self.final(b5, tile, [(tile_acc, None)]),
                              lambda b5: e.if_(b5, e.eq(b5, k0, 0),
                                               lambda b6: self.add_tile(b6, accs, tile_acc,
                                                                        False),
                                               lambda b6: self.add_tile(b6, accs, tile_acc,
                                                                        True)))
                    else:
                        self.block_step(b4, tile, tile_acc, pc, k0, k1, kb)
                if s.chunk >= s.kc:
                    chunk(b3, 0, [])
                else:
                    e.for_(b3, 0, kb, s.chunk, chunk)
            e.for_(b2, 0, e.ceildiv(b2, mb, s.mr), 1, tile)
        ntiles = e.ceildiv(b, nb, s.nr)
        e.for_(b, e.div(b, e.mul(b, part, ntiles), parts),
               e.div(b, e.mul(b, e.add(b, part, 1), ntiles), parts), 1, column)
        b.create(DeallocOp, scratch, location=e.location)
        if self.columns_scratch is not None:
            b.create(DeallocOp, self.columns_scratch, location=e.location)
        if tile_acc is not None:
            b.create(DeallocOp, tile_acc, location=e.location)
        if ap is not None and self.ap_all is None:
            b.create(DeallocOp, ap, location=e.location)

    def a_panel(self, ap: Value, q: Value, ak: Index):
        """A's value at tile row `r` and step `k` of the micro-kernel, packed:
        Ap[q, ak + k, r]."""
        def at(b: Builder, k: Value, r: int) -> Value:
            return b.create(LoadOp, ap, [q, self.e.v(self.e.add(b, ak, k)), self.e.v(r)],
                            location=self.e.location).result
        return at

    def tile_rows(self, b: Builder, m0: Value) -> list[dict[int, Index]]:
        """The M dims of each row of the tile at `m0`, rows past M clamped to row M - 1
        (their sums are never stored; what is read for them stays in bounds)."""
        e, c, s = self.e, self.c, self.s
        m = c.static(c.m)
        last = None if m is not None and m % s.mr == 0 else e.sub(b, self.M, 1)
        return [self.split(b, e.add(b, m0, r) if last is None else
                           e.min(b, e.add(b, m0, r), last), c.m) for r in range(s.mr)]

    def a_rows(self, b: Builder, m0: Value, pc: Value):
        """A's value at tile row `r` and step `k`, read from A itself (`a_direct`) at the
        tile's rows (`tile_rows`), each row's index made once per tile, before the k loop."""
        e, c = self.e, self.c
        rows = self.tile_rows(b, m0)

        def at(b2: Builder, k: Value, r: int) -> Value:
            dims = dict(self.ivs) | rows[r] | self.split(b2, e.add(b2, pc, k), c.k)
            return self.product(b2, c.a, dims)
        return at

    def b_panel(self, p: Value):
        """B's vector `j` of the tile at step `k`, packed: Bp[p, k, j * lanes]."""
        def at(b: Builder, k: Value, j: int) -> Value:
            return b.create(VectorLoadOp, self.bp, [p, k, self.e.v(j * self.s.lanes)],
                            result_types=[self.vec], location=self.e.location).result
        return at

    def b_cols(self, b: Builder, n0: Value, pc: Value):
        """B's vector `j` of the tile at step `k`, read from B itself (`b_readable`): a
        vector past N reads the last whole one instead (its sums are never stored), each
        vector's column made once per tile."""
        e, c, s = self.e, self.c, self.s
        n, f = c.static(c.n), c.b[0]
        last = None if n % s.nr == 0 else n - s.lanes
        cols = [e.add(b, n0, j * s.lanes) for j in range(s.nr // s.lanes)]
        cols = [x if last is None else e.min(b, x, last) for x in cols]

        def at(b2: Builder, k: Value, j: int) -> Value:
            dims = self.split(b2, e.add(b2, pc, k), c.k) | {c.n[0]: cols[j]}
            return b2.create(VectorLoadOp, f.buffer, [self.at(b2, form, dims)
                                                      for form in f.forms],
                             result_types=[self.vec], location=e.location).result
        return at

    def kernel(self, b: Builder, a_at, b_at, k0: Index, k1: Index,
               rows: int | None = None) -> list[Value]:
        """The mr x nr tile of A (`a_at(builder, k, r)`: its value at row r of the tile and
        step k of the block) times B's (`b_at(builder, k, j)`: its vector j at step k) over
        k0 <= k < k1: mr * nv vector accumulators from zero (`rows` * nv for a tile of
        `rows` rows). A pair `b_at` (B where it lies, B packed) is two k loops, the one
        `b_choice` says run: one `loop.if`, each branch with its own addressing (a stride
        the loop knows), the tile's stores shared."""
        e, s, loc = self.e, self.s, self.e.location
        rows = s.mr if rows is None else rows
        if isinstance(b_at, tuple):
            direct, packed = b_at
            return e.if_(b, self.b_choice,
                         lambda inner: self.kernel(inner, a_at, direct, k0, k1, rows),
                         lambda inner: self.kernel(inner, a_at, packed, k0, k1, rows),
                         [self.vec] * (rows * s.nr // s.lanes))
        nv = s.nr // s.lanes
        zero = b.create(BroadcastOp, e.fconst(b, 0.0, F32), result_types=[self.vec],
                        location=loc).result

        def step(b2: Builder, k: Value, accs: list[Value]) -> list[Value]:
            bs = [b_at(b2, k, j) for j in range(nv)]
            out = []
            for r in range(rows):
                xv = b2.create(BroadcastOp, a_at(b2, k, r), result_types=[self.vec],
                               location=loc).result
                out += [self.multiply_add(b2, xv, bs[j], accs[r * nv + j])
                        for j in range(nv)]
            return out
        return e.for_(b, k0, k1, 1, step, [zero] * (rows * nv))

    def thin_rows_at(self, b: Builder, m0: Value, ap: Value | None, q0: Index, ak: Index,
                     q: Value, pc: Value):
        """(rows of the tile at `m0` inside M, `row(builder, r)`: A's values along k at
        the tile's row r, as `a_at` gives them) where the tile may be thin: `thin_rows`;
        M dynamic or its last tile less than half full (a static M's full tiles are never
        thin: no second kernel is built for them); and K dynamic or at least
        `THIN_MIN_K`, where the rows spared are worth the kernel's compile time (the MLP's
        dz @ w2^T, K = 10, would spare a batch of one 0.06 us). None otherwise."""
        e, c, s = self.e, self.c, self.s
        m, k = c.static(c.m), c.static(c.k)
        if not self.thin_rows or s.mr < 3 or (k is not None and k < THIN_MIN_K) or \
                (m is not None and not 0 < 2 * (m % s.mr) < s.mr):
            return None
        inside = e.min(b, s.mr, e.sub(b, self.M, m0))

        def row(b2: Builder, r: Value):
            if ap is not None:          # packed: the panel's column r
                panel = self.a_panel(ap, e.v(e.add(b2, q0, q)), ak)
                return lambda b3, k, _: panel(b3, k, r)
            dims = dict(self.ivs) | self.split(b2, e.add(b2, m0, r), c.m)

            def direct(b3: Builder, k: Value, _) -> Value:
                return self.product(b3, c.a, dims | self.split(b3, e.add(b3, pc, k), c.k))
            return direct
        return inside, row

    def thin(self, b: Builder, thin: tuple, a_at, b_at, k0: Index, k1: Index,
             scratch: Value) -> list[Value]:
        """The tile's sums, as `kernel` gives them, where fewer than half its rows are
        inside M computed for those rows alone, by pairs. `kernel` computes all mr rows
        (those past M read row M - 1 and are never stored): a batch of one ran 6 times the
        multiply-adds of its one row. A thin tile instead runs a two-row kernel per pair of
        its rows inside M, an odd last row paired with itself, each row's nv vectors
        stored into `scratch` (mr x nr) and the tile's mr * nv loaded back (rows past M as
        row M - 1, what `kernel` gives them). One kernel more, not one per row count: at a
        batch of one the pair's kernel on the row twice took 13.0 us for the MLP's x @ w1,
        a one-row kernel 12-13 (both bound by B's rows streaming from L2), and each kernel
        is LLVM's time at every cold compile. B is read once per pair, not once per tile,
        which is why a tile half full keeps `kernel`."""
        e, s, loc = self.e, self.s, self.e.location
        inside, row = thin
        nv = s.nr // s.lanes
        few = e.lt(b, e.mul(b, inside, 2), s.mr)
        last = e.sub(b, inside, 1)
        # B where it lies, where the nest may read it so (`b_choice`): valid whether or not
        # this call packed it, and one pair kernel, not one per way of reading B
        thin_b = b_at[0] if isinstance(b_at, tuple) else b_at

        def pair(b2: Builder, r: Value, _) -> None:
            picks = [r, e.v(e.min(b2, e.add(b2, r, 1), last))]
            reads = [row(b2, x) for x in picks]
            sums = self.kernel(b2, lambda b3, k, i: reads[i](b3, k, i), thin_b, k0, k1, 2)
            for i, x in enumerate(picks):
                for j in range(nv):
                    b2.create(VectorStoreOp, sums[i * nv + j], scratch, [x, e.v(j * s.lanes)],
                              location=loc)

        def by_pairs(b2: Builder) -> list[Value]:
            e.for_(b2, 0, inside, 2, pair)
            return [b2.create(VectorLoadOp, scratch, [e.v(e.min(b2, r, last)),
                                                      e.v(j * s.lanes)],
                              result_types=[self.vec], location=loc).result
                    for r in range(s.mr) for j in range(nv)]
        return e.if_(b, few, by_pairs, lambda b2: self.kernel(b2, a_at, b_at, k0, k1),
                     [self.vec] * (s.mr * nv))

    def scale_rows(self, b: Builder, accs: list[Value], m0: Value) -> list[Value]:
        """The tile's sums times A's row factors (`row_factors`) at each row, before
        anything adds them anywhere: `s[m] * sum_k a[m, k] b[k, n]`, the sum of the
        products (rounded differently: the scale once per chunk, not per product). Rows
        past M read row M - 1 (`tile_rows`; their sums are never stored)."""
        if not self.row_factors:
            return accs
        loc = self.e.location
        nv = len(accs) // self.s.mr
        out = list(accs)
        for r, row in enumerate(self.tile_rows(b, m0)):
            dims = dict(self.ivs) | row
            x = b.create(BroadcastOp, self.product(b, self.row_factors, dims),
                         result_types=[self.vec], location=loc).result
            for j in range(nv):
                out[r * nv + j] = b.create(arith.MulFOp, out[r * nv + j], x,
                                           location=loc).result
        return out

    def partial(self, b: Builder, tile: tuple, pc: Value, k0: Index) -> None:
        """Add a tile's sums into C (store them, in the first K step where the fill was
        folded)."""
        e = self.e
        if not self.overwrite:
            self.update(b, *tile, add=True)
            return
        first = e.eq(b, e.add(b, pc, k0), 0)
        e.if_(b, first, lambda b2: self.update(b2, *tile, add=False),
              lambda b2: self.update(b2, *tile, add=True))

    def block_step(self, b: Builder, tile: tuple, tile_acc: Value, pc: Value, k0: Index,
                   k1: Index, kb: Index) -> None:
        """A chunk of a tile whose sums wait block by block (`BLOCKS`): a block's chunks
        add up in the per-tile buffer; at a block's last chunk they go into C (stored in the
        first block where the zero fill was folded), or, in the last block, through the
        epilogue with C's earlier blocks. C is read and written once per block, not per
        chunk, and not at all where K is one block: the weight gradients' K, the batch, is
        dynamic, and their f64 accumulator's round trips had cost a matmul with dynamic K
        6% of its speed (1024^3: 99 GFLOP/s, 105 where K was static and one block).

        Where all of K turns out one chunk at run time (a batch of at most `chunk`, as
        the logistic regression's 100), nothing waits at the last chunk: a `final` of its
        own, with nothing to add, passes the float32 sums to the epilogue widened and no
        more, and LLVM folds the widening into the epilogue's truncation back to float32.
        The `final` that adds what may wait had carried every sum through f64 and two
        `loop.if`s, a `vector<16xf64>` pair of registers per vector of the tile's sums: the
        logistic regression's step (B = 100, 1 thread, both builds in one process, medians
        of 20 alternated rounds) took 23.65 us against 24.11 (a loaded round; with
        `lane_sums` and the dot nest's output `narrowed` as well, 21.14 against 22.31)."""
        e = self.e
        accs = tile[0]
        earlier_chunks = e.lt(b, 0, k0)
        earlier_blocks = e.lt(b, 0, pc) if self.overwrite else None

        def inner(b2: Builder) -> None:
            e.if_(b2, earlier_chunks, lambda b3: self.add_tile(b3, accs, tile_acc, True),
                  lambda b3: self.add_tile(b3, accs, tile_acc, False))

        def block_end(b2: Builder) -> None:
            last = e.eq(b2, e.add(b2, pc, kb), self.K)
            waiting = [(tile_acc, earlier_chunks), (self.c.c, earlier_blocks)]

            def last_block(b3: Builder) -> None:
                if earlier_blocks is None:          # C's own value always waits
                    self.final(b3, tile, waiting)
                    return
                earlier = b3.create(arith.OrIOp, earlier_chunks, earlier_blocks,
                                    location=e.location).result
                e.if_(b3, earlier, lambda b4: self.final(b4, tile, waiting),
                      lambda b4: self.final(b4, tile, []))
            e.if_(b2, last, last_block,
                  lambda b3: self.final(b3, tile, waiting, into_c=True))
        e.if_(b, e.eq(b, k1, kb), block_end, inner)

    def plus_waiting(self, b: Builder, x: Value, t, buffer: Value, idx: list[Value],
                     when: Value | None) -> Value:
        """`x` plus `buffer` at `idx` (a value of type `t`: a vector or C's element), read
        only where `when` holds at run time (None: always): a `loop.if` yielding the sum,
        so that nothing is read where nothing waits."""
        loc = self.e.location

        def added(b2: Builder) -> list[Value]:
            old = b2.create(LoadOp, buffer, idx, location=loc).result \
                if not isinstance(t, VectorType) else \
                b2.create(VectorLoadOp, buffer, idx, result_types=[t], location=loc).result
            return [b2.create(arith.AddFOp, old, x, location=loc).result]
        if when is None:
            return added(b)[0]
        return self.e.if_(b, when, added, lambda b2: [x], [t])[0]

    def add_tile(self, b: Builder, accs: list[Value], tile_acc: Value, add: bool) -> None:
        """The per-tile buffer (+)= a chunk's sums, all of it: no edges in a tile's own.
        `by_columns`, the buffer holds the tile column after column, as `final_by_columns`
        reads it (`flat`: as one run, by whole vectors: nr is a multiple of the lanes)."""
        e, s, loc = self.e, self.s, self.e.location
        if self.flat:                                   # the same run as `final_flat`'s
            t = VectorType((s.lanes,), tile_acc.type.element)

            def lanes(b2: Builder, f: Value, _) -> None:
                x = self.widen(b2, b2.create(VectorLoadOp, self.columns_scratch, [f],
                                             result_types=[self.vec], location=loc).result, t)
                if add:
                    x = self.plus_waiting(b2, x, t, tile_acc, [f], None)
                b2.create(VectorStoreOp, x, tile_acc, [f], location=loc)
            e.for_(b, 0, s.nr * s.mr, s.lanes, lanes)
            return
        if self.columns_scratch is not None:            # transposed by `row_block`
            col_t = VectorType((s.mr,), tile_acc.type.element)

            def column(b2: Builder, j: Value, _) -> None:
                idx, x = self.scratch_column(b2, j, col_t)
                if add:
                    x = self.plus_waiting(b2, x, col_t, tile_acc, idx, None)
                b2.create(VectorStoreOp, x, tile_acc, idx, location=loc)
            e.for_(b, 0, s.nr, 1, column)
            return
        t = VectorType((s.lanes,), tile_acc.type.element)
        for i, acc in enumerate(accs):
            idx = [e.v(i // (s.nr // s.lanes)), e.v(i % (s.nr // s.lanes) * s.lanes)]
            new = self.widen(b, acc, t)
            if add:
                new = self.plus_waiting(b, new, t, tile_acc, idx, None)
            b.create(VectorStoreOp, new, tile_acc, idx, location=loc)

    def final(self, b: Builder, tile: tuple, waiting: list[tuple[Value, Value | None]],
              into_c: bool = False) -> None:
        """The last K step of a tile: its sums, plus those `waiting` ((buffer, run-time
        condition or None: always), each added where its condition holds: the per-tile
        buffer, C's accumulator, both or none), through the epilogue into its outputs,
        from `scratch` over the tile's valid part (`each_point`: one vector and one scalar
        copy of the epilogue, where unrolled over the tile's vectors it was mr * nr / lanes
        copies of each, most of a model's code; the scratch round trip is once per tile).
        `into_c`: stored into C instead, for a later K block to add to (`BLOCKS`)."""
        if self.columns_scratch is not None:
            self.final_by_columns(b, tile, waiting, into_c)
            return
        accs, scratch, m0, n0 = tile
        e, s, c, loc = self.e, self.s, self.c, self.e.location
        elem = c.c.type.element

        def summed(b2: Builder, x: Value, r: Index, j: Index, t) -> Value:
            """`x` (f32 sums at tile row `r`, column `j`) widened, plus what waits there."""
            x = self.widen(b2, x, t)
            for buffer, when in waiting:
                idx = [e.v(r), e.v(j)] if buffer is not c.c else \
                    self.c_index(b2, e.add(b2, m0, r), e.add(b2, n0, j))
                x = self.plus_waiting(b2, x, t, buffer, idx, when)
            return x

        def point(b2: Builder, r: Index, j: Index) -> dict:
            return dict(self.ivs) | self.split(b2, e.add(b2, m0, r), c.m) | \
                self.split(b2, e.add(b2, n0, j), c.n)

        def out(b2: Builder, v: Value, r: Value, j: Value, width: int) -> None:
            if not into_c:
                epilogues.apply(self.ep, self, b2, v, point(b2, r, j), width)
                return
            idx = self.c_index(b2, e.add(b2, m0, r), e.add(b2, n0, j))
            b2.create(VectorStoreOp if isinstance(v.type, VectorType) else StoreOp, v, c.c,
                      idx, location=loc)

        def vector(b2: Builder, r: Value, j: Value) -> None:
            x = b2.create(VectorLoadOp, scratch, [r, j], result_types=[self.vec],
                          location=loc).result
            out(b2, summed(b2, x, r, j, VectorType((s.lanes,), elem)), r, j, s.lanes)

        def scalar(b2: Builder, r: Value, j: Value) -> None:
            x = b2.create(LoadOp, scratch, [r, j], location=loc).result
            out(b2, summed(b2, x, r, j, elem), r, j, 1)

        self.spill(b, accs, scratch)
        self.each_point(b, *self.valid(b, m0, n0), vector, scalar)

    def by_columns(self) -> bool:
        """Whether a tile's final store runs by C's rows as vectors (`final_by_columns`): C
        `transposed` (its last index is M's), M static and whole tiles of it, an epilogue
        that can run on vectors along M."""
        c, s = self.c, self.s
        m = c.static(c.m)
        return c.transposed and self.ep is not None and m is not None and m % s.mr == 0 and \
            s.mr > 1 and len(c.m) == 1 and epilogues.vector_ok(self.ep, c, along=c.m)

    def final_by_columns(self, b: Builder, tile: tuple, waiting: list[tuple[Value, Value | None]],
                         into_c: bool) -> None:
        """`final` where C is `transposed` (`by_columns`): C[n0 + j, m0 : m0 + mr], the
        tile's column j, is mr consecutive elements. The tile, transposed in registers once
        per chunk (`transpose_tile`, by `row_block`, whichever store follows), is read
        column by column: each valid column one vector of mr, widened, plus what waits (in
        the per-tile buffer, which holds columns too, and in C), through the epilogue (or
        into C). Element by element, C's rows innermost, the logistic regression's weight
        gradient spent a third of its time in its scalar epilogue."""
        if self.flat:
            self.final_flat(b, tile, waiting, into_c)
            return
        _, _, m0, n0 = tile
        e, s, c, loc = self.e, self.s, self.c, self.e.location
        col_t = VectorType((s.mr,), c.c.type.element)

        def column(b2: Builder, j: Value, _) -> None:
            at, x = self.scratch_column(b2, j, col_t)
            idx = self.c_index(b2, m0, e.add(b2, n0, j))
            for buffer, when in waiting:
                x = self.plus_waiting(b2, x, col_t, buffer, idx if buffer is c.c else at, when)
            if into_c:
                b2.create(VectorStoreOp, x, c.c, idx, location=loc)
                return
            dims = dict(self.ivs) | self.split(b2, m0, c.m) | \
                self.split(b2, e.add(b2, n0, j), c.n)
            epilogues.apply(self.ep, self, b2, x, dims, s.mr, along=c.m[0])
        e.for_(b, 0, self.valid(b, m0, n0)[1], 1, column)

    def collapse_flat(self) -> None:
        """`collapsed`: C and each buffer the epilogue indexes by M and N, its last two dims
        merged (`memory.collapse_shape`), before the nest."""
        c, loc = self.c, self.e.location
        wanted = [c.c] + [buf for m in self.ep.members
                          for buf, is_acc, forms in zip(m.op.structured_operands(), m.is_acc,
                                                        m.forms)
                          if not is_acc and any(c.m[0] in f[0] for f in forms)]
        for buf in wanted:
            if buf not in self.collapsed:
                self.collapsed[buf] = self.top.create(
                    CollapseShapeOp, buf, reassociation=reassociation_attr(
                        epilogues.flat_groups(buf.type.rank)), location=loc).result

    def final_flat(self, b: Builder, tile: tuple, waiting: list[tuple[Value, Value | None]],
                   into_c: bool) -> None:
        """`final_by_columns` where the tile spans all of M (`flat`): its valid columns,
        `cols` x M elements of C from C[n0, 0] on, are one run in C and in each buffer the
        epilogue indexes by M and N (`epilogue.flat_ok`), as they are in the transposed
        tile. So the run goes by whole vectors (N, static, is whole vectors, so the valid
        columns are, `flat`), each the transposed tile's sums, widened, plus what waits (the
        per-tile buffer at the same place in the run; C, collapsed, at the run's place in
        C), through the epilogue (or into C)."""
        _, _, m0, n0 = tile
        e, s, c, loc = self.e, self.s, self.c, self.e.location
        count = e.mul(b, self.valid(b, m0, n0)[1], s.mr)
        start = e.mul(b, n0, s.mr)
        flat_c = self.collapsed[c.c]
        batch = [self.at(b, f, self.ivs) for f in c.c_forms[:-2]]

        def run(b2: Builder, f: Value, _) -> None:
            at_c = batch + [e.v(e.add(b2, start, f))]
            t = VectorType((s.lanes,), c.c.type.element)
            x = b2.create(VectorLoadOp, self.columns_scratch, [f], result_types=[self.vec],
                          location=loc).result
            x = self.widen(b2, x, t)
            for buffer, when in waiting:
                x = self.plus_waiting(b2, x, t, flat_c if buffer is c.c else buffer,
                                      at_c if buffer is c.c else [f], when)
            if into_c:
                b2.create(VectorStoreOp, x, flat_c, at_c, location=loc)
                return
            epilogues.apply(self.ep, self, b2, x, dict(self.ivs), s.lanes,
                            flat=(self.collapsed, at_c[-1]))
        e.for_(b, 0, count, s.lanes, run)

    def scratch_column(self, b: Builder, j: Value, t: VectorType) -> tuple[list, Value]:
        """([index], vector) of the transposed tile's column `j` in `columns_scratch`
        (`transpose_tile`): its mr float32 sums, widened to `t`."""
        e, s = self.e, self.s
        at = [e.v(e.mul(b, j, s.mr))]
        x = b.create(VectorLoadOp, self.columns_scratch, at,
                     result_types=[VectorType((s.mr,), F32)], location=e.location).result
        return at, self.widen(b, x, t)

    def transpose_tile(self, b: Builder, accs: list[Value]) -> None:
        """The tile's float32 sums into `columns_scratch` column after column, by
        registers: per group of `lanes` columns, the mr row vectors laid end to end and
        interleaved by one `vector.shuffle` (LLVM's permutes), stored by one vector store.
        In float32, before any widening (half the bytes an f64 tile's shuffles move), and
        once per chunk for whichever of the four stores follows (`row_block`): transposed
        before each, examples/mlp.irk's LLVM code generation took 238 ms, 199 once (182
        with the tile stored element by element)."""
        e, s, loc = self.e, self.s, self.e.location
        nv = s.nr // s.lanes
        mask = DenseArrayAttr(I64, [r * s.lanes + j for j in range(s.lanes) for r in range(s.mr)])
        for v in range(nv):
            joined = end_to_end(b, [accs[r * nv + v] for r in range(s.mr)], loc)
            by_cols = b.create(ShuffleOp, joined, joined, mask=mask,
                               result_types=[joined.type], location=loc).result
            b.create(VectorStoreOp, by_cols, self.columns_scratch, [e.v(v * s.lanes * s.mr)],
                     location=loc)

    def valid(self, b: Builder, m0: Value, n0: Value) -> tuple[Index, Index]:
        """(rows, cols) of the tile at (m0, n0) inside M x N: each the tile's own size
        (an int) where the static sizes say that every tile is whole that way."""
        e, c = self.e, self.c

        def size(group: list[int], tile: int, extent: Index, at: Value) -> Index:
            static = c.static(group)
            if static is not None and static % tile == 0:
                return tile
            return e.min(b, tile, e.sub(b, extent, at))
        return size(c.m, self.s.mr, self.M, m0), size(c.n, self.s.nr, self.N, n0)

    def spill(self, b: Builder, accs: list[Value], scratch: Value) -> None:
        """The accumulators into `scratch` (mr x nr), for a loop over the tile to read."""
        e, s = self.e, self.s
        nv = s.nr // s.lanes
        for i, acc in enumerate(accs):
            b.create(VectorStoreOp, acc, scratch, [e.v(i // nv), e.v(i % nv * s.lanes)],
                     location=e.location)

    def each_point(self, b: Builder, rows: Index, cols: Index, vector, scalar) -> None:
        """`vector(b, r, j)` at each whole vector of the tile's first `rows` x `cols`
        (from its corner), `scalar(b, r, j)` at each column past the last whole one. Where
        C is `transposed`, `scalar` at every point, rows innermost: C's rows run along M, so
        the stores are consecutive (by columns, LLVM vectorized them into scatters, which
        took a fifth of the logistic regression's weight gradient)."""
        e, s = self.e, self.s
        if self.c.transposed:
            e.for_(b, 0, cols, 1, lambda b2, j, _: e.for_(
                b2, 0, rows, 1, lambda b3, r, _: scalar(b3, r, j)))
            return
        n = self.c.static(self.c.n)
        split = 0 if n is not None and n < s.lanes else \
            e.sub(b, cols, e.rem(b, cols, s.lanes))

        def row(b2: Builder, r: Value, _) -> None:
            if split != 0:
                e.for_(b2, 0, split, s.lanes, lambda b3, j, _: vector(b3, r, j))
            if split is not cols:
                e.for_(b2, split, cols, 1, lambda b3, j, _: scalar(b3, r, j))
        e.for_(b, 0, rows, 1, row)

    def update(self, b: Builder, accs: list[Value], scratch: Value, m0: Value,
               n0: Value, add: bool) -> None:
        """C[m0:m0+mr, n0:n0+nr] (+)= the tile (`add`: C's old value is added to, else
        overwritten): all vectors, unrolled, when the tile lies within M x N (the hot
        path: every K chunk of a large matmul); else from `scratch` over its valid part
        (`each_point`)."""
        e, s, c, loc = self.e, self.s, self.c, self.e.location
        nv = s.nr // s.lanes
        ctype = c.c.type.element
        cvec = VectorType((s.lanes,), ctype)

        def store(b2: Builder, new: Value, idx: list[Value], t) -> None:
            new = self.widen(b2, new, t)
            if add:
                new = self.plus_waiting(b2, new, t, c.c, idx, None)
            b2.create(VectorStoreOp if isinstance(t, VectorType) else StoreOp, new, c.c, idx,
                      location=loc)

        def whole(b2: Builder) -> None:
            for r in range(s.mr):
                row = self.c_index(b2, e.add(b2, m0, r), n0)
                for j in range(nv):
                    idx = row[:-1] + [e.v(e.add(b2, row[-1], j * s.lanes))]
                    store(b2, accs[r * nv + j], idx, cvec)

        def point(b2: Builder, r: Value, j: Value, load, t) -> None:
            store(b2, load(b2, r, j), self.c_index(b2, e.add(b2, m0, r), e.add(b2, n0, j)), t)

        def edges(b2: Builder) -> None:
            self.spill(b2, accs, scratch)
            self.each_point(
                b2, rows, cols,
                lambda b3, r, j: point(b3, r, j, lambda b4, r, j: b4.create(
                    VectorLoadOp, scratch, [r, j], result_types=[self.vec],
                    location=loc).result, cvec),
                lambda b3, r, j: point(b3, r, j, lambda b4, r, j: b4.create(
                    LoadOp, scratch, [r, j], location=loc).result, ctype))

        rows, cols = self.valid(b, m0, n0)
        m, n = c.static(c.m), c.static(c.n)
        whole_if = [e.eq(b, x, tile) for x, tile in ((rows, s.mr), (cols, s.nr))
                    if not isinstance(x, int)]
        if c.transposed:
            edges(b)                         # C's rows run along M: element by element
        elif not whole_if:
            whole(b)
        elif (m is not None and m < s.mr) or (n is not None and n < s.nr):
            edges(b)                         # no whole tile fits
        else:
            inside = whole_if[0] if len(whole_if) == 1 else \
                b.create(arith.AndIOp, *whole_if, location=loc).result
            e.if_(b, inside, whole, edges)

    def widen(self, b: Builder, x: Value, t) -> Value:
        """`x` (f32) in C's element type `t` (f32 or f64, or vectors of them)."""
        if not self.c.widened:
            return x
        return b.create(arith.ExtFOp, x, result_types=[t], location=self.e.location).result
