"""examples/infer_digits.c: the MLP compiled to a shared library, called from a C program.

Builds `mlp.so` (+ `mlp.h`) with irkit-compile and the C example with the system C compiler,
runs it on parameters and images written by numpy, and checks that its predictions (and
logits) are the Python runtime's on the same library, that without parameters it runs the
initial ones dev mode has, and that the wrong-shape call fails with irkit_last_error()'s
message. Skips when there is no C compiler or no llvmlite."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends.llvm_cpu import find_c_compiler  # noqa: E402
from irkit.tools.compile import main as irkit_compile  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PARAMS = (("w1", (64, 128)), ("b1", (128,)), ("w2", (128, 10)), ("b2", (10,)))
LINE = re.compile(r"^image (\d+): predicted (\d)  logits((?: \S+){10})$", re.M)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cc = find_c_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    build = tmp_path_factory.mktemp("c_example")
    lib = build / "mlp.so"
    assert irkit_compile([str(ROOT / "examples" / "mlp.irk"), "-o", str(lib)]) == 0
    assert (build / "mlp.h").is_file()
    exe = build / "infer_digits"
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{build}",
                           str(ROOT / "examples" / "infer_digits.c"), str(lib), "-o", str(exe),
                           f"-Wl,-rpath,{build}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return build, lib, exe


def _run(exe, *args):
    proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          timeout=60)
    return proc


def test_c_predictions_match_python(built):
    build, lib, exe = built
    rng = np.random.default_rng(0)
    params = {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in PARAMS}
    with open(build / "params.bin", "wb") as f:
        for k, _ in PARAMS:
            params[k].tofile(f)
    x = rng.random((12, 64), dtype=np.float32)
    x.tofile(build / "images.bin")

    proc = _run(exe, build / "params.bin", build / "images.bin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = LINE.findall(proc.stdout)
    assert [int(i) for i, _, _ in rows] == list(range(12)), proc.stdout
    c_pred = np.array([int(p) for _, p, _ in rows])
    c_logits = np.array([[float(v) for v in lg.split()] for _, _, lg in rows])

    model = irkit.load(lib, model="mlp")
    for k, _ in PARAMS:
        model.variables[k] = params[k]
    logits = model.forward(x=x, labels=np.zeros(12, np.int32))["logits"]
    assert len(set(c_pred.tolist())) > 1          # the parameters make a real difference
    np.testing.assert_array_equal(c_pred, logits.argmax(axis=1))
    np.testing.assert_allclose(c_logits, logits, atol=2e-3)   # printed with 3 decimals


def test_c_untrained_matches_dev_mode(built):
    """Without a parameter file the program calls mlp_init_variables: its logits on the three
    hand-drawn digits are dev mode's with the initializers' values (no file from Python)."""
    _, _, exe = built
    proc = _run(exe)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "initial (untrained) parameters" in proc.stdout
    rows = LINE.findall(proc.stdout)
    c_logits = np.array([[float(v) for v in lg.split()] for _, _, lg in rows])
    src = (ROOT / "examples" / "infer_digits.c").read_text()
    drawn = re.search(r"DRAWN\[3\]\[IN\] = \{(.*?)\};", src, re.S).group(1)
    x = np.array(re.findall(r"\d+", drawn), np.float32).reshape(3, 64) / 16
    dev = irkit.load_model(ROOT / "examples" / "mlp.irk")
    logits = dev.forward(x=x, labels=np.zeros(3, np.int32))["logits"]
    assert np.abs(logits).max() > 0.01            # the initializers, not zeros
    np.testing.assert_allclose(c_logits, logits, atol=2e-3)   # printed with 3 decimals


def test_c_wrong_shape_is_reported(built):
    _, _, exe = built
    proc = _run(exe)                    # initial parameters, the three hand-drawn digits
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("wrong shape: mlp_forward_run returned 1: mlp_forward: argument 'x' axis 1 "
            "is 63, expected 64") in proc.stdout


def test_c_bad_parameter_file(built):
    build, _, exe = built
    (build / "short.bin").write_bytes(b"\0" * 100)
    proc = _run(exe, build / "short.bin")
    assert proc.returncode == 1
    assert "is not 9610 raw float32 values" in proc.stderr
