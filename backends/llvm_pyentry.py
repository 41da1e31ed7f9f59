"""Python's own way into a compiled function: an entry point CPython calls directly.

Why. A model's step at a small batch runs in microseconds, and calling it through ctypes
costs as much again: per memref argument Python reads the array's data address
(`ndarray.ctypes.data` alone is 0.75 us; the buffer protocol a quarter of that), packs the
descriptor words and converts each pointer; a batch-1 logistic-regression step spent 4.7 us
of its 10.5 there, around 5.8 us of compiled code. numba and JAX's C++ dispatch answer
the same cost the same way: the code that turns arrays into what the kernel takes is compiled
too.

What. For each public function whose arguments are all memrefs and which has no results
(what a model's entries are; `plain`), the module gets a second function,
`_irkit_py_<name>`, with CPython's METH_FASTCALL signature

    PyObject *entry(PyObject *table, PyObject *const *args, Py_ssize_t nargs)

that reads each argument's numpy array object, builds its memref descriptor on the stack,
and calls the function. `llvm_abi.JitFunction` makes it a Python builtin function
(`PyCFunction_NewEx`) whose `self` is `table`, a numpy int64 array of addresses it fills in
the calling process (the `TABLE` slots): CPython's `Py_IncRef`, `None`, a fallback object,
`PyEval_SaveThread` and `PyEval_RestoreThread`, the `numpy.ndarray` type, and per argument
the numpy dtype object it must have. So the object code names no symbol of Python's: it is
the same in the compile cache, in a shared library for C, and in any process.

Guards. The entry checks every argument before it reads more of it: exactly `ndarray` (by
type), the expected dtype object (numpy's canonical one: an equal dtype that is another
object fails the guard), the rank, each static size, byte strides that are multiples of the
item size, and the strides the layout fixes (the identity layout: row-major and contiguous,
whatever its sizes). Any miss returns the fallback object instead of calling; the Python side
then takes the general path, which converts what it can or raises a `ValueError` naming the
argument (`llvm_abi._MemRefParam`). So a wrong argument costs a slower call, never a wrong
read. The GIL is released around the call, as ctypes releases it.

The array fields read are numpy's `PyArrayObject` (data, nd, dimensions, strides, descr at
`ARRAY_FIELDS`), public in numpy's C headers since 1.7 and the same in 2.x; the Python side
checks them on a probe array before it uses any entry (`llvm_abi.python_entry`) and keeps to
ctypes where they differ (another numpy, a debug or free-threaded Python).
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from irkit.attributes import numpy_dtype
from irkit.types import MemRefType
from irkit.backends.llvm_types import I64, PTR, error_at, layout

#: the entry of function `f` is `PREFIX + f`
PREFIX = "_irkit_py_"
#: byte offsets of numpy's PyArrayObject fields, after PyObject's header (refcount, type)
ARRAY_FIELDS = {"ob_type": 8, "data": 16, "nd": 24, "dimensions": 32, "strides": 40,
                "descr": 56}
#: the slots of the entry's table (an int64 array): what they hold; the argument dtypes
#: start at `DTYPES`
TABLE = ("Py_IncRef", "None", "fallback", "PyEval_SaveThread", "PyEval_RestoreThread",
         "ndarray")
INCREF, NONE, FALLBACK, SAVE_THREAD, RESTORE_THREAD, NDARRAY = range(len(TABLE))
DTYPES = len(TABLE)

I32 = ir.IntType(32)
_BOOL = ir.IntType(1)


def plain(inputs: list, results: list) -> bool:
    """Whether a function of these argument and result types gets an entry: memrefs only,
    no results (what `llvm_abi.JitFunction` then calls with the descriptors alone)."""
    return not results and all(isinstance(t, MemRefType) for t in inputs)


def add_python_entries(ml) -> None:
    """An entry for each public plain function that `ml` (a `ModuleLowering`) translated
    (the module docstring)."""
    for name, (llfn, sig, fn) in list(ml.functions.items()):
        vis = fn.properties.get("sym_visibility")
        if not fn.regions[0].blocks or (vis is not None and vis.value != "public") or \
                not plain(sig.inputs, sig.results):
            continue
        if PREFIX + name in ml.llmod.globals:
            raise error_at(fn, f"cannot have its Python entry: the module already defines "
                               f"'@{PREFIX + name}'")
        _emit(ml.llmod, llfn, sig.inputs, PREFIX + name)


def _emit(llmod: ir.Module, callee: ir.Function, inputs: list[MemRefType], name: str) -> None:
    """`name`, the entry of `callee`: a chain of blocks, each taking one more fact about
    the arguments as given (their count; per argument its type, then its dtype and rank,
    then its sizes and strides, reading no field before the facts it depends on hold),
    every failed check branching to one fallback block; then the call."""
    fn = ir.Function(llmod, ir.FunctionType(PTR, [PTR, PTR, I64]), name=name)
    # straight-line code that LLVM's optimizer cannot make measurably faster (a call of a
    # one-element model took 1.9-2.0 us either way) but spent 5% of its time on: the MLP's
    # module compiled in 448 ms with the entries optimized, 432 with them left as built,
    # 428 without them (medians of 7 in one process)
    for attr in ("nounwind", "noinline", "optnone"):
        fn.attributes.add(attr)
    table_obj, args, nargs = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    fallback = fn.append_basic_block("fallback")
    descriptors = [b.alloca(I64, size=3 + 2 * t.rank) for t in inputs]
    table = _field(b, table_obj, "data", PTR)

    def slot(k: int, fnty: ir.FunctionType | None = None) -> ir.Value:
        word = b.load(b.gep(table, [ir.Constant(I64, k)], inbounds=True, source_etype=I64),
                      typ=I64)
        return b.inttoptr(word, fnty.as_pointer() if fnty is not None else PTR)

    def check(cond: ir.Value, label: str) -> None:
        """Go on where `cond` holds, to the fallback where not."""
        on = fn.append_basic_block(label)
        b.cbranch(cond, on, fallback)
        b.position_at_end(on)

    check(b.icmp_signed("==", nargs, ir.Constant(I64, len(inputs))), "arity")
    for i, (t, desc) in enumerate(zip(inputs, descriptors)):
        obj = b.load(b.gep(args, [ir.Constant(I64, i)], inbounds=True, source_etype=PTR),
                     typ=PTR)
        check(b.icmp_unsigned("==", _field(b, obj, "ob_type", PTR), slot(NDARRAY)),
              f"arg{i}.ndarray")
        same = b.and_(b.icmp_unsigned("==", _field(b, obj, "descr", PTR), slot(DTYPES + i)),
                      b.icmp_signed("==", _field(b, obj, "nd", I32), ir.Constant(I32, t.rank)))
        check(same, f"arg{i}.dtype_rank")
        _describe(b, obj, t, desc, lambda cond: check(cond, f"arg{i}.layout"))
    save = b.call(slot(SAVE_THREAD, ir.FunctionType(PTR, [])), [])
    b.call(callee, descriptors)
    b.call(slot(RESTORE_THREAD, ir.FunctionType(ir.VoidType(), [PTR])), [save])
    _return(b, slot(NONE), slot(INCREF, ir.FunctionType(ir.VoidType(), [PTR])))
    b.position_at_end(fallback)
    _return(b, slot(FALLBACK), slot(INCREF, ir.FunctionType(ir.VoidType(), [PTR])))


def _field(b: ir.IRBuilder, obj: ir.Value, name: str, t: ir.Type) -> ir.Value:
    at = b.gep(obj, [ir.Constant(I64, ARRAY_FIELDS[name])], source_etype=ir.IntType(8))
    return b.load(at, typ=t)


def _return(b: ir.IRBuilder, obj: ir.Value, incref: ir.Value) -> None:
    """Return a new reference to `obj` (METH_FASTCALL's result)."""
    b.call(incref, [obj])
    b.ret(obj)


def _describe(b: ir.IRBuilder, obj: ir.Value, t: MemRefType, desc: ir.Value, check) -> None:
    """Check array `obj` (an ndarray of `t`'s dtype and rank) against `t`'s static sizes and
    layout (`check(cond)` branches away where `cond` fails), and write its descriptor
    `{allocated, aligned, offset, sizes[R], strides[R]}` into `desc`, as
    `llvm_abi._MemRefParam.descriptor` does."""
    item = np.dtype(numpy_dtype(t.element)).itemsize
    rank = t.rank
    want, offset = layout(t)
    offset = offset or 0
    dims = _field(b, obj, "dimensions", PTR)
    strides = _field(b, obj, "strides", PTR)

    def word(base: ir.Value, k: int) -> ir.Value:
        return b.load(b.gep(base, [ir.Constant(I64, k)], inbounds=True, source_etype=I64),
                      typ=I64)

    sizes = [word(dims, k) for k in range(rank)]
    byte_strides = [word(strides, k) for k in range(rank)]
    ok: ir.Value = ir.Constant(_BOOL, 1)
    for k, s in enumerate(t.shape):
        if s is not None:
            ok = b.and_(ok, b.icmp_signed("==", sizes[k], ir.Constant(I64, s)))
    elements = []
    for k in range(rank):
        ok = b.and_(ok, b.icmp_signed("==", b.srem(byte_strides[k], ir.Constant(I64, item)),
                                      ir.Constant(I64, 0)))
        elements.append(b.sdiv(byte_strides[k], ir.Constant(I64, item)))
    # the strides the layout fixes, checked where they matter: dims of more than one element
    # of an array of more than one (numpy gives the others any stride)
    one = ir.Constant(I64, 1)
    total = one
    for size in sizes:
        total = b.mul(total, size)
    many = b.icmp_signed(">", total, one)
    after = one                             # the identity layout's stride: the sizes after
    for k in reversed(range(rank)):
        if t.layout is None:
            expected = after
        elif want[k] is not None:
            expected = ir.Constant(I64, want[k])
        else:
            expected = None
        if expected is not None:
            free = b.or_(b.not_(many), b.icmp_signed("<=", sizes[k], one))
            ok = b.and_(ok, b.or_(free, b.icmp_signed("==", elements[k], expected)))
        after = b.mul(after, sizes[k])
    check(ok)
    data = b.ptrtoint(_field(b, obj, "data", PTR), I64)
    aligned = b.sub(data, ir.Constant(I64, offset * item))
    words = [data, aligned, ir.Constant(I64, offset), *sizes, *elements]
    for k, v in enumerate(words):
        b.store(v, b.gep(desc, [ir.Constant(I64, k)], inbounds=True, source_etype=I64))

