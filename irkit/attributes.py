"""Builtin attributes and locations, spelled as MLIR spells them.

Attributes are immutable values compared structurally (`_key()`), with the hash cached.
`str(attr)` is MLIR's textual form, so printing an attribute is one call; the printer adds
only the context rules (an `i64` integer's type is elided inside arrays, as MLIR does).

Float printing follows MLIR: `1.500000e+00` when six digits of scientific notation round-trip
exactly, otherwise the shortest decimal that does, and hex bits (`0x7FC00000`) for NaN and
infinity. This keeps print -> parse -> print a fixpoint without losing a bit.
"""

from __future__ import annotations

import math
import struct

from irkit.affine import AffineMap, IntegerSet
from irkit.types import (
    BF16, F16, F32, F64, I1, I64, INDEX, ComplexType, FloatType, IndexType, IntegerType,
    ShapedType, Type,
)


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


_PACK = {"f16": "<e", "f32": "<f", "f64": "<d"}
_BITS = {"f16": 16, "f32": 32, "f64": 64, "bf16": 16}


def round_to_float_type(value: float, name: str) -> float:
    """Round a Python float to the nearest value of float type `name` (to nearest even)."""
    fmt = _PACK.get(name)
    if fmt is not None and fmt != "<d":
        try:
            return struct.unpack(fmt, struct.pack(fmt, value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    if name == "bf16":
        if math.isnan(value):
            return value
        bits = struct.unpack("<I", struct.pack("<f", _f32_or_inf(value)))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return float(value)


def _f32_or_inf(v: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def float_to_bits(value: float, name: str) -> int:
    if name == "bf16":
        return struct.unpack("<I", struct.pack("<f", _f32_or_inf(value)))[0] >> 16
    fmt = _PACK.get(name, "<d")
    ifmt = {"<e": "<H", "<f": "<I", "<d": "<Q"}[fmt]
    return struct.unpack(ifmt, struct.pack(fmt, value))[0]


def bits_to_float(bits: int, name: str) -> float:
    if name == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    fmt = _PACK.get(name, "<d")
    ifmt = {"<e": "<H", "<f": "<I", "<d": "<Q"}[fmt]
    return struct.unpack(fmt, struct.pack(ifmt, bits))[0]


def format_float(value: float, ftype: Type) -> str:
    """MLIR's float spelling: 6-digit scientific if exact, else shortest exact, else hex."""
    name = ftype.name if isinstance(ftype, FloatType) else "f64"
    if not math.isfinite(value) or name not in _BITS:
        width = ftype.width if isinstance(ftype, FloatType) else 64
        if name not in _BITS and math.isfinite(value):
            # Exotic formats (f8, tf32, ...) keep MLIR's decimal form; precision is the caller's.
            return _with_point(repr(float(value)))
        bits = float_to_bits(value, name)
        return f"0x{bits:0{(width + 3) // 4}X}"
    # MLIR's printFloatValue: APFloat::toString with 6 significant digits in scientific form
    # (padded to six decimals) when that reads back bit-exactly; else APFloat's default
    # toString (enough digits to round-trip) if it has a '.'; else the hex bits.
    digits, exp = _decimal_digits(value, 6)
    text = _sci_text(value, digits, exp)
    back = round_to_float_type(float(text), name)
    if back == value and math.copysign(1.0, back) == math.copysign(1.0, value):
        return text
    precision = 2 + _PRECISION_BITS[name] * 59 // 196
    text = _default_text(value, *_decimal_digits(value, precision), precision)
    if "." in text:
        return text
    bits = float_to_bits(value, name)
    return f"0x{bits:0{(_BITS[name] + 3) // 4}X}"


_PRECISION_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}


def _decimal_digits(value: float, precision: int) -> tuple[list[int], int]:
    """|value| as digits * 10**exp, cut to `precision` digits as APFloat::toString does,
    without trailing zeros. A Python float converts to Decimal exactly; APFloat then first
    truncates whole decimal digits down to about `precision * log2(10)` bits, and only then
    rounds the remaining digits half-up (so f32 1e-5 gives 9.99999974E-6, as in MLIR)."""
    from decimal import Decimal
    _, digits, exp = Decimal(abs(value)).as_tuple()
    n = int("".join(map(str, digits)))
    required = (precision * 196 + 58) // 59
    if n.bit_length() > required:
        tens = (n.bit_length() - required) * 59 // 196
        n //= 10 ** tens
        exp += tens
    digits = [int(c) for c in str(n)]
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    if len(digits) > precision:
        exp += len(digits) - precision
        up = digits[precision] >= 5
        digits = digits[:precision]
        i = precision - 1
        while up and i >= 0:
            digits[i] += 1
            up = digits[i] == 10
            if up:
                digits[i] = 0
            i -= 1
        if up:
            digits = [1] + digits[:-1]
            exp += 1
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    return digits, exp


def _sci_text(value: float, digits: list[int], exp: int) -> str:
    """`toString(FormatPrecision=6, FormatMaxPadding=0, TruncateZero=false)`."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return f"{sign}0.000000e+00"
    e = exp + len(digits) - 1
    mant = "".join(map(str, digits[1:])).ljust(6, "0")
    return f"{sign}{digits[0]}.{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"


def _default_text(value: float, digits: list[int], exp: int, precision: int) -> str:
    """`toString()`: natural precision, FormatMaxPadding=3, trailing zeros truncated."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return f"{sign}0"
    n = len(digits)
    text = "".join(map(str, digits))
    if exp >= 0:
        scientific = exp > 3 or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = msd < 0 and -msd > 3
    if scientific:
        e = exp + n - 1
        mant = text[1:] or "0"
        return f"{sign}{text[0]}.{mant}E{'-' if e < 0 else '+'}{abs(e)}"
    if exp >= 0:
        return sign + text + "0" * exp
    whole = exp + n
    if whole > 0:
        return f"{sign}{text[:whole]}.{text[whole:]}"
    return f"{sign}0.{'0' * -whole}{text}"


def _with_point(text: str) -> str:
    """MLIR requires a '.' in a decimal float literal: `1e+20` becomes `1.0e+20`."""
    mant, e, exp = text.partition("e")
    if "." not in mant and "inf" not in mant and "nan" not in mant:
        mant += ".0"
    return mant + (e + exp if e else "")


class FloatAttr(Attribute):
    __slots__ = ("value", "type")

    def __init__(self, value: float, type: Type = F64):
        name = type.name if isinstance(type, FloatType) else "f64"
        self.value = round_to_float_type(float(value), name) if name in _BITS else float(value)
        self.type = type

    def _key(self):
        # NaNs compare unequal to themselves, and -0.0 == 0.0 although they are different
        # constants (x + -0.0 is x, x + 0.0 is not): compare those by their bits.
        v = self.value
        return (float_to_bits(v, "f64") if v != v or v == 0.0 else v, self.type)

    def format(self, elide_type=False):
        text = format_float(self.value, self.type)
        # MLIR keeps `: f64` after a hex literal, which would otherwise read back as an i64.
        if elide_type and self.type is F64 and not text.startswith("0x"):
            return text
        return f"{text} : {self.type}"


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
    """`array<i64: 1, 2, 3>`: a plain list of scalars of one integer or float type."""

    __slots__ = ("element_type", "value")

    def __init__(self, element_type: Type, value):
        self.element_type = element_type
        if isinstance(element_type, FloatType):
            self.value = tuple(round_to_float_type(float(v), element_type.name) for v in value)
        else:
            self.value = tuple(int(v) for v in value)

    def _key(self):
        return (self.element_type, self.value)

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
            items = ", ".join(format_float(v, et) for v in self.value)
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
    """A dialect attribute kept as text: `#graph.layout<"NCHW">`, `#arith.fastmath<none>`."""

    __slots__ = ("body",)

    def __init__(self, body: str):
        self.body = body

    def _key(self):
        return (self.body,)

    @property
    def dialect(self) -> str:
        return self.body.split(".", 1)[0].split("<", 1)[0]

    def format(self, elide_type=False):
        return f"#{self.body}"


# ---------------------------------------------------------------------------------------------
# Elements attributes (numpy-backed)
# ---------------------------------------------------------------------------------------------

def numpy_dtype(t: Type):
    """The numpy dtype that holds values of scalar type `t` (bf16 is held as float32)."""
    import numpy as np
    if isinstance(t, FloatType):
        return {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(t.name, np.float32)
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


def round_bf16(x):
    """Round float32 storage to the nearest bf16 (ties to even); NaN stays NaN. bf16 values
    are held as float32 (`numpy_dtype`), so every bf16 result is rounded once by this."""
    import numpy as np
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = np.where(np.isnan(a), a, rounded.view(np.float32))
    return out.astype(np.float32)[()]


def format_element(v, et: Type) -> str:
    if isinstance(et, FloatType):
        return format_float(float(v), et)
    if et is I1:
        return "true" if v else "false"
    if isinstance(et, ComplexType):
        # MLIR prints complex elements without a space: `(1.000000e+00,2.000000e+00)`.
        return f"({format_element(v.real, et.element)},{format_element(v.imag, et.element)})"
    return str(int(v))


def format_nested(array, et: Type) -> str:
    """A numpy array as MLIR's nested-list literal `[[1, 2], [3, 4]]`."""
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


class DenseElementsAttr(Attribute):
    """`dense<...> : tensor<2x2xi32>`: a constant tensor or vector, stored as a numpy array.

    A splat keeps a 0-d array and prints as `dense<v>`; `array` always gives the full shape.
    """

    __slots__ = ("type", "_data")

    def __init__(self, type: ShapedType, data):
        import numpy as np
        self.type = type
        et = type.element
        arr = np.asarray(data, dtype=numpy_dtype(et))
        if isinstance(et, FloatType) and et.name == "bf16":
            arr = np.vectorize(lambda v: round_to_float_type(float(v), "bf16"),
                               otypes=[np.float32])(arr) if arr.size else arr
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
        return (self.type, self._data.shape, self._data.tobytes())

    def format(self, elide_type=False):
        return f"dense<{format_nested(self._data, self.type.element)}> : {self.type}"


def _all_same(arr) -> bool:
    """Every element equal to the first, bit for bit (so an all-NaN array is a splat too)."""
    import numpy as np
    if arr.dtype.kind in "fc":
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
        arr = np.frombuffer(self.handle.data(), dtype=numpy_dtype(self.type.element))
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
