"""Random DSL models (`dsl_case`: elementwise chains, reductions, matmuls, softmax, slices,
sometimes a conditional output) through the nvptx ladder to the `gpu` stage, run by the
interpreter's grid semantics, give what the graph interpreter gives.

The mapping's options are drawn too (block sizes that divide the iteration spaces and ones
that do not, one and two grid dimensions), so guards, delinearization and multi-block grids
are all exercised. The GPU schedules (tiled matmuls, block reductions) are left out: they
have property tests of their own (test_gpu_schedules.py), and here every loop nest goes
through the generic mapping. Few examples: every kernel thread is interpreted op by op."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.symbols import lookup_symbol_in

from test_lower_graph_programs import dsl_case  # noqa: E402  (tests/property on sys.path)
from output_buffers import garbage_like


def _gpu_pipeline(block_size: int, two_d: bool, per_thread: int = 1) -> str:
    """The nvptx ladder without the GPU schedules down to `memory`, then its `gpu` row with
    these mapping options."""
    mapping = (f"gpu-map-parallel-loops{{block-size={block_size} two-d={two_d} "
               f"block-x={min(2, block_size)} per-thread={per_thread}}}")
    row = pipeline.passes_between("memory", "gpu", target="nvptx")
    schedules = [p for p in pipeline.GPU_SCHEDULES.split(",") if p]
    return ",".join([pipeline.passes_between(None, "memory", disable=schedules, target="nvptx"),
                     row.replace("gpu-map-parallel-loops", mapping, 1)])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from([1, 3, 8, 256]), st.booleans(), st.sampled_from([1, 2, 4]))
def test_gpu_stage_of_random_models_matches_the_interpreter(data, block_size, two_d,
                                                            per_thread):
    module, args = dsl_case(data)
    text = str(module)
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in
                Interpreter(module).call(lookup_symbol_in(module, "forward"), list(args))]
    lowered = parse_module(text)
    PassManager.parse(_gpu_pipeline(block_size, two_d, per_thread)).run(lowered)
    assert any(o.name == "gpu.launch_func" for o in lowered.walk())
    fn = lookup_symbol_in(lowered, "forward")
    outs = [garbage_like(w) for w in want]
    attrs = fn.properties.get("arg_attrs")
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    interp = Interpreter(lowered)
    with np.errstate(all="ignore"):
        interp.call(fn, [np.array(a, order="C") for a in args] + outs + status)
    assert not interp.state.get("memory.allocated"), "a buffer was never freed"
    assert all(s[0] == 0 for s in status), f"a run-time check failed: {status}\n{text}"
    for k, (g, w) in enumerate(zip(outs, want)):
        finite = np.isfinite(w)
        scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                   err_msg=f"result #{k} (block-size={block_size}, "
                                           f"two-d={two_d}, per-thread={per_thread})\n{text}")
