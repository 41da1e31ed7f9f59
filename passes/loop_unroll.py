"""loop-unroll: unroll innermost `loop.for`s, fully when the trip count is small and known,
else by a factor with a remainder loop.

Unrolling by `u` runs `u` consecutive iterations in one iteration of a loop that steps
`u * step`; the loop-carried values are threaded from each copy of the body to the next, so
every value is computed exactly as before, in the same order (no reassociation: the results
are bit-identical). What it buys is fewer loop-control instructions and a longer
straight-line body for LLVM to schedule, and, after `loop-vectorize`, several vector
operations in flight.

    %r = loop.for %i = %lb to %ub step %c1        %m = ub - (ub - lb) rem 4
           iter_args(%a = %init) {                %r0 = loop.for %i = %lb to %m step %c4
      %n = f(%a, %i)                        ->           iter_args(%a = %init) {
      loop.yield %n                                 %n0 = f(%a, %i)
    }                                               %n1 = f(%n0, %i + 1) ... %n3
                                                    loop.yield %n3
                                                  }
                                                  %r = loop.for %i = %m to %ub step %c1
                                                         iter_args(%a = %r0) { ... }

Remainder. With constant bounds the split point and the remainder's trip count are known:
a remainder of zero iterations is no loop, and a short one is unrolled fully. With unknown
bounds the split point `ub - (ub - lb) rem (u * step)` is computed at run time (it is also
right for an empty loop: then both loops are empty) and the original loop, its lower bound
moved to the split point, runs what is left.

Full unroll: a loop whose constant trip count is at most `full-threshold` becomes that many
copies of its body, with the induction variable a constant in each. The shared helpers
`clone_iteration` and `split_for_unroll` serve `loop-unroll-and-jam` too.

In the pipeline. The `loop` row runs `loop-unroll{factor=1 full-threshold=8 full-ops=128
nests=true vectors=false}` after `loop-vectorize`: what it finds there are the short scalar
loops vectorization left: a pooling window's rows and columns where they stay scalar, the
odd last element of a row, a tile's edge. LLVM's unroller is off (llvm_cpu's `_optimize`:
irkit's loops come unrolled and vectorized from the IR), so such a loop stayed a loop.
Straight-line, the window's index arithmetic folds to constants and its
first-element test (an argmax's "is this the window's first point") disappears, and the
loop control goes. Loops that make vectors are left alone (`vectors=false`): they are the
BLIS nest's edge and epilogue loops, rolled on purpose for code size. `full-ops` bounds the
code a loop becomes, `nests` takes a window of rows and columns whole. examples/cnn.irk's
training step at B=64, 1 thread, the two pipelines' models called alternately in one
process, median of 300: 1.212 ms without, 1.049 with (the max-pool gradient's argmax window,
its average-pool's); logistic regression B=100 0.0717 / 0.0685 ms; the MLP 784-256-10 step
B=128 1.104 / 1.102 ms (its loops are vectors); compile time within the noise (the MLP's ops
+7%).
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.types import VectorType
from irkit.dialects.loop import ForOp, ParallelOp, YieldOp
from irkit.passes.loop_transforms import BoundArith, Constants, int_of, trip_count


def clone_iteration(b: Builder, loop: ForOp, iv: Value, carried: list[Value],
                    mapping: dict | None = None) -> list[Value]:
    """Clone one iteration of `loop`'s body at `b`, its induction variable `iv` and carried
    values `carried`; returns what it yields. `mapping` (old -> new) is extended."""
    mapping = {} if mapping is None else mapping
    block = loop.body.blocks[0]
    mapping[block.args[0]] = iv
    mapping.update(zip(block.args[1:], carried))
    for op in block.ops:
        if not has_trait(op, Terminator):
            b.clone(op, mapping)
    return [mapping.get(v, v) for v in block.terminator.operands]


def full_unroll(loop: ForOp, trips: int, constants: Constants) -> None:
    """Replace `loop` (constant bounds, `trips` iterations) by copies of its body."""
    b = Builder.before(loop)
    a = BoundArith(b, loop.lower_bound.type, constants)
    lb, step = int_of(loop.lower_bound), int_of(loop.step)
    carried = list(loop.init_args)
    for k in range(trips):
        carried = clone_iteration(b, loop, a.value(lb + k * step), carried)
    loop.replace_all_uses_with(carried)
    loop.erase()


def split_for_unroll(loop: ForOp, factor: int, constants: Constants) \
        -> tuple[Value, int | None] | None:
    """Where the unrolled main loop stops (inserted before `loop`) and how many iterations
    are left after it (None when unknown); None when not even one main iteration fits."""
    b = Builder.before(loop)
    a = BoundArith(b, loop.lower_bound.type, constants)
    n = trip_count(loop.lower_bound, loop.upper_bound, loop.step)
    if n is None:
        return a.split_point(loop.lower_bound, loop.upper_bound,
                             a.mul(loop.step, factor)), None
    if n < factor:
        return None
    main = n - n % factor
    return a.value(int_of(loop.lower_bound) + main * int_of(loop.step)), n % factor


def finish_remainder(loop: ForOp, split: Value, left: int | None, main: ForOp,
                     full_threshold: int, constants: Constants) -> None:
    """Make `loop` run what the unrolled `main` loop left: from `split`, carrying `main`'s
    results; no loop when nothing is left, copies of the body when few are."""
    if loop.init_args:
        loop.set_operands([*loop.operands[:3], *main.results])
    loop.set_operand(0, split)
    if left == 0:
        loop.replace_all_uses_with(list(loop.init_args))
        loop.erase()
    elif left is not None and left <= full_threshold:
        full_unroll(loop, left, constants)


def body_ops(loop: ForOp) -> int:
    """The ops of `loop`'s body, nested ones included, its terminators not."""
    return sum(1 for o in loop.walk() if o is not loop and not has_trait(o, Terminator))


def has_vectors(loop: ForOp) -> bool:
    """Whether an op of `loop`'s body makes a vector."""
    return any(isinstance(r.type, VectorType) for o in loop.walk() for r in o.results)


def unroll(loop: ForOp, factor: int, full_threshold: int, constants: Constants,
           full_ops: int = 0, vectors: bool = True) -> str | None:
    """Unroll `loop` fully ("full": at most `full_threshold` iterations, known, making at
    most `full_ops` ops unless that is 0) or by `factor` ("partial"); None when it stays."""
    n = trip_count(loop.lower_bound, loop.upper_bound, loop.step)
    if n is not None and n <= full_threshold and \
            (not full_ops or n * body_ops(loop) <= full_ops) and \
            (vectors or not has_vectors(loop)):
        full_unroll(loop, n, constants)
        return "full"
    if factor < 2:
        return None
    split = split_for_unroll(loop, factor, constants)
    if split is None:
        return None
    split, left = split
    b = Builder.before(loop)
    a = BoundArith(b, loop.lower_bound.type, constants)
    types = [v.type for v in loop.init_args]
    main = ForOp.build(loop.lower_bound, split, a.mul(loop.step, factor), list(loop.init_args),
                       result_types=types, regions=1, location=loop.location)
    block = main.regions[0].add_block(Block([loop.lower_bound.type, *types]))
    b.insert(main)
    inner = Builder.at_end(block)
    ia = BoundArith(inner, loop.lower_bound.type, constants)
    carried = list(block.args[1:])
    for k in range(factor):
        iv = ia.add(block.args[0], ia.mul(loop.step, k)) if k else block.args[0]
        carried = clone_iteration(inner, loop, iv, carried)
    inner.create(YieldOp, carried, result_types=[], location=loop.location)
    finish_remainder(loop, split, left, main, full_threshold, constants)
    return "partial"


def is_innermost(loop: Operation) -> bool:
    return not any(isinstance(o, (ForOp, ParallelOp)) for o in loop.walk() if o is not loop)


@register_pass
class LoopUnroll(Pass):
    """Unroll innermost loop.for loops (see the module docstring).

    Algorithm:
      1. Collect the innermost `loop.for`s (no `loop.for` / `loop.parallel` inside) of the
         op the pass runs on, before changing anything (so a loop that becomes innermost
         by a full unroll is not unrolled in the same run, unless `nests`).
      2. A loop with a constant trip count of at most `full-threshold` whose copies would
         be at most `full-ops` ops (trip count x the body's ops; 0: any number) is
         replaced by that many copies of its body (the carried values threaded, the
         induction variable a constant in each). With `nests`, the `loop.for` around it,
         innermost now, is taken in turn by the same rules: a nest of short loops (a
         pooling window's rows and columns) becomes straight-line code from the inside out.
         Without `vectors`, a loop whose body makes a vector is not unrolled fully.
      3. Otherwise, with `factor >= 2`: compute the split point (a constant, or
         `ub - (ub - lb) rem (factor * step)` at run time); build the main loop from the
         lower bound to it, stepping `factor * step`, whose body is `factor` copies of the
         original body at `iv + k * step`, the carried values threaded through them.
      4. The original loop becomes the remainder: from the split point, carrying the main
         loop's results. It is erased when it is known to be empty, and fully unrolled when
         its known trip count is at most `full-threshold`.
    """

    name = "loop-unroll"
    factor: int = 4
    full_threshold: int = 8
    full_ops: int = 0
    nests: bool = False
    vectors: bool = True

    def run(self, op: Operation) -> None:
        loops = [o for o in op.walk() if o is not op and isinstance(o, ForOp)
                 and is_innermost(o)]
        constants = Constants()
        self.unrolled = 0
        while loops:
            loop = loops.pop()
            parent = loop.parent_op
            done = unroll(loop, self.factor, self.full_threshold, constants, self.full_ops,
                          self.vectors)
            self.unrolled += done is not None
            if done == "full" and self.nests and isinstance(parent, ForOp) and \
                    parent is not op and is_innermost(parent):
                loops.append(parent)
