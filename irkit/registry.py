"""The op and dialect registry: which class an op name stands for, and which dialects exist.

It sits below `irkit.ir` because `Operation.create` turns a name into an instance of its
registered class; `irkit.opdef` fills it (`Dialect.op` registers a class) and re-exports it.

Dialects may be known by name only (`register_lazy_dialect`), their module imported the
first time one of their ops or the dialect itself is looked up, as MLIR's context loads
dialects lazily: `irkit-opt` on a file without `arith` never imports numpy. Who makes them
known is the caller's choice: the tools and the Python API call
`irkit.dialects.register_all()`; the core itself registers nothing but `builtin`.
"""

from __future__ import annotations

import importlib
from typing import Callable

_REGISTRY: dict[str, type] = {}
_DIALECTS: dict[str, "Dialect"] = {}

# Dialect name -> the module whose import defines it, for dialects not imported yet.
_LAZY_DIALECTS: dict[str, str] = {}


def register_lazy_dialect(name: str, module: str) -> None:
    """Know dialect `name` by name; `module` is imported the first time it is looked up.
    A dialect already loaded stays as it is."""
    if name not in _DIALECTS:
        _LAZY_DIALECTS[name] = module


def _load_lazy(dialect: str) -> bool:
    module = _LAZY_DIALECTS.pop(dialect, None)
    if module is None:
        return False
    importlib.import_module(module)
    return True


def lookup_op(name: str) -> type | None:
    """The class registered for op `name` (loading its dialect if it is known lazily)."""
    cls = _REGISTRY.get(name)
    if cls is None and _LAZY_DIALECTS and _load_lazy(name.split(".", 1)[0]):
        cls = _REGISTRY.get(name)
    return cls


def loaded_ops() -> dict[str, type]:
    """Every op of the dialects loaded so far (those the IR at hand has used)."""
    return _REGISTRY


def registered_ops() -> dict[str, type]:
    """Every op of every known dialect (lazily known dialects are loaded first)."""
    for dialect in list(_LAZY_DIALECTS):
        _load_lazy(dialect)
    return dict(_REGISTRY)


class Dialect:
    """A namespace of ops (and, later, types and attributes).

    `allows_unknown_ops` is MLIR's `allowsUnknownOperations`: whether an op name of this
    dialect that no class is registered for may stand as an opaque op (under
    `--allow-unregistered-dialect`). A dialect irkit defines in full (`func`, `arith`,
    `graph`, ...) says no, as MLIR does for its own; one irkit mirrors only in part (`vector`,
    `tensor`, `linalg`: MLIR has more ops than irkit) says yes, so MLIR's other ops still
    pass through.
    """

    def __init__(self, name: str, doc: str = "", *, allows_unknown_ops: bool = False) -> None:
        self.name = name
        self.doc = doc
        self.allows_unknown_ops = allows_unknown_ops
        self.ops: dict[str, type] = {}
        #: `(attr, type, location) -> Operation | None`: the op that holds a folded constant
        self.constant_materializer: Callable | None = None
        _DIALECTS[name] = self
        _LAZY_DIALECTS.pop(name, None)

    def op(self, cls):
        """Class decorator that registers an op with this dialect."""
        if not cls.name.startswith(self.name + "."):
            raise ValueError(f"op '{cls.name}' does not belong to dialect '{self.name}'")
        self.ops[cls.name] = cls
        _REGISTRY[cls.name] = cls
        cls.dialect = self
        return cls


def lookup_dialect(name: str) -> Dialect | None:
    """The dialect called `name` (loading it if it is known lazily), or None."""
    d = _DIALECTS.get(name)
    if d is None and _load_lazy(name):
        d = _DIALECTS.get(name)
    return d


def unregister_dialect(name: str) -> None:
    """Forget dialect `name` and its ops: for a test that defines a dialect of its own and
    must not leave it to the registry-driven tests that walk every op."""
    dialect = _DIALECTS.pop(name, None)
    _LAZY_DIALECTS.pop(name, None)
    for op_name in (dialect.ops if dialect is not None else ()):
        _REGISTRY.pop(op_name, None)
