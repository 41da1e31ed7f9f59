"""The example models on the GPU path without a GPU: every kernel of every example model
(forward, gradients, train_step) assembled by `ptxas -arch=sm_90` (skipped where ptxas is
missing), and `engine="cuda"` on the fake driver (tests/fake_cuda.py) training logreg and the
MLP equal to the interpreter, with only inputs, outputs and the status crossing to and from
the device."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irkit.backends.nvptx import emit_ptx, find_ptxas, ptxas
from irkit.frontend.dsl import compile_source, model_modules
from irkit.runtime.compiled import lower_model_with_graph
from irkit.runtime.cuda import CudaEngine
from irkit.runtime.inputs import random_inputs
from irkit.runtime.model import Model, load_model
from tests.fake_cuda import FakeDriver

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: left out where the fake driver runs the kernels: it runs every GPU thread in the
#: interpreter, and a block with barriers (the tiled matmul's, the block reductions') on one
#: Python thread per GPU thread, minutes per training step; the launch path is the same
#: without them, and their own tests (tests/property/test_gpu_schedules.py) check them
SCHEDULES = ("gpu-matmul-tiles", "gpu-block-reduce")


def _models(path: Path) -> dict:
    return model_modules(compile_source(path.read_text(), str(path)))


CASES = [(p.name, name) for p in sorted(EXAMPLES.glob("*.irk")) for name in _models(p)]


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("file, model", CASES)
def test_every_kernel_passes_ptxas(file, model):
    module = _models(EXAMPLES / file)[model]
    _, lowered = lower_model_with_graph(module, target="nvptx")
    ptx, kernels = emit_ptx(lowered, "sm_90", verify=False)
    functions = {k.name.split("_kernel")[0] for k in kernels}
    assert "forward" in functions and kernels
    ptxas(ptx, "sm_90")


def _batch(model: Model, n: int, seed: int) -> dict:
    return random_inputs(model.inputs, n, seed, int_high=2)


@pytest.mark.parametrize("file, steps", [("logreg.irk", 3), ("mlp.irk", 2)])
def test_cuda_engine_trains_like_the_interpreter(file, steps):
    """A few steps at a tiny batch: the fake driver runs every GPU thread in the interpreter
    (an Adam update of the MLP's w1 alone is 8192 threads; see `SCHEDULES`)."""
    (name, module), = _models(EXAMPLES / file).items()
    driver = FakeDriver()
    gpu = Model.from_engine(name, CudaEngine.from_module(module, driver=driver,
                                                         disable=SCHEDULES))
    ref = load_model(EXAMPLES / file, engine="interpreter")
    assert gpu.engine == "cuda" and gpu.trainable
    for step in range(steps):
        batch = _batch(gpu, 2, step)
        got, want = gpu.train_step(**batch), ref.train_step(**batch)
        np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-5)
    for v in ref.variables:
        np.testing.assert_allclose(gpu.variables[v], ref.variables[v], rtol=1e-5, atol=1e-6)
    batch = _batch(gpu, 3, 9)
    for k, y in ref.forward(**batch).items():
        np.testing.assert_allclose(gpu.forward(**batch)[k], y, rtol=1e-5, atol=1e-6)
    assert driver.errors == [] and driver.launches


def test_only_inputs_and_outputs_are_copied():
    """A forward call copies each input up and each output down (and the status words, up
    and down, when the function checks something); the variables stay on the device until
    read, and a variable assigned on the host is used by the next call."""
    (name, module), = _models(EXAMPLES / "logreg.irk").items()
    driver = FakeDriver()
    m = Model.from_engine(name, CudaEngine.from_module(module, driver=driver,
                                                       disable=SCHEDULES))
    batch = _batch(m, 2, 0)
    m.forward(**batch)                      # the first call uploads the variables too
    before = driver.copies
    m.forward(**batch)
    entry = m._engine.runner.entries["forward"]
    assert driver.copies - before == len(entry.inputs) + len(entry.outputs) + \
        2 * entry.has_status
    m.variables["W"] = np.zeros_like(m.variables["W"])
    m.variables["b"] = np.zeros_like(m.variables["b"])
    probs = m.forward(**batch)["probs"]
    np.testing.assert_allclose(probs, np.full_like(probs, 0.1), rtol=1e-6)


def test_buffers_are_kept_between_calls():
    """The host code allocates its buffers (the planned arena) on the first call and keeps
    them: a second call of the same size allocates nothing and frees nothing, a larger
    batch replaces the arena (one allocation), and the results stay the interpreter's."""
    (name, module), = _models(EXAMPLES / "mlp.irk").items()
    driver = FakeDriver()
    m = Model.from_engine(name, CudaEngine.from_module(module, driver=driver,
                                                       disable=SCHEDULES))
    ref = load_model(EXAMPLES / "mlp.irk", engine="interpreter")
    small, large = _batch(m, 2, 0), _batch(m, 3, 1)
    m.forward(**small)
    allocs, live = driver.device_allocs, len(driver.buffers)
    assert allocs >= 1
    np.testing.assert_allclose(m.forward(**small)["logits"], ref.forward(**small)["logits"],
                               rtol=1e-5, atol=1e-6)
    assert (driver.device_allocs, len(driver.buffers)) == (allocs, live)
    np.testing.assert_allclose(m.forward(**large)["logits"], ref.forward(**large)["logits"],
                               rtol=1e-5, atol=1e-6)
    assert driver.device_allocs == allocs + 1 and driver.errors == []


def test_ptx_artifact_round_trip(tmp_path):
    """`irkit-compile --target=nvptx -o M.ptx` writes the PTX and M.ptx.json; loading them
    (here on the fake driver) gives the model the interpreter runs."""
    from irkit.runtime.cuda import load_ptx
    from irkit.tools.compile import main
    out = tmp_path / "logreg.ptx"
    assert main([str(EXAMPLES / "logreg.irk"), "-o", str(out),
                 "--disable=" + ",".join(SCHEDULES)]) == 0
    assert out.read_text().count(".visible .entry") >= 3
    name, engine = load_ptx(str(out), FakeDriver())
    m = Model.from_engine(name, engine)
    ref = load_model(EXAMPLES / "logreg.irk", engine="interpreter")
    batch = _batch(m, 2, 3)
    np.testing.assert_allclose(m.forward(**batch)["probs"], ref.forward(**batch)["probs"],
                               rtol=1e-5)


def test_cuda_engine_without_a_gpu():
    """Here there is no GPU driver (or no cuda-bindings): `engine="cuda"` says which, before
    compiling anything."""
    with pytest.raises(RuntimeError, match="cuda-bindings|libcuda.so.1|CUDA device|cuInit"):
        load_model(EXAMPLES / "logreg.irk", engine="cuda")
