"""math-polynomial-approximation: f32 `exp`, `expm1`, `log`, `log1p`, `log2` and `tanh` written
out as `arith` ops, bit operations and `math.fma`, on scalars and on vectors lane by lane.

Why. The LLVM backend lowers these ops to LLVM intrinsics or C-library calls, which LLVM
scalarizes on vectors (one `expf` call per lane) and which stop its loop vectorizer. Written
out in the IR they are a straight line of adds, multiplies, fused multiply-adds, compares,
selects and integer ops on the exponent bits: a vector of 16 lanes costs what one scalar
does, and a loop of them vectorizes. The idea is MLIR's `-test-math-polynomial-approximation`
(and Cephes / SLEEF before it); the reductions and polynomials here are irkit's own, fitted
as weighted minimax polynomials (Lawson's iteration on 20001 points, in float64 against
mpmath -- exp's degree-4 P against numpy's float64 expm1 -- coefficients rounded to f32) on
the reduced ranges stated below.

exp(x). x = k ln2 + r, k the integer nearest x log2(e), |r| <= ln2/2 (+ rounding): k comes
  from adding R = 1.5 * 2^23 + 254 to x log2(e) (in one fma), which rounds it to an integer
  held in the low mantissa bits, so -k as a float is R minus that sum, and the sum's bits
  are R's bits plus k (no float-to-int conversion, which LLVM scalarizes on vectors for its
  saturation). r = fma(-k, ln2_hi, x), then fma(-k, ln2_lo, r): ln2 in two f32 parts
  (Cody-Waite), the first product exact inside the fma; e^r = 1 + u, u = r + r^2 P(r), P of
  degree 4 (relative error of e^r 2^-28.1 on [-0.35, 0.35] with its f32 coefficients, a
  sixteenth of f32's half ulp; degree 5 made 8.83% of exp's results on a dense sweep of
  [-104, 89] not correctly rounded, degree 4 8.92%, the worst 1 ulp either way, and took
  one fma more: 4% of a 4096 x 1024 softmax); then the result is scaled by 2^k as two
  factors 2^(k >> 1) * 2^(k - (k >> 1)), each built by writing a biased exponent into the
  bits of a float. Both factors are normal for every k in [-150, 128], so the first product
  is exact and the second rounds once, straight into the subnormals (numpy's results there,
  not a flush to zero), or to +inf. The 254 in R (two exponent biases; 1.5 * 2^23 alone
  would round as well) makes the sum's low bits k + 254: both biased exponents are then a
  shift and a subtraction away (`_scale`), 4 integer ops where unbiasing k and biasing each
  half took 7, and (1 + u) 2^(k >> 1) is one fma, the same bits as an add and a multiply.
  x is clamped to [-104, 89] first: below -104 the result rounds to +0 and above 89 to +inf
  anyway, and k stays in that range. NaN propagates through the arithmetic (the clamps are
  ordered compares, false for NaN).

expm1(x). The same reduction gives u = e^r - 1, with P of degree 5 (relative error 2^-34,
  2^-29.6 with f32 coefficients): here u is the result, not hidden under the rounding of
  1 + u (degree 4 made 9.8% of expm1's results not correctly rounded against 7.5%). With
  s = 2^k the result is fma(s, u, s - 1), one rounding, s - 1 exact for |k| <= 24 (x
  clamped to >= -30, where the result is -1 already). For k > 24 the -1 is below half an
  ulp and exp's scaling of 1 + u is used (it also overflows to +inf correctly). expm1(-0)
  is -0.

log(x). x = 2^k m with m in [sqrt(1/2), sqrt(2)), read off the bits: subtracting the bits of
  sqrt(1/2) from x's bits makes the exponent field k (arithmetic shift) and the low 23
  bits, added back to sqrt(1/2)'s bits, are m's. Subnormal x is first multiplied by 2^23
  (k lowered by 23). With f = m - 1 (exact) in [-0.293, 0.415], log1p(f) = f + f^2 Q(f), Q
  of degree 8 (relative error 2^-27.8); then log x = (k ln2_hi + f) + (f^2 Q + k ln2_lo):
  the big part is one fma (exact where k = -1 meets f near 0.41, the worst cancellation)
  and the small part carries the rest. Specials by select: +inf -> +inf, +-0 -> -inf,
  x < 0 or NaN -> NaN.
log2(x) = k + log1p(f) log2(e), as fma(f^2 Q, log2e, fma(f, log2e, k)).
log1p(x). u = 1 + x is split as above; where k = 0 the reduced argument is x itself (so the
  result is accurate near 0, where softplus and log-sigmoid need it); elsewhere f = m - 1
  plus the correction c = (x - (u - 1)) / u, the rounding error of u = 1 + x relative to u
  (x - (u - 1) is exact). x = -1 -> -inf, x < -1 or NaN -> NaN, +-0 -> itself, +inf -> +inf.

tanh(x). On a = |x| (the sign put back by one copysign, so -0 stays -0 and tanh is exactly
  odd): a < 1: a + a^3 P(a^2), P of degree 7 (relative error 2^-31); a >= 1: 1 - 2 /
  (e^(2a) + 1), using exp above, which saturates to 1 (e^(2a) = +inf gives 1 - 0). NaN
  goes through the exp branch and stays NaN.

Without fma. On a target without a fused multiply-add (`irkit.target`'s `fma = false`: x86-64's
  baseline, SSE2) LLVM makes each `math.fma` a call to the C library's `fmaf`, lane by lane,
  so there every fma above is written as a multiply and an add. Two were exact only as
  fmas: k ln2_hi in exp's reduction and in log's big part. There ln 2 is split as 355/512
  (9 bits) plus f32(ln 2 - 355/512), as Cephes does: k 355/512 is then an exact product for
  |k| < 2^15, and x - k 355/512 exact by Sterbenz's lemma where x and k ln2 are within a
  factor of 2 of each other. The other fmas round once more: the rounder (k may land one
  off at a tie, r a hair past ln2/2, where P still holds), Horner's steps, and the
  scalings, where f1 and s are powers of 2 (the same bits). The measured errors are those
  with fma (tests/unit/test_math_approximation.py runs both).

What stays: f64 (and f16/bf16) math ops are left to LLVM's intrinsics and the C library
(vector f64 math is out of scope here); ops on tensors are left as they are. The ops' own
`fastmath` flags are not used: the expansion computes the same values with or without them.
`sigmoid`, `gelu` and `softplus` lower to `exp`, `tanh` and `log1p` (dialects/graph), so they
follow. The measured accuracy is in tests/unit/test_math_approximation.py.

The interpreter runs the expansion op by op (numpy float32 arithmetic, `math.fma` rounded
once), so compiled and interpreted results agree to the bit.
"""

from __future__ import annotations

import math

import numpy as np

from irkit.attributes import DenseElementsAttr, FloatAttr, IntegerAttr
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.pass_manager import Pass, PassPipelineError, register_pass
from irkit.target import of as target_of
from irkit.types import F32, I1, I32, I64, Type, VectorType
from irkit.dialects import arith
from irkit.dialects import math as math_dialect
from irkit.dialects.arith import CMPF_PREDICATES, CMPI_PREDICATES, materialize_constant

# Minimax coefficients, lowest degree first (see the module docstring for ranges and errors).
#: e^r = 1 + r + r^2 P(r) on [-0.35, 0.35] (Lawson against numpy's f64 expm1, weighted by
#: r^2 / e^r; the coefficients rounded to f32 lowest first, the rest refitted after each)
_EXP_P = (0.4999999403953552, 0.16666516661643982, 0.041668280959129333,
          0.00836925208568573, 0.0013820911990478635)
#: expm1: e^r - 1 = r + r^2 P(r) on [-0.35, 0.35], one degree more (its result is u itself)
_EXPM1_P = (0.5, 0.1666666567325592, 0.04166628047823906, 0.008333503268659115,
            0.0013945740647614002, 0.00019789264479186386)
#: log1p(f) = f + f^2 Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1]
_LOG_Q = (-0.49999988079071045, 0.33333325386047363, -0.2500161826610565, 0.2000206857919693,
          -0.16608241200447083, 0.14179323613643646, -0.13247844576835632,
          0.12923626601696014, -0.07633627206087112)
#: tanh(a) = a + a^3 P(a^2) on [0, 1]
_TANH_P = (-0.333333283662796, 0.1333319991827011, -0.05395309627056122,
           0.02178472839295864, -0.008595108985900879, 0.0030785866547375917,
           -0.0008411321323364973, 0.0001214693475048989)

_LN2_HI = 0.6931471824645996            # f32(ln 2)
_LN2_LO = -1.9046542121259336e-09       # f32(ln 2 - _LN2_HI)
#: without fma (module docstring): ln 2's high part in 9 bits (355 / 512), so that k times
#: it is exact for |k| < 2^15 as a plain product
_LN2_HI_SHORT = 0.693359375
_LN2_LO_SHORT = -2.1219444170128554e-04  # f32(ln 2 - _LN2_HI_SHORT)
_LOG2E = 1.4426950216293335             # f32(log2 e)
_SQRT_HALF_BITS = 0x3F3504F3            # f32(sqrt(1/2)) as bits
_MANTISSA = 0x007FFFFF
_EXP_LO, _EXP_HI = -104.0, 89.0         # exp's input clamp (module docstring)
#: 1.5 * 2^23 + 254: y + it rounds y to an integer k (|y| < 2^22) and holds k + 254 (two
#: exponent biases, see `_scale`) in the low mantissa bits
_ROUNDER = 12583166.0
_ROUNDER_BITS = 0x4B4000FE              # its bits: k is the difference of the bits
_TANH_SPLIT = 1.0                       # tanh: polynomial below, exp above


def _same_shape(t: Type, element: Type) -> Type:
    """`element`, or a vector of `element` shaped like `t`."""
    return VectorType(t.shape, element, t.scalable) if isinstance(t, VectorType) else element


class _Emit:
    """Builds the expansion of one op right before it, on its type `f` (f32 or a vector of
    f32) and the i32 / i1 types of the same shape; constants are splats, made once each."""

    def __init__(self, op: Operation, fused: bool = True) -> None:
        self.b = Builder.before(op)
        self.f = op.results[0].type
        self.i = _same_shape(self.f, I32)
        self.bool = _same_shape(self.f, I1)
        self.fused = fused
        self.ln2_hi, self.ln2_lo = (_LN2_HI, _LN2_LO) if fused else \
            (_LN2_HI_SHORT, _LN2_LO_SHORT)
        self._consts: dict = {}

    def const(self, value, t: Type) -> Value:
        key = (t, np.float64(value).tobytes() if t is self.f else int(value))
        v = self._consts.get(key)
        if v is None:
            if isinstance(t, VectorType):
                attr = DenseElementsAttr(t, value)
            else:
                attr = FloatAttr(float(value), t) if t is F32 else IntegerAttr(int(value), t)
            v = self.b.insert(materialize_constant(attr, t, self.b.location)).results[0]
            self._consts[key] = v
        return v

    def fc(self, value: float) -> Value:
        return self.const(value, self.f)

    def ic(self, value: int) -> Value:
        return self.const(value, self.i)

    def op(self, cls, *xs: Value, t: Type | None = None, **props) -> Value:
        return self.b.create(cls, *xs, result_types=None if t is None else [t],
                             **props).results[0]

    # float arithmetic
    def add(self, x, y): return self.op(arith.AddFOp, x, y)
    def sub(self, x, y): return self.op(arith.SubFOp, x, y)
    def mul(self, x, y): return self.op(arith.MulFOp, x, y)
    def div(self, x, y): return self.op(arith.DivFOp, x, y)
    def fma(self, x, y, z):
        """x * y + z: rounded once where the target has fma, else a multiply and an add."""
        if self.fused:
            return self.op(math_dialect.FmaOp, x, y, z)
        return self.add(self.mul(x, y), z)

    def poly(self, x: Value, coeffs) -> Value:
        """c0 + c1 x + ... by Horner's rule, one fma per coefficient after the last."""
        acc = self.fc(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.fc(c))
        return acc

    # comparisons and choice
    def fcmp(self, pred: str, x, y) -> Value:
        return self.op(arith.CmpFOp, x, y, t=self.bool,
                       predicate=IntegerAttr(CMPF_PREDICATES.index(pred), I64))

    def icmp(self, pred: str, x, y) -> Value:
        return self.op(arith.CmpIOp, x, y, t=self.bool,
                       predicate=IntegerAttr(CMPI_PREDICATES.index(pred), I64))

    def select(self, c, x, y): return self.op(arith.SelectOp, c, x, y)

    def where(self, pred: str, x: Value, bound: float, then: float, other: Value) -> Value:
        """`then` where `x pred bound`, else `other` (one compare and one select)."""
        return self.select(self.fcmp(pred, x, self.fc(bound)), self.fc(then), other)

    # integers and bits
    def iadd(self, x, y): return self.op(arith.AddIOp, x, y)
    def isub(self, x, y): return self.op(arith.SubIOp, x, y)
    def bits(self, x): return self.op(arith.BitcastOp, x, t=self.i)
    def float_of_bits(self, n): return self.op(arith.BitcastOp, n, t=self.f)
    def to_float(self, n): return self.op(arith.SIToFPOp, n, t=self.f)

    def pow2(self, k: Value) -> Value:
        """2^k for integer k in [-126, 127]: the biased exponent written into a float."""
        return self.float_of_bits(self.op(arith.ShLIOp, self.iadd(k, self.ic(127)),
                                          self.ic(23)))


# ---------------------------------------------------------------------------------------------
# exp and expm1
# ---------------------------------------------------------------------------------------------


def _exp_reduce(e: _Emit, x: Value, lo: float, p=_EXP_P) -> tuple[Value, Value]:
    """(n, u = e^r - 1) for x clamped to [lo, _EXP_HI], x = k ln2 + r, u = r + r^2 p(r): n the
    bits of the rounded sum, `_ROUNDER_BITS + k` as an i32 (what `_scale` reads k from)."""
    x = e.where("olt", x, lo, lo, x)
    x = e.where("ogt", x, _EXP_HI, _EXP_HI, x)
    shifted = e.fma(x, e.fc(_LOG2E), e.fc(_ROUNDER))
    nk = e.sub(e.fc(_ROUNDER), shifted)
    r = e.fma(nk, e.fc(e.ln2_hi), x)
    r = e.fma(nk, e.fc(e.ln2_lo), r)
    u = e.fma(e.mul(r, r), e.poly(r, p), r)
    return e.bits(shifted), u


def _scale(e: _Emit, u: Value, n: Value) -> Value:
    """(1 + u) 2^k for k in [-150, 128] given as n = `_ROUNDER_BITS + k`: two normal
    factors 2^(k >> 1) and 2^(k - (k >> 1)), one rounding, subnormals kept.

    With m = k + 254 in [104, 382] the low bits of n (those of 1.5 * 2^23 are 0 below bit
    22), `n >> 1` ends in m >> 1 = (k >> 1) + 127 and `n - (n >> 1)` in
    m - (m >> 1) = (k - (k >> 1)) + 127: both biased exponents in [52, 191], which a shift
    by 23 puts in place while the high bits fall off. `(1 + u) f1` is one fma: f1 is a
    power of 2 and the product normal, so it is RN(1 + u) f1 exactly, as an add and a
    multiply would give."""
    a = e.op(arith.ShRUIOp, n, e.ic(1))
    f1 = e.float_of_bits(e.op(arith.ShLIOp, a, e.ic(23)))
    f2 = e.float_of_bits(e.op(arith.ShLIOp, e.isub(n, a), e.ic(23)))
    return e.mul(e.fma(u, f1, f1), f2)


def _exp(e: _Emit, x: Value) -> Value:
    n, u = _exp_reduce(e, x, _EXP_LO)
    return _scale(e, u, n)


def _expm1(e: _Emit, x: Value) -> Value:
    n, u = _exp_reduce(e, x, -30.0, _EXPM1_P)
    k = e.isub(n, e.ic(_ROUNDER_BITS))
    big = e.icmp("sgt", k, e.ic(24))
    s = e.pow2(e.select(big, e.ic(24), k))
    small = e.fma(s, u, e.sub(s, e.fc(1.0)))
    r = e.select(big, _scale(e, u, n), small)
    return e.select(e.fcmp("oeq", x, e.fc(0.0)), x, r)          # -0 stays -0


# ---------------------------------------------------------------------------------------------
# log, log2, log1p
# ---------------------------------------------------------------------------------------------


def _split(e: _Emit, x: Value) -> tuple[Value, Value]:
    """(k as i32, m) with x = 2^k m, m in [sqrt(1/2), sqrt(2)), for positive normal x."""
    ix = e.isub(e.bits(x), e.ic(_SQRT_HALF_BITS))
    k = e.op(arith.ShRSIOp, ix, e.ic(23))
    m = e.iadd(e.op(arith.AndIOp, ix, e.ic(_MANTISSA)), e.ic(_SQRT_HALF_BITS))
    return k, e.float_of_bits(m)


def _split_subnormal(e: _Emit, x: Value) -> tuple[Value, Value]:
    """`_split` for every positive finite x: subnormals scaled by 2^23 first."""
    tiny = e.fcmp("olt", x, e.fc(2.0 ** -126))
    k, m = _split(e, e.select(tiny, e.mul(x, e.fc(2.0 ** 23)), x))
    return e.isub(k, e.select(tiny, e.ic(23), e.ic(0))), m


def _log_specials(e: _Emit, x: Value, r: Value, zero_at: float) -> Value:
    """+inf -> +inf; x == zero_at -> -inf; below it or NaN -> NaN."""
    r = e.where("oeq", x, math.inf, math.inf, r)
    r = e.where("oeq", x, zero_at, -math.inf, r)
    return e.where("ult", x, zero_at, math.nan, r)


def _log_sum(e: _Emit, kf: Value, f: Value, c: Value | None) -> Value:
    """k ln2 + log1p(f) (+ c): the big part in one fma, the small parts added to it."""
    small = e.mul(e.fc(e.ln2_lo), kf)
    if c is not None:
        small = e.add(small, c)
    lo = e.fma(e.mul(f, f), e.poly(f, _LOG_Q), small)
    return e.add(e.fma(kf, e.fc(e.ln2_hi), f), lo)


def _log(e: _Emit, x: Value) -> Value:
    k, m = _split_subnormal(e, x)
    return _log_specials(e, x, _log_sum(e, e.to_float(k), e.sub(m, e.fc(1.0)), None), 0.0)


def _log2(e: _Emit, x: Value) -> Value:
    k, m = _split_subnormal(e, x)
    f = e.sub(m, e.fc(1.0))
    lo = e.mul(e.mul(f, f), e.poly(f, _LOG_Q))
    log2e = e.fc(_LOG2E)
    r = e.fma(lo, log2e, e.fma(f, log2e, e.to_float(k)))
    return _log_specials(e, x, r, 0.0)


def _log1p(e: _Emit, x: Value) -> Value:
    one = e.fc(1.0)
    u = e.add(x, one)
    k, m = _split(e, u)
    k0 = e.icmp("eq", k, e.ic(0))
    f = e.select(k0, x, e.sub(m, one))
    c = e.select(k0, e.fc(0.0), e.div(e.sub(x, e.sub(u, one)), u))
    r = _log_specials(e, x, _log_sum(e, e.to_float(k), f, c), -1.0)
    return e.select(e.fcmp("oeq", x, e.fc(0.0)), x, r)          # -0 stays -0


# ---------------------------------------------------------------------------------------------
# tanh
# ---------------------------------------------------------------------------------------------


def _tanh(e: _Emit, x: Value) -> Value:
    a = e.op(math_dialect.AbsFOp, x)
    a2 = e.mul(a, a)
    near = e.fma(e.mul(a, a2), e.poly(a2, _TANH_P), a)
    one = e.fc(1.0)
    far = e.sub(one, e.div(e.fc(2.0), e.add(_exp(e, e.add(a, a)), one)))
    r = e.select(e.fcmp("olt", a, e.fc(_TANH_SPLIT)), near, far)
    return e.op(math_dialect.CopySignOp, r, x)


#: op -> (short name for the `ops` option, expansion)
_EXPANSIONS = {
    math_dialect.ExpOp: ("exp", _exp),
    math_dialect.ExpM1Op: ("expm1", _expm1),
    math_dialect.LogOp: ("log", _log),
    math_dialect.Log2Op: ("log2", _log2),
    math_dialect.Log1pOp: ("log1p", _log1p),
    math_dialect.TanhOp: ("tanh", _tanh),
}
OPS = tuple(name for name, _ in _EXPANSIONS.values())


def is_f32_scalar_or_vector(t: Type) -> bool:
    return t is F32 or (isinstance(t, VectorType) and t.element is F32)


@register_pass
class MathPolynomialApproximation(Pass):
    """Expand f32 `math.exp`, `expm1`, `log`, `log2`, `log1p` and `tanh` (scalars and vectors)
    into arith ops, exponent-bit operations and `math.fma`.

    Algorithm:
      0. The target (`irkit.target.of` each op) says whether it has fma; without it the
         expansion multiplies and adds (module docstring, "Without fma").
      1. The `ops` option names the ops to expand (all of `OPS` by default); an unknown
         name is a pipeline error naming the known ones.
      2. Walk every op; a selected math op whose result is f32 or a vector of f32 is expanded
         right before it by its function (reduction, minimax polynomial, reconstruction
         and special values, as the module docstring derives them), its uses replaced by
         the expansion's value and the op erased. Other types are left as they are.
      3. Constants are splat `arith.constant`s made once per expanded op; `cse` merges them
         across ops.
    """

    name = "math-polynomial-approximation"
    ops: tuple[str, ...] = OPS

    def __post_init__(self) -> None:
        unknown = [n for n in self.ops if n not in OPS]
        if unknown:
            raise PassPipelineError(f"'{self.name}' option 'ops': unknown op '{unknown[0]}' "
                                    f"(known: {', '.join(OPS)})")

    def run(self, op: Operation) -> None:
        chosen = {cls: fn for cls, (name, fn) in _EXPANSIONS.items() if name in self.ops}
        for target in list(op.walk()):
            fn = chosen.get(type(target))
            if fn is None or not is_f32_scalar_or_vector(target.results[0].type):
                continue
            e = _Emit(target, target_of(target).fma)
            target.replace_all_uses_with([fn(e, target.operand)])
            target.erase()
