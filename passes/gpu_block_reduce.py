"""gpu-block-reduce: row reductions on memrefs -- a `fusion.group` holding them (softmax,
log_softmax, cross entropy, layernorm, mean), or a lone reducing `linalg.generic` -- to one
`gpu.launch` with a block per row whose threads reduce together through workgroup memory.

The plain lowering (lower-linalg-to-loop, then gpu-map-parallel-loops) gives each row one
thread that walks the whole row, once per reduction: a 10-class softmax keeps 10 of 256
threads of a block busy and a long row is one thread's serial sum. Here a block owns a row
(a point of the group's outer dims; of a lone generic's parallel dims), and its members run
in order, a `gpu.barrier` between them so each sees what the ones before wrote:

- a member without reduction dims in the row (a fill, the elementwise ops on the row)
  strides its threads over the row's points (thread t: t, t + block, ...), each point
  its body, loads before and stores after;
- a member whose dims in the row are all reductions strides the same way, each thread
  folding its points into a private partial per reduced output (started at the combiner's
  identity: 0, -inf, +inf, 1), storing its per-point outputs (a softmax member writes
  `exp(x - max)` at each point while it sums it) as it goes; then the tree: every partial
  into a workgroup buffer of `block` elements, a barrier, and log2(block) halvings (thread
  t < s combines elements t and t + s, a barrier after each); thread 0 combines the
  output's value (the fill's) with element 0 and stores it. What the later members read is
  then in memory for every thread of the block: the result is broadcast through it.

Which reductions. A reduced output (one whose indexing map uses only the row's dims) must
be yielded as `combine(out, x)`, `out` its own block argument used nowhere else and `x`
independent of every output, with `combine` an associative, commutative float or integer
op with an identity (`addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`, `addi`,
`muli`): the tree reassociates the sum, as the CPU's vectorized and blocked sums do, so
float results equal the interpreter's within the tolerances of a reassociated sum, not bit
for bit. Every index must be linear in the loop dims (`contraction.linear`). A group or op
that does not fit (a member with both parallel and reduction dims inside the row, another
combiner, a `mod` in a map) is left to lower-linalg-to-loop.

Block size: `block-size` threads (a power of two, at most 1024), or, when every member's
row is static, the smallest power of two covering the longest row if that is fewer (a
10-class softmax gets 16). Groups without outer dims (a loss: scalar groups) are one block.

Where it runs: in the nvptx ladder's `loop` row after gpu-matmul-tiles (which takes the
matmul groups) and before lower-linalg-to-loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import BlockArgument, Operation, Value
from irkit.pass_manager import Pass, register_pass
from irkit.types import I64, FloatType, MemRefType
from irkit.dialects import arith
from irkit.dialects.arith import materialize_constant
from irkit.dialects.fusion import GroupOp
from irkit.dialects.linalg import PARALLEL, GenericOp, IndexOp, StructuredOp
from irkit.dialects.memory import DimOp, LoadOp, StoreOp
from irkit.passes.blis.contraction import Linear, linear
from irkit.passes.blis.nest import Blis, Emitter, Index
from irkit.passes.gpu_block import Kernel
from irkit.passes.lower_linalg_to_loop import IndexConstants, fused_layout

#: combiner -> its identity (floats: the value; integers: the int)
IDENTITY = {
    arith.AddFOp: 0.0, arith.MulFOp: 1.0, arith.MaximumFOp: float("-inf"),
    arith.MinimumFOp: float("inf"), arith.MaxNumFOp: float("-inf"),
    arith.MinNumFOp: float("inf"), arith.AddIOp: 0, arith.MulIOp: 1,
}


@dataclass
class _Member:
    """One generic of the row: its `outer` dims (the row's point), the `inner` ones (in
    the row), each operand's linear forms, and its reduced outputs (output index ->
    the combining op in its body)."""

    op: GenericOp
    outer: list[int]
    inner: list[int]
    forms: list[list[Linear]]
    reduced: dict[int, Operation]


def _reduced_outputs(op: GenericOp, outer: set[int],
                     forms: list[list[Linear]]) -> dict[int, Operation] | None:
    """Output index -> its combining op, for the outputs indexed by the row's dims only
    (module docstring); None when one of them is not a fold we can reassociate, or a
    per-point output's value depends on one."""
    n_in = len(op.inputs)
    args = op.body.args
    yielded = op.body.last.operands
    reduced: dict[int, Operation] = {}
    for k in range(len(op.outputs)):
        if {d for coefs, _ in forms[n_in + k] for d in coefs} - outer:
            continue
        combine = yielded[k].owner
        arg = args[n_in + k]
        if not isinstance(combine, tuple(IDENTITY)) or len(arg.uses) != 1 or \
                arg not in combine.operands or combine.operands[0] is combine.operands[1]:
            return None
        reduced[k] = combine
    outs = {args[n_in + k] for k in reduced}
    for k, y in enumerate(yielded):
        x = y if k not in reduced else next(v for v in reduced[k].operands
                                           if v is not args[n_in + k])
        if _depends_on(x, outs):
            return None
    return reduced


def _depends_on(v: Value, args: set[Value]) -> bool:
    if v in args:
        return True
    if isinstance(v, BlockArgument) or not isinstance(v.owner, Operation):
        return False
    return any(_depends_on(o, args) for o in v.owner.operands)


def _member(op: StructuredOp, outer: list[int]) -> _Member | None:
    """`op` as a member whose row is the loop dims not in `outer`, or None (module
    docstring: what fits)."""
    if not isinstance(op, GenericOp) or any(o.regions for o in op.body.ops):
        return None
    its = op.iterator_types_list()
    inner = [d for d in range(op.num_loops) if d not in outer]
    if any(its[d] != PARALLEL for d in outer):
        return None
    if any(its[d] != PARALLEL for d in inner) and any(its[d] == PARALLEL for d in inner):
        return None
    forms = [[linear(e) for e in m.results] for m in op.indexing_maps_list()]
    if any(f is None for fs in forms for f in fs):
        return None
    reduced = _reduced_outputs(op, set(outer), forms) if any(
        its[d] != PARALLEL for d in inner) else {}
    if reduced is None:
        return None
    return _Member(op, outer, inner, forms, reduced)


class _Rows:
    """The launch of one group (or lone generic) while it is built: a block per point of
    the outer dims (module docstring). Linear forms are evaluated by the BLIS nest's
    `Blis.at` (it reads only `e`)."""

    at = Blis.at

    def __init__(self, options: "GpuBlockReduce", anchor: Operation, members: list[_Member],
                 constants: IndexConstants) -> None:
        self.members = members
        self.e = Emitter(anchor, constants)
        self.top = Builder.before(anchor)
        self.ranges = [self.extents(m.op) for m in members]
        #: each member's row size, computed before the launch (its loops' bounds)
        self.rows = rows = [self.flat(r, m.inner) for r, m in zip(self.ranges, members)]
        threads = options.block_size
        if all(isinstance(r, int) for r in rows):
            threads = min(threads, 1 << max(0, max(rows) - 1).bit_length())
        self.threads = threads
        self.steps = []
        while threads > 1:
            threads //= 2
            self.steps.append(threads)
        types = []
        for m in members:
            kinds = [m.op.outputs[k].type.element for k in sorted(m.reduced)]
            for t in dict.fromkeys(kinds):
                while types.count(t) < kinds.count(t):
                    types.append(t)
        self.shared_types = types

    def extents(self, op: GenericOp) -> list[Index]:
        operands = op.structured_operands()

        def size(i: int, axis: int) -> Index:
            static = operands[i].type.shape[axis]
            return static if static is not None else self.top.create(
                DimOp, operands[i], axis=IntegerAttr(axis, I64),
                location=self.e.location).result
        return op.loop_ranges(size)

    def flat(self, extents: list[Index], dims: list[int]) -> Index:
        size: Index = 1
        for d in dims:
            size = self.e.mul(self.top, size, extents[d])
        return size

    def split(self, b: Builder, flat: Index, dims: list[int], extents) -> dict[int, Index]:
        """The dims (outer to inner) at their row-major flat index `flat`."""
        out, rest = {}, flat
        for i, d in enumerate(reversed(dims)):
            last = i == len(dims) - 1
            out[d] = rest if last else self.e.rem(b, rest, extents[d])
            if not last:
                rest = self.e.div(b, rest, extents[d])
        return out

    def emit(self) -> None:
        e, first = self.e, self.members[0]
        outer_size = self.flat(self.ranges[0], first.outer)
        grid = max(outer_size, 1) if isinstance(outer_size, int) else \
            self.top.create(arith.MaxSIOp, outer_size, e.v(1)).result
        kernel = Kernel(e, self.top, [grid], (self.threads,),
                        [((self.threads,), t) for t in self.shared_types])
        self.kernel = kernel
        b = kernel.body
        row = kernel.block_id[0]
        if isinstance(outer_size, int) and outer_size >= 1:
            self.row(b, row)                    # the grid is the rows
        else:                                   # a block too many where there is no row
            e.if_(b, e.lt(b, row, outer_size), lambda b2: self.row(b2, row), lambda b2: None)

    def row(self, b: Builder, row: Value) -> None:
        for i, (m, extents, size) in enumerate(zip(self.members, self.ranges, self.rows)):
            point = self.split(b, row, m.outer, extents) if m.outer else {}
            self.member(b, m, extents, size, point)
            if i + 1 < len(self.members):
                self.kernel.barrier(b)

    def member(self, b: Builder, m: _Member, extents, size: Index, point: dict) -> None:
        e, n_in = self.e, len(m.op.inputs)
        reduced = sorted(m.reduced)
        inits = [self.identity(b, m, k) for k in reduced]

        def body(b2: Builder, i: Value, partials: list[Value]) -> list[Value]:
            dims = point | self.split(b2, i, m.inner, extents)
            carried = {n_in + k: p for k, p in zip(reduced, partials)}
            yielded = self.body(b2, m, dims, carried)
            for k, (buf, forms) in enumerate(zip(m.op.outputs, m.forms[n_in:])):
                if k not in m.reduced:
                    b2.create(StoreOp, yielded[k], buf, [self.at(b2, f, dims) for f in forms],
                              location=e.location)
            return [yielded[k] for k in reduced]

        partials = e.for_(b, self.kernel.tid, size, self.threads, body, inits)
        if reduced:
            self.tree(b, m, point, dict(zip(reduced, partials)))

    def identity(self, b: Builder, m: _Member, k: int) -> Value:
        t = m.op.outputs[k].type.element
        value = IDENTITY[type(m.reduced[k])]
        if isinstance(t, FloatType):
            return self.e.fconst(b, float(value), t)
        return b.insert(materialize_constant(IntegerAttr(int(value), t), t,
                                             self.e.location)).results[0]

    def body(self, b: Builder, m: _Member, dims: dict, carried: dict[int, Value]) -> list:
        """The member's body at the point `dims`: its inputs (and read outputs) loaded, a
        reduced output's argument the thread's partial; what it yields."""
        e, op = self.e, m.op
        mapping: dict = {}
        for pos, (arg, buf, forms) in enumerate(zip(op.body.args, op.structured_operands(),
                                                    m.forms)):
            if pos in carried:
                mapping[arg] = carried[pos]
            elif not isinstance(buf.type, MemRefType):
                mapping[arg] = buf
            elif arg.uses:
                mapping[arg] = b.create(LoadOp, buf, [self.at(b, f, dims) for f in forms],
                                        location=e.location).result
        for o in list(op.body.ops)[:-1]:
            if isinstance(o, IndexOp):
                mapping[o.result] = e.v(dims[o.dim.value])
                continue
            b.insert(o.clone(mapping))
        return [mapping.get(v, v) for v in op.body.last.operands]

    def tree(self, b: Builder, m: _Member, point: dict, partials: dict[int, Value]) -> None:
        """The block's partials of each reduced output combined in log2(block) halvings
        in workgroup memory; thread 0 stores the output (module docstring)."""
        e, kernel, tid, loc = self.e, self.kernel, self.kernel.tid, self.e.location
        free = list(zip(self.shared_types, kernel.shared))
        buffers = {}
        for k in sorted(partials):
            t = m.op.outputs[k].type.element
            at = next(i for i, (st, _) in enumerate(free) if st == t)
            buffers[k] = free.pop(at)[1]
            b.create(StoreOp, partials[k], buffers[k], [tid], location=loc)

        def combine(b2: Builder, k: int, x: Value, y: Value) -> Value:
            return b2.insert(m.reduced[k].clone({m.reduced[k].lhs: x,
                                                 m.reduced[k].rhs: y})).results[0]

        def halve(s: int):
            def step(b2: Builder) -> None:
                other = e.v(e.add(b2, tid, s))
                for k, buf in buffers.items():
                    x = b2.create(LoadOp, buf, [tid], location=loc).result
                    y = b2.create(LoadOp, buf, [other], location=loc).result
                    b2.create(StoreOp, combine(b2, k, x, y), buf, [tid], location=loc)
            return step

        for s in self.steps:
            kernel.barrier(b)
            e.if_(b, e.lt(b, tid, s), halve(s), lambda b2: None)
        kernel.barrier(b)
        n_in = len(m.op.inputs)

        def finish(b2: Builder) -> None:
            for k, buf in buffers.items():
                idx = [self.at(b2, f, point) for f in m.forms[n_in + k]]
                out = m.op.outputs[k]
                old = b2.create(LoadOp, out, idx, location=loc).result
                total = b2.create(LoadOp, buf, [e.v(0)], location=loc).result
                b2.create(StoreOp, combine(b2, k, old, total), out, idx, location=loc)
        e.if_(b, e.eq(b, tid, 0), finish, lambda b2: None)


def _group_members(group: GroupOp) -> tuple[list, list[_Member], list] | None:
    """(ops before, members, ops after) of a group that fits, with at least one reducing
    member; None otherwise. Named members (fills) are generalized."""
    group.inline_captures()
    layout = fused_layout(group)
    if layout is None:
        return None
    hoisted, ops, after = layout
    k = group.num_outer_dims
    members = []
    for op in ops:
        generic = op if isinstance(op, GenericOp) else op.generalize(Builder.before(op))
        if generic is not op:
            op.erase()
        members.append(_member(generic, list(range(k))))
    if None in members or not any(m.reduced for m in members):
        return None
    return hoisted, members, after


@register_pass
class GpuBlockReduce(Pass):
    """Row reductions on memrefs to launches of one block per row with tree reductions in
    workgroup memory (module docstring).

    Algorithm:
      1. For each `fusion.group` on memrefs whose members share its outer dims and fit
         (linear maps; in the row, a member's dims all parallel or all reductions folded
         by an associative combiner), with at least one reduction: its buffers and scalar
         code move before it, its frees and copies after it.
      2. Build the launch in its place: a grid of one block per outer point (one
         block for a group without outer dims), `block` threads; each member in order,
         threads striding over its row, reducing members tree-reducing their partials
         through workgroup buffers (log2(block) halvings, a barrier each), thread 0
         storing each reduced value; a barrier between members.
      3. The same for each lone `linalg.generic` on memrefs outside groups that has
         parallel dims and reduction dims (its parallel dims the block's point).

    Options: `block-size`, the threads of a block (a power of two, at most 1024; fewer
    where every row is static and shorter).
    """

    name = "gpu-block-reduce"
    block_size: int = 256

    def run(self, root: Operation) -> None:
        if not 1 <= self.block_size <= 1024 or self.block_size & (self.block_size - 1):
            raise IRError(f"{self.name}: block-size must be a power of two in [1, 1024], got "
                          f"{self.block_size}", root.location)
        constants = IndexConstants()
        for group in [o for o in root.walk() if isinstance(o, GroupOp)]:
            self.rewrite_group(group, constants)
        for op in [o for o in root.walk() if isinstance(o, GenericOp) and o is not root]:
            if isinstance(op.parent_op, (GroupOp, GenericOp)) or not op.has_buffer_semantics \
                    or op.results:
                continue
            its = op.iterator_types_list()
            if PARALLEL not in its or all(it == PARALLEL for it in its):
                continue
            m = _member(op, [d for d, it in enumerate(its) if it == PARALLEL])
            if m is not None:
                _Rows(self, op, [m], constants).emit()
                op.erase()

    def rewrite_group(self, group: GroupOp, constants: IndexConstants) -> None:
        found = _group_members(group)
        if found is None:
            return
        hoisted, members, after = found
        for o in hoisted:
            o.move_before(group)
        _Rows(self, group, members, constants).emit()
        for o in after:
            o.move_before(group)
        for m in members:
            m.op.erase()
        group.erase()
