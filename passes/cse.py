"""cse: common subexpression elimination over pure ops, scoped by dominance; also erases the
ops it finds trivially dead, as MLIR's CSE does."""

from __future__ import annotations

from irkit.ir import Block, Operation, Region
from irkit.opdef import Commutative, GraphRegion, IsolatedFromAbove, Pure, Terminator
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_trivially_dead
from irkit.verifier import dominators


def _traits(op: Operation) -> frozenset:
    return getattr(type(op), "_trait_types", frozenset())


def op_key(op: Operation) -> tuple:
    """What makes two pure ops interchangeable: name, operands, result types, attributes.

    Operands of commutative ops are taken as a multiset (ordered by identity), so `a + b`
    and `b + a` share one key. Locations do not count.
    """
    operands = [o.value for o in op._operands]
    if Commutative in _traits(op):
        operands.sort(key=id)
    props = op.properties
    attrs = op.attributes
    return (op.name, tuple(operands), tuple(r.type for r in op.results),
            frozenset(props.items()) if props else None,
            frozenset(attrs.items()) if attrs else None)


def _may_be_isolated(op: Operation) -> bool:
    """Whether `op`'s regions may be isolated from above (MLIR's `mightHaveTrait`): they are
    for ops that say so, and may be for an unregistered op, whose traits nobody knows. A value
    defined outside such an op must never be made a use inside it."""
    return IsolatedFromAbove in _traits(op) or not op.is_registered


class _ScopedTable:
    """A hash table with nested scopes: lookups see enclosing scopes; popping a scope forgets
    only what it added (MLIR's ScopedHashTable)."""

    def __init__(self) -> None:
        self.table: dict[tuple, list[Operation]] = {}
        self.scopes: list[list[tuple]] = []

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        table = self.table
        for key in self.scopes.pop():
            stack = table[key]
            stack.pop()
            if not stack:
                del table[key]

    def lookup(self, key: tuple) -> Operation | None:
        stack = self.table.get(key)
        return stack[-1] if stack else None

    def insert(self, key: tuple, op: Operation) -> None:
        self.table.setdefault(key, []).append(op)
        self.scopes[-1].append(key)


@register_pass
class CSE(Pass):
    """Replace a pure op by an identical one that dominates it; erase trivially dead ops.

    Algorithm:
      1. Walk each region along its dominator tree, keeping a scoped table from op key
         (name, operands, result types, properties, attributes; commutative operands as a
         multiset) to the first op seen with that key.
      2. For each op in a block, first walk its regions: inside the current scope (values
         defined above dominate them), or from an empty table under an op whose regions may
         be isolated from above (one that says so, or an unregistered op: MLIR assumes the
         worst of those, so no outer value is ever moved into them).
      3. Then, unless the op is a terminator: erase it if it is trivially dead (pure, no
         result used) at this point of the walk; else, a pure op without regions whose key
         is in the table is replaced by the table's op and erased, and any other pure op is
         added. Entering a block's dominator-tree children opens a scope; leaving closes
         it, so only dominating ops are ever reused.
      4. Graph regions (ops with the `GraphRegion` trait) have no dominance: each is one
         scope, where any equal op may serve.

    Dead-op erasure is MLIR's: one look per op as the walk reaches it. An op whose only user
    is erased later in the walk stays (MLIR's CSE leaves it too); `dce` removes whole dead
    chains. The counts are `self.erased` (merged) and `self.dead` (erased as dead).
    """

    name = "cse"

    def run(self, op: Operation) -> None:
        self.erased = 0
        self.dead = 0
        table = _ScopedTable()
        for region in op.regions:
            self._region(region, table)

    def _region(self, region: Region, table: _ScopedTable) -> None:
        blocks = region.blocks
        if not blocks:
            return
        parent = region.parent
        graph = parent is not None and GraphRegion in _traits(parent)
        if len(blocks) == 1 or graph:
            table.push()
            for b in blocks:
                self._block(b, table)
            table.pop()
            return
        idom = dominators(region)
        children: dict[Block, list[Block]] = {}
        for b, d in idom.items():
            if b is not d:
                children.setdefault(d, []).append(b)
        order = {b: i for i, b in enumerate(blocks)}
        # Iterative pre-order walk of the dominator tree, one scope per tree node.
        stack: list[tuple[Block, bool]] = [(blocks[0], False)]
        while stack:
            b, done = stack.pop()
            if done:
                table.pop()
                continue
            table.push()
            self._block(b, table)
            stack.append((b, True))
            for c in sorted(children.get(b, ()), key=order.get, reverse=True):
                stack.append((c, False))

    def _block(self, block: Block, table: _ScopedTable) -> None:
        op = block.first
        while op is not None:
            nxt = op._next
            traits = _traits(op)
            if op.regions:
                nested = _ScopedTable() if _may_be_isolated(op) else table
                for region in op.regions:
                    self._region(region, nested)
            if Terminator in traits:
                pass
            elif is_trivially_dead(op):
                op.erase()
                self.dead += 1
            elif Pure in traits and op.results and not op.regions:
                key = op_key(op)
                existing = table.lookup(key)
                if existing is not None:
                    op.replace_all_uses_with(existing.results)
                    op.erase()
                    self.erased += 1
                else:
                    table.insert(key, op)
            op = nxt
