"""The `fusion` dialect: `fusion.group`, the structured ops that compile into one kernel.

A group is a region op (one block, no arguments, not isolated from above: its ops read values
defined outside it, as MLIR's `scf.execute_region`) whose results are what its terminator
`fusion.yield` hands out. `linalg-fuse` forms groups on tensors under the cost model of
`passes/fusion_cost.py`; `bufferize` turns a group on tensors into one on memrefs (no
results: its ops write the buffers given to them, the intermediates it alone reads get
buffers allocated inside it); `lower-linalg-to-loop` turns a group on memrefs into one loop
nest over the group's shared outer parallel dims, its intermediates forwarded in registers
or shrunk to a per-point buffer, and the group disappears.

Parts: `group.py` (`fusion.group`, `fusion.yield`).
"""

from irkit.opdef import Dialect

fusion = Dialect("fusion", "Groups of structured ops compiled into one kernel (one loop nest "
                 "over their shared outer parallel dims).")

from irkit.dialects.fusion.group import GroupOp, YieldOp  # noqa: E402

__all__ = ["fusion", "GroupOp", "YieldOp"]
