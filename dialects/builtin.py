"""The `builtin` dialect among the dialects. Its ops are part of the core (`irkit.builtin`):
the parser wraps top-level ops in a `builtin.module`, and the core knows no other dialect."""

from irkit.builtin import ModuleOp, UnrealizedConversionCastOp, builtin  # noqa: F401
