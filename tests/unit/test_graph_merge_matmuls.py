"""graph-merge-matmuls keeps what models compute: attention.irk's forward, and a training
run whose losses and parameters match those of the unmerged model step for step.

The oracle is the same model without the pass, run by the interpreter (and, for training, by
the compiled JIT engine as well). Tolerance: the merged product computes every output
element as the same K-term dot product as before; only the BLAS kernel that numpy picks for
the wider N may add the terms in another order, a difference of at most K * 2^-24 relative to
the sum of |x||w| (about 2e-6 for K = 32). Layernorm, softmax and the residual adds keep it at
that scale, hence rtol = atol = 1e-5 on outputs of size ~1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irkit.dialects.graph import ConcatOp, MatmulOp, SplitOp
from irkit.frontend.dsl import compile_file, compile_source, find_model, model_modules
from irkit.ir import Operation
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all
from irkit.runtime.model import Model
from irkit.symbols import lookup_symbol_in

ROOT = Path(__file__).resolve().parents[2]
TOL = dict(rtol=1e-5, atol=1e-5)


MERGE = "graph-merge-matmuls"


def merged(module: Operation) -> Operation:
    """A copy of a model's module taken to the dev stage by the pipeline table, which runs
    the merge just before `autodiff` (the backward graph is then built from the merged
    forward)."""
    assert MERGE in pipeline.passes_between(None, pipeline.DEV_STAGE)
    out = module.clone()
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(out)
    return out


def count(module: Operation, fn: str, cls) -> int:
    f = lookup_symbol_in(module, fn)
    return sum(1 for op in f.walk() if isinstance(op, cls))


def test_attention_forward_unchanged():
    module = model_modules(compile_file(str(ROOT / "examples" / "attention.irk")))["attention"]
    after = merged(module)
    assert count(module, "forward", MatmulOp) - count(after, "forward", MatmulOp) == 2
    assert count(after, "forward", ConcatOp) == 2        # the weights', the heads' own
    x = np.random.default_rng(0).normal(size=(3, 5, 32)).astype(np.float32)
    want = Model(module, disable=[MERGE]).forward(x=x)
    got = Model(after).forward(x=x)
    assert want.keys() == got.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], **TOL, err_msg=k)


# Three products of one x: two of width 6 (q, k) and one of width 4 (v), so the split takes
# size operands; every weight is trained.
QKV = """
model qkv {
  input x: f32[B, 8]
  input t: f32[B, 6]
  param wq: f32[8, 6] = normal(0.3, 1)
  param wk: f32[8, 6] = normal(0.3, 2)
  param wv: f32[8, 4] = normal(0.3, 3)
  param wo: f32[4, 6] = normal(0.3, 4)
  y = tanh(x @ wq) * sigmoid(x @ wk) + (x @ wv) @ wo
  loss = mse(y, t)
  output y, loss
  train loss with sgd(lr=0.5)
}
"""


def _batches(n: int) -> list[dict]:
    """Batches of a learnable task: t a fixed linear map of x."""
    rng = np.random.default_rng(1)
    a = rng.normal(0.0, 0.3, size=(8, 6))
    xs = [rng.normal(size=(32, 8)) for _ in range(n)]
    return [{"x": x.astype(np.float32), "t": (x @ a).astype(np.float32)} for x in xs]


def _train(model: Model, batches: list[dict]) -> list[float]:
    return [float(model.train_step(**b)["loss"]) for b in batches]


def test_training_matches_unmerged():
    module = find_model(compile_source(QKV, "qkv.irk"), "qkv")
    after = merged(module)
    # The forward's three products are one, and so is the backward's d_x: the gradient of
    # the concatenated weight comes out of one x^T @ d_cat, sliced back per variable.
    plain = Model(module, disable=[MERGE])
    assert count(plain.module, "train_step", MatmulOp) - \
        count(after, "train_step", MatmulOp) == 4
    assert count(after, "train_step", SplitOp) == 1
    batches = _batches(20)
    want = _train(plain, batches)
    fused = Model(after)
    got = _train(fused, batches)
    assert want[-1] < 0.8 * want[0]                       # it does learn
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for name in ("wq", "wk", "wv", "wo"):
        np.testing.assert_allclose(fused.variables[name], plain.variables[name], rtol=1e-4,
                                   atol=1e-5, err_msg=name)


def test_compiled_training_matches_interpreter():
    """The merged graph (concat of variable reads, sized split, the concat and slices of its
    backward) also lowers and compiles: the JIT engine, whose pipeline merges, trains as the
    unmerged interpreter does."""
    module = find_model(compile_source(QKV, "qkv.irk"), "qkv")
    jit = Model(module, engine="jit")
    batches = _batches(5)
    want = _train(Model(module, disable=[MERGE]), batches)
    np.testing.assert_allclose(_train(jit, batches), want, rtol=1e-4)


@pytest.mark.parametrize("min_rows, merges", [(16, True), (33, False)])
def test_min_rows_option(min_rows, merges):
    """32 rows of x: merged at the default threshold, not above it."""
    src = """
    func.func @f(%x: tensor<32x8xf32>, %a: tensor<8x4xf32>, %b: tensor<8x4xf32>)
        -> (tensor<32x4xf32>, tensor<32x4xf32>) {
      %ya = graph.matmul %x, %a : (tensor<32x8xf32>, tensor<8x4xf32>) -> tensor<32x4xf32>
      %yb = graph.matmul %x, %b : (tensor<32x8xf32>, tensor<8x4xf32>) -> tensor<32x4xf32>
      return %ya, %yb : tensor<32x4xf32>, tensor<32x4xf32>
    }
    """
    from irkit.parser import parse_module
    register_all()
    module = parse_module(src)
    PassManager.parse(f"graph-merge-matmuls{{min-rows={min_rows}}}").run(module)
    assert (count(module, "f", MatmulOp) == 1) is merges
