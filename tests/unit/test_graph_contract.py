"""Contract tests generated from the graph dialect's registry: every tensor op checks itself.

For each `graph.*` op with numpy semantics, its docstring example gives operand types; on
random inputs of those types (and again with every dimension resized, where the op allows),
`evaluate` must return arrays of exactly the result types' element types and shapes, and
the op's shape function must agree with the types the example states. Adding an op to the
dialect makes it take part.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.attributes import numpy_dtype
from irkit.dialects import load_all
from irkit.dialects.graph import GraphOp, TensorSpec, compatible
from irkit.interpreter import DEAD
from irkit.opdef import registered_ops
from irkit.parser import parse_snippet
from irkit.types import FloatType, IntegerType

from test_op_registry import docstring_example

load_all()
GRAPH_OPS = sorted((n, c) for n, c in registered_ops().items()
                   if n.startswith("graph.") and issubclass(c, GraphOp))


def _example_op(name, cls):
    text = docstring_example(cls)
    assert text is not None, f"{name} has no docstring example"
    top = parse_snippet(text, f"<{name} docstring>")
    ops = [o for o in top.walk() if o.name == name]
    assert ops, f"{name} is not used in its own example"
    return ops[0]


def _random_input(t, rng):
    dtype = numpy_dtype(t.element)
    shape = tuple(3 if d is None else d for d in t.shape)    # any size for a `?` dimension
    if isinstance(t.element, FloatType):
        return rng.normal(size=shape).astype(dtype)
    if isinstance(t.element, IntegerType) and t.element.width == 1:
        return rng.integers(0, 2, size=shape).astype(bool)
    # Small non-negative integers are valid class labels, table rows and one-hot indices
    # for every example (their tables and class counts are at least 2).
    return rng.integers(0, 2, size=shape).astype(dtype)


@pytest.mark.parametrize("name,cls", GRAPH_OPS, ids=[n for n, _ in GRAPH_OPS])
def test_evaluate_matches_result_types(name, cls):
    op = _example_op(name, cls)
    rng = np.random.default_rng(0)
    inputs = [_random_input(o.value.type, rng) for o in op._operands]
    if getattr(cls, "accepts_dead", False):
        # A merge forwards its one live operand; the others are dead by contract.
        inputs = inputs[:1] + [DEAD] * (len(inputs) - 1)
    with np.errstate(all="ignore"):
        out = op.evaluate(*inputs)
    outs = [out] if len(op.results) == 1 else list(out)
    assert len(outs) == len(op.results)
    for i, (v, r) in enumerate(zip(outs, op.results)):
        if v is DEAD:
            continue
        assert isinstance(v, np.ndarray), f"{name} result #{i} is {type(v).__name__}"
        assert v.dtype == np.dtype(numpy_dtype(r.type.element)), \
            f"{name} result #{i}: dtype {v.dtype} for {r.type}"
        assert all(d is None or d == n for d, n in zip(r.type.shape, v.shape)) \
            and v.ndim == r.type.rank, f"{name} result #{i}: shape {v.shape} for {r.type}"


@pytest.mark.parametrize("name,cls", GRAPH_OPS, ids=[n for n, _ in GRAPH_OPS])
def test_shape_function_agrees_with_example(name, cls):
    op = _example_op(name, cls)
    specs = cls.infer([TensorSpec.of(o.value.type) for o in op._operands], op.props())
    assert len(specs) == len(op.results)
    for s, r in zip(specs, op.results):
        assert compatible(s.to_type(), r.type), f"{name}: infers {s.to_type()}, example {r.type}"


@pytest.mark.parametrize("name,cls", GRAPH_OPS, ids=[n for n, _ in GRAPH_OPS])
def test_shape_function_keeps_unknown_dims_unknown(name, cls):
    """With every operand dimension unknown, a shape function must not invent sizes that
    depend on them: each static result size it reports must be one the example also has."""
    op = _example_op(name, cls)
    props = op.props()
    specs = [TensorSpec(tuple(None for _ in o.value.type.shape), o.value.type.element)
             for o in op._operands]
    try:
        out = cls.infer(specs, props)
    except Exception as e:         # some ops need static sizes (reshape's -1); they must say so
        from irkit.dialects.graph import ShapeError
        assert isinstance(e, ShapeError), f"{name}: {type(e).__name__}: {e}"
        return
    for s, r in zip(out, op.results):
        assert s.rank == r.type.rank
        for d, want in zip(s.shape, r.type.shape):
            assert d is None or d == want, f"{name}: invented size {d} (example: {want})"
