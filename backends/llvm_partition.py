"""A translated module split into partitions that LLVM optimizes and compiles side by side.

LLVM's optimizer and code generator are most of a model's compile time and run on one core;
a module's functions are independent of one another once translated (every loop nest of a
model is its own outlined `__irkit_parallel_<n>` function), so the functions are split into
one partition per core, each compiled to its own object file on its own thread
(`llvm_cpu.compile_object`), and the objects are loaded together (MCJIT) or linked together
(`cc -shared`).

Algorithm:

1. Print each function of the translated module (`llvmlite.ir`) on its own: the definitions,
   and every other top-level line (types, declarations, global variables, metadata).
2. Internal functions whose text is the same but for their name are one: the others' uses
   are renamed to the first, and they are dropped (a model's @forward and @train_step outline
   the same loops: 9 of the MLP's 37 functions, 11 of the CNN's 80). What LLVM's mergefunc
   pass did on the whole module, before the split.
3. Deal the functions to `parts` partitions by their size in lines (LPT: the largest first,
   each to the lightest partition so far): a function's optimization and code generation
   time grows with its size, 90-220 us a line at -O2. The `cold` functions (host code that
   `llvm_cpu` optimizes less) are dealt to partitions of their own, since a partition is
   optimized at one level: up to `parts` of each kind, as many threads as partitions.
4. Each partition's text: the shared lines, its own functions, and a declaration of each
   function another partition defines. Internal functions become hidden (one object calls
   another's: the outlined loop is in one partition, its caller in another), which a shared
   library still does not export; a global variable that is not an internal constant is
   defined in the first partition and declared `external` in the others (the thread count
   that `llvm_parallel` reads is one variable), an internal constant is copied into each.

A module too small to be worth a thread (`MIN_SPLIT_LINES`), or split into a single part,
is one partition, step 2 done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import llvmlite.ir as ir

#: a module of fewer lines is compiled whole: a partition's thread, context, target machine
#: and shared lines cost a few ms, which only a module this size repays
MIN_SPLIT_LINES = 2000


@dataclass
class Partition:
    """One part of a module: its LLVM IR `text`, the `functions` it defines, its size in
    `lines` (the sum of theirs), and whether they are all `cold` (`split_module`)."""

    text: str
    functions: list[str] = field(default_factory=list)
    lines: int = 0
    cold: bool = False


@dataclass
class _Item:
    """One top-level entity of the module as printed: `text`, its definition; `elsewhere`,
    what a partition that does not own it holds instead (None: the same text, copied). A
    function definition has its `name`, its `define` line (`head`), its size in `lines` and
    whether it is `internal`."""

    text: str
    elsewhere: str | None = None
    name: str | None = None
    head: str = ""
    lines: int = 0
    internal: bool = False


def split_module(irmod: ir.Module, parts: int,
                 cold: frozenset[str] = frozenset()) -> list[Partition]:
    """`irmod` split into at most `parts` partitions of the functions named in `cold` and
    at most `parts` of the others (the module docstring): one when it is small
    (`MIN_SPLIT_LINES`), its text as `str(irmod)` prints it but for step 2."""
    items = _merge_identical(_printed(irmod))
    functions = [item for item in items if item.name is not None]
    total = sum(f.lines for f in functions)
    if parts <= 1 or total < MIN_SPLIT_LINES or len(functions) < 2:
        return [Partition("\n".join(item.text for item in items),
                          [f.name for f in functions], total)]
    bins: list[list[_Item]] = []
    sizes: list[int] = []
    kinds: list[bool] = []
    for kind in (False, True):
        group = [f for f in functions if (f.name in cold) == kind]
        first = len(bins)
        bins += [[] for _ in range(min(parts, len(group)))]
        sizes += [0] * (len(bins) - first)
        kinds += [kind] * (len(bins) - first)
        for f in sorted(group, key=lambda f: -f.lines):
            k = first + sizes[first:].index(min(sizes[first:]))
            bins[k].append(f)
            sizes[k] += f.lines
    for f in functions:
        f.elsewhere = "declare" + _hidden_head(f)[len("define"):]
        f.text = _hidden_head(f) + f.text[len(f.head):] if f.internal else f.text
    out = []
    for k, mine in enumerate(bins):
        owned = {id(f) for f in mine}
        if k == 0:                  # the global variables are defined in the first one
            owned.update(id(item) for item in items if item.name is None)
        text = "\n".join(item.text if id(item) in owned or item.elsewhere is None
                         else item.elsewhere for item in items)
        out.append(Partition(text, [f.name for f in mine], sizes[k], kinds[k]))
    return out


def _printed(irmod: ir.Module) -> list[_Item]:
    """The module's top-level entities in the order `str(irmod)` prints them (its header,
    types, global values, metadata), each with what stands for it in another partition."""
    items = [_Item(line) for line in (f'; ModuleID = "{irmod.name}"',
                                      f'target triple = "{irmod.triple}"',
                                      f'target datalayout = "{irmod.data_layout}"', "")]
    items += [_Item(t.get_declaration()) for t in irmod.get_identified_types().values()]
    for v in irmod.globals.values():
        text = str(v)
        if isinstance(v, ir.Function) and not v.is_declaration:
            items.append(_Item(text, name=v.name, head=text[:text.index("\n")],
                               lines=text.count("\n"),
                               internal=v.linkage in ("internal", "private")))
        elif isinstance(v, ir.GlobalVariable) and not (v.global_constant and
                                                       v.linkage in ("internal", "private")):
            local = v.linkage in ("internal", "private")
            if local:                # one variable for every partition: hidden, not internal
                text = text.replace(f" = {v.linkage} ", " = hidden ", 1)
            visibility = "hidden " if v.linkage == "hidden" or local else ""
            kind = "constant" if v.global_constant else "global"
            items.append(_Item(text, f"{v.get_reference()} = external {visibility}{kind} "
                                     f"{v.value_type}"))
        else:                       # declarations, internal constants: copied
            items.append(_Item(text))
    items += [_Item(line) for line in irmod._get_metadata_lines()]  # noqa: SLF001 (no other way)
    return items


def _merge_identical(items: list[_Item]) -> list[_Item]:
    """`items` without the internal functions identical to an earlier one but for the name,
    their uses renamed to that one (step 2)."""
    first: dict[str, str] = {}
    renamed: dict[str, str] = {}
    kept = []
    for f in items:
        if f.internal:
            ref = f'@"{f.name}"'
            key = f.head.replace(ref, "@", 1) + f.text[len(f.head):]
            if key in first:
                renamed[ref] = f'@"{first[key]}"'
                continue
            first[key] = f.name
        kept.append(f)
    if not renamed:
        return kept
    uses = re.compile("|".join(re.escape(r) for r in renamed))
    for f in kept:
        if f.name is not None:
            f.text = uses.sub(lambda m: renamed[m.group(0)], f.text)
            f.head = f.text[:f.text.index("\n")]
    return kept


def _hidden_head(f: _Item) -> str:
    """`f`'s `define` line, hidden instead of internal: another partition's object calls it."""
    return re.sub(r"^define (internal|private) ", "define hidden ", f.head)
