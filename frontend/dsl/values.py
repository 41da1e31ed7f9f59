"""What the lowering computes with: tensor values, untyped literals, and static arguments.

- `Val`: an IR value together with its `TensorSpec`, whose dims keep the DSL's symbols (`N`)
  where the IR type only says `?`. Shape functions run on the specs, so their errors speak
  of `f32[N, 784]`.
- `Lit`: a number, bool or (nested) list written in the program, still without an element
  type. It becomes a `graph.constant` only where it is used, typed after the other operand
  (`x * 2` with f32 x multiplies by an f32 2); alone, floats are f32 and ints i32.
- Static arguments (`axis=1`, `perm=[1, 0]`, `f32`) are read from the AST, never lowered.
- `Scope` maps names to `Binding`s; a scope made for an `if` branch has a gate (see
  exprs.py) that switches the outside values read through it.
- `bind_args` matches a call's positional and keyword arguments to a parameter list, with
  the errors a Python programmer expects (unknown keyword with a did-you-mean, missing or
  duplicate arguments, too many).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from irkit.attributes import FileLineColLoc
from irkit.dialects.graph import TensorSpec
from irkit.ir import Value
from irkit.types import I1, I32, F32, FloatType, IntegerType, Type

from irkit.frontend.dsl import syntax as ast
from irkit.frontend.dsl.builtins import BOOLS, DTYPES, REQUIRED
from irkit.frontend.dsl.syntax import DSLError


@dataclass
class Val:
    value: Value
    spec: TensorSpec


@dataclass
class Lit:
    value: object       # bool | int | float | nested list of them
    pos: tuple


@dataclass
class Binding:
    value: object       # Val | Lit
    pos: tuple
    kind: str           # "input" | "param" | "const" | "value"


class Scope:
    """Names visible at one point. A scope made for an `if` branch has a `gate`: a tensor
    from outside read through it is switched on the branch's condition (see exprs.py)."""

    def __init__(self, parent: "Scope | None" = None, gate=None, side: int = 0) -> None:
        self.parent = parent
        self.gate = gate
        self.side = side
        self.names: dict[str, Binding] = {}

    def find(self, name: str) -> Binding | None:
        """The binding of `name`, ignoring gates (for redefinition checks)."""
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def visible(self) -> set:
        out, s = set(), self
        while s is not None:
            out |= set(s.names)
            s = s.parent
        return out


class Errors:
    """Located errors for one file."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def loc(self, pos) -> FileLineColLoc:
        return FileLineColLoc(self.filename, pos[0], pos[1])

    def error(self, pos, message: str) -> DSLError:
        return DSLError(message, self.loc(pos))

    def unknown(self, pos, what: str, name: str, candidates, listing: bool = False) -> DSLError:
        """`unknown name 'xx'; did you mean 'x'?` (difflib's closest candidate); with
        `listing`, a short closed set is listed when nothing is close."""
        close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        if not close and listing:
            hint = f"; expected one of {', '.join(candidates)}"
        return self.error(pos, f"unknown {what} '{name}'{hint}")


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------


def literal_shape(value, pos, errs: Errors) -> tuple:
    """The shape of a nested list literal; a ragged list is an error."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    shapes = {literal_shape(v, pos, errs) for v in value}
    if len(shapes) != 1:
        raise errs.error(pos, "list literal is ragged: its rows have different lengths")
    return (len(value),) + shapes.pop()


def _flat(value):
    if isinstance(value, list):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def default_dtype(lit: Lit) -> Type:
    """f32 if any element is a float, i1 if all are bools, else i32."""
    items = list(_flat(lit.value))
    if any(isinstance(v, float) for v in items):
        return F32
    if items and all(isinstance(v, bool) for v in items):
        return I1
    return I32


def check_literal_fits(lit: Lit, dtype: Type, errs: Errors) -> None:
    """A literal may take a type only if no value changes: no float into an integer type,
    no 2 into i1."""
    for v in _flat(lit.value):
        if isinstance(dtype, FloatType):
            continue
        if isinstance(v, float) and not v.is_integer():
            raise errs.error(lit.pos, f"the literal {v} cannot be {dtype}; write "
                                      f"cast(..., f32) on the other operand")
        if isinstance(v, float):
            raise errs.error(lit.pos, f"the float literal {v} cannot be {dtype}")
        if dtype is I1 and v not in (0, 1):
            raise errs.error(lit.pos, f"the literal {v} cannot be i1 (only true/false)")
        if isinstance(dtype, IntegerType) and dtype.width > 1:
            lim = 1 << (dtype.width - 1)
            if not -lim <= int(v) < lim:
                raise errs.error(lit.pos, f"the literal {v} does not fit in {dtype}")


# ---------------------------------------------------------------------------------------------
# Static arguments
# ---------------------------------------------------------------------------------------------


def static_number(node, errs: Errors, what: str):
    """An int or float literal, possibly negated (`-1`, `1e-3`)."""
    if isinstance(node, ast.UnOp) and node.op in "+-" and not isinstance(node.operand,
                                                                           ast.UnOp):
        v = static_number(node.operand, errs, what)
        return -v if node.op == "-" else v
    if isinstance(node, ast.Num):
        return node.value
    raise errs.error(node.pos, f"{what} must be a number literal")


def static_int(node, errs: Errors, what: str, full: bool = False) -> int:
    """An integer literal; `full`: `what` is the whole error message."""
    v = static_number_or_none(node)
    if type(v) is not int:
        raise errs.error(node.pos, what if full else f"{what} must be an integer literal")
    if not -(1 << 63) <= v < (1 << 63):
        raise errs.error(node.pos, f"the integer {v} does not fit in 64 bits")
    return v


def static_number_or_none(node):
    try:
        return static_number(node, Errors("<none>"), "")
    except DSLError:
        return None


def static_ints(node, errs: Errors, what: str) -> tuple:
    if not isinstance(node, ast.ListLit):
        raise errs.error(node.pos, f"{what} must be a list of integer literals such as [1, 0]")
    return tuple(static_int(x, errs, f"each entry of {what}") for x in node.items)


def static_value(node, kind: str, errs: Errors, what: str):
    """Read a static argument of the given kind (see `builtins`)."""
    if kind == "int":
        return static_int(node, errs, what)
    if kind == "float":
        return float(static_number(node, errs, what))
    if kind == "ints":
        return static_ints(node, errs, what)
    if kind == "axes":
        if isinstance(node, ast.ListLit):
            return static_ints(node, errs, what)
        return (static_int(node, errs, f"{what} must be an integer or a list of integers",
                           full=True),)
    if kind == "pair":
        if isinstance(node, ast.ListLit):
            v = static_ints(node, errs, what)
            if len(v) != 2:
                raise errs.error(node.pos, f"{what} must be an integer or a pair [a, b], got "
                                           f"{len(v)} entries")
            return v
        v = static_int(node, errs, f"{what} must be an integer or a pair [a, b]", full=True)
        return (v, v)
    if kind == "bool":
        if isinstance(node, ast.Name) and node.id in BOOLS:
            return BOOLS[node.id]
        raise errs.error(node.pos, f"{what} must be true or false")
    if kind == "dtype":
        if isinstance(node, ast.Name) and node.id in DTYPES:
            return DTYPES[node.id]
        name = node.id if isinstance(node, ast.Name) else None
        if name is not None:
            raise errs.unknown(node.pos, "element type", name, DTYPES)
        raise errs.error(node.pos, f"{what} must be an element type such as f32")
    if kind == "dims":
        if not isinstance(node, ast.ListLit):
            raise errs.error(node.pos, f"{what} must be a list of sizes such as [N, 10]")
        out = []
        for x in node.items:
            if isinstance(x, ast.Name):
                out.append((x.id, x.pos))
            else:
                out.append((static_int(x, errs, f"each entry of {what}"), x.pos))
        return out
    raise AssertionError(f"unknown static kind {kind}")


# ---------------------------------------------------------------------------------------------
# Argument binding
# ---------------------------------------------------------------------------------------------


def bind_args(call: ast.Call, params: list[tuple[str, object]], errs: Errors,
              what: str | None = None) -> dict:
    """Map `call`'s arguments to `params` ([(name, default)], REQUIRED for none) -> {name:
    AST node or default}."""
    what = what or f"'{call.func}'"
    names = [p for p, _ in params]
    if len(call.args) > len(params):
        extra = call.args[len(params)]
        listed = f" ({', '.join(names)})" if names else ""
        raise errs.error(extra.pos, f"{what} takes {_count(len(params))}{listed}, got "
                                    f"{len(call.args)}")
    out: dict = dict(zip(names, call.args))
    for kw in call.kwargs:
        if kw.name not in names:
            close = difflib.get_close_matches(kw.name, names, n=1, cutoff=0.6)
            hint = (f"; did you mean '{close[0]}'?" if close else
                    f"; its arguments are {', '.join(names)}" if names else "")
            raise errs.error(kw.pos, f"{what} has no argument '{kw.name}'{hint}")
        if kw.name in out:
            raise errs.error(kw.pos, f"{what} got two values for argument '{kw.name}'")
        out[kw.name] = kw.value
    for name, default in params:
        if name not in out:
            if default is REQUIRED:
                raise errs.error(call.pos, f"{what} is missing argument '{name}'")
            out[name] = default
    return out


def _count(n: int) -> str:
    return {0: "no arguments", 1: "1 argument"}.get(n, f"{n} arguments")
