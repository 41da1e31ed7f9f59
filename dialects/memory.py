"""The `memory` dialect: buffers with MLIR's `memref` and `vector` load/store spelling.

A buffer is a value of the core's `MemRefType`: `memref<?x4xf32>` (contiguous, row-major: the
identity layout) or `memref<?x4xf32, strided<[8, 1], offset: ?>>` (a strided window into a
bigger buffer; the offset and strides count elements). Ops:

- `memory.alloc` / `memory.dealloc`: a fresh buffer, freed again; `memory.arena`: one raw
  byte buffer that a function's temporaries are planned into, freed by `memory.dealloc` too;
- `memory.view`: a contiguous typed view at a byte offset of a byte buffer (`memref.view`);
- `memory.subview`: a strided window with static or dynamic offsets, sizes and strides
  (these two in `memory_view.py`);
- `memory.load` / `memory.store`: one element; `memory.vector_load` / `memory.vector_store`:
  a 1-D vector of consecutive elements along the last dimension (these four in
  `memory_access.py`);
- `memory.copy`: every element of one buffer into another of the same shape;
- `memory.dim`: the size of one dimension;
- `memory.check`: a run-time error recorded in a status buffer when a condition fails (the
  code, value and bound of the failing site; in `memory_access.py`).

Effects. The core has one effect trait, `Pure`: `dim`, `view` and `subview` carry it (they
compute a new descriptor and touch no memory), every other op has effects and is never
CSE'd, hoisted or erased for being unused. Which effect, on which buffer, is told by each
op's `memory_effects()` (MLIR's `MemoryEffectOpInterface`), and `effects_of(op)` answers for
any op, so that liveness and buffer reuse need not know this dialect's op list.

Reference semantics. A memref value is a numpy array, and views are numpy views sharing
memory, so a store through a view is seen through its base. A memref argument is the
caller's own array (by reference, as compiled code receives a pointer). The interpreter is
strict where compiled code would be undefined: an out-of-bounds index, a misaligned view, a
vector access past the end of the last dimension, a use after `dealloc`, a double free,
freeing what `alloc` did not make and copying between overlapping buffers are
`InterpreterError`s naming the op. Fresh memory is filled with all-ones bytes (NaN for
floats, -1 for integers, true for i1), and so is freed memory: a read of uninitialized data
shows up in the results.

Files. This module is the dialect's home: the `memory` dialect object, the `MemRef` and
`ByteBuffer` constraints, effects, the custom-syntax and interpreter helpers every op uses,
and the ops that allocate, free, copy and measure buffers. `memory.view`, `memory.subview`
and the layout arithmetic (`strides_and_offset`, `contiguous_strides`, `subview_type`,
`byte_size`, `DYNAMIC_INDEX`) are in `memory_view.py`; `memory.load`, `memory.store`,
`memory.vector_load`, `memory.vector_store`, `memory.check` and `EraseUnusedRead` are in
`memory_access.py`.
Both are split off to keep each file readable: they build on this module and are imported at
its end, so importing any one of them registers every op, and their public names stay
importable from here.
"""

from __future__ import annotations

import weakref

import numpy as np

from irkit.attributes import IntegerAttr
from irkit.ir import Operation, Value
from irkit.lexer import is_digits
from irkit.opdef import (
    Constraint, Dialect, I64Attr, Index, Op, OptOperand, Operand, Prop, Pure, Result, Terminator,
    VarOperand, has_trait,
)
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import (
    I64, I8, INDEX, ComplexType, FloatType, IndexType, IntegerType, MemRefType,
)
from irkit.dialects.arith import materialize_constant

memory = Dialect("memory", "Buffers: alloc / view / subview / load / store / copy / arena.")
# `memory.dim` folds to a plain index: an `arith.constant`, as memref.dim does in MLIR.
memory.constant_materializer = materialize_constant

#: what `memory_effects()` lists: (effect, buffer) pairs with these effect names
ALLOCATE, FREE, READ, WRITE = "allocate", "free", "read", "write"


def _scalar(t) -> bool:
    return isinstance(t, (IntegerType, IndexType, FloatType, ComplexType))


MemRef = Constraint(lambda t: isinstance(t, MemRefType) and _scalar(t.element),
                    "ranked memref of integer, index, float or complex elements")
ByteBuffer = Constraint(lambda t: isinstance(t, MemRefType) and t.rank == 1
                        and t.element is I8 and t.layout is None,
                        "1-D memref of i8 with the identity layout")


# ---------------------------------------------------------------------------------------------
# Effects
# ---------------------------------------------------------------------------------------------


def effects_of(op: Operation) -> list[tuple[str, Value]] | None:
    """The memory effects of `op` as (effect, buffer) pairs, or None when unknown (an op
    without `memory_effects()` that is not pure may do anything). A pure op with regions
    has the effects of the ops inside (MLIR's RecursiveMemoryEffects)."""
    hook = getattr(op, "memory_effects", None)
    if hook is not None:
        return hook()
    if not has_trait(op, Pure):
        return None
    out: list = []
    for region in op.regions:
        for nested in region.ops:
            effects = effects_of(nested)
            if effects is None:
                if has_trait(nested, Terminator):
                    continue
                return None
            out += effects
    return out


# ---------------------------------------------------------------------------------------------
# Custom-syntax pieces
# ---------------------------------------------------------------------------------------------


def _parse_refs(p, open_: str = "[", close: str = "]") -> list:
    p.expect(open_)
    refs = [] if p.tok == close else p.parse_operand_refs()
    p.expect(close)
    return refs


def _parse_int(p) -> int:
    tk = p.i
    negative = p.accept("-")
    if not is_digits(p.tok):
        raise p.error("expected an integer or an SSA value", tk)
    return -int(p.next()) if negative else int(p.next())


def _parse_memref_type(p) -> MemRefType:
    tk = p.i
    t = p.parse_type()
    if not isinstance(t, MemRefType):
        raise p.error(f"expected a ranked memref type, got '{t}'", tk)
    return t


def _indices(p, values) -> str:
    return "[" + ", ".join(map(p.value, values)) + "]"


def _index_refs(p, refs) -> list[Value]:
    return [p.resolve(r, INDEX) for r in refs]


# ---------------------------------------------------------------------------------------------
# Reference semantics helpers
# ---------------------------------------------------------------------------------------------

_ALLOCATED = "memory.allocated"     # interp.state: id -> array made by alloc / arena
_FREED = "memory.freed"             # interp.state: id(root) -> weakref of a freed root


def _fail(op: Operation, message: str):
    from irkit.interpreter import InterpreterError
    return InterpreterError(f"'{op.name}' {message}", op.location)


def _shape(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _dtype(op: Operation, t) -> np.dtype:
    from irkit.attributes import numpy_dtype
    dt = np.dtype(numpy_dtype(t))
    if dt.hasobject:
        raise _fail(op, f"cannot hold {t} elements in memory (no fixed-size numpy type)")
    return dt


def _allocate(interp, op: Operation, shape, dtype: np.dtype) -> np.ndarray:
    """A new array of `shape`, 64-byte aligned (as the backends align), poisoned."""
    if any(d < 0 for d in shape):
        raise _fail(op, f"cannot allocate a negative size {_shape(shape)}")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    a = raw[start:start + nbytes].view(dtype).reshape(shape)
    _poison(a)
    interp.state.setdefault(_ALLOCATED, {})[id(a)] = a
    return a


def _poison(a: np.ndarray) -> None:
    if a.dtype == np.bool_:
        a.fill(True)
    else:
        a.reshape(-1).view(np.uint8).fill(0xFF)


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns `a`'s memory (through as_strided's wrapper too)."""
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
        elif isinstance(getattr(b, "base", None), np.ndarray):
            a = b.base
        else:
            return a


def _is_freed(interp, a: np.ndarray) -> bool:
    freed = interp.state.get(_FREED)
    if not freed:
        return False
    root = _root(a)
    ref = freed.get(id(root))
    return ref is not None and ref() is root


def _check_live(interp, op: Operation, *arrays) -> None:
    for a in arrays:
        if _is_freed(interp, a):
            raise _fail(op, "uses a buffer after it was deallocated")


def _checked_index(op: Operation, a: np.ndarray, idx) -> tuple:
    idx = tuple(int(i) for i in idx)
    if any(not 0 <= i < d for i, d in zip(idx, a.shape)):
        raise _fail(op, f"index {_shape(idx)} is out of bounds for a memref of shape "
                        f"{_shape(a.shape)}")
    return idx


def _checked_vector(op: Operation, a: np.ndarray, idx, n: int) -> tuple:
    """The numpy index of `n` consecutive elements from `idx` along the last dimension."""
    idx = tuple(int(i) for i in idx)
    j, last = idx[-1], a.shape[-1]
    if any(not 0 <= i < d for i, d in zip(idx[:-1], a.shape)) or not 0 <= j <= last - n:
        raise _fail(op, f"index {_shape(idx)} with {n} elements is out of bounds for a memref "
                        f"of shape {_shape(a.shape)}")
    if n > 1 and a.strides[-1] != a.itemsize:
        raise _fail(op, f"needs a unit stride in the last dimension, got "
                        f"{a.strides[-1] // a.itemsize}")
    return idx[:-1] + (slice(j, j + n),)


def _writable(op: Operation, a: np.ndarray) -> None:
    if not a.flags.writeable:
        raise _fail(op, "writes to a read-only buffer")


# ---------------------------------------------------------------------------------------------
# alloc, arena, dealloc
# ---------------------------------------------------------------------------------------------


class EraseDeadAlloc(RewritePattern):
    """A buffer that is only written and freed is never read: erase it with its writes and
    its dealloc (MLIR's SimplifyDeadAlloc). A view, a read or any other use keeps it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        buf = op.results[0]
        users = buf.users
        stores = (memory_access.StoreOp, memory_access.VectorStoreOp)
        for u in users:
            if isinstance(u, stores) and u.memref is buf and u.value is not buf:
                continue
            if isinstance(u, CopyOp) and u.target is buf and u.source is not buf:
                continue
            if not isinstance(u, DeallocOp):
                return False
        for u in users:
            rewriter.erase_op(u)
        rewriter.erase_op(op)
        return True


class _EraseDeadAlloc(EraseDeadAlloc):
    root = "memory.alloc"


class _EraseDeadArena(EraseDeadAlloc):
    root = "memory.arena"


@memory.op
class AllocOp(Op):
    """A new buffer, contiguous (identity layout), one index operand per `?` size. Its
    contents are undefined until stored; `memory.dealloc` frees it.

        %m = memory.alloc(%d0) : memref<?x4xf32>
    """

    name = "memory.alloc"
    dynamic_sizes = VarOperand(Index, doc="one size per dynamic dimension, in order")
    memref = Result(MemRef)
    canonicalization_patterns = (_EraseDeadAlloc,)

    def verify_(self):
        t = self.memref.type
        if t.layout is not None:
            raise self.error(f"requires the identity layout (a contiguous buffer), got "
                             f"{t.layout}")
        if len(self.dynamic_sizes) != t.shape.count(None):
            raise self.error("dimension operand count does not equal memref dynamic "
                             "dimension count")

    def memory_effects(self):
        return [(ALLOCATE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        refs = _parse_refs(p, "(", ")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = _parse_memref_type(p)
        return cls.build(_index_refs(p, refs), result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f"({', '.join(map(p.value, self.dynamic_sizes))})")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        t = self.memref.type
        sizes = iter(values)
        shape = tuple(int(next(sizes)) if d is None else d for d in t.shape)
        return [_allocate(interp, self, shape, _dtype(self, t.element))]


@memory.op
class ArenaOp(Op):
    """One raw byte buffer that a function's temporaries live in, at planned byte offsets
    (`memory.view`). Its base is 64-byte aligned, so a view at an offset that is a multiple
    of 64 starts a cache line. Freed by `memory.dealloc`, like an alloc.

        %a = memory.arena(%bytes) : memref<?xi8>
    """

    name = "memory.arena"
    size = OptOperand(Index, doc="the size in bytes, when the type's size is `?`")
    memref = Result(ByteBuffer)
    canonicalization_patterns = (_EraseDeadArena,)

    def verify_(self):
        dynamic = self.memref.type.shape[0] is None
        if dynamic != (self.size is not None):
            raise self.error("requires a size operand exactly when the arena size is dynamic")

    def memory_effects(self):
        return [(ALLOCATE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        refs = _parse_refs(p, "(", ")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = _parse_memref_type(p)
        size = _index_refs(p, refs)
        if len(size) > 1:
            raise p.error("expected at most one size operand")
        return cls.build(size[0] if size else None, result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f"({p.value(self.size) if self.size is not None else ''})")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        n = self.memref.type.shape[0]
        n = int(values[0]) if n is None else n
        return [_allocate(interp, self, (n,), np.dtype(np.int8))]


@memory.op
class DeallocOp(Op):
    """Frees a buffer made by `memory.alloc` or `memory.arena` (never a view of one, nor an
    argument); using it, or any view of it, afterwards is undefined.

        memory.dealloc %m : memref<?x4xf32>
    """

    name = "memory.dealloc"
    memref = Operand(MemRef)

    def infer_result_types(self):
        return []

    def memory_effects(self):
        return [(FREE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build(p.resolve(ref, _parse_memref_type(p)), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        a = values[0]
        allocated = interp.state.get(_ALLOCATED, {})
        if allocated.get(id(a)) is not a:
            if _is_freed(interp, a):
                raise _fail(self, "frees a buffer that was already deallocated")
            raise _fail(self, "expects a buffer made by memory.alloc or memory.arena (not a "
                              "view of one, nor a function argument)")
        del allocated[id(a)]
        _poison(a)
        root = _root(a)
        interp.state.setdefault(_FREED, {})[id(root)] = weakref.ref(root)


# ---------------------------------------------------------------------------------------------
# copy
# ---------------------------------------------------------------------------------------------


class EraseSelfCopy(RewritePattern):
    """`copy %a, %a` changes nothing (MLIR's FoldSelfCopy)."""

    root = "memory.copy"        # CopyOp is defined below, so the annotation is a name

    def match_and_rewrite(self, op: CopyOp, rewriter: PatternRewriter) -> bool:
        if op.source is not op.target:
            return False
        rewriter.erase_op(op)
        return True


@memory.op
class CopyOp(Op):
    """Copies every element of `source` into `target`: same element type and shape (a `?`
    matches any size; the sizes must agree when it runs), any layouts. The buffers must not
    overlap, unless they are the very same view (which copies nothing).

        memory.copy %src, %dst : memref<?x4xf32> to memref<?x4xf32, strided<[8, 1]>>
    """

    name = "memory.copy"
    source = Operand(MemRef)
    target = Operand(MemRef)
    canonicalization_patterns = (EraseSelfCopy,)

    def infer_result_types(self):
        return []

    def verify_(self):
        s, t = self.source.type, self.target.type
        if s.element is not t.element:
            raise self.error(f"requires the same element type for source and target, got "
                             f"{s.element} and {t.element}")
        if s.rank != t.rank or any(a is not None and b is not None and a != b
                                   for a, b in zip(s.shape, t.shape)):
            raise self.error(f"requires compatible shapes for source and target, got {s} "
                             f"and {t}")

    def memory_effects(self):
        return [(READ, self.source), (WRITE, self.target)]

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        p.expect(",")
        dst = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = _parse_memref_type(p)
        p.expect("to")
        t = _parse_memref_type(p)
        return cls.build(p.resolve(src, s), p.resolve(dst, t), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.source)}, {p.value(self.target)}")
        p.attr_dict(self)
        p.write(f" : {self.source.type} to {self.target.type}")

    def interpret(self, interp, values):
        src, dst = values
        _check_live(interp, self, src, dst)
        if src.shape != dst.shape:
            raise _fail(self, f"source shape {_shape(src.shape)} differs from the target shape "
                              f"{_shape(dst.shape)}")
        same = (src.__array_interface__["data"][0] == dst.__array_interface__["data"][0]
                and src.strides == dst.strides)
        if same:
            return
        if np.may_share_memory(src, dst):
            try:
                overlap = np.shares_memory(src, dst, max_work=1 << 16)
            except np.exceptions.TooHardError:
                overlap = True
            if overlap:
                raise _fail(self, "source and target overlap")
        _writable(self, dst)
        np.copyto(dst, src)


# ---------------------------------------------------------------------------------------------
# dim
# ---------------------------------------------------------------------------------------------


@memory.op
class DimOp(Op):
    """The size of dimension `axis` (an integer attribute) of a buffer, as an `index`.
    Folds to a constant for a static size, and to the size operand of the alloc, arena,
    view or subview that made the buffer for a dynamic one.

        %n = memory.dim %m, 1 : memref<?x4xf32>
    """

    name = "memory.dim"
    memref = Operand(MemRef)
    axis = Prop(I64Attr)
    result = Result(Index)
    traits = (Pure(),)

    @classmethod
    def create(cls, memref: Value, axis: int, location=None) -> "DimOp":
        return cls.build(memref, axis=IntegerAttr(axis, I64), location=location)

    def infer_result_types(self):
        return [INDEX]

    def verify_(self):
        a, r = self.axis.value, self.memref.type.rank
        if not 0 <= a < r:
            raise self.error(f"axis {a} is out of range for a memref of rank {r}")

    def fold(self, operands):
        t, a = self.memref.type, self.axis.value
        if not 0 <= a < t.rank:
            return None
        if t.shape[a] is not None:
            return [IntegerAttr(t.shape[a], INDEX)]
        owner = getattr(self.memref, "owner", None)
        k = t.shape[:a].count(None)       # which dynamic size operand
        if isinstance(owner, AllocOp):
            return [owner.dynamic_sizes[k]]
        if isinstance(owner, memory_view.ViewOp):
            return [owner.sizes[k]]
        if isinstance(owner, ArenaOp):
            return [owner.size]
        if isinstance(owner, memory_view.SubviewOp):
            size = owner.mixed_sizes()[a]
            return None if size is None else [size]
        return None

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        p.expect(",")
        axis = _parse_int(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = _parse_memref_type(p)
        return cls.build(p.resolve(ref, t), axis=IntegerAttr(axis, I64), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}, {self.axis.value}")
        p.attr_dict(self, elided=("axis",))
        p.write(f" : {self.memref.type}")

    def evaluate(self, a):
        return int(a.shape[self.axis.value])


# ---------------------------------------------------------------------------------------------
# view, subview and the layout helpers: memory_view.py; load, store and their vector forms:
# memory_access.py
# ---------------------------------------------------------------------------------------------

# memory_view and memory_access build on this module and register their ops (`memory.view`,
# `memory.subview`; `memory.load`, `memory.store`, `memory.vector_load`, `memory.vector_store`)
# on the dialect above, so they are imported last, as graph.py imports its families;
# memory_view first, since memory_access uses its layouts. They are imported as modules, not by
# name: when a program imports one of them first, this line runs while that module is still
# half-defined, so its names are looked up when used.
from irkit.dialects import memory_view  # noqa: E402
from irkit.dialects import memory_access  # noqa: E402

#: names defined in memory_view.py and memory_access.py that code imports from here (as it did
#: before the splits), with the module that defines each
_REEXPORTED = {
    **dict.fromkeys(("DYNAMIC_INDEX", "SubviewOp", "ViewOp", "byte_size", "contiguous_strides",
                     "strides_and_offset", "subview_type"), memory_view),
    **dict.fromkeys(("CheckOp", "EraseUnusedRead", "LoadOp", "STATUS_TYPE", "StoreOp",
                     "VectorLoadOp", "VectorStoreOp"), memory_access),
}


def __getattr__(name: str):
    """Re-exports `_REEXPORTED` lazily (PEP 562), so that
    `from irkit.dialects.memory import SubviewOp` works whichever module was imported first."""
    module = _REEXPORTED.get(name)
    if module is not None:
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
