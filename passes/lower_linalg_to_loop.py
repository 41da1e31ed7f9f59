"""lower-linalg-to-loop: structured ops on buffers to loop nests, one emitter for every op.

Every linalg op (generic or named) states a loop nest as data: loop ranges taken from its
operands' shapes, one affine map per operand, `parallel` / `reduction` iterators and a scalar
body. `LoopEmitter` reads exactly that (a named op through `generalize`, so its body is the
one its class builds: no second description of any op here) and writes the nest out as
`loop.parallel` / `loop.for` over `memory.load` / `memory.store` and the body's own ops.

The nest for iterators `[p0, r0, p1, r1]` (`pN` parallel, `rN` reduction):

    %n = memory.dim ...                            bounds: constants, or one dim per buffer
    %s = memory.load %zero_d[]                     and axis; 0-d inputs hoisted here
    loop.parallel (%p0, %p1) = ... {               all parallel dims, outermost
      %acc0 = memory.load %out[%p0, %p1]           output elements, once per parallel point
      %row = memory.load %in[%p0]                  inputs that use parallel dims only
      %r = loop.for %r0 = ... iter_args(%a = %acc0) -> (f32) {
        %r' = loop.for %r1 = ... iter_args(%b = %a) -> (f32) {
          %x = memory.load %m[%p0, %r0 + %r1]      the rest of the inputs
          ...                                      the body, cloned in order
          loop.yield %new : f32                    what linalg.yield gives
        }
        loop.yield %r' : f32
      }
      memory.store %r, %out[%p0, %p1]              stored once
    }

Why the parallel dims may move outside the reduction dims. The meaning of a structured op
(dialects/linalg/semantics.py, as MLIR's) is: for each point of the parallel dims, fold the
body over the points of the reduction dims in lexicographic order, starting from the output
element's value. Parallel points are independent: two of them writing one element, or one
reading what another writes, makes the op undefined. So any order of the parallel points
is the op's meaning, including "all of them outermost", and putting every reduction loop
inside, in their original relative order, visits each parallel point's reduction points in
exactly the order the op folds them. The reordering changes no value, only which memory is
touched together (MLIR's convert-linalg-to-parallel-loops nests the same way).

Register accumulation. An output element whose map uses none of the reduction dims below
some level of the nest is the same element all through those loops: it is loaded once above
them, carried through them as `loop.for` `iter_args`, and stored once after them (what
`Accumulator` did for the per-op lowerings, minus the widening: a body that wants an f64
sum says so in its ops). Usually that is the parallel body, for every reduction loop; an
output whose map uses an outer reduction dim is carried through the reduction loops
inside that dim's loop; an output whose map uses the innermost reduction dim is loaded
(when the body reads it) and stored every iteration.

Hoisting. Every index expression and every input load is computed at the outermost level
where the loop indices it uses are defined: a 0-d input before the nest, an input that
depends only on parallel dims in the parallel body, above the reduction loops. A load that
moves above a loop could run where the original did not (the loop runs zero times). That is
harmless when each index is a bare loop index (a valid op has operand sizes equal to its
loop ranges, so the index is in bounds for every point of the outer loops) or when the
loops it moves above are statically not empty; otherwise it stays below them. Moving a
load above stores is sound because an op's inputs do not alias the elements its other
points write (a buffer both read and written is defined only when each point reads the
element it writes, in place, which a load in the same iteration still does).

Fused nests. A `fusion.group` on memrefs (`linalg-fuse`, then `bufferize`) is one nest: a
`loop.parallel` over the group's `outer_dims`, and inside it each member's nest, built by
the same `_Nest` with those loops' induction values given (its remaining parallel dims
become `loop.for`s: the threads are the outer loop's). Running every member for one outer
point before the next point is the members' meaning because `linalg-fuse` only groups ops
whose values pass between them through maps that start with the outer dims (a consumer at
one point reads only what the producer wrote at that point). The buffers passed between
members are then forwarded or shrunk (`passes/fusion_buffers.py`). A group without outer
dims (a scalar group: a loss's sum and the arithmetic on it) is its members' nests in
order, in no enclosing loop: the program's own order, so nothing to prove; its 0-d values
are forwarded the same way, from the store after one member's loop to the next member's
load.

The body's other ops are cloned in their order and unchanged (their fastmath flags
included, none added), so floats round exactly as the op says; `linalg.index k` becomes the
index of loop k; a `memory.load` of another buffer (bufferize's gathers) is cloned as it is.
"""

from __future__ import annotations

from irkit.affine import AffineBinary, AffineConst, AffineDim, AffineExpr, AffineMap
from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, Operation, Value
from irkit.opdef import IsolatedFromAbove, has_trait
from irkit.pass_manager import Pass, register_pass
from irkit.rewrite import is_pure
from irkit.types import I64, INDEX, MemRefType
from irkit.dialects import arith
from irkit.dialects.arith import CMPI_PREDICATES
from irkit.dialects.linalg import PARALLEL, GenericOp, IndexOp, StructuredOp, linalg
from irkit.dialects.linalg import YieldOp as LinalgYieldOp
from irkit.dialects.linalg.structured import dims_of
from irkit.dialects.fusion import GroupOp
from irkit.dialects.loop import ForOp, ParallelOp, YieldOp
from irkit.dialects.memory import AllocOp, CopyOp, DeallocOp, DimOp, LoadOp, StoreOp
from irkit.passes import fusion_buffers
from irkit.passes.constant_pool import ConstantPool


def map_dims(m: AffineMap) -> set[int]:
    """The loop dims any result of `m` uses."""
    used: set[int] = set()
    for e in m.results:
        used |= dims_of(e)
    return used


def is_projection(m: AffineMap) -> bool:
    """Each result a bare loop index: in bounds wherever the loops are (see the module
    docstring), so a load at these indices may be hoisted above any loop it does not use."""
    return all(isinstance(e, AffineDim) for e in m.results)


#: affine binary operations on index values: the folding (Python's `//` and `%` round as
#: MLIR's floordiv and mod for the positive divisors affine maps have) and the arith op
_FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "floordiv": lambda a, b: a // b, "ceildiv": lambda a, b: -((-a) // b),
         "mod": lambda a, b: a % b}
_SLT = IntegerAttr(CMPI_PREDICATES.index("slt"), I64)
_SGT = IntegerAttr(CMPI_PREDICATES.index("sgt"), I64)
_ARITH = {"add": arith.AddIOp, "sub": arith.SubIOp, "mul": arith.MulIOp,
          "floordiv": arith.FloorDivSIOp, "ceildiv": arith.CeilDivSIOp}


# ---------------------------------------------------------------------------------------------
# Values shared by the nests of a pass run
# ---------------------------------------------------------------------------------------------


class IndexConstants:
    """`arith.constant N : index`, made once per function at the top of its entry block, so
    each dominates every nest of the function (the entry block of the nearest op isolated
    from above; for an op in no such op, the block holding it)."""

    def __init__(self) -> None:
        self._pools: dict[Block, ConstantPool] = {}

    @staticmethod
    def scope(op: Operation) -> Block:
        parent = op.parent_op
        while parent is not None and not has_trait(parent, IsolatedFromAbove):
            parent = parent.parent_op
        if parent is not None and parent.regions and parent.regions[0].blocks:
            return parent.regions[0].blocks[0]
        return op.parent

    def get(self, near: Operation, value: int) -> Value:
        block = self.scope(near)
        pool = self._pools.get(block)
        if pool is None:
            pool = self._pools[block] = ConstantPool(block)
        return pool.get(value, INDEX, near.location)


# ---------------------------------------------------------------------------------------------
# The emitter
# ---------------------------------------------------------------------------------------------


class _Level:
    """One level of a nest: level 0 is the code before it, level L >= 1 the body of the
    loop(s) of group L. `hoist` inserts before the level's child loop (so what it makes
    dominates everything inside), `after` after it (the stores of carried outputs)."""

    __slots__ = ("hoist", "after", "loops", "carried")

    def __init__(self, hoist: Builder, after: Builder, loops=(), carried=()) -> None:
        self.hoist = hoist
        self.after = after
        #: the loop ops this level's group opens, outermost first
        self.loops: list[Operation] = list(loops)
        #: the outputs carried through those loops (their iter_args, in this order)
        self.carried: list[int] = list(carried)


class LoopEmitter:
    """Turns structured ops on memrefs into loop nests (see the module docstring).

        emitter = LoopEmitter(parallel=True)
        emitter.lower(op)          # op: a StructuredOp with buffer semantics; erased

    One emitter serves a whole pass run: index constants are made once per function and
    `memory.dim`s once per buffer, axis and block. `parallel=False` makes every loop a
    `loop.for` (the parallel dims outermost still)."""

    def __init__(self, parallel: bool = True) -> None:
        self.parallel = parallel
        self.constants = IndexConstants()
        #: (block, buffer, axis) -> its memory.dim, emitted before the first nest needing it
        self.dims: dict[tuple, Value] = {}

    def lower(self, op: StructuredOp, outer: list[Value] | None = None,
              top: Builder | None = None) -> None:
        """Replace `op` (buffer semantics, no results) by its loop nest; inside a fused nest,
        `outer` are the induction values of its first loops and `top` where sizes go."""
        if not op.has_buffer_semantics or op.results:
            raise op.error("lower-linalg-to-loop expects an op on memrefs (bufferize first)")
        generic = op if isinstance(op, GenericOp) else op.generalize(Builder.before(op))
        _Nest(self, generic, outer, top).emit()
        generic.erase()
        if generic is not op:
            op.erase()

    def lower_group(self, group: GroupOp) -> None:
        """Replace a `fusion.group` on memrefs by one nest (see `fused_layout`): its
        buffers before it, a `loop.parallel` over its outer dims holding each member's
        nest, the frees and copies after it; then forward and shrink its buffers
        (`fusion_buffers`). A group without outer dims runs its members' nests in order
        (`_lower_in_order`). A group whose ops do not fit that layout runs its ops one
        after another, each its own nest."""
        group.inline_captures()
        layout = fused_layout(group)
        if layout is None:
            members = [o for o in group.body.ops if isinstance(o, StructuredOp)]
            for o in list(group.body.ops)[:-1]:
                o.move_before(group)
            for o in members:
                self.lower(o)
            group.erase()
            return
        hoisted, members, after = layout
        for o in hoisted:
            o.move_before(group)
        local = [o for o in hoisted if isinstance(o, AllocOp)]
        if not group.num_outer_dims:
            self._lower_in_order(group, members, local)
            return
        first = members[0]
        operands = first.structured_operands()
        k = group.num_outer_dims
        ranges = first.loop_ranges(lambda i, d: self._size(group, operands[i], d))[:k]
        loops, body = self._outer_loops(group, ranges)
        for o in after:
            o.move_before(group)
        top = Builder.before(loops[0])
        for o in members:
            o.move_before(body.last)
            self.lower(o, list(_ivs(loops)), top)
        group.erase()
        fusion_buffers.optimize(body, local, _ivs(loops))

    def _lower_in_order(self, group: GroupOp, members: list[StructuredOp],
                        local: list[AllocOp]) -> None:
        """A group without outer dims: each member's nest where it stands in the body, the
        body's stores forwarded and its own buffers `local` dropped where only written
        (`fusion_buffers`), then the body's ops in place of the group."""
        top = Builder.before(group)
        for o in members:
            self.lower(o, [], top)
        fusion_buffers.optimize(group.body, local, [])
        for o in list(group.body.ops)[:-1]:
            o.move_before(group)
        group.erase()

    def _size(self, near: Operation, buf: Value, axis: int) -> Value:
        static = buf.type.shape[axis]
        if static is not None:
            return self.constants.get(near, static)
        key = (near.parent, buf, axis)
        v = self.dims.get(key)
        if v is None:
            v = Builder.before(near).create(DimOp, buf, axis=IntegerAttr(axis, I64)).result
            self.dims[key] = v
        return v

    def _outer_loops(self, group: GroupOp, ranges: list[Value]):
        """The loops of a fused nest's outer dims, before `group`: one `loop.parallel`
        (nested `loop.for`s with `parallel=false`); returns them and the innermost body."""
        b, location = Builder.before(group), group.location
        zero, one = self.constants.get(group, 0), self.constants.get(group, 1)
        if self.parallel:
            n = len(ranges)
            loop = ParallelOp.build([zero] * n, list(ranges), [one] * n, result_types=[],
                                    regions=1, location=location)
            block = Block([INDEX] * n)
            loop.regions[0].add_block(block)
            Builder.at_end(block).create(YieldOp, [], result_types=[], location=location)
            b.insert(loop)
            return [loop], block
        loops, block = [], None
        for r in ranges:
            loop = ForOp.build(zero, r, one, [], result_types=[], regions=1,
                               location=location)
            inner = Block([INDEX])
            loop.regions[0].add_block(inner)
            Builder.at_end(inner).create(YieldOp, [], result_types=[], location=location)
            if block is None:
                b.insert(loop)
            else:
                block.insert_before(block.last, loop)
            loops.append(loop)
            block = inner
        return loops, block


class _Nest:
    """The loop nest of one `linalg.generic` on memrefs, while it is built."""

    def __init__(self, emitter: LoopEmitter, op: GenericOp,
                 outer: list[Value] | None = None, top: Builder | None = None) -> None:
        self.emitter = emitter
        self.op = op
        self.maps = op.indexing_maps_list()
        self.n_in = len(op.inputs)
        #: the induction values of the first loops, opened by an enclosing fused nest
        self.outer = list(outer or [])
        iterators = op.iterator_types_list()
        n_outer = len(self.outer)
        par = [d for d, it in enumerate(iterators) if it == PARALLEL and d >= n_outer]
        red = [d for d, it in enumerate(iterators) if it != PARALLEL]
        self.has_parallel_group = bool(par)
        #: the dims each level opens: all parallel dims together, then one reduction each
        self.groups: list[list[int]] = ([par] if par else []) + [[d] for d in red]
        self.depth = len(self.groups)
        self.level_of = {d: g + 1 for g, dims in enumerate(self.groups) for d in dims}
        self.level_of.update((d, 0) for d in range(n_outer))
        start = self._builder(Builder.before(op))
        self.levels = [_Level(start, self._builder(Builder.before(op)))]
        #: where sizes are read (`memory.dim`): before the nest, or before the fused nest
        self.top = top or self.levels[0].hoist
        self.ivs: dict[int, Value] = dict(enumerate(self.outer))
        #: affine expression -> its index value (an int when constant); index value -> the
        #: level it is defined at (0 when absent: constants, values from above)
        self.exprs: dict[AffineExpr, int | Value] = {}
        self.value_levels: dict[Value, int] = {}

    def _builder(self, b: Builder) -> Builder:
        b.location = self.op.location
        return b

    # ----- bounds and placement -------------------------------------------------------------

    def size(self, operand: int, axis: int) -> Value:
        """The size of an operand's axis: a constant, or its one `memory.dim`."""
        buf = self.op.structured_operands()[operand]
        static = buf.type.shape[axis]
        if static is not None:
            return self.const(static)
        key = (self.top.ip.block, buf, axis)
        v = self.emitter.dims.get(key)
        if v is None:
            v = self.top.create(DimOp, buf, axis=IntegerAttr(axis, I64)).result
            self.emitter.dims[key] = v
        return v

    def const(self, value: int) -> Value:
        return self.emitter.constants.get(self.op, value)

    def safe_level(self) -> int:
        """The outermost level whose inner loops all surely run (static, non-zero ranges):
        code that is not always in bounds may be hoisted up to it."""
        static = self.op.loop_ranges()
        level = self.depth
        while level > 0 and all(static[d] is not None and static[d] > 0
                                for d in self.groups[level - 1]):
            level -= 1
        return level

    def level_of_map(self, m: AffineMap, floor: int = 0) -> int:
        """Where an access through `m` goes: the innermost level among the dims it uses (at
        least `floor`), and no higher than `safe_level` unless it is a projection."""
        level = max([floor, *(self.level_of[d] for d in map_dims(m))])
        if not is_projection(m):
            level = max(level, self.safe)
        return level

    # ----- affine index expressions ---------------------------------------------------------

    def expr(self, e: AffineExpr) -> Value:
        """`e` as an `index` value, computed at the outermost level where the values it is
        made of exist: MLIR's semantics (`mod` never negative, `floordiv` / `ceildiv`
        rounding down / up), constants folded, `a + b * -1` as a subtraction."""
        v = self.folded(e)
        return self.const(v) if isinstance(v, int) else v

    def folded(self, e: AffineExpr) -> int | Value:
        """`e` as an int when constants decide it, else as an `index` value."""
        v = self.exprs.get(e)
        if v is None:
            v = self.exprs[e] = self._materialize(e)
        return v

    def _materialize(self, e: AffineExpr) -> int | Value:
        if isinstance(e, AffineDim):
            return self.ivs[e.position]
        if isinstance(e, AffineConst):
            return e.value
        if not isinstance(e, AffineBinary):
            raise self.op.error(f"unexpected indexing map expression '{e}'")
        kind, rhs = e.kind, e.rhs
        if kind == "add" and isinstance(rhs, AffineBinary) and rhs.kind == "mul" and \
                rhs.rhs == AffineConst(-1):
            kind, rhs = "sub", rhs.lhs                          # a + b * -1 = a - b
        a, b = self.folded(e.lhs), self.folded(rhs)
        if isinstance(a, int) and isinstance(b, int):
            if b == 0 and kind in ("floordiv", "ceildiv", "mod"):
                raise self.op.error(f"indexing map expression '{e}' divides by zero")
            return _FOLD[kind](a, b)
        if kind in ("add", "mul") and isinstance(a, int):  # commutative: constant on the right
            a, b = b, a
        if kind in ("floordiv", "ceildiv", "mod") and not isinstance(b, int):
            raise self.op.error(f"indexing map expression '{e}' divides by a loop index "
                                "(affine maps divide by constants only)")
        if kind == "add" and isinstance(b, int) and b < 0:
            kind, b = "sub", -b                                 # a + -k = a - k
        if (kind in ("add", "sub") and b == 0) or \
                (kind in ("mul", "floordiv", "ceildiv") and b == 1):
            return a
        if (kind == "mul" and b == 0) or (kind == "mod" and b == 1):
            return 0
        sign = 1 if not isinstance(b, int) or b > 0 else -1
        a, b = (self.const(x) if isinstance(x, int) else x for x in (a, b))
        level = max(self.level(a), self.level(b))
        bld = self.levels[level].hoist
        if kind == "mod":
            v = self._mod(bld, a, b, sign)
        else:
            v = bld.create(_ARITH[kind], a, b).result
        self.value_levels[v] = level
        return v

    def _mod(self, bld: Builder, a: Value, m: Value, sign: int) -> Value:
        """`a mod m` with the sign of `m` (MLIR's affine `mod`: in [0, m) for the positive
        `m` it allows): the remainder, plus `m` where its sign is the other one."""
        rem = bld.create(arith.RemSIOp, a, m).result
        wrong = bld.create(arith.CmpIOp, rem, self.const(0),
                           predicate=_SLT if sign > 0 else _SGT).result
        shifted = bld.create(arith.AddIOp, rem, m).result
        return bld.create(arith.SelectOp, wrong, shifted, rem).result

    def level(self, v: Value) -> int:
        """The level an index value is defined at (0 for constants and code above)."""
        return self.value_levels.get(v, 0)

    def indices(self, m: AffineMap) -> list[Value]:
        return [self.expr(e) for e in m.results]

    # ----- accesses -------------------------------------------------------------------------

    def load(self, operand: int, level: int) -> Value:
        buf = self.op.structured_operands()[operand]
        idx = self.indices(self.maps[operand])
        return self.levels[level].hoist.create(LoadOp, buf, idx).result

    def store(self, value: Value, operand: int, b: Builder) -> None:
        buf = self.op.structured_operands()[operand]
        b.create(StoreOp, value, buf, self.indices(self.maps[operand]))

    # ----- the nest -------------------------------------------------------------------------

    def emit(self) -> None:
        self.ranges = self.op.loop_ranges(self.size)    # the verifier made the maps invertible
        self.safe = self.safe_level()
        n_in, outputs = self.n_in, self.op.outputs
        floor = 1 if self.has_parallel_group else 0     # a loop.parallel carries nothing
        homes = [self.level_of_map(self.maps[n_in + k], floor) for k in range(len(outputs))]
        current: dict[int, Value] = {}      # output -> its running value at the level built
        for level in range(self.depth):
            for k, home in enumerate(homes):
                if home == level:
                    current[k] = self.load(n_in + k, level)
            carried = [k for k, home in enumerate(homes) if home <= level]
            args = self.open(level, [current[k] for k in carried], carried)
            current.update(zip(carried, args))
        yielded = self.body(homes, current)
        inner = self.levels[self.depth].hoist
        for k, home in enumerate(homes):
            if home == self.depth:
                self.store(yielded[k], n_in + k, inner)
            else:
                current[k] = yielded[k]
        for level in reversed(range(self.depth)):
            child = self.levels[level + 1]
            results = self.close(child.loops, [current[k] for k in child.carried])
            current.update(zip(child.carried, results))
            for k, home in enumerate(homes):
                if home == level:
                    self.store(current[k], n_in + k, self.levels[level].after)

    def open(self, level: int, inits: list[Value], carried: list[int]) -> list[Value]:
        """Open group `level` (its loops) inside `level`; returns the carried values' block
        arguments inside. A parallel group is one `loop.parallel` (nested `loop.for`s
        without threads), a reduction group one `loop.for` carrying `inits`."""
        outer = self.levels[level]
        dims = self.groups[level]
        zero, one = self.const(0), self.const(1)
        loops: list[Operation] = []
        if self.has_parallel_group and level == 0 and self.emitter.parallel and \
                not self.outer:
            n = len(dims)
            loop = ParallelOp.build([zero] * n, [self.ranges[d] for d in dims], [one] * n,
                                    result_types=[], regions=1, location=self.op.location)
            block = Block([INDEX] * n)
            loop.regions[0].add_block(block)
            self.ivs.update(zip(dims, block.args))
            self.value_levels.update((iv, level + 1) for iv in block.args)
            loops.append(loop)
            args: list[Value] = []
        else:
            args = list(inits)
            types = [v.type for v in inits]
            for d in dims:
                loop = ForOp.build(zero, self.ranges[d], one, args, result_types=types,
                                   regions=1, location=self.op.location)
                block = Block([INDEX, *types])
                loop.regions[0].add_block(block)
                if loops:
                    Builder.at_end(loops[-1].regions[0].blocks[0]).insert(loop)
                self.ivs[d] = block.args[0]
                self.value_levels[block.args[0]] = level + 1
                args = list(block.args[1:])
                loops.append(loop)
        outer.hoist.insert(loops[0])
        outer.hoist = self._builder(Builder.before(loops[0]))
        inner = self._builder(Builder.at_end(block))
        self.levels.append(_Level(inner, self._builder(Builder.at_end(block)), loops,
                                  carried))
        return args

    def close(self, loops: list[Operation], values: list[Value]) -> list[Value]:
        """End each loop's body with a `loop.yield` of `values` (the innermost), or of the
        loop inside it; returns the outermost loop's results."""
        for loop in reversed(loops):
            Builder.at_end(loop.regions[0].blocks[0]).create(
                YieldOp, values, result_types=[], location=self.op.location)
            values = list(loop.results)
        return values

    def body(self, homes: list[int], current: dict[int, Value]) -> list[Value]:
        """Clone the body at the innermost level; returns the values it yields. Block
        arguments become loads (hoisted, see `level_of_map`), scalar operands themselves,
        carried output values their `iter_args`."""
        op, n_in = self.op, self.n_in
        block = op.body
        mapping: dict[Value, Value] = {}
        for i, (v, arg) in enumerate(zip(op.structured_operands(), block.args)):
            if i >= n_in and homes[i - n_in] < self.depth:
                mapping[arg] = current[i - n_in]
            elif not arg.has_uses():
                continue
            elif not isinstance(v.type, MemRefType):
                mapping[arg] = v
            else:
                level = self.level_of_map(self.maps[i]) if i < n_in else self.depth
                mapping[arg] = self.load(i, level)
        b = self.levels[self.depth].hoist
        nested_index: list[IndexOp] = []
        yielded: list[Value] = []
        for o in list(block.ops):
            if isinstance(o, LinalgYieldOp):
                yielded = [mapping.get(v, v) for v in o.operands]
            elif isinstance(o, IndexOp) and o.structured_parent() is op:
                mapping[o.result] = self.ivs[o.dim.value]
            else:
                nested_index += [n for n in o.walk() if isinstance(n, IndexOp) and n is not o
                                 and n.structured_parent() is op]
                b.insert(o.clone(mapping))
        for n in nested_index:             # a linalg.index inside a region of a body op
            copy = mapping[n.result]
            copy.replace_all_uses_with(self.ivs[n.dim.value])
            copy.owner.erase()
        return yielded


# ---------------------------------------------------------------------------------------------
# Fused nests
# ---------------------------------------------------------------------------------------------


def fused_layout(group: GroupOp):
    """How a `fusion.group` on memrefs becomes one nest, or None when it cannot: (ops to
    run before the nest: its buffers and the scalar code with no effect, the members in
    order, ops to run after it: the frees and the copies that follow every member). The
    members must share `outer_dims` leading parallel loops (`linalg-fuse` made them so);
    with none, they run in order (`LoopEmitter._lower_in_order`)."""
    k = group.num_outer_dims
    hoisted, members, copies, frees = [], [], [], []
    for o in list(group.body.ops)[:-1]:
        if isinstance(o, StructuredOp):
            its = o.iterator_types_list()
            if copies or not o.has_buffer_semantics or o.results or len(its) < k or \
                    any(it != PARALLEL for it in its[:k]):
                return None
            members.append(o)
        elif isinstance(o, AllocOp):
            hoisted.append(o)
        elif isinstance(o, DeallocOp):
            frees.append(o)
        elif isinstance(o, CopyOp):
            copies.append(o)
        elif not o.regions and is_pure(o) and not copies:
            hoisted.append(o)
        else:
            return None
    if not members:
        return None
    return hoisted, members, copies + frees


def _ivs(loops: list[Operation]) -> list[Value]:
    return [iv for loop in loops for iv in loop.regions[0].blocks[0].args]


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


def _is_linalg(op: Operation) -> bool:
    return op.name.partition(".")[0] == linalg.name


@register_pass
class LowerLinalgToLoop(Pass):
    """Lower every structured op on memrefs to a loop nest (`LoopEmitter`).

    Algorithm:
      1. Collect the linalg structured ops on memrefs and the `fusion.group`s on memrefs
         under the root, in post-order (an op nested in another's body is lowered before
         the outer body is cloned), a group's ops with the group (step 3).
      2. For each: generalize a named op (its maps, iterators and body as a
         `linalg.generic`); compute the loop ranges from the operand shapes (a constant, or
         one `memory.dim` per buffer and axis); open a `loop.parallel` over the parallel
         dims (`loop.for`s with `parallel=false`) and a `loop.for` per reduction dim inside
         it; load each output element above the loops its map does not use and carry it
         through them as `iter_args`; place each input load and index expression at the
         outermost level its dims allow; clone the body; store the yielded values (carried
         ones after their loops). Erase the op.
      3. A group becomes one nest (`LoopEmitter.lower_group`): its buffers and scalar code
         before it; a `loop.parallel` over its `outer_dims` (ranges of its first op); in
         its body each member's nest as in step 2 with those loops given; its frees and
         copies after. Then stores are forwarded to loads in that body, the group's own
         buffers only written are dropped and the others shrunk to one point's slice
         allocated in the body (`fusion_buffers`). A group without outer dims (scalar
         work) is its members' nests in order, its 0-d values forwarded the same way. A
         group whose ops do not fit (a copy between them, an op with regions) runs its ops
         one after another.
      4. Fail, at its location, on the first linalg op left (one on tensors: bufferize
         first).

    Option `parallel=false`: every loop a `loop.for` (for targets without threads, or to
    read the IR in program order).
    """

    name = "lower-linalg-to-loop"
    parallel: bool = True

    def run(self, root: Operation) -> None:
        emitter = LoopEmitter(parallel=self.parallel)
        # In program order (the emitter reuses the sizes an earlier nest read), a group's
        # ops with the group.
        ops = [o for o in root.walk() if o is not root and (
            (isinstance(o, GroupOp) and not o.results) or
            (isinstance(o, StructuredOp) and o.has_buffer_semantics and not o.results
             and not isinstance(o.parent_op, GroupOp)))]
        for o in ops:
            if isinstance(o, GroupOp):
                emitter.lower_group(o)
            else:
                emitter.lower(o)
        for o in root.walk(post_order=False):
            if _is_linalg(o) and o is not root:
                raise IRError(f"'{o.name}' is left over: lower-linalg-to-loop lowers "
                              "structured ops on memrefs only (bufferize first)", o.location)
