"""What a GPU thread asks about where it runs: its thread and block ids, the block and grid
sizes (`gpu.thread_id x` ...), the block's barrier, and the block's dynamic shared memory.

They mean something only inside a kernel, so each verifies that a `gpu.launch` or a
`gpu.func` encloses it; in the interpreter each reads the `ThreadContext` of the thread
that runs it (see `grid`).
"""

from __future__ import annotations

from irkit.opdef import BareOp, Index, Op, Prop, Pure, Result
from irkit.types import I8, INDEX, MemRefType
from irkit.dialects.gpu.base import DIMS, WORKGROUP, DimAttr, dim_attr, dim_index, gpu
from irkit.dialects.gpu.grid import current_thread

#: the ops whose bodies run on the GPU
KERNEL_BODIES = ("gpu.launch", "gpu.func")


def verify_in_kernel(op: Op) -> None:
    if not any(a.name in KERNEL_BODIES for a in op.ancestors()):
        raise op.error("must be inside a 'gpu.launch' or a 'gpu.func'")


class _DimensionOp(Op):
    """Shared by the four id ops: `%r = gpu.<op> x|y|z`, an index; the subclass says which
    field of the thread's context it reads."""

    dimension = Prop(DimAttr)
    result = Result(Index)
    traits = (Pure(),)
    context_field = ""

    @classmethod
    def create(cls, dim: str, location=None) -> Op:
        return cls.build(result_types=[INDEX], dimension=dim_attr(dim),
                         location=location)

    def verify_(self):
        verify_in_kernel(self)

    @classmethod
    def parse(cls, p, num_results):
        tk = p.i
        dim = p.next()
        if dim not in DIMS:
            raise p.error(f"expected a dimension (x, y or z), got '{dim}'", tk)
        attrs = p.parse_optional_attr_dict()
        return cls.build(result_types=[INDEX], attributes=attrs, dimension=dim_attr(dim))

    def print(self, p):
        p.write(f" {DIMS[dim_index(self.dimension)]}")
        p.attr_dict(self, elided=("dimension",))

    def interpret(self, interp, values):
        thread = current_thread(interp, self)
        return [getattr(thread, self.context_field)[dim_index(self.dimension)]]


@gpu.op
class ThreadIdOp(_DimensionOp):
    """The thread's index in its block along one dimension.

        %tx = gpu.thread_id x
    """

    name = "gpu.thread_id"
    context_field = "thread_id"


@gpu.op
class BlockIdOp(_DimensionOp):
    """The block's index in the grid along one dimension.

        %bx = gpu.block_id x
    """

    name = "gpu.block_id"
    context_field = "block_id"


@gpu.op
class BlockDimOp(_DimensionOp):
    """The number of threads of a block along one dimension.

        %nx = gpu.block_dim x
    """

    name = "gpu.block_dim"
    context_field = "block_dim"


@gpu.op
class GridDimOp(_DimensionOp):
    """The number of blocks of the grid along one dimension.

        %gx = gpu.grid_dim x
    """

    name = "gpu.grid_dim"
    context_field = "grid_dim"


@gpu.op
class BarrierOp(BareOp):
    """Waits until every thread of the block has reached it; the block's workgroup memory
    writes before it are then seen by all its threads. Every thread of a block must reach
    the same barrier (none in code only some threads run).

        gpu.barrier
    """

    name = "gpu.barrier"

    def verify_(self):
        verify_in_kernel(self)

    def interpret(self, interp, values):
        # Blocks with barriers run in lockstep (`grid`), which waits here without calling
        # this; a block of one thread has no one to wait for.
        current_thread(interp, self)
        return []


@gpu.op
class DynamicSharedMemoryOp(Op):
    """The block's dynamic shared memory: the bytes a launch asks for with
    `dynamic_shared_memory_size`, carved into typed buffers with `memory.view`.

        %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    """

    name = "gpu.dynamic_shared_memory"
    result = Result()

    def verify_(self):
        verify_in_kernel(self)
        t = self.result.type
        if not (isinstance(t, MemRefType) and t.rank == 1 and t.shape[0] is None
                and t.element is I8 and t.memory_space == WORKGROUP):
            raise self.error(f"expects a result of type memref<?xi8, {WORKGROUP}>, got {t}")

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build(result_types=[p.parse_type()], attributes=attrs)

    def print(self, p):
        p.attr_dict(self)
        p.write(f" : {self.result.type}")

    def interpret(self, interp, values):
        return [current_thread(interp, self).dynamic_shared]
