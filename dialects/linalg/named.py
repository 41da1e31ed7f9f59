"""The named structured ops' bases and `linalg.fill`, `linalg.transpose`, `linalg.broadcast`;
`map_reduce.py`, `contraction.py`, `convolution.py` and `elementwise.py` build on the bases.

A named op (`NamedOp`) is a `linalg.generic` whose maps and iterators follow from its
operands and attributes; it generalizes to that generic op and runs as it. Most have a body
of their own (`FixedBodyOp`), which the op describes once, in `region_builder`: `create`
builds the op with that body, the custom parser too, and the custom form leaves the body out
(the generic form shows it, as MLIR's does). `linalg.map` and `linalg.reduce` take their
body from their user.

`cast(b, value, to)` converts a body value to another scalar type the way MLIR's named ops
do (`cast_signed`: sign-extending integers, `sitofp`, ...; `cast_unsigned` with `unsigned`).
"""

from __future__ import annotations

from irkit.attributes import DenseArrayAttr
from irkit.ir import Value
from irkit.opdef import AnyType, DenseI64Array, Operand, Prop, VarOperand
from irkit.types import I64, FloatType, IndexType, IntegerType, ShapedType, Type

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.generic import GenericOp, build_body, generalize
from irkit.dialects.linalg.structured import (
    PARALLEL, Destination, StructuredOp, affine_map, dim, i64_list_text,
    parse_operand_group, parse_result_arrow, print_operand_group,
    print_result_arrow, scalar_type, split_attributes,
)


def cast(b, value: Value, to: Type, unsigned: bool = False) -> Value:
    """`value` as a `to` scalar (MLIR's `TypeFn::cast_signed` / `cast_unsigned`)."""
    from irkit.dialects import arith
    src = value.type
    if src is to:
        return value
    if isinstance(src, FloatType) and isinstance(to, FloatType):
        cls = arith.ExtFOp if src.width < to.width else arith.TruncFOp
    elif isinstance(src, IntegerType) and isinstance(to, IntegerType):
        cls = (arith.ExtUIOp if unsigned else arith.ExtSIOp) if src.width < to.width \
            else arith.TruncIOp
    elif isinstance(src, IntegerType) and isinstance(to, FloatType):
        cls = arith.UIToFPOp if unsigned else arith.SIToFPOp
    elif isinstance(src, FloatType) and isinstance(to, IntegerType):
        cls = arith.FPToUIOp if unsigned else arith.FPToSIOp
    elif isinstance(src, IndexType) or isinstance(to, IndexType):
        cls = arith.IndexCastUIOp if unsigned else arith.IndexCastOp
    else:
        raise TypeError(f"no cast from {src} to {to}")
    return b.create(cls, value, result_types=[to]).result


def _inputs(n: int) -> str:
    return f"{n} input{'s' if n != 1 else ''}"


def rank_of(v: Value) -> int:
    """The rank of a shaped value; 0 for a scalar."""
    return v.type.rank if isinstance(v.type, ShapedType) else 0


# ---------------------------------------------------------------------------------------------
# Bases
# ---------------------------------------------------------------------------------------------


class NamedOp(StructuredOp):
    """A structured op with a name of its own (every linalg op but `linalg.generic`)."""

    __slots__ = ()

    def generalize(self, builder) -> GenericOp:
        """This op as a `linalg.generic` inserted at `builder` (see `generic.generalize`)."""
        return generalize(self, builder)

    def interpret(self, interp, values):
        # Imported when run: loading the dialect (to parse or print) needs no numpy.
        from irkit.dialects.linalg.semantics import run
        return run(self, interp, values)


class FixedBodyOp(NamedOp):
    """A named op with a body of its own: `region_builder` is its one description."""

    __slots__ = ()

    def region_builder(self, b, args: list[Value]) -> list[Value]:
        """Build the scalar body at `b` from the block arguments; return the values to
        yield. (Generalization copies the body this built.)"""
        raise NotImplementedError

    @classmethod
    def create(cls, *operand_groups, location=None, attributes: dict | None = None,
               **props) -> "NamedOp":
        """The op on these operands (positional groups as `build` takes them) with its
        body; results inferred (one per tensor output). Not inserted anywhere."""
        op = cls.build(*operand_groups, location=location, attributes=attributes, regions=1,
                       **props)
        build_body(op, op.region_builder)
        return op


class DPSNamedOp(FixedBodyOp):
    """Named ops with MLIR's common form (fill, matmul, convolutions, elementwise):

        %r = linalg.op [indexing_maps = [...]] {attrs} ins(%a, %b : A, B) outs(%c : C) -> C

    `num_inputs` inputs and one output; the body has one argument per operand."""

    __slots__ = ()
    inputs = VarOperand(AnyType)
    outputs = VarOperand(Destination)
    num_inputs = 2
    #: properties printed as `name = value` before the attribute dict (matmul's maps)
    keyword_props: tuple = ()
    #: properties and attributes never printed in the custom form
    hidden: tuple = ("operandSegmentSizes",)

    def default_props(self) -> dict:
        """Properties equal to these are left out of the custom form."""
        return {}

    def verify_counts(self) -> None:
        if len(self.inputs) != self.num_inputs or len(self.outputs) != 1:
            raise self.error(f"expected op with {_inputs(self.num_inputs)} and 1 output, but "
                             f"got {len(self.inputs)} and {len(self.outputs)}")

    def verify_(self):
        self.verify_counts()
        self.verify_structured()

    @classmethod
    def parse(cls, p, num_results):
        # The body's ops are located at the op's name (the op itself gets its usual place).
        loc = p.location_at(p.i - 1)
        props = {}
        for key in cls.keyword_props:
            if p.accept(key):
                p.expect("=")
                props[key] = p.parse_attribute()
        more, attrs = split_attributes(cls, p.parse_optional_attr_dict())
        props.update(more)
        tk = p.i
        inputs = parse_operand_group(p, "ins")
        outputs = parse_operand_group(p, "outs")
        if len(inputs) != cls.num_inputs or len(outputs) != 1:
            raise p.error(f"'{cls.name}' expects {_inputs(cls.num_inputs)} and 1 output, got "
                          f"{len(inputs)} and {len(outputs)}", tk)
        types = parse_result_arrow(p)
        op = cls.build(inputs, outputs, result_types=types, attributes=attrs, regions=1,
                       **props)
        build_body(op, op.region_builder, loc)
        return op

    def print(self, p):
        defaults = self.default_props()
        for key in self.keyword_props:
            value = self.properties.get(key)
            if value is not None and value != defaults.get(key):
                p.write(f" {key} = {value.format()}")
        elided = [*self.hidden, *self.keyword_props]
        elided += [k for k, v in defaults.items() if self.properties.get(k) == v]
        p.attr_dict(self, elided=elided)
        print_operand_group(p, "ins", self.inputs)
        print_operand_group(p, "outs", self.outputs)
        print_result_arrow(p, self.result_types)


# ---------------------------------------------------------------------------------------------
# linalg.fill
# ---------------------------------------------------------------------------------------------


@linalg.op
class FillOp(DPSNamedOp):
    """Every element of the output := the scalar value.

        %r = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
    """

    name = "linalg.fill"
    num_inputs = 1

    def indexing_maps_list(self):
        n = rank_of(self.outputs[0])
        return [affine_map(n, ()), affine_map(n, [dim(i) for i in range(n)])]

    def iterator_types_list(self):
        return [PARALLEL] * rank_of(self.outputs[0])

    def region_builder(self, b, args):
        return [args[0]]

    def verify_(self):
        self.verify_counts()
        value, out = self.inputs[0].type, scalar_type(self.outputs[0].type)
        if value is not out:
            raise self.error(f"expected fill value type ('{value}') to match output element "
                             f"type ('{out}')")
        self.verify_structured()


# ---------------------------------------------------------------------------------------------
# linalg.transpose and linalg.broadcast
# ---------------------------------------------------------------------------------------------


class _CopyLike(FixedBodyOp):
    """One input copied into the output through a permutation or a broadcast:
    `linalg.op ins(%a : A) outs(%b : B) <key> = [...] {attrs}`; the body yields the input."""

    __slots__ = ()
    input = Operand(Destination)
    init = Operand(Destination)
    key = ""

    @property
    def inputs(self) -> list[Value]:
        return [self.input]

    @property
    def outputs(self) -> list[Value]:
        return [self.init]

    def iterator_types_list(self):
        return [PARALLEL] * rank_of(self.init)

    def region_builder(self, b, args):
        return [args[0]]

    @classmethod
    def parse(cls, p, num_results):
        loc = p.location_at(p.i - 1)
        tk = p.i
        inputs = parse_operand_group(p, "ins")
        outputs = parse_operand_group(p, "outs")
        if len(inputs) != 1 or len(outputs) != 1:
            raise p.error(f"'{cls.name}' expects one input and one init", tk)
        p.expect(cls.key)
        p.expect("=")
        values = p.parse_i64_list()
        attrs = p.parse_optional_attr_dict()
        op = cls.build(inputs[0], outputs[0], attributes=attrs, regions=1,
                       **{cls.key: values})
        build_body(op, op.region_builder, loc)
        return op

    def print(self, p):
        print_operand_group(p, "ins", self.inputs)
        print_operand_group(p, "outs", self.outputs)
        p.write(f" {self.key} = {i64_list_text(self.properties[self.key])}")
        p.attr_dict(self, elided=(self.key,))


def mlir_size(d: int | None) -> int:
    """A size as MLIR's messages print it: `?` is ShapedType::kDynamic, the least int64."""
    return -(1 << 63) if d is None else d


@linalg.op
class TransposeOp(_CopyLike):
    """The input with its dimensions permuted: `dim(init, i) = dim(input, permutation[i])`,
    `init[i0, ..] = input[..]` with input index `permutation[k]` being `ik`.

        %t = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%init : tensor<8x4xf32>)
                              permutation = [1, 0]
    """

    name = "linalg.transpose"
    permutation = Prop(DenseI64Array)
    key = "permutation"

    def indexing_maps_list(self):
        perm = list(self.permutation)
        inverse = [0] * len(perm)
        for i, k in enumerate(perm):
            inverse[k] = i
        n = len(perm)
        return [affine_map(n, [dim(i) for i in inverse]),
                affine_map(n, [dim(i) for i in range(n)])]

    def verify_(self):
        perm = list(self.permutation)
        if sorted(perm) != list(range(len(perm))):
            raise self.error("permutation is not valid")
        a, b = self.input.type, self.init.type
        if len(perm) != a.rank:
            raise self.error(f"size of permutation {len(perm)} does not match the argument "
                             f"rank {a.rank}")
        if a.rank != b.rank:
            raise self.error(f"input rank {a.rank} does not match init rank {b.rank}")
        for i, k in enumerate(perm):
            if a.shape[k] != b.shape[i]:        # `?` matches only `?`, as in MLIR
                raise self.error(f"dim(result, {i}) = {mlir_size(b.shape[i])} doesn't match "
                                 f"dim(input, permutation[{i}]) = {mlir_size(a.shape[k])}")
        self.verify_structured()


@linalg.op
class BroadcastOp(_CopyLike):
    """The input repeated along the init's dimensions listed in `dimensions` (those the
    input lacks): `init[..] = input[the other indices]`.

        %b = linalg.broadcast ins(%v : tensor<4xf32>) outs(%init : tensor<4x8xf32>)
                              dimensions = [1]
    """

    name = "linalg.broadcast"
    dimensions = Prop(DenseI64Array)
    key = "dimensions"

    def indexing_maps_list(self):
        n = rank_of(self.init)
        added = set(self.dimensions)
        return [affine_map(n, [dim(i) for i in range(n) if i not in added]),
                affine_map(n, [dim(i) for i in range(n)])]

    def verify_(self):
        dims = list(self.dimensions)
        a, b = self.input.type, self.init.type
        if a.rank + len(dims) != b.rank:
            raise self.error(f"input rank plus added dimensions does not match init rank. "
                             f"input rank: {a.rank}, dimensions size: {len(dims)}, init rank: "
                             f"{b.rank}")
        for i, d in enumerate(dims):
            if not 0 <= d < b.rank:
                raise self.error(f"dimension {i} is out of range. expected range: [0, "
                                 f"{b.rank - 1}], got: {d}")
        if len(set(dims)) != len(dims):
            raise self.error("dimensions must be unique")
        kept = [i for i in range(b.rank) if i not in set(dims)]
        for i, j in enumerate(kept):
            if a.shape[i] != b.shape[j]:        # `?` matches only `?`, as in MLIR
                raise self.error(f"input dim {i} should match init dim {j}. input: "
                                 f"{mlir_size(a.shape[i])}, init: {mlir_size(b.shape[j])}")
        self.verify_structured()


# ---------------------------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------------------------


def make_fill(b, value: Value, output: Value, location=None) -> FillOp:
    """`linalg.fill` of scalar `value` into `output`, inserted at builder `b`."""
    return b.insert(FillOp.create([value], [output], location=location or b.location))


def make_transpose(b, input: Value, init: Value, permutation, location=None) -> TransposeOp:
    return b.insert(TransposeOp.create(input, init, location=location or b.location,
                                       permutation=DenseArrayAttr(I64, permutation)))


def make_broadcast(b, input: Value, init: Value, dimensions, location=None) -> BroadcastOp:
    return b.insert(BroadcastOp.create(input, init, location=location or b.location,
                                       dimensions=DenseArrayAttr(I64, dimensions)))

