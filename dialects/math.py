"""The `math` dialect: elementary functions on floats (and a few integer bit ops), with
MLIR 22's names, `fastmath` properties and custom syntax (`%r = math.exp %x : f32`).

Ops reuse the `arith` machinery (flags, custom syntax, constant folding through `evaluate`),
so a math op is its class, its docstring and its numpy kernel. Kernels compute in the
operand's own precision (f32 stays float32); `erf`/`erfc` go through Python's `math` module
element by element since numpy has no erf.
"""

from __future__ import annotations

import math as _libm

import numpy as np

from irkit.opdef import (
    BoolLike, Dialect, Elementwise, FloatLike, Operand, Pure, Result, SameOperandsAndResultType,
    SignlessIntegerLike,
)
from irkit.types import F64, I1
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.base import (
    ArithOp, BinaryOp, UnaryOp, elem, flags_text, i1_like, int_binary, int_info, make,
    parse_flags, print_attrs, signed, unsigned, wrap,
)
from irkit.dialects.arith import materialize_constant
from irkit.dialects.arith.floating import FastMathOp

math = Dialect("math", "Elementary functions on scalars, vectors and tensors.")
# Folded math values are plain numbers: they become `arith.constant`s, as in MLIR.
math.constant_materializer = materialize_constant

_FLOAT_TRAITS = (Pure(), SameOperandsAndResultType(), Elementwise())


class _FloatUnary(UnaryOp, FastMathOp):
    """`%r = math.op %x [fastmath<...>] : T` computing `_kernel(x)` elementwise."""

    __slots__ = ()
    operand = Operand(FloatLike)
    result = Result(FloatLike)
    traits = _FLOAT_TRAITS

    def evaluate(self, x):
        return _rounded_once(self._kernel, self.results[0].type, x)


class _FloatBinary(BinaryOp, FastMathOp):
    __slots__ = ()
    lhs = Operand(FloatLike)
    rhs = Operand(FloatLike)
    result = Result(FloatLike)
    traits = _FLOAT_TRAITS

    def evaluate(self, a, b):
        return _rounded_once(self._kernel, self.results[0].type, a, b)


def _rounded_once(kernel, t, *xs):
    """`kernel` on f16/bf16/f32 values computed in f64 and rounded once to the IR type.

    numpy's float32 routines are off by an ulp or two (log10(100) = 2.00000024); the f64
    result rounded to f32 is the correctly rounded value in all but vanishingly rare cases,
    which makes the reference semantics (and thus folding) exact where it can be.
    """
    dtype = np.asarray(xs[0]).dtype
    if dtype in (np.float16, np.float32):
        wide = kernel(*(np.asarray(x, np.float64) for x in xs))
        return af.fix_float(np.asarray(wide).astype(dtype)[()], t)
    return af.fix_float(kernel(*xs), t)


def _unary(op_name: str, kernel, summary: str, operand: str = "0.5", base=None):
    """Declare a float unary op: a class with its docstring example and kernel."""
    short = op_name.split(".")[1]
    cls = type(f"{short.capitalize()}Op", (base or _FloatUnary,), {
        "__doc__": f"{summary}\n\n        %x = arith.constant {operand} : f32\n"
                   f"        %r = {op_name} %x : f32\n    ",
        "__slots__": (), "name": op_name, "_kernel": staticmethod(kernel),
        "__module__": __name__,
    })
    return math.op(cls)


_ROUNDING = ("math.ceil", "math.floor", "math.round", "math.roundeven", "math.trunc")


class _Rounding(_FloatUnary):
    """Rounding to an integral value: the result of any rounding op is already integral (or
    inf, NaN, a signed zero), and every rounding op leaves those unchanged."""

    __slots__ = ()

    def fold_identity(self, operands):
        if self.operand.defining_op(_ROUNDING) is not None:
            return [self.operand]                           # floor(trunc(x)) -> trunc(x)
        return None


class _AbsF(_FloatUnary):
    """|x| only clears the sign bit, so a sign set or flipped before it does not matter."""

    __slots__ = ()

    def _soft(self, x):
        return x.with_sign(False)                   # exact in every format, NaN included

    def fold_identity(self, operands):
        inner = self.operand.defining_op(("math.absf", "arith.negf"))
        if inner is None:
            return None
        if inner.name == "math.absf":
            return [self.operand]                           # |(|x|)| -> |x|
        if inner.name == "arith.negf":
            self.set_operand(0, inner.operand)              # |-x| -> |x| (in place)
            return list(self.results)
        return None


def _erf(fn):
    vec = np.frompyfunc(fn, 1, 1)

    def kernel(x):
        a = np.asarray(x)
        return np.asarray(vec(a), dtype=np.float64).astype(a.dtype)[()]
    return kernel


def _rsqrt(x):
    return np.asarray(x).dtype.type(1) / np.sqrt(x)


def _pow(a, b):
    """C's `pow` (what MLIR lowers powf to). numpy's `power` with a 0-d exponent of 0.5 takes
    a `sqrt` shortcut that is wrong at -0 and -inf (`pow` gives +0 and +inf), so scalars go
    through the array path, as vector lanes do."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return np.power(np.atleast_1d(a), np.atleast_1d(b)).reshape(shape)[()]


def _round_away(x):
    """Round half away from zero; `x - trunc(x)` is exact, so no double rounding."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)[()]


# Elementary functions, one line each: name, kernel, what it computes (docstring).
ExpOp = _unary("math.exp", np.exp, "e raised to x.")
Exp2Op = _unary("math.exp2", np.exp2, "2 raised to x.")
ExpM1Op = _unary("math.expm1", np.expm1, "e^x - 1, accurate near zero.")
LogOp = _unary("math.log", np.log, "Natural logarithm (NaN below zero, -inf at zero).")
Log2Op = _unary("math.log2", np.log2, "Base-2 logarithm.")
Log10Op = _unary("math.log10", np.log10, "Base-10 logarithm.")
Log1pOp = _unary("math.log1p", np.log1p, "log(1 + x), accurate near zero.")
SqrtOp = _unary("math.sqrt", np.sqrt, "Square root (NaN below zero).")
RsqrtOp = _unary("math.rsqrt", _rsqrt, "Reciprocal square root 1 / sqrt(x).")
CbrtOp = _unary("math.cbrt", np.cbrt, "Cube root (defined for negative x).")
SinOp = _unary("math.sin", np.sin, "Sine (radians).")
CosOp = _unary("math.cos", np.cos, "Cosine (radians).")
TanOp = _unary("math.tan", np.tan, "Tangent (radians).")
TanhOp = _unary("math.tanh", np.tanh, "Hyperbolic tangent.")
SinhOp = _unary("math.sinh", np.sinh, "Hyperbolic sine.")
CoshOp = _unary("math.cosh", np.cosh, "Hyperbolic cosine.")
AsinOp = _unary("math.asin", np.arcsin, "Arcsine (NaN outside [-1, 1]).")
AcosOp = _unary("math.acos", np.arccos, "Arccosine (NaN outside [-1, 1]).")
AtanOp = _unary("math.atan", np.arctan, "Arctangent.")
AsinhOp = _unary("math.asinh", np.arcsinh, "Inverse hyperbolic sine.")
AcoshOp = _unary("math.acosh", np.arccosh, "Inverse hyperbolic cosine.", "1.5")
AtanhOp = _unary("math.atanh", np.arctanh, "Inverse hyperbolic tangent.")
ErfOp = _unary("math.erf", _erf(_libm.erf), "Error function.")
ErfcOp = _unary("math.erfc", _erf(_libm.erfc), "Complementary error function 1 - erf(x).")
AbsFOp = _unary("math.absf", np.abs, "Absolute value (clears the sign bit).", "-0.5", _AbsF)
CeilOp = _unary("math.ceil", np.ceil, "Round toward +infinity.", base=_Rounding)
FloorOp = _unary("math.floor", np.floor, "Round toward -infinity.", base=_Rounding)
RoundOp = _unary("math.round", _round_away, "Round to nearest, ties away from zero.",
                 base=_Rounding)
RoundEvenOp = _unary("math.roundeven", np.rint, "Round to nearest, ties to even.",
                     base=_Rounding)
TruncOp = _unary("math.trunc", np.trunc, "Round toward zero.", base=_Rounding)


@math.op
class Atan2Op(_FloatBinary):
    """Arctangent of lhs/rhs using both signs to pick the quadrant.

        %y = arith.constant 1.0 : f32
        %r = math.atan2 %y, %y : f32
    """

    name = "math.atan2"
    _kernel = staticmethod(np.arctan2)


@math.op
class PowFOp(_FloatBinary):
    """lhs raised to the float power rhs.

        %x = arith.constant 2.0 : f32
        %r = math.powf %x, %x : f32
    """

    name = "math.powf"
    _kernel = staticmethod(_pow)

    def fold_identity(self, operands):
        c = operands[1]
        if c is None:
            return None
        if af.is_float_splat(c, 1.0):
            return [self.lhs]                               # x ** 1 -> x (NaN, -0 included)
        if af.is_float_splat(c, 0.0) or af.is_float_splat(c, 0.0, True):
            one = af.value_to_attr(1.0, self.results[0].type)
            return None if one is None else [one]           # x ** 0 -> 1 (C pow: NaN too)
        return None


@math.op
class CopySignOp(_FloatBinary):
    """lhs with the sign bit of rhs.

        %x = arith.constant -2.0 : f32
        %r = math.copysign %x, %x : f32
    """

    name = "math.copysign"
    _kernel = staticmethod(np.copysign)

    def _soft(self, a, b):
        return a.with_sign(b.sign)                  # exact in every format, NaN included

    def fold_identity(self, operands):
        return [self.lhs] if self.lhs is self.rhs else None    # copysign(x, x) -> x


@math.op
class FmaOp(FastMathOp):
    """Fused multiply-add a * b + c with one rounding (f16/f32 exact via f64).

        %x = arith.constant 2.0 : f32
        %r = math.fma %x, %x, %x : f32
    """

    name = "math.fma"
    a = Operand(FloatLike)
    b = Operand(FloatLike)
    c = Operand(FloatLike)
    result = Result(FloatLike)
    traits = _FLOAT_TRAITS

    def infer_result_types(self):
        return [self._operands[0].value.type]

    def evaluate(self, a, b, c):
        # f16/f32 products are exact in f64; f64 itself is not fused here (numpy has no fma).
        dtype = np.asarray(a).dtype
        p, c = np.asarray(a, np.float64) * np.asarray(b, np.float64), np.asarray(c, np.float64)
        wide = _sum_rounded_to_odd(p, c) if dtype in (np.float16, np.float32) else p + c
        return af.fix_float(wide.astype(dtype)[()], self.results[0].type)

    @classmethod
    def parse(cls, p, num_results):
        refs = [p.parse_operand_ref()]
        for _ in range(2):
            p.expect(",")
            refs.append(p.parse_operand_ref())
        props = parse_flags(cls, p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(r, t) for r in refs], [t], props, attrs)

    def print(self, p):
        p.write(" " + ", ".join(p.value(o.value) for o in self._operands) + flags_text(self))
        print_attrs(self, p)
        p.write(f" : {self.results[0].type}")


def _sum_rounded_to_odd(p, c):
    """p + c in f64 rounded to odd: where the sum is inexact, the one of its two f64
    neighbours with an odd last bit. Rounding that to f32 or f16 is then the single rounding
    of the exact sum (53 >= 2 * 24 + 2 bits); rounding the nearest f64 instead rounds twice
    (1 + 2^-11 + 2^-24 + 2^-80 would round to the tie and then to even, an ulp low)."""
    with np.errstate(all="ignore"):
        s = p + c
        bc = s - p
        err = (p - (s - bc)) + (c - bc)         # exact p + c - s (Knuth's TwoSum)
        even = (np.asarray(s).view(np.int64) & 1) == 0
        fix = np.isfinite(s) & (err != 0) & even
        return np.where(fix, np.nextafter(s, np.copysign(np.inf, err)), s)


@math.op
class ClampFOp(FastMathOp):
    """`value` clamped to [`min`, `max`]: `maximumf(minimumf(value, max), min)`, so a NaN
    anywhere gives NaN and `min` wins where `min > max`.

        %x = arith.constant 2.5 : f32
        %r = math.clampf %x to [%x, %x] : f32

    MLIR 22's documentation and its `math-expand-ops` spell the formula with `min` and `max`
    the other way round (`maximumf(minimumf(value, min), max)`, which is `max` for every
    ordered `min <= max`); upstream MLIR has since corrected it to the clamp above, which
    is what this op computes.
    """

    name = "math.clampf"
    value = Operand(FloatLike)
    min = Operand(FloatLike)
    max = Operand(FloatLike)
    result = Result(FloatLike)
    traits = _FLOAT_TRAITS

    def infer_result_types(self):
        return [self.value.type]

    def evaluate(self, value, lo, hi):
        return af.maximumf(af.minimumf(value, hi), lo)

    @classmethod
    def parse(cls, p, num_results):
        x = p.parse_operand_ref()
        p.expect("to")
        p.expect("[")
        lo = p.parse_operand_ref()
        p.expect(",")
        hi = p.parse_operand_ref()
        p.expect("]")
        props = parse_flags(cls, p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(r, t) for r in (x, lo, hi)], [t], props, attrs)

    def print(self, p):
        p.write(f" {p.value(self.value)} to [{p.value(self.min)}, {p.value(self.max)}]"
                f"{flags_text(self)}")
        print_attrs(self, p)
        p.write(f" : {self.result.type}")


@math.op
class FPowIOp(FastMathOp):
    """Float base raised to a signless integer power.

        %x = arith.constant 2.0 : f32
        %n = arith.constant 3 : i32
        %r = math.fpowi %x, %n : f32, i32
    """

    name = "math.fpowi"
    lhs = Operand(FloatLike)
    rhs = Operand(SignlessIntegerLike)
    result = Result(FloatLike)
    traits = (Pure(), Elementwise())

    def infer_result_types(self):
        return [self._operands[0].value.type]

    def verify_(self):
        lt, rt = self._operands[0].value.type, self._operands[1].value.type
        if self.results[0].type is not lt:
            raise self.error("failed to verify that all of {lhs, result} have same type")
        if af.shape_key(lt) != af.shape_key(rt):
            raise self.error("failed to verify that all of {lhs, rhs} have same shape")

    def evaluate(self, x, n):
        # The exponent goes to f64 exactly (an i32 in f32 would round 2^31 - 1 to an even
        # power), and the power is rounded once: numpy's float32 arrays otherwise take a
        # SIMD path an ulp off the scalar one, so a vector lane would differ from a scalar.
        e = signed(n, int_info(self._operands[1].value.type)).astype(np.float64)
        return _rounded_once(_pow, self.results[0].type, x, e)

    def fold_identity(self, operands):
        return _power_identity(self, operands, 1.0)

    @classmethod
    def parse(cls, p, num_results):
        a = p.parse_operand_ref()
        p.expect(",")
        b = p.parse_operand_ref()
        props = parse_flags(cls, p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        ft = p.parse_type()
        p.expect(",")
        it = p.parse_type()
        return make(cls, [p.resolve(a, ft), p.resolve(b, it)], [ft], props, attrs)

    def print(self, p):
        a, b = self._operands[0].value, self._operands[1].value
        p.write(f" {p.value(a)}, {p.value(b)}{flags_text(self)}")
        print_attrs(self, p)
        p.write(f" : {a.type}, {b.type}")


@math.op
class SinCosOp(FastMathOp):
    """Sine and cosine of one operand, as two results.

        %x = arith.constant 0.5 : f32
        %s:2 = math.sincos %x : f32
    """

    name = "math.sincos"
    operand = Operand(FloatLike)
    sin = Result(FloatLike)
    cos = Result(FloatLike)
    traits = _FLOAT_TRAITS

    def infer_result_types(self):
        t = self._operands[0].value.type
        return [t, t]

    def evaluate(self, x):
        t = self.results[0].type
        return _rounded_once(np.sin, t, x), _rounded_once(np.cos, t, x)

    @classmethod
    def parse(cls, p, num_results):
        a = p.parse_operand_ref()
        props = parse_flags(cls, p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(a, t)], [t, t], props, attrs)

    print = UnaryOp.print


class _FloatPredicate(UnaryOp, FastMathOp):
    """`%r = math.isX %x : T` with an i1 result of T's shape."""

    __slots__ = ()
    operand = Operand(FloatLike)
    result = Result(BoolLike)
    traits = (Pure(), Elementwise())

    def infer_result_types(self):
        return [i1_like(self._operands[0].value.type)]

    def verify_(self):
        if self.results[0].type is not i1_like(self._operands[0].value.type):
            raise self.error("failed to verify that result type has i1 element type and same "
                             "shape as operands")

    @classmethod
    def parse(cls, p, num_results):
        a = p.parse_operand_ref()
        props = parse_flags(cls, p)
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(a, t)], [i1_like(t)], props, attrs)

    def print(self, p):
        v = self._operands[0].value
        p.write(f" {p.value(v)}{flags_text(self)}")
        print_attrs(self, p)
        p.write(f" : {v.type}")

    def evaluate(self, x):
        return self._kernel(x)[()]


def _isnormal(x):
    a = np.asarray(x)
    return np.isfinite(a) & (np.abs(a) >= np.finfo(a.dtype).smallest_normal)


def _predicate(op_name: str, kernel, summary: str):
    short = op_name.split(".")[1]
    cls = type(f"Is{short[2:].capitalize()}Op", (_FloatPredicate,), {
        "__doc__": f"{summary}\n\n        %x = arith.constant 0.5 : f32\n"
                   f"        %r = {op_name} %x : f32\n    ",
        "__slots__": (), "name": op_name, "_kernel": staticmethod(kernel),
        "__module__": __name__,
    })
    return math.op(cls)


IsNanOp = _predicate("math.isnan", np.isnan, "True where x is NaN.")
IsInfOp = _predicate("math.isinf", np.isinf, "True where x is +-infinity.")
IsFiniteOp = _predicate("math.isfinite", np.isfinite, "True where x is neither inf nor NaN.")
IsNormalOp = _predicate("math.isnormal", _isnormal,
                        "True where x is finite, nonzero and not subnormal.")


# ----- integer ops ----------------------------------------------------------------------------

class _IntUnary(UnaryOp):
    __slots__ = ()
    operand = Operand(SignlessIntegerLike)
    result = Result(SignlessIntegerLike)
    traits = _FLOAT_TRAITS

    def evaluate(self, x):
        info = int_info(self.results[0].type)
        return wrap(self._kernel(unsigned(x, info), signed(x, info), info.width), info)


def _bit_length(u):
    """Number of significant bits of each uint64 (0 for 0), by binary search on shifts."""
    n = np.zeros(np.shape(u), dtype=np.uint64)
    v = np.asarray(u, dtype=np.uint64)
    for s in (32, 16, 8, 4, 2, 1):
        big = (v >> np.uint64(s)) != 0
        n = n + np.where(big, np.uint64(s), np.uint64(0))
        v = np.where(big, v >> np.uint64(s), v)
    return n + (v != 0)


@math.op
class AbsIOp(_IntUnary):
    """Integer absolute value (the minimum value maps to itself).

        %a = arith.constant -5 : i32
        %r = math.absi %a : i32
    """

    name = "math.absi"
    _kernel = staticmethod(lambda u, s, w: np.abs(s))


@math.op
class CountLeadingZerosOp(_IntUnary):
    """Number of leading zero bits (the width for 0).

        %a = arith.constant 5 : i32
        %r = math.ctlz %a : i32
    """

    name = "math.ctlz"
    _kernel = staticmethod(lambda u, s, w: np.uint64(w) - _bit_length(u))


@math.op
class CountTrailingZerosOp(_IntUnary):
    """Number of trailing zero bits (the width for 0).

        %a = arith.constant 8 : i32
        %r = math.cttz %a : i32
    """

    name = "math.cttz"
    _kernel = staticmethod(lambda u, s, w: np.where(
        u == 0, np.uint64(w), _bit_length(u & (~u + np.uint64(1))) - np.uint64(1)))


@math.op
class CtPopOp(_IntUnary):
    """Number of set bits.

        %a = arith.constant 7 : i32
        %r = math.ctpop %a : i32
    """

    name = "math.ctpop"
    _kernel = staticmethod(lambda u, s, w: np.bitwise_count(u))


@math.op
class IPowIOp(BinaryOp):
    """Integer power, wrapping; negative exponents give 0 unless the base is 1 or -1.

        %a = arith.constant 3 : i32
        %r = math.ipowi %a, %a : i32
    """

    name = "math.ipowi"
    lhs = Operand(SignlessIntegerLike)
    rhs = Operand(SignlessIntegerLike)
    result = Result(SignlessIntegerLike)
    traits = _FLOAT_TRAITS

    def evaluate(self, a, b):
        return int_binary(af.ipow, True, a, b, self.results[0].type)

    def _poison(self, a, b):
        info = int_info(self.results[0].type)
        return bool(np.any((signed(a, info) == 0) & (signed(b, info) < 0)))  # 0 ** -n

    def fold_identity(self, operands):
        return _power_identity(self, operands, 1)


def _power_identity(op, operands, one):
    """x ** 1 -> x and x ** 0 -> 1 for an integer exponent (0 ** 0 and NaN ** 0 are 1)."""
    c = operands[1]
    if c is None:
        return None
    if af.is_int_splat(c, 1) and af.elem(c.type) is not I1:
        return [op.lhs]
    if af.is_int_splat(c, 0):
        r = af.value_to_attr(one, op.results[0].type)
        return None if r is None else [r]
    return None


_ = (ArithOp, F64, elem)
