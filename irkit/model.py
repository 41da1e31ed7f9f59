"""The model object users call: `irkit.load_model("m.irk", model="mlp").forward(x=...)`.

A `Model` wraps one model's module (`module @mlp { graph.variable ...; func.func @forward }`)
and an *engine* that runs its functions. The signature comes from the IR itself, not from
the DSL: `@forward`'s arguments carry `{graph.name, graph.dims}` and its results
`{graph.name}`, so a module read back from text, or (later) a compiled library, describes
itself the same way.

Engines:
- `"interpreter"`: dev mode, define-by-run. Every op runs through its numpy reference
  semantics, so what a model means can be inspected step by step. Derivative requests
  (`autodiff.grad`, from the DSL's `grad` and `train` clauses) are first expanded into graph
  ops by the `autodiff` pass, then `canonicalize,cse` simplify the backward graph.

Training: a model with a `train` clause has a second function `@train_step` (same inputs,
result `loss`): forward, backward and the optimizer's update, which assigns the params and
the optimizer's state variables. `Model.train_step(**batch)` runs it once, so the arrays in
`model.variables` (params and optimizer state alike) change in place between calls.

Inputs are checked before anything runs, in the user's terms: a missing or unknown input, a
rank or size that does not match the declaration, a symbolic dimension (`N`) given two
different sizes by two inputs, or an element type that cannot be converted without losing
its kind (floats for integer labels). Each is a `ValueError` naming the input, the expected
and the actual shape. Conversions within a kind (float64 data for an f32 input, int64 labels
for i32) are done, as numpy's `same_kind` casting allows.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from irkit.attributes import IntegerAttr, StringAttr, numpy_dtype
from irkit.ir import Operation


@dataclass(frozen=True)
class InputSpec:
    """One input of an entry point: its name, element type and dims (ints or symbols)."""

    name: str
    dtype: np.dtype
    dims: tuple
    element: str = ""       # the IR spelling of the element type (`f32`), used in messages

    def describe(self) -> str:
        return f"{self.element or self.dtype.name}[{', '.join(map(str, self.dims))}]"


def _arg_specs(fn: Operation) -> list[InputSpec]:
    ftype = fn.properties["function_type"].value
    attrs = fn.properties.get("arg_attrs")
    specs = []
    for i, t in enumerate(ftype.inputs):
        d = attrs[i].value if attrs is not None else {}
        name = d["graph.name"].value if "graph.name" in d else f"arg{i}"
        if "graph.dims" in d:
            dims = tuple(a.value if isinstance(a, (IntegerAttr, StringAttr)) else None
                         for a in d["graph.dims"])
        else:
            dims = tuple("?" if s is None else s for s in t.shape)
        specs.append(InputSpec(name, np.dtype(numpy_dtype(t.element)), dims, str(t.element)))
    return specs


def _result_names(fn: Operation) -> list[str]:
    ftype = fn.properties["function_type"].value
    attrs = fn.properties.get("res_attrs")
    names = []
    for i in range(len(ftype.results)):
        d = attrs[i].value if attrs is not None else {}
        names.append(d["graph.name"].value if "graph.name" in d else f"result{i}")
    return names


def check_inputs(specs: list[InputSpec], given: dict, fn_name: str) -> list[np.ndarray]:
    """The inputs as arrays in declaration order, or a ValueError saying what is wrong."""
    names = [s.name for s in specs]
    missing = [n for n in names if n not in given]
    if missing:
        raise ValueError(f"{fn_name}: missing input{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(n) for n in missing)} (expects {', '.join(names)})")
    unknown = [n for n in given if n not in names]
    if unknown:
        raise ValueError(f"{fn_name}: unknown input {unknown[0]!r} (expects "
                         f"{', '.join(names)})")
    bound: dict[str, tuple[int, str]] = {}
    out = []
    for s in specs:
        arr = np.asarray(given[s.name])
        want = f"{s.describe()}"
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
        if arr.dtype != s.dtype:
            if not np.can_cast(arr.dtype, s.dtype, "same_kind"):
                raise ValueError(f"{fn_name}: input {s.name!r} expects {s.element} "
                                 f"elements, got {arr.dtype.name}")
            arr = arr.astype(s.dtype)
        out.append(arr)
    return out


class Variables(MutableMapping):
    """The model's parameters by name: reading gives the live array, assigning checks the
    shape and converts the element type (so a typo cannot silently change a model)."""

    def __init__(self, store: dict, types: dict) -> None:
        self._store = store
        self._types = types         # name -> (shape, numpy dtype)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._types:
            raise KeyError(f"no variable {name!r} (variables: {', '.join(self._types)})")
        return self._store[name]

    def __setitem__(self, name: str, value) -> None:
        if name not in self._types:
            raise KeyError(f"no variable {name!r} (variables: {', '.join(self._types)})")
        shape, dtype = self._types[name]
        arr = np.asarray(value)
        if arr.shape != shape:
            raise ValueError(f"variable {name!r} has shape {list(shape)}, got "
                             f"{list(arr.shape)}")
        if not np.can_cast(arr.dtype, dtype, "same_kind"):
            raise ValueError(f"variable {name!r} holds {np.dtype(dtype).name}, got "
                             f"{arr.dtype.name}")
        self._store[name] = np.array(arr, dtype=dtype)

    def __delitem__(self, name: str) -> None:
        raise TypeError("variables cannot be deleted")

    def __iter__(self):
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)

    def __repr__(self) -> str:
        return "Variables(" + ", ".join(f"{n}: {list(s)}" for n, (s, _) in
                                        self._types.items()) + ")"


#: what runs before the interpreter: derivative requests become graph ops, then simplified
DERIVATIVES_PIPELINE = "autodiff,canonicalize,cse"


def expand_derivatives(module: Operation) -> Operation:
    """Run `DERIVATIVES_PIPELINE` on `module` (in place) and return it."""
    from irkit.pass_manager import PassManager
    PassManager.parse(DERIVATIVES_PIPELINE).run(module)
    return module


def _has_derivatives(module: Operation) -> bool:
    return any(op.name.startswith("autodiff.") for op in module.walk())


class Model:
    """One model of a DSL file (or any module with a `@forward` function), run by an engine.

    A module that still holds derivative requests is copied and the copy expanded (the
    caller's module is left as it was); `load_model` expands the module it compiled."""

    def __init__(self, module: Operation, engine: str = "interpreter") -> None:
        from irkit.symbols import lookup_symbol_in, symbol_name
        if engine != "interpreter":
            raise ValueError(f"unknown engine {engine!r}; available: 'interpreter'")
        if _has_derivatives(module):
            module = expand_derivatives(module.clone())
        self.module = module
        self.engine = engine
        self.name = symbol_name(module) or "model"
        fn = lookup_symbol_in(module, "forward")
        if fn is None or fn.name != "func.func":
            raise ValueError(f"model {self.name!r} has no func.func @forward")
        self._forward = fn
        step = lookup_symbol_in(module, "train_step")
        self._train_step = step if step is not None and step.name == "func.func" else None
        self.inputs = _arg_specs(fn)
        self.outputs = _result_names(fn)
        self._state: dict = {}
        store = self._state.setdefault("graph.variables", {})
        types = {}
        for op in module.regions[0].blocks[0].ops:
            if op.name == "graph.variable":
                store[op.var_name] = op.initial_value()
                t = op.tensor_type
                types[op.var_name] = (t.shape, numpy_dtype(t.element))
        self.variables = Variables(store, types)

    def forward(self, **inputs) -> dict:
        """Run `@forward`: a dict from output name to numpy array."""
        return self._run(self._forward, inputs, self.outputs)

    @property
    def trainable(self) -> bool:
        """Whether the model has a `train` clause (a `@train_step` function)."""
        return self._train_step is not None

    def train_step(self, **batch) -> dict:
        """Run `@train_step` once on a batch (the same inputs as `forward`): one optimizer
        step, which updates the params and the optimizer state in `variables`. Returns
        {"loss": the loss before the update}."""
        if self._train_step is None:
            raise ValueError(f"model {self.name!r} has no train clause: add `train LOSS with "
                             f"OPTIMIZER(...)` to give it a train_step")
        return self._run(self._train_step, batch, _result_names(self._train_step))

    def _run(self, fn: Operation, given: dict, names: list[str]) -> dict:
        from irkit.interpreter import Interpreter, to_value
        fn_name = f"{self.name}.{fn.properties['sym_name'].value}"
        arrays = check_inputs(_arg_specs(fn), given, fn_name)
        ftype = fn.properties["function_type"].value
        args = [to_value(a, t, s.name) for a, t, s in zip(arrays, ftype.inputs, _arg_specs(fn))]
        with np.errstate(all="ignore"):
            values = Interpreter(self.module, self._state).call(fn, args)
        return {n: np.asarray(v) for n, v in zip(names, values)}

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}: {s.describe()}" for s in self.inputs)
        return f"<Model {self.name}({ins}) -> {', '.join(self.outputs)} [{self.engine}]>"


def load_model(path: str | Path, model: str | None = None,
               engine: str = "interpreter") -> Model:
    """Compile a `.irk` file and return one of its models, ready to run: its derivative
    requests expanded into graph ops (`DERIVATIVES_PIPELINE`) for the interpreter.

    `model` may be left out when the file defines exactly one model.
    """
    from irkit.dsl import compile_file, model_modules
    top = compile_file(str(path))
    models = model_modules(top)
    if model is None:
        if len(models) != 1:
            raise ValueError(f"{path} defines {len(models)} models "
                             f"({', '.join(models)}); choose one with model=")
        model = next(iter(models))
    if model not in models:
        raise ValueError(f"{path} has no model {model!r} (models: {', '.join(models)})")
    if engine == "interpreter":
        expand_derivatives(models[model])
    return Model(models[model], engine)
