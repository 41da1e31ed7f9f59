"""Declarative one-line rewrites: `peephole("arith.addi(arith.subi(x, y), y) -> x")`.

A rule is `MATCH -> RESULT`, both written as Python call expressions (read with the standard
`ast` module, so there is no grammar to maintain):

- `dialect.op(a, b)` matches an op of that name whose operands match `a` and `b` in order; in
  the result it builds that op (result type inferred from its operands, default properties).
- a name (`x`) matches any value; a name used twice must be the same value.
- `const(c)` matches a value defined by a constant op and binds it to `c`.
- a number (`0`, `1`, `-1`, `1.0`, `-0.0`) or `true`/`false` matches a constant whose value
  (every element, for a splat) equals it; `0.0` and `-0.0` are different. In a result it is a
  new constant of the root's result type.

Constants are never computed by the rule itself: `arith.muli(arith.muli(x, const(a)),
const(b)) -> arith.muli(x, arith.muli(a, b))` builds `a * b` as an op and the folder turns it
into one constant on its next visit. Each rule's math sits beside it as a comment where it is
declared; a rewrite that needs more than a tree match and a rebuild is a pattern class.
"""

from __future__ import annotations

import ast
import math

from irkit.attributes import DenseElementsAttr, FloatAttr, IntegerAttr
from irkit.ir import Operation, Value
from irkit.rewrite import PatternRewriter, RewritePattern, constant_value


class _Op:
    __slots__ = ("name", "args")

    def __init__(self, name: str, args: list) -> None:
        self.name = name
        self.args = args


class _Var:
    __slots__ = ("name", "const")

    def __init__(self, name: str, const: bool = False) -> None:
        self.name = name
        self.const = const


class _Lit:
    __slots__ = ("value",)

    def __init__(self, value: int | float | bool) -> None:
        self.value = value


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _tree(node: ast.AST, rule: str):
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name is None or node.keywords:
            raise ValueError(f"peephole '{rule}': unsupported call {ast.unparse(node)}")
        if name == "const":
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
                raise ValueError(f"peephole '{rule}': const() takes one name")
            return _Var(node.args[0].id, const=True)
        if "." not in name:
            raise ValueError(f"peephole '{rule}': op names carry their dialect ('{name}')")
        return _Op(name, [_tree(a, rule) for a in node.args])
    if isinstance(node, ast.Name):
        if node.id in ("true", "false"):
            return _Lit(node.id == "true")
        return _Var(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return _Lit(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Constant):
        return _Lit(-node.operand.value)
    raise ValueError(f"peephole '{rule}': cannot read {ast.unparse(node)}")


def _count_ops(t) -> int:
    return 1 + sum(_count_ops(a) for a in t.args) if isinstance(t, _Op) else 0


def _splat_value(attr):
    """The single value of a scalar or splat constant, else None."""
    if isinstance(attr, (IntegerAttr, FloatAttr)):
        return attr.value
    if isinstance(attr, DenseElementsAttr):
        a = attr.array
        if a.size == 0:
            return None
        first = a.flat[0]
        if a.size > 1 and not (a == first).all():
            return None
        return first.item()
    return None


def _lit_matches(lit, attr) -> bool:
    v = _splat_value(attr)
    if v is None:
        return False
    want = lit.value
    if isinstance(want, bool):
        # i1 `true` may be stored as 1 or -1 (its signed value).
        return isinstance(v, (bool, int)) and bool(v) == want and v in (0, 1, -1, True, False)
    if isinstance(want, float):
        if not isinstance(v, float):
            return False
        return v == want and math.copysign(1.0, v) == math.copysign(1.0, want)
    return not isinstance(v, float) and int(v) == want


class Peephole(RewritePattern):
    """A rewrite rule read from `MATCH -> RESULT` text (see the module docstring)."""

    def __init__(self, rule: str) -> None:
        if rule.count("->") != 1:
            raise ValueError(f"peephole '{rule}': expected one '->'")
        lhs, rhs = (s.strip() for s in rule.split("->"))
        self.rule = rule
        self.match_tree = _tree(ast.parse(lhs, mode="eval").body, rule)
        self.result_tree = _tree(ast.parse(rhs, mode="eval").body, rule)
        if not isinstance(self.match_tree, _Op):
            raise ValueError(f"peephole '{rule}': the left side must be an op")
        self.root = self.match_tree.name
        self.benefit = _count_ops(self.match_tree)
        self._check_bound(self.result_tree, self._bound(self.match_tree, set()))

    def _bound(self, t, names: set) -> set:
        if isinstance(t, _Var):
            names.add(t.name)
        elif isinstance(t, _Op):
            for a in t.args:
                self._bound(a, names)
        return names

    def _check_bound(self, t, names: set) -> None:
        if isinstance(t, _Var) and t.name not in names:
            raise ValueError(f"peephole '{self.rule}': '{t.name}' is not bound by the match")
        if isinstance(t, _Op):
            for a in t.args:
                self._check_bound(a, names)

    @property
    def label(self) -> str:
        return f"peephole({self.rule})"

    # ----- matching -----------------------------------------------------------------------

    def _match(self, t, value: Value, env: dict) -> bool:
        if isinstance(t, _Var):
            if t.const and constant_value(value) is None:
                return False
            seen = env.get(t.name)
            if seen is None:
                env[t.name] = value
                return True
            return seen is value
        if isinstance(t, _Lit):
            attr = constant_value(value)
            return attr is not None and _lit_matches(t, attr)
        op = value.defining_op()
        return op is not None and self._match_op(t, op, env)

    def _match_op(self, t: _Op, op: Operation, env: dict) -> bool:
        if op.name != t.name or len(op._operands) != len(t.args):
            return False
        for a, o in zip(t.args, op._operands):
            if not self._match(a, o.value, env):
                return False
        return True

    # ----- rewriting ----------------------------------------------------------------------

    def _build(self, t, env: dict, rewriter: PatternRewriter, root: Operation) -> Value | None:
        if isinstance(t, _Var):
            return env[t.name]
        if isinstance(t, _Lit):
            return _constant(rewriter, root, t.value)
        from irkit.opdef import lookup_op
        cls = lookup_op(t.name)
        if cls is None:
            raise ValueError(f"peephole '{self.rule}': unknown op '{t.name}'")
        args = []
        for a in t.args:
            v = self._build(a, env, rewriter, root)
            if v is None:
                return None
            args.append(v)
        return rewriter.create(cls, *args).results[0]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        env: dict = {}
        if not self._match_op(self.match_tree, op, env):
            return False
        if isinstance(self.result_tree, _Lit) and not _can_materialize(op):
            return False
        new = self._build(self.result_tree, env, rewriter, op)
        if new is None or new.type != op.results[0].type:
            return False
        rewriter.replace_op(op, [new])
        return True


def _literal_attr(value, t):
    from irkit.types import FloatType, IndexType, IntegerType, RankedTensorType, VectorType
    import numpy as np
    if isinstance(t, (RankedTensorType, VectorType)):
        if not t.has_static_shape:
            return None
        e = t.element
        from irkit.attributes import numpy_dtype
        dtype = np.int64 if isinstance(e, IndexType) else numpy_dtype(e)
        return DenseElementsAttr(t, np.full(t.shape, value, dtype=dtype))
    if isinstance(t, FloatType):
        return FloatAttr(float(value), t)
    if isinstance(t, (IntegerType, IndexType)):
        return IntegerAttr(int(value), t)
    return None


def _can_materialize(op: Operation) -> bool:
    return _literal_attr(0, op.results[0].type) is not None


def _constant(rewriter: PatternRewriter, root: Operation, value) -> Value | None:
    t = root.results[0].type
    attr = _literal_attr(value, t)
    materialize = getattr(getattr(root, "dialect", None), "constant_materializer", None)
    if attr is None or materialize is None:
        return None
    op = materialize(attr, t, root.location)
    return None if op is None else rewriter.insert(op).results[0]


def peephole(rule: str) -> Peephole:
    """One declarative rewrite; see the module docstring for the notation."""
    return Peephole(rule)
