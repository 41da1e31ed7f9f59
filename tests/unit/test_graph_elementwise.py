"""The elementwise graph ops: numpy semantics, shape functions, and sound canonicalization.

- `test_unary_semantics` / `test_binary_semantics` / `test_cmp_where_cast_semantics`: on
  random broadcastable shapes (hypothesis), each op run by the interpreter agrees with a numpy
  formula written here (not the op's kernel) and returns exactly the result type's dtype and
  shape, also when operand types have `?` dimensions.
- `test_infer_*`: the shape functions on symbolic DSL dimensions (`N`) and their messages.
- `test_canonicalize_is_exact`: functions built to trigger every fold and pattern run before
  and after `canonicalize` on special values (NaN, inf, signed zeros, integer extremes); the
  results must be identical bit for bit, and the ops listed as gone must be gone.
  `test_exactness_check_catches_a_wrong_law` plants `x + 0.0 -> x` to show the check bites.
- `test_irkit_opt_numeric`: `irkit-opt -p canonicalize --verify-each=numeric` end to end.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irkit
from irkit.dialects import load_all
from irkit.dialects.graph import ShapeError, TensorSpec
from irkit.pass_manager import PassManager
from irkit.types import F32, I1, I32

load_all()
from irkit.dialects.graph import elementwise as ge  # noqa: E402
from irkit.dialects.graph import compare as gc  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8,
      "i16": np.int16, "i32": np.int32, "i64": np.int64, "i1": np.bool_}


def ttype(shape, dt: str, dynamic=()) -> str:
    """`tensor<2x?xf32>`: the dims whose index is in `dynamic` printed as `?`."""
    dims = ["?" if i in dynamic else str(d) for i, d in enumerate(shape)]
    return f"tensor<{'x'.join(dims + [dt])}>"


def run_op(op: str, args: list, types: list[str], result: str, attrs: str = ""):
    """Interpret a one-op function `op(args) -> result`."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    text = (f"func.func @f({params}) -> {result} {{\n"
            f"  %r = {op} {operands}{attrs} : ({', '.join(types)}) -> {result}\n"
            f"  return %r : {result}\n}}\n")
    m = irkit.parse_module(text)
    irkit.verify(m)
    return irkit.interpret(m, "f", *args)


def check_result(out, shape, dt: str) -> None:
    assert isinstance(out, np.ndarray), type(out)
    assert out.dtype == np.dtype(NP[dt]), (out.dtype, dt)
    assert out.shape == tuple(shape), (out.shape, shape)


def close(out, want, dt: str) -> None:
    want = np.asarray(want)
    if dt in ("f16", "f32", "f64"):
        rtol = {"f16": 2e-3, "f32": 2e-6, "f64": 1e-12}[dt]
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, want)


def dynamic_dims(draw, shape) -> tuple:
    """Some dims of an operand type made `?` (the interpreter gets the real sizes)."""
    return tuple(i for i in range(len(shape)) if draw(st.booleans()))


# ----- semantics ------------------------------------------------------------------------------

_vec = np.vectorize
# Independent formulas, in float64 and elementwise through `math` where numpy would be the
# kernel itself.
UNARY = {
    "neg": (lambda x: 0 - x.astype(np.float64), "num"),
    "abs": (lambda x: np.where(x < 0, -x.astype(np.float64), x), "num"),
    "exp": (_vec(math.exp), "float"),
    "log": (_vec(lambda v: math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)),
            "float"),
    "sin": (_vec(math.sin), "float"),
    "cos": (_vec(math.cos), "float"),
    "tanh": (_vec(math.tanh), "float"),
    "sqrt": (_vec(lambda v: math.sqrt(v) if v >= 0 else math.nan), "float"),
    "rsqrt": (_vec(lambda v: 1 / math.sqrt(v) if v > 0 else
                   (math.inf if v == 0 else math.nan)), "float"),
    "sigmoid": (_vec(lambda v: 0.5 * (1 + math.tanh(v / 2))), "float"),
    "relu": (lambda x: np.where(x > 0, x, 0), "num"),
    "gelu": (_vec(lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) *
                                                     (v + 0.044715 * v ** 3)))), "float"),
    "softplus": (_vec(lambda v: math.log1p(math.exp(v))), "float"),
    "not": (lambda x: x == 0, "bool"),
}


def values(draw, shape, dt: str, positive: bool = False) -> np.ndarray:
    if dt == "i1":
        return draw(hnp.arrays(np.bool_, shape))
    if dt.startswith("i"):
        return draw(hnp.arrays(NP[dt], shape, elements=st.integers(-50, 50)))
    lo = 0.125 if positive else -8.0
    return draw(hnp.arrays(NP[dt], shape, elements=st.floats(lo, 8.0, width=32)))


@SETTINGS
@given(st.data())
def test_unary_semantics(data):
    name = data.draw(st.sampled_from(sorted(UNARY)))
    formula, kind = UNARY[name]
    dt = {"float": data.draw(st.sampled_from(["f32", "f64"])),
          "num": data.draw(st.sampled_from(["f32", "i32", "i8"])), "bool": "i1"}[kind]
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
    x = values(data.draw, shape, dt, positive=name in ("log", "sqrt", "rsqrt"))
    dyn = dynamic_dims(data.draw, shape)
    out = run_op(f"graph.{name}", [x], [ttype(shape, dt, dyn)], ttype(shape, dt, dyn))
    check_result(out, shape, dt)
    with np.errstate(all="ignore"):     # rounded to the result type; integers wrap, as in C
        want = np.asarray(formula(x)).astype(NP[dt])
    close(out, want, dt)


BINARY = {
    "add": (lambda x, y: x.astype(np.float64) + y, "num"),
    "sub": (lambda x, y: x.astype(np.float64) - y, "num"),
    "mul": (lambda x, y: x.astype(np.float64) * y, "num"),
    "div": (lambda x, y: x.astype(np.float64) / y, "float"),
    "pow": (_vec(lambda a, b: float(a) ** float(b)), "float"),
    "maximum": (lambda x, y: np.where(x >= y, x, y), "num"),
    "minimum": (lambda x, y: np.where(x <= y, x, y), "num"),
    "and": (lambda x, y: x & y, "bool"),
    "or": (lambda x, y: x | y, "bool"),
}


@SETTINGS
@given(st.data())
def test_binary_semantics(data):
    name = data.draw(st.sampled_from(sorted(BINARY)))
    formula, kind = BINARY[name]
    dt = {"float": data.draw(st.sampled_from(["f32", "f64"])),
          "num": data.draw(st.sampled_from(["f32", "f64", "i32", "i64"])), "bool": "i1"}[kind]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    (sa, sb), sr = shapes.input_shapes, shapes.result_shape
    a = values(data.draw, sa, dt, positive=name == "pow")
    b = values(data.draw, sb, dt)
    if name == "div":
        b = np.where(b == 0, 1, b).astype(b.dtype)
    types = [ttype(sa, dt, dynamic_dims(data.draw, sa)), ttype(sb, dt)]
    out = run_op(f"graph.{name}", [a, b], types, ttype(sr, dt))
    check_result(out, sr, dt)
    with np.errstate(all="ignore"):     # rounded to the result type: f32 overflows to inf
        want = np.asarray(formula(a, b)).astype(NP[dt])
    close(out, want, dt)


PREDICATES = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
              "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


@SETTINGS
@given(st.data())
def test_cmp_where_cast_semantics(data):
    dt = data.draw(st.sampled_from(["f32", "i32", "f64"]))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    (sc, sa, sb), sr = shapes.input_shapes, shapes.result_shape
    a, b = values(data.draw, sa, dt), values(data.draw, sb, dt)
    # Equal elements are likely with small integers; make them likely for floats too.
    b = np.where(data.draw(hnp.arrays(np.bool_, sb)), b, b.flat[0] if b.size else b)
    b = b.astype(NP[dt])
    p = data.draw(st.sampled_from(sorted(PREDICATES)))
    sab = np.broadcast_shapes(sa, sb)
    out = run_op("graph.cmp", [a, b], [ttype(sa, dt), ttype(sb, dt)], ttype(sab, "i1"),
                 f' {{predicate = "{p}"}}')
    check_result(out, sab, "i1")
    close(out, PREDICATES[p](a, b), "i1")

    c = values(data.draw, sc, "i1")
    out = run_op("graph.where", [c, a, b], [ttype(sc, "i1"), ttype(sa, dt), ttype(sb, dt)],
                 ttype(sr, dt))
    check_result(out, sr, dt)
    cf, af, bf = np.broadcast_arrays(c, a, b)
    close(out, np.array([x if k else y for k, x, y in zip(cf.flat, af.flat, bf.flat)],
                        dtype=NP[dt]).reshape(sr), dt)

    target = data.draw(st.sampled_from(["f32", "f64", "i8", "i32", "i1"]))
    out = run_op("graph.cast", [a], [ttype(sa, dt)], ttype(sa, target))
    check_result(out, sa, target)
    if target == "i1":
        want = [v != 0 for v in a.flat]
    elif target.startswith("i"):
        want = [math.trunc(float(v)) for v in a.flat]      # all small: no wrapping
    else:
        want = [float(v) for v in a.flat]
    close(out, np.array(want).reshape(sa).astype(NP[target]), target)


def test_maximum_orders_signed_zeros():
    """+0 > -0 whatever the operand order (the folder swaps operands of commutative ops)."""
    pz, nz = np.array([0.0], np.float32), np.array([-0.0], np.float32)
    t = ["tensor<1xf32>"] * 2
    for a, b in ((pz, nz), (nz, pz)):
        assert not np.signbit(run_op("graph.maximum", [a, b], t, t[0]))[0]
        assert np.signbit(run_op("graph.minimum", [a, b], t, t[0]))[0]


# ----- shape functions on DSL symbols ---------------------------------------------------------

def spec(*dims, dtype=F32) -> TensorSpec:
    return TensorSpec(tuple(dims), dtype)


def test_infer_symbolic_broadcast_error_message():
    with pytest.raises(ShapeError, match=r"^cannot broadcast f32\[N, 784\] with f32\[10\]$"):
        ge.AddOp.infer([spec("N", 784), spec(10)], {})


@pytest.mark.parametrize("a,b,want", [
    (("N", 784), (784,), ("N", 784)),       # a static row broadcasts over N rows
    (("N", 1), (1, "M"), ("N", "M")),       # 1 stretches to a symbol
    (("N",), (None,), ("N",)),              # unknown agrees with anything, keeps the symbol
    (("N",), (1,), ("N",)),
    ((), ("N", 3), ("N", 3)),               # a scalar broadcasts to anything
])
def test_infer_symbolic_broadcast(a, b, want):
    for cls in (ge.AddOp, ge.MaximumOp, ge.PowOp):
        (out,) = cls.infer([spec(*a), spec(*b)], {})
        assert out == spec(*want)


@pytest.mark.parametrize("a,b", [(("N",), ("M",)), (("N",), (3,)), ((2, "N"), (3, "N"))])
def test_infer_symbol_never_equals_another_dim(a, b):
    """`N` may be 3 in one run and 4 in the next: a program needing N == 3 is rejected."""
    with pytest.raises(ShapeError, match="cannot broadcast"):
        ge.MulOp.infer([spec(*a), spec(*b)], {})


def test_infer_other_ops_keep_symbols():
    assert ge.ExpOp.infer([spec("B", 10)], {}) == [spec("B", 10)]
    assert gc.CmpOp.infer([spec("B", 1), spec(1, "C")], {"predicate": "lt"}) == \
        [spec("B", "C", dtype=I1)]
    assert gc.WhereOp.infer([spec("B", 1, dtype=I1), spec(3), spec()], {}) == [spec("B", 3)]
    assert gc.CastOp.infer([spec("B", 2)], {"dtype": I32}) == [spec("B", 2, dtype=I32)]


def test_infer_kind_messages():
    with pytest.raises(ShapeError, match=r"operands need a floating-point element type, "
                                         r"got i32\[N\]"):
        ge.SqrtOp.infer([spec("N", dtype=I32)], {})
    with pytest.raises(ShapeError, match=r"operands need an i1 element type, got f32\[N\]"):
        ge.AndOp.infer([spec("N"), spec("N")], {})
    with pytest.raises(ShapeError, match=r"element types differ: f32\[N\] and i32\[N\]"):
        ge.SubOp.infer([spec("N"), spec("N", dtype=I32)], {})
    with pytest.raises(ShapeError, match=r"operands need an i1 element type"):
        gc.WhereOp.infer([spec(3), spec(3), spec(3)], {})


# ----- canonicalization is exact --------------------------------------------------------------

def _floats(dt):
    width = {"f16": 16, "f32": 32, "f64": 64}[dt]
    return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]),
                     st.floats(width=width, allow_nan=True, allow_infinity=True))


def _ints(dt):
    info = np.iinfo(NP[dt])
    return st.one_of(st.sampled_from([0, 1, -1, int(info.min), int(info.max)]),
                     st.integers(int(info.min), int(info.max)))


def same(a, b) -> bool:
    """Bit-for-bit equality, except that any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        na, nb = np.isnan(a), np.isnan(b)
        return bool(np.array_equal(na, nb) and np.array_equal(a[~na], b[~na]) and
                    np.array_equal(np.signbit(a[~na]), np.signbit(b[~na])))
    return bool(np.array_equal(a, b))


# name -> (function text, ops that canonicalize must remove)
CASES = {
    "float_laws": ("""
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
            tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %mz = graph.constant dense<-0.0> : tensor<f32>
      %pz = graph.constant dense<0.0> : tensor<f32>
      %one = graph.constant dense<1.0> : tensor<f32>
      %m1 = graph.constant dense<-1.0> : tensor<4xf32>
      %ny = graph.neg %y : (tensor<4xf32>) -> tensor<4xf32>
      %0 = graph.add %mz, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = graph.sub %x, %pz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      %2 = graph.div %x, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      %3 = graph.pow %x, %mz : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      %4 = graph.sub %x, %ny : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %5 = graph.add %ny, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %6 = graph.sub %mz, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
      %nx = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
      %a = graph.abs %nx : (tensor<4xf32>) -> tensor<4xf32>
      %aa = graph.abs %a : (tensor<4xf32>) -> tensor<4xf32>
      %d = graph.div %nx, %ny : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %m = graph.mul %d, %m1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %7 = graph.maximum %m, %aa : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %0, %1, %2, %3, %4, %5, %6, %7
          : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
              tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }""", ("graph.pow", "graph.mul")),
    "int_laws": ("""
    func.func @f(%i: tensor<4xi8>, %j: tensor<4xi8>)
        -> (tensor<4xi8>, tensor<4xi8>, tensor<4xi8>,
            tensor<4xi8>, tensor<4xi1>, tensor<4xi1>, tensor<4xi8>) {
      %z = graph.constant dense<0> : tensor<i8>
      %m1 = graph.constant dense<-1> : tensor<i8>
      %0 = graph.mul %z, %i : (tensor<i8>, tensor<4xi8>) -> tensor<4xi8>
      %1 = graph.sub %j, %j : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
      %2 = graph.mul %i, %m1 : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
      %3 = graph.sub %z, %j : (tensor<i8>, tensor<4xi8>) -> tensor<4xi8>
      %c = graph.cmp %i, %j {predicate = "lt"} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
      %4 = graph.not %c : (tensor<4xi1>) -> tensor<4xi1>
      %5 = graph.cmp %i, %i {predicate = "ge"} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
      %n = graph.not %4 : (tensor<4xi1>) -> tensor<4xi1>
      %6 = graph.where %n, %i, %j : (tensor<4xi1>, tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
      return %0, %1, %2, %3, %4, %5, %6
          : tensor<4xi8>, tensor<4xi8>, tensor<4xi8>,
              tensor<4xi8>, tensor<4xi1>, tensor<4xi1>, tensor<4xi8>
    }""", ("graph.not",)),
    "casts": ("""
    func.func @f(%i: tensor<4xi16>, %x: tensor<4xf16>)
        -> (tensor<4xi16>, tensor<4xf32>, tensor<4xi8>,
            tensor<4xi1>, tensor<4xf16>, tensor<4xi32>) {
      %0 = graph.cast %i : (tensor<4xi16>) -> tensor<4xf32>
      %1 = graph.cast %0 : (tensor<4xf32>) -> tensor<4xi16>
      %w = graph.cast %i : (tensor<4xi16>) -> tensor<4xi64>
      %2 = graph.cast %w : (tensor<4xi64>) -> tensor<4xf32>
      %3 = graph.cast %w : (tensor<4xi64>) -> tensor<4xi8>
      %d = graph.cast %x : (tensor<4xf16>) -> tensor<4xf64>
      %4 = graph.cast %d : (tensor<4xf64>) -> tensor<4xi1>
      %5 = graph.cast %d : (tensor<4xf64>) -> tensor<4xf16>
      %6 = graph.cast %0 : (tensor<4xf32>) -> tensor<4xi32>
      return %1, %2, %3, %4, %5, %6
          : tensor<4xi16>, tensor<4xf32>, tensor<4xi8>, tensor<4xi1>, tensor<4xf16>, tensor<4xi32>
    }""", ()),
}
_ARG_DTYPES = {"float_laws": ("f32", "f32"), "int_laws": ("i8", "i8"), "casts": ("i16", "f16")}


def _canonicalized(text: str):
    m = irkit.parse_module(textwrap.dedent(text))
    PassManager.parse("canonicalize").run(m)
    irkit.verify(m)
    return m


def _draw_args(data, case):
    return [np.array(data.draw(st.lists(_floats(dt) if dt.startswith("f") else _ints(dt),
                                        min_size=4, max_size=4)), dtype=NP[dt])
            for dt in _ARG_DTYPES[case]]


@pytest.mark.parametrize("case", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_canonicalize_is_exact(case, data):
    text, gone = CASES[case]
    before = irkit.parse_module(textwrap.dedent(text))
    after = _canonicalized(text)
    names = {op.name for op in after.walk()}
    assert not names & set(gone), f"still there: {names & set(gone)}"
    args = _draw_args(data, case)
    with np.errstate(all="ignore"):
        want, got = irkit.interpret(before, "f", *args), irkit.interpret(after, "f", *args)
    for k, (w, g) in enumerate(zip(want, got)):
        assert same(w, g), f"result #{k}: {w} before, {g} after, for {args}"


def test_canonicalize_removes_what_it_should():
    """Every identity-folded result of float_laws is now a function argument or one op."""
    m = _canonicalized(CASES["float_laws"][0])
    ret = [op for op in m.walk() if op.name == "func.return"][0]
    x = [op for op in m.walk() if op.name == "func.func"][0].regions[0].blocks[0].args[0]
    assert [v is x for v in ret.operands[:3]] == [True, True, True]


def test_exactness_check_catches_a_wrong_law(monkeypatch):
    """x + 0.0 -> x is wrong for x = -0.0; with that law planted, the check must fail."""
    monkeypatch.setattr(ge.AddOp, "_laws", ge.AddOp._laws + (("float", 0.0, "x"),))
    text = """
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %pz = graph.constant dense<0.0> : tensor<f32>
      %0 = graph.add %x, %pz : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    x = np.array([-0.0, 1.0], np.float32)
    want = irkit.interpret(irkit.parse_module(textwrap.dedent(text)), "f", x)
    got = irkit.interpret(_canonicalized(text), "f", x)
    assert not same(want, got)


def test_lossless_casts_are_exact():
    """`_lossless(a, b)`: every value of a small integer type survives a -> b -> a."""
    from irkit.types import BF16, F16, F64, I8, I16
    for a, b in [(I8, F16), (I8, BF16), (I16, F32), (I32, F64), (I8, I32), (I1, F16)]:
        assert gc._lossless(a, b)
    for a, b in [(I16, F16), (I32, F32), (I16, I8), (F32, F16), (F16, BF16), (F32, I32)]:
        assert not gc._lossless(a, b)
    for src, dst in [(np.int8, np.float16), (np.int16, np.float32)]:
        info = np.iinfo(src)
        v = np.arange(info.min, info.max + 1, dtype=src)
        assert np.array_equal(v.astype(dst).astype(src), v)
    v = np.arange(-32768, 32768, dtype=np.int16)
    assert not np.array_equal(v.astype(np.float16).astype(np.int16), v)


def test_keeps_shape():
    m = irkit.parse_module(textwrap.dedent("""
    func.func @f(%x: tensor<?xf32>, %s: tensor<3xf32>, %one: tensor<1xf32>, %d: tensor<?xf32>) {
      return
    }"""))
    x, s, one, d = [op for op in m.walk() if op.name == "func.func"][0].regions[0].blocks[0].args
    assert ge.keeps_shape(x, x.type, [one])         # ? * [1] is x's size
    assert not ge.keeps_shape(x, x.type, [s])       # x may be 1, stretched to 3
    assert not ge.keeps_shape(x, x.type, [d])       # ? and ?: either may be 1
    assert ge.keeps_shape(s, s.type, [d])           # ? must be 1 or 3: the result is 3
    assert not ge.keeps_shape(one, one.type, [d])   # 1 stretches to ?


# ----- irkit-opt end to end -------------------------------------------------------------------

def test_irkit_opt_numeric(tmp_path):
    """`--verify-each=numeric` runs each function before and after canonicalize."""
    src = tmp_path / "m.mlir"
    src.write_text("\n".join(textwrap.dedent(t).replace("@f(", f"@f{k}(")
                             for k, (t, _) in enumerate(CASES.values())))
    r = subprocess.run([sys.executable, "-m", "irkit.tools.opt", str(src), "-p",
                        "canonicalize", "--verify-each=numeric"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "graph.pow" not in r.stdout and "func.func @f2" in r.stdout
