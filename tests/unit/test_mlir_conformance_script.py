"""`bench/mlir_conformance.py` on `tests/interop/conformance/`: the side-by-side script runs,
its table adds up, the test files mean to MLIR what they say, and irkit holds the lines the
issue draws (no traceback, no numeric difference, its output read back by both tools).

The script runs once for this file (about 10 s, dominated by mlir-opt processes); the tests
read its printed table and its `--json` counts. They skip without `mlir-opt`, except the
run with `--without-mlir` (irkit's columns only).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "mlir_conformance.py"
FOLDER = ROOT / "tests" / "interop" / "conformance"
MLIR_OPT = shutil.which("mlir-opt") or next(
    (p for p in ["/usr/lib/llvm-22/bin/mlir-opt"] if Path(p).exists()), None)

needs_mlir = pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt not installed")

FILES = sorted(FOLDER.glob("*.mlir"))


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("conformance") / "counts.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(FOLDER), "--mlir-opt", MLIR_OPT,
                           "--json", str(out), "--details"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, json.loads(out.read_text())


def _chunks(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [c for c in re.split(r"^// -----$", text, flags=re.M) if c.strip()]


def _is_invalid(path: Path) -> bool:
    return "-verify-diagnostics" in path.read_text(encoding="utf-8").split("\n", 1)[0]


def test_the_folder_covers_what_the_issue_asks() -> None:
    names = {p.stem for p in FILES}
    assert {"arith", "math", "func", "builtin", "canonicalize", "cse", "inline",
            "invalid"} <= names
    assert any(_is_invalid(p) for p in FILES)
    assert sum(len(_chunks(p)) for p in FILES) >= 50


@needs_mlir
def test_every_file_and_chunk_is_counted(result) -> None:
    stdout, data = result
    for path in FILES:
        counts = data["files"][path.name]["counts"]
        assert counts["chunks"] == len(_chunks(path)), path.name
        assert data["files"][path.name]["invalid"] == _is_invalid(path)
        assert re.search(rf"^{re.escape(path.name)}\s+{len(_chunks(path))}\s", stdout, re.M)


@needs_mlir
def test_the_printed_totals_are_the_sums(result) -> None:
    stdout, data = result
    valid = [c["counts"] for c in data["files"].values() if not c["invalid"]]
    for key in ("chunks", "parsed both", "numeric agree"):
        assert data["total_valid"].get(key, 0) == sum(c.get(key, 0) for c in valid)
    tables = stdout.split("invalid file")
    total = re.search(r"^total\s+(\d+)\s+(\d+)\s", tables[0], re.M)
    assert total and int(total.group(1)) == data["total_valid"]["chunks"]
    assert int(total.group(2)) == data["total_valid"]["parsed both"]
    total = re.search(r"^total\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", tables[1], re.M)
    t = data["total_invalid"]
    assert [int(g) for g in total.groups()] == [t["chunks"], t["expect error"],
                                                 t["rejected"], t.get("exact", 0)]


@needs_mlir
def test_mlir_agrees_with_the_test_files(result) -> None:
    """The files are valid MLIR where they say so and their annotations are MLIR's own
    diagnostics, so the counts measure irkit and not the test data."""
    _, data = result
    for name, f in data["files"].items():
        c = f["counts"]
        if f["invalid"]:
            assert c.get("mlir disagrees", 0) == 0, f["details"]
            want = sum("expected-error" in ch for ch in _chunks(FOLDER / name))
            assert c["expect error"] == want
        else:
            assert c.get("mlir parsed", 0) == c["chunks"], f["details"]


@needs_mlir
def test_the_counts_are_consistent(result) -> None:
    _, data = result
    v, i = data["total_valid"], data["total_invalid"]
    assert v.get("parsed both", 0) + v.get("mlir only", 0) == v["mlir parsed"]
    assert v.get("fixpoint", 0) <= v["irkit parsed"]
    assert v.get("generic accepted", 0) <= v["irkit parsed"]
    assert i["rejected"] + i.get("wrongly accepted", 0) == i["expect error"]
    assert i.get("exact", 0) <= i["rejected"]
    compared = sum(v.get(f"{p} {k}", 0) for p in ("canonicalize", "cse")
                   for k in ("fewer", "equal", "more"))
    assert compared >= v["parsed both"]          # at least one function a chunk, each pass
    assert v.get("numeric agree", 0) >= 100


@needs_mlir
def test_irkit_never_crashes_and_computes_what_mlir_computes(result) -> None:
    _, data = result
    crashes = [d for f in data["files"].values() for d in f["details"] if "crashed" in d]
    assert data["total_valid"].get("crashes", 0) + data["total_invalid"].get("crashes", 0) == 0, \
        crashes
    differ = [d for f in data["files"].values() for d in f["details"] if "results differ" in d]
    assert data["total_valid"].get("numeric differ", 0) == 0, differ


@needs_mlir
def test_irkit_output_reads_back(result) -> None:
    """Every chunk irkit parses prints as a fixpoint (generic and custom form) and its
    generic output is valid input to mlir-opt: DESIGN.md's ground truth."""
    _, data = result
    v = data["total_valid"]
    details = [d for f in data["files"].values() for d in f["details"]
               if "fixpoint" in d or "generic output" in d]
    assert v.get("fixpoint", 0) == v["irkit parsed"], details
    assert v.get("generic accepted", 0) == v["irkit parsed"], details


def test_runs_without_mlir(tmp_path) -> None:
    out = tmp_path / "counts.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(FOLDER), "--without-mlir",
                           "--json", str(out)], capture_output=True, text=True, timeout=900,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "mlir-opt: not installed" in proc.stdout
    data = json.loads(out.read_text())
    assert data["mlir_opt"] is None
    for path in FILES:
        counts = data["files"][path.name]["counts"]
        assert counts["chunks"] == len(_chunks(path))
        assert "mlir parsed" not in counts and "mlir disagrees" not in counts
        assert not any(k.startswith(("canonicalize ", "cse ", "numeric")) for k in counts)
    t = data["total_invalid"]
    assert t["expect error"] == sum("expected-error" in ch for p in FILES if _is_invalid(p)
                                    for ch in _chunks(p))
    assert t["rejected"] + t.get("wrongly accepted", 0) == t["expect error"]
    assert re.search(r"^total\s+\d+\s+-\s+-\s+-\s", proc.stdout, re.M)
