"""Broken programs get located errors, never a traceback.

hypothesis mutates the valid example models token by token (delete, duplicate, swap
neighbours, insert a random character, rename an identifier, change a number such as a
shape), the way a person's typos do. Each mutant must either compile (and then verify) or
raise a `DSLError` rendered as `<file>:<line>:<col>: error: ...` with a position inside the
file; any other exception is a bug in the frontend or in an op's shape function.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.frontend.dsl import DSLError, compile_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = {p.name: p.read_text() for p in sorted(EXAMPLES.glob("*.irk"))}

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+\.?\d*(?:[eE][+-]?\d+)?|\*\*|[<>=!]=|\n|"
                    r"[ \t]+|#[^\n]*|.")
_HEAD = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: ")
_NAMES = ["x", "W", "b", "loss", "relu", "sum", "softmax", "N", "B", "f32", "i32", "model",
          "input", "param", "output", "if", "else", "fn", "return", "zeros", "glorot",
          "axis", "seed", "true", "grad", "wrt", "train", "with", "sgd", "const", "q"]


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


@st.composite
def mutants(draw):
    name = draw(st.sampled_from(sorted(SOURCES)))
    toks = tokens(SOURCES[name])
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(toks) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "rename",
                                     "number"]))
        if kind == "delete":
            del toks[i]
        elif kind == "duplicate":
            toks.insert(i, toks[i])
        elif kind == "swap" and i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
        elif kind == "insert":
            toks.insert(i, draw(st.sampled_from(list("()[]{},;:=+-*/@<>!#.\n \"'$?0x_\t"))))
        elif kind == "rename":
            idents = sorted({t for t in toks if t[0].isalpha() or t[0] == "_"})
            old = draw(st.sampled_from(idents))
            new = draw(st.sampled_from(_NAMES))
            every = draw(st.booleans())
            toks = [new if t == old and (every or j == i) else t for j, t in enumerate(toks)]
        elif kind == "number":
            nums = [j for j, t in enumerate(toks) if t[0].isdigit()]
            if nums:
                j = draw(st.sampled_from(nums))
                toks[j] = str(draw(st.sampled_from([0, 1, 2, 3, 7, 10, 64, 784, -1, 1.5])))
    return name, "".join(toks)


def check(name: str, text: str) -> None:
    try:
        compile_source(text, name)
    except DSLError as e:
        msg = str(e)
        m = _HEAD.match(msg)
        assert m is not None, msg
        assert m["file"] == name, msg
        line, col = int(m["line"]), int(m["col"])
        lines = text.split("\n")
        assert 1 <= line <= len(lines), msg
        assert 1 <= col <= len(lines[line - 1]) + 1, msg


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutants())
def test_mutants_compile_or_fail_located(case):
    check(*case)


def test_the_examples_themselves_compile():
    for name, text in SOURCES.items():
        compile_source(text, name)


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_arbitrary_text(text):
    check("junk.irk", text)


def test_known_tricky_inputs():
    for text in ["", "\n", "model", "model m {}", "model m { output }", "fn f() { return 1 }",
                 "model m { input x: f32[]; output x }", "const c = []",
                 "model m { input x: f32[0]; y = x[0]; output y }",
                 "model m { input x: f32[3]; y = x[::0]; output y }",
                 "model m { input x: f32[3]; y = if true { x } else { x }; output y }",
                 "model m { input x: f32[3]; y = [x, 1]; output y }",
                 "model m { input x: i1[3]; y = -x; output y }",
                 "model m { input x: f32[3]; y = split(x, 0); a, b = split(x, 3); output y }",
                 "model m { input x: f32[3]; y = one_hot(x, 3); output y }",
                 "model m { input x: f32[N]; y = broadcast_to(x, [N, -3]); output y }",
                 "model m { input x: f32[N]; y = x ** -x; z = not x; output y }",
                 "model m { input x: f32[3]; y = concat([], axis=0); output y }",
                 "model m { input x: f32[3]; y = transpose(x, perm=[5]); output y }",
                 "model m { input x: f32[3]; y = slice(x, start=[0, 1]); output y }",
                 "model m { input x: f32[2,2]; y = conv2d(x, x, stride=[1, 2, 3]); output y }",
                 "model m { input x: f32[1,1,4,4]; y = max_pool2d(x, kernel=0); output y }",
                 "model m { input x: f32; y = cast(x, q); output y }",
                 "model m { input x: f32; y = x[0]; output y }"]:
        check("tricky.irk", text)
