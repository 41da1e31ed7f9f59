"""Contract test generated from the op registry: every arith/math folder agrees with `evaluate`.

For every registered `arith`/`math` op that has reference semantics (`evaluate`), and each
signature it takes (derived from its operand constraints, or listed in `SIGNATURES` for casts,
comparisons and other ops whose types are not all the same), the op is built on seeded random
operands and folded three ways:

- all operands constant: the folder's result (constants, or one of the operands) must equal
  `evaluate` on the same values, or the folder must decline (poison: x / 0, oversized shifts,
  out-of-range float -> int);
- one operand a free value and the others constant (special values such as 0, -1, MIN, 1.0,
  -0.0, inf, NaN): an identity fold (`x * 1 -> x`, `maxnumf(x, NaN) -> x`) or an in-place
  rewrite (cmpi with the constant moved right) must agree with `evaluate` for many values of
  the free operand, NaN and the type's extremes included;
- both operands the same free value (`x - x -> 0`, `max(x, x) -> x`), likewise.

Integers compare exactly, floats bit for bit except that any NaN equals any NaN. A new op
without a derivable signature fails `test_every_op_has_a_signature` until it is added to the
table. `test_contract_detects_*` monkeypatch a wrong folder in and check the test sees it.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.attributes import IntegerAttr
from irkit.dialects.arith import fold as af
from irkit.dialects import load_all
from irkit.dialects.arith import ConstantOp
from irkit.ir import Block, Value
from irkit.opdef import BoolLike, FloatLike, SameOperandsAndResultType, SignlessIntegerLike, \
    registered_ops
from irkit.parser import parse_type
from irkit.types import I64, FloatType, IndexType, RankedTensorType, VectorType

load_all()
OPS = sorted((n, c) for n, c in registered_ops().items()
             if n.split(".")[0] in ("arith", "math") and hasattr(c, "evaluate")
             and n != "arith.constant")

INT_TYPES = ("i1", "i8", "i32", "i64", "index", "tensor<3xi8>")
FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "vector<2xf32>")

_casts = {
    "arith.extsi": [("i1", "i8"), ("i8", "i32"), ("i32", "i64"),
                    ("tensor<3xi8>", "tensor<3xi32>")],
    "arith.trunci": [("i64", "i32"), ("i32", "i8"), ("i8", "i1"),
                     ("tensor<3xi32>", "tensor<3xi8>")],
    "arith.extf": [("f16", "f32"), ("f32", "f64"), ("bf16", "f32"), ("f16", "f64")],
    "arith.truncf": [("f64", "f32"), ("f32", "f16"), ("f32", "bf16"), ("f64", "f16")],
    "arith.sitofp": [("i8", "f32"), ("i32", "f16"), ("i64", "f32"), ("i1", "f64"),
                     ("i32", "bf16")],
    "arith.fptosi": [("f32", "i8"), ("f64", "i32"), ("f16", "i64"), ("f32", "i1")],
    "arith.index_cast": [("i32", "index"), ("index", "i8"), ("index", "i64"), ("i1", "index")],
    "arith.bitcast": [("f32", "i32"), ("i32", "f32"), ("f16", "i16"), ("i16", "bf16"),
                      ("i64", "f64"), ("f64", "f64")],
}
_casts["arith.extui"] = _casts["arith.extsi"]
_casts["arith.uitofp"] = _casts["arith.sitofp"]
_casts["arith.fptoui"] = _casts["arith.fptosi"]
_casts["arith.index_castui"] = _casts["arith.index_cast"]


def _i1_like(t: str) -> str:
    return t.rsplit("x", 1)[0] + "xi1>" if "<" in t else "i1"


def _pred(n: int) -> dict:
    return {"predicate": IntegerAttr(n, I64)}


#: op name -> [(operand types, result types, properties)] for ops whose types differ
SIGNATURES: dict[str, list] = {name: [([s], [d], {}) for s, d in pairs]
                               for name, pairs in _casts.items()}
SIGNATURES["arith.truncf"] += [(["f64"], ["f32"], {"roundingmode": IntegerAttr(m, parse_type(
    "i32"))}) for m in range(5)]
SIGNATURES["arith.cmpi"] = [([t, t], [_i1_like(t)], _pred(p)) for t in INT_TYPES
                            for p in range(10)]
SIGNATURES["arith.cmpf"] = [([t, t], [_i1_like(t)], _pred(p)) for t in FLOAT_TYPES
                            for p in range(16)]
SIGNATURES["arith.select"] = [(["i1", t, t], [t], {}) for t in INT_TYPES + FLOAT_TYPES] + \
    [(["tensor<3xi1>", "tensor<3xi8>", "tensor<3xi8>"], ["tensor<3xi8>"], {})]
SIGNATURES["math.fpowi"] = [(["f32", "i32"], ["f32"], {}), (["f64", "i8"], ["f64"], {}),
                            (["f16", "i32"], ["f16"], {}),
                            (["vector<2xf32>", "vector<2xi32>"], ["vector<2xf32>"], {})]
SIGNATURES["math.sincos"] = [([t], [t, t], {}) for t in FLOAT_TYPES]
SIGNATURES["arith.addui_extended"] = [([t, t], [t, _i1_like(t)], {}) for t in INT_TYPES]
SIGNATURES["arith.mulsi_extended"] = [([t, t], [t, t], {}) for t in INT_TYPES]
SIGNATURES["arith.mului_extended"] = SIGNATURES["arith.mulsi_extended"]


def signatures(name: str, cls) -> list:
    """The (operand types, result types, properties) to test `cls` with."""
    if name in SIGNATURES:
        return SIGNATURES[name]
    cons = {od.constraint for od in cls.spec.operands}
    if cls.has_trait(SameOperandsAndResultType) and len(cons) == 1:
        n = len(cls.spec.operands)
        (c,) = cons
        types = INT_TYPES if c is SignlessIntegerLike else FLOAT_TYPES if c is FloatLike else ()
        return [([t] * n, [t], {}) for t in types]
    if [od.constraint for od in cls.spec.operands] == [FloatLike] and \
            [r.constraint for r in cls.spec.results] == [BoolLike]:
        return [([t], [_i1_like(t)], {}) for t in FLOAT_TYPES]
    return []


# ----- values ------------------------------------------------------------------------------------


def _special_ints(t) -> list[int]:
    info = af.int_info(t)
    w = info.width
    if info.is_bool:
        return [0, -1]
    return [0, 1, -1, 2, w - 1, w, -(1 << (w - 1)), (1 << (w - 1)) - 1]


_SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e-40, 3.0e38,
                   -2.5, 65504.0]


def _scalar(et, rng, special: bool):
    """One element of type `et` in the interpreter's representation."""
    if isinstance(et, FloatType):
        dt = af.numpy_dtype(et)
        if special or rng.random() < 0.3:
            v = _SPECIAL_FLOATS[rng.integers(len(_SPECIAL_FLOATS))]
        else:
            v = rng.standard_normal() * 10.0 ** rng.integers(-3, 4)
        with np.errstate(all="ignore"):
            return af.fix_float(dt(v), et)
    info = af.int_info(et)
    if special or rng.random() < 0.4:
        v = _special_ints(et)[rng.integers(len(_special_ints(et)))]
    else:
        v = int(rng.integers(-(1 << 62), 1 << 62))
    return af.wrap(np.int64(np.uint64(v & 0xFFFFFFFFFFFFFFFF).astype(np.int64)), info)


def random_value(t, rng, special: bool = False):
    if isinstance(t, (RankedTensorType, VectorType)):
        elems = [_scalar(t.element, rng, special) for _ in range(int(np.prod(t.shape)))]
        dt = np.int64 if isinstance(t.element, IndexType) else af.numpy_dtype(t.element)
        return np.array(elems, dtype=dt).reshape(t.shape)
    return _scalar(t, rng, special)


def same(a, b) -> bool:
    """Exact equality; floats bitwise, except that NaN equals NaN (payloads may differ)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            return False
        with np.errstate(all="ignore"):
            a, b = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan]) and
                    np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))
    return bool(np.array_equal(a.astype(np.int64), b.astype(np.int64)))


# ----- checking -----------------------------------------------------------------------------


def _build(cls, operands: list[Value], result_types, props):
    return cls.build(*operands, result_types=result_types, **props)


def _constant(value, t) -> Value:
    return ConstantOp.materialize(af.value_to_attr(value, t), t).results[0]


def _evaluate(op, env: dict):
    with np.errstate(all="ignore"):
        r = op.evaluate(*[env[v] for v in op.operands])
    return list(r) if len(op.results) > 1 else [r]


def _folded_values(op, folded, env: dict, before_operands):
    """The values `fold`'s answer stands for, given operand values `env`."""
    out = []
    for i, r in enumerate(folded):
        if isinstance(r, Value):
            if r is op.results[i]:                          # folded in place: run it again
                out.append(_evaluate(op, env)[i])
            elif r in env:
                out.append(env[r])
            else:
                raise AssertionError(f"fold returned a value from outside the op: {r}")
        else:
            v = af.attr_to_value(r)
            assert v is not None, f"fold returned an attribute that is not a constant: {r}"
            out.append(v)
    return out


def check_op(name: str, cls, rng, trials: int = 12, free_trials: int = 24) -> list[str]:
    """Mismatches between `cls`'s folder and its `evaluate` (empty: the contract holds)."""
    problems = []
    for operand_types, result_types, props in signatures(name, cls):
        ots = [parse_type(t) for t in operand_types]
        rts = [parse_type(t) for t in result_types]
        where = f"{name} ({', '.join(operand_types)}) {props or ''}"
        # 1. All operands constant.
        for _ in range(trials):
            vals = [random_value(t, rng) for t in ots]
            consts = [_constant(v, t) for v, t in zip(vals, ots)]
            op = _build(cls, consts, rts, dict(props))
            env = dict(zip(consts, vals))
            want = _evaluate(op, env)
            folded = op.fold([af.value_to_attr(v, t) for v, t in zip(vals, ots)])
            if folded is None:
                continue
            got = _folded_values(op, folded, env, consts)
            if not all(same(g, w) for g, w in zip(got, want)):
                problems.append(f"{where}: fold{tuple(vals)} = {got}, evaluate = {want}")
        # 2. One operand free, the others special constants; 3. the same value twice.
        layouts = [[i] for i in range(len(ots))] if len(ots) > 1 else []
        if len(ots) == 2 and ots[0] is ots[1]:
            layouts.append([0, 1])
        for free in layouts:
            for _ in range(trials):
                block = Block([ots[free[0]]])
                x = block.args[0]
                const_vals = {i: random_value(t, rng, special=True) for i, t in enumerate(ots)
                              if i not in free}
                operands = [x if i in free else _constant(const_vals[i], t)
                            for i, t in enumerate(ots)]
                op = _build(cls, operands, rts, dict(props))
                envs = []
                for k in range(free_trials):
                    env = {o: const_vals[i] for i, o in enumerate(operands) if i not in free}
                    env[x] = random_value(x.type, rng, special=k % 2 == 0)
                    envs.append((env, _evaluate(op, env)))
                attrs = [None if i in free else af.value_to_attr(const_vals[i], t)
                         for i, t in enumerate(ots)]
                folded = op.fold(attrs)
                if folded is None:
                    continue
                for env, want in envs:
                    got = _folded_values(op, folded, env, operands)
                    if not all(same(g, w) for g, w in zip(got, want)):
                        problems.append(f"{where}: operands {free} = {env[x]!r}, constants "
                                        f"{const_vals}: fold gives {got}, evaluate {want}")
                        break
    return problems


# ----- tests --------------------------------------------------------------------------------


def test_every_op_has_a_signature():
    missing = [name for name, cls in OPS if not signatures(name, cls)]
    assert not missing, f"add these ops to SIGNATURES in {__file__}: {missing}"


@pytest.mark.parametrize("name,cls", OPS, ids=[n for n, _ in OPS])
def test_fold_agrees_with_evaluate(name, cls):
    rng = np.random.default_rng(sum(map(ord, name)))
    problems = check_op(name, cls, rng)
    assert not problems, "\n".join(problems[:10])


def test_contract_detects_a_wrong_constant_folder(monkeypatch):
    from irkit.dialects.arith import AddIOp

    def off_by_one(self, operands):
        if all(a is not None for a in operands):
            v = af.attr_to_value(operands[0])
            return [af.value_to_attr(np.asarray(v) + 1, self.results[0].type)]
        return None

    monkeypatch.setattr(AddIOp, "fold", off_by_one)
    problems = check_op("arith.addi", AddIOp, np.random.default_rng(0))
    assert problems and "fold" in problems[0]


def test_contract_detects_a_wrong_identity_fold(monkeypatch):
    """maxnumf(x, -inf) -> x is wrong for x = NaN (the result is -inf): irkit had this fold."""
    from irkit.dialects.arith import MaxNumFOp
    monkeypatch.setattr(MaxNumFOp, "_units", ((-np.inf, False), (np.nan, False)))
    problems = check_op("arith.maxnumf", MaxNumFOp, np.random.default_rng(0), trials=40)
    assert any("operands [0]" in p for p in problems), problems[:3]


def test_contract_detects_a_wrong_in_place_fold(monkeypatch):
    """Moving a constant to the right with an unmirrored predicate (c < x -> x < c)."""
    from irkit.dialects.arith import floating as arith_float
    monkeypatch.setattr(arith_float, "CMPI_SWAPPED", tuple(range(10)))
    problems = check_op("arith.cmpi", arith_float.CmpIOp, np.random.default_rng(0))
    assert problems


def test_signed_zero_constants_stay_apart():
    """FloatAttr(0.0) and FloatAttr(-0.0) are different constants: the folder's table must not
    merge them."""
    import irkit
    from irkit.parser import parse_module
    from irkit.pass_manager import PassManager
    m = parse_module("""func.func @f(%x: f32) -> f32 {
      %m0 = arith.constant -0.0 : f32
      %p0 = arith.constant 0.0 : f32
      %a = arith.addf %x, %m0 : f32
      %r = arith.addf %a, %p0 : f32
      return %r : f32
    }""")
    PassManager.parse("canonicalize").run(m)
    assert not np.signbit(irkit.interpret(m, "f", np.float32(-0.0)))   # -0 + -0 + 0 = +0


def test_f32_elementary_functions_fold_correctly_rounded():
    """f32 kernels compute in f64 and round once (numpy's float32 routines are ulps off)."""
    from irkit.dialects.math import CbrtOp, Log10Op
    from irkit.types import F32
    for cls, x, want in ((Log10Op, 100.0, 2.0), (CbrtOp, 27.0, 3.0)):
        op = cls.build(_constant(np.float32(x), F32))
        assert af.attr_to_value(op.fold([af.value_to_attr(np.float32(x), F32)])[0]) == want
