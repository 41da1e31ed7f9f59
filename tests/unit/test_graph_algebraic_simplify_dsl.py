"""graph-algebraic-simplify at the DSL level: `log(softmax(z))` in a model becomes
`log_softmax`, in the forward graph and (with the pass before autodiff) in the backward one,
and the model trains as numpy says it should."""

from __future__ import annotations

import numpy as np
import pytest

from irkit.frontend.dsl import compile_source, model_modules
from irkit.interpreter import Interpreter
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all
from irkit.symbols import lookup_symbol_in

SOURCE = """
model m {
  input x: f32[N, 4]
  input t: f32[N, 3]
  param w: f32[4, 3] = normal(std=0.5, seed=1)
  param b: f32[3] = zeros
  z = x @ w + b
  loss = -mean(sum(log(softmax(z, axis=1)) * t, axis=1))
  output loss
  train loss with sgd(lr=0.5)
}
"""

PASS = "graph-algebraic-simplify"
#: the "autodiff" row of the pipeline with the pass before and after autodiff
CUSTOM = "graph-raise-control-flow,graph-algebraic-simplify,autodiff,graph-algebraic-simplify," \
    "canonicalize,cse"


def _compile(passes: str):
    top = compile_source(SOURCE, "m.irk")
    register_all()
    PassManager.parse(passes).run(top)
    top.verify()
    return model_modules(top)["m"]


def _train(module, w0, b0, batches) -> tuple[list, dict]:
    interp = Interpreter(module)
    interp.state["graph.variables"] = {"w": w0.copy(), "b": b0.copy()}
    step = lookup_symbol_in(module, "train_step")
    losses = [float(interp.call(step, [x, t])[0]) for x, t in batches]
    return losses, interp.state["graph.variables"]


def _numpy_training(w, b, batches, lr=0.5):
    """The same model by hand, in float64: log_softmax, its gradient, SGD."""
    w, b = w.astype(np.float64), b.astype(np.float64)
    losses = []
    for x, t in batches:
        x, t = x.astype(np.float64), t.astype(np.float64)
        z = x @ w + b
        m = z.max(axis=1, keepdims=True)
        ls = z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))
        losses.append(-np.mean((ls * t).sum(axis=1)))
        dz = -(t - np.exp(ls) * t.sum(axis=1, keepdims=True)) / len(x)
        w, b = w - lr * (x.T @ dz), b - lr * dz.sum(axis=0)
    return losses, w, b


@pytest.fixture
def batches():
    rng = np.random.default_rng(7)
    out = []
    for n in (5, 3, 8):
        x = rng.normal(size=(n, 4)).astype(np.float32)
        t = rng.dirichlet(np.ones(3), size=n).astype(np.float32)   # soft targets
        out.append((x, t))
    return out


def test_log_of_softmax_compiles_to_log_softmax():
    text = str(_compile(CUSTOM))
    assert "graph.log_softmax" in text
    assert "graph.softmax" not in text, "the backward graph should be log_softmax's"
    assert "graph.log " not in text
    # The pipeline table's row does the same; without the pass the backward graph is that
    # of log(softmax): softmax, divided by.
    table = str(_compile(pipeline.passes_between(None, "autodiff")))
    assert "graph.log_softmax" in table and "graph.softmax" not in table
    without = str(_compile(pipeline.passes_between(None, "autodiff", disable=[PASS])))
    assert "graph.softmax" in without and "graph.div" in without


def test_emitted_pipeline_names_the_pass():
    """`irkit-opt -p` spells it as the table would: the pass and its option parse."""
    register_all()
    pm = PassManager.parse("graph-algebraic-simplify{fast-math=true}")
    assert "graph-algebraic-simplify{fast-math=true" in pm.pipeline_text()


def test_trains_as_numpy_does(batches):
    rng = np.random.default_rng(3)
    w0 = rng.normal(0, 0.5, size=(4, 3)).astype(np.float32)
    b0 = rng.normal(0, 0.1, size=3).astype(np.float32)
    want_losses, want_w, want_b = _numpy_training(w0, b0, batches)
    for passes in (CUSTOM, pipeline.passes_between(None, "autodiff")):
        losses, params = _train(_compile(passes), w0, b0, batches)
        np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6, err_msg=passes)
        np.testing.assert_allclose(params["w"], want_w, rtol=1e-5, atol=1e-6, err_msg=passes)
        np.testing.assert_allclose(params["b"], want_b, rtol=1e-5, atol=1e-6, err_msg=passes)


def test_confident_predictions_keep_finite_gradients():
    """Where softmax underflows to 0 (a logit 200 below the row's maximum), log(softmax) is
    -inf and its backward graph divides by 0; log_softmax's stays finite. With a target on
    that class the update is finite only with the pass before autodiff (canonicalize turns
    the forward log(softmax) into log_softmax anyway, after autodiff), as the pipeline
    table runs it."""
    x = np.array([[1.0, 0.0, 0.0, 0.0]], np.float32)
    t = np.array([[0.0, 0.0, 1.0]], np.float32)
    w0 = np.zeros((4, 3), np.float32)
    w0[0] = [100.0, 0.0, -100.0]
    b0 = np.zeros(3, np.float32)
    want_losses, want_w, _ = _numpy_training(w0, b0, [(x, t)])
    for passes in (CUSTOM, pipeline.passes_between(None, "autodiff")):
        losses, params = _train(_compile(passes), w0, b0, [(x, t)])
        np.testing.assert_allclose(losses, want_losses, rtol=1e-6, err_msg=passes)
        np.testing.assert_allclose(params["w"], want_w, rtol=1e-6, atol=1e-6, err_msg=passes)
    with np.errstate(all="ignore"):
        _, without = _train(_compile(pipeline.passes_between(None, "autodiff",
                                                             disable=[PASS])),
                            w0, b0, [(x, t)])
    assert not np.isfinite(without["w"]).all()
