"""Builder: creates ops at an insertion point, so passes never splice linked lists by hand.

    b = Builder.at_end(func.entry)
    x = b.create(AddFOp, lhs, rhs).result      # typed op class, result type inferred
    y = b.create_generic("foo.bar", [x], [F32])  # any op by name

An insertion point is a block plus an anchor op (insert before the anchor; None = at the
end). `with b.at(...)` temporarily moves the insertion point and restores it after.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable

from irkit.attributes import UnknownLoc
from irkit.ir import Block, Operation, Region, Value
from irkit.types import Type


class InsertionPoint:
    __slots__ = ("block", "before")

    def __init__(self, block: Block, before: Operation | None = None) -> None:
        self.block = block
        self.before = before


class Builder:
    def __init__(self, ip: InsertionPoint | None = None, location=None) -> None:
        self.ip = ip
        self.location = location

    # ----- insertion points -------------------------------------------------------------

    @classmethod
    def at_end(cls, block: Block) -> "Builder":
        return cls(InsertionPoint(block, None))

    @classmethod
    def at_start(cls, block: Block) -> "Builder":
        return cls(InsertionPoint(block, block.first))

    @classmethod
    def before(cls, op: Operation) -> "Builder":
        return cls(InsertionPoint(op.parent, op), op.location)

    @classmethod
    def after(cls, op: Operation) -> "Builder":
        return cls(InsertionPoint(op.parent, op._next), op.location)

    def set_insertion_point_before(self, op: Operation) -> None:
        self.ip = InsertionPoint(op.parent, op)

    def set_insertion_point_after(self, op: Operation) -> None:
        self.ip = InsertionPoint(op.parent, op._next)

    def set_insertion_point_to_end(self, block: Block) -> None:
        self.ip = InsertionPoint(block, None)

    def set_insertion_point_to_start(self, block: Block) -> None:
        self.ip = InsertionPoint(block, block.first)

    @contextmanager
    def at(self, ip: InsertionPoint):
        saved = self.ip
        self.ip = ip
        try:
            yield self
        finally:
            self.ip = saved

    # ----- creation ---------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        if self.ip is None:
            raise ValueError("builder has no insertion point")
        if self.location is not None and type(op.location) is UnknownLoc:
            op.location = self.location
        self.ip.block.insert_before(self.ip.before, op)
        return op

    def create(self, cls, *args, **kwargs) -> Operation:
        """Build an op of a registered class (see `Op.build`) and insert it."""
        kwargs.setdefault("location", self.location)
        return self.insert(cls.build(*args, **kwargs))

    def create_generic(self, name: str, operands: Iterable[Value] = (),
                       result_types: Iterable[Type] = (), properties: dict | None = None,
                       attributes: dict | None = None, regions: int | Iterable[Region] = 0,
                       successors: Iterable[Block] = ()) -> Operation:
        return self.insert(Operation.create(name, operands, result_types, properties,
                                            attributes, regions, successors, self.location))

    def create_block(self, region: Region, arg_types: Iterable[Type] = (),
                     insert_before: Block | None = None) -> Block:
        """A new block in `region`; the insertion point moves to its end."""
        block = Block(arg_types)
        if insert_before is None:
            region.add_block(block)
        else:
            region.insert_block(region.blocks.index(insert_before), block)
        self.ip = InsertionPoint(block, None)
        return block

    def clone(self, op: Operation, mapping: dict | None = None) -> Operation:
        return self.insert(op.clone(mapping))
