"""The autodiff engine: reverse and forward mode over a scope of graph ops, applying each op's
rules (`irkit.ad_rules`, the API the rules are written against) to build the backward or
tangent graph as ordinary ops; the `autodiff` pass calls it for every derivative request.

Algorithm (`vjp_graph`), the lectures' reverse-mode procedure:

1. Activity: walking the scope forward from the `xs`, a value is *active* when it depends on
   an x through an edge that carries derivatives (any operand not in `nondiff_operands`).
2. Usefulness: walking backward from the `ys`, an active op is *needed* when one of its
   results is needed; only needed ops get a rule applied ("only what the requested
   gradients need is built"). A needed `NonDifferentiable` op is an error.
3. Adjoints: in reverse order, the cotangent of each result is the sum of the partial
   adjoints from all its consumers (summed with `graph.add` once, when the op is reached);
   the op's rule turns result cotangents into operand partial adjoints.

`jvp_graph` walks forward instead, propagating tangents through the needed ops. Rules of ops
with regions (`graph.if`) differentiate their regions' ops through `ADBuilder.vjp_graph` /
`jvp_graph`, which come back here (`Engine`): the dialect that declares such a rule sits
below this module and does not import it.
"""

from __future__ import annotations

from collections.abc import Iterable

from irkit.ad_rules import (
    ADBuilder, Linear, ad_inputs, captured_values, is_differentiable, nondiff_operands,
)
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.opdef import has_trait
from irkit.types import FloatType, RankedTensorType


def _is_float_tensor(v: Value) -> bool:
    t = v.type
    return isinstance(t, RankedTensorType) and isinstance(t.element, FloatType)


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
    ad = ADBuilder(builder, Engine)
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
    ad = ADBuilder(builder, Engine)
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


class Engine:
    """The engine as the rules see it (`ADBuilder.engine`): the rule of an op with regions
    differentiates its regions' ops through it."""

    vjp_graph = staticmethod(vjp_graph)
    jvp_graph = staticmethod(jvp_graph)
