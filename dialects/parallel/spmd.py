"""Every rank of a grid in one process: how partitioned programs run without MPI.

`run_spmd(module, func, per_rank_args, states)` runs the partitioned function once per rank,
each rank on a thread of its own with its own interpreter state (its variables), as MPI runs
one process per rank. The ranks meet only in the collectives: `ThreadCommunicator` gives
them `exchange` (every member posts its array, all wait at a barrier, each reads its
group's arrays, all wait again) and mailboxes for send/recv. Threads rather than a lockstep
loop over ranks because that is the execution model the program is written for: control
flow, regions and point-to-point messages need nothing special, and a program that would
deadlock under MPI (a collective some rank skips) fails here too, with a timeout.

`SimulatedRanks` wraps that for tests and dev mode: it cuts global inputs into the pieces
each rank receives (the arguments' `parallel.sharding`), starts every rank's variables as its
piece of the global initial value (or of given values), and assembles results and variables
back into global arrays.
"""

from __future__ import annotations

import queue
import threading

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.interpreter import Interpreter, InterpreterError, to_value
from irkit.ir import Operation
from irkit.symbols import lookup_symbol_in
from irkit.dialects.graph.base import VariableOp, initial_value
from irkit.dialects.parallel.comm import Communicator
from irkit.dialects.parallel.ops import GridOp, lookup_grid
from irkit.dialects.parallel.sharding import (
    GridInfo, Sharding, assemble, global_type, local_piece,
)

#: seconds a rank waits for the others at a collective or for a message before giving up
TIMEOUT = 120.0


class _World:
    """What the threads of one run share."""

    def __init__(self, grid: GridInfo) -> None:
        self.barrier = threading.Barrier(grid.size, timeout=TIMEOUT)
        self.slots: list = [None] * grid.size
        self.mailboxes: dict = {}
        self.lock = threading.Lock()
        self.failed = threading.Event()

    def mailbox(self, src: int, dst: int) -> queue.Queue:
        with self.lock:
            return self.mailboxes.setdefault((src, dst), queue.Queue())


class ThreadCommunicator(Communicator):
    """A rank of a grid simulated by a thread (see the module docstring)."""

    def __init__(self, world: _World, grid: GridInfo, rank: int) -> None:
        super().__init__(grid, rank)
        self.world = world

    def exchange(self, x, group):
        w = self.world
        w.slots[self.rank] = x
        self._wait()
        out = [w.slots[r] for r in group]
        self._wait()
        return out

    def _wait(self) -> None:
        try:
            self.world.barrier.wait()
        except threading.BrokenBarrierError:
            raise _Aborted() from None

    def send(self, x, dest):
        self.world.mailbox(self.rank, dest).put(np.array(x))

    def recv(self, source):
        box = self.world.mailbox(source, self.rank)
        waited = 0.0
        while not self.world.failed.is_set() and waited < TIMEOUT:
            try:
                return box.get(timeout=0.05)
            except queue.Empty:
                waited += 0.05
        raise _Aborted()


class _Aborted(Exception):
    """Another rank failed (or never came): this one stops too."""


def function_grid(fn: Operation) -> GridInfo:
    """The grid a partitioned function runs on (its `parallel.grid` attribute)."""
    ref = fn.attributes.get("parallel.grid")
    grid = lookup_grid(fn, ref) if ref is not None else None
    if grid is None:
        raise InterpreterError("the function has no parallel.grid: run parallel-partition "
                               "first", fn.location)
    return grid.info()


def run_spmd(module: Operation, func_name: str, per_rank_args: list,
             states: list | None = None) -> list[list]:
    """Run `func_name` on every rank of its grid; `per_rank_args[r]` are rank r's
    arguments and `states[r]` its interpreter state (variables), updated in place. Returns
    each rank's results. The first failure of any rank is raised, located."""
    fn = entry_function(module, func_name)
    grid = function_grid(fn)
    fns = [rank_function(module, func_name, grid, r) for r in range(grid.size)]
    if len(per_rank_args) != grid.size:
        raise ValueError(f"the grid has {grid.size} ranks, got arguments for "
                         f"{len(per_rank_args)}")
    states = states if states is not None else [{} for _ in range(grid.size)]
    world = _World(grid)
    inputs = fn.properties["function_type"].value.inputs
    results: list = [None] * grid.size
    errors: list = [None] * grid.size

    def rank_main(rank: int) -> None:
        state = states[rank]
        state["parallel.communicator"] = ThreadCommunicator(world, grid, rank)
        try:
            values = [to_value(a, t, f"argument #{i} of '{func_name}' on rank {rank}")
                      for i, (a, t) in enumerate(zip(per_rank_args[rank], inputs))]
            with np.errstate(all="ignore"):
                results[rank] = Interpreter(module, state).call(fns[rank], values)
        except _Aborted:
            pass
        except Exception as e:       # handed to the caller's thread below
            errors[rank] = e
            world.failed.set()
            world.barrier.abort()
        finally:
            del state["parallel.communicator"]

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(grid.size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    if any(r is None for r in results):
        raise InterpreterError(f"'{func_name}': some rank waited more than {TIMEOUT} s for a "
                               f"collective or a message the others never sent", fn.location)
    return results


#: a pipelined module's dictionary: function name -> the array of its stage functions
STAGES_ATTR = "parallel.stages"
#: a pipelined module's dictionary: variable name -> the stage (pipe rank) that owns it
VARIABLE_STAGES_ATTR = "parallel.variable_stages"


def entry_function(module: Operation, func_name: str) -> Operation:
    """The function `func_name` of `module`, or its first stage's when `parallel-pipeline`
    split it into one function per stage (they share the signature); a ValueError if none."""
    stages = module.attributes.get(STAGES_ATTR)
    if stages is not None and func_name in stages.value:
        func_name = stages.value[func_name].value[0].root
    fn = lookup_symbol_in(module, func_name)
    if fn is None or fn.name != "func.func":
        raise ValueError(f"no function named '{func_name}' in the module")
    return fn


def rank_function(module: Operation, func_name: str, grid: GridInfo, rank: int) -> Operation:
    """The function rank `rank` runs for `func_name`: the function itself (SPMD: every
    rank runs the same program), or, for a pipelined one, the stage of the rank's index on
    the grid's one axis."""
    stages = module.attributes.get(STAGES_ATTR)
    if stages is None or func_name not in stages.value:
        return entry_function(module, func_name)
    return lookup_symbol_in(module, stages.value[func_name].value[grid.coords(rank)[0]].root)


def variable_stages(module: Operation) -> dict:
    """name -> owning stage, from a pipelined module's `parallel.variable_stages`."""
    a = module.attributes.get(VARIABLE_STAGES_ATTR)
    return {k: v.value for k, v in (a.value.items() if a is not None else [])}


def variable_piece(var: VariableOp, grid: GridInfo, sharding: Sharding, rank: int,
                   value=None) -> np.ndarray:
    """Rank `rank`'s piece of a partitioned variable (`var` has its local type): of `value`
    (global) if given, else of its initial value drawn at the global type, so that every
    rank's piece is its slice of the one whole value a single process starts from."""
    if value is None:
        t = global_type(grid, sharding, var.tensor_type)
        value = initial_value(var.properties["initializer"].value, var.init_kwargs(),
                              t.shape, numpy_dtype(t.element))
    return local_piece(value, grid, sharding, rank)


def boundary_sharding(fn: Operation, grid: GridInfo, attrs_name: str, i: int) -> Sharding:
    """The `parallel.sharding` of argument (`attrs_name` "arg_attrs") or result ("res_attrs")
    `i` of a partitioned function; replicated where it has none."""
    attrs = fn.properties.get(attrs_name)
    a = attrs.value[i].value.get("parallel.sharding") if attrs is not None else None
    return Sharding.of_attr(a) if a is not None else \
        Sharding.replicated(grid.name, len(grid.shape))


def variable_shardings(module: Operation) -> dict:
    """name -> Sharding, from the module's `parallel.variables` (written by the partitioner);
    variables not listed are replicated."""
    a = module.attributes.get("parallel.variables")
    return {k: Sharding.of_attr(v) for k, v in (a.value.items() if a is not None else [])}


class SimulatedRanks:
    """Every rank of a partitioned module (its single grid) in one process, with global
    arrays in and out (see the module docstring)."""

    def __init__(self, module: Operation, variables: dict | None = None) -> None:
        self.module = module
        grids = [op for op in module.regions[0].blocks[0].ops if isinstance(op, GridOp)]
        if len(grids) != 1:
            raise ValueError(f"expected one parallel.grid in the module, found {len(grids)}")
        self.grid = grids[0].info()
        self.states = [{"graph.variables": {}} for _ in range(self.grid.size)]
        shardings = variable_shardings(module)
        for op in module.regions[0].blocks[0].ops:
            if isinstance(op, VariableOp):
                self._init_variable(op, shardings, variables or {})

    def _init_variable(self, var: VariableOp, shardings: dict, given: dict) -> None:
        name = var.var_name
        s = shardings.get(name, Sharding.replicated(self.grid.name, len(self.grid.shape)))
        for rank, state in enumerate(self.states):
            state["graph.variables"][name] = variable_piece(var, self.grid, s, rank,
                                                            given.get(name))

    def run_per_rank(self, func_name: str, per_rank_args: list) -> list[list]:
        return run_spmd(self.module, func_name, per_rank_args, self.states)

    def run(self, func_name: str, *args):
        """Call with global inputs; returns the global results (one value, a tuple, or None
        as `irkit.interpreter.interpret` does)."""
        fn = entry_function(self.module, func_name)
        ftype = fn.properties["function_type"].value
        ins = [boundary_sharding(fn, self.grid, "arg_attrs", i)
               for i in range(len(ftype.inputs))]
        per_rank = [[local_piece(a, self.grid, s, r) for a, s in zip(args, ins)]
                    for r in range(self.grid.size)]
        outs = self.run_per_rank(func_name, per_rank)
        res = [boundary_sharding(fn, self.grid, "res_attrs", i)
               for i in range(len(ftype.results))]
        glob = [assemble([outs[r][i] for r in range(self.grid.size)], self.grid, s)
                for i, s in enumerate(res)]
        if not glob:
            return None
        return glob[0] if len(glob) == 1 else tuple(glob)

    def variables(self) -> dict:
        """Every variable's global value, assembled from the ranks' pieces (a pipelined
        module's from the rank of the stage that owns it)."""
        shardings = variable_shardings(self.module)
        owners = variable_stages(self.module)
        rep = Sharding.replicated(self.grid.name, len(self.grid.shape))
        names = self.states[0]["graph.variables"]
        return {n: self.states[owners[n]]["graph.variables"][n] if n in owners else
                assemble([s["graph.variables"][n] for s in self.states], self.grid,
                         shardings.get(n, rep)) for n in names}

    def rank_variables(self, rank: int) -> dict:
        """Rank `rank`'s own pieces of the variables."""
        return dict(self.states[rank]["graph.variables"])
