"""Tensor ops that read, write or compute elements one at a time: `tensor.extract` and
`tensor.insert` (one element at given indices), `tensor.from_elements` (a tensor of listed
scalars), `tensor.splat` (one scalar everywhere), `tensor.generate` (a region computes each
element from its indices) and `tensor.yield`, which ends `tensor.generate` and `tensor.pad`
regions.

Tensors have value semantics: `tensor.insert` makes a new tensor, so the interpreter copies
before writing (an argument's array may be the caller's own). An index out of bounds is
undefined in MLIR and an interpreter error here.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.builder import Builder
from irkit.ir import Block, Region, Value
from irkit.opdef import (
    AnyType, HasParent, Index, Op, Operand, Pure, RegionDef, Result, ReturnLike,
    SingleBlock, Terminator, VarOperand,
)
from irkit.types import FloatType, INDEX, IndexType, IntegerType, RankedTensorType
from irkit.dialects.arith import fold as af
from irkit.dialects.tensor import tensor
from irkit.dialects.tensor.shape import CastOp
from irkit.dialects.tensor.base import (
    RankedTensor, StaticTensor, dtype_of, element_value, fail, mixed_shape, parse_index_refs,
    parse_tensor_type, resolve_indices, shape_text,
)

# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


def _checked_index(op, array: np.ndarray, indices) -> tuple:
    idx = tuple(int(i) for i in indices)
    if any(not 0 <= i < d for i, d in zip(idx, array.shape)):
        raise fail(op, f"index {shape_text(idx)} is out of bounds for a tensor of shape "
                       f"{shape_text(array.shape)}")
    return idx


def _constant_indices(operands) -> list[int] | None:
    if any(a is None for a in operands):
        return None
    return [a.value for a in operands]


def _row_major(idx: Sequence[int], shape: Sequence[int]) -> int:
    """The position of element `idx` in a row-major list of a tensor of `shape`."""
    k = 0
    for i, d in zip(idx, shape):
        k = k * d + i
    return k


def _print_indices(p, values) -> str:
    return "[" + ", ".join(map(p.value, values)) + "]"


# ---------------------------------------------------------------------------------------------
# tensor.extract
# ---------------------------------------------------------------------------------------------


@tensor.op
class ExtractOp(Op):
    """The element of a ranked tensor at the given indices, one `index` per dimension. Inside
    a `linalg.generic` body this is how a gather reads its table.

        %x = tensor.extract %t[%i, %j] : tensor<?x784xf32>

    Folds: of a constant (any indices for a splat, constant in-bounds indices otherwise); of
    `tensor.from_elements` at constant indices, to that element; through `tensor.cast`
    (in place, reading the cast's ranked source).
    """

    name = "tensor.extract"
    tensor = Operand(RankedTensor)
    indices = VarOperand(Index)
    result = Result(AnyType)
    traits = (Pure(),)

    def infer_result_types(self):
        return [self.tensor.type.element]

    def verify_(self):
        t = self.tensor.type
        if self.result.type is not t.element:
            raise self.error("failed to verify that result type matches element type of tensor")
        if len(self.indices) != t.rank:
            raise self.error("incorrect number of indices for extract_element")

    def fold(self, operands):
        t = self.tensor.type
        if len(self.indices) != t.rank:
            return None
        source, idx = operands[0], _constant_indices(operands[1:])
        if isinstance(source, DenseElementsAttr):
            if source.is_splat:
                folded = af.value_to_attr(source.splat_value(), t.element)
                return None if folded is None else [folded]
            if idx is None or any(not 0 <= i < d for i, d in zip(idx, t.shape)):
                return None
            folded = af.value_to_attr(source.array[tuple(idx)], t.element)
            return None if folded is None else [folded]
        owner = getattr(self.tensor, "owner", None)
        if isinstance(owner, FromElementsOp) and idx is not None:
            if any(not 0 <= i < d for i, d in zip(idx, t.shape)):
                return None
            return [owner.elements[_row_major(idx, t.shape)]]
        if isinstance(owner, CastOp) and isinstance(owner.source.type, RankedTensorType):
            self.tensor = owner.source
            return [self.result]
        return None

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        refs = parse_index_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(src, t), resolve_indices(p, refs), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.tensor)}{_print_indices(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.tensor.type}")

    def evaluate(self, array, *indices):
        return element_value(array[_checked_index(self, array, indices)], self.result.type)


# ---------------------------------------------------------------------------------------------
# tensor.insert
# ---------------------------------------------------------------------------------------------


@tensor.op
class InsertOp(Op):
    """A copy of `dest` with the element at the given indices replaced by `scalar`.

        %r = tensor.insert %x into %t[%i, %j] : tensor<?x784xf32>

    Folds: inserting into a splat constant the value it already holds gives `dest`.
    """

    name = "tensor.insert"
    scalar = Operand(AnyType)
    dest = Operand(RankedTensor)
    indices = VarOperand(Index)
    result = Result(RankedTensor)
    traits = (Pure(),)

    def infer_result_types(self):
        return [self.dest.type]

    def verify_(self):
        t = self.dest.type
        if self.scalar.type is not t.element:
            raise self.error("failed to verify that scalar type matches element type of dest")
        if self.result.type is not t:
            raise self.error("failed to verify that result type matches type of dest")
        if len(self.indices) != t.rank:
            raise self.error("incorrect number of indices")

    def tied_init(self, result: Value) -> Value:
        """The destination whose shape the result has (destination-passing style)."""
        return self.dest

    def fold(self, operands):
        scalar, dest = operands[0], operands[1]
        if isinstance(dest, DenseElementsAttr) and dest.is_splat and scalar is not None:
            value = af.attr_to_value(scalar)
            if value is not None and af.value_to_attr(value, self.dest.type.element) == \
                    af.value_to_attr(dest.splat_value(), self.dest.type.element):
                return [self.dest]
        return None

    @classmethod
    def parse(cls, p, num_results):
        scalar = p.parse_operand_ref()
        p.expect("into")
        dest = p.parse_operand_ref()
        refs = parse_index_refs(p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(scalar, t.element), p.resolve(dest, t),
                         resolve_indices(p, refs), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.scalar)} into {p.value(self.dest)}"
                f"{_print_indices(p, self.indices)}")
        p.attr_dict(self)
        p.write(f" : {self.dest.type}")

    def evaluate(self, scalar, dest, *indices):
        out = np.array(dest, copy=True)
        out[_checked_index(self, dest, indices)] = scalar
        return out


# ---------------------------------------------------------------------------------------------
# tensor.from_elements
# ---------------------------------------------------------------------------------------------


@tensor.op
class FromElementsOp(Op):
    """A statically shaped tensor holding the operands in row-major order (one operand for
    a 0-d tensor, none for an empty one).

        %t = tensor.from_elements %a, %b, %c, %d : tensor<2x2xf32>

    Folds: all operands constant, to a dense constant.
    """

    name = "tensor.from_elements"
    elements = VarOperand(AnyType)
    result = Result(StaticTensor)
    traits = (Pure(),)

    def verify_(self):
        t = self.result.type
        n = len(self.elements)
        if n != t.num_elements:
            raise self.error(f"failed to verify that operand types match result element type "
                             f"({n} operands for {t.num_elements} elements of {t})")
        if any(v.type is not t.element for v in self.elements):
            raise self.error("failed to verify that operand types match result element type")

    def fold(self, operands):
        t = self.result.type
        if not isinstance(t.element, (IntegerType, IndexType, FloatType)):
            return None
        values = [None if a is None else af.attr_to_value(a) for a in operands]
        if any(v is None for v in values):
            return None
        return [DenseElementsAttr(t, np.array(values, dtype_of(t.element)).reshape(t.shape))]

    @classmethod
    def parse(cls, p, num_results):
        refs = p.parse_operand_refs() if p.tok.startswith("%") else []
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        tk = p.i
        t = parse_tensor_type(p)
        if not t.has_static_shape:
            raise p.error(f"expected a statically shaped tensor type, got '{t}'", tk)
        if len(refs) != t.num_elements:
            raise p.error(f"{len(refs)} operands present, but expected {t.num_elements}", tk)
        return cls.build([p.resolve(r, t.element) for r in refs], result_types=[t],
                         attributes=attrs)

    def print(self, p):
        if self.elements:
            p.write(" " + ", ".join(map(p.value, self.elements)))
        p.attr_dict(self)
        p.write(f" : {self.result.type}")

    def evaluate(self, *elements):
        t = self.result.type
        return np.array(elements, dtype_of(t.element)).reshape(t.shape)


# ---------------------------------------------------------------------------------------------
# tensor.splat
# ---------------------------------------------------------------------------------------------

@tensor.op
class SplatOp(Op):
    """A tensor with `input` in every element, one `index` operand per `?` size.

        %t = tensor.splat %x[%n] : tensor<?x8xf32>

    Folds: a constant input and a static shape, to a splat constant.
    """

    name = "tensor.splat"
    input = Operand(AnyType)
    dynamic_sizes = VarOperand(Index, doc="one size per dynamic dimension, in order")
    aggregate = Result(RankedTensor)
    traits = (Pure(),)

    def verify_(self):
        t = self.aggregate.type
        if self.input.type is not t.element:
            raise self.error("failed to verify that operand type matches element type of "
                             "result")
        want, got = t.shape.count(None), len(self.dynamic_sizes)
        if want != got:
            raise self.error(f"incorrect number of dynamic sizes, has {got}, expected {want}")

    def fold(self, operands):
        t = self.aggregate.type
        value = af.attr_to_value(operands[0]) if operands[0] is not None else None
        if value is None or not t.has_static_shape:
            return None
        return [DenseElementsAttr(t, np.full(t.shape, value, dtype_of(t.element)))]

    @classmethod
    def parse(cls, p, num_results):
        value = p.parse_operand_ref()
        refs = parse_index_refs(p) if p.tok == "[" else []
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(value, t.element), resolve_indices(p, refs),
                         result_types=[t], attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.input)}")
        if self.dynamic_sizes:
            p.write(_print_indices(p, self.dynamic_sizes))
        p.attr_dict(self)
        p.write(f" : {self.aggregate.type}")

    def evaluate(self, value, *sizes):
        t = self.aggregate.type
        shape = tuple(int(d) for d in mixed_shape(t, sizes))
        if any(d < 0 for d in shape):
            raise fail(self, f"cannot make a tensor of negative size {shape_text(shape)}")
        return np.full(shape, value, dtype_of(t.element))


# ---------------------------------------------------------------------------------------------
# tensor.generate and tensor.yield
# ---------------------------------------------------------------------------------------------


def _yield_of(region: Region):
    """The `tensor.yield` ending `region`'s block, or None (the verifier reports a missing or
    wrong terminator at the op that is there)."""
    block = region.blocks[0] if region.blocks else None
    last = block.last if block is not None else None
    return last if isinstance(last, YieldOp) else None


@tensor.op
class GenerateOp(Op):
    """A tensor whose every element is computed by the body from its indices (one `index`
    block argument per dimension); the body ends with `tensor.yield` of the element. One
    `index` operand per `?` size.

        %t = tensor.generate %n {
        ^bb0(%i: index, %j: index):
          %v = arith.addi %i, %j : index
          tensor.yield %v : index
        } : tensor<?x3xindex>
    """

    name = "tensor.generate"
    dynamic_extents = VarOperand(Index, doc="one size per dynamic dimension, in order")
    result = Result(RankedTensor)
    body = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())

    def verify_(self):
        t = self.result.type
        want, got = t.shape.count(None), len(self.dynamic_extents)
        if want != got:
            raise self.error(f"incorrect number of dynamic sizes, has {got}, expected {want}")
        if not self.body.blocks:
            raise self.error("expects a body region with one block")
        args = self.body.blocks[0].args
        if len(args) != t.rank:
            raise self.error("must have one body argument per input dimension")
        if any(not isinstance(a.type, IndexType) for a in args):
            raise self.error("all body arguments must be index")
        y = _yield_of(self.body)
        if y is not None and y.value.type is not t.element:
            raise self.error("body must be terminated with a `yield` operation of the tensor "
                             "element type")

    def result_dim(self, axis: int) -> Value | None:
        t = self.result.type
        if t.shape[axis] is not None:
            return None
        return self.dynamic_extents[t.shape[:axis].count(None)]

    @classmethod
    def parse(cls, p, num_results):
        refs = p.parse_operand_refs() if p.tok.startswith("%") else []
        region = p.parse_region()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = parse_tensor_type(p)
        return cls.build(resolve_indices(p, refs), result_types=[t], attributes=attrs,
                         regions=[region])

    def print(self, p):
        if self.dynamic_extents:
            p.write(" " + ", ".join(map(p.value, self.dynamic_extents)))
        p.write(" ")
        p.region(self.body)
        p.attr_dict(self)
        p.write(f" : {self.result.type}")

    def interpret(self, interp, values):
        t = self.result.type
        shape = tuple(int(d) for d in mixed_shape(t, values))
        if any(d < 0 for d in shape):
            raise fail(self, f"cannot make a tensor of negative size {shape_text(shape)}")
        out = np.empty(shape, dtype_of(t.element))
        env = interp.env
        for idx in np.ndindex(*shape):
            (out[idx],) = interp.run_region(self.body, list(idx), env)
        return [out]


@tensor.op
class YieldOp(Op):
    """Ends the body of `tensor.generate` or `tensor.pad`, giving the element's value.

        %t = tensor.generate {
        ^bb0(%i: index):
          tensor.yield %x : f32
        } : tensor<4xf32>
    """

    name = "tensor.yield"
    value = Operand(AnyType)
    traits = (Pure(), Terminator(), ReturnLike(), HasParent("tensor.generate", "tensor.pad"))

    def infer_result_types(self):
        return []

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        return cls.build(p.resolve(ref, p.parse_type()), attributes=attrs)

    def print(self, p):
        p.write(f" {p.value(self.value)}")
        p.attr_dict(self)
        p.write(f" : {self.value.type}")

    def interpret(self, interp, values):
        from irkit.interpreter import Return
        return Return(values)


# ---------------------------------------------------------------------------------------------
# Builders for passes
# ---------------------------------------------------------------------------------------------


def extract(builder: Builder, source: Value, indices: Sequence[Value]) -> Value:
    """`tensor.extract source[indices]`: one scalar."""
    return builder.create(ExtractOp, source, list(indices)).result


def insert(builder: Builder, scalar: Value, dest: Value, indices: Sequence[Value]) -> Value:
    """`tensor.insert scalar into dest[indices]`: the updated tensor."""
    return builder.create(InsertOp, scalar, dest, list(indices)).result


def from_elements(builder: Builder, elements: Sequence[Value], type: RankedTensorType) -> Value:
    """A static tensor of `type` holding `elements` in row-major order."""
    return builder.create(FromElementsOp, list(elements), result_types=[type]).result


def splat(builder: Builder, value: Value, type: RankedTensorType,
          dynamic_sizes: Sequence[Value] = ()) -> Value:
    """`value` in every element of a tensor of `type`."""
    return builder.create(SplatOp, value, list(dynamic_sizes), result_types=[type]).result


def generate(builder: Builder, type: RankedTensorType, dynamic_extents: Sequence[Value],
             body: Callable[[Builder, list[Value]], Value]) -> Value:
    """`tensor.generate`: `body(b, indices)` builds the element's computation with builder
    `b` (at the end of the new block) and returns the value to yield."""
    op = builder.create(GenerateOp, list(dynamic_extents), result_types=[type], regions=1)
    block = op.body.add_block(Block([INDEX] * type.rank))
    inner = Builder.at_end(block)
    inner.location = builder.location
    inner.create(YieldOp, body(inner, list(block.args)))
    return op.result

