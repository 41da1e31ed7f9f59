"""The `graph` dialect's base: what every op family of the dialect shares (see
`irkit.dialects.graph` for the dialect as a whole and its families).

Every op takes and returns ranked tensors (`tensor<?x784xf32>`; a scalar is `tensor<f32>`)
and follows numpy's semantics, broadcasting included. This module holds:

- **Shape functions.** Each op declares `infer(cls, args, props)`: from the operands'
  `TensorSpec`s (a shape and an element type) and the op's properties as Python values, the
  result specs, or a `ShapeError` saying what does not fit. A dimension is an `int`, `None`
  (unknown: `?` in a type) or a `str` (a symbolic dimension of the DSL, such as `N`). The IR
  only ever passes ints and None; the DSL frontend passes its symbols through the same
  functions, so a shape rule is written once and the frontend still reports
  `cannot broadcast f32[N, 784] with f32[10]` in the user's own terms.
- **Properties as Python values.** `IntProp`, `BoolProp`, `FloatProp`, `IntsProp`, `StrProp`
  declare a property together with its Python form; `op.props()` reads them all and
  `GraphOp.create(*operands, **python_props)` builds an op with inferred result types.
- **One custom syntax** for every tensor op:
  `%r = graph.op %a, %b {prop = ...} : (tensor<..>, tensor<..>) -> tensor<..>`.
- **Folding.** An op whose operands are all constant is evaluated (its numpy semantics) and
  becomes a `graph.constant`, as long as the result is small (`FOLD_LIMIT` elements);
  `fold_identity` is the hook for algebraic folds that need only some operands constant.

Variables (`graph.variable`, `graph.read`, `graph.assign`) and `graph.constant` are defined
here: they are the dialect's storage, and every family module uses them. For automatic
differentiation (`irkit.ad_rules`) they need no rules: a constant and a read have no operands,
so they are leaves, and the parameters of a model are differentiated against as the values
read (`autodiff.grad %loss wrt %w` with `%w = graph.read @w`), as TensorFlow 1 does; an assign
has no results, so no derivative flows back through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irkit.attributes import (
    ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, DictionaryAttr, FloatAttr,
    IntegerAttr, StringAttr, SymbolRefAttr, TypeAttr, numpy_dtype,
)
from irkit.ad_rules import NonDifferentiable
from irkit.dialects.arith.fold import constant_fold
from irkit.ir import Operation
from irkit.opdef import (
    AnyTensor, ConstantLike, Dialect, FlatSymbolRef, Op, Operand, OptProp, Prop, Pure, Result,
    StrAttr, Symbol, SymbolNameAttr, TypeAttrC, attr_constraint,
)
from irkit.types import F64, I1, I64, FloatType, IntegerType, RankedTensorType, Type

graph = Dialect("graph", "Tensor ops with value semantics, variables and dataflow control "
                "flow: the level models are written at.")

#: constant folding gives up on results with more elements than this (a folded 1M-element
#: tensor would bloat the IR more than it saves)
FOLD_LIMIT = 1 << 16

# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

Dim = Any      # int | str | None


class ShapeError(Exception):
    """A shape or element-type rule an op's operands break. The message is complete and
    unlocated: the verifier prefixes the op, the DSL frontend the source position."""


def dtype_name(t: Type) -> str:
    return str(t)


@dataclass(frozen=True)
class TensorSpec:
    """The static knowledge about a tensor: its shape (dims: int, symbol or None) and
    element type. Printed in the DSL's spelling, `f32[N, 784]`.

    `value` is what a 0-d integer tensor holds, where known (an int, or the DSL symbol of a
    dimension): `graph.dim` says which size it reads, so the shape functions of the ops that
    take size operands (`broadcast_to`, sized `reshape` and `split`, `one_hot`) give that
    size, not `?`. It is knowledge about one value, not part of the type: specs compare
    without it."""

    shape: tuple
    dtype: Type
    value: Any = field(default=None, compare=False)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype}[{dims}]" if self.shape else str(self.dtype)

    def to_type(self) -> RankedTensorType:
        return RankedTensorType(tuple(d if type(d) is int else None for d in self.shape),
                                self.dtype)

    @staticmethod
    def of(t: Type) -> "TensorSpec":
        if not isinstance(t, RankedTensorType):
            raise ShapeError(f"expected a ranked tensor, got {t}")
        return TensorSpec(t.shape, t.element)

    def with_shape(self, shape) -> "TensorSpec":
        return TensorSpec(tuple(shape), self.dtype)

    def with_dtype(self, dtype: Type) -> "TensorSpec":
        return TensorSpec(self.shape, dtype)


def unify_dim(a: Dim, b: Dim) -> Dim:
    """The dimension both `a` and `b` describe, or raise ValueError.

    None (unknown) agrees with anything and yields the other, more precise, side. Two symbols
    agree only if they are the same name, and a symbol never equals a number: `N` may be 10
    in one run and 11 in the next, so a program that needs `N == 10` is rejected up front.
    """
    if a == b or b is None:
        return a
    if a is None:
        return b
    raise ValueError


def broadcast_dim(a: Dim, b: Dim) -> Dim:
    """numpy's rule for one axis: 1 stretches to the other side; otherwise they must agree."""
    if a == 1:
        return b
    if b == 1:
        return a
    return unify_dim(a, b)


def broadcast_shapes(*specs: TensorSpec) -> tuple:
    """The broadcast shape of `specs` (aligned at the right, as in numpy)."""
    rank = max(s.rank for s in specs)
    out = [1] * rank
    for s in specs:
        for i, d in enumerate(s.shape, rank - s.rank):
            try:
                out[i] = broadcast_dim(out[i], d)
            except ValueError:
                raise ShapeError("cannot broadcast " + " with ".join(map(str, specs))) from None
    return tuple(out)


def same_dtype(*specs: TensorSpec) -> Type:
    """The common element type of `specs`; mixed types are an error (no implicit promotion,
    as in JAX's strict mode: the user writes `cast`)."""
    t = specs[0].dtype
    for s in specs[1:]:
        if s.dtype is not t:
            raise ShapeError("element types differ: " + " and ".join(map(str, specs)))
    return t


def norm_axis(axis: int, rank: int) -> int:
    """`axis` in [0, rank), counting negative axes from the end as numpy does."""
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def checked_axis(axis: int, spec: TensorSpec) -> int:
    """`axis` of `spec` in [0, rank). Unlike `norm_axis`, a scalar has no axis at all: numpy
    rejects `axis=0` on a 0-d array, and an op that works along an axis needs one."""
    if not -spec.rank <= axis < spec.rank:
        raise ShapeError(f"axis {axis} is out of range for rank {spec.rank}")
    return axis % spec.rank


def wide_sum(x: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """The sum of `x` over `axis` as the compiled code computes it: floats in float64 (then
    rounded once by the caller, after a division or a log), integers in their own type
    (wrapping). numpy sums float32 pairwise only along the contiguous axis; along another
    one it adds row by row in float32, which at 10^5 terms is off by 10^-4 relative, where
    float64 is off by 10^-11 (`Accumulator` in passes/graph_to_linalg/core.py states the
    bound)."""
    dtype = np.float64 if x.dtype.kind == "f" else x.dtype
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def is_int(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.width > 1


def require_float(spec: TensorSpec, what: str) -> None:
    if not is_float(spec.dtype):
        raise ShapeError(f"{what} must have a floating-point element type, got {spec}")


# ---------------------------------------------------------------------------------------------
# Properties with a Python face
# ---------------------------------------------------------------------------------------------


class _PyProp(Prop):
    """A property that also converts between its attribute and a Python value."""

    def __init__(self, constraint, default=None, doc: str = "") -> None:
        if default is None:
            super().__init__(constraint, doc=doc)
        else:
            super().__init__(constraint, default=self.to_attr(default), doc=doc)

    def to_attr(self, v):
        raise NotImplementedError

    def to_py(self, a):
        return a.value


class IntProp(_PyProp):
    def __init__(self, default=None, doc: str = "") -> None:
        super().__init__(attr_constraint(IntegerAttr, "64-bit integer attribute",
                                         lambda a: a.type is I64), default, doc)

    def to_attr(self, v):
        return IntegerAttr(int(v), I64)


class BoolProp(_PyProp):
    def __init__(self, default=None, doc: str = "") -> None:
        super().__init__(attr_constraint(IntegerAttr, "bool attribute",
                                         lambda a: a.type is I1), default, doc)

    def to_attr(self, v):
        return BoolAttr(bool(v))

    def to_py(self, a):
        return bool(a.value)


class FloatProp(_PyProp):
    def __init__(self, default=None, doc: str = "") -> None:
        super().__init__(attr_constraint(FloatAttr, "f64 attribute", lambda a: a.type is F64),
                         default, doc)

    def to_attr(self, v):
        return FloatAttr(float(v), F64)


class IntsProp(_PyProp):
    def __init__(self, default=None, doc: str = "") -> None:
        super().__init__(attr_constraint(DenseArrayAttr, "i64 dense array attribute",
                                         lambda a: a.element_type is I64), default, doc)

    def to_attr(self, v):
        return DenseArrayAttr(I64, [int(x) for x in v])

    def to_py(self, a):
        return tuple(int(x) for x in a)


class StrProp(_PyProp):
    def __init__(self, choices: tuple = (), default=None, doc: str = "") -> None:
        self.choices = choices
        desc = ("one of " + ", ".join(f'"{c}"' for c in choices)) if choices else "string"
        super().__init__(attr_constraint(StringAttr, f"string attribute ({desc})",
                                         lambda a: not choices or a.value in choices),
                         default, doc)

    def to_attr(self, v):
        return StringAttr(str(v))


# ---------------------------------------------------------------------------------------------
# The base of every tensor op
# ---------------------------------------------------------------------------------------------


class GraphOp(Op):
    """A tensor op: shape function, uniform syntax, folding through its numpy semantics.

    Subclasses define `infer(cls, args, props)` and `evaluate(self, *values)`; both see
    properties as Python values (`props["axis"]`, defaults filled in).
    """

    __slots__ = ()

    # ----- shapes ------------------------------------------------------------------------

    @classmethod
    def infer(cls, args: list[TensorSpec], props: dict) -> list[TensorSpec]:
        raise NotImplementedError(f"{cls.name} has no shape function")

    def props(self) -> dict:
        """This op's properties as Python values."""
        out = {}
        stored = self.properties
        for pd in self.spec.props:
            a = stored.get(pd.name)
            if a is not None and isinstance(pd, _PyProp):
                out[pd.name] = pd.to_py(a)
            else:
                out[pd.name] = a
        return out

    @classmethod
    def py_props_to_attrs(cls, props: dict) -> dict:
        out = {}
        fields = {pd.name: pd for pd in cls.spec.props}
        for k, v in props.items():
            pd = fields.get(k)
            if pd is None:
                raise TypeError(f"{cls.name} has no property '{k}'")
            if v is None:
                continue
            out[k] = pd.to_attr(v) if isinstance(pd, _PyProp) else v
        return out

    @classmethod
    def create(cls, *operands, location=None, **props) -> "GraphOp":
        """Build the op from operand values and Python property values, inferring results."""
        return cls.build(*operands, location=location, **cls.py_props_to_attrs(props))

    def operand_specs(self) -> list[TensorSpec]:
        return [TensorSpec.of(o.value.type) for o in self._operands]

    def infer_result_types(self) -> list[Type]:
        try:
            specs = self.infer(self.operand_specs(), self.props())
        except ShapeError as e:
            raise self.error(str(e)) from None
        return [s.to_type() for s in specs]

    def verify_(self) -> None:
        try:
            specs = self.infer(self.operand_specs(), self.props())
        except ShapeError as e:
            raise self.error(str(e)) from None
        if len(specs) != len(self.results):
            raise self.error(f"expected {len(specs)} results, got {len(self.results)}")
        for i, (s, r) in enumerate(zip(specs, self.results)):
            if not compatible(s.to_type(), r.type):
                raise self.error(f"result #{i} has type {r.type}, but the operands give "
                                 f"{s.to_type()}")

    # ----- folding -----------------------------------------------------------------------

    def fold(self, operands):
        if all(a is not None for a in operands) and self.has_trait(Pure):
            for r in self.results:
                t = r.type
                if not isinstance(t, RankedTensorType) or not t.has_static_shape \
                        or t.num_elements > FOLD_LIMIT:
                    return self.fold_identity(operands)
            folded = constant_fold(self, operands)
            if folded is not None:
                return folded
        return self.fold_identity(operands)

    def fold_identity(self, operands):
        """Folds that need only some operands constant (x + 0 -> x); None if none applies."""
        return None

    # ----- syntax ------------------------------------------------------------------------

    @classmethod
    def parse(cls, p, num_results):
        refs = p.parse_operand_refs() if p.tok.startswith("%") else []
        attrs = p.parse_optional_attr_dict()
        props = {k: attrs.pop(k) for k in list(attrs) if k in cls.spec.prop_names}
        p.expect(":")
        tk = p.i
        ftype = p.parse_type()
        from irkit.types import FunctionType
        if not isinstance(ftype, FunctionType):
            raise p.error("expected a function type `(operand types) -> result types`", tk)
        if len(ftype.inputs) != len(refs):
            raise p.error(f"expected {len(refs)} operand types, found {len(ftype.inputs)}", tk)
        operands = [p.resolve(r, t) for r, t in zip(refs, ftype.inputs)]
        op = object.__new__(cls)
        op._init(operands, list(ftype.results), props, attrs or None, 0, (), None)
        return op

    def print(self, p):
        if self._operands:
            p.write(" ")
            p.operands([o.value for o in self._operands])
        p.attr_dict(self)
        ins = ", ".join(str(o.value.type) for o in self._operands)
        outs = [str(r.type) for r in self.results]
        res = outs[0] if len(outs) == 1 else f"({', '.join(outs)})"
        p.write(f" : ({ins}) -> {res}")


def compatible(a: Type, b: Type) -> bool:
    """Whether two tensor types can describe the same value (`?` matches any size)."""
    if a is b:
        return True
    if not (isinstance(a, RankedTensorType) and isinstance(b, RankedTensorType)):
        return False
    if a.element is not b.element or a.rank != b.rank:
        return False
    return all(x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


# ---------------------------------------------------------------------------------------------
# graph.constant
# ---------------------------------------------------------------------------------------------


@graph.op
class ConstantOp(Op):
    """A constant tensor. Without operands it is a leaf of differentiation: nothing flows
    into it, and a derivative may still be asked with respect to its value.

        %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    """

    name = "graph.constant"
    value = Prop(attr_constraint(DenseElementsAttr, "dense elements attribute"))
    result = Result(AnyTensor)
    traits = (Pure(), ConstantLike())

    @classmethod
    def create(cls, array, dtype: Type, location=None) -> "ConstantOp":
        arr = np.asarray(array, dtype=numpy_dtype(dtype))
        t = RankedTensorType(arr.shape, dtype)
        return cls.build(value=DenseElementsAttr(t, arr), result_types=[t], location=location)

    def infer_result_types(self):
        return [self.properties["value"].type]

    def verify_(self):
        if self.properties["value"].type is not self.results[0].type:
            raise self.error("value's type must match the result type")

    @classmethod
    def materialize(cls, attr, type, location=None):
        if not isinstance(attr, DenseElementsAttr) or attr.type is not type \
                or not isinstance(type, RankedTensorType):
            return None
        return cls.build(value=attr, result_types=[type], location=location)

    @classmethod
    def parse(cls, p, num_results):
        attrs = p.parse_optional_attr_dict()
        tk = p.i
        a = p.parse_attribute()
        if not isinstance(a, DenseElementsAttr):
            raise p.error("expected a dense elements attribute for graph.constant", tk)
        op = object.__new__(cls)
        op._init([], [a.type], {"value": a}, attrs or None, 0, (), None)
        return op

    def print(self, p):
        if self.attributes:
            p.attr_dict(self, elided=("value",))
        p.write(" ")
        p.attr(self.properties["value"])

    def evaluate(self):
        return np.array(self.properties["value"].array)

    def fold(self, operands):
        return [self.properties["value"]]


graph.constant_materializer = ConstantOp.materialize


# ---------------------------------------------------------------------------------------------
# Variables: graph.variable, graph.read, graph.assign
# ---------------------------------------------------------------------------------------------

#: initializer name -> the keyword arguments it takes (with defaults; None = required)
INITIALIZERS = {
    "zeros": {},
    "ones": {},
    "constant": {"value": None},
    "normal": {"mean": 0.0, "std": 1.0, "seed": 0},
    "uniform": {"low": -1.0, "high": 1.0, "seed": 0},
    "glorot": {"seed": 0},
    "he": {"seed": 0},
}


def _fans(shape: tuple) -> tuple[int, int]:
    """(fan_in, fan_out) as Keras and PyTorch count them: a dense weight [in, out] has fan_in
    = in; a conv weight [O, I, kh, kw] has fan_in = I*kh*kw and fan_out = O*kh*kw."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    field = int(np.prod(shape[2:]))
    return shape[1] * field, shape[0] * field


def initial_value(init: str, args: dict, shape: tuple, dtype) -> np.ndarray:
    """The numpy value of an initializer. Random ones draw from `np.random.default_rng(seed)`,
    so a seed means the same numbers everywhere (dev mode, compiled code, checkpoints)."""
    if init == "zeros":
        return np.zeros(shape, dtype)
    if init == "ones":
        return np.ones(shape, dtype)
    if init == "constant":
        return np.full(shape, args["value"], dtype)
    rng = np.random.default_rng(int(args.get("seed", 0)))
    if init == "normal":
        return rng.normal(args.get("mean", 0.0), args.get("std", 1.0), shape).astype(dtype)
    if init == "uniform":
        return rng.uniform(args.get("low", -1.0), args.get("high", 1.0), shape).astype(dtype)
    fan_in, fan_out = _fans(shape)
    if init == "glorot":                    # Glorot & Bengio 2010, uniform form
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, shape).astype(dtype)
    if init == "he":                        # He et al. 2015, normal form
        return rng.normal(0.0, np.sqrt(2.0 / fan_in), shape).astype(dtype)
    raise ValueError(f"unknown initializer '{init}'")


def variable_specs(module: Operation,
                   known: dict | None = None) -> list[tuple[str, tuple, np.dtype, np.ndarray]]:
    """(name, shape, dtype, initial value) per entry of a lowered module's `graph.variables`
    attribute (its record of the model's `graph.variable`s): what a compiled model's
    variables start as, the same values dev mode starts from (`initial_value`). `known`
    holds values drawn before (name -> array; the compile cache keeps them), taken where
    their shape and dtype are the variable's instead of drawing them again."""
    attr = module.attributes.get("graph.variables")
    out = []
    for entry in (attr.value if attr is not None else []):
        d = entry.value
        t = d["type"].value
        args = {k: v.value for k, v in d["init_args"].value.items()} if "init_args" in d else {}
        dtype = np.dtype(numpy_dtype(t.element))
        value = known.get(d["name"].value) if known else None
        if value is not None and value.shape == tuple(t.shape) and value.dtype == dtype:
            value = value.copy()        # a fresh array each time, as a drawn one is
        else:
            value = initial_value(d["initializer"].value, args, tuple(t.shape), dtype)
        out.append((d["name"].value, tuple(t.shape), dtype, value))
    return out


@graph.op
class VariableOp(Op):
    """A model parameter: a module-level symbol holding a tensor across calls, with the
    initializer that gives its first value.

        graph.variable @w : tensor<4x3xf32> init normal {seed = 1 : i64, std = 5.000000e-02 : f64}
    """

    name = "graph.variable"
    sym_name = Prop(SymbolNameAttr)
    type = Prop(TypeAttrC)
    initializer = Prop(StrAttr)
    init_args = OptProp(attr_constraint(DictionaryAttr, "dictionary attribute"))
    traits = (Symbol(),)

    @classmethod
    def create(cls, name: str, type: RankedTensorType, init: str = "zeros",
               args: dict | None = None, location=None) -> "VariableOp":
        attrs = {}
        for k, v in (args or {}).items():
            attrs[k] = IntegerAttr(v, I64) if isinstance(v, int) else FloatAttr(float(v), F64)
        return cls.build(result_types=[], sym_name=StringAttr(name), type=TypeAttr(type),
                         initializer=StringAttr(init),
                         init_args=DictionaryAttr(attrs) if attrs else None, location=location)

    @property
    def var_name(self) -> str:
        return self.properties["sym_name"].value

    @property
    def tensor_type(self) -> RankedTensorType:
        return self.properties["type"].value

    def init_kwargs(self) -> dict:
        d = self.properties.get("init_args")
        return {k: v.value for k, v in d.value.items()} if d is not None else {}

    def verify_(self):
        t = self.tensor_type
        if not isinstance(t, RankedTensorType) or not t.has_static_shape:
            raise self.error(f"type must be a statically shaped tensor, got {t}")
        init = self.properties["initializer"].value
        if init not in INITIALIZERS:
            raise self.error(f"unknown initializer '{init}'; expected one of "
                             f"{', '.join(INITIALIZERS)}")
        known = INITIALIZERS[init]
        for k in self.init_kwargs():
            if k not in known:
                raise self.error(f"initializer '{init}' takes no argument '{k}'")
        for k, default in known.items():
            if default is None and k not in self.init_kwargs():
                raise self.error(f"initializer '{init}' needs argument '{k}'")

    def initial_value(self) -> np.ndarray:
        t = self.tensor_type
        return initial_value(self.properties["initializer"].value, self.init_kwargs(),
                             t.shape, numpy_dtype(t.element))

    @classmethod
    def parse(cls, p, num_results):
        name = p.parse_symbol_name()
        p.expect(":")
        t = p.parse_type()
        p.expect("init")
        init = p.next()
        attrs = p.parse_optional_attr_dict()
        props = {"sym_name": StringAttr(name), "type": TypeAttr(t),
                 "initializer": StringAttr(init)}
        if attrs:
            props["init_args"] = DictionaryAttr(attrs)
        op = object.__new__(cls)
        op._init([], [], props, None, 0, (), None)
        return op

    def print(self, p):
        from irkit.attributes import format_symbol
        p.write(f" {format_symbol(self.var_name)} : {self.tensor_type} init "
                f"{self.properties['initializer'].value}")
        d = self.properties.get("init_args")
        if d is not None and d.value:
            p.write(" " + d.format())

    def interpret(self, interp, values):
        return []


def variable_record(var: VariableOp) -> DictionaryAttr:
    """One entry of a lowered module's `graph.variables` attribute (`variable_specs`): the
    variable's name, tensor type, initializer and its arguments."""
    entry = {"name": StringAttr(var.var_name), "type": TypeAttr(var.tensor_type),
             "initializer": var.properties["initializer"]}
    if var.properties.get("init_args") is not None:
        entry["init_args"] = var.properties["init_args"]
    return DictionaryAttr(entry)


def variables_attribute(module: Operation) -> ArrayAttr | None:
    """The `graph.variables` attribute that bufferization gives `module` for its
    `graph.variable` declarations (None where it has none), the module left as it is: what a
    runtime reads of a model whose functions are not lowered yet (the JIT's)."""
    records = [variable_record(op) for op in module.regions[0].blocks[0].ops
               if isinstance(op, VariableOp)]
    return ArrayAttr(records) if records else None


def variable_state(interp, op: Operation, ref: SymbolRefAttr) -> tuple[dict, str]:
    """The interpreter's variable store and the key for `ref`; a variable not yet in the store
    is initialized from its initializer (so any module runs without a separate init step)."""
    store = interp.state.setdefault("graph.variables", {})
    name = ref.root
    if name not in store:
        var = _lookup_variable(op, ref)
        store[name] = var.initial_value()
    return store, name


def _lookup_variable(op: Operation, ref: SymbolRefAttr) -> VariableOp | None:
    from irkit.symbols import lookup_symbol
    var = lookup_symbol(op, ref)
    return var if isinstance(var, VariableOp) else None


class _VariableAccess(Op):
    """Shared checks of graph.read and graph.assign: the symbol names a graph.variable whose
    type is the tensor read or written."""

    __slots__ = ()

    def _check(self, t: Type) -> None:
        ref = self.properties["variable"]
        var = _lookup_variable(self, ref)
        if var is None:
            raise self.error(f"'{ref.format()}' does not name a graph.variable")
        if var.tensor_type is not t:
            raise self.error(f"type {t} does not match variable {ref.format()} of type "
                             f"{var.tensor_type}")


@graph.op
class ReadOp(_VariableAccess):
    """The current value of a variable (the lecture's variable node). Its result is a leaf of
    differentiation: gradients with respect to a parameter are asked `wrt` the value read.
    Derivatives do not flow through the variable's state, so a read after an assign is a
    new leaf, not a function of the value assigned.

        graph.variable @w : tensor<3xf32> init zeros
        func.func @f() -> tensor<3xf32> {
          %0 = graph.read @w : tensor<3xf32>
          return %0 : tensor<3xf32>
        }
    """

    name = "graph.read"
    variable = Prop(FlatSymbolRef)
    result = Result(AnyTensor)

    def verify_(self):
        self._check(self.results[0].type)

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_attribute()
        p.expect(":")
        t = p.parse_type()
        op = object.__new__(cls)
        op._init([], [t], {"variable": ref}, None, 0, (), None)
        return op

    def print(self, p):
        p.write(f" {self.properties['variable'].format()} : {self.results[0].type}")

    def interpret(self, interp, values):
        store, name = variable_state(interp, self, self.properties["variable"])
        return [store[name]]


@graph.op
class AssignOp(_VariableAccess):
    """Overwrite a variable with a new value (the lecture's `assign`): how a training step
    updates its parameters in place. It has no results, so no derivative flows back through
    it (`NonDifferentiable`): an update in the scope of a gradient is never differentiated.

        graph.variable @w : tensor<3xf32> init zeros
        func.func @f(%v: tensor<3xf32>) {
          graph.assign @w, %v : tensor<3xf32>
          return
        }
    """

    name = "graph.assign"
    variable = Prop(FlatSymbolRef)
    value = Operand(AnyTensor)
    traits = (NonDifferentiable(),)

    def verify_(self):
        self._check(self.value.type)

    @classmethod
    def parse(cls, p, num_results):
        ref = p.parse_attribute()
        p.expect(",")
        r = p.parse_operand_ref()
        p.expect(":")
        t = p.parse_type()
        op = object.__new__(cls)
        op._init([p.resolve(r, t)], [], {"variable": ref}, None, 0, (), None)
        return op

    def print(self, p):
        p.write(f" {self.properties['variable'].format()}, {p.value(self.value)} : "
                f"{self.value.type}")

    def interpret(self, interp, values):
        store, name = variable_state(interp, self, self.properties["variable"])
        store[name] = values[0]
        return []
