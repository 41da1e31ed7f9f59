"""The `loop` dialect: structured control flow over scalars (MLIR's `scf`, renamed).

`loop.for` counts an induction variable from a lower to an upper bound and threads
loop-carried values (`iter_args`) through its body; `loop.parallel` runs a body once per point
of a rectangular index space, in no particular order; `loop.if` picks one of two regions;
`loop.yield` ends all three, handing values to the parent op. Regions have one block and no
branches, so passes reason about loops structurally instead of rebuilding them from a CFG.

Effects. `loop.for`, `loop.parallel` and `loop.if` carry `Pure`: they add no effect of their own:
`irkit.rewrite.is_pure` then looks into their bodies (MLIR's `RecursiveMemoryEffects`), so
a loop whose results are unused and whose body is pure is dead, and one whose body stores to
memory is not. That is sound because every loop terminates: a non-positive step is undefined
behaviour (rejected by the verifier when constant, an interpreter error otherwise).

The loop-like interface (MLIR's `LoopLikeOpInterface`) is duck-typed so that passes need
not know this dialect: an op with a `loop_regions()` method is a loop, and LICM moves code out
of it through `is_defined_outside(value)` and `move_out_of_loop(op)`; `is_speculatable()` says
whether the op may run where it did not before (see `passes/loop_invariant_code_motion.py`).
"""

from __future__ import annotations

import itertools

from irkit.attributes import DenseArrayAttr, IntegerAttr
from irkit.ir import Block, BlockArgument, Operation, OpResult, Region, Value
from irkit.opdef import (
    AnyType, Bool, Dialect, HasParent, Index, Op, Operand, Pure, RegionDef, ReturnLike,
    SignlessIntegerOrIndex, SingleBlock, Terminator, VarOperand, VarResult,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.structured import (
    IfLike, YieldLike, ensure_terminator, if_patterns, inline_region_before,
)
from irkit.types import I1, I32, INDEX, IndexType, IntegerType, Type

loop = Dialect("loop", "Structured loops and conditionals: loop.for, loop.parallel, loop.if, "
               "loop.yield.")

#: ops whose regions end with `loop.yield`
_YIELD_PARENTS = ("loop.for", "loop.parallel", "loop.if")


# ---------------------------------------------------------------------------------------------
# Helpers shared by the ops
# ---------------------------------------------------------------------------------------------


def _signed(value: int, t: Type) -> int:
    """`value` read as a signed integer of type `t` (MLIR compares loop bounds signed)."""
    if isinstance(t, IntegerType):
        w = t.width
        value = int(value) & ((1 << w) - 1)
        return value - (1 << w) if value >> (w - 1) else value
    return int(value)


def _const_int(v: Value) -> int | None:
    """The signed value of the integer constant that defines `v`, or None."""
    a = constant_value(v)
    return _signed(a.value, v.type) if isinstance(a, IntegerAttr) else None


# ---------------------------------------------------------------------------------------------
# The loop-like interface
# ---------------------------------------------------------------------------------------------


class LoopLike:
    """Mixin for ops that run a region repeatedly (MLIR's `LoopLikeOpInterface`).

    Passes find loops by the `loop_regions` method rather than by class, so that the
    interface costs a pass no import of this dialect and other dialects can implement it.
    """

    __slots__ = ()

    def loop_regions(self) -> list[Region]:
        """The regions that run once per iteration."""
        return list(self.regions)

    def is_defined_outside(self, value: Value) -> bool:
        """Whether `value` is defined outside this loop (and so is the same every iteration)."""
        if isinstance(value, OpResult):
            owner = value.owner
        elif isinstance(value, BlockArgument):
            owner = value.owner.parent_op
        else:
            return False
        return owner is None or not self.is_ancestor_of(owner)

    def move_out_of_loop(self, op: Operation) -> None:
        """Move `op` (invariant and safe to speculate: the caller checks) just before the loop."""
        op.move_before(self)


# ---------------------------------------------------------------------------------------------
# loop.for
# ---------------------------------------------------------------------------------------------


class RemoveTrivialLoop(RewritePattern):
    """A loop with constant bounds that runs zero times is its inits; one that runs once is
    its body with the induction variable := lower bound (MLIR's SimplifyTrivialLoops)."""

    root = "loop.for"       # ForOp is defined below this class, so the annotation is a name

    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> bool:
        lb, ub = _const_int(op.lower_bound), _const_int(op.upper_bound)
        if lb is None or ub is None:
            return False
        if lb >= ub:
            rewriter.replace_op(op, op.init_args)
            return True
        step = _const_int(op.step)
        if step is None or step <= 0 or ub - lb > step:
            return False
        values = inline_region_before(rewriter, op.body, op, [op.lower_bound, *op.init_args])
        rewriter.replace_op(op, values)
        return True


@loop.op
class ForOp(LoopLike, Op):
    """A counted loop with loop-carried values; the results are the last carried values.

    The body runs for `%i = lb, lb + step, ...` while `%i < ub` (signed comparison); its
    block arguments are the induction variable and the carried values, and its `loop.yield`
    gives the carried values of the next iteration. A loop that runs zero times returns its
    inits. Bounds are `index` (the default in the custom form) or one signless integer type
    (written after a colon); the step must be positive.

        %sum = loop.for %i = %lb to %ub step %step iter_args(%acc = %init) -> (f32) {
          %next = arith.addf %acc, %x : f32
          loop.yield %next : f32
        }
    """

    name = "loop.for"
    lower_bound = Operand(SignlessIntegerOrIndex)
    upper_bound = Operand(SignlessIntegerOrIndex)
    step = Operand(SignlessIntegerOrIndex)
    init_args = VarOperand(AnyType, doc="initial values of the loop-carried values")
    outs = VarResult(AnyType, doc="the loop-carried values after the last iteration")
    body = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())
    canonicalization_patterns = (RemoveTrivialLoop,)

    @property
    def induction_var(self) -> BlockArgument:
        return self.body.blocks[0].args[0]

    @property
    def region_iter_args(self) -> list[BlockArgument]:
        return self.body.blocks[0].args[1:]

    def verify_(self):
        lb, ub, step = self.lower_bound, self.upper_bound, self.step
        if not (lb.type is ub.type is step.type):
            raise self.error("requires the same type for lower_bound, upper_bound and step")
        c = _const_int(step)
        if c is not None and c <= 0:
            raise self.error("constant step operand must be positive")
        inits = self.init_args
        if len(inits) != len(self.results):
            raise self.error("mismatch in number of loop-carried values and defined values")
        if len(self.body.blocks) != 1:
            raise self.error("expects a body region with one block")
        args = self.body.blocks[0].args
        if len(args) != 1 + len(inits):
            raise self.error(f"expects the body block to have {1 + len(inits)} arguments "
                             f"(the induction variable and one per iter_arg), but it has "
                             f"{len(args)}")
        if args[0].type is not lb.type:
            raise self.error("expected induction variable to be same type as bounds and step")
        for i, (init, arg, res) in enumerate(zip(inits, args[1:], self.results)):
            if init.type is not res.type:
                raise self.error(f"types mismatch between {i}th iter operand and defined value")
            if arg.type is not res.type:
                raise self.error(f"types mismatch between {i}th iter region arg and defined "
                                 "value")

    def fold(self, operands):
        # Zero trips: the results are the inits. (A loop without results that never runs is
        # erased by RemoveTrivialLoop, since a folder cannot erase an op.)
        lb, ub = operands[0], operands[1]
        if self.results and isinstance(lb, IntegerAttr) and isinstance(ub, IntegerAttr):
            t = self.lower_bound.type
            if _signed(lb.value, t) >= _signed(ub.value, t):
                return list(self.init_args)
        return None

    def is_speculatable(self) -> bool:
        """Running the loop where it did not run is safe only if it surely terminates
        (MLIR: scf.for with a constant non-zero step is recursively speculatable)."""
        c = _const_int(self.step)
        return c is not None and c > 0

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        iv_tk = p.i
        iv = p.parse_operand_ref()
        p.expect("=")
        lb = p.parse_operand_ref()
        p.expect("to")
        ub = p.parse_operand_ref()
        p.expect("step")
        step = p.parse_operand_ref()
        names, init_refs, types = [], [], []
        if p.accept("iter_args"):
            p.expect("(")
            if p.tok != ")":
                while True:
                    tk = p.i
                    names.append((p.parse_operand_ref().name, tk))
                    p.expect("=")
                    init_refs.append(p.parse_operand_ref())
                    if not p.accept(","):
                        break
            p.expect(")")
            p.expect("->", "before the types of the iter_args")
            tk = p.i
            types = p.parse_function_result_types()
            if len(types) != len(init_refs):
                raise p.error(f"expected {len(init_refs)} iter_args types, found {len(types)}",
                              tk)
        iv_type = p.parse_type() if p.accept(":") else INDEX
        bounds = [p.resolve(r, iv_type) for r in (lb, ub, step)]
        inits = [p.resolve(r, t) for r, t in zip(init_refs, types)]
        args = [(iv.name, iv_type, None, iv_tk)]
        args += [(name, t, None, tk) for (name, tk), t in zip(names, types)]
        region = p.parse_region(args)
        ensure_terminator(p, region, "loop.yield")
        attrs = p.parse_optional_attr_dict()
        return cls.build(*bounds, inits, result_types=types, attributes=attrs,
                         regions=[region])

    def print(self, p):
        block = self.body.blocks[0] if self.body.blocks else Block([self.lower_bound.type])
        p.write(f" {p.value(block.args[0])} = {p.value(self.lower_bound)} to "
                f"{p.value(self.upper_bound)} step {p.value(self.step)}")
        inits = self.init_args
        if inits:
            pairs = ", ".join(f"{p.value(a)} = {p.value(v)}"
                              for a, v in zip(block.args[1:], inits))
            p.write(f" iter_args({pairs}) -> ({', '.join(map(str, self.result_types))})")
        if not isinstance(self.lower_bound.type, IndexType):
            p.write(f" : {self.lower_bound.type}")
        p.write(" ")
        p.region(self.body, print_entry_args=False, print_block_terminators=False)
        p.attr_dict(self)

    # ----- semantics ----------------------------------------------------------------------

    def interpret(self, interp, values):
        from irkit.interpreter import InterpreterError, to_value
        env = interp.env            # the body reads values defined above the loop
        t = self.lower_bound.type
        lb, ub, step = (_signed(v, t) for v in values[:3])
        if step <= 0:
            raise InterpreterError(f"'loop.for' step must be positive, got {step}",
                                   self.location)
        carried = list(values[3:])
        body = self.body
        for i in range(lb, ub, step):
            carried = interp.run_region(body, [to_value(i, t), *carried], env)
        return carried


# ---------------------------------------------------------------------------------------------
# loop.parallel
# ---------------------------------------------------------------------------------------------


def _trip_count(lb: Value, ub: Value, step: Value) -> int | None:
    """0 or 1 when a dimension surely runs that many times, else None (unknown or more).

    Equal bounds run zero times even when unknown; with a dynamic step (positive, or the
    program is undefined), a width of one still means one trip."""
    if lb is ub:
        return 0
    lo, hi = _const_int(lb), _const_int(ub)
    if lo is None or hi is None:
        return None
    if lo >= hi:
        return 0
    s = _const_int(step)
    return 1 if hi - lo == 1 or (s is not None and hi - lo <= s) else None


class RemoveTrivialParallelDims(RewritePattern):
    """A parallel loop with a dimension that runs zero times runs nothing: it is erased. A
    dimension that runs once is dropped, its induction variable := its lower bound; when none
    is left, the body is inlined (MLIR's ParallelOpSingleOrZeroIterationDimsFolder)."""

    root = "loop.parallel"

    def match_and_rewrite(self, op: ParallelOp, rewriter: PatternRewriter) -> bool:
        lbs, ubs, steps = op.lower_bounds, op.upper_bounds, op.steps
        if not (len(lbs) == len(ubs) == len(steps)) or len(op.body.blocks) != 1:
            return False                                    # invalid IR: the verifier's call
        trips = [_trip_count(*dim) for dim in zip(lbs, ubs, steps)]
        if 0 in trips:
            rewriter.erase_op(op)
            return True
        single = [k for k, n in enumerate(trips) if n == 1]
        if not single:
            return False
        if len(single) == len(trips):
            inline_region_before(rewriter, op.body, op, lbs)
            rewriter.erase_op(op)
            return True
        block = op.body.blocks[0]
        keep = [k for k in range(len(trips)) if k not in single]
        with rewriter.modify_op_in_place(op):
            for k in single:
                rewriter.replace_all_uses_with(block.args[k], lbs[k])
            for k in reversed(single):
                block.erase_argument(k)
            op.set_operands([group[k] for group in (lbs, ubs, steps) for k in keep])
            op.properties["operandSegmentSizes"] = DenseArrayAttr(I32, [len(keep)] * 3)
        return True


def _parse_paren_operands(p, count: int, what: str) -> list:
    """`(%a, %b)` with exactly `count` index operands (one per induction variable)."""
    tk = p.i
    p.expect("(")
    refs = p.parse_operand_refs() if p.tok != ")" else []
    p.expect(")")
    if len(refs) != count:
        raise p.error(f"expected {count} {what} (one per induction variable), found "
                      f"{len(refs)}", tk)
    return [p.resolve(r, INDEX) for r in refs]


@loop.op
class ParallelOp(LoopLike, Op):
    """Runs its body once for every point of a rectangular index space, the iterations
    independent of each other (MLIR's `scf.parallel`, without reductions yet).

    Dimension `k` takes `%ivk = lbk, lbk + stepk, ...` while `%ivk < ubk` (signed); the body
    runs for every combination, and has one `index` block argument per dimension. Its
    `loop.yield` has no operands and is left out of the custom form.

        loop.parallel (%i, %j) = (%lb, %lb) to (%ub, %ub) step (%step, %step) {
          "test.use"(%i, %j) : (index, index) -> ()
        }

    Iterations are unordered: a backend may run them on threads, interleaved, or in any
    sequence. A program whose outcome depends on the order — two iterations store to the same
    location, or one reads what another stores — is undefined. The interpreter runs them in
    row-major order (the first dimension outermost), which is one valid order among many, so
    a program it runs must not rely on that order either.
    """

    name = "loop.parallel"
    lower_bounds = VarOperand(Index)
    upper_bounds = VarOperand(Index)
    steps = VarOperand(Index, doc="positive")
    body = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())
    canonicalization_patterns = (RemoveTrivialParallelDims,)

    @property
    def induction_vars(self) -> list[BlockArgument]:
        return self.body.blocks[0].args

    def verify_(self):
        lbs, ubs, steps = self.lower_bounds, self.upper_bounds, self.steps
        if not (len(lbs) == len(ubs) == len(steps)):
            raise self.error(f"expects the same number of lower bounds, upper bounds and "
                             f"steps, but got {len(lbs)}, {len(ubs)} and {len(steps)}")
        if not lbs:
            raise self.error("needs at least one tuple element for lower_bounds, "
                             "upper_bounds and steps")
        for s in steps:
            c = _const_int(s)
            if c is not None and c <= 0:
                raise self.error("constant step operand must be positive")
        if len(self.body.blocks) != 1:
            raise self.error("expects a body region with one block")
        args = self.body.blocks[0].args
        if len(args) != len(lbs):
            raise self.error(f"expects the same number of induction variables: {len(args)} "
                             f"as bound and step values: {len(lbs)}")
        if any(not isinstance(a.type, IndexType) for a in args):
            raise self.error("expects arguments for the induction variable to be of index "
                             "type")

    def is_speculatable(self) -> bool:
        """Like `loop.for`: safe to run where it did not only if it surely terminates."""
        steps = [_const_int(s) for s in self.steps]
        return all(c is not None and c > 0 for c in steps)

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        p.expect("(")
        ivs = []
        if p.tok != ")":
            while True:
                tk = p.i
                ivs.append((p.parse_operand_ref().name, INDEX, None, tk))
                if not p.accept(","):
                    break
        p.expect(")")
        p.expect("=")
        lbs = _parse_paren_operands(p, len(ivs), "lower bounds")
        p.expect("to")
        ubs = _parse_paren_operands(p, len(ivs), "upper bounds")
        p.expect("step")
        steps = _parse_paren_operands(p, len(ivs), "steps")
        region = p.parse_region(ivs)
        ensure_terminator(p, region, "loop.yield")
        attrs = p.parse_optional_attr_dict()
        return cls.build(lbs, ubs, steps, result_types=[], attributes=attrs, regions=[region])

    def print(self, p):
        n = len(self.lower_bounds)
        block = self.body.blocks[0] if self.body.blocks else Block([INDEX] * n)

        def group(values) -> str:
            return f"({', '.join(p.value(v) for v in values)})"

        p.write(f" {group(block.args)} = {group(self.lower_bounds)} to "
                f"{group(self.upper_bounds)} step {group(self.steps)} ")
        p.region(self.body, print_entry_args=False, print_block_terminators=False)
        p.attr_dict(self, elided=("operandSegmentSizes",))

    # ----- semantics ----------------------------------------------------------------------

    def interpret(self, interp, values):
        from irkit.interpreter import InterpreterError
        env = interp.env            # the body reads values defined above the loop
        n = len(self.lower_bounds)
        lbs, ubs, steps = values[:n], values[n:2 * n], values[2 * n:]
        for s in steps:
            if s <= 0:
                raise InterpreterError(f"'loop.parallel' step must be positive, got {s}",
                                       self.location)
        body = self.body
        # Row-major: one valid order of unordered iterations (see the class docstring).
        for ivs in itertools.product(*(range(lb, ub, s) for lb, ub, s in zip(lbs, ubs, steps))):
            interp.run_region(body, list(ivs), env)
        return []


# ---------------------------------------------------------------------------------------------
# loop.if
# ---------------------------------------------------------------------------------------------


@loop.op
class IfOp(IfLike, Op):
    """Runs the then region if the condition holds, else the else region; the results are
    what the region that ran yields. The else region may be left out when there are no
    results.

        %r = loop.if %cond -> (f32) {
          loop.yield %a : f32
        } else {
          loop.yield %b : f32
        }
    """

    name = "loop.if"
    condition = Operand(Bool)
    outs = VarResult(AnyType)
    then_region = RegionDef(single_block=True)
    else_region = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())
    canonicalization_patterns = if_patterns("loop.if")
    condition_type = I1
    yield_name = "loop.yield"

    def constant_condition(self) -> bool | None:
        c = constant_value(self.condition)
        return bool(c.value) if isinstance(c, IntegerAttr) else None


# ---------------------------------------------------------------------------------------------
# loop.yield
# ---------------------------------------------------------------------------------------------


@loop.op
class YieldOp(YieldLike, Op):
    """Ends a `loop.for`, `loop.parallel` or `loop.if` region, handing values to the parent:
    the next iteration's carried values, or the results (none for `loop.parallel`). Left out
    of the custom form when it has no operands.

        %r = loop.if %cond -> (i32) {
          loop.yield %a : i32
        } else {
          loop.yield %b : i32
        }
    """

    name = "loop.yield"
    values_ = VarOperand(AnyType)
    traits = (Pure(), Terminator(), ReturnLike(), HasParent(*_YIELD_PARENTS))
