"""Types of the LLVM CPU backend: how each irkit type looks as an SSA value, in memory, and at
the C boundary, and the errors the backend reports.

Three views of one irkit type, because LLVM's register types are not all good memory or ABI
types:

- **value type** (`value_type`): what an SSA value of the type is inside a function. `index`
  is `i64`; `iN` is `iN`; `f16`/`f32`/`f64` are `half`/`float`/`double`; `vector<4x2xf32>` is
  the flat LLVM vector `<8 x float>` (elementwise ops do not care about the nesting, and
  `arith.constant dense<...>` fills it in row-major order); a memref is MLIR's descriptor
  struct `{T* allocated, T* aligned, i64 offset, [R x i64] sizes, [R x i64] strides}` by
  value (rank 0 has no arrays); a function value (`func.constant`) is a pointer.
- **storage type** (`storage_type`): an element in memory. Integers whose width is not a
  power of two from 8 up are widened to the next one: `i1` is a byte holding 0 or 1 (numpy's
  `bool_`), `i3` a byte holding the sign-extended value (numpy's `int8`, as the interpreter
  holds it). LLVM packs `<8 x i1>` into one byte, so without this vectors of booleans could
  not be loaded from numpy arrays.
- **ABI type** (`abi_type`): a by-value argument at the C boundary. Storage types, except
  that `f16` crosses as its 16 bits (`uint16_t`): ctypes cannot pass `_Float16`.

Types the backend cannot represent (tensors, bf16 and the small float formats, scalable
vectors, integers wider than 64 bits, memrefs with affine-map layouts) raise `BackendError`
with the location of the op or function that used them.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit.attributes import StridedLayoutAttr
from irkit.diagnostics import IRError
from irkit.types import (
    FloatType, FunctionType, IndexType, IntegerType, MemRefType, Type, VectorType,
)

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()

_FLOATS = {"f16": ir.HalfType(), "f32": ir.FloatType(), "f64": ir.DoubleType()}


class BackendError(IRError):
    """An op or type the backend cannot translate, or a failure to compile or link; located
    at the op (or function) that caused it, like every irkit diagnostic."""


def error_at(where, message: str) -> BackendError:
    """A `BackendError` at `where` (an op, or a location), named after the op as MLIR does."""
    loc = getattr(where, "location", where)
    name = getattr(where, "name", None)
    if isinstance(name, str) and hasattr(where, "regions"):
        message = f"'{name}' op {message}"
    return BackendError(message, loc)


# ---------------------------------------------------------------------------------------------
# Value types
# ---------------------------------------------------------------------------------------------


def scalar_type(t: Type, where=None) -> ir.Type:
    """The LLVM type of a scalar irkit type (`index`, `iN`, `f16`/`f32`/`f64`)."""
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        if not t.is_signless:
            raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                                  "(only signless integers)")
        if t.width > 64:
            raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                                  "(integers wider than 64 bits)")
        return ir.IntType(t.width)
    if isinstance(t, FloatType):
        ft = _FLOATS.get(t.name)
        if ft is None:
            why = ("llvmlite has no bfloat type" if t.name == "bf16"
                   else "only f16, f32 and f64")
            raise error_at(where, f"type '{t}' is not supported by the LLVM backend ({why})")
        return ft
    raise error_at(where, f"type '{t}' is not supported by the LLVM backend")


def lanes(t: VectorType, where=None) -> int:
    """Number of elements of a (flattened) vector type; a 0-d vector has one."""
    if any(t.scalable):
        raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                              "(scalable vectors)")
    n = 1
    for d in t.shape:
        n *= d
    if n == 0:
        raise error_at(where, f"type '{t}' is not supported by the LLVM backend (vectors "
                              "without elements)")
    return n


def value_type(t: Type, where=None) -> ir.Type:
    """The LLVM type of an SSA value of irkit type `t` (see the module docstring)."""
    if isinstance(t, VectorType):
        return ir.VectorType(scalar_type(t.element, where), lanes(t, where))
    if isinstance(t, MemRefType):
        return descriptor_type(t, where)
    if isinstance(t, FunctionType):
        for u in (*t.inputs, *t.results):
            value_type(u, where)
        return PTR                          # a pointer to a function of the C interface
    return scalar_type(t, where)


def element_of(t: ir.Type) -> ir.Type:
    """The element type of an LLVM vector, or the type itself."""
    return t.element if isinstance(t, ir.VectorType) else t


def with_element(t: ir.Type, elem: ir.Type) -> ir.Type:
    """`t`'s shape (scalar or vector of the same length) with another element type."""
    return ir.VectorType(elem, t.count) if isinstance(t, ir.VectorType) else elem


# ---------------------------------------------------------------------------------------------
# Storage and ABI types
# ---------------------------------------------------------------------------------------------


def _storage_width(width: int) -> int:
    for w in (8, 16, 32, 64):
        if width <= w:
            return w
    return width


def storage_scalar(t: ir.Type) -> ir.Type:
    """The in-memory type of a scalar LLVM value type."""
    if isinstance(t, ir.IntType) and t.width != _storage_width(t.width):
        return ir.IntType(_storage_width(t.width))
    return t


def storage_type(t: ir.Type) -> ir.Type:
    """The in-memory type of an LLVM value type (vectors elementwise)."""
    if isinstance(t, ir.VectorType):
        return ir.VectorType(storage_scalar(t.element), t.count)
    return storage_scalar(t)


def to_storage(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """`v` converted to its storage type: i1 zero-extended (numpy bools are 0/1), other odd
    widths sign-extended (numpy holds `i3` as a sign-extended int8)."""
    st = storage_type(v.type)
    if st == v.type:
        return v
    if element_of(v.type).width == 1:
        return b.zext(v, st)
    return b.sext(v, st)


def from_storage(b: ir.IRBuilder, v: ir.Value, t: ir.Type) -> ir.Value:
    """A stored value `v` back as value type `t`."""
    return v if v.type == t else b.trunc(v, t)


def abi_scalar(t: ir.Type) -> ir.Type:
    """The by-value C type of a scalar: the storage type, and `f16` as its 16 bits."""
    if isinstance(t, ir.HalfType):
        return I16
    return storage_scalar(t)


def to_abi(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    if isinstance(v.type, ir.HalfType):
        return b.bitcast(v, I16)
    return to_storage(b, v)


def from_abi(b: ir.IRBuilder, v: ir.Value, t: ir.Type) -> ir.Value:
    if isinstance(t, ir.HalfType):
        return b.bitcast(v, t)
    return from_storage(b, v, t)


def byte_size(t: ir.Type) -> int:
    """Size in bytes of a storage scalar type (its natural alignment, too)."""
    if isinstance(t, ir.IntType):
        return t.width // 8
    if isinstance(t, ir.PointerType):
        return 8
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}[type(t)]


# ---------------------------------------------------------------------------------------------
# Memref descriptors and layouts
# ---------------------------------------------------------------------------------------------

#: field indices of the descriptor struct
ALLOCATED, ALIGNED, OFFSET, SIZES, STRIDES = range(5)


def descriptor_type(t: MemRefType, where=None) -> ir.LiteralStructType:
    """MLIR's ranked memref descriptor for `t` (the element type only checks support: the
    pointers are opaque)."""
    if not isinstance(t, MemRefType):
        raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                              "(unranked memrefs)")
    if t.memory_space is not None:
        raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                              "(memory spaces)")
    et = t.element
    if isinstance(et, VectorType) or isinstance(et, MemRefType):
        raise error_at(where, f"type '{t}' is not supported by the LLVM backend "
                              "(elements must be scalars)")
    scalar_type(et, where)
    layout(t, where)
    fields = [PTR, PTR, I64]
    if t.rank:
        fields += [ir.ArrayType(I64, t.rank), ir.ArrayType(I64, t.rank)]
    return ir.LiteralStructType(fields)


def layout(t: MemRefType, where=None) -> tuple[list, int | None]:
    """The strides (in elements) and offset that `t` fixes statically, `None` where dynamic.

    The identity layout is row-major: each stride is the product of the sizes after it
    (dynamic once a dynamic size is among them), and the offset is 0. Knowing them lets the
    code index with constants, which is what makes loops over static buffers vectorize.
    """
    lay = t.layout
    if lay is None:
        strides: list = []
        acc: int | None = 1
        for d in reversed(t.shape):
            strides.append(acc)
            acc = None if acc is None or d is None else acc * d
        return strides[::-1], 0
    if isinstance(lay, StridedLayoutAttr):
        if len(lay.strides) != t.rank:
            raise error_at(where, f"type '{t}' has a layout of the wrong rank")
        return list(lay.strides), lay.offset
    raise error_at(where, f"type '{t}' is not supported by the LLVM backend (only identity "
                          "and strided layouts)")
