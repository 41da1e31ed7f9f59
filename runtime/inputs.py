"""A model function's inputs as the runtime sees them: their declared names, element types
and dims (`InputSpec`), and the checks every engine runs before anything else.

Inputs are checked in the user's terms: a missing or unknown input, a rank or size that does
not match the declaration, a symbolic dimension (`N`) given two different sizes by two
inputs, or an element type that cannot be converted without losing its kind (floats for
integer labels). Each is a `ValueError` naming the input, the expected and the actual shape.
Conversions within a kind (float64 data for an f32 input, int64 labels for i32) are done, as
numpy's `same_kind` casting allows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InputSpec:
    """One input of an entry point: its name, element type and dims (ints or symbols)."""

    name: str
    dtype: np.dtype
    dims: tuple
    element: str = ""       # the IR spelling of the element type (`f32`), used in messages

    def describe(self) -> str:
        return f"{self.element or self.dtype.name}[{', '.join(map(str, self.dims))}]"

    @functools.cached_property
    def axes(self) -> tuple[tuple, tuple]:
        """((axis, size) of each fixed dim, (axis, symbol) of each named one): what checking
        an array's shape reads, computed once."""
        fixed = tuple((a, d) for a, d in enumerate(self.dims) if isinstance(d, int))
        named = tuple((a, d) for a, d in enumerate(self.dims)
                      if isinstance(d, str) and d != "?")
        return fixed, named


def check_inputs(specs: list[InputSpec], given: dict, fn_name: str) -> list[np.ndarray]:
    """The inputs as arrays in declaration order, or a ValueError saying what is wrong.

    Called before every call of compiled code, so the common case is kept short: arrays
    given as such are not wrapped again, and an input whose rank and fixed sizes match
    binds its symbols without building a message; an input that does not is checked axis by
    axis (`_check_axes`), which raises the error of its first wrong axis."""
    if len(given) != len(specs) or not all(s.name in given for s in specs):
        _check_names(specs, given, fn_name)
    bound: dict[str, tuple[int, str]] = {}
    out = []
    for s in specs:
        arr = given[s.name]
        if type(arr) is not np.ndarray:
            arr = np.asarray(arr)
        shape = arr.shape
        fixed, named = s.axes
        if len(shape) != len(s.dims) or any(shape[a] != d for a, d in fixed):
            _check_axes(s, arr, bound, fn_name)
        for a, d in named:
            first = bound.setdefault(d, (shape[a], s.name))
            if first[0] != shape[a]:
                raise ValueError(f"{fn_name}: dimension {d} is {first[0]} in input "
                                 f"{first[1]!r} but {shape[a]} in input {s.name!r}")
        if arr.dtype != s.dtype:
            if not np.can_cast(arr.dtype, s.dtype, "same_kind"):
                raise ValueError(f"{fn_name}: input {s.name!r} expects {s.element} "
                                 f"elements, got {arr.dtype.name}")
            arr = arr.astype(s.dtype)
        out.append(arr)
    return out


def _check_names(specs: list[InputSpec], given: dict, fn_name: str) -> None:
    """A ValueError naming the missing or unknown inputs, if any."""
    names = [s.name for s in specs]
    missing = [n for n in names if n not in given]
    if missing:
        raise ValueError(f"{fn_name}: missing input{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(n) for n in missing)} (expects {', '.join(names)})")
    unknown = [n for n in given if n not in names]
    if unknown:
        raise ValueError(f"{fn_name}: unknown input {unknown[0]!r} (expects "
                         f"{', '.join(names)})")


def _check_axes(s: InputSpec, arr: np.ndarray, bound: dict, fn_name: str) -> None:
    """Check `arr`'s rank and each of its axes in order against `s` (symbols against the
    sizes `bound` by earlier inputs, binding new ones): the ValueError of the first wrong
    one."""
    want = s.describe()
    if arr.ndim != len(s.dims):
        raise ValueError(f"{fn_name}: input {s.name!r} expects {want}, got an array of "
                         f"shape {list(arr.shape)}")
    for axis, (d, n) in enumerate(zip(s.dims, arr.shape)):
        if isinstance(d, int) and d != n:
            raise ValueError(f"{fn_name}: input {s.name!r} expects {want}, got shape "
                             f"{list(arr.shape)} (axis {axis} is {n}, not {d})")
        if isinstance(d, str) and d != "?":
            first = bound.setdefault(d, (n, s.name))
            if first[0] != n:
                raise ValueError(f"{fn_name}: dimension {d} is {first[0]} in input "
                                 f"{first[1]!r} but {n} in input {s.name!r}")


def bind_dims(specs, arrays) -> dict:
    """symbol -> size, from checked inputs (check_inputs made them consistent)."""
    bound = {}
    for s, a in zip(specs, arrays):
        for d, n in zip(s.dims, a.shape):
            if isinstance(d, str) and d != "?":
                bound.setdefault(d, n)
    return bound


def contiguous(a: np.ndarray) -> np.ndarray:
    """`a`, or a row-major copy of it (np.ascontiguousarray would make a 0-d array 1-d)."""
    return a if a.flags.c_contiguous else np.array(a, order="C")


def random_inputs(specs: list[InputSpec], sizes, seed: int = 0,
                  int_high: int = 10) -> dict[str, np.ndarray]:
    """Inputs for `specs` to run or time a model on: floats from a standard normal
    distribution, integers in [0, `int_high`) (class labels). `sizes` gives the symbolic
    dims: one int for all of them, or a dict by name (every one the specs use)."""
    rng = np.random.default_rng(seed)
    out = {}
    for spec in specs:
        shape = tuple((sizes if isinstance(sizes, int) else sizes[d]) if isinstance(d, str)
                      else d for d in spec.dims)
        out[spec.name] = (rng.normal(size=shape) if spec.dtype.kind == "f"
                          else rng.integers(0, int_high, size=shape)).astype(spec.dtype)
    return out
