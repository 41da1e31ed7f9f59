"""Soundness of the arith/math canonicalization patterns and identity folds: canonicalize must
not change what a function computes.

Each case is a small function written to trigger a group of patterns (the ops in `gone` must
have disappeared, so a pattern that stops firing is noticed too). Hypothesis draws argument
values, NaN, infinities, signed zeros and the integer extremes included, and the interpreter
runs the function before and after `canonicalize`; the results must be identical (floats bit
for bit, any NaN equal to any NaN). Inputs for which the original computes poison (a product
with `nsw` that overflows) are skipped with `valid`: there the rewrite may pick any value.

`test_cmpf_of_int_to_fp_is_exact` checks the longest pattern, cmpf(itofp(x), c) -> cmpi,
exhaustively over every i8/i16 value for random constants, predicates and float types.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import irkit
from irkit.attributes import format_float
from irkit.parser import parse_module, parse_type
from irkit.pass_manager import PassManager
from irkit.printer import print_op

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def same(a, b) -> bool:
    """Exact equality; floats bitwise, except that NaN equals NaN (payloads may differ)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or (a.dtype.kind == "f") != (b.dtype.kind == "f"):
        return False
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            a, b = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan]) and
                    np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))
    return bool(np.array_equal(a.astype(np.int64), b.astype(np.int64)))


def _ints(width: int):
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return st.one_of(st.sampled_from([0, 1, -1, 2, lo, hi, lo + 1, hi - 1]),
                     st.integers(lo, hi))


_FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-45, 3.4e38]


def _floats():
    return st.one_of(st.sampled_from(_FLOAT_SPECIALS),
                     st.floats(width=32, allow_nan=True, allow_infinity=True))


def strategy(t: str):
    """Argument values of IR type `t` (scalars and small vectors)."""
    if t.startswith("vector<"):
        n, et = t[7:-1].split("x")
        return st.lists(strategy(et), min_size=int(n), max_size=int(n)).map(np.array)
    if t == "i1":
        return st.booleans()
    if t == "index":
        return _ints(64)
    if t.startswith("i"):
        return _ints(int(t[1:]))
    return _floats()


class Case:
    def __init__(self, name: str, args: list[str], body: str, results: list[str],
                 gone: tuple = (), valid=None, counts: dict | None = None) -> None:
        self.name = name
        self.args = args
        self.text = (f"func.func @f({', '.join(f'%a{i}: {t}' for i, t in enumerate(args))})"
                     f" -> ({', '.join(results)}) {{\n{body}\n}}")
        self.gone = gone
        self.counts = counts or {}
        self.valid = valid


def _ret(values: str, types: str) -> str:
    return f"  return {values} : {types}"


CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
        "ule", "une", "uno", "true")


CASES = [
    Case("add_sub_constant_chains", ["i8"], """
  %c100 = arith.constant 100 : i8
  %cm100 = arith.constant -100 : i8
  %c50 = arith.constant 50 : i8
  %p = arith.addi %a0, %c100 : i8
  %m = arith.subi %a0, %c100 : i8
  %n = arith.subi %c100, %a0 : i8
  %r0 = arith.addi %p, %c100 : i8
  %r1 = arith.addi %m, %c50 : i8
  %r2 = arith.addi %n, %c100 : i8
  %r3 = arith.subi %p, %cm100 : i8
  %r4 = arith.subi %c100, %p : i8
  %r5 = arith.subi %m, %c100 : i8
  %r6 = arith.subi %n, %cm100 : i8
  %r7 = arith.subi %c50, %m : i8
  %r8 = arith.subi %cm100, %n : i8
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8", ", ".join(["i8"] * 9)),
         ["i8"] * 9),
    Case("add_of_negation_and_sub_sub", ["i8", "i8"], """
  %m1 = arith.constant -1 : i8
  %ny = arith.muli %a1, %m1 : i8
  %nx = arith.muli %m1, %a0 : i8
  %r0 = arith.addi %a0, %ny : i8
  %r1 = arith.addi %nx, %a1 : i8
  %s = arith.subi %a0, %a1 : i8
  %r2 = arith.subi %s, %a0 : i8
  %c3 = arith.constant 3 : i8
  %c7 = arith.constant 7 : i8
  %t = arith.muli %a0, %c3 : i8
  %r3 = arith.muli %t, %c7 : i8
""" + _ret("%r0, %r1, %r2, %r3", "i8, i8, i8, i8"), ["i8"] * 4,
         gone=("arith.addi",), counts={"arith.muli": 1, "arith.subi": 3}),
    Case("index_chains", ["index", "index"], """
  %c5 = arith.constant 5 : index
  %m1 = arith.constant -1 : index
  %p = arith.addi %a0, %c5 : index
  %r0 = arith.subi %p, %c5 : index
  %ny = arith.muli %a1, %m1 : index
  %r1 = arith.addi %a0, %ny : index
""" + _ret("%r0, %r1", "index, index"), ["index", "index"], gone=("arith.muli",)),
    Case("division_of_products", ["i8", "i8"], """
  %s = arith.muli %a0, %a1 overflow<nsw> : i8
  %u = arith.muli %a0, %a1 overflow<nuw> : i8
  %r0 = arith.divsi %s, %a1 : i8
  %r1 = arith.ceildivsi %s, %a0 : i8
  %r2 = arith.floordivsi %s, %a1 : i8
  %r3 = arith.remsi %s, %a1 : i8
  %r4 = arith.divui %u, %a1 : i8
  %r5 = arith.ceildivui %u, %a0 : i8
  %r6 = arith.remui %u, %a1 : i8
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6", ", ".join(["i8"] * 7)), ["i8"] * 7,
         gone=("div", "rem"),
         valid=lambda a, b: a != 0 and b != 0 and -128 <= a * b <= 127
         and 0 <= (a & 255) * (b & 255) <= 255),
    Case("bitwise_folds", ["i16", "i16"], """
  %m1 = arith.constant -1 : i16
  %n = arith.xori %a0, %m1 : i16
  %r0 = arith.andi %a0, %n : i16
  %r1 = arith.ori %n, %a0 : i16
  %ab = arith.andi %a0, %a1 : i16
  %r2 = arith.andi %ab, %a1 : i16
  %p = arith.xori %a1, %a0 : i16
  %r3 = arith.xori %a1, %p : i16
  %r4 = arith.xori %p, %a0 : i16
""" + _ret("%r0, %r1, %r2, %r3, %r4", ", ".join(["i16"] * 5)), ["i16"] * 5,
         gone=("arith.ori", "arith.xori")),
    Case("bitwise_of_extensions", ["i8", "i8"], """
  %xu = arith.extui %a0 : i8 to i32
  %yu = arith.extui %a1 : i8 to i32
  %xs = arith.extsi %a0 : i8 to i32
  %ys = arith.extsi %a1 : i8 to i32
  %r0 = arith.andi %xu, %yu : i32
  %r1 = arith.ori %xu, %yu : i32
  %r2 = arith.xori %xu, %yu : i32
  %r3 = arith.andi %xs, %ys : i32
  %r4 = arith.ori %xs, %ys : i32
  %r5 = arith.xori %xs, %ys : i32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5", ", ".join(["i32"] * 6)), ["i32"] * 6,
         gone=(": i32\n",)),
    Case("not_of_cmpi", ["i8", "i8"],
         "  %t = arith.constant true\n" + "".join(
             f"  %c{p} = arith.cmpi {p}, %a0, %a1 : i8\n  %r{p} = arith.xori %c{p}, %t : i1\n"
             for p in CMPI)
         + _ret(", ".join(f"%r{p}" for p in CMPI), ", ".join(["i1"] * 10)),
         ["i1"] * 10, gone=("arith.xori",)),
    Case("not_of_cmpf", ["f32", "f32"],
         "  %t = arith.constant true\n" + "".join(
             f"  %c{p} = arith.cmpf {p}, %a0, %a1 : f32\n  %r{p} = arith.xori %c{p}, %t : i1\n"
             for p in CMPF[1:-1])
         + _ret(", ".join(f"%r{p}" for p in CMPF[1:-1]), ", ".join(["i1"] * 14)),
         ["i1"] * 14, gone=("arith.xori",)),
    Case("cmpi_constant_left", ["i8"],
         "  %c = arith.constant -3 : i8\n" + "".join(
             f"  %r{p} = arith.cmpi {p}, %c, %a0 : i8\n"
             for p in CMPI)
         + _ret(", ".join(f"%r{p}" for p in CMPI), ", ".join(["i1"] * 10)),
         ["i1"] * 10, gone=("%0, %arg0",)),
    Case("cmpi_of_extensions", ["i8", "i8"], """
  %xs = arith.extsi %a0 : i8 to i16
  %ys = arith.extsi %a1 : i8 to i16
  %xu = arith.extui %a0 : i8 to i16
  %yu = arith.extui %a1 : i8 to i16
""" + "".join(f"  %s{p} = arith.cmpi {p}, %xs, %ys : i16\n"
              f"  %u{p} = arith.cmpi {p}, %xu, %yu : i16\n" for p in CMPI)
         + _ret(", ".join(f"%s{p}, %u{p}" for p in CMPI), ", ".join(["i1"] * 20)),
         ["i1"] * 20, gone=("arith.ext",)),
    Case("cmpi_of_i1", ["i1"], """
  %c0 = arith.constant 0 : i32
  %t = arith.constant true
  %f = arith.constant false
  %u = arith.extui %a0 : i1 to i32
  %s = arith.extsi %a0 : i1 to i32
  %r0 = arith.cmpi ne, %u, %c0 : i32
  %r1 = arith.cmpi ne, %s, %c0 : i32
  %r2 = arith.cmpi eq, %a0, %t : i1
  %r3 = arith.cmpi ne, %f, %a0 : i1
""" + _ret("%r0, %r1, %r2, %r3", "i1, i1, i1, i1"), ["i1"] * 4, gone=("arith.cmpi",)),
    Case("select_patterns", ["i1", "i32", "i32", "i32"], """
  %t = arith.constant true
  %f = arith.constant false
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = arith.xori %a0, %t : i1
  %r0 = arith.select %n, %a1, %a2 : i32
  %s = arith.select %a0, %a1, %a2 : i32
  %r1 = arith.select %a0, %s, %a3 : i32
  %r2 = arith.select %a0, %a3, %s : i32
  %r3 = arith.select %a0, %c1, %c0 : i32
  %r4 = arith.select %a0, %c0, %c1 : i32
  %r5 = arith.select %a0, %f, %t : i1
  %eq = arith.cmpi eq, %a1, %a2 : i32
  %ne = arith.cmpi ne, %a1, %a2 : i32
  %r6 = arith.select %eq, %a1, %a2 : i32
  %r7 = arith.select %ne, %a2, %a1 : i32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7",
           "i32, i32, i32, i32, i32, i1, i32, i32"),
         ["i32", "i32", "i32", "i32", "i32", "i1", "i32", "i32"], gone=("arith.cmpi",)),
    Case("select_vectors", ["vector<4xi1>", "vector<4xi8>", "vector<4xi8>"], """
  %t = arith.constant dense<true> : vector<4xi1>
  %c0 = arith.constant dense<0> : vector<4xi8>
  %c1 = arith.constant dense<1> : vector<4xi8>
  %n = arith.xori %a0, %t : vector<4xi1>
  %r0 = arith.select %n, %a1, %a2 : vector<4xi1>, vector<4xi8>
  %r1 = arith.select %a0, %c0, %c1 : vector<4xi1>, vector<4xi8>
""" + _ret("%r0, %r1", "vector<4xi8>, vector<4xi8>"), ["vector<4xi8>", "vector<4xi8>"]),
    Case("integer_casts", ["i8", "i32", "i64", "index"], """
  %c24 = arith.constant 24 : i32
  %a = arith.extui %a0 : i8 to i16
  %r0 = arith.extui %a : i16 to i64
  %r1 = arith.extsi %a : i16 to i64
  %b = arith.extsi %a0 : i8 to i16
  %r2 = arith.extsi %b : i16 to i64
  %c = arith.extsi %a1 : i32 to i64
  %r3 = arith.trunci %c : i64 to i8
  %d = arith.extui %a0 : i8 to i64
  %r4 = arith.trunci %d : i64 to i16
  %e = arith.trunci %a2 : i64 to i32
  %r5 = arith.trunci %e : i32 to i8
  %f = arith.shrsi %a1, %c24 : i32
  %r6 = arith.trunci %f : i32 to i8
  %g = arith.index_cast %a1 : i32 to index
  %r7 = arith.index_cast %g : index to i32
  %h = arith.index_cast %a3 : index to i64
  %r8 = arith.index_cast %h : i64 to index
  %i = arith.extsi %a0 : i8 to i32
  %r9 = arith.index_cast %i : i32 to index
  %j = arith.extui %a0 : i8 to i32
  %r10 = arith.index_castui %j : i32 to index
  %k = arith.index_castui %a1 : i32 to index
  %r11 = arith.index_castui %k : index to i32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11",
           "i64, i64, i64, i8, i16, i8, i8, i32, index, index, index, i32"),
         ["i64", "i64", "i64", "i8", "i16", "i8", "i8", "i32", "index", "index", "index", "i32"],
         gone=("arith.shrsi", ": i16 to", "i64 to i32")),
    Case("int_float_casts", ["i8", "i16", "f32"], """
  %a = arith.extsi %a0 : i8 to i32
  %r0 = arith.sitofp %a : i32 to f32
  %b = arith.extui %a0 : i8 to i32
  %r1 = arith.uitofp %b : i32 to f32
  %r2 = arith.sitofp %b : i32 to f32
  %c = arith.sitofp %a1 : i16 to f64
  %r3 = arith.truncf %c : f64 to f32
  %d = arith.uitofp %a1 : i16 to f64
  %r4 = arith.truncf %d : f64 to f32
  %e = arith.sitofp %a0 : i8 to f32
  %r5 = arith.truncf %e : f32 to f16
  %g = arith.extf %a2 : f32 to f64
  %r6 = arith.truncf %g : f64 to f32
  %r7 = arith.truncf %g : f64 to f16
  %h = arith.bitcast %a2 : f32 to i32
  %r8 = arith.bitcast %h : i32 to f32
  %r9 = arith.bitcast %h : i32 to i32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9",
           "f32, f32, f32, f32, f32, f16, f32, f16, f32, i32"),
         ["f32", "f32", "f32", "f32", "f32", "f16", "f32", "f16", "f32", "i32"],
         gone=("arith.ext", "f64")),
    Case("float_identities", ["f32", "f32"], """
  %m0 = arith.constant -0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %r0 = arith.addf %a0, %m0 : f32
  %r1 = arith.mulf %one, %a0 : f32
  %r2 = arith.divf %a0, %one : f32
  %n0 = arith.negf %a0 : f32
  %n1 = arith.negf %a1 : f32
  %r3 = arith.negf %n0 : f32
  %r4 = arith.mulf %n0, %n1 : f32
  %r5 = arith.divf %n0, %n1 : f32
  %r6 = arith.maximumf %a0, %ninf : f32
  %r7 = arith.minimumf %pinf, %a0 : f32
  %r8 = arith.maxnumf %a0, %nan : f32
  %r9 = arith.minnumf %nan, %a0 : f32
  %r10 = arith.maximumf %a0, %a0 : f32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10", ", ".join(["f32"] * 11)),
         ["f32"] * 11, gone=("arith.negf", "arith.max", "arith.min")),
    Case("float_subtract_zero", ["f32"], """
  %p0 = arith.constant 0.0 : f32
  %r0 = arith.subf %a0, %p0 : f32
""" + _ret("%r0", "f32"), ["f32"], gone=("arith.subf",)),
    Case("math_identities", ["f32", "f32", "i32"], """
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = math.absf %a0 : f32
  %r0 = math.absf %a : f32
  %n = arith.negf %a0 : f32
  %r1 = math.absf %n : f32
  %fl = math.floor %a0 : f32
  %r2 = math.ceil %fl : f32
  %tr = math.trunc %a0 : f32
  %r3 = math.round %tr : f32
  %re = math.roundeven %a0 : f32
  %r4 = math.roundeven %re : f32
  %r5 = math.powf %a0, %one : f32
  %r6 = math.powf %a0, %z : f32
  %r7 = math.fpowi %a0, %c1 : f32, i32
  %r8 = math.fpowi %a0, %c0 : f32, i32
  %r9 = math.ipowi %a2, %c1 : i32
  %r10 = math.ipowi %a2, %c0 : i32
  %r11 = math.copysign %a1, %a1 : f32
""" + _ret("%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11",
           ", ".join(["f32"] * 9 + ["i32", "i32", "f32"])),
         ["f32"] * 9 + ["i32", "i32", "f32"],
         gone=("arith.negf", "math.ceil", "math.round ", "math.pow", "math.fpowi",
               "math.ipowi", "math.copysign")),
]

_CANONICAL: dict[str, object] = {}


def _canonicalized(case: Case):
    m = _CANONICAL.get(case.name)
    if m is None:
        m = parse_module(case.text)
        PassManager.parse("canonicalize").run(m)
        m.verify()
        _CANONICAL[case.name] = m
    return m


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_patterns_fire(case):
    text = print_op(_canonicalized(case))
    for needle in case.gone:
        assert needle not in text, f"'{needle}' is still there:\n{text}"
    for needle, n in case.counts.items():
        assert text.count(needle) == n, f"expected {n} x '{needle}':\n{text}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@SETTINGS
@given(data=st.data())
def test_patterns_preserve_results(case, data):
    args = [data.draw(strategy(t), label=f"%a{i}") for i, t in enumerate(case.args)]
    if case.valid is not None and not case.valid(*[int(a) for a in args]):
        return
    original = parse_module(case.text)
    want = irkit.interpret(original, "f", *args)
    got = irkit.interpret(_canonicalized(case), "f", *args)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for i, (w, g) in enumerate(zip(want, got)):
        assert same(w, g), (f"result #{i} changed: {w!r} -> {g!r}\n"
                            f"{print_op(_canonicalized(case))}")


def test_mulf_by_zero_under_nnan_nsz():
    """x * 0 -> 0 holds up to the sign of zero, for finite x (what nnan and nsz promise)."""
    text = """func.func @f(%x: f32) -> f32 {
      %z = arith.constant 0.0 : f32
      %r = arith.mulf %x, %z fastmath<nnan,nsz> : f32
      return %r : f32
    }"""
    m = parse_module(text)
    PassManager.parse("canonicalize").run(m)
    assert "arith.mulf" not in print_op(m)
    for x in (0.0, -0.0, 1.5, -3.0e38, 1e-45):
        assert irkit.interpret(m, "f", x) == irkit.interpret(parse_module(text), "f", x)


# ----- cmpf(itofp(x), c) -> cmpi, exhaustively -------------------------------------------------

_CONVERSIONS = [("sitofp", "i8"), ("uitofp", "i8"), ("sitofp", "i16"), ("uitofp", "i16"),
                ("sitofp", "i1"), ("uitofp", "i1")]


def _constants():
    ints = st.integers(-70000, 70000).map(float)
    halves = st.integers(-600, 600).map(lambda k: k / 2)
    powers = st.integers(0, 17).flatmap(
        lambda e: st.sampled_from([2.0 ** e, 2.0 ** e - 1, 2.0 ** e + 1, -(2.0 ** e),
                                   -(2.0 ** e) - 1, 2.0 ** e + 0.5]))
    return st.one_of(ints, halves, powers, st.sampled_from([np.inf, -np.inf, 0.0, -0.0, 1e10]),
                     st.floats(width=32, allow_nan=False))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=st.sampled_from(_CONVERSIONS), ft=st.sampled_from(["f32", "f16", "bf16"]),
       c=_constants())
@example(conv=("sitofp", "i8"), ft="f32", c=-4.5)
@example(conv=("sitofp", "i8"), ft="f32", c=4.5)
@example(conv=("uitofp", "i8"), ft="f32", c=-0.5)
@example(conv=("sitofp", "i8"), ft="f16", c=-128.5)
@example(conv=("uitofp", "i16"), ft="f16", c=2049.0)
@example(conv=("sitofp", "i16"), ft="bf16", c=np.inf)
@example(conv=("sitofp", "i1"), ft="f32", c=-0.5)
def test_cmpf_of_int_to_fp_is_exact(conv, ft, c):
    """Every predicate at once: one function with sixteen comparisons of every x with c."""
    op, it = conv
    width = int(it[1:])
    n = 1 << width
    t = parse_type(ft)
    with np.errstate(all="ignore"):
        c = float(np.float16(c)) if ft == "f16" else float(np.float32(c))
    lit = format_float(c, t)
    vt, bt = f"vector<{n}x{ft}>", f"vector<{n}xi1>"
    cmps = "".join(f"      %r{p} = arith.cmpf {p}, %f, %c : {vt}\n" for p in CMPF)
    text = (f"func.func @f(%x: vector<{n}x{it}>) -> ({', '.join([bt] * 16)}) {{\n"
            f"      %c = arith.constant dense<{lit}> : {vt}\n"
            f"      %f = arith.{op} %x : vector<{n}x{it}> to {vt}\n{cmps}"
            f"      return {', '.join(f'%r{p}' for p in CMPF)} : {', '.join([bt] * 16)}\n}}")
    xs = np.arange(n).astype(np.uint16 if width == 16 else np.uint8)
    xs = xs.view(np.int16) if width == 16 else xs.view(np.int8) if width == 8 else xs == 1
    want = irkit.interpret(parse_module(text), "f", xs)
    m = parse_module(text)
    PassManager.parse("canonicalize").run(m)
    assert "arith.cmpf" not in print_op(m) or width == 16 and ft != "f32"
    got = irkit.interpret(m, "f", xs)
    for p, w, g in zip(CMPF, want, got):
        bad = np.nonzero(w != g)[0]
        assert bad.size == 0, (f"{p}, c = {c}: x = {xs[bad[:5]]}: {w[bad[:5]]} -> "
                               f"{g[bad[:5]]}\n{print_op(m)}")
