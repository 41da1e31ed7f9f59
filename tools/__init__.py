"""irkit.tools: the command-line entry points (`irkit-opt`, `irkit-compile`)."""

from irkit import dialects, passes


def register_all() -> None:
    """Make every dialect and every pass of irkit known by name, each module imported when
    first used: what every tool does first, as MLIR's tools call `registerAllDialects` and
    `registerAllPasses` (the parser and the pass manager know only what is registered)."""
    dialects.register_all()
    passes.register_all()
