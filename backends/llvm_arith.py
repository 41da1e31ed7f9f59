"""LLVM rules for the `arith` and `math` dialects: one rule per op family, each computing
exactly what the op's reference semantics (its `evaluate`) compute.

Scalars and vectors share every rule: LLVM's instructions and intrinsics are elementwise on
vectors, and the few C-library calls go lane by lane (`FunctionLowering.per_lane`).

Where MLIR leaves a result undefined (poison) the interpreter still picks a value, and the
compiled code picks the same one, so that compiled and interpreted runs agree everywhere and
no input can trap the process:

- integer division and remainder by 0 give 0, and `MIN / -1` wraps to `MIN` (LLVM's `sdiv`
  would raise SIGFPE on x86): the divisor is replaced by 1 in those lanes and the result
  fixed up with a select;
- shifts by the bit width or more give 0 (`shli`, `shrui`) or the sign fill (`shrsi`);
- `fptosi`/`fptoui` saturate, NaN giving 0 (`llvm.fptosi.sat`);
- `maxnumf`/`minnumf` order -0.0 below +0.0 (`llvm.maximumnum`; plain `llvm.maxnum` may
  return either zero).

The `nsw`/`nuw` flags of `addi`/`subi`/`muli`/`shli` and the `fastmath` flags are passed on to
LLVM: they assert that no overflow (or NaN, ...) happens, as in MLIR.
"""

from __future__ import annotations

import llvmlite.ir as ir

from irkit.attributes import DenseElementsAttr, FloatAttr, IntegerAttr
from irkit.types import VectorType
from irkit.backends.llvm_lowering import FunctionLowering, lowers
from irkit.backends.llvm_types import I1, I8, element_of, with_element

# ---------------------------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------------------------

_FASTMATH = ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn")


def fastmath(op) -> list[str]:
    """LLVM's fast-math flags for the op's `fastmath` property (none when absent)."""
    a = op.properties.get("fastmath")
    if a is None:
        return []
    from irkit.dialects.arith.base import FASTMATH
    mask = FASTMATH.mask_of.get(a, 0)
    if mask == (1 << len(_FASTMATH)) - 1:
        return ["fast"]
    return [f for i, f in enumerate(_FASTMATH) if mask >> i & 1]


def overflow(op) -> list[str]:
    a = op.properties.get("overflowFlags")
    if a is None:
        return []
    from irkit.dialects.arith.base import OVERFLOW
    return [f for f in ("nsw", "nuw") if OVERFLOW.has(a, f)]


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


@lowers("arith.constant")
def _constant(lw: FunctionLowering, op, args):
    a = op.properties["value"]
    t = lw.value_type(op.results[0].type)
    if isinstance(a, (IntegerAttr, FloatAttr)):
        return lw.const(t, a.value)
    if isinstance(a, DenseElementsAttr) and isinstance(a.type, VectorType):
        et = t.element
        return ir.Constant(t, [lw.const(et, v) for v in a.array.reshape(-1).tolist()])
    raise lw.error(f"cannot be translated to LLVM IR: constants of type '{a.type}' are not "
                   "supported (scalars and vectors only)")


# ---------------------------------------------------------------------------------------------
# Integer arithmetic
# ---------------------------------------------------------------------------------------------

_INT_BINARY = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul",
               "arith.andi": "and_", "arith.ori": "or_", "arith.xori": "xor"}


@lowers(*_INT_BINARY)
def _int_binary(lw: FunctionLowering, op, args):
    method = getattr(lw.builder, _INT_BINARY[op.name])
    return method(args[0], args[1], flags=overflow(op))


_MINMAX_I = {"arith.maxsi": (True, ">"), "arith.minsi": (True, "<"),
             "arith.maxui": (False, ">"), "arith.minui": (False, "<")}


@lowers(*_MINMAX_I)
def _minmax_int(lw: FunctionLowering, op, args):
    is_signed, pred = _MINMAX_I[op.name]
    b = lw.builder
    a, c = args
    cmp = b.icmp_signed(pred, a, c) if is_signed else b.icmp_unsigned(pred, a, c)
    return b.select(cmp, a, c)


_CMPI = ("==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">=")


@lowers("arith.cmpi")
def _cmpi(lw: FunctionLowering, op, args):
    p = op.properties["predicate"].value
    b = lw.builder
    if p < 6:
        return b.icmp_signed(_CMPI[p], args[0], args[1])
    return b.icmp_unsigned(_CMPI[p], args[0], args[1])


def _promote_i1(lw: FunctionLowering, args, signed: bool, compute):
    """Run `compute` on i1 operands widened to i8 (sign- or zero-extended) and truncate.

    In i1 the constants 1 and -1 are the same bit, so the guards below (divisor 1, `x == -1`)
    would divide `-1 / -1`, which overflows: i1 division is done in i8 instead.
    """
    t = args[0].type
    if element_of(t).width != 1:
        return compute(*args)
    b = lw.builder
    wide = with_element(t, I8)
    ext = b.sext if signed else b.zext
    return b.trunc(compute(*(ext(a, wide) for a in args)), t)


_SIGNED_DIVISION = ("arith.divsi", "arith.ceildivsi", "arith.floordivsi", "arith.remsi")


@lowers(*_SIGNED_DIVISION)
def _signed_division(lw: FunctionLowering, op, args):
    """Signed division and remainder with the interpreter's values where MLIR's are poison:
    x / 0 = 0, MIN / -1 = MIN (x / -1 = -x, wrapping), x % 0 = 0, x % -1 = 0.

    ceildivsi and floordivsi adjust the truncated quotient by one when the remainder is
    non-zero and the exact quotient is positive (ceil) or negative (floor); its sign is
    that of `x ^ y`, and the remainder has the sign of `x`.
    """
    name = op.name

    def compute(x, y):
        b = lw.builder
        t = x.type
        zero, one, minus1 = lw.const(t, 0), lw.const(t, 1), lw.const(t, -1)
        is_zero = b.icmp_signed("==", y, zero)
        is_m1 = b.icmp_signed("==", y, minus1)
        safe = b.select(b.or_(is_zero, is_m1), one, y)
        if name == "arith.remsi":
            return b.select(is_zero, zero, b.srem(x, safe))    # x % -1 = x % 1 = 0
        q = b.sdiv(x, safe)
        if name != "arith.divsi":
            r = b.srem(x, safe)
            inexact = b.icmp_signed("!=", r, zero)
            neg = b.icmp_signed("<", b.xor(r, safe), zero)     # sign of x / y (r != 0)
            if name == "arith.ceildivsi":
                q = b.add(q, b.zext(b.and_(inexact, b.not_(neg)), t))
            else:
                q = b.sub(q, b.zext(b.and_(inexact, neg), t))
        q = b.select(is_m1, b.sub(zero, x), q)
        return b.select(is_zero, zero, q)

    return _promote_i1(lw, args, True, compute)


_UNSIGNED_DIVISION = ("arith.divui", "arith.ceildivui", "arith.remui")


@lowers(*_UNSIGNED_DIVISION)
def _unsigned_division(lw: FunctionLowering, op, args):
    """Unsigned division and remainder; by 0 they give 0."""
    name = op.name

    def compute(x, y):
        b = lw.builder
        t = x.type
        zero = lw.const(t, 0)
        is_zero = b.icmp_unsigned("==", y, zero)
        safe = b.select(is_zero, lw.const(t, 1), y)
        if name == "arith.remui":
            r = b.urem(x, safe)
        else:
            r = b.udiv(x, safe)
            if name == "arith.ceildivui":
                inexact = b.icmp_unsigned("!=", b.urem(x, safe), zero)
                r = b.add(r, b.zext(inexact, t))
        return b.select(is_zero, zero, r)

    return _promote_i1(lw, args, False, compute)


@lowers("arith.shli", "arith.shrui", "arith.shrsi")
def _shift(lw: FunctionLowering, op, args):
    """Shifts with an amount >= the width: 0 for shli/shrui, the sign fill for shrsi (the
    amount clamped to width - 1). LLVM's poison for such amounts is never selected."""
    b = lw.builder
    x, n = args
    t = x.type
    width = lw.const(t, element_of(t).width)
    if op.name == "arith.shrsi":
        limit = lw.const(t, element_of(t).width - 1)
        return b.ashr(x, b.select(b.icmp_unsigned(">", n, limit), limit, n))
    r = b.shl(x, n, flags=overflow(op)) if op.name == "arith.shli" else b.lshr(x, n)
    return b.select(b.icmp_unsigned(">=", n, width), lw.const(t, 0), r)


# ---------------------------------------------------------------------------------------------
# Float arithmetic and comparisons
# ---------------------------------------------------------------------------------------------

_FLOAT_BINARY = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul",
                 "arith.divf": "fdiv", "arith.remf": "frem"}


@lowers(*_FLOAT_BINARY)
def _float_binary(lw: FunctionLowering, op, args):
    return getattr(lw.builder, _FLOAT_BINARY[op.name])(args[0], args[1], flags=fastmath(op))


# IEEE-754 2019 maximum/minimum (NaN propagates) and maximumNumber/minimumNumber (NaN is
# ignored); both order -0.0 below +0.0, as the interpreter does.
_FLOAT_MINMAX = {"arith.maximumf": "maximum", "arith.minimumf": "minimum",
                 "arith.maxnumf": "maximumnum", "arith.minnumf": "minimumnum"}


@lowers(*_FLOAT_MINMAX)
def _float_minmax(lw: FunctionLowering, op, args):
    return lw.call_intrinsic(_FLOAT_MINMAX[op.name], args, fastmath=fastmath(op))


@lowers("arith.negf")
def _negf(lw: FunctionLowering, op, args):
    return lw.builder.fneg(args[0], flags=fastmath(op))


# MLIR's cmpf predicate order: false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult,
# ule, une, uno, true.
_CMPF = (None, "==", ">", ">=", "<", "<=", "!=", "ord", "==", ">", ">=", "<", "<=", "!=",
         "uno", None)


@lowers("arith.cmpf")
def _cmpf(lw: FunctionLowering, op, args):
    p = op.properties["predicate"].value
    if p in (0, 15):
        return lw.const(with_element(args[0].type, I1), p == 15)
    b = lw.builder
    cmp = b.fcmp_ordered if p < 8 else b.fcmp_unordered
    return cmp(_CMPF[p], args[0], args[1], flags=fastmath(op))


@lowers("arith.select")
def _select(lw: FunctionLowering, op, args):
    return lw.builder.select(args[0], args[1], args[2])


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


def _result_type(lw: FunctionLowering, op) -> ir.Type:
    return lw.value_type(op.results[0].type)


@lowers("arith.extsi", "arith.extui", "arith.trunci", "arith.extf", "arith.sitofp",
        "arith.uitofp", "arith.bitcast")
def _cast(lw: FunctionLowering, op, args):
    method = {"arith.extsi": "sext", "arith.extui": "zext", "arith.trunci": "trunc",
              "arith.extf": "fpext", "arith.sitofp": "sitofp", "arith.uitofp": "uitofp",
              "arith.bitcast": "bitcast"}[op.name]
    t = _result_type(lw, op)
    if args[0].type == t:
        return args[0]
    return getattr(lw.builder, method)(args[0], t)


@lowers("arith.index_cast", "arith.index_castui")
def _index_cast(lw: FunctionLowering, op, args):
    t = _result_type(lw, op)
    x = args[0]
    src, dst = element_of(x.type).width, element_of(t).width
    b = lw.builder
    if src == dst:
        return x
    if src > dst:
        return b.trunc(x, t)
    return b.sext(x, t) if op.name == "arith.index_cast" else b.zext(x, t)


@lowers("arith.fptosi", "arith.fptoui")
def _fp_to_int(lw: FunctionLowering, op, args):
    """Saturating conversion (NaN -> 0), the interpreter's choice for MLIR's poison."""
    t = _result_type(lw, op)
    base = "fptosi.sat" if op.name == "arith.fptosi" else "fptoui.sat"
    return lw.call_intrinsic(base, args, ret=t, overloads=[t, args[0].type])


@lowers("arith.truncf")
def _truncf(lw: FunctionLowering, op, args):
    """Round to nearest even; a rounding mode re-rounds the nearest result by stepping to
    its neighbour when it went the wrong way (as the interpreter's `_directed` does)."""
    b = lw.builder
    x = args[0]
    t = _result_type(lw, op)
    r = b.fptrunc(x, t)
    mode = op.properties.get("roundingmode")
    if mode is None or mode.value == 0:
        return r
    rx = b.fpext(r, x.type)
    up, down = _next_up(lw, r), b.fneg(_next_up(lw, b.fneg(r)))
    if mode.value == 1:                                     # downward
        return b.select(b.fcmp_ordered(">", rx, x), down, r)
    if mode.value == 2:                                     # upward
        return b.select(b.fcmp_ordered("<", rx, x), up, r)
    if mode.value == 3:                                     # toward zero
        fabs = lw.call_intrinsic("fabs", [rx])
        too_big = b.fcmp_ordered(">", fabs, lw.call_intrinsic("fabs", [x]))
        positive = b.fcmp_ordered(">", x, lw.const(x.type, 0.0))
        return b.select(too_big, b.select(positive, down, up), r)
    # to_nearest_away: on a tie, take the neighbour farther from zero.
    other = b.select(b.fcmp_ordered(">", rx, x), down, up)
    ox = b.fpext(other, x.type)
    dist_r = lw.call_intrinsic("fabs", [b.fsub(rx, x)])
    dist_o = lw.call_intrinsic("fabs", [b.fsub(ox, x)])
    tie = b.and_(b.fcmp_ordered("!=", rx, x), b.fcmp_ordered("==", dist_r, dist_o))
    farther = b.fcmp_ordered(">", lw.call_intrinsic("fabs", [other]),
                             lw.call_intrinsic("fabs", [r]))
    return b.select(b.and_(tie, farther), other, r)


def _next_up(lw: FunctionLowering, r: ir.Value) -> ir.Value:
    """The next float above `r` (numpy's nextafter(r, +inf)): +-0 steps to the smallest
    subnormal, +inf and NaN stay, and otherwise the bits step by one away from (r > 0) or
    towards (r < 0) zero."""
    b = lw.builder
    ft = r.type
    it = with_element(ft, ir.IntType(_FLOAT_BITS[type(element_of(ft))]))
    bits = b.bitcast(r, it)
    zero = lw.const(ft, 0.0)
    stepped = b.select(b.fcmp_ordered(">", r, zero), b.add(bits, lw.const(it, 1)),
                       b.sub(bits, lw.const(it, 1)))
    stepped = b.select(b.fcmp_ordered("==", r, zero), lw.const(it, 1), stepped)
    keep = b.or_(b.fcmp_unordered("uno", r, r), b.fcmp_ordered("==", r, lw.const(ft, "inf")))
    return b.select(keep, r, b.bitcast(stepped, ft))


_FLOAT_BITS = {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}


# ---------------------------------------------------------------------------------------------
# math: elementary functions
# ---------------------------------------------------------------------------------------------

# Ops LLVM has an intrinsic for (lowered to the C library's function where the CPU has no
# instruction, and scalarized for vectors by LLVM itself).
INTRINSIC_MATH = {
    "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2",
    "math.log10": "log10", "math.sqrt": "sqrt", "math.sin": "sin", "math.cos": "cos",
    "math.tan": "tan", "math.tanh": "tanh", "math.sinh": "sinh", "math.cosh": "cosh",
    "math.asin": "asin", "math.acos": "acos", "math.atan": "atan", "math.absf": "fabs",
    "math.ceil": "ceil", "math.floor": "floor", "math.round": "round",
    "math.roundeven": "roundeven", "math.trunc": "trunc", "math.powf": "pow",
    "math.copysign": "copysign", "math.atan2": "atan2", "math.fma": "fma",
}

# Ops only the C library has (the double-precision name; `f` is appended for f32, and f16
# computes in f32).
LIBM_MATH = {"math.expm1": "expm1", "math.log1p": "log1p", "math.cbrt": "cbrt", "math.erf": "erf",
         "math.erfc": "erfc", "math.asinh": "asinh", "math.acosh": "acosh",
         "math.atanh": "atanh"}


@lowers(*INTRINSIC_MATH)
def _math_intrinsic(lw: FunctionLowering, op, args):
    return lw.call_intrinsic(INTRINSIC_MATH[op.name], args, fastmath=fastmath(op))


@lowers(*LIBM_MATH)
def _math_libm(lw: FunctionLowering, op, args):
    return lw.per_lane(lambda x: libm_call(lw, LIBM_MATH[op.name], x), args[0])


def libm_call(lw: FunctionLowering, name: str, *xs: ir.Value, prefix: str = "") -> ir.Value:
    """The C library's `name` (double) / `namef` (float) on scalars; half goes through
    float and is rounded back. `prefix` names another library with the C library's names
    and signatures (libdevice's `__nv_expf`)."""
    b = lw.builder
    t = xs[0].type
    if isinstance(t, ir.HalfType):
        wide = [b.fpext(x, ir.FloatType()) for x in xs]
        return b.fptrunc(libm_call(lw, name, *wide, prefix=prefix), t)
    cname = prefix + (name + "f" if isinstance(t, ir.FloatType) else name)
    fn = lw.ml.declare_runtime(cname, ir.FunctionType(t, [x.type for x in xs]), lw.op)
    return b.call(fn, list(xs))


@lowers("math.rsqrt")
def _rsqrt(lw: FunctionLowering, op, args):
    """`1 / sqrt(x)`; f16 and f32 in f64, rounded once, as the interpreter computes it (in
    the type itself, the two roundings of sqrt and the division can differ by an ulp)."""
    fm = fastmath(op)
    b = lw.builder
    x = args[0]
    narrow = not isinstance(element_of(x.type), ir.DoubleType)
    if narrow:
        x = b.fpext(x, with_element(x.type, ir.DoubleType()))
    s = lw.call_intrinsic("sqrt", [x], fastmath=fm)
    r = b.fdiv(lw.const(s.type, 1.0), s, flags=fm)
    return b.fptrunc(r, args[0].type) if narrow else r


@lowers("math.fpowi")
def _fpowi(lw: FunctionLowering, op, args):
    """`pow(x, (float) n)`, as the interpreter computes it (`llvm.powi` multiplies
    repeatedly, which rounds differently)."""
    x, n = args
    return lw.call_intrinsic("pow", [x, lw.builder.sitofp(n, x.type)], fastmath=fastmath(op))


@lowers("math.sincos")
def _sincos(lw: FunctionLowering, op, args):
    fm = fastmath(op)
    return [lw.call_intrinsic("sin", args, fastmath=fm),
            lw.call_intrinsic("cos", args, fastmath=fm)]


@lowers("math.isnan", "math.isinf", "math.isfinite", "math.isnormal")
def _float_class(lw: FunctionLowering, op, args):
    b = lw.builder
    x = args[0]
    if op.name == "math.isnan":
        return b.fcmp_unordered("uno", x, x)
    ax = lw.call_intrinsic("fabs", [x])
    inf = lw.const(x.type, "inf")
    if op.name == "math.isinf":
        return b.fcmp_ordered("==", ax, inf)
    finite = b.fcmp_ordered("<", ax, inf)
    if op.name == "math.isfinite":
        return finite
    smallest = {ir.HalfType: 2.0 ** -14, ir.FloatType: 2.0 ** -126,
                ir.DoubleType: 2.0 ** -1022}[type(element_of(x.type))]
    return b.and_(finite, b.fcmp_ordered(">=", ax, lw.const(x.type, smallest)))


# ---------------------------------------------------------------------------------------------
# math: integer ops
# ---------------------------------------------------------------------------------------------


@lowers("math.absi")
def _absi(lw: FunctionLowering, op, args):
    b = lw.builder
    x = args[0]
    zero = lw.const(x.type, 0)
    return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)


@lowers("math.ctlz", "math.cttz")
def _count_zeros(lw: FunctionLowering, op, args):
    """Leading/trailing zeros, the width for 0 (`is_zero_poison` false)."""
    base = "ctlz" if op.name == "math.ctlz" else "cttz"
    return lw.call_intrinsic(base, [args[0], lw.const(I1, 0)])


@lowers("math.ctpop")
def _ctpop(lw: FunctionLowering, op, args):
    return lw.call_intrinsic("ctpop", args)


@lowers("math.ipowi")
def _ipowi(lw: FunctionLowering, op, args):
    """Integer power by squaring in a helper function (a loop), lane by lane for vectors."""
    def scalar(x, n):
        fn = lw.ml.helper(("ipowi", x.type.width), lambda: _build_ipowi(lw.ml.llmod, x.type))
        return lw.builder.call(fn, [x, n])
    return _promote_i1(lw, args, True, lambda x, n: lw.per_lane(scalar, x, n))


def _build_ipowi(llmod: ir.Module, t: ir.IntType) -> ir.Function:
    """`iN __irkit_ipowi_iN(iN x, iN n)`: x ** n wrapping; for n < 0 the interpreter's
    values: 1 for x == 1, +-1 by parity for x == -1, else 0."""
    fn = ir.Function(llmod, ir.FunctionType(t, [t, t]), name=f"__irkit_ipowi_i{t.width}")
    fn.linkage = "internal"
    x, n = fn.args
    entry, loop, done, neg = (fn.append_basic_block(s) for s in ("entry", "loop", "done",
                                                                 "neg"))
    b = ir.IRBuilder(entry)
    zero, one, m1 = ir.Constant(t, 0), ir.Constant(t, 1), ir.Constant(t, -1)
    b.cbranch(b.icmp_signed("<", n, zero), neg, loop)
    b.position_at_end(loop)
    r = b.phi(t)
    base = b.phi(t)
    e = b.phi(t)
    r.add_incoming(one, entry)
    base.add_incoming(x, entry)
    e.add_incoming(n, entry)
    odd = b.trunc(e, I1)
    r2 = b.select(odd, b.mul(r, base), r)
    base2 = b.mul(base, base)
    e2 = b.lshr(e, one)
    r.add_incoming(r2, loop)
    base.add_incoming(base2, loop)
    e.add_incoming(e2, loop)
    b.cbranch(b.icmp_unsigned("!=", e2, zero), loop, done)
    b.position_at_end(done)
    b.ret(r2)
    b.position_at_end(neg)
    parity = b.select(b.trunc(n, I1), m1, one)
    minus = b.select(b.icmp_signed("==", x, m1), parity, zero)
    b.ret(b.select(b.icmp_signed("==", x, one), one, minus))
    return fn
