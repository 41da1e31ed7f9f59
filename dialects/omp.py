"""The `omp` dialect: one team of threads for several parallel loops (MLIR's OpenMP names).

`omp.parallel` runs its region on a team of threads, as `#pragma omp parallel` does: every
thread runs the region's code, and each `loop.parallel` in it (outside any other
`loop.parallel`) is a worksharing loop whose iterations the team splits, with a barrier at
its end (`#pragma omp for` and its implicit barrier). So consecutive parallel loops cost one
fork and join of the team and a barrier between them, not a fork and join each. MLIR spells
the worksharing loop `omp.wsloop`; here a `loop.parallel` is one already, since its
iterations are unordered and any split of them is valid.

Every thread runs the code between the loops, so that code must give every thread the same
values and touch no memory: the verifier accepts only `loop.parallel`s, ops without memory
effects, and `loop.for` / `loop.if`s made of the same (a BLIS nest's loop over K blocks with
its packing and compute loops inside: every thread counts the K blocks, the team splits each
block's loops). Semantically the op is its region run once: the interpreter does that, and a
backend without threads may too. `loop-merge-parallel-regions` builds these regions; the
LLVM backend runs each on one `GOMP_parallel` (`backends/llvm_parallel.py`).
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.opdef import Dialect, HasParent, Op, Pure, RegionDef, SingleBlock, Terminator
from irkit.rewrite import is_pure

omp = Dialect("omp", "OpenMP parallel regions: omp.parallel, omp.terminator.")

#: region ops whose bodies an `omp.parallel`'s threads may all run (their conditions and
#: bounds are values every thread computes alike)
_SHARED_CONTROL = ("loop.for", "loop.if")


def team_code_error(op: Operation) -> Operation | None:
    """The first op under `op` (a region op) that the threads of a team may not all run,
    outside the bodies of its `loop.parallel`s (which the team splits); None if there is
    none."""
    for region in op.regions:
        for nested in region.ops:
            if nested.name == "loop.parallel" or nested.name == "omp.terminator":
                continue
            if nested.name in _SHARED_CONTROL:
                bad = team_code_error(nested)
                if bad is not None:
                    return bad
            elif not is_pure(nested) and not nested.has_trait(Terminator):
                return nested
    return None


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
    traits = (Pure(), SingleBlock())      # effects: those of the region (as `loop.for`'s)

    def verify_(self):
        if not self.body.blocks:
            raise self.error("expects a body region with one block")
        for outer in self.ancestors():
            if outer.name in ("omp.parallel", "loop.parallel"):
                raise self.error(f"cannot be nested in '{outer.name}' (one level of threads)")
        bad = team_code_error(self)
        if bad is not None:
            raise bad.error("cannot run on every thread of an 'omp.parallel' team: it has "
                            "memory effects outside a 'loop.parallel' (move it out of the "
                            "region)")

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
