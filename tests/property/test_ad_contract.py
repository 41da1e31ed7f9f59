"""Derivative contract tests generated from the graph dialect's registry.

For every graph op with a derivative rule (`vjp`, or `transpose` for `Linear` ops), its
docstring example is turned into a float64 function at random sizes (each `?` becomes one
size hypothesis draws), which asks `autodiff.grad` of the op's results (random seeds s) with
respect to each differentiable float operand and `autodiff.jvp` along random tangents v. After
`-p autodiff` (and again after `autodiff,canonicalize,cse`) the interpreter's answers must agree
with central finite differences of the op's own numpy `evaluate`, the reference semantics:

- forward mode: the tangent `J v` equals `(op(x + hv) - op(x - hv)) / 2h` elementwise;
- reverse mode: `(s^T J) . v` equals `s . (J v)` along random directions, per operand;
- second order: the jvp of the vjp (the rules' backward graph differentiated again) equals
  central differences of the vjp, so every rule builds only ops that have rules themselves.

Inputs have magnitudes in [0.5, 2] with random signs, away from the kinks of relu, abs and
max at 0; where that gives a non-finite result (log, sqrt, pow of a negative number, a
negative variance) every float operand is drawn positive instead. They are also kept away
from the kinks of max, min and max_pool at ties: the M float elements of all operands
together are pairwise at least 0.75/M apart, far more than the distance 2h|v_i - v_j| that
a finite-difference step moves two of them towards each other (h <= 1e-5, and a unit
direction over M elements has entries of about 1/sqrt(M)). Independent uniform draws would
not be: among the 401,408 elements of max_pool2d's example, two in a window come within
~1e-7 of each other every few hundred draws, and central differences across that tie
report a second derivative of 10^4 where the rule rightly gives 0. A table of extra examples
covers forms the docstrings do not (vector matmul, float labels, strides, keepdims).

A second group of tests keeps the registry honest: every graph op that touches floats has a
rule or says it is non-differentiable, and every integer operand of a differentiable op is
declared in `nondiff_operands` (or a gradient would try to flow into its producer).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import format_attr_entry, numpy_dtype
from irkit.ad_rules import Linear, NonDifferentiable, is_differentiable, nondiff_operands
from irkit.dialects import load_all
from irkit.dialects.graph import GraphOp, TensorSpec
from irkit.interpreter import interpret
from irkit.opdef import has_trait, registered_ops
from irkit.parser import parse_module, parse_snippet
from irkit.pass_manager import PassManager
from irkit.types import F64, FloatType, IntegerType, RankedTensorType
from irkit.verifier import verify

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_op_registry import docstring_example  # noqa: E402

load_all()
GRAPH_OPS = sorted((n, c) for n, c in registered_ops().items()
                   if n.startswith("graph.") and issubclass(c, GraphOp))
#: dataflow control flow makes DEAD values, which a function cannot return: the switch/merge
#: conditional is differentiated as a whole in test_ad_compositions.py
_DATAFLOW = {"graph.switch", "graph.merge"}

#: forms of ops their docstring example does not show, each (id, snippet)
EXTRA_EXAMPLES = [
    ("graph.matmul", "vector-matrix",
     "%y = graph.matmul %x, %w : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>"),
    ("graph.matmul", "matrix-vector",
     "%y = graph.matmul %x, %w : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?xf32>"),
    ("graph.matmul", "vector-vector",
     "%y = graph.matmul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>"),
    ("graph.matmul", "batch-broadcast",
     "%y = graph.matmul %x, %w : (tensor<2x?x3x4xf32>, tensor<4x5xf32>) -> tensor<2x?x3x5xf32>"),
    ("graph.matmul", "batch-both",
     "%y = graph.matmul %x, %w : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>"),
    ("graph.cross_entropy", "float-labels",
     "%l = graph.cross_entropy %x, %t : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<f32>"),
    ("graph.mse", "broadcast",
     "%l = graph.mse %p, %t : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<f32>"),
    ("graph.reduce_sum", "keepdims",
     "%r = graph.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = true}"
     " : (tensor<2x?x3xf32>) -> tensor<1x?x1xf32>"),
    ("graph.reduce_mean", "axis",
     "%r = graph.reduce_mean %x {axes = array<i64: -1>} : (tensor<?x4xf32>) -> tensor<?xf32>"),
    ("graph.reduce_max", "all",
     "%r = graph.reduce_max %x : (tensor<?x4xf32>) -> tensor<f32>"),
    ("graph.reduce_min", "float",
     "%r = graph.reduce_min %x {axes = array<i64: 0>, keepdims = true}"
     " : (tensor<3x?xf32>) -> tensor<1x?xf32>"),
    ("graph.softmax", "axis0",
     "%p = graph.softmax %x {axis = 0 : i64} : (tensor<4x?xf32>) -> tensor<4x?xf32>"),
    ("graph.log_softmax", "rank3",
     "%l = graph.log_softmax %x : (tensor<2x?x5xf32>) -> tensor<2x?x5xf32>"),
    ("graph.conv2d", "stride",
     "%y = graph.conv2d %x, %w {stride = array<i64: 2, 1>, padding = array<i64: 1, 0>}"
     " : (tensor<?x2x7x6xf32>, tensor<3x2x3x2xf32>) -> tensor<?x3x4x5xf32>"),
    ("graph.max_pool2d", "overlap",
     "%y = graph.max_pool2d %x {kernel = array<i64: 3, 2>, stride = array<i64: 1, 2>}"
     " : (tensor<?x2x5x6xf32>) -> tensor<?x2x3x3xf32>"),
    ("graph.avg_pool2d", "default-stride",
     "%y = graph.avg_pool2d %x {kernel = array<i64: 2, 2>}"
     " : (tensor<?x3x4x6xf32>) -> tensor<?x3x2x3xf32>"),
    ("graph.layernorm", "axis0",
     "%y = graph.layernorm %x, %g, %b {axis = 0 : i64}"
     " : (tensor<5x?xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<5x?xf32>"),
    ("graph.batchnorm", "rank2",
     "%y = graph.batchnorm %x, %m, %v, %g, %b"
     " : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)"
     " -> tensor<?x3xf32>"),
    ("graph.slice", "negative-step",
     "%r = graph.slice %x {starts = array<i64: -1, 0>, stops = array<i64: -9223372036854775807,"
     " 3>, steps = array<i64: -2, 1>} : (tensor<5x?xf32>) -> tensor<3x?xf32>"),
    ("graph.concat", "three",
     "%r = graph.concat %a, %b, %c {axis = 0 : i64}"
     " : (tensor<?x2xf32>, tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>"),
    ("graph.split", "three",
     "%r:3 = graph.split %x {axis = 0 : i64, sections = 3 : i64}"
     " : (tensor<6x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32>)"),
    ("graph.transpose", "reverse",
     "%r = graph.transpose %x : (tensor<2x?x4xf32>) -> tensor<4x?x2xf32>"),
    ("graph.broadcast_to", "static",
     "%r = graph.broadcast_to %x {shape = array<i64: 2, 3, 4>}"
     " : (tensor<3x1xf32>) -> tensor<2x3x4xf32>"),
    ("graph.reshape", "static",
     "%r = graph.reshape %x {shape = array<i64: 3, 2, 2>}"
     " : (tensor<2x6xf32>) -> tensor<3x2x2xf32>"),
    ("graph.gather", "rank1",
     "%r = graph.gather %t, %i : (tensor<5xf32>, tensor<?xi64>) -> tensor<?xf32>"),
    ("graph.where", "broadcast",
     "%r = graph.where %c, %x, %y : (tensor<?x1xi1>, tensor<3xf32>, tensor<?x3xf32>)"
     " -> tensor<?x3xf32>"),
    ("graph.add", "both-broadcast",
     "%r = graph.add %x, %y : (tensor<?x1xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>"),
    ("graph.mul", "scalar",
     "%r = graph.mul %x, %y : (tensor<f32>, tensor<?x3xf32>) -> tensor<?x3xf32>"),
    ("graph.div", "broadcast-lhs",
     "%r = graph.div %x, %y : (tensor<3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>"),
    ("graph.pow", "scalar-exponent",
     "%r = graph.pow %x, %y : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>"),
    ("graph.maximum", "broadcast",
     "%r = graph.maximum %x, %y : (tensor<?x3xf32>, tensor<1xf32>) -> tensor<?x3xf32>"),
    ("graph.sub", "broadcast-rhs",
     "%r = graph.sub %x, %y : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>"),
]


def _example_op(text: str, name: str):
    top = parse_snippet(text, f"<{name} example>")
    ops = [o for o in top.walk() if o.name == name]
    assert ops, f"{name} is not used in its example"
    return ops[0]


def _docstring_op(name: str, cls):
    text = docstring_example(cls)
    assert text is not None, f"{name} has no docstring example"
    return _example_op(text, name)


def _is_float(t) -> bool:
    return isinstance(t, RankedTensorType) and isinstance(t.element, FloatType)


def has_vjp(cls) -> bool:
    return hasattr(cls, "vjp") or hasattr(cls, "transpose")


def has_jvp(cls) -> bool:
    return hasattr(cls, "jvp") or cls.has_trait(Linear)


def declared_nondiff(op) -> bool:
    return has_trait(op, NonDifferentiable) or not is_differentiable(op)


def _touches_floats(op) -> bool:
    return any(_is_float(v.type) for v in op.operands) or any(_is_float(r.type) for r in op.results)


# ---------------------------------------------------------------------------------------------
# Building the differentiated function
# ---------------------------------------------------------------------------------------------


def _concrete(t: RankedTensorType, n: int) -> RankedTensorType:
    """`t` with float elements as f64 and each `?` as n."""
    element = F64 if isinstance(t.element, FloatType) else t.element
    return RankedTensorType(tuple(n if d is None else d for d in t.shape), element)


def _props_f64(props: dict) -> dict:
    return {k: (F64 if isinstance(v, FloatType) else v) for k, v in props.items()}


def _attr_text(op) -> str:
    entries = dict(op.properties)
    entries.update(op.attributes)
    if not entries:
        return ""
    return " {" + ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items())) + "}"


def _sig(types) -> str:
    return ", ".join(map(str, types))


def _results(types) -> str:
    return _sig(types) if len(types) == 1 else f"({_sig(types)})"


class Case:
    """One example op at concrete f64 types: the function text that differentiates it."""

    def __init__(self, example, n: int) -> None:
        self.name = example.name
        self.cls = type(example)
        self.attrs = _attr_text(example)
        self.in_types = [_concrete(v.type, n) for v in example.operands]
        specs = self.cls.infer([TensorSpec.of(t) for t in self.in_types],
                               _props_f64(example.props()))
        self.out_types = [s.to_type() for s in specs]
        # Parse the op alone once at these types, to ask it which operands carry derivatives.
        self.op = self._parse_plain()
        skip = nondiff_operands(self.op)
        self.diff = [i for i, t in enumerate(self.in_types) if _is_float(t) and i not in skip]
        self.outs = [j for j, t in enumerate(self.out_types) if _is_float(t)]

    def _op_line(self) -> str:
        k = len(self.out_types)
        lhs = "%r" if k == 1 else f"%r:{k}"
        operands = ", ".join(f"%a{i}" for i in range(len(self.in_types)))
        return (f"{lhs} = {self.name} {operands}{self.attrs} : ({_sig(self.in_types)}) -> "
                f"{_results(self.out_types)}")

    def result(self, j: int) -> str:
        return "%r" if len(self.out_types) == 1 else f"%r#{j}"

    def _parse_plain(self):
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.in_types))
        text = (f"func.func @f({args}) {{\n  {self._op_line()}\n  return\n}}")
        m = parse_module(text, f"<{self.name}>")
        return next(o for o in m.walk() if o.name == self.name)

    def text(self, forward: bool) -> str:
        """`@vjp(operands, seeds) -> grads` or `@jvp(operands, tangents) -> tangents`."""
        args = [f"%a{i}: {t}" for i, t in enumerate(self.in_types)]
        ys = [self.result(j) for j in self.outs]
        y_types = [self.out_types[j] for j in self.outs]
        xs = [f"%a{i}" for i in self.diff]
        x_types = [self.in_types[i] for i in self.diff]
        if forward:
            args += [f"%v{i}: {self.in_types[i]}" for i in self.diff]
            lhs = "%d" if len(ys) == 1 else f"%d:{len(ys)}"
            line = (f"{lhs} = autodiff.jvp {', '.join(ys)} wrt {', '.join(xs)} along "
                    f"{', '.join(f'%v{i}' for i in self.diff)} : ({_sig(x_types)}) -> "
                    f"{_results(y_types)}")
            outs = y_types
        else:
            args += [f"%s{j}: {self.out_types[j]}" for j in self.outs]
            lhs = "%d" if len(xs) == 1 else f"%d:{len(xs)}"
            line = (f"{lhs} = autodiff.grad {', '.join(ys)} seed "
                    f"{', '.join(f'%s{j}' for j in self.outs)} wrt {', '.join(xs)} : "
                    f"({_sig(y_types + y_types)}) -> {_results(x_types)}")
            outs = x_types
        rets = ["%d"] if len(outs) == 1 else [f"%d#{k}" for k in range(len(outs))]
        return (f"func.func @f({', '.join(args)}) -> {_results(outs)} {{\n"
                f"  {self._op_line()}\n  {line}\n"
                f"  return {', '.join(rets)} : {_sig(outs)}\n}}\n")


    def hvp_text(self) -> str:
        """`@f(operands, seeds, directions)`: the jvp of the vjp, (d/dh) s^T J(x + hv), which
        differentiates the backward graph the rules built."""
        grad = self.text(forward=False)
        head, body = grad.split(") -> ", 1)
        x_types = [self.in_types[i] for i in self.diff]
        head += ", " + ", ".join(f"%v{i}: {self.in_types[i]}" for i in self.diff)
        k = len(self.diff)
        ds = ["%d"] if k == 1 else [f"%d#{j}" for j in range(k)]
        lhs = "%h" if k == 1 else f"%h:{k}"
        line = (f"  {lhs} = autodiff.jvp {', '.join(ds)} wrt "
                f"{', '.join(f'%a{i}' for i in self.diff)} along "
                f"{', '.join(f'%v{i}' for i in self.diff)} : ({_sig(x_types)}) -> "
                f"{_results(x_types)}\n")
        hs = ["%h"] if k == 1 else [f"%h#{j}" for j in range(k)]
        body = body.replace("  return " + ", ".join(ds), line + "  return " + ", ".join(hs))
        return head + ") -> " + body


def run_derivative(text: str, args: list, pipeline: str = "autodiff") -> list:
    """Parse `text`, run `pipeline`, check no autodiff op is left, interpret `@f`."""
    m = parse_module(text, "<ad contract>")
    verify(m)
    PassManager.parse(pipeline).run(m)
    verify(m)
    left = [o.name for o in m.walk() if o.name.startswith("autodiff.")]
    assert not left, f"{left} left after -p {pipeline}"
    out = interpret(m, "f", *args)
    return list(out) if isinstance(out, tuple) else [out]


# ---------------------------------------------------------------------------------------------
# Inputs and finite differences
# ---------------------------------------------------------------------------------------------

H = 1e-6
RTOL = 2e-5


def _magnitudes(rng, count: int) -> np.ndarray:
    """`count` magnitudes in [0.5, 2], pairwise at least 0.75/count apart (no near-ties for
    max and min to break differently at x + hv and x - hv): one per stratum of width
    1.5/count, in random order, each in the middle half of its stratum."""
    strata = rng.permutation(count) + rng.uniform(0.25, 0.75, size=count)
    return 0.5 + 1.5 * strata / max(count, 1)


def _input(t: RankedTensorType, rng, n: int, positive: bool, mags=None):
    """A value of type `t`; a float one takes its magnitudes from the iterator `mags`."""
    dtype = numpy_dtype(t.element)
    if isinstance(t.element, FloatType):
        size = int(np.prod(t.shape, dtype=np.int64))
        mag = np.fromiter(mags, np.float64, count=size).reshape(t.shape)
        sign = 1.0 if positive else rng.choice([-1.0, 1.0], size=t.shape)
        return np.asarray(mag * sign, dtype=dtype)
    if isinstance(t.element, IntegerType) and t.element.width == 1:
        return rng.integers(0, 2, size=t.shape).astype(bool)
    if t.rank == 0:
        return np.asarray(n, dtype=dtype)       # a size operand (broadcast_to's -1 entries)
    # Class labels, table rows and one-hot indices: small and valid for every example.
    return rng.integers(0, 2, size=t.shape).astype(dtype)


def _evaluate(op, inputs) -> list:
    with np.errstate(all="ignore"):
        out = op.evaluate(*inputs)
    outs = [out] if len(op.results) == 1 else list(out)
    return [np.asarray(o, dtype=np.float64) if np.asarray(o).dtype.kind == "f" else o
            for o in outs]


def _finite(values) -> bool:
    return all(np.all(np.isfinite(v)) for v in values if np.asarray(v).dtype.kind == "f")


def choose_inputs(case: Case, rng, n: int) -> list:
    """Operand values where the op is smooth: signed magnitudes in [0.5, 2] without near-ties
    across all float operands, or positive ones when signed values give a non-finite result."""
    floats = sum(int(np.prod(t.shape, dtype=np.int64)) for t in case.in_types
                 if isinstance(t.element, FloatType))

    def draw(positive: bool) -> list:
        mags = iter(_magnitudes(rng, floats))
        return [_input(t, rng, n, positive, mags) for t in case.in_types]

    inputs = draw(positive=False)
    if not _finite(_evaluate(case.op, inputs)):
        inputs = draw(positive=True)
    assert _finite(_evaluate(case.op, inputs)), f"{case.name}: no finite inputs found"
    return inputs


def _unit(rng, shape):
    v = rng.normal(size=shape)
    norm = np.linalg.norm(v)
    return v / norm if norm else v


def fd_tangent(case: Case, inputs: list, directions: dict) -> list:
    """`(op(x + hv) - op(x - hv)) / 2h` for each float result: J v by central differences."""
    plus = [x + H * directions[i] if i in directions else x for i, x in enumerate(inputs)]
    minus = [x - H * directions[i] if i in directions else x for i, x in enumerate(inputs)]
    hi, lo = _evaluate(case.op, plus), _evaluate(case.op, minus)
    return [(hi[j] - lo[j]) / (2 * H) for j in case.outs]


def assert_close_dot(got: float, want: float, scale: float, what: str) -> None:
    """|got - want| small relative to `scale`, the Cauchy-Schwarz bound |s| |J v|."""
    assert abs(got - want) <= RTOL * scale + 1e-9, \
        f"{what}: autodiff gives {got!r}, finite differences {want!r} (scale {scale:.3g})"


# ---------------------------------------------------------------------------------------------
# The contract
# ---------------------------------------------------------------------------------------------


def _float_ops():
    out = []
    for name, cls in GRAPH_OPS:
        if name in _DATAFLOW:
            continue
        text = docstring_example(cls)
        if text is None:
            continue
        out.append(pytest.param(name, text, id=name))
    for name, tag, text in EXTRA_EXAMPLES:
        if name in registered_ops():
            out.append(pytest.param(name, text, id=f"{name}[{tag}]"))
    return out


def check_derivatives(name: str, text: str, n: int, seed: int) -> None:
    example = _example_op(text, name)
    if not _touches_floats(example):
        pytest.skip(f"{name}: no float operand or result")
    if declared_nondiff(example):
        pytest.skip(f"{name} is declared non-differentiable")
    if not has_vjp(type(example)):
        pytest.skip(f"{name} has no derivative rule yet (test_every_float_op_has_a_rule fails)")
    case = Case(example, n)
    if not case.diff or not case.outs:
        pytest.skip(f"{name}: no differentiable float operand")
    rng = np.random.default_rng(seed)
    inputs = choose_inputs(case, rng, n)
    ys = _evaluate(case.op, inputs)
    seeds = [rng.normal(size=ys[j].shape) for j in case.outs]

    # Reverse mode: (s^T J_i) . v_i against s . (J_i v_i) by finite differences, per operand.
    for pipeline in ("autodiff", "autodiff,canonicalize,cse"):
        grads = run_derivative(case.text(forward=False), inputs + seeds, pipeline)
        assert len(grads) == len(case.diff)
        for i, g in zip(case.diff, grads):
            t = case.in_types[i]
            assert g.shape == inputs[i].shape and g.dtype == np.float64, \
                f"{name}: cotangent of operand #{i} is {g.dtype}{list(g.shape)}, expected {t}"
            assert np.all(np.isfinite(g)), f"{name}: cotangent of operand #{i} is not finite"
            for _ in range(2):
                v = _unit(rng, inputs[i].shape)
                jv = fd_tangent(case, inputs, {i: v})
                want = sum(float(np.sum(s * d)) for s, d in zip(seeds, jv))
                scale = sum(np.linalg.norm(s) * np.linalg.norm(d) for s, d in zip(seeds, jv))
                assert_close_dot(float(np.sum(g * v)), want, scale,
                                 f"{name} [{pipeline}] vjp wrt operand #{i}")

    # Forward mode: J v against finite differences, elementwise.
    if not has_jvp(case.cls):
        pytest.fail(f"{name} has a vjp but no jvp (and is not Linear)")
    directions = {i: _unit(rng, inputs[i].shape) for i in case.diff}
    want = fd_tangent(case, inputs, directions)
    for pipeline in ("autodiff", "autodiff,canonicalize,cse"):
        tangents = run_derivative(case.text(forward=True),
                                  inputs + [directions[i] for i in case.diff], pipeline)
        assert len(tangents) == len(case.outs)
        for j, got, w in zip(case.outs, tangents, want):
            assert got.shape == w.shape, f"{name}: tangent #{j} has shape {got.shape}"
            scale = max(float(np.max(np.abs(w), initial=0.0)), 1e-3)
            np.testing.assert_allclose(got, w, rtol=RTOL, atol=RTOL * scale,
                                       err_msg=f"{name} [{pipeline}] jvp of result #{j}")


@pytest.mark.parametrize("name,text", _float_ops())
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 4), seed=st.integers(0, 2 ** 32 - 1))
def test_derivatives_match_finite_differences(name, text, n, seed):
    check_derivatives(name, text, n, seed)


def check_second_derivatives(name: str, text: str, n: int, seed: int) -> None:
    """The backward graph of every rule is differentiable again (its rules use only ops with
    rules): the jvp of the vjp agrees with central differences of the vjp."""
    example = _example_op(text, name)
    if not _touches_floats(example) or declared_nondiff(example) or \
            not has_vjp(type(example)):
        pytest.skip(f"{name}: no derivative rule, or not differentiable")
    case = Case(example, n)
    if not case.diff or not case.outs:
        pytest.skip(f"{name}: no differentiable float operand")
    rng = np.random.default_rng(seed)
    inputs = choose_inputs(case, rng, n)
    ys = _evaluate(case.op, inputs)
    seeds = [rng.normal(size=ys[j].shape) for j in case.outs]
    directions = {i: _unit(rng, inputs[i].shape) for i in case.diff}
    h = 1e-5

    def vjp_at(sign: float) -> list:
        moved = [x + sign * h * directions[i] if i in directions else x
                 for i, x in enumerate(inputs)]
        return run_derivative(case.text(forward=False), moved + seeds)

    want = [(a - b) / (2 * h) for a, b in zip(vjp_at(1.0), vjp_at(-1.0))]
    got = run_derivative(case.hvp_text(),
                         inputs + seeds + [directions[i] for i in case.diff],
                         "autodiff,canonicalize,cse")
    scale = max(max(float(np.max(np.abs(w), initial=0.0)) for w in want), 1e-3)
    for i, g, w in zip(case.diff, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale,
                                   err_msg=f"{name}: jvp of the vjp wrt operand #{i}")


@pytest.mark.parametrize("name,text", _float_ops())
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 3), seed=st.integers(0, 2 ** 32 - 1))
def test_second_derivatives_match_finite_differences(name, text, n, seed):
    check_second_derivatives(name, text, n, seed)


# ---------------------------------------------------------------------------------------------
# Registry coverage
# ---------------------------------------------------------------------------------------------


def _all_examples():
    return [pytest.param(n, c, id=n) for n, c in GRAPH_OPS]


@pytest.mark.parametrize("name,cls", _all_examples())
def test_every_float_op_has_a_rule(name, cls):
    """A new op that computes with floats cannot silently lack a derivative: it has a rule
    (`vjp`, or `transpose` with trait `Linear`) or declares itself non-differentiable."""
    example = _docstring_op(name, cls)
    if not _touches_floats(example):
        return
    assert has_vjp(cls) or declared_nondiff(example), \
        f"{name} has float operands or results but neither a derivative rule (vjp/transpose) " \
        f"nor the NonDifferentiable trait / is_differentiable()"
    if has_vjp(cls) and not declared_nondiff(example):
        assert has_jvp(cls), f"{name} has a vjp but no jvp (and is not Linear)"
    if cls.has_trait(Linear):
        assert hasattr(cls, "transpose"), f"{name} is Linear but has no transpose"


@pytest.mark.parametrize("name,cls", _all_examples())
def test_integer_operands_carry_no_derivative(name, cls):
    """Integer operands (labels, indices, sizes, predicates) of an op that computes floats
    are listed in `nondiff_operands`: otherwise a gradient would be asked of their producer
    (an argmax, a comparison) and fail there. (An op on integers only, such as an i32 sum,
    carries no derivative anyway: the cast into floats after it is where one would stop.)"""
    example = _docstring_op(name, cls)
    if declared_nondiff(example) or not has_vjp(cls) or not _touches_floats(example):
        return
    skip = nondiff_operands(example)
    for i, v in enumerate(example.operands):
        t = v.type
        if isinstance(t, RankedTensorType) and isinstance(t.element, IntegerType):
            assert i in skip, f"{name}: integer operand #{i} ({t}) is not in nondiff_operands"


def test_graph_if_has_rules():
    """graph.if is not a GraphOp (it has regions), so the table above misses it."""
    cls = registered_ops()["graph.if"]
    assert hasattr(cls, "vjp") and hasattr(cls, "jvp"), "graph.if needs vjp and jvp rules"
