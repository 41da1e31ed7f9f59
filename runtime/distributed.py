"""Partitioned models on MPI ranks: `load_model(path, data_parallel=N)` under `mpiexec -n N`,
or `load_model(path)` of a model that declares its own grid.

Data parallel: each rank is one process running the same program (SPMD): it is given its
own slice of the batch, as PyTorch's DistributedDataParallel is, and keeps a whole copy of
the variables, which the summed gradients keep identical on all ranks. The program is the
model's module after autodiff, annotated by `parallel-data{ranks=N}` and partitioned by
`parallel-propagate`, `parallel-partition` and `parallel-simplify` (`PARTITION`): its
collectives are explicit ops. A model with a grid of its own (`grid g[model=2]`, placements
of its inputs and params) is partitioned the same way as its annotations say: every rank is
given the whole of each replicated input and holds its piece of each split variable (its
slice of the one whole initial value, `variable_piece`); its results are whole on every
rank where they are replicated. Its `stage` blocks make it a pipeline (`parallel-pipeline`,
`micro_batches`): rank r runs stage r's program (`forward` and `train_step` are its stage's
functions) and holds the current values of its stage's variables only. Reading the
variables (`model.variables`, `model.save()`) after a step therefore first brings every
variable from the rank that owns it (`StageStore`: one MPI_Bcast per variable from its
owner, at the first read after a call, not at every step): a read is collective, and every
rank reads the variables at the same point of the program, as every rank makes the calls.

How the collectives run, per engine:

- **interpreter**: the `parallel` ops call the rank's `Communicator`, here
  `MPICommunicator`, which implements the dialect's two primitives with mpi4py (`exchange`
  an allgather over the group's sub-communicator, `send`/`recv` point to point), so the
  interpreter's numpy collectives (sums in float64 in group order) run on real ranks.
- **jit**: the compiled code calls MPI itself. `bufferize` turns each collective into an
  `mpi` op on the buffer that holds the value (in place for a gradient's all_reduce:
  `irkit.passes.bufferization.collectives`), `parallel-drop-grids` removes the grids, and
  the LLVM backend emits `MPI_Allreduce`, `MPI_Allgather`, `MPI_Reduce_scatter_block`,
  `MPI_Alltoall` and `MPI_Bcast` calls through MPICH's C ABI, and a pipeline's send/recv
  `MPI_Send`, `MPI_Probe` and `MPI_Recv` (`irkit.backends.llvm_collectives`);
  `load_mpi_symbols` makes the `libmpi` that mpi4py loaded visible to the JIT's linker. A
  stage's outputs come from other ranks (received), so their shapes are derived from the
  model's function before it was cut into stages (which returns the same results).

Why the compiled code calls MPI rather than the runtime splitting a step at its
collectives and calling mpi4py between compiled pieces: one compiled function per step
keeps the memory planner's arena, the fusion and the in-place reuse whole (a split step
would return every value live across a collective to Python, as a fresh array, and take it
back); the gradient is summed in the buffer the backward pass wrote it to, with no copy
and no Python in the step; and the same object code runs under any MPI launcher once
linked against `libmpi`. The price is an ABI: the code is bound to MPICH's handle values
(MPICH, Intel MPI, MVAPICH; not Open MPI), and only collectives over the whole grid are
compiled (a group of part of a grid would need communicators made at run time); the
interpreter runs every collective, on any group.

**Equal blocks.** A split dimension is cut into equal blocks (`local_piece`): the
partitioned program takes a rank's size of it times the rank count for the global size (a
mean's count, a gathered buffer's rows), and MPI_Allgather takes as many elements from each
rank. Ranks given different sizes would compute a wrong answer, so both engines compare
the sizes of every split input dimension over the ranks before each call (one small
MPI_Allgather) and raise the same ValueError on every rank when they differ.
"""

from __future__ import annotations

import ctypes.util
import functools
import os
import re

import numpy as np

from irkit.dialects.graph import VariableOp
from irkit.dialects.parallel import (
    STAGES_ATTR, Communicator, GridInfo, GridOp, boundary_sharding, entry_function,
    rank_function, variable_piece, variable_shardings, variable_stages,
)
from irkit.ir import Operation
from irkit.pass_manager import PassManager
from irkit.passes import pipeline, register_all
from irkit.runtime.compiled import VERIFY_EACH_PASS, compile_models
from irkit.runtime.engines import (
    InterpreterEngine, JitEngine, expand_derivatives, has_derivatives, select_model,
)
from irkit.runtime.inputs import contiguous
from irkit.symbols import lookup_symbol_in

#: the passes that partition a module after autodiff (`parallel-data` annotates first)
PARTITION = "parallel-propagate,parallel-partition,parallel-simplify"


def partition_passes(data_parallel: int | None = None, micro_batches: int = 1) -> str:
    """The textual pipeline that partitions a module at the autodiff stage: on its own grid
    (a model's annotations; its stage blocks a pipeline of `micro_batches` micro-batches),
    or, with `data_parallel=N`, data parallel over N ranks."""
    if data_parallel is None:
        return f"parallel-pipeline{{micro-batches={micro_batches}}},{PARTITION}"
    return f"parallel-data{{ranks={data_parallel}}},{PARTITION}"


def check_ranks(ranks) -> int:
    """`ranks` if it is a valid rank count (a positive int), else a ValueError."""
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise ValueError(f"data_parallel must be a positive number of ranks, got {ranks!r}")
    return ranks


def partition_rows(start: str | None, stop: str, passes: str, disable=(),
                   pass_options: str = "") -> str:
    """`pipeline.passes_between(start, stop, disable, pass_options=pass_options)` for a
    partitioned model: the module is partitioned by `passes` (`partition_passes`) at the
    end of the autodiff row (so the graph module the runtime's shape functions read is the
    partitioned one: each rank allocates its own outputs), and its grids are dropped after
    the last row (`parallel-drop-grids`)."""
    names = pipeline.stage_names()
    first = 0 if start is None else names.index(start) + 1
    rows = names[first:names.index(stop) + 1]
    parts, at = [], start
    for row in rows:
        if row == pipeline.DEV_STAGE or row == pipeline.compiled_stage():
            parts.append(pipeline.passes_between(at, row, disable,
                                                 pass_options=pass_options))
            parts.append(passes if row == pipeline.DEV_STAGE else "parallel-drop-grids")
            at = row
    if at != stop:
        parts.append(pipeline.passes_between(at, stop, disable, pass_options=pass_options))
    return ",".join(p for p in parts if p)


def partitioned_pipeline(passes: str, disable=(), verify_each: bool = VERIFY_EACH_PASS,
                         pass_options: str = ""):
    """A `make_pm(start, stop)` for `lower_model_with_graph` / `compile_models` running
    `partition_rows`."""
    def make_pm(start, stop) -> PassManager:
        register_all()
        return PassManager.parse(partition_rows(start, stop, passes, disable, pass_options),
                                 verify_each=verify_each)
    return make_pm


# ---------------------------------------------------------------------------------------------
# MPI
# ---------------------------------------------------------------------------------------------


def mpi_world():
    """mpi4py's `COMM_WORLD`, or a clear error where mpi4py or an MPI library is missing."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(f"data parallel training runs on MPI: install mpi4py and MPICH "
                           f"(pip install 'irkit[mpi]', or scripts/setup.sh) and start the "
                           f"ranks with mpiexec -n N ({e})") from None
    return MPI.COMM_WORLD


def world_for(ranks: int):
    """The world communicator, checked to have `ranks` ranks."""
    world = mpi_world()
    if world.Get_size() != ranks:
        raise ValueError(f"the partitioned model needs {ranks} MPI ranks: start them with "
                         f"mpiexec -n {ranks} (this process is rank {world.Get_rank()} of "
                         f"{world.Get_size()})")
    return world


@functools.cache
def load_mpi_symbols() -> str:
    """Make the MPI library mpi4py loaded visible to the JIT (MCJIT resolves the compiled
    code's `MPI_*` calls against the libraries loaded permanently); returns its path."""
    import llvmlite.binding as llvm
    mpi_world()
    path = _loaded_libmpi() or ctypes.util.find_library("mpi")
    if path is None:
        raise RuntimeError("cannot find the MPI library mpi4py loaded (libmpi.so)")
    llvm.load_library_permanently(path)
    return path


def _loaded_libmpi() -> str | None:
    """The path of the `libmpi` mapped into this process (Linux: /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libmpi.so"):
                    return path
    except OSError:
        pass
    return None


class MPICommunicator(Communicator):
    """A rank of a grid as one MPI process (the world's rank r is the grid's rank r): the
    dialect's `exchange` is an allgather over the group's own communicator (split from the
    world the first time the group meets), `send` and `recv` are the world's."""

    def __init__(self, grid: GridInfo, world) -> None:
        if world.Get_size() != grid.size:
            raise ValueError(f"grid @{grid.name} has {grid.size} ranks, the MPI world "
                             f"{world.Get_size()}: start them with mpiexec -n {grid.size}")
        super().__init__(grid, world.Get_rank())
        self.world = world
        self._groups: dict = {}

    def _comm(self, group: list[int]):
        key = tuple(group)
        if len(group) == self.world.Get_size():
            return self.world
        if key not in self._groups:
            # every rank meets its group's first collective at the same step, so every rank
            # of the world takes part in this split together
            self._groups[key] = self.world.Split(min(group), group.index(self.rank))
        return self._groups[key]

    def exchange(self, x, group):
        return self._comm(group).allgather(np.array(x, order="C"))

    def send(self, x, dest):
        self.world.send(np.array(x, order="C"), dest=dest)

    def recv(self, source):
        return self.world.recv(source=source)


def module_grid(module: Operation) -> GridInfo:
    grids = [op for op in module.regions[0].blocks[0].ops if isinstance(op, GridOp)]
    if len(grids) != 1:
        raise ValueError(f"expected one parallel.grid in the partitioned module, found "
                         f"{len(grids)}")
    return grids[0].info()


def split_dims(fn: Operation, grid: GridInfo) -> list[tuple[str, int]]:
    """(input name, dimension) for every dimension of an argument of the partitioned
    function `fn` that its `parallel.sharding` splits."""
    attrs = fn.properties.get("arg_attrs")
    out = []
    for i, a in enumerate(fn.regions[0].blocks[0].args):
        d = attrs.value[i].value if attrs is not None else {}
        name = d["graph.name"].value if "graph.name" in d else f"arg{i}"
        placements = boundary_sharding(fn, grid, "arg_attrs", i).placements
        out += [(name, p.dim) for p in dict.fromkeys(placements) if hasattr(p, "dim")]
    return out


def check_equal_blocks(world, dims: list[tuple[str, int]], given: dict, fn_name: str) -> None:
    """A ValueError, raised on every rank alike, unless all ranks were given the same size
    of each split dimension `dims` (see the module docstring); an input missing or of
    too low a rank counts as size -1 (the input check names it afterwards)."""
    if not dims:
        return
    mine = np.array([np.shape(given[n])[d] if n in given and np.ndim(given[n]) > d else -1
                     for n, d in dims], dtype=np.int64)
    every = np.empty((world.Get_size(), len(dims)), dtype=np.int64)
    world.Allgather(mine, every)
    for j, (name, d) in enumerate(dims):
        sizes = every[:, j]
        if (sizes != sizes[0]).any():
            held = ", ".join(f"rank {r}: {n}" for r, n in enumerate(sizes))
            raise ValueError(f"{fn_name}: the ranks were given different sizes of dimension "
                             f"{d} of input {name!r} ({held}); data parallel cuts it into "
                             f"equal blocks, so give every rank as many rows")


# ---------------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------------


class StageStore(dict):
    """The variables of a pipelined model on one rank (name -> array), where only those of
    this rank's stage are current after a call (`parallel.variable_stages`). After a call
    (`called`) the first read of any variable brings all of them up to date, each broadcast
    in place from its owner's rank (`sync`), so the read is collective: every rank must read
    then too. The engine itself reads only this rank's variables, through `local` (no
    broadcast)."""

    def __init__(self, world, owners: dict) -> None:
        super().__init__()
        self._world = world
        self._owners = owners           # name -> owning rank
        self._stale = False

    def __getitem__(self, name: str):
        if self._stale:
            self.sync()
        return super().__getitem__(name)

    def sync(self) -> None:
        """Every variable from its owner, in name order (the same on every rank)."""
        self._stale = False
        for name in sorted(self):
            value = super().__getitem__(name)
            if name in self._owners:
                self._world.Bcast(value, root=self._owners[name])

    def local(self) -> dict:
        """The arrays as they are here, without a broadcast (what this rank's stage reads and
        updates)."""
        return {name: super(StageStore, self).__getitem__(name) for name in self}

    def called(self, local: dict) -> None:
        """A call ran on `local`: keep what it assigned; the other stages' variables are
        stale now."""
        self.update(local)
        self._stale = True


class _OnRank:
    """What the engines of a partitioned model on one MPI rank share: the world, the grid,
    this rank's pieces of the variables, its stage's functions, the equal-blocks check
    before each call, and a pipeline's variables brought from their owners when read."""

    def _join(self, graph: Operation) -> None:
        """`graph`: the partitioned graph module (its grid still there)."""
        self._graph = graph
        self._grid = module_grid(graph)
        self._world = world_for(self._grid.size)
        self._split = {n: split_dims(entry_function(graph, n), self._grid)
                       for n in self.functions()}

    def rank_functions(self, module: Operation) -> dict:
        """`forward` and `train_step` (those `module` has) -> the function this rank runs
        for each (its stage's in a pipeline)."""
        grid = module_grid(module)
        rank = world_for(grid.size).Get_rank()
        out = {}
        for name in ("forward", "train_step"):
            try:
                out[name] = rank_function(module, name, grid, rank)
            except ValueError:          # the model has no such function
                continue
        return out

    def variable_store(self) -> dict:
        owners = variable_stages(self._graph)
        if not owners:
            return super().variable_store()
        return StageStore(self._world, {n: self._grid.rank_of([s]) for n, s in owners.items()})

    def variables(self) -> dict:
        """Each variable's piece on this rank: its slice of the whole initial value (the
        local type's own draw would differ from the single process's)."""
        out = super().variables()
        shardings = variable_shardings(self._graph)
        for op in self._graph.regions[0].blocks[0].ops:
            s = shardings.get(op.var_name) if isinstance(op, VariableOp) else None
            if s is not None:
                _, shape, dtype = out[op.var_name]
                out[op.var_name] = (contiguous(variable_piece(
                    op, self._grid, s, self._world.Get_rank())), shape, dtype)
        return out

    def run(self, fn: str, model_name: str, given: dict, store: dict) -> dict:
        check_equal_blocks(self._world, self._split[fn], given, f"{model_name}.{fn}")
        if not isinstance(store, StageStore):
            return super().run(self.entry(fn), model_name, given, store)
        local = store.local()
        out = super().run(self.entry(fn), model_name, given, local)
        store.called(local)
        return out

    def entry(self, fn: str) -> str:
        """The name the engine underneath calls `fn` by."""
        return fn


class DistributedInterpreterEngine(_OnRank, InterpreterEngine):
    """The interpreter on one MPI rank: the module partitioned by `passes`, its collectives
    on an `MPICommunicator` in the interpreter state."""

    def __init__(self, module: Operation, passes: str, disable=(),
                 pass_options: str = "") -> None:
        module = expand_derivatives(module.clone(), disable, pass_options) \
            if has_derivatives(module) else module.clone()
        PassManager.parse(f"builtin.module({passes})").run(module)
        super().__init__(module, disable, pass_options)
        self._functions = self.rank_functions(module)
        self._join(module)
        self._state["parallel.communicator"] = MPICommunicator(self._grid, self._world)


class DistributedJitEngine(_OnRank, JitEngine):
    """The compiled model on one MPI rank (its code calls MPI itself). Of a pipeline, it
    calls this rank's stage functions, and `whole` is the model's graph module before the
    cut, whose functions give the outputs' shapes (see the module docstring)."""

    def __init__(self, compiled, model: str, threads: int = 0,
                 whole: Operation | None = None) -> None:
        super().__init__(compiled, model, threads)
        graph = compiled.models[model].graph.op
        self._entries = {name: fn.properties["sym_name"].value
                         for name, fn in self.rank_functions(graph).items()}
        if whole is not None:
            shapes = self.runner.graph_functions
            for name, symbol in self._entries.items():
                shapes[symbol] = lookup_symbol_in(whole, name)
        self._join(graph)

    def functions(self) -> set[str]:
        return set(self._entries)

    def inputs(self, fn: str):
        return super().inputs(self._entries[fn])

    def outputs(self, fn: str) -> list[str]:
        return super().outputs(self._entries[fn])

    def entry(self, fn: str) -> str:
        return self._entries[fn]


def distributed_engine(engine: str, text: str, filename: str, model: str | None,
                       data_parallel: int | None = None, micro_batches: int | None = None,
                       opt_level: int = 2, cache: bool = True, threads: int = 0,
                       disable=(), pass_options: str = ""):
    """(model name, engine) running model `model` of the DSL text `text` partitioned on MPI
    ranks, this process being one of them (see the module docstring): data parallel over
    `data_parallel` ranks, else on the grid the model declares, as its annotations place
    its inputs and params and its stage blocks cut it into a pipeline of `micro_batches`
    micro-batches; None for a model with neither (it runs in one process). `disable` and
    `pass_options` edit the pipeline table's rows as for a model in one process."""
    from irkit.frontend.dsl import compile_source, model_modules
    if micro_batches is not None and (isinstance(micro_batches, bool) or
                                      not isinstance(micro_batches, int) or micro_batches < 1):
        raise ValueError(f"micro_batches must be a positive count, got {micro_batches!r}")
    if data_parallel is None:
        declared = None
        if re.search(r"\bgrid\b", text):        # else no `grid` declaration is there
            models = model_modules(compile_source(text, filename))
            declared = models[select_model(models, filename, model)]
        if declared is None or \
                not any(isinstance(op, GridOp) for op in declared.regions[0].blocks[0].ops):
            if micro_batches is not None:
                raise ValueError(f"micro_batches: {filename} declares no grid for the "
                                 f"stages of a pipeline (grid g[pipe=N] and stage blocks)")
            return None
        ranks = module_grid(declared).size
    else:
        ranks = check_ranks(data_parallel)
    passes = partition_passes(data_parallel, micro_batches or 1)
    if engine == "interpreter":
        models = model_modules(compile_source(text, filename))
        name = select_model(models, filename, model)
        return name, DistributedInterpreterEngine(models[name], passes, disable, pass_options)
    if engine != "jit":
        raise ValueError(f"a partitioned model runs on the 'interpreter' and 'jit' engines, "
                         f"not {engine!r}")
    from irkit.diagnostics import SOURCES
    from irkit.runtime.compile_cache import cached_compile
    world_for(ranks)
    load_mpi_symbols()

    make_pm = partitioned_pipeline(passes, disable, pass_options=pass_options)

    def build():
        models = model_modules(compile_source(text, filename))
        name = select_model(models, filename, model)
        return compile_models({name: models[name]}, opt_level=opt_level, make_pm=make_pm)
    compiled = cached_compile(text, filename, model or "*", build, jit=True,
                              options={"opt_level": opt_level, "partition": passes,
                                       **pipeline.edits_record(disable, pass_options)},
                              cache=cache, make_pm=make_pm)
    SOURCES.add(filename, text)
    name = select_model(compiled.models, filename, model)
    whole = None
    if STAGES_ATTR in compiled.models[name].graph.op.attributes:
        whole = expand_derivatives(model_modules(compile_source(text, filename))[name],
                                   disable, pass_options)
    return name, DistributedJitEngine(compiled, name, threads, whole)
