"""loop-tile: tile bands of `loop.for`s and the dimensions of `loop.parallel`s, so that one
tile's data is reused from cache before the next tile is touched.

Tiling a loop by `T` splits it into a tile loop, which steps `T` iterations at a time, and a
point loop, which runs the iterations of one tile; tiling a band puts every tile loop
outside every point loop:

    loop.for %i = %lb to %ub step %s {          loop.for %ti = %lb to %ub step %sT {
      body(%i)                          ->        %e = arith.minsi %ti + %sT, %ub
    }                                             loop.for %i = %ti to %e step %s {
                                                    body(%i)

The last tile of a loop whose trip count is not a multiple of `T` (or not known) is cut
at the loop's bound by `arith.minsi`; when the bounds are constants and `T` divides the trip
count the point loop's bound is `%ti + %sT`. A tiled `loop.parallel` is two: the outer one
over the tiled dimensions (the threads take whole tiles) and the inner one over every
dimension within its tile.

Which loops. `select=outermost` (the default) tiles every outermost loop of the op the pass
runs on by `tile-sizes`: a `loop.parallel`'s dimensions in order, or the band of perfectly
nested `loop.for`s it starts (see `irkit.passes.loop_transforms`). `select=marked` tiles
only the loops marked with an attribute `loop.tile = [sizes]`, by those sizes, wherever
they are (a frontend or a schedule marks the nests it wants tiled; the mark is removed).
Sizes apply to the loops outermost first; a size of 0, a missing one, or one that covers
a loop's whole static trip count leaves that loop untiled.

Legality. `loop.parallel` iterations are independent, so any tiling is legal. Tiling a
`loop.for` band reorders its iterations: it is done when the band's dependences allow every
permutation (`tileable`), or when only the outermost loop is tiled (strip-mining keeps the
order). A band that carries values is one loop, strip-mined with its tile loop carrying
them too. A refused band stays as it was, with a remark saying why when `remarks=true` or
when the loop was marked. Floats are never reassociated: results are bit-identical.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import emit_remark
from irkit.ir import Block, Operation, Value
from irkit.pass_manager import Pass, PassPipelineError, register_pass
from irkit.types import INDEX
from irkit.dialects.loop import ForOp, ParallelOp, YieldOp
from irkit.passes.loop_transforms import (
    BoundArith, Constants, Unanalyzable, dependence_patterns, for_band, outermost_loops,
    tileable, trip_count,
)

#: the attribute that marks a loop for `select=marked`
MARK = "loop.tile"


class NotTiled(Exception):
    """Why a loop stays as it was (the remark)."""


def marked_sizes(op: Operation) -> list[int] | None:
    """The sizes of a `loop.tile = [..]` mark, or None when there is none."""
    attr = op.get_attr(MARK)
    if attr is None:
        return None
    if isinstance(attr, ArrayAttr) and all(isinstance(a, IntegerAttr) for a in attr.value):
        return [int(a.value) for a in attr.value]
    if isinstance(attr, DenseArrayAttr):
        return [int(x) for x in attr.value]
    raise op.error(f"'{MARK}' must be an array of integers, got {attr}")


def _effective(sizes: list[int], bounds: list[tuple[Value, Value, Value]]) -> list[int]:
    """The sizes, one per loop, 0 for loops left untiled (no size, or one tile would cover
    the whole static trip count)."""
    out = []
    for k, (lb, ub, step) in enumerate(bounds):
        size = sizes[k] if k < len(sizes) else 0
        n = trip_count(lb, ub, step)
        out.append(0 if size <= 0 or (n is not None and size >= n) else size)
    return out


def _point_bound(a: BoundArith, tile_iv: Value, lb: Value, ub: Value, step: Value,
                 size: int) -> Value:
    """The upper bound of the point loop of the tile at `tile_iv`."""
    end = a.add(tile_iv, a.mul(step, size))
    n = trip_count(lb, ub, step)
    return end if n is not None and n % size == 0 else a.min(end, ub)


# ---------------------------------------------------------------------------------------------
# loop.parallel
# ---------------------------------------------------------------------------------------------


def tile_parallel(op: ParallelOp, sizes: list[int], constants: Constants) -> None:
    """Tile `op`'s dimensions by `sizes`: `op` becomes the inner loop of a new outer one."""
    bounds = list(zip(op.lower_bounds, op.upper_bounds, op.steps))
    sizes = _effective(sizes, bounds)
    tiled = [k for k, s in enumerate(sizes) if s]
    if not tiled:
        raise NotTiled("no dimension has a tile size smaller than its trip count")
    b = Builder.before(op)
    steps = [BoundArith(b, INDEX, constants).mul(bounds[k][2], sizes[k]) for k in tiled]
    outer = ParallelOp.build([bounds[k][0] for k in tiled], [bounds[k][1] for k in tiled],
                             steps, result_types=[], regions=1, location=op.location)
    block = outer.regions[0].add_block(Block([INDEX] * len(tiled)))
    b.insert(outer)
    inner = Builder.at_end(block)
    inner.create(YieldOp, [], result_types=[], location=op.location)
    inner.set_insertion_point_before(block.terminator)
    a = BoundArith(inner, INDEX, constants)
    lbs, ubs = list(op.lower_bounds), list(op.upper_bounds)
    for tile_iv, k in zip(block.args, tiled):
        lbs[k] = tile_iv
        ubs[k] = _point_bound(a, tile_iv, *bounds[k], sizes[k])
    op.detach()
    block.insert_before(block.terminator, op)
    op.set_operands([*lbs, *ubs, *op.steps])


# ---------------------------------------------------------------------------------------------
# loop.for bands
# ---------------------------------------------------------------------------------------------


def tile_for_band(op: ForOp, sizes: list[int], constants: Constants) -> None:
    """Tile the band of `loop.for`s that starts at `op` by `sizes`."""
    band = for_band(op, max(len(sizes), 1))
    loops = band.loops
    sizes = _effective(sizes, [(lp.lower_bound, lp.upper_bound, lp.step) for lp in loops])
    tiled = [k for k, s in enumerate(sizes) if s]
    if not tiled:
        raise NotTiled("no loop of the band has a tile size smaller than its trip count")
    if tiled != [0]:
        try:
            patterns = dependence_patterns(loops)
        except Unanalyzable as e:
            raise NotTiled(f"the dependences of the band are unknown: {e}") from None
        if not tileable(patterns):
            raise NotTiled("the band is not fully permutable (a dependence would be reversed)")
    band.sink()
    b = Builder.before(op)
    carried = list(op.init_args)           # only a band of one loop carries values
    tile_loops: list[ForOp] = []
    for k in tiled:
        loop = loops[k]
        tile_step = BoundArith(b, loop.lower_bound.type, constants).mul(loop.step, sizes[k])
        types = [v.type for v in carried]
        tile = ForOp.build(loop.lower_bound, loop.upper_bound, tile_step, carried,
                           result_types=types, regions=1, location=loop.location)
        block = tile.regions[0].add_block(Block([loop.lower_bound.type, *types]))
        b.insert(tile)
        tile_loops.append(tile)
        b = Builder.at_end(block)
        carried = list(block.args[1:])
    if op.results:
        op.replace_all_uses_with(tile_loops[0].results)
    for k, tile in zip(tiled, tile_loops):
        loop = loops[k]
        iv = tile.induction_var
        a = BoundArith(b, iv.type, constants)
        ub = _point_bound(a, iv, loop.lower_bound, loop.upper_bound, loop.step, sizes[k])
        loop.set_operand(0, iv)
        loop.set_operand(1, ub)
    op.detach()
    b.insert(op)
    if carried:
        op.set_operands([*op.operands[:3], *carried])
    b.create(YieldOp, list(op.results), result_types=[], location=op.location)
    for outer_tile, inner_tile in zip(tile_loops, tile_loops[1:]):
        Builder.at_end(outer_tile.body.blocks[0]).create(
            YieldOp, list(inner_tile.results), result_types=[], location=op.location)


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


@register_pass
class LoopTile(Pass):
    """Tile loop.for bands and loop.parallel dimensions (see the module docstring).

    Algorithm:
      1. Pick the loops: every outermost `loop.for` / `loop.parallel` (`select=outermost`,
         sizes `tile-sizes`), or every loop marked `loop.tile = [sizes]` (`select=marked`).
      2. For a `loop.parallel`, drop the sizes that are 0 or cover a dimension's static trip
         count; the loop becomes the inner loop of a new `loop.parallel` over the tiled
         dimensions, stepping `step * size`, its bounds in the tiled dimensions the tile's
         start and `min(start + step * size, ub)`.
      3. For a `loop.for`, take the band it starts (at most as deep as there are sizes),
         the same effective sizes, and check that the band is fully permutable unless only
         its outermost loop is tiled. Sink the pure ops between the band's loops into its
         innermost body, build one tile loop per tiled loop outside the band (the first
         one carrying the band's values, if any), and bound each tiled loop by its tile.
      4. A loop refused in 2 or 3 stays; with `remarks=true` or a mark, a remark says why.
    """

    name = "loop-tile"
    tile_sizes: tuple[int, ...] = (32, 32)
    select: str = "outermost"
    remarks: bool = False

    def run(self, op: Operation) -> None:
        if self.select not in ("outermost", "marked"):
            raise PassPipelineError(f"'loop-tile' option 'select': expected 'outermost' or "
                                    f"'marked', got '{self.select}'")
        if self.select == "marked":
            jobs = [(o, marked_sizes(o)) for o in op.walk()
                    if o is not op and isinstance(o, (ForOp, ParallelOp))
                    and o.get_attr(MARK) is not None]
        else:
            jobs = [(o, list(self.tile_sizes)) for o in outermost_loops(op)]
        self.tiled = 0
        constants = Constants()
        for loop, sizes in jobs:
            marked = loop.attributes.pop(MARK, None) is not None
            try:
                if isinstance(loop, ParallelOp):
                    tile_parallel(loop, sizes, constants)
                else:
                    tile_for_band(loop, sizes, constants)
                self.tiled += 1
            except NotTiled as e:
                if self.remarks or marked:
                    emit_remark(f"loop not tiled: {e}", loop.location)
