"""LLVM rules for the `vector` dialect: splats, lane reductions and shuffles.

- `vector.broadcast` is one `shufflevector`: each result lane reads the source lane numpy's
  broadcasting rule maps it to (a scalar source is inserted into lane 0 first). Vectors are
  flat in LLVM (see `llvm_types`), so the mask is computed from the irkit shapes.
- `vector.reduction` uses LLVM's `llvm.vector.reduce.*` intrinsics where they mean exactly
  what the interpreter's in-order chain of arith ops means: every integer kind (wrapping,
  so any order agrees), float `add`/`mul` (`reduce.fadd`/`fmul` are ordered unless
  `fastmath<reassoc>` allows a tree, as MLIR says), and `maximumf`/`minimumf` (NaN wins
  in any order). `maxnumf`/`minnumf` chain `llvm.maximumnum`/`minimumnum` lane by lane,
  since LLVM's `reduce.fmax` may return either signed zero.
- `vector.shuffle` is one `shufflevector` where its operands have one type (LLVM's rule);
  where their lengths differ, the shorter is first widened to the longer's length by a
  `shufflevector` of its own (the mask's lanes past it never read), as MLIR lowers it.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from irkit.types import VectorType
from irkit.backends.llvm_arith import fastmath
from irkit.backends.llvm_lowering import FunctionLowering, lowers
from irkit.backends.llvm_types import I32


@lowers("vector.broadcast")
def _broadcast(lw: FunctionLowering, op, args):
    b = lw.builder
    src_t, dst_t = op.operands[0].type, op.results[0].type
    vt = lw.value_type(dst_t)
    x = args[0]
    if not isinstance(src_t, VectorType):
        one = ir.VectorType(x.type, 1)
        x = b.insert_element(ir.Constant(one, None), x, ir.Constant(I32, 0))
        src_shape: tuple = ()
        n_src = 1
    else:
        src_shape = src_t.shape
        n_src = x.type.count
    lanes = np.broadcast_to(np.arange(n_src).reshape(src_shape), dst_t.shape).reshape(-1)
    mask = ir.Constant(ir.VectorType(I32, vt.count), [int(i) for i in lanes])
    return b.shuffle_vector(x, ir.Constant(x.type, None), mask)


@lowers("vector.shuffle")
def _shuffle(lw: FunctionLowering, op, args):
    b = lw.builder
    x, y = args
    n1, n2 = x.type.count, y.type.count
    mask = list(op.properties["mask"].value)
    if n1 != n2:                # both widened to the longer one; lanes past each unused
        n = max(n1, n2)

        def widen(v, k):
            if k == n:
                return v
            keep = ir.Constant(ir.VectorType(I32, n), [min(i, k - 1) for i in range(n)])
            return b.shuffle_vector(v, ir.Constant(v.type, None), keep)
        x, y = widen(x, n1), widen(y, n2)
        mask = [i if i < n1 else n + i - n1 for i in mask]
    return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, len(mask)), mask))


_INT_REDUCE = {"add": "add", "mul": "mul", "and": "and", "or": "or", "xor": "xor",
               "maxsi": "smax", "minsi": "smin", "maxui": "umax", "minui": "umin"}


def _int_combine(b: ir.IRBuilder, kind: str, x: ir.Value, y: ir.Value) -> ir.Value:
    if kind in ("add", "mul"):
        return getattr(b, kind)(x, y)
    if kind in ("and", "or"):
        return getattr(b, kind + "_")(x, y)
    if kind == "xor":
        return b.xor(x, y)
    pred = ">" if kind.startswith("max") else "<"
    cmp = b.icmp_signed if kind.endswith("si") else b.icmp_unsigned
    return b.select(cmp(pred, x, y), x, y)


@lowers("vector.reduction")
def _reduction(lw: FunctionLowering, op, args):
    kind = op.kind_name
    b = lw.builder
    v = args[0]
    acc = args[1] if len(args) > 1 else None
    et = v.type.element
    fm = fastmath(op)
    if isinstance(et, ir.IntType):
        r = lw.call_intrinsic(f"vector.reduce.{_INT_REDUCE[kind]}", [v], ret=et,
                              overloads=[v.type])
        return r if acc is None else _int_combine(b, kind, acc, r)
    if kind in ("add", "mul"):
        start = acc if acc is not None else lw.const(et, -0.0 if kind == "add" else 1.0)
        return lw.call_intrinsic(f"vector.reduce.f{kind}", [start, v], ret=et,
                                 overloads=[v.type], fastmath=fm)
    if kind in ("maximumf", "minimumf"):
        name = "maximum" if kind == "maximumf" else "minimum"
        r = lw.call_intrinsic(f"vector.reduce.f{name}", [v], ret=et, overloads=[v.type],
                              fastmath=fm)
        return r if acc is None else lw.call_intrinsic(name, [acc, r], fastmath=fm)
    name = "maximumnum" if kind == "maxnumf" else "minimumnum"
    lanes = [b.extract_element(v, ir.Constant(I32, i)) for i in range(v.type.count)]
    r = acc if acc is not None else lanes.pop(0)
    for x in lanes:
        r = lw.call_intrinsic(name, [r, x], fastmath=fm)
    return r
