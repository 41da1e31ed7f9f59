"""loop-invariant-code-motion: hoist pure, loop-invariant ops out of loop bodies (MLIR's LICM)."""

from __future__ import annotations

from collections import deque

from irkit.attributes import IntegerAttr
from irkit.ir import Operation
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value, is_pure

# Pure ops that may still trap where they run (integer division by zero, and signed MIN / -1,
# are undefined behaviour and fault on real hardware). Hoisting out of a loop that runs zero
# times would execute them where the program never did, so they move only when the divisor
# is a constant that cannot trap. An op class may instead define `is_speculatable()`, which
# takes precedence; this table stands in until the arith ops say so themselves.
_DIVISIONS = {
    "arith.divsi": True, "arith.ceildivsi": True, "arith.floordivsi": True,
    "arith.remsi": True, "arith.divui": False, "arith.ceildivui": False,
    "arith.remui": False,
}


def _safe_divisor(op: Operation, signed: bool) -> bool:
    """Whether the divisor is a constant other than 0 (and, when signed, other than -1)."""
    rhs = getattr(op, "rhs", None)
    a = constant_value(rhs) if rhs is not None else None
    if not isinstance(a, IntegerAttr):
        return False
    width = getattr(rhs.type, "width", 64)
    v = a.value & ((1 << width) - 1)
    return v != 0 and not (signed and v == (1 << width) - 1)


def is_speculatable(op: Operation) -> bool:
    """Whether running `op` (and everything nested in it) where it would not have run can
    change nothing but the time taken: MLIR's `isSpeculatable`, recursively for regions."""
    for nested in op.walk():
        hook = getattr(nested, "is_speculatable", None)
        if hook is not None:
            if not hook():
                return False
        elif nested.name in _DIVISIONS and not _safe_divisor(nested, _DIVISIONS[nested.name]):
            return False
    return True


def _uses_only_outside(op: Operation, loop: Operation) -> bool:
    """Every value `op` reads (its operands, and values its regions take from above) is
    defined outside `loop`."""
    for nested in op.walk():
        for v in nested.operands:
            owner = v.owner_op         # its defining op, or the op owning its block
            if nested is not op and owner is not None and op.is_ancestor_of(owner):
                continue                # defined inside `op`: moves with it
            if not loop.is_defined_outside(v):
                return False
    return True


def _can_hoist(op: Operation, loop: Operation) -> bool:
    return (not has_trait(op, Terminator) and not op.successors and is_pure(op)
            and is_speculatable(op) and _uses_only_outside(op, loop))


def hoist_loop_invariants(loop: Operation) -> int:
    """Move every hoistable op of `loop`'s regions before it; returns how many moved."""
    moved = 0
    for region in loop.loop_regions():
        # FIFO, in program order: in a block an op's operands come before it, so hoisted ops
        # keep their relative order. An op already rejected is queued again when one of its
        # operands moves out (a use before the definition in block order, across blocks).
        worklist = deque(op for block in region.blocks for op in block.ops)
        rejected: set[Operation] = set()
        while worklist:
            op = worklist.popleft()
            if op.parent_region is not region or not _can_hoist(op, loop):
                rejected.add(op)
                continue
            loop.move_out_of_loop(op)
            moved += 1
            for r in op.results:
                for user in r.users:
                    if user in rejected and user.parent_region is region:
                        rejected.discard(user)
                        worklist.append(user)
    return moved


@register_pass
class LoopInvariantCodeMotion(Pass):
    """Hoist pure, loop-invariant ops out of loops, innermost loop first.

    A loop is any op with the duck-typed loop-like interface (MLIR's LoopLikeOpInterface),
    so this pass names no dialect:
      - `loop_regions() -> list[Region]`: the regions that run once per iteration;
      - `is_defined_outside(value) -> bool`: whether `value` is the same every iteration;
      - `move_out_of_loop(op)`: put `op` just before the loop.
    An op may also define `is_speculatable() -> bool` (a `loop.for` is only if its step is a
    positive constant, so it surely terminates).

    Algorithm:
      1. Collect the loop-like ops nested in the root in post-order, so inner loops come
         before the loops that hold them (the root itself is left alone: nothing may move
         out of the op a pass runs on).
      2. For each loop, visit the ops directly in its loop regions in program order. An op
         moves just before the loop when it is
           a. not a terminator and has no successors;
           b. pure, including every op in its regions (`irkit.rewrite.is_pure`);
           c. speculatable, including every op in its regions: the loop may run zero times,
              so the op may now run where it never did; and
           d. invariant: its operands, and the values its regions take from above, are
              defined outside the loop (or by ops already hoisted).
         A hoisted op's users in the same region are queued again, in case they were seen
         before it moved.
      3. Because inner loops go first, an op hoisted out of an inner loop lands in the outer
         loop's body before the outer loop is visited, and may move again: one run hoists
         through any number of levels.
    Ops inside a `loop.if` (or any non-loop region) are never taken out of it: that would
    run them when the condition is false. The `loop.if` as a whole moves if it qualifies.
    """

    name = "loop-invariant-code-motion"

    def run(self, op: Operation) -> None:
        loops = [o for o in op.walk() if o is not op and hasattr(o, "loop_regions")]
        self.hoisted = 0
        for loop in loops:
            self.hoisted += hoist_loop_invariants(loop)
