"""Which structured ops the BLIS nest computes, and in its terms: a contraction
`C[...] += prod(A factors) * prod(B factors)` over loop dims split into four groups.

Linear forms. Every index expression of every operand must be linear in the loop dims,
`sum(coefficient * d) + constant` (no `mod`, `floordiv` or symbols): a matmul's bare dims,
a convolution's `oh * stride + kh`, its data gradient's `h - kh + 2`. The pack loops then
evaluate any operand's indices at any point of the loops, so a convolution's input window
is read straight into the packed panel (im2col without an im2col buffer).

The groups. The body must be `out + x1 * x2 * ...` (a tree of `arith.mulf` over distinct
float32 inputs; `arith.extf` of it added into an f64 output is the widened form
lower-graph-to-linalg's `Accumulator` emits). The output's last index is `n`, the flat
index of the N group: a bare dim, or `sum(d * stride_d)` over several dims with row-major
strides (what `flatten_accumulator` makes of a buffer whose trailing dims it collapses). The
factors that use an N dim are B's side; the others are A's side (one at least). Then:

- N: the dims of the output's last index (contiguous: the micro-kernel stores vectors);
- M: parallel dims that only A's factors use, in the output's order (its rows);
- batch: the other parallel dims (used by both sides, or by B only but outside the last
  index, as a convolution's image index): loops around the nest;
- K: every reduction dim, in loop order: the flat reduction index.

A matmul is the case of one dim per group; `linalg.conv_2d_nchw_fchw` per image is
M = filters, N = output pixels (once the f64 accumulator is flattened), K = (channels,
window); its weight gradient is M = filters, N = (channels, window), K = (images, pixels).

Swapping. `swapped` exchanges the sides (C^T = B^T A^T): A's factors and M dims become
B's and N, and the reverse. The output keeps its layout, so its last index then runs over
the new M (`transposed`): the nest stores it element by element. linalg-matmul-blis swaps a
contraction whose few N columns would leave most lanes idle while A is read along M at
stride 1 (the weight gradient x^T @ dz).

Flattening. The graph's contractions accumulate into a temporary f64 buffer (a
`memory.alloc` filled with zero, read by the epilogue, freed). When its trailing dims are
B's dims, all static, contiguous, the buffer is re-allocated with those dims collapsed into
one, and every other user's indexing map reads the collapsed index: the output pixels of a
convolution become one long row the micro-kernel stores with vectors, where the NCHW
buffer's last dimension (12, 4, 3 in examples/cnn.irk) is shorter than one vector.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator

from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineExpr, AffineMap
from irkit.attributes import FloatAttr
from irkit.builder import Builder
from irkit.ir import Operation, Value
from irkit.rewrite import constant_value
from irkit.types import F32, F64, MemRefType
from irkit.dialects import arith
from irkit.dialects.linalg import PARALLEL, GenericOp, StructuredOp
from irkit.dialects.linalg import YieldOp as LinalgYieldOp
from irkit.dialects.linalg.contraction import BatchMatmulOp, MatmulOp
from irkit.dialects.linalg.convolution import Conv2DNchwFchwOp
from irkit.dialects.linalg.named import FillOp
from irkit.dialects.linalg.structured import maps_attr
from irkit.dialects.memory import AllocOp, DeallocOp
from irkit.dialects.memory.view import strides_and_offset

#: sum(coefficient * dim) + constant: ({dim: coefficient}, constant)
Linear = tuple[dict[int, int], int]
#: a loop dim's extent: static, or (buffer, axis) to read with `memory.dim`
Extent = int | tuple[Value, int]


def linear(e: AffineExpr) -> Linear | None:
    """`e` as a linear form, or None (`mod`, `floordiv`, `ceildiv`, symbols, dim * dim)."""
    if isinstance(e, AffineDim):
        return {e.position: 1}, 0
    if isinstance(e, AffineConst):
        return {}, e.value
    if not isinstance(e, AffineBinary) or e.kind not in ("add", "mul"):
        return None
    lhs, rhs = linear(e.lhs), linear(e.rhs)
    if lhs is None or rhs is None:
        return None
    if e.kind == "add":
        coefs = dict(lhs[0])
        for d, c in rhs[0].items():
            coefs[d] = coefs.get(d, 0) + c
        return {d: c for d, c in coefs.items() if c}, lhs[1] + rhs[1]
    if lhs[0] and rhs[0]:
        return None
    (coefs, k), scale = (lhs, rhs[1]) if not rhs[0] else (rhs, lhs[1])
    return {d: c * scale for d, c in coefs.items() if c * scale}, k * scale


@dataclass
class Factor:
    """One input of the product: its buffer and the linear form of each of its indices."""

    buffer: Value
    forms: list[Linear]

    def dims(self) -> set[int]:
        return {d for coefs, _ in self.forms for d in coefs}


@dataclass
class Contraction:
    """A matched contraction (module docstring): the output and its forms, the factors of
    each side, the four groups of loop dims and the extent of each dim. `transposed`: the
    sides exchanged (`swapped`), so that the output's last index runs over M, not N."""

    op: GenericOp
    c: Value
    c_forms: list[Linear]
    a: list[Factor]
    b: list[Factor]
    batch: list[int]
    m: list[int]
    n: list[int]
    k: list[int]
    extents: list[Extent]
    widened: bool
    transposed: bool = False

    def static(self, group: list[int]) -> int | None:
        """The product of the group's extents when all are static, else None."""
        size = 1
        for d in group:
            if not isinstance(self.extents[d], int):
                return None
            size *= self.extents[d]
        return size


def swapped(c: Contraction) -> Contraction:
    """`c` with its sides exchanged: A's factors and M dims become B's and N, and B's
    become A's and M (`C^T = B^T A^T`). The output keeps its layout: its last index then
    runs over M (`transposed`), so the nest stores it element by element."""
    return replace(c, a=c.b, b=c.a, m=c.n, n=c.m, transposed=not c.transposed)


def _product_leaves(v: Value, args: list[Value]) -> list[Value] | None:
    """The leaves of a tree of `arith.mulf` ending at block arguments in `args`."""
    if v in args:
        return [v]
    op = v.defining_op(arith.MulFOp)
    if op is None or len(v.uses) != 1:
        return None
    lhs, rhs = _product_leaves(op.lhs, args), _product_leaves(op.rhs, args)
    return None if lhs is None or rhs is None else lhs + rhs


def _body_factors(op: GenericOp) -> tuple[list[int], bool] | None:
    """The input indices whose product the body adds into the output, and whether it is
    widened into f64; None when the body is anything else."""
    args = list(op.body.args)
    inputs, out = args[:-1], args[-1]
    ops = list(op.body.ops)
    if out.type not in (F32, F64) or not isinstance(ops[-1], LinalgYieldOp) or \
            any(not isinstance(o, (arith.MulFOp, arith.AddFOp, arith.ExtFOp))
                for o in ops[:-1]):
        return None
    add = ops[-1].operands[0].defining_op(arith.AddFOp)
    if add is None or out not in (add.lhs, add.rhs) or add.lhs is add.rhs:
        return None
    term = add.rhs if add.lhs is out else add.lhs
    widened = out.type is F64
    if widened:
        ext = term.defining_op(arith.ExtFOp)
        if ext is None:
            return None
        term = ext.operands[0]
    leaves = _product_leaves(term, inputs)
    if leaves is None or len(leaves) < 2 or len(set(leaves)) != len(leaves) or \
            any(x.type is not F32 for x in leaves) or \
            len(ops) != len(leaves) + 1 + widened:            # the mulfs, add, extf, yield
        return None
    return sorted(inputs.index(x) for x in leaves), widened


def _extents(op: GenericOp) -> list[Extent] | None:
    """Each loop dim's extent from an operand where it is a bare index: a static size where
    any operand has one (a dynamic source would hide that a row is shorter than a vector)."""
    found: list = [None] * op.num_loops
    for operand, m in zip(op.structured_operands(), op.indexing_maps_list()):
        for axis, e in enumerate(m.results):
            if isinstance(e, AffineDim) and not isinstance(found[e.position], int):
                size = operand.type.shape[axis]
                found[e.position] = size if size is not None else \
                    found[e.position] or (operand, axis)
    return None if None in found else found


def _n_group(form: Linear, extents: list[Extent]) -> list[int] | None:
    """The dims of the output's last index, outer to inner, when their coefficients are the
    row-major strides of their extents (the flat index runs over one contiguous row)."""
    coefs, _ = form
    dims = sorted(coefs, key=lambda d: -coefs[d])
    stride = 1
    for d in reversed(dims):
        if coefs[d] != stride:
            return None
        if d != dims[0]:
            if not isinstance(extents[d], int):
                return None
            stride *= extents[d]
    return dims


def match(op: StructuredOp, extents: list[Extent] | None = None) -> Contraction | None:
    """The contraction `op` is (a generic on memrefs; see the module docstring), or None.
    `extents`: the dims' extents when the maps no longer show them (after flattening)."""
    if not isinstance(op, GenericOp) or len(op.outputs) != 1 or not op.has_buffer_semantics \
            or op.results:
        return None
    found = _body_factors(op)
    operands = op.structured_operands()
    if found is None or not all(isinstance(v.type, MemRefType) for v in operands):
        return None
    factors_at, widened = found
    maps = op.indexing_maps_list()
    forms = [[linear(e) for e in m.results] for m in maps]
    if any(f is None for fs in forms for f in fs):
        return None
    extents = extents or _extents(op)
    if extents is None:
        return None
    iterators = op.iterator_types_list()
    c, c_forms = operands[-1], forms[-1]
    layout = strides_and_offset(c.type)
    if not c_forms or layout is None or layout[0][-1] != 1:
        return None
    n = _n_group(c_forms[-1], extents)
    outer = [next(iter(f[0])) if len(f[0]) == 1 and f[1] == 0 and
             next(iter(f[0].values())) == 1 else None for f in c_forms[:-1]]
    parallel = [d for d, it in enumerate(iterators) if it == PARALLEL]
    if not n or None in outer or sorted(outer + n) != parallel:
        return None
    factors = [Factor(operands[i], forms[i]) for i in factors_at]
    b = [f for f in factors if f.dims() & set(n)]
    a = [f for f in factors if not f.dims() & set(n)]
    if not a or not b:
        return None
    b_dims = set().union(*(f.dims() for f in b))
    a_dims = set().union(*(f.dims() for f in a))
    m = [d for d in outer if d in a_dims and d not in b_dims]
    batch = [d for d in outer if d not in m]
    k = [d for d, it in enumerate(iterators) if it != PARALLEL]
    return Contraction(op, c, c_forms, a, b, batch, m, n, k, extents, widened)


def generalized(op: StructuredOp) -> GenericOp | None:
    """`op` as a generic: itself, or a new generic before a matmul, batch matmul or NCHW
    convolution on memrefs."""
    if isinstance(op, GenericOp):
        return op
    if isinstance(op, (MatmulOp, BatchMatmulOp, Conv2DNchwFchwOp)) and op.has_buffer_semantics:
        return op.generalize(Builder.before(op))
    return None


def contractions(root: Operation, accept: Callable[["Contraction"], bool] = lambda c: True
                 ) -> Iterator[tuple[StructuredOp, GenericOp, "Contraction"]]:
    """(op, its generic form, the contraction) for each structured op on memrefs under
    `root` that `match`es and that `accept` takes, in walk order (collected before the first
    is yielded, so the caller may rewrite each); a generic made for an op that is not yielded
    is erased again. What `linalg-matmul-blis` and `gpu-matmul-tiles` schedule."""
    ops = [o for o in root.walk() if isinstance(o, StructuredOp) and o is not root
           and o.has_buffer_semantics and not o.results]
    for op in ops:
        generic = generalized(op)
        c = match(generic) if generic is not None else None
        if c is None or not accept(c):
            if generic is not None and generic is not op:
                generic.erase()
            continue
        yield op, generic, c


# ---------------------------------------------------------------------------------------------
# The temporary accumulator: flattened, and its zero fill folded
# ---------------------------------------------------------------------------------------------


def _temporary(c: Contraction, nested: bool = False) -> AllocOp | None:
    """The `memory.alloc` making the output, when all its users are structured ops and one
    dealloc in the same block (`nested`: or in regions of ops in that block, as a reader
    inside a `fusion.group` is)."""
    alloc = c.c.defining_op(AllocOp)
    if alloc is None:
        return None
    for user in c.c.users:
        within = user.parent is alloc.parent or \
            nested and alloc.parent.find_ancestor_op(user) is not None
        if not within or \
                not isinstance(user, (StructuredOp, DeallocOp)) or \
                (isinstance(user, StructuredOp) and not isinstance(user, (GenericOp, FillOp))):
            return None
    return alloc


def _collapsible(c: Contraction) -> int:
    """How many trailing dims of the output are bare N-side dims with static extents (the
    first of them may be dynamic), in order, so that they collapse into one row."""
    shape = c.c.type.shape
    b_only = set().union(*(f.dims() for f in c.b)) - set().union(*(f.dims() for f in c.a))
    count = 0
    for axis in range(len(shape) - 1, -1, -1):
        form = c.c_forms[axis]
        if len(form[0]) != 1 or form[1] or next(iter(form[0])) not in b_only or \
                next(iter(form[0].values())) != 1 or shape[axis] is None:
            break
        count += 1
    return count


def _collapse_map(m: AffineMap, strides: list[int]) -> AffineMap:
    """`m` with its last len(strides) results replaced by their row-major flat index."""
    g = len(strides)
    flat: AffineExpr = AffineConst(0)
    for e, s in zip(m.results[-g:], strides):
        term = e if s == 1 else AffineBinary("mul", e, AffineConst(s))
        flat = term if flat == AffineConst(0) else AffineBinary("add", flat, term)
    return AffineMap(m.num_dims, m.num_symbols, (*m.results[:-g], flat))


def flatten_accumulator(c: Contraction) -> Contraction:
    """`c` with its temporary output's trailing N-side dims collapsed into one (module
    docstring), its other users reading the collapsed buffer; `c` itself when the output
    is no such temporary or there is one dim or fewer to collapse."""
    alloc = _temporary(c)
    g = _collapsible(c)
    if alloc is None or g < 2:
        return c
    shape = c.c.type.shape
    strides = [1] * g
    for i in range(g - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[len(shape) - g + i + 1]
    new_type = MemRefType((*shape[:-g], strides[0] * shape[-g]), c.c.type.element)
    new = Builder.before(alloc).create(AllocOp, list(alloc.operands), result_types=[new_type],
                                       location=alloc.location).result
    for user in c.c.users:
        if isinstance(user, GenericOp):
            at = user.structured_operands().index(c.c)
            maps = user.indexing_maps_list()
            maps[at] = _collapse_map(maps[at], strides)
            user.properties["indexing_maps"] = maps_attr(maps)
    extents = [(new, e[1]) if isinstance(e, tuple) and e[0] is c.c else e for e in c.extents]
    c.c.replace_all_uses_with(new)
    alloc.erase()
    flat = match(c.op, extents)
    assert flat is not None, "a contraction into a collapsed output is one"
    return flat


def narrowed(c: Contraction, chunk: int) -> Contraction:
    """`c` with its temporary f64 output made float32, where that changes no value: all of
    K (static) is one `chunk`, so the nest's sum of it is one float32 sum, which the zero
    fill (already folded: the caller's) makes the output's whole value; and every other
    user reads the output only to truncate it to float32 (`arith.truncf` of its block
    argument; a dealloc). The f64 buffer was then a float32 sum widened, stored, read back
    and narrowed again: twice the bytes both ways. Those users now read the float32
    buffer, their `truncf`s gone. `c` itself where any condition fails.

    The dot nest's output too (its K one chunk of `lanes * chunk`: the logistic
    regression's logits, 784 long), whose reader, the cross-entropy's row kernel, sits in
    a `fusion.group` (`_temporary`'s `nested`): each row's ten sums had been widened and
    stored as f64, then loaded and narrowed by that kernel. C's extents that named the f64
    buffer (a size read off the output) name the new one: a convolution's filter gradient
    had kept a `memory.dim` of the erased buffer."""
    k = c.static(c.k)
    alloc = _temporary(c, nested=True)
    if not c.widened or k is None or not 0 < k <= chunk or alloc is None:
        return c
    readers = []
    for user in c.c.users:
        if user is c.op or isinstance(user, DeallocOp):
            continue
        if not isinstance(user, GenericOp) or c.c in user.outputs:
            return c
        operands = user.structured_operands()
        if sum(o is c.c for o in operands) != 1:
            return c
        arg = user.regions[0].blocks[0].args[operands.index(c.c)]
        if not all(isinstance(u, arith.TruncFOp) and u.result.type == F32 for u in arg.users):
            return c
        readers.append(arg)
    new = Builder.before(alloc).create(
        AllocOp, list(alloc.operands), result_types=[MemRefType(c.c.type.shape, F32)],
        location=alloc.location).result
    for arg in readers:
        for trunc in list(arg.users):
            trunc.result.replace_all_uses_with(arg)
            trunc.erase()
        arg.type = F32
    old = c.c
    old.replace_all_uses_with(new)
    alloc.erase()
    extents = [(new, x[1]) if isinstance(x, tuple) and x[0] is old else x for x in c.extents]
    return replace(c, c=new, widened=False, extents=extents)


def zero_fill(c: Contraction, dynamic_k: bool = False) -> FillOp | None:
    """The `linalg.fill` of 0.0 right before the op (only ops that do not touch the output
    in between) that the nest's first K block can stand in for, when K is static and not
    zero (a K loop of no steps would leave the output unwritten); with `dynamic_k`, also
    where K is dynamic (the caller then keeps the fill for K == 0)."""
    k = c.static(c.k)
    if k == 0 or (k is None and not dynamic_k):
        return None
    prev = c.op.prev_op
    while prev is not None:
        if isinstance(prev, FillOp) and prev.outputs[0] is c.c:
            value = constant_value(prev.inputs[0])
            ok = isinstance(value, FloatAttr) and value.value == 0.0
            return prev if ok else None
        if c.c in prev.operands or prev.regions:
            return None
        prev = prev.prev_op
    return None
