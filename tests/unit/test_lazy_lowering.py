"""The JIT lowers each entry of a model at its first call (`CompiledModels.entry_modules`).

Until then the model's inputs, outputs and variables are read from its graph-stage module;
these tests check that what is read there is what the lowered functions say, for every
example model, and that nothing is lowered before it is called.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.frontend.dsl import compile_source, model_modules  # noqa: E402
from irkit.runtime.compiled import (  # noqa: E402
    compile_models, entry_names, lower_model_with_graph,
)
from irkit.runtime.engines import JitEngine, arg_specs, result_names  # noqa: E402
from irkit.runtime.model import Model  # noqa: E402
from irkit.symbols import lookup_symbol_in  # noqa: E402

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.irk"))


def _models(path: Path) -> dict:
    return model_modules(compile_source(path.read_text(), str(path)))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_graph_stage_describes_each_entry_as_its_lowering_does(path):
    """Per model and entry: the inputs (names, dtypes, dims) and output names read from the
    graph-stage function (before the entry is lowered) equal the lowered entry's, and the
    variables read from the graph-stage declarations equal the lowered module's record."""
    for name, module in _models(path).items():
        compiled = compile_models({name: module})
        mc = compiled.models[name]
        runner = compiled.runner(name)
        graph = mc.graph.op
        before = {e: (arg_specs(lookup_symbol_in(graph, e)),
                      result_names(lookup_symbol_in(graph, e))) for e in runner.entries}
        assert mc.entries == {}, "an entry was lowered before its first call"
        for e, (inputs, outputs) in before.items():
            lowered = runner.entries[e]
            assert [(s.name, s.dtype, s.dims, s.element) for s in inputs] == \
                [(s.name, s.dtype, s.dims, s.element) for s in lowered.inputs], (name, e)
            assert outputs == lowered.output_names, (name, e)
        whole = lower_model_with_graph(module)[1]
        assert mc.variables_module().attributes.get("graph.variables") == \
            whole.attributes.get("graph.variables"), name
        assert sorted(runner.entries) == sorted(entry_names(whole)), name


def test_loading_lowers_no_entry_and_a_call_lowers_only_its_own(tmp_path):
    """A model made and described (inputs, outputs, variables) lowers nothing; its first
    `train_step` lowers `train_step` alone; `forward` is lowered at its own first call, and
    both then run as the interpreter does."""
    path = tmp_path / "logreg.irk"
    path.write_text((Path(__file__).resolve().parents[2] / "examples" / "logreg.irk")
                    .read_text())
    (name, module), = _models(path).items()
    compiled = compile_models({name: module})
    mc = compiled.models[name]
    model = Model.from_engine(name, JitEngine(compiled, name))
    assert [s.name for s in model.inputs] == ["x", "y"] and model.outputs == ["probs", "loss"]
    assert sorted(model.variables) == ["W", "b"]
    assert mc.entries == {}
    rng = np.random.default_rng(0)
    batch = {"x": rng.standard_normal((8, 784), dtype=np.float32),
             "y": np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]}
    ref = irkit.load_model(path, engine="interpreter")
    np.testing.assert_allclose(model.train_step(**batch)["loss"],
                               ref.train_step(**batch)["loss"], rtol=1e-5)
    assert sorted(mc.entries) == ["train_step"]
    got, want = model.forward(**batch), ref.forward(**batch)
    assert sorted(mc.entries) == ["forward", "train_step"]
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=1e-6, err_msg=k)
