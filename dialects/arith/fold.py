"""Numeric helpers shared by the `arith` and `math` dialects: value representation,
two's-complement wrapping, and the bridge between constant attributes and numpy values.

Why a separate module: every integer op needs the same three steps (view the operands as
64-bit signed or unsigned numbers, compute, wrap the result back to the op's bit width), and
every folder the same two conversions (attribute -> numpy value -> attribute). Keeping them
here lets each op class state only its own formula.

Value representation (the interpreter's, see `irkit.interpreter`): a signless `iN` scalar is
a numpy signed integer of the smallest holding width (`i3` in an `int8`, sign-extended), `i1`
is `numpy.bool_`, `index` is a Python int (64-bit), an integer wider than 64 bits is a Python
int (object arrays for tensors), floats are held as `irkit.attributes.numpy_dtype` says (f16,
f32, f64 natively; bf16, tf32 and the f8/f6/f4 formats in a `float32` rounded back into the
format after every op; f80 as the x87 `longdouble`). Tensors and vectors are numpy arrays of
those dtypes.

Folding follows MLIR: a float op on scalar constants runs its `_soft` kernel (exact
`irkit.float_formats` arithmetic with APFloat's NaN rules, every format); on tensors numpy
computes the numbers and the lanes with a NaN are redone by the same `_soft` kernel, so a
NaN payload folds exactly as mlir-opt folds it.
"""

from __future__ import annotations

import math

import numpy as np

from irkit import float_formats as ff
from irkit.attributes import DenseElementsAttr, FloatAttr, IntegerAttr, numpy_dtype
from irkit.float_arrays import (  # noqa: F401  (round_bf16 re-exported to the op modules)
    bits_to_numpy, holding_kind, numpy_to_bits, round_bf16, round_to_format,
)
from irkit.types import (
    I1, FloatType, IndexType, IntegerType, RankedTensorType, ShapedType, Type, VectorType,
)

_U64 = np.uint64
_I64 = np.int64


class IntInfo:
    """What the kernels need to know about an integer-like element type (cached per type)."""

    __slots__ = ("width", "dtype", "is_index", "is_bool", "mask", "odd", "wide")

    def __init__(self, t: Type) -> None:
        self.is_index = isinstance(t, IndexType)
        self.width = 64 if self.is_index else t.width
        self.is_bool = self.width == 1 and not self.is_index
        self.dtype = np.int64 if self.is_index else numpy_dtype(t)
        # Wider than 64 bits: Python ints (object arrays), wrapped by hand like odd widths.
        self.wide = self.width > 64
        self.mask = _U64((1 << self.width) - 1) if self.width < 64 else _U64(0xFFFFFFFFFFFFFFFF)
        if self.wide:
            self.mask = (1 << self.width) - 1
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
    """`x` as int64 holding its signed value (i1 true is -1, as in MLIR); a wide integer as
    a Python int (object array)."""
    if info.wide:
        return np.asarray(np.frompyfunc(int, 1, 1)(np.asarray(x, dtype=object)), dtype=object)
    a = np.asarray(x, dtype=_I64)
    return -a if info.is_bool else a


def unsigned(x, info: IntInfo):
    """`x` as uint64 holding its unsigned value (the low `width` bits)."""
    if info.wide:
        mask = info.mask
        return np.asarray(np.frompyfunc(lambda v: int(v) & mask, 1, 1)(
            np.asarray(x, dtype=object)), dtype=object)
    a = np.asarray(x, dtype=_I64).astype(_U64)
    return a if info.width == 64 or info.is_bool else a & info.mask


def wrap(r, info: IntInfo):
    """An int64/uint64 (or Python int) result wrapped to the type's width, in its storage
    representation."""
    if info.wide:
        mask, sign = info.mask, 1 << (info.width - 1)
        r = np.frompyfunc(lambda v: ((int(v) & mask) ^ sign) - sign, 1, 1)(
            np.asarray(r, dtype=object))
        return np.asarray(r, dtype=object)[()]
    r = np.asarray(r)
    if r.dtype == object:
        # A wide value into <= 64 bits: its low 64 bits (a 0-d `&` gives a Python int).
        r = np.asarray(r & 0xFFFFFFFFFFFFFFFF, dtype=object).astype(_U64)
    if info.is_bool:
        return (np.asarray(r).astype(_U64) & _U64(1)).astype(np.bool_)[()]
    if info.is_index:
        r = np.asarray(r).astype(_I64)
        return int(r) if r.ndim == 0 else r
    if info.width == 0:                             # i0: every value is 0
        return np.zeros(np.shape(r), dtype=info.dtype)[()]
    if info.odd:
        sign = 1 << (info.width - 1)
        r = np.asarray(r).astype(_I64) & _I64((1 << info.width) - 1)
        r = (r ^ sign) - sign
    return np.asarray(r).astype(info.dtype)[()]


def int_binary(kernel, is_signed: bool, a, b, t: Type):
    """Apply `kernel(A, B, width)` to the signed or unsigned views and wrap the result
    (wide integers: the kernel's Python-int twin, or the kernel itself on object arrays)."""
    info = _INFO.get(t) or int_info(t)
    if info.is_index and type(a) is int and type(b) is int and (
            is_signed or kernel in _PY_KERNELS):
        # index scalars (Python ints, the interpreter's hot path): the Python-int twin (or
        # the kernel itself on the signed views, which numpy takes as they are)
        mask, sign = 0xFFFFFFFFFFFFFFFF, 1 << 63
        if not is_signed:
            a, b = a & mask, b & mask
        r = int(_PY_KERNELS.get(kernel, kernel)(a, b, 64))
        return ((r & mask) ^ sign) - sign
    if info.wide:
        kernel = _WIDE_KERNELS.get(kernel, kernel)
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


def _elementwise(fn):
    """A kernel applying `fn(a, b, w)` to Python ints lane by lane (wide integers)."""
    def kernel(a, b, w):
        return np.frompyfunc(lambda x, y: fn(int(x), int(y), w), 2, 1)(a, b)
    return kernel


def _py_sdiv(a, b, w):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _py_ashr(a, b, w):
    return a >> min(b & ((1 << w) - 1), w - 1)


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


#: the Python-int twins of the numpy kernels that are more than an operator (x / 0 never
#: folds: poison); the others (`a + b`, ...) are their own twins
_PY_KERNELS = {
    sdiv: _py_sdiv,
    sceildiv: lambda a, b, w: -(-a // b) if b else 0,
    sfloordiv: lambda a, b, w: a // b if b else 0,
    srem: lambda a, b, w: a - _py_sdiv(a, b, w) * b if b else 0,
    udiv: lambda a, b, w: a // b if b else 0,
    uceildiv: lambda a, b, w: -(-a // b) if b else 0,
    urem: lambda a, b, w: a % b if b else 0,
    shl: lambda a, b, w: a << b if b < w else 0,
    lshr: lambda a, b, w: a >> b if b < w else 0,
    ashr: _py_ashr,
}
#: the twins lane by lane, for wide integers
_WIDE_KERNELS = {kernel: _elementwise(twin) for kernel, twin in _PY_KERNELS.items()}


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
    """Results of ops on a format held in float32 (bf16, tf32, f8, ...) are computed in
    float32 and rounded once into the format."""
    return round_to_format(r, elem(t))


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
    """The interpreter value of a constant attribute, or None if it is not a plain constant.
    A float keeps its exact bits (a signaling NaN stays signaling)."""
    cls = type(attr)
    if cls is IntegerAttr:
        t = attr.type
        if isinstance(t, IndexType):
            return attr.value
        if not isinstance(t, IntegerType):
            return None
        if t.width > 64:
            return attr.value
        return np.bool_(attr.value) if t is I1 else numpy_dtype(t)(attr.value)
    if cls is FloatAttr:
        t = attr.type
        return bits_to_numpy(attr.bits, t) if isinstance(t, FloatType) else None
    if cls is DenseElementsAttr:
        et = attr.type.element
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
        if isinstance(v, ff.SoftFloat):
            return FloatAttr.from_soft(v, t)
        return FloatAttr(np.asarray(v, dtype=numpy_dtype(t))[()], t)
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
    """Is `attr` a float constant equal to `value` everywhere (sign of zero respected)?

    Compared exactly: an f128 constant of 1e-2045 is not 0.0, although its nearest Python
    float is (and a constant held only approximately never counts)."""
    if type(attr) is FloatAttr:
        return _soft_is(attr.soft, value, negative_zero)
    if type(attr) is DenseElementsAttr and isinstance(attr.type.element, FloatType) and \
            holding_kind(attr.type.element) == "approx":
        return False
    v = splat_of(attr)
    if not isinstance(v, float) and not isinstance(v, np.floating):
        return False
    v = float(v)
    if v != value:
        return False
    return v != 0.0 or bool(np.signbit(v)) == negative_zero


def _soft_is(x: ff.SoftFloat, value: float, negative_zero: bool) -> bool:
    if value == 0.0:
        return x.kind == ff.ZERO and x.sign == negative_zero
    if value != value:
        return x.kind == ff.NAN
    if math.isinf(value):
        return x.kind == ff.INF and x.sign == (value < 0)
    m, e = math.frexp(abs(value))
    want = x.fmt.round(value < 0, int(m * (1 << 53)), 1, e - 53)
    return x.kind == ff.FINITE and want[1] == ff.OK and want[0].bits() == x.bits()


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


def _foldable_type(t: Type) -> bool:
    """Can the numpy kernels compute exactly in `t`'s element type? Not where numpy holds
    the format only approximately (f128, and f80 where longdouble is not x87): those fold
    through the `_soft` kernels alone."""
    e = elem(t)
    return not isinstance(e, FloatType) or holding_kind(e) != "approx"


def _is_wide(t: Type) -> bool:
    e = elem(t)
    return isinstance(e, IntegerType) and e.width > 64


def _soft_operand(attr):
    """A scalar constant as a `_soft` kernel takes it: SoftFloat, or the integer value."""
    return attr.soft if type(attr) is FloatAttr else attr.value


def _soft_result(r, t: Type):
    """A `_soft` kernel's answer (SoftFloat, int or bool) as an attribute of type `t`."""
    if isinstance(r, ff.SoftFloat):
        return FloatAttr.from_soft(r, t)
    if t is I1:
        return IntegerAttr(1 if r else 0, I1)
    if isinstance(t, IntegerType):
        w = t.width
        r = int(r) & ((1 << w) - 1)
        return IntegerAttr(r - (1 << w) if r >> (w - 1) else r, t)
    return IntegerAttr(int(r), t)


def _soft_fold(op, operands):
    """Fold scalar constants with the op's exact kernel; None if it declines."""
    r = op._soft(*[_soft_operand(a) for a in operands])
    return None if r is None else [_soft_result(r, op.results[0].type)]


def _redo_nan_lanes(op, values, result):
    """numpy's NaN rules are the hardware's (and it quiets nothing consistently); MLIR's are
    APFloat's. Recompute every lane where an operand or the result is a NaN with the op's
    `_soft` kernel. None if the kernel declines a lane."""
    rt = elem(op.results[0].type)
    shape = np.shape(result)
    lanes = np.zeros(shape, dtype=bool)
    kinds = [elem(o.type) for o in op.operands]
    for v, k in zip(values, kinds):
        if isinstance(k, FloatType):
            lanes |= np.broadcast_to(np.isnan(np.asarray(v, dtype=np.float64)), shape)
    if isinstance(rt, FloatType):
        lanes |= np.isnan(np.asarray(result, dtype=np.float64))
    if not lanes.any():
        return result
    out = np.array(result, copy=True)
    for idx in zip(*np.nonzero(lanes)):
        args = []
        for v, k in zip(values, kinds):
            x = np.broadcast_to(np.asarray(v), shape)[idx]
            if isinstance(k, FloatType):
                args.append(k.format.decode(numpy_to_bits(x, k)))
            else:
                args.append(int(x))
        r = op._soft(*args)
        if r is None:
            return None
        if isinstance(r, ff.SoftFloat):
            out[idx] = bits_to_numpy(r.bits(), rt)
        else:
            out[idx] = _soft_result(r, rt).value   # an integer as the type stores it
    return out[()] if out.ndim == 0 else out


def constant_fold(op, operands):
    """Evaluate `op` on constant operands and wrap the result as an attribute.

    Returns None if an operand is not a plain constant or the result type cannot hold one.
    The op may veto with `_poison(*values)`: MLIR refuses to fold undefined results (division
    by zero, signed overflow in division, out-of-range float-to-int conversion), and so do we.
    Scalars fold through the op's `_soft` kernel where it has one (exact, every float
    format); integers wider than 64 bits fold only in ops that declare `_wide_ints`.
    """
    for a in operands:
        if a is None:
            return None
    soft = getattr(op, "_soft", None)
    if soft is not None and len(op.results) == 1 and \
            all(type(a) is FloatAttr or type(a) is IntegerAttr for a in operands):
        return _soft_fold(op, operands)
    types = [r.type for r in op.results] + [a.type for a in operands]
    for t in types:
        if not _foldable_type(t) or (_is_wide(t) and not getattr(op, "_wide_ints", False)):
            return None
    values = []
    for a in operands:
        v = attr_to_value(a)
        if v is None:
            return None
        values.append(v)
    with np.errstate(all="ignore"):
        poison = getattr(op, "_poison", None)
        if poison is not None and poison(*values):
            return None
        r = op.evaluate(*values)
        if soft is not None and len(op.results) == 1:
            r = _redo_nan_lanes(op, values, r)
            if r is None:
                return None
    results = op.results
    if len(results) == 1:
        attr = value_to_attr(r, results[0].type)
        return None if attr is None else [attr]
    attrs = [value_to_attr(v, res.type) for v, res in zip(r, results)]
    return None if any(a is None for a in attrs) else attrs
