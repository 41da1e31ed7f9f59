"""Size expressions for the memory planner: sizes and offsets over run-time index values.

A size or offset is an `int` (known at compile time), an index `Value` (known at run time) or
an `Expr` (an operator on those); a condition is a `bool` or an `Expr`. The constructors fold
constants and identities, so a plan over static sizes is plain ints and a dynamic one emits
few ops; `evaluate` computes an expression for given sizes (the report, the tests) and
`Emitter` materializes it as `arith` ops (the rewrite). Last, what the run-time sizes stand
for (`size_leaves`, `size_value`): the independent sizes a plan varies to choose its orders.
"""

from __future__ import annotations

import weakref

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import BlockArgument, OpResult, Value
from irkit.types import I1, I64, INDEX
from irkit.dialects.arith import (
    AddIOp, AndIOp, CmpIOp, ConstantOp, MaxUIOp, MulIOp, SelectOp,
)
from irkit.dialects.loop import IfOp
from irkit.dialects.memory import AllocOp

#: every offset and the arena base are multiples of this (a cache line; the widest vectors)
ALIGNMENT = 64

# ---------------------------------------------------------------------------------------------
# Size expressions
class Expr:
    """An operator applied to operands. Hash-consed by `_node`: equal expressions are one
    object, so comparing is identity and the DAGs offsets make (each offset built from
    earlier ones) are never walked along every path."""

    __slots__ = ("op", "args", "aligned", "__weakref__")

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(map(repr, self.args))})"


_NODES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _node(op: str, *args) -> Expr:
    key = (op, *args)
    e = _NODES.get(key)
    if e is None:
        e = Expr()
        e.op, e.args = op, args
        if op == "mul":
            e.aligned = any(isinstance(x, int) and x % ALIGNMENT == 0 for x in args)
        elif op == "select":
            e.aligned = _is_aligned(args[1]) and _is_aligned(args[2])
        else:
            e.aligned = op == "align" or (op in ("add", "max")
                                          and all(map(_is_aligned, args)))
        _NODES[key] = e
    return e


def _is_aligned(e) -> bool:
    if isinstance(e, int):
        return e % ALIGNMENT == 0
    return isinstance(e, Expr) and e.aligned


def add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return b if a == 0 else a if b == 0 else _node("add", a, b)


def mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 0 or b == 0:
        return 0
    return b if a == 1 else a if b == 1 else _node("mul", a, b)


def align(a):
    """`a` rounded up to a multiple of ALIGNMENT: (a + 63) & -64."""
    if isinstance(a, int):
        return -(-a // ALIGNMENT) * ALIGNMENT
    return a if _is_aligned(a) else _node("align", a)


def maximum(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    if a == 0 or a is b:
        return b
    if b == 0 or (isinstance(a, Expr) and a.op == "max" and b in a.args):
        return a
    if isinstance(b, Expr) and b.op == "max" and a in b.args:
        return b
    return _node("max", a, b)


def le(a, b):
    """a <= b (unsigned: sizes and offsets are never negative)."""
    if isinstance(a, int) and isinstance(b, int):
        return a <= b
    if a == 0 or a is b or (isinstance(b, Expr) and b.op == "add" and a in b.args):
        return True
    return _node("le", a, b)


def select(c, a, b):
    if isinstance(c, bool):
        return a if c else b
    return a if a is b or (isinstance(a, int) and a == b) else _node("select", c, a, b)


_EVAL = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": max,
    "le": lambda a, b: a <= b,
    "align": align, "select": lambda c, a, b: a if c else b,
}


def evaluate(e, env: dict, memo: dict | None = None):
    """The value of expression `e` when each index `Value` in it has its value in `env`."""
    if isinstance(e, (int, bool)):
        return e
    if isinstance(e, Value):
        return env[e]
    memo = {} if memo is None else memo
    if e not in memo:
        memo[e] = _EVAL[e.op](*(evaluate(x, env, memo) for x in e.args))
    return memo[e]


def symbols(e, out: dict, seen: set | None = None) -> dict:
    """The index values `e` reads, in first-seen order (a dict used as an ordered set)."""
    seen = set() if seen is None else seen
    if isinstance(e, Value):
        out[e] = None
    elif isinstance(e, Expr) and e not in seen:
        seen.add(e)
        for x in e.args:
            symbols(x, out, seen)
    return out


class Emitter:
    """Materializes expressions as `arith` ops at a builder, each distinct subterm once; an
    index value in `replaced` is emitted as its replacement."""

    _OPS = {"add": AddIOp, "mul": MulIOp, "max": MaxUIOp}

    def __init__(self, b: Builder, replaced: dict | None = None) -> None:
        self.b = b
        self.memo: dict = {}
        self.replaced = replaced or {}      # values of the sizes the rewrite replaced

    def _op(self, op: type, *operands: Value, **props) -> Value:
        return self.b.create(op, *operands, **props).results[0]

    def constant(self, value: int, t=INDEX) -> Value:
        key = ("const", value, t)
        if key not in self.memo:
            self.memo[key] = self._op(ConstantOp, value=IntegerAttr(value, t))
        return self.memo[key]

    def value(self, e) -> Value:
        if isinstance(e, bool):
            return self.constant(int(e), I1)
        if isinstance(e, int):
            return self.constant(e)
        if isinstance(e, Value):
            return self.replaced.get(e, e)
        if e in self.memo:
            return self.memo[e]
        args = [self.value(x) for x in e.args]
        if e.op == "align":
            bumped = self._op(AddIOp, args[0], self.constant(ALIGNMENT - 1))
            v = self._op(AndIOp, bumped, self.constant(-ALIGNMENT))
        elif e.op == "le":
            v = self._op(CmpIOp, *args, predicate=IntegerAttr(7, I64))   # ule
        elif e.op == "select":
            v = self._op(SelectOp, *args)
        else:
            v = self._op(self._OPS[e.op], *args)
        self.memo[e] = v
        return v


# ---------------------------------------------------------------------------------------------
# What run-time sizes stand for
# ---------------------------------------------------------------------------------------------


def dim_through_if(v: Value) -> Value | None:
    """What `v = memory.dim %r, k` equals when `%r` is a result of a `loop.if` whose two
    regions both yield a `memory.alloc` sized along `k` by one same value: that value (the
    branch that ran made `%r` with that size), else None. Lowering derives the sizes after
    an `if` from its result; seen through, they can be computed at the function entry."""
    op = None if isinstance(v, BlockArgument) else v.owner
    if op is None or op.name != "memory.dim" or not isinstance(op.operands[0], OpResult):
        return None
    result = op.operands[0]
    branch = result.owner
    if not isinstance(branch, IfOp):
        return None
    axis = op.properties["axis"].value
    same = None
    for region in branch.regions:
        term = region.blocks[0].terminator if region.blocks else None
        alloc = term.operands[result.index].owner if term is not None else None
        if not isinstance(alloc, AllocOp) or alloc.memref.type.shape[axis] is not None:
            return None
        size = alloc.dynamic_sizes[sum(d is None for d in alloc.memref.type.shape[:axis])]
        if same is not None and size is not same:
            return None
        same = size
    return same


def _dim_symbol(v: Value):
    """What a run-time size stands for: the model's symbol (`"B"`) when it is a dimension of
    an argument whose `graph.dims` names one (such sizes are equal by the calling
    convention, checked at entry), else the value itself."""
    op = v.owner if not isinstance(v, BlockArgument) else None
    if op is None or op.name != "memory.dim" or not isinstance(op.operands[0], BlockArgument):
        return v
    arg = op.operands[0]
    attrs = arg.owner.parent_op.properties.get("arg_attrs") if arg.owner.parent_op else None
    if attrs is None or arg.index >= len(attrs.value):
        return v
    dims = dict(attrs.value[arg.index].value).get("graph.dims")
    axis = op.properties["axis"].value
    if dims is None or axis >= len(dims.value):
        return v
    name = dims.value[axis].value
    return name if isinstance(name, str) else v


_INDEX_OPS = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: max(a - b, 0),
    "arith.muli": lambda a, b: a * b, "arith.divui": lambda a, b: a // max(b, 1),
    "arith.ceildivui": lambda a, b: -(-a // max(b, 1)), "arith.maxui": max,
    "arith.minui": min, "arith.maxsi": max, "arith.minsi": min,
    "arith.divsi": lambda a, b: a // max(b, 1), "arith.ceildivsi": lambda a, b: -(-a // max(b, 1)),
    "arith.select": lambda c, a, b: a if c else b,
}
_CMPI = {0: lambda a, b: a == b, 1: lambda a, b: a != b, 2: lambda a, b: a < b,
         3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b,
         6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b,
         9: lambda a, b: a >= b}


def size_leaves(v: Value, out: dict) -> None:
    """The independent run-time sizes `v` is computed from: model symbols (`_dim_symbol`)
    through constants, the index arithmetic of `_INDEX_OPS` and `arith.cmpi`, and
    `dim_through_if`; any other value is a leaf of its own. (`sizes_at` in the planner's
    `_assign_offsets` varies only these.)"""
    same = dim_through_if(v)
    if same is not None:
        size_leaves(same, out)
        return
    symbol = _dim_symbol(v)
    op = None if isinstance(v, BlockArgument) else v.owner
    if isinstance(symbol, str) or op is None or \
            (op.name not in _INDEX_OPS and op.name not in ("arith.cmpi", "arith.constant")):
        out[symbol] = None
        return
    for x in op.operands:
        size_leaves(x, out)


def size_value(v: Value, leaves: dict, memo: dict) -> int:
    """`v` when the leaves of `size_leaves` have the values in `leaves`."""
    if v in memo:
        return memo[v]
    same = dim_through_if(v)
    symbol = _dim_symbol(v)
    if same is not None:
        r = size_value(same, leaves, memo)
    elif symbol in leaves:
        r = leaves[symbol]
    elif v.owner.name == "arith.constant":
        r = v.owner.properties["value"].value
    else:
        args = [size_value(x, leaves, memo) for x in v.owner.operands]
        r = _CMPI[v.owner.properties["predicate"].value](*args) \
            if v.owner.name == "arith.cmpi" else _INDEX_OPS[v.owner.name](*args)
    memo[v] = r
    return r
