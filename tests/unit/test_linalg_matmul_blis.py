"""linalg-matmul-blis: the blocked, packed matmul nest computes what the op computes.

The nest reassociates the op's sum (float32 partial sums of `chunk` products added into C),
so results are compared with numpy in float64 within the error bound of such a sum, not bit
for bit: |got - exact| <= tol * sum|a * b|. Sizes cover edges in every dim (1, 7, 17, 100,
257 against tiles of 14 x 32 and blocks of 256), dynamic sizes, transposed operands,
`linalg.batch_matmul`, the widened-f64 form lower-graph-to-linalg emits (through the whole
compile pipeline, the op inside a `fusion.group`), and the interpreter before and after.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from hypothesis import given, settings

import irkit
from hypothesis import strategies as st

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.rewrite import constant_value
from irkit.dialects.loop import ParallelOp
from irkit.symbols import lookup_symbol_in
from irkit.tools import register_all
from irkit.passes.blis.nest import register_tile
from irkit.passes.linalg_matmul_blis import LinalgMatmulBlis

pytest.importorskip("llvmlite")
from irkit.backends.llvm_cpu import compile_module  # noqa: E402

register_all()

MAPS = {"nn": ("(d0, d2)", "(d2, d1)"), "tn": ("(d2, d0)", "(d2, d1)"),
        "nt": ("(d0, d2)", "(d1, d2)"), "tt": ("(d2, d0)", "(d1, d2)")}
LOWER = "lower-linalg-to-loop,canonicalize,cse"


def generic(m, n, k, layout="nn", widened=False) -> str:
    """A matmul generic on memrefs; `None` sizes are `?`; `widened`: the product extf'ed
    into an f64 output, as lower-graph-to-linalg emits it."""
    s = lambda x: "?" if x is None else str(x)                      # noqa: E731
    amap, bmap = MAPS[layout]
    at = f"memref<{s(m)}x{s(k)}xf32>" if layout[0] == "n" else f"memref<{s(k)}x{s(m)}xf32>"
    bt = f"memref<{s(k)}x{s(n)}xf32>" if layout[1] == "n" else f"memref<{s(n)}x{s(k)}xf32>"
    ce = "f64" if widened else "f32"
    ct = f"memref<{s(m)}x{s(n)}x{ce}>"
    body = ("%w = arith.extf %p : f32 to f64\n    %s = arith.addf %acc, %w : f64" if widened
            else "%s = arith.addf %acc, %p : f32")
    return f"""
func.func @f(%a: {at}, %b: {bt}, %c: {ct}) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> {amap}>,
                                   affine_map<(d0, d1, d2) -> {bmap}>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%a, %b : {at}, {bt}) outs(%c : {ct}) {{
  ^bb0(%x: f32, %y: f32, %acc: {ce}):
    %p = arith.mulf %x, %y : f32
    {body}
    linalg.yield %s : {ce}
  }}
  return
}}"""


def transformed(src: str, **options):
    """`src` after the pass (every match transformed unless `min_flops` says otherwise)."""
    m = parse_module(src)
    options.setdefault("min_flops", 0)
    PassManager().add(LinalgMatmulBlis(**options)).run(m)
    return m


def jit(src: str, threads: int = 1, **options):
    m = transformed(src, **options)
    assert '"reduction"' not in str(m) and "linalg.conv" not in str(m)
    PassManager.parse(LOWER).run(m)
    return compile_module(m, 2, threads=threads).f


def operands(m, n, k, layout="nn", seed=0, positive=False):
    rng = np.random.default_rng(seed)
    draw = rng.random if positive else rng.standard_normal
    a = draw((m, k)).astype(np.float32)
    b = draw((k, n)).astype(np.float32)
    return a, b, (a.T.copy() if layout[0] == "t" else a), (b.T.copy() if layout[1] == "t" else b)


def check(got, a, b, c0, tol):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = c0.astype(np.float64) + a64 @ b64
    scale = np.abs(c0.astype(np.float64)) + np.abs(a64) @ np.abs(b64)
    assert got.shape == exact.shape
    np.testing.assert_array_less(np.abs(got - exact), tol * scale + 1e-30)


# ---------------------------------------------------------------------------------------------
# Compiled against numpy
# ---------------------------------------------------------------------------------------------

SIZES = [(1, 1, 1), (7, 17, 1), (17, 7, 64), (64, 64, 64), (100, 257, 17), (257, 100, 257),
         (15, 33, 300), (29, 65, 600)]


@pytest.mark.parametrize("m, n, k", SIZES)
@pytest.mark.parametrize("widened", [False, True])
def test_static_sizes_match_numpy(m, n, k, widened):
    f = jit(generic(m, n, k, widened=widened))
    a, b, _, _ = operands(m, n, k)
    c0 = np.random.default_rng(1).standard_normal((m, n)).astype(
        np.float64 if widened else np.float32)
    c = c0.copy()
    f(a, b, c)
    # f32 C: the block sums add up in f32 too (k / chunk + chunk roundings at most)
    check(c, a, b, c0, (2 if widened else 4 + k / 64) * 2.0**-23 * max(8, np.sqrt(k)))


@pytest.mark.parametrize("layout", ["tn", "nt", "tt"])
def test_transposed_operands(layout):
    m, n, k = 37, 70, 129
    f = jit(generic(m, n, k, layout, widened=True))
    a, b, ax, bx = operands(m, n, k, layout, seed=3)
    c = np.zeros((m, n))
    f(ax, bx, c)
    check(c, a, b, np.zeros((m, n)), 2.0**-21)


@pytest.mark.parametrize("threads", [1, 2])
def test_dynamic_sizes_and_threads(threads):
    f = jit(generic(None, None, None, widened=True), threads=threads, mc=28)
    for m, n, k in [(1, 1, 1), (0, 5, 3), (5, 0, 3), (3, 5, 0), (100, 33, 257), (300, 64, 70)]:
        a, b, _, _ = operands(m, n, k, seed=m + n + k)
        c0 = np.full((m, n), 0.5)
        c = c0.copy()
        f(a, b, c)
        check(c, a, b, c0, 2.0**-21)


def test_dynamic_m_only():
    f = jit(generic(None, 128, 64, widened=True))
    for m in (1, 13, 128, 200):
        a, b, _, _ = operands(m, 128, 64, seed=m)
        c = np.zeros((m, 128))
        f(a, b, c)
        check(c, a, b, np.zeros((m, 128)), 2.0**-21)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["nn", "tn"])
@pytest.mark.parametrize("direct_b_tiles", [64, 0])
def test_thin_tiles_run_row_by_row(threads, layout, direct_b_tiles):
    """A dynamic M with 6-row tiles: the last tile, where fewer than 3 of its rows are
    inside M (M = 1, 2, 7, 8, 13, 14, 62), runs a two-row kernel per pair of them (an odd
    last row paired with itself); those of 3 to 6
    rows run the whole tile. A as laid out ("nn") or transposed ("tn"), B read where it lies
    (N = 48, whole tiles) or packed, C with values to add to, one and two threads."""
    src = generic(None, 48, 70, layout, widened=True)
    options = dict(mr=6, nr=16, lanes=16, kc=32, direct_b_tiles=direct_b_tiles)
    text = str(transformed(src, **options))
    fmas = text.count("math.fma")
    # the whole tile's kernel per way of reading B, one thin kernel (B where it lies when it
    # may be read so)
    assert fmas == 6 * (2 if direct_b_tiles else 1) + 2
    plain = str(transformed(src, thin_rows=False, **options)).count("math.fma")
    assert plain == 6 * (2 if direct_b_tiles else 1)
    f = jit(src, threads=threads, **options)
    for m in (1, 2, 3, 5, 6, 7, 8, 9, 13, 14, 62):
        a, b, ax, _ = operands(m, 48, 70, layout, seed=m)
        c0 = np.full((m, 48), 0.25)
        c = c0.copy()
        f(ax, b, c)
        check(c, a, b, c0, 2.0**-21)


def test_thin_tiles_only_where_a_static_m_leaves_one():
    """A static M builds the two-row kernel only where its last tile is less than half
    full: 13 rows of 6-row tiles (1 in the last) do, 16 (4) and 12 (whole tiles) do not;
    nor does a static K below `THIN_MIN_K` (16)."""
    options = dict(mr=6, nr=16, lanes=16, kc=32)
    for m, k, kernels in ((13, 70, 2), (16, 70, 1), (12, 70, 1), (13, 16, 1)):
        text = str(transformed(generic(m, 40, k, widened=True), **options))
        assert text.count("math.fma") == {2: 6 + 2, 1: 6}[kernels], (m, k)
    f = jit(generic(13, 40, 70, widened=True), **options)
    a, b, _, _ = operands(13, 40, 70, seed=4)
    c = np.zeros((13, 40))
    f(a, b, c)
    check(c, a, b, np.zeros((13, 40)), 2.0**-21)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("widened", [False, True])
@pytest.mark.parametrize("n", [32, 40])
def test_b_read_in_place_or_packed_as_m_says(threads, widened, n):
    """x @ w with a dynamic M: B read where it lies while M is at most `direct-b-tiles`
    register tiles (6 rows here), packed past that, as a `loop.if` per panel picks; K in
    several blocks (the window's offset moves with the block). N = 40 ends in a part tile
    of one vector: its other vector reads B's last whole one again, never stored."""
    src = generic(None, n, 100, widened=widened)
    options = dict(mr=2, nr=16, lanes=8, kc=32, mc=4, nc=32, direct_b_tiles=3)
    text = str(transformed(src, **options))
    assert text.count("math.fma") == 2 * 2 * 2   # two k loops, 2 x 2 accumulators each
    f = jit(src, threads=threads, **options)
    for m in (1, 5, 6, 7, 40):
        a, b, _, _ = operands(m, n, 100, seed=m)
        c0 = np.full((m, n), 0.25, np.float64 if widened else np.float32)
        c = c0.copy()
        f(a, b, c)
        check(c, a, b, c0, 2.0**-21 if widened else 2.0**-18)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m", [10, 3])
def test_few_rows_with_b_in_place_in_one_tile(m, threads):
    """A static M of a few rows (the classes of a weight gradient dz^T @ x) with B read where
    it lies: one register tile holds all M rows, so B's rows stream through once (two row
    blocks of 5 read x twice). No packed B panel; one scalar read of A per row and k."""
    src = generic(m, 200, 64)
    ir = str(transformed(src, lanes=8))
    assert not re.search(r"memory.alloc\(\) : memref<\d+x\d+x\d+xf32>", ir)
    assert len(re.findall(r"memory.load %arg0\[", ir)) == m
    f = jit(src, threads=threads, lanes=8)
    a, b, _, _ = operands(m, 200, 64, seed=m)
    c0 = np.full((m, 200), 0.25, np.float32)
    c = c0.copy()
    f(a, b, c)
    check(c, a, b, c0, 2.0**-18)


@functools.cache
def _row_blocks_kernel():
    """A dynamic-M matmul in row blocks of at most 3 tiles of 2 rows, their count a multiple
    of 4, on two threads."""
    return jit(generic(None, 16, 8, widened=True), threads=2, mr=2, nr=16, lanes=8, mc=6,
               row_blocks=4)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 200))
def test_row_blocks_cover_every_row_once(m):
    """The blocks the threads split (starting at tile i * tiles / blocks) cover M exactly:
    a row missed or computed twice would be left alone or added twice into C."""
    a, b, _, _ = operands(m, 16, 8, seed=m)
    c0 = np.full((m, 16), 0.5)
    c = c0.copy()
    _row_blocks_kernel()(a, b, c)
    check(c, a, b, c0, 2.0**-21)


def _row_block_count(m: int, n: int = 16, **options) -> int:
    """The trip count of the row blocks' loop.parallel (the second: B's packing is first):
    the row blocks times the parts of the columns (one where N is one column tile)."""
    module = transformed(generic(m, n, 8), mr=2, nr=16, lanes=8, mc=16, **options)
    loops = [o for o in module.walk() if isinstance(o, ParallelOp)]
    return constant_value(loops[-1].upper_bounds[0]).value


@pytest.mark.parametrize("m", [1, 7, 16, 31, 64, 100, 257, 1000])
def test_row_block_count_is_a_multiple_of_row_blocks(m):
    """As many blocks as a team of up to row-blocks (8) can share evenly, each within mc
    (16 rows, 8 tiles); at most one per tile; row-blocks=1: the fewest within mc."""
    tiles = -(-m // 2)
    blocks = _row_block_count(m)
    assert blocks * 8 >= tiles and (blocks % 8 == 0 or blocks == tiles)
    assert blocks <= max(8, -(-tiles // 8) + 8)
    assert _row_block_count(m, row_blocks=1) == -(-tiles // 8)


@pytest.mark.parametrize("m,n,items", [(1, 32, 2), (1, 16 * 20, 8), (5, 16 * 20, 9),
                                        (15, 16 * 20, 8), (16, 16 * 20, 8), (1000, 16 * 20, 64),
                                        (None, 16 * 20, None)])
def test_few_row_blocks_share_out_their_columns(m, n, items):
    """A static M of fewer row blocks than row-blocks (8) splits each block's column tiles
    into parts, enough to make up 8 items (at most one per column tile): 1 row and 2 column
    tiles, 2 items; 3 blocks of 20 tiles, 3 parts each. A dynamic M keeps one part."""
    if items is None:
        module = transformed(generic(None, n, 8), mr=2, nr=16, lanes=8, mc=16)
        loop = [o for o in module.walk() if isinstance(o, ParallelOp)][-1]
        assert constant_value(loop.upper_bounds[0]) is None
        assert "arith.remui" not in str(loop.regions[0])
        return
    assert _row_block_count(m, n) == items


@pytest.mark.parametrize("m,n", [(1, 31), (2, 200), (5, 333), (12, 16 * 20 + 1), (13, 700)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_column_parts_cover_every_column_once(m, n, threads):
    """Parts of the columns (and several column blocks, nc = 64) against numpy: a tile
    missed or computed twice would leave C's 0.5 or add its product twice."""
    f = jit(generic(m, n, 40, widened=True), threads=threads, mr=2, nr=16, lanes=8, mc=16,
            nc=64)
    a, b, _, _ = operands(m, n, 40, seed=n)
    c0 = np.full((m, n), 0.5)
    c = c0.copy()
    f(a, b, c)
    check(c, a, b, c0, 2.0**-21)


@pytest.mark.parametrize("layout", ["nn", "tn"])
@pytest.mark.parametrize("threads", [1, 2])
def test_n_in_one_tile_reads_a_in_place(layout, threads):
    """N (10) within one column tile (nr = 16): A is read where it lies, not packed (only
    B's panel is a 3-d buffer), where its rows run along K ("nn"); a transposed A ("tn",
    along M at stride 1, its k steps M floats apart, M dynamic) is packed, as it is with
    direct-a=false: copied k by k, a whole panel's mr floats by vectors (3: 2 and 1). Rows
    past M (dynamic, not a multiple of mr = 3) read row M - 1 and are never stored."""
    src = generic(None, 10, 70, layout, widened=True)
    options = dict(mr=3, nr=16, lanes=8, kc=32, chunk=16, mc=6, nc=32, dot=False,
                   transpose=False)
    packed = [t for t in ("memref<2x32x3xf32>", "memref<1x32x16xf32>")
              if t in str(transformed(src, **options))]
    assert packed == (["memref<1x32x16xf32>"] if layout == "nn" else
                      ["memref<2x32x3xf32>", "memref<1x32x16xf32>"])
    text = str(transformed(src, direct_a=False, **options))
    assert "memref<2x32x3xf32>" in text
    if layout == "tn":
        assert "memref<70x?xf32>, vector<2xf32>" in text and \
            "memref<2x32x3xf32>, vector<2xf32>" in text
    for f in (jit(src, threads=threads, **options),
              jit(src, threads=threads, direct_a=False, **options)):
        for m in (1, 2, 5, 6, 7, 40, 100):
            a, b, ax, _ = operands(m, 10, 70, layout, seed=m)
            c0 = np.full((m, 10), 0.25)
            c = c0.copy()
            f(ax, b, c)
            check(c, a, b, c0, 2.0**-21)


@pytest.mark.parametrize("m,packed", [(10, False), (15, False), (16, True), (784, True)])
def test_a_along_m_is_packed_where_its_k_steps_are_a_line_apart(m, packed):
    """A transposed A (x^T: its values at one k side by side, the next k a row of x on) is
    read where it lies while its k steps stay within a cache line (m floats < 64 bytes),
    else packed into a panel, one stream the prefetchers follow."""
    src = generic(m, 32, 24, "tn")
    text = str(transformed(src, mr=3, nr=16, lanes=8, kc=32, dot=False, transpose=False))
    assert ("x24x3xf32>" in text) == packed


# ---------------------------------------------------------------------------------------------
# Few columns: dot products along K (passes/blis/dot.py), or the sides swapped (nest.py)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m, n, k", [(1, 10, 16), (6, 10, 20), (100, 10, 784), (33, 5, 100),
                                     (8, 3, 8), (13, 11, 257), (9, 6, 24)])
@pytest.mark.parametrize("layout", ["nn", "nt"])
@pytest.mark.parametrize("widened", [False, True])
def test_few_columns_as_dot_products(m, n, k, layout, widened):
    """N leaves most lanes idle and A is read along K: dot products (their lanes summed by
    one tree for the tile, `lane_sums`: vector.extract of each sum; no packed B panel), C's
    old value added (no fill folded), every row once. B is transposed into Bt by whole
    groups of 8 rows in registers (a shuffle of the 8 rows laid end to end) where its
    rows hold the N columns side by side ("nn"), the rest element by element. A B given
    transposed ("nt", PyTorch's Linear weight [N, K]) is read where it lies, no Bt, unless
    the loop starts where A is aligned (K a whole number of vectors, two or more): then it
    is copied by vectors into a Bt rotated to match, never shuffled."""
    src = generic(m, n, k, layout, widened=widened)
    ir = str(transformed(src, lanes=8))
    assert "vector.extract" in ir and "vector.reduction" not in ir
    aligned = k % 8 == 0 and k >= 16
    assert ("memory.address" in ir) == aligned
    assert (f"memory.alloc() : memref<{n}x{k}xf32>" in ir) == (layout == "nn" or aligned)
    assert (f"vector<{8 * n}xf32>" in ir) == (layout == "nn" and k >= 8)
    f = jit(src, lanes=8)
    a, b, _, bl = operands(m, n, k, layout, seed=m + n + k)
    c0 = np.random.default_rng(2).standard_normal((m, n)).astype(
        np.float64 if widened else np.float32)
    c = c0.copy()
    f(a, bl, c)
    check(c, a, b, c0, 2.0**-21 * max(8, np.sqrt(k)))


@pytest.mark.parametrize("k", [8 * 4 + 3, 8 * 8, 8 * 8 + 1, 8 * 20 + 5])
@pytest.mark.parametrize("widened", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_dot_products_in_chunks_of_k(k, widened, threads):
    """K longer than a chunk (chunk=4: 32 of K on 8 lanes): the chunks' float32 sums added
    up in C's type (a loop over the chunks but the last, carrying them), the tail's products
    into the last chunk's sum; a K of two chunks exactly, and of two and a tail of one."""
    src = generic(None, 10, k, widened=widened)
    options = dict(lanes=8, chunk=4)
    ir = str(transformed(src, **options))
    chunked = k > 8 * 4 + 7         # the whole vectors longer than one chunk
    # 4 rows x 2 groups of 5 columns: 40 sums a chunk loop, the last chunk's loop another 40
    assert ir.count("vector.extract") == (80 if chunked else 40)
    f = jit(src, threads=threads, **options)
    for m in (1, 4, 9, 30):
        a, b, _, _ = operands(m, 10, k, seed=m + k)
        c0 = np.full((m, 10), 0.5, np.float64 if widened else np.float32)
        c = c0.copy()
        f(a, b, c)
        check(c, a, b, c0, 2.0**-20 if widened else 2.0**-18)


@pytest.mark.parametrize("threads", [1, 2])
def test_dot_products_dynamic_rows(threads):
    """M dynamic: rows past M (not a multiple of the tile's 4) read row M - 1 and are never
    stored; M = 0 runs no tile. Default lanes (the host's) where K = 784 is a multiple."""
    src = generic(None, 10, 784, widened=True)
    f = jit(src, threads=threads)
    for m in (0, 1, 3, 4, 5, 99, 100):
        a, b, _, _ = operands(m, 10, 784, seed=m)
        c = np.full((m, 10), 0.5)
        f(a, b, c)
        check(c, a, b, np.full((m, 10), 0.5), 2.0**-21 * 28)


@pytest.mark.parametrize("k", [16, 64, 784])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["nn", "nt"])
def test_dot_products_start_where_a_is_aligned(k, threads, layout):
    """K a whole number of vectors (at least two) and A's rows a whole number of vectors
    apart: the vector loop starts where A's rows are aligned, read off A's address at run
    time (`memory.address`), and B is transposed rotated to match ("nn"), or copied rotated
    ("nt": its rows along K already; its two ends selected by lane, as A's last step does).
    Every start in a vector (A's first element 0 .. 7 floats into 32 bytes, 8 lanes) gives
    numpy's product, the same bits again on the same arrays, and the interpreter, whose
    address is numpy's, gives those bits too (the lanes' sums are a tree of plain adds in
    the IR, `lane_sums`, which LLVM keeps)."""
    src = generic(None, 10, k, layout, widened=True)
    module = transformed(src, lanes=8)
    assert str(module).count("memory.address") == 1
    f = jit(src, threads=threads, lanes=8)
    rng = np.random.default_rng(k + threads)
    memory = np.zeros(12 * k + 64, np.float32)
    first = memory.ctypes.data // 4
    b = rng.standard_normal((k, 10)).astype(np.float32)
    bl = b.T.copy() if layout == "nt" else b
    for m in (1, 5, 12):
        for into in range(8):
            start = (into - first) % 8
            a = memory[start:start + m * k].reshape(m, k)
            assert (a.ctypes.data // 4) % 8 == into
            a[...] = rng.standard_normal((m, k))
            c0 = rng.standard_normal((m, 10))
            c = c0.copy()
            f(a, bl, c)
            check(c, a, b, c0, 2.0**-21 * max(8, np.sqrt(k)))
            again = c0.copy()
            f(a, bl, again)
            np.testing.assert_array_equal(again, c)     # the same placement, the same bits
            if m == 5 and k == 64:
                ref = c0.copy()
                Interpreter(module).call(lookup_symbol_in(module, "f"), [a, bl, ref])
                np.testing.assert_array_equal(ref, c)


def test_dot_products_start_at_zero_where_a_cannot_align():
    """A tail after the last whole vector, or a single vector: the loop starts at k = 0,
    no address read; and so it does everywhere with `align-start=false`."""
    for k in (8, 20, 8 * 3 + 1):
        assert "memory.address" not in str(transformed(generic(None, 10, k), lanes=8))
    src = generic(None, 10, 64)
    assert "memory.address" in str(transformed(src, lanes=8))
    assert "memory.address" not in str(transformed(src, lanes=8, align_start=False))


def test_dot_products_interpreter_before_and_after():
    src = generic(None, 10, 19, widened=True)
    m = 7
    a, b, _, _ = operands(m, 10, 19, seed=4)
    results = []
    for module in (parse_module(src), transformed(src, lanes=8)):
        c = np.full((m, 10), 0.25)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [a, b, c])
        results.append(c)
    np.testing.assert_allclose(results[1], results[0], rtol=0, atol=1e-5)


def test_dot_products_not_taken():
    """Wide N (16 of 16 lanes busy), K shorter than a vector, or A read along M: the BLIS
    nest as before (no sums of lanes), where the dot nest's would be there."""
    assert "vector.extract" in str(transformed(generic(40, 10, 64), lanes=8))
    for src in (generic(40, 16, 64), generic(40, 10, 4), generic(40, 10, 64, "tn")):
        assert "vector.extract" not in str(transformed(src, lanes=8, transpose=False))
    assert "vector.extract" not in str(transformed(generic(40, 10, 64), lanes=8, dot=False))


def swapped_ir(ir: str) -> bool:
    """Whether the nest ran swapped: no packed B panel (x is read where it lies) and no
    vector store into C (%arg2: its rows run along the swapped M)."""
    return not re.search(r"memory.alloc\(\) : memref<\d+x\d+x\d+xf32>", ir.replace(
        "x5xf32>", "")) and not re.search(r"memory.vector_store %\S+, %arg2", ir)


@pytest.mark.parametrize("m, k", [(64, 100), (784, 100), (48, 1), (128, 300)])
@pytest.mark.parametrize("threads", [1, 2])
def test_weight_gradient_swapped(m, k, threads):
    """x^T @ dz (A read along M, N = 10): swapped, the vectors run along M (a multiple of
    the lanes; a tile past M reads the last whole vector again, never stored), dz^T packed
    as A (5 rows a tile), C stored element by element. K dynamic."""
    src = generic(m, 10, None, "tn", widened=True)
    assert swapped_ir(str(transformed(src, lanes=8)))
    assert not swapped_ir(str(transformed(src, lanes=8, transpose=False)))
    f = jit(src, threads=threads, lanes=8)
    a, b, ax, _ = operands(m, 10, k, "tn", seed=m + k)
    c0 = np.full((m, 10), -0.5)
    c = c0.copy()
    f(ax, b, c)
    check(c, a, b, c0, 2.0**-21)


def weight_gradient_group(m: int, n: int, params: str, update: str) -> str:
    """A function of x (K x m), dz (K x n), `params` and w (m x n), K dynamic: x^T @ dz
    into an f64 accumulator and the `update` generic after it, in one epilogue group (what
    `sgd_group` and `momentum_group` share)."""
    return f"""
func.func @f(%x: memref<?x{m}xf32>, %d: memref<?x{n}xf32>, {params},
             %w: memref<{m}x{n}xf32>) {{
  %zero = arith.constant 0.0 : f64
  %lr = arith.constant 0.1 : f32
  fusion.group {{kind = "epilogue", outer_dims = 2 : i64}} {{
    %acc = memory.alloc() : memref<{m}x{n}xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<{m}x{n}xf64>)
    linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%x, %d : memref<?x{m}xf32>, memref<?x{n}xf32>) outs(%acc : memref<{m}x{n}xf64>) {{
    ^bb0(%p: f32, %q: f32, %s: f64):
      %t = arith.mulf %p, %q : f32
      %e = arith.extf %t : f32 to f64
      %u = arith.addf %s, %e : f64
      linalg.yield %u : f64
    }}
{update}
    memory.dealloc %acc : memref<{m}x{n}xf64>
  }}
  return
}}"""


def sgd_group(m: int, n: int) -> str:
    """A weight gradient x^T @ dz (K, the batch, dynamic) into an f64 accumulator, with an
    update at its store: w[i, j] -= 0.1 * trunc(acc[i, j]) - cj[j] * ri[i] (a value per
    swapped M position, loaded as a vector, and one per swapped N position, broadcast)."""
    return weight_gradient_group(m, n, f"%cj: memref<{n}xf32>, %ri: memref<{m}xf32>", f"""
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d1)>,
                                     affine_map<(d0, d1) -> (d0)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}}
        ins(%w, %acc, %cj, %ri : memref<{m}x{n}xf32>, memref<{m}x{n}xf64>, memref<{n}xf32>,
            memref<{m}xf32>) outs(%w : memref<{m}x{n}xf32>) {{
    ^bb0(%old: f32, %g: f64, %c: f32, %r: f32, %o: f32):
      %gt = arith.truncf %g : f64 to f32
      %step = arith.mulf %gt, %lr : f32
      %cr = arith.mulf %c, %r : f32
      %v = arith.subf %step, %cr : f32
      %new = arith.subf %old, %v : f32
      linalg.yield %new : f32
    }}""")


@pytest.mark.parametrize("m, n", [(64, 10), (40, 10), (24, 6), (32, 11)])
@pytest.mark.parametrize("k", [1, 16, 70, 300])
@pytest.mark.parametrize("threads", [1, 2])
def test_weight_gradient_swapped_with_its_update(m, n, k, threads):
    """The swapped weight gradient's update at its store: where N is whole tiles of rows
    (10 of 5 rows, 6 of 6) the tile is transposed in registers and each of C's rows is one
    vector through the update (vector.shuffle in the IR, no scalar store into w); N = 11
    (tiles of 6 rows) runs element by element. K against chunk 16 and
    blocks of 32: one chunk, chunks waiting in the per-tile buffer, blocks in the f64
    accumulator; M = 40 ends in a partial column tile."""
    options = dict(lanes=8, chunk=16, kc_dynamic=32)
    ir = str(transformed(sgd_group(m, n), **options))
    assert swapped_ir(ir)
    assert ("vector.shuffle" in ir) == (n != 11)
    assert (re.search(r"memory.store %\S+, %arg4", ir) is None) == (n != 11)
    f = jit(sgd_group(m, n), threads=threads, **options)
    rng = np.random.default_rng(m + n + k)
    x = rng.standard_normal((k, m)).astype(np.float32)
    d = rng.standard_normal((k, n)).astype(np.float32)
    cj = rng.standard_normal(n).astype(np.float32)
    ri = rng.standard_normal(m).astype(np.float32)
    w0 = rng.standard_normal((m, n)).astype(np.float32)
    w = w0.copy()
    f(x, d, cj, ri, w)
    g = x.T.astype(np.float64) @ d.astype(np.float64)
    want = w0 - (0.1 * g - np.outer(ri, cj))
    scale = np.abs(w0) + 0.1 * (np.abs(x.T).astype(np.float64) @ np.abs(d)) + \
        np.abs(np.outer(ri, cj))
    np.testing.assert_array_less(np.abs(w - want), 2.0**-21 * scale + 1e-30)


def momentum_group(m: int, n: int) -> str:
    """x^T @ dz as in `sgd_group`, its update reading only buffers laid out as w and a
    scalar: w[i, j] -= 0.1 * trunc(acc[i, j]) + s[] * v[i, j], and v[i, j] = trunc(acc)."""
    return weight_gradient_group(m, n, f"%s: memref<f32>, %v: memref<{m}x{n}xf32>", f"""
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> ()>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}}
        ins(%w, %acc, %s, %v : memref<{m}x{n}xf32>, memref<{m}x{n}xf64>, memref<f32>,
            memref<{m}x{n}xf32>) outs(%w, %v : memref<{m}x{n}xf32>, memref<{m}x{n}xf32>) {{
    ^bb0(%old: f32, %g: f64, %sc: f32, %vo: f32, %o: f32, %vn: f32):
      %gt = arith.truncf %g : f64 to f32
      %step = arith.mulf %gt, %lr : f32
      %mom = arith.mulf %sc, %vo : f32
      %all = arith.addf %step, %mom : f32
      %new = arith.subf %old, %all : f32
      linalg.yield %new, %gt : f32, f32
    }}""")


@pytest.mark.parametrize("m, n", [(64, 10), (48, 10), (48, 6), (16, 3)])
@pytest.mark.parametrize("k", [1, 16, 70, 300])
@pytest.mark.parametrize("lanes, threads", [(8, 1), (16, 2)])
def test_weight_gradient_update_runs_flat(m, n, k, lanes, threads):
    """Where every buffer of the update is laid out as w (rows of exactly N, the swapped M)
    or is a scalar, a tile spans all of N and its update runs over consecutive elements of
    the collapsed buffers (`final_flat`): M = 48 at N = 10 ends in a partial column tile
    (16 of 32 columns); K against chunk 16 and blocks of 32 as in the test above."""
    options = dict(lanes=lanes, chunk=16, kc_dynamic=32)
    ir = str(transformed(momentum_group(m, n), **options))
    assert swapped_ir(ir)
    assert f"memref<{m}x{n}xf32> into memref<{m * n}xf32>" in ir
    assert not re.search(rf"vector<{n}xf", ir)             # no vector per column of C
    f = jit(momentum_group(m, n), threads=threads, **options)
    rng = np.random.default_rng(m + n + k)
    x = rng.standard_normal((k, m)).astype(np.float32)
    d = rng.standard_normal((k, n)).astype(np.float32)
    s = np.array(0.9, np.float32)
    v0 = rng.standard_normal((m, n)).astype(np.float32)
    w0 = rng.standard_normal((m, n)).astype(np.float32)
    v, w = v0.copy(), w0.copy()
    f(x, d, s, v, w)
    g = x.T.astype(np.float64) @ d.astype(np.float64)
    want = w0 - (0.1 * g + 0.9 * v0.astype(np.float64))
    scale = np.abs(w0) + 0.1 * (np.abs(x.T).astype(np.float64) @ np.abs(d)) + np.abs(v0)
    np.testing.assert_array_less(np.abs(w - want), 2.0**-21 * scale + 1e-30)
    np.testing.assert_array_less(np.abs(v - g), 2.0**-22 * (np.abs(x.T).astype(np.float64)
                                                             @ np.abs(d)) + 1e-30)


@pytest.mark.parametrize("threads", [1, 2])
def test_dot_products_with_an_epilogue(threads):
    """The epilogue run element by element at each dot product's store (M dynamic, rows
    past M never stored: no member writes them)."""
    f = jit(epilogue_group(None, 10, 64), threads=threads, lanes=8)
    for m in (1, 5, 37):
        run_epilogue(f, m, 10, 64, seed=m)


def assert_same_variables(compiled, reference) -> None:
    """Every variable of the two models equal to float32 rounding (after training)."""
    for name, value in reference.variables.items():
        want = np.asarray(value)
        np.testing.assert_allclose(np.asarray(compiled.variables[name]), want, rtol=1e-4,
                                   atol=1e-5 * max(1.0, np.max(np.abs(want))), err_msg=name)


@pytest.mark.parametrize("threads", [1, 2])
def test_logistic_regression_step_jit_equals_interpreter(tmp_path, threads):
    """x @ w as dot products, x^T @ dz swapped with SGD's update at its store: three
    training steps (batch 100, then 37) agree with the interpreter's (bench/run.py's
    model)."""
    from irkit.runtime.model import load_model
    path = tmp_path / "logreg.irk"
    path.write_text(_bench_module("run").MODELS["logreg"])
    compiled = load_model(path, engine="jit", threads=threads, cache=False)
    reference = load_model(path)
    rng = np.random.default_rng(0)
    for batch in (100, 37, 100):
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        labels = rng.integers(0, 10, batch).astype(np.int32)
        a = compiled.train_step(x=x, labels=labels)["loss"]
        b = reference.train_step(x=x, labels=labels)["loss"]
        assert abs(a - b) <= 1e-5 * abs(b)
    assert_same_variables(compiled, reference)


@pytest.mark.parametrize("n, layout", [(10, "tn"), (48, "nn")])
def test_zero_fill_folded_for_a_dynamic_k(n, layout):
    """A zero-filled output with K dynamic: the first K step stores its sums (C's old value
    never read), and the fill runs only where K == 0, after the nest."""
    src = generic(64, n, None, layout, widened=True).replace(
        "  linalg.generic", "  %zero = arith.constant 0.0 : f64\n"
        "  linalg.fill ins(%zero : f64) outs(%c : memref<64x" + str(n) + "xf64>)\n"
        "  linalg.generic", 1)
    ir = str(transformed(src, lanes=8, kc=32, chunk=16))
    lines = ir.splitlines()
    at = [i for i, line in enumerate(lines) if "linalg.fill" in line]
    assert len(at) == 1 and "loop.if" in lines[at[0] - 1]        # K == 0 only
    f = jit(src, lanes=8, kc=32, chunk=16)
    for k in (0, 1, 16, 40, 100):
        a, b, ax, bx = operands(64, n, k, layout, seed=k)
        c = np.full((64, n), np.nan)
        f(ax, bx, c)
        check(c, a, b, np.zeros((64, n)), 2.0**-21)


def test_weight_gradient_not_swapped():
    """M not a multiple of the lanes (x's rows would be read past their end), or N using
    most lanes: not swapped."""
    for src in (generic(60, 10, None, "tn", widened=True), generic(64, 16, 30, "tn")):
        assert not swapped_ir(str(transformed(src, lanes=8)))


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 80), st.integers(1, 90), st.integers(1, 300))
def test_random_sizes(m, n, k):
    f = jit(generic(m, n, k, widened=True), mr=5, nr=16, kc=96, chunk=32, mc=10, nc=48)
    a, b, _, _ = operands(m, n, k, seed=m * n * k)
    c = np.zeros((m, n))
    f(a, b, c)
    check(c, a, b, np.zeros((m, n)), 2.0**-21)


def test_batch_matmul_named_op():
    src = """
func.func @f(%a: memref<?x30x40xf32>, %b: memref<?x40x50xf32>, %c: memref<?x30x50xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<?x30x40xf32>, memref<?x40x50xf32>)
      outs(%c : memref<?x30x50xf32>)
  return
}"""
    f = jit(src)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 30, 40)).astype(np.float32)
    b = rng.standard_normal((3, 40, 50)).astype(np.float32)
    c = np.zeros((3, 30, 50), np.float32)
    f(a, b, c)
    for i in range(3):
        check(c[i], a[i], b[i], np.zeros((30, 50)), 2.0**-20)


def test_accuracy_contract_on_long_sums():
    """tests/unit/test_reduction_accuracy.py's contract for matmul, |error| <= log2(K) *
    eps32 * sum|a * b|, on positive data (no cancellation: the running sums are largest)."""
    m, n, k = 64, 64, 4096
    f = jit(generic(m, n, k, widened=True))
    a, b, _, _ = operands(m, n, k, positive=True)
    c = np.zeros((m, n))
    f(a, b, c)
    check(c, a, b, np.zeros((m, n)), np.log2(k) * 2.0**-23)


# ---------------------------------------------------------------------------------------------
# The IR
# ---------------------------------------------------------------------------------------------


def test_interpreter_before_and_after():
    src = generic(None, 20, 19, widened=True)
    m, n, k = 5, 20, 19
    a, b, _, _ = operands(m, n, k, seed=9)
    results = []
    for module in (parse_module(src),
                   transformed(src, mr=2, nr=16, lanes=8, kc=8, chunk=4, mc=4, nc=16)):
        c = np.full((m, n), 0.25)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [a, b, c])
        results.append(c)
    np.testing.assert_allclose(results[1], results[0], rtol=0, atol=1e-5)
    check(results[1], a, b, np.full((m, n), 0.25), 2.0**-21)


def test_small_and_non_matching_ops_are_left_alone():
    small = transformed(generic(8, 64, 8), min_flops=1 << 18)     # 2^13 flops
    assert "linalg.generic" in str(small)
    large = transformed(generic(64, 64, 32), min_flops=1 << 18)    # 2^18 flops
    assert "linalg.generic" not in str(large)
    dynamic = transformed(generic(None, 10, 8), min_flops=1 << 18)  # M may be large
    assert "linalg.generic" not in str(dynamic)
    f64 = generic(64, 64, 64).replace("f32", "f64")
    assert "linalg.generic" in str(transformed(f64))
    maximum = generic(64, 64, 64).replace("arith.addf %acc, %p", "arith.maximumf %acc, %p")
    assert "linalg.generic" in str(transformed(maximum))


@pytest.mark.parametrize("registers", [16, 32])
def test_register_tile_fits_and_is_the_best_that_fits(registers):
    mr, nv = register_tile(registers, 16)
    assert mr * nv + nv + 1 <= registers and mr * nv >= 8
    score = mr * nv / (mr + nv)
    for m in range(1, 17):
        for v in range(1, 5):
            if m * v + v + 1 <= registers and m * v >= 8:
                assert m * v / (m + v) <= score


# ---------------------------------------------------------------------------------------------
# Through the compile pipeline: the graph's matmul (widened, in a fusion.group)
# ---------------------------------------------------------------------------------------------


def _bench_module(name: str = "bench_matmul"):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_graph_matmul_through_the_pipeline():
    bm = _bench_module()
    f = bm.compiled(100, 96, 300, "linalg-matmul-blis{min-flops=0}", 1)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((100, 300)).astype(np.float32)
    b = rng.standard_normal((300, 96)).astype(np.float32)
    c = np.empty((100, 96), np.float32)
    f(a, b, c)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b)
    assert np.all(np.abs(c - exact) <= 2.0**-21 * scale + np.abs(exact) * 2.0**-24)
    assert "linalg-matmul-blis" in bm._pipeline("linalg-matmul-blis")


# ---------------------------------------------------------------------------------------------
# Convolutions: im2col into the packed panel, NCHW output
# ---------------------------------------------------------------------------------------------


def conv_reference(x, k, stride):
    """O[n, f, oh, ow] = sum_{c, kh, kw} x[n, c, oh * s + kh, ow * s + kw] * k[f, c, kh, kw],
    in float64, with the sum of |terms| for the error bound."""
    n, c, h, w = x.shape
    f, _, kh, kw = k.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (kh, kw), (2, 3))
    win = win[:, :, ::stride, ::stride][:, :, :oh, :ow]
    exact = np.einsum("nchwij,fcij->nfhw", win, k.astype(np.float64))
    scale = np.einsum("nchwij,fcij->nfhw", np.abs(win), np.abs(k.astype(np.float64)))
    return exact, scale


def conv_named(n, c, h, w, f, kh, stride) -> str:
    oh, ow = (h - kh) // stride + 1, (w - kh) // stride + 1
    xt, kt = f"memref<{n}x{c}x{h}x{w}xf32>", f"memref<{f}x{c}x{kh}x{kh}xf32>"
    ot = f"memref<{n}x{f}x{oh}x{ow}xf32>"
    return f"""
func.func @f(%x: {xt}, %k: {kt}, %o: {ot}) {{
  linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>,
                            strides = dense<{stride}> : tensor<2xi64>}}
      ins(%x, %k : {xt}, {kt}) outs(%o : {ot})
  return
}}"""


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 9), st.integers(3, 14), st.integers(1, 20),
       st.sampled_from([1, 3]), st.sampled_from([1, 2]))
def test_named_convolution_matches_numpy(n, c, h, f, kh, stride):
    """`linalg.conv_2d_nchw_fchw` (f32 output, accumulated into its initial value) with
    strides; the padding of the graph's conv2d is a padded copy of the input (below)."""
    w = h + 1
    fn = jit(conv_named(n, c, h, w, f, kh, stride))
    rng = np.random.default_rng(n * c * h * f)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    k = rng.standard_normal((f, c, kh, kh)).astype(np.float32)
    exact, scale = conv_reference(x, k, stride)
    o0 = rng.standard_normal(exact.shape).astype(np.float32)
    o = o0.copy()
    fn(x, k, o)
    tol = (4 + c * kh * kh / 64) * 2.0**-23 * max(8, np.sqrt(c * kh * kh))
    np.testing.assert_array_less(np.abs(o - (o0 + exact)), tol * (np.abs(o0) + scale) + 1e-30)


#: lower-graph-to-linalg's convolution after bufferize: a zero-filled f64 temporary, the
#: widened contraction, a truncf epilogue reading the temporary, its dealloc
WIDENED_CONV = """
func.func @f(%x: memref<?x3x10x10xf32>, %k: memref<5x3x3x3xf32>, %o: memref<?x5x8x8xf32>) {
  %zero = arith.constant 0.0 : f64
  %n = memory.dim %x, 0 : memref<?x3x10x10xf32>
  %acc = memory.alloc(%n) : memref<?x5x8x8xf64>
  linalg.fill ins(%zero : f64) outs(%acc : memref<?x5x8x8xf64>)
  linalg.generic {indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}
      ins(%x, %k : memref<?x3x10x10xf32>, memref<5x3x3x3xf32>)
      outs(%acc : memref<?x5x8x8xf64>) {
  ^bb0(%a: f32, %b: f32, %s: f64):
    %p = arith.mulf %a, %b : f32
    %w = arith.extf %p : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%acc : memref<?x5x8x8xf64>) outs(%o : memref<?x5x8x8xf32>) {
  ^bb0(%a: f64, %b: f32):
    %r = arith.truncf %a : f64 to f32
    linalg.yield %r : f32
  }
  memory.dealloc %acc : memref<?x5x8x8xf64>
  return
}"""


def test_widened_convolution_accumulator_collapsed_and_fill_folded():
    """The f64 temporary's output pixels become one row (8 x 8 -> 64: whole vectors where
    a row of 8 is half of one), the zero fill is gone (the first K block stores), and the
    epilogue reads the collapsed buffer; the interpreter agrees before and after, and the
    compiled nest agrees with numpy."""
    after = transformed(WIDENED_CONV, mr=2, nr=16, lanes=8, kc=16, chunk=8)
    text = str(after)
    assert "memref<?x5x64xf64>" in text and "linalg.fill" not in text
    assert "(d0, d1, d2 * 8 + d3)" in text
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    k = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    results = []
    for module in (parse_module(WIDENED_CONV), after):
        o = np.full((2, 5, 8, 8), np.nan, np.float32)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [x, k, o])
        results.append(o)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-6)
    for x_n in (1, 7):
        xs = rng.standard_normal((x_n, 3, 10, 10)).astype(np.float32)
        exact, scale = conv_reference(xs, k, 1)
        o = np.full(exact.shape, np.nan, np.float32)
        jit(WIDENED_CONV)(xs, k, o)
        assert np.all(np.abs(o - exact) <= 2.0**-21 * scale + np.abs(exact) * 2.0**-24)


def test_filter_packed_once_for_every_image():
    """A filter (A's factors use no batch dim) is packed once before the image loop, which
    the threads split (M, 5 filters, is one row block): a `loop.parallel` whose every
    iteration packs its own B."""
    import re
    text = str(transformed(WIDENED_CONV))
    images = re.findall(r"(%\d+) = memory.dim %arg0, 0", text)
    image_loop = re.search(rf"loop.parallel \(%\w+\) = \(%\w+\) to \(({'|'.join(images)})\)",
                           text)
    assert "loop.parallel" not in text[:image_loop.start()]
    assert "loop.parallel" not in text[image_loop.end():]
    assert re.search(r"memory.alloc\(\) : memref<1x27x64xf32>", text[image_loop.end():])
    assert text.count("memory.load %arg1") == 1
    assert text.index("memory.load %arg1") < image_loop.start() < text.index("memory.load %arg0")


def widened_conv(c, h, f, kh) -> str:
    """`WIDENED_CONV` for `?` images of `c` x `h` x `h` and `f` filters of `kh` x `kh`."""
    o = h - kh + 1
    return WIDENED_CONV.replace("?x3x10x10", f"?x{c}x{h}x{h}").replace(
        "5x3x3x3", f"{f}x{c}x{kh}x{kh}").replace("?x5x8x8", f"?x{f}x{o}x{o}")


def filter_gradient(c, h, f, kh) -> str:
    """dk[f, c, i, j] = sum over (image, y, x) of dz[n, f, y, x] * x[n, c, y + i, x + j]
    for `?` images: a convolution's filter gradient, K three dims (the images, dynamic,
    and the output pixels)."""
    oh = h - kh + 1
    xt, zt = f"memref<?x{c}x{h}x{h}xf32>", f"memref<?x{f}x{oh}x{oh}xf32>"
    kt = f"memref<{f}x{c}x{kh}x{kh}xf32>"
    return f"""
func.func @f(%z: {zt}, %x: {xt}, %k: {kt}) {{
  linalg.generic {{indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>,
      affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}}
      ins(%z, %x : {zt}, {xt}) outs(%k : {kt}) {{
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }}
  return
}}"""


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(3, 9), st.integers(1, 9),
       st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 3]), st.sampled_from([8, 16]),
       st.sampled_from([3, 4, 5, 16]))
def test_panels_packed_in_runs_of_the_last_dim(n, c, h, f, kh, mr, nr, kc):
    """The packing loops walk a group of several dims in runs of its last dim (`Blis.runs`):
    with panels of 8 or 16 columns across rows of 1 to 9 output pixels, and K blocks of 3
    to 16 steps across runs of 1 to 9 pixels, runs start and stop in the middle, at both
    ends of a range. A convolution packs its image window into B's panels (N the output
    pixels); a filter gradient packs dz into A's (K the images and the output pixels)."""
    rng = np.random.default_rng(n + 10 * c + 100 * h + 1000 * f)
    x = rng.standard_normal((n, c, h, h)).astype(np.float32)
    k = rng.standard_normal((f, c, kh, kh)).astype(np.float32)
    options = dict(mr=mr, nr=nr, lanes=8, kc=kc, mc=2 * mr, nc=2 * nr, chunk=kc)
    exact, scale = conv_reference(x, k, 1)
    o = np.zeros(exact.shape, np.float32)
    jit(widened_conv(c, h, f, kh), **options)(x, k, o)
    assert np.all(np.abs(o - exact) <= 2.0**-21 * scale + np.abs(exact) * 2.0**-24)
    z = rng.standard_normal(exact.shape).astype(np.float32)
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), exact.shape[2:],
                                                   (2, 3))
    want = np.einsum("nfyx,ncijyx->fcij", z.astype(np.float64), win)
    bound = np.einsum("nfyx,ncijyx->fcij", np.abs(z.astype(np.float64)), np.abs(win))
    dk = np.zeros(k.shape, np.float32)
    jit(filter_gradient(c, h, f, kh), **options)(z, x, dk)
    assert np.all(np.abs(dk - want) <= 2.0**-20 * bound + 1e-30)


def test_register_tile_fits_small_problems():
    """A 16 x 16 problem gets a tile without waste (16 rows of one vector on AVX-512), not
    the 6 x 64 of large ones."""
    assert register_tile(32, 16) == (6, 4)
    mr, nv = register_tile(32, 16, 16, 16)
    assert nv == 1 and 16 % mr == 0


def test_cnn_train_step_jit_equals_interpreter():
    """examples/cnn.irk (two convolutions, their data and filter gradients, through the
    BLIS nest) trains on the JIT as on the interpreter."""
    from pathlib import Path
    from irkit.runtime.model import load_model
    path = Path(__file__).resolve().parents[2] / "examples" / "cnn.irk"
    compiled = load_model(path, engine="jit", threads=1, cache=False)
    reference = load_model(path)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((16, 1, 12, 12)).astype(np.float32)
    labels = rng.integers(0, 10, 16).astype(np.int32)
    got = compiled.forward(images=images, labels=labels)["logits"]
    want = reference.forward(images=images, labels=labels)["logits"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.max(np.abs(want)))
    for _ in range(3):
        a = compiled.train_step(images=images, labels=labels)["loss"]
        b = reference.train_step(images=images, labels=labels)["loss"]
        assert abs(a - b) <= 1e-5 * abs(b)
    assert_same_variables(compiled, reference)


def test_static_output_width_with_dynamic_inputs():
    """N is dynamic in B but 1 in C (a 1x1 filter's gradient read from a `?`-channel
    image): the extent is taken from C, so no vector wider than C's row is emitted."""
    src = generic(None, None, None).replace(
        "%c: memref<?x?xf32>", "%c: memref<?x1xf32>").replace(
        "outs(%c : memref<?x?xf32>)", "outs(%c : memref<?x1xf32>)")
    f = jit(src)
    a, b, _, _ = operands(9, 1, 70, seed=11)
    c = np.zeros((9, 1), np.float32)
    f(a, b, c)
    check(c, a, b, np.zeros((9, 1)), 2.0**-20)


# ---------------------------------------------------------------------------------------------
# Epilogues at the store: the members of the contraction's fusion.group
# ---------------------------------------------------------------------------------------------


def epilogue_group(m, n, k, widened=True, residual="(d0, d1)", static_acc=False) -> str:
    """A contraction in a fusion.group (as bufferize leaves the graph's) with two members:
    `y = relu(acc + bias[j]) + res[residual]` and `z = mask > 0 ? y : 0`, the second
    reading the first's output and a mask array. `None` sizes are `?`."""
    s = lambda x: "?" if x is None else str(x)                      # noqa: E731
    ce = "f64" if widened else "f32"
    at, bt = f"memref<{s(m)}x{s(k)}xf32>", f"memref<{s(k)}x{s(n)}xf32>"
    ot = f"memref<{s(m)}x{s(n)}xf32>"
    acct = f"memref<{s(m)}x{s(n)}x{ce}>"
    sizes = [f"%d{i}" for i, x in enumerate((m, n)) if x is None]
    dims = "".join(f"  %d{i} = memory.dim %y, {i} : {ot}\n" for i, x in enumerate((m, n))
                   if x is None)
    body = ("%w = arith.extf %p : f32 to f64\n      %t = arith.addf %s, %w : f64" if widened
            else "%t = arith.addf %s, %p : f32")
    trunc = "%v = arith.truncf %x : f64 to f32" if widened else "%v = arith.addf %x, %fz : f32"
    return f"""
func.func @f(%a: {at}, %b: {bt}, %bias: memref<{s(n)}xf32>, %res: {ot}, %mask: {ot},
             %y: {ot}, %z: {ot}) {{
  %zero = arith.constant 0.0 : {ce}
  %fz = arith.constant 0.0 : f32
{dims}  fusion.group {{kind = "epilogue", outer_dims = 2 : i64}} {{
    %acc = memory.alloc({", ".join(sizes)}) : {acct}
    linalg.fill ins(%zero : {ce}) outs(%acc : {acct})
    linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%a, %b : {at}, {bt}) outs(%acc : {acct}) {{
    ^bb0(%xa: f32, %xb: f32, %s: {ce}):
      %p = arith.mulf %xa, %xb : f32
      {body}
      linalg.yield %t : {ce}
    }}
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d1)>,
                                     affine_map<(d0, d1) -> {residual}>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}}
        ins(%acc, %bias, %res : {acct}, memref<{s(n)}xf32>, {ot}) outs(%y : {ot}) {{
    ^bb0(%x: {ce}, %bb: f32, %r: f32, %o: f32):
      {trunc}
      %u = arith.addf %v, %bb : f32
      %q = arith.maximumf %u, %fz : f32
      %e = arith.addf %q, %r : f32
      linalg.yield %e : f32
    }}
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}}
        ins(%y, %mask : {ot}, {ot}) outs(%z : {ot}) {{
    ^bb0(%yy: f32, %mm: f32, %o: f32):
      %c = arith.cmpf ogt, %mm, %fz : f32
      %g = arith.select %c, %yy, %fz : f32
      linalg.yield %g : f32
    }}
    memory.dealloc %acc : {acct}
  }}
  return
}}"""


def epilogue_inputs(m, n, k, seed=0, square_res=True):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    res = rng.standard_normal((m, n) if square_res else (n, m)).astype(np.float32)
    mask = rng.standard_normal((m, n)).astype(np.float32)
    return a, b, bias, res, mask


def epilogue_reference(a, b, bias, res, mask):
    """y, z in float64 and the error scale of y (|a| @ |b| + |bias|)."""
    acc = a.astype(np.float64) @ b.astype(np.float64)
    y = np.maximum(acc + bias, 0) + res
    z = np.where(mask > 0, y, 0)
    return y, z, np.abs(a).astype(np.float64) @ np.abs(b) + np.abs(bias) + np.abs(res)


def run_epilogue(f, m, n, k, seed=0, square_res=True):
    a, b, bias, res, mask = epilogue_inputs(m, n, k, seed, square_res)
    y = np.full((m, n), np.nan, np.float32)
    z = np.full((m, n), np.nan, np.float32)
    f(a, b, bias, res, mask, y, z)
    want_y, want_z, scale = epilogue_reference(
        a, b, bias, res if square_res else res.T, mask)
    tol = 2.0**-21 * max(8, np.sqrt(k)) * scale + 1e-30
    np.testing.assert_array_less(np.abs(y - want_y), tol)
    np.testing.assert_array_less(np.abs(z - want_z), tol)


#: K against chunk 16 and kc 32 (kc-epilogue 0: K is not made one block): all of K one
#: chunk (no sums wait), one block of chunks (they wait in a per-tile buffer), several
#: blocks (in the accumulator)
EPILOGUE_SIZES = [(13, 37, 9), (40, 64, 16), (21, 50, 30), (33, 19, 100), (1, 1, 1),
                  (64, 32, 64), (50, 10, 70)]
SMALL = dict(mr=3, nr=16, lanes=8, kc=32, chunk=16, mc=6, nc=32, kc_epilogue=0, kc_dynamic=0)


def test_epilogue_is_applied_at_the_store():
    """The members are gone as ops (their bodies sit in the nest, lane-wise on vectors),
    and so is the f64 accumulator when K fits one block."""
    text = str(transformed(epilogue_group(40, 64, 30), **SMALL))
    assert "linalg.generic" not in text and "fusion.group" not in text
    assert "memref<40x64xf64>" not in text and "memref<3x16xf64>" in text
    assert "arith.truncf" in text and ": vector<8xf64> to vector<8xf32>" in text
    assert "memory.vector_load %arg2" in text                   # the bias, by vectors
    several = str(transformed(epilogue_group(40, 64, 100), **SMALL))
    assert "linalg.generic" not in several and "memref<40x64xf64>" in several


@pytest.mark.parametrize("m, n, k", EPILOGUE_SIZES)
@pytest.mark.parametrize("widened", [True, False])
@pytest.mark.parametrize("one_block", [False, True])
def test_epilogue_matches_numpy(m, n, k, widened, one_block):
    options = SMALL | {"kc_epilogue": 1024 * one_block}
    run_epilogue(jit(epilogue_group(m, n, k, widened), **options), m, n, k, seed=m + n + k)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kc_dynamic", [0, 64])
def test_epilogue_dynamic_sizes(threads, kc_dynamic):
    """Dynamic M, N and K (the sums wait in the accumulator, in K blocks of kc = 32 or of
    `kc-dynamic`; K = 0 runs the members on the filled accumulator: relu(bias) + res)."""
    f = jit(epilogue_group(None, None, None), threads=threads,
            **SMALL | {"kc_dynamic": kc_dynamic})
    for m, n, k in [(5, 7, 3), (33, 40, 100), (17, 16, 0), (0, 5, 4), (9, 1, 40)]:
        run_epilogue(f, m, n, k, seed=m * n + k)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([16, 32]), st.sampled_from([4, 8, 16]), st.sampled_from([0, 24, 64]),
       st.integers(1, 2), st.lists(st.tuples(st.integers(0, 20), st.integers(1, 40),
                                             st.integers(0, 150)), min_size=3, max_size=5))
def test_epilogue_sums_waiting_by_blocks(kc, chunk, kc_dynamic, threads, shapes):
    """Dynamic M, N and K, blocks of kc or kc-dynamic (whichever is longer), chunks of
    `chunk`: a block's chunks add up in the per-tile buffer, the earlier blocks' in C, and
    the last block runs the epilogue on their sum (`Blis.block_step`), for K of no block,
    one chunk, one block and several, each tile whole or cut at M and N."""
    f = jit(epilogue_group(None, None, None), threads=threads,
            **SMALL | {"kc": kc, "chunk": chunk, "kc_dynamic": kc_dynamic})
    for i, (m, n, k) in enumerate(shapes):
        run_epilogue(f, m, n, k, seed=i + m * n + k)


@pytest.mark.parametrize("k", [9, 40, 100])
def test_epilogue_accumulator_filled_with_a_value(k):
    """An accumulator filled with 1.0, not zero: no fill is folded, every K block adds to
    C's value, the first too (one chunk, one block of chunks, several blocks; K dynamic,
    blocks of kc-dynamic 64), and the members, which need C's final values, stay a nest of
    their own."""
    src = epilogue_group(None, None, None).replace(
        "%zero = arith.constant 0.0 : f64", "%zero = arith.constant 1.0 : f64")
    assert str(transformed(src, **SMALL)).count("linalg.generic") == 2
    f = jit(src, **SMALL | {"kc_dynamic": 64})
    m, n = 13, 21
    a, b, bias, res, mask = epilogue_inputs(m, n, k, seed=k)
    y = np.full((m, n), np.nan, np.float32)
    z = np.full((m, n), np.nan, np.float32)
    f(a, b, bias, res, mask, y, z)
    want_y, want_z, scale = epilogue_reference(a, b, bias + 1.0, res, mask)
    tol = 2.0**-21 * max(8, np.sqrt(k)) * (scale + 1) + 1e-30
    np.testing.assert_array_less(np.abs(y - want_y), tol)
    np.testing.assert_array_less(np.abs(z - want_z), tol)


def test_epilogue_default_schedule():
    """The host's register tile and blocks (K = 300: two blocks of 256)."""
    for m, n, k in [(50, 100, 64), (70, 130, 300)]:
        run_epilogue(jit(epilogue_group(m, n, k)), m, n, k, seed=k)


def test_epilogue_without_vectors_is_its_own_nest():
    """A residual read transposed (stride M along N) cannot be a vector load: the
    epilogue stays its own nest (as a convolution's, below), with the same results."""
    src = epilogue_group(23, 45, 40, residual="(d1, d0)").replace(
        "%res: memref<23x45xf32>", "%res: memref<45x23xf32>").replace(
        "memref<45xf32>, memref<23x45xf32>", "memref<45xf32>, memref<45x23xf32>")
    text = str(transformed(src, **SMALL))
    assert text.count("linalg.generic") == 2 and "memref<23x45xf64>" in text
    run_epilogue(jit(src, **SMALL), 23, 45, 40, seed=7, square_res=False)


@pytest.mark.parametrize("m, k", [(5, 9), (5, 30), (None, 70), (None, None)])
def test_epilogue_interpreter_before_and_after(m, k):
    src = epilogue_group(m, 20, k)
    mm, kk = m or 6, k or 21
    args = epilogue_inputs(mm, 20, kk, seed=3)
    results = []
    for module in (parse_module(src), transformed(src, **SMALL)):
        y = np.full((mm, 20), np.nan, np.float32)
        z = np.full((mm, 20), np.nan, np.float32)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [*args, y, z])
        results.append((y, z))
    for before, after in zip(*results):
        np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)


def test_epilogue_not_applied_when_the_accumulator_is_read_later():
    """A member reading the accumulator at another point (transposed) stops the epilogue
    there; the accumulator is then needed whole: the group is dissolved as before. Where
    all of K is one chunk (8, chunk 16), its f64 accumulator is a float32 sum widened,
    which the member truncates: it is made float32 and the `truncf` goes; where K is
    several chunks (40), it stays f64."""
    for k, narrow in [(8, True), (40, False)]:
        src = epilogue_group(16, 16, k).replace(
            "affine_map<(d0, d1) -> (d0, d1)>,\n                                     "
            "affine_map<(d0, d1) -> (d1)>", "affine_map<(d0, d1) -> (d1, d0)>,\n"
            "                                     affine_map<(d0, d1) -> (d1)>")
        text = str(transformed(src, **SMALL))
        assert text.count("linalg.generic") == 2
        assert ("memref<16x16xf64>" in text) is not narrow
        assert ("memory.alloc() : memref<16x16xf32>" in text) is narrow
        assert ("arith.truncf" in text) is not narrow
        f = jit(src, **SMALL)
        a, b, bias, res, mask = epilogue_inputs(16, 16, k, seed=2)
        y = np.empty((16, 16), np.float32)
        z = np.empty((16, 16), np.float32)
        f(a, b, bias, res, mask, y, z)
        acc = (a.astype(np.float64) @ b).T
        np.testing.assert_allclose(y, np.maximum(acc + bias, 0) + res, rtol=1e-5, atol=1e-5)


def test_epilogue_keeps_the_accuracy_contract():
    """K = 1024 in one block (kc-epilogue): float32 chunk sums of 64 products added up in
    the per-tile f64 buffer, |error| <= log2(K) * eps32 * sum|a * b| (positive data), plus
    the final rounding to f32."""
    m, n, k = 64, 64, 1024
    src = epilogue_group(m, n, k)
    assert "memref<64x64xf64>" not in str(transformed(src))
    rng = np.random.default_rng(8)
    a, b = rng.random((m, k)).astype(np.float32), rng.random((k, n)).astype(np.float32)
    zeros, ones = np.zeros(n, np.float32), np.ones((m, n), np.float32)
    y, z = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
    jit(src)(a, b, zeros, np.zeros((m, n), np.float32), ones, y, z)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_less(np.abs(y - exact), np.log2(k) * 2.0**-23 * exact
                                 + exact * 2.0**-24)


#: WIDENED_CONV as lower-graph-to-linalg and linalg-fuse leave it: in a fusion.group whose
#: epilogue adds a bias per filter and applies relu
CONV_GROUP = """
func.func @f(%x: memref<?x3x10x10xf32>, %k: memref<5x3x3x3xf32>, %bias: memref<5xf32>,
             %o: memref<?x5x8x8xf32>) {
  %zero = arith.constant 0.0 : f64
  %fz = arith.constant 0.0 : f32
  %n = memory.dim %x, 0 : memref<?x3x10x10xf32>
  fusion.group {kind = "epilogue", outer_dims = 4 : i64} {
    %acc = memory.alloc(%n) : memref<?x5x8x8xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<?x5x8x8xf64>)
    linalg.generic {indexing_maps = [
        affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>,
        affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>,
        affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>],
        iterator_types = ["parallel", "parallel", "parallel", "parallel",
                          "reduction", "reduction", "reduction"]}
        ins(%x, %k : memref<?x3x10x10xf32>, memref<5x3x3x3xf32>)
        outs(%acc : memref<?x5x8x8xf64>) {
    ^bb0(%a: f32, %b: f32, %s: f64):
      %p = arith.mulf %a, %b : f32
      %w = arith.extf %p : f32 to f64
      %t = arith.addf %s, %w : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>,
                                     affine_map<(d0, d1, d2, d3) -> (d1)>,
                                     affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                    iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%acc, %bias : memref<?x5x8x8xf64>, memref<5xf32>) outs(%o : memref<?x5x8x8xf32>) {
    ^bb0(%a: f64, %c: f32, %b: f32):
      %t = arith.truncf %a : f64 to f32
      %u = arith.addf %t, %c : f32
      %r = arith.maximumf %u, %fz : f32
      linalg.yield %r : f32
    }
    memory.dealloc %acc : memref<?x5x8x8xf64>
  }
  return
}"""


def test_convolution_epilogue_stays_its_own_nest():
    """A convolution's N is its output pixels (two dims): its epilogue (bias per filter,
    relu) cannot run on vectors at the store, and element by element was measured slower
    (passes/blis/epilogue.py): it stays its own nest after the blocked one, reading the
    collapsed f64 temporary. The interpreter agrees before and after, the JIT with numpy,
    on 1 and 2 threads (the images split among them: 5 filters are one row block)."""
    after = transformed(CONV_GROUP, mr=2, nr=16, lanes=8, kc=16, chunk=8)
    text = str(after)
    assert "fusion.group" not in text and text.count("linalg.generic") == 1
    assert "memref<?x5x64xf64>" in text and "arith.maximumf" in text
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 10, 10)).astype(np.float32)
    k = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    results = []
    for module in (parse_module(CONV_GROUP), after):
        o = np.full((2, 5, 8, 8), np.nan, np.float32)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [x, k, bias, o])
        results.append(o)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-6)
    for n in (1, 3):
        xs = rng.standard_normal((n, 3, 10, 10)).astype(np.float32)
        exact, scale = conv_reference(xs, k, 1)
        want = np.maximum(exact + bias[:, None, None], 0)
        for threads in (1, 2):
            o = np.full(exact.shape, np.nan, np.float32)
            jit(CONV_GROUP, threads=threads)(xs, k, bias, o)
            assert np.all(np.abs(o - want) <= 2.0**-21 * scale + np.abs(want) * 2.0**-24)


SCALAR_MEMBER = """
func.func @f(%a: memref<?x40xf32>, %b: memref<40x48xf32>, %lr: memref<f32>, %w: memref<?x48xf32>,
             %out: memref<?x48xf32>) {
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f32
  %m = memory.dim %a, 0 : memref<?x40xf32>
  fusion.group {kind = "epilogue", outer_dims = 2 : i64} {
    %acc = memory.alloc(%m) : memref<?x48xf64>
    linalg.fill ins(%zero : f64) outs(%acc : memref<?x48xf64>)
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%a, %b : memref<?x40xf32>, memref<40x48xf32>) outs(%acc : memref<?x48xf64>) {
    ^bb0(%x: f32, %y: f32, %s: f64):
      %p = arith.mulf %x, %y : f32
      %e = arith.extf %p : f32 to f64
      %t = arith.addf %s, %e : f64
      linalg.yield %t : f64
    }
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> ()>,
                                     affine_map<(d0, d1) -> ()>,
                                     affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%acc, %half, %lr, %w : memref<?x48xf64>, f32, memref<f32>, memref<?x48xf32>)
        outs(%out : memref<?x48xf32>) {
    ^bb0(%g: f64, %h: f32, %l: f32, %v: f32, %o: f32):
      %t = arith.truncf %g : f64 to f32
      %u = arith.mulf %t, %h : f32
      %q = arith.mulf %u, %l : f32
      %r = arith.subf %v, %q : f32
      linalg.yield %r : f32
    }
    memory.dealloc %acc : memref<?x48xf64>
  }
  return
}"""


def test_epilogue_with_scalar_inputs():
    """An SGD-like update at the store: `w - lr[] * 0.5 * (a @ b)`, a scalar operand and a
    rank-0 buffer broadcast to every lane; JIT and interpreter against numpy."""
    after = transformed(SCALAR_MEMBER, **SMALL)
    assert "linalg.generic" not in str(after)
    rng = np.random.default_rng(12)
    a = rng.standard_normal((19, 40)).astype(np.float32)
    b = rng.standard_normal((40, 48)).astype(np.float32)
    lr, w = np.array(0.1, np.float32), rng.standard_normal((19, 48)).astype(np.float32)
    want = w - 0.1 * 0.5 * (a.astype(np.float64) @ b)
    out = np.full((19, 48), np.nan, np.float32)
    jit(SCALAR_MEMBER, **SMALL)(a, b, lr, w, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    out = np.full((19, 48), np.nan, np.float32)
    Interpreter(after).call(lookup_symbol_in(after, "f"), [a, b, lr, w, out])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


ROW_SCALED = """
func.func @f(%a: memref<?x{k}xf32>, %s: memref<?xf32>, %b: memref<{k}x{n}xf32>,
             %c: memref<?x{n}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}}
      ins(%a, %s, %b : memref<?x{k}xf32>, memref<?xf32>, memref<{k}x{n}xf32>)
      outs(%c : memref<?x{n}xf32>) {{
  ^bb0(%x: f32, %g: f32, %y: f32, %acc: f32):
    %xs = arith.mulf %x, %g : f32
    %p = arith.mulf %xs, %y : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }}
  return
}}"""


@pytest.mark.parametrize("m, n, k", [(1, 16, 8), (13, 48, 300), (40, 64, 33)])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_factor_on_rows_scales_the_sums(m, n, k, threads):
    """C += (a * s[m]) @ b with s on M only: the nest multiplies each row's sums by s (its
    partial sums of every K chunk and block, and the edge rows), computing what the op
    does within the blocked sum's rounding."""
    f = jit(ROW_SCALED.format(n=n, k=k), threads, mr=6, kc=64, chunk=32)
    a, b, _, _ = operands(m, n, k, seed=m)
    s = np.random.default_rng(k).standard_normal(m).astype(np.float32)
    c0 = np.random.default_rng(n).standard_normal((m, n)).astype(np.float32)
    got = c0.copy()
    f(a, s, b, got)
    check(got, a * s[:, None], b, c0, 1e-5)


PER_IMAGE = """
func.func @f(%a: memref<?x8x72xf32>, %b: memref<?x9x72xf32>, %c: memref<8x9xf64>) {{
  {fill}
  linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}}
      ins(%a, %b : memref<?x8x72xf32>, memref<?x9x72xf32>) outs(%c : memref<8x9xf64>) {{
  ^bb0(%x: f32, %y: f32, %s: f64):
    %p = arith.mulf %x, %y : f32
    %w = arith.extf %p : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  }}
  return
}}"""


@pytest.mark.parametrize("images", [0, 1, 5, 64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [False, True])
def test_one_row_block_over_images_splits_per_image(images, threads, fill):
    """A filter gradient's shape (M = 8 one row block, K = images x 72): the nest runs per
    image into partial sums, split between threads, then adds them into C, from 0 where
    the zero fill was folded (its fill gone), else onto C's value; no images leaves C as
    the fill or as it was."""
    src = PER_IMAGE.format(fill="%z = arith.constant 0.0 : f64\n  linalg.fill ins(%z : f64) "
                                "outs(%c : memref<8x9xf64>)" if fill else "")
    m = transformed(src)
    text = str(m)
    assert "memory.alloc(%" in text and "x8x9xf64>" in text, text      # the partial sums
    assert "linalg.fill" not in text
    PassManager.parse(LOWER).run(m)
    f = compile_module(m, 2, threads=threads).f
    rng = np.random.default_rng(images)
    a = rng.standard_normal((images, 8, 72)).astype(np.float32)
    b = rng.standard_normal((images, 9, 72)).astype(np.float32)
    c0 = rng.standard_normal((8, 9))
    got = c0.copy()
    f(a, b, got)
    want = (0 if fill else c0) + np.einsum("nfp,njp->fj", a.astype(np.float64),
                                           b.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_no_split_without_threads_or_for_little_work_per_image():
    """Sequential (`parallel=false`) or with less than `MIN_IMAGE_K` of K per image, the nest
    runs over all of K, as before: no partial sums."""
    src = PER_IMAGE.format(fill="")
    assert "x8x9xf64>" not in str(transformed(src, parallel=False))
    small = src.replace("72", "32")
    assert "x8x9xf64>" not in str(transformed(small))


# ---------------------------------------------------------------------------------------------
# A model whose weight is given transposed (PyTorch's Linear layout), through the whole ladder
# ---------------------------------------------------------------------------------------------

LINEAR = """
model linear {
  input x: f32[B, 784]
  input labels: i32[B]
  param w: f32[10, 784] = glorot(seed=3)
  param b: f32[10] = zeros
  loss = cross_entropy(x @ transpose(w, perm=[1, 0]) + b, labels)
  output loss
  train loss with sgd(lr=0.1)
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_weights_given_transposed_train_as_the_interpreter_does(threads, tmp_path):
    """`x @ transpose(w)` with w [10, 784]: the forward's dot nest copies w's rows rotated
    to x's aligned start (dot.py, B where it lies), the weight gradient dz^T @ x reads x in
    place in one tile of all 10 rows (nest.py `b_in_place`, `whole_m`). Four SGD steps at
    batches of 100, 7, 1 and 100, x at four places within a 64-byte line: the JIT's losses
    and weights are the interpreter's, to float32 rounding of reassociated sums."""
    path = tmp_path / "linear.irk"
    path.write_text(LINEAR)
    jit_model = irkit.load_model(path, engine="jit", threads=threads, cache=False)
    ref = irkit.load_model(path, engine="interpreter")
    rng = np.random.default_rng(threads)
    memory = np.zeros(100 * 784 + 16, np.float32)
    first = memory.ctypes.data // 4
    for step, (batch, into) in enumerate([(100, 0), (7, 5), (1, 11), (100, 3)]):
        start = (into - first) % 16
        x = memory[start:start + batch * 784].reshape(batch, 784)
        x[...] = rng.standard_normal((batch, 784))
        labels = rng.integers(0, 10, batch).astype(np.int32)
        got = jit_model.train_step(x=x, labels=labels)["loss"]
        want = ref.train_step(x=x, labels=labels)["loss"]
        np.testing.assert_allclose(got, want, rtol=2e-5, err_msg=f"step {step}")
        for name in ("w", "b"):
            np.testing.assert_allclose(jit_model.variables[name], ref.variables[name],
                                       rtol=1e-4, atol=1e-6, err_msg=f"{name}, step {step}")
