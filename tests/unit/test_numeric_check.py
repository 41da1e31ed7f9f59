"""NumericChecker: record results, mutate the IR by hand as a wrong pass would, check."""

from __future__ import annotations

import numpy as np
import pytest

from irkit.attributes import FloatAttr, IntegerAttr
from irkit.ir import Operation
from irkit.numeric_check import (
    Mismatch, NumericCheckInstrumentation, NumericChecker, NumericMismatchError,
    anchored_pipeline, compare, make_inputs, write_reproducer,
)
from irkit.parser import parse_module
from irkit.pass_manager import Pass, PassManager
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from irkit.types import F32

SRC = """
func.func @f(%x: f32, %y: f32) -> f32 {
  %0 = arith.addf %x, %y : f32
  %1 = arith.mulf %0, %x : f32
  return %1 : f32
}
func.func @g(%a: i32, %b: i64) -> (i32, i64) {
  %c = arith.constant 1000003 : i64
  %0 = arith.muli %b, %c : i64
  %1 = arith.xori %a, %a : i32
  return %1, %0 : i32, i64
}
"""


def ops_named(module, name):
    return [op for op in module.walk() if op.name == name]


def replace_op(op, name, operands=None):
    """Replace `op` by a new op `name` on the same (or given) operands, as a pass would."""
    new = Operation.create(name, op.operands if operands is None else operands,
                           op.result_types, properties=op.properties)
    op.parent.insert_before(op, new)
    op.replace_all_uses_with(new.results)
    op.erase()
    return new


def test_identical_module_gives_none():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    assert sorted(c.checked) == ["f", "g"]
    assert c.skipped == {}
    assert c.check(m) is None
    assert c.check(m) is None


def test_addf_to_subf_is_caught_and_named():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    replace_op(ops_named(m, "arith.addf")[0], "arith.subf")
    m.verify()
    mm = c.check(m)
    assert isinstance(mm, Mismatch)
    assert mm.function == "f" and mm.result_index == 0
    assert len(mm.inputs) == 2
    text = mm.format()
    assert "@f" in text and "result #0" in text
    assert "input #1" in text and ": f32" in text
    assert len(text.splitlines()) >= 4


def test_integers_compare_exactly():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    # 1000003 -> 1000004 changes the product by |b|, a relative error of 1e-6: a float
    # tolerance would accept it; integers must not.
    (const,) = ops_named(m, "arith.constant")
    const.properties["value"] = IntegerAttr(1000004, const.result.type)
    mm = c.check(m)
    assert mm is not None and mm.function == "g" and mm.result_index == 1
    assert "integer" in mm.reason
    assert compare(np.int64(10**9), np.int64(10**9 + 1), 1e-5, 1e-6) is not None
    assert compare(np.int32(7), np.int32(7), 1e-5, 1e-6) is None
    assert compare(3, 3, 1e-5, 1e-6) is None
    assert compare(np.bool_(True), np.bool_(False), 1e-5, 1e-6) is not None


def test_floats_within_tolerance_dtype_and_shape_exact():
    one = np.float32(1.0)
    assert compare(one, np.float32(1.0 + 2e-7), 1e-5, 1e-6) is None
    assert compare(one, np.float32(1.001), 1e-5, 1e-6) is not None
    assert compare(np.float32(-0.0), np.float32(0.0), 1e-5, 1e-6) is None
    assert compare(np.float32(np.inf), np.float32(-np.inf), 1e-5, 1e-6) is not None
    assert "dtype" in compare(one, np.float64(1.0), 1e-5, 1e-6)
    assert "shape" in compare(np.zeros(3, np.float32), np.zeros(4, np.float32), 1e-5, 1e-6)
    assert "kind" in compare(np.zeros(1, np.float32), np.float32(0), 1e-5, 1e-6)
    why = compare(np.arange(4, dtype=np.float32), np.array([0, 1, 5, 3], np.float32), 0, 0)
    assert "1 of 4 elements" in why and "[2]" in why


def test_nan_equals_nan():
    m = parse_module("""
    func.func @n(%x: f32) -> (f32, f32) {
      %z = arith.constant 0.0 : f32
      %0 = arith.divf %z, %z : f32
      %1 = arith.addf %x, %0 : f32
      return %0, %1 : f32, f32
    }""")
    c = NumericChecker()
    c.record(m)
    assert c.check(m) is None
    nan = np.float32(np.nan)
    assert compare(nan, nan, 1e-5, 1e-6) is None
    assert compare(nan, np.float32(1.0), 1e-5, 1e-6) is not None
    assert compare(np.array([1.0, np.nan]), np.array([1.0, np.nan]), 1e-5, 1e-6) is None
    # NaN -> a number is a change (a wrong `x + NaN -> x` fold, say).
    (add,) = ops_named(m, "arith.addf")
    add.result.replace_all_uses_with(add.operand(0))
    mm = c.check(m)
    assert mm is not None and mm.result_index == 1


def test_vanished_function_is_not_a_mismatch():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    lookup_symbol_in(m, "g").erase()
    m.verify()
    assert c.check(m) is None


def test_raising_after_the_pass_is_a_mismatch():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    replace_op(ops_named(m, "arith.mulf")[0], "test.opaque")
    mm = c.check(m)
    assert mm is not None and mm.function == "f" and mm.result_index is None
    assert "raised" in mm.reason and "test.opaque" in mm.reason
    assert "@f" in mm.format()


def test_reference_that_raised_is_skipped():
    m = parse_module("""
    func.func private @ext(f32) -> f32
    func.func @h(%x: f32) -> f32 {
      %0 = func.call @ext(%x) : (f32) -> f32
      return %0 : f32
    }""")
    c = NumericChecker()
    c.record(m)
    assert "h" in c.skipped and "raised" in c.skipped["h"]
    assert c.check(m) is None


def test_unsupported_argument_type_skips_the_function():
    m = parse_module("""
    func.func @u(%m: memref<4xf32, strided<[2]>>, %x: f32) -> f32 {
      return %x : f32
    }""")
    with pytest.raises(ValueError, match=r"argument #0 of @u.*strided memref"):
        make_inputs(lookup_symbol_in(m, "u"), np.random.default_rng(0))
    c = NumericChecker()
    c.record(m)
    assert c.skipped["u"].startswith("function skipped")
    assert c.check(m) is None


BUFFERS = """
func.func @scale(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c1 {
    %v = memory.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    memory.store %w, %out[%i] : memref<?xf32>
  }
  return
}
"""


def test_functions_over_memrefs_are_compared_on_what_they_store():
    """Destination-passing style: no results, the output is what the call leaves in %out."""
    m = parse_module(BUFFERS)
    c = NumericChecker()
    c.record(m)
    assert c.checked == ["scale"]
    x, out = c.inputs_of("scale")[0]
    assert x.shape == out.shape == (3,) and x.flags.writeable
    assert c.check(m) is None
    replace_op(ops_named(m, "arith.mulf")[0], "arith.addf")
    mm = c.check(m)
    assert isinstance(mm, Mismatch) and mm.result_index == 1
    assert "memref argument #1 after the call" in mm.format()
    np.testing.assert_allclose(mm.expected, 2 * x, rtol=1e-6)
    np.testing.assert_allclose(mm.actual, x + 2, rtol=1e-6)


def test_inputs_are_deterministic_and_per_function():
    m1 = parse_module(SRC)
    m2 = parse_module(SRC.split("func.func @g")[0])  # @f alone
    c1, c2 = NumericChecker(seed=3), NumericChecker(seed=3)
    c1.record(m1)
    c2.record(m2)
    a, b = c1.inputs_of("f"), c2.inputs_of("f")
    assert len(a) == 2
    assert all(np.array_equal(x, y) for ta, tb in zip(a, b) for x, y in zip(ta, tb))
    c3 = NumericChecker(seed=4)
    c3.record(m1)
    assert not all(x == y for x, y in zip(a[0], c3.inputs_of("f")[0]))


def test_input_kinds():
    m = parse_module("""
    func.func @k(%a: f32, %b: f64, %c: i1, %d: index, %e: i8, %t: tensor<?x2xf32>,
                 %v: vector<4xi32>, %s: tensor<i64>, %h: bf16) {
      return
    }""")
    rng = np.random.default_rng(0)
    vals = [make_inputs(lookup_symbol_in(m, "k"), rng) for _ in range(50)]
    for a, b, c, d, e, t, v, s, h in vals:
        assert type(a) is np.float32 and 0.25 <= abs(a) <= 2
        assert type(b) is np.float64 and 0.25 <= abs(b) <= 2
        assert type(c) is np.bool_
        assert type(d) is int and 0 <= d <= 8
        assert type(e) is np.int8
        assert t.shape == (3, 2) and t.dtype == np.float32
        assert v.shape == (4,) and v.dtype == np.int32
        assert s.shape == () and s.dtype == np.int64
        # bf16 values are held in float32 and must be exactly representable in bf16.
        assert type(h) is np.float32 and np.float32(h).view(np.uint32) & 0xFFFF == 0
    es = [int(x[4]) for x in vals]
    assert -128 in es or 127 in es  # edge values show up
    assert any(-8 <= x <= 8 for x in es)


def test_private_functions_only_on_request():
    m = parse_module("""
    func.func private @p(%x: f32) -> f32 {
      return %x : f32
    }""")
    c = NumericChecker()
    c.record(m)
    assert c.checked == []
    c = NumericChecker(include_private=True)
    c.record(m)
    assert c.checked == ["p"]


def test_changed_signature_is_recorded_afresh():
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    m2 = parse_module(SRC.replace("@f(%x: f32, %y: f32)", "@f(%x: f32, %y: f32, %z: f32)"))
    assert c.check(m2) is None
    assert len(c.inputs_of("f")[0]) == 3


def test_new_results_become_the_reference():
    m = parse_module("""
    func.func @s(%x: f32) -> f32 {
      %k = arith.constant 1.0 : f32
      %0 = arith.mulf %x, %k : f32
      return %0 : f32
    }""")
    c = NumericChecker(rtol=1e-3, atol=0)
    c.record(m)
    (k,) = ops_named(m, "arith.constant")
    # Each step drifts 0.06% from the previous one (within rtol), 0.12% in total (beyond):
    # the comparison is pass by pass, not against the original program.
    for scale in (1.0006, 1.0012):
        k.properties["value"] = FloatAttr(scale, F32)
        assert c.check(m) is None
    k.properties["value"] = FloatAttr(1.0, F32)
    assert c.check(m) is not None


def test_reproducer_file(tmp_path):
    m = parse_module(SRC)
    c = NumericChecker()
    c.record(m)
    text = print_op(m)
    replace_op(ops_named(m, "arith.addf")[0], "arith.subf")
    mm = c.check(m)
    pipeline = anchored_pipeline(["builtin.module", "func.func"], "canonicalize{max-iterations=3}")
    assert pipeline == "builtin.module(func.func(canonicalize{max-iterations=3}))"
    path = tmp_path / "repro.mlir"
    write_reproducer(str(path), text, pipeline, "canonicalize", mm)
    lines = path.read_text().splitlines()
    assert lines[0] == ("// RUN: irkit-opt %s --pass-pipeline="
                        "'builtin.module(func.func(canonicalize{max-iterations=3}))'")
    assert lines[1].startswith("//") and "'canonicalize'" in lines[1]
    body = path.read_text().split("\n\n", 1)[1]
    assert body == text + ("" if text.endswith("\n") else "\n")
    assert any("@f" in line for line in lines if line.startswith("//"))
    # The IR after the comments parses back to the module from before the pass.
    assert print_op(parse_module(path.read_text())) == text


class _BreakAdd(Pass):
    """A wrong pass for the tests: `addf` becomes `subf`."""

    name = "test-break-add"
    anchor = "func.func"

    def run(self, op):
        for add in ops_named(op, "arith.addf"):
            replace_op(add, "arith.subf")


class _Nothing(Pass):
    name = "test-nothing"

    def run(self, op):
        pass


def test_instrumentation_names_the_pass_and_writes_a_reproducer(tmp_path):
    m = parse_module(SRC)
    before = print_op(m)
    pm = PassManager()
    pm.add(_Nothing())
    pm.nest("func.func").add(_BreakAdd())
    path = tmp_path / "repro.mlir"
    pm.add_instrumentation(NumericCheckInstrumentation(reproducer=str(path)))
    with pytest.raises(NumericMismatchError) as info:
        pm.run(m)
    assert "'test-break-add'" in str(info.value) and "@f" in str(info.value)
    assert info.value.mismatch.function == "f"
    text = path.read_text()
    assert text.splitlines()[0] == (
        "// RUN: irkit-opt %s --pass-pipeline='builtin.module(func.func(test-break-add))'")
    assert text.endswith(before if before.endswith("\n") else before + "\n")


def test_instrumentation_is_quiet_for_sound_passes():
    m = parse_module(SRC)
    pm = PassManager()
    pm.add(_Nothing())
    pm.add_instrumentation(NumericCheckInstrumentation())
    pm.run(m)
