"""The schedule tuner (irkit.tools.autotune) and its records (irkit.runtime.tuning): the records, the `blis.configs` attribute that
carries a choice into `linalg-matmul-blis`, the search, and `irkit-compile --autotune`."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irkit  # noqa: F401
from irkit.dialects import register_all
from irkit.frontend.dsl import compile_source, model_modules
from irkit.parser import parse_module
from irkit.printer import print_op
from irkit.runtime import tuning
from irkit.tools import autotune
from irkit.tools.compile import main as compile_main

register_all()

MLP = """
model mlp {
  input x: f32[B, 64]
  input labels: i32[B]
  param w1: f32[64, 96] = normal(std=0.1, seed=1)
  param w2: f32[96, 10] = normal(std=0.1, seed=2)
  loss = cross_entropy(relu(x @ w1) @ w2, labels)
  output loss
  train loss with sgd(lr=0.1)
}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(tmp_path))
    return tmp_path


# ----- records ---------------------------------------------------------------------------------


def test_a_record_is_found_for_its_source_only(cache):
    configs = [{"ordinal": 1, "kc": 128, "mr": 4, "nr": 32}]
    path = tuning.store(MLP, "mlp", {"configs": configs})
    assert path == str(cache / tuning.RECORDS)
    assert tuning.lookup(MLP) == {"mlp": configs}
    assert tuning.lookup(MLP + "\n") == {}                 # another text: other code
    tuning.store(MLP, "other", {"configs": [{"ordinal": 0, "mc": 64}]})
    assert set(tuning.lookup(MLP)) == {"mlp", "other"}     # a second model kept the first


@pytest.mark.parametrize("config", [
    {"kc": 128},                                # no ordinal
    {"ordinal": 0, "kc": 0},                    # not a size
    {"ordinal": 0, "kc": "128"},
    {"ordinal": 0, "unroll": 4},                # not a knob
])
def test_a_malformed_record_is_ignored_whole(cache, config):
    tuning.store(MLP, "mlp", {"configs": [{"ordinal": 1, "kc": 64}, config]})
    assert tuning.lookup(MLP) == {}


def test_an_unreadable_records_file_is_no_records(cache):
    (cache / tuning.RECORDS).write_text("{ not json")
    assert tuning.lookup(MLP) == {}
    (cache / tuning.RECORDS).write_text(json.dumps({"format": "other", "records": {}}))
    assert tuning.lookup(MLP) == {}
    tuning.store(MLP, "mlp", {"configs": [{"ordinal": 0, "kc": 64}]})  # rewritten whole
    assert tuning.lookup(MLP) == {"mlp": [{"ordinal": 0, "kc": 64}]}


def test_no_cache_folder_no_records(monkeypatch):
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    assert tuning.store(MLP, "mlp", {"configs": [{"ordinal": 0, "kc": 64}]}) is None
    assert tuning.lookup(MLP) == {}


# ----- the attribute ---------------------------------------------------------------------------


def test_configs_travel_as_a_module_attribute():
    (module,) = model_modules(compile_source(MLP, "m.irk")).values()
    tuning.set_configs(module, [{"ordinal": 2, "nr": 32, "mr": 4}])
    text = print_op(module)
    assert "blis.configs = [{mr = 4 : i64, nr = 32 : i64, ordinal = 2 : i64}]" in text
    again = parse_module(text)
    assert again.attributes[tuning.ATTRIBUTE] == module.attributes[tuning.ATTRIBUTE]
    tuning.set_configs(module, [])
    assert tuning.ATTRIBUTE not in module.attributes


# ----- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", ["B", "B=0", "B=x", "=4"])
def test_autotune_sizes_are_checked(tmp_path, capsys, sizes):
    src = tmp_path / "m.irk"
    src.write_text(MLP)
    with pytest.raises(SystemExit):
        compile_main([str(src), "--autotune", f"--autotune-sizes={sizes}"])
    assert "expected DIM=N" in capsys.readouterr().err


def test_autotune_is_for_this_cpu(tmp_path, capsys):
    src = tmp_path / "m.irk"
    src.write_text(MLP)
    assert compile_main([str(src), "--autotune", "--target=nvptx", "--emit=ptx"]) == 1
    assert "--autotune tunes one process on this CPU" in capsys.readouterr().err


def test_random_inputs_need_every_symbolic_size():
    from irkit.runtime.model import Model
    (module,) = model_modules(compile_source(MLP, "m.irk")).values()
    m = Model(module)
    batch = autotune.random_inputs(m, {"B": 5})
    assert batch["x"].shape == (5, 64) and batch["x"].dtype == np.float32
    assert batch["labels"].dtype == np.int32 and batch["labels"].max() < 10
    with pytest.raises(ValueError, match="symbolic size.*B.*--autotune-sizes B=128"):
        autotune.random_inputs(m, {})


# ----- the search ------------------------------------------------------------------------------


def test_the_search_keeps_only_clear_wins(cache, monkeypatch):
    """Coordinate descent against a made-up timing: site 0 is 20% faster with kc = 128 and
    1% faster with the second tile (noise: kept out by the margin); site 1 gains nothing."""
    fake = [autotune.Site(0, "m.irk:6:3", "train_step", (128, 96, 512), {"mr": 6, "nr": 64, "mc": 128,
                                                          "kc": 256, "nc": 128},
                        [(6, 64), (4, 32), (8, 48)]),
            autotune.Site(1, "m.irk:6:3", "train_step", (128, 10, 96), {"mr": 8, "nr": 16, "mc": 128,
                                                         "kc": 96, "nc": 16},
                        [(8, 16), (4, 16)])]
    monkeypatch.setattr(autotune, "sites", lambda module: fake)
    seen = []

    def measure(module, name, configs, dims, threads, repeat, cpu="native"):
        seen.append(configs)
        t = 1.0
        for c in configs:
            if c["ordinal"] == 0 and c.get("kc") == 128:
                t *= 0.8
            if c["ordinal"] == 0 and c.get("mr") == 4:
                t *= 0.99
        return t
    monkeypatch.setattr(autotune, "measure", measure)
    lines = []
    result = autotune.autotune(MLP, "m.irk", dims={"B": 128}, progress=lines.append)
    assert result.configs == [{"ordinal": 0, "kc": 128}]
    assert result.baseline_s == 1.0 and result.best_s == pytest.approx(0.8)
    assert result.tried == len(seen) == len(lines)
    assert seen[0] == []                                        # the cost model first
    assert {"ordinal": 1, "mr": 4, "nr": 16} in [c for cfg in seen for c in cfg]
    assert tuning.lookup(MLP) == {"mlp": [{"ordinal": 0, "kc": 128}]}
    table = result.table()
    assert "#0 m.irk:6:3 (MxNxK 128x96x512): mr=6, nr=64, mc=128, kc=128, nc=128 [tuned]" \
        in table
    assert "#1 m.irk:6:3 (MxNxK 128x10x96): mr=8, nr=16, mc=128, kc=96, nc=16 [cost model]" \
        in table


def test_sites_are_sized_for_the_cpu_tuned_for(cache, monkeypatch):
    """`--autotune --cpu=x86-64-v3` reports and tries the sizes of that CPU, not this
    machine's: tiles of vectors of 8 floats whose accumulators, B vectors and broadcast fit
    its 16 registers (AVX-512's 6 x 64 does not); the sites read the module's
    `irkit.target` as the pass does."""
    from irkit.backends.llvm_cpu import cpu_target
    if not cpu_target()["triple"].startswith("x86_64"):
        pytest.skip("x86-64-v3 is an x86-64 level")
    seen = []
    real = autotune.sites
    monkeypatch.setattr(autotune, "sites", lambda module: seen.extend(real(module)) or seen)
    monkeypatch.setattr(autotune, "measure", lambda *args, **kwargs: 1.0)
    autotune.autotune(MLP, "m.irk", dims={"B": 128}, cpu="x86-64-v3", record=False)
    assert seen
    for site in seen:
        for mr, nr in [(site.default["mr"], site.default["nr"]), *site.tiles]:
            assert nr % 8 == 0 and mr * (nr // 8) + nr // 8 + 1 <= 16, (site, mr, nr)


# ----- end to end ------------------------------------------------------------------------------


def _panels(text: str) -> list[str]:
    """The static float32 buffers of a --emit=loop listing, in order: the packed B panels
    (kc x nr), the register tiles' scratch (mr x nr)."""
    import re
    return re.findall(r"memory\.alloc\(\) : (memref<\d+x\d+(?:x\d+)?xf32>)", text)


def test_a_record_changes_what_both_compilers_build(cache, tmp_path, capsys):
    """A record (as --autotune writes) reaches irkit-compile's pipeline and the JIT's, and the
    compiled step still equals the interpreter's."""
    src = tmp_path / "m.irk"
    src.write_text(MLP)
    assert compile_main([str(src), "--emit=loop"]) == 0
    before = _panels(capsys.readouterr().out)
    (module,) = model_modules(compile_source(MLP, str(src))).values()
    site = next(s for s in autotune.sites(module) if s.function == "train_step")
    mr = 4 if site.default["mr"] != 4 else 6       # the scratch tile is mr x nr
    tuning.store(MLP, "mlp", {"configs": [{"ordinal": site.ordinal, "mr": mr}]})
    assert compile_main([str(src), "--emit=loop"]) == 0
    after = _panels(capsys.readouterr().out)
    assert after != before and any(p.startswith(f"memref<{mr}x") and p.count("x") == 2
                                   for p in after)

    batch = {"x": np.random.default_rng(1).normal(size=(48, 64)).astype(np.float32),
             "labels": np.arange(48, dtype=np.int32) % 10}
    jit = irkit.load_model(str(src), engine="jit")
    ref = irkit.load_model(str(src))
    for _ in range(2):
        np.testing.assert_allclose(jit.train_step(**batch)["loss"],
                                   ref.train_step(**batch)["loss"], rtol=1e-5)
    for name in ref.variables:
        np.testing.assert_allclose(jit.variables[name], ref.variables[name], rtol=1e-4,
                                   atol=1e-6)


LAYER = """
model layer {
  input x: f32[B, 64]
  param w: f32[64, 96] = normal(std=0.1, seed=1)
  y = relu(x @ w)
  output y
}
"""


def test_sites_show_the_k_block_the_pass_builds(cache, tmp_path, capsys):
    """A weight gradient's K (the batch) is dynamic and its epilogue (the SGD update) is
    applied at the store: the pass makes its K blocks kc-dynamic long, and the report says
    so; a measured kc is the block all the same."""
    from irkit.passes.linalg_matmul_blis import LinalgMatmulBlis
    (module,) = model_modules(compile_source(MLP, "m.irk")).values()
    grads = [s for s in autotune.sites(module) if s.sizes[2] is None]
    assert grads and all(s.default["kc"] == LinalgMatmulBlis.kc_dynamic for s in grads)
    src = tmp_path / "m.irk"
    src.write_text(MLP)
    step = f"arith.constant {LinalgMatmulBlis.kc_dynamic} : index"    # the K loop's step
    assert compile_main([str(src), "--emit=loop"]) == 0
    assert step in capsys.readouterr().out
    tuning.store(MLP, "mlp", {"configs": [{"ordinal": s.ordinal, "kc": 32} for s in grads]})
    assert compile_main([str(src), "--emit=loop"]) == 0
    assert step not in capsys.readouterr().out


def test_autotune_on_the_command_line(cache, tmp_path, capsys):
    src = tmp_path / "m.irk"
    src.write_text(LAYER)
    out = tmp_path / "m.so"
    assert compile_main([str(src), "--autotune", "--autotune-sizes", "B=64", "-o",
                         str(out)]) == 0
    err = capsys.readouterr().err
    assert "autotune layer:" in err and "(cost model) ->" in err and "[1/" in err
    assert "recorded in" in err and (cache / tuning.RECORDS).exists()
    assert out.exists()
    records = json.loads((cache / tuning.RECORDS).read_text())["records"]
    (models,) = records.values()
    assert models["layer"]["dims"] == {"B": 64} and models["layer"]["best_ms"] > 0


def test_a_gain_that_does_not_hold_up_is_not_recorded(cache, monkeypatch):
    """The first timing of the cost model's schedule was slow (a busy moment): the search
    takes kc = 64, but timed again, alternately, the two are equal: nothing is recorded."""
    fake = [autotune.Site(0, "m.irk:6:3", "train_step", (128, 96, 512),
                          {"mr": 6, "nr": 64, "mc": 128, "kc": 256, "nc": 128}, [(6, 64)])]
    monkeypatch.setattr(autotune, "sites", lambda module: fake)
    calls = []

    def measure(module, name, configs, dims, threads, repeat, cpu="native"):
        calls.append(configs)
        return 1.0 if len(calls) == 1 else 0.8
    monkeypatch.setattr(autotune, "measure", measure)
    result = autotune.autotune(MLP, "m.irk", dims={"B": 128})
    assert calls[-1] == [{"ordinal": 0, "kc": 64}]          # the search took it ...
    assert result.configs == [] and result.best_s == result.baseline_s == 0.8
    assert tuning.lookup(MLP) == {}                          # ... the record has nothing
