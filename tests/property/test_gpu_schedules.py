"""The GPU schedules (gpu-matmul-tiles, gpu-block-reduce) run by the interpreter's grid
semantics (blocks, threads in lockstep between barriers, workgroup memory) compute what the
interpreter computes on the structured ops they replace: random sizes (non-multiples of the
tiles and blocks included) and random tile options. Both reassociate sums (f32 chunks of
`tile-k` products; a tree over the block), so floats are compared within the error of a
reassociated sum, scaled by the sum of magnitudes, not bit for bit.

Then the nvptx ladder on examples/mlp.irk: its matmuls and row reductions become launches
with workgroup memory and barriers, the host functions allocate one arena each and nothing
else (device memory planning), and the PTX of every kernel passes ptxas (skipped without).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.tools import register_all

register_all()

EPS32 = 2.0 ** -23
MATMUL = """
func.func @f(%a: memref<{m}x{k}xf32>, %b: memref<{k}x{n}xf32>, %c: memref<{m}x{n}x{ce}>,
             %bias: memref<{n}xf32>, %y: memref<{m}x{n}xf32>) {{
  %zero = arith.constant 0.0 : {ce}
  %fzero = arith.constant 0.0 : f32
  fusion.group {{kind = "epilogue", outer_dims = 2 : i64}} {{
    linalg.fill ins(%zero : {ce}) outs(%c : memref<{m}x{n}x{ce}>)
    linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                     affine_map<(d0, d1, d2) -> (d2, d1)>,
                                     affine_map<(d0, d1, d2) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%a, %b : memref<{m}x{k}xf32>, memref<{k}x{n}xf32>) outs(%c : memref<{m}x{n}x{ce}>) {{
    ^bb0(%x: f32, %w: f32, %acc: {ce}):
      %p = arith.mulf %x, %w : f32
      {widen}
      %s = arith.addf %acc, {pw} : {ce}
      linalg.yield %s : {ce}
    }}
    {epilogue}
  }}
  return
}}"""
EPILOGUE = """
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d1)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%c, %bias : memref<{m}x{n}x{ce}>, memref<{n}xf32>) outs(%y : memref<{m}x{n}xf32>) {
    ^bb0(%v: {ce}, %bv: f32, %out: f32):
      {trunc}
      %t = arith.addf %v32, %bv : f32
      %r = arith.maximumf %t, %fzero : f32
      linalg.yield %r : f32
    }"""


def _run(module, args):
    Interpreter(module).call(lookup_symbol_in(module, "f"), args)
    return args


def _matmul_source(m, n, k, widened, epilogue):
    ce = "f64" if widened else "f32"
    ep = ""
    if epilogue:
        trunc = "%v32 = arith.truncf %v : f64 to f32" if widened else \
            "%v32 = arith.addf %v, %fzero : f32"
        ep = EPILOGUE.replace("{m}", str(m)).replace("{n}", str(n)).replace(
            "{ce}", ce).replace("{trunc}", trunc)
    widen = "%pw = arith.extf %p : f32 to f64" if widened else ""
    return MATMUL.format(m=m, n=n, k=k, ce=ce, widen=widen, pw="%pw" if widened else "%p",
                         epilogue=ep)


tiles = st.tuples(st.sampled_from([2, 4, 8]), st.sampled_from([2, 4, 8]),
                  st.sampled_from([1, 3, 4, 8]), st.sampled_from([1, 2]),
                  st.sampled_from([1, 2]))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 13), st.integers(1, 13), st.integers(0, 19), tiles, st.booleans(),
       st.booleans(), st.booleans(), st.integers(0, 2 ** 16))
def test_tiled_matmul_equals_the_interpreter(m, n, k, tile, widened, epilogue, dynamic, seed):
    """Static sizes fit the tiles to the problem where it is smaller; a dynamic M keeps
    `tile-m`, its rows outside M guarded."""
    tile_m, tile_n, tile_k, thread_m, thread_n = tile
    src = _matmul_source("?" if dynamic else m, n, k, widened, epilogue)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    ce = np.float64 if widened else np.float32

    def args():
        return [a.copy(), b.copy(), np.full((m, n), 7, ce), bias.copy(),
                np.full((m, n), 7, np.float32)]

    want = _run(parse_module(src), args())
    lowered = parse_module(src)
    options = f"tile-m={tile_m} tile-n={tile_n} tile-k={tile_k} thread-m={thread_m} " \
              f"thread-n={thread_n}"
    PassManager.parse(f"gpu-matmul-tiles{{{options}}}").run(lowered)
    lowered.verify()
    text = str(lowered)
    assert "linalg.generic" not in text.split("gpu.launch")[0] and "gpu.barrier" in text
    got = _run(lowered, args())
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + 1e-30
    tol = (8 if widened else 8 + k) * EPS32 * scale
    if epilogue:
        np.testing.assert_array_less(np.abs(got[4] - want[4]), tol + 2 * EPS32 * np.abs(want[4]))
    else:
        np.testing.assert_array_less(np.abs(got[2] - want[2]), tol)


SOFTMAX = """
func.func @f(%x: memref<{r}x{n}xf32>, %y: memref<{r}x{n}xf32>, %mx: memref<{r}xf32>,
             %sum: memref<{r}xf64>, %e: memref<{r}x{n}xf32>) {{
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f64
  fusion.group {{kind = "reduction", outer_dims = 1 : i64}} {{
    linalg.fill ins(%ninf : f32) outs(%mx : memref<{r}xf32>)
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}}
        ins(%x : memref<{r}x{n}xf32>) outs(%mx : memref<{r}xf32>) {{
    ^bb0(%a: f32, %m: f32):
      %0 = arith.maximumf %m, %a : f32
      linalg.yield %0 : f32
    }}
    linalg.fill ins(%zero : f64) outs(%sum : memref<{r}xf64>)
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>,
                                     affine_map<(d0, d1) -> (d0)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "reduction"]}}
        ins(%x, %mx : memref<{r}x{n}xf32>, memref<{r}xf32>)
        outs(%sum, %e : memref<{r}xf64>, memref<{r}x{n}xf32>) {{
    ^bb0(%a: f32, %m: f32, %s: f64, %o: f32):
      %0 = arith.subf %a, %m : f32
      %1 = math.exp %0 : f32
      %2 = arith.extf %1 : f32 to f64
      %3 = arith.addf %s, %2 : f64
      linalg.yield %3, %1 : f64, f32
    }}
    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                     affine_map<(d0, d1) -> (d0)>,
                                     affine_map<(d0, d1) -> (d0, d1)>],
                    iterator_types = ["parallel", "parallel"]}}
        ins(%e, %sum : memref<{r}x{n}xf32>, memref<{r}xf64>) outs(%y : memref<{r}x{n}xf32>) {{
    ^bb0(%a: f32, %s: f64, %o: f32):
      %0 = arith.truncf %s : f64 to f32
      %1 = arith.divf %a, %0 : f32
      linalg.yield %1 : f32
    }}
  }}
  return
}}"""

#: a per-channel sum (a batchnorm gradient's form): dims 0 and 2 reduced, flattened into one
#: row of r x 3 points whose size the threads' loop reads
CHANNEL_SUM = """
func.func @f(%x: memref<{r}x{n}x3xf32>, %y: memref<{n}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1)>],
                  iterator_types = ["reduction", "parallel", "reduction"]}}
      ins(%x : memref<{r}x{n}x3xf32>) outs(%y : memref<{n}xf32>) {{
  ^bb0(%a: f32, %s: f32):
    %0 = arith.addf %s, %a : f32
    linalg.yield %0 : f32
  }}
  return
}}"""

#: a lone column sum (the bias gradient's form): its parallel dim the block's point
COLUMN_SUM = """
func.func @f(%x: memref<{r}x{n}xf32>, %y: memref<{n}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}}
      ins(%x : memref<{r}x{n}xf32>) outs(%y : memref<{n}xf32>) {{
  ^bb0(%a: f32, %s: f32):
    %0 = arith.addf %s, %a : f32
    linalg.yield %0 : f32
  }}
  return
}}"""


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 40), st.sampled_from([1, 2, 4, 8, 32]),
       st.booleans(), st.integers(0, 2 ** 16))
def test_block_reductions_equal_the_interpreter(rows, n, block, dynamic, seed):
    shape = dict(r="?" if dynamic else rows, n="?" if dynamic else n)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, n)) * 3).astype(np.float32)
    x3 = rng.standard_normal((rows, n, 3)).astype(np.float32)
    for src, args in (
            (SOFTMAX, lambda: [x.copy(), np.zeros((rows, n), np.float32),
                               np.zeros(rows, np.float32), np.zeros(rows),
                               np.zeros((rows, n), np.float32)]),
            (COLUMN_SUM, lambda: [x.copy(), np.full(n, 2, np.float32)]),
            (CHANNEL_SUM, lambda: [x3.copy(), np.full(n, 2, np.float32)])):
        text = src.format(**shape)
        want = _run(parse_module(text), args())
        lowered = parse_module(text)
        PassManager.parse(f"gpu-block-reduce{{block-size={block}}}").run(lowered)
        lowered.verify()
        out = str(lowered)
        assert "linalg." not in out and "fusion.group" not in out
        if block > 1:
            assert "gpu.barrier" in out and "#gpu.address_space<workgroup>" in out
        got = _run(lowered, args())
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_allclose(g, w, rtol=8 * EPS32 * max(n, 3 * rows), atol=1e-6)


# ---------------------------------------------------------------------------------------------
# The nvptx ladder on a model
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlp_gpu_stage():
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.passes import pipeline
    top = compile_file(str(Path(__file__).resolve().parents[2] / "examples" / "mlp.irk"))
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(top)
    graph = next(iter(model_modules(top).values()))
    lowered = parse_module(str(graph))
    pipeline.pass_manager(pipeline.DEV_STAGE, "gpu", target="nvptx").run(lowered)
    return lowered


def test_mlp_schedules_and_device_memory(mlp_gpu_stage):
    kernels = [o for o in mlp_gpu_stage.walk() if o.name == "gpu.func"]
    shared = [k for k in kernels if "workgroup" in str(k).split("{", 1)[0]]
    # forward: 3 matmuls and the softmax / loss / bias-gradient reductions; train_step more
    assert len(shared) >= 6 and all("gpu.barrier" in str(k) for k in shared)
    for fn in [o for o in mlp_gpu_stage.walk() if o.name == "func.func"]:
        allocs = [o.name for o in fn.regions[0].blocks[0].ops
                  if o.name in ("memory.alloc", "memory.arena", "gpu.alloc")]
        assert allocs in ([], ["memory.arena"]), (fn.properties["sym_name"], allocs)


def test_mlp_kernels_pass_ptxas(mlp_gpu_stage):
    nvptx = pytest.importorskip("irkit.backends.nvptx")
    if nvptx.find_ptxas() is None:
        pytest.skip("ptxas is not installed")
    ptx, kernels = nvptx.emit_ptx(mlp_gpu_stage, "sm_90")
    assert ".shared" in ptx and "bar.sync" in ptx
    assert nvptx.ptxas(ptx, "sm_90")[:4] == b"\x7fELF"
