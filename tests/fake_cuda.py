"""A CUDA driver without a GPU, for tests of the GPU runtime's launch path.

`FakeDriver` has the interface of `irkit.runtime.cuda.Driver`, and its table of function
pointers for the compiled host code (`api`) is made of ctypes callbacks with the signatures
of `cuLaunchKernel`, `cuMemAlloc_v2`, `cuMemFree_v2` and `cuMemcpy`. "Device" memory is host
memory (numpy buffers, 256-byte aligned as the driver aligns), so copies are `memmove`s, and a
launch reads its kernel's arguments from the parameter array exactly as the GPU would -- a
memref descriptor by value, a scalar by value -- and runs the kernel's `gpu.func` with the
interpreter's grid semantics (`irkit.dialects.gpu.grid.run_grid`). What the compiled host code
packs, copies and checks is thus tested, only the kernels' machine code is not.

`FakeDriver(execute=False)` logs launches without running them.
`fail` makes the next call of a named entry point return a `CUresult` instead of running;
`launches` logs every launch (kernel symbol, grid, block); `device_allocs` counts the host
code's `cuMemAlloc` calls; `errors` holds the exceptions a
launch raised (returned to the host code as CUDA_ERROR_LAUNCH_FAILED, 719).
"""

from __future__ import annotations

import ctypes

import numpy as np

from irkit.backends.nvptx import gpu_modules, kernel_symbol
from irkit.dialects.gpu.grid import run_grid
from irkit.dialects.memory import storage_dtype
from irkit.interpreter import Interpreter, to_value
from irkit.runtime.cuda import Driver
from irkit.symbols import symbol_name
from irkit.types import MemRefType

LAUNCH_FAILED = 719
_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, *[ctypes.c_uint32] * 7,
                           ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
_ALLOC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64)
_FREE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint64)
_COPY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)


class FakeDriver(Driver):
    name = "fake"

    def __init__(self, execute: bool = True) -> None:
        #: whether launches run their kernels; without, they are only logged (the launch
        #: list of a large problem, whose threads the interpreter would take hours to run)
        self.execute = execute
        self.buffers: dict[int, np.ndarray] = {}
        self.kernels: list = []             # handle - 1 -> (gpu.func, module, symbol)
        self.launches: list = []
        self.errors: list = []
        self.fail: dict[str, int] = {}      # entry point -> the CUresult of its next call
        self.copies = 0
        self.device_allocs = 0              # cuMemAlloc calls of the host code
        self._callbacks = [_LAUNCH(self._launch), _ALLOC(self._alloc), _FREE(self._free),
                           _COPY(self._copy)]

    def api(self) -> list[int]:
        return [ctypes.cast(c, ctypes.c_void_p).value for c in self._callbacks]

    def load_module(self, ptx: str, device_ir):
        return device_ir

    def function(self, module, symbol: str) -> int:
        for gm in gpu_modules(module):
            for fn in gm.regions[0].blocks[0].ops:
                if kernel_symbol(symbol_name(gm), symbol_name(fn)) == symbol:
                    self.kernels.append((fn, module, symbol))
                    return len(self.kernels)
        raise RuntimeError(f"no kernel {symbol}")

    # ----- memory ---------------------------------------------------------------------------

    def alloc(self, nbytes: int) -> int:
        raw = np.zeros(nbytes + 256, np.uint8)
        ptr = raw.ctypes.data + (-raw.ctypes.data) % 256
        self.buffers[ptr] = raw
        return ptr

    def free(self, ptr: int) -> None:
        del self.buffers[ptr]

    def upload(self, ptr: int, array: np.ndarray) -> None:
        self.copies += 1
        ctypes.memmove(ptr, array.ctypes.data, array.nbytes)

    def download(self, array: np.ndarray, ptr: int) -> None:
        self.copies += 1
        ctypes.memmove(array.ctypes.data, ptr, array.nbytes)

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        self.copies += 1
        ctypes.memmove(dst, src, nbytes)

    # ----- the host code's table ------------------------------------------------------------

    def _failing(self, name: str) -> int:
        return self.fail.pop(name, 0)

    def _alloc(self, out, nbytes) -> int:
        code = self._failing("cuMemAlloc_v2")
        if not code:
            self.device_allocs += 1
            out[0] = self.alloc(nbytes)
        return code

    def _free(self, ptr) -> int:
        code = self._failing("cuMemFree_v2")
        if not code:
            self.free(ptr)
        return code

    def _copy(self, dst, src, nbytes) -> int:
        code = self._failing("cuMemcpy")
        if not code:
            self.copies += 1
            ctypes.memmove(dst, src, nbytes)
        return code

    def _launch(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:
        code = self._failing("cuLaunchKernel")
        if code:
            return code
        try:
            fn, module, symbol = self.kernels[f - 1]
            self.launches.append((symbol, (gx, gy, gz), (bx, by, bz)))
            if not self.execute:
                return 0
            inputs = fn.properties["function_type"].value.inputs
            args = [_argument(fn, t, params[i]) for i, t in enumerate(inputs)]
            with np.errstate(all="ignore"):
                run_grid(Interpreter(module, {}), fn, fn, len(inputs), (gx, gy, gz),
                         (bx, by, bz), lambda thread: list(args), None, shared)
        except Exception as e:          # a callback cannot raise: the host code gets a code
            self.errors.append(e)
            return LAUNCH_FAILED
        return 0


def _argument(fn, t, ptr: int):
    """The kernel argument of type `t` at `ptr` (a descriptor or a scalar), as the
    interpreter holds it: a numpy view of the memory a descriptor describes."""
    if isinstance(t, MemRefType):
        dtype = np.dtype(storage_dtype(fn, t.element))
        words = (ctypes.c_int64 * (3 + 2 * t.rank)).from_address(ptr)
        aligned, offset = words[1], words[2]
        shape, strides = list(words[3:3 + t.rank]), list(words[3 + t.rank:])
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
        base = np.ctypeslib.as_array((ctypes.c_uint8 * max(span * dtype.itemsize, 1))
                                     .from_address(aligned + offset * dtype.itemsize))
        return np.lib.stride_tricks.as_strided(base.view(dtype), shape,
                                               [s * dtype.itemsize for s in strides])
    dtype = np.dtype(storage_dtype(fn, t))
    value = np.frombuffer((ctypes.c_uint8 * dtype.itemsize).from_address(ptr), dtype)[0]
    return to_value(value.item(), t, "kernel argument")
