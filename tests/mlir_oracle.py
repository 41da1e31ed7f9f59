"""MLIR as an independent oracle: run an MLIR module on tensors through MLIR's own pipeline.

irkit's structured level (`linalg` / `tensor` on tensors) must mean what MLIR says it means.
This harness asks MLIR itself: it lowers a module with `mlir-opt`, translates it with
`mlir-translate`, compiles the LLVM IR with llvmlite (LLVM 22, the same LLVM as MLIR 22) into
a shared library, and calls a function's C entry point on numpy arrays. Nothing here imports
irkit, so a bug in irkit cannot hide in its own oracle.

    out = run_mlir(text, "mlp_layer", [x, w, b])       # list of numpy arrays, one per result
    mod = compile_mlir(text)                           # compiled once per text (cached)
    mod("mlp_layer", x, w, b)                          # call it many times

How a call works (MLIR's C interface, `--llvm-request-c-wrappers`):

1. Every public function `@f` gets a wrapper `_mlir_ciface_f`. A ranked memref crosses it as a
   pointer to its descriptor `{allocated, aligned, offset, sizes[rank], strides[rank]}`
   (rank 0: `{allocated, aligned, offset}`); a scalar crosses as itself.
2. Results: none -> `void`; one scalar -> returned; one memref, or several results of any
   kind -> the wrapper takes a pointer to the result (a descriptor, or a struct of all the
   results in order) as its *first* argument and returns `void`.
3. Tensor arguments are passed as fresh C-contiguous copies, because one-shot bufferization
   may write into a function argument's buffer; memref arguments are passed by reference, so
   a function that writes a memref argument writes the caller's array (it must be
   C-contiguous, writable and of the declared dtype).
4. Each tensor result comes back in a buffer that MLIR malloc'ed: the ownership-based
   deallocation pipeline clones any result it does not own (an argument, a constant), so
   every result is fresh. The harness copies it into a numpy array and frees it. As a guard
   for pipelines without that step, it never frees a pointer inside an argument's buffer,
   MLIR's marker for a global (`0xdeadbeef`), or the same pointer twice.

What is not supported: unranked, strided-layout and memory-space memrefs, tensor encodings,
vectors, complex numbers, f16 and bf16 scalars (f16 tensors are fine; bf16 has no numpy
dtype). The tests skip (`pytest.skip`) when `mlir-opt`, `mlir-translate`, a C compiler or a
recent enough llvmlite is missing.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import glob
import os
import re
import shutil
import subprocess
import tempfile
from typing import Sequence

import numpy as np

__all__ = ["PIPELINE", "MlirOracleError", "MlirToolError", "Toolchain", "ValueType",
           "Signature", "CompiledModule", "find_toolchain", "missing_tools",
           "require_toolchain", "lower_to_llvm_dialect", "translate_to_llvm_ir",
           "function_signatures", "parse_type", "descriptor_type", "compile_mlir", "run_mlir"]

LLVM_ROOT = "/usr/lib/llvm-22"
MLIR_MAJOR = 22

# The lowering, one named stage a line, in the order mlir-opt runs them.
PIPELINE: tuple[str, ...] = (
    # First, so that only the module's own functions get `_mlir_ciface_` wrappers (not the
    # libm declarations added below: a wrapper on a declaration would call a missing symbol).
    "--llvm-request-c-wrappers",
    # Tensors -> memrefs, function signatures included; results get the identity layout, so a
    # returned slice is copied into a dense buffer the caller can read with plain strides.
    "--one-shot-bufferize=bufferize-function-boundaries"
    " function-boundary-type-conversion=identity-layout-map",
    # Frees intermediate buffers and makes every returned buffer owned by the caller.
    "--buffer-deallocation-pipeline",
    "--convert-bufferization-to-memref",       # bufferization.clone -> memref.alloc + copy
    "--convert-linalg-to-loops",               # named and generic ops -> scf.for nests
    "--expand-strided-metadata",               # subview / reshape -> reinterpret_cast
    "--lower-affine",                          # affine.apply (from the two above) -> arith
    "--convert-scf-to-cf",
    # tanh, erf, exp, log... -> calls into the C math library (math-to-llvm has no erf).
    "--convert-math-to-libm",
    "--finalize-memref-to-llvm",               # memref.alloc -> malloc, copies -> memcpy
    "--convert-math-to-llvm",                  # what libm does not cover: absf, sqrt, fma...
    "--convert-arith-to-llvm",
    "--convert-index-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-ub-to-llvm",
    "--reconcile-unrealized-casts",
)

# MLIR's `allocated` pointer of a `memref.get_global` (a constant buffer nobody may free).
_GLOBAL_MARKER = 0xDEADBEEF


class MlirOracleError(RuntimeError):
    """The harness could not lower, compile or call a module (bad input or bad usage)."""


class MlirToolError(MlirOracleError):
    """A tool of the chain failed; carries its command line and its stderr."""

    def __init__(self, tool: str, command: Sequence[str], returncode: int, stderr: str):
        self.tool, self.command, self.returncode, self.stderr = tool, list(command), \
            returncode, stderr
        super().__init__(f"{tool} failed (exit {returncode}): {' '.join(command)}\n"
                         f"{stderr.strip()}")


# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Toolchain:
    """Where the tools are: MLIR's two drivers, the C compiler that links the shared library,
    and MLIR's C runtime support library (`memrefCopy` for non-contiguous copies), if any."""
    mlir_opt: str
    mlir_translate: str
    cc: str
    runtime_libs: tuple[str, ...]


def _find_tool(name: str) -> str | None:
    """LLVM 22's copy first (the version this harness is written against), then PATH."""
    pinned = os.path.join(LLVM_ROOT, "bin", name)
    if os.access(pinned, os.X_OK):
        return pinned
    return shutil.which(name)


def _runtime_libs(mlir_opt: str) -> tuple[str, ...]:
    """`libmlir_c_runner_utils.so*` next to the tools (`bin/../lib`), the real file."""
    libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(mlir_opt))), "lib")
    found = sorted(glob.glob(os.path.join(libdir, "libmlir_c_runner_utils.so*")))
    return (found[0],) if found else ()


def _llvmlite_problem() -> str | None:
    """Why llvmlite cannot compile MLIR 22's LLVM IR here, or None when it can (its LLVM must
    be at least as new as MLIR's: older parsers reject newer IR)."""
    try:
        import llvmlite.binding as llvm
    except ImportError:
        return "llvmlite is not installed"
    if llvm.llvm_version_info[0] < MLIR_MAJOR:
        return f"llvmlite's LLVM {llvm.llvm_version_info} is older than MLIR {MLIR_MAJOR}"
    return None


def missing_tools() -> list[str]:
    """What this machine lacks to run the oracle (empty when everything is there)."""
    missing = [name for name in ("mlir-opt", "mlir-translate") if _find_tool(name) is None]
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        missing.append("a C compiler (cc, gcc or clang)")
    problem = _llvmlite_problem()
    return missing + ([problem] if problem else [])


@functools.cache
def find_toolchain() -> Toolchain | None:
    """The toolchain, or None when something in `missing_tools()` is missing."""
    if missing_tools():
        return None
    mlir_opt = _find_tool("mlir-opt")
    cc = next(shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c))
    return Toolchain(mlir_opt, _find_tool("mlir-translate"), cc, _runtime_libs(mlir_opt))


def require_toolchain() -> Toolchain:
    """The toolchain; skips the calling test (`pytest.skip`) with the reason if incomplete."""
    tools = find_toolchain()
    if tools is None:
        import pytest
        pytest.skip("MLIR oracle unavailable: missing " + ", ".join(missing_tools()))
    return tools


def _run_tool(command: list[str], stdin: str, tool: str) -> str:
    proc = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise MlirToolError(tool, command, proc.returncode, proc.stderr)
    return proc.stdout


def lower_to_llvm_dialect(text: str) -> str:
    """`text` after `PIPELINE`: a module in MLIR's `llvm` dialect (mlir-opt reads stdin, so
    its diagnostics point at `<stdin>:line:col` of `text`)."""
    tools = require_toolchain()
    return _run_tool([tools.mlir_opt, *PIPELINE, "-"], text, "mlir-opt")


def translate_to_llvm_ir(lowered: str) -> str:
    """LLVM IR text of an `llvm`-dialect module (from `lower_to_llvm_dialect`)."""
    tools = require_toolchain()
    return _run_tool([tools.mlir_translate, "--mlir-to-llvmir", "-"], lowered,
                     "mlir-translate")


# ---------------------------------------------------------------------------------------------
# Signatures (read from mlir-opt's generic form, not from irkit)
# ---------------------------------------------------------------------------------------------

# element type -> (numpy dtype, ctypes scalar type or None where ctypes has none)
ELEMENTS: dict[str, tuple[np.dtype, type | None]] = {
    "f16": (np.dtype(np.float16), None),
    "f32": (np.dtype(np.float32), ctypes.c_float),
    "f64": (np.dtype(np.float64), ctypes.c_double),
    "i1": (np.dtype(np.bool_), ctypes.c_bool),
    "i8": (np.dtype(np.int8), ctypes.c_int8),
    "i16": (np.dtype(np.int16), ctypes.c_int16),
    "i32": (np.dtype(np.int32), ctypes.c_int32),
    "i64": (np.dtype(np.int64), ctypes.c_int64),
    "index": (np.dtype(np.int64), ctypes.c_int64),   # 64-bit hosts only
}


@dataclasses.dataclass(frozen=True)
class ValueType:
    """A function argument or result: `kind` is "tensor", "memref" or "scalar"; `shape` has
    None for a dynamic size (`?`) and is () for scalars and 0-d shaped types."""
    kind: str
    shape: tuple[int | None, ...]
    element: str

    @property
    def dtype(self) -> np.dtype:
        return ELEMENTS[self.element][0]

    @property
    def shaped(self) -> bool:
        return self.kind != "scalar"

    def __str__(self) -> str:
        if not self.shaped:
            return self.element
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"{self.kind}<{dims}{self.element}>"


@dataclasses.dataclass(frozen=True)
class Signature:
    inputs: tuple[ValueType, ...]
    results: tuple[ValueType, ...]


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside any `<>`, `()`, `[]` or `{}` (the `>` of `->`
    is not a closing bracket)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ")]}" or (ch == ">" and text[i - 1] != "-"):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return parts + [tail] if tail or parts else parts


_SHAPED = re.compile(r"(tensor|memref)<((?:(?:\d+|\?)x)*)(\w+)>")


def parse_type(text: str) -> ValueType:
    """A `ValueType` from MLIR type syntax; raises `MlirOracleError` for what the harness
    cannot pass (see the module docstring): anything but a scalar or a ranked tensor or
    memref of a scalar, with no layout, memory space or encoding."""
    text = text.strip()
    if m := _SHAPED.fullmatch(text):
        kind, dims, element = m.group(1), m.group(2).split("x")[:-1], m.group(3)
    elif re.fullmatch(r"\w+", text):
        kind, dims, element = "scalar", [], text
    else:
        kind, dims, element = "", [], ""
    if element not in ELEMENTS:
        raise MlirOracleError(f"unsupported type '{text}'")
    return ValueType(kind, tuple(None if d == "?" else int(d) for d in dims), element)


def _closing(text: str) -> int:
    """Index of the `)` that closes the `(` at `text[0]`."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "(<[{"
        depth -= ch in ")]}" or (ch == ">" and text[i - 1] != "-")
        if depth == 0:
            return i
    raise MlirOracleError(f"unbalanced type '{text[:80]}'")


def _parse_function_type(text: str) -> tuple[list[str], list[str]]:
    """The input and result type lists of `(A, B) -> (C, D)` or `(A) -> C` at the start of
    `text` (which may go on past the type: `..., sym_name = "f"}> ({`)."""
    end = _closing(text)
    inputs = _split_top_level(text[1:end])
    rest = text[end + 1:].lstrip()
    if not rest.startswith("->"):
        raise MlirOracleError(f"cannot read the function type '{text[:80]}'")
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        return inputs, _split_top_level(rest[1:_closing(rest)])
    return inputs, _split_top_level(rest)[:1]


_FUNC_HEADER = re.compile(r'^\s*"func\.func"\(\) <\{(.*)\}> \(\{', re.MULTILINE)


def function_signatures(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """Input and result types (MLIR syntax) of every function with a body in `text`, read
    from mlir-opt's generic form (one `"func.func"() <{...}> ({` line each); declarations
    (empty region) are left out."""
    tools = require_toolchain()
    generic = _run_tool([tools.mlir_opt, "--mlir-print-op-generic", "-"], text, "mlir-opt")
    found = {}
    for m in _FUNC_HEADER.finditer(generic):
        props = m.group(1)
        name = re.search(r'\bsym_name = "([^"]*)"', props)
        ftype = props.find("function_type = ")
        declaration = generic[m.end():].lstrip().startswith("})")
        if name and ftype >= 0 and not declaration:
            found[name.group(1)] = _parse_function_type(props[ftype + len("function_type = "):])
    return found


# ---------------------------------------------------------------------------------------------
# Memref descriptors
# ---------------------------------------------------------------------------------------------


@functools.cache
def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """MLIR's ranked memref descriptor as a ctypes struct (the layout of the LLVM struct
    `{ptr, ptr, i64, [rank x i64], [rank x i64]}`; rank 0 has no size and stride arrays)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


def _ctype(t: ValueType) -> type:
    """The ctypes type of `t` inside a result struct (a descriptor, or the scalar itself)."""
    if t.shaped:
        return descriptor_type(len(t.shape))
    scalar = ELEMENTS[t.element][1]
    if scalar is None:
        raise MlirOracleError(f"{t} scalars cannot cross ctypes (no C type for it)")
    return scalar


def _descriptor_of(array: np.ndarray) -> ctypes.Structure:
    """A descriptor viewing `array` (C-contiguous) in place: offset 0, strides in elements."""
    desc = descriptor_type(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        desc.sizes[:] = list(array.shape)
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


def _array_from(desc: ctypes.Structure, t: ValueType) -> np.ndarray:
    """A copy of the memref that `desc` describes, as a numpy array of `t`'s dtype."""
    rank = len(t.shape)
    shape = tuple(desc.sizes) if rank else ()
    strides = tuple(desc.strides) if rank else ()
    if any(n == 0 for n in shape):
        return np.zeros(shape, t.dtype)
    if any(s < 0 for s in strides):
        raise MlirOracleError(f"result {t} has negative strides {strides}")
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    itemsize = t.dtype.itemsize
    base = (ctypes.c_char * (extent * itemsize)).from_address(desc.aligned +
                                                              desc.offset * itemsize)
    flat = np.frombuffer(base, dtype=t.dtype, count=extent)
    view = np.lib.stride_tricks.as_strided(flat, shape, tuple(s * itemsize for s in strides))
    return np.array(view, copy=True, order="C")


@functools.cache
def _libc_free():
    free = ctypes.CDLL(None).free
    free.argtypes, free.restype = [ctypes.c_void_p], None
    return free


# ---------------------------------------------------------------------------------------------
# Compilation and calls
# ---------------------------------------------------------------------------------------------


def _compile_shared(llvm_ir: str, opt_level: int, directory: str, tools: Toolchain) -> str:
    """Optimize `llvm_ir` at -O`opt_level` and compile it with llvmlite to an object file for
    this machine, then link it with `cc -shared` (plus libm and MLIR's C runtime library,
    found again at load time through an rpath). Returns the library's path."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                      features=llvm.get_host_cpu_features().flatten(),
                                      opt=opt_level, reloc="pic", codemodel="default")
    try:
        mod = llvm.parse_assembly(llvm_ir)
        mod.verify()
    except RuntimeError as e:
        raise MlirOracleError(f"llvmlite cannot read mlir-translate's LLVM IR: {e}") from None
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    if opt_level:
        pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(opt_level))
        pb.getModulePassManager().run(mod, pb)
    obj = os.path.join(directory, "module.o")
    with open(obj, "wb") as f:
        f.write(tm.emit_object(mod))
    lib = os.path.join(directory, "module.so")
    rpaths = [f"-Wl,-rpath,{os.path.dirname(r)}" for r in tools.runtime_libs]
    command = [tools.cc, "-shared", "-o", lib, obj, *tools.runtime_libs, *rpaths, "-lm"]
    _run_tool(command, "", os.path.basename(tools.cc))
    return lib


class CompiledModule:
    """An MLIR module lowered and compiled by MLIR's own pipeline, loaded in this process.

    `module("f", *args)` calls `@f` and returns its results as numpy arrays (scalars as 0-d
    arrays). `lowered` (the `llvm`-dialect module) and `llvm_ir` are kept for debugging."""

    def __init__(self, text: str, opt_level: int = 2):
        tools = require_toolchain()
        self.text = text
        self._types = function_signatures(text)
        self.lowered = lower_to_llvm_dialect(text)
        self.llvm_ir = translate_to_llvm_ir(self.lowered)
        # The library stays mapped after its file is gone (Linux), so nothing is left behind.
        with tempfile.TemporaryDirectory(prefix="mlir-oracle-") as tmp:
            path = _compile_shared(self.llvm_ir, opt_level, tmp, tools)
            try:
                self._lib = ctypes.CDLL(path)
            except OSError as e:
                raise MlirOracleError(f"cannot load the compiled module: {e}") from None
        self._entries: dict[str, tuple[Signature, ctypes._CFuncPtr, type | None]] = {}

    @property
    def functions(self) -> list[str]:
        return sorted(self._types)

    def signature(self, function: str) -> Signature:
        return self._entry(function)[0]

    def _entry(self, function: str) -> tuple[Signature, ctypes._CFuncPtr, type | None]:
        """`@function`'s signature, its `_mlir_ciface_` entry point with ctypes types, and the
        type its first argument points to where results come back through it (else None)."""
        if function in self._entries:
            return self._entries[function]
        if function not in self._types:
            raise MlirOracleError(f"no function @{function} in the module "
                                  f"(it has {', '.join('@' + f for f in self.functions)})")
        inputs, results = self._types[function]
        sig = Signature(tuple(map(parse_type, inputs)), tuple(map(parse_type, results)))
        try:
            entry = getattr(self._lib, f"_mlir_ciface_{function}")
        except AttributeError:
            raise MlirOracleError(f"@{function} has no C entry point (is it private?)") from None
        argtypes = [ctypes.POINTER(_ctype(t)) if t.shaped else _ctype(t) for t in sig.inputs]
        entry.restype, out = None, None
        if len(sig.results) == 1 and not sig.results[0].shaped:
            entry.restype = _ctype(sig.results[0])
        elif sig.results:
            out = self._result_struct(sig)
            argtypes.insert(0, ctypes.POINTER(out))
        entry.argtypes = argtypes
        self._entries[function] = sig, entry, out
        return self._entries[function]

    @staticmethod
    def _result_struct(sig: Signature) -> type:
        """What the entry point writes through its first argument: the descriptor of a single
        memref result, else a struct of all the results in order."""
        if len(sig.results) == 1:
            return _ctype(sig.results[0])
        fields = [(f"r{i}", _ctype(t)) for i, t in enumerate(sig.results)]
        return type("Results", (ctypes.Structure,), {"_fields_": fields})

    def __call__(self, function: str, *args) -> list[np.ndarray]:
        sig, entry, out_type = self._entry(function)
        if len(args) != len(sig.inputs):
            raise MlirOracleError(f"@{function} takes {len(sig.inputs)} arguments "
                                  f"({', '.join(map(str, sig.inputs))}), got {len(args)}")
        arrays, cargs = [], []
        for i, (t, a) in enumerate(zip(sig.inputs, args)):
            value = _argument(function, i, t, a)
            if t.shaped:
                arrays.append(value)
                value = ctypes.byref(_descriptor_of(value))
            cargs.append(value)
        if out_type is None:                   # no result, or a single scalar returned
            value = entry(*cargs)
            return [np.asarray(value, dtype=t.dtype) for t in sig.results]
        out = out_type()
        entry(ctypes.byref(out), *cargs)
        values = [out] if len(sig.results) == 1 else [getattr(out, f"r{i}")
                                                      for i in range(len(sig.results))]
        results = [_array_from(v, t) if t.shaped else np.asarray(v, dtype=t.dtype)
                   for v, t in zip(values, sig.results)]
        _free_results([v for v, t in zip(values, sig.results) if t.shaped], arrays)
        return results


def _argument(function: str, index: int, t: ValueType, value):
    """Argument `index` of `@function` checked against `t`: a C-contiguous numpy array for a
    shaped type (a copy for a tensor, the caller's own array for a memref), else a ctypes
    scalar."""
    where = f"@{function} argument {index} ({t})"
    if not t.shaped:
        return _ctype(t)(_scalar(where, t, value))
    array = np.asarray(value)
    if array.dtype != t.dtype:
        raise MlirOracleError(f"{where}: expected dtype {t.dtype}, got {array.dtype}")
    if array.ndim != len(t.shape) or any(d is not None and d != n
                                         for d, n in zip(t.shape, array.shape)):
        raise MlirOracleError(f"{where}: shape {array.shape} does not match")
    if t.kind == "tensor":
        return np.array(array, copy=True, order="C")
    if not (array.flags.c_contiguous and array.flags.writeable) or array is not value:
        raise MlirOracleError(f"{where}: a memref argument must be a writable C-contiguous "
                              f"numpy array (the function may write it in place)")
    return array


def _scalar(where: str, t: ValueType, value) -> bool | int | float:
    """`value` as a Python number of `t`'s kind: a float type takes any real number, an
    integer type an integer in its range (no silent wrapping or truncation)."""
    v = np.asarray(value)
    if v.ndim == 0 and t.dtype.kind == "f" and v.dtype.kind in "biuf":
        return float(v)
    if v.ndim == 0 and t.dtype.kind == "b" and v.dtype.kind == "b":
        return bool(v)
    if v.ndim == 0 and t.dtype.kind == "i" and v.dtype.kind in "biu":
        info = np.iinfo(t.dtype)
        if info.min <= int(v) <= info.max:
            return int(v)
    raise MlirOracleError(f"{where}: expected a scalar of {t.element}, got {value!r}")


def _free_results(descriptors: list[ctypes.Structure], arguments: list[np.ndarray]) -> None:
    """Free the buffers MLIR malloc'ed for the results (see the module docstring, point 4)."""
    spans = [(a.ctypes.data, a.ctypes.data + a.nbytes) for a in arguments]
    freed = set()
    for desc in descriptors:
        p = desc.allocated
        if not p or p == _GLOBAL_MARKER or p in freed or any(lo <= p < hi for lo, hi in spans):
            continue
        freed.add(p)
        _libc_free()(p)


_CACHE: dict[tuple[str, int], CompiledModule] = {}


def compile_mlir(text: str, opt_level: int = 2) -> CompiledModule:
    """`text` compiled by MLIR's pipeline, once per (text, opt_level) in this process."""
    key = (text, opt_level)
    if key not in _CACHE:
        _CACHE[key] = CompiledModule(text, opt_level)
    return _CACHE[key]


def run_mlir(text: str, function: str, args: Sequence, opt_level: int = 2) -> list[np.ndarray]:
    """Run `@function` of the MLIR module `text` on `args` (numpy arrays for tensors and
    memrefs, Python or numpy scalars for scalars) through MLIR's own lowering; one numpy
    array per result. Skips the calling test when the toolchain is missing."""
    return compile_mlir(text, opt_level)(function, *args)
