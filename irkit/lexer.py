"""The IR lexer: one compiled master regex, applied with `findall`.

Why not lark here: the IR parser's speed decides how fast every tool starts working on a
large module. `findall` over one alternation runs the whole tokenization loop in C and hands
back a list of token strings (about 15x faster than lark's lexer and 4x faster than a Python
loop over `finditer`). The parser dispatches on a token's first character.

Positions are not recorded while lexing. A token is identified by its index; when a
diagnostic or `--mlir-print-debuginfo` needs a line and column, `SourceBuffer` re-runs the
same regex with `finditer` once and keeps the offsets.

Two MLIR quirks are handled in the token set:

- shapes: `4x?x[8]x` (a run of dimensions each followed by `x`) is one token, so
  `tensor<4x?xf32>` lexes as `tensor < 4x?x f32 >`;
- dialect types and attributes keep their `<...>` body (balanced to depth three, strings
  and `->` allowed inside) in one token, so unknown dialects round-trip verbatim.
"""

from __future__ import annotations

import re

from irkit.diagnostics import SOURCES

_STR = r'"(?:[^"\\\n]|\\.)*"'
_BAL0 = rf'(?:->|{_STR}|[^<>"])*'
_BAL1 = rf'(?:->|{_STR}|<{_BAL0}>|[^<>"])*'
_BAL2 = rf'(?:->|{_STR}|<{_BAL1}>|[^<>"])*'

TOKEN_RE = re.compile(
    r"[ \t\r\n]*(?://[^\n]*[ \t\r\n]*)*"
    r"("
    + _STR
    + r"|%[\w$.\-]+(?:#\d+)?"
    r"|\^[\w$.\-]+"
    r"|@(?:[\w$.\-]+|" + _STR + r")"
    r"|\{-#|#-\}"
    r"|[!#][\w$.]+(?:<" + _BAL2 + r">)?"
    r"|0x[0-9a-fA-F]+"
    r"|(?:(?:\d+|\?|\*|\[\d+\])x)+"
    r"|\d+\.\d*(?:[eE][+-]?\d+)?"
    r"|\d+"
    r"|[A-Za-z_][\w$.]*"
    r"|->|::|\.\.\."
    r"|[-(){}\[\]<>,:=?*+|]"
    r"|\S"
    # An empty token at the end of the text (or chunk) swallows a trailing comment, which
    # would otherwise be lexed as `/`, `/`, words...; `_strip_end` drops it again.
    r"|\Z"
    r")",
    # ASCII only, as MLIR's grammar: without it `\d` and `\w` also match '¹', '٣' or 'é', which
    # then reach `int()` or become names that no printer writes. A non-ASCII character outside
    # a string is a one-character `\S` token that the parser reports where it stands.
    re.ASCII,
)


def is_digits(tok: str) -> bool:
    """True for a non-empty run of ASCII digits. `str.isdigit` alone also accepts '¹' and
    '٣', which the grammar does not, and `int()` rejects the first."""
    return tok.isascii() and tok.isdigit()


def starts_digit(tok: str) -> bool:
    """True when a token starts with an ASCII digit (a number or a shape like `4x`)."""
    return "0" <= tok[:1] <= "9"


def starts_identifier(tok: str) -> bool:
    """True when a token starts as a bare identifier does: an ASCII letter or '_'."""
    c = tok[:1]
    return c == "_" or c.isascii() and c.isalpha()


_CHUNK = 1 << 20
_OP_START = re.compile(r"\n(?=[ \t]*[%\"^}])")


def _strip_end(toks: list[str]) -> list[str]:
    """Drop the empty end-of-text tokens (only ever the last one or two)."""
    while toks and not toks[-1]:
        toks.pop()
    return toks


def tokenize(text: str) -> list[str]:
    """All tokens of `text`, then "" as the end marker.

    Equal token strings are shared: a large module repeats a few hundred distinct spellings
    (`f32`, `->`, op names, SSA names used several times), and sharing them cuts the lexer's
    memory by about 3x. Big inputs are lexed one megabyte at a time, cut where a line starts
    an op (never inside a token), so the unshared strings of only one chunk are alive at once.
    """
    if len(text) <= _CHUNK:
        toks = _strip_end(TOKEN_RE.findall(text))
        memo: dict = {}
        toks = [memo.setdefault(t, t) for t in toks]
    else:
        toks = []
        memo = {}
        pos = 0
        n = len(text)
        while pos < n:
            cut = n
            if pos + _CHUNK < n:
                m = _OP_START.search(text, pos + _CHUNK)
                cut = m.start() + 1 if m is not None else n
            chunk = _strip_end(TOKEN_RE.findall(text, pos, cut))
            toks.extend([memo.setdefault(t, t) for t in chunk])
            pos = cut
    toks.append("")  # end of input
    return toks


class SourceBuffer:
    """The text being parsed, with lazy token positions for diagnostics."""

    def __init__(self, name: str, text: str, register: bool = True) -> None:
        self.name = name
        self.text = text
        self._offsets: list[int] | None = None
        if register:
            SOURCES.add(name, text)

    def token_offset(self, index: int) -> int:
        offsets = self._offsets
        if offsets is None:
            offsets = self._offsets = [m.start(1) for m in TOKEN_RE.finditer(self.text)
                                       if m.end(1) > m.start(1)]
            offsets.append(len(self.text.rstrip()))
        if index >= len(offsets):
            return offsets[-1]
        return offsets[index]

    def token_line_col(self, index: int) -> tuple[int, int]:
        offset = self.token_offset(index)
        if SOURCES.text(self.name) is self.text:
            return SOURCES.line_col(self.name, offset)
        # Unregistered (parse_type, sub-parsers) or shadowed by a later buffer of the same name.
        text = self.text
        return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
