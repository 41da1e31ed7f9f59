"""Lowerings of the shape ops (graph/shape.py): transpose, reshape, broadcast_to, dim.

- transpose: a parallel copy, result element `i` read at `x[i permuted back]` (result axis
  k is x's axis perm[k]).
- reshape: a parallel copy in row-major order: each result index is linearized over the
  result's sizes and delinearized over x's (`divui`/`remui` on indices). A reshape is a view
  in MLIR (`memref.expand_shape`/`collapse_shape`); the memory dialect has no such op yet,
  so it copies (docs/lowering.md lists the view as remaining work). Where a size is known
  only at run time, the element counts must agree, as the interpreter checks
  (`FunctionLowering.check`); a result with more elements than x is then not copied, so no
  element outside x is read (an inferred -1 rounds down, and needs no guard).
- broadcast_to: a parallel copy, x read as an elementwise operand is (`Broadcast`).
- dim: the size as a 0-d i64 buffer; the index is also remembered, so that size operands of
  reshape and broadcast_to use it without a trip through memory.

Run-time sizes come from `memory.dim` of x, or from the `sizes` operands (0-d integer
tensors) where the op's `shape` has a -1.
"""

from __future__ import annotations

from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.rewrite import constant_value
from irkit.types import I64
from irkit.dialects.graph import TensorSpec
from irkit.dialects.graph import checked_axis, full_perm
from irkit.passes.lower_graph.core import FunctionLowering, lowers
from irkit.passes.lower_graph.elementwise import Broadcast, load, store
from irkit.passes.lower_graph.scalar import Scalars


@lowers("graph.transpose")
def lower_transpose(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    perm = full_perm(op.props()["perm"], x.type.rank)
    xs = lw.sizes(x)
    sizes = [xs[p] for p in perm]
    out = lw.dest(op.results[0], sizes)

    def body(b: Builder, ivs: list[Value]) -> None:
        idx = [None] * len(perm)
        for k, p in enumerate(perm):            # result axis k is x's axis p
            idx[p] = ivs[k]
        store(b, load(b, x, idx), out, ivs)

    lw.parallel_nest(sizes, body)


def _target_sizes(lw: FunctionLowering, op: Operation, x: Value) -> list[Value]:
    """The result sizes of a reshape or broadcast_to: static ones from the result type, a
    -1 entry of `shape` from the next `sizes` operand, and (reshape without `sizes`) the one
    -1 as x's element count divided by the other entries."""
    shape = op.props()["shape"]
    rtype = op.results[0].type.shape
    size_operands = iter(op.operands[1:])
    given = [lw.index_of(next(size_operands)) if d == -1 and len(op.operands) > 1 else None
             for d in shape]
    out = []
    for i, d in enumerate(shape):
        if rtype[i] is not None:
            out.append(lw.index(rtype[i]))
        elif given[i] is not None:
            out.append(given[i])
        elif d != -1:
            out.append(lw.index(d))
        else:                                   # the inferred -1 of a reshape
            s = Scalars(lw, lw.b)
            total = lw.index(1)
            for a in range(x.type.rank):
                total = s.mul(total, lw.size(x, a))
            known = 1
            for e in shape:
                known *= e if e != -1 else 1
            out.append(s.op("arith.divui", total, lw.index(known)))
    return out


def _check_count(lw: FunctionLowering, op: Operation, xs: list[Value],
                 sizes: list[Value]) -> Value | None:
    """Record a reshape whose element counts differ at run time (the interpreter's numpy
    error); returns the condition a copy needs when the result may hold more elements than
    x, else None (nothing dynamic, or an inferred -1: the result then holds fewer)."""
    shape = op.props()["shape"]
    inferred = len(op.operands) == 1 and -1 in shape
    if all(constant_value(v) is not None for v in xs + sizes):
        return None                         # the verifier checked it
    if inferred and all(d in (-1, 1) for d in shape):
        return None                         # the inferred size is the count: it fits
    s = Scalars(lw, lw.b)
    total, count = lw.index(1), lw.index(1)
    for v in xs:
        total = s.mul(total, v)
    for v in sizes:
        count = s.mul(count, v)
    target = "(" + ", ".join(map(str, shape)) + ")"
    message = f"cannot reshape array of size {{value}} into shape {target}"
    ok = s.cmp("eq", total, count)
    lw.check(ok, total, count, message if inferred else message + " of {bound} elements", op)
    return None if inferred else ok


@lowers("graph.reshape")
def lower_reshape(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    sizes = _target_sizes(lw, op, x)
    xs = lw.sizes(x)
    ok = _check_count(lw, op, xs, sizes)
    out = lw.dest(op.results[0], sizes)

    def body(b: Builder, ivs: list[Value]) -> None:
        s = Scalars(lw, b)
        linear = lw.index(0)
        for iv, n in zip(ivs, sizes):           # row-major position of the result element
            linear = s.add(s.mul(linear, n), iv) if linear is not lw.index(0) else iv
        idx = []
        for a in reversed(range(len(xs))):      # x's index, last axis first
            if a == 0:
                idx.append(linear)
            else:
                idx.append(s.op("arith.remui", linear, xs[a]))
                linear = s.op("arith.divui", linear, xs[a])
        store(b, load(b, x, idx[::-1]), out, ivs)

    if ok is None:
        lw.parallel_nest(sizes, body)
    else:
        lw.when(ok, lambda tb: lw.parallel_nest(sizes, body, tb))


@lowers("graph.broadcast_to")
def lower_broadcast_to(lw: FunctionLowering, op: Operation) -> None:
    x = lw.buffer(op.operands[0])
    sizes = _target_sizes(lw, op, x)
    shape = op.results[0].type.shape
    read = Broadcast(lw, x, shape, sizes=sizes)
    out = lw.dest(op.results[0], sizes)
    lw.parallel_nest(sizes, lambda b, ivs: store(b, read.load(b, ivs), out, ivs))


@lowers("graph.dim")
def lower_dim(lw: FunctionLowering, op: Operation) -> None:
    x = op.operands[0]
    axis = checked_axis(op.props()["axis"], TensorSpec.of(x.type))
    n = lw.size(lw.buffer(x), axis)
    result = op.results[0]
    lw.index_values[result] = n
    out = lw.dest(result, [])
    store(lw.b, Scalars(lw, lw.b).cast(n, I64), out, [])
