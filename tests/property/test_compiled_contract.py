"""The compiled contract, generated from the graph dialect's registry: for every graph op with
tensor semantics, its docstring example (each `?` made a concrete size, 1 and 3) is run

(a) by the graph interpreter (the op's numpy semantics), and
(b) lowered with `lower-graph-to-loop` (lower-graph-to-linalg, bufferize,
    lower-linalg-to-loop) and compiled for the host CPU by the LLVM backend
    (`irkit.backends.llvm_cpu.compile_module`), called with numpy output buffers (filled
    with garbage that must be overwritten),

and the results must agree: integers and booleans exactly, floats to rounding (rtol 1e-5
for f32, 1e-12 for f64, relative to the largest magnitude of the result where a value
cancels; NaN exactly where NaN).

For every differentiable op, the gradient `autodiff.grad` of sum(results * seeds) with
respect to its differentiable float operands (the function `test_ad_contract.Case` builds,
at f64), expanded by `autodiff,canonicalize,cse`, is compared the same way: interpreted vs
lowered and compiled.

Not in the table (SKIPPED), and checked at the end of this file through a DSL model instead:
- `graph.switch` and `graph.merge` (dataflow control flow, whose DEAD values a function cannot
  return), raised to `graph.if` / `graph.yield` (regions) by the runtime's pipeline;
- the variable ops (`graph.variable`, `graph.read`, `graph.assign`): state, compared after
  training steps;
- `graph.check`, a scalar op that lower-graph-to-linalg emits for run-time errors
  (tests/unit/test_lower_graph_to_linalg.py).

Each op is a parameter (its name, or name[form] for the extra examples of
`test_ad_contract.EXTRA_EXAMPLES` and the docstrings' second forms), so a failure names it.
"""

from __future__ import annotations

import numpy as np
import pytest

from irkit.attributes import numpy_dtype
from irkit.backends.llvm_cpu import compile_module
from irkit.dialects.graph import TensorSpec
from irkit.interpreter import Interpreter
from irkit.opdef import registered_ops
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes.lower_graph_to_loop import LowerGraphToLoop
from irkit.symbols import lookup_symbol_in
from irkit.types import FloatType, RankedTensorType
from irkit.verifier import verify

from output_buffers import garbage_like
from test_ad_contract import (  # noqa: E402  (tests/property is on sys.path under pytest)
    EXTRA_EXAMPLES, GRAPH_OPS, Case, _DATAFLOW, _attr_text, _example_op, _input, _magnitudes,
    _results, _sig, _touches_floats, declared_nondiff, docstring_example, has_vjp,
)

#: dataflow or regions (raised first), or state: `test_compiled_control_flow_and_variables`
SKIPPED = _DATAFLOW | {"graph.if", "graph.yield", "graph.variable", "graph.read",
                       "graph.assign", "graph.check"}

#: the sizes every `?` becomes (1: sizes that broadcast)
SIZES = [1, 3]

#: second forms in docstrings (`_example_op` takes the first) and ops that are not GraphOps
SECOND_FORMS = [
    ("graph.one_hot", "size-operand",
     "%s = graph.one_hot %labels, %n {depth = -1 : i64}"
     " : (tensor<?xi64>, tensor<i64>) -> tensor<?x?xf32>"),
    ("graph.reshape", "size-operands",
     "%s = graph.reshape %y, %b, %t {shape = array<i64: -1, -1, 64>}"
     " : (tensor<9x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>"),     # 3 x 3
    ("graph.split", "size-operands",
     "%s:2 = graph.split %y, %m, %n {axis = 0 : i64, sections = 2 : i64}"
     " : (tensor<6x6xf32>, tensor<i64>, tensor<i64>) -> (tensor<?x6xf32>, tensor<?x6xf32>)"),
    ("graph.constant", "i32-2d",
     "%c = graph.constant dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi32>"),
    ("graph.constant", "splat-f64",
     "%c = graph.constant dense<-2.5> : tensor<3x2xf64>"),
    ("graph.reduce_sum", "i32",
     "%r = graph.reduce_sum %x {axes = array<i64: 1>} : (tensor<?x4xi32>) -> tensor<?xi32>"),
    ("graph.cast", "f32-to-i8",
     "%r = graph.cast %x : (tensor<?x4xf32>) -> tensor<?x4xi8>"),
    ("graph.add", "f64",
     "%r = graph.add %x, %y : (tensor<?x3xf64>, tensor<3xf64>) -> tensor<?x3xf64>"),
    ("graph.matmul", "f64",
     "%r = graph.matmul %x, %y : (tensor<?x5xf64>, tensor<5x3xf64>) -> tensor<?x3xf64>"),
]

RTOL = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-3}


def _params():
    cases = [(name, docstring_example(cls), name) for name, cls in GRAPH_OPS
             if name not in SKIPPED]
    constant = registered_ops()["graph.constant"]       # not a GraphOp: not in GRAPH_OPS
    cases.append(("graph.constant", docstring_example(constant), "graph.constant"))
    cases += [(name, text, f"{name}[{tag}]") for name, tag, text in EXTRA_EXAMPLES + SECOND_FORMS
              if name in registered_ops()]
    out = []
    for name, text, ident in cases:
        # the size-operand forms have static shapes that fit sizes of 3 only
        sizes = [3] if ident.endswith("[size-operands]") else SIZES
        out += [pytest.param(name, text, n, id=f"{ident}-{n}") for n in sizes]
    return out


def test_every_graph_op_is_covered_or_skipped_by_name():
    """A new graph op is either in the table (it is a GraphOp with an example) or skipped
    here by name, so none is left out silently."""
    covered = {n for n, _ in GRAPH_OPS}
    missing = [n for n in registered_ops() if n.startswith("graph.")
               and n not in covered and n not in SKIPPED and n != "graph.constant"]
    assert not missing, f"graph ops neither tested nor skipped: {missing}"


# ---------------------------------------------------------------------------------------------
# Building and running
# ---------------------------------------------------------------------------------------------


def _concrete(t: RankedTensorType, n: int) -> RankedTensorType:
    return RankedTensorType(tuple(n if d is None else d for d in t.shape), t.element)


class OpCase:
    """The example op at its own element types, every `?` as `n`: `@f(operands) -> results`."""

    def __init__(self, example, n: int, text: str) -> None:
        self.name = example.name
        self.cls = type(example)
        self.in_types = [_concrete(v.type, n) for v in example.operands]
        if self.in_types:
            specs = self.cls.infer([TensorSpec.of(t) for t in self.in_types], example.props())
            self.out_types = [s.to_type() for s in specs]
        else:                                       # graph.constant: its own type
            self.out_types = [r.type for r in example.results]
        k = len(self.out_types)
        lhs = "%r" if k == 1 else f"%r:{k}"
        operands = ", ".join(f"%a{i}" for i in range(len(self.in_types)))
        rets = ["%r"] if k == 1 else [f"%r#{j}" for j in range(k)]
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(self.in_types))
        if self.in_types:
            line = (f"{lhs} = {self.name} {operands}{_attr_text(example)} : "
                    f"({_sig(self.in_types)}) -> {_results(self.out_types)}")
        else:                                       # graph.constant's own syntax
            line = f"{lhs} = {text.split('=', 1)[1].strip()}"
        self.text = (
            f"func.func @f({args}) -> {_results(self.out_types)} {{\n  {line}\n"
            f"  return {', '.join(rets)} : {_sig(self.out_types)}\n}}\n")


def interpret_f(module, args) -> list:
    with np.errstate(all="ignore"):
        out = Interpreter(module).call(lookup_symbol_in(module, "f"), list(args))
    return [np.asarray(o) for o in out]


def compiled_f(text: str, args, wants) -> list:
    """Lower `text` to loops, compile it, call `f` with output buffers shaped like `wants`
    (and a status buffer where it checks something at run time: no check may fail, since
    the interpreter ran these inputs without an error)."""
    m = parse_module(text, "<compiled contract>")
    PassManager().add(LowerGraphToLoop()).run(m)
    verify(m)
    jit = compile_module(m)
    outs = [garbage_like(w) for w in wants]
    attrs = lookup_symbol_in(m, "f").properties.get("arg_attrs")
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    with np.errstate(all="ignore"):
        jit.f(*[np.array(a, order="C") for a in args], *outs, *status)
    for s in status:
        np.testing.assert_array_equal(s, [0, 0, 0], err_msg="a run-time check failed")
    return outs


def assert_same(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, interpreter {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, interpreter {want.dtype}"
    if want.dtype.kind == "f":
        rtol = RTOL[want.dtype.name]
        finite = np.isfinite(want)
        scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True,
                                   err_msg=what)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want),
                                      err_msg=f"{what}: NaN positions")
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _inputs(types, rng, n: int, positive: bool) -> list:
    """Values for `types`, float magnitudes without near-ties across them (as the AD contract
    draws them), so that a max or a pooling window has one clear winner."""
    floats = sum(int(np.prod(t.shape, dtype=np.int64)) for t in types
                 if isinstance(t.element, FloatType))
    mags = iter(_magnitudes(rng, floats))
    return [_input(t, rng, n, positive, mags) for t in types]


def choose_inputs(module, types, rng, n: int) -> tuple[list, list]:
    """Signed inputs in [0.5, 2] in magnitude, or positive ones where signed ones give a
    non-finite float result; and the interpreter's results for them."""
    args = _inputs(types, rng, n, positive=False)
    want = interpret_f(module, args)
    if not all(np.all(np.isfinite(w)) for w in want if w.dtype.kind == "f"):
        args = _inputs(types, rng, n, positive=True)
        want = interpret_f(module, args)
    return args, want


# ---------------------------------------------------------------------------------------------
# The contract
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,text,n", _params())
def test_compiled_op_matches_the_interpreter(name, text, n):
    N = n
    example = _example_op(text, name)
    case = OpCase(example, N, text)
    module = parse_module(case.text, f"<{name}>")
    verify(module)
    rng = np.random.default_rng(n)
    args, want = choose_inputs(module, case.in_types, rng, N)
    got = compiled_f(case.text, args, want)
    for j, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"{name}: result #{j}")


def _differentiable(example) -> bool:
    return (_touches_floats(example) and not declared_nondiff(example)
            and has_vjp(type(example)))


@pytest.mark.parametrize("name,text,n", _params())
def test_compiled_gradient_matches_the_interpreter(name, text, n):
    N = n
    example = _example_op(text, name)
    if not _differentiable(example):
        pytest.skip(f"{name}: not differentiable")
    case = Case(example, N)                         # float operands and results as f64
    if not case.diff or not case.outs:
        pytest.skip(f"{name}: no differentiable float operand")
    m = parse_module(case.text(forward=False), f"<grad {name}>")
    verify(m)
    PassManager.parse("autodiff,canonicalize,cse").run(m)
    verify(m)
    left = [o.name for o in m.walk() if o.name.startswith("autodiff.")]
    assert not left, f"{left} left after autodiff"
    expanded = str(m)
    rng = np.random.default_rng(100 + n)
    # operands where the op is finite (at its own types), then seeds shaped like its float
    # results (whose sizes may depend on size operands)
    plain = OpCase(example, N, text)
    inputs, ys = choose_inputs(parse_module(plain.text), plain.in_types, rng, N)
    inputs = [np.asarray(x, numpy_dtype(t.element)) for x, t in zip(inputs, case.in_types)]
    seeds = [rng.normal(size=ys[j].shape) for j in case.outs]          # f64
    args = inputs + seeds
    want = interpret_f(m, args)
    got = compiled_f(expanded, args, want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w, f"{name}: gradient wrt operand #{case.diff[k]}")


# ---------------------------------------------------------------------------------------------
# Control flow and variables, through the DSL and the runtime's pipeline
# ---------------------------------------------------------------------------------------------
#
# The ops SKIPPED above have no docstring-example contract: a function cannot return a DEAD
# value, and variables are state. They are checked here in the setting where they occur: a
# DSL model whose `if` is switch/merge (raised to graph.if and lowered to loop.if by the
# runtime's pipeline), with gradients through both branches (`grad`), and a `train` clause
# (variable reads and assigns, the optimizer's state), compiled (engine "jit") against the
# interpreter, forward, gradient and state after each step.

CONTROL = """
model branchy {
  input x: f32[N, 3]
  input t: f32[N, 2]
  param w: f32[3, 2] = normal(std=0.5, seed=3)
  param b: f32[2] = constant(0.1)
  h = x @ w + b
  y = if sum(h) < 0.0 { tanh(h) * 2.0 } else { h * h - h }
  loss = mean((y - t) ** 2.0)
  output y, loss
  grad loss wrt w, b, x
  train loss with momentum(lr=0.05, beta=0.9)
}
"""


@pytest.mark.parametrize("branch", ["then", "else"])
def test_compiled_control_flow_and_variables_match_the_interpreter(branch):
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.runtime.model import Model
    module = model_modules(compile_source(CONTROL, "branchy.irk"))["branchy"]
    ops = {o.name for o in module.walk()}
    assert {"graph.switch", "graph.merge", "graph.read", "graph.variable"} <= ops
    dev, jit = Model(module), Model(module, engine="jit")
    rng = np.random.default_rng(7)
    sign = -1.0 if branch == "then" else 1.0          # sum(h) < 0 takes the `then` branch
    for step in range(3):
        x = (sign * np.abs(rng.normal(size=(4, 3))) * 2).astype(np.float32)
        dev.variables["w"] = np.abs(dev.variables["w"])   # h's sign follows x's
        jit.variables["w"] = np.array(dev.variables["w"])
        t = rng.normal(size=(4, 2)).astype(np.float32)
        want, got = dev.forward(x=x, t=t), jit.forward(x=x, t=t)
        assert (float(np.sum(x @ dev.variables["w"] + dev.variables["b"])) < 0) == \
            (branch == "then")
        for k in ("y", "loss", "d_w", "d_b", "d_x"):
            assert_same(got[k], want[k], f"{branch} step {step}: {k}")
        assert_same(jit.train_step(x=x, t=t)["loss"], dev.train_step(x=x, t=t)["loss"],
                    f"{branch} step {step}: train_step loss")
        for name in dev.variables:                     # w, b and their momentum buffers
            assert_same(jit.variables[name], dev.variables[name], f"{branch}: {name}")
