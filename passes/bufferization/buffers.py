"""The function-level base of `bufferize`: one function's buffers. `FunctionBuffers` owns what
the runtimes, the library exporter and the memory planner rely on, whatever the ops were:

- **Signature** (the calling convention, docs/lowering.md): each tensor argument becomes a
  memref argument of the same shape (`?` kept; a 0-d tensor becomes a rank-0 memref), then
  one output memref per tensor result, then one memref per `graph.variable` the function
  reads or assigns, in the module's declaration order, then, only when the function checks
  something at run time (an index in range, a size that divides), one status buffer
  `memref<3xi64>` marked `{graph.status}`. Tensor results are gone: the caller allocates
  the outputs and the function writes them in place. Output arguments carry
  `{graph.output = k}` (plus the result's old attributes), variable arguments
  `{graph.variable = "name"}`, so a runtime can bind them by name (the declarations become
  the module's `graph.variables` attribute, see the pass).
- **Run-time errors** the interpreter raises from an op's numpy semantics (a label out of
  range, an uneven split) cannot be raised by compiled code. `check` / `record_check` emit
  a `memory.check` at the op's location: the first failing site stores its code (1, 2, ...
  per function), the value and the bound in the status buffer, the code that follows clamps
  whatever it was about to index with, and the caller reads the status after the call
  (`irkit.runtime`, the library's C entry points) and reports the site's message.
- **Buffers.** Every tensor value of the old body gets a buffer: an argument, a variable's
  buffer, an output buffer (a value that is returned is computed straight into its output,
  the first time it is returned), or a fresh `memory.alloc` whose `?` sizes are the index
  values it was computed with (or `memory.dim`s of the buffers it derives from). Fresh
  buffers are freed with `memory.dealloc` right after the last op that reads their value
  (`plan-memory` later replaces alloc/dealloc pairs by an arena).
- **Ops** are handled one at a time, in block order, by `_lower_op` (the subclass's rule
  table, `function.Bufferization`). An op with regions (the structured `graph.if`) has a
  rule that handles each region's ops with `lower_block`, at a builder inside the loop op
  it makes: the same rules, the same liveness, per block.
- **Liveness** is per block: a use by an op nested in a region counts at the op of the
  block that holds it (a buffer a branch reads lives until after the whole conditional),
  and a buffer made inside a region is freed inside it.
- **Loop nests** (`parallel_nest`, `for_nest`, `when`) for the few rules that write loops
  themselves: the ops no structured op expresses (`graph.scatter_add`) and the guarded
  variable update.

The new body is built in a fresh block while the old one is still intact (rules and the
liveness analysis read the old ops and their uses); the old block is dropped at the end.

Loop ops are built detached and inserted into their parent only once their body is
complete, so that what a rule emits "at the top" while it fills a body (a `memory.dim`, a
hoisted comparison) lands before the loop that uses it, where it dominates.
"""

from __future__ import annotations

from typing import Callable

from irkit.attributes import (
    ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, TypeAttr, UnitAttr,
)
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.rewrite import constant_value
from irkit.types import (
    FloatType, FunctionType, I64, INDEX, IntegerType, MemRefType,
    RankedTensorType, Type, UnrankedTensorType,
)
from irkit.dialects.func import ReturnOp
from irkit.dialects.graph.scalar import ArithScalars
from irkit.dialects.loop import ForOp, IfOp, ParallelOp, YieldOp
from irkit.dialects.memory import STATUS_TYPE, AllocOp, CheckOp, CopyOp, DeallocOp, DimOp
from irkit.passes.constant_pool import ConstantPool


class BufferizeError(IRError):
    """An op or a type `bufferize` cannot handle (located at the op)."""


def is_tensor(t: Type) -> bool:
    return isinstance(t, (RankedTensorType, UnrankedTensorType))


def buffer_type(t: Type, where: Operation) -> MemRefType:
    """The memref a value of tensor type `t` lives in: same shape and element type."""
    if not isinstance(t, RankedTensorType):
        raise BufferizeError(f"cannot bufferize {t}: only ranked tensors have a buffer type",
                             where.location)
    e = t.element
    if isinstance(e, IntegerType) and not e.is_signless:
        raise BufferizeError(f"cannot bufferize {t}: arith works on signless integers only",
                             where.location)
    if not isinstance(e, (IntegerType, FloatType)):
        raise BufferizeError(f"cannot bufferize {t}: unsupported element type",
                             where.location)
    return MemRefType(t.shape, e)


def index_in(op: Operation, index: dict) -> int | None:
    """The index in `index` (a block's ops) of `op` or of its ancestor in that block."""
    while op is not None and op not in index:
        op = op.parent_op
    return None if op is None else index[op]


class FunctionBuffers:
    """The state of bufferizing one function: builders, the value -> buffer map, liveness,
    and the helpers rules use (`buffer`, `dest`, `size`, `constant`, checks, loop nests).
    A subclass says how each op is handled (`_lower_op`) and when each value is last read
    (`_last_uses`)."""

    def __init__(self, func: Operation, variables: list[Operation], parallel: bool,
                 options) -> None:
        self.func = func
        self.variables = variables          # graph.variable ops, declaration order
        self.parallel = parallel
        self.options = options
        old_type: FunctionType = func.properties["function_type"].value
        self.old_type = old_type
        self.old_block: Block | None = func.regions[0].blocks[0] if func.regions[0].blocks \
            else None
        inputs = [buffer_type(t, func) if is_tensor(t) else t for t in old_type.inputs]
        outs = [buffer_type(t, func) for t in old_type.results if is_tensor(t)]
        var_types = [buffer_type(v.properties["type"].value, v) for v in variables]
        self.new_type = FunctionType(inputs + outs + var_types,
                                     [t for t in old_type.results if not is_tensor(t)])
        self.entry = Block(self.new_type.inputs)
        self._constants = ConstantPool(self.entry, func.location)
        n_in, n_out = len(inputs), len(outs)
        self.outs = list(self.entry.args[n_in:n_in + n_out])
        #: variable symbol name -> its buffer argument
        self.var_buffers = {v.properties["sym_name"].value: a
                            for v, a in zip(variables, self.entry.args[n_in + n_out:])}
        #: old value -> new value: buffers for tensors, the copies of everything else
        self.values: dict[Value, Value] = {}
        #: splat constants -> their scalar value (what reads elements of them uses instead)
        self.splats: dict[Value, Value] = {}
        #: value -> the output buffer it is computed into (first return position)
        self.out_for: dict[Value, Value] = {}
        #: fresh buffers this function allocated, by the value they hold
        self.owned: dict[Value, Value] = {}
        #: output buffer -> the sizes its value was computed with (`output_sizes.py`)
        self.output_sizes: dict[Value, list[Value]] = {}
        #: every op of the old body, nested ones included, numbered in program order
        self.position: dict[Operation, int] = {}
        self._dims: dict = {}
        #: the status argument, added by the first check; the number of checks so far
        self.status: Value | None = None
        self._checks = 0
        self.b = Builder.at_end(self.entry)

    # ----- the driver ----------------------------------------------------------------------

    def run(self) -> None:
        """Bufferize the body (if any) and install the new signature and block."""
        if self.old_block is not None:
            self._lower_body()
        self._install()

    def _lower_op(self, op: Operation) -> None:
        """Give `op`'s tensor results buffers, building what computes them at `self.b`."""
        raise NotImplementedError

    def _last_uses(self, ops: list[Operation], index: dict) -> dict[Value, int]:
        """For each tensor value defined in the block `ops`, the index of the last op of
        the block reading it: where its buffer, if fresh, is freed."""
        raise NotImplementedError

    def _lower_body(self) -> None:
        old = self.old_block
        if len(self.func.regions[0].blocks) != 1:
            raise BufferizeError("bufferize expects functions with one block",
                                 self.func.location)
        n_in = len(self.old_type.inputs)
        for a, new in zip(old.args, self.entry.args[:n_in]):
            self.values[a] = new
        ops = list(old.ops)
        # Rules compare positions across regions (a read, then an assign inside a branch).
        for op in ops:
            for o in op.walk(post_order=False):
                self.position[o] = len(self.position)
        term = old.terminator
        if term is not None and term.name == "func.return":
            self._plan_outputs(term)
        self._lower_ops(ops, "func.return", self._lower_return)

    def lower_block(self, block: Block, builder: Builder, terminator: str,
                    finish: Callable[[Operation, list[Value]], None]) -> None:
        """Bufferize the ops of `block` (a region of an op: a `graph.if` branch) at
        `builder`, with the same rules: temporaries made in the block are freed in it. The
        block's terminator (named `terminator`) is handed to `finish(op, frees)`, which must
        free `frees` (the fresh buffers whose last use it is) after reading them.

        Sizes the block's ops read outside any buffer (a `memory.dim`) are cached for the
        block only: they do not dominate the code after it."""
        saved = self.b, dict(self._dims)
        self.b = builder
        try:
            self._lower_ops(list(block.ops), terminator, finish)
        finally:
            self.b, self._dims = saved

    def _lower_ops(self, ops: list[Operation], terminator: str,
                   finish: Callable[[Operation, list[Value]], None]) -> None:
        index = {op: i for i, op in enumerate(ops)}
        frees: dict[int, list[Value]] = {}
        for v, k in self._last_uses(ops, index).items():
            frees.setdefault(k, []).append(v)
        for i, op in enumerate(ops):
            self.b.location = op.location
            if i == len(ops) - 1 and op.name == terminator:
                finish(op, frees.get(i, []))
                continue
            self._lower_op(op)
            self.release(frees.get(i, []))

    def _plan_outputs(self, ret: Operation) -> None:
        """Destination-passing: a value defined by an op of the body and returned at output k
        (the first time it is returned) is computed straight into output k."""
        k = 0
        for v in ret.operands:
            if not is_tensor(v.type):
                continue
            if not isinstance(v, BlockArgument) and v not in self.out_for:
                self.out_for[v] = self.outs[k]
            k += 1

    def _lower_return(self, op: Operation, frees: list[Value]) -> None:
        k = 0
        scalars = []
        for v in op.operands:
            if is_tensor(v.type):
                src, out = self.buffer(v), self.outs[k]
                if src is not out:
                    self.b.create(CopyOp, src, out)
                k += 1
            else:
                scalars.append(self.values.get(v, v))
        self.release(frees)
        self.b.create(ReturnOp, scalars, result_types=[])

    def release(self, values: list[Value]) -> None:
        """Free the fresh buffers the values `values` own (`memory.dealloc`)."""
        for v in values:
            buf = self.owned.pop(v, None)
            if buf is not None:
                self.b.create(DeallocOp, buf)

    def _install(self) -> None:
        """Replace the old signature and body by the new ones, with argument attributes
        that say which argument is which (see the module docstring)."""
        func = self.func
        old_args = func.properties.get("arg_attrs")
        old_res = func.properties.get("res_attrs")
        n_in = len(self.old_type.inputs)
        arg_attrs = [old_args[i] if old_args is not None else DictionaryAttr({})
                     for i in range(n_in)]
        scalar_res = []
        k = 0
        for i, t in enumerate(self.old_type.results):
            res = dict(old_res[i].value) if old_res is not None else {}
            if is_tensor(t):
                res["graph.output"] = IntegerAttr(k, I64)
                arg_attrs.append(DictionaryAttr(res))
                k += 1
            else:
                scalar_res.append(DictionaryAttr(res))
        for v in self.variables:
            arg_attrs.append(DictionaryAttr(
                {"graph.variable": StringAttr(v.properties["sym_name"].value)}))
        if self.status is not None:
            arg_attrs.append(DictionaryAttr({"graph.status": UnitAttr()}))
            self.new_type = FunctionType([*self.new_type.inputs, STATUS_TYPE],
                                         self.new_type.results)
        func.properties["function_type"] = TypeAttr(self.new_type)
        if any(a.value for a in arg_attrs):
            func.properties["arg_attrs"] = ArrayAttr(arg_attrs)
        else:
            func.properties.pop("arg_attrs", None)
        if any(a.value for a in scalar_res):
            func.properties["res_attrs"] = ArrayAttr(scalar_res)
        else:
            func.properties.pop("res_attrs", None)
        if self.old_block is None:
            return
        region = func.regions[0]
        region.insert_block(0, self.entry)
        self.old_block.erase()

    def assigns_to(self, name: str) -> list[Operation]:
        """The graph.assign ops of the body (nested in regions too) that write variable
        `name`; `position` numbers them with every other op in program order."""
        if not hasattr(self, "_assigns"):
            self._assigns = {}
            for op in self.position:
                if op.name == "graph.assign":
                    self._assigns.setdefault(op.properties["variable"].root, []).append(op)
        return self._assigns.get(name, [])

    # ----- buffers ---------------------------------------------------------------------------

    def buffer(self, v: Value) -> Value:
        """The buffer holding tensor value `v` (or the copy of a non-tensor value)."""
        b = self.values.get(v)
        if b is None:
            raise BufferizeError("internal error: a value has no buffer (used before its "
                                 "definition was bufferized)", self.b.location)
        return b

    def define(self, result: Value, buf: Value) -> None:
        """`result` lives in `buf` (an existing buffer: an argument, a variable's)."""
        self.values[result] = buf

    def dest(self, result: Value, sizes: list[Value]) -> Value:
        """The buffer `result` is to be computed into: its output buffer when it is
        returned, else a fresh one of sizes `sizes` (one index value per axis; only those
        of `?` axes are read)."""
        out = self.out_for.get(result)
        if out is not None:
            buf = out
            self.output_sizes.setdefault(out, list(sizes))
        else:
            buf = self.temp(buffer_type(result.type, result.owner), sizes)
            self.owned[result] = buf
        self.values[result] = buf
        self._know_sizes(buf, sizes)
        return buf

    def temp(self, t: MemRefType, sizes: list[Value]) -> Value:
        """A scratch buffer the caller frees (or hands over, as a `loop.if` result)."""
        dyn = [s for s, d in zip(sizes, t.shape) if d is None]
        buf = self.b.create(AllocOp, dyn, result_types=[t]).results[0]
        self._know_sizes(buf, sizes)
        return buf

    def _know_sizes(self, buf: Value, sizes: list[Value]) -> None:
        """Remember `buf`'s `?` sizes as the values it was made with, so that later reads
        of them need no `memory.dim` (an output's sizes are the caller's, equal to these
        by the calling convention)."""
        for a, d in enumerate(buf.type.shape):
            if d is None:
                self._dims.setdefault((buf, a), sizes[a])

    def size(self, buf: Value, axis: int) -> Value:
        """The size of `buf`'s axis as an index: a constant when static, else a
        `memory.dim` (one per buffer and axis, emitted at the top level)."""
        d = buf.type.shape[axis]
        if d is not None:
            return self.index(d)
        key = (buf, axis)
        v = self._dims.get(key)
        if v is None:
            v = self.b.create(DimOp, buf, axis=IntegerAttr(axis, I64)).results[0]
            self._dims[key] = v
        return v

    def sizes(self, buf: Value) -> list[Value]:
        return [self.size(buf, a) for a in range(buf.type.rank)]

    # ----- scalar code and run-time errors ---------------------------------------------------

    def scalars(self, b: Builder | None = None) -> ArithScalars:
        """Scalar `arith`/`math` code at `b` (default: the top level), its constants hoisted
        to the top of the function (`constant`)."""
        return ArithScalars(b or self.b, self.constant)

    def check(self, ok: Value, value: Value, bound: Value, message: str, op: Operation,
              b: Builder | None = None) -> None:
        """At `b` (default: the top level), record the error `message` of op `op` when `ok`
        (i1) is false: `record_check` with the message the interpreter raises,
        `'op' failed: message` (`{value}` and `{bound}` in it stand for `value` and
        `bound`). Compiled code cannot raise, so the rule goes on and must clamp what it
        indexes with: the caller reports the error after the call."""
        self.record_check(ok, value, bound, f"'{op.name}' failed: {message}", op.location,
                          b or self.b)

    def record_check(self, ok: Value, value: Value, bound: Value, message: str, location,
                     b: Builder) -> None:
        """A `memory.check` at `b` and `location`, with the next code of this function,
        `value` and `bound` (integers or indices, stored as i64) and the whole `message`,
        writing the status buffer, which the first check adds as the function's last
        argument. A check `ok` that is constantly true records nothing."""
        known = constant_value(ok)
        if isinstance(known, IntegerAttr) and known.value:
            return                          # holds whatever the inputs: nothing to record
        if self.status is None:
            self.status = self.entry.add_argument(STATUS_TYPE)
        self._checks += 1
        s = self.scalars(b)
        b.create(CheckOp, ok, s.cast(value, I64), s.cast(bound, I64), self.status,
                 code=IntegerAttr(self._checks, I64), message=StringAttr(message),
                 location=location)

    def when(self, cond: Value, then: Callable[[Builder], list[Value] | None],
             otherwise: Callable[[Builder], list[Value]] | None = None,
             b: Builder | None = None) -> list[Value]:
        """A `loop.if` on `cond` at `b`: `then(builder)` fills the then branch and returns
        the values it yields (none, or as many as `otherwise(builder)` yields in the else
        branch); returns the results. What a failed `check` must not let run (a write at an
        index out of range) goes in `then`."""
        b = b or self.b
        branches = [(then, Block([]))] + ([(otherwise, Block([]))] if otherwise else [])
        yielded = []
        for fill, block in branches:
            inner = Builder.at_end(block)
            inner.location = b.location
            values = list(fill(inner) or [])
            inner.create(YieldOp, values, result_types=[])
            yielded.append(values)
        op = IfOp.build(cond, result_types=[v.type for v in yielded[0]], regions=2,
                        location=b.location)
        for (_, block), region in zip(branches, op.regions):
            region.add_block(block)
        b.insert(op)
        return list(op.results)

    # ----- constants -------------------------------------------------------------------------

    def constant(self, value, t: Type) -> Value:
        """A scalar constant, made once per function at the top of the entry block (so it
        dominates every use, in loops too)."""
        return self._constants.get(value, t)

    def index(self, n: int) -> Value:
        return self.constant(n, INDEX)

    # ----- loop nests ------------------------------------------------------------------------

    def parallel_nest(self, sizes: list[Value], body: Callable[[Builder, list], None],
                      b: Builder | None = None) -> None:
        """Run `body(builder, ivs)` once per point of `sizes` (independent iterations): a
        `loop.parallel` over all of them (`loop.for`s with `parallel=false`); no loop for
        an empty list."""
        b = b or self.b
        if not sizes:
            body(b, [])
            return
        if not self.parallel:
            self.for_nest(sizes, [], lambda ib, ivs, accs: body(ib, ivs) or [], b)
            return
        n = len(sizes)
        zero, one = self.index(0), self.index(1)
        op = ParallelOp.build([zero] * n, list(sizes), [one] * n, result_types=[], regions=1,
                              location=b.location)
        block = Block([INDEX] * n)
        op.regions[0].add_block(block)
        inner = Builder.at_end(block)
        inner.location = b.location
        body(inner, list(block.args))
        inner.create(YieldOp, [], result_types=[])
        b.insert(op)

    def for_nest(self, sizes: list[Value], inits: list[Value],
                 body: Callable[[Builder, list, list], list],
                 b: Builder | None = None) -> list[Value]:
        """Nested `loop.for`s over `sizes` carrying `inits` through every level:
        `body(builder, ivs, carried) -> next carried`; returns the final carried values."""
        b = b or self.b
        zero, one = self.index(0), self.index(1)

        def level(outer: Builder, k: int, ivs: list, carried: list) -> list:
            if k == len(sizes):
                return list(body(outer, ivs, carried))
            op = ForOp.build(zero, sizes[k], one, list(carried),
                             result_types=[c.type for c in carried], regions=1,
                             location=outer.location)
            block = Block([INDEX] + [c.type for c in carried])
            op.regions[0].add_block(block)
            inner = Builder.at_end(block)
            inner.location = outer.location
            nxt = level(inner, k + 1, ivs + [block.args[0]], list(block.args[1:]))
            inner.create(YieldOp, nxt, result_types=[])
            outer.insert(op)
            return list(op.results)

        return level(b, 0, [], list(inits))
