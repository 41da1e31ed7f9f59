"""linalg-fuse-elementwise-ops on whole models and on the ops it makes.

- The MLP's forward and train_step lowered to linalg: far fewer generics after the
  pass, no transpose left, and the interpreter gives the same outputs and variable updates
  bit for bit.
- A fused op whose extra output's map uses a reduction loop (inner or outer, as softmax and
  a bias gradient make it): the interpreter and the compiled loop nest both give numpy's
  values.
- Options and counts: `max-body-ops`, `fusions`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irkit.backends.llvm_cpu import compile_module
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.passes.linalg_fuse_elementwise import LinalgFuseElementwiseOps
from irkit.runtime.engines import InterpreterEngine
from irkit.symbols import lookup_symbol_in
from irkit.dialects.linalg import GenericOp, TransposeOp

from output_buffers import garbage_like

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _mlp_linalg():
    from irkit.frontend.dsl import compile_source, model_modules
    text = (EXAMPLES / "mlp.irk").read_text()
    module = model_modules(compile_source(text, "mlp.irk"))["mlp"]
    lower = "lower-graph-to-linalg{full=true},canonicalize,cse"    # the row without fusion
    PassManager.parse(f"{pipeline.passes_between(None, 'autodiff')},{lower}").run(module)
    return module


def _count(module, cls) -> int:
    return sum(isinstance(o, cls) for o in module.walk())


def _run_mlp(module, fn: str) -> tuple[dict, dict]:
    rng = np.random.default_rng(0)
    inputs = {"x": rng.normal(size=(8, 64)).astype(np.float32),
              "labels": rng.integers(0, 10, size=8).astype(np.int32)}
    engine = InterpreterEngine(module)
    store = {k: np.array(v[0], copy=True) for k, v in engine.variables().items()}
    return engine.run(fn, "mlp", inputs, store), store


@pytest.fixture(scope="module")
def mlp_modules():
    before = _mlp_linalg()
    after = parse_module(str(before))
    PassManager.parse("linalg-fuse-elementwise-ops,canonicalize,cse").run(after)
    after.verify()
    return before, after


def test_mlp_generics_are_fused(mlp_modules):
    before, after = mlp_modules
    assert _count(after, GenericOp) < _count(before, GenericOp) // 2
    assert _count(before, TransposeOp) > 0 and _count(after, TransposeOp) == 0


@pytest.mark.parametrize("fn", ["forward", "train_step"])
def test_mlp_results_are_unchanged(mlp_modules, fn):
    before, after = mlp_modules
    (want, want_vars), (got, got_vars) = _run_mlp(before, fn), _run_mlp(after, fn)
    assert want.keys() == got.keys() and want_vars.keys() == got_vars.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    for k in want_vars:
        np.testing.assert_array_equal(got_vars[k], want_vars[k], err_msg=k)


# An exp producer fused into a row sum and into a column sum, kept as an extra output whose
# map uses the reduction loop: inner (d1) in @rows, outer (d0) in @cols.
_EXTRA_OUTPUTS = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%a: tensor<?x5xf32>)
    -> (tensor<?xf32>, tensor<5xf32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x5xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x5xf32>
  %r0 = tensor.empty(%n) : tensor<?xf32>
  %fr = linalg.fill ins(%z : f32) outs(%r0 : tensor<?xf32>) -> tensor<?xf32>
  %c00 = tensor.empty() : tensor<5xf32>
  %fc = linalg.fill ins(%z : f32) outs(%c00 : tensor<5xf32>) -> tensor<5xf32>
  %x = linalg.exp ins(%a : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %rows = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x5xf32>) outs(%fr : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %y = linalg.negf ins(%a : tensor<?x5xf32>) outs(%e : tensor<?x5xf32>) -> tensor<?x5xf32>
  %cols = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1)>],
                          iterator_types = ["reduction", "parallel"]}
      ins(%y : tensor<?x5xf32>) outs(%fc : tensor<5xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<5xf32>
  return %rows, %cols, %x, %y : tensor<?xf32>, tensor<5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
"""


def _numpy_extra_outputs(a):
    x, y = np.exp(a), -a
    return [x.sum(axis=1, dtype=np.float32), y.sum(axis=0, dtype=np.float32), x, y]


def _fused_extra_outputs():
    module = parse_module(_EXTRA_OUTPUTS)
    fuse = LinalgFuseElementwiseOps()
    PassManager().add(fuse).run(module)
    module.verify()
    assert fuse.fusions == 2
    fused = [o for o in module.walk() if isinstance(o, GenericOp)]
    assert len(fused) == 2 and all(len(o.outputs) == 2 for o in fused)
    return module


@pytest.mark.parametrize("rows", [1, 3])
def test_extra_output_on_a_reduction_loop_interpreted(rows):
    module = _fused_extra_outputs()
    a = np.random.default_rng(rows).normal(size=(rows, 5)).astype(np.float32)
    got = Interpreter(module).call(lookup_symbol_in(module, "f"), [a])
    for g, w in zip(got, _numpy_extra_outputs(a)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


@pytest.mark.parametrize("rows", [1, 3])
def test_extra_output_on_a_reduction_loop_compiled(rows):
    """The loop nest stores the extra output at every iteration of the reduction loop it
    uses; the interpreter scatters it at every reduction step: both give every element."""
    module = _fused_extra_outputs()
    PassManager.parse(pipeline.passes_between("linalg", pipeline.compiled_stage())).run(module)
    jit = compile_module(module)
    a = np.random.default_rng(rows).normal(size=(rows, 5)).astype(np.float32)
    want = _numpy_extra_outputs(a)
    outs = [garbage_like(w) for w in want]
    jit["f"](a, *outs)
    for g, w in zip(outs, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_max_body_ops_bounds_the_fused_body():
    text = _EXTRA_OUTPUTS
    for limit, fusions in [(1, 0), (2, 2)]:
        module = parse_module(text)
        fuse = LinalgFuseElementwiseOps(max_body_ops=limit)
        PassManager().add(fuse).run(module)
        assert fuse.fusions == fusions
