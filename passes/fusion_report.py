"""The fusion report: what the fusion passes made of each function, in the cost model's terms.

`irkit-compile --fusion-report` and `irkit-opt --fusion-report` turn on the `report` option
of `linalg-fuse-elementwise-ops` and `linalg-fuse`; each then emits, per function, one
remark on stderr (MLIR's `-pass-remarks` style) comparing the IR it was given with the IR it
leaves, in kernels, elements and bytes moved from memory, flops and arithmetic intensity
(`fusion_cost`). The first pass sees the graph as `lower-graph-to-linalg` made it (one kernel
per graph op: the unfused totals), the second the merged generics; `linalg-fuse` adds a note
per group (its kind, members, the model lines they came from, its own traffic, flops and
intensity) and a note per refused candidate with the cost model's reason, at the op's line.

A kernel is a structured op outside any group, or a whole `fusion.group`: what becomes one
loop nest. Counts are polynomials over the dims' names (`B`, `N`, ... from `graph.dims`);
the numbers after them bind every dim to the pass's `default-dim` (128) unless the model fixes
it. Intensity is flops per element moved, the lectures' unit (`E = D + (A + B) * C`: three
kernels at 1/3 each, fused one at 3/5), then flops per byte.
"""

from __future__ import annotations

from fractions import Fraction

from irkit.diagnostics import Diagnostic, emit
from irkit.ir import BlockArgument, Operation
from irkit.dialects.fusion import GroupOp
from irkit.dialects.linalg import StructuredOp
from irkit.passes.fusion_cost import (
    Cost, DimNames, Poly, Traffic, group_cost, passes_over,
)


def kernels(func: Operation) -> list[list[Operation]]:
    """The kernels of `func` on tensors: each `fusion.group`'s structured ops, and each
    structured op outside groups (not those nested in another structured op's body)."""
    out: list[list[Operation]] = []

    def visit(block) -> None:
        for op in block.ops:
            if isinstance(op, GroupOp):
                out.append([o for o in op.body.ops if isinstance(o, StructuredOp)])
            elif isinstance(op, StructuredOp):
                out.append([op])
            else:
                for region in op.regions:
                    for b in region.blocks:
                        visit(b)

    for region in func.regions:
        for block in region.blocks:
            visit(block)
    return [k for k in out if k]


def total(costs: list[Cost], binding) -> Cost:
    """The sum of `costs` (traffic, flops) as one Cost evaluated at `binding`."""
    t = Cost(read=Traffic(), written=Traffic(), flops=Poly(), binding=binding)
    for c in costs:
        t.read.elements = t.read.elements + c.read.elements
        t.read.bytes = t.read.bytes + c.read.bytes
        t.written.elements = t.written.elements + c.written.elements
        t.written.bytes = t.written.bytes + c.written.bytes
        t.flops = t.flops + c.flops
    return t


def snapshot(func: Operation, binding) -> tuple[int, Cost]:
    """(number of kernels, their total cost) of `func` now."""
    names = DimNames.around([func])
    ks = kernels(func)
    return len(ks), total([group_cost(k, names, binding) for k in ks], binding)


def _frac(x: Fraction | None) -> str:
    if x is None:
        return "-"
    return str(x) if x.denominator <= 64 else f"{float(x):.3g}"


def _amount(p: Poly, binding) -> str:
    value = p.evaluate(binding)
    text = str(p)
    return text if not p.symbols() else f"{text} (= {value})"


def describe(cost: Cost, binding) -> str:
    """Traffic, flops and intensity of one cost, in words."""
    return (f"reads {_amount(cost.read.elements, binding)} elements "
            f"({cost.read.bytes.evaluate(binding)} bytes), writes "
            f"{_amount(cost.written.elements, binding)} ({cost.written.bytes.evaluate(binding)} "
            f"bytes), {_amount(cost.flops, binding)} flops, intensity "
            f"{_frac(cost.intensity)} flops/element, {_frac(cost.flops_per_byte)} flops/byte")


def _lines(ops: list[Operation]) -> str:
    """The model lines the ops came from, `file:12, 13` (their locations' lines)."""
    by_file: dict[str, list[int]] = {}
    for op in ops:
        flc = getattr(op.location, "file_line_col", lambda: None)()
        if flc:
            by_file.setdefault(flc[0], [])
            if flc[1] not in by_file[flc[0]]:
                by_file[flc[0]].append(flc[1])
    return "; ".join(f"{f}:{', '.join(map(str, sorted(ls)))}" for f, ls in by_file.items()) \
        or "no location"


def _passes(ops: list[Operation]) -> str:
    """How many members sweep each array the group reads from outside (`passes_over`), the
    arrays named by where they come from: `arg 0`, or the op and line that made them."""
    inside = {r for o in ops for r in o.results}
    seen: list = []
    for o in ops:
        for v in o.operands:
            if v not in inside and v not in seen and getattr(v.type, "rank", 0) >= 1:
                seen.append(v)
    parts = []
    for v in seen:
        n = passes_over(ops, v)
        if not n:
            continue
        if isinstance(v, BlockArgument):
            label = f"arg {v.index}"
        else:
            flc = getattr(v.owner.location, "file_line_col", lambda: None)()
            label = v.owner.name + (f" at line {flc[1]}" if flc else "")
        parts.append(f"{label} x{n}")
    return ", ".join(parts) or "none"


def totals_remark(func: Operation, pass_name: str, before: tuple[int, Cost],
                  after: tuple[int, Cost], binding) -> Diagnostic:
    """One remark: the function's kernels and costs before and after the pass."""
    name = func.properties["sym_name"].value
    (k0, c0), (k1, c1) = before, after
    b0 = (c0.read.bytes + c0.written.bytes).evaluate(binding)
    b1 = (c1.read.bytes + c1.written.bytes).evaluate(binding)
    bound = ", ".join(f"{s}={binding.get(s, binding.default)}"
                      for s in sorted(c0.moved.symbols() | c1.moved.symbols()))
    text = (f"fusion report of @{name} ({pass_name}): {k0} -> {k1} kernels; bytes moved "
            f"{b0} -> {b1}; elements moved {c0.moved} -> {c1.moved}; flops {c0.flops} -> "
            f"{c1.flops}; intensity {_frac(c0.intensity)} -> {_frac(c1.intensity)} "
            f"flops/element" + (f" (numbers at {bound})" if bound else ""))
    return Diagnostic("remark", text, func.location)


def report_groups(d: Diagnostic, groups, refusals, names: DimNames, binding) -> None:
    """Notes on `d`: one per planned group (`linalg_fuse.PlannedGroup`), one per refusal."""
    for g in groups:
        ops = [o for o in g.ops if isinstance(o, StructuredOp)]
        members = ", ".join(o.name for o in ops)
        d.attach_note(f"group ({g.kind}, {g.outer_dims} outer dim"
                      f"{'s' * (g.outer_dims != 1)}) of {len(ops)} ops [{members}] from "
                      f"{_lines(ops)}: {describe(group_cost(ops, names, binding), binding)}; "
                      f"passes over its inputs: {_passes(ops)}", g.anchor.location)
    said = set()
    for op, why in refusals:            # once per place and reason (an op is tried twice)
        key = (str(op.location), op.name, why)
        if key not in said:
            said.add(key)
            d.attach_note(f"not fused: {op.name}: {why}", op.location)


def functions(root: Operation) -> list[Operation]:
    """The `func.func`s under `root` (itself, when it is one)."""
    return [o for o in root.walk(post_order=False) if o.name == "func.func"
            and o.regions and o.regions[0].blocks]


def emit_all(diagnostics: list[Diagnostic]) -> None:
    for d in diagnostics:
        emit(d)
