"""Shared machinery of the `arith` dialect, also used by `math`: the flag attributes, the
custom-syntax pieces and the op base classes.

Everything an op *is* sits on its class; the numeric plumbing (two's-complement wrapping,
constant attribute <-> numpy value) lives in `fold`, and the shared custom-syntax
pieces (flag keywords, `: T` and `: T to U` tails) are the small functions below.

Properties follow MLIR's storage exactly, so generic text matches `mlir-opt`'s:
`fastmath = #arith.fastmath<...>` and `overflowFlags = #arith.overflow<...>` are always
present (MLIR's default-valued properties; a missing one is filled in when the op is made),
`isExact`, `roundingmode` and the cast `fastmath` only when set. Flag attributes are
`OpaqueAttr`s interned per flag set, in MLIR's canonical flag order, so comparing them is an
identity test and printing them costs nothing.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import UNIT, IntegerAttr, OpaqueAttr
from irkit.ir import Operation
from irkit.opdef import Commutative, Constraint, Dialect, Op, scalar_or_container, \
    attr_constraint
from irkit.types import (
    I1, I32, I64, FloatType, IntegerType, RankedTensorType, ShapedType, UnrankedTensorType,
    VectorType,
)
from irkit.dialects.arith import fold as af
from irkit.dialects.arith.fold import (  # noqa: F401  (re-exported to the op modules)
    elem, int_binary, int_info, signed, unsigned, wrap,
)

arith = Dialect("arith", "Integer and floating-point arithmetic, comparisons and casts.")

# ---------------------------------------------------------------------------------------------
# Flag attributes: #arith.fastmath<...>, #arith.overflow<...>
# ---------------------------------------------------------------------------------------------


class FlagKind:
    """A bit-set enum attribute (`fastmath`, `overflow`): interned attrs by mask and body."""

    def __init__(self, mnemonic: str, flags: tuple, all_name: str | None, sep: str) -> None:
        self.mnemonic = mnemonic
        self.flags = flags
        self.all_name = all_name
        self.sep = sep
        full = (1 << len(flags)) - 1
        self.by_mask = {}
        for mask in range(full + 1):
            if mask == 0:
                text = "none"
            elif mask == full and all_name:
                text = all_name
            else:
                text = sep.join(f for i, f in enumerate(flags) if mask >> i & 1)
            self.by_mask[mask] = OpaqueAttr(f"arith.{mnemonic}<{text}>")
        self.by_body = {a.body: a for a in self.by_mask.values()}
        self.mask_of = {a: m for m, a in self.by_mask.items()}
        self.valid = frozenset(self.by_mask.values())
        self.none = self.by_mask[0]

    def has(self, attr, *names: str) -> bool:
        """Does the flag set `attr` include every flag in `names`?"""
        mask = self.mask_of.get(attr, 0)
        return all(mask >> self.flags.index(n) & 1 for n in names)

    def intersect(self, a, b) -> OpaqueAttr:
        """The flags both `a` and `b` have: what stays true when two ops become one."""
        return self.by_mask[self.mask_of.get(a, 0) & self.mask_of.get(b, 0)]

    def from_names(self, names) -> OpaqueAttr | None:
        """The attribute for flag names (`fast`, `none` included); None if one is unknown."""
        mask = 0
        for n in names:
            if n == "none":
                continue
            if n == self.all_name:
                mask = (1 << len(self.flags)) - 1
            elif n in self.flags:
                mask |= 1 << self.flags.index(n)
            else:
                return None
        return self.by_mask[mask]

    def canonical(self, attr) -> OpaqueAttr | None:
        """The interned attribute equal to `attr` (flags reordered as MLIR prints them)."""
        c = self.by_body.get(attr.body)
        if c is None:
            prefix = f"arith.{self.mnemonic}<"
            body = attr.body
            if body.startswith(prefix) and body.endswith(">"):
                names = [n.strip() for n in body[len(prefix):-1].split(",")]
                c = self.from_names(names)
                if c is not None:
                    self.by_body[body] = c
        return c

    def parse(self, p) -> OpaqueAttr:
        """`<flag, flag>` after the keyword in custom syntax."""
        p.expect("<")
        tk = p.i
        names = [p.next()]
        while p.accept(","):
            names.append(p.next())
        p.expect(">")
        a = self.from_names(names)
        if a is None:
            allowed = ", ".join(("none",) + self.flags + ((self.all_name,) if self.all_name
                                                          else ()))
            raise p.error(f"expected {self.mnemonic} flags to be one of: {allowed}", tk)
        return a


FASTMATH = FlagKind("fastmath", ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn"),
                    "fast", ",")
OVERFLOW = FlagKind("overflow", ("nsw", "nuw"), None, ", ")
FASTMATH_NONE = FASTMATH.none
FASTMATH_FAST = FASTMATH.by_mask[127]
OVERFLOW_NONE = OVERFLOW.none

FastMathAttr = Constraint(lambda a: a in FASTMATH.valid, "arith fastmath flags attribute")
OverflowAttr = Constraint(lambda a: a in OVERFLOW.valid, "arith overflow flags attribute")
ROUNDING_MODES = ("to_nearest_even", "downward", "upward", "toward_zero", "to_nearest_away")
RoundingModeAttr = attr_constraint(IntegerAttr, "allowed 32-bit signless integer cases: "
                                   "0, 1, 2, 3, 4", lambda a: a.type is I32 and 0 <= a.value <= 4)

CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                   "uge", "ult", "ule", "une", "uno", "true")

#: cmpi predicate of `not (a p b)`, and of `b p a` (operands swapped), by predicate index
CMPI_INVERSE = (1, 0, 5, 4, 3, 2, 9, 8, 7, 6)
CMPI_SWAPPED = (0, 1, 4, 5, 2, 3, 8, 9, 6, 7)
#: cmpf: `not (a p b)` flips ordered <-> unordered and the relation (olt -> uge, ord -> uno)
CMPF_INVERSE = (15, 13, 12, 11, 10, 9, 8, 14, 6, 5, 4, 3, 2, 1, 7, 0)


def predicate_constraint(n: int) -> Constraint:
    return attr_constraint(IntegerAttr, "allowed 64-bit signless integer cases: "
                           + ", ".join(map(str, range(n))),
                           lambda a: a.type is I64 and 0 <= a.value < n)


SignlessFixedIntLike = Constraint(
    scalar_or_container(lambda t: isinstance(t, IntegerType) and t.is_signless),
    "signless-fixed-width-integer-like")
IntOrFloatLike = Constraint(
    scalar_or_container(lambda t: isinstance(t, FloatType)
                         or (isinstance(t, IntegerType) and t.is_signless)),
    "signless-integer-or-float-like")

# ---------------------------------------------------------------------------------------------
# Shared custom-syntax pieces
# ---------------------------------------------------------------------------------------------


def make(cls, operands, result_types, props, attrs):
    """Create an op without `build`'s argument matching (the parser's hot path)."""
    op = object.__new__(cls)
    op._init(operands, result_types, props, attrs, 0, (), None)
    return op


def parse_flags(cls, p) -> dict:
    """The optional keywords after the operands, in the order the op's format lists them."""
    props = {}
    for kind in cls._flags:
        t = p.tok
        if kind == "fastmath" and t == "fastmath":
            p.i += 1
            props["fastmath"] = FASTMATH.parse(p)
        elif kind == "overflow" and t == "overflow":
            p.i += 1
            props["overflowFlags"] = OVERFLOW.parse(p)
        elif kind == "exact" and t == "exact":
            p.i += 1
            props["isExact"] = UNIT
        elif kind == "rounding" and t in ROUNDING_MODES:
            p.i += 1
            props["roundingmode"] = IntegerAttr(ROUNDING_MODES.index(t), I32)
    return props


def flags_text(op) -> str:
    """The flag keywords of `op` as MLIR prints them (defaults elided)."""
    props = op.properties
    out = ""
    for kind in op._flags:
        if kind == "fastmath":
            a = props.get("fastmath")
            if a is not None and (a is not FASTMATH_NONE or op._flag_default is None):
                out += " " + a.body[6:]
        elif kind == "overflow":
            a = props.get("overflowFlags")
            if a is not None and a is not OVERFLOW_NONE:
                out += " " + a.body[6:]
        elif kind == "exact":
            if "isExact" in props:
                out += " exact"
        elif kind == "rounding":
            a = props.get("roundingmode")
            if a is not None:
                out += " " + ROUNDING_MODES[a.value]
    return out


def print_attrs(op, p) -> None:
    """The discardable-attribute dict (properties are printed as keywords instead)."""
    if op.attributes or len(op.properties) > len(op._flags):
        p.attr_dict(op, elided=op.spec.prop_names)


def i1_like(t):
    """`i1`, or an i1 tensor/vector of the same shape as `t` (cmpi, cmpf, isnan results, a
    select's condition); a tensor keeps its encoding, as MLIR's `getI1SameShape` does."""
    if isinstance(t, VectorType):
        return VectorType(t.shape, I1, t.scalable)
    if isinstance(t, RankedTensorType):
        return RankedTensorType(t.shape, I1, t.encoding)
    if isinstance(t, UnrankedTensorType):
        return UnrankedTensorType(I1)
    return I1


# ---------------------------------------------------------------------------------------------
# Base classes
# ---------------------------------------------------------------------------------------------


class ArithOp(Op):
    """Common machinery: flag properties filled in and interned when an op is made."""

    __slots__ = ()
    _flags: tuple = ()
    #: property MLIR always stores (fastmath / overflowFlags), its kind, and default value
    _flag_prop: str | None = None
    _flag_kind: FlagKind | None = None
    _flag_default = None

    def _init(self, operands, result_types, properties, attributes, regions, successors,
              location):
        Operation._init(self, operands, result_types, properties, attributes, regions,
                        successors, location)
        name = self._flag_prop
        if name is not None:
            props = self.properties
            a = props.get(name)
            if a is None:
                if self._flag_default is not None:
                    props[name] = self._flag_default
            elif type(a) is OpaqueAttr:
                c = self._flag_kind.canonical(a)
                if c is not None:
                    props[name] = c

    def fold(self, operands):
        for a in operands:
            if a is None:
                return self.fold_identity(operands)
        r = af.constant_fold(self, operands)
        return r if r is not None else self.fold_identity(operands)

    def fold_identity(self, operands):
        """Algebraic folds that need only some operands constant (or none)."""
        return None


class _SameType(ArithOp):
    """`%r = dialect.op %a[, %b ...] [flags] [attr-dict] : T`: `_arity` operands and the result
    all of type T (the custom form of every elementwise arith/math op)."""

    __slots__ = ()
    _arity = 1

    def infer_result_types(self):
        return [self._operands[0].value.type]

    @classmethod
    def parse(cls, p, num_results):
        refs = [p.parse_operand_ref()]
        for _ in range(cls._arity - 1):
            p.expect(",")
            refs.append(p.parse_operand_ref())
        props = parse_flags(cls, p) if cls._flags else None
        attrs = p.parse_optional_attr_dict()
        p.expect(":")
        t = p.parse_type()
        return make(cls, [p.resolve(r, t) for r in refs], [t], props, attrs)

    def print(self, p):
        p.write(f" {', '.join([p.value(o.value) for o in self._operands])}"
                f"{flags_text(self) if self._flags else ''}")
        print_attrs(self, p)
        p.write(f" : {self.results[0].type}")


class BinaryOp(_SameType):
    """`%r = arith.op %lhs, %rhs [flags] [attr-dict] : T`."""

    __slots__ = ()
    _arity = 2

    def const_operand(self, operands):
        """(other value, constant attr) with the constant on the right, or (None, None);
        commutative ops look at both sides (MLIR moves constants right first)."""
        b = operands[1]
        if b is not None:
            return self._operands[0].value, b
        if operands[0] is not None and self.has_trait(Commutative):
            return self._operands[1].value, operands[0]
        return None, None

    def same_operands(self) -> bool:
        ops = self._operands
        return ops[0].value is ops[1].value


class UnaryOp(_SameType):
    """`%r = arith.op %x [flags] [attr-dict] : T`."""

    __slots__ = ()


def zero_of(t):
    """A zero constant of type `t` (None for dynamic shapes)."""
    if isinstance(t, ShapedType):
        return af.value_to_attr(np.zeros((), dtype=af.numpy_dtype(t.element)), t)
    return IntegerAttr(0, t)
