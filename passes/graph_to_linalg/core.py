"""The function-level half of `lower-graph-to-linalg` and the helpers every rule builds on.

The pass rewrites graph ops into `linalg` / `tensor` / `arith` / `math` ops on tensors. Values
keep their meaning (tensors, value semantics), so a function keeps its signature and each op
is replaced where it stands: its results' uses are redirected to the values its rule made,
and the op is erased. Ops without a rule stay as they are, and so do `graph.variable` /
`read` / `assign` (state, for `bufferize`) and the structured `graph.if` / `graph.yield`,
whose regions are converted with the same rules. Results are computed destination-passing
style: a linalg op writes its `outs`, a `tensor.empty` of the result's shape (or one filled
with the reduction's identity by `linalg.fill`).

The rule table. A rule converts one op; it is registered by op name:

    @converts("graph.exp", "graph.log")
    def convert_unary(cv: FunctionConversion, op: Operation) -> list[Value]:
        ...                                 # build at cv.b (before `op`, at its location)
        return [new_value]                  # one value per result of `op`, same types

The driver sets `cv.b` (a `Builder` positioned before `op`, located at it) and `cv.op`, calls
the rule, replaces the results and erases `op`. A rule never touches `op` itself. A rule may
also be registered for an interface, `@converts_interface(test)`, tried for any op without
a rule of its own that `test` accepts: the elementwise rule is registered so, for every op
that declares a scalar body, which is what makes adding an elementwise op one declaration.
`rule_for(op)` is the rule the driver uses.

What `FunctionConversion` (`cv`) gives rules:

- **Sizes.** `cv.sizes(v)` is one `index` Value per axis of tensor `v`: an `arith.constant`
  for a static size, else the value it is known to equal, else a `tensor.dim` made once,
  right after `v` is defined. Rules say what they know with `cv.know_sizes(v, sizes)`
  (`empty`, `generic` and `fill` do it for the tensors they make, and the driver carries the
  sizes of the `outs` over to the results), so a chain of ops over `tensor<?x3xf32>` reads
  one `tensor.dim` of the argument, as MLIR's reifyResultShapes would. Arguments whose
  `graph.dims` name one model symbol (`B`) at some axes share one size there: the calling
  convention makes them equal (as `plan-memory` reads them too). `cv.is_unit(size)` is
  `size == 1` (i1, made once per size), for broadcasting.
- **Constants.** `cv.index(n)` and `cv.constant(value, type)`: scalar `arith.constant`s,
  one per function and value, at the top of the entry block (they dominate every use).
  Constants inside a linalg body are made in the body (`ArithScalars`), so a body is
  self-contained.
- **Destinations.** `cv.empty(type, sizes)` is a `tensor.empty` with the `?` sizes;
  `cv.filled(type, sizes, value)` adds a `linalg.fill` of scalar `value` (the identity a
  reduction starts from).
- **Structured ops.** `cv.generic(inputs, outputs, maps, iterators, body)` builds a
  `linalg.generic` at `cv.b`; `body(s, args)` gets an `ArithScalars` `s` at the body and
  the block arguments (one element per operand, inputs then outputs) and returns the values
  to yield. It returns the results, their sizes known from the outputs'. Bodies may use
  values from above (a count, a size test): MLIR's generic is not isolated from above.
  `identity_map(rank)`, `projection(num_loops, loops)` and `parallel(n)` spell the usual
  maps and iterator lists; `finish_generic` is an elementwise generic from tensors that lack
  some unit axes of the result (a `keepdims` result), `expand_unit_axes` the
  `tensor.expand_shape` that adds them.
- **Scalar code at the function level.** `cv.scalars()` is an `ArithScalars` at `cv.b`
  whose constants are hoisted (`cv.constant`): size arithmetic, counts, comparisons.
- **Broadcasting** (numpy's rule, operands aligned at the right): `broadcast_sizes` gives
  the sizes of a broadcast result; `Read` says how a generic over a result of some shape
  reads an operand: as an input whose map sends a static size-1 axis to the constant 0
  (`affine_map<(d0, d1) -> (0, d1)>`) and drops the leading axes the operand lacks; as a
  scalar constant in the body (a splat constant); or, where a `?` axis may be 1 at run
  time while the result's size there differs, by `tensor.extract` in the body at
  `select(size == 1, 0, i)` (`i` from `linalg.index`). Where the operand's size is the very
  Value the result's size is (`cv.sizes` tracks it), it cannot be broadcast: a plain input.
  `elementwise(cv, operands, result_type, body)` is the whole elementwise pattern: one
  all-parallel generic over the result, `outs` a `tensor.empty`.
- **Accumulators.** `Accumulator(element)` is the float sum every summing rule uses (its
  docstring has the error bound): f16/bf16/f32 terms `arith.extf`ed and
  added in an f64 output, rounded once by a following elementwise generic; f64 with
  Neumaier's compensation (two f64 outputs, sum and compensation); integers in their own
  type, wrapping. `accumulation_type(t)` is the type a sum of `t` is carried in. A
  reduction: `outs = acc.outputs(cv, shape, sizes)` (zero-filled, `acc.count` of them), a
  body whose step is `acc.add(s, carried, term)` (`acc.product(s, x, y)` for a dot
  product's term), then `acc.finish(cv, results, result_type, then=None)`.
- **Splat constants.** `cv.splat_value(v)`: the number every element of `v` holds when it is
  a splat constant (what `graph.constant` became), else None.
- **Run-time checks.** `cv.check(ok, value, bound, message, b=None)` emits a `graph.check`
  (`dialects/graph/check.py`) at the converted op's location with the message the
  interpreter raises (`'graph.cross_entropy' failed: label {value} is out of range ...`),
  at the function level or inside a body (`b`, the body's builder). Compiled code cannot
  raise, so the rule must then clamp whatever it indexes with; `bufferize` turns the check
  into a `memory.check` on the status buffer.

Errors are `ConversionError`s located at the op.
"""

from __future__ import annotations

from typing import Callable, Sequence

from irkit.affine import AffineConst, AffineDim, AffineMap
from irkit.attributes import DenseElementsAttr, IntegerAttr, StringAttr
from irkit.builder import Builder
from irkit.diagnostics import IRError
from irkit.ir import Block, BlockArgument, Operation, Value
from irkit.types import (
    F64, I1, I64, INDEX, FloatType, RankedTensorType, Type, UnrankedTensorType,
)
from irkit.dialects.arith import ConstantOp
from irkit.passes.constant_pool import ConstantPool
from irkit.dialects.graph.check import CheckOp
from irkit.dialects.graph.scalar import ArithScalars, Scalars
from irkit.dialects.linalg import PARALLEL, IndexOp, make_fill, make_generic
from irkit.dialects.tensor import DimOp, EmptyOp, ExtractOp, expand_shape

#: a rule: converts `op` at `cv.b`, returning one new value per result of `op`
Rule = Callable[["FunctionConversion", Operation], Sequence[Value]]

#: op name -> its rule
CONVERSIONS: dict[str, Rule] = {}


def converts(*names: str):
    """Register the decorated function as the rule of the ops `names`."""
    def register(fn):
        for n in names:
            if n in CONVERSIONS:
                raise ValueError(f"two lower-graph-to-linalg rules for '{n}'")
            CONVERSIONS[n] = fn
        return fn
    return register


#: rules for every op class of an interface, tried when no rule has the op's name: (test of
#: the op class, rule). An elementwise graph op declares its scalar body (`scalar_body`) and
#: needs no entry of its own: `elementwise.py` registers one rule for all of them.
INTERFACE_RULES: list[tuple[Callable[[type], bool], Rule]] = []


def converts_interface(test: Callable[[type], bool]):
    """Register the decorated function as the rule of every op whose class `test` accepts
    (and that has no rule of its own)."""
    def register(fn):
        INTERFACE_RULES.append((test, fn))
        return fn
    return register


def rule_for(op: Operation) -> Rule | None:
    """The rule converting `op`: its own, else its interface's, else None."""
    rule = CONVERSIONS.get(op.name)
    if rule is not None:
        return rule
    for test, fn in INTERFACE_RULES:
        if test(type(op)):
            return fn
    return None


def rule_table() -> dict:
    """Every rule, keyed as `irkit-opt --describe` reads a pass's `lowerings`: op names
    (`CONVERSIONS`), and each registered op class an interface rule covers."""
    from irkit.opdef import registered_ops
    table: dict = dict(CONVERSIONS)
    for name, cls in registered_ops().items():
        rule = None if name in CONVERSIONS else \
            next((fn for test, fn in INTERFACE_RULES if test(cls)), None)
        if rule is not None:
            table[cls] = rule
    return table


class ConversionError(IRError):
    """An op `lower-graph-to-linalg` cannot convert (located at the op)."""


def is_tensor(t: Type) -> bool:
    return isinstance(t, (RankedTensorType, UnrankedTensorType))


def identity_map(rank: int) -> AffineMap:
    return AffineMap.identity(rank)


def projection(num_loops: int, loops: Sequence[int]) -> AffineMap:
    """`(d0, ..., d{n-1}) -> (d{loops[0]}, ...)`: an operand indexed by some of the loops."""
    return AffineMap(num_loops, 0, tuple(AffineDim(k) for k in loops))


def parallel(n: int) -> list[str]:
    return [PARALLEL] * n


class FunctionConversion:
    """The state of converting one function (see the module docstring)."""

    def __init__(self, func: Operation, options=None) -> None:
        self.func = func
        self.options = options
        self.entry: Block = func.regions[0].blocks[0]
        #: where the rule being run builds (before its op, at its location)
        self.b = Builder.at_start(self.entry)
        #: the op being converted
        self.op: Operation | None = None
        self._sizes: dict[Value, list[Value | None]] = {}
        self._units: dict[Value, Value] = {}
        #: a model symbol of the arguments' `graph.dims` -> the one size Value it stands for
        self._by_symbol: dict[str, Value] = {}
        self._constants = ConstantPool(self.entry, func.location)

    # ----- the driver ------------------------------------------------------------------------

    def run(self) -> None:
        for block in self.func.regions[0].blocks:
            self.convert_block(block)

    def convert_block(self, block: Block) -> None:
        """Convert the ops of `block` in order; an op without a rule keeps its place, and
        the blocks of its regions are converted (a `graph.if`'s branches)."""
        for op in list(block.ops):
            rule = rule_for(op)
            if rule is None:
                for region in op.regions:
                    for inner in list(region.blocks):
                        self.convert_block(inner)
                continue
            self.convert_op(op, rule)

    def convert_op(self, op: Operation, rule: Rule) -> None:
        self.b = Builder.before(op)
        self.b.location = op.location
        self.op = op
        new = list(rule(self, op))
        if len(new) != len(op.results):
            raise ConversionError(f"internal error: the rule of '{op.name}' gave {len(new)} "
                                  f"values for {len(op.results)} results", op.location)
        for old, v in zip(op.results, new):
            if v.type != old.type:
                raise ConversionError(f"internal error: the rule of '{op.name}' gave a "
                                      f"{v.type} for result #{old.index} of type {old.type}",
                                      op.location)
            known = self._sizes.get(old)
            if known is not None:
                self._sizes.setdefault(v, known)
            old.replace_all_uses_with(v)
        op.erase()
        self.op = None

    # ----- constants -------------------------------------------------------------------------

    def constant(self, value, t: Type) -> Value:
        """A scalar `arith.constant`, made once per function at the top of the entry block."""
        return self._constants.get(value, t)

    def index(self, n: int) -> Value:
        return self.constant(n, INDEX)

    def scalars(self, b: Builder | None = None) -> ArithScalars:
        """Scalar ops at `b` (default: the function level, at `cv.b`), constants hoisted."""
        return ArithScalars(b or self.b, self.constant)

    # ----- sizes -----------------------------------------------------------------------------

    def know_sizes(self, v: Value, sizes: Sequence[Value]) -> None:
        """Record that tensor `v`'s `?` sizes are `sizes` (one index Value per axis; those of
        static axes are not read)."""
        t = v.type
        known = self._sizes.setdefault(v, [None] * t.rank)
        for a, (d, s) in enumerate(zip(t.shape, sizes)):
            if d is None and known[a] is None and s is not None:
                known[a] = s

    def size(self, v: Value, axis: int) -> Value:
        """The size of tensor `v`'s `axis` as an index Value (see the module docstring)."""
        d = v.type.shape[axis]
        if d is not None:
            return self.index(d)
        known = self._sizes.setdefault(v, [None] * v.type.rank)
        if known[axis] is None:
            symbol = self._symbol(v, axis)
            known[axis] = self._by_symbol.get(symbol) if symbol is not None else None
            if known[axis] is None:
                b = self._after_definition(v)
                known[axis] = b.create(DimOp, v, self.index(axis)).result
                if symbol is not None:
                    self._by_symbol[symbol] = known[axis]
        return known[axis]

    def _symbol(self, v: Value, axis: int) -> str | None:
        """The model's symbol (`"B"`) for `axis` of `v`, when `v` is an argument of the
        function whose `graph.dims` names one: such sizes are equal by the calling convention
        (the runtime checks its inputs against them), so every argument axis of one symbol
        shares one `tensor.dim`."""
        if not isinstance(v, BlockArgument) or v.owner is not self.entry:
            return None
        attrs = self.func.properties.get("arg_attrs")
        if attrs is None or v.index >= len(attrs.value):
            return None
        dims = dict(attrs.value[v.index].value).get("graph.dims")
        if dims is None or axis >= len(dims.value):
            return None
        name = dims.value[axis]
        return name.value if isinstance(name, StringAttr) else None

    def sizes(self, v: Value) -> list[Value]:
        return [self.size(v, a) for a in range(v.type.rank)]

    def mixed_sizes(self, v: Value) -> list:
        """`v`'s sizes as the tensor builders take them: ints where static, else Values."""
        return [d if d is not None else self.size(v, a) for a, d in enumerate(v.type.shape)]

    def is_unit(self, size: Value) -> Value:
        """`size == 1` (i1), made once per size value, right after the size is defined."""
        v = self._units.get(size)
        if v is None:
            known = _constant_int(size)
            if known is not None:
                v = self.constant(int(known == 1), I1)
            else:
                s = ArithScalars(self._after_definition(size), self.constant)
                v = s.cmp("eq", size, self.index(1))
            self._units[size] = v
        return v

    def _after_definition(self, v: Value) -> Builder:
        """A builder right after `v` is defined (after the hoisted constants for a value of
        the entry block's top), located at the function or the defining op."""
        if isinstance(v, BlockArgument):
            block = v.owner
            if block is self.entry and self._constants.last is not None:
                b = Builder.after(self._constants.last)
            else:
                b = Builder.at_start(block)
            b.location = self.func.location
            return b
        owner = v.owner
        b = Builder.after(owner)
        b.location = owner.location
        return b

    # ----- destinations and structured ops ---------------------------------------------------

    def empty(self, t: RankedTensorType, sizes: Sequence[Value]) -> Value:
        """`tensor.empty` of type `t` at `cv.b`, its `?` sizes taken from `sizes`."""
        dyn = [s for s, d in zip(sizes, t.shape) if d is None]
        v = self.b.create(EmptyOp, dyn, result_types=[t]).result
        self.know_sizes(v, sizes)
        return v

    def filled(self, t: RankedTensorType, sizes: Sequence[Value], value) -> Value:
        """A tensor of type `t` and sizes `sizes` holding `value` everywhere (a Python number
        or a scalar Value): `linalg.fill` of a `tensor.empty`."""
        if not isinstance(value, Value):
            value = self.constant(value, t.element)
        fill = make_fill(self.b, value, self.empty(t, sizes))
        out = fill.results[0]
        self.know_sizes(out, sizes)
        return out

    def generic(self, inputs: Sequence[Value], outputs: Sequence[Value],
                maps: Sequence[AffineMap], iterators: Sequence[str],
                body: Callable[[ArithScalars, list[Value]], Sequence[Value]],
                b: Builder | None = None, domain: Sequence[Value] | None = None
                ) -> list[Value]:
        """A `linalg.generic` at `b` (default `cv.b`); `body(s, args)` builds its payload
        with `s`, an `ArithScalars` at the body (constants made there), from the block
        arguments. Returns the results, each known to have its output's sizes.

        `domain`: the loops' sizes, for a generic none of whose operands spans some loop
        (operands read with `tensor.extract` only, into a reduced output): a `tensor.empty`
        of those sizes is then added as a last input, indexed by every loop and never read,
        so that the iteration space is stated (MLIR derives loop ranges from operands)."""
        b = b or self.b
        inputs, maps = list(inputs), list(maps)
        n_in = len(inputs)
        if domain is not None and not _spans_all_loops(maps, len(iterators)):
            shape = tuple(_constant_int(s) for s in domain)
            marker = b.create(EmptyOp, [s for s, d in zip(domain, shape) if d is None],
                                   result_types=[RankedTensorType(shape, I1)]).result
            inputs.append(marker)
            maps.insert(n_in, identity_map(len(iterators)))

        def payload(bb: Builder, args: list[Value]) -> list[Value]:
            if len(inputs) > n_in:
                args = args[:n_in] + args[n_in + 1:]
            return list(body(ArithScalars(bb), args))

        op = make_generic(b, inputs, list(outputs), maps, list(iterators), payload)
        results = list(op.results)
        for out, r in zip([o for o in outputs if is_tensor(o.type)], results):
            known = self._sizes.get(out)
            if known is not None:
                self.know_sizes(r, known)
        return results

    # ----- run-time checks -------------------------------------------------------------------

    def check(self, ok: Value, value: Value, bound: Value, message: str,
              b: Builder | None = None) -> None:
        """At `b` (default `cv.b`), a `graph.check` that the op being converted holds `ok`
        (i1): when it does not, the program fails with `'graph.op' failed: message`, where
        `{value}` and `{bound}` stand for `value` and `bound` (integers or indices). The rule
        goes on and must clamp what it indexes with (compiled code records the error and
        runs on; see the module docstring). Nothing is emitted when `ok` is the constant
        true."""
        if _constant_int(ok) == 1:
            return
        b = b or self.b
        op = self.op
        b.create(CheckOp, ok, value, bound,
                 message=StringAttr(f"'{op.name}' failed: {message}"), location=op.location)

    # ----- constants of the graph program ----------------------------------------------------

    def splat_value(self, v: Value):
        """The Python number every element of `v` holds when `v` is a splat constant
        (an `arith.constant dense<c>`, what `graph.constant` becomes), else None."""
        owner = v.owner if not isinstance(v, BlockArgument) else None
        if not isinstance(owner, ConstantOp):
            return None
        attr = owner.properties["value"]
        if not isinstance(attr, DenseElementsAttr) or not attr.is_splat:
            return None
        return python_number(attr.splat_value(), v.type.element)


def _spans_all_loops(maps: Sequence[AffineMap], num_loops: int) -> bool:
    """Whether every loop is a bare result of some operand's map (has an extent)."""
    seen = {e.position for m in maps for e in m.results if isinstance(e, AffineDim)}
    return seen >= set(range(num_loops))


def _constant_int(v: Value):
    """The integer an `arith.constant` of integer/index type gives `v`, else None."""
    owner = v.owner if not isinstance(v, BlockArgument) else None
    if isinstance(owner, ConstantOp):
        attr = owner.properties["value"]
        if isinstance(attr, IntegerAttr):
            return attr.value
    return None


def python_number(x, t: Type):
    """A numpy element as the Python number an attribute of element type `t` holds."""
    if t is I1:
        return int(bool(x))
    return float(x) if isinstance(t, FloatType) else int(x)


# ---------------------------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------------------------


def broadcast_shape(*shapes: tuple) -> tuple:
    """numpy's broadcast of static shapes with `?` (None), aligned at the right: a static
    size other than 1 wins, else `?` if any operand has one, else 1."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = [s[i - (rank - len(s))] for s in shapes if i - (rank - len(s)) >= 0]
        static = [d for d in dims if d is not None and d != 1]
        out.append(static[0] if static else None if None in dims else 1)
    return tuple(out)


def broadcast_sizes(cv: FunctionConversion, shape: tuple, operands: Sequence) -> list[Value]:
    """The run-time sizes of a result of static shape `shape` (None: `?`) broadcast from
    `operands` (numpy's rule). An entry of `operands` is a tensor Value, or a pair (tensor,
    its axes that take part, aligned at the right), as matmul's batch axes are. A `?` result
    size is the operands' `?` sizes combined by `select(a == 1, b, a)`, at `cv.b`."""
    rank = len(shape)
    parts = [o if isinstance(o, tuple) else (o, range(o.type.rank)) for o in operands]
    sizes = []
    for i, d in enumerate(shape):
        if d is not None:
            sizes.append(cv.index(d))
            continue
        static, dyn = None, []
        for v, axes in parts:
            axes = list(axes)
            j = i - (rank - len(axes))
            if j < 0:
                continue
            od = v.type.shape[axes[j]]
            if od is None:
                s = cv.size(v, axes[j])
                if s not in dyn:
                    dyn.append(s)
            elif od != 1:
                static = od
        if static is not None or not dyn:
            sizes.append(cv.index(static if static is not None else 1))
            continue
        size = dyn[0]
        s = cv.scalars()
        for other in dyn[1:]:                               # a == 1 ? b : a
            size = s.select(cv.is_unit(size), other, size)
        sizes.append(size)
    return sizes


class Read:
    """How a generic over a result of shape `shape` (run-time sizes `sizes`, loops one per
    result axis) reads operand `v`, or only `v`'s axes `axes`, aligned at the right with the
    result's (see the module docstring): `kind` is "input" (`map` gives its indexing map),
    "splat" (`splat` the number) or "extract" (read in the body with `tensor.extract`)."""

    def __init__(self, cv: FunctionConversion, v: Value, shape: tuple, sizes: Sequence[Value],
                 axes: Sequence[int] | None = None, num_loops: int | None = None,
                 loops: Sequence[int] | None = None) -> None:
        self.cv = cv
        self.v = v
        n = len(shape) if num_loops is None else num_loops
        loops = list(range(len(shape))) if loops is None else list(loops)
        axes = list(range(v.type.rank)) if axes is None else list(axes)
        self.splat = cv.splat_value(v) if axes == list(range(v.type.rank)) else None
        self.kind = "splat" if self.splat is not None else "input"
        offset = len(shape) - len(axes)
        #: per axis of `v`: an AffineExpr of the loops, or ("select", is_unit, loop)
        self.exprs: list = []
        for j, axis in enumerate(axes):
            d, i = v.type.shape[axis], j + offset
            if d == 1 and shape[i] != 1:
                self.exprs.append(AffineConst(0))
            elif d is None and shape[i] != 1 and cv.size(v, axis) is not sizes[i]:
                self.exprs.append(("select", cv.is_unit(cv.size(v, axis)), loops[i]))
                if self.kind == "input":
                    self.kind = "extract"
            else:
                self.exprs.append(AffineDim(loops[i]))
        if self.kind == "input":
            self.map = AffineMap(n, 0, tuple(self.exprs))

    def value(self, s: ArithScalars, arg: Value | None, loops: dict | None = None) -> Value:
        """The element at the body's point: the block argument `arg` of an input, the
        constant of a splat, or the `tensor.extract`ed element. `loops` caches the body's
        `linalg.index` values by loop, for reads that share them."""
        if self.kind == "input":
            return arg
        if self.kind == "splat":
            return s.const(self.splat, self.v.type.element)
        loops = {} if loops is None else loops

        def index(k: int) -> Value:
            if k not in loops:
                loops[k] = s.b.create(IndexOp, dim=IntegerAttr(k, I64)).result
            return loops[k]

        idx = []
        for e in self.exprs:
            if isinstance(e, tuple):
                _, unit, loop = e
                idx.append(s.select(unit, s.const(0, INDEX), index(loop)))
            elif isinstance(e, AffineConst):
                idx.append(s.const(e.value, INDEX))
            else:
                idx.append(index(e.position))
        return s.b.create(ExtractOp, self.v, idx).result


def read_all(reads: Sequence[Read], args: Sequence[Value], s: ArithScalars) -> list[Value]:
    """The elements of `reads` at a body's point, from the block arguments `args` that the
    inputs among them got (in order)."""
    it = iter(args)
    loops: dict = {}
    return [r.value(s, next(it) if r.kind == "input" else None, loops) for r in reads]


def elementwise(cv: FunctionConversion, operands: Sequence[Value], result_type: RankedTensorType,
                body: Callable[[ArithScalars, list[Value]], Value],
                sizes: Sequence[Value] | None = None) -> Value:
    """One all-parallel `linalg.generic` over `result_type`: `body(s, xs)` computes the
    result element from one element of each operand (broadcast, see `Read`), `outs` a
    `tensor.empty` of the result's sizes (`sizes`, default the operands' broadcast)."""
    shape = result_type.shape
    if sizes is None:
        sizes = broadcast_sizes(cv, shape, operands)
    reads = [Read(cv, v, shape, sizes) for v in operands]
    inputs = [r.v for r in reads if r.kind == "input"]
    maps = [r.map for r in reads if r.kind == "input"] + [identity_map(len(shape))]
    out = cv.empty(result_type, sizes)

    def payload(s: ArithScalars, args: list[Value]) -> list[Value]:
        return [body(s, read_all(reads, args[:len(inputs)], s))]

    return cv.generic(inputs, [out], maps, parallel(len(shape)), payload)[0]


def expand_unit_axes(cv: FunctionConversion, v: Value, result_type: RankedTensorType,
                     loops: Sequence[int]) -> Value:
    """`v` with unit axes added: a `tensor.expand_shape` to `result_type`, whose axes
    `loops` (in order) are `v`'s and whose other axes have size 1 (a `keepdims` result)."""
    rank = result_type.rank
    loops = list(loops)
    if not loops:
        groups: list[list[int]] = []
    else:
        groups = [[] for _ in loops]
        owner = 0
        for i in range(rank):
            if owner + 1 < len(loops) and i >= loops[owner + 1]:
                owner += 1
            groups[owner].append(i)
    sizes: list = [1] * rank
    for a, k in enumerate(loops):
        sizes[k] = v.type.shape[a] if v.type.shape[a] is not None else cv.size(v, a)
    out = expand_shape(cv.b, v, groups, sizes)
    cv.know_sizes(out, [s if isinstance(s, Value) else cv.index(s) for s in sizes])
    return out


# ---------------------------------------------------------------------------------------------
# Accumulators
# ---------------------------------------------------------------------------------------------


def accumulation_type(t: Type) -> Type:
    """The type a sum of elements of type `t` is carried in: f64 for every float type, the
    type itself for integers (which wrap, as `np.sum(dtype=x.dtype)`)."""
    return F64 if isinstance(t, FloatType) else t


class Accumulator:
    """A sum of elements of type `element` carried in the outputs of a reduction generic:
    the one float sum every rule that adds up floats uses (reductions, softmax, the losses,
    normalization, matmul's K loop, convolution, pooling and their gradients).

    - f16, bf16, f32: one f64 output; each term `arith.extf`ed (exact) and added in f64;
    - f64: two f64 outputs, (sum, compensation), Neumaier's compensated summation;
    - integers: one output of the element type, wrapping, as `np.sum(x, dtype=x.dtype)`.

    Why, and the bounds. A sequential sum in the element type loses O(n) ulps: 3*10^7
    float32 ones add up to 16,777,216, where the first ulp of the sum exceeds 1. numpy sums
    pairwise (O(log n) ulps); this does better at the same loop structure (one reduction
    carrying the sum, nothing to undo when loops are tiled or vectorized later):

    - widened to f64, a sequential sum of n terms is off by at most
      (n - 1) * 2^-53 * sum|x_i|, below 2^-24 * sum|x_i| (half a float32 ulp) for
      n < 2^29; the final rounding adds half an ulp of |S| (S the exact sum), so
      |error| <= 2^-24 * (|S| + sum|x_i|): about one float32 ulp. 2^29 float32 elements are
      2 GiB: the bound holds for every array that fits in memory today. A dot product
      multiplies two float32 factors in float32 and widens the product (`product`): one
      more rounding per term, so its bound is 2^-24 * (|S| + 2 * sum|x_i y_i|). Widening
      both factors instead (their product is exact in f64) costs a second conversion in the
      K loop, measured at +20-27% on the MLP training step against +3-8% for this. f16 and
      bf16 factors are widened first: their product may overflow or lose more than the
      accumulation saves;
    - f64 elements, compensated: each addition `t = sum + x` loses exactly
      `(big - t) + small` (Fast2Sum, `big` the operand of larger magnitude), which the
      compensation collects; `sum + compensation` is off by at most
      2 * 2^-53 * |S| + O(n * 2^-106) * sum|x_i|, S correctly rounded up to a factor 2 while
      n * 2^-53 stays far below 1. A non-finite sum makes the compensation NaN or infinite:
      the result is then the plain sum, which is what numpy gives.

    The compensation survives code generation because nothing asks LLVM to reassociate: the
    ops built here carry no `fastmath` flags, and the backend passes on only the flags an op
    carries (backends/llvm_arith.py), so `(big - t) + small` is not folded to 0.

    In a body: `add(s, carried, x)` gives the next carried values (`carried` the body's
    output arguments), `widen`/`product` make terms. After the generic: `result(s, carried)`
    is the sum in `type`, `round(s, v)` a value of `type` back in the element type; the
    `finish` helper builds the elementwise generic that does both (and whatever a mean or a
    loss does in between) once per output element."""

    def __init__(self, element: Type) -> None:
        self.element = element
        self.type = accumulation_type(element)
        #: f64 elements carry (sum, compensation); the others just the sum
        self.compensated = element is F64

    @property
    def count(self) -> int:
        """How many outputs carry the sum."""
        return 2 if self.compensated else 1

    def outputs(self, cv: FunctionConversion, shape: tuple, sizes: Sequence[Value]
                ) -> list[Value]:
        """The zero-filled outputs a reduction into a result of `shape` carries."""
        t = RankedTensorType(tuple(shape), self.type)
        return [cv.filled(t, sizes, 0) for _ in range(self.count)]

    def widen(self, s: Scalars, x):
        """`x` in the accumulation type (exact)."""
        return s.cast(x, self.type)

    def product(self, s: Scalars, x, y):
        """x * y as a term of a dot product, in the accumulation type: float32 factors are
        multiplied in float32 and the product widened; narrower floats are widened first."""
        if isinstance(self.element, FloatType) and self.element.width < 32:
            return s.mul(self.widen(s, x), self.widen(s, y))
        return self.widen(s, s.mul(x, y))

    def add(self, s: Scalars, carried: Sequence, x) -> list:
        """The carried values after adding `x` (of the element or accumulation type)."""
        x = self.widen(s, x)
        if not self.compensated:
            return [s.add(carried[0], x)]
        total, comp = carried
        t = s.add(total, x)
        keep = s.cmp("ge", s.abs(total), s.abs(x))
        big, small = s.select(keep, total, x), s.select(keep, x, total)
        return [t, s.add(comp, s.add(s.sub(big, t), small))]     # Fast2Sum's error term

    def result(self, s: Scalars, carried: Sequence):
        """The sum, in the accumulation type: a non-finite sum is the plain sum (the
        compensation would be NaN)."""
        if not self.compensated:
            return carried[0]
        total, comp = carried
        return s.select(s.isfinite(total), s.add(total, comp), total)

    def round(self, s: Scalars, v):
        """`v` (of the accumulation type) rounded once to the element type."""
        return s.cast(v, self.element)

    def finish(self, cv: FunctionConversion, carried: Sequence[Value],
               result_type: RankedTensorType, then=None,
               loops: Sequence[int] | None = None) -> Value:
        """An elementwise generic from the carried tensors to a tensor of `result_type`:
        `round(then(s, sum))` per element (`then` maps the sum in the accumulation type to
        another value of that type: a mean divides, a loss negates). `loops`: the result
        axes the carried tensors have (default all; a `keepdims` result has unit axes more)."""
        def body(s: ArithScalars, xs: list[Value]) -> Value:
            v = self.result(s, xs)
            if then is not None:
                v = then(s, v)
            return self.round(s, v)

        return finish_generic(cv, carried, result_type, body, loops)


def finish_generic(cv: FunctionConversion, operands: Sequence[Value],
                   result_type: RankedTensorType,
                   body: Callable[[ArithScalars, list[Value]], Value],
                   loops: Sequence[int] | None = None) -> Value:
    """An all-parallel generic over `result_type` computing `body(s, xs)` from one element
    of each of `operands` (all of one shape). `loops`: the result axes the operands have, in
    order (default: all of them); the others must be unit axes (a `keepdims` reduction's)."""
    rank = result_type.rank
    loops = list(range(rank)) if loops is None else list(loops)
    sizes = [cv.index(1)] * rank
    for a, k in enumerate(loops):
        sizes[k] = cv.size(operands[0], a)
    out = cv.empty(result_type, sizes)

    def payload(s: ArithScalars, args: list[Value]) -> list[Value]:
        return [body(s, args[:len(operands)])]

    maps = [projection(rank, loops)] * len(operands) + [identity_map(rank)]
    return cv.generic(list(operands), [out], maps, parallel(rank), payload)[0]


__all__ = [
    "CONVERSIONS", "converts", "INTERFACE_RULES", "converts_interface", "rule_for",
    "rule_table",
    "ConversionError", "FunctionConversion", "Rule", "is_tensor", "identity_map", "projection",
    "parallel", "python_number", "broadcast_shape", "broadcast_sizes", "Read", "read_all",
    "elementwise", "expand_unit_axes", "accumulation_type", "Accumulator", "finish_generic",
]
