"""Elementwise graph ops: unary and binary arithmetic and logic, and `zeros_like`.

Binary ops broadcast as numpy does and need both operands of one element type (no implicit
promotion; the DSL writes `cast`). Each op is a class made from one table row: its name,
its numpy kernel, the element types it accepts, and a docstring example. The elementwise ops
with element-type rules of their own (comparisons, `where`, `cast`) are in
`graph_compare.py`, which builds on this module's `BinaryOp` and fold helpers.

Canonicalization comes in two tables and a named pattern:

- `_UNARY_LAWS` and `_BINARY_LAWS` are identity folds (`x * 1 -> x`, `-(-x) -> x`,
  `x - x -> 0` for integers): they return an existing value or a constant, never a new op.
- `_PEEPHOLES` are one-line rewrites that build ops (`x - (-y) -> x + y`).
- Longer rewrites are pattern classes: `NegOfConstant` (`x * -1 -> -x`) here, and
  `CmpConstantRight`, `NotOfIntCmp`, `CastOfCast` in `graph_compare.py`.

Every rule is exact in IEEE arithmetic, signed zeros and NaN included, which is why some
familiar ones are missing: `x * 0 -> 0` and `x - x -> 0` hold for integers only (inf and NaN),
`x + 0.0 -> x` is wrong for x = -0.0 (the unit of addition is -0.0), and `exp(log(x))` is
NaN, not x, for x < 0. A rule that drops an operand also needs the result to have the kept
value's shape at run time, not only its type (`_keeps_shape`): with `x: tensor<?xf32>`,
`x * dense<1.0> : tensor<3xf32>` broadcasts a size-1 x to 3 elements.

Derivatives (see `irkit.autodiff`) sit in one table too: `_DERIVATIVES` gives each arithmetic
op one partial per operand, from which `_declare` makes its `vjp` (`transpose` for the
`Linear` neg, add, sub) and `jvp`. Logic (and, or, not) is `NonDifferentiable`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from irkit.attributes import DenseElementsAttr, numpy_dtype
from irkit.autodiff import Linear, NonDifferentiable
from irkit.dialects import arith_fold as af
from irkit.ir import Operation, Value
from irkit.opdef import AnyTensor, Commutative, Elementwise, Operand, Pure, Result
from irkit.peephole import peephole
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, RankedTensorType, Type
from irkit.dialects.graph import (
    FOLD_LIMIT, GraphOp, ShapeError, TensorSpec, broadcast_shapes, graph, is_float, is_int,
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


def _declare(base, short: str, kernel, kind: str, summary: str, example: str,
             traits: tuple = _TRAITS, **extra):
    """Make and register the op class of one table row; it is also a module attribute
    (`AddOp`, `NegOp`...) so that code and tests can name it. Its derivative rules come from
    `_DERIVATIVES`; an op without an entry (and, or, not) is `NonDifferentiable`."""
    cls_name = f"{short.capitalize()}Op"
    partials = _DERIVATIVES.get(short)
    if partials is None:
        traits = traits + (NonDifferentiable(),)
    else:
        linear = short in _LINEAR
        traits = traits + ((Linear(),) if linear else ())
        extra.update(_partials=partials if isinstance(partials, tuple) else (partials,),
                     jvp=_elementwise_jvp, **{"transpose" if linear else "vjp": _elementwise_vjp})
    cls = type(cls_name, (base,), {
        "__doc__": f"{summary}\n\n        {example}\n    ",
        "__slots__": (), "name": f"graph.{short}", "_kernel": staticmethod(kernel),
        "_kind": kind, "__module__": __name__, "__qualname__": cls_name,
        "canonicalization_patterns": _PEEPHOLES.get(short, ()), "traits": traits, **extra,
    })
    globals()[cls_name] = cls
    return graph.op(cls)


@graph.op
class ZerosLikeOp(GraphOp):
    """Zeros of the operand's type and run-time shape; its values are not read, so no
    derivative flows through it. Dead when the operand is dead: it folds to a constant only
    when the operand cannot be, since the zero cotangent of a switch's untaken branch must
    stay dead for the merge that joins the branches.

        %z = graph.zeros_like %x : (tensor<?x4xf32>) -> tensor<?x4xf32>
    """

    name = "graph.zeros_like"
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        return [args[0]]

    def nondiff_operands(self):
        return (0,)

    def vjp(self, ad, cts):
        return [None]

    def jvp(self, ad, tangents):
        return [None]

    def evaluate(self, x):
        return np.zeros_like(x)

    def fold(self, operands):
        from irkit.dialects.graph_control import may_be_dead
        t = self.results[0].type
        if may_be_dead(self.operand) or (t.has_static_shape and t.num_elements > FOLD_LIMIT):
            return None
        zeros = _filled(0, t)
        return None if zeros is None else [zeros]


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


# ---------------------------------------------------------------------------------------------
# Derivatives
# ---------------------------------------------------------------------------------------------

# An elementwise op's Jacobian is diagonal (after broadcasting), so one function per operand
# gives both modes, as JAX's `defjvp` does: `partial(m, *operands, result, g)` returns the
# partial derivative in that operand times g. Forward mode applies it to the operand's tangent
# and sums over operands; reverse mode applies it to the result's cotangent and sums it back to
# the operand's shape (`ad.unbroadcast`). Rules reuse the forward result where that is the
# standard trick (exp, tanh, sigmoid, sqrt, div) and are valid for every float type: constants
# take their operand's element type. Integer uses of the num ops never get here (the engine
# differentiates float tensors only).


class _Math:
    """The rules' view of the `ADBuilder`: `m.mul(a, b)` builds `graph.mul` (properties as
    keywords: `m.cmp(a, b, predicate="gt")`) and `m.c(v, like)` a 0-d constant of like's
    element type, so that each rule reads as its formula."""

    def __init__(self, ad) -> None:
        self.ad = ad

    def __getattr__(self, short: str):
        return functools.partial(self.ad.op, f"graph.{short}")

    def c(self, value: float, like: Value) -> Value:
        return self.ad.scalar(value, like)


def _d_abs(m: _Math, x, y, g):
    """sign(x) dx, 0 at x = 0 (numpy's sign; also for NaN)"""
    zero = m.c(0.0, x)
    up = m.where(m.cmp(x, zero, predicate="gt"), g, zero)
    return m.where(m.cmp(x, zero, predicate="lt"), m.neg(g), up)


def _d_gelu(m: _Math, x, y, g):
    """With t = tanh(u), u = c (x + k x^3) as `_gelu` computes it, y = x (1 + t) / 2 and
    dy = ((1 + t) / 2 + x/2 (1 - t^2) c (1 + 3k x^2)) dx. t is rebuilt: y/x gives it only
    where x != 0."""
    c, k = math.sqrt(2.0 / math.pi), 0.044715
    x2 = m.mul(x, x)
    t = m.tanh(m.mul(m.c(c, x), m.add(x, m.mul(m.c(k, x), m.mul(x2, x)))))
    du = m.mul(m.c(c, x), m.add(m.c(1.0, x), m.mul(m.c(3 * k, x), x2)))        # du/dx
    dt = m.mul(m.sub(m.c(1.0, x), m.mul(t, t)), du)                              # dt/dx
    half = m.c(0.5, x)
    return m.mul(g, m.add(m.mul(half, m.add(m.c(1.0, x), t)), m.mul(m.mul(half, x), dt)))


def _d_pow_base(m: _Math, x, y, z, g):
    """y x^(y-1) dx, and 0 at x = y = 0 (x^0 = 1 for every x; the formula is 0 * inf there).
    The guard is limited to x = 0 so that the rule's own derivatives stay exact elsewhere
    (at y = 0 the mixed derivative is x^-1, not 0); it folds away for a constant exponent."""
    zero = m.c(0.0, y)
    d = m.mul(y, m.pow(x, m.sub(y, m.c(1.0, y))))
    at_zero = m.where(m.cmp(y, zero, predicate="eq"), zero, d)
    return m.mul(g, m.where(m.cmp(x, zero, predicate="eq"), at_zero, d))


def _d_pow_exponent(m: _Math, x, y, z, g):
    """ln(x) x^y dy, finite wherever x > 0; 0 where x = 0 (0^y is constant for y > 0), by
    taking the log of 1 there."""
    safe = m.where(m.cmp(x, m.c(0.0, x), predicate="eq"), m.c(1.0, x), x)
    return m.mul(g, m.mul(m.log(safe), z))


def _chosen(predicate: str, side: int):
    """The partial of maximum (`predicate` "ge") or minimum ("le") in operand `side`: g where
    that operand is the result, 0 elsewhere. Ties (x == y, +0 against -0 included) go to the
    first operand in both modes, a subgradient as relu's 0 at 0 is. (The folder moves a
    constant first operand to the right, which hands its ties to the other operand.)"""

    def partial(m: _Math, x, y, z, g):
        first = m.cmp(x, y, predicate=predicate)
        zero = m.c(0.0, g)
        return m.where(first, g, zero) if side == 0 else m.where(first, zero, g)

    return partial


#: op -> its partial (unary) or (partial in x, partial in y) (binary); each maps g to f' g.
_DERIVATIVES = {
    "neg": lambda m, x, y, g: m.neg(g),                                     # -dx
    "abs": _d_abs,                                                          # sign(x) dx
    "exp": lambda m, x, y, g: m.mul(g, y),                                  # e^x dx = y dx
    "log": lambda m, x, y, g: m.div(g, x),                                  # dx / x
    "sin": lambda m, x, y, g: m.mul(g, m.cos(x)),                           # cos(x) dx
    "cos": lambda m, x, y, g: m.neg(m.mul(g, m.sin(x))),                    # -sin(x) dx
    "tanh": lambda m, x, y, g: m.mul(g, m.sub(m.c(1.0, y), m.mul(y, y))),   # (1 - y^2) dx
    "sqrt": lambda m, x, y, g: m.div(g, m.mul(y, m.c(2.0, y))),             # dx / 2y
    "rsqrt": lambda m, x, y, g: m.mul(m.mul(g, m.div(y, x)), m.c(-0.5, y)),  # -y / 2x dx
    "sigmoid": lambda m, x, y, g: m.mul(g, m.mul(y, m.sub(m.c(1.0, y), y))),  # y (1 - y) dx
    "relu": lambda m, x, y, g: m.where(m.cmp(x, m.c(0.0, x), predicate="gt"), g,
                                       m.c(0.0, x)),                        # 0 at x <= 0
    "gelu": _d_gelu,
    "softplus": lambda m, x, y, g: m.mul(g, m.sigmoid(x)),                  # sigmoid(x) dx
    "add": (lambda m, x, y, z, g: g, lambda m, x, y, z, g: g),             # dx + dy
    "sub": (lambda m, x, y, z, g: g, lambda m, x, y, z, g: m.neg(g)),      # dx - dy
    "mul": (lambda m, x, y, z, g: m.mul(g, y),                              # y dx
            lambda m, x, y, z, g: m.mul(g, x)),                             # + x dy
    "div": (lambda m, x, y, z, g: m.div(g, y),                              # dx / y
            lambda m, x, y, z, g: m.neg(m.mul(m.div(g, y), z))),            # - (x/y) / y dy
    "pow": (_d_pow_base, _d_pow_exponent),
    "maximum": (_chosen("ge", 0), _chosen("ge", 1)),
    "minimum": (_chosen("le", 0), _chosen("le", 1)),
}

#: the ops linear in all their operands: their reverse rule is their `transpose`
_LINEAR = frozenset({"neg", "add", "sub"})


def _elementwise_vjp(self, ad, cts):
    """Reverse mode: each operand's partial applied to the result's cotangent, summed back to
    the operand's shape where the operand was broadcast. (For the `Linear` ops, which get it
    as `transpose`, no partial reads the forward values.)"""
    m, z = _Math(ad), self.results[0]
    return [ad.unbroadcast(d(m, *self.operands, z, cts[0]), v)
            for d, v in zip(self._partials, self.operands)]


def _elementwise_jvp(self, ad, tangents):
    """Forward mode: the sum of each operand's partial applied to its tangent. A tangent
    that alone does not span the result (`x + b` along x, b wider than x) gets zeros of the
    result's shape added, which broadcasts it."""
    m, z = _Math(ad), self.results[0]
    parts = [d(m, *self.operands, z, t) for d, t in zip(self._partials, tangents)
             if t is not None]
    if not parts:
        return [None]
    total = ad.sum(parts)
    idle = [v for v, t in zip(self.operands, tangents) if t is None]
    if not _keeps_shape(total, z.type, idle):
        total = m.add(total, ad.zeros_like(z))
    return [total]


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


# The families built on this one, imported once everything they import from here is defined
# (see the end of graph.py).
from irkit.dialects import graph_compare  # noqa: E402,F401
