"""loop-merge-parallel-regions keeps compiled results, to the bit, on a team of threads.

Random DSL models (`test_lower_graph_programs.dsl_case`: matmuls, reductions, softmax,
broadcasts, conditionals) go through the compile pipeline; a copy then goes through
`loop-merge-parallel-regions`. Both are compiled with every loop split over the team (the
backend's work thresholds at one unit, so every barrier of a region is exercised) and run
on two and three threads with the same inputs: the outputs must be the same bits (the
static partition never changes an element's arithmetic), and the regions must verify. The
oracle is the unmerged program, itself checked against the interpreter by
test_compiled_programs.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.backends import llvm_parallel
from irkit.backends.llvm_cpu import compile_module, openmp_library
from irkit.interpreter import Interpreter
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.symbols import lookup_symbol_in

from test_lower_graph_programs import dsl_case  # noqa: E402  (tests/property on sys.path)
from output_buffers import garbage_like

if openmp_library() is None:
    pytest.skip("no OpenMP runtime (libgomp)", allow_module_level=True)


def _run(module, args, outs_like, threads: int) -> list[np.ndarray]:
    jit = compile_module(module, threads=threads)
    outs = [garbage_like(w) for w in outs_like]
    attrs = lookup_symbol_in(module, "forward").properties.get("arg_attrs")
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    with np.errstate(all="ignore"):
        jit["forward"](*[np.array(a, order="C") for a in args], *outs, *status)
    return outs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_team_regions_give_the_same_bits(data):
    module, args = dsl_case(data)
    with np.errstate(all="ignore"):          # the outputs' shapes and types
        shapes = [np.asarray(v) for v in
                  Interpreter(module).call(lookup_symbol_in(module, "forward"), list(args))]
    PassManager.parse(pipeline.passes_between(None, pipeline.compiled_stage())).run(module)
    merged = module.clone()
    PassManager.parse("loop-merge-parallel-regions").run(merged)
    merged.verify()
    old = llvm_parallel.MIN_WORK_PER_THREAD, llvm_parallel.MIN_WORK_PER_THREAD_IN_TEAM
    llvm_parallel.MIN_WORK_PER_THREAD = llvm_parallel.MIN_WORK_PER_THREAD_IN_TEAM = 1
    try:
        want = _run(module, args, shapes, 2)
        for threads in (2, 3):
            got = _run(merged, args, want, threads)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w, err_msg=str(merged))
    finally:
        llvm_parallel.MIN_WORK_PER_THREAD, llvm_parallel.MIN_WORK_PER_THREAD_IN_TEAM = old
