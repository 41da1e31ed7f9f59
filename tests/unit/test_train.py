"""Gradients and training from the DSL: `grad` outputs, `@train_step`, the optimizers.

Expected values come from hand-derived math and from numpy written here from PyTorch's
documented update formulas, and (where PyTorch is installed) from `torch.optim` itself on the
same tiny model, never from the code under test.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import irkit
from irkit.frontend.dsl import DSLError, compile_source, find_model
from irkit.runtime.model import Model

ROOT = Path(__file__).resolve().parents[2]


def model_of(src: str, name: str = "m") -> Model:
    return Model(find_model(compile_source(src, f"{name}.irk"), name))


# ----- the lecture's example ----------------------------------------------------------------

LECTURE = """
model lecture {
  input x: f32
  input y: f32
  param w: f32 = constant(1)
  param b: f32 = zeros
  y_hat = w * x + b
  L = (y_hat - y) ** 2
  output L
  grad L wrt w, b
  train L with sgd(lr=0.01)
}
"""


def test_lecture_gradients():
    """y_hat = w x + b, L = (y_hat - y)^2 at x = 2, y = 5, w = 1, b = 0: y_hat = 2, L = 9,
    dL/dw = 2 (y_hat - y) x = -12, dL/db = 2 (y_hat - y) = -6."""
    m = model_of(LECTURE, "lecture")
    assert m.outputs == ["L", "d_w", "d_b"]
    out = m.forward(x=2.0, y=5.0)
    assert float(out["L"]) == 9.0
    assert float(out["d_w"]) == -12.0
    assert float(out["d_b"]) == -6.0


def test_lecture_train_step_is_one_sgd_step():
    m = model_of(LECTURE, "lecture")
    assert m.train_step(x=2.0, y=5.0) == {"loss": 9.0}
    assert float(m.variables["w"]) == pytest.approx(1 + 0.01 * 12, rel=1e-6)
    assert float(m.variables["b"]) == pytest.approx(0.01 * 6, rel=1e-6)
    # forward sees the updated params: y_hat = 1.12 * 2 + 0.06 = 2.3
    assert float(m.forward(x=2.0, y=5.0)["L"]) == pytest.approx((2.3 - 5) ** 2, rel=1e-5)


def test_caller_module_keeps_its_requests():
    top = compile_source(LECTURE, "lecture.irk")
    module = find_model(top, "lecture")
    model = Model(module)
    names = {op.name for op in module.walk()}
    assert "autodiff.grad" in names                  # the caller's module is untouched
    assert not any(op.name.startswith("autodiff.") for op in model.module.walk())


def test_load_model_expands_derivatives():
    m = irkit.load_model(ROOT / "examples" / "mlp.irk")
    names = [op.name for op in m.module.walk()]
    assert not any(n.startswith("autodiff.") for n in names)
    assert m.trainable and m.outputs == ["logits", "loss", "d_w1", "d_b2"]


# ----- one optimizer step against PyTorch's formulas --------------------------------------


def tiny_source(dtype: str, optimizer: str) -> str:
    """Least squares with a bias: pred = x w + b, loss = mean((pred - y)^2)."""
    return f"""
model tiny {{
  input x: {dtype}[N, 3]
  input y: {dtype}[N]
  param w: {dtype}[3] = normal(0.5, 3)
  param b: {dtype} = constant(0.25)
  pred = sum(x * w, axis=1) + b
  loss = mean((pred - y) ** 2)
  output loss
  train loss with {optimizer}
}}
"""


def tiny_grads(p: dict, x: np.ndarray, y: np.ndarray) -> tuple[float, dict]:
    """The loss and its gradient, derived by hand: d/dpred = 2 (pred - y) / N."""
    r = x @ p["w"] + p["b"] - y
    d = 2 * r / len(y)
    return float(np.mean(r ** 2)), {"w": x.T @ d, "b": d.sum()}


def sgd_ref(p, g, state, lr):
    return {k: p[k] - lr * g[k] for k in p}


def momentum_ref(p, g, state, lr, beta):
    """torch.optim.SGD(momentum=beta, dampening=0): the buffer starts as the first gradient."""
    out = {}
    for k in p:
        v = g[k] if k not in state else beta * state[k] + g[k]
        state[k] = v
        out[k] = p[k] - lr * v
    return out


def adam_ref(p, g, state, lr, beta1, beta2, eps):
    """torch.optim.Adam (amsgrad=False, weight_decay=0), single-tensor path."""
    t = state["step"] = state.get("step", 0) + 1
    out = {}
    for k in p:
        m = state[k + ".m"] = beta1 * state.get(k + ".m", 0.0) + (1 - beta1) * g[k]
        v = state[k + ".v"] = beta2 * state.get(k + ".v", 0.0) + (1 - beta2) * g[k] * g[k]
        step_size = lr / (1 - beta1 ** t)
        denom = np.sqrt(v) / np.sqrt(1 - beta2 ** t) + eps
        out[k] = p[k] - step_size * m / denom
    return out


def run_reference(model: Model, ref, hyper: dict, batches) -> tuple[list, dict, dict]:
    """The same steps in float64 numpy from the model's initial params."""
    p = {k: np.array(model.variables[k], np.float64) for k in ("w", "b")}
    state: dict = {}
    losses = []
    for x, y in batches:
        loss, g = tiny_grads(p, x.astype(np.float64), y.astype(np.float64))
        losses.append(loss)
        p = ref(p, g, state, **hyper)
    return losses, p, state


OPTIMIZERS = {
    "sgd": (sgd_ref, st.fixed_dictionaries({"lr": st.floats(0.001, 0.3)})),
    "momentum": (momentum_ref, st.fixed_dictionaries({"lr": st.floats(0.001, 0.2),
                                                      "beta": st.floats(0.0, 0.95)})),
    "adam": (adam_ref, st.fixed_dictionaries({"lr": st.floats(0.001, 0.3),
                                              "beta1": st.floats(0.0, 0.95),
                                              "beta2": st.floats(0.5, 0.9999),
                                              "eps": st.sampled_from([1e-8, 1e-6, 1e-3])})),
}


def _call(name: str, hyper: dict) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in hyper.items())})"


def _batches(seed: int, dtype, steps: int = 4):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=5).astype(dtype))
            for _ in range(steps)]


@pytest.mark.parametrize("name", list(OPTIMIZERS))
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_steps_match_numpy_reference(name, dtype, data):
    ref, hyper_st = OPTIMIZERS[name]
    hyper = data.draw(hyper_st)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    model = model_of(tiny_source(dtype, _call(name, hyper)), "tiny")
    batches = _batches(data.draw(st.integers(0, 1000)), np_dtype)
    want_losses, want, state = run_reference(model, ref, hyper, batches)
    tol = dict(rtol=2e-4, atol=1e-6) if dtype == "f32" else dict(rtol=1e-10, atol=1e-13)
    for (x, y), want_loss in zip(batches, want_losses):
        np.testing.assert_allclose(model.train_step(x=x, y=y)["loss"], want_loss, **tol)
    for k in ("w", "b"):
        assert model.variables[k].dtype == np_dtype
        np.testing.assert_allclose(model.variables[k], want[k], **tol)
    # the optimizer's state is in the model's variables, under documented names
    if name == "momentum":
        for k in ("w", "b"):
            np.testing.assert_allclose(model.variables[f"{k}.momentum_v"], state[k], **tol)
    if name == "adam":
        assert float(model.variables["adam.step"]) == len(batches)
        for k in ("w", "b"):
            np.testing.assert_allclose(model.variables[f"{k}.adam_m"], state[k + ".m"], **tol)
            np.testing.assert_allclose(model.variables[f"{k}.adam_v"], state[k + ".v"], **tol)


TORCH_CASES = [
    ("sgd", {"lr": 0.1}),
    ("momentum", {"lr": 0.05, "beta": 0.9}),
    ("adam", {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}),
    ("adam", {"lr": 0.2, "beta1": 0.5, "beta2": 0.9, "eps": 1e-3}),
]


@pytest.mark.parametrize("name,hyper", TORCH_CASES)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_steps_match_torch_optim(name, hyper, dtype):
    torch = pytest.importorskip("torch")
    np_dtype = np.float32 if dtype == "f32" else np.float64
    model = model_of(tiny_source(dtype, _call(name, hyper)), "tiny")
    tp = {k: torch.tensor(np.array(model.variables[k]), requires_grad=True) for k in ("w", "b")}
    params = [tp["w"], tp["b"]]
    if name == "sgd":
        opt = torch.optim.SGD(params, lr=hyper["lr"])
    elif name == "momentum":
        opt = torch.optim.SGD(params, lr=hyper["lr"], momentum=hyper["beta"])
    else:
        opt = torch.optim.Adam(params, lr=hyper["lr"], betas=(hyper["beta1"], hyper["beta2"]),
                               eps=hyper["eps"])
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "f32" else dict(rtol=1e-12, atol=1e-14)
    for x, y in _batches(7, np_dtype, steps=5):
        opt.zero_grad()
        pred = (torch.from_numpy(x) * tp["w"]).sum(dim=1) + tp["b"]
        loss = ((pred - torch.from_numpy(y)) ** 2).mean()
        loss.backward()
        opt.step()
        got = model.train_step(x=x, y=y)["loss"]
        np.testing.assert_allclose(got, loss.item(), **tol)
    for k in ("w", "b"):
        np.testing.assert_allclose(model.variables[k], tp[k].detach().numpy(), **tol)
    state = opt.state
    if name == "momentum":
        np.testing.assert_allclose(model.variables["w.momentum_v"],
                                   state[tp["w"]]["momentum_buffer"].numpy(), **tol)
    if name == "adam":
        assert float(model.variables["adam.step"]) == float(state[tp["w"]]["step"])
        np.testing.assert_allclose(model.variables["w.adam_m"],
                                   state[tp["w"]]["exp_avg"].numpy(), **tol)
        np.testing.assert_allclose(model.variables["w.adam_v"],
                                   state[tp["w"]]["exp_avg_sq"].numpy(), **tol)


# ----- training does what it is for ----------------------------------------------------------


def test_train_step_reduces_the_loss_of_the_examples():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 64)).astype(np.float32)
    labels = rng.integers(0, 10, size=32).astype(np.int32)
    mlp = irkit.load_model(ROOT / "examples" / "mlp.irk")
    before = float(mlp.forward(x=x, labels=labels)["loss"])
    losses = [float(mlp.train_step(x=x, labels=labels)["loss"]) for _ in range(30)]
    assert losses[0] == pytest.approx(before, rel=1e-6)    # the loss before the update
    assert float(mlp.forward(x=x, labels=labels)["loss"]) < 0.5 * before
    assert all(b < a for a, b in zip(losses, losses[1:]))

    xs = (rng.random(size=(16, 784)) / 10).astype(np.float32)    # like scaled pixels
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=16)]
    logreg = irkit.load_model(ROOT / "examples" / "logreg.irk")
    first = float(logreg.train_step(x=xs, y=y)["loss"])
    assert first == pytest.approx(np.log(10), rel=1e-6)     # zero weights: uniform
    for _ in range(10):
        last = float(logreg.train_step(x=xs, y=y)["loss"])
    assert last < first


def test_train_step_through_an_if():
    """The copied forward ops include the switches and merge an `if` becomes."""
    m = model_of("""
model m {
  input x: f32[4]
  param w: f32[4] = ones
  h = if sum(x) > 0 { x * w } else { x * w * w }
  loss = sum(h * h)
  output loss
  train loss with sgd(0.05)
}""")
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    m.train_step(x=x)
    # sum(x) > 0: loss = sum((x w)^2), d/dw = 2 x^2 w, w = 1 - 0.05 * 2 x^2
    np.testing.assert_allclose(m.variables["w"], 1 - 0.1 * x * x, rtol=1e-6)
    m.variables["w"] = np.ones(4)
    m.train_step(x=-x)
    # sum(x) < 0: loss = sum(x^2 w^4), d/dw = 4 x^2 w^3
    np.testing.assert_allclose(m.variables["w"], 1 - 0.2 * x * x, rtol=1e-6)


def test_params_that_are_not_floats_are_not_trained():
    m = model_of("""
model m {
  input x: f32[2]
  param w: f32[2] = ones
  param k: i32[2] = ones
  loss = sum(x * w * cast(k, f32))
  output loss
  train loss with momentum(0.5)
}""")
    m.train_step(x=np.array([1.0, 2.0], np.float32))
    assert m.variables["k"].tolist() == [1, 1]
    np.testing.assert_allclose(m.variables["w"], [0.5, 0.0])
    assert sorted(m.variables) == ["k", "w", "w.momentum_v"]


@pytest.mark.parametrize("engine", ["interpreter", "so"])
def test_train_digits_example_reaches_its_targets(engine, tmp_path, capsys):
    pytest.importorskip("sklearn")
    if engine == "so" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to link the shared library")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import train_digits
    finally:
        sys.path.remove(str(ROOT / "examples"))
    assert train_digits.main(["--engine", engine, "--build-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "logreg: " in out and "mlp: " in out and "MISSED" not in out


# ----- errors ----------------------------------------------------------------------------------


def test_train_step_without_a_train_clause():
    m = irkit.load_model(ROOT / "examples" / "attention.irk")
    assert not m.trainable
    with pytest.raises(ValueError, match=r"model 'attention' has no train clause"):
        m.train_step(x=np.zeros((1, 2, 32), np.float32))


def test_train_step_checks_its_inputs():
    m = model_of(LECTURE, "lecture")
    with pytest.raises(ValueError, match=r"lecture.train_step: missing input 'y'"):
        m.train_step(x=1.0)


def test_grad_of_a_non_scalar_is_located_at_the_dsl_line():
    src = "model m {\n  input x: f32[3]\n  param w: f32[3] = ones\n  h = x * w\n" \
          "  output h\n  grad h wrt w\n}\n"
    with pytest.raises(DSLError) as info:
        compile_source(src, "m.irk")
    assert info.value.render().splitlines() == [
        "m.irk:6:8: error: grad needs a scalar float value, but 'h' is f32[3]",
        "  grad h wrt w",
        "       ^"]
