"""The scalar interface an elementwise op writes its body against, once, and its two
implementations.

An elementwise graph op means "apply a scalar function to every element". That function is
written once, as a Python function of a `Scalars` object `s` and the operands' elements:

    def sigmoid(s, x):                          # 1 / (1 + e^-x)
        one = s.const(1.0, x)
        return s.div(one, s.add(one, s.exp(s.neg(x))))

(an op answers it as `op.scalar_body(s, *elements)`: `elementwise_op` in elementwise.py
declares ops from such functions) and run by either implementation:

- `NumpyScalars` computes with numpy arrays (every element at once): the op's reference
  semantics, which `evaluate` (the interpreter) and folding use;
- `ArithScalars` builds `arith`/`math` ops at a `Builder`: the scalar body of the
  `linalg.generic` that `lower-graph-to-linalg` makes.

So the loop body of an op cannot drift from what the interpreter computes: both are the same
function. The numpy side evaluates the ops in the function's order with numpy's own kernels,
so a body that mirrors a numpy formula operation by operation gives exactly numpy's bits.

Semantics of the operations (the graph dialect's, i.e. numpy's):

- integers are signless in the IR and signed in numpy (`numpy_dtype(i32)` is int32): `cmp`,
  `max` and `min` are signed, except on i1, where False < True; arithmetic wraps;
- float `max`/`min` are IEEE 754-2019 `maximum`/`minimum` (NaN propagates, +0 > -0); float
  comparisons are ordered (false with a NaN) except `ne`, true with a NaN (numpy's `!=`);
- `cast` is numpy's `astype`: floats to integers truncate, anything to i1 is `x != 0`, i1 to
  a number is 0 or 1.

A value `x` passed to these methods is an `irkit.ir.Value` of a scalar type (ArithScalars) or
a numpy array (NumpyScalars); `is_float(x)` says which kind of number it holds either way.
Constants are made with `const(value, like)`, of `like`'s element type (`like` a value of the
same kind, or a `Type`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from irkit.attributes import FloatAttr, IntegerAttr, numpy_dtype
from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import lookup_op
from irkit.types import F32, I1, I64, FloatType, IndexType, Type
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.base import CMPF_PREDICATES, CMPI_PREDICATES

#: the predicates of `cmp` (numpy's comparisons)
PREDICATES = ("lt", "le", "gt", "ge", "eq", "ne")


class Scalars:
    """The operations an elementwise body may use (see the module docstring). Subclasses
    implement every method; a body uses nothing else, so that both implementations run it."""

    def is_float(self, x) -> bool:
        """Whether scalar `x` is a floating-point number (else an integer or i1)."""
        raise NotImplementedError

    def const(self, value, like):
        """`value` as a constant of the element type of `like` (a scalar or a Type)."""
        raise NotImplementedError

    # Arithmetic (operands of one type; `div` and the functions below are for floats).
    def add(self, x, y): raise NotImplementedError
    def sub(self, x, y): raise NotImplementedError
    def mul(self, x, y): raise NotImplementedError
    def div(self, x, y): raise NotImplementedError
    def neg(self, x): raise NotImplementedError
    def abs(self, x): raise NotImplementedError
    def max(self, x, y): raise NotImplementedError
    def min(self, x, y): raise NotImplementedError
    def pow(self, x, y): raise NotImplementedError

    # Functions of floats.
    def exp(self, x): raise NotImplementedError
    def log(self, x): raise NotImplementedError
    def log1p(self, x): raise NotImplementedError
    def sin(self, x): raise NotImplementedError
    def cos(self, x): raise NotImplementedError
    def tanh(self, x): raise NotImplementedError
    def sqrt(self, x): raise NotImplementedError
    def isnan(self, x): raise NotImplementedError
    def isfinite(self, x): raise NotImplementedError

    # Logic and choice.
    def cmp(self, predicate: str, x, y): raise NotImplementedError
    def select(self, cond, x, y): raise NotImplementedError
    def and_(self, x, y): raise NotImplementedError
    def or_(self, x, y): raise NotImplementedError
    def not_(self, x): raise NotImplementedError

    def cast(self, x, t: Type):
        """numpy's `x.astype(t)` (see the module docstring)."""
        raise NotImplementedError


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


# ---------------------------------------------------------------------------------------------
# numpy: the reference semantics
# ---------------------------------------------------------------------------------------------


_NP_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
           "eq": np.equal, "ne": np.not_equal}


class NumpyScalars(Scalars):
    """Computes with numpy arrays: every element at once, numpy's kernels, in the body's
    order. Results of 0-d operands are kept as 0-d arrays of the operand's dtype."""

    def is_float(self, x) -> bool:
        return np.asarray(x).dtype.kind == "f"

    def const(self, value, like):
        dtype = numpy_dtype(like) if isinstance(like, Type) else np.asarray(like).dtype
        return np.asarray(value, dtype=dtype)

    def add(self, x, y): return np.add(x, y)
    def sub(self, x, y): return np.subtract(x, y)
    def mul(self, x, y): return np.multiply(x, y)
    def div(self, x, y): return np.divide(x, y)
    def neg(self, x): return np.negative(x)
    def abs(self, x): return np.abs(x)
    def pow(self, x, y): return np.power(x, y)

    def max(self, x, y):
        return af.maximumf(x, y) if np.asarray(x).dtype.kind == "f" else np.maximum(x, y)

    def min(self, x, y):
        return af.minimumf(x, y) if np.asarray(x).dtype.kind == "f" else np.minimum(x, y)

    def exp(self, x): return np.exp(x)
    def log(self, x): return np.log(x)
    def log1p(self, x): return np.log1p(x)
    def sin(self, x): return np.sin(x)
    def cos(self, x): return np.cos(x)
    def tanh(self, x): return np.tanh(x)
    def sqrt(self, x): return np.sqrt(x)
    def isnan(self, x): return np.isnan(x)
    def isfinite(self, x): return np.isfinite(x)

    def cmp(self, predicate: str, x, y): return _NP_CMP[predicate](x, y)
    def select(self, cond, x, y): return np.where(cond, x, y)
    def and_(self, x, y): return np.logical_and(x, y)
    def or_(self, x, y): return np.logical_or(x, y)
    def not_(self, x): return np.logical_not(x)

    def cast(self, x, t: Type):
        dt = numpy_dtype(t)
        if dt is np.bool_:
            return np.asarray(x != 0)
        return np.asarray(af.fix_float(np.asarray(x).astype(dt), t), dtype=dt)


# ---------------------------------------------------------------------------------------------
# arith/math: the compiled form
# ---------------------------------------------------------------------------------------------

#: graph.cmp predicate -> (cmpf predicate, signed cmpi predicate, unsigned cmpi predicate)
_CMP = {
    "lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"), "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"), "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne"),
}


class ArithScalars(Scalars):
    """Builds scalar `arith`/`math` ops at builder `b` (insertion point and location).

    Constants: by default an `arith.constant` at `b`, made once per (type, value) by this
    object; `constant(value, type) -> Value` replaces that (a lowering that hoists its
    constants to the top of a function passes its own).

    Only ops MLIR's standard lowering to LLVM takes are built (`math.isfinite` and
    `math.absi` are spelled with `arith` instead), so that a kernel made here runs through
    `mlir-opt`'s own pipeline as well as irkit's."""

    def __init__(self, b: Builder,
                 constant: Callable[[object, Type], Value] | None = None) -> None:
        self.b = b
        self._constant = constant
        self._consts: dict = {}

    def op(self, name: str, *xs: Value, type: Type | None = None, **props) -> Value:
        """Build op `name` at the builder; its single result. `type` is the result type
        where the op does not infer it (casts)."""
        cls = lookup_op(name)
        op = self.b.create(cls, *xs, result_types=[type] if type is not None else None,
                           **props)
        return op.results[0]

    def is_float(self, x) -> bool:
        return is_float(x.type)

    def const(self, value, like) -> Value:
        t = like if isinstance(like, Type) else like.type
        if self._constant is not None:
            return self._constant(value, t)
        if is_float(t):
            attr = FloatAttr(float(value), t)
            key = (t, "f", np.float64(value).tobytes())     # -0.0 and NaN are keys too
        else:
            attr = IntegerAttr(int(value), t)
            key = (t, "i", int(value))
        v = self._consts.get(key)
        if v is None:
            from irkit.dialects.arith import materialize_constant
            v = self.b.insert(materialize_constant(attr, t, self.b.location)).results[0]
            self._consts[key] = v
        return v

    def _fi(self, fname: str, iname: str, x: Value, y: Value) -> Value:
        return self.op(fname if is_float(x.type) else iname, x, y)

    def add(self, x, y): return self._fi("arith.addf", "arith.addi", x, y)
    def sub(self, x, y): return self._fi("arith.subf", "arith.subi", x, y)
    def mul(self, x, y): return self._fi("arith.mulf", "arith.muli", x, y)
    def div(self, x, y): return self.op("arith.divf", x, y)
    def pow(self, x, y): return self.op("math.powf", x, y)

    def neg(self, x):
        if is_float(x.type):
            return self.op("arith.negf", x)
        return self.op("arith.subi", self.const(0, x), x)

    def abs(self, x):
        """`math.absf`; for integers max(x, 0 - x) (the minimum integer stays itself, as in
        numpy), not `math.absi`, which MLIR's math-to-libm conversion rejects."""
        if is_float(x.type):
            return self.op("math.absf", x)
        return self.op("arith.maxsi", x, self.op("arith.subi", self.const(0, x), x))

    def max(self, x, y):
        if x.type is I1:
            return self.op("arith.ori", x, y)
        return self._fi("arith.maximumf", "arith.maxsi", x, y)

    def min(self, x, y):
        if x.type is I1:
            return self.op("arith.andi", x, y)
        return self._fi("arith.minimumf", "arith.minsi", x, y)

    def exp(self, x): return self.op("math.exp", x)
    def log(self, x): return self.op("math.log", x)
    def log1p(self, x): return self.op("math.log1p", x)
    def sin(self, x): return self.op("math.sin", x)
    def cos(self, x): return self.op("math.cos", x)
    def tanh(self, x): return self.op("math.tanh", x)
    def sqrt(self, x): return self.op("math.sqrt", x)
    def isfinite(self, x):
        """|x| < inf (ordered: false for NaN), not `math.isfinite`, which MLIR's
        math-to-libm conversion rejects."""
        return self.cmp("lt", self.abs(x), self.const(float("inf"), x))

    def isnan(self, x):
        return self.op("arith.cmpf", x, x,
                       predicate=IntegerAttr(CMPF_PREDICATES.index("uno"), I64))

    def cmp(self, predicate: str, x, y):
        fp, sp, up = _CMP[predicate]
        t = x.type
        if is_float(t):
            return self.op("arith.cmpf", x, y,
                           predicate=IntegerAttr(CMPF_PREDICATES.index(fp), I64))
        p = up if t is I1 else sp
        return self.op("arith.cmpi", x, y, predicate=IntegerAttr(CMPI_PREDICATES.index(p), I64))

    def select(self, cond, x, y): return self.op("arith.select", cond, x, y)
    def and_(self, x, y): return self.op("arith.andi", x, y)
    def or_(self, x, y): return self.op("arith.ori", x, y)
    def not_(self, x): return self.op("arith.xori", x, self.const(1, I1))

    def cast(self, x, t: Type):
        s = x.type
        if s is t:
            return x
        if t is I1:                                         # x != 0, NaN included
            return self.cmp("ne", x, self.const(0, s))
        if is_float(s) and is_float(t):
            if s.width == t.width:                          # f16 <-> bf16: through f32
                return self.cast(self.cast(x, F32), t)
            return self.op("arith.extf" if s.width < t.width else "arith.truncf", x, type=t)
        if is_float(t):                                     # i1 counts as 0/1, not 0/-1
            if isinstance(s, IndexType):
                return self.cast(self.cast(x, I64), t)
            return self.op("arith.uitofp" if s is I1 else "arith.sitofp", x, type=t)
        if is_float(s):
            return self.op("arith.fptosi", x, type=t)
        if isinstance(s, IndexType) or isinstance(t, IndexType):
            return self.op("arith.index_cast", x, type=t)
        if s.width < t.width:
            return self.op("arith.extui" if s is I1 else "arith.extsi", x, type=t)
        if s.width > t.width:
            return self.op("arith.trunci", x, type=t)
        return x


__all__ = ["Scalars", "NumpyScalars", "ArithScalars", "PREDICATES"]
