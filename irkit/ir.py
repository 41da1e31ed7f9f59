"""IR objects: Value, OpOperand, Operation, Block, Region.

The data structures follow MLIR's:

- A `Value` is an `OpResult` or a `BlockArgument`. Each value keeps its uses (the
  `OpOperand`s that read it) in a list, created on the first use: most values have one or
  two uses, and a list costs a quarter of the memory of a dict. Removing a use scans the
  list (in C); replace-all-uses moves the whole list at once.
- An `Operation` holds operands (as `OpOperand`s), results, *properties* (inherent attributes,
  `<{...}>` in generic form), discardable *attributes* (`{...}`), regions, successor blocks and
  a location. Registered ops are instances of their op class (see `irkit.opdef`); unknown ops
  are `UnregisteredOp`s that keep their name.
- A `Block` keeps its operations in an intrusive doubly linked list (`_prev`/`_next`), so
  inserting and erasing are O(1) even in 100k-op blocks. The relative order of two ops in a
  block, needed by the dominance check, is answered from indices computed lazily and
  invalidated on insertion, as MLIR does.
- A `Region` is a list of blocks.

Mutation that keeps use lists right goes through these methods (and the builder and
rewriter built on them); fields are not assigned directly.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from irkit.attributes import UNKNOWN_LOC, Attribute
from irkit.registry import lookup_op
from irkit.types import Type

# How an op prints (`str(op)`) and verifies (`op.verify()`). The printer and the verifier are
# built on this module (and on the op definitions above it), so they cannot be imported
# here; each installs its entry point when it is imported (`install_printer`,
# `install_verifier`), and the `irkit` package imports both before any IR exists.
_PRINT: Callable[["Operation"], str] | None = None
_VERIFY: Callable[["Operation"], None] | None = None


def install_printer(print_op: Callable[["Operation"], str]) -> None:
    global _PRINT
    _PRINT = print_op


def install_verifier(verify: Callable[["Operation"], None]) -> None:
    global _VERIFY
    _VERIFY = verify


class Value:
    __slots__ = ("type", "_uses")

    def __init__(self, type: Type) -> None:
        self.type = type
        self._uses: list | None = None

    @property
    def uses(self) -> list["OpOperand"]:
        return list(self._uses) if self._uses else []

    @property
    def users(self) -> list["Operation"]:
        """Distinct ops that use this value, in first-use order."""
        if not self._uses:
            return []
        return list(dict.fromkeys([u.owner for u in self._uses]))

    def has_uses(self) -> bool:
        return bool(self._uses)

    def has_one_use(self) -> bool:
        return self._uses is not None and len(self._uses) == 1

    def replace_all_uses_with(self, new: "Value") -> None:
        uses = self._uses
        if new is self or not uses:
            return
        for use in uses:
            use.value = new
        if new._uses is None:
            new._uses = uses
        else:
            new._uses.extend(uses)
        self._uses = None

    def replace_uses_if(self, new: "Value", pred: Callable[["OpOperand"], bool]) -> None:
        if not self._uses:
            return
        for use in list(self._uses):
            if pred(use):
                use.set(new)

    @property
    def owner_op(self) -> "Operation | None":
        """The defining op (for a result) or the op that owns the block (for an argument)."""
        return None

    def defining_op(self, kind=None) -> "Operation | None":
        """The op whose result this value is (MLIR's `getDefiningOp<T>()`); None for a block
        argument. With `kind` (an op class or a tuple of them, or an op name or a tuple of
        names), None too unless that op is one of them. Names let an op match ops of a
        dialect module it does not import (a sibling that imports it)."""
        return None

    @property
    def parent_block(self) -> "Block | None":
        raise NotImplementedError


class OpResult(Value):
    __slots__ = ("owner", "index")

    def __init__(self, type: Type, owner: "Operation", index: int) -> None:
        self.type = type
        self._uses = None
        self.owner = owner
        self.index = index

    @property
    def owner_op(self):
        return self.owner

    def defining_op(self, kind=None) -> "Operation | None":
        op = self.owner
        if kind is None:
            return op
        if isinstance(kind, str):
            return op if op.name == kind else None
        if isinstance(kind, tuple) and kind and isinstance(kind[0], str):
            return op if op.name in kind else None
        return op if isinstance(op, kind) else None

    @property
    def parent_block(self):
        return self.owner.parent

    def __repr__(self):
        return f"<result #{self.index} of {self.owner.name} : {self.type}>"


class BlockArgument(Value):
    __slots__ = ("owner", "index", "location")

    def __init__(self, type: Type, owner: "Block", index: int, location=None) -> None:
        self.type = type
        self._uses = None
        self.owner = owner
        self.index = index
        self.location = location

    @property
    def owner_op(self):
        return self.owner.parent_op

    @property
    def parent_block(self):
        return self.owner

    def __repr__(self):
        return f"<block argument #{self.index} : {self.type}>"


class OpOperand:
    """One use of a value by an op: `owner.operands[index] is value`."""

    __slots__ = ("owner", "index", "value")

    def __init__(self, owner: "Operation", index: int, value: Value) -> None:
        self.owner = owner
        self.index = index
        self.value = value
        uses = value._uses
        if uses is None:
            value._uses = [self]
        else:
            uses.append(self)

    def set(self, value: Value) -> None:
        old = self.value
        if old is value:
            return
        old._uses.remove(self)
        self.value = value
        if value._uses is None:
            value._uses = [self]
        else:
            value._uses.append(self)

    def drop(self) -> None:
        uses = self.value._uses
        if uses is not None:
            try:
                uses.remove(self)
            except ValueError:
                pass


class Operation:
    """A generic operation. Registered ops subclass this through `irkit.opdef.Op`."""

    __slots__ = ("_operands", "results", "properties", "attributes", "regions", "successors",
                 "location", "parent", "_prev", "_next", "_order", "__weakref__")

    name: str = "<op>"

    # ----- construction -------------------------------------------------------------------

    @staticmethod
    def create(name: str, operands: Iterable[Value] = (), result_types: Iterable[Type] = (),
               properties: dict | None = None, attributes: dict | None = None,
               regions: int | Iterable["Region"] = 0, successors: Iterable["Block"] = (),
               location: Attribute | None = None) -> "Operation":
        """Create an op by name: an instance of its registered class, or an UnregisteredOp."""
        cls = lookup_op(name)
        if cls is None:
            op = object.__new__(UnregisteredOp)
            op.name = name
        else:
            op = object.__new__(cls)
        op._init(operands, result_types, properties, attributes, regions, successors, location)
        return op

    def _init(self, operands, result_types, properties, attributes, regions, successors,
              location) -> None:
        self._operands = [OpOperand(self, i, v) for i, v in enumerate(operands)]
        self.results = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.properties = dict(properties) if properties else {}
        self.attributes = dict(attributes) if attributes else {}
        if isinstance(regions, int):
            self.regions = [Region(self) for _ in range(regions)]
        else:
            self.regions = []
            for r in regions:
                r.parent = self
                self.regions.append(r)
        self.successors = list(successors)
        self.location = location if location is not None else UNKNOWN_LOC
        self.parent = None
        self._prev = self._next = None
        self._order = -1

    # ----- operands and results ------------------------------------------------------------

    @property
    def operands(self) -> list[Value]:
        return [o.value for o in self._operands]

    @property
    def op_operands(self) -> list[OpOperand]:
        return self._operands

    @property
    def num_operands(self) -> int:
        return len(self._operands)

    def operand(self, i: int) -> Value:
        return self._operands[i].value

    def set_operand(self, i: int, value: Value) -> None:
        self._operands[i].set(value)

    def set_operands(self, values: Iterable[Value]) -> None:
        for o in self._operands:
            o.drop()
        self._operands = [OpOperand(self, i, v) for i, v in enumerate(values)]

    @property
    def result(self) -> OpResult:
        """The single result; an error for ops with zero or several."""
        if len(self.results) != 1:
            raise ValueError(f"'{self.name}' has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.results]

    @property
    def operand_types(self) -> list[Type]:
        return [o.value.type for o in self._operands]

    # ----- attributes -------------------------------------------------------------------

    def get_attr(self, name: str, default=None):
        """An inherent attribute (property) or, failing that, a discardable one."""
        a = self.properties.get(name)
        if a is None:
            a = self.attributes.get(name, default)
        return a

    def set_attr(self, name: str, value: Attribute) -> None:
        self.attributes[name] = value

    # ----- structure -------------------------------------------------------------------

    @property
    def parent_region(self) -> "Region | None":
        return self.parent.parent if self.parent is not None else None

    @property
    def parent_op(self) -> "Operation | None":
        b = self.parent
        if b is None or b.parent is None:
            return None
        return b.parent.parent

    def ancestors(self) -> Iterator["Operation"]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def is_ancestor_of(self, other: "Operation") -> bool:
        """True if `other` is `self` or nested anywhere inside one of its regions."""
        while other is not None:
            if other is self:
                return True
            other = other.parent_op
        return False

    @property
    def next_op(self) -> "Operation | None":
        return self._next

    @property
    def prev_op(self) -> "Operation | None":
        return self._prev

    def is_before_in_block(self, other: "Operation") -> bool:
        block = self.parent
        if not block._order_valid:
            block._renumber()
        return self._order < other._order

    def walk(self, fn: Callable[["Operation"], None] | None = None, *,
             post_order: bool = True) -> Iterator["Operation"] | None:
        """Visit this op and all nested ops (post-order by default, as MLIR's walk)."""
        if fn is None:
            return self._walk_iter(post_order)
        for op in self._walk_iter(post_order):
            fn(op)
        return None

    def _walk_iter(self, post_order: bool) -> Iterator["Operation"]:
        if not post_order:
            yield self
        for region in self.regions:
            for block in region.blocks:
                op = block.first
                while op is not None:
                    nxt = op._next
                    if op.regions:
                        yield from op._walk_iter(post_order)
                    else:
                        yield op
                    op = nxt
        if post_order:
            yield self

    # ----- mutation ---------------------------------------------------------------------

    def drop_all_references(self) -> None:
        """Drop every operand use (including nested ops'), so the op can be erased."""
        for o in self._operands:
            o.drop()
        self._operands = []
        self.successors = []
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    op.drop_all_references()

    def detach(self) -> "Operation":
        """Unlink from the parent block, keeping uses intact (for moving)."""
        block = self.parent
        if block is not None:
            block._unlink(self)
        return self

    def erase(self) -> None:
        """Remove from the parent block and drop all uses. Results must be unused."""
        for r in self.results:
            if r._uses:
                raise ValueError(f"cannot erase '{self.name}': result #{r.index} still has uses")
        self.detach()
        self.drop_all_references()

    def move_before(self, other: "Operation") -> None:
        self.detach()
        other.parent.insert_before(other, self)

    def move_after(self, other: "Operation") -> None:
        self.detach()
        other.parent.insert_after(other, self)

    def replace_all_uses_with(self, values: Iterable[Value]) -> None:
        values = list(values)
        if len(values) != len(self.results):
            raise ValueError(f"'{self.name}': {len(values)} replacement values for "
                             f"{len(self.results)} results")
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)

    def clone(self, mapping: dict | None = None) -> "Operation":
        """Deep copy; operands found in `mapping` are remapped, and `mapping` records
        old -> new for every result, block and block argument copied."""
        if mapping is None:
            mapping = {}
        get = mapping.get
        operands = [get(o.value, o.value) for o in self._operands]
        op = object.__new__(type(self))
        if isinstance(self, UnregisteredOp):
            op.name = self.name
        op._init(operands, [r.type for r in self.results], self.properties, self.attributes,
                 len(self.regions), [], self.location)
        for old, new in zip(self.results, op.results):
            mapping[old] = new
        # Blocks first, so successors and forward references inside regions resolve.
        for old_r, new_r in zip(self.regions, op.regions):
            old_r.clone_into(new_r, mapping)
        op.successors = [get(b, b) for b in self.successors]
        return op

    # ----- misc ------------------------------------------------------------------------

    def verify(self) -> None:
        """Verify this op and everything nested in it; raises VerifyError."""
        _VERIFY(self)

    def __str__(self) -> str:
        return _PRINT(self)

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    @property
    def is_registered(self) -> bool:
        return not isinstance(self, UnregisteredOp)


class UnregisteredOp(Operation):
    """An op of a dialect irkit does not know: kept opaque so that it round-trips."""

    __slots__ = ("name",)


class Block:
    __slots__ = ("args", "first", "last", "parent", "_order_valid", "__weakref__")

    def __init__(self, arg_types: Iterable[Type] = (), arg_locs: Iterable | None = None) -> None:
        locs = list(arg_locs) if arg_locs is not None else None
        self.args = [BlockArgument(t, self, i, locs[i] if locs else None)
                     for i, t in enumerate(arg_types)]
        self.first: Operation | None = None
        self.last: Operation | None = None
        self.parent: Region | None = None
        self._order_valid = False

    # ----- arguments -------------------------------------------------------------------

    def add_argument(self, type: Type, location=None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), location)
        self.args.append(arg)
        return arg

    def erase_argument(self, index: int) -> None:
        arg = self.args[index]
        if arg._uses:
            raise ValueError(f"cannot erase block argument #{index}: it still has uses")
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    # ----- operations ------------------------------------------------------------------

    @property
    def ops(self) -> Iterator[Operation]:
        op = self.first
        while op is not None:
            nxt = op._next
            yield op
            op = nxt

    def ops_reversed(self) -> Iterator[Operation]:
        op = self.last
        while op is not None:
            prv = op._prev
            yield op
            op = prv

    def __len__(self) -> int:
        n = 0
        op = self.first
        while op is not None:
            n += 1
            op = op._next
        return n

    @property
    def is_empty(self) -> bool:
        return self.first is None

    @property
    def terminator(self) -> Operation | None:
        return self.last

    def find_ancestor_op(self, op: Operation) -> Operation | None:
        """`op` or the op containing it that sits directly in this block; None where
        neither does (MLIR's `Block::findAncestorOpInBlock`)."""
        while op is not None and op.parent is not self:
            op = op.parent_op
        return op

    def append(self, op: Operation) -> Operation:
        if op.parent is not None:
            raise ValueError(f"'{op.name}' is already in a block; detach it first")
        op.parent = self
        last = self.last
        op._prev = last
        op._next = None
        if last is None:
            self.first = op
        else:
            last._next = op
        self.last = op
        # Appending keeps existing indices valid: give the new op the next one.
        op._order = last._order + 1 if (last is not None and self._order_valid) else 0
        if last is None:
            self._order_valid = True
        return op

    def insert_before(self, anchor: Operation | None, op: Operation) -> Operation:
        """Insert `op` before `anchor` (at the end when `anchor` is None)."""
        if anchor is None:
            return self.append(op)
        if op.parent is not None:
            raise ValueError(f"'{op.name}' is already in a block; detach it first")
        op.parent = self
        prev = anchor._prev
        op._prev = prev
        op._next = anchor
        anchor._prev = op
        if prev is None:
            self.first = op
        else:
            prev._next = op
        self._order_valid = False
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        return self.insert_before(anchor._next, op)

    def _unlink(self, op: Operation) -> None:
        prev, nxt = op._prev, op._next
        if prev is None:
            self.first = nxt
        else:
            prev._next = nxt
        if nxt is None:
            self.last = prev
        else:
            nxt._prev = prev
        op._prev = op._next = None
        op.parent = None

    def _renumber(self) -> None:
        i = 0
        op = self.first
        while op is not None:
            op._order = i
            i += 1
            op = op._next
        self._order_valid = True

    # ----- structure -------------------------------------------------------------------

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def successors(self) -> list["Block"]:
        t = self.last
        return list(t.successors) if t is not None else []

    @property
    def predecessors(self) -> list["Block"]:
        """Blocks of the same region whose terminator branches here (one entry per edge)."""
        if self.parent is None:
            return []
        return [b for b in self.parent.blocks for s in b.successors if s is self]

    def erase(self) -> None:
        for op in list(self.ops_reversed()):
            op.drop_all_references()
        for op in list(self.ops_reversed()):
            for r in op.results:
                if r._uses:
                    raise ValueError(f"cannot erase block: '{op.name}' result still used")
            self._unlink(op)
        if self.parent is not None:
            self.parent.blocks.remove(self)
            self.parent = None

    def __repr__(self):
        return f"<block with {len(self.args)} args>"


class Region:
    __slots__ = ("blocks", "parent", "__weakref__")

    def __init__(self, parent: Operation | None = None, blocks: Iterable[Block] = ()) -> None:
        self.parent = parent
        self.blocks: list[Block] = []
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block | None = None) -> Block:
        if block is None:
            block = Block()
        block.parent = self
        self.blocks.append(block)
        return block

    def insert_block(self, index: int, block: Block) -> Block:
        block.parent = self
        self.blocks.insert(index, block)
        return block

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    @property
    def ops(self) -> Iterator[Operation]:
        for b in self.blocks:
            yield from b.ops

    def take_body(self, other: "Region") -> None:
        """Move all blocks of `other` into this (empty) region."""
        for b in other.blocks:
            b.parent = self
            self.blocks.append(b)
        other.blocks = []

    def clone_into(self, dest: "Region", mapping: dict) -> None:
        new_blocks = []
        for b in self.blocks:
            nb = Block([a.type for a in b.args], [a.location for a in b.args])
            mapping[b] = nb
            for a, na in zip(b.args, nb.args):
                mapping[a] = na
            new_blocks.append(nb)
            dest.add_block(nb)
        # Values may be used before their definition (graph regions, back edges): clone
        # everything first, then patch operands that referred to not-yet-cloned values.
        pending = []
        for b, nb in zip(self.blocks, new_blocks):
            for op in b.ops:
                new = op.clone(mapping)
                nb.append(new)
                pending.append(new)
        get = mapping.get
        for new in pending:
            for operand in new._operands:
                mapped = get(operand.value)
                if mapped is not None:
                    operand.set(mapped)
            new.successors = [get(s, s) for s in new.successors]

    def __iter__(self):
        return iter(self.blocks)

    def __len__(self):
        return len(self.blocks)


class gc_paused:
    """Pause Python's cycle collector while IR is built or rewritten in bulk.

    Every op is a reference cycle (op -> result -> owner op), so building or rewriting 100k
    ops allocates millions of tracked objects, and the collector's full sweeps, triggered by
    allocation counts, rescan the whole IR again and again: a third of parsing time at 100k
    ops. Garbage made meanwhile is collected once the pause ends. Pauses nest.
    """

    _depth = 0

    def __enter__(self) -> None:
        import gc
        if gc_paused._depth == 0:
            self._was_enabled = gc.isenabled()
            gc.disable()
        else:
            self._was_enabled = False
        gc_paused._depth += 1

    def __exit__(self, *exc) -> None:
        import gc
        gc_paused._depth -= 1
        if self._was_enabled:
            gc.enable()
