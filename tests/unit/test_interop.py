"""Interop with the real MLIR: irkit reads what `mlir-opt` writes, and the reverse.

DESIGN.md makes MLIR's generic form the ground truth: irkit's generic output must be valid
input to `mlir-opt --allow-unregistered-dialect`, and irkit must read MLIR's generic output
back. Two corpora check that:

- `../shared/interop/mlir/*.mlir`, files the real `mlir-opt` 22 accepts (skipped when the
  folder is absent, as in a bare clone);
- `tests/interop/*.mlir`, custom-form MLIR of our own over many upstream dialects. irkit has
  no `scf`, `memref`, `linalg`... so it can only read these once `mlir-opt` has turned them
  into generic form; that is the "files in generic form we have not seen" case.

Each check is its own test so a failure names the file and the step. The `mlir-opt` checks
skip when the tool is missing (install it with `scripts/install-deps.sh`).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from irkit.diagnostics import IRError
from irkit.parser import parse_module
from irkit.printer import print_op

import shared_corpus

ROOT = Path(__file__).resolve().parents[2]
OURS = ROOT / "tests" / "interop"


def _find_mlir_opt() -> str | None:
    found = shutil.which("mlir-opt")
    if found:
        return found
    fallback = Path("/usr/lib/llvm-22/bin/mlir-opt")
    return str(fallback) if fallback.exists() else None


MLIR_OPT = _find_mlir_opt()
needs_mlir = pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt not installed "
                                "(scripts/install-deps.sh installs mlir-22-tools)")

#: dialects irkit registers that upstream MLIR does not have: their custom forms are irkit's
IRKIT_ONLY_DIALECTS = {"graph", "autodiff", "loop", "memory", "fusion", "parallel", "mpi"}

SHARED_FILES = shared_corpus.FILES
OUR_FILES = sorted(OURS.glob("*.mlir"))


def _ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def mlir_opt(text: str, *args: str) -> str:
    """Run `mlir-opt --allow-unregistered-dialect` on `text`; fail with its diagnostics."""
    proc = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *args, "-"],
                          input=text, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"mlir-opt rejected the input:\n{proc.stderr}\n--- input ---\n{text}")
    return proc.stdout


def irkit_read(text: str, filename: str) -> object:
    """Parse and verify with irkit; a failure shows irkit's located diagnostic."""
    try:
        return parse_module(text, filename, allow_unregistered=True)
    except IRError as e:
        pytest.fail(f"irkit rejected {filename}:\n{e.render()}")


def generic(text: str, filename: str) -> str:
    return print_op(irkit_read(text, filename), generic=True)


def assert_fixpoint(text: str, filename: str) -> str:
    """irkit's generic print of `text` reads back to the same text; returns that text."""
    once = generic(text, filename)
    twice = generic(once, filename + " (irkit generic output)")
    assert twice == once, f"{filename}: generic print/parse/print is not a fixpoint"
    return once


# ----- the shared corpus --------------------------------------------------------------------

@pytest.mark.skipif(not shared_corpus.SHARED_MLIR.is_dir(),
                    reason=f"{shared_corpus.SHARED_MLIR} is absent")
def test_shared_corpus_present() -> None:
    assert SHARED_FILES, f"no .mlir files in {shared_corpus.SHARED_MLIR}"


@pytest.mark.parametrize("path", SHARED_FILES, ids=_ids(SHARED_FILES))
def test_shared_parses_and_fixpoint(path: Path) -> None:
    assert_fixpoint(shared_corpus.read(path), str(path))


@needs_mlir
@pytest.mark.parametrize("path", SHARED_FILES, ids=_ids(SHARED_FILES))
def test_shared_mlir_accepts_irkit_output(path: Path) -> None:
    mlir_opt(assert_fixpoint(shared_corpus.read(path), str(path)), "--mlir-print-op-generic")


@needs_mlir
@pytest.mark.parametrize("path", SHARED_FILES, ids=_ids(SHARED_FILES))
def test_shared_irkit_reads_mlir_output(path: Path) -> None:
    mlir_generic = mlir_opt(shared_corpus.read(path), "--mlir-print-op-generic")
    ours = assert_fixpoint(mlir_generic, f"{path.name} (mlir-opt generic output)")
    # Both tools printing the same module: MLIR's rendering of irkit's output is MLIR's own.
    assert mlir_opt(ours, "--mlir-print-op-generic") == mlir_generic


# ----- our own files, through mlir-opt's generic form ---------------------------------------

def test_own_corpus_present() -> None:
    assert len(OUR_FILES) >= 5, f"expected the interop corpus in {OURS}"


@needs_mlir
@pytest.mark.parametrize("path", OUR_FILES, ids=_ids(OUR_FILES))
def test_own_round_trip(path: Path) -> None:
    """mlir-opt generic -> irkit (fixpoint) -> mlir-opt again, which must print the same."""
    mlir_generic = mlir_opt(path.read_text(), "--mlir-print-op-generic")
    ours = assert_fixpoint(mlir_generic, f"{path.name} (mlir-opt generic output)")
    again = mlir_opt(ours, "--mlir-print-op-generic")
    assert again == mlir_generic, f"{path.name}: mlir-opt reads irkit's output differently"


@needs_mlir
@pytest.mark.parametrize("path", OUR_FILES, ids=_ids(OUR_FILES))
def test_own_round_trip_with_locations(path: Path) -> None:
    """The same with `loc(...)` on every op, which exercises irkit's location syntax."""
    mlir_generic = mlir_opt(path.read_text(), "--mlir-print-op-generic",
                            "--mlir-print-debuginfo")
    module = irkit_read(mlir_generic, f"{path.name} (mlir-opt generic output, debuginfo)")
    ours = print_op(module, generic=True, debuginfo=True)
    again = mlir_opt(ours, "--mlir-print-op-generic", "--mlir-print-debuginfo")
    assert again == mlir_generic, f"{path.name}: locations do not survive irkit"


@needs_mlir
@pytest.mark.parametrize("path", SHARED_FILES + OUR_FILES, ids=_ids(SHARED_FILES + OUR_FILES))
def test_custom_form_accepted_by_mlir(path: Path) -> None:
    """irkit's custom (pretty) forms of builtin/func/arith/math mean the same to mlir-opt.
    A file using a dialect only irkit has (`fusion.group` in unregistered_region.mlir) has
    no custom form mlir-opt could know; its generic form is checked by
    test_shared_mlir_accepts_irkit_output."""
    mlir_generic = mlir_opt(shared_corpus.read(path), "--mlir-print-op-generic")
    module = irkit_read(mlir_generic, f"{path.name} (mlir-opt generic output)")
    own = sorted({op.name.partition(".")[0] for op in module.walk()} & IRKIT_ONLY_DIALECTS)
    if own:
        pytest.skip(f"{path.name} uses irkit's own dialects ({', '.join(own)}): mlir-opt "
                    "reads only their generic form")
    again = mlir_opt(print_op(module), "--mlir-print-op-generic")
    assert again == mlir_generic, f"{path.name}: mlir-opt reads irkit's custom form differently"
