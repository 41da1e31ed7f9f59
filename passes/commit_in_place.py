"""commit-in-place: a variable's new value written into the variable itself, not into a
temporary that is then copied there.

`bufferize` makes `graph.assign %w, %new` a `memory.copy` of the buffer holding `%new`
into the variable's (passes/bufferization/state.py), and where the function has run-time
checks, a copy made only while the status says no error: a step that fails a check must
leave the variables as they were. A training step's update then writes every weight
twice and reads it once more (the temporary written, read, the variable written):

    %t = memory.alloc() : memref<784x256xf32>
    fusion.group {kind = "epilogue"} {
      ... the weight gradient into %acc ...
      linalg.generic ins(%w, %acc) outs(%t) { w - lr * truncf(acc) }
    }
    %s = memory.load %status[%c0] : memref<3xi64>
    %ok = arith.cmpi eq, %s, %c0_i64 : i64
    loop.if %ok {
      memory.copy %t, %w
    }
    memory.dealloc %t

becomes the update written into `%w` directly, and only when the status says no error:

    %s = memory.load %status[%c0] : memref<3xi64>
    %ok = arith.cmpi eq, %s, %c0_i64 : i64
    loop.if %ok {
      fusion.group {kind = "epilogue"} {
        ... the weight gradient into %acc ...
        linalg.generic ins(%w, %acc) outs(%w) { w - lr * truncf(acc) }
      }
    }

On the MLP 784-256-10 step at B=128, the copy alone was 3% of the step on one thread and
6-9% on two (memcpy runs on one thread), as measured with the copies left out.

Why it is sound. Let W be the op of the block that holds the writer P of `%t` (P itself or
the `fusion.group` around it), and G the `loop.if` (or, without checks, the bare copy).

- Each element of `%t` is written once, from the old `%w` at the same element only: P is a
  structured op whose loops are all parallel and whose map for `%t` is a permutation (one
  point per element), and which reads `%w` only through inputs with that same map. So P
  may write `%w` in place, as MLIR's bufferization writes an elementwise op into an input
  it overwrites; every lowering of it (loops, vectors, BLIS's epilogue at the store)
  reads a point's inputs before it stores the point. Other members of W may read the new
  value through `%t`, at the same point (Adam's weight update reads the new moments): they
  then read it from `%w`.
- Nothing else sees the difference: no op between W and G touches `%w`, and no op in W
  but P's inputs; `%t` has no use but P, those readers, the copy and its dealloc.
- The status is final when W starts: no op in W or between W and G writes the status
  buffer (a `memory.check`, or any use but a load), so testing it before W decides what
  the copy's test decided. W runs only when it passes; when it fails, nothing W writes is
  missed: every buffer W writes is made inside W or is a temporary committed here.

W may commit several temporaries at once (Adam's weight and both moments), under one test.

Algorithm, for each block (bottom-up, so that an inner block is done first):
  1. Find the commits: a `memory.copy %t, %w` of a `memory.alloc` of this block into an
     argument of the function, of the same type, alone in the then-region of a `loop.if`
     (no else) on `arith.cmpi eq` of a `memory.load` of a status buffer and 0, or bare in
     the block; group them by W.
  2. Drop the commits that fail a condition above; for a guarded W, drop all of W's when
     W writes a buffer other than its own and its commits'.
  3. Rewrite: move the first test's load and compare before W (their operands are defined
     before it), wrap W in `loop.if` on it, make `%t`'s uses in W `%w`'s, and erase the
     copies, their `loop.if`s, the temporaries and their deallocs.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.affine import AffineDim
from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES
from irkit.dialects.linalg import PARALLEL, StructuredOp
from irkit.dialects.loop import IfOp, YieldOp
from irkit.dialects.memory import (
    AllocOp, CopyOp, DeallocOp, LoadOp, StoreOp, VectorStoreOp,
)
from irkit.types import MemRefType


@dataclass
class _Commit:
    """One copy of a temporary `t` into the variable `w` (`copy`), inside the `loop.if`
    `guard` whose test `test` (the load and the compare) reads the status buffer `status`,
    or bare (`guard` is the copy, `status` None)."""

    copy: Operation
    guard: Operation
    t: Value
    w: Value
    status: Value | None
    test: tuple[Operation, Operation] | None


def _commit(op: Operation, entry_args: set) -> _Commit | None:
    """The commit `op` is the block-level op of (a guarded or bare copy), else None."""
    guard, copy, status, test = op, op, None, None
    if isinstance(op, IfOp):
        then = op.regions[0].blocks
        if len(op.results) or len(op.regions) < 2 or op.regions[1].blocks or \
                len(then) != 1 or len(then[0]) != 2:
            return None
        copy = next(iter(then[0].ops))
        cmp = op.operands[0].defining_op()
        if not isinstance(copy, CopyOp) or not isinstance(cmp, arith.CmpIOp) or \
                CMPI_PREDICATES[cmp.predicate.value] != "eq":
            return None
        load, zero = cmp.operands[0].defining_op(), constant_value(cmp.operands[1])
        if not isinstance(load, LoadOp) or not isinstance(zero, IntegerAttr) or zero.value:
            return None
        status, test = load.operands[0], (load, cmp)
    elif not isinstance(op, CopyOp):
        return None
    t, w = copy.operands
    if not isinstance(t.defining_op(), AllocOp) or t.defining_op().parent is not \
            op.parent or w not in entry_args or t.type != w.type:
        return None
    return _Commit(copy, guard, t, w, status, test)


def _top(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` (or itself) that is an op of `block`."""
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


def _inside(op: Operation, root: Operation) -> bool:
    return root.is_ancestor_of(op)


def _writer(c: _Commit, block: Block) -> tuple[Operation, StructuredOp, object] | None:
    """(W, P, P's map for `t`): the block's op holding the one structured op P that writes
    `t` (an elementwise writer, map a permutation), when every other use of `t` is a read at
    P's point inside W, the copy or its dealloc in the block after the guard."""
    writers = [u.owner for u in c.t.uses
               if isinstance(u.owner, StructuredOp) and u.index >= len(u.owner.inputs)]
    if len(writers) != 1:
        return None
    p = writers[0]
    top = _top(p, block)
    if top is None or not top.is_before_in_block(c.guard):
        return None
    point = _map_of(p, c.t)
    if point is None or any(it != PARALLEL for it in p.iterator_types_list()) or \
            not _is_permutation(point, p.num_loops):
        return None
    for u in c.t.uses:
        owner = u.owner
        if owner is p or owner is c.copy:
            continue
        if isinstance(owner, DeallocOp) and owner.parent is block and \
                c.guard.is_before_in_block(owner):
            continue
        if _inside(owner, top) and isinstance(owner, StructuredOp) and \
                u.index < len(owner.inputs) and _map_of(owner, c.t) == point:
            continue                      # the new value read at its own point
        return None
    return top, p, point


def _map_of(op: StructuredOp, v: Value):
    """`op`'s indexing map for its operand `v` (one map for all its uses), or None."""
    maps = {m for u, m in zip(op.structured_operands(), op.indexing_maps_list()) if u is v}
    return next(iter(maps)) if len(maps) == 1 else None


def _is_permutation(m, loops: int) -> bool:
    dims = [e.position for e in m.results if isinstance(e, AffineDim)]
    return len(m.results) == loops and sorted(dims) == list(range(loops))


def _reads_w_at_point(c: _Commit, top: Operation, p: StructuredOp, point) -> bool:
    """Whether every use of `w` inside W is an input of P at `t`'s point."""
    for u in c.w.uses:
        if not _inside(u.owner, top):
            continue
        if u.owner is not p or u.index >= len(p.inputs) or _map_of(p, c.w) != point:
            return False
    return True


def _touches(ops: list[Operation], value: Value, loads_ok: bool = False) -> bool:
    """Whether any of `ops` (nested ops too) uses `value` (loads of it excepted when
    `loads_ok`)."""
    for u in value.uses:
        if loads_ok and isinstance(u.owner, LoadOp):
            continue
        if any(_inside(u.owner, op) for op in ops):
            return True
    return False


def _defining(v: Value) -> Operation | None:
    """The op that defines `v`: its result's op, or the op whose region has the block
    `v` is an argument of (None at the top)."""
    if isinstance(v, BlockArgument):
        region = v.owner.parent
        return region.parent if region is not None else None
    return v.defining_op()


def _between(block: Block, first: Operation, last: Operation) -> list[Operation]:
    """The ops of `block` after `first` and before `last`."""
    out, op = [], first.next_op
    while op is not None and op is not last:
        out.append(op)
        op = op.next_op
    return out


#: ops that read the buffers they are given, or only make them, and write none
_READERS = frozenset(["memory.load", "memory.vector_load", "memory.dim", "memory.subview",
                      "memory.view", "memory.collapse_shape", "memory.alloc"])


def _writes_only(top: Operation, allowed: set) -> bool:
    """Whether every buffer `top` writes is made inside it or in `allowed`: structured ops'
    outputs, stores' and copies' targets, deallocs; any other op given a buffer made
    outside (a call, a check, an op this pass does not know) fails."""
    for op in top.walk():
        if isinstance(op, StructuredOp):
            written = list(op.outputs)
        elif isinstance(op, (StoreOp, VectorStoreOp)):
            written = [op.operands[1]]
        elif isinstance(op, CopyOp):
            written = [op.operands[1]]
        elif isinstance(op, DeallocOp):
            written = [op.operands[0]]
        elif op.name in _READERS:
            continue
        else:
            written = [v for v in op.operands if isinstance(v.type, MemRefType)]
        for v in written:
            if not isinstance(v.type, MemRefType) or v in allowed:
                continue
            owner = _defining(v)
            if owner is None or not _inside(owner, top):
                return False
    return True


@register_pass
class CommitInPlace(Pass):
    """Write a variable's update into the variable, under the step's status test, instead
    of into a temporary copied there (see the module docstring).

    Algorithm:
      1. In each block, find the copies of a temporary into a function argument (guarded
         by the status test, or bare) and the op W holding each one's writer.
      2. Keep those whose writer is elementwise, whose temporary and variable nothing else
         between reads, and, for a guarded W, whose W writes nothing but its own buffers
         and its commits' temporaries and runs no check.
      3. Move the status test before W, wrap W in a `loop.if` on it, redirect the
         temporaries to the variables, erase the copies, the temporaries and their
         deallocs.
    """

    name = "commit-in-place"

    def run(self, root: Operation) -> None:
        for fn in [op for op in root.walk() if op.name == "func.func" and op.regions[0].blocks]:
            entry = set(fn.regions[0].blocks[0].args)
            blocks = [b for op in fn.walk(post_order=True) for r in op.regions for b in r]
            for block in blocks:
                self._block(block, entry)

    def _block(self, block: Block, entry: set) -> None:
        by_top: dict[int, tuple[Operation, list]] = {}
        for op in list(block.ops):
            c = _commit(op, entry)
            if c is None:
                continue
            found = _writer(c, block)
            if found is None:
                continue
            top, p, point = found
            if not _reads_w_at_point(c, top, p, point):
                continue
            if _touches(_between(block, top, c.guard), c.w):
                continue
            if c.status is not None and _touches([top, *_between(block, top, c.guard)],
                                                 c.status, loads_ok=True):
                continue
            by_top.setdefault(id(top), (top, []))[1].append(c)
        for top, commits in by_top.values():
            guarded = [c for c in commits if c.status is not None]
            if guarded and (len(guarded) != len(commits) or
                            len({id(c.status) for c in guarded}) != 1 or
                            not _writes_only(top, {c.t for c in commits}) or
                            not self._test_dominates(guarded[0], top, block)):
                continue
            self._rewrite(top, commits, block)

    @staticmethod
    def _test_dominates(c: _Commit, top: Operation, block: Block) -> bool:
        """Whether the test's operands (status, index, zero) are defined before W."""
        load, cmp = c.test
        for v in [*load.operands, cmp.operands[1]]:
            owner = v.defining_op() if not isinstance(v, BlockArgument) else None
            if owner is not None and owner.parent is block and \
                    not owner.is_before_in_block(top):
                return False
        return True

    @staticmethod
    def _rewrite(top: Operation, commits: list[_Commit], block: Block) -> None:
        first = commits[0]
        if first.status is not None:
            load, cmp = first.test
            b = Builder.before(top)
            new_load = b.create(LoadOp, load.operands[0], list(load.operands[1:]),
                                location=load.location)
            ok = b.create(arith.CmpIOp, new_load.results[0], cmp.operands[1],
                          predicate=cmp.predicate, location=cmp.location).result
            guard = IfOp.build(ok, result_types=[], regions=2, location=top.location)
            then = Block([])
            guard.regions[0].add_block(then)
            block.insert_before(top, guard)
            top.detach()
            then.append(top)
            Builder.at_end(then).create(YieldOp, [], result_types=[], location=top.location)
        for c in commits:
            alloc = c.t.defining_op()
            deallocs = [u.owner for u in c.t.uses if isinstance(u.owner, DeallocOp)]
            c.guard.erase()
            for op in (*reversed(c.test or ()), *deallocs):
                if not any(r.has_uses() for r in op.results):
                    op.erase()
            c.t.replace_all_uses_with(c.w)
            alloc.erase()
