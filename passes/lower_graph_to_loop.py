"""lower-graph-to-loop: graph functions (tensors, value semantics) to loop nests over
buffers (`loop`, `memory`, `arith`, `math`), in destination-passing style.

The per-function work and the per-op rules are in `irkit.passes.lower_graph` (one module
per graph op family); docs/lowering.md describes the calling convention and lists the ops
not lowered yet.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr, DictionaryAttr, StringAttr, TypeAttr
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.symbols import lookup_symbol, symbol_name
from irkit.types import FunctionType
from irkit.dialects import loop as _loop, memory as _memory  # noqa: F401  (ops we build)
from irkit.dialects.graph import VariableOp
from irkit.passes.lower_graph import LOWERINGS, FunctionLowering, LoweringError
from irkit.passes.lower_graph.core import is_tensor
from irkit.passes.lower_graph.output_sizes import output_sizes_function


def _is_graph_function(f: Operation) -> bool:
    """A function with tensors in its signature, or graph ops in its body."""
    ftype: FunctionType = f.properties["function_type"].value
    if any(is_tensor(t) for t in (*ftype.inputs, *ftype.results)):
        return True
    return any(op.name.startswith("graph.") for op in f.walk() if op is not f)


def _variables_of(f: Operation) -> list[VariableOp]:
    """The graph.variables `f` reads or assigns, in declaration order."""
    found = {}
    for op in f.walk():
        if op.name in ("graph.read", "graph.assign"):
            var = lookup_symbol(op, op.properties["variable"])
            if var is None:
                raise LoweringError(f"'{op.properties['variable'].format()}' does not name a "
                                    "graph.variable", op.location)
            found[id(var)] = var

    def declared_at(var: Operation) -> tuple:
        block = var.parent
        return (id(block), list(block.ops).index(var) if block is not None else 0)

    return sorted(found.values(), key=declared_at)


@register_pass
class LowerGraphToLoop(Pass):
    """Lower graph functions to loop nests over memrefs, outputs written in place.

    Algorithm:
      1. Find the functions to lower: those with tensor types in their signature or graph
         ops in their body. A `func.call` of one is an error (calls are not lowered yet).
      2. For each, build the new signature: tensor arguments become memrefs of the same
         shape, each tensor result an extra trailing memref argument the caller provides
         (destination-passing; the function returns no tensors), then one memref argument
         per graph.variable the function reads or assigns, in declaration order.
      3. Walk the body in order. Each op's rule (`LOWERINGS`, by op name) gives its results
         buffers: a value that is returned is computed straight into its output argument,
         others into a `memory.alloc` sized by `memory.dim` of the buffers it derives
         from; the rule emits the loop nest (`loop.parallel` over independent axes,
         `loop.for` over reduced ones, `memory.load`/`store`, scalar `arith`/`math`).
         Ops without tensors are copied; any other op is a located error.
      4. Free each fresh buffer (`memory.dealloc`) after the last op that reads it; at the
         return, copy into the outputs what was not computed there.
      5. Replace the `graph.variable` declarations by a `graph.variables` attribute of their
         module (name, type, initializer: what a runtime needs to make the buffers).
         Afterwards no graph op and no tensor value is left.

    Options: `parallel=false` makes every loop a `loop.for` (for backends without threads,
    or to read the IR in program order); `max-constant-elements` bounds the non-splat
    constants stored element by element; `keep-variables` keeps the declarations;
    `output-sizes` adds, after each function whose outputs have `?` sizes, a function
    `<name>_output_sizes` that computes them from the inputs' sizes
    (`lower_graph/output_sizes.py`), which libraries export and check outputs with.
    """

    name = "lower-graph-to-loop"
    anchor = "builtin.module"
    parallel: bool = True
    max_constant_elements: int = 256
    keep_variables: bool = False
    output_sizes: bool = False

    #: op name -> lowering rule (`irkit-opt --describe` lists the entry of an op)
    lowerings = LOWERINGS

    def run(self, op: Operation) -> None:
        funcs = [f for f in op.walk() if f.name == "func.func" and _is_graph_function(f)]
        names = {symbol_name(f) for f in funcs}
        for call in op.walk():
            if call.name == "func.call" and call.properties["callee"].root in names:
                callee = lookup_symbol(call, call.properties["callee"])
                if callee in funcs:
                    raise LoweringError(f"no lowering for 'func.call' yet: the callee "
                                        f"'@{symbol_name(callee)}' is a graph function whose "
                                        "signature changes", call.location)
        for f in funcs:
            lowering = FunctionLowering(f, _variables_of(f), self.parallel, self)
            lowering.run()
            sizes = output_sizes_function(lowering) if self.output_sizes else None
            if sizes is not None:
                f.parent.insert_after(f, sizes)
        if not self.keep_variables:
            _move_variables_to_attributes(op)


def _move_variables_to_attributes(root: Operation) -> None:
    """Replace the graph.variable declarations by a `graph.variables` attribute of the module
    holding them: one dictionary per variable (name, tensor type, initializer and its
    arguments), in declaration order. What a runtime needs to make the buffers it passes
    stays, and no graph op is left for a backend to trip on."""
    by_module: dict = {}
    for var in [v for v in root.walk() if isinstance(v, VariableOp)]:
        entry = {"name": StringAttr(var.var_name), "type": TypeAttr(var.tensor_type),
                 "initializer": var.properties["initializer"]}
        if var.properties.get("init_args") is not None:
            entry["init_args"] = var.properties["init_args"]
        by_module.setdefault(var.parent_op, []).append(DictionaryAttr(entry))
        var.erase()
    for module, entries in by_module.items():
        module.attributes["graph.variables"] = ArrayAttr(entries)
