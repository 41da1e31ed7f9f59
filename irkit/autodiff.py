"""Automatic differentiation as graph construction: derivatives are built as ordinary ops.

The backward (or tangent) computation is emitted into the same block as the forward one, as
the lectures build it and TensorFlow 1's `tf.gradients` does, so every later pass
(canonicalize, CSE, fusion, code generation) applies to it, and differentiating the result
again gives higher derivatives. There is no tape.

**Rules live on the op classes** (STYLE.md: one home per op):

- `vjp(self, ad, cts) -> list`: reverse mode. `cts` holds one cotangent per result (None:
  nothing flows back through that result); the rule returns one cotangent per operand (None:
  no gradient for it). Forward values are the op's own operands and results: they are reused,
  never recomputed.
- `jvp(self, ad, tangents) -> list`: forward mode. `tangents` holds one tangent per operand
  (None: zero); the rule returns one tangent per result (None: zero).
- Linear ops (trait `Linear`) write `transpose(self, ad, cts)` instead, which is their vjp;
  their jvp is the op itself applied to the tangents, derived here.
- `nondiff_operands(self) -> tuple[int, ...]`: operands through which no derivative flows
  because the result is piecewise constant in them (a switch's predicate, gather's indices,
  integer labels). Default: none.
- Trait `NonDifferentiable` (argmax, comparisons, casts to integers; or a method
  `is_differentiable()` for ops that depend on their attributes): the result carries no
  derivative. A derivative that must flow through such an op is a located error at the op.
- Ops with regions (the structured conditional) return a dict `{value: cotangent}` from
  `vjp`, covering the values their regions capture from above as well as their operands;
  `ad_inputs(op)` lists those values.

`ADBuilder` (the `ad` argument) creates graph ops at the insertion point, with the forward
op's location, and has the helpers rules share (`zeros_like`, `scalar`, `unbroadcast`, `sum`).

Algorithm (`vjp_graph`), the lectures' reverse-mode procedure:

1. Activity: walking the scope forward from the `xs`, a value is *active* when it depends on
   an x through an edge that carries derivatives (any operand not in `nondiff_operands`).
2. Usefulness: walking backward from the `ys`, an active op is *needed* when one of its
   results is needed; only needed ops get a rule applied ("only what the requested
   gradients need is built"). A needed `NonDifferentiable` op is an error.
3. Adjoints: in reverse order, the cotangent of each result is the sum of the partial
   adjoints from all its consumers (summed with `graph.add` once, when the op is reached);
   the op's rule turns result cotangents into operand partial adjoints.

`jvp_graph` walks forward instead, propagating tangents through the needed ops.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.opdef import Trait, has_trait, lookup_op
from irkit.types import FloatType, RankedTensorType


class NonDifferentiable(Trait):
    """The op's results carry no derivative (argmax, comparisons, casts to integers): a
    gradient or tangent that must flow through it is an error located at the op."""


class Linear(Trait):
    """The op is linear in its differentiable operands: it writes `transpose` (its vjp), and
    its jvp is the op itself applied to the tangents."""


# ---------------------------------------------------------------------------------------------
# What an op says about its derivatives
# ---------------------------------------------------------------------------------------------


def nondiff_operands(op: Operation) -> tuple:
    f = getattr(op, "nondiff_operands", None)
    return tuple(f()) if f is not None else ()


def is_differentiable(op: Operation) -> bool:
    f = getattr(op, "is_differentiable", None)
    if f is not None:
        return bool(f())
    return not has_trait(op, NonDifferentiable)


def captured_values(op: Operation) -> list[Value]:
    """Values used inside `op`'s regions but defined outside `op`, in first-use order."""
    out: dict = {}
    for nested in op.walk(post_order=False):
        if nested is op:
            continue
        for v in nested.operands:
            owner = v.owner_op
            if owner is None or not op.is_ancestor_of(owner):
                out.setdefault(v, None)
    return list(out)


def ad_inputs(op: Operation) -> list[tuple[Value, bool]]:
    """The values derivatives may flow from into `op`'s results, each with whether it does:
    its operands (all but `nondiff_operands`), then what its regions capture."""
    skip = nondiff_operands(op)
    out = [(v, i not in skip) for i, v in enumerate(op.operands)]
    if op.regions:
        seen = {v for v, _ in out}
        out += [(v, True) for v in captured_values(op) if v not in seen]
    return out


def _is_float_tensor(v: Value) -> bool:
    t = v.type
    return isinstance(t, RankedTensorType) and isinstance(t.element, FloatType)


# ---------------------------------------------------------------------------------------------
# The builder rules use
# ---------------------------------------------------------------------------------------------


class ADBuilder:
    """Creates graph ops for derivative rules at one insertion point."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        # The values derivatives flow through in the scope being differentiated (set by
        # vjp_graph/jvp_graph): region rules differentiate their branches against only
        # those of their captured values.
        self.active: set | None = None

    @property
    def location(self):
        return self.builder.location

    def op(self, name: str, *operands, **props):
        """Create and insert `name` (a registered graph op) from operands and Python-valued
        properties; returns its result, or the list of results when it has several."""
        cls = lookup_op(name)
        op = cls.create(*operands, location=self.builder.location, **props)
        self.builder.insert(op)
        return op.results[0] if len(op.results) == 1 else list(op.results)

    def clone(self, op: Operation, operands: list[Value]) -> list[Value]:
        """`op` again (same properties and attributes) on other operands of the same types."""
        new = op.clone({old: new for old, new in zip(op.operands, operands)})
        new.location = self.builder.location
        self.builder.insert(new)
        return list(new.results)

    def scalar(self, value: float, like: Value) -> Value:
        """A 0-d constant of `like`'s element type (it broadcasts against anything)."""
        t = like.type
        return self.constant(np.asarray(value, dtype=numpy_dtype(t.element)), t.element)

    def constant(self, array, element) -> Value:
        cls = lookup_op("graph.constant")
        op = cls.create(np.asarray(array, dtype=numpy_dtype(element)), element,
                        location=self.builder.location)
        self.builder.insert(op)
        return op.results[0]

    def zeros_like(self, v: Value) -> Value:
        """Zeros of `v`'s type, dead when `v` is (see `graph.zeros_like`)."""
        return self.op("graph.zeros_like", v)

    def sum(self, values: list[Value]) -> Value:
        """`values[0] + values[1] + ...` (one value: itself)."""
        total = values[0]
        for v in values[1:]:
            total = self.op("graph.add", total, v)
        return total

    def unbroadcast(self, ct: Value, like: Value) -> Value:
        """Undo numpy broadcasting: sum `ct` (the cotangent of a broadcast result) over the
        axes along which `like` (an operand) was broadcast, so it gets `like`'s type.

        Leading axes `like` lacks are summed away; an axis where `like` has size 1 and `ct`
        does not is summed with keepdims. Sizes are compared statically, as the shape
        functions broadcast them: an unknown size is taken to match an unknown size."""
        lead = ct.type.rank - like.type.rank
        if lead > 0:
            ct = self.op("graph.reduce_sum", ct, axes=list(range(lead)), keepdims=False)
        ones = [i for i, (c, s) in enumerate(zip(ct.type.shape, like.type.shape))
                if s == 1 and c != 1]
        if ones:
            ct = self.op("graph.reduce_sum", ct, axes=ones, keepdims=True)
        return self.as_type(ct, like)

    def sizes(self, x: Value, axes: Iterable[int]) -> tuple[list, list]:
        """Shape entries and size operands describing `x`'s `axes` to `graph.reshape` and
        `graph.broadcast_to`: a static size as it is, a `?` as -1 with a `graph.dim` of x."""
        shape, sizes = [], []
        for a in axes:
            d = x.type.shape[a]
            shape.append(-1 if d is None else d)
            if d is None:
                sizes.append(self.op("graph.dim", x, axis=a))
        return shape, sizes

    def as_type(self, v: Value | None, like: Value) -> Value | None:
        """`v`, which has `like`'s shape at run time, with `like`'s exact type. Shape
        functions unify `?` with a static size, so a derivative computed from another
        operand may know a size that `like`'s type leaves open (`[2, ?] x [4, 5]`), or the
        reverse; a reshape restates it, its `?` sizes read from `like`."""
        if v is None or v.type is like.type:
            return v
        shape, sizes = self.sizes(like, range(like.type.rank))
        return self.op("graph.reshape", v, sizes, shape=shape)


# ---------------------------------------------------------------------------------------------
# Reverse mode
# ---------------------------------------------------------------------------------------------


def _active_ops(scope: list[Operation], xs: Iterable[Value]) -> tuple[set, list[Operation]]:
    """Step 1: the active values and, in scope order, the ops that have active results."""
    active = set(xs)
    ops = []
    for op in scope:
        if any(d and v in active for v, d in ad_inputs(op)):
            active.update(op.results)
            ops.append(op)
    return active, ops


def _needed_ops(active_ops: list[Operation], active: set, ys: Iterable[Value]) -> list:
    """Step 2: the active ops some y depends on through derivative-carrying edges."""
    needed_vals = {y for y in ys if y in active}
    needed = []
    for op in reversed(active_ops):
        if any(r in needed_vals for r in op.results):
            needed.append(op)
            needed_vals.update(v for v, d in ad_inputs(op) if d and v in active)
    needed.reverse()
    return needed


def _check_differentiable(ops: list[Operation], what: str, at: Operation | None) -> None:
    for op in ops:
        if not is_differentiable(op):
            err = op.error(f"is not differentiable, but {what} flows through it")
            if at is not None:
                err.note(f"{what} is requested here", at.location)
            raise err


def _check_floats(values: list[Value], role: str, at: Operation | None) -> None:
    for i, v in enumerate(values):
        if not _is_float_tensor(v):
            msg = f"{role} #{i} has type {v.type}; derivatives need a floating-point tensor"
            if at is not None:
                raise at.error(msg)
            raise ValueError(msg)


def vjp_graph(scope: list[Operation], ys: list[Value], seeds: list[Value], xs: list[Value],
              builder: Builder, at: Operation | None = None) -> list[Value | None]:
    """Build the cotangents of `xs` given cotangents `seeds` of `ys`, over the ops `scope`
    (in program order), inserting at `builder`; None for an x no y depends on. `at` (the op
    asking, if any) locates errors."""
    _check_floats(ys, "differentiated value", at)
    _check_floats(xs, "value differentiated against", at)
    active, active_ops = _active_ops(scope, xs)
    needed = _needed_ops(active_ops, active, ys)
    _check_differentiable(needed, "a gradient", at)
    ad = ADBuilder(builder)
    ad.active = active
    adjoints: dict = {}
    for y, s in zip(ys, seeds):
        adjoints.setdefault(y, []).append(s)
    saved_loc = builder.location
    try:
        for op in reversed(needed):
            builder.location = op.location
            cts = [ad.sum(adjoints[r]) if r in adjoints else None for r in op.results]
            if all(c is None for c in cts):
                continue
            partials = _vjp_rule(op, ad, cts)
            items = partials.items() if isinstance(partials, dict) else zip(op.operands, partials)
            for v, g in items:
                if g is not None and v in active:
                    adjoints.setdefault(v, []).append(ad.as_type(g, v))
    finally:
        builder.location = saved_loc
    return [ad.sum(adjoints[x]) if x in adjoints else None for x in xs]


def _vjp_rule(op: Operation, ad: ADBuilder, cts: list):
    rule = getattr(op, "vjp", None) or getattr(op, "transpose", None)
    if rule is None:
        raise op.error("has no derivative rule (vjp) yet")
    return rule(ad, cts)


# ---------------------------------------------------------------------------------------------
# Forward mode
# ---------------------------------------------------------------------------------------------


def jvp_graph(scope: list[Operation], xs: list[Value], tangents: list[Value],
              ys: list[Value], builder: Builder,
              at: Operation | None = None) -> list[Value | None]:
    """Build the tangents of `ys` given tangents of `xs` over `scope`; None for a y that
    does not depend on the xs."""
    _check_floats(ys, "differentiated value", at)
    _check_floats(xs, "value differentiated against", at)
    active, active_ops = _active_ops(scope, xs)
    needed = _needed_ops(active_ops, active, ys)
    _check_differentiable(needed, "a tangent", at)
    ad = ADBuilder(builder)
    ad.active = active
    tan = dict(zip(xs, tangents))
    saved_loc = builder.location
    try:
        for op in needed:
            builder.location = op.location
            outs = _jvp_rule(op, ad, tan)
            for r, t in zip(op.results, outs):
                if t is not None:
                    tan[r] = ad.as_type(t, r)
    finally:
        builder.location = saved_loc
    return [tan.get(y) for y in ys]


def _jvp_rule(op: Operation, ad: ADBuilder, tan: dict) -> list:
    skip = nondiff_operands(op)
    ts = [None if i in skip else tan.get(v) for i, v in enumerate(op.operands)]
    rule = getattr(op, "jvp", None)
    if rule is not None:
        if op.regions:
            return rule(ad, ts, {v: tan[v] for v in captured_values(op) if v in tan})
        return rule(ad, ts)
    if has_trait(op, Linear):
        operands = [v if i in skip else (t if t is not None else ad.zeros_like(v))
                    for i, (v, t) in enumerate(zip(op.operands, ts))]
        return ad.clone(op, operands)
    raise op.error("has no forward-mode derivative rule (jvp) yet")
