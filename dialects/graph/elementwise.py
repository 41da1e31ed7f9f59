"""Elementwise graph ops: unary and binary arithmetic and logic, and `zeros_like`.

Binary ops broadcast as numpy does and need both operands of one element type (no implicit
promotion; the DSL writes `cast`). Each op is one declaration, `elementwise_op(...)`: its
name, its **scalar body** (the function of one element, written once against the scalar
interface of `scalar.py`), the element types it accepts, a summary, and its derivative.
The body is the op's only formula: `evaluate` (the interpreter, folding) runs it on numpy
arrays, and `lower-graph-to-linalg` builds it as the body of a `linalg.generic` (the loop
body, once lowered), so the compiled code cannot drift from the reference semantics.
Written in the order numpy's own formula evaluates, it gives numpy's bits exactly; the one
op whose numpy kernel has no scalar form in the same order, `softplus` (`np.logaddexp`
rounds differently from any composition of numpy's `exp` and `log1p`), keeps that kernel
for `evaluate` (`numpy=`), its body then being the compiled formula only. (One
bit moved by choice: relu(-0.0) is +0.0 for every float type, IEEE's maximum, as numpy gives
for float32 and float64; numpy's float16 maximum kept -0.0.)
The ops of this module are declared from the tables `_UNARY` and `_BINARY` (a row an op);
docs/adding_an_elementwise_op.md walks through adding one. The elementwise ops with
element-type rules of their own (comparisons, `where`, `cast`) are in `compare.py`, which
builds on this module's `BinaryOp` and fold helpers and declares their bodies by hand.

Canonicalization comes in two tables and a named pattern:

- `_UNARY_LAWS` and `_BINARY_LAWS` are identity folds (`x * 1 -> x`, `-(-x) -> x`,
  `x - x -> 0` for integers): they return an existing value or a constant, never a new op.
- `_PEEPHOLES` are one-line rewrites that build ops (`x - (-y) -> x + y`).
- Longer rewrites are pattern classes: `NegOfConstant` (`x * -1 -> -x`) here, and
  `CmpConstantRight`, `NotOfIntCmp`, `CastOfCast` in `compare.py`.

Every rule is exact in IEEE arithmetic, signed zeros and NaN included, which is why some
familiar ones are missing: `x * 0 -> 0` and `x - x -> 0` hold for integers only (inf and NaN),
`x + 0.0 -> x` is wrong for x = -0.0 (the unit of addition is -0.0), and `exp(log(x))` is
NaN, not x, for x < 0. A rule that drops an operand also needs the result to have the kept
value's shape at run time, not only its type (`keeps_shape`): with `x: tensor<?xf32>`,
`x * dense<1.0> : tensor<3xf32>` broadcasts a size-1 x to 3 elements.

Derivatives (see `irkit.ad_rules`) are declared with the body: one partial per operand (the
table `_DERIVATIVES` for the ops of the tables), from which `elementwise_op` makes the op's
`vjp` (`transpose` for the `Linear` neg, add, sub) and `jvp`. An op declared without one
(and, or, not) is `NonDifferentiable`.
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Callable

import numpy as np

from irkit.attributes import DenseElementsAttr, numpy_dtype
from irkit.ad_rules import Linear, NonDifferentiable
from irkit.sharding_rules import ShardingRule, elementwise_rule
from irkit.dialects.arith import fold as af
from irkit.ir import Operation, Value
from irkit.opdef import AnyTensor, Commutative, Elementwise, Operand, Pure, Result
from irkit.peephole import peephole
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value
from irkit.types import I1, RankedTensorType, Type
from irkit.dialects.graph.base import (
    FOLD_LIMIT, GraphOp, ShapeError, TensorSpec, broadcast_shapes, graph, is_float, is_int,
    same_dtype,
)
from irkit.dialects.graph.control import may_be_dead
from irkit.dialects.graph.scalar import NumpyScalars, Scalars

#: the numpy implementation of the scalar interface: what `evaluate` runs a body with
NUMPY = NumpyScalars()

ELEMENTWISE_TRAITS = (Pure(), Elementwise())


def check_kind(spec: TensorSpec, kind: str) -> None:
    """`kind`: "float" (floating point), "num" (float or integer, not i1), "bool" (i1)."""
    t = spec.dtype
    ok = {"float": is_float(t), "num": t is not I1, "bool": t is I1}[kind]
    if not ok:
        want = {"float": "a floating-point", "num": "a numeric (non-i1)", "bool": "an i1"}[kind]
        raise ShapeError(f"operands need {want} element type, got {spec}")


def as_dtype(x, like_dtype):
    """numpy results of 0-d inputs are scalars; the interpreter keeps arrays of the IR type."""
    return np.asarray(x, dtype=like_dtype)


# ---------------------------------------------------------------------------------------------
# Helpers of the folds and patterns
# ---------------------------------------------------------------------------------------------


def keeps_shape(x: Value, result_type: Type, others) -> bool:
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


def literal_matches(attr, lit) -> bool:
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


def filled_constant(value, t: Type):
    """A constant of type `t` with `value` in every element; None for dynamic shapes."""
    if not isinstance(t, RankedTensorType) or not t.has_static_shape:
        return None
    return DenseElementsAttr(t, np.full(t.shape, value, dtype=numpy_dtype(t.element)))


def _kind_of(t: Type) -> str:
    return "float" if is_float(t) else "bool" if t is I1 else "int"


def elementwise_sharding(op: GraphOp) -> ShardingRule:
    """The sharding rule of a broadcasting elementwise op (`irkit.sharding_rules`): every
    result dimension a factor, shared by the operand dimensions not broadcast; partial sums
    pass through the operand groups of the op's `_sum_linear` (see `_SUM_LINEAR`)."""
    return elementwise_rule(op, getattr(op, "_sum_linear", ()))


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
    traits = ELEMENTWISE_TRAITS
    _kind = "float"
    _law: str | None = None
    _sum_linear: tuple = ()
    sharding_rule = elementwise_sharding
    #: the body (s, x) -> element, and a numpy kernel `evaluate` uses instead, if any
    _body: Callable
    _numpy: Callable | None = None

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        check_kind(x, cls._kind)
        return [x]

    def scalar_body(self, s: Scalars, x):
        """The op's function of one element (see the module docstring), built by `s`."""
        return self._body(s, x)

    def evaluate(self, x):
        kernel = self._numpy
        return as_dtype(kernel(x) if kernel is not None else self.scalar_body(NUMPY, x),
                        x.dtype)

    def fold_identity(self, operands):
        inner = self.operand.defining_op(self.name)
        if inner is None or self._law is None:
            return None
        if self._law == "involution":
            x = inner.operand
            return [x] if x.type is self.results[0].type else None
        return [inner.results[0]] if inner.results[0].type is self.results[0].type else None


# Scalar bodies, each in the order of operations of the numpy formula it replaces, so that
# `evaluate` gives the very bits that formula gave.


def _rsqrt(s: Scalars, x):
    """1 / sqrt(x), two correctly rounded steps as numpy takes them (a fused `math.rsqrt`
    would round once, differently)."""
    return s.div(s.const(1.0, x), s.sqrt(x))


def _sigmoid(s: Scalars, x):
    """1 / (1 + e^-x): e^-x overflows to inf for very negative x, giving 1/inf = 0, the right
    limit."""
    one = s.const(1.0, x)
    return s.div(one, s.add(one, s.exp(s.neg(x))))


def _relu(s: Scalars, x):
    """max(x, 0), IEEE's maximum for floats: NaN propagates and relu(-0.0) is +0.0, as
    numpy's float32 and float64 `maximum(x, 0)` give. (numpy's float16 maximum keeps -0.0
    there, the one bit in which this body differs from the old numpy kernel; one rule for
    every float type is kept instead.)"""
    return s.max(x, s.const(0, x))


def _gelu(s: Scalars, x):
    """The tanh approximation (Hendrycks & Gimpel 2016), as GPT-2 and the DSL use it:
    (0.5 x) (1 + tanh(c (x + ((0.044715 x) x) x))), c = sqrt(2/pi) in x's type."""
    cube = s.mul(s.mul(s.mul(s.const(0.044715, x), x), x), x)
    u = s.mul(s.const(math.sqrt(2.0 / math.pi), x), s.add(x, cube))
    return s.mul(s.mul(s.const(0.5, x), x), s.add(s.const(1.0, x), s.tanh(u)))


def _softplus(s: Scalars, x):
    """max(x, 0) + log1p(e^-|x|): no overflow, NaN propagates. (`evaluate` keeps numpy's
    `logaddexp(0, x)`, which agrees to an ulp but not to the bit: see the module docstring.)"""
    tail = s.log1p(s.exp(s.neg(s.abs(x))))
    return s.add(s.max(x, s.const(0.0, x)), tail)


_UNARY = [
    # name       body                              kind     summary
    ("neg", lambda s, x: s.neg(x), "num", "Negation, -x."),
    ("abs", lambda s, x: s.abs(x), "num", "Absolute value, |x|."),
    ("exp", lambda s, x: s.exp(x), "float", "Exponential, e^x."),
    ("log", lambda s, x: s.log(x), "float", "Natural logarithm, ln x."),
    ("sin", lambda s, x: s.sin(x), "float", "Sine."),
    ("cos", lambda s, x: s.cos(x), "float", "Cosine."),
    ("tanh", lambda s, x: s.tanh(x), "float", "Hyperbolic tangent."),
    ("sqrt", lambda s, x: s.sqrt(x), "float", "Square root."),
    ("rsqrt", _rsqrt, "float", "Reciprocal square root, 1/sqrt(x)."),
    ("sigmoid", _sigmoid, "float", "Logistic sigmoid, 1/(1 + e^-x)."),
    ("relu", _relu, "num", "Rectified linear unit, max(x, 0)."),
    ("gelu", _gelu, "float", "GELU, tanh approximation: "
     "0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))."),
    ("softplus", _softplus, "float", "Softplus, ln(1 + e^x), computed without overflow."),
    ("not", lambda s, x: s.not_(x), "bool", "Logical negation of an i1 tensor."),
]

#: numpy kernels `evaluate` runs instead of the body: numpy's own `logaddexp` (see the
#: module docstring), kept so that the interpreter's softplus stays numpy's to the bit
_NUMPY_KERNELS = {"softplus": lambda x: np.logaddexp(0, x)}


def elementwise_op(short: str, body: Callable, *, kind: str, summary: str,
                   derivative=None, linear: bool = False, commutative: bool = False,
                   numpy: Callable | None = None, example: str | None = None,
                   dialect=graph, **extra) -> type:
    """Declare an elementwise op and register it: the whole of what it is.

    - `short`: the op is `<dialect>.<short>` (`graph.<short>` by default); a graph op is
      also a module attribute (`AddOp`, `NegOp`...) so that code and tests can name it;
    - `body(s, x)` or `body(s, x, y)`: the scalar body (see the module docstring); its
      arity makes the op unary (`%r = graph.op %x : (T) -> T`) or binary (broadcasting);
    - `kind`: the element types it takes: "float", "num" (float or integer, not i1),
      "bool" (i1);
    - `derivative`: one partial per operand (a function, or a pair for a binary op) mapping
      the cotangent or tangent g to f' g: `partial(m, x, y, g)` for unary ops (y the
      result), `partial(m, x, y, z, g)` for binary ones (z the result), `m` building graph
      ops (`m.mul(a, b)`, `m.c(1.0, like)`); None: the op is `NonDifferentiable`;
      `linear`: the partials do not read the operands (the op is its own `transpose`);
    - `commutative`, `numpy` (a kernel `evaluate` uses instead of the body), `example` (the
      docstring's IR example, by default one on `tensor<4xf32>`), `dialect`, and `extra`
      class attributes (laws, patterns).

    Nothing else is needed: the interpreter runs the body, `lower-graph-to-linalg` makes it
    a `linalg.generic`, and `autodiff` uses the partials."""
    arity = len(inspect.signature(body).parameters) - 1
    base = UnaryOp if arity == 1 else BinaryOp
    t = "i1" if kind == "bool" else "f32"
    if example is None:
        shapes = f"tensor<4x{t}>" if arity == 1 else f"tensor<4x3x{t}>, tensor<3x{t}>"
        operands = "%x" if arity == 1 else "%x, %y"
        result = f"tensor<4x{t}>" if arity == 1 else f"tensor<4x3x{t}>"
        example = f"%r = {dialect.name}.{short} {operands} : ({shapes}) -> {result}"
    traits = ELEMENTWISE_TRAITS + ((Commutative(),) if commutative else ())
    if derivative is None:
        traits = traits + (NonDifferentiable(),)
    else:
        traits = traits + ((Linear(),) if linear else ())
        extra.update(_partials=derivative if isinstance(derivative, tuple) else (derivative,),
                     jvp=_elementwise_jvp, **{"transpose" if linear else "vjp": _elementwise_vjp})
    cls_name = f"{short.capitalize()}Op"
    cls = type(cls_name, (base,), {
        "__doc__": f"{summary}\n\n        {example}\n    ",
        "__slots__": (), "name": f"{dialect.name}.{short}", "_body": staticmethod(body),
        "_numpy": staticmethod(numpy) if numpy is not None else None,
        "_kind": kind, "__module__": __name__ if dialect is graph else body.__module__,
        "__qualname__": cls_name, "traits": traits, **extra,
    })
    if dialect is graph:
        globals()[cls_name] = cls
    return dialect.op(cls)


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
    traits = ELEMENTWISE_TRAITS
    sharding_rule = elementwise_sharding

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
        t = self.results[0].type
        if may_be_dead(self.operand) or (t.has_static_shape and t.num_elements > FOLD_LIMIT):
            return None
        zeros = filled_constant(0, t)
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
        return [x] if keeps_shape(x, t, [y]) else None
    attr = filled_constant(gives, t)
    return None if attr is None else [attr]


class BinaryOp(GraphOp):
    """`%r = graph.op %lhs, %rhs : (A, B) -> C`, broadcasting A and B to C."""

    __slots__ = ()
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = ELEMENTWISE_TRAITS
    _kind = "num"
    _laws: tuple = ()
    _sum_linear: tuple = ()
    sharding_rule = elementwise_sharding

    @classmethod
    def infer(cls, args, props):
        a, b = args
        t = same_dtype(a, b)
        check_kind(a, cls._kind)
        return [TensorSpec(broadcast_shapes(a, b), cls._result_dtype(t))]

    #: the body (s, x, y) -> element, and a numpy kernel `evaluate` uses instead, if any
    _body: Callable
    _numpy: Callable | None = None

    @staticmethod
    def _result_dtype(t):
        return t

    def scalar_body(self, s: Scalars, x, y):
        """The op's function of one element of each operand, built by `s`."""
        return self._body(s, x, y)

    def evaluate(self, a, b):
        kernel = self._numpy
        return as_dtype(kernel(a, b) if kernel is not None else self.scalar_body(NUMPY, a, b),
                        a.dtype)

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
                    hit = c is not None and literal_matches(c, rhs)
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
        if attr is None or not literal_matches(attr, self.lit) or \
                not keeps_shape(x, op.results[0].type, [c]):
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


# maximum and minimum are the scalar interface's `max` / `min`: IEEE maximum and minimum on
# floats (+0 > -0, NaN propagating). numpy's own maximum returns its first operand when +0
# meets -0, which would make the result depend on operand order (and the folder swaps
# commutative operands).
_BINARY = [
    # name       body                             kind     commutative  summary
    ("add", lambda s, x, y: s.add(x, y), "num", True, "Sum, x + y."),
    ("sub", lambda s, x, y: s.sub(x, y), "num", False, "Difference, x - y."),
    ("mul", lambda s, x, y: s.mul(x, y), "num", True, "Product, x * y."),
    ("div", lambda s, x, y: s.div(x, y), "float", False,
     "Quotient, x / y (IEEE: x/0 is inf or NaN)."),
    ("pow", lambda s, x, y: s.pow(x, y), "float", False, "Power, x ** y."),
    ("maximum", lambda s, x, y: s.max(x, y), "num", True,
     "Elementwise maximum (NaN if either is NaN; +0 > -0)."),
    ("minimum", lambda s, x, y: s.min(x, y), "num", True,
     "Elementwise minimum (NaN if either is NaN; -0 < +0)."),
    ("and", lambda s, x, y: s.and_(x, y), "bool", True, "Logical and of i1 tensors."),
    ("or", lambda s, x, y: s.or_(x, y), "bool", True, "Logical or of i1 tensors."),
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


#: op -> its partial (unary) or (partial in x, partial in y) (binary); each maps g to f' g
#: (the `derivative` of `elementwise_op`).
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

# Partial sums (sharding rules): the operand groups each op is linear in, jointly. A rank's
# terms pass through them: sum_r (x_r + y_r) = sum_r x_r + sum_r y_r, and
# sum_r x_r * y = (sum_r x_r) * y with y replicated (equal up to rounding).
_SUM_LINEAR = {"neg": ((0,),), "add": ((0, 1),), "sub": ((0, 1),), "mul": ((0,), (1,)),
               "div": ((0,),)}


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
    if not keeps_shape(total, z.type, idle):
        total = m.add(total, ad.zeros_like(z))
    return [total]


for _short, _body, _kind, _summary in _UNARY:
    elementwise_op(_short, _body, kind=_kind, summary=_summary,
                   derivative=_DERIVATIVES.get(_short), linear=_short in _LINEAR,
                   numpy=_NUMPY_KERNELS.get(_short), _law=_UNARY_LAWS.get(_short),
                   _sum_linear=_SUM_LINEAR.get(_short, ()),
                   canonicalization_patterns=_PEEPHOLES.get(_short, ()))

for _short, _body, _kind, _comm, _summary in _BINARY:
    elementwise_op(_short, _body, kind=_kind, summary=_summary, commutative=_comm,
                   derivative=_DERIVATIVES.get(_short), linear=_short in _LINEAR,
                   _laws=tuple(law[1:] for law in _BINARY_LAWS if law[0] == _short),
                   _sum_linear=_SUM_LINEAR.get(_short, ()),
                   canonicalization_patterns=_PEEPHOLES.get(_short, ()))
