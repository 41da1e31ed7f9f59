"""`linalg-fuse` keeps what random programs compute, at every stage and compiled.

Random graph programs (`test_lower_graph_programs.graph_programs`: reductions, matmuls,
softmax, broadcasts, reshapes) and random DSL models (`test_dsl_numpy.programs`), half of
them with a conditional output (`graph.if` after raising) and half with a backward graph
(`loss = sum(out * out)`, `grad loss wrt` every input: autodiff's adjoints), go through the
compile pipeline with and without `linalg-fuse`: the numeric checker interprets each
function before and after every pass and requires the same results (buffer contents after
bufferize), and the fused program compiled by the LLVM backend gives the interpreter's
results (`test_compiled_programs.compile_and_compare`).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

import numpy as np

from irkit.numeric_check import NumericCheckInstrumentation, NumericChecker
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all

from test_compiled_programs import compile_and_compare  # noqa: E402  (tests/property)
from test_dsl_numpy import _concrete, programs as dsl_programs  # noqa: E402
from test_lower_graph_programs import graph_programs, maybe_conditional  # noqa: E402

register_all()
#: up to the graph stage the interpreter runs (derivative requests expanded)
GRAPH = pipeline.passes_between(None, pipeline.DEV_STAGE)
FUSED = pipeline.passes_between(pipeline.DEV_STAGE, pipeline.compiled_stage())
UNFUSED = FUSED.replace(",linalg-fuse,", ",")


def test_the_pipeline_fuses():
    assert "linalg-fuse," in FUSED and "linalg-fuse," not in UNFUSED


def checked(module, passes: str, fn: str, required: bool = True) -> None:
    """Run `passes` on `module` (at the graph stage), each pass numerically checked against
    the one before (on inputs the checker draws; `required`: that `fn` could be run on
    them, which the graph programs' shapes do not always allow)."""
    PassManager.parse(GRAPH).run(module)
    checker = NumericChecker(trials=1)
    pm = PassManager.parse(passes)
    pm.add_instrumentation(NumericCheckInstrumentation(checker))
    pm.run(module)
    assert not required or any(name.endswith(fn) for name in checker.checked), \
        checker.skipped


def with_backward(source: str, data) -> str:
    """Half the time, the model's output also feeds a loss differentiated wrt its inputs."""
    if not data.draw(st.booleans(), label="backward"):
        return source
    inputs = [line.split()[1].rstrip(":") for line in source.splitlines()
              if line.strip().startswith("input ")]
    head, tail = source.rsplit("  output out\n", 1)
    return (f"{head}  loss = sum(out * out)\n  output out, loss\n"
            f"  grad loss wrt {', '.join(inputs)}\n{tail}")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dsl_programs_fused_and_unfused(data):
    from irkit.frontend.dsl import compile_source, model_modules
    source, _, inputs, n, seed = data.draw(dsl_programs())
    source = with_backward(maybe_conditional(source, data), data)

    def module():
        return model_modules(compile_source(source, "rand.irk"))["rand"]

    checked(module(), FUSED, "forward")
    checked(module(), UNFUSED, "forward")
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=_concrete(s, n)).astype(np.float32) for _, s in inputs]
    expanded = module()
    PassManager.parse(GRAPH).run(expanded)          # the interpreter runs no autodiff.grad
    compile_and_compare(expanded, "forward", args)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_graph_programs_fused(case):
    module, args = case
    checked(parse_module(str(module)), FUSED, "f", required=False)
    compile_and_compare(module, "f", args)
