"""Elementwise graph ops: unary and binary arithmetic, comparisons, logic, `where`, `cast`.

Binary ops broadcast as numpy does and need both operands of one element type (no implicit
promotion; the DSL writes `cast`). Each op is a class made from one table row: its name,
its numpy kernel, the element types it accepts, and a docstring example.
"""

from __future__ import annotations

import numpy as np

from irkit.opdef import AnyTensor, Commutative, Elementwise, Operand, Pure, Result
from irkit.types import I1
from irkit.dialects.graph import (
    GraphOp, ShapeError, StrProp, TensorSpec, broadcast_shapes, graph, is_float, same_dtype,
)

_TRAITS = (Pure(), Elementwise())


def _check_kind(spec: TensorSpec, kind: str, name: str) -> None:
    """`kind`: "float" (floating point), "num" (float or integer, not i1), "bool" (i1)."""
    t = spec.dtype
    ok = {"float": is_float(t), "num": t is not I1, "bool": t is I1}[kind]
    if not ok:
        want = {"float": "a floating-point", "num": "a numeric (non-i1)", "bool": "an i1"}[kind]
        raise ShapeError(f"'{name}' needs {want} element type, got {spec}")


def _as(x, like_dtype):
    """numpy results of 0-d inputs are scalars; the interpreter keeps arrays of the IR type."""
    return np.asarray(x, dtype=like_dtype)


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------


class UnaryOp(GraphOp):
    """`%r = graph.op %x : (T) -> T`, the kernel applied to every element."""

    __slots__ = ()
    operand = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS
    _kind = "float"

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        _check_kind(x, cls._kind, cls.name)
        return [x]

    def evaluate(self, x):
        return _as(self._kernel(x), x.dtype)


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
    cls = type(f"{short.capitalize()}Op", (base,), {
        "__doc__": f"{summary}\n\n        {example}\n    ",
        "__slots__": (), "name": f"graph.{short}", "_kernel": staticmethod(kernel),
        "_kind": kind, "__module__": __name__, **extra,
    })
    return graph.op(cls)


for _short, _kernel, _kind, _summary in _UNARY:
    _t = "i1" if _kind == "bool" else "f32"
    _declare(UnaryOp, _short, _kernel, _kind, _summary,
             f"%r = graph.{_short} %x : (tensor<4x{_t}>) -> tensor<4x{_t}>")


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------


class BinaryOp(GraphOp):
    """`%r = graph.op %lhs, %rhs : (A, B) -> C`, broadcasting A and B to C."""

    __slots__ = ()
    lhs = Operand(AnyTensor)
    rhs = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS
    _kind = "num"

    @classmethod
    def infer(cls, args, props):
        a, b = args
        t = same_dtype(a, b)
        _check_kind(a, cls._kind, cls.name)
        return [TensorSpec(broadcast_shapes(a, b), cls._result_dtype(t))]

    @staticmethod
    def _result_dtype(t):
        return t

    def evaluate(self, a, b):
        return _as(self._kernel(a, b), a.dtype)


_BINARY = [
    # name       kernel           kind     commutative  summary
    ("add", np.add, "num", True, "Sum, x + y."),
    ("sub", np.subtract, "num", False, "Difference, x - y."),
    ("mul", np.multiply, "num", True, "Product, x * y."),
    ("div", np.divide, "float", False, "Quotient, x / y (IEEE: x/0 is inf or NaN)."),
    ("pow", np.power, "float", False, "Power, x ** y."),
    ("maximum", np.maximum, "num", True, "Elementwise maximum (NaN if either is NaN)."),
    ("minimum", np.minimum, "num", True, "Elementwise minimum (NaN if either is NaN)."),
    ("and", np.logical_and, "bool", True, "Logical and of i1 tensors."),
    ("or", np.logical_or, "bool", True, "Logical or of i1 tensors."),
]

for _short, _kernel, _kind, _comm, _summary in _BINARY:
    _t = "i1" if _kind == "bool" else "f32"
    _declare(BinaryOp, _short, _kernel, _kind, _summary,
             f"%r = graph.{_short} %x, %y : (tensor<4x3x{_t}>, tensor<3x{_t}>) -> "
             f"tensor<4x3x{_t}>",
             traits=_TRAITS + ((Commutative(),) if _comm else ()))


_PREDICATES = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
               "eq": np.equal, "ne": np.not_equal}


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
        _check_kind(c, "bool", cls.name)
        t = same_dtype(a, b)
        return [TensorSpec(broadcast_shapes(c, a, b), t)]

    def evaluate(self, c, a, b):
        return _as(np.where(c, a, b), a.dtype)


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
        from irkit.attributes import numpy_dtype
        dt = numpy_dtype(self.results[0].type.element)
        if dt is np.bool_:
            return np.asarray(x != 0)
        return np.asarray(x).astype(dt)
