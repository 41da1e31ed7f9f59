"""`fusion.group` and its terminator `fusion.yield`.

    %r:2 = fusion.group {kind = "epilogue", outer_dims = 2 : i64}
        -> (tensor<?x10xf32>, tensor<?x10xf32>) {
      %m = linalg.generic ... ins(%x, %w : ...) outs(%acc : tensor<?x10xf64>) {...}
      %t = linalg.generic ... ins(%m : tensor<?x10xf64>) outs(%e : tensor<?x10xf32>) {...}
      fusion.yield %t, %t2 : tensor<?x10xf32>, tensor<?x10xf32>
    }

The generic form is `"fusion.group"() <{kind = ..., outer_dims = ...}> ({ ... }) : () -> (...)`.

A group may also take its inputs explicitly, as operands its block receives as arguments
(how a group written by another tool, e.g. one that outlines kernels, states its captures):

    %r = "fusion.group"(%a, %b) <{kernel = "k0"}> ({
    ^bb0(%x: tensor<?x784xf32>, %y: tensor<784x10xf32>):
      ...
    }) : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>

It means the same as the group whose body uses `%a` and `%b` directly (`inline_captures`
makes it that; the lowering does so first). `kernel` names the kernel; like `kind`, it
changes nothing.

What the group means is what its body computes, run once in order (the interpreter does just
that, whatever level the ops are at); what it promises the lowering is that the structured
ops in it can be sliced by their first `outer_dims` loops, which are parallel in each of them
and range over the same extents: one loop nest over those dims, each member's other loops
inside, computes the same values (`linalg-fuse` checks it, `lower-linalg-to-loop` relies on
it). `kind` says which rule formed the group (`epilogue`, `reduction`, `elementwise`,
`horizontal`, or `scalar`: 0-d work with no outer loop, `outer_dims = 0`); it informs
reports and changes nothing.

Memory effects are those of the body (on tensors none, so an unused group is dead code).
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr, StringAttr
from irkit.ir import Block, Region
from irkit.opdef import (
    AnyType, HasParent, IntAttr, Op, OptProp, RegionDef, ReturnLike, SingleBlock, StrAttr,
    Terminator,
    VarOperand, VarResult,
)
from irkit.structured import YieldLike, ensure_terminator
from irkit.types import I64
from irkit.dialects.fusion import fusion
from irkit.dialects.memory import effects_of


@fusion.op
class GroupOp(Op):
    """Structured ops (and the `tensor.empty`, `linalg.fill`, scalar ops and buffers they
    need) compiled into one kernel; the results are what the body's `fusion.yield` hands
    out. The body reads values defined above it. On memrefs it has no results and writes the
    buffers it is given.

        %r = fusion.group {kind = "elementwise", outer_dims = 1 : i64} -> (tensor<?xf32>) {
          %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                                affine_map<(d0) -> (d0)>],
                               iterator_types = ["parallel"]}
              ins(%x : tensor<?xf32>) outs(%x : tensor<?xf32>) {
          ^bb0(%in: f32, %out: f32):
            %e = math.exp %in : f32
            linalg.yield %e : f32
          } -> tensor<?xf32>
          fusion.yield %a : tensor<?xf32>
        }
    """

    name = "fusion.group"
    inputs = VarOperand(AnyType, doc="explicit captures: the body's block arguments")
    outs = VarResult(AnyType, doc="the values the body yields (none on memrefs)")
    kind = OptProp(StrAttr, doc="the rule that formed the group")
    kernel = OptProp(StrAttr, doc="a name for the kernel the group becomes")
    outer_dims = OptProp(IntAttr, doc="how many leading parallel loops the members share")
    region = RegionDef(doc="the members, ended by fusion.yield", single_block=True)
    traits = (SingleBlock(),)

    @property
    def body(self) -> Block:
        return self.regions[0].blocks[0]

    @property
    def num_outer_dims(self) -> int:
        return self.outer_dims.value if self.outer_dims is not None else 0

    def verify_(self):
        region = self.regions[0]
        if len(region.blocks) != 1:
            raise self.error("expects a region with exactly one block")
        args = region.blocks[0].args
        if [a.type for a in args] != [v.type for v in self.operands]:
            raise self.error(f"expects its block to take its {len(self.operands)} operands' "
                             f"types as arguments, got ({', '.join(str(a.type) for a in args)})")
        if self.num_outer_dims < 0:
            raise self.error(f"outer_dims must be non-negative, got {self.num_outer_dims}")
        last = region.blocks[0].last
        if not isinstance(last, YieldOp):
            raise self.error("expects its region to end with 'fusion.yield'")

    def memory_effects(self):
        """The effects of the ops in the body (MLIR's RecursiveMemoryEffects); None when one
        of them is unknown."""
        out = []
        for op in self.body.ops:
            effects = effects_of(op)
            if effects is None:
                if isinstance(op, YieldOp):
                    continue
                return None
            out += effects
        return out

    def interpret(self, interp, values):
        return interp.run_region(self.regions[0], list(values), interp.env)

    def inline_captures(self) -> None:
        """Make the body use the operands themselves instead of its block arguments (the
        same meaning: the group is not isolated from above), leaving no operands."""
        block = self.body
        for arg, v in zip(list(block.args), list(self.operands)):
            arg.replace_all_uses_with(v)
        while block.args:
            block.erase_argument(len(block.args) - 1)
        self.set_operands([])

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        if p.accept("ins"):                 # explicit captures: ins(%a, %b : T, U)
            p.expect("(")
            refs = p.parse_operand_refs()
            p.expect(":")
            operands = [p.resolve(r, t) for r, t in zip(refs, p.parse_type_list())]
            p.expect(")")
        else:
            operands = []
        attrs = p.parse_optional_attr_dict()
        types = p.parse_function_result_types() if p.accept("->") else []
        region = p.parse_region()
        ensure_terminator(p, region, YieldOp.name)
        props = {k: attrs.pop(k) for k in ("kind", "outer_dims", "kernel") if k in attrs}
        return cls.build(operands, result_types=types, attributes=attrs, regions=[region],
                         **props)

    def print(self, p):
        if self.operands:
            p.write(f" ins({', '.join(p.value(v) for v in self.operands)} : "
                    f"{', '.join(str(v.type) for v in self.operands)})")
        p.attr_dict(self)
        if self.results:
            p.write(f" -> ({', '.join(map(str, self.result_types))})")
        p.write(" ")
        p.region(self.regions[0], print_entry_args=bool(self.operands),
                 print_block_terminators=False)


@fusion.op
class YieldOp(YieldLike, Op):
    """Ends a `fusion.group`, handing its operands out as the group's results (none on
    memrefs, where it is left out of the custom form).

        fusion.yield %a, %b : tensor<?x10xf32>, tensor<?xf32>
    """

    name = "fusion.yield"
    values_ = VarOperand(AnyType)
    traits = (Terminator(), ReturnLike(), HasParent("fusion.group"))


def make_group(results_of, ops, kind: str, outer_dims: int, location=None) -> GroupOp:
    """A `fusion.group` (not inserted) whose body is `ops`, moved into it in their order,
    yielding `results_of` (values the ops define). The caller inserts it where the ops
    were and replaces the uses of `results_of` outside it by the group's results."""
    group = GroupOp.build(result_types=[v.type for v in results_of], regions=[Region()],
                          location=location or ops[0].location, kind=StringAttr(kind),
                          outer_dims=IntegerAttr(outer_dims, I64))
    block = Block([])
    group.regions[0].add_block(block)
    for op in ops:
        op.detach()
        block.append(op)
    block.append(YieldOp.build(list(results_of), result_types=[],
                               location=group.location))
    return group
