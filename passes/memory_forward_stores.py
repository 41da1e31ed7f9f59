"""memory-forward-stores: within each block, a load of what an earlier store wrote (or an
earlier load read) is that value, and a store that a later one overwrites unread is erased:
store-to-load forwarding, redundant load elimination and dead store elimination on
`memory.load` / `memory.store` and their vector forms (MLIR's `affine-scalrep` does the
same on affine accesses).

Why here. A fused nest passes values between its members through buffers, and
lower-linalg-to-loop forwards the scalar ones at the top level of the nest's body
(passes/fusion_buffers.py). What a member reads in a loop of its own (a row of 10 logits
that a row reduction loops over) is only straight-line code once loop-vectorize and
loop-unroll have made the row a few vector loads, so it is forwarded here, after them.
LLVM would do the same only where it can tell the buffers apart, and after plan-memory
they are views of one arena at run-time offsets. The cross-entropy of a 10-class
classifier and its gradient: the row's maximum, its exponentials and their sum were
computed twice per row (the loss's log-sum-exp and the gradient's softmax each reload the
logits they were just given); once the reloads are the stored values, cse merges the two
computations. Measured (2-vCPU Xeon VM, train steps with and without the pass compiled in
one process and called alternately, medians of 15 rounds, us): the logistic regression
(B = 100) 36.4 -> 33.8 on 1 thread, 28.8 -> 28.3 on 2 (its cross-entropy kernel 4.8 ->
2.9, `Model.profile`); the MLP 784-256-10 at B = 128 758 -> 746 and at B = 1024 5463 ->
5424 on 1 thread. The CNN of examples/cnn.irk (B = 64, 1 thread) first measured 2.5-4%
slower with the pass, though its hot functions' instructions were the same: they only
started at other addresses, the cross-entropy's kernel before them being shorter. With
every function at a 64-byte boundary (`llvm_cpu.FUNCTION_ALIGN`) the step is 1% faster
with the pass (577 / 582 / 588 / 581 against 583 / 584 / 592 / 588 us, both orders).

What is known. A block is walked in order, keeping per buffer value the accesses whose
value is known: (indices, type) -> value, from stores and loads. An index is compared by
its constant where it has one (loop-unroll leaves equal constants as separate ops), else
by the SSA value. Two accesses of one buffer value are disjoint when their indices agree
but in the last dimension, where both are constants whose element ranges (a vector covers
its width) do not meet, and the buffer's last stride is 1: their addresses then differ by
the last index alone. A write forgets what it may overlap: the accesses of its buffer it
is not disjoint from, and every access of a buffer that may share memory with it. Two
buffers do not share memory when they are views of two different identified buffers (two
allocations, an allocation and an argument, two arguments of a function:
`loop_transforms.is_identified`); any other pair may. An op with regions or of another
kind forgets what its writes (and frees) may touch, everything when its effects are
unknown; a load or another read makes the stores it may read no longer dead.

Only within a block: a nested block starts with nothing known (its loop may run again
after its own stores). A block remembers the last `MAX_KNOWN` accesses of each buffer, so
that a fully unrolled block of thousands of them stays linear to walk.
"""

from __future__ import annotations

from irkit.ir import Block, Operation, Value
from irkit.opdef import Terminator, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.dialects.memory import (
    FREE, READ, WRITE, LoadOp, StoreOp, VectorLoadOp, VectorStoreOp, effects_of,
)
from irkit.dialects.memory.view import strides_and_offset
from irkit.passes.loop_transforms import int_of, is_identified, root_of

_LOADS = (LoadOp, VectorLoadOp)
_STORES = (StoreOp, VectorStoreOp)
#: the most accesses of one buffer a block remembers (`_remember`)
MAX_KNOWN = 64


class _Access:
    """One load or store of a buffer: its index keys (constants by value), the element
    type it moves, and how many elements along the last dimension."""

    __slots__ = ("keys", "type", "width", "value", "store")

    def __init__(self, op: Operation) -> None:
        self.keys = tuple(_key(i) for i in op.indices)
        moved = op.result.type if isinstance(op, _LOADS) else op.value.type
        self.type = moved
        self.width = moved.shape[0] if isinstance(op, (VectorLoadOp, VectorStoreOp)) else 1
        self.value = op.result if isinstance(op, _LOADS) else op.value
        self.store = op if isinstance(op, _STORES) else None

    def same(self, other: "_Access") -> bool:
        return self.keys == other.keys and self.type is other.type


def _key(index: Value):
    c = int_of(index)
    return index if c is None else ("c", c)


def _disjoint(buffer: Value, a: _Access, b: _Access) -> bool:
    """Whether accesses `a` and `b` of `buffer` touch no element in common (module
    docstring: equal indices but the last, constant and apart there, unit last stride)."""
    if not a.keys or a.keys[:-1] != b.keys[:-1]:
        return False
    last_a, last_b = a.keys[-1], b.keys[-1]
    if not (isinstance(last_a, tuple) and isinstance(last_b, tuple)):
        return False
    layout = strides_and_offset(buffer.type)
    if layout is None or layout[0][-1] != 1:
        return False
    return last_a[1] + a.width <= last_b[1] or last_b[1] + b.width <= last_a[1]


def may_alias(a: Value, b: Value) -> bool:
    """Whether buffers `a` and `b` may share memory (module docstring)."""
    if a is b:
        return True
    ra, rb = root_of(a), root_of(b)
    return ra is rb or not (is_identified(ra) and is_identified(rb))


class _Known:
    """Per buffer value, the accesses whose value is known, and the stores not read yet."""

    def __init__(self) -> None:
        self.values: dict[Value, list[_Access]] = {}
        self.unread: dict[Value, list[_Access]] = {}

    def lookup(self, buffer: Value, access: _Access) -> Value | None:
        for known in self.values.get(buffer, ()):
            if known.same(access):
                return known.value
        return None

    def write(self, buffer: Value | None, access: _Access | None = None) -> None:
        """Forget the known values and the unread stores a write of `access` to `buffer`
        may overlap (None: a write of any part of it; a None buffer: of anything)."""
        _forget(self.values, buffer, access)
        _forget(self.unread, buffer, access)

    def read(self, buffer: Value | None, access: _Access | None = None) -> None:
        """The stores a read of `access` in `buffer` may read are no longer dead."""
        _forget(self.unread, buffer, access)


def _remember(table: dict, buffer: Value, access: _Access) -> None:
    """Add `access` to `buffer`'s list in `table`, keeping the last `MAX_KNOWN`: a block of
    thousands of accesses to one buffer (a fully unrolled loop) stays linear to walk, at
    the cost of what older accesses would have forwarded."""
    accesses = table.setdefault(buffer, [])
    accesses.append(access)
    if len(accesses) > MAX_KNOWN:
        del accesses[0]


def _forget(table: dict, buffer: Value | None, access: _Access | None) -> None:
    """Drop from `table` the accesses that `access` of `buffer` may overlap: of `buffer`
    itself those not provably disjoint from it (all of them for a None access), of another
    buffer all where the two may alias, everything for a None buffer."""
    for b in list(table):
        if b is buffer:
            kept = [k for k in table[b] if access is not None and _disjoint(b, k, access)]
            if kept:
                table[b] = kept
            else:
                del table[b]
        elif buffer is None or may_alias(b, buffer):
            del table[b]


def forward_stores(body: Block) -> int:
    """Forward stores and loads to the loads of `body`'s top level, and erase its stores
    overwritten unread (module docstring); returns how many ops were erased."""
    known = _Known()
    erased = 0
    for op in list(body.ops):
        if isinstance(op, _LOADS):
            access = _Access(op)
            value = known.lookup(op.memref, access)
            if value is not None:
                op.result.replace_all_uses_with(value)
                op.erase()
                erased += 1
                continue
            known.read(op.memref, access)
            _remember(known.values, op.memref, access)
        elif isinstance(op, _STORES):
            access = _Access(op)
            for earlier in known.unread.get(op.memref, ()):
                if earlier.same(access):
                    earlier.store.erase()
                    erased += 1
            known.write(op.memref, access)
            _remember(known.values, op.memref, access)
            _remember(known.unread, op.memref, access)
        elif (known.values or known.unread) and not has_trait(op, Terminator):
            reads, writes = accesses(op)
            for buf in reads:
                known.read(buf)
            for buf in writes:
                known.write(buf)
    return erased


def accesses(op: Operation) -> tuple[list, list]:
    """The buffers `op` or the ops nested in it may read, and may write or free (None:
    any)."""
    reads: list[Value | None] = []
    writes: list[Value | None] = []
    for nested in op.walk():
        if nested.regions or has_trait(nested, Terminator):
            continue
        effects = effects_of(nested)
        if effects is None:
            return [None], [None]
        reads += [buf for effect, buf in effects if effect == READ]
        writes += [buf for effect, buf in effects if effect in (WRITE, FREE)]
    return reads, writes


@register_pass
class MemoryForwardStores(Pass):
    """Store-to-load forwarding, redundant load and dead store elimination in every block
    (module docstring).

    Algorithm, per block (each nested block on its own, starting from nothing known):
      1. Walk the ops in order. A load whose buffer value holds a known access of the same
         indices and type is replaced by that access's value; any other load becomes known
         and marks the stores it may read as read.
      2. A store erases an earlier unread store of the same indices and type, forgets the
         known accesses it may overlap (same buffer: not provably disjoint; other buffers:
         all of those that may alias), and becomes known and unread.
      3. Any other op: what its nested reads may read is read, what its writes and frees
         may touch is forgotten; unknown effects forget everything.
    """

    name = "memory-forward-stores"

    def run(self, op: Operation) -> None:
        self.erased = 0
        for block in [b for o in op.walk() for r in o.regions for b in r.blocks]:
            self.erased += forward_stores(block)
