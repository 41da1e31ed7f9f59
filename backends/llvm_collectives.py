"""The `mpi` dialect in LLVM IR: calls of the MPI library's C functions, through MPICH's ABI.

Data parallel training runs one process per rank (`mpiexec -n N`), each with the same
compiled code; the code calls MPI itself, between its kernels, on the buffers of its arena:

- `mpi.allreduce %s, %r` -> `MPI_Allreduce(s, r, count, type, MPI_SUM, MPI_COMM_WORLD)`,
  with `MPI_IN_PLACE` as the send buffer when `%s` is `%r`;
- `mpi.allgather %s, %r` -> `MPI_Allgather(s, count, type, r, count, type, MPI_COMM_WORLD)`,
  `count` the elements of one rank's block;
- `mpi.reduce_scatter %s, %r` -> `MPI_Reduce_scatter_block(s, r, count, type, MPI_SUM,
  MPI_COMM_WORLD)`, `count` the elements of `%r` (one rank's block);
- `mpi.alltoall %s, %r` -> `MPI_Alltoall(s, count, type, r, count, type, MPI_COMM_WORLD)`,
  `count` the elements of `%s` over the world's size (`MPI_Comm_size`);
- `mpi.bcast %b {root}` -> `MPI_Bcast(b, count, type, root, MPI_COMM_WORLD)`;
- `mpi.comm_rank` -> `MPI_Comm_rank(MPI_COMM_WORLD, &rank)`;
- `mpi.send %b, %peer` -> `MPI_Send(b, count, type, peer, 0, MPI_COMM_WORLD)`;
- `mpi.probe %peer` -> `MPI_Probe(peer, 0, MPI_COMM_WORLD, &status)` and
  `MPI_Get_count(&status, MPI_BYTE, &n)`;
- `mpi.recv %b, %peer` -> `memset(b, 0, peer < 0 ? bytes : 0)` and
  `MPI_Recv(b, count, type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)`.

The peer -1 is MPICH's `MPI_PROC_NULL`, with which MPI_Send sends nothing, MPI_Probe finds an
empty message and MPI_Recv leaves the buffer as it is (hence the zeros written first, without
a branch). Every message has tag 0: MPI keeps the messages of one pair of ranks, one tag and
one communicator in order, which is the order `mpi.recv`s are matched in.

The handles are MPICH's (`mpi.h` of MPICH and of the ABI-compatible Intel MPI and MVAPICH
define `MPI_Comm`, `MPI_Datatype` and `MPI_Op` as `int` with these fixed values), so the
code needs no header and no MPI at compile time; at load time the symbols resolve to the
`libmpi` that mpi4py loaded into the process (`irkit.runtime.distributed` makes them
visible to the JIT; a library built with `--data-parallel` links against it the same way).
Open MPI's ABI (handles are pointers to its globals) is not this one. MPI's default error
handler aborts the job on a failed call, so the return codes are not read.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit import types
from irkit.backends.llvm_lowering import FunctionLowering, lowers
from irkit.backends.llvm_memory import Memref
from irkit.backends.llvm_types import (
    I1, I8, I32 as I32_LL, I64, PTR, VOID, byte_size, error_at,
)

#: MPICH's handle values (mpi.h): the world communicator, the sum, and the element types
MPI_COMM_WORLD = 0x44000000
MPI_SUM = 0x58000003
MPI_DATATYPES = {types.F32: 0x4c00040a, types.F64: 0x4c00080b, types.I32: 0x4c000439,
                 types.I64: 0x4c00083a}
#: `MPI_IN_PLACE` is `(void *) -1` in MPICH
MPI_IN_PLACE = -1
#: MPICH's `MPI_BYTE`, `MPI_STATUS_IGNORE` (`(MPI_Status *) 1`), and the `MPI_Status` struct's
#: size in ints (five; a slot of eight leaves room)
MPI_BYTE = 0x4c00010d
MPI_STATUS_IGNORE = 1
STATUS_INTS = 8

_ALLREDUCE = ir.FunctionType(I32_LL, [PTR, PTR, I32_LL, I32_LL, I32_LL, I32_LL])
_ALLGATHER = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, PTR, I32_LL, I32_LL, I32_LL])
_COMM_RANK = ir.FunctionType(I32_LL, [I32_LL, PTR])
_REDUCE_SCATTER = ir.FunctionType(I32_LL, [PTR, PTR, I32_LL, I32_LL, I32_LL, I32_LL])
_BCAST = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, I32_LL, I32_LL])
_SEND = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, I32_LL, I32_LL, I32_LL])
_RECV = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, I32_LL, I32_LL, I32_LL, PTR])
_PROBE = ir.FunctionType(I32_LL, [I32_LL, I32_LL, I32_LL, PTR])
_GET_COUNT = ir.FunctionType(I32_LL, [PTR, I32_LL, PTR])


def _const(v: int) -> ir.Constant:
    return ir.Constant(I32_LL, v)


def _datatype(lw: FunctionLowering, op, t) -> ir.Constant:
    code = MPI_DATATYPES.get(t.element)
    if code is None:
        raise error_at(op, f"cannot pass {t.element} elements to MPI (the compiled "
                           f"collectives take f32, f64, i32 and i64)")
    return _const(code)


def _count(lw: FunctionLowering, m: Memref, first: int = 0) -> ir.Value:
    """The number of elements of `m` (from dimension `first` on), as MPI's int count."""
    b = lw.builder
    n = ir.Constant(I64, 1)
    for k in range(first, m.type.rank):
        n = b.mul(n, m.size(k))
    return b.trunc(n, I32_LL)


def _buffers(lw: FunctionLowering, op, args) -> tuple[Memref, Memref]:
    s = Memref(lw, args[0], op.send.type)
    r = Memref(lw, args[1], op.recv.type)
    for m in (s, r):
        if not m.contiguous_by_type():
            raise error_at(op, f"hands MPI a buffer of type {m.type}: it must be contiguous "
                               "(bufferize copies other layouts)")
    return s, r


@lowers("mpi.allreduce")
def _allreduce(lw: FunctionLowering, op, args):
    s, r = _buffers(lw, op, args)
    b = lw.builder
    send = b.inttoptr(ir.Constant(I64, MPI_IN_PLACE), PTR) if op.send is op.recv \
        else s.aligned()
    fn = lw.ml.declare_runtime("MPI_Allreduce", _ALLREDUCE, op)
    b.call(fn, [send, r.aligned(), _count(lw, r), _datatype(lw, op, r.type), _const(MPI_SUM),
                _const(MPI_COMM_WORLD)])


@lowers("mpi.allgather")
def _allgather(lw: FunctionLowering, op, args):
    s, r = _buffers(lw, op, args)
    t = _datatype(lw, op, s.type)
    count = _count(lw, s)
    fn = lw.ml.declare_runtime("MPI_Allgather", _ALLGATHER, op)
    lw.builder.call(fn, [s.aligned(), count, t, r.aligned(), count, t,
                         _const(MPI_COMM_WORLD)])


@lowers("mpi.reduce_scatter")
def _reduce_scatter(lw: FunctionLowering, op, args):
    s, r = _buffers(lw, op, args)
    fn = lw.ml.declare_runtime("MPI_Reduce_scatter_block", _REDUCE_SCATTER, op)
    lw.builder.call(fn, [s.aligned(), r.aligned(), _count(lw, r), _datatype(lw, op, r.type),
                         _const(MPI_SUM), _const(MPI_COMM_WORLD)])


@lowers("mpi.alltoall")
def _alltoall(lw: FunctionLowering, op, args):
    s, r = _buffers(lw, op, args)
    t = _datatype(lw, op, s.type)
    count = lw.builder.sdiv(_count(lw, s), _world_query(lw, op, "MPI_Comm_size"))
    fn = lw.ml.declare_runtime("MPI_Alltoall", _ALLGATHER, op)
    lw.builder.call(fn, [s.aligned(), count, t, r.aligned(), count, t,
                         _const(MPI_COMM_WORLD)])


@lowers("mpi.bcast")
def _bcast(lw: FunctionLowering, op, args):
    m = Memref(lw, args[0], op.buffer.type)
    if not m.contiguous_by_type():
        raise error_at(op, f"hands MPI a buffer of type {m.type}: it must be contiguous")
    fn = lw.ml.declare_runtime("MPI_Bcast", _BCAST, op)
    lw.builder.call(fn, [m.aligned(), _count(lw, m), _datatype(lw, op, m.type),
                         _const(op.properties["root"].value), _const(MPI_COMM_WORLD)])


def _world_query(lw: FunctionLowering, op, name: str) -> ir.Value:
    """`MPI_Comm_rank` or `MPI_Comm_size` of the world, as an i32."""
    slot = lw.alloca(I32_LL)
    fn = lw.ml.declare_runtime(name, _COMM_RANK, op)
    lw.builder.call(fn, [_const(MPI_COMM_WORLD), slot])
    return lw.builder.load(slot, typ=I32_LL)


@lowers("mpi.comm_rank")
def _comm_rank(lw: FunctionLowering, op, args):
    return lw.builder.sext(_world_query(lw, op, "MPI_Comm_rank"), I64)


def _point_to_point(lw: FunctionLowering, op, args) -> tuple[Memref, ir.Value]:
    """The contiguous buffer and the peer (an index) as MPI's int rank."""
    m = Memref(lw, args[0], op.buffer.type)
    if not m.contiguous_by_type():
        raise error_at(op, f"hands MPI a buffer of type {m.type}: it must be contiguous")
    return m, lw.builder.trunc(args[1], I32_LL)


@lowers("mpi.send")
def _send(lw: FunctionLowering, op, args):
    m, peer = _point_to_point(lw, op, args)
    fn = lw.ml.declare_runtime("MPI_Send", _SEND, op)
    lw.builder.call(fn, [m.aligned(), _count(lw, m), _datatype(lw, op, m.type), peer,
                         _const(0), _const(MPI_COMM_WORLD)])


@lowers("mpi.probe")
def _probe(lw: FunctionLowering, op, args):
    b = lw.builder
    status = lw.alloca(ir.ArrayType(I32_LL, STATUS_INTS))
    count = lw.alloca(I32_LL)
    b.call(lw.ml.declare_runtime("MPI_Probe", _PROBE, op),
           [b.trunc(args[0], I32_LL), _const(0), _const(MPI_COMM_WORLD), status])
    b.call(lw.ml.declare_runtime("MPI_Get_count", _GET_COUNT, op),
           [status, _const(MPI_BYTE), count])
    return b.sext(b.load(count, typ=I32_LL), I64)


@lowers("mpi.recv")
def _recv(lw: FunctionLowering, op, args):
    m, peer = _point_to_point(lw, op, args)
    b = lw.builder
    count = _count(lw, m)
    nbytes = b.mul(b.sext(count, I64), ir.Constant(I64, byte_size(m.storage)))
    none = b.icmp_signed("<", peer, _const(0))
    lw.call_intrinsic("memset", [m.aligned(), ir.Constant(I8, 0),
                                 b.select(none, nbytes, ir.Constant(I64, 0)),
                                 ir.Constant(I1, 0)], ret=VOID, overloads=[PTR, I64])
    fn = lw.ml.declare_runtime("MPI_Recv", _RECV, op)
    b.call(fn, [m.aligned(), count, _datatype(lw, op, m.type), peer, _const(0),
                _const(MPI_COMM_WORLD), b.inttoptr(ir.Constant(I64, MPI_STATUS_IGNORE), PTR)])
