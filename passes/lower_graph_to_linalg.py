"""lower-graph-to-linalg: graph ops to structured kernels on tensors (`linalg`, `tensor`,
`arith`, `math`), value semantics kept, each result computed into a destination (`outs`).

The per-function driver and the helpers rules share are in
`irkit.passes.graph_to_linalg.core`; the rules, one module per graph op family, next to it.
docs/lowering.md lists what each op becomes.
"""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.dialects import linalg as _linalg, tensor as _tensor  # noqa: F401  (ops we build)
from irkit.passes.graph_to_linalg import ConversionError, FunctionConversion
from irkit.passes.graph_to_linalg.core import rule_for, rule_table

#: graph ops that stay at this level by design: state (bufferize gives variables buffers),
#: the structured conditional (whose regions are converted), run-time checks, and
#: `scatter_add`, whose indirect writes no structured op expresses (bufferize lowers it
#: straight to loops, as MLIR lowers such ops through scf)
KEPT = frozenset({"graph.variable", "graph.read", "graph.assign", "graph.if", "graph.yield",
                  "graph.check", "graph.scatter_add"})

#: why an op has no rule, where the fix lies elsewhere: a switch/merge pair means "compute
#: only along the live edge", deadness per run rather than per element, which no kernel
#: computes; `graph-raise-control-flow` rebuilds it as the structured graph.if
_HINTS = {name: ": dataflow deadness has no structured form; run graph-raise-control-flow "
                "first (it rebuilds switch/merge as graph.if)"
          for name in ("graph.switch", "graph.merge")}


def _has_graph_ops(f: Operation) -> bool:
    """Whether `f` holds graph ops, or ops a rule converts (an elementwise op another
    dialect declares by its scalar body)."""
    return any(op.name.startswith("graph.") or rule_for(op) is not None
               for op in f.walk() if op is not f)


class _RuleTableView:
    """The pass's `lowerings`, computed when read: `core.rule_table()`, which lists the ops
    of the interface rules too (registered since the pass was imported, as a test's)."""

    def __get__(self, obj, owner) -> dict:
        return rule_table()


@register_pass
class LowerGraphToLinalg(Pass):
    """Lower graph ops to linalg and tensor ops on tensors, one rule per op.

    Algorithm:
      1. For each `func.func` holding graph ops, walk its body in order, regions included
         (the branches of a `graph.if`, which itself stays).
      2. An op with a rule (`CONVERSIONS`, by op name) is replaced where it stands: the
         rule builds before it, at its location, the ops computing its results — an
         elementwise op one all-parallel `linalg.generic` over a `tensor.empty` of the
         result's shape, broadcasting through the indexing maps; a reduction a generic with
         reduction loops into a `linalg.fill`ed accumulator, then one that rounds it — and
         the op's results are replaced by them. The `?` sizes each tensor has are tracked
         as index values (`tensor.dim` of what is not known), so rules share them.
      3. Ops without a rule are left in place, as are the variables, `graph.read` /
         `graph.assign`, `graph.if` / `graph.yield` and the `graph.check`s rules emit for
         run-time errors; `bufferize` takes them from there. With `full=true`, any other
         graph op left is an error naming the first one.

    Function signatures do not change: tensors in, tensors out.
    """

    name = "lower-graph-to-linalg"
    anchor = "builtin.module"
    full: bool = False

    #: op name (or op class, for interface rules) -> rule: `irkit-opt --describe` lists the
    #: entry of an op
    lowerings = _RuleTableView()

    def run(self, op: Operation) -> None:
        funcs = [f for f in op.walk() if f.name == "func.func" and _has_graph_ops(f)]
        for f in funcs:
            if len(f.regions[0].blocks) != 1:
                raise ConversionError("lower-graph-to-linalg expects graph functions with "
                                      "one block", f.location)
            FunctionConversion(f, self).run()
        if self.full:
            for f in funcs:
                for o in f.walk():
                    if o.name.startswith("graph.") and o.name not in KEPT:
                        raise ConversionError(f"no lower-graph-to-linalg rule for '{o.name}' "
                                              f"yet{_HINTS.get(o.name, '')}", o.location)
