"""The MLIR files in `../shared/interop/mlir/`, read the way irkit's tests need them.

The corpus was written before irkit had a `graph` dialect and uses `graph.*` as a stand-in
for an unregistered dialect (`graph.relu`, `graph.make_handle`...). Now that `graph` is
registered, those ops would be verified against irkit's own definitions, which is not what
the files test. `read` renames that dialect to `ext_graph`, which nothing registers, so the
files keep testing what they were written for: unregistered ops in generic and custom form.
"""

from __future__ import annotations

import re
from pathlib import Path

SHARED_MLIR = Path(__file__).resolve().parents[2] / "shared" / "interop" / "mlir"
FILES = sorted(SHARED_MLIR.glob("*.mlir")) if SHARED_MLIR.is_dir() else []

# `graph.x` as an op name (`"graph.x"(...)` or `graph.x ...`), never inside a longer word.
_GRAPH_OP = re.compile(r"(?<![\w.$])graph\.(?=[A-Za-z_])")


def read(path: Path) -> str:
    return _GRAPH_OP.sub("ext_graph.", path.read_text(encoding="utf-8"))
