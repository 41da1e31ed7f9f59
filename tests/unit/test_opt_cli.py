"""irkit-opt reads mlir-opt's command lines (issue 17, defect 7).

- Replay: every `RUN:` line of the project's FileCheck tests that calls `irkit-opt` is
  rewritten the way a `RUN:` line for `mlir-opt` is written (one dash before every long
  option, `-pass-pipeline=`, a `--NAME[=OPTIONS]` flag per pass with MLIR's option values) and
  run in-process next to the original: exit status, stdout and stderr must be the same.
  The tool's own and the core passes' files are also run through lit with the rewritten
  lines, so FileCheck checks the same output.
- Spellings: each option in one dash and two, values after `=` or as the next argument,
  optional values only after `=` (the input file is never an option's value), flags with
  `=true` / `=false`, pass flags in command-line order, MLIR's pass options mapped to
  irkit's (compared with the same pipeline written in irkit's syntax).
- Errors of bad flags: message, exit status 2, nothing on stdout.
- `--verify-roundtrip`: passes on good input; a printer that drops an attribute or writes
  what its parser cannot read is caught and named.
- The real `mlir-opt` (skipped when missing) accepts the spellings these tests use, so they
  are mlir-opt's and not merely irkit's.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from irkit.pass_manager import lookup_pass
from irkit.tools.opt import main as opt_main

ROOT = Path(__file__).resolve().parents[2]
FILECHECK = ROOT / "tests" / "filecheck"
PLUGINS = ROOT / "tests" / "plugins"

MLIR_OPT = shutil.which("mlir-opt") or next(
    (p for p in ["/usr/lib/llvm-22/bin/mlir-opt"] if Path(p).exists()), None)
needs_mlir = pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt not installed")


@dataclass
class Result:
    rc: int
    out: str
    err: str


def run_opt(argv: list[str], stdin: str = "") -> Result:
    """irkit-opt in this process: its exit status and what it wrote."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = opt_main(list(argv))
            except SystemExit as e:             # argparse's own usage errors
                rc = e.code
    finally:
        sys.stdin = saved
    return Result(rc, out.getvalue(), err.getvalue())


# ---------------------------------------------------------------------------------------------
# RUN lines, rewritten in mlir-opt's spelling
# ---------------------------------------------------------------------------------------------


def run_commands(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, command) of each RUN command (continued lines joined)."""
    out, cur, first = [], "", None
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        m = re.match(r"\s*//\s*RUN:(.*)$", line)
        if m is None:
            continue
        first = i if first is None else first
        text = m.group(1).strip()
        if text.endswith("\\"):
            cur += text[:-1] + " "
            continue
        out.append((first, i, cur + text))
        cur, first = "", None
    return out


def opt_commands(path: Path) -> list[tuple[int, int, str]]:
    return [c for c in run_commands(path)
            if re.match(r"(not\s+)?irkit-opt\b", c[2])]


REPLAY_FILES = sorted(p for p in list(FILECHECK.rglob("*.mlir")) + list(FILECHECK.rglob("*.irk"))
                      if "Output" not in p.parts and opt_commands(p))

_REDIRECTS = {"2>&1", ">/dev/null", "2>/dev/null"}


def _split_elements(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in parts + [text[start:]]]


def _mlir_options(text: str) -> str:
    """irkit's option values in MLIR's spelling where MLIR spells them differently."""
    return re.sub(r"region-simplify=(true|false)",
                  lambda m: "region-simplify=" + ("normal" if m.group(1) == "true"
                                                  else "disabled"), text)


def _load_test_passes() -> None:
    """Register the test passes, as `--load-pass-plugin=%test_passes` does in the commands,
    so that the rewrite knows `test-miscompile` as a pass whatever ran before it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("irkit_test_passes_for_replay",
                                                  PLUGINS / "testing_passes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_load_test_passes()


def _pass_flags(pipeline: str) -> list[str]:
    """irkit's flat pipeline as mlir-opt's pass flags (`--cse --canonicalize='...'`); a
    pipeline naming an unknown pass stays one pipeline, which reports it as irkit's does."""
    elements = _split_elements(pipeline)
    names = [e.split("{", 1)[0] for e in elements]
    if any("(" in e for e in elements) or any(lookup_pass(n) is None for n in names):
        return [f"-pass-pipeline=builtin.module({_mlir_options(pipeline)})"]
    flags = []
    for name, element in zip(names, elements):
        opts = element[len(name):]
        flags.append(f"--{name}={_mlir_options(opts[1:-1])}" if opts else f"--{name}")
    return flags


def to_mlir_style(tokens: list[str]) -> list[str]:
    """One irkit-opt command (tokens after `irkit-opt`) as a RUN line for mlir-opt writes it."""
    out, i = [], 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok in ("-p", "--passes"):
            out += _pass_flags(tokens[i])
            i += 1
        elif tok.startswith("--passes="):
            out += _pass_flags(tok.split("=", 1)[1])
        elif tok == "--pass-pipeline":
            out.append(f"-pass-pipeline={_mlir_options(tokens[i])}")
            i += 1
        elif tok.startswith("--pass-pipeline="):
            out.append(_mlir_options(tok[1:]))
        elif tok.startswith("--"):
            out.append(tok[1:])
        else:
            out.append(tok)
    return out


def stages(command: str) -> list[tuple[list[str], bool]]:
    """The irkit-opt stages of a RUN pipeline (up to the first other tool), each as (argv,
    stderr merged into the next stage's input)."""
    tokens = shlex.split(command)
    out, cur = [], []
    for tok in tokens + ["|"]:
        if tok != "|":
            cur.append(tok)
            continue
        if cur and cur[0] == "not":
            cur = cur[1:]
        if not cur or cur[0] != "irkit-opt":
            break
        merged = "2>&1" in cur
        out.append(([t for t in cur[1:] if t not in _REDIRECTS], merged))
        cur = []
    return out


def substitute(argv: list[str], path: Path, tmp: Path) -> list[str]:
    subst = {"%s": str(path), "%t": str(tmp / "t"),
             "%test_passes": str(PLUGINS / "testing_passes.py")}
    pattern = re.compile("|".join(re.escape(k) for k in sorted(subst, key=len, reverse=True)))
    return [pattern.sub(lambda m: subst[m.group(0)], a) for a in argv]


def replay(command: str, path: Path, tmp: Path, rewrite) -> list[Result]:
    results, stdin = [], ""
    for argv, merged in stages(command):
        r = run_opt(substitute(rewrite(argv), path, tmp), stdin)
        results.append(r)
        stdin = r.out + (r.err if merged else "")
    return results


def _comparable(r: Result, command: str) -> Result:
    """What both spellings must agree on; wall times (`--mlir-timing`) vary run to run."""
    if "-mlir-timing" in command:
        return Result(r.rc, r.out, re.sub(r" +", " ", re.sub(r"[0-9]+\.[0-9]+", "T", r.err)))
    return r


@pytest.mark.parametrize("path", REPLAY_FILES, ids=lambda p: str(p.relative_to(FILECHECK)))
def test_replayed_run_lines_match(path: Path, tmp_path: Path) -> None:
    for _, _, command in opt_commands(path):
        original = replay(command, path, tmp_path, lambda a: a)
        rewritten = replay(command, path, tmp_path, to_mlir_style)
        assert original, f"no irkit-opt stage in {command!r}"
        for i, (a, b) in enumerate(zip(original, rewritten)):
            a, b = _comparable(a, command), _comparable(b, command)
            assert b == a, (f"{path.name}: stage {i + 1} of\n  {command}\nrewritten as\n  "
                            f"{shlex.join(to_mlir_style(stages(command)[i][0]))}\n"
                            f"differs: rc {a.rc} vs {b.rc}\n--- stderr (original) ---\n{a.err}"
                            f"\n--- stderr (rewritten) ---\n{b.err}")


def test_replay_covers_the_project_run_lines() -> None:
    """The replay sees the RUN lines and the rewrite changes them: a regression in either
    would make the comparison above vacuous."""
    commands = [c for p in REPLAY_FILES for _, _, c in opt_commands(p)]
    assert len(commands) >= 100
    spelled = [shlex.join(to_mlir_style(argv)) for c in commands for argv, _ in stages(c)]
    assert sum("-split-input-file" in s and "--split" not in s for s in spelled) >= 10
    assert sum("-pass-pipeline=" in s and "--pass-pipeline" not in s for s in spelled) >= 5
    assert sum(bool(re.search(r"(^| )--(canonicalize|cse)\b", s)) for s in spelled) >= 10
    assert any("region-simplify=disabled" in s for s in spelled)
    assert not any(re.search(r"(^| )(-p|--passes)( |=)", s) for s in spelled)


# Files whose lines are replayed through lit with FileCheck: the tool's own tests and the
# core's passes and dialects, which mlir-opt's own RUN lines exercise.
LIT_REPLAY = ["tools/irkit-opt", "passes/canonicalize.mlir", "passes/cse.mlir",
              "passes/inline.mlir", "passes/dce.mlir", "passes/symbol-dce.mlir",
              "passes/strip-debuginfo.mlir", "passes/loop-invariant-code-motion.mlir",
              "dialects/arith", "dialects/func", "dialects/math", "dialects/builtin"]


def _rewrite_file(path: Path) -> str:
    """The file with each irkit-opt RUN command in mlir-opt's spelling on its first line and
    its continuation lines blanked to comments, so every other line keeps its number
    (`--verify-diagnostics` annotations count lines)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for first, last, command in opt_commands(path):
        pieces = []
        for piece in re.split(r"\s\|\s", command):
            tokens = shlex.split(piece)
            lead = ["not"] if tokens[:1] == ["not"] else []
            tokens = tokens[len(lead):]
            if tokens[:1] == ["irkit-opt"]:
                tokens = ["irkit-opt", *to_mlir_style(tokens[1:])]
            pieces.append(" ".join(t if t in _REDIRECTS else shlex.quote(t)
                                   for t in lead + tokens))
        lines[first] = "// RUN: " + " | ".join(pieces)
        for k in range(first + 1, last + 1):
            lines[k] = "// (RUN line continued above)"
    return "\n".join(lines)


def _lit_failures(*roots: Path) -> tuple[set[tuple[str, str]], str]:
    """Run lit on the trees: the failing tests as (suite, path) and lit's output."""
    proc = subprocess.run([sys.executable, "-c", "import lit.main; lit.main.main()", "-v",
                           "-s", *map(str, roots)], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    failed = set(re.findall(r"^(?:FAIL|UNRESOLVED|XPASS|TIMEOUT): (\S+) :: (\S+)", out, re.M))
    assert "Total Discovered Tests" in out and (failed or proc.returncode == 0), out[-5000:]
    return failed, out


def _lit_tree(root: Path, suite: str, files: list[Path], text) -> Path:
    """A lit suite named `suite` at `root`/filecheck holding `files` as `text` gives them."""
    tree = root / "filecheck"
    tree.mkdir(parents=True)
    cfg = (FILECHECK / "lit.cfg.py").read_text(encoding="utf-8")
    (tree / "lit.cfg.py").write_text(cfg + f"\nconfig.name = {suite!r}\n", encoding="utf-8")
    (root / "plugins").symlink_to(PLUGINS)
    for path in files:
        dest = tree / path.relative_to(FILECHECK)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text(path), encoding="utf-8")
    return tree


def test_replayed_files_pass_filecheck(tmp_path: Path) -> None:
    """The rewritten files pass FileCheck wherever the originals do. A file the project's
    own suite fails at the moment, while work on it is under way, says nothing about the
    spelling: a failure is run again next to the original, at the same time, and counts
    only if the original passes."""
    pytest.importorskip("lit")
    pytest.importorskip("filecheck")
    files = []
    for entry in LIT_REPLAY:
        src = FILECHECK / entry
        files += [p for p in ([src] if src.is_file() else sorted(src.rglob("*.mlir")))
                  if "Output" not in p.parts and opt_commands(p)]
    assert len(files) >= 15
    failed, out = _lit_failures(_lit_tree(tmp_path / "all", "mlir-style", files,
                                          _rewrite_file))
    if failed:
        again = [FILECHECK / name for _, name in sorted(failed)]
        failed, out = _lit_failures(
            _lit_tree(tmp_path / "again", "mlir-style", again, _rewrite_file),
            _lit_tree(tmp_path / "original", "original", again,
                      lambda p: p.read_text(encoding="utf-8")))
        mine = {name for suite, name in failed if suite == "mlir-style"}
        theirs = {name for suite, name in failed if suite == "original"}
        assert mine <= theirs, f"fail only in mlir-opt's spelling: {sorted(mine - theirs)}\n" \
            + out[-15000:]
        assert len(mine) < len(files) // 2, out[-15000:]


# ---------------------------------------------------------------------------------------------
# Spellings
# ---------------------------------------------------------------------------------------------

FOLDABLE = """func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.addi %a, %c0 : i32
  %2 = arith.muli %0, %1 : i32
  return %2 : i32
}
"""

CHUNKS = """func.func private @a()
// -----
func.func private @b()
"""


@pytest.fixture
def src(tmp_path: Path) -> Path:
    p = tmp_path / "in.mlir"
    p.write_text(FOLDABLE)
    return p


def _ok(argv: list[str], stdin: str = "") -> str:
    r = run_opt(argv, stdin)
    assert r.rc == 0, r.err
    return r.out


def _pipeline(argv: list[str]) -> str:
    r = run_opt([*argv, "--dump-pass-pipeline", "-o", "/dev/null"])
    assert r.rc == 0, r.err
    return r.err


@pytest.mark.parametrize("flag", ["split-input-file", "mlir-print-op-generic",
                                  "mlir-print-debuginfo", "allow-unregistered-dialect",
                                  "verify-roundtrip", "mlir-disable-threading"])
def test_flags_take_one_dash_or_two(tmp_path: Path, flag: str) -> None:
    p = tmp_path / "c.mlir"
    p.write_text(CHUNKS)
    # The input after the flag stays the input (an optional value only comes after `=`).
    one, two = _ok([f"-{flag}", str(p)]), _ok([str(p), f"--{flag}"])
    assert one == two
    if flag == "split-input-file":
        assert one.count("// -----") == 1
    if flag == "mlir-print-op-generic":
        assert one.startswith('"builtin.module"()')


def _long_options() -> list[str]:
    from irkit.tools.opt import build_arg_parser
    return sorted(s[2:] for a in build_arg_parser()._actions for s in a.option_strings
                  if s.startswith("--"))


# A value for each irkit-opt option that takes one ({} is the test's folder); None: a flag.
OPTION_VALUES = {
    "passes": "cse", "pass-pipeline": "builtin.module(cse)", "verify-each": "false",
    "numeric-reproducer": "{}/repro.mlir", "load-pass-plugin": str(PLUGINS / "testing_passes.py"),
    "describe": "arith.addf", "mlir-print-ir-after": "cse", "mlir-print-ir-before": "cse",
    "split-input-file": None, "verify-diagnostics": None,
}


@pytest.mark.parametrize("name", _long_options())
def test_every_option_takes_one_dash(src: Path, tmp_path: Path, name: str) -> None:
    """Each long option of irkit-opt, with one dash and with two, does the same; an option
    added to the parser without a sample value here fails, so none is left out. A value is
    given as the next argument and after `=` (an optional value only after `=`)."""
    from irkit.tools.opt import build_arg_parser
    action = next(a for a in build_arg_parser()._actions if f"--{name}" in a.option_strings)
    if action.nargs != 0:
        assert name in OPTION_VALUES, f"add a sample value for --{name}"
    value = OPTION_VALUES.get(name)
    value = None if value is None else value.format(tmp_path)
    base = [str(src)] if name in ("passes", "pass-pipeline") else [str(src), "-p", "cse"]
    spellings = [[f"{dashes}{name}"] if value is None else [f"{dashes}{name}={value}"]
                 for dashes in ("-", "--")]
    if value is not None and action.nargs is None:
        spellings += [[f"{dashes}{name}", value] for dashes in ("-", "--")]
    results = [_comparable(run_opt([*base, *s]), "-mlir-timing") for s in spellings]
    assert results[0].rc == 0, results[0].err
    assert all(r == results[0] for r in results), spellings


def test_verify_each_takes_llvm_booleans(src: Path) -> None:
    want = _pipeline([str(src), "-canonicalize", "--verify-each=false"])
    assert _pipeline([str(src), "-canonicalize", "-verify-each=0"]) == want
    assert _pipeline([str(src), "-canonicalize", "-verify-each=FALSE"]) == want
    assert run_opt([str(src), "-verify-each=sometimes"]).rc == 2


def test_flag_with_boolean_value(src: Path) -> None:
    generic = _ok([str(src), "--mlir-print-op-generic"])
    custom = _ok([str(src)])
    assert _ok([str(src), "-mlir-print-op-generic=true"]) == generic
    assert _ok([str(src), "-mlir-print-op-generic=1"]) == generic
    assert _ok([str(src), "-mlir-print-op-generic=false"]) == custom
    assert generic != custom


def test_split_input_file_marker(tmp_path: Path) -> None:
    p = tmp_path / "m.mlir"
    p.write_text(CHUNKS.replace("// -----", "// ====="))
    assert _ok([str(p), "-split-input-file=// ====="]).count("// -----") == 1
    # The default marker does not split this file: @a and @b land in one module.
    assert "// -----" not in _ok([str(p), "-split-input-file"])


def test_verify_diagnostics_spellings(tmp_path: Path) -> None:
    p = tmp_path / "v.mlir"
    p.write_text("// expected-error @+2 {{use of undeclared SSA value name}}\n"
                 "func.func @f() -> i32 {\n  return %x : i32\n}\n"
                 "// -----\nfunc.func private @g()\n")
    for argv in (["-split-input-file", "-verify-diagnostics", str(p)],
                 [str(p), "--verify-diagnostics=all", "--split-input-file"]):
        r = run_opt(argv)
        assert r.rc == 0 and r.err == "", r.err


def test_pass_pipeline_is_never_p(src: Path) -> None:
    nested = "builtin.module(func.func(canonicalize,cse))"
    want = _pipeline([str(src), f"--pass-pipeline={nested}"])
    assert _pipeline([str(src), f"-pass-pipeline={nested}"]) == want
    assert _pipeline([f"-pass-pipeline", nested, str(src)]) == want
    assert _ok([str(src), f"-pass-pipeline={nested}"]) == _ok([str(src), "-p",
                                                                "canonicalize,cse"])


def test_pass_flags_do_not_swallow_the_input(src: Path) -> None:
    want = _ok([str(src), "-p", "canonicalize"])
    assert _ok(["-canonicalize", str(src)]) == want
    assert _ok(["--canonicalize", str(src)]) == want
    assert _ok([str(src), "-canonicalize"]) == want
    assert "arith.addi" not in want


def test_pass_flags_run_in_command_line_order(src: Path) -> None:
    assert _pipeline([str(src), "-cse", "--canonicalize"]) == _pipeline(
        [str(src), "-p", "cse,canonicalize"])
    assert _pipeline([str(src), "--canonicalize", "-cse"]) == _pipeline(
        [str(src), "-p", "canonicalize,cse"])
    assert _pipeline([str(src), "-cse", "-p", "canonicalize", "-dce"]) == _pipeline(
        [str(src), "-p", "cse,canonicalize,dce"])


@pytest.mark.parametrize("mlir_style, irkit_style", [
    ("-canonicalize=test-convergence", "canonicalize"),
    ("-canonicalize=test-convergence=true top-down=false", "canonicalize"),
    ("-canonicalize=max-iterations=3", "canonicalize{max-iterations=3}"),
    ("--canonicalize=max-iterations=3 region-simplify=disabled",
     "canonicalize{max-iterations=3 region-simplify=false}"),
    ("--canonicalize=region-simplify=aggressive max-num-rewrites=-1", "canonicalize"),
    ("--canonicalize=region-simplify=normal", "canonicalize{region-simplify=true}"),
    ("--canonicalize=region-simplify=false", "canonicalize{region-simplify=false}"),
    ("--inline=op-pipelines=func.func(canonicalize,cse)",
     "inline{default-pipeline='canonicalize,cse'}"),
    ("--inline=default-pipeline=cse op-pipelines={func.func(canonicalize)}",
     "inline{default-pipeline=canonicalize}"),
    ("--inline=default-pipeline= max-iterations=2",
     "inline{default-pipeline= max-iterations=2}"),
    ("--inline=default-pipeline={canonicalize{max-iterations=3 region-simplify=disabled}}",
     "inline{default-pipeline='canonicalize{max-iterations=3 region-simplify=false}'}"),
    ("--inline=inlining-threshold=4294967295", "inline"),
])
def test_mlir_pass_options_map_to_irkits(src: Path, mlir_style: str, irkit_style: str) -> None:
    assert _pipeline([str(src), mlir_style]) == _pipeline([str(src), "-p", irkit_style])


def test_mlir_options_inside_pipelines(src: Path) -> None:
    mlir = "builtin.module(func.func(canonicalize{region-simplify=disabled top-down=false}))"
    irkit = "builtin.module(func.func(canonicalize{region-simplify=false}))"
    assert _pipeline([str(src), f"-pass-pipeline={mlir}"]) == _pipeline(
        [str(src), f"--pass-pipeline={irkit}"])


def test_output_option_spellings(src: Path, tmp_path: Path) -> None:
    want = _ok([str(src)])
    for argv in (["-o", str(tmp_path / "a.mlir")], [f"-o={tmp_path / 'b.mlir'}"]):
        assert _ok([str(src), *argv]) == ""
    assert (tmp_path / "a.mlir").read_text() == want
    assert (tmp_path / "b.mlir").read_text() == want


def test_stdin_and_double_dash(tmp_path: Path, monkeypatch) -> None:
    assert _ok(["-", "-canonicalize"], stdin=FOLDABLE) == _ok(["-p", "canonicalize"],
                                                               stdin=FOLDABLE)
    # After `--` an argument is the input, even one that looks like a pass flag.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-canonicalize").write_text(FOLDABLE)
    out = _ok(["--", "-canonicalize"])
    assert "arith.addi" in out and out == _ok(["-"], stdin=FOLDABLE)


def test_other_options_in_one_dash(src: Path, tmp_path: Path) -> None:
    assert "--canonicalize" in _ok(["-list-passes"])
    assert "arith.addf" in _ok(["-describe=arith.addf"])
    assert "arith.addf" in _ok(["-describe", "arith.addf"])
    r = run_opt([str(src), "-canonicalize", "-mlir-print-ir-after=canonicalize", "-o",
                 "/dev/null"])
    assert r.rc == 0 and "IR Dump After" in r.err
    r = run_opt([str(src), "-load-pass-plugin", str(PLUGINS / "testing_passes.py"),
                 "-test-miscompile", "--dump-pass-pipeline", "-o", "/dev/null"])
    assert r.rc == 0 and "test-miscompile" in r.err
    r = run_opt([str(src), "-canonicalize", "-verify-each=numeric"])
    assert r.rc == 0, r.err


# ---------------------------------------------------------------------------------------------
# Errors of bad flags
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["-canonicalise"], "irkit-opt: error: unknown option '-canonicalise'; did you mean "
                        "'-canonicalize'?"),
    (["--split-input-fil"], "irkit-opt: error: unknown option '--split-input-fil'; did you "
                            "mean '--split-input-file'?"),
    (["-pcse"], "irkit-opt: error: unknown option '-pcse'; did you mean '-cse'? or write "
                "'-p cse' for the short option -p (one dash and several letters is a long "
                "option)"),
    (["-ofile.mlir"], "irkit-opt: error: unknown option '-ofile.mlir'; write '-o file.mlir' "
                      "for the short option -o"),
    (["-pass-pipelin=x"], "irkit-opt: error: unknown option '-pass-pipelin=x'; did you mean "
                          "'-pass-pipeline'? (see --help"),
    (["-o"], "irkit-opt: error: option '-o' requires a value"),
    (["-pass-pipeline"], "irkit-opt: error: option '-pass-pipeline' requires a value"),
    (["-mlir-print-op-generic=maybe"],
     "irkit-opt: error: option '-mlir-print-op-generic=maybe': 'maybe' is not a boolean"),
    (["-canonicalize=region-simplify=sometimes"],
     "irkit-opt: error: 'canonicalize' option 'region-simplify': expected disabled, normal "
     "or aggressive (or irkit's true / false), got 'sometimes'"),
    (["-canonicalize=test-convergence=perhaps"],
     "irkit-opt: error: 'canonicalize' option 'test-convergence': cannot read 'perhaps' as "
     "bool"),
    (["-canonicalize=enable-patterns=Foo"],
     "irkit-opt: error: 'canonicalize' option 'enable-patterns' is not supported by irkit"),
    (["-canonicalize=max-num-rewrites=5"],
     "irkit-opt: error: 'canonicalize' option 'max-num-rewrites' is not supported by irkit "
     "except at its default -1"),
    (["--inline=op-pipelines=llvm.func(cse)"],
     "irkit-opt: error: 'inline' option 'op-pipelines': irkit inlines only func.func "
     "callables"),
    (["--inline=op-pipelines=func.func(cse"],
     "irkit-opt: error: 'inline' option 'op-pipelines': unbalanced brackets"),
    (["-canonicalize=max-iterations={3"],
     "irkit-opt: error: 'canonicalize': unterminated value of option 'max-iterations'"),
    (["-canonicalize=max-iteration=3"],
     "irkit-opt: error: 'canonicalize' has no option 'max-iteration'"),
    (["-canonicalize=max-iterations=many"],
     "irkit-opt: error: 'canonicalize' option 'max-iterations': cannot read 'many' as int"),
    (["--inline=default-pipeline=canonicalise"],
     "irkit-opt: error: no pass named 'canonicalise'; did you mean 'canonicalize'?"),
])
def test_bad_flags_are_usage_errors(src: Path, argv: list[str], message: str) -> None:
    r = run_opt([str(src), *argv])
    assert r.rc == 2 and r.out == ""
    assert r.err.startswith(message), r.err


def test_verify_diagnostics_value_is_checked(src: Path) -> None:
    r = run_opt([str(src), "-verify-diagnostics=only-expected"])
    assert r.rc == 2 and r.out == "" and "invalid choice: 'only-expected'" in r.err


# ---------------------------------------------------------------------------------------------
# --verify-roundtrip
# ---------------------------------------------------------------------------------------------

TAGGED = """func.func @f() -> i32 {
  %0 = arith.constant {tag = "kept"} 7 : i32
  return %0 : i32
}
"""


def test_verify_roundtrip_passes_on_good_input(tmp_path: Path) -> None:
    p = tmp_path / "t.mlir"
    p.write_text(TAGGED + "// -----\n" + FOLDABLE)
    r = run_opt([str(p), "-verify-roundtrip", "-split-input-file", "-canonicalize"])
    assert r.rc == 0 and r.err == ""
    assert r.out == _ok([str(p), "-split-input-file", "-canonicalize"])


def test_verify_roundtrip_catches_a_lossy_custom_form(tmp_path: Path, monkeypatch) -> None:
    from irkit.dialects.arith import ConstantOp

    def lossy(self, p):          # drops the attribute dictionary
        p.write(" ")
        p.attr(self.properties["value"])

    monkeypatch.setattr(ConstantOp, "print", lossy)
    p = tmp_path / "t.mlir"
    p.write_text(TAGGED)
    assert run_opt([str(p)]).rc == 0
    r = run_opt([str(p), "--verify-roundtrip"])
    assert r.rc == 1 and r.out == ""
    assert r.err.startswith(f"{p}:1:1: error: round-trip testing: the module read back from "
                            "its custom form differs from the reference at line 3")
    assert 'note: reference: %0 = "arith.constant"() <{value = 7 : i32}> {tag = "kept"}' in r.err
    assert 'note: read back: %0 = "arith.constant"() <{value = 7 : i32}> : () -> i32' in r.err


def test_verify_roundtrip_catches_unreadable_output(tmp_path: Path, monkeypatch) -> None:
    from irkit.dialects.arith import ConstantOp
    monkeypatch.setattr(ConstantOp, "print", lambda self, p: p.write(" ???"))
    p = tmp_path / "t.mlir"
    p.write_text(TAGGED)
    r = run_opt([str(p), "-verify-roundtrip"])
    assert r.rc == 1
    assert "error: round-trip testing: the custom form irkit prints does not parse back" in r.err
    assert "<custom round-trip>:3:" in r.err


# ---------------------------------------------------------------------------------------------
# The real mlir-opt takes the same command lines
# ---------------------------------------------------------------------------------------------

SHARED_COMMAND_LINES = [
    ["-split-input-file", "-allow-unregistered-dialect", "-mlir-print-op-generic"],
    ["-pass-pipeline=builtin.module(func.func(canonicalize{region-simplify=disabled},cse))"],
    ["-canonicalize=test-convergence", "--cse"],
    ["-canonicalize=max-iterations=3 top-down=false", "-mlir-print-debuginfo"],
    ["--inline=op-pipelines=func.func(canonicalize,cse)"],
    ["-inline=default-pipeline= max-iterations=2", "-symbol-dce"],
    ["-verify-roundtrip", "-mlir-disable-threading", "-strip-debuginfo"],
    ["-loop-invariant-code-motion", "-mlir-print-op-generic=false"],
]


@needs_mlir
@pytest.mark.parametrize("argv", SHARED_COMMAND_LINES, ids=lambda a: " ".join(a))
def test_mlir_opt_takes_the_same_command_lines(src: Path, argv: list[str]) -> None:
    mlir = subprocess.run([MLIR_OPT, str(src), *argv], capture_output=True, text=True,
                          timeout=60)
    assert mlir.returncode == 0, f"mlir-opt rejects {argv}: {mlir.stderr}"
    r = run_opt([str(src), *argv])
    assert r.rc == 0, f"irkit-opt rejects {argv}: {r.err}"
    assert r.out.count("func.func") == mlir.stdout.count("func.func")
