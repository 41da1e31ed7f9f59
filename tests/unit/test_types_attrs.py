"""Types and attributes are spelled exactly as MLIR spells them, interned, and hash by value.

Every expected string below was written by hand from MLIR's documented syntax (LangRef,
Builtin dialect docs) and checked against `mlir-opt` output; none is computed by irkit.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import tempfile

import numpy as np
import pytest

from irkit import affine as aff
from irkit.attributes import (
    UNIT, UNKNOWN_LOC, AffineMapAttr, ArrayAttr, BoolAttr, CallSiteLoc, DenseArrayAttr,
    DenseElementsAttr, DictionaryAttr, FileLineColLoc, FloatAttr, FusedLoc, IntegerAttr,
    IntegerSetAttr, NameLoc, OpaqueAttr, SparseElementsAttr, StridedLayoutAttr, StringAttr,
    SymbolRefAttr, TypeAttr,
)
from irkit.parser import parse_attribute, parse_type
from irkit.types import (
    BF16, F16, F32, F64, I1, I8, I32, I64, INDEX, NONE, ComplexType, FloatType, FunctionType,
    IntegerType, MemRefType, OpaqueType, RankedTensorType, TupleType, UnrankedMemRefType,
    UnrankedTensorType, VectorType,
)

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"

TYPES = [
    (IntegerType(1), "i1"),
    (IntegerType(32), "i32"),
    (IntegerType(8, "signed"), "si8"),
    (IntegerType(64, "unsigned"), "ui64"),
    (INDEX, "index"),
    (F16, "f16"), (BF16, "bf16"), (F32, "f32"), (F64, "f64"),
    (FloatType("f8E4M3FN"), "f8E4M3FN"),
    (ComplexType(F32), "complex<f32>"),
    (TupleType([I32, F32]), "tuple<i32, f32>"),
    (TupleType([]), "tuple<>"),
    (NONE, "none"),
    (FunctionType([I32], [F32]), "(i32) -> f32"),
    (FunctionType([], []), "() -> ()"),
    (FunctionType([I32, F32], [F32, I1]), "(i32, f32) -> (f32, i1)"),
    (FunctionType([I32], [FunctionType([F32], [F32])]), "(i32) -> ((f32) -> f32)"),
    (RankedTensorType([4, None], F32), "tensor<4x?xf32>"),
    (RankedTensorType([], F32), "tensor<f32>"),
    (RankedTensorType([0], F32), "tensor<0xf32>"),
    (RankedTensorType([0, None], INDEX), "tensor<0x?xindex>"),
    (RankedTensorType([0], BF16), "tensor<0xbf16>"),
    (RankedTensorType([0], ComplexType(F32)), "tensor<0xcomplex<f32>>"),
    (RankedTensorType([2], F32, OpaqueAttr("enc.x")), "tensor<2xf32, #enc.x>"),
    (UnrankedTensorType(F32), "tensor<*xf32>"),
    (MemRefType([4, 8], F32, StridedLayoutAttr([8, 1])), "memref<4x8xf32, strided<[8, 1]>>"),
    (MemRefType([4, None], F32, StridedLayoutAttr([None, 1], None), IntegerAttr(3)),
     "memref<4x?xf32, strided<[?, 1], offset: ?>, 3>"),
    (MemRefType([4], F32, None, IntegerAttr(1, I32)), "memref<4xf32, 1 : i32>"),
    (MemRefType([4], F32, AffineMapAttr(aff.AffineMap(1, 0, (aff.add(aff.AffineDim(0),
                                                                      aff.AffineConst(1)),)))),
     "memref<4xf32, affine_map<(d0) -> (d0 + 1)>>"),
    (UnrankedMemRefType(F32, IntegerAttr(2)), "memref<*xf32, 2>"),
    (VectorType([4, 8], F32, [False, True]), "vector<4x[8]xf32>"),
    (VectorType([4], I1, [True]), "vector<[4]xi1>"),
    (OpaqueType('foo.bar<"x", 1>'), '!foo.bar<"x", 1>'),
    (OpaqueType("llvm.ptr"), "!llvm.ptr"),
]


@pytest.mark.parametrize("t, text", TYPES, ids=[t for _, t in TYPES])
def test_type_spelling(t, text):
    assert str(t) == text
    assert parse_type(text) is t


ATTRS = [
    (IntegerAttr(1, I32), "1 : i32"),
    (IntegerAttr(-1, I8), "-1 : i8"),
    (IntegerAttr(255, IntegerType(8, "unsigned")), "255 : ui8"),
    (IntegerAttr(7, INDEX), "7 : index"),
    (IntegerAttr(42), "42 : i64"),
    (BoolAttr(True), "true"),
    (BoolAttr(False), "false"),
    (FloatAttr(1.5, F32), "1.500000e+00 : f32"),
    (FloatAttr(0.1, F32), "1.000000e-01 : f32"),
    (FloatAttr(float("nan"), F32), "0x7FC00000 : f32"),
    (FloatAttr(float("inf"), F32), "0x7F800000 : f32"),
    (FloatAttr(float("-inf"), F32), "0xFF800000 : f32"),
    (FloatAttr(float("nan"), F64), "0x7FF8000000000000 : f64"),
    (FloatAttr(float("nan"), F16), "0x7E00 : f16"),
    (FloatAttr(-0.0, F32), "-0.000000e+00 : f32"),
    (FloatAttr(1e20, F32), "1.000000e+20 : f32"),
    (FloatAttr(65504.0, F16), "6.550400e+04 : f16"),
    (FloatAttr(1.1, BF16), "1.101560e+00 : bf16"),
    (FloatAttr(0.1, F16), "9.997550e-02 : f16"),
    # Not exact in six digits: MLIR falls back to APFloat's natural precision ...
    (FloatAttr(3.14159274, F32), "3.14159274 : f32"),
    (FloatAttr(1.2345678, F32), "1.23456776 : f32"),
    (FloatAttr(1e-5, F32), "9.99999974E-6 : f32"),
    (FloatAttr(1.234567, F64), "1.234567 : f64"),
    (FloatAttr(0.1 + 0.2, F64), "0.30000000000000004 : f64"),
    (FloatAttr(0.7999999999999999, F64), "0.79999999999999993 : f64"),
    # ... and to hex bits when that form has no '.'.
    (FloatAttr(123456789.0, F32), "0x4CEB79A3 : f32"),
    (FloatAttr(1234567.0, F64), "0x4132D68700000000 : f64"),
    (FloatAttr(5e-324, F64), "4.940660e-324 : f64"),
    (StringAttr('a"b\\c\n'), '"a\\"b\\\\c\\0A"'),
    (StringAttr("héllo"), '"h\\C3\\A9llo"'),
    (StringAttr("tab\t"), '"tab\\09"'),
    (StringAttr("x", I32), '"x" : i32'),
    (UNIT, "unit"),
    (ArrayAttr([IntegerAttr(1), IntegerAttr(2, I32), FloatAttr(2.0)]),
     "[1, 2 : i32, 2.000000e+00]"),
    (ArrayAttr([FloatAttr(float("inf"))]), "[0x7FF0000000000000 : f64]"),
    (ArrayAttr([]), "[]"),
    (DenseArrayAttr(I64, [1, 2, 3]), "array<i64: 1, 2, 3>"),
    (DenseArrayAttr(I32, []), "array<i32>"),
    (DenseArrayAttr(F32, [0.1, 2.5]), "array<f32: 1.000000e-01, 2.500000e+00>"),
    (DenseArrayAttr(I1, [True, False]), "array<i1: true, false>"),
    (DictionaryAttr({"b": UNIT, "a": IntegerAttr(1, I32)}), "{a = 1 : i32, b}"),
    (DictionaryAttr({"a b": IntegerAttr(1, I32)}), '{"a b" = 1 : i32}'),
    (DictionaryAttr({}), "{}"),
    (DenseElementsAttr(RankedTensorType([2, 2], F32), np.ones((2, 2))),
     "dense<1.000000e+00> : tensor<2x2xf32>"),
    (DenseElementsAttr(RankedTensorType([2, 2], I32), [[1, 2], [3, 4]]),
     "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"),
    (DenseElementsAttr(RankedTensorType([1, 2], I1), [[True, False]]),
     "dense<[[true, false]]> : tensor<1x2xi1>"),
    (DenseElementsAttr(RankedTensorType([4], I1), [True] * 4), "dense<true> : tensor<4xi1>"),
    (DenseElementsAttr(RankedTensorType([2], F32), [float("nan")] * 2),
     "dense<0x7FC00000> : tensor<2xf32>"),
    (DenseElementsAttr(RankedTensorType([2], F32), [0.0, -0.0]),
     "dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>"),
    (DenseElementsAttr(RankedTensorType([2], ComplexType(F32)), [1 + 2j, 1 + 2j]),
     "dense<(1.000000e+00,2.000000e+00)> : tensor<2xcomplex<f32>>"),
    (DenseElementsAttr(VectorType([2], I8), [1, -1]), "dense<[1, -1]> : vector<2xi8>"),
    (SparseElementsAttr(RankedTensorType([3, 4], F32), [[0, 0], [1, 2]], [1.0, 2.0]),
     "sparse<[[0, 0], [1, 2]], [1.000000e+00, 2.000000e+00]> : tensor<3x4xf32>"),
    (AffineMapAttr(aff.AffineMap(2, 1, (
        aff.add(aff.AffineDim(0), aff.AffineSymbol(0)),
        aff.add(aff.AffineBinary("mul", aff.AffineDim(1), aff.AffineConst(2)),
                aff.AffineConst(-1)),
        aff.AffineBinary("floordiv", aff.AffineDim(0), aff.AffineConst(2)),
        aff.AffineBinary("mod", aff.AffineDim(1), aff.AffineConst(3)),
        aff.AffineBinary("ceildiv", aff.AffineDim(0), aff.AffineConst(4)),
        aff.add(aff.AffineDim(0), aff.neg(aff.AffineBinary("mul", aff.AffineDim(1),
                                                            aff.AffineConst(2))))))),
     "affine_map<(d0, d1)[s0] -> (d0 + s0, d1 * 2 - 1, d0 floordiv 2, d1 mod 3, "
     "d0 ceildiv 4, d0 - d1 * 2)>"),
    (AffineMapAttr(aff.AffineMap(0, 0, (aff.AffineConst(0),))), "affine_map<() -> (0)>"),
    (IntegerSetAttr(aff.IntegerSet(1, 1, (aff.add(aff.AffineDim(0),
                                                  aff.neg(aff.AffineSymbol(0))),
                                          aff.AffineDim(0)), (False, True))),
     "affine_set<(d0)[s0] : (d0 - s0 >= 0, d0 == 0)>"),
    (SymbolRefAttr("a"), "@a"),
    (SymbolRefAttr("a", ["b", "c"]), "@a::@b::@c"),
    (SymbolRefAttr("weird name"), '@"weird name"'),
    (TypeAttr(I32), "i32"),
    (TypeAttr(RankedTensorType([2], F32)), "tensor<2xf32>"),
    (OpaqueAttr('foo.bar<1, "x">'), '#foo.bar<1, "x">'),
    (StridedLayoutAttr([1]), "strided<[1]>"),
    (FileLineColLoc("f.mlir", 3, 7), 'loc("f.mlir":3:7)'),
    (UNKNOWN_LOC, "loc(unknown)"),
    (NameLoc("name", FileLineColLoc("f", 1, 2)), 'loc("name"("f":1:2))'),
    (CallSiteLoc(NameLoc("a"), FileLineColLoc("b", 1, 2)), 'loc(callsite("a" at "b":1:2))'),
    (FusedLoc([NameLoc("a"), FileLineColLoc("b", 1, 2)]), 'loc(fused["a", "b":1:2])'),
    (FusedLoc([NameLoc("a")], StringAttr("x")), 'loc(fused<"x">["a"])'),
]


@pytest.mark.parametrize("a, text", ATTRS, ids=[t for _, t in ATTRS])
def test_attribute_spelling(a, text):
    assert str(a) == text
    back = parse_attribute(text)
    assert str(back) == text


@pytest.mark.parametrize("text, expected", [
    ("0.1 : f32", "1.000000e-01 : f32"),
    ("1.0e+20", "1.000000e+20 : f64"),
    ("42", "42 : i64"),
    ("0x7E00 : f16", "0x7E00 : f16"),
    ("-1 : i64", "-1 : i64"),
    ("255 : i8", "-1 : i8"),
    ("dense<(1.0,2.0)> : tensor<1xcomplex<f32>>",
     "dense<(1.000000e+00,2.000000e+00)> : tensor<1xcomplex<f32>>"),
    ("affine_map<(i, j) -> (j, i)>", "affine_map<(d0, d1) -> (d1, d0)>"),
])
def test_parse_then_print_canonical(text, expected):
    assert str(parse_attribute(text)) == expected


def test_types_are_interned():
    assert IntegerType(32) is I32
    assert RankedTensorType([4, None], F32) is RankedTensorType((4, None), F32)
    assert FunctionType([I32], [F32]) is parse_type("(i32) -> f32")
    assert VectorType([4], F32) is VectorType([4], F32, [False])
    assert VectorType([4], F32) is not VectorType([4], F32, [True])
    assert IntegerType(8, "signed") is not IntegerType(8)
    assert parse_type("tensor<*xcomplex<f64>>") is UnrankedTensorType(ComplexType(F64))
    assert {I32: 1}[parse_type("i32")] == 1


def test_attribute_equality_and_hash():
    pairs = [
        (IntegerAttr(3, I32), parse_attribute("3 : i32")),
        (FloatAttr(0.1, F32), parse_attribute("1.000000e-01 : f32")),
        (FloatAttr(float("nan"), F32), parse_attribute("0x7FC00000 : f32")),
        (StringAttr("x"), parse_attribute('"x"')),
        (ArrayAttr([IntegerAttr(1), UNIT]), parse_attribute("[1, unit]")),
        (DictionaryAttr({"b": UNIT, "a": IntegerAttr(1)}), parse_attribute("{a = 1, b}")),
        (SymbolRefAttr("a", ["b"]), parse_attribute("@a::@b")),
        (DenseElementsAttr(RankedTensorType([2], I32), [5, 5]),
         parse_attribute("dense<5> : tensor<2xi32>")),
        (DenseArrayAttr(I64, [1, 2]), parse_attribute("array<i64: 1, 2>")),
    ]
    for a, b in pairs:
        assert a == b and hash(a) == hash(b), (a, b)
    assert IntegerAttr(3, I32) != IntegerAttr(3, I64)
    assert IntegerAttr(1, I1) != IntegerAttr(1, I8)
    assert FloatAttr(0.0, F32) != FloatAttr(1.0, F32)
    assert StringAttr("x") != StringAttr("x", I32)
    assert SymbolRefAttr("a", ["b"]) != SymbolRefAttr("a")
    assert DenseElementsAttr(RankedTensorType([2], I32), [1, 2]) != \
        DenseElementsAttr(RankedTensorType([2], I32), [2, 1])
    assert len({IntegerAttr(1), IntegerAttr(1), BoolAttr(True), UNIT}) == 3


@pytest.mark.skipif(not os.path.exists(MLIR_OPT), reason="mlir-opt not installed")
def test_float_spelling_matches_mlir_opt():
    """A few hundred random floats: irkit's spelling is byte-for-byte mlir-opt's."""
    rng = random.Random(1234)
    cases = []
    for _ in range(300):
        t = rng.choice([F16, BF16, F32, F64])
        kind = rng.random()
        if kind < 0.4:
            v = rng.uniform(-10, 10) * 10.0 ** rng.randint(-12, 12)
        elif kind < 0.7:
            v = round(rng.uniform(-1000, 1000), rng.randint(0, 4))
        else:
            v = float(rng.randint(-10 ** 9, 10 ** 9))
        a = FloatAttr(v, t)
        if math.isfinite(a.value):
            cases.append(a)
    body = ", ".join(f"a{i} = {a}" for i, a in enumerate(cases))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(f'"x.op"() {{{body}}} : () -> ()\n')
    try:
        r = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                            f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if '"x.op"' in ln)
    attrs = line.split("{", 1)[1].rsplit("} : () -> ()", 1)[0]
    got = dict(item.split(" = ", 1) for item in attrs.split(", a"))
    got = {k if k.startswith("a") else "a" + k: v for k, v in got.items()}
    for i, a in enumerate(cases):
        assert got[f"a{i}"] == str(a), (a.value, a.type)
