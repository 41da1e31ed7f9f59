"""What makes a cold compile cheaper must leave its results as they were (issue 14, compile
time): the verifier's per-run caches still catch every bad use, the LLVM half started on a
helper thread (`start_object`, which `write_library` overlaps with its own work) gives the
object code `compile_object` gives, byte for byte, and irkit-compile's machine-code path
verifies after every row of the pipeline table unless `--verify-each` asks for every pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irkit.backends import llvm_cpu
from irkit.diagnostics import VerifyError
from irkit.ir import Operation
from irkit.parser import parse_module
from irkit.passes import pipeline
from irkit.tools.compile import main as irkit_compile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_uses_lifted_to_one_ancestor_are_each_checked():
    """Two uses in one nested block lift to the same ancestor (the verifier caches it per
    block): the first, of a value defined before it, is fine; the second, of one defined
    after it, is still a dominance error at its own line."""
    text = ('func.func @f() {\n  %0 = "t.c"() : () -> i32\n  "t.r"() ({\n'
            '    "t.u"(%0) : (i32) -> ()\n    "t.u"(%1) : (i32) -> ()\n  }) : () -> ()\n'
            '  %1 = "t.c"() : () -> i32\n  return\n}\n')
    with pytest.raises(VerifyError) as e:
        parse_module(text, "v.mlir", allow_unregistered=True)
    assert e.value.render().split("\n")[0] == \
        "v.mlir:5:5: error: operand #0 does not dominate this use"


def test_uses_in_sibling_blocks_lift_separately():
    """A use nested under another op than the first is lifted to its own ancestor."""
    text = ('func.func @f() {\n  %0 = "t.c"() : () -> i32\n'
            '  "t.r"() ({\n    "t.u"(%0) : (i32) -> ()\n  }) : () -> ()\n'
            '  "t.r"() ({\n    "t.u"(%1) : (i32) -> ()\n  }) : () -> ()\n'
            '  %1 = "t.c"() : () -> i32\n  return\n}\n')
    with pytest.raises(VerifyError) as e:
        parse_module(text, "v.mlir", allow_unregistered=True)
    assert e.value.render().split("\n")[0] == \
        "v.mlir:7:5: error: operand #0 does not dominate this use"


KERNEL = """
func.func @axpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c1 {
    %xi = memory.load %x[%i] : memref<?xf32>
    %yi = memory.load %y[%i] : memref<?xf32>
    %p = arith.mulf %a, %xi : f32
    %s = arith.addf %p, %yi : f32
    memory.store %s, %y[%i] : memref<?xf32>
  }
  return
}
"""


def _kernel() -> Operation:
    from irkit.dialects import register_all
    register_all()
    return parse_module(KERNEL, "axpy.mlir")


def test_object_started_in_background_is_compile_objects():
    """`start_object(...).result()` is `compile_object`'s object code, byte for byte."""
    for jit in (False, True):
        started = llvm_cpu.start_object(_kernel(), 2, jit=jit).result()
        direct = llvm_cpu.compile_object(_kernel(), 2, jit=jit)
        assert started.data == direct.data
        assert started.externals == direct.externals


def test_background_call_hands_its_error_to_the_waiter():
    def fail():
        raise ValueError("from the helper thread")
    call = llvm_cpu.BackgroundCall(fail)
    with pytest.raises(ValueError, match="from the helper thread"):
        call.result()


def _verify_calls(monkeypatch, tmp_path, *flags: str) -> int:
    calls = [0]
    real = Operation.verify

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return real(self, *args, **kwargs)
    monkeypatch.setattr(Operation, "verify", counted)
    status = irkit_compile([str(EXAMPLES / "logreg.irk"), "--emit=llvm", "--no-cache",
                            "-o", str(tmp_path / "m.ll"), *flags])
    monkeypatch.setattr(Operation, "verify", real)
    assert status == 0
    return calls[0]


def test_irkit_compile_verifies_by_row_unless_verify_each(monkeypatch, tmp_path):
    """Machine code is verified once per row of the pipeline table (and once as the DSL's
    output): fewer times than with `--verify-each`, which verifies after every pass."""
    by_row = _verify_calls(monkeypatch, tmp_path)
    each = _verify_calls(monkeypatch, tmp_path, "--verify-each")
    assert by_row <= len(pipeline.stage_names()) + 1
    assert each > by_row + 5
