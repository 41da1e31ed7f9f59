"""The library's own variables (`M_init_variables`, `M_get_variable`, `M_set_variable`,
`M_F_run`), called through ctypes and from a C program.

The point is agreement with dev mode: the initial values baked into the library are dev
mode's bit for bit (random initializers and Adam's state included), and the `_run` entry
points over the library's storage compute and train as dev mode does. Skips without a C
compiler or llvmlite."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends.llvm_cpu import find_c_compiler  # noqa: E402
from irkit.tools.compile import main as compile_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))

#: every initializer, three element types, and Adam's state
SMALL = """\
model small {
  input x: f32[N, 3]
  param w: f32[3, 4] = normal(std=0.5, seed=7)
  param u: f32[4] = uniform(low=-2.0, high=3.0, seed=4)
  param g: f32[4, 2] = glorot(seed=5)
  param h: f32[2] = he(seed=6)
  param c: f32[2] = constant(value=0.25)
  param s: f64[2] = ones
  param k: i32[2] = constant(value=3)
  y = tanh(x @ w + u) @ g + h * c
  loss = mean(y * y)
  output y, loss
  train loss with adam(lr=0.01)
}
"""

#: model -> (inputs of a batch of n rows from rng, argument names of forward_run and of
#: train_step_run in the header's order: inputs, then outputs)
MODELS = {
    "small": (lambda rng, n: {"x": rng.normal(size=(n, 3)).astype(np.float32)},
              ("x", "y", "loss"), ("x", "loss")),
    "mlp": (lambda rng, n: {"x": rng.random((n, 64), dtype=np.float32) * 16,
                            "labels": rng.integers(0, 10, n).astype(np.int32)},
            ("x", "labels", "logits", "loss", "d_w1", "d_b2"), ("x", "labels", "loss")),
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """model -> (.irk source, the compiled .so); one library per model."""
    if not HAS_CC:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("c_variables")
    (d / "small.irk").write_text(SMALL)
    out = {}
    for model, src in (("small", d / "small.irk"), ("mlp", ROOT / "examples" / "mlp.irk")):
        assert compile_main([str(src), "-o", str(d / f"{model}.so")]) == 0
        out[model] = (src, d / f"{model}.so")
    return out


class Lib:
    """The variable API of model `model` in a library loaded with ctypes."""

    def __init__(self, path: Path, model: str) -> None:
        self.dll = ctypes.CDLL(str(path))
        self.model = model
        self.fn("variable_name").restype = ctypes.c_char_p
        self.fn("variable_count").restype = ctypes.c_int64
        for f in ("get_variable", "set_variable"):
            self.fn(f).argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64]
        self.dll.irkit_last_error.restype = ctypes.c_char_p

    def fn(self, name: str):
        return getattr(self.dll, f"{self.model}_{name}")

    def names(self) -> list[str]:
        return [self.fn("variable_name")(i).decode()
                for i in range(self.fn("variable_count")())]

    def get(self, name: str, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        assert self.fn("get_variable")(name.encode(), out.ctypes.data, out.nbytes) == 0, \
            self.error()
        return out

    def error(self) -> str:
        return self.dll.irkit_last_error().decode()

    def run(self, function: str, names: tuple, arrays: dict) -> int:
        """`<model>_<function>_run` over contiguous arrays, in `names`' order."""
        descs = [_descriptor(arrays[n]) for n in names]
        return self.fn(f"{function}_run")(*map(ctypes.byref, descs))


def _descriptor(a: np.ndarray) -> ctypes.Structure:
    """A memref descriptor (as the header declares it) over C-contiguous array `a`."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if a.ndim:
        fields += [("sizes", ctypes.c_int64 * a.ndim), ("strides", ctypes.c_int64 * a.ndim)]

    class Desc(ctypes.Structure):
        _fields_ = fields

    d = Desc(a.ctypes.data, a.ctypes.data, 0)
    if a.ndim:
        d.sizes[:] = a.shape
        d.strides[:] = [s // a.itemsize for s in a.strides]
    return d


@pytest.mark.parametrize("model", list(MODELS))
def test_initial_values_are_dev_modes_bit_for_bit(sources, model):
    src, so = sources[model]
    lib, dev = Lib(so, model), irkit.load_model(src)
    assert lib.fn("init_variables")() == 0
    assert lib.names() == list(dev.variables)
    assert lib.fn("variable_name")(len(dev.variables)) is None
    for name in dev.variables:
        want = np.asarray(dev.variables[name])
        got = lib.get(name, want)
        assert np.array_equal(np.frombuffer(got.tobytes(), np.uint8),
                              np.frombuffer(want.tobytes(), np.uint8)), name
    assert len({np.asarray(v).tobytes() for v in dev.variables.values()}) > 3  # not all zero


def test_set_get_round_trip_and_errors(sources):
    _, so = sources["small"]
    lib = Lib(so, "small")
    lib.fn("init_variables")()
    initial = lib.get("w", np.empty((3, 4), np.float32))
    new = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    assert lib.fn("set_variable")(b"w", new.ctypes.data, new.nbytes) == 0
    np.testing.assert_array_equal(lib.get("w", new), new)
    k = np.array([-7, 9], np.int32)
    assert lib.fn("set_variable")(b"k", k.ctypes.data, k.nbytes) == 0
    np.testing.assert_array_equal(lib.get("k", k), k)

    assert lib.fn("get_variable")(b"nope", new.ctypes.data, new.nbytes) != 0
    assert lib.error() == "small_get_variable: model small has no variable 'nope'"
    assert lib.fn("set_variable")(b"w", new.ctypes.data, new.nbytes - 4) != 0
    assert lib.error() == ("small_set_variable: variable 'w' is float32[3, 4], 48 bytes; "
                           "got 44 bytes")
    assert lib.fn("get_variable")(b"adam.step", None, 8) != 0
    assert lib.error() == "small_get_variable: null buffer for variable 'adam.step'"
    np.testing.assert_array_equal(lib.get("w", new), new)      # failed calls changed nothing

    assert lib.fn("init_variables")() == 0
    np.testing.assert_array_equal(lib.get("w", new), initial)


@pytest.mark.parametrize("model", list(MODELS))
def test_run_entry_points_match_dev_mode(sources, model):
    """forward_run and three train_step_run calls on the library's storage against dev mode:
    the outputs, the losses, then every variable read back with get_variable."""
    src, so = sources[model]
    batch, forward_args, train_args = MODELS[model]
    lib, dev = Lib(so, model), irkit.load_model(src)
    assert lib.fn("init_variables")() == 0
    rng = np.random.default_rng(0)

    inputs = batch(rng, 5)
    want = dev.forward(**inputs)
    arrays = {**inputs, **{k: np.zeros_like(np.asarray(v)) for k, v in want.items()}}
    assert lib.run("forward", forward_args, arrays) == 0, lib.error()
    for k, v in want.items():
        np.testing.assert_allclose(arrays[k], v, rtol=1e-5, atol=1e-6, err_msg=k)

    for _ in range(3):
        inputs = batch(rng, 8)
        want_loss = dev.train_step(**inputs)["loss"]
        loss = np.zeros((), np.float32)
        assert lib.run("train_step", train_args, {**inputs, "loss": loss}) == 0, lib.error()
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    for name in dev.variables:
        want_v = np.asarray(dev.variables[name])
        np.testing.assert_allclose(lib.get(name, want_v), want_v, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert not np.array_equal(lib.get("adam.step", np.zeros((), np.float64)), 0.0)


def test_run_entry_point_rejects_a_wrong_shape(sources):
    _, so = sources["small"]
    lib = Lib(so, "small")
    x, y = np.zeros((2, 4), np.float32), np.zeros((2, 2), np.float32)
    assert lib.run("forward", ("x", "y", "loss"), {"x": x, "y": y,
                                                   "loss": np.zeros((), np.float32)}) == 1
    assert lib.error() == "small_forward: argument 'x' axis 1 is 4, expected 3"


PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "small.h"

/* A fresh process: `set` sets w before anything else (the others must then hold their
   initial values); otherwise forward_run initializes lazily. Then forward again after
   small_init_variables. Prints y and the loss of both calls. */
int main(int argc, char **argv) {
  float x[6] = {-0.3f, 0.1f, 0.5f, 0.9f, -1.3f, 1.7f}, y[4], loss;
  irkit_memref_f32_2d xd = {x, x, 0, {2, 3}, {3, 1}}, yd = {y, y, 0, {2, 2}, {2, 1}};
  irkit_memref_f32_0d ld = {&loss, &loss, 0};
  if (argc > 1 && strcmp(argv[1], "set") == 0) {
    float w[12];
    for (int i = 0; i < 12; i++) w[i] = 0.1f * (float)i - 0.5f;
    if (small_set_variable("w", w, sizeof w)) return 1;
  }
  for (int round = 0; round < 2; round++) {
    if (round == 1 && small_init_variables() != 0) return 1;
    if (small_forward_run(&xd, &yd, &ld) != 0) {
      fprintf(stderr, "%s\n", irkit_last_error());
      return 1;
    }
    printf("%.9g %.9g %.9g %.9g %.9g\n", y[0], y[1], y[2], y[3], loss);
  }
  return 0;
}
"""


def test_c_program_runs_from_the_initializers(sources, tmp_path):
    """A C program with no parameter file from Python: the first forward_run (lazy
    initialization) and one after small_init_variables give dev mode's outputs; a set before
    anything else is kept, and the other variables still start from their initializers."""
    src, so = sources["small"]
    (tmp_path / "main.c").write_text(PROGRAM)
    exe = tmp_path / "main"
    proc = subprocess.run([find_c_compiler(), "-std=c11", "-Wall", "-Werror", f"-I{so.parent}",
                           str(tmp_path / "main.c"), str(so), "-o", str(exe),
                           f"-Wl,-rpath,{so.parent}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    x = np.array([[-0.3, 0.1, 0.5], [0.9, -1.3, 1.7]], np.float32)
    dev = irkit.load_model(src)
    initial = dev.forward(x=x)
    dev.variables["w"] = (np.arange(12, dtype=np.float32) * np.float32(0.1)
                          - np.float32(0.5)).reshape(3, 4)
    with_w = dev.forward(x=x)
    for args, first in (((), initial), (("set",), with_w)):
        proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        rows = [np.array(line.split(), np.float64) for line in proc.stdout.splitlines()]
        for row, want in zip(rows, (first, initial), strict=True):
            np.testing.assert_allclose(row[:4], want["y"].reshape(-1), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(row[4], want["loss"], rtol=1e-5)
