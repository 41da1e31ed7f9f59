"""lower-linalg-to-loop: structured ops on memrefs, run by the interpreter before the pass
(linalg's reference semantics, dialects/linalg/semantics.py) and after it (the loop nest),
must leave every buffer with the same bits: the emitter clones the body and folds each
reduction in the op's order, so nothing is allowed to round differently. A few lowered
functions are also compiled by the LLVM backend and compared with numpy.

`tests/property/test_lower_linalg_to_loop_generics.py` does the same for random generics.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.diagnostics import IRError
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.dialects.memory import LoadOp
from irkit.passes.lower_linalg_to_loop import LowerLinalgToLoop


def lower(src: str, **options):
    """`src` parsed and lowered (verified after the pass); its text reads back as itself
    and holds no linalg op."""
    m = parse_module(src)
    PassManager().add(LowerLinalgToLoop(**options)).run(m)
    text = str(m)
    assert str(parse_module(text)) == text
    assert "linalg." not in text
    return m


def run(m, fn: str, arrays: list) -> list[np.ndarray]:
    """Call `fn` on copies of `arrays` (memrefs are written in place); the buffers after."""
    f = lookup_symbol_in(m, fn)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    with np.errstate(all="ignore"):
        Interpreter(m).call(f, copies)
    return copies


def same_bits(got, want, what="") -> None:
    """Equal arrays, NaN where NaN (and -0.0 where -0.0)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind == "f":
        assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), \
            f"{what}\ngot  {got}\nwant {want}"
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def rand(*shape, dtype=np.float32, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.normal(size=shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


def check(src: str, fn: str, arrays: list, parallel: bool = True) -> list[np.ndarray]:
    """The interpreter on `src` and on its lowering agree bit for bit on every buffer;
    returns the buffers after the call."""
    want = run(parse_module(src), fn, arrays)
    got = run(lower(src, parallel=parallel), fn, arrays)
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, np.ndarray):
            same_bits(g, w, f"argument #{i} of @{fn}")
    return got


# ---------------------------------------------------------------------------------------------
# One op each, before and after
# ---------------------------------------------------------------------------------------------

CASES = {
    "broadcast_add": ("""
func.func @f(%a: memref<?x4xf32>, %b: memref<4xf32>, %o: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<?x4xf32>, memref<4xf32>) outs(%o : memref<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}""", lambda: [rand(5, 4), rand(4, seed=1), rand(5, 4, seed=2)]),
    "column_sum": ("""
func.func @f(%a: memref<?x?xf32>, %o: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<?x?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}""", lambda: [rand(37, 3) * 1e3, rand(3, seed=1)]),
    "matmul": ("""
func.func @f(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}""", lambda: [rand(3, 17), rand(17, 5, seed=1), rand(3, 5, seed=2)]),
    "matmul_transposed_a": ("""
func.func @f(%a: memref<8x4xf32>, %b: memref<8x6xf32>, %c: memref<4x6xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<8x4xf32>, memref<8x6xf32>) outs(%c : memref<4x6xf32>)
  return
}""", lambda: [rand(8, 4), rand(8, 6, seed=1), rand(4, 6, seed=2)]),
    "batch_matmul_i32": ("""
func.func @f(%a: memref<2x3x4xi32>, %b: memref<2x4x5xi32>, %c: memref<2x3x5xi32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xi32>, memref<2x4x5xi32>)
      outs(%c : memref<2x3x5xi32>)
  return
}""", lambda: [rand(2, 3, 4, dtype=np.int32), rand(2, 4, 5, dtype=np.int32, seed=1),
               rand(2, 3, 5, dtype=np.int32, seed=2)]),
    "argmax": ("""
func.func @f(%a: memref<4x?xf32>, %v: memref<4xf32>, %i: memref<4xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x?xf32>) outs(%v, %i : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %best: f32, %at: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %nv = arith.select %gt, %x, %best : f32
    %ni = arith.select %gt, %ki, %at : i64
    linalg.yield %nv, %ni : f32, i64
  }
  return
}""", lambda: [rand(4, 9), np.full(4, -np.inf, np.float32), np.zeros(4, np.int64)]),
    "zero_d_input_and_output": ("""
func.func @f(%a: memref<?x3xf32>, %s: memref<f32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>,
                                   affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a, %s : memref<?x3xf32>, memref<f32>) outs(%o : memref<f32>) {
  ^bb0(%x: f32, %k: f32, %acc: f32):
    %m = arith.mulf %x, %k : f32
    %s2 = arith.addf %acc, %m : f32
    linalg.yield %s2 : f32
  }
  return
}""", lambda: [rand(6, 3), np.float32(1.5) * np.ones((), np.float32), rand(seed=2)]),
    "fill": ("""
func.func @f(%o: memref<?x4xi32>, %v: i32) {
  linalg.fill ins(%v : i32) outs(%o : memref<?x4xi32>)
  return
}""", lambda: [rand(3, 4, dtype=np.int32), 7]),
    "transpose_3d": ("""
func.func @f(%a: memref<2x3x4xf32>, %o: memref<4x2x3xf32>) {
  linalg.transpose ins(%a : memref<2x3x4xf32>) outs(%o : memref<4x2x3xf32>)
      permutation = [2, 0, 1]
  return
}""", lambda: [rand(2, 3, 4), rand(4, 2, 3, seed=1)]),
    "broadcast": ("""
func.func @f(%a: memref<3xf32>, %o: memref<3x?xf32>) {
  linalg.broadcast ins(%a : memref<3xf32>) outs(%o : memref<3x?xf32>) dimensions = [1]
  return
}""", lambda: [rand(3), rand(3, 5, seed=1)]),
    "reduce_two_dims": ("""
func.func @f(%a: memref<3x?x4xf32>, %o: memref<?xf32>) {
  linalg.reduce { arith.maximumf } ins(%a : memref<3x?x4xf32>) outs(%o : memref<?xf32>)
      dimensions = [0, 2]
  return
}""", lambda: [rand(3, 5, 4), np.full(5, -np.inf, np.float32)]),
    "map_named_elementwise": ("""
func.func @f(%a: memref<6xf32>, %b: memref<6xf32>, %o: memref<6xf32>, %e: memref<6xf32>) {
  linalg.map { arith.subf } ins(%a, %b : memref<6xf32>, memref<6xf32>) outs(%o : memref<6xf32>)
  linalg.exp ins(%o : memref<6xf32>) outs(%e : memref<6xf32>)
  linalg.div ins(%e, %b : memref<6xf32>, memref<6xf32>) outs(%o : memref<6xf32>)
  return
}""", lambda: [rand(6), rand(6, seed=1), rand(6, seed=2), rand(6, seed=3)]),
    "conv_2d_nchw_fchw": ("""
func.func @f(%x: memref<2x3x9x8xf32>, %k: memref<4x3x3x2xf32>, %o: memref<2x4x3x3xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>,
                            strides = dense<[3, 2]> : tensor<2xi64>}
      ins(%x, %k : memref<2x3x9x8xf32>, memref<4x3x3x2xf32>) outs(%o : memref<2x4x3x3xf32>)
  return
}""", lambda: [rand(2, 3, 9, 8), rand(4, 3, 3, 2, seed=1), rand(2, 4, 3, 3, seed=2)]),
    "pooling_max_and_sum": ("""
func.func @f(%x: memref<1x2x6x7xf32>, %w: memref<2x3xf32>, %m: memref<1x2x3x3xf32>,
             %s: memref<1x2x5x5xf32>) {
  linalg.pooling_nchw_max {strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : memref<1x2x6x7xf32>, memref<2x3xf32>) outs(%m : memref<1x2x3x3xf32>)
  linalg.pooling_nchw_sum ins(%x, %w : memref<1x2x6x7xf32>, memref<2x3xf32>)
      outs(%s : memref<1x2x5x5xf32>)
  return
}""", lambda: [rand(1, 2, 6, 7), rand(2, 3, seed=1), np.full((1, 2, 3, 3), -np.inf, np.float32),
               rand(1, 2, 5, 5, seed=2)]),
    "running_sum_per_iteration": ("""
func.func @f(%a: memref<3x5xf32>, %o: memref<3x5xf32>, %t: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<3x5xf32>) outs(%o, %t : memref<3x5xf32>, memref<3xf32>) {
  ^bb0(%x: f32, %old: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    %d = arith.mulf %s, %old : f32
    linalg.yield %d, %s : f32, f32
  }
  return
}""", lambda: [rand(3, 5), rand(3, 5, seed=1), rand(3, seed=2)]),
    "outer_reduction_output": ("""
func.func @f(%a: memref<2x3x4xf32>, %o: memref<2x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%a : memref<2x3x4xf32>) outs(%o : memref<2x3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}""", lambda: [rand(2, 3, 4), rand(2, 3, seed=1)]),
    "index_in_nested_region": ("""
func.func @f(%o: memref<3x?xi64>) {
  %c1 = arith.constant 1 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%o : memref<3x?xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %big = arith.cmpi sgt, %i, %c1 : index
    %r = loop.if %big -> (i64) {
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %s = arith.addi %ji, %out : i64
      loop.yield %s : i64
    } else {
      loop.yield %out : i64
    }
    linalg.yield %r : i64
  }
  return
}""", lambda: [rand(3, 4, dtype=np.int64)]),
    "gather_body_load": ("""
func.func @f(%t: memref<10x4xf32>, %i: memref<?xi32>, %o: memref<?x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%i : memref<?xi32>) outs(%o : memref<?x4xf32>) {
  ^bb0(%k: i32, %out: f32):
    %ki = arith.index_cast %k : i32 to index
    %j = linalg.index 1 : index
    %v = memory.load %t[%ki, %j] : memref<10x4xf32>
    linalg.yield %v : f32
  }
  return
}""", lambda: [rand(10, 4), np.array([3, 0, 9, 3, 5], np.int32), rand(5, 4, seed=1)]),
    # MLIR's mod is never negative and floordiv/ceildiv round down/up, also for the negative
    # values `d0 - 2` and `d0 - 5` take here.
    "affine_mod_floordiv_ceildiv": ("""
func.func @f(%a: memref<4x7xf32>, %b: memref<4xf32>, %o: memref<8x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ((d0 - 5) floordiv 3 + 2,
                                                          (d0 - 5) ceildiv 2 + 3 + d1)>,
                                   affine_map<(d0, d1) -> ((d0 - 2) mod 4)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x7xf32>, memref<4xf32>) outs(%o : memref<8x3xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}""", lambda: [rand(4, 7), rand(4, seed=1), rand(8, 3, seed=2)]),
    "generic_on_zero_d_only": ("""
func.func @f(%a: memref<f32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%a : memref<f32>) outs(%o : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.subf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}""", lambda: [rand(seed=1), rand(seed=2)]),
}


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "for"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_lowered_op_gives_the_interpreters_bits(name, parallel):
    src, make = CASES[name]
    check(src, "f", make(), parallel)


def test_empty_loops_leave_the_outputs_alone():
    """A reduction over no element leaves its output as it was (the carried value is the
    loaded one, stored back); a parallel range of 0 runs nothing."""
    src, _ = CASES["column_sum"]
    out = rand(3, seed=1)
    got = check(src, "f", [rand(0, 3), out])
    same_bits(got[1], out)
    got = check(src, "f", [rand(4, 0), rand(0, seed=1)])
    assert got[1].shape == (0,)


SUM_OF_SHIFTED = """
func.func @f(%a: memref<?x{m}xf32>, %b: memref<?xf32>, %o: memref<?xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0 + 1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}}
      ins(%a, %b : memref<?x{m}xf32>, memref<?xf32>) outs(%o : memref<?xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }}
  return
}}"""


def _load_parent(m, buffer_index: int) -> type:
    """The class of the op holding the load of argument `buffer_index` of @f."""
    f = lookup_symbol_in(m, "f")
    arg = f.regions[0].blocks[0].args[buffer_index]
    (load,) = [u.owner for u in arg.uses if isinstance(u.owner, LoadOp)]
    return type(load.parent_op)


def test_load_not_always_in_bounds_stays_below_a_loop_that_may_not_run():
    """`%b[d0 + 1]` is read only when the reduction loop runs: with an empty reduction the
    op never reads it, and %b may be too short. Hoisted above a loop of unknown extent it
    would read out of bounds (an interpreter error); with an extent known non-zero it is
    hoisted."""
    dynamic = SUM_OF_SHIFTED.format(m="?")
    assert _load_parent(lower(dynamic), 1) is ForOp
    got = run(lower(dynamic), "f", [rand(4, 0), rand(1, seed=1), rand(4, seed=2)])
    same_bits(got[2], rand(4, seed=2))
    check(dynamic, "f", [rand(4, 3), rand(5, seed=1), rand(4, seed=2)])
    static = SUM_OF_SHIFTED.format(m="3")
    assert _load_parent(lower(static), 1) is ParallelOp
    check(static, "f", [rand(4, 3), rand(5, seed=1), rand(4, seed=2)])


def test_projection_loads_are_hoisted_even_above_loops_that_may_not_run():
    """A load at bare loop indices is in bounds wherever those loops are (the op's operand
    sizes are its loop ranges), so it leaves the reduction loop even when that may be
    empty."""
    src = SUM_OF_SHIFTED.format(m="?").replace("(d0 + 1)", "(d0)")
    m = lower(src)
    assert _load_parent(m, 1) is ParallelOp
    got = run(m, "f", [rand(4, 0), rand(4, seed=1), rand(4, seed=2)])
    same_bits(got[2], rand(4, seed=2))


def test_float_bodies_are_cloned_unchanged():
    """The body's ops keep their order and their flags: fastmath flags the body has stay,
    none are added."""
    src = CASES["matmul"][0].replace(
        "linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)",
        """linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }""")
    text = str(lower(src))
    assert "arith.mulf %" in text and "fastmath<contract> : f32" in text
    assert text.count("fastmath") == 1
    assert text.index("arith.mulf") < text.index("arith.addf")


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------


def test_op_on_tensors_is_a_located_error_naming_it():
    src = """
func.func @f(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.exp ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}"""
    with pytest.raises(IRError) as e:
        lower(src)
    head = e.value.render().split("\n")[0]
    assert head.startswith("<stdin>:3:8: error: 'linalg.exp' is left over"), head
    assert "bufferize first" in head


def test_division_by_a_loop_index_is_a_located_error():
    """irkit's affine parser takes `d0 mod d1`, which MLIR rejects as not affine."""
    src = """
func.func @f(%a: memref<4xf32>, %o: memref<8x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 mod d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4xf32>) outs(%o : memref<8x3xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  return
}"""
    with pytest.raises(IRError) as e:
        lower(src)
    head = e.value.render().split("\n")[0]
    assert head.startswith("<stdin>:3:3: error: 'linalg.generic' op indexing map expression "
                           "'d0 mod d1' divides by a loop index"), head


# ---------------------------------------------------------------------------------------------
# Compiled by the LLVM backend
# ---------------------------------------------------------------------------------------------


def _compile(src: str, parallel: bool = True):
    pytest.importorskip("llvmlite")
    from irkit.backends.llvm_cpu import compile_module
    return compile_module(lower(src, parallel=parallel))


def _conv_reference(x, k, out, strides, dilations):
    """NCHW / FCHW convolution accumulated into `out`, in float64."""
    n, c, _, _ = x.shape
    f, _, kh, kw = k.shape
    res = out.astype(np.float64)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            rows = i * strides[0] + np.arange(kh) * dilations[0]
            cols = j * strides[1] + np.arange(kw) * dilations[1]
            window = x[:, :, rows][:, :, :, cols].astype(np.float64)      # n, c, kh, kw
            res[:, :, i, j] += np.einsum("nchw,fchw->nf", window, k.astype(np.float64))
    return res


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "for"])
def test_compiled_matmul_and_conv_match_numpy(parallel):
    jit = _compile(CASES["matmul"][0], parallel)
    a, b, c = rand(7, 33), rand(33, 5, seed=1), rand(7, 5, seed=2)
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    got = c.copy()
    jit.f(a, b, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    same_bits(got, run(lower(CASES["matmul"][0]), "f", [a, b, c])[2])

    jit = _compile(CASES["conv_2d_nchw_fchw"][0], parallel)
    x, k, o = CASES["conv_2d_nchw_fchw"][1]()
    want = _conv_reference(x, k, o, (3, 2), (1, 2))
    got = o.copy()
    jit.f(x, k, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_compiled_reductions_index_and_fill_match_numpy():
    a = rand(4, 9)
    jit = _compile(CASES["argmax"][0])
    v, i = np.full(4, -np.inf, np.float32), np.zeros(4, np.int64)
    jit.f(a, v, i)
    np.testing.assert_array_equal(i, np.argmax(a, axis=1))
    np.testing.assert_array_equal(v, np.max(a, axis=1))

    jit = _compile(CASES["column_sum"][0])
    a, o = rand(37, 3), rand(3, seed=1)
    got = o.copy()
    jit.f(a, got)
    np.testing.assert_allclose(got, o + a.sum(axis=0, dtype=np.float64), rtol=1e-5, atol=1e-5)

    jit = _compile(CASES["zero_d_input_and_output"][0])
    a, s, o = rand(6, 3), np.full((), 1.5, np.float32), rand(seed=2)
    got = o.copy()
    jit.f(a, s, got)
    np.testing.assert_allclose(got, o + 1.5 * a.astype(np.float64).sum(), rtol=1e-5)

    jit = _compile(CASES["fill"][0])
    o = np.zeros((3, 4), np.int32)
    jit.f(o, 7)
    np.testing.assert_array_equal(o, np.full((3, 4), 7, np.int32))


def test_compiled_affine_indices_and_transpose_match_numpy():
    jit = _compile(CASES["affine_mod_floordiv_ceildiv"][0])
    a, b, o = CASES["affine_mod_floordiv_ceildiv"][1]()
    got = o.copy()
    jit.f(a, b, got)
    d0, d1 = np.meshgrid(np.arange(8), np.arange(3), indexing="ij")
    want = a[(d0 - 5) // 3 + 2, -((5 - d0) // 2) + 3 + d1] + b[(d0 - 2) % 4]
    same_bits(got, want.astype(np.float32))

    jit = _compile(CASES["transpose_3d"][0], parallel=False)
    a = rand(2, 3, 4)
    got = np.zeros((4, 2, 3), np.float32)
    jit.f(a, got)
    same_bits(got, np.transpose(a, (2, 0, 1)))

