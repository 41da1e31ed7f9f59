"""Calling compiled functions from Python: numpy values in, numpy values out, through the C
interface of `llvm_lowering` (`void f(ARGS..., RESULT_PTRS...)`).

- Scalars are converted as the interpreter converts them (`irkit.interpreter.to_value`:
  integers wrap to their width, floats round to theirs) and passed by value.
- Vectors are copied into a contiguous buffer of their elements (they are values).
- Memrefs are *not* copied: the descriptor points into the numpy array itself, with the
  array's strides in elements. An array whose dtype is not the element's, whose rank or
  static sizes differ from the type, whose byte strides are not a multiple of its item
  size, or whose strides contradict a layout the type fixes (the identity layout of
  `memref<4x8xf32>` means contiguous rows) is rejected with a `ValueError` naming the
  argument, since the compiled code would index it wrongly.
- A function value (`func.constant`) is an address: pass a `JitFunction` or an int, get an
  int back.
- Results come back as the interpreter returns them: numpy scalars of the IR type (`index`
  as a Python int), arrays for vectors, and for memrefs an array over the memory the
  descriptor describes. A memref result inside an argument's buffer is a view that keeps
  that argument alive; any other is taken to be a fresh `malloc` (what `memory.alloc`
  does) owned by the returned array, which `free`s it when garbage collected (results that
  share one allocation share that ownership).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.interpreter import to_value
from irkit.types import (
    FloatType, FunctionType, IndexType, IntegerType, MemRefType, Type, VectorType,
)
from irkit.backends.llvm_types import layout

_CTYPES_INT = {8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}


def _by_value_ctype(t: Type):
    """The ctypes type of a scalar argument (see `llvm_types.abi_scalar`)."""
    if isinstance(t, IndexType):
        return ctypes.c_int64
    if isinstance(t, FunctionType):
        return ctypes.c_void_p
    if isinstance(t, IntegerType):
        if t.width == 1:
            return ctypes.c_uint8
        return _CTYPES_INT[np.dtype(numpy_dtype(t)).itemsize * 8]
    return {"f16": ctypes.c_uint16, "f32": ctypes.c_float, "f64": ctypes.c_double}[t.name]


@functools.cache
def descriptor_ctype(rank: int) -> type:
    """The ctypes struct of a rank-`rank` memref descriptor (same for every element type)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


def _dtype(t: Type) -> np.dtype:
    if isinstance(t, FunctionType):
        return np.dtype(np.uint64)          # a function's address
    return np.dtype(numpy_dtype(t.element if isinstance(t, (VectorType, MemRefType)) else t))


class JitFunction:
    """A compiled function called with numpy arrays and scalars (see the module docstring)."""

    def __init__(self, name: str, inputs: list[Type], results: list[Type], address: int,
                 keepalive=None) -> None:
        self.name = name
        self.inputs = inputs
        self.results = results
        self.address = address
        self._keepalive = keepalive     # the engine or library that owns the code
        params = [ctypes.c_void_p if isinstance(t, (VectorType, MemRefType))
                  else _by_value_ctype(t) for t in inputs]
        params += [ctypes.c_void_p] * len(results)
        self._cfunc = ctypes.CFUNCTYPE(None, *params)(address)

    def __repr__(self) -> str:
        return f"<compiled function @{self.name}>"

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise ValueError(f"'@{self.name}' takes {len(self.inputs)} arguments, got "
                             f"{len(args)}")
        keep: list = []
        memrefs: list[tuple[int, np.ndarray]] = []
        cargs = []
        for i, (x, t) in enumerate(zip(args, self.inputs)):
            what = f"argument #{i} of '@{self.name}'"
            if isinstance(t, MemRefType):
                arr, desc = memref_argument(x, t, what)
                keep.append(desc)
                memrefs.append((desc.allocated or 0, arr))
                cargs.append(ctypes.addressof(desc))
            elif isinstance(t, VectorType):
                arr = np.ascontiguousarray(to_value(x, t, what), dtype=_dtype(t))
                keep.append(arr)
                cargs.append(arr.ctypes.data)
            elif isinstance(t, FunctionType):
                cargs.append(_scalar_argument(x, t))
            else:
                cargs.append(_scalar_argument(to_value(x, t, what), t))
        outs = []
        for t in self.results:
            if isinstance(t, MemRefType):
                out = descriptor_ctype(t.rank)()
                cargs.append(ctypes.addressof(out))
            else:
                n = int(np.prod(t.shape)) if isinstance(t, VectorType) else 1
                out = np.zeros(n, dtype=_dtype(t))
                cargs.append(out.ctypes.data)
            outs.append(out)
        self._cfunc(*cargs)
        owners: dict[int, object] = {}
        values = [_result(out, t, memrefs, owners) for out, t in zip(outs, self.results)]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)


def _scalar_argument(v, t: Type):
    if isinstance(t, FunctionType):
        return v.address if isinstance(v, JitFunction) else int(v)
    if isinstance(t, IndexType):
        return int(v)
    if isinstance(t, FloatType):
        if t.name == "f16":
            return int(np.float16(v).view(np.uint16))
        return float(v)
    return int(v)


def memref_argument(x, t: MemRefType, what: str):
    """(array, descriptor) for an argument of memref type `t`: the array's own memory."""
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{what}: expected a numpy array for {t} (memrefs are passed without "
                         f"copying), got {type(x).__name__}")
    dtype = _dtype(t)
    if x.dtype != dtype:
        raise ValueError(f"{what}: expected {dtype} elements for {t}, got {x.dtype}")
    if x.ndim != t.rank:
        raise ValueError(f"{what}: expected a rank-{t.rank} array for {t}, got shape "
                         f"{list(x.shape)}")
    for k, (d, s) in enumerate(zip(t.shape, x.shape)):
        if d is not None and d != s:
            raise ValueError(f"{what}: expected size {d} in dimension {k} for {t}, got shape "
                             f"{list(x.shape)}")
    item = x.itemsize
    if any(s % item for s in x.strides):
        raise ValueError(f"{what}: the array's strides {list(x.strides)} (bytes) are not "
                         f"multiples of its item size {item}; copy it first")
    strides = [s // item for s in x.strides]
    static_strides, static_offset = layout(t)
    if x.size > 1:
        for k, (want, got, n) in enumerate(zip(static_strides, strides, x.shape)):
            if want is not None and n > 1 and want != got:
                raise ValueError(f"{what}: {t} fixes stride {want} in dimension {k}, but the "
                                 f"array's strides are {strides} (elements); pass a copy "
                                 f"with np.ascontiguousarray, or a memref type with a "
                                 f"dynamic layout")
    offset = static_offset or 0
    desc = descriptor_ctype(t.rank)()
    data = x.ctypes.data
    desc.allocated = data
    desc.aligned = data - offset * item
    desc.offset = offset
    if t.rank:
        desc.sizes[:] = list(x.shape)
        desc.strides[:] = strides
    return x, desc


class _Malloced:
    """Owns a block from the C library's `malloc`; frees it when the last array using it
    goes away."""

    _free = None

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        if _Malloced._free is None:
            free = ctypes.CDLL(None).free
            free.argtypes = [ctypes.c_void_p]
            _Malloced._free = free

    def __del__(self) -> None:
        if self.ptr:
            _Malloced._free(self.ptr)
            self.ptr = 0


def _result(out, t: Type, memrefs, owners: dict):
    if isinstance(t, MemRefType):
        return _memref_result(out, t, memrefs, owners)
    if isinstance(t, VectorType):
        return out.reshape(t.shape)
    v = out[0]
    return int(v) if isinstance(t, (IndexType, FunctionType)) else v


def _memref_result(desc, t: MemRefType, memrefs, owners: dict) -> np.ndarray:
    """A numpy array over the memory a returned descriptor describes (see the docstring)."""
    dtype = _dtype(t)
    item = dtype.itemsize
    shape = list(desc.sizes) if t.rank else []
    strides = list(desc.strides) if t.rank else []
    allocated = desc.allocated or 0
    first = (desc.aligned or 0) + desc.offset * item
    owner = None
    for ptr, arr in memrefs:
        if ptr == allocated:
            owner = arr
            break
    if owner is None:
        owner = owners.get(allocated)
        if owner is None:
            owner = owners[allocated] = _Malloced(allocated)
    if any(n == 0 for n in shape):
        return np.zeros(shape, dtype=dtype)
    lo = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0)
    span = (hi - lo + 1) * item
    buf = (ctypes.c_char * span).from_address(first + lo * item)
    buf._owner = owner      # the array keeps `buf` alive, `buf` keeps the memory alive
    return np.ndarray(shape, dtype=dtype, buffer=buf, offset=-lo * item,
                      strides=[s * item for s in strides])
