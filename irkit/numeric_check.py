"""Numeric translation validation: run the module before and after each pass and compare.

This is the engine behind `irkit-opt --verify-each=numeric`. The structural verifier only
proves that a pass left well-formed IR; this proves (on sample inputs) that it left IR that
computes the same thing, and names the first pass that did not. It is testing, not proof: a
rewrite that is wrong only for inputs the generator never draws goes unnoticed.

Algorithm:

1. `record(module)`: for every function with a body, draw `trials` input tuples from a random
   generator seeded by `(seed, crc32(function name))`, so a function's inputs depend on
   neither the order of functions nor on what else the module holds, and stay the same for
   the whole pipeline. Run the interpreter on each tuple and keep the results as reference.
2. `check(module)` after each pass: run every function again on its stored inputs and
   compare with the reference. The first disagreement is returned as a `Mismatch`; when all
   agree the new results become the reference, so tolerances apply pass by pass instead of
   accumulating against the original program.
3. `NumericCheckInstrumentation` wires 1-2 into a `PassManager`: it stops the pipeline at
   the first mismatch and calls `write_reproducer` with the IR from before the failing pass.

What counts as a change:

- integers, `index` and `i1` compare exactly; floats within `rtol`/`atol` (numpy's
  `isclose`), NaN equals NaN, and -0.0 equals +0.0 (a sign of zero that matters shows up
  downstream, e.g. as `1/x`); shapes and dtypes must match exactly;
- a function over memrefs (destination-passing style, after lowering) is compared on what it
  returns and on what its memref arguments hold after the call;
- a function that raises after the pass but did not before is a mismatch; one whose reference
  run raised (a call to an external declaration, an op without semantics) is skipped, and
  adopts its first successful run as the new reference;
- a function that disappeared (inlined and removed by symbol-dce) is not a mismatch; one
  whose signature changed (dead-argument elimination) is recorded afresh, not compared;
- only public functions are run by default. A private function is observable only through
  its callers, and an interprocedural pass may legitimately specialise it to the arguments
  its call sites pass (MLIR's SCCP does), which random inputs would flag as a false
  alarm. `include_private=True` runs them too.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irkit.diagnostics import IRError
from irkit.ir import Operation
from irkit.pass_manager import Instrumentation, Pass
from irkit.types import (
    BF16, FloatType, FunctionType, IndexType, IntegerType, MemRefType, RankedTensorType, Type,
    VectorType,
)

# Floats are drawn with magnitude in [_FLOAT_MIN_ABS, _FLOAT_MAX_ABS] and a random sign.
_FLOAT_MIN_ABS = 0.25
_FLOAT_MAX_ABS = 2.0
# Small integers: equal operands are likely (cmpi/select/min/max take both paths) and
# products stay far from overflow; a quarter of the draws are edge values instead.
_INT_SMALL = 8
_INDEX_MAX = 8
_EDGE_FRACTION = 0.25
# Dynamic tensor dimensions get this size.
_DYNAMIC_DIM = 3
_FLOAT_NAMES = ("f16", "bf16", "f32", "f64")


# ----- input generation -----------------------------------------------------------------------

def _int_bounds(t: IntegerType) -> tuple[int, int]:
    if t.signedness == "unsigned":
        return 0, (1 << t.width) - 1
    return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1


def _ints(t: IntegerType, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Small integers, with some of the type's edge values mixed in.

    Small values keep programs in the range where they are meaningful (shift amounts,
    equal operands); the edges (min, max, -1, 0, 1) catch rewrites that forget wrapping,
    such as `x + 1 > x -> true` without `nsw`.
    """
    lo, hi = _int_bounds(t)
    small = rng.integers(max(lo, -_INT_SMALL), min(hi, _INT_SMALL) + 1, size=shape)
    edges = np.array(sorted({lo, hi, lo + 1, hi - 1, min(max(-1, lo), hi), 0, min(1, hi)}),
                     dtype=object)
    pick = edges[rng.integers(0, len(edges), size=shape)]
    use_edge = rng.random(size=shape) < _EDGE_FRACTION
    from irkit.attributes import numpy_dtype
    dtype = numpy_dtype(t)
    return np.where(use_edge, pick, small.astype(object)).astype(dtype)


def _floats(t: FloatType, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Magnitudes in [0.25, 2] with a random sign: never near zero.

    Rewrites that are exact in real arithmetic move results by a few ulps (a different
    rounding order, a constant folded in higher precision). Near zero, a division or a
    cancellation (`x - y` with x close to y, `log(x)`) turns those ulps into differences of
    any size, and the check would report passes that did nothing wrong. Bounding |x| below
    keeps single divisions by an input well conditioned; NaN and inf still arise inside
    programs (log of a negative number, exp overflow) and compare like any value.
    """
    from irkit.attributes import numpy_dtype
    mag = rng.uniform(_FLOAT_MIN_ABS, _FLOAT_MAX_ABS, size=shape)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    out = (mag * sign).astype(numpy_dtype(t))
    if t is BF16:
        from irkit.attributes import round_bf16
        out = np.asarray(round_bf16(out))
    return out


def _elements(t: Type, shape: tuple, rng: np.random.Generator, what: str) -> np.ndarray:
    if isinstance(t, FloatType):
        if t.name not in _FLOAT_NAMES:
            raise ValueError(f"{what}: no reference semantics for element type {t}")
        return _floats(t, shape, rng)
    if isinstance(t, IndexType):
        return rng.integers(0, _INDEX_MAX + 1, size=shape).astype(np.int64)
    if isinstance(t, IntegerType):
        if t.width == 1:
            return rng.integers(0, 2, size=shape).astype(np.bool_)
        if t.width > 64:
            raise ValueError(f"{what}: integers wider than 64 bits ({t}) are not supported")
        return _ints(t, shape, rng)
    raise ValueError(f"{what}: cannot generate values of type {t}")


def make_value(t: Type, rng: np.random.Generator, what: str = "value") -> Any:
    """One input of type `t` in the interpreter's representation (see `make_inputs`)."""
    if isinstance(t, (RankedTensorType, VectorType, MemRefType)):
        if isinstance(t, MemRefType) and t.layout is not None:
            raise ValueError(f"{what}: cannot generate strided memrefs ({t})")
        # Scalable vector dims count with vscale = 1; dynamic tensor dims get a fixed size.
        shape = tuple(_DYNAMIC_DIM if d is None else d for d in t.shape)
        arr = _elements(t.element, shape, rng, what)
        # A memref is the caller's own writable buffer (even of rank 0).
        return np.array(arr) if isinstance(t, MemRefType) else arr
    if isinstance(t, IndexType):
        return int(rng.integers(0, _INDEX_MAX + 1))
    if isinstance(t, (FloatType, IntegerType)):
        return _elements(t, (), rng, what)[()]
    raise ValueError(f"{what}: cannot generate values of type {t}")


def make_inputs(func_op: Operation, rng: np.random.Generator) -> list:
    """Random arguments for `func_op`, one per parameter, in the interpreter's representation.

    Per type: floats (f16, bf16, f32, f64) of magnitude in [0.25, 2] with random sign (see
    `_floats` for why not near zero); signless/signed/unsigned integers mostly in [-8, 8]
    clipped to the type, some at the type's edges; `i1` random; `index` in [0, 8] (it is
    used as a size or an offset); ranked tensors and vectors elementwise the same, with
    dynamic dims of size 3; memrefs with the identity layout as C-contiguous arrays the same
    way (one size for every `?`, so the sizes a function relates agree). Any other type
    (strided memrefs, unranked tensors, functions, wider integers, f8 formats) raises
    ValueError naming the argument.
    """
    ftype = func_op.properties["function_type"].value
    name = _func_name(func_op)
    return [make_value(t, rng, f"argument #{i} of @{name}")
            for i, t in enumerate(ftype.inputs)]


# ----- comparison ----------------------------------------------------------------------------

def _is_int_kind(v) -> bool:
    return isinstance(v, (int, np.integer, np.bool_)) or (
        isinstance(v, np.ndarray) and v.dtype.kind in "iub")


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array of shape {list(v.shape)} and dtype {v.dtype}"
    if isinstance(v, np.generic):
        return f"{v.dtype} scalar"
    return type(v).__name__


def compare(expected: Any, actual: Any, rtol: float, atol: float) -> str | None:
    """Why `actual` differs from `expected`, or None when they agree."""
    if isinstance(expected, Operation) or isinstance(actual, Operation):
        # Function values (func.constant): the same callee by name.
        same = (isinstance(expected, Operation) and isinstance(actual, Operation)
                and _func_name(expected) == _func_name(actual))
        return None if same else "refers to a different function"
    e_arr, a_arr = isinstance(expected, np.ndarray), isinstance(actual, np.ndarray)
    if e_arr != a_arr or isinstance(expected, np.generic) != isinstance(actual, np.generic):
        return f"kind changed: {_describe(expected)} -> {_describe(actual)}"
    if e_arr or isinstance(expected, np.generic):
        if expected.dtype != actual.dtype:
            return f"dtype changed: {expected.dtype} -> {actual.dtype}"
        if np.shape(expected) != np.shape(actual):
            return f"shape changed: {list(np.shape(expected))} -> {list(np.shape(actual))}"
    if _is_int_kind(expected) and _is_int_kind(actual):
        e, a = np.asarray(expected), np.asarray(actual)
        return None if np.array_equal(e, a) else "integer value differs"
    try:
        e = np.asarray(expected)
        a = np.asarray(actual)
        ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    except TypeError:
        return None if expected == actual else "value differs"
    if bool(np.all(ok)):
        return None
    if e.ndim == 0:
        return "float value differs beyond tolerance"
    bad = np.argwhere(~ok)
    first = tuple(int(i) for i in bad[0])
    return (f"float value differs beyond tolerance at {len(bad)} of {e.size} elements, "
            f"first at {list(first)}: expected {_format_value(e[first])}, got "
            f"{_format_value(a[first])}")


def _format_value(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, threshold=24, max_line_width=90, separator=", ").replace(
            "\n", "\n" + " " * 14)
    if isinstance(v, np.generic):
        return str(v)  # the shortest digits that round-trip at the value's own precision
    if isinstance(v, Operation):
        return f"@{_func_name(v)}"
    return repr(v)


@dataclass
class Mismatch:
    """A function whose result changed: which one, on which inputs, from what to what.

    `result_index` is None when the function raised after the pass (`actual` is then the
    error message) instead of returning a different value. Indices past the function's
    results count its memref arguments (their contents after the call); `what` then names
    the argument.
    """

    function: str
    result_index: int | None
    inputs: list
    expected: Any
    actual: Any
    reason: str
    trial: int = 0
    arg_types: list = field(default_factory=list)
    what: str | None = None

    def format(self) -> str:
        """Several lines for a human: the function, the result, the inputs, both values."""
        what = self.what or (f"result #{self.result_index}" if self.result_index is not None
                             else "the call")
        lines = [f"numeric mismatch in @{self.function}, {what}: {self.reason}"]
        for i, v in enumerate(self.inputs):
            t = f" : {self.arg_types[i]}" if i < len(self.arg_types) else ""
            lines.append(f"  input #{i}:   {_format_value(v)}{t}")
        lines.append(f"  expected:   {_format_value(self.expected)}")
        lines.append(f"  actual:     {_format_value(self.actual)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


# ----- the checker ---------------------------------------------------------------------------

def _func_name(fn: Operation) -> str:
    """`f` for a top-level function, `inner::f` inside `module @inner`."""
    from irkit.symbols import symbol_name
    parts = [symbol_name(fn) or "?"]
    for anc in fn.ancestors():
        n = symbol_name(anc)
        if n is not None:
            parts.append(n)
    return "::".join(reversed(parts))


def _copy(values: list) -> list:
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


class _Entry:
    """What is known about one function: its inputs, reference results, or why it is skipped."""

    __slots__ = ("ftype", "inputs", "results", "skip")

    def __init__(self, ftype: FunctionType) -> None:
        self.ftype = ftype
        self.inputs: list[list] = []
        self.results: list[list] | None = None
        self.skip: str | None = None


class NumericChecker:
    """Runs every function on fixed random inputs and reports the first one whose results
    change between `record`/`check` calls. See the module docstring for the rules."""

    def __init__(self, seed: int = 0, trials: int = 2, rtol: float = 1e-5, atol: float = 1e-6,
                 include_private: bool = False) -> None:
        self.seed = seed
        self.trials = trials
        self.rtol = rtol
        self.atol = atol
        self.include_private = include_private
        self._entries: dict[str, _Entry] = {}

    # ----- public ---------------------------------------------------------------------------

    @property
    def skipped(self) -> dict[str, str]:
        """Function name -> why it is not checked (unsupported argument type, raised)."""
        return {k: e.skip for k, e in self._entries.items() if e.skip is not None}

    @property
    def checked(self) -> list[str]:
        """Functions that have reference results to compare against."""
        return [k for k, e in self._entries.items() if e.results is not None]

    def inputs_of(self, name: str) -> list[list]:
        """The stored input tuples of function `name` (one per trial)."""
        return self._entries[name].inputs

    def record(self, module: Operation) -> None:
        """Forget everything, draw inputs for every function and keep its results."""
        self._entries = {}
        for name, fn in self._functions(module):
            self._entries[name] = self._fresh(name, fn, module)

    def check(self, module: Operation) -> Mismatch | None:
        """Compare every function with its reference; the first difference, or None."""
        updates: dict[str, list[list]] = {}
        for name, fn in self._functions(module):
            entry = self._entries.get(name)
            if entry is None or entry.ftype is not fn.type:
                # New function (outlined) or new signature: nothing to compare with yet.
                self._entries[name] = self._fresh(name, fn, module)
                continue
            if not entry.inputs:
                continue
            outcomes = [self._run(module, fn, args) for args in entry.inputs]
            if entry.results is None:
                # Reference run raised: adopt the first clean run as the reference.
                if all(isinstance(o, list) for o in outcomes):
                    updates[name] = outcomes
                continue
            for trial, (args, ref, out) in enumerate(zip(entry.inputs, entry.results, outcomes)):
                mm = self._compare(name, fn, trial, args, ref, out)
                if mm is not None:
                    return mm
            updates[name] = outcomes
        for name, results in updates.items():
            self._entries[name].results = results
            self._entries[name].skip = None
        return None

    # ----- internals ------------------------------------------------------------------------

    def _functions(self, module: Operation):
        for op in module.walk(post_order=False):
            if op.name != "func.func" or not op.regions[0].blocks:
                continue
            vis = op.properties.get("sym_visibility")
            if vis is not None and vis.value != "public" and not self.include_private:
                continue
            yield _func_name(op), op

    def _rng(self, name: str) -> np.random.Generator:
        return np.random.default_rng([self.seed, zlib.crc32(name.encode())])

    def _fresh(self, name: str, fn: Operation, module: Operation) -> _Entry:
        entry = _Entry(fn.type)
        rng = self._rng(name)
        try:
            entry.inputs = [make_inputs(fn, rng) for _ in range(self.trials)]
        except ValueError as e:
            entry.inputs = []
            entry.skip = f"function skipped: {e}"
            return entry
        outcomes = [self._run(module, fn, args) for args in entry.inputs]
        for o in outcomes:
            if not isinstance(o, list):
                entry.skip = f"reference run raised: {o}"
                return entry
        entry.results = outcomes
        return entry

    @staticmethod
    def _run(module: Operation, fn: Operation, args: list) -> list | str:
        """The results, then the final contents of every memref argument (what a function
        in destination-passing style computes is what it stores), or the error message
        when running raised."""
        from irkit.interpreter import Interpreter
        args = _copy(args)
        buffers = [a for a, t in zip(args, fn.type.inputs) if isinstance(t, MemRefType)]
        try:
            with np.errstate(all="ignore"):
                return list(Interpreter(module).call(fn, args)) + buffers
        except Exception as e:  # noqa: BLE001 - any failure of the program is a finding
            return f"{type(e).__name__}: {e}"

    def _compare(self, name: str, fn: Operation, trial: int, args: list, ref: list,
                 out: list | str) -> Mismatch | None:
        types = [str(t) for t in fn.type.inputs]
        if isinstance(out, str):
            return Mismatch(name, None, args, ref, out, f"raised after the pass: {out}",
                            trial, types)
        if len(out) != len(ref):
            return Mismatch(name, None, args, ref, out,
                            f"returned {len(out)} values instead of {len(ref)}", trial, types)
        buffers = [k for k, t in enumerate(fn.type.inputs) if isinstance(t, MemRefType)]
        returned = len(fn.type.results)
        for i, (e, a) in enumerate(zip(ref, out)):
            why = compare(e, a, self.rtol, self.atol)
            if why is not None:
                what = None if i < returned else \
                    f"memref argument #{buffers[i - returned]} after the call"
                return Mismatch(name, i, args, e, a, why, trial, types, what)
        return None


# ----- reproducers ---------------------------------------------------------------------------

def anchored_pipeline(anchors: list[str], pass_text: str) -> str:
    """Wrap one pass in its anchors: (["builtin.module", "func.func"], "cse") gives
    `builtin.module(func.func(cse))`, the pipeline that runs just that pass where the
    original pipeline ran it."""
    text = pass_text
    for a in reversed(anchors):
        text = f"{a}({text})"
    return text


def write_reproducer(path: str, module_text: str, pipeline: str, pass_name: str,
                     mismatch: Mismatch | None = None) -> None:
    """Write a lit-style test that replays the failing pass on the IR from before it.

    `pipeline` is the reproducing pipeline (just the failing pass, anchored as in the
    original; see `anchored_pipeline`), and goes into the RUN line verbatim. The pass name
    and, if given, the mismatch follow as comments, then the IR.
    """
    quoted = pipeline.replace("'", "'\\''")
    lines = [f"// RUN: irkit-opt %s --pass-pipeline='{quoted}'",
             f"// Reproducer: pass '{pass_name}' changed the numeric results of this module."]
    if mismatch is not None:
        lines += [f"// {line}" for line in mismatch.format().splitlines()]
    text = "\n".join(lines) + "\n\n" + module_text
    if not text.endswith("\n"):
        text += "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# ----- pass-manager hook ---------------------------------------------------------------------

class NumericMismatchError(IRError):
    """A pass changed what the module computes; carries the `Mismatch`."""

    def __init__(self, message: str, location: object, mismatch: Mismatch) -> None:
        super().__init__(message, location)
        self.mismatch = mismatch


class NumericCheckInstrumentation(Instrumentation):
    """`--verify-each=numeric` as a pass instrumentation.

    Records the root op's results when the pipeline starts and checks them after every pass;
    the first mismatch raises `NumericMismatchError` naming the pass and the function. With
    `reproducer` set, the IR is printed before each pass (the only copy of the input to the
    failing pass) and written there on a mismatch, with a RUN line running just that pass,
    nested under the same anchors as in the original pipeline.
    """

    def __init__(self, checker: NumericChecker | None = None,
                 reproducer: str | None = None) -> None:
        self.checker = checker or NumericChecker()
        self.reproducer = reproducer
        self._root: Operation | None = None
        self._before = ""

    def before_pipeline(self, op: Operation) -> None:
        self._root = op
        self.checker.record(op)

    def before_pass(self, p: Pass, op: Operation) -> None:
        if self.reproducer is not None:
            from irkit.printer import print_op
            self._before = print_op(self._root)

    def after_pass(self, p: Pass, op: Operation) -> None:
        mm = self.checker.check(self._root)
        if mm is None:
            return
        from irkit.symbols import lookup_symbol_in
        fn = lookup_symbol_in(self._root, mm.function.split("::")[0])
        # One line for the error (so the caret sits under it), the values in a note.
        err = NumericMismatchError(f"pass '{p.name}' changed the numeric results of the "
                                   f"module", fn.location if fn is not None else op.location, mm)
        err.note(mm.format())
        if self.reproducer is not None:
            anchors = [a.name for a in reversed(list(op.ancestors()))
                       if self._root.is_ancestor_of(a)] + [op.name]
            write_reproducer(self.reproducer, self._before,
                             anchored_pipeline(anchors, p.pipeline_text()), p.name, mm)
            err.note(f"reproducer written to {self.reproducer}")
        raise err
