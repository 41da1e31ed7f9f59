"""Control flow of the graph dialect, in two forms.

**Dataflow form** (TensorFlow 1's executor model): `graph.switch` routes a tensor to one of
two outputs by a predicate and marks the other *dead* (`irkit.interpreter.DEAD`); every op
fed by a dead value is dead itself, and `graph.merge` forwards whichever of its inputs is
live. A conditional is then a subgraph between switches and merges, with no regions: this is
what a graph-building frontend produces and what the interpreter runs directly.

**Structured form**: `graph.if` holds the two branches as regions ending in `graph.yield`,
and only the taken one runs. Passes and code generation want this form; the pass
`graph-raise-control-flow` rebuilds it from the dataflow form.

Deadness composes across both forms: a `graph.if` whose predicate is dead is skipped (its
results are dead), and a `graph.yield` passes dead values on instead of failing, so a raised
conditional nested in a dataflow one behaves as the subgraph it replaced.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.ir import Block, BlockArgument, Operation, Region, Value
from irkit.opdef import (
    AnyTensor, HasParent, Op, Operand, Pure, RegionDef, Result, ReturnLike, SingleBlock,
    Terminator, VarOperand, VarResult,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, I32, RankedTensorType
from irkit.dialects.graph import ConstantOp, GraphOp, ShapeError, TensorSpec, graph

_PRED_TYPE = RankedTensorType((), I1)


def _check_pred(spec: TensorSpec, what: str) -> None:
    if spec.shape != () or spec.dtype is not I1:
        raise ShapeError(f"{what} must be a 0-d i1 tensor (tensor<i1>), got {spec}")


def const_pred(v: Value) -> bool | None:
    """The value of a constant 0-d i1 predicate, or None when it is not a constant."""
    a = constant_value(v)
    if isinstance(a, DenseElementsAttr) and a.type is _PRED_TYPE:
        return bool(a.array[()])
    return None


def may_be_dead(v: Value, _memo: dict | None = None) -> bool:
    """Whether `v` can be DEAD at run time: it comes out of a switch, out of an op one of whose
    operands (or values captured by its regions) may be dead, or out of a merge all of whose
    inputs may be. Block arguments are live. Conservative: True means "cannot rule it out"."""
    memo = {} if _memo is None else _memo
    owner = getattr(v, "owner", None)
    if not isinstance(owner, Operation):
        return False
    if owner in memo:
        return memo[owner]
    memo[owner] = False                 # graph regions may be cyclic; assume live meanwhile
    if isinstance(owner, SwitchOp):
        dead = True
    elif isinstance(owner, MergeOp):
        dead = all(may_be_dead(x, memo) for x in owner.inputs)
    else:
        dead = any(may_be_dead(o.value, memo) for nested in owner.walk()
                   for o in nested.op_operands if not _defined_inside(o.value, owner))
    memo[owner] = dead
    return dead


def _defined_inside(v: Value, op: Operation) -> bool:
    """Whether `v` is defined in one of `op`'s regions (a value its body makes, not reads)."""
    if isinstance(v, BlockArgument):
        parent = v.owner.parent_op
        return parent is not None and op.is_ancestor_of(parent)
    return v.owner is not op and op.is_ancestor_of(v.owner)


# ---------------------------------------------------------------------------------------------
# graph.switch
# ---------------------------------------------------------------------------------------------


class FoldConstantSwitch(RewritePattern):
    """A switch on a constant predicate forwards `data` on the taken side. The other side is
    DEAD, which no value can stand for, so this fires only when that side is unused."""

    root = "graph.switch"     # the op class is defined below, so the annotation is a name

    def match_and_rewrite(self, op: SwitchOp, rewriter: PatternRewriter) -> bool:
        c = const_pred(op.pred)
        if c is None:
            return False
        dead = op.if_false if c else op.if_true
        if dead.has_uses():
            return False
        rewriter.replace_op(op, [op.data, op.data])
        return True


@graph.op
class SwitchOp(GraphOp):
    """Routes `data` by a predicate: if `pred` is true, `if_true` is `data` and `if_false` is
    DEAD; otherwise the reverse. Ops fed by the dead output do not run.

        %f, %t = graph.switch %x, %p : (tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>)
    """

    name = "graph.switch"
    data = Operand(AnyTensor)
    pred = Operand(AnyTensor)
    if_false = Result(AnyTensor)
    if_true = Result(AnyTensor)
    traits = (Pure(),)
    canonicalization_patterns = (FoldConstantSwitch,)

    @classmethod
    def infer(cls, args, props):
        data, pred = args
        _check_pred(pred, "the predicate of graph.switch")
        return [data, data]

    def verify_(self):
        super().verify_()
        for r in self.results:
            if r.type is not self.data.type:
                raise self.error(f"result types must be the type of data ({self.data.type}), "
                                 f"got {r.type}")

    def fold(self, operands):
        return None                     # a dead value is no attribute

    def evaluate(self, data, pred):
        from irkit.interpreter import DEAD
        return (DEAD, data) if bool(pred) else (data, DEAD)


# ---------------------------------------------------------------------------------------------
# graph.merge
# ---------------------------------------------------------------------------------------------


class MergeSingleInput(RewritePattern):
    """merge(x) -> x, index -> 0. When x may be DEAD the index must stay dead with it, so a
    used index is only replaced when x is surely live."""

    root = "graph.merge"     # the op class is defined below, so the annotation is a name

    def match_and_rewrite(self, op: MergeOp, rewriter: PatternRewriter) -> bool:
        if len(op.inputs) != 1:
            return False
        (x,) = op.inputs
        if op.index.has_uses() and may_be_dead(x):
            if not op.value.has_uses():
                return False
            rewriter.replace_all_uses_with(op.value, x)
            return True
        zero = rewriter.insert(ConstantOp.create(0, I32, location=op.location))
        rewriter.replace_op(op, [x, zero.results[0]])
        return True


@graph.op
class MergeOp(GraphOp):
    """Forwards whichever input is live, and its position as a 0-d i32 tensor. Exactly one
    input may be live; when all are dead both results are dead (so nested conditionals
    compose), and two live inputs are an error.

        %v, %i = graph.merge %a, %b : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
    """

    name = "graph.merge"
    inputs = VarOperand(AnyTensor)
    value = Result(AnyTensor)
    index = Result(AnyTensor)
    traits = (Pure(),)
    canonicalization_patterns = (MergeSingleInput,)
    #: the interpreter hands dead operands to this op instead of skipping it
    accepts_dead = True

    @classmethod
    def infer(cls, args, props):
        if not args:
            raise ShapeError("needs at least one input")
        for a in args[1:]:
            if a != args[0]:
                raise ShapeError("inputs must all have one type: " + " and ".join(
                    dict.fromkeys(map(str, args))))
        return [args[0], TensorSpec((), I32)]

    def verify_(self):
        super().verify_()
        if self.inputs and self.value.type is not self.inputs[0].type:
            raise self.error(f"value has type {self.value.type}, but the inputs have "
                             f"{self.inputs[0].type}")
        if self.index.type is not RankedTensorType((), I32):
            raise self.error(f"index must be tensor<i32>, got {self.index.type}")

    def fold(self, operands):
        return None

    def evaluate(self, *inputs):
        from irkit.interpreter import DEAD, InterpreterError
        live = [i for i, x in enumerate(inputs) if x is not DEAD]
        if not live:
            return DEAD, DEAD
        if len(live) > 1:
            raise InterpreterError(f"'graph.merge' got {len(live)} live inputs (#"
                                   f"{', #'.join(map(str, live))}); exactly one may be live",
                                   self.location)
        return inputs[live[0]], np.asarray(live[0], dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# graph.if and graph.yield
# ---------------------------------------------------------------------------------------------


def _inline_region_before(rewriter: PatternRewriter, region: Region, op: Operation) -> list:
    """Move the single block of `region` before `op`, drop its yield and return the values
    the yield handed to `op`."""
    block = region.blocks[0]
    terminator = block.last
    rewriter.inline_block_before(block, op, [])
    values = list(terminator.operands)
    rewriter.erase_op(terminator)
    return values


class InlineConstantIf(RewritePattern):
    """`graph.if` on a constant predicate is the taken region, inlined."""

    root = "graph.if"     # the op class is defined below, so the annotation is a name

    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> bool:
        c = const_pred(op.pred)
        if c is None:
            return False
        region = op.then_region if c else op.else_region
        if not region.blocks:
            if op.results:
                return False                    # invalid IR; the verifier says so
            rewriter.erase_op(op)
            return True
        rewriter.replace_op(op, _inline_region_before(rewriter, region, op))
        return True


class RemoveUnusedIfResults(RewritePattern):
    """Drop results nobody uses (and their yield operands): a new `graph.if` takes over the
    regions. A result-less if with pure regions is then erased by the driver as dead code."""

    root = "graph.if"     # the op class is defined below, so the annotation is a name

    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> bool:
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
        new = rewriter.create(IfOp, op.pred, result_types=[r.type for r in keep],
                              regions=regions, location=op.location)
        for r, nr in zip(keep, new.results):
            rewriter.replace_all_uses_with(r, nr)
        rewriter.erase_op(op)
        return True


def _ensure_yield(p, region: Region) -> None:
    """The custom form may leave out a `graph.yield` without operands; put it back."""
    if not region.blocks:
        region.add_block(Block())
    last = region.blocks[-1].last
    if last is None or not (isinstance(last, Op) and last.has_trait(Terminator)):
        region.blocks[-1].append(YieldOp.build([], location=p.location_at(p.i - 1)))


@graph.op
class IfOp(Op):
    """Runs the then region if the 0-d i1 `pred` is true, else the else region; the results
    are what the region that ran yields. Regions read values defined above them. The else
    region may be left out when there are no results. A dead `pred` makes the results dead.

        %r = graph.if %p -> (tensor<?xf32>) {
          %s = graph.add %x, %z : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
          graph.yield %s : tensor<?xf32>
        } else {
          graph.yield %y : tensor<?xf32>
        }
    """

    name = "graph.if"
    pred = Operand(AnyTensor)
    outs = VarResult(AnyTensor)
    then_region = RegionDef(single_block=True)
    else_region = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())
    canonicalization_patterns = (InlineConstantIf, RemoveUnusedIfResults)

    def verify_(self):
        if self.pred.type is not _PRED_TYPE:
            raise self.error(f"predicate must be tensor<i1>, got {self.pred.type}")
        if len(self.then_region.blocks) != 1:
            raise self.error("expects the then region to have exactly one block")
        if self.results and not self.else_region.blocks:
            raise self.error("must have an else region if defining values")
        for which, region in (("then", self.then_region), ("else", self.else_region)):
            if region.blocks and region.blocks[0].args:
                raise self.error(f"expects the {which} region's block to have no arguments")

    def is_speculatable(self) -> bool:
        """Choosing a region has no effect; whether the regions may run is their ops' call."""
        return True

    @classmethod
    def parse(cls, p, num_results):
        pred = p.resolve(p.parse_operand_ref(), _PRED_TYPE)
        types = p.parse_function_result_types() if p.accept("->") else []
        then = p.parse_region()
        _ensure_yield(p, then)
        other = Region()
        if p.accept("else"):
            other = p.parse_region()
            _ensure_yield(p, other)
        attrs = p.parse_optional_attr_dict()
        return cls.build(pred, result_types=types, attributes=attrs, regions=[then, other])

    def print(self, p):
        p.write(f" {p.value(self.pred)}")
        if self.results:
            p.write(f" -> ({', '.join(map(str, self.result_types))})")
        p.write(" ")
        p.region(self.then_region, print_entry_args=False, print_block_terminators=False)
        if self.else_region.blocks:
            p.write(" else ")
            p.region(self.else_region, print_entry_args=False, print_block_terminators=False)
        p.attr_dict(self)

    def interpret(self, interp, values):
        region = self.then_region if bool(values[0]) else self.else_region
        if not region.blocks:
            return []
        return interp.run_region(region, [], interp.env)


@graph.op
class YieldOp(Op):
    """Ends a `graph.if` region, handing its values to the if's results. Left out of the
    custom form when it has no operands. Dead values pass through (the if's results are
    then dead) rather than failing, as a merge of dead inputs would.

        %r = graph.if %p -> (tensor<f32>) {
          graph.yield %a : tensor<f32>
        } else {
          graph.yield %b : tensor<f32>
        }
    """

    name = "graph.yield"
    values_ = VarOperand(AnyTensor)
    traits = (Pure(), Terminator(), ReturnLike(), HasParent("graph.if"))
    accepts_dead = True

    def infer_result_types(self):
        return []

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
        values = []
        if p.tok.startswith("%"):
            refs = p.parse_operand_refs()
            p.expect(":")
            tk = p.i
            types = p.parse_type_list()
            if len(types) != len(refs):
                raise p.error(f"expected {len(refs)} types, found {len(types)}", tk)
            values = [p.resolve(r, t) for r, t in zip(refs, types)]
        return cls.build(values, result_types=[], attributes=attrs)

    def print(self, p):
        p.attr_dict(self)
        p.operands_with_types(self.operands)

    def interpret(self, interp, values):
        from irkit.interpreter import Return
        return Return(values)
