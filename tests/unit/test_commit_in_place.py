"""commit-in-place (passes/commit_in_place.py): the update written into the variable under the
status test computes what the temporary and its guarded copy did, for a step that passes
its checks and for one that fails them (the variables then as they were), on the reference
interpreter and compiled; the models' training steps through the whole pipeline are the
other tests' (test_runtime_checks: a failed Adam step leaves every variable as it was)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.tools import register_all

register_all()

CASES = (Path(__file__).parent.parent / "filecheck" / "passes" / "commit-in-place.mlir")

#: the functions of the FileCheck file and the shapes of their arguments (the status last
#: where it has one); their variables are the first `VARIABLES` arguments
VARIABLES = {"sgd": 1, "adam": 3, "unguarded": 1, "read_between": 1, "transposed": 1}
SIGNATURES = {
    "sgd": [(4, 8), (4, 8), "status"],
    "adam": [(16,), (16,), (16,), (16,), "status"],
    "unguarded": [(8,), (8,)],
    "read_between": [(8,), (8,), (8,), "status"],
    "transposed": [(4, 4), "status"],
}


def _module(rewritten: bool):
    m = parse_module(CASES.read_text(), str(CASES))
    if rewritten:
        PassManager.parse("commit-in-place").run(m)
    return m


def _run(module, name: str, args: list) -> list:
    copies = [np.array(a) for a in args]
    Interpreter(module).call(lookup_symbol_in(module, name), copies)
    return copies


def test_the_rewrite_happens_where_the_filecheck_says():
    """The model of the property below: the rewritten functions lost their temporaries."""
    text = str(_module(True))
    for name, rewritten in (("sgd", True), ("adam", True), ("unguarded", True),
                            ("read_between", False), ("transposed", False)):
        body = text.split(f"func.func @{name}(")[1].split("func.func @")[0]
        assert ("memory.copy" not in body) == rewritten, name


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(SIGNATURES)), seed=st.integers(0, 2**31 - 1),
       failed=st.booleans())
def test_interpreter_results_are_unchanged(name, seed, failed):
    rng = np.random.default_rng(seed)
    args = []
    for shape in SIGNATURES[name]:
        if shape == "status":
            args.append(np.array([3 if failed else 0, 0, 0], np.int64))
        else:
            args.append(rng.standard_normal(shape).astype(np.float32) + 2.0)
    before = _run(_module(False), name, args)
    after = _run(_module(True), name, args)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    if failed and "status" in SIGNATURES[name]:      # no variable written
        for given_arg, a in zip(args[:VARIABLES[name]], after):
            np.testing.assert_array_equal(a, given_arg)


pytest.importorskip("llvmlite")


@pytest.mark.parametrize("failed", [False, True])
def test_compiled_adam_update_equals_the_interpreter(failed):
    """The fused Adam update in place, compiled (loops, vectors) as the interpreter runs it."""
    from irkit.backends.llvm_cpu import compile_module
    m = _module(True)
    PassManager.parse("lower-linalg-to-loop,canonicalize,cse,loop-vectorize").run(m)
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(16).astype(np.float32) + 2.0 for _ in range(4)]
    args.append(np.array([3 if failed else 0, 0, 0], np.int64))
    want = _run(_module(False), "adam", args)
    got = [np.array(a) for a in args]
    compile_module(m).adam(*got)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
