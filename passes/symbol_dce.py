"""symbol-dce: erase private symbols that nothing references."""

from __future__ import annotations

from irkit.ir import Operation
from irkit.pass_manager import Pass, register_pass
from irkit.symbols import is_symbol_table, symbol_name, symbol_uses


def _is_private(op: Operation) -> bool:
    vis = op.get_attr("sym_visibility")
    return vis is not None and getattr(vis, "value", None) in ("private", "nested")


@register_pass
class SymbolDCE(Pass):
    """Symbol dead code elimination (MLIR's symbol-dce).

    Algorithm:
      1. In every symbol table under the op, public symbols are live; private (and nested)
         ones are live only if referenced.
      2. Propagate from live ops: every symbol reference (`@f`, `@a::@b`, inside arrays and
         dictionaries too) in a live op or anything nested in it marks the symbol it names
         in the nearest enclosing table, looking outwards, as live; repeat until no new
         symbol becomes live.
      3. Erase the private symbols that stayed dead. A symbol table op that is itself dead
         goes with everything in it.
    """

    name = "symbol-dce"

    def run(self, op: Operation) -> None:
        tables = [t for t in op.walk(post_order=False) if is_symbol_table(t)]
        # name -> symbol op, per table
        symbols: dict[Operation, dict[str, Operation]] = {}
        for t in tables:
            symbols[t] = {}
            for region in t.regions:
                for child in region.ops:
                    n = symbol_name(child)
                    if n is not None:
                        symbols[t][n] = child
        live: set[Operation] = set()
        work: list[Operation] = []
        for t in tables:
            for s in symbols[t].values():
                if not _is_private(s):
                    live.add(s)
                    work.append(s)
        # Ops outside any symbol (e.g. the module body's non-symbol ops) are roots too.
        for t in tables:
            for region in t.regions:
                for child in region.ops:
                    if symbol_name(child) is None and child not in live:
                        live.add(child)
                        work.append(child)
        while work:
            s = work.pop()
            for user, _, ref in symbol_uses(s):
                for target in self._resolve(user, ref, symbols):
                    if target not in live:
                        live.add(target)
                        work.append(target)
        for t in reversed(tables):
            if t.parent is None and t is not op:
                continue
            for s in list(symbols[t].values()):
                if s not in live and _is_private(s) and s.parent is not None:
                    s.drop_all_references()
                    s.detach()

    @staticmethod
    def _resolve(user: Operation, ref, symbols) -> list[Operation]:
        """The ops along `ref`'s path (`@a::@b` -> [a, b]), searched from the table nearest
        `user` outwards; empty when it names nothing."""
        table = user.parent_op
        while table is not None:
            names = symbols.get(table)
            if names is not None and ref.root in names:
                path = [names[ref.root]]
                for nested in ref.nested:
                    target = symbols.get(path[-1], {}).get(nested)
                    if target is None:
                        break
                    path.append(target)
                return path
            table = table.parent_op
        return []
