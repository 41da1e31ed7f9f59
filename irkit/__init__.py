"""irkit: an MLIR-style multi-level IR compiler toolkit for machine-learning models.

The public entry points are imported lazily so that `irkit-opt` starts fast: numpy and
llvmlite are only loaded when something needs them.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["parse_module", "parse_type", "parse_attribute", "print_op", "verify", "interpret",
           "load_model", "load", "Model", "IRError", "ParseError", "VerifyError"]


def __getattr__(name):
    if name in ("parse_module", "parse_type", "parse_attribute"):
        from irkit import parser
        return getattr(parser, name)
    if name == "print_op":
        from irkit.printer import print_op
        return print_op
    if name == "verify":
        from irkit.verifier import verify
        return verify
    if name == "interpret":
        from irkit.interpreter import interpret
        return interpret
    if name in ("load_model", "load", "Model"):
        from irkit import model
        return getattr(model, name)
    if name in ("IRError", "ParseError", "VerifyError"):
        from irkit import diagnostics
        return getattr(diagnostics, name)
    raise AttributeError(f"module 'irkit' has no attribute '{name}'")
