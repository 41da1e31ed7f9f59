"""loop-unroll-and-jam: unroll a `loop.for` that holds one inner `loop.for`, and fuse the
copies of the inner loop into one, so that each inner iteration works for `factor` outer
iterations at once (register blocking: a value the inner loop loads that does not depend on
the outer loop is loaded once for all copies, and the copies' carried values are
independent chains the CPU overlaps).

    loop.for %i = .. step %c1 {                 loop.for %i = .. to %m step %c2 {
      %init = pre(%i)                             %init0 = pre(%i)    %init1 = pre(%i + 1)
      %r = loop.for %k iter_args(%a = %init) {    %r0, %r1 = loop.for %k
        loop.yield f(%a, %i, %k)          ->          iter_args(%a0 = %init0, %a1 = %init1) {
      }                                             loop.yield f(%a0, %i, %k), f(%a1, %i + 1, %k)
      post(%r, %i)                                }
    }                                             post(%r0, %i)       post(%r1, %i + 1)
                                                }
                                                (remainder: the original loop from %m)

The outer loop's iterations `i, i + 1, ...` are interleaved: the ops before the inner loop
of every copy run first, then the fused inner loop, then the ops after it. That is legal
when no two iterations of the outer loop touch one memory location with one of them
writing (the dependence patterns of the outer loop, `irkit.passes.loop_transforms`, are
empty), so the copies may run in any interleaving. The inner loop's bounds and step must be
defined outside the outer loop (the copies then share its trip count), and the outer loop
must carry no values. Within one copy nothing is reordered: results are bit-identical.

Which loops: every `loop.for` whose body holds exactly one `loop.for` (among ops that are
not loops), that inner loop itself holding no loop. The split into a main loop and a
remainder is `loop-unroll`'s (`split_for_unroll`): a known remainder of zero iterations is
no loop, and a short one is unrolled (`full-threshold`). Refused loops get a remark with
`remarks=true`.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.diagnostics import emit_remark
from irkit.ir import Block, Operation
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.dialects.loop import ForOp, ParallelOp, YieldOp
from irkit.passes.loop_transforms import (
    BoundArith, Constants, Unanalyzable, dependence_patterns,
)
from irkit.passes.loop_unroll import (
    clone_iteration, finish_remainder, is_innermost, split_for_unroll,
)


class NotJammed(Exception):
    """Why a loop stays as it was (the remark)."""


def jam_candidate(loop: ForOp) -> ForOp | None:
    """The inner loop of `loop` when `loop` has the shape unroll-and-jam takes."""
    body = [o for o in loop.body.blocks[0].ops if not has_trait(o, Terminator)]
    inner = [o for o in body if isinstance(o, ForOp)]
    if len(inner) != 1 or not is_innermost(inner[0]):
        return None
    if any(isinstance(n, (ForOp, ParallelOp)) for o in body if o is not inner[0]
           for n in o.walk()):
        return None
    return inner[0]


def _check(loop: ForOp, inner: ForOp) -> None:
    if loop.init_args:
        raise NotJammed("the outer loop carries values")
    if not all(loop.is_defined_outside(v)
               for v in (inner.lower_bound, inner.upper_bound, inner.step)):
        raise NotJammed("the inner loop's bounds depend on the outer loop")
    try:
        patterns = dependence_patterns([loop])
    except Unanalyzable as e:
        raise NotJammed(f"the dependences of the outer loop are unknown: {e}") from None
    if patterns:
        raise NotJammed("two iterations of the outer loop may touch one memory location")


def _jammed_body(b: Builder, loop: ForOp, inner: ForOp, ivs: list) -> None:
    """At `b`: the copies of `loop`'s body for the induction values `ivs`, their inner
    loops fused into one."""
    block = loop.body.blocks[0]
    ops = [o for o in block.ops if not has_trait(o, Terminator)]
    at = ops.index(inner)
    maps = [{block.args[0]: iv} for iv in ivs]
    for mapping in maps:
        for op in ops[:at]:
            b.clone(op, mapping)
    n = len(inner.init_args)
    inits = [m.get(v, v) for m in maps for v in inner.init_args]
    types = [v.type for v in inits]
    fused = ForOp.build(inner.lower_bound, inner.upper_bound, inner.step, inits,
                        result_types=types, regions=1, location=inner.location)
    fblock = fused.regions[0].add_block(Block([inner.lower_bound.type, *types]))
    b.insert(fused)
    fb = Builder.at_end(fblock)
    yielded = []
    for c, mapping in enumerate(maps):
        carried = list(fblock.args[1 + c * n:1 + (c + 1) * n])
        yielded += clone_iteration(fb, inner, fblock.args[0], carried, mapping)
    fb.create(YieldOp, yielded, result_types=[], location=inner.location)
    for c, mapping in enumerate(maps):
        mapping.update(zip(inner.results, fused.results[c * n:(c + 1) * n]))
        for op in ops[at + 1:]:
            b.clone(op, mapping)


def unroll_and_jam(loop: ForOp, inner: ForOp, factor: int, full_threshold: int,
                   constants: Constants) -> None:
    _check(loop, inner)
    split = split_for_unroll(loop, factor, constants)
    if split is None:
        raise NotJammed(f"fewer than {factor} iterations")
    split, left = split
    b = Builder.before(loop)
    t = loop.lower_bound.type
    main = ForOp.build(loop.lower_bound, split,
                       BoundArith(b, t, constants).mul(loop.step, factor), [],
                       result_types=[], regions=1, location=loop.location)
    block = main.regions[0].add_block(Block([t]))
    b.insert(main)
    inner_b = Builder.at_end(block)
    a = BoundArith(inner_b, t, constants)
    ivs = [a.add(block.args[0], a.mul(loop.step, k)) if k else block.args[0]
           for k in range(factor)]
    _jammed_body(inner_b, loop, inner, ivs)
    inner_b.create(YieldOp, [], result_types=[], location=loop.location)
    finish_remainder(loop, split, left, main, full_threshold, constants)


@register_pass
class LoopUnrollAndJam(Pass):
    """Unroll outer loops by `factor` and fuse the copies of their inner loop (see the
    module docstring).

    Algorithm:
      1. Collect the `loop.for`s whose body holds exactly one loop, a `loop.for` with no
         loop inside (`jam_candidate`).
      2. Check: the outer loop carries no values, the inner loop's bounds are defined
         outside it, and no two of its iterations touch one memory location with one
         writing (empty dependence patterns); otherwise leave it, with a remark when
         `remarks=true`.
      3. Split it like `loop-unroll` (the main loop steps `factor * step` up to the split
         point). The main body is, for the copies `k = 0 .. factor-1` at `iv + k * step`:
         every copy's ops before the inner loop, then one inner loop carrying every copy's
         values whose body is every copy's inner body in turn, then every copy's ops after
         the inner loop, the inner loop's results replaced by the fused loop's.
      4. The original loop runs the remainder (erased when known empty, unrolled fully when
         known to be at most `full-threshold` iterations).
    """

    name = "loop-unroll-and-jam"
    factor: int = 4
    full_threshold: int = 0
    remarks: bool = False

    def run(self, op: Operation) -> None:
        jobs = [(o, jam_candidate(o)) for o in op.walk() if o is not op and isinstance(o, ForOp)]
        constants = Constants()
        self.jammed = 0
        for loop, inner in jobs:
            if inner is None or self.factor < 2:
                continue
            try:
                unroll_and_jam(loop, inner, self.factor, self.full_threshold, constants)
                self.jammed += 1
            except NotJammed as e:
                if self.remarks:
                    emit_remark(f"loop not unrolled and jammed: {e}", loop.location)
