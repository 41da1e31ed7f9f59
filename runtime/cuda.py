"""engine="cuda": a model compiled for an NVIDIA GPU and run through the CUDA driver.

    m = irkit.load_model("mlp.irk", engine="cuda")          # compiled here, run on GPU 0
    m = irkit.load("mlp.ptx")                               # from `irkit-compile -o mlp.ptx`
    m.train_step(x=..., y=...); m.variables["w1"]; m.save("w.npz")

What compiling produces (`GpuProgram`): the model lowered by the pipeline table's `nvptx`
rows (its kernels outlined into `gpu.module`s), the PTX of every kernel
(`irkit.backends.nvptx.emit_ptx`), and the host functions (`nvptx.host_module`: what is left
of each `func.func`, launches and device allocations), which are compiled for this CPU by the
LLVM backend when the program is loaded. `irkit-compile --target=nvptx -o M.ptx` writes the
PTX to `M.ptx` and the rest to `M.ptx.json` (the lowered and graph modules' text, the kernel
list, the architecture): the same JSON description a CPU library has next to it.

Loading (`CudaRunner`): the driver loads the PTX (`cuModuleLoadData`, which JIT-compiles it
for the GPU at hand) and looks up each kernel (`cuModuleGetFunction`); the host code's tables
are filled (`nvptx.host`: the driver's `cuLaunchKernel`, `cuMemAlloc_v2`, `cuMemFree_v2`,
`cuMemcpy`, and the kernel handles), so the compiled host code calls the driver directly.

A call: the inputs are copied to device buffers (kept between calls, reallocated when they
grow), the outputs get device buffers, the variables are device buffers that live as long as
the model (`DeviceStore`), the arena is allocated by the host code on the device; the host
function runs (its launches), then the outputs are copied back. Those are the only copies:
inputs, outputs, and the three words of the run-time error status. Reading a variable
(`model.variables[n]`, `save`) copies it back then; the next call copies it up again, since
the caller may have changed the array it was given.

Drivers behind one interface (`Driver`): `CudaDriver`, NVIDIA's driver API through the
`cuda-bindings` package (`pip install 'irkit[cuda]'`) and libcuda; tests use a fake with the
same interface (host memory, launches run by the interpreter's grid semantics). Without the
package, the driver library or a GPU, creating a `CudaDriver` is a `RuntimeError` that names
what is missing.
"""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass

import numpy as np

from irkit.diagnostics import Diagnostic
from irkit.ir import Operation
from irkit.runtime.compiled import CompiledRunner, IRText
from irkit.runtime.engines import ENGINES, CompiledEngine, select_model
from irkit.runtime.inputs import contiguous
from irkit.symbols import lookup_symbol_in, symbol_name

#: what `irkit-compile --target=nvptx -o M.ptx` writes next to the PTX, and its version
ARTIFACT_FORMAT = "irkit-ptx"
ARTIFACT_VERSION = 1


# ---------------------------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------------------------


class Driver:
    """What the runtime asks of a CUDA driver (the real one: `CudaDriver`)."""

    name = ""

    def api(self) -> list[int]:
        """The addresses of the functions of the host code's table, in `nvptx.host.API`
        order (`cuLaunchKernel`, `cuMemAlloc_v2`, `cuMemFree_v2`, `cuMemcpy`)."""
        raise NotImplementedError

    def load_module(self, ptx: str, device_ir: Operation):
        """A loaded module of the kernels: the PTX text, and the same kernels as IR (a
        driver runs what it can)."""
        raise NotImplementedError

    def function(self, module, symbol: str) -> int:
        """The handle (`CUfunction`) of the kernel `symbol` of a loaded module."""
        raise NotImplementedError

    def alloc(self, nbytes: int) -> int:
        raise NotImplementedError

    def free(self, ptr: int) -> None:
        raise NotImplementedError

    def upload(self, ptr: int, array: np.ndarray) -> None:
        """Copy the contiguous `array` to device memory at `ptr`."""
        raise NotImplementedError

    def download(self, array: np.ndarray, ptr: int) -> None:
        """Copy device memory at `ptr` into the contiguous `array`."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Wait until the device has finished all the work launched so far."""

    def error_name(self, code: int) -> str:
        return f"CUresult {code}"


class CudaDriver(Driver):
    """NVIDIA's driver API through `cuda-bindings`, on one device's primary context. The
    host code's table gets libcuda's own entry points (the same library cuda-bindings
    loads), so launches from compiled code do not go through Python."""

    name = "cuda"

    def __init__(self, device: int = 0) -> None:
        try:
            from cuda.bindings import driver
        except ImportError:
            raise RuntimeError("engine='cuda' needs NVIDIA's cuda-bindings package (the CUDA "
                               "driver API for Python): pip install 'irkit[cuda]'") from None
        try:
            self._libcuda = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise RuntimeError("engine='cuda' needs the NVIDIA driver: libcuda.so.1 is not "
                               "installed on this machine (no NVIDIA GPU driver)") from None
        self._cu = driver
        self._check(driver.cuInit(0), "cuInit")
        count = self._check(driver.cuDeviceGetCount(), "cuDeviceGetCount")
        if int(count) <= device:
            raise RuntimeError(f"engine='cuda': no CUDA device {device} (the driver sees "
                               f"{int(count)})")
        self._device = self._check(driver.cuDeviceGet(device), "cuDeviceGet")
        self._context = self._check(driver.cuDevicePrimaryCtxRetain(self._device),
                                    "cuDevicePrimaryCtxRetain")
        self._check(driver.cuCtxSetCurrent(self._context), "cuCtxSetCurrent")

    def _check(self, result, what: str):
        err, *values = result
        if int(err) != 0:
            raise RuntimeError(f"engine='cuda': {what} failed: {self.error_name(int(err))}")
        return values[0] if len(values) == 1 else values

    def error_name(self, code: int) -> str:
        err, name = self._cu.cuGetErrorName(self._cu.CUresult(code))
        return name.decode() if int(err) == 0 else f"CUresult {code}"

    def api(self) -> list[int]:
        names = ("cuLaunchKernel", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpy")
        return [ctypes.cast(getattr(self._libcuda, n), ctypes.c_void_p).value for n in names]

    def load_module(self, ptx: str, device_ir: Operation):
        return self._check(self._cu.cuModuleLoadData(ptx.encode() + b"\0"),
                           "cuModuleLoadData")

    def function(self, module, symbol: str) -> int:
        return int(self._check(self._cu.cuModuleGetFunction(module, symbol.encode()),
                               f"cuModuleGetFunction({symbol})"))

    def alloc(self, nbytes: int) -> int:
        return int(self._check(self._cu.cuMemAlloc(max(nbytes, 1)), "cuMemAlloc"))

    def free(self, ptr: int) -> None:
        self._check(self._cu.cuMemFree(ptr), "cuMemFree")

    def upload(self, ptr: int, array: np.ndarray) -> None:
        if array.nbytes:
            self._check(self._cu.cuMemcpyHtoD(ptr, array.ctypes.data, array.nbytes),
                        "cuMemcpyHtoD")

    def download(self, array: np.ndarray, ptr: int) -> None:
        if array.nbytes:
            self._check(self._cu.cuMemcpyDtoH(array.ctypes.data, ptr, array.nbytes),
                        "cuMemcpyDtoH")

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """A device-to-device copy (asynchronous with respect to the host)."""
        self._check(self._cu.cuMemcpyDtoD(dst, src, nbytes), "cuMemcpyDtoD")

    def synchronize(self) -> None:
        self._check(self._cu.cuCtxSynchronize(), "cuCtxSynchronize")


# ---------------------------------------------------------------------------------------------
# Compiled programs
# ---------------------------------------------------------------------------------------------


@dataclass
class GpuProgram:
    """One model compiled for the GPU: its PTX and kernel symbols (in the order of the host
    module's `gpu.kernels`), the architecture, and its modules: `lowered` (with the
    `gpu.module`s: the host module is made from it), `graph` (shape functions), `module`
    (what `Model.module` shows)."""

    name: str
    arch: str
    ptx: str
    kernels: list[str]
    lowered: IRText
    graph: IRText
    module: IRText

    def write(self, path: str) -> tuple[str, str]:
        """`path` (the PTX) and `path + ".json"` (the rest); the two paths."""
        from irkit.exporters.output_files import OutputFiles
        meta = {"format": ARTIFACT_FORMAT, "version": ARTIFACT_VERSION, "model": self.name,
                "arch": self.arch, "kernels": self.kernels, "lowered": self.lowered.text,
                "graph": self.graph.text}
        with OutputFiles() as files:
            with open(files.path(path), "w") as f:
                f.write(self.ptx)
            with open(files.path(path + ".json"), "w") as f:
                f.write(json.dumps(meta, indent=1) + "\n")
            files.commit()
        return path, path + ".json"

    @classmethod
    def read(cls, path: str) -> "GpuProgram":
        meta_path = os.fspath(path) + ".json"
        with open(path) as f:
            ptx = f.read()
        try:
            with open(meta_path) as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise ValueError(f"{path}: no {meta_path} next to it (irkit-compile "
                             f"--target=nvptx -o {path} writes both)") from None
        if meta.get("format") != ARTIFACT_FORMAT or meta.get("version") != ARTIFACT_VERSION:
            raise ValueError(f"{meta_path}: not an irkit PTX description (format "
                             f"{ARTIFACT_FORMAT} version {ARTIFACT_VERSION})")
        return cls(meta["model"], meta["arch"], ptx, list(meta["kernels"]),
                   IRText(text=meta["lowered"]), IRText(text=meta["graph"]),
                   IRText(text=meta["lowered"]))


def compile_gpu_model(module: Operation, *, arch: str | None = None, opt_level: int = 2,
                      disable=(), make_pm=None, pass_options: str = "") -> GpuProgram:
    """One model's graph module lowered by the `nvptx` rows of the pipeline table (without
    the passes in `disable`, with the options `pass_options` sets) and its kernels compiled
    to PTX for `arch` (default `nvptx.DEFAULT_ARCH`)."""
    from irkit.backends.nvptx import DEFAULT_ARCH, emit_ptx
    from irkit.runtime.compiled import lower_model_with_graph
    arch = arch or DEFAULT_ARCH
    graph, lowered = lower_model_with_graph(module, make_pm, disable, target="nvptx",
                                            pass_options=pass_options)
    ptx, kernels = emit_ptx(lowered, arch, opt_level, verify=False)
    return GpuProgram(symbol_name(module) or "model", arch, ptx, [k.symbol for k in kernels],
                      IRText(lowered), IRText(graph), IRText(module))


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


class DeviceStore(dict):
    """The variables' storage of a model on the GPU: the host arrays the `Model` sees (this
    dict) and their device buffers. A device buffer is the truth once a call has run; the
    host array is refreshed when read, and copied up again before the next call (the reader
    may have changed it in place), as it is after being assigned."""

    def __init__(self, driver: Driver) -> None:
        super().__init__()
        self._driver = driver
        self._device: dict[str, int] = {}
        self._host_newer: set[str] = set()
        self._device_newer: set[str] = set()

    def __setitem__(self, name: str, value) -> None:
        super().__setitem__(name, value)
        self._device_newer.discard(name)
        self._host_newer.add(name)

    def __getitem__(self, name: str):
        value = super().__getitem__(name)
        if name in self._device_newer:
            self._driver.download(value, self._device[name])
            self._device_newer.discard(name)
        self._host_newer.add(name)
        return value

    def device(self, name: str) -> int:
        """The variable's device buffer, up to date."""
        value = super().__getitem__(name)
        if name not in self._device:
            self._device[name] = self._driver.alloc(value.nbytes)
        if name in self._host_newer:
            self._driver.upload(self._device[name], contiguous(value))
            self._host_newer.discard(name)
        return self._device[name]

    def written(self, names) -> None:
        """A call has run with these variables: their device buffers are newer."""
        self._device_newer.update(names)


class CudaRunner(CompiledRunner):
    """Runs a `GpuProgram`'s host functions on a driver (module docstring)."""

    def __init__(self, program: GpuProgram, driver: Driver, opt_level: int = 2) -> None:
        from irkit.backends.llvm_cpu import compile_object, load_object
        from irkit.backends.nvptx.host import (
            API_GLOBAL, HOST_RULES, KERNELS_GLOBAL, STATUS_GLOBAL, host_module, host_sites,
        )
        lowered = program.lowered.op
        host = host_module(lowered, program.kernels)
        super().__init__(host, {}, None, graph=program.graph, bodies=program.lowered)
        # the host module's launches name kernels of the gpu.modules it no longer has: it
        # was verified whole, as `lowered`
        code = compile_object(host, opt_level, jit=True, verify=False, rules=HOST_RULES)
        jm = load_object(code, {name: lookup_symbol_in(host, name) for name in self.entries})
        self._owner = jm
        self.driver = driver
        self._sites = host_sites(host)
        self._status_address = jm.global_address(STATUS_GLOBAL)
        module = driver.load_module(program.ptx, lowered)
        self._fill(jm.global_address(API_GLOBAL), driver.api())
        self._fill(jm.global_address(KERNELS_GLOBAL),
                   [driver.function(module, k) for k in program.kernels])
        self._calls = {name: ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(e.order))(
            jm.functions[name].address) for name, e in self.entries.items()}
        self._scratch: dict = {}        # (function, argument) -> (device pointer, bytes)

    @staticmethod
    def _fill(address: int, values: list[int]) -> None:
        if address:
            (ctypes.c_void_p * len(values)).from_address(address)[:] = values

    def _buffer(self, key, nbytes: int) -> int:
        """A device buffer of at least `nbytes` kept for `key` between calls."""
        ptr, size = self._scratch.get(key, (0, -1))
        if size < nbytes:
            if ptr:
                self.driver.free(ptr)
            ptr = self.driver.alloc(nbytes)
            self._scratch[key] = (ptr, nbytes)
        return ptr

    def run(self, name: str, model_name: str, given: dict, store: dict) -> dict:
        e, fn_name, arrays, outs = self.prepare(name, model_name, given)
        status = np.zeros(3, np.int64)
        buffers, pending = [], []
        for i, (kind, key) in enumerate(e.order):
            if kind == "var":
                host = dict.__getitem__(store, key)
                ptr = store.device(key)
            else:
                host = arrays[key] if kind == "in" else outs[key] if kind == "out" else status
                ptr = self._buffer((name, i), host.nbytes)
                if kind in ("in", "status"):
                    self.driver.upload(ptr, host)
                if kind in ("out", "status"):
                    pending.append((host, ptr))
            buffers.append((ptr, host.shape))
        self.call_device(name, buffers, fn_name)
        store.written(key for kind, key in e.order if kind == "var")
        for host, ptr in pending:
            self.driver.download(host, ptr)
        if status[0]:
            raise e.run_time_error(status, fn_name, self._check_site(e.name, int(status[0])))
        return dict(zip(e.output_names, outs))

    def _check_site(self, name: str, code: int) -> Operation:
        """The function `name`, or the kernel it launches, whose `memory.check` has `code`
        (outlining moved the function's checks into its kernels)."""
        from irkit.dialects.memory import CheckOp
        from irkit.symbols import lookup_symbol
        fn = lookup_symbol_in(self._bodies.op, name)
        scopes = [fn] + [lookup_symbol(op, op.kernel) for op in fn.walk()
                         if op.name == "gpu.launch_func"]
        return next((s for s in scopes if any(isinstance(o, CheckOp) and o.code.value == code
                                              for o in s.walk())), fn)

    def call_device(self, name: str, buffers: list[tuple[int, tuple]],
                    fn_name: str | None = None) -> None:
        """Call the host function `name` on device buffers, (pointer, shape) per argument in
        its order (`Entry.order`), contiguous; a failed driver call is a RuntimeError at its
        op. `run` copies around it; a benchmark calls it on buffers already on the device
        (the launches are asynchronous: `Driver.synchronize` waits for them)."""
        fn_name = fn_name or name
        descriptors = [_descriptor(ptr, shape) for ptr, shape in buffers]
        words = (ctypes.c_int32 * 2).from_address(self._status_address) \
            if self._status_address else None
        if words is not None:
            words[:] = [0, 0]
        self._calls[name](*[ctypes.addressof(d) for d in descriptors])
        if words is not None and words[0]:
            code, site = words[0], words[1]
            where = self._sites[site] if 0 <= site < len(self._sites) else None
            text = f"the CUDA driver failed with {self.driver.error_name(code)} ({code})"
            if where is not None:
                text = Diagnostic("error", f"'{where.name}' op: {text}",
                                  where.location).render()
            raise RuntimeError(f"{fn_name}: {text}")


def _descriptor(ptr: int, shape: tuple) -> ctypes.Array:
    """MLIR's memref descriptor of a contiguous buffer at `ptr` of `shape`."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return (ctypes.c_int64 * (3 + 2 * len(shape)))(ptr, ptr, 0, *shape, *strides[::-1])


class CudaEngine(CompiledEngine):
    """"cuda": a model compiled for the GPU (`compile_gpu_model`) or loaded from a PTX
    artifact, run by a `CudaRunner` on `driver` (default: a `CudaDriver` on device 0)."""

    def __init__(self, program: GpuProgram, driver: Driver | None = None,
                 opt_level: int = 2) -> None:
        self.driver = driver if driver is not None else CudaDriver()
        super().__init__(CudaRunner(program, self.driver, opt_level), "cuda",
                         program.module.op)

    def variable_store(self) -> DeviceStore:
        return DeviceStore(self.driver)

    @classmethod
    def from_module(cls, module: Operation, opt_level: int = 2, threads: int = 0,
                    disable=(), driver: Driver | None = None,
                    arch: str | None = None, pass_options: str = "") -> "CudaEngine":
        driver = driver if driver is not None else CudaDriver()   # no GPU: fail before work
        return cls(compile_gpu_model(module, arch=arch, opt_level=opt_level, disable=disable,
                                     pass_options=pass_options), driver, opt_level)

    @classmethod
    def from_source(cls, text: str, filename: str, model: str | None, opt_level: int = 2,
                    cache: bool = True, threads: int = 0, disable=(),
                    driver: Driver | None = None,
                    pass_options: str = "") -> tuple[str, "CudaEngine"]:
        from irkit.diagnostics import SOURCES
        from irkit.frontend.dsl import compile_source, model_modules
        driver = driver if driver is not None else CudaDriver()
        models = model_modules(compile_source(text, filename))
        name = select_model(models, filename, model)
        SOURCES.add(filename, text)         # run-time errors show the model's lines
        return name, cls.from_module(models[name], opt_level, threads, disable, driver,
                                     pass_options=pass_options)


def load_ptx(path: str, driver: Driver | None = None) -> tuple[str, CudaEngine]:
    """(model name, engine) of a PTX artifact (`irkit-compile --target=nvptx -o M.ptx`) on
    `driver` (`irkit.load("M.ptx")` makes the Model)."""
    program = GpuProgram.read(os.fspath(path))
    return program.name, CudaEngine(program, driver)


ENGINES["cuda"] = CudaEngine
