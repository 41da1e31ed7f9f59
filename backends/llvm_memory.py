"""LLVM rules for the `memory` dialect: buffers as MLIR memref descriptors.

A memref value is the descriptor struct `{T* allocated, T* aligned, i64 offset, [R x i64]
sizes, [R x i64] strides}` by value (`llvm_types.descriptor_type`). Element `(i0, ..., iR-1)`
lives at `aligned + offset + sum(ik * stride_k)` elements. Sizes, strides and the offset that
the memref *type* fixes are used as constants instead of the descriptor's fields, so a loop
over `memref<64x64xf32>` indexes with constant strides and LLVM can vectorize it.

- `memory.alloc` / `memory.arena` call `malloc(bytes + 64)` and round the pointer up to a
  multiple of 64 (the alignment the interpreter promises; an `alignment` attribute may ask
  for more): `allocated` is what `malloc` returned, `aligned` the rounded pointer, as in
  MLIR; `memory.dealloc` frees `allocated`. `memory.alloca` is a 64-byte aligned `alloca`
  in the entry block, both pointers the slot.
- `memory.view` starts at `aligned + offset + byte_shift` of the byte buffer, contiguous.
- `memory.subview` and `memory.collapse_shape` only compute a new descriptor (offset, sizes,
  strides).
- `memory.copy` is one `memcpy` when both sides are contiguous by type, else a loop nest.
- `memory.check` branches (weighted as unlikely) to a cold block that claims status[0] with a
  `cmpxchg` from 0 to the site's code, so that of several threads failing at once exactly
  one records its value and bound (two plain stores after a won exchange); the callers join
  the threads before reading the status.
- `memory.vector_store {nontemporal = true}` is a `!nontemporal` store, whole or in 16-byte
  pieces as the address's alignment allows at run time (`_streaming_store`); `memory.fence`
  is x86's `sfence`, which orders them.
- Elements are stored in their storage type (`i1` as a byte, see `llvm_types`).
"""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir

from irkit.attributes import IntegerAttr
from irkit.types import MemRefType
from irkit.backends.llvm_lowering import FunctionLowering, emit_loop_nest, lowers
from irkit.backends.llvm_types import (
    ALIGNED, ALLOCATED, I1, I8, I64, OFFSET, PTR, SIZES, STRIDES, VOID, byte_size, element_of,
    from_storage, layout, scalar_type, storage_scalar, storage_type, to_storage,
)

_ALIGNMENT = 64
#: whether this process is x86 (the CPU backend compiles for the process's triple)
_X86 = llvm.get_process_triple().startswith(("x86_64", "i386", "i686"))


class Memref:
    """A descriptor value with its type: fields read as constants where the type fixes them."""

    def __init__(self, lw: FunctionLowering, value: ir.Value, t: MemRefType) -> None:
        self.lw = lw
        self.value = value
        self.type = t
        self.elem = scalar_type(t.element, lw.op)
        self.storage = storage_scalar(self.elem)
        self.static_strides, self.static_offset = layout(t, lw.op)

    def _field(self, *idx: int) -> ir.Value:
        return self.lw.builder.extract_value(self.value, list(idx) if len(idx) > 1 else idx[0])

    def size(self, k: int) -> ir.Value:
        d = self.type.shape[k]
        return ir.Constant(I64, d) if d is not None else self._field(SIZES, k)

    def stride(self, k: int) -> ir.Value:
        s = self.static_strides[k]
        return ir.Constant(I64, s) if s is not None else self._field(STRIDES, k)

    def offset(self) -> ir.Value:
        o = self.static_offset
        return ir.Constant(I64, o) if o is not None else self._field(OFFSET)

    def allocated(self) -> ir.Value:
        return self._field(ALLOCATED)

    def aligned(self) -> ir.Value:
        return self._field(ALIGNED)

    def element_ptr(self, indices: list[ir.Value]) -> ir.Value:
        """The address of element `indices`: aligned + offset + sum(i_k * stride_k)."""
        b = self.lw.builder
        linear = self.offset()
        for k, i in enumerate(indices):
            linear = _add(b, linear, _mul(b, i, self.stride(k)))
        return b.gep(self.aligned(), [linear], inbounds=True, source_etype=self.storage)

    def contiguous_by_type(self) -> bool:
        """Row-major with offset 0, known from the type alone."""
        return self.static_offset == 0 and self.type.layout is None


def _is_const(v: ir.Value, c: int) -> bool:
    return isinstance(v, ir.Constant) and v.constant == c


def _add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """`x + y` on indices, skipping additions of 0 (the common static offset)."""
    if _is_const(x, 0):
        return y
    if _is_const(y, 0):
        return x
    return b.add(x, y, flags=["nsw"])


def _mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if _is_const(y, 1):
        return x
    if _is_const(x, 1):
        return y
    return b.mul(x, y, flags=["nsw"])


def make_descriptor(lw: FunctionLowering, t: MemRefType, allocated: ir.Value,
                    aligned: ir.Value, offset: ir.Value, sizes: list, strides: list):
    b = lw.builder
    d = ir.Constant(lw.value_type(t), None)
    d = b.insert_value(d, allocated, ALLOCATED)
    d = b.insert_value(d, aligned, ALIGNED)
    d = b.insert_value(d, offset, OFFSET)
    for k, (n, s) in enumerate(zip(sizes, strides)):
        d = b.insert_value(d, n, [SIZES, k])
        d = b.insert_value(d, s, [STRIDES, k])
    return d


def _row_major(b: ir.IRBuilder, sizes: list[ir.Value]) -> tuple[list[ir.Value], ir.Value]:
    """Row-major strides of `sizes` and the element count."""
    strides = []
    acc: ir.Value = ir.Constant(I64, 1)
    for n in reversed(sizes):
        strides.append(acc)
        acc = _mul(b, acc, n)
    return strides[::-1], acc


def _shape(lw: FunctionLowering, t: MemRefType, dynamic: list[ir.Value]) -> list[ir.Value]:
    """The sizes of `t`: constants, and the operands in order for the `?`s."""
    it = iter(dynamic)
    return [next(it) if d is None else ir.Constant(I64, d) for d in t.shape]


def _malloc_aligned(lw: FunctionLowering, nbytes: ir.Value,
                    align: int) -> tuple[ir.Value, ir.Value]:
    """(allocated, aligned): `malloc(nbytes + align)` and that pointer rounded up to a
    multiple of `align`."""
    b = lw.builder
    malloc = lw.ml.declare_runtime("malloc", ir.FunctionType(PTR, [I64]), lw.op)
    allocated = b.call(malloc, [b.add(nbytes, ir.Constant(I64, align))])
    misalign = b.and_(b.sub(ir.Constant(I64, 0), b.ptrtoint(allocated, I64)),
                      ir.Constant(I64, align - 1))
    return allocated, b.gep(allocated, [misalign], inbounds=True, source_etype=I8)


def _memref(lw: FunctionLowering, value, t) -> Memref:
    return Memref(lw, value, t)


# ---------------------------------------------------------------------------------------------
# Allocation
# ---------------------------------------------------------------------------------------------


def _alignment(lw: FunctionLowering, op) -> int:
    """A new buffer's alignment: its `alignment` attribute's (a power of two), at least 64."""
    align = op.attributes.get("alignment")
    align = align.value if isinstance(align, IntegerAttr) else _ALIGNMENT
    if align <= 0 or align & (align - 1):
        raise lw.error(f"alignment {align} is not a power of two")
    return max(align, _ALIGNMENT)


@lowers("memory.alloc", "memory.arena")
def _alloc(lw: FunctionLowering, op, args):
    t = op.results[0].type
    lw.value_type(t)                            # rejects unsupported element types here
    b = lw.builder
    elem = storage_scalar(scalar_type(t.element, op))
    sizes = _shape(lw, t, list(args))
    strides, count = _row_major(b, sizes)
    nbytes = _mul(b, count, ir.Constant(I64, byte_size(elem)))
    allocated, aligned = _malloc_aligned(lw, nbytes, _alignment(lw, op))
    return make_descriptor(lw, t, allocated, aligned, ir.Constant(I64, 0), sizes, strides)


@lowers("memory.alloca")
def _alloca(lw: FunctionLowering, op, args):
    """One stack slot in the entry block of the function being lowered (an outlined parallel
    body's own, per thread): `memory.alloca` lives only until its block ends, so every
    execution of it may take the same slot, and a loop around it never grows the stack."""
    t = op.results[0].type
    lw.value_type(t)
    elem = storage_scalar(scalar_type(t.element, op))
    slot = lw.alloca(ir.ArrayType(elem, t.num_elements))
    slot.align = _alignment(lw, op)
    b = lw.builder
    sizes = _shape(lw, t, [])
    strides, _ = _row_major(b, sizes)
    return make_descriptor(lw, t, slot, slot, ir.Constant(I64, 0), sizes, strides)


@lowers("memory.dealloc")
def _dealloc(lw: FunctionLowering, op, args):
    free = lw.ml.declare_runtime("free", ir.FunctionType(VOID, [PTR]), op)
    lw.builder.call(free, [_memref(lw, args[0], op.operands[0].type).allocated()])


@lowers("memory.dim")
def _dim(lw: FunctionLowering, op, args):
    return _memref(lw, args[0], op.operands[0].type).size(op.properties["axis"].value)


@lowers("memory.address")
def _address(lw: FunctionLowering, op, args):
    first = _memref(lw, args[0], op.operands[0].type).element_ptr([])
    return lw.builder.ptrtoint(first, I64)


# ---------------------------------------------------------------------------------------------
# Views
# ---------------------------------------------------------------------------------------------


@lowers("memory.view")
def _view(lw: FunctionLowering, op, args):
    src = _memref(lw, args[0], op.operands[0].type)
    t = op.results[0].type
    b = lw.builder
    start = _add(b, src.offset(), args[1])
    aligned = b.gep(src.aligned(), [start], inbounds=True, source_etype=I8)
    sizes = _shape(lw, t, list(args[2:]))
    strides, _ = _row_major(b, sizes)
    return make_descriptor(lw, t, src.allocated(), aligned, ir.Constant(I64, 0), sizes,
                           strides)


@lowers("memory.subview")
def _subview(lw: FunctionLowering, op, args):
    """offset = source offset + sum(o_k * stride_k); stride_k = source stride_k * step_k."""
    src = _memref(lw, args[0], op.operands[0].type)
    b = lw.builder

    def values(mixed):
        return [ir.Constant(I64, v.value) if isinstance(v, IntegerAttr) else lw.get(v)
                for v in mixed]
    offsets, sizes, steps = (values(op.mixed_offsets()), values(op.mixed_sizes()),
                             values(op.mixed_strides()))
    offset = src.offset()
    strides = []
    for k, (o, step) in enumerate(zip(offsets, steps)):
        stride = src.stride(k)
        offset = _add(b, offset, _mul(b, o, stride))
        strides.append(_mul(b, stride, step))
    return make_descriptor(lw, op.results[0].type, src.allocated(), src.aligned(), offset,
                           sizes, strides)


@lowers("memory.collapse_shape")
def _collapse_shape(lw: FunctionLowering, op, args):
    """The source's pointers and offset; per group, its sizes multiplied and its innermost
    stride (the verifier proved each group contiguous)."""
    src = _memref(lw, args[0], op.operands[0].type)
    b = lw.builder
    sizes, strides = [], []
    # (the groups read here, not by the memory dialect's helper: a warm start from the
    # compile cache imports this module but not that dialect, test_compile_cache.py)
    for group in [[i.value for i in g] for g in op.properties["reassociation"]]:
        size = src.size(group[0])
        for k in group[1:]:
            size = _mul(b, size, src.size(k))
        sizes.append(size)
        strides.append(src.stride(group[-1]))
    return make_descriptor(lw, op.results[0].type, src.allocated(), src.aligned(), src.offset(),
                           sizes, strides)


# ---------------------------------------------------------------------------------------------
# Loads and stores
# ---------------------------------------------------------------------------------------------


@lowers("memory.load")
def _load(lw: FunctionLowering, op, args):
    m = _memref(lw, args[0], op.operands[0].type)
    v = lw.builder.load(m.element_ptr(list(args[1:])), typ=m.storage,
                        align=byte_size(m.storage))
    return from_storage(lw.builder, v, m.elem)


@lowers("memory.store")
def _store(lw: FunctionLowering, op, args):
    m = _memref(lw, args[1], op.operands[1].type)
    lw.builder.store(to_storage(lw.builder, args[0]), m.element_ptr(list(args[2:])),
                     align=byte_size(m.storage))


@lowers("memory.vector_load")
def _vector_load(lw: FunctionLowering, op, args):
    m = _memref(lw, args[0], op.operands[0].type)
    vt = lw.value_type(op.results[0].type)
    st = storage_type(vt)
    v = lw.builder.load(m.element_ptr(list(args[1:])), typ=st,
                        align=byte_size(element_of(st)))
    return from_storage(lw.builder, v, vt)


@lowers("memory.vector_store")
def _vector_store(lw: FunctionLowering, op, args):
    m = _memref(lw, args[1], op.operands[1].type)
    v = to_storage(lw.builder, args[0])
    ptr = m.element_ptr(list(args[2:]))
    if op.nontemporal is not None and op.nontemporal.value:
        _streaming_store(lw, v, ptr)
    else:
        lw.builder.store(v, ptr, align=byte_size(element_of(v.type)))


#: the widest alignment a split streaming store relies on: malloc's (numpy's arrays)
_STREAM_PIECE = 16


def _streaming_store(lw: FunctionLowering, v: ir.Value, ptr: ir.Value) -> None:
    """A `!nontemporal` store of `v`, at the widest alignment `ptr` has at run time.

    x86 has streaming stores only at the alignment of their width (`movntps`; LLVM
    scalarizes an under-aligned one into 8-byte `movntsd`s), and a memref promises only its
    element's alignment. So: a branch on the address's low bits (the same outcome on every
    iteration of a loop stepping by the vector's width, so always predicted; LLVM reduces
    the 16-byte test to one on the base pointer there): one store of the whole vector when
    it is aligned to its size (buffers of `memory.alloc`, 64-byte aligned), 16-byte pieces
    when aligned to 16 (numpy's arrays: malloc's alignment; the write-combining buffer
    merges the pieces of a line), else the ordinary store (never a slower scalarized one).
    """
    b = lw.builder
    nbytes = v.type.count * byte_size(element_of(v.type))
    md = b.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
    if nbytes < _STREAM_PIECE or nbytes & (nbytes - 1):
        b.store(v, ptr, align=byte_size(element_of(v.type)))
        return
    addr = b.ptrtoint(ptr, I64)

    def aligned(n: int) -> ir.Value:
        return b.icmp_unsigned("==", b.and_(addr, ir.Constant(I64, n - 1)), ir.Constant(I64, 0))

    with b.if_else(aligned(nbytes)) as (whole, split):
        with whole:
            b.store(v, ptr, align=nbytes).set_metadata("nontemporal", md)
        with split:
            with b.if_else(aligned(_STREAM_PIECE)) as (pieces, plain):
                with pieces:
                    _store_pieces(b, v, ptr, md)
                with plain:
                    b.store(v, ptr, align=byte_size(element_of(v.type)))


def _store_pieces(b: ir.IRBuilder, v: ir.Value, ptr: ir.Value, md) -> None:
    """`v` as consecutive 16-byte streaming stores at `ptr` (16-byte aligned)."""
    lanes = _STREAM_PIECE // byte_size(element_of(v.type))
    for k in range(0, v.type.count, lanes):
        mask = ir.Constant(ir.VectorType(ir.IntType(32), lanes), list(range(k, k + lanes)))
        piece = b.shuffle_vector(v, ir.Constant(v.type, None), mask)
        at = b.gep(ptr, [ir.Constant(I64, k)], inbounds=True, source_etype=v.type.element)
        b.store(piece, at, align=_STREAM_PIECE).set_metadata("nontemporal", md)


@lowers("memory.fence")
def _fence(lw: FunctionLowering, op, args):
    """x86: `sfence`, which orders the write-combining buffers of streaming stores (LLVM's
    `fence seq_cst` is a `lock or` there, which need not); elsewhere `fence seq_cst`."""
    if _X86:
        lw.call_intrinsic("x86.sse.sfence", [], ret=VOID, overloads=[])
    else:
        lw.builder.fence("seq_cst")


@lowers("memory.copy")
def _copy(lw: FunctionLowering, op, args):
    src = _memref(lw, args[0], op.operands[0].type)
    dst = _memref(lw, args[1], op.operands[1].type)
    b = lw.builder
    sizes = [src.size(k) for k in range(src.type.rank)]
    if src.contiguous_by_type() and dst.contiguous_by_type():
        count = ir.Constant(I64, 1)
        for n in sizes:
            count = _mul(b, count, n)
        nbytes = _mul(b, count, ir.Constant(I64, byte_size(src.storage)))
        lw.call_intrinsic("memcpy", [dst.aligned(), src.aligned(), nbytes, ir.Constant(I1, 0)],
                          ret=VOID, overloads=[PTR, PTR, I64])
        return
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)

    def body(ivs):
        v = b.load(src.element_ptr(ivs), typ=src.storage, align=byte_size(src.storage))
        b.store(v, dst.element_ptr(ivs), align=byte_size(dst.storage))
    emit_loop_nest(lw, [zero] * len(sizes), sizes, [one] * len(sizes), body)


# ---------------------------------------------------------------------------------------------
# Run-time checks
# ---------------------------------------------------------------------------------------------

#: branch weights of a check: (holds, fails); the failing side is the cold one
_CHECK_WEIGHTS = [1 << 20, 1]


@lowers("memory.check")
def _check(lw: FunctionLowering, op, args):
    """`br ok, done, fail`; fail: `cmpxchg status[0], 0, code`, and when it exchanged,
    status[1] = value, status[2] = bound; then done."""
    ok, value, bound, status = args
    m = _memref(lw, status, op.operands[3].type)
    b = lw.builder
    fail = lw.llfn.append_basic_block("check.fail")
    record = lw.llfn.append_basic_block("check.record")
    done = lw.llfn.append_basic_block("check.done")
    b.cbranch(ok, done, fail).set_weights(_CHECK_WEIGHTS)
    b.position_at_end(fail)
    zero = ir.Constant(I64, 0)
    code = ir.Constant(I64, op.properties["code"].value)
    claimed = b.cmpxchg(m.element_ptr([zero]), zero, code, "monotonic", "monotonic")
    b.cbranch(b.extract_value(claimed, 1), record, done)
    b.position_at_end(record)
    for k, v in ((1, value), (2, bound)):
        b.store(v, m.element_ptr([ir.Constant(I64, k)]), align=8)
    b.branch(done)
    b.position_at_end(done)
