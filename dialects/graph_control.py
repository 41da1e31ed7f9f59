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
from irkit.ir import BlockArgument, Operation, Value
from irkit.opdef import (
    AnyTensor, HasParent, Op, Operand, Pure, RegionDef, Result, ReturnLike, SingleBlock,
    Terminator, VarOperand, VarResult,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.structured import IfLike, YieldLike, if_patterns
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


@graph.op
class IfOp(IfLike, Op):
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
    canonicalization_patterns = if_patterns("graph.if")
    condition_type = _PRED_TYPE
    yield_name = "graph.yield"

    def constant_condition(self) -> bool | None:
        return const_pred(self.pred)

    def verify_(self):
        if self.pred.type is not _PRED_TYPE:
            raise self.error(f"predicate must be tensor<i1>, got {self.pred.type}")
        super().verify_()


@graph.op
class YieldOp(YieldLike, Op):
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
