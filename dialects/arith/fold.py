"""Numeric helpers shared by the `arith` and `math` dialects: value representation,
two's-complement wrapping, and the bridge between constant attributes and numpy values.

Why a separate module: every integer op needs the same three steps (view the operands as
64-bit signed or unsigned numbers, compute, wrap the result back to the op's bit width), and
every folder the same two conversions (attribute -> numpy value -> attribute). Keeping them
here lets each op class state only its own formula.

Value representation (the interpreter's, see `irkit.interpreter`): a signless `iN` scalar is
a numpy signed integer of the smallest holding width (`i3` in an `int8`, sign-extended), `i1`
is `numpy.bool_`, `index` is a Python int (64-bit), floats are numpy floats of the IR width
(`bf16` held as a `float32` rounded to bf16). Tensors and vectors are numpy arrays of those
dtypes. Integers wider than 64 bits are not supported by the kernels (nothing folds them).
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseElementsAttr, FloatAttr, IntegerAttr, numpy_dtype, round_bf16
from irkit.types import (
    BF16, I1, FloatType, IndexType, IntegerType, RankedTensorType, ShapedType, Type,
    VectorType,
)

_U64 = np.uint64
_I64 = np.int64


class IntInfo:
    """What the kernels need to know about an integer-like element type (cached per type)."""

    __slots__ = ("width", "dtype", "is_index", "is_bool", "mask", "odd")

    def __init__(self, t: Type) -> None:
        self.is_index = isinstance(t, IndexType)
        self.width = 64 if self.is_index else t.width
        self.is_bool = self.width == 1 and not self.is_index
        self.dtype = np.int64 if self.is_index else numpy_dtype(t)
        self.mask = _U64((1 << self.width) - 1) if self.width < 64 else _U64(0xFFFFFFFFFFFFFFFF)
        # Widths numpy has no dtype for are wrapped by hand after every operation.
        self.odd = self.width not in (1, 8, 16, 32, 64)


_INFO: dict = {}


def shape_key(t: Type):
    """(kind, shape) of a tensor/vector type, None for a scalar: the SameShape checks."""
    if isinstance(t, ShapedType):
        return (type(t), getattr(t, "shape", None) if not isinstance(t, (RankedTensorType,
                                                                      VectorType)) else t.shape)
    return None


def elem(t: Type) -> Type:
    return t.element if isinstance(t, ShapedType) else t


def int_info(t: Type) -> IntInfo:
    """IntInfo of `t`'s element type."""
    info = _INFO.get(t)
    if info is None:
        info = _INFO[t] = IntInfo(elem(t))
    return info


def signed(x, info: IntInfo):
    """`x` as int64 holding its signed value (i1 true is -1, as in MLIR)."""
    a = np.asarray(x, dtype=_I64)
    return -a if info.is_bool else a


def unsigned(x, info: IntInfo):
    """`x` as uint64 holding its unsigned value (the low `width` bits)."""
    a = np.asarray(x, dtype=_I64).astype(_U64)
    return a if info.width == 64 or info.is_bool else a & info.mask


def wrap(r, info: IntInfo):
    """An int64/uint64 result wrapped to the type's width, in its storage representation."""
    if info.is_bool:
        return (np.asarray(r).astype(_U64) & _U64(1)).astype(np.bool_)[()]
    if info.is_index:
        r = np.asarray(r).astype(_I64)
        return int(r) if r.ndim == 0 else r
    if info.odd:
        sign = 1 << (info.width - 1)
        r = np.asarray(r).astype(_I64) & _I64((1 << info.width) - 1)
        r = (r ^ sign) - sign
    return np.asarray(r).astype(info.dtype)[()]


def int_binary(kernel, is_signed: bool, a, b, t: Type):
    """Apply `kernel(A, B, width)` to the signed or unsigned views and wrap the result."""
    info = _INFO.get(t) or int_info(t)
    if is_signed:
        return wrap(kernel(signed(a, info), signed(b, info), info.width), info)
    return wrap(kernel(unsigned(a, info), unsigned(b, info), info.width), info)


def safe_divisor(b, bad):
    """`b` with the lanes in `bad` replaced by 1, so numpy never divides by zero."""
    return np.where(bad, b.dtype.type(1), b)


def sdiv(a, b, w):
    """Signed division rounding toward zero; x/0 is 0 and MIN/-1 wraps to MIN."""
    sb = safe_divisor(b, (b == 0) | (b == -1))
    q = _trunc_div(a, sb)
    q = np.where(b == -1, 0 - a, q)
    return np.where(b == 0, 0, q)


def _trunc_div(a, b):
    q = a // b
    return q + ((q * b != a) & ((a < 0) != (b < 0)))


def sceildiv(a, b, w):
    """Signed division rounding toward +infinity."""
    sb = safe_divisor(b, (b == 0) | (b == -1))
    q = a // sb
    q = q + (q * sb != a)
    q = np.where(b == -1, 0 - a, q)
    return np.where(b == 0, 0, q)


def sfloordiv(a, b, w):
    """Signed division rounding toward -infinity."""
    sb = safe_divisor(b, (b == 0) | (b == -1))
    q = np.where(b == -1, 0 - a, a // sb)
    return np.where(b == 0, 0, q)


def srem(a, b, w):
    """Remainder with the sign of the dividend (C `%`); x % 0 is 0."""
    sb = safe_divisor(b, (b == 0) | (b == -1))
    return np.where(b == 0, 0, np.fmod(a, sb))


def udiv(a, b, w):
    sb = safe_divisor(b, b == 0)
    return np.where(b == 0, _U64(0), a // sb)


def uceildiv(a, b, w):
    sb = safe_divisor(b, b == 0)
    q = a // sb
    return np.where(b == 0, _U64(0), q + (a % sb != 0).astype(_U64))


def urem(a, b, w):
    sb = safe_divisor(b, b == 0)
    return np.where(b == 0, _U64(0), a % sb)


def shl(a, b, w):
    """`a << b` on unsigned views; a shift by the width or more is poison in MLIR, 0 here."""
    big = b >= _U64(w)
    return np.where(big, _U64(0), a << np.where(big, _U64(0), b))


def lshr(a, b, w):
    big = b >= _U64(w)
    return np.where(big, _U64(0), a >> np.where(big, _U64(0), b))


def ashr(a, b, w):
    """Arithmetic shift of the signed view by the unsigned amount; an oversized shift (poison
    in MLIR) fills with the sign bit."""
    ub = b.astype(_U64)
    if w < 64:
        ub = ub & _U64((1 << w) - 1)
    return a >> np.minimum(ub, _U64(w - 1)).astype(_I64)


def ipow(a, b, w):
    """Integer power by squaring, wrapping; negative exponents as MLIR's folder defines."""
    base = np.asarray(a, dtype=_I64)
    exp = np.asarray(b, dtype=_I64)
    result = np.ones(np.broadcast(base, exp).shape, dtype=_I64)
    e = np.where(exp < 0, 0, exp).astype(_U64)
    x = base.copy()
    while np.any(e):
        odd = (e & _U64(1)).astype(bool)
        result = np.where(odd, result * x, result)
        x = x * x
        e = e >> _U64(1)
    # b < 0: 1 for a == 1, +-1 for a == -1 by parity, 0 otherwise (a == 0 is poison: 0 here).
    neg = np.where(base == 1, 1, np.where(base == -1, np.where(exp & 1, -1, 1), 0))
    return np.where(exp < 0, neg, result)


# ----- floats ---------------------------------------------------------------------------------

def fix_float(r, t: Type):
    """Results of bf16 ops are computed in float32 and rounded once to bf16."""
    return round_bf16(r) if elem(t) is BF16 else r


def _zero_tie(a, b, r, larger: bool):
    """`r` where a != b; where a == b (only +0 and -0 can still differ) the operand whose sign
    makes it the larger (`larger`) or smaller one, since IEEE orders -0 below +0."""
    if larger:
        return np.where(a == b, np.where(np.signbit(a), b, a), r)[()]
    return np.where(a == b, np.where(np.signbit(a), a, b), r)[()]


def maximumf(a, b):
    """IEEE-754 2019 maximum: NaN propagates, +0 > -0."""
    return _zero_tie(a, b, np.maximum(a, b), True)


def minimumf(a, b):
    return _zero_tie(a, b, np.minimum(a, b), False)


def maxnumf(a, b):
    """IEEE-754 maxNum: a quiet NaN operand is ignored."""
    return _zero_tie(a, b, np.fmax(a, b), True)


def minnumf(a, b):
    return _zero_tie(a, b, np.fmin(a, b), False)


# ----- attributes <-> values ------------------------------------------------------------------

def attr_to_value(attr):
    """The interpreter value of a constant attribute, or None if it is not a plain constant."""
    cls = type(attr)
    if cls is IntegerAttr:
        t = attr.type
        if isinstance(t, IndexType):
            return attr.value
        if not isinstance(t, IntegerType) or t.width > 64:
            return None
        return np.bool_(attr.value) if t is I1 else numpy_dtype(t)(attr.value)
    if cls is FloatAttr:
        t = attr.type
        return numpy_dtype(t)(attr.value) if isinstance(t, FloatType) else None
    if cls is DenseElementsAttr:
        et = attr.type.element
        if isinstance(et, IntegerType) and et.width > 64:
            return None
        if isinstance(et, (IntegerType, IndexType, FloatType)):
            return attr.array
    return None


def value_to_attr(v, t: Type):
    """A constant attribute of type `t` holding `v`, or None if `t` cannot hold a constant."""
    if isinstance(t, (RankedTensorType, VectorType)):
        if not t.has_static_shape:
            return None
        arr = np.asarray(v)
        if arr.shape != t.shape:
            arr = np.broadcast_to(arr, t.shape)
        return DenseElementsAttr(t, arr)
    if isinstance(t, (IntegerType, IndexType)):
        return IntegerAttr(int(v), t)
    if isinstance(t, FloatType):
        return FloatAttr(float(v), t)
    return None


def splat_of(attr):
    """The scalar a constant attribute holds in every element (a scalar attr itself)."""
    cls = type(attr)
    if cls is IntegerAttr or cls is FloatAttr:
        return attr.value
    if cls is DenseElementsAttr and attr.is_splat:
        return attr.splat_value()
    return None


def is_int_splat(attr, value: int) -> bool:
    """Is `attr` an integer constant equal to `value` in every element (as signed numbers)?

    `value` -1 means all ones; i1 `true` is stored as 1 and counts as -1 too.
    """
    v = splat_of(attr)
    if v is None or isinstance(v, float):
        return False
    t = elem(attr.type)
    v = int(v)
    if t is I1:
        return (v & 1) == (value & 1)
    return v == value


def int_splat_limit(attr, which: str) -> bool:
    """Is `attr` the signed/unsigned minimum or maximum of its type in every element?"""
    v = splat_of(attr)
    if v is None or isinstance(v, float):
        return False
    info = int_info(attr.type)
    w = info.width
    v = int(v)
    smin, smax = -(1 << (w - 1)), (1 << (w - 1)) - 1
    if info.is_bool:
        v = -v  # true is -1 when signed
    return {"smin": v == smin, "smax": v == smax, "umin": v == 0,
            "umax": (v & ((1 << w) - 1)) == (1 << w) - 1}[which]


def is_float_splat(attr, value: float, negative_zero: bool = False) -> bool:
    """Is `attr` a float constant equal to `value` everywhere (sign of zero respected)?"""
    v = splat_of(attr)
    if not isinstance(v, float) and not isinstance(v, np.floating):
        return False
    v = float(v)
    if v != value:
        return False
    return v != 0.0 or bool(np.signbit(v)) == negative_zero


def zeros_like_attr(attr):
    """A zero constant of the same type as `attr` (for folds such as `x * 0 -> 0`)."""
    t = attr.type
    if isinstance(t, ShapedType):
        return DenseElementsAttr(t, np.zeros(t.shape, dtype=numpy_dtype(t.element)))
    return IntegerAttr(0, t)


def bool_attr_like(value: bool, t: Type):
    """`true`/`false` as an attribute of i1-like type `t` (a splat for shaped types)."""
    if isinstance(t, ShapedType):
        if not isinstance(t, (RankedTensorType, VectorType)) or not t.has_static_shape:
            return None
        return DenseElementsAttr(t, np.full(t.shape, value, dtype=np.bool_))
    return IntegerAttr(1 if value else 0, I1)


_NUMPY_FLOATS = frozenset(("f16", "bf16", "f32", "f64"))


def _foldable_type(t: Type) -> bool:
    """Can the kernels compute in `t`'s element type? Floats other than f16/bf16/f32/f64
    (f8 formats, tf32, f80, f128) have no numpy dtype, and computing them in float32 would
    round wrongly."""
    e = elem(t)
    return not isinstance(e, FloatType) or e.name in _NUMPY_FLOATS


def constant_fold(op, operands):
    """Evaluate `op` on constant operands and wrap the result as an attribute.

    Returns None if an operand is not a plain constant or the result type cannot hold one.
    The op may veto with `_poison(*values)`: MLIR refuses to fold undefined results (division
    by zero, signed overflow in division, out-of-range float-to-int conversion), and so do we.
    """
    values = []
    for r in op.results:
        if not _foldable_type(r.type):
            return None
    for a in operands:
        if a is None or not _foldable_type(a.type):
            return None
        v = attr_to_value(a)
        if v is None:
            return None
        values.append(v)
    with np.errstate(all="ignore"):
        poison = getattr(op, "_poison", None)
        if poison is not None and poison(*values):
            return None
        r = op.evaluate(*values)
    results = op.results
    if len(results) == 1:
        attr = value_to_attr(r, results[0].type)
        return None if attr is None else [attr]
    attrs = [value_to_attr(v, res.type) for v, res in zip(r, results)]
    return None if any(a is None for a in attrs) else attrs
