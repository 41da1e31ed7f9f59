"""Tensor ops that cut a window out of a tensor or put one back: `tensor.extract_slice`,
`tensor.insert_slice`, and `tensor.concat` (inputs placed one after another along an axis).

A window is per dimension an offset, a size and a stride, each static or an `index` value,
stored as MLIR stores them (`static_offsets` etc. with `DYNAMIC_INDEX` where an operand
stands, see `base.py`) and printed as MLIR prints them:

    tensor.extract_slice %t[%o, 0] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>

The slice's type may drop unit dimensions of the window (rank reduction); which ones is
decided from the types alone (`rank_reduction_mask`). The verifier applies MLIR's rules,
including its static in-bounds check; the interpreter checks every window against the run-time
shape and reports an out-of-bounds one, naming the op. Strides may be zero or negative, as
MLIR allows: a window reads `offset + k * stride` for `k < size`, each inside the tensor. An
empty window (size 0) reads nothing, and may start at the end of its dimension when the
offset is only known at run time.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from irkit.attributes import DenseElementsAttr, IntegerAttr
from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import DenseI64Array, I64Attr, Index, Op, Operand, Prop, Pure, Result, VarOperand
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import I64, FunctionType, RankedTensorType
from irkit.dialects.arith import fold as af
from irkit.dialects.tensor import tensor
from irkit.dialects.tensor.base import (
    DYNAMIC_INDEX, Mixed, RankedTensor, canonical_reduced_type, check_shape, check_slice_type,
    fail, fold_constant_entries, format_mixed, join_mixed, join_shapes, parse_int, parse_mixed,
    parse_tensor_type, rank_reduction_mask, resolve_indices, shape_text, slice_bounds_error,
    split_mixed, static_entries,
)
from irkit.dialects.tensor.shape import CastOp

_GROUPS = ("offset", "size", "stride")


# ---------------------------------------------------------------------------------------------
# What both slice ops share
# ---------------------------------------------------------------------------------------------


class SliceLike:
    """Offsets, sizes and strides, static or dynamic (MLIR's OffsetSizeAndStrideOpInterface),
    over the tensor the window lies in (`_whole`: the source of extract_slice, the dest of
    insert_slice)."""

    __slots__ = ()

    def mixed_offsets(self) -> list[Mixed]:
        """Per dimension the offset: an `index` value, or an int where static."""
        return join_mixed(self.static_offsets, self.offsets)

    def mixed_sizes(self) -> list[Mixed]:
        return join_mixed(self.static_sizes, self.sizes)

    def mixed_strides(self) -> list[Mixed]:
        return join_mixed(self.static_strides, self.strides)

    def full_type(self) -> RankedTensorType:
        """The window's type before rank reduction (MLIR's inferResultType)."""
        return RankedTensorType(static_entries(self.static_sizes), self._whole().type.element)

    def dropped_dims(self) -> list[int]:
        """The window dimensions the slice's type leaves out (unit dimensions)."""
        return rank_reduction_mask(self.full_type().shape, self._slice_type().shape) or []

    def same_window(self, other: "SliceLike") -> bool:
        """Whether `other` has the very same offsets, sizes and strides (values by identity)."""
        for mine, theirs in zip(self._mixed(), other._mixed()):
            if len(mine) != len(theirs):
                return False
            for a, b in zip(mine, theirs):
                same = a == b if isinstance(a, int) and isinstance(b, int) else a is b
                if not same:
                    return False
        return True

    def is_identity_window(self) -> bool:
        """Offsets 0, strides 1 and static sizes equal to the whole tensor's static shape."""
        shape = self._whole().type.shape
        return all(o == 0 for o in self.mixed_offsets()) and \
            all(s == 1 for s in self.mixed_strides()) and \
            list(self.mixed_sizes()) == list(shape) and None not in shape

    def _mixed(self) -> tuple[list, list, list]:
        return self.mixed_offsets(), self.mixed_sizes(), self.mixed_strides()

    def _static(self) -> tuple[list, list, list]:
        return (list(self.static_offsets), list(self.static_sizes), list(self.static_strides))

    def _verify_window(self) -> None:
        """MLIR's rules in MLIR's order: list ranks agree, each list has one entry per
        dimension and one value per dynamic entry, offsets and sizes are non-negative; then
        the slice type, then the static bounds."""
        offsets, sizes, strides = self._static()
        if len(offsets) != len(sizes):
            raise self.error(f"expected mixed offsets rank to match mixed sizes rank "
                             f"({len(offsets)} vs {len(sizes)}) so the rank of the result type "
                             f"is well-formed.")
        if len(sizes) != len(strides):
            raise self.error(f"expected mixed sizes rank to match mixed strides rank "
                             f"({len(sizes)} vs {len(strides)}) so the rank of the result type "
                             f"is well-formed.")
        rank = self._whole().type.rank
        for name, static, values in zip(_GROUPS, (offsets, sizes, strides),
                                        (self.offsets, self.sizes, self.strides)):
            if len(static) != rank:
                raise self.error(f"expected {rank} {name} values, got {len(static)}")
            n_dyn = static.count(DYNAMIC_INDEX)
            if n_dyn != len(values):
                raise self.error(f"expected the number of '{name}s' to match the number of "
                                 f"dynamic entries in 'static_{name}s' ({len(values)} vs "
                                 f"{n_dyn})")
        for name, static in (("offset", offsets), ("size", sizes)):
            bad = next((v for v in static if v < 0 and v != DYNAMIC_INDEX), None)
            if bad is not None:
                raise self.error(f"expected {name}s to be non-negative, but got {bad}")
        check_slice_type(self, self.full_type(), self._slice_type())
        error = slice_bounds_error(self._whole().type.shape, *map(static_entries,
                                                                  (offsets, sizes, strides)))
        if error is not None:
            raise self.error(error)

    # ----- semantics ----------------------------------------------------------------------

    def _runtime_window(self, dynamic) -> tuple[list[int], list[int], list[int]]:
        it = iter(int(v) for v in dynamic)
        return tuple([next(it) if v == DYNAMIC_INDEX else v for v in group]
                     for group in self._static())

    def _window_index(self, shape, offsets, sizes, strides) -> tuple:
        """The numpy index of the window (`np.ix_` of the positions read), checked."""
        ranges = []
        for i, (o, n, k, d) in enumerate(zip(offsets, sizes, strides, shape)):
            last = o + (n - 1) * k
            inside = 0 <= o <= d if n == 0 else (0 <= o < d and 0 <= last < d)
            if n < 0 or not inside:
                raise fail(self, f"window with offsets {shape_text(offsets)}, sizes "
                                 f"{shape_text(sizes)} and strides {shape_text(strides)} is out "
                                 f"of bounds along dimension {i} of a tensor of shape "
                                 f"{shape_text(shape)}")
            ranges.append(o + k * np.arange(n, dtype=np.int64))
        return np.ix_(*ranges)

    def _kept_sizes(self, sizes) -> list[int]:
        dropped = self.dropped_dims()
        return [n for i, n in enumerate(sizes) if i not in dropped]


def _fold_window_constants(op: SliceLike) -> tuple[list, list, list] | None:
    """The op's lists with constant values made static, when that changes something and the
    result still passes the static bounds check (MLIR's
    OpWithOffsetSizesAndStridesConstantArgumentFolder)."""
    offsets, sizes, strides = op.mixed_offsets(), op.mixed_sizes(), op.mixed_strides()
    new = (fold_constant_entries(offsets, non_negative=True),
           fold_constant_entries(sizes, non_negative=True),
           fold_constant_entries(strides, non_zero=True))
    if all(n is None for n in new):
        return None
    lists = tuple(n if n is not None else old for n, old in zip(new, (offsets, sizes, strides)))
    statics = [[v if isinstance(v, int) else None for v in group] for group in lists]
    if slice_bounds_error(op._whole().type.shape, *statics) is not None:
        return None
    return lists


def _window_props(offsets, sizes, strides) -> tuple[list, dict]:
    groups, props = [], {}
    for name, mixed in zip(_GROUPS, (offsets, sizes, strides)):
        static, values = split_mixed(mixed)
        props[f"static_{name}s"] = static
        groups.append(values)
    return groups, props


def _parse_window(p) -> tuple[list, dict]:
    groups, props = [], {}
    for name in _GROUPS:
        static, refs = parse_mixed(p)
        props[f"static_{name}s"] = split_mixed(static)[0]
        groups.append(refs)
    return groups, props


def _print_window(p, op: SliceLike) -> None:
    p.write(" ".join(format_mixed(p, m) for m in op._mixed()))
    p.attr_dict(op, elided=("static_offsets", "static_sizes", "static_strides",
                            "operandSegmentSizes"))


# ---------------------------------------------------------------------------------------------
# tensor.extract_slice
# ---------------------------------------------------------------------------------------------


class FoldExtractSliceConstants(RewritePattern):
    """Constant offsets, sizes and strides become static; the more static result is cast back
    to the old type."""

    root = "tensor.extract_slice"    # ExtractSliceOp is defined below

    def match_and_rewrite(self, op: ExtractSliceOp, rewriter: PatternRewriter) -> bool:
        lists = _fold_window_constants(op)
        if lists is None:
            return False
        old = op.result.type
        full = RankedTensorType([v if isinstance(v, int) else None for v in lists[1]],
                                op.source.type.element)
        new_type = canonical_reduced_type(full, old.rank)
        if join_shapes(new_type, old) is None:
            return False
        new = rewriter.insert(ExtractSliceOp.create(op.source, *lists, result_type=new_type,
                                                    location=op.location))
        if new_type is old:
            rewriter.replace_op(op, new.results)
        else:
            rewriter.replace_op_with_new(op, CastOp, new.result, result_types=[old])
        return True


@tensor.op
class ExtractSliceOp(SliceLike, Op):
    """A window of a ranked tensor: per dimension an offset, a size and a stride, static or
    dynamic. The result type is the window's sizes, or a rank-reduced version of them
    (unit dimensions dropped).

        %s = tensor.extract_slice %t[%o, 0] [4, %n] [1, 1] : tensor<?x?xf32> to tensor<4x?xf32>

    Folds: the identity window of a static tensor, to the tensor; a slice of a splat
    constant, to a splat of the result type; a slice of a `tensor.insert_slice` at the same
    window, to what was inserted. Constant dynamic entries become static (with a cast).
    """

    name = "tensor.extract_slice"
    source = Operand(RankedTensor)
    offsets = VarOperand(Index)
    sizes = VarOperand(Index)
    strides = VarOperand(Index)
    static_offsets = Prop(DenseI64Array)
    static_sizes = Prop(DenseI64Array)
    static_strides = Prop(DenseI64Array)
    result = Result(RankedTensor)
    traits = (Pure(),)
    canonicalization_patterns = (FoldExtractSliceConstants,)

    @classmethod
    def create(cls, source: Value, offsets: Sequence[Mixed], sizes: Sequence[Mixed],
               strides: Sequence[Mixed], result_type: RankedTensorType | None = None,
               location=None) -> "ExtractSliceOp":
        """Build from mixed lists; the result type is the window's sizes unless given (give
        it for a rank-reduced slice)."""
        groups, props = _window_props(offsets, sizes, strides)
        types = None if result_type is None else [result_type]
        return cls.build(source, *groups, result_types=types, location=location, **props)

    def infer_result_types(self):
        return [self.full_type()]

    def _whole(self) -> Value:
        return self.source

    def _slice_type(self) -> RankedTensorType:
        return self.result.type

    def verify_(self):
        self._verify_window()

    def result_dim(self, axis: int) -> Value | None:
        dropped = self.dropped_dims()
        kept = [i for i in range(len(self.static_sizes)) if i not in dropped]
        size = self.mixed_sizes()[kept[axis]]
        return size if isinstance(size, Value) else None

    def fold(self, operands):
        t = self.result.type
        source = operands[0]
        if isinstance(source, DenseElementsAttr) and source.is_splat and t.has_static_shape:
            return [af.value_to_attr(source.splat_value(), t)]
        if self.source.type is t and self.is_identity_window():
            return [self.source]
        owner = getattr(self.source, "owner", None)
        if isinstance(owner, InsertSliceOp) and owner.source.type is t and \
                self.same_window(owner):
            return [owner.source]
        return None

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        groups, props = _parse_window(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_tensor_type(p)
        p.expect("to")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(src, s), *[resolve_indices(p, g) for g in groups],
                         result_types=[t], attributes=attrs, **props)

    def print(self, p):
        p.write(f" {p.value(self.source)}")
        _print_window(p, self)
        p.write(f" : {self.source.type} to {self.result.type}")

    def evaluate(self, source, *dynamic):
        offsets, sizes, strides = self._runtime_window(dynamic)
        if source.ndim == 0:
            return np.array(source, copy=True)
        window = source[self._window_index(source.shape, offsets, sizes, strides)]
        return window.reshape(self._kept_sizes(sizes))


# ---------------------------------------------------------------------------------------------
# tensor.insert_slice
# ---------------------------------------------------------------------------------------------


class FoldInsertSliceConstants(RewritePattern):
    """Constant offsets, sizes and strides become static; the source is cast to the more
    static type the new window asks for."""

    root = "tensor.insert_slice"     # InsertSliceOp is defined below

    def match_and_rewrite(self, op: InsertSliceOp, rewriter: PatternRewriter) -> bool:
        lists = _fold_window_constants(op)
        if lists is None:
            return False
        old = op.source.type
        full = RankedTensorType([v if isinstance(v, int) else None for v in lists[1]],
                                old.element)
        new_type = canonical_reduced_type(full, old.rank)
        if join_shapes(new_type, old) is None:
            return False
        source = op.source
        if new_type is not old:
            source = rewriter.create(CastOp, source, result_types=[new_type]).result
        new = rewriter.insert(InsertSliceOp.create(source, op.dest, *lists,
                                                   location=op.location))
        rewriter.replace_op(op, new.results)
        return True


@tensor.op
class InsertSliceOp(SliceLike, Op):
    """A copy of `dest` with a window replaced by `source`: the window's offsets, sizes and
    strides as for `tensor.extract_slice`, and `source` has the window's type or a rank-reduced
    version of it. The result has `dest`'s type.

        %r = tensor.insert_slice %s into %t[0, %o] [4, 8] [1, 1]
            : tensor<4x8xf32> into tensor<?x?xf32>

    Folds: inserting a whole static tensor's worth, to the source; inserting what was just
    extracted from the same window of `dest`, to `dest`; an insert over an insert at the same
    window skips the first (in place).
    """

    name = "tensor.insert_slice"
    source = Operand(RankedTensor)
    dest = Operand(RankedTensor)
    offsets = VarOperand(Index)
    sizes = VarOperand(Index)
    strides = VarOperand(Index)
    static_offsets = Prop(DenseI64Array)
    static_sizes = Prop(DenseI64Array)
    static_strides = Prop(DenseI64Array)
    result = Result(RankedTensor)
    traits = (Pure(),)
    canonicalization_patterns = (FoldInsertSliceConstants,)

    @classmethod
    def create(cls, source: Value, dest: Value, offsets: Sequence[Mixed],
               sizes: Sequence[Mixed], strides: Sequence[Mixed],
               location=None) -> "InsertSliceOp":
        groups, props = _window_props(offsets, sizes, strides)
        return cls.build(source, dest, *groups, location=location, **props)

    def infer_result_types(self):
        return [self.dest.type]

    def _whole(self) -> Value:
        return self.dest

    def _slice_type(self) -> RankedTensorType:
        return self.source.type

    def verify_(self):
        if self.result.type is not self.dest.type:
            raise self.error("failed to verify that expected result type to match dest type")
        self._verify_window()

    def tied_init(self, result: Value) -> Value:
        """The destination whose shape the result has (destination-passing style)."""
        return self.dest

    def fold(self, operands):
        if self.source.type is self.dest.type and self.is_identity_window():
            return [self.source]
        extracted = getattr(self.source, "owner", None)
        if isinstance(extracted, ExtractSliceOp) and extracted.source is self.dest and \
                self.same_window(extracted):
            return [self.dest]
        inserted = getattr(self.dest, "owner", None)
        if isinstance(inserted, InsertSliceOp) and inserted.source.type is self.source.type \
                and self.same_window(inserted):
            self.dest = inserted.dest
            return [self.result]
        return None

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        p.expect("into")
        dest = p.parse_operand_ref()
        groups, props = _parse_window(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_tensor_type(p)
        p.expect("into")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(src, s), p.resolve(dest, t),
                         *[resolve_indices(p, g) for g in groups], result_types=[t],
                         attributes=attrs, **props)

    def print(self, p):
        p.write(f" {p.value(self.source)} into {p.value(self.dest)}")
        _print_window(p, self)
        p.write(f" : {self.source.type} into {self.dest.type}")

    def evaluate(self, source, dest, *dynamic):
        offsets, sizes, strides = self._runtime_window(dynamic)
        if dest.ndim == 0:
            return np.array(source, copy=True)
        index = self._window_index(dest.shape, offsets, sizes, strides)
        kept = self._kept_sizes(sizes)
        if list(source.shape) != kept:
            raise fail(self, f"source of shape {shape_text(source.shape)} does not fill the "
                             f"window of sizes {shape_text(kept)}")
        if any(k == 0 and n > 1 for k, n in zip(strides, sizes)):
            raise fail(self, f"window with strides {shape_text(strides)} and sizes "
                             f"{shape_text(sizes)} writes one element several times")
        out = np.array(dest, copy=True)
        out[index] = source.reshape(sizes)
        return out


# ---------------------------------------------------------------------------------------------
# tensor.concat
# ---------------------------------------------------------------------------------------------


class SingleInputConcat(RewritePattern):
    """`concat(x)` is `x`, cast to the result type (MLIR's SingleInputConcatOp)."""

    root = "tensor.concat"           # ConcatOp is defined below

    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> bool:
        if len(op.inputs) != 1:
            return False
        rewriter.replace_op_with_new(op, CastOp, op.inputs[0], result_types=[op.result.type])
        return True


@tensor.op
class ConcatOp(Op):
    """The inputs joined along dimension `dim`: same rank and element type, the same size in
    every other dimension.

        %r = tensor.concat dim(0) %a, %b : (tensor<3x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>

    Folds: one input of the result's type is the result; one input of another type becomes
    a `tensor.cast`.
    """

    name = "tensor.concat"
    dim = Prop(I64Attr)
    inputs = VarOperand(RankedTensor)
    result = Result(RankedTensor)
    traits = (Pure(),)
    canonicalization_patterns = (SingleInputConcat,)

    def infer_result_types(self):
        return [self.inferred_type()]

    def inferred_type(self) -> RankedTensorType:
        """The result type the inputs determine (each size static where the inputs' are)."""
        types = [v.type for v in self.inputs]
        axis = self.dim.value
        shape = []
        for i in range(types[0].rank):
            if i == axis:
                along = [t.shape[i] for t in types]
                shape.append(None if None in along else sum(along))
                continue
            known = {t.shape[i] for t in types} - {None}
            shape.append(known.pop() if len(known) == 1 else None)
        return RankedTensorType(shape, types[0].element)

    def verify_(self):
        types = [v.type for v in self.inputs]
        res = self.result.type
        if not types:
            raise self.error("requires at least one input")
        if any(t.rank != res.rank for t in types):
            raise self.error("rank of concatenated inputs must match result rank")
        if any(t.element is not res.element for t in types):
            raise self.error("inputs and result element type must match")
        axis = self.dim.value
        if axis < 0:
            raise self.error("concatenation dim must be non-negative")
        if axis >= res.rank:
            raise self.error("concatenation dim must be less than the tensor rank")
        for i in range(res.rank):
            if i != axis and len({t.shape[i] for t in types} - {None}) > 1:
                raise self.error(f"static concatenation size mismatch along non-concatenated "
                                 f"dimension {i}")
        inferred = self.inferred_type()
        if any(a is not None and b is not None and a != b
               for a, b in zip(inferred.shape, res.shape)):
            raise self.error(f"result type '{res}' does not match inferred shape '{inferred}' "
                             f"static sizes")

    def fold(self, operands):
        inputs = self.inputs
        if len(inputs) == 1 and inputs[0].type is self.result.type:
            return [inputs[0]]
        return None

    @classmethod
    def parse(cls, p, num_results):
        p.expect("dim")
        p.expect("(")
        axis = parse_int(p)
        p.expect(")")
        refs = p.parse_operand_refs() if p.tok.startswith("%") else []
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        tk = p.i
        ftype = p.parse_type()
        if not isinstance(ftype, FunctionType) or len(ftype.inputs) != len(refs) or \
                len(ftype.results) != 1:
            raise p.error(f"expected a function type from {len(refs)} tensor types to one", tk)
        inputs = [p.resolve(r, t) for r, t in zip(refs, ftype.inputs)]
        return cls.build(inputs, result_types=list(ftype.results), attributes=attrs,
                         dim=IntegerAttr(axis, I64))

    def print(self, p):
        p.write(f" dim({self.dim.value})")
        if self.inputs:
            p.write(" " + ", ".join(map(p.value, self.inputs)))
        p.attr_dict(self, elided=("dim",))
        types = ", ".join(str(v.type) for v in self.inputs)
        p.write(f" : ({types}) -> {self.result.type}")

    def evaluate(self, *inputs):
        out = np.concatenate(inputs, axis=self.dim.value)
        check_shape(self, "the result", out, self.result.type)
        return out


# ---------------------------------------------------------------------------------------------
# Builders for passes
# ---------------------------------------------------------------------------------------------


def extract_slice(builder: Builder, source: Value, offsets: Sequence[Mixed],
                  sizes: Sequence[Mixed], strides: Sequence[Mixed] | None = None,
                  result_type: RankedTensorType | None = None) -> Value:
    """`tensor.extract_slice` from mixed `int | Value` lists (strides default to 1); the
    result type is the window's sizes unless `result_type` asks for a rank-reduced one."""
    strides = [1] * len(offsets) if strides is None else strides
    op = ExtractSliceOp.create(source, offsets, sizes, strides, result_type,
                               location=builder.location)
    return builder.insert(op).result


def insert_slice(builder: Builder, source: Value, dest: Value, offsets: Sequence[Mixed],
                 sizes: Sequence[Mixed], strides: Sequence[Mixed] | None = None) -> Value:
    """`tensor.insert_slice source into dest` at a window given by mixed lists (strides
    default to 1); the result has `dest`'s type."""
    strides = [1] * len(offsets) if strides is None else strides
    op = InsertSliceOp.create(source, dest, offsets, sizes, strides, location=builder.location)
    return builder.insert(op).result


def concat(builder: Builder, dim: int, inputs: Sequence[Value],
           result_type: RankedTensorType | None = None) -> Value:
    """`tensor.concat dim(dim)` of `inputs`; the result type is inferred unless given."""
    types = None if result_type is None else [result_type]
    return builder.create(ConcatOp, list(inputs), dim=IntegerAttr(dim, I64),
                          result_types=types).result
