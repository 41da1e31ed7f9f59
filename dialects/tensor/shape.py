"""Tensor ops about shapes: `tensor.empty` (a tensor of a shape, contents undefined),
`tensor.dim` (one size) and `tensor.cast` (the same tensor with more or less static type).

Two duck-typed hooks let `tensor.dim` fold through the ops that make tensors without this
module knowing them (MLIR folds the same cases, op by op):

- `result_dim(axis) -> Value | None`: an existing `index` value equal to the size of the
  result's dimension `axis` (the size operand of `tensor.empty`, `tensor.generate`, the
  size of a `tensor.extract_slice`);
- `tied_init(result) -> Value`: for destination-style ops (`tensor.insert`,
  `tensor.insert_slice`, and any `linalg` op that implements it), the operand whose shape
  the result has, so that `dim(op result)` is `dim(init)`.
"""

from __future__ import annotations

from typing import Sequence

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import Index, Op, Operand, Pure, Result, VarOperand
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import INDEX, RankedTensorType, Type
from irkit.dialects.arith import ConstantOp
from irkit.dialects.tensor import tensor
from irkit.dialects.tensor.base import (
    AnyTensorType, Mixed, NonScalarTensor, RankedTensor, check_shape, fail,
    fold_constant_entries, join_shapes, mixed_shape, parse_tensor_type, poisoned,
    resolve_indices, shape_text, type_from_mixed,
)

# ---------------------------------------------------------------------------------------------
# tensor.empty
# ---------------------------------------------------------------------------------------------


class StaticEmptySizes(RewritePattern):
    """A size operand that is a constant becomes part of the type, and a cast gives back the
    old type (MLIR's ReplaceEmptyTensorStaticShapeDims)."""

    root = "tensor.empty"       # EmptyOp is defined below, so the annotation is a name

    def match_and_rewrite(self, op: EmptyOp, rewriter: PatternRewriter) -> bool:
        t = op.result.type
        sizes = fold_constant_entries(op.mixed_sizes(), non_negative=True)
        if sizes is None:
            return False
        new = rewriter.create(EmptyOp, [v for v in sizes if isinstance(v, Value)],
                              result_types=[type_from_mixed(sizes, t.element)])
        rewriter.replace_op_with_new(op, CastOp, new.result, result_types=[t])
        return True


@tensor.op
class EmptyOp(Op):
    """A tensor of the given shape whose contents are undefined: only its shape means
    something (destination-passing style starts from one). One `index` operand per `?`.

        %e = tensor.empty(%n) : tensor<?x10xf32>
    """

    name = "tensor.empty"
    dynamic_sizes = VarOperand(Index, doc="one size per dynamic dimension, in order")
    result = Result(RankedTensor)
    traits = (Pure(),)
    canonicalization_patterns = (StaticEmptySizes,)

    def verify_(self):
        want, got = self.result.type.shape.count(None), len(self.dynamic_sizes)
        if want != got:
            raise self.error(f"incorrect number of dynamic sizes, has {got}, expected {want}")

    def result_dim(self, axis: int) -> Value | None:
        t = self.result.type
        if t.shape[axis] is not None:
            return None
        return self.dynamic_sizes[t.shape[:axis].count(None)]

    def mixed_sizes(self) -> list[Mixed]:
        return mixed_shape(self.result.type, self.dynamic_sizes)

    @classmethod
    def parse(cls, p, num_results):
        p.expect("(")
        refs = [] if p.tok == ")" else p.parse_operand_refs()
        p.expect(")")
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_tensor_type(p)
        return cls.build(resolve_indices(p, refs), result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f"({', '.join(map(p.value, self.dynamic_sizes))})")
        p.attr_dict(self)
        p.write(f" : {self.result.type}")

    def evaluate(self, *sizes):
        t = self.result.type
        it = iter(int(s) for s in sizes)
        shape = tuple(next(it) if d is None else d for d in t.shape)
        if any(d < 0 for d in shape):
            raise fail(self, f"cannot make a tensor of negative size {shape_text(shape)}")
        return poisoned(shape, t.element)


# ---------------------------------------------------------------------------------------------
# tensor.dim
# ---------------------------------------------------------------------------------------------


@tensor.op
class DimOp(Op):
    """The size of dimension `index` of a tensor, as an `index`. An index out of range is
    undefined behaviour (the interpreter reports it; the verifier accepts it, as MLIR's).

        %d = tensor.dim %t, %c0 : tensor<?x784xf32>

    Folds: a static size to a constant; a dynamic one to the value that made it (the size
    operand of `tensor.empty` or `tensor.generate`, the size of a `tensor.extract_slice`);
    through `tensor.cast` and destination-style ops (`tensor.insert`, ...) to the dim of
    their source / destination.
    """

    name = "tensor.dim"
    source = Operand(NonScalarTensor)
    index = Operand(Index)
    result = Result(Index)
    traits = (Pure(),)

    def infer_result_types(self):
        return [INDEX]

    def fold(self, operands):
        axis, t = operands[1], self.source.type
        owner = getattr(self.source, "owner", None)
        if isinstance(axis, IntegerAttr) and isinstance(t, RankedTensorType) and \
                0 <= axis.value < t.rank:
            size = t.shape[axis.value]
            if size is not None:
                return [IntegerAttr(size, INDEX)]
            known = getattr(owner, "result_dim", None)
            v = known(axis.value) if known is not None else None
            if v is not None:
                return [v]
        # In place, for any index: the same dimension of the tensor the source was cast from,
        # or of the destination a destination-style op writes into.
        if isinstance(owner, CastOp):
            return self._fold_to_dim_of(owner.source)
        tied = getattr(owner, "tied_init", None)
        if tied is not None:
            return self._fold_to_dim_of(tied(self.source))
        return None

    def _fold_to_dim_of(self, value: Value) -> list:
        self.source = value
        return [self.result]

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        src = p.parse_operand_ref()
        p.expect(",")
        idx = p.parse_operand_ref()
        p.expect(":")
        t = parse_tensor_type(p, ranked=False)
        return cls.build(p.resolve(src, t), p.resolve(idx, INDEX), attributes=attrs)

    def print(self, p):
        p.attr_dict(self)
        p.write(f" {p.value(self.source)}, {p.value(self.index)} : {self.source.type}")

    def evaluate(self, source, index):
        if not 0 <= index < source.ndim:
            raise fail(self, f"index {index} is out of range for a tensor of rank "
                             f"{source.ndim}")
        return int(source.shape[index])


# ---------------------------------------------------------------------------------------------
# tensor.cast
# ---------------------------------------------------------------------------------------------


@tensor.op
class CastOp(Op):
    """The same tensor with a more or less static type: same element type, and where both
    types are ranked, the same rank and no two different static sizes. Casting to a static
    size the tensor does not have is undefined (the interpreter reports it).

        %c = tensor.cast %t : tensor<?x784xf32> to tensor<4x784xf32>

    Folds: a cast to the source's own type is the source; a cast of a cast skips the inner
    one when that loses no static information (MLIR's ChainedTensorCast: the inner cast
    must not promise a size that neither the outer source nor the result states).
    """

    name = "tensor.cast"
    source = Operand(AnyTensorType)
    dest = Result(AnyTensorType)
    traits = (Pure(),)

    def verify_(self):
        s, t = self.source.type, self.dest.type
        if s.element is not t.element or join_shapes(s, t) is None:
            raise self.error(f"operand type '{s}' and result type '{t}' are cast incompatible")

    def fold(self, operands):
        if self.source.type is self.dest.type:
            return [self.source]
        inner = getattr(self.source, "owner", None)
        if not isinstance(inner, CastOp):
            return None
        src, mid, res = inner.source.type, inner.dest.type, self.dest.type
        both = join_shapes(src, mid)
        joined = join_shapes(both, res) if both is not None else None
        if joined is None or joined is not join_shapes(src, res):
            return None
        if src is res:
            return [inner.source]
        self.source = inner.source
        return [self.dest]

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_tensor_type(p, ranked=False)
        p.expect("to")
        t = parse_tensor_type(p, ranked=False)
        return cls.build(p.resolve(src, s), result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.source)}")
        p.attr_dict(self)
        p.write(f" : {self.source.type} to {self.dest.type}")

    def evaluate(self, source):
        check_shape(self, "the tensor", source, self.dest.type)
        return source


# ---------------------------------------------------------------------------------------------
# Builders for passes
# ---------------------------------------------------------------------------------------------


def index_constant(builder: Builder, value: int) -> Value:
    """An `arith.constant` of type `index` at the builder's insertion point."""
    return builder.insert(ConstantOp.materialize(IntegerAttr(int(value), INDEX), INDEX)).result


def empty(builder: Builder, type: RankedTensorType, dynamic_sizes: Sequence[Value] = ()) -> Value:
    """`tensor.empty(dynamic_sizes) : type`."""
    return builder.create(EmptyOp, list(dynamic_sizes), result_types=[type]).result


def empty_mixed(builder: Builder, sizes: Sequence[Mixed], element: Type) -> Value:
    """A `tensor.empty` from mixed sizes: ints become static sizes of the type."""
    return empty(builder, type_from_mixed(sizes, element),
                 [v for v in sizes if isinstance(v, Value)])


def dim(builder: Builder, value: Value, k: int | Value) -> Value:
    """`tensor.dim value, k` (an index constant is made for an int `k`)."""
    axis = index_constant(builder, k) if isinstance(k, int) else k
    return builder.create(DimOp, value, axis).result


def mixed_size(builder: Builder, value: Value, k: int) -> Mixed:
    """The size of dimension `k`: an int when the type states it, else a `tensor.dim`."""
    d = value.type.shape[k]
    return d if d is not None else dim(builder, value, k)


def mixed_sizes(builder: Builder, value: Value) -> list[Mixed]:
    """Every size of a ranked tensor, as `mixed_size`."""
    return [mixed_size(builder, value, k) for k in range(value.type.rank)]


def cast(builder: Builder, value: Value, type: Type) -> Value:
    """`value` as `type` (itself when it already has that type)."""
    if value.type is type:
        return value
    return builder.create(CastOp, value, result_types=[type]).result
