"""Test-only passes, loaded with `irkit-opt --load-pass-plugin=tests/plugins/testing_passes.py`.

They exist to prove that the safety nets catch what they are meant to catch (as MLIR keeps
its `test-*` passes out of the library, in `test/lib`):

- `test-miscompile` turns the first `arith.addf` of each function into `arith.subf`: IR that
  verifies but computes something else, which only `--verify-each=numeric` can notice.
- `test-break-ir` makes a `func.return` return nothing: IR that no longer verifies.
- `test-pattern-loop` swaps the operands of `arith.subf` forever, so the greedy driver hits
  its iteration cap.
- `test-emit-warning` emits a warning at every function, for `--verify-diagnostics`.
"""

from irkit.diagnostics import emit_warning
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import PatternRewriter, RewritePattern, apply_patterns_greedily


@register_pass
class TestMiscompile(Pass):
    """Replace the first arith.addf of each function by arith.subf (a deliberate bug)."""

    name = "test-miscompile"
    anchor = "func.func"

    def run(self, op: Operation) -> None:
        for o in op.walk():
            if o.name == "arith.addf":
                new = Operation.create("arith.subf", o.operands, o.result_types,
                                       o.properties, o.attributes, location=o.location)
                o.parent.insert_before(o, new)
                o.replace_all_uses_with(new.results)
                o.erase()
                return


@register_pass
class TestBreakIR(Pass):
    """Drop the operands of every func.return (the result no longer verifies)."""

    name = "test-break-ir"

    def run(self, op: Operation) -> None:
        for o in op.walk():
            if o.name == "func.return":
                o.set_operands([])


class _SwapSubF(RewritePattern):
    """a - b -> b - a, which is wrong and never stops: only the iteration cap ends it."""

    root = "arith.subf"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a, b = op.operands
        with rewriter.modify_op_in_place(op):
            op.set_operands([b, a])
        return True


@register_pass
class TestPatternLoop(Pass):
    """Run a pattern that rewrites forever."""

    name = "test-pattern-loop"
    max_iterations: int = 3

    def run(self, op: Operation) -> None:
        apply_patterns_greedily(op, [_SwapSubF()], max_iterations=self.max_iterations)


@register_pass
class TestEmitWarning(Pass):
    """Emit a warning naming each function."""

    name = "test-emit-warning"

    def run(self, op: Operation) -> None:
        for o in op.walk():
            if o.name == "func.func":
                emit_warning(f"function '{o.properties['sym_name'].value}' seen", o.location)
