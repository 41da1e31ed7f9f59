"""lower-graph-to-loop (lower-graph-to-linalg, bufferize, lower-linalg-to-loop) preserves
meaning: random graph programs, run by the interpreter before lowering and after (outputs
passed as numpy buffers), agree.

Two sources of programs:

- `graph_programs()` below builds graph IR directly, so that it reaches what the DSL does
  not write: integer programs (exact, wrapping arithmetic), unknown sizes (`?`) on any
  input axis with run-time sizes of 1 that broadcast, keepdims reductions regrouped by
  `graph.reshape`, `graph.broadcast_to`, argmax, casts, splat and non-splat constants, and a
  second output that is also used by later ops. Every node is generated for a concrete
  run-time shape, so programs are well-typed by construction (as in test_dsl_numpy.py).
  Float programs avoid what is discontinuous under rounding (casts of computed floats,
  argmax of computed values): the lowered code rounds differently (sequential sums, math
  ops rounded once from f64), which may move a value by an ulp but must not change a
  branch.
- `test_dsl_numpy.programs()`, the DSL's random models, compiled to graph IR, also run
  through the whole compile pipeline (raising `if`, lowering, tidying, planning memory)
  under the numeric checker of `--verify-each=numeric`, which compares every function's
  results, and what it stores in its buffers, before and after each pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import DenseElementsAttr, StringAttr, TypeAttr, numpy_dtype
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.interpreter import Interpreter
from irkit.ir import Block, Value
from irkit.opdef import lookup_op
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.types import F32, I32, I64, I8, I1, FunctionType, RankedTensorType
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.numeric_check import NumericCheckInstrumentation, NumericChecker
from irkit.passes.lower_graph_to_loop import LowerGraphToLoop
from irkit.passes import pipeline
from test_dsl_numpy import _concrete, programs as dsl_programs

# ---------------------------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------------------------

_FLOAT_UNARY = ["neg", "abs", "tanh", "sigmoid", "relu", "sin", "cos", "softplus", "gelu"]
_INT_UNARY = ["neg", "abs", "relu"]
_FLOAT_BINARY = ["add", "sub", "mul", "maximum", "minimum"]
_INT_BINARY = ["add", "sub", "mul", "maximum", "minimum"]
_PREDICATES = ["lt", "le", "gt", "ge", "eq", "ne"]


class Program:
    """A function body under construction: arguments are added as inputs are drawn."""

    def __init__(self, dtype) -> None:
        self.dtype = dtype
        self.block = Block()
        self.b = Builder.at_end(self.block)
        self.shapes: list[tuple] = []           # run-time shape of each argument
        self.values: list[Value] = []           # every tensor made, for a second output

    def input(self, draw, shape: tuple, dtype=None) -> Value:
        dyn = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
        t = RankedTensorType(tuple(None if d else s for s, d in zip(shape, dyn)),
                             dtype or self.dtype)
        self.shapes.append(shape)
        return self.block.add_argument(t)

    def op(self, name: str, *operands: Value, result_type=None, **props) -> Value:
        cls = lookup_op(name)
        if result_type is not None:
            to_attrs = getattr(cls, "py_props_to_attrs", None)
            op = cls.build(*operands, result_types=[result_type],
                           **(to_attrs(props) if to_attrs else props))
        else:
            op = cls.create(*operands, **props)
        self.b.insert(op)
        self.values.append(op.results[0])
        return op.results[0]

    def constant(self, array: np.ndarray) -> Value:
        t = RankedTensorType(array.shape, self.dtype)
        return self.op("graph.constant", value=DenseElementsAttr(t, array), result_type=t)


def _is_float(p: Program) -> bool:
    return p.dtype is F32


@st.composite
def _broadcast_source(draw, shape: tuple) -> tuple:
    """A shape that broadcasts to `shape`: leading axes dropped, some axes set to 1."""
    drop = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.integers(0, 2)) == 0 else d for d in shape[drop:])


@st.composite
def expr(draw, p: Program, shape: tuple, depth: int, root: bool = False) -> Value:
    """A value whose run-time shape is exactly `shape` (`root`: an op, not an input)."""
    kinds = [] if root else ["input"]
    if depth > 0:
        kinds += ["unary", "binary", "binary", "reduce", "where", "argmax", "broadcast_to",
                  "reshape", "matmul"]
        kinds += ["softmax"] if _is_float(p) and shape else []
        kinds += ["cast"] if not _is_float(p) else []
        kinds += ["transpose"] if len(shape) >= 2 else []
    kind = draw(st.sampled_from(kinds))
    fl = _is_float(p)
    if kind == "input":
        return p.input(draw, shape)
    if kind == "unary":
        name = draw(st.sampled_from(_FLOAT_UNARY if fl else _INT_UNARY))
        return p.op(f"graph.{name}", draw(expr(p, shape, depth - 1)))
    if kind == "binary":
        name = draw(st.sampled_from(_FLOAT_BINARY if fl else _INT_BINARY))
        a = draw(expr(p, shape, depth - 1))
        choice = draw(st.integers(0, 3))
        src = draw(_broadcast_source(shape))
        if choice == 0:                                 # a splat constant
            c = draw(st.sampled_from([0.5, -1.5, 2.0] if fl else [3, -2, 7]))
            b = p.constant(np.full(src, c, numpy_dtype(p.dtype)))
        elif choice == 1 and 0 < int(np.prod(src)) <= 8:     # a small non-splat constant
            b = p.constant((np.arange(int(np.prod(src))).reshape(src) * 3 % 5 - 2)
                           .astype(numpy_dtype(p.dtype)))
        else:
            b = draw(expr(p, src, depth - 1))
        if draw(st.booleans()):
            a, b = b, a
        return p.op(f"graph.{name}", a, b)
    if kind == "reduce":
        names = ["reduce_sum", "reduce_max", "reduce_min"] + (["reduce_mean"] if fl else [])
        name = draw(st.sampled_from(names))
        n_axes = draw(st.integers(1, 2))
        inner, axes = list(shape), []
        for _ in range(n_axes):
            at = draw(st.integers(0, len(inner)))
            inner.insert(at, draw(st.integers(1, 3)))
            axes = [a + (a >= at) for a in axes] + [at]
        keep = draw(st.booleans())
        x = draw(expr(p, tuple(inner), depth - 1))
        neg = draw(st.booleans())
        r = p.op(f"graph.{name}", x, axes=[a - len(inner) if neg else a for a in axes],
                 keepdims=keep)
        return _regroup(draw, p, r, shape) if keep else r
    if kind == "where":
        a = draw(expr(p, shape, depth - 1))
        b = draw(expr(p, draw(_broadcast_source(shape)), depth - 1))
        pred = draw(st.sampled_from(_PREDICATES))
        return p.op("graph.where", p.op("graph.cmp", a, b, predicate=pred), a, b)
    if kind == "argmax":
        # Of an input only, for floats: exact values, so ties and NaNs are the same.
        axis = draw(st.integers(0, len(shape)))
        inner = shape[:axis] + (draw(st.integers(1, 4)),) + shape[axis:]
        x = p.input(draw, inner) if fl else draw(expr(p, inner, depth - 1))
        r = p.op("graph.argmax", x, axis=axis, keepdims=False)
        return p.op("graph.cast", r, result_type=RankedTensorType(r.type.shape, p.dtype))
    if kind == "broadcast_to":
        x = draw(expr(p, draw(_broadcast_source(shape)), depth - 1))
        return p.op("graph.broadcast_to", x, [], shape=list(shape))
    if kind == "reshape":
        n = int(np.prod(shape, dtype=np.int64))
        other = draw(st.sampled_from([(n,), shape + (1,), (1,) + shape]))
        return _regroup(draw, p, draw(expr(p, other, depth - 1)), shape)
    if kind == "matmul":
        k = draw(st.integers(1, 3))
        if not shape:                                   # vector . vector
            return p.op("graph.matmul", draw(expr(p, (k,), depth - 1)), p.input(draw, (k,)))
        if len(shape) == 1:                             # vector @ matrix
            return p.op("graph.matmul", draw(expr(p, (k,), depth - 1)),
                        p.input(draw, (k, shape[0])))
        batch = draw(_broadcast_source(shape[:-2]))
        a = draw(expr(p, shape[:-1] + (k,), depth - 1))
        return p.op("graph.matmul", a, p.input(draw, batch + (k, shape[-1])))
    if kind == "transpose":
        perm = draw(st.permutations(range(len(shape))))
        inv = [perm.index(i) for i in range(len(shape))]
        x = draw(expr(p, tuple(shape[i] for i in inv), depth - 1))
        return p.op("graph.transpose", x, perm=list(perm))
    if kind == "softmax":
        name = draw(st.sampled_from(["softmax", "log_softmax"]))
        return p.op(f"graph.{name}", draw(expr(p, shape, depth - 1)),
                    axis=draw(st.integers(-len(shape), len(shape) - 1)))
    # cast (integers): through a narrower type and back, which wraps
    narrow = draw(st.sampled_from([I8, I1, I64]))
    x = draw(expr(p, shape, depth - 1))
    y = p.op("graph.cast", x, result_type=RankedTensorType(x.type.shape, narrow))
    return p.op("graph.cast", y, result_type=x.type)


def _regroup(draw, p: Program, x: Value, shape: tuple) -> Value:
    """`graph.reshape` of x (with as many elements) to `shape`, one entry maybe -1."""
    target = list(shape)
    if target and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
        if 0 in shape:
            target = list(shape)
    return p.op("graph.reshape", x, [], shape=target)


@st.composite
def graph_programs(draw):
    """(module, input arrays, description) for a random graph function `@f`."""
    dtype = draw(st.sampled_from([F32, I32]))
    p = Program(dtype)
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    root = draw(expr(p, shape, draw(st.integers(1, 5)), root=True))
    results = [root]
    if p.values and draw(st.booleans()):
        results.append(draw(st.sampled_from(p.values)))
    p.b.create(ReturnOp, results, result_types=[])
    fn = FuncOp.build(result_types=[], sym_name=StringAttr("f"),
                      function_type=TypeAttr(FunctionType([a.type for a in p.block.args],
                                                          [r.type for r in results])))
    fn.regions[0].add_block(p.block)
    module = parse_module("")
    module.regions[0].blocks[0].append(fn)
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    args = []
    for s, a in zip(p.shapes, p.block.args):
        dt = numpy_dtype(a.type.element)
        if np.dtype(dt).kind == "f":
            args.append(rng.normal(size=s).astype(dt))
        else:
            args.append(rng.integers(-50, 50, size=s).astype(dt))
    return module, args


# ---------------------------------------------------------------------------------------------
# Running both
# ---------------------------------------------------------------------------------------------


def _run_both(module, fn: str, args) -> None:
    """Interpret `fn` on `args`, lower a copy of the module (through its text), interpret
    the lowered function with numpy output buffers, and compare."""
    text = str(module)
    module.verify()
    f = lookup_symbol_in(module, fn)
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in Interpreter(module).call(f, list(args))]
    lowered = parse_module(text)
    PassManager().add(LowerGraphToLoop()).run(lowered)
    outs = [np.full(w.shape, 77, w.dtype) for w in want]
    lf = lookup_symbol_in(lowered, fn)
    attrs = lf.properties.get("arg_attrs")
    # a run-time check (a reshape's count) adds a status buffer; none may fail here
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    interp = Interpreter(lowered)
    with np.errstate(all="ignore"):
        interp.call(lf, [np.array(a, order="C") for a in args] + outs + status)
    assert not interp.state.get("memory.allocated"), "a buffer was never freed"
    assert all(st[0] == 0 for st in status), f"a run-time check failed: {status}\n{text}"
    for g, w in zip(outs, want):
        if w.dtype.kind == "f":
            scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0, where=np.isfinite(w))))
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                       err_msg=text)
        else:
            np.testing.assert_array_equal(g, w, err_msg=text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_lowered_graph_programs_match_the_interpreter(case):
    module, args = case
    _run_both(module, "f", args)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_lowered_dsl_programs_match_the_interpreter(data):
    from irkit.frontend.dsl import compile_source, model_modules
    source, _, inputs, n, seed = data.draw(dsl_programs())
    top = compile_source(source, "rand.irk")
    module = model_modules(top)["rand"]
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=_concrete(s, n)).astype(np.float32) for _, s in inputs]
    _run_both(module, "forward", args)


def dsl_case(data):
    """(module, args): a random DSL model (`test_dsl_numpy.programs`), maybe with a
    conditional output (`maybe_conditional`), compiled to graph IR, and float32 inputs for it."""
    from irkit.frontend.dsl import compile_source, model_modules
    source, _, inputs, n, seed = data.draw(dsl_programs())
    module = model_modules(compile_source(maybe_conditional(source, data), "rand.irk"))["rand"]
    rng = np.random.default_rng(seed)
    return module, [rng.normal(size=_concrete(s, n)).astype(np.float32) for _, s in inputs]


def maybe_conditional(source: str, data) -> str:
    """A random DSL model (`test_dsl_numpy.programs`), half the time with its output made a
    conditional: `if sum(in0) < 0 { out } else { -(out) }` (switch/merge in the graph)."""
    if not data.draw(st.booleans()):
        return source
    head, body = source.split("  out = ")
    body, tail = body.split("\n", 1)
    return f"{head}  out = if sum(in0) < 0.0 {{ {body} }} else {{ -({body}) }}\n{tail}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_compile_pipeline_is_numerically_verified_pass_by_pass(data):
    """Each pass of the compile pipeline, on a random model whose output is sometimes a
    conditional (switch/merge raised to graph.if, lowered to loop.if), keeps the results
    the interpreter computes before it; after lowering those are buffer contents."""
    from irkit.frontend.dsl import compile_source, model_modules
    source, *_ = data.draw(dsl_programs())
    source = maybe_conditional(source, data)
    module = model_modules(compile_source(source, "rand.irk"))["rand"]
    checker = NumericChecker(trials=1)
    pm = PassManager.parse(pipeline.passes_between(None, pipeline.compiled_stage()))
    pm.add_instrumentation(NumericCheckInstrumentation(checker))
    pm.run(module)                     # NumericMismatchError names the first pass that differs
    # the sizes function of an output with `?` sizes (bufferization/output_sizes.py) too
    assert checker.checked[0] == "rand::forward", (checker.skipped, source)
    assert set(checker.checked) <= {"rand::forward", "rand::forward_output_sizes"}, source


def test_unlowered_ops_are_reported_not_miscompiled():
    """The DSL's `if` is dataflow switch/merge until raised: an IRError naming the op and the
    pass that fixes it, not a crash or a miscompile."""
    from irkit.frontend.dsl import compile_source, model_modules
    source = "model m {\n  input x: f32[N]\n  out = if sum(x) < 0.0 { x } else { -x }\n" \
             "  output out\n}"
    module = model_modules(compile_source(source, "m.irk"))["m"]
    with pytest.raises(IRError) as e:
        PassManager().add(LowerGraphToLoop()).run(module)
    assert "no lower-graph-to-linalg rule for 'graph.switch'" in str(e.value)
    assert "graph-raise-control-flow" in str(e.value)
