"""What the loop transformations (`loop-tile`, `loop-interchange`, `loop-unroll`,
`loop-unroll-and-jam`) share: bands of loops, the memory dependences between their
iterations (asked before iterations of `loop.for`s are reordered), and arithmetic on loop
bounds that folds constants as it builds.

A *band* is a perfect nest of `loop.for`s: each loop's body holds the next loop and nothing
else but pure ops that only that next loop uses (they can be sunk into the innermost body,
see `Band.sink`). Its loops carry no values (an iteration that passes a value to the next
fixes their order), except a band of one loop, which a transformation may strip-mine but
never reorders, and it is rectangular: every bound and step is defined above the band, so
the loops can be permuted. (`loop.parallel` needs none of this: its iterations are
independent by definition.)

Dependences. Two iterations `i` and `i'` of a band conflict when one writes a memory
location that the other reads or writes. What this module computes is the set of possible
sign patterns of `delta = i - i'` over the band's loops (each entry -1, 0 or +1, the
all-zero pattern left out: accesses within one iteration keep their order under every
transformation here). A transformation is legal when it keeps the order of every such pair:

- a permutation `p` of the band's loops: the first nonzero sign of `delta` and of the
  permuted `delta` agree (`permutation_keeps_order`);
- tiling: the band is fully permutable, no pattern has both a +1 and a -1 (`tileable`);
- unroll-and-jam of a loop: no dependence at all between two of its iterations.

Algorithm (conservative: every approximation adds patterns, never removes one):
  1. Collect the accesses of the band's innermost body (nested ops included) from their
     `memory_effects()`. An op with unknown effects, or an allocation or free of a buffer
     from outside, makes the band unanalyzable (`Unanalyzable`, with the reason). Accesses
     to a buffer allocated inside the band are private to an iteration and ignored.
  2. Buffers are traced to their root through their views (`root_of`). Accesses to
     two different roots are independent when both roots are allocations or arguments of the
     enclosing function (the calling convention of docs/lowering.md: no two arguments
     share memory); otherwise, and when either access is not a `load` / `store` /
     `vector_load` / `vector_store` or the two go through different views of a root, every
     pattern is possible.
  3. For a pair of element accesses, each index is read as an affine form of the band's
     induction variables (through `addi`, `subi`, `muli` by a constant) plus values defined
     above the band plus a constant. A dimension whose two forms have the same induction
     variable coefficients and the same outside values gives one equation `C . delta = b`
     (a range of `b` for the last dimension of vector accesses, whose elements span the
     vector's width); any other dimension gives none (dropping an equation only adds
     solutions).
  4. The rational solutions are `p + span(null space of C)`: components outside the null
     space's support are fixed (no dependence if such a component is fractional); with a
     one-dimensional null space the signs of `p + t v` are enumerated exactly at the
     breakpoints of `t`; with more, each free component may have any sign.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.opdef import IsolatedFromAbove, Pure, Terminator, has_trait
from irkit.rewrite import constant_value, is_pure
from irkit.dialects import arith
from irkit.dialects.arith import materialize_constant
from irkit.dialects.loop import ForOp, ParallelOp
from irkit.dialects.memory import (
    ALLOCATE, FREE, WRITE, AllocOp, ArenaOp, CollapseShapeOp, LoadOp, StoreOp, SubviewOp,
    VectorLoadOp, VectorStoreOp, ViewOp, effects_of, strides_and_offset,
)


class Unanalyzable(Exception):
    """Why the dependences of a band are unknown (the transformations' remark)."""


# ---------------------------------------------------------------------------------------------
# Bands
# ---------------------------------------------------------------------------------------------


@dataclass
class Band:
    """A perfect, rectangular nest of `loop.for`s, outermost first, and the pure ops between
    them that `sink` moves into the innermost body to make the nest perfect."""

    loops: list[ForOp]
    between: list[Operation] = field(default_factory=list)

    @property
    def innermost(self) -> ForOp:
        return self.loops[-1]

    def sink(self) -> None:
        """Move the ops between the loops to the start of the innermost body, in order
        (they are pure and only the next loop uses them, so running them there, once per
        innermost iteration, computes the same values; LICM hoists them again)."""
        block = self.innermost.body.blocks[0]
        anchor = block.first
        for op in self.between:
            op.detach()
            block.insert_before(anchor, op)


def _used_only_inside(op: Operation, loop: Operation) -> bool:
    return all(loop.is_ancestor_of(user) for r in op.results for user in r.users)


def _next_in_band(loop: ForOp, outer: ForOp) -> tuple[ForOp | None, list[Operation]]:
    """The loop perfectly nested in `loop` that may join a band started at `outer` (and the
    pure ops before it), or None."""
    ops = [o for o in loop.body.blocks[0].ops if not has_trait(o, Terminator)]
    loops = [o for o in ops if isinstance(o, ForOp)]
    if len(loops) != 1 or loops[0] is not ops[-1] or loops[0].init_args:
        return None, []
    child, between = loops[0], ops[:-1]
    if any(o.regions or not is_pure(o) or not _used_only_inside(o, child) for o in between):
        return None, []
    if not all(outer.is_defined_outside(v)
               for v in (child.lower_bound, child.upper_bound, child.step)):
        return None, []
    return child, between


def outermost_loops(root: Operation) -> list[Operation]:
    """The `loop.for`s and `loop.parallel`s nested in `root` that no other one encloses."""
    found = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for nested in region.ops:
                if isinstance(nested, (ForOp, ParallelOp)):
                    found.append(nested)
                else:
                    visit(nested)

    visit(root)
    return found


def for_band(outer: ForOp, depth: int | None = None) -> Band:
    """The band that starts at `outer`, at most `depth` loops deep (None: as deep as it
    goes). A loop that carries values is a band of one."""
    band = Band([outer])
    loop = outer
    while not loop.init_args and (depth is None or len(band.loops) < depth):
        child, between = _next_in_band(loop, outer)
        if child is None:
            break
        band.loops.append(child)
        band.between += between
        loop = child
    return band


# ---------------------------------------------------------------------------------------------
# Accesses
# ---------------------------------------------------------------------------------------------


@dataclass
class Access:
    op: Operation
    memref: Value
    root: Value
    write: bool
    indices: list[Value] | None         # None: the op touches the buffer as a whole
    width: int = 1                      # elements along the last dimension


def unit_last_stride(memref: Value) -> bool:
    """Whether a memref's elements are adjacent along its last dimension (stride 1), so
    that an index moving by one there moves by one element in memory."""
    layout = strides_and_offset(memref.type)
    return layout is not None and layout[0][-1:] == (1,)


def root_of(memref: Value) -> Value:
    """The buffer a memref value is a view of (through `memory.view`, `memory.subview`,
    `memory.collapse_shape`: the pure ops that make a memref from another)."""
    while True:
        op = memref.defining_op()
        if isinstance(op, (SubviewOp, ViewOp, CollapseShapeOp)):
            memref = op.operands[0]
        else:
            return memref


def is_identified(root: Value) -> bool:
    """Whether `root` is a buffer of its own: an allocation, or an argument of the function
    (no two arguments share memory, by the calling convention)."""
    op = root.defining_op()
    if isinstance(op, (AllocOp, ArenaOp)):
        return True
    if isinstance(root, BlockArgument):
        block = root.owner
        parent = block.parent_op
        return (parent is not None and has_trait(parent, IsolatedFromAbove)
                and parent.regions[0].blocks[0] is block)
    return False


def _access(op: Operation, kind: str, buffer: Value) -> Access:
    write = kind == WRITE
    root = root_of(buffer)
    if isinstance(op, (LoadOp, StoreOp)) and op.memref is buffer:
        return Access(op, buffer, root, write, list(op.indices))
    if isinstance(op, (VectorLoadOp, VectorStoreOp)) and op.memref is buffer:
        t = op.result.type if isinstance(op, VectorLoadOp) else op.value.type
        return Access(op, buffer, root, write, list(op.indices), t.shape[0])
    return Access(op, buffer, root, write, None)


def accesses(region_op: Operation, scope: Operation) -> list[Access]:
    """The reads and writes of the ops nested in `region_op` (not itself) to buffers from
    outside `scope`; raises `Unanalyzable`."""
    found = []
    for op in region_op.walk():
        if op is region_op or (op.regions and has_trait(op, Pure)):
            continue            # a pure op with regions has the effects of the ops inside
        effects = effects_of(op)
        if effects is None:
            if has_trait(op, Terminator):
                continue
            raise Unanalyzable(f"'{op.name}' has unknown memory effects")
        for kind, buffer in effects:
            root = root_of(buffer)
            if not scope.is_defined_outside(root):
                if isinstance(root.defining_op(), (AllocOp, ArenaOp)):
                    continue    # allocated in an iteration: private to it
                raise Unanalyzable(f"'{op.name}' accesses a buffer of unknown origin")
            if kind in (ALLOCATE, FREE):
                raise Unanalyzable(f"'{op.name}' allocates or frees a buffer from outside")
            found.append(_access(op, kind, buffer))
    return found


# ---------------------------------------------------------------------------------------------
# Affine index forms
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Affine:
    """`sum(coeffs[k] * iv_k) + sum(c * s for s, c in symbols) + const`."""

    coeffs: tuple[int, ...]
    symbols: frozenset
    const: int

    def plus(self, other: Affine, sign: int = 1) -> Affine:
        syms = dict(self.symbols)
        for s, c in other.symbols:
            syms[s] = syms.get(s, 0) + sign * c
        return Affine(tuple(a + sign * b for a, b in zip(self.coeffs, other.coeffs)),
                       frozenset((s, c) for s, c in syms.items() if c),
                       self.const + sign * other.const)

    def scaled(self, k: int) -> Affine:
        return Affine(tuple(k * a for a in self.coeffs),
                       frozenset((s, k * c) for s, c in self.symbols if k * c), k * self.const)

    @property
    def constant(self) -> int | None:
        return self.const if not any(self.coeffs) and not self.symbols else None


class AffineForms:
    """Affine forms of index values over the induction variables `ivs` of loops nested in
    (or being) `outer` (memoized); values defined above `outer` are symbols."""

    def __init__(self, ivs: list[Value], outer: Operation) -> None:
        self.outer = outer
        self.ivs = {iv: k for k, iv in enumerate(ivs)}
        self.n = len(ivs)
        self.memo: dict[Value, Affine | None] = {}

    def of(self, v: Value) -> Affine | None:
        if v not in self.memo:
            self.memo[v] = self._compute(v)
        return self.memo[v]

    def _compute(self, v: Value) -> Affine | None:
        zero = (0,) * self.n
        a = constant_value(v)
        if isinstance(a, IntegerAttr):
            return Affine(zero, frozenset(), int(a.value))
        k = self.ivs.get(v)
        if k is not None:
            return Affine(tuple(int(j == k) for j in range(self.n)), frozenset(), 0)
        if self.outer.is_defined_outside(v):
            return Affine(zero, frozenset({(v, 1)}), 0)
        op = v.defining_op()
        if isinstance(op, (arith.AddIOp, arith.SubIOp, arith.MulIOp)):
            lhs, rhs = self.of(op.lhs), self.of(op.rhs)
            if lhs is None or rhs is None:
                return None
            if isinstance(op, arith.AddIOp):
                return lhs.plus(rhs)
            if isinstance(op, arith.SubIOp):
                return lhs.plus(rhs, -1)
            if rhs.constant is not None:
                return lhs.scaled(rhs.constant)
            if lhs.constant is not None:
                return rhs.scaled(lhs.constant)
        return None


# ---------------------------------------------------------------------------------------------
# Solving C . delta = b
# ---------------------------------------------------------------------------------------------


def _solve(rows: list[tuple[int, ...]], rhs: list[int], n: int):
    """(a particular rational solution or None, a basis of the null space of the rows)."""
    m = [[Fraction(x) for x in row] + [Fraction(b)] for row, b in zip(rows, rhs)]
    pivots, r = [], 0
    for c in range(n):
        p = next((i for i in range(r, len(m)) if m[i][c] != 0), None)
        if p is None:
            continue
        m[r], m[p] = m[p], m[r]
        m[r] = [x / m[r][c] for x in m[r]]
        for i in range(len(m)):
            if i != r and m[i][c] != 0:
                m[i] = [x - m[i][c] * y for x, y in zip(m[i], m[r])]
        pivots.append(c)
        r += 1
    if any(row[n] != 0 for row in m[r:]):
        return None, []
    particular = [Fraction(0)] * n
    for i, c in enumerate(pivots):
        particular[c] = m[i][n]
    basis = []
    for f in (c for c in range(n) if c not in pivots):
        v = [Fraction(0)] * n
        v[f] = Fraction(1)
        for i, c in enumerate(pivots):
            v[c] = -m[i][f]
        basis.append(v)
    return particular, basis


def _sign(x) -> int:
    return (x > 0) - (x < 0)


def _patterns(particular, basis, n: int) -> set[tuple[int, ...]]:
    """Sign patterns of the integer points of `particular + span(basis)` (over-approximated
    as described in the module docstring)."""
    free = {k for v in basis for k in range(n) if v[k] != 0}
    if any(k not in free and particular[k].denominator != 1 for k in range(n)):
        return set()
    if len(basis) == 1:
        (v,) = basis
        breaks = sorted({-particular[k] / v[k] for k in free})
        ts = breaks + [b + Fraction(1, 2) * (c - b) for b, c in zip(breaks, breaks[1:])]
        ts += [breaks[0] - 1, breaks[-1] + 1]
        return {tuple(_sign(p + t * x) for p, x in zip(particular, v)) for t in ts}
    choices = [(-1, 0, 1) if k in free else (_sign(particular[k]),) for k in range(n)]
    return set(itertools.product(*choices))


def _pair_patterns(a: Access, b: Access, forms: AffineForms) -> set[tuple[int, ...]]:
    n = forms.n
    anything = set(itertools.product((-1, 0, 1), repeat=n))
    if a.root is not b.root:
        return set() if is_identified(a.root) and is_identified(b.root) else anything
    if a.memref is not b.memref or a.indices is None or b.indices is None:
        return anything
    rows, ranges = [], []
    last = len(a.indices) - 1
    for d, (x, y) in enumerate(zip(a.indices, b.indices)):
        fx, fy = forms.of(x), forms.of(y)
        if fx is None or fy is None or fx.coeffs != fy.coeffs or fx.symbols != fy.symbols:
            continue                            # no equation from this dimension
        diff = fy.const - fx.const
        rows.append(fx.coeffs)
        if d == last:
            ranges.append(range(diff - (a.width - 1), diff + b.width))
        else:
            ranges.append(range(diff, diff + 1))
    found: set = set()
    for rhs in itertools.product(*ranges):
        particular, basis = _solve(rows, list(rhs), n)
        if particular is not None:
            found |= _patterns(particular, basis, n)
    return found


def dependence_patterns(loops: list[ForOp]) -> set[tuple[int, ...]]:
    """The sign patterns of `i - i'` over `loops` (a band, outermost first) for every two
    iterations that touch one memory location, one of them writing; the all-zero pattern
    left out. Raises `Unanalyzable`."""
    found = accesses(loops[-1], loops[0])
    forms = AffineForms([loop.induction_var for loop in loops], loops[0])
    patterns: set = set()
    for i, a in enumerate(found):
        for b in found[i:]:
            if a.write or b.write:
                patterns |= _pair_patterns(a, b, forms)
    patterns.discard((0,) * len(loops))
    return patterns


def _first_sign(pattern) -> int:
    return next((s for s in pattern if s), 0)


def permutation_keeps_order(patterns: set, perm: list[int]) -> bool:
    """Whether running the band's loops in the order `perm` (`perm[p]` = the original loop
    at position p) keeps every dependent pair of iterations in its order."""
    return all(_first_sign(s) == _first_sign([s[k] for k in perm]) for s in patterns)


def tileable(patterns: set) -> bool:
    """Whether the band is fully permutable (so tiling it keeps every dependence)."""
    return all(not (1 in s and -1 in s) for s in patterns)


# ---------------------------------------------------------------------------------------------
# Arithmetic on loop bounds
# ---------------------------------------------------------------------------------------------


def int_of(v: Value) -> int | None:
    """The signed value of the integer constant that defines `v`, or None."""
    a = constant_value(v)
    if not isinstance(a, IntegerAttr):
        return None
    width = getattr(v.type, "width", 64)
    value = int(a.value) & ((1 << width) - 1)
    return value - (1 << width) if value >> (width - 1) else value


def trip_count(lb: Value, ub: Value, step: Value) -> int | None:
    """How many times a loop with these bounds runs, when they are constants."""
    lo, hi, s = int_of(lb), int_of(ub), int_of(step)
    if lo is None or hi is None or s is None or s <= 0:
        return None
    return max(0, -(-(hi - lo) // s))


class Constants:
    """Integer constants made once per function, at the top of its entry block (the entry
    block of the nearest op isolated from above), so each dominates every loop there."""

    def __init__(self) -> None:
        self.pool: dict[tuple, Value] = {}

    def get(self, block: Block, value: int, t) -> Value:
        """`arith.constant value : t` visible in `block`."""
        while True:
            op = block.parent_op
            if op is None or op.parent is None:
                break
            if has_trait(op, IsolatedFromAbove):
                block = op.regions[0].blocks[0]
                break
            block = op.parent
        key = (block, value, t)
        v = self.pool.get(key)
        if v is None:
            c = materialize_constant(IntegerAttr(value, t), t)
            block.insert_before(block.first, c)
            v = self.pool[key] = c.results[0]
        return v


class BoundArith:
    """Integer arithmetic of one type (`index`, or the integer type of a loop's bounds) at a
    builder's insertion point, on values or plain ints; constant operands are folded, so
    static bounds stay constants that the next transformation (and the reader) can see."""

    def __init__(self, b: Builder, t, constants: Constants) -> None:
        self.b = b
        self.t = t
        self.constants = constants

    def value(self, x: Value | int) -> Value:
        if isinstance(x, int):
            return self.constants.get(self.b.ip.block, x, self.t)
        return x

    def _binary(self, cls, fold, x: Value | int, y: Value | int) -> Value:
        cx = x if isinstance(x, int) else int_of(x)
        cy = y if isinstance(y, int) else int_of(y)
        if cx is not None and cy is not None:
            return self.value(fold(cx, cy))
        return self.b.create(cls, self.value(x), self.value(y)).result

    def add(self, x: Value | int, y: Value | int) -> Value:
        if y == 0 or (not isinstance(y, int) and int_of(y) == 0):
            return self.value(x)
        return self._binary(arith.AddIOp, lambda p, q: p + q, x, y)

    def sub(self, x: Value | int, y: Value | int) -> Value:
        if y == 0 or (not isinstance(y, int) and int_of(y) == 0):
            return self.value(x)
        return self._binary(arith.SubIOp, lambda p, q: p - q, x, y)

    def mul(self, x: Value | int, y: Value | int) -> Value:
        if y == 1 or (not isinstance(y, int) and int_of(y) == 1):
            return self.value(x)
        return self._binary(arith.MulIOp, lambda p, q: p * q, x, y)

    def min(self, x: Value | int, y: Value | int) -> Value:
        return self._binary(arith.MinSIOp, min, x, y)

    def rem(self, x: Value | int, y: Value | int) -> Value:
        """Signed remainder, truncated (the sign of `x`), as `arith.remsi`."""
        return self._binary(arith.RemSIOp, lambda p, q: abs(p) % abs(q) * (1 if p >= 0 else -1),
                            x, y)

    def split_point(self, lb: Value, ub: Value, chunk: Value | int) -> Value:
        """`ub - (ub - lb) rem chunk`: `lb` plus the most whole chunks that fit below `ub`
        (or, when `ub < lb`, a point where both a main loop from `lb` and a remainder loop
        to `ub` are empty)."""
        return self.sub(ub, self.rem(self.sub(ub, lb), chunk))
