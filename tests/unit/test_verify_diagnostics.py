"""`--verify-diagnostics`: `expected-*` annotations matched against what parsing and passes report.

Each test states the exact failures (first line of each rendering: `file:line:col: error: ...`)
so that a matcher that accepts too much, or reports the wrong place, fails here. The messages
are MLIR's own (checked against `mlir-opt --verify-diagnostics`).
"""

from __future__ import annotations

import pytest

from irkit.attributes import UNKNOWN_LOC, FileLineColLoc
from irkit.diagnostics import Diagnostic, IRError, emit, emit_remark, emit_warning
from irkit.parser import parse_module
from irkit.tools.verify_diagnostics import parse_expectations, verify_diagnostics

F = "t.mlir"

RETURN_MISMATCH = ("'func.return' op type of return operand 0 ('i32') doesn't match function "
                   "result type ('f32') in function @f")


def parse(chunk: str):
    """The process irkit-opt uses for a chunk without passes: parse and verify."""
    return lambda: parse_module(chunk, F)


def heads(failures: list[str]) -> list[str]:
    """The `file:line:col: error: ...` line of each failure."""
    return [f.split("\n")[0] for f in failures]


def bad_return(annotation: str, where: str = "before") -> str:
    """A function whose `return` (line 3, or 2 when the annotation follows) is ill-typed."""
    if where == "before":
        return f"func.func @f(%a: i32) -> f32 {{\n  {annotation}\n  return %a : i32\n}}\n"
    if where == "same":
        return f"func.func @f(%a: i32) -> f32 {{\n  return %a : i32 {annotation}\n}}\n"
    return f"func.func @f(%a: i32) -> f32 {{\n  return %a : i32\n  {annotation}\n}}\n"


# ----- each annotation form -------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    bad_return("// expected-error {{doesn't match function result type}}", "same"),
    bad_return("// expected-error @+1 {{doesn't match function result type}}"),
    bad_return("// expected-error@+1 {{doesn't match function result type}}"),
    bad_return("// expected-error @-1 {{doesn't match function result type}}", "after"),
    bad_return("// expected-error @above {{doesn't match function result type}}", "after"),
    bad_return("// expected-error @below {{doesn't match function result type}}"),
    bad_return("// expected-error {{" + RETURN_MISMATCH + "}}", "same"),
], ids=["same-line", "plus", "plus-no-space", "minus", "above", "below", "whole-message"])
def test_annotation_forms_match(text):
    assert verify_diagnostics(text, F, parse(text)) == []


def test_below_skips_annotation_lines():
    """`@below` (like `@above`) names the nearest line that is not itself an annotation."""
    text = bad_return("// expected-error @below {{doesn't match}}\n"
                      "  // expected-remark @unknown {{r}}")
    with_remark = parse_remark_then(text, "r", UNKNOWN_LOC)
    assert verify_diagnostics(text, F, with_remark) == []
    expectations, _ = parse_expectations(text, F)
    assert [(e.severity, e.line) for e in expectations] == [("error", 4), ("remark", None)]


def test_above_skips_annotation_lines():
    text = ("func.func @f(%a: i32) -> f32 {\n  return %a : i32\n"
            "  // expected-note @unknown {{n}}\n  // expected-error @above {{match}}\n}\n")
    expectations, _ = parse_expectations(text, F)
    assert [(e.severity, e.line) for e in expectations] == [("note", None), ("error", 2)]


def parse_remark_then(chunk: str, remark: str, loc):
    """A process that emits a remark, then parses (as a pass would after reporting)."""
    def process():
        emit_remark(remark, loc)
        parse_module(chunk, F)
    return process


def test_lines_are_those_of_the_whole_file():
    """A chunk of a split file is padded with newlines, so annotations keep file line numbers."""
    text = "\n" * 10 + bad_return("// expected-error @+1 {{doesn't match}}")
    assert verify_diagnostics(text, F, parse(text)) == []
    text = "\n" * 10 + bad_return("// expected-error @+1 {{nothing like it}}")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        f"t.mlir:13:3: error: unexpected error: {RETURN_MISMATCH}",
        't.mlir:12:6: error: expected error "nothing like it" was not produced',
    ]


# ----- failures -----------------------------------------------------------------------------


def test_unexpected_error_is_reported_at_the_diagnostic():
    text = bad_return("// a plain comment")
    failures = verify_diagnostics(text, F, parse(text))
    assert failures == [f"t.mlir:3:3: error: unexpected error: {RETURN_MISMATCH}\n"
                        "  return %a : i32\n"
                        "  ^"]


def test_missing_expectation_is_reported_at_the_annotation():
    text = "func.func @f() {\n  // expected-error @+1 {{never}}\n  return\n}\n"
    failures = verify_diagnostics(text, F, parse(text))
    assert failures == ['t.mlir:2:6: error: expected error "never" was not produced\n'
                        "  // expected-error @+1 {{never}}\n"
                        "     ^"]


def test_wrong_line_gives_both_failures():
    text = bad_return("// expected-error {{doesn't match}}")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        f"t.mlir:3:3: error: unexpected error: {RETURN_MISMATCH}",
        't.mlir:2:6: error: expected error "doesn\'t match" was not produced',
    ]


def test_wrong_severity_is_a_near_miss():
    text = bad_return("// expected-warning @+1 {{doesn't match}}")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        "t.mlir:2:6: error: 'error' diagnostic emitted when expecting a 'warning'",
        't.mlir:2:6: error: expected warning "doesn\'t match" was not produced',
    ]


def test_text_must_be_a_substring():
    text = bad_return("// expected-error @+1 {{doesn't  match}}")
    assert len(verify_diagnostics(text, F, parse(text))) == 2


def test_every_expectation_needs_its_own_diagnostic():
    """Two equal annotations need two diagnostics; one diagnostic may satisfy only one."""
    def warn(times: int):
        def process():
            for _ in range(times):
                emit_warning("w", FileLineColLoc(F, 3, 1))
        return process
    text = "// expected-warning @+2 {{w}}\n// expected-warning @+1 {{w}}\nx\n"
    assert verify_diagnostics(text, F, warn(2)) == []
    assert heads(verify_diagnostics(text, F, warn(1))) == [
        't.mlir:2:4: error: expected warning "w" was not produced']
    # As in MLIR, one annotation accepts any number of equal diagnostics.
    assert verify_diagnostics("\n// expected-warning @+1 {{w}}\nx\n", F, warn(3)) == []


def test_no_annotations_and_no_diagnostics_pass():
    text = "func.func @f() {\n  return\n}\n"
    assert verify_diagnostics(text, F, parse(text)) == []


def test_malformed_annotations_are_not_annotations():
    """As in MLIR, a line that does not match the syntax is an ordinary comment."""
    text = bad_return("// expected-eror @+1 {{doesn't match}}")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        f"t.mlir:3:3: error: unexpected error: {RETURN_MISMATCH}"]
    assert parse_expectations("// expected-error @bogus {{x}}\n", F) == ([], [])
    assert parse_expectations("// expected-error {{x}\n", F) == ([], [])


def test_other_exceptions_propagate():
    def crash():
        raise RuntimeError("pass crashed")
    with pytest.raises(RuntimeError, match="pass crashed"):
        verify_diagnostics("// expected-error {{x}}\n", F, crash)


# ----- notes --------------------------------------------------------------------------------

def test_notes_are_matched_at_their_own_location():
    text = ("// expected-note @below {{see existing symbol definition here}}\n"
            "func.func @f() {\n  return\n}\n"
            "// expected-error @below {{redefinition of symbol named 'f'}}\n"
            "func.func @f() {\n  return\n}\n")
    assert verify_diagnostics(text, F, parse(text)) == []


def test_unexpected_note():
    text = ("func.func @f() {\n  return\n}\n"
            "// expected-error @+1 {{redefinition of symbol named 'f'}}\n"
            "func.func @f() {\n  return\n}\n")
    assert verify_diagnostics(text, F, parse(text)) == [
        "t.mlir:1:1: error: unexpected note: see existing symbol definition here\n"
        "func.func @f() {\n"
        "^"]


def test_note_expected_as_error_is_a_near_miss():
    text = ("func.func @f() { // expected-error {{see existing}}\n  return\n}\n"
            "func.func @f() { // expected-error {{redefinition}}\n  return\n}\n")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        "t.mlir:1:21: error: 'note' diagnostic emitted when expecting a 'error'",
        't.mlir:1:21: error: expected error "see existing" was not produced',
    ]


def test_notes_of_captured_diagnostics_count():
    def process():
        d = Diagnostic("warning", "slow path", FileLineColLoc(F, 1, 1))
        d.attach_note("because of this", FileLineColLoc(F, 2, 1))
        emit(d)
    text = "// expected-warning {{slow path}}\n// expected-note {{because of this}}\n"
    assert verify_diagnostics(text, F, process) == []
    assert heads(verify_diagnostics(text.split("\n")[0], F, process)) == [
        "t.mlir:2:1: error: unexpected note: because of this"]


# ----- warnings, remarks, unknown locations, other files ----------------------------------------


def test_captured_warnings_and_remarks():
    def process():
        emit_warning("w1", FileLineColLoc(F, 2, 3))
        emit_remark("r1", FileLineColLoc(F, 3, 1))
    text = "\n  x // expected-warning {{w1}}\n// expected-remark @+0 {{r1}}\n"
    assert verify_diagnostics(text, F, process) == []
    text = "\n  x // expected-remark {{w1}}\n"
    assert heads(verify_diagnostics(text, F, process)) == [
        "t.mlir:2:8: error: 'warning' diagnostic emitted when expecting a 'remark'",
        "t.mlir:3:1: error: unexpected remark: r1",
        't.mlir:2:8: error: expected remark "w1" was not produced',
    ]


def test_warnings_before_a_raised_error_are_all_collected():
    def process():
        emit_warning("first", FileLineColLoc(F, 1, 1))
        raise IRError("then fatal", FileLineColLoc(F, 2, 1))
    text = "// expected-warning {{first}}\n// expected-error {{fatal}}\n"
    assert verify_diagnostics(text, F, process) == []


@pytest.mark.parametrize("loc", [None, UNKNOWN_LOC], ids=["none", "unknown-loc"])
def test_unknown_location(loc):
    def process():
        raise IRError("nowhere in particular", loc)
    text = "// expected-error @unknown {{nowhere}}\n"
    assert verify_diagnostics(text, F, process) == []
    # Without `@unknown` the same annotation names line 1, where nothing was reported.
    assert heads(verify_diagnostics("// expected-error {{nowhere}}\n", F, process)) == [
        "<unknown>:0:0: error: unexpected error: nowhere in particular",
        't.mlir:1:4: error: expected error "nowhere" was not produced',
    ]


def test_located_diagnostic_does_not_match_unknown_expectation():
    def process():
        raise IRError("here", FileLineColLoc(F, 1, 1))
    assert heads(verify_diagnostics("// expected-error @unknown {{here}}\n", F, process)) == [
        "t.mlir:1:1: error: unexpected error: here",
        't.mlir:1:4: error: expected error "here" was not produced',
    ]


def test_diagnostic_in_another_file_is_unexpected():
    def process():
        raise IRError("elsewhere", FileLineColLoc("other.mlir", 1, 5))
    assert heads(verify_diagnostics("// expected-error {{elsewhere}}\n", F, process)) == [
        "other.mlir:1:5: error: unexpected error: elsewhere",
        't.mlir:1:4: error: expected error "elsewhere" was not produced',
    ]


# ----- regular expressions ------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    "type of return operand {{[0-9]+}} ('i32')",
    "{{.*}}operand 0 ('i32') doesn't match function result type ('f32'){{.*}}",
    "'func.{{(return|yield)}}' op",
    "in function @{{[a-z]}}",
    "('i32') doesn't match",
], ids=["digits", "anchors", "alternation", "symbol", "literal-only"])
def test_regex_matches(body):
    text = bad_return("// expected-error-re @+1 {{" + body + "}}")
    assert verify_diagnostics(text, F, parse(text)) == []


def test_regex_literal_parts_are_escaped():
    """Outside `{{...}}` a `.` or `(` is literal: `('i3.')` must not match `('i32')`."""
    text = bad_return("// expected-error-re @+1 {{('i3.') {{doesn't}}}}")
    assert heads(verify_diagnostics(text, F, parse(text))) == [
        f"t.mlir:3:3: error: unexpected error: {RETURN_MISMATCH}",
        't.mlir:2:6: error: expected error "(\'i3.\') {{doesn\'t}}" was not produced',
    ]


def test_regex_that_does_not_match():
    text = bad_return("// expected-error-re @+1 {{operand {{[a-z]+}} (}}")
    assert heads(verify_diagnostics(text, F, parse(text)))[1] == (
        't.mlir:2:6: error: expected error "operand {{[a-z]+}} (" was not produced')


def test_invalid_regex_is_a_failure_at_the_annotation():
    text = bad_return("// expected-error-re @+1 {{operand {{(}}}}")
    failures = heads(verify_diagnostics(text, F, parse(text)))
    assert failures[0].startswith("t.mlir:2:6: error: invalid regex: ")
    # The broken annotation expects nothing, so the error it meant is unexpected.
    assert failures[1:] == [f"t.mlir:3:3: error: unexpected error: {RETURN_MISMATCH}"]


def test_unterminated_regex_piece():
    _, failures = parse_expectations("// expected-error-re {{a {{b}}\n", F)
    assert heads(failures) == ["t.mlir:1:4: error: found start of regex with no end '}}'"]
