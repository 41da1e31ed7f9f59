"""`pass_options`: options set on passes of the pipeline table (passes/pipeline.py), from
`passes_between` to `load_model` and the compile cache's key."""

from __future__ import annotations

import numpy as np
import pytest

import irkit
from irkit.passes import pipeline
from irkit.runtime import compile_cache
from irkit.runtime.compiled import compile_models

pytest.importorskip("llvmlite")

NO_ALIGN = "linalg-matmul-blis{align-start=false}"

LOGREG = """
model logreg {
  input x: f32[B, 784]
  input labels: i32[B]
  param w: f32[784, 10] = glorot(seed=1)
  param b: f32[10] = zeros
  loss = cross_entropy(x @ w + b, labels)
  output loss
  train loss with sgd(lr=0.1)
}
"""


def _element(pipeline_text: str, name: str) -> list[str]:
    return [e for e in pipeline._entries(pipeline_text) if pipeline._pass_name(e) == name]


def test_an_option_is_set_over_the_tables_own():
    """The named option changes, the table's other options of that pass stay, the other
    passes are as the table has them."""
    plain = pipeline.passes_between(None, "loop")
    edited = pipeline.passes_between(None, "loop", pass_options=NO_ALIGN)
    [blis] = _element(edited, "linalg-matmul-blis")
    assert "align-start=false" in blis
    assert "align-start=false" not in _element(plain, "linalg-matmul-blis")[0]
    unroll = pipeline.passes_between(None, "loop", pass_options="loop-unroll{factor=2}")
    [loop_unroll] = _element(unroll, "loop-unroll")
    for option in ("factor=2", "full-threshold=8", "full-ops=128", "nests=true",
                   "vectors=false"):
        assert option in loop_unroll
    others = [e for e in pipeline._entries(edited)
              if pipeline._pass_name(e) != "linalg-matmul-blis"]
    assert others == [e for e in pipeline._entries(plain)
                      if pipeline._pass_name(e) != "linalg-matmul-blis"]


@pytest.mark.parametrize("text, message", [
    ("linalg-fusion{x=1}", "cannot set options of 'linalg-fusion': the pipeline runs no "
                           "such pass"),
    ("linalg-matmul-blis{align-begin=false}", "'linalg-matmul-blis' has no option "
                                              "'align-begin'"),
    ("linalg-matmul-blis", "'linalg-matmul-blis' sets no option"),
    ("linalg-matmul-blis{lanes=many}", "lanes"),
])
def test_bad_pass_options_are_refused_before_anything_compiles(text, message, tmp_path):
    with pytest.raises(ValueError, match=message.replace("{", r"\{")):
        pipeline.pass_option_edits(text)
    model = tmp_path / "m.irk"
    model.write_text(LOGREG)
    with pytest.raises(ValueError, match=message.replace("{", r"\{")):
        irkit.load_model(model, engine="jit", pass_options=text, cache=False)


def test_pass_options_must_be_text(tmp_path):
    model = tmp_path / "m.irk"
    model.write_text(LOGREG)
    with pytest.raises(TypeError, match="pass_options must be a pipeline string"):
        irkit.load_model(model, engine="jit", pass_options={"linalg-matmul-blis": "x"})


def _forward_ir(options: str) -> str:
    from irkit.frontend.dsl import compile_source, model_modules
    models = model_modules(compile_source(LOGREG, "logreg.irk"))
    compiled = compile_models(models, pass_options=options)
    return compiled.entry_modules("logreg", "forward").lowered.text


def test_the_jit_lowers_with_the_options():
    """The JIT's lazily lowered entries get the options too (`CompiledModels.options`)."""
    assert "memory.address" in _forward_ir("")
    assert "memory.address" not in _forward_ir(NO_ALIGN)


def _placed(x: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `x` whose data starts `offset` bytes past a 64-byte boundary."""
    buf = np.empty(x.nbytes + 128, np.uint8)
    start = (offset - buf.ctypes.data) % 64
    out = buf[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


def test_without_the_aligned_start_results_do_not_depend_on_placement(tmp_path, monkeypatch):
    """With align-start=false the loss is the same bits wherever x lies within a vector's 64
    bytes; the compile cache keeps the two compiles apart (another key, not a hit)."""
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "m.irk"
    model.write_text(LOGREG)
    irkit.load_model(model, engine="jit")
    hits = compile_cache.stats["hits"]
    m = irkit.load_model(model, engine="jit", pass_options=NO_ALIGN)
    assert compile_cache.stats["hits"] == hits          # compiled anew, not the first one
    irkit.load_model(model, engine="jit", pass_options=NO_ALIGN)
    assert compile_cache.stats["hits"] == hits + 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 784), dtype=np.float32)
    labels = rng.integers(0, 10, 100).astype(np.int32)
    losses = {offset: m.forward(x=_placed(x, offset), labels=labels)["loss"].tobytes()
              for offset in range(0, 64, 4)}
    assert len(set(losses.values())) == 1, losses
    reference = irkit.load_model(model).forward(x=x, labels=labels)["loss"]
    np.testing.assert_allclose(np.frombuffer(losses[0], np.float32), reference, rtol=1e-5)


def test_partitioned_rows_take_the_options():
    """A model partitioned over ranks lowers by `partition_rows`: the options reach its
    rows too."""
    from irkit.runtime.distributed import partition_passes, partition_rows
    passes = partition_passes(2, 1)
    text = partition_rows(None, "loop", passes, (), NO_ALIGN)
    [blis] = _element(text, "linalg-matmul-blis")
    assert "align-start=false" in blis
    assert passes in text


#: each of 2 ranks trains a step of examples/logreg.irk on its half of the batch, then runs
#: `forward` on the same rows placed at two offsets in a line: with the aligned start off,
#: the same bits
MPI_SCRIPT = """
import sys
import numpy as np
from mpi4py import MPI
from irkit.runtime.model import load_model
path, model, engine, out = sys.argv[1:5]
r = MPI.COMM_WORLD.Get_rank()
m = load_model(path, model=model, engine=engine, data_parallel=2, cache=False,
               pass_options="linalg-matmul-blis{align-start=false}")
rng = np.random.default_rng(r)
x = rng.uniform(size=(8, 784)).astype(np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
m.train_step(x=x, y=y)
outs = []
for offset in (0, 16, 36):
    buf = np.empty(x.nbytes + 128, np.uint8)
    start = (offset - buf.ctypes.data) % 64
    placed = buf[start:start + x.nbytes].view(np.float32).reshape(x.shape)
    placed[...] = x
    outs.append(m.forward(x=placed, y=y)["probs"].tobytes())
assert len(set(outs)) == 1, "placement changed the bits"
open(f"{out}/rank{r}.ok", "w").close()
"""


def test_pass_options_on_mpi_ranks(tmp_path):
    from tests.unit.test_mpi_runtime import _have_mpi, _on_two_ranks
    if not _have_mpi():
        pytest.skip("mpiexec or mpi4py is missing (pip install 'irkit[mpi]')")
    _on_two_ranks(tmp_path, MPI_SCRIPT, "logreg", "jit")
    assert (tmp_path / "rank0.ok").exists() and (tmp_path / "rank1.ok").exists()


def test_profile_compiles_with_the_models_options(tmp_path, monkeypatch):
    """`Model.profile` compiles a timed copy: with the options the model was loaded with."""
    from irkit.runtime import profile as profiling
    seen = []
    real = profiling.lower_model_with_graph

    def spy(module, *args, **kwargs):
        seen.append((kwargs.get("disable"), kwargs.get("pass_options")))
        return real(module, *args, **kwargs)
    monkeypatch.setattr(profiling, "lower_model_with_graph", spy)
    model = tmp_path / "m.irk"
    model.write_text(LOGREG)
    m = irkit.load_model(model, engine="jit", cache=False, pass_options=NO_ALIGN,
                         disable="linalg-fuse")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 784), dtype=np.float32)
    m.profile("forward", repeat=2, x=x, labels=np.zeros(4, np.int32))
    assert seen == [(("linalg-fuse",), NO_ALIGN)]
