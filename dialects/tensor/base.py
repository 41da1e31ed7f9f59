"""What the `tensor` dialect's ops share: type constraints, mixed static/dynamic index lists,
their custom syntax, rank reduction, and the interpreter's helpers.

Mixed lists. An offset, size or stride list (and `tensor.pad`'s low/high, `expand_shape`'s
output shape) is stored as MLIR stores it: a `DenseArrayAttr` of i64 with `DYNAMIC_INDEX`
(MLIR's `ShapedType::kDynamic`) where the entry is an SSA value, plus the values in order.
Python code sees it as one list of `int | Value` (MLIR's `OpFoldResult`): `split_mixed` and
`join_mixed` convert, and `static_entries` reads the attribute with `None` for dynamic.

Rank reduction. A slice may drop unit dimensions of its full shape (`[1, 4]` read as
`tensor<4xf32>`). Which ones is decided from types alone, greedily left to right, as MLIR's
`computeRankReductionMask`: `rank_reduction_mask` returns the dropped dimensions, and
`check_slice_type` raises MLIR's verifier messages when a type is no such reduction.
"""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from irkit.attributes import DenseArrayAttr, IntegerAttr, numpy_dtype
from irkit.ir import Operation, Value
from irkit.opdef import Constraint
from irkit.rewrite import constant_value
from irkit.types import I64, INDEX, IndexType, RankedTensorType, Type, UnrankedTensorType
from irkit.dialects.memory import DYNAMIC_INDEX

__all__ = [
    "DYNAMIC_INDEX", "Mixed", "RankedTensor", "AnyTensorType", "NonScalarTensor",
    "StaticTensor", "split_mixed", "join_mixed", "static_entries",
    "constant_index", "fold_constant_entries", "rank_reduction_mask", "check_slice_type",
    "canonical_reduced_type", "join_shapes",
]

#: an entry of a mixed static / dynamic list: an int, or an `index` value (MLIR's OpFoldResult)
Mixed = Union[int, Value]

# Descriptions are MLIR's, so that operand errors read as they do there.
RankedTensor = Constraint(lambda t: isinstance(t, RankedTensorType),
                          "ranked tensor of any type values")
AnyTensorType = Constraint(lambda t: isinstance(t, (RankedTensorType, UnrankedTensorType)),
                           "tensor of any type values")
NonScalarTensor = Constraint(
    lambda t: isinstance(t, UnrankedTensorType) or (isinstance(t, RankedTensorType)
                                                    and t.rank > 0),
    "non-0-ranked or unranked tensor")
StaticTensor = Constraint(lambda t: isinstance(t, RankedTensorType) and t.has_static_shape,
                          "statically shaped tensor of any type values")




# ---------------------------------------------------------------------------------------------
# Mixed static / dynamic lists
# ---------------------------------------------------------------------------------------------


def split_mixed(mixed: Sequence[Mixed]) -> tuple[DenseArrayAttr, list[Value]]:
    """`[%a, 4]` as the stored pair: `array<i64: kDynamic, 4>` and `[%a]`."""
    static = [DYNAMIC_INDEX if isinstance(v, Value) else int(v) for v in mixed]
    return DenseArrayAttr(I64, static), [v for v in mixed if isinstance(v, Value)]


def join_mixed(static: Sequence[int], dynamic: Sequence[Value]) -> list[Mixed]:
    """The stored pair as one list; an invalid op with too few values gets None entries,
    so that it can still be printed and reported."""
    it = iter(dynamic)
    return [next(it, None) if v == DYNAMIC_INDEX else v for v in static]


def static_entries(static: Sequence[int]) -> list[int | None]:
    """The static attribute with None for every dynamic entry (the verifier's view)."""
    return [None if v == DYNAMIC_INDEX else v for v in static]


def constant_index(v: Value) -> int | None:
    """The value of the integer constant defining `v`, or None."""
    a = constant_value(v)
    return a.value if isinstance(a, IntegerAttr) else None


def fold_constant_entries(mixed: Sequence[Mixed], *, non_negative: bool = False,
                          non_zero: bool = False) -> list[Mixed] | None:
    """`mixed` with every value defined by a constant replaced by that constant (MLIR's
    `foldDynamicIndexList`), or None when no entry changed. As MLIR does, offsets and sizes
    take only non-negative constants and strides only non-zero ones: the others stay values,
    so that folding never makes an op the verifier rejects."""
    out, changed = [], False
    for v in mixed:
        c = constant_index(v) if isinstance(v, Value) else None
        # kDynamic itself cannot be a static entry: a constant that equals it stays a value.
        if c is not None and c != DYNAMIC_INDEX and not (non_negative and c < 0) and \
                not (non_zero and c == 0):
            out.append(c)
            changed = True
        else:
            out.append(v)
    return out if changed else None


def mixed_shape(t: RankedTensorType, dynamic: Sequence[Value]) -> list[Mixed]:
    """The sizes of `t` with its dynamic sizes taken from `dynamic`, in order."""
    it = iter(dynamic)
    return [next(it, None) if d is None else d for d in t.shape]


def type_from_mixed(sizes: Sequence[Mixed], element: Type) -> RankedTensorType:
    return RankedTensorType([d if isinstance(d, int) else None for d in sizes], element)


# ---------------------------------------------------------------------------------------------
# Shapes and rank reduction
# ---------------------------------------------------------------------------------------------


def join_shapes(a: Type, b: Type) -> Type | None:
    """The most static tensor type compatible with both (MLIR's `joinShapes` for casts), or
    None when none is: different ranks, or different static sizes."""
    if isinstance(a, UnrankedTensorType):
        return b
    if isinstance(b, UnrankedTensorType):
        return a
    if a.rank != b.rank:
        return None
    shape = []
    for x, y in zip(a.shape, b.shape):
        if x is not None and y is not None and x != y:
            return None
        shape.append(y if x is None else x)
    return RankedTensorType(shape, a.element, a.encoding)


def rank_reduction_mask(shape: Sequence, reduced: Sequence) -> list[int] | None:
    """The dimensions of `shape` (None: dynamic) to drop to get `reduced`, or None when
    dropping unit dimensions cannot give it. Greedy, left to right, as MLIR's
    `computeRankReductionMask`: a dimension is kept when it equals the next wanted one (a
    dynamic size matches only a dynamic size); otherwise it must be a static 1, dropped."""
    dropped, j = [], 0
    for i, d in enumerate(shape):
        if j < len(reduced) and d == reduced[j]:
            j += 1
            continue
        if d != 1:
            return None
        dropped.append(i)
    return dropped if j == len(reduced) else None


def check_slice_type(op: Operation, expected: RankedTensorType, actual: RankedTensorType) -> None:
    """Raise MLIR's error when `actual` is neither `expected` (the type a slice infers) nor a
    rank-reduced version of it."""
    if actual.rank > expected.rank:
        raise op.error("expected rank to be smaller or equal to the other rank.")
    if rank_reduction_mask(expected.shape, actual.shape) is None:
        raise op.error(f"expected type to be '{expected}' or a rank-reduced version. "
                       "(size mismatch)")
    if actual.element is not expected.element:
        raise op.error(f"expected element type to be '{expected.element}'")


def canonical_reduced_type(full: RankedTensorType, rank: int) -> RankedTensorType:
    """`full` reduced to `rank` by dropping its first unit dimensions (MLIR's
    `inferCanonicalRankReducedResultType`, used when constants make a slice more static)."""
    drop = len(full.shape) - rank
    shape = []
    for d in full.shape:
        if drop > 0 and d == 1:
            drop -= 1
        else:
            shape.append(d)
    return RankedTensorType(shape, full.element)


def slice_bounds_error(shape, offsets, sizes, strides) -> str | None:
    """MLIR's static in-bounds rule for slices (`verifyInBoundsSlice`), None entries dynamic:
    a static offset must be below a static size, even for an empty slice, and the last
    position read must be too."""
    for i, (d, o, n, k) in enumerate(zip(shape, offsets, sizes, strides)):
        if d is None or o is None:
            continue
        if o >= d:
            return f"offset {i} is out-of-bounds: {o} >= {d}"
        if n is None or k is None:
            continue
        last = o + (n - 1) * k
        if last >= d:
            return f"slice along dimension {i} runs out-of-bounds: {last} >= {d}"
    return None


# ---------------------------------------------------------------------------------------------
# Custom-syntax pieces
# ---------------------------------------------------------------------------------------------


def parse_int(p) -> int:
    return p.parse_signed_int("an integer or an SSA value")


def parse_mixed(p) -> tuple[list[int], list]:
    """`[%a, 4]`: the static entries (DYNAMIC_INDEX where a value stands) and the operand
    references, to be resolved as `index`."""
    p.expect("[")
    static, refs = [], []
    while p.tok != "]":
        if p.tok.startswith("%"):
            refs.append(p.parse_operand_ref())
            static.append(DYNAMIC_INDEX)
        else:
            static.append(parse_int(p))
        if not p.accept(","):
            break
    p.expect("]")
    return static, refs


def format_mixed(p, mixed: Sequence[Mixed]) -> str:
    return "[" + ", ".join(p.value(v) if isinstance(v, Value) or v is None else str(v)
                           for v in mixed) + "]"


def resolve_indices(p, refs) -> list[Value]:
    return [p.resolve(r, INDEX) for r in refs]


def parse_index_refs(p) -> list:
    """`[%i, %j]` (possibly empty) as operand references."""
    p.expect("[")
    refs = [] if p.tok == "]" else p.parse_operand_refs()
    p.expect("]")
    return refs


def parse_tensor_type(p, ranked: bool = True) -> Type:
    tk = p.i
    t = p.parse_type()
    ok = isinstance(t, RankedTensorType) or (not ranked and isinstance(t, UnrankedTensorType))
    if not ok:
        want = "a ranked tensor type" if ranked else "a tensor type"
        raise p.error(f"invalid kind of type specified: expected {want}, got '{t}'", tk)
    return t


# ---------------------------------------------------------------------------------------------
# Interpreter helpers
# ---------------------------------------------------------------------------------------------


def fail(op: Operation, message: str):
    """An interpreter error naming the op (what MLIR leaves undefined, irkit reports)."""
    from irkit.interpreter import InterpreterError
    return InterpreterError(f"'{op.name}' {message}", op.location)


def shape_text(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def dtype_of(t: Type) -> np.dtype:
    return np.dtype(numpy_dtype(t))


def element_value(x, t: Type):
    """One element as the interpreter holds a scalar of type `t` (`index` is a Python int)."""
    if isinstance(t, IndexType):
        return int(x)
    return dtype_of(t).type(x)


def check_shape(op: Operation, what: str, array: np.ndarray, t: Type) -> None:
    """Fail unless `array` has the static sizes of tensor type `t` (a `?` matches any)."""
    if isinstance(t, UnrankedTensorType):
        return
    if array.ndim != t.rank or any(d is not None and d != n for d, n in zip(t.shape,
                                                                           array.shape)):
        raise fail(op, f"{what} has shape {shape_text(array.shape)}, which does not match "
                       f"{t}")


def poisoned(shape, t: Type) -> np.ndarray:
    """A fresh tensor whose contents are undefined: all-ones bytes (NaN for floats, -1 for
    integers, true for i1), so that reading them shows up in results, as for memory."""
    a = np.empty(shape, dtype_of(t))
    if a.dtype == np.bool_:
        a.fill(True)
    elif a.size:
        a.reshape(-1).view(np.uint8).fill(0xFF)
    return a
