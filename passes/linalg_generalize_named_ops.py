"""linalg-generalize-named-ops: rewrite every named linalg op into a `linalg.generic`."""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.dialects.linalg import GenericOp, StructuredOp, generalize


@register_pass
class LinalgGeneralizeNamedOps(Pass):
    """Turn named structured ops (`linalg.matmul`, `linalg.fill`, `linalg.map`, ...) into the
    equivalent `linalg.generic` (MLIR's pass of this name), so that later passes see one
    form: explicit maps, iterator types and body.

    Algorithm:
      1. Collect every structured op under the root that is not a `linalg.generic`, in
         post-order: a named op nested in another's body is generalized before the outer
         op's body is copied.
      2. For each, build the generic op just before it (`generalize`: the named op's maps
         and iterator types, a copy of its body), replace the uses of its results with the
         generic's and erase it. Discardable attributes are dropped, as in MLIR.
    """

    name = "linalg-generalize-named-ops"

    def run(self, op: Operation) -> None:
        named = [o for o in op.walk(post_order=True)
                 if isinstance(o, StructuredOp) and not isinstance(o, GenericOp)]
        for o in named:
            new = generalize(o, Builder.before(o))
            o.replace_all_uses_with(new.results)
            o.erase()
