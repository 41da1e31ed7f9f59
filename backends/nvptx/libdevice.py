"""Math on the GPU: the `math` ops as calls of NVIDIA's libdevice, linked into the kernels.

The CPU backend lowers `math.exp` to `llvm.exp.f32`, which LLVM turns into a call of the C
library's `expf`. The NVPTX target has no C library, and LLVM *aborts the process* when it
meets such an intrinsic there (`no libcall available for fexp`: no Python exception), so on
the GPU every elementary function must be something NVPTX can compile before LLVM sees the
module. libdevice (`libdevice.10.bc`, LLVM bitcode that ships with CUDA) is what nvcc and
MLIR's NVVM path use: `__nv_expf`, `__nv_tanhf`, ... with the C library's names, signatures
and documented accuracy (CUDA's Programming Guide, "Mathematical Functions": most f32
functions within 1-4 ulp), built on `llvm.nvvm.*` intrinsics.

Algorithm:

1. `MATH_RULES` replaces the shared rules of the `math` ops that would become C library calls
   or intrinsics NVPTX cannot lower (`llvm_arith.INTRINSIC_MATH` and `LIBM_MATH`, `fpowi`,
   `sincos`) by calls of `__nv_<name>f` (f32) / `__nv_<name>` (f64); f16 computes in f32 and
   rounds back (`llvm_arith.libm_call`, which the CPU rules use with the C library's names);
   vectors go lane by lane. The rules that only use intrinsics NVPTX lowers natively (`rsqrt`'s f64
   square root, the float classes' `fabs`, integer ops) stay shared.
2. `link_libdevice`: when the translated module declares a `__nv_` function, libdevice's
   bitcode is parsed (`llvm.parse_bitcode`), given the module's triple and data layout, and
   linked in; then every function and global the kernels do not export is made internal, so
   that LLVM's optimizer inlines what is used and global DCE drops the other ~570 functions.
   libdevice asks `__nvvm_reflect("__CUDA_FTZ")` whether subnormals are flushed; LLVM's
   NVVMReflect pass (part of the NVPTX target's pipeline) answers 0: IEEE subnormals, as
   numpy computes.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from irkit.backends.llvm_arith import INTRINSIC_MATH, LIBM_MATH, libm_call
from irkit.backends.llvm_lowering import FunctionLowering, lowers
from irkit.backends.nvptx.toolkit import require_libdevice

#: the math rules of GPU code (looked up before the shared `RULES`)
MATH_RULES: dict = {}

#: math op -> the C library's name of the libdevice function computing it: the names of the
#: CPU's tables (LLVM's intrinsics are named after the C library's functions), but
#: `roundeven`, which C spells `rint`
MATH_FUNCTIONS = {op: {"roundeven": "rint"}.get(name, name)
                  for op, name in {**INTRINSIC_MATH, **LIBM_MATH}.items()}
#: the prefix of libdevice's functions
PREFIX = "__nv_"


def libdevice_call(lw: FunctionLowering, name: str, *xs):
    """libdevice's `name` (C library spelling) on scalars or, lane by lane, vectors."""
    return lw.per_lane(lambda *lanes: libm_call(lw, name, *lanes, prefix=PREFIX), *xs)


@lowers(*MATH_FUNCTIONS, table=MATH_RULES)
def _math(lw: FunctionLowering, op, args):
    return libdevice_call(lw, MATH_FUNCTIONS[op.name], *args)


@lowers("math.fpowi", table=MATH_RULES)
def _fpowi(lw: FunctionLowering, op, args):
    """`pow(x, (float) n)`, as the interpreter and the CPU compute it."""
    x, n = args
    return libdevice_call(lw, "pow", x, lw.builder.sitofp(n, x.type))


@lowers("math.sincos", table=MATH_RULES)
def _sincos(lw: FunctionLowering, op, args):
    return [libdevice_call(lw, "sin", *args), libdevice_call(lw, "cos", *args)]


@functools.cache
def _bitcode(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def needs_libdevice(mod: llvm.ModuleRef) -> bool:
    """Whether the module declares a libdevice function."""
    return any(f.is_declaration and f.name.startswith(PREFIX) for f in mod.functions)


def link_libdevice(mod: llvm.ModuleRef, exported: set[str], path: str | None = None) -> None:
    """Link libdevice into `mod` when it calls it, and make every definition but the
    `exported` ones internal (see the module docstring)."""
    if not needs_libdevice(mod):
        return
    lib = llvm.parse_bitcode(_bitcode(path or require_libdevice()))
    lib.triple = mod.triple
    lib.data_layout = mod.data_layout
    mod.link_in(lib)
    for g in (*mod.functions, *mod.global_variables):
        if not g.is_declaration and g.name not in exported:
            g.linkage = "internal"
