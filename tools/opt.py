"""irkit-opt: read IR, run a pass pipeline, verify and print it, as `mlir-opt` does.

    irkit-opt in.mlir -p canonicalize,cse
    irkit-opt in.mlir --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3},cse))'
    irkit-opt in.mlir -canonicalize -cse            # mlir-opt's one-flag-per-pass form
    irkit-opt in.mlir -p cse --mlir-print-ir-after-all --mlir-timing
    irkit-opt in.mlir -p canonicalize --verify-each=numeric
    irkit-opt invalid.mlir --split-input-file --verify-diagnostics
    irkit-opt --describe arith.addf
    irkit-opt --list-passes
    irkit-opt model.irk -p canonicalize             # a DSL file is compiled to graph IR first

Exit codes: 0 on success, 1 when the input has errors (printed as located diagnostics), a pass
fails, or `--verify-diagnostics` finds a mismatch; 2 for bad command-line usage; 130 on
Ctrl-C. `-o FILE` is written only when the run succeeds, whole (through a temporary).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time

from irkit.tools import register_all

_DESCRIPTION = "Read IR, run a pass pipeline on it, and print the result."


class _PassFlag(argparse.Action):
    """`-NAME` / `--NAME[=options]`: append a pass to the flat pipeline, in command-line
    order (the pass name is the option's `dest` suffix)."""

    def __call__(self, parser, namespace, values, option_string=None):
        name = self.metavar
        item = f"{name}{{{values}}}" if values else name
        namespace.pass_flags = (getattr(namespace, "pass_flags", None) or []) + [item]


def build_arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="irkit-opt", description=_DESCRIPTION,
                                 allow_abbrev=False)
    ap.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    ap.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    out = ap.add_argument_group("input and output")
    out.add_argument("--mlir-print-op-generic", action="store_true",
                     help="print every op in generic form")
    out.add_argument("--mlir-print-debuginfo", action="store_true",
                     help="print locations with each op")
    out.add_argument("--allow-unregistered-dialect", action="store_true",
                     help="keep ops of unknown dialects as opaque ops")
    out.add_argument("--split-input-file", action="store_true",
                     help="process each chunk separated by '// -----' on its own")
    out.add_argument("--no-verify", dest="verify", action="store_false",
                     help="do not run the verifier on the input")
    out.add_argument("--verify-diagnostics", action="store_true",
                     help="check emitted diagnostics against expected-* annotations")
    passes = ap.add_argument_group("pipelines")
    passes.add_argument("-p", "--passes", dest="flat", default=None, metavar="PASSES",
                        help="flat pipeline: 'canonicalize,cse{...}' run on the module")
    passes.add_argument("--pass-pipeline", default=None, metavar="PIPELINE",
                        help="MLIR pipeline: 'builtin.module(func.func(cse))'")
    add_verify_each_arguments(passes)
    passes.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                        help="import a Python file that registers passes (test passes)")
    passes.add_argument("--dump-pass-pipeline", action="store_true",
                        help="print the pipeline with all options to stderr")
    passes.add_argument("--list-passes", action="store_true", help="list passes and exit")
    passes.add_argument("--describe", metavar="OP", default=None,
                        help="describe a registered op: traits, operands, where hooks live")
    inst = ap.add_argument_group("instrumentation")
    inst.add_argument("--mlir-print-ir-after-all", action="store_true")
    inst.add_argument("--mlir-print-ir-before-all", action="store_true")
    inst.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS")
    inst.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS")
    inst.add_argument("--mlir-print-ir-after-failure", action="store_true")
    inst.add_argument("--mlir-print-ir-module-scope", action="store_true",
                      help="print the whole module, not just the op the pass ran on")
    inst.add_argument("--mlir-timing", action="store_true",
                      help="report the wall time of each pass")
    return ap


def _add_pass_flags(ap: argparse.ArgumentParser, argv: list[str]) -> None:
    """Register `-NAME`/`--NAME` for every pass named on the command line (after plugins are
    loaded), so mlir-opt's `-canonicalize -cse` works without importing every pass."""
    from irkit.pass_manager import lookup_pass
    group = ap.add_argument_group("passes")
    for arg in argv:
        if not arg.startswith("-") or arg.startswith("---"):
            continue
        name = arg.lstrip("-").split("=", 1)[0]
        if not name or name in _FIXED_FLAGS or lookup_pass(name) is None:
            continue
        try:
            group.add_argument(f"-{name}", f"--{name}", action=_PassFlag, nargs="?", const="",
                               metavar=name, dest=f"pass_{name}", help=argparse.SUPPRESS)
        except argparse.ArgumentError:
            pass                    # registered already (the flag appears twice)


_FIXED_FLAGS = {"p", "o", "h", "help"}


def split_chunks(text: str) -> list[str]:
    """Split on `// -----` lines; each chunk is padded so line numbers stay those of the file."""
    lines = text.splitlines(keepends=True)
    chunks, cur, start = [], [], 0
    for i, line in enumerate(lines):
        if line.strip() == "// -----":
            chunks.append("\n" * start + "".join(cur))
            cur, start = [], i + 1
        else:
            cur.append(line)
    chunks.append("\n" * start + "".join(cur))
    return chunks


def add_verify_each_arguments(group) -> None:
    """`--verify-each` and `--numeric-reproducer`, which irkit-compile shares."""
    group.add_argument("--verify-each", default="true", nargs="?", const="true",
                       choices=["true", "false", "numeric"],
                       help="verify after every pass (default); 'numeric' also runs the "
                            "interpreter before and after every pass and stops at the first "
                            "pass that changes a result")
    group.add_argument("--numeric-reproducer", default=None, metavar="FILE",
                       help="where --verify-each=numeric writes its reproducer")


def build_pass_manager(args):
    from irkit.pass_manager import PassManager, PrintIR, parse_pipeline_into
    pm = PassManager(verify_each=args.verify_each != "false")
    for text in [args.pass_pipeline, args.flat, *(getattr(args, "pass_flags", None) or [])]:
        if text:
            parse_pipeline_into(pm, text)
    if (args.mlir_print_ir_after_all or args.mlir_print_ir_before_all or args.mlir_print_ir_after
            or args.mlir_print_ir_before or args.mlir_print_ir_after_failure):
        from irkit.printer import print_op

        def printer(op):
            return print_op(op, generic=args.mlir_print_op_generic,
                            debuginfo=args.mlir_print_debuginfo)
        pm.add_instrumentation(PrintIR(
            sys.stderr.write, before=_names(args.mlir_print_ir_before),
            after=_names(args.mlir_print_ir_after), after_all=args.mlir_print_ir_after_all,
            before_all=args.mlir_print_ir_before_all,
            after_failure=args.mlir_print_ir_after_failure,
            module_scope=args.mlir_print_ir_module_scope, printer=printer))
    if args.verify_each == "numeric":
        import tempfile
        from irkit.numeric_check import NumericCheckInstrumentation
        path = args.numeric_reproducer or os.path.join(tempfile.gettempdir(),
                                                       "irkit-numeric-reproducer.mlir")
        pm.add_instrumentation(NumericCheckInstrumentation(reproducer=path))
    return pm


def _names(values: list[str]) -> list[str]:
    return [n.strip() for v in values for n in v.split(",") if n.strip()]


def run(args, pm, text: str, filename: str, out) -> int:
    from irkit.diagnostics import IRError
    from irkit.parser import parse_module
    from irkit.printer import print_op
    from irkit.pass_manager import Timing
    if args.dump_pass_pipeline:
        sys.stderr.write(f"Pass Manager with {len(pm)} passes:\n{pm.pipeline_text()}\n")
    timing = None
    if args.mlir_timing:
        timing = Timing()
        pm.add_instrumentation(timing)
    chunks = split_chunks(text) if args.split_input_file else [text]
    status = 0
    for i, chunk in enumerate(chunks):
        buf = io.StringIO()

        def process(chunk=chunk, buf=buf):
            t0 = time.perf_counter()
            if filename.endswith(".irk"):       # a model file: compile it to the graph module
                from irkit.frontend.dsl import compile_source
                module = compile_source(chunk, filename)
            else:
                module = parse_module(chunk, filename,
                                      allow_unregistered=args.allow_unregistered_dialect,
                                      verify=args.verify)
            if timing is not None:
                timing.add_phase("Parser", time.perf_counter() - t0)
            pm.run(module)
            t0 = time.perf_counter()
            printed = print_op(module, generic=args.mlir_print_op_generic,
                               debuginfo=args.mlir_print_debuginfo)
            buf.write(printed if printed.endswith("\n") else printed + "\n")
            if timing is not None:
                timing.add_phase("Output", time.perf_counter() - t0)

        if i:
            out.write("// -----\n")
        if args.verify_diagnostics:
            # Errors are expected here: they are matched against the annotations, and the
            # chunks that still produce output print it (tests may FileCheck both).
            from irkit.tools.verify_diagnostics import verify_diagnostics
            failures = verify_diagnostics(chunk, filename, process)
            for f in failures:
                sys.stderr.write(f + "\n")
            if failures:
                status = 1
        else:
            try:
                process()
            except IRError as e:
                sys.stderr.write(e.render() + "\n")
                status = 1
                continue
        out.write(buf.getvalue())
    if timing is not None:
        sys.stderr.write(timing.report())
    return status


def main(argv: list[str] | None = None) -> int:
    """The command-line entry point. Run as a program (`argv` None), it ends the process
    itself once the output is flushed: freeing a 100k-op module object by object at
    interpreter shutdown takes longer than optimizing it (as LLVM tools skip their teardown).
    Called with `argv` (tests, scripts), it returns the exit code."""
    if argv is not None:
        return _main(argv)
    try:
        status = _main(sys.argv[1:])
    except KeyboardInterrupt:           # Ctrl-C: no traceback, no output file (see _main)
        sys.stderr.write("irkit-opt: interrupted\n")
        status = 130
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _main(argv: list[str]) -> int:
    register_all()
    ap = build_arg_parser()
    # Plugins first: they may define passes that the command line names as flags.
    pre, _ = ap.parse_known_args(argv)
    for path in pre.load_pass_plugin:
        status = _load_plugin(path)
        if status:
            return status
    _add_pass_flags(ap, argv)
    args = ap.parse_args(argv)
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.describe:
        from irkit.tools.describe import describe, lowering_tables_of
        from irkit.pass_manager import registered_passes
        try:
            text = describe(args.describe, lowering_tables_of(registered_passes().values()))
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        except KeyError as e:
            sys.stderr.write(f"irkit-opt: error: {e.args[0]}\n")
            return 1
        return 0
    try:
        from irkit.pass_manager import PassPipelineError
        pm = build_pass_manager(args)
    except PassPipelineError as e:
        sys.stderr.write(f"irkit-opt: error: {e}\n")
        return 2
    source = read_input("irkit-opt", args.input)
    if source is None:
        return 1
    text, filename = source
    if args.output == "-":
        return run(args, pm, text, filename, sys.stdout)
    return _run_to_file(args, pm, text, filename)


def _run_to_file(args, pm, text: str, filename: str) -> int:
    """`run` into `-o FILE`, written to a temporary beside it and renamed into place only on
    success (as mlir-opt keeps its output file): an error or Ctrl-C leaves no file, partial
    or stale-looking, behind."""
    from irkit.exporters.output_files import OutputFiles
    try:
        with OutputFiles() as files:
            with open(files.path(args.output), "w", encoding="utf-8") as out:
                status = run(args, pm, text, filename, out)
            if status == 0:
                files.commit()
            return status
    except OSError as e:
        sys.stderr.write(f"irkit-opt: error: cannot write '{e.filename or args.output}': "
                         f"{e.strerror}\n")
        return 1


def read_input(tool: str, path: str) -> tuple[str, str] | None:
    """The text and file name of a tool's input (`-`: stdin), or None after printing
    `tool: error: cannot read ...` or, for text that is not UTF-8, a located error."""
    from irkit.diagnostics import IRError
    from irkit.source_files import read_source
    try:
        return read_source(path), "<stdin>" if path == "-" else path
    except OSError as e:
        sys.stderr.write(f"{tool}: error: cannot read '{path}': {e.strerror}\n")
        return None
    except IRError as e:
        sys.stderr.write(e.render() + "\n")
        return None


def _load_plugin(path: str) -> int:
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"irkit_plugin_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        sys.stderr.write(f"irkit-opt: error: cannot load pass plugin '{path}'\n")
        return 1
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as `import` does: dataclasses and postponed annotations in
    # the plugin look their module up in sys.modules.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except OSError as e:
        sys.stderr.write(f"irkit-opt: error: cannot load pass plugin '{path}': {e.strerror}\n")
        return 1
    return 0


def list_passes() -> str:
    """Every pass with its summary and options, as `mlir-opt --help` lists them."""
    import dataclasses
    from irkit.pass_manager import registered_passes
    lines = ["Passes:"]
    for name, cls in registered_passes().items():
        lines.append(f"  --{name:<32} - {cls.summary()}")
        for key, f, t in cls.option_fields():
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            lines.append(f"      {key}={getattr(t, '__name__', t)} (default {default!r})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
