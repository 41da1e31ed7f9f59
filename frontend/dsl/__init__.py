"""The model DSL: `.irk` files -> graph IR.

    from irkit.frontend.dsl import compile_source
    module = compile_source(open("mlp.irk").read(), "mlp.irk")

A file becomes one top-level `builtin.module` holding a nested `module @M` per model (its
`graph.variable`s and `func.func @forward`). The stages: `syntax.py` (lark grammar ->
located AST), `lower.py` and `exprs.py` (AST -> graph ops, through each op's shape
function), `builtins.py` (the tables of builtins, initializers, element types);
`frontend/optimizers.py` (the update rules `train ... with` names).
Every error is a `DSLError` rendered as `file.irk:7:12: error: ...` with the line and a caret.
"""

from __future__ import annotations

from irkit.frontend.dsl.syntax import DSLError, DSLSyntaxError

__all__ = ["compile_source", "compile_file", "find_model", "model_modules", "DSLError",
           "DSLSyntaxError"]


def compile_source(text: str, filename: str = "<string>"):
    """Compile DSL text to the verified top-level module; raise a located `DSLError`."""
    from irkit.attributes import FileLineColLoc
    from irkit.diagnostics import SOURCES
    from irkit.dialects import register_all
    # The DSL builds ops without the parser, which is what makes the lazily loaded dialects
    # known; passes later create ops of any dialect by name (math.isfinite when lowering).
    register_all()
    from irkit.frontend.dsl.lower import Lowering
    from irkit.frontend.dsl.syntax import parse_program
    from irkit.verifier import verify
    SOURCES.add(filename, text)
    try:
        prog = parse_program(text, filename)
        module = Lowering(filename).program(prog)
    except RecursionError:
        raise DSLError("the program is nested too deeply", FileLineColLoc(filename, 1, 1)) \
            from None
    verify(module)
    return module


def compile_file(path: str):
    """Compile a `.irk` file (see `compile_source`); text that is not UTF-8 is a located
    `DSLSyntaxError` at the first bad byte."""
    from irkit.source_files import read_source
    return compile_source(read_source(path, DSLSyntaxError), path)


def model_modules(top) -> dict:
    """The nested `module @name` ops of a compiled file, by name, in file order."""
    from irkit.symbols import symbol_name
    return {symbol_name(op): op for op in top.regions[0].blocks[0].ops
            if op.name == "builtin.module" and symbol_name(op)}


def find_model(top, name: str):
    """The nested `module @name` of a compiled file, or None."""
    return model_modules(top).get(name)
