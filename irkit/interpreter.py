"""The reference interpreter: runs IR with numpy, one op at a time.

It is the definition of what every op means (define-by-run "dev mode") and the oracle that
passes and compiled code are tested against. The framework knows no dialect: each op class
supplies either

- `evaluate(self, *values)`: a pure function of its operand values, returning one value, or
  a tuple/list with one value per result; or
- `interpret(self, interp, values)`: for ops with regions or control flow. It may return the
  result values, a `Return(values)` (leave the enclosing region), or a `Branch(block, args)`
  (continue at a successor block). A hook that runs one of its op's regions passes
  `interp.env` (the values of the block being run) to `interp.run_region`, so the region
  sees the values defined above it.

Dataflow deadness (TensorFlow 1's executor model, for `graph.switch`/`graph.merge`): a value
may be `DEAD`, meaning it was produced on a branch that was not taken. An op with a dead
operand does not run: its results are dead too, and an op without results (a variable
update) is skipped. Only ops whose class sets `accepts_dead = True` (`graph.merge`) see dead
operands; a terminator handed one is an error, since a function cannot return nothing.

`interp.state` holds what ops keep across calls (graph variables), so a caller that runs
several steps passes the same dict each time.

Scalars are numpy scalars of the IR type (`np.float32` for `f32`), tensors and vectors are
numpy arrays, `index` is a Python int. Memrefs are numpy arrays too, but by reference: a
memref argument is the caller's own array (never a converted copy), and views share memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irkit.attributes import StridedLayoutAttr
from irkit.diagnostics import IRError
from irkit.ir import Block, Operation, Region
from irkit.types import (
    FloatType, IndexType, IntegerType, MemRefType, RankedTensorType, ShapedType, Type,
    UnrankedTensorType, VectorType,
)


class Return:
    __slots__ = ("values",)

    def __init__(self, values) -> None:
        self.values = list(values)


class Branch:
    __slots__ = ("block", "args")

    def __init__(self, block: Block, args) -> None:
        self.block = block
        self.args = list(args)


class _Dead:
    """The value of an untaken branch (see the module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"


DEAD = _Dead()


class InterpreterError(IRError):
    """An op without semantics, a bad input, or a failure while running."""


def scalar_dtype(t: Type):
    from irkit.attributes import numpy_dtype
    return numpy_dtype(t)


def to_value(x: Any, t: Type, what: str = "value"):
    """Convert a Python/numpy input to the interpreter's representation of type `t`."""
    if isinstance(t, IndexType):
        return int(x)
    if isinstance(t, (FloatType, IntegerType)):
        arr = np.asarray(x)
        if arr.ndim != 0:
            raise ValueError(f"{what}: expected a scalar of type {t}, got an array of shape "
                             f"{arr.shape}")
        return scalar_dtype(t)(arr.item()) if isinstance(t, FloatType) else \
            np.asarray(arr.item()).astype(scalar_dtype(t))[()]
    if isinstance(t, MemRefType):
        return _memref_argument(x, t, what)
    if isinstance(t, ShapedType):
        arr = np.asarray(x)
        dtype = np.dtype(scalar_dtype(t.element))
        if isinstance(t, (RankedTensorType, VectorType)):
            shape = t.shape
            if arr.ndim != len(shape) or any(d is not None and d != s
                                             for d, s in zip(shape, arr.shape)):
                want = "x".join("?" if d is None else str(d) for d in shape) or "scalar"
                raise ValueError(f"{what}: expected shape [{want}] for {t}, got "
                                 f"{list(arr.shape)}")
        if arr.dtype != dtype:
            if arr.dtype.kind == "f" and dtype.kind in "iub":
                raise ValueError(f"{what}: expected {t.element} elements, got {arr.dtype}")
            arr = arr.astype(dtype)
        return arr
    return x


def _memref_argument(x: Any, t: MemRefType, what: str) -> np.ndarray:
    """A memref is passed by reference, as compiled code receives a pointer: the value is the
    caller's own array, never a converted copy, so what the function stores is seen by the
    caller. Hence the array must already match: dtype, rank, static sizes, and the layout's
    static strides (C-contiguous for the identity layout)."""
    if not isinstance(x, np.ndarray):
        raise ValueError(f"{what}: a memref ({t}) is passed by reference: expected a numpy "
                         f"array, got {type(x).__name__}")
    dtype = np.dtype(scalar_dtype(t.element))
    if x.dtype != dtype:
        raise ValueError(f"{what}: expected an array of {dtype} for {t}, got {x.dtype} (a "
                         f"memref is not converted: the function would write to a copy)")
    if x.ndim != t.rank or any(d is not None and d != s for d, s in zip(t.shape, x.shape)):
        want = "x".join("?" if d is None else str(d) for d in t.shape) or "scalar"
        raise ValueError(f"{what}: expected shape [{want}] for {t}, got {list(x.shape)}")
    layout = t.layout
    if layout is None and not x.flags.c_contiguous:
        raise ValueError(f"{what}: {t} is contiguous (identity layout): expected a "
                         f"C-contiguous array, got strides {x.strides}")
    if isinstance(layout, StridedLayoutAttr):
        for i, (s, d) in enumerate(zip(layout.strides, x.shape)):
            if s is not None and d > 1 and x.strides[i] != s * x.itemsize:
                raise ValueError(f"{what}: {t} has stride {s} in dimension {i}, the array "
                                 f"{x.strides[i] // x.itemsize} elements")
    return x


class Interpreter:
    def __init__(self, module: Operation | None = None, state: dict | None = None) -> None:
        self.module = module
        #: storage ops keep across calls (graph variables live under "graph.variables")
        self.state: dict = {} if state is None else state
        #: the values of the block being run when an `interpret` hook is called; ops with
        #: regions (loop.for, loop.if) hand it to `run_region`, since their bodies use values
        #: defined above them
        self.env: dict = {}

    def call(self, fn: Operation, args) -> list:
        body = fn.regions[0]
        if not body.blocks:
            raise InterpreterError(f"cannot call external function "
                                   f"'{fn.properties['sym_name'].value}'", fn.location)
        return self.run_region(body, args)

    def run_region(self, region: Region, args, env: dict | None = None) -> list:
        """Run a region from its entry block until an op returns out of it."""
        if env is None:
            env = {}
        block = region.blocks[0]
        while True:
            for a, v in zip(block.args, args):
                env[a] = v
            outcome = self.run_block(block, env)
            if isinstance(outcome, Branch):
                block, args = outcome.block, outcome.args
                continue
            return outcome.values if outcome is not None else []

    def run_block(self, block: Block, env: dict):
        op = block.first
        while op is not None:
            values = [env[o.value] for o in op._operands]
            if any(v is DEAD for v in values) and not getattr(op, "accepts_dead", False):
                self._propagate_dead(op, env)
                op = op._next
                continue
            hook = getattr(op, "interpret", None)
            if hook is not None:
                self.env = env
                res = hook(self, values)
                if isinstance(res, (Return, Branch)):
                    return res
            else:
                ev = getattr(op, "evaluate", None)
                if ev is None:
                    raise InterpreterError(f"'{op.name}' has no reference semantics",
                                           op.location)
                try:
                    res = ev(*values)
                except (ArithmeticError, ValueError, TypeError, IndexError) as e:
                    raise InterpreterError(f"'{op.name}' failed: {e}", op.location) from None
                if len(op.results) == 1:
                    res = (res,)
            if op.results:
                for r, v in zip(op.results, res):
                    env[r] = v
            op = op._next
        return None

    def _propagate_dead(self, op: Operation, env: dict) -> None:
        from irkit.opdef import Terminator, has_trait
        if has_trait(op, Terminator):
            raise InterpreterError(f"'{op.name}' got a dead value (one computed on a branch "
                                   "that was not taken)", op.location)
        for r in op.results:
            env[r] = DEAD


def interpret(module: Operation, func_name: str, *args):
    """Run function `func_name` of `module` on numpy/Python inputs.

    Returns the single result, or a tuple when the function has several (None for none).
    """
    from irkit.symbols import lookup_symbol_in
    fn = lookup_symbol_in(module, func_name)
    if fn is None or fn.name != "func.func":
        raise ValueError(f"no function named '{func_name}' in the module")
    ftype = fn.properties["function_type"].value
    if len(args) != len(ftype.inputs):
        raise ValueError(f"'{func_name}' takes {len(ftype.inputs)} arguments, got {len(args)}")
    values = [to_value(a, t, f"argument #{i} of '{func_name}'")
              for i, (a, t) in enumerate(zip(args, ftype.inputs))]
    with np.errstate(all="ignore"):
        out = Interpreter(module).call(fn, values)
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


_ = (UnrankedTensorType,)
