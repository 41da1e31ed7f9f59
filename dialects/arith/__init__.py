"""The `arith` dialect: integer and floating-point arithmetic, comparisons and casts, with
MLIR 22's op names, operand names, properties, custom syntax and semantics.

The dialect is split by concept, each part importing only those before it:

- `fold` — the numerics every op shares: value representation, two's-complement wrapping,
  constant attribute <-> numpy value;
- `base` — the flag attributes, the custom-syntax pieces and the op base classes (also used
  by `math` and `vector`);
- `integer` — constants and integer ops;
- `casts` — conversions (integer/float widths, int <-> float, index casts, bitcast);
- `floating` — float ops, comparisons and select.

Importing the package registers every op; its namespace holds the public names of all
parts (`from irkit.dialects.arith import AddFOp, ConstantOp, FASTMATH_FAST`).
"""

from irkit.dialects.arith import fold  # noqa: F401
from irkit.dialects.arith.base import *  # noqa: F401,F403
from irkit.dialects.arith.integer import *  # noqa: F401,F403
from irkit.dialects.arith.casts import *  # noqa: F401,F403
from irkit.dialects.arith.floating import *  # noqa: F401,F403
