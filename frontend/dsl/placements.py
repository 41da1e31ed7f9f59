"""Parallelism annotations in the DSL: a model's grid, the placements of its inputs and
params on it, and pipeline stages (issue 16).

    grid g[data=2, model=2]
    input x: f32[B, 784] @ g(split(0), replicate)      # per grid axis, in axis order
    param w1: f32[784, 256] = normal(seed=1) @ g(model=split(1))   # by axis name
    stage 1 { h = relu(x @ w1) }

They lower to what the `parallel` dialect's passes read (see `irkit.dialects.parallel`):
the grid to a `parallel.grid` op first in the model's module, an input's placement to the
`parallel.sharding` of its argument (on `@forward` and `@train_step`), a param's to its entry
in the module's `parallel.variables` dictionary, and a `stage N` block to a
`parallel.stage = N` attribute on every op its statements make (`parallel-pipeline` splits
the function there).

A placement lists one entry per grid axis, in axis order, or names the axes it splits (the
others replicate); mixing is allowed as in a call: positional entries first. Every check is
made here, against the declared shapes, so that a wrong annotation is an error at its text
and not a verifier message about an attribute.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.dialects.graph import TensorSpec
from irkit.dialects.parallel import (
    PARTIAL, REPLICATE, GridInfo, GridOp, Sharding, Split, split_count,
)
from irkit.types import I64

from irkit.frontend.dsl import syntax as ast
from irkit.frontend.dsl.values import Errors

#: the attribute `stage N { ... }` puts on the ops its statements make
STAGE_ATTR = "parallel.stage"
#: the placements a `@ grid(...)` entry may name
PLACES = ("split", "replicate", "partial")


def model_grid(body: list, errs: Errors) -> GridOp | None:
    """The `parallel.grid` op of a model's one `grid` declaration, or None."""
    decls = [s for s in body if isinstance(s, ast.GridDecl)]
    if not decls:
        return None
    if len(decls) > 1:
        raise errs.error(decls[1].pos, "a model declares at most one grid").note(
            f"grid '{decls[0].name}' is declared here", errs.loc(decls[0].pos))
    d = decls[0]
    names: dict = {}
    for name, npos, size, spos in d.axes:
        if name in names:
            raise errs.error(npos, f"grid '{d.name}' has two axes named '{name}'").note(
                "the first is here", errs.loc(names[name]))
        names[name] = npos
        if type(size) is not int or size < 1:
            raise errs.error(spos, f"the size of grid axis '{name}' must be a positive "
                                   f"integer, got {size}")
    return GridOp.create(d.name, [a[2] for a in d.axes], [a[0] for a in d.axes],
                         location=errs.loc(d.pos))


def sharding(p: ast.Placement, grid: GridOp | None, spec: TensorSpec, what: str,
             errs: Errors) -> Sharding:
    """The `Sharding` that placement `p` of `what` (e.g. "input 'x'", of type `spec`) says."""
    if grid is None:
        raise errs.error(p.pos, f"grid '{p.grid}' is not declared; declare it in the model, "
                                f"e.g. `grid {p.grid}[data=2]`")
    info = grid.info()
    if p.grid != info.name:
        raise errs.unknown(p.pos, "grid", p.grid, [info.name])
    places: list = [None] * len(info.axes)
    named = False
    for i, (axis, apos, place) in enumerate(p.places):
        if axis is None:
            if named:
                raise errs.error(apos, "a placement by position cannot follow one by axis "
                                       "name")
            if i >= len(info.axes):
                raise errs.error(apos, f"grid '{info.name}' has {_axes(info)}, but the "
                                       f"placement gives {len(p.places)} entries")
            k = i
        else:
            named = True
            if axis not in info.axes:
                raise errs.unknown(apos, f"axis of grid '{info.name}'", axis, list(info.axes))
            k = info.axis_index(axis)
            if places[k] is not None:
                raise errs.error(apos, f"grid axis '{axis}' is placed twice")
        places[k] = _place(place, spec, what, errs)
    if not named and p.places and len(p.places) < len(info.axes):
        raise errs.error(p.pos, f"grid '{info.name}' has {_axes(info)}, but the placement "
                                f"gives {len(p.places)}; give one per axis or name the axes "
                                f"placed (the others replicate)")
    s = Sharding(info.name, tuple(REPLICATE if x is None else x for x in places))
    _check_divisible(s, info, p, spec, what, errs)
    return s


def _axes(info: GridInfo) -> str:
    n = len(info.axes)
    return f"{n} axis ({info.axes[0]})" if n == 1 else f"{n} axes ({', '.join(info.axes)})"


def _place(place: ast.Place, spec: TensorSpec, what: str, errs: Errors):
    """One axis's placement: `split(d)` with d a dimension of `spec`, `replicate`,
    `partial(sum)`."""
    if place.kind not in PLACES:
        raise errs.unknown(place.pos, "placement", place.kind, list(PLACES), listing=True)
    if place.kind == "split":
        d = place.arg
        if type(d) is not int:
            raise errs.error(place.arg_pos or place.pos, "split needs the dimension it "
                                                         "splits, an integer: split(0)")
        if d >= spec.rank:
            raise errs.error(place.arg_pos, f"split({d}) is out of range for {what} of rank "
                                            f"{spec.rank} ({spec})")
        return Split(d)
    if place.kind == "partial":
        if place.arg not in (None, "sum"):
            raise errs.error(place.arg_pos, f"partial sums only: partial(sum), got "
                                            f"partial({place.arg})")
        return PARTIAL
    if place.arg is not None:
        raise errs.error(place.arg_pos, "replicate takes no argument")
    return REPLICATE


def _check_divisible(s: Sharding, info: GridInfo, p: ast.Placement, spec: TensorSpec,
                     what: str, errs: Errors) -> None:
    """A static size must divide into the blocks its splitting axes make."""
    for d, n in enumerate(spec.shape):
        k = split_count(info, s, d)
        if isinstance(n, int) and n % k:
            axes = [info.axes[a] for a in s.splitters(d)]
            pos = next(place.pos for axis, _, place in p.places
                       if place.kind == "split" and place.arg == d)
            raise errs.error(pos, f"dimension {d} of {what} (size {n}) does not divide into "
                                  f"{k} blocks over grid {'axes' if len(axes) > 1 else 'axis'}"
                                  f" {', '.join(axes)}")


def stage_index(s: ast.Stage, previous: int | None, errs: Errors) -> int:
    """The checked index of a `stage N` block; stages come in increasing order."""
    if type(s.index) is not int:
        raise errs.error(s.pos, f"a stage index is a non-negative integer, got {s.index}")
    if previous is not None and s.index <= previous:
        raise errs.error(s.pos, f"stage {s.index} follows stage {previous}: stages come in "
                                "increasing order")
    return s.index


def mark_stage(ops: list, index: int) -> None:
    """Put `parallel.stage = index` on the ops (and the ops nested in them)."""
    for op in ops:
        for o in op.walk():
            o.attributes[STAGE_ATTR] = IntegerAttr(index, I64)
