"""Reductions, argmax, softmax, losses and matmul of the graph dialect (graph_reduce.py,
graph_loss.py, graph_linalg.py).

Each op runs through the IR (printed, parsed, verified against a result type the test works
out itself, interpreted) on hypothesis-drawn inputs, and is compared with an independent
formula written here: explicit loops over rows and batch elements, float64 arithmetic,
`np.einsum` for matmul. The shape functions are also called directly with DSL symbols, as
the frontend calls them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from irkit.dialects.graph import ShapeError, TensorSpec
from irkit.dialects.graph.matmul import MatmulOp
from irkit.dialects.graph.loss import CrossEntropyOp, LogSoftmaxOp, MseOp, SoftmaxOp
from irkit.dialects.graph.reduce import (
    ArgmaxOp, ReduceMaxOp, ReduceMeanOp, ReduceMinOp, ReduceSumOp,
)
from irkit.interpreter import InterpreterError, interpret
from irkit.parser import parse_module
from irkit.passes.canonicalize import Canonicalize
from irkit.printer import print_op
from irkit.types import F32, F64, I1, I32, I64, RankedTensorType

SETTINGS = settings(max_examples=50, deadline=None)
_DTYPES = {np.dtype(np.float32): F32, np.dtype(np.float64): F64, np.dtype(np.int32): I32,
           np.dtype(np.int64): I64}


# ----- running one op -------------------------------------------------------------------------


def _ttype(shape, dtype) -> str:
    return str(RankedTensorType(tuple(shape), dtype))


def _module(op: str, args, result_shape, result_dtype, attrs: str = ""):
    ins = [_ttype(a.shape, _DTYPES[a.dtype]) for a in args]
    out = _ttype(result_shape, result_dtype)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(ins))
    names = ", ".join(f"%a{i}" for i in range(len(args)))
    attrs = f" {{{attrs}}}" if attrs else ""
    return parse_module(f"func.func @f({params}) -> {out} {{\n"
                        f"  %r = graph.{op} {names}{attrs} : ({', '.join(ins)}) -> {out}\n"
                        f"  return %r : {out}\n}}\n")


def run_op(op: str, args: list, result_shape, result_dtype=None, attrs: str = ""):
    """`op` on `args` through the IR. The verifier checks the op's inferred type against
    `result_shape`/`result_dtype` (worked out by the test), and the value must have exactly
    that dtype and shape, as a numpy array (0-d for scalars)."""
    result_dtype = result_dtype or _DTYPES[args[0].dtype]
    m = _module(op, args, result_shape, result_dtype, attrs)
    m.verify()
    r = interpret(m, "f", *args)
    assert isinstance(r, np.ndarray)
    assert r.shape == tuple(result_shape)
    assert _DTYPES[r.dtype] is result_dtype
    return r


def _axes_attr(axes, keepdims) -> str:
    inner = f"array<i64: {', '.join(map(str, axes))}>" if axes else "array<i64>"
    return f"axes = {inner}, keepdims = {'true' if keepdims else 'false'}"


def _floats(shape, lo=-10.0, hi=10.0, dtype=np.float32):
    return hnp.arrays(dtype, shape, elements=st.floats(lo, hi, width=32))


# ----- reductions -----------------------------------------------------------------------------


def _rows(x: np.ndarray, axes: tuple) -> tuple[np.ndarray, tuple]:
    """x with the reduced axes moved last and flattened into one: shape (kept..., k)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    return moved.reshape(tuple(x.shape[i] for i in kept) + (-1,)), tuple(kept)


def reduce_ref(kind: str, x: np.ndarray, axes: tuple, keepdims: bool) -> np.ndarray:
    """Reduction by an explicit loop over every kept position, in float64."""
    ax = tuple(sorted(a % x.ndim for a in axes)) if axes else tuple(range(x.ndim))
    rows, kept = _rows(x, ax)
    out = np.empty(rows.shape[:-1], np.float64)
    for idx in itertools.product(*(range(n) for n in out.shape)):
        vals = [float(v) for v in rows[idx]]
        out[idx] = {"sum": sum(vals), "mean": sum(vals) / len(vals) if vals else np.nan,
                    "max": max(vals), "min": min(vals)}[kind]
    if keepdims:
        out = out.reshape(tuple(1 if i in ax else n for i, n in enumerate(x.shape)))
    return out


@st.composite
def reduction_case(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    axes = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    # Spell some axes from the end, as the DSL does.
    axes = tuple(a - len(shape) if draw(st.booleans()) else a for a in axes)
    x = draw(_floats(shape))
    return x, axes, draw(st.booleans())


_REDUCE_OPS = [("sum", "reduce_sum"), ("mean", "reduce_mean"), ("max", "reduce_max"),
               ("min", "reduce_min")]


@pytest.mark.parametrize("kind,op", _REDUCE_OPS)
@SETTINGS
@given(case=reduction_case())
def test_reduction_matches_loop(kind, op, case):
    x, axes, keepdims = case
    want = reduce_ref(kind, x, axes, keepdims)
    got = run_op(op, [x], want.shape, attrs=_axes_attr(axes, keepdims))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@SETTINGS
@given(x=hnp.arrays(np.int32, st.tuples(st.integers(1, 4), st.integers(1, 4)),
                    elements=st.integers(-2**31, 2**31 - 1)))
def test_integer_sum_wraps_in_its_type(x):
    """An i32 sum stays i32 and wraps modulo 2^32, as the compiled code's adds do."""
    want = np.array([(sum(int(v) for v in row) + 2**31) % 2**32 - 2**31 for row in x])
    got = run_op("reduce_sum", [x], (x.shape[0],), attrs=_axes_attr((1,), False))
    assert got.tolist() == want.tolist()


def test_scalar_reduction_is_identity():
    x = np.asarray(3.5, np.float32)
    for _, op in _REDUCE_OPS:
        assert run_op(op, [x], ()) == np.float32(3.5)


def test_nan_propagates_and_empty_mean_is_nan():
    x = np.array([[1.0, np.nan, 2.0]], np.float32)
    assert np.isnan(run_op("reduce_max", [x], (1,), attrs=_axes_attr((1,), False))[0])
    assert np.isnan(run_op("reduce_min", [x], ()))
    e = np.zeros((2, 0), np.float32)
    assert np.isnan(run_op("reduce_mean", [e], (2,), attrs=_axes_attr((1,), False))).all()
    with pytest.raises(InterpreterError, match="reduce_max"):
        run_op("reduce_max", [e], (2,), attrs=_axes_attr((1,), False))


# ----- argmax ---------------------------------------------------------------------------------


@SETTINGS
@given(x=hnp.arrays(np.float32, st.tuples(st.integers(1, 4), st.integers(1, 5)),
                    elements=st.sampled_from([-1.0, 0.0, 2.0, 3.0])),
       axis=st.sampled_from([0, 1, -1, -2]), keepdims=st.booleans())
def test_argmax_first_index_of_max(x, axis, keepdims):
    """Small value sets make ties common: the first maximal index wins."""
    a = axis % 2
    rows = x.T if a == 0 else x
    want = np.array([list(r).index(max(r)) for r in rows], np.int64)
    shape = tuple(1 if i == a else n for i, n in enumerate(x.shape)) if keepdims \
        else (x.shape[1 - a],)
    got = run_op("argmax", [x], shape, I64,
                 f"axis = {axis} : i64, keepdims = {str(keepdims).lower()}")
    assert got.reshape(-1).tolist() == want.tolist()


# ----- softmax --------------------------------------------------------------------------------


@SETTINGS
@given(x=_floats(st.tuples(st.integers(1, 4), st.integers(1, 6)), -20.0, 20.0),
       axis=st.sampled_from([0, 1, -1]))
def test_softmax_matches_definition(x, axis):
    """exp(x) / sum(exp(x)) in float64 for moderate x; every slice along axis sums to 1."""
    e = np.exp(x.astype(np.float64))
    want = e / e.sum(axis=axis, keepdims=True)
    got = run_op("softmax", [x], x.shape, attrs=f"axis = {axis} : i64")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got.sum(axis=axis), 1.0, rtol=1e-5)
    lsm = run_op("log_softmax", [x], x.shape, attrs=f"axis = {axis} : i64")
    np.testing.assert_allclose(lsm, np.log(want), rtol=1e-5, atol=1e-5)


@SETTINGS
@given(x=_floats(st.tuples(st.integers(1, 3), st.integers(2, 5)), -5.0, 5.0),
       shift=st.sampled_from([-1e4, 1e3, 3e4]))
def test_softmax_is_shift_invariant_and_stable(x, shift):
    """softmax(x + c) = softmax(x): huge logits neither overflow nor give NaN."""
    big = (x.astype(np.float64) + shift).astype(np.float32)
    small = (big.astype(np.float64) - shift)           # the exact values big represents
    e = np.exp(small - small.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    got = run_op("softmax", [big], big.shape)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    lsm = run_op("log_softmax", [big], big.shape)
    assert np.isfinite(lsm).all()
    np.testing.assert_allclose(lsm, np.log(want), rtol=1e-4, atol=1e-4)


def test_log_softmax_finite_where_softmax_underflows():
    x = np.array([[0.0, -200.0]], np.float32)
    assert run_op("softmax", [x], x.shape)[0, 1] == 0.0
    np.testing.assert_allclose(run_op("log_softmax", [x], x.shape), [[0.0, -200.0]], atol=1e-6)


# ----- losses ---------------------------------------------------------------------------------


def _row_nll(logits_row, label) -> float:
    """-log(softmax(row)[label]) = log(sum(exp(row))) - row[label], in float64."""
    row = [float(v) for v in logits_row]
    m = max(row)
    return m + np.log(sum(np.exp(v - m) for v in row)) - row[label]


@st.composite
def classification(draw):
    b, c = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    logits = draw(_floats((b, c), -30.0, 30.0))
    labels = np.array(draw(st.lists(st.integers(0, c - 1), min_size=b, max_size=b)), np.int64)
    return logits, labels


@SETTINGS
@given(case=classification())
def test_cross_entropy_integer_labels_matches_loop(case):
    logits, labels = case
    want = sum(_row_nll(logits[i], labels[i]) for i in range(len(labels))) / len(labels)
    got = run_op("cross_entropy", [logits, labels], ())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(case=classification(), data=st.data())
def test_cross_entropy_float_labels_matches_loop(case, data):
    """Probability targets: the row loss is sum_c p_c * nll(c); one-hot rows give the
    integer-label loss."""
    logits, labels = case
    b, c = logits.shape
    raw = data.draw(_floats((b, c), 0.0, 1.0)) + np.float32(1e-3)
    probs = (raw / raw.sum(axis=1, keepdims=True)).astype(np.float32)
    want = sum(sum(float(probs[i, k]) * _row_nll(logits[i], k) for k in range(c))
               for i in range(b)) / b
    np.testing.assert_allclose(run_op("cross_entropy", [logits, probs], ()), want,
                               rtol=1e-5, atol=1e-5)
    onehot = np.eye(c, dtype=np.float32)[labels]
    np.testing.assert_allclose(run_op("cross_entropy", [logits, onehot], ()),
                               run_op("cross_entropy", [logits, labels], ()), rtol=1e-6)


def test_cross_entropy_of_confident_mistake_is_finite():
    logits = np.array([[200.0, -200.0]], np.float32)
    np.testing.assert_allclose(run_op("cross_entropy", [logits, np.array([1])], ()), 400.0)


def test_cross_entropy_label_out_of_range():
    logits = np.zeros((2, 3), np.float32)
    for bad in (3, -1):
        with pytest.raises(InterpreterError, match=f"label {bad} is out of range for 3"):
            run_op("cross_entropy", [logits, np.array([0, bad], np.int64)], ())


@SETTINGS
@given(p=_floats(st.tuples(st.integers(1, 4), st.integers(1, 4))),
       t_shape=st.sampled_from(["same", "row", "scalar"]), data=st.data())
def test_mse_matches_formula(p, t_shape, data):
    """mean over the broadcast shape of the squared difference, in float64."""
    shape = {"same": p.shape, "row": p.shape[1:], "scalar": ()}[t_shape]
    t = data.draw(_floats(shape))
    d = np.broadcast_to(p.astype(np.float64), p.shape) - t.astype(np.float64)
    want = float((d ** 2).sum()) / d.size
    np.testing.assert_allclose(run_op("mse", [p, t], ()), want, rtol=1e-5, atol=1e-6)


# ----- matmul ---------------------------------------------------------------------------------


@st.composite
def matmul_case(draw):
    """Operand shapes that numpy.matmul accepts: vectors, matrices, broadcast batches."""
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    def batch_of():            # each batch dim is kept or set to 1; a prefix may be dropped
        dims = [d if draw(st.booleans()) else 1 for d in batch]
        return tuple(dims[draw(st.integers(0, len(dims))):])
    lhs = (k,) if draw(st.booleans()) else batch_of() + (m, k)
    rhs = (k,) if draw(st.booleans()) else batch_of() + (k, n)
    ints = draw(st.booleans())
    if ints:
        elems = hnp.arrays(np.int32, lhs, elements=st.integers(-50, 50)), \
            hnp.arrays(np.int32, rhs, elements=st.integers(-50, 50))
    else:
        elems = _floats(lhs), _floats(rhs)
    return draw(elems[0]), draw(elems[1])


def matmul_ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy.matmul's rules spelled out: promote 1-D operands, broadcast batch dims
    explicitly, contract with einsum in float64 (int64 for integers), drop promoted axes."""
    wide = np.float64 if a.dtype.kind == "f" else np.int64
    a2 = a.astype(wide)[None, :] if a.ndim == 1 else a.astype(wide)
    b2 = b.astype(wide)[:, None] if b.ndim == 1 else b.astype(wide)
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
    b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
    out = np.einsum("...ik,...kj->...ij", a2, b2)
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


@SETTINGS
@given(case=matmul_case())
def test_matmul_matches_einsum(case):
    a, b = case
    want = matmul_ref(a, b)
    got = run_op("matmul", [a, b], want.shape)
    if a.dtype.kind == "i":
        assert got.tolist() == want.tolist()        # |values| stay far below 2^31
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


# ----- shape functions with DSL symbols -------------------------------------------------------


def _spec(*shape, dtype=F32) -> TensorSpec:
    return TensorSpec(tuple(shape), dtype)


def test_reduce_shape_with_symbols():
    x = _spec("N", 10)
    assert ReduceSumOp.infer([x], {"axes": (1,), "keepdims": False}) == [_spec("N")]
    assert ReduceMeanOp.infer([x], {"axes": (0,), "keepdims": True}) == [_spec(1, 10)]
    assert ReduceMaxOp.infer([x], {"axes": (), "keepdims": False}) == [_spec()]
    assert ReduceMinOp.infer([_spec("B", None, "T")], {"axes": (-2,), "keepdims": True}) \
        == [_spec("B", 1, "T")]
    assert ArgmaxOp.infer([x], {"axis": -1, "keepdims": False}) == [_spec("N", dtype=I64)]


def test_reduce_shape_errors():
    x = _spec("N", 10)
    with pytest.raises(ShapeError, match="axis 2 is out of range for rank 2"):
        ReduceSumOp.infer([x], {"axes": (2,), "keepdims": False})
    with pytest.raises(ShapeError, match=r"axes \[0, -2\] name axis 0 twice"):
        ReduceSumOp.infer([x], {"axes": (0, -2), "keepdims": False})
    with pytest.raises(ShapeError, match="floating-point"):
        ReduceMeanOp.infer([_spec("N", dtype=I32)], {"axes": (), "keepdims": False})
    with pytest.raises(ShapeError, match="non-i1"):
        ArgmaxOp.infer([_spec(3, dtype=I1)], {"axis": 0, "keepdims": False})
    with pytest.raises(ShapeError, match="axis -1 is out of range for rank 0"):
        SoftmaxOp.infer([_spec()], {"axis": -1})
    assert LogSoftmaxOp.infer([x], {"axis": 0}) == [x]


def test_matmul_shape_with_symbols():
    assert MatmulOp.infer([_spec("N", 784), _spec(784, 10)], {}) == [_spec("N", 10)]
    assert MatmulOp.infer([_spec("B", 1, "T", 64), _spec(8, 64, "T")], {}) \
        == [_spec("B", 8, "T", "T")]
    assert MatmulOp.infer([_spec("N", "K"), _spec("K")], {}) == [_spec("N")]
    assert MatmulOp.infer([_spec(None, None), _spec("K", 2)], {}) == [_spec(None, 2)]
    with pytest.raises(ShapeError, match="inner dimensions 3 and K differ"):
        MatmulOp.infer([_spec(None, 3), _spec("K", 2)], {})
    with pytest.raises(ShapeError, match=r"cannot multiply f32\[N, 784\] by f32\[M, 10\]: "
                                         r"inner dimensions 784 and M differ"):
        MatmulOp.infer([_spec("N", 784), _spec("M", 10)], {})
    with pytest.raises(ShapeError, match="batch dimensions"):
        MatmulOp.infer([_spec("B", 2, 3), _spec("C", 3, 2)], {})


def test_loss_shapes_with_symbols():
    logits = _spec("N", 10)
    assert CrossEntropyOp.infer([logits, _spec("N", dtype=I64)], {}) == [_spec()]
    assert CrossEntropyOp.infer([logits, _spec(None, 10)], {}) == [_spec()]
    with pytest.raises(ShapeError, match="batch sizes"):
        CrossEntropyOp.infer([logits, _spec("M", dtype=I64)], {})
    with pytest.raises(ShapeError, match="class sizes"):
        CrossEntropyOp.infer([logits, _spec("N", "C")], {})
    assert MseOp.infer([_spec("N", 1), _spec("N", 1)], {}) == [_spec()]
    with pytest.raises(ShapeError, match=r"cannot broadcast f32\[N\] with f32\[M\]"):
        MseOp.infer([_spec("N"), _spec("M")], {})


# ----- canonicalization keeps values ----------------------------------------------------------


_CANON = """
func.func @f(%x: tensor<3x1xf32>) -> (tensor<3x1xf32>, tensor<3xf32>, tensor<3xi64>,
                                      tensor<3x1xf32>, tensor<3x1xf32>) {
  %0 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true}
      : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %1 = graph.reduce_sum %x {axes = array<i64: -1>} : (tensor<3x1xf32>) -> tensor<3xf32>
  %2 = graph.argmax %x {axis = 1 : i64} : (tensor<3x1xf32>) -> tensor<3xi64>
  %3 = graph.reduce_max %x {axes = array<i64: 1>, keepdims = true}
      : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %4 = graph.softmax %x {axis = 0 : i64} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %5 = graph.log %4 : (tensor<3x1xf32>) -> tensor<3x1xf32>
  return %0, %1, %2, %3, %5
      : tensor<3x1xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3x1xf32>, tensor<3x1xf32>
}
"""


def test_canonicalize_keeps_values_on_special_inputs():
    """The rewrites keep every value, NaN and infinities included; max keeps even the sign
    of -0.0, while sum and mean turn it into +0.0 before the rewrite (numpy adds from +0.0)
    and not after, which `==` cannot tell apart. log_softmax is compared with a tolerance:
    it is the more accurate side."""
    x = np.array([[np.nan], [-0.0], [np.inf]], np.float32)
    y = np.array([[1.5], [-2.0], [0.25]], np.float32)
    m = parse_module(_CANON)
    before = [interpret(m, "f", v) for v in (x, y)]
    Canonicalize().run(m)
    m.verify()
    text = print_op(m)
    assert "reduce_" not in text and "argmax" not in text and "graph.softmax" not in text
    after = [interpret(m, "f", v) for v in (x, y)]
    for b, a in zip(before, after):
        for u, v in zip(b, a):
            assert u.dtype == v.dtype and u.shape == v.shape
        for u, v in zip(b[:4], a[:4]):
            assert np.array_equal(u, v, equal_nan=True)
        assert np.array_equal(np.signbit(b[3]), np.signbit(a[3]))
        np.testing.assert_allclose(b[4], a[4], rtol=1e-6)
