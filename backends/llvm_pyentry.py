"""Python's own way into a compiled function: an entry point CPython calls directly.

Why. A model's step at a small batch runs in microseconds, and calling it through ctypes
costs as much again: per memref argument Python reads the array's data address
(`ndarray.ctypes.data` alone is 0.75 us; the buffer protocol a quarter of that), packs the
descriptor words and converts each pointer; a batch-1 logistic-regression step spent 4.7 us
of its 10.5 there, around 5.8 us of compiled code. numba and JAX's C++ dispatch answer
the same cost the same way: the code that turns arrays into what the kernel takes is compiled
too.

What. For each public function whose arguments are all memrefs and which has no results
(what a model's entries are; `plain`), the module gets an entry, `_irkit_py_<name>`, with
CPython's METH_FASTCALL signature

    PyObject *entry(PyObject *table, PyObject *const *args, Py_ssize_t nargs)

that reads each argument's numpy array object, builds its memref descriptor on the stack,
and calls the function. `llvm_abi.JitFunction` makes it a Python builtin function
(`PyCFunction_NewEx`) whose `self` is `table`, a numpy int64 array of addresses it fills in
the calling process (the `TABLE` slots): CPython's `Py_IncRef`, `None`, a fallback object,
`PyEval_SaveThread` and `PyEval_RestoreThread`, the `numpy.ndarray` type, and per argument
the numpy dtype object it must have (the call entry below reads the other slots). So the
object code names no symbol of Python's: it is the same in the compile cache, in a shared
library for C, and in any process.

Guards. The entry checks every argument before it reads more of it: exactly `ndarray` (by
type), the expected dtype object (numpy's canonical one: an equal dtype that is another
object fails the guard), the rank, each static size, byte strides that are multiples of the
item size, and the strides the layout fixes (the identity layout: row-major and contiguous,
whatever its sizes). Any miss returns the fallback object instead of calling; the Python side
then takes the general path, which converts what it can or raises a `ValueError` naming the
argument (`llvm_abi._MemRefParam`). So a wrong argument costs a slower call, never a wrong
read. The GIL is released around the call, as ctypes releases it.

The call entry: a model's whole call. Around 30 us of kernels, a logistic-regression
step spent 8.5 us in the Python that turned `train_step(x=..., labels=...)` into the first
entry's call: looking up the inputs, comparing their shapes with those of calls before,
allocating the outputs, reading the status and building the result dict. The same Python
took 3 us in a loop that called nothing: after a kernel has streamed its data through the
caches, every bytecode and object it touches misses them. So each model entry also gets
`_irkit_call_<name>`, called as `call(given, store, status)`: `given` the inputs by name
and `store` the variables by name (exact dicts), `status` the error status array. It
looks each argument up by the name object in its table slot (`names_at`), guards it as
above, and compares each input's sizes with the table's *record*: the sizes of the inputs
and outputs of a call the Python side checked (`llvm_abi.JitFunction.record`). So it takes
the shapes the checked path has accepted and no others, and where the record is empty,
or any lookup, guard or size misses, it calls nothing and returns the fallback object. It
then allocates each output (numpy's `PyArray_Empty`, sized from the record), makes the
call, returns the table's error object where the status array says the call failed (the
Python side raises from it), and otherwise a new dict of the outputs by name. All of it
runs holding the GIL, but the call. The lookups come before the record is read: comparing
a key may run Python code, which may replace the record, and nothing between reading the
record and the last allocation runs any.

The array fields read are numpy's `PyArrayObject` (data, nd, dimensions, strides, descr at
`ARRAY_FIELDS`), public in numpy's C headers since 1.7 and the same in 2.x; the Python side
checks them on a probe array before it uses any entry (`llvm_abi._python_api`) and keeps to
ctypes where they differ (another numpy, a debug or free-threaded Python). It finds
`PyArray_Empty` in the function table numpy exports to C extensions and checks it on a
probe call; without it, no call entry is used.
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
#: the call entry of function `f` (the module docstring) is `CALL_PREFIX + f`
CALL_PREFIX = "_irkit_call_"
#: the slots of a function's table (an int64 array, shared by its two entries): what they
#: hold; per argument, its dtype object from `DTYPES` on, then its name object
#: (`names_at`); "record" is the call entry's shapes array (0: none yet)
TABLE = ("Py_IncRef", "None", "fallback", "PyEval_SaveThread", "PyEval_RestoreThread",
         "ndarray", "Py_DecRef", "dict", "PyDict_Size", "PyDict_GetItem", "PyDict_New",
         "PyDict_SetItem", "PyArray_Empty", "error", "record")
(INCREF, NONE, FALLBACK, SAVE_THREAD, RESTORE_THREAD, NDARRAY, DECREF, DICT, DICT_SIZE,
 DICT_GET, DICT_NEW, DICT_SET, ARRAY_EMPTY, ERROR, RECORD) = range(len(TABLE))
DTYPES = len(TABLE)


def names_at(arguments: int) -> int:
    """The table slot of the first argument's name object, for a function of `arguments`
    arguments (their dtypes come first)."""
    return DTYPES + arguments

I32 = ir.IntType(32)
_BOOL = ir.IntType(1)


def plain(inputs: list, results: list) -> bool:
    """Whether a function of these argument and result types gets an entry: memrefs only,
    no results (what `llvm_abi.JitFunction` then calls with the descriptors alone)."""
    return not results and all(isinstance(t, MemRefType) for t in inputs)


def argument_roles(fn) -> list[str]:
    """Per argument of `fn`, what a model's call passes there: "out" (`graph.output`),
    "var" (`graph.variable`), "status" (`graph.status`) or "in" (the rest, its inputs): the
    argument attributes bufferization writes (`runtime.compiled.Entry` reads the same)."""
    attrs = fn.properties.get("arg_attrs")
    roles = []
    for i in range(len(fn.properties["function_type"].value.inputs)):
        d = attrs[i].value if attrs is not None else {}
        roles.append("out" if "graph.output" in d else "var" if "graph.variable" in d
                     else "status" if "graph.status" in d else "in")
    return roles


def add_python_entries(ml) -> None:
    """The two entries of each public plain function that `ml` (a `ModuleLowering`)
    translated (the module docstring); the second not for an output-sizes helper, which no
    model call reaches."""
    for name, (llfn, sig, fn) in list(ml.functions.items()):
        vis = fn.properties.get("sym_visibility")
        if not fn.regions[0].blocks or (vis is not None and vis.value != "public") or \
                not plain(sig.inputs, sig.results):
            continue
        for prefix in (PREFIX, CALL_PREFIX):
            if prefix + name in ml.llmod.globals:
                raise error_at(fn, f"cannot have its Python entry: the module already "
                                   f"defines '@{prefix + name}'")
        _emit(ml.llmod, llfn, sig.inputs, PREFIX + name)
        if "graph.output_sizes_of" not in fn.attributes:
            _emit_call(ml.llmod, llfn, sig.inputs, argument_roles(fn), CALL_PREFIX + name)


class _Entry:
    """An entry function being built: METH_FASTCALL's signature, its table, and one fallback
    block that every failed guard branches to."""

    def __init__(self, llmod: ir.Module, name: str) -> None:
        self.fn = fn = ir.Function(llmod, ir.FunctionType(PTR, [PTR, PTR, I64]), name=name)
        # straight-line code that LLVM's optimizer cannot make measurably faster (a call of
        # a one-element model took 1.9-2.0 us either way) but spent 5% of its time on: the
        # MLP's module compiled in 448 ms with the entries optimized, 432 with them left as
        # built, 428 without them (medians of 7 in one process)
        for attr in ("nounwind", "noinline", "optnone"):
            fn.attributes.add(attr)
        self.table_obj, self.args, self.nargs = fn.args
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        self.fallback = fn.append_basic_block("fallback")
        self.table = _field(self.b, self.table_obj, "data", PTR)

    def slot(self, k: int, fnty: ir.FunctionType | None = None) -> ir.Value:
        """Table slot `k` as a pointer (to a function of type `fnty`, if given)."""
        b = self.b
        word = b.load(b.gep(self.table, [ir.Constant(I64, k)], inbounds=True,
                            source_etype=I64), typ=I64)
        return b.inttoptr(word, fnty.as_pointer() if fnty is not None else PTR)

    def call(self, k: int, result: ir.Type, args: list, types: list | None = None):
        """Call the C function in table slot `k`."""
        fnty = ir.FunctionType(result, types or [a.type for a in args])
        return self.b.call(self.slot(k, fnty), args)

    def check(self, cond: ir.Value, label: str) -> None:
        """Go on where `cond` holds, to the fallback where not."""
        on = self.fn.append_basic_block(label)
        self.b.cbranch(cond, on, self.fallback)
        self.b.position_at_end(on)

    def argument(self, i: int) -> ir.Value:
        b = self.b
        return b.load(b.gep(self.args, [ir.Constant(I64, i)], inbounds=True, source_etype=PTR),
                      typ=PTR)

    def array(self, obj: ir.Value, i: int, t: MemRefType, desc: ir.Value) -> None:
        """Guard that `obj` is an ndarray of argument `i`'s dtype object and `t`'s rank,
        sizes and layout, and write its descriptor into `desc`."""
        b = self.b
        self.check(b.icmp_unsigned("==", _field(b, obj, "ob_type", PTR), self.slot(NDARRAY)),
                   f"arg{i}.ndarray")
        same = b.and_(b.icmp_unsigned("==", _field(b, obj, "descr", PTR),
                                      self.slot(DTYPES + i)),
                      b.icmp_signed("==", _field(b, obj, "nd", I32), ir.Constant(I32, t.rank)))
        self.check(same, f"arg{i}.dtype_rank")
        _describe(b, obj, t, desc, lambda cond: self.check(cond, f"arg{i}.layout"))

    def ret(self, obj: ir.Value) -> None:
        """Return a new reference to `obj` (METH_FASTCALL's result)."""
        self.call(INCREF, ir.VoidType(), [obj])
        self.b.ret(obj)

    def call_unlocked(self, callee: ir.Function, descriptors: list) -> None:
        """Call `callee` with the GIL released, as ctypes calls."""
        save = self.call(SAVE_THREAD, PTR, [], [])
        self.b.call(callee, descriptors)
        self.call(RESTORE_THREAD, ir.VoidType(), [save])


def _emit(llmod: ir.Module, callee: ir.Function, inputs: list[MemRefType], name: str) -> None:
    """`name`, the entry of `callee` taking its arrays: a chain of blocks, each taking one
    more fact about the arguments as given (their count; per argument its type, then its
    dtype and rank, then its sizes and strides, reading no field before the facts it depends
    on hold), every failed check branching to one fallback block; then the call."""
    e = _Entry(llmod, name)
    descriptors = [e.b.alloca(I64, size=3 + 2 * t.rank) for t in inputs]
    e.check(e.b.icmp_signed("==", e.nargs, ir.Constant(I64, len(inputs))), "arity")
    for i, (t, desc) in enumerate(zip(inputs, descriptors)):
        e.array(e.argument(i), i, t, desc)
    e.call_unlocked(callee, descriptors)
    e.ret(e.slot(NONE))
    e.b.position_at_end(e.fallback)
    e.ret(e.slot(FALLBACK))


def _emit_call(llmod: ir.Module, callee: ir.Function, inputs: list[MemRefType],
               roles: list[str], name: str) -> None:
    """`name`, the call of `callee` as a model makes it, `(given, store, status)` -> dict
    (the module docstring): the guards of `_emit` on each array it finds, the inputs' sizes
    against the record, then the outputs allocated, the call, the status read and the dict
    built. Each allocation that fails frees those before it and returns NULL: numpy has set
    the MemoryError."""
    e = _Entry(llmod, name)
    b = e.b
    names = names_at(len(inputs))
    descriptors = [b.alloca(I64, size=3 + 2 * t.rank) for t in inputs]
    e.check(b.icmp_signed("==", e.nargs, ir.Constant(I64, 3)), "arity")
    given, store, status = (e.argument(k) for k in range(3))
    is_dict = [b.icmp_unsigned("==", _field(b, d, "ob_type", PTR), e.slot(DICT))
               for d in (given, store)]
    e.check(b.and_(*is_dict), "dicts")
    size = e.call(DICT_SIZE, I64, [given])
    e.check(b.icmp_signed("==", size, ir.Constant(I64, roles.count("in"))), "count")
    # every lookup before the record is read: a key's __eq__ may run Python code, and that
    # may replace the record (it is read and used with no Python code in between)
    found = {}
    for i, role in enumerate(roles):
        if role in ("in", "var"):
            obj = e.call(DICT_GET, PTR, [given if role == "in" else store, e.slot(names + i)])
            e.check(b.icmp_unsigned("!=", obj, ir.Constant(PTR, None)), f"arg{i}.found")
            found[i] = obj
        elif role == "status":
            found[i] = status
    record = e.slot(RECORD)
    e.check(b.icmp_unsigned("!=", record, ir.Constant(PTR, None)), "recorded")
    at = 0                      # the next input's or output's first size in the record
    outputs = []                # (argument, its sizes in the record)
    for i, (t, role) in enumerate(zip(inputs, roles)):
        if role == "out":
            outputs.append((i, b.gep(record, [ir.Constant(I64, at)], inbounds=True,
                                     source_etype=I64)))
            at += t.rank
            continue
        e.array(found[i], i, t, descriptors[i])
        if role == "in":
            dims = _field(b, found[i], "dimensions", PTR)
            same = ir.Constant(_BOOL, 1)
            for k in range(t.rank):
                size_k, want = (b.load(b.gep(base, [ir.Constant(I64, j)], inbounds=True,
                                             source_etype=I64), typ=I64)
                                for base, j in ((dims, k), (record, at + k)))
                same = b.and_(same, b.icmp_signed("==", size_k, want))
            e.check(same, f"arg{i}.recorded")
            at += t.rank
    made = []                   # the output arrays allocated so far

    def fail(label: str) -> ir.Block:
        """A block that frees what `made` holds now and returns NULL."""
        here = b.block
        block = e.fn.append_basic_block(label)
        b.position_at_end(block)
        for arr in made:
            e.call(DECREF, ir.VoidType(), [arr])
        b.ret(ir.Constant(PTR, None))
        b.position_at_end(here)
        return block

    for i, sizes in outputs:
        t = inputs[i]
        descr = e.slot(DTYPES + i)
        e.call(INCREF, ir.VoidType(), [descr])          # PyArray_Empty steals it
        arr = e.call(ARRAY_EMPTY, PTR, [ir.Constant(I32, t.rank), sizes, descr,
                                        ir.Constant(I32, 0)])
        ok = e.fn.append_basic_block(f"arg{i}.made")
        b.cbranch(b.icmp_unsigned("!=", arr, ir.Constant(PTR, None)), ok,
                  fail(f"arg{i}.failed"))
        b.position_at_end(ok)
        made.append(arr)
        _describe(b, arr, t, descriptors[i], lambda cond: None)   # C-contiguous, as sized
    e.call_unlocked(callee, descriptors)
    if "status" in roles:
        word = b.load(_field(b, status, "data", PTR), typ=I64)
        ok = e.fn.append_basic_block("status.clear")
        error = e.fn.append_basic_block("status.set")
        b.cbranch(b.icmp_signed("==", word, ir.Constant(I64, 0)), ok, error)
        b.position_at_end(error)
        for arr in made:
            e.call(DECREF, ir.VoidType(), [arr])
        e.ret(e.slot(ERROR))
        b.position_at_end(ok)
    result = e.call(DICT_NEW, PTR, [], [])
    ok = e.fn.append_basic_block("dict.made")
    b.cbranch(b.icmp_unsigned("!=", result, ir.Constant(PTR, None)), ok, fail("dict.failed"))
    b.position_at_end(ok)
    for (i, _), arr in zip(outputs, made):
        stored = e.call(DICT_SET, I32, [result, e.slot(names + i), arr])
        ok = e.fn.append_basic_block(f"arg{i}.stored")
        made.append(result)                 # a failure frees the dict too
        b.cbranch(b.icmp_signed("==", stored, ir.Constant(I32, 0)), ok, fail(f"arg{i}.lost"))
        made.pop()
        b.position_at_end(ok)
    for arr in made:                        # the dict holds them now
        e.call(DECREF, ir.VoidType(), [arr])
    b.ret(result)
    b.position_at_end(e.fallback)
    e.ret(e.slot(FALLBACK))


def _field(b: ir.IRBuilder, obj: ir.Value, name: str, t: ir.Type) -> ir.Value:
    at = b.gep(obj, [ir.Constant(I64, ARRAY_FIELDS[name])], source_etype=ir.IntType(8))
    return b.load(at, typ=t)


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

