"""Builtin attributes and locations, spelled as MLIR spells them.

Attributes are immutable values compared structurally (`_key()`), with the hash cached.
`str(attr)` is MLIR's textual form, so printing an attribute is one call; the printer adds
only the context rules (an `i64` integer's type is elided inside arrays, as MLIR does).

Float constants are the bits of their type (`FloatAttr.bits`; dense and array elements
likewise), for all 18 float types MLIR has, and print as MLIR prints them
(`float_formats.mlir_text`): `1.500000e+00` when six digits of scientific notation read back
exactly, otherwise the shortest decimal that does, and the hex bits (`0x7F800001`) for NaN,
infinity and the rest. A decimal literal is rounded once into its type, so print -> parse ->
print is a fixpoint that loses no bit, signaling NaNs and NaN payloads included.
"""

from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING

from irkit import float_formats as ff
from irkit.types import (
    BF16, F16, F32, F64, I1, I64, INDEX, ComplexType, FloatType, IndexType, IntegerType,
    ShapedType, Type,
)

if TYPE_CHECKING:       # annotations only: the parser imports `irkit.affine` when it meets a map
    from irkit.affine import AffineMap, IntegerSet


#: numpy storage of float types, defined in `irkit.float_arrays` and re-exported here; that
#: module imports numpy, which the core does not need to parse and print, so it loads on use
_FLOAT_ARRAYS = frozenset(("bits_to_numpy", "holding_dtype", "holding_kind",
                           "longdouble_format", "numpy_to_bits", "round_bf16",
                           "round_to_format"))


def __getattr__(name: str):
    if name in _FLOAT_ARRAYS:
        from irkit import float_arrays
        return getattr(float_arrays, name)
    raise AttributeError(f"module 'irkit.attributes' has no attribute '{name}'")


def _fa():
    from irkit import float_arrays
    return float_arrays


class Attribute:
    __slots__ = ("_hash",)

    def _key(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other):
        return self is other or (type(self) is type(other) and self._key() == other._key())

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            h = self._hash = hash((type(self), self._key()))
            return h

    def __repr__(self):
        return f"<attr {self}>"

    def __str__(self):
        return self.format()

    def format(self, elide_type: bool = False) -> str:
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------------------------

_INT_CACHE: dict = {}


class IntegerAttr(Attribute):
    """An integer of an integer or index type; `i1` integers print as `true` / `false`."""

    __slots__ = ("value", "type")

    def __new__(cls, value: int, type: Type = I64):
        key = (value, type)
        a = _INT_CACHE.get(key)
        if a is None:
            a = object.__new__(cls)
            a.value = int(value)
            a.type = type
            if len(_INT_CACHE) < 65536:
                _INT_CACHE[key] = a
        return a

    def _key(self):
        return (self.value, self.type)

    def format(self, elide_type=False):
        t = self.type
        if t is I1:
            return "true" if self.value else "false"
        if elide_type and t is I64:
            return str(self.value)
        return f"{self.value} : {t}"


def BoolAttr(value: bool) -> IntegerAttr:
    return IntegerAttr(1 if value else 0, I1)


def _format(t: Type) -> ff.FloatFormat:
    """The software format of float type `t` (f64 for anything else, as MLIR's FloatAttr
    defaults to f64)."""
    return t.format if isinstance(t, FloatType) else ff.F64_FORMAT


def _from_python_float(value: float, fmt: ff.FloatFormat) -> ff.SoftFloat:
    """A Python float (an f64) rounded once into `fmt`, as APFloat's convert does."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    x = ff.F64_FORMAT.decode(bits)
    if fmt is ff.F64_FORMAT:
        return x
    if x.kind == ff.NAN and not fmt.has_nan:
        return fmt.largest(x.sign)      # a finite-only format has no NaN: the nearest end
    r = ff.convert(x, fmt)[0]
    return r if r is not None else fmt.largest(x.sign)


def round_to_float_type(value: float, name: str) -> float:
    """Round a Python float to the nearest value of float type `name` (to nearest even)."""
    fmt = ff.FORMATS.get(name, ff.F64_FORMAT)
    if fmt is ff.F64_FORMAT:
        return float(value)
    return _from_python_float(float(value), fmt).to_float()


def float_to_bits(value: float, name: str) -> int:
    """The bits of the float type `name` nearest to the Python float `value`."""
    return _from_python_float(float(value), ff.FORMATS.get(name, ff.F64_FORMAT)).bits()


def bits_to_float(bits: int, name: str) -> float:
    """The Python float nearest to the value `bits` spell in float type `name` (a NaN's
    payload as far as f64 holds it, quieted: Python floats cannot hold a signaling NaN;
    `FloatAttr.from_bits` and `bits_to_numpy` keep every bit)."""
    return ff.FORMATS.get(name, ff.F64_FORMAT).decode(bits).to_float()


def format_float(value: float, ftype: Type) -> str:
    """MLIR's float spelling of the `ftype` value nearest to Python float `value`: 6-digit
    scientific if exact, else shortest exact, else hex (see `float_formats.mlir_text`)."""
    return ff.mlir_text(_from_python_float(float(value), _format(ftype)))


class FloatAttr(Attribute):
    """A float constant, stored as the bits of its type's format (MLIR keeps an APFloat).

    Bits, not a Python float, are the truth: a signaling NaN, a NaN payload, and every f80
    or f128 value survive parse, print, fold and `arith.bitcast` unchanged. `value` is the
    nearest Python float, for code that computes with the constant (exact for every format
    up to f64 except NaN payloads). `FloatAttr(v, t)` rounds a Python or numpy float into
    `t`; `FloatAttr.from_bits(bits, t)` and `from_soft` take the exact value.
    """

    __slots__ = ("bits", "type", "value", "_text")

    def __init__(self, value: float, type: Type = F64):
        fmt = _format(type)
        if not isinstance(value, (float, int)) and hasattr(value, "dtype"):
            bits = _fa().numpy_to_bits(value, type if isinstance(type, FloatType) else F64)
            self._set(int(bits), type, fmt)
            return
        fast = _STRUCT.get(fmt.name)
        v = float(value)
        if fast is not None and v == v:
            try:
                packed = struct.pack(fast[0], v)
            except OverflowError:
                packed = struct.pack(fast[0], math.copysign(math.inf, v))
            self.bits = struct.unpack(fast[1], packed)[0]
            self.value = struct.unpack(fast[0], packed)[0]
            self.type = type
            self._text = None
            return
        self._set(_from_python_float(v, fmt).bits(), type, fmt)

    def _set(self, bits: int, type: Type, fmt: ff.FloatFormat) -> None:
        self.bits = bits
        self.type = type
        self._text = None
        fast = _STRUCT.get(fmt.name)
        if fast is not None:
            v = struct.unpack(fast[0], struct.pack(fast[1], bits))[0]
        else:
            v = fmt.decode(bits).to_float()
        self.value = v

    @classmethod
    def from_bits(cls, bits: int, type: Type) -> "FloatAttr":
        """The constant whose encoding in `type` is `bits` (no rounding, no quieting)."""
        a = object.__new__(cls)
        fmt = _format(type)
        a._set(bits & ((1 << fmt.width) - 1), type, fmt)
        return a

    @classmethod
    def from_soft(cls, x: ff.SoftFloat, type: Type) -> "FloatAttr":
        return cls.from_bits(x.bits(), type)

    @property
    def soft(self) -> ff.SoftFloat:
        """The exact value, for arithmetic that must round as MLIR's folds do."""
        return _format(self.type).decode(self.bits)

    def _key(self):
        # Bits, so NaNs with different payloads differ and -0.0 != 0.0 (x + -0.0 is x,
        # x + 0.0 is not), as MLIR's attribute uniquing compares them.
        return (self.bits, self.type)

    def format(self, elide_type=False):
        text = self._text
        if text is None:
            text = self._text = ff.mlir_text(self.soft)
        # MLIR keeps `: f64` after a hex literal, which would otherwise read back as an i64.
        if elide_type and self.type is F64 and not text.startswith("0x"):
            return text
        return f"{text} : {self.type}"


#: struct codes (float, bits) of the formats struct packs natively: their Python float is
#: exact and rounding into them is one C conversion (the parser's hot path)
_STRUCT = {"f16": ("<e", "<H"), "f32": ("<f", "<I"), "f64": ("<d", "<Q")}

#: (f64 bits below the target's last bit, the half-ulp pattern there, smallest normal) of
#: the struct formats: an f64 whose dropped bits are exactly half an ulp is a tie of the
#: target, where rounding the decimal once can differ from rounding it through f64
_TIES = {"f32": ((1 << 29) - 1, 1 << 28, 2.0 ** -126),
         "f16": ((1 << 42) - 1, 1 << 41, 2.0 ** -14)}
_D, _Q = struct.Struct("<d"), struct.Struct("<Q")


def float_attr_from_literal(text: str, negative: bool, type: FloatType) -> FloatAttr:
    """The constant a decimal literal (`1.5`, `1.000000e-01`) spells in `type`, rounded
    once, to nearest-even (see `float_formats.parse_decimal`). The f16/f32/f64 fast path
    rounds Python's correctly rounded f64 and redoes ties and denormals exactly."""
    if "." not in text:                 # MLIR's float literals always have a '.'
        raise ValueError("unexpected decimal integer literal for a floating point value")
    name = type.name
    fast = _STRUCT.get(name)
    if fast is not None:
        v = float(text)
        if name == "f64":
            a = object.__new__(FloatAttr)
            a.value = v = -v if negative else v
            a.bits = _Q.unpack(_D.pack(v))[0]
            a.type = type
            a._text = None
            return a
        tie = _TIES.get(name)
        if tie is None or not (v < tie[2] or _Q.unpack(_D.pack(v))[0] & tie[0] == tie[1]):
            try:
                packed = struct.pack(fast[0], -v if negative else v)
            except OverflowError:
                return FloatAttr(-math.inf if negative else math.inf, type)
            a = object.__new__(FloatAttr)
            a.bits = struct.unpack(fast[1], packed)[0]
            a.value = struct.unpack(fast[0], packed)[0]
            a.type = type
            a._text = None
            return a
    # An unsigned format (f8E8M0FNU) keeps the magnitude: its bits have no sign, which is
    # also what MLIR's bitcast of its own `-4.000000e+00 : f8E8M0FNU` folds to.
    x = ff.parse_decimal(("-" if negative else "") + text, type.format, exact=True)
    return FloatAttr.from_soft(x, type)


def float_literal_value(text: str, negative: bool, et: FloatType):
    """One element of a `dense<...>` literal of float type `et`, as the numpy value the
    attribute holds: hex literals keep every bit; decimals are rounded once into `et`
    (f16/f32/f64 through f64, as MLIR does). Raises ValueError with MLIR's message."""
    if text.startswith("0x"):
        bits = int(text, 16)
        if bits >> et.width:
            raise ValueError("hexadecimal float constant out of range for type")
        v = _fa().bits_to_numpy(bits, et)
        return -v if negative else v
    if "." not in text:
        raise ValueError("unexpected decimal integer literal for a floating point value")
    if et.name in _STRUCT:
        v = float(text)
        return -v if negative else v
    drop = _F32_TOP.get(et.name)
    if drop is not None:
        # bf16 / tf32 are float32's top bits: round the nearest float32 once more, unless
        # that float32 is a tie of the format (the exact path then decides which way).
        v = float(text)
        try:
            b = _I.unpack(_F.pack(-v if negative else v))[0]
        except OverflowError:
            b = None
        half = 1 << (drop - 1)
        if b is not None and b & ((1 << drop) - 1) != half:
            b = (b + half - 1 + ((b >> drop) & 1)) & (0xFFFFFFFF ^ ((1 << drop) - 1))
            return _F.unpack(_I.pack(b))[0]         # finite: a Python float holds it
    return _fa().bits_to_numpy(float_attr_from_literal(text, negative, et).bits, et)


_F, _I = struct.Struct("<f"), struct.Struct("<I")
#: formats whose bits are float32's top bits, by how many low bits they drop
_F32_TOP = {"bf16": 16, "tf32": 13}


_ESCAPES = {ord("\\"): "\\\\", ord('"'): '\\"'}


def escape_string(value: str) -> str:
    """MLIR's escaping: printable ASCII as is, `\\` and `"` escaped, every other byte `\\XX`."""
    if value.isascii() and value.isprintable():
        return value.translate(_ESCAPES) if ("\\" in value or '"' in value) else value
    out = []
    for b in value.encode("utf-8", "surrogateescape"):
        if 0x20 <= b < 0x7F:
            out.append(_ESCAPES.get(b, chr(b)))
        else:
            out.append(f"\\{b:02X}")
    return "".join(out)


class StringAttr(Attribute):
    __slots__ = ("value", "type")

    def __init__(self, value: str, type: Type | None = None):
        self.value = value
        self.type = type

    def _key(self):
        return (self.value, self.type)

    def format(self, elide_type=False):
        text = f'"{escape_string(self.value)}"'
        return text if self.type is None else f"{text} : {self.type}"


class UnitAttr(Attribute):
    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def _key(self):
        return ()

    def format(self, elide_type=False):
        return "unit"


UNIT = UnitAttr()


class TypeAttr(Attribute):
    __slots__ = ("value",)

    def __init__(self, value: Type):
        self.value = value

    def _key(self):
        return (self.value,)

    def format(self, elide_type=False):
        return str(self.value)


# ---------------------------------------------------------------------------------------------
# Aggregates
# ---------------------------------------------------------------------------------------------

class ArrayAttr(Attribute):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = tuple(value)

    def _key(self):
        return self.value

    def __iter__(self):
        return iter(self.value)

    def __len__(self):
        return len(self.value)

    def __getitem__(self, i):
        return self.value[i]

    def format(self, elide_type=False):
        return "[" + ", ".join(a.format(True) for a in self.value) + "]"


class DenseArrayAttr(Attribute):
    """`array<i64: 1, 2, 3>`: a plain list of scalars of one integer or float type.

    Float elements are kept as `FloatAttr`s do, by their bits (`bits`), so a NaN payload or
    an f80 value prints back as itself; `value` holds the nearest Python floats."""

    __slots__ = ("element_type", "value", "bits")

    def __init__(self, element_type: Type, value):
        self.element_type = element_type
        if isinstance(element_type, FloatType):
            self.bits = tuple(FloatAttr(v, element_type).bits for v in value)
            fmt = element_type.format
            self.value = tuple(fmt.decode(b).to_float() for b in self.bits)
        else:
            self.bits = None
            self.value = tuple(int(v) for v in value)

    def _key(self):
        return (self.element_type, self.bits if self.bits is not None else self.value)

    def __iter__(self):
        return iter(self.value)

    def __len__(self):
        return len(self.value)

    def __getitem__(self, i):
        return self.value[i]

    def format(self, elide_type=False):
        if not self.value:
            return f"array<{self.element_type}>"
        et = self.element_type
        if isinstance(et, FloatType):
            fmt = et.format
            items = ", ".join(ff.mlir_text(fmt.decode(b)) for b in self.bits)
        elif et is I1:
            items = ", ".join("true" if v else "false" for v in self.value)
        else:
            items = ", ".join(map(str, self.value))
        return f"array<{et}: {items}>"


def is_bare_identifier(name: str) -> bool:
    if not name or not (name[0].isalpha() or name[0] == "_") or not name.isascii():
        return False
    return all(c.isalnum() or c in "_$." for c in name)


def format_attr_entry(name: str, attr: Attribute) -> str:
    key = name if is_bare_identifier(name) else f'"{escape_string(name)}"'
    if attr is UNIT:
        return key
    return f"{key} = {attr.format()}"


class DictionaryAttr(Attribute):
    """`{a = 1 : i32, flag}`; entries are kept sorted by name, as MLIR does."""

    __slots__ = ("value",)

    def __init__(self, value: dict):
        self.value = dict(sorted(value.items()))

    def _key(self):
        return tuple(self.value.items())

    def get(self, name, default=None):
        return self.value.get(name, default)

    def format(self, elide_type=False):
        return "{" + ", ".join(format_attr_entry(k, v) for k, v in self.value.items()) + "}"


class SymbolRefAttr(Attribute):
    """`@fn` or nested `@mod::@fn`."""

    __slots__ = ("root", "nested")

    def __init__(self, root: str, nested=()):
        self.root = root
        self.nested = tuple(nested)

    def _key(self):
        return (self.root, self.nested)

    @property
    def path(self) -> tuple:
        return (self.root, *self.nested)

    def format(self, elide_type=False):
        return "::".join(format_symbol(s) for s in self.path)


def format_symbol(name: str) -> str:
    if name and is_bare_identifier(name) and "." not in name[:1]:
        return f"@{name}"
    return f'@"{escape_string(name)}"'


class AffineMapAttr(Attribute):
    __slots__ = ("value",)

    def __init__(self, value: AffineMap):
        self.value = value

    def _key(self):
        return (self.value,)

    def format(self, elide_type=False):
        return f"affine_map<{self.value}>"


class IntegerSetAttr(Attribute):
    __slots__ = ("value",)

    def __init__(self, value: IntegerSet):
        self.value = value

    def _key(self):
        return (self.value,)

    def format(self, elide_type=False):
        return f"affine_set<{self.value}>"


class StridedLayoutAttr(Attribute):
    """`strided<[?, 1], offset: ?>`; `None` is a dynamic stride or offset."""

    __slots__ = ("strides", "offset")

    def __init__(self, strides, offset=0):
        self.strides = tuple(strides)
        self.offset = offset

    def _key(self):
        return (self.strides, self.offset)

    def format(self, elide_type=False):
        strides = ", ".join("?" if s is None else str(s) for s in self.strides)
        if self.offset == 0:
            return f"strided<[{strides}]>"
        off = "?" if self.offset is None else str(self.offset)
        return f"strided<[{strides}], offset: {off}>"


class OpaqueAttr(Attribute):
    """A dialect attribute kept as text: `#graph.layout<"NCHW">`, `#arith.fastmath<none>`,
    with the type MLIR lets any dialect attribute carry (`#foo.attr : i32`), if given."""

    __slots__ = ("body", "type")

    def __init__(self, body: str, type: Type | None = None):
        self.body = body
        self.type = type

    def _key(self):
        return (self.body, self.type)

    @property
    def dialect(self) -> str:
        return self.body.split(".", 1)[0].split("<", 1)[0]

    def format(self, elide_type=False):
        if self.type is None or elide_type:
            return f"#{self.body}"
        return f"#{self.body} : {self.type}"


# ---------------------------------------------------------------------------------------------
# Elements attributes (numpy-backed)
# ---------------------------------------------------------------------------------------------

def numpy_dtype(t: Type):
    """The numpy dtype that holds values of scalar type `t`.

    f16, f32 and f64 are their own dtypes; f80 is `longdouble` where that is the x87 format
    (x86 hosts), else float64, and f128 is `longdouble` where that is IEEE quad, else
    float64 (so its values are approximated). bf16, tf32 and the f8/f6/f4 formats are held
    exactly in float32, rounded back into their format after every operation
    (`round_to_format`); a NaN keeps its payload in float32's top mantissa bits."""
    import numpy as np
    if isinstance(t, FloatType):
        return _fa().holding_dtype(t.name)
    if isinstance(t, IndexType):
        return np.int64
    if isinstance(t, IntegerType):
        if t.width == 1:
            return np.bool_
        for w in (8, 16, 32, 64):
            if t.width <= w:
                return getattr(np, ("uint" if t.signedness == "unsigned" else "int") + str(w))
        return object
    if isinstance(t, ComplexType):
        return np.complex64 if t.element is F32 else np.complex128
    raise TypeError(f"no numpy dtype for {t}")


def format_element(v, et: Type) -> str:
    if isinstance(et, FloatType):
        return ff.mlir_text(et.format.decode(_fa().numpy_to_bits(v, et)))
    if et is I1:
        return "true" if v else "false"
    if isinstance(et, ComplexType):
        # MLIR prints complex elements without a space: `(1.000000e+00,2.000000e+00)`.
        return f"({format_element(v.real, et.element)},{format_element(v.imag, et.element)})"
    return str(int(v))


def format_nested(array, et: Type) -> str:
    """A numpy array as MLIR's nested-list literal `[[1, 2], [3, 4]]`; float elements are
    spelled from their bits (a signaling NaN stays itself)."""
    if isinstance(et, FloatType):
        fmt = et.format
        bits = _fa().numpy_to_bits(array, et)
        if not hasattr(bits, "ndim"):
            return ff.mlir_text(fmt.decode(bits))
        cache: dict = {}

        def spell(b):
            text = cache.get(b)
            if text is None:
                text = cache[b] = ff.mlir_text(fmt.decode(b))
            return text
        return _nested(bits.tolist(), spell)
    if array.ndim == 0:
        return format_element(array.item(), et)
    parts = []
    if array.ndim == 1:
        for v in array.tolist():
            parts.append(format_element(v, et))
    else:
        for sub in array:
            parts.append(format_nested(sub, et))
    return "[" + ", ".join(parts) + "]"


def _nested(items, spell) -> str:
    if not isinstance(items, list):
        return spell(items)
    return "[" + ", ".join(_nested(i, spell) for i in items) + "]"


class DenseElementsAttr(Attribute):
    """`dense<...> : tensor<2x2xi32>`: a constant tensor or vector, stored as a numpy array.

    A splat keeps a 0-d array and prints as `dense<v>`; `array` always gives the full shape.
    Float elements are held as `numpy_dtype` holds them, rounded into the element type
    (bf16, f8, ... held in float32); a NaN's payload is kept.
    """

    __slots__ = ("type", "_data")

    def __init__(self, type: ShapedType, data):
        import numpy as np
        self.type = type
        et = type.element
        arr = np.asarray(data, dtype=numpy_dtype(et))
        if isinstance(et, FloatType) and arr.size:
            arr = np.asarray(_fa().round_to_format(arr, et), dtype=arr.dtype)
        if arr.ndim and arr.size and _all_same(arr):
            arr = arr.flat[0:1].reshape(())
        elif arr.ndim:
            arr = arr.reshape(type.shape)
        self._data = arr

    @property
    def is_splat(self) -> bool:
        return self._data.ndim == 0

    @property
    def array(self):
        import numpy as np
        if self._data.ndim == 0:
            return np.broadcast_to(self._data, self.type.shape)
        return self._data

    def splat_value(self):
        return self._data.item() if self.is_splat else None

    def _key(self):
        return (self.type, self._data.shape, _raw_bytes(self._data))

    def format(self, elide_type=False):
        return f"dense<{format_nested(self._data, self.type.element)}> : {self.type}"


def _raw_bytes(arr) -> bytes:
    """The array's element bytes; a longdouble's padding bytes (garbage) are left out."""
    import numpy as np
    if arr.dtype == np.longdouble and _fa().longdouble_format() == "f80":
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1, arr.dtype.itemsize)
        return raw[:, :10].tobytes()
    return arr.tobytes()


def _all_same(arr) -> bool:
    """Every element equal to the first, bit for bit (so an all-NaN array is a splat too)."""
    import numpy as np
    if arr.dtype.kind in "fc":
        if arr.dtype == np.longdouble:
            raw = np.frombuffer(_raw_bytes(arr), dtype=np.uint8).reshape(arr.size, -1)
        else:
            raw = np.ascontiguousarray(arr).view(np.uint8).reshape(arr.size, -1)
        return bool((raw == raw[0]).all())
    return bool((arr == arr.flat[0]).all())


def _has_nan(arr) -> bool:
    import numpy as np
    return arr.dtype.kind in "fc" and bool(np.isnan(arr).any())


class ResourceHandle:
    """A named blob in the `{-# dialect_resources: {builtin: {...}} #-}` section."""

    __slots__ = ("name", "dialect", "blob")

    def __init__(self, name: str, dialect: str = "builtin", blob: str | None = None):
        self.name = name
        self.dialect = dialect
        self.blob = blob  # "0x" + hex: 4-byte little-endian alignment, then the data

    def data(self) -> bytes:
        raw = bytes.fromhex(self.blob[2:])
        return raw[4:]


class DenseResourceAttr(Attribute):
    """`dense_resource<blob1> : tensor<2xf32>`: elements stored out of line in a resource."""

    __slots__ = ("handle", "type")

    def __init__(self, handle: ResourceHandle, type: ShapedType):
        self.handle = handle
        self.type = type

    def _key(self):
        return (self.handle.name, self.type)

    @property
    def array(self):
        import numpy as np
        if self.handle.blob is None:
            raise ValueError(f"resource '{self.handle.name}' has no data")
        et = self.type.element
        if isinstance(et, FloatType):       # MLIR's raw storage: bf16 takes 2 bytes, ...
            arr = _fa().from_raw(self.handle.data(), et, self.type.num_elements)
            if arr is None:
                raise ValueError(f"resource '{self.handle.name}' has the wrong size")
            return arr.reshape(self.type.shape)
        arr = np.frombuffer(self.handle.data(), dtype=numpy_dtype(et))
        return arr.reshape(self.type.shape)

    def format(self, elide_type=False):
        return f"dense_resource<{self.handle.name}> : {self.type}"


class SparseElementsAttr(Attribute):
    """`sparse<indices, values> : tensor<3x4xf32>` (COO form)."""

    __slots__ = ("type", "indices", "values")

    def __init__(self, type: ShapedType, indices, values):
        import numpy as np
        self.type = type
        self.indices = np.asarray(indices, dtype=np.int64)
        self.values = np.asarray(values, dtype=numpy_dtype(type.element))

    def _key(self):
        return (self.type, self.indices.shape, self.indices.tobytes(), self.values.shape,
                self.values.tobytes())

    @property
    def array(self):
        import numpy as np
        out = np.zeros(self.type.shape, dtype=self.values.dtype)
        idx = self.indices.reshape(-1, len(self.type.shape))
        vals = np.broadcast_to(self.values, (idx.shape[0],)) if self.values.ndim == 0 \
            else self.values
        for i, v in zip(idx, vals):
            out[tuple(i)] = v
        return out

    def format(self, elide_type=False):
        et = self.type.element
        idx = format_nested(self.indices, I64)
        return f"sparse<{idx}, {format_nested(self.values, et)}> : {self.type}"


# ---------------------------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------------------------

class Location(Attribute):
    __slots__ = ()

    def file_line_col(self) -> tuple[str, int, int] | None:
        return None

    def format(self, elide_type=False):
        return f"loc({self.body()})"

    def body(self) -> str:
        raise NotImplementedError


class UnknownLoc(Location):
    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def _key(self):
        return ()

    def body(self):
        return "unknown"


UNKNOWN_LOC = UnknownLoc()


class FileLineColLoc(Location):
    """`loc("file.mlir":3:7)`, or a range `loc("f":3:7 to 3:12)`."""

    __slots__ = ("file", "line", "col", "end")

    def __init__(self, file: str, line: int, col: int, end: tuple | None = None):
        self.file = file
        self.line = line
        self.col = col
        self.end = end

    def _key(self):
        return (self.file, self.line, self.col, self.end)

    def file_line_col(self):
        return (self.file, self.line, self.col)

    def body(self):
        text = f'"{escape_string(self.file)}":{self.line}:{self.col}'
        if self.end is not None:
            end_line, end_col = self.end
            text += f" to {end_line}:{end_col}" if end_line != self.line else f" to :{end_col}"
        return text


class SourceLoc(Location):
    """Where the parser found an op: resolved to file:line:col only when someone asks.

    Computing line and column for every op would cost the parser a third of its time;
    almost no location is ever printed, so the parser stores the token index instead.
    """

    __slots__ = ("source", "token")

    def __init__(self, source, token: int):
        self.source = source
        self.token = token

    def resolve(self) -> FileLineColLoc:
        line, col = self.source.token_line_col(self.token)
        return FileLineColLoc(self.source.name, line, col)

    def _key(self):
        return self.resolve()._key()

    def __eq__(self, other):
        if isinstance(other, SourceLoc):
            other = other.resolve()
        return isinstance(other, FileLineColLoc) and self.resolve()._key() == other._key()

    def __hash__(self):
        return hash((FileLineColLoc, self._key()))

    def file_line_col(self):
        return self.resolve().file_line_col()

    def body(self):
        return self.resolve().body()


class NameLoc(Location):
    """`loc("name")` or `loc("name"(child))`."""

    __slots__ = ("name", "child")

    def __init__(self, name: str, child: Location | None = None):
        self.name = name
        self.child = child

    def _key(self):
        return (self.name, self.child)

    def file_line_col(self):
        return self.child.file_line_col() if self.child is not None else None

    def body(self):
        text = f'"{escape_string(self.name)}"'
        if self.child is not None and self.child is not UNKNOWN_LOC:
            text += f"({self.child.body()})"
        return text


class CallSiteLoc(Location):
    __slots__ = ("callee", "caller")

    def __init__(self, callee: Location, caller: Location):
        self.callee = callee
        self.caller = caller

    def _key(self):
        return (self.callee, self.caller)

    def file_line_col(self):
        return self.callee.file_line_col() or self.caller.file_line_col()

    def body(self):
        return f"callsite({self.callee.body()} at {self.caller.body()})"


class FusedLoc(Location):
    """`loc(fused[a, b])` or `loc(fused<#meta>[a, b])`."""

    __slots__ = ("locations", "metadata")

    def __init__(self, locations, metadata: Attribute | None = None):
        self.locations = tuple(locations)
        self.metadata = metadata

    def _key(self):
        return (self.locations, self.metadata)

    def file_line_col(self):
        for loc in self.locations:
            flc = loc.file_line_col()
            if flc is not None:
                return flc
        return None

    def body(self):
        meta = f"<{self.metadata}>" if self.metadata is not None else ""
        return f"fused{meta}[{', '.join(l.body() for l in self.locations)}]"


class OpaqueLoc(Location):
    """A location attribute irkit does not model (e.g. a dialect's own `#x.loc<...>`)."""

    __slots__ = ("attr",)

    def __init__(self, attr: Attribute):
        self.attr = attr

    def _key(self):
        return (self.attr,)

    def body(self):
        return str(self.attr)


# Convenience constructors used by dialects.
def i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, I64)


def index(v: int) -> IntegerAttr:
    return IntegerAttr(v, INDEX)


def f32(v: float) -> FloatAttr:
    return FloatAttr(v, F32)


def f64(v: float) -> FloatAttr:
    return FloatAttr(v, F64)


_ = (BF16, F16)
