"""Random graph programs compiled for the host CPU give the interpreter's results.

The programs are those of `test_lower_graph_programs.graph_programs()` (float and integer,
`?` sizes on any input axis with run-time sizes of 1 that broadcast, reductions, reshapes,
broadcast_to, matmul, softmax, casts, constants, a second output) and the DSL's random models,
half of them with a conditional output: each is run by the graph interpreter, and taken
through every stage of the pipeline table (`irkit.passes.pipeline`: switch/merge raised to
`graph.if`, `lower-graph-to-linalg`, `bufferize`, `lower-linalg-to-loop`, `canonicalize,cse`,
`plan-memory`), compiled by the LLVM backend
(`irkit.backends.llvm_cpu.compile_module`) and called with numpy output buffers filled with
garbage. Integers and booleans must agree exactly; floats to the rounding the lowering allows
(sequential sums, math functions rounded once from f64: rtol 1e-4 relative to the largest
finite magnitude of the result, as in test_lower_graph_programs.py), NaN where NaN.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.backends.llvm_cpu import compile_module
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.symbols import lookup_symbol_in

from test_lower_graph_programs import (  # noqa: E402  (tests/property on sys.path)
    dsl_case, graph_programs)
from output_buffers import garbage_like


def compile_and_compare(module, fn: str, args, passes: str | None = None) -> None:
    """Interpret `fn` on `args`; lower and plan a copy of the module (through its text) by
    `passes` (default: every row of the pipeline table), compile it, call the compiled `fn`
    with output buffers, and compare."""
    text = str(module)
    module.verify()
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in
                Interpreter(module).call(lookup_symbol_in(module, fn), list(args))]
    lowered = parse_module(text)
    PassManager.parse(passes or pipeline.passes_between(None, pipeline.compiled_stage())
                      ).run(lowered)
    jit = compile_module(lowered)
    outs = [garbage_like(w) for w in want]
    attrs = lookup_symbol_in(lowered, fn).properties.get("arg_attrs")
    # a run-time check (a reshape's count) adds a status buffer; none may fail here
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    with np.errstate(all="ignore"):
        jit[fn](*[np.array(a, order="C") for a in args], *outs, *status)
    assert all(st[0] == 0 for st in status), f"a run-time check failed: {status}\n{text}"
    shapes = [np.shape(a) for a in args]
    for k, (g, w) in enumerate(zip(outs, want)):
        what = f"result #{k} at input shapes {shapes}\n{text}"
        if w.dtype.kind == "f":
            finite = np.isfinite(w)
            scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                       err_msg=what)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_compiled_graph_programs_match_the_interpreter(case):
    module, args = case
    compile_and_compare(module, "f", args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_compiled_dsl_programs_match_the_interpreter(data):
    module, args = dsl_case(data)
    compile_and_compare(module, "forward", args)     # slices included: they are lowered
