"""The LLVM CPU backend: irkit IR (`func`, `arith`, `math`, `loop`, `memory`) to machine code
for the host CPU, run in process or written out as an object file and a shared library.

    jit = compile_module(module, opt_level=2)
    y = jit.f(x, 3)                     # numpy in, numpy out
    obj = emit_object(module)           # ELF/Mach-O bytes for the host
    link_shared([obj], "model.so")      # `cc -shared`

Algorithm:

1. Verify the module (a malformed one is reported by the verifier, not by LLVM).
2. Translate it with llvmlite's `IRBuilder` and a value map (`llvm_lowering.ModuleLowering`,
   with the rules of `llvm_arith` and `llvm_memory`); an op or type without a translation is
   a located `BackendError` naming it.
3. Parse the result into an LLVM module for the host triple and data layout, and check it
   with LLVM's verifier (a failure there is a bug in a rule, reported as such). For object
   code, first split it into partitions (`llvm_partition`: one per core, the host
   functions apart from the outlined loops), each parsed, optimized and compiled to an
   object file in an LLVM context of its own on a thread of its own (`compile_object`);
   MCJIT loads the objects together, `cc` links them.
4. Optimize with LLVM's new pass manager (`PassBuilder`) at the LLVM level irkit's -O0..-O3
   asks for (`llvm_level`: -O2 is LLVM's -O1, whose loops irkit has tiled and vectorized
   already; the host functions of a split module at most at -O1), for a CPU
   (`cpu_target`): by default the host, the target machine made for
   `llvm.get_host_cpu_name()` with the features `llvm.get_host_cpu_features()` reports, so
   the vectorizers use the widest vector ISA the machine has (AVX-512, AVX2, NEON, ...);
   or an x86-64 psABI level (`x86-64-v3`, `x86-64-v4`) or the baseline (`generic`), for
   code that must run on other machines.
5. Either hand the module to MCJIT and wrap each public function in a `JitFunction`
   (`llvm_abi`), or emit an object file / assembly text.

Calling convention (the C interface, detailed in `llvm_lowering` and docs/backend.md): each
`func.func @f` is a symbol `f` of type `void f(args..., result_ptrs...)`. Scalars are passed
by value (`i1` as a byte, `f16` as its 16 bits), vectors as pointers to their elements,
memrefs as pointers to MLIR's descriptor `{T* allocated, T* aligned, i64 offset,
i64 sizes[R], i64 strides[R]}`, and every result is written through a pointer appended after
the arguments.

Threads: parallel loops call the GNU OpenMP runtime (`llvm_parallel`), which the JIT loads
into the process (`openmp_library`) and a shared library names as a dependency; the thread
count is a setting of the loaded code (`JitModule.set_threads`), not of the compilation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

import llvmlite.binding as llvm
import llvmlite.ir as ir

from irkit.ir import Operation
from irkit.symbols import symbol_uses
from irkit.target import Target, from_features, host
from irkit.backends import (  # noqa: F401  (register their rules)
    llvm_arith, llvm_collectives, llvm_memory, llvm_parallel, llvm_vector,
)
from irkit.backends.llvm_abi import JitFunction
from irkit.backends.llvm_parallel import SLEEPING_WORK_SHIFT, THREADS_GLOBAL, WORK_SHIFT_GLOBAL
from irkit.backends.llvm_lowering import RULES, ModuleLowering, Signature
from irkit.backends.llvm_partition import Partition, split_module
from irkit.backends.llvm_pyentry import CALL_PREFIX, PREFIX, add_python_entries
from irkit.backends.llvm_types import BackendError, error_at

__all__ = ["compile_module", "JitModule", "translate", "optimized_module", "emit_llvm_ir",
           "ObjectCode", "compile_object", "compile_partitions", "start_object", "load_object",
           "entry_functions", "emit_object",
           "emit_assembly", "link_shared", "load_shared", "host_cpu", "host_target",
           "missing_features", "cpu_target", "pass_target", "CPU_CHOICES", "openmp_library",
           "check_threads",
           "run_interruptibly", "BackgroundCall", "BackendError"]


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # The C math library, for the calls the code makes (erff, tanhf, ...): the Python
    # executable usually has it loaded already; this makes sure MCJIT can resolve it.
    # And the compiler's runtime library, for the helpers LLVM's code generator calls where
    # the CPU has no instruction: half-precision conversions (`__truncdfhf2` for f64 -> f16
    # everywhere without AVX512-FP16, `__extendhfsf2` without F16C). Nothing has it loaded;
    # an unresolved helper would be a call to address 0. A linked .so gets it from `cc`.
    for soname, name in (("libm.so.6", "m"), ("libgcc_s.so.1", "gcc_s")):
        _load_library(soname, lambda name=name: ctypes.util.find_library(name))
    # And the OpenMP runtime the parallel loops call (`llvm_parallel`), when it is there,
    # its waiting threads told how long to spin before they sleep (`spin_rounds`). Read when
    # libgomp loads; a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = str(spin_rounds(os.environ, _background_load(),
                                                       _usable_cpus()))
    _load_library("libgomp.so.1", openmp_library)


def _load_library(soname: str, find) -> None:
    """A system library loaded into the process, where MCJIT resolves the code's calls: by
    its `soname` through the dynamic loader, what a linked library's DT_NEEDED gets; else
    by the path or name `find()` gives (None: not there). The soname first because finding
    runs programs (`find_library` runs ldconfig, `openmp_library` the C compiler): 5-10 ms
    of every warm start, for the same library."""
    try:
        llvm.load_library_permanently(soname)
        return
    except RuntimeError:
        pass
    lib = find()
    if lib:
        llvm.load_library_permanently(lib)


#: how many rounds libgomp's waiting threads spin before they sleep, where the machine has
#: a core for each (`spin_rounds`)
SPIN_ROUNDS = 30_000
#: environment variables one of which an MPI launcher (MPICH's Hydra, Open MPI, PMIx) sets in
#: every rank it starts
_MPI_RANK_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def spin_rounds(env, others: float, cpus: int) -> int:
    """GOMP_SPINCOUNT for this process: `SPIN_ROUNDS` where its team of threads may keep a
    core each, 0 (sleep at once) where they would share cores with other work (`others`:
    the tasks besides this process that want a core, `_background_load`).

    Why both. A training step is a dozen parallel loops back to back, microseconds apart. A
    thread that sleeps between them costs a futex wake per loop (10-25 us), one that spins
    catches the next loop at once: measured here (2 cores, quiet, `bench/run.py`, each engine
    in its own process), the MLP 784-256-10 step at B=128 on 2 threads took 1.46-1.66 ms with
    0 to 3,000 rounds, 0.86-0.96 ms with 30,000 (libgomp's own default, 300,000: 0.95 ms),
    against numpy's 0.73-1.4 ms. But on a machine busy with other work a spinning thread
    holds the core its teammate needs: with one core kept busy by another process, 0 rounds
    gave 1.51 ms, 10,000 rounds 2.36 ms and 30,000 rounds 4.99 ms (and 300,000 rounds at
    load 4 a 100 ms median). So: spin where the team (`OMP_NUM_THREADS` threads, or one per
    core) and the other work fit on the cores (`round(others) + team <= cpus`), and never in
    an MPI rank, whose siblings share the machine's cores by design. The load is read once,
    when libgomp loads (a machine that gets busy later keeps the spinning;
    OMP_WAIT_POLICY=passive, or GOMP_SPINCOUNT, decides for a process that knows better)."""
    if cpus < 2 or any(v in env for v in _MPI_RANK_VARIABLES):
        return 0
    try:
        team = min(cpus, int(env.get("OMP_NUM_THREADS", "").split(",")[0]))
    except ValueError:
        team = cpus
    return SPIN_ROUNDS if team >= 2 and round(others) + team <= cpus else 0


def threads_sleep(env) -> bool:
    """Whether libgomp's threads sleep between regions under environment `env` (its two
    variables, as libgomp reads them when it loads): OMP_WAIT_POLICY=passive, or
    GOMP_SPINCOUNT 0 (`spin_rounds`'s choice, or the user's). The parallel loops then need
    more work per thread to fork a team (`llvm_parallel.SLEEPING_WORK_SHIFT`). The C API's
    `irkit_set_threads` applies the same rule (exporters/library_c.py)."""
    if env.get("OMP_WAIT_POLICY", "").strip().lower() == "passive":
        return True
    try:
        return int(env.get("GOMP_SPINCOUNT", "").strip()) == 0
    except ValueError:
        return False


def _usable_cpus() -> int:
    """The cores this process may run on (its affinity mask, where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _background_load() -> float:
    """How many tasks besides this process want a core: the smaller of the 1-minute load
    average and the tasks runnable at this moment less this one (Linux's /proc/loadavg).

    The average alone remembers up to a minute of work that has ended (a benchmark's
    previous process, read as a busy core by the next one); the moment alone may miss a
    neighbour that was between two bursts. A neighbour busy all along shows in both. Where
    the system has neither, 0 (taken for a quiet one)."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
        return min(float(fields[0]), int(fields[3].split("/")[0]) - 1)
    except (OSError, IndexError, ValueError):
        pass
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


@functools.cache
def openmp_library() -> str | None:
    """The GNU OpenMP runtime (libgomp) that parallel loops run on: its path as the C
    compiler's driver finds it (`cc -print-file-name=libgomp.so.1`, what linking with
    `-fopenmp` would use), else its name as the dynamic loader knows it (ldconfig). None,
    with a warning, when neither has it: parallel loops are then compiled sequentially."""
    cc = find_c_compiler()
    if cc is not None:
        try:
            out = subprocess.run([cc, "-print-file-name=libgomp.so.1"], capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        if os.path.isabs(out) and os.path.isfile(out):
            return os.path.realpath(out)
    found = ctypes.util.find_library("gomp")
    if found is None:
        import warnings
        warnings.warn("the OpenMP runtime libgomp was not found (Debian: apt-get install "
                      "libgomp1): compiled parallel loops run on one thread", RuntimeWarning,
                      stacklevel=2)
    return found


def check_threads(threads: int) -> int:
    """`threads` if it is a valid thread count for compiled code: 0 (OpenMP's default: the
    `OMP_NUM_THREADS` environment variable, else every core) or a positive int; else a
    ValueError."""
    if isinstance(threads, bool) or not isinstance(threads, int) or \
            not 0 <= threads < 2 ** 31:
        raise ValueError(f"threads must be 0 (OpenMP's default: OMP_NUM_THREADS, else every "
                         f"core) or a positive integer, got {threads!r}")
    return threads


@functools.cache
def host_cpu() -> tuple[str, str]:
    """(CPU name, feature string) of this machine, as LLVM detects them (once: asking
    LLVM waits for its lock, which a compilation on another thread holds for seconds)."""
    _initialize()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_target() -> dict[str, str]:
    """What code compiled here for this CPU is built for: the process triple, the CPU name
    and its feature string (`+avx2,-avx512f,...`), as the target machine is made from them.
    A library records it, so that loading it where the CPU lacks a feature is refused."""
    cpu, features = host_cpu()
    return {"triple": _process_triple(), "cpu": cpu, "features": features}


@functools.cache
def _process_triple() -> str:
    """LLVM's triple of this process (once, as `host_cpu`)."""
    _initialize()
    return llvm.get_process_triple()


#: where each compiled function's code starts: a multiple of a cache line (64 bytes; LLVM's
#: own choice on x86-64 is 16), so that a function's loops lie the same way in the
#: instruction cache and the decoded-instruction cache whatever code comes before it in the
#: module. Measured on the 2-vCPU Xeon VM: examples/cnn.irk's step (B = 64, 1 thread) ran
#: 2.5-4% slower after an unrelated kernel of its module shrank by 127 instructions (the
#: cross-entropy's, `memory-forward-stores`), with every hot function's instructions the
#: same (600-631 against 582-604 us, builds in one process called alternately, both
#: orders); with 64-byte starts the smaller module ran 1% faster (577 / 582 / 588 / 581
#: against 583 / 584 / 592 / 588 us). The alignment alone, 64 against 16 bytes, the same
#: code otherwise (us, both orders): the CNN 602 / 584 against 597 / 582 on 1 thread, 494 /
#: 493 against 491 / 490 on 2; the logistic regression (B = 100) 30.7 / 31.1 against 30.9
#: / 31.0 and 26.5 / 26.1 against 26.9 / 26.5; the MLP 784-256-10 at B = 128 697 / 694
#: against 705 / 700, at B = 1024 5384 / 5384 against 5398 / 5397: no cost of its own
FUNCTION_ALIGN = 64
#: the CPUs code can be compiled for (`irkit-compile --cpu`): this machine's, two x86-64
#: psABI levels, and the baseline of the architecture
CPU_CHOICES = ("native", "x86-64-v3", "x86-64-v4", "generic")
#: the x86-64 psABI's levels and the features (LLVM's names) each adds to the one before
_X86_64_LEVELS = {
    "x86-64": "cmov cx8 fxsr mmx sse sse2",
    "x86-64-v2": "cx16 sahf popcnt sse3 ssse3 sse4.1 sse4.2",
    "x86-64-v3": "avx avx2 bmi bmi2 f16c fma lzcnt movbe xsave",
    "x86-64-v4": "avx512f avx512bw avx512cd avx512dq avx512vl",
}


def cpu_target(cpu: str = "native") -> dict[str, str]:
    """What code compiled for `cpu` (one of `CPU_CHOICES`) is built for, as `host_target`
    says it: "native" is this machine (`host_target`); an x86-64 level is LLVM's CPU of that
    name with every feature the psABI gives it; "generic" is the architecture's baseline
    (x86-64: SSE2; elsewhere LLVM's `generic`)."""
    if cpu == "native":
        return host_target()
    if cpu not in CPU_CHOICES:
        raise ValueError(f"unknown cpu {cpu!r}; choose one of {', '.join(CPU_CHOICES)}")
    triple = _process_triple()
    if not triple.startswith("x86_64"):
        if cpu == "generic":
            return {"triple": triple, "cpu": "generic", "features": ""}
        raise BackendError(f"cpu {cpu} is an x86-64 level; this machine is {triple}")
    level = "x86-64" if cpu == "generic" else cpu
    levels = list(_X86_64_LEVELS)
    features = [f for lv in levels[:levels.index(level) + 1] for f in _X86_64_LEVELS[lv].split()]
    return {"triple": triple, "cpu": level, "features": ",".join("+" + f for f in features)}


def pass_target(cpu: str = "native") -> Target:
    """What the passes size code for when compiling for `cpu` (`irkit.target`'s docstring):
    this machine's target for "native"; else the vector registers of the features
    `cpu_target` gives that CPU, and this machine's last-level cache (the other machine's is
    not known)."""
    if cpu == "native":
        return host()
    t = cpu_target(cpu)
    features = {f[1:]: f[0] == "+" for f in t["features"].split(",") if f}
    return from_features(t["cpu"], features, host().llc_bytes)


def missing_features(target: dict[str, str]) -> list[str]:
    """The features enabled in `target` (from `cpu_target`, maybe another machine's) that
    this machine's CPU lacks."""
    have = {f for f in host_cpu()[1].split(",") if f.startswith("+")}
    return [f for f in target.get("features", "").split(",") if f.startswith("+") and
            f not in have]


class BackgroundCall:
    """`fn(*args, **kwargs)` started on a helper thread; `result()` waits for it.

    LLVM's optimization and code generation are long calls into C (seconds for a model);
    llvmlite's calls release the GIL, so while they run the calling thread can do its own
    Python work (a library's metadata and C wrapper: `exporters.library.write_library`),
    and, waiting in `result()`, it gets Ctrl-C within milliseconds: Python runs a SIGINT
    handler only between bytecodes of the main thread, which a call into C on the main
    thread would hold off until it returns. A call given up on (Ctrl-C) is abandoned: it
    finishes in the background (holding llvmlite's lock until then) and its result is
    dropped; a tool exits right away."""

    def __init__(self, fn, *args, **kwargs) -> None:
        import threading
        self._outcome: dict = {}

        def work():
            try:
                self._outcome["value"] = fn(*args, **kwargs)
            except BaseException as e:          # handed to the waiting thread
                self._outcome["error"] = e
        self._thread = threading.Thread(target=work, name="irkit-llvm", daemon=True)
        self._thread.start()

    def result(self):
        """The call's return value (or its exception, raised here), once it has finished."""
        self._thread.join()
        if "error" in self._outcome:
            raise self._outcome.pop("error")
        return self._outcome["value"]


def run_interruptibly(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`, run on a helper thread while this one waits for it, so that
    Ctrl-C acts at once (`BackgroundCall`)."""
    return BackgroundCall(fn, *args, **kwargs).result()


@functools.cache
def _target_machine(opt_level: int, jit: bool, cpu: str = "native") -> llvm.TargetMachine:
    """The target machine for `cpu` (shared: never hand it to an execution engine, which
    takes ownership and deletes it with itself)."""
    return _new_target_machine(opt_level, jit, cpu)


def _new_target_machine(opt_level: int, jit: bool,
                        cpu: str = "native") -> llvm.TargetMachine:
    """A target machine for `cpu` (`cpu_target`); position-independent code for objects
    (shared libraries)."""
    t = cpu_target(cpu)
    target = llvm.Target.from_triple(t["triple"])
    return target.create_target_machine(cpu=t["cpu"], features=t["features"],
                                        opt=llvm_level(opt_level),
                                        reloc="default" if jit else "pic",
                                        codemodel="jitdefault" if jit else "default")


def _check_opt_level(opt_level: int) -> None:
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")


# ---------------------------------------------------------------------------------------------
# Translation and optimization
# ---------------------------------------------------------------------------------------------


def translate(module: Operation, verify: bool = True) -> ir.Module:
    """The unoptimized llvmlite module of an irkit `builtin.module`."""
    return _translate(module, verify)[0]


def _translate(module: Operation, verify: bool, rules=RULES,
               functions: Collection[str] | None = None) -> tuple[ir.Module, ModuleLowering]:
    """Outermost `loop.parallel`s run on OpenMP threads where libgomp is found (see
    `llvm_parallel`), sequentially where not; ops are translated by `rules`; only the
    definitions named in `functions` when given (`entry_functions`)."""
    if verify:
        module.verify()
    ml = ModuleLowering(module, openmp=openmp_library() is not None, rules=rules,
                        only=functions, function_align=FUNCTION_ALIGN)
    irmod = ml.translate()
    add_python_entries(ml)
    return irmod, ml


def entry_functions(module: Operation, entry: str) -> frozenset[str]:
    """The names of the function definitions that the public function `entry` of `module`
    needs compiled: itself and every definition it refers to (calls, `func.constant`),
    directly or not. What the JIT
    compiles on an entry's first call (`irkit.runtime.compiled.CompiledModels`): a model's
    `forward` and `train_step` share no code but the loops they both outline, which each
    compiles on its own."""
    defined = {fn.properties["sym_name"].value: fn for fn in module.regions[0].blocks[0].ops
               if fn.name == "func.func" and fn.regions[0].blocks}
    if entry not in defined:
        raise BackendError(f"the module has no function definition '@{entry}'",
                           module.location)
    seen, todo = {entry}, [defined[entry]]
    while todo:
        for _, _, ref in symbol_uses(todo.pop()):
            if ref.root in defined and ref.root not in seen:
                seen.add(ref.root)
                todo.append(defined[ref.root])
    return frozenset(seen)


def optimized_module(module: Operation, opt_level: int = 2, *, cpu: str = "native",
                     jit: bool = False, timings: dict | None = None,
                     verify: bool = True) -> tuple[llvm.ModuleRef, ModuleLowering]:
    """Translate, parse, verify and optimize `module` for `cpu` (`cpu_target`); `timings`
    (if given) receives the milliseconds of each step. `verify=False` is for a module the
    caller has just verified (the pipeline's last row), where verifying again cost 0.1-0.2 s
    of a model's compile."""
    timings = {} if timings is None else timings
    mod, ml = _parsed_module(module, opt_level, cpu, jit, verify, timings)
    _optimize(mod, opt_level, cpu, jit, timings)
    return mod, ml


def _parsed_module(module: Operation, opt_level: int, cpu: str, jit: bool, verify: bool,
                   timings: dict, rules=RULES) -> tuple[llvm.ModuleRef, ModuleLowering]:
    """The Python half of compiling, the whole module in one piece: `module` verified,
    translated, parsed by LLVM and checked, for `cpu`'s target machine."""
    parts, ml = _partitioned(module, opt_level, verify, timings, rules, 1)
    step = _Steps(timings)
    mod = _parse(parts[0].text, module, _target_machine(opt_level, jit, cpu))
    step("parse_ms")
    return mod, ml


def _partitioned(module: Operation, opt_level: int, verify: bool, timings: dict, rules,
                 parts: int | None, functions: Collection[str] | None = None,
                 ) -> tuple[list[Partition], ModuleLowering]:
    """`module` (its definitions named in `functions` when given) verified, translated and
    split into at most `parts` partitions of its outlined loops and `parts` of its host
    functions, the cold ones (`llvm_level`; `llvm_partition.split_module`; None:
    `compile_partitions()`)."""
    _check_opt_level(opt_level)
    _initialize()
    timings["cpu_ms"] = {}
    step = _Steps(timings)
    irmod, ml = _translate(module, verify, rules, functions)
    # With OpenMP every loop nest of a parallel loop is outlined, and the module's own
    # functions are host code: sizes, the arena, thread dispatch, small sequential loops.
    cold = frozenset(ml.functions) if ml.openmp and llvm_level(opt_level, True) < \
        llvm_level(opt_level) else frozenset()
    # the Python entries, left unoptimized (`llvm_pyentry`), cost next to nothing for their
    # many lines: weighed by them, the MLP's step compiled in 420 ms against 330
    entries = frozenset(prefix + name for name in ml.functions
                        for prefix in (PREFIX, CALL_PREFIX))
    split = split_module(irmod, compile_partitions() if parts is None else parts, cold, entries)
    step("translate_ms")
    return split, ml


#: LLVM's optimization level (pass pipeline and code generator) for each of irkit's
#: `opt_level`s (`llvm_level`)
LLVM_LEVELS = {0: 0, 1: 1, 2: 1, 3: 3}
#: the LLVM level of the cold partitions (`llvm_partition`: the host functions, when their
#: parallel loops are outlined) at any higher level asked for
COLD_OPT_LEVEL = 1


def llvm_level(opt_level: int, cold: bool = False) -> int:
    """The LLVM optimization level that irkit's `opt_level` runs at, for a `cold` function
    (host code, its loops outlined) or any other.

    Why -O2 is LLVM's -O1. By the time a module reaches LLVM, irkit's passes have tiled,
    packed, unrolled and vectorized its loops (the BLIS micro-kernel is register-blocked in
    the IR): what LLVM's -O2 adds over -O1 (GVN, more inlining, the loop passes' heavier
    forms) found nothing left to speed up, and cost time. Measured on the benchmark
    workloads, each compiled both ways in one process and called alternately (1 thread, 60
    rounds, medians, ms, LLVM -O2 / -O1 for pipeline and code generator): MLP 784-256-10
    B=128 1.30 / 1.24 and 1.39 / 1.32, B=1024 10.4 / 9.9 and 10.2 / 9.9, cnn B=64 1.73 / 1.68
    and 1.69 / 1.64, matmul 1024^3 25.6 / 24.8 and 23.8 / 23.3, softmax 2.34 / 2.33, fused
    triad 5.52 / 5.51, logreg 0.065 / 0.065; and the LLVM CPU time of a cold compile went down
    by a quarter (examples/mlp.irk: 0.41 to 0.31 s on the critical path). LLVM's loop
    vectorizer still runs from irkit's -O2 up (`_optimize`), for loops that reach the
    backend scalar (a module written by hand). -O3 asks for LLVM's -O3 throughout, but for
    the cold functions: LLVM's -O1 took their LLVM time down by 10-30% (cnn's train_step:
    0.60 to 0.41 s) for steps that ran as fast."""
    _check_opt_level(opt_level)
    level = LLVM_LEVELS[opt_level]
    return min(level, COLD_OPT_LEVEL) if cold else level


def _parse(text: str, module: Operation, tm: llvm.TargetMachine,
           context=None) -> llvm.ModuleRef:
    """`text` parsed by LLVM, in `context` (its own, not llvmlite's lock: `_unlocked`) or
    in the global one, checked by LLVM's verifier, and made for `tm`'s target."""
    try:
        if context is None:
            mod = llvm.parse_assembly(text)
        else:
            with llvm.ffi.OutputString() as error:
                mod = llvm.ModuleRef(_unlocked("LLVMPY_ParseAssembly")(
                    context, ctypes.c_char_p(text.encode("utf-8")), error), context)
                if error:
                    mod.close()
                    raise RuntimeError(f"LLVM IR parsing error\n{error}")
        mod.verify()
    except RuntimeError as e:
        raise BackendError(f"internal error: the LLVM IR translated from this module is "
                           f"invalid: {e}", module.location) from None
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    return mod


def _unlocked(name: str):
    """llvmlite's C function `name`, called without llvmlite's lock.

    llvmlite makes every call into LLVM under one process-wide lock, so threads calling it
    take turns. LLVM itself is thread-safe for work on distinct contexts, modules and target
    machines, which is what each partition's thread has (`_compile_partition`): its long
    calls (the parse, the pass pipeline, code generation) go around the lock, the short
    ones keep it. Where llvmlite's wrapper is not as expected, the call keeps the lock."""
    fn = getattr(llvm.ffi.lib, name)
    return getattr(fn, "_cfn", fn)


def _optimize(mod: llvm.ModuleRef, opt_level: int, cpu: str, jit: bool,
              timings: dict, tm: llvm.TargetMachine | None = None, cold: bool = False) -> None:
    """The LLVM pipeline irkit's -O`opt_level` asks for (`llvm_level`) on `mod`, of `cold`
    functions or not, for `tm` (default the shared target machine of `cpu`); C, without
    llvmlite's lock (`_unlocked`)."""
    t0 = time.perf_counter()
    pto = llvm.create_pipeline_tuning_options(speed_level=llvm_level(opt_level, cold))
    pto.loop_vectorization = opt_level >= 2 and not cold
    # No SLP vectorizer: irkit vectorizes its loops in the IR (`loop-vectorize`), and on the
    # example models SLP took 50-80% of the optimization time (cnn's train_step: 5.5 of
    # 7.8 s) for no measurable speed of the code (bench/compile_time.py, issue 14).
    pto.slp_vectorization = False
    # No loop unroller either: irkit's loops come vectorized from the IR (the BLIS micro-
    # kernel register-blocked); unrolling them again took 10-26% of the LLVM time of the
    # examples (cnn: 3.85 s CPU with it, 2.97 without) and the training steps ran as fast
    # without it (interleaved, 1 thread, min ms with / without: MLP 784-256-10 B=128
    # 1.27 / 1.22, examples/mlp B=1024 1.11 / 1.10, logreg 0.083 / 0.083, cnn B=64 3.85 /
    # 3.85).
    pto.loop_unrolling = False
    pb = llvm.create_pass_builder(tm or _target_machine(opt_level, jit, cpu), pto)
    _unlocked("LLVMPY_RunNewModulePassManager")(pb.getModulePassManager(), mod, pb)
    timings["optimize_ms"] = (time.perf_counter() - t0) * 1e3


def emit_llvm_ir(module: Operation, opt_level: int = 0, cpu: str = "native") -> str:
    """The LLVM IR text of `module` after the -O`opt_level` pipeline (for FileCheck)."""
    return str(optimized_module(module, opt_level, cpu=cpu)[0])


@dataclass
class ObjectCode:
    """The object files of a module (`objects`: one per partition, `llvm_partition`) and
    what loading them needs to know: `externals` (the symbols their code calls but none
    defines: the C library's, the runtime's) and the step `timings` (ms) of compiling them;
    `llvm_ir` is the optimized LLVM IR text when asked for (`compile_object(...,
    keep_ir=True)`), else ""."""

    objects: tuple[bytes, ...]
    externals: tuple[str, ...]
    timings: dict
    llvm_ir: str = ""

    @property
    def data(self) -> bytes:
        """The object code as one relocatable object file: the only one, or all of them
        linked into one (`cc -r`)."""
        if len(self.objects) == 1:
            return self.objects[0]
        with tempfile.TemporaryDirectory(prefix="irkit-link-") as tmp:
            out = os.path.join(tmp, "all.o")
            _run_c_compiler(["-r", "-nostdlib", "-o", out, *_written(self.objects, tmp)], out)
            with open(out, "rb") as f:
                return f.read()


#: the most partitions a module is compiled in (`llvm_partition`), however many cores
MAX_PARTITIONS = 8


def compile_partitions() -> int:
    """How many partitions a module is compiled in, side by side: one per core this process
    may run on, at most `MAX_PARTITIONS`."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1
    return max(1, min(cores, MAX_PARTITIONS))


def compile_object(module: Operation, opt_level: int = 2, cpu: str = "native", *,
                   jit: bool = False, keep_ir: bool = False, verify: bool = True,
                   rules=RULES, partitions: int | None = None,
                   functions: Collection[str] | None = None) -> ObjectCode:
    """`module` translated, optimized and compiled to object files for `cpu`
    (`cpu_target`: this machine's by default), its functions in `partitions` parts, and
    as many again of the host functions (`_partitioned`; default `compile_partitions()`),
    compiled side by side on as many threads. `functions` names the definitions to compile
    (default: all), which must include every one they call (`entry_functions`).

    `jit=True` is for `load_object` in a process (MCJIT's code model: the large one, so that
    no reference between sections loaded anywhere in memory is out of range); `jit=False`
    is position-independent code for a shared library (`link_shared`); `verify` as for
    `optimized_module`; `rules` translate the ops (`llvm_lowering.ModuleLowering`: the GPU's
    host code has its own, `nvptx.host.HOST_RULES`)."""
    timings: dict = {}
    parts, ml = _partitioned(module, opt_level, verify, timings, rules, partitions, functions)
    return _object_code(parts, ml, module, opt_level, cpu, jit, keep_ir, timings)


def start_object(module: Operation, opt_level: int = 2, cpu: str = "native", *,
                 jit: bool = False, keep_ir: bool = False, verify: bool = True,
                 rules=RULES, partitions: int | None = None) -> BackgroundCall:
    """`compile_object`, its Python half (verification, translation, the split) done here
    and its LLVM half (optimization and code generation, which release the GIL) started on
    a helper thread: the caller's own work overlaps it, and `.result()` is the
    `ObjectCode`."""
    timings: dict = {}
    parts, ml = _partitioned(module, opt_level, verify, timings, rules, partitions)
    return BackgroundCall(_object_code, parts, ml, module, opt_level, cpu, jit, keep_ir,
                          timings)


def _object_code(parts: list[Partition], ml: ModuleLowering, module: Operation,
                 opt_level: int, cpu: str, jit: bool, keep_ir: bool,
                 timings: dict) -> ObjectCode:
    """The LLVM half of `compile_object`: each partition compiled on a thread of its own
    (the first on this one). Each step's time is the slowest partition's (what it takes
    where each thread has a core); `cpu_ms` holds each step's CPU time, all partitions
    together (and the translation's), and the slowest partition's; `partitions` is their
    number."""
    args = (module, opt_level, cpu, jit, keep_ir)
    others = [BackgroundCall(_compile_partition, part, *args) for part in parts[1:]]
    done = [_compile_partition(parts[0], *args)] + [call.result() for call in others]
    defined = {name for part in parts for name in part.functions}
    externals = set(ml.runtime_symbols)
    for _, _, _, declared in done:
        externals.update(declared - defined)
    steps = ("parse_ms", "optimize_ms", "codegen_ms")
    timings.update({step: max(t[step] for _, _, t, _ in done) for step in steps},
                   partitions=len(done))
    timings["cpu_ms"].update({step: sum(t["cpu_ms"][step] for _, _, t, _ in done)
                              for step in steps},
                             slowest_partition_ms=max(sum(t["cpu_ms"].values())
                                                      for _, _, t, _ in done))
    return ObjectCode(tuple(obj for obj, _, _, _ in done), tuple(sorted(externals)), timings,
                      "\n".join(text for _, text, _, _ in done))


def _compile_partition(part: Partition, module: Operation, opt_level: int, cpu: str,
                       jit: bool, keep_ir: bool) -> tuple[bytes, str, dict, set[str]]:
    """(object file, optimized IR text if `keep_ir`, step timings, the functions it declares)
    of one partition, compiled in an LLVM context and with a target machine of its own, so
    that threads compile partitions side by side (`_unlocked`)."""
    timings: dict = {"cpu_ms": {}}
    step = _Steps(timings)
    tm = _new_target_machine(opt_level, jit, cpu)
    mod = _parse(part.text, module, tm, llvm.create_context())
    step("parse_ms")
    _optimize(mod, opt_level, cpu, jit, {}, tm, part.cold)
    step("optimize_ms")
    declared = {f.name for f in mod.functions
                if f.is_declaration and not f.name.startswith("llvm.")}
    text = str(mod) if keep_ir else ""
    step.start()
    with llvm.ffi.OutputString() as error:
        buffer = _unlocked("LLVMPY_TargetMachineEmitToMemory")(tm, mod, 1, error)
        if not buffer:
            raise BackendError(f"internal error: LLVM's code generation failed: {error}",
                               module.location)
    try:
        data = ctypes.string_at(llvm.ffi.lib.LLVMPY_GetBufferStart(buffer),
                                llvm.ffi.lib.LLVMPY_GetBufferSize(buffer))
    finally:
        llvm.ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)
    step("codegen_ms")
    return data, text, timings, declared


class _Steps:
    """Records into `timings` the wall time (ms) of each step since the last, and its CPU
    time on this thread under `timings["cpu_ms"]`."""

    def __init__(self, timings: dict) -> None:
        self.timings = timings
        self.start()

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __call__(self, name: str) -> None:
        self.timings[name] = (time.perf_counter() - self.wall) * 1e3
        self.timings["cpu_ms"][name] = (time.thread_time() - self.cpu) * 1e3
        self.start()


def emit_object(module: Operation, opt_level: int = 2, cpu: str = "native") -> bytes:
    """A relocatable, position-independent object file of `module` for `cpu`; its public
    functions are global symbols with the C interface (see the module docstring)."""
    return compile_object(module, opt_level, cpu).data


def emit_assembly(module: Operation, opt_level: int = 2, cpu: str = "native") -> str:
    """The assembly text of `module` for `cpu`."""
    mod, _ = optimized_module(module, opt_level, cpu=cpu)
    return _target_machine(opt_level, False, cpu).emit_assembly(mod)



class JitModule:
    """The compiled public functions of a module, as attributes: `jit.f(x, y)`.

    `timings` holds the milliseconds each compilation step took, `llvm_ir` the optimized
    LLVM IR text. `set_threads` writes the code's thread count and work threshold
    (`llvm_parallel.THREADS_GLOBAL`, `WORK_SHIFT_GLOBAL`), where it has them.
    """

    def __init__(self, functions: dict[str, JitFunction], llvm_ir: str, timings: dict,
                 owner) -> None:
        self.functions = functions
        self.llvm_ir = llvm_ir
        self.timings = timings
        self._owner = owner         # the execution engine (or library) holding the code

    def set_threads(self, threads: int) -> None:
        """How many threads the parallel loops use from the next call on (`check_threads`):
        0 for OpenMP's default (OMP_NUM_THREADS, else every core), 1 for the calling thread
        only; and how much work a team needs, by whether the threads sleep between regions
        (`threads_sleep` of this process's environment). Code without parallel loops or
        without OpenMP has nothing to set; a shared library sets both itself, in its C
        `irkit_set_threads`."""
        check_threads(threads)
        address = self.global_address(THREADS_GLOBAL)
        if address:
            ctypes.c_int.from_address(address).value = threads
        address = self.global_address(WORK_SHIFT_GLOBAL)
        if address:
            ctypes.c_int64.from_address(address).value = \
                SLEEPING_WORK_SHIFT if threads_sleep(os.environ) else 0

    def global_address(self, name: str) -> int:
        """Where the in-process code's global `name` lives (0: it has none; a library's
        hidden globals are not looked up)."""
        find = getattr(self._owner, "get_global_value_address", None)
        return find(name) if find is not None else 0

    def __getattr__(self, name: str) -> JitFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"no public function '@{name}' in the compiled module (it has "
                             f"{', '.join('@' + n for n in sorted(functions)) or 'none'})")

    def __getitem__(self, name: str) -> JitFunction:
        return getattr(self, name)

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions)


def compile_module(module: Operation, opt_level: int = 2, threads: int = 0,
                   cpu: str = "native") -> JitModule:
    """Compile `module` for `cpu` (`cpu_target`; refused where this CPU lacks one of its
    features) and load it into the process (MCJIT); its parallel loops run on `threads`
    threads (`JitModule.set_threads`: 0, the default, is OpenMP's default)."""
    check_threads(threads)
    missing = missing_features(cpu_target(cpu))
    if missing:
        raise BackendError(f"cannot run code compiled for cpu {cpu} here: this CPU lacks "
                           f"{', '.join(f[1:] for f in missing)}")
    code = compile_object(module, opt_level, cpu, jit=True, keep_ir=True)
    _check_external_functions(module)
    jm = load_object(code, {fn.properties["sym_name"].value: fn for fn in _public(module)})
    jm.llvm_ir = code.llvm_ir
    # emitting the object and loading it are together what MCJIT's code generation was
    jm.timings = {**code.timings,
                  "codegen_ms": code.timings["codegen_ms"] + jm.timings["load_ms"]}
    jm.set_threads(threads)
    return jm


def load_object(code: ObjectCode, functions: dict[str, Operation]) -> JitModule:
    """Load the object files from `compile_object(..., jit=True)` (made in this process or
    another) into this process with MCJIT, and wrap the `func.func`s of `functions` (symbol
    -> the function, whose type gives the signature; its body is not read) as `JitFunction`s.

    Every external symbol the code calls must exist in the process first: MCJIT aborts the
    whole process on an unresolved one, so a missing one is a `BackendError` here."""
    _initialize()
    for name in code.externals:
        if not llvm.address_of_symbol(name):
            raise BackendError(f"the C library function '{name}' the compiled code calls is "
                               "not available in this process")
    t0 = time.perf_counter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""),
                                        _new_target_machine(0, True))
    for data in code.objects:       # one engine: the objects' symbols resolve one another
        engine.add_object_file(llvm.ObjectFileRef.from_data(data))
    engine.finalize_object()
    jitted = {}
    for symbol, fn in functions.items():
        sig = Signature(fn)
        addr = engine.get_function_address(symbol)
        if not addr:
            raise BackendError(f"the object code has no function '{symbol}'", fn.location)
        jitted[symbol] = JitFunction(symbol, sig.inputs, sig.results, addr, engine,
                                     engine.get_function_address(PREFIX + symbol),
                                     engine.get_function_address(CALL_PREFIX + symbol))
    return JitModule(jitted, "", {"load_ms": (time.perf_counter() - t0) * 1e3}, engine)


def _public(module: Operation) -> list[Operation]:
    """The module's public function definitions: what a compiled module exports."""
    return [fn for fn in module.regions[0].blocks[0].ops
            if fn.name == "func.func" and _is_public_definition(fn)]


def _is_public_definition(fn: Operation) -> bool:
    vis = fn.properties.get("sym_visibility")
    return bool(fn.regions[0].blocks) and (vis is None or vis.value == "public")


def _check_external_functions(module: Operation) -> None:
    """Every external function the module declares must exist in the process: MCJIT aborts
    the whole process on an unresolved symbol, so it is checked here first, at the
    declaration."""
    for fn in module.regions[0].blocks[0].ops:
        if fn.name == "func.func" and not fn.regions[0].blocks and \
                not llvm.address_of_symbol(fn.properties["sym_name"].value):
            raise error_at(fn, f"declares external function '@{fn.properties['sym_name'].value}'"
                               ", which is not defined in the module and not found in this "
                               "process")


# ---------------------------------------------------------------------------------------------
# Shared libraries
# ---------------------------------------------------------------------------------------------


def find_c_compiler() -> str | None:
    """The system C compiler driver used to link (`cc`, else `gcc`, else `clang`)."""
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


def link_shared(objects: list[bytes], path: str | os.PathLike,
                libraries: tuple[str, ...] = ("m", "pthread")) -> str:
    """Link object files (from `emit_object`) into the shared library `path` with the system
    C compiler (`cc -shared -o path *.o -lm -lpthread`), and the OpenMP runtime that their
    parallel loops call (`openmp_library`: a path, or a name linked as `-l:libgomp.so.1`),
    which then becomes a DT_NEEDED of the library: the dynamic loader loads it with it."""
    path = os.fspath(path)
    with tempfile.TemporaryDirectory(prefix="irkit-link-") as tmp:
        gomp = openmp_library()
        runtime = [] if gomp is None else [gomp if os.path.isabs(gomp) else f"-l:{gomp}"]
        _run_c_compiler(["-shared", "-o", path, *_written(objects, tmp), *runtime,
                         *(f"-l{lib}" for lib in libraries)], path)
    return path


def _written(objects, folder: str) -> list[str]:
    """The paths of `objects` (bytes) written into `folder` as `part<i>.o`."""
    files = []
    for i, obj in enumerate(objects):
        files.append(os.path.join(folder, f"part{i}.o"))
        with open(files[-1], "wb") as fh:
            fh.write(obj)
    return files


def _run_c_compiler(args: list[str], output: str) -> None:
    """The system C compiler (`find_c_compiler`) run with `args` to link `output`; its
    messages in the BackendError when it fails."""
    cc = find_c_compiler()
    if cc is None:
        raise BackendError(f"no C compiler (cc, gcc or clang) found to link '{output}'")
    proc = subprocess.run([cc, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise BackendError(f"linking '{output}' failed ({' '.join([cc, *args])}):\n"
                           f"{proc.stderr.strip()}")


def load_shared(path: str | os.PathLike, module: Operation) -> JitModule:
    """Load a shared library built from `module` and wrap its public functions as
    `compile_module` does (the module supplies the signatures)."""
    lib = ctypes.CDLL(os.fspath(path))
    functions = {}
    for fn in module.regions[0].blocks[0].ops if module.regions[0].blocks else ():
        if fn.name == "func.func" and _is_public_definition(fn):
            name = fn.properties["sym_name"].value
            sig = Signature(fn)
            addr = ctypes.cast(lib[name], ctypes.c_void_p).value
            entries = []
            for prefix in (PREFIX, CALL_PREFIX):
                try:        # a library built before the Python entries has none
                    entries.append(ctypes.cast(lib[prefix + name], ctypes.c_void_p).value)
                except AttributeError:
                    entries.append(0)
            functions[name] = JitFunction(name, sig.inputs, sig.results, addr, lib, *entries)
    return JitModule(functions, "", {}, lib)
