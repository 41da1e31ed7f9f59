"""`linalg.map` and `linalg.reduce`: structured ops whose body comes from their user.

The body is written in full after the operands, `(%a: f32, ...) { ... }`, or, when it is a
single op on the arguments whose result is yielded, in MLIR's short form
`linalg.map { arith.addf } ins(...) outs(...)` (for `linalg.reduce` the op takes the init,
then the input: `{ arith.addf }` stands for `addf(%init, %in)`). The short form's op prints
its attributes except a default `fastmath`, as MLIR prints it.
"""

from __future__ import annotations

from irkit.attributes import DenseArrayAttr, format_attr_entry
from irkit.ir import Block, Operation, Value
from irkit.opdef import DenseI64Array, Operand, Prop, VarOperand, lookup_op
from irkit.types import I64

from irkit.dialects.linalg import linalg
from irkit.dialects.linalg.generic import YieldOp, build_body
from irkit.dialects.linalg.named import NamedOp, rank_of
from irkit.dialects.linalg.structured import (
    PARALLEL, REDUCTION, Destination, affine_map, dim, i64_list_text,
    parse_operand_group, print_operand_group,
    print_region_with_arguments, scalar_type, split_attributes,
)


# ---------------------------------------------------------------------------------------------
# The short form
# ---------------------------------------------------------------------------------------------


def _payload(op, init_first: bool):
    """The one op of `op`'s body when the short form `{ op-name attrs }` can stand for it
    (MLIR's rule): a registered op without regions, whose operands are the input arguments
    in order (`linalg.reduce`: the init, then the input) and whose one result is yielded."""
    blocks = op.regions[0].blocks
    if len(blocks) != 1:
        return None
    block = blocks[0]
    payload, yielded = block.first, block.last
    if payload is None or payload.next_op is not yielded or not isinstance(yielded, YieldOp):
        return None
    if not payload.is_registered or payload.regions or payload.successors or \
            len(payload.results) != 1 or yielded.operands != payload.results:
        return None
    args = block.args
    n_in = len(op.inputs)
    if init_first:
        want = [args[1], args[0]] if n_in == 1 and len(args) == 2 else None
    else:
        want = args[:n_in] if n_in and len(args) == n_in + 1 else None
    if want is None or payload.operands != want:
        return None
    if payload.results[0].type is not scalar_type(op.outputs[0].type):
        return None
    return payload


def _print_payload(p, payload) -> None:
    from irkit.dialects.arith import FASTMATH_NONE
    entries = {**payload.properties, **payload.attributes}
    if entries.get("fastmath") == FASTMATH_NONE:
        del entries["fastmath"]             # MLIR elides only the default fastmath
    p.write(f" {{ {payload.name}")
    if entries:
        p.write(" {" + ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items()))
                + "}")
    p.write(" }")


def _parse_payload(p):
    """`{ op-name {attrs} }` after the op name, or None: (op class, attrs, token)."""
    if p.tok != "{":
        return None
    p.expect("{")
    tk = p.i
    name = p.next()
    cls = lookup_op(name)
    if cls is None:
        raise p.error(f"expected a registered operation name, got '{name}'", tk)
    attrs = p.parse_optional_attr_dict()
    p.expect("}")
    return cls, attrs, tk


def _payload_body(p, op, payload, init_first: bool) -> None:
    """The body the short form stands for: the payload op on the input arguments (init
    first for reduce), its result yielded."""
    cls, attrs, tk = payload
    block = Block([scalar_type(v.type) for v in op.structured_operands()])
    op.regions[0].add_block(block)
    args = block.args
    operands = [args[1], args[0]] if init_first else args[:len(op.inputs)]
    props, attrs = split_attributes(cls, attrs)
    # Made by name with every operand, so a payload of the wrong arity fails to verify (as
    # in MLIR) instead of being built on the first few arguments.
    inner = Operation.create(cls.name, operands, [scalar_type(op.outputs[0].type)], props,
                             attrs, location=p.location_at(tk))
    block.append(inner)
    block.append(YieldOp.build(inner.results, result_types=[], location=p.location_at(tk)))


def _parse_user_body(p, op, payload, init_first: bool) -> None:
    if payload is not None:
        if init_first and (len(op.inputs) != 1 or len(op.outputs) != 1):
            raise p.error("the short form of 'linalg.reduce' takes one input and one init",
                          payload[2])
        _payload_body(p, op, payload, init_first)
        return
    region = p.parse_region(p.parse_region_arguments())
    op.regions[0].take_body(region)


# ---------------------------------------------------------------------------------------------
# The ops
# ---------------------------------------------------------------------------------------------


@linalg.op
class MapOp(NamedOp):
    """Applies its body elementwise: `init[i] = body(inputs[0][i], ..., init[i])`, the
    inputs and the init all of one shape.

        %r = linalg.map ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>)
          (%x: f32, %y: f32, %old: f32) {
            %s = arith.addf %x, %y : f32
            linalg.yield %s : f32
          }

    A body that is one op on the inputs' arguments, yielded, prints as
    `linalg.map { arith.addf } ins(...) outs(...)`.
    """

    name = "linalg.map"
    inputs = VarOperand(Destination)
    init = Operand(Destination)

    @property
    def outputs(self) -> list[Value]:
        return [self.init]

    def indexing_maps_list(self):
        n = rank_of(self.init)
        identity = affine_map(n, [dim(i) for i in range(n)])
        return [identity] * (len(self.inputs) + 1)

    def iterator_types_list(self):
        return [PARALLEL] * rank_of(self.init)

    def verify_(self):
        args = self.regions[0].blocks[0].args if self.regions[0].blocks else []
        if len(args) != len(self.inputs) + 1:
            raise self.error(f"expects number of operands to match the arity of mapper, but "
                             f"got: {len(self.inputs) + 1} and {len(args)}")
        out = self.init.type
        for v, a in zip(self.inputs, args):
            if scalar_type(v.type) is not a.type:
                raise self.error(f"expected element type of input '{scalar_type(v.type)}' to "
                                 f"match bbArg type '{a.type}'")
            if v.type.shape != out.shape:
                raise self.error(f"expected shape of input {_dims(v.type)} to match shape of "
                                 f"output {_dims(out)}")
        self.verify_structured()

    @classmethod
    def parse(cls, p, num_results):
        payload = _parse_payload(p)
        inputs = parse_operand_group(p, "ins")
        tk = p.i
        outputs = parse_operand_group(p, "outs")
        if len(outputs) != 1:
            raise p.error("'linalg.map' expects one init in 'outs'", tk)
        attrs = p.parse_optional_attr_dict()
        op = cls.build(inputs, outputs[0], attributes=attrs, regions=1)
        _parse_user_body(p, op, payload, init_first=False)
        return op

    def print(self, p):
        payload = _payload(self, init_first=False)
        if payload is not None:
            _print_payload(p, payload)
        print_operand_group(p, "ins", self.inputs)
        print_operand_group(p, "outs", self.outputs)
        p.attr_dict(self)
        if payload is None:
            print_region_with_arguments(p, self.regions[0])


@linalg.op
class ReduceOp(NamedOp):
    """Folds the inputs along `dimensions` into the inits: for every input point, in order
    along the reduced dimensions, `inits[j] = body(inputs[..][i], inits[..][j])` where `j`
    is `i` without the reduced dimensions. Several inputs (of one shape) reduce together
    into as many inits.

        %r = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%init : tensor<4xf32>)
                           dimensions = [1]
          (%x: f32, %acc: f32) {
            %s = arith.addf %x, %acc : f32
            linalg.yield %s : f32
          }

    With one input whose body is one op on (init, input), yielded, it prints as
    `linalg.reduce { arith.addf } ins(...) outs(...) dimensions = [1]`.
    """

    name = "linalg.reduce"
    inputs_and_inits = VarOperand(Destination, doc="the inputs, then as many inits")
    dimensions = Prop(DenseI64Array, doc="the reduced input dimensions, increasing")

    @property
    def inputs(self) -> list[Value]:
        operands = self.inputs_and_inits
        return operands[:len(operands) // 2]

    @property
    def outputs(self) -> list[Value]:
        operands = self.inputs_and_inits
        return operands[len(operands) // 2:]

    inits = outputs

    def indexing_maps_list(self):
        n = rank_of(self.inputs[0]) if self.inputs else 0
        reduced = set(self.dimensions)
        identity = affine_map(n, [dim(i) for i in range(n)])
        kept = affine_map(n, [dim(i) for i in range(n) if i not in reduced])
        return [identity] * len(self.inputs) + [kept] * len(self.outputs)

    def iterator_types_list(self):
        reduced = set(self.dimensions)
        n = rank_of(self.inputs[0]) if self.inputs else 0
        return [REDUCTION if i in reduced else PARALLEL for i in range(n)]

    def verify_(self):
        operands = self.inputs_and_inits
        if not operands or len(operands) % 2:
            raise self.error(f"expects as many inits as inputs (at least one), got "
                             f"{len(operands)} operands")
        dims = list(self.dimensions)
        if any(b <= a for a, b in zip(dims, dims[1:])):
            raise self.error("attribute 'dimensions' failed to satisfy constraint: i64 dense "
                             "array attribute should be in increasing order")
        ins, inits = self.inputs, self.outputs
        for what, group in (("inputs", ins), ("outputs", inits)):
            for k, v in enumerate(group[1:], 1):
                if v.type.shape != group[0].type.shape:
                    raise self.error(f"expects all {what} to have the same shapes. Shape at "
                                     f"{what[:-1]}-index {k} is not equal to the shape at "
                                     f"{what[:-1]}-index 0.")
        shape = ins[0].type.shape
        for d in dims:
            if not 0 <= d < len(shape):
                raise self.error(f"dimensions for reduction should be in the range [0, "
                                 f"{len(shape) - 1}].")
        kept = [s for i, s in enumerate(shape) if i not in set(dims)]
        init = inits[0].type.shape
        if len(kept) != len(init):
            raise self.error(f"number of dimensions after reduction {len(kept)} doesn't match "
                             f"the init rank {len(init)}")
        if any(a is not None and b is not None and a != b for a, b in zip(kept, init)):
            raise self.error(f"init dimensions {_list(init)} doesn't match input dimensions "
                             f"after reduction {_list(kept)}")
        args = self.regions[0].blocks[0].args if self.regions[0].blocks else []
        if len(args) != len(operands):
            raise self.error("mismatching number of operands and block arguments")
        for what, group, group_args in (("input", ins, args[:len(ins)]),
                                        ("output", inits, args[len(ins):])):
            for v, a in zip(group, group_args):
                if scalar_type(v.type) is not a.type:
                    raise self.error(f"{what} element type '{scalar_type(v.type)}' does not "
                                     f"match corresponding block argument type '{a.type}'")
        self.verify_structured()

    @classmethod
    def parse(cls, p, num_results):
        payload = _parse_payload(p)
        inputs = parse_operand_group(p, "ins")
        inits = parse_operand_group(p, "outs")
        p.expect("dimensions")
        p.expect("=")
        dims = p.parse_i64_list()
        attrs = p.parse_optional_attr_dict()
        op = cls.build([*inputs, *inits], attributes=attrs, regions=1, dimensions=dims)
        _parse_user_body(p, op, payload, init_first=True)
        return op

    def print(self, p):
        payload = _payload(self, init_first=True)
        if payload is not None:
            _print_payload(p, payload)
        print_operand_group(p, "ins", self.inputs)
        print_operand_group(p, "outs", self.outputs)
        p.write(f" dimensions = {i64_list_text(self.dimensions)}")
        p.attr_dict(self, elided=("dimensions",))
        if payload is None:
            print_region_with_arguments(p, self.regions[0])


def _dims(t) -> str:
    """`(4, 8)`: a shape as MLIR's map verifier prints it."""
    return "(" + ", ".join("?" if d is None else str(d) for d in t.shape) + ")"


def _list(shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------------------------


def make_map(b, inputs, init: Value, body, location=None) -> MapOp:
    """`linalg.map`; `body(bb, args) -> [value]` builds the body (args: inputs', then the
    init's element)."""
    op = MapOp.build(list(inputs), init, location=location or b.location, regions=1)
    build_body(op, body)
    return b.insert(op)


def make_reduce(b, inputs, inits, dimensions, body, location=None) -> ReduceOp:
    """`linalg.reduce` of `inputs` along `dimensions` into `inits`; `body(bb, args)` builds
    the combiner (args: the inputs' elements, then the inits')."""
    op = ReduceOp.build([*inputs, *inits], location=location or b.location, regions=1,
                        dimensions=DenseArrayAttr(I64, dimensions))
    build_body(op, body)
    return b.insert(op)
