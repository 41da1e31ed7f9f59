"""graph-fold-batchnorm: an inference-mode batchnorm after a convolution folded into the
convolution's weight and a per-channel shift.

Why. Batchnorm with running statistics is an affine map per output channel c,
`y = (z - mean) * s + beta` with `s = gamma / sqrt(var + eps)`, and the convolution is linear
in its weight, so for `z = conv2d(x, w) + bias`:

    y = conv2d(x, w * s[o]) + ((bias - mean) * s + beta)[c]

(w's output channel o is the result's channel c). The whole normalization becomes O x C x KH x
KW multiplies on the weight and one bias add, which a later fusion puts into the
convolution's epilogue, instead of a full pass over the activation. The weight and shift math
is written as graph ops (`div`, `sqrt`, `mul`, `sub`, `add`, `reshape`): with constant
statistics canonicalize folds it to constants; with variable reads it costs a few vector ops
per call, nothing next to the convolution.

When. The statistics, gamma and beta must not depend on the function's inputs: each is
computed from constants and `graph.read`s alone, through pure ops. The convolution's result
(and the bias add's) must have no other user, or the unnormalized value would still be
needed. An optional bias add between them must add a per-channel tensor (size 1 on every
axis but the channel one, such as `[C, 1, 1]`). The fold is for inference only, so it is
skipped in a function that assigns one of the variables it reads (the statistics, gamma,
beta, the weight or the bias: a training step updates them) or that still holds a derivative
request (`autodiff.grad` / `autodiff.jvp`: the gradient would flow through the folded form,
with respect to the same reads but by different arithmetic). After `autodiff` has expanded a
training step, the backward graph also uses the convolution's result, which the single-user
rule already refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irkit.attributes import numpy_dtype
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.opdef import IsolatedFromAbove, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value, is_pure
from irkit.types import RankedTensorType
from irkit.dialects.autodiff import GradOp, JvpOp
from irkit.dialects.graph import (
    AddOp, AssignOp, BatchNormOp, ConstantOp, Conv2dOp, DivOp, MulOp, ReadOp, ReshapeOp, SqrtOp,
    SubOp,
)


@dataclass(frozen=True)
class _Sources:
    """What a value is computed from: the variables it reads, and whether constants and
    reads are all it depends on (no argument, no op with effects or regions)."""

    reads: frozenset
    parameter: bool


def _sources(v: Value, memo: dict) -> _Sources:
    """`_Sources` of `v`, walking its pure producers back to reads, constants and the rest."""
    hit = memo.get(v)
    if hit is not None:
        return hit
    op = v.defining_op()
    if op is None:
        out = _Sources(frozenset(), False)
    elif isinstance(op, ReadOp):
        out = _Sources(frozenset({op.properties["variable"].root}), True)
    elif constant_value(v) is not None:
        out = _Sources(frozenset(), True)
    elif is_pure(op) and not op.regions:
        parts = [_sources(o, memo) for o in op.operands]
        out = _Sources(frozenset().union(*(p.reads for p in parts)),
                       all(p.parameter for p in parts))
    else:
        out = _Sources(frozenset(), False)
    memo[v] = out
    return out


@dataclass(frozen=True)
class _Scope:
    """What the function around a batchnorm does: the variables it assigns, and whether it
    asks for derivatives."""

    assigned: frozenset
    differentiates: bool

    @staticmethod
    def of(fn: Operation) -> "_Scope":
        ops = list(fn.walk())
        return _Scope(frozenset(op.properties["variable"].root for op in ops
                                if isinstance(op, AssignOp)),
                      any(isinstance(op, (GradOp, JvpOp)) for op in ops))


def _per_channel(bias: Value, like: RankedTensorType) -> bool:
    """Whether adding `bias` to an NCHW tensor of type `like` adds one value per channel:
    numpy's right-aligned broadcasting meets size 1 on every axis but the channel axis."""
    t = bias.type
    if not isinstance(t, RankedTensorType) or t.rank > like.rank:
        return False
    offset = like.rank - t.rank
    return all(d == 1 for axis, d in enumerate(t.shape, offset) if axis != 1)


@dataclass(frozen=True)
class _Match:
    """batchnorm(conv [+ bias]): the ops to replace, the bias (None without one)."""

    bn: BatchNormOp
    conv: Conv2dOp
    add: AddOp | None
    bias: Value | None


def _match(bn: BatchNormOp) -> _Match | None:
    """The convolution (and bias add) under `bn`, each with `bn`'s chain as its one user."""
    z = bn.input
    if not z.has_one_use():
        return None
    conv = z.defining_op(Conv2dOp)
    if conv is not None:
        return _Match(bn, conv, None, None)
    add = z.defining_op(AddOp)
    if add is None:
        return None
    for side, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        conv = side.defining_op(Conv2dOp)
        if conv is not None and side.has_one_use() and _per_channel(bias, side.type):
            return _Match(bn, conv, add, bias)
    return None


@register_pass
class GraphFoldBatchnorm(Pass):
    """Fold `batchnorm(conv2d(x, w) [+ bias], mean, var, gamma, beta)` into the convolution.

    Algorithm:
      1. For each `graph.batchnorm` (in walk order), match its input: a `graph.conv2d`, or a
         `graph.add` of a conv2d and a per-channel bias, each result used only by the next
         op of the chain.
      2. Refuse unless mean, var, gamma and beta are computed from constants and
         `graph.read`s alone, and the function around it (the nearest op isolated from
         above) neither assigns a variable that the statistics, the weight or the bias read
         nor holds an `autodiff.grad` / `autodiff.jvp`.
      3. Before the batchnorm build, per output channel, s = gamma / sqrt(var + eps) and
         shift = (bias - mean) * s + beta (beta - mean * s without a bias); then
         `conv2d(x, w * reshape(s, [-1, 1, 1, 1]))` with the convolution's stride, padding
         and result type, plus `reshape(shift, [-1, 1, 1])`, typed as the batchnorm.
      4. Replace the batchnorm's result and erase the batchnorm, the bias add and the old
         convolution.

    `self.folded` counts the batchnorms folded.
    """

    name = "graph-fold-batchnorm"

    def run(self, op: Operation) -> None:
        self.folded = 0
        memo: dict = {}
        scopes: dict = {}
        for bn in [o for o in op.walk() if isinstance(o, BatchNormOp)]:
            m = _match(bn)
            if m is not None and _allowed(m, _scope(bn, scopes), memo):
                _fold(m)
                self.folded += 1


def _scope(op: Operation, cache: dict) -> _Scope:
    """The `_Scope` of the nearest ancestor of `op` isolated from above (its function)."""
    fn = next((a for a in op.ancestors() if has_trait(a, IsolatedFromAbove)), None)
    if fn not in cache:
        cache[fn] = _Scope.of(fn) if fn is not None else _Scope(frozenset(), False)
    return cache[fn]


def _allowed(m: _Match, scope: _Scope, memo: dict) -> bool:
    """Step 2 of the algorithm."""
    if scope.differentiates:
        return False
    stats = [_sources(v, memo) for v in (m.bn.mean, m.bn.var, m.bn.gamma, m.bn.beta)]
    if not all(s.parameter for s in stats):
        return False
    others = [_sources(v, memo) for v in (m.conv.weight, m.bias) if v is not None]
    read = frozenset().union(*(s.reads for s in stats + others))
    return not read & scope.assigned


def _fold(m: _Match) -> None:
    """Steps 3 and 4 of the algorithm for one match."""
    bn, conv = m.bn, m.conv
    b = Builder.before(bn)

    def op(cls, *operands, type=None, **props):
        """A graph op built before the batchnorm: its result, typed `type` if given."""
        types = None if type is None else [type]
        return b.insert(cls.build(*operands, result_types=types,
                                  **cls.py_props_to_attrs(props))).results[0]

    element = bn.input.type.element
    eps = b.insert(ConstantOp.create(np.array(bn.props()["epsilon"], numpy_dtype(element)),
                                     element)).results[0]
    s = op(DivOp, bn.gamma, op(SqrtOp, op(AddOp, bn.var, eps)))
    w = conv.weight
    weight = op(MulOp, w, op(ReshapeOp, s, shape=[-1, 1, 1, 1]), type=w.type)
    y = op(Conv2dOp, conv.input, weight, type=conv.results[0].type, **conv.props())
    if m.bias is None:
        shift = op(SubOp, bn.beta, op(MulOp, bn.mean, s))
    else:
        bias = op(ReshapeOp, m.bias, shape=[-1])
        shift = op(AddOp, op(MulOp, op(SubOp, bias, bn.mean), s), bn.beta)
    out = op(AddOp, y, op(ReshapeOp, shift, shape=[-1, 1, 1]), type=bn.results[0].type)
    bn.replace_all_uses_with([out])
    bn.erase()
    if m.add is not None:
        m.add.erase()
    conv.erase()
