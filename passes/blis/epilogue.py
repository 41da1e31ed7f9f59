"""A contraction's epilogue applied at the BLIS micro-kernel's final store.

The graph's matmul or convolution is a `fusion.group` (passes/linalg_fuse.py): the
contraction writes a temporary accumulator (f64 where the products are widened), and the
elementwise generics after it read it at each output point: the truncation to f32, a bias,
an activation, a residual add, the backward pass's relu mask, an optimizer's update of the
gradient the contraction produced. Run as its own nest, that epilogue reads the whole
accumulator back (8 bytes an element) and the accumulator itself is written and read once
more than it needs to be. Applied at the store, each output element goes from the
micro-kernel's registers through the epilogue's ops to the group's real outputs.

Which members (`find`). The ops right after the contraction in its group (the
`memory.alloc`s among them are hoisted above the nest, the accumulator's `memory.dealloc`
is skipped), as long as each is a `linalg.generic` that:

1. loops over the accumulator's points: as many loops as the accumulator has dims, all
   parallel, dim `i` standing for the accumulator's dim `i` (so every member's dims mean
   the same point, and the contraction's loop dim behind each is known);
2. reads the accumulator, or a buffer an earlier member wrote, by the identity map (at
   the point) and at least one of them (it is part of the chain); reads other buffers at
   any linear map (a bias `b[j]`, a residual `r[i, j]`, a mask, a scalar `s[]`), evaluated
   at the point;
3. writes its outputs by the identity map, none of them the accumulator or a factor of the
   contraction (the nest still reads those), and none read by a member at another point
   (the nest interleaves the points: what one point writes, another must not read);
4. has a body of pure elementwise scalar ops (arith / math: they take vectors lane-wise),
   whose captured values are defined before the contraction.

The accumulator must be a temporary (a `memory.alloc`) that nothing but the contraction,
its fill, these members and its free use: it then never needs its final values. Otherwise
(no member qualifies, or the accumulator is read later) the group keeps today's form: the
pass dissolves it and the epilogue is its own nest.

Applying it (`apply`). At a point (the contraction's loop dims as index values) and a width
(`lanes` consecutive N positions, or 1), each member's body is cloned with its scalar types
widened to vectors of that width: the accumulator's argument is the summed value, a chained
buffer's is the value the earlier member stored (forwarded in registers, the store still
made: the buffer may be an output), another input is a vector load where its last index
runs with the N dim at stride 1, a scalar load broadcast where no index depends on N
(a bias per row, a scalar), and each yielded value is stored; at a tile's edge the same
one element at a time. `vector_ok` says whether every access fits those two kinds (one N
dim; unit stride). Where not, the pass leaves the epilogue as its own nest: a convolution's
N is its output pixels, two dims, and its NCHW output's rows are shorter than a vector; run
element by element at the store (the N index split per element), examples/cnn.irk's
training step took 2.37 and 2.46 ms against 2.17 and 2.16 with the epilogue as its own
nest (1 thread, bench/bench_matmul.py --conv, two alternating rounds at load 2.2-2.7).
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.affine import AffineMap
from irkit.builder import Builder
from irkit.ir import Block, Operation, Value
from irkit.opdef import Elementwise, Pure, has_trait
from irkit.types import FloatType, IntegerType, MemRefType, VectorType
from irkit.dialects.linalg import PARALLEL, GenericOp
from irkit.dialects.linalg.named import FillOp
from irkit.dialects.memory import AllocOp, DeallocOp, LoadOp, StoreOp, VectorLoadOp, \
    VectorStoreOp
from irkit.dialects.memory.view import collapsed_layout, strides_and_offset
from irkit.dialects.vector import BroadcastOp
from irkit.passes.blis.contraction import Contraction, Linear, linear


@dataclass
class Member:
    """One epilogue generic: per structured operand, whether it is the accumulator, and
    its indices as linear forms of the contraction's loop dims."""

    op: GenericOp
    is_acc: list[bool]
    forms: list[list[Linear]]


@dataclass
class Epilogue:
    """The members in order, and the allocations of their buffers to hoist above the nest."""

    members: list[Member]
    hoisted: list[AllocOp]

    def ops(self) -> list[Operation]:
        return [m.op for m in self.members]


def _lane_type(t) -> bool:
    return isinstance(t, FloatType) or (isinstance(t, IntegerType) and t.width >= 8)


def _pure_elementwise(body: Block) -> bool:
    """Every op but the terminator a pure elementwise op on scalars (rule 4's first half)."""
    for o in list(body.ops)[:-1]:
        if o.regions or not (has_trait(o, Pure) and has_trait(o, Elementwise)):
            return False
        if not all(isinstance(t, (FloatType, IntegerType))
                   for t in [v.type for v in o.operands] + o.result_types):
            return False
    return True


def _captured_before(body: Block, between: set[Operation]) -> bool:
    """Whether every value the body reads from above is defined outside `between`."""
    inside = set(body.ops)
    for o in body.ops:
        for v in o.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner not in inside and owner in between:
                return False
    return True


def _member(op: Operation, acc: Value, dim_of: list[int], chain: set[Value],
            between: set[Operation]) -> Member | None:
    """`op` as an epilogue member (rules 1, 2 and 4 of the module docstring), or None."""
    rank = len(dim_of)
    if not isinstance(op, GenericOp) or not op.has_buffer_semantics or op.results or \
            op.num_loops != rank or any(it != PARALLEL for it in op.iterator_types_list()):
        return None
    identity = AffineMap.identity(rank)
    maps = op.indexing_maps_list()
    operands = op.structured_operands()
    n_in = len(op.inputs)
    linked = False
    forms = []
    for pos, (buf, m) in enumerate(zip(operands, maps)):
        own = [linear(e) for e in m.results]
        if any(f is None for f in own):
            return None
        if pos >= n_in or buf is acc or buf in chain:
            if m != identity:
                return None
            linked |= pos < n_in
        owner = buf.owner
        if isinstance(owner, Operation) and owner in between and \
                not isinstance(owner, AllocOp):
            return None
        forms.append([({dim_of[d]: k for d, k in coefs.items()}, const)
                      for coefs, const in own])
    if not linked or not _pure_elementwise(op.body) or not _captured_before(op.body, between):
        return None
    return Member(op, [buf is acc for buf in operands], forms)


def find(c: Contraction, following: list[Operation], own: set[Operation]) -> Epilogue | None:
    """The epilogue of `c` among the ops `following` it in its group, in order (module
    docstring); None when there is none to apply or the accumulator is needed after it.
    `own`: the contraction's ops (its generic, and the named op it was made from)."""
    acc = c.c
    if acc.defining_op(AllocOp) is None or \
            any(len(f[0]) != 1 or f[1] or next(iter(f[0].values())) != 1 for f in c.c_forms):
        return None
    dim_of = [next(iter(f[0])) for f in c.c_forms]
    members: list[Member] = []
    allocs: list[AllocOp] = []
    hoisted: list[AllocOp] = []
    chain: set[Value] = set()
    between: set[Operation] = set()
    for op in following:
        if isinstance(op, AllocOp):
            if any(isinstance(v.owner, Operation) and v.owner in between for v in op.operands):
                break
            allocs.append(op)
        elif not (isinstance(op, DeallocOp) and op.memref is acc):
            m = _member(op, acc, dim_of, chain, between)
            if m is None:
                break
            members.append(m)
            hoisted += allocs
            allocs = []
            chain |= set(op.outputs)
        between.add(op)
    member_ops = {m.op for m in members}
    if not members or any(u not in own and u not in member_ops and
                          not isinstance(u, (FillOp, DeallocOp)) for u in acc.users):
        return None
    factors = {f.buffer for f in c.a + c.b}
    if chain & factors or acc in chain:
        return None
    for m in members:                        # rule 3: written buffers are read at the point
        for buf, forms in zip(m.op.structured_operands(), m.forms):
            if buf in chain and forms != [({d: 1}, 0) for d in dim_of]:
                return None
    return Epilogue(members, hoisted)


def vector_ok(ep: Epilogue, c: Contraction, along: list[int] | None = None) -> bool:
    """Whether the epilogue can run on vectors of consecutive N positions (or of the
    positions of the group of dims `along`: a swapped contraction's M, C's last index): one
    dim, and every buffer it loads or stores either independent of it or indexed by it at
    stride 1 in its last index (module docstring)."""
    dims = c.n if along is None else along
    if len(dims) != 1:
        return False
    dn = dims[0]
    for m in ep.members:
        for buf, is_acc, forms in zip(m.op.structured_operands(), m.is_acc, m.forms):
            if is_acc:
                continue
            uses = [i for i, (coefs, _) in enumerate(forms) if dn in coefs]
            if not uses:
                continue
            layout = strides_and_offset(buf.type)
            if uses != [len(forms) - 1] or forms[-1][0][dn] != 1 or layout is None or \
                    layout[0][-1] != 1 or not _lane_type(buf.type.element):
                return False
    return True


def _runs_flat(buf: Value, forms: list[Linear], dn: int, dm: int, m: int) -> bool:
    """Whether `buf`, read or written at `forms`, is indexed [..., n, m] by dims `dn` and
    `dm` with M's extent `m` its last dim's size, neither dim elsewhere, and its last two
    dims contiguous (one `memory.collapse_shape` makes them one run: element (n, m) at
    n * M + m); or independent of both."""
    if not isinstance(buf.type, MemRefType):
        return True
    uses = [i for i, (coefs, _) in enumerate(forms) if dn in coefs or dm in coefs]
    if not uses:
        return True
    t = buf.type
    return t.rank >= 2 and uses == [t.rank - 2, t.rank - 1] and \
        forms[-2] == ({dn: 1}, 0) and forms[-1] == ({dm: 1}, 0) and t.shape[-1] == m and \
        collapsed_layout(t, flat_groups(t.rank))[1] and _lane_type(t.element)


def flat_groups(rank: int) -> list[list[int]]:
    """The reassociation that merges a buffer's last two dims (`flat_ok`)."""
    return [[d] for d in range(rank - 2)] + [[rank - 2, rank - 1]]


def flat_ok(ep: Epilogue, c: Contraction) -> bool:
    """Whether the epilogue of a swapped contraction (C's last index runs along the nest's
    M) can run on vectors of consecutive elements of C's last two dims, a tile spanning all
    of M (`Blis.final_flat`): M one static dim, and C and every buffer the members load or
    store either independent of M and N or indexed [..., n, m] with rows of exactly M
    elements, contiguous (`_runs_flat`). The logistic regression's weight gradient,
    `w[784, 10] -= lr * dw`: its tile of 10 x 32 is then 20 vectors of 16 floats, where a
    tile of 5 x 64 had been 64 vectors of 5 (each split by LLVM into 4 and 1)."""
    m = c.static(c.m)
    if not c.transposed or m is None or len(c.m) != 1 or len(c.n) != 1:
        return False
    dm, dn = c.m[0], c.n[0]
    if not _runs_flat(c.c, c.c_forms, dn, dm, m):
        return False
    return all(_runs_flat(buf, forms, dn, dm, m)
               for mem in ep.members
               for buf, is_acc, forms in zip(mem.op.structured_operands(), mem.is_acc,
                                             mem.forms) if not is_acc)


def apply(ep: Epilogue, nest, b: Builder, value: Value, dims: dict, width: int,
          along: int | None = None, flat: tuple[dict, Value] | None = None) -> None:
    """The members at the point `dims` (contraction dim -> index; its N dim, or the dim
    `along`, the first of `width` consecutive positions), the accumulator's argument being
    `value` (a scalar, or a vector of `width`). `nest` is the `Blis` emitter (index
    arithmetic at linear forms). `flat` ((buffer -> its collapse, flat index): `flat_ok`):
    the `width` positions run along the collapsed last two dims of the buffers that have
    them, from the flat index; `dims` then holds the batch dims only."""
    loc = nest.e.location
    lane_dim = nest.c.n[0] if along is None else along
    stored: dict[Value, Value] = {}
    splats: dict[Value, Value] = {}

    def access(buf: Value, forms: list[Linear]) -> tuple[Value, list[Value], bool]:
        """(the buffer to index, its indices, whether they run with the lanes)."""
        if flat is not None and buf in flat[0]:
            return flat[0][buf], [nest.at(b, f, dims) for f in forms[:-2]] + [flat[1]], True
        return buf, [nest.at(b, f, dims) for f in forms], \
            any(lane_dim in coefs for coefs, _ in forms)

    def vec(t):
        return t if width == 1 else VectorType((width,), t)

    def outside(v: Value) -> Value:
        if width == 1:
            return v
        if v not in splats:
            splats[v] = b.create(BroadcastOp, v, result_types=[vec(v.type)],
                                 location=loc).result
        return splats[v]

    def load(buf: Value, forms: list[Linear]) -> Value:
        where, idx, lanes = access(buf, forms)
        if width > 1 and lanes:
            return b.create(VectorLoadOp, where, idx, result_types=[vec(buf.type.element)],
                            location=loc).result
        return outside(b.create(LoadOp, where, idx, location=loc).result)

    for m in ep.members:
        body = m.op.body
        mapping: dict[Value, Value] = {}
        for arg, buf, is_acc, forms in zip(body.args, m.op.structured_operands(), m.is_acc,
                                           m.forms):
            if is_acc:
                mapping[arg] = value
            elif buf in stored:
                mapping[arg] = stored[buf]
            elif not isinstance(buf.type, MemRefType):
                mapping[arg] = outside(buf)              # a scalar input
            elif arg.uses:
                mapping[arg] = load(buf, forms)
        for o in list(body.ops)[:-1]:
            operands = [mapping[v] if v in mapping else outside(v) for v in o.operands]
            new = b.insert(Operation.create(o.name, operands, [vec(t) for t in o.result_types],
                                            o.properties, o.attributes, location=o.location))
            mapping.update(zip(o.results, new.results))
        n_in = len(m.op.inputs)
        for buf, forms, y in zip(m.op.outputs, m.forms[n_in:], body.last.operands):
            v = mapping[y] if y in mapping else outside(y)
            where, idx, _ = access(buf, forms)
            b.create(VectorStoreOp if width > 1 else StoreOp, v, where, idx, location=loc)
            stored[buf] = v
