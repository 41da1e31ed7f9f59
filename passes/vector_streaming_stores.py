"""vector-streaming-stores: write outputs larger than the last-level cache with non-temporal
stores, chosen at run time, each thread fencing its own.

An ordinary store of a line that is not in the cache first reads it (read-for-ownership),
then writes it back when it is evicted: an output of `B` bytes costs `2B` of memory traffic.
A non-temporal (streaming) store writes the line around the caches through a write-combining
buffer: `B`. For `E = D + (A + B) * C` that is 5 arrays of traffic instead of 6. It is a loss
when the output would have stayed in cache for its next reader, so only a loop nest whose
stores write at least the last-level cache (`irkit.target.Target.llc_bytes`) streams; with
symbolic sizes that is known at run time only, so the nest is versioned:

    loop.parallel (%i) = (%c0) to (%n) step (%c16) {      %big = arith.cmpi sge, %bytes, %llc
      ...                                                 loop.if %big {
      memory.vector_store %v, %out[%i]            ->        loop.parallel (%t) = (%c0) to (%n)
    }                                                                           step (%c65536) {
                                                              %e = arith.minsi %t + 65536, %n
                                                              loop.parallel (%i) = (%t) to (%e)
                                                                                   step (%c16) {
                                                                ...
                                                                memory.vector_store %v, %out[%i]
                                                                    {nontemporal = true}
                                                              }
                                                              memory.fence
                                                            }
                                                          } else { (the nest as it was) }

Fences. x86 orders streaming stores with nothing but a fence run by the thread that made
them, so each thread fences before it joins the others. The threads of a `loop.parallel`
take whole iterations of its first dimension (libgomp's static schedule, `llvm_parallel`),
with no point in the IR where a thread's share ends; so a parallel nest is strip-mined
along dimension 0 into chunks of about `chunk-bytes` of stores, the fence at the end of
each chunk (the chunk's iterations run on one thread: a `loop.parallel` nested in another is
a plain loop nest). A nest of `loop.for`s runs on the calling thread: one fence after it.

Which stores. A streaming store that leaves part of a line unwritten makes the memory read
the line and merge it, slower than the ordinary store it replaced; the write-combining
buffers hold only a few lines, so a line must be completed within a few stores. So only a
vector store whose last index is the induction variable of the loop right around it,
stepping by the vector's length (successive iterations write adjacent vectors), streams,
and only when that loop's run is at least `min-run-bytes` (the lines at a run's two ends
may be partial). A store walking down a column, one vector per row, stays ordinary, as do
scalar stores (the remainder loops after vectorization: a sliver).

Which nests. Each outermost loop (`loop.for` or `loop.parallel`) holding such stores, where
every loop around a store is a `loop.for` or `loop.parallel` (a `loop.if` between them is
allowed) whose bounds are defined outside the nest, so that the bytes it stores can be
computed before it; a `loop.for` nest with a `loop.parallel` inside (forked on every
iteration, its threads' shares again unknown) is left alone. The bytes are the sum, over
its streaming stores, of the vector's size times the trip counts of the loops around it
(an upper bound where a `loop.if` skips some).

Algorithm:
  1. For each outermost loop nest with unmarked contiguous vector stores (above), check the
     structure above; skip the nest if it fails.
  2. Before the nest, compute `row`: the bytes one iteration of its dimension 0 stores
     (vector bytes times the trip counts of every other loop dimension around each store),
     `bytes = row * trips(dim 0)`, and each store's run (its vector bytes times the trip
     count of the loop right around it); constant operands fold, so static shapes give
     constants.
  3. A constant `bytes` below `min-bytes` (0: the target's last-level cache) or a constant
     run below `min-run-bytes`: leave the nest (erasing what step 2 built). All constant
     and large enough: stream it in place. Otherwise wrap it in `loop.if` on the tests
     not known, a streaming copy in the then region, the nest as it was in the else
     region.
  4. Streaming copy: mark each vector store `nontemporal = true`; for a `loop.parallel`
     nest, strip-mine dimension 0 by `max(1, chunk-bytes / row)` iterations (a new outer
     `loop.parallel` over the chunks, the nest inside cut at the chunk's end) and put a
     `memory.fence` after the nest in each chunk; for a `loop.for` nest, one fence after it.

What is stored is the same in both versions, and the interpreter does not tell a streaming
store from another: results are bit-identical.
"""

from __future__ import annotations

from irkit.attributes import BoolAttr, IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.target import of as target_of
from irkit.types import I1, I64, INDEX
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES
from irkit.dialects.loop import ForOp, IfOp, ParallelOp, YieldOp
from irkit.dialects.memory import FenceOp, VectorStoreOp, byte_size
from irkit.passes.loop_transforms import BoundArith, Constants, int_of, outermost_loops

#: `arith.cmpi`'s predicate "sge" (signed greater or equal)
_SGE = IntegerAttr(CMPI_PREDICATES.index("sge"), I64)


class NotStreamed(Exception):
    """Why a nest keeps its ordinary stores."""


def _loops_around(store: Operation, nest: Operation) -> list[Operation]:
    """The loops from `nest` down to `store`, outermost first; `NotStreamed` when an op
    other than a loop or a `loop.if` stands between them."""
    loops = []
    op = store.parent_op
    while True:
        if isinstance(op, (ForOp, ParallelOp)):
            loops.append(op)
        elif not isinstance(op, IfOp):
            raise NotStreamed(f"a store inside '{op.name}'")
        if op is nest:
            return loops[::-1]
        op = op.parent_op


def _dims(loop: Operation) -> list[tuple[Value, Value, Value]]:
    """(lower bound, upper bound, step) of each dimension of a loop."""
    if isinstance(loop, ForOp):
        return [(loop.lower_bound, loop.upper_bound, loop.step)]
    return list(zip(loop.lower_bounds, loop.upper_bounds, loop.steps))


def _trips(a: BoundArith, lb: Value, ub: Value, step: Value) -> Value:
    """`max(0, ceildiv(ub - lb, step))`, folded when the bounds are constants."""
    span = a.sub(ub, lb)
    lo, s = int_of(span), int_of(step)
    if lo is not None and s is not None and s > 0:
        return a.value(max(0, -(-lo // s)))
    n = a.b.create(arith.CeilDivSIOp, span, step).result
    return a.b.create(arith.MaxSIOp, n, a.value(0)).result


def _check_nest(nest: Operation, stores: list[Operation]) -> None:
    """Step 1's conditions, `NotStreamed` with the reason when one fails."""
    loops = {id(loop): loop for s in stores for loop in _loops_around(s, nest)}.values()
    if isinstance(nest, ForOp) and any(isinstance(loop, ParallelOp) for loop in loops):
        raise NotStreamed("a loop.parallel inside a loop.for nest")
    for loop in loops:
        if not all(nest.is_defined_outside(v) for dim in _dims(loop) for v in dim):
            raise NotStreamed("a loop bound computed inside the nest")


def _row_bytes(a: BoundArith, nest: Operation, stores: list[Operation]) -> Value:
    """The bytes one iteration of `nest`'s dimension 0 stores through `stores`."""
    row: Value | int | None = None
    for store in stores:
        size: Value | int = _vector_bytes(store)
        for loop in _loops_around(store, nest):
            for lb, ub, step in (_dims(loop)[1:] if loop is nest else _dims(loop)):
                size = a.mul(size, _trips(a, lb, ub, step))
        row = size if row is None else a.add(row, size)
    return a.value(row) if isinstance(row, int) else row


def _stream_copy(nest: Operation, stores: list[Operation], row: Value, chunk_bytes: int,
                 constants: Constants) -> None:
    """Mark `stores` (in `nest`) non-temporal and fence each thread's share (step 4)."""
    for store in stores:
        store.nontemporal = BoolAttr(True)
    if isinstance(nest, ForOp):
        Builder.after(nest).create(FenceOp, location=nest.location)
        return
    b = Builder.before(nest)
    a = BoundArith(b, INDEX, constants)
    lb, ub, step = _dims(nest)[0]
    r = int_of(row)
    if r is not None:
        per_chunk: Value = a.value(max(1, chunk_bytes // max(r, 1)))
    else:
        divisor = b.create(arith.MaxSIOp, row, a.value(1)).result
        per_chunk = b.create(arith.MaxSIOp, b.create(
            arith.DivSIOp, a.value(chunk_bytes), divisor).result, a.value(1)).result
    chunk_step = a.mul(step, per_chunk)
    outer = ParallelOp.build([lb], [ub], [chunk_step], result_types=[], regions=1,
                             location=nest.location)
    block = outer.regions[0].add_block(Block([INDEX]))
    b.insert(outer)
    inner = Builder.at_end(block)
    inner.location = nest.location
    end = BoundArith(inner, INDEX, constants).min(
        BoundArith(inner, INDEX, constants).add(block.args[0], chunk_step), ub)
    nest.detach()
    block.append(nest)
    inner.create(FenceOp)
    inner.create(YieldOp, [], result_types=[])
    lbs, ubs = list(nest.lower_bounds), list(nest.upper_bounds)
    lbs[0], ubs[0] = block.args[0], end
    nest.set_operands([*lbs, *ubs, *nest.steps])


def _version(nest: Operation, cond: Value) -> Operation:
    """Wrap `nest` in `loop.if cond { copy } else { nest }`, the `loop.if` giving what the
    nest gave (a `loop.for`'s carried values); returns the copy."""
    guard = IfOp.build(cond, result_types=[r.type for r in nest.results], regions=2,
                       location=nest.location)
    then = guard.regions[0].add_block(Block())
    other = guard.regions[1].add_block(Block())
    Builder.before(nest).insert(guard)
    for r, g in zip(nest.results, guard.results):
        r.replace_all_uses_with(g)
    copy = nest.clone()
    nest.detach()
    other.append(nest)
    then.append(copy)
    for block, loop in ((then, copy), (other, nest)):
        block.append(YieldOp.build(list(loop.results), result_types=[],
                                   location=nest.location))
    return copy


def _innermost_loop(store: Operation) -> Operation | None:
    """The loop right around `store` (through `loop.if`s), None when another op is."""
    op = store.parent_op
    while isinstance(op, IfOp):
        op = op.parent_op
    return op if isinstance(op, (ForOp, ParallelOp)) else None


def _innermost_dim(loop: Operation) -> tuple[Value, tuple[Value, Value, Value]]:
    """A loop's innermost induction variable and that dimension's bounds."""
    if isinstance(loop, ForOp):
        return loop.induction_var, _dims(loop)[0]
    return loop.induction_vars[-1], _dims(loop)[-1]


def _contiguous(store: Operation) -> bool:
    """Whether successive iterations of the loop right around `store` write adjacent
    vectors (its last index is that loop's innermost induction variable, stepping by the
    vector's length), so that every line is written whole within a few stores: a streaming
    store that leaves part of a line for later makes the memory read and merge it."""
    loop = _innermost_loop(store)
    if loop is None or not store.indices:
        return False
    iv, (_, _, step) = _innermost_dim(loop)
    return store.indices[-1] is iv and int_of(step) == store.value.type.shape[0]


def _vector_stores(nest: Operation) -> list[Operation]:
    """The unmarked vector stores of `nest` that write contiguous runs."""
    return [op for op in nest.walk() if isinstance(op, VectorStoreOp)
            and op.nontemporal is None and _contiguous(op)]


@register_pass
class VectorStreamingStores(Pass):
    """Stream (non-temporal stores) the vector stores of loop nests that write at least the
    last-level cache, decided at run time for symbolic sizes, each thread fencing its own
    (see the module docstring).

    Algorithm:
      1. For each outermost loop nest with contiguous vector stores not marked yet: the
         loops around each store, their bounds defined outside the nest; no
         `loop.parallel` inside a `loop.for` nest.
      2. Compute the bytes its stores write (per iteration of dimension 0, and in all) and
         each store's contiguous run.
      3. Leave it (a constant below `min-bytes` or `min-run-bytes`), stream it (constants
         at least those), or version it on the tests not known with a streaming copy and
         the original.
      4. In the copy, mark the stores `nontemporal`; strip-mine a `loop.parallel` nest by
         `chunk-bytes` of stores with a `memory.fence` after each chunk, or fence after a
         `loop.for` nest.

    Options: `min-bytes` (0: the target's last-level cache, `irkit.target.of` the nest),
    `min-run-bytes` (the shortest contiguous run of one store's innermost loop that
    streams: the lines at a run's two ends are partial), `chunk-bytes` (the stores
    between two fences of a parallel nest: small enough that threads share the chunks
    evenly, large enough that a fence is rare).
    """

    name = "vector-streaming-stores"
    min_bytes: int = 0
    min_run_bytes: int = 4096
    chunk_bytes: int = 256 << 10

    def run(self, root: Operation) -> None:
        constants = Constants()
        for nest in outermost_loops(root):
            stores = _vector_stores(nest)
            if stores:
                try:
                    self.stream(nest, stores, self.min_bytes or target_of(nest).llc_bytes,
                                constants)
                except NotStreamed:
                    pass
        for c in constants.pool.values():       # those of nests that did not stream
            if not c.has_uses():
                c.owner.erase()

    def stream(self, nest: Operation, stores: list[Operation], threshold: int,
               constants: Constants) -> None:
        _check_nest(nest, stores)
        before = nest.prev_op
        b = Builder.before(nest)
        a = BoundArith(b, INDEX, constants)
        row = _row_bytes(a, nest, stores)
        lb, ub, step = _dims(nest)[0]
        bounds = [(a.mul(row, _trips(a, lb, ub, step)), threshold)]
        for s in stores:            # each store's contiguous run
            run = _trips(a, *_innermost_dim(_innermost_loop(s))[1])
            bounds.append((a.mul(run, _vector_bytes(s)), self.min_run_bytes))
        cond = None
        for value, least in bounds:
            known = int_of(value)
            if known is not None and known < least:
                _erase_unused_since(before, nest, constants)
                return
            if known is None:
                c = b.create(arith.CmpIOp, value, a.value(least), predicate=_SGE,
                             result_types=[I1]).result
                cond = c if cond is None else b.create(arith.AndIOp, cond, c).result
        if cond is not None:
            nest = _version(nest, cond)
            stores = _vector_stores(nest)
        _stream_copy(nest, stores, row, self.chunk_bytes, constants)


def _vector_bytes(store: Operation) -> int:
    t = store.value.type
    return t.shape[0] * byte_size(t.element)


def _erase_unused_since(before: Operation | None, nest: Operation,
                        constants: Constants) -> None:
    """Erase the unused ops built between `before` (None: the block's start) and `nest`,
    last first: the byte counts of a nest that turned out not to stream. The constants of
    the pool stay (the pool hands them out again; `run` erases those left unused)."""
    pooled = {id(v.owner) for v in constants.pool.values()}
    op = nest.prev_op
    while op is not None and op is not before:
        prev = op.prev_op
        if id(op) not in pooled and not any(r.has_uses() for r in op.results):
            op.erase()
        op = prev
