"""irkit-compile: a `.irk` model file -> the IR of one stage of the pipeline.

    irkit-compile model.irk --emit=graph               # the graph dialect module
    irkit-compile model.irk --emit=graph --model mlp   # one model's nested module only
    irkit-compile model.irk --emit=graph -o model.mlir
    irkit-compile model.irk --emit=autodiff            # backward graphs built, simplified
    irkit-compile model.irk --emit=loop                # lowered to loops over memrefs
    irkit-compile model.irk --emit=memory --memory-report   # temporaries in one arena, planned
    irkit-compile model.irk --emit=llvm -O3            # optimized LLVM IR (-O0..-O3, default -O2)
    irkit-compile model.irk --emit=asm                 # host assembly
    irkit-compile model.irk --emit=obj -o model.o      # object file (never to a terminal)
    irkit-compile model.irk -o model.so                # shared library + model.h + model.so.json
    irkit-compile model.irk --emit=loop --mlir-timing --mlir-print-ir-after-all
    irkit-compile model.irk --emit=memory --verify-each=numeric   # interpret around each pass

The IR `--emit` stages are the rows of the pipeline table (`irkit.passes.pipeline.STAGES`):
`--emit=STAGE` runs the rows up to STAGE on the compiled top-level module and prints it. The
machine-code stages (`llvm`, `asm`, `obj`, and `-o *.so`) lower every model through all the
rows, as the JIT does, and compile one flat module of every model's lowered functions, each
renamed `<model>_<function>` so that several models share one library
(`irkit.exporters.library`).
The passes run through irkit-opt's pass manager (`tools/opt.build_pass_manager`), so
`--mlir-timing` and the `--mlir-print-ir-*` flags behave as there.
Errors (DSL or pass failures) are printed as located diagnostics on stderr, exit code 1; bad
command-line usage exits with 2. Output files are written to temporaries and renamed into
place when all are complete, so a failure (naming the file that failed) or Ctrl-C (exit
code 130, `irkit-compile: interrupted`) leaves none behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from irkit.passes import pipeline
from irkit.tools import register_all


def _pass_manager(args, passes: str):
    """irkit-opt's pass manager for the textual pipeline `passes`, with this command line's
    instrumentation
    (`--mlir-print-ir-*`, `--verify-each`; `--mlir-timing` is added by `run`) and a remark
    per function from every `plan-memory` in it under `--memory-report`."""
    from irkit.tools.opt import build_arg_parser as opt_parser, build_pass_manager
    ns = opt_parser().parse_args([])
    ns.flat = passes
    if args is not None:
        for key in ("mlir_print_ir_after_all", "mlir_print_ir_before_all",
                    "mlir_print_ir_after", "mlir_print_ir_before",
                    "mlir_print_ir_after_failure", "mlir_print_ir_module_scope",
                    "mlir_print_op_generic", "mlir_print_debuginfo", "verify_each",
                    "numeric_reproducer"):
            setattr(ns, key, getattr(args, key))
    pm = build_pass_manager(ns)
    if args is not None and getattr(args, "memory_report", False):
        for p in pm.passes():
            if p.name == "plan-memory":
                p.report = True
    if args is not None and getattr(args, "timing", None) is not None:
        pm.add_instrumentation(args.timing)
    return pm


#: --emit stages that produce machine code (or LLVM IR) from the lowered models
BINARY_STAGES = ("llvm", "asm", "obj")


def build_arg_parser() -> argparse.ArgumentParser:
    from irkit.tools.opt import add_verify_each_arguments
    ap = argparse.ArgumentParser(prog="irkit-compile", allow_abbrev=False,
                                 description="Compile a model file (.irk): print one stage "
                                             "of its lowering, or link a shared library.")
    ap.add_argument("input", help="the .irk file ('-' for stdin)")
    ap.add_argument("--emit", default=None, choices=[*pipeline.stage_names(), *BINARY_STAGES],
                    help="the stage to print (default: graph; with -o NAME.so: a shared "
                         "library)")
    ap.add_argument("--model", default=None, metavar="NAME",
                    help="only this model")
    ap.add_argument("-o", dest="output", default="-",
                    help="output file ('-' for stdout); NAME.so links a shared library and "
                         "writes NAME.h and NAME.so.json next to it")
    ap.add_argument("-O", dest="opt_level", type=int, default=2, choices=[0, 1, 2, 3],
                    metavar="N", help="LLVM optimization level, -O0..-O3 (default -O2)")
    ap.add_argument("--memory-report", action="store_true",
                    help="with --emit=memory|llvm|asm|obj or -o NAME.so: a remark per function "
                         "on stderr with its arena, the lower bound (the most bytes live at "
                         "one point) and each buffer live at the peak, at its DSL line")
    ap.add_argument("--mlir-print-debuginfo", action="store_true",
                    help="print the DSL location of every op")
    ap.add_argument("--mlir-print-op-generic", action="store_true",
                    help="print every op in generic form")
    inst = ap.add_argument_group("instrumentation (as in irkit-opt)")
    add_verify_each_arguments(inst)
    inst.add_argument("--mlir-timing", action="store_true",
                      help="report the wall time of each pass and backend step on stderr")
    inst.add_argument("--mlir-print-ir-after-all", "--print-ir-after-all",
                      dest="mlir_print_ir_after_all", action="store_true")
    inst.add_argument("--mlir-print-ir-before-all", "--print-ir-before-all",
                      dest="mlir_print_ir_before_all", action="store_true")
    inst.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS")
    inst.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS")
    inst.add_argument("--mlir-print-ir-after-failure", action="store_true")
    inst.add_argument("--mlir-print-ir-module-scope", action="store_true")
    return ap


def _is_library(path: str) -> bool:
    return path.endswith((".so", ".dylib", ".dll"))


def _select_models(top, args, filename: str) -> dict | None:
    from irkit.frontend.dsl import model_modules
    models = model_modules(top)
    if args.model is None:
        return models
    if args.model not in models:
        sys.stderr.write(f"irkit-compile: error: no model '{args.model}' in "
                         f"{filename} (models: {', '.join(models)})\n")
        return None
    return {args.model: models[args.model]}


def _compile_machine(top, args, filename: str) -> int:
    """`--emit=llvm|asm|obj` and `-o NAME.so`: lower every selected model through every
    stage of the pipeline table, then one flat module of `<model>_<function>` symbols
    through the LLVM backend."""
    from irkit.backends import llvm_cpu
    from irkit.exporters.library import flat_module, write_library
    from irkit.runtime.compiled import lower_model_with_graph
    models = _select_models(top, args, filename)
    if models is None:
        return 1

    def make_pm(start, stop):
        return _pass_manager(args, pipeline.passes_between(start, stop))
    pairs = {name: lower_model_with_graph(mod, make_pm) for name, mod in models.items()}
    lowered = {name: p[1] for name, p in pairs.items()}
    t0 = time.perf_counter()
    if args.emit is None:                                   # -o NAME.so
        write_library(lowered, args.output, opt_level=args.opt_level,
                      graphs={name: p[0] for name, p in pairs.items()})
        what = "Backend (object, link, header)"
    else:
        emit = {"llvm": llvm_cpu.emit_llvm_ir, "asm": llvm_cpu.emit_assembly,
                "obj": llvm_cpu.emit_object}[args.emit]
        # On a helper thread, so that Ctrl-C acts at once, not when LLVM returns.
        data = llvm_cpu.run_interruptibly(emit, flat_module(lowered), opt_level=args.opt_level)
        what = f"Backend ({args.emit})"
        if isinstance(data, bytes):
            if args.output == "-":
                if sys.stdout.isatty():
                    sys.stderr.write("irkit-compile: error: refusing to write an object file "
                                     "to a terminal; use -o FILE.o or redirect stdout\n")
                    return 1
                sys.stdout.flush()
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
            else:
                _write_file(args.output, data)
        else:
            _write_text(args.output, data)
    if args.timing is not None:
        args.timing.add_phase(what, time.perf_counter() - t0)
    return 0


def _write_text(path: str, text: str) -> None:
    text = text if text.endswith("\n") else text + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        _write_file(path, text.encode("utf-8"))


def _write_file(path: str, data: bytes) -> None:
    """`data` into `path` through a temporary beside it: an interrupted or failed write
    leaves neither a partial `path` nor the temporary (irkit.exporters.output_files)."""
    from irkit.exporters.output_files import OutputFiles
    with OutputFiles() as files:
        with open(files.path(path), "wb") as f:
            f.write(data)
        files.commit()


def run(args) -> int:
    from irkit.diagnostics import IRError
    from irkit.frontend.dsl import compile_source
    from irkit.pass_manager import Timing
    from irkit.printer import print_op
    from irkit.tools.opt import read_input
    args.timing = Timing() if args.mlir_timing else None
    if args.emit is None and not _is_library(args.output):
        args.emit = "graph"
    source = read_input("irkit-compile", args.input)
    if source is None:
        return 1
    text, filename = source
    try:
        t0 = time.perf_counter()
        top = compile_source(text, filename)
        if args.timing is not None:
            args.timing.add_phase("Parser (DSL)", time.perf_counter() - t0)
        if args.emit is None or args.emit in BINARY_STAGES:
            status = _compile_machine(top, args, filename)
        else:
            _pass_manager(args, pipeline.passes_between(None, args.emit)).run(top)
            module = top
            models = _select_models(module, args, filename) if args.model else None
            if args.model is not None and models is None:
                return 1
            op = models[args.model] if models else module
            _write_text(args.output, print_op(op, generic=args.mlir_print_op_generic,
                                              debuginfo=args.mlir_print_debuginfo))
            status = 0
    except IRError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    except OSError as e:        # the file named is the one that failed (`x.so.json`)
        sys.stderr.write(f"irkit-compile: error: cannot write '{e.filename or args.output}': "
                         f"{e.strerror}\n")
        return 1
    if args.timing is not None:
        sys.stderr.write(args.timing.report())
    return status


def main(argv: list[str] | None = None) -> int:
    """Entry point; with `argv` (tests) it returns the exit code, as a program it exits."""
    register_all()
    args = build_arg_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if argv is not None:
        return run(args)
    try:
        status = run(args)
    except KeyboardInterrupt:
        # Ctrl-C: every output was still a temporary, removed on the way out (library.py,
        # output_files.py); LLVM, if it was running, is abandoned on its thread.
        sys.stderr.write("irkit-compile: interrupted\n")
        status = 130
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    sys.exit(main())
