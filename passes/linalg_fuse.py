"""linalg-fuse: group structured ops on tensors into `fusion.group`s, one kernel each.

`linalg-fuse-elementwise-ops` has already merged what can be one `linalg.generic`
(elementwise chains, elementwise producers into reductions). What is left cannot be one
generic, but can still be one loop nest: a matmul and the elementwise ops on its result (its
epilogue: the f64 accumulator's truncation, the bias, the activation, a residual add, the
backward pass's relu masks) all run at one output element; a row reduction and the ops on
its rows (softmax, log_softmax, cross entropy, layernorm) all run at one row; independent
ops reading one input over one iteration space run in one sweep. A group runs as one loop
nest over its members' shared outer parallel dims (`fusion_cost.outer_dims`), each member's
other loops inside; `lower-linalg-to-loop` then keeps the values passed between members in
registers (one per point) or in a per-point buffer (a row), never in a whole tensor. Scalar
work (0-d elementwise ops, full reductions to a 0-d value: a loss, Adam's bias-correction
scalars) shares no loop at all; it forms *scalar* groups without outer loops
(`fusion_cost.scalar_refusal`), its members' nests in sequence with the 0-d values passed
between them in registers.

The plan (`plan_fusion`) is greedy in program order, per block: each structured op joins
the group(s) it is related to when the cost model accepts the result (`fusion_cost.refusal`:
no shared outer dim, too big a per-point footprint, recomputing a reduction), else starts a
group of its own. Groups are only ever extended forward, so the group op can stand where its
last member stood: every operand of a member is defined before that, and the plan keeps
every use of a member's result outside the group after it. A `linalg.fill` whose only user
is an op comes with that op (the reduction's initial value is stored and reloaded in the
same iteration). The refusals are kept in the plan, (op, reason), for reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_pure
from irkit.dialects.fusion import GroupOp
from irkit.dialects.fusion.group import make_group
from irkit.dialects.graph import ReadOp
from irkit.dialects.linalg import (
    REDUCTION, BatchMatmulOp, Conv2DNchwFchwOp, FillOp, MatmulOp, StructuredOp,
)
from irkit.passes import fusion_cost, fusion_report
from irkit.passes.fusion_cost import Binding, DimNames

#: the group kinds, by what formed them
EPILOGUE, REDUCTION_KIND, ELEMENTWISE, HORIZONTAL, SCALAR = (
    "epilogue", "reduction", "elementwise", "horizontal", "scalar")


@dataclass(eq=False)
class PlannedGroup:
    """Members (structured ops, program order), the number of outer dims they share, and
    the member where the group op will stand (`at`: every use of a member's result outside
    the group comes after it, every value a member reads is defined before it)."""

    ops: list[Operation]
    outer_dims: int
    at: Operation

    @property
    def kind(self) -> str:
        members = set(self.ops)
        if not self.outer_dims:
            return SCALAR
        if any(is_contraction(o) for o in self.ops):
            return EPILOGUE
        if any(fusion_cost.is_expensive(o) for o in self.ops if not isinstance(o, FillOp)):
            return REDUCTION_KIND
        if any(v.owner in members for o in self.ops for v in o.operands
               if not isinstance(v, BlockArgument)):
            return ELEMENTWISE
        return HORIZONTAL

    @property
    def anchor(self) -> Operation:
        """The member the group is named after: its first reduction, else its first op."""
        return next((o for o in self.ops if not isinstance(o, FillOp)
                     and fusion_cost.is_expensive(o)),
                    next(o for o in self.ops if not isinstance(o, FillOp)))


@dataclass
class FusionPlan:
    """The groups `linalg-fuse` forms and the candidates it refused, (op, reason)."""

    groups: list[PlannedGroup] = field(default_factory=list)
    refusals: list[tuple[Operation, str]] = field(default_factory=list)


def is_contraction(op: Operation) -> bool:
    """A matmul, batch matmul or convolution, named or as the generic `lower-graph-to-linalg`
    makes (a reduction over two inputs of rank 2 or more, multiplying them)."""
    if isinstance(op, (MatmulOp, BatchMatmulOp, Conv2DNchwFchwOp)):
        return True
    if not isinstance(op, StructuredOp) or REDUCTION not in op.iterator_types_list():
        return False
    shaped = [v for v in op.inputs if getattr(v.type, "rank", 0) >= 2]
    return len(shaped) >= 2 and any(o.name == "arith.mulf" for o in op.body.ops)


# ---------------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------------


class _BlockPlanner:
    """The greedy plan of one block (see the module docstring)."""

    def __init__(self, block: Block, plan: FusionPlan, names: DimNames, budget: int,
                 binding: dict | None) -> None:
        self.block = block
        self.plan = plan
        self.names = names
        self.budget = budget
        self.binding = binding
        self.ops = list(block.ops)
        self.pos = {op: i for i, op in enumerate(self.ops)}
        self.group_of: dict[Operation, PlannedGroup] = {}

    def at(self, op: Operation) -> Operation | None:
        """`op`, or its ancestor in the block."""
        while op is not None and op not in self.pos:
            op = op.parent_op
        return op

    def where(self, op: Operation) -> int:
        """Where `op` (an op of the block) will run: its group's place, else its own."""
        g = self.group_of.get(op)
        return self.pos[g.at if g is not None else op]

    def run(self) -> list[PlannedGroup]:
        for x in self.ops:
            if isinstance(x, StructuredOp) and not isinstance(x, FillOp) and x.results \
                    and x.has_tensor_semantics:
                self.place(x)
        groups = {id(g): g for g in self.group_of.values()}.values()
        return [g for g in groups if len(g.ops) > 1 and (
            g.outer_dims > 0 or sum(not isinstance(o, FillOp) for o in g.ops) > 1)]

    def place(self, x: StructuredOp) -> None:
        unit = self.fills_of(x) + [x]
        vertical = self.producer_groups(x)
        options = ([vertical] if len(vertical) > 1 else []) + [[g] for g in vertical]
        options += [[g] for g in self.sharing_groups(x) if g not in vertical]
        first_refusal = None
        for option in options:
            members = sorted({o for g in option for o in g.ops} | set(unit), key=self.pos.get)
            at = None
            why = fusion_cost.refusal(members, names=self.names, binding=self.binding,
                                      budget=self.budget)
            if why is None:
                why = self.keeps_epilogues(option, members)
            if why is None:
                at, why = self.placement(option, members, x)
                if why is not None and first_refusal is None and option[0] in vertical:
                    self.refuse_recompute(option, unit)
            if why is None:
                k, _ = fusion_cost.outer_dims(members, self.names)
                self.assign(PlannedGroup(members, k, at))
                return
            if first_refusal is None and option[0] in vertical:
                first_refusal = why
        if first_refusal is not None:
            self.plan.refusals.append((x, first_refusal))
        k, _ = fusion_cost.outer_dims(unit, self.names)
        self.assign(PlannedGroup(unit, k, x))

    def keeps_epilogues(self, option: list[PlannedGroup], members: list) -> str | None:
        """A group holding a matmul keeps its outer dims: its epilogue then runs at one
        output element (the accumulator a register) rather than at a row of them."""
        k, _ = fusion_cost.outer_dims(members, self.names)
        for g in option:
            if g.outer_dims > k and any(is_contraction(o) for o in g.ops):
                return (f"would run the epilogue of '{g.anchor.name}' per {k}-dim point "
                        f"instead of per {g.outer_dims}-dim output element")
        return None

    def assign(self, group: PlannedGroup) -> None:
        for op in group.ops:
            self.group_of[op] = group

    def fills_of(self, x: StructuredOp) -> list[Operation]:
        """The `linalg.fill`s of this block whose result only `x` uses, as its init."""
        return [v.owner for v in x.outputs
                if not isinstance(v, BlockArgument) and isinstance(v.owner, FillOp)
                and v.owner in self.pos and all(u is x for u in v.users)]

    def producer_groups(self, x: StructuredOp) -> list[PlannedGroup]:
        """The groups making a value `x` reads, the latest first."""
        found = []
        for v in _read_values(x):
            d = None if isinstance(v, BlockArgument) else self.at(v.owner)
            g = self.group_of.get(d) if d is not None else None
            if g is not None and g not in found:
                found.append(g)
        return sorted(found, key=lambda g: -self.pos[g.at])

    def sharing_groups(self, x: StructuredOp) -> list[PlannedGroup]:
        """The groups with a member reading a shaped input `x` reads too (horizontal)."""
        found = []
        for v in x.inputs:
            if not hasattr(v.type, "rank") or v.type.rank == 0:
                continue
            for u in v.users:
                g = self.group_of.get(u)
                if g is not None and g not in found:
                    found.append(g)
        return sorted(found, key=lambda g: -self.pos[g.at])

    def placement(self, option: list[PlannedGroup], members: list[Operation],
                  x: StructuredOp) -> tuple[Operation | None, str | None]:
        """Where the merged group can stand: at `x` (the others' members move down to it),
        else at the latest of the groups (`x` and its fills move up to it); or why
        neither."""
        why = self.blocked(members, x)
        if why is None:
            return x, None
        latest = max((g.at for g in option), key=self.pos.get)
        if self.blocked(members, latest) is None:
            return latest, None
        return None, why

    def blocked(self, members: list[Operation], at: Operation) -> str | None:
        """Why `members` cannot all run at `at`'s place: a member moving down has a result
        used before it outside them; a member moving up reads a value made after it; a
        member with effects would cross an op with effects."""
        inside = set(members)
        t = self.pos[at]
        for m in members:
            here = self.where(m)
            if here < t:
                for r in m.results:
                    for u in r.users:
                        y = self.at(u)
                        if y is not None and y not in inside and self.where(y) < t:
                            return (f"'{y.name}' uses a result of '{m.name}' between the "
                                    "candidate's ops")
            elif here > t:
                for v in _read_values(m):
                    d = None if isinstance(v, BlockArgument) else self.at(v.owner)
                    if d is not None and d not in inside and self.where(d) >= t:
                        return f"'{m.name}' reads a value '{d.name}' makes after the group"
            if here != t and not is_pure(m):
                lo, hi = sorted((here, t))
                for y in self.ops[lo + 1:hi]:
                    if y not in inside and not is_pure(y) and not isinstance(y, ReadOp):
                        return (f"'{m.name}' has effects and '{y.name}' too, between the "
                                "candidate's ops")
        return None

    def refuse_recompute(self, option: list[PlannedGroup], unit: list[Operation]) -> None:
        """`x` cannot join the group(s) making what it reads: computing their reductions
        again in `x`'s kernel is what the cost model refuses; record it."""
        for g in option:
            for p in g.ops:
                if fusion_cost.is_expensive(p) and not isinstance(p, FillOp) and \
                        any(v.owner is p for o in unit for v in o.operands
                            if not isinstance(v, BlockArgument)):
                    why = fusion_cost.refusal(unit + [p], recomputed=[p], names=self.names,
                                              binding=self.binding, budget=self.budget)
                    self.plan.refusals.append((unit[-1], why))


def _read_values(op: Operation) -> list[Value]:
    """The values `op` and the ops nested in it read that are defined outside it."""
    inner = {r for o in op.walk() for r in o.results} | \
        {a for o in op.walk() for region in o.regions for b in region.blocks for a in b.args}
    return [v for o in op.walk() for v in o.operands if v not in inner]


def _blocks(root: Operation) -> list[Block]:
    """The blocks whose ops may be grouped: all but structured ops' bodies and groups'."""
    out = []
    for op in root.walk(post_order=False):
        if isinstance(op, (StructuredOp, GroupOp)):
            continue
        for region in op.regions:
            out.extend(region.blocks)
    return out


def plan_fusion(root: Operation, budget: int = fusion_cost.FOOTPRINT_BUDGET,
                binding: dict | None = None) -> FusionPlan:
    """The groups to form under `root` (a function or module) and the refused candidates."""
    plan = FusionPlan()
    names = DimNames.around([root]) if root.regions else DimNames()
    for block in _blocks(root):
        if block.parent_op is not None and _inside_group_or_body(block.parent_op):
            continue
        plan.groups += _BlockPlanner(block, plan, names, budget, binding).run()
    return plan


def _inside_group_or_body(op: Operation) -> bool:
    while op is not None:
        if isinstance(op, (StructuredOp, GroupOp)):
            return True
        op = op.parent_op
    return False


# ---------------------------------------------------------------------------------------------
# Applying the plan
# ---------------------------------------------------------------------------------------------


def apply_plan(plan: FusionPlan) -> list[GroupOp]:
    """Wrap each planned group's members in a `fusion.group` standing where its member `at`
    stood, yielding the results used outside it."""
    made = []
    for g in plan.groups:
        members = set(g.ops)
        yielded = [r for o in g.ops for r in o.results
                   if any(not _within(u, members) for u in r.users)]
        group = make_group(yielded, [], g.kind, g.outer_dims, location=g.anchor.location)
        g.at.parent.insert_before(g.at, group)
        body = group.body
        for op in g.ops:
            op.detach()
            body.insert_before(body.last, op)
        for v, new in zip(yielded, group.results):
            v.replace_uses_if(new, lambda use: not _within(use.owner, {group}))
        made.append(group)
    return made


def _within(op: Operation, ancestors: set) -> bool:
    while op is not None:
        if op in ancestors:
            return True
        op = op.parent_op
    return False


@register_pass
class LinalgFuse(Pass):
    """Group structured ops on tensors into `fusion.group`s under the cost model.

    Algorithm:
      1. Name the dims: every `?` a symbol (`graph.dims`), axes one loop of an op unified.
      2. Per block (a function body, a `graph.if` branch), in program order, for each
         structured op X on tensors (fills come with the op whose init they are):
         a. candidates: all the groups making a value X reads, merged; each of them alone
            (latest first); then each group with a member reading an input X reads;
         b. `fusion_cost.refusal` decides: a shared outer parallel dim (maps of the
            values passed between members leading with it), or else scalar work only (no
            member with a parallel loop, only 0-d values passed between members), per-point
            intermediates within `footprint-budget` bytes (`?` = `default-dim`), no
            reduction recomputed;
         c. a candidate that would lower the outer dims of a group holding a matmul is
            refused too (its epilogue stays at one output element, in registers);
         d. placement: the group stands at X (the others' members move down to it) unless
            a member's result is used before X outside the candidate; else at the latest
            group's place (X and its fills move up) unless X reads a value made after it;
            a member with effects (a check in its body) never crosses another op with
            effects;
         e. X joins the first accepted candidate (its groups merged), else starts a group;
            when no candidate took it, the first producer candidate's refusal is recorded
            (`plan_fusion`), and when only placement blocked it and it reads a reduction
            of that candidate, the cost model's refusal to recompute that reduction too.
      3. Each group of two ops or more sharing at least one outer dim, and each scalar
         group (no outer dim) of two ops or more besides fills, becomes a
         `fusion.group {kind, outer_dims}` where its member `at` stood (its last one, or
         the latest group's place when X moved up to it), yielding the members' results
         used outside it; a scalar group's kind is "scalar".
      4. With `report`: a remark per function, kernels and costs before and after, a note
         per group and per refusal (passes/fusion_report.py; `--fusion-report`).
    """

    name = "linalg-fuse"
    footprint_budget: int = fusion_cost.FOOTPRINT_BUDGET
    default_dim: int = fusion_cost.DEFAULT_DIM
    report: bool = False

    def run(self, op: Operation) -> None:
        binding = Binding(default=self.default_dim)
        plan = plan_fusion(op, self.footprint_budget, binding)
        funcs = fusion_report.functions(op) if self.report else []
        before = {f: fusion_report.snapshot(f, binding) for f in funcs}
        apply_plan(plan)
        diagnostics = []
        for f in funcs:
            d = fusion_report.totals_remark(f, self.name, before[f],
                                            fusion_report.snapshot(f, binding), binding)
            fusion_report.report_groups(
                d, [g for g in plan.groups if _within(g.anchor, {f})],
                [(o, why) for o, why in plan.refusals if _within(o, {f})],
                DimNames.around([f]), binding)
            diagnostics.append(d)
        fusion_report.emit_all(diagnostics)
