"""Scalar code for the lowering rules: one method per arithmetic idea, the `arith`/`math` op
chosen by the element type, so that a rule reads as the formula it computes
(`s.add(s.mul(x, y), z)`) for floats and integers alike.

Semantics follow the graph ops' numpy kernels (what the interpreter runs):

- integers are signless in the IR and signed in numpy (`numpy_dtype(i32)` is int32), so
  comparisons, max and min use the signed predicates (`slt`, `maxsi`), except on i1, where
  numpy orders False < True (`ult`);
- float `max`/`min` are IEEE 754-2019 `maximum`/`minimum` (NaN propagates, +0 > -0), as
  `graph.maximum`/`graph.reduce_max` document; float comparisons are ordered (false with a
  NaN) except `ne`, which numpy makes true with a NaN (`une`);
- casts are numpy's `astype`: floats to integers truncate, anything to i1 is `x != 0`,
  i1 to a number is 0 or 1.
"""

from __future__ import annotations

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Value
from irkit.types import F32, I1, I64, FloatType, IndexType, IntegerType, Type
from irkit.dialects.arith_base import CMPF_PREDICATES, CMPI_PREDICATES
from irkit.passes.lower_graph.core import emit

#: graph.cmp predicate -> (cmpf predicate, signed cmpi predicate, unsigned cmpi predicate)
_CMP = {
    "lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"), "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"), "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne"),
}


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


class Scalars:
    """Builds scalar ops at `b`; constants come from the function lowering `lw` (hoisted)."""

    def __init__(self, lw, b: Builder) -> None:
        self.lw = lw
        self.b = b

    def op(self, name: str, *xs: Value, type: Type | None = None, **props) -> Value:
        return emit(self.b, name, *xs, type=type, **props)

    def c(self, value, t: Type) -> Value:
        return self.lw.constant(value, t)

    # ----- arithmetic --------------------------------------------------------------------

    def _fi(self, fname: str, iname: str, x: Value, y: Value) -> Value:
        return self.op(fname if is_float(x.type) else iname, x, y)

    def add(self, x: Value, y: Value) -> Value:
        return self._fi("arith.addf", "arith.addi", x, y)

    def sub(self, x: Value, y: Value) -> Value:
        return self._fi("arith.subf", "arith.subi", x, y)

    def mul(self, x: Value, y: Value) -> Value:
        return self._fi("arith.mulf", "arith.muli", x, y)

    def div(self, x: Value, y: Value) -> Value:
        return self.op("arith.divf", x, y)

    def neg(self, x: Value) -> Value:
        if is_float(x.type):
            return self.op("arith.negf", x)
        return self.op("arith.subi", self.c(0, x.type), x)

    def max(self, x: Value, y: Value) -> Value:
        if x.type is I1:
            return self.op("arith.ori", x, y)
        return self._fi("arith.maximumf", "arith.maxsi", x, y)

    def min(self, x: Value, y: Value) -> Value:
        if x.type is I1:
            return self.op("arith.andi", x, y)
        return self._fi("arith.minimumf", "arith.minsi", x, y)

    def math(self, name: str, x: Value, *more: Value) -> Value:
        return self.op(f"math.{name}", x, *more)

    # ----- logic and choice -------------------------------------------------------------

    def cmp(self, predicate: str, x: Value, y: Value) -> Value:
        """numpy's comparison `predicate` (lt, le, gt, ge, eq, ne) of two scalars: i1."""
        fp, sp, up = _CMP[predicate]
        t = x.type
        if is_float(t):
            return self.op("arith.cmpf", x, y,
                           predicate=IntegerAttr(CMPF_PREDICATES.index(fp), I64))
        p = up if t is I1 else sp
        return self.op("arith.cmpi", x, y, predicate=IntegerAttr(CMPI_PREDICATES.index(p), I64))

    def isnan(self, x: Value) -> Value:
        return self.op("arith.cmpf", x, x, predicate=IntegerAttr(CMPF_PREDICATES.index("uno"),
                                                                  I64))

    def select(self, cond: Value, x: Value, y: Value) -> Value:
        return self.op("arith.select", cond, x, y)

    def and_(self, x: Value, y: Value) -> Value:
        return self.op("arith.andi", x, y)

    def or_(self, x: Value, y: Value) -> Value:
        return self.op("arith.ori", x, y)

    def not_(self, x: Value) -> Value:
        return self.op("arith.xori", x, self.c(1, I1))

    # ----- conversions ------------------------------------------------------------------

    def cast(self, x: Value, t: Type) -> Value:
        """numpy's `x.astype(t)` for one element (see the module docstring)."""
        s = x.type
        if s is t:
            return x
        if t is I1:                                         # x != 0, NaN included
            return self.cmp("ne", x, self.c(0, s))
        if is_float(s) and is_float(t):
            if s.width == t.width:                          # f16 <-> bf16: through f32
                return self.cast(self.cast(x, F32), t)
            return self.op("arith.extf" if s.width < t.width else "arith.truncf", x, type=t)
        if is_float(t):                                     # i1 counts as 0/1, not 0/-1
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

    def count(self, n: Value, t: Type) -> Value:
        """An index count as a value of element type `t` (numpy's `dtype.type(n)`)."""
        if isinstance(t, IntegerType):
            return self.op("arith.index_cast", n, type=t)
        return self.op("arith.sitofp", self.op("arith.index_cast", n, type=I64), type=t)
