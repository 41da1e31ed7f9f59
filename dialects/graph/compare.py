"""Elementwise graph ops with element-type rules of their own: `cmp` (numbers to i1),
`where` (a choice by an i1 condition) and `cast` (one element type to another).

Unlike the arithmetic ops of `elementwise.py`, declared by `elementwise_op`, each is
written by hand, its scalar body (`scalar_body`, against the interface of `scalar.py`)
included: `evaluate` runs it on numpy arrays and `lower-graph-to-linalg` builds it, as for
every elementwise op. They broadcast and fold as those do (`cmp` is a `BinaryOp`), and
their folds and patterns keep to the same rules, exact in IEEE arithmetic, NaN and signed
zeros included, with the helpers imported from there. The patterns:
`CmpConstantRight` (constants to the right of a comparison), `NotOfIntCmp` (registered on
`graph.not`), `WhereOfNot` and `CastOfCast`.

Derivatives (see `irkit.ad_rules`): `where` and `cast` are `Linear` and transpose by hand;
comparisons are `NonDifferentiable`.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import StringAttr, numpy_dtype
from irkit.ad_rules import Linear, NonDifferentiable
from irkit.ir import Operation
from irkit.opdef import AnyTensor, Operand, Result
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, FloatType, IntegerType, Type
from irkit.dialects.graph.base import (
    GraphOp, StrProp, TensorSpec, broadcast_shapes, graph, is_float, is_int, same_dtype,
)
from irkit.dialects.graph.elementwise import (
    ELEMENTWISE_TRAITS, NUMPY, BinaryOp, as_dtype, check_kind, elementwise_sharding,
    filled_constant, keeps_shape, literal_matches,
)
from irkit.dialects.graph.scalar import PREDICATES, Scalars


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

#: `a p b == b swapped[p] a`, exact for floats too (NaN makes both sides false)
_SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
#: `not(a p b) == a inverse[p] b`, for integers only (with a NaN both a < b and a >= b fail)
_INVERSE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
#: `x p x`: for integers every predicate; for floats only lt and gt (NaN == NaN is false)
_SELF = {"lt": False, "gt": False, "le": True, "ge": True, "eq": True, "ne": False}


@graph.op
class CmpOp(BinaryOp):
    """Comparison giving an i1 tensor; `predicate` is one of lt, le, gt, ge, eq, ne.

        %r = graph.cmp %x, %y {predicate = "lt"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    """

    name = "graph.cmp"
    predicate = StrProp(PREDICATES)
    traits = ELEMENTWISE_TRAITS + (NonDifferentiable(),)
    _kind = "num"

    @classmethod
    def infer(cls, args, props):
        a, b = args
        same_dtype(a, b)
        return [TensorSpec(broadcast_shapes(a, b), I1)]

    def scalar_body(self, s: Scalars, x, y):
        return s.cmp(self.properties["predicate"].value, x, y)

    def evaluate(self, a, b):
        return np.asarray(self.scalar_body(NUMPY, a, b))

    def fold_identity(self, operands):
        if self.lhs is not self.rhs:
            return None
        p = self.properties["predicate"].value
        if is_float(self.lhs.type.element) and p not in ("lt", "gt"):
            return None                                     # x <= x is false for NaN
        attr = filled_constant(_SELF[p], self.results[0].type)     # x < x = false, x == x = true
        return None if attr is None else [attr]


class CmpConstantRight(RewritePattern):
    """`cmp(c, x) {p} -> cmp(x, c) {swapped p}`: constants on the right, as the folder puts
    them for commutative ops, so later rules look at one side only."""

    def match_and_rewrite(self, op: CmpOp, rewriter: PatternRewriter) -> bool:
        if constant_value(op.lhs) is None or constant_value(op.rhs) is not None:
            return False
        p = _SWAPPED[op.properties["predicate"].value]
        rewriter.replace_op_with_new(op, CmpOp, op.rhs, op.lhs, predicate=StringAttr(p))
        return True


class NotOfIntCmp(RewritePattern):
    """`not(cmp(x, y) {p}) -> cmp(x, y) {inverse p}` for integer operands (floats: NaN)."""

    root = "graph.not"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        cmp = op.operand.defining_op("graph.cmp")
        if cmp is None or is_float(cmp.lhs.type.element) or \
                cmp.results[0].type is not op.results[0].type:
            return False
        p = _INVERSE[cmp.properties["predicate"].value]
        rewriter.replace_op_with_new(op, CmpOp, cmp.lhs, cmp.rhs, predicate=StringAttr(p))
        return True


CmpOp.canonicalization_patterns = (CmpConstantRight,)
graph.ops["graph.not"].canonicalization_patterns = (NotOfIntCmp,)


# ---------------------------------------------------------------------------------------------
# Select and cast
# ---------------------------------------------------------------------------------------------


@graph.op
class WhereOp(GraphOp):
    """Elementwise choice: `x` where `cond` is true, else `y`, all three broadcast.

        %r = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    name = "graph.where"
    cond = Operand(AnyTensor)
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = ELEMENTWISE_TRAITS + (Linear(),)
    #: for a fixed cond, sum_r where(c, x_r, y_r) = where(c, sum_r x_r, sum_r y_r)
    _sum_linear = ((1, 2),)
    sharding_rule = elementwise_sharding

    @classmethod
    def infer(cls, args, props):
        c, a, b = args
        check_kind(c, "bool")
        t = same_dtype(a, b)
        return [TensorSpec(broadcast_shapes(c, a, b), t)]

    def scalar_body(self, s: Scalars, c, x, y):
        return s.select(c, x, y)

    def evaluate(self, c, a, b):
        return as_dtype(self.scalar_body(NUMPY, c, a, b), a.dtype)

    def nondiff_operands(self):
        return (0,)                                         # piecewise constant in cond

    def transpose(self, ad, cts):
        """For a fixed cond the op is linear in (x, y): each gets the cotangent where it was
        chosen, zeros elsewhere, summed back to its shape."""
        ct = cts[0]
        zero = ad.scalar(0.0, ct)
        return [None,
                ad.unbroadcast(ad.op("graph.where", self.cond, ct, zero), self.lhs),
                ad.unbroadcast(ad.op("graph.where", self.cond, zero, ct), self.rhs)]

    def fold_identity(self, operands):
        c, x, y = self.cond, self.lhs, self.rhs
        t = self.results[0].type
        if x is y:
            return [x] if keeps_shape(x, t, [c]) else None      # where(c, x, x) = x
        cond = operands[0]
        for lit, chosen in ((True, x), (False, y)):         # where(true, x, y) = x
            if cond is not None and literal_matches(cond, lit) and \
                    keeps_shape(chosen, t, [c, x, y]):
                return [chosen]
        return None


class WhereOfNot(RewritePattern):
    """`where(not(c), x, y) -> where(c, y, x)`: the same choice without the negation. (A
    peephole cannot spell it: `not` is a Python keyword.)"""

    def match_and_rewrite(self, op: WhereOp, rewriter: PatternRewriter) -> bool:
        neg = op.cond.defining_op("graph.not")
        if neg is None:
            return False
        rewriter.replace_op_with_new(op, WhereOp, neg.operand, op.rhs, op.lhs,
                                     result_types=[op.result.type])
        return True


WhereOp.canonicalization_patterns = (WhereOfNot,)


def _lossless(a: Type, b: Type) -> bool:
    """Whether every value of element type `a` converts to `b` exactly (and back).

    i1 converts exactly to anything (0 and 1); integers to wider integers of a range that
    contains theirs; integers to floats whose significand holds their magnitude (i16 -> f32,
    i32 -> f64, not i32 -> f32); floats to wider floats (f16, bf16 -> f32 -> f64). Only
    the widths numpy stores natively count.
    """
    if a is I1:
        return True
    if isinstance(a, IntegerType):
        if a.width not in (8, 16, 32, 64):
            return False
        lo, hi = np.iinfo(numpy_dtype(a)).min, np.iinfo(numpy_dtype(a)).max
        if isinstance(b, IntegerType) and b.width in (8, 16, 32, 64):
            info = np.iinfo(numpy_dtype(b))
            return info.min <= lo and hi <= info.max
        digits = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
        return isinstance(b, FloatType) and max(-lo, hi) <= 2 ** digits.get(b.name, 0)
    order = {"f16": 0, "bf16": 0, "f32": 1, "f64": 2}
    return isinstance(a, FloatType) and isinstance(b, FloatType) and a.name in order and \
        b.name in order and order[a.name] < order[b.name]


@graph.op
class CastOp(GraphOp):
    """Element type conversion; the target is the result's element type. Floats become
    integers by truncation toward zero, and anything becomes i1 as `x != 0`.

        %r = graph.cast %x : (tensor<4xi32>) -> tensor<4xf32>
    """

    name = "graph.cast"
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = ELEMENTWISE_TRAITS + (Linear(),)
    sharding_rule = elementwise_sharding        # no partial sums: a cast rounds each term

    def props(self):
        """The target element type is a property in all but storage: it is the result's."""
        return {"dtype": self.results[0].type.element}

    @classmethod
    def create(cls, x, dtype, location=None):
        spec = cls.infer([TensorSpec.of(x.type)], {"dtype": dtype})[0]
        return cls.build(x, result_types=[spec.to_type()], location=location)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        return [x.with_dtype(props["dtype"])]

    def scalar_body(self, s: Scalars, x):
        """numpy's `astype` to the result's element type (see `Scalars.cast`)."""
        return s.cast(x, self.results[0].type.element)

    def evaluate(self, x):
        return self.scalar_body(NUMPY, x)

    def is_differentiable(self) -> bool:
        """Float to float only: integer and i1 values are piecewise constant."""
        return is_float(self.operand.type.element) and is_float(self.results[0].type.element)

    def transpose(self, ad, cts):
        """Float to float, a cast is the identity up to rounding: the cotangent is cast back
        to the source type."""
        return [ad.op("graph.cast", cts[0], dtype=self.operand.type.element)]

    def _poison(self, x) -> bool:
        """NaN, inf and out-of-range floats have no integer value (C leaves it undefined,
        numpy gives whatever the CPU does): such casts are not folded, as MLIR's fptosi."""
        et = self.results[0].type.element
        if not np.asarray(x).dtype.kind == "f" or not is_int(et):
            return False
        info = np.iinfo(numpy_dtype(et))
        with np.errstate(invalid="ignore"):
            t = np.trunc(np.asarray(x, dtype=np.float64))
            return not bool(np.all((t >= info.min) & (t <= info.max)))

    def fold_identity(self, operands):
        t = self.results[0].type
        if self.operand.type is t:
            return [self.operand]                           # cast(x: T) to T = x
        inner = self.operand.defining_op(self.name)
        if inner is not None and inner.operand.type is t and \
                _lossless(t.element, inner.results[0].type.element):
            return [inner.operand]                          # i32 -> f64 -> i32 = x
        return None


class CastOfCast(RewritePattern):
    """`cast(cast(x: A) to B) to C -> cast(x) to C` where A -> B is exact (`_lossless`), so
    B holds the very number x held, and B -> C converts that number as A -> C would:

    - B is an integer type: integer sources wrap, round or test `!= 0` alike at any width;
    - C is a float or i1: rounding to C and `!= 0` see only the number;
    - B is a float, C an integer that holds every value of A: no conversion is out of range.

    Left alone: float -> float -> int (NaN and out-of-range values convert differently from
    different source widths on real hardware) and i32 -> f64 -> i8 (wraps one way, is
    undefined the other)."""

    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> bool:
        inner = op.operand.defining_op(CastOp.name)
        if inner is None:
            return False
        a, b = inner.operand.type.element, inner.results[0].type.element
        c = op.results[0].type.element
        if not _lossless(a, b) or not (isinstance(b, IntegerType) or is_float(c) or c is I1
                                       or (isinstance(a, IntegerType) and _lossless(a, c))):
            return False
        rewriter.replace_op_with_new(op, CastOp, inner.operand, result_types=[op.result.type])
        return True


CastOp.canonicalization_patterns = (CastOfCast,)
