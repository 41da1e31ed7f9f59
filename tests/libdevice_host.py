"""libdevice's f32 functions compiled for this CPU, to measure their accuracy without a GPU.

The GPU kernels call NVIDIA's libdevice (`irkit.backends.nvptx.libdevice`). Its functions are
LLVM bitcode built on `llvm.nvvm.*` intrinsics and a few PTX inline-assembly lines, which the
x86 target cannot compile. `host_functions` makes the same bitcode run here: the module's text
has every `@llvm.nvvm.X` renamed `@irkit.emu.X` and each known inline-assembly call replaced
by a call of `@irkit.emu.<name>`, and `emulation_module` defines those functions with LLVM's
own operations (`fma.rn.f` is `llvm.fma.f32`, `ex2.approx.f32` is `llvm.exp2.f32`,
`add.rz.f` rounds the exact f64 sum toward zero, ...); `__nvvm_reflect` answers 0 (no
flushing of subnormals, as NVPTX's NVVMReflect does for irkit's kernels). What differs from a
GPU is only the hardware approximations (`ex2.approx`, `lg2.approx`, `rsqrt.approx`, `rcp
.approx`: a couple of ulp on the GPU, correctly rounded here); the algorithms -- range
reduction, polynomials, special cases -- are libdevice's own.

The `.ftz` variants are emulated as the plain ones: under `__nvvm_reflect` = 0 libdevice uses
them only where its arguments are known not to be subnormal.

A function whose code still needs something not emulated after optimization is reported by
`host_functions` as missing rather than compiled (MCJIT would abort the process).
"""

from __future__ import annotations

import ctypes
import functools
import re

import llvmlite.binding as llvm
import llvmlite.ir as ir

from irkit.backends.nvptx.toolkit import require_libdevice

F32, F64, I32, I64 = ir.FloatType(), ir.DoubleType(), ir.IntType(32), ir.IntType(64)
EMU = "irkit.emu."
#: the inline-assembly lines of libdevice's f32 functions -> their emulation
_ASM = {"rcp.approx.ftz.f32 $0,$1;": "rcp.f32", "sub.rn.f32 $0, $1, $2;": "sub.rn.f32",
        "sub.rn.ftz.f32 $0, $1, $2;": "sub.rn.f32"}


def _declare(m: ir.Module, name: str, ret, args) -> ir.Function:
    g = m.globals.get(name)
    return g if g is not None else ir.Function(m, ir.FunctionType(ret, args), name)


def _step_toward_zero(b: ir.IRBuilder, r: ir.Value) -> ir.Value:
    """The f32 next to nonzero `r` with a smaller magnitude (sign-magnitude bits minus 1)."""
    return b.bitcast(b.sub(b.bitcast(r, I32), ir.Constant(I32, 1)), F32)


def _emulations() -> dict:
    """name -> (argument count, body(builder, module, args) -> value), f32 unless said."""
    def call(b, m, intrinsic, *xs, ret=F32):
        return b.call(_declare(m, intrinsic, ret, [x.type for x in xs]), list(xs))

    def wide(b, x):
        return b.fpext(x, F64)

    def rz(b, m, exact):                    # f64 -> f32 rounding toward zero
        r = b.fptrunc(exact, F32)
        grew = b.fcmp_ordered(">", call(b, m, "llvm.fabs.f64", wide(b, r), ret=F64),
                              call(b, m, "llvm.fabs.f64", exact, ret=F64))
        return b.select(grew, _step_toward_zero(b, r), r)

    def rm(b, m, exact):                    # f64 -> f32 rounding down
        r = b.fptrunc(exact, F32)
        above = b.fcmp_ordered(">", wide(b, r), exact)
        down = b.select(b.fcmp_ordered(">", r, ir.Constant(F32, 0.0)), _step_toward_zero(b, r),
                        b.fsub(r, b.fmul(call(b, m, "llvm.fabs.f32", r),
                                         ir.Constant(F32, 2.0 ** -23))))
        return b.select(above, down, r)

    def sat(b, m, x):
        low = b.fcmp_ordered(">", x, ir.Constant(F32, 0.0))
        return b.select(low, call(b, m, "llvm.minnum.f32", x, ir.Constant(F32, 1.0)),
                        ir.Constant(F32, 0.0))

    return {
        "fma.rn.f": (3, lambda b, m, a: call(b, m, "llvm.fma.f32", *a)),
        "fma.rm.f": (3, lambda b, m, a: rm(b, m, call(b, m, "llvm.fma.f64",
                                                       *(wide(b, x) for x in a), ret=F64))),
        "add.rn.f": (2, lambda b, m, a: b.fadd(*a)),
        "add.rz.f": (2, lambda b, m, a: rz(b, m, b.fadd(wide(b, a[0]), wide(b, a[1])))),
        "sub.rn.f32": (2, lambda b, m, a: b.fsub(*a)),
        "mul.rn.f": (2, lambda b, m, a: b.fmul(*a)),
        "div.rn.f": (2, lambda b, m, a: b.fdiv(*a)),
        "div.approx.f": (2, lambda b, m, a: b.fdiv(*a)),
        "rcp.f32": (1, lambda b, m, a: b.fdiv(ir.Constant(F32, 1.0), a[0])),
        "saturate.f": (1, lambda b, m, a: sat(b, m, a[0])),
        "ex2.approx.f32": (1, lambda b, m, a: call(b, m, "llvm.exp2.f32", a[0])),
        "lg2.approx.f": (1, lambda b, m, a: call(b, m, "llvm.log2.f32", a[0])),
        "sqrt.rn.f": (1, lambda b, m, a: call(b, m, "llvm.sqrt.f32", a[0])),
        "sqrt.approx.f": (1, lambda b, m, a: call(b, m, "llvm.sqrt.f32", a[0])),
        "rsqrt.approx.f": (1, lambda b, m, a: b.fdiv(ir.Constant(F32, 1.0),
                                                     call(b, m, "llvm.sqrt.f32", a[0]))),
        "fabs.f32": (1, lambda b, m, a: call(b, m, "llvm.fabs.f32", a[0])),
        "trunc.f": (1, lambda b, m, a: call(b, m, "llvm.trunc.f32", a[0])),
        "floor.f": (1, lambda b, m, a: call(b, m, "llvm.floor.f32", a[0])),
        "ceil.f": (1, lambda b, m, a: call(b, m, "llvm.ceil.f32", a[0])),
        "round.f": (1, lambda b, m, a: call(b, m, "llvm.rint.f32", a[0])),
        "f2i.rn": (1, lambda b, m, a: b.fptosi(call(b, m, "llvm.rint.f32", a[0]), I32)),
        "fmax.f": (2, lambda b, m, a: call(b, m, "llvm.maxnum.f32", *a)),
        "fmin.f": (2, lambda b, m, a: call(b, m, "llvm.minnum.f32", *a)),
    }


def emulation_module(names: set[str]) -> ir.Module:
    """Definitions of `@irkit.emu.<name>` for each emulated name in `names` (`.ftz` variants
    as the plain ones), and of `__nvvm_reflect` (0)."""
    m = ir.Module("irkit_emu")
    table = _emulations()
    for name in sorted(names):
        plain = name.replace(".ftz", "")
        if plain not in table:
            continue
        n, body = table[plain]
        ret = I32 if plain == "f2i.rn" else F32
        fn = ir.Function(m, ir.FunctionType(ret, [F32] * n), EMU + name)
        b = ir.IRBuilder(fn.append_basic_block())
        b.ret(body(b, m, list(fn.args)))
    reflect = ir.Function(m, ir.FunctionType(I32, [ir.PointerType()]), "__nvvm_reflect")
    ir.IRBuilder(reflect.append_basic_block()).ret(ir.Constant(I32, 0))
    return m


@functools.cache
def _host_libdevice_text() -> str:
    """libdevice's text for this CPU: nvvm intrinsics and known inline assembly renamed."""
    with open(require_libdevice(), "rb") as f:
        text = str(llvm.parse_bitcode(f.read()))
    text = text.replace("@llvm.nvvm.", "@" + EMU)
    for asm, name in _ASM.items():
        text = re.sub(r'call float asm( sideeffect)? "' + re.escape(asm) + r'", "[^"]*"',
                      f"call float @{EMU}{name}", text)
    arity = _emulations()
    text += "".join(f"declare float @{EMU}{name}({', '.join(['float'] * arity[name][0])})\n"
                    for name in sorted(set(_ASM.values())))
    text = re.sub(r'^target (triple|datalayout) = "[^"]*"$', "", text, flags=re.M)
    return text


@functools.cache
def _engine():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    return tm, llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)


def host_functions(names: list[str]) -> tuple[dict, list[str]]:
    """({name: ctypes float(float) or float(float, float)} for libdevice's `__nv_<name>f`
    compiled for this CPU, [names that could not be emulated]). Each function is compiled
    in a module of its own, so that one left unemulated never reaches MCJIT."""
    tm, engine = _engine()
    out, missing = {}, []
    for n in names:
        lib = _compiled(tm, f"__nv_{n}f")
        if lib is None:
            missing.append(n)
            continue
        engine.add_module(lib)
        engine.finalize_object()
        arity = len(list(lib.get_function(f"__nv_{n}f").arguments))
        proto = ctypes.CFUNCTYPE(ctypes.c_float, *[ctypes.c_float] * arity)
        out[n] = proto(engine.get_function_address(f"__nv_{n}f"))
    return out, missing


def _compiled(tm, name: str) -> llvm.ModuleRef | None:
    """libdevice optimized for this CPU with only `name` exported (everything else internal
    and dropped), or None when it does not exist or still needs something not emulated: an
    `irkit.emu.`/nvvm declaration or inline assembly."""
    text = _host_libdevice_text()
    if f"@{name}(" not in text:
        return None
    used = set(re.findall(r"@" + re.escape(EMU) + r"([\w.]+)\(", text))
    lib = llvm.parse_assembly(text)
    lib.link_in(llvm.parse_assembly(str(emulation_module(used))))
    for g in (*lib.functions, *lib.global_variables):
        if not g.is_declaration and g.name != name:
            g.linkage = "internal"
    lib.triple = tm.triple
    lib.data_layout = str(tm.target_data)
    pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
    pb.getModulePassManager().run(lib, pb)
    undefined = [f.name for f in lib.functions if f.is_declaration
                 and f.name.startswith((EMU, "llvm.nvvm", "__nv"))]
    return None if undefined or " asm " in str(lib) else lib
