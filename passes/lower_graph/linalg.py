"""Lowering of `graph.matmul` (graph/matmul.py): numpy.matmul's rules as one loop nest.

The result `[..., M, N]` is a `loop.parallel` over all its axes (batch axes, M, N; a vector
operand's dropped axis is simply absent), and each element is a `loop.for` over K carrying
the dot product: `acc += a[..., m, k] * b[..., k, n]` with an `accumulate.Accumulator`.
Float factors are widened to f64 first, where the product of two f32 is exact, the sum is
carried in f64 and rounded once (f64 matmul: compensated); integers wrap in the element
type, as numpy's integer matmul does. The batch axes broadcast as elementwise operands do
(`elementwise.Broadcast` on the batch axes only).

This is the reference loop nest, the input of tiling and vectorization at the loop level;
making it fast is their job, not this lowering's.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.passes.lower_graph.accumulate import Accumulator
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import Broadcast, broadcast_sizes, load, store
from irkit.passes.lower_graph.scalar import Scalars


@lowers("graph.matmul")
def lower_matmul(lw: FunctionLowering, op: Operation) -> None:
    a, b = lw.buffer(op.operands[0]), lw.buffer(op.operands[1])
    ra, rb = a.type.rank, b.type.rank
    result = op.results[0]
    shape = result.type.shape
    a_batch, b_batch = list(range(max(ra - 2, 0))), list(range(max(rb - 2, 0)))
    nbatch = len(shape) - (ra > 1) - (rb > 1)
    batch_shape = shape[:nbatch]
    sizes = broadcast_sizes(lw, batch_shape, [(a, a_batch), (b, b_batch)])
    if ra > 1:
        sizes.append(lw.size(a, ra - 2) if shape[nbatch] is None else lw.index(shape[nbatch]))
    if rb > 1:
        sizes.append(lw.size(b, rb - 1) if shape[-1] is None else lw.index(shape[-1]))
    k_size = lw.size(a, ra - 1)
    a_read = Broadcast(lw, a, batch_shape, a_batch, sizes[:nbatch])
    b_read = Broadcast(lw, b, batch_shape, b_batch, sizes[:nbatch])
    out = lw.dest(result, sizes)
    acc = Accumulator(lw, result.type.element)

    def body(bld: Builder, ivs: list[Value]) -> None:
        batch = ivs[:nbatch]
        m = [ivs[nbatch]] if ra > 1 else []
        n = [ivs[-1]] if rb > 1 else []
        a_pre = a_read.indices(bld, batch)
        b_pre = b_read.indices(bld, batch)

        def product(ib: Builder, kv: list[Value]) -> Value:
            s = Scalars(lw, ib)
            return acc.product(s, load(ib, a, a_pre + m + kv), load(ib, b, b_pre + kv + n))

        total = acc.sum([k_size], product, bld)
        store(bld, acc.round(Scalars(lw, bld), total), out, ivs)

    lw.parallel_nest(sizes, body)
