"""Reading source files: every tool and `load_model` read IR and model text through here.

Its own module, above `irkit.diagnostics` and `irkit.attributes`: a bad byte is reported at
a `FileLineColLoc`, and the diagnostics module knows locations only by what they print.
"""

from __future__ import annotations

import sys

from irkit.attributes import FileLineColLoc
from irkit.diagnostics import SOURCES, IRError, ParseError


def read_source(path: str, error: type[IRError] = ParseError) -> str:
    """The text of an IR or model file (`-`: standard input), decoded as UTF-8.

    Bytes that are not UTF-8 (a binary file, a Latin-1 file) raise `error` located at the
    first bad byte, not a `UnicodeDecodeError`; OSErrors (a missing file) pass through.
    """
    if path == "-":
        raw = getattr(sys.stdin, "buffer", None)        # None: a text stream put in its place
        return sys.stdin.read() if raw is None else decode_source(raw.read(), "<stdin>", error)
    with open(path, "rb") as f:
        return decode_source(f.read(), path, error)


def decode_source(data: bytes, name: str, error: type[IRError] = ParseError) -> str:
    """`data` as UTF-8 text, or `error` at the line and column of the first undecodable byte:

        model.irk:3:7: error: invalid UTF-8 (byte 0xff); source files must be UTF-8 text

    Columns count characters, as every other diagnostic does. The text up to the bad byte
    (then U+FFFD) is registered under `name`, so the caret line shows what came before it
    without dumping the rest of a binary file.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = e.start
    before = data[:bad].decode("utf-8")       # valid: `bad` is the first undecodable byte
    line = before.count("\n") + 1
    col = len(before) - before.rfind("\n")
    SOURCES.add(name, before + "\ufffd")
    raise error(f"invalid UTF-8 (byte 0x{data[bad]:02x}); source files must be UTF-8 text",
                FileLineColLoc(name, line, col))
