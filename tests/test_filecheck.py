"""Run the FileCheck-style IR tests under `tests/filecheck` with lit, so `pytest` covers them.

lit runs in a subprocess (with this interpreter, so the installed `irkit` is the one tested);
on failure the assertion message lists the failing tests and lit's output for each, which is
what one needs to fix them without rerunning lit by hand.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FILECHECK_DIR = Path(__file__).resolve().parent / "filecheck"


def _count_tests() -> int:
    return sum(1 for p in FILECHECK_DIR.rglob("*.mlir") if "Output" not in p.parts)


def test_filecheck_suite() -> None:
    pytest.importorskip("lit")
    pytest.importorskip("filecheck")
    assert _count_tests() > 0, f"no .mlir tests found under {FILECHECK_DIR}"
    # lit has no `__main__`, hence `-c`. `-v` shows the RUN lines and FileCheck's messages for
    # failing tests only; `-s` keeps the per-test PASS lines out of the captured text.
    proc = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", "-s",
         str(FILECHECK_DIR)],
        capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    failed = [line.strip() for line in out.splitlines()
              if line.startswith(("FAIL:", "UNRESOLVED:", "XPASS:", "TIMEOUT:"))]
    assert proc.returncode == 0 and not failed, (
        f"lit failed (exit {proc.returncode}); failing tests:\n  " + "\n  ".join(failed)
        + "\n\n" + out[-20000:])
    assert "Passed" in out, f"lit ran no tests:\n{out}"
