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


def test_an_entry_another_calls_is_lowered_with_it():
    """Lowering one entry leaves out the others, but not one it calls (through another
    function too): that stays, and so does every private function."""
    from irkit.parser import parse_module
    from irkit.runtime.compiled import _entries_left_out
    module = parse_module("""
      func.func @a(%x: f32) -> f32 {
        %y = func.call @p(%x) : (f32) -> f32
        return %y : f32
      }
      func.func private @p(%x: f32) -> f32 {
        %y = func.call @b(%x) : (f32) -> f32
        return %y : f32
      }
      func.func @b(%x: f32) -> f32 {
        return %x : f32
      }
      func.func @c(%x: f32) -> f32 {
        return %x : f32
      }
    """, "m.mlir")
    names = lambda fns: sorted(fn.properties["sym_name"].value for fn in fns)  # noqa: E731
    assert names(_entries_left_out(module, ["a"])) == ["c"]
    assert names(_entries_left_out(module, ["b"])) == ["a", "c"]
    assert names(_entries_left_out(module, ["c"])) == ["a", "b"]


def test_first_calls_from_two_threads_lower_each_entry_once(tmp_path, monkeypatch):
    """Threads that make an entry's first call at once share one lowering of it (and one
    compile); every call returns what a call on one thread does."""
    import threading

    from irkit.runtime import compiled as compiled_module
    path = Path(__file__).resolve().parents[2] / "examples" / "logreg.irk"
    (name, module), = _models(path).items()
    lowered, real = [], compiled_module.lower_graph

    def counted(graph, make_pm, target="cpu", entries=None):
        lowered.append(tuple(entries or ()))
        return real(graph, make_pm, target, entries)
    monkeypatch.setattr(compiled_module, "lower_graph", counted)
    model = Model.from_engine(name, JitEngine(compile_models({name: module}), name))
    rng = np.random.default_rng(1)
    batch = {"x": rng.standard_normal((4, 784), dtype=np.float32),
             "y": np.eye(10, dtype=np.float32)[rng.integers(0, 10, 4)]}
    results, errors = [], []

    def call():
        try:
            results.append(model.forward(**batch))
        except Exception as e:          # reported below, with the thread's result
            errors.append(e)
    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and lowered == [("forward",)]
    want = irkit.load_model(path, engine="interpreter").forward(**batch)
    for got in results:
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=1e-6, err_msg=k)
