"""Reference semantics of the structured ops: one engine, numpy over the iteration space.

Meaning. A structured op runs its body once per point of its iteration space (the product
of its loop ranges). At a point, each body argument is its operand's element at the indices
the operand's indexing map gives for the loop indices (a scalar operand is itself), and
the yielded values become the output elements at their maps' indices. Parallel loops may run
in any order; reduction loops run in order: each reduction point folds the body into the
running value of the output element, starting from the output's value. So a reduction means
exactly "fold the body over the reduction points in lexicographic order". Two parallel
points that write one output element, or an input that aliases an output memref read at
other indices, make the result depend on the order: undefined, as in MLIR.

Evaluation. The body is run by the interpreter itself (each op's `evaluate`), with numpy
arrays as values:

1. Parallel loops only: once, each argument an array over the whole iteration space
   (operands gathered through their maps with index grids), and each yielded value
   scattered into its output.
2. Reductions whose body yields `combiner(acc, x)` per output, `acc` the output's argument
   used by nothing else and `combiner` a known reduction (`arith.addf`, `mulf`, `addi`,
   `maximumf`, `maxsi`, ...): `x` is computed once over the whole iteration space, then
   folded along the reduction points: `addf` / `mulf` with numpy's `accumulate`, which adds
   in order (so the fold is bit for bit the sequential one); the exactly associative and
   commutative ones (integer arithmetic and bit operations, min and max) as a tree with the
   op's own `evaluate`. Matmul, convolution, pooling and `linalg.reduce` bodies are of this
   shape.
3. Other reductions: the body runs once per reduction point, in order, vectorized over the
   parallel points.
4. Bodies with ops that do not act elementwise on arrays (regions, memory or tensor
   accesses, calls): one point at a time, every loop in lexicographic order.

`linalg.index` reads the loop indices of the point being run (an index grid in the
vectorized strategies) from `interp.state[LOOP_INDICES]`, keyed by its op.

Operands. Tensors are numpy arrays; an output tensor is copied and the copy written (value
semantics), a memref output is written in place. Loop ranges come from the operands'
run-time shapes (`loop_ranges`); an operand whose size disagrees with a loop, or whose
indices would leave it, is an error naming the op, where compiled code would be undefined.
"""

from __future__ import annotations

import itertools

import numpy as np

from irkit.affine import AffineDim
from irkit.interpreter import InterpreterError
from irkit.ir import OpResult
from irkit.opdef import ConstantLike, Elementwise, has_trait
from irkit.types import FloatType, IndexType, MemRefType, ShapedType

from irkit.dialects.linalg.structured import PARALLEL, LoopIndex, dims_of

#: `interp.state` key: structured op -> the loop indices of the point(s) being run
LOOP_INDICES = "linalg.loop_indices"
#: at most this many points are evaluated at once (strategy 2 falls back to 3 beyond it)
_GRID_LIMIT = 1 << 22


def run(op, interp, values) -> list:
    """Run structured op `op` on operand values `values`; returns the tensor results."""
    operands = op.structured_operands()
    types = [v.type for v in operands]
    n_in = len(op.inputs)
    maps = op.indexing_maps_list()
    arrays = list(values)
    shapes = [np.shape(a) if isinstance(t, ShapedType) else () for a, t in zip(arrays, types)]
    ranges = [int(r) for r in op.loop_ranges(lambda i, d: shapes[i][d])]
    _check_bounds(op, maps, shapes, ranges)
    for k in range(n_in, len(arrays)):
        if isinstance(types[k], MemRefType):
            if not arrays[k].flags.writeable:
                raise _fail(op, "writes to a read-only buffer")
        else:
            arrays[k] = np.array(arrays[k], copy=True)
    if 0 not in ranges:
        body = _Body(op, interp, types)
        parallel = [it == PARALLEL for it in op.iterator_types_list()]
        if not body.vectorizable:
            _pointwise(body, maps, arrays, ranges)
        elif all(parallel):
            _parallel(body, maps, arrays, ranges)
        elif not _folded(body, maps, arrays, ranges, parallel):
            _sequential(body, maps, arrays, ranges, parallel)
    return [a for a, t in zip(arrays[n_in:], types[n_in:]) if not isinstance(t, MemRefType)]


def _fail(op, message: str) -> InterpreterError:
    return InterpreterError(f"'{op.name}' {message}", op.location)


def _check_bounds(op, maps, shapes, ranges) -> None:
    """Every operand dimension a bare loop indexes has that loop's extent; every other
    index expression stays inside its dimension over the whole loop box."""
    sources = op.loop_bound_sources()
    for i, (m, shape) in enumerate(zip(maps, shapes)):
        for j, e in enumerate(m.results):
            size = shape[j]
            if isinstance(e, AffineDim):
                if size != ranges[e.position]:
                    si, sj = sources[e.position]
                    raise _fail(op, f"operand #{i} has {size} elements in dimension {j}, but "
                                    f"loop d{e.position} runs {ranges[e.position]} times "
                                    f"(operand #{si} dimension {sj})")
                continue
            if 0 in ranges:
                continue
            used = sorted(dims_of(e))
            point = [0] * len(ranges)
            for k, d in enumerate(used):
                point[d] = np.arange(ranges[d]).reshape([-1 if q == k else 1
                                                         for q in range(len(used))])
            idx = np.asarray(e.evaluate(point, ()))
            lo, hi = int(idx.min()), int(idx.max())
            if lo < 0 or hi >= size:
                raise _fail(op, f"indexes operand #{i} at {hi if hi >= size else lo} in "
                                f"dimension {j}, which has {size} elements")


class _Body:
    """Runs the payload block through the interpreter with given arguments and loop
    indices; `vectorizable` says whether its ops accept arrays for scalars."""

    def __init__(self, op, interp, types) -> None:
        self.op = op
        self.interp = interp
        self.types = types
        self.region = op.regions[0]
        self.block = self.region.blocks[0]
        self.env = interp.env           # the body may use values defined above the op
        # The terminator is the `linalg.yield` (the verifier saw to it).
        self.vectorizable = all(
            not o.regions and (o is self.block.last or has_trait(o, LoopIndex)
                               or has_trait(o, Elementwise) or has_trait(o, ConstantLike))
            for o in self.block.ops)

    def __call__(self, args, loop_indices) -> list:
        table = self.interp.state.setdefault(LOOP_INDICES, {})
        table[self.op] = loop_indices
        try:
            return self.interp.run_region(self.region, args, self.env)
        finally:
            del table[self.op]


def _gather(array, t, m, dims):
    """The elements of an operand at the points `dims` (per loop: an int or an index grid)."""
    if not isinstance(t, ShapedType):
        return array
    return array[tuple(e.evaluate(dims, ()) for e in m.results)]


def _scatter(array, m, dims, value, grid_shape) -> None:
    idx = tuple(np.broadcast_to(e.evaluate(dims, ()), grid_shape) for e in m.results)
    value = np.broadcast_to(value, grid_shape)
    if not idx and grid_shape:
        # A rank-0 output written from many parallel points: the last one wins.
        array[()] = value.reshape(-1)[-1]
        return
    array[idx] = value


def _grid(ranges, loops) -> list:
    """Per loop in `loops`, an `arange` shaped to broadcast over the grid of those loops."""
    n = len(loops)
    return [np.arange(ranges[k]).reshape([-1 if q == p else 1 for q in range(n)])
            for p, k in enumerate(loops)]


def _run(body, maps, arrays, dims, grid_shape) -> None:
    n_in = len(body.op.inputs)
    args = [_gather(a, t, m, dims) for a, t, m in zip(arrays, body.types, maps)]
    results = body(args, dims)
    for k, value in enumerate(results):
        _scatter(arrays[n_in + k], maps[n_in + k], dims, value, grid_shape)


def _parallel(body, maps, arrays, ranges) -> None:
    """Strategy 1: every point at once."""
    loops = list(range(len(ranges)))
    _run(body, maps, arrays, _grid(ranges, loops), tuple(ranges))


def _sequential(body, maps, arrays, ranges, parallel) -> None:
    """Strategy 3: reduction points in order, all parallel points at once."""
    par = [k for k, p in enumerate(parallel) if p]
    red = [k for k, p in enumerate(parallel) if not p]
    dims: list = [0] * len(ranges)
    for k, g in zip(par, _grid(ranges, par)):
        dims[k] = g
    grid_shape = tuple(ranges[k] for k in par)
    for point in itertools.product(*(range(ranges[k]) for k in red)):
        for k, i in zip(red, point):
            dims[k] = i
        _run(body, maps, arrays, dims, grid_shape)


def _pointwise(body, maps, arrays, ranges) -> None:
    """Strategy 4: one point at a time, scalars as the interpreter holds them."""
    n_in = len(body.op.inputs)
    index_like = [isinstance(t, IndexType) or isinstance(getattr(t, "element", None),
                                                         IndexType) for t in body.types]
    for point in itertools.product(*(range(n) for n in ranges)):
        dims = list(point)
        args = [_gather(a, t, m, dims) for a, t, m in zip(arrays, body.types, maps)]
        args = [int(a) if ix else a for a, ix in zip(args, index_like)]
        for k, value in enumerate(body(args, dims)):
            m = maps[n_in + k]
            arrays[n_in + k][tuple(e.evaluate(dims, ()) for e in m.results)] = value


# ---------------------------------------------------------------------------------------------
# Strategy 2: known combiners
# ---------------------------------------------------------------------------------------------


def _combiner_kinds() -> dict:
    """Combiner op class -> how to fold it: a numpy ufunc whose `accumulate` adds in order
    (float add and multiply, where only the sequential order gives the same rounding), or
    None for a tree with the op's own `evaluate` (exactly associative and commutative:
    integer arithmetic and bit operations, min and max; any grouping gives the same bits)."""
    from irkit.dialects import arith
    kinds: dict = {arith.AddFOp: np.add, arith.MulFOp: np.multiply}
    for cls in (arith.AddIOp, arith.MulIOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp,
                arith.MaxSIOp, arith.MinSIOp, arith.MaxUIOp, arith.MinUIOp,
                arith.MaximumFOp, arith.MinimumFOp, arith.MaxNumFOp, arith.MinNumFOp):
        kinds[cls] = None
    return kinds


_KINDS: dict | None = None


def _find_combiners(body) -> list | None:
    """Per output: (combiner op, its ufunc or None, the value folded in), when the body
    yields `combiner(acc, x)` for each, `acc` being that output's argument and used by
    nothing else (so `x`, and everything but the combiners, cannot depend on any output's old
    value)."""
    global _KINDS
    if _KINDS is None:
        _KINDS = _combiner_kinds()
    block = body.block
    accs = block.args[len(body.op.inputs):]
    found = []
    for acc, v in zip(accs, block.last.operands):
        c = v.owner if isinstance(v, OpResult) else None
        if type(c) not in _KINDS or c.parent is not block or len(acc.uses) != 1 or \
                len(v.uses) != 1:
            return None
        ufunc = _KINDS[type(c)]
        a, b = c.operands
        x = b if a is acc else a if b is acc else None
        if x is None or x is acc:
            return None
        if ufunc is not None and not (isinstance(v.type, FloatType)
                                      and v.type.name in ("f16", "f32", "f64")):
            return None         # bf16 rounds each step in the op, not in numpy's float32
        found.append((c, ufunc, x))
    return found


def _folded(body, maps, arrays, ranges, parallel) -> bool:
    """Strategy 2, when it applies: returns whether it ran."""
    par = [k for k, p in enumerate(parallel) if p]
    red = [k for k, p in enumerate(parallel) if not p]
    n_in = len(body.op.inputs)
    for m in maps[n_in:]:
        # Each output element must be one parallel point's: the map is a permutation of
        # the parallel loops.
        if sorted(e.position if isinstance(e, AffineDim) else -1 for e in m.results) != par:
            return False
    if int(np.prod(ranges, dtype=np.int64)) > _GRID_LIMIT:
        return False
    combiners = _find_combiners(body)
    if combiners is None:
        return False
    loops = list(range(len(ranges)))
    full = _grid(ranges, loops)
    args = [_gather(a, t, m, full) for a, t, m in zip(arrays, body.types, maps)]
    body(args, full)                    # the combiners' own results are not used
    pdims: list = [0] * len(ranges)
    for k, g in zip(par, _grid(ranges, par)):
        pdims[k] = g
    grid_shape = tuple(ranges[k] for k in par)
    for k, (c, ufunc, x) in enumerate(combiners):
        out, m = arrays[n_in + k], maps[n_in + k]
        xs = np.broadcast_to(body.env[x], tuple(ranges))
        xs = np.moveaxis(xs, red, list(range(len(par), len(ranges))))
        xs = xs.reshape(grid_shape + (-1,))
        acc = np.broadcast_to(_gather(out, body.types[n_in + k], m, pdims), grid_shape)
        if ufunc is not None:
            stacked = np.concatenate([np.asarray(acc)[..., None], xs], axis=-1)
            total = ufunc.accumulate(stacked, axis=-1)[..., -1]
        else:
            total = c.evaluate(acc, _tree(c.evaluate, xs))
        _scatter(out, m, pdims, total, grid_shape)
    return True


def _tree(evaluate, xs):
    """`evaluate` folded over the last axis pairwise (for exactly associative ones)."""
    while xs.shape[-1] > 1:
        n = xs.shape[-1]
        half = n // 2
        folded = np.asarray(evaluate(xs[..., :half], xs[..., half:2 * half]))
        xs = np.concatenate([folded, xs[..., 2 * half:]], axis=-1) if n % 2 else folded
    return xs[..., 0]
