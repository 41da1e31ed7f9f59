"""The `loop` dialect: structured control flow over scalars (MLIR's `scf`, renamed).

`loop.for` counts an induction variable from a lower to an upper bound and threads
loop-carried values (`iter_args`) through its body; `loop.if` picks one of two regions;
`loop.yield` ends both, handing values to the parent op. Regions have one block and no
branches, so passes reason about loops structurally instead of rebuilding them from a CFG.
Later layers add `loop.parallel` and memory ops here: they reuse `LoopLike` and end their
bodies with `loop.yield` (extend `_YIELD_PARENTS`).

Effects. `loop.for` and `loop.if` carry `Pure`, meaning they add no effect of their own:
`irkit.rewrite.is_pure` then looks into their bodies (MLIR's `RecursiveMemoryEffects`), so
a loop whose results are unused and whose body is pure is dead, and one whose body stores to
memory is not. That is sound because every `loop.for` terminates: a non-positive step is
undefined behaviour (rejected by the verifier when constant, an interpreter error otherwise).

The loop-like interface (MLIR's `LoopLikeOpInterface`) is duck-typed so that passes need
not know this dialect: an op with a `loop_regions()` method is a loop, and LICM moves code out
of it through `is_defined_outside(value)` and `move_out_of_loop(op)`; `is_speculatable()` says
whether the op may run where it did not before (see `passes/loop_invariant_code_motion.py`).
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.ir import Block, BlockArgument, Operation, OpResult, Region, Value
from irkit.opdef import (
    AnyType, Bool, Dialect, HasParent, Op, Operand, Pure, RegionDef, ReturnLike,
    SignlessIntegerOrIndex, SingleBlock, Terminator, VarOperand, VarResult,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.structured import (
    IfLike, YieldLike, ensure_terminator, if_patterns, inline_region_before,
)
from irkit.types import I1, INDEX, IndexType, IntegerType, Type

loop = Dialect("loop", "Structured loops and conditionals: loop.for, loop.if, loop.yield.")

#: ops whose regions end with `loop.yield` (loop.parallel joins later)
_YIELD_PARENTS = ("loop.for", "loop.if")


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
    """Ends a `loop.for` or `loop.if` region, handing values to the parent: the next
    iteration's carried values, or the results. Left out of the custom form when it has no
    operands.

        %r = loop.if %cond -> (i32) {
          loop.yield %a : i32
        } else {
          loop.yield %b : i32
        }
    """

    name = "loop.yield"
    values_ = VarOperand(AnyType)
    traits = (Pure(), Terminator(), ReturnLike(), HasParent(*_YIELD_PARENTS))
