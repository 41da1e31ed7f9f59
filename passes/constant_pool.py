"""`ConstantPool`: scalar `arith.constant`s made once per block, at its top.

Lowerings that need the same constant in many places (an index bound, a zero, a fill
value) ask the pool: the first request materializes the constant at the top of the block,
after the ones made before it (in request order), so it dominates every later op of the block
and of the regions inside it; later requests get the same value. Floats are keyed by their
bits, so -0.0 and NaN are constants of their own.
"""

from __future__ import annotations

import struct

from irkit.attributes import FloatAttr, IntegerAttr
from irkit.ir import Block, Operation, Value
from irkit.types import FloatType, Type
from irkit.dialects.arith import materialize_constant


class ConstantPool:
    """The constants of one block; `last` is the last one made (code after the constants
    goes after it)."""

    def __init__(self, block: Block, location=None) -> None:
        self.block = block
        self.location = location
        self.last: Operation | None = None
        self._values: dict = {}

    def get(self, value, t: Type, location=None) -> Value:
        if isinstance(t, FloatType):
            attr = FloatAttr(float(value), t)
            key = (t, "f", struct.pack("<d", float(value)))
        else:
            attr = IntegerAttr(int(value), t)
            key = (t, "i", int(value))
        v = self._values.get(key)
        if v is None:
            op = materialize_constant(attr, t)
            op.location = location if location is not None else self.location
            if self.last is None:
                self.block.insert_before(self.block.first, op)
            else:
                self.block.insert_after(self.last, op)
            self.last = op
            v = self._values[key] = op.results[0]
        return v
