"""The road from a model file to machine code: `engine="jit"` against the interpreter, the
shared library with its header and sidecar metadata, and irkit-compile's machine stages."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import irkit
from irkit.runtime.model import Model
from irkit.tools.compile import main as compile_main

pytest.importorskip("llvmlite")

ROOT = Path(__file__).resolve().parents[2]
LOGREG = ROOT / "examples" / "logreg.irk"
HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


def _batch(n=7, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    return {"x": x, "y": y}


@pytest.fixture(scope="module")
def jit_model():
    return irkit.load_model(LOGREG, engine="jit")


def test_jit_forward_and_training_match_the_interpreter():
    dev = irkit.load_model(LOGREG)
    jit = irkit.load_model(LOGREG, engine="jit")
    assert jit.engine == "jit" and [s.name for s in jit.inputs] == ["x", "y"]
    assert jit.outputs == dev.outputs == ["probs", "loss"]
    for step in range(5):
        b = _batch(seed=step)
        ld, lj = dev.train_step(**b)["loss"], jit.train_step(**b)["loss"]
        np.testing.assert_allclose(lj, ld, rtol=1e-5, atol=1e-6)
    for name in dev.variables:
        np.testing.assert_allclose(jit.variables[name], dev.variables[name], atol=1e-5)
    b = _batch(n=3, seed=9)
    fd, fj = dev.forward(**b), jit.forward(**b)
    assert fj["probs"].shape == (3, 10) and fj["loss"].shape == ()
    for k in fd:        # sums reassociated: a loss of 59 differs in its last few bits
        np.testing.assert_allclose(fj[k], fd[k], rtol=1e-5, atol=1e-5)


def test_jit_variables_are_initialized_like_dev_mode():
    src = """
model lin {
  input x: f32[N, 3]
  param w: f32[3, 2] = normal(seed=7, std=0.5)
  param c: f32[2] = constant(0.25)
  y = x @ w + c
  output y
}
"""
    from irkit.frontend.dsl import compile_source, model_modules
    mod = model_modules(compile_source(src, "lin.irk"))["lin"]
    dev, jit = Model(mod), Model(mod, engine="jit")
    for n in dev.variables:
        np.testing.assert_array_equal(jit.variables[n], dev.variables[n])
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(jit.forward(x=x)["y"], dev.forward(x=x)["y"], rtol=1e-6)
    jit.variables["c"] = np.ones(2)
    np.testing.assert_allclose(jit.forward(x=x)["y"], x @ jit.variables["w"] + 1, rtol=1e-6)


def test_save_restore_round_trip_across_engines(tmp_path, jit_model):
    jit_model.train_step(**_batch())
    path = tmp_path / "vars.npz"
    jit_model.save(path)
    dev = irkit.load_model(LOGREG)
    dev.restore(path)
    for n in dev.variables:
        np.testing.assert_array_equal(dev.variables[n], jit_model.variables[n])
    fresh = irkit.load_model(LOGREG, engine="jit")
    fresh.restore(path)
    b = _batch(n=2, seed=3)
    np.testing.assert_array_equal(fresh.forward(**b)["probs"], jit_model.forward(**b)["probs"])
    np.savez(tmp_path / "bad.npz", W=np.zeros((784, 10), np.float32))
    with pytest.raises(ValueError, match="missing b"):
        fresh.restore(tmp_path / "bad.npz")


@pytest.mark.parametrize("bad, message", [
    ({"x": np.zeros((3, 5), np.float32)}, r"input 'x' expects f32\[N, 784\]"),
    ({"y": np.zeros((4, 10), np.float32)}, r"dimension N is 3 in input 'x' but 4 in input 'y'"),
    ({"x": np.zeros((3,), np.float32)}, r"input 'x'"),
])
def test_wrong_shapes_raise_value_error_naming_the_input(jit_model, bad, message):
    b = {"x": np.zeros((3, 784), np.float32), "y": np.zeros((3, 10), np.float32)}
    b.update(bad)
    with pytest.raises(ValueError, match=message):
        jit_model.forward(**b)


def test_unknown_engine_is_an_error():
    with pytest.raises(ValueError, match="unknown engine 'gpu'"):
        irkit.load_model(LOGREG, engine="gpu")


def test_output_dims_are_derived_from_the_inputs():
    from irkit.frontend.dsl import compile_file, model_modules
    from irkit.runtime.shapes import output_dims
    mod = model_modules(compile_file(str(LOGREG)))["logreg"]
    fn = next(op for op in mod.regions[0].blocks[0].ops if op.name == "func.func")
    assert output_dims(fn) == [["N", 10], []]


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    if not HAS_CC:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("lib")
    assert compile_main([str(LOGREG), "-o", str(d / "logreg.so")]) == 0
    return d


def test_shared_library_matches_the_interpreter(library):
    assert {p.name for p in library.iterdir()} >= {"logreg.so", "logreg.h", "logreg.so.json"}
    lib = irkit.load(library / "logreg.so", model="logreg")
    dev = irkit.load_model(LOGREG)
    assert lib.engine == "shared" and lib.outputs == ["probs", "loss"]
    for step in range(3):
        b = _batch(seed=step)
        np.testing.assert_allclose(lib.train_step(**b)["loss"], dev.train_step(**b)["loss"],
                                   rtol=1e-5, atol=1e-6)
    b = _batch(n=4, seed=7)
    fd, fl = dev.forward(**b), lib.forward(**b)
    for k in fd:        # the library sums in f64, the interpreter in float32: rtol, not atol
        np.testing.assert_allclose(fl[k], fd[k], rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="input 'x'"):
        lib.forward(x=np.zeros((2, 3), np.float32), y=np.zeros((2, 10), np.float32))


def test_header_compiles_and_declares_the_abi(library):
    text = (library / "logreg.h").read_text()
    assert "void logreg_forward(irkit_memref_f32_2d *x, irkit_memref_f32_2d *y, " \
           "irkit_memref_f32_2d *probs, irkit_memref_f32_0d *loss, irkit_memref_f32_2d *W, " \
           "irkit_memref_f32_1d *b);" in text
    assert "input     x: f32[N, 784]" in text and "output 0  probs: f32[N, 10]" in text
    assert "NOT checked" in text and "irkit_last_error" in text
    cc = next(shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c))
    for std in ("-std=c99", "-std=c11"):
        proc = subprocess.run([cc, "-fsyntax-only", "-Wall", "-Werror", std, "-x", "c",
                               str(library / "logreg.h")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


class _Desc2(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * 2),
                ("strides", ctypes.c_int64 * 2)]


class _Desc1(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * 1),
                ("strides", ctypes.c_int64 * 1)]


class _Desc0(ctypes.Structure):
    _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                ("offset", ctypes.c_int64)]


def _desc(a):
    cls = {0: _Desc0, 1: _Desc1, 2: _Desc2}[a.ndim]
    p = a.ctypes.data
    d = cls(p, p, 0)
    for k in range(a.ndim):
        d.sizes[k] = a.shape[k]
        d.strides[k] = a.strides[k] // a.itemsize
    return d


def test_checked_entry_points_report_bad_shapes(library):
    lib = ctypes.CDLL(str(library / "logreg.so"))
    lib.irkit_last_error.restype = ctypes.c_char_p
    fwd = lib.logreg_forward_checked
    fwd.restype = ctypes.c_int
    W, b = np.zeros((784, 10), np.float32), np.zeros(10, np.float32)
    x, y = _batch(n=3)["x"], _batch(n=3)["y"]
    probs, loss = np.empty((3, 10), np.float32), np.empty((), np.float32)
    ds = [_desc(a) for a in (x, y, probs, loss, W, b)]
    assert fwd(*map(ctypes.byref, ds)) == 0
    np.testing.assert_allclose(probs, 0.1, rtol=1e-6)
    bad_y = np.zeros((4, 10), np.float32)
    ds[1] = _desc(bad_y)
    assert fwd(*map(ctypes.byref, ds)) != 0
    assert b"dimension N is 3 in 'x' but 4 in 'y'" in lib.irkit_last_error()
    ds[1] = _desc(y)
    ds[4] = _desc(np.zeros((10, 784), np.float32))
    assert fwd(*map(ctypes.byref, ds)) != 0
    assert b"'W' axis 0 is 10, expected 784" in lib.irkit_last_error()


@pytest.mark.parametrize("emit, marker", [
    ("loop", "memory."), ("llvm", "define void @logreg_forward("),
    ("asm", "logreg_train_step:"),
])
def test_machine_stages(tmp_path, emit, marker):
    out = tmp_path / f"out.{emit}"
    assert compile_main([str(LOGREG), f"--emit={emit}", "-O1", "-o", str(out)]) == 0
    text = out.read_text()
    assert marker in text
    assert "graph." not in text.replace("graph.dims", "").replace("graph.name", "") \
        .replace("graph.output", "").replace("graph.variable", "").replace("graph.optimizer", "")


def test_obj_stage_writes_an_object_file(tmp_path):
    out = tmp_path / "m.o"
    assert compile_main([str(LOGREG), "--emit=obj", "-O0", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:4] in (b"\x7fELF", b"\xcf\xfa\xed\xfe")


def test_gate_model_compiles_and_takes_either_branch():
    """The DSL's `if` is switch/merge; the runtime pipeline raises it to graph.if, which
    lowers to loop.if: only the taken branch runs, and either gives the interpreter's result."""
    gate = ROOT / "examples" / "gate.irk"
    dev, jit = irkit.load_model(gate), irkit.load_model(gate, engine="jit")
    rng = np.random.default_rng(4)
    x, y, z = (rng.normal(size=6).astype(np.float32) for _ in range(3))
    for a, b in ((x - 10, y), (x, y - 10)):            # sum(x) < sum(y), then the other way
        want = a + z if a.sum() < b.sum() else b * b
        got = jit.forward(x=a, y=b, z=z)["out"]
        np.testing.assert_allclose(got, want, rtol=1e-6)
        np.testing.assert_allclose(got, dev.forward(x=a, y=b, z=z)["out"], rtol=1e-6)


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_mlp_library_trains_like_dev_mode(tmp_path):
    """Twenty Adam steps of the MLP on digits-sized batches from the compiled .so and in the
    interpreter: the losses and every variable (Adam's moments included) agree to 1e-5."""
    mlp = ROOT / "examples" / "mlp.irk"
    assert compile_main([str(mlp), "-o", str(tmp_path / "mlp.so")]) == 0
    lib, dev = irkit.load(tmp_path / "mlp.so"), irkit.load_model(mlp)
    assert set(lib.variables) == set(dev.variables)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.random((32, 64)).astype(np.float32) * 16
        labels = rng.integers(0, 10, 32).astype(np.int32)
        np.testing.assert_allclose(lib.train_step(x=x, labels=labels)["loss"],
                                   dev.train_step(x=x, labels=labels)["loss"], rtol=1e-5)
    for name in dev.variables:
        np.testing.assert_allclose(lib.variables[name], dev.variables[name], rtol=1e-5,
                                   atol=1e-5, err_msg=name)


def test_output_shape_from_the_shape_functions_on_actual_sizes():
    """`x[:, 0]` of a `?` axis then a reshape: no symbolic shape, but the graph ops' shape
    functions on the call's sizes give it."""
    from irkit.frontend.dsl import compile_source, model_modules
    src = """
model first {
  input x: f32[B, T, 4]
  y = x[:, 0]
  output y
}
"""
    mod = model_modules(compile_source(src, "first.irk"))["first"]
    jit = Model(mod, engine="jit")         # a missing lowering is a failure, never a skip
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = jit.forward(x=x)["y"]
    np.testing.assert_array_equal(out, Model(mod).forward(x=x)["y"])
    assert out.shape == (2, 4)


def test_a_missing_lowering_is_an_error_not_a_skip():
    """An op the pipeline cannot lower makes a JIT model's first call raise an IRError
    naming it (the JIT lowers an entry then, as `jax.jit` traces it: so a test that runs a
    JIT model fails on it), and no test in the suite catches a lowering error to skip: such
    a skip would hide a regression as a skip."""
    import ast
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.parser import parse_module
    from irkit.printer import print_op
    src = "model m {\n  input x: f32[N, 3]\n  y = exp(x)\n  output y\n}\n"
    text = print_op(model_modules(compile_source(src, "m.irk"))["m"], generic=True)
    bad = parse_module(text.replace('"graph.exp"', '"test.no_lowering"'), "m.mlir",
                       allow_unregistered=True)
    model = Model(bad, engine="jit")
    with pytest.raises(irkit.IRError, match="cannot bufferize 'test.no_lowering': no rule"):
        model.forward(x=np.zeros((2, 3), np.float32))
    skips = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.ExceptHandler) and node.type is not None
                    and "Error" in ast.unparse(node.type)
                    and "ImportError" not in ast.unparse(node.type)):
                continue
            for inner in ast.walk(ast.Module(body=node.body, type_ignores=[])):
                if isinstance(inner, ast.Call) and \
                        ast.unparse(inner.func) in ("pytest.skip", "pytest.xfail"):
                    skips.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert not skips, f"an error turned into a skip at {skips}"


def test_obj_is_not_written_to_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert compile_main([str(LOGREG), "--emit=obj", "-O0"]) == 1
    assert "refusing to write an object file to a terminal" in capsys.readouterr().err


def test_library_of_two_models(tmp_path):
    if not HAS_CC:
        pytest.skip("no C compiler")
    src = tmp_path / "two.irk"
    src.write_text("model a {\n  input x: f32[N, 3]\n  y = exp(x)\n  output y\n}\n"
                   "model b {\n  input x: f32[2, M]\n  y = sum(x, axis=0)\n  output y\n}\n")
    assert compile_main([str(src), "-o", str(tmp_path / "two.so")]) == 0
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    a = irkit.load(tmp_path / "two.so", model="a")
    np.testing.assert_allclose(a.forward(x=x)["y"], np.exp(x), rtol=1e-6)
    b = irkit.load(tmp_path / "two.so", model="b")
    np.testing.assert_allclose(b.forward(x=x)["y"], x.sum(axis=0), rtol=1e-6)
    with pytest.raises(ValueError, match="choose one with model="):
        irkit.load(tmp_path / "two.so")
    os.remove(tmp_path / "two.so.json")
    with pytest.raises(ValueError, match="metadata"):
        irkit.load(tmp_path / "two.so", model="a")


def test_verify_each_numeric_names_a_miscompiling_pass(tmp_path, monkeypatch, capsys):
    """`irkit-compile --verify-each=numeric` interprets every function around each pass of
    the compile pipeline; a pass slipped into it that turns an addf into a subf (on the
    lowered loops, so the check compares buffer contents) is named, with a reproducer."""
    import dataclasses
    import importlib.util
    from irkit.passes import pipeline
    spec = importlib.util.spec_from_file_location(
        "irkit_test_plugin_passes", ROOT / "tests" / "plugins" / "testing_passes.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))     # registers test passes
    src = tmp_path / "m.irk"
    src.write_text("model m {\n  input x: f32[N, 3]\n  y = x + x\n  output y\n}\n")
    args = [str(src), "--emit=llvm", "-o", str(tmp_path / "m.ll"), "--verify-each=numeric",
            "--numeric-reproducer", str(tmp_path / "repro.mlir")]
    assert compile_main(args) == 0
    stages = [dataclasses.replace(s, passes=s.passes + ",test-miscompile") if s.name == "loop"
              else s for s in pipeline.STAGES]
    monkeypatch.setattr(pipeline, "STAGES", tuple(stages))
    capsys.readouterr()
    assert compile_main(args) == 1
    err = capsys.readouterr().err
    assert "m.irk:1:7: error: pass 'test-miscompile' changed the numeric results" in err
    assert "memref argument #1 after the call" in err
    assert "test-miscompile" in (tmp_path / "repro.mlir").read_text()


def test_disable_leaves_every_occurrence_of_a_pass_out():
    """`disable` drops a pass wherever the table runs it (options or not), keeps the rest in
    order, and refuses a name the table does not run (a typo is not silently ignored)."""
    from irkit.passes import pipeline as table
    full = table.passes_between(None, "memory").split(",")
    without = table.passes_between(None, "memory",
                                   disable=["canonicalize", "bufferize"]).split(",")
    assert "canonicalize" in full and any(p.startswith("bufferize{") for p in full)
    assert without == [p for p in full
                       if p != "canonicalize" and not p.startswith("bufferize")]
    with pytest.raises(ValueError, match="cannot disable 'linalg-fus'.*linalg-fuse"):
        table.passes_between(None, "loop", disable=["linalg-fus"])
    assert table._entries("a,b{x=1,y=2},c(d,e)") == ["a", "b{x=1,y=2}", "c(d,e)"]


def test_disable_reaches_the_engines():
    """`load_model(disable=...)` compiles without the passes and computes the same; an
    unknown name is an error before anything compiles."""
    x = np.random.default_rng(0).normal(size=(5, 64)).astype(np.float32)
    labels = np.arange(5, dtype=np.int32)
    fused = irkit.load_model(ROOT / "examples" / "mlp.irk", engine="jit", cache=False)
    plain = irkit.load_model(ROOT / "examples" / "mlp.irk", engine="jit", cache=False,
                             disable=["linalg-fuse", "linalg-fuse-elementwise-ops"])
    got, want = fused.forward(x=x, labels=labels), plain.forward(x=x, labels=labels)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
    with pytest.raises(ValueError, match="cannot disable"):
        irkit.load_model(ROOT / "examples" / "mlp.irk", disable=["no-such-pass"])
