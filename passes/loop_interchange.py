"""loop-interchange: permute a band of perfectly nested `loop.for`s, or the dimensions of a
`loop.parallel`, so that the innermost loop walks memory at unit stride.

A permutation `permutation=1,0` lists, for each position from the outermost, which original
loop runs there (`[1, 0]` swaps two loops). Only the loop headers move: position `p` takes
the bounds and step of loop `perm[p]`, and every use of that loop's induction variable is
rewired to the induction variable at position `p`, so the body is untouched and a band
needs no copying. The band must be rectangular (no bound depends on another loop of it,
see `irkit.passes.loop_transforms`); pure ops between its loops are first sunk into the
innermost body, where LICM can hoist them again.

Legality. The dimensions of a `loop.parallel` are independent: any permutation is legal.
A `loop.for` band is permuted only when every pair of its iterations that touch one memory
location (one of them writing) keeps its order: the first nonzero sign of their distance
vector is the same before and after the permutation (`permutation_keeps_order`). The
dependence test is conservative (affine indices, buffers distinct by their roots); an
unknown effect, or a dependence the permutation reverses, refuses the band with a remark
(`remarks=true`). Iterations are only reordered, never merged: results are bit-identical.

Automatic mode (no `permutation`): for every band and `loop.parallel`, each loop is scored
by the element accesses (`load`, `store` and their vector forms) in its body:
  - strided: the loop's induction variable appears in an index other than the last one,
    or in the last with a coefficient other than 1;
  - unit: it appears only in the last index, with coefficient 1, of a buffer whose last
    stride is 1 (an access then touches consecutive elements from one iteration to the
    next).
The best loop has no strided access (so `loop-vectorize` can give each of its accesses
vector loads and stores, or keep them uniform), then the most unit accesses, then the
fewest strided ones. When it scores better than the innermost loop, it moves innermost and
the others keep their order (the column loop of a column-major walk becomes the row loop).
"""

from __future__ import annotations

from irkit.diagnostics import emit_remark
from irkit.ir import Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.passes.loop_transforms import (
    AffineForms, Unanalyzable, accesses, dependence_patterns, for_band, outermost_loops,
    permutation_keeps_order, unit_last_stride,
)


class NotInterchanged(Exception):
    """Why a band stays as it was (the remark)."""


def _rewire(ivs: list[Value], new_ivs: list[Value], perm: list[int]) -> None:
    """Every use of `ivs[perm[p]]` now reads `new_ivs[p]`."""
    uses = [list(iv.uses) for iv in ivs]
    for p, k in enumerate(perm):
        for use in uses[k]:
            use.set(new_ivs[p])


def _check_permutation(perm: list[int], depth: int) -> None:
    if sorted(perm) != list(range(len(perm))):
        raise NotInterchanged(f"{list(perm)} is not a permutation of 0..{len(perm) - 1}")
    if len(perm) > depth:
        raise NotInterchanged(f"the permutation has {len(perm)} entries but the band is "
                              f"{depth} deep")


def permute_parallel(op: ParallelOp, perm: list[int]) -> None:
    """Reorder the first `len(perm)` dimensions of `op` (always legal)."""
    n = len(op.induction_vars)
    _check_permutation(perm, n)
    full = list(perm) + list(range(len(perm), n))
    groups = [list(op.lower_bounds), list(op.upper_bounds), list(op.steps)]
    _rewire(list(op.induction_vars), list(op.induction_vars), full)
    op.set_operands([g[k] for g in groups for k in full])


def permute_band(op: ForOp, perm: list[int]) -> None:
    """Permute the first `len(perm)` loops of the band that starts at `op`, if legal."""
    band = for_band(op, len(perm))
    loops = band.loops
    _check_permutation(perm, len(loops))
    if len({loop.lower_bound.type for loop in loops}) != 1:
        raise NotInterchanged("the loops' bounds have different types")
    try:
        patterns = dependence_patterns(loops)
    except Unanalyzable as e:
        raise NotInterchanged(f"the dependences of the band are unknown: {e}") from None
    if not permutation_keeps_order(patterns, list(perm)):
        raise NotInterchanged(f"the permutation {list(perm)} would reverse a dependence")
    band.sink()
    headers = [list(loop.operands[:3]) for loop in loops]
    _rewire([loop.induction_var for loop in loops], [loop.induction_var for loop in loops],
            list(perm))
    for p, k in enumerate(perm):
        for i, v in enumerate(headers[k]):
            loops[p].set_operand(i, v)


# ---------------------------------------------------------------------------------------------
# Automatic mode
# ---------------------------------------------------------------------------------------------


def _score(forms: AffineForms, found, k: int) -> tuple:
    strided = unit = 0
    for a in found:
        if a.indices is None or not a.indices:
            continue
        index_forms = [forms.of(v) for v in a.indices]
        if any(f is None for f in index_forms):
            strided += 1
            continue
        *leading, last = [f.coeffs[k] for f in index_forms]
        if any(leading) or last not in (0, 1):
            strided += 1
        elif last == 1 and unit_last_stride(a.memref):
            unit += 1
    return strided == 0, unit, -strided


def best_innermost(ivs: list[Value], outer: Operation, body: Operation) -> list[int] | None:
    """The permutation that moves the best-scoring loop innermost, or None when the
    innermost loop already scores best (or nothing is known)."""
    try:
        found = accesses(body, outer)
    except Unanalyzable:
        return None
    forms = AffineForms(ivs, outer)
    scores = [_score(forms, found, k) for k in range(len(ivs))]
    best = max(range(len(ivs)), key=lambda k: (scores[k], k))
    if scores[best] <= scores[-1]:
        return None
    return [k for k in range(len(ivs)) if k != best] + [best]


def _auto_permutation(loop: Operation) -> tuple[list[int] | None, list[Operation]]:
    """(the automatic permutation or None, the loops it covers)."""
    if isinstance(loop, ParallelOp):
        return best_innermost(list(loop.induction_vars), loop, loop), [loop]
    loops = for_band(loop).loops
    if len(loops) < 2:
        return None, loops
    ivs = [lp.induction_var for lp in loops]
    return best_innermost(ivs, loops[0], loops[-1]), loops


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


@register_pass
class LoopInterchange(Pass):
    """Permute loop.for bands and loop.parallel dimensions (see the module docstring).

    Algorithm:
      1. With `permutation`: take every outermost `loop.for` / `loop.parallel` of the op the
         pass runs on. Without: every `loop.parallel` and every band of `loop.for`s, outer
         ones first, skipping loops already part of a band; compute the automatic
         permutation by scoring each loop's accesses; skip when it is the identity.
      2. A `loop.parallel`: reorder its bounds and steps and rewire its induction
         variables.
      3. A `loop.for` band at least as deep as the permutation: compute its dependence
         patterns; when the permutation keeps every one's order, sink the pure ops between
         the loops, give each position the header of the loop that moves there, and rewire
         the induction variables.
      4. A refused band stays as it was; with `remarks=true`, a remark says why.
    """

    name = "loop-interchange"
    permutation: tuple[int, ...] = ()
    remarks: bool = False

    def run(self, op: Operation) -> None:
        self.interchanged = 0
        if self.permutation:
            jobs = [(loop, list(self.permutation)) for loop in outermost_loops(op)]
        else:
            jobs, covered = [], set()
            for loop in op.walk(post_order=False):
                if loop is op or not isinstance(loop, (ForOp, ParallelOp)) or loop in covered:
                    continue
                perm, members = _auto_permutation(loop)
                covered.update(members)
                if perm is not None:
                    jobs.append((loop, perm))
        for loop, perm in jobs:
            try:
                if isinstance(loop, ParallelOp):
                    permute_parallel(loop, perm)
                else:
                    permute_band(loop, perm)
                self.interchanged += 1
            except NotInterchanged as e:
                if self.remarks:
                    emit_remark(f"loops not interchanged: {e}", loop.location)

