"""Input that is not what the grammars accept fails with a located error, never a traceback.

Two kinds: bytes that are not UTF-8 (a binary file given to `irkit-opt`, `irkit-compile` or
`load_model`), reported at the line and column of the first bad byte; and Unicode digits and
letters (`¹`, `٣`, `Ⅻ`, `é`) that `str.isdigit`/`isalpha` and Python's `\\d`/`\\w` accept but
the IR and DSL grammars (ASCII, as MLIR's) do not, reported where the character stands.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from irkit.diagnostics import IRError, ParseError
from irkit.source_files import decode_source
from irkit.frontend.dsl import DSLError, DSLSyntaxError, compile_source
from irkit.parser import parse_module

#: line 1 is text; line 2 holds `x` then byte 0xff at byte offset 13, column 2
NOT_UTF8 = b"model m {\n  x\xff\x00\x01 junk\n}\n"


def run_tool(tool: str, *args: str, stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", f"irkit.tools.{tool}", *args], input=stdin,
                          capture_output=True, timeout=120)


# ----- bytes that are not UTF-8 ---------------------------------------------------------------


def test_decode_reports_the_first_bad_byte():
    with pytest.raises(ParseError) as e:
        decode_source(b"ab\ncd\nxyz\xc3\xa9c\xff\xfe", "f.mlir")
    # Columns count characters: `xyz`, `é` (two bytes), `c`, so 0xff is the sixth.
    assert e.value.render().split("\n")[0] == \
        "f.mlir:3:6: error: invalid UTF-8 (byte 0xff); source files must be UTF-8 text"


def test_decode_of_a_truly_binary_file():
    # Bytes 0..255: the only newline is byte 10, and 0x80 (offset 128) is the first bad byte.
    with pytest.raises(ParseError) as e:
        decode_source(bytes(range(256)), "blob.mlir")
    assert str(e.value).startswith("blob.mlir:2:118: error: invalid UTF-8 (byte 0x80)")


def test_decode_of_valid_text_is_the_text():
    assert decode_source("é ¹\n".encode(), "f") == "é ¹\n"


@pytest.mark.parametrize("tool, name", [("opt", "bin.mlir"), ("opt", "bin.irk"),
                                        ("compile", "bin.irk")])
def test_tools_on_a_binary_file(tmp_path, tool, name):
    f = tmp_path / name
    f.write_bytes(NOT_UTF8)
    r = run_tool(tool, str(f))
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1, err
    assert "Traceback" not in err
    assert err.split("\n")[0] == \
        f"{f}:2:4: error: invalid UTF-8 (byte 0xff); source files must be UTF-8 text"
    assert r.stdout == b""


def test_opt_on_binary_stdin():
    r = run_tool("opt", "-", stdin=b"\x89PNG\r\n\x1a\n\x00")
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 1 and "Traceback" not in err
    assert err.startswith("<stdin>:1:1: error: invalid UTF-8 (byte 0x89)")


def test_load_model_on_a_binary_file(tmp_path):
    import irkit
    f = tmp_path / "m.irk"
    f.write_bytes(NOT_UTF8)
    with pytest.raises(DSLSyntaxError) as e:        # a DSLError, so an IRError too
        irkit.load_model(f)
    assert str(e.value).startswith(f"{f}:2:4: error: invalid UTF-8 (byte 0xff)")


# ----- Unicode digits and letters in IR text -------------------------------------------------

#: IR lines with one non-ASCII character the grammar does not accept, in place of a digit, a
#: letter of a name, or a dimension
IR_CASES = [
    '%0 = "arith.constant"() <{value = ¹ : i32}> : () -> i32',        # superscript one
    '%0 = "arith.constant"() <{value = ٣ : i32}> : () -> i32',        # Arabic-Indic three
    '%0 = "arith.constant"() <{value = Ⅻ : i32}> : () -> i32',        # Roman numeral twelve
    '%0 = "arith.constant"() <{value = 1٣ : i32}> : () -> i32',
    '%0 = "arith.constant"() <{value = 2.5e٣ : f32}> : () -> f32',
    '%é = "arith.constant"() <{value = 1 : i32}> : () -> i32',
    '%0 = "arith.constant"() <{valué = 1 : i32}> : () -> i32',
    '%0 = "arith.constant"() <{value = dense<1> : tensor<٣xi32>}> : () -> tensor<٣xi32>',
    '%0 = arith.constant ٣ : i32',
    '%0:٣ = "t.three"() : () -> (i32, i32, i32)',
]


@pytest.mark.parametrize("line", IR_CASES)
def test_unicode_in_ir_is_a_located_error(line):
    text = f"func.func @f() {{\n  {line}\n  func.return\n}}\n"
    bad = next(i for i, c in enumerate(line) if not c.isascii())
    with pytest.raises(IRError) as e:
        parse_module(text, "u.mlir", allow_unregistered=True)
    head, src, caret = e.value.render().split("\n")[:3]
    # Reported on the line of the character, at it or at the token just before it (`1٣`,
    # `2.5e٣` end a number there; `%é` is an SSA name cut short).
    assert head.startswith("u.mlir:2:")
    col = int(head.split(":")[2])
    assert bad <= col <= bad + 3, head          # the character is at column bad + 3
    assert src == "  " + line and caret == " " * (col - 1) + "^"


def test_unicode_in_a_string_is_still_fine():
    m = parse_module('"t.s"() {s = "é ¹ ٣"} : () -> ()\n', allow_unregistered=True)
    op = next(iter(m.regions[0].blocks[0].ops))
    assert op.attributes["s"].value == "é ¹ ٣"


# ----- Unicode digits and letters in DSL text ------------------------------------------------


@pytest.mark.parametrize("expr, char", [("x * ¹", "¹"), ("x * ٣", "٣"), ("x * Ⅻ", "Ⅻ"),
                                        ("x * 2٣", "٣"), ("xé", "é"), ("x * ①", "①")])
def test_unicode_in_dsl_is_unexpected_character(expr, char):
    src = f"model m {{\n  input x: f32[N, 4]\n  y = {expr}\n  output y\n}}\n"
    with pytest.raises(DSLError) as e:
        compile_source(src, "u.irk")
    col = 7 + expr.index(char)
    assert e.value.render().split("\n")[0] == \
        f"u.irk:3:{col}: error: unexpected character '{char}'"


def test_unicode_digit_in_a_dsl_dimension():
    with pytest.raises(DSLError) as e:
        compile_source("model m {\n  input x: f32[N, ٣]\n  output x\n}\n", "u.irk")
    assert str(e.value).startswith("u.irk:2:19: error: unexpected character '٣'")
