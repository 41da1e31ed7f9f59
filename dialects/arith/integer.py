"""`arith` constants and integer ops (see `irkit.dialects.arith` for the dialect as a whole),
with MLIR 22's op names, operand names, properties, custom syntax and semantics."""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseElementsAttr, DenseResourceAttr, FloatAttr, IntegerAttr, \
    SparseElementsAttr
from irkit.opdef import (
    AnyType, BoolLike, Commutative, ConstantLike, Elementwise, Operand, Prop, Pure, Result,
    SameOperandsAndResultType, SignlessIntegerLike, UnitAttrC, compatible_shapes, lookup_op,
)
from irkit.ir import Operation, Value
from irkit.peephole import peephole
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I64, IntegerType, RankedTensorType, UnrankedTensorType, VectorType
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.base import (  # noqa: F401  (re-exported for passes)
    CMPF_INVERSE, CMPI_INVERSE, FASTMATH, FASTMATH_FAST, FASTMATH_NONE, OVERFLOW,
    OVERFLOW_NONE, ArithOp, OverflowAttr, BinaryOp, arith, elem, i1_like, int_binary,
    int_info, make, signed, unsigned, wrap, zero_of,
)

# ---------------------------------------------------------------------------------------------
# Constant
# ---------------------------------------------------------------------------------------------

_CONST_ATTRS = (IntegerAttr, FloatAttr, DenseElementsAttr, DenseResourceAttr,
                SparseElementsAttr)


@arith.op
class ConstantOp(ArithOp):
    """A scalar, tensor or vector constant; the value's type is the result type.

        %c = arith.constant 1.000000e+00 : f32
        %t = arith.constant dense<[1, 2]> : tensor<2xi32>
    """

    name = "arith.constant"
    value = Prop()
    result = Result(AnyType)
    traits = (Pure(), ConstantLike())

    def infer_result_types(self):
        return [self.value.type]

    def verify_(self):
        a = self.properties["value"]
        t = self.results[0].type
        if not isinstance(a, _CONST_ATTRS) or a.type is not t:
            raise self.error("failed to verify that all of {value, result} have same type")
        et = elem(t)
        if isinstance(et, IntegerType) and not et.is_signless:
            raise self.error("integer return type must be signless")

    @classmethod
    def materialize(cls, attr, type, location=None):
        """The op later passes insert for a folded constant; None if `attr` cannot be one."""
        if not isinstance(attr, _CONST_ATTRS) or attr.type is not type:
            return None
        op = make(cls, [], [type], {"value": attr}, None)
        if location is not None:
            op.location = location
        return op

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        tk = p.i
        a = p.parse_attribute()
        if not hasattr(a, "type") or a.type is None:
            raise p.error("expected a typed attribute for arith.constant", tk)
        return make(cls, [], [a.type], {"value": a}, attrs)

    def print(self, p):
        if self.attributes:
            p.attr_dict(self, elided=("value",))
        p.write(" ")
        p.attr(self.properties["value"])

    def evaluate(self):
        a = self.properties["value"]
        if type(a) is DenseElementsAttr:
            return np.array(a.array)
        if isinstance(a, (DenseResourceAttr, SparseElementsAttr)):
            return np.array(a.array)
        return af.attr_to_value(a)

    def fold(self, operands):
        return [self.properties["value"]]


# ---------------------------------------------------------------------------------------------
# Integer binary ops
# ---------------------------------------------------------------------------------------------


class _IntBinary(BinaryOp):
    """Integer op on the signed (`_signed`) or unsigned view, wrapped to the bit width."""

    __slots__ = ()
    lhs = Operand(SignlessIntegerLike)
    rhs = Operand(SignlessIntegerLike)
    result = Result(SignlessIntegerLike)
    traits = (Pure(), SameOperandsAndResultType(), Elementwise())
    _signed = True
    _wide_ints = True       # the kernels run on Python ints for i128, i256, ...

    def evaluate(self, a, b):
        return int_binary(self._kernel, self._signed, a, b, self.results[0].type)


class _Overflow(_IntBinary):
    __slots__ = ()
    overflowFlags = Prop(OverflowAttr, default=OVERFLOW_NONE)
    _flags = ("overflow",)
    _flag_prop = "overflowFlags"
    _flag_kind = OVERFLOW
    _flag_default = OVERFLOW_NONE


class _Division(_IntBinary):
    """Division and remainder: no fold where MLIR's result is poison (x/0, MIN/-1)."""

    __slots__ = ()

    def _poison(self, a, b):
        info = int_info(self.results[0].type)
        B = signed(b, info)
        if np.any(B == 0):
            return True
        if not self._signed:
            return False
        A = signed(a, info)
        return bool(np.any((A == -(1 << (info.width - 1))) & (B == -1)))

    def fold_identity(self, operands):
        if af.is_int_splat(operands[1], 1):
            if self._is_rem:
                return [af.zeros_like_attr(operands[1])]    # x % 1 -> 0
            return [self._operands[0].value]                # x / 1 -> x
        a = _div_of_mul(self.lhs, self.rhs, "nsw" if self._signed else "nuw")
        if a is None:
            return None
        if self._is_rem:
            z = zero_of(self.results[0].type)               # (a * b) % b -> 0
            return None if z is None else [z]
        return [a]                                          # (a * b) / b -> a, any rounding

    _is_rem = False


def _div_of_mul(lhs: Value, rhs: Value, flag: str) -> Value | None:
    """`a` if `lhs` is `a * rhs` (either order) whose product cannot wrap by `flag`.

    Without the flag the product may have wrapped and the division does not undo it
    (`(16 * 16) / 16` in i8 is 0); with it, a wrapped product is poison anyway, and the exact
    quotient is `a` whatever the rounding. MLIR folds divsi and divui only.
    """
    mul = lhs.defining_op(MulIOp)
    if mul is None or not OVERFLOW.has(mul.properties["overflowFlags"], flag):
        return None
    if mul.rhs is rhs:
        return mul.lhs
    if mul.lhs is rhs:
        return mul.rhs
    return None


class _ExactDivision(_Division):
    __slots__ = ()
    isExact = Prop(UnitAttrC, default=None)
    _flags = ("exact",)


@arith.op
class AddIOp(_Overflow):
    """Integer addition, wrapping at the bit width.

        %a = arith.constant 7 : i32
        %r = arith.addi %a, %a overflow<nsw> : i32
    """

    name = "arith.addi"
    traits = (Pure(), Commutative(), SameOperandsAndResultType(), Elementwise())
    _kernel = staticmethod(lambda a, b, w: a + b)

    def fold_identity(self, operands):
        x, c = self.const_operand(operands)
        if c is not None and af.is_int_splat(c, 0):
            return [x]                                      # x + 0 -> x
        lhs, rhs = self._operands[0].value, self._operands[1].value
        for s, other in ((lhs, rhs), (rhs, lhs)):
            sub = s.defining_op(SubIOp)
            if sub is not None and sub._operands[1].value is other:
                return [sub._operands[0].value]             # (a - b) + b -> a
        return None

    # Rebuilt ops carry no overflow flags: `(x + a) + b` without overflow says nothing about
    # `a + b` (a = MAX, b = 1, x = -1), so MLIR's merged nsw/nuw could add poison.
    canonicalization_patterns = (
        peephole("arith.addi(arith.addi(x, const(a)), const(b)) -> "
                 "arith.addi(x, arith.addi(a, b))"),        # (x + a) + b = x + (a + b)
        peephole("arith.addi(arith.subi(x, const(a)), const(b)) -> "
                 "arith.addi(x, arith.subi(b, a))"),        # (x - a) + b = x + (b - a)
        peephole("arith.addi(arith.subi(const(a), x), const(b)) -> "
                 "arith.subi(arith.addi(a, b), x)"),        # (a - x) + b = (a + b) - x
        peephole("arith.addi(x, arith.muli(y, -1)) -> arith.subi(x, y)"),   # x + y*-1 = x - y
        peephole("arith.addi(arith.muli(x, -1), y) -> arith.subi(y, x)"),   # x*-1 + y = y - x
    )


@arith.op
class SubIOp(_Overflow):
    """Integer subtraction, wrapping at the bit width.

        %a = arith.constant 7 : i32
        %r = arith.subi %a, %a : i32
    """

    name = "arith.subi"
    _kernel = staticmethod(lambda a, b, w: a - b)

    def fold_identity(self, operands):
        if af.is_int_splat(operands[1], 0):
            return [self._operands[0].value]                # x - 0 -> x
        if self.same_operands():
            z = zero_of(self.results[0].type)               # x - x -> 0
            return None if z is None else [z]
        lhs, rhs = self._operands[0].value, self._operands[1].value
        add = lhs.defining_op(AddIOp)
        if add is not None:
            if add._operands[1].value is rhs:
                return [add._operands[0].value]             # (a + b) - b -> a
            if add._operands[0].value is rhs:
                return [add._operands[1].value]             # (a + b) - a -> b
        return None

    canonicalization_patterns = (
        peephole("arith.subi(arith.addi(x, const(a)), const(b)) -> "
                 "arith.addi(x, arith.subi(a, b))"),        # (x + a) - b = x + (a - b)
        peephole("arith.subi(const(b), arith.addi(x, const(a))) -> "
                 "arith.subi(arith.subi(b, a), x)"),        # b - (x + a) = (b - a) - x
        peephole("arith.subi(arith.subi(x, const(a)), const(b)) -> "
                 "arith.subi(x, arith.addi(a, b))"),        # (x - a) - b = x - (a + b)
        peephole("arith.subi(arith.subi(const(a), x), const(b)) -> "
                 "arith.subi(arith.subi(a, b), x)"),        # (a - x) - b = (a - b) - x
        peephole("arith.subi(const(b), arith.subi(x, const(a))) -> "
                 "arith.subi(arith.addi(a, b), x)"),        # b - (x - a) = (a + b) - x
        peephole("arith.subi(const(b), arith.subi(const(a), x)) -> "
                 "arith.addi(x, arith.subi(b, a))"),        # b - (a - x) = x + (b - a)
        peephole("arith.subi(arith.subi(x, y), x) -> arith.subi(0, y)"),    # (x - y) - x = -y
    )


@arith.op
class MulIOp(_Overflow):
    """Integer multiplication, wrapping at the bit width.

        %a = arith.constant 7 : i32
        %r = arith.muli %a, %a : i32
    """

    name = "arith.muli"
    traits = (Pure(), Commutative(), SameOperandsAndResultType(), Elementwise())
    _kernel = staticmethod(lambda a, b, w: a * b)

    def fold_identity(self, operands):
        x, c = self.const_operand(operands)
        if c is None:
            return None
        if af.is_int_splat(c, 0):
            return [c]                                      # x * 0 -> 0
        if af.is_int_splat(c, 1):
            return [x]                                      # x * 1 -> x
        return None

    canonicalization_patterns = (
        peephole("arith.muli(arith.muli(x, const(a)), const(b)) -> "
                 "arith.muli(x, arith.muli(a, b))"),        # (x * a) * b = x * (a * b)
    )


@arith.op
class DivSIOp(_ExactDivision):
    """Signed division rounding toward zero (x/0 and MIN/-1 are undefined).

        %a = arith.constant -7 : i32
        %r = arith.divsi %a, %a : i32
    """

    name = "arith.divsi"
    _kernel = staticmethod(af.sdiv)


@arith.op
class DivUIOp(_ExactDivision):
    """Unsigned division (x/0 is undefined).

        %a = arith.constant 7 : i32
        %r = arith.divui %a, %a exact : i32
    """

    name = "arith.divui"
    _signed = False
    _kernel = staticmethod(af.udiv)


@arith.op
class CeilDivSIOp(_Division):
    """Signed division rounding toward positive infinity.

        %a = arith.constant -7 : i32
        %r = arith.ceildivsi %a, %a : i32
    """

    name = "arith.ceildivsi"
    _kernel = staticmethod(af.sceildiv)


@arith.op
class CeilDivUIOp(_Division):
    """Unsigned division rounding up.

        %a = arith.constant 7 : i32
        %r = arith.ceildivui %a, %a : i32
    """

    name = "arith.ceildivui"
    _signed = False
    _kernel = staticmethod(af.uceildiv)


@arith.op
class FloorDivSIOp(_Division):
    """Signed division rounding toward negative infinity.

        %a = arith.constant -7 : i32
        %r = arith.floordivsi %a, %a : i32
    """

    name = "arith.floordivsi"
    _kernel = staticmethod(af.sfloordiv)


@arith.op
class RemSIOp(_Division):
    """Signed remainder; the result has the sign of the dividend.

        %a = arith.constant -7 : i32
        %r = arith.remsi %a, %a : i32
    """

    name = "arith.remsi"
    _kernel = staticmethod(af.srem)
    _is_rem = True


@arith.op
class RemUIOp(_Division):
    """Unsigned remainder.

        %a = arith.constant 7 : i32
        %r = arith.remui %a, %a : i32
    """

    name = "arith.remui"
    _signed = False
    _kernel = staticmethod(af.urem)
    _is_rem = True


class BitwiseOfExt(RewritePattern):
    """`op(ext(x), ext(y)) -> ext(op(x, y))` for and/or/xor and two extensions of one kind
    from one type: the bits an extension adds are zeros (extui) or copies of the sign bit
    (extsi), and and/or/xor of those is the extension of the op's own sign bit."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a = op.lhs.defining_op(("arith.extui", "arith.extsi"))
        b = op.rhs.defining_op(("arith.extui", "arith.extsi"))
        if a is None or b is None or a.name != b.name or a.in_.type is not b.in_.type:
            return False
        inner = rewriter.create(type(op), a.in_, b.in_).results[0]
        rewriter.replace_op_with_new(op, type(a), inner, result_types=[op.results[0].type])
        return True


class XOrIOfCmp(RewritePattern):
    """`cmp(p, a, b) ^ true -> cmp(not p, a, b)`: negating a comparison is the comparison
    with the complementary predicate (for cmpf: `not olt` is `uge`, NaN included)."""

    root = "arith.xori"     # the class is defined below, so the annotation cannot name it

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        cmp = op.lhs.defining_op(("arith.cmpi", "arith.cmpf"))
        if cmp is None:
            return False
        c = constant_value(op.rhs)
        if c is None or not af.is_int_splat(c, -1):
            return False
        inverse = CMPI_INVERSE if cmp.name == "arith.cmpi" else CMPF_INVERSE
        props = dict(cmp.properties)
        props["predicate"] = IntegerAttr(inverse[props["predicate"].value], I64)
        rewriter.replace_op_with_new(op, type(cmp), cmp.lhs, cmp.rhs, **props)
        return True


class _Bitwise(_IntBinary):
    __slots__ = ()
    traits = (Pure(), Commutative(), SameOperandsAndResultType(), Elementwise())


@arith.op
class AndIOp(_Bitwise):
    """Bitwise and.

        %a = arith.constant 12 : i8
        %r = arith.andi %a, %a : i8
    """

    name = "arith.andi"
    _kernel = staticmethod(lambda a, b, w: a & b)
    canonicalization_patterns = (BitwiseOfExt("arith.andi"),)

    def fold_identity(self, operands):
        if self.same_operands():
            return [self._operands[0].value]                # x & x -> x
        x, c = self.const_operand(operands)
        if c is not None and af.is_int_splat(c, 0):
            return [c]                                      # x & 0 -> 0
        if c is not None and af.is_int_splat(c, -1):
            return [x]                                      # x & ~0 -> x
        lhs, rhs = self.lhs, self.rhs
        if _is_not_of(rhs, lhs) or _is_not_of(lhs, rhs):
            z = zero_of(self.results[0].type)               # x & ~x -> 0
            return None if z is None else [z]
        for inner, other in ((lhs, rhs), (rhs, lhs)):
            prev = inner.defining_op(AndIOp)
            if prev is not None and (prev.lhs is other or prev.rhs is other):
                return [inner]                              # a & (a & b) -> a & b
        return None


@arith.op
class OrIOp(_Bitwise):
    """Bitwise or.

        %a = arith.constant 12 : i8
        %r = arith.ori %a, %a : i8
    """

    name = "arith.ori"
    _kernel = staticmethod(lambda a, b, w: a | b)
    canonicalization_patterns = (BitwiseOfExt("arith.ori"),)

    def fold_identity(self, operands):
        if self.same_operands():
            return [self._operands[0].value]                # x | x -> x
        x, c = self.const_operand(operands)
        if c is not None and af.is_int_splat(c, 0):
            return [x]                                      # x | 0 -> x
        if c is not None and af.is_int_splat(c, -1):
            return [c]                                      # x | ~0 -> ~0
        lhs, rhs = self.lhs, self.rhs
        for n, x in ((rhs, lhs), (lhs, rhs)):
            if _is_not_of(n, x):
                return [n.owner.rhs]                        # x | ~x -> ~0
        return None


@arith.op
class XOrIOp(_Bitwise):
    """Bitwise exclusive or.

        %a = arith.constant 12 : i8
        %r = arith.xori %a, %a : i8
    """

    name = "arith.xori"
    _kernel = staticmethod(lambda a, b, w: a ^ b)
    canonicalization_patterns = (BitwiseOfExt("arith.xori"), XOrIOfCmp)

    def fold_identity(self, operands):
        if self.same_operands():
            z = zero_of(self.results[0].type)               # x ^ x -> 0
            return None if z is None else [z]
        x, c = self.const_operand(operands)
        if c is not None and af.is_int_splat(c, 0):
            return [x]                                      # x ^ 0 -> x
        lhs, rhs = self.lhs, self.rhs
        for v, a in ((lhs, rhs), (rhs, lhs)):
            inner = v.defining_op(XOrIOp)
            if inner is not None:
                if inner.rhs is a:
                    return [inner.lhs]                      # (x ^ a) ^ a -> x
                if inner.lhs is a:
                    return [inner.rhs]                      # (a ^ x) ^ a -> x
        return None


def _is_not_of(v: Value, x: Value) -> bool:
    """Is `v` the bitwise complement `x ^ ~0` (the constant on the right, as folding puts
    it)?"""
    xor = v.defining_op(XOrIOp)
    if xor is None or xor.lhs is not x:
        return False
    c = constant_value(xor.rhs)
    return c is not None and af.is_int_splat(c, -1)


class _Shift(_IntBinary):
    """Shifts: the amount is unsigned; amounts >= the width are poison (no fold)."""

    __slots__ = ()
    _signed = False

    def _poison(self, a, b):
        info = int_info(self.results[0].type)
        return bool(np.any(unsigned(b, info) >= np.uint64(info.width)))

    def fold_identity(self, operands):
        if af.is_int_splat(operands[1], 0):
            return [self._operands[0].value]                # x << 0 -> x
        return None


@arith.op
class ShLIOp(_Shift, _Overflow):
    """Shift left.

        %a = arith.constant 3 : i8
        %r = arith.shli %a, %a : i8
    """

    name = "arith.shli"
    _kernel = staticmethod(af.shl)


@arith.op
class ShRUIOp(_Shift, _ExactDivision):
    """Logical shift right (zeros shifted in).

        %a = arith.constant 3 : i8
        %r = arith.shrui %a, %a : i8
    """

    name = "arith.shrui"
    _kernel = staticmethod(af.lshr)
    _poison = _Shift._poison
    fold_identity = _Shift.fold_identity


@arith.op
class ShRSIOp(_Shift, _ExactDivision):
    """Arithmetic shift right (the sign bit shifted in).

        %a = arith.constant -3 : i8
        %r = arith.shrsi %a, %a exact : i8
    """

    name = "arith.shrsi"
    _kernel = staticmethod(af.ashr)
    _poison = _Shift._poison
    fold_identity = _Shift.fold_identity

    def evaluate(self, a, b):
        info = int_info(self.results[0].type)
        return wrap(af.ashr(signed(a, info), signed(b, info), info.width), info)


class _MinMaxI(_Bitwise):
    """min/max: idempotent; the type's extreme value absorbs or vanishes."""

    __slots__ = ()
    _absorb = _neutral = ""

    def fold_identity(self, operands):
        if self.same_operands():
            return [self._operands[0].value]                # max(x, x) -> x
        x, c = self.const_operand(operands)
        if c is not None and af.int_splat_limit(c, self._absorb):
            return [c]                                      # max(x, MAX) -> MAX
        if c is not None and af.int_splat_limit(c, self._neutral):
            return [x]                                      # max(x, MIN) -> x
        return None


@arith.op
class MaxSIOp(_MinMaxI):
    """Signed maximum.

        %a = arith.constant -3 : i8
        %r = arith.maxsi %a, %a : i8
    """

    name = "arith.maxsi"
    _kernel = staticmethod(lambda a, b, w: np.maximum(a, b))
    _absorb, _neutral = "smax", "smin"


@arith.op
class MaxUIOp(_MinMaxI):
    """Unsigned maximum.

        %a = arith.constant -3 : i8
        %r = arith.maxui %a, %a : i8
    """

    name = "arith.maxui"
    _signed = False
    _kernel = staticmethod(lambda a, b, w: np.maximum(a, b))
    _absorb, _neutral = "umax", "umin"


@arith.op
class MinSIOp(_MinMaxI):
    """Signed minimum.

        %a = arith.constant -3 : i8
        %r = arith.minsi %a, %a : i8
    """

    name = "arith.minsi"
    _kernel = staticmethod(lambda a, b, w: np.minimum(a, b))
    _absorb, _neutral = "smin", "smax"


@arith.op
class MinUIOp(_MinMaxI):
    """Unsigned minimum.

        %a = arith.constant -3 : i8
        %r = arith.minui %a, %a : i8
    """

    name = "arith.minui"
    _signed = False
    _kernel = staticmethod(lambda a, b, w: np.minimum(a, b))
    _absorb, _neutral = "umin", "umax"


# ---------------------------------------------------------------------------------------------
# Extended integer ops: two results, the full result split in two
# ---------------------------------------------------------------------------------------------


def verify_elementwise_mappable(op) -> None:
    """MLIR's `Elementwise` trait rules for ops with scalar, vector or tensor operands: if
    anything is a vector or tensor, the operands include one and every result is one, and
    all of them have one kind and compatible shapes. (irkit's own `Elementwise` trait also
    marks broadcasting graph ops, so arith ops with several results check it here.)"""
    def mappable(types):
        return [t for t in types if isinstance(t, (VectorType, RankedTensorType,
                                                   UnrankedTensorType))]
    ins, outs = mappable(op.operand_types), mappable(op.result_types)
    if not ins and not outs:
        return
    if not ins:
        raise op.error("if a result is non-scalar, then at least one operand must be "
                       "non-scalar")
    if not outs:
        raise op.error("if an operand is non-scalar, then there must be at least one "
                       "non-scalar result")
    if len(outs) != len(op.results):
        raise op.error("if an operand is non-scalar, then all results must be non-scalar")
    types = ins + outs
    if any(type(t) is not type(types[0]) or not compatible_shapes(t, types[0])
           for t in types[1:]):
        raise op.error("all non-scalar operands/results must have the same shape and base "
                       "type")


class _Extended(BinaryOp):
    """`lhs op rhs` computed exactly and returned in two parts, each of the operand width:
    the low part (the wrapped result) and what does not fit (a carry, the high half)."""

    __slots__ = ()
    lhs = Operand(SignlessIntegerLike)
    rhs = Operand(SignlessIntegerLike)
    traits = (Pure(), Commutative(), Elementwise())
    #: the names of the lhs, rhs and results that must have one type (ODS's message)
    _same = ""

    def verify_(self):
        ops = self._operands
        t = ops[0].value.type
        same = [ops[1].value.type, *self.result_types[:2 if self._same.count(",") == 3
                                                      else 1]]
        if any(u is not t for u in same):
            raise self.error(f"failed to verify that all of {{{self._same}}} have same type")
        verify_elementwise_mappable(self)

    @classmethod
    def parse(cls, p, num_results):
        a = p.parse_operand_ref()
        p.expect(",")
        b = p.parse_operand_ref()
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        second = t
        if cls._result_type_listed:
            p.expect(",")
            second = p.parse_type()
        return make(cls, [p.resolve(a, t), p.resolve(b, t)], [t, second], None, attrs)

    def print(self, p):
        a, b = self.lhs, self.rhs
        p.write(f" {p.value(a)}, {p.value(b)}")
        if self.attributes:
            p.attr_dict(self)
        p.write(f" : {a.type}")
        if self._result_type_listed:
            p.write(f", {self.results[1].type}")

    _result_type_listed = False


@arith.op
class AddUIExtendedOp(_Extended):
    """Unsigned addition with its carry: `sum` wraps at the bit width, `overflow` is true
    where the unsigned sum did not fit.

        %a = arith.constant 200 : i8
        %r:2 = arith.addui_extended %a, %a : i8, i1
    """

    name = "arith.addui_extended"
    sum = Result(SignlessIntegerLike)
    overflow = Result(BoolLike)
    _same = "lhs, rhs, sum"
    _result_type_listed = True

    def infer_result_types(self):
        t = self.lhs.type
        return [t, i1_like(t)]

    def evaluate(self, a, b):
        info = int_info(self.lhs.type)
        ua = unsigned(a, info)
        with np.errstate(over="ignore"):
            total = (ua + unsigned(b, info)) & info.mask
        return wrap(total, info), np.asarray(total < ua).astype(np.bool_)[()]

    def fold_identity(self, operands):
        x, c = self.const_operand(operands)
        if c is None or not af.is_int_splat(c, 0):
            return None
        carry = af.bool_attr_like(False, self.overflow.type)
        return None if carry is None else [x, carry]        # x + 0 -> x, no carry

    canonicalization_patterns = ()     # set below: the pattern needs AddIOp


class _MulExtended(_Extended):
    """The double-width product of the signed (`_signed`) or unsigned views: `low` is the
    wrapped product (what `muli` gives), `high` the upper half."""

    __slots__ = ()
    low = Result(SignlessIntegerLike)
    high = Result(SignlessIntegerLike)
    _same = "lhs, rhs, low, high"
    _signed = True

    def infer_result_types(self):
        return [self.lhs.type, self.lhs.type]

    def evaluate(self, a, b):
        info = int_info(self.lhs.type)
        view = signed if self._signed else unsigned
        # Python integers (object arrays) hold the exact product of two 64-bit values.
        product = view(a, info).astype(object) * view(b, info).astype(object)
        mask = (1 << info.width) - 1
        return (_from_bits(product & mask, info),
                _from_bits((product >> info.width) & mask, info))

    def fold_identity(self, operands):
        x, c = self.const_operand(operands)
        if c is None:
            return None
        if af.is_int_splat(c, 0):
            return [c, c]                                   # x * 0 -> 0, 0
        if af.is_int_splat(c, 1) and not self._signed:
            z = zero_of(self.results[1].type)               # x * 1 -> x, 0 (unsigned)
            return None if z is None else [x, z]
        return None


def _from_bits(bits, info):
    """Non-negative Python integers below 2**width (an object array) in storage form."""
    bits = np.asarray(bits, dtype=object)
    return wrap(bits if info.width > 64 else bits.astype(np.uint64), info)


class MulSIExtendedOfOne(RewritePattern):
    """`mulsi_extended(x, 1) -> (x, extsi(x < 0))`: the high half of a signed product by one
    is x's sign, all ones or all zeros."""

    root = "arith.mulsi_extended"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        c = constant_value(op.rhs)
        if c is None or not af.is_int_splat(c, 1):
            return False
        t = op.lhs.type
        zero = zero_of(t)
        if zero is None:
            return False
        zero_v = rewriter.create(ConstantOp, value=zero, result_types=[t]).results[0]
        slt = rewriter.create(lookup_op("arith.cmpi"), op.lhs, zero_v,
                              predicate=IntegerAttr(2, I64)).results[0]
        sign = rewriter.create(lookup_op("arith.extsi"), slt, result_types=[t]).results[0]
        rewriter.replace_op(op, [op.lhs, sign])
        return True


class LowPartOnly(RewritePattern):
    """An extended op whose second result is unused is its plain op (`addi`, `muli`)."""

    def __init__(self, root: str, plain: type) -> None:
        self.root = root
        self.plain = plain

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.results[1].has_uses():
            return False
        new = rewriter.create(self.plain, op.lhs, op.rhs).results[0]
        rewriter.replace_op(op, [new, op.results[1]])      # (the second has no uses)
        return True


@arith.op
class MulSIExtendedOp(_MulExtended):
    """Signed multiplication to twice the width, as a low and a high half.

        %a = arith.constant -3 : i8
        %r:2 = arith.mulsi_extended %a, %a : i8
    """

    name = "arith.mulsi_extended"
    canonicalization_patterns = (MulSIExtendedOfOne(),
                                 LowPartOnly("arith.mulsi_extended", MulIOp))


@arith.op
class MulUIExtendedOp(_MulExtended):
    """Unsigned multiplication to twice the width, as a low and a high half.

        %a = arith.constant -3 : i8
        %r:2 = arith.mului_extended %a, %a : i8
    """

    name = "arith.mului_extended"
    _signed = False
    canonicalization_patterns = (LowPartOnly("arith.mului_extended", MulIOp),)


AddUIExtendedOp.canonicalization_patterns = (LowPartOnly("arith.addui_extended", AddIOp),)


def materialize_constant(attr, type, location=None):
    """An `arith.constant` holding `attr` as a value of `type`, or None if it cannot."""
    return ConstantOp.materialize(attr, type, location)


arith.constant_materializer = materialize_constant
