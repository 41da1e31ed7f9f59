"""graph-fold-batchnorm keeps what inference computes (examples/conv_bn.irk, the forward of
examples/cnn.irk with random running statistics) and leaves training steps alone.

The oracle is the unfolded model run by the interpreter. Tolerance: folding moves the scale
s = gamma / sqrt(var + eps) from the convolution's sum onto each of its C*KH*KW <= 72 terms
and the mean into the shift, so each output differs by a few roundings of f32 relative to the
sum of the terms' magnitudes (72 * 2^-24 ~ 4e-6 of values of size ~1-10, and the cancelling
`z - mean` of the unfolded form loses no more): rtol = 1e-5 with atol = 1e-5 * max|y|.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irkit.dialects.graph import BatchNormOp, Conv2dOp
from irkit.frontend.dsl import compile_file, model_modules
from irkit.ir import Operation
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all
from irkit.runtime.model import Model
from irkit.symbols import lookup_symbol_in

ROOT = Path(__file__).resolve().parents[2]

#: where the fold may run: just before `autodiff` (derivative requests still there) or just
#: after it (training steps expanded into assigns)
PLACES = ["before-autodiff", "after-autodiff"]
FOLD = "graph-fold-batchnorm"


def fold_pm(place: str, stop: str = pipeline.DEV_STAGE, **options) -> PassManager:
    """The pipeline table's passes up to stage `stop` with the fold at `place` (the table's
    own is after autodiff)."""
    register_all()
    names = pipeline.passes_between(None, stop, disable=[FOLD]).split(",")
    i = names.index("autodiff") + (place == "after-autodiff")
    return PassManager.parse(",".join(names[:i] + ["graph-fold-batchnorm"] + names[i:]),
                             **options)


def folded(module: Operation, place: str) -> Operation:
    out = module.clone()
    fold_pm(place).run(out)
    return out


def count(module: Operation, fn: str, cls) -> int:
    return sum(1 for op in lookup_symbol_in(module, fn).walk() if isinstance(op, cls))


def model(name: str) -> Operation:
    return model_modules(compile_file(str(ROOT / "examples" / f"{name}.irk")))[name]


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max(),
                               err_msg=what)


@pytest.mark.parametrize("place", PLACES)
def test_conv_bn_example_unchanged(place):
    module = model("conv_bn")
    after = folded(module, place)
    assert count(module, "forward", BatchNormOp) == 2
    assert count(after, "forward", BatchNormOp) == 0
    assert count(after, "forward", Conv2dOp) == 2
    x = np.random.default_rng(0).normal(size=(4, 3, 8, 8)).astype(np.float32)
    assert_close(Model(after).forward(x=x)["y"], Model(module, disable=[FOLD]).forward(x=x)["y"],
                 "y")


def _random_statistics(m: Model, rng) -> None:
    """Running statistics as a trained model has them (cnn.irk starts from 0 and 1)."""
    m.variables["mu1"] = rng.normal(0.0, 0.5, 8)
    m.variables["var1"] = rng.uniform(0.2, 3.0, 8)
    m.variables["g1"] = rng.uniform(0.5, 1.5, 8)
    m.variables["b1"] = rng.normal(0.0, 0.3, 8)


@pytest.mark.parametrize("place", PLACES)
def test_cnn_forward_folded_train_step_kept(place):
    module = model("cnn")
    after = folded(module, place)
    assert count(after, "forward", BatchNormOp) == 0
    assert count(after, "train_step", BatchNormOp) == 1     # the training step assigns them
    plain, fused = Model(module, disable=[FOLD]), Model(after)
    for m in (plain, fused):
        _random_statistics(m, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    images = rng.normal(size=(6, 1, 12, 12)).astype(np.float32)
    labels = rng.integers(0, 10, 6).astype(np.int32)
    want = plain.forward(images=images, labels=labels)
    got = fused.forward(images=images, labels=labels)
    assert_close(got["logits"], want["logits"], "logits")
    np.testing.assert_array_equal(got["pred"], want["pred"])
    # The training step is the unfolded one: the same losses, bit for bit.
    for _ in range(3):
        assert fused.train_step(images=images, labels=labels)["loss"] == \
            plain.train_step(images=images, labels=labels)["loss"]


def test_compiled_forward_matches_interpreter():
    """The folded graph also compiles: the JIT engine, whose pipeline table folds after
    `autodiff`, computes conv_bn.irk's forward as the unfolded interpreter does."""
    assert FOLD in pipeline.passes_between("graph", "autodiff")
    module = model("conv_bn")
    jit = Model(module, engine="jit")
    x = np.random.default_rng(3).normal(size=(4, 3, 8, 8)).astype(np.float32)
    assert_close(jit.forward(x=x)["y"], Model(module, disable=[FOLD]).forward(x=x)["y"], "y")
