"""The DSL examples: each compiles, verifies, round-trips through text, and computes what a
numpy version written here computes. Also the two tools that read `.irk` files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import irkit
from irkit.frontend.dsl import compile_file, compile_source, find_model
from irkit.runtime.engines import expand_derivatives
from irkit.symbols import lookup_symbol_in
from irkit.tools.compile import main as compile_main
from irkit.tools.opt import main as opt_main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ["logreg", "mlp", "gate", "seed_ad", "cnn", "attention"]


def model(name: str, file: str | None = None):
    top = compile_file(str(EXAMPLES / f"{file or name}.irk"))
    m = find_model(top, name)
    assert m is not None
    return m


def _softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("name", NAMES)
def test_example_verifies_and_round_trips(name):
    top = compile_file(str(EXAMPLES / f"{name}.irk"))
    irkit.verify(top)
    text = irkit.print_op(top)
    again = irkit.parse_module(text)
    irkit.verify(again)
    assert irkit.print_op(again) == text
    debug = irkit.print_op(top, debuginfo=True)
    assert f'loc("{EXAMPLES / name}.irk":' in debug


def test_logreg_matches_numpy():
    m = model("logreg")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 5)]
    probs, loss = irkit.interpret(m, "forward", x, y)
    # W and b start at zero: every class is equally likely.
    want = _softmax(x @ np.zeros((784, 10), np.float32) + np.zeros(10, np.float32), axis=1)
    np.testing.assert_allclose(probs, want, rtol=1e-6)
    np.testing.assert_allclose(loss, np.mean(-np.sum(y * np.log(want), axis=1)), rtol=1e-5)
    assert probs.dtype == np.float32 and probs.shape == (5, 10)
    step = lookup_symbol_in(m, "train_step")
    attrs = step.attributes["graph.optimizer"]
    assert attrs.get("name").value == "sgd" and attrs.get("lr").value == 0.5
    assert "graph.train" not in m.attributes


def test_mlp_matches_numpy():
    m = model("mlp")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 64)).astype(np.float32)
    labels = rng.integers(0, 10, 4).astype(np.int32)
    # `grad loss wrt w1, b2` adds outputs d_w1, d_b2, built by the autodiff pass
    logits, loss, d_w1, d_b2 = irkit.interpret(expand_derivatives(m), "forward", x, labels)
    # The initializers, from their definition: seeded numpy generators.
    w1 = np.random.default_rng(1).normal(0.0, 0.05, (64, 128)).astype(np.float32)
    lim = np.sqrt(6.0 / (128 + 10))
    w2 = np.random.default_rng(2).uniform(-lim, lim, (128, 10)).astype(np.float32)
    h = np.maximum(x @ w1, 0)
    want = h @ w2
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-5)
    z = want - want.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss, -logp[np.arange(4), labels].mean(), rtol=1e-4)
    # d loss / d logits = (softmax - onehot) / n, written out by hand
    p = np.exp(logp)
    d_logits = (p - np.eye(10)[labels]) / 4
    np.testing.assert_allclose(d_b2, d_logits.sum(axis=0), rtol=1e-4, atol=1e-6)
    d_h = (d_logits @ w2.T) * (x @ w1 > 0)
    np.testing.assert_allclose(d_w1, x.T @ d_h, rtol=1e-4, atol=1e-6)
    assert not {"graph.grad", "graph.train"} & set(m.attributes)
    train = lookup_symbol_in(m, "train_step").attributes["graph.optimizer"]
    assert {k: train.get(k).value for k in ("lr", "beta1", "beta2", "eps")} == \
        {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}


@pytest.mark.parametrize("swap", [False, True])
def test_gate_takes_one_branch(swap):
    m = model("gate")
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = np.array([4.0, -1.0, 5.0], np.float32)
    z = np.array([0.5, 0.25, 2.0], np.float32)
    if swap:
        x, y = y, x
    want = x + z if x.sum() < y.sum() else y * y
    np.testing.assert_array_equal(irkit.interpret(m, "forward", x, y, z), want)
    ops = [op.name for op in m.walk()]
    assert ops.count("graph.switch") == 3 and ops.count("graph.merge") == 1


def test_seed_ad_value():
    m = expand_derivatives(model("seed_ad"))
    y, d_x1, d_x2 = irkit.interpret(m, "forward", np.float32(2.0), np.float32(5.0))
    want = np.log(2.0) + 2.0 * 5.0 - np.sin(5.0)
    assert abs(float(y) - want) < 1e-5
    assert abs(float(y) - 11.652) < 1e-3
    # the lecture's numbers: dy/dx1 = 1/x1 + x2 = 5.5, dy/dx2 = x1 - cos(x2) = 1.716
    assert abs(float(d_x1) - 5.5) < 1e-5
    assert abs(float(d_x2) - (2.0 - np.cos(5.0))) < 1e-5


def test_forward_signature_attributes():
    m = model("logreg")
    fn = next(op for op in m.walk() if op.name == "func.func")
    arg0 = fn.properties["arg_attrs"][0]
    assert arg0.get("graph.name").value == "x"
    assert [getattr(d, "value", None) for d in arg0.get("graph.dims")] == ["N", 784]
    assert [r.get("graph.name").value for r in fn.properties["res_attrs"]] == ["probs", "loss"]
    names = [op.name for op in m.regions[0].ops]
    assert names == ["graph.variable", "graph.variable", "func.func", "func.func"]
    step = lookup_symbol_in(m, "train_step")
    assert step.properties["arg_attrs"] == fn.properties["arg_attrs"]
    assert [r.get("graph.name").value for r in step.properties["res_attrs"]] == ["loss"]


# ----- tools -------------------------------------------------------------------------------


def test_irkit_compile_prints_one_model(capsys):
    assert compile_main([str(EXAMPLES / "mlp.irk"), "--emit=graph", "--model", "mlp"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("module @mlp {")
    assert "graph.cross_entropy" in out


def test_irkit_compile_error_exit_code(tmp_path, capsys):
    bad = tmp_path / "bad.irk"
    bad.write_text("model m {\n  input x: f32[3]\n  output y\n}\n")
    assert compile_main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:3:10: error: unknown name 'y'")


def test_irkit_compile_unknown_model(capsys):
    assert compile_main([str(EXAMPLES / "mlp.irk"), "--model", "nope"]) == 1
    assert "no model 'nope'" in capsys.readouterr().err


def test_irkit_compile_output_file(tmp_path):
    out = tmp_path / "g.mlir"
    assert compile_main([str(EXAMPLES / "seed_ad.irk"), "--emit=autodiff", "-o",
                         str(out)]) == 0
    m = irkit.parse_module(out.read_text())
    y, d_x1, d_x2 = irkit.interpret(find_model(m, "seed_ad"), "forward", np.float32(1),
                                    np.float32(0))
    assert abs(float(y)) < 1e-6             # log 1 + 0 - sin 0
    assert float(d_x1) == 1.0 and float(d_x2) == 0.0     # 1/x1 + x2, x1 - cos x2


def test_irkit_compile_emit_autodiff_expands_every_request(capsys):
    assert compile_main([str(EXAMPLES / "mlp.irk"), "--emit=graph"]) == 0
    graph = capsys.readouterr().out
    assert graph.count("autodiff.grad") == 2        # one in @forward, one in @train_step
    assert compile_main([str(EXAMPLES / "mlp.irk"), "--emit=autodiff"]) == 0
    out = capsys.readouterr().out
    assert "autodiff." not in out and "func.func @train_step" in out
    irkit.verify(irkit.parse_module(out))


def test_irkit_opt_reads_irk(capsys):
    assert opt_main([str(EXAMPLES / "logreg.irk"), "-p", "canonicalize"]) == 0
    out = capsys.readouterr().out
    assert "module @logreg" in out and "graph.softmax" in out


def test_irkit_opt_reports_irk_errors(tmp_path, capsys):
    bad = tmp_path / "bad.irk"
    bad.write_text("model m {\n  input x: f32[3]\n  y = x +\n  output y\n}\n")
    assert opt_main([str(bad)]) == 1
    assert f"{bad}:3:10: error: unexpected end of line" in capsys.readouterr().err


def test_compile_source_default_filename():
    top = compile_source("model m { input x: f32; output x }")
    assert find_model(top, "m") is not None


# ----- cnn and attention, against numpy written from the definitions -------------------------


def _conv2d(x, w, stride=(1, 1), pad=(0, 0)):
    """Cross-correlation, NCHW x OIHW, as a sum over kernel offsets."""
    x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride[0] + 1, (wd - kw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _pool(x, k, reduce):
    n, c, h, w = x.shape
    return reduce(x[:, :, :h // k * k, :w // k * k].reshape(n, c, h // k, k, w // k, k),
                  axis=(3, 5))


def _he(seed, shape):
    fan_in = shape[1] * shape[2] * shape[3]
    return np.random.default_rng(seed).normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32)


def _glorot(seed, shape):
    lim = np.sqrt(6.0 / (shape[0] + shape[1]))
    return np.random.default_rng(seed).uniform(-lim, lim, shape).astype(np.float32)


def test_cnn_matches_numpy():
    m = model("cnn")
    rng = np.random.default_rng(3)
    images = rng.normal(size=(3, 1, 12, 12)).astype(np.float32)
    labels = np.array([1, 7, 3], np.int32)
    logits, pred, loss = irkit.interpret(m, "forward", images, labels)
    k1, k2 = _he(1, (8, 1, 3, 3)), _he(2, (16, 8, 3, 3))
    h = _conv2d(images, k1, pad=(1, 1)) / np.sqrt(1 + 1e-5) + 0.1     # batchnorm: mean 0, var 1
    h = _pool(np.maximum(h, 0), 2, np.max)
    h = _pool(np.maximum(_conv2d(h, k2), 0), 2, np.mean)
    want = h.reshape(3, 64) @ _glorot(3, (64, 10))
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(pred, np.argmax(want, axis=1))
    z = want - want.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss, -logp[np.arange(3), labels].mean(), rtol=1e-4)


def test_attention_matches_numpy():
    m = model("attention")
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 5, 32)).astype(np.float32)
    y, first, pooled = irkit.interpret(m, "forward", x)
    wq, wk, wv, wo = (np.random.default_rng(s).normal(0, 0.1, (32, 32)) for s in (1, 2, 3, 4))
    w1, w2 = _glorot(5, (32, 64)), _glorot(6, (64, 32))

    def ln(a):
        mu = a.mean(-1, keepdims=True)
        return (a - mu) / np.sqrt(((a - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    def attend(a):
        q, k, v = a @ wq, a @ wk, a @ wv
        heads = []
        for s in (slice(0, 16), slice(16, 32)):
            scores = q[..., s] @ np.swapaxes(k[..., s], 1, 2) * 0.25
            heads.append(_softmax(scores) @ v[..., s])
        return np.concatenate(heads, axis=2) @ wo

    h = x + attend(ln(x))
    u = ln(h) @ w1
    gelu = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))
    want = h + gelu @ w2
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(first, want[:, 0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pooled, want.mean(axis=1), rtol=1e-4, atol=1e-4)


def test_parser_tables_beside_the_package_are_read_when_the_cache_is_off(tmp_path, monkeypatch):
    """`IRKIT_CACHE_DIR` set empty writes no tables anywhere, but reads those beside the
    package (as Python reads bytecode): a cold compile does not build them again."""
    from irkit.frontend.dsl import syntax
    beside = tmp_path / "package"
    beside.mkdir()
    monkeypatch.setattr(syntax, "TABLES_BESIDE", str(beside))
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    grammar = (Path(syntax.__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    assert syntax._parser_tables(grammar) is None          # none there: none written
    monkeypatch.setenv("IRKIT_CACHE_DIR", str(tmp_path / "cache"))
    source = "model m {\n  input x: f32[N, 2]\n  output x\n}\n"
    want = syntax._parser.__wrapped__().parse(source)       # builds them beside
    (table,) = os.listdir(beside)
    monkeypatch.setenv("IRKIT_CACHE_DIR", "")
    assert syntax._parser_tables(grammar) == str(beside / table)
    assert syntax._parser.__wrapped__().parse(source) == want
    assert os.listdir(beside) == [table] and not (tmp_path / "cache").exists()
