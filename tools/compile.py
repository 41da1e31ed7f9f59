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
    irkit-compile model.irk -o model.so --cpu=x86-64-v3   # for any AVX2 machine, not just this
    irkit-compile model.irk --emit=loop --mlir-timing --mlir-print-ir-after-all
    irkit-compile model.irk --emit=memory --verify-each=numeric   # interpret around each pass
    irkit-compile model.irk --emit=autodiff --data-parallel 2     # partitioned over 2 ranks
    irkit-compile model.irk --data-parallel 8 --partition-report  # bytes per step, cost model
    irkit-compile model.irk --target=nvptx --emit=gpu  # kernels outlined into gpu.module
    irkit-compile model.irk --target=nvptx --emit=ptx --gpu-arch=sm_80   # the kernels' PTX
    irkit-compile model.irk --target=nvptx -o model.ptx   # model.ptx + model.ptx.json

The IR `--emit` stages are the rows of the pipeline table (`irkit.passes.pipeline.STAGES`):
`--emit=STAGE` runs the rows up to STAGE on the compiled top-level module and prints it. The
machine-code stages (`llvm`, `asm`, `obj`, and `-o *.so`) lower every model through all the
rows, as the JIT does, and compile one flat module of every model's lowered functions, each
renamed `<model>_<function>` so that several models share one library
(`irkit.exporters.library`).
The passes run through irkit-opt's pass manager (`tools/opt.build_pass_manager`), so
`--mlir-timing` and the `--mlir-print-ir-*` flags behave as there. An IR `--emit` stage is
verified after every pass, as irkit-opt does; machine code (`llvm`, `asm`, `obj`, `.so`) after
every row of the pipeline table, as the JIT does (`runtime.compiled._run_rows`): verifying
after each of the ~25 passes of the example models took 1.4 s of mlp's 8 s to a library, and
the per-row check still stops broken IR at the end of the row that broke it. `--verify-each`
verifies after every pass there too.
`-o NAME.so` and `--emit=obj` go through the persistent compile cache
(`irkit.runtime.compile_cache`, shared with the JIT): a file compiled before the same way
is linked from its cached object code without running the DSL, the passes or LLVM.
`--no-cache` bypasses it, and so does any flag that observes the pipeline (`--mlir-timing`,
`--mlir-print-ir-*`, `--verify-each=numeric`, `--memory-report`).
`--data-parallel N` partitions every model at the end of the autodiff row as
`load_model(..., data_parallel=N)` does (`irkit.runtime.distributed.partition_rows`): the
batch split over N MPI ranks, the variables replicated, the compiled code calling MPI.
`--partition-report` prints, on stderr, each collective's bytes per step and the cost
model's predicted step times at 8, 64 and 512 ranks (`irkit.passes.parallel_report`), from
the step time `--step-ms` or, without it, the unpartitioned step measured here with the
JIT at batch `--batch`.
`--target=nvptx` lowers by the pipeline table's nvptx ladder (`pipeline.stages("nvptx")`,
whose last row, `gpu`, outlines the kernels) and compiles with `irkit.backends.nvptx`:
`--emit=ptx` prints the kernels' PTX for `--gpu-arch` (default sm_90), `--emit=llvm` their
optimized NVPTX LLVM IR, and `-o NAME.ptx` (which implies the target) writes the PTX and,
next to it, `NAME.ptx.json` -- the lowered module (whose host functions the runtime compiles
for the loading machine's CPU), the graph module (shape functions) and the kernel list --
which `irkit.load("NAME.ptx")` runs on the GPU (`irkit.runtime.cuda`); one model per file.
Errors (DSL or pass failures) are printed as located diagnostics on stderr, exit code 1; bad
command-line usage exits with 2. Output files are written to temporaries and renamed into
place when all are complete, so a failure (naming the file that failed) or Ctrl-C (exit
code 130, `irkit-compile: interrupted`) leaves none behind.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

from irkit.passes import pipeline
from irkit.tools import redeliver_swallowed_interrupts, register_all


def _pass_manager(args, passes: str, by_row: bool = False):
    """irkit-opt's pass manager for the textual pipeline `passes`, with this command line's
    instrumentation (`--mlir-print-ir-*`, `--verify-each`; `--mlir-timing` is added by `run`)
    and reports (`--memory-report`, `--fusion-report`: `opt.REPORTING_PASSES`). Without
    `--verify-each` it verifies after every pass, unless `by_row`: one row of the pipeline
    table, which the caller verifies after it (`runtime.compiled.lower_model_with_graph`)."""
    from irkit.tools.opt import build_arg_parser as opt_parser, build_pass_manager
    ns = opt_parser().parse_args([])
    ns.flat = passes
    if args is not None:
        for key in ("mlir_print_ir_after_all", "mlir_print_ir_before_all",
                    "mlir_print_ir_after", "mlir_print_ir_before",
                    "mlir_print_ir_after_failure", "mlir_print_ir_module_scope",
                    "mlir_print_op_generic", "mlir_print_debuginfo", "verify_each",
                    "numeric_reproducer", "fusion_report", "memory_report"):
            setattr(ns, key, getattr(args, key))
        if args.verify_each is None:
            ns.verify_each = "false" if by_row else "true"
    pm = build_pass_manager(ns)
    if args is not None and getattr(args, "timing", None) is not None:
        pm.add_instrumentation(args.timing)
    return pm


def _rows(args, start, stop) -> str:
    """The passes of the pipeline table's rows after `start` up to `stop`, with
    `--disable` and `--pass-options`, and partitioned with `--data-parallel`."""
    if args.data_parallel is None and not args.own_grid:
        return pipeline.passes_between(start, stop, args.disable, target=args.target,
                                       pass_options=args.pass_options)
    from irkit.runtime.distributed import partition_passes, partition_rows
    return partition_rows(start, stop, partition_passes(args.data_parallel, args.micro_batches),
                          args.disable, args.pass_options)


def _sizes(text: str) -> dict[str, int]:
    """`B=128,T=64` -> {"B": 128, "T": 64}."""
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise argparse.ArgumentTypeError(f"expected DIM=N (N a positive integer), "
                                             f"got '{item}'")
        out[name.strip()] = int(value)
    return out


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def _pass_list(text: str) -> list[str]:
    """`--disable`'s value: pass names the pipeline table runs for some target (argparse
    reports others; the ladder of `--target` checks them again)."""
    names = [n for n in text.split(",") if n]
    known = {p for t in pipeline.TARGETS for p in pipeline.pipeline_pass_names(t)}
    if not set(names) <= known:
        try:
            pipeline.passes_between(None, pipeline.compiled_stage(), names)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return names


def _pass_options(text: str) -> str:
    """`--pass-options`' value: options of passes the pipeline table runs for some target,
    checked (argparse reports an unknown pass or option, or a bad value; the ladder of
    `--target` checks the passes again, `_refused_by_target`)."""
    errors = []
    for target in pipeline.TARGETS:
        try:
            pipeline.pass_option_edits(text, target)
            return text.strip()
        except ValueError as e:
            errors.append(str(e))
    raise argparse.ArgumentTypeError(errors[0])


def _gpu_arch(name: str) -> str:
    """`--gpu-arch`'s value, one of the NVPTX backend's `GPU_ARCHS`."""
    from irkit.backends.nvptx.toolkit import check_arch
    try:
        return check_arch(name)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _cpu_name(name: str) -> str:
    """`--cpu`'s value, if it is one of the backend's `CPU_CHOICES` (the backend, and LLVM
    with it, is imported only for another CPU than the default, native, so that printing IR
    stages stays quick)."""
    if name == "native":
        return name
    from irkit.backends.llvm_cpu import CPU_CHOICES
    if name not in CPU_CHOICES:
        raise argparse.ArgumentTypeError(f"invalid choice: {name!r} (choose from "
                                          f"{', '.join(CPU_CHOICES)})")
    return name


#: --emit stages that produce machine code (or LLVM IR) from the lowered models (`ptx`: with
#: --target=nvptx, whose `llvm` is the kernels')
BINARY_STAGES = ("llvm", "asm", "obj", "ptx")
#: the IR --emit stages of every target's ladder, in order
IR_STAGES = list(dict.fromkeys(n for t in pipeline.TARGETS for n in pipeline.stage_names(t)))


def build_arg_parser() -> argparse.ArgumentParser:
    from irkit.tools.opt import add_verify_each_arguments
    ap = argparse.ArgumentParser(prog="irkit-compile", allow_abbrev=False,
                                 description="Compile a model file (.irk): print one stage "
                                             "of its lowering, or link a shared library.")
    ap.add_argument("input", help="the .irk file ('-' for stdin)")
    ap.add_argument("--emit", default=None, choices=[*IR_STAGES, *BINARY_STAGES],
                    help="the stage to print (default: graph; with -o NAME.so: a shared "
                         "library; with -o NAME.ptx: the PTX and its description)")
    ap.add_argument("--target", default=None, choices=pipeline.TARGETS,
                    help="the machine to compile for (default cpu; nvptx: NVIDIA GPUs, "
                         "implied by -o NAME.ptx): which ladder of the pipeline table runs")
    ap.add_argument("--gpu-arch", default="sm_90", type=_gpu_arch, metavar="sm_XY",
                    help="with --target=nvptx: the GPU architecture of the PTX (default "
                         "sm_90; sm_80, sm_86, sm_89, sm_100, ...)")
    ap.add_argument("--model", default=None, metavar="NAME",
                    help="only this model")
    ap.add_argument("-o", dest="output", default="-",
                    help="output file ('-' for stdout); NAME.so links a shared library and "
                         "writes NAME.h and NAME.so.json next to it")
    ap.add_argument("-O", dest="opt_level", type=int, default=2, choices=[0, 1, 2, 3],
                    metavar="N", help="optimization level, -O0..-O3 (default -O2, whose loops "
                    "irkit tiles and vectorizes: LLVM then runs its -O1)")
    ap.add_argument("--cpu", default="native", type=_cpu_name,
                    help="the CPU the machine code is for (default native: this machine's; "
                         "x86-64-v3: AVX2 and FMA, x86-64-v4: AVX-512, generic: every CPU of "
                         "this architecture); a library refuses, at load, a CPU without the "
                         "features it was compiled for")
    ap.add_argument("--disable", default=[], type=_pass_list, metavar="PASS[,PASS...]",
                    help="leave these passes of the pipeline out, e.g. "
                         "--disable=linalg-fuse,graph-merge-matmuls (names as "
                         "--emit's stages run them: irkit-opt --list-passes)")
    ap.add_argument("--pass-options", default="", type=_pass_options,
                    metavar="PASS{OPT=VALUE ...}[,...]",
                    help="set options of passes the pipeline runs, over its own, e.g. "
                         "--pass-options='linalg-matmul-blis{align-start=false}' (matmul "
                         "results independent of where the inputs lie within a vector; "
                         "options as irkit-opt --list-passes shows them)")
    ap.add_argument("--no-cache", action="store_true",
                    help="compile even when the compile cache ($IRKIT_CACHE_DIR, else "
                         "~/.cache/irkit) holds this model compiled the same way, and do not "
                         "store the result")
    ap.add_argument("--autotune", action="store_true",
                    help="before compiling, measure candidate BLIS sizes of each model's "
                         "matmuls and convolutions on this machine (a compile and timed steps "
                         "each, with a progress line) and record the fastest in the cache's "
                         "tuning records, which every later compile of the file, JIT too, "
                         "takes (irkit.runtime.tuning)")
    ap.add_argument("--autotune-sizes", default={}, type=_sizes, metavar="DIM=N[,DIM=N]",
                    help="with --autotune: the inputs' symbolic sizes to measure with "
                         "(default: 128 for each)")
    ap.add_argument("--memory-report", action="store_true",
                    help="with --emit=memory|llvm|asm|obj or -o NAME.so: a remark per function "
                         "on stderr with its arena, the lower bound (the most bytes live at "
                         "one point) and each buffer live at the peak, at its DSL line")
    ap.add_argument("--fusion-report", action="store_true",
                    help="with --emit=linalg or later, or -o NAME.so: a remark per function on "
                         "stderr from each fusion pass: kernels, bytes moved, flops and "
                         "arithmetic intensity before and after; each fusion group with its "
                         "model lines; each refused candidate with the cost model's reason")
    ap.add_argument("--data-parallel", type=_positive, default=None, metavar="N",
                    help="split every input's batch (first) dimension over N MPI ranks, the "
                         "variables replicated, after autodiff (run with mpiexec -n N)")
    ap.add_argument("--micro-batches", type=_positive, default=1, metavar="M",
                    help="a model with stage blocks and a grid: cut each batch into M "
                         "micro-batches of its pipeline (GPipe)")
    ap.add_argument("--partition-report", action="store_true",
                    help="with --data-parallel or a model's own grid: each collective's and "
                         "send's bytes per step, and the "
                         "predicted step time of data, tensor and pipeline parallelism at "
                         "8, 64 and 512 ranks on 100 Gb/s links, on stderr")
    ap.add_argument("--step-ms", type=float, default=None, metavar="MS",
                    help="the partition report's one-process step time (default: measured "
                         "here, the JIT's train_step at --batch)")
    ap.add_argument("--batch", type=_positive, default=1024, metavar="B",
                    help="the global batch of the partition report (default 1024)")
    ap.add_argument("--mlir-print-debuginfo", action="store_true",
                    help="print the DSL location of every op")
    ap.add_argument("--mlir-print-op-generic", action="store_true",
                    help="print every op in generic form")
    inst = ap.add_argument_group("instrumentation (as in irkit-opt)")
    add_verify_each_arguments(
        inst, default=None,
        default_help="verify after every pass (by default: after every pass for an IR --emit "
                     "stage, after every row of the pipeline table for machine code, as the "
                     "JIT does)")
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
        return _pass_manager(args, _rows(args, start, stop), by_row=True)
    pairs = {name: lower_model_with_graph(mod, make_pm) for name, mod in models.items()}
    lowered = {name: p[1] for name, p in pairs.items()}
    t0 = time.perf_counter()
    if args.emit is None:                                   # -o NAME.so
        write_library(lowered, args.output, opt_level=args.opt_level, cpu=args.cpu,
                      graphs={name: p[0] for name, p in pairs.items()})
        what = "Backend (object, link, header)"
    else:
        emit = {"llvm": llvm_cpu.emit_llvm_ir, "asm": llvm_cpu.emit_assembly,
                "obj": llvm_cpu.emit_object}[args.emit]
        # On a helper thread, so that Ctrl-C acts at once, not when LLVM returns.
        data = llvm_cpu.run_interruptibly(emit, flat_module(lowered), opt_level=args.opt_level,
                                          cpu=args.cpu)
        what = f"Backend ({args.emit})"
        if isinstance(data, bytes):
            if _write_object(args.output, data):
                return 1
        else:
            _write_text(args.output, data)
    if args.timing is not None:
        args.timing.add_phase(what, time.perf_counter() - t0)
    return 0


def _refused_by_target(args) -> str | None:
    """Why `--target` cannot do what the command line asks, or None."""
    names = pipeline.stage_names(args.target)
    if args.pass_options:
        try:
            pipeline.pass_option_edits(args.pass_options, args.target)
        except ValueError as e:
            return f"--pass-options: {e}"
    if args.emit is not None and args.emit not in BINARY_STAGES and args.emit not in names:
        return (f"--emit={args.emit} is not a stage of the {args.target} pipeline (stages: "
                f"{', '.join(names)})")
    if args.target == "cpu":
        if args.emit == "ptx" or args.output.endswith(".ptx"):
            return "PTX is made for --target=nvptx"
        return None
    if args.emit in ("asm", "obj") or (args.emit is None and _is_library(args.output)):
        return "--target=nvptx makes PTX: use --emit=ptx, or -o NAME.ptx"
    if args.data_parallel is not None or args.own_grid:
        return "--target=nvptx does not partition models over ranks"
    unknown = sorted(set(args.disable) - set(pipeline.pipeline_pass_names(args.target)))
    if unknown:
        return f"the nvptx pipeline runs no pass {', '.join(map(repr, unknown))}"
    return None


def _compile_gpu(top, args, filename: str) -> int:
    """`--target=nvptx` with `--emit=ptx|llvm` or `-o NAME.ptx`: each selected model
    lowered by the nvptx ladder and its kernels compiled (`irkit.runtime.cuda`)."""
    from irkit.backends.nvptx import emit_kernel_llvm_ir
    from irkit.runtime.cuda import compile_gpu_model
    models = _select_models(top, args, filename)
    if models is None:
        return 1
    if args.emit is None and len(models) != 1:
        sys.stderr.write(f"irkit-compile: error: -o {args.output} holds one model; "
                         f"{filename} has {len(models)} ({', '.join(models)}): choose one "
                         "with --model\n")
        return 1

    def make_pm(start, stop):
        return _pass_manager(args, _rows(args, start, stop), by_row=True)
    t0 = time.perf_counter()
    texts = []
    for name, module in models.items():
        program = compile_gpu_model(module, arch=args.gpu_arch, opt_level=args.opt_level,
                                    disable=args.disable, make_pm=make_pm)
        if args.emit is None:
            program.write(args.output)
        elif args.emit == "ptx":
            texts.append(f"// irkit model @{name}\n{program.ptx}")
        else:
            texts.append(emit_kernel_llvm_ir(program.lowered.op, args.gpu_arch,
                                             args.opt_level))
    if texts:
        _write_text(args.output, "\n".join(texts))
    if args.timing is not None:
        args.timing.add_phase(f"Backend (nvptx {args.emit or 'ptx'})", time.perf_counter() - t0)
    return 0


def _uses_cache(args) -> bool:
    """Whether this command line is served through the compile cache: there is one (not
    `--no-cache`, `IRKIT_CACHE_DIR` not empty), it asks for a library or an object file
    (what the cache holds), and nothing that observes the pipeline run (timing, IR printing,
    numeric verification, memory reports). A miss verifies as `--verify-each` says."""
    from irkit.user_cache import cache_directory
    observed = (args.mlir_timing or args.memory_report or args.fusion_report
                or args.partition_report
                or args.verify_each == "numeric"
                or args.mlir_print_ir_after_all or args.mlir_print_ir_before_all
                or args.mlir_print_ir_after or args.mlir_print_ir_before
                or args.mlir_print_ir_after_failure)
    return (not args.no_cache and args.emit in (None, "obj") and not observed
            and args.target == "cpu"
            and cache_directory() is not None)


class _NoSuchModel(Exception):
    """`--model` names no model of the file (already reported on stderr)."""


def _compile_cached(text: str, filename: str, args) -> int:
    """`-o NAME.so` or `--emit=obj` through the compile cache
    (`irkit.runtime.compile_cache`): a hit skips the DSL, the passes and LLVM, and a library
    is linked from the cached object code."""
    from irkit.exporters.library import write_library
    from irkit.runtime.compile_cache import cached_compile
    from irkit.runtime.compiled import compile_models

    def build():
        models = _select_models(_compiled_source(text, filename, args), args, filename)
        if models is None:
            raise _NoSuchModel
        return compile_models(models, opt_level=args.opt_level, cpu=args.cpu, jit=False,
                              make_pm=lambda start, stop: _pass_manager(
                                  args, _rows(args, start, stop), by_row=True))
    try:
        compiled = cached_compile(text, filename, args.model or "*", build, jit=False,
                                  options={"opt_level": args.opt_level, "cpu": args.cpu,
                                           **pipeline.edits_record(args.disable,
                                                                   args.pass_options),
                                           "data_parallel": args.data_parallel,
                                           "micro_batches": args.micro_batches,
                                           **({"tuning": args.tuned} if args.tuned else {})})
    except _NoSuchModel:
        return 1
    if args.emit == "obj":
        return _write_object(args.output, compiled.code.data)
    write_library({n: mc.lowered.op for n, mc in compiled.models.items()}, args.output,
                  opt_level=args.opt_level, cpu=args.cpu, object_code=compiled.code.objects,
                  graphs={n: mc.graph.op for n, mc in compiled.models.items()})
    return 0


def _write_object(path: str, data: bytes) -> int:
    """An object file to `path` ('-': stdout, never a terminal); the exit status."""
    if path != "-":
        _write_file(path, data)
        return 0
    if sys.stdout.isatty():
        sys.stderr.write("irkit-compile: error: refusing to write an object file "
                         "to a terminal; use -o FILE.o or redirect stdout\n")
        return 1
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
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


def _partition_report(top, args, filename: str) -> None:
    """`--partition-report`: per model, the collectives' bytes and the cost model's table
    (see the module docstring), on stderr."""
    from irkit.passes.parallel_report import (
        collective_traffic, format_cost_table, format_traffic, weight_layers,
    )
    from irkit.symbols import lookup_symbol_in
    models = _select_models(top, args, filename) or {}
    for name, module in models.items():
        part = module.clone()
        _pass_manager(None, _rows(args, None, pipeline.DEV_STAGE)).run(part)
        traffic = collective_traffic(part)
        how = f"{args.data_parallel} ranks (data parallel)" if args.data_parallel else \
            "its grid"
        sys.stderr.write(f"partition report: {name} on {how}, bytes per step\n"
                         f"{format_traffic(traffic)}\n")
        step = "train_step" if lookup_symbol_in(module, "train_step") is not None \
            else "forward"
        grads = sum(t.payload(args.batch) for t in traffic
                    if t.function == step and t.kind == "parallel.all_reduce")
        plain = module.clone()
        _pass_manager(None, pipeline.passes_between(
            None, pipeline.DEV_STAGE, args.disable, pass_options=args.pass_options)).run(plain)
        layers = weight_layers(lookup_symbol_in(plain, "forward"))
        seconds = args.step_ms / 1e3 if args.step_ms is not None else \
            _measure_step(module, step, args.batch)
        sys.stderr.write(format_cost_table(name, seconds, grads, layers, args.batch) + "\n")


def _measure_step(module, step: str, batch: int) -> float:
    """Seconds of one `step` of the unpartitioned model compiled here, at `batch` (the
    median of 5 calls after one warm-up; float inputs normal, integer inputs 0)."""
    import numpy as np
    from irkit.runtime.model import Model
    m = Model(module, "jit")
    rng = np.random.default_rng(0)
    given = {s.name: (rng.normal(size=[batch if isinstance(d, str) else d for d in s.dims])
                      .astype(s.dtype) if s.dtype.kind == "f" else
                      np.zeros([batch if isinstance(d, str) else d for d in s.dims], s.dtype))
             for s in m.inputs}
    run = m.train_step if step == "train_step" else m.forward
    run(**given)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        run(**given)
        times.append(time.perf_counter() - t0)
    return sorted(times)[2]


def _tuned(text: str, args) -> dict:
    """The tuning records of this file's models for `--cpu` (`irkit.runtime.tuning`): what
    `_compiled_source` sets on them and the compile cache's key includes."""
    if args.target != "cpu":
        return {}
    from irkit.runtime import tuning
    return tuning.lookup(text, args.cpu)


def _compiled_source(text: str, filename: str, args):
    """The DSL's module of the file, each model given its recorded BLIS sizes and, for a
    `--cpu` other than this machine's, the `irkit.target` its passes size code for."""
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.runtime import tuning
    from irkit.runtime.compiled import mark_target
    top = compile_source(text, filename)
    models = model_modules(top)
    tuning.apply(models, args.tuned)
    if args.target == "cpu":
        mark_target(models, args.cpu)
    return top


def _autotune(text: str, filename: str, args) -> int:
    """`--autotune`: tune each selected model that has contractions to schedule; its table
    on stderr. Nonzero where it cannot."""
    from irkit.frontend.dsl import compile_source
    from irkit.tools import autotune
    if args.target != "cpu" or args.data_parallel is not None or args.own_grid:
        sys.stderr.write("irkit-compile: error: --autotune tunes one process on this CPU "
                         "(not --target=nvptx, --data-parallel or a model's grid)\n")
        return 1
    models = _select_models(compile_source(text, filename), args, filename)
    if models is None:
        return 1
    for name, module in models.items():
        dims = {d: args.autotune_sizes.get(d, 128) for s in _symbolic_inputs(module)
                for d in s}
        result = autotune.autotune(text, filename, name, dims=dims, cpu=args.cpu,
                                   progress=autotune.print_progress)
        if not result.sites:
            sys.stderr.write(f"irkit-compile: autotune {name}: no matmul or convolution "
                             "large enough to schedule; nothing to tune\n")
            continue
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        sys.stderr.write(result.table() + "\n")
    return 0


def _symbolic_inputs(module) -> list[list[str]]:
    """The symbolic dims of each input of a model module's `@forward`."""
    from irkit.runtime.engines import arg_specs
    from irkit.symbols import lookup_symbol_in
    forward = lookup_symbol_in(module, "forward")
    return [[d for d in s.dims if isinstance(d, str)] for s in arg_specs(forward)]


def run(args) -> int:
    from irkit.diagnostics import IRError
    from irkit.pass_manager import Timing
    from irkit.printer import print_op
    from irkit.tools.opt import read_input
    args.timing = Timing() if args.mlir_timing else None
    if args.target is None:
        args.target = "nvptx" if args.output.endswith(".ptx") else "cpu"
    if args.emit is None and not _is_library(args.output) and not args.output.endswith(".ptx"):
        args.emit = "graph"
    source = read_input("irkit-compile", args.input)
    if source is None:
        return 1
    text, filename = source
    # a model's own grid partitions it as `load_model` does (`distributed_engine`); without
    # the word `grid` in the text no model can declare one
    args.own_grid = re.search(r"\bgrid\b", text) is not None
    refused = _refused_by_target(args)
    if refused is not None:
        sys.stderr.write(f"irkit-compile: error: {refused}\n")
        return 2
    try:
        if args.autotune and _autotune(text, filename, args):
            return 1
        args.tuned = _tuned(text, args)
        if _uses_cache(args):
            return _compile_cached(text, filename, args)
        t0 = time.perf_counter()
        top = _compiled_source(text, filename, args)
        if args.partition_report:
            if args.data_parallel is None and not args.own_grid:
                sys.stderr.write("irkit-compile: error: --partition-report needs "
                                 "--data-parallel N or a model with a grid\n")
                return 2
            _partition_report(top, args, filename)
        if args.timing is not None:
            args.timing.add_phase("Parser (DSL)", time.perf_counter() - t0)
        if args.emit is None or args.emit in BINARY_STAGES:
            compile_for = _compile_gpu if args.target == "nvptx" else _compile_machine
            status = compile_for(top, args, filename)
        else:
            _pass_manager(args, _rows(args, None, args.emit)).run(top)
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
    redeliver_swallowed_interrupts()
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
