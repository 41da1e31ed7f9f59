"""graph-algebraic-simplify keeps what programs compute, up to float rounding.

Three sources of programs, each run by the interpreter before and after the pass:

- `graph_programs()` of test_lower_graph_programs.py: random graph IR (f32 and i32, `?`
  sizes that are 1 at run time and broadcast, reductions, matmuls, transposes, reshapes),
  where the rewrites seldom apply but must never break anything;
- `motif_programs()` below: the same generator seeded with the shapes each rewrite looks
  for, and with their near misses (exp(log x) of a possibly negative x, log(exp x) of an x
  large enough that exp overflows, a scaled operand with a second use, transposes with
  different permutations, a broadcast to some other value's dims), so that a rewrite firing
  where it must not shows as NaN against x, inf against x, or a shape error;
- DSL models with `grad` and `train` (their backward graphs after `autodiff`), written from
  loss motifs (log(softmax), exp(log(sigmoid)), log(exp(tanh)), scaled inputs, transposes)
  over a random expression of test_dsl_numpy.py, sometimes under an `if`: the pass after
  the autodiff stage, and before autodiff too (a better backward graph: log_softmax's
  vjp instead of softmax's followed by a division by it), must give the same outputs,
  gradients and updated parameters.

Tolerance: integers must match exactly (every rewrite is exact in wrapping arithmetic).
Floats are compared as test_lower_graph_programs does, `rtol = 1e-4` and `atol = 1e-4` of
the output's largest finite magnitude, NaN equal to NaN. The rewrites that round differently
change one rounding step per reduction or matmul element (a factor applied to the sum instead
of each term: a few ulps of f32, 6e-8 each, of the terms' magnitude), or return x for
exp(log(x)) (off by |log x| ulps, |log x| < 100 for f32); the program around them can
amplify that (a sum of such terms, a softmax), which 1e-4 of the largest output covers, while
a rewrite firing wrongly gives NaN, inf or a value of another magnitude.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import StringAttr, TypeAttr, numpy_dtype
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.types import F32, I32, FunctionType
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.passes import pipeline, register_all
from test_dsl_numpy import Program as DslProgram, expr as dsl_expr
from test_lower_graph_programs import Program, expr, graph_programs, maybe_conditional

SIMPLIFY = "graph-algebraic-simplify"


def assert_close(got, want, context: str) -> None:
    """Equal integers; floats within the tolerance of the module docstring."""
    assert len(got) == len(want), context
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, context
        if w.dtype.kind == "f":
            scale = max(1.0, float(np.abs(w[np.isfinite(w)]).max(initial=0.0)))
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                       err_msg=context)
        else:
            np.testing.assert_array_equal(g, w, err_msg=context)


def _call(module, fn: str, args) -> list:
    with np.errstate(all="ignore"):
        f = lookup_symbol_in(module, fn)
        return [np.asarray(v) for v in Interpreter(module).call(f, [np.array(a) for a in args])]


def check_simplified(module, args, pipeline_text: str = SIMPLIFY) -> None:
    text = str(module)
    want = _call(module, "f", args)
    simplified = parse_module(text)
    PassManager.parse(pipeline_text).run(simplified)
    simplified.verify()
    assert_close(_call(simplified, "f", args), want,
                 f"--- input ---\n{text}\n--- output ---\n{simplified}")


# ---------------------------------------------------------------------------------------------
# Graph programs seeded with the rewrites' shapes
# ---------------------------------------------------------------------------------------------

_NONNEGATIVE = ["exp", "softmax", "sigmoid", "abs", "relu", "softplus", "square"]
_BOUNDED = ["tanh", "sigmoid", "sin", "cos"]


def _scaled(draw, p: Program, x):
    """c * x, x * c, x / c (floats) or -x, c a 0-d input, a 0-d constant or a splat constant
    of x's static shape."""
    fl = p.dtype is F32
    kind = draw(st.sampled_from(["mul", "neg"] + (["div"] if fl else [])))
    if kind == "neg":
        return p.op("graph.neg", x)
    choice = draw(st.integers(0, 2))
    value = draw(st.sampled_from([0.5, -2.0, 3.0] if fl else [3, -2, 5]))
    if choice == 0:
        c = p.input(draw, ())
    elif choice == 1 or not x.type.has_static_shape:
        c = p.constant(np.asarray(value, numpy_dtype(p.dtype)))
    else:
        c = p.constant(np.full(x.type.shape, value, numpy_dtype(p.dtype)))
    if kind == "mul" and draw(st.booleans()):
        return p.op("graph.mul", c, x)
    return p.op(f"graph.{kind}", x, c)


def _swap_last(rank: int) -> list:
    return list(range(rank - 2)) + [rank - 1, rank - 2]


@st.composite
def motif(draw, p: Program, shape: tuple, depth: int):
    """A value of run-time shape `shape`: a rewrite's pattern (or near miss) over sub-motifs,
    or a plain random expression."""
    fl = p.dtype is F32
    kinds = ["hoist_reduce", "hoist_matmul", "sink", "broadcast", "reshape"]
    kinds += ["log_softmax", "exp_log", "log_exp"] if fl else []
    kinds += ["transpose_matmul"] if len(shape) >= 2 else []
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        return draw(expr(p, shape, max(depth, 0)))
    kind = draw(st.sampled_from(kinds))

    def sub(s):
        return draw(motif(p, tuple(s), depth - 1))

    if kind == "log_softmax" and shape:
        x = p.op("graph.softmax", sub(shape), axis=draw(st.integers(0, len(shape) - 1)))
        return p.op("graph.log", x)
    if kind == "exp_log":
        x = sub(shape)
        producer = draw(st.sampled_from(_NONNEGATIVE + ["any", "negated"]))
        if producer == "square":
            x = p.op("graph.mul", x, x)
        elif producer == "softmax" and shape:
            x = p.op("graph.softmax", x, axis=-1)
        elif producer == "negated":                     # <= 0, -0.0 included: kept
            x = p.op("graph.neg", p.op("graph.relu", x))
        elif producer not in ("any", "softmax"):
            x = p.op(f"graph.{producer}", x)
        return p.op("graph.exp", p.op("graph.log", x))
    if kind == "log_exp":
        x = sub(shape)
        if draw(st.booleans()):
            x = p.op(f"graph.{draw(st.sampled_from(_BOUNDED))}", x)
        else:                                           # exp overflows: kept
            x = p.op("graph.mul", x, p.constant(np.asarray(100.0, np.float32)))
        return p.op("graph.log", p.op("graph.exp", x))
    if kind == "hoist_reduce":
        at = draw(st.integers(0, len(shape)))
        inner = shape[:at] + (draw(st.integers(1, 3)),) + shape[at:]
        name = draw(st.sampled_from(["reduce_sum"] + (["reduce_mean"] if fl else [])))
        return p.op(f"graph.{name}", _scaled(draw, p, sub(inner)), axes=[at])
    if kind == "hoist_matmul" and shape:
        k = draw(st.integers(1, 4))
        if draw(st.booleans()):
            a = _scaled(draw, p, sub(shape[:-1] + (k,)))
            return p.op("graph.matmul", a, p.input(draw, (k, shape[-1])))
        a = sub(shape[:-1] + (k,))
        return p.op("graph.matmul", a, _scaled(draw, p, p.input(draw, (k, shape[-1]))))
    if kind == "transpose_matmul":
        m, n, k = shape[-2], shape[-1], draw(st.integers(1, 3))
        batch = shape[:-2]
        a = p.op("graph.transpose", sub(batch + (k, n)), perm=_swap_last(len(shape)))
        prod = p.op("graph.matmul", a, p.input(draw, batch + (k, m)))
        return p.op("graph.transpose", prod, perm=_swap_last(len(shape)))
    if kind == "sink" and len(shape) >= 2:
        perm = draw(st.permutations(range(len(shape))))
        other = perm if draw(st.integers(0, 3)) else list(reversed(perm))
        inv = [perm.index(i) for i in range(len(shape))]
        inv2 = [other.index(i) for i in range(len(shape))]
        a = p.op("graph.transpose", sub([shape[i] for i in inv]), perm=list(perm))
        b = p.op("graph.transpose", sub([shape[i] for i in inv2]), perm=list(other))
        if draw(st.booleans()):
            b = p.input(draw, ())
        name = draw(st.sampled_from(["add", "mul", "maximum"]))
        y = p.op(f"graph.{name}", a, b)
        return p.op("graph.neg", y) if draw(st.booleans()) else y
    if kind == "reshape" and shape:
        n = int(np.prod(shape))
        src = draw(st.sampled_from([(n,), shape + (1,), (1,) + shape]))
        a = p.op("graph.reshape", sub(src), [], shape=list(shape))
        b = p.op("graph.reshape", sub(src), [], shape=list(shape))
        return p.op("graph.sub", a, b)
    if kind == "broadcast" and shape:
        x = sub(shape)
        y = p.op("graph.mul", x, x) if draw(st.booleans()) else sub(shape)
        dims = [p.op("graph.dim", y, axis=i) for i in range(len(shape))]
        s = p.input(draw, ()) if draw(st.booleans()) else p.input(draw, (1,) * len(shape))
        b = p.op("graph.broadcast_to", s, dims, shape=[-1] * len(shape))
        return p.op("graph.add", b, x)
    return draw(expr(p, shape, depth - 1))


@st.composite
def motif_programs(draw):
    """(module, input arrays) for a function `@f` built from `motif`."""
    p = Program(draw(st.sampled_from([F32, F32, I32])))
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    root = draw(motif(p, shape, draw(st.integers(1, 4))))
    results = [root]
    if p.values and draw(st.booleans()):            # a second use of some inner value
        results.append(draw(st.sampled_from(p.values)))
    p.b.create(ReturnOp, results, result_types=[])
    fn = FuncOp.build(result_types=[], sym_name=StringAttr("f"),
                      function_type=TypeAttr(FunctionType([a.type for a in p.block.args],
                                                          [r.type for r in results])))
    fn.regions[0].add_block(p.block)
    module = parse_module("")
    module.regions[0].blocks[0].append(fn)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    args = []
    for s, a in zip(p.shapes, p.block.args):
        dt = numpy_dtype(a.type.element)
        args.append(rng.normal(size=s).astype(dt) if np.dtype(dt).kind == "f"
                    else rng.integers(-50, 50, size=s).astype(dt))
    return module, args


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_random_graph_programs_keep_their_results(case):
    check_simplified(*case)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(motif_programs())
def test_motif_programs_keep_their_results(case):
    check_simplified(*case)


_FAST_MATH = """
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = graph.exp %x : (tensor<?xf32>) -> tensor<?xf32>
  %1 = graph.log %0 : (tensor<?xf32>) -> tensor<?xf32>
  %2 = graph.mul %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %s = graph.sqrt %2 : (tensor<?xf32>) -> tensor<?xf32>
  %3 = graph.log %s : (tensor<?xf32>) -> tensor<?xf32>
  %4 = graph.exp %3 : (tensor<?xf32>) -> tensor<?xf32>
  return %1, %4 : tensor<?xf32>, tensor<?xf32>
}
"""


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-80.0, 80.0, width=32), min_size=1, max_size=16))
def test_fast_math_agrees_where_exp_and_log_stay_in_range(xs):
    """`fast-math` drops log(exp(x)) and exp(log(sqrt(x * x))) though neither operand is known
    to be in range (sqrt may give -0.0, so only fast-math takes it to be >= +0); where exp
    neither overflows nor underflows to a subnormal (|x| <= 80 in f32) the results agree
    within the tolerance (the rewrite returns x, the exact value)."""
    check_simplified(parse_module(_FAST_MATH), [np.asarray(xs, np.float32)],
                     "graph-algebraic-simplify{fast-math=true}")
    simplified = parse_module(_FAST_MATH)
    PassManager.parse("graph-algebraic-simplify{fast-math=true}").run(simplified)
    assert "graph.exp" not in str(simplified) and "graph.log" not in str(simplified)


# ---------------------------------------------------------------------------------------------
# Backward graphs: DSL models with grad and train
# ---------------------------------------------------------------------------------------------

_LOSSES = [
    "mean(log(softmax(z, axis=1)) * t)",
    "sum(exp(log(sigmoid(z))) * t)",
    "mean(log(exp(tanh(z))))",
    "mean(z * z) * 0.5",
    "sum(transpose(transpose(z, perm=[1, 0]), perm=[1, 0]) * t)",
    "mean(transpose(z, perm=[1, 0]) * transpose(t, perm=[1, 0]))",
    "cross_entropy(z, labels)",
]


@st.composite
def trained_models(draw):
    """(DSL source, input shapes by name, batch size, seed): a model whose loss is built
    from `_LOSSES` over `z = x @ w + v (+ a random expression)`, with `grad` and `train`."""
    prog = DslProgram()
    extra = ""
    if draw(st.booleans()):
        text, _ = draw(dsl_expr(prog, ("N", 3), draw(st.integers(1, 3))))
        extra = f" + {text}"
    scaled = draw(st.sampled_from(["x", "(x * 0.5)", "(-x)", "(x / 4.0)"]))
    losses = draw(st.lists(st.sampled_from(_LOSSES), min_size=1, max_size=2, unique=True))
    lines = ["model m {", "  input x: f32[N, 4]", "  input t: f32[N, 3]",
             "  input labels: i32[N]"]
    lines += [f"  input {n}: f32[{', '.join(map(str, s))}]" for n, s in prog.inputs]
    lines += ["  param w: f32[4, 3] = normal(std=0.5, seed=1)",
              "  param v: f32[3] = normal(seed=2)",
              f"  z = {scaled} @ w + v{extra}",
              f"  loss = {' + '.join(losses)}",
              "  output loss", "  grad loss wrt w, v", "  train loss with sgd(lr=0.05)", "}"]
    source = "\n".join(lines)
    if draw(st.booleans()):
        source = source.replace("  loss = ", "  out = ").replace(
            "  output loss", "  loss = if sum(x) < 0.0 { out } else { out * 2.0 }\n"
            "  output loss")
    shapes = {"x": ("N", 4), "t": ("N", 3), "labels": ("N",), **dict(prog.inputs)}
    return source, shapes, draw(st.integers(1, 5)), draw(st.integers(0, 2 ** 16))


def _inputs(shapes: dict, n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for name, s in shapes.items():
        concrete = tuple(n if d == "N" else d for d in s)
        out.append(rng.integers(0, 3, size=concrete).astype(np.int32) if name == "labels"
                   else rng.normal(size=concrete).astype(np.float32))
    return out


def _model_at_autodiff(source: str, passes: str):
    from irkit.frontend.dsl import compile_source, model_modules
    top = compile_source(source, "m.irk")
    register_all()
    PassManager.parse(passes).run(top)
    top.verify()
    (module,) = model_modules(top).values()
    return module


def _run_model(module, args) -> list:
    """The forward outputs (loss and gradients), then train_step's loss and the parameters
    after two steps."""
    with np.errstate(all="ignore"):
        out = [np.asarray(v) for v in
               Interpreter(module).call(lookup_symbol_in(module, "forward"), args)]
        interp = Interpreter(module)
        step = lookup_symbol_in(module, "train_step")
        for _ in range(2):
            out += [np.asarray(v) for v in interp.call(step, args)]
        store = interp.state["graph.variables"]
        return out + [np.asarray(store[k]) for k in sorted(store)]


_AUTODIFF = pipeline.passes_between("graph", "autodiff")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trained_models())
def test_backward_graphs_keep_their_results(case):
    source, shapes, n, seed = case
    args = _inputs(shapes, n, seed)
    want = _run_model(_model_at_autodiff(source, _AUTODIFF), args)
    after = _AUTODIFF.replace(",canonicalize", f",{SIMPLIFY},canonicalize")
    before = _AUTODIFF.replace("autodiff,", f"{SIMPLIFY},autodiff,{SIMPLIFY},")
    for passes in (after, before):
        assert_close(_run_model(_model_at_autodiff(source, passes), args), want,
                     f"{passes}\n{source}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_forward_models_with_conditionals_keep_their_results(data):
    """test_dsl_numpy's random models, half of them with an `if` (graph.if after raising)."""
    from test_dsl_numpy import programs as dsl_programs
    source, _, inputs, n, seed = data.draw(dsl_programs())
    source = maybe_conditional(source, data)
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=tuple(n if d == "N" else d for d in s)).astype(np.float32)
            for _, s in inputs]
    base = _model_at_autodiff(source, _AUTODIFF)
    simplified = _model_at_autodiff(source, f"{_AUTODIFF},{SIMPLIFY}")
    with np.errstate(all="ignore"):
        want = Interpreter(base).call(lookup_symbol_in(base, "forward"), args)
        got = Interpreter(simplified).call(lookup_symbol_in(simplified, "forward"), args)
    assert_close(got, want, source)
