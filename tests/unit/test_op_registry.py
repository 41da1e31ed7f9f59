"""Contract tests generated from the op registry: adding an op makes it test itself.

For every registered op:
- its docstring carries an example in the IR's own syntax, which parses, prints back to the
  same text in custom form, and survives a generic-form round trip;
- self-contained examples (whole functions or modules) also verify;
- the op appears in at least one FileCheck test under tests/filecheck.
"""

from __future__ import annotations

import pathlib
import re
import textwrap

import pytest

from irkit.dialects import load_all
from irkit.opdef import registered_ops
from irkit.parser import parse_module, parse_snippet
from irkit.printer import print_op

load_all()
OPS = sorted(registered_ops().items())
ROOT = pathlib.Path(__file__).resolve().parents[2]
# Ops that only exist inside irkit's own machinery and need no example of their own.
_SNIPPET_WRAPPER = "irkit.snippet"


def docstring_example(cls) -> str | None:
    """The first block of the docstring indented deeper than its prose that uses the op.

    The prose indentation is that of the line holding the closing quotes (or of the least
    indented text line), so an example that is the only indented text is still found.
    """
    lines = (cls.__doc__ or "").splitlines()[1:]
    if not lines:
        return None
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    base = len(lines[-1]) if not lines[-1].strip() else min(indents, default=0)
    short = cls.name.split(".", 1)[1]
    block: list[str] = []
    for line in lines + ["<end>"]:
        deep = line.strip() and len(line) - len(line.lstrip()) > base
        if deep or (block and not line.strip()):
            block.append(line)
            continue
        if block:
            text = textwrap.dedent("\n".join(block))
            if cls.name in text or re.search(rf"\b{re.escape(short)}\b", text):
                return text
            block = []
    return None


@pytest.mark.parametrize("name,cls", OPS, ids=[n for n, _ in OPS])
def test_docstring_example_round_trips(name, cls):
    example = docstring_example(cls)
    assert example is not None, f"{name}: docstring has no indented IR example using the op"
    whole = example.lstrip().startswith(("func.func", "module"))
    if whole:
        module = parse_module(example, f"<{name} docstring>")
        custom = print_op(module)
        assert print_op(parse_module(custom)) == custom
        generic = print_op(module, generic=True)
        assert print_op(parse_module(generic), generic=True) == generic
    else:
        op = parse_snippet(example, f"<{name} docstring>")
        assert any(o.name == name for o in op.walk()), f"{name} not in its own example"
        custom = print_op(op)
        again = print_op(parse_snippet(custom))
        assert again == custom
        generic = print_op(op, generic=True)
        assert print_op(parse_snippet(generic), generic=True) == generic


def _filecheck_text() -> str:
    files = sorted((ROOT / "tests" / "filecheck").rglob("*.mlir"))
    return "\n".join(f.read_text() for f in files)


@pytest.mark.parametrize("name,cls", OPS, ids=[n for n, _ in OPS])
def test_op_has_filecheck_coverage(name, cls):
    text = _filecheck_text()
    short = name.split(".", 1)[1]
    dialect = name.split(".", 1)[0]
    used = (f'"{name}"' in text or re.search(rf"\b{re.escape(name)}\b", text)
            or (dialect in ("func", "builtin") and re.search(rf"\b{short}\b", text)))
    assert used, f"{name} appears in no FileCheck test under tests/filecheck"
