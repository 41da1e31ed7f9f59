"""Shape graph ops: transpose, reshape, dim, broadcast_to.

These ops move elements around without computing with them, so their whole meaning is in the
shape function: which axes survive, which sizes are known, which combinations are errors.
Each shape function works on `TensorSpec`s whose dims may be ints, None (`?`) or DSL symbols
(`N`), and keeps a symbol wherever the result size provably *is* that symbol (a transposed
axis, the non-concatenated axes, `reshape(f32[N, 28, 28], [-1, 784])`'s `N`). A size the rule
cannot express (`N + 3`, `N // 2`) becomes None rather than a guess.

Canonicalization lives in two places, as in MLIR: an op that simplifies to an existing value
or a constant says so in `fold_identity` (run by the folder), and rewrites that build new ops
are pattern classes listed in `canonicalization_patterns`.

Derivatives: every op here but `dim` is linear in its float operands, so each writes
`transpose` (its vjp; the jvp is the op applied to the tangents). A cotangent must have its
operand's exact type, so rules build their last op with that type declared (`emit_typed`): a type
written more precisely than inferred (`?` for a size the operands know) then stays as the
forward program has it.

Two more families follow these conventions and import this module's helpers:
`slicing.py` (concat, split, slice, insert_slice: pieces cut along axes and put back) and
`indexing.py` (one_hot, gather, scatter_add: elements picked by integer indices).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.ad_rules import Linear
from irkit.sharding_rules import ShardingRule
from irkit.ir import Value
from irkit.opdef import AnyTensor, Operand, Pure, Result, VarOperand
from irkit.rewrite import PatternRewriter, RewritePattern
from irkit.types import I64, RankedTensorType
from irkit.dialects.graph.base import (
    GraphOp, IntProp, IntsProp, ShapeError, TensorSpec, checked_axis, graph, is_int, unify_dim,
)

_TRAITS = (Pure(),)


def format_shape(shape) -> str:
    """A shape list in the DSL's spelling: `[-1, 784]`, `[N, ?]`."""
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def same_value(op, value) -> list | None:
    """`[value]` if it can stand for `op`'s single result: the types must be identical, or
    the replacement would change the type its users see."""
    return [value] if value.type is op.results[0].type else None


def _replace_with(rewriter: PatternRewriter, op, cls, *operands, **props) -> None:
    """Replace `op` with a new `cls` op that keeps `op`'s result types (the inferred ones
    may be more precise, and users were verified against the old ones)."""
    rewriter.replace_op_with_new(op, cls, *operands, result_types=[r.type for r in op.results],
                                 **cls.py_props_to_attrs(props))


def check_size_operands(sizes) -> None:
    for s in sizes:
        if s.rank != 0 or not is_int(s.dtype):
            raise ShapeError(f"size operands must be 0-d integer tensors, got {s}")


def _known_sizes(shape: tuple, sizes) -> tuple[tuple, int]:
    """(`shape` with each -1 entry that the next `sizes` operand fills replaced by what that
    operand is known to hold, the number of -1 entries left). The size a `graph.dim` reads
    is a symbol on symbolic dims and an int on concrete ones, so a run-time size is as
    precise as the dims the shape function is given. Unchanged unless there is one operand
    per -1 entry (the DSL's own call passes symbols in `shape` instead)."""
    holes = sum(1 for d in shape if type(d) is int and d == -1)
    if holes != len(sizes):
        return tuple(shape), holes
    it = iter(sizes)
    out = []
    for d in shape:
        if type(d) is int and d == -1:
            v = next(it).value
            out.append(-1 if v is None else v)
        else:
            out.append(d)
    return tuple(out), sum(1 for d in out if type(d) is int and d == -1)


def emit_typed(ad, cls, *operands, type, **props):
    """A derivative rule's `cls` op with its result type declared as `type` (the operand
    type a cotangent must have), rather than inferred from the cotangent's type; `type` may
    be a list, for the results of a multi-result op."""
    types = type if isinstance(type, list) else [type]
    op = cls.build(*operands, result_types=types, location=ad.location,
                   **cls.py_props_to_attrs(props))
    ad.builder.insert(op)
    return list(op.results) if isinstance(type, list) else op.results[0]


def _reshape_back(ad, ct: Value, x: Value) -> Value:
    """A reshape's cotangent regrouped into x's type. One unknown size of x is a -1,
    inferred from the element count (no `graph.dim`); several are read from x at run time.
    (Equal types are no reason to skip it: `?x?` may be `2x1` in x and `1x2` in `ct`.)"""
    shape = x.type.shape
    holes = [d for d in shape if d is None]
    if len(holes) > 1 or (holes and 0 in shape):
        target, sizes = ad.sizes(x, range(len(shape)))
    else:
        target, sizes = [-1 if d is None else d for d in shape], []
    return emit_typed(ad, ReshapeOp, ct, sizes, type=x.type, shape=target)


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
        inner = op.x.defining_op(TransposeOp)
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

    Folds: a transpose with the identity permutation is x. Transpose (vjp): the cotangent
    transposed by the inverse permutation.
    """

    name = "graph.transpose"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    perm = IntsProp(default=(), doc="result axis i is axis perm[i] of x; () reverses")
    traits = _TRAITS + (Linear(),)
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
            return same_value(self, self.x)
        return None

    def sharding_rule(self) -> ShardingRule:
        """Result axis i is x's axis perm[i]: a split moves with its axis; linear."""
        rank = self.x.type.rank
        perm = full_perm(self.props()["perm"], rank)
        return ShardingRule((tuple(f"d{i}" for i in range(rank)),),
                            (tuple(f"d{p}" for p in perm),), linear=((0,),))

    def transpose(self, ad, cts):
        """Result axis i is x's axis perm[i], so x's axis perm[i] is the cotangent's axis i."""
        perm = full_perm(self.props()["perm"], self.x.type.rank)
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        return [emit_typed(ad, TransposeOp, cts[0], type=self.x.type, perm=inverse)]


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
        raise ShapeError(f"shape {format_shape(shape)} has more than one -1")
    for d in shape:
        if type(d) is int and d < -1:
            raise ShapeError(f"shape {format_shape(shape)} has a negative size {d}")
    in_static, in_syms, in_unknown = _factors(x.shape)
    out_static, out_syms, out_unknown = _factors(d for d in shape if d != -1)
    common = in_syms & out_syms
    in_rest, out_rest = in_syms - common, out_syms - common
    exact = not (in_unknown or out_unknown or in_rest or out_rest)
    if not holes:
        if exact and in_static != out_static:
            raise ShapeError(f"cannot reshape {x} into {format_shape(shape)}: "
                             f"{_count_str(in_static, in_syms)} elements, not "
                             f"{_count_str(out_static, out_syms)}")
        return tuple(shape)
    if out_static == 0:
        raise ShapeError(f"cannot infer the -1 of {format_shape(shape)}: the other sizes multiply "
                         "to 0")
    fill = None
    if exact:
        if in_static % out_static:
            raise ShapeError(f"cannot reshape {x} into {format_shape(shape)}: "
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
        inner = op.x.defining_op(ReshapeOp)
        if inner is None:
            return False
        _replace_with(rewriter, op, ReshapeOp, inner.x, list(op.sizes),
                      shape=op.props()["shape"])
        return True


def sized_reshape_shape(x: TensorSpec, shape: tuple, n_sizes: int) -> tuple:
    """The result shape of reshaping `x` to `shape` whose -1 entries are `n_sizes` run-time
    size operands: unknown there, as given elsewhere. Only a count that can never fit (a
    static x whose element count the static entries do not divide) is an error here."""
    holes = sum(1 for d in shape if d == -1)
    if n_sizes != holes:
        raise ShapeError(f"shape {format_shape(shape)} has {holes} dynamic (-1) entries, but "
                         f"{n_sizes} size operands were given")
    for d in shape:
        if d < -1:
            raise ShapeError(f"shape {format_shape(shape)} has a negative size {d}")
    in_static, in_syms, in_unknown = _factors(x.shape)
    out_static = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if not (in_syms or in_unknown) and out_static and in_static % out_static:
        raise ShapeError(f"cannot reshape {x} into {format_shape(shape)}: {in_static} elements are "
                         f"not a multiple of {out_static}")
    return tuple(None if d == -1 else d for d in shape)


@graph.op
class ReshapeOp(GraphOp):
    """The same elements in row-major order, regrouped into `shape`. Without `sizes`
    operands at most one entry is -1, and takes the size that makes the element counts
    equal; with them, each -1 entry is the next `sizes` operand (a 0-d integer tensor, such
    as a `graph.dim`), so that a regrouping with several run-time sizes can be written (the
    gradient of `[?, ?, 64] -> [-1, 64]` regroups into both unknown sizes of x).

        %r = graph.reshape %x {shape = array<i64: -1, 784>}
            : (tensor<?x28x28xf32>) -> tensor<?x784xf32>
        %s = graph.reshape %y, %b, %t {shape = array<i64: -1, -1, 64>}
            : (tensor<?x64xf32>, tensor<i64>, tensor<i64>) -> tensor<?x?x64xf32>

    Folds: a reshape to x's own static type is x. Transpose (vjp): the cotangent reshaped
    back to x's type, its unknown sizes read from x by `graph.dim` when there are several.
    """

    name = "graph.reshape"
    x = Operand(AnyTensor)
    sizes = VarOperand(AnyTensor, doc="one 0-d integer tensor per -1 entry of `shape`, or none")
    result = Result(AnyTensor)
    shape = IntsProp(doc="the new sizes; -1: the next `sizes` operand, or with no `sizes`, "
                         "the one size inferred from the element count")
    traits = _TRAITS + (Linear(),)
    canonicalization_patterns = (ComposeReshapes,)

    @classmethod
    def infer(cls, args, props):
        x, *sizes = args
        check_size_operands(sizes)
        if not sizes:
            return [x.with_shape(reshape_shape(x, props["shape"]))]
        out = sized_reshape_shape(x, props["shape"], len(sizes))
        known, left = _known_sizes(props["shape"], sizes)
        if left < len(sizes):       # the sizes some operands hold: count elements with them
            out = reshape_shape(x, tuple(None if d == -1 else d for d in known))
        return [x.with_shape(out)]

    def _target(self, sizes) -> tuple:
        if not sizes:
            return self.props()["shape"]
        it = iter(sizes)
        target = tuple(int(next(it)) if d == -1 else d for d in self.props()["shape"])
        if any(d < 0 for d in target):      # numpy would read a run-time -1 as "infer"
            raise ValueError(f"negative size in reshape target {target}")
        return target

    def evaluate(self, x, *sizes):
        return np.reshape(x, self._target(sizes))

    def _poison(self, x, *sizes) -> bool:
        """Folding declines constant sizes the element count does not fit."""
        if not sizes:
            return False                # the shape function checked the count
        try:
            target = self._target(sizes)
        except ValueError:
            return True
        return int(np.prod(target, dtype=np.int64)) != x.size

    def fold_identity(self, operands):
        """reshape(x, shape of x) -> x, when x's type is static (a dynamic one might not
        match the sizes at run time, which the reshape would have reported)."""
        if self.x.type.has_static_shape:
            return same_value(self, self.x)
        return None

    def nondiff_operands(self):
        return tuple(range(1, len(self.operands)))

    def sharding_rule(self) -> ShardingRule | None:
        """The leading axes the reshape keeps (same size in x and the result, and the sizes
        after them with equal static products) are parallel, so `[?, 28, 28] -> [?, 784]`
        keeps a split batch; the regrouped axes are whole. None with `sizes` operands (run-
        time sizes of the global shape). Linear."""
        if self.sizes:
            return None
        a, b = self.x.type.shape, self.results[0].type.shape
        kept = 0
        while kept < min(len(a), len(b)) and a[kept] == b[kept] and \
                None not in a[kept + 1:] + b[kept + 1:] and \
                int(np.prod(a[kept + 1:])) == int(np.prod(b[kept + 1:])):
            kept += 1

        def dims(shape) -> tuple:
            return tuple(f"d{i}" if i < kept else None for i in range(len(shape)))
        return ShardingRule((dims(a),), (dims(b),), linear=((0,),))

    def transpose(self, ad, cts):
        return [_reshape_back(ad, cts[0], self.x)] + [None] * len(self.sizes)


# ---------------------------------------------------------------------------------------------
# graph.dim
# ---------------------------------------------------------------------------------------------


@graph.op
class DimOp(GraphOp):
    """The run-time size of one axis of x, as a 0-d i64 tensor (what a `-1` entry of
    `graph.broadcast_to` or of a sized `graph.reshape` takes).

        %n = graph.dim %x {axis = 0 : i64} : (tensor<?x784xf32>) -> tensor<i64>

    Folds: the size of a static axis is a constant. No derivative flows through x: the
    result is an integer that does not change when x's values do.
    """

    name = "graph.dim"
    x = Operand(AnyTensor)
    result = Result(AnyTensor)
    axis = IntProp(doc="the axis measured; negative counts from the end")
    traits = _TRAITS

    @classmethod
    def infer(cls, args, props):
        (x,) = args
        return [TensorSpec((), I64, x.shape[checked_axis(props["axis"], x)])]

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

    def nondiff_operands(self):
        return (0,)

    def vjp(self, ad, cts):
        return [None]

    def jvp(self, ad, tangents):
        return [None]


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
        raise ShapeError(f"shape {format_shape(shape)} has {holes} dynamic (-1) entries, but "
                         f"{n_sizes} size operands were given")
    for d in shape:
        if type(d) is int and d < -1:
            raise ShapeError(f"shape {format_shape(shape)} has a negative size {d}")
    if x.rank > len(shape):
        raise ShapeError(f"cannot broadcast {x} to {format_shape(shape)}: the target has fewer "
                         "axes")
    out = [None if type(d) is int and d == -1 else d for d in shape]
    for i, d in enumerate(x.shape, len(shape) - x.rank):
        if d == 1 or d is None:         # stretches (an unknown size may be 1 at run time)
            continue
        try:
            out[i] = unify_dim(out[i], d)
        except ValueError:
            raise ShapeError(f"cannot broadcast {x} to {format_shape(shape)}") from None
    return tuple(out)


@graph.op
class BroadcastToOp(GraphOp):
    """x repeated along its size-1 (or missing leading) axes to `shape`, numpy's
    `broadcast_to`. Each -1 entry of `shape` is a size known only at run time, read from the
    next `sizes` operand (a 0-d integer tensor, such as a `graph.dim`).

        %r = graph.broadcast_to %x, %n {shape = array<i64: -1, 10>}
            : (tensor<10xf32>, tensor<i64>) -> tensor<?x10xf32>

    Folds: a broadcast to x's own static type is x; a broadcast of a splat constant is a
    splat constant of the (static) result type. Transpose (vjp): the cotangent summed over
    the axes x was repeated along (`ADBuilder.unbroadcast`).
    """

    name = "graph.broadcast_to"
    x = Operand(AnyTensor)
    sizes = VarOperand(AnyTensor, doc="one 0-d integer tensor per -1 entry of `shape`")
    result = Result(AnyTensor)
    shape = IntsProp(doc="the target sizes; -1 = the next `sizes` operand")
    traits = _TRAITS + (Linear(),)

    @classmethod
    def infer(cls, args, props):
        x, *sizes = args
        check_size_operands(sizes)
        out = broadcast_to_shape(x, props["shape"], len(sizes))
        known, left = _known_sizes(props["shape"], sizes)
        if left < len(sizes):       # the sizes some operands hold, checked against x's
            out = broadcast_to_shape(x, known, left)
        return [x.with_shape(out)]

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
        return same_value(self, self.x)

    def nondiff_operands(self):
        return tuple(range(1, len(self.operands)))

    def sharding_rule(self) -> ShardingRule | None:
        """Result axes parallel, shared by x's axes that are not repeated; None with `sizes`
        operands (run-time sizes of the global shape). Linear."""
        if self.sizes:
            return None
        out = self.results[0].type.shape
        rank, t = len(out), self.x.type
        x = tuple(None if d == 1 and out[i] != 1 else f"d{i}"
                  for i, d in enumerate(t.shape, rank - t.rank))
        return ShardingRule((x,), (tuple(f"d{i}" for i in range(rank)),), linear=((0,),))

    def transpose(self, ad, cts):
        """Sizes compare statically, as `unbroadcast` does: an axis of unknown size in x is
        taken to have the target's size, not to be a 1 that was repeated."""
        return [ad.unbroadcast(cts[0], self.x)] + [None] * len(self.sizes)
