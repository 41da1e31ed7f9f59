"""The Model object (dev mode): signature from the IR, input checks, variables."""

from __future__ import annotations

import numpy as np
import pytest

import irkit
from irkit.runtime.model import Model

MODULE = """
module @lin {
  graph.variable @w : tensor<3x2xf32> init normal {seed = 7 : i64, std = 5.000000e-01 : f64}
  graph.variable @steps : tensor<i32> init zeros
  func.func @forward(%x: tensor<?x3xf32> {graph.dims = ["N", 3], graph.name = "x"},
                     %lab: tensor<?xi32> {graph.dims = ["N"], graph.name = "labels"})
      -> (tensor<?x2xf32> {graph.name = "y"}, tensor<?xi32> {graph.name = "lab2"}) {
    %w = graph.read @w : tensor<3x2xf32>
    %y = graph.matmul %x, %w : (tensor<?x3xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
    %two = graph.constant dense<2> : tensor<i32>
    %l2 = graph.mul %lab, %two : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
    %s = graph.read @steps : tensor<i32>
    %one = graph.constant dense<1> : tensor<i32>
    %s1 = graph.add %s, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    graph.assign @steps, %s1 : tensor<i32>
    return %y, %l2 : tensor<?x2xf32>, tensor<?xi32>
  }
}
"""


@pytest.fixture
def model():
    pytest.importorskip("irkit.dialects.graph.matmul")       # graph.matmul
    return Model(irkit.parse_module(MODULE))


def test_signature_comes_from_the_ir(model):
    assert [s.name for s in model.inputs] == ["x", "labels"]
    assert model.inputs[0].dims == ("N", 3)
    assert model.inputs[0].describe() == "f32[N, 3]"
    assert model.outputs == ["y", "lab2"]
    assert "lin(x: f32[N, 3], labels: i32[N]) -> y, lab2" in repr(model)


def test_forward_matches_numpy_and_initializer(model):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.random.default_rng(7).normal(0.0, 0.5, (3, 2)).astype(np.float32)
    out = model.forward(x=x, labels=np.array([1, 4]))
    np.testing.assert_allclose(out["y"], x @ w, rtol=1e-6)
    assert out["lab2"].dtype == np.int32 and out["lab2"].tolist() == [2, 8]


def test_variables_persist_across_calls_and_are_assignable(model):
    x = np.ones((1, 3), np.float32)
    for _ in range(3):
        model.forward(x=x, labels=[0])
    assert int(model.variables["steps"]) == 3
    model.variables["w"] = np.zeros((3, 2))
    assert model.variables["w"].dtype == np.float32
    assert not model.forward(x=x, labels=[0])["y"].any()
    with pytest.raises(ValueError, match=r"variable 'w' has shape \[3, 2\], got \[2, 3\]"):
        model.variables["w"] = np.zeros((2, 3))
    with pytest.raises(ValueError, match="variable 'steps' holds int32, got float64"):
        model.variables["steps"] = 1.5
    with pytest.raises(KeyError, match="no variable 'v'"):
        model.variables["v"] = 1
    assert sorted(model.variables) == ["steps", "w"]


def test_a_variable_given_in_another_memory_order_is_stored_row_major():
    """Compiled code reads a variable row-major: one assigned from a column-major (or
    otherwise strided) array is stored as a row-major copy, and the compiled step takes it
    (it had kept numpy's order, and every later call refused the variable)."""
    pytest.importorskip("irkit.dialects.graph.matmul")
    jit = Model(irkit.parse_module(MODULE), engine="jit")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
    for given in (np.asfortranarray(w), np.ascontiguousarray(w.T).T, w.repeat(2, 1)[:, ::2]):
        jit.variables["w"] = given
        assert jit.variables["w"].flags.c_contiguous
        np.testing.assert_allclose(jit.forward(x=x, labels=[1, 2])["y"], x @ w, rtol=1e-6)


@pytest.mark.parametrize("inputs,message", [
    (dict(x=np.ones((2, 3))), r"lin.forward: missing input 'labels' \(expects x, labels\)"),
    (dict(x=np.ones((2, 3)), labels=[1, 2], z=3), "unknown input 'z'"),
    (dict(x=np.ones((2, 4)), labels=[1, 2]),
     r"input 'x' expects f32\[N, 3\], got shape \[2, 4\] \(axis 1 is 4, not 3\)"),
    (dict(x=np.ones(3), labels=[1, 2]), r"input 'x' expects f32\[N, 3\], got an array of shape"),
    (dict(x=np.ones((2, 3)), labels=[1, 2, 3]),
     "dimension N is 2 in input 'x' but 3 in input 'labels'"),
    (dict(x=np.ones((2, 3)), labels=[0.5, 1.0]),
     "input 'labels' expects i32 elements, got float64"),
])
def test_bad_inputs_are_value_errors(model, inputs, message):
    with pytest.raises(ValueError, match=message):
        model.forward(**inputs)


def test_unknown_engine_is_an_error(model):
    with pytest.raises(ValueError, match="unknown engine 'gpu'; available: 'interpreter'"):
        Model(model.module, engine="gpu")


TRAINABLE = """
module @fit {
  graph.variable @w : tensor<2xf64> init ones
  func.func @forward(%x: tensor<2xf64> {graph.dims = [2], graph.name = "x"})
      -> (tensor<f64> {graph.name = "loss"}, tensor<2xf64> {graph.name = "d_w"}) {
    %w = graph.read @w : tensor<2xf64>
    %p = graph.mul %x, %w : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %l = graph.reduce_sum %p {axes = array<i64>, keepdims = false} : (tensor<2xf64>) -> tensor<f64>
    %g = autodiff.grad %l wrt %w : (tensor<f64>) -> tensor<2xf64>
    return %l, %g : tensor<f64>, tensor<2xf64>
  }
  func.func @train_step(%x: tensor<2xf64> {graph.dims = [2], graph.name = "x"})
      -> (tensor<f64> {graph.name = "loss"}) {
    %w = graph.read @w : tensor<2xf64>
    %p = graph.mul %x, %w : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    %l = graph.reduce_sum %p {axes = array<i64>, keepdims = false} : (tensor<2xf64>) -> tensor<f64>
    %g = autodiff.grad %l wrt %w : (tensor<f64>) -> tensor<2xf64>
    %lr = graph.constant dense<0.5> : tensor<f64>
    %s = graph.mul %lr, %g : (tensor<f64>, tensor<2xf64>) -> tensor<2xf64>
    %w1 = graph.sub %w, %s : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    graph.assign @w, %w1 : tensor<2xf64>
    return %l : tensor<f64>
  }
}
"""


def test_train_step_from_ir_text():
    """A module written by hand trains as a DSL one does: the entry points and their names
    come from the IR, derivative requests are expanded on a copy."""
    module = irkit.parse_module(TRAINABLE)
    m = Model(module)
    assert m.trainable and m.outputs == ["loss", "d_w"]
    x = np.array([2.0, -1.0])
    out = m.forward(x=x)
    assert float(out["loss"]) == 1.0 and out["d_w"].tolist() == [2.0, -1.0]
    assert m.train_step(x=x) == {"loss": 1.0}
    assert m.variables["w"].tolist() == [0.0, 1.5]               # w - 0.5 x
    assert float(m.forward(x=x)["loss"]) == -1.5
    assert any(op.name == "autodiff.grad" for op in module.walk())     # the caller's copy


def test_train_step_needs_a_train_step(model):
    assert not model.trainable
    with pytest.raises(ValueError, match="model 'lin' has no train clause"):
        model.train_step(x=np.ones((1, 3)), labels=[0])
