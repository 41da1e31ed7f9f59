"""Builtin types, spelled as MLIR spells them.

Types are immutable and interned: constructing `IntegerType(32)` twice gives the same object,
so equality is identity and hashing is free. This matters for speed (the parser and the
verifier compare types constantly) and lets types be dictionary keys everywhere.

A dynamic dimension is `None` (printed `?`).
"""

from __future__ import annotations

from typing import Iterable

from irkit.float_formats import FORMATS

DYNAMIC = None

_INTERN: dict[tuple, "Type"] = {}


class Type:
    """Base of all types. Subclasses define `_key` fields and `_format()`."""

    __slots__ = ("_text",)

    @classmethod
    def _get(cls, *key):
        full = (cls, *key)
        t = _INTERN.get(full)
        if t is None:
            t = object.__new__(cls)
            t._set(*key)
            t._text = None
            _INTERN[full] = t
        return t

    def _set(self, *key) -> None:
        pass

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._text = self._format()
        return text

    def __repr__(self) -> str:
        return f"<type {self}>"

    def _format(self) -> str:
        raise NotImplementedError

    # Convenience predicates used all over the verifiers.
    @property
    def element_type(self) -> "Type":
        return self


class IntegerType(Type):
    """`i32` (signless), `si8` (signed), `ui64` (unsigned)."""

    __slots__ = ("width", "signedness")

    def __new__(cls, width: int, signedness: str = "signless"):
        return cls._get(width, signedness)

    def _set(self, width, signedness):
        self.width = width
        self.signedness = signedness

    def _format(self):
        prefix = {"signless": "i", "signed": "si", "unsigned": "ui"}[self.signedness]
        return f"{prefix}{self.width}"

    @property
    def is_signless(self) -> bool:
        return self.signedness == "signless"


class IndexType(Type):
    """The target's pointer-sized integer used for sizes and loop indices."""

    __slots__ = ()

    def __new__(cls):
        return cls._get()

    def _format(self):
        return "index"


#: the builtin float types by spelling, with their width in bits
FLOAT_WIDTHS = {name: f.width for name, f in FORMATS.items()}


class FloatType(Type):
    """`f16`, `bf16`, `f32`, `f64` and MLIR's other float formats, by name.

    `format` is the type's layout and rounding rules (`irkit.float_formats`), what MLIR's
    `getFloatSemantics()` is: constants of the type are its bits, folded in that format."""

    __slots__ = ("name", "width", "format")

    def __new__(cls, name: str):
        return cls._get(name)

    def _set(self, name):
        self.name = name
        self.format = FORMATS[name]
        self.width = self.format.width

    def _format(self):
        return self.name


class ComplexType(Type):
    __slots__ = ("element",)

    def __new__(cls, element: Type):
        return cls._get(element)

    def _set(self, element):
        self.element = element

    def _format(self):
        return f"complex<{self.element}>"


class TupleType(Type):
    __slots__ = ("types",)

    def __new__(cls, types: Iterable[Type]):
        return cls._get(tuple(types))

    def _set(self, types):
        self.types = types

    def _format(self):
        return f"tuple<{', '.join(map(str, self.types))}>"


class NoneType(Type):
    __slots__ = ()

    def __new__(cls):
        return cls._get()

    def _format(self):
        return "none"


class FunctionType(Type):
    """`(i32, f32) -> tensor<2xf32>`; a single non-function result prints without parens."""

    __slots__ = ("inputs", "results")

    def __new__(cls, inputs: Iterable[Type], results: Iterable[Type]):
        return cls._get(tuple(inputs), tuple(results))

    def _set(self, inputs, results):
        self.inputs = inputs
        self.results = results

    def _format(self):
        ins = ", ".join(map(str, self.inputs))
        res = self.results
        if len(res) == 1 and not isinstance(res[0], FunctionType):
            return f"({ins}) -> {res[0]}"
        return f"({ins}) -> ({', '.join(map(str, res))})"


def _dims(shape, scalable=None) -> str:
    out = []
    for i, d in enumerate(shape):
        s = "?" if d is None else str(d)
        if scalable is not None and scalable[i]:
            s = f"[{s}]"
        out.append(s + "x")
    return "".join(out)


class ShapedType(Type):
    """Common base of tensor, memref and vector types."""

    __slots__ = ()
    shape: tuple
    element: Type

    @property
    def element_type(self) -> Type:
        return self.element

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return None not in self.shape

    @property
    def num_elements(self) -> int | None:
        n = 1
        for d in self.shape:
            if d is None:
                return None
            n *= d
        return n


class RankedTensorType(ShapedType):
    """`tensor<4x?xf32>` with an optional encoding attribute."""

    __slots__ = ("shape", "element", "encoding")

    def __new__(cls, shape: Iterable[int | None], element: Type, encoding=None):
        return cls._get(tuple(shape), element, encoding)

    def _set(self, shape, element, encoding):
        self.shape = shape
        self.element = element
        self.encoding = encoding

    def _format(self):
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{_dims(self.shape)}{self.element}{enc}>"


class UnrankedTensorType(ShapedType):
    __slots__ = ("element",)

    def __new__(cls, element: Type):
        return cls._get(element)

    def _set(self, element):
        self.element = element

    @property
    def shape(self):
        raise AttributeError("unranked tensor has no shape")

    @property
    def rank(self):
        return None

    @property
    def has_static_shape(self):
        return False

    def _format(self):
        return f"tensor<*x{self.element}>"


class VectorType(ShapedType):
    """`vector<4x[8]xf32>`: fixed-length dims, scalable dims in brackets."""

    __slots__ = ("shape", "element", "scalable")

    def __new__(cls, shape: Iterable[int], element: Type, scalable: Iterable[bool] | None = None):
        shape = tuple(shape)
        scalable = tuple(scalable) if scalable is not None else (False,) * len(shape)
        return cls._get(shape, element, scalable)

    def _set(self, shape, element, scalable):
        self.shape = shape
        self.element = element
        self.scalable = scalable

    def _format(self):
        return f"vector<{_dims(self.shape, self.scalable)}{self.element}>"


class MemRefType(ShapedType):
    """`memref<4x?xf32, strided<[?, 1], offset: ?>, 3>`: buffer with layout and memory space."""

    __slots__ = ("shape", "element", "layout", "memory_space")

    def __new__(cls, shape: Iterable[int | None], element: Type, layout=None, memory_space=None):
        return cls._get(tuple(shape), element, layout, memory_space)

    def _set(self, shape, element, layout, memory_space):
        self.shape = shape
        self.element = element
        self.layout = layout
        self.memory_space = memory_space

    def _format(self):
        parts = [f"{_dims(self.shape)}{self.element}"]
        if self.layout is not None:
            parts.append(str(self.layout))
        if self.memory_space is not None:
            parts.append(_memory_space_text(self.memory_space))
        return f"memref<{', '.join(parts)}>"


def _memory_space_text(space) -> str:
    # MLIR prints an i64 integer memory space without its type: `memref<4xf32, 3>`. The
    # space is an attribute, and attributes build on this module: an `IntegerAttr` is told by
    # its integer value of type i64.
    value = getattr(space, "value", None)
    if isinstance(value, int) and not isinstance(value, bool) \
            and getattr(space, "type", None) is I64:
        return str(value)
    return str(space)


class UnrankedMemRefType(ShapedType):
    __slots__ = ("element", "memory_space")

    def __new__(cls, element: Type, memory_space=None):
        return cls._get(element, memory_space)

    def _set(self, element, memory_space):
        self.element = element
        self.memory_space = memory_space

    @property
    def rank(self):
        return None

    @property
    def has_static_shape(self):
        return False

    def _format(self):
        space = f", {_memory_space_text(self.memory_space)}" if self.memory_space is not None else ""
        return f"memref<*x{self.element}{space}>"


class OpaqueType(Type):
    """A type of a dialect irkit does not know (or that keeps its text): `!graph.handle`.

    `body` is everything after the `!`, e.g. `graph.handle` or `llvm.ptr<1>`; it is printed
    back verbatim, which is what MLIR does for unregistered dialects.
    """

    __slots__ = ("body",)

    def __new__(cls, body: str):
        return cls._get(body)

    def _set(self, body):
        self.body = body

    @property
    def dialect(self) -> str:
        return self.body.split(".", 1)[0].split("<", 1)[0]

    def _format(self):
        return f"!{self.body}"


# Common singletons.
I1 = IntegerType(1)
I8 = IntegerType(8)
I16 = IntegerType(16)
I32 = IntegerType(32)
I64 = IntegerType(64)
INDEX = IndexType()
F16 = FloatType("f16")
BF16 = FloatType("bf16")
F32 = FloatType("f32")
F64 = FloatType("f64")
NONE = NoneType()


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def is_integer_like(t: Type) -> bool:
    """Signless/signed/unsigned integers and index."""
    return isinstance(t, (IntegerType, IndexType))


def element_type(t: Type) -> Type:
    """The scalar type of a tensor/vector/memref, or the type itself for a scalar."""
    return t.element if isinstance(t, ShapedType) else t
