"""irkit.dialects: one module per dialect.

`register_all()` makes every dialect known by name; its module is imported the first time
one of its ops is looked up (MLIR's lazy dialect loading), which keeps tool start-up fast.
`load_all()` imports them all now (the registry-driven tests need every op).
"""

import importlib

_ALL = ("builtin", "func", "arith", "math", "loop", "vector", "memory", "graph", "autodiff")


def register_all() -> None:
    from irkit.opdef import _DIALECTS, register_lazy_dialect
    importlib.import_module("irkit.dialects.builtin")
    for name in _ALL:
        if name not in _DIALECTS:
            register_lazy_dialect(name, f"irkit.dialects.{name}")


def load_all() -> None:
    """Import every dialect module, so all ops are in the registry."""
    for name in _ALL:
        importlib.import_module(f"irkit.dialects.{name}")
