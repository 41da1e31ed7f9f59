"""`irkit-opt --describe OP`: the report names each hook's defining file and line.

Locations are checked against the source itself (the line must hold the `def`), so a report
that points at a decorator, a base class's stub, or the wrong file fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from irkit.tools.describe import HOOKS, describe, lookup, lowering_tables_of, where

ROOT = Path(__file__).resolve().parents[2]


def hook_rows(report: str) -> dict[str, str]:
    """`{hook: what the report says}` from the `hooks:` section."""
    section = report.split("\nhooks:\n", 1)[1].split("\nlowerings", 1)[0]
    rows = {}
    for line in section.split("\n"):
        m = re.match(r"  (\w+) +(.*)$", line)
        if m and m.group(1) in HOOKS:
            rows[m.group(1)] = m.group(2)
    return rows


def source_line(location: str) -> str:
    """The text at `path:line`, the path relative to the repository root."""
    path, line = location.rsplit(":", 1)
    assert not Path(path).is_absolute(), f"{location} should be relative to the repository"
    return (ROOT / path).read_text().split("\n")[int(line) - 1]


def section(report: str, title: str) -> list[str]:
    """The indented rows under `title:`."""
    lines = report.split("\n")
    start = lines.index(f"{title}:") + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        rows.append(line.strip())
    return rows


# ----- arith.addf ---------------------------------------------------------------------------


def test_addf_header_doc_and_example():
    report = describe("arith.addf")
    lines = report.split("\n")
    assert lines[0] == "arith.addf  (dialect arith)"
    assert re.fullmatch(r"class AddFOp  dialects/arith/floating\.py:\d+", lines[1])
    assert source_line(lines[1].split()[-1]).startswith("class AddFOp(")
    summary = "Floating-point addition (x + -0.0 folds to x; x + 0.0 does not, for x = -0.0)."
    assert f"  {summary}" in lines
    assert "    %r = arith.addf %a, %a fastmath<fast> : f32" in lines


def test_addf_traits_and_fields():
    report = describe("arith.addf")
    assert "traits: Pure, Commutative, SameOperandsAndResultType, Elementwise" in report
    assert section(report, "operands") == [
        "lhs: floating-point-like",
        "rhs: floating-point-like"]
    assert section(report, "results") == [
        "result: floating-point-like"]
    assert section(report, "properties") == [
        "fastmath: arith fastmath flags attribute [default: #arith.fastmath<none>]"]
    assert "regions: none" in report
    assert "successors: none" in report


def test_addf_fold_is_inherited_from_float_binary():
    rows = hook_rows(describe("arith.addf"))
    location, rest = rows["fold"].split("  ", 1)
    assert location.startswith("dialects/arith/floating.py:")
    assert "def fold(" in source_line(location)
    assert rest == "(inherited from _FloatBinary)"


def test_addf_hooks_point_at_their_def_lines():
    rows = hook_rows(describe("arith.addf"))
    assert set(rows) == set(HOOKS)
    # `parse` is a classmethod: the location is its `def`, not the decorator above it.
    for hook in ("infer_result_types", "evaluate", "parse", "print"):
        location = rows[hook].split()[0]
        assert f"def {hook}(" in source_line(location), (hook, location)
    assert rows["evaluate"].endswith("(inherited from _FloatBinary)")
    # `Op` supplies defaults for these; a default is not a definition.
    for hook in ("verify_", "canonicalization_patterns", "vjp", "jvp", "interpret"):
        assert rows[hook] == "not defined", hook


def test_no_lowerings():
    assert describe("arith.addf").endswith("\nlowerings: none registered")


# ----- func.func ----------------------------------------------------------------------------


def test_func_traits_props_and_region():
    report = describe("func.func")
    assert report.startswith("func.func  (dialect func)\n")
    assert "traits: IsolatedFromAbove, Symbol, CallableOp, AutomaticAllocationScope" in report
    assert "operands: none" in report and "results: none" in report
    props = section(report, "properties")
    assert "sym_name: string attribute" in props
    assert "sym_visibility: string attribute [optional]" in props
    assert section(report, "regions") == ["body"]
    assert "    func.func @add(%arg0: f32, %arg1: f32) -> f32 {" in report.split("\n")


def test_func_hooks_are_its_own():
    rows = hook_rows(describe("func.func"))
    for hook in ("verify_", "interpret", "parse", "print"):
        assert rows[hook].startswith("dialects/func.py:"), (hook, rows[hook])
        assert "inherited" not in rows[hook]
        assert f"def {hook}(" in source_line(rows[hook])
    assert rows["fold"] == "not defined"
    assert rows["infer_result_types"] == "not defined"


# ----- lowerings ----------------------------------------------------------------------------


def lower_addf(op, rewriter):
    return None


def lower_float_binary(op, rewriter):
    return None


def test_lowerings_by_name_by_class_and_by_base():
    addf = lookup("arith.addf")
    base = addf.__mro__[1]
    assert base.__name__ == "_FloatBinary"

    class ConvertArithToLLVM:
        name = "convert-arith-to-llvm"
        lowerings = {"arith.addf": lower_addf, base: lower_float_binary, "arith.subf": print}

    class ConvertMath:
        name = "convert-math-to-llvm"
        lowerings = {addf: lower_addf}

    tables = lowering_tables_of([ConvertArithToLLVM, ConvertMath, object])
    assert [name for name, _ in tables] == ["convert-arith-to-llvm", "convert-math-to-llvm"]
    rows = section(describe("arith.addf", tables), "lowerings")
    this_file = "tests/unit/test_describe.py"
    assert [r.split()[:2] for r in rows] == [
        ["convert-arith-to-llvm", "lower_addf"],
        ["convert-arith-to-llvm", "lower_float_binary"],
        ["convert-math-to-llvm", "lower_addf"]]
    for row in rows:
        location = row.split()[2]
        assert location.startswith(this_file + ":")
        assert f"def {row.split()[1]}(" in source_line(location)
    assert rows[1].endswith("(via _FloatBinary)")
    # arith.mulf shares the base-class entry only.
    rows = section(describe("arith.mulf", tables), "lowerings")
    assert [r.split()[1] for r in rows] == ["lower_float_binary"]


def test_where_without_source():
    assert where(print) == "(source not available)"
    assert where(lower_addf).startswith("tests/unit/test_describe.py:")


# ----- unknown ops --------------------------------------------------------------------------


def test_unknown_op_suggests_close_names():
    with pytest.raises(KeyError) as e:
        describe("arith.adf")
    message = e.value.args[0]
    assert message.startswith("unknown op 'arith.adf'; did you mean ")
    assert "arith.addf" in message and "arith.addi" in message


def test_unknown_op_without_close_names():
    with pytest.raises(KeyError) as e:
        describe("zzz.qqq")
    assert e.value.args[0] == "unknown op 'zzz.qqq'"
