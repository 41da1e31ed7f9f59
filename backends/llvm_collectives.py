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
- `mpi.comm_rank` -> `MPI_Comm_rank(MPI_COMM_WORLD, &rank)`.

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
from irkit.backends.llvm_types import I32 as I32_LL, I64, PTR, error_at

#: MPICH's handle values (mpi.h): the world communicator, the sum, and the element types
MPI_COMM_WORLD = 0x44000000
MPI_SUM = 0x58000003
MPI_DATATYPES = {types.F32: 0x4c00040a, types.F64: 0x4c00080b, types.I32: 0x4c000439,
                 types.I64: 0x4c00083a}
#: `MPI_IN_PLACE` is `(void *) -1` in MPICH
MPI_IN_PLACE = -1

_ALLREDUCE = ir.FunctionType(I32_LL, [PTR, PTR, I32_LL, I32_LL, I32_LL, I32_LL])
_ALLGATHER = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, PTR, I32_LL, I32_LL, I32_LL])
_COMM_RANK = ir.FunctionType(I32_LL, [I32_LL, PTR])
_REDUCE_SCATTER = ir.FunctionType(I32_LL, [PTR, PTR, I32_LL, I32_LL, I32_LL, I32_LL])
_BCAST = ir.FunctionType(I32_LL, [PTR, I32_LL, I32_LL, I32_LL, I32_LL])


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
