"""The persistent compile cache (`irkit.runtime.compile_cache`).

A second load of the same model file hits the cache: the evidence is not timing but that the
pass manager and LLVM, made to fail, are never called, while the results equal the first
load's and the interpreter's. A change of source, option, target or irkit's code misses; a
corrupt entry is ignored and rewritten; `IRKIT_CACHE_DIR` moves the cache and, empty, turns
it off, as `cache=False` and `irkit-compile --no-cache` do. Concurrent writers never leave
a reader half an entry. Every test points the cache at its own `tmp_path` (the suite turns
it off elsewhere: tests/conftest.py).
"""

from __future__ import annotations

import multiprocessing
import os
import warnings

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
import irkit.backends.llvm_cpu as llvm_cpu  # noqa: E402
from irkit.backends.llvm_cpu import ObjectCode, find_c_compiler  # noqa: E402
from irkit.pass_manager import Pass, PassManager  # noqa: E402
from irkit.runtime import compile_cache  # noqa: E402
from irkit.runtime.compiled import (  # noqa: E402
    CompiledModels, Entry, IRText, ModelCode, interface_module, lower_model_with_graph,
)
from irkit.tools.compile import main as compile_main  # noqa: E402

needs_cc = pytest.mark.skipif(find_c_compiler() is None, reason="no C compiler to link with")

TINY = """\
model tiny {
  input x: f32[N, 4]
  input labels: i32[N]
  param w: f32[4, 3] = normal(std=0.5, seed=3)
  param b: f32[3] = zeros
  logits = x @ w + b
  loss = cross_entropy(logits, labels)
  output logits, loss
  train loss with sgd(lr=0.1)
}
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache folder for the test, the process's counters reset."""
    d = tmp_path / "cache"
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(d))
    compile_cache.stats.clear()
    return d


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "tiny.irk"
    path.write_text(TINY)
    return path


def _batch(n: int = 5):
    rng = np.random.default_rng(7)
    return {"x": rng.standard_normal((n, 4)).astype(np.float32),
            "labels": rng.integers(0, 3, n).astype(np.int32)}


def _entries(d) -> list[str]:
    return sorted(f for f in os.listdir(d) if f.endswith(".irkc")) if d.exists() else []


def _forbid_compiling(monkeypatch) -> None:
    """Any run of the pass pipeline or of LLVM fails the test."""
    def fail(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the model")
    monkeypatch.setattr(PassManager, "run", fail)
    monkeypatch.setattr(llvm_cpu, "compile_object", fail)


def _results(model) -> tuple[dict, dict, dict]:
    """forward, one train_step, forward again: the second forward sees the update."""
    batch = _batch()
    return model.forward(**batch), model.train_step(**batch), model.forward(**batch)


def _assert_same(got: tuple, want: tuple, exact: bool = True) -> None:
    for g, w in zip(got, want):
        assert set(g) == set(w)
        for k in w:
            if exact:
                np.testing.assert_array_equal(g[k], w[k])
            else:
                np.testing.assert_allclose(g[k], w[k], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Hits and misses
# ---------------------------------------------------------------------------------------------


def test_second_load_hits_and_runs_neither_passes_nor_llvm(cache_dir, model_file, monkeypatch):
    cold = irkit.load_model(model_file, engine="jit")
    assert dict(compile_cache.stats) == {"misses": 1, "stores": 1}
    assert len(_entries(cache_dir)) == 1
    want = _results(cold)
    _forbid_compiling(monkeypatch)
    warm = irkit.load_model(model_file, engine="jit")
    assert compile_cache.stats["hits"] == 1
    assert warm.inputs == cold.inputs and warm.outputs == cold.outputs
    assert list(warm.variables) == list(cold.variables)
    _assert_same(_results(warm), want)
    monkeypatch.undo()
    # and both are the model: the interpreter (numpy) agrees
    _assert_same(want, _results(irkit.load_model(model_file)), exact=False)


def test_warm_model_shows_the_same_module_and_reports_errors_at_the_model_line(
        cache_dir, model_file, monkeypatch):
    """The run-time error of a warm model (its site read from the cached lowered module)
    is the cold model's: file, line, op and source line."""
    cold = irkit.load_model(model_file, engine="jit")
    _results(cold)                  # its entries compiled, and stored
    _forbid_compiling(monkeypatch)
    warm = irkit.load_model(model_file, engine="jit")
    assert str(warm.module) == str(cold.module)
    bad = {"x": np.zeros((2, 4), np.float32), "labels": np.array([0, 7], np.int32)}
    messages = []
    for model in (cold, warm):
        with pytest.raises(ValueError) as e:
            model.forward(**bad)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert f"{model_file}:7:" in messages[1] and "cross_entropy" in messages[1]


def _record_compiles(monkeypatch) -> list[frozenset]:
    """The `functions` of every `compile_object` call from now on (None: all)."""
    calls, real = [], llvm_cpu.compile_object

    def recorded(*args, **kwargs):
        calls.append(kwargs.get("functions"))
        return real(*args, **kwargs)
    monkeypatch.setattr(llvm_cpu, "compile_object", recorded)
    return calls


def test_each_entry_compiles_on_its_first_call_and_only_its_functions(cache_dir, model_file,
                                                                     monkeypatch):
    """Loading compiles nothing; the first call of an entry lowers and compiles it and what
    it calls, not the other entry, and adds its code to the cache entry."""
    calls = _record_compiles(monkeypatch)
    cold = irkit.load_model(model_file, engine="jit")
    assert calls == [] and dict(compile_cache.stats) == {"misses": 1, "stores": 1}
    batch = _batch()
    cold.train_step(**batch)
    (first,) = calls
    assert "train_step" in first and "forward" not in first
    cold.train_step(**batch)
    assert len(calls) == 1 and compile_cache.stats["stores"] == 2
    cold.forward(**batch)
    assert "forward" in calls[1] and "train_step" not in calls[1]
    assert compile_cache.stats["stores"] == 3


def test_a_warm_start_compiles_only_the_entries_no_process_called(cache_dir, model_file,
                                                                  monkeypatch):
    """An entry written after `train_step` alone was called: a warm load and `train_step`
    run no pass and compile nothing; `forward`, which no process had called, is lowered
    from the cached graph-stage module (passes run) and compiled on its first call, and
    stored; the next load lowers and compiles nothing. Each runs as the cold model does."""
    batch = _batch()
    cold = irkit.load_model(model_file, engine="jit")
    cold.train_step(**batch)
    compile_cache.stats.clear()
    runs, real_run = [], PassManager.run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PassManager, "run", lambda *a, **k: runs.append(1) or real_run(*a, **k))
        calls = _record_compiles(patch)
        warm = irkit.load_model(model_file, engine="jit")
        warm.train_step(**batch)
        assert calls == [] and runs == []
        got = warm.forward(**batch)
        assert len(calls) == 1 and "forward" in calls[0] and runs
        assert dict(compile_cache.stats) == {"hits": 1, "stores": 1}
    want = cold.forward(**batch)
    _assert_same((got,), (want,))
    _forbid_compiling(monkeypatch)
    monkeypatch.setattr(PassManager, "run", lambda *a, **k: pytest.fail("a pass ran"))
    again = irkit.load_model(model_file, engine="jit")
    again.train_step(**batch)
    _assert_same((again.forward(**batch),), (want,))


@pytest.mark.parametrize("option, message", [({"opt_level": 7}, "opt_level must be 0, 1, 2"),
                                             ({"cpu": "pentium"}, "unknown cpu 'pentium'")])
def test_a_bad_option_is_refused_at_load_not_at_the_first_call(model_file, option, message):
    """Compiling on the first call must not defer the options' check: the load raises."""
    from irkit.runtime.compiled import compile_models
    from irkit.frontend.dsl import compile_source, model_modules
    models = model_modules(compile_source(TINY, str(model_file)))
    with pytest.raises(ValueError, match=message):
        compile_models(models, **option)
    if "opt_level" in option:
        with pytest.raises(ValueError, match=message):
            irkit.load_model(model_file, engine="jit", cache=False, **option)


def test_what_decides_the_result_is_in_the_key(cache_dir, model_file, monkeypatch):
    """Each change misses and adds an entry: the source text, the opt level, irkit's version,
    irkit's code, the target CPU; the same request again hits."""
    irkit.load_model(model_file, engine="jit")
    model_file.write_text(TINY.replace("lr=0.1", "lr=0.2"))
    irkit.load_model(model_file, engine="jit")
    irkit.load_model(model_file, engine="jit", opt_level=1)
    monkeypatch.setattr(compile_cache, "VERSION", "0.0.0-other")
    irkit.load_model(model_file, engine="jit")
    monkeypatch.setattr(compile_cache, "_fingerprint", "edited-code")
    irkit.load_model(model_file, engine="jit")
    target = dict(llvm_cpu.host_target(), features="+other")
    monkeypatch.setattr(llvm_cpu, "cpu_target", lambda cpu="native": target)
    irkit.load_model(model_file, engine="jit")
    assert compile_cache.stats["misses"] == 6 and "hits" not in compile_cache.stats
    assert len(_entries(cache_dir)) == 6
    irkit.load_model(model_file, engine="jit")
    assert compile_cache.stats["hits"] == 1


def test_request_fields_name_every_input_of_a_compile(model_file):
    fields = compile_cache.request_fields(TINY, "tiny.irk", "*", jit=True,
                                          options={"opt_level": 2})
    assert fields["irkit"] == irkit.__version__
    assert fields["target"] == llvm_cpu.host_target()
    assert fields["llvmlite"] and fields["llvm"] and fields["irkit_code"]
    other = compile_cache.request_fields(TINY, "other.irk", "*", jit=True,
                                         options={"opt_level": 2})
    assert compile_cache.entry_key(fields) != compile_cache.entry_key(other)
    assert fields["numpy"] == np.__version__    # its generators drew the kept values


def _walk_digest(root) -> str:
    """`code_fingerprint`'s digest of one folder, as `os.walk` visits it (the reference)."""
    import hashlib
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith((".py", ".lark")):
                st = os.stat(os.path.join(folder, f))
                h.update(f"{os.path.relpath(os.path.join(folder, f), root)}:"
                         f"{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def test_the_code_fingerprint_walks_sources_as_os_walk_does(tmp_path):
    """Nested folders in name order, `__pycache__` and other files left out, a linked folder
    not entered; an edited file changes the digest."""
    import hashlib
    root = tmp_path / "pkg"
    for rel in ("a.py", "z.lark", "b/c.py", "b/d/e.py", "b2/f.py", "__pycache__/x.py",
                "notes.txt", "b/g.pyc"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "link").symlink_to(root / "b")

    def digest() -> str:
        h = hashlib.sha256()
        compile_cache._hash_sources(h, str(root), "")
        return h.hexdigest()
    before = digest()
    assert before == _walk_digest(root)
    (root / "b" / "d" / "e.py").write_text("edited")
    assert digest() == _walk_digest(root) != before


def test_a_warm_start_imports_neither_front_end_nor_passes_nor_the_generators(
        cache_dir, model_file):
    """A fresh process that finds the model in the cache runs it without importing the DSL
    front end (or lark), any pass, the memory dialect or numpy's random generators (the
    entry keeps the drawn initial values), and without parsing the model's graph module
    for `Model.module` until asked."""
    import json
    import subprocess
    import sys
    irkit.load_model(model_file, engine="jit").train_step(**_batch())    # compiled, stored
    code = f"""
import json, sys
import numpy as np
import irkit
m = irkit.load_model({str(model_file)!r}, engine="jit")
out = m.train_step(x=np.ones((5, 4), np.float32), labels=np.zeros(5, np.int32))
parsed = type(m._engine._module).__name__
print(json.dumps({{"modules": sorted(sys.modules), "parsed": parsed,
                  "loss": float(out["loss"])}}))
"""
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    loaded = [m for m in got["modules"] if m == "lark" or m.startswith(
        ("irkit.frontend", "irkit.dialects.memory", "numpy.random", "lark."))
        or (m.startswith("irkit.passes.") and m != "irkit.passes.pipeline")]
    assert loaded == []
    assert got["parsed"] == "IRText"
    want = irkit.load_model(model_file).train_step(x=np.ones((5, 4), np.float32),
                                                   labels=np.zeros(5, np.int32))
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-5)


def test_the_entry_keeps_the_drawn_initial_values(cache_dir, model_file, monkeypatch):
    """The random initial values are kept (the zeros are not) and a warm model starts from
    them without drawing, equal to dev mode's; past `MAX_VALUE_BYTES` they are drawn at
    load again, with the same result."""
    from irkit.dialects.graph import base as graph_base
    cold = irkit.load_model(model_file, engine="jit")
    (name,) = _entries(cache_dir)
    fields = compile_cache.request_fields(TINY, str(model_file), "*", jit=True,
                                          options={"opt_level": 2, "disable": []})
    entry = compile_cache._decode((cache_dir / name).read_bytes(), fields)
    kept = entry.models["tiny"].initial_values
    assert sorted(kept) == ["w"]
    dev = irkit.load_model(model_file)
    real_initial_value = graph_base.initial_value

    def no_random(init, *args):
        assert init in ("zeros", "ones", "constant"), f"drew {init} again"
        return real_initial_value(init, *args)
    with monkeypatch.context() as patched:
        patched.setattr(graph_base, "initial_value", no_random)
        warm = irkit.load_model(model_file, engine="jit")
        assert compile_cache.stats["hits"] == 1
        for model in (warm, cold):
            assert list(model.variables) == list(dev.variables)
            for v in dev.variables:
                np.testing.assert_array_equal(model.variables[v], dev.variables[v])
        # each load starts from its own copy: a step of one leaves the next load's start
        warm.train_step(**_batch())
        again = irkit.load_model(model_file, engine="jit")
        np.testing.assert_array_equal(again.variables["w"], dev.variables["w"])
        assert not np.array_equal(warm.variables["w"], dev.variables["w"])
    monkeypatch.setattr(compile_cache, "MAX_VALUE_BYTES", 0)
    small = irkit.load_model(model_file, engine="jit", opt_level=1)
    (entry_1,) = set(_entries(cache_dir)) - {name}
    fields_1 = dict(fields, options={"opt_level": 1, "disable": []})
    assert compile_cache._decode((cache_dir / entry_1).read_bytes(),
                                 fields_1).models["tiny"].initial_values is None
    np.testing.assert_array_equal(small.variables["w"], dev.variables["w"])


# ---------------------------------------------------------------------------------------------
# Unsound entries
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_corrupt_entry_is_recompiled_and_rewritten(cache_dir, model_file, damage):
    want = _results(irkit.load_model(model_file, engine="jit"))
    (name,) = _entries(cache_dir)
    path = cache_dir / name
    data = path.read_bytes()
    path.write_bytes({"truncate": data[:len(data) // 2],
                      "flip": data[:-100] + bytes([data[-100] ^ 1]) + data[-99:],
                      "garbage": b"\x7fELF not an entry",
                      "empty": b""}[damage])
    compile_cache.stats.clear()
    _assert_same(_results(irkit.load_model(model_file, engine="jit")), want)
    # stored after the lowering, then with each entry's code on its first call
    assert dict(compile_cache.stats) == {"rejected": 1, "misses": 1, "stores": 3}
    assert _entries(cache_dir) == [name]
    irkit.load_model(model_file, engine="jit")
    assert compile_cache.stats["hits"] == 1


def test_an_entry_for_another_request_is_not_used(cache_dir, model_file):
    """An entry file whose recorded request differs (copied or renamed over another's
    name) is rejected, not trusted."""
    irkit.load_model(model_file, engine="jit")
    irkit.load_model(model_file, engine="jit", opt_level=1)
    a, b = (cache_dir / n for n in _entries(cache_dir))
    a.write_bytes(b.read_bytes())
    compile_cache.stats.clear()
    irkit.load_model(model_file, engine="jit")
    irkit.load_model(model_file, engine="jit", opt_level=1)
    assert compile_cache.stats["rejected"] == 1 and compile_cache.stats["hits"] == 1


# ---------------------------------------------------------------------------------------------
# Where, and switching it off
# ---------------------------------------------------------------------------------------------


def test_cache_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("IRKIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.cache_directory() == str(tmp_path / "xdg" / "irkit")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile_cache.cache_directory() == str(tmp_path / "home" / ".cache" / "irkit")
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(tmp_path / "moved"))
    assert compile_cache.cache_directory() == str(tmp_path / "moved")
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    assert compile_cache.cache_directory() is None


def test_empty_cache_dir_and_cache_false_bypass_it(cache_dir, model_file, monkeypatch):
    irkit.load_model(model_file, engine="jit", cache=False)
    assert not cache_dir.exists() and not compile_cache.stats
    irkit.load_model(model_file, engine="jit")
    irkit.load_model(model_file, engine="jit", cache=False)     # compiles, though cached
    assert dict(compile_cache.stats) == {"misses": 1, "stores": 1}
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    _forbid_compiling(monkeypatch)
    with pytest.raises(AssertionError, match="compiled although"):
        irkit.load_model(model_file, engine="jit")


def test_an_unwritable_cache_warns_and_compiles(tmp_path, model_file, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(RuntimeWarning, match="cannot write the compile cache entry"):
        model = irkit.load_model(model_file, engine="jit")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # once is enough: the entries' code is not tried
        assert set(model.forward(**_batch())) == {"logits", "loss"}


# ---------------------------------------------------------------------------------------------
# irkit-compile
# ---------------------------------------------------------------------------------------------


@needs_cc
def test_irkit_compile_links_a_library_from_the_cache(cache_dir, model_file, tmp_path,
                                                      monkeypatch):
    assert compile_main([str(model_file), "-o", str(tmp_path / "a.so")]) == 0
    assert dict(compile_cache.stats) == {"misses": 1, "stores": 1}
    _forbid_compiling(monkeypatch)
    assert compile_main([str(model_file), "-o", str(tmp_path / "b.so")]) == 0
    assert compile_cache.stats["hits"] == 1
    monkeypatch.undo()
    want = _results(irkit.load_model(model_file))
    _assert_same(_results(irkit.load(tmp_path / "b.so")), want, exact=False)
    _assert_same(_results(irkit.load(tmp_path / "a.so")), _results(irkit.load(tmp_path /
                                                                               "b.so")))


def test_irkit_compile_object_from_the_cache_is_the_compiled_one(cache_dir, model_file,
                                                                 tmp_path):
    """`--emit=obj` twice (miss, then hit) and with --no-cache: the same bytes; --no-cache
    neither reads nor writes the cache."""
    outs = []
    for i, extra in enumerate([[], [], ["--no-cache"]]):
        out = tmp_path / f"m{i}.o"
        assert compile_main([str(model_file), "--emit=obj", "-o", str(out), *extra]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] == outs[2]
    assert dict(compile_cache.stats) == {"misses": 1, "stores": 1, "hits": 1}
    assert len(_entries(cache_dir)) == 1


def test_irkit_compile_no_cache_and_observed_pipelines_bypass_it(cache_dir, model_file,
                                                                 tmp_path, capsys):
    """--no-cache, and flags that watch the pipeline run (here --mlir-timing, whose report
    then times the passes), neither read nor write the cache."""
    assert compile_main([str(model_file), "--emit=obj", "-o", str(tmp_path / "m.o"),
                         "--no-cache"]) == 0
    assert compile_main([str(model_file), "--emit=obj", "-o", str(tmp_path / "m.o"),
                         "--mlir-timing"]) == 0
    assert "(canonicalize)" in capsys.readouterr().err
    assert not cache_dir.exists() and not compile_cache.stats


def test_irkit_compile_names_an_unknown_model(cache_dir, model_file, tmp_path, capsys):
    assert compile_main([str(model_file), "--model", "nope", "--emit=obj",
                         "-o", str(tmp_path / "m.o")]) == 1
    assert "no model 'nope'" in capsys.readouterr().err
    assert not _entries(cache_dir)


# ---------------------------------------------------------------------------------------------
# The entry file and the interface module
# ---------------------------------------------------------------------------------------------


def _fake_compiled(size: int) -> CompiledModels:
    texts = {k: IRText(text=f"// {k} {size}") for k in ("module", "graph", "lowered",
                                                          "interface")}
    data = bytes([size % 251]) * size          # in two object files, as two partitions
    return CompiledModels(ObjectCode((data[:size // 3], data[size // 3:]), ("expf",), {}),
                          {"m": ModelCode("m", "", **texts)}, True)


def _writer(path: str, fields: dict, seed: int) -> None:
    for i in range(30):
        size = 1000 + (seed * 7919 + i * 104729) % 300000
        compile_cache._write(path, compile_cache._encode(fields, _fake_compiled(size)))


def test_concurrent_writers_never_leave_half_an_entry(tmp_path):
    """Four processes rewrite one entry with entries of different sizes while this one reads
    it: every read is a whole, sound entry (the rename is atomic), and no temporary is left."""
    fields = {"format": compile_cache.FORMAT, "test": "concurrency"}
    path = str(tmp_path / "e.irkc")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, fields, s)) for s in range(4)]
    for p in procs:
        p.start()
    reads = 0
    while any(p.is_alive() for p in procs):
        if os.path.exists(path):
            with open(path, "rb") as f:
                got = compile_cache._decode(f.read(), fields)
            assert got is not None
            data = b"".join(got.code.objects)
            size = len(data)
            assert data == bytes([size % 251]) * size and len(got.code.objects) == 2
            assert got.models["m"].lowered.text == f"// lowered {size}"
            reads += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert reads > 0
    assert os.listdir(tmp_path) == ["e.irkc"]


def test_interface_module_describes_the_calls_as_the_lowered_module_does(model_file):
    """The interface (bodies reduced to returns), printed and parsed back, gives each
    function the lowered module's calling convention; it is a small fraction of its text."""
    from irkit.frontend.dsl import compile_file, model_modules
    _, lowered = lower_model_with_graph(model_modules(compile_file(str(model_file)))["tiny"])
    face = IRText(text=IRText(interface_module(lowered)).text).op
    full = {e.name: e for e in map(Entry, _bodies(lowered))}
    seen = {e.name: e for e in map(Entry, _bodies(face))}
    assert set(seen) == set(full) and {"forward", "train_step"} <= set(full)
    for name, e in full.items():
        assert (seen[name].inputs, seen[name].outputs, seen[name].variables,
                seen[name].order) == (e.inputs, e.outputs, e.variables, e.order)
    assert face.attributes == lowered.attributes
    assert len(IRText(face).text) * 5 < len(IRText(lowered).text)


def _bodies(module) -> list:
    return [fn for fn in module.regions[0].blocks[0].ops
            if fn.name == "func.func" and fn.regions[0].blocks
            and "graph.output_sizes_of" not in fn.attributes]


def test_dsl_parser_tables_are_cached_and_a_bad_file_is_rebuilt(cache_dir, tmp_path,
                                                                 monkeypatch):
    """The DSL's LALR tables are kept beside the package (a fresh process skips building
    them, whatever its cache folder); a damaged file is rebuilt, and the parser parses the
    same either way. No temporary is left behind."""
    from irkit.frontend.dsl import syntax
    beside = tmp_path / "package"
    monkeypatch.setattr(syntax, "TABLES_BESIDE", str(beside))
    build = syntax._parser.__wrapped__
    want = build().parse(TINY)
    (table,) = os.listdir(beside)
    assert table.startswith("dsl-grammar-") and table.endswith(".lark")
    assert not cache_dir.exists() or not os.listdir(cache_dir)
    assert build().parse(TINY) == want
    (beside / table).write_bytes(b"damaged")
    assert build().parse(TINY) == want
    assert (beside / table).read_bytes() != b"damaged"
    assert os.listdir(beside) == [table]


def test_dsl_parser_tables_go_to_the_cache_folder_where_the_package_is_read_only(
        cache_dir, tmp_path, monkeypatch):
    """A package folder that cannot be written (a system install) leaves the tables to the
    user's cache folder; `IRKIT_CACHE_DIR` set empty keeps none anywhere."""
    from irkit.frontend.dsl import syntax
    beside = tmp_path / "package"
    beside.mkdir()
    monkeypatch.setattr(syntax, "TABLES_BESIDE", str(beside))
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(beside))
    build = syntax._parser.__wrapped__
    want = build().parse(TINY)
    assert os.listdir(beside) == []
    (table,) = [f for f in os.listdir(cache_dir) if f.startswith("dsl-grammar-")]
    assert build().parse(TINY) == want
    monkeypatch.undo()
    monkeypatch.setattr(syntax, "TABLES_BESIDE", str(beside))
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    assert build().parse(TINY) == want
    assert os.listdir(beside) == []


# ---------------------------------------------------------------------------------------------
# Verification by row
# ---------------------------------------------------------------------------------------------


class _BreakTerminator(Pass):
    """Moves the first function's terminator to the front of its body (invalid IR)."""

    name = "test-break-terminator"

    def run(self, op) -> None:
        fn = next(f for f in op.regions[0].blocks[0].ops
                  if f.name == "func.func" and f.regions[0].blocks)
        ops = list(fn.regions[0].blocks[0].ops)
        ops[-1].move_before(ops[0])


def test_by_row_verification_names_the_row_whose_passes_broke_the_ir(monkeypatch):
    """Users' compiles verify after each row of the pipeline table, not each pass: a row
    that leaves the IR broken is reported, with the row and its passes named."""
    from irkit.diagnostics import IRError
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.passes import pipeline
    from irkit.runtime import compiled
    monkeypatch.setattr(compiled, "VERIFY_EACH_PASS", False)

    def make_pm(start, stop):
        pm = pipeline.pass_manager(start, stop, verify_each=False)
        if stop == "loop":
            pm.add(_BreakTerminator())
        return pm
    module = model_modules(compile_source(TINY, "tiny.irk"))["tiny"]
    with pytest.raises(IRError) as e:
        lower_model_with_graph(module, make_pm)
    text = e.value.render()
    assert "'func.return' op must be the last operation in the parent block" in text
    assert "after the passes of the pipeline row 'loop' (bufferize" in text
    # the same pipeline without the broken pass verifies, row by row
    assert lower_model_with_graph(module)[1].name == "builtin.module"


def test_the_least_recently_used_entries_go_past_the_size_limit(cache_dir, monkeypatch):
    """Past `MAX_BYTES` a store evicts the least recently used entries (a hit counts as a
    use) down to three quarters of it; stale temporaries go too, fresh ones stay."""
    import time
    monkeypatch.setattr(compile_cache, "MAX_BYTES", 350_000)
    now = time.time()

    def path_of(name: str):
        fields = compile_cache.request_fields(name, "m.irk", "*", jit=True, options={})
        return cache_dir / (compile_cache.entry_key(fields) + ".irkc")

    def store(name: str, age: float) -> None:
        compile_cache.cached_compile(name, "m.irk", "*", lambda: _fake_compiled(100_000),
                                     jit=True, options={})
        os.utime(path_of(name), (now - age, now - age))
    store("a", 300)
    store("b", 200)
    store("c", 100)
    compile_cache.cached_compile("a", "m.irk", "*", None, jit=True, options={})   # a hit
    (cache_dir / ".tmp-old.irkc").write_bytes(b"x")
    os.utime(cache_dir / ".tmp-old.irkc", (now - 7200, now - 7200))
    (cache_dir / ".tmp-new.irkc").write_bytes(b"x")
    store("d", 0)
    # 4 entries of 100 kB > 350 kB: b (the oldest use), then c go, down to 262 kB
    assert [n for n in "abcd" if path_of(n).exists()] == ["a", "d"]
    assert not (cache_dir / ".tmp-old.irkc").exists()
    assert (cache_dir / ".tmp-new.irkc").exists()
