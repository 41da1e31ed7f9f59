"""What the GPU schedules (gpu-matmul-tiles, gpu-block-reduce) build their kernels from: a
`gpu.launch` with workgroup buffers, the block's flat thread id, loops that stride the
block's threads over a range, and guarded loads.

The schedules write their kernels as inline launches at the loop level, right where the
structured op they replace stood, so that `lower-linalg-to-loop` lowers only what they
leave and `plan-memory` sees every buffer access (a load or store inside a launch has the
launch's position, as one inside a loop nest has the nest's). `gpu-map-parallel-loops`
leaves a launch where it is and `gpu-kernel-outlining` outlines it like any other, its
workgroup attributions becoming the kernel's.

Device memory. The schedules allocate nothing: their temporaries are the buffers bufferize
made (plan-memory places them in the function's arena, which the host code allocates on the
device once per call), and the f64 accumulator of a contraction whose epilogue runs at the
store is dropped. With them, the host functions of examples/mlp.irk hold one `memory.arena`
each and no other allocation (tests/property/test_gpu_schedules.py).

Workgroup buffers are MLIR's workgroup attributions: static shapes in address space
`#gpu.address_space<workgroup>` (NVVM address space 3), one buffer per block, declared by
the launch, so that their size is known when the kernel is compiled.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Block, Value
from irkit.types import MemRefType, Type
from irkit.dialects import arith
from irkit.dialects.gpu import WORKGROUP, BarrierOp, LaunchOp, set_workgroup_count
from irkit.dialects.loop import IfOp, YieldOp
from irkit.passes.blis.nest import Emitter, Index


class Kernel:
    """An inline `gpu.launch` before `b`'s insertion point while its body is built: `body`
    inserts before the body's `gpu.terminator`; `shared` are the workgroup buffers;
    `block_id`, `thread_id` the ids (x, y, z); `tid` the flat thread id (x fastest)."""

    def __init__(self, e: Emitter, b: Builder, grid: list[Index], block: tuple[int, ...],
                 shared: list[tuple[tuple[int, ...], Type]]) -> None:
        self.e = e
        self.block = tuple(block) + (1,) * (3 - len(block))
        sizes = [e.v(g) for g in grid] + [e.v(1)] * (3 - len(grid))
        self.launch = LaunchOp.create(sizes, [e.v(s) for s in self.block],
                                      location=e.location)
        entry = self.launch.body.blocks[0]
        self.shared = [entry.add_argument(MemRefType(shape, t, memory_space=WORKGROUP))
                       for shape, t in shared]
        set_workgroup_count(self.launch, len(self.shared))
        b.insert(self.launch)
        self.body = Builder.before(entry.last)
        self.body.location = e.location
        ids = self.launch.ids
        self.block_id, self.thread_id = list(ids[0:3]), list(ids[3:6])
        tid: Index = 0
        stride = 1
        for d, size in enumerate(self.block):
            if size > 1:
                tid = e.add(self.body, tid, e.mul(self.body, self.thread_id[d], stride))
                stride *= size
        self.tid = e.v(tid)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def barrier(self, b: Builder) -> None:
        b.create(BarrierOp, location=self.e.location)

    def strided(self, b: Builder, size: Index, body) -> None:
        """`body(builder, i)` for every i in [0, size) this thread owns: tid, tid + threads,
        ... (consecutive threads at consecutive i: coalesced accesses)."""
        self.e.for_(b, self.tid, size, self.threads, lambda inner, i, _: body(inner, i))


    def owned(self, b: Builder, size: int) -> list[tuple[Index, Value | None]]:
        """The elements of [0, size) this thread owns, unrolled (`size` is static): i =
        tid + j * threads for each j < ceil(size / threads), with the check `i < size`
        where the threads do not divide `size` (else None). Unrolled, a thread's loads can
        all be issued before their values are used (a strided loop issues one at a time)."""
        e, threads = self.e, self.threads
        out = []
        for j in range(-(-size // threads)):
            i = e.add(b, self.tid, j * threads)
            out.append((i, None if size % threads == 0 else e.lt(b, i, size)))
        return out


def guarded(e: Emitter, b: Builder, cond: Value, value, t: Type, otherwise: float = 0.0
            ) -> Value:
    """`value(builder)` where `cond` holds, else the constant `otherwise`, through a
    `loop.if` with a result: the loads `value` makes run only where they are in bounds."""
    return selected(e, b, cond, lambda inner: [value(inner)], [t], otherwise)[0]


def selected(e: Emitter, b: Builder, cond: Value, values, types: list[Type],
             otherwise: float = 0.0) -> list[Value]:
    """`values(builder)` (a list of `types`) where `cond` holds, else the constant
    `otherwise` for each, through one `loop.if` with results."""
    op = IfOp.build(cond, result_types=list(types), regions=2, location=e.location)
    then, other = Block([]), Block([])
    op.regions[0].add_block(then)
    op.regions[1].add_block(other)
    inner = Builder.at_end(then)
    inner.create(YieldOp, list(values(inner)), result_types=[], location=e.location)
    inner = Builder.at_end(other)
    inner.create(YieldOp, [e.fconst(inner, otherwise, t) for t in types], result_types=[],
                 location=e.location)
    b.insert(op)
    return list(op.results)


def all_of(e: Emitter, b: Builder, conds: list[Value]) -> Value:
    out = conds[0]
    for c in conds[1:]:
        out = b.create(arith.AndIOp, out, c, location=e.location).result
    return out
