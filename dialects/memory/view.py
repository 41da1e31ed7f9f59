"""`memory.view`, `memory.subview`, `memory.collapse_shape`, `memory.dim` and `memory.address`,
and the layout arithmetic they share with the rest of the `memory` dialect, its lowerings and
the backends.

These are the dialect's ops on descriptors of memory that already exists (all `Pure`: they
touch no memory), and nearly all of its layout rules; they sit apart from `buffers` so that
the dialect's home stays about allocation and effects. This module holds:

- Layouts, as pure functions of types: `strides_and_offset` and `contiguous_strides` (a
  memref's strides and offset in elements, None where dynamic), `subview_type` (the type a
  subview infers, MLIR's `SubViewOp::inferResultType`), `byte_size` (the bytes one element
  takes) and `DYNAMIC_INDEX` (a `?` entry in a subview's static lists, MLIR's kDynamic).
- `memory.view`: a contiguous typed view at a byte offset of a byte buffer (`memref.view`).
- `memory.subview`: a strided window with static or dynamic offsets, sizes and strides,
  with its custom-syntax piece for mixed static / dynamic lists.
- Reassociations (the groups of a reshape), shared with the tensor dialect's reshapes:
  `ReassociationAttr`, `parse_reassociation`, `reassociation_lists` / `reassociation_attr`,
  `collapsed_shape`, `verify_reassociation` (MLIR's messages), and the custom syntax
  (`parse_collapse`, `print_reshape`).
- `memory.collapse_shape`: groups of adjacent dims merged, contiguous by type
  (`memref.collapse_shape`; `collapsed_layout` its result's layout).
- `memory.dim`: the size of one dimension, folded to the size operand of the alloc, arena,
  view or subview that made the buffer.
- `memory.address`: the byte address of the first element, for alignment decided at run
  time.

Their reference semantics are numpy views of the source, so a store through one is seen
through its base; a view out of bounds or misaligned, or a window out of bounds, is an
`InterpreterError` naming the op.

Imports. This module builds on `buffers` (the dialect object, the `MemRef` and `ByteBuffer`
constraints, custom-syntax and interpreter helpers) and registers its ops on that one
`memory` dialect; the package `irkit.dialects.memory` imports it after `buffers`.
"""

from __future__ import annotations

import numpy as np

from typing import Sequence

from irkit.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, StridedLayoutAttr
from irkit.ir import Value
from irkit.opdef import (
    DenseI64Array, I64Attr, Index, Op, Operand, Prop, Pure, Result, VarOperand, attr_constraint,
)
from irkit.rewrite import constant_value
from irkit.types import I64, INDEX, ComplexType, IndexType, IntegerType, MemRefType
from irkit.dialects.memory.buffers import (
    AllocOp, ArenaOp, ByteBuffer, MemRef, indices_text, memory, parse_int, parse_memref_type,
    parse_refs, resolve_indices, run_error, shape_text, storage_dtype,
)

#: a dynamic entry of `static_offsets` / `static_sizes` / `static_strides` (MLIR's kDynamic)
DYNAMIC_INDEX = -(1 << 63)


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------


def contiguous_strides(shape) -> tuple:
    """Row-major strides of `shape` in elements; None from the first dynamic size leftwards."""
    strides, running = [], 1
    for d in reversed(shape):
        strides.append(running)
        running = None if running is None or d is None else running * d
    return tuple(reversed(strides))


def strides_and_offset(t: MemRefType) -> tuple[tuple, int | None] | None:
    """The strides and offset of `t`'s layout in elements (None entries are dynamic), or None
    for an affine-map layout, which this dialect does not model."""
    if t.layout is None:
        return contiguous_strides(t.shape), 0
    if isinstance(t.layout, StridedLayoutAttr):
        return t.layout.strides, t.layout.offset
    return None


def _mul(a, b):
    """Product where None is dynamic, and 0 times anything is 0 (MLIR's SaturatedInteger)."""
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else a * b


def subview_type(source: MemRefType, offsets, sizes, strides) -> MemRefType:
    """The result type of a subview (MLIR's `SubViewOp::inferResultType`): entries are ints,
    or None where dynamic. offset = source offset + sum(offset_i * stride_i), stride_i =
    source stride_i * step_i; a sum is dynamic as soon as one term is, a product of a zero is
    zero."""
    src_strides, offset = strides_and_offset(source)
    for o, s in zip(offsets, src_strides):
        term = _mul(o, s)
        offset = None if offset is None or term is None else offset + term
    out = tuple(_mul(s, k) for s, k in zip(src_strides, strides))
    return MemRefType(sizes, source.element, StridedLayoutAttr(out, offset),
                      source.memory_space)


def byte_size(t) -> int | None:
    """Bytes one element of scalar type `t` occupies in memory. Integers are stored in the
    next of 8, 16, 32 and 64 bits (`i1` and `i4` in a byte, `i24` in four), as numpy holds
    them in the interpreter and the LLVM backend stores them; `index` in 8 (the 64-bit hosts
    we target); floats in their width. None where there is no such storage: integers wider
    than 64 bits, floats whose width is not whole bytes."""
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, ComplexType):
        half = byte_size(t.element)
        return None if half is None else 2 * half
    if isinstance(t, IntegerType):
        return next((w // 8 for w in (8, 16, 32, 64) if t.width <= w), None)
    width = getattr(t, "width", None)
    return width // 8 if width is not None and width % 8 == 0 else None


# ---------------------------------------------------------------------------------------------
# Reassociations (the groups of a reshape: `memory.collapse_shape` and the tensor dialect's)
# ---------------------------------------------------------------------------------------------


def _is_index_group(a) -> bool:
    return isinstance(a, ArrayAttr) and all(
        isinstance(i, IntegerAttr) and i.type is I64 for i in a)


ReassociationAttr = attr_constraint(ArrayAttr, "Array of 64-bit integer array attributes",
                                    lambda a: all(_is_index_group(g) for g in a))


def parse_reassociation(p) -> ArrayAttr:
    """`[[0, 1], [2]]` as an array of i64 arrays."""
    p.expect("[")
    groups = []
    while p.tok == "[":
        p.next()
        group = []
        while p.tok != "]":
            group.append(IntegerAttr(parse_int(p), I64))
            if not p.accept(","):
                break
        p.expect("]")
        groups.append(ArrayAttr(group))
        if not p.accept(","):
            break
    p.expect("]", "to end the reassociation indices")
    return ArrayAttr(groups)


def reassociation_lists(attr: ArrayAttr) -> list[list[int]]:
    return [[i.value for i in group] for group in attr]


def reassociation_attr(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(int(i), I64) for i in g]) for g in groups])


def collapsed_shape(shape: Sequence, groups: Sequence[Sequence[int]]) -> list:
    """Each group's sizes multiplied, None (`?`) if one is None (MLIR's
    CollapseShapeOp::inferCollapsedType)."""
    out = []
    for g in groups:
        sizes = [shape[i] for i in g]
        out.append(None if None in sizes else int(np.prod(sizes, dtype=np.int64)))
    return out


def verify_reassociation(op, groups: list[list[int]], expanded, collapsed) -> None:
    """MLIR's checks of a reshape's groups against its expanded and collapsed shaped types,
    in its order and with its messages (verifyReshapeLikeTypes): ranks, one group per
    collapsed dim, none empty, every expanded dim once and in order, and each collapsed
    size its group's product (dynamic where one of the group's is)."""
    if expanded.rank < collapsed.rank:
        raise op.error(f"expected the expanded type, '{expanded}' to have a higher (or same) "
                       f"rank than the collapsed type, '{collapsed}'.")
    if collapsed.rank != len(groups):
        raise op.error(f"expected collapsed rank ({collapsed.rank}) to equal the number of "
                       f"reassociation maps ({len(groups)}).")
    if any(not g for g in groups):
        raise op.error("reassociation indices must not be empty")
    n_dims = max((i for g in groups for i in g), default=-1) + 1
    if groups and n_dims != expanded.rank:
        raise op.error(f"expected reassociation map #0 to have size equal to the expanded rank "
                       f"({expanded.rank}), but it is  {n_dims}.")
    following = 0
    for k, g in enumerate(groups):
        if g != list(range(following, following + len(g))):
            raise op.error(f"expected reassociation map #{k} to be valid and contiguous.")
        following += len(g)
    for k, (g, want) in enumerate(zip(groups, collapsed_shape(expanded.shape, groups))):
        if want is None:
            if collapsed.shape[k] is not None:
                raise op.error(f"expected dimension {k} of collapsed type to be dynamic since "
                               f"one or more of the corresponding dimensions in the expanded "
                               f"type is dynamic")
        elif collapsed.shape[k] != want:
            raise op.error(f"expected dimension {k} of collapsed type to be static value of "
                           f"{want}")


def parse_collapse(cls, p, parse_shaped):
    """`%src [[0, 1], ...] {attrs} : T into U`, a collapse_shape of either dialect, its
    types read by `parse_shaped` (a memref's or a tensor's)."""
    src = p.parse_operand_ref()
    reassociation = parse_reassociation(p)
    attrs = p.parse_optional_attr_dict()
    p.expect(":")
    s = parse_shaped(p)
    p.expect("into")
    t = parse_shaped(p)
    return cls.build(p.resolve(src, s), result_types=[t], attributes=attrs,
                     reassociation=reassociation)


def print_reshape(p, op, extra: str = "") -> None:
    """The custom form of a reshape of either dialect: its source, groups and `extra`."""
    p.write(f" {p.value(op.src)} {op.reassociation.format()}{extra}")
    p.attr_dict(op, elided=("reassociation", "static_output_shape"))
    p.write(f" : {op.src.type} into {op.result.type}")


def collapsed_layout(source: MemRefType, groups: Sequence[Sequence[int]]):
    """The layout of `source` collapsed by `groups`: the identity for an identity source,
    else a strided layout with each group's innermost stride and the source's offset; None
    where a group is not provably contiguous (each dim's stride the next one's stride times
    its size, all known from the type) or the layout is not strided."""
    if source.layout is None:
        return None, True
    layout = strides_and_offset(source)
    if layout is None:
        return None, False
    strides, offset = layout
    for g in groups:
        for i, j in zip(g, g[1:]):
            if None in (strides[i], strides[j], source.shape[j]) or \
                    strides[i] != strides[j] * source.shape[j]:
                return None, False
    return StridedLayoutAttr(tuple(strides[g[-1]] for g in groups), offset), True


# ---------------------------------------------------------------------------------------------
# Custom-syntax pieces
# ---------------------------------------------------------------------------------------------


def _parse_mixed(p) -> tuple[list[int], list]:
    """`[%a, 4]`: static entries as ints (DYNAMIC_INDEX where a value stands) and the values."""
    p.expect("[")
    static, refs = [], []
    while p.tok != "]":
        if p.tok.startswith("%"):
            refs.append(p.parse_operand_ref())
            static.append(DYNAMIC_INDEX)
        else:
            static.append(parse_int(p))
        if not p.accept(","):
            break
    p.expect("]")
    return static, refs


# ---------------------------------------------------------------------------------------------
# view
# ---------------------------------------------------------------------------------------------


@memory.op
class ViewOp(Op):
    """A contiguous typed view of a byte buffer, starting `byte_shift` bytes in (MLIR's
    memref.view), one size operand per `?`. The start address must be a multiple of the
    element size, and the view must lie within the buffer.

        %v = memory.view %a[%byte_offset][%d0] : memref<?xi8> to memref<?x4xf32>
    """

    name = "memory.view"
    source = Operand(ByteBuffer)
    byte_shift = Operand(Index)
    sizes = VarOperand(Index, doc="one size per dynamic dimension of the result, in order")
    result = Result(MemRef)
    traits = (Pure(),)

    def verify_(self):
        src, t = self.source.type, self.result.type
        if t.layout is not None:
            raise self.error(f"requires the result to have the identity layout (a contiguous "
                             f"view), got {t.layout}")
        if src.memory_space != t.memory_space:
            raise self.error("requires the same memory space for source and result")
        if len(self.sizes) != t.shape.count(None):
            raise self.error("incorrect number of size operands for type")
        size = byte_size(t.element)
        if size is None:
            raise self.error(f"requires an element type with a size in memory, got "
                             f"{t.element}")
        shift = constant_value(self.byte_shift)
        if isinstance(shift, IntegerAttr):
            if shift.value % size:
                raise self.error(f"byte offset {shift.value} is not a multiple of the element "
                                 f"size ({size} bytes)")
            if src.shape[0] is not None and t.has_static_shape and \
                    shift.value + t.num_elements * size > src.shape[0]:
                raise self.error(f"view of {t.num_elements * size} bytes at byte offset "
                                 f"{shift.value} runs out of the {src.shape[0]}-byte buffer")

    def is_speculatable(self) -> bool:
        """Only where the verifier proved the view in bounds: the interpreter rejects others."""
        return (isinstance(constant_value(self.byte_shift), IntegerAttr)
                and self.source.type.shape[0] is not None and self.result.type.has_static_shape)

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        shift = parse_refs(p)
        if len(shift) != 1:
            raise p.error("expected one byte offset operand")
        sizes = parse_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_memref_type(p)
        p.expect("to")
        t = parse_memref_type(p)
        return cls.build(p.resolve(src, s), p.resolve(shift[0], INDEX), resolve_indices(p, sizes),
                         result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.source)}[{p.value(self.byte_shift)}]"
                f"{indices_text(p, self.sizes)}")
        p.attr_dict(self)
        p.write(f" : {self.source.type} to {self.result.type}")

    def evaluate(self, src, shift, *sizes):
        t = self.result.type
        dtype = storage_dtype(self, t.element)
        if dtype.itemsize != byte_size(t.element):
            raise run_error(self, f"cannot view {t.element} elements: numpy holds them in "
                            f"{dtype.itemsize} bytes, memory in {byte_size(t.element)}")
        it = iter(sizes)
        shape = tuple(int(next(it)) if d is None else d for d in t.shape)
        shift = int(shift)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if any(d < 0 for d in shape) or shift < 0 or shift + nbytes > src.nbytes:
            raise run_error(self, f"view of shape {shape_text(shape)} ({nbytes} bytes) at byte "
                            f"offset {shift} is out of bounds of a {src.nbytes}-byte buffer")
        if (src.ctypes.data + shift) % dtype.itemsize:
            raise run_error(self, f"byte offset {shift} is misaligned for {t.element} (element "
                            f"size {dtype.itemsize} bytes)")
        return np.ndarray(shape, dtype, buffer=src, offset=shift)


# ---------------------------------------------------------------------------------------------
# subview
# ---------------------------------------------------------------------------------------------


def _static_or_none(values) -> list:
    return [None if v == DYNAMIC_INDEX else v for v in values]


@memory.op
class SubviewOp(Op):
    """A strided window of a buffer: per dimension an offset, a size and a step (stride),
    each static or an `index` operand (MLIR's memref.subview, without rank reduction). The
    result type's layout is what MLIR infers: offset = source offset + sum(offset_i *
    stride_i), stride_i = source stride_i * step_i; the identity layout is accepted where
    that is contiguous with offset 0. The window must lie within the source.

        %s = memory.subview %m[%o0, %o1] [%s0, 4] [1, 1]
            : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1], offset: ?>>
    """

    name = "memory.subview"
    source = Operand(MemRef)
    offsets = VarOperand(Index)
    sizes = VarOperand(Index)
    strides = VarOperand(Index)
    static_offsets = Prop(DenseI64Array)
    static_sizes = Prop(DenseI64Array)
    static_strides = Prop(DenseI64Array)
    result = Result(MemRef)
    traits = (Pure(),)

    _GROUPS = ("offset", "size", "stride")

    @classmethod
    def create(cls, source: Value, offsets, sizes, strides, location=None) -> "SubviewOp":
        """Build from mixed lists (ints or index values); the result type is inferred."""
        groups, props = [], {}
        for name, mixed in zip(cls._GROUPS, (offsets, sizes, strides)):
            groups.append([v for v in mixed if isinstance(v, Value)])
            props[f"static_{name}s"] = DenseArrayAttr(I64, [
                DYNAMIC_INDEX if isinstance(v, Value) else int(v) for v in mixed])
        return cls.build(source, *groups, location=location, **props)

    def _static(self) -> list[list[int]]:
        return [list(self.static_offsets), list(self.static_sizes), list(self.static_strides)]

    def _mixed(self, static, dynamic) -> list:
        it = iter(dynamic)      # (None past the end: an invalid op must still print)
        return [next(it, None) if v == DYNAMIC_INDEX else IntegerAttr(v, INDEX) for v in static]

    def mixed_offsets(self) -> list:
        """Per dimension the offset: an index `Value`, or an `IntegerAttr` when static."""
        return self._mixed(self.static_offsets, self.offsets)

    def mixed_sizes(self) -> list:
        return self._mixed(self.static_sizes, self.sizes)

    def mixed_strides(self) -> list:
        return self._mixed(self.static_strides, self.strides)

    def infer_result_types(self):
        return [subview_type(self.source.type, *map(_static_or_none, self._static()))]

    def verify_(self):
        src, res = self.source.type, self.result.type
        if strides_and_offset(src) is None:
            raise self.error(f"requires a strided or identity source layout, got {src.layout}")
        static = self._static()
        for name, values, dynamic in zip(self._GROUPS, static,
                                         (self.offsets, self.sizes, self.strides)):
            if len(values) != src.rank:
                raise self.error(f"expected {src.rank} {name} values, got {len(values)}")
            n_dyn = values.count(DYNAMIC_INDEX)
            if n_dyn != len(dynamic):
                raise self.error(f"expected {n_dyn} dynamic {name} values, got {len(dynamic)}")
            bad = next((v for v in values if v != DYNAMIC_INDEX and v < 0), None)
            if bad is not None:
                raise self.error(f"expected {name}s to be non-negative, but got {bad}")
        offsets, sizes, strides = map(_static_or_none, static)
        for i, (o, n, k, d) in enumerate(zip(offsets, sizes, strides, src.shape)):
            if None in (o, n, k, d) or n == 0:
                continue
            if o + (n - 1) * k >= d:
                raise self.error(f"slice along dimension {i} runs out-of-bounds: "
                                 f"{o + (n - 1) * k} >= {d}")
        expected = subview_type(src, offsets, sizes, strides)
        what = None
        if res.element is not src.element:
            what = "element type"
        elif res.memory_space != src.memory_space:
            what = "memory space"
        elif res.shape != expected.shape:
            what = "result sizes"
        elif not self._layout_matches(res, expected):
            what = "result layout"
        if what is not None:
            raise self.error(f"expected result type to be '{expected}' (mismatch of {what}), "
                             f"but got '{res}'")

    @staticmethod
    def _layout_matches(res: MemRefType, expected: MemRefType) -> bool:
        want = strides_and_offset(expected)
        if res.layout is None:
            # The identity layout means "contiguous": its strides are the products of the
            # sizes, so a `?` there is not "any stride" but must be known to agree.
            strides, offset = want
            return None not in strides and offset == 0 and \
                strides == contiguous_strides(res.shape)
        return strides_and_offset(res) == want

    def is_speculatable(self) -> bool:
        """Only where the verifier proved the window in bounds: the interpreter rejects others."""
        return not (self.offsets or self.sizes or self.strides) and \
            self.source.type.has_static_shape

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        groups, props = [], {}
        for name in cls._GROUPS:
            static, refs = _parse_mixed(p)
            groups.append(refs)
            props[f"static_{name}s"] = DenseArrayAttr(I64, static)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_memref_type(p)
        p.expect("to")
        t = parse_memref_type(p)
        return cls.build(p.resolve(src, s), *[resolve_indices(p, g) for g in groups],
                         result_types=[t], attributes=attrs, **props)

    def print(self, p):
        lists = []
        for mixed in (self.mixed_offsets(), self.mixed_sizes(), self.mixed_strides()):
            lists.append("[" + ", ".join(str(v.value) if isinstance(v, IntegerAttr) else
                                         p.value(v) for v in mixed) + "]")
        p.write(f" {p.value(self.source)}{' '.join(lists)}")
        p.attr_dict(self, elided=("static_offsets", "static_sizes", "static_strides",
                                  "operandSegmentSizes"))
        p.write(f" : {self.source.type} to {self.result.type}")

    def evaluate(self, src, *dynamic):
        it = iter(int(v) for v in dynamic)
        offsets, sizes, strides = ([next(it) if v == DYNAMIC_INDEX else v for v in group]
                                   for group in self._static())
        index, zero_step = [], False
        for i, (o, n, k, d) in enumerate(zip(offsets, sizes, strides, src.shape)):
            if o < 0 or n < 0 or k < 0 or o > d or (n > 0 and o + (n - 1) * k >= d):
                raise run_error(self, f"window offsets {shape_text(offsets)} sizes "
                                f"{shape_text(sizes)} strides {shape_text(strides)} is out of "
                                f"bounds along dimension {i} of a memref of shape "
                                f"{shape_text(src.shape)}")
            if k == 0:
                zero_step = True
                index.append(slice(o, o + 1))
            else:
                index.append(slice(o, o + (n - 1) * k + 1 if n else o, k))
        view = src[(*index, Ellipsis)]
        if zero_step:
            # numpy slicing cannot repeat an element; as_strided can, and the bounds are
            # checked above (each zero-step dimension holds exactly one element).
            step = [0 if k == 0 else s for k, s in zip(strides, view.strides)]
            view = np.lib.stride_tricks.as_strided(view, tuple(sizes), tuple(step),
                                                   writeable=src.flags.writeable)
        return view


# ---------------------------------------------------------------------------------------------
# collapse_shape
# ---------------------------------------------------------------------------------------------


@memory.op
class CollapseShapeOp(Op):
    """The same memory with each group of adjacent dimensions merged into one (MLIR's
    memref.collapse_shape): row-major, so element (i, j) of a `memref<784x10xf32>` is
    element 10 i + j of its collapse into `memref<7840xf32>`. Each group must be contiguous
    in the source, which the verifier requires be known from its type (MLIR also accepts
    dynamic strides, undefined where they are not contiguous); the result's layout is the
    identity for an identity source, else strided with each group's innermost stride.

        %f = memory.collapse_shape %w [[0, 1]] : memref<784x10xf32> into memref<7840xf32>

    Why. A loop over a whole contiguous buffer runs as one flat loop of full vectors, where
    per row it would end each row with a short remainder (rows of 10 floats: a vector of 8
    and one of 2, or 10 scalars).
    """

    name = "memory.collapse_shape"
    src = Operand(MemRef)
    reassociation = Prop(ReassociationAttr)
    result = Result(MemRef)
    traits = (Pure(),)

    @classmethod
    def create(cls, source: Value, groups: Sequence[Sequence[int]],
               location=None) -> "CollapseShapeOp":
        """Build with the result type inferred (the source's groups must be contiguous)."""
        return cls.build(source, reassociation=reassociation_attr(groups), location=location)

    def infer_result_types(self):
        src = self.src.type
        groups = reassociation_lists(self.reassociation)
        layout, _ = collapsed_layout(src, groups)
        return [MemRefType(collapsed_shape(src.shape, groups), src.element, layout,
                           src.memory_space)]

    def verify_(self):
        src, res = self.src.type, self.result.type
        groups = reassociation_lists(self.reassociation)
        verify_reassociation(self, groups, src, res)
        layout, contiguous = collapsed_layout(src, groups)
        if not contiguous:
            raise self.error("invalid source layout map or collapsing non-contiguous dims")
        want = MemRefType(collapsed_shape(src.shape, groups), src.element, layout,
                          src.memory_space)
        if res is not want:
            raise self.error(f"expected collapsed type to be '{want}' but found '{res}'")

    @classmethod
    def parse(cls, p, num_results):
        return parse_collapse(cls, p, parse_memref_type)

    def print(self, p):
        print_reshape(p, self)

    def evaluate(self, src):
        shape = collapsed_shape(src.shape, reassociation_lists(self.reassociation))
        view = src.view()
        try:
            view.shape = shape          # numpy refuses where it would have to copy
        except AttributeError:
            raise run_error(self, f"cannot collapse a memref of shape {shape_text(src.shape)} "
                            f"and strides {shape_text(src.strides)} bytes without copying: "
                            f"its groups are not contiguous") from None
        return view


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
        owner = self.memref.defining_op()
        k = t.shape[:a].count(None)       # which dynamic size operand
        if isinstance(owner, AllocOp):
            return [owner.dynamic_sizes[k]]
        if isinstance(owner, ViewOp):
            return [owner.sizes[k]]
        if isinstance(owner, ArenaOp):
            return [owner.size]
        if isinstance(owner, SubviewOp):
            size = owner.mixed_sizes()[a]
            return None if size is None else [size]
        return None

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        p.expect(",")
        axis = parse_int(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(p.resolve(ref, t), axis=IntegerAttr(axis, I64), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}, {self.axis.value}")
        p.attr_dict(self, elided=("axis",))
        p.write(f" : {self.memref.type}")

    def evaluate(self, a):
        return int(a.shape[self.axis.value])


# ---------------------------------------------------------------------------------------------
# address
# ---------------------------------------------------------------------------------------------


@memory.op
class AddressOp(Op):
    """The byte address of a buffer's first element (all indices 0), as an `index`: what a
    transformation that depends on the alignment of the memory at run time reads
    (`linalg-matmul-blis`'s dot products start their vector loop where the rows of A are
    aligned to a vector). Any use of it must be correct for every value: the interpreter
    gives numpy's address of the array's first element, the LLVM backend the descriptor's
    aligned pointer plus its offset, and the two differ between the engines.

        %a = memory.address %m : memref<?x784xf32>
    """

    name = "memory.address"
    memref = Operand(MemRef)
    result = Result(Index)
    traits = (Pure(),)

    @classmethod
    def create(cls, memref: Value, location=None) -> "AddressOp":
        return cls.build(memref, location=location)

    def infer_result_types(self):
        return [INDEX]

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_memref_type(p)
        return cls.build(p.resolve(ref, t), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.memref)}")
        p.attr_dict(self)
        p.write(f" : {self.memref.type}")

    def evaluate(self, a):
        return int(a.__array_interface__["data"][0])
