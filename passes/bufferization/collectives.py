"""The `parallel` dialect's collectives on tensors -> the `mpi` dialect's on their buffers.

A partitioned program (`parallel-partition`) keeps its collectives as tensor ops through
the structured level; here each becomes one `mpi` op over the buffers the values live in,
so that the compiled code hands MPI the very memory the kernels before and after it use.

MPI cuts and joins buffers by rank along their memory order: rank r's block is the r-th of
k equal runs of the first dimension (**rank-major**). A collective along dimension 0 of a
contiguous buffer is therefore one call on the buffer itself; along another dimension d,
the blocks along d are copied into a contiguous rank-major scratch buffer first (`_pack`)
or out of one afterwards (`_unpack`), k strided copies each:

- `parallel.all_reduce %x` -> `mpi.allreduce %b, %b` in place on `%x`'s buffer when that
  buffer is one `%x` owns and nothing reads it afterwards (the gradient term becomes the
  gradient: `Bufferization.destination`, as a structured op's init), else on a buffer of the
  result's own that first receives a copy;
- `parallel.all_gather %x {dim}` -> `mpi.allgather` of `%x` into the result's buffer (dim 0)
  or into a rank-major scratch buffer unpacked into it;
- `parallel.reduce_scatter %x {dim}` -> `mpi.reduce_scatter` of `%x` (packed along `dim`)
  into the result's buffer, which is one block;
- `parallel.all_to_all %x {split_dim, concat_dim}` -> `%x` packed along `split_dim`,
  `mpi.alltoall` into a scratch buffer, unpacked along `concat_dim`;
- `parallel.broadcast %x {root}` -> `%x` copied into the result's buffer, `mpi.bcast` there;
- `parallel.all_slice %x {dim}` (no message: this rank's block) -> a `memory.subview` of
  `%x`'s buffer at block `mpi.comm_rank` along `dim`.

The group must be every rank of the grid (the compiled code runs on `MPI_COMM_WORLD`, one
rank per grid point, and a group's index is then the world rank); anything else, and
axis_index, are located errors: such programs run in the interpreter.

Point to point (a pipeline's stages), the peer being the world rank `offset` steps along the
op's axis (row-major: the rank plus `offset` times the axis's stride), or -1 (none) where
that steps off the grid's edge, computed from `mpi.comm_rank` with index arithmetic:

- `parallel.send %x` -> `mpi.send` of `%x`'s buffer (a contiguous copy of a view);
- `parallel.recv` -> `mpi.recv` into the result's buffer. A `?` size is the sender's, so it
  is read from the message: `mpi.probe` gives its bytes, divided by the bytes of the other
  dimensions (one `?` at most). Such a buffer's size is known only once the message is
  there, so `plan-memory` leaves it a `memory.alloc` of its own.
"""

from __future__ import annotations

from math import prod

from irkit.ir import Operation, Value
from irkit.types import MemRefType
from irkit.dialects.memory import CopyOp, DeallocOp, SubviewOp, byte_size
from irkit.dialects.mpi import (
    AllgatherOp, AllreduceOp, AlltoallOp, BcastOp, CommRankOp, ProbeOp, RecvOp,
    ReduceScatterOp, SendOp,
)
from irkit.passes.bufferization.buffers import BufferizeError
from irkit.passes.bufferization.function import Bufferization, bufferizes


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


class _Shape:
    """A buffer's static shape (`None` for `?`) and its sizes as index values."""

    def __init__(self, shape: tuple, sizes: list) -> None:
        self.shape, self.sizes = tuple(shape), list(sizes)

    def block(self, bz: Bufferization, dim: int, k: int) -> "_Shape":
        """One of k equal blocks along `dim`."""
        shape, sizes = list(self.shape), list(self.sizes)
        if shape[dim] is None:
            sizes[dim] = bz.scalars().op("arith.divui", sizes[dim], bz.index(k))
        else:
            shape[dim] //= k
            sizes[dim] = bz.index(shape[dim])
        return _Shape(shape, sizes)

    def rank_major(self, bz: Bufferization, k: int) -> "_Shape":
        """k of these blocks one after the other along the first dimension."""
        shape, sizes = list(self.shape), list(self.sizes)
        shape[0] = None if shape[0] is None else shape[0] * k
        sizes[0] = bz.mul(bz.index(k), sizes[0])
        return _Shape(shape, sizes)

    def views(self, bz: Bufferization, buf: Value, dim: int, k: int) -> list[Value]:
        """The k blocks of `buf` (of this shape) along `dim`, in rank order."""
        block = self.block(bz, dim, k)
        sizes = [s if d is None else d for d, s in zip(block.shape, block.sizes)]
        out = []
        for r in range(k):
            offsets = [0] * len(sizes)
            offsets[dim] = bz.mul(bz.index(r), block.sizes[dim])
            out.append(bz.b.insert(SubviewOp.create(buf, offsets, sizes,
                                                    [1] * len(sizes))).results[0])
        return out


def _shape(bz: Bufferization, v: Value) -> _Shape:
    return _Shape(v.type.shape, bz.sizes_of(v))


def _scratch(bz: Bufferization, s: _Shape, element) -> Value:
    return bz.temp(MemRefType(s.shape, element), s.sizes)


def _pack(bz: Bufferization, x: Value, dim: int, k: int) -> tuple[Value, bool]:
    """`x`'s blocks along `dim` in a contiguous rank-major buffer: `x`'s own buffer where it
    already is one (dim 0, contiguous), else a scratch copy; and whether it is scratch."""
    buf = bz.buffer(x)
    if dim == 0 and buf.type.layout is None:
        return buf, False
    s = _shape(bz, x)
    rows = s.block(bz, dim, k).rank_major(bz, k)
    tmp = _scratch(bz, rows, buf.type.element)
    for src, dst in zip(s.views(bz, buf, dim, k), rows.views(bz, tmp, 0, k)):
        bz.b.create(CopyOp, src, dst)
    return tmp, True


def _receive(bz: Bufferization, op: Operation, block: _Shape, dim: int, k: int, call) -> None:
    """Run `call(recv)` into op's result buffer where the result's blocks along `dim` are
    rank-major in it (dim 0, contiguous); else into a scratch buffer of k `block`s, unpacked
    into the result's blocks along `dim`."""
    s = _result_shape(bz, block, dim, k)
    out = bz.dest(op.result, s.sizes)
    if dim == 0 and out.type.layout is None:
        call(out)
        return
    rows = block.rank_major(bz, k)
    tmp = _scratch(bz, rows, out.type.element)
    call(tmp)
    for src, dst in zip(rows.views(bz, tmp, 0, k), s.views(bz, out, dim, k)):
        bz.b.create(CopyOp, src, dst)
    bz.b.create(DeallocOp, tmp)


def _result_shape(bz: Bufferization, block: _Shape, dim: int, k: int) -> _Shape:
    """The result's shape: k `block`s along `dim`."""
    shape, sizes = list(block.shape), list(block.sizes)
    shape[dim] = None if shape[dim] is None else shape[dim] * k
    sizes[dim] = bz.mul(bz.index(k), sizes[dim])
    return _Shape(shape, sizes)


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
    bz.b.create(DeallocOp, tmp)


@bufferizes("parallel.all_gather")
def all_gather(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    k, dim = op.group_size(), op.int_prop("dim")
    src = _contiguous(bz, bz.buffer(op.operand))
    _receive(bz, op, _shape(bz, op.operand), dim, k,
             lambda recv: bz.b.create(AllgatherOp, src, recv))
    if src is not bz.buffer(op.operand):
        bz.b.create(DeallocOp, src)


@bufferizes("parallel.reduce_scatter")
def reduce_scatter(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    k, dim = op.group_size(), op.int_prop("dim")
    send, scratch = _pack(bz, op.operand, dim, k)
    block = _shape(bz, op.operand).block(bz, dim, k)
    out = bz.dest(op.result, block.sizes)
    recv = out if out.type.layout is None else _scratch(bz, block, out.type.element)
    bz.b.create(ReduceScatterOp, send, recv)
    if recv is not out:
        bz.b.create(CopyOp, recv, out)
        bz.b.create(DeallocOp, recv)
    if scratch:
        bz.b.create(DeallocOp, send)


@bufferizes("parallel.all_to_all")
def all_to_all(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    k = op.group_size()
    split, concat = op.int_prop("split_dim"), op.int_prop("concat_dim")
    send, scratch = _pack(bz, op.operand, split, k)
    block = _shape(bz, op.operand).block(bz, split, k)
    _receive(bz, op, block, concat, k, lambda recv: bz.b.create(AlltoallOp, send, recv))
    if scratch:
        bz.b.create(DeallocOp, send)


@bufferizes("parallel.broadcast")
def broadcast(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    s = _shape(bz, op.operand)
    out = bz.dest(op.result, s.sizes)
    buf = out if out.type.layout is None else _scratch(bz, s, out.type.element)
    bz.b.create(CopyOp, bz.buffer(op.operand), buf)
    bz.b.create(BcastOp, buf, root=op.properties["root"])
    if buf is not out:
        bz.b.create(CopyOp, buf, out)
        bz.b.create(DeallocOp, buf)


@bufferizes("parallel.all_slice")
def all_slice(bz: Bufferization, op: Operation) -> None:
    _check_whole_grid(op)
    k, dim = op.group_size(), op.int_prop("dim")
    src = bz.buffer(op.operand)
    block = _shape(bz, op.operand).block(bz, dim, k)
    # static sizes stay static in the view's type, as in the result's tensor type
    sizes = [s if d is None else d for d, s in zip(block.shape, block.sizes)]
    rank = bz.b.create(CommRankOp).results[0]
    offsets = [0] * len(sizes)
    offsets[dim] = bz.mul(rank, block.sizes[dim])
    view = bz.b.insert(SubviewOp.create(src, offsets, sizes, [1] * len(sizes),
                                        location=op.location)).results[0]
    bz.define(op.result, view)


def _peer(bz: Bufferization, op: Operation) -> Value:
    """The world rank `op`'s offset steps along its axis, or -1 off the grid's edge."""
    grid = op.grid_info()
    axis = op.axis_indices()[0]
    stride, size = prod(grid.shape[axis + 1:]), grid.shape[axis]
    offset = op.int_prop("offset")
    s = bz.scalars()
    rank = bz.b.create(CommRankOp).results[0]
    moved = s.add(s.op("arith.remui", s.op("arith.divui", rank, bz.index(stride)),
                       bz.index(size)), bz.index(offset))
    inside = s.and_(s.cmp("ge", moved, bz.index(0)), s.cmp("lt", moved, bz.index(size)))
    return s.select(inside, s.add(rank, bz.index(offset * stride)), bz.index(-1))


@bufferizes("parallel.send")
def send(bz: Bufferization, op: Operation) -> None:
    held = bz.buffer(op.operand)
    buf = _contiguous(bz, held)
    bz.b.create(SendOp, buf, _peer(bz, op))
    if buf is not held:
        bz.b.create(DeallocOp, buf)


@bufferizes("parallel.recv")
def recv(bz: Bufferization, op: Operation) -> None:
    t = op.result.type
    peer = _peer(bz, op)
    dynamic = [a for a, d in enumerate(t.shape) if d is None]
    if len(dynamic) > 1:
        raise BufferizeError(f"cannot bufferize '{op.name}' of {t}: compiled code reads one "
                             f"`?` size from the message, this type has {len(dynamic)}",
                             op.location)
    sizes = [bz.index(d) if d is not None else None for d in t.shape]
    if dynamic:
        row = byte_size(t.element) * prod(d for d in t.shape if d is not None)
        nbytes = bz.b.create(ProbeOp, peer).results[0]
        sizes[dynamic[0]] = bz.scalars().op("arith.divui", nbytes, bz.index(row))
    out = bz.dest(op.result, sizes)
    buf = out if out.type.layout is None else _scratch(bz, _Shape(t.shape, sizes), t.element)
    bz.b.create(RecvOp, buf, peer)
    if buf is not out:
        bz.b.create(CopyOp, buf, out)
        bz.b.create(DeallocOp, buf)
