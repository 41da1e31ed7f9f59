"""irkit-opt: read IR, run a pass pipeline, verify and print it, as `mlir-opt` does.

    irkit-opt in.mlir -p canonicalize,cse
    irkit-opt in.mlir --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3},cse))'
    irkit-opt in.mlir -canonicalize -cse            # mlir-opt's one-flag-per-pass form
    irkit-opt in.mlir -split-input-file -canonicalize='max-iterations=3 test-convergence'
    irkit-opt in.mlir --verify-roundtrip            # generic and custom form read back the same
    irkit-opt in.mlir -p cse --mlir-print-ir-after-all --mlir-timing
    irkit-opt in.mlir -p canonicalize --verify-each=numeric
    irkit-opt invalid.mlir --split-input-file --verify-diagnostics
    irkit-opt --describe arith.addf
    irkit-opt --list-passes
    irkit-opt model.irk -p canonicalize             # a DSL file is compiled to graph IR first

The command line is read as mlir-opt reads its own (`irkit.tools.mlir_cli`): every long option
with one dash or two (`-split-input-file`, `-pass-pipeline=...`), values of optional-value
options only after `=`, a pass flag per registered pass with MLIR's pass options, so a `RUN:`
line written for mlir-opt that uses only irkit's passes runs unchanged.

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

from irkit.tools import redeliver_swallowed_interrupts, register_all

_DESCRIPTION = "Read IR, run a pass pipeline on it, and print the result."


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
    out.add_argument("--split-input-file", nargs="?", const=SPLIT_MARKER, default=None,
                     metavar="MARKER",
                     help=f"process each chunk separated by a '{SPLIT_MARKER}' line (or "
                          "=MARKER) on its own")
    out.add_argument("--no-verify", dest="verify", action="store_false",
                     help="do not run the verifier on the input")
    out.add_argument("--verify-diagnostics", nargs="?", const="all", default=None,
                     choices=["all"],
                     help="check emitted diagnostics against expected-* annotations")
    out.add_argument("--verify-roundtrip", action="store_true",
                     help="after parsing, check that the module prints and parses back as "
                          "itself, in generic and in custom form")
    # Pass flags, `-p` and `--pass-pipeline` append to one list, so they run in command-line
    # order. `flat` and `pass_pipeline` stay for callers that fill a namespace themselves.
    ap.set_defaults(flat=None, pass_pipeline=None)
    passes = ap.add_argument_group("pipelines")
    passes.add_argument("-p", "--passes", dest="pipeline", action="append", metavar="PASSES",
                        help="flat pipeline: 'canonicalize,cse{...}' run on the module")
    passes.add_argument("--pass-pipeline", dest="pipeline", action="append", metavar="PIPELINE",
                        help="MLIR pipeline: 'builtin.module(func.func(cse))'")
    passes.add_argument("--mlir-disable-threading", action="store_true",
                        help="accepted for mlir-opt's command lines: irkit runs passes on "
                             "one thread")
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
    inst.add_argument("--fusion-report", action="store_true",
                      help="a remark per function from each fusion pass in the pipeline "
                           "(linalg-fuse-elementwise-ops, linalg-fuse): kernels, bytes moved, "
                           "flops and intensity before and after, each group and each refused "
                           "candidate with its reason")
    ap.epilog = ("Passes are also options of their own, as in mlir-opt: -NAME or "
                 "--NAME='OPTIONS' (see --list-passes).")
    return ap


SPLIT_MARKER = "// -----"


def split_chunks(text: str, marker: str = SPLIT_MARKER) -> list[str]:
    """Split on `marker` lines; each chunk is padded so line numbers stay those of the file."""
    lines = text.splitlines(keepends=True)
    chunks, cur, start = [], [], 0
    for i, line in enumerate(lines):
        if line.strip() == marker:
            chunks.append("\n" * start + "".join(cur))
            cur, start = [], i + 1
        else:
            cur.append(line)
    chunks.append("\n" * start + "".join(cur))
    return chunks


def add_verify_each_arguments(group, default: str | None = "true",
                              default_help: str = "verify after every pass (default)") -> None:
    """`--verify-each` and `--numeric-reproducer`, which irkit-compile shares (with its own
    `default`, described by `default_help`)."""
    group.add_argument("--verify-each", default=default, nargs="?", const="true",
                       choices=["true", "false", "numeric"],
                       help=default_help + "; 'numeric' also runs the "
                            "interpreter before and after every pass and stops at the first "
                            "pass that changes a result")
    group.add_argument("--numeric-reproducer", default=None, metavar="FILE",
                       help="where --verify-each=numeric writes its reproducer")


#: the report flags of the command line and the passes whose `report` option each turns on
REPORTING_PASSES = {"fusion_report": ("linalg-fuse-elementwise-ops", "linalg-fuse"),
                    "memory_report": ("plan-memory",)}


def build_pass_manager(args):
    """The pass manager of a parsed command line: its pipelines in order, MLIR's pass options
    translated to irkit's, and the instrumentation its flags ask for."""
    from irkit.pass_manager import PassManager, PrintIR, parse_pipeline_into
    from irkit.tools.mlir_cli import translate_pipeline
    pm = PassManager(verify_each=args.verify_each != "false")
    for text in [args.pass_pipeline, args.flat, *(getattr(args, "pipeline", None) or [])]:
        if text:
            parse_pipeline_into(pm, translate_pipeline(text))
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
    for flag, names in REPORTING_PASSES.items():
        if getattr(args, flag, False):
            for p in pm.passes():
                if p.name in names:
                    p.report = True
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
    chunks = split_chunks(text, args.split_input_file) if args.split_input_file else [text]
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
            if args.verify_roundtrip:
                verify_roundtrip(module, allow_unregistered=args.allow_unregistered_dialect,
                                 verify=args.verify)
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
    redeliver_swallowed_interrupts()
    try:
        status = _main(sys.argv[1:])
    except KeyboardInterrupt:           # Ctrl-C: no traceback, no output file (see _main)
        sys.stderr.write("irkit-opt: interrupted\n")
        status = 130
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _main(argv: list[str]) -> int:
    from irkit.pass_manager import PassPipelineError, lookup_pass
    from irkit.tools.mlir_cli import UsageError, plugin_paths, to_argparse
    register_all()
    ap = build_arg_parser()
    # Plugins first: they may define passes that the command line names as flags.
    for path in plugin_paths(argv):
        status = _load_plugin(path)
        if status:
            return status
    try:
        argv = to_argparse(argv, ap, lambda name: lookup_pass(name) is not None)
    except (UsageError, PassPipelineError) as e:
        sys.stderr.write(f"irkit-opt: error: {e}\n")
        return 2
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


def verify_roundtrip(module, *, allow_unregistered: bool = False, verify: bool = True) -> None:
    """`--verify-roundtrip`: the module must read back from its own text as itself.

    Right after parsing, as mlir-opt's option of that name: the module's generic form with
    locations is parsed back and must print the same again (MLIR's check). Then its custom
    form, printed with locations, is parsed back and must give the same generic form without
    locations: a custom form may leave out a location (an elided terminator has none in MLIR
    either), but nothing else (an attribute, a type, an op). Reading back also verifies.
    Raises an IRError at the module's location naming the form and the first line that
    differs.
    """
    from irkit.printer import print_op
    reference = print_op(module, generic=True, debuginfo=True)
    again = _read_back(module, "generic", reference, allow_unregistered, verify)
    _compare(module, "generic", reference, print_op(again, generic=True, debuginfo=True))
    again = _read_back(module, "custom", print_op(module, debuginfo=True), allow_unregistered,
                       verify)
    _compare(module, "custom", print_op(module, generic=True), print_op(again, generic=True))


def _read_back(module, form: str, text: str, allow_unregistered: bool, verify: bool):
    from irkit.diagnostics import IRError
    from irkit.parser import parse_module
    try:
        return parse_module(text, f"<{form} round-trip>", allow_unregistered=allow_unregistered,
                            verify=verify)
    except IRError as e:
        raise IRError(f"round-trip testing: the {form} form irkit prints does not parse back",
                      module.location).note(e.render()) from None


def _compare(module, form: str, reference: str, printed: str) -> None:
    from irkit.diagnostics import IRError
    if printed == reference:
        return
    want, got = reference.splitlines(), printed.splitlines()
    n = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    err = IRError(f"round-trip testing: the module read back from its {form} form differs "
                  f"from the reference at line {n + 1} of the generic form", module.location)
    err.note(f"reference: {want[n].strip() if n < len(want) else '<end>'}")
    raise err.note(f"read back: {got[n].strip() if n < len(got) else '<end>'}")


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
