"""A translated module split into partitions that LLVM optimizes and compiles side by side.

LLVM's optimizer and code generator are most of a model's compile time and run on one core;
a module's functions are independent of one another once translated (every loop nest of a
model is its own outlined `__irkit_parallel_<n>` function), so the functions are split into
one partition per core, each compiled to its own object file on its own thread
(`llvm_cpu.compile_object`), and the objects are loaded together (MCJIT) or linked together
(`cc -shared`).

Algorithm:

1. Print each function of the translated module (`llvmlite.ir`) on its own: the definitions
   (`function_text`: what `str()` prints, faster), and every other top-level line (types,
   declarations, global variables, metadata).
2. Internal functions whose text is the same but for their name are one: the others' uses
   are renamed to the first, and they are dropped (a model's @forward and @train_step outline
   the same loops: 9 of the MLP's 37 functions, 11 of the CNN's 80). What LLVM's mergefunc
   pass did on the whole module, before the split.
3. Deal the functions to `parts` partitions by their size in lines (LPT: the largest first,
   each to the lightest partition so far): a function's optimization and code generation
   time grows with its size, 90-220 us a line at -O2, but for the `free` ones (the Python
   entries, `optnone`), which weigh nothing: the MLP's step took 130 and 300 ms in its two
   partitions when they weighed their lines. The `cold` functions (host code that
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
from llvmlite.ir import instructions as _instr
from llvmlite.ir._utils import _StringReferenceCaching

from irkit.ir import gc_paused

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


def split_module(irmod: ir.Module, parts: int, cold: frozenset[str] = frozenset(),
                 free: frozenset[str] = frozenset()) -> list[Partition]:
    """`irmod` split into at most `parts` partitions of the functions named in `cold` and
    at most `parts` of the others (the module docstring): one when it is small
    (`MIN_SPLIT_LINES`), its text as `str(irmod)` prints it but for step 2. The functions
    named in `free` are left unoptimized (`optnone`): they weigh nothing in step 3. The cycle
    collector is paused meanwhile, as for the translation (`ModuleLowering.translate`)."""
    with gc_paused():
        return _split(irmod, parts, cold, free)


def _split(irmod: ir.Module, parts: int, cold: frozenset[str],
           free: frozenset[str]) -> list[Partition]:
    items = _merge_identical(_printed(irmod))
    functions = [item for item in items if item.name is not None]
    for f in functions:
        if f.name in free:
            f.lines = 0
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
        text = _function_text(v) if isinstance(v, ir.Function) and v.blocks else str(v)
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


# ---------------------------------------------------------------------------------------------
# Printing: a function's text as llvmlite prints it
# ---------------------------------------------------------------------------------------------
#
# `str(function)` formats each instruction through llvmlite's generic machinery: a
# `str.format` per instruction whose fields call `__str__` / `get_reference` on every operand
# and type, each of which raises and catches an AttributeError the first time (its cache
# is empty), then joins and strips a buffer. That was 40-50% of the Python time of a model's
# translation, the collector aside (issue 14). `function_text` prints the same text in half
# the time: one f-string per common instruction class (`_FORMATS`, each a copy of that
# class's `descr` in llvmlite), types and references looked up once; any other instruction
# (or one with metadata) is printed by llvmlite itself. tests/unit/test_llvm_partition.py
# checks the two agree on every class and option the table handles.

#: llvmlite's caches of a value's text and reference (`_StrCaching`,
#: `_StringReferenceCaching`): a cached text is printed as it is, as llvmlite does
_CACHED_STR = "_StrCaching__cached_str"
_CACHED_REF = "_StringReferenceCaching__cached_refstr"
_CACHING_REFERENCE = _StringReferenceCaching.get_reference


#: whether `function_text` prints as the llvmlite installed does (None: not checked yet). It
#: copies llvmlite's formatting (tested on 0.50), so the first function a process prints is
#: printed both ways: another llvmlite that prints differently gets its own printing
_same_as_llvmlite: bool | None = None


def _function_text(fn: ir.Function) -> str:
    """`function_text(fn)` where it prints as llvmlite does, else `str(fn)`."""
    global _same_as_llvmlite
    if _same_as_llvmlite is None:
        fast = function_text(fn)
        text = str(fn)
        _same_as_llvmlite = fast == text
        return text
    return function_text(fn) if _same_as_llvmlite else str(fn)


def function_text(fn: ir.Function) -> str:
    """`str(fn)` of a function definition, computed faster (see above)."""
    types: dict[int, str] = {}

    def ty(t: ir.Type) -> str:          # str(t), once per type object
        s = types.get(id(t))
        if s is None:
            s = types[id(t)] = str(t)
        return s

    def ref(v: ir.Value) -> str:        # v.get_reference(), without its first exception
        d = v.__dict__
        r = d.get(_CACHED_REF)
        if r is None:
            if type(v).get_reference is _CACHING_REFERENCE:
                r = d[_CACHED_REF] = v._get_reference()   # noqa: SLF001 (what it caches)
            else:
                r = v.get_reference()
        return r

    buf: list[str] = []
    fn.descr_prototype(buf)
    buf.append("{\n")
    for block in fn.blocks:
        buf.append(f"{block._format_name()}:\n")          # noqa: SLF001 (its label)
        for inst in block.instructions:
            text = inst.__dict__.get(_CACHED_STR)
            if text is None:
                fmt = None if inst.metadata else _FORMATS.get(type(inst))
                body = None if fmt is None else fmt(inst, ty, ref)
                if body is None:
                    text = str(inst)
                elif isinstance(inst.type, ir.VoidType):
                    text = body.rstrip()
                else:
                    text = f"{ref(inst)} = {body}".rstrip()
            buf.append(f"  {text}\n")
    buf.append("}\n")
    return "".join(buf)


def _typed(values, ty, ref) -> str:
    return ", ".join([f"{ty(v.type)} {ref(v)}" for v in values])


def _align(inst) -> str:
    return "" if inst.align is None else ", align %d" % inst.align


def _plain(i, ty, ref) -> str:          # Instruction: binary ops, fneg
    name = " ".join([i.opname] + i.flags) if i.flags else i.opname
    return f"{name} {ty(i.type)} {', '.join([ref(v) for v in i.operands])}"


def _compare(i, ty, ref) -> str:        # ICMPInstr, FCMPInstr
    a, b = i.operands
    return f"{i.opname}{''.join([' ' + f for f in i.flags])} {i.op} {ty(a.type)} {ref(a)}, " \
           f"{ref(b)}"


def _select(i, ty, ref) -> str:
    return f"select {' '.join(i.flags)} {_typed((i.cond, i.lhs, i.rhs), ty, ref)}"


def _phi(i, ty, ref) -> str:
    incoming = ", ".join([f"[{ref(v)}, {ref(b)}]" for v, b in i.incomings])
    return f"phi {' '.join(i.flags)} {ty(i.type)} {incoming}"


def _load(i, ty, ref) -> str:
    p, = i.operands
    return f"load {ty(i.type)}, {ty(p.type)} {ref(p)}{_align(i)}"


def _store(i, ty, ref) -> str:
    v, p = i.operands
    return f"store {ty(v.type)} {ref(v)}, {ty(p.type)} {ref(p)}{_align(i)}"


def _gep(i, ty, ref) -> str:
    op = "getelementptr inbounds" if i.inbounds else "getelementptr"
    p = i.pointer
    return f"{op} {ty(i.source_etype)}, {ty(p.type)} {ref(p)}, {_typed(i.indices, ty, ref)}"


def _cast(i, ty, ref) -> str:
    v, = i.operands
    return f"{i.opname} {ty(v.type)} {ref(v)} to {ty(i.type)}"


def _extract_value(i, ty, ref) -> str:
    a = i.aggregate
    return f"extractvalue {ty(a.type)} {ref(a)}, {', '.join([str(k) for k in i.indices])}"


def _insert_value(i, ty, ref) -> str:
    a, v = i.aggregate, i.value
    return f"insertvalue {ty(a.type)} {ref(a)}, {ty(v.type)} {ref(v)}, " \
           f"{', '.join([str(k) for k in i.indices])}"


def _alloca(i, ty, ref) -> str:
    count = f", {_typed(i.operands, ty, ref)}" if i.operands else ""
    align = "" if i.align is None else f", align {i.align}"
    return f"{i.opname} {ty(i.allocated_type)}{count}{align}"


def _operands(i, ty, ref) -> str:       # terminators, vector element ops
    return f"{i.opname} {_typed(i.operands, ty, ref)}"


def _ret(i, ty, ref) -> str:
    return f"{i.opname} {_typed(i.operands, ty, ref)}" if i.operands else i.opname


def _call(i, ty, ref) -> str | None:
    if i.arg_attributes:
        return None
    callee = i.callee
    fnty = callee.function_type
    rt = fnty.return_type
    head = f"{ty(fnty if fnty.var_arg else rt)} {ref(callee)}"
    if i.cconv:
        head = f"{i.cconv} {head}"
    tail = f"{i.tail} " if i.tail else ""
    fastmath = " " + " ".join(i.fastmath._to_list(rt)) if i.fastmath else ""  # noqa: SLF001
    attrs = " " + " ".join(i.attributes._to_list(rt)) if i.attributes else ""  # noqa: SLF001
    return f"{tail}{i.opname}{fastmath} {head}({_typed(i.args, ty, ref)}){attrs}"


#: instruction class (exactly) -> its text without the result's name (llvmlite's `descr`,
#: trailing blanks aside); None from one: llvmlite prints it
_FORMATS = {
    _instr.Instruction: _plain, _instr.ICMPInstr: _compare, _instr.FCMPInstr: _compare,
    _instr.SelectInstr: _select, _instr.PhiInstr: _phi, _instr.LoadInstr: _load,
    _instr.StoreInstr: _store, _instr.GEPInstr: _gep, _instr.CastInstr: _cast,
    _instr.ExtractValue: _extract_value, _instr.InsertValue: _insert_value,
    _instr.AllocaInstr: _alloca, _instr.Branch: _operands, _instr.ConditionalBranch: _operands,
    _instr.ShuffleVector: _operands, _instr.InsertElement: _operands,
    _instr.ExtractElement: _operands, _instr.Ret: _ret, _instr.CallInstr: _call,
}
