#!/usr/bin/env python3
"""Side by side with MLIR: a folder of MLIR test files through `mlir-opt` and `irkit-opt`.

    python bench/mlir_conformance.py DIR [--mlir-opt PATH] [--details] [--json FILE]
                                         [--seed 0] [--trials 3]

irkit promises that `builtin`, `func`, `arith` and `math` mean in irkit what they mean in
MLIR, and that irkit-opt is driven as mlir-opt is. This script measures both on test files
written for mlir-opt (MLIR's own, or ours in `tests/interop/conformance/`). Each `.mlir` file
is split on `// -----` lines, and every chunk runs through both tools with the options of the
file's first `RUN:` line, exactly as written there: irkit-opt reads mlir-opt's command lines.

A file whose RUN line has `-verify-diagnostics` is an invalid file; any other is a valid one.

Valid files, per chunk (the columns of the first table):
  parsed       both tools parse and verify the chunk / only mlir-opt / only irkit-opt
  fixpoint     of the chunks irkit parses, those `irkit-opt --verify-roundtrip` accepts: the
               generic and the custom form read back as the same module
  generic      of the chunks irkit parses, those whose generic output `mlir-opt` accepts
  canonicalize, cse, RUN
               for `-canonicalize`, `-cse` and the RUN line's own passes (when it names
               others), per function: irkit's op count after the pass against MLIR's, read
               back into irkit: fewer / equal / more
  numeric      per pass and function whose arguments and results are scalars, vectors or
               static tensors: `--trials` random inputs through irkit's interpreter, run on
               irkit's result and on MLIR's result (read back into irkit); agree / differ,
               n.a. where either run fails. Values are compared exactly (NaN equals NaN,
               -0.0 differs from 0.0).
  pass fails   passes that fail in irkit on a chunk that mlir-opt runs them on
  crashes      Python exceptions escaping irkit-opt, or passes reported as crashed

Invalid files, per chunk that expects an error (the second table):
  rejected     irkit-opt reports an error (any error, anywhere)
  exact        `irkit-opt -verify-diagnostics` passes: MLIR's messages at MLIR's lines
  accepted     irkit-opt reports no error: invalid IR accepted
  valid ok / wrongly rejected   chunks of an invalid file that expect no error
  mlir disagrees   chunks `mlir-opt -verify-diagnostics` itself fails (a bad annotation);
               they are left out of the other columns

Without mlir-opt (or with `--without-mlir`) only irkit's columns are filled (parsing,
fixpoint, pass failures, crashes, diagnostics); MLIR's show '-'. `--details` lists every
chunk, function and diagnostic behind a number that is not "equal" or "agree", located as
`file:line`; `--json` writes the counts and the details for scripts and tests.

This is a measurement, not a test: it exits 0 whatever the counts (2 on bad usage).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MLIR_OPT_FALLBACK = Path("/usr/lib/llvm-22/bin/mlir-opt")
SPLIT = "// -----"
# Options of a RUN line that govern parsing, kept for every run; the printing options are
# the script's to choose, the rest of the line is the file's pipeline.
PARSE_FLAGS = {"allow-unregistered-dialect", "mlir-disable-threading"}
DROPPED = {"split-input-file", "verify-diagnostics", "mlir-print-op-generic",
           "mlir-print-debuginfo", "o"}
MAX_ELEMENTS = 4096


# ---------------------------------------------------------------------------------------------
# Test files
# ---------------------------------------------------------------------------------------------


@dataclass
class TestFile:
    path: Path
    chunks: list[tuple[int, str]]       # (first line, text padded to the file's line numbers)
    flags: list[str]                    # parse options of the RUN line
    passes: list[str]                   # its pipeline, as mlir-opt options
    invalid: bool


def read_test_file(path: Path) -> TestFile:
    text = path.read_text(encoding="utf-8")
    argv = run_arguments(text)
    flags, passes, invalid = [], [], False
    skip_next = False
    for tok in argv:
        if skip_next:
            skip_next = False
            continue
        if tok in ("%s", "-"):
            continue
        name = tok.lstrip("-").split("=", 1)[0]
        if name == "verify-diagnostics":
            invalid = True
        if name == "o" and "=" not in tok:
            skip_next = True
        if name in DROPPED:
            continue
        (flags if name in PARSE_FLAGS else passes).append(tok)
    return TestFile(path, split_chunks(text), flags, passes, invalid)


def run_arguments(text: str) -> list[str]:
    """The arguments of the first `mlir-opt` (or `irkit-opt`) command of the RUN lines, up to
    the first pipe; continued lines (`\\`) joined."""
    command = ""
    for line in text.splitlines():
        m = re.match(r"\s*//\s*RUN:(.*)$", line)
        if m is None:
            continue
        part = m.group(1).strip()
        command += part[:-1] + " " if part.endswith("\\") else part
        if not part.endswith("\\"):
            tokens = shlex.split(command)
            if tokens[:1] == ["not"]:
                tokens = tokens[1:]
            if tokens[:1] in (["mlir-opt"], ["irkit-opt"]):
                return tokens[1:tokens.index("|") if "|" in tokens else len(tokens)]
            command = ""
    return []


def split_chunks(text: str) -> list[tuple[int, str]]:
    """The chunks between `// -----` lines, each padded with empty lines so that its line
    numbers are the file's (what diagnostics and annotations count)."""
    chunks, cur, start = [], [], 0
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines + [SPLIT]):
        if line.strip() == SPLIT:
            chunks.append((start + 1, "\n" * start + "".join(cur)))
            cur, start = [], i + 1
        else:
            cur.append(line)
    return chunks


# ---------------------------------------------------------------------------------------------
# The two tools
# ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    ok: bool
    out: str
    err: str
    crash: str | None = None


class Tools:
    """mlir-opt as a process (None when not installed), irkit-opt in this process."""

    def __init__(self, mlir_opt: str | None) -> None:
        from irkit.tools import register_all
        register_all()
        self.mlir_opt = mlir_opt

    def mlir(self, args: list[str], stdin: str | None = None) -> Run | None:
        if self.mlir_opt is None:
            return None
        try:
            p = subprocess.run([self.mlir_opt, *args], input=stdin, capture_output=True,
                               text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return Run(False, "", "mlir-opt: timed out")
        return Run(p.returncode == 0, p.stdout, p.stderr)

    @staticmethod
    def irkit(args: list[str], stdin: str = "") -> Run:
        from irkit.tools.opt import main
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        crash = None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = main(list(args))
                except SystemExit as e:
                    rc = e.code
                except RecursionError:
                    rc, crash = 1, "RecursionError"
                except Exception:           # a traceback is what this column counts
                    rc, crash = 1, traceback.format_exc(limit=-3)
        finally:
            sys.stdin = saved
        text = err.getvalue()
        if crash is None and "this is a bug in the pass" in text:
            crash = text.strip().splitlines()[0]
        return Run(rc == 0, out.getvalue(), text, crash)


# ---------------------------------------------------------------------------------------------
# Reading results back, counting, running
# ---------------------------------------------------------------------------------------------


def read_back(text: str, name: str):
    """A tool's generic output as an irkit module (unverified: it is only counted and run),
    or None when irkit cannot read it."""
    from irkit.diagnostics import IRError
    from irkit.parser import parse_module
    try:
        return parse_module(text, name, allow_unregistered=True, verify=False)
    except (IRError, RecursionError):
        return None


def functions(module) -> dict[str, object]:
    """Every `func.func` by its symbol path (`@outer::@f`)."""
    from irkit.symbols import symbol_name
    out = {}
    for op in module.walk(post_order=False):
        if op.name != "func.func":
            continue
        path, parent = [symbol_name(op)], op.parent_op
        while parent is not None:
            if symbol_name(parent):
                path.append(symbol_name(parent))
            parent = parent.parent_op
        out["::".join(f"@{p}" for p in reversed(path))] = op
    return out


def op_count(fn) -> int:
    return sum(1 for op in fn.walk() if op is not fn)


def compare_counts(irkit_fns: dict, mlir_fns: dict) -> dict[str, str]:
    """fewer / equal / more per function (a function one side erased has no ops there)."""
    out = {}
    for name in sorted(set(irkit_fns) | set(mlir_fns)):
        a = op_count(irkit_fns[name]) if name in irkit_fns else 0
        b = op_count(mlir_fns[name]) if name in mlir_fns else 0
        out[name] = "fewer" if a < b else "more" if a > b else "equal"
    return out


def random_inputs(ftype, rng: np.random.Generator, trial: int) -> list | None:
    """Inputs for a function type, or None when an argument type is not supported. Trial 0
    draws small values, 1 the whole range of each type, 2 and later also special values."""
    args = []
    for t in ftype.inputs:
        v = _random_value(t, rng, trial)
        if v is None:
            return None
        args.append(v)
    return args


def _random_value(t, rng: np.random.Generator, trial: int):
    from irkit.attributes import numpy_dtype
    from irkit.types import (FloatType, IndexType, IntegerType, RankedTensorType,
                             VectorType)
    if isinstance(t, (RankedTensorType, VectorType)):
        if any(d is None for d in t.shape) or int(np.prod(t.shape)) > MAX_ELEMENTS:
            return None
        if getattr(t, "scalable", None) and any(t.scalable):
            return None
        flat = [_random_value(t.element, rng, trial) for _ in range(int(np.prod(t.shape)))]
        if any(v is None for v in flat):
            return None
        return np.array(flat, dtype=numpy_dtype(t.element)).reshape(t.shape)
    if isinstance(t, IndexType):
        return int(rng.integers(-8, 9) if trial == 0 else rng.integers(-2**40, 2**40))
    if isinstance(t, IntegerType):
        if t.width > 64:
            return None
        if t.width == 1:
            return np.bool_(rng.integers(0, 2))
        dtype = np.dtype(numpy_dtype(t))
        info = np.iinfo(dtype)
        lo, hi = (max(info.min, -8), min(info.max, 8)) if trial == 0 else (info.min, info.max)
        if trial >= 2 and rng.random() < 0.5:
            return dtype.type(rng.choice([info.min, info.max, 0, -1 if info.min else 1]))
        return dtype.type(rng.integers(lo, hi, endpoint=True))
    if isinstance(t, FloatType) and t.name in ("f16", "f32", "f64", "bf16"):
        dtype = numpy_dtype(t)
        if trial >= 2 and rng.random() < 0.5:
            return dtype(rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]))
        scale = 4.0 if trial == 0 else 1e4
        return dtype(rng.normal() * scale)
    return None


def same_values(a, b) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return False
        if x.dtype.kind == "f" or y.dtype.kind == "f":
            if not (np.array_equal(x, y, equal_nan=True)
                    and np.array_equal(np.signbit(x), np.signbit(y))):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def run_function(module, name: str, args: list):
    """Run `name` of `module` in irkit's interpreter: (True, results) or (False, error)."""
    from irkit.interpreter import interpret
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        return True, interpret(module, name, *copies)
    except RecursionError:
        return False, "RecursionError"
    except Exception as e:          # interpreter errors, unsupported ops: n.a., not a crash
        return False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------


@dataclass
class Report:
    """One file's counts (the table's cells) and the findings behind them (`--details`)."""

    counts: Counter = field(default_factory=Counter)
    details: list[str] = field(default_factory=list)

    def note(self, where: str, what: str) -> None:
        self.details.append(f"{where}: {what}")


class Conformance:
    """Runs each chunk through both tools. Every chunk is written to a file of its own,
    padded to the original line numbers, so that both tools report (and `-verify-diagnostics`
    matches) the lines of the test file; the same file goes to both tools."""

    def __init__(self, tools: Tools, seed: int, trials: int, workdir: Path) -> None:
        self.tools, self.seed, self.trials, self.workdir = tools, seed, trials, workdir

    def run_file(self, tf: TestFile) -> Report:
        report = Report()
        for index, (line, chunk) in enumerate(tf.chunks):
            if not chunk.strip():
                continue
            path = self.workdir / f"{tf.path.stem}.{index}.mlir"
            path.write_text(chunk, encoding="utf-8")
            where = f"{tf.path.name}:{_first_code_line(chunk, line)}"
            report.counts["chunks"] += 1
            if tf.invalid:
                self._invalid_chunk(tf, path, chunk, where, report)
            else:
                self._valid_chunk(tf, path, where, report)
        return report

    # ----- valid files ------------------------------------------------------------------------

    def _valid_chunk(self, tf: TestFile, path: Path, where: str, report: Report) -> None:
        c = report.counts
        generic = ["--mlir-print-op-generic"]
        mine = self._irkit([*tf.flags, *generic, str(path)], where, report)
        theirs = self.tools.mlir([*tf.flags, *generic, str(path)])
        if theirs is not None:
            c["mlir parsed"] += theirs.ok
            if theirs.ok and mine.ok:
                c["parsed both"] += 1
            elif theirs.ok:
                c["mlir only"] += 1
                report.note(where, f"irkit rejects what mlir-opt parses: {_first(mine.err)}")
            elif mine.ok:
                c["irkit only"] += 1
                report.note(where, f"mlir-opt rejects what irkit parses: {_first(theirs.err)}")
        if not mine.ok:
            return
        c["irkit parsed"] += 1
        rt = self._irkit([*tf.flags, "--verify-roundtrip", "-o", "/dev/null", str(path)],
                         where, report)
        c["fixpoint"] += rt.ok
        if not rt.ok:
            report.note(where, f"not a fixpoint: {_first(rt.err)}")
        accepted = self.tools.mlir([*tf.flags, "-o", "/dev/null", "-"], stdin=mine.out)
        if accepted is not None:
            c["generic accepted"] += accepted.ok
            if not accepted.ok:
                report.note(where, f"mlir-opt rejects irkit's generic output: "
                                   f"{_first(accepted.err)}")
        if theirs is not None and not theirs.ok:
            return
        for label, passes in self._pipelines(tf):
            self._compare_pass(tf, path, label, passes, where, report)

    def _pipelines(self, tf: TestFile) -> list[tuple[str, list[str]]]:
        out = [("canonicalize", ["-canonicalize"]), ("cse", ["-cse"])]
        if tf.passes and [p.lstrip("-") for p in tf.passes] not in (["canonicalize"], ["cse"]):
            out.append(("RUN", tf.passes))
        return out

    def _compare_pass(self, tf: TestFile, path: Path, label: str, passes: list[str],
                      where: str, report: Report) -> None:
        c = report.counts
        args = [*tf.flags, *passes, "--mlir-print-op-generic", str(path)]
        theirs = self.tools.mlir(args)
        if theirs is not None and not theirs.ok:
            return                      # MLIR's pass fails: nothing to compare with
        mine = self._irkit(args, where, report)
        if not mine.ok:
            c["pass fails"] += 1
            report.note(where, f"{label}: irkit fails where mlir-opt does not: "
                               f"{_first(mine.err)}")
            return
        if theirs is None:
            return
        a = read_back(mine.out, f"<irkit {label}>")
        b = read_back(theirs.out, f"<mlir-opt {label}>")
        if a is None or b is None:
            c[f"{label} unreadable"] += 1
            report.note(where, f"{label}: irkit cannot read {'irkit' if a is None else 'MLIR'}"
                               f"'s result back")
            return
        fa, fb = functions(a), functions(b)
        for name, verdict in compare_counts(fa, fb).items():
            c[f"{label} {verdict}"] += 1
            if verdict != "equal":
                na = op_count(fa[name]) if name in fa else 0
                nb = op_count(fb[name]) if name in fb else 0
                report.note(where, f"{label} {name}: irkit {na} ops, MLIR {nb} ({verdict})")
        for name in sorted(set(fa) & set(fb)):
            self._compare_numbers(a, b, fa[name], name, label, where, report)

    def _compare_numbers(self, a, b, fn, name: str, label: str, where: str,
                         report: Report) -> None:
        c = report.counts
        if "::" in name or fn.is_declaration:
            return
        rng = np.random.default_rng([self.seed, sum(map(ord, where + name + label))])
        for trial in range(self.trials):
            args = random_inputs(fn.properties["function_type"].value, rng, trial)
            if args is None:
                c["numeric n.a."] += 1
                return
            ok_a, ra = run_function(a, name[1:], args)
            ok_b, rb = run_function(b, name[1:], args)
            if not (ok_a and ok_b):
                c["numeric n.a."] += 1
                if ok_a != ok_b:
                    report.note(where, f"{label} {name}: only {'MLIR' if ok_b else 'irkit'}'s "
                                       f"result runs ({ra if not ok_a else rb}) on {args}")
                continue
            if same_values(ra, rb):
                c["numeric agree"] += 1
            else:
                c["numeric differ"] += 1
                report.note(where, f"{label} {name}: results differ on {args}: irkit {ra!r}, "
                                   f"MLIR {rb!r}")

    # ----- invalid files ----------------------------------------------------------------------

    def _invalid_chunk(self, tf: TestFile, path: Path, chunk: str, where: str,
                       report: Report) -> None:
        c = report.counts
        expects_error = re.search(r"expected-error", chunk) is not None
        base = [*tf.flags, *tf.passes, "-o", "/dev/null", str(path)]
        theirs = self.tools.mlir(["--verify-diagnostics", *base])
        if theirs is not None and not theirs.ok:
            c["mlir disagrees"] += 1
            report.note(where, f"mlir-opt fails its own annotations: {_first(theirs.err)}")
            return
        exact = self._irkit(["--verify-diagnostics", *base], where, report)
        plain = self._irkit(base, where, report)
        if not expects_error:
            c["valid ok" if plain.ok else "valid rejected"] += 1
            if not plain.ok:
                report.note(where, f"valid chunk rejected: {_first(plain.err)}")
            return
        c["expect error"] += 1
        if plain.ok:
            c["wrongly accepted"] += 1
            report.note(where, "invalid IR accepted")
            return
        c["rejected"] += 1
        c["exact"] += exact.ok
        if not exact.ok:
            report.note(where, f"rejected, not as MLIR does: {_first(exact.err)}")

    def _irkit(self, args: list[str], where: str, report: Report) -> Run:
        r = self.tools.irkit(args)
        if r.crash is not None:
            report.counts["crashes"] += 1
            report.note(where, f"irkit-opt {' '.join(args[:-1])} crashed: "
                               f"{_first(r.crash.strip().splitlines()[-1])}")
        return r


def _first_code_line(chunk: str, default: int) -> int:
    """The line of a chunk's first op, for `file:line` in the details."""
    for i, text in enumerate(chunk.split("\n"), start=1):
        if text.strip() and not text.strip().startswith("//"):
            return i
    return default


def _first(err: str) -> str:
    """The first error line of a tool's stderr, its location reduced to `line:col`."""
    lines = [ln for ln in err.splitlines() if "error" in ln] or err.splitlines() or [""]
    return re.sub(r"^\S*?:(\d+:\d+): ", r"\1: ", lines[0].strip())


# ---------------------------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------------------------


def _fem(c: Counter, label: str) -> str:
    cells = [c[f"{label} {k}"] for k in ("fewer", "equal", "more")]
    return " / ".join(map(str, cells)) if any(cells) else "-"


def valid_row(name: str, c: Counter, have_mlir: bool) -> list[str]:
    m = (lambda v: str(v)) if have_mlir else (lambda v: "-")
    numeric = [c["numeric agree"], c["numeric differ"], c["numeric n.a."]]
    return [name, str(c["chunks"]), m(c["parsed both"]), m(c["mlir only"]), m(c["irkit only"]),
            f"{c['fixpoint']}/{c['irkit parsed']}",
            m(f"{c['generic accepted']}/{c['irkit parsed']}"),
            _fem(c, "canonicalize"), _fem(c, "cse"), _fem(c, "RUN"),
            " / ".join(map(str, numeric)) if have_mlir else "-",
            str(c["pass fails"]), str(c["crashes"])]


VALID_HEADER = [["valid file", "chunks", "parsed", "mlir", "irkit", "fixpoint", "generic",
                 "canonicalize", "cse", "RUN", "numeric", "pass", "crashes"],
                ["", "", "by both", "only", "only", "", "->mlir", "fewer/eq/more",
                 "fewer/eq/more", "fewer/eq/more", "agree/differ/n.a.", "fails", ""]]


def invalid_row(name: str, c: Counter, have_mlir: bool) -> list[str]:
    return [name, str(c["chunks"]), str(c["expect error"]), str(c["rejected"]), str(c["exact"]),
            str(c["wrongly accepted"]), f"{c['valid ok']} / {c['valid rejected']}",
            str(c["mlir disagrees"]) if have_mlir else "-", str(c["crashes"])]


INVALID_HEADER = [["invalid file", "chunks", "expect", "rejected", "exact", "wrongly",
                   "valid chunks", "mlir", "crashes"],
                  ["", "", "an error", "", "match", "accepted", "ok / rejected", "disagrees",
                   ""]]


def table(header: list[list[str]], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in header + rows) for i in range(len(header[0]))]
    rule = "  ".join("-" * w for w in widths)

    def line(r: list[str]) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
    body = [line(r) for r in rows]
    return "\n".join([*(line(h) for h in header), rule, *body[:-1], rule, body[-1]]) + "\n"


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def find_mlir_opt(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    return shutil.which("mlir-opt") or (str(MLIR_OPT_FALLBACK)
                                        if MLIR_OPT_FALLBACK.exists() else None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="folder of .mlir test files (searched "
                                              "recursively)")
    ap.add_argument("--mlir-opt", default=None, help="the mlir-opt to compare with")
    ap.add_argument("--without-mlir", action="store_true",
                    help="fill irkit's columns only, as where mlir-opt is not installed")
    ap.add_argument("--details", action="store_true",
                    help="list what lies behind every count that is not equal or agree")
    ap.add_argument("--json", type=Path, default=None, help="write counts and details here")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=3, help="random inputs per function")
    args = ap.parse_args(argv)
    files = sorted(args.folder.rglob("*.mlir"))
    if not files:
        ap.error(f"no .mlir files under {args.folder}")
    mlir_opt = None if args.without_mlir else find_mlir_opt(args.mlir_opt)
    tools = Tools(mlir_opt)
    reports: dict[str, tuple[TestFile, Report]] = {}
    with tempfile.TemporaryDirectory(prefix="mlir-conformance-") as tmp:
        conformance = Conformance(tools, args.seed, args.trials, Path(tmp))
        for path in files:
            tf = read_test_file(path)
            reports[str(path.relative_to(args.folder))] = (tf, conformance.run_file(tf))
    sys.stdout.write(render(args.folder, mlir_opt, reports, args))
    if args.json is not None:
        args.json.write_text(json.dumps({
            "mlir_opt": mlir_opt,
            "files": {n: {"invalid": tf.invalid, "counts": dict(r.counts), "details": r.details}
                      for n, (tf, r) in reports.items()},
            "total_valid": dict(_total(reports, False)),
            "total_invalid": dict(_total(reports, True)),
        }, indent=1), encoding="utf-8")
    return 0


def _total(reports: dict, invalid: bool) -> Counter:
    total = Counter()
    for tf, r in reports.values():
        if tf.invalid == invalid:
            total.update(r.counts)
    return total


def render(folder: Path, mlir_opt: str | None, reports: dict, args) -> str:
    have = mlir_opt is not None
    out = [f"MLIR conformance of {folder} (mlir-opt: {mlir_opt or 'not installed'}; "
           f"seed {args.seed}, {args.trials} trials)\n"]
    for invalid, header, row in ((False, VALID_HEADER, valid_row),
                                 (True, INVALID_HEADER, invalid_row)):
        rows = [row(n, r.counts, have) for n, (tf, r) in reports.items() if tf.invalid == invalid]
        if rows:
            rows.append(row("total", _total(reports, invalid), have))
            out.append("\n" + table(header, rows))
    details = [d for _, r in reports.values() for d in r.details]
    if args.details and details:
        out.append("\nDetails:\n" + "".join(f"  {d}\n" for d in details))
    elif details:
        out.append(f"\n{len(details)} findings behind these numbers; --details lists them.\n")
    return "".join(out)


if __name__ == "__main__":
    sys.exit(main())
