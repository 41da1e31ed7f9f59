"""`irkit-opt --describe OP`: everything the registry knows about one op, and where it lives.

An op's meaning is spread over one class and its bases (a folder inherited from `ArithOp`, a
parser from `BinaryOp`) and, for lowerings, over conversion passes. Reading the class alone
does not show which base a hook comes from; this report does, with `path:line` for each hook,
so the registry can be navigated instead of grepped:

    arith.addf  (dialect arith)
    class AddFOp  dialects/arith/floating.py:71
    ...
    hooks:
      fold                       dialects/arith/base.py:240  (inherited from ArithOp)
      verify_                    not defined

Algorithm:
1. Look the name up in the registry (all dialects loaded); an unknown name raises KeyError
   that suggests the closest registered names.
2. Print the declarations collected in `cls.spec`: traits, operands, results, properties with
   defaults, regions and successors.
3. For each hook, find the first class in the MRO whose own namespace defines it; the `Op`
   base's defaults (and anything above `Op`) count as "not defined".
4. List the lowering tables' entries keyed by this op's class, a base class, or its name.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import textwrap
from pathlib import Path
from typing import Iterable

from irkit.opdef import Op

#: Hooks in the order a reader meets them: typing, checking, simplifying, meaning, syntax, AD.
HOOKS = ("infer_result_types", "verify_", "fold", "canonicalization_patterns", "evaluate",
         "interpret", "parse", "print", "vjp", "transpose", "jvp", "nondiff_operands")

# The repository root: the parent of `tools/`, beside `irkit/`, `dialects/` and `passes/`.
_ROOT = Path(__file__).resolve().parent.parent

_WIDTH = 27


def describe(op_name: str, lowering_tables: Iterable[tuple[str, dict]] = ()) -> str:
    """A human-readable report on the registered op `op_name` (see the module docstring).

    `lowering_tables` holds `(pass name, table)` pairs, each table a conversion pass's
    `lowerings` dict keyed by op class or op name; `lowering_tables_of` builds them from
    pass classes. Raises KeyError, suggesting close names, when `op_name` is not registered.
    """
    cls = lookup(op_name)
    spec = cls.spec
    dialect = getattr(cls, "dialect", None)
    out = [f"{cls.name}  (dialect {dialect.name if dialect else cls.name.split('.')[0]})",
           f"class {cls.__name__}  {where(cls)}", ""]
    summary, example = _doc_parts(cls)
    out += [f"  {line}" for line in summary] or ["  (no docstring)"]
    if example:
        out += ["", "  example:"] + [f"    {line}".rstrip() for line in example]
    out.append("")
    out.append("traits: " + (", ".join(repr(t) for t in cls.traits) or "none"))
    out += _section("operands", [_value_field(f) for f in spec.operands])
    out += _section("results", [_value_field(f) for f in spec.results])
    out += _section("properties", [_prop_field(p) for p in spec.props])
    out += _section("regions", [_plain_field(r) for r in spec.regions])
    out += _section("successors", [_plain_field(s) for s in spec.successors])
    out.append("hooks:")
    for hook in HOOKS:
        out += [f"  {line}" for line in _hook_lines(cls, hook)]
    out += _lowering_lines(cls, lowering_tables)
    return "\n".join(out)


def lookup(op_name: str) -> type:
    """The op class registered as `op_name`; KeyError with close names when there is none."""
    from irkit.dialects import register_all
    from irkit.opdef import registered_ops
    register_all()
    ops = registered_ops()
    cls = ops.get(op_name)
    if cls is None:
        close = difflib.get_close_matches(op_name, sorted(ops), n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"unknown op '{op_name}'{hint}")
    return cls


def lowering_tables_of(pass_classes: Iterable[type]) -> list[tuple[str, dict]]:
    """`(name, lowerings)` for every pass class that declares a `lowerings` table."""
    tables = []
    for p in pass_classes:
        table = getattr(p, "lowerings", None)
        if table:
            tables.append((getattr(p, "name", "") or p.__name__, table))
    return tables


def where(obj: object) -> str:
    """`path:line` of a function's or class's definition, the path relative to the repository.

    Decorated functions are unwrapped, partials point at their function, and an instance
    points at its class; objects without Python source say so.
    """
    obj = _definition(obj)
    try:
        path = inspect.getsourcefile(obj)
        lines, line = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        return "(source not available)"
    if path is None:
        return "(source not available)"
    resolved = Path(path).resolve()
    try:
        path = str(resolved.relative_to(_ROOT))
    except ValueError:
        path = str(resolved)
    # Point at the `def` / `class` line rather than at the decorators above it.
    for i, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ", "class ")):
            line += i
            break
    # getsourcelines gives 0 for a module; a class or function starts at line 1 or later.
    return f"{path}:{max(line, 1)}"


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


def _doc_parts(cls: type) -> tuple[list[str], list[str]]:
    """The first paragraph of the class's own docstring, and its example: the first block
    indented deeper than the prose that uses the op (the rule `test_op_registry` checks).

    The prose indentation is that of the closing quotes' line, or of the least indented text
    line; `inspect.cleandoc` cannot be used because it ignores the closing line, which makes a
    docstring whose only indented text is its example look all flush.
    """
    doc = cls.__dict__.get("__doc__")
    if not doc:
        return [], []
    first, *lines = doc.splitlines()
    summary = [first.strip()] if first.strip() else []
    for line in lines:
        if not line.strip():
            if summary:
                break
            continue
        summary.append(line.strip())
    if not lines:
        return summary, []
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    base = len(lines[-1]) if not lines[-1].strip() else min(indents, default=0)
    short = cls.name.split(".", 1)[-1]
    blocks, block = [], []
    for line in lines + ["<end>"]:
        if (line.strip() and len(line) - len(line.lstrip()) > base) or (block and not line.strip()):
            block.append(line)
        elif block:
            blocks.append(textwrap.dedent("\n".join(block)).strip("\n").split("\n"))
            block = []
    for b in blocks:
        if any(cls.name in line or re.search(rf"\b{re.escape(short)}\b", line) for line in b):
            return summary, b
    return summary, blocks[0] if blocks else []


def _section(title: str, rows: list[str]) -> list[str]:
    if not rows:
        return [f"{title}: none"]
    return [f"{title}:"] + [f"  {row}" for row in rows]


def _describe_constraint(c: object) -> str:
    return getattr(c, "description", None) or repr(c)


def _value_field(f) -> str:
    """`name: constraint [variadic|optional]` for an operand or result."""
    kind = " [variadic]" if f.variadic else " [optional]" if f.optional else ""
    return f"{f.name}: {_describe_constraint(f.constraint)}{kind}"


def _prop_field(p) -> str:
    """`name: constraint` and whether it is required, optional, or defaulted (and to what)."""
    from irkit.opdef import MISSING
    if p.default is MISSING:
        extra = ""
    elif p.default is None:
        extra = " [optional]"
    else:
        extra = f" [default: {p.default}]"
    return f"{p.name}: {_describe_constraint(p.constraint)}{extra}"


def _plain_field(f) -> str:
    flags = []
    if f.variadic:
        flags.append("variadic")
    if getattr(f, "single_block", False):
        flags.append("single block")
    doc = f" - {f.doc}" if getattr(f, "doc", "") else ""
    return f"{f.name}{' [' + ', '.join(flags) + ']' if flags else ''}{doc}"


# ---------------------------------------------------------------------------------------------
# Hooks and lowerings
# ---------------------------------------------------------------------------------------------


def _defining_class(cls: type, attr: str) -> type | None:
    """The first class in the MRO whose own namespace holds `attr`, unless that is `Op` or a
    class above it: those hold the defaults every op gets, which define nothing."""
    for klass in cls.__mro__:
        if attr in vars(klass):
            return None if klass in Op.__mro__ else klass
    return None


def _hook_lines(cls: type, hook: str) -> list[str]:
    owner = _defining_class(cls, hook)
    label = hook.ljust(_WIDTH)
    if owner is None:
        return [f"{label}not defined"]
    inherited = f"  (inherited from {owner.__name__})" if owner is not cls else ""
    value = vars(owner)[hook]
    if hook == "canonicalization_patterns":
        patterns = tuple(value or ())
        if not patterns:
            return [f"{label}none  (set on {owner.__name__})"]
        head = f"{label}{len(patterns)} pattern(s) on {owner.__name__}  {where(owner)}"
        return [head] + [f"  {_name_of(p).ljust(_WIDTH - 2)}{where(p)}" for p in patterns]
    return [f"{label}{where(value)}{inherited}"]


def _lowering_lines(cls: type, tables: Iterable[tuple[str, dict]]) -> list[str]:
    """Entries keyed by the op's name, its class, or a base class of it (noted as `via`)."""
    rows = []
    for pass_name, table in tables:
        for key, fn in table.items():
            if key == cls.name or key is cls:
                via = ""
            elif isinstance(key, type) and issubclass(cls, key) and key not in Op.__mro__:
                via = f"  (via {key.__name__})"
            else:
                continue
            rows.append(f"  {pass_name.ljust(_WIDTH - 2)}{_name_of(fn)}  {where(fn)}{via}")
    if not rows:
        return ["lowerings: none registered"]
    return ["lowerings:"] + rows


def _definition(obj: object) -> object:
    """The function or class whose source defines `obj`."""
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    elif isinstance(obj, property):
        obj = obj.fget
    while isinstance(obj, functools.partial):
        obj = obj.func
    obj = getattr(obj, "__func__", obj)             # bound methods
    obj = inspect.unwrap(obj) if callable(obj) else obj
    if not (inspect.isroutine(obj) or inspect.isclass(obj) or inspect.ismodule(obj)):
        obj = type(obj)
    return obj


def _name_of(obj: object) -> str:
    obj = _definition(obj)
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
