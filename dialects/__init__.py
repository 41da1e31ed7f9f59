"""irkit.dialects: one module or package per dialect.

`register_all()` makes every dialect known by name; its module is imported the first time
one of its ops is looked up (MLIR's lazy dialect loading), which keeps tool start-up fast.
`load_all()` imports them all now (the registry-driven tests need every op).
"""

import importlib

_ALL = ("builtin", "func", "arith", "math", "loop", "vector", "memory", "graph", "autodiff",
        "linalg", "tensor", "fusion", "parallel", "mpi", "gpu", "omp")


def register_all() -> None:
    from irkit.registry import register_lazy_dialect
    for name in _ALL:
        register_lazy_dialect(name, f"irkit.dialects.{name}")


def load_all() -> None:
    """Import every dialect module, so all ops are in the registry."""
    for name in _ALL:
        importlib.import_module(f"irkit.dialects.{name}")
