"""The host side of GPU code: what remains of each `func.func` after outlining (index
arithmetic, allocations, `gpu.launch_func`s), compiled for the CPU by the LLVM CPU backend,
its gpu ops lowered to calls of the CUDA driver through a table of function pointers.

    host = host_module(lowered, symbols)    # the func.funcs, `gpu.kernels` = PTX symbols
    code = llvm_cpu.compile_object(host, jit=True, verify=False, rules=HOST_RULES)
    # the runtime then fills the globals: API_GLOBAL, KERNELS_GLOBAL (see below)

The host side's rules (`HOST_RULES`: these, then the shared `RULES`) make every buffer the
host code allocates -- `gpu.alloc`, and the `memory.alloc`s and the planned `memory.arena`
the pipeline leaves in host functions -- device memory: on the nvptx ladder only kernels
touch memory. A load, store or copy left in a host function is a located error (it was not
mapped to a kernel), not a crash on a device pointer.

MLIR lowers `gpu.launch_func` to calls of a small C runtime of its own (`mgpuLaunchKernel`,
`mgpuMemAlloc`, ... in libmlir_cuda_runtime.so), which wraps the driver. Here the compiled
host code calls the driver's own entry points, through a hidden global table that the
runtime fills after loading the code (`irkit.runtime.cuda`):

    irkit_gpu_api[LAUNCH] = cuLaunchKernel      i32 (ptr f, i32 gx, gy, gz, bx, by, bz,
                                                      i32 shared_bytes, ptr stream,
                                                      ptr params, ptr extra)
    irkit_gpu_api[ALLOC]  = cuMemAlloc_v2       i32 (ptr out_device_ptr, i64 bytes)
    irkit_gpu_api[FREE]   = cuMemFree_v2        i32 (i64 device_ptr)
    irkit_gpu_api[COPY]   = cuMemcpy            i32 (i64 dst, i64 src, i64 bytes)
    irkit_gpu_kernels[i]  = the CUfunction of the kernel `gpu.kernels[i]` (cuModuleGetFunction)

Why a table rather than linking against libcuda or a runtime library of our own:

- no C library to build and ship: the host code is an ordinary CPU object (JIT or `.so`),
  and a machine without a GPU can still compile and load it;
- the driver is called directly, with its own signatures, so a launch costs what
  `cuLaunchKernel` costs (no Python, no wrapper) once the table holds libcuda's addresses;
- the same compiled code runs against a fake driver in tests: a table of ctypes callbacks
  with those signatures (host memory as "device" memory, a launch run by the interpreter's
  grid semantics), so argument packing, copies and status codes are tested without a GPU;
- kernel handles come from the runtime's `cuModuleLoadData` of the PTX, in the order of the
  host module's `gpu.kernels` attribute: launches index the table, no lookup by name.

Launch arguments (`cuLaunchKernel`'s `kernelParams`, an array of pointers to each argument
value): a memref's descriptor struct in a stack slot (the kernel takes it by value, see
`kernels`), a scalar's ABI value in a stack slot.

The buffers a host function allocates in its entry block (its planned arena, the 0-d
buffers of values passed between launches) are allocated on its first call and kept
(replaced when a call needs more) rather than allocated and freed per call
(`_kept_alloc`: `cuMemFree` waits for the device).

Status: every call's `CUresult` is checked; the first nonzero one is recorded with the index
of its op (`host_sites`, the gpu ops in walk order) in the hidden global `irkit_gpu_status`
`{i32 result, i32 site}` with a compare-and-swap from 0, as `memory.check` records its code.
The code goes on (what follows fails or computes garbage that is never returned); the runtime
reads the status after the call and raises an error naming the driver's code and the op's
location.
"""

from __future__ import annotations

from collections import ChainMap

import llvmlite.ir as ir

from irkit.attributes import ArrayAttr, StringAttr
from irkit.ir import Operation
from irkit.types import MemRefType
from irkit.backends.llvm_lowering import RULES, FunctionLowering, lowers
from irkit.backends.llvm_memory import Memref, make_descriptor
from irkit.backends.llvm_types import (
    I32, I64, PTR, byte_size, error_at, scalar_type, storage_scalar, to_abi,
)
from irkit.backends.nvptx.kernels import kernel_symbol

API_GLOBAL = "irkit_gpu_api"
KERNELS_GLOBAL = "irkit_gpu_kernels"
STATUS_GLOBAL = "irkit_gpu_status"
#: the module attribute listing the kernels' PTX symbols, in the order of KERNELS_GLOBAL
KERNELS_ATTR = "gpu.kernels"
#: the ops the host side lowers to driver calls (each a "site" of the status)
HOST_OPS = ("gpu.launch_func", "gpu.alloc", "gpu.dealloc", "gpu.memcpy", "memory.alloc",
            "memory.arena", "memory.dealloc")

#: the host side's own rules, and all it is compiled with (module docstring)
GPU_HOST_RULES: dict = {}
HOST_RULES = ChainMap(GPU_HOST_RULES, RULES)

#: the driver functions of the table, in order, with their LLVM types
API = {
    "cuLaunchKernel": ir.FunctionType(I32, [PTR] + [I32] * 7 + [PTR, PTR, PTR]),
    "cuMemAlloc_v2": ir.FunctionType(I32, [PTR, I64]),
    "cuMemFree_v2": ir.FunctionType(I32, [I64]),
    "cuMemcpy": ir.FunctionType(I32, [I64, I64, I64]),
}
LAUNCH, ALLOC, FREE, COPY = range(len(API))


def host_module(module: Operation, kernels: list[str]) -> Operation:
    """A copy of `module` without its `gpu.module`s (the kernels are compiled to PTX), the
    PTX symbols of its kernels (`KernelInfo.symbol`, in the order of `emit_ptx`) in the
    attribute `gpu.kernels`."""
    host = module.clone()
    for op in list(host.regions[0].blocks[0].ops):
        if op.name == "gpu.module":
            op.erase()
    host.attributes[KERNELS_ATTR] = ArrayAttr([StringAttr(k) for k in kernels])
    return host


def host_sites(module: Operation) -> list[Operation]:
    """The ops whose driver calls the status names, by index (walk order, as lowered)."""
    return [op for op in module.walk() if op.name in HOST_OPS]


# ---------------------------------------------------------------------------------------------
# Globals and calls through the table
# ---------------------------------------------------------------------------------------------


def _site(lw: FunctionLowering, op: Operation) -> int:
    sites = lw.ml.helper("gpu.sites", lambda: {o: i for i, o in
                                                enumerate(host_sites(lw.ml.module))})
    return sites[op]


def _driver_call(lw: FunctionLowering, op: Operation, which: int, args: list) -> None:
    """Call table entry `which` with `args` and record a nonzero result (module docstring)."""
    b = lw.builder
    table = lw.ml.hidden_global(API_GLOBAL, ir.ArrayType(PTR, len(API)))
    slot = b.gep(table, [ir.Constant(I32, 0), ir.Constant(I32, which)], inbounds=True)
    fnty = list(API.values())[which]
    fn = b.inttoptr(b.ptrtoint(b.load(slot, typ=PTR), I64), fnty.as_pointer())
    result = b.call(fn, args)
    fail = lw.llfn.append_basic_block("gpu.fail")
    record = lw.llfn.append_basic_block("gpu.record")
    done = lw.llfn.append_basic_block("gpu.done")
    b.cbranch(b.icmp_signed("==", result, ir.Constant(I32, 0)), done, fail)
    b.position_at_end(fail)
    status = lw.ml.hidden_global(STATUS_GLOBAL, ir.ArrayType(I32, 2))
    first = b.gep(status, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    claimed = b.cmpxchg(first, ir.Constant(I32, 0), result, "monotonic", "monotonic")
    b.cbranch(b.extract_value(claimed, 1), record, done)
    b.position_at_end(record)
    b.store(ir.Constant(I32, _site(lw, op)),
            b.gep(status, [ir.Constant(I32, 0), ir.Constant(I32, 1)], inbounds=True))
    b.branch(done)
    b.position_at_end(done)


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


@lowers("gpu.launch_func", table=GPU_HOST_RULES)
def _launch_func(lw: FunctionLowering, op, args):
    b = lw.builder
    names = lw.ml.module.attributes.get(KERNELS_ATTR)
    symbol = kernel_symbol(op.kernel.root, op.kernel.path[-1])
    listed = [a.value for a in names] if isinstance(names, ArrayAttr) else []
    if symbol not in listed:
        raise lw.error(f"launches '{op.kernel}', which is not among the compiled kernels "
                       f"(the host module's '{KERNELS_ATTR}')")
    table = lw.ml.hidden_global(KERNELS_GLOBAL, ir.ArrayType(PTR, len(listed)))
    handle = b.load(b.gep(table, [ir.Constant(I32, 0), ir.Constant(I32, listed.index(symbol))],
                          inbounds=True), typ=PTR)
    operands = op.kernel_operands
    params = lw.alloca(ir.ArrayType(PTR, max(len(operands), 1)))
    for i, v in enumerate(operands):
        value = lw.get(v)
        if not isinstance(v.type, MemRefType):
            value = to_abi(b, value)
        slot = lw.alloca(value.type)
        b.store(value, slot)
        b.store(slot, b.gep(params, [ir.Constant(I32, 0), ir.Constant(I32, i)], inbounds=True))
    sizes = [b.trunc(lw.get(v), I32) for v in (*op.grid_sizes, *op.block_sizes)]
    shared = op.dynamic_shared_memory_size
    shared = lw.get(shared) if shared is not None else ir.Constant(I32, 0)
    null = ir.Constant(PTR, None)
    _driver_call(lw, op, LAUNCH, [handle, *sizes, shared, null, params, null])


@lowers("gpu.alloc", table=GPU_HOST_RULES)
def _gpu_alloc(lw: FunctionLowering, op, args):
    return _device_alloc(lw, op, [lw.get(v) for v in op.dynamic_sizes])


@lowers("memory.alloc", "memory.arena", table=GPU_HOST_RULES)
def _memory_alloc(lw: FunctionLowering, op, args):
    """The host side's buffers (temporaries, the planned arena) are device memory: only
    kernels touch them. Those of the function's entry block are kept between calls
    (`_kept_alloc`); others (in a branch) are allocated each time."""
    if _kept(op):
        return _kept_alloc(lw, op, list(args))
    return _device_alloc(lw, op, list(args))


def _kept(op: Operation) -> bool:
    """Whether the buffer `op` allocates is kept between calls: a host allocation in its
    function's entry block, which runs once per call."""
    fn = op.parent_op
    return op.name in ("memory.alloc", "memory.arena") and fn is not None and \
        fn.name == "func.func" and op.parent is fn.regions[0].blocks[0]


def _kept_alloc(lw: FunctionLowering, op, dynamic: list):
    """A device buffer kept from one call to the next in the hidden global
    `irkit_gpu_buffer_<site>` ({i64 pointer, i64 bytes}), replaced by a larger one when a
    call needs more; its `memory.dealloc` frees nothing.

    Why: `cuMemAlloc` costs tens of microseconds, and `cuMemFree` waits for the device to
    finish everything launched before it, so an arena allocated and freed per call makes
    every call (a training step of the MLP: 21 launches) wait for its kernels before the
    host can launch the next call's. The buffers live as long as the loaded code (as the
    runtime's input and output buffers do); calls of one compiled function share them, as
    they share the status words: the host code is not reentrant."""
    b = lw.builder
    t = op.results[0].type
    sizes, strides, nbytes = _layout(lw, op, dynamic)
    cache = lw.ml.hidden_global(f"irkit_gpu_buffer_{_site(lw, op)}", ir.ArrayType(I64, 2))
    ptr_slot = b.gep(cache, [ir.Constant(I32, 0), ir.Constant(I32, 0)], inbounds=True)
    size_slot = b.gep(cache, [ir.Constant(I32, 0), ir.Constant(I32, 1)], inbounds=True)
    nbytes = b.select(b.icmp_unsigned("==", nbytes, ir.Constant(I64, 0)), ir.Constant(I64, 1),
                      nbytes)
    grow = lw.llfn.append_basic_block("gpu.buffer.grow")
    ready = lw.llfn.append_basic_block("gpu.buffer.ready")
    b.cbranch(b.icmp_unsigned("<", b.load(size_slot, typ=I64), nbytes), grow, ready)
    b.position_at_end(grow)
    old = b.load(ptr_slot, typ=I64)
    free = lw.llfn.append_basic_block("gpu.buffer.free")
    fresh = lw.llfn.append_basic_block("gpu.buffer.alloc")
    b.cbranch(b.icmp_unsigned("!=", old, ir.Constant(I64, 0)), free, fresh)
    b.position_at_end(free)
    _driver_call(lw, op, FREE, [old])
    b.branch(fresh)
    b.position_at_end(fresh)
    b.store(ir.Constant(I64, 0), ptr_slot)
    _driver_call(lw, op, ALLOC, [ptr_slot, nbytes])
    b.store(b.select(b.icmp_unsigned("==", b.load(ptr_slot, typ=I64), ir.Constant(I64, 0)),
                     ir.Constant(I64, 0), nbytes), size_slot)
    b.branch(ready)
    b.position_at_end(ready)
    ptr = b.inttoptr(b.load(ptr_slot, typ=I64), PTR)
    return make_descriptor(lw, t, ptr, ptr, ir.Constant(I64, 0), sizes, strides)


def _layout(lw: FunctionLowering, op, dynamic: list) -> tuple[list, list, ir.Value]:
    """(sizes, row-major strides, bytes) of the contiguous buffer of `op`'s result type,
    its `?` sizes `dynamic`."""
    t = op.results[0].type
    b = lw.builder
    elem = storage_scalar(scalar_type(t.element, op))
    it = iter(dynamic)
    sizes = [next(it) if d is None else ir.Constant(I64, d) for d in t.shape]
    strides, count = [], ir.Constant(I64, 1)
    for n in reversed(sizes):
        strides.append(count)
        count = b.mul(count, n)
    return sizes, strides[::-1], b.mul(count, ir.Constant(I64, byte_size(elem)))


def _device_alloc(lw: FunctionLowering, op, dynamic: list):
    """`cuMemAlloc` of a contiguous buffer of the result type, its `?` sizes `dynamic` (the
    driver aligns to 256 bytes at least)."""
    b = lw.builder
    sizes, strides, nbytes = _layout(lw, op, dynamic)
    slot = lw.alloca(I64)
    b.store(ir.Constant(I64, 0), slot)
    _driver_call(lw, op, ALLOC, [slot, nbytes])
    ptr = b.inttoptr(b.load(slot, typ=I64), PTR)
    return make_descriptor(lw, op.results[0].type, ptr, ptr, ir.Constant(I64, 0), sizes,
                           strides)


@lowers("gpu.dealloc", "memory.dealloc", table=GPU_HOST_RULES)
def _dealloc(lw: FunctionLowering, op, args):
    """`cuMemFree`; nothing for a buffer kept for the next call (`_kept_alloc`)."""
    source = op.operands[-1].defining_op()
    if source is not None and _kept(source):
        return
    m = Memref(lw, args[-1], op.operands[-1].type)
    _driver_call(lw, op, FREE, [lw.builder.ptrtoint(m.allocated(), I64)])


@lowers("gpu.memcpy", table=GPU_HOST_RULES)
def _memcpy(lw: FunctionLowering, op, args):
    """`cuMemcpy` between two contiguous buffers (unified addressing tells host from device
    memory)."""
    dst_v, src_v = op.operands[-2], op.operands[-1]
    dst, src = Memref(lw, args[-2], dst_v.type), Memref(lw, args[-1], src_v.type)
    if not (dst.contiguous_by_type() and src.contiguous_by_type()):
        raise error_at(op, "cannot be compiled for the GPU's host side: copies between "
                           "non-contiguous buffers are not supported")
    b = lw.builder
    count = ir.Constant(I64, byte_size(src.storage))
    for k in range(src.type.rank):
        count = b.mul(count, src.size(k))
    _driver_call(lw, op, COPY, [b.ptrtoint(dst.aligned(), I64),
                                b.ptrtoint(src.aligned(), I64), count])


@lowers("memory.load", "memory.store", "memory.vector_load", "memory.vector_store",
        "memory.copy", "memory.check", table=GPU_HOST_RULES)
def _device_access(lw: FunctionLowering, op, args):
    raise lw.error("cannot be compiled for the GPU's host side: host code cannot access "
                   "device memory (this memory work was not mapped to a kernel)")
