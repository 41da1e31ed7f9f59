"""Symbol tables: ops named by a `sym_name` property inside an op with the SymbolTable trait.

A reference `@a::@b` is resolved from the nearest enclosing symbol table: `@a` is looked up
there, then `@b` inside the table `@a` defines, as in MLIR. `SymbolTable` caches the
name -> op map of one table op; it is rebuilt when asked for again after changes.
"""

from __future__ import annotations

from irkit.attributes import StringAttr, SymbolRefAttr
from irkit.ir import Operation


def symbol_name(op: Operation) -> str | None:
    a = op.properties.get("sym_name")
    if a is None:
        a = op.attributes.get("sym_name")
    return a.value if isinstance(a, StringAttr) else None


def is_symbol_table(op: Operation) -> bool:
    from irkit.opdef import SymbolTable as _Trait, has_trait
    return has_trait(op, _Trait)


def nearest_symbol_table(op: Operation) -> Operation | None:
    cur = op.parent_op
    while cur is not None:
        if is_symbol_table(cur):
            return cur
        cur = cur.parent_op
    return None


class SymbolTable:
    """Name -> op for the symbols directly inside one symbol-table op."""

    def __init__(self, table_op: Operation) -> None:
        self.op = table_op
        self.symbols: dict[str, Operation] = {}
        for region in table_op.regions:
            for child in region.ops:
                name = symbol_name(child)
                if name is not None and name not in self.symbols:
                    self.symbols[name] = child

    def lookup(self, name: str) -> Operation | None:
        return self.symbols.get(name)

    def insert(self, op: Operation) -> None:
        name = symbol_name(op)
        if name in self.symbols:
            raise ValueError(f"redefinition of symbol '{name}'")
        self.symbols[name] = op
        self.op.regions[0].blocks[0].append(op)


def lookup_symbol_in(table_op: Operation, ref: SymbolRefAttr | str) -> Operation | None:
    if isinstance(ref, str):
        ref = SymbolRefAttr(ref)
    cur = table_op
    for name in ref.path:
        if cur is None or not cur.regions:
            return None
        found = None
        for region in cur.regions:
            for child in region.ops:
                if symbol_name(child) == name:
                    found = child
                    break
            if found is not None:
                break
        cur = found
    return cur


def lookup_symbol(from_op: Operation, ref: SymbolRefAttr | str) -> Operation | None:
    """Resolve `ref` from the symbol table nearest to `from_op`, walking outwards."""
    table = nearest_symbol_table(from_op)
    while table is not None:
        found = lookup_symbol_in(table, ref)
        if found is not None:
            return found
        table = nearest_symbol_table(table)
    return None


def symbol_uses(root: Operation):
    """Every (op, attribute name, SymbolRefAttr) under `root`, nested refs in arrays too."""
    for op in root.walk():
        for attrs in (op.properties, op.attributes):
            for key, a in attrs.items():
                for ref in _refs_in(a):
                    yield op, key, ref


def _refs_in(a):
    if isinstance(a, SymbolRefAttr):
        yield a
        return
    value = getattr(a, "value", None)
    if isinstance(value, tuple):
        for v in value:
            yield from _refs_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _refs_in(v)
