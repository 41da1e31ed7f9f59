"""`tensor.pad`: a tensor grown by `low` elements before and `high` elements after each
dimension, the new elements given by a region (for convolution padding, a constant).

    %p = tensor.pad %t low[0, 1, 1, 0] high[0, 1, 1, 0] {
    ^bb0(%n: index, %h: index, %w: index, %c: index):
      tensor.yield %zero : f32
    } : tensor<1x28x28x3xf32> to tensor<1x30x30x3xf32>

The region gets the indices of the result element and yields its value; it runs only for
padding positions. `low` and `high` are mixed lists like a slice's offsets. MLIR's verifier
accepts negative static amounts; what they mean is left undefined, and the interpreter
reports them. `nofold` keeps a pad that changes nothing (it stands for a copy a later pass
wants).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from irkit.attributes import UnitAttr
from irkit.builder import Builder
from irkit.ir import Block, Value
from irkit.opdef import (
    DenseI64Array, Index, Op, Operand, OptProp, Prop, Pure, RegionDef, Result, SingleBlock,
    UnitAttrC, VarOperand,
)
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import INDEX, IndexType, RankedTensorType
from irkit.dialects.tensor import tensor
from irkit.dialects.tensor.base import (
    DYNAMIC_INDEX, Mixed, RankedTensor, check_shape, constant_index, dtype_of, fail,
    fold_constant_entries, format_mixed, join_mixed, parse_mixed, parse_tensor_type,
    resolve_indices, shape_text, split_mixed, static_entries,
)
from irkit.dialects.tensor.elements import YieldOp
from irkit.dialects.tensor.shape import CastOp


def padded_type(source: RankedTensorType, low: Sequence, high: Sequence) -> RankedTensorType:
    """The type of `source` padded by static amounts (None: dynamic), as MLIR infers it."""
    shape = [None if None in (d, lo, hi) else d + lo + hi
             for d, lo, hi in zip(source.shape, low, high)]
    return RankedTensorType(shape, source.element)


class FoldZeroPadding(RewritePattern):
    """Padding by nothing (every amount a constant 0) is a cast of the source, unless
    `nofold` (MLIR's FoldStaticZeroPadding)."""

    root = "tensor.pad"        # PadOp is defined below

    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> bool:
        if op.nofold is not None or not op.pads_nothing():
            return False
        rewriter.replace_op_with_new(op, CastOp, op.source, result_types=[op.result.type])
        return True


class FoldPadConstants(RewritePattern):
    """Constant `low` / `high` values become static; the more static result is cast back to
    the old type (MLIR's FoldStaticPadding)."""

    root = "tensor.pad"

    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> bool:
        low, high = fold_constant_entries(op.mixed_low()), fold_constant_entries(op.mixed_high())
        if low is None and high is None:
            return False
        low, high = low or op.mixed_low(), high or op.mixed_high()
        old = op.result.type
        new = PadOp.create(op.source, low, high, nofold=op.nofold is not None,
                           location=op.location)
        new.region.take_body(op.region)
        rewriter.insert(new)
        if new.result.type is old:
            rewriter.replace_op(op, new.results)
        else:
            rewriter.replace_op_with_new(op, CastOp, new.result, result_types=[old])
        return True


@tensor.op
class PadOp(Op):
    """The source grown by `low[i]` elements before and `high[i]` after dimension `i`; the
    region (one `index` argument per dimension, ending in `tensor.yield`) gives each new
    element from its indices in the result.

        %p = tensor.pad %t low[1, %n] high[2, 0] {
        ^bb0(%i: index, %j: index):
          tensor.yield %zero : f32
        } : tensor<4x?xf32> to tensor<7x?xf32>

    Folds: a pad by nothing of a static tensor to its own type is the source (not with
    `nofold`); constant amounts become static.
    """

    name = "tensor.pad"
    source = Operand(RankedTensor)
    low = VarOperand(Index)
    high = VarOperand(Index)
    static_low = Prop(DenseI64Array)
    static_high = Prop(DenseI64Array)
    nofold = OptProp(UnitAttrC, doc="keep the pad even when it pads nothing")
    result = Result(RankedTensor)
    region = RegionDef(single_block=True)
    traits = (Pure(), SingleBlock())
    canonicalization_patterns = (FoldZeroPadding, FoldPadConstants)

    @classmethod
    def create(cls, source: Value, low: Sequence[Mixed], high: Sequence[Mixed], *,
               nofold: bool = False, result_type: RankedTensorType | None = None,
               location=None) -> "PadOp":
        """Build from mixed amounts, with an empty region (the caller fills it); the result
        type is inferred unless given."""
        static_low, low_values = split_mixed(low)
        static_high, high_values = split_mixed(high)
        if result_type is None:
            result_type = padded_type(source.type, static_entries(static_low),
                                      static_entries(static_high))
        return cls.build(source, low_values, high_values, result_types=[result_type],
                         location=location, static_low=static_low, static_high=static_high,
                         nofold=UnitAttr() if nofold else None, regions=1)

    def mixed_low(self) -> list[Mixed]:
        return join_mixed(self.static_low, self.low)

    def mixed_high(self) -> list[Mixed]:
        return join_mixed(self.static_high, self.high)

    def pads_nothing(self) -> bool:
        """Every amount is (a constant) 0."""
        return all((constant_index(v) if isinstance(v, Value) else v) == 0
                   for v in self.mixed_low() + self.mixed_high())

    def verify_(self):
        src, t = self.source.type, self.result.type
        low, high = list(self.static_low), list(self.static_high)
        if len(low) != src.rank or len(high) != src.rank:
            raise self.error(f"failed to infer expectedType from sourceType '{src}', specified "
                             f"resultType is '{t}'")
        for name, static, values in (("low", low, self.low), ("high", high, self.high)):
            if static.count(DYNAMIC_INDEX) != len(values):
                raise self.error(f"expected the number of '{name}' values to match the number "
                                 f"of dynamic entries in 'static_{name}' ({len(values)} vs "
                                 f"{static.count(DYNAMIC_INDEX)})")
        want = padded_type(src, static_entries(low), static_entries(high))
        if t.rank != want.rank or any(w is not None and d != w
                                      for d, w in zip(t.shape, want.shape)):
            raise self.error(f"specified type '{t}' does not match the inferred type '{want}'")
        if not self.region.blocks:
            raise self.error("expects a region with one block")
        block = self.region.blocks[0]
        if len(block.args) != t.rank:
            raise self.error(f"expected the block to have {t.rank} arguments")
        for i, a in enumerate(block.args):
            if not isinstance(a.type, IndexType):
                raise self.error(f"expected block argument {i + 1} to be an index")
        y = block.last
        if isinstance(y, YieldOp) and y.value.type is not t.element:
            raise self.error("expected yield type to match shape element type")

    def fold(self, operands):
        t = self.result.type
        if self.nofold is None and t.has_static_shape and t is self.source.type:
            return [self.source]
        return None

    @classmethod
    def parse(cls, p, num_results):
        src = p.parse_operand_ref()
        nofold = UnitAttr() if p.accept("nofold") else None
        p.expect("low")
        static_low, low = parse_mixed(p)
        p.expect("high")
        static_high, high = parse_mixed(p)
        region = p.parse_region()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        s = parse_tensor_type(p)
        p.expect("to")
        t = parse_tensor_type(p)
        return cls.build(p.resolve(src, s), resolve_indices(p, low), resolve_indices(p, high),
                         result_types=[t], attributes=attrs, regions=[region],
                         static_low=split_mixed(static_low)[0],
                         static_high=split_mixed(static_high)[0], nofold=nofold)

    def print(self, p):
        p.write(f" {p.value(self.source)}")
        if self.nofold is not None:
            p.write(" nofold")
        p.write(f" low{format_mixed(p, self.mixed_low())} "
                f"high{format_mixed(p, self.mixed_high())} ")
        p.region(self.region)
        p.attr_dict(self, elided=("static_low", "static_high", "nofold", "operandSegmentSizes"))
        p.write(f" : {self.source.type} to {self.result.type}")

    def interpret(self, interp, values):
        source = values[0]
        it = iter(int(v) for v in values[1:])
        low = [next(it) if v == DYNAMIC_INDEX else v for v in self.static_low]
        high = [next(it) if v == DYNAMIC_INDEX else v for v in self.static_high]
        if any(v < 0 for v in low + high):
            raise fail(self, f"pads by negative amounts: low {shape_text(low)}, high "
                             f"{shape_text(high)}")
        shape = tuple(d + lo + hi for d, lo, hi in zip(source.shape, low, high))
        out = np.empty(shape, dtype_of(self.result.type.element))
        self._fill_padding(interp, out, low, source.shape)
        out[tuple(slice(lo, lo + d) for lo, d in zip(low, source.shape))] = source
        check_shape(self, "the result", out, self.result.type)
        return [out]

    def _fill_padding(self, interp, out: np.ndarray, low, inner) -> None:
        """Run the region for each padding position; a region that only yields a value from
        above gives one value for all of them."""
        block = self.region.blocks[0]
        y = block.last
        env = interp.env
        if block.first is y and y.value not in block.args:
            out.fill(env[y.value])
            return
        for idx in np.ndindex(*out.shape):
            if all(lo <= i < lo + d for i, lo, d in zip(idx, low, inner)):
                continue
            (out[idx],) = interp.run_region(self.region, list(idx), env)


def pad(builder: Builder, source: Value, low: Sequence[Mixed], high: Sequence[Mixed],
        pad_value: Value, *, nofold: bool = False) -> Value:
    """`tensor.pad` of `source` by mixed amounts, every new element `pad_value` (a scalar of
    the element type defined outside the pad); the result type is inferred."""
    op = builder.insert(PadOp.create(source, low, high, nofold=nofold,
                                     location=builder.location))
    block = op.region.add_block(Block([INDEX] * source.type.rank))
    Builder.at_end(block).create(YieldOp, pad_value, location=builder.location)
    return op.result
