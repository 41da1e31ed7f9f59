"""Derivatives of the shape ops (dialects/graph_shape.py, graph_slice.py, graph_indexing.py),
checked against finite differences.

Every op here but `dim` and `one_hot` is linear, so its vjp is a `transpose` rule and its jvp
is derived by the engine. Each test builds a small function around one op (hypothesis draws
shapes, permutations, axes, slice bounds, indices with repeats, and which sizes the types
leave unknown), expands `autodiff.grad` and `autodiff.jvp` with `autodiff,canonicalize,cse`,
runs the result in the interpreter, and compares in float64:

- the gradient with a central-difference Jacobian of the forward function, element by element;
- the forward-mode tangent with a central difference along the same random direction;
- the two modes with each other: s . (J v) == (s^T J) . v.

Second order: the gradient of a gradient with respect to its seed is J w (so the transposes'
own rules, `insert_slice` and `scatter_add` included, are exact), and a Hessian-vector
product through a composite with a nonlinear op agrees with differences of its gradient.
Expected values come from differences of the forward function, never from the rules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irkit.attributes import format_attr_entry
from irkit.ad_rules import is_differentiable
from irkit.diagnostics import IRError
from irkit.dialects import load_all
from irkit.dialects.graph import TensorSpec
from irkit.interpreter import interpret
from irkit.opdef import lookup_op
from irkit.parser import parse_module, parse_type
from irkit.pass_manager import PassManager
from irkit.printer import print_op
from irkit.types import F16, F32, F64, I32, I64, RankedTensorType

load_all()

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
END = 9223372036854775807
STEP = 1e-6
_ELEMENT = {np.dtype(np.float64): F64, np.dtype(np.float32): F32, np.dtype(np.float16): F16,
            np.dtype(np.int64): I64, np.dtype(np.int32): I32}


# ---------------------------------------------------------------------------------------------
# Building a function op by op, and checking its derivatives
# ---------------------------------------------------------------------------------------------


class Prog:
    """The body of a function, written op by op with result types from the shape functions,
    and the values its arguments get."""

    def __init__(self) -> None:
        self.args: list[tuple[str, str]] = []      # (name, type)
        self.values: list[np.ndarray] = []
        self.lines: list[str] = []
        self.types: dict[str, str] = {}

    def arg(self, value, unknown=()) -> str:
        """An argument holding `value`; the axes in `unknown` are `?` in its type."""
        value = np.asarray(value)
        shape = tuple(None if i in unknown else d for i, d in enumerate(value.shape))
        t = str(RankedTensorType(shape, _ELEMENT[value.dtype]))
        name = f"%a{len(self.args)}"
        self.args.append((name, t))
        self.values.append(value)
        self.types[name] = t
        return name

    def op(self, name: str, *operands: str, **props):
        """`name` applied to `operands`; its result name, or the list of them."""
        cls = lookup_op(name)
        specs = [TensorSpec.of(parse_type(self.types[o])) for o in operands]
        full = {pd.name: pd.to_py(pd.default) for pd in cls.spec.props if pd.optional}
        full.update(props)
        outs = [str(s.to_type()) for s in cls.infer(specs, full)]
        r = f"%v{len(self.lines)}"
        names = [r] if len(outs) == 1 else [f"{r}#{i}" for i in range(len(outs))]
        attrs = ", ".join(format_attr_entry(k, v)
                          for k, v in sorted(cls.py_props_to_attrs(props).items()))
        self.lines.append(
            f"{r}{'' if len(outs) == 1 else f':{len(outs)}'} = {name} {', '.join(operands)}"
            f"{' {' + attrs + '}' if attrs else ''} : "
            f"({', '.join(self.types[o] for o in operands)}) -> {_tuple(outs)}")
        self.types.update(zip(names, outs))
        return names[0] if len(names) == 1 else names

    def func(self, fname: str, extra: list[tuple[str, str]], tail: list[str],
             results: list[str]) -> str:
        """A function of the arguments and `extra` ones: the body, `tail`, and `results`."""
        args = ", ".join(f"{n}: {t}" for n, t in self.args + extra)
        types = [self.types[r] for r in results]
        body = "\n".join("  " + line for line in self.lines + tail)
        return (f"func.func @{fname}({args}) -> ({', '.join(types)}) {{\n{body}\n"
                f"  return {', '.join(results)} : {', '.join(types)}\n}}")


def _tuple(types: list[str]) -> str:
    return types[0] if len(types) == 1 else f"({', '.join(types)})"


def _results(name: str, n: int) -> tuple[str, list[str]]:
    """`%g` or `%g:3` for the left-hand side, and the names of the results."""
    if n == 1:
        return name, [name]
    return f"{name}:{n}", [f"{name}#{i}" for i in range(n)]


def compile_module(text: str):
    m = parse_module(text, "<test>")
    PassManager.parse("autodiff,canonicalize,cse").run(m)
    return m


def call(m, fname: str, *args) -> list[np.ndarray]:
    out = interpret(m, fname, *args)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _derivative_module(p: Prog, xs: list[str], ys: list[str], seeded: list[str]):
    """@fwd (the ys), @vjp (the cotangents of the xs for seeds of `seeded`) and @jvp (the
    tangents of the ys along directions of the xs)."""
    seeds = [(f"%s{i}", p.types[y]) for i, y in enumerate(seeded)]
    dirs = [(f"%t{i}", p.types[x]) for i, x in enumerate(xs)]
    x_types = [p.types[x] for x in xs]
    y_types = [p.types[y] for y in ys]
    g_lhs, g = _results("%g", len(xs))
    j_lhs, j = _results("%j", len(ys))
    grad = (f"{g_lhs} = autodiff.grad {', '.join(seeded)} seed "
            f"{', '.join(n for n, _ in seeds)} wrt {', '.join(xs)} : "
            f"({', '.join([p.types[y] for y in seeded] * 2)}) -> {_tuple(x_types)}")
    jvp = (f"{j_lhs} = autodiff.jvp {', '.join(ys)} wrt {', '.join(xs)} along "
           f"{', '.join(n for n, _ in dirs)} : ({', '.join(x_types)}) -> {_tuple(y_types)}")
    p.types.update(zip(g, x_types))
    p.types.update(zip(j, y_types))
    text = "\n".join([p.func("fwd", [], [], ys), p.func("vjp", seeds, [grad], g),
                      p.func("jvp", dirs, [jvp], j)])
    return compile_module(text)


def fd_jacobian_columns(f, values: list, k: int):
    """For each element of argument k, the central difference of f's results along it."""
    x = values[k]
    cols = []
    for idx in np.ndindex(*x.shape):
        plus, minus = list(values), list(values)
        plus[k], minus[k] = x.copy(), x.copy()
        plus[k][idx] += STEP
        minus[k][idx] -= STEP
        cols.append((idx, [(a - b) / (2 * STEP) for a, b in zip(f(plus), f(minus))]))
    return cols


def fd_along(f, values: list, ks: list[int], dirs: list) -> list[np.ndarray]:
    plus, minus = list(values), list(values)
    for k, d in zip(ks, dirs):
        plus[k] = values[k] + STEP * d
        minus[k] = values[k] - STEP * d
    return [(a - b) / (2 * STEP) for a, b in zip(f(plus), f(minus))]


def close(a, b) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def check(p: Prog, xs: list[str], ys: list[str], seeded: list[str] | None = None,
          seed: int = 0) -> None:
    """Reverse and forward mode of `p` (from the `xs` to the `ys`) against differences."""
    seeded = ys if seeded is None else seeded
    m = _derivative_module(p, xs, ys, seeded)
    rng = np.random.default_rng(seed)
    names = [n for n, _ in p.args]
    ks = [names.index(x) for x in xs]
    values = p.values
    fwd = lambda vals: call(m, "fwd", *vals)       # noqa: E731
    y_vals = fwd(values)
    which = [ys.index(y) for y in seeded]
    seeds = [rng.normal(size=y_vals[i].shape) for i in which]
    grads = call(m, "vjp", *values, *seeds)
    for k, g in zip(ks, grads):
        assert g.shape == values[k].shape and g.dtype == np.float64
        want = np.zeros(values[k].shape)
        for idx, col in fd_jacobian_columns(fwd, values, k):
            want[idx] = sum(float(np.sum(s * col[i])) for s, i in zip(seeds, which))
        close(g, want)
    dirs = [rng.normal(size=values[k].shape) for k in ks]
    tangents = call(m, "jvp", *values, *dirs)
    for t, want in zip(tangents, fd_along(fwd, values, ks, dirs)):
        assert t.shape == want.shape and t.dtype == np.float64
        close(t, want)
    lhs = sum(float(np.sum(s * tangents[i])) for s, i in zip(seeds, which))
    rhs = sum(float(np.sum(g * d)) for g, d in zip(grads, dirs))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

dims = st.integers(1, 3)


@st.composite
def arrays(draw, shape, dtype=np.float64):
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


@st.composite
def unknown_axes(draw, rank: int) -> tuple:
    """Which axes a type leaves unknown (`?`)."""
    return tuple(i for i in range(rank) if draw(st.booleans()))


# ---------------------------------------------------------------------------------------------
# One op at a time
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_transpose(data):
    shape = data.draw(st.lists(dims, max_size=4))
    perm = data.draw(st.permutations(range(len(shape))) | st.just([]))
    p = Prog()
    x = p.arg(data.draw(arrays(tuple(shape))), data.draw(unknown_axes(len(shape))))
    check(p, [x], [p.op("graph.transpose", x, perm=perm)])


@st.composite
def factorization(draw, n: int) -> list[int]:
    """Sizes multiplying to n, in a random order, some of them 1."""
    out, rest = [], n
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from([d for d in range(1, rest + 1) if rest % d == 0]))
        out.append(d)
        rest //= d
    out.append(rest)
    return draw(st.permutations(out))


@SETTINGS
@given(st.data())
def test_reshape(data):
    """Unknown sizes in x, a -1 in the target, or several -1 read from size operands: the
    gradient reshapes back to x's type, reading x's unknown sizes when there are several."""
    shape = tuple(data.draw(st.lists(dims, max_size=4)))
    target = data.draw(factorization(int(np.prod(shape))))
    p = Prog()
    x = p.arg(data.draw(arrays(shape)), data.draw(unknown_axes(len(shape))))
    mode = data.draw(st.sampled_from(["static", "infer", "sizes"]))
    if mode == "infer":
        target[data.draw(st.integers(0, len(target) - 1))] = -1
        y = p.op("graph.reshape", x, shape=target)
    elif mode == "sizes":
        holes = data.draw(unknown_axes(len(target)))
        sizes = [p.arg(np.int64(target[i])) for i in holes]
        y = p.op("graph.reshape", x, *sizes,
                 shape=[-1 if i in holes else d for i, d in enumerate(target)])
    else:
        y = p.op("graph.reshape", x, shape=target)
    check(p, [x], [y])


@SETTINGS
@given(st.data())
def test_broadcast_to(data):
    """New leading axes and stretched size-1 axes are summed; -1 entries take size operands.
    An axis of x is unknown only where it is not stretched (see the transpose rule)."""
    shape = data.draw(st.lists(st.integers(1, 3), max_size=3))
    lead = data.draw(st.lists(dims, max_size=2))
    target = lead + [data.draw(dims) if d == 1 else d for d in shape]
    holes = data.draw(unknown_axes(len(target)))
    unknown = [i for i in data.draw(unknown_axes(len(shape))) if target[len(lead) + i] ==
               shape[i]]
    p = Prog()
    x = p.arg(data.draw(arrays(tuple(shape))), unknown)
    sizes = [p.arg(np.int64(target[i])) for i in holes]
    y = p.op("graph.broadcast_to", x, *sizes,
             shape=[-1 if i in holes else d for i, d in enumerate(target)])
    check(p, [x], [y])


@SETTINGS
@given(st.data())
def test_concat(data):
    """Each input gets its part of the cotangent, empty inputs and one input of unknown
    size along the axis included."""
    rank = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-rank, rank - 1))
    base = data.draw(st.lists(dims, min_size=rank, max_size=rank))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    unknown_one = data.draw(st.none() | st.integers(0, len(sizes) - 1))
    p = Prog()
    xs = []
    for i, n in enumerate(sizes):
        shape = list(base)
        shape[axis] = n
        other = [a for a in data.draw(unknown_axes(rank)) if a != axis % rank]
        xs.append(p.arg(data.draw(arrays(tuple(shape))),
                        other + ([axis % rank] if i == unknown_one else [])))
    check(p, xs, [p.op("graph.concat", *xs, axis=axis)])


@SETTINGS
@given(st.data())
def test_concat_of_several_unknown_sizes(data):
    """Inputs of unknown size along the axis: their parts are cut at run-time offsets (a
    split into parts of the inputs' sizes)."""
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=4))
    unknown = data.draw(st.lists(st.sampled_from(range(len(sizes))), min_size=2, unique=True))
    p = Prog()
    xs = [p.arg(data.draw(arrays((2, n))), [1] if i in unknown else [])
          for i, n in enumerate(sizes)]
    check(p, xs, [p.op("graph.concat", *xs, axis=-1)])


@SETTINGS
@given(st.data())
def test_split_into_sizes(data):
    """The sized split, the transpose of such a concat, is itself linear."""
    lengths = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    p = Prog()
    x = p.arg(data.draw(arrays((sum(lengths), 2))), data.draw(unknown_axes(2)))
    sizes = [p.arg(np.int64(n)) for n in lengths]
    parts = p.op("graph.split", x, *sizes, axis=0, sections=len(lengths))
    parts = parts if isinstance(parts, list) else [parts]
    seeded = data.draw(st.lists(st.sampled_from(parts), min_size=1, unique=True))
    check(p, [x], parts, seeded=seeded)


@SETTINGS
@given(st.data())
def test_split(data):
    """Parts whose cotangent is None (not seeded) get zeros in the concatenation."""
    rank = data.draw(st.integers(1, 3))
    axis = data.draw(st.integers(-rank, rank - 1))
    sections = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(dims, min_size=rank, max_size=rank))
    shape[axis] = sections * data.draw(st.integers(1, 2))
    p = Prog()
    x = p.arg(data.draw(arrays(tuple(shape))), data.draw(unknown_axes(rank)))
    parts = p.op("graph.split", x, axis=axis, sections=sections)
    parts = parts if isinstance(parts, list) else [parts]
    seeded = data.draw(st.lists(st.sampled_from(parts), min_size=1, unique=True))
    check(p, [x], parts, seeded=seeded)


bounds = st.integers(-5, 5) | st.sampled_from([END, -END - 1])


@SETTINGS
@given(st.data())
def test_slice(data):
    """Steps (negative ones walk backwards), clamped and infinite bounds, unknown sizes."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    rank = len(shape)
    starts = data.draw(st.lists(bounds, min_size=rank, max_size=rank))
    stops = data.draw(st.lists(bounds, min_size=rank, max_size=rank))
    steps = data.draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=rank,
                               max_size=rank))
    p = Prog()
    x = p.arg(data.draw(arrays(tuple(shape))), data.draw(unknown_axes(rank)))
    check(p, [x], [p.op("graph.slice", x, starts=starts, stops=stops, steps=steps)])


@SETTINGS
@given(st.data())
def test_gather(data):
    """Indices in [-n, n) drawn from few rows, so repeats are common: rows accumulate."""
    n = data.draw(st.integers(1, 4))
    rows = data.draw(st.lists(dims, max_size=2))
    ishape = tuple(data.draw(st.lists(dims, max_size=2)))
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    seed = data.draw(st.integers(0, 2**32 - 1))
    idx = np.random.default_rng(seed).integers(-n, n, size=ishape).astype(dtype)
    p = Prog()
    table = p.arg(data.draw(arrays((n, *rows))), data.draw(unknown_axes(1 + len(rows))))
    ids = p.arg(idx, data.draw(unknown_axes(len(ishape))))
    check(p, [table], [p.op("graph.gather", table, ids)])


def test_gather_repeated_indices_by_hand():
    """Row 1 is picked three times (once as -3), row 0 never: its gradient is the sum of the
    three seed rows, row 0's is zero."""
    p = Prog()
    table = p.arg(np.arange(8.0).reshape(4, 2))
    ids = p.arg(np.array([[1, 3], [-3, 1]], dtype=np.int32))
    y = p.op("graph.gather", table, ids)
    m = _derivative_module(p, [table], [y], [y])
    s = np.arange(8.0).reshape(2, 2, 2) + 1
    (g,) = call(m, "vjp", *p.values, s)
    want = np.zeros((4, 2))
    want[1] = s[0, 0] + s[1, 0] + s[1, 1]
    want[3] = s[0, 1]
    np.testing.assert_array_equal(g, want)


@SETTINGS
@given(st.data())
def test_scatter_add(data):
    """The transpose of gather, linear in dest and updates together."""
    n = data.draw(st.integers(1, 4))
    rows = data.draw(st.lists(dims, max_size=2))
    ishape = tuple(data.draw(st.lists(dims, max_size=2)))
    seed = data.draw(st.integers(0, 2**32 - 1))
    idx = np.random.default_rng(seed).integers(-n, n, size=ishape).astype(np.int64)
    p = Prog()
    dest = p.arg(data.draw(arrays((n, *rows))), data.draw(unknown_axes(1 + len(rows))))
    ids = p.arg(idx, data.draw(unknown_axes(len(ishape))))
    upd = p.arg(data.draw(arrays(ishape + tuple(rows))),
                data.draw(unknown_axes(len(ishape) + len(rows))))
    check(p, [dest, upd], [p.op("graph.scatter_add", dest, ids, upd)])


@SETTINGS
@given(st.data())
def test_insert_slice(data):
    """The transpose of slice, linear in src and dest together."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    rank = len(shape)
    props = {"starts": data.draw(st.lists(bounds, min_size=rank, max_size=rank)),
             "stops": data.draw(st.lists(bounds, min_size=rank, max_size=rank)),
             "steps": data.draw(st.lists(st.sampled_from([-2, -1, 1, 2]), min_size=rank,
                                         max_size=rank))}
    index = tuple(slice(*abc) for abc in zip(props["starts"], props["stops"], props["steps"]))
    part = np.zeros(shape)[index].shape
    p = Prog()
    dest = p.arg(data.draw(arrays(tuple(shape))), data.draw(unknown_axes(rank)))
    src = p.arg(data.draw(arrays(part)), data.draw(unknown_axes(rank)))
    check(p, [src, dest], [p.op("graph.insert_slice", src, dest, **props)])


def test_dim_carries_no_derivative():
    """x's size feeds a broadcast, and x's values feed nothing: its gradient is zero, and
    the broadcast operand's gradient is summed over the broadcast rows."""
    p = Prog()
    x = p.arg(np.ones((3, 2)), [0])
    b = p.arg(np.array([1.0, 2.0]))
    n = p.op("graph.dim", x, axis=0)
    y = p.op("graph.broadcast_to", b, n, shape=[-1, 2])
    check(p, [x, b], [y])


def test_one_hot_is_not_differentiable():
    """one_hot says so with its trait; a gradient that does not need it passes by it."""
    p = Prog()
    labels = p.arg(np.array([2, 0, 5], dtype=np.int64))
    x = p.arg(np.arange(6.0).reshape(3, 2).astype(np.float32))
    oh = p.op("graph.one_hot", labels, depth=4)
    y = p.op("graph.concat", oh, x, axis=1)
    m = _derivative_module(p, [x], [y], [y])
    op = next(o for o in m.walk() if o.name == "graph.one_hot")
    assert not is_differentiable(op)
    s = np.arange(18.0, dtype=np.float32).reshape(3, 6)
    (g,) = call(m, "vjp", *p.values, s)
    np.testing.assert_array_equal(g, s[:, 4:])


# ---------------------------------------------------------------------------------------------
# Jvp derived for linear ops, element types, second order
# ---------------------------------------------------------------------------------------------


def test_linear_jvp_is_the_op_on_the_tangents():
    """No rule is written for the forward mode: the engine applies the op to the tangents."""
    p = Prog()
    x = p.arg(np.ones((2, 3)))
    y = p.op("graph.slice", p.op("graph.transpose", x, perm=[1, 0]), starts=[0, 1],
             stops=[END, END], steps=[2, 1])
    m = _derivative_module(p, [x], [y], [y])
    text = print_op(m)
    jvp = text[text.index("@jvp"):]
    assert "graph.transpose %arg1" in jvp and "graph.slice %0" in jvp
    v = np.arange(6.0).reshape(2, 3)
    (t,) = call(m, "jvp", *p.values, v)
    np.testing.assert_array_equal(t, v.T[0::2, 1:])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_rules_keep_the_element_type(dtype):
    """A chain of every linear op in f16 or f32: the gradient keeps the element type and is
    the float64 gradient (exact: the ops only move and add a few small integers)."""
    def build(dt):
        p = Prog()
        x = p.arg(np.arange(24.0).reshape(2, 3, 4).astype(dt), [0])
        ids = p.arg(np.array([0, 2, 2, 1], dtype=np.int32))
        t = p.op("graph.transpose", x, perm=[2, 0, 1])
        r = p.op("graph.reshape", t, shape=[4, -1])
        s = p.op("graph.slice", r, starts=[0, 1], stops=[END, 5], steps=[1, 1])
        g = p.op("graph.gather", s, ids)
        a, b = p.op("graph.split", g, axis=1, sections=2)
        c = p.op("graph.concat", b, a, b, axis=1)
        y = p.op("graph.broadcast_to", c, shape=[2, 4, 6])
        return p, x, y
    seeds = np.arange(48.0).reshape(2, 4, 6) % 5
    grads = []
    for dt in (np.float64, dtype):
        p, x, y = build(dt)
        m = _derivative_module(p, [x], [y], [y])
        (g,) = call(m, "vjp", *p.values, seeds.astype(dt))
        assert g.dtype == dt and g.shape == (2, 3, 4)
        grads.append(g)
    np.testing.assert_array_equal(grads[1].astype(np.float64), grads[0])


@SETTINGS
@given(st.data())
def test_grad_of_grad_is_the_forward_map(data):
    """For a linear f, the gradient of <J^T s, w> with respect to the seed s is J w: the
    transposes' own transposes (insert_slice -> slice, scatter_add -> gather, ...)."""
    n = data.draw(st.integers(2, 4))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    p = Prog()
    x = p.arg(rng.normal(size=(n, 3, 2)), data.draw(unknown_axes(3)))
    ids = p.arg(rng.integers(-n, n, size=(5,)).astype(np.int64))
    t = p.op("graph.transpose", x, perm=[1, 0, 2])
    s = p.op("graph.slice", t, starts=[2, 0, 0], stops=[-END - 1, END, END], steps=[-2, 1, 1])
    r = p.op("graph.reshape", s, shape=[-1, 2])
    b = p.op("graph.broadcast_to", r, shape=[2, n * 2, 2])
    c = p.op("graph.concat", r, p.op("graph.reshape", b, shape=[-1, 2]), axis=0)
    y = p.op("graph.gather", p.op("graph.reshape", c, shape=[-1, 2]), ids)
    xt, yt = p.types[x], p.types[y]
    tail = [f"%g = autodiff.grad {y} seed %s wrt {x} : ({yt}, {yt}) -> {xt}",
            f"%h = autodiff.grad %g seed %w wrt %s : ({xt}, {xt}) -> {yt}"]
    p.types.update({"%g": xt, "%h": yt})
    m = compile_module("\n".join([p.func("fwd", [], [], [y]),
                                  p.func("f", [("%s", yt), ("%w", xt)], tail, ["%h"])]))
    y_val = call(m, "fwd", *p.values)[0]
    sv, wv = rng.normal(size=y_val.shape), rng.normal(size=p.values[0].shape)
    (h,) = call(m, "f", *p.values, sv, wv)
    (want,) = fd_along(lambda vals: call(m, "fwd", *vals), p.values, [0], [wv])
    close(h, want)


def test_hessian_vector_product_through_a_composite():
    """f(x) = sum(tanh(gather(slice(transpose(x))))^2) has the Hessian-vector product
    jvp(grad f)(v), which must match central differences of grad f along v."""
    rng = np.random.default_rng(7)
    p = Prog()
    x = p.arg(rng.normal(size=(3, 4)) * 0.5, [1])
    ids = p.arg(np.array([0, 2, 0, 1], dtype=np.int32))
    t = p.op("graph.transpose", x, perm=[1, 0])
    s = p.op("graph.slice", t, starts=[0, 0], stops=[END, 2], steps=[1, 1])
    g = p.op("graph.gather", s, ids)
    th = p.op("graph.tanh", g)
    y = p.op("graph.reduce_sum", p.op("graph.mul", th, th), axes=[])
    xt, yt = p.types[x], p.types[y]
    tail = [f"%g = autodiff.grad {y} wrt {x} : ({yt}) -> {xt}",
            f"%h = autodiff.jvp %g wrt {x} along %v : ({xt}) -> {xt}"]
    p.types.update({"%g": xt, "%h": xt})
    m = compile_module("\n".join([p.func("grad", [], tail[:1], ["%g"]),
                                  p.func("hvp", [("%v", xt)], tail, ["%h"])]))
    v = rng.normal(size=(3, 4))
    (h,) = call(m, "hvp", *p.values, v)
    (want,) = fd_along(lambda vals: call(m, "grad", *vals), p.values, [0], [v])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-7)
