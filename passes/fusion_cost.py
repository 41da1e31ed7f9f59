"""The cost model of `linalg-fuse`: memory traffic, flops and arithmetic intensity of structured
ops and of candidate fusion groups, and the rules that refuse a group.

Units (the lectures'). A kernel *moves* every array it reads and every array it writes once,
whole: the elements moved are the sum of the sizes of the distinct arrays read plus those
written (a broadcast bias counts its own size, not the output's). A gather (`tensor.extract`
or `memory.load` of another array inside a body) reads one element per iteration point.
Inside a group, a value a member makes and only members read is no memory traffic at all:
neither its write nor its reads count, and an array several members read counts once.
*Flops*: the floating-point `arith` / `math` ops of the body (walked, nested regions too)
per iteration point, times the points of the iteration space. An op counts as one flop
when it computes a float (or vector of floats) from a float operand: `exp`, `log`, `tanh`,
`sqrt` count 1 like `addf`; conversions (`extf`, `truncf`), `select`, comparisons and
constants count 0. *Arithmetic intensity* = flops / elements moved; `flops_per_byte` the
same over bytes. So `E = D + (A + B) * C` is three kernels of intensity 1/3 unfused (each
reads two arrays, writes one, one flop per element) and one kernel of 3/5 fused (reads A,
B, C, D, writes E, three flops per element).

Sizes may be dynamic. A `?` is a symbol: the name the function's `graph.dims` argument
attribute gives it (`B`, `N`, ...), followed through `tensor.empty` sizes, `tensor.dim` /
`memory.dim` and destination-passing inits; a `?` without a name becomes `d0`, `d1`, ... in
order of discovery. Counts are polynomials over these symbols (`Poly`), printed as such
(`B*64 + 8192`); decisions evaluate them with a binding, by default every symbol = 128
(`DEFAULT_DIM`), a mid-sized batch: the budget rule then treats a `?x512` f32 row as 2 KiB.

Shared outer dims (`outer_dims`). A group runs as one loop nest over its first `k` loops,
each member's other loops inside: legal when every member's first `k` loops are parallel
with equal extents, and every value passed between members is written by its producer and
read by its consumer through maps whose first `k` results are exactly `d0 .. d{k-1}` (so
the consumer's slice at one point of the outer loops is what the producer wrote at that
same point), and no member gathers from a value another member makes.

Scalar groups (`scalar_refusal`). Ops sharing no outer dim may still be one group, without
outer loops (`outer_dims = 0`), when none of them has a parallel loop (0-d elementwise ops,
iterators `[]`, and full reductions to a 0-d value, iterators all `reduction`) and every
value passed between them is 0-d: the group then runs its members' nests one after the
other, each value passed on a register. A loss (one loop over the batch, then the scalar
arithmetic on the sum) or Adam's bias-correction scalars are such groups. Work with a
parallel loop never joins one: in a group without outer loops it would lose its threads
(or, in a group with a bigger member, its own fusion), for no traffic saved but a scalar.

Refusals (`refusal`), each with a reason string:
  - recomputing an expensive producer: an op the candidate would duplicate (computed in
    another group too) that reduces (a reduction, matmul or convolution);
  - incompatible iteration spaces: no shared outer parallel dim (`k == 0`) and not a scalar
    group; the reason names the ops and the maps that break it;
  - footprint: the intermediates of one point of the outer loops (their extent beyond the
    first `k` dims, in bytes) over the budget (`FOOTPRINT_BUDGET`, 32 KiB: an L1 cache;
    a scalar per point lives in a register).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from irkit.affine import AffineDim, AffineMap
from irkit.attributes import ArrayAttr, IntegerAttr, StringAttr
from irkit.ir import BlockArgument, Operation, Value
from irkit.rewrite import constant_value
from irkit.types import FloatType, ShapedType, VectorType
from irkit.dialects.fusion import YieldOp as FusionYieldOp
from irkit.dialects.linalg import REDUCTION, StructuredOp
from irkit.dialects.memory import AllocOp, LoadOp, byte_size
from irkit.dialects.memory import DimOp as MemoryDimOp
from irkit.dialects.tensor import DimOp, EmptyOp, ExtractOp

#: what every `?` stands for when a decision needs a number
DEFAULT_DIM = 128
#: bytes of intermediates one point of a group's outer loops may hold (an L1 cache)
FOOTPRINT_BUDGET = 32 * 1024

#: float-producing ops that move or convert values rather than compute (0 flops)
_NOT_FLOPS = frozenset({"arith.extf", "arith.truncf", "arith.select", "arith.bitcast",
                        "arith.constant"})


# ---------------------------------------------------------------------------------------------
# Polynomials over the dims' names
# ---------------------------------------------------------------------------------------------


class Poly:
    """A polynomial with integer coefficients over dimension symbols: `{monomial: coeff}`,
    a monomial a sorted tuple of symbol names (repeated for powers; `()` the constant)."""

    __slots__ = ("terms",)

    def __init__(self, terms: dict | None = None) -> None:
        self.terms = {m: c for m, c in (terms or {}).items() if c}

    @staticmethod
    def const(n: int) -> "Poly":
        return Poly({(): n})

    @staticmethod
    def symbol(name: str) -> "Poly":
        return Poly({(name,): 1})

    def __add__(self, other: "Poly | int") -> "Poly":
        other = _poly(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    __radd__ = __add__

    def __mul__(self, other: "Poly | int") -> "Poly":
        other = _poly(other)
        out: dict = {}
        for (m1, c1), (m2, c2) in itertools.product(self.terms.items(), other.terms.items()):
            m = tuple(sorted(m1 + m2))
            out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def __eq__(self, other) -> bool:
        return isinstance(other, (Poly, int)) and self.terms == _poly(other).terms

    def __hash__(self) -> int:
        return hash(frozenset(self.terms.items()))

    def symbols(self) -> set[str]:
        return {s for m in self.terms for s in m}

    def evaluate(self, binding: dict | None = None) -> int:
        """The value with each symbol bound (`binding`; the others its `default`, else
        `DEFAULT_DIM`)."""
        binding = {} if binding is None else binding
        default = getattr(binding, "default", DEFAULT_DIM)
        total = 0
        for m, c in self.terms.items():
            for s in m:
                c *= binding.get(s, default)
            total += c
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m in sorted(self.terms, key=lambda m: (-len(m), m)):
            c = self.terms[m]
            names = "*".join(m)
            parts.append(str(c) if not m else names if c == 1 else f"{c}*{names}")
        return " + ".join(parts)

    __repr__ = __str__


class Binding(dict):
    """Symbol -> value for decisions; every other symbol is `default`."""

    def __init__(self, values: dict | None = None, default: int = DEFAULT_DIM) -> None:
        super().__init__(values or {})
        self.default = default


def _poly(x) -> Poly:
    return x if isinstance(x, Poly) else Poly.const(x)


def ratio(num: Poly, den: Poly, binding: dict | None = None) -> Fraction | None:
    """`num / den` exactly: the constant ratio when one polynomial is a multiple of the
    other, else their values at `binding`; None when the denominator is 0."""
    d = den.evaluate(binding)
    if not den.terms or d == 0:
        return None
    lead = next(iter(den.terms))
    k = Fraction(num.terms.get(lead, 0), den.terms[lead])
    if all(Fraction(num.terms.get(m, 0)) == k * c for m, c in den.terms.items()) and \
            set(num.terms) <= set(den.terms):
        return k
    return Fraction(num.evaluate(binding), d)


# ---------------------------------------------------------------------------------------------
# Naming the dims
# ---------------------------------------------------------------------------------------------


class DimNames:
    """The size of each axis of each shaped value as a `Poly` (see the module docstring).

    Sizes the IR says are equal are one symbol: `around(ops)` unifies, for every structured
    op of the enclosing function, the operand axes that are the same loop (a valid op has
    them equal), so `%b` of `a + b` is `N` when `%a`'s axis is named `N`."""

    def __init__(self) -> None:
        self._fresh: dict = {}
        #: symbol -> what it stands for (another symbol, or a constant), union-find style
        self._alias: dict[str, Poly] = {}

    @staticmethod
    def around(ops) -> "DimNames":
        """Names for the function (or module) holding `ops`, every structured op in it
        unified."""
        names = DimNames()
        ops = list(ops)
        if not ops:
            return names
        root = ops[0]
        while root.parent_op is not None:
            root = root.parent_op
        for op in root.walk():
            if isinstance(op, StructuredOp):
                names.unify(op)
        return names

    def unify(self, op: StructuredOp) -> None:
        """Make the operand axes that are the same loop of `op` one size."""
        operands = op.structured_operands()
        first: dict[int, Poly] = {}
        for i, m in enumerate(op.indexing_maps_list()):
            for j, e in enumerate(m.results):
                if isinstance(e, AffineDim) and isinstance(operands[i].type, ShapedType):
                    size = self.dim(operands[i], j)
                    if e.position in first:
                        self._union(first[e.position], size)
                    else:
                        first[e.position] = size

    def _union(self, a: Poly, b: Poly) -> None:
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            return
        sa, sb = _single_symbol(a), _single_symbol(b)
        if sa is not None and (sb is None or sa.startswith(_FRESH)):
            self._alias[sa] = b
        elif sb is not None:
            self._alias[sb] = a

    def resolve(self, p: Poly) -> Poly:
        """`p` with each symbol replaced by what it stands for."""
        if not any(s in self._alias for s in p.symbols()):
            return p
        out = Poly()
        for m, c in p.terms.items():
            term = Poly.const(c)
            for s in m:
                term = term * (self.resolve(self._alias[s]) if s in self._alias
                               else Poly.symbol(s))
            out = out + term
        return out

    def dim(self, v: Value, axis: int) -> Poly:
        return self.resolve(self._dim(v, axis))

    def _dim(self, v: Value, axis: int) -> Poly:
        d = v.type.shape[axis]
        if d is not None:
            return Poly.const(d)
        owner = v.owner if not isinstance(v, BlockArgument) else None
        if isinstance(v, BlockArgument):
            name = _arg_dim_name(v, axis)
            if name is not None:
                return Poly.symbol(name)
        elif isinstance(owner, (EmptyOp, AllocOp)):
            dynamic = [a for a in range(axis) if v.type.shape[a] is None]
            return self.index(owner.operands[len(dynamic)])
        elif isinstance(owner, StructuredOp) and v.index < len(owner.outputs):
            return self._dim(owner.outputs[v.index], axis)
        elif owner is not None and owner.regions and owner.regions[0].blocks:
            last = owner.regions[0].blocks[0].last
            if isinstance(last, FusionYieldOp):
                return self._dim(last.operands[v.index], axis)
        return self._symbol_for((v, axis))

    def index(self, s: Value) -> Poly:
        """An `index` value as a polynomial: a constant, a dim of a value, or a symbol."""
        c = constant_value(s)
        if isinstance(c, IntegerAttr):
            return Poly.const(c.value)
        owner = s.owner if not isinstance(s, BlockArgument) else None
        if isinstance(owner, (DimOp, MemoryDimOp)):
            axis = _dim_axis(owner)
            if axis is not None:
                return self._dim(owner.operands[0], axis)
        return self._symbol_for(s)

    def _symbol_for(self, key) -> Poly:
        p = self._fresh.get(key)
        if p is None:
            p = self._fresh[key] = Poly.symbol(f"{_FRESH}{len(self._fresh)}")
        return p

    def numel(self, v: Value) -> Poly:
        out = Poly.const(1)
        for a in range(v.type.rank):
            out = out * self.dim(v, a)
        return out


#: the prefix of the symbols of unnamed `?`s
_FRESH = "d"


def _single_symbol(p: Poly) -> str | None:
    if len(p.terms) == 1:
        (m, c), = p.terms.items()
        if c == 1 and len(m) == 1:
            return m[0]
    return None


def _dim_axis(op: Operation) -> int | None:
    if isinstance(op, MemoryDimOp):
        return op.properties["axis"].value
    c = constant_value(op.operands[1])
    return c.value if isinstance(c, IntegerAttr) else None


def _arg_dim_name(arg: BlockArgument, axis: int) -> str | None:
    """The name `graph.dims` gives axis `axis` of a function argument, if any."""
    func = arg.owner.parent_op if arg.owner is not None else None
    attrs = func.properties.get("arg_attrs") if func is not None else None
    if not isinstance(attrs, ArrayAttr) or arg.index >= len(attrs):
        return None
    dims = attrs[arg.index].value.get("graph.dims")
    if not isinstance(dims, ArrayAttr) or axis >= len(dims):
        return None
    name = dims[axis]
    return name.value if isinstance(name, StringAttr) else None


# ---------------------------------------------------------------------------------------------
# Costs
# ---------------------------------------------------------------------------------------------


@dataclass
class Traffic:
    """Elements and bytes moved one way."""

    elements: Poly = field(default_factory=Poly)
    bytes: Poly = field(default_factory=Poly)

    def add(self, n: Poly, element_type) -> None:
        self.elements = self.elements + n
        self.bytes = self.bytes + n * (byte_size(element_type) or 0)


@dataclass
class Cost:
    """What a kernel (one structured op, or a group) reads and writes from memory and
    computes; `intensity` and `flops_per_byte` are exact fractions (`ratio`)."""

    read: Traffic = field(default_factory=Traffic)
    written: Traffic = field(default_factory=Traffic)
    flops: Poly = field(default_factory=Poly)
    binding: dict | None = None

    @property
    def moved(self) -> Poly:
        return self.read.elements + self.written.elements

    @property
    def intensity(self) -> Fraction | None:
        """Flops per element moved."""
        return ratio(self.flops, self.moved, self.binding)

    @property
    def flops_per_byte(self) -> Fraction | None:
        return ratio(self.flops, self.read.bytes + self.written.bytes, self.binding)


def element_type(v: Value):
    return v.type.element if isinstance(v.type, ShapedType) else v.type


def flops_per_point(op: StructuredOp) -> int:
    """The floating-point ops of `op`'s body (see the module docstring)."""
    n = 0
    for o in _body_ops(op):
        if o.name in _NOT_FLOPS or o.name.partition(".")[0] not in ("arith", "math"):
            continue
        if any(_is_float(r.type) for r in o.results) and \
                any(_is_float(x.type) for x in o.operands):
            n += 1
    return n


def _is_float(t) -> bool:
    return isinstance(t, FloatType) or (isinstance(t, VectorType) and
                                        isinstance(t.element, FloatType))


def iteration_points(op: StructuredOp, names: DimNames) -> Poly:
    operands = op.structured_operands()
    out = Poly.const(1)
    for r in op.loop_ranges(lambda i, d: names.dim(operands[i], d)):
        out = out * r
    return out


def _gathered(op: StructuredOp) -> list[Value]:
    """The arrays `op`'s body reads an element of (a gather), once per iteration point."""
    return [o.operands[0] for o in _body_ops(op)
            if isinstance(o, (ExtractOp, LoadOp)) and isinstance(o.operands[0].type, ShapedType)]


def _body_ops(op: StructuredOp):
    """Every op of `op`'s body, nested ones included."""
    return [n for o in op.regions[0].ops for n in o.walk()]


def _reads(op: StructuredOp) -> list[Value]:
    """The shaped operands `op` reads whole: its inputs and the inits its body reads."""
    n_in = len(op.inputs)
    return [v for i, v in enumerate(op.structured_operands())
            if isinstance(v.type, ShapedType) and (i < n_in or op.payload_uses(i))]


def op_cost(op: StructuredOp, names: DimNames | None = None,
            binding: dict | None = None) -> Cost:
    """The cost of `op` as a kernel of its own."""
    return group_cost([op], names, binding)


def group_cost(ops, names: DimNames | None = None, binding: dict | None = None) -> Cost:
    """The cost of the structured ops `ops` run as one kernel: arrays made and read only
    inside it are no traffic, arrays read by several members count once."""
    names = names or DimNames.around(ops)
    members = [o for o in ops if isinstance(o, StructuredOp)]
    inside = set(members)
    cost = Cost(binding=binding)
    seen: set[Value] = set()
    for op in members:
        points = iteration_points(op, names)
        cost.flops = cost.flops + points * flops_per_point(op)
        for v in _reads(op):
            if v not in seen and not _made_inside(v, inside):
                seen.add(v)
                cost.read.add(names.numel(v), element_type(v))
        for v in _gathered(op):
            cost.read.add(points, element_type(v))
        for r in op.results:
            if any(_outside_user(u, inside) for u in r.users):
                cost.written.add(names.numel(r), element_type(r))
        if not op.results:                  # on memrefs: every output is written
            for v in op.outputs:
                cost.written.add(names.numel(v), element_type(v))
    return cost


def _made_inside(v: Value, inside: set) -> bool:
    return not isinstance(v, BlockArgument) and v.owner in inside


def _outside_user(user: Operation, inside: set) -> bool:
    """Whether `user` (nested ops counted at the member holding them) is not a member."""
    op = user
    while op is not None:
        if op in inside:
            return False
        op = op.parent_op
    return True


def is_expensive(op: StructuredOp) -> bool:
    """A reduction (matmul, convolution, row sums): what fusion must never compute twice."""
    return REDUCTION in op.iterator_types_list()


def passes_over(ops, v: Value) -> int:
    """How many members of `ops` read the array `v` (each is one sweep over it: its own
    loop over the elements; a gather counts as one)."""
    return sum(1 for o in ops if isinstance(o, StructuredOp)
               and (v in _reads(o) or v in _gathered(o)))


# ---------------------------------------------------------------------------------------------
# Legality: the shared outer dims
# ---------------------------------------------------------------------------------------------


def leading_identity(m: AffineMap, k: int) -> int:
    """How many of the first `k` results of `m` are `d0, d1, ...` in order."""
    n = 0
    while n < min(k, len(m.results)) and m.results[n] == AffineDim(n):
        n += 1
    return n


def leading_parallel(op: StructuredOp) -> int:
    its = op.iterator_types_list()
    n = 0
    while n < len(its) and its[n] != REDUCTION:
        n += 1
    return n


def outer_dims(ops, names: DimNames | None = None) -> tuple[int, str | None]:
    """The number of leading loops the structured ops `ops` (program order) can share, and
    when it is 0 why (the ops and maps that break it); see the module docstring."""
    names = names or DimNames.around(ops)
    members = [o for o in ops if isinstance(o, StructuredOp)]
    if not members:
        return 0, "no structured op"
    k = min(leading_parallel(o) for o in members)
    why = None
    if not k:
        flat = next(o for o in members if not leading_parallel(o))
        why = (f"'{_describe(flat)}' (iterators [{', '.join(flat.iterator_types_list())}], "
               f"maps {', '.join(map(str, flat.indexing_maps_list()))}) has no leading "
               "parallel loop")
    first = members[0]
    first_ranges = _ranges(first, names)
    for op in members:
        if not k:
            break
        ranges = _ranges(op, names)
        same = 0
        while same < k and ranges[same] == first_ranges[same]:
            same += 1
        if same < k:
            k = same
            if not k:
                why = (f"'{_describe(op)}' loops over ({', '.join(map(str, ranges))}) but "
                       f"'{_describe(first)}' over ({', '.join(map(str, first_ranges))})")
        k, why = _check_edges(op, members, k, why)
    return k, why


def _check_edges(op: StructuredOp, members: list, k: int, why: str | None):
    """Lower `k` to what the values `op` reads from other members allow."""
    inside = set(members)
    maps = op.indexing_maps_list()
    for i, v in enumerate(op.structured_operands()):
        if not _made_inside(v, inside):
            continue
        producer = v.owner
        written = producer.indexing_maps_list()[len(producer.inputs) + v.index]
        n = min(leading_identity(written, k), leading_identity(maps[i], k))
        if n < k:
            k = n
            if not k:
                why = (f"'{_describe(producer)}' writes a value through {written} and "
                       f"'{_describe(op)}' reads it through {maps[i]}: no shared outer "
                       "parallel dim")
    for v in _gathered(op):
        if _made_inside(v, inside):
            return 0, (f"'{_describe(op)}' gathers from a value '{_describe(v.owner)}' "
                       "makes: it needs all of it first")
    return k, why


def _ranges(op: StructuredOp, names: DimNames) -> list[Poly]:
    operands = op.structured_operands()
    return op.loop_ranges(lambda i, d: names.dim(operands[i], d))


def _describe(op: Operation) -> str:
    loc = op.location
    where = f" at {loc}" if loc is not None and str(loc) not in ("", "loc(unknown)") else ""
    return f"{op.name}{where}"


def scalar_refusal(ops) -> str | None:
    """Why the structured ops `ops` cannot be a scalar group (no outer loops, see the module
    docstring), or None: a member with a parallel loop, or a value passed between members
    that is not 0-d."""
    members = [o for o in ops if isinstance(o, StructuredOp)]
    inside = set(members)
    if any(it != REDUCTION for o in members for it in o.iterator_types_list()):
        # the reason `outer_dims` gives names the op; a fixed text, so a report says it once
        return "a member has a parallel loop, which a group without outer loops would run " \
            "on one thread"
    for op in members:
        for v in op.structured_operands() + _gathered(op):
            if _made_inside(v, inside) and getattr(v.type, "rank", 0) != 0:
                return (f"'{_describe(op)}' reads a {v.type} from '{_describe(v.owner)}': "
                        "only 0-d values pass between the ops of a scalar group")
    return None


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def footprint(ops, k: int, names: DimNames | None = None) -> Poly:
    """Bytes of the intermediates (values made and read only inside `ops`) one point of the
    first `k` loops holds: each one's extent beyond its first `k` axes."""
    names = names or DimNames.around(ops)
    members = [o for o in ops if isinstance(o, StructuredOp)]
    inside = set(members)
    total = Poly()
    for op in members:
        for r in op.results:
            if any(_outside_user(u, inside) for u in r.users):
                continue
            row = Poly.const(byte_size(element_type(r)) or 0)
            for a in range(k, r.type.rank):
                row = row * names.dim(r, a)
            total = total + row
    return total


def refusal(ops, recomputed=(), names: DimNames | None = None, binding: dict | None = None,
            budget: int = FOOTPRINT_BUDGET) -> str | None:
    """Why the structured ops `ops` should not be one kernel, or None. `recomputed`: the
    members the candidate would duplicate (computed in another kernel too)."""
    names = names or DimNames.around(ops)
    for op in recomputed:
        if isinstance(op, StructuredOp) and is_expensive(op):
            return (f"recomputes '{_describe(op)}', a reduction "
                    f"({op_cost(op, names, binding).flops} flops), in a second kernel")
    k, why = outer_dims(ops, names)
    if k == 0:
        scalar_why = scalar_refusal(ops)
        if scalar_why is not None:
            return f"incompatible iteration spaces: {why}; not a scalar group: {scalar_why}"
    size = footprint(ops, k, names)
    if size.evaluate(binding) > budget:
        return (f"intermediates of {size} bytes per point of the {k} outer loop(s) exceed "
                f"the {budget}-byte budget")
    return None
