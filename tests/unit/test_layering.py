"""The layering of docs/layout.md, as the `import-linter` contracts in `pyproject.toml` state
it: each layer imports only the layers below it, sibling dialects are independent where the
contract says so, the split dialects import their parts in order, and no imports form a
cycle at any depth (function-level imports count too).

`lint-imports` finds a package's modules by walking the package's folder, but `irkit` is
spread over several top-level folders that `pyproject.toml` maps into its namespace
(`dialects/` is `irkit.dialects`). So the test first lays out the installed namespace as a
tree of links, from that same mapping, and points `lint-imports` at it: a new top-level
folder mapped there is checked with no change here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def _lint_imports() -> list[str]:
    """The command that runs import-linter with this interpreter (the test extra installs
    it next to pytest)."""
    exe = Path(sys.executable).with_name("lint-imports")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed: `pip install -e '.[test]'` installs it "
                    "(the layering contracts in pyproject.toml are part of the suite)")
    return [found]


def namespace_tree(dest: Path) -> Path:
    """`dest/irkit`: a folder whose entries link to the files of `irkit/` and to every
    folder that `pyproject.toml` maps to a subpackage of `irkit` (`irkit.dialects` ->
    `dialects/`), so that walking it finds every module under its import name."""
    mapping = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-dir"]
    top = dest / "irkit"
    top.mkdir()
    for entry in (ROOT / mapping["irkit"]).iterdir():
        if entry.name != "__pycache__":
            (top / entry.name).symlink_to(entry)
    for name, folder in mapping.items():
        parts = name.split(".")
        if parts[0] != "irkit" or len(parts) != 2:
            continue
        assert not (top / parts[1]).exists(), f"{name} is both a folder of irkit/ and mapped"
        (top / parts[1]).symlink_to(ROOT / folder)
    return top


def run_contracts(tree_root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` over the namespace laid out under `tree_root`, with the contracts of
    pyproject.toml. It runs in `tree_root`, which import-linter puts first on the path, so
    the laid-out tree is the `irkit` it analyses."""
    env = dict(os.environ, PYTHONPATH=str(tree_root))
    return subprocess.run([*_lint_imports(), "--no-cache", str(PYPROJECT)], cwd=tree_root,
                          env=env, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold(tmp_path):
    namespace_tree(tmp_path)
    result = run_contracts(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    """The check can fail: the core's `ir` made to import a pass is reported as a broken
    layer and a cycle, naming the import."""
    top = namespace_tree(tmp_path)
    (top / "ir.py").unlink()
    text = (ROOT / "irkit" / "ir.py").read_text()
    (top / "ir.py").write_text(text + "\n\ndef _upward():\n    import irkit.passes.cse\n")
    result = run_contracts(tmp_path)
    assert result.returncode != 0
    assert "irkit.ir is not allowed to import irkit.passes" in result.stdout, result.stdout
    assert "No cycles are allowed in irkit." in result.stdout, result.stdout


def test_every_mapped_folder_is_a_layer_of_the_contract():
    """Each folder pyproject.toml maps into the namespace has its place in the layers
    contract (the contract is exhaustive, so lint-imports also refuses an unplaced core
    module or dialect; this names the folder)."""
    config = tomllib.loads(PYPROJECT.read_text())
    mapped = {name.split(".")[1] for name in config["tool"]["setuptools"]["package-dir"]
              if name.count(".") == 1}
    layers = next(c for c in config["tool"]["importlinter"]["contracts"]
                  if c["id"] == "layers")["layers"]
    placed = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    assert mapped <= placed, mapped - placed


def test_every_package_folder_is_installed():
    """Every folder holding an `__init__.py` under a mapped folder is in pyproject.toml's
    `packages` list: an editable install finds a package that is missing there, a wheel does
    not (the fusion dialect was once missing)."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((name, *parts)))
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
