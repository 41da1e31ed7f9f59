"""Building blocks for structured control flow, shared by every dialect that has it.

MLIR's `scf.if`/`scf.yield` shape recurs at each level of irkit: `loop.if` over scalars,
`graph.if` over tensors. What that shape means — two single-block regions without arguments,
the taken one runs, its terminator hands values to the parent's results, a terminator
without values may be left out of the custom form — is written once here; a dialect states
only what differs (the condition's type and how to read it, its yield op, extra rules).

- `IfLike`: mixin for the conditional op (structure checks, custom syntax, interpretation,
  canonicalization `InlineConstantIf` and `RemoveUnusedIfResults`, bound to the op by
  `if_patterns`).
- `YieldLike`: mixin for the terminator (checks against the parent's results, syntax,
  interpretation).
- `ensure_terminator`, `inline_region_before`: the parser and rewriter steps both need.
"""

from __future__ import annotations

from irkit.ir import Block, Operation, Region, Value
from irkit.opdef import Op, Terminator, lookup_op
from irkit.rewrite import PatternRewriter, RewritePattern


def ensure_terminator(p, region: Region, yield_name: str) -> None:
    """Give a custom-parsed region its implicit yield (op `yield_name`) without operands
    (MLIR's `ensureTerminator`): the custom form leaves such a yield out."""
    if not region.blocks:
        region.add_block(Block())
    block = region.blocks[-1]
    last = block.last
    if last is None or not (isinstance(last, Op) and last.has_trait(Terminator)):
        block.append(lookup_op(yield_name).build([], result_types=[],
                                                 location=p.location_at(p.i - 1)))


def inline_region_before(rewriter: PatternRewriter, region: Region, op: Operation,
                         args) -> list[Value]:
    """Move the single block of `region` before `op` (block arguments := `args`), drop its
    terminator and return the values that terminator handed to `op`."""
    block = region.blocks[0]
    terminator = block.last
    rewriter.inline_block_before(block, op, list(args))
    values = list(terminator.operands)
    rewriter.erase_op(terminator)
    return values


def parse_optional_values_with_types(p) -> list[Value]:
    """`%a, %b : T, U`, or nothing when no SSA name follows."""
    if not p.tok.startswith("%"):
        return []
    refs = p.parse_operand_refs()
    p.expect(":")
    tk = p.i
    types = p.parse_type_list()
    if len(types) != len(refs):
        raise p.error(f"expected {len(refs)} types, found {len(types)}", tk)
    return [p.resolve(r, t) for r, t in zip(refs, types)]


# ---------------------------------------------------------------------------------------------
# The conditional
# ---------------------------------------------------------------------------------------------


class IfLike:
    """Mixin for `%r = d.if %cond -> (T...) { ... } else { ... }`.

    The op class declares `condition` as its first operand, `then_region` and `else_region`,
    and sets `yield_name` (its terminator op) and `condition_type` (what the custom form
    resolves the condition to); it implements `constant_condition()`, the condition's value
    when it is a constant (else None), and `taken(value)`, the truth of a run-time value.
    """

    __slots__ = ()
    yield_name: str
    condition_type = None

    def constant_condition(self) -> bool | None:
        raise NotImplementedError

    @staticmethod
    def taken(value) -> bool:
        return bool(value)

    def verify_(self):
        if len(self.then_region.blocks) != 1:
            raise self.error("expects the then region to have exactly one block")
        if self.results and not self.else_region.blocks:
            raise self.error("must have an else block if defining values")
        for which, region in (("then", self.then_region), ("else", self.else_region)):
            if region.blocks and region.blocks[0].args:
                raise self.error(f"expects the {which} region's block to have no arguments")

    def is_speculatable(self) -> bool:
        """Choosing a region has no effect; whether the regions may run is their ops' call."""
        return True

    @classmethod
    def parse(cls, p, num_results):
        cond = p.resolve(p.parse_operand_ref(), cls.condition_type)
        types = p.parse_function_result_types() if p.accept("->") else []
        then = p.parse_region()
        ensure_terminator(p, then, cls.yield_name)
        other = Region()
        if p.accept("else"):
            other = p.parse_region()
            ensure_terminator(p, other, cls.yield_name)
        attrs = p.parse_optional_attr_dict()
        return cls.build(cond, result_types=types, attributes=attrs, regions=[then, other])

    def print(self, p):
        p.write(f" {p.value(self.operands[0])}")
        if self.results:
            p.write(f" -> ({', '.join(map(str, self.result_types))})")
        p.write(" ")
        p.region(self.then_region, print_entry_args=False, print_block_terminators=False)
        if self.else_region.blocks:
            p.write(" else ")
            p.region(self.else_region, print_entry_args=False, print_block_terminators=False)
        p.attr_dict(self)

    def interpret(self, interp, values):
        region = self.then_region if self.taken(values[0]) else self.else_region
        if not region.blocks:
            return []
        return interp.run_region(region, [], interp.env)


class InlineConstantIf(RewritePattern):
    """An if on a constant condition is the taken region, inlined (or nothing)."""

    def match_and_rewrite(self, op: IfLike, rewriter: PatternRewriter) -> bool:
        c = op.constant_condition()
        if c is None:
            return False
        region = op.then_region if c else op.else_region
        if not region.blocks:
            if op.results:
                return False                    # invalid IR; leave it to the verifier
            rewriter.erase_op(op)
            return True
        rewriter.replace_op(op, inline_region_before(rewriter, region, op, []))
        return True


class RemoveUnusedIfResults(RewritePattern):
    """Drop results nobody uses (and their yield operands): a new if of the same class takes
    over the regions. A result-less if with pure regions is then erased by the driver as dead
    code."""

    def match_and_rewrite(self, op: IfLike, rewriter: PatternRewriter) -> bool:
        keep = [r for r in op.results if r.has_uses()]
        if len(keep) == len(op.results):
            return False
        for region in op.regions:
            if region.blocks:
                y = region.blocks[0].last
                with rewriter.modify_op_in_place(y):
                    y.set_operands([y.operands[r.index] for r in keep])
        regions = []
        for region in op.regions:
            fresh = Region()
            fresh.take_body(region)
            regions.append(fresh)
        new = rewriter.create(type(op), op.operands[0], result_types=[r.type for r in keep],
                              regions=regions, location=op.location)
        for r, nr in zip(keep, new.results):
            rewriter.replace_all_uses_with(r, nr)
        rewriter.erase_op(op)
        return True


def if_patterns(name: str) -> tuple:
    """The if canonicalization patterns, rooted at the op `name`."""
    return tuple(type(p.__name__, (p,), {"root": name, "__doc__": p.__doc__})
                 for p in (InlineConstantIf, RemoveUnusedIfResults))


# ---------------------------------------------------------------------------------------------
# The terminator
# ---------------------------------------------------------------------------------------------


class YieldLike:
    """Mixin for `d.yield %a, %b : T, U` ending a region of a structured op: its operands
    become the parent's results (or next iteration's values), matching them in number and
    type. Left out of the custom form when it has no operands."""

    __slots__ = ()

    def verify_(self):
        parent = self.parent_op
        want, got = parent.result_types, self.operand_types
        if len(got) != len(want):
            raise self.error(f"has {len(got)} operands, but parent '{parent.name}' has "
                             f"{len(want)} results")
        for i, (g, w) in enumerate(zip(got, want)):
            if g is not w:
                raise self.error(f"type of operand #{i} ('{g}') doesn't match the type of "
                                 f"result #{i} of parent '{parent.name}' ('{w}')")

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        return cls.build(parse_optional_values_with_types(p), result_types=[],
                         attributes=attrs)

    def print(self, p):
        p.attr_dict(self)
        p.operands_with_types(self.operands)

    def interpret(self, interp, values):
        from irkit.interpreter import Return
        return Return(values)
