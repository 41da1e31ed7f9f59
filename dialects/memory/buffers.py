"""The `memory` dialect's home: the dialect object, the `MemRef` and `ByteBuffer` constraints,
effects, the custom-syntax and reference-semantics helpers every memory op uses, and the ops
that allocate, free, copy and measure buffers (`alloc`, `arena`, `dealloc`, `copy`, `dim`).
See `irkit.dialects.memory` for the dialect as a whole.
"""

from __future__ import annotations

import weakref

import numpy as np

from irkit.ir import Operation, Value
from irkit.opdef import (  # noqa: F401  (the effect names: memory's ops list them)
    ALLOCATE, FREE, READ, WRITE, Constraint, Dialect, Index, Op, OptOperand, Operand, Pure,
    Result, Terminator, VarOperand, has_trait,
)
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import (
    I8, INDEX, ComplexType, FloatType, IndexType, IntegerType, MemRefType,
)
from irkit.dialects.arith import materialize_constant

memory = Dialect("memory", "Buffers: alloc / view / subview / load / store / copy / arena.")
# `memory.dim` folds to a plain index: an `arith.constant`, as memref.dim does in MLIR.
memory.constant_materializer = materialize_constant


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


def parse_refs(p, open_: str = "[", close: str = "]") -> list:
    p.expect(open_)
    refs = [] if p.tok == close else p.parse_operand_refs()
    p.expect(close)
    return refs


def parse_int(p) -> int:
    return p.parse_signed_int("an integer or an SSA value")


def parse_memref_type(p) -> MemRefType:
    tk = p.i
    t = p.parse_type()
    if not isinstance(t, MemRefType):
        raise p.error(f"expected a ranked memref type, got '{t}'", tk)
    return t


def indices_text(p, values) -> str:
    return "[" + ", ".join(map(p.value, values)) + "]"


def resolve_indices(p, refs) -> list[Value]:
    return [p.resolve(r, INDEX) for r in refs]


# ---------------------------------------------------------------------------------------------
# Reference semantics helpers
# ---------------------------------------------------------------------------------------------

_ALLOCATED = "memory.allocated"     # interp.state: id -> array made by alloc / arena
_FREED = "memory.freed"             # interp.state: id(root) -> weakref of a freed root


def run_error(op: Operation, message: str):
    from irkit.interpreter import InterpreterError
    return InterpreterError(f"'{op.name}' {message}", op.location)


def shape_text(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def storage_dtype(op: Operation, t) -> np.dtype:
    from irkit.attributes import numpy_dtype
    dt = np.dtype(numpy_dtype(t))
    if dt.hasobject:
        raise run_error(op, f"cannot hold {t} elements in memory (no fixed-size numpy type)")
    return dt


def _allocate(interp, op: Operation, shape, dtype: np.dtype) -> np.ndarray:
    """A new array of `shape`, 64-byte aligned (as the backends align), poisoned."""
    if any(d < 0 for d in shape):
        raise run_error(op, f"cannot allocate a negative size {shape_text(shape)}")
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


def check_live(interp, op: Operation, *arrays) -> None:
    for a in arrays:
        if _is_freed(interp, a):
            raise run_error(op, "uses a buffer after it was deallocated")


def checked_index(op: Operation, a: np.ndarray, idx) -> tuple:
    idx = tuple(int(i) for i in idx)
    if any(not 0 <= i < d for i, d in zip(idx, a.shape)):
        raise run_error(op, f"index {shape_text(idx)} is out of bounds for a memref of shape "
                        f"{shape_text(a.shape)}")
    return idx


def checked_vector(op: Operation, a: np.ndarray, idx, n: int) -> tuple:
    """The numpy index of `n` consecutive elements from `idx` along the last dimension."""
    idx = tuple(int(i) for i in idx)
    j, last = idx[-1], a.shape[-1]
    if any(not 0 <= i < d for i, d in zip(idx[:-1], a.shape)) or not 0 <= j <= last - n:
        raise run_error(op, f"index {shape_text(idx)} with {n} elements is out of bounds for a "
                        f"memref of shape {shape_text(a.shape)}")
    if n > 1 and a.strides[-1] != a.itemsize:
        raise run_error(op, f"needs a unit stride in the last dimension, got "
                        f"{a.strides[-1] // a.itemsize}")
    return idx[:-1] + (slice(j, j + n),)


def check_writable(op: Operation, a: np.ndarray) -> None:
    if not a.flags.writeable:
        raise run_error(op, "writes to a read-only buffer")


# ---------------------------------------------------------------------------------------------
# alloc, arena, dealloc
# ---------------------------------------------------------------------------------------------


#: the ops that write one element or vector (defined in `access`, which builds on this module)
_STORES = ("memory.store", "memory.vector_store")


class EraseDeadAlloc(RewritePattern):
    """A buffer that is only written and freed is never read: erase it with its writes and
    its dealloc (MLIR's SimplifyDeadAlloc). A view, a read or any other use keeps it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        buf = op.results[0]
        users = buf.users
        for u in users:
            if u.name in _STORES and u.memref is buf and u.value is not buf:
                continue
            if isinstance(u, CopyOp) and u.target is buf and u.source is not buf:
                continue
            if not isinstance(u, DeallocOp):
                return False
        for u in users:
            rewriter.erase_op(u)
        rewriter.erase_op(op)
        return True


def _verify_contiguous(op: Operation, t: MemRefType) -> None:
    """A new buffer's type: the identity layout (`alloc` and `alloca` make contiguous ones)."""
    if t.layout is not None:
        raise op.error(f"requires the identity layout (a contiguous buffer), got {t.layout}")


class _EraseDeadAlloc(EraseDeadAlloc):
    root = "memory.alloc"


class _EraseDeadArena(EraseDeadAlloc):
    root = "memory.arena"


class _EraseDeadAlloca(EraseDeadAlloc):
    root = "memory.alloca"


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
        _verify_contiguous(self, t)
        if len(self.dynamic_sizes) != t.shape.count(None):
            raise self.error("dimension operand count does not equal memref dynamic "
                             "dimension count")

    def memory_effects(self):
        return [(ALLOCATE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        refs = parse_refs(p, "(", ")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(resolve_indices(p, refs), result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f"({', '.join(map(p.value, self.dynamic_sizes))})")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        t = self.memref.type
        sizes = iter(values)
        shape = tuple(int(next(sizes)) if d is None else d for d in t.shape)
        return [_allocate(interp, self, shape, storage_dtype(self, t.element))]


@memory.op
class AllocaOp(Op):
    """A new buffer on the stack, of a static shape, contiguous (MLIR's memref.alloca); its
    contents are undefined until stored. It lives until the end of the block it is in (one
    execution of it): never passed to `memory.dealloc`, never used after its block ends,
    and never used by a later execution of its block (MLIR's alloca lives until its
    function returns; this narrower scope is what lets a backend give each `alloca` one
    fixed slot, which a loop reuses: the CPU backend's is in the function's entry block,
    an outlined parallel body's in its own, one per thread). `promote-buffers-to-stack`
    makes them from small allocs freed in their own block.

        %m = memory.alloca() : memref<8x64xf32>
    """

    name = "memory.alloca"
    memref = Result(MemRef)
    canonicalization_patterns = (_EraseDeadAlloca,)

    def verify_(self):
        t = self.memref.type
        _verify_contiguous(self, t)
        if not t.has_static_shape:
            raise self.error(f"requires a static shape (a stack slot of a fixed size), got "
                             f"{t}")

    def memory_effects(self):
        return [(ALLOCATE, self.memref)]

    @classmethod
    def parse(cls, p, num_results):
        p.expect("(")
        p.expect(")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build(result_types=[parse_memref_type(p)], attributes=attrs)

    def print(self, p):
        p.write("()")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        t = self.memref.type
        a = _allocate(interp, self, t.shape, storage_dtype(self, t.element))
        del interp.state[_ALLOCATED][id(a)]     # not `memory.dealloc`'s to free
        return [a]


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
        refs = parse_refs(p, "(", ")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        size = resolve_indices(p, refs)
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
        return cls.build(p.resolve(ref, parse_memref_type(p)), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def interpret(self, interp, values):
        a = values[0]
        allocated = interp.state.get(_ALLOCATED, {})
        if allocated.get(id(a)) is not a:
            if _is_freed(interp, a):
                raise run_error(self, "frees a buffer that was already deallocated")
            raise run_error(self, "expects a buffer made by memory.alloc or memory.arena (not a "
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
        s = parse_memref_type(p)
        p.expect("to")
        t = parse_memref_type(p)
        return cls.build(p.resolve(src, s), p.resolve(dst, t), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.source)}, {p.value(self.target)}")
        p.attr_dict(self)
        p.write(f" : {self.source.type} to {self.target.type}")

    def interpret(self, interp, values):
        src, dst = values
        check_live(interp, self, src, dst)
        if src.shape != dst.shape:
            raise run_error(self, f"source shape {shape_text(src.shape)} differs from the target "
                            f"shape {shape_text(dst.shape)}")
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
                raise run_error(self, "source and target overlap")
        check_writable(self, dst)
        np.copyto(dst, src)
