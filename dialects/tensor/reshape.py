"""Tensor ops that regroup dimensions without moving elements: `tensor.collapse_shape`
merges groups of adjacent dimensions into one, `tensor.expand_shape` splits dimensions into
groups. Both are row-major reshapes described by a reassociation: for each dimension of the
collapsed type, the list of expanded dimensions it stands for, in order and contiguous.

    %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
    %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 4]
        : tensor<6x4xf32> into tensor<2x3x4xf32>

`expand_shape` states its result sizes in `output_shape` (MLIR 22), static or `index`
values, so that a dynamic dimension split in two has both sizes known. The verifier follows
MLIR's rules and messages, and also requires static `output_shape` entries to equal the
result type's static sizes (MLIR 22 does not check that).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import DenseI64Array, Index, Op, Operand, Prop, Pure, Result, VarOperand
from irkit.types import RankedTensorType
from irkit.dialects.memory import (
    ReassociationAttr, collapsed_shape, parse_collapse, parse_reassociation, print_reshape,
    reassociation_attr, reassociation_lists, verify_reassociation,
)
from irkit.dialects.tensor import tensor
from irkit.dialects.tensor.base import (
    DYNAMIC_INDEX, Mixed, RankedTensor, check_shape, fail, format_mixed, join_mixed,
    parse_mixed, parse_tensor_type, resolve_indices, shape_text, split_mixed,
)

# ---------------------------------------------------------------------------------------------
# Reassociations
# ---------------------------------------------------------------------------------------------


def collapsed_type(expanded: RankedTensorType, groups: Sequence[Sequence[int]]) -> RankedTensorType:
    """The type `expanded` collapses to: each group's sizes multiplied, `?` if one is `?`
    (MLIR's CollapseShapeOp::inferCollapsedType)."""
    return RankedTensorType(collapsed_shape(expanded.shape, groups), expanded.element)


def compose(outer: Sequence[Sequence[int]], inner: Sequence[Sequence[int]]) -> list[list[int]]:
    """The reassociation of two collapses in a row (`inner` applied first): each group of
    `outer` joins the `inner` groups it names. The same composes two expansions, with
    `outer` and `inner` swapped."""
    return [[i for j in group for i in inner[j]] for group in outer]


def _verify_reshape(op, expanded: RankedTensorType, collapsed: RankedTensorType) -> None:
    """MLIR's rules for both reshapes, in its order (verifyReshapeLikeTypes, then the
    collapsed type the reassociation infers)."""
    groups = reassociation_lists(op.reassociation)
    verify_reassociation(op, groups, expanded, collapsed)
    want = collapsed_type(expanded, groups)
    if want is not RankedTensorType(collapsed.shape, collapsed.element):
        raise op.error(f"expected collapsed type to be '{want}', but got '{collapsed}'")


def _reshape_constant(operand, t: RankedTensorType) -> list | None:
    """A reshape of a constant is the constant with the new type (MLIR's foldReshapeOp)."""
    if not isinstance(operand, DenseElementsAttr) or not t.has_static_shape:
        return None
    return [DenseElementsAttr(t, operand.array.reshape(t.shape))]


# ---------------------------------------------------------------------------------------------
# tensor.collapse_shape
# ---------------------------------------------------------------------------------------------


@tensor.op
class CollapseShapeOp(Op):
    """The source with each group of adjacent dimensions merged into one (row-major, so the
    elements keep their order); the result type follows from the source and the groups.

        %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>

    Folds: to the source when the type does not change; a collapse of the expansion it
    undoes, to that expansion's source; of a constant, to the reshaped constant; a collapse
    of a collapse becomes one collapse (in place).
    """

    name = "tensor.collapse_shape"
    src = Operand(RankedTensor)
    reassociation = Prop(ReassociationAttr)
    result = Result(RankedTensor)
    traits = (Pure(),)

    def infer_result_types(self):
        return [collapsed_type(self.src.type, reassociation_lists(self.reassociation))]

    def verify_(self):
        _verify_reshape(self, self.src.type, self.result.type)

    def fold(self, operands):
        t = self.result.type
        if self.src.type is t:
            return [self.src]
        inner = getattr(self.src, "owner", None)
        if isinstance(inner, ExpandShapeOp) and inner.src.type is t and \
                inner.reassociation == self.reassociation:
            return [inner.src]
        if isinstance(inner, CollapseShapeOp):
            groups = compose(reassociation_lists(self.reassociation),
                             reassociation_lists(inner.reassociation))
            self.src = inner.src
            self.reassociation = reassociation_attr(groups)
            return [self.result]
        return _reshape_constant(operands[0], t)

    @classmethod
    def parse(cls, p, num_results):
        return parse_collapse(cls, p, parse_tensor_type)

    def print(self, p):
        print_reshape(p, self)

    def evaluate(self, src):
        groups = reassociation_lists(self.reassociation)
        shape = [int(np.prod([src.shape[i] for i in g], dtype=np.int64)) for g in groups]
        if int(np.prod(shape, dtype=np.int64)) != src.size:
            raise fail(self, f"cannot collapse a tensor of shape {shape_text(src.shape)} into "
                             f"{self.result.type}")
        out = src.reshape(shape)
        check_shape(self, "the result", out, self.result.type)
        return out


# ---------------------------------------------------------------------------------------------
# tensor.expand_shape
# ---------------------------------------------------------------------------------------------


@tensor.op
class ExpandShapeOp(Op):
    """The source with each dimension split into a group of adjacent ones (row-major), of the
    sizes `output_shape` gives: one entry per result dimension, static or an `index` value.
    Sizes whose product is not the split dimension's size are undefined (the interpreter
    reports them).

        %e = tensor.expand_shape %t [[0, 1]] output_shape [%n, 784]
            : tensor<?xf32> into tensor<?x784xf32>

    Folds: to the source when the type does not change; an expansion of the collapse it
    undoes, to that collapse's source; of a constant, to the reshaped constant; an expansion
    of an expansion becomes one expansion (in place).
    """

    name = "tensor.expand_shape"
    src = Operand(RankedTensor)
    output_shape = VarOperand(Index, doc="one size per dynamic entry of static_output_shape")
    reassociation = Prop(ReassociationAttr)
    static_output_shape = Prop(DenseI64Array)
    result = Result(RankedTensor)
    traits = (Pure(),)

    @classmethod
    def create(cls, src: Value, reassociation: Sequence[Sequence[int]],
               output_shape: Sequence[Mixed], location=None) -> "ExpandShapeOp":
        """Build from mixed sizes; the result type has the static ones."""
        static, dynamic = split_mixed(output_shape)
        t = RankedTensorType([d if isinstance(d, int) else None for d in output_shape],
                             src.type.element)
        return cls.build(src, dynamic, result_types=[t], location=location,
                         reassociation=reassociation_attr(reassociation),
                         static_output_shape=static)

    def mixed_output_shape(self) -> list[Mixed]:
        return join_mixed(self.static_output_shape, self.output_shape)

    def verify_(self):
        t = self.result.type
        static = list(self.static_output_shape)
        if len(static) != t.rank:
            raise self.error(f"expected number of static shape dims to be equal to the output "
                             f"rank ({t.rank}) but found {len(static)} inputs instead")
        n_dyn = static.count(DYNAMIC_INDEX)
        if n_dyn != len(self.output_shape):
            raise self.error(f"mismatch in dynamic dims in output_shape and static_output_shape: "
                             f"static_output_shape has {n_dyn} dynamic dims while output_shape "
                             f"has {len(self.output_shape)} values")
        _verify_reshape(self, t, self.src.type)
        for i, (s, d) in enumerate(zip(static, t.shape)):
            if s != DYNAMIC_INDEX and d is not None and s != d:
                raise self.error(f"output_shape entry #{i} is {s}, but the result type "
                                 f"'{t}' has size {d} there")

    def fold(self, operands):
        t = self.result.type
        if self.src.type is t:
            return [self.src]
        inner = getattr(self.src, "owner", None)
        if isinstance(inner, CollapseShapeOp) and inner.src.type is t and \
                inner.reassociation == self.reassociation:
            return [inner.src]
        if isinstance(inner, ExpandShapeOp):
            groups = compose(reassociation_lists(inner.reassociation),
                             reassociation_lists(self.reassociation))
            self.src = inner.src
            self.reassociation = reassociation_attr(groups)
            return [self.result]
        return _reshape_constant(operands[0], t)

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        reassociation = parse_reassociation(p)
        p.expect("output_shape")
        static, refs = parse_mixed(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_tensor_type(p)
        p.expect("into")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(src, s), resolve_indices(p, refs), result_types=[t],
                         attributes=attrs, reassociation=reassociation,
                         static_output_shape=split_mixed(static)[0])

    def print(self, p):
        print_reshape(p, self, f" output_shape {format_mixed(p, self.mixed_output_shape())}")

    def evaluate(self, src, *dynamic):
        it = iter(int(v) for v in dynamic)
        shape = [next(it) if s == DYNAMIC_INDEX else s for s in self.static_output_shape]
        for k, g in enumerate(reassociation_lists(self.reassociation)):
            part = [shape[i] for i in g]
            if any(d < 0 for d in part) or int(np.prod(part, dtype=np.int64)) != src.shape[k]:
                raise fail(self, f"output sizes {shape_text(part)} do not split dimension {k} "
                                 f"of size {src.shape[k]}")
        out = src.reshape(shape)
        check_shape(self, "the result", out, self.result.type)
        return out


# ---------------------------------------------------------------------------------------------
# Builders for passes
# ---------------------------------------------------------------------------------------------


def collapse_shape(builder: Builder, value: Value, reassociation: Sequence[Sequence[int]]) -> Value:
    """`tensor.collapse_shape value [reassociation]`; the result type is inferred."""
    return builder.create(CollapseShapeOp, value,
                          reassociation=reassociation_attr(reassociation)).result


def expand_shape(builder: Builder, value: Value, reassociation: Sequence[Sequence[int]],
                 output_shape: Sequence[Mixed]) -> Value:
    """`tensor.expand_shape value [reassociation] output_shape [...]` from mixed sizes; the
    result type has the static ones."""
    op = ExpandShapeOp.create(value, reassociation, output_shape, location=builder.location)
    return builder.insert(op).result


