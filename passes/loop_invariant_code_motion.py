"""loop-invariant-code-motion: hoist pure, loop-invariant ops out of loop bodies (MLIR's LICM),
and loads of memory the loop does not write, and load/store pairs of one element that the
loop updates in place (scalar promotion).

Pure ops move by the duck-typed loop-like interface alone (see the pass's docstring). The
memory part (`hoist-memory=true`, the default) knows the `loop` and `memory` dialects:

- A `memory.load` / `memory.vector_load` directly in the body of a `loop.for` or
  `loop.parallel` (so it runs every iteration), at a memref and indices defined outside the
  loop, moves out when nothing in the loop writes, frees or may otherwise touch its buffer
  (buffers traced to their roots as in `irkit.passes.loop_transforms`; an op with unknown
  effects anywhere in the loop stops all of it).
- A `memory.load` and a later `memory.store` of one element (the same memref and index
  values, defined outside the loop) directly in the body of a `loop.for`, when they are the
  only accesses in the loop to that buffer: the load moves before the loop, the element
  becomes a carried value (the store's value is yielded), and one store after the loop
  writes the last value back. This is the accumulator the emitter keeps in memory when an
  output is indexed by the innermost reduction loop; in a register, `loop-vectorize` and
  LLVM can work on it.

A load that moves out of a loop runs even when the loop would have run zero times, where
its index may be out of bounds. So unless the loop surely runs (constant bounds), it is
first versioned: it moves into `loop.if (lb < ub)` (every dimension, for `loop.parallel`)
whose else branch yields the loop's initial values, and what is hoisted goes before the
loop inside that branch. Loads and stores stay in their order relative to each other and to
every other access of their buffer: results are bit-identical.
"""

from __future__ import annotations

from collections import deque

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.opdef import Pure, Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value, is_pure
from irkit.types import I1, I64
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES
from irkit.dialects.loop import ForOp, IfOp, ParallelOp, YieldOp
from irkit.dialects.memory import LoadOp, READ, StoreOp, VectorLoadOp, effects_of
from irkit.passes.loop_transforms import root_of, trip_count

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


# ---------------------------------------------------------------------------------------------
# Loads and stores
# ---------------------------------------------------------------------------------------------


def _buffer_effects(loop: Operation) -> list[tuple[str, Value, Operation]] | None:
    """(effect, root buffer, op) for every op nested in `loop`; None if one is unknown."""
    found = []
    for op in loop.walk():
        if op is loop or (op.regions and has_trait(op, Pure)):
            continue            # a loop's or if's effects are those of the ops inside
        effects = effects_of(op)
        if effects is None:
            if has_trait(op, Terminator):
                continue
            return None
        found += [(kind, root_of(buffer), op) for kind, buffer in effects]
    return found


def _invariant_access(op: Operation, loop: Operation) -> bool:
    return all(loop.is_defined_outside(v) for v in (op.memref, *op.indices))


def _hoistable_loads(loop: Operation, effects) -> list[Operation]:
    """Loads in `loop`'s body that read memory the loop does not change."""
    changed = {root for kind, root, _ in effects if kind != READ}
    return [op for op in loop.body.blocks[0].ops
            if isinstance(op, (LoadOp, VectorLoadOp)) and _invariant_access(op, loop)
            and root_of(op.memref) not in changed]


def _promotable_pairs(loop: ForOp, effects) -> list[tuple[LoadOp, StoreOp]]:
    """(load, store) of one element in `loop`'s body, the only accesses to their buffer."""
    by_root: dict[Value, list[Operation]] = {}
    for _, root, op in effects:
        by_root.setdefault(root, []).append(op)
    block = loop.body.blocks[0]
    pairs = []
    for ops in by_root.values():
        if len(ops) != 2 or not isinstance(ops[0], LoadOp) or not isinstance(ops[1], StoreOp):
            continue
        load, store = ops
        if load.parent is block and store.parent is block and load.is_before_in_block(store) \
                and load.memref is store.memref and load.indices == store.indices \
                and _invariant_access(load, loop):
            pairs.append((load, store))
    return pairs


def _surely_runs(loop: Operation) -> bool:
    if isinstance(loop, ForOp):
        dims = [(loop.lower_bound, loop.upper_bound, loop.step)]
    else:
        dims = list(zip(loop.lower_bounds, loop.upper_bounds, loop.steps))
    return all((trip_count(*d) or 0) >= 1 for d in dims)


def _version(loop: Operation) -> None:
    """Put `loop` into `loop.if (it runs at least once)`, whose else branch yields the
    values the loop returns when it does not run (its inits)."""
    b = Builder.before(loop)
    slt = IntegerAttr(CMPI_PREDICATES.index("slt"), I64)
    if isinstance(loop, ForOp):
        dims = [(loop.lower_bound, loop.upper_bound)]
    else:
        dims = list(zip(loop.lower_bounds, loop.upper_bounds))
    cond = None
    for lb, ub in dims:
        c = b.create(arith.CmpIOp, lb, ub, predicate=slt, result_types=[I1]).result
        cond = c if cond is None else b.create(arith.AndIOp, cond, c).result
    inits = list(loop.init_args) if isinstance(loop, ForOp) else []
    guard = b.create(IfOp, cond, result_types=[r.type for r in loop.results], regions=2)
    loop.replace_all_uses_with(list(guard.results))
    then_block = guard.then_region.add_block(Block())
    loop.detach()
    then_block.append(loop)
    Builder.at_end(then_block).create(YieldOp, list(loop.results), result_types=[])
    if loop.results:
        else_block = guard.else_region.add_block(Block())
        Builder.at_end(else_block).create(YieldOp, inits, result_types=[])


def _promote(loop: ForOp, load: LoadOp, store: StoreOp) -> ForOp:
    """Carry the element `load` reads and `store` writes through `loop` (the load is
    already before it); returns the new loop."""
    types = [r.type for r in loop.results] + [load.result.type]
    new = ForOp.build(*loop.operands[:3], [*loop.init_args, load.result], result_types=types,
                      regions=1, location=loop.location)
    new.regions[0].take_body(loop.body)
    block = new.body.blocks[0]
    carried = block.add_argument(load.result.type)
    Builder.before(loop).insert(new)
    for use in list(load.result.uses):
        if use.owner is not new and new.is_ancestor_of(use.owner):
            use.set(carried)
    terminator = block.terminator
    terminator.set_operands([*terminator.operands, store.value])
    loop.replace_all_uses_with(new.results[:-1])
    loop.erase()
    store.detach()
    Builder.after(new).insert(store)
    store.set_operand(0, new.results[-1])
    return new


def hoist_memory(loop: Operation) -> int:
    """Hoist the invariant loads of `loop` and promote its load/store pairs; how many."""
    if not isinstance(loop, (ForOp, ParallelOp)) or len(loop.regions[0].blocks) != 1:
        return 0
    effects = _buffer_effects(loop)
    if effects is None:
        return 0
    loads = _hoistable_loads(loop, effects)
    pairs = _promotable_pairs(loop, effects) if isinstance(loop, ForOp) else []
    if not loads and not pairs:
        return 0
    if not _surely_runs(loop):
        _version(loop)
    for op in loads + [load for load, _ in pairs]:
        op.move_before(loop)
    for load, store in pairs:
        loop = _promote(loop, load, store)
    return len(loads) + len(pairs)


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
      4. With `hoist-memory=true`, after its pure ops, each `loop.for` / `loop.parallel`
         gives up its invariant loads and promotes its load/store pairs (the module
         docstring), versioned on running at least once unless its bounds say it does.
    Ops inside a `loop.if` (or any non-loop region) are never taken out of it: that would
    run them when the condition is false. The `loop.if` as a whole moves if it qualifies.
    """

    name = "loop-invariant-code-motion"
    hoist_memory: bool = True

    def run(self, op: Operation) -> None:
        loops = [o for o in op.walk() if o is not op and hasattr(o, "loop_regions")]
        self.hoisted = 0
        for loop in loops:
            self.hoisted += hoist_loop_invariants(loop)
            if self.hoist_memory:
                self.hoisted += hoist_memory(loop)
