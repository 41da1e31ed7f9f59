"""strip-debuginfo: replace every location with `loc(unknown)`."""

from __future__ import annotations

from irkit.attributes import UNKNOWN_LOC
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass


@register_pass
class StripDebugInfo(Pass):
    """Drop source locations from ops and block arguments (MLIR's strip-debuginfo).

    Algorithm: walk every op under the root (the root too) and every block argument of
    their regions, setting each location to `loc(unknown)`.
    """

    name = "strip-debuginfo"

    def run(self, op: Operation) -> None:
        for o in op.walk():
            o.location = UNKNOWN_LOC
            for region in o.regions:
                for block in region.blocks:
                    for arg in block.args:
                        if arg.location is not None:
                            arg.location = UNKNOWN_LOC
