"""What `bufferize` reads off the tensor program before it writes a buffer: which values may
share memory, how long a buffer must live, and whether an op may overwrite its init's buffer.

The tensor program is still intact while it is bufferized (the new body is built beside it),
so these questions are answered on the old IR, with the positions `FunctionBuffers`
numbers every op with (pre-order over the body, nested ops included: an op's regions come
right after it, before the next op of its block).

**Views.** A `tensor.cast`, `tensor.extract_slice`, `tensor.collapse_shape`,
`tensor.expand_shape` or `parallel.all_slice` (this rank's block: `collectives.py`) may
bufferize to a view of its source's buffer (the same buffer, a `memory.subview`, a
reshaping `memory.view`). Whether it does depends on the buffer, so the analysis assumes it
may: a view keeps its source's buffer alive (`extend_through_views`), and anything that
reads a view reads the source's memory (`views_of`).

**Destination passing.** A structured op on tensors writes each result into a buffer holding
its `outs` operand's value (MLIR's tied operand); `tensor.insert_slice` and `tensor.insert`
write into their `dest`. `tied_result(use)` names the result written into the operand of
`use`, if it is such an init.

**In place.** The init's own buffer may be overwritten (MLIR's one-shot analysis, reduced to
the straight-line programs a graph function is) when nothing reads its value afterwards:
`read_later(value, op, use)` says whether some use of `value` or of a view of it, other than
`use` itself, sits at `op`'s position or after it. Uses inside `op` (a gather in its body
reading the init) count, and so do uses in either branch of a later `graph.if`. An op
that reads the init through an input too is not in place, even elementwise (conservative).
A window sliced from a buffer may be overwritten when the result goes straight back into
that window and nothing else reads the buffer meanwhile (`window_update`: the tiling
pattern of the pooling gradients).

What is never overwritten: arguments, variables (their only writes are `graph.assign`s, so
a read copies when an assign comes while its value is still read), views of those, and
buffers made in another block (a branch does not free what it did not allocate).
"""

from __future__ import annotations

from irkit.ir import OpOperand, OpResult, Operation, Value
from irkit.dialects.linalg import StructuredOp
from irkit.dialects.parallel import AllSliceOp
from irkit.dialects.tensor import (
    CastOp, CollapseShapeOp, ExpandShapeOp, ExtractSliceOp, InsertOp, InsertSliceOp,
)


#: the reshapes, whose result is a view only of a buffer made as raw bytes (`function.py`)
RESHAPES = (CollapseShapeOp, ExpandShapeOp)


def view_source(op: Operation) -> Value | None:
    """The tensor whose buffer `op`'s result may be a view of, or None."""
    if isinstance(op, (CastOp, ExtractSliceOp)):
        return op.source
    if isinstance(op, AllSliceOp):
        return op.operand
    if isinstance(op, (CollapseShapeOp, ExpandShapeOp)):
        return op.src
    return None


def init_index(op: StructuredOp, j: int) -> int:
    """The operand index of structured op `op`'s output `j`: the operands are the inputs,
    then the outputs, whatever names an op gives its operand groups."""
    index = len(op.inputs) + j
    if op.operands[index] is not op.outputs[j]:
        raise ValueError(f"'{op.name}': operands are not inputs then outputs")
    return index


def _dest_index(op: Operation) -> int:
    """The operand index of `dest` in `tensor.insert` / `tensor.insert_slice`: both declare
    one single operand (`scalar` / `source`) before it."""
    return 1


def tied_result(use: OpOperand) -> Value | None:
    """The result its op writes into the buffer of the operand of `use`, when that operand
    is a destination (an init): a structured op's output j -> its result j; the `dest` of
    `tensor.insert_slice` / `tensor.insert` -> the result. None for any other operand."""
    op = use.owner
    if isinstance(op, StructuredOp):
        if not op.has_tensor_semantics:
            return None
        j = use.index - len(op.inputs)
        return op.results[j] if 0 <= j < len(op.results) else None
    if isinstance(op, (InsertSliceOp, InsertOp)) and use.index == _dest_index(op):
        return op.result
    return None


def init_use(op: Operation, result: Value) -> OpOperand:
    """The operand `result` of `op` is tied to (see `tied_result`)."""
    if isinstance(op, StructuredOp):
        return op.op_operands[init_index(op, result.index)]
    return op.op_operands[_dest_index(op)]


def views_of(v: Value) -> list[Value]:
    """`v` and every value that may be a view of its buffer, transitively."""
    out, work = [], [v]
    while work:
        x = work.pop()
        out.append(x)
        for u in x.users:
            if view_source(u) is x:
                work += [r for r in u.results]
    return out


def last_position(v: Value, position: dict[Operation, int]) -> int:
    """The position of the last op reading `v` or a view of it (its definition's when none;
    a block argument's uses only)."""
    own = position.get(v.owner, -1) if isinstance(v, OpResult) else -1
    return max((position[u] for x in views_of(v) for u in x.users if u in position),
               default=own)


def read_later(v: Value, op: Operation, use: OpOperand | None,
               position: dict[Operation, int], also: OpOperand | None = None) -> bool:
    """Whether `v`'s memory is read at `op` or after it through any use of `v` or of a view
    of it other than `use` (the init `op` overwrites) and `also`."""
    here = position[op]
    for x in views_of(v):
        for u in x.uses:
            if u is use or u is also:
                continue
            p = position.get(u.owner)
            if p is not None and p >= here:
                return True
    return False


def window_update(init: Value, op: Operation, use: OpOperand,
                  position: dict[Operation, int]) -> InsertSliceOp | None:
    """The `tensor.insert_slice` that puts `op`'s result back where `init` was sliced from,
    when `op` may write that result straight into the window of the source's buffer (the
    tiling pattern, MLIR's extract_slice / insert_slice pair):

        %s = tensor.extract_slice %t[w]     (same block, no dimension dropped)
        %r = <op> ... outs(%s)              (its only reader of %s from here on)
        %u = tensor.insert_slice %r into %t[w]   (the very same window; %r's only use)

    and nothing reads `%t`, or a view of it, from `op` on but that insert_slice. The insert
    then copies nothing, and the caller still has to make sure `%t`'s buffer may be written
    (one it owns, or the insert's planned destination)."""
    slice_op = init.owner
    if not isinstance(slice_op, ExtractSliceOp) or slice_op.parent is not op.parent or \
            slice_op.dropped_dims():
        return None
    result = tied_result(use)
    uses = result.uses
    if len(uses) != 1:
        return None
    insert = uses[0].owner
    if not isinstance(insert, InsertSliceOp) or uses[0].index != 0 or \
            insert.dest is not slice_op.source or insert.parent is not op.parent or \
            insert.dropped_dims() or not slice_op.same_window(insert):
        return None
    dest_use = insert.op_operands[_dest_index(insert)]
    if read_later(slice_op.source, op, use, position, also=dest_use):
        return None
    return insert


def extend_through_views(ops: list[Operation], last: dict[Value, int]) -> None:
    """`last` (value -> index in `ops` of its last reader, for the values the block defines)
    raised so that a value lives at least as long as every view made of it; a chain of
    views is followed by going backwards through the block."""
    for op in reversed(ops):
        src = view_source(op)
        if src is None or src not in last:
            continue
        for r in op.results:
            if r in last:
                last[src] = max(last[src], last[r])
