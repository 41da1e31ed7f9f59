"""The `omp` dialect: one team of threads for several parallel loops (MLIR's OpenMP names).

`omp.parallel` runs its region on a team of threads, as `#pragma omp parallel` does: every
thread runs the region's code, and each `loop.parallel` in it (outside any other
`loop.parallel`) is a worksharing loop whose iterations the team splits, with a barrier at
its end (`#pragma omp for` and its implicit barrier). So consecutive parallel loops cost one
fork and join of the team and a barrier between them, not a fork and join each. MLIR spells
the worksharing loop `omp.wsloop`; here a `loop.parallel` is one already, since its
iterations are unordered and any split of them is valid.

Every thread runs the code between the loops, so that code must give every thread the same
values, and where it touches memory, its own or memory nobody writes meanwhile. The verifier
accepts, outside the `loop.parallel`s:
- ops without memory effects, and `loop.for` / `loop.if`s made of what it accepts (a BLIS
  nest's loop over K blocks with its packing and compute loops inside: every thread counts
  the K blocks, the team splits each block's loops);
- private buffers: a buffer allocated in the region is each thread's own (a `memory.alloc`
  made by each thread, a `memory.alloca` a slot in each thread's stack frame), which the
  team code may write, read and free, as OpenMP's `private` clause gives each thread a
  copy. The worksharing loops may read a private buffer, not write it (each thread would
  fill only its own chunk of its copy). A dot-product nest's transposed weights are one
  (passes/blis/dot.py): each thread makes its own copy, where one shared copy written by
  one thread and read by all moved it between the cores' caches on every call;
- reads of any memory before the first worksharing loop (nothing in the region has written
  it yet; after one, a thread could read what another is still writing: the barrier comes
  before the next loop, not after the last).
Semantically the op is its region run once: the interpreter does that, and a backend without
threads may too (each private buffer is then made once). `loop-merge-parallel-regions` builds
these regions, and the dot-product nest one of its own; the LLVM backend runs each on one
`GOMP_parallel` (`backends/llvm_parallel.py`).
"""

from __future__ import annotations

from irkit.ir import Operation, Value
from irkit.opdef import (
    ALLOCATE, READ, Dialect, HasParent, Op, Pure, RegionDef, SingleBlock, Terminator,
)
from irkit.rewrite import PatternRewriter, RewritePattern, is_pure
from irkit.structured import inline_region_before
from irkit.types import MemRefType

omp = Dialect("omp", "OpenMP parallel regions: omp.parallel, omp.terminator.")

#: region ops whose bodies an `omp.parallel`'s threads may all run (their conditions and
#: bounds are values every thread computes alike)
_SHARED_CONTROL = ("loop.for", "loop.if")


def holds_worksharing_loop(op: Operation) -> bool:
    """Whether `op` is a `loop.parallel` or holds one: in a team region, a worksharing loop
    or the `loop.for` / `loop.if` around some; every other op is team code."""
    return any(o.name == "loop.parallel" for o in op.walk())


def team_code_error(op: Operation) -> Operation | None:
    """The first op under `op` (an `omp.parallel`) that the threads of a team may not all run
    (module docstring), outside the bodies of its `loop.parallel`s, or a write in those
    bodies to a private buffer; None if there is none."""
    private: set[Value] = set()
    shared_written = [False]        # whether a worksharing loop has run (may have)

    def check(region_op: Operation) -> Operation | None:
        for region in region_op.regions:
            for nested in region.ops:
                if nested.name == "loop.parallel":
                    shared_written[0] = True
                    bad = _private_write(nested, private)
                    if bad is not None:
                        return bad
                elif nested.name in _SHARED_CONTROL:
                    if holds_worksharing_loop(nested):
                        shared_written[0] = True      # a loop's next trip comes after it
                    bad = check(nested)
                    if bad is not None:
                        return bad
                elif not _team_code(nested, private, shared_written[0]):
                    return nested
        return None
    return check(op)


def _team_code(op: Operation, private: set[Value], shared_written: bool) -> bool:
    """Whether every thread may run `op` (no regions) between the worksharing loops, adding
    the buffers it allocates to `private`."""
    if op.has_trait(Terminator):
        return True
    if is_pure(op):
        return True
    effects = getattr(op, "memory_effects", None)
    if effects is None:
        return False
    for kind, value in effects():
        if kind == ALLOCATE and value in op.results:
            private.add(value)
        elif _root(value) in private:
            continue
        elif kind != READ or shared_written:
            return False
    return True


def _private_write(loop: Operation, private: set[Value]) -> Operation | None:
    """The first op in `loop` (a worksharing loop) that writes or frees a private buffer."""
    for nested in loop.walk():
        effects = getattr(nested, "memory_effects", None)
        if effects is not None and any(kind != READ and _root(v) in private
                                       for kind, v in effects()):
            return nested
    return None


def _root(value: Value) -> Value:
    """The buffer `value` is a view of: through pure ops of a memref operand (a view, a
    subview, a cast), the buffer they start from."""
    while True:
        owner = value.defining_op()
        if owner is None or not is_pure(owner):
            return value
        source = next((v for v in owner.operands if isinstance(v.type, MemRefType)), None)
        if source is None:
            return value
        value = source


class InlineLoopless(RewritePattern):
    """A team region without a worksharing loop (its one loop folded away: a static
    single-trip `loop.parallel` is inlined) has nothing to split: it is its code, run once
    where it stands (as its semantics say), which the verifier would otherwise reject once
    that code writes shared memory."""

    root = "omp.parallel"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if len(op.regions[0].blocks) != 1 or holds_worksharing_loop(op):
            return False
        inline_region_before(rewriter, op.regions[0], op, [])
        rewriter.erase_op(op)
        return True


@omp.op
class ParallelOp(Op):
    """Runs its region on a team of threads; each `loop.parallel` in it is split over the
    team, a barrier after it. The code between the loops runs on every thread.

        func.func @two(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          omp.parallel {
            loop.parallel (%i) = (%c0) to (%n) step (%c1) {
              %x = memory.load %a[%i] : memref<?xf32>
              memory.store %x, %b[%i] : memref<?xf32>
            }
            loop.parallel (%i) = (%c0) to (%n) step (%c1) {
              %x = memory.load %b[%i] : memref<?xf32>
              memory.store %x, %a[%i] : memref<?xf32>
            }
            omp.terminator
          }
          return
        }
    """

    name = "omp.parallel"
    body = RegionDef(single_block=True)
    canonicalization_patterns = (InlineLoopless,)
    traits = (Pure(), SingleBlock())      # effects: those of the region (as `loop.for`'s)

    def verify_(self):
        if not self.body.blocks:
            raise self.error("expects a body region with one block")
        for outer in self.ancestors():
            if outer.name in ("omp.parallel", "loop.parallel"):
                raise self.error(f"cannot be nested in '{outer.name}' (one level of threads)")
        bad = team_code_error(self)
        if bad is not None:
            if any(p.name == "loop.parallel" for p in bad.ancestors()):
                raise bad.error("writes a private buffer of its 'omp.parallel' team in a "
                                "worksharing 'loop.parallel' (each thread would fill only its "
                                "own chunk of its own copy)")
            raise bad.error("cannot run on every thread of an 'omp.parallel' team: it has "
                            "memory effects on shared memory outside a 'loop.parallel' "
                            "(move it out of the region, or make the buffer private: "
                            "allocated in the region)")

    @classmethod
    def parse(cls, p, num_results):
        region = p.parse_region()
        attrs = p.parse_optional_attr_dict()
        return cls.build(result_types=[], attributes=attrs, regions=[region])

    def print(self, p):
        p.write(" ")
        p.region(self.body, print_entry_args=False)
        p.attr_dict(self)

    def interpret(self, interp, values):
        interp.run_region(self.body, [], interp.env)
        return []


@omp.op
class TerminatorOp(Op):
    """Ends the region of an `omp.parallel`: the thread is done (the team joins).

        omp.terminator
    """

    name = "omp.terminator"
    traits = (Pure(), Terminator(), HasParent("omp.parallel"))

    @classmethod
    def parse(cls, p, num_results):
        return cls.build(result_types=[], attributes=p.parse_optional_attr_dict())

    def print(self, p):
        p.attr_dict(self)

    def interpret(self, interp, values):
        return []
