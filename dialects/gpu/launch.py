"""`gpu.launch`: a kernel written inline, run over a grid of blocks of threads, and
`gpu.terminator`, which ends its body.

The body is the code of one thread. Its entry block has twelve `index` arguments -- the
block ids, thread ids, grid sizes and block sizes, x y z each -- then the workgroup and
private attributions (see `base`). It reads values from above like any region: outlining
(`gpu-kernel-outlining`) turns those into kernel arguments.

    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      gpu.terminator
    }

Generic form as MLIR 22 prints it: eleven operand groups (async dependencies, grid x y z,
block x y z, cluster x y z, dynamic shared memory size; irkit uses no async tokens and no
clusters, so those are empty), the `workgroup_attributions` count as an attribute.
"""

from __future__ import annotations

from irkit.ir import Block, Value
from irkit.opdef import (
    AnyType, BareOp, Constraint, HasParent, Index, Op, Operand, OptOperand, RegionDef, Terminator,
    VarOperand,
)
from irkit.types import I32, INDEX, IndexType
from irkit.dialects.gpu.base import (
    attributions, gpu, parse_attributions, print_attributions, set_workgroup_count,
    verify_attributions,
)
from irkit.dialects.gpu.grid import run_grid

I32Type = Constraint(lambda t: t is I32, "32-bit signless integer")

#: a launch body's own arguments: block ids, thread ids, grid sizes, block sizes
NUM_IDS = 12


def verify_no_async(op: Op) -> None:
    if op.async_dependencies:
        raise op.error("async dependencies are not supported (irkit has no async tokens)")


class GridLaunch(Op):
    """What `gpu.launch` and `gpu.launch_func` share: their first eleven operand groups
    (async dependencies, grid sizes, block sizes, cluster sizes, dynamic shared memory
    size; no async tokens, no clusters in irkit) and reading them."""

    async_dependencies = VarOperand(AnyType)
    grid_size_x = Operand(Index)
    grid_size_y = Operand(Index)
    grid_size_z = Operand(Index)
    block_size_x = Operand(Index)
    block_size_y = Operand(Index)
    block_size_z = Operand(Index)
    cluster_size_x = OptOperand(Index)
    cluster_size_y = OptOperand(Index)
    cluster_size_z = OptOperand(Index)
    dynamic_shared_memory_size = OptOperand(I32Type, doc="bytes of gpu.dynamic_shared_memory")

    @property
    def grid_sizes(self) -> list[Value]:
        return [self.grid_size_x, self.grid_size_y, self.grid_size_z]

    @property
    def block_sizes(self) -> list[Value]:
        return [self.block_size_x, self.block_size_y, self.block_size_z]

    def verify_grid(self) -> None:
        verify_no_async(self)
        if any(v is not None for v in (self.cluster_size_x, self.cluster_size_y,
                                       self.cluster_size_z)):
            raise self.error("clusters are not supported")

    def launch_sizes(self, values) -> tuple[tuple, tuple, int]:
        """(grid, block, dynamic shared memory bytes) from the interpreter's operand values."""
        n = len(self.async_dependencies)
        size = int(values[n + 6]) if self.dynamic_shared_memory_size is not None else 0
        return tuple(values[n:n + 3]), tuple(values[n + 3:n + 6]), size

    def print_dynamic_shared_memory(self, p) -> None:
        if self.dynamic_shared_memory_size is not None:
            p.write(f" dynamic_shared_memory_size {p.value(self.dynamic_shared_memory_size)}")


@gpu.op
class LaunchOp(GridLaunch):
    """Runs its body once per thread of a grid of `grid_size` blocks of `block_size`
    threads (module docstring).

        gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
                   threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
          gpu.terminator
        }
    """

    name = "gpu.launch"
    body = RegionDef(single_block=True)

    @classmethod
    def create(cls, grid: list[Value], block: list[Value], location=None,
               dynamic_shared_memory_size: Value | None = None) -> "LaunchOp":
        """A launch whose body holds only its `gpu.terminator` (insert before it)."""
        op = cls.build([], *grid, *block, None, None, None, dynamic_shared_memory_size,
                       result_types=[], location=location)
        set_workgroup_count(op, 0)
        body = op.body.add_block(Block([INDEX] * NUM_IDS))
        body.append(TerminatorOp.build(result_types=[], location=location))
        return op

    @property
    def ids(self) -> list:
        """The body's twelve id arguments: block ids, thread ids, grid sizes, block sizes."""
        return self.body.blocks[0].args[:NUM_IDS]

    def verify_(self):
        self.verify_grid()
        if not self.body.blocks:
            raise self.error("expects a body with one block")
        args = self.body.blocks[0].args
        if len(args) < NUM_IDS or any(not isinstance(a.type, IndexType)
                                      for a in args[:NUM_IDS]):
            raise self.error(f"expects the body to start with {NUM_IDS} index arguments (block "
                             "ids, thread ids, grid sizes, block sizes)")
        verify_attributions(self, NUM_IDS)

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        p.expect("blocks")
        block_ids, grid_args, grid = _parse_ids_and_sizes(p)
        p.expect("threads")
        thread_ids, block_args, block = _parse_ids_and_sizes(p)
        dynamic = None
        if p.accept("dynamic_shared_memory_size"):
            dynamic = p.resolve(p.parse_operand_ref(), I32)
        workgroup = parse_attributions(p, "workgroup")
        private = parse_attributions(p, "private")
        region = p.parse_region(block_ids + thread_ids + grid_args + block_args + workgroup
                                + private)
        attrs = p.parse_optional_attr_dict()
        op = cls.build([], *grid, *block, None, None, None, dynamic, result_types=[],
                       attributes=attrs, regions=[region])
        set_workgroup_count(op, len(workgroup))
        return op

    def print(self, p):
        ids = self.ids
        p.write(" blocks" + _ids_and_sizes(p, ids[0:3], ids[6:9], self.grid_sizes))
        p.write(" threads" + _ids_and_sizes(p, ids[3:6], ids[9:12], self.block_sizes))
        self.print_dynamic_shared_memory(p)
        workgroup, private = attributions(self, NUM_IDS)
        print_attributions(p, "workgroup", workgroup)
        print_attributions(p, "private", private)
        p.write(" ")
        p.region(self.body, print_entry_args=False)
        p.attr_dict(self, elided=("operandSegmentSizes", "workgroup_attributions"))

    # ----- semantics ----------------------------------------------------------------------

    def interpret(self, interp, values):
        grid, block, size = self.launch_sizes(values)
        run_grid(interp, self, self, NUM_IDS, grid, block,
                 lambda t: [*t.block_id, *t.thread_id, *grid, *block], interp.env, size)
        return []


def _parse_ids_and_sizes(p) -> tuple[list, list, list[Value]]:
    """`(%x, %y, %z) in (%sx = %a, %sy = %b, %sz = %c)`: the three id arguments, the three
    size arguments (as region argument entries) and the three size operands."""
    p.expect("(")
    ids = []
    for d in range(3):
        tk = p.i
        ids.append((p.parse_operand_ref().name, INDEX, None, tk))
        p.expect(")" if d == 2 else ",")
    p.expect("in")
    p.expect("(")
    args, operands = [], []
    for d in range(3):
        tk = p.i
        args.append((p.parse_operand_ref().name, INDEX, None, tk))
        p.expect("=")
        operands.append(p.resolve(p.parse_operand_ref(), INDEX))
        p.expect(")" if d == 2 else ",")
    return ids, args, operands


def _ids_and_sizes(p, ids, size_args, sizes) -> str:
    pairs = ", ".join(f"{p.value(a)} = {p.value(s)}" for a, s in zip(size_args, sizes))
    return f"({', '.join(map(p.value, ids))}) in ({pairs})"


@gpu.op
class TerminatorOp(BareOp):
    """Ends the body of a `gpu.launch`: the thread is done.

        gpu.terminator
    """

    name = "gpu.terminator"
    traits = (Terminator(), HasParent("gpu.launch"))

    def interpret(self, interp, values):
        return []

