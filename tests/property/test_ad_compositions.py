"""Derivatives of random compositions of graph ops agree with finite differences.

hypothesis draws an expression tree over elementwise, reduction, softmax, matmul and shape
ops (transpose, reshape, slice, concat, split, broadcast_to, where) at random shapes with
broadcasting, written directly as float64 graph IR and reduced to a scalar L (a weighted sum,
an mse, or a cross entropy against integer labels). Every node is generated for a target
shape, so programs are well-typed by construction; each op is built with its own `create`,
so result types come from the dialect's shape functions (with `?` for the dynamic variant,
where every size N is unknown to the types). Leaves are fresh inputs or, now and then, a value
already computed, so adjoints fan in.

Checked against central finite differences of the forward program, run by the interpreter
(the ops' numpy semantics):

- reverse mode: `grad L . v` and forward mode: `jvp L along v`, both `dL/dh` along a random
  unit direction v over all float inputs;
- second order: the Hessian-vector product `jvp (grad L) along v` and `grad (grad L . v)`,
  both against `(grad L(x + hv) - grad L(x - hv)) / 2h`.

Unary ops with restricted domains are composed so they stay smooth and finite: `exp(tanh x)`,
`log(x*x + 1)`, `sqrt(x*x + 1)`, `a / (b*b + 1)`, `pow(x*x + 1, c)`.

Dedicated tests follow for what random trees rarely hit: both branches of `graph.if` and of
the dataflow switch/merge conditional, inputs the result does not depend on, paths through
non-differentiable ops into non-differentiable operands, and casts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import format_attr_entry
from irkit.dialects import load_all
from irkit.interpreter import interpret
from irkit.ir import Block
from irkit.opdef import lookup_op
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.types import F64, I64, RankedTensorType
from irkit.verifier import verify

load_all()

H = 1e-6            # central-difference step for L
H2 = 1e-5           # step for differences of the gradient
RTOL = 2e-5


# ---------------------------------------------------------------------------------------------
# Program text
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    """An SSA value of the program being generated: name, declared type, run-time shape."""

    name: str
    type: RankedTensorType
    shape: tuple


def _attr_text(op) -> str:
    entries = dict(op.properties)
    entries.update(op.attributes)
    if not entries:
        return ""
    return " {" + ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items())) + "}"


def _results(types) -> str:
    s = ", ".join(map(str, types))
    return s if len(types) == 1 else f"({s})"


class Program:
    """The body of a scalar function of float64 (and i64 label) inputs, as IR lines."""

    def __init__(self, dynamic: bool, n: int) -> None:
        self.dynamic = dynamic
        self.n = n                          # the batch size; `?` in the types when dynamic
        self.lines: list[str] = []
        self.args: list[Val] = []
        self.pool: list[Val] = []
        self.count = 0

    def declared(self, shape: tuple, element=F64) -> RankedTensorType:
        dims = tuple(None if self.dynamic and d == self.n else d for d in shape)
        return RankedTensorType(dims, element)

    def new_input(self, shape: tuple, element=F64) -> Val:
        v = Val(f"%x{len(self.args)}", self.declared(shape, element), tuple(shape))
        self.args.append(v)
        if element is F64:
            self.pool.append(v)
        return v

    def fresh(self) -> str:
        self.count += 1
        return f"%t{self.count}"

    def op(self, name: str, *vals: Val, rt=None, **props):
        """Append `name` applied to `vals` (result types from its shape function); returns
        the result Val (or list of them). `rt` is the run-time shape of the result(s), by
        default the broadcast of the operands'."""
        cls = lookup_op(name)
        scratch = Block([v.type for v in vals])
        args = list(scratch.args)
        op = cls.create(args, **props) if cls.spec.operands[0].variadic else \
            cls.create(*args, **props)
        types = [r.type for r in op.results]
        lhs = self.fresh()
        ins = ", ".join(str(v.type) for v in vals)
        names = (f"{lhs}" if len(types) == 1 else f"{lhs}:{len(types)}")
        self.lines.append(f"{names} = {name} {', '.join(v.name for v in vals)}"
                          f"{_attr_text(op)} : ({ins}) -> {_results(types)}")
        if rt is None:
            rt = np.broadcast_shapes(*(v.shape for v in vals))
        if len(types) == 1:
            out = Val(lhs, types[0], tuple(rt))
            self.pool.append(out)
            return out
        return [Val(f"{lhs}#{i}", t, tuple(rt)) for i, t in enumerate(types)]

    def const(self, value: float) -> Val:
        name = self.fresh()
        self.lines.append(f"{name} = graph.constant dense<{value!r}> : tensor<f64>")
        return Val(name, RankedTensorType((), F64), ())

    @property
    def float_args(self) -> list[Val]:
        return [a for a in self.args if a.type.element is F64]

    def function(self, name: str, extra_args: list[tuple[str, RankedTensorType]],
                 tail: list[str], results: list[tuple[str, RankedTensorType]]) -> str:
        args = [f"{a.name}: {a.type}" for a in self.args] + [f"{n}: {t}" for n, t in extra_args]
        body = self.lines + tail
        ret = (f"  return {', '.join(n for n, _ in results)} : "
               f"{', '.join(str(t) for _, t in results)}")
        return (f"func.func @{name}({', '.join(args)}) -> {_results([t for _, t in results])} {{\n"
                + "".join(f"  {line}\n" for line in body) + ret + "\n}\n")


# ---------------------------------------------------------------------------------------------
# Random expression trees
# ---------------------------------------------------------------------------------------------


def jitter(p: Program, x: Val) -> Val:
    """`x + r` for a fresh random input r of x's shape. Operands of kinked ops (relu, abs,
    maximum, reduce_max, a comparison) get one: generated programs can make exact ties (a
    broadcast row against itself, relu's zeros, a value fanned out to both sides), where
    the function has no derivative and finite differences give a one-sided average."""
    return p.op("graph.add", x, p.new_input(x.shape), rt=x.shape)


def _smooth_unary(p: Program, fn: str, x: Val) -> Val:
    """One unary function, composed so that it is smooth and finite on any input."""
    if fn in ("relu", "abs"):
        return p.op(f"graph.{fn}", jitter(p, x))
    if fn in ("tanh", "sigmoid", "sin", "cos", "softplus", "gelu", "neg"):
        return p.op(f"graph.{fn}", x)
    if fn == "exp":
        return p.op("graph.exp", p.op("graph.tanh", x))
    sq1 = p.op("graph.add", p.op("graph.mul", x, x), p.const(1.0))      # x*x + 1 >= 1
    if fn == "pow":
        return p.op("graph.pow", sq1, p.const(1.5))
    return p.op(f"graph.{fn}", sq1)                                     # log, sqrt, rsqrt


UNARY = ["tanh", "sigmoid", "sin", "cos", "softplus", "gelu", "neg", "relu", "abs", "exp",
         "log", "sqrt", "rsqrt", "pow"]
BINARY = ["add", "sub", "mul", "maximum", "minimum", "div"]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]


@st.composite
def _broadcast_source(draw, shape):
    """A shape that broadcasts to `shape`: some leading axes dropped, some set to 1."""
    drop = draw(st.integers(0, len(shape)))
    out = list(shape[drop:])
    for i in range(len(out)):
        if draw(st.integers(0, 3)) == 0:
            out[i] = 1
    return tuple(out)


def _static(p: Program, *shapes) -> bool:
    """Whether every size is known to the types (reshape and friends need that)."""
    return not p.dynamic or all(p.n not in s for s in shapes)


@st.composite
def expr(draw, p: Program, shape: tuple, depth: int) -> Val:
    """A value of run-time shape exactly `shape`, made of at most `depth` levels of ops.
    Operands are drawn for shapes the op turns into `shape` (a reduction's operand has one
    more axis, a matmul's share a fresh inner size, a slice's is longer on one axis)."""
    kinds = ["input"]
    if depth > 0:
        kinds += ["unary", "binary", "binary", "reduce", "softmax", "where", "concat",
                  "slice", "split"]
        if len(shape) >= 1:
            kinds += ["matmul"]
        if len(shape) >= 2:
            kinds += ["transpose"]
        if _static(p, shape):
            kinds += ["reshape", "broadcast_to"]
        if len(shape) >= 1 and shape[-1] > 1:
            kinds += ["layernorm"]
    kind = draw(st.sampled_from(kinds))
    if kind == "input":
        same = [v for v in p.pool if v.shape == shape and v.type == p.declared(shape)]
        if same and draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(same))            # fan-out: adjoints add up
        return p.new_input(shape)
    if kind == "unary":
        return _smooth_unary(p, draw(st.sampled_from(UNARY)), draw(expr(p, shape, depth - 1)))
    if kind == "binary":
        fn = draw(st.sampled_from(BINARY))
        a = draw(expr(p, shape, depth - 1))
        if draw(st.integers(0, 3)) == 0:
            b = p.const(draw(st.sampled_from([0.5, 2.0, -1.5])))
        else:
            b = draw(expr(p, draw(_broadcast_source(shape)), depth - 1))
        if fn == "div":                                    # a / (b*b + 1)
            b = p.op("graph.add", p.op("graph.mul", b, b), p.const(1.0))
        if fn in ("maximum", "minimum"):
            a, b = jitter(p, a), jitter(p, b)
        if draw(st.booleans()) and fn != "div":
            a, b = b, a
        return p.op(f"graph.{fn}", a, b, rt=shape)
    if kind == "reduce":
        fn = draw(st.sampled_from(REDUCE))
        smooth = (lambda v: v) if fn in ("reduce_sum", "reduce_mean") else \
            (lambda v: jitter(p, v))
        if shape and draw(st.booleans()):
            # keepdims where the target has a 1: reduce an inner size there, keep the axis
            ones = [i for i, d in enumerate(shape) if d == 1]
            if ones:
                axis = draw(st.sampled_from(ones))
                inner = shape[:axis] + (draw(st.integers(2, 4)),) + shape[axis + 1:]
                x = smooth(draw(expr(p, inner, depth - 1)))
                return p.op(f"graph.{fn}", x, axes=[axis], keepdims=True, rt=shape)
        axis = draw(st.integers(0, len(shape)))
        inner = shape[:axis] + (draw(st.integers(1, 4)),) + shape[axis:]
        x = smooth(draw(expr(p, inner, depth - 1)))
        return p.op(f"graph.{fn}", x, axes=[axis], rt=shape)
    if kind == "softmax":
        if not shape:
            return draw(expr(p, shape, depth - 1))
        fn = draw(st.sampled_from(["softmax", "log_softmax"]))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        return p.op(f"graph.{fn}", draw(expr(p, shape, depth - 1)), axis=axis, rt=shape)
    if kind == "where":
        a = jitter(p, draw(expr(p, shape, depth - 1)))
        b = jitter(p, draw(expr(p, draw(_broadcast_source(shape)), depth - 1)))
        c = p.op("graph.cmp", a, b, predicate=draw(st.sampled_from(["lt", "gt"])), rt=shape)
        x = a if draw(st.booleans()) else draw(expr(p, shape, depth - 1))
        return p.op("graph.where", c, x, b, rt=shape)
    if kind == "matmul":
        k = draw(st.integers(1, 4))
        if len(shape) == 1 and draw(st.booleans()):
            # vector @ matrix
            a = draw(expr(p, (k,), depth - 1))
        else:
            a = draw(expr(p, shape[:-1] + (k,), depth - 1))
        w = draw(expr(p, (k, shape[-1]), depth - 1))
        return p.op("graph.matmul", a, w, rt=shape)
    if kind == "transpose":
        perm = draw(st.permutations(range(len(shape))))
        inv = [perm.index(i) for i in range(len(shape))]
        x = draw(expr(p, tuple(shape[i] for i in inv), depth - 1))
        return p.op("graph.transpose", x, perm=list(perm), rt=shape)
    if kind == "reshape":
        size = int(np.prod(shape))
        inner = draw(st.sampled_from([(size,), tuple(reversed(shape)), (1,) + tuple(shape)]))
        x = draw(expr(p, inner, depth - 1))
        return p.op("graph.reshape", x, shape=list(shape), rt=shape)
    if kind == "broadcast_to":
        src = draw(_broadcast_source(shape))
        x = draw(expr(p, src, depth - 1))
        return p.op("graph.broadcast_to", x, shape=list(shape), rt=shape)
    if kind == "concat":
        axes = [i for i, d in enumerate(shape) if d >= 2 and _static(p, (d,))]
        if not axes:
            return draw(expr(p, shape, depth - 1))
        axis = draw(st.sampled_from(axes))
        cut = draw(st.integers(1, shape[axis] - 1))
        a = draw(expr(p, shape[:axis] + (cut,) + shape[axis + 1:], depth - 1))
        b = draw(expr(p, shape[:axis] + (shape[axis] - cut,) + shape[axis + 1:], depth - 1))
        return p.op("graph.concat", a, b, axis=axis, rt=shape)
    if kind == "slice":
        axes = [i for i, d in enumerate(shape) if _static(p, (d,))]
        if not axes:
            return draw(expr(p, shape, depth - 1))
        axis = draw(st.sampled_from(axes))
        step = draw(st.sampled_from([1, 2, -1]))
        start = draw(st.integers(0, 2))
        size = start + abs(step) * shape[axis] + draw(st.integers(0, 1))
        inner = shape[:axis] + (size,) + shape[axis + 1:]
        x = draw(expr(p, inner, depth - 1))
        rank = len(shape)
        starts, stops, steps = [0] * rank, [2 ** 63 - 1] * rank, [1] * rank
        if step > 0:
            starts[axis], stops[axis], steps[axis] = start, start + step * shape[axis], step
        else:
            stop = size - 1 - start - shape[axis]            # -1 would mean "the last"
            starts[axis], stops[axis], steps[axis] = size - 1 - start, \
                stop if stop >= 0 else -(2 ** 63 - 1), -1
        for i, d in enumerate(shape):
            if i != axis and not _static(p, (d,)):
                starts[i], stops[i], steps[i] = 0, 2 ** 63 - 1, 1
        return p.op("graph.slice", x, starts=starts, stops=stops, steps=steps, rt=shape)
    if kind == "split":
        axes = [i for i, d in enumerate(shape) if _static(p, (d,))]
        if not axes:
            return draw(expr(p, shape, depth - 1))
        axis = draw(st.sampled_from(axes))
        sections = draw(st.integers(2, 3))
        inner = shape[:axis] + (shape[axis] * sections,) + shape[axis + 1:]
        x = draw(expr(p, inner, depth - 1))
        parts = p.op("graph.split", x, axis=axis, sections=sections, rt=shape)
        picked = draw(st.lists(st.integers(0, sections - 1), min_size=1, max_size=2,
                               unique=True))
        out = parts[picked[0]]
        for j in picked[1:]:                 # some parts unused: their cotangents are None
            out = p.op("graph.add", out, parts[j], rt=shape)
        return out
    # layernorm over the last axis, with its own gamma and beta
    x = draw(expr(p, shape, depth - 1))
    g = p.new_input((shape[-1],))
    b = p.new_input((shape[-1],))
    return p.op("graph.layernorm", x, g, b, rt=shape)


@st.composite
def programs(draw, max_depth: int = 3):
    """A Program whose last value is the scalar loss `%L`."""
    dynamic = draw(st.booleans())
    # A dynamic N is larger than any size the generator derives (<= 12), so exactly the axes
    # of size N are `?`, and a `?` is never 1 at run time (a static unbroadcast would miss it).
    n = 13 if dynamic else draw(st.integers(1, 4))
    rank = draw(st.integers(0, 3))
    shape = tuple([n] + [draw(st.integers(1, 4)) for _ in range(rank - 1)]) if rank else ()
    p = Program(dynamic, n)
    out = draw(expr(p, shape, draw(st.integers(1, max_depth))))
    # cross entropy needs a static class count for its derivative (test_cross_entropy_
    # dynamic_classes below says whether that still holds)
    xent = len(shape) == 2 and shape[1] > 1 and out.type.shape[1] is not None
    loss = draw(st.sampled_from(["sum", "mse", "xent"] if xent else ["sum", "mse"]))
    if loss == "sum":
        w = p.new_input(shape)
        L = p.op("graph.reduce_sum", p.op("graph.mul", out, w), rt=())
    elif loss == "mse":
        L = p.op("graph.mse", out, p.new_input(shape), rt=())
    else:
        L = p.op("graph.cross_entropy", out, p.new_input((shape[0],), I64), rt=())
    p.lines.append(f"%L = graph.reduce_sum {L.name} : ({L.type}) -> tensor<f64>")
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return p, seed


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------

SCALAR = RankedTensorType((), F64)


def _inputs(p: Program, rng) -> list:
    out = []
    for a in p.args:
        if a.type.element is I64:              # cross-entropy labels; every C is >= 2
            out.append(rng.integers(0, 2, size=a.shape).astype(np.int64))
        else:
            out.append(rng.uniform(0.5, 2.0, a.shape) * rng.choice([-1.0, 1.0], a.shape))
    return out


def _module(text: str):
    m = parse_module(text, "<ad composition>")
    verify(m)
    try:
        PassManager.parse("autodiff,canonicalize,cse").run(m)
        verify(m)
    except Exception as e:
        raise AssertionError(f"{type(e).__name__}: {e}\n{text}") from e
    left = [o.name for o in m.walk() if o.name.startswith("autodiff.")]
    assert not left, f"{left} left after -p autodiff"
    return m


def _call(m, fn: str, args) -> list:
    out = interpret(m, fn, *args)
    return list(out) if isinstance(out, tuple) else [out]


def _tail_grad(xs: list[Val]) -> tuple[list[str], list[tuple[str, RankedTensorType]]]:
    lhs = "%g" if len(xs) == 1 else f"%g:{len(xs)}"
    line = (f"{lhs} = autodiff.grad %L wrt {', '.join(x.name for x in xs)} : "
            f"(tensor<f64>) -> {_results([x.type for x in xs])}")
    names = ["%g"] if len(xs) == 1 else [f"%g#{i}" for i in range(len(xs))]
    return [line], list(zip(names, [x.type for x in xs]))


def _directions(xs, rng):
    vs = [rng.normal(size=x.shape) for x in xs]
    norm = np.sqrt(sum(float(np.sum(v * v)) for v in vs))
    return [v / norm for v in vs]


def _shift(p: Program, args: list, xs: list[Val], vs: list, h: float) -> list:
    pos = {a.name: i for i, a in enumerate(p.args)}
    out = list(args)
    for x, v in zip(xs, vs):
        out[pos[x.name]] = args[pos[x.name]] + h * v
    return out


def build_module(p: Program) -> str:
    """@loss (L), @grad (dL/dx), @jvp (dL along v), @hvp (jvp of grad), @gg (grad of
    grad . u) over the program's float inputs."""
    xs = p.float_args
    grad_tail, grads = _tail_grad(xs)
    vs = [(f"%v{i}", x.type) for i, x in enumerate(xs)]
    along = ", ".join(n for n, _ in vs)
    wrt = ", ".join(x.name for x in xs)
    text = p.function("loss", [], [], [("%L", SCALAR)])
    text += p.function("grad", [], grad_tail, grads)
    text += p.function("jvp", vs, [
        f"%d = autodiff.jvp %L wrt {wrt} along {along} : "
        f"({', '.join(str(x.type) for x in xs)}) -> tensor<f64>"], [("%d", SCALAR)])
    lhs = "%h" if len(xs) == 1 else f"%h:{len(xs)}"
    hnames = ["%h"] if len(xs) == 1 else [f"%h#{i}" for i in range(len(xs))]
    text += p.function("hvp", vs, grad_tail + [
        f"{lhs} = autodiff.jvp {', '.join(n for n, _ in grads)} wrt {wrt} along {along} : "
        f"({', '.join(str(x.type) for x in xs)}) -> {_results([x.type for x in xs])}"],
        list(zip(hnames, [x.type for x in xs])))
    dots = []
    for i, ((g, t), (v, _)) in enumerate(zip(grads, vs)):
        dots += [f"%gu{i} = graph.mul {g}, {v} : ({t}, {t}) -> {t}",
                 f"%gs{i} = graph.reduce_sum %gu{i} : ({t}) -> tensor<f64>"]
    total = "%gs0"
    for i in range(1, len(xs)):
        dots.append(f"%ga{i} = graph.add {total}, %gs{i} : (tensor<f64>, tensor<f64>) -> "
                    f"tensor<f64>")
        total = f"%ga{i}"
    glhs = "%k" if len(xs) == 1 else f"%k:{len(xs)}"
    knames = ["%k"] if len(xs) == 1 else [f"%k#{i}" for i in range(len(xs))]
    text += p.function("gg", vs, grad_tail + dots + [
        f"{glhs} = autodiff.grad {total} wrt {wrt} : (tensor<f64>) -> "
        f"{_results([x.type for x in xs])}"], list(zip(knames, [x.type for x in xs])))
    return text


def _settings(n: int):
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


@_settings(60)
@given(programs())
def test_random_compositions_first_order(case):
    p, seed = case
    text = build_module(p)
    rng = np.random.default_rng(seed)
    args = _inputs(p, rng)
    xs = p.float_args
    m = _module(text)
    (L,) = _call(m, "loss", args)
    assert np.isfinite(L), text
    grads = _call(m, "grad", args)
    for g, x in zip(grads, xs):
        assert g.shape == x.shape and g.dtype == np.float64, f"d{x.name}: {g.shape}\n{text}"
    vs = _directions(xs, rng)
    hi = _call(m, "loss", _shift(p, args, xs, vs, H))[0]
    lo = _call(m, "loss", _shift(p, args, xs, vs, -H))[0]
    want = float(hi - lo) / (2 * H)
    got = sum(float(np.sum(g * v)) for g, v in zip(grads, vs))
    scale = np.sqrt(sum(float(np.sum(g * g)) for g in grads)) + abs(want)
    assert abs(got - want) <= RTOL * scale + 1e-8, \
        f"reverse mode: grad . v = {got!r}, finite differences {want!r}\n{text}"
    (tangent,) = _call(m, "jvp", args + vs)
    assert abs(float(tangent) - want) <= RTOL * scale + 1e-8, \
        f"forward mode: jvp = {float(tangent)!r}, finite differences {want!r}\n{text}"


@_settings(40)
@given(programs(max_depth=2))
def test_random_compositions_second_order(case):
    p, seed = case
    text = build_module(p)
    rng = np.random.default_rng(seed)
    args = _inputs(p, rng)
    xs = p.float_args
    m = _module(text)
    vs = _directions(xs, rng)
    hi = _call(m, "grad", _shift(p, args, xs, vs, H2))
    lo = _call(m, "grad", _shift(p, args, xs, vs, -H2))
    want = [(a - b) / (2 * H2) for a, b in zip(hi, lo)]
    scale = max(max(float(np.max(np.abs(w), initial=0.0)) for w in want), 1e-2)
    for fn in ("hvp", "gg"):
        got = _call(m, fn, args + vs)
        for x, gv, w in zip(xs, got, want):
            np.testing.assert_allclose(gv, w, rtol=1e-4, atol=1e-4 * scale,
                                       err_msg=f"@{fn}: d/d{x.name} of grad along v\n{text}")


# ---------------------------------------------------------------------------------------------
# Conditionals, both branches
# ---------------------------------------------------------------------------------------------

# The lecture's tf.cond example (examples/gate.irk): out = x + z if sum(x) < sum(y) else y * y.
_IF_BODY = """
  %sx = graph.reduce_sum %x : (tensor<3xf64>) -> tensor<f64>
  %sy = graph.reduce_sum %y : (tensor<3xf64>) -> tensor<f64>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %out = graph.if %p -> (tensor<3xf64>) {
    %a = graph.add %x, %z : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    %e = graph.sin %a : (tensor<3xf64>) -> tensor<3xf64>
    graph.yield %e : tensor<3xf64>
  } else {
    %m = graph.mul %y, %y : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    graph.yield %m : tensor<3xf64>
  }
"""

_DATAFLOW_BODY = """
  %sx = graph.reduce_sum %x : (tensor<3xf64>) -> tensor<f64>
  %sy = graph.reduce_sum %y : (tensor<3xf64>) -> tensor<f64>
  %p = graph.cmp %sx, %sy {predicate = "lt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %xf, %xt = graph.switch %x, %p : (tensor<3xf64>, tensor<i1>) -> (tensor<3xf64>, tensor<3xf64>)
  %zf, %zt = graph.switch %z, %p : (tensor<3xf64>, tensor<i1>) -> (tensor<3xf64>, tensor<3xf64>)
  %yf, %yt = graph.switch %y, %p : (tensor<3xf64>, tensor<i1>) -> (tensor<3xf64>, tensor<3xf64>)
  %a = graph.add %xt, %zt : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %e = graph.sin %a : (tensor<3xf64>) -> tensor<3xf64>
  %m = graph.mul %yf, %yf : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %out, %i = graph.merge %m, %e : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<i32>)
"""

_T = "tensor<3xf64>"


def _conditional_module(body: str) -> str:
    args = f"%x: {_T}, %y: {_T}, %z: {_T}"
    return (
        f"func.func @f({args}) -> {_T} {{{body}  return %out : {_T}\n}}\n"
        f"func.func @grad({args}, %s: {_T}) -> ({_T}, {_T}, {_T}) {{{body}"
        f"  %g:3 = autodiff.grad %out seed %s wrt %x, %y, %z : ({_T}, {_T}) -> ({_T}, {_T}, {_T})\n"
        f"  return %g#0, %g#1, %g#2 : {_T}, {_T}, {_T}\n}}\n"
        f"func.func @jvp({args}, %vx: {_T}, %vy: {_T}, %vz: {_T}) -> {_T} {{{body}"
        f"  %t = autodiff.jvp %out wrt %x, %y, %z along %vx, %vy, %vz"
        f" : ({_T}, {_T}, {_T}) -> {_T}\n"
        f"  return %t : {_T}\n}}\n")


def _fd_jacobian_checks(m, args, rng, what: str) -> None:
    s = rng.normal(size=3)
    grads = _call(m, "grad", args + [s])
    vs = [rng.normal(size=3) for _ in range(3)]
    hi = _call(m, "f", [a + H * v for a, v in zip(args, vs)])[0]
    lo = _call(m, "f", [a - H * v for a, v in zip(args, vs)])[0]
    jv = (hi - lo) / (2 * H)
    got = sum(float(np.dot(g, v)) for g, v in zip(grads, vs))
    np.testing.assert_allclose(got, float(np.dot(s, jv)), rtol=1e-6, atol=1e-8,
                               err_msg=f"{what}: reverse mode")
    (t,) = _call(m, "jvp", args + vs)
    np.testing.assert_allclose(t, jv, rtol=1e-6, atol=1e-8, err_msg=f"{what}: forward mode")


@pytest.mark.parametrize("form", ["if", "switch-merge"])
@pytest.mark.parametrize("branch", ["then", "else"])
def test_conditional_both_branches(form, branch):
    """Derivatives flow through the branch that ran and only that one: in the then branch
    d/dy is 0, in the else branch d/dx and d/dz are."""
    m = _module(_conditional_module(_IF_BODY if form == "if" else _DATAFLOW_BODY))
    rng = np.random.default_rng(7)
    x, y, z = (rng.uniform(0.5, 2.0, 3) for _ in range(3))
    if branch == "then":
        y = y + 10.0            # sum(x) < sum(y)
    else:
        x = x + 10.0
    s = rng.normal(size=3)
    gx, gy, gz = _call(m, "grad", [x, y, z, s])
    if branch == "then":
        np.testing.assert_allclose(gx, s * np.cos(x + z), rtol=1e-12)
        np.testing.assert_allclose(gz, s * np.cos(x + z), rtol=1e-12)
        np.testing.assert_array_equal(gy, 0.0)
    else:
        np.testing.assert_array_equal(gx, 0.0)
        np.testing.assert_array_equal(gz, 0.0)
        np.testing.assert_allclose(gy, 2 * s * y, rtol=1e-12)
    _fd_jacobian_checks(m, [x, y, z], rng, f"{form}/{branch}")


# ---------------------------------------------------------------------------------------------
# Edges of the activity analysis
# ---------------------------------------------------------------------------------------------


def test_unrelated_input_gets_zeros():
    m = _module(f"""
func.func @f(%x: {_T}, %y: {_T}) -> ({_T}, {_T}, tensor<f64>) {{
  %e = graph.exp %x : ({_T}) -> {_T}
  %l = graph.reduce_sum %e : ({_T}) -> tensor<f64>
  %g:2 = autodiff.grad %l wrt %x, %y : (tensor<f64>) -> ({_T}, {_T})
  %t = autodiff.jvp %l wrt %y along %x : ({_T}) -> tensor<f64>
  return %g#0, %g#1, %t : {_T}, {_T}, tensor<f64>
}}""")
    x, y = np.array([0.5, 1.0, -2.0]), np.array([1.0, 2.0, 3.0])
    gx, gy, t = _call(m, "f", [x, y])
    np.testing.assert_allclose(gx, np.exp(x), rtol=1e-14)
    np.testing.assert_array_equal(gy, 0.0)
    assert float(t) == 0.0


def test_paths_through_nondifferentiable_operands_are_cut():
    """argmax feeds gather's indices and cmp feeds where's predicate: no derivative flows
    along those edges, so neither is an error, and only the data paths count."""
    m = _module("""
func.func @f(%x: tensor<4xf64>, %t: tensor<4x3xf64>) -> (tensor<4xf64>, tensor<4x3xf64>) {
  %i = graph.argmax %x {axis = 0 : i64} : (tensor<4xf64>) -> tensor<i64>
  %row = graph.gather %t, %i : (tensor<4x3xf64>, tensor<i64>) -> tensor<3xf64>
  %zero = graph.constant dense<0.0> : tensor<f64>
  %c = graph.cmp %x, %zero {predicate = "gt"} : (tensor<4xf64>, tensor<f64>) -> tensor<4xi1>
  %n = graph.neg %x : (tensor<4xf64>) -> tensor<4xf64>
  %a = graph.where %c, %x, %n : (tensor<4xi1>, tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %sa = graph.reduce_sum %a : (tensor<4xf64>) -> tensor<f64>
  %sr = graph.reduce_sum %row : (tensor<3xf64>) -> tensor<f64>
  %l = graph.add %sa, %sr : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %g:2 = autodiff.grad %l wrt %x, %t : (tensor<f64>) -> (tensor<4xf64>, tensor<4x3xf64>)
  return %g#0, %g#1 : tensor<4xf64>, tensor<4x3xf64>
}""")
    x = np.array([0.5, -1.0, 2.0, -0.7])
    t = np.arange(12.0).reshape(4, 3)
    gx, gt = _call(m, "f", [x, t])
    np.testing.assert_array_equal(gx, np.sign(x))            # d|x|/dx; argmax adds nothing
    want = np.zeros((4, 3))
    want[2] = 1.0                                            # the row argmax picked
    np.testing.assert_array_equal(gt, want)


def test_gradient_through_casts():
    """f64 -> f32 -> f64: the cotangent comes back through both casts (rounded to f32)."""
    m = _module("""
func.func @f(%x: tensor<3xf64>, %s: tensor<3xf64>) -> tensor<3xf64> {
  %a = graph.cast %x : (tensor<3xf64>) -> tensor<3xf32>
  %b = graph.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  %c = graph.cast %b : (tensor<3xf32>) -> tensor<3xf64>
  %g = autodiff.grad %c seed %s wrt %x : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %g : tensor<3xf64>
}""")
    x, s = np.array([0.5, 1.0, -2.0]), np.array([1.0, -2.0, 0.25])
    (g,) = _call(m, "f", [x, s])
    np.testing.assert_allclose(g, s * np.exp(x), rtol=1e-6)


def test_cross_entropy_dynamic_classes():
    """Logits whose class count the types do not know (`?`, as shape inference leaves it
    after some ops) still have a gradient: softmax(logits) - one_hot(labels), over the
    number of classes the logits have at run time."""
    m = _module("""
func.func @f(%x: tensor<?x?xf64>, %l: tensor<?xi64>) -> tensor<?x?xf64> {
  %c = graph.cross_entropy %x, %l : (tensor<?x?xf64>, tensor<?xi64>) -> tensor<f64>
  %g = autodiff.grad %c wrt %x : (tensor<f64>) -> tensor<?x?xf64>
  return %g : tensor<?x?xf64>
}""")
    x = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    labels = np.array([2, 0])
    (g,) = _call(m, "f", [x, labels])
    p = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(g, (p - np.eye(3)[labels]) / 2, rtol=1e-12)
