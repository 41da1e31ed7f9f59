"""lit configuration for irkit's FileCheck-style IR tests (as in MLIR's `test/`).

Every `.mlir` IR file and `.irk` model file under this folder is a test: its `RUN:` lines
are shell pipelines, and `CHECK:` lines are matched by the PyPI `filecheck` tool. Tests run
in place from the source tree, so a fresh checkout needs nothing on PATH beyond the Python
that runs lit: `irkit-opt`, `irkit-compile` and `FileCheck` are substituted by `python -m ...`
with the same interpreter, which is why they work inside a venv that was never activated.
"""

import os
import sys

import lit.formats

config.name = "irkit"  # noqa: F821 - `config` is injected by lit
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".irk"]
config.excludes = ["lit.cfg.py", "Output"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

_python = f'"{sys.executable}"'

# lit applies these regexes before its own (`%s`, ...), in order. The lookarounds keep a tool
# name that is part of a longer word or path (`irkit-opt.py`, `/x/FileCheck`) untouched.
_tools = [
    ("irkit-opt", f"{_python} -m irkit.tools.opt"),
    ("irkit-compile", f"{_python} -m irkit.tools.compile"),
    ("FileCheck|filecheck", f"{_python} -m filecheck"),
]
for _name, _cmd in _tools:
    config.substitutions.append((rf"(?<![\w/.%-])(?:{_name})(?![\w.-])", _cmd))

# `REQUIRES:` features: libgomp (the OpenMP runtime parallel loops call) installed, and the
# host architecture (the `--cpu` levels are x86-64's).
import ctypes.util  # noqa: E402
import platform  # noqa: E402

if ctypes.util.find_library("gomp"):
    config.available_features.add("libgomp")  # noqa: F821
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")  # noqa: F821

# `not` is a builtin of lit's internal shell (execute_external=False): no substitution.

# Test-only passes (`--load-pass-plugin=%test_passes`), kept out of the library as MLIR keeps
# its test passes in test/lib.
config.substitutions.append(
    ("%test_passes", os.path.join(os.path.dirname(config.test_source_root), "plugins",
                                  "testing_passes.py")))
