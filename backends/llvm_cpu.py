"""The LLVM CPU backend: irkit IR (`func`, `arith`, `math`, `loop`, `memory`) to machine code
for the host CPU, run in process or written out as an object file and a shared library.

    jit = compile_module(module, opt_level=2)
    y = jit.f(x, 3)                     # numpy in, numpy out
    obj = emit_object(module)           # ELF/Mach-O bytes for the host
    link_shared([obj], "model.so")      # `cc -shared`

Algorithm:

1. Verify the module (a malformed one is reported by the verifier, not by LLVM).
2. Translate it with llvmlite's `IRBuilder` and a value map (`llvm_lowering.ModuleLowering`,
   with the rules of `llvm_arith` and `llvm_memory`); an op or type without a translation is
   a located `BackendError` naming it.
3. Parse the result into an LLVM module for the host triple and data layout, and check it
   with LLVM's verifier (a failure there is a bug in a rule, reported as such).
4. Optimize with LLVM's new pass manager (`PassBuilder`) at -O0..-O3, tuned for the host:
   the target machine is made for `llvm.get_host_cpu_name()` with the features
   `llvm.get_host_cpu_features()` reports, so the vectorizers use the widest vector ISA the
   machine has (AVX-512, AVX2, NEON, ...).
5. Either hand the module to MCJIT and wrap each public function in a `JitFunction`
   (`llvm_abi`), or emit an object file / assembly text.

Calling convention (the C interface, detailed in `llvm_lowering` and docs/backend.md): each
`func.func @f` is a symbol `f` of type `void f(args..., result_ptrs...)`. Scalars are passed
by value (`i1` as a byte, `f16` as its 16 bits), vectors as pointers to their elements,
memrefs as pointers to MLIR's descriptor `{T* allocated, T* aligned, i64 offset,
i64 sizes[R], i64 strides[R]}`, and every result is written through a pointer appended after
the arguments.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import subprocess
import tempfile
import time

import llvmlite.binding as llvm
import llvmlite.ir as ir

from irkit.ir import Operation
from irkit.backends import (  # noqa: F401  (register their rules)
    llvm_arith, llvm_memory, llvm_parallel, llvm_vector,
)
from irkit.backends.llvm_abi import JitFunction
from irkit.backends.llvm_lowering import ModuleLowering, Signature
from irkit.backends.llvm_types import BackendError, error_at

__all__ = ["compile_module", "JitModule", "translate", "optimized_module", "emit_llvm_ir",
           "emit_object", "emit_assembly", "link_shared", "load_shared", "host_cpu",
           "host_target", "missing_features", "run_interruptibly", "BackendError"]


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # The C math library, for the calls the code makes (erff, tanhf, ...): the Python
    # executable usually has it loaded already; this makes sure MCJIT can resolve it.
    # And the compiler's runtime library, for the helpers LLVM's code generator calls where
    # the CPU has no instruction: half-precision conversions (`__truncdfhf2` for f64 -> f16
    # everywhere without AVX512-FP16, `__extendhfsf2` without F16C). Nothing has it loaded;
    # an unresolved helper would be a call to address 0. A linked .so gets it from `cc`.
    for name in ("m", "gcc_s"):
        lib = ctypes.util.find_library(name)
        if lib:
            llvm.load_library_permanently(lib)


def host_cpu() -> tuple[str, str]:
    """(CPU name, feature string) of this machine, as LLVM detects them."""
    _initialize()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_target() -> dict[str, str]:
    """What code compiled here is built for: the process triple, the CPU name and its
    feature string (`+avx2,-avx512f,...`), as the target machine is made from them. A
    library records it, so that loading it where the CPU lacks a feature is refused."""
    cpu, features = host_cpu()
    return {"triple": llvm.get_process_triple(), "cpu": cpu, "features": features}


def missing_features(target: dict[str, str]) -> list[str]:
    """The features enabled in `target` (from `host_target`, maybe another machine's) that
    this machine's CPU lacks."""
    have = {f for f in host_cpu()[1].split(",") if f.startswith("+")}
    return [f for f in target.get("features", "").split(",") if f.startswith("+") and
            f not in have]


def run_interruptibly(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, run on a helper thread while this one waits for it.

    LLVM's optimization and code generation are long calls into C (tens of seconds for a
    big model); Python runs a SIGINT handler only between bytecodes of the main thread, so
    Ctrl-C during them would take effect only when they return. llvmlite's calls release
    the GIL, so the main thread, waiting here, gets `KeyboardInterrupt` within milliseconds.
    The helper thread is then abandoned: it finishes its work in the background (holding
    llvmlite's lock until then) and its result is dropped; a tool exits right away."""
    import threading
    result: dict = {}

    def work():
        try:
            result["value"] = fn(*args, **kwargs)
        except BaseException as e:              # handed to the waiting thread
            result["error"] = e

    t = threading.Thread(target=work, name="irkit-llvm", daemon=True)
    t.start()
    t.join()
    if "error" in result:
        raise result.pop("error")
    return result["value"]


@functools.cache
def _target_machine(opt_level: int, jit: bool) -> llvm.TargetMachine:
    """The host target machine (shared: never hand it to an execution engine, which takes
    ownership and deletes it with itself)."""
    return _new_target_machine(opt_level, jit)


def _new_target_machine(opt_level: int, jit: bool) -> llvm.TargetMachine:
    """A host target machine; position-independent code for objects (shared libraries)."""
    cpu, features = host_cpu()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(cpu=cpu, features=features, opt=opt_level,
                                        reloc="default" if jit else "pic",
                                        codemodel="jitdefault" if jit else "default")


def _check_opt_level(opt_level: int) -> None:
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")


# ---------------------------------------------------------------------------------------------
# Translation and optimization
# ---------------------------------------------------------------------------------------------


def translate(module: Operation, verify: bool = True, threads: int = 1) -> ir.Module:
    """The unoptimized llvmlite module of an irkit `builtin.module`."""
    return _translate(module, verify, threads)[0]


def _translate(module: Operation, verify: bool,
               threads: int) -> tuple[ir.Module, ModuleLowering]:
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    if verify:
        module.verify()
    ml = ModuleLowering(module, threads=threads)
    return ml.translate(), ml


def optimized_module(module: Operation, opt_level: int = 2, *, threads: int = 1,
                     jit: bool = False,
                     timings: dict | None = None) -> tuple[llvm.ModuleRef, ModuleLowering]:
    """Translate, parse, verify and optimize `module` for the host; `timings` (if given)
    receives the milliseconds of each step. `threads` > 1 runs each outermost
    `loop.parallel` on that many threads (see `llvm_parallel`)."""
    _check_opt_level(opt_level)
    _initialize()
    t0 = time.perf_counter()
    irmod, ml = _translate(module, True, threads)
    t1 = time.perf_counter()
    tm = _target_machine(opt_level, jit)
    try:
        mod = llvm.parse_assembly(str(irmod))
        mod.verify()
    except RuntimeError as e:
        raise BackendError(f"internal error: the LLVM IR translated from this module is "
                           f"invalid: {e}", module.location) from None
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    t2 = time.perf_counter()
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    t3 = time.perf_counter()
    if timings is not None:
        timings.update(translate_ms=(t1 - t0) * 1e3, parse_ms=(t2 - t1) * 1e3,
                       optimize_ms=(t3 - t2) * 1e3)
    return mod, ml


def emit_llvm_ir(module: Operation, opt_level: int = 0, threads: int = 1) -> str:
    """The LLVM IR text of `module` after the -O`opt_level` pipeline (for FileCheck)."""
    return str(optimized_module(module, opt_level, threads=threads)[0])


def emit_object(module: Operation, opt_level: int = 2, threads: int = 1) -> bytes:
    """A relocatable, position-independent object file of `module` for the host CPU; its
    public functions are global symbols with the C interface (see the module docstring)."""
    mod, _ = optimized_module(module, opt_level, threads=threads)
    return _target_machine(opt_level, False).emit_object(mod)


def emit_assembly(module: Operation, opt_level: int = 2, threads: int = 1) -> str:
    """The host assembly text of `module`."""
    mod, _ = optimized_module(module, opt_level, threads=threads)
    return _target_machine(opt_level, False).emit_assembly(mod)


# ---------------------------------------------------------------------------------------------
# In-process JIT
# ---------------------------------------------------------------------------------------------


class JitModule:
    """The compiled public functions of a module, as attributes: `jit.f(x, y)`.

    `timings` holds the milliseconds each compilation step took, `llvm_ir` the optimized
    LLVM IR text.
    """

    def __init__(self, functions: dict[str, JitFunction], llvm_ir: str, timings: dict,
                 owner) -> None:
        self.functions = functions
        self.llvm_ir = llvm_ir
        self.timings = timings
        self._owner = owner         # the execution engine (or library) holding the code

    def __getattr__(self, name: str) -> JitFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"no public function '@{name}' in the compiled module (it has "
                             f"{', '.join('@' + n for n in sorted(functions)) or 'none'})")

    def __getitem__(self, name: str) -> JitFunction:
        return getattr(self, name)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions)


def compile_module(module: Operation, opt_level: int = 2, threads: int = 1) -> JitModule:
    """Compile `module` for this machine and load it into the process (MCJIT); `threads` > 1
    runs each outermost `loop.parallel` on that many threads."""
    timings: dict = {}
    mod, ml = optimized_module(module, opt_level, threads=threads, jit=True, timings=timings)
    _check_symbols(ml)
    text = str(mod)
    t0 = time.perf_counter()
    engine = llvm.create_mcjit_compiler(mod, _new_target_machine(opt_level, True))
    engine.finalize_object()
    timings["codegen_ms"] = (time.perf_counter() - t0) * 1e3
    functions = {}
    for name, (_, sig, fn) in ml.functions.items():
        if _is_public_definition(fn):
            addr = engine.get_function_address(name)
            functions[name] = JitFunction(name, sig.inputs, sig.results, addr, engine)
    return JitModule(functions, text, timings, engine)


def _is_public_definition(fn: Operation) -> bool:
    vis = fn.properties.get("sym_visibility")
    return bool(fn.regions[0].blocks) and (vis is None or vis.value == "public")


def _check_symbols(ml: ModuleLowering) -> None:
    """Every external function the code calls must exist in the process: MCJIT aborts the
    whole process on an unresolved symbol, so it is checked here first."""
    for name, (_, _, fn) in ml.functions.items():
        if not fn.regions[0].blocks and not llvm.address_of_symbol(name):
            raise error_at(fn, f"declares external function '@{name}', which is not defined "
                               "in the module and not found in this process")
    for name in sorted(ml.runtime_symbols):
        if not llvm.address_of_symbol(name):
            raise BackendError(f"the C library function '{name}' the compiled code calls is "
                               "not available in this process", ml.module.location)


# ---------------------------------------------------------------------------------------------
# Shared libraries
# ---------------------------------------------------------------------------------------------


def find_c_compiler() -> str | None:
    """The system C compiler driver used to link (`cc`, else `gcc`, else `clang`)."""
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


def link_shared(objects: list[bytes], path: str | os.PathLike,
                libraries: tuple[str, ...] = ("m", "pthread")) -> str:
    """Link object files (from `emit_object`) into the shared library `path` with the system
    C compiler (`cc -shared -o path *.o -lm -lpthread`)."""
    cc = find_c_compiler()
    if cc is None:
        raise BackendError("no C compiler (cc, gcc or clang) found to link a shared library")
    path = os.fspath(path)
    with tempfile.TemporaryDirectory(prefix="irkit-link-") as tmp:
        files = []
        for i, obj in enumerate(objects):
            f = os.path.join(tmp, f"part{i}.o")
            with open(f, "wb") as fh:
                fh.write(obj)
            files.append(f)
        cmd = [cc, "-shared", "-o", path, *files, *(f"-l{lib}" for lib in libraries)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BackendError(f"linking '{path}' failed ({' '.join(cmd)}):\n{proc.stderr.strip()}")
    return path


def load_shared(path: str | os.PathLike, module: Operation) -> JitModule:
    """Load a shared library built from `module` and wrap its public functions as
    `compile_module` does (the module supplies the signatures)."""
    lib = ctypes.CDLL(os.fspath(path))
    functions = {}
    for fn in module.regions[0].blocks[0].ops if module.regions[0].blocks else ():
        if fn.name == "func.func" and _is_public_definition(fn):
            name = fn.properties["sym_name"].value
            sig = Signature(fn)
            addr = ctypes.cast(lib[name], ctypes.c_void_p).value
            functions[name] = JitFunction(name, sig.inputs, sig.results, addr, lib)
    return JitModule(functions, "", {}, lib)
