"""Diagnostics: located errors with the source line and a caret, as MLIR and clang print them.

Every error that reaches a user is an `IRError` carrying one or more `Diagnostic`s. A
diagnostic has a severity, a message and a location; `render()` turns it into

    model.mlir:3:12: error: use of undeclared SSA value name
      %1 = arith.addf %0, %x : f32
                          ^

Locations are attributes (see `irkit.attributes`); this module only needs their `file`,
`line` and `col`, which any location can resolve to through `resolve_file_line_col`.
Source text is kept in a `SourceManager` so that carets can be drawn long after parsing.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


class SourceManager:
    """Maps file names to their text, so diagnostics can show the offending line."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}
        self._line_starts: dict[str, list[int]] = {}

    def add(self, name: str, text: str) -> None:
        self._files[name] = text
        self._line_starts.pop(name, None)

    def text(self, name: str) -> str | None:
        return self._files.get(name)

    def line_starts(self, name: str) -> list[int]:
        starts = self._line_starts.get(name)
        if starts is None:
            text = self._files[name]
            starts = [0]
            find = text.find
            pos = find("\n")
            while pos >= 0:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self._line_starts[name] = starts
        return starts

    def line_col(self, name: str, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        starts = self.line_starts(name)
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, name: str, line: int) -> str | None:
        text = self._files.get(name)
        if text is None:
            return None
        starts = self.line_starts(name)
        if not 1 <= line <= len(starts):
            return None
        end = text.find("\n", starts[line - 1])
        return text[starts[line - 1]: end if end >= 0 else len(text)]


SOURCES = SourceManager()


@dataclass
class Diagnostic:
    """One message: severity ('error', 'warning', 'note', 'remark'), text and location."""

    severity: str
    message: str
    location: object = None
    notes: list["Diagnostic"] = field(default_factory=list)

    def attach_note(self, message: str, location: object = None) -> "Diagnostic":
        note = Diagnostic("note", message, location)
        self.notes.append(note)
        return note

    def render(self, sources: SourceManager = SOURCES) -> str:
        out = [_render_one(self, sources)]
        for note in self.notes:
            out.append(_render_one(note, sources))
        return "\n".join(out)


def _render_one(diag: Diagnostic, sources: SourceManager) -> str:
    flc = resolve_file_line_col(diag.location)
    if flc is None:
        if diag.location is None and diag.severity == "note":
            return f"note: {diag.message}"      # a note about the error, not about a place
        return f"<unknown>:0:0: {diag.severity}: {diag.message}"
    file, line, col = flc
    head = f"{file}:{line}:{col}: {diag.severity}: {diag.message}"
    text = sources.line_text(file, line)
    if text is None:
        return head
    # Tabs are kept so the caret lines up under the same character in a terminal.
    pad = "".join(c if c == "\t" else " " for c in text[: max(col - 1, 0)])
    return f"{head}\n{text}\n{pad}^"


def resolve_file_line_col(loc: object) -> tuple[str, int, int] | None:
    """The first file:line:col found inside a (possibly fused or named) location."""
    resolve = getattr(loc, "file_line_col", None)
    return resolve() if resolve is not None else None


class IRError(Exception):
    """An error in user input (IR text, DSL, a verifier rule) with located diagnostics."""

    def __init__(self, message: str, location: object = None,
                 diagnostics: list[Diagnostic] | None = None) -> None:
        if diagnostics is None:
            diagnostics = [Diagnostic("error", message, location)]
        self.diagnostics = diagnostics
        super().__init__(message)

    @property
    def diagnostic(self) -> Diagnostic:
        return self.diagnostics[0]

    def note(self, message: str, location: object = None) -> "IRError":
        self.diagnostics[0].attach_note(message, location)
        return self

    def render(self, sources: SourceManager = SOURCES) -> str:
        return "\n".join(d.render(sources) for d in self.diagnostics)

    def __str__(self) -> str:
        return self.render()


class ParseError(IRError):
    """Malformed input text."""


class VerifyError(IRError):
    """IR that parses but breaks an op's or the IR's rules."""


# ---------------------------------------------------------------------------------------------
# The diagnostic engine: where non-fatal diagnostics (warnings, remarks) and caught errors go.
# ---------------------------------------------------------------------------------------------
#
# Errors normally travel as `IRError` exceptions, because after an error there is nothing
# sensible to continue with. Warnings and remarks do not stop anything, so a pass reports
# them through `emit`. The innermost handler receives each one: by default it is rendered to
# stderr; `capture()` collects them instead, which is how `--verify-diagnostics` compares
# what was reported against the `expected-*` annotations of a test file.

_HANDLERS: list = []


def emit(diag: Diagnostic) -> None:
    """Report a diagnostic to the innermost handler (stderr when none is installed)."""
    if _HANDLERS:
        _HANDLERS[-1](diag)
    else:
        import sys
        sys.stderr.write(diag.render() + "\n")


def emit_warning(message: str, location: object = None) -> Diagnostic:
    d = Diagnostic("warning", message, location)
    emit(d)
    return d


def emit_remark(message: str, location: object = None) -> Diagnostic:
    d = Diagnostic("remark", message, location)
    emit(d)
    return d


class capture:
    """Context manager collecting every emitted diagnostic in a list.

        with capture() as diags:
            run_pipeline(module)
        # diags: [Diagnostic, ...]
    """

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def __enter__(self) -> list[Diagnostic]:
        _HANDLERS.append(self.diagnostics.append)
        return self.diagnostics

    def __exit__(self, *exc) -> None:
        _HANDLERS.remove(self.diagnostics.append)
