"""irkit: an MLIR-style multi-level IR compiler toolkit for machine-learning models.

This package is the core (docs/layout.md): the IR, its types and attributes, op definitions,
parser, printer, verifier, rewriting, passes' manager and the interpreter; it knows no dialect
but `builtin`. Its namespace also holds the other layers (`irkit.dialects`, `irkit.passes`,
`irkit.frontend`, `irkit.runtime`, ...), each a top-level folder of the repository, and this
module is the public Python API over all of them.

The public entry points are imported lazily so that `irkit-opt` starts fast: numpy and
llvmlite are only loaded when something needs them. The printer and the verifier are
imported now: they install `str(op)` and `op.verify()` in `irkit.ir`, which they build on.
"""

from __future__ import annotations

from irkit import printer as _printer, verifier as _verifier  # noqa: F401  (see above)
from irkit.version import VERSION as __version__  # noqa: F401

__all__ = ["parse_module", "parse_type", "parse_attribute", "print_op", "verify", "interpret",
           "load_model", "load", "Model", "IRError", "ParseError", "VerifyError"]


def parse_module(text: str, filename: str = "<stdin>", **options):
    """Parse (and by default verify) a module, every dialect of irkit known
    (`irkit.parser.parse_module` with `irkit.dialects.register_all()` called first)."""
    from irkit.dialects import register_all
    from irkit.parser import parse_module as parse
    register_all()
    return parse(text, filename, **options)


def __getattr__(name):
    if name in ("parse_type", "parse_attribute"):
        from irkit import parser
        return getattr(parser, name)
    if name == "print_op":
        return _printer.print_op
    if name == "verify":
        return _verifier.verify
    if name == "interpret":
        from irkit.interpreter import interpret
        return interpret
    if name in ("load_model", "load", "Model"):
        from irkit.runtime import model
        return getattr(model, name)
    if name in ("IRError", "ParseError", "VerifyError"):
        from irkit import diagnostics
        return getattr(diagnostics, name)
    raise AttributeError(f"module 'irkit' has no attribute '{name}'")
