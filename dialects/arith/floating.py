"""`arith` floating-point ops, comparisons and select (see `irkit.dialects.arith`)."""

from __future__ import annotations

import math

import numpy as np

from irkit import float_formats as ff
from irkit.opdef import (
    BoolLike, AnyType, Commutative, Elementwise, FloatLike, Operand, Prop, Pure, Result,
    SameOperandsAndResultType, SameOperandsType, SignlessIntegerLike,
)
from irkit.attributes import IntegerAttr
from irkit.ir import Operation
from irkit.peephole import peephole
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, I64, IntegerType, ShapedType
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.base import (
    CMPF_PREDICATES, CMPI_PREDICATES, CMPI_SWAPPED, FASTMATH, FASTMATH_NONE, ArithOp,
    FastMathAttr, BinaryOp, predicate_constraint, UnaryOp, arith, flags_text, i1_like,
    int_info, make, parse_flags, signed, unsigned,
)
from irkit.dialects.arith.casts import ExtUIOp
from irkit.dialects.arith.integer import ConstantOp, XOrIOp

# ---------------------------------------------------------------------------------------------
# Floating-point ops
# ---------------------------------------------------------------------------------------------


class FastMathOp(ArithOp):
    __slots__ = ()
    fastmath = Prop(FastMathAttr, default=FASTMATH_NONE)
    _flags = ("fastmath",)
    _flag_prop = "fastmath"
    _flag_kind = FASTMATH
    _flag_default = FASTMATH_NONE


class _FloatBinary(BinaryOp, FastMathOp):
    """Float op computed in the operands' own precision (f32 stays float32)."""

    __slots__ = ()
    lhs = Operand(FloatLike)
    rhs = Operand(FloatLike)
    result = Result(FloatLike)
    traits = (Pure(), SameOperandsAndResultType(), Elementwise())
    #: (constant, negative zero?) with `x op c == x`, and whether `op(x, x) == x`
    _unit: tuple | None = None
    _idempotent = False

    def evaluate(self, a, b):
        return af.fix_float(self._kernel(a, b), self.results[0].type)

    def _soft(self, a, b):
        """The exact fold (APFloat's: rounded once, the left NaN wins and is quieted)."""
        return self._soft_kernel(a, b)

    def fold(self, operands):
        # As MLIR's folders: the identities first, on the right-hand constant only, then
        # the constant fold. So `maxnumf(sNaN, NaN)` and `sNaN * 1.0` keep the signaling
        # NaN as it is (the op is the identity), while `1.0 * sNaN` computes a quiet one.
        if operands[0] is None or operands[1] is None:
            return self.fold_identity(operands)
        if (self._idempotent and self.same_operands()) or self._is_unit(operands[1]):
            return [operands[0]]                            # c * 1.0 -> c, bit for bit
        return af.constant_fold(self, operands)

    def _is_unit(self, c) -> bool:
        """Is constant `c` a right identity (`x + -0.0`, `x * 1.0`, `maxnumf(x, NaN)`)?"""
        for value, neg_zero in self._units:
            if value != value:
                v = af.splat_of(c)
                if v is not None and v != v:
                    return True
            elif af.is_float_splat(c, value, neg_zero):
                return True
        return False

    def fold_identity(self, operands):
        if self._idempotent and self.same_operands():
            return [self._operands[0].value]                # max(x, x) -> x
        x, c = self.const_operand(operands)
        if c is None:
            return None
        for value, neg_zero in self._units:
            if value != value:
                v = af.splat_of(c)
                if v is not None and v != v:
                    return [x]                              # maxnumf(x, NaN) -> x
            elif af.is_float_splat(c, value, neg_zero):
                return [x]                                  # x + -0.0 -> x, x * 1.0 -> x
        return None

    _units: tuple = ()


_COMMUTATIVE_F = (Pure(), Commutative(), SameOperandsAndResultType(), Elementwise())


@arith.op
class AddFOp(_FloatBinary):
    """Floating-point addition (x + -0.0 folds to x; x + 0.0 does not, for x = -0.0).

        %a = arith.constant 1.5 : f32
        %r = arith.addf %a, %a fastmath<fast> : f32
    """

    name = "arith.addf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(lambda a, b: a + b)
    _soft_kernel = staticmethod(lambda a, b: ff.add(a, b)[0])
    _units = ((0.0, True),)


@arith.op
class SubFOp(_FloatBinary):
    """Floating-point subtraction (x - x is not folded: NaN and inf give NaN).

        %a = arith.constant 1.5 : f32
        %r = arith.subf %a, %a : f32
    """

    name = "arith.subf"
    _kernel = staticmethod(lambda a, b: a - b)
    _soft_kernel = staticmethod(lambda a, b: ff.sub(a, b)[0])
    _units = ((0.0, False),)


@arith.op
class MulFOp(_FloatBinary):
    """Floating-point multiplication (x * 0.0 is not folded: NaN, inf and -0.0).

        %a = arith.constant 1.5 : f32
        %r = arith.mulf %a, %a : f32
    """

    name = "arith.mulf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(lambda a, b: a * b)
    _soft_kernel = staticmethod(lambda a, b: ff.mul(a, b)[0])
    _units = ((1.0, False),)

    def fold_identity(self, operands):
        r = _FloatBinary.fold_identity(self, operands)
        if r is not None:
            return r
        c = operands[1]
        # x * 0 is NaN for inf/NaN x and -0 for negative x: only under nnan and nsz is it 0.
        if c is not None and FASTMATH.has(self.properties["fastmath"], "nnan", "nsz") and \
                (af.is_float_splat(c, 0.0) or af.is_float_splat(c, 0.0, True)):
            return [self.rhs]                               # x * 0 -> 0 (fastmath nnan nsz)
        return None
    canonicalization_patterns = (
        peephole("arith.mulf(arith.negf(x), arith.negf(y)) -> arith.mulf(x, y)"),  # -x*-y = xy
    )


@arith.op
class DivFOp(_FloatBinary):
    """Floating-point division (IEEE: x/0 is +-inf or NaN).

        %a = arith.constant 1.5 : f32
        %r = arith.divf %a, %a : f32
    """

    name = "arith.divf"
    _kernel = staticmethod(lambda a, b: a / b)
    _soft_kernel = staticmethod(lambda a, b: ff.div(a, b)[0])
    _units = ((1.0, False),)
    canonicalization_patterns = (
        peephole("arith.divf(arith.negf(x), arith.negf(y)) -> arith.divf(x, y)"),  # -x/-y = x/y
    )


@arith.op
class RemFOp(_FloatBinary):
    """Floating-point remainder with the sign of the dividend (C fmod).

        %a = arith.constant 5.5 : f32
        %r = arith.remf %a, %a : f32
    """

    name = "arith.remf"
    _kernel = staticmethod(np.fmod)
    _soft_kernel = staticmethod(lambda a, b: ff.mod(a, b)[0])


@arith.op
class MaximumFOp(_FloatBinary):
    """IEEE maximum: NaN in either operand gives NaN; +0.0 > -0.0.

        %a = arith.constant 1.5 : f32
        %r = arith.maximumf %a, %a : f32
    """

    name = "arith.maximumf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(af.maximumf)
    _soft_kernel = staticmethod(ff.maximum)
    _idempotent = True
    _units = ((-np.inf, False),)


@arith.op
class MinimumFOp(_FloatBinary):
    """IEEE minimum: NaN in either operand gives NaN; -0.0 < +0.0.

        %a = arith.constant 1.5 : f32
        %r = arith.minimumf %a, %a : f32
    """

    name = "arith.minimumf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(af.minimumf)
    _soft_kernel = staticmethod(ff.minimum)
    _idempotent = True
    _units = ((np.inf, False),)


@arith.op
class MaxNumFOp(_FloatBinary):
    """IEEE maxNum: a NaN operand is ignored (the other one is the result).

        %a = arith.constant 1.5 : f32
        %r = arith.maxnumf %a, %a : f32
    """

    name = "arith.maxnumf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(af.maxnumf)
    _soft_kernel = staticmethod(ff.maxnum)
    _idempotent = True
    _units = ((np.nan, False),)     # not -inf: maxnumf(NaN, -inf) is -inf, not NaN


@arith.op
class MinNumFOp(_FloatBinary):
    """IEEE minNum: a NaN operand is ignored.

        %a = arith.constant 1.5 : f32
        %r = arith.minnumf %a, %a : f32
    """

    name = "arith.minnumf"
    traits = _COMMUTATIVE_F
    _kernel = staticmethod(af.minnumf)
    _soft_kernel = staticmethod(ff.minnum)
    _idempotent = True
    _units = ((np.nan, False),)     # not +inf: minnumf(NaN, +inf) is +inf, not NaN


@arith.op
class NegFOp(UnaryOp, FastMathOp):
    """Floating-point negation (flips the sign bit, NaN included).

        %a = arith.constant 1.5 : f32
        %r = arith.negf %a : f32
    """

    name = "arith.negf"
    operand = Operand(FloatLike)
    result = Result(FloatLike)
    traits = (Pure(), SameOperandsAndResultType(), Elementwise())

    def evaluate(self, a):
        return -a

    def _soft(self, a):
        # The sign bit flips, NaN included; an unsigned format (f8E8M0FNU) has no -x.
        return a.with_sign(not a.sign) if a.fmt.signed else None

    def fold_identity(self, operands):
        inner = self._operands[0].value.defining_op(NegFOp)
        return None if inner is None else [inner._operands[0].value]   # -(-x) -> x


# ---------------------------------------------------------------------------------------------
# Comparisons
# ---------------------------------------------------------------------------------------------


class _Compare(ArithOp):
    """`%r = arith.cmpX pred, %lhs, %rhs [flags] : T`; the result is i1 of T's shape."""

    __slots__ = ()
    result = Result(BoolLike)
    traits = (Pure(), SameOperandsType(), Elementwise())
    _predicates: tuple = ()

    def infer_result_types(self):
        return [i1_like(self._operands[0].value.type)]

    def verify_(self):
        if self.results[0].type is not i1_like(self._operands[0].value.type):
            raise self.error("failed to verify that result type has i1 element type and same "
                             "shape as operands")

    @property
    def predicate_name(self) -> str:
        return self._predicates[self.properties["predicate"].value]

    @classmethod
    def parse(cls, p, num_results):
        tk = p.i
        word = p.next()
        if word[:1] == '"':
            word = word[1:-1]
        if word not in cls._predicates:
            raise p.error(f"custom op '{cls.name}' expected string or keyword containing one "
                          f"of the following enum values for attribute 'predicate' "
                          f"[{', '.join(cls._predicates)}]", tk)
        p.expect(",")
        a = p.parse_operand_ref()
        p.expect(",")
        b = p.parse_operand_ref()
        props = parse_flags(cls, p)
        props["predicate"] = IntegerAttr(cls._predicates.index(word), I64)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(a, t), p.resolve(b, t)], [i1_like(t)], props, attrs)

    def print(self, p):
        ops = self._operands
        p.write(f" {self._predicates[self.properties['predicate'].value]}, "
                f"{p.value(ops[0].value)}, {p.value(ops[1].value)}{flags_text(self)}")
        if self.attributes:
            p.attr_dict(self, elided=self.spec.prop_names)
        p.write(f" : {ops[0].value.type}")


class CmpIOfExt(RewritePattern):
    """`cmpi(p, ext(a), ext(b)) -> cmpi(p', a, b)` for two extensions of one kind from one type.

    Sign extension keeps both the signed and the unsigned order of iN values, so every
    predicate survives it; zero extension keeps equality and the unsigned order, and turns
    the signed order of the wide values into the unsigned order of the narrow ones (slt ->
    ult). MLIR rewrites eq/ne only.
    """

    root = "arith.cmpi"     # CmpIOp is defined below

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a = op.lhs.defining_op(("arith.extui", "arith.extsi"))
        b = op.rhs.defining_op(("arith.extui", "arith.extsi"))
        if a is None or b is None or a.name != b.name or a.in_.type is not b.in_.type:
            return False
        pred = op.properties["predicate"].value
        if a.name == "arith.extui" and 2 <= pred <= 5:
            pred += 4                                       # slt/sle/sgt/sge -> ult/ule/ugt/uge
        rewriter.replace_op_with_new(op, CmpIOp, a.in_, b.in_,
                                     predicate=IntegerAttr(pred, I64))
        return True


# (signed view?, numpy comparison) per predicate, in MLIR's enum order.
_CMPI = ((True, np.equal), (True, np.not_equal), (True, np.less), (True, np.less_equal),
         (True, np.greater), (True, np.greater_equal), (False, np.less),
         (False, np.less_equal), (False, np.greater), (False, np.greater_equal))
_CMPI_REFLEXIVE = (True, False, False, True, False, True, False, True, False, True)


@arith.op
class CmpIOp(_Compare):
    """Integer comparison; `s`/`u` predicates read the bits as signed/unsigned.

        %a = arith.constant 3 : i32
        %r = arith.cmpi slt, %a, %a : i32
    """

    name = "arith.cmpi"
    predicate = Prop(predicate_constraint(10))
    _wide_ints = True
    lhs = Operand(SignlessIntegerLike)
    rhs = Operand(SignlessIntegerLike)
    _predicates = CMPI_PREDICATES
    canonicalization_patterns = (CmpIOfExt,)

    def evaluate(self, a, b):
        is_signed, fn = _CMPI[self.properties["predicate"].value]
        info = int_info(self._operands[0].value.type)
        if is_signed:
            return fn(signed(a, info), signed(b, info))[()]
        return fn(unsigned(a, info), unsigned(b, info))[()]

    def fold_identity(self, operands):
        pred = self.properties["predicate"].value
        rt = self.results[0].type
        x, y = self.lhs, self.rhs
        if x is y:
            a = af.bool_attr_like(_CMPI_REFLEXIVE[pred], rt)   # x <= x -> true, x < x -> false
            return None if a is None else [a]
        c = operands[1]
        if c is not None and pred == 1 and af.is_int_splat(c, 0):
            ext = x.defining_op(("arith.extui", "arith.extsi"))
            if ext is not None and ext.in_.type is rt:
                return [ext.in_]                            # ext(b : i1) != 0 -> b
        if c is not None and x.type is rt and af.elem(rt) is I1:
            if (pred == 0 and af.is_int_splat(c, 1)) or (pred == 1 and af.is_int_splat(c, 0)):
                return [x]                                  # (x == true) -> x, (x != false) -> x
        if operands[0] is not None and c is None:
            # Constant to the right, as for commutative ops: c < x -> x > c (in place).
            self.set_operand(0, y)
            self.set_operand(1, x)
            self.properties["predicate"] = IntegerAttr(CMPI_SWAPPED[pred], I64)
            return list(self.results)
        return None


def _ordered(a, b):
    return ~(np.isnan(a) | np.isnan(b))


def _unordered(a, b):
    return np.isnan(a) | np.isnan(b)


_CMPF = (
    lambda a, b: np.zeros(np.broadcast(a, b).shape, np.bool_)[()],        # false
    np.equal, np.greater, np.greater_equal, np.less, np.less_equal,       # oeq ogt oge olt ole
    lambda a, b: np.less(a, b) | np.greater(a, b),                        # one
    _ordered,                                                             # ord
    lambda a, b: ~(np.less(a, b) | np.greater(a, b)),                     # ueq
    lambda a, b: ~np.less_equal(a, b),                                    # ugt
    lambda a, b: ~np.less(a, b),                                          # uge
    lambda a, b: ~np.greater_equal(a, b),                                 # ult
    lambda a, b: ~np.greater(a, b),                                       # ule
    np.not_equal,                                                         # une
    _unordered,                                                           # uno
    lambda a, b: np.ones(np.broadcast(a, b).shape, np.bool_)[()],         # true
)


#: the outcomes of `float_formats.compare` each cmpf predicate holds for, in enum order
_CMPF_HOLDS = tuple(frozenset(x.split()) for x in (
    "", "eq", "gt", "gt eq", "lt", "lt eq", "lt gt", "lt gt eq", "un eq", "un gt", "un gt eq",
    "un lt", "un lt eq", "un lt gt", "un", "un lt gt eq"))


#: significand bits (with the implicit one) and largest exponent of the float formats whose
#: integer conversions `CmpFOfIntToFP` reasons about (LLVM's getFPMantissaWidth)
_FLOAT_FORMAT = {"f16": (11, 15), "bf16": (8, 127), "f32": (24, 127), "f64": (53, 1023),
                 "tf32": (11, 127)}
#: cmpf predicate (oeq..one, ueq..une) -> the cmpi predicate on the signed view; +4 unsigned
_CMPF_TO_CMPI = {1: 0, 2: 4, 3: 5, 4: 2, 5: 3, 6: 1, 8: 0, 9: 4, 10: 5, 11: 2, 12: 3, 13: 1}


class CmpFOfIntToFP(RewritePattern):
    """`cmpf(p, sitofp(x), c) -> cmpi(p', x, c')` (and for uitofp) when the conversion cannot
    change the comparison's outcome (MLIR's CmpFIntToFPConst, from LLVM's InstCombine).

    Algorithm:
      1. `c` must be a non-NaN constant and the converted value can never be NaN, so ordered
         and unordered predicates agree; `ord` is true and `uno` false.
      2. If x's type is wider than the float's significand, large x round. Rounding is
         monotone, so only a `c` among the values that round (exponent in
         [significand, value bits]) can change the outcome: give up for those, and for an
         infinite `c` when large x could round to infinity.
      3. `c` beyond x's range decides the comparison: a constant.
      4. Otherwise compare x with trunc(c); a fractional `c` turns `==` false, `!=` true and
         moves the bound of `<`, `<=`, `>`, `>=` by one step (x < 4.5 is x <= 4).
    """

    root = "arith.cmpf"     # CmpFOp is defined below

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        attr = constant_value(op.rhs)
        rhs = af.splat_of(attr) if attr is not None else None
        conv = op.lhs.defining_op(("arith.sitofp", "arith.uitofp"))
        fmt = _FLOAT_FORMAT.get(getattr(af.elem(op.rhs.type), "name", ""))
        if rhs is None or rhs != rhs or fmt is None or conv is None:
            return False
        rhs = float(rhs)
        x = conv.in_
        info = af.int_info(x.type)
        unsigned = conv.name == "arith.uitofp"
        width = info.width
        value_bits = width if unsigned else width - 1
        mantissa, max_exp = fmt
        pred = op.properties["predicate"].value
        if width > mantissa:
            if math.isinf(rhs):
                if max_exp < value_bits:
                    return False                            # x could round to infinity
            elif rhs != 0.0 and mantissa <= math.frexp(rhs)[1] - 1 <= value_bits:
                return False                                # x could round across c
        if pred in (7, 14):                                 # ord, uno
            return _replace_with_bool(rewriter, op, pred == 7)
        ipred = _CMPF_TO_CMPI.get(pred)
        if ipred is None:
            return False                                    # false/true fold instead
        if unsigned and ipred >= 2:
            ipred += 4
        if unsigned:
            lo, hi = 0, (1 << width) - 1
        else:
            lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        if rhs > hi:                                        # x < c for every x
            return _replace_with_bool(rewriter, op, ipred in (1, 2, 3, 6, 7))
        if rhs < lo:                                        # x > c for every x
            return _replace_with_bool(rewriter, op, ipred in (1, 4, 5, 8, 9))
        k = math.trunc(rhs)
        if k != rhs:
            # c is fractional; k is c rounded toward zero.
            if ipred in (0, 1):
                return _replace_with_bool(rewriter, op, ipred == 1)   # x == 4.5 is false
            neg = rhs < 0
            ipred = {3: 2 if neg else 3, 2: 2 if neg else 3,          # sle/slt
                     5: 5 if neg else 4, 4: 5 if neg else 4,          # sge/sgt
                     7: 7, 6: 7, 9: 8, 8: 8}[ipred]                   # ule/ult, uge/ugt
        if info.is_bool:
            k_attr = af.bool_attr_like(k != 0, x.type)
        else:   # stored as the signed value of its bits (uitofp: 200 in i8 is -56)
            k_attr = af.value_to_attr(k - (1 << width) if k >= 1 << (width - 1) else k,
                                      x.type)
        kv = rewriter.insert(ConstantOp.materialize(k_attr, x.type)).results[0]
        rewriter.replace_op_with_new(op, CmpIOp, x, kv, predicate=IntegerAttr(ipred, I64))
        return True


def _replace_with_bool(rewriter: PatternRewriter, op: Operation, value: bool) -> bool:
    rt = op.results[0].type
    rewriter.replace_op(op, rewriter.insert(_bool_constant(value, rt)).results)
    return True


@arith.op
class CmpFOp(_Compare):
    """Float comparison: `o` predicates are false and `u` predicates true if a NaN is seen.

        %a = arith.constant 1.5 : f32
        %r = arith.cmpf ult, %a, %a : f32
    """

    name = "arith.cmpf"
    predicate = Prop(predicate_constraint(16))
    lhs = Operand(FloatLike)
    rhs = Operand(FloatLike)
    fastmath = Prop(FastMathAttr, default=FASTMATH_NONE)
    _flags = ("fastmath",)
    _flag_prop = "fastmath"
    _flag_kind = FASTMATH
    _flag_default = FASTMATH_NONE
    _predicates = CMPF_PREDICATES
    canonicalization_patterns = (CmpFOfIntToFP,)

    def evaluate(self, a, b):
        return _CMPF[self.properties["predicate"].value](a, b)

    def _soft(self, a, b):
        return ff.compare(a, b) in _CMPF_HOLDS[self.properties["predicate"].value]

    def fold_identity(self, operands):
        pred = self.properties["predicate"].value
        rt = self.results[0].type
        if pred in (0, 15):
            value = pred == 15                              # cmpf false/true -> constant
        else:
            for c in operands:
                v = af.splat_of(c) if c is not None else None
                if v is not None and v != v:
                    break
            else:
                return None
            value = pred >= 8                               # NaN: ordered false, unordered true
        a = af.bool_attr_like(value, rt)
        return None if a is None else [a]


# ---------------------------------------------------------------------------------------------
# Select
# ---------------------------------------------------------------------------------------------


class SelectOfBoolConstants(RewritePattern):
    """`select(c, false, true) -> c ^ true` for i1 values, and for wider integers
    `select(c, 1, 0) -> extui(c)`, `select(c, 0, 1) -> extui(c ^ true)`: a choice between 0
    and 1 is the condition's bit itself.

    The condition must have the result's shape (a scalar i1 choosing between two vectors
    cannot become an elementwise op); MLIR does the wider forms for scalars only.
    """

    root = "arith.select"   # SelectOp is defined below

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        rt = op.results[0].type
        cond = op.condition
        et = af.elem(rt)
        if not isinstance(et, IntegerType) or cond.type is not i1_like(rt):
            return False
        a, b = constant_value(op.true_value), constant_value(op.false_value)
        if a is None or b is None:
            return False
        if af.is_int_splat(a, 0) and af.is_int_splat(b, 1):
            true = rewriter.insert(_bool_constant(True, cond.type))
            cond = rewriter.create(XOrIOp, cond, true.results[0]).results[0]
        elif not (af.is_int_splat(a, 1) and af.is_int_splat(b, 0)) or et is I1:
            return False                                    # select(c, true, false) folds
        if et is I1:
            rewriter.replace_op(op, [cond])
        else:
            rewriter.replace_op_with_new(op, ExtUIOp, cond, result_types=[rt])
        return True


def _bool_constant(value: bool, t):
    return ConstantOp.materialize(af.bool_attr_like(value, t), t)


@arith.op
class SelectOp(ArithOp):
    """Chooses between two values by an i1 (or elementwise by an i1 vector/tensor).

        %c = arith.constant true
        %a = arith.constant 1.5 : f32
        %r = arith.select %c, %a, %a : f32
    """

    name = "arith.select"
    condition = Operand(BoolLike)
    true_value = Operand(AnyType)
    false_value = Operand(AnyType)
    result = Result(AnyType)
    traits = (Pure(), Elementwise())

    def infer_result_types(self):
        return [self._operands[1].value.type]

    def verify_(self):
        ops = self._operands
        t = self.results[0].type
        if ops[1].value.type is not t or ops[2].value.type is not t:
            raise self.error("failed to verify that all of {true_value, false_value, result} "
                             "have same type")
        ct = ops[0].value.type
        if isinstance(ct, ShapedType):
            if type(ct) is not type(t) or \
                    getattr(ct, "scalable", None) != getattr(t, "scalable", None):
                raise self.error("all non-scalar operands/results must have the same shape "
                                 "and base type")
            if ct.shape != getattr(t, "shape", None):       # MLIR's two rules, its order
                raise self.error("failed to verify that condition is signless i1 or has "
                                 "matching shape")
            if ct is not i1_like(t):    # a tensor mask also carries the result's encoding
                raise self.error(f"expected condition type to have the same shape as the "
                                 f"result type, expected '{i1_like(t)}', but got '{ct}'")

    @classmethod
    def parse(cls, p, num_results):
        refs = [p.parse_operand_ref()]
        for _ in range(2):
            p.expect(",")
            refs.append(p.parse_operand_ref())
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        tk = p.i
        types = p.parse_type_list()
        if len(types) > 2:
            raise p.error("expected at most two types (condition, result)", tk)
        ct, t = (I1, types[0]) if len(types) == 1 else types
        return make(cls, [p.resolve(refs[0], ct), p.resolve(refs[1], t), p.resolve(refs[2], t)],
                    [t], None, attrs)

    def print(self, p):
        ops = self._operands
        p.write(f" {p.value(ops[0].value)}, {p.value(ops[1].value)}, {p.value(ops[2].value)}")
        if self.attributes or self.properties:
            p.attr_dict(self)
        ct = ops[0].value.type
        p.write(f" : {self.results[0].type}" if ct is I1
                else f" : {ct}, {self.results[0].type}")

    def evaluate(self, c, a, b):
        if isinstance(c, np.ndarray):
            return np.where(c, a, b)
        return a if c else b

    def fold_identity(self, operands):
        ops = self._operands
        if ops[1].value is ops[2].value:
            return [ops[1].value]                           # select(c, x, x) -> x
        c = operands[0]
        if c is not None:
            v = af.splat_of(c)
            if v is not None:
                return [ops[1].value if v else ops[2].value]   # select(true, a, b) -> a
        rt = self.results[0].type
        if (ops[0].value.type is rt and operands[1] is not None and operands[2] is not None
                and af.is_int_splat(operands[1], 1) and af.is_int_splat(operands[2], 0)):
            return [ops[0].value]                           # select(c, true, false) -> c
        cmp = self.condition.defining_op(CmpIOp)
        if cmp is not None and cmp.properties["predicate"].value in (0, 1):
            a, b = self.true_value, self.false_value
            if (cmp.lhs is a and cmp.rhs is b) or (cmp.lhs is b and cmp.rhs is a):
                # Where a == b both choices are equal, so take the one chosen elsewhere.
                return [b if cmp.properties["predicate"].value == 0 else a]
        return None

    canonicalization_patterns = (
        peephole("arith.select(c, arith.select(c, a, b), d) -> arith.select(c, a, d)"),
        # c ? (c ? a : b) : d = c ? a : d
        peephole("arith.select(c, a, arith.select(c, b, d)) -> arith.select(c, a, d)"),
        # c ? a : (c ? b : d) = c ? a : d
        peephole("arith.select(arith.xori(c, true), a, b) -> arith.select(c, b, a)"),
        # !c ? a : b = c ? b : a
        SelectOfBoolConstants,
    )
