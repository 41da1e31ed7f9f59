"""`--verify-diagnostics`: check the diagnostics a test file produces against its annotations.

MLIR's `invalid.mlir` tests state inline what each line must report:

    func.func @f(%a: i32) -> f32 {
      // expected-error @+1 {{type of return operand 0 ('i32') doesn't match}}
      return %a : i32
    }

This module is MLIR's `SourceMgrDiagnosticVerifierHandler` in Python, with the same syntax and
the same failure messages, so test files move between `mlir-opt` and `irkit-opt` unchanged:

- `expected-(error|note|warning|remark)`, optionally `-re`, optionally a designator
  `@+N`, `@-N` (relative line), `@above` / `@below` (the nearest line above / below that is not
  itself an annotation), `@unknown` (a diagnostic without a file location), then `{{text}}`
  running to the end of the line. Without a designator the annotation names its own line.
- Plain text matches as a substring of the message. With `-re`, `{{...}}` pieces inside the
  text are regular expressions and the rest is literal (`{{type of {{[a-z]+}} operand}}`).
- Every diagnostic produced must be expected, and every expectation must be produced. Notes
  attached to a diagnostic are checked as diagnostics of their own, at their own location.

A count suffix (`expected-error-2`) is not supported: `mlir-opt` ignores such lines, and a file
that means something different to the two tools would defeat the point of sharing the syntax.
Regexes are Python's `re`, which agrees with LLVM's POSIX ERE on everything tests use.

Algorithm:
1. Scan the chunk for annotations, resolving designators to line numbers (as MLIR does, an
   `@below` waits for the next non-annotation line); a malformed `-re` is a failure.
2. Run `process()` with non-fatal diagnostics captured; a raised `IRError` adds its own.
3. For each diagnostic and each of its notes, in the order produced: the first expectation on
   its line (or `@unknown`) whose text matches and whose severity agrees is marked produced,
   preferring one not yet marked; a match with another severity is a near miss, reported at
   the annotation; otherwise the diagnostic is unexpected, reported at its own location.
4. Every expectation left unmarked is reported as not produced, in file order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator

from irkit.attributes import FileLineColLoc
from irkit.diagnostics import Diagnostic, IRError, SourceManager, capture, resolve_file_line_col

# MLIR's own pattern (mlir/lib/IR/Diagnostics.cpp): greedy `(.*)` so the text runs to the last
# `}}` of the line, which lets messages and `-re` pieces contain braces.
_ANNOTATION = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *"
    r"\{\{(.*)\}\}$")


@dataclass
class Expectation:
    """One `expected-*` annotation: what it expects, where, and whether it was produced."""

    severity: str
    #: line the diagnostic must be on; None for `@unknown`
    line: int | None
    #: the text between the outer `{{` and `}}`, as written
    text: str
    #: where the annotation itself is written (failures point here)
    written_line: int
    written_col: int
    pattern: re.Pattern | None = None
    produced: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _compile_re(text: str) -> re.Pattern:
    """Literal text with `{{regex}}` pieces, as MLIR's `ExpectedDiag::computeRegex` builds it.

    Raises ValueError with MLIR's wording when a piece is unterminated or not a valid regex.
    """
    out, rest = [], text
    while rest:
        start = rest.find("{{")
        if start < 0:
            out.append(re.escape(rest))
            break
        out.append(re.escape(rest[:start]))
        rest = rest[start + 2:]
        end = rest.find("}}")
        if end < 0:
            raise ValueError("found start of regex with no end '}}'")
        piece = rest[:end]
        try:
            re.compile(piece)
        except re.error as e:
            raise ValueError(f"invalid regex: {e}") from None
        out.append(f"({piece})")
        rest = rest[end + 2:]
    return re.compile("".join(out))


def parse_expectations(chunk: str, filename: str) -> tuple[list[Expectation], list[str]]:
    """The annotations of `chunk`, and failures for annotations that cannot be used.

    Lines are numbered as in `chunk`, which `split_chunks` pads so that they are the lines of
    the whole file.
    """
    sources = _sources(chunk, filename)
    expectations: list[Expectation] = []
    failures: list[str] = []
    waiting_below: list[Expectation] = []
    last_plain_line = 1
    for lineno, line in enumerate(chunk.split("\n"), start=1):
        m = _ANNOTATION.search(line.rstrip())
        if m is None:
            # A line that is not an annotation is what `@above` and `@below` point at.
            for e in waiting_below:
                e.line = lineno
            waiting_below.clear()
            last_plain_line = lineno
            continue
        severity, is_re, designator, text = m.group(1), m.group(2), m.group(4), m.group(5)
        e = Expectation(severity, lineno, text, lineno, m.start() + 1)
        if is_re:
            try:
                e.pattern = _compile_re(text)
            except ValueError as err:
                failures.append(_failure(str(err), _annotation_loc(e, filename), sources))
                continue
        if designator is None:
            pass
        elif designator == "unknown":
            e.line = None
        elif designator == "above":
            e.line = last_plain_line
        elif designator == "below":
            # Resolved by the next non-annotation line; never matches if there is none.
            e.line = 0
            waiting_below.append(e)
        else:
            e.line = lineno + int(designator)
        expectations.append(e)
    return expectations, failures


def collect_diagnostics(process: Callable[[], None]) -> list[Diagnostic]:
    """Everything `process()` reports: captured warnings and remarks, then a raised IRError."""
    with capture() as produced:
        try:
            process()
        except IRError as e:
            produced.extend(e.diagnostics)
    return list(produced)


def _flatten(diags: list[Diagnostic]) -> Iterator[Diagnostic]:
    """Each diagnostic followed by its notes (and theirs), the order MLIR's handler sees."""
    for d in diags:
        yield d
        yield from _flatten(d.notes)


def verify_diagnostics(chunk: str, filename: str, process: Callable[[], None]) -> list[str]:
    """Run `process()` (which parses `chunk` and runs passes; it may raise IRError and may emit
    warnings/remarks through irkit.diagnostics.emit), collect every diagnostic produced (raised
    errors incl. their notes, and captured ones), and match them against the annotations in
    `chunk`. Returns a list of failure messages, each rendered like an MLIR diagnostic
    (`file:line:col: error: unexpected error: ...` / `file:line:col: error: expected error
    "..." was not produced`), empty when everything matched.

    Each failure is the header line followed by the source line and a caret, as `IRError`
    renders; exceptions other than IRError propagate, since a crash is not a diagnostic.
    """
    sources = _sources(chunk, filename)
    expectations, failures = parse_expectations(chunk, filename)
    for diag in _flatten(collect_diagnostics(process)):
        failure = _match(diag, expectations, filename)
        if failure is not None:
            failures.append(_failure(failure[0], failure[1], sources))
    for e in expectations:
        if not e.produced:
            failures.append(_failure(f'expected {e.severity} "{e.text}" was not produced',
                                     _annotation_loc(e, filename), sources))
    return failures


def _match(diag: Diagnostic, expectations: list[Expectation],
           filename: str) -> tuple[str, object] | None:
    """Mark the expectation `diag` satisfies; else (failure message, location) to report."""
    flc = resolve_file_line_col(diag.location)
    if flc is None:
        candidates = [e for e in expectations if e.line is None]
    elif flc[0] == filename:
        candidates = [e for e in expectations if e.line == flc[1]]
    else:
        # Another file has no annotations to match, as in MLIR.
        candidates = []
    candidates = [e for e in candidates if e.matches(diag.message)]
    same = [e for e in candidates if e.severity == diag.severity]
    if same:
        # Prefer an expectation still waiting, so two equal annotations need two diagnostics.
        pending = [e for e in same if not e.produced]
        (pending or same)[0].produced = True
        return None
    if candidates:
        near = candidates[-1]
        return (f"'{diag.severity}' diagnostic emitted when expecting a '{near.severity}'",
                _annotation_loc(near, filename))
    return f"unexpected {diag.severity}: {diag.message}", diag.location


def _annotation_loc(e: Expectation, filename: str) -> FileLineColLoc:
    return FileLineColLoc(filename, e.written_line, e.written_col)


def _sources(chunk: str, filename: str) -> SourceManager:
    """A private source manager, so carets work whether or not `process` parsed the chunk."""
    sources = SourceManager()
    sources.add(filename, chunk)
    return sources


def _failure(message: str, location: object, sources: SourceManager) -> str:
    return Diagnostic("error", message, location).render(sources)
