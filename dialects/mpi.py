"""The `mpi` dialect: collectives over buffers, as the compiled code calls MPI (MLIR's `mpi`).

`bufferize` turns the `parallel` dialect's collectives on tensors into these ops on the
buffers that hold them (`irkit.passes.bufferization.collectives`), and the LLVM backend into
calls of the MPI library's C functions through the MPICH ABI (`irkit.backends.llvm_collectives`):

    mpi.allreduce %send, %recv : memref<128x10xf32>, memref<128x10xf32>
    mpi.allgather %send, %recv : memref<?x10xf32>, memref<?x10xf32>
    mpi.reduce_scatter %send, %recv : memref<8x10xf32>, memref<4x10xf32>
    mpi.alltoall %send, %recv : memref<8x10xf32>, memref<8x10xf32>
    mpi.bcast %buf {root = 0 : i64} : memref<4x10xf32>
    %r = mpi.comm_rank : index
    mpi.send %h, %peer : memref<?x128xf32>
    %n = mpi.probe %peer : index
    mpi.recv %h, %peer : memref<?x128xf32>

All run over every rank of the world (`MPI_COMM_WORLD`): the partitioned program's grid is
the world, and a collective over part of it is not lowered here (bufferize says so, at the
op). `allreduce` sums `send` over the ranks into `recv`; the two may be the very same buffer
(MPI's `MPI_IN_PLACE`), which is how bufferize writes a gradient's sum over the buffer that
held its term, with no copy. `allgather` writes the ranks' `send` buffers, in rank order,
one after the other into `recv` along its first dimension; `reduce_scatter` and `alltoall`
cut their `send` into the ranks' blocks along the first dimension too (bufferize packs a
value split along another dimension so). The buffers are contiguous (the identity layout):
they are handed to MPI as plain pointers.

`send`, `probe` and `recv` are point to point (a pipeline's stages): `%peer` is the world
rank at the other end, or -1 for none (MPI's `MPI_PROC_NULL`: the rank at a grid's edge, whose
send is no message and whose recv is zeros). Messages between two ranks arrive in the order
they were sent. A received value's `?` size is the sender's: `probe` waits for the next
message from `%peer` and gives its size in bytes (0 from none), which sizes the buffer
`recv` then fills.

In the interpreter they run on the rank's `Communicator` (`interp.state
["parallel.communicator"]`, as the `parallel` collectives do), so a bufferized partitioned
program runs under `run_spmd` or on MPI ranks just as its tensor form does.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import IntegerAttr
from irkit.interpreter import InterpreterError
from irkit.opdef import (
    Constraint, Dialect, Index, Op, Operand, Prop, Pure, Result, attr_constraint,
)
from irkit.types import I64, INDEX, MemRefType
from irkit.dialects.memory import READ, WRITE, check_live, check_writable, parse_memref_type

#: the interpreter state's messages `mpi.probe` took, by source, until `mpi.recv` reads them
PROBED = "mpi.probed"

mpi = Dialect("mpi", "Collectives over buffers: what compiled code asks of the MPI library.")

_I64 = attr_constraint(IntegerAttr, "64-bit integer attribute", lambda a: a.type is I64)
ContiguousBuffer = Constraint(lambda t: isinstance(t, MemRefType) and t.layout is None,
                              "memref with the identity layout")


def _communicator(interp, op: Op):
    comm = interp.state.get("parallel.communicator")
    if comm is None:
        raise InterpreterError(f"'{op.name}' needs the ranks of its grid: run the function "
                               f"with irkit.dialects.parallel.run_spmd or on MPI ranks",
                               op.location)
    return comm


def _operand_pair(p) -> tuple:
    """`%a, %b {attrs} :` of the custom syntax: the two operand references and the attributes,
    the types left to read."""
    a = p.parse_operand_ref()
    p.expect(",")
    b = p.parse_operand_ref()
    attrs = p.parse_optional_attr_dict()
    p.expect(":")
    return a, b, attrs


class _BufferCollective(Op):
    """send and recv buffers of one element type (custom syntax of the module docstring)."""

    __slots__ = ()
    send = Operand(ContiguousBuffer)
    recv = Operand(ContiguousBuffer)

    def infer_result_types(self):
        return []

    def verify_(self):
        s, r = self.send.type, self.recv.type
        if s.element is not r.element or s.rank != r.rank:
            raise self.error(f"requires send and recv of one element type and rank, got {s} "
                             f"and {r}")

    def memory_effects(self):
        return [(READ, self.send), (WRITE, self.recv)]

    def interpret(self, interp, values):
        """`recv` = `collective(comm, send, axes)`, the rank's communicator's collective over
        every grid axis (the compiled collectives run over the whole world)."""
        send, recv = values
        check_live(interp, self, send, recv)
        check_writable(self, recv)
        comm = _communicator(interp, self)
        value = self.collective(comm, np.array(send), tuple(range(len(comm.grid.shape))))
        if value.shape != recv.shape:
            raise InterpreterError(f"'{self.name}' made shape {list(value.shape)} for a buffer "
                                   f"of shape {list(recv.shape)}", self.location)
        np.copyto(recv, value)
        return []

    @classmethod
    def parse(cls, p, num_results):
        send, recv, attrs = _operand_pair(p)
        s = parse_memref_type(p)
        p.expect(",")
        r = parse_memref_type(p)
        return cls.build(p.resolve(send, s), p.resolve(recv, r), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.send)}, {p.value(self.recv)}")
        p.attr_dict(self)
        p.write(f" : {self.send.type}, {self.recv.type}")


@mpi.op
class AllreduceOp(_BufferCollective):
    """`recv` = the sum of every rank's `send` (MPI_Allreduce with MPI_SUM; in place when
    `send` is `recv`). Same shapes.

        mpi.allreduce %g, %g : memref<64x128xf32>, memref<64x128xf32>
    """

    name = "mpi.allreduce"

    def verify_(self):
        super().verify_()
        s, r = self.send.type, self.recv.type
        if any(a is not None and b is not None and a != b for a, b in zip(s.shape, r.shape)):
            raise self.error(f"requires send and recv of one shape, got {s} and {r}")

    @staticmethod
    def collective(comm, x, axes):
        return comm.all_reduce(x, axes)


@mpi.op
class AllgatherOp(_BufferCollective):
    """`recv` = every rank's `send`, in rank order, concatenated along the first dimension
    (MPI_Allgather). The other dimensions agree.

        mpi.allgather %x, %all : memref<?x10xf32>, memref<?x10xf32>
    """

    name = "mpi.allgather"

    def verify_(self):
        super().verify_()
        s, r = self.send.type, self.recv.type
        if s.rank == 0:
            raise self.error(f"gathers along the first dimension: requires ranked buffers, "
                             f"got {s}")
        if any(a is not None and b is not None and a != b
               for a, b in zip(s.shape[1:], r.shape[1:])):
            raise self.error(f"requires send and recv to agree past the first dimension, "
                             f"got {s} and {r}")

    @staticmethod
    def collective(comm, x, axes):
        return comm.all_gather(x, axes, 0)


@mpi.op
class ReduceScatterOp(_BufferCollective):
    """`recv` = rank r's block of the sum of every rank's `send`, the blocks being equal runs
    of `send`'s first dimension in rank order (MPI_Reduce_scatter_block with MPI_SUM).

        mpi.reduce_scatter %x, %mine : memref<8x10xf32>, memref<4x10xf32>
    """

    name = "mpi.reduce_scatter"

    @staticmethod
    def collective(comm, x, axes):
        return comm.reduce_scatter(x, axes, 0)


@mpi.op
class AlltoallOp(_BufferCollective):
    """Rank r's `send` is cut into equal runs of its first dimension, one per rank; `recv`
    is the runs every rank sent to r, in rank order (MPI_Alltoall). Same shapes.

        mpi.alltoall %x, %y : memref<8x10xf32>, memref<8x10xf32>
    """

    name = "mpi.alltoall"

    @staticmethod
    def collective(comm, x, axes):
        return comm.all_to_all(x, axes, 0, 0)


@mpi.op
class BcastOp(Op):
    """Rank `root`'s `buffer` written over every rank's (MPI_Bcast), in place.

        mpi.bcast %x {root = 0 : i64} : memref<4x10xf32>
    """

    name = "mpi.bcast"
    buffer = Operand(ContiguousBuffer)
    root = Prop(_I64)

    def infer_result_types(self):
        return []

    def memory_effects(self):
        return [(READ, self.buffer), (WRITE, self.buffer)]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(p.resolve(ref, t), **props, attributes=attrs or None)

    def print(self, p):
        p.write(f" {p.value(self.buffer)}")
        p.attr_dict(self)
        p.write(f" : {self.buffer.type}")

    def interpret(self, interp, values):
        (buf,) = values
        check_live(interp, self, buf)
        check_writable(self, buf)
        comm = _communicator(interp, self)
        np.copyto(buf, comm.broadcast(np.array(buf), tuple(range(len(comm.grid.shape))),
                                      self.properties["root"].value))
        return []


@mpi.op
class CommRankOp(Op):
    """This process's rank in the world (MPI_Comm_rank), as an index: where a rank's block
    of a replicated value starts (`parallel.all_slice` bufferized as a view).

        %r = mpi.comm_rank : index
    """

    name = "mpi.comm_rank"
    rank = Result(Index)
    traits = (Pure(),)

    def infer_result_types(self):
        return [INDEX]

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        p.parse_type()
        return cls.build(attributes=attrs)

    def print(self, p):
        p.attr_dict(self)
        p.write(" : index")

    def interpret(self, interp, values):
        return [_communicator(interp, self).rank]


class _PointToPoint(Op):
    """A buffer and the peer's world rank (custom syntax of the module docstring)."""

    __slots__ = ()
    buffer = Operand(ContiguousBuffer)
    peer = Operand(Index)

    def infer_result_types(self):
        return []

    @classmethod
    def parse(cls, p, num_results):
        buf, peer, attrs = _operand_pair(p)
        t = parse_memref_type(p)
        return cls.build(p.resolve(buf, t), p.resolve(peer, INDEX), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.buffer)}, {p.value(self.peer)}")
        p.attr_dict(self)
        p.write(f" : {self.buffer.type}")


@mpi.op
class SendOp(_PointToPoint):
    """Send `buffer` to world rank `peer` (MPI_Send); nothing when `peer` is -1.

        mpi.send %h, %peer : memref<?x128xf32>
    """

    name = "mpi.send"

    def memory_effects(self):
        return [(READ, self.buffer)]

    def interpret(self, interp, values):
        buf, peer = values
        check_live(interp, self, buf)
        if int(peer) >= 0:
            _communicator(interp, self).send(np.array(buf), int(peer))
        return []


@mpi.op
class RecvOp(_PointToPoint):
    """Fill `buffer` with the next message from world rank `peer` (MPI_Recv), which must
    have its shape; zeros when `peer` is -1.

        mpi.recv %h, %peer : memref<?x128xf32>
    """

    name = "mpi.recv"

    def memory_effects(self):
        return [(WRITE, self.buffer)]

    def interpret(self, interp, values):
        buf, peer = values
        check_live(interp, self, buf)
        check_writable(self, buf)
        if int(peer) < 0:
            buf[...] = 0
            return []
        waiting = interp.state.get(PROBED, {}).get(int(peer))
        x = waiting.pop(0) if waiting else _communicator(interp, self).recv(int(peer))
        if x.shape != buf.shape:
            raise InterpreterError(f"'{self.name}' received shape {list(x.shape)} into a "
                                   f"buffer of shape {list(buf.shape)}", self.location)
        np.copyto(buf, x)
        return []


@mpi.op
class ProbeOp(Op):
    """The size in bytes of the next message from world rank `peer`, waiting for it
    (MPI_Probe, MPI_Get_count); 0 when `peer` is -1. The message stays to be received.

        %n = mpi.probe %peer : index
    """

    name = "mpi.probe"
    peer = Operand(Index)
    size = Result(Index)

    def infer_result_types(self):
        return [INDEX]

    @classmethod
    def parse(cls, p, num_results):
        peer = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        p.parse_type()
        return cls.build(p.resolve(peer, INDEX), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.peer)}")
        p.attr_dict(self)
        p.write(" : index")

    def interpret(self, interp, values):
        """The interpreter's communicators have no probe: the message is received here and
        kept for the `mpi.recv` that follows."""
        peer = int(values[0])
        if peer < 0:
            return [0]
        x = _communicator(interp, self).recv(peer)
        interp.state.setdefault(PROBED, {}).setdefault(peer, []).append(x)
        return [x.nbytes]
