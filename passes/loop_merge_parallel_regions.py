"""loop-merge-parallel-regions: consecutive parallel loops of a function on one team of
threads (`omp.parallel`), a barrier between them instead of a fork and join each.

An outermost `loop.parallel` costs one `GOMP_parallel`: the team is woken, and joined at
the end (about 10 us on this 2-core machine once libgomp's threads sleep, more under load).
A training step runs a dozen such loops back to back (a BLIS matmul: a packing and a
compute loop per K block; elementwise kernels between matmuls). OpenMP's answer is one
`omp parallel` around them, the loops `omp for` inside (a barrier each): the team forks
once. `omp.parallel` (dialects/omp.py) is that region: every thread runs its code, each
`loop.parallel` in it is split over the team.

Every thread runs what lies between the loops, so only code that touches no memory may:
index arithmetic, views and dims, and `loop.for` / `loop.if` made of such code and parallel
loops (a BLIS nest's loop over K blocks). Such ops between two loops are moved before the
first (they read nothing the loops write: they touch no memory, and the loops have no
results), as are the `memory.alloc`s; the `memory.dealloc`s move after the last. Any other
op (a sequential loop nest that stores, a scalar load or store, a call) ends the run.

Algorithm:

1. Per function, scan its top-level ops: a run starts at a *member* (a `loop.parallel`, or
   a result-less `loop.for` / `loop.if` whose ops are members or pure and which holds a
   `loop.parallel`) and goes on through members, pure ops without regions, allocations and
   deallocations, up to its last member.
2. A run with fewer than two parallel loops in its members (a `loop.for` member counts as
   two: it may run its loops many times) is left alone: one loop forks once anyway.
3. Otherwise its pure ops and allocations move before the first member, in their order,
   its deallocations after the last, and the members, now adjacent, into one new
   `omp.parallel` there.

The team's size is still the backend's choice at run time (`backends/llvm_parallel.py`:
the work of the whole region against the cost of a fork).
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, Operation
from irkit.opdef import Terminator
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_pure
from irkit.dialects.loop import ForOp, IfOp, ParallelOp
from irkit.dialects.memory import AllocOp, DeallocOp
from irkit.dialects.omp import ParallelOp as TeamOp, TerminatorOp


def _parallel_loops(op: Operation) -> int:
    """How many `loop.parallel`s lie in `op`'s regions, outside each other (`op` itself
    included)."""
    if isinstance(op, ParallelOp):
        return 1
    return sum(_parallel_loops(inner) for region in op.regions for inner in region.ops)


def _member(op: Operation) -> bool:
    """Whether every thread of a team may run `op`, a parallel loop split over the team or
    control flow around such loops (step 1)."""
    if isinstance(op, ParallelOp):
        return True
    if not isinstance(op, (ForOp, IfOp)) or op.results or not _parallel_loops(op):
        return False
    return all(_member(inner) or _shared(inner) or inner.has_trait(Terminator)
               for region in op.regions for inner in region.ops)


def _shared(op: Operation) -> bool:
    """Pure code without regions: every thread may compute it, the same values."""
    return not op.regions and is_pure(op)


def _weight(members: list[Operation]) -> int:
    """Forks the members would cost on their own (step 2: a `loop.for` at least two)."""
    return sum(2 if isinstance(m, ForOp) else _parallel_loops(m) for m in members)


@register_pass
class LoopMergeParallelRegions(Pass):
    """Wrap runs of consecutive parallel loops in `omp.parallel` (module docstring)."""

    name = "loop-merge-parallel-regions"

    def run(self, root: Operation) -> None:
        for fn in [o for o in root.walk() if o.name == "func.func"]:
            for block in fn.regions[0].blocks:
                for run in self._runs(block):
                    self._merge(run)

    def _runs(self, block: Block) -> list[list[Operation]]:
        """The runs of `block` (step 1) worth a team region (step 2)."""
        runs, current = [], []
        for op in list(block.ops) + [None]:
            if op is not None and _member(op):
                current.append(op)
            elif op is not None and current and (_shared(op) or
                                                 isinstance(op, (AllocOp, DeallocOp))):
                current.append(op)
            else:
                while current and not _member(current[-1]):
                    current.pop()
                if _weight([o for o in current if _member(o)]) >= 2:
                    runs.append(current)
                current = []
        return runs

    def _merge(self, run: list[Operation]) -> None:
        """Step 3."""
        first, last = run[0], run[-1]
        after = last
        for op in run:
            if isinstance(op, DeallocOp):
                op.move_after(after)
                after = op
            elif not _member(op):
                op.move_before(first)
        team = TeamOp.build(result_types=[], regions=1, location=first.location)
        block = Block([])
        team.regions[0].add_block(block)
        Builder.before(first).insert(team)
        for op in run:
            if _member(op):
                block.append(op.detach())
        Builder.at_end(block).create(TerminatorOp, result_types=[], location=last.location)
