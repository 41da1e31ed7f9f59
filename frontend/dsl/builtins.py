"""The DSL's builtin functions, initializers and element types, as tables (the optimizers of
`train ... with` are classes in `irkit.frontend.optimizers`).

A builtin is one row: the graph op it becomes, and its arguments in call order with their
kind and default. The kind says how an argument is lowered:

- `tensor`: any expression, lowered to a tensor (a bare literal takes its default type);
- `num`: a tensor whose literals take the element type of the call's other `num` operands
  (`maximum(x, 0)` with f32 x gives an f32 zero);
- static kinds, read from literals at compile time and passed as op properties:
  `int`, `axes` (an int or a list of ints), `ints`, `pair` (an int or `[a, b]`), `bool`,
  `float`, `dtype` (a bare element type name such as `f32`), `dims` (ints and dimension
  symbols), `tensors` (a list literal of tensors, for `concat`).

`prop` names the op property an argument fills when it differs from the argument's name.
`recipe` picks a lowering in `lower.py` for the few builtins that are more than one op with
operands and properties (`reshape` with -1, `broadcast_to` with symbols, `cast`, `slice`...).
"""

from __future__ import annotations

from dataclasses import dataclass

from irkit.types import BF16, F16, F32, F64, I1, I8, I16, I32, I64

REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    name: str
    kind: str
    default: object = REQUIRED
    prop: str | None = None


@dataclass(frozen=True)
class Builtin:
    name: str
    op: str
    args: tuple
    recipe: str = "op"


def _x(kind: str = "tensor") -> Arg:
    return Arg("x", kind)


_UNARY = ("exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "abs", "sigmoid", "relu",
          "gelu", "softplus")
_REDUCE = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max",
           "min": "reduce_min"}


def _table() -> dict[str, Builtin]:
    rows = [Builtin(n, f"graph.{n}", (_x(),)) for n in _UNARY]
    rows += [Builtin(n, f"graph.{n}", (Arg("x", "num"), Arg("y", "num")))
             for n in ("maximum", "minimum", "pow")]
    rows += [Builtin(n, f"graph.{op}", (_x(), Arg("axis", "axes", None, "axes"),
                                        Arg("keepdims", "bool", False)))
             for n, op in _REDUCE.items()]
    rows += [
        Builtin("where", "graph.where", (Arg("cond", "tensor"), Arg("x", "num"),
                                         Arg("y", "num"))),
        Builtin("argmax", "graph.argmax", (_x(), Arg("axis", "int", -1),
                                           Arg("keepdims", "bool", False))),
        Builtin("softmax", "graph.softmax", (_x(), Arg("axis", "int", -1))),
        Builtin("log_softmax", "graph.log_softmax", (_x(), Arg("axis", "int", -1))),
        Builtin("cross_entropy", "graph.cross_entropy", (Arg("logits", "tensor"),
                                                         Arg("labels", "tensor"))),
        Builtin("mse", "graph.mse", (Arg("pred", "num"), Arg("target", "num"))),
        Builtin("matmul", "graph.matmul", (Arg("a", "tensor"), Arg("b", "tensor"))),
        Builtin("transpose", "graph.transpose", (_x(), Arg("perm", "ints", None))),
        Builtin("reshape", "graph.reshape", (_x(), Arg("shape", "dims")), "reshape"),
        Builtin("broadcast_to", "graph.broadcast_to", (_x(), Arg("shape", "dims")),
                "broadcast_to"),
        Builtin("concat", "graph.concat", (Arg("xs", "tensors"), Arg("axis", "int", 0)),
                "concat"),
        Builtin("split", "graph.split", (_x(), Arg("n", "int", REQUIRED, "sections"),
                                         Arg("axis", "int", 0))),
        Builtin("slice", "graph.slice", (_x(), Arg("start", "ints", None),
                                         Arg("stop", "ints", None), Arg("step", "ints", None)),
                "slice"),
        Builtin("cast", "graph.cast", (_x(), Arg("dtype", "dtype")), "cast"),
        Builtin("one_hot", "graph.one_hot", (Arg("idx", "tensor"),
                                             Arg("n", "int", REQUIRED, "depth"))),
        Builtin("gather", "graph.gather", (Arg("table", "tensor"), Arg("idx", "tensor"))),
        Builtin("conv2d", "graph.conv2d", (_x(), Arg("w", "tensor"), Arg("stride", "pair", 1),
                                           Arg("padding", "pair", 0))),
        Builtin("batchnorm", "graph.batchnorm", (
            _x(), Arg("mean", "tensor"), Arg("var", "tensor"), Arg("gamma", "tensor"),
            Arg("beta", "tensor"), Arg("eps", "float", 1e-5, "epsilon"))),
        Builtin("layernorm", "graph.layernorm", (
            _x(), Arg("gamma", "tensor"), Arg("beta", "tensor"), Arg("axis", "int", -1),
            Arg("eps", "float", 1e-5, "epsilon"))),
    ]
    rows += [Builtin(n, f"graph.{n}", (_x(), Arg("kernel", "pair"), Arg("stride", "pair", None)))
             for n in ("max_pool2d", "avg_pool2d")]
    return {b.name: b for b in rows}


BUILTINS: dict[str, Builtin] = _table()

#: positional order of initializer arguments where it differs from graph.INITIALIZERS'
#: keyword order (`normal(0.05, 1)` is std and seed; the mean is rarely given)
INIT_POSITIONAL = {"normal": ("std", "seed", "mean")}

DTYPES = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64, "i1": I1, "i8": I8, "i16": I16,
          "i32": I32, "i64": I64}

#: bare names that are literals
BOOLS = {"true": True, "false": False, "True": True, "False": False}

#: binary operators -> (graph op, extra properties)
BINARY_OPS = {
    "+": ("graph.add", {}), "-": ("graph.sub", {}), "*": ("graph.mul", {}),
    "/": ("graph.div", {}), "**": ("graph.pow", {}), "@": ("graph.matmul", {}),
    "<": ("graph.cmp", {"predicate": "lt"}), "<=": ("graph.cmp", {"predicate": "le"}),
    ">": ("graph.cmp", {"predicate": "gt"}), ">=": ("graph.cmp", {"predicate": "ge"}),
    "==": ("graph.cmp", {"predicate": "eq"}), "!=": ("graph.cmp", {"predicate": "ne"}),
    "and": ("graph.and", {}), "or": ("graph.or", {}),
}
