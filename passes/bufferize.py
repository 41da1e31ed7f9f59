"""bufferize: functions on tensors (linalg, tensor, graph state and control) -> functions on
buffers, in destination-passing style, in place where that is safe.

The rules are in `irkit.passes.bufferization`. The pass sits between `lower-graph-to-linalg`
and `lower-linalg-to-loop` (`lower-graph-to-loop` runs the three); it sets the calling
convention compiled functions have (docs/lowering.md): outputs the caller provides, the
variables as arguments, a status buffer for run-time errors, `<name>_output_sizes`.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr
from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.symbols import lookup_symbol, symbol_name
from irkit.types import FunctionType
from irkit.dialects import linalg as _linalg, memory as _memory  # noqa: F401  (ops we build)
from irkit.dialects.graph import VariableOp, variable_record
from irkit.passes.bufferization import BUFFERIZATIONS, Bufferization, BufferizeError
from irkit.passes.bufferization.buffers import is_tensor
from irkit.passes.bufferization.function import touches_tensors
from irkit.passes.bufferization.output_sizes import output_sizes_function


def has_tensors(f: Operation) -> bool:
    """A function with tensors in its signature, tensor values in its body, or graph ops."""
    ftype: FunctionType = f.properties["function_type"].value
    if any(is_tensor(t) for t in (*ftype.inputs, *ftype.results)):
        return True
    return any(op.name.startswith("graph.") or touches_tensors(op)
               for region in f.regions for op in region.ops)


def variables_of(f: Operation) -> list[VariableOp]:
    """The graph.variables `f` reads or assigns, in declaration order."""
    found = {}
    for op in f.walk():
        if op.name in ("graph.read", "graph.assign"):
            var = lookup_symbol(op, op.properties["variable"])
            if var is None:
                raise BufferizeError(f"'{op.properties['variable'].format()}' does not name a "
                                     "graph.variable", op.location)
            found[id(var)] = var

    def declared_at(var: Operation) -> tuple:
        block = var.parent
        return (id(block), list(block.ops).index(var) if block is not None else 0)

    return sorted(found.values(), key=declared_at)


def move_variables_to_attributes(root: Operation) -> None:
    """Replace the graph.variable declarations by a `graph.variables` attribute of the module
    holding them: one dictionary per variable (name, tensor type, initializer and its
    arguments), in declaration order: what a runtime needs to make the buffers it passes."""
    by_module: dict = {}
    for var in [v for v in root.walk() if isinstance(v, VariableOp)]:
        by_module.setdefault(var.parent_op, []).append(variable_record(var))
        var.erase()
    for module, entries in by_module.items():
        module.attributes["graph.variables"] = ArrayAttr(entries)


def first_tensor_op(root: Operation) -> Operation | None:
    """The first op (pre-order) that still takes or makes a tensor."""
    for op in root.walk(post_order=False):
        if any(is_tensor(v.type) for v in (*op.operands, *op.results)):
            return op
    return None


@register_pass
class Bufferize(Pass):
    """Bufferize functions on tensors: memref arguments and outputs, linalg ops on memrefs,
    views and copies, fresh buffers allocated and freed.

    Algorithm:
      1. Find the functions with tensors (in the signature or the body) or graph ops. A
         `func.call` of one is an error (its signature changes).
      2. Per function, the calling convention (docs/lowering.md): tensor arguments
         become memrefs of the same shape, each tensor result a trailing output memref
         `{graph.output = k}` the caller provides, then one memref per graph.variable used
         `{graph.variable = "name"}` (declaration order), then the status buffer
         `{graph.status}` once something is checked.
      3. Plan destinations: a value returned (the first time) is computed in its output; a
         value whose only use is the init of a later op in its block is computed where that
         op's result goes (a fill, then a reduction into it, then returned: all in the
         output).
      4. Walk the body in order, giving each tensor value a buffer:
         - a structured op writes result j into the planned buffer; else into its init's
           buffer in place when the init owns a fresh buffer made in the same block and no
           use of the init or of a view of it comes at or after the op (uses inside the
           op's body and in either branch of a later `graph.if` count), or when the init is
           a window sliced from such a buffer that the result goes back into, unread in
           between (then the insert copies nothing); else into a fresh `memory.alloc`,
           which receives a copy of the init first when the body reads it. An init that is
           a `tensor.empty` has nothing to copy;
         - `tensor.extract_slice`, `tensor.cast` and reshapes are views (`memory.subview`,
           the same buffer, `memory.view` of a buffer allocated as raw bytes because it is
           reshaped); the other tensor ops write into destinations chosen as in the
           previous point (see `bufferization/tensors.py`);
         - `graph.check` becomes `memory.check`; `graph.read` copies only when the variable
           is assigned while the value or a view of it is still read, `graph.assign` is a
           copy into the variable (guarded by the status after a check); `graph.if` is a
           `loop.if` whose branches are bufferized by the same rules; `graph.scatter_add`,
           which no structured op expresses, becomes loops over buffers directly;
         - any other op touching tensors is a located error naming it (run
           `lower-graph-to-linalg` first); ops on scalars are copied.
      5. Free each fresh buffer after the last op of its block that reads it or a view of
         it; a buffer overwritten in place is freed with the result that took it over. At
         the return, copy into the outputs what was not computed there.
      6. Replace the graph.variable declarations by the module attribute `graph.variables`
         (unless `keep-variables`), add `<fn>_output_sizes` (with `output-sizes`), and fail
         with a located error at the first op still taking or making a tensor.

    Options: `parallel=false` makes the loops this pass writes itself (`graph.scatter_add`)
    `loop.for`s; `max-constant-elements` bounds the non-splat constants stored element by
    element; `keep-variables` keeps the declarations; `output-sizes` adds, after each
    function whose outputs have `?` sizes, a function `<name>_output_sizes` that computes
    them from the inputs' sizes (`bufferization/output_sizes.py`), which libraries export
    and check outputs with.
    """

    name = "bufferize"
    anchor = "builtin.module"
    parallel: bool = True
    max_constant_elements: int = 256
    keep_variables: bool = False
    output_sizes: bool = False

    #: op name or class -> rule (`irkit-opt --describe` lists an op's entry)
    lowerings = BUFFERIZATIONS

    def run(self, op: Operation) -> None:
        funcs = [f for f in op.walk() if f.name == "func.func" and has_tensors(f)]
        names = {symbol_name(f) for f in funcs}
        for call in op.walk():
            if call.name == "func.call" and call.properties["callee"].root in names:
                callee = lookup_symbol(call, call.properties["callee"])
                if callee in funcs:
                    raise BufferizeError(f"cannot bufferize 'func.call' of '@"
                                         f"{symbol_name(callee)}': the callee's signature "
                                         "changes", call.location)
        for f in funcs:
            bz = Bufferization(f, variables_of(f), self.parallel, self)
            bz.run()
            sizes = output_sizes_function(bz) if self.output_sizes else None
            if sizes is not None:
                f.parent.insert_after(f, sizes)
        if not self.keep_variables:
            move_variables_to_attributes(op)
        left = first_tensor_op(op)
        if left is not None:
            raise BufferizeError(f"'{left.name}' still takes or makes a tensor after "
                                 "bufferize", left.location)

