"""The compile pipeline as one table: each stage of the lowering ladder, and the passes that
take a module from the stage above to it.

Everything that compiles reads this table and nothing else: `irkit-compile --emit=STAGE`
prints the module after the row STAGE (the rows are its `--emit` choices), the interpreter
engine runs the rows up to `DEV_STAGE`, and the JIT engine and the shared-library compiler
run every row, the last one's module being what the backend compiles. The runtime keeps a
copy of the module at `GRAPH_STAGE` for the graph ops' shape functions.

A new level of the ladder is one row: say a `linalg` stage between `autodiff` and `loop`,

    Stage("linalg", "lower-graph-to-linalg,canonicalize,cse", "structured kernels ..."),

and `--emit=linalg`, the JIT and the library compiler all go through it; the row below it
then starts from its output. Any pass of the table can be left out by name
(`passes_between(..., disable=[...])`: `irkit-compile --disable=`, `load_model(disable=)`),
and any option of a pass it runs set
(`pass_options="linalg-matmul-blis{align-start=false}"`: `irkit-compile --pass-options=`,
`load_model(pass_options=)`), as an `mlir-opt` user edits the pipeline string; the table's
own options for that pass stay unless named.

Targets. Each target has its own ladder (`stages(target)`; every function takes `target=`,
"cpu" by default, whose ladder is `STAGES`). The `nvptx` ladder (`NVPTX_STAGES`) shares the
CPU's rows down to `linalg`; its `loop` row runs the GPU schedules (`GPU_SCHEDULES`: launches
built from the structured ops on memrefs, where the CPU's BLIS pass stands) and lowers the
rest to plain loop nests (no CPU vectorization, no polynomial math: libdevice computes math
on the GPU), its `memory` row plans the arena (which lives on the device), and its last row,
`gpu`, maps what is left to grids and one-thread launches and outlines the kernels: what
`backends/nvptx` compiles.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.pass_manager import PassManager, lookup_pass, split_element
from irkit.passes import register_all


@dataclass(frozen=True)
class Stage:
    """One row: the stage's `--emit` name, the textual pipeline that takes the module from
    the stage above to this one ("" for the first), and what the module is afterwards."""

    name: str
    passes: str
    doc: str


#: the ladder, top to bottom
STAGES: tuple[Stage, ...] = (
    Stage("graph", "",
          "the DSL's own output: the graph dialect, one nested module per model; derivatives "
          "are still requests (`autodiff.grad` from `grad` and `train` clauses)"),
    Stage("autodiff", "graph-raise-control-flow,graph-algebraic-simplify,graph-merge-matmuls,"
          "autodiff,graph-algebraic-simplify,graph-fold-batchnorm,canonicalize,cse",
          "switch/merge raised to `graph.if` first (the backward graph of a `graph.if` is "
          "`graph.if`s, while that of switch/merge joins values across branches and cannot "
          "be raised afterwards); algebraic rewrites (log(softmax) -> log_softmax before "
          "autodiff, so that its backward is the stable one); matmuls sharing their left "
          "operand merged into one (QKV: before autodiff, so the backward is merged too); "
          "then every derivative request replaced by the graph ops it stands for; conv + "
          "inference batchnorm folded; simplified"),
    Stage("linalg", "lower-graph-to-linalg{full=true},canonicalize,cse,"
          "linalg-fuse-elementwise-ops,canonicalize,cse,linalg-fuse",
          "structured kernels on tensors (MLIR's linalg, tensor, arith, math): one "
          "`linalg.generic` or named op per graph op, destination-passing `outs`; the "
          "variables, `graph.if`, `graph.check` and `graph.scatter_add` stay graph ops; "
          "elementwise chains merged into one generic, then matmul epilogues, row "
          "reductions and what else shares outer parallel loops in `fusion.group`s"),
    Stage("loop", "bufferize{output-sizes=true},commit-in-place,linalg-matmul-blis,"
          "lower-linalg-to-loop,"
          "canonicalize,cse,loop-vectorize,loop-reduction-interchange,"
          "math-polynomial-approximation,"
          "loop-unroll{factor=1 full-threshold=8 full-ops=128 nests=true vectors=false},"
          "vector-streaming-stores,canonicalize,memory-forward-stores,cse",
          "every graph function a function over memrefs (the calling convention of "
          "docs/lowering.md) with its `<name>_output_sizes` sibling, the variables a "
          "`graph.variables` module attribute; each temporary its own `memory.alloc`, a "
          "variable's update written into the variable under the step's status test; each "
          "large matmul or convolution a BLIS schedule (packed panels, a register-blocked "
          "FMA micro-kernel, its epilogue at the store), every other structured op its loop "
          "nest, each `fusion.group` one nest over its outer dims with its intermediates in "
          "registers or per-point buffers; innermost loops vectorized to the target's width "
          "(vector loads and stores, per-lane partial sums, a static remainder one vector of "
          "its count, a dynamic one scalar); column sums walked along the rows (a bias "
          "gradient's), not down each column; f32 exp, "
          "log, tanh, ... as polynomials in arith (vectorizable, within 2 ulp of numpy); "
          "the short scalar loops left (a pooling window's, a row's odd last element) "
          "unrolled into straight-line code; a load of what the same block stored or "
          "loaded before is that value"),
    Stage("memory", "plan-memory,promote-buffers-to-stack,canonicalize,cse",
          "each function's temporaries views of one planned arena "
          "(docs/memory_planning.md), the small buffers of loop bodies on the stack: what "
          "the backend compiles"),
)

#: the schedules that give structured GPU kernels their shape: a contraction (and its
#: epilogue) a shared-memory tiled matmul launch, a row reduction group a launch of one block
#: per row with tree reductions; they read the structured ops on memrefs, so they run in the
#: `loop` row between bufferize and lower-linalg-to-loop (which lowers what they leave), and
#: their launches are kept as they are by the generic mapping of the `gpu` row
GPU_SCHEDULES = "gpu-matmul-tiles,gpu-block-reduce"

#: the nvptx ladder: the CPU's rows down to `linalg`, then its own (module docstring)
NVPTX_STAGES: tuple[Stage, ...] = STAGES[:3] + (
    Stage("loop", f"bufferize{{output-sizes=true}},{GPU_SCHEDULES},lower-linalg-to-loop,"
          "canonicalize,cse",
          "every graph function a function over memrefs, as on the CPU (docs/lowering.md); "
          "each matmul-like contraction a tiled launch (workgroup tiles, register blocks, its "
          "epilogue at the store), each row reduction group a launch of one block per row; "
          "every other structured op and fusion group a plain loop nest: `loop.parallel` over "
          "its parallel dims, scalar code inside; math ops left as they are for libdevice"),
    Stage("memory", "plan-memory,canonicalize,cse",
          "each function's temporaries views of one planned arena, allocated on the device"),
    Stage("gpu", "gpu-map-parallel-loops,canonicalize,cse,gpu-kernel-outlining,"
          "canonicalize,cse",
          "every top-level parallel loop nest a grid, the other memory work one-thread "
          "launches, outlined into `gpu.func` kernels of one `gpu.module @kernels` per "
          "model launched by `gpu.launch_func`; the host code sizes, allocates and launches: "
          "what backends/nvptx compiles"),
)

#: the targets `stages` knows
TARGETS = ("cpu", "nvptx")

#: the stage the interpreter runs (dev mode): graph ops only, derivatives expanded
DEV_STAGE = "autodiff"
#: the last stage whose functions are graph functions: the runtime runs their shape
#: functions on the actual input sizes to allocate a compiled function's outputs
GRAPH_STAGE = "autodiff"


def stages(target: str = "cpu") -> tuple[Stage, ...]:
    """The ladder of `target` ("cpu": `STAGES`, read when asked, "nvptx": `NVPTX_STAGES`)."""
    if target == "cpu":
        return STAGES
    if target == "nvptx":
        return NVPTX_STAGES
    raise ValueError(f"no target {target!r} (targets: {', '.join(TARGETS)})")


def stage_names(target: str = "cpu") -> list[str]:
    """The stages, top to bottom: `irkit-compile`'s `--emit` choices for IR."""
    return [s.name for s in stages(target)]


def compiled_stage(target: str = "cpu") -> str:
    """The last stage: the module the backend compiles."""
    return stages(target)[-1].name


def _entries(passes: str) -> list[str]:
    """The top-level entries of a textual pipeline ("a,b{x=1,y=2},c" -> three), split at
    the commas outside braces and parentheses."""
    entries, depth, start = [], 0, 0
    for i, ch in enumerate(passes):
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
        elif ch == "," and depth == 0:
            entries.append(passes[start:i])
            start = i + 1
    if passes[start:]:
        entries.append(passes[start:])
    return entries


def _pass_name(entry: str) -> str:
    return entry.split("{", 1)[0].split("(", 1)[0].strip()


def pipeline_pass_names(target: str = "cpu") -> list[str]:
    """Every pass the table runs, each once, top to bottom: what `disable` may name."""
    names: dict[str, None] = {}
    for stage in stages(target):
        names.update(dict.fromkeys(_pass_name(e) for e in _entries(stage.passes)))
    return list(names)


def pass_option_edits(pass_options: str, target: str = "cpu") -> dict[str, dict[str, str]]:
    """`pass_options`, pipeline elements with options ("linalg-matmul-blis{align-start=false},
    loop-unroll{factor=2}"), as {pass name: {option: value text}}, checked now: each pass one
    the table runs, each option one that pass has, each value of the option's type (a typo is
    an error before anything compiles, as for `disable`)."""
    register_all()
    known = pipeline_pass_names(target)
    edits: dict[str, dict[str, str]] = {}
    for element in _entries(pass_options):
        name, options = split_element(element)
        if name not in known:
            raise ValueError(f"cannot set options of {name!r}: the pipeline runs no such pass "
                             f"(it runs: {', '.join(known)})")
        if not options:
            raise ValueError(f"{element.strip()!r} sets no option: write "
                             f"{name}{{OPTION=VALUE ...}}")
        lookup_pass(name).from_options(options)        # an unknown option or a bad value
        edits.setdefault(name, {}).update(options)
    return edits


def edits_record(disable=(), pass_options: str = "") -> dict:
    """How `disable` and `pass_options` edited the table, as the options a compile records
    (the compile cache's key, `CompiledModels.options`): the disabled passes sorted, the
    pass options only where set (so a key made without them stays what it was)."""
    return {"disable": sorted(disable), **({"pass_options": pass_options} if pass_options
                                           else {})}


def _edited(entry: str, edits: dict[str, dict[str, str]]) -> str:
    """The table's element `entry` with the options `edits` sets for its pass: its own
    options, then those, written out whole by the pass (`Pass.pipeline_text`)."""
    name, options = split_element(entry)
    if name not in edits:
        return entry
    return lookup_pass(name).from_options(options | edits[name]).pipeline_text()


def passes_between(start: str | None, stop: str, disable=(), target: str = "cpu",
                   pass_options: str = "") -> str:
    """The textual pipeline that takes a module at stage `start` (None: the DSL's output)
    to stage `stop`: the rows after `start` up to and including `stop`, joined, without the
    passes named in `disable` (every occurrence: `disable=["linalg-fuse"]` compiles without
    fusion groups; a name the table does not run is an error, so a typo is not ignored),
    each pass named in `pass_options` with the options it sets (`pass_option_edits`; at
    every occurrence, over the table's own)."""
    names = stage_names(target)
    for name in (start, stop):
        if name is not None and name not in names:
            raise ValueError(f"no stage {name!r} in the pipeline (stages: {', '.join(names)})")
    known = pipeline_pass_names(target)
    unknown = sorted(set(disable) - set(known))
    if unknown:
        raise ValueError(f"cannot disable {', '.join(map(repr, unknown))}: the pipeline runs "
                         f"no such pass (it runs: {', '.join(known)})")
    first = 0 if start is None else names.index(start) + 1
    last = names.index(stop)
    if last < first - 1:
        raise ValueError(f"stage {stop!r} comes before stage {start!r}")
    edits = pass_option_edits(pass_options, target) if pass_options else {}
    entries = [_edited(e, edits) for s in stages(target)[first:last + 1]
               for e in _entries(s.passes) if _pass_name(e) not in disable]
    return ",".join(entries)


def pass_manager(start: str | None, stop: str, disable=(), target: str = "cpu",
                 pass_options: str = "", **options) -> PassManager:
    """A pass manager for `passes_between(start, stop, disable, target, pass_options)`,
    every pass of irkit known (`options` go to `PassManager`)."""
    register_all()
    return PassManager.parse(passes_between(start, stop, disable, target, pass_options),
                             **options)
