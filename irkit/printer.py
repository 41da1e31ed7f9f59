"""The IR printer: generic form and registered ops' custom forms, MLIR's numbering.

Value and block names follow MLIR's `SSANameState`: entry-block arguments are `%argN`, op
results and other block arguments `%N`, and blocks `^bbN` per region. A nested region
continues the numbering where its parent region ended, and sibling regions start from the
same numbers, so the functions of a module all start at `%arg0` and `%0`. Isolation from
above does not restart it: a `func.func` inside a module nested in a function goes on from
the outer function's numbers (`%arg1`), because the reader would otherwise see a name
defined twice on its way down. Names are assigned in one pre-pass over the printed op, so
printing is a single walk that appends strings to a list.

Op names drop the prefix of the region's default dialect, as MLIR's printer does: each region
takes the default dialect of the op that holds it (`func` in a `func.func`, `builtin` in a
`builtin.module`, none in others), and the top level is `builtin`'s.
"""

from __future__ import annotations

from irkit.attributes import (
    UNKNOWN_LOC, Attribute, DenseResourceAttr, DictionaryAttr, Location, format_attr_entry,
)
from irkit.ir import Block, Operation, Region, Value, install_printer
from irkit.opdef import Terminator, has_trait
from irkit.types import FunctionType, Type


class Printer:
    """Prints ops to text. Custom `print` methods of ops call the public helpers."""

    def __init__(self, *, generic: bool = False, debuginfo: bool = False,
                 print_pred_comments: bool = True) -> None:
        self.generic = generic
        self.debuginfo = debuginfo
        self.pred_comments = print_pred_comments
        self.out: list[str] = []
        self.names: dict = {}
        self.indent = 0
        self.resources: dict = {}
        self.default_dialects: list[str | None] = ["builtin"]

    # ----- naming -----------------------------------------------------------------------

    def _number(self, root: Operation) -> None:
        """Assign names to every value and block under `root` (see module docstring)."""
        names = self.names
        stack = [(r, 0, 0) for r in root.regions]
        while stack:
            region, nv, na = stack.pop()
            for bi, block in enumerate(region.blocks):
                names[block] = f"^bb{bi}"
                if bi == 0:
                    for a in block.args:
                        names[a] = f"%arg{na}"
                        na += 1
                else:
                    for a in block.args:
                        names[a] = f"%{nv}"
                        nv += 1
                op = block.first
                while op is not None:
                    res = op.results
                    if res:
                        if len(res) == 1:
                            names[res[0]] = f"%{nv}"
                        else:
                            for r in res:
                                names[r] = f"%{nv}#{r.index}"
                            names[op] = f"%{nv}:{len(res)}"
                        nv += 1
                    op = op._next
            for block in region.blocks:
                op = block.first
                while op is not None:
                    for r in op.regions:
                        stack.append((r, nv, na))
                    op = op._next

    def value(self, v: Value) -> str:
        name = self.names.get(v)
        return name if name is not None else "<<UNKNOWN SSA VALUE>>"

    # ----- output helpers for custom printers ----------------------------------------------

    def write(self, s: str) -> None:
        self.out.append(s)

    def operand(self, v: Value) -> None:
        self.out.append(self.value(v))

    def operands(self, values) -> None:
        self.out.append(", ".join([self.value(v) for v in values]))

    def operands_with_types(self, values) -> None:
        """` %a, %b : f32, i64` (nothing for no values): the operand list of return-like ops."""
        if values:
            self.out.append(f" {', '.join([self.value(v) for v in values])} : "
                            f"{', '.join(str(v.type) for v in values)}")

    def type(self, t: Type) -> None:
        self.out.append(str(t))

    def types(self, types) -> None:
        self.out.append(", ".join(map(str, types)))

    def attr(self, a: Attribute) -> None:
        self._note_resources(a)
        self.out.append(a.format())

    def attr_dict(self, op: Operation, elided=(), keyword: bool = False) -> None:
        """Print ` {..}` with the op's properties and attributes not shown elsewhere."""
        entries = {k: v for k, v in op.properties.items() if k not in elided}
        for k, v in op.attributes.items():
            if k not in elided:
                entries[k] = v
        if entries:
            # Resources are noted in printed order, so the resource section's order does not
            # depend on how the op's dicts were filled (or on the form printed).
            for k in sorted(entries):
                self._note_resources(entries[k])
            body = ", ".join(format_attr_entry(k, v) for k, v in sorted(entries.items()))
            self.out.append(f" attributes {{{body}}}" if keyword else f" {{{body}}}")

    def successor(self, block: Block) -> None:
        self.out.append(self.names.get(block, "^<<UNKNOWN BLOCK>>"))

    def successor_with_args(self, block: Block, args) -> None:
        self.successor(block)
        if args:
            self.out.append(f"({', '.join(self.value(a) for a in args)} : "
                            f"{', '.join(str(a.type) for a in args)})")

    def region(self, region: Region, print_entry_args: bool = True,
               print_empty_block: bool = False, print_block_terminators: bool = True) -> None:
        """Print `{ ... }`. Without `print_block_terminators`, a block's last op is left out
        when it is a terminator without operands, results or attributes (MLIR's implicit
        `scf.yield`, which the op's custom parser puts back)."""
        out = self.out
        out.append("{\n")
        self.indent += 1
        self.default_dialects.append(getattr(region.parent, "default_dialect", None))
        blocks = region.blocks
        preds = _predecessors(region) if len(blocks) > 1 else None
        for i, block in enumerate(blocks):
            if i == 0:
                show = (print_entry_args and block.args) or (
                    print_empty_block and block.first is None)
                if show:
                    self._block_header(block, preds)
            else:
                self._block_header(block, preds)
            op = block.first
            skip = None if print_block_terminators else _elidable_terminator(block)
            while op is not None and op is not skip:
                self._op(op)
                op = op._next
        self.default_dialects.pop()
        self.indent -= 1
        out.append("  " * self.indent + "}")

    def _block_header(self, block: Block, preds) -> None:
        out = self.out
        out.append("  " * (self.indent - 1))
        out.append(self.names.get(block, "^<<UNKNOWN BLOCK>>"))
        if block.args:
            parts = []
            for a in block.args:
                text = f"{self.value(a)}: {a.type}"
                if self.debuginfo:
                    text += f" {(a.location or UNKNOWN_LOC).format()}"
                parts.append(text)
            out.append(f"({', '.join(parts)})")
        out.append(":")
        if self.pred_comments and preds is not None:
            ps = preds.get(block)
            if ps:
                names = ", ".join(self.names.get(p, "?") for p in ps)
                count = f"{len(ps)} preds" if len(ps) > 1 else "pred"  # MLIR's wording
                out.append(f"  // {count}: {names}")
        out.append("\n")

    # ----- ops --------------------------------------------------------------------------

    def _op(self, op: Operation) -> None:
        out = self.out
        out.append("  " * self.indent)
        res = op.results
        if res:
            names = self.names
            if len(res) == 1:
                out.append(names.get(res[0], "<<UNKNOWN SSA VALUE>>"))
            else:
                out.append(names.get(op, "<<UNKNOWN SSA VALUE>>"))
            out.append(" = ")
        printer = None if self.generic else getattr(op, "print", None)
        if printer is not None:
            name = op.name
            dd = self.default_dialects[-1]
            if dd is not None and name.startswith(dd + ".") and name.count(".") == 1:
                name = name[len(dd) + 1:]
            out.append(name)
            printer(self)
        else:
            self._generic_body(op)
        if self.debuginfo:
            out.append(" ")
            out.append(op.location.format())
        out.append("\n")

    def _generic_body(self, op: Operation) -> None:
        out = self.out
        names = self.names
        out.append(f'"{op.name}"(')
        if op._operands:
            out.append(", ".join([names.get(o.value, "<<UNKNOWN SSA VALUE>>")
                                  for o in op._operands]))
        out.append(")")
        if op.successors:
            out.append("[" + ", ".join(names.get(b, "^<<UNKNOWN BLOCK>>")
                                       for b in op.successors) + "]")
        if op.properties:
            out.append(" <" + self._dict(op.properties) + ">")
        if op.regions:
            out.append(" (")
            for i, r in enumerate(op.regions):
                if i:
                    out.append(", ")
                self.region(r, print_empty_block=True)
            out.append(")")
        if op.attributes:
            out.append(" " + self._dict(op.attributes))
        out.append(" : ")
        out.append(str(FunctionType([o.value.type for o in op._operands],
                                    [r.type for r in op.results])))

    def _dict(self, d: dict) -> str:
        for k in sorted(d):
            self._note_resources(d[k])
        return "{" + ", ".join([format_attr_entry(k, d[k]) for k in sorted(d)]) + "}"

    def _note_resources(self, a) -> None:
        if isinstance(a, DenseResourceAttr):
            self.resources[a.handle.name] = a.handle
        elif isinstance(a, DictionaryAttr):
            for v in a.value.values():
                self._note_resources(v)
        elif hasattr(a, "value") and isinstance(getattr(a, "value"), tuple):
            for v in a.value:
                if isinstance(v, Attribute):
                    self._note_resources(v)

    # ----- entry ------------------------------------------------------------------------

    def print_top(self, op: Operation) -> str:
        self._number(op)
        self._op(op)
        if self.resources:
            self._print_resources()
        return "".join(self.out)

    def _print_resources(self) -> None:
        by_dialect: dict = {}
        for h in self.resources.values():
            if h.blob is not None:
                by_dialect.setdefault(h.dialect, []).append(h)
        if not by_dialect:
            return
        out = self.out
        out.append("\n{-#\n  dialect_resources: {\n")
        for di, (dialect, handles) in enumerate(by_dialect.items()):
            out.append(f"    {dialect}: {{\n")
            for hi, h in enumerate(handles):
                sep = "," if hi + 1 < len(handles) else ""
                out.append(f'      {h.name}: "{h.blob}"{sep}\n')
            out.append("    }" + ("," if di + 1 < len(by_dialect) else "") + "\n")
        out.append("  }\n#-}\n")


def _elidable_terminator(block: Block) -> Operation | None:
    """The block's last op if the text may leave it implicit: a registered terminator with
    no operands, results, attributes, regions or successors (nothing a parser could lose)."""
    op = block.last
    if op is None or not has_trait(op, Terminator):
        return None
    if op._operands or op.results or op.properties or op.attributes or op.regions or \
            op.successors:
        return None
    return op


def _predecessors(region: Region) -> dict:
    preds: dict = {}
    for b in region.blocks:
        t = b.last
        if t is not None:
            for s in t.successors:
                lst = preds.setdefault(s, [])
                if b not in lst:
                    lst.append(b)
    return preds


def print_op(op: Operation, *, generic: bool = False, debuginfo: bool = False) -> str:
    """Text of `op` (and everything nested in it), ending with a newline."""
    return Printer(generic=generic, debuginfo=debuginfo).print_top(op)


def print_location(loc: Location) -> str:
    return loc.format()


install_printer(print_op)     # `str(op)`
