"""Output sizes as compiled code: for a bufferized function whose outputs have `?` sizes, a
sibling function that computes them from the inputs' sizes alone, without running the model.

Why. A caller allocates the outputs before the call (destination-passing). Python knows their
sizes from the graph ops' shape functions (irkit.runtime), and a C caller from the header
where a size is an input's symbol (`[N, 10]`). But `x[1:]`, `split(x, 2)`, a `reshape` with
-1 or a concat give sizes no symbol names (`N - 1`, `N / 2`): a C caller had to guess, and a
checked entry point had nothing to check a too-small buffer against, which the call would
write past. The bufferized function itself computes those sizes (from `memory.dim` of its
inputs, before the loop nest that writes the output); this module copies that computation
out, so that the library exports it and its `_checked` entry points call it first (as
MLIR's `reifyResultShapes` gives a shaped op's result sizes as IR).

    func.func @forward_output_sizes(%x: memref<?xf32> {...}, %sizes: memref<1xi64>
        {graph.output_sizes = [[0, 0]]}) attributes {graph.output_sizes_of = "forward"}

Entry j of `%sizes` is the size of output k's axis a, for the pairs [k, a] listed.

Algorithm (a backward slice of the bufferized function's entry block):
  1. `FunctionBuffers.dest` records, per output buffer, the size values the rule computed
     it with (`output_sizes`), and so does the return for an output it copies into. An
     output whose size nothing recorded (an input returned as it is) has its input's
     symbols in the header, which the checked entry point compares already.
  2. For each `?` axis of each output, walk its size value's definitions back. The slice may
     hold only ops of the function's entry block (not inside a loop or a branch) that are
     `arith` ops or a `memory.dim` of an input argument: a size that depends on data (a
     branch's result, a loaded value) or on an output is left out, and so is its axis.
  3. Clone the slice's ops in block order into a new function over the inputs, store each
     size (as i64) into the `sizes` argument, return. No axis derived: no function.
"""

from __future__ import annotations

from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, TypeAttr
from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.types import FunctionType, I64, INDEX, MemRefType
from irkit.dialects.func import FuncOp, ReturnOp
from irkit.dialects.memory import DimOp
from irkit.dialects.memory.access import StoreOp
from irkit.dialects.arith import materialize_constant
from irkit.dialects.graph.scalar import ArithScalars
from irkit.passes.bufferization.buffers import FunctionBuffers

#: the suffix of the sizes function's name, and its attributes
SUFFIX = "_output_sizes"
OF_ATTR = "graph.output_sizes_of"
AXES_ATTR = "graph.output_sizes"


def _slice(fb: FunctionBuffers, v: Value, inputs: set, seen: dict) -> bool:
    """Whether `v` is computed from the inputs' sizes by entry-block `arith`/`memory.dim`
    ops only; each op found is added to `seen` (op -> True)."""
    if v in inputs:
        return True
    if isinstance(v, BlockArgument):
        return False                    # an output, a variable, the status, a loop iv
    op = v.owner
    if op in seen:
        return seen[op]
    ok = (op.parent is fb.entry and not op.regions
          and (op.name.startswith("arith.") or isinstance(op, DimOp))
          and all(_slice(fb, o, inputs, seen) for o in op.operands))
    seen[op] = ok
    return ok


def _axis_sizes(fb: FunctionBuffers) -> list[tuple[int, int, Value]]:
    """(output k, axis a, size value) for every `?` axis of every output `dest` recorded."""
    out = []
    for k, buf in enumerate(fb.outs):
        sizes = fb.output_sizes.get(buf)
        for a, d in enumerate(buf.type.shape):
            if d is None and sizes is not None:
                out.append((k, a, sizes[a]))
    return out


def output_sizes_function(fb: FunctionBuffers) -> Operation | None:
    """The sizes function of the function `fb` bufferized (see the module docstring), or None
    when no output has a `?` axis whose size the slice can compute."""
    func = fb.func
    n_in = len(fb.old_type.inputs)
    inputs = list(fb.entry.args[:n_in])
    input_set = set(inputs)
    seen: dict = {}
    axes = [(k, a, v) for k, a, v in _axis_sizes(fb)
            if _slice(fb, v, input_set, seen)]
    if not axes:
        return None
    sizes_type = MemRefType((len(axes),), I64)
    block = Block([a.type for a in inputs] + [sizes_type])
    mapping: dict = dict(zip(inputs, block.args))
    for op in fb.entry.ops:                         # block order: definitions first
        if seen.get(op):
            block.append(op.clone(mapping))
    b = Builder.at_end(block)
    b.location = func.location
    sizes = block.args[-1]
    for j, (_, _, v) in enumerate(axes):
        value = ArithScalars(b).op("arith.index_cast", mapping.get(v, v), type=I64)
        at = b.insert(materialize_constant(IntegerAttr(j, INDEX), INDEX)).results[0]
        b.create(StoreOp, value, sizes, [at])
    b.create(ReturnOp, [], result_types=[])
    name = func.properties["sym_name"].value
    old_args = func.properties.get("arg_attrs")
    arg_attrs = [old_args[i] if old_args is not None else DictionaryAttr({})
                 for i in range(n_in)]
    arg_attrs.append(DictionaryAttr({AXES_ATTR: ArrayAttr(
        [ArrayAttr([IntegerAttr(k, I64), IntegerAttr(a, I64)]) for k, a, _ in axes])}))
    fn = FuncOp.build(result_types=[], sym_name=StringAttr(name + SUFFIX),
                      function_type=TypeAttr(FunctionType([a.type for a in block.args], [])),
                      arg_attrs=ArrayAttr(arg_attrs), location=func.location)
    fn.attributes[OF_ATTR] = StringAttr(name)
    fn.regions[0].add_block(block)
    return fn
