"""arith and math on vectors, and the vector dialect (broadcast, reduction).

Every arith/math op that makes sense lane by lane takes `vector<...>` operands (i1 vectors
for comparisons and select conditions). For each such op and a few vector signatures:

- the IR verifies, prints and parses back, custom and generic form alike, and `mlir-opt`
  accepts irkit's text and prints it the same way (skipped without `mlir-opt`);
- the interpreter on a vector equals the interpreter on each lane's scalars (hypothesis), and
  a table of common ops matches numpy directly;
- folding all-constant vector operands (canonicalize) keeps the interpreter's result.

`vector.broadcast` and `vector.reduction` are checked against numpy, their folds against the
interpreter, and their custom syntax against `mlir-opt`.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import irkit
from irkit.dialects.arith import fold as af
from irkit.diagnostics import IRError
from irkit.dialects import load_all
from irkit.opdef import BoolLike, FloatLike, SameOperandsAndResultType, SignlessIntegerLike, \
    registered_ops
from irkit.parser import parse_module, parse_type
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.types import I1, FloatType, IndexType, VectorType

import irkit.dialects.vector  # noqa: F401  (until the dialect is registered by name)

load_all()

INT_VECTORS = ("vector<8xi32>", "vector<4xi8>", "vector<8xi1>", "vector<4xindex>",
               "vector<2x3xi64>")
FLOAT_VECTORS = ("vector<8xf32>", "vector<4xf64>", "vector<4xf16>", "vector<2x4xf32>")


def i1_like(t: str) -> str:
    vt = parse_type(t)
    return str(VectorType(vt.shape, I1))


_CASTS = {
    "arith.extsi": [("vector<8xi8>", "vector<8xi32>"), ("vector<4xi1>", "vector<4xi64>")],
    "arith.extui": [("vector<8xi8>", "vector<8xi32>"), ("vector<4xi1>", "vector<4xi64>")],
    "arith.trunci": [("vector<8xi32>", "vector<8xi8>"), ("vector<4xi64>", "vector<4xi1>")],
    "arith.extf": [("vector<8xf16>", "vector<8xf32>"), ("vector<4xf32>", "vector<4xf64>")],
    "arith.truncf": [("vector<8xf32>", "vector<8xf16>"), ("vector<4xf64>", "vector<4xf32>")],
    "arith.sitofp": [("vector<8xi32>", "vector<8xf32>"), ("vector<4xi8>", "vector<4xf64>")],
    "arith.uitofp": [("vector<8xi32>", "vector<8xf32>"), ("vector<4xi8>", "vector<4xf64>")],
    "arith.fptosi": [("vector<8xf32>", "vector<8xi32>"), ("vector<4xf64>", "vector<4xi8>")],
    "arith.fptoui": [("vector<8xf32>", "vector<8xi32>"), ("vector<4xf64>", "vector<4xi8>")],
    "arith.index_cast": [("vector<8xi32>", "vector<8xindex>"),
                         ("vector<4xindex>", "vector<4xi8>")],
    "arith.index_castui": [("vector<8xi32>", "vector<8xindex>"),
                           ("vector<4xindex>", "vector<4xi8>")],
    "arith.bitcast": [("vector<8xf32>", "vector<8xi32>"), ("vector<8xi32>", "vector<8xf32>"),
                      ("vector<4xf16>", "vector<4xi16>")],
}
#: op name -> [(operand types, result types, generic property text)] for ops whose operand
#: and result types are not all the same vector type
SIGNATURES = {name: [([s], [d], "") for s, d in pairs] for name, pairs in _CASTS.items()}
SIGNATURES["arith.cmpi"] = [([t, t], [i1_like(t)], f"predicate = {p} : i64")
                            for t in INT_VECTORS for p in (0, 2, 6, 9)]
SIGNATURES["arith.cmpf"] = [([t, t], [i1_like(t)], f"predicate = {p} : i64")
                            for t in FLOAT_VECTORS for p in (1, 4, 8, 13)]
SIGNATURES["arith.select"] = (
    [([i1_like(t), t, t], [t], "") for t in ("vector<8xi32>", "vector<8xf32>", "vector<4xi1>",
                                             "vector<2x3xi64>")]
    + [(["i1", t, t], [t], "") for t in ("vector<8xi32>", "vector<4xf64>")])
SIGNATURES["math.fpowi"] = [(["vector<8xf32>", "vector<8xi32>"], ["vector<8xf32>"], ""),
                            (["vector<4xf64>", "vector<4xi8>"], ["vector<4xf64>"], "")]
SIGNATURES["math.sincos"] = [([t], [t, t], "") for t in FLOAT_VECTORS]
SIGNATURES["arith.addui_extended"] = [([t, t], [t, i1_like(t)], "") for t in INT_VECTORS]
SIGNATURES["arith.mulsi_extended"] = [([t, t], [t, t], "") for t in INT_VECTORS]
SIGNATURES["arith.mului_extended"] = SIGNATURES["arith.mulsi_extended"]


def signatures(name: str, cls) -> list:
    """(operand types, result types, properties) of `cls` on vectors."""
    if name in SIGNATURES:
        return SIGNATURES[name]
    cons = [od.constraint for od in cls.spec.operands]
    if cls.has_trait(SameOperandsAndResultType) and len(set(cons)) == 1:
        types = INT_VECTORS if cons[0] is SignlessIntegerLike else \
            FLOAT_VECTORS if cons[0] is FloatLike else ()
        return [([t] * len(cons), [t], "") for t in types]
    if cons == [FloatLike] and [r.constraint for r in cls.spec.results] == [BoolLike]:
        return [([t], [i1_like(t)], "") for t in FLOAT_VECTORS]       # math.isnan & co
    return []


ELEMENTWISE = sorted(n for n, c in registered_ops().items()
                     if n.split(".")[0] in ("arith", "math") and hasattr(c, "evaluate")
                     and n != "arith.constant")
CASES = [pytest.param(name, ots, rts, props, id=f"{name}-{'-'.join(ots)}-{k}")
         for name in ELEMENTWISE
         for k, (ots, rts, props) in enumerate(signatures(name, registered_ops()[name]))]


def test_every_elementwise_op_has_a_vector_signature():
    missing = [n for n in ELEMENTWISE if not signatures(n, registered_ops()[n])]
    assert not missing, f"add these ops to SIGNATURES in {__file__}: {missing}"


def function(name: str, ots, rts, props: str, fn: str = "f") -> str:
    """`@fn` applying op `name` (generic form) to its arguments and returning the results."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(ots))
    uses = ", ".join(f"%a{i}" for i in range(len(ots)))
    prop = f" <{{{props}}}>" if props else ""
    res = f"%r:{len(rts)}" if len(rts) > 1 else "%r"
    rvals = ", ".join(f"%r#{i}" for i in range(len(rts))) if len(rts) > 1 else "%r"
    rtypes = ", ".join(rts)
    return (f"func.func @{fn}({args}) -> ({rtypes}) {{\n"
            f"  {res} = \"{name}\"({uses}){prop} : ({', '.join(ots)}) -> ({rtypes})\n"
            f"  return {rvals} : {rtypes}\n}}\n")


# ----- syntax ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,ots,rts,props", CASES)
def test_vector_op_verifies_and_round_trips(name, ots, rts, props):
    m = parse_module(function(name, ots, rts, props))
    custom = print_op(m)
    assert f"= {name} " in custom                           # printed in custom form
    assert print_op(parse_module(custom)) == custom
    generic = print_op(m, generic=True)
    assert print_op(parse_module(generic), generic=True) == generic
    assert print_op(parse_module(generic)) == custom


def _mlir_opt() -> str | None:
    for cand in ("/usr/lib/llvm-22/bin/mlir-opt", shutil.which("mlir-opt")):
        if cand and shutil.which(cand):
            return cand
    return None


def mlir_opt(text: str, *args: str) -> str:
    exe = _mlir_opt()
    if exe is None:
        pytest.skip("mlir-opt not found")
    out = subprocess.run([exe, *args, "-"], input=text, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


# SSA names, and lists of them (`%0:2` and `%a, %b` both name two results)
_SSA = re.compile(r"%[\w#:.$-]+(, %[\w#:.$-]+)*")


def same_modulo_names(a: str, b: str) -> bool:
    return _SSA.sub("%_", a).split() == _SSA.sub("%_", b).split()


def test_mlir_opt_agrees_on_every_vector_op():
    """All vector signatures in one module: mlir-opt reads irkit's generic form and prints it
    back unchanged, and reads irkit's custom form and prints the same custom form."""
    text = "".join(function(c.values[0], *c.values[1:], fn=f"f{k}") for k, c in
                   enumerate(CASES))
    m = parse_module(text)
    generic = print_op(m, generic=True)
    # (mlir-opt numbers block arguments across functions in generic form: names differ)
    assert same_modulo_names(mlir_opt(generic, "--mlir-print-op-generic"), generic)
    custom = print_op(m)
    assert same_modulo_names(mlir_opt(custom), custom)


@pytest.mark.parametrize("body,msg", [
    ('"arith.addf"(%x, %y) : (vector<8xf32>, vector<4xf32>) -> vector<8xf32>',
     "requires the same type for all operands and results"),
    ('"arith.addi"(%i, %i) : (vector<8xi32>, vector<8xi32>) -> i32',
     "requires the same type for all operands and results"),
    ('"arith.cmpf"(%x, %x) <{predicate = 1 : i64}> : (vector<8xf32>, vector<8xf32>) -> i1',
     "result type has i1 element type and same shape as operands"),
    ('"arith.cmpi"(%i, %i) <{predicate = 1 : i64}> : (vector<8xi32>, vector<8xi32>) -> '
     'vector<4xi1>', "result type has i1 element type and same shape as operands"),
    ('"arith.select"(%c, %y, %y) : (vector<8xi1>, vector<4xf32>, vector<4xf32>) -> '
     'vector<4xf32>', "condition is signless i1 or has matching shape"),
    ('"arith.select"(%c, %f, %f) : (vector<8xi1>, f32, f32) -> f32', "must have the same shape"),
    ('"arith.extsi"(%i) : (vector<8xi32>) -> vector<4xi64>', "requires the same shape"),
    ('"arith.sitofp"(%i) : (vector<8xi32>) -> f32', "requires the same shape"),
    ('"math.fpowi"(%x, %j) : (vector<8xf32>, vector<4xi32>) -> vector<8xf32>', "same shape"),
    ('"math.isnan"(%x) : (vector<8xf32>) -> i1', "same shape as operands"),
    ('"math.absf"(%i) : (vector<8xi32>) -> vector<8xi32>', "must be floating-point-like"),
    ('"arith.addi"(%x, %x) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>',
     "must be signless-integer-like"),
])
def test_vector_verifier_messages(body, msg):
    text = (f"func.func @f(%x: vector<8xf32>, %y: vector<4xf32>, %i: vector<8xi32>, "
            f"%j: vector<4xi32>, %c: vector<8xi1>, %f: f32) {{\n  %0 = {body}\n  return\n}}")
    with pytest.raises(IRError) as e:
        parse_module(text)
    assert msg in str(e.value)


# ----- semantics ---------------------------------------------------------------------------------


def same(a, b) -> bool:
    """Exact equality; floats bit for bit, except that any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or (a.dtype.kind == "f") != (b.dtype.kind == "f"):
        return False
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):             # signalling NaNs quieten
            a, b = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan])
                    and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))
    return bool(np.array_equal(a.astype(np.int64), b.astype(np.int64)))


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 3.0e38, 1e-40, 65504.0]


def _narrow(v: float, dt):
    with np.errstate(over="ignore"):
        return np.asarray(v, np.float64).astype(dt)[()]


def lanes(t: VectorType):
    """A strategy for numpy values of vector type `t`: special values mixed with random."""
    et = t.element
    n = int(np.prod(t.shape))
    if isinstance(et, FloatType):
        dt = af.numpy_dtype(et)
        elem = st.one_of(st.sampled_from(_SPECIAL), st.floats(-1e4, 1e4),
                         st.floats(allow_nan=True, allow_infinity=True))
        with_dtype = elem.map(lambda v: _narrow(v, dt))
        return st.lists(with_dtype, min_size=n, max_size=n).map(
            lambda xs: np.array(xs, dtype=dt).reshape(t.shape))
    info = af.int_info(et)
    w = info.width
    lo, hi = (0, 1) if info.is_bool else (-(1 << (w - 1)), (1 << (w - 1)) - 1)
    elem = st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1, min(w, hi)]),
                     st.integers(-4, 4).map(lambda v: max(lo, min(hi, v))))
    dt = np.int64 if info.is_index else af.numpy_dtype(et)
    return st.lists(elem, min_size=n, max_size=n).map(
        lambda xs: np.array(xs).astype(dt).reshape(t.shape))


def _scalar_types(types) -> list[str]:
    return [str(parse_type(t).element) if t.startswith("vector") else t for t in types]


def _call(m, *args):
    with np.errstate(all="ignore"):
        r = irkit.interpret(m, "f", *args)
    return list(r) if isinstance(r, tuple) else [r]


@pytest.mark.parametrize("name,ots,rts,props", CASES)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_vector_evaluation_is_lane_by_lane(name, ots, rts, props, data):
    """An op on vectors gives, in every lane, what it gives on that lane's scalars."""
    vec = parse_module(function(name, ots, rts, props))
    scalar = parse_module(function(name, _scalar_types(ots), _scalar_types(rts), props))
    vts = [parse_type(t) for t in ots]
    args = [data.draw(lanes(t)) if isinstance(t, VectorType) else data.draw(st.booleans())
            for t in vts]
    got = _call(vec, *args)
    shape = parse_type(rts[0]).shape
    for k, rt in enumerate(rts):
        want_dtype = np.int64 if isinstance(parse_type(rt).element, IndexType) else \
            af.numpy_dtype(parse_type(rt).element)
        assert got[k].shape == shape and got[k].dtype == want_dtype, (got[k].shape, got[k].dtype)
    for idx in np.ndindex(*shape):
        lane_args = [a[idx] if isinstance(t, VectorType) else a for a, t in zip(args, vts)]
        lane_args = [int(a) if isinstance(t, VectorType) and isinstance(t.element, IndexType)
                     else a for a, t in zip(lane_args, vts)]
        want = _call(scalar, *lane_args)
        for k in range(len(rts)):
            assert same(got[k][idx], want[k]), (idx, lane_args, got[k][idx], want[k])


F32 = "vector<8xf32>"
I32 = "vector<8xi32>"


def _u32(a):
    return a.view(np.uint32)


#: (op text with %a, %b, %c, operand types, result type, numpy reference)
NUMPY_TABLE = [
    ("arith.addf %a, %b : " + F32, [F32, F32], F32, np.add),
    ("arith.subf %a, %b : " + F32, [F32, F32], F32, np.subtract),
    ("arith.mulf %a, %b : " + F32, [F32, F32], F32, np.multiply),
    ("arith.divf %a, %b : " + F32, [F32, F32], F32, np.divide),
    ("arith.negf %a : " + F32, [F32], F32, np.negative),
    ("arith.maximumf %a, %b : " + F32, [F32, F32], F32, np.maximum),
    ("arith.minimumf %a, %b : " + F32, [F32, F32], F32, np.minimum),
    ("arith.maxnumf %a, %b : " + F32, [F32, F32], F32, np.fmax),
    ("arith.minnumf %a, %b : " + F32, [F32, F32], F32, np.fmin),
    ("math.absf %a : " + F32, [F32], F32, np.abs),
    ("math.sqrt %a : " + F32, [F32], F32, np.sqrt),
    ("math.floor %a : " + F32, [F32], F32, np.floor),
    ("math.copysign %a, %b : " + F32, [F32, F32], F32, np.copysign),
    ("math.exp %a : " + F32, [F32], F32,
     lambda a: np.exp(a.astype(np.float64)).astype(np.float32)),
    ("math.fma %a, %b, %c : " + F32, [F32, F32, F32], F32,
     lambda a, b, c: (a.astype(np.float64) * b + c).astype(np.float32)),
    ("arith.cmpf olt, %a, %b : " + F32, [F32, F32], "vector<8xi1>", np.less),
    ("arith.cmpf une, %a, %b : " + F32, [F32, F32], "vector<8xi1>", np.not_equal),
    ("arith.addi %a, %b : " + I32, [I32, I32], I32, np.add),
    ("arith.subi %a, %b : " + I32, [I32, I32], I32, np.subtract),
    ("arith.muli %a, %b : " + I32, [I32, I32], I32, np.multiply),
    ("arith.andi %a, %b : " + I32, [I32, I32], I32, np.bitwise_and),
    ("arith.ori %a, %b : " + I32, [I32, I32], I32, np.bitwise_or),
    ("arith.xori %a, %b : " + I32, [I32, I32], I32, np.bitwise_xor),
    ("arith.maxsi %a, %b : " + I32, [I32, I32], I32, np.maximum),
    ("arith.minui %a, %b : " + I32, [I32, I32], I32,
     lambda a, b: np.minimum(_u32(a), _u32(b)).view(np.int32)),
    ("arith.cmpi slt, %a, %b : " + I32, [I32, I32], "vector<8xi1>", np.less),
    ("arith.cmpi ugt, %a, %b : " + I32, [I32, I32], "vector<8xi1>",
     lambda a, b: _u32(a) > _u32(b)),
    ("math.absi %a : " + I32, [I32], I32, np.abs),
    ("math.ctpop %a : " + I32, [I32], I32,
     lambda a: np.array([bin(int(v)).count("1") for v in _u32(a)], np.int32)),
    ("arith.select %c, %a, %b : vector<8xi1>, " + F32, [F32, F32, "vector<8xi1>"], F32,
     lambda a, b, c: np.where(c, a, b)),
    ("arith.sitofp %a : " + I32 + " to " + F32, [I32], F32, lambda a: a.astype(np.float32)),
    ("arith.extsi %a : vector<8xi8> to " + I32, ["vector<8xi8>"], I32,
     lambda a: a.astype(np.int32)),
    ("arith.trunci %a : " + I32 + " to vector<8xi8>", [I32], "vector<8xi8>",
     lambda a: a.astype(np.int8)),
    ("arith.bitcast %a : " + F32 + " to " + I32, [F32], I32, lambda a: a.view(np.int32)),
    ("arith.index_cast %a : " + I32 + " to vector<8xindex>", [I32], "vector<8xindex>",
     lambda a: a.astype(np.int64)),
]


@pytest.mark.parametrize("text,ots,rt,ref", NUMPY_TABLE, ids=[t[0].split(" :")[0]
                                                              for t in NUMPY_TABLE])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_vector_ops_match_numpy(text, ots, rt, ref, data):
    names = ["%a", "%b", "%c"][:len(ots)]
    args = ", ".join(f"{n}: {t}" for n, t in zip(names, ots))
    m = parse_module(f"func.func @f({args}) -> {rt} {{\n  %r = {text}\n"
                     f"  return %r : {rt}\n}}")
    values = [data.draw(lanes(parse_type(t))) for t in ots]
    with np.errstate(all="ignore"):
        got = irkit.interpret(m, "f", *values)
        want = ref(*values)
    np.testing.assert_array_equal(got, want)           # -0 == +0, NaN == NaN
    assert got.dtype == np.asarray(want).dtype


@pytest.mark.parametrize("name,ots,rts,props", CASES)
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_vector_folds_agree_with_interpreter(name, ots, rts, props, data):
    """The op on constant vectors, canonicalized (folded to dense constants, or left alone
    where the result would be poison), computes what the interpreter computes unfolded."""
    vts = [parse_type(t) for t in ots]
    values = [data.draw(lanes(t)) if isinstance(t, VectorType) else data.draw(st.booleans())
              for t in vts]
    consts = "".join(f"  %a{i} = arith.constant {af.value_to_attr(v, t)}\n"
                     for i, (v, t) in enumerate(zip(values, vts)))
    fn = function(name, ots, rts, props)
    text = re.sub(r"@f\([^)]*\)", "@f()", fn).replace("{\n", "{\n" + consts, 1)
    before = parse_module(text)
    want = _call(before)
    after = parse_module(text)
    PassManager.parse("canonicalize").run(after)
    after.verify()
    got = _call(after)
    assert all(same(g, w) for g, w in zip(got, want)), (got, want)


def test_dense_vector_constants_fold_through_a_chain():
    m = parse_module("""
    func.func @f() -> vector<4xf32> {
      %a = arith.constant dense<[1.0, -2.0, 3.5, 0.0]> : vector<4xf32>
      %b = arith.constant dense<2.0> : vector<4xf32>
      %p = arith.mulf %a, %b : vector<4xf32>
      %e = math.exp %p : vector<4xf32>
      %c = arith.cmpf ogt, %e, %b : vector<4xf32>
      %s = arith.select %c, %e, %a : vector<4xi1>, vector<4xf32>
      return %s : vector<4xf32>
    }
    """)
    want = irkit.interpret(m, "f")
    PassManager.parse("canonicalize").run(m)
    ops = [op.name for op in m.walk()]
    assert ops.count("arith.constant") == 1 and "arith.mulf" not in ops
    assert same(irkit.interpret(m, "f"), want)
    a = np.array([1.0, -2.0, 3.5, 0.0], np.float32)
    e = np.exp(2 * a.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(want, np.where(e > 2, e, a))


# ----- vector.broadcast --------------------------------------------------------------------------


BROADCASTS = [("f32", "vector<8xf32>"), ("i32", "vector<4xi32>"), ("i1", "vector<3xi1>"),
              ("index", "vector<4xindex>"), ("f64", "vector<2x3xf64>"),
              ("vector<4xf32>", "vector<3x4xf32>"), ("vector<1x4xi8>", "vector<2x3x4xi8>"),
              ("vector<2x1xf32>", "vector<2x5xf32>"), ("vector<4xf32>", "vector<4xf32>")]


def _value(t):
    """A strategy for an interpreter value of scalar or vector type `t`."""
    if isinstance(t, VectorType):
        return lanes(t)
    return lanes(VectorType((1,), t)).map(
        lambda a: int(a[0]) if isinstance(t, IndexType) else a[0])


@pytest.mark.parametrize("src,dst", BROADCASTS)
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_broadcast_matches_numpy(src, dst, data):
    m = parse_module(f"func.func @f(%s: {src}) -> {dst} {{\n"
                     f"  %v = vector.broadcast %s : {src} to {dst}\n  return %v : {dst}\n}}")
    st_, dt = parse_type(src), parse_type(dst)
    x = data.draw(_value(st_))
    got = irkit.interpret(m, "f", x)
    want_dtype = np.int64 if isinstance(dt.element, IndexType) else af.numpy_dtype(dt.element)
    assert got.dtype == want_dtype and got.flags.writeable
    assert same(got, np.broadcast_to(np.asarray(x, want_dtype), dt.shape))
    # Folding a constant source gives the same dense constant.
    c = parse_module(f"func.func @f() -> {dst} {{\n"
                     f"  %s = arith.constant {af.value_to_attr(x, st_)}\n"
                     f"  %v = vector.broadcast %s : {src} to {dst}\n  return %v : {dst}\n}}")
    PassManager.parse("canonicalize").run(c)
    assert "vector.broadcast" not in print_op(c)
    assert same(irkit.interpret(c, "f"), got)


def test_broadcast_folds():
    m = parse_module("""
    func.func @f(%x: f32, %v: vector<4xf32>) -> (vector<2x4xf32>, vector<4xf32>, vector<8xf32>) {
      %b = vector.broadcast %x : f32 to vector<4xf32>
      %bb = vector.broadcast %b : vector<4xf32> to vector<2x4xf32>
      %same = vector.broadcast %v : vector<4xf32> to vector<4xf32>
      %c = arith.constant 2.5 : f32
      %splat = vector.broadcast %c : f32 to vector<8xf32>
      return %bb, %same, %splat : vector<2x4xf32>, vector<4xf32>, vector<8xf32>
    }
    """)
    x, v = np.float32(1.5), np.arange(4, dtype=np.float32)
    want = irkit.interpret(m, "f", x, v)
    PassManager.parse("canonicalize").run(m)
    text = print_op(m)
    assert "vector.broadcast %arg0 : f32 to vector<2x4xf32>" in text      # one step, not two
    assert text.count("vector.broadcast") == 1
    assert "arith.constant dense<2.500000e+00> : vector<8xf32>" in text
    assert re.search(r"return %\w+, %arg1, %\w+ :", text)              # %same is %v
    for g, w in zip(irkit.interpret(m, "f", x, v), want):
        assert same(g, w)


# ----- vector.reduction --------------------------------------------------------------------------


def _seq(f, dtype):
    """Sequential reduction in the lanes' own precision."""
    return lambda xs, acc: functools.reduce(lambda a, b: dtype(f(a, b)), xs[1:] if acc is None
                                            else xs, xs[0] if acc is None else acc)


def _maximumf(a, b):
    return np.float32(np.nan) if np.isnan(a) or np.isnan(b) else max(a, b)


def _minimumf(a, b):
    return np.float32(np.nan) if np.isnan(a) or np.isnan(b) else min(a, b)


def _all(xs, acc):
    """The lanes, and the accumulator if any, as one array of the lanes' dtype."""
    return xs if acc is None else np.append(xs, np.asarray(acc, xs.dtype))


def _wrap64(v: int) -> int:
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


_F = np.float32
#: kind -> (vector type, reference(lanes, acc or None))
REDUCTIONS = {
    "add": [("vector<8xf32>", _seq(lambda a, b: a + b, _F)),
            ("vector<8xi32>", lambda xs, acc: np.int64(np.sum(xs, dtype=np.int64)
                                                       + (acc or 0)).astype(np.int32)),
            ("vector<4xindex>", lambda xs, acc: _wrap64(sum(map(int, xs)) + (acc or 0)))],
    "mul": [("vector<4xf32>", _seq(lambda a, b: a * b, _F)),
            ("vector<4xi8>", lambda xs, acc: np.int8(functools.reduce(
                lambda a, b: (int(a) * int(b) + 128) % 256 - 128, xs, 1 if acc is None
                else acc)))],
    "minui": [("vector<8xi32>", lambda xs, acc: np.min(_all(xs, acc).view(np.uint32))
               .view(np.int32))],
    "minsi": [("vector<8xi32>", lambda xs, acc: np.min(_all(xs, acc)))],
    "maxui": [("vector<8xi8>", lambda xs, acc: np.max(_all(xs, acc).view(np.uint8))
               .view(np.int8))],
    "maxsi": [("vector<8xi32>", lambda xs, acc: np.max(_all(xs, acc)))],
    "and": [("vector<8xi32>", lambda xs, acc: np.bitwise_and.reduce(_all(xs, acc)))],
    "or": [("vector<8xi1>", lambda xs, acc: np.any(_all(xs, acc)))],
    "xor": [("vector<8xi32>", lambda xs, acc: np.bitwise_xor.reduce(_all(xs, acc)))],
    "maxnumf": [("vector<8xf32>", lambda xs, acc: np.fmax.reduce(_all(xs, acc)))],
    "minnumf": [("vector<8xf32>", lambda xs, acc: np.fmin.reduce(_all(xs, acc)))],
    "maximumf": [("vector<8xf32>", _seq(_maximumf, _F))],
    "minimumf": [("vector<8xf32>", _seq(_minimumf, _F))],
}
REDUCTION_CASES = [pytest.param(kind, t, ref, acc, id=f"{kind}-{t}-{'acc' if acc else 'noacc'}")
                   for kind, cases in REDUCTIONS.items() for t, ref in cases
                   for acc in (False, True)]


def test_every_combining_kind_is_tested():
    from irkit.dialects.vector import COMBINING_KINDS
    assert set(REDUCTIONS) == set(COMBINING_KINDS)


def reduction_fn(kind: str, t: str, acc: bool) -> str:
    et = str(parse_type(t).element)
    extra, use = (f", %acc: {et}", ", %acc") if acc else ("", "")
    return (f"func.func @f(%v: {t}{extra}) -> {et} {{\n"
            f"  %r = vector.reduction <{kind}>, %v{use} : {t} into {et}\n  return %r : {et}\n}}")


@pytest.mark.parametrize("kind,t,ref,acc", REDUCTION_CASES)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reduction_matches_numpy(kind, t, ref, acc, data):
    vt = parse_type(t)
    m = parse_module(reduction_fn(kind, t, acc))
    v = data.draw(lanes(vt))
    a = data.draw(_value(vt.element)) if acc else None
    got = irkit.interpret(m, "f", v, *([a] if acc else []))
    with np.errstate(all="ignore"):
        want = ref(v, a)
    if isinstance(vt.element, IndexType):
        assert type(got) is int and got == want
    else:
        assert np.asarray(got).dtype == af.numpy_dtype(vt.element)
        np.testing.assert_array_equal(got, want)       # -0 == +0: ties are the arith ops'


@pytest.mark.parametrize("kind,t,ref,acc", REDUCTION_CASES)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_reduction_folds_agree_with_interpreter(kind, t, ref, acc, data):
    vt = parse_type(t)
    v = data.draw(lanes(vt))
    a = data.draw(_value(vt.element)) if acc else None
    text = reduction_fn(kind, t, acc)
    want = irkit.interpret(parse_module(text), "f", v, *([a] if acc else []))
    consts = f"  %v = arith.constant {af.value_to_attr(v, vt)}\n"
    if acc:
        consts += f"  %acc = arith.constant {af.value_to_attr(a, vt.element)}\n"
    folded = parse_module(re.sub(r"@f\([^)]*\)", "@f()", text).replace("{\n", "{\n" + consts, 1))
    PassManager.parse("canonicalize").run(folded)
    assert "vector.reduction" not in print_op(folded)
    assert same(irkit.interpret(folded, "f"), want)


def test_float_add_reduces_in_lane_order():
    """((v0 + v1) + v2) + v3 in f32: 1e8 + 1 + ... loses the ones, a tree would not."""
    m = parse_module(reduction_fn("add", "vector<4xf32>", False))
    v = np.array([1e8, 1, 1, -1e8], np.float32)
    assert irkit.interpret(m, "f", v) == 0.0
    m = parse_module(reduction_fn("add", "vector<4xf32>", True))
    assert irkit.interpret(m, "f", v, np.float32(-1e8)) == np.float32(-1e8)


def test_reduction_of_broadcast_folds_for_idempotent_kinds():
    m = parse_module("""
    func.func @f(%x: f32, %i: i32) -> (f32, i32, f32, f32, f32) {
      %b = vector.broadcast %x : f32 to vector<8xf32>
      %bi = vector.broadcast %i : i32 to vector<4xi32>
      %one = vector.broadcast %x : f32 to vector<1xf32>
      %m = vector.reduction <maximumf>, %b : vector<8xf32> into f32
      %a = vector.reduction <and>, %bi : vector<4xi32> into i32
      %s = vector.reduction <add>, %b : vector<8xf32> into f32
      %p = vector.reduction <mul>, %one : vector<1xf32> into f32
      %q = vector.reduction <minnumf>, %b, %x : vector<8xf32> into f32
      return %m, %a, %s, %p, %q : f32, i32, f32, f32, f32
    }
    """)
    args = (np.float32(0.1), np.int32(6))
    want = irkit.interpret(m, "f", *args)
    PassManager.parse("canonicalize").run(m)
    text = print_op(m)
    assert text.count("vector.reduction") == 2          # add over 8 lanes and the acc case
    assert "vector.reduction <add>" in text and "vector.reduction <minnumf>" in text
    assert "return %arg0, %arg1, %" in text
    for g, w in zip(irkit.interpret(m, "f", *args), want):
        assert same(g, w)
    assert want[2] == functools.reduce(lambda a, b: np.float32(a + b), [np.float32(0.1)] * 8)


def test_vector_ops_in_a_vectorized_loop():
    """A dot product the way vectorization writes it: a vector accumulator in a loop.for, a
    broadcast scale, a final reduction."""
    import irkit.dialects.loop  # noqa: F401
    m = parse_module("""
    func.func @f(%x: vector<8xf32>, %y: vector<8xf32>, %s: f32, %n: index) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant dense<0.0> : vector<8xf32>
      %sv = vector.broadcast %s : f32 to vector<8xf32>
      %acc = loop.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (vector<8xf32>) {
        %p = arith.mulf %x, %y : vector<8xf32>
        %q = math.fma %p, %sv, %a : vector<8xf32>
        loop.yield %q : vector<8xf32>
      }
      %r = vector.reduction <add>, %acc : vector<8xf32> into f32
      return %r : f32
    }
    """)
    x = np.arange(8, dtype=np.float32)
    y = np.full(8, 0.5, np.float32)
    got = irkit.interpret(m, "f", x, y, np.float32(2.0), 3)
    assert got == np.float32(3 * np.sum(x * y * 2))
    PassManager.parse("loop-invariant-code-motion,canonicalize,cse").run(m)
    (loop,) = [op for op in m.walk() if op.name == "loop.for"]
    assert [op.name for op in loop.body.blocks[0].ops] == ["math.fma", "loop.yield"]
    assert irkit.interpret(m, "f", x, y, np.float32(2.0), 3) == got


def test_vector_ops_custom_form_is_mlir_syntax():
    """irkit's custom form of the vector ops is mlir-opt's, both ways; the generic form goes
    through mlir-opt unchanged; mlir-opt folds a broadcast of a constant as irkit does."""
    text = """
    func.func @f(%s: f32, %v: vector<8xf32>, %i: vector<8xi32>, %acc: f32, %n: index)
        -> (vector<8xf32>, vector<2x8xf32>, f32, f32, i32, i32, vector<4xindex>, vector<4xf32>) {
      %b = vector.broadcast %s : f32 to vector<8xf32>
      %b2 = vector.broadcast %v : vector<8xf32> to vector<2x8xf32>
      %r = vector.reduction <add>, %v : vector<8xf32> into f32
      %r2 = vector.reduction <maximumf>, %v, %acc fastmath<fast> : vector<8xf32> into f32
      %r3 = vector.reduction <maxsi>, %i {tag} : vector<8xi32> into i32
      %r4 = vector.reduction <xor>, %i : vector<8xi32> into i32
      %bn = vector.broadcast %n : index to vector<4xindex>
      %c = arith.constant 2.0 : f32
      %bc = vector.broadcast %c : f32 to vector<4xf32>
      return %b, %b2, %r, %r2, %r3, %r4, %bn, %bc
          : vector<8xf32>, vector<2x8xf32>, f32, f32, i32, i32, vector<4xindex>, vector<4xf32>
    }
    """
    m = parse_module(text)
    ours = print_op(m)
    assert print_op(parse_module(ours)) == ours
    assert same_modulo_names(mlir_opt(ours), ours)
    generic = print_op(m, generic=True)
    assert mlir_opt(generic, "--mlir-print-op-generic").strip() == generic.strip()
    assert same_modulo_names(print_op(parse_module(mlir_opt(ours))), ours)
    PassManager.parse("canonicalize").run(m)
    theirs = mlir_opt(ours, "--canonicalize")
    assert "arith.constant dense<2.000000e+00> : vector<4xf32>" in theirs
    assert same_modulo_names(_sorted_lines(print_op(m)), _sorted_lines(theirs))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       element=st.sampled_from(["f32", "i8", "f64", "index"]), data=st.data())
def test_extract_takes_the_element_or_row_interpreted_and_compiled(shape, element, data):
    """`vector.extract` at a position of any depth is numpy's indexing by it: an element
    (a full position) or the row of the remaining dims (a leading part), in the
    interpreter and in LLVM's code (`extractelement` at the flat lane, a `shufflevector`
    of the row's lanes)."""
    from irkit.backends.llvm_cpu import compile_module
    depth = data.draw(st.integers(0, len(shape)))
    pos = [data.draw(st.integers(0, d - 1)) for d in shape[:depth]]
    vt = f"vector<{'x'.join(map(str, shape))}x{element}>"
    rt = element if depth == len(shape) else \
        f"vector<{'x'.join(map(str, shape[depth:]))}x{element}>"
    m = parse_module(f"func.func @f(%v: {vt}) -> {rt} {{\n"
                     f"  %r = vector.extract %v{pos} : {rt} from {vt}\n"
                     f"  return %r : {rt}\n}}")
    v = data.draw(lanes(parse_type(vt)))
    want = v[tuple(pos)]
    assert same(np.asarray(irkit.interpret(m, "f", v)), want)
    assert same(np.asarray(compile_module(m, 2).f(v)), want)


def _sorted_lines(text: str) -> str:
    """The lines of a function body in a canonical order (the two tools place folded
    constants differently), SSA names dropped."""
    return "\n".join(sorted(_SSA.sub("%_", ln).strip() for ln in text.splitlines()))


@settings(max_examples=40, deadline=None)
@given(n1=st.integers(1, 9), n2=st.integers(1, 9), element=st.sampled_from(["f32", "i8", "f64"]),
       data=st.data())
def test_shuffle_picks_lanes_interpreted_and_compiled(n1, n2, element, data):
    """Lane i of `vector.shuffle` is lane mask[i] of the operands laid end to end, in the
    interpreter and in LLVM's code, also where the operands differ in length (the shorter
    widened first)."""
    from irkit.backends.llvm_cpu import compile_module
    mask = data.draw(st.lists(st.integers(0, n1 + n2 - 1), min_size=1, max_size=12))
    t1, t2 = f"vector<{n1}x{element}>", f"vector<{n2}x{element}>"
    rt = f"vector<{len(mask)}x{element}>"
    m = parse_module(f"func.func @f(%a: {t1}, %b: {t2}) -> {rt} {{\n"
                     f"  %r = vector.shuffle %a, %b {mask} : {t1}, {t2}\n"
                     f"  return %r : {rt}\n}}")
    a, b = data.draw(lanes(parse_type(t1))), data.draw(lanes(parse_type(t2)))
    want = np.concatenate([a, b])[mask]
    assert same(irkit.interpret(m, "f", a, b), want)
    assert same(np.asarray(compile_module(m, 2).f(a, b)), want)
