"""Passes preserve what programs compute, on random arith/math programs.

For each pass (and the pipeline `canonicalize,cse`): parse a random program
(`programs.programs`), record the interpreter's results on random inputs with
`NumericChecker`, run the pass, then require that

- the module still verifies and every public function is still there;
- `NumericChecker.check` finds no change (integers exactly, floats within rounding);
- the printed output parses back and prints the same.

The generator avoids undefined behaviour (see its docstring), so any difference is a bug in
the pass, or in a folder disagreeing with the interpreter. A failing example prints the
program and the mismatch; `irkit-opt --verify-each=numeric` replays it on the command line.

The generator itself is tested first: its programs parse, verify and run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from irkit.ir import Operation
from irkit.numeric_check import NumericChecker
from irkit.parser import parse_module
from irkit.pass_manager import Pass, PassManager, registered_passes
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from programs import programs

PASSES = ["canonicalize", "cse", "dce", "symbol-dce", "inline", "loop-invariant-code-motion",
          "strip-debuginfo", "canonicalize,cse"]

# 8 pipelines x 50 examples plus 2 x 50 for the generator: about 15 s on two cores.
SOUNDNESS = settings(max_examples=50, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
GENERATOR = settings(max_examples=50, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def record(text: str) -> tuple[Operation, NumericChecker]:
    module = parse_module(text, filename="<generated>")
    checker = NumericChecker()
    checker.record(module)
    return module, checker


# ----- the generator --------------------------------------------------------------------------

@GENERATOR
@given(programs())
def test_programs_parse_and_verify(program):
    text, entries = program
    module = parse_module(text, filename="<generated>")
    module.verify()
    for name in entries:
        fn = lookup_symbol_in(module, name)
        assert fn is not None and fn.name == "func.func"
    printed = print_op(module)
    assert print_op(parse_module(printed)) == printed


@GENERATOR
@given(programs())
def test_programs_run(program):
    text, entries = program
    module, checker = record(text)
    # Every entry takes supported inputs and runs without raising.
    assert checker.skipped == {}, f"{checker.skipped}\n{text}"
    assert sorted(checker.checked) == sorted(entries)
    assert checker.check(module) is None


# ----- soundness ------------------------------------------------------------------------------

def _missing(pipeline: str) -> list[str]:
    known = registered_passes()
    return [name for name in pipeline.split(",") if name not in known]


def check_pass_is_sound(pipeline: str, program: tuple[str, list[str]]) -> None:
    """The pipeline exists (a pass missing from the registry is a failure, not a skip, so a
    lost registration cannot hide as one), keeps every entry, and changes no result."""
    missing = _missing(pipeline)
    assert not missing, f"pass {', '.join(missing)} not registered"
    text, entries = program
    module, checker = record(text)
    PassManager.parse(pipeline).run(module)
    module.verify()
    for name in entries:
        assert lookup_symbol_in(module, name) is not None, f"{pipeline} removed @{name}"
    mismatch = checker.check(module)
    assert mismatch is None, (f"{pipeline} changed a result\n{mismatch.format()}\n"
                              f"--- input ---\n{text}\n--- output ---\n{print_op(module)}")
    printed = print_op(module)
    assert print_op(parse_module(printed)) == printed


@pytest.mark.parametrize("pipeline", PASSES)
@SOUNDNESS
@given(program=programs())
def test_pass_is_sound(pipeline, program):
    check_pass_is_sound(pipeline, program)


def test_a_missing_pass_fails_rather_than_skips():
    program = (WRONG, ["entry0"])
    check_pass_is_sound("canonicalize", program)
    with pytest.raises(AssertionError, match="pass no-such-pass not registered"):
        check_pass_is_sound("canonicalize,no-such-pass", program)


# ----- the checker catches a wrong rewrite ------------------------------------------------------

WRONG = """
func.func @entry0(%a0: f32, %a1: tensor<3xf32>, %a2: i32) -> (f32, tensor<3xf32>) {
  %v1 = arith.mulf %a0, %a0 : f32
  %v2 = arith.addf %v1, %a0 : f32
  %v3 = arith.addf %a1, %a1 : tensor<3xf32>
  return %v2, %v3 : f32, tensor<3xf32>
}
"""


class _DropAdd(Pass):
    """A wrong "simplification": `addf x, y -> x`, as a pass that forgot a condition."""

    name = "test-drop-add"
    anchor = "func.func"

    def run(self, op: Operation) -> None:
        for add in [o for o in op.walk() if o.name == "arith.addf"]:
            add.result.replace_all_uses_with(add.operand(0))
            add.erase()


def test_wrong_rewrite_is_caught():
    module, checker = record(WRONG)
    pm = PassManager()
    pm.nest("func.func").add(_DropAdd())
    pm.run(module)
    module.verify()
    mismatch = checker.check(module)
    assert mismatch is not None
    assert mismatch.function == "entry0" and mismatch.result_index == 0
    assert "@entry0" in mismatch.format()
