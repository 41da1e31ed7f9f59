"""The rule for `graph.matmul` (graph/matmul.py): numpy.matmul's rules as one structured
kernel.

The result `[..., M, N]` is a `linalg.generic` with one parallel loop per result axis and a
reduction loop K last: `acc[..., m, n] += a[..., m, k] * b[..., k, n]`, each operand read
through its indexing map (a vector operand's dropped axis is simply absent: `[K] x [K, N]`
reads `a` at `(d0, d1) -> (d1)`). The product and the sum are `core.Accumulator`'s, the
numerics its docstring bounds: float32 factors multiplied in float32, the product widened
(`arith.extf`) and added in an f64 output (`tensor.empty` + `linalg.fill` 0.0), rounded once
by a following elementwise generic (`arith.truncf`); f16 and bf16 factors widened first; f64
with Neumaier's compensation (two f64 outputs); integers in their own type, wrapping.

Why not `linalg.matmul`: a named contraction casts its inputs to the output's element type
and multiplies there, so with an f64 output it would multiply in f64 — other numerics. For
integers it computes exactly what numpy does (`out + a * b` in the element type, wrapping),
so integer matrices use it: `linalg.matmul` for `[M, K] x [K, N]`, `linalg.batch_matmul`
for a batch of them whose batch sizes are equal, each into a zero-filled output.

Batch axes broadcast as numpy's matmul does, through the maps (`core.Read` on the batch
axes alone): a static size 1 is read at index 0 (`(d0, d1, d2, d3) -> (0, d1, d3)`), the
leading axes an operand lacks are left out, an operand whose `?` batch size is the very
value the result's is (attention's `[B, T, D] x [B, D, T]`) reads it as it is. A `?` batch
axis that may be 1 at run time while the result's is another size has no affine map: that
operand is first broadcast to the result's batch axes by an elementwise copy
(`core.elementwise`, which reads it with a select), and the product reads the copy.
"""

from __future__ import annotations

from irkit.affine import AffineDim, AffineMap
from irkit.ir import Operation, Value
from irkit.types import FloatType, RankedTensorType
from irkit.dialects.linalg import PARALLEL, REDUCTION, make_batch_matmul, make_matmul
from irkit.passes.graph_to_linalg.core import (
    Accumulator, FunctionConversion, Read, broadcast_sizes, converts, elementwise, projection,
)


def _batch_read(cv: FunctionConversion, v: Value, batch_shape: tuple, batch_sizes: list,
                num_loops: int) -> tuple[Value, list]:
    """(the tensor to read, the map expressions of its batch axes): `v` itself, or, where a
    batch axis needs a select, `v` broadcast to the result's batch axes (see the module
    docstring)."""
    nb = max(v.type.rank - 2, 0)
    read = Read(cv, v, batch_shape, batch_sizes, axes=range(nb), num_loops=num_loops,
                loops=range(len(batch_shape)))
    if read.kind == "input":
        return v, list(read.exprs)
    matrix = v.type.shape[nb:]
    t = RankedTensorType(tuple(batch_shape) + tuple(matrix), v.type.element)
    sizes = list(batch_sizes) + [cv.size(v, a) for a in range(nb, v.type.rank)]
    copy = elementwise(cv, [v], t, lambda s, xs: xs[0], sizes)
    return copy, [AffineDim(i) for i in range(len(batch_shape))]


def _result_size(cv: FunctionConversion, static, v: Value, axis: int) -> Value:
    return cv.index(static) if static is not None else cv.size(v, axis)


@converts("graph.matmul")
def convert_matmul(cv: FunctionConversion, op: Operation) -> list[Value]:
    a, b, t = op.lhs, op.rhs, op.result.type
    ra, rb = a.type.rank, b.type.rank
    has_m, has_n = ra > 1, rb > 1
    nbatch = t.rank - has_m - has_n
    batch_shape = t.shape[:nbatch]
    batch_sizes = broadcast_sizes(cv, batch_shape, [(a, range(max(ra - 2, 0))),
                                                    (b, range(max(rb - 2, 0)))])
    sizes = list(batch_sizes)
    if has_m:
        sizes.append(_result_size(cv, t.shape[nbatch], a, ra - 2))
    if has_n:
        sizes.append(_result_size(cv, t.shape[-1], b, rb - 1))
    loops = t.rank + 1                                  # the result's axes, then K
    k, m, n = loops - 1, nbatch, nbatch + has_m
    a, a_batch = _batch_read(cv, a, batch_shape, batch_sizes, loops)
    b, b_batch = _batch_read(cv, b, batch_shape, batch_sizes, loops)
    a_map = AffineMap(loops, 0, tuple(a_batch + [AffineDim(m)] * has_m + [AffineDim(k)]))
    b_map = AffineMap(loops, 0, tuple(b_batch + [AffineDim(k)] + [AffineDim(n)] * has_n))
    element = t.element
    if not isinstance(element, FloatType):
        named = _integer_named(cv, a, b, t, sizes, a_batch, b_batch)
        if named is not None:
            return [named]
    acc = Accumulator(element)
    outs = acc.outputs(cv, t.shape, sizes)
    count = acc.count

    def body(s, args):
        x, y = args[0], args[1]
        return acc.add(s, args[2:2 + count], acc.product(s, x, y))

    maps = [a_map, b_map] + [projection(loops, range(t.rank))] * count
    carried = cv.generic([a, b], outs, maps, [PARALLEL] * t.rank + [REDUCTION], body)
    if not isinstance(element, FloatType):              # integers: the sum itself
        return [carried[0]]
    return [acc.finish(cv, carried, t)]


def _integer_named(cv: FunctionConversion, a: Value, b: Value, t: RankedTensorType,
                   sizes: list, a_batch: list, b_batch: list) -> Value | None:
    """An integer matmul as `linalg.matmul` / `linalg.batch_matmul` into zeros, where the
    named op reads both operands as they are (no vector operand, no broadcast batch axis);
    None elsewhere."""
    ra, rb = a.type.rank, b.type.rank
    plain = [AffineDim(0)]
    if ra == rb == 2:
        make = make_matmul
    elif ra == rb == 3 and a_batch == plain and b_batch == plain:
        make = make_batch_matmul
    else:
        return None
    out = make(cv.b, a, b, cv.filled(t, sizes, 0)).results[0]
    cv.know_sizes(out, sizes)
    return out


__all__ = ["convert_matmul"]
