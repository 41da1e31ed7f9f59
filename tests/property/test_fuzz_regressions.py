"""Programs the differential fuzzing campaign (`bench/fuzz_campaign.py`) found, as plain tests.

Each is the smallest model that shows one finding; a test marked `xfail(strict=True)` fails
today and starts passing (so its mark must go) when the finding is fixed.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import irkit
from irkit.tools.compile import main as compile_main

HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_an_input_that_is_also_an_output_compiles_to_a_library(tmp_path, capsys):
    """C rejects a repeated parameter: the output `x` is `x_output` in the header; a name
    that is a C keyword (`double`) gets a trailing underscore."""
    src = tmp_path / "m.irk"
    src.write_text("model m {\n  input x: f32[N, 2]\n  input double: f32[N, 2]\n"
                   "  y = x + double\n  output y, x\n}\n")
    assert compile_main([str(src), "-o", str(tmp_path / "m.so")]) == 0, capsys.readouterr().err
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    out = irkit.load(tmp_path / "m.so").forward(x=x, double=x)
    np.testing.assert_array_equal(out["x"], x)
    np.testing.assert_array_equal(out["y"], x + x)
    header = (tmp_path / "m.h").read_text()
    assert "output 1  x (parameter x_output): f32[N, 2]" in header
    assert "irkit_memref_f32_2d *double_," in header


def test_softmax_over_an_empty_axis_is_empty_in_every_engine(tmp_path):
    src = tmp_path / "m.irk"
    src.write_text("model m {\n  input x: f32[N, 3]\n  y = softmax(x, axis=0)\n  output y\n}\n")
    x = np.zeros((0, 3), np.float32)
    for engine in ("interpreter", "jit"):
        y = irkit.load_model(src, engine=engine).forward(x=x)["y"]
        assert y.shape == (0, 3), engine


@pytest.mark.parametrize("literal", ["0x10000 : f16", "0x100000000 : f32"])
def test_a_hex_float_literal_too_wide_for_its_type_is_a_located_error(literal):
    from irkit.diagnostics import IRError
    from irkit.parser import parse_module
    with pytest.raises(IRError) as info:
        parse_module(f'"t.a"() {{a = {literal}}} : () -> ()', "x.mlir",
                     allow_unregistered=True)
    assert info.value.render().startswith("x.mlir:1:"), info.value.render()


@pytest.mark.parametrize("expr,numpy_fn", [("max(x, axis=0)", np.max),
                                           ("min(x, axis=0)", np.min),
                                           ("argmax(x, axis=0)", np.argmax)])
def test_a_reduction_without_identity_over_no_element_fails_in_every_engine(
        tmp_path, expr, numpy_fn):
    """numpy has no max, min or argmax of nothing; compiled code used to return -inf or
    index 0 where the interpreter raised. Both now raise numpy's own message at the line."""
    src = tmp_path / "m.irk"
    src.write_text(f"model m {{\n  input x: f32[N, 3]\n  y = {expr}\n  output y\n}}\n")
    with pytest.raises(ValueError) as want:
        numpy_fn(np.zeros((0, 3), np.float32), axis=0)
    for engine in ("interpreter", "jit"):
        m = irkit.load_model(src, engine=engine)
        with pytest.raises(Exception) as info:
            m.forward(x=np.zeros((0, 3), np.float32))
        text = str(info.value)
        assert "m.irk:3:7: error: " in text and str(want.value) in text, (engine, text)
        assert m.forward(x=np.ones((2, 3), np.float32))["y"].shape == (3,)


def test_dev_mode_sums_along_a_strided_axis_as_accurately_as_compiled_code(tmp_path):
    """numpy adds float32 pairwise only along the contiguous axis; along axis 0 it adds row
    by row: its sum of 10^5 rows is off by 7 ulps here, and the fuzz campaign found a
    softmax over 10^5 rows off by 4*10^-4 relative in the interpreter.
    Dev mode now sums floats in float64, as compiled code does: within 8 ulps."""
    src = tmp_path / "m.irk"
    src.write_text("model m {\n  input x: f32[N, 2]\n  s = sum(x, axis=0)\n"
                   "  p = softmax(x, axis=0)\n  output s, p\n}\n")
    x = np.random.default_rng(3).uniform(0.5, 1.5, (100_003, 2)).astype(np.float32)
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(axis=0))
    want = {"s": wide.sum(axis=0), "p": e / e.sum(axis=0)}
    assert np.max(np.abs(np.sum(x, axis=0) - want["s"]) / want["s"]) > 8 * 2.0 ** -24  # f32
    for engine in ("interpreter", "jit"):
        out = irkit.load_model(src, engine=engine).forward(x=x)
        for k, w in want.items():
            np.testing.assert_allclose(out[k], w, rtol=8 * 2.0 ** -24, err_msg=(engine, k))


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_the_campaigns_engines_run_and_agree(tmp_path):
    """The campaign builds its JIT from the runtime's own classes (one LLVM module for a
    batch file's models, a `CompiledRunner` per model): they must run. Given a bare module
    for its graph where the runner takes an `IRText`, every JIT call of a campaign of
    2,450 programs raised the same AttributeError, and only the library was compared."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import fuzz_campaign
    path = tmp_path / "batch.irk"
    path.write_text("model m0 {\n  input x: f32[N, 3]\n  y = softmax(x * 2.0, axis=1)\n"
                    "  output y\n}\nmodel m1 {\n  input x: f32[N, 3]\n"
                    "  s = sum(exp(x), axis=0)\n  output s\n}\n")
    interp, engines, failures = fuzz_campaign.build_engines(path, ["m0", "m1"])
    assert failures == []
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    for name in ("m0", "m1"):
        want = next(iter(interp[name].forward(x=x).values()))
        for engine in ("jit", "so"):
            got = next(iter(engines[engine][name].forward(x=x).values()))
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{name} {engine}")
