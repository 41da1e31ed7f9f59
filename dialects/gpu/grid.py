"""A grid on the CPU: the reference semantics of `gpu.launch` and `gpu.launch_func`.

`run_grid` runs a kernel body once for every thread of every block. Blocks cannot wait for
each other, so running them one after another, in row-major order, is one valid schedule.
The threads of a block are different: a `gpu.barrier` makes each wait until all of its block
has arrived, and a shared-memory program is correct only if that holds. Hence two ways to run
a block:

- a body without `gpu.barrier` (or a block of one thread) runs its threads one after
  another: a valid schedule, since such threads may interleave in any way (the common case,
  and the fast one);
- a body with a barrier runs its threads in lockstep: each thread is a Python generator
  that runs the body op by op and pauses at every barrier it reaches; a round resumes every
  thread of the block until it pauses again, so a thread passes a barrier only when the
  whole block waits there. The structured ops a barrier may sit in (`loop.for` and the
  `if`s) are run by the generator itself; anything else runs through the interpreter. A
  round where some threads returned while others wait at a barrier, or where threads wait
  at different barriers, is the divergent barrier CUDA leaves undefined: an
  `InterpreterError` at the barrier. (Generators rather than threads of the OS: switching
  costs a function call, not a context switch, which matters with 256 threads a block.)

Each block gets fresh workgroup buffers (and `gpu.dynamic_shared_memory` bytes), each thread
fresh private buffers, filled with all-ones bytes (NaN for floats) as `memory.alloc` fills
its buffers, so that reading shared memory before a barrier ordered its writes shows up.

A launch is checked against the limits of NVIDIA hardware first (at least one block and
thread per dimension, at most 1024 threads a block, 1024 x 1024 x 64 per dimension, grids of
2^31 - 1 x 65535 x 65535 blocks): a launch a GPU would refuse is an error here too.

The ops that ask where they run (`gpu.thread_id`, ...) read the `ThreadContext` of the
`GridInterpreter` that runs them; outside a launch there is none.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from irkit.interpreter import Interpreter, InterpreterError, Return, to_value
from irkit.ir import Operation, Region
from irkit.structured import IfLike
from irkit.dialects.loop import ForOp
from irkit.dialects.memory import storage_dtype
from irkit.dialects.gpu.base import attributions

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2 ** 31 - 1, 65535, 65535)


class ThreadContext:
    """Where a GPU thread runs: its ids, the grid's and block's sizes, and its block's
    dynamic shared memory."""

    __slots__ = ("block_id", "thread_id", "grid_dim", "block_dim", "dynamic_shared")

    def __init__(self, grid_dim, block_dim, dynamic_shared, block_id=(0, 0, 0),
                 thread_id=(0, 0, 0)) -> None:
        self.grid_dim = grid_dim
        self.block_dim = block_dim
        self.dynamic_shared = dynamic_shared
        self.block_id = block_id
        self.thread_id = thread_id


class GridInterpreter(Interpreter):
    """The interpreter of one GPU thread: the caller's module and state, and `thread`."""

    def __init__(self, parent: Interpreter, thread: ThreadContext) -> None:
        super().__init__(parent.module, parent.state)
        self.thread = thread


def current_thread(interp: Interpreter, op: Operation) -> ThreadContext:
    """The thread running `op`; an error when `op` runs outside a launch."""
    thread = getattr(interp, "thread", None)
    if thread is None:
        raise InterpreterError(f"'{op.name}' runs outside a GPU launch", op.location)
    return thread


def check_launch(op: Operation, grid: tuple, block: tuple) -> None:
    """Refuse, located at `op`, a grid or block a GPU would not launch."""
    def fail(message: str):
        raise InterpreterError(f"'{op.name}' {message}", op.location)

    for what, sizes, limits in (("grid", grid, MAX_GRID), ("block", block, MAX_BLOCK)):
        for d, (n, most) in enumerate(zip(sizes, limits)):
            if n < 1:
                fail(f"launches a {what} of size {tuple(sizes)}: every dimension must be at "
                     f"least 1")
            if n > most:
                fail(f"launches a {what} of size {tuple(sizes)}: dimension {'xyz'[d]} may be "
                     f"at most {most}")
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        fail(f"launches blocks of {block[0] * block[1] * block[2]} threads "
             f"{tuple(block)}: a block may have at most {MAX_THREADS_PER_BLOCK}")


def _fresh(op: Operation, t) -> np.ndarray:
    """A new buffer of memref type `t`, filled with all-ones bytes (module docstring)."""
    a = np.empty(t.shape, storage_dtype(op, t.element))
    a.reshape(-1).view(np.uint8).fill(0xFF)
    return a


def _barrier_holders(region: Region) -> set:
    """The barriers of `region` and every op that holds one (empty: no barrier)."""
    out: set = set()
    for op in region.ops:
        for nested in op.walk():
            if nested.name == "gpu.barrier":
                out.add(nested)
                out.update(a for a in nested.ancestors() if op.is_ancestor_of(a))
    return out


def _ids(sizes: tuple):
    """Every id of a grid or block of `sizes`, x fastest."""
    for z in range(sizes[2]):
        for y in range(sizes[1]):
            for x in range(sizes[0]):
                yield (x, y, z)


def run_grid(interp: Interpreter, op: Operation, body_op: Operation, n_leading: int,
             grid: tuple, block: tuple, leading: Callable[[ThreadContext], list],
             env: dict | None, dynamic_shared: int = 0) -> None:
    """Run the body of `body_op` (a launch or a kernel) for every thread of `grid` x
    `block` on behalf of `op`. `leading(thread)` gives the body's `n_leading` own arguments
    for a thread (the ids of a launch, the arguments of a kernel); its attributions follow.
    `env` holds the values a launch body uses from above (None for an isolated kernel)."""
    check_launch(op, grid, block)
    region = body_op.regions[0]
    workgroup, private = attributions(body_op, n_leading)
    holders = _barrier_holders(region) if block != (1, 1, 1) else set()
    for block_id in _ids(grid):
        shared = [_fresh(op, v.type) for v in workgroup]
        dynamic = np.full(dynamic_shared, -1, np.int8)
        runs = []
        for thread_id in _ids(block):
            thread = ThreadContext(grid, block, dynamic, block_id, thread_id)
            args = leading(thread) + shared + [_fresh(op, v.type) for v in private]
            runner = GridInterpreter(interp, thread)
            own_env = env if env is not None else {}
            if not holders:             # one after another (the module docstring)
                runner.run_region(region, args, own_env)
            else:
                runs.append(_region(runner, region, args, dict(own_env), holders))
        if runs:
            _lockstep(runs, block_id)


def _lockstep(runs: list, block_id: tuple) -> None:
    """Resume every thread of a block until each pauses at a barrier or returns; again
    while any waits (the module docstring)."""
    while runs:
        waiting, returned = [], 0
        for run in runs:
            try:
                waiting.append((next(run), run))
            except StopIteration:
                returned += 1
        if not waiting:
            return
        barrier = waiting[0][0]
        if returned:
            raise InterpreterError(
                f"'{barrier.name}' is not reached by every thread of block {block_id}: "
                f"{len(waiting)} of {len(runs)} threads wait at a barrier, {returned} "
                f"returned without it (a barrier in divergent control flow)",
                barrier.location)
        if any(b is not barrier for b, _ in waiting):
            raise InterpreterError(
                f"'{barrier.name}': the threads of block {block_id} wait at different "
                f"barriers (a barrier in divergent control flow)", barrier.location)
        runs = [run for _, run in waiting]


def _region(interp: Interpreter, region: Region, args: list, env: dict, holders: set):
    """Run `region` like `Interpreter.run_region`, as a generator that yields each barrier
    it reaches; the ops in `holders` (those holding a barrier) run here, the others through
    the interpreter. Returns the values the region's terminator hands back."""
    block = region.blocks[0]
    for a, v in zip(block.args, args):
        env[a] = v
    for op in block.ops:
        if op not in holders:
            outcome = _step(interp, op, env)
        elif op.name == "gpu.barrier":
            yield op
            continue
        else:
            outcome = yield from _structured(interp, op, env, holders)
        if isinstance(outcome, Return):
            return outcome.values
        for r, v in zip(op.results, outcome or ()):
            env[r] = v
    return []


def _step(interp: Interpreter, op: Operation, env: dict):
    """One op through the interpreter's hooks (what `Interpreter.run_block` does per op;
    kernels have no dataflow deadness)."""
    values = [env[v] for v in op.operands]
    hook = getattr(op, "interpret", None)
    if hook is not None:
        interp.env = env
        return hook(interp, values)
    evaluate = getattr(op, "evaluate", None)
    if evaluate is None:
        raise InterpreterError(f"'{op.name}' has no reference semantics", op.location)
    try:
        res = evaluate(*values)
    except (ArithmeticError, ValueError, TypeError, IndexError) as e:
        raise InterpreterError(f"'{op.name}' failed: {e}", op.location) from None
    return (res,) if len(op.results) == 1 else res


def _structured(interp: Interpreter, op: Operation, env: dict, holders: set):
    """A `loop.for` or an if that holds a barrier, its regions run by `_region`."""
    if isinstance(op, IfLike):
        region = op.then_region if op.taken(env[op.condition]) else op.else_region
        return (yield from _region(interp, region, [], env, holders)) if region.blocks else []
    if isinstance(op, ForOp):
        lb, ub, step = (int(env[v]) for v in (op.lower_bound, op.upper_bound, op.step))
        carried = [env[v] for v in op.init_args]
        for i in range(lb, ub, step):
            carried = yield from _region(interp, op.body, [to_value(i, op.lower_bound.type),
                                                           *carried], env, holders)
        return carried
    raise InterpreterError(f"'{op.name}' holds a gpu.barrier: the interpreter runs barriers "
                           "only in loop.for and if regions", op.location)
