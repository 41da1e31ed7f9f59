"""The op-definition API: one class per op, everything it *is* declared on the class.

    class AddFOp(Op):
        '''Floating-point addition.

            %r = arith.addf %a, %b : f32
        '''
        name = "arith.addf"
        lhs = Operand(FloatLike)
        rhs = Operand(FloatLike)
        result = Result(FloatLike)
        fastmath = Prop(FASTMATH, default=FASTMATH_NONE)
        traits = (Pure(), Commutative(), SameOperandsAndResultType(), Elementwise())

        def evaluate(self, a, b): return a + b

Descriptors (`Operand`, `VarOperand`, `OptOperand`, `Result`, `VarResult`, `Prop`, `OptProp`,
`Attr`, `RegionDef`, `Successor`, `VarSuccessor`) are collected in definition order by
`__init_subclass__` into an `OpSpec`; no metaclass. Reading `op.lhs` returns the operand
value; variadic groups are located by count, or by the `operandSegmentSizes` property when an
op has several variadic groups (MLIR's convention, so generic text matches MLIR's).

Hooks an op class may define (all optional):

- `infer_result_types(self) -> list[Type]`: result types from operands and attributes;
- `verify_(self)`: the op's own rules, raising `self.error(...)`;
- `fold(self, operands) -> list[Attribute | Value] | None`: `operands` holds each operand's
  constant attribute or None;
- `canonicalization_patterns`: a tuple of pattern classes;
- `evaluate(self, *values)`: numpy reference semantics for the interpreter, or
  `interpret(self, interp, values)` for ops with regions or control flow;
- `parse(cls, parser, result_count)` / `print(self, printer)`: custom assembly;
- `vjp` / `jvp`: differentiation rules (later layers);
- `memory_effects(self) -> list[(effect, value)]`: what the op does to buffers, each effect
  one of `ALLOCATE`, `FREE`, `READ`, `WRITE` on a memref value (MLIR's
  MemoryEffectOpInterface); an op without `Pure` that lists none has no effect
  (`irkit.rewrite.is_pure`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from irkit.attributes import (
    ArrayAttr, Attribute, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, StringAttr,
    SymbolRefAttr, TypeAttr, UnitAttr,
)
from irkit.diagnostics import VerifyError
from irkit.ir import Operation, Value
from irkit.registry import (  # noqa: F401  (the registry is part of the op-definition API)
    Dialect, lookup_dialect, lookup_op, loaded_ops, register_lazy_dialect, registered_ops,
    unregister_dialect,
)
from irkit.types import (
    ComplexType, FloatType, FunctionType, IndexType, IntegerType, RankedTensorType,
    ShapedType, Type, UnrankedTensorType, VectorType, MemRefType, UnrankedMemRefType, I32,
)

#: the effects `memory_effects()` lists, each on one buffer (module docstring)
ALLOCATE, FREE, READ, WRITE = "allocate", "free", "read", "write"

# ---------------------------------------------------------------------------------------------
# Constraints
# ---------------------------------------------------------------------------------------------


class Constraint:
    """A named predicate on a type (or attribute); `description` appears in verifier errors."""

    def __init__(self, pred: Callable[[Any], bool], description: str) -> None:
        self.pred = pred
        self.description = description
        # Types are interned and few, so the answer per type is cached: the verifier asks
        # the same question for every op of a 100k-op function.
        self._by_type: dict = {}

    def __call__(self, x) -> bool:
        r = self._by_type.get(x) if isinstance(x, Type) else None
        if r is None:
            r = bool(self.pred(x))
            if isinstance(x, Type):
                self._by_type[x] = r
        return r

    def __or__(self, other: "Constraint") -> "Constraint":
        return Constraint(lambda t: self.pred(t) or other.pred(t),
                          f"{self.description} or {other.description}")


def scalar_or_container(pred):
    def check(t):
        if isinstance(t, (RankedTensorType, UnrankedTensorType, VectorType)):
            return pred(t.element)
        return pred(t)
    return check


AnyType = Constraint(lambda t: isinstance(t, Type), "any type")
AnyFloat = Constraint(lambda t: isinstance(t, FloatType), "floating-point")
AnySignlessInteger = Constraint(
    lambda t: isinstance(t, IntegerType) and t.signedness == "signless", "signless integer")
AnyInteger = Constraint(lambda t: isinstance(t, IntegerType), "integer")
Index = Constraint(lambda t: isinstance(t, IndexType), "index")
Bool = Constraint(lambda t: isinstance(t, IntegerType) and t.width == 1
                  and t.signedness == "signless", "i1")
SignlessIntegerOrIndex = Constraint(
    lambda t: isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.is_signless),
    "signless integer or index")
# The `-like` constraints describe themselves as MLIR does (`operand #0 must be
# floating-point-like, but got 'i32'`): a scalar, or a tensor or vector of such scalars.
FloatLike = Constraint(scalar_or_container(lambda t: isinstance(t, FloatType)),
                       "floating-point-like")
SignlessIntegerLike = Constraint(
    scalar_or_container(lambda t: isinstance(t, IndexType)
                         or (isinstance(t, IntegerType) and t.is_signless)),
    "signless-integer-like")
BoolLike = Constraint(
    scalar_or_container(lambda t: isinstance(t, IntegerType) and t.width == 1
                         and t.is_signless), "bool-like")
ComplexLike = Constraint(scalar_or_container(lambda t: isinstance(t, ComplexType)),
                         "complex-like")
AnyTensor = Constraint(lambda t: isinstance(t, (RankedTensorType, UnrankedTensorType)),
                       "tensor")
AnyRankedTensor = Constraint(lambda t: isinstance(t, RankedTensorType), "ranked tensor")
AnyVector = Constraint(lambda t: isinstance(t, VectorType), "vector")
AnyMemRef = Constraint(lambda t: isinstance(t, (MemRefType, UnrankedMemRefType)), "memref")
AnyShaped = Constraint(lambda t: isinstance(t, ShapedType), "shaped type")


def attr_constraint(cls: type | tuple, description: str,
                    pred: Callable[[Attribute], bool] | None = None) -> Constraint:
    if pred is None:
        return Constraint(lambda a: isinstance(a, cls), description)
    return Constraint(lambda a: isinstance(a, cls) and pred(a), description)


AnyAttr = Constraint(lambda a: isinstance(a, Attribute), "any attribute")
StrAttr = attr_constraint(StringAttr, "string attribute")
SymbolNameAttr = attr_constraint(StringAttr, "symbol name (string attribute)")
SymbolRef = attr_constraint(SymbolRefAttr, "symbol reference attribute")
FlatSymbolRef = attr_constraint(SymbolRefAttr, "flat symbol reference attribute",
                                lambda a: not a.nested)
IntAttr = attr_constraint(IntegerAttr, "integer attribute")
I64Attr = attr_constraint(IntegerAttr, "64-bit signless integer attribute",
                          lambda a: str(a.type) == "i64")
FloatAttrC = attr_constraint(FloatAttr, "float attribute")
UnitAttrC = attr_constraint(UnitAttr, "unit attribute")
ArrayAttrC = attr_constraint(ArrayAttr, "array attribute")
DictAttrC = attr_constraint(DictionaryAttr, "dictionary attribute")
DenseI64Array = attr_constraint(DenseArrayAttr, "i64 dense array attribute",
                                lambda a: str(a.element_type) == "i64")
DenseI32Array = attr_constraint(DenseArrayAttr, "i32 dense array attribute",
                                lambda a: str(a.element_type) == "i32")
TypeAttrC = attr_constraint(TypeAttr, "type attribute")
FunctionTypeAttr = attr_constraint(TypeAttr, "type attribute of function type",
                                   lambda a: isinstance(a.value, FunctionType))


# ---------------------------------------------------------------------------------------------
# Descriptors
# ---------------------------------------------------------------------------------------------


class _Field:
    kind = ""
    variadic = False
    optional = False

    def __set_name__(self, owner, name):
        self.name = name


class Operand(_Field):
    kind = "operand"

    def __init__(self, constraint: Constraint = AnyType, doc: str = "") -> None:
        self.constraint = constraint
        self.doc = doc

    def __get__(self, op, owner=None):
        if op is None:
            return self
        index = self.index
        if index < op.spec.first_var_operand:  # every group before it is one operand
            return op._operands[index].value
        start, size = op._group_range("operand", index)
        if self.variadic:
            return [o.value for o in op._operands[start:start + size]]
        if self.optional:
            return op._operands[start].value if size else None
        return op._operands[start].value

    def __set__(self, op, value):
        start, size = op._group_range("operand", self.index)
        if self.variadic or self.optional:
            raise AttributeError(f"variadic operand '{self.name}' cannot be assigned")
        op._operands[start].set(value)


class VarOperand(Operand):
    variadic = True


class OptOperand(Operand):
    optional = True


class Result(_Field):
    kind = "result"

    def __init__(self, constraint: Constraint = AnyType, doc: str = "") -> None:
        self.constraint = constraint
        self.doc = doc

    def __get__(self, op, owner=None):
        if op is None:
            return self
        index = self.index
        if index < op.spec.first_var_result:
            return op.results[index]
        start, size = op._group_range("result", index)
        if self.variadic:
            return op.results[start:start + size]
        if self.optional:
            return op.results[start] if size else None
        return op.results[start]


class VarResult(Result):
    variadic = True


class OptResult(Result):
    optional = True


MISSING = object()


class Prop(_Field):
    """An inherent attribute (a property, `<{...}>` in generic form)."""

    kind = "prop"
    inherent = True

    def __init__(self, constraint: Constraint = AnyAttr, default: Any = MISSING,
                 doc: str = "") -> None:
        self.constraint = constraint
        self.default = default
        self.optional = default is not MISSING
        self.doc = doc

    def __get__(self, op, owner=None):
        if op is None:
            return self
        a = op.properties.get(self.name)
        if a is None:
            return None if self.default is MISSING else self.default
        return a

    def __set__(self, op, value):
        if value is None:
            op.properties.pop(self.name, None)
        else:
            op.properties[self.name] = value


class OptProp(Prop):
    def __init__(self, constraint: Constraint = AnyAttr, doc: str = "") -> None:
        super().__init__(constraint, None, doc)


class RegionDef(_Field):
    kind = "region"

    def __init__(self, doc: str = "", single_block: bool = False) -> None:
        self.doc = doc
        self.single_block = single_block

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.regions[self.index]


class VarRegion(RegionDef):
    variadic = True

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.regions[self.index:]


class Successor(_Field):
    kind = "successor"

    def __init__(self, doc: str = "") -> None:
        self.doc = doc

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.successors[self.index]


class VarSuccessor(Successor):
    variadic = True

    def __get__(self, op, owner=None):
        if op is None:
            return self
        return op.successors[self.index:]


# ---------------------------------------------------------------------------------------------
# Traits
# ---------------------------------------------------------------------------------------------


class Trait:
    """A property of an op kind. `verify(op)` may check structural rules."""

    def verify(self, op: "Op") -> None:
        pass

    def __repr__(self):
        return type(self).__name__


class Pure(Trait):
    """No side effects: may be CSE'd, hoisted, and erased when unused."""


class Commutative(Trait):
    """Operands may be reordered (canonical order puts constants last)."""


class Terminator(Trait):
    """Must be the last op of its block."""


class NoTerminator(Trait):
    """Regions of this op need no terminator."""


class IsolatedFromAbove(Trait):
    """Regions may not use values defined outside the op."""


class GraphRegion(Trait):
    """Regions are graph regions: no dominance requirement among their ops."""


class SingleBlock(Trait):
    def verify(self, op):
        for i, r in enumerate(op.regions):
            if len(r.blocks) > 1:
                raise op.error(f"expects region #{i} to have 0 or 1 blocks")


class ConstantLike(Trait):
    """Materializes a constant attribute as a value (folders read it)."""


class ReturnLike(Trait):
    """Terminator that returns values to the parent op."""


class SymbolTable(Trait):
    """Holds symbols (ops with `sym_name`) that must be unique in its region."""

    def verify(self, op):
        seen: dict[str, Operation] = {}
        for region in op.regions:
            for child in region.ops:
                name = child.properties.get("sym_name") or child.attributes.get("sym_name")
                if isinstance(name, StringAttr):
                    if name.value in seen:
                        # op_error, not child.error: the child may be an unregistered op.
                        err = op_error(child, f"redefinition of symbol named '{name.value}'")
                        err.note("see existing symbol definition here",
                                 seen[name.value].location)
                        raise err
                    seen[name.value] = child


class Symbol(Trait):
    """Defines a symbol through its `sym_name` property."""

    def verify(self, op):
        if not isinstance(op.properties.get("sym_name"), StringAttr):
            raise op.error("requires string attribute 'sym_name'")


class SameOperandsAndResultType(Trait):
    def verify(self, op):
        types = [o.value.type for o in op._operands] + [r.type for r in op.results]
        if types and any(t is not types[0] for t in types):
            raise op.error("requires the same type for all operands and results")


class SameOperandsType(Trait):
    def verify(self, op):
        types = [o.value.type for o in op._operands]
        if types and any(t is not types[0] for t in types):
            raise op.error("requires all operands to have the same type")


class SameOperandsAndResultShape(Trait):
    """Every operand and result has a compatible shape (MLIR's `verifyCompatibleShape`):
    all shaped or all scalars; ranked shapes of one rank whose sizes agree where both are
    known; vectors also agree on which dimensions are scalable. An unranked tensor is
    compatible with any shape."""

    def verify(self, op):
        types = [o.value.type for o in op._operands] + [r.type for r in op.results]
        if types and not all(compatible_shapes(types[0], t) for t in types[1:]):
            raise op.error("requires the same shape for all operands and results")


def compatible_shapes(a: Type, b: Type) -> bool:
    """MLIR's `verifyCompatibleShape(Type, Type)` (see `SameOperandsAndResultShape`)."""
    sa, sb = isinstance(a, ShapedType), isinstance(b, ShapedType)
    if not sa or not sb:
        return sa == sb
    ra, rb = getattr(a, "shape", None), getattr(b, "shape", None)
    if ra is None or rb is None:
        return True
    if len(ra) != len(rb) or any(x != y and x is not None and y is not None
                                 for x, y in zip(ra, rb)):
        return False
    if isinstance(a, VectorType) and isinstance(b, VectorType):
        return tuple(a.scalable) == tuple(b.scalable)
    return True


class Elementwise(Trait):
    """Applies a scalar function to each element; scalars, tensors and vectors alike."""


class HasParent(Trait):
    def __init__(self, *names: str) -> None:
        self.names = names

    def verify(self, op):
        parent = op.parent_op
        if parent is None or parent.name not in self.names:
            expected = ", ".join(f"'{n}'" for n in self.names)
            raise op.error(f"expects parent op {'to be one of ' if len(self.names) > 1 else ''}"
                           f"{expected}")

    def __repr__(self):
        return f"HasParent({', '.join(self.names)})"


class AutomaticAllocationScope(Trait):
    pass


class AffineScope(Trait):
    pass


class CallableOp(Trait):
    """A callable symbol with a body region (func.func)."""


# ---------------------------------------------------------------------------------------------
# The op base class and registry
# ---------------------------------------------------------------------------------------------


class OpSpec:
    """What `__init_subclass__` collected from an op class, in definition order."""

    def __init__(self, cls) -> None:
        self.operands: list[Operand] = []
        self.results: list[Result] = []
        self.props: list[Prop] = []
        self.regions: list[RegionDef] = []
        self.successors: list[Successor] = []
        seen = set()
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, _Field):
                    if name in seen:
                        for lst in (self.operands, self.results, self.props, self.regions,
                                    self.successors):
                            lst[:] = [f for f in lst if f.name != name]
                    seen.add(name)
                    {"operand": self.operands, "result": self.results, "prop": self.props,
                     "region": self.regions, "successor": self.successors}[value.kind].append(value)
        for group in (self.operands, self.results, self.regions, self.successors):
            for i, f in enumerate(group):
                f.index = i
        self.n_var_operands = sum(1 for o in self.operands if o.variadic or o.optional)
        self.n_var_results = sum(1 for o in self.results if o.variadic or o.optional)
        # Where each group starts (`Op._group_range`), read on every `op.lhs`: a field before
        # `first_var_*` starts at its index; with one variable group, the one field `var_*`
        # spans what the others leave, and the fields after it count from the end; with
        # several, the segment sizes say (first_var_* is 0: read for every field).
        self.var_operand = _only_variable(self.operands)
        self.var_result = _only_variable(self.results)
        self.first_var_operand = _first_variable(self.operands, self.n_var_operands)
        self.first_var_result = _first_variable(self.results, self.n_var_results)
        self.prop_names = frozenset(p.name for p in self.props)
        # MLIR stores default-valued properties on every op (the generic form shows them).
        self.stored_defaults = [(p.name, p.default) for p in self.props
                                if p.default is not MISSING and p.default is not None]
        # Shortcuts for the verifier's common case: no variadic groups, so operand i is
        # checked against field i directly.
        self.fixed_arity = self.n_var_operands == 0 and self.n_var_results == 0
        self.operand_constraints = tuple(o.constraint for o in self.operands)
        self.result_constraints = tuple(r.constraint for r in self.results)
        self.variadic_regions = any(getattr(r, "variadic", False) for r in self.regions)
        self.variadic_successors = any(getattr(s, "variadic", False) for s in self.successors)
        if self.n_var_operands > 1:
            self.prop_names |= {"operandSegmentSizes"}
        if self.n_var_results > 1:
            self.prop_names |= {"resultSegmentSizes"}


def _only_variable(fields: list) -> int:
    """The index of the only variadic or optional field of a group (-1: none, or several)."""
    var = [f.index for f in fields if f.variadic or f.optional]
    return var[0] if len(var) == 1 else -1


def _first_variable(fields: list, nvar: int) -> int:
    """How many leading fields of a group start at their own index whatever the op's counts:
    all of them without variable groups, those before the variable one with one, none with
    several (the segment sizes are read even for fixed fields, so that IR whose sizes are
    wrong reads as it always did until the verifier reports them)."""
    return len(fields) if nvar == 0 else max(_only_variable(fields), 0)


class Op(Operation):
    """Base of registered ops. See the module docstring for the class-level declarations."""

    __slots__ = ()
    name: str = ""
    traits: tuple = ()
    spec: OpSpec
    dialect: Dialect
    canonicalization_patterns: tuple = ()
    #: dialect whose ops may be written without prefix inside this op's regions (`return`)
    default_dialect: str | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.spec = OpSpec(cls)
        cls._trait_types = frozenset(type(t) for t in cls.traits)
        # Only traits with rules of their own are worth calling per op.
        cls._verifying_traits = tuple(t for t in cls.traits
                                      if type(t).verify is not Trait.verify)
        cls._has_verify = cls.verify_ is not Op.verify_

    @classmethod
    def has_trait(cls, trait: type) -> bool:
        return trait in cls._trait_types

    # ----- building ---------------------------------------------------------------------

    @classmethod
    def build(cls, *args, result_types: Iterable[Type] | None = None, location=None,
              attributes: dict | None = None, regions: int | Iterable | None = None,
              successors: Iterable | None = None, **kwargs) -> "Op":
        """Create an op from operands (positionally or by name) and properties by name.

        Result types are inferred through `infer_result_types` when not given.
        """
        spec = cls.spec
        groups = list(args)
        operands: list[Value] = []
        sizes = []
        for i, od in enumerate(spec.operands):
            if i < len(groups):
                v = groups[i]
            else:
                v = kwargs.pop(od.name, None if (od.optional or od.variadic) else MISSING)
                if v is MISSING:
                    raise TypeError(f"{cls.name}: missing operand '{od.name}'")
            if od.variadic:
                v = list(v or [])
                operands.extend(v)
                sizes.append(len(v))
            elif od.optional:
                operands.extend([v] if v is not None else [])
                sizes.append(0 if v is None else 1)
            else:
                operands.append(v)
                sizes.append(1)
        props = {}
        for pd in spec.props:
            v = kwargs.pop(pd.name, None)
            if v is not None:
                props[pd.name] = v
        if kwargs:
            raise TypeError(f"{cls.name}: unknown arguments {sorted(kwargs)}")
        if spec.n_var_operands > 1:
            from irkit.attributes import DenseArrayAttr as _D
            props["operandSegmentSizes"] = _D(I32, sizes)
        if regions is None:
            regions = len(spec.regions)
        op = object.__new__(cls)
        op._init(operands, [], props, attributes, regions, successors or [], location)
        if result_types is None:
            result_types = op.infer_result_types()
        from irkit.ir import OpResult
        op.results = [OpResult(t, op, i) for i, t in enumerate(result_types)]
        return op

    def _init(self, operands, result_types, properties, attributes, regions, successors,
              location) -> None:
        Operation._init(self, operands, result_types, properties, attributes, regions,
                        successors, location)
        defaults = self.spec.stored_defaults
        if defaults:
            props = self.properties
            for name, value in defaults:
                if name not in props:
                    props[name] = value

    def infer_result_types(self) -> list[Type]:
        raise TypeError(f"'{self.name}' cannot infer its result types; pass result_types=")

    # ----- operand groups ----------------------------------------------------------------

    def _group_range(self, kind: str, index: int) -> tuple[int, int]:
        """(start, size) of field `index`'s group of operands or results, in O(1) (the
        layout `OpSpec` worked out per class): accessors read it on every `op.lhs`."""
        spec = self.spec
        if kind == "operand":
            nfields, total = len(spec.operands), len(self._operands)
            nvar, var = spec.n_var_operands, spec.var_operand
            seg_name = "operandSegmentSizes"
        else:
            nfields, total = len(spec.results), len(self.results)
            nvar, var = spec.n_var_results, spec.var_result
            seg_name = "resultSegmentSizes"
        if nvar == 0:
            return index, 1
        if nvar == 1:
            # the fields before the variable one are single, it holds what the others leave
            # (total - (nfields - 1)), and the fields after it are single again
            if index < var:
                return index, 1
            if index == var:
                return index, total - nfields + 1
            return total - nfields + index, 1
        sizes = self.properties.get(seg_name).value
        return sum(sizes[:index]), sizes[index]

    # ----- diagnostics ------------------------------------------------------------------

    def error(self, message: str) -> VerifyError:
        """A verifier error at this op's location, prefixed with the op name as MLIR does."""
        return VerifyError(f"'{self.name}' op {message}", self.location)

    # ----- hooks with defaults -------------------------------------------------------------

    def verify_(self) -> None:
        pass

    def fold(self, operands: list) -> list | None:
        return None


def op_error(op: Operation, message: str) -> VerifyError:
    return VerifyError(f"'{op.name}' op {message}", op.location)


def has_trait(op: Operation, trait: type) -> bool:
    cls = type(op)
    return getattr(cls, "_trait_types", None) is not None and trait in cls._trait_types


class BareOp(Op):
    """An op without operands, results or regions, written as its name and attribute
    dictionary (MLIR's `assemblyFormat = "attr-dict"`): a barrier, a fence, a terminator.
    Subclasses declare their name, traits and semantics; the assembly is this."""

    __slots__ = ()

    def infer_result_types(self):
        return []

    @classmethod
    def parse(cls, p, num_results):
        return cls.build(attributes=p.parse_optional_attr_dict())

    def print(self, p):
        p.attr_dict(self)
