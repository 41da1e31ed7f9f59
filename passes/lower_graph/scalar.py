"""Scalar code for the lowering rules: one method per arithmetic idea, the `arith`/`math` op
chosen by the element type, so that a rule reads as the formula it computes
(`s.add(s.mul(x, y), z)`) for floats and integers alike.

The operations and their semantics (numpy's: signed integer comparisons, IEEE maximum and
minimum, numpy's casts) are those of the scalar interface the elementwise graph ops write
their bodies against, `irkit.dialects.graph.scalar.ArithScalars`; `Scalars` is that, with
constants hoisted to the top of the function being lowered, plus a few conveniences.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import lookup_op
from irkit.types import I64, FloatType, IntegerType, Type
from irkit.dialects.graph.scalar import ArithScalars


def emit(b: Builder, name: str, *operands: Value, type: Type | None = None,
         **props) -> Value:
    """Build op `name` (registered) at `b` and return its single result; `type` is the
    result type when the op cannot infer it (casts)."""
    cls = lookup_op(name)
    op = b.create(cls, *operands, result_types=[type] if type is not None else None, **props)
    return op.results[0]


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


class Scalars(ArithScalars):
    """Builds scalar ops at `b`; constants come from the function lowering `lw` (hoisted)."""

    def __init__(self, lw, b: Builder) -> None:
        super().__init__(b, lw.constant)
        self.lw = lw

    def c(self, value, t: Type) -> Value:
        return self.lw.constant(value, t)

    def math(self, name: str, x: Value, *more: Value) -> Value:
        return self.op(f"math.{name}", x, *more)

    def count(self, n: Value, t: Type) -> Value:
        """An index count as a value of element type `t` (numpy's `dtype.type(n)`)."""
        if isinstance(t, IntegerType):
            return self.op("arith.index_cast", n, type=t)
        return self.op("arith.sitofp", self.op("arith.index_cast", n, type=I64), type=t)
