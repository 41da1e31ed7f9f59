"""graph-raise-control-flow: rebuild `graph.if` regions from switch/merge dataflow conditionals."""

from __future__ import annotations

from dataclasses import dataclass, field

from irkit.diagnostics import emit_remark
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_pure
from irkit.types import I32
from irkit.dialects.graph import graph
from irkit.dialects.graph.control import IfOp, MergeOp, SwitchOp, YieldOp


class _Pending(Exception):
    """The conditional holds switches or merges of others: retry once they are raised."""


class _Illegal(Exception):
    """The subgraph cannot become a `graph.if`; the message says why."""


@dataclass
class _Conditional:
    """One predicate's subgraph: its switches, the ops only the true (false) side runs, and
    the merges that join the two sides (with the operand index each side feeds)."""

    pred: Value
    switches: list
    then_ops: set = field(default_factory=set)
    else_ops: set = field(default_factory=set)
    merges: list = field(default_factory=list)          # (merge, true index, false index)


def _reach(block: Block, starts: list[Value], stop_at_merges: bool = True) -> tuple[set, dict]:
    """The ops of `block` reachable forward through uses from `starts`, stopping at merges
    (unless told not to), and for each merge reached the operand indices it was reached
    through."""
    ops: set = set()
    merges: dict = {}
    work = list(starts)
    while work:
        v = work.pop()
        for use in v.uses:
            user = block.find_ancestor_op(use.owner)
            if user is None:
                raise _Illegal("a branch value is used outside the block of its switch")
            if stop_at_merges and isinstance(user, MergeOp) and user is use.owner:
                merges.setdefault(user, set()).add(use.index)
            elif user not in ops:
                ops.add(user)
                work.extend(user.results)
    return ops, merges


def _analyze(block: Block, pred: Value, switches: list) -> _Conditional:
    """Steps 1-3 of the algorithm for one predicate; raises _Pending or _Illegal."""
    cond = _Conditional(pred, switches)
    cond.then_ops, t_merges = _reach(block, [s.if_true for s in switches])
    cond.else_ops, f_merges = _reach(block, [s.if_false for s in switches])
    order = {op: i for i, op in enumerate(block.ops)}
    both = cond.then_ops & cond.else_ops
    if both:            # final: raising other conditionals cannot separate the two sides
        first = min(both, key=order.__getitem__)
        raise _Illegal(f"'{first.name}' uses values of both branches")
    for op in cond.then_ops | cond.else_ops:
        for nested in op.walk():
            if isinstance(nested, (SwitchOp, MergeOp)):
                raise _Pending(f"its branches hold a '{nested.name}' that was not raised")
    for m in dict.fromkeys([*t_merges, *f_merges]):
        t, f = t_merges.get(m, set()), f_merges.get(m, set())
        if len(m.inputs) != 2 or len(t) != 1 or len(f) != 1 or t == f:
            raise _Pending("a graph.merge joins its branches with other values")
        cond.merges.append((m, next(iter(t)), next(iter(f))))
    for op in cond.then_ops | cond.else_ops:
        if has_trait(op, Terminator):
            raise _Illegal(f"a branch value reaches '{op.name}' without a graph.merge")
    cond.merges.sort(key=lambda e: order[e[0]])
    return cond


def _place(block: Block, cond: _Conditional) -> tuple[Operation | None, list]:
    """Step 4's insertion point: the op the `graph.if` goes before (None: the block's end),
    and the ops to sink below it.

    The if must follow every op defining a value the branches, switches or predicate read;
    it goes where the first merge was, or later if such a value is defined later. The ops
    reading its results (transitively) that come earlier sink below it, which is allowed for
    pure ones only; and a side-effecting branch op may not move past another side effect.
    """
    order = {op: i for i, op in enumerate(block.ops)}
    ops = list(block.ops)
    merges = [m for m, _, _ in cond.merges]
    moved = cond.then_ops | cond.else_ops | set(cond.switches) | set(merges)
    read, lo = set(), -1                # the ops defining what the branches read
    for op in moved - set(merges):
        for nested in op.walk():
            for v in nested.operands:
                d = None if isinstance(v, BlockArgument) else block.find_ancestor_op(v.owner)
                if d is not None and d is not op and (d not in moved or d in merges):
                    read.add(d)
                    lo = max(lo, order[d])
    after, _ = _reach(block, [r for m in merges for r in m.results], stop_at_merges=False)
    if after & (read | moved):
        raise _Illegal("the branches use the conditional's own result")
    last = block.last
    end = order[last] if last is not None and has_trait(last, Terminator) else len(ops)
    pref = order[merges[0]] if merges else 1 + max(order[o] for o in moved)
    pos = min(max(pref, lo + 1), end)
    anchor = next((o for o in ops[pos:] if o not in moved), None)
    sink = [o for o in ops[:pos] if o in after]
    for o in sink:
        if not is_pure(o):
            raise _Illegal(f"'{o.name}' reads the conditional's result before a value the "
                           "branches read is computed")
    at = order[anchor] if anchor is not None else len(ops)
    for op in cond.then_ops | cond.else_ops:
        if is_pure(op):
            continue
        # the ops the move carries it past: those between it and its new place
        between = ops[order[op] + 1:at] if order[op] < at else ops[at:order[op]]
        for other in between:
            if other not in moved and other not in after and not is_pure(other):
                raise _Illegal(f"moving '{op.name}' into the conditional would reorder it "
                               f"with '{other.name}'")
    return anchor, sink


def _build(block: Block, cond: _Conditional, anchor: Operation | None, sink: list) -> None:
    """Step 4: the `graph.if` replaces the switches and merges; the branch ops move into it."""
    merges = [m for m, _, _ in cond.merges]
    loc = merges[0].location if merges else cond.switches[0].location
    if_op = IfOp.build(cond.pred, result_types=[m.value.type for m in merges], location=loc)
    block.insert_before(anchor, if_op)
    order = {op: i for i, op in enumerate(block.ops)}
    for region, ops, side in ((if_op.then_region, cond.then_ops, 1),
                              (if_op.else_region, cond.else_ops, 2)):
        if side == 2 and not ops and not merges:
            break                               # no else region when it would be empty
        body = region.add_block(Block())
        for op in sorted(ops, key=order.__getitem__):
            body.append(op.detach())
        body.append(YieldOp.build([e[0].inputs[e[side]] for e in cond.merges], location=loc))
    for s in cond.switches:
        s.if_true.replace_all_uses_with(s.data)
        s.if_false.replace_all_uses_with(s.data)
    for (m, t, _), r in zip(cond.merges, if_op.results):
        m.value.replace_all_uses_with(r)
        if m.index.has_uses():
            # The index is the position of the live input: p for (false, true), !p otherwise.
            p = cond.pred
            if t == 0:
                p = graph.ops["graph.not"].create(p, location=m.location)
                block.insert_before(anchor, p)
                p = p.results[0]
            cast = graph.ops["graph.cast"].create(p, I32, location=m.location)
            block.insert_before(anchor, cast)
            m.index.replace_all_uses_with(cast.results[0])
    for op in [*merges, *cond.switches]:
        op.erase()
    for op in sink:                             # readers of the results go below the if
        block.insert_before(anchor, op.detach())


def _raise_block(block: Block) -> int:
    """Steps 1-5 on one block, to a fixpoint; returns how many conditionals were raised."""
    failed: set = set()
    raised = 0
    while True:
        groups: dict = {}
        for op in block.ops:
            if isinstance(op, SwitchOp) and op.pred not in failed:
                groups.setdefault(op.pred, []).append(op)
        pending = {}
        for pred, switches in groups.items():
            try:
                cond = _analyze(block, pred, switches)
                anchor, sink = _place(block, cond)
            except _Pending as e:
                pending[pred] = (switches[0], str(e))
                continue
            except _Illegal as e:
                failed.add(pred)
                emit_remark(f"switches on this predicate were not raised to graph.if: {e}",
                            switches[0].location)
                continue
            if not cond.then_ops and not cond.else_ops and not cond.merges:
                for s in switches:
                    if not s.if_true.has_uses() and not s.if_false.has_uses():
                        s.erase()
                raised += 1
            else:
                _build(block, cond, anchor, sink)
                raised += 1
            break                               # the block changed: analyze afresh
        else:
            for switch, why in pending.values():
                emit_remark(f"switches on this predicate were not raised to graph.if: {why}",
                            switch.location)
            return raised


@register_pass
class GraphRaiseControlFlow(Pass):
    """Replace each switch/merge conditional (TensorFlow 1's dataflow form) by a `graph.if`.

    Algorithm (per block holding `graph.switch` ops, to a fixpoint):
      1. Group the switches by predicate value. For a predicate p, the true set T is the ops
         reachable forward through uses from the true outputs of p's switches, stopping at
         merges (a use inside a nested region counts for the op holding it); the false set
         F likewise from the false outputs.
      2. The merges reached from T on one input and from F on the other are the
         conditional's results, in block order; inputs may come as (false, true) or
         (true, false).
      3. A conditional whose T or F holds a switch or a merge, or whose merges join other
         values too, waits for the conditionals nested in it (step 5). It is illegal (a
         remark says why, and the switches stay) if T and F share an op, a branch value
         reaches the block's terminator without a merge, the branches use the results, an
         op with side effects reads the results before a value the branches read is
         computed, or a side-effecting branch op would move past another one.
      4. Build `graph.if p` where the first merge was, or right after the last value the
         branches read if that comes later (pure readers of the results above it sink
         below it). T's ops move into the then region in their original order, F's into
         the else region, each ending in a `graph.yield` of that side's merge inputs;
         switch outputs become the switch's data, merge values the if's results, and a
         used merge index `cast(p)` (or `cast(!p)`) to i32. The switches and merges are
         erased. Switches with no use at all are simply erased.
      5. Start over at step 1 after each conditional built, so the innermost ones go first;
         stop when no conditional changes. Those still waiting get a remark.
    """

    name = "graph-raise-control-flow"

    def run(self, op: Operation) -> None:
        blocks = []
        for nested in op.walk():
            if isinstance(nested, SwitchOp) and nested.parent not in blocks:
                blocks.append(nested.parent)
        for block in blocks:
            _raise_block(block)
