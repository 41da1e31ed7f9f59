"""MLIR's float types in numpy storage: which dtype holds each format, and the exact bridge
between a format's bits and those numpy values.

Why: the interpreter and tensor constants compute with numpy, which has f16, f32, f64 and
(on x86) the x87 80-bit `longdouble`, and nothing else. Each float type is held as:

- "native": its own dtype (f16, f32, f64; f80 as x87 `longdouble`, f128 where `longdouble`
  is IEEE quad): the same bits;
- "embedded": bf16, tf32 and the f8/f6/f4 formats in float32, which holds each of their
  values exactly; a NaN keeps its payload in float32's top mantissa bits, signaling or not
  (bf16's bits are float32's top half, tf32's its top 19 bits). Results of operations are
  rounded back into the format once (`round_to_format`): computing in float32 and rounding
  once is exact for + - * / sqrt of formats with at most 11 significand bits;
- "approx": f128 (and f80 where `longdouble` is not x87) in float64, approximately.
  Constant folding does not use these values; it computes in `irkit.float_formats`.

Conversions that round (truncf, sitofp into an embedded format) go through
`irkit.float_formats` element by element (`convert_array`), never through float32 first:
rounding twice can differ from rounding once.
"""

from __future__ import annotations

import numpy as np

from irkit import float_formats as ff
from irkit.types import FloatType, Type

#: formats whose bits are the top bits of float32's (how many low bits they drop)
_TOP_BITS = {"bf16": 16, "tf32": 13}


def holding_dtype(name: str):
    """The numpy dtype that holds float type `name` (see the module docstring)."""
    native = {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(name)
    if native is not None:
        return native
    if name in ("f80", "f128"):
        return np.longdouble if longdouble_format() == name else np.float64
    return np.float32


_LD_CACHE: list = []


def longdouble_format() -> str | None:
    """Which float type numpy's longdouble is on this host: "f80" (x87), "f128" (IEEE quad,
    e.g. aarch64 Linux) or None (an alias of float64, or something else)."""
    if not _LD_CACHE:
        info = np.finfo(np.longdouble)
        _LD_CACHE.append({(63, 15): "f80", (112, 15): "f128"}.get(
            (int(info.nmant), int(info.nexp))))
    return _LD_CACHE[0]


def holding_kind(t: FloatType) -> str:
    """"native", "embedded" or "approx": how float type `t` sits in its numpy dtype."""
    name = t.name
    if name in ("f16", "f32", "f64") or longdouble_format() == name:
        return "native"
    return "approx" if name in ("f80", "f128") else "embedded"


def _uint_view(arr):
    """The bits of a native-float array as unsigned integers (a longdouble's bits, without
    its padding bytes, as Python ints in an object array)."""
    shape = np.shape(arr)
    arr = np.ascontiguousarray(arr).reshape(shape)      # (ascontiguousarray makes 0-d 1-d)
    if arr.dtype == np.longdouble and arr.dtype.itemsize > 8:
        size = arr.dtype.itemsize
        width = 10 if longdouble_format() == "f80" else 16
        raw = arr.reshape(-1).view(np.uint8).reshape(-1, size)
        out = np.empty(arr.size, dtype=object)
        for i in range(arr.size):
            out[i] = int.from_bytes(bytes(raw[i, :width]), "little")
        return out.reshape(arr.shape)
    return arr.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])


def numpy_to_bits(values, t: FloatType):
    """The encodings in float type `t` of numpy values held as `t` is held: a Python int
    for a scalar, else an array of unsigned ints (object for types wider than 32 bits that
    are not native)."""
    arr = np.asarray(values, dtype=holding_dtype(t.name))
    kind = holding_kind(t)
    if kind == "native":
        bits = _uint_view(arr)
    elif t.name in _TOP_BITS:
        drop = _TOP_BITS[t.name]
        bits = (_round_f32_top(arr, drop).view(np.uint32) >> np.uint32(drop)).astype(np.uint32)
    else:
        fmt = t.format
        src_fmt = ff.FORMATS["f32" if kind == "embedded" else "f64"]
        src = _uint_view(arr)
        bits = np.empty(arr.shape, dtype=object)
        flat, flat_src = bits.reshape(-1), src.reshape(-1)
        for i in range(flat.size):
            flat[i] = unembed(src_fmt.decode(int(flat_src[i])), fmt).bits()
        if fmt.width <= 32:
            bits = bits.astype(np.uint32)
    return int(bits) if bits.ndim == 0 else bits


def bits_to_numpy(bits, t: FloatType):
    """Numpy values (dtype `holding_dtype`) holding the constants `bits` spell in `t`,
    signaling NaNs and payloads included where the dtype can hold them."""
    dt = np.dtype(holding_dtype(t.name))
    kind = holding_kind(t)
    if kind == "native" and dt.itemsize <= 8:
        return np.asarray(bits, dtype={2: np.uint16, 4: np.uint32, 8: np.uint64}[
            dt.itemsize]).view(dt)[()]
    if t.name in _TOP_BITS:
        drop = _TOP_BITS[t.name]
        return (np.asarray(bits, dtype=np.uint32) << np.uint32(drop)).view(np.float32)[()]
    fmt = t.format
    b = np.asarray(bits, dtype=object)
    out = np.empty(b.shape, dtype=dt)
    flat_out, flat = out.reshape(-1), b.reshape(-1)
    for i in range(flat.size):
        code = int(flat[i])
        if kind == "native":                    # longdouble: the (canonical) bytes
            code = fmt.decode(code).bits()      # x87: a pseudo-denormal as its normal twin
            flat_out[i] = np.frombuffer(code.to_bytes(dt.itemsize, "little"), dtype=dt)[0]
        elif kind == "embedded":
            flat_out[i] = np.uint32(embed_f32(fmt.decode(code))).view(np.float32)
        else:
            flat_out[i] = fmt.decode(code).to_float()
    return out[()]


def embed_f32(x: ff.SoftFloat) -> int:
    """The float32 bits holding `x` of a format float32 contains: the same value; a NaN's
    payload in float32's top mantissa bits, signaling or not."""
    fmt = x.fmt
    if x.kind != ff.NAN:
        return ff.convert(x, ff.FORMATS["f32"])[0].bits()
    if fmt.nan == "negative_zero":
        return 0x7FC00000
    sign = 0x80000000 if x.sign else 0
    payload = x.sig << (23 - fmt.man_bits)
    return sign | 0x7F800000 | (payload or 0x400000)


def unembed(x: ff.SoftFloat, fmt: ff.FloatFormat, mode: int = ff.NEAREST_EVEN
            ) -> ff.SoftFloat:
    """The value of `fmt` that a holding float32/float64 value `x` stands for: finite values
    rounded (nearest-even unless `mode`), a NaN's top payload bits kept (a signaling NaN
    stays signaling). Where `fmt` has no such value (run time, not folding: folds decline
    these), an infinity becomes the NaN of a NaN-only format or saturates a finite-only
    one, and a NaN in a finite-only format becomes +0."""
    if x.kind != ff.NAN:
        r = ff.convert(x, fmt, mode)[0]
        if r is None or (r.kind == ff.INF and not fmt.has_inf):
            return fmt.default_nan(x.sign) if fmt.has_nan else fmt.largest(x.sign)
        return r
    if not fmt.has_nan:
        return fmt._zero(False)
    if fmt.nonfinite == "nan_only":
        return fmt.default_nan(x.sign)
    shift = fmt.precision - x.fmt.precision          # as APFloat::convert shifts payloads
    payload = x.sig << shift if shift >= 0 else x.sig >> -shift
    if fmt.explicit:
        payload |= 1 << 63
    if payload & ((1 << fmt.man_bits) - 1 if not fmt.explicit else (1 << 63) - 1) == 0:
        payload |= 1 << (fmt.precision - 2)     # all payload bits lost: quiet, never inf
    return ff.SoftFloat(fmt, x.sign, ff.NAN, payload, 0)


def round_bf16(x):
    """Round float32 storage to the nearest bf16 (ties to even); NaN stays NaN. bf16 values
    are held as float32, so every bf16 result is rounded once by this."""
    return _round_f32_top(x, 16)[()]


def _round_f32_top(x, drop: int):
    """float32 values rounded (ties to even) to their top `32 - drop` bits, NaNs unchanged:
    bf16 (drop 16) and tf32 (drop 13) are float32 with a shorter mantissa."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    half = (1 << (drop - 1)) - 1
    keep = np.uint64(0xFFFFFFFF ^ ((1 << drop) - 1))
    rounded = ((bits + np.uint64(half) + ((bits >> np.uint64(drop)) & np.uint64(1))) & keep)
    # A NaN keeps its kept bits; one whose payload lies only in the dropped bits is quieted
    # (else it would read as an infinity), as APFloat's conversions do.
    nan = (bits & keep) | np.where((bits & keep & np.uint64(0x7FFFFF)) == 0,
                                   np.uint64(0x400000), np.uint64(0))
    out = np.where(np.isnan(a), nan, rounded).astype(np.uint32).view(np.float32)
    return np.asarray(out, dtype=np.float32)


def round_to_format(x, t: Type):
    """float32-held values of an embedded format (bf16, tf32, f8/f6/f4) rounded to the
    nearest value of that format, still held in float32; other types pass through."""
    if not isinstance(t, FloatType) or holding_kind(t) != "embedded":
        return x
    if t.name in _TOP_BITS:
        return _round_f32_top(x, _TOP_BITS[t.name])[()]
    return bits_to_numpy(numpy_to_bits(np.asarray(x, dtype=np.float32), t), t)


def convert_array(x, src: FloatType, dst: FloatType, mode: int = ff.NEAREST_EVEN):
    """Values of float type `src` converted to `dst` (extf / truncf), rounded once in
    rounding `mode`; NaN payloads as APFloat moves them. numpy's own cast where it is that
    (native to native, nearest-even), else element by element in software."""
    sd, dd = holding_dtype(src.name), holding_dtype(dst.name)
    a = np.asarray(x, dtype=sd)
    skind, dkind = holding_kind(src), holding_kind(dst)
    if mode == ff.NEAREST_EVEN and skind != "approx":
        # The source value is exact in its dtype: one numpy rounding is the conversion
        # (a NaN payload moves as APFloat moves it: to the top of the mantissa).
        if dkind == "native":
            return a.astype(dd)[()]
        if dkind == "embedded" and a.dtype.itemsize <= 4:
            return round_to_format(a.astype(np.float32), dst)
    sfmt, dfmt = src.format, dst.format
    bits = np.asarray(numpy_to_bits(a, src), dtype=object)
    out = np.empty(bits.shape, dtype=object)
    flat, flat_bits = out.reshape(-1), bits.reshape(-1)
    for i in range(flat.size):
        flat[i] = unembed(sfmt.decode(int(flat_bits[i])), dfmt, mode).bits()
    return bits_to_numpy(out, dst)


def ints_to_array(values, dst: FloatType):
    """Integers (Python or numpy, any width) as values of float type `dst`, rounded once
    to nearest-even (sitofp / uitofp)."""
    v = np.asarray(values)
    if v.dtype != object and holding_kind(dst) == "native":
        return v.astype(holding_dtype(dst.name))[()]
    if v.dtype != object and holding_kind(dst) == "embedded" and \
            (v.size == 0 or int(np.max(np.abs(v.astype(np.float64)))) < 1 << 24):
        return round_to_format(v.astype(np.float32), dst)   # exact in float32: round once
    fmt = dst.format
    flat = v.reshape(-1)
    out = np.empty(flat.size, dtype=object)
    for i in range(flat.size):
        out[i] = fmt.from_int(int(flat[i]))[0].bits()
    return bits_to_numpy(out.reshape(v.shape), dst)


def raw_storage_bytes(t: FloatType) -> int:
    """Bytes per element in MLIR's raw dense storage (`dense<"0x...">`): the width in whole
    bytes (tf32 takes 3, f80 10, f4E2M1FN 1)."""
    return (t.width + 7) // 8


def from_raw(data: bytes, t: FloatType, count: int):
    """`count` elements of float type `t` from MLIR's raw dense storage (little-endian
    elements of `raw_storage_bytes` each; one element alone is a splat), as numpy values;
    None if the size fits neither."""
    size = raw_storage_bytes(t)
    if len(data) == size and count != 1:
        codes = [int.from_bytes(data, "little")] * count
    elif len(data) == size * count:
        codes = [int.from_bytes(data[i:i + size], "little") for i in range(0, len(data), size)]
    else:
        return None
    mask = (1 << t.width) - 1
    out = np.empty(count, dtype=object)
    for i, code in enumerate(codes):
        out[i] = code & mask
    return np.asarray(bits_to_numpy(out, t), dtype=holding_dtype(t.name))
