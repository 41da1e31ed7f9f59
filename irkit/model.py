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


#: the engines a Model runs on: the reference interpreter, or code compiled in process
ENGINES = ("interpreter", "jit")


def has_derivatives(module: Operation) -> bool:
    return any(op.name.startswith("autodiff.") for op in module.walk())


class Model:
    """One model of a DSL file (or any module with a `@forward` function), run by an engine.

    A module that still holds derivative requests is copied and the copy expanded (the
    caller's module is left as it was); `load_model` expands the module it compiled."""

    def __init__(self, module: Operation, engine: str = "interpreter", *,
                 opt_level: int = 2) -> None:
        from irkit.symbols import lookup_symbol_in, symbol_name
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; available: "
                             f"{', '.join(repr(e) for e in ENGINES)}")
        if engine == "jit":
            from irkit.runtime import CompiledRunner, lower_model_with_graph
            graph, lowered = lower_model_with_graph(module)
            self._init_compiled(symbol_name(module) or "model",
                                CompiledRunner.jit(lowered, opt_level=opt_level, graph=graph),
                                engine)
            self.module = module
            return
        if has_derivatives(module):
            module = expand_derivatives(module.clone())
        self.module = module
        self.engine = engine
        self._runner = None
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

    def _init_compiled(self, name: str, runner, engine: str) -> None:
        """The compiled engines: `runner` (`irkit.runtime.CompiledRunner`) calls the code;
        the variables' storage is one numpy array per variable, owned here and initialized
        from the lowered module's `graph.variables` as dev mode initializes them."""
        from irkit.runtime import contiguous, variable_specs
        self.name = name
        self.engine = engine
        self._runner = runner
        self.module = runner.module
        if "forward" not in runner.entries:
            raise ValueError(f"model {name!r} has no function @forward")
        self._forward = "forward"
        self._train_step = "train_step" if "train_step" in runner.entries else None
        self.inputs = runner.entries["forward"].inputs
        self.outputs = runner.entries["forward"].output_names
        store, types = {}, {}
        for vname, shape, dtype, value in variable_specs(runner.module):
            store[vname] = contiguous(np.asarray(value))
            types[vname] = (shape, dtype)
        self._state = {"graph.variables": store}
        self.variables = Variables(store, types)

    @classmethod
    def from_runner(cls, name: str, runner, engine: str) -> "Model":
        """A model over already compiled code (`irkit.library.load_library`)."""
        self = cls.__new__(cls)
        self._init_compiled(name, runner, engine)
        return self

    def save(self, path: str | Path) -> None:
        """Write every variable (params and optimizer state) to an `.npz` file."""
        np.savez(path, **{n: np.asarray(self.variables[n]) for n in self.variables})

    def restore(self, path: str | Path) -> None:
        """Read the variables written by `save` (any engine); every variable must be there
        with its shape, and no other array."""
        with np.load(path) as data:
            names = set(data.files)
            missing = [n for n in self.variables if n not in names]
            unknown = sorted(names - set(self.variables))
            if missing or unknown:
                raise ValueError(f"{path}: does not match model {self.name!r}: "
                                 + "; ".join(p for p in (
                                     missing and f"missing {', '.join(missing)}",
                                     unknown and f"unknown {', '.join(unknown)}") if p))
            for n in self.variables:
                self.variables[n] = data[n]

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
        if self._runner is not None:
            return self._run(self._train_step, batch, None)
        return self._run(self._train_step, batch, _result_names(self._train_step))

    def _run(self, fn, given: dict, names: list[str] | None) -> dict:
        if self._runner is not None:
            return self._runner.run(fn, self.name, given, self._state["graph.variables"])
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
               engine: str = "interpreter", opt_level: int = 2) -> Model:
    """Compile a `.irk` file and return one of its models, ready to run: its derivative
    requests expanded into graph ops (`DERIVATIVES_PIPELINE`) for the interpreter.

    `model` may be left out when the file defines exactly one model. `engine="jit"` lowers
    the model to loops and compiles it in process (`opt_level` 0..3); the result has the same
    API.
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
    return Model(models[model], engine, opt_level=opt_level)


def load(path: str | Path, model: str | None = None) -> Model:
    """A model of a shared library built by `irkit-compile model.irk -o model.so`, called
    through ctypes; its metadata is read from the sidecar `model.so.json`."""
    from irkit.library import load_library
    return load_library(path, model)
