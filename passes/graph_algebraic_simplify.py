"""graph-algebraic-simplify: algebraic rewrites of graph programs that canonicalize does not do,
because they are not exact in IEEE arithmetic (they round differently) or because they are
choices of a better form rather than a canonical one (where a transpose or a scalar factor
should sit).

Each rewrite is a small pattern class whose docstring states the identity and when it holds
in floating point. Three kinds:

- **More accurate forms.** `log(softmax(x))` -> `log_softmax(x)` (the pattern is
  `LogOfSoftmax`, declared with softmax in dialects/graph/loss.py and reused here);
  `exp(log(x))` -> x where x is known to be >= +0 or NaN; `log(exp(x))` -> x where x is known
  to be small enough that exp neither overflows nor underflows (or with `fast-math`).
- **Scalar factors hoisted** out of reductions and matmuls: `sum(c * x)` -> `c * sum(x)`,
  `(c * a) @ b` -> `c * (a @ b)`, for c a 0-d tensor or a splat constant: the multiply runs
  over the (smaller) result instead of the big operand. Rounding differs (one product of
  the sum instead of a sum of products), and so can overflow near the largest float: a
  results-within-tolerance rewrite, as reassociation is; negation hoists exactly.
- **Moving layout ops toward their consumers**: an elementwise op of transposes (reshapes)
  is the transpose (reshape) of the elementwise op of their operands; a transposed matmul is
  the matmul of the transposed operands in the other order, so that a transpose of an
  operand cancels. Transposes then end next to the matmuls that read them, where the linalg
  level folds them into the matmul's indexing (graph.matmul has no transpose flags).
  Transpose and reshape chains compose (`ComposeTransposes`, `ComposeReshapes`, canonical
  patterns of dialects/graph/shape.py, reused here so the fixpoint includes them). All exact.

One exact clean-up the backward graphs need: an explicit `graph.broadcast_to` operand of an
elementwise op is dropped where another operand already has the broadcast's run-time shape
(the mean's cotangent `broadcast_to(1/n, dims of x) * x` becomes `(1/n) * x`).

The rewrites declared here fire only where they add no work: the value they look through
has no other user (else that op would stay and the rewrite add one).
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import DenseElementsAttr
from irkit.ir import Operation, Value
from irkit.opdef import Elementwise, Pure, registered_ops
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import PatternRewriter, RewritePattern, apply_patterns_greedily, constant_value
from irkit.types import RankedTensorType
from irkit.dialects.graph import (
    BroadcastToOp, ComposeReshapes, ComposeTransposes, ConstantOp, DimOp, GraphOp, LogOfSoftmax,
    MatmulOp, ReduceMeanOp, ReduceSumOp, ReshapeOp, TransposeOp, full_perm, keeps_shape,
    may_be_dead,
)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _only_used_by(v: Value, op: Operation) -> bool:
    """Whether every use of `v` is in `op` (so v's producer dies when op stops using it)."""
    return all(use.owner is op for use in v.uses)


def _is_graph_elementwise(op: Operation) -> bool:
    return isinstance(op, GraphOp) and op.has_trait(Elementwise) and op.has_trait(Pure) \
        and len(op.results) == 1


def _producer_name(v: Value) -> str | None:
    owner = v.defining_op()
    return None if owner is None else owner.name


def _insert(rewriter: PatternRewriter, cls, *operands, location, result_type=None,
            **props) -> Value:
    """A new `cls` op before the rewritten one; its result type inferred unless given."""
    attrs = cls.py_props_to_attrs(props) if hasattr(cls, "py_props_to_attrs") else props
    types = None if result_type is None else [result_type]
    return rewriter.create(cls, *operands, result_types=types, location=location,
                           **attrs).results[0]


def _clone_with(rewriter: PatternRewriter, op: Operation, operands: list[Value],
                result_type) -> Value:
    """`op` (an elementwise op) rebuilt on other operands, with the given result type."""
    new = type(op).build(*operands, result_types=[result_type], location=op.location,
                         attributes=dict(op.attributes) or None, **dict(op.properties))
    return rewriter.insert(new).results[0]


def _broadcasts_as_scalar(v: Value, rank: int) -> bool:
    """A 0-d tensor, or one of static size 1 everywhere and rank <= `rank`: it broadcasts
    the same way whatever the permutation of the other operands' axes."""
    shape = v.type.shape
    return len(shape) <= rank and all(d == 1 for d in shape)


def same_runtime_shape(a: Value, b: Value, depth: int = 6) -> bool:
    """Whether `a` and `b` surely have the same shape at run time: the same value, the same
    static shape, or one made by an elementwise op from an operand whose shape it keeps
    (`x * x`, `x + 1`, `cmp(x, 0)`, `x * (1 - x)`), followed up to `depth` ops back."""
    if a is b:
        return True
    sa, sb = a.type.shape, b.type.shape
    if len(sa) != len(sb):
        return False
    if sa == sb and None not in sa:
        return True
    if depth == 0:
        return False
    for u, v in ((a, b), (b, a)):
        op = u.defining_op()
        if op is None or not _is_graph_elementwise(op):
            continue
        for c in op.operands:
            if c.type.shape == u.type.shape and _stretches_none(op, c, depth - 1) \
                    and same_runtime_shape(c, v, depth - 1):
                return True
    return False


def _stretches_none(op: Operation, c: Value, depth: int) -> bool:
    """Whether no other operand of the elementwise `op` can make its result larger than
    operand `c` at run time: each broadcasts into c (`keeps_shape`) or has c's shape."""
    return all(o is c or keeps_shape(c, c.type, [o]) or same_runtime_shape(o, c, depth)
               for o in op.operands)


# ---------------------------------------------------------------------------------------------
# exp and log
# ---------------------------------------------------------------------------------------------

#: producers whose results are >= +0.0 or NaN, never -0.0 (relu(-0.0) is +0.0, |-0.0| = +0.0;
#: sqrt is not here: sqrt(-0.0) = -0.0)
_NONNEGATIVE = frozenset({"graph.exp", "graph.softmax", "graph.sigmoid", "graph.abs",
                          "graph.relu", "graph.softplus"})

#: producers whose finite results lie in [-1, 1]: e^x neither overflows nor underflows there
_BOUNDED = frozenset({"graph.tanh", "graph.sigmoid", "graph.sin", "graph.cos",
                      "graph.softmax"})


def _nonnegative(v: Value) -> bool:
    """Whether every element of `v` is known to be >= +0.0 or NaN (a -0.0 would not do:
    exp(log(-0.0)) is +0.0)."""
    name = _producer_name(v)
    if name in _NONNEGATIVE:
        return True
    owner = v.defining_op()
    if name == "graph.mul" and owner.lhs is owner.rhs:               # x * x
        return True
    attr = constant_value(v)
    if isinstance(attr, DenseElementsAttr) and attr.array.dtype.kind == "f":
        a = attr.array
        return bool(np.all(np.isnan(a) | (a > 0) | ((a == 0) & ~np.signbit(a))))
    return False


class ExpOfLog(RewritePattern):
    """`exp(log(x)) -> x` where x is known to be >= +0.0 or NaN (`_nonnegative`).

    There the identity holds in meaning: log(+0) = -inf and exp(-inf) = +0, inf and NaN go
    through unchanged, and a positive x comes back up to rounding (the rewrite gives x
    itself, the exact answer, where exp(log(x)) is off by |log x| ulps). It is wrong for
    x < 0 (NaN, not x) and for -0.0 (+0.0), so other x are kept, unless `fast_math` assumes
    that no NaN arises (LLVM's `nnan`).
    """

    root = "graph.exp"

    def __init__(self, fast_math: bool = False) -> None:
        self.fast_math = fast_math

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.operand.defining_op("graph.log")
        if inner is None or inner.operand.type is not op.result.type:
            return False
        if not (self.fast_math or _nonnegative(inner.operand)):
            return False
        rewriter.replace_op(op, [inner.operand])
        return True


class LogOfExp(RewritePattern):
    """`log(exp(x)) -> x` where x is known to lie in [-1, 1] (tanh, sigmoid, sin, cos,
    softmax), or for every x with `fast_math`.

    For finite x the identity fails in floating point where exp overflows (x > 88.7 in f32,
    11.1 in f16: log(inf) = inf) or underflows (x < -103.9 in f32: log(0) = -inf, and below
    -87.3 the subnormal e^x has lost bits), so by default only bounded x are rewritten,
    where the rewrite changes nothing but rounding. inf, -inf and NaN go through unchanged
    either way.
    """

    root = "graph.log"

    def __init__(self, fast_math: bool = False) -> None:
        self.fast_math = fast_math

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        inner = op.operand.defining_op("graph.exp")
        if inner is None or inner.operand.type is not op.result.type:
            return False
        if not (self.fast_math or _producer_name(inner.operand) in _BOUNDED):
            return False
        rewriter.replace_op(op, [inner.operand])
        return True


# ---------------------------------------------------------------------------------------------
# Scalar factors
# ---------------------------------------------------------------------------------------------


def _scalar_of(c: Value):
    """What `c` is as a scalar factor: c itself if 0-d, the value of a splat constant, or
    None."""
    if c.type.rank == 0:
        return c
    attr = constant_value(c)
    if isinstance(attr, DenseElementsAttr) and attr.is_splat:
        return attr.splat_value()
    return None


def _scaled(v: Value, user: Operation):
    """`v` as (kind, x, c) with v = c * x ("mul"), x / c ("div") or -x ("neg", c None),
    where c is a scalar factor (`_scalar_of`), the op making v has no user but `user`, and v
    has x's shape at run time; None otherwise."""
    op = v.defining_op()
    if op is None or not _only_used_by(v, user):
        return None
    if op.name == "graph.neg":
        return "neg", op.operand, None
    if op.name not in ("graph.mul", "graph.div"):
        return None
    sides = [(op.lhs, op.rhs), (op.rhs, op.lhs)] if op.name == "graph.mul" else \
        [(op.lhs, op.rhs)]
    for x, c in sides:
        s = _scalar_of(c)
        if s is not None and keeps_shape(x, v.type, [c]):
            return op.name[len("graph."):], x, s
    return None


def _apply_factor(rewriter: PatternRewriter, kind: str, r: Value, c, location) -> Value:
    """r * c, r / c or -r (c a 0-d value, or a Python number made a 0-d constant)."""
    cls = registered_ops()[f"graph.{kind}"]
    if kind == "neg":
        return _insert(rewriter, cls, r, location=location)
    if not isinstance(c, Value):
        et = r.type.element
        const = ConstantOp.create(np.asarray(c), et, location=location)
        c = rewriter.insert(const).results[0]
    return _insert(rewriter, cls, r, c, location=location, result_type=r.type)


class HoistScalarFromReduction(RewritePattern):
    """`sum(c * x) -> c * sum(x)`, `sum(x / c) -> sum(x) / c`, `sum(-x) -> -sum(x)`, and the
    same for `reduce_mean`, with c a 0-d tensor or a splat constant (the same factor for
    every element): the multiply runs over the reduced result, not over x.

    Negation hoists exactly (rounding is symmetric). A factor does not: the sum of rounded
    products becomes one rounded product of the sum, so results agree to a few ulps of the
    terms' magnitude, and where the sum of x overflows but that of c * x does not (or the
    reverse) one side is inf; 0 * inf in the hoisted form is NaN where the sum of zeros was
    0. NaN and inf elements of x give NaN or inf either way.

    One instance per reduction op (`root`)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        found = _scaled(op.operand, op)
        if found is None:
            return False
        kind, x, c = found
        reduced = _insert(rewriter, type(op), x, location=op.location,
                          result_type=op.result.type, **op.props())
        rewriter.replace_op(op, [_apply_factor(rewriter, kind, reduced, c, op.location)])
        return True


def _not_larger(result: RankedTensorType, operand: RankedTensorType) -> bool:
    """A cost guess: whether `result` has no more elements than `operand`. Unknown sizes
    (`?`) are paired off as if equal (a batch size); one the result has beyond the
    operand's counts as larger."""
    r_dyn = sum(d is None for d in result.shape)
    o_dyn = sum(d is None for d in operand.shape)
    if r_dyn != o_dyn:
        return r_dyn < o_dyn
    r = int(np.prod([d for d in result.shape if d is not None], dtype=np.int64))
    o = int(np.prod([d for d in operand.shape if d is not None], dtype=np.int64))
    return r <= o


class HoistScalarFromMatmul(RewritePattern):
    """`(c * a) @ b -> c * (a @ b)` and `a @ (c * b) -> c * (a @ b)`; also `/ c` and negation
    (c a 0-d tensor or a splat constant): each product term has the factor once, so it can
    scale the result instead of an operand.

    Negation is exact. A factor rounds differently (once on the sum rather than on each
    term), as `HoistScalarFromReduction` says. Applied where the result has no more elements
    than the scaled operand (`_not_larger`), so the multiply gets no bigger; on the result
    it is a matmul epilogue, which fusion applies at the store.
    """

    root = "graph.matmul"

    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> bool:
        for side in (0, 1):
            v = op.operands[side]
            found = _scaled(v, op)
            if found is None or not _not_larger(op.result.type, v.type):
                continue
            kind, x, c = found
            operands = [x, op.rhs] if side == 0 else [op.lhs, x]
            product = _insert(rewriter, MatmulOp, *operands, location=op.location,
                              result_type=op.result.type)
            rewriter.replace_op(op, [_apply_factor(rewriter, kind, product, c, op.location)])
            return True
        return False


# ---------------------------------------------------------------------------------------------
# Transposes and reshapes toward their consumers
# ---------------------------------------------------------------------------------------------


class SinkTranspose(RewritePattern):
    """`f(transpose(a, p), transpose(b, p)) -> transpose(f(a, b), p)` for an elementwise f,
    operands that are not transposes being 0-d or of static size 1 (they broadcast the same
    either way). Broadcasting aligns axes by position, and permuting every operand's axes the
    same way permutes the result's: exact.

    Fires where at least one of the transposes dies with it (so there are no more transposes
    than before), moving transposes down toward the matmuls and other consumers that read
    them. One instance per elementwise op (`root`)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        result = op.results[0].type
        rank = result.rank
        perm, operands, dies = None, [], False
        for v in op.operands:
            t = v.defining_op(TransposeOp)
            if t is None or v.type.rank != rank:
                if not _broadcasts_as_scalar(v, rank):
                    return False
                operands.append(v)
                continue
            p = full_perm(t.props()["perm"], rank)
            if perm is not None and p != perm:
                return False
            perm = p
            operands.append(t.x)
            dies |= _only_used_by(v, op)
        if perm is None or not dies:
            return False
        inner_shape = [0] * rank
        for i, p in enumerate(perm):
            inner_shape[p] = result.shape[i]
        inner = _clone_with(rewriter, op, operands,
                            RankedTensorType(tuple(inner_shape), result.element))
        rewriter.replace_op(op, [_insert(rewriter, TransposeOp, inner, location=op.location,
                                         result_type=result, perm=perm)])
        return True


class SinkReshape(RewritePattern):
    """`f(reshape(a, s), reshape(b, s)) -> reshape(f(a, b), s)` for an elementwise f where a
    and b have one static type (so the reshapes regroup identical shapes the same way and no
    operand broadcasts), other operands being 0-d. Elementwise ops do not care how the
    elements are grouped: exact.

    Fires where at least one reshape dies with it. One instance per elementwise op."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        result = op.results[0].type
        key, operands, dies = None, [], False
        for v in op.operands:
            r = v.defining_op(ReshapeOp)
            if r is None:
                if v.type.rank != 0:
                    return False
                operands.append(v)
                continue
            k = (r.x.type, v.type, r.props()["shape"], tuple(r.sizes))
            if not r.x.type.has_static_shape or v.type.shape != result.shape or \
                    (key is not None and k != key):
                return False
            key = k
            operands.append(r.x)
            dies |= _only_used_by(v, op)
        if key is None or not dies:
            return False
        source, _, shape, sizes = key
        inner = _clone_with(rewriter, op, operands,
                            RankedTensorType(source.shape, result.element))
        rewriter.replace_op(op, [_insert(rewriter, ReshapeOp, inner, list(sizes),
                                         location=op.location, result_type=result,
                                         shape=shape)])
        return True


def _swap_last(rank: int) -> tuple:
    return tuple(range(rank - 2)) + (rank - 1, rank - 2)


class TransposeOfMatmul(RewritePattern):
    """`transpose(a @ b) -> transpose(b) @ transpose(a)`, the last two axes swapped and the
    batch axes kept: (A B)^T = B^T A^T, the same products summed in the same order over k.

    Fires where the product has no other user and an operand is itself a transpose, which
    then cancels (`ComposeTransposes`): the transposes left read matmul operands, where the
    linalg level folds them into the matmul's indexing."""

    root = "graph.transpose"

    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> bool:
        mm = op.x.defining_op(MatmulOp)
        if mm is None or not _only_used_by(op.x, op):
            return False
        a, b = mm.lhs, mm.rhs
        rank = op.x.type.rank
        if a.type.rank < 2 or b.type.rank < 2 or \
                full_perm(op.props()["perm"], rank) != _swap_last(rank):
            return False
        if a.defining_op(TransposeOp) is None and b.defining_op(TransposeOp) is None:
            return False
        loc = op.location
        bt = _insert(rewriter, TransposeOp, b, location=loc, perm=_swap_last(b.type.rank))
        at = _insert(rewriter, TransposeOp, a, location=loc, perm=_swap_last(a.type.rank))
        rewriter.replace_op(op, [_insert(rewriter, MatmulOp, bt, at, location=loc,
                                         result_type=op.result.type)])
        return True


# ---------------------------------------------------------------------------------------------
# Explicit broadcasts
# ---------------------------------------------------------------------------------------------


def _target_is_shape_of(bc: BroadcastToOp, x: Value) -> bool:
    """Whether the run-time target shape of `bc` is surely x's shape: each static entry is
    x's static size there, each -1 entry a `graph.dim` of that axis of a value with x's
    run-time shape."""
    target = bc.props()["shape"]
    xs = x.type.shape
    if len(target) != len(xs):
        return False
    sizes = iter(bc.sizes)
    for i, d in enumerate(target):
        if d != -1:
            if xs[i] != d:
                return False
            continue
        dim = next(sizes).defining_op(DimOp)
        if dim is None:
            return False
        y = dim.x
        if y.type.rank != len(xs) or dim.props()["axis"] % len(xs) != i or \
                not same_runtime_shape(y, x):
            return False
    return True


class DropBroadcastOperand(RewritePattern):
    """`f(broadcast_to(s, shape of x), x) -> f(s, x)` for an elementwise f: the op
    broadcasts its operands itself, and s broadcasts to x's shape (the broadcast_to said
    so), so the result is the same, with no tensor of x's size written for s. Exact.

    Backward graphs are full of these: the cotangent of a mean is `1/n` broadcast to the
    operand's dims (`graph.dim`s read at run time), then multiplied by the local derivative.
    Not where a size may be DEAD (read from a switch's untaken branch): without it the op
    would run, and reach a merge, where it did not. One instance per elementwise op."""

    def __init__(self, root: str) -> None:
        self.root = root

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        operands = op.operands
        for i, v in enumerate(operands):
            bc = v.defining_op(BroadcastToOp)
            if bc is None or any(may_be_dead(size) for size in bc.sizes):
                continue
            if any(j != i and _target_is_shape_of(bc, x) for j, x in enumerate(operands)):
                with rewriter.modify_op_in_place(op):
                    op._operands[i].set(bc.x)
                return True
        return False


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def algebraic_patterns(fast_math: bool = False) -> list[RewritePattern]:
    """The pattern set of the pass (`fast_math`: see `ExpOfLog` and `LogOfExp`)."""
    patterns: list[RewritePattern] = [
        LogOfSoftmax(), ExpOfLog(fast_math), LogOfExp(fast_math),
        HoistScalarFromReduction(ReduceSumOp.name), HoistScalarFromReduction(ReduceMeanOp.name),
        HoistScalarFromMatmul(), TransposeOfMatmul(), ComposeTransposes(), ComposeReshapes(),
    ]
    for name, cls in registered_ops().items():
        if issubclass(cls, GraphOp) and cls.has_trait(Elementwise) and cls.has_trait(Pure):
            patterns += [SinkTranspose(name), SinkReshape(name), DropBroadcastOperand(name)]
    return patterns


@register_pass
class GraphAlgebraicSimplify(Pass):
    """Rewrite graph programs into cheaper or more accurate equivalents: log_softmax for
    log(softmax), exp/log pairs cancelled where the domain allows, scalar factors hoisted out
    of reductions and matmuls, transposes and reshapes moved toward their consumers,
    redundant broadcasts dropped.

    Algorithm:
      1. Collect the patterns (`algebraic_patterns`): one instance per elementwise graph op
         for the sinking and broadcast rewrites, one per reduction for the hoisting.
      2. Run the greedy driver (`irkit.rewrite.apply_patterns_greedily`) over the op's
         regions to a fixpoint, folders included, so that a rewrite that leaves `x * 1` or
         a transpose pair behind is finished in the same run; ops left dead are erased.
      3. Stop after `max-iterations` sweeps that still change the IR (an error).

    Every rewrite keeps the interpreter's results up to float rounding (each pattern's
    docstring says how much); `fast-math` adds the two that may not for large or negative
    inputs (`log(exp(x))`, `exp(log(x))` for any x).
    """

    name = "graph-algebraic-simplify"
    fast_math: bool = False
    max_iterations: int = 10

    def run(self, op: Operation) -> None:
        apply_patterns_greedily(op, algebraic_patterns(self.fast_math),
                                max_iterations=self.max_iterations)

