"""MLIR's float formats in software, bit for bit: what LLVM's APFloat is to MLIR.

Why this exists: a float constant in MLIR is an APFloat, the exact bits of its own format,
and folding computes with IEEE arithmetic rounded once into that format. numpy has only
f16/f32/f64 (and, on x86, the 80-bit long double), Python floats are f64, and both quiet a
signaling NaN in any arithmetic or conversion. So irkit's attributes store bits
(`FloatAttr.bits`) and everything that must be exact works here on Python integers:

- `FloatFormat`: the 18 builtin float types (IEEE, bf16, tf32, x87 f80, the f8/f6/f4
  families with their NaN-only and finite-only variants) by their layout and rules;
- `SoftFloat`: one value of a format; decoded from bits, rounded into a format from an exact
  rational, encoded back to bits;
- arithmetic (`add`, `sub`, `mul`, `div`, `mod`), comparisons, IEEE min/max, conversions
  between formats and to and from integers, all exact and then rounded once, with APFloat's
  NaN rules (the left operand's NaN wins, quieted; an invalid operation gives the format's
  default NaN);
- MLIR's spelling: `mlir_text` (six-digit scientific if that reads back exactly, else
  APFloat's shortest-exact default form, else the hex bits), `parse_decimal` (a literal
  rounded once, exactly, into the format).

One deliberate difference from MLIR: MLIR reads a decimal literal as an f64 first and then
converts, so `0.1 : f80` is f64's 0.1 and an f80 constant MLIR prints in decimal does not
read back. irkit rounds the literal once into the target format, so every printed constant
reads back as the same bits; for every format up to f64 the two agree (an f64 rounding can
only differ from a direct one on an exact tie of the target format, which is re-done
exactly here).
"""

from __future__ import annotations

import math
import struct

#: rounding modes, in the order of MLIR's `arith` roundingmode enum
NEAREST_EVEN, DOWNWARD, UPWARD, TOWARD_ZERO, NEAREST_AWAY = range(5)

# Status flags of an operation (APFloat's opStatus).
OK, INVALID, DIV_BY_ZERO, OVERFLOW, UNDERFLOW, INEXACT = 0, 1, 2, 4, 8, 16

ZERO, FINITE, INF, NAN = "zero", "finite", "inf", "nan"


class FloatFormat:
    """The layout and rules of one float type.

    `precision` counts the significand bits including the leading one; `max_exp` and
    `min_exp` are the exponents of the largest and smallest normal binades. `nonfinite` is
    "ieee" (infinities and NaNs), "nan_only" (no infinity: overflow gives NaN) or
    "finite_only" (no infinity or NaN: overflow saturates); `nan` says how a NaN-only
    format spells its NaN: "all_ones" (exponent and mantissa all ones) or "negative_zero"
    (the sign bit alone, so there is no -0).
    """

    __slots__ = ("name", "width", "precision", "max_exp", "min_exp", "nonfinite", "nan",
                 "has_zero", "signed", "explicit", "man_bits", "exp_bits", "bias", "exp_max",
                 "default_digits")

    def __init__(self, name: str, width: int, precision: int, max_exp: int, min_exp: int,
                 nonfinite: str = "ieee", nan: str = "ieee", has_zero: bool = True,
                 signed: bool = True, explicit: bool = False) -> None:
        self.name = name
        self.width = width
        self.precision = precision
        self.max_exp = max_exp
        self.min_exp = min_exp
        self.nonfinite = nonfinite
        self.nan = nan
        self.has_zero = has_zero
        self.signed = signed
        self.explicit = explicit                # x87: the leading one is stored
        self.man_bits = precision if explicit else precision - 1
        self.exp_bits = width - int(signed) - self.man_bits
        self.exp_max = (1 << self.exp_bits) - 1
        # Without a zero (f8E8M0FNU) the all-zeros exponent is a normal binade, not denormals.
        self.bias = -min_exp if not has_zero else 1 - min_exp
        # APFloat's default `toString` precision (Steele & White): enough digits to read back.
        self.default_digits = 2 + precision * 59 // 196

    def __repr__(self) -> str:
        return f"<float format {self.name}>"

    @property
    def has_nan(self) -> bool:
        return self.nonfinite != "finite_only"

    @property
    def has_inf(self) -> bool:
        return self.nonfinite == "ieee"

    # ----- bits -> value ------------------------------------------------------------------

    def decode(self, bits: int) -> "SoftFloat":
        """The value `bits` spell; non-canonical x87 encodings read as APFloat reads them."""
        bits &= (1 << self.width) - 1
        sign = bool(bits >> (self.width - 1)) if self.signed else False
        field = (bits >> self.man_bits) & self.exp_max
        man = bits & ((1 << self.man_bits) - 1)
        p = self.precision
        if self.explicit:
            return self._decode_x87(sign, field, man)
        if self.nonfinite == "ieee" and field == self.exp_max:
            return SoftFloat(self, sign, INF if man == 0 else NAN, man, 0)
        if self.nan == "all_ones" and field == self.exp_max and man == (1 << self.man_bits) - 1:
            return SoftFloat(self, sign, NAN, man, 0)
        if self.nan == "negative_zero" and sign and field == 0 and man == 0:
            return SoftFloat(self, True, NAN, 0, 0)
        if field == 0 and self.has_zero:
            if man == 0:
                return SoftFloat(self, sign, ZERO, 0, 0)
            return SoftFloat(self, sign, FINITE, man, self.min_exp - (p - 1))
        return SoftFloat(self, sign, FINITE, man | (1 << (p - 1)), field - self.bias - (p - 1))

    def _decode_x87(self, sign: bool, field: int, man: int) -> "SoftFloat":
        # As APFloat's initFromF80LongDoubleAPInt: an unnormal (integer bit clear above the
        # denormal binade) or a pseudo-NaN/infinity reads as a NaN whose payload is the
        # significand; a pseudo-denormal is the normal value it equals.
        top = 1 << 63
        if field == self.exp_max:
            return SoftFloat(self, sign, INF if man == top else NAN, man, 0)
        if field != 0 and not man & top:
            return SoftFloat(self, sign, NAN, man, 0)
        if field == 0:
            if man == 0:
                return SoftFloat(self, sign, ZERO, 0, 0)
            return SoftFloat(self, sign, FINITE, man, self.min_exp - 63)
        return SoftFloat(self, sign, FINITE, man, field - self.bias - 63)

    # ----- rounding -----------------------------------------------------------------------

    def round(self, sign: bool, num: int, den: int = 1, exp2: int = 0,
              mode: int = NEAREST_EVEN) -> tuple["SoftFloat", int]:
        """`(-1)**sign * num / den * 2**exp2` (num >= 0, den > 0) rounded once into this
        format, and the status (INEXACT, OVERFLOW, UNDERFLOW) the rounding raised."""
        if num == 0:
            return self._zero(sign), OK
        p = self.precision
        # e: the exponent of the leading binary digit, 2**e <= num/den * 2**exp2 < 2**(e+1).
        e = num.bit_length() - den.bit_length()
        if (num < den << e) if e >= 0 else (num << -e < den):
            e -= 1
        e += exp2
        q = max(e, self.min_exp) - (p - 1)                  # the weight of the last kept bit
        shift = exp2 - q
        n, d = (num << shift, den) if shift >= 0 else (num, den << -shift)
        m, r = divmod(n, d)
        status = OK
        if r:
            status = INEXACT
            if _round_up(mode, sign, m, 2 * r, d):
                m += 1
            if m == 1 << p:
                m >>= 1
                q += 1
            if m < 1 << (p - 1) or not self.has_zero and e < self.min_exp:
                status |= UNDERFLOW
        if m == 0:
            return self._zero(sign), status
        top = q + (m.bit_length() - 1)
        if top > self.max_exp or (self.nan == "all_ones" and self.man_bits and top ==
                                  self.max_exp and m == (1 << p) - 1):
            return self._overflow(sign, mode), status | OVERFLOW | INEXACT
        return SoftFloat(self, sign, FINITE, m, q), status

    def _zero(self, sign: bool) -> "SoftFloat":
        if not self.has_zero:                   # as APFloat: the smallest value stands in
            return SoftFloat(self, False, FINITE, 1, self.min_exp)
        if self.nan == "negative_zero":         # no -0: its bits are the NaN
            sign = False
        return SoftFloat(self, sign, ZERO, 0, 0)

    def _overflow(self, sign: bool, mode: int) -> "SoftFloat":
        """APFloat's handleOverflow: to infinity (NaN, for NaN-only formats) when rounding
        goes away from zero, else to the largest finite value. A finite-only format has
        nothing beyond its largest value, so it saturates."""
        away = mode in (NEAREST_EVEN, NEAREST_AWAY) or (mode == UPWARD and not sign) or \
            (mode == DOWNWARD and sign)
        if away and self.nonfinite == "ieee":
            return SoftFloat(self, sign, INF, 0, 0)
        if away and self.nonfinite == "nan_only":
            return self.default_nan(sign)
        return self.largest(sign)

    def largest(self, sign: bool = False) -> "SoftFloat":
        p = self.precision
        m = (1 << p) - 1
        if self.nan == "all_ones" and self.man_bits:
            m -= 1                              # all ones at the top binade is the NaN
        return SoftFloat(self, sign, FINITE, m, self.max_exp - (p - 1))

    def default_nan(self, sign: bool = False) -> "SoftFloat":
        """APFloat's makeNaN(): the quiet NaN with no payload (x87: integer bit set too)."""
        if not self.has_nan:
            raise ValueError(f"{self.name} has no NaN")
        if self.nonfinite == "nan_only":
            return SoftFloat(self, sign if self.nan == "all_ones" else True, NAN,
                             (1 << self.man_bits) - 1 if self.nan == "all_ones" else 0, 0)
        payload = 1 << (self.precision - 2)
        if self.explicit:
            payload |= 1 << 63
        return SoftFloat(self, sign, NAN, payload, 0)

    def from_int(self, value: int, mode: int = NEAREST_EVEN) -> tuple["SoftFloat", int]:
        """An integer rounded into this format (sitofp / uitofp)."""
        return self.round(value < 0, abs(value), 1, 0, mode)


def _round_up(mode: int, sign: bool, m: int, twice_r: int, d: int) -> bool:
    """Does the discarded fraction `twice_r / (2 d)` (nonzero) round magnitude `m` up?"""
    if mode == NEAREST_EVEN:
        return twice_r > d or (twice_r == d and m & 1 == 1)
    if mode == NEAREST_AWAY:
        return twice_r >= d
    if mode == UPWARD:
        return not sign
    if mode == DOWNWARD:
        return sign
    return False


class SoftFloat:
    """One value of a format: `kind` ZERO, FINITE (`sig * 2**exp`, exact), INF or NAN (`sig`
    is the payload: the mantissa field, quiet bit included). Immutable."""

    __slots__ = ("fmt", "sign", "kind", "sig", "exp")

    def __init__(self, fmt: FloatFormat, sign: bool, kind: str, sig: int, exp: int) -> None:
        self.fmt = fmt
        self.sign = sign
        self.kind = kind
        self.sig = sig
        self.exp = exp

    def __repr__(self) -> str:
        return f"<{self.fmt.name} {mlir_text(self)}>"

    @property
    def is_nan(self) -> bool:
        return self.kind == NAN

    @property
    def is_signaling(self) -> bool:
        """A NaN with its quiet bit clear (NaN-only formats have one NaN, which is quiet)."""
        fmt = self.fmt
        return self.kind == NAN and fmt.nonfinite == "ieee" and \
            not self.sig >> (fmt.precision - 2) & 1

    def quiet(self) -> "SoftFloat":
        if not self.is_signaling:
            return self
        return SoftFloat(self.fmt, self.sign, NAN, self.sig | 1 << (self.fmt.precision - 2), 0)

    def bits(self) -> int:
        """The encoding (the value must be one of the format's, as decode and round give)."""
        fmt = self.fmt
        sign = (1 << (fmt.width - 1)) if self.sign and fmt.signed else 0
        kind = self.kind
        if kind == ZERO:
            return sign
        if kind == INF:
            if fmt.explicit:
                return sign | fmt.exp_max << fmt.man_bits | 1 << 63
            return sign | fmt.exp_max << fmt.man_bits
        if kind == NAN:
            if fmt.nan == "negative_zero":
                return 1 << (fmt.width - 1)
            if fmt.nan == "all_ones":
                return sign | (1 << (fmt.width - int(fmt.signed))) - 1
            return sign | fmt.exp_max << fmt.man_bits | self.sig
        p = fmt.precision
        m, q = self.sig, self.exp
        shift = m.bit_length() - p                  # normalize to exactly p bits
        if shift > 0:
            m, q = m >> shift, q + shift
        else:
            m, q = m << -shift, q + shift
        top = q + p - 1
        if top < fmt.min_exp and fmt.has_zero:      # denormal: the leading one is not stored
            m >>= fmt.min_exp - top
            return sign | m
        field = top + fmt.bias
        if not fmt.explicit:
            m -= 1 << (p - 1)
        return sign | field << fmt.man_bits | m

    def with_sign(self, sign: bool) -> "SoftFloat":
        """The value with its sign set (APFloat's changeSign/clearSign): an unsigned format
        or a NaN-as-negative-zero format's zero and NaN cannot change sign."""
        fmt = self.fmt
        if not fmt.signed or (fmt.nan == "negative_zero" and self.kind in (ZERO, NAN)):
            return self
        return SoftFloat(fmt, sign, self.kind, self.sig, self.exp)

    def to_float(self) -> float:
        """The nearest Python float (f64) to this value; NaNs keep what f64 can of the
        payload, as a conversion to f64 would."""
        if self.kind == FINITE:
            try:
                v = math.ldexp(float(self.sig), self.exp) if self.sig.bit_length() <= 53 \
                    else _ldexp_exact(self.sig, self.exp)
            except OverflowError:
                v = math.inf
            return -v if self.sign else v
        if self.kind == ZERO:
            return -0.0 if self.sign else 0.0
        if self.kind == INF:
            return -math.inf if self.sign else math.inf
        return struct.unpack("<d", struct.pack("<Q", convert(self, F64_FORMAT)[0].bits()))[0]


def _ldexp_exact(sig: int, exp: int) -> float:
    """sig * 2**exp rounded once to f64 (ldexp of a >53-bit int would round twice)."""
    return F64_FORMAT.round(False, sig, 1, exp)[0].to_float()


# ---------------------------------------------------------------------------------------------
# The formats (fields as in LLVM's fltSemantics)
# ---------------------------------------------------------------------------------------------

FORMATS: dict[str, FloatFormat] = {f.name: f for f in (
    FloatFormat("f16", 16, 11, 15, -14),
    FloatFormat("bf16", 16, 8, 127, -126),
    FloatFormat("tf32", 19, 11, 127, -126),
    FloatFormat("f32", 32, 24, 127, -126),
    FloatFormat("f64", 64, 53, 1023, -1022),
    FloatFormat("f80", 80, 64, 16383, -16382, explicit=True),
    FloatFormat("f128", 128, 113, 16383, -16382),
    FloatFormat("f8E5M2", 8, 3, 15, -14),
    FloatFormat("f8E4M3", 8, 4, 7, -6),
    FloatFormat("f8E3M4", 8, 5, 3, -2),
    FloatFormat("f8E4M3FN", 8, 4, 8, -6, "nan_only", "all_ones"),
    FloatFormat("f8E5M2FNUZ", 8, 3, 15, -15, "nan_only", "negative_zero"),
    FloatFormat("f8E4M3FNUZ", 8, 4, 7, -7, "nan_only", "negative_zero"),
    FloatFormat("f8E4M3B11FNUZ", 8, 4, 4, -10, "nan_only", "negative_zero"),
    FloatFormat("f8E8M0FNU", 8, 1, 127, -127, "nan_only", "all_ones", has_zero=False,
                signed=False),
    FloatFormat("f6E3M2FN", 6, 3, 4, -2, "finite_only"),
    FloatFormat("f6E2M3FN", 6, 4, 2, 0, "finite_only"),
    FloatFormat("f4E2M1FN", 4, 2, 2, 0, "finite_only"),
)}
F64_FORMAT = FORMATS["f64"]


# ---------------------------------------------------------------------------------------------
# Arithmetic (APFloat's, exact then rounded once)
# ---------------------------------------------------------------------------------------------

def _nan_operand(a: SoftFloat, b: SoftFloat) -> SoftFloat | None:
    """The NaN result when an operand is a NaN: the left one wins, quieted (APFloat, and what
    mlir-opt's folds print: `qNaN_a + sNaN_b` is `qNaN_a`)."""
    if a.kind == NAN:
        return a.quiet()
    if b.kind == NAN:
        return b.quiet()
    return None


def _invalid(fmt: FloatFormat) -> tuple[SoftFloat | None, int]:
    """inf - inf, 0 * inf, 0 / 0, ...: the default NaN; a finite-only format has none."""
    if not fmt.has_nan:
        return None, INVALID
    return fmt.default_nan(), INVALID


def _infinity(fmt: FloatFormat, sign: bool) -> SoftFloat | None:
    """An exact infinite result (x / 0, inf + 1): a NaN-only format's NaN stands in for
    it, and a finite-only format cannot hold it (None: do not fold)."""
    if fmt.has_inf:
        return SoftFloat(fmt, sign, INF, 0, 0)
    if fmt.has_nan:
        return fmt.default_nan(sign)
    return None


def _exact(fmt: FloatFormat, num: int, den: int, exp2: int, mode: int,
           zero_sign: bool) -> tuple[SoftFloat, int]:
    """Round an exact signed result; an exact zero gets `zero_sign`."""
    if num == 0:
        return fmt._zero(zero_sign), OK
    return fmt.round(num < 0, abs(num), den, exp2, mode)


def add(a: SoftFloat, b: SoftFloat, mode: int = NEAREST_EVEN
        ) -> tuple[SoftFloat | None, int]:
    """a + b rounded once, and the status; the value is None where the format cannot hold
    the result (an infinity in a finite-only format: such a fold is declined)."""
    fmt = a.fmt
    nan = _nan_operand(a, b)
    if nan is not None:
        return nan, INVALID if (a.is_signaling or b.is_signaling) else OK
    if a.kind == INF or b.kind == INF:
        if a.kind == INF and b.kind == INF and a.sign != b.sign:
            return _invalid(fmt)
        inf = a if a.kind == INF else b
        return _infinity(fmt, inf.sign), OK
    if a.kind == ZERO and b.kind == ZERO:
        # -0 + -0 = -0; +0 + -0 = +0, except rounding downward where it is -0.
        sign = a.sign and b.sign or (a.sign != b.sign and mode == DOWNWARD)
        return fmt._zero(sign), OK
    if a.kind == ZERO:
        return b, OK                            # b is finite: exact
    if b.kind == ZERO:
        return a, OK
    e = min(a.exp, b.exp)
    total = _signed_sig(a) << (a.exp - e)
    total += _signed_sig(b) << (b.exp - e)
    return _exact(fmt, total, 1, e, mode, mode == DOWNWARD)


def _signed_sig(x: SoftFloat) -> int:
    return -x.sig if x.sign else x.sig


def sub(a: SoftFloat, b: SoftFloat, mode: int = NEAREST_EVEN):
    nan = _nan_operand(a, b)
    if nan is not None:                         # a NaN keeps its sign: `1 - NaN` is `NaN`
        return nan, INVALID if (a.is_signaling or b.is_signaling) else OK
    return add(a, _negated(b), mode)


def _negated(x: SoftFloat) -> SoftFloat:
    """-x for arithmetic (a zero of a NaN-as-negative-zero format still negates here)."""
    return SoftFloat(x.fmt, not x.sign, x.kind, x.sig, x.exp)


def mul(a: SoftFloat, b: SoftFloat, mode: int = NEAREST_EVEN):
    fmt = a.fmt
    nan = _nan_operand(a, b)
    if nan is not None:
        return nan, INVALID if (a.is_signaling or b.is_signaling) else OK
    sign = a.sign != b.sign
    if a.kind == INF or b.kind == INF:
        if a.kind == ZERO or b.kind == ZERO:
            return _invalid(fmt)
        return _infinity(fmt, sign), OK
    if a.kind == ZERO or b.kind == ZERO:
        return fmt._zero(sign), OK
    return fmt.round(sign, a.sig * b.sig, 1, a.exp + b.exp, mode)


def div(a: SoftFloat, b: SoftFloat, mode: int = NEAREST_EVEN):
    fmt = a.fmt
    nan = _nan_operand(a, b)
    if nan is not None:
        return nan, INVALID if (a.is_signaling or b.is_signaling) else OK
    sign = a.sign != b.sign
    if a.kind == INF:
        if b.kind == INF:
            return _invalid(fmt)
        return _infinity(fmt, sign), OK
    if b.kind == INF:
        return fmt._zero(sign), OK
    if b.kind == ZERO:
        if a.kind == ZERO:
            return _invalid(fmt)
        return _infinity(fmt, sign), DIV_BY_ZERO
    if a.kind == ZERO:
        return fmt._zero(sign), OK
    return fmt.round(sign, a.sig, b.sig, a.exp - b.exp, mode)


def mod(a: SoftFloat, b: SoftFloat, mode: int = NEAREST_EVEN):
    """C's fmod (APFloat::mod, MLIR's remf): a - trunc(a / b) * b, exact; a zero result
    has the dividend's sign."""
    fmt = a.fmt
    nan = _nan_operand(a, b)
    if nan is not None:
        return nan, INVALID if (a.is_signaling or b.is_signaling) else OK
    if a.kind == INF or b.kind == ZERO:
        return _invalid(fmt)
    if a.kind == ZERO or b.kind == INF:
        return a, OK
    e = min(a.exp, b.exp)
    an, bn = a.sig << (a.exp - e), b.sig << (b.exp - e)
    r = an % bn
    if r == 0:
        return fmt._zero(a.sign), OK
    return fmt.round(a.sign, r, 1, e, mode)


def compare(a: SoftFloat, b: SoftFloat) -> str:
    """'lt', 'eq', 'gt' or 'un' (unordered: a NaN); -0 equals +0."""
    if a.kind == NAN or b.kind == NAN:
        return "un"
    d = _order(a) - _order(b)
    return "lt" if d < 0 else "gt" if d > 0 else "eq"


def _order(x: SoftFloat) -> int:
    """A non-NaN value as an integer on one scale for every format (for comparisons):
    2**_SCALE times the value, infinities beyond every finite value."""
    if x.kind == ZERO:
        return 0
    if x.kind == INF:
        return -(1 << 40000) if x.sign else 1 << 40000
    return _signed_sig(x) << (x.exp + _SCALE)


#: 2**_SCALE times the smallest denormal of any format is an integer
_SCALE = 17000


def maximum(a: SoftFloat, b: SoftFloat) -> SoftFloat:
    """llvm::maximum (IEEE 754-2019): a NaN propagates quieted, +0 > -0."""
    if a.kind == NAN:
        return a.quiet()
    if b.kind == NAN:
        return b.quiet()
    if a.kind == ZERO and b.kind == ZERO and a.sign != b.sign:
        return b if a.sign else a
    return b if compare(a, b) == "lt" else a


def minimum(a: SoftFloat, b: SoftFloat) -> SoftFloat:
    if a.kind == NAN:
        return a.quiet()
    if b.kind == NAN:
        return b.quiet()
    if a.kind == ZERO and b.kind == ZERO and a.sign != b.sign:
        return a if a.sign else b
    return b if compare(b, a) == "lt" else a


def maxnum(a: SoftFloat, b: SoftFloat) -> SoftFloat:
    """llvm::maxnum (IEEE 754-2008 maxNum): a quiet NaN is ignored, a signaling one quieted."""
    if a.is_signaling:
        return a.quiet()
    if b.is_signaling:
        return b.quiet()
    if a.kind == NAN:
        return b
    if b.kind == NAN:
        return a
    if a.kind == ZERO and b.kind == ZERO and a.sign != b.sign:
        return b if a.sign else a
    return b if compare(a, b) == "lt" else a


def minnum(a: SoftFloat, b: SoftFloat) -> SoftFloat:
    if a.is_signaling:
        return a.quiet()
    if b.is_signaling:
        return b.quiet()
    if a.kind == NAN:
        return b
    if b.kind == NAN:
        return a
    if a.kind == ZERO and b.kind == ZERO and a.sign != b.sign:
        return a if a.sign else b
    return b if compare(b, a) == "lt" else a


# ---------------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------------

def convert(x: SoftFloat, to: FloatFormat, mode: int = NEAREST_EVEN
            ) -> tuple[SoftFloat | None, int, bool]:
    """`x` in format `to` (extf / truncf): (value, status, loses_info) as APFloat::convert.

    A NaN keeps the top of its payload (shifted by the precision difference) and is
    quieted; a NaN-only target has its one NaN. The value is None where the target cannot
    hold the result at all (an infinity or NaN into a finite-only format).
    """
    src = x.fmt
    kind = x.kind
    if kind == FINITE:
        r, status = to.round(x.sign, x.sig, 1, x.exp, mode)
        if r.kind == INF and not to.has_inf:
            return None, status, True
        return r, status, status != OK
    if kind == ZERO:
        r = to._zero(x.sign)
        loses = r.sign != x.sign or r.kind != ZERO
        return r, (INEXACT if loses else OK), loses
    if kind == INF:
        if to.has_inf:
            return SoftFloat(to, x.sign, INF, 0, 0), OK, False
        if to.has_nan:
            return to.default_nan(x.sign), INEXACT, True
        return None, INVALID, True
    # NaN
    if not to.has_nan:
        return None, INVALID, True
    signaling = x.is_signaling
    if to.nonfinite == "nan_only":
        return to.default_nan(x.sign), (INVALID if signaling else OK), \
            src.nonfinite != "nan_only"
    if src.nan == "negative_zero":
        # Its NaN is -0's bits: a new (positive) NaN, not a shifted payload.
        return to.default_nan(False), OK, False
    payload = x.sig
    if src.explicit:
        special = not (payload >> 63 & 1 and payload >> 62 & 1)     # pseudo-NaN / x87 oddity
    else:
        special = False
    shift = to.precision - src.precision
    lost = False
    if shift < 0:
        lost = payload & ((1 << -shift) - 1) != 0
        payload >>= -shift
    else:
        payload <<= shift
    if to.explicit:
        if not special:
            payload |= 1 << 63
    elif src.explicit:
        payload &= (1 << to.man_bits) - 1       # the stored integer bit is not a payload bit
    r = SoftFloat(to, x.sign, NAN, payload, 0)
    if signaling or (not to.explicit and payload == 0):
        r = SoftFloat(to, x.sign, NAN, payload | 1 << (to.precision - 2), 0)
    return r, (INVALID if signaling else OK), lost or (special and not to.explicit)


def to_int(x: SoftFloat, width: int, signed: bool) -> int | None:
    """`x` rounded toward zero to a `width`-bit integer (fptosi / fptoui); None where the
    result is poison (NaN, infinity, out of range), as APFloat's convertToInteger reports
    an invalid operation."""
    if x.kind == ZERO:
        return 0
    if x.kind != FINITE:
        return None
    v = x.sig << x.exp if x.exp >= 0 else x.sig >> -x.exp
    if x.sign:
        v = -v
    lo, hi = (-(1 << (width - 1)), 1 << (width - 1)) if signed else (0, 1 << width)
    if x.sign and v == 0:
        return 0
    return v if lo <= v < hi else None


# ---------------------------------------------------------------------------------------------
# Text: MLIR's float spelling, and decimal literals
# ---------------------------------------------------------------------------------------------

def _digits(sig: int, exp2: int, precision: int) -> tuple[str, int]:
    """`sig * 2**exp2` (> 0) as decimal digits and a power of ten, cut to `precision`
    significant digits exactly as APFloat::toString does: first whole decimal digits are
    truncated down to about `precision * log2(10)` bits, then the rest is rounded half-up,
    and trailing zeros are dropped (so f32 1e-5 gives 9.99999974E-6, as in MLIR)."""
    tz = (sig & -sig).bit_length() - 1
    sig >>= tz
    exp2 += tz
    if exp2 >= 0:
        n, exp10 = sig << exp2, 0
    else:
        n, exp10 = sig * 5 ** -exp2, exp2
    required = (precision * 196 + 58) // 59
    if n.bit_length() > required:
        tens = (n.bit_length() - required) * 59 // 196
        if tens:
            n //= 10 ** tens
            exp10 += tens
    text = str(n)
    stripped = text.rstrip("0")
    exp10 += len(text) - len(stripped)
    text = stripped
    if len(text) > precision:
        cut = len(text) - precision
        up = text[precision] >= "5"
        exp10 += cut
        text = text[:precision]
        if up:
            text = str(int(text) + 1)
            if len(text) > precision:               # carried into a new digit: 99.. -> 100..
                text = text[:precision]
                exp10 += 1
        stripped = text.rstrip("0")
        exp10 += len(text) - len(stripped)
        text = stripped
    return text, exp10


def to_string(x: SoftFloat, precision: int = 0, max_padding: int = 3,
              truncate_zero: bool = True) -> str:
    """APFloat::toString for a zero or finite value (defaults as APFloat's)."""
    sign = "-" if x.sign else ""
    if x.kind == ZERO:
        if max_padding:
            return sign + "0"
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0." + "0" * max(precision, 1) + "e+00"
    if not precision:
        precision = x.fmt.default_digits
    text, exp = _digits(x.sig, x.exp, precision)
    n = len(text)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        e = exp + n - 1
        mant = text[1:]
        if not mant and truncate_zero:
            mant = "0"
        if not truncate_zero:
            mant = mant.ljust(precision, "0")
        es = str(abs(e))
        if not truncate_zero:
            es = es.rjust(2, "0")
        return f"{sign}{text[0]}.{mant}{'e' if not truncate_zero else 'E'}" \
               f"{'-' if e < 0 else '+'}{es}"
    if exp >= 0:
        return sign + text + "0" * exp
    whole = exp + n
    if whole > 0:
        return f"{sign}{text[:whole]}.{text[whole:]}"
    return f"{sign}0.{'0' * -whole}{text}"


def hex_text(x: SoftFloat) -> str:
    """`0x` and the bits in upper-case hex, no leading zeros (APInt's C-literal form)."""
    return f"0x{x.bits():X}"


def mlir_text(x: SoftFloat) -> str:
    """MLIR's printFloatValue: `1.500000e+00` when six digits read back bit-exactly, else
    APFloat's default form if it has a '.', else the hex bits (NaN, infinity, and values
    such as 16777216.0 whose default form is an integer)."""
    if x.kind in (ZERO, FINITE):
        text = to_string(x, 6, 0, False)
        back = parse_decimal(text, x.fmt, exact=True)
        if back.bits() == x.bits() and back.kind == x.kind:
            return text
        text = to_string(x)
        if "." in text:
            return text
    return hex_text(x)


#: decimal magnitudes beyond which every format overflows or underflows (f128's range is
#: about 6.5e-4966 .. 1.2e4932): larger exponents are not expanded into huge integers
_DECIMAL_RANGE = (-5000, 5000)


def parse_decimal(text: str, fmt: FloatFormat, exact: bool = False) -> SoftFloat:
    """A decimal literal (`-1.5e+03`, `0.1`) rounded once, to nearest-even, into `fmt`.

    Formats up to f64 go through Python's correctly rounded `float()` first and are redone
    exactly only when that f64 sits on a tie of the target (where rounding twice can differ
    from rounding once); `exact` always takes the exact path."""
    neg = text.startswith("-")
    body = text[1:] if neg or text.startswith("+") else text
    if not exact and fmt.precision <= 53 and fmt.max_exp <= 1023:
        v = float(body)
        if math.isinf(v):
            return fmt.round(neg, 1, 1, 1 << 20)[0]         # overflows every format
        r, tie = _round_f64(abs(v), neg, fmt)
        if not tie:
            return r
    mant, _, e = body.lower().partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0") or "0"
    exp10 = (int(e) if e else 0) - len(frac)
    d = _decimal_int(digits)
    if d == 0:
        return fmt._zero(neg)
    magnitude = len(digits) + exp10
    if magnitude > _DECIMAL_RANGE[1]:
        return fmt.round(neg, 1, 1, 1 << 20)[0]
    if magnitude < _DECIMAL_RANGE[0]:
        return fmt.round(neg, 1, 1, -(1 << 20))[0]
    if exp10 >= 0:
        return fmt.round(neg, d * 10 ** exp10)[0]
    return fmt.round(neg, d, 10 ** -exp10)[0]


def _decimal_int(digits: str) -> int:
    """int(digits) for any length (Python refuses to convert more than 4,300 digits at once,
    and a literal may have more)."""
    n = 0
    for i in range(0, len(digits), 4000):
        chunk = digits[i:i + 4000]
        n = n * 10 ** len(chunk) + int(chunk)
    return n


def _round_f64(v: float, neg: bool, fmt: FloatFormat) -> tuple[SoftFloat, bool]:
    """Round the f64 magnitude `v` into `fmt`; also whether it was an exact tie."""
    if v == 0.0:
        return fmt._zero(neg), False
    m, e = math.frexp(v)
    sig, exp2 = int(m * (1 << 53)), e - 53
    r, status = fmt.round(neg, sig, 1, exp2)
    if not status & INEXACT:
        return r, False
    # Tie check: is v exactly halfway between the value below it and the next one up?
    down, _ = fmt.round(neg, sig, 1, exp2, TOWARD_ZERO)
    if down.kind == FINITE:
        below, q = down.sig, down.exp
    elif down.kind == ZERO:
        below, q = 0, fmt.min_exp - (fmt.precision - 1)
    else:
        return r, False
    mid, mid_exp = 2 * below + 1, q - 1             # the midpoint is mid * 2**mid_exp
    if exp2 >= mid_exp:
        return r, sig << (exp2 - mid_exp) == mid
    return r, mid << (mid_exp - exp2) == sig
