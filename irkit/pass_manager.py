"""Passes and the pass manager: op-anchored nested pipelines, as MLIR's.

A pass is a small class whose dataclass fields are its options:

    @register_pass
    class Canonicalize(Pass):
        '''Fold ops and apply every registered op's canonicalization patterns.
        Algorithm: ...'''
        name = "canonicalize"
        max_iterations: int = 10          # -> canonicalize{max-iterations=3}
        region_simplify: bool = True

        def run(self, op: Operation) -> None: ...

`Pass` subclasses are made dataclasses automatically. `anchor` names the op a pass runs on
(None: any op). A pass reports failure by raising `IRError` with a location.

Pipelines are written as MLIR writes them,
`builtin.module(func.func(canonicalize{max-iterations=3},cse))`, or in the flat form
`canonicalize,cse`, which runs on the root op and nests a pass anchored on another op under
that op's name automatically. A nested pipeline `func.func(...)` runs on every `func.func`
immediately inside the op of the enclosing pipeline, the whole nested pipeline per op.

After every pass the op it ran on is verified (unless disabled). Instrumentations observe
each pass run: printing the IR before/after, timing, numeric checking.
"""

from __future__ import annotations

import dataclasses
import importlib
import time
import typing
from typing import Callable, ClassVar, Iterable

from irkit.diagnostics import IRError
from irkit.ir import Operation, gc_paused


class PassPipelineError(ValueError):
    """A malformed pipeline string or an unknown pass or option."""


# ---------------------------------------------------------------------------------------------
# Passes
# ---------------------------------------------------------------------------------------------


class Pass:
    """Base of passes: `name` (kebab-case, the file name), options as annotated fields."""

    name: ClassVar[str] = ""
    #: the op this pass runs on; None for op-agnostic passes
    anchor: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(cls)

    def run(self, op: Operation) -> None:
        raise NotImplementedError

    # ----- description ------------------------------------------------------------------

    @classmethod
    def summary(cls) -> str:
        """The docstring's first paragraph on one line (its indentation collapsed)."""
        doc = (cls.__doc__ or "").strip()
        return " ".join(doc.split("\n\n")[0].split()) if doc else ""

    @classmethod
    def option_fields(cls) -> list[tuple[str, dataclasses.Field, type]]:
        """(kebab-case name, field, type) for each option."""
        hints = typing.get_type_hints(cls)
        return [(f.name.replace("_", "-"), f, hints[f.name]) for f in dataclasses.fields(cls)]

    @classmethod
    def from_options(cls, options: dict[str, str]) -> "Pass":
        fields = {k: (f, t) for k, f, t in cls.option_fields()}
        values = {}
        for key, text in options.items():
            if key not in fields:
                known = ", ".join(fields) or "none"
                raise PassPipelineError(f"'{cls.name}' has no option '{key}' (options: {known})")
            f, t = fields[key]
            values[f.name] = _parse_option(cls.name, key, text, t)
        return cls(**values)

    def pipeline_text(self) -> str:
        """This pass with all its options, as the pipeline syntax writes it."""
        opts = [f"{k}={_format_option(getattr(self, f.name))}"
                for k, f, _ in self.option_fields()]
        return f"{self.name}{{{' '.join(opts)}}}" if opts else self.name

    @property
    def display_name(self) -> str:
        return f"{type(self).__name__} ({self.name})"


def _parse_option(pass_name: str, key: str, text: str, t) -> object:
    origin = typing.get_origin(t)
    try:
        if t is bool:
            low = text.lower()
            if low in ("true", "1", ""):
                return True
            if low in ("false", "0"):
                return False
            raise ValueError(text)
        if t in (int, float, str):
            return t(text)
        if origin in (list, tuple):
            (elt,) = typing.get_args(t)[:1]
            items = [s.strip() for s in text.strip("{}").split(",") if s.strip()]
            return origin(_parse_option(pass_name, key, s, elt) for s in items)
    except ValueError:
        raise PassPipelineError(f"'{pass_name}' option '{key}': cannot read '{text}' as "
                                f"{getattr(t, '__name__', t)}") from None
    raise PassPipelineError(f"'{pass_name}' option '{key}' has unsupported type {t}")


def _format_option(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_format_option(x) for x in v)
    return str(v)


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------

# Passes are known by name once registered: a pass class by `register_pass` (its module was
# imported), or a module by `register_lazy_pass`, imported the first time a pipeline names
# the pass. The pass manager registers none itself: `irkit.passes.register_all()` makes
# every pass of irkit known, and the tools, the pipeline table and the test suite call it.
_PASSES: dict[str, type] = {}
_LAZY_PASSES: dict[str, str] = {}


def register_pass(cls: type) -> type:
    """Class decorator: make a pass available by name to pipelines and `irkit-opt`."""
    if not cls.name:
        raise ValueError(f"pass class {cls.__name__} has no name")
    _PASSES[cls.name] = cls
    _LAZY_PASSES.pop(cls.name, None)
    return cls


def register_lazy_pass(name: str, module: str) -> None:
    """Know a pass by name; its module is imported on first lookup."""
    if name not in _PASSES:
        _LAZY_PASSES[name] = module


def lookup_pass(name: str) -> type | None:
    cls = _PASSES.get(name)
    if cls is None and name in _LAZY_PASSES:
        importlib.import_module(_LAZY_PASSES.pop(name))
        cls = _PASSES.get(name)
    return cls


def registered_passes() -> dict[str, type]:
    """Every known pass, by name (lazily known ones are imported)."""
    for name in list(_LAZY_PASSES):
        lookup_pass(name)
    return dict(sorted(_PASSES.items()))


# ---------------------------------------------------------------------------------------------
# Instrumentation
# ---------------------------------------------------------------------------------------------


class Instrumentation:
    """Hooks called around every pass run (MLIR's PassInstrumentation)."""

    def before_pipeline(self, op: Operation) -> None: ...
    def after_pipeline(self, op: Operation) -> None: ...
    def before_pass(self, p: Pass, op: Operation) -> None: ...
    def after_pass(self, p: Pass, op: Operation) -> None: ...
    def after_pass_failed(self, p: Pass, op: Operation, error: IRError) -> None: ...
    def before_nested(self, pm: "OpPassManager", op: Operation) -> None: ...
    def after_nested(self, pm: "OpPassManager", op: Operation) -> None: ...


# ---------------------------------------------------------------------------------------------
# Pipelines
# ---------------------------------------------------------------------------------------------


class OpPassManager:
    """A pipeline anchored on one op name (or on any op, `any`)."""

    def __init__(self, anchor: str = "any") -> None:
        self.anchor = anchor
        self.elements: list[Pass | OpPassManager] = []

    def add(self, p: Pass) -> "OpPassManager":
        if p.anchor is not None and self.anchor not in ("any", p.anchor):
            raise PassPipelineError(f"'{p.name}' runs on '{p.anchor}' ops and cannot be "
                                    f"scheduled on '{self.anchor}'")
        self.elements.append(p)
        return self

    def nest(self, anchor: str) -> "OpPassManager":
        """The nested pipeline for `anchor` ops, reusing a trailing one with that anchor."""
        if self.elements and isinstance(self.elements[-1], OpPassManager) and \
                self.elements[-1].anchor == anchor:
            return self.elements[-1]
        nested = OpPassManager(anchor)
        self.elements.append(nested)
        return nested

    def passes(self) -> Iterable[Pass]:
        for e in self.elements:
            if isinstance(e, OpPassManager):
                yield from e.passes()
            else:
                yield e

    def pipeline_text(self) -> str:
        inner = ",".join(e.pipeline_text() for e in self.elements)
        return f"{self.anchor}({inner})"

    def __len__(self) -> int:
        return sum(1 for _ in self.passes())


class PassManager(OpPassManager):
    """The top-level pipeline plus the options that govern running it."""

    def __init__(self, anchor: str = "builtin.module", *, verify_each: bool = True) -> None:
        super().__init__(anchor)
        self.verify_each = verify_each
        self.instrumentations: list[Instrumentation] = []

    @classmethod
    def parse(cls, text: str, anchor: str = "builtin.module", **kwargs) -> "PassManager":
        """A pass manager from MLIR's pipeline syntax or the flat `a,b{opt=1}` form."""
        pm = cls(anchor, **kwargs)
        parse_pipeline_into(pm, text)
        return pm

    def add_instrumentation(self, inst: Instrumentation) -> None:
        self.instrumentations.append(inst)

    def run(self, op: Operation) -> None:
        """Run the pipeline on `op`; raises IRError when a pass or verification fails."""
        if self.anchor not in ("any", op.name):
            raise PassPipelineError(f"pipeline anchored on '{self.anchor}' cannot run on "
                                    f"'{op.name}'")
        with gc_paused():
            for inst in self.instrumentations:
                inst.before_pipeline(op)
            self._run_on(self, op)
            for inst in self.instrumentations:
                inst.after_pipeline(op)

    def _run_on(self, opm: OpPassManager, op: Operation) -> None:
        insts = self.instrumentations
        for element in opm.elements:
            if isinstance(element, OpPassManager):
                for child in _children(op, element.anchor):
                    for inst in insts:
                        inst.before_nested(element, child)
                    self._run_on(element, child)
                    for inst in insts:
                        inst.after_nested(element, child)
                continue
            for inst in insts:
                inst.before_pass(element, op)
            try:
                try:
                    element.run(op)
                except (IRError, PassPipelineError):
                    raise
                except Exception as crash:  # noqa: BLE001 - a bug in the pass, reported as such
                    raise _crash_error(element, op, crash) from crash
            except IRError as e:
                for inst in insts:
                    inst.after_pass_failed(element, op, e)
                raise
            if self.verify_each:
                try:
                    op.verify()
                except IRError as e:
                    # The input verified, so this pass broke the IR: say which one.
                    e.diagnostics[0].attach_note(
                        f"the IR does not verify after pass '{element.name}' ran on "
                        f"'{op.name}'", op.location)
                    for inst in insts:
                        inst.after_pass_failed(element, op, e)
                    raise
            for inst in insts:
                inst.after_pass(element, op)


class PassCrash(IRError):
    """A pass raised something other than a diagnostic: a bug in the pass, not the input."""


def _crash_error(p: Pass, op: Operation, crash: Exception) -> PassCrash:
    import traceback
    frames = traceback.extract_tb(crash.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    err = PassCrash(f"pass '{p.name}' crashed on '{op.name}': {type(crash).__name__}: "
                    f"{crash}", op.location)
    err.note(f"this is a bug in the pass, not in the input (raised{where})")
    return err


def _children(op: Operation, anchor: str) -> list[Operation]:
    """Ops immediately nested in `op`'s regions that a nested pipeline applies to."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                if anchor == "any" or child.name == anchor:
                    out.append(child)
    return out


# ---------------------------------------------------------------------------------------------
# Pipeline syntax
# ---------------------------------------------------------------------------------------------


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside parentheses, braces and quotes."""
    parts, depth, start, quote = [], 0, 0, None
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
            if depth < 0:
                raise PassPipelineError(f"unbalanced '{c}' in pass pipeline '{text}'")
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth != 0 or quote:
        raise PassPipelineError(f"unbalanced brackets or quotes in pass pipeline '{text}'")
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _parse_options(pass_name: str, text: str) -> dict[str, str]:
    """`key=value key2={a,b} key3="x y" flag` -> dict (MLIR separates options by spaces)."""
    out, i, n = {}, 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\n,":
            i += 1
        if i >= n:
            break
        j = i
        while j < n and text[j] not in "= \t\n":
            j += 1
        key = text[i:j]
        if j < n and text[j] == "=":
            j += 1
            if j < n and text[j] in "{\"'":
                close = {"{": "}", '"': '"', "'": "'"}[text[j]]
                k = text.find(close, j + 1)
                if k < 0:
                    raise PassPipelineError(f"'{pass_name}': unterminated option value")
                value, j = text[j + 1:k], k + 1
            else:
                k = j
                while k < n and text[k] not in " \t\n":
                    k += 1
                value, j = text[j:k], k
        else:
            value = ""
        if not key:
            raise PassPipelineError(f"'{pass_name}': expected an option name in '{{{text}}}'")
        out[key] = value
        i = j
    return out


def split_element(element: str) -> tuple[str, dict[str, str]]:
    """One pipeline element `name{key=value ...}` (or a bare `name`) as (name, options by
    key, each value's text); the pass is not looked up."""
    element = element.strip()
    brace = element.find("{")
    if brace < 0:
        return element, {}
    if not element.endswith("}"):
        raise PassPipelineError(f"expected '}}' at the end of '{element}'")
    return element[:brace].strip(), _parse_options(element[:brace], element[brace + 1:-1])


def _make_pass(element: str) -> Pass:
    name, opts = split_element(element)
    cls = lookup_pass(name)
    if cls is None:
        import difflib
        close = difflib.get_close_matches(name, list(registered_passes()), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise PassPipelineError(f"no pass named '{name}'{hint} (see --list-passes)")
    return cls.from_options(opts)


def _parse_elements(opm: OpPassManager, text: str, auto_nest: bool) -> None:
    for element in _split_top(text):
        if not element:
            raise PassPipelineError(f"empty element in pass pipeline '{text}'")
        paren = element.find("(")
        brace = element.find("{")
        if paren >= 0 and (brace < 0 or paren < brace):
            if not element.endswith(")"):
                raise PassPipelineError(f"expected ')' at the end of '{element}'")
            anchor = element[:paren].strip()
            nested = OpPassManager(anchor)
            opm.elements.append(nested)
            _parse_elements(nested, element[paren + 1:-1], False)
            continue
        p = _make_pass(element)
        if auto_nest and p.anchor is not None and p.anchor != opm.anchor:
            opm.nest(p.anchor).add(p)
        else:
            opm.add(p)


def parse_pipeline_into(pm: OpPassManager, text: str) -> None:
    """Fill `pm` from pipeline text: `anchor(...)` must name pm's anchor; otherwise the text is
    the flat form, a list of passes for pm's op."""
    text = text.strip()
    if not text:
        return
    parts = _split_top(text)
    if len(parts) == 1:
        paren = text.find("(")
        brace = text.find("{")
        if paren >= 0 and (brace < 0 or paren < brace) and text.endswith(")"):
            anchor = text[:paren].strip()
            if anchor not in (pm.anchor, "any"):
                raise PassPipelineError(f"pipeline anchored on '{anchor}' cannot run on "
                                        f"'{pm.anchor}' (the root op)")
            _parse_elements(pm, text[paren + 1:-1], False)
            return
    _parse_elements(pm, text, True)


# ---------------------------------------------------------------------------------------------
# Standard instrumentations
# ---------------------------------------------------------------------------------------------


class PrintIR(Instrumentation):
    """Print the IR before/after passes, with MLIR's banners (`--mlir-print-ir-*`)."""

    def __init__(self, write: Callable[[str], None], *, before: Iterable[str] = (),
                 after: Iterable[str] = (), after_all: bool = False, before_all: bool = False,
                 after_failure: bool = False, module_scope: bool = False,
                 printer: Callable[[Operation], str] | None = None) -> None:
        self.write = write
        self.before, self.after = set(before), set(after)
        self.before_all, self.after_all = before_all, after_all
        self.after_failure = after_failure
        self.module_scope = module_scope
        from irkit.printer import print_op
        self.printer = printer or print_op

    def _dump(self, when: str, p: Pass, op: Operation, suffix: str = "") -> None:
        target = op
        if self.module_scope:
            while target.parent_op is not None:
                target = target.parent_op
        text = self.printer(target)
        self.write(f"// -----// IR Dump {when} {p.display_name}{suffix} //----- //\n"
                   f"{text.rstrip()}\n\n")

    def before_pass(self, p, op):
        if self.before_all or p.name in self.before:
            self._dump("Before", p, op)

    def after_pass(self, p, op):
        if self.after_all or p.name in self.after:
            self._dump("After", p, op)

    def after_pass_failed(self, p, op, error):
        if self.after_failure or self.after_all or p.name in self.after:
            self._dump("After", p, op, " Failed")


class Timing(Instrumentation):
    """Wall time per pass and per nested pipeline, reported as MLIR's `--mlir-timing` does."""

    def __init__(self) -> None:
        self.root = _TimerNode("root")
        self.stack = [self.root]
        self._started: list[float] = []

    def add_phase(self, name: str, seconds: float) -> None:
        """Time spent outside the pass manager (parsing, output), shown in the report."""
        self.root.child(name).total += seconds

    def before_nested(self, pm, op):
        self.stack.append(self.stack[-1].child(f"'{pm.anchor}' Pipeline"))
        self._started.append(time.perf_counter())

    def after_nested(self, pm, op):
        self.stack.pop().total += time.perf_counter() - self._started.pop()

    def before_pass(self, p, op):
        self.stack.append(self.stack[-1].child(p.display_name))
        self._started.append(time.perf_counter())

    def after_pass(self, p, op):
        self.stack.pop().total += time.perf_counter() - self._started.pop()

    def after_pass_failed(self, p, op, error):
        self.after_pass(p, op)

    def report(self) -> str:
        total = sum(c.total for c in self.root.children.values())
        lines = ["===" + "-" * 73 + "===",
                 " " * 27 + "... Execution time report ...",
                 "===" + "-" * 73 + "===",
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]

        def emit(node: _TimerNode, depth: int) -> None:
            for child in node.children.values():
                pct = 100.0 * child.total / total if total else 0.0
                lines.append(f"  {child.total:8.4f} ({pct:5.1f}%)  {'  ' * depth}{child.name}")
                emit(child, depth + 1)

        emit(self.root, 0)
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


class _TimerNode:
    __slots__ = ("name", "total", "children")

    def __init__(self, name: str) -> None:
        self.name = name
        self.total = 0.0
        self.children: dict[str, _TimerNode] = {}

    def child(self, name: str) -> "_TimerNode":
        node = self.children.get(name)
        if node is None:
            node = self.children[name] = _TimerNode(name)
        return node
