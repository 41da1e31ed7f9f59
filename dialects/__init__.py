"""irkit.dialects: one module per dialect. `load_all()` registers every dialect's ops."""

import importlib

_ALL = ("builtin", "func", "arith", "math")
_loaded = False


def load_all() -> None:
    """Import every dialect module once, so its ops are in the registry."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in _ALL:
        try:
            importlib.import_module(f"irkit.dialects.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"irkit.dialects.{name}":
                raise
