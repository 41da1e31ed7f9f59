"""The autodiff rule API: what an op's derivative rules are written against.

Automatic differentiation is graph construction: derivatives are built as ordinary ops.

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
  their jvp is the op itself applied to the tangents, derived by the engine.
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
It creates them by name through the registry: the rules are the graph dialect's, and this
module sits below the dialects. A rule of an op with regions differentiates its regions'
ops as a scope of their own through `ad.vjp_graph` / `ad.jvp_graph`, which hand them to the
engine that is applying the rule.

The engine that applies the rules to a whole scope (`vjp_graph`, `jvp_graph`) is part of
the frontend (`irkit.frontend.ad_engine`): it walks graphs, while this module is what the
ops' rules are written against, so the dialects that declare them import only this.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.opdef import Trait, has_trait, lookup_op


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


# ---------------------------------------------------------------------------------------------
# The builder rules use
# ---------------------------------------------------------------------------------------------


class ADBuilder:
    """Creates graph ops for derivative rules at one insertion point."""

    def __init__(self, builder: Builder, engine=None) -> None:
        self.builder = builder
        # The values derivatives flow through in the scope being differentiated (set by
        # vjp_graph/jvp_graph): region rules differentiate their branches against only
        # those of their captured values.
        self.active: set | None = None
        #: the engine applying the rules (an object with `vjp_graph` and `jvp_graph`, see
        #: `irkit.frontend.ad_engine`), which region rules hand their regions' ops to
        self.engine = engine

    def vjp_graph(self, scope: list[Operation], ys: list[Value], seeds: list[Value],
                  xs: list[Value], builder: Builder) -> list[Value | None]:
        """Reverse mode over `scope` (a region's ops) by the engine applying this rule,
        inserting at `builder`: the cotangents of `xs` given `seeds` for `ys`."""
        return self._engine().vjp_graph(scope, ys, seeds, xs, builder)

    def jvp_graph(self, scope: list[Operation], xs: list[Value], tangents: list[Value],
                  ys: list[Value], builder: Builder) -> list[Value | None]:
        """Forward mode over `scope` by the engine applying this rule: the tangents of `ys`
        given `tangents` of `xs`."""
        return self._engine().jvp_graph(scope, xs, tangents, ys, builder)

    def _engine(self):
        if self.engine is None:
            raise TypeError("this ADBuilder was not made by an autodiff engine, so a rule "
                            "cannot differentiate a region through it")
        return self.engine

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
