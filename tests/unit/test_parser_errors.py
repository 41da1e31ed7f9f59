"""Parse errors: exact `file:line:col: error: message`, the source line, and the caret column.

Also the `irkit-opt` command line: exit status, stderr, `--split-input-file`, `-o`, stdin,
and `#loc` aliases defined at the end of a file (as `mlir-opt --mlir-print-debuginfo` prints).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from irkit.diagnostics import IRError, ParseError
from irkit.parser import parse_module, parse_type

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


def error_of(text: str, name: str = "t.mlir", allow: bool = True) -> str:
    with pytest.raises(IRError) as e:
        parse_module(text, name, allow_unregistered=allow)
    return e.value.render()


def check(text: str, line: int, col: int, message: str, allow: bool = True) -> None:
    """The rendering is `t.mlir:L:C: error: msg`, the source line, and a caret under col."""
    rendered = error_of(text, allow=allow).split("\n")
    assert rendered[0] == f"t.mlir:{line}:{col}: error: {message}"
    assert rendered[1] == text.split("\n")[line - 1]
    assert rendered[2] == " " * (col - 1) + "^"


def test_undefined_value_at_its_use():
    check('func.func @f() -> i32 {\n  return %x : i32\n}\n', 2, 10,
          "use of undeclared SSA value name '%x'")


def test_redefinition_of_value():
    check('"t.a"() ({\n  %0 = "t.c"() : () -> i32\n  %0 = "t.c"() : () -> i32\n}) : () -> ()\n',
          3, 3, "redefinition of SSA value '%0'")


def test_type_mismatch_between_uses():
    check('"t.a"() ({\n  "t.u"(%0) : (i32) -> ()\n  "t.u"(%0) : (f32) -> ()\n'
          '  %0 = "t.c"() : () -> i32\n}) : () -> ()\n', 3, 9,
          "use of value '%0' expects different type than prior uses: 'f32' vs 'i32'")


def test_type_mismatch_with_definition():
    check('"t.a"() ({\n  %0 = "t.c"() : () -> i32\n  "t.u"(%0) : (f32) -> ()\n}) : () -> ()\n',
          3, 9, "use of value '%0' expects different type than prior uses: 'f32' vs 'i32'")


def test_unknown_op_needs_allow_unregistered():
    check('"foo.bar"() : () -> ()\n', 1, 1,
          "operation 'foo.bar' is from an unregistered dialect; use "
          "--allow-unregistered-dialect to accept it", allow=False)
    m = parse_module('"foo.bar"() : () -> ()\n', allow_unregistered=True)
    assert m.regions[0].blocks[0].first.name == "foo.bar"


def test_unknown_op_in_known_dialect():
    check('"func.nope"() : () -> ()\n', 1, 1, "unregistered operation 'func.nope' found in "
          "dialect ('func') that does not allow unknown operations", allow=False)


def test_bad_types():
    # As MLIR's: the type is wanted right after `->`, where the error points.
    check('"t.a"() : () -> i33x\n', 1, 16, "expected non-function type, found 'i33x'")
    check('%0 = "t.a"() : () -> tensor<4xfoo>\n', 1, 31,
          "expected non-function type, found 'foo'")


def test_unterminated_region():
    check('"t.a"() ({\n  "t.c"() : () -> ()\n', 2, 21, "expected '}' to end region")


def test_undefined_block():
    check('"t.a"() ({\n  "t.br"() [^bb5] : () -> ()\n}) : () -> ()\n', 2, 13,
          "reference to an undefined block '^bb5'")


def test_wrong_result_count():
    check('%0:2 = "t.c"() : () -> i32\n', 1, 1,
          "operation defines 1 results but was provided 2 to bind")


def test_result_number_out_of_range():
    check('%0:2 = "t.c"() : () -> (i32, i32)\n"t.u"(%0#2) : (i32) -> ()\n', 2, 7,
          "result number 2 of '%0' is out of range (it has 2 results)")


def test_use_across_isolated_op_is_undeclared_to_the_parser():
    check('func.func @f(%a: i32) {\n  func.func @g() {\n    "t.u"(%a) : (i32) -> ()\n'
          '    return\n  }\n  return\n}\n', 3, 11, "use of undeclared SSA value name '%a'")


def test_error_in_parse_type_renders():
    with pytest.raises(ParseError) as e:
        parse_type("tensor<4xfoo>")
    assert str(e.value).startswith("<type>:1:10: error: expected non-function type, found 'foo'")


def test_caret_keeps_tabs():
    rendered = error_of('\t"t.u"(%x) : (i32) -> ()\n').split("\n")
    assert rendered[0] == "t.mlir:1:8: error: use of undeclared SSA value name '%x'"
    assert rendered[2] == "\t      ^"


# ----- irkit-opt ------------------------------------------------------------------------------

def opt(*args, stdin: str | None = None, cwd=None):
    return subprocess.run([sys.executable, "-m", "irkit.tools.opt", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_cli_error_exit_code_and_stderr(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text('func.func @f() -> i32 {\n  return %x : i32\n}\n')
    r = opt(str(f))
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith(f"{f}:2:10: error: use of undeclared SSA value name '%x'\n"
                               "  return %x : i32\n         ^\n")


def test_cli_unregistered_needs_flag(tmp_path):
    f = tmp_path / "u.mlir"
    f.write_text('"foo.bar"() : () -> ()\n')
    assert opt(str(f)).returncode == 1
    r = opt(str(f), "--allow-unregistered-dialect")
    assert r.returncode == 0
    assert r.stdout == 'module {\n  "foo.bar"() : () -> ()\n}\n'


def test_cli_missing_file():
    r = opt("/nonexistent/x.mlir")
    assert r.returncode == 1 and "cannot read" in r.stderr


def test_cli_split_input_file(tmp_path):
    f = tmp_path / "s.mlir"
    f.write_text('func.func private @a()\n// -----\nfunc.func @b() {\n  return %x : i32\n}\n'
                 '// -----\nfunc.func private @c()\n')
    r = opt(str(f), "--split-input-file")
    assert r.returncode == 1
    assert r.stdout == ("module {\n  func.func private @a()\n}\n// -----\n// -----\n"
                        "module {\n  func.func private @c()\n}\n")
    # Line numbers are those of the whole file.
    assert r.stderr.startswith(f"{f}:4:10: error: use of undeclared SSA value name '%x'\n")


def test_cli_output_file_and_stdin(tmp_path):
    out = tmp_path / "o.mlir"
    r = opt("-", "-o", str(out), "--mlir-print-op-generic",
            stdin="func.func private @a(i32) -> f32\n")
    assert r.returncode == 0 and r.stdout == ""
    assert out.read_text() == (
        '"builtin.module"() ({\n  "func.func"() <{function_type = (i32) -> f32, '
        'sym_name = "a", sym_visibility = "private"}> ({\n  }) : () -> ()\n}) : () -> ()\n')
    r = opt("--allow-unregistered-dialect", stdin='"t.a"(%x) : (i32) -> ()\n')
    assert r.returncode == 1
    assert r.stderr.startswith("<stdin>:1:7: error: use of undeclared SSA value name '%x'")


DEBUGINFO = '''#loc2 = loc("in.mlir":1:14)
module {
  func.func @f(%arg0: i32 loc("in.mlir":1:14)) -> i32 {
    return %arg0 : i32 loc(#loc3)
  } loc(#loc1)
} loc(#loc)
#loc = loc("in.mlir":0:0)
#loc1 = loc("in.mlir":1:1)
#loc3 = loc("in.mlir":2:3)
'''


def _debuginfo_text(tmp_path) -> str:
    """mlir-opt's own --mlir-print-debuginfo output when available, else a copy of it."""
    if not os.path.exists(MLIR_OPT):
        return DEBUGINFO
    (tmp_path / "in.mlir").write_text('func.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n')
    r = subprocess.run([MLIR_OPT, "--mlir-print-debuginfo", "in.mlir"], capture_output=True,
                       text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\n#loc" in r.stdout  # mlir-opt puts the aliases after the module
    return r.stdout


def test_cli_loc_aliases_at_end_of_file(tmp_path):
    f = tmp_path / "dbg.mlir"
    f.write_text(_debuginfo_text(tmp_path))
    r = opt(str(f), "--mlir-print-debuginfo")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ('module {\n  func.func @f(%arg0: i32 loc("in.mlir":1:14)) -> i32 {\n'
                        '    return %arg0 : i32 loc("in.mlir":2:3)\n  } loc("in.mlir":1:1)\n'
                        '} loc("in.mlir":0:0)\n')
    m = parse_module(f.read_text(), "dbg.mlir")
    fn = m.regions[0].blocks[0].first
    ret = fn.regions[0].blocks[0].first
    assert ret.location.file_line_col() == ("in.mlir", 2, 3)
    assert fn.location.file_line_col() == ("in.mlir", 1, 1)
    assert fn.regions[0].blocks[0].args[0].location.file_line_col() == ("in.mlir", 1, 14)


def test_undefined_loc_alias():
    rendered = error_of('"t.a"() : () -> () loc(#nope)\n').split("\n")
    assert rendered[0] == "t.mlir:1:24: error: undefined symbol alias id 'nope'"
