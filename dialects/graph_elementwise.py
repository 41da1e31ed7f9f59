"""Elementwise graph ops: unary and binary arithmetic, comparisons, logic, `where`, `cast`.

Binary ops broadcast as numpy does and need both operands of one element type (no implicit
promotion; the DSL writes `cast`). Each op is a class made from one table row: its name,
its numpy kernel, the element types it accepts, and a docstring example.

Canonicalization comes in two tables and a few named patterns:

- `_UNARY_LAWS` and `_BINARY_LAWS` are identity folds (`x * 1 -> x`, `-(-x) -> x`,
  `x - x -> 0` for integers): they return an existing value or a constant, never a new op.
- `_PEEPHOLES` are one-line rewrites that build ops (`x - (-y) -> x + y`).
- Longer rewrites are pattern classes: `NegOfConstant` (`x * -1 -> -x`), `CmpConstantRight`,
  `NotOfIntCmp`, `CastOfCast`.

Every rule is exact in IEEE arithmetic, signed zeros and NaN included, which is why some
familiar ones are missing: `x * 0 -> 0` and `x - x -> 0` hold for integers only (inf and NaN),
`x + 0.0 -> x` is wrong for x = -0.0 (the unit of addition is -0.0), and `exp(log(x))` is
NaN, not x, for x < 0. A rule that drops an operand also needs the result to have the kept
value's shape at run time, not only its type (`_keeps_shape`): with `x: tensor<?xf32>`,
`x * dense<1.0> : tensor<3xf32>` broadcasts a size-1 x to 3 elements.
"""

from __future__ import annotations

import math

import numpy as np

from irkit.attributes import DenseElementsAttr, StringAttr, numpy_dtype
from irkit.dialects import arith_fold as af
from irkit.ir import Operation, Value
from irkit.opdef import AnyTensor, Commutative, Elementwise, Operand, Pure, Result
from irkit.peephole import peephole
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, FloatType, IntegerType, RankedTensorType, Type
from irkit.dialects.graph import (
    GraphOp, ShapeError, StrProp, TensorSpec, broadcast_shapes, graph, is_float, is_int,
    same_dtype,
)

_TRAITS = (Pure(), Elementwise())


def _check_kind(spec: TensorSpec, kind: str) -> None:
    """`kind`: "float" (floating point), "num" (float or integer, not i1), "bool" (i1)."""
    t = spec.dtype
    ok = {"float": is_float(t), "num": t is not I1, "bool": t is I1}[kind]
    if not ok:
        want = {"float": "a floating-point", "num": "a numeric (non-i1)", "bool": "an i1"}[kind]
        raise ShapeError(f"operands need {want} element type, got {spec}")


def _as(x, like_dtype):
    """numpy results of 0-d inputs are scalars; the interpreter keeps arrays of the IR type."""
    return np.asarray(x, dtype=like_dtype)


# ---------------------------------------------------------------------------------------------
# Helpers of the folds and patterns
# ---------------------------------------------------------------------------------------------


def _keeps_shape(x: Value, result_type: Type, others) -> bool:
    """Whether an op with result type `result_type` whose operands are `x` and `others`
    always produces exactly x's shape, so that x can stand in for its result.

    The types must be equal, and broadcasting must not stretch x at run time: each other
    operand (aligned at the right, no higher rank) has size 1 on an axis, or the static size
    x has there. A `?` in the other operand is fine where x has a static size n != 1 (it must
    be 1 or n at run time), but not where x has `?` or 1: then the result may be larger.
    """
    if x.type is not result_type:
        return False
    xs = x.type.shape
    for o in others:
        if o is x:
            continue
        s = o.type.shape
        if len(s) > len(xs):
            return False
        for d, dx in zip(reversed(s), reversed(xs)):
            if d == 1 or (dx is not None and dx != 1 and d in (None, dx)):
                continue
            return False
    return True


def _literal_matches(attr, lit) -> bool:
    """Whether constant `attr` holds `lit` in every element: a bool matches i1 constants, an
    int matches integer ones, a float matches float ones with the same sign of zero."""
    if not isinstance(attr, DenseElementsAttr):
        return False
    et = attr.type.element
    if isinstance(lit, bool):
        v = af.splat_of(attr)
        return et is I1 and v is not None and bool(v) == lit
    if isinstance(lit, float):
        return is_float(et) and af.is_float_splat(attr, lit, math.copysign(1.0, lit) < 0)
    return is_int(et) and af.is_int_splat(attr, lit)


def _filled(value, t: Type):
    """A constant of type `t` with `value` in every element; None for dynamic shapes."""
    if not isinstance(t, RankedTensorType) or not t.has_static_shape:
        return None
    return DenseElementsAttr(t, np.full(t.shape, value, dtype=numpy_dtype(t.element)))


def _producer(v: Value, name: str) -> Operation | None:
    """The op named `name` that defines `v` (None for block arguments and other ops)."""
    owner = getattr(v, "owner", None)
    return owner if isinstance(owner, Operation) and owner.name == name else None


def _kind_of(t: Type) -> str:
    return "float" if is_float(t) else "bool" if t is I1 else "int"


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------


# The unary identity folds: an involution undoes itself, an idempotent op changes nothing the
# second time. (exp(log(x)) is not here: it is NaN for x < 0, and log(exp(x)) rounds.)
_UNARY_LAWS = {
    "neg": "involution",        # -(-x) = x
    "not": "involution",        # not(not(x)) = x
    "abs": "idempotent",        # |(|x|)| = |x|
    "relu": "idempotent",       # relu(relu(x)) = relu(x)
}


class UnaryOp(GraphOp):
    """`%r = graph.op %x : (T) -> T`, the kernel applied to every element."""

    __slots__ = ()
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS
    _kind = "float"
    _law: str | None = None

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        _check_kind(x, cls._kind)
        return [x]

    def evaluate(self, x):
        return _as(self._kernel(x), x.dtype)

    def fold_identity(self, operands):
        inner = _producer(self.operand, self.name)
        if inner is None or self._law is None:
            return None
        if self._law == "involution":
            x = inner.operand
            return [x] if x.type is self.results[0].type else None
        return [inner.results[0]] if inner.results[0].type is self.results[0].type else None


def _gelu(x):
    """The tanh approximation (Hendrycks & Gimpel 2016), as GPT-2 and the DSL use it."""
    c = np.sqrt(2.0 / np.pi).astype(x.dtype)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x * x * x)))


def _sigmoid(x):
    # exp(-x) overflows to inf for very negative x, giving 1/inf = 0: the right limit.
    return 1.0 / (1.0 + np.exp(-x))


_UNARY = [
    # name        kernel                               kind     summary
    ("neg", np.negative, "num", "Negation, -x."),
    ("abs", np.abs, "num", "Absolute value, |x|."),
    ("exp", np.exp, "float", "Exponential, e^x."),
    ("log", np.log, "float", "Natural logarithm, ln x."),
    ("sin", np.sin, "float", "Sine."),
    ("cos", np.cos, "float", "Cosine."),
    ("tanh", np.tanh, "float", "Hyperbolic tangent."),
    ("sqrt", np.sqrt, "float", "Square root."),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), "float", "Reciprocal square root, 1/sqrt(x)."),
    ("sigmoid", _sigmoid, "float", "Logistic sigmoid, 1/(1 + e^-x)."),
    ("relu", lambda x: np.maximum(x, 0), "num", "Rectified linear unit, max(x, 0)."),
    ("gelu", _gelu, "float", "GELU, tanh approximation: "
     "0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))."),
    ("softplus", lambda x: np.logaddexp(0, x), "float", "Softplus, ln(1 + e^x), computed "
     "without overflow."),
    ("not", np.logical_not, "bool", "Logical negation of an i1 tensor."),
]


def _declare(base, short: str, kernel, kind: str, summary: str, example: str, **extra):
    """Make and register the op class of one table row; it is also a module attribute
    (`AddOp`, `NegOp`...) so that code and tests can name it."""
    cls_name = f"{short.capitalize()}Op"
    cls = type(cls_name, (base,), {
        "__doc__": f"{summary}\n\n        {example}\n    ",
        "__slots__": (), "name": f"graph.{short}", "_kernel": staticmethod(kernel),
        "_kind": kind, "__module__": __name__, "__qualname__": cls_name,
        "canonicalization_patterns": _PEEPHOLES.get(short, ()), **extra,
    })
    globals()[cls_name] = cls
    return graph.op(cls)


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------


# Identity folds of binary ops, one law a row: `op`, the element kind it holds for ("float",
# "int", "bool"; "num" is float or int), the right operand (a literal every element of a
# constant must equal, or "x" for the left operand itself), and what `x op rhs` is ("x", or a
# literal of the result type).
# Commutative ops get the mirrored law too (the folder moves constants right first anyway).
_BINARY_LAWS = [
    # op        kind     rhs     gives
    ("add", "float", -0.0, "x"),        # x + -0.0 = x  (x + 0.0 is +0.0 for x = -0.0)
    ("add", "int", 0, "x"),             # x + 0 = x
    ("sub", "float", 0.0, "x"),         # x - 0.0 = x, signed zeros included
    ("sub", "int", 0, "x"),             # x - 0 = x
    ("sub", "int", "x", 0),             # x - x = 0  (floats: inf - inf is NaN)
    ("mul", "float", 1.0, "x"),         # x * 1.0 = x
    ("mul", "int", 1, "x"),             # x * 1 = x
    ("mul", "int", 0, 0),               # x * 0 = 0  (floats: NaN * 0, inf * 0, -1 * 0)
    ("div", "float", 1.0, "x"),         # x / 1.0 = x
    ("pow", "float", 1.0, "x"),         # x ** 1.0 = x
    ("pow", "float", 0.0, 1.0),         # x ** 0.0 = 1, NaN included (IEEE 754 pow)
    ("pow", "float", -0.0, 1.0),        # x ** -0.0 = 1
    ("maximum", "num", "x", "x"),       # max(x, x) = x
    ("minimum", "num", "x", "x"),       # min(x, x) = x
    ("and", "bool", True, "x"),         # x and true = x
    ("and", "bool", False, False),      # x and false = false
    ("and", "bool", "x", "x"),          # x and x = x
    ("or", "bool", False, "x"),         # x or false = x
    ("or", "bool", True, True),         # x or true = true
    ("or", "bool", "x", "x"),           # x or x = x
]


def _apply_law(op: GraphOp, x: Value, y: Value, gives):
    """The fold of law `x op y = gives` (y matched already): x, or a constant of the result
    type; None where x's shape is not the result's or the constant would be dynamic."""
    t = op.results[0].type
    if gives == "x":
        return [x] if _keeps_shape(x, t, [y]) else None
    attr = _filled(gives, t)
    return None if attr is None else [attr]


class BinaryOp(GraphOp):
    """`%r = graph.op %lhs, %rhs : (A, B) -> C`, broadcasting A and B to C."""

    __slots__ = ()
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS
    _kind = "num"
    _laws: tuple = ()

    @classmethod
    def infer(cls, args, props):
        a, b = args
        t = same_dtype(a, b)
        _check_kind(a, cls._kind)
        return [TensorSpec(broadcast_shapes(a, b), cls._result_dtype(t))]

    @staticmethod
    def _result_dtype(t):
        return t

    def evaluate(self, a, b):
        return _as(self._kernel(a, b), a.dtype)

    def fold_identity(self, operands):
        kind = _kind_of(self.lhs.type.element)
        sides = [(self.lhs, self.rhs, operands[1])]
        if self.has_trait(Commutative):
            sides.append((self.rhs, self.lhs, operands[0]))
        for law_kind, rhs, gives in self._laws:
            if law_kind != kind and not (law_kind == "num" and kind != "bool"):
                continue
            for x, y, c in sides:
                if isinstance(rhs, str):
                    hit = x is y                            # x op x
                else:
                    hit = c is not None and _literal_matches(c, rhs)
                r = _apply_law(self, x, y, gives) if hit else None
                if r is not None:
                    return r
        return None


class NegOfConstant(RewritePattern):
    """`x * -1 -> -x`, `-0.0 - x -> -x` and, for integers, `0 - x -> -x`: exact, signed zeros
    included (-0.0 - +0.0 = -0.0 and -0.0 - -0.0 = +0.0, as negation gives; 0.0 - x would
    not). Applies where x alone fixes the result's shape."""

    def __init__(self, root: str, lit, side: int) -> None:
        self.root = root
        self.lit = lit          # the constant operand's value
        self.side = side        # which operand the constant is (0: lhs, 1: rhs)

    @property
    def label(self) -> str:
        return f"NegOfConstant({self.root}, {self.lit})"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        c, x = op._operands[self.side].value, op._operands[1 - self.side].value
        attr = constant_value(c)
        if attr is None or not _literal_matches(attr, self.lit) or \
                not _keeps_shape(x, op.results[0].type, [c]):
            return False
        rewriter.replace_op_with_new(op, graph.ops["graph.neg"], x)
        return True


# One-line rewrites that build ops, by op; both sides have the same operand shapes, so the
# result's shape is kept (the peephole also checks the built type equals the root's).
_PEEPHOLES = {
    "add": (
        peephole("graph.add(x, graph.neg(y)) -> graph.sub(x, y)"),          # x + -y = x - y
        peephole("graph.add(graph.neg(x), y) -> graph.sub(y, x)"),          # -x + y = y - x
    ),
    "sub": (
        peephole("graph.sub(x, graph.neg(y)) -> graph.add(x, y)"),          # x - -y = x + y
        NegOfConstant("graph.sub", -0.0, 0),                                # -0.0 - x = -x
        NegOfConstant("graph.sub", 0, 0),                                   # 0 - x = -x
    ),
    "mul": (
        peephole("graph.mul(graph.neg(x), graph.neg(y)) -> graph.mul(x, y)"),   # -x * -y = xy
        NegOfConstant("graph.mul", -1.0, 1),                                # x * -1.0 = -x
        NegOfConstant("graph.mul", -1, 1),                                  # x * -1 = -x
    ),
    "div": (
        peephole("graph.div(graph.neg(x), graph.neg(y)) -> graph.div(x, y)"),   # -x / -y = x/y
    ),
    "abs": (
        peephole("graph.abs(graph.neg(x)) -> graph.abs(x)"),                # |-x| = |x|
    ),
}


def _maximum(a, b):
    """numpy's maximum returns its first operand when +0 meets -0, which would make the result
    depend on operand order (and the folder swaps commutative operands): floats take the IEEE
    rule, +0 > -0, NaN propagating."""
    return af.maximumf(a, b) if a.dtype.kind == "f" else np.maximum(a, b)


def _minimum(a, b):
    return af.minimumf(a, b) if a.dtype.kind == "f" else np.minimum(a, b)


_BINARY = [
    # name       kernel           kind     commutative  summary
    ("add", np.add, "num", True, "Sum, x + y."),
    ("sub", np.subtract, "num", False, "Difference, x - y."),
    ("mul", np.multiply, "num", True, "Product, x * y."),
    ("div", np.divide, "float", False, "Quotient, x / y (IEEE: x/0 is inf or NaN)."),
    ("pow", np.power, "float", False, "Power, x ** y."),
    ("maximum", _maximum, "num", True, "Elementwise maximum (NaN if either is NaN; +0 > -0)."),
    ("minimum", _minimum, "num", True, "Elementwise minimum (NaN if either is NaN; -0 < +0)."),
    ("and", np.logical_and, "bool", True, "Logical and of i1 tensors."),
    ("or", np.logical_or, "bool", True, "Logical or of i1 tensors."),
]


for _short, _kernel, _kind, _summary in _UNARY:
    _t = "i1" if _kind == "bool" else "f32"
    _declare(UnaryOp, _short, _kernel, _kind, _summary,
             f"%r = graph.{_short} %x : (tensor<4x{_t}>) -> tensor<4x{_t}>",
             _law=_UNARY_LAWS.get(_short))

for _short, _kernel, _kind, _comm, _summary in _BINARY:
    _t = "i1" if _kind == "bool" else "f32"
    _declare(BinaryOp, _short, _kernel, _kind, _summary,
             f"%r = graph.{_short} %x, %y : (tensor<4x3x{_t}>, tensor<3x{_t}>) -> "
             f"tensor<4x3x{_t}>",
             traits=_TRAITS + ((Commutative(),) if _comm else ()),
             _laws=tuple(law[1:] for law in _BINARY_LAWS if law[0] == _short))


# ---------------------------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------------------------

_PREDICATES = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}
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
    predicate = StrProp(tuple(_PREDICATES))
    traits = _TRAITS
    _kind = "num"

    @classmethod
    def infer(cls, args, props):
        a, b = args
        same_dtype(a, b)
        return [TensorSpec(broadcast_shapes(a, b), I1)]

    def evaluate(self, a, b):
        return np.asarray(_PREDICATES[self.props()["predicate"]](a, b))

    def fold_identity(self, operands):
        if self.lhs is not self.rhs:
            return None
        p = self.properties["predicate"].value
        if is_float(self.lhs.type.element) and p not in ("lt", "gt"):
            return None                                     # x <= x is false for NaN
        attr = _filled(_SELF[p], self.results[0].type)     # x < x = false, x == x = true
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
        cmp = _producer(op.operand, "graph.cmp")
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
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        c, a, b = args
        _check_kind(c, "bool")
        t = same_dtype(a, b)
        return [TensorSpec(broadcast_shapes(c, a, b), t)]

    def evaluate(self, c, a, b):
        return _as(np.where(c, a, b), a.dtype)

    def fold_identity(self, operands):
        c, x, y = self.cond, self.lhs, self.rhs
        t = self.results[0].type
        if x is y:
            return [x] if _keeps_shape(x, t, [c]) else None      # where(c, x, x) = x
        cond = operands[0]
        for lit, chosen in ((True, x), (False, y)):         # where(true, x, y) = x
            if cond is not None and _literal_matches(cond, lit) and \
                    _keeps_shape(chosen, t, [c, x, y]):
                return [chosen]
        return None


class WhereOfNot(RewritePattern):
    """`where(not(c), x, y) -> where(c, y, x)`: the same choice without the negation. (A
    peephole cannot spell it: `not` is a Python keyword.)"""

    def match_and_rewrite(self, op: WhereOp, rewriter: PatternRewriter) -> bool:
        neg = _producer(op.cond, "graph.not")
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
    traits = _TRAITS

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

    def evaluate(self, x):
        et = self.results[0].type.element
        dt = numpy_dtype(et)
        if dt is np.bool_:
            return np.asarray(x != 0)
        return np.asarray(af.fix_float(np.asarray(x).astype(dt), et), dtype=dt)

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
        inner = _producer(self.operand, self.name)
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
        inner = _producer(op.operand, CastOp.name)
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

