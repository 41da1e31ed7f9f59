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

The cost of a call. A model's training step at batch 1 runs in microseconds, so what Python
does per call counts. Everything that depends only on the signature is computed once, in
`JitFunction.__init__`: per memref parameter its dtype, static sizes and layout (`_MemRefParam`),
and where its descriptor sits in one flat buffer of 64-bit words. A descriptor
`{T* allocated, T* aligned, i64 offset, i64 sizes[R], i64 strides[R]}` is 3 + 2R such words,
so the descriptors of all the memref arguments and results are that buffer, written by one
`struct.pack_into` per call; the pointers passed to the function point into it and are fixed
(the buffer is per thread, so that calls from several threads do not share descriptors). Per
call and per array only what depends on the array is done: its dtype compared, its
(shape, strides) looked up among those already checked for that parameter (the checks are
a pure function of them), and its data address read. An argument that is the very array of
the last call (`keep_descriptors`: a model's variables, passed every step) reuses its
descriptor words: numpy cannot move the memory of an array something else references (a
`resize` is refused), so while the kept reference lives, the same object with the same
dtype, shape and strides has the same words.
"""

from __future__ import annotations

import ctypes
import math
import struct
import sys
import threading

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.interpreter import to_value
from irkit.types import (
    FloatType, FunctionType, IndexType, IntegerType, MemRefType, Type, VectorType,
)
from irkit.backends import llvm_pyentry as pyentry
from irkit.backends.llvm_types import layout

_CTYPES_INT = {8: ctypes.c_int8, 16: ctypes.c_int16, 32: ctypes.c_int32, 64: ctypes.c_int64}
#: the (shape, strides) pairs remembered per memref parameter; a program that passes more
#: distinct ones starts over (a steady loop passes one or two)
_CHECKED_LIMIT = 64


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


def _dtype(t: Type) -> np.dtype:
    if isinstance(t, FunctionType):
        return np.dtype(np.uint64)          # a function's address
    return np.dtype(numpy_dtype(t.element if isinstance(t, (VectorType, MemRefType)) else t))


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _address(x: np.ndarray) -> int:
    """The address of `x`'s first element. Through the buffer protocol where numpy allows it
    (a writable, C-contiguous, non-empty array: a quarter of the cost of `x.ctypes.data`,
    which builds a helper object per call), else `x.ctypes.data`."""
    try:
        return _addressof(_from_buffer(x))
    except (TypeError, ValueError, BufferError):
        return x.ctypes.data


class _MemRefParam:
    """One memref parameter (or result) of a compiled function: what checking an array for it
    and describing the array to the code need, computed from its type once."""

    __slots__ = ("type", "dtype", "rank", "item", "word", "what", "static_strides",
                 "static_offset", "_checked", "kept")

    def __init__(self, t: MemRefType, word: int, what: str) -> None:
        self.type = t
        self.dtype = _dtype(t)
        self.rank = t.rank
        self.item = self.dtype.itemsize
        self.word = word                # where its descriptor starts in the flat buffer
        self.what = what                # "argument #2 of '@f'", for messages
        self.static_strides, offset = layout(t)
        self.static_offset = offset or 0
        self._checked: dict = {}        # (shape, byte strides) -> the descriptor's tail
        self.kept: tuple | None = None  # (array, shape, strides, words) of `keep_descriptors`

    @property
    def words(self) -> int:
        """The descriptor's size in 64-bit words."""
        return 3 + 2 * self.rank

    def descriptor(self, x) -> list:
        """The descriptor words of array `x` passed for this parameter, or a ValueError."""
        if not isinstance(x, np.ndarray) or x.dtype != self.dtype:
            self._check_kind(x)
        key = (x.shape, x.strides)
        tail = self._checked.get(key)
        if tail is None:
            tail = self._check(x)
            if len(self._checked) >= _CHECKED_LIMIT:
                self._checked.clear()
            self._checked[key] = tail
        ptr = _address(x)
        return [ptr, ptr - tail[0], *tail[1]]

    def kept_descriptor(self, x) -> list:
        """`descriptor(x)`, reused while `x` is the array of the last call (module docstring:
        the reference kept in `kept` is what keeps numpy from moving its memory)."""
        kept = self.kept
        if kept is not None and kept[0] is x and x.dtype == self.dtype and \
                x.shape == kept[1] and x.strides == kept[2]:
            return kept[3]
        words = self.descriptor(x)
        self.kept = (x, x.shape, x.strides, words)
        return words

    def _check_kind(self, x) -> None:
        t = self.type
        if not isinstance(x, np.ndarray):
            raise ValueError(f"{self.what}: expected a numpy array for {t} (memrefs are passed "
                             f"without copying), got {type(x).__name__}")
        raise ValueError(f"{self.what}: expected {self.dtype} elements for {t}, got {x.dtype}")

    def _check(self, x: np.ndarray) -> tuple[int, list]:
        """(aligned pointer's distance below the data in bytes, [offset, *sizes, *strides])
        for an array of `x`'s shape and strides, or a ValueError saying why the compiled code
        would index such an array wrongly."""
        t, what = self.type, self.what
        if x.ndim != t.rank:
            raise ValueError(f"{what}: expected a rank-{t.rank} array for {t}, got shape "
                             f"{list(x.shape)}")
        for k, (d, s) in enumerate(zip(t.shape, x.shape)):
            if d is not None and d != s:
                raise ValueError(f"{what}: expected size {d} in dimension {k} for {t}, got "
                                 f"shape {list(x.shape)}")
        item = self.item
        if any(s % item for s in x.strides):
            raise ValueError(f"{what}: the array's strides {list(x.strides)} (bytes) are not "
                             f"multiples of its item size {item}; copy it first")
        strides = [s // item for s in x.strides]
        # the identity layout is row-major and contiguous whatever its sizes: with a dynamic
        # size, its outer strides are not static, yet code may still index it flat (a
        # `memory.collapse_shape`), so a view with gaps between rows would be read wrongly
        if t.layout is None and not x.flags.c_contiguous:
            raise ValueError(f"{what}: {t} is contiguous (identity layout): expected a "
                             f"C-contiguous array, got strides {list(x.strides)} (bytes); "
                             f"pass a copy with np.ascontiguousarray")
        if x.size > 1:
            for k, (want, got, n) in enumerate(zip(self.static_strides, strides, x.shape)):
                if want is not None and n > 1 and want != got:
                    raise ValueError(f"{what}: {t} fixes stride {want} in dimension {k}, but "
                                     f"the array's strides are {strides} (elements); pass a "
                                     f"copy with np.ascontiguousarray, or a memref type with "
                                     f"a dynamic layout")
        offset = self.static_offset
        return offset * item, [offset, *x.shape, *strides]


class _MethodDef(ctypes.Structure):
    """CPython's PyMethodDef: how a builtin function is made from a C function."""

    _fields_ = [("name", ctypes.c_char_p), ("address", ctypes.c_void_p),
                ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


#: CPython's flag of a `PyObject *f(PyObject *self, PyObject *const *args, Py_ssize_t n)`
_METH_FASTCALL = 0x80
#: what a Python entry returns where it did not call (`llvm_pyentry`'s guards)
_FALLBACK = object()
#: what a model's call entry returns where the call set its error status (the caller raises)
CALL_ERROR = object()
_api: dict = {}


def _python_api() -> dict | None:
    """The addresses a Python entry's table holds (`llvm_pyentry.TABLE`), or None where the
    numpy array fields it reads are not where it reads them (`_array_fields_hold`). The
    "PyArray_Empty" slot is 0 where numpy's is not found (`_array_empty`): then no model
    call entry is made."""
    if "table" not in _api:
        _api["table"] = None
        if _array_fields_hold():
            api = ctypes.pythonapi
            fn = {name: ctypes.cast(getattr(api, name), ctypes.c_void_p).value
                  for name in ("Py_IncRef", "Py_DecRef", "PyEval_SaveThread",
                               "PyEval_RestoreThread", "PyDict_Size", "PyDict_GetItem",
                               "PyDict_New", "PyDict_SetItem")}
            values = {**fn, "None": id(None), "fallback": id(_FALLBACK),
                      "ndarray": id(np.ndarray), "dict": id(dict), "error": id(CALL_ERROR),
                      "PyArray_Empty": _array_empty(), "record": 0}
            _api["table"] = [values[name] for name in pyentry.TABLE]
            new = api.PyCFunction_NewEx
            new.restype = ctypes.py_object
            new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
            _api["new"] = new
    return _api["table"]


#: numpy's C API: the index of PyArray_Empty in its function table, the same in numpy 1.x
#: and 2.x (the table's order is numpy's ABI)
_ARRAY_EMPTY_SLOT = 184


def _array_empty() -> int:
    """The address of numpy's `PyArray_Empty(nd, dims, descr, fortran)`, read from the C API
    table numpy exports to extensions (its `_ARRAY_API` capsule), or 0 where a probe call
    does not give the array it must."""
    try:
        from numpy._core import _multiarray_umath as umath          # numpy 2
    except ImportError:                                             # pragma: no cover
        from numpy.core import _multiarray_umath as umath          # numpy 1.26
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    try:
        functions = get(umath._ARRAY_API, None)
    except (AttributeError, ValueError):
        return 0
    address = ctypes.c_void_p.from_address(functions + 8 * _ARRAY_EMPTY_SLOT).value
    # a Python-API function: called holding the GIL (PYFUNCTYPE), with the reference to the
    # dtype it steals
    empty = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
                              ctypes.py_object, ctypes.c_int)(address)
    dtype = np.dtype(np.float32)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(dtype))
    probe = empty(2, (ctypes.c_int64 * 2)(2, 3), dtype, 0)
    ok = type(probe) is np.ndarray and probe.shape == (2, 3) and probe.dtype is dtype \
        and probe.flags.c_contiguous
    return address if ok else 0


def _array_fields_hold() -> bool:
    """Whether numpy's array objects hold their data, rank, sizes, strides and dtype where
    a Python entry reads them (`llvm_pyentry.ARRAY_FIELDS`), read off probe arrays: CPython
    gives an object's address as its `id`."""
    if sys.implementation.name != "cpython":
        return False
    at = pyentry.ARRAY_FIELDS
    base = np.zeros((4, 6), np.float32)
    for a in (base, base[1:, ::2], np.zeros((), np.int64), np.zeros(5, np.bool_)):
        obj = id(a)

        def read(field: str, ctype=ctypes.c_void_p):
            return ctype.from_address(obj + at[field]).value or 0

        if read("ob_type") != id(type(a)) or read("data") != a.__array_interface__["data"][0] \
                or read("nd", ctypes.c_int) != a.ndim or read("descr") != id(a.dtype):
            return False
        for field, want in (("dimensions", a.shape), ("strides", a.strides)):
            if a.ndim and tuple((ctypes.c_int64 * a.ndim).from_address(read(field))) != want:
                return False
    return True


class _Table(np.ndarray):
    """A function's table (`llvm_pyentry.TABLE`: int64 addresses), the `self` of its Python
    entries' builtin functions, which hold it; it holds the PyMethodDefs the builtins point
    to in turn (`methods`), so that they all live exactly as long as each other, and the
    objects whose addresses it holds beyond numpy's and Python's own: the argument names
    (`names`) and the record (`record`). An ndarray subclass, because the entries find the
    addresses at an array object's data field."""

    methods: list
    names: list
    record = None


def _entry_table(dtypes: list[np.dtype]) -> _Table | None:
    """A new table for a function of arguments of `dtypes` (names not set, no record), or
    None where entries cannot be used here (`_python_api`). The entries compare each
    array's dtype object with numpy's own object for it (alive as long as numpy)."""
    table = _python_api()
    if table is None:
        return None
    table = np.array(table + [id(np.dtype(d)) for d in dtypes] + [0] * len(dtypes),
                     dtype=np.int64).view(_Table)
    table.methods, table.names = [], []
    return table


def _builtin(table: _Table, address: int, name: str):
    """A builtin function calling the entry at `address` with `table` as its `self`."""
    method = _MethodDef(name.encode(), address, _METH_FASTCALL, None)
    table.methods.append(method)
    return _api["new"](ctypes.byref(method), table, None)


class _Buffers(threading.local):
    """Per thread: a function's flat descriptor buffer and its argument list, whose memref
    slots hold the addresses of their descriptors in the buffer."""

    words = None        # ctypes array of int64
    pointers = None     # list: an address per memref slot, None elsewhere


class JitFunction:
    """A compiled function called with numpy arrays and scalars (see the module docstring)."""

    def __init__(self, name: str, inputs: list[Type], results: list[Type], address: int,
                 keepalive=None, entry: int = 0, call: int = 0) -> None:
        """`entry` and `call` are the addresses of the function's two Python entries
        (`llvm_pyentry`: its arrays; a model's call), 0 where it has none."""
        self.name = name
        self.inputs = inputs
        self.results = results
        self.address = address
        self._keepalive = keepalive     # the engine or library that owns the code
        params = [ctypes.c_void_p if isinstance(t, (VectorType, MemRefType))
                  else _by_value_ctype(t) for t in inputs]
        params += [ctypes.c_void_p] * len(results)
        self._cfunc = ctypes.CFUNCTYPE(None, *params)(address)
        # per argument, then per result: a _MemRefParam, or the type (the general path)
        self._slots: list = []
        word = 0
        for i, t in enumerate(inputs + results):
            if isinstance(t, MemRefType):
                what = (f"argument #{i} of '@{name}'" if i < len(inputs)
                        else f"result #{i - len(inputs)} of '@{name}'")
                self._slots.append(_MemRefParam(t, word, what))
                word += self._slots[-1].words
            else:
                self._slots.append(t)
        self._params = self._slots[:len(inputs)]
        self._words = word
        self._pack = struct.Struct(f"={word}q")
        # only memref arguments and no results: the call is the descriptors and nothing else
        self._plain = not results and all(isinstance(s, _MemRefParam) for s in self._slots)
        self._local = _Buffers()
        self.keep_descriptors(())
        # the compiled path of a plain call (`llvm_pyentry`): None where there is none
        self._table = _entry_table([p.dtype for p in self._params]) \
            if self._plain and entry else None
        self._entry = _builtin(self._table, entry, name) if self._table is not None else None
        self._call = call if self._table is not None and self._table[pyentry.ARRAY_EMPTY] \
            else 0

    def __repr__(self) -> str:
        return f"<compiled function @{self.name}>"

    def model_call(self, names: list[str | None]):
        """A builtin function making a model's call of this function, `f(given, store,
        status)` -> the outputs by name (`llvm_pyentry`'s call entry), its arguments found
        by `names` (per argument its input's, output's or variable's name, None for the
        status); None where the function has no such entry. It calls nothing until `record`
        gave it sizes."""
        if not self._call:
            return None
        table = self._table
        table.names = [sys.intern(n) if n is not None else None for n in names]
        at = pyentry.names_at(len(self.inputs))
        for i, n in enumerate(table.names):
            table[at + i] = id(n) if n is not None else 0
        return _builtin(table, self._call, self.name)

    def record(self, shapes: list[tuple]) -> None:
        """Let the model call entry (`model_call`) take inputs of these sizes, and allocate
        outputs of those: `shapes`, per input and output argument in argument order, are
        those of a call whose inputs were checked. It replaces the record before."""
        sizes = [d for shape in shapes for d in shape] or [0]
        if self._table.record is not None and self._table.record.tolist() == sizes:
            return                          # a call the entry refused for another reason
        record = np.array(sizes, np.int64)
        self._table.record = record         # the entry reads it holding the GIL
        self._table[pyentry.RECORD] = record.ctypes.data

    def keep_descriptors(self, indices) -> None:
        """Reuse the descriptor of each memref argument in `indices` while it is passed the
        same array as in the last call (module docstring); that array stays referenced
        until another replaces it. For arguments passed one array call after call (a
        model's variables), not for a batch that changes every step."""
        kept = set(indices)
        # per memref argument, the method giving its descriptor words: (index, method)
        self._describe = []
        for i, p in enumerate(self._params):
            if isinstance(p, _MemRefParam):
                if i not in kept:
                    p.kept = None
                self._describe.append((i, p.kept_descriptor if i in kept else p.descriptor))

    def _buffers(self) -> tuple:
        local = self._local
        if local.words is None:
            local.words = (ctypes.c_int64 * max(self._words, 1))()
            base = ctypes.addressof(local.words)
            local.pointers = [base + 8 * s.word if isinstance(s, _MemRefParam) else None
                              for s in self._slots]
        return local.words, local.pointers

    def __call__(self, *args):
        if len(args) != len(self.inputs):
            raise ValueError(f"'@{self.name}' takes {len(self.inputs)} arguments, got "
                             f"{len(args)}")
        # the compiled entry checks and describes the arrays itself; where one is not what
        # it can take (wrong, or not exactly an ndarray of numpy's own dtype object) it
        # calls nothing and returns its fallback object, and this path says what is wrong
        if self._entry is not None and self._entry(*args) is None:
            return None
        buf, pointers = self._buffers()
        words: list = []
        for i, describe in self._describe:
            words += describe(args[i])
        if self._plain:
            self._pack.pack_into(buf, 0, *words)
            self._cfunc(*pointers)
            return None
        cargs = list(pointers)
        keep: list = []         # the vectors' buffers, alive until the call returns
        for i, (x, t) in enumerate(zip(args, self._params)):
            if isinstance(t, VectorType):
                arr = np.ascontiguousarray(to_value(x, t, f"argument #{i} of '@{self.name}'"),
                                           dtype=_dtype(t))
                keep.append(arr)
                cargs[i] = arr.ctypes.data
            elif isinstance(t, FunctionType):
                cargs[i] = _scalar_argument(x, t)
            elif not isinstance(t, _MemRefParam):
                cargs[i] = _scalar_argument(to_value(x, t, f"argument #{i} of "
                                                        f"'@{self.name}'"), t)
        outs = []               # per result: the buffer a scalar or vector is written to
        for j, s in enumerate(self._slots[len(args):]):
            out = None
            if not isinstance(s, _MemRefParam):
                out = np.zeros(math.prod(s.shape) if isinstance(s, VectorType) else 1,
                               dtype=_dtype(s))
                cargs[len(args) + j] = out.ctypes.data
            outs.append(out)
        words += [0] * (self._words - len(words))       # the memref results' descriptors
        self._pack.pack_into(buf, 0, *words)
        self._cfunc(*cargs)
        if not self.results:
            return None
        return self._results(buf, args, outs)

    def _results(self, buf, args, outs: list):
        """The results as Python values, memrefs' descriptors read from `buf`."""
        words = self._pack.unpack_from(buf, 0)
        memrefs = [(words[p.word], x) for x, p in zip(args, self._params)
                   if isinstance(p, _MemRefParam)]
        owners: dict[int, object] = {}
        values = []
        for j, s in enumerate(self._slots[len(args):]):
            if isinstance(s, _MemRefParam):
                values.append(_memref_result(words[s.word:s.word + s.words], s, memrefs,
                                             owners))
            elif isinstance(s, VectorType):
                values.append(outs[j].reshape(s.shape))
            else:
                v = outs[j][0]
                values.append(int(v) if isinstance(s, (IndexType, FunctionType)) else v)
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


def _memref_result(words, p: _MemRefParam, memrefs, owners: dict) -> np.ndarray:
    """A numpy array over the memory a returned descriptor (its `words`) describes (see the
    docstring)."""
    dtype, item, rank = p.dtype, p.item, p.rank
    allocated, aligned, offset = words[0], words[1], words[2]
    shape = list(words[3:3 + rank])
    strides = list(words[3 + rank:3 + 2 * rank])
    first = aligned + offset * item
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
