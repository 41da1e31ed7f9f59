"""The MLIR oracle harness (`tests/mlir_oracle.py`) against numpy.

Hand-written MLIR on tensors goes through MLIR's own lowering (`mlir-opt`, `mlir-translate`,
llvmlite, `cc`) and runs on numpy arrays; every expected value is computed here with numpy or
plain Python, never by the harness. Covered: elementwise and reduction `linalg.generic` with
`arith`/`math` bodies; `linalg.fill`, `matmul`, `transpose`, `broadcast`, `reduce`,
`conv_2d_nchw_fchw`, `pooling_nchw_max`; `tensor.extract_slice`, `insert_slice`,
`collapse_shape`, `expand_shape`, `extract`; f16, f32, f64, i1, i32, i64 and index; static and
dynamic shapes, 0-d tensors, scalar and several results; memref arguments written in place;
`tests/interop/linalg.mlir` (`@mlp_layer` and its neighbours); and the harness's own errors,
cache and skip. Each module compiles once (the harness caches per text).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mlir_oracle as mo
from mlir_oracle import MlirOracleError, MlirToolError, compile_mlir, run_mlir

LINALG_MLIR = Path(__file__).resolve().parents[1] / "interop" / "linalg.mlir"

F32 = dict(rtol=2e-6, atol=1e-6)
F64 = dict(rtol=1e-13, atol=1e-14)


@pytest.fixture(autouse=True)
def _toolchain():
    mo.require_toolchain()


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----- elementwise and reduction generics -----------------------------------------------------

ELEMENTWISE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @ew(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %init = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = math.tanh %a : f32
    %e = math.exp %b : f32
    %p = arith.mulf %t, %e : f32
    %l = math.log %b : f32
    %q = arith.maximumf %p, %l : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @erf_static(%x: tensor<7xf64>) -> tensor<7xf64> {
  %init = tensor.empty() : tensor<7xf64>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<7xf64>) outs(%init : tensor<7xf64>) {
  ^bb0(%a: f64, %o: f64):
    %e = math.erf %a : f64
    %s = math.sqrt %e : f64
    linalg.yield %s : f64
  } -> tensor<7xf64>
  return %r : tensor<7xf64>
}

func.func @row_sums(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %x, %c0 : tensor<?x?xf64>
  %e = tensor.empty(%m) : tensor<?xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%e : tensor<?xf64>) -> tensor<?xf64>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf64>) outs(%acc : tensor<?xf64>) {
  ^bb0(%a: f64, %s: f64):
    %t = arith.addf %a, %s : f64
    linalg.yield %t : f64
  } -> tensor<?xf64>
  return %r : tensor<?xf64>
}

func.func @bump_in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%x : tensor<4xf32>) {
  ^bb0(%o: f32):
    %t = arith.addf %o, %one : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("shape", [(3, 5), (1, 1), (0, 4), (17, 2)])
def test_elementwise_math_dynamic(shape):
    x = rng(1).standard_normal(shape).astype(np.float32)
    y = rng(2).uniform(0.1, 2.0, shape).astype(np.float32)
    (r,) = run_mlir(ELEMENTWISE, "ew", [x, y])
    assert r.shape == shape and r.dtype == np.float32
    np.testing.assert_allclose(r, np.maximum(np.tanh(x) * np.exp(y), np.log(y)), **F32)


def test_erf_sqrt_f64_static():
    x = np.linspace(0.0, 3.0, 7)
    (r,) = run_mlir(ELEMENTWISE, "erf_static", [x])
    np.testing.assert_allclose(r, np.sqrt([math.erf(v) for v in x]), **F64)


@pytest.mark.parametrize("shape", [(4, 6), (1, 9), (5, 0)])
def test_row_sums_reduction_generic(shape):
    x = rng(3).standard_normal(shape)
    (r,) = run_mlir(ELEMENTWISE, "row_sums", [x])
    np.testing.assert_allclose(r, x.sum(axis=1), **F64)


def test_tensor_argument_is_not_written():
    """A generic that bufferizes in place into its tensor argument works on a copy: the
    caller's array keeps its values."""
    x = np.arange(4, dtype=np.float32)
    (r,) = run_mlir(ELEMENTWISE, "bump_in_place", [x])
    np.testing.assert_array_equal(r, np.arange(4) + 1.0)
    np.testing.assert_array_equal(x, np.arange(4))


# ----- named linalg ops -----------------------------------------------------------------------

NAMED = """
func.func @matmul_static(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>)
                     outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

func.func @matmul_acc(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %c: tensor<?x?xf64>)
    -> tensor<?x?xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>)
                     outs(%c : tensor<?x?xf64>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %r = linalg.transpose ins(%x : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>)
                        permutation = [2, 0, 1]
  return %r : tensor<4x2x3xf32>
}

func.func @broadcast(%x: tensor<?xf32>, %rows: index) -> tensor<?x?x2xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n, %rows) : tensor<?x?x2xf32>
  %r = linalg.broadcast ins(%x : tensor<?xf32>) outs(%e : tensor<?x?x2xf32>)
                        dimensions = [1, 2]
  return %r : tensor<?x?x2xf32>
}

func.func @reduce_max(%x: tensor<?x6xf32>) -> tensor<6xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<6xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %r = linalg.reduce ins(%x : tensor<?x6xf32>) outs(%acc : tensor<6xf32>) dimensions = [0]
    (%in: f32, %m: f32) {
      %t = arith.maximumf %in, %m : f32
      linalg.yield %t : f32
    }
  return %r : tensor<6xf32>
}

func.func @conv(%img: tensor<2x3x9x8xf32>, %k: tensor<4x3x3x2xf32>) -> tensor<2x4x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3x3xf32>
  %o = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>,
                                 strides = dense<[3, 2]> : tensor<2xi64>}
      ins(%img, %k : tensor<2x3x9x8xf32>, tensor<4x3x3x2xf32>)
      outs(%o : tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}

func.func @pool_max(%x: tensor<1x2x7x7xf64>) -> tensor<1x2x3x3xf64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %w = tensor.empty() : tensor<3x3xf64>
  %e = tensor.empty() : tensor<1x2x3x3xf64>
  %o = linalg.fill ins(%ninf : f64) outs(%e : tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>,
                                strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x7x7xf64>, tensor<3x3xf64>)
      outs(%o : tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
  return %r : tensor<1x2x3x3xf64>
}
"""


def test_matmul_with_fill_static():
    a = rng(4).standard_normal((3, 5)).astype(np.float32)
    b = rng(5).standard_normal((5, 4)).astype(np.float32)
    (r,) = run_mlir(NAMED, "matmul_static", [a, b])
    np.testing.assert_allclose(r, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n", [(2, 3, 4), (5, 1, 1), (1, 7, 3)])
def test_matmul_accumulates_dynamic(m, k, n):
    a, b, c = (rng(i).standard_normal(s) for i, s in enumerate([(m, k), (k, n), (m, n)]))
    (r,) = run_mlir(NAMED, "matmul_acc", [a, b, c])
    np.testing.assert_allclose(r, c + a @ b, **F64)


def test_transpose_3d():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (r,) = run_mlir(NAMED, "transpose", [x])
    np.testing.assert_array_equal(r, x.transpose(2, 0, 1))


def test_broadcast_adds_dimensions():
    x = np.array([1.5, -2.0, 3.25], np.float32)
    (r,) = run_mlir(NAMED, "broadcast", [x, 4])
    np.testing.assert_array_equal(r, np.broadcast_to(x[:, None, None], (3, 4, 2)))


def test_reduce_max_over_dynamic_dim():
    x = rng(6).standard_normal((5, 6)).astype(np.float32)
    (r,) = run_mlir(NAMED, "reduce_max", [x])
    np.testing.assert_array_equal(r, x.max(axis=0))


def test_conv_2d_nchw_fchw_strided_dilated():
    img = rng(7).standard_normal((2, 3, 9, 8)).astype(np.float32)
    k = rng(8).standard_normal((4, 3, 3, 2)).astype(np.float32)
    (r,) = run_mlir(NAMED, "conv", [img, k])
    want = np.zeros((2, 4, 3, 3))
    for n, f, oh, ow in np.ndindex(want.shape):
        for c, kh, kw in np.ndindex(3, 3, 2):
            want[n, f, oh, ow] += img[n, c, 3 * oh + kh, 2 * ow + 2 * kw] * k[f, c, kh, kw]
    np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-5)


def test_pooling_nchw_max():
    x = rng(9).standard_normal((1, 2, 7, 7))
    (r,) = run_mlir(NAMED, "pool_max", [x])
    windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
    np.testing.assert_array_equal(r, windows.max(axis=(-2, -1)))


# ----- tensor ops -----------------------------------------------------------------------------

TENSOR = """
func.func @slice(%x: tensor<8x?xf32>, %off: index) -> tensor<3x2xf32> {
  %r = tensor.extract_slice %x[1, %off] [3, 2] [2, 1] : tensor<8x?xf32> to tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

func.func @insert(%dst: tensor<5x6xi64>, %src: tensor<2x3xi64>, %row: index) -> tensor<5x6xi64> {
  %r = tensor.insert_slice %src into %dst[%row, 0] [2, 3] [2, 2]
      : tensor<2x3xi64> into tensor<5x6xi64>
  return %r : tensor<5x6xi64>
}

func.func @collapse(%x: tensor<2x?x4xf32>) -> tensor<?x4xf32> {
  %r = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x?x4xf32> into tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

func.func @expand(%x: tensor<?xf32>, %rows: index) -> tensor<?x3x2xf32> {
  %r = tensor.expand_shape %x [[0, 1, 2]] output_shape [%rows, 3, 2]
      : tensor<?xf32> into tensor<?x3x2xf32>
  return %r : tensor<?x3x2xf32>
}

func.func @slice_then_expand(%x: tensor<12xi32>) -> tensor<2x3xi32> {
  %s = tensor.extract_slice %x[2] [6] [1] : tensor<12xi32> to tensor<6xi32>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 3] : tensor<6xi32> into tensor<2x3xi32>
  return %r : tensor<2x3xi32>
}
"""


@pytest.mark.parametrize("off", [0, 2, 3])
def test_extract_slice_strided_dynamic_offset(off):
    x = rng(10).standard_normal((8, 5)).astype(np.float32)
    (r,) = run_mlir(TENSOR, "slice", [x, off])
    np.testing.assert_array_equal(r, x[1:7:2, off:off + 2])


def test_insert_slice_i64():
    dst = np.arange(30, dtype=np.int64).reshape(5, 6)
    src = -np.arange(1, 7, dtype=np.int64).reshape(2, 3)
    (r,) = run_mlir(TENSOR, "insert", [dst, src, 1])
    want = dst.copy()
    want[1:5:2, 0:6:2] = src
    np.testing.assert_array_equal(r, want)


def test_collapse_and_expand_shape():
    x = rng(11).standard_normal((2, 5, 4)).astype(np.float32)
    (r,) = run_mlir(TENSOR, "collapse", [x])
    np.testing.assert_array_equal(r, x.reshape(10, 4))
    y = np.arange(24, dtype=np.float32)
    (r,) = run_mlir(TENSOR, "expand", [y, 4])
    np.testing.assert_array_equal(r, y.reshape(4, 3, 2))


def test_slice_then_expand_i32():
    x = np.arange(12, dtype=np.int32) * 7
    (r,) = run_mlir(TENSOR, "slice_then_expand", [x])
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, x[2:8].reshape(2, 3))


# ----- integers, booleans, scalars, 0-d tensors, several results ------------------------------

MIXED = """
#id = affine_map<(d0) -> (d0)>
func.func @int_ops(%a: tensor<?xi32>, %b: tensor<?xi32>, %k: i32) -> tensor<?xi32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xi32>
  %e = tensor.empty(%n) : tensor<?xi32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xi32>, tensor<?xi32>) outs(%e : tensor<?xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %p, %k : i32
    %m = arith.maxsi %s, %x : i32
    linalg.yield %m : i32
  } -> tensor<?xi32>
  return %r : tensor<?xi32>
}

func.func @int_matmul(%a: tensor<2x3xi64>, %b: tensor<3x2xi64>) -> tensor<2x2xi64> {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x2xi64>
  %c = linalg.fill ins(%zero : i64) outs(%e : tensor<2x2xi64>) -> tensor<2x2xi64>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xi64>, tensor<3x2xi64>)
                     outs(%c : tensor<2x2xi64>) -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}

func.func @stats(%x: tensor<?xf32>, %s: tensor<f32>)
    -> (tensor<f32>, tensor<?xi1>, f32, index, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %scale = tensor.extract %s[] : tensor<f32>
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%x : tensor<?xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%in: f32, %a: f32) {
      %t = arith.addf %in, %a : f32
      linalg.yield %t : f32
    }
  %eb = tensor.empty(%n) : tensor<?xi1>
  %en = tensor.empty(%n) : tensor<?xf32>
  %pos, %scaled = linalg.generic {indexing_maps = [#id, #id, #id],
                                  iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%eb, %en : tensor<?xi1>, tensor<?xf32>) {
  ^bb0(%v: f32, %o: i1, %q: f32):
    %c = arith.cmpf ogt, %v, %zero : f32
    %m = arith.mulf %v, %scale : f32
    linalg.yield %c, %m : i1, f32
  } -> (tensor<?xi1>, tensor<?xf32>)
  return %sum, %pos, %scale, %n, %scaled : tensor<f32>, tensor<?xi1>, f32, index, tensor<?xf32>
}

func.func @scalars(%a: f64, %b: i64) -> f64 {
  %f = arith.sitofp %b : i64 to f64
  %r = arith.mulf %a, %f : f64
  return %r : f64
}

func.func @two_scalars(%a: i32, %b: i32) -> (i32, i1) {
  %s = arith.subi %a, %b : i32
  %lt = arith.cmpi slt, %a, %b : i32
  return %s, %lt : i32, i1
}

func.func @nothing(%x: tensor<3xf32>) {
  return
}

func.func @half(%a: tensor<?xf16>, %b: tensor<?xf16>) -> tensor<?xf16> {
  %r = linalg.add ins(%a, %b : tensor<?xf16>, tensor<?xf16>) outs(%a : tensor<?xf16>)
      -> tensor<?xf16>
  return %r : tensor<?xf16>
}

func.func @half_scalar(%a: f16) -> f16 {
  return %a : f16
}
"""


def test_integer_generic_i32_with_scalar():
    a = np.array([3, -4, 7, 0, 2**20], np.int32)
    b = np.array([2, 5, -1, 9, 2**12], np.int32)
    (r,) = run_mlir(MIXED, "int_ops", [a, b, -3])
    want = np.maximum((a.astype(np.int64) * b - 3 + 2**31) % 2**32 - 2**31, a)   # wraps
    np.testing.assert_array_equal(r, want.astype(np.int32))


def test_integer_matmul_i64():
    a = np.array([[1, 2, 3], [-4, 5, 6]], np.int64)
    b = np.array([[7, 8], [9, -10], [11, 12]], np.int64) * 10**6
    (r,) = run_mlir(MIXED, "int_matmul", [a, b])
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, a @ b)


@pytest.mark.parametrize("n", [5, 1, 0])
def test_several_results_0d_bool_scalar_index(n):
    x = rng(12).standard_normal(n).astype(np.float32)
    s = np.array(2.5, np.float32)
    total, pos, scale, count, scaled = run_mlir(MIXED, "stats", [x, s])
    assert total.shape == () and total.dtype == np.float32
    np.testing.assert_allclose(total, x.sum(dtype=np.float64), **F32)
    assert pos.dtype == np.bool_
    np.testing.assert_array_equal(pos, x > 0)
    assert scale == 2.5 and scale.dtype == np.float32
    assert count == n and count.dtype == np.int64
    np.testing.assert_array_equal(scaled, x * np.float32(2.5))


def test_scalar_arguments_and_results():
    (r,) = run_mlir(MIXED, "scalars", [0.25, -12])
    assert r.dtype == np.float64 and r == -3.0
    d, lt = run_mlir(MIXED, "two_scalars", [np.int32(-2**31), 1])
    assert d == 2**31 - 1 and lt                              # wraps, and -2^31 < 1
    assert run_mlir(MIXED, "nothing", [np.zeros(3, np.float32)]) == []


def test_f16_tensors_but_not_f16_scalars():
    a = np.array([0.5, 1000.0, -3.25, 60000.0], np.float16)
    b = np.array([0.25, 0.1, 3.25, 10000.0], np.float16)
    (r,) = run_mlir(MIXED, "half", [a, b])
    assert r.dtype == np.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(r, a + b)               # 60000 + 10000 overflows to inf
    with pytest.raises(MlirOracleError, match="f16 scalars cannot cross ctypes"):
        run_mlir(MIXED, "half_scalar", [1.0])


# ----- tests/interop/linalg.mlir --------------------------------------------------------------


def test_interop_mlp_layer():
    text = LINALG_MLIR.read_text()
    for batch in (3, 1):
        x = rng(batch).standard_normal((batch, 784)).astype(np.float32)
        w = (rng(20).standard_normal((784, 10)) / 28).astype(np.float32)
        b = rng(21).standard_normal(10).astype(np.float32)
        (r,) = run_mlir(text, "mlp_layer", [x, w, b])
        want = np.maximum(x.astype(np.float64) @ w + b, 0.0)
        np.testing.assert_allclose(r, want, rtol=1e-4, atol=1e-5)


def test_interop_named_and_memref_functions():
    """The file's other functions: `@named` (matmul into %c, doubled by linalg.add, and a
    convolution), `@row_sum` and `@affine_loops`, which write their memref arguments."""
    module = compile_mlir(LINALG_MLIR.read_text())
    a, b, c = (rng(i).standard_normal(s).astype(np.float32)
               for i, s in enumerate([(4, 8), (8, 4), (4, 4)]))
    img = rng(30).standard_normal((1, 3, 32, 32)).astype(np.float32)
    k = rng(31).standard_normal((8, 3, 3, 3)).astype(np.float32)
    o = rng(32).standard_normal((1, 8, 30, 30)).astype(np.float32)
    doubled, conv = module("named", a, b, c, img, k, o)
    np.testing.assert_allclose(doubled, 2 * (c + a.astype(np.float64) @ b), rtol=1e-5, atol=1e-5)
    windows = np.lib.stride_tricks.sliding_window_view(img[0], (3, 3), axis=(1, 2))
    want = o + np.einsum("chwij,fcij->fhw", windows, k.astype(np.float64))[None]
    np.testing.assert_allclose(conv, want, rtol=1e-4, atol=1e-4)

    m = rng(33).standard_normal((3, 5))
    out = np.ones(3)
    assert module("row_sum", m, out) == []
    np.testing.assert_allclose(out, 1 + m.sum(axis=1), **F64)

    grid = rng(34).standard_normal((16, 16)).astype(np.float32)
    want = grid.copy()
    for i in range(16):
        for j in range(i, min(16, i + 5), 2):
            want[j, i] = want[i, j] * want[i, j]
    module("affine_loops", grid, 5)
    np.testing.assert_array_equal(grid, want)


# ----- the harness itself ---------------------------------------------------------------------


def test_compiled_once_per_text():
    assert compile_mlir(NAMED) is compile_mlir(NAMED)
    assert compile_mlir(NAMED).functions == ["broadcast", "conv", "matmul_acc",
                                             "matmul_static", "pool_max", "reduce_max",
                                             "transpose"]
    sig = compile_mlir(NAMED).signature("broadcast")
    assert [str(t) for t in sig.inputs] == ["tensor<?xf32>", "index"]
    assert [str(t) for t in sig.results] == ["tensor<?x?x2xf32>"]


def test_tool_errors_carry_stderr():
    bad = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y : tensor<4xf32>\n}"
    with pytest.raises(MlirToolError) as info:
        run_mlir(bad, "f", [np.zeros(4, np.float32)])
    assert info.value.tool == "mlir-opt"
    assert "<stdin>:2:10: error: use of undeclared SSA value name" in str(info.value)


@pytest.mark.parametrize("function,args,message", [
    ("nope", [], "no function @nope in the module"),
    ("matmul_static", [np.zeros((3, 5), np.float32)], "takes 2 arguments"),
    ("matmul_static", [np.zeros((3, 5)), np.zeros((5, 4), np.float32)], "expected dtype"),
    ("matmul_static", [np.zeros((3, 4), np.float32), np.zeros((5, 4), np.float32)],
     "shape (3, 4) does not match"),
    ("broadcast", [np.zeros(3, np.float32), 1.5], "expected a scalar of index"),
    ("broadcast", [np.zeros(3, np.float32), 2**70], "expected a scalar of index"),
])
def test_bad_calls_are_refused(function, args, message):
    with pytest.raises(MlirOracleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_mlir(NAMED)(function, *args)


def test_memref_argument_must_be_an_array():
    """A memref argument is written in place, so a list (which would be copied) is refused."""
    module = compile_mlir(LINALG_MLIR.read_text())
    with pytest.raises(MlirOracleError, match="writable C-contiguous"):
        module("row_sum", np.zeros((2, 2)), [0.0, 0.0])


def test_signature_parsing():
    text = """
    func.func @f(%a: tensor<?x3xf32> {test.tag = "x, y"}, %b: memref<2xi64>, %c: i1)
        -> (tensor<f64>, index) attributes {test.other = 1} {
      %c0 = arith.constant 0 : index
      %z = arith.constant dense<0.0> : tensor<f64>
      return %z, %c0 : tensor<f64>, index
    }
    func.func private @decl(f32) -> f32
    """
    assert mo.function_signatures(text) == {
        "f": (["tensor<?x3xf32>", "memref<2xi64>", "i1"], ["tensor<f64>", "index"])}
    assert mo.parse_type("tensor<?x3xf32>") == mo.ValueType("tensor", (None, 3), "f32")
    assert mo.parse_type("tensor<f64>") == mo.ValueType("tensor", (), "f64")
    for unsupported in ("memref<4xf32, strided<[2]>>", "tensor<*xf32>", "vector<4xf32>",
                        "memref<4xf32, 1>", "tensor<4xf32, #enc>", "tensor<4x?xvector<2xf32>>",
                        "tensor<4xcomplex<f32>>", "tensor<4xbf16>"):
        with pytest.raises(MlirOracleError, match="unsupported type"):
            mo.parse_type(unsupported)


def test_skips_without_tools(monkeypatch):
    monkeypatch.setattr(mo, "_find_tool", lambda name: None)
    mo.find_toolchain.cache_clear()
    try:
        with pytest.raises(pytest.skip.Exception, match="missing mlir-opt, mlir-translate"):
            run_mlir("func.func @g() {\n  return\n}", "g", [])
    finally:
        mo.find_toolchain.cache_clear()
