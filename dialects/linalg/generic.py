"""`linalg.generic`, its terminator `linalg.yield`, `linalg.index`, and the builders passes use.

`linalg.generic` states everything about a loop nest explicitly: the maps, the iterator
types, the operands and the scalar body. Every named op can be rewritten into one
(`generalize`), which is how the generalization pass and the loop emitter see all ops alike.

Builders (a `Builder` `b` positioned where the op goes):

- `make_generic(b, inputs, outputs, maps, iterators, body, location=None)`: `body(bb, args)`
  builds the scalar body at builder `bb` from the block arguments (one per operand) and
  returns the values to yield; the results are the tensor outputs' types;
- `build_body(op, body)`: the same for an op already made (named ops build theirs so);
- `generalize(op, b)`: the `linalg.generic` equal to structured op `op`, inserted at `b`.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr, IntegerAttr, StringAttr, format_attr_entry
from irkit.builder import Builder
from irkit.ir import Block
from irkit.opdef import (
    AnyType, Index, Op, OptProp, Prop, Pure, ReturnLike, StrAttr, Terminator, VarOperand,
    Result, attr_constraint,
)
from irkit.structured import YieldLike
from irkit.types import I64, INDEX, IndexType

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.structured import (
    Destination, IndexingMaps, IteratorTypes, LoopIndex, StructuredOp, iterator_names,
    iterator_types_attr, maps_attr, parse_operand_group, parse_result_arrow,
    print_operand_group, print_result_arrow, scalar_type, split_attributes,
)


@linalg.op
class GenericOp(StructuredOp):
    """A loop nest over its operands, spelled out: one affine map per operand from the loop
    indices to the operand's indices, one iterator type per loop, and a scalar body that
    takes one element per operand and yields the new value of each output element.

        %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                              affine_map<(d0, d1) -> (d0)>],
                             iterator_types = ["parallel", "reduction"]}
            ins(%m : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
        ^bb0(%x: f32, %sum: f32):
          %s = arith.addf %x, %sum : f32
          linalg.yield %s : f32
        } -> tensor<4xf32>

    On memrefs (`outs(%b : memref<...>)`) it has no results and writes `%b` in place.
    `doc` and `library_call` are free-form strings; other attributes go in `attrs = {...}`.
    """

    name = "linalg.generic"
    inputs = VarOperand(AnyType, doc="read: tensors, memrefs or scalars")
    outputs = VarOperand(Destination, doc="written: one result per tensor")
    indexing_maps = Prop(IndexingMaps, doc="one map per operand, inputs then outputs")
    iterator_types = Prop(IteratorTypes, doc="one per loop")
    doc = OptProp(StrAttr)
    library_call = OptProp(StrAttr)

    def indexing_maps_list(self):
        return [m.value for m in self.indexing_maps]

    def iterator_types_list(self):
        return iterator_names(self.iterator_types)

    def generalize(self, builder) -> "GenericOp":
        """Already generic: itself."""
        return self

    def interpret(self, interp, values):
        # Imported when run: loading the dialect (to parse or print) needs no numpy.
        from irkit.dialects.linalg.semantics import run
        return run(self, interp, values)

    # ----- custom assembly ----------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        entries = p.parse_attr_dict_body()
        tk = p.i                            # MLIR reports a bad iterator type after the dict
        iterators = entries.get("iterator_types")
        if isinstance(iterators, ArrayAttr):
            names = []
            for a in iterators:
                if not (isinstance(a, StringAttr) and a.value in ("parallel", "reduction")):
                    text = a.value if isinstance(a, StringAttr) else a.format()
                    raise p.error(f"unexpected iterator_type ({text})", tk)
                names.append(a.value)
            entries["iterator_types"] = iterator_types_attr(names)
        props, attrs = split_attributes(cls, entries)
        inputs = parse_operand_group(p, "ins")
        outputs = parse_operand_group(p, "outs")
        if p.accept("attrs"):
            p.expect("=")
            attrs.update(p.parse_attr_dict_body())
        region = p.parse_region()
        types = parse_result_arrow(p)
        return cls.build(inputs, outputs, result_types=types, attributes=attrs,
                         regions=[region], **props)

    def print(self, p):
        entries = {k: v for k, v in self.properties.items() if k != "operandSegmentSizes"}
        if isinstance(entries.get("iterator_types"), ArrayAttr) and \
                IteratorTypes(entries["iterator_types"]):
            entries["iterator_types"] = ArrayAttr(
                [StringAttr(n) for n in iterator_names(entries["iterator_types"])])
        p.write(" {" + ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items()))
                + "}")
        print_operand_group(p, "ins", self.inputs)
        print_operand_group(p, "outs", self.outputs)
        if self.attributes:
            p.write(" attrs =")
            p.attr_dict(self, elided=self.spec.prop_names)
        p.write(" ")
        p.region(self.regions[0])
        print_result_arrow(p, self.result_types)


@linalg.op
class YieldOp(YieldLike, Op):
    """Ends the body of a structured op with the new value of each output element (an
    element type each, one per output).

        linalg.yield %a, %b : f32, i32
    """

    name = "linalg.yield"
    values_ = VarOperand(AnyType)
    traits = (Pure(), Terminator(), ReturnLike())

    def verify_(self):
        parent = self.parent_op
        if not isinstance(parent, StructuredOp):
            raise self.error("expected parent op with LinalgOp interface")
        outputs = parent.outputs
        values = self.operands
        if len(values) != len(outputs):
            raise self.error(f"expected number of yield values ({len(values)}) to match the "
                             f"number of inits / outs operands of the enclosing LinalgOp "
                             f"({len(outputs)})")
        for i, (v, o) in enumerate(zip(values, outputs)):
            want = scalar_type(o.type)
            if v.type is not want:
                raise self.error(f"type of yield operand {i + 1} ('{v.type}') doesn't match "
                                 f"the element type of the enclosing linalg.generic op "
                                 f"('{want}')")


NonNegativeI64 = attr_constraint(
    IntegerAttr, "64-bit signless integer attribute whose minimum value is 0",
    lambda a: str(a.type) == "i64" and a.value >= 0)


@linalg.op
class IndexOp(Op):
    """The index of loop `dim` at the point the enclosing structured op's body runs for.

        %i = linalg.index 0 : index
    """

    name = "linalg.index"
    dim = Prop(NonNegativeI64)
    result = Result(Index)
    traits = (Pure(), LoopIndex())

    def infer_result_types(self):
        return [INDEX]

    def structured_parent(self) -> StructuredOp | None:
        """The innermost enclosing structured op, whose loops `dim` counts."""
        op = self.parent_op
        while op is not None and not isinstance(op, StructuredOp):
            op = op.parent_op
        return op

    def verify_(self):
        parent = self.structured_parent()
        if parent is None:
            raise self.error("expected parent op with LinalgOp interface")
        d, n = self.dim.value, parent.num_loops
        if d >= n:
            raise self.error(f"expected dim ({d}) to be lower than the number of loops ({n}) "
                             "of the enclosing LinalgOp")

    @classmethod
    def parse(cls, p, num_results):
        tk = p.i
        t = p.next()
        if not t.isdigit():
            raise p.error("expected a non-negative integer loop index", tk)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        tk = p.i
        if not isinstance(p.parse_type(), IndexType):
            raise p.error("expected 'index'", tk)
        return cls.build(dim=IntegerAttr(int(t), I64), attributes=attrs)

    def print(self, p):
        p.write(f" {self.dim.value}")
        p.attr_dict(self, elided=("dim",))
        p.write(" : index")

    def interpret(self, interp, values):
        from irkit.dialects.linalg.semantics import LOOP_INDICES
        return [interp.state[LOOP_INDICES][self.structured_parent()][self.dim.value]]


# ---------------------------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------------------------


def build_body(op: StructuredOp, body, location=None) -> Block:
    """Give `op` (made with one empty region) its payload block: one argument per operand,
    the ops `body(builder, args)` creates, and a `linalg.yield` of the values it returns;
    at `location` (by default the op's)."""
    block = Block([scalar_type(v.type) for v in op.structured_operands()])
    op.regions[0].add_block(block)
    b = Builder.at_end(block)
    b.location = location or op.location
    values = body(b, list(block.args))
    b.create(YieldOp, list(values), result_types=[])
    return block


def make_generic(builder: Builder, inputs, outputs, maps, iterators, body,
                 location=None, *, doc: str | None = None, library_call: str | None = None,
                 attributes: dict | None = None) -> GenericOp:
    """Create a `linalg.generic` at `builder`.

    `maps`: one `AffineMap` per operand (inputs then outputs); `iterators`: "parallel" or
    "reduction" per loop; `body(b, args) -> list[Value]` builds the scalar body at `b` from
    the block arguments and returns the values to yield (one per output). The results are
    the tensor outputs' types (none for memref outputs).
    """
    op = GenericOp.build(
        list(inputs), list(outputs), location=location or builder.location,
        attributes=attributes, regions=1, indexing_maps=maps_attr(maps),
        iterator_types=iterator_types_attr(iterators),
        doc=StringAttr(doc) if doc is not None else None,
        library_call=StringAttr(library_call) if library_call is not None else None)
    build_body(op, body)
    return builder.insert(op)


def generalize(op: StructuredOp, builder: Builder) -> GenericOp:
    """The `linalg.generic` that computes what structured op `op` computes: its maps and
    iterator types, and a copy of its body (a named op's body is the one its class builds,
    so there is one description of it). Inserted at `builder`; `op` is left alone, and
    its discardable attributes are not carried over (as MLIR's generalization). A generic
    op is returned as it is."""
    if isinstance(op, GenericOp):
        return op
    new = GenericOp.build(list(op.inputs), list(op.outputs), result_types=op.result_types,
                          location=op.location, regions=1,
                          indexing_maps=maps_attr(op.indexing_maps_list()),
                          iterator_types=iterator_types_attr(op.iterator_types_list()))
    op.regions[0].clone_into(new.regions[0], {})
    return builder.insert(new)
