"""Rules for the elementwise graph ops, `graph.zeros_like` and `graph.constant`.

- Every elementwise op (`graph/elementwise.py`, `graph/compare.py`, and any op declared the
  same way) has its scalar body declared once on its class, `scalar_body(s, *xs)`, written
  against the scalar interface of `dialects/graph/scalar.py`; the interpreter runs it on
  numpy arrays. Here it is run on an `ArithScalars` inside the body of one all-parallel
  `linalg.generic` over the result, so the kernel is the op's own formula, operation for
  operation. The op needs no entry in this table: the rule is registered for the interface
  (an op with a `scalar_body`), which is what makes adding an elementwise op one
  declaration. Broadcasting, splat constants and 0-d operands are `core.elementwise`'s.
- `graph.zeros_like` is a `linalg.fill` of 0 into a `tensor.empty` of the operand's
  run-time shape (the operand's values are not read).
- `graph.constant` is MLIR's own form, `arith.constant dense<...> : tensor<...>`; where an
  elementwise op reads a splat one, the body holds the scalar instead (`core.Read`).
"""

from __future__ import annotations

from irkit.ir import Operation, Value
from irkit.dialects.arith import materialize_constant
from irkit.passes.graph_to_linalg.core import (
    ConversionError, FunctionConversion, converts, converts_interface, elementwise,
)


def has_scalar_body(cls: type) -> bool:
    """Whether op class `cls` is an elementwise op declared by its scalar body (a graph op,
    or one another dialect declares the same way: `elementwise_op(..., dialect=...)`)."""
    return callable(getattr(cls, "scalar_body", None))


@converts_interface(has_scalar_body)
def convert_elementwise(cv: FunctionConversion, op: Operation) -> list[Value]:
    """One all-parallel `linalg.generic` whose body is the op's scalar body."""
    result = op.results[0]
    return [elementwise(cv, list(op.operands), result.type,
                        lambda s, xs: op.scalar_body(s, *xs))]


@converts("graph.zeros_like")
def convert_zeros_like(cv: FunctionConversion, op: Operation) -> list[Value]:
    result = op.results[0]
    return [cv.filled(result.type, cv.sizes(op.operand), 0)]


@converts("graph.constant")
def convert_constant(cv: FunctionConversion, op: Operation) -> list[Value]:
    attr = op.properties["value"]
    result = op.results[0]
    const = materialize_constant(attr, result.type, op.location)
    if const is None:
        raise ConversionError(f"cannot make an arith.constant of {attr.type} for a "
                              f"{result.type}", op.location)
    return [cv.b.insert(const).results[0]]
