"""The `parallel` dialect's collectives on tensors -> the `mpi` dialect's on their buffers.

A partitioned program (`parallel-partition`) keeps its collectives as tensor ops through
the structured level; here each becomes one `mpi` op over the buffers the values live in,
so that the compiled code hands MPI the very memory the kernels before and after it use:

- `parallel.all_reduce %x` -> `mpi.allreduce %b, %b` in place on `%x`'s buffer when that
  buffer is one `%x` owns and nothing reads it afterwards (the gradient term becomes the
  gradient: `Bufferization.destination`, as a structured op's init), else on a buffer of the
  result's own that first receives a copy;
- `parallel.all_gather %x {dim = 0}` -> `mpi.allgather %b, %out` into the result's buffer
  (the one planned for it, such as the output, else a fresh one), its first size the group
  size times `%x`'s;
- `parallel.all_slice %x {dim = 0}` (no message: this rank's block) -> a `memory.subview` of
  `%x`'s buffer at row `mpi.comm_rank` times the block's rows.

The group must be every rank of the grid (the compiled code runs on `MPI_COMM_WORLD`, one
rank per grid point), and a gather runs along the first dimension (the ranks' blocks are
then whole rows of the result, in rank order, which is what MPI_Allgather writes); anything
else, and the collectives not listed (reduce_scatter, all_to_all, broadcast,
send/recv, axis_index), are located errors: such programs run in the interpreter. MPI reads
and writes plain pointers, so a buffer with a non-identity layout goes through a contiguous
copy.
"""

from __future__ import annotations

from irkit.ir import Operation, Value
from irkit.types import MemRefType
from irkit.dialects.memory import CopyOp, SubviewOp
from irkit.dialects.mpi import AllgatherOp, AllreduceOp, CommRankOp
from irkit.passes.bufferization.buffers import BufferizeError
from irkit.passes.bufferization.function import Bufferization, bufferizes


def _check_first_dim(op: Operation) -> None:
    if op.int_prop("dim") != 0:
        raise BufferizeError(f"cannot bufferize '{op.name}' along dimension "
                             f"{op.int_prop('dim')}: compiled code cuts and gathers along the "
                             f"first dimension only", op.location)


def _check_whole_grid(op: Operation) -> None:
    size = op.grid_info().size
    if op.group_size() != size:
        axes = ", ".join(a.value for a in op.properties["axes"].value)
        raise BufferizeError(f"cannot bufferize '{op.name}' over the axes [{axes}], a group "
                             f"of {op.group_size()} of the grid's {size} ranks: compiled "
                             f"code runs collectives over the whole grid only (the "
                             f"interpreter runs any group)", op.location)


def _contiguous(bz: Bufferization, buf: Value) -> Value:
    """`buf`, or a contiguous copy of it when its layout is not the identity."""
    t = buf.type
    if t.layout is None:
        return buf
    tmp = bz.temp(t, bz.sizes(buf))
    bz.b.create(CopyOp, buf, tmp)
    return tmp


@bufferizes("parallel.all_reduce")
def all_reduce(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    buf = bz.destination(op, op.op_operands[0], op.result, reads=True)
    if buf.type.layout is None:
        bz.b.create(AllreduceOp, buf, buf)
        return
    tmp = _contiguous(bz, buf)
    bz.b.create(AllreduceOp, tmp, tmp)
    bz.b.create(CopyOp, tmp, buf)


@bufferizes("parallel.all_gather")
def all_gather(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    _check_first_dim(op)
    src = _contiguous(bz, bz.buffer(op.operand))
    sizes = bz.sizes_of(op.operand)
    sizes[0] = bz.mul(bz.index(op.group_size()), sizes[0])
    out = bz.dest(op.result, sizes)
    if out.type.layout is None:
        bz.b.create(AllgatherOp, src, out)
        return
    tmp = bz.temp(MemRefType(out.type.shape, out.type.element), sizes)
    bz.b.create(AllgatherOp, src, tmp)
    bz.b.create(CopyOp, tmp, out)


@bufferizes("parallel.all_slice")
def all_slice(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    _check_first_dim(op)
    src = bz.buffer(op.operand)
    sizes = bz.sizes_of(op.operand)
    # static sizes stay static in the view's type, as in the result's tensor type
    shape = op.result.type.shape
    view_sizes = [n if n is not None else s for n, s in zip(shape, sizes)]
    if shape[0] is None:
        view_sizes[0] = bz.scalars().op("arith.divui", sizes[0], bz.index(op.group_size()))
    rank = bz.b.create(CommRankOp).results[0]
    rows = view_sizes[0] if shape[0] is None else bz.index(shape[0])
    offsets = [bz.mul(rank, rows)] + [0] * (len(sizes) - 1)
    view = bz.b.insert(SubviewOp.create(src, offsets, view_sizes, [1] * len(sizes),
                                        location=op.location)).results[0]
    bz.define(op.result, view)
