"""irkit-compile: a `.irk` model file -> the IR of one stage of the pipeline.

    irkit-compile model.irk --emit=graph               # the graph dialect module
    irkit-compile model.irk --emit=graph --model mlp   # one model's nested module only
    irkit-compile model.irk --emit=graph -o model.mlir
    irkit-compile model.irk --emit=autodiff            # backward graphs built, simplified

Each `--emit` stage is one row of `EMITTERS`: a function from the compiled top-level module
to the op to print. Later stages (loops, LLVM...) add rows; the driver stays the same.
Errors (DSL or pass failures) are printed as located diagnostics on stderr, exit code 1; bad
command-line usage exits with 2.
"""

from __future__ import annotations

import argparse
import os
import sys


def emit_graph(module):
    """The DSL's own output: the graph dialect, one nested module per model. Derivatives
    are still requests here (`autodiff.grad` from `grad` and `train` clauses)."""
    return module


def emit_autodiff(module):
    """The graph dialect after the `autodiff` pass, then `canonicalize,cse` (the pipeline
    `irkit.model` runs before interpreting): every `autodiff.grad` replaced by the backward
    graph it stands for, the seeds' multiplications by one folded, shared work shared."""
    from irkit.model import expand_derivatives
    return expand_derivatives(module)


#: --emit stage -> function(top-level graph module) -> op to print
EMITTERS = {
    "graph": emit_graph,
    "autodiff": emit_autodiff,
}


def build_arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="irkit-compile", allow_abbrev=False,
                                 description="Compile a model file (.irk) and print one stage "
                                             "of its lowering.")
    ap.add_argument("input", help="the .irk file ('-' for stdin)")
    ap.add_argument("--emit", default="graph", choices=list(EMITTERS),
                    help="the stage to print (default: graph)")
    ap.add_argument("--model", default=None, metavar="NAME",
                    help="print only this model's module")
    ap.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    ap.add_argument("--mlir-print-debuginfo", action="store_true",
                    help="print the DSL location of every op")
    ap.add_argument("--mlir-print-op-generic", action="store_true",
                    help="print every op in generic form")
    return ap


def run(args) -> int:
    from irkit.diagnostics import IRError
    from irkit.dsl import compile_source, model_modules
    from irkit.printer import print_op
    from irkit.tools.opt import read_input
    source = read_input("irkit-compile", args.input)
    if source is None:
        return 1
    text, filename = source
    try:
        module = EMITTERS[args.emit](compile_source(text, filename))
    except IRError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    op = module
    if args.model is not None:
        models = model_modules(module)
        if args.model not in models:
            sys.stderr.write(f"irkit-compile: error: no model '{args.model}' in "
                             f"{filename} (models: {', '.join(models)})\n")
            return 1
        op = models[args.model]
    text = print_op(op, generic=args.mlir_print_op_generic, debuginfo=args.mlir_print_debuginfo)
    text = text if text.endswith("\n") else text + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; with `argv` (tests) it returns the exit code, as a program it exits."""
    args = build_arg_parser().parse_args(sys.argv[1:] if argv is None else argv)
    status = run(args)
    if argv is not None:
        return status
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
