"""Shape graph ops: transpose, reshape, dim, broadcast_to, concat, split, slice, one_hot, gather.

These ops move elements around without computing with them, so their whole meaning is in the
shape function: which axes survive, which sizes are known, which combinations are errors.
Each shape function works on `TensorSpec`s whose dims may be ints, None (`?`) or DSL symbols
(`N`), and keeps a symbol wherever the result size provably *is* that symbol (a transposed
axis, the non-concatenated axes, `reshape(f32[N, 28, 28], [-1, 784])`'s `N`). A size the rule
cannot express (`N + 3`, `N // 2`) becomes None rather than a guess.

Canonicalization lives in two places, as in MLIR: an op that simplifies to an existing value
or a constant says so in `fold_identity` (run by the folder), and rewrites that build new ops
are pattern classes listed in `canonicalization_patterns`.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.ir import OpResult
from irkit.opdef import AnyTensor, Operand, Pure, Result, VarOperand, VarResult
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import F32, I64, RankedTensorType
from irkit.dialects.graph import (
    GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, graph, is_int, same_dtype,
    unify_dim,
)

_TRAITS = (Pure(),)

#: the largest i64, which `graph.slice` reads as "past the end" (Python's omitted bound);
#: bounds at least this large (or at most its negation) are treated as infinite
END = 9223372036854775807


def _fmt(shape) -> str:
    """A shape list in the DSL's spelling: `[-1, 784]`, `[N, ?]`."""
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _axis(axis: int, spec: TensorSpec) -> int:
    """`axis` of `spec` in [0, rank); unlike `norm_axis`, a rank-0 tensor has no axis."""
    if not -spec.rank <= axis < spec.rank:
        raise ShapeError(f"axis {axis} is out of range for rank {spec.rank}")
    return axis % spec.rank


def _require_int(spec: TensorSpec, what: str) -> None:
    if not is_int(spec.dtype):
        raise ShapeError(f"{what} must have an integer element type, got {spec}")


def _same_value(op, value) -> list | None:
    """`[value]` if it can stand for `op`'s single result: the types must be identical, or
    the replacement would change the type its users see."""
    return [value] if value.type is op.results[0].type else None


def _replace_with(rewriter: PatternRewriter, op, cls, *operands, **props) -> None:
    """Replace `op` with a new `cls` op that keeps `op`'s result types (the inferred ones
    may be more precise, and users were verified against the old ones)."""
    rewriter.replace_op_with_new(op, cls, *operands, result_types=[r.type for r in op.results],
                                 **cls.py_props_to_attrs(props))


def _producer(value, cls):
    """The op of class `cls` that defines `value`, or None."""
    if isinstance(value, OpResult) and isinstance(value.owner, cls):
        return value.owner
    return None


# ---------------------------------------------------------------------------------------------
# graph.transpose
# ---------------------------------------------------------------------------------------------


def full_perm(perm: tuple, rank: int) -> tuple:
    """The permutation `perm` names: the empty default reverses the axes, as numpy's
    `transpose(x)` does."""
    return tuple(perm) if perm else tuple(range(rank - 1, -1, -1))


class ComposeTransposes(RewritePattern):
    """transpose(transpose(x, p), q) -> transpose(x, p∘q).

    Result axis i of the outer op is axis q[i] of the inner result, which is axis p[q[i]] of
    x, so the composed permutation is r[i] = p[q[i]]. When r is the identity the pair is x
    itself (the fold of the new op finds that).
    """

    root = "graph.transpose"        # TransposeOp is defined below

    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> bool:
        inner = _producer(op.x, TransposeOp)
        if inner is None:
            return False
        rank = inner.x.type.rank
        p = full_perm(inner.props()["perm"], rank)
        q = full_perm(op.props()["perm"], rank)
        _replace_with(rewriter, op, TransposeOp, inner.x, perm=tuple(p[i] for i in q))
        return True


@graph.op
class TransposeOp(GraphOp):
    """Permute the axes: result axis i is axis `perm[i]` of x. The default, empty `perm`
    reverses the axes (a matrix transpose for rank 2), as numpy's `transpose` does.

        %r = graph.transpose %x {perm = array<i64: 1, 2, 0>}
            : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>

    Folds: a transpose with the identity permutation is x.
    """

    name = "graph.transpose"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    perm = IntsProp(default=(), doc="result axis i is axis perm[i] of x; () reverses")
    traits = _TRAITS
    canonicalization_patterns = (ComposeTransposes,)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        perm = full_perm(props["perm"], x.rank)
        if sorted(perm) != list(range(x.rank)):
            raise ShapeError(f"perm {list(perm)} is not a permutation of the {x.rank} axes "
                             f"of {x}")
        return [x.with_shape(x.shape[p] for p in perm)]

    def evaluate(self, x):
        return np.transpose(x, full_perm(self.props()["perm"], x.ndim))

    def fold_identity(self, operands):
        """transpose(x, identity) -> x."""
        if full_perm(self.props()["perm"], self.x.type.rank) == tuple(range(self.x.type.rank)):
            return _same_value(self, self.x)
        return None


# ---------------------------------------------------------------------------------------------
# graph.reshape
# ---------------------------------------------------------------------------------------------


def _factors(dims) -> tuple[int, Counter, int]:
    """An element count as a monomial: (product of the int dims, the symbols with their
    multiplicities, the number of unknown dims)."""
    static, symbols, unknown = 1, Counter(), 0
    for d in dims:
        if d is None:
            unknown += 1
        elif isinstance(d, str):
            symbols[d] += 1
        else:
            static *= d
    return static, symbols, unknown


def _count_str(static: int, symbols: Counter) -> str:
    return "*".join([str(static)] * (static != 1 or not symbols) + sorted(symbols.elements()))


def reshape_shape(x: TensorSpec, shape: tuple) -> tuple:
    """The result shape of reshaping `x` to `shape` (ints, at most one -1, or DSL symbols).

    Algorithm: write both element counts as monomials (static product, symbols, unknowns)
    and cancel the symbols they share.
      1. No -1: if nothing unknown or symbolic is left, the static products must be equal.
      2. A -1 with nothing left: it is in_static / out_static, which must divide exactly.
      3. A -1 where exactly one symbol S is left on the input side (multiplicity 1) and the
         static products are equal: the -1 is S (`[N, 28, 28] -> [-1, 784]` gives N).
      4. Otherwise the -1 is unknown (None).
    """
    holes = sum(1 for d in shape if type(d) is int and d == -1)
    if holes > 1:
        raise ShapeError(f"shape {_fmt(shape)} has more than one -1")
    for d in shape:
        if type(d) is int and d < -1:
            raise ShapeError(f"shape {_fmt(shape)} has a negative size {d}")
    in_static, in_syms, in_unknown = _factors(x.shape)
    out_static, out_syms, out_unknown = _factors(d for d in shape if d != -1)
    common = in_syms & out_syms
    in_rest, out_rest = in_syms - common, out_syms - common
    exact = not (in_unknown or out_unknown or in_rest or out_rest)
    if not holes:
        if exact and in_static != out_static:
            raise ShapeError(f"cannot reshape {x} into {_fmt(shape)}: "
                             f"{_count_str(in_static, in_syms)} elements, not "
                             f"{_count_str(out_static, out_syms)}")
        return tuple(shape)
    if out_static == 0:
        raise ShapeError(f"cannot infer the -1 of {_fmt(shape)}: the other sizes multiply "
                         "to 0")
    fill = None
    if exact:
        if in_static % out_static:
            raise ShapeError(f"cannot reshape {x} into {_fmt(shape)}: "
                             f"{_count_str(in_static, in_syms)} elements are not a multiple "
                             f"of {_count_str(out_static, out_syms)}")
        fill = in_static // out_static
    elif not (in_unknown or out_unknown or out_rest) and sum(in_rest.values()) == 1 \
            and in_static == out_static:
        (fill,) = in_rest
    return tuple(fill if type(d) is int and d == -1 else d for d in shape)


class ComposeReshapes(RewritePattern):
    """reshape(reshape(x, s1), s2) -> reshape(x, s2).

    A reshape keeps the row-major order of the elements and only reinterprets their
    grouping, so the intermediate grouping s1 is irrelevant; the element counts of x and the
    inner result are equal, so a -1 in s2 resolves to the same size either way.
    """

    root = "graph.reshape"          # ReshapeOp is defined below

    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> bool:
        inner = _producer(op.x, ReshapeOp)
        if inner is None:
            return False
        _replace_with(rewriter, op, ReshapeOp, inner.x, shape=op.props()["shape"])
        return True


@graph.op
class ReshapeOp(GraphOp):
    """The same elements in row-major order, regrouped into `shape`; at most one entry is
    -1 and takes the size that makes the element counts equal.

        %r = graph.reshape %x {shape = array<i64: -1, 784>}
            : (tensor<?x28x28xf32>) -> tensor<?x784xf32>

    Folds: a reshape to x's own static type is x.
    """

    name = "graph.reshape"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    shape = IntsProp(doc="the new sizes; one may be -1 (inferred from the element count)")
    traits = _TRAITS
    canonicalization_patterns = (ComposeReshapes,)

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        return [x.with_shape(reshape_shape(x, props["shape"]))]

    def evaluate(self, x):
        return np.reshape(x, self.props()["shape"])

    def fold_identity(self, operands):
        """reshape(x, shape of x) -> x, when x's type is static (a dynamic one might not
        match the sizes at run time, which the reshape would have reported)."""
        if self.x.type.has_static_shape:
            return _same_value(self, self.x)
        return None


# ---------------------------------------------------------------------------------------------
# graph.dim
# ---------------------------------------------------------------------------------------------


@graph.op
class DimOp(GraphOp):
    """The run-time size of one axis of x, as a 0-d i64 tensor (what a `-1` entry of
    `graph.broadcast_to` takes).

        %n = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>

    Folds: the size of a static axis is a constant.
    """

    name = "graph.dim"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(doc="the axis measured; negative counts from the end")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        _axis(props["axis"], x)
        return [TensorSpec((), I64)]

    def evaluate(self, x):
        return np.asarray(x.shape[self.props()["axis"]], dtype=np.int64)

    def fold_identity(self, operands):
        """dim(x, axis) -> the constant size, when that axis is static."""
        t = self.x.type
        axis = self.props()["axis"]
        if not isinstance(t, RankedTensorType) or not -t.rank <= axis < t.rank:
            return None                 # invalid IR: the verifier reports it
        size = t.shape[axis]
        if size is None:
            return None
        return [DenseElementsAttr(RankedTensorType((), I64), np.int64(size))]


# ---------------------------------------------------------------------------------------------
# graph.broadcast_to
# ---------------------------------------------------------------------------------------------


def broadcast_to_shape(x: TensorSpec, shape: tuple, n_sizes: int) -> tuple:
    """The result shape of broadcasting `x` to `shape`, numpy's `broadcast_to` rule: x is
    aligned at the right, and each of its axes must be 1 or equal the target size.

    A -1 entry is dynamic (its size is the next `sizes` operand): the result takes x's size
    there if x's axis is not 1, and is unknown otherwise. A DSL symbol entry stays a symbol;
    its `sizes` operand may be passed or not (the DSL's spec already names the size).
    """
    holes = sum(1 for d in shape if type(d) is int and d == -1)
    symbols = sum(1 for d in shape if isinstance(d, str))
    if n_sizes not in (holes, holes + symbols):
        raise ShapeError(f"shape {_fmt(shape)} has {holes} dynamic (-1) entries, but "
                         f"{n_sizes} size operands were given")
    for d in shape:
        if type(d) is int and d < -1:
            raise ShapeError(f"shape {_fmt(shape)} has a negative size {d}")
    if x.rank > len(shape):
        raise ShapeError(f"cannot broadcast {x} to {_fmt(shape)}: the target has fewer axes")
    out = [None if type(d) is int and d == -1 else d for d in shape]
    for i, d in enumerate(x.shape, len(shape) - x.rank):
        if d == 1 or d is None:         # stretches (an unknown size may be 1 at run time)
            continue
        try:
            out[i] = unify_dim(out[i], d)
        except ValueError:
            raise ShapeError(f"cannot broadcast {x} to {_fmt(shape)}") from None
    return tuple(out)


@graph.op
class BroadcastToOp(GraphOp):
    """x repeated along its size-1 (or missing leading) axes to `shape`, numpy's
    `broadcast_to`. Each -1 entry of `shape` is a size known only at run time, read from the
    next `sizes` operand (a 0-d integer tensor, such as a `graph.dim`).

        %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 10>}
            : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>

    Folds: a broadcast to x's own static type is x; a broadcast of a splat constant is a
    splat constant of the (static) result type.
    """

    name = "graph.broadcast_to"
    x = Operand(AnyTensor)
    sizes = VarOperand(AnyTensor, doc="one 0-d integer tensor per -1 entry of `shape`")
    result = Result(AnyTensor)
    shape = IntsProp(doc="the target sizes; -1 = the next `sizes` operand")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        x, *sizes = args
        for s in sizes:
            if s.rank != 0 or not is_int(s.dtype):
                raise ShapeError(f"size operands must be 0-d integer tensors, got {s}")
        return [x.with_shape(broadcast_to_shape(x, props["shape"], len(sizes)))]

    def _target(self, sizes) -> tuple:
        it = iter(sizes)
        return tuple(int(next(it)) if d == -1 else d for d in self.props()["shape"])

    def evaluate(self, x, *sizes):
        # A copy: the view numpy returns has zero strides and is read-only.
        return np.array(np.broadcast_to(x, self._target(sizes)))

    def _poison(self, x, *sizes) -> bool:
        """Folding declines a broadcast that would fail at run time (bad constant sizes)."""
        try:
            np.broadcast_shapes(x.shape, self._target(sizes))
        except ValueError:
            return True
        return any(int(s) < 0 for s in sizes)

    def fold_identity(self, operands):
        """broadcast_to(x, type of x) -> x (static types only); broadcast_to(splat c) ->
        splat c of the result type, however large (a splat is stored as one element)."""
        t = self.results[0].type
        if not t.has_static_shape:
            return None
        c = operands[0]
        if isinstance(c, DenseElementsAttr) and c.is_splat:
            return [DenseElementsAttr(t, c.splat_value())]
        return _same_value(self, self.x)


# ---------------------------------------------------------------------------------------------
# graph.concat and graph.split
# ---------------------------------------------------------------------------------------------


def _sum_dims(dims) -> object:
    """The sum of sizes along the concat axis: an int when all are; the one non-zero size
    when the rest are 0; else unknown (a symbolic sum such as N + 3 is not a dim)."""
    nonzero = [d for d in dims if d != 0]
    if all(type(d) is int for d in nonzero):
        return sum(nonzero)
    return nonzero[0] if len(nonzero) == 1 else None


@graph.op
class ConcatOp(GraphOp):
    """The inputs joined along `axis`; every other axis must agree.

        %r = graph.concat %a, %b {axis = 1 : i64}
            : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>

    Folds: the concat of a single input is that input.
    """

    name = "graph.concat"
    inputs = VarOperand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(doc="the axis joined along; negative counts from the end")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        if not args:
            raise ShapeError("concat needs at least one input")
        dtype = same_dtype(*args)
        first = args[0]
        for s in args[1:]:
            if s.rank != first.rank:
                raise ShapeError(f"cannot concatenate {first} and {s}: ranks differ")
        axis = _axis(props["axis"], first)
        out = list(first.shape)
        for s in args[1:]:
            for i, d in enumerate(s.shape):
                if i == axis:
                    continue
                try:
                    out[i] = unify_dim(out[i], d)
                except ValueError:
                    raise ShapeError(f"cannot concatenate {first} and {s} along axis {axis}: "
                                     f"dimension {i} differs") from None
        out[axis] = _sum_dims([s.shape[axis] for s in args])
        return [TensorSpec(tuple(out), dtype)]

    def evaluate(self, *xs):
        return np.concatenate(xs, axis=self.props()["axis"])

    def fold_identity(self, operands):
        """concat(x) -> x."""
        inputs = self.inputs
        return _same_value(self, inputs[0]) if len(inputs) == 1 else None


@graph.op
class SplitOp(GraphOp):
    """x cut along `axis` into `sections` equal parts (numpy's `split` with an int); the
    axis size must be divisible by `sections`.

        %r:2 = graph.split %x {axis = 1 : i64, sections = 2 : i64}
            : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)

    Folds: a split into one section is x.
    """

    name = "graph.split"
    x = Operand(AnyTensor)
    outs = VarResult(AnyTensor, doc="the `sections` parts, in order along the axis")
    axis = IntProp(default=0, doc="the axis cut; negative counts from the end")
    sections = IntProp(doc="how many equal parts")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        n = props["sections"]
        if n < 1:
            raise ShapeError(f"sections must be at least 1, got {n}")
        axis = _axis(props["axis"], x)
        d = x.shape[axis]
        if type(d) is int:
            if d % n:
                raise ShapeError(f"cannot split {x} into {n} equal sections along axis "
                                 f"{axis}: {d} is not divisible by {n}")
            part = d // n
        else:
            part = d if n == 1 else None
        shape = x.shape[:axis] + (part,) + x.shape[axis + 1:]
        return [x.with_shape(shape)] * n

    def evaluate(self, x):
        parts = np.split(x, self.props()["sections"], axis=self.props()["axis"])
        # One result is returned bare: the interpreter and folder wrap single results.
        return parts[0] if len(parts) == 1 else parts

    def fold_identity(self, operands):
        """split(x, 1 section) -> x."""
        return _same_value(self, self.x) if len(self.results) == 1 else None


# ---------------------------------------------------------------------------------------------
# graph.slice
# ---------------------------------------------------------------------------------------------


def _covers_all(start: int, stop: int, step: int) -> int:
    """+1 if the slice keeps a dynamic axis whole in order, -1 if whole in reverse, else 0.

    Only infinite-looking bounds (|bound| >= END) and 0 / -1 are size-independent: `0:5`
    keeps min(5, n) elements, which is unknown when n is."""
    if step == 1 and (start == 0 or start <= -END) and stop >= END:
        return 1
    if step == -1 and (start == -1 or start >= END) and stop <= -END:
        return -1
    return 0


@graph.op
class SliceOp(GraphOp):
    """`x[starts[0]:stops[0]:steps[0], ...]` with Python's rules: negative bounds count from
    the end, bounds are clamped to the axis, a negative step walks backwards. A stop of
    9223372036854775807 (the largest i64) means "to the end".

        %r = graph.slice %x {starts = array<i64: 0, 1>, stops = array<i64: 9223372036854775807, 5>,
                             steps = array<i64: 1, 2>} : (tensor<?x6xf32>) -> tensor<?x2xf32>

    Folds: a slice that keeps every element in order is x.
    """

    name = "graph.slice"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    starts = IntsProp(doc="first index per axis")
    stops = IntsProp(doc="end index (exclusive) per axis")
    steps = IntsProp(doc="stride per axis; nonzero, negative walks backwards")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        starts, stops, steps = props["starts"], props["stops"], props["steps"]
        for what, v in (("starts", starts), ("stops", stops), ("steps", steps)):
            if len(v) != x.rank:
                raise ShapeError(f"{what} has {len(v)} entries, but {x} has rank {x.rank}")
        out = []
        for i, (a, b, c, d) in enumerate(zip(starts, stops, steps, x.shape)):
            if c == 0:
                raise ShapeError(f"slice step of axis {i} is 0")
            if type(d) is int:
                out.append(len(range(*slice(a, b, c).indices(d))))
            else:
                out.append(d if _covers_all(a, b, c) else None)
        return [x.with_shape(out)]

    def evaluate(self, x):
        p = self.props()
        index = tuple(slice(a, b, c) for a, b, c in zip(p["starts"], p["stops"], p["steps"]))
        return np.array(x[index])

    def fold_identity(self, operands):
        """slice(x) -> x when every axis keeps all its elements in order."""
        p = self.props()
        for a, b, c, d in zip(p["starts"], p["stops"], p["steps"], self.x.type.shape):
            whole = range(*slice(a, b, c).indices(d)) == range(d) if d is not None \
                else _covers_all(a, b, c) == 1
            if not whole:
                return None
        return _same_value(self, self.x)


# ---------------------------------------------------------------------------------------------
# graph.one_hot and graph.gather
# ---------------------------------------------------------------------------------------------


@graph.op
class OneHotOp(GraphOp):
    """f32 one-hot vectors: `r[..., k] = 1.0 if indices[...] == k else 0.0` for k in
    [0, depth). An index outside [0, depth) gives a row of zeros (TensorFlow's rule), not an
    error: labels such as -1 for "ignore" then contribute nothing.

        %r = graph.one_hot %labels {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
    """

    name = "graph.one_hot"
    indices = Operand(AnyTensor)
    result = Result(AnyTensor)
    depth = IntProp(doc="the number of classes (length of the new last axis)")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (indices,) = args
        _require_int(indices, "one_hot indices")
        depth = props["depth"]
        if depth < 0:
            raise ShapeError(f"depth must be non-negative, got {depth}")
        return [TensorSpec(indices.shape + (depth,), F32)]

    def evaluate(self, indices):
        depth = self.props()["depth"]
        return (indices[..., None] == np.arange(depth)).astype(np.float32)


@graph.op
class GatherOp(GraphOp):
    """Rows of `table` picked by `indices` (an embedding lookup): `table[indices]`, of shape
    `indices.shape + table.shape[1:]`. Negative indices count from the end, as in numpy; an
    index out of range is a run-time error.

        %r = graph.gather %table, %ids
            : (tensor<1000x64xf32>, tensor<?x16xi32>) -> tensor<?x16x64xf32>
    """

    name = "graph.gather"
    table = Operand(AnyTensor)
    indices = Operand(AnyTensor)
    result = Result(AnyTensor)
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        table, indices = args
        if table.rank < 1:
            raise ShapeError(f"needs a table of rank at least 1, got {table}")
        _require_int(indices, "gather indices")
        return [TensorSpec(indices.shape + table.shape[1:], table.dtype)]

    def evaluate(self, table, indices):
        return np.asarray(table[indices], dtype=table.dtype)

    def _poison(self, table, indices) -> bool:
        """Folding declines out-of-range indices: the error belongs to run time."""
        n = table.shape[0]
        return bool(np.any((indices < -n) | (indices >= n)))

