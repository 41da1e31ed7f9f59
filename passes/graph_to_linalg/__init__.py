"""The rules of `lower-graph-to-linalg`, one module per graph op family; `core.py` holds the
per-function driver, the rule table and the helpers the rules share (read its docstring).

Importing the package registers every rule: the family modules are imported here, each
building on `core` (and `loss` on `reduce`).
"""

from irkit.passes.graph_to_linalg.core import (  # noqa: F401
    CONVERSIONS, ConversionError, FunctionConversion, converts, converts_interface, rule_for,
    rule_table,
)
from irkit.passes.graph_to_linalg import (  # noqa: F401,E402  (each registers its rules)
    elementwise, reduce, loss, matmul, shape, slicing, indexing, nn,
)
