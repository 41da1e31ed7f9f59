"""Lowerings of the elementwise graph ops (graph/elementwise.py, graph/compare.py),
`graph.zeros_like` and `graph.constant`, and the broadcasting helpers other rules share.

Every elementwise op becomes one loop nest over the result's shape (a `loop.parallel`: the
elements are independent) that loads one element of each operand, builds the op's own
scalar body (`scalar_body`, declared once on its class and run on numpy arrays by the
interpreter: dialects/graph/scalar.py) and stores the result.

Broadcasting follows numpy: operands align at the right. An operand axis of static size 1
is always read at index 0; an axis of unknown size (`?`) may be 1 at run time, so its index
is `select(size == 1, 0, i)`, the comparison made once, before the loop. A result size that
is `?` is the operands' sizes combined by the same rule: `select(a == 1, b, a)`.
Incompatible run-time sizes are the caller's error (the interpreter reports them on the
graph program; the lowered code does not check).
"""

from __future__ import annotations

import numpy as np

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.types import I1
from irkit.dialects.graph import graph
from irkit.dialects.memory import LoadOp, StoreOp
from irkit.passes.lower_graph.core import FunctionLowering, LoweringError, lowers
from irkit.passes.lower_graph.scalar import Scalars, is_float

# ---------------------------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------------------------


def broadcast_sizes(lw: FunctionLowering, shape: tuple, bufs: list) -> list[Value]:
    """The run-time sizes of a result of static shape `shape` (None: `?`) broadcast from
    `bufs` (numpy's rule, aligned at the right). An entry of `bufs` is a buffer, or a pair
    (buffer, its axes that take part), as matmul's batch axes do."""
    rank = len(shape)
    parts = [b if isinstance(b, tuple) else (b, range(b.type.rank)) for b in bufs]
    sizes = []
    for i, d in enumerate(shape):
        if d is not None:
            sizes.append(lw.index(d))
            continue
        static, dyn = None, []
        for buf, axes in parts:
            axes = list(axes)
            j = i - (rank - len(axes))
            if j < 0:
                continue
            od = buf.type.shape[axes[j]]
            if od is None:
                dyn.append(lw.size(buf, axes[j]))
            elif od != 1:
                static = od
        if static is not None or not dyn:
            sizes.append(lw.index(static if static is not None else 1))
            continue
        s = Scalars(lw, lw.b)
        size = dyn[0]
        for other in dyn[1:]:                   # a == 1 ? b : a
            size = s.select(lw.is_unit(size), other, size)
        sizes.append(size)
    return sizes


class Broadcast:
    """How a loop over a result of shape `shape` indexes operand buffer `buf`, or only its
    axes `axes` (aligned at the right with `shape`); see the module docstring. The run-time
    comparisons are made at construction, before the loop. Where the result's run-time
    size (`sizes`, when given) is the very value of the operand's size, the operand is not
    broadcast along that axis (if both are 1, the index is 0 anyway): no comparison."""

    def __init__(self, lw: FunctionLowering, buf: Value, shape: tuple,
                 axes: list[int] | None = None, sizes: list[Value] | None = None) -> None:
        self.lw = lw
        self.buf = buf
        axes = list(range(buf.type.rank)) if axes is None else list(axes)
        offset = len(shape) - len(axes)
        #: per operand axis: ("iv", result axis) | ("zero",) | ("select", is_one, result axis)
        self.axes = []
        for j, axis in enumerate(axes):
            d, i = buf.type.shape[axis], j + offset
            if d == 1 and shape[i] != 1:
                self.axes.append(("zero",))
            elif d is None and shape[i] != 1 and not (
                    sizes is not None and sizes[i] is lw.size(buf, axis)):
                self.axes.append(("select", lw.is_unit(lw.size(buf, axis)), i))
            else:
                self.axes.append(("iv", i))

    def indices(self, b: Builder, ivs: list[Value]) -> list[Value]:
        out = []
        for a in self.axes:
            if a[0] == "iv":
                out.append(ivs[a[1]])
            elif a[0] == "zero":
                out.append(self.lw.index(0))
            else:
                out.append(Scalars(self.lw, b).select(a[1], self.lw.index(0), ivs[a[2]]))
        return out

    def load(self, b: Builder, ivs: list[Value]) -> Value:
        return load(b, self.buf, self.indices(b, ivs))


class Splat:
    """The reader of an operand known to hold one value everywhere (a splat constant, or a
    0-d tensor loaded before the loop, which writes only its own fresh output): the scalar
    itself, no load in the loop."""

    def __init__(self, value: Value) -> None:
        self.value = value

    def load(self, b: Builder, ivs: list[Value]) -> Value:
        return self.value


def reader(lw: FunctionLowering, v: Value, shape: tuple, sizes: list[Value]):
    """How a loop over a result of shape `shape` reads operand `v` (see `Broadcast`)."""
    splat = lw.splats.get(v)
    if splat is not None:
        return Splat(splat)
    buf = lw.buffer(v)
    if buf.type.rank == 0:                  # a scalar: loaded once, before the loop
        return Splat(load(lw.b, buf, []))
    return Broadcast(lw, buf, shape, sizes=sizes)


def load(b: Builder, buf: Value, indices: list[Value]) -> Value:
    return b.create(LoadOp, buf, list(indices)).results[0]


def store(b: Builder, value: Value, buf: Value, indices: list[Value]) -> None:
    b.create(StoreOp, value, buf, list(indices))


def fill(lw: FunctionLowering, buf: Value, sizes: list[Value], value: Value) -> None:
    """Store `value` (a scalar defined above the loop) into every element of `buf`."""
    lw.parallel_nest(sizes, lambda b, ivs: store(b, value, buf, ivs))


# ---------------------------------------------------------------------------------------------
# The elementwise ops: each declares its scalar body (graph/elementwise.py, graph/compare.py)
# ---------------------------------------------------------------------------------------------


def _elementwise_ops() -> list[str]:
    """The graph ops declared by a scalar body, when this module is imported."""
    return sorted(n for n, c in graph.ops.items() if callable(getattr(c, "scalar_body", None)))


@lowers(*_elementwise_ops())
def lower_elementwise(lw: FunctionLowering, op: Operation) -> None:
    """One parallel loop nest over the result: load (broadcast), the op's scalar body (as
    lower-graph-to-linalg builds it, constants hoisted), store."""
    result = op.results[0]
    shape = result.type.shape
    bufs = [lw.buffer(v) for v in op.operands]
    sizes = broadcast_sizes(lw, shape, bufs)
    reads = [reader(lw, v, shape, sizes) for v in op.operands]
    out = lw.dest(result, sizes)

    def body(b: Builder, ivs: list[Value]) -> None:
        xs = [r.load(b, ivs) for r in reads]
        store(b, op.scalar_body(Scalars(lw, b), *xs), out, ivs)

    lw.parallel_nest(sizes, body)


@lowers("graph.zeros_like")
def lower_zeros_like(lw: FunctionLowering, op: Operation) -> None:
    """A buffer of the operand's run-time shape, filled with zeros (the operand's values
    are not read)."""
    result = op.results[0]
    sizes = lw.sizes(lw.buffer(op.operands[0]))
    out = lw.dest(result, sizes)
    fill(lw, out, sizes, lw.constant(0, result.type.element))


@lowers("graph.constant")
def lower_constant(lw: FunctionLowering, op: Operation) -> None:
    """A splat fills its buffer in a loop, whatever its size (elementwise users read the
    scalar instead, so the buffer is often dead: canonicalize erases a buffer that is only
    written and freed). Other constants are stored
    element by element, up to `max-constant-elements` of them: without a global-memory op
    to hold the data, larger ones are an error (see docs/lowering.md)."""
    attr = op.properties["value"]
    result = op.results[0]
    t = result.type
    sizes = [lw.index(d) for d in t.shape]
    et = t.element
    if attr.is_splat:
        value = lw.constant(_py(attr.splat_value(), et), et)
        lw.splats[result] = value           # elementwise users take the scalar, no load
        out = lw.dest(result, sizes)
        fill(lw, out, sizes, value)
        return
    arr = np.asarray(attr.array)
    limit = lw.options.max_constant_elements
    if arr.size > limit:
        raise LoweringError(f"no lowering for 'graph.constant' of {arr.size} distinct "
                            f"elements yet: constants above max-constant-elements={limit} "
                            "need a global buffer op", op.location)
    out = lw.dest(result, sizes)
    for idx in np.ndindex(arr.shape):
        store(lw.b, lw.constant(_py(arr[idx], et), et), out, [lw.index(i) for i in idx])


def _py(x, t):
    """A numpy element as the Python number an attribute of type `t` holds."""
    if t is I1:
        return int(bool(x))
    return float(x) if is_float(t) else int(x)
