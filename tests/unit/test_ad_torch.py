"""irkit's gradients agree with PyTorch's on the example models.

Each model of `examples/` is written again in PyTorch by hand from its `.irk` source, with
the same parameter values (read from `Model.variables`), and its gradients are compared:

- the MLP (`grad loss wrt w1, b2` as the file states it, and every param through an
  `autodiff.grad` added to the compiled `@forward`, see `forward_grads`);
- the CNN (conv2d, batchnorm, max and average pooling, reshape, cross entropy);
- the transformer block (layernorm, split heads, softmax attention, concat, gelu, slicing,
  mean), whose outputs are probed with random seeds: `sum(y * s1) + ...`;
- the gated model (the lecture's `tf.cond`), in both branches.

The DSL's `grad L wrt ...` statement is added to each source text, so gradients come out of
`load_model(...).forward` as `d_<name>`. Models run twice: as written (f32, compared with
float64 PyTorch to 1e-5 of the largest gradient entry) and with every f32 made f64 (to 1e-9).
One Adam step of the MLP (`Model.train_step`) matches `torch.optim.Adam`.

Skipped when PyTorch is not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import irkit  # noqa: E402
from irkit.attributes import ArrayAttr, DictionaryAttr, StringAttr, TypeAttr  # noqa: E402
from irkit.builder import Builder  # noqa: E402
from irkit.dialects.autodiff import GradOp  # noqa: E402
from irkit.frontend.dsl import compile_source, model_modules  # noqa: E402
from irkit.runtime.model import Model  # noqa: E402
from irkit.symbols import lookup_symbol_in  # noqa: E402
from irkit.types import FunctionType  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PRECISIONS = {"f32": 1e-5, "f64": 1e-9}


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def load(name: str, precision: str, extra: str = "", before: str | None = None) -> Model:
    """The model of `examples/<name>.irk`, with `extra` lines added to its body (before the
    line that starts with `before`, or at the end) and every f32 made `precision`."""
    text = (EXAMPLES / f"{name}.irk").read_text()
    lines = text.rstrip().splitlines()
    if before is None:
        end = max(i for i, line in enumerate(lines) if line.strip() == "}")
    else:
        end = next(i for i, line in enumerate(lines) if line.strip().startswith(before))
    lines[end:end] = ["  " + line for line in extra.strip().splitlines()]
    text = "\n".join(lines) + "\n"
    if precision == "f64":
        text = re.sub(r"\bf32\b", "f64", text)
    top = compile_source(text, f"{name}.irk")
    return Model(model_modules(top)[name])


def params(model: Model, dtype=torch.float64) -> dict:
    """The model's parameter values as PyTorch leaves that require gradients."""
    return {n: torch.tensor(np.asarray(v), dtype=dtype, requires_grad=True)
            for n, v in model.variables.items() if "." not in n}


def assert_grads(got: dict, want: dict, rtol: float) -> None:
    for name, w in want.items():
        g = np.asarray(got[f"d_{name}"], dtype=np.float64)
        w = w.detach().numpy()
        assert g.shape == w.shape, f"d_{name}: shape {g.shape}, torch {w.shape}"
        scale = max(float(np.max(np.abs(w), initial=0.0)), 1e-30)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"d_{name} differs from PyTorch's")


def torch_grads(loss, leaves: dict) -> dict:
    names = list(leaves)
    grads = torch.autograd.grad(loss, [leaves[n] for n in names], allow_unused=True)
    return {n: (g if g is not None else torch.zeros_like(leaves[n]))
            for n, g in zip(names, grads)}


def forward_grads(module, of: str, wrt: list[str]) -> Model:
    """The compiled model `module` whose `@forward` returns instead the gradients of its
    output `of` with respect to the params (or inputs) `wrt`, as outputs `d_<name>`: an
    `autodiff.grad` inserted before the return, with respect to the `graph.read` results
    (or the arguments), which `Model` expands with the autodiff pass."""
    fn = lookup_symbol_in(module, "forward")
    block = fn.regions[0].blocks[0]
    ret = block.terminator
    ftype = fn.properties["function_type"].value
    res_attrs = fn.properties["res_attrs"]
    outputs = [d.value["graph.name"].value for d in res_attrs]
    values = {op.properties["variable"].root: op.results[0]
              for op in fn.walk() if op.name == "graph.read"}
    for i, d in enumerate(fn.properties["arg_attrs"]):
        values[d.value["graph.name"].value] = block.args[i]
    xs = [values[n] for n in wrt]
    grad = GradOp.build([ret.operands[outputs.index(of)]], [], xs,
                        result_types=[x.type for x in xs])
    Builder.before(ret).insert(grad)
    ret.set_operands(list(grad.results))
    fn.properties["function_type"] = TypeAttr(FunctionType(list(ftype.inputs),
                                                           [x.type for x in xs]))
    fn.properties["res_attrs"] = ArrayAttr([DictionaryAttr({"graph.name": StringAttr(f"d_{n}")})
                                            for n in wrt])
    irkit.verify(module)
    return Model(module)


def _np_dtype(precision: str):
    return np.float32 if precision == "f32" else np.float64


# ---------------------------------------------------------------------------------------------
# MLP
# ---------------------------------------------------------------------------------------------

MLP_PARAMS = ["w1", "b1", "w2", "b2"]


def mlp_torch(p: dict, x, labels):
    logits = F.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return logits, F.cross_entropy(logits, labels)


def _mlp_batch(precision: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(8, 64)).astype(_np_dtype(precision))
    labels = rng.integers(0, 10, size=8).astype(np.int32)
    return x, labels


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mlp_dsl_grad(precision):
    """`grad loss wrt w1, b2`, as examples/mlp.irk states it."""
    model = load("mlp", precision)
    x, labels = _mlp_batch(precision)
    out = model.forward(x=x, labels=labels)
    p = params(model)
    logits, loss = mlp_torch(p, torch.tensor(x, dtype=torch.float64),
                             torch.tensor(labels, dtype=torch.long))
    rtol = PRECISIONS[precision]
    np.testing.assert_allclose(out["loss"], loss.item(), rtol=rtol)
    np.testing.assert_allclose(out["logits"], logits.detach().numpy(), rtol=rtol,
                               atol=rtol * float(logits.detach().abs().max()))
    assert_grads(out, torch_grads(loss, {n: p[n] for n in ("w1", "b2")}), rtol)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mlp_all_params_through_compiled_forward(precision):
    """Every param and the input, through an autodiff.grad added to the compiled @forward."""
    text = (EXAMPLES / "mlp.irk").read_text()
    if precision == "f64":
        text = re.sub(r"\bf32\b", "f64", text)
    module = model_modules(compile_source(text, "mlp.irk"))["mlp"]
    model = forward_grads(module, "loss", MLP_PARAMS + ["x"])
    x, labels = _mlp_batch(precision, seed=1)
    out = model.forward(x=x, labels=labels)
    p = params(model)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    _, loss = mlp_torch(p, xt, torch.tensor(labels, dtype=torch.long))
    assert_grads(out, torch_grads(loss, {**p, "x": xt}), PRECISIONS[precision])


# ---------------------------------------------------------------------------------------------
# CNN
# ---------------------------------------------------------------------------------------------

CNN_PARAMS = ["k1", "mu1", "var1", "g1", "b1", "k2", "w", "b"]


def cnn_torch(p: dict, images, labels):
    def channels(v):
        return v[None, :, None, None]

    def block(x, k, mu, var, g, b):
        # inference-mode batchnorm by hand: F.batch_norm takes no gradient for mu and var
        y = F.conv2d(x, k, padding=1)
        return F.relu((y - channels(mu)) / torch.sqrt(channels(var) + 1e-5) * channels(g)
                      + channels(b))
    h1 = F.max_pool2d(block(images, p["k1"], p["mu1"], p["var1"], p["g1"], p["b1"]), 2)
    h2 = F.relu(F.conv2d(h1, p["k2"], stride=1))
    p2 = F.avg_pool2d(h2, kernel_size=2, stride=2)
    logits = p2.reshape(-1, 64) @ p["w"] + p["b"]
    return F.cross_entropy(logits, labels)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_cnn(precision):
    model = load("cnn", precision, "grad loss wrt " + ", ".join(CNN_PARAMS + ["images"]))
    rng = np.random.default_rng(2)
    images = rng.normal(size=(4, 1, 12, 12)).astype(_np_dtype(precision))
    labels = rng.integers(0, 10, size=4).astype(np.int32)
    # The running statistics are params too: move them off their initial 0 and 1.
    model.variables["mu1"] = rng.normal(scale=0.1, size=8)
    model.variables["var1"] = rng.uniform(0.5, 2.0, size=8)
    out = model.forward(images=images, labels=labels)
    p = params(model)
    it = torch.tensor(images, dtype=torch.float64, requires_grad=True)
    loss = cnn_torch(p, it, torch.tensor(labels, dtype=torch.long))
    np.testing.assert_allclose(out["loss"], loss.item(), rtol=PRECISIONS[precision])
    assert_grads(out, torch_grads(loss, {**p, "images": it}), PRECISIONS[precision])


# ---------------------------------------------------------------------------------------------
# Transformer block
# ---------------------------------------------------------------------------------------------

ATTENTION_PARAMS = ["wq", "wk", "wv", "wo", "ln1_g", "ln1_b", "ln2_g", "ln2_b", "w1", "b1",
                    "w2", "b2"]
ATTENTION_PROBE = """
input s1: f32[B, T, 32]
input s2: f32[B, 32]
input s3: f32[B, 32]
probe = sum(y * s1) + sum(first * s2) + sum(pooled * s3)
grad probe wrt x, """ + ", ".join(ATTENTION_PARAMS)


def attention_torch(p: dict, x):
    def head(q, k, v):
        return F.softmax(q @ k.transpose(1, 2) * 0.25, dim=-1) @ v

    def self_attention(x):
        q1, q2 = torch.split(x @ p["wq"], 16, dim=2)
        k1, k2 = torch.split(x @ p["wk"], 16, dim=2)
        v1, v2 = torch.split(x @ p["wv"], 16, dim=2)
        return torch.cat([head(q1, k1, v1), head(q2, k2, v2)], dim=2) @ p["wo"]

    ln = F.layer_norm
    h = x + self_attention(ln(x, (32,), p["ln1_g"], p["ln1_b"], eps=1e-5))
    y = h + F.gelu(ln(h, (32,), p["ln2_g"], p["ln2_b"], eps=1e-5) @ p["w1"] + p["b1"],
                   approximate="tanh") @ p["w2"] + p["b2"]
    return y, y[:, 0], y.mean(dim=1)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_attention(precision):
    model = load("attention", precision, ATTENTION_PROBE, before="output")
    rng = np.random.default_rng(3)
    dt = _np_dtype(precision)
    x = rng.normal(size=(2, 5, 32)).astype(dt)
    s1, s2, s3 = (rng.normal(size=s).astype(dt) for s in ((2, 5, 32), (2, 32), (2, 32)))
    # Move the layernorm params off ones and zeros so their gradients mean something.
    for n in ("ln1_g", "ln2_g"):
        model.variables[n] = rng.uniform(0.5, 1.5, size=32)
    for n in ("ln1_b", "ln2_b", "b1", "b2"):
        model.variables[n] = rng.normal(scale=0.1, size=model.variables[n].shape)
    out = model.forward(x=x, s1=s1, s2=s2, s3=s3)
    p = params(model)
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y, first, pooled = attention_torch(p, xt)
    t = {n: torch.tensor(v, dtype=torch.float64) for n, v in (("s1", s1), ("s2", s2),
                                                            ("s3", s3))}
    probe = (y * t["s1"]).sum() + (first * t["s2"]).sum() + (pooled * t["s3"]).sum()
    rtol = PRECISIONS[precision]
    np.testing.assert_allclose(out["y"], y.detach().numpy(), rtol=rtol,
                               atol=rtol * float(y.detach().abs().max()))
    assert_grads(out, torch_grads(probe, {**p, "x": xt}), rtol)


# ---------------------------------------------------------------------------------------------
# The gated model, both branches
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("branch", ["then", "else"])
def test_gate_both_branches(precision, branch):
    model = load("gate", precision, "input s: f32[N]\nprobe = sum(out * s)\n"
                                    "grad probe wrt x, y, z", before="output")
    rng = np.random.default_rng(4)
    dt = _np_dtype(precision)
    x, y, z, s = (rng.normal(size=6).astype(dt) for _ in range(4))
    if branch == "then":
        y = y + dt(10)                      # sum(x) < sum(y): out = x + z
    else:
        x = x + dt(10)                      # out = y * y
    out = model.forward(x=x, y=y, z=z, s=s)
    xt, yt, zt = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y, z))
    o = xt + zt if xt.sum() < yt.sum() else yt * yt
    probe = (o * torch.tensor(s, dtype=torch.float64)).sum()
    np.testing.assert_allclose(out["out"], o.detach().numpy(), rtol=PRECISIONS[precision])
    assert_grads(out, torch_grads(probe, {"x": xt, "y": yt, "z": zt}), PRECISIONS[precision])


# ---------------------------------------------------------------------------------------------
# One Adam step
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", PRECISIONS)
def test_mlp_adam_steps_match_torch(precision):
    """`train loss with adam(lr=1e-3)`: two steps of Model.train_step against
    torch.optim.Adam (default betas and eps) from the same parameters; the second step
    checks the bias correction's step count."""
    model = load("mlp", precision)
    assert model.trainable
    p = params(model)
    opt = torch.optim.Adam(list(p.values()), lr=1e-3)
    rtol = PRECISIONS[precision]
    for step in range(2):
        x, labels = _mlp_batch(precision, seed=10 + step)
        got = model.train_step(x=x, labels=labels)
        opt.zero_grad()
        _, loss = mlp_torch(p, torch.tensor(x, dtype=torch.float64),
                            torch.tensor(labels, dtype=torch.long))
        loss.backward()
        opt.step()
        np.testing.assert_allclose(got["loss"], loss.item(), rtol=rtol,
                                   err_msg=f"loss before step {step + 1}")
        for n, t in p.items():
            want = t.detach().numpy()
            np.testing.assert_allclose(
                model.variables[n], want, rtol=rtol, atol=rtol * float(np.max(np.abs(want))),
                err_msg=f"{n} after Adam step {step + 1}")
