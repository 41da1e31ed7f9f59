"""Size expressions for the memory planner: sizes and offsets over run-time index values.

A size or offset is an `int` (known at compile time), an index `Value` (known at run time) or
an `Expr` (an operator on those); a condition is a `bool` or an `Expr`. The constructors fold
constants and identities, so a plan over static sizes is plain ints and a dynamic one emits
few ops; `evaluate` computes an expression for given sizes (the report, the tests) and
`Emitter` materializes it as `arith` ops (the rewrite).
"""

from __future__ import annotations

import weakref

from irkit.attributes import IntegerAttr
from irkit.builder import Builder
from irkit.ir import Value
from irkit.opdef import lookup_op
from irkit.types import I1, I64, INDEX
from irkit.dialects import arith as _arith  # noqa: F401  (the ops offsets are computed with)

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
            e.aligned = op == "align" or (op in ("add", "max", "min")
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


def minimum(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return 0 if a == 0 or b == 0 else a if a is b else _node("min", a, b)


def le(a, b):
    """a <= b (unsigned: sizes and offsets are never negative)."""
    if isinstance(a, int) and isinstance(b, int):
        return a <= b
    if a == 0 or a is b or (isinstance(b, Expr) and b.op == "add" and a in b.args):
        return True
    return _node("le", a, b)


def either(a, b):
    if a is True or b is True:
        return True
    return b if a is False else a if b is False or a is b else _node("or", a, b)


def both(a, b):
    if a is False or b is False:
        return False
    return b if a is True else a if b is True or a is b else _node("and", a, b)


def select(c, a, b):
    if isinstance(c, bool):
        return a if c else b
    return a if a is b or (isinstance(a, int) and a == b) else _node("select", c, a, b)


_EVAL = {
    "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "max": max, "min": min,
    "le": lambda a, b: a <= b, "or": lambda a, b: a or b, "and": lambda a, b: a and b,
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
    """Materializes expressions as `arith` ops at a builder, each distinct subterm once."""

    _OPS = {"add": "arith.addi", "mul": "arith.muli", "max": "arith.maxui",
            "min": "arith.minui", "or": "arith.ori", "and": "arith.andi"}

    def __init__(self, b: Builder) -> None:
        self.b = b
        self.memo: dict = {}

    def _op(self, name: str, *operands: Value, **props) -> Value:
        return self.b.create(lookup_op(name), *operands, **props).results[0]

    def constant(self, value: int, t=INDEX) -> Value:
        key = ("const", value, t)
        if key not in self.memo:
            self.memo[key] = self._op("arith.constant", value=IntegerAttr(value, t))
        return self.memo[key]

    def value(self, e) -> Value:
        if isinstance(e, bool):
            return self.constant(int(e), I1)
        if isinstance(e, int):
            return self.constant(e)
        if isinstance(e, Value):
            return e
        if e in self.memo:
            return self.memo[e]
        args = [self.value(x) for x in e.args]
        if e.op == "align":
            bumped = self._op("arith.addi", args[0], self.constant(ALIGNMENT - 1))
            v = self._op("arith.andi", bumped, self.constant(-ALIGNMENT))
        elif e.op == "le":
            v = self._op("arith.cmpi", *args, predicate=IntegerAttr(7, I64))   # ule
        elif e.op == "select":
            v = self._op("arith.select", *args)
        else:
            v = self._op(self._OPS[e.op], *args)
        self.memo[e] = v
        return v
