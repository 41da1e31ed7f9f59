"""The function-level half of `bufferize`: `Bufferization`, the per-function state of
`buffers.FunctionBuffers` (calling convention, buffer map, liveness, checks) taught the
structured level.

`FunctionBuffers` owns what the runtimes and the planner rely on: the calling convention
(inputs, one output memref per tensor result, one memref per variable, the status buffer),
destination passing into the outputs, fresh `memory.alloc`s sized from the buffers they
derive from, `memory.dealloc` after the last use, per-block liveness through regions,
run-time checks, constants hoisted to the entry. `Bufferization` adds what ops that are
values-in, values-out with a tied init (MLIR's destination-passing style) need:

- **Rules.** An op is bufferized by the rule `BUFFERIZATIONS` holds for its name or for a
  base class of it (`StructuredOp`: every linalg op); an op touching no tensor is copied;
  any other op is a located error. The graph ops that reach this pass (state, `graph.if`,
  `graph.check`, `graph.scatter_add`) have rules here like every other op.
- **Values without a buffer.** A `tensor.empty` has sizes but no contents: its value gets a
  buffer only when something reads it as a whole; an op writing into it gets a buffer of its
  own (`empties`). A splat constant read only as scalars (a generic's input, an extract)
  never gets one (`splats`).
- **Destinations** (`destination`): a result is written where its init lives when that is
  safe, else into a buffer of its own, which first receives a copy of the init when the op
  reads it. The choice, in order: the buffer planned for the result (`planned`: an output,
  a `graph.if`'s result buffer, the buffer of the op that overwrites it next); in place, when
  the init owns a fresh buffer and nothing reads it any more (`analysis.read_later`), or is
  a window of one that the result is inserted back into (`analysis.window_update`); a fresh
  buffer.
- **Views and liveness.** A view keeps its source's buffer alive (`_last_uses` extends the
  source's liveness to the view's last reader), and an init read through a view later is
  not overwritten. A buffer overwritten in place changes hands: the result owns it now and
  frees it after its own last use.
- **Reshapes as views.** A fresh buffer whose value is reshaped is allocated as raw bytes
  (`memory.alloc : memref<Nxi8>`) with a typed `memory.view` on it, so that
  `tensor.collapse_shape` / `expand_shape` become one more `memory.view` of the same bytes
  (`raw` maps each such view to its bytes); the memory dialect has no other reshaping view.
"""

from __future__ import annotations

from typing import Callable

from irkit.ir import OpOperand, OpResult, Operation, Value
from irkit.attributes import IntegerAttr
from irkit.rewrite import constant_value
from irkit.types import I8, MemRefType
from irkit.dialects.memory import AllocOp, CopyOp, ViewOp, byte_size
from irkit.dialects.tensor import EmptyOp
from irkit.passes.bufferization import analysis
from irkit.passes.bufferization.analysis import tied_result
from irkit.passes.bufferization.buffers import (
    BufferizeError, FunctionBuffers, buffer_type, index_in, is_tensor,
)

#: op name or op class -> rule(bufferization, op): gives each tensor result a buffer
BUFFERIZATIONS: dict[object, Callable[["Bufferization", Operation], None]] = {}


def bufferizes(*keys):
    """Register the decorated function as the rule of the ops `keys` (names, or classes
    whose subclasses it also covers)."""
    def register(fn):
        for k in keys:
            if k in BUFFERIZATIONS:
                raise ValueError(f"two bufferizations for {k!r}")
            BUFFERIZATIONS[k] = fn
        return fn
    return register


def rule_for(op: Operation):
    """The rule for `op`: by name, else by the nearest class in its MRO that has one."""
    rule = BUFFERIZATIONS.get(op.name)
    if rule is not None:
        return rule
    for cls in type(op).__mro__:
        rule = BUFFERIZATIONS.get(cls)
        if rule is not None:
            return rule
    return None


def _no_rule(op: Operation) -> BufferizeError:
    """The located error for an op this pass has no rule for; a graph op's names the pass
    that should have converted it (the graph ops bufferize takes are the few that stay at
    the structured level)."""
    hint = " (lower-graph-to-linalg converts graph ops first)" \
        if op.name.startswith("graph.") else ""
    return BufferizeError(f"cannot bufferize '{op.name}': no rule for it{hint}", op.location)


def touches_tensors(op: Operation) -> bool:
    """Whether `op` or an op nested in it takes or makes a tensor."""
    return any(is_tensor(v.type) for o in op.walk() for v in (*o.operands, *o.results))


class Bufferization(FunctionBuffers):
    """The state of bufferizing one function (see the module docstring)."""

    def __init__(self, func: Operation, variables: list[Operation], parallel: bool,
                 options) -> None:
        super().__init__(func, variables, parallel, options)
        #: tensor.empty results -> their sizes (index values), before and without a buffer
        self.empties: dict[Value, list[Value]] = {}
        #: a typed view of raw bytes (a buffer that can be reshaped) -> the bytes
        self.raw: dict[Value, Value] = {}
        #: a subview made for a slice op -> (the buffer it views, that op)
        self.windows: dict[Value, tuple[Value, Operation]] = {}

    # ----- the driver ----------------------------------------------------------------------

    def _lower_op(self, op: Operation) -> None:
        rule = rule_for(op)
        if rule is None:
            if touches_tensors(op) or op.name.startswith("graph."):
                raise _no_rule(op)
            self.b.insert(op.clone(self.values))
            return
        rule(self, op)
        for r in op.results:
            if is_tensor(r.type) and r not in self.values and r not in self.empties \
                    and r not in self.splats:
                raise BufferizeError(f"internal error: bufferizing '{op.name}' gave result "
                                     f"#{r.index} no buffer", op.location)

    def _last_uses(self, ops: list[Operation], index: dict) -> dict[Value, int]:
        """For each tensor value defined in the block `ops`, the index of the last op of the
        block reading it (its own index when nothing does): where its buffer, if fresh, is
        freed. A use by an op nested in a region counts at the block's op that holds it, so
        a buffer a branch reads lives until after the whole `graph.if`; a view's last reader
        counts as a reader of its source. An op with regions over tensors needs a rule."""
        last = {}
        for i, op in enumerate(ops):
            if op.regions and rule_for(op) is None and \
                    (touches_tensors(op) or op.name.startswith("graph.")):
                raise _no_rule(op)
            for r in op.results:
                if is_tensor(r.type):
                    users = [k for k in (index_in(u, index) for u in r.users)
                             if k is not None]
                    last[r] = max(users, default=i)
        analysis.extend_through_views(ops, last)
        return last

    def _lower_return(self, op: Operation, frees: list[Value]) -> None:
        """Copy into the outputs what was not computed there, recording the sizes of each
        such output for `output-sizes` (the copied buffer's known sizes)."""
        outs = iter(self.outs)
        for v in op.operands:
            if is_tensor(v.type):
                out, src = next(outs), self.buffer(v)
                if src is not out:
                    self.output_sizes.setdefault(out, self.sizes(src))
        super()._lower_return(op, frees)

    # ----- buffers -------------------------------------------------------------------------

    def buffer(self, v: Value) -> Value:
        if v not in self.values and (v in self.empties or v in self.splats):
            raise BufferizeError("internal error: a value was read as a whole but given no "
                                 "buffer", self.b.location)
        return super().buffer(v)

    def dest(self, result: Value, sizes: list[Value]) -> Value:
        """The buffer `result` is computed into: the one planned for it, else a fresh one
        (of raw bytes with a typed view when `result` is reshaped later)."""
        target = self.planned(result)
        if target is not None:
            self.out_for.setdefault(result, target)
        elif any(isinstance(u, analysis.RESHAPES) for u in result.users):
            t = buffer_type(result.type, result.owner)
            if byte_size(t.element) is not None:
                buf = self.byte_backed(t, sizes)
                self.owned[result] = self.raw[buf]
                self.values[result] = buf
                return buf
        return super().dest(result, sizes)

    def temp(self, t: MemRefType, sizes: list[Value]) -> Value:
        """A scratch buffer of `t`'s shape, contiguous whatever `t`'s layout: a copy of a
        view (a `graph.if` branch yielding a slice) is a fresh buffer like any other."""
        if t.layout is not None:
            t = MemRefType(t.shape, t.element, None, t.memory_space)
        return super().temp(t, sizes)

    def byte_backed(self, t: MemRefType, sizes: list[Value]) -> Value:
        """A fresh buffer of type `t` (sizes `sizes`) made as raw bytes with a typed view on
        them; `raw` maps the view to the bytes, which are what must be freed."""
        nbytes = self.index(byte_size(t.element))
        for s, d in zip(sizes, t.shape):
            nbytes = self.mul(nbytes, self.index(d) if d is not None else s)
        static = _static(nbytes)
        raw_type = MemRefType((static,), I8)
        raw = self.b.create(AllocOp, [] if static is not None else [nbytes],
                            result_types=[raw_type]).results[0]
        return self.view(raw, t, sizes)

    def know_sizes(self, buf: Value, sizes: list[Value]) -> None:
        """Remember `buf`'s `?` sizes as the values `sizes` (no `memory.dim` for them)."""
        self._know_sizes(buf, sizes)

    def view(self, raw: Value, t: MemRefType, sizes: list[Value]) -> Value:
        """`t` over the bytes `raw` from their start (`memory.view`)."""
        dyn = [s for s, d in zip(sizes, t.shape) if d is None]
        buf = self.b.create(ViewOp, raw, self.index(0), dyn, result_types=[t]).results[0]
        self.raw[buf] = raw
        self._know_sizes(buf, sizes)
        return buf

    def mul(self, a: Value, b: Value) -> Value:
        """`a * b` on index values, folded when both are constants."""
        x, y = _static(a), _static(b)
        if x is not None and y is not None:
            return self.index(x * y)
        if x == 1:
            return b
        if y == 1:
            return a
        return self.scalars().mul(a, b)

    def add(self, a: Value, b: Value) -> Value:
        """`a + b` on index values, folded when both are constants."""
        x, y = _static(a), _static(b)
        if x is not None and y is not None:
            return self.index(x + y)
        if x == 0:
            return b
        if y == 0:
            return a
        return self.scalars().add(a, b)

    def index_value(self, mixed) -> Value:
        """An entry of a mixed list (an int, or an index value of the tensor program) as an
        index value of the new body."""
        return self.index(mixed) if isinstance(mixed, int) else self.values.get(mixed, mixed)

    def new_mixed(self, mixed) -> int | Value:
        """An entry of a mixed list for a `memory.subview`: ints stay static, values mapped."""
        return mixed if isinstance(mixed, int) else self.values.get(mixed, mixed)

    def size_of(self, v: Value, axis: int) -> Value:
        """The size of tensor `v`'s axis as an index value: static, an empty's size operand,
        or the size of its buffer (known, or a `memory.dim`)."""
        d = v.type.shape[axis]
        if d is not None:
            return self.index(d)
        if v in self.empties and v not in self.values:
            return self.empties[v][axis]
        return self.size(self.buffer(v), axis)

    def sizes_of(self, v: Value) -> list[Value]:
        return [self.size_of(v, a) for a in range(v.type.rank)]

    # ----- destinations --------------------------------------------------------------------

    def planned(self, result: Value) -> Value | None:
        """The buffer fixed for `result` before its op runs, if any: its output (the first
        time it is returned) or its `graph.if` result buffer (`out_for`); else, when its
        last use is the init of an op in the same block that nothing reads it after (see
        `analysis.read_later`), whatever that op's result is planned into: the op then
        overwrites it there in place (a fill, then a reduction into it, then returned: all
        in the output)."""
        target = self.out_for.get(result)
        if target is not None or not isinstance(result, OpResult) or not result.uses:
            return target
        pos = self.position
        last = max(result.uses, key=lambda u: pos.get(u.owner, -1))
        tied = tied_result(last)
        if tied is None or last.owner.parent is not result.owner.parent or \
                analysis.read_later(result, last.owner, last, pos):
            return None
        return self.planned(tied)

    def destination(self, op: Operation, use: OpOperand, result: Value,
                    reads: bool) -> Value:
        """The buffer `op` writes `result` into, its init being the operand of `use`; when
        `reads`, the op reads the init's old value, so a buffer other than the init's gets a
        copy of it first. See the module docstring for the order of the choices."""
        init = use.value
        if isinstance(init.owner, EmptyOp):         # contents undefined: nothing to copy
            return self.dest(result, self.sizes_of(init))
        src = self.buffer(init)
        target = self.planned(result)
        if target is None and self.can_overwrite(init, op, use):
            if init in self.owned:                  # a window of another buffer owns none
                self.owned[result] = self.owned.pop(init)
            self.values[result] = src
            return src
        if src is target:                           # planned so: `init` lives there already
            self.values[result] = src
            return src
        buf = self.dest(result, self.sizes(src))
        if reads:
            self.b.create(CopyOp, src, buf)
        return buf

    def can_overwrite(self, init: Value, op: Operation, use: OpOperand) -> bool:
        """Whether `op` may write its result into `init`'s own buffer: the buffer is a fresh
        one `init` owns (not an argument, an output, a variable or a view), made in `op`'s
        block (its ownership passes to the result, which must be freed in that block), and
        nothing reads `init` from `op` on but `op`'s write; or `init` is a window that goes
        back where it came from (`_window_is_writable`)."""
        if init not in self.owned:
            return self._window_is_writable(init, op, use)
        return isinstance(init, OpResult) and init.owner.parent is op.parent and \
            not analysis.read_later(init, op, use, self.position)

    def _window_is_writable(self, init: Value, op: Operation, use: OpOperand) -> bool:
        """Whether `init` is a window `op` may write in place, its result going back into
        the same window next (`analysis.window_update`), of a buffer this function may
        write: one its source owns, or the one the insert is planned to write."""
        insert = analysis.window_update(init, op, use, self.position)
        if insert is None:
            return False
        source = insert.dest
        return (source in self.owned and source.owner.parent is op.parent) or \
            self.planned(insert.result) is self.buffer(source)


def _static(v: Value) -> int | None:
    """The value of an index constant, or None."""
    a = constant_value(v)
    return a.value if isinstance(a, IntegerAttr) else None
