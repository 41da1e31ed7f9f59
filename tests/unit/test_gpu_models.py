"""The nvptx ladder on every example model: to the `gpu` stage, the module verifies, MLIR 22
reads it, and the interpreter running its kernels with the grid semantics (blocks, threads,
launches) computes what the interpreter computes on the graph module -- every function,
`forward` and `train_step` with its variable updates included. This is the GPU pipeline's
central correctness test; backends/nvptx compiles these same modules to PTX.

Each model runs twice: without the GPU schedules, where the generic mapping
(gpu-map-parallel-loops) takes every loop nest, at its symbolic sizes (the inputs' `B`,
`N`, `T` dynamic, 2 at run time); and with them (`pipeline.GPU_SCHEDULES`: tiled matmuls,
block reductions), its inputs' symbolic sizes made 2 in the source, so that the tiles and
blocks fit the static problem as they do for a model compiled at a known batch (a tiled
matmul over a dynamic batch keeps its 64-row tile: logreg's forward would interpret 600k
multiply-adds for 16k useful ones). The schedules at dynamic sizes are tested on their own
(tests/property/test_gpu_schedules.py, tests/filecheck/passes/gpu-*.mlir).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from irkit.frontend.dsl import compile_source, model_modules
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.passes import pipeline
from irkit.printer import print_op
from tests.unit.test_bufferize import _initial_variables, _inputs, run_buffers

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.irk"))
MLIR_OPT = shutil.which("/usr/lib/llvm-22/bin/mlir-opt") or shutil.which("mlir-opt")
SCHEDULES = [p for p in pipeline.GPU_SCHEDULES.split(",") if p]


def _static(source: str, size: int = 2) -> str:
    """The DSL source with every symbolic size of its `input` declarations `size`."""
    return re.sub(r"(?m)^(\s*input\s+\w+\s*:\s*\w+\[)([^\]]*)\]", lambda m: m.group(1) + re.sub(
        r"[A-Za-z_]\w*", str(size), m.group(2)) + "]", source)


def _lower(path: Path, schedules: bool = True, static: bool | None = None):
    """(graph module, its nvptx `gpu`-stage module) of each model of the file; at static
    sizes with the schedules unless `static` says otherwise (module docstring)."""
    source = path.read_text()
    static = schedules if static is None else static
    top = compile_source(_static(source) if static else source, str(path))
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(top)
    for graph in model_modules(top).values():
        lowered = parse_module(str(graph))
        pipeline.pass_manager(pipeline.DEV_STAGE, "gpu", target="nvptx",
                              disable=() if schedules else SCHEDULES).run(lowered)
        yield graph, lowered


def _cases():
    for path in EXAMPLES:
        yield pytest.param(path, False, id=f"{path.stem}-mapped")
        yield pytest.param(path, True, id=f"{path.stem}-scheduled")


@pytest.mark.parametrize("path,schedules", list(_cases()))
def test_gpu_stage_matches_the_graph_interpreter(path, schedules):
    for graph, lowered in _lower(path, schedules):
        launches = [o for o in lowered.walk() if o.name == "gpu.launch_func"]
        assert launches, "no kernel was launched"
        host = [o for o in lowered.walk() if o.name in ("memory.load", "memory.store")
                and o.parent_op.name == "func.func"]
        assert not host, f"the host touches device memory: {host[0]}"
        for f in [op for op in graph.walk() if op.name == "func.func"]:
            name = f.properties["sym_name"].value
            args = _inputs(f.properties["function_type"].value, np.random.default_rng(0), 2)
            state: dict = {}
            with np.errstate(all="ignore"):
                want = [np.asarray(v) for v in Interpreter(graph, state).call(f, list(args))]
            variables = _initial_variables(graph)
            got = run_buffers(lowered, name, args, want, variables)
            for i, (g, w) in enumerate(zip(got, want)):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True,
                                           err_msg=f"@{name} result #{i}")
            for var, w in state.get("graph.variables", {}).items():
                np.testing.assert_allclose(variables[var], w, rtol=1e-4, atol=1e-5,
                                           err_msg=f"@{name} variable {var}")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_schedules_lower_every_model_at_dynamic_sizes(path):
    """The nvptx ladder with the schedules at the models' own symbolic sizes: every pass's
    output verifies (a size computed after the launch that reads it once broke cnn's
    batchnorm gradient), and every matmul and row reduction is a launch with workgroup
    memory (the tiles keep their sizes along a dynamic dim; not interpreted here: slow)."""
    for graph, lowered in _lower(path, schedules=True, static=False):
        scheduled = [o for o in graph.walk() if o.name in ("graph.matmul", "graph.conv2d",
                                                            "graph.reduce_sum")]
        shared = [o for o in lowered.walk() if o.name == "gpu.func"
                  and "workgroup" in str(o).split("{", 1)[0]]
        assert shared or not scheduled, f"{scheduled[0].name} has no tiled or tree kernel"


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem in ("logreg", "cnn")],
                         ids=lambda p: p.stem)
def test_mlir_opt_verifies_the_gpu_stage(path):
    """MLIR's own verifier accepts the launches and kernels (loop and memory ops pass as
    unregistered ones)."""
    if MLIR_OPT is None:
        pytest.skip("mlir-opt not found")
    for _, lowered in _lower(path, schedules=False):
        text = print_op(lowered, generic=True)
        out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "-"], input=text,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[:3000]
        assert re.search(r"gpu.launch_func\s+@kernels::@", out.stdout)


def test_the_nvptx_ladder_shares_the_cpu_rows_down_to_linalg():
    assert pipeline.stage_names("nvptx") == ["graph", "autodiff", "linalg", "loop", "memory",
                                             "gpu"]
    assert pipeline.compiled_stage("nvptx") == "gpu"
    assert pipeline.compiled_stage() == pipeline.compiled_stage("cpu") == "memory"
    assert pipeline.passes_between(None, "linalg", target="nvptx") == \
        pipeline.passes_between(None, "linalg")
    loop_row = pipeline.passes_between("linalg", "loop", target="nvptx").split(",")
    assert not {"loop-vectorize", "math-polynomial-approximation",
                "linalg-matmul-blis"} & set(loop_row)
    gpu_row = pipeline.passes_between("memory", "gpu", target="nvptx").split(",")
    assert gpu_row.index("gpu-map-parallel-loops") < gpu_row.index("gpu-kernel-outlining")
    with pytest.raises(ValueError, match="no target 'amdgpu'"):
        pipeline.stage_names("amdgpu")
    with pytest.raises(ValueError, match="no stage 'gpu'"):
        pipeline.passes_between(None, "gpu")            # the CPU ladder has no gpu row
