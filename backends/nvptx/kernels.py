"""The device side: the `gpu.module`s of a module -> one NVPTX LLVM module -> PTX text.

    ptx, kernels = emit_ptx(module, arch="sm_90")    # kernels: [KernelInfo(...)]

Every `gpu.func ... kernel` becomes an LLVM function with the `ptx_kernel` calling
convention (LLVM 22's mark of an entry point; older LLVMs used `!nvvm.annotations`), named
`<gpu.module>__<gpu.func>` (`kernel_symbol`: outlining names kernels per module, and one PTX
holds them all). The body is translated by the CPU backend's machinery and rules
(`llvm_lowering`: `arith`, `loop`, `memory`, `vector` ops mean the same on the GPU), looked up
in `KERNEL_RULES`: this module's rules for the `gpu` ops, then libdevice's for `math`
(`libdevice.MATH_RULES`), then the shared `RULES`.

Kernel calling convention (what the host side's launches pass, `host.py`):

- a memref argument is MLIR's descriptor struct `{T* allocated, T* aligned, i64 offset,
  [R x i64] sizes, [R x i64] strides}` *by value* (a `.param .align 8 .b8 [N]` in PTX): the
  launch's parameter array points at the host's copy of the descriptor, whose pointers are
  device addresses;
- a scalar argument by value, as its ABI type (`llvm_types.abi_scalar`);
- no results.

The gpu ops: `gpu.thread_id`/`block_id`/`block_dim`/`grid_dim` read the special registers
(`llvm.nvvm.read.ptx.sreg.tid.x`, `ctaid`, `ntid`, `nctaid`; i32, zero-extended to index);
`gpu.barrier` is `llvm.nvvm.barrier.cta.sync.aligned.all(0)` (PTX `bar.sync 0`; LLVM 22's
name of `llvm.nvvm.barrier0`); workgroup memory (a `gpu.func`'s workgroup attributions, in
address space 3, NVVM's shared space) is an internal `addrspace(3)` global per attribution,
whose generic address fills a descriptor (LLVM's address-space inference turns the generic
loads and stores back into `ld.shared`/`st.shared`).

LLVM aborts the process, with no Python exception, on an intrinsic or library call the NVPTX
target cannot lower (`llvm.exp.f32`, `expf`). So every runtime function a rule asks for passes
`KernelModuleLowering.declare_runtime` first: libdevice's `__nv_*`, the LLVM intrinsics
NVPTX was checked to lower (`NVPTX_INTRINSICS`), and CUDA's device `malloc`/`free` (a buffer
of dynamic size allocated in a kernel; a static one is a stack slot); anything else is a
located error at the op.

Algorithm (`nvptx_module`):

1. Translate each `gpu.module` (`KernelModuleLowering`) and link them into one LLVM module
   for the `nvptx64-nvidia-cuda` triple and the data layout of `arch`'s target machine;
   check it with LLVM's verifier.
2. Link libdevice when the kernels call it, internalizing all but the kernels
   (`libdevice.link_libdevice`).
3. Optimize with LLVM's pass builder for the NVPTX target machine (its NVVMReflect and
   address-space inference passes included) and emit PTX (`emit_ptx`).
"""

from __future__ import annotations

import functools
from collections import ChainMap
from dataclasses import dataclass

import llvmlite.binding as llvm
import llvmlite.ir as ir

from irkit.attributes import UnitAttr
from irkit.ir import Operation
from irkit.symbols import symbol_name
from irkit.types import MemRefType
from irkit.dialects.gpu.base import DIMS, attributions, dim_index
from irkit.backends import (  # noqa: F401  (their rules: all the CPU backend has)
    llvm_arith, llvm_collectives, llvm_memory, llvm_parallel, llvm_vector,
)
from irkit.backends.llvm_lowering import RULES, FunctionLowering, ModuleLowering, lowers
from irkit.backends.llvm_memory import make_descriptor
from irkit.backends.llvm_types import (
    I8, I32, I64, VOID, BackendError, abi_scalar, descriptor_type, error_at, from_abi,
    scalar_type, storage_scalar, value_type,
)
from irkit.backends.nvptx.libdevice import MATH_RULES, PREFIX, link_libdevice
from irkit.backends.nvptx.toolkit import DEFAULT_ARCH, check_arch

TRIPLE = "nvptx64-nvidia-cuda"
#: the rules of the gpu ops (kernel side)
GPU_RULES: dict = {}
#: the rules kernels are translated with, in lookup order
KERNEL_RULES = ChainMap(GPU_RULES, MATH_RULES, RULES)

#: the LLVM intrinsics (`llvm.<base>.<types>`) the NVPTX target lowers for every type the
#: shared rules use them with (each checked with LLVM 22 for f16/f32/f64, i32, vectors)
NVPTX_INTRINSICS = ("fabs", "sqrt", "floor", "ceil", "trunc", "rint", "roundeven", "round",
                    "copysign", "minnum", "maxnum", "minimum", "maximum", "minimumnum",
                    "maximumnum", "fma", "fmuladd", "ctlz", "cttz", "ctpop", "fptosi.sat",
                    "fptoui.sat", "memcpy", "memmove", "memset", "vector.reduce", "smax",
                    "smin", "umax", "umin", "abs", "nvvm")
#: the C library functions CUDA provides in kernels (its device heap: PTX `.extern .func`s
#: the driver resolves)
DEVICE_LIBRARY = ("malloc", "free")
#: the address space of workgroup (shared) memory in NVVM
SHARED = 3
#: the kernels' dynamic shared memory (`gpu.dynamic_shared_memory`)
DYNAMIC_SHARED = "__irkit_dynamic_shared"


def kernel_symbol(module: str, kernel: str) -> str:
    """The PTX entry name of kernel `@module::@kernel`."""
    return f"{module}__{kernel}"


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of the PTX: its `gpu.module` and `gpu.func` names, its PTX symbol, and its
    argument types (what a launch passes)."""

    module: str
    name: str
    symbol: str
    arg_types: tuple


# ---------------------------------------------------------------------------------------------
# Translation
# ---------------------------------------------------------------------------------------------


def is_kernel(fn: Operation) -> bool:
    return isinstance(fn.attributes.get("gpu.kernel"), UnitAttr)


def kernel_params(fn: Operation) -> list[ir.Type]:
    """The LLVM parameter types of a kernel (see the module docstring)."""
    params = []
    for t in fn.properties["function_type"].value.inputs:
        if isinstance(t, MemRefType):
            params.append(descriptor_type(t, fn))
        else:
            params.append(abi_scalar(value_type(t, fn)))
    return params


class KernelModuleLowering(ModuleLowering):
    """Translates one `gpu.module` of kernels into an `ir.Module` for NVPTX."""

    container = "gpu.module"

    def __init__(self, module: Operation) -> None:
        super().__init__(module, name=symbol_name(module), rules=KERNEL_RULES)
        self.llmod.triple = TRIPLE
        self.kernels: list[KernelInfo] = []

    def _translate(self) -> ir.Module:
        """The kernels translated (`translate` pauses the cycle collector around this)."""
        block = self.module.regions[0].blocks[0]
        name = symbol_name(self.module)
        for fn in block.ops:
            if fn.name != "gpu.func" or not is_kernel(fn):
                raise error_at(fn, "cannot be compiled for NVIDIA GPUs: a 'gpu.module' may "
                                   "only hold kernels ('gpu.func' with 'kernel')")
            symbol = kernel_symbol(name, symbol_name(fn))
            llfn = ir.Function(self.llmod, ir.FunctionType(VOID, kernel_params(fn)), symbol)
            llfn.calling_convention = "ptx_kernel"
            llfn.attributes.add("nounwind")
            ftype = fn.properties["function_type"].value
            self.kernels.append(KernelInfo(name, symbol_name(fn), symbol, tuple(ftype.inputs)))
            KernelLowering(self, llfn, fn).lower()
        return self.llmod

    def declare_runtime(self, name: str, fnty: ir.FunctionType, where) -> ir.Function:
        """Only libdevice and the intrinsics NVPTX lowers (see the module docstring)."""
        if name.startswith("llvm."):
            if not name[5:].startswith(NVPTX_INTRINSICS):
                raise error_at(where, f"cannot be compiled for NVIDIA GPUs: it needs the LLVM "
                                      f"intrinsic '{name}', which the NVPTX target cannot "
                                      "lower")
        elif not name.startswith(PREFIX) and name not in DEVICE_LIBRARY:
            raise error_at(where, f"cannot be compiled for NVIDIA GPUs: it needs the C library "
                                  f"function '{name}', which GPU code cannot call")
        return super().declare_runtime(name, fnty, where)


class KernelLowering(FunctionLowering):
    """One kernel's translation: arguments by value, workgroup attributions as shared
    globals, private ones as stack slots (NVPTX's local memory)."""

    def lower(self) -> None:
        region = self.fn.regions[0]
        if len(region.blocks) != 1:
            raise error_at(self.fn, "cannot be compiled for NVIDIA GPUs: kernels with more "
                                    "than one block are not supported")
        block = region.blocks[0]
        ftype = self.fn.properties["function_type"].value
        n = len(ftype.inputs)
        for arg, param, t in zip(block.args, self.llfn.args, ftype.inputs):
            self.values[arg] = param if isinstance(t, MemRefType) else \
                from_abi(self.builder, param, value_type(t, self.fn))
        workgroup, private = attributions(self.fn, n)
        for arg in workgroup:
            self.values[arg] = self.buffer(arg.type, self._shared_global)
        for arg in private:
            self.values[arg] = self.buffer(arg.type, self.alloca)
        self.lower_block(block)
        self.finish()

    def value_type(self, t):
        """Memrefs in the workgroup or private space are descriptors like the others: their
        pointers are generic addresses (see the module docstring)."""
        if isinstance(t, MemRefType) and t.memory_space is not None:
            t = MemRefType(t.shape, t.element, t.layout)
        return value_type(t, self.op)

    def buffer(self, t: MemRefType, place) -> ir.Value:
        """A descriptor of the buffer of static type `t` that `place(array type)` makes."""
        elem = storage_scalar(scalar_type(t.element, self.fn))
        count = 1
        for d in t.shape:
            count *= d
        ptr = place(ir.ArrayType(elem, count))
        if ptr.type != ir.PointerType():    # a stack slot is typed `[N x T]*` in llvmlite;
            ptr = self.builder.bitcast(ptr, ir.PointerType())  # descriptors hold `ptr`
        strides, acc = [], 1
        for d in reversed(t.shape):
            strides.append(ir.Constant(I64, acc))
            acc *= d
        return make_descriptor(self, t, ptr, ptr, ir.Constant(I64, 0),
                               [ir.Constant(I64, d) for d in t.shape], strides[::-1])

    def _shared_global(self, arr: ir.ArrayType) -> ir.Value:
        """A new shared-memory global of type `arr`, as a generic address."""
        g = ir.GlobalVariable(self.ml.llmod, arr, self.ml.unique_name("__irkit_shared_"),
                              addrspace=SHARED)
        g.linkage = "internal"
        g.initializer = ir.Constant(arr, ir.Undefined)
        g.align = 16
        return self.builder.addrspacecast(g, ir.PointerType())


# ---------------------------------------------------------------------------------------------
# gpu ops
# ---------------------------------------------------------------------------------------------

_SREG = {"gpu.thread_id": "tid", "gpu.block_id": "ctaid", "gpu.block_dim": "ntid",
         "gpu.grid_dim": "nctaid"}


@lowers(*_SREG, table=GPU_RULES)
def _special_register(lw: FunctionLowering, op, args):
    return _read_sreg(lw, f"{_SREG[op.name]}.{DIMS[dim_index(op.dimension)]}")


def _read_sreg(lw: FunctionLowering, name: str) -> ir.Value:
    """The special register `%name` (an i32), as an index."""
    fn = lw.ml.declare_runtime(f"llvm.nvvm.read.ptx.sreg.{name}", ir.FunctionType(I32, []),
                               lw.op)
    return lw.builder.zext(lw.builder.call(fn, []), I64)


@lowers("gpu.dynamic_shared_memory", table=GPU_RULES)
def _dynamic_shared(lw: FunctionLowering, op, args):
    """The external shared array of size 0 that PTX places after the static ones, its size
    the launch's (`%dynamic_smem_size`)."""
    g = lw.ml.llmod.globals.get(DYNAMIC_SHARED)
    if g is None:
        g = ir.GlobalVariable(lw.ml.llmod, ir.ArrayType(I8, 0), DYNAMIC_SHARED,
                              addrspace=SHARED)
        g.align = 16
    ptr = lw.builder.addrspacecast(g, ir.PointerType())
    return make_descriptor(lw, op.result.type, ptr, ptr, ir.Constant(I64, 0),
                           [_read_sreg(lw, "dynamic_smem_size")], [ir.Constant(I64, 1)])


@lowers("memory.alloc", table=GPU_RULES)
def _thread_alloc(lw: FunctionLowering, op, args):
    """A buffer allocated in a kernel is the thread's own: a stack slot (PTX local memory)
    when its shape is static, else the shared rule's `malloc`, which is CUDA's device heap
    in a kernel (8 MB unless the context's heap limit is raised)."""
    t = op.results[0].type
    if any(d is None for d in t.shape):
        return RULES["memory.alloc"](lw, op, args)
    return lw.buffer(t, lw.alloca)


@lowers("memory.dealloc", table=GPU_RULES)
def _thread_dealloc(lw: FunctionLowering, op, args):
    """Nothing for a stack slot of `_thread_alloc` (a static shape); `free` for the rest."""
    if any(d is None for d in op.operands[0].type.shape):
        RULES["memory.dealloc"](lw, op, args)


#: the discardable attribute of a `memory.load` that promises its address is aligned to
#: that many bytes (MLIR's `alignment` of `memref.load`/`vector.load`)
ALIGNMENT_ATTR = "alignment"


@lowers("memory.load", table=GPU_RULES)
def _aligned_load(lw: FunctionLowering, op, args):
    """The shared rule's load, at the alignment the op's `alignment` attribute promises
    where it has one: LLVM's load-store vectorizer then merges a run of consecutive loads
    starting there into one vector load (`ld.shared.v4.f32`: gpu-matmul-tiles marks the
    first load of each group of 4 consecutive shared-memory reads), which it cannot prove
    aligned itself."""
    block = lw.builder.block
    before = len(block.instructions)
    out = RULES["memory.load"](lw, op, args)
    align = op.attributes.get(ALIGNMENT_ATTR)
    if align is not None:
        for inst in block.instructions[before:]:
            if isinstance(inst, ir.LoadInstr):
                inst.align = max(inst.align or 1, int(align.value))
    return out


@lowers("gpu.barrier", table=GPU_RULES)
def _barrier(lw: FunctionLowering, op, args):
    fn = lw.ml.declare_runtime("llvm.nvvm.barrier.cta.sync.aligned.all",
                               ir.FunctionType(VOID, [I32]), op)
    lw.builder.call(fn, [ir.Constant(I32, 0)])


@lowers("gpu.return", table=GPU_RULES)
def _return(lw: FunctionLowering, op, args):
    if args:
        raise lw.error("cannot be compiled for NVIDIA GPUs: kernels return no values")
    lw.builder.ret_void()


# ---------------------------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------------------------


@functools.cache
def _initialize() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def target_machine(arch: str = DEFAULT_ARCH, opt_level: int = 2) -> llvm.TargetMachine:
    """LLVM's NVPTX target machine for `arch` (`toolkit.GPU_ARCHS`)."""
    _initialize()
    check_arch(arch)
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, opt=opt_level)


def gpu_modules(module: Operation) -> list[Operation]:
    """The `gpu.module`s at the top level of `module` (a `builtin.module`)."""
    body = module.regions[0].blocks
    return [op for op in (body[0].ops if body else ()) if op.name == "gpu.module"]


def translate_kernels(module: Operation) -> tuple[list[ir.Module], list[KernelInfo]]:
    """The unoptimized llvmlite module of each `gpu.module` of `module`, and the kernels."""
    mods, kernels = [], []
    for gm in gpu_modules(module):
        ml = KernelModuleLowering(gm)
        mods.append(ml.translate())
        kernels += ml.kernels
    return mods, kernels


def nvptx_module(module: Operation, arch: str = DEFAULT_ARCH, opt_level: int = 2,
                 verify: bool = True) -> tuple[llvm.ModuleRef, list[KernelInfo]]:
    """Every kernel of `module` in one optimized NVPTX LLVM module (steps 1-3 of the module
    docstring), and the kernels."""
    if verify:
        module.verify()
    tm = target_machine(arch, opt_level)
    irmods, kernels = translate_kernels(module)
    mod = llvm.parse_assembly("")
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    for irmod in irmods:
        try:
            part = llvm.parse_assembly(str(irmod))
            part.data_layout = mod.data_layout
            part.verify()
        except RuntimeError as e:
            raise BackendError(f"internal error: the LLVM IR translated from this module's "
                               f"kernels is invalid: {e}", module.location) from None
        mod.link_in(part)
    link_libdevice(mod, {k.symbol for k in kernels})
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    # -O0 runs no global DCE: drop the libdevice functions nothing calls there too
    dce = llvm.create_new_module_pass_manager()
    dce.add_global_dead_code_eliminate_pass()
    dce.run(mod, pb)
    return mod, kernels


def emit_ptx(module: Operation, arch: str = DEFAULT_ARCH, opt_level: int = 2,
             verify: bool = True) -> tuple[str, list[KernelInfo]]:
    """The PTX text of every kernel of `module`, and the kernels."""
    mod, kernels = nvptx_module(module, arch, opt_level, verify)
    return target_machine(arch, opt_level).emit_assembly(mod), kernels


def emit_kernel_llvm_ir(module: Operation, arch: str = DEFAULT_ARCH, opt_level: int = 0) -> str:
    """The LLVM IR text of `module`'s kernels after the -O`opt_level` pipeline."""
    return str(nvptx_module(module, arch, opt_level)[0])
