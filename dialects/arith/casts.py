"""`arith` conversions: integer/float width changes, int <-> float, index casts, bitcast.

Every cast is `%r = arith.op %x [flags] [attr-dict] : T to U` with T and U of the same shape;
which element types are compatible is each class's `_compatible`. MLIR reports a mismatch as
"operand type 'T' and result type 'U' are cast incompatible"; irkit adds why.
"""

from __future__ import annotations

import numpy as np

from irkit import float_formats as ff
from irkit.attributes import numpy_dtype
from irkit.float_arrays import bits_to_numpy, convert_array, ints_to_array, numpy_to_bits
from irkit.ir import Operation
from irkit.opdef import (
    Constraint, Elementwise, Operand, Prop, Pure, Result, SameOperandsAndResultShape,
    SignlessIntegerLike, FloatLike, scalar_or_container, lookup_op,
)
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import FloatType, IndexType, RankedTensorType, UnrankedTensorType
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.base import (
    FASTMATH, OVERFLOW, OVERFLOW_NONE, ArithOp, FastMathAttr, IntOrFloatLike, OverflowAttr,
    RoundingModeAttr, SignlessFixedIntLike, arith, elem, flags_text, int_info, make,
    parse_flags, print_attrs, signed, unsigned, wrap,
)
from irkit.dialects.arith.integer import ShRUIOp

_U64 = np.uint64


class _Cast(ArithOp):
    __slots__ = ()
    traits = (Pure(), SameOperandsAndResultShape(), Elementwise())
    _why = ""

    def _compatible(self, src, dst) -> bool:
        return True

    def verify_(self):
        """MLIR's checks after the shape trait, in its order: tensor dimensions equal (not
        just compatible: `tensor<?xi32>` to `tensor<4xi64>` is no cast), then the encodings
        and element types."""
        st, dt = self._operands[0].value.type, self.results[0].type
        if _tensor_dims(st) != _tensor_dims(dt):
            raise self.error("failed to verify that input and output have the same tensor "
                             "dimensions")
        if getattr(st, "encoding", None) != getattr(dt, "encoding", None):
            raise self.error(f"operand type '{st}' and result type '{dt}' are cast "
                             "incompatible")
        if not self._compatible(elem(st), elem(dt)):
            why = self._why.format(src=st, dst=dt)
            raise self.error(f"operand type '{st}' and result type '{dt}' are cast "
                             f"incompatible{': ' + why if why else ''}")

    @classmethod
    def parse(cls, p, num_results):
        a = p.parse_operand_ref()
        props = parse_flags(cls, p) if cls._flags else None
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        st = p.parse_type()
        p.expect("to")
        dt = p.parse_type()
        return make(cls, [p.resolve(a, st)], [dt], props, attrs)

    def print(self, p):
        v = self._operands[0].value
        p.write(f" {p.value(v)}{flags_text(self) if self._flags else ''}")
        print_attrs(self, p)
        p.write(f" : {v.type} to {self.results[0].type}")

    def _infos(self):
        return int_info(self._operands[0].value.type), int_info(self.results[0].type)


def _tensor_dims(t) -> tuple | None:
    """A tensor's dimensions (`*` for unranked), None for any other type."""
    if isinstance(t, RankedTensorType):
        return t.shape
    if isinstance(t, UnrankedTensorType):
        return ("*",)
    return None


class CastChain(RewritePattern):
    """`outer(inner(x)) -> result(x)`, the new cast having the outer cast's result type and
    no flags; `when(op, inner, x)` adds a condition. The rules are listed on the outer cast,
    each with the reason it holds.
    """

    def __init__(self, outer: str, inner: str, result: str, when=None) -> None:
        self.root = outer
        self.inner = inner
        self.result = result
        self.when = when

    @property
    def label(self) -> str:
        return f"{self.root}({self.inner}(x)) -> {self.result}(x)"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.in_.defining_op(self.inner)
        if inner is None:
            return False
        x = inner.in_
        if self.when is not None and not self.when(op, inner, x):
            return False
        rewriter.replace_op_with_new(op, lookup_op(self.result), x,
                                     result_types=[op.results[0].type])
        return True


def _width(v) -> int:
    """Bit width of an integer-like value's elements (index is 64 bits)."""
    return int_info(v.type).width


def _wider(src, dst) -> bool:
    return dst.width > src.width


def _narrower(src, dst) -> bool:
    return dst.width < src.width


class _IntResize(_Cast):
    __slots__ = ()
    in_ = Operand(SignlessFixedIntLike)
    out = Result(SignlessFixedIntLike)
    _wide_ints = True
    _compatible = staticmethod(_wider)
    _why = "result type '{dst}' must be wider than operand type '{src}'"


@arith.op
class ExtSIOp(_IntResize):
    """Sign extension to a wider integer (i1 true becomes -1).

        %a = arith.constant -3 : i8
        %r = arith.extsi %a : i8 to i32
    """

    name = "arith.extsi"
    canonicalization_patterns = (
        CastChain("arith.extsi", "arith.extui", "arith.extui"),   # zext leaves a 0 sign bit
    )

    def evaluate(self, x):
        si, di = self._infos()
        return wrap(signed(x, si), di)

    def fold_identity(self, operands):
        inner = self.in_.defining_op(ExtSIOp)
        if inner is None:
            return None
        self.set_operand(0, inner.in_)                      # extsi(extsi(x)) -> extsi(x)
        return list(self.results)


@arith.op
class ExtUIOp(_IntResize):
    """Zero extension to a wider integer.

        %a = arith.constant -3 : i8
        %r = arith.extui %a : i8 to i32
    """

    name = "arith.extui"

    def evaluate(self, x):
        si, di = self._infos()
        return wrap(unsigned(x, si), di)

    def fold_identity(self, operands):
        inner = self.in_.defining_op(ExtUIOp)
        if inner is None:
            return None
        self.set_operand(0, inner.in_)                      # extui(extui(x)) -> extui(x)
        return list(self.results)


class TruncIOfShrSI(RewritePattern):
    """`trunci(shrsi(x, c)) -> trunci(shrui(x, c))` when c is exactly the number of bits the
    truncation drops: the kept bits are then x's top bits either way. The truncation's
    flags are dropped (nsw no longer holds: shrui brings in zeros, not sign bits)."""

    root = "arith.trunci"   # TruncIOp is defined below

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        shr = op.in_.defining_op("arith.shrsi")
        if shr is None:
            return False
        c = constant_value(shr.rhs)
        if c is None or not af.is_int_splat(c, _width(shr.lhs) - _width(op.out)):
            return False
        shifted = rewriter.create(ShRUIOp, shr.lhs, shr.rhs).results[0]
        rewriter.replace_op_with_new(op, TruncIOp, shifted, result_types=[op.results[0].type])
        return True


@arith.op
class TruncIOp(_IntResize):
    """Truncation to a narrower integer (keeps the low bits).

        %a = arith.constant 300 : i32
        %r = arith.trunci %a : i32 to i8
    """

    name = "arith.trunci"
    overflowFlags = Prop(OverflowAttr, default=OVERFLOW_NONE)
    _compatible = staticmethod(_narrower)
    _why = "result type '{dst}' must be narrower than operand type '{src}'"
    _flags = ("overflow",)
    _flag_prop = "overflowFlags"
    _flag_kind = OVERFLOW
    _flag_default = OVERFLOW_NONE

    def evaluate(self, x):
        si, di = self._infos()
        return wrap(signed(x, si), di)

    def fold_identity(self, operands):
        x = self.in_
        rt = self.results[0].type
        ext = x.defining_op(ExtSIOp) or x.defining_op(ExtUIOp)
        if ext is not None:
            src = ext.in_
            if src.type is rt:
                return [src]                                # trunci(ext(a)) -> a
            if _width(src) > _width(self.out):
                # The low bits come from `a` either way. The flags stay right: a bit above
                # the result width is the same in `a` and in ext(a), or the input was poison.
                self.set_operand(0, src)                    # trunci(ext(a)) -> trunci(a)
                return list(self.results)
        inner = x.defining_op(TruncIOp)
        if inner is not None:
            # trunci(trunci(a)) -> trunci(a); nsw/nuw stay only where both truncations had
            # them (the inner one alone may have dropped set bits).
            self.set_operand(0, inner.in_)
            self.properties["overflowFlags"] = OVERFLOW.intersect(
                self.properties["overflowFlags"], inner.properties["overflowFlags"])
            return list(self.results)
        return None

    canonicalization_patterns = (
        # The extension only adds bits the truncation removes again.
        CastChain("arith.trunci", "arith.extsi", "arith.extsi",
                  lambda op, ext, x: _width(x) < _width(op.out)),
        CastChain("arith.trunci", "arith.extui", "arith.extui",
                  lambda op, ext, x: _width(x) < _width(op.out)),
        TruncIOfShrSI,
    )


class _FloatResize(_Cast):
    __slots__ = ()
    in_ = Operand(FloatLike)
    out = Result(FloatLike)
    fastmath = Prop(FastMathAttr, default=None)
    _flags = ("fastmath",)
    _flag_prop = "fastmath"
    _flag_kind = FASTMATH
    _flag_default = None  # optional in MLIR: printed as given, `fastmath<none>` included


@arith.op
class ExtFOp(_FloatResize):
    """Float extension (exact).

        %a = arith.constant 1.5 : f16
        %r = arith.extf %a : f16 to f32
    """

    name = "arith.extf"
    _compatible = staticmethod(_wider)
    _why = "result type '{dst}' must be wider than operand type '{src}'"

    def fold_identity(self, operands):
        trunc = self.in_.defining_op(TruncFOp)
        if trunc is not None and trunc.in_.type is self.results[0].type and \
                _contract(trunc) and _contract(self):
            return [trunc.in_]                              # extf(truncf(a)) -> a (contract)
        return None

    def evaluate(self, x):
        return convert_array(x, elem(self.in_.type), elem(self.results[0].type))

    def _soft(self, x):
        # MLIR folds only exact conversions; a widening one is exact except for a NaN,
        # which keeps the top of its payload and is quieted, as the hardware does.
        return ff.convert(x, _fmt(self.results[0].type))[0]


@arith.op
class TruncFOp(_FloatResize):
    """Float truncation, rounding to nearest-even unless a rounding mode is given.

        %a = arith.constant 0.1 : f64
        %r = arith.truncf %a toward_zero : f64 to f32
    """

    name = "arith.truncf"
    roundingmode = Prop(RoundingModeAttr, default=None)
    _compatible = staticmethod(_narrower)
    _why = "result type '{dst}' must be narrower than operand type '{src}'"
    _flags = ("rounding", "fastmath")

    def evaluate(self, x):
        st, et = elem(self.in_.type), elem(self.results[0].type)
        mode = self._mode()
        if mode and st.name in _NATIVE and et.name in _NATIVE:
            r = np.asarray(x).astype(numpy_dtype(et))
            return _directed(np.asarray(x), r, mode)[()]
        return convert_array(x, st, et, mode)

    def _mode(self) -> int:
        mode = self.properties.get("roundingmode")
        return mode.value if mode is not None else ff.NEAREST_EVEN

    def _soft(self, x):
        # Rounded once in the op's rounding mode. irkit folds inexact conversions too (MLIR
        # folds only exact ones); a result the type cannot hold (inf into f4E2M1FN) is not
        # folded.
        return ff.convert(x, _fmt(self.results[0].type), self._mode())[0]

    def fold_identity(self, operands):
        ext = self.in_.defining_op(ExtFOp)
        if ext is None or not _representable(elem(ext.in_.type), elem(ext.out.type)):
            return None
        src = ext.in_
        if src.type is self.results[0].type:
            return [src]                                    # truncf(extf(a)) -> a (exact)
        if elem(src.type).width > elem(self.out.type).width:
            self.set_operand(0, src)                        # truncf(extf(a)) -> truncf(a)
            return list(self.results)
        return None

    canonicalization_patterns = (
        # An integer that converts exactly to the intermediate type is rounded once either way;
        # MLIR also rewrites inexact ones (i64 -> f64 -> f32), where double rounding can differ.
        CastChain("arith.truncf", "arith.sitofp", "arith.sitofp",
                  lambda op, conv, x: _itofp_exact(x, conv, True) and
                  "roundingmode" not in op.properties),
        CastChain("arith.truncf", "arith.uitofp", "arith.uitofp",
                  lambda op, conv, x: _itofp_exact(x, conv, False) and
                  "roundingmode" not in op.properties),
    )


#: float types numpy computes in natively (directed rounding re-rounds numpy's result)
_NATIVE = frozenset(("f16", "f32", "f64"))


def _fmt(t) -> ff.FloatFormat:
    return elem(t).format


def _representable(src, dst) -> bool:
    """Is every `src` value exactly a `dst` value, infinities and NaNs included? APFloat's
    isRepresentableBy (range and precision), plus: `dst` has an infinity and a NaN where
    `src` has them (f8E5M2's infinity would become f8E4M3FN's NaN)."""
    s, d = src.format, dst.format
    return d.precision >= s.precision and d.max_exp >= s.max_exp and \
        d.min_exp <= s.min_exp and (d.has_inf or not s.has_inf) and \
        (d.has_nan or not s.has_nan) and (d.signed or not s.signed)


def _itofp_exact(x, conv, is_signed: bool) -> bool:
    """Does the int -> float conversion `conv` of `x` never round (value bits fit)?"""
    fmt = _fmt(conv.out.type)
    bits = _width(x) - (1 if is_signed else 0)
    return bits <= fmt.precision and bits <= fmt.max_exp + 1 and fmt.signed


def _contract(op) -> bool:
    a = op.properties.get("fastmath")
    return a is not None and FASTMATH.has(a, "contract")


def _directed(x, r, mode: int):
    """Re-round `r` (nearest-even of `x`) in MLIR rounding mode 1..4 (down, up, to zero,
    nearest ties away): step to the neighbour when nearest went the wrong way."""
    rt = r.dtype.type
    up, down = np.nextafter(r, rt(np.inf)), np.nextafter(r, rt(-np.inf))
    rx = r.astype(x.dtype)
    if mode == 1:
        return np.where(rx > x, down, r)
    if mode == 2:
        return np.where(rx < x, up, r)
    if mode == 3:
        return np.where(np.abs(rx) > np.abs(x), np.where(x > 0, down, up), r)
    other = np.where(rx > x, down, up)
    ox = other.astype(x.dtype)
    tie = (rx != x) & (np.abs(rx - x) == np.abs(ox - x))
    return np.where(tie & (np.abs(ox) > np.abs(rx)), other, r)


class _IntToFloat(_Cast):
    __slots__ = ()
    in_ = Operand(SignlessFixedIntLike)
    out = Result(FloatLike)
    _signed = True
    _wide_ints = True

    def evaluate(self, x):
        si = int_info(self._operands[0].value.type)
        v = signed(x, si) if self._signed else unsigned(x, si)
        return ints_to_array(v, elem(self.results[0].type))

    def _soft(self, x):
        info = int_info(self.in_.type)
        v = -x if info.is_bool and self._signed else x      # i1 true is -1 when signed
        if not self._signed:
            v = x & ((1 << info.width) - 1)
        fmt = _fmt(self.results[0].type)
        if v < 0 and not fmt.signed:
            return None                                 # f8E8M0FNU has no negative values
        return fmt.from_int(v)[0]


@arith.op
class SIToFPOp(_IntToFloat):
    """Signed integer to float (round to nearest-even).

        %a = arith.constant -3 : i32
        %r = arith.sitofp %a : i32 to f32
    """

    name = "arith.sitofp"
    canonicalization_patterns = (
        CastChain("arith.sitofp", "arith.extsi", "arith.sitofp"),  # sext keeps the value
        CastChain("arith.sitofp", "arith.extui", "arith.uitofp"),  # zext: the unsigned value
    )


@arith.op
class UIToFPOp(_IntToFloat):
    """Unsigned integer to float.

        %a = arith.constant -3 : i32
        %r = arith.uitofp %a : i32 to f32
    """

    name = "arith.uitofp"
    _signed = False
    canonicalization_patterns = (
        CastChain("arith.uitofp", "arith.extui", "arith.uitofp"),  # zext keeps the value
    )


class _FloatToInt(_Cast):
    """Round toward zero; NaN and out-of-range values are poison in MLIR (no fold), and
    saturate here (NaN gives 0) so the interpreter stays deterministic."""

    __slots__ = ()
    in_ = Operand(FloatLike)
    out = Result(SignlessFixedIntLike)
    _signed = True
    _wide_ints = True

    def _bounds(self, w):
        return (-2.0 ** (w - 1), 2.0 ** (w - 1)) if self._signed else (0.0, 2.0 ** w)

    def _soft(self, x):
        """Toward zero; None (no fold) for NaN, infinity or out of range: poison."""
        return ff.to_int(x, int_info(self.results[0].type).width, self._signed)

    def _poison(self, x):
        lo, hi = self._bounds(int_info(self.results[0].type).width)
        t = np.trunc(np.asarray(x, dtype=np.float64))
        return bool(np.any(np.isnan(t) | (t < lo) | (t >= hi)))

    def evaluate(self, x):
        di = int_info(self.results[0].type)
        lo, hi = self._bounds(di.width)
        if di.wide:
            return wrap(np.frompyfunc(self._wide_lane, 1, 1)(np.asarray(x)), di)
        t = np.trunc(np.asarray(x, dtype=np.float64))
        t = np.where(np.isnan(t), 0.0, t)
        inside = np.where((t < lo) | (t >= hi), 0.0, t)
        if self._signed:
            r = inside.astype(np.int64)
            r = np.where(t >= hi, (1 << (di.width - 1)) - 1, np.where(t < lo, int(lo), r))
            return wrap(r.astype(np.int64), di)
        r = inside.astype(_U64)
        r = np.where(t >= hi, di.mask, np.where(t < lo, _U64(0), r))
        return wrap(r.astype(_U64), di)

    def _wide_lane(self, v) -> int:
        """One lane into a wide integer, saturating like the narrow lanes (NaN gives 0)."""
        w = int_info(self.results[0].type).width
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if self._signed else (0, (1 << w) - 1)
        f = float(v)
        if f != f:
            return 0
        if f in (float("inf"), float("-inf")):
            return hi if f > 0 else lo
        return min(max(int(f), lo), hi)


@arith.op
class FPToSIOp(_FloatToInt):
    """Float to signed integer, rounding toward zero.

        %a = arith.constant -2.5 : f32
        %r = arith.fptosi %a : f32 to i32
    """

    name = "arith.fptosi"


@arith.op
class FPToUIOp(_FloatToInt):
    """Float to unsigned integer, rounding toward zero.

        %a = arith.constant 2.5 : f32
        %r = arith.fptoui %a : f32 to i32
    """

    name = "arith.fptoui"
    _signed = False


def _index_compatible(src, dst) -> bool:
    return isinstance(src, IndexType) != isinstance(dst, IndexType)


class _IndexCast(_Cast):
    __slots__ = ()
    in_ = Operand(SignlessIntegerLike)
    out = Result(SignlessIntegerLike)
    _wide_ints = True
    _compatible = staticmethod(_index_compatible)
    _why = "exactly one of the element types must be 'index'"

    def fold_identity(self, operands):
        inner = self.in_.defining_op(type(self))
        if inner is not None:
            src = inner.in_
            # A -> B -> A is the identity when B holds every A value: i32 -> index -> i32
            # and index -> i64 -> index, not index -> i32 -> index (MLIR 22 folds that too).
            if src.type is self.results[0].type and _width(inner.out) >= _width(src):
                return [src]
        return None


@arith.op
class IndexCastOp(_IndexCast):
    """Integer <-> index, sign-extending or truncating.

        %a = arith.constant -3 : i32
        %r = arith.index_cast %a : i32 to index
    """

    name = "arith.index_cast"
    canonicalization_patterns = (
        CastChain("arith.index_cast", "arith.extsi", "arith.index_cast"),  # sext of sext
    )

    def evaluate(self, x):
        si, di = self._infos()
        return wrap(signed(x, si), di)


@arith.op
class IndexCastUIOp(_IndexCast):
    """Integer <-> index, zero-extending or truncating.

        %a = arith.constant -3 : i32
        %r = arith.index_castui %a : i32 to index
    """

    name = "arith.index_castui"
    canonicalization_patterns = (
        CastChain("arith.index_castui", "arith.extui", "arith.index_castui"),  # zext of zext
    )

    def evaluate(self, x):
        si, di = self._infos()
        return wrap(unsigned(x, si), di)


def _same_width(src, dst) -> bool:
    return src.width == dst.width


@arith.op
class BitcastOp(_Cast):
    """Reinterprets the bits as another type of the same width.

        %a = arith.constant 1.0 : f32
        %r = arith.bitcast %a : f32 to i32
    """

    name = "arith.bitcast"
    in_ = Operand(IntOrFloatLike)
    out = Result(IntOrFloatLike)
    _compatible = staticmethod(_same_width)
    _why = "the bit widths must be equal"
    _wide_ints = True

    def evaluate(self, x):
        se, de = elem(self._operands[0].value.type), elem(self.results[0].type)
        if se is de:
            return x
        if isinstance(se, FloatType):
            bits = np.asarray(numpy_to_bits(x, se))
        else:
            bits = unsigned(x, int_info(se))
        if isinstance(de, FloatType):
            return bits_to_numpy(bits, de)
        return wrap(bits.astype(object) if int_info(de).wide else bits.astype(_U64),
                    int_info(de))

    def _soft(self, x):
        """The same bits read as the result type (a float constant's exact encoding)."""
        se, de = elem(self.in_.type), elem(self.results[0].type)
        bits = x.bits() if isinstance(se, FloatType) else x & ((1 << se.width) - 1)
        return de.format.decode(bits) if isinstance(de, FloatType) else bits

    def fold_identity(self, operands):
        x = self.in_
        if x.type is self.results[0].type:
            return [x]                                      # bitcast(a : T to T) -> a
        inner = x.defining_op(BitcastOp)
        if inner is not None and inner.in_.type is self.results[0].type:
            return [inner.in_]                              # bitcast(bitcast(a)) -> a
        return None

    canonicalization_patterns = (
        CastChain("arith.bitcast", "arith.bitcast", "arith.bitcast"),  # the bits never change
    )


_ = (Constraint, scalar_or_container, FloatType)
