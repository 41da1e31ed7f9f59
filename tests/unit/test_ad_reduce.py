"""Derivatives of the reductions, softmax, losses and matmul (graph_reduce.py, graph_loss.py,
graph_linalg.py) against finite differences.

Each case is one op line written into three functions of a module: `@fwd` (the op), `@vjp`
(`autodiff.grad` of its result with a random seed s) and `@jvp` (`autodiff.jvp` along random
tangents v), run through `-p autodiff` (with and without `canonicalize,cse` after it) and the
interpreter. In float64, with central differences of `@fwd` (which runs the op's numpy
`evaluate`, the reference semantics) along each operand's v:

- forward mode: `J v` equals the sum of the operands' differences;
- reverse mode: `(s^T J_i) . v_i` equals `s . (J_i v_i)` for each differentiated operand i, and
  the cotangent has the operand's exact type.

Hypothesis draws the shapes (broadcast batch dims, vector operands of matmul, empty `axes`
meaning all of them), which sizes the types spell `?` (so the rules' dynamic-shape paths
run: `graph.dim` counts, broadcast_to with size operands, the broadcast+transpose that
inserts unit axes where a reshape cannot), and a seed for the values. Second-order checks
compare Hessian-vector products (jvp of grad, and grad of grad) with differences of a
gradient; for cross_entropy(x @ W, labels) that gradient is written out by hand here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit.ad_rules import is_differentiable, nondiff_operands
from irkit.diagnostics import IRError
from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager

SETTINGS = settings(max_examples=30, deadline=None)
PIPELINES = ["autodiff", "autodiff,canonicalize,cse"]
H = 1e-6
_NP = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64}


def _ty(shape, dyn=(), et: str = "f64") -> str:
    """`tensor<...>` of `shape`, with `?` at the positions in `dyn`."""
    dims = "".join(("?" if i in dyn else str(d)) + "x" for i, d in enumerate(shape))
    return f"tensor<{dims}{et}>"


def _close(actual, expected, rtol: float = 1e-6) -> None:
    expected = np.asarray(expected, dtype=np.float64)
    scale = 1.0 + (float(np.max(np.abs(expected))) if expected.size else 0.0)
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=rtol,
                               atol=rtol * scale)


def _tuple(r) -> tuple:
    return r if isinstance(r, tuple) else (r,)


def _run(src: str, pipeline: str):
    m = parse_module(src, "ad.mlir")
    PassManager.parse(pipeline).run(m)
    m.verify()
    return m


class Derivs:
    """`body` (ops defining %y from the arguments %a0, %a1, ...) as `@fwd`, `@vjp` (the
    cotangents of the arguments listed in `wrt`, given a seed %s of %y) and `@jvp` (the
    tangent of %y when those arguments move along %v0, %v1, ...)."""

    def __init__(self, body: str, arg_types: list, y_type: str, wrt: list,
                 pipeline: str = PIPELINES[1]) -> None:
        self.wrt = wrt
        params = [f"%a{i}: {t}" for i, t in enumerate(arg_types)]
        wt = [arg_types[i] for i in wrt]
        xs = ", ".join(f"%a{i}" for i in wrt)
        one = len(wrt) == 1
        outs = wt[0] if one else "(" + ", ".join(wt) + ")"
        g = "%g" if one else f"%g:{len(wrt)}"
        uses = "%g" if one else ", ".join(f"%g#{k}" for k in range(len(wrt)))
        vs = [f"%v{k}: {t}" for k, t in enumerate(wt)]
        self.src = f"""
func.func @fwd({", ".join(params)}) -> {y_type} {{
  {body}
  return %y : {y_type}
}}
func.func @vjp({", ".join(params + [f"%s: {y_type}"])}) -> {outs} {{
  {body}
  {g} = autodiff.grad %y seed %s wrt {xs} : ({y_type}, {y_type}) -> {outs}
  return {uses} : {", ".join(wt)}
}}
func.func @jvp({", ".join(params + vs)}) -> {y_type} {{
  {body}
  %t = autodiff.jvp %y wrt {xs} along {", ".join(f"%v{k}" for k in range(len(wrt)))}
      : ({", ".join(wt)}) -> {y_type}
  return %t : {y_type}
}}
"""
        self.module = _run(self.src, pipeline)

    def fwd(self, *args):
        return interpret(self.module, "fwd", *args)

    def vjp(self, args, s) -> tuple:
        return _tuple(interpret(self.module, "vjp", *args, s))

    def jvp(self, args, vs):
        return interpret(self.module, "jvp", *args, *vs)

    def fd(self, args, i: int, v):
        """Central difference of @fwd along v in argument i."""
        hi, lo = list(args), list(args)
        hi[i], lo[i] = args[i] + H * v, args[i] - H * v
        return (np.asarray(self.fwd(*hi)) - np.asarray(self.fwd(*lo))) / (2 * H)

    def check(self, args, seed: int = 0, rtol: float = 1e-6) -> None:
        rng = np.random.default_rng(seed)
        y = np.asarray(self.fwd(*args))
        s = rng.standard_normal(y.shape)
        vs = [rng.standard_normal(np.shape(args[i])) for i in self.wrt]
        grads = self.vjp(args, s)
        total = 0.0
        for k, i in enumerate(self.wrt):
            assert grads[k].shape == np.shape(args[i]) and grads[k].dtype == args[i].dtype
            fd = self.fd(args, i, vs[k])
            _close(np.sum(grads[k] * vs[k]), np.sum(s * fd), rtol)
            total = total + fd
        ty = np.asarray(self.jvp(args, vs))
        assert ty.shape == y.shape
        _close(ty, total, rtol)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def _distinct(rng, shape) -> np.ndarray:
    """Values at least 0.5 apart (no ties, so max and min are differentiable, and far
    beyond the difference step)."""
    n = int(np.prod(shape))
    return ((rng.permutation(n) + 0.5 * rng.random(n) - n / 2) / 2).reshape(shape)


def _axes_attr(axes, keepdims: bool) -> str:
    inner = f"array<i64: {', '.join(map(str, axes))}>" if axes else "array<i64>"
    return f"{{axes = {inner}, keepdims = {'true' if keepdims else 'false'}}}"


@st.composite
def reductions(draw):
    rank = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    dyn = draw(st.sets(st.integers(0, rank - 1))) if rank else set()
    axes = sorted(draw(st.sets(st.integers(0, rank - 1)))) if rank else []
    spelled = [a - rank if draw(st.booleans()) else a for a in axes]
    return shape, dyn, axes, spelled, draw(st.booleans())


def _reduced_type(shape, dyn, axes, keepdims) -> str:
    axes = axes or list(range(len(shape)))
    out, out_dyn = [], set()
    for i, d in enumerate(shape):
        if i in axes:
            if keepdims:
                out.append(1)
        else:
            if i in dyn:
                out_dyn.add(len(out))
            out.append(d)
    return _ty(out, out_dyn)


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"])
@SETTINGS
@given(case=reductions(), seed=st.integers(0, 2**31))
def test_reductions(name, pipeline, case, seed):
    shape, dyn, axes, spelled, keepdims = case
    t, r = _ty(shape, dyn), _reduced_type(shape, dyn, axes, keepdims)
    d = Derivs(f"%y = graph.{name} %a0 {_axes_attr(spelled, keepdims)} : ({t}) -> {r}",
               [t], r, [0], pipeline)
    rng = np.random.default_rng(seed)
    x = _distinct(rng, shape) if name in ("reduce_max", "reduce_min") else \
        rng.standard_normal(shape)
    d.check([np.asarray(x)], seed)


@pytest.mark.parametrize("name, x, expected", [
    # ties split the cotangent equally (TensorFlow's and JAX's convention)
    ("reduce_max", [[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], [[0, 0.5, 0.5], [1, 0, 0]]),
    ("reduce_min", [[1.0, 1.0, 1.0], [2.0, 0.0, 0.0]], [[1 / 3, 1 / 3, 1 / 3], [0, 0.5, 0.5]]),
])
def test_extremum_ties(name, x, expected):
    t = _ty((2, 3), {0})
    d = Derivs(f"%y = graph.{name} %a0 {_axes_attr([1], False)} : ({t}) -> tensor<?xf64>",
               [t], "tensor<?xf64>", [0])
    x = np.array(x)
    (g,) = d.vjp([x], np.ones(2))
    _close(g, expected, 1e-15)
    # forward mode averages the tied tangents: the same convention, so jvp is vjp's transpose
    _close(d.jvp([x], [np.arange(6.0).reshape(2, 3)]), np.sum(g * np.arange(6.0).reshape(2, 3),
                                                              axis=1), 1e-15)


def test_argmax_is_not_differentiable():
    src = """func.func @f(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %i = graph.argmax %x {axis = 1 : i64} : (tensor<3x4xf64>) -> tensor<3xi64>
  %h = graph.one_hot %i {depth = 4 : i64} : (tensor<3xi64>) -> tensor<3x4xf32>
  %c = graph.cast %h : (tensor<3x4xf32>) -> tensor<3x4xf64>
  %y = graph.mul %c, %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %g = autodiff.grad %c seed %x wrt %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  return %g : tensor<3x4xf64>
}"""
    with pytest.raises(IRError, match="graph.argmax.*not differentiable"):
        _run(src, "autodiff")
    m = parse_module(src, "ad.mlir")
    assert not is_differentiable(next(o for o in m.walk() if o.name == "graph.argmax"))


# ---------------------------------------------------------------------------------------------
# Softmax and log_softmax
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_softmax(name, pipeline, data, seed):
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    dyn = data.draw(st.sets(st.integers(0, rank - 1)))
    axis = data.draw(st.integers(-rank, rank - 1))
    t = _ty(shape, dyn)
    d = Derivs(f"%y = graph.{name} %a0 {{axis = {axis} : i64}} : ({t}) -> {t}", [t], t, [0],
               pipeline)
    d.check([3 * np.random.default_rng(seed).standard_normal(shape)], seed)


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pipeline", PIPELINES)
@SETTINGS
@given(b=st.integers(1, 4), c=st.integers(1, 5), float_labels=st.booleans(),
       dyn_batch=st.booleans(), dyn_classes=st.booleans(), seed=st.integers(0, 2**31))
def test_cross_entropy(pipeline, b, c, float_labels, dyn_batch, dyn_classes, seed):
    rng = np.random.default_rng(seed)
    dyn = {0} if dyn_batch else set()
    if float_labels:
        dyn |= {1} if dyn_classes else set()
        # not normalized: the rule must not assume that target rows sum to one
        lt, labels, wrt = _ty((b, c), dyn), rng.random((b, c)), [0, 1]
    else:
        lt, labels, wrt = _ty((b,), dyn, "i64"), rng.integers(0, c, b), [0]
    xt = _ty((b, c), dyn)
    d = Derivs(f"%y = graph.cross_entropy %a0, %a1 : ({xt}, {lt}) -> tensor<f64>",
               [xt, lt], "tensor<f64>", wrt, pipeline)
    d.check([2 * rng.standard_normal((b, c)), labels], seed)


def test_cross_entropy_nondiff_labels():
    src = """func.func @f(%x: tensor<2x3xf64>, %i: tensor<2xi64>, %t: tensor<2x3xf64>)
    -> (tensor<f64>, tensor<f64>) {
  %a = graph.cross_entropy %x, %i : (tensor<2x3xf64>, tensor<2xi64>) -> tensor<f64>
  %b = graph.cross_entropy %x, %t : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<f64>
  return %a, %b : tensor<f64>, tensor<f64>
}"""
    ops = [o for o in parse_module(src, "ad.mlir").walk() if o.name == "graph.cross_entropy"]
    assert [nondiff_operands(o) for o in ops] == [(1,), ()]


def test_cross_entropy_dynamic_classes_reads_the_class_count():
    """With `?` classes the one-hot of the labels takes its depth from `graph.dim` at run
    time; the gradient is (softmax(x) - one_hot(labels)) / B, derived by hand."""
    src = """func.func @f(%x: tensor<2x?xf64>, %i: tensor<2xi64>) -> tensor<2x?xf64> {
  %l = graph.cross_entropy %x, %i : (tensor<2x?xf64>, tensor<2xi64>) -> tensor<f64>
  %g = autodiff.grad %l wrt %x : (tensor<f64>) -> tensor<2x?xf64>
  return %g : tensor<2x?xf64>
}"""
    m = _run(src, "autodiff")
    x = np.array([[0.5, -1.0, 2.0, 0.0], [1.0, 0.0, -0.5, 3.0]])
    labels = np.array([3, 1])
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    want = (p - np.eye(4)[labels]) / 2
    np.testing.assert_allclose(interpret(m, "f", x, labels), want, rtol=1e-12)


@st.composite
def broadcast_pair(draw, max_rank: int = 3):
    """Two shapes that broadcast (leading axes dropped, some axes 1), their broadcast, and
    `?` positions: an axis is `?` only where the operand has the full size, so no size the
    types leave open is a broadcast 1 at run time."""
    rank = draw(st.integers(0, max_rank))
    full = draw(st.lists(st.integers(2, 4), min_size=rank, max_size=rank))
    dyn = draw(st.sets(st.integers(0, rank - 1))) if rank else set()
    out = []
    for _ in range(2):
        r = draw(st.integers(0, rank))
        shape = [1 if draw(st.booleans()) and draw(st.booleans()) else d
                 for d in full[rank - r:]]
        out.append((tuple(shape), {i for i, d in enumerate(shape)
                                   if i + rank - r in dyn and d != 1}))
    return out


@pytest.mark.parametrize("pipeline", PIPELINES)
@SETTINGS
@given(pair=broadcast_pair(), seed=st.integers(0, 2**31))
def test_mse(pipeline, pair, seed):
    (ps, pd), (ts, td) = pair
    pt, tt = _ty(ps, pd), _ty(ts, td)
    d = Derivs(f"%y = graph.mse %a0, %a1 : ({pt}, {tt}) -> tensor<f64>", [pt, tt],
               "tensor<f64>", [0, 1], pipeline)
    rng = np.random.default_rng(seed)
    d.check([rng.standard_normal(ps), rng.standard_normal(ts)], seed)


# ---------------------------------------------------------------------------------------------
# Matmul
# ---------------------------------------------------------------------------------------------


@st.composite
def matmuls(draw):
    """Operand shapes with numpy matmul's rules (vectors, broadcast batch dims) and `?`
    positions: each named size (M, K, N, each batch axis) is `?` everywhere or nowhere,
    except where an operand has a broadcast 1."""
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    nb = draw(st.integers(0, 2))
    batch = draw(st.lists(st.integers(2, 3), min_size=nb, max_size=nb))
    dyn = draw(st.sets(st.sampled_from(["M", "K", "N"] + list(range(nb)))))
    shapes = []
    for side, (rows, cols) in enumerate([(("M", m), ("K", k)), (("K", k), ("N", n))]):
        if draw(st.booleans()) and draw(st.booleans()):
            named = [cols if side == 0 else rows]           # a vector: no batch dims
        else:
            r = draw(st.integers(0, nb))
            named = [(i, 1 if draw(st.booleans()) and draw(st.booleans()) else batch[i])
                     for i in range(nb - r, nb)] + [rows, cols]
        shape = tuple(d for _, d in named)
        shapes.append((shape, {i for i, (name, d) in enumerate(named)
                               if name in dyn and not (isinstance(name, int) and d == 1)}))
    return shapes, dyn


def _matmul_type(a, b, dyn) -> str:
    (sa, da), (sb, db) = a, b
    shape = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    # a result axis is `?` when an operand's axis it comes from is
    lead = len(shape) - (len(sa) > 1) - (len(sb) > 1)
    qs = set()
    for i in range(lead):
        for s, ds in ((sa, da), (sb, db)):
            j = i - (lead - (len(s) - 2))
            if len(s) > 1 and j >= 0 and j in ds:
                qs.add(i)
    if len(sa) > 1 and len(sa) - 2 in da:
        qs.add(lead)
    if len(sb) > 1 and len(sb) - 1 in db:
        qs.add(len(shape) - 1)
    return _ty(shape, qs)


@pytest.mark.parametrize("pipeline", PIPELINES)
@SETTINGS
@given(case=matmuls(), seed=st.integers(0, 2**31))
def test_matmul(pipeline, case, seed):
    (a, b), dyn = case
    at, bt = _ty(*a), _ty(*b)
    yt = _matmul_type(a, b, dyn)
    d = Derivs(f"%y = graph.matmul %a0, %a1 : ({at}, {bt}) -> {yt}", [at, bt], yt, [0, 1],
               pipeline)
    rng = np.random.default_rng(seed)
    d.check([rng.standard_normal(a[0]), rng.standard_normal(b[0])], seed)


# Shape functions unify `?` with a static size, and a declared result type may know a size
# the inferred one leaves open, so a cotangent computed from another value can know a size
# that the operand's type does not (or the reverse); it must still come back with the
# operand's type, and a tangent with the result's.
_MIXED_CASES = [
    ("matmul", ["tensor<2x?xf64>", "tensor<4x5xf64>"], [(2, 4), (4, 5)], "tensor<2x5xf64>"),
    ("matmul", ["tensor<?xf64>", "tensor<2x3x2xf64>"], [(3,), (2, 3, 2)], "tensor<2x2xf64>"),
    ("matmul", ["tensor<?x3xf64>", "tensor<?x3x2xf64>"], [(4, 3), (4, 3, 2)],
     "tensor<?x4x2xf64>"),
    ("mse", ["tensor<?x3xf64>", "tensor<4x?xf64>"], [(4, 3), (4, 3)], "tensor<f64>"),
    ("cross_entropy", ["tensor<?x3xf64>", "tensor<4xi64>"], [(4, 3), (4,)], "tensor<f64>"),
    ("cross_entropy", ["tensor<?x3xf64>", "tensor<4x?xf64>"], [(4, 3), (4, 3)], "tensor<f64>"),
    ("reduce_sum", ["tensor<?x3xf64>"], [(4, 3)], "tensor<4xf64>"),
    ("reduce_max", ["tensor<?x3xf64>"], [(4, 3)], "tensor<4xf64>"),
    ("reduce_mean", ["tensor<?x?xf64>"], [(4, 3)], "tensor<4x1xf64>"),
    ("softmax", ["tensor<?x3xf64>"], [(4, 3)], "tensor<4x3xf64>"),
    ("log_softmax", ["tensor<4x3xf64>"], [(4, 3)], "tensor<?x3xf64>"),
]


@pytest.mark.parametrize("name, types, shapes, yt", _MIXED_CASES)
def test_static_and_dynamic_sizes_mixed(name, types, shapes, yt):
    rng = np.random.default_rng(3)
    args = [rng.integers(0, 3, s) if "i64" in t else _distinct(rng, s) / 4
            for t, s in zip(types, shapes)]
    wrt = [i for i, t in enumerate(types) if "i64" not in t]
    names = ", ".join(f"%a{i}" for i in range(len(types)))
    attrs = {"reduce_sum": " {axes = array<i64: 1>}", "reduce_max": " {axes = array<i64: 1>}",
             "reduce_mean": " {axes = array<i64: 1>, keepdims = true}"}.get(name, "")
    d = Derivs(f"%y = graph.{name} {names}{attrs} : ({', '.join(types)}) -> {yt}", types, yt,
               wrt)
    d.check(args, 3)


# ---------------------------------------------------------------------------------------------
# Other element types: the rules build well-typed graphs (constants of the operand's type,
# the f32 one-hot cast), close to float64 within the type's precision
# ---------------------------------------------------------------------------------------------

_TYPED_CASES = [
    ("%y = graph.reduce_mean %a0 {axes = array<i64: 1>} : (tensor<?x3xE>) -> tensor<?xE>",
     [(2, 3)], ["?x3"], "tensor<?xE>"),
    ("%y = graph.reduce_max %a0 : (tensor<2x3xE>) -> tensor<E>", [(2, 3)], ["2x3"],
     "tensor<E>"),
    ("%y = graph.softmax %a0 : (tensor<?x3xE>) -> tensor<?x3xE>", [(2, 3)], ["?x3"],
     "tensor<?x3xE>"),
    ("%y = graph.log_softmax %a0 : (tensor<?x3xE>) -> tensor<?x3xE>", [(2, 3)], ["?x3"],
     "tensor<?x3xE>"),
    ("%y = graph.cross_entropy %a0, %a1 : (tensor<?x3xE>, tensor<?xi64>) -> tensor<E>",
     [(2, 3), None], ["?x3", None], "tensor<E>"),
    ("%y = graph.cross_entropy %a0, %a1 : (tensor<?x3xE>, tensor<?x3xE>) -> tensor<E>",
     [(2, 3), (2, 3)], ["?x3", "?x3"], "tensor<E>"),
    ("%y = graph.mse %a0, %a1 : (tensor<?x3xE>, tensor<3xE>) -> tensor<E>",
     [(2, 3), (3,)], ["?x3", "3"], "tensor<E>"),
    ("%y = graph.matmul %a0, %a1 : (tensor<?x3xE>, tensor<3xE>) -> tensor<?xE>",
     [(2, 3), (3,)], ["?x3", "3"], "tensor<?xE>"),
]


@pytest.mark.parametrize("et, rtol", [("f32", 1e-5), ("f16", 2e-2)])
@pytest.mark.parametrize("body, shapes, dims, yt", _TYPED_CASES,
                         ids=[c[0].split()[2] for c in _TYPED_CASES])
def test_other_float_types(et, rtol, body, shapes, dims, yt):
    rng = np.random.default_rng(1)
    args64, types, wrt = [], [], []
    for i, (shape, dim) in enumerate(zip(shapes, dims)):
        if shape is None:
            args64.append(np.array([0, 2]))
            types.append("tensor<?xi64>")
        else:
            args64.append(_distinct(rng, shape) / 4 if i == 0 else rng.random(shape))
            types.append(f"tensor<{dim}x{et}>" if dim else f"tensor<{et}>")
            wrt.append(i)
    y = yt.replace("E", et)
    d = Derivs(body.replace("E", et), types, y, wrt)
    d64 = Derivs(body.replace("E", "f64"), [t.replace(et, "f64") for t in types],
                 yt.replace("E", "f64"), wrt)
    args = [a if a.dtype.kind == "i" else a.astype(_NP[et]) for a in args64]
    s = np.ones(np.shape(d64.fwd(*args64)))
    for g, g64, i in zip(d.vjp(args, s.astype(_NP[et])), d64.vjp(args64, s), wrt):
        assert g.dtype == _NP[et] and g.shape == args[i].shape
        _close(g, g64, rtol)


# ---------------------------------------------------------------------------------------------
# Second order
# ---------------------------------------------------------------------------------------------


class SecondOrder:
    """For `body` (defining %y from %a0, %a1, ...) and the argument %a{i}: `@grad` (the
    cotangent of %a{i} given a seed %s of %y), `@hvp` (its jvp along %v, a Hessian-vector
    product) and `@gg` (the grad of `u . grad`, the same product by symmetry)."""

    def __init__(self, body: str, arg_types: list, y_type: str, i: int) -> None:
        self.i = i
        args = [f"%a{k}: {t}" for k, t in enumerate(arg_types)]
        params = ", ".join(args + [f"%s: {y_type}"])
        x, t = f"%a{i}", arg_types[i]
        grad = f"%g = autodiff.grad %y seed %s wrt {x} : ({y_type}, {y_type}) -> {t}"
        self.module = _run(f"""
func.func @fwd({", ".join(args)}) -> {y_type} {{
  {body}
  return %y : {y_type}
}}
func.func @grad({params}) -> {t} {{
  {body}
  {grad}
  return %g : {t}
}}
func.func @hvp({params}, %v: {t}) -> {t} {{
  {body}
  {grad}
  %h = autodiff.jvp %g wrt {x} along %v : ({t}) -> {t}
  return %h : {t}
}}
func.func @gg({params}, %u: {t}) -> {t} {{
  {body}
  {grad}
  %h = autodiff.grad %g seed %u wrt {x} : ({t}, {t}) -> {t}
  return %h : {t}
}}
""", PIPELINES[1])

    def check(self, args, s, seed: int, grad=None, rtol: float = 1e-6) -> None:
        """`grad(args)`, if given, is the first-order gradient written out independently;
        else `@grad` (itself checked against differences by the first-order tests)."""
        grad = grad or (lambda a: interpret(self.module, "grad", *a, s))
        rng = np.random.default_rng(seed)
        x = args[self.i]
        v, u = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
        hi, lo = list(args), list(args)
        hi[self.i], lo[self.i] = x + H * v, x - H * v
        fd = (np.asarray(grad(hi)) - np.asarray(grad(lo))) / (2 * H)
        hv = interpret(self.module, "hvp", *args, s, v)
        _close(hv, fd, rtol)
        hu = interpret(self.module, "gg", *args, s, u)
        _close(np.sum(hu * v), np.sum(u * hv), rtol)


def _softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@SETTINGS
@given(b=st.integers(1, 5), k=st.integers(1, 4), c=st.integers(2, 4), seed=st.integers(0, 2**31))
def test_hvp_cross_entropy_of_linear_layer(b, k, c, seed):
    """d^2/dW^2 of cross_entropy(x @ W, labels), batch size `?`, against differences of the
    gradient x^T (softmax(x W) - onehot(labels)) / B, derived by hand."""
    rng = np.random.default_rng(seed)
    x, w, labels = rng.standard_normal((b, k)), rng.standard_normal((k, c)), \
        rng.integers(0, c, b)
    xt, wt, lt, zt = f"tensor<?x{k}xf64>", f"tensor<{k}x{c}xf64>", "tensor<?xi64>", \
        f"tensor<?x{c}xf64>"
    body = (f"%z = graph.matmul %a0, %a1 : ({xt}, {wt}) -> {zt}\n"
            f"  %y = graph.cross_entropy %z, %a2 : ({zt}, {lt}) -> tensor<f64>")
    so = SecondOrder(body, [xt, wt, lt], "tensor<f64>", 1)
    s = np.array(0.7)

    def grad(args):
        xs, ws, ls = args
        return s * xs.T @ (_softmax(xs @ ws) - np.eye(c)[ls]) / len(ls)

    _close(interpret(so.module, "grad", x, w, labels, s), grad([x, w, labels]))
    so.check([x, w, labels], s, seed, grad)


_SECOND_ORDER_CASES = [
    ("%y = graph.softmax %a0 {axis = 0 : i64} : (tensor<3x?xf64>) -> tensor<3x?xf64>",
     [(3, 2)], ["tensor<3x?xf64>"], "tensor<3x?xf64>", 0),
    ("%y = graph.log_softmax %a0 : (tensor<?x4xf64>) -> tensor<?x4xf64>",
     [(2, 4)], ["tensor<?x4xf64>"], "tensor<?x4xf64>", 0),
    ("%y = graph.cross_entropy %a0, %a1 : (tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<f64>",
     [(2, 3), (2, 3)], ["tensor<?x3xf64>"] * 2, "tensor<f64>", 0),
    ("%y = graph.cross_entropy %a0, %a1 : (tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<f64>",
     [(2, 3), (2, 3)], ["tensor<?x3xf64>"] * 2, "tensor<f64>", 1),
    ("%y = graph.mse %a0, %a1 : (tensor<?x3xf64>, tensor<3xf64>) -> tensor<f64>",
     [(2, 3), (3,)], ["tensor<?x3xf64>", "tensor<3xf64>"], "tensor<f64>", 1),
    ("%y = graph.reduce_max %a0 {axes = array<i64: 1>} : (tensor<?x3x?xf64>)"
     " -> tensor<?x?xf64>", [(2, 3, 2)], ["tensor<?x3x?xf64>"], "tensor<?x?xf64>", 0),
    ("%p = graph.mul %a0, %a0 : (tensor<2x?x3xf64>, tensor<2x?x3xf64>) -> tensor<2x?x3xf64>\n"
     "  %y = graph.reduce_mean %p {axes = array<i64: 0, 2>} : (tensor<2x?x3xf64>)"
     " -> tensor<?xf64>", [(2, 2, 3)], ["tensor<2x?x3xf64>"], "tensor<?xf64>", 0),
    ("%p = graph.matmul %a0, %a1 : (tensor<2x?x3xf64>, tensor<3x3xf64>) -> tensor<2x?x3xf64>\n"
     "  %y = graph.matmul %p, %a1 : (tensor<2x?x3xf64>, tensor<3x3xf64>) -> tensor<2x?x3xf64>",
     [(2, 4, 3), (3, 3)], ["tensor<2x?x3xf64>", "tensor<3x3xf64>"], "tensor<2x?x3xf64>", 1),
    ("%p = graph.matmul %a0, %a1 : (tensor<?x3xf64>, tensor<3xf64>) -> tensor<?xf64>\n"
     "  %y = graph.matmul %p, %p : (tensor<?xf64>, tensor<?xf64>) -> tensor<f64>",
     [(4, 3), (3,)], ["tensor<?x3xf64>", "tensor<3xf64>"], "tensor<f64>", 1),
]


@pytest.mark.parametrize("body, shapes, types, yt, i", _SECOND_ORDER_CASES,
                         ids=[f"{c[0].split()[2]}-{c[4]}" for c in _SECOND_ORDER_CASES])
def test_second_order(body, shapes, types, yt, i):
    rng = np.random.default_rng(2)
    args = [_distinct(rng, s) / 3 for s in shapes]
    so = SecondOrder(body, types, yt, i)
    s = rng.standard_normal(np.shape(interpret(so.module, "fwd", *args)))
    so.check(args, s, 2)
