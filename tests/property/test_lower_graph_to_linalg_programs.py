"""lower-graph-to-linalg preserves meaning: random graph programs give the same interpreter
results before the pass and after it (linalg and tensor ops on tensors).

The programs are `graph_programs()` of test_lower_graph_programs.py (elementwise ops with
broadcasting, `?` sizes anywhere with run-time sizes of 1 that broadcast, splat and non-splat
constants, reductions with keepdims, argmax, softmax, casts, and ops whose rules are not
written yet, which the pass leaves in place and the interpreter still runs). After the pass
no op of a converted family may be left. Where a converted function uses only linalg,
tensor, arith and math ops, MLIR itself runs it too (tests/mlir_oracle.py), as an oracle
independent of irkit's interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.symbols import lookup_symbol_in
from irkit.passes.lower_graph_to_linalg import LowerGraphToLinalg
from irkit.passes.graph_to_linalg import CONVERSIONS
from irkit.passes.graph_to_linalg.core import rule_for
from test_lower_graph_programs import graph_programs

#: the dialects a fully converted function may use, so that MLIR can run it
_MLIR_DIALECTS = ("linalg.", "tensor.", "arith.", "math.", "func.")


def _convert(module):
    converted = parse_module(str(module))
    PassManager().add(LowerGraphToLinalg()).run(converted)
    converted.verify()
    return converted


def _compare(got, want, text: str) -> None:
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, text
        if w.dtype.kind == "f":
            scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0, where=np.isfinite(w))))
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                       err_msg=text)
        else:
            np.testing.assert_array_equal(g, w, err_msg=text)


def _run(module, args) -> list:
    f = lookup_symbol_in(module, "f")
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in Interpreter(module).call(f, [np.array(a) for a in args])]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_converted_graph_programs_match_the_interpreter(case):
    module, args = case
    module.verify()
    want = _run(module, args)
    converted = _convert(module)
    text = print_op(converted)
    left = [op.name for op in converted.walk() if op.name in CONVERSIONS or
            (op.name.startswith("graph.") and rule_for(op) is not None)]
    assert not left, f"ops with a rule were left: {left}\n{text}"
    _compare(_run(converted, args), want, text)


def _mlir_runnable(module) -> bool:
    return all(op.name.startswith(_MLIR_DIALECTS) or op.name == "builtin.module"
               for op in module.walk())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_mlir_runs_converted_programs_as_the_interpreter_does(case):
    """MLIR's own pipeline (one-shot bufferization, linalg to loops, LLVM) on the converted
    function agrees with irkit's interpreter on the graph function."""
    from mlir_oracle import missing_tools, run_mlir
    if missing_tools():
        pytest.skip(f"MLIR toolchain missing: {missing_tools()}")
    module, args = case
    want = _run(module, args)
    converted = _convert(module)
    if not _mlir_runnable(converted):
        return                          # an op without a rule yet, or a run-time check
    text = print_op(converted, generic=True)
    _compare(run_mlir(text, "f", [np.array(a, order="C") for a in args]), want, text)
