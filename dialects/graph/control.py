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

**Derivatives** follow the same split. In dataflow form they are dataflow too (TensorFlow 1's
rules): a switch's cotangent is the merge of its two outputs' cotangents, a merge's is routed
back by a switch on which input was live, so the backward graph holds the mirror conditional
and deadness skips the untaken branch's cotangent ops at run time. A `graph.if` is
differentiated into another `graph.if` on the same predicate whose regions run reverse (or
forward) mode over their own branch, so only the taken branch's derivative is computed.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.ad_rules import ADBuilder, captured_values
from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Region, Value
from irkit.opdef import (
    AnyTensor, HasParent, Op, Operand, Pure, RegionDef, Result, ReturnLike, SingleBlock,
    Terminator, VarOperand, VarResult, has_trait,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.structured import IfLike, YieldLike, if_patterns
from irkit.types import I1, I32, RankedTensorType
from irkit.dialects.graph.base import ConstantOp, GraphOp, ShapeError, TensorSpec, graph, is_float

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
    owner = v.defining_op()
    if owner is None:
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

    def nondiff_operands(self):
        return (1,)                     # the outputs are piecewise constant in the predicate

    def vjp(self, ad, cts):
        """data's cotangent is merge(false side's, true side's) (TensorFlow 1's rule). The
        cotangent of a side is computed from the ops that side feeds, so it is dead exactly
        when that side is; a side nothing flows back through gets `zeros_like` of itself,
        which is dead under the same condition. The merge thus sees one live input."""
        sides = [c if c is not None else ad.zeros_like(r)
                 for c, r in zip(cts, (self.if_false, self.if_true))]
        return [ad.op("graph.merge", sides)[0], None]

    def jvp(self, ad, tangents):
        """The tangent takes the branch the value takes: a switch of it on the predicate."""
        t = tangents[0]
        return [None, None] if t is None else ad.op("graph.switch", t, self.pred)


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

    def vjp(self, ad, cts):
        """The cotangent goes back to the input that was live: for input i it is the true
        side of a switch on `index == i`, dead unless input i was the one forwarded (the
        index, an integer, carries no derivative). A merge of one input forwards it whenever
        it is live, so its cotangent needs no routing."""
        ct = cts[0]
        if ct is None:
            return [None] * len(self.inputs)
        if len(self.inputs) == 1:
            return [ct]
        out = []
        for i in range(len(self.inputs)):
            here = ad.op("graph.cmp", self.index, ad.constant(np.int32(i), I32), predicate="eq")
            out.append(ad.op("graph.switch", ct, here)[1])
        return out

    def jvp(self, ad, tangents):
        """The merge of the inputs' tangents; an input without one contributes zeros that are
        dead when it is, so again exactly one input is live."""
        if all(t is None for t in tangents):
            return [None, None]
        ts = [t if t is not None else ad.zeros_like(x) for t, x in zip(tangents, self.inputs)]
        return [ad.op("graph.merge", ts)[0], None]


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

    def nondiff_operands(self):
        return (0,)                     # the results are piecewise constant in the predicate

    def vjp(self, ad, cts):
        """Cotangents of the values the regions capture: a new `graph.if` on the same
        predicate whose regions recompute their branch's forward ops and run reverse mode
        over them, seeded with the results' cotangents, so only the taken branch's gradient
        is built at run time. It yields one cotangent per captured float value some branch
        sends one to (zeros from the branch that does not)."""
        xs = [v for v in captured_values(self) if _is_float_tensor(v)]
        # Where the engine tells which values depend on what is differentiated against, only
        # those get cotangents; the others' would be dropped (canonicalize deletes them).
        active = getattr(ad, "active", None)
        if active is not None:
            xs = [x for x in xs if x in active]
        branches = []
        for region in (self.then_region, self.else_region):
            block, ops, yields = _recompute(region)
            b = _builder_at_end(block, ad)
            pairs = [(y, c) for y, c in zip(yields, cts) if c is not None]
            grads = ad.vjp_graph(ops, [y for y, _ in pairs], [c for _, c in pairs], xs, b) \
                if pairs else [None] * len(xs)
            branches.append((block, b, grads))
        keep = [k for k in range(len(xs)) if any(g[k] is not None for _, _, g in branches)]
        new = self._derivative_if(ad, branches, keep, xs)
        return {xs[k]: r for k, r in zip(keep, new.results)} if new is not None else {}

    def jvp(self, ad, tangents, captured):
        """Tangents of the results: a new `graph.if` on the same predicate whose regions
        recompute their branch and run forward mode over it from the captured values'
        tangents (zeros from a branch whose result does not depend on them)."""
        xs = list(captured)
        branches = []
        for region in (self.then_region, self.else_region):
            block, ops, yields = _recompute(region)
            b = _builder_at_end(block, ad)
            want = [i for i, y in enumerate(yields) if _is_float_tensor(y)]
            found = ad.jvp_graph(ops, xs, [captured[x] for x in xs], [yields[i] for i in want], b)
            tans = [None] * len(yields)
            for i, t in zip(want, found):
                tans[i] = t
            branches.append((block, b, tans))
        keep = [i for i in range(len(self.results)) if any(t[i] is not None
                                                           for _, _, t in branches)]
        new = self._derivative_if(ad, branches, keep, self.results)
        out = [None] * len(self.results)
        for i, r in zip(keep, new.results if new is not None else []):
            out[i] = r
        return out

    def _derivative_if(self, ad, branches, keep, like) -> Operation | None:
        """The `graph.if` on this predicate whose regions are `branches` (block, builder,
        derivatives), yielding derivative k of each for k in `keep` (zeros like `like[k]`
        where a branch has none); None, and the branches dropped, when `keep` is empty."""
        if not keep:
            for block, _, _ in branches:
                for op in block.ops:
                    op.drop_all_references()
            return None
        regions = []
        for block, b, ds in branches:
            sub = ADBuilder(b)
            vals = [ds[k] if ds[k] is not None else sub.zeros_like(like[k]) for k in keep]
            b.insert(YieldOp.build(vals, location=ad.location))
            regions.append(Region(blocks=[block]))
        new = IfOp.build(self.pred, result_types=[like[k].type for k in keep], regions=regions,
                         location=ad.location)
        ad.builder.insert(new)
        return new


def _is_float_tensor(v: Value) -> bool:
    return isinstance(v.type, RankedTensorType) and is_float(v.type.element)


def _recompute(region: Region) -> tuple[Block, list[Operation], list[Value]]:
    """A copy of `region`'s block without its terminator, for a derivative region to run the
    branch again (its values are not visible outside the forward if): the new block, its ops
    in order, and the values the terminator yields, in terms of the copy."""
    src = region.blocks[0]
    block, ops, mapping = Block(), [], {}
    yields: list[Value] = []
    for op in src.ops:
        if has_trait(op, Terminator):
            yields = [mapping.get(v, v) for v in op.operands]
            break
        ops.append(block.append(op.clone(mapping)))
    return block, ops, yields


def _builder_at_end(block: Block, ad: ADBuilder) -> Builder:
    b = Builder.at_end(block)
    b.location = ad.location
    return b


@graph.op
class YieldOp(YieldLike, Op):
    """Ends a `graph.if` region, handing its values to the if's results. Left out of the
    custom form when it has no operands. Dead values pass through (the if's results are
    then dead) rather than failing, as a merge of dead inputs would. It has no derivative
    rule of its own: the if's rules differentiate its regions as a whole.

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
