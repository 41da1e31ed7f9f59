"""graph-merge-matmuls: matmuls that share their left operand become one matmul on their right
operands concatenated along N, followed by a split (the lectures' QKV merging).

Why. An attention block computes `q = x @ wq`, `k = x @ wk`, `v = x @ wv`: three kernels that
each read all of x. One matmul `x @ [wq | wk | wv]` does the same multiply-adds in one larger
GEMM (one kernel, x read once, a wider N for the tiles to fill), and the split that hands each
user its columns costs nothing: it lowers to slices, views once bufferized. Run before
`autodiff`, it merges the backward graph too: the split's transpose is the concat of the
three cotangents, so `d_x = d_cat @ W_cat^T` is one matmul and `d_W_cat = x^T @ d_cat`
another, which the concat's transpose slices back into `d_wq`, `d_wk`, `d_wv` — the
gradients a training step asked for, with respect to the same `graph.read`s as before.

Weights that are variables. The concat is built from the variables' `graph.read`s at every
call: a copy of K x N_total weight elements per call (and per training step, which then
assigns the separate variables as before), against the matmul's M x K x N_total
multiply-adds, so its cost is 1/M of the matmul's work. Storing the variables concatenated
would avoid it but changes the model's variables (their names, shapes, checkpoints and the
optimizer state); keeping them separate keeps every caller of the model unchanged. Constant
weights are concatenated once, by canonicalize's folding.

When it is a win — the rule. Merging saves (n - 1) reads of x and n - 1 kernels; it costs the
concat. The pass merges a group of n >= 2 matmuls when the concat is free (every right
operand is a constant) or when the merged matmul does at least `min-rows` multiply-adds per
element the concat copies: M x K x N_total >= min-rows x K x N_total, that is M >= `min-rows`,
where M is the number of rows of x (the product of all its dims but the last). A dim known
only at run time (`?`, a batch or sequence length) counts as large: that is the case the
merge is for.

Matmuls merge when they share the left operand x (the same value) and their right operands
are 2-D matrices with the same K dim (the same int, or both `?`), the same element type and a
static N. With a batched x (`[B, T, K] @ [K, N]`) the batch structure is x's own, so it is
the same for all. Batched or vector right operands are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import constant_value
from irkit.types import I64, RankedTensorType
from irkit.dialects.graph import ConcatOp, ConstantOp, MatmulOp, SplitOp


@dataclass
class _Group:
    """Matmuls that may become one: they share x and their right operands' K dim and element
    type; `anchor`, the first in the block, is where the merged matmul goes."""

    anchor: MatmulOp
    matmuls: list = field(default_factory=list)


def _key(op: Operation) -> tuple | None:
    """What matmuls must share to merge: (x, K, element type); None for a matmul that cannot
    take part (a right operand that is not a matrix of static N)."""
    if not isinstance(op, MatmulOp):
        return None
    w = op.rhs.type
    if not isinstance(w, RankedTensorType) or w.rank != 2 or w.shape[1] is None:
        return None
    return op.lhs, w.shape[0], w.element


def _defined_later(v: Value, anchor: Operation) -> bool:
    """Whether `v` is defined after `anchor` in its block. Otherwise it is available there:
    defined outside anchor's block (so it dominates the whole block, as the matmul that uses
    it is in that block) or earlier in it."""
    op = v.defining_op()
    return op is not None and op.parent is anchor.parent and anchor.is_before_in_block(op)


def _available(v: Value, anchor: Operation) -> bool:
    """Whether `v` is available at `anchor`, or is a constant that can move up to it."""
    return not _defined_later(v, anchor) or constant_value(v) is not None


def _groups(block: Block) -> list[_Group]:
    """The block's matmuls grouped by `_key`, in block order. A matmul joins the first group
    of its key whose anchor its right operand is available at (a constant defined later
    moves up); else it starts a new one (a weight computed after the first matmul, say from
    its result, cannot move up to it)."""
    by_key: dict[tuple, list[_Group]] = {}
    out: list[_Group] = []
    for op in block.ops:
        key = _key(op)
        if key is None:
            continue
        groups = by_key.setdefault(key, [])
        group = next((g for g in groups if _available(op.rhs, g.anchor)), None)
        if group is None:
            group = _Group(op)
            groups.append(group)
            out.append(group)
        group.matmuls.append(op)
    return out


def _rows(x: RankedTensorType) -> int | None:
    """The rows of x as a matrix: the product of all dims but the last; None if one is
    unknown (a run-time batch)."""
    rows = 1
    for d in x.shape[:-1]:
        if d is None:
            return None
        rows *= d
    return rows


@register_pass
class GraphMergeMatmuls(Pass):
    """Merge matmuls that share their left operand into one matmul and a split.

    Algorithm:
      1. In each block, in order, group the `graph.matmul`s by (left operand x, right
         operand's K dim and element type), taking only right operands that are 2-D with a
         static N. A matmul joins the first group of its key whose first matmul (the
         anchor) its right operand is defined before (or is a constant, which moves up to
         it); else it starts a group.
      2. Keep the groups of at least two matmuls where merging is a win (the module
         docstring's rule): every right operand constant, or x with at least `min-rows`
         rows (a `?` dim counts as many).
      3. At each kept group's anchor, in block order, build `w_cat = concat(w_1, ..., w_n)`
         along axis 1, `y = matmul(x, w_cat)` and a split of y along its last axis into the
         parts of sizes N_1, ..., N_n (equal sections when the N_i are equal, else constant
         size operands), each part typed as the matmul it replaces; replace each matmul's
         result by its part and erase the matmul.

    Deterministic: groups and their members follow block order. `self.merged` counts the
    matmuls removed (n - 1 per group).
    """

    name = "graph-merge-matmuls"
    #: the fewest rows of x for which a concat of non-constant weights is worth its copy
    min_rows: int = 16

    def run(self, op: Operation) -> None:
        self.merged = 0
        blocks = [b for inner in op.walk() for r in inner.regions for b in r.blocks]
        for block in blocks:
            for group in _groups(block):
                if len(group.matmuls) >= 2 and self._worth_it(group):
                    _merge(group)
                    self.merged += len(group.matmuls) - 1

    def _worth_it(self, group: _Group) -> bool:
        if all(constant_value(m.rhs) is not None for m in group.matmuls):
            return True
        rows = _rows(group.anchor.lhs.type)
        return rows is None or rows >= self.min_rows


def _merge(group: _Group) -> None:
    """Step 3 of the algorithm for one group."""
    first = group.anchor
    b = Builder.before(first)
    weights = [m.rhs for m in group.matmuls]
    for w in weights:
        if _defined_later(w, first):            # a constant (`_available`)
            w.defining_op().move_before(first)
    w_cat = b.insert(ConcatOp.create(weights, axis=1)).results[0]
    y = b.insert(MatmulOp.create(first.lhs, w_cat)).results[0]
    widths = [w.type.shape[1] for w in weights]
    types = [m.results[0].type for m in group.matmuls]
    axis = y.type.rank - 1
    sizes = [] if len(set(widths)) == 1 else \
        [b.insert(ConstantOp.create(np.int64(n), I64)).results[0] for n in widths]
    split = b.create(SplitOp, y, sizes, result_types=types,
                     **SplitOp.py_props_to_attrs({"axis": axis, "sections": len(widths)}))
    for m, part in zip(group.matmuls, split.results):
        m.replace_all_uses_with([part])
        m.erase()
