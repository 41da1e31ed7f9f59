"""The engines a `Model` runs on, behind one interface (`Engine`).

- `InterpreterEngine` ("interpreter"): dev mode, define-by-run. Every op runs through its
  numpy reference semantics, so what a model means can be inspected step by step. Derivative
  requests (`autodiff.grad`, from the DSL's `grad` and `train` clauses) are first expanded by
  the pipeline table's rows up to `DEV_STAGE` (the `autodiff` pass, then `canonicalize,cse`).
- `CompiledEngine`: compiled code called through a `CompiledRunner`: "jit" (`JitEngine`)
  lowers the module by every row of the pipeline table and compiles it in process, and from
  a source file goes through the compile cache (`irkit.runtime.compile_cache`); "shared"
  calls a library built by `irkit-compile -o model.so` (`irkit.load`).

A `Model` asks its engine which functions it has, their inputs and outputs, the variables'
initial values, and to run a function on checked inputs with the variables' storage; it never
asks which engine it is. A new engine is one class here and one entry in `ENGINES` (those a
`Model` can be built on from a graph module, `from_module`, or from a model file's text,
`from_source`).
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import IntegerAttr, StringAttr, numpy_dtype
from irkit.dialects.graph import VariableOp, variable_specs
from irkit.interpreter import Interpreter, to_value
from irkit.ir import Operation
from irkit.passes import pipeline
from irkit.runtime.compiled import CompiledModels, CompiledRunner, IRText, compile_models
from irkit.runtime.inputs import InputSpec, check_inputs, contiguous
from irkit.symbols import lookup_symbol_in, symbol_name


class Engine:
    """How a `Model` runs its functions (see the module docstring); `name` is what
    `Model.engine` reports, `module` what `Model.module` shows."""

    name: str = ""
    module: Operation

    @classmethod
    def from_module(cls, module: Operation, opt_level: int = 2, threads: int = 0,
                    disable=(), pass_options: str = "") -> "Engine":
        """The engine of one model's graph module (`opt_level`: compiled code's, 0..3;
        `threads`: how many its parallel loops use, 0 for OpenMP's default; `disable`: passes
        of the pipeline table left out; `pass_options`: options set on passes it runs;
        both `pipeline.passes_between`'s)."""
        raise NotImplementedError

    @classmethod
    def from_source(cls, text: str, filename: str, model: str | None, opt_level: int = 2,
                    cache: bool = True, threads: int = 0, disable=(),
                    pass_options: str = "") -> tuple[str, "Engine"]:
        """(model name, engine) for the model `model` of the DSL text `text` read from
        `filename` (None: its only model). Compiled engines may take it from the compile
        cache (`cache`)."""
        from irkit.frontend.dsl import compile_source, model_modules
        models = model_modules(compile_source(text, filename))
        name = select_model(models, filename, model)
        return name, cls.from_module(models[name], opt_level, threads, disable,
                                     pass_options=pass_options)

    def functions(self) -> set[str]:
        """The names of the functions it can run (`forward`, `train_step`)."""
        raise NotImplementedError

    def inputs(self, fn: str) -> list[InputSpec]:
        raise NotImplementedError

    def outputs(self, fn: str) -> list[str]:
        raise NotImplementedError

    def variables(self) -> dict[str, tuple[np.ndarray, tuple, np.dtype]]:
        """Each variable's initial value (storage the Model owns and the engine updates in
        place), shape and dtype, by name."""
        raise NotImplementedError

    def run(self, fn: str, model_name: str, given: dict, store: dict) -> dict:
        """Run `fn` on the inputs `given` (checked here, by name) with the variables'
        storage `store`: a dict from output name to array."""
        raise NotImplementedError

    def variable_store(self) -> dict:
        """The dict a `Model` keeps the variables in (name -> array): a plain one, or an
        engine's own that also holds them elsewhere (`irkit.runtime.cuda.DeviceStore`)."""
        return {}


# ---------------------------------------------------------------------------------------------
# Dev mode
# ---------------------------------------------------------------------------------------------


def select_model(models, filename: str, model: str | None) -> str:
    """The name of the model `model` of a file whose models are `models` (names), or of its
    only model; a clear ValueError otherwise."""
    if model is None:
        if len(models) != 1:
            raise ValueError(f"{filename} defines {len(models)} models "
                             f"({', '.join(models)}); choose one with model=")
        return next(iter(models))
    if model not in models:
        raise ValueError(f"{filename} has no model {model!r} (models: {', '.join(models)})")
    return model


def has_derivatives(module: Operation) -> bool:
    return any(op.name.startswith("autodiff.") for op in module.walk())


def expand_derivatives(module: Operation, disable=(), pass_options: str = "") -> Operation:
    """Run the pipeline table's rows up to `DEV_STAGE` on `module` (in place, without the
    passes in `disable`, with the options `pass_options` sets), which expands its derivative
    requests into graph ops, and return it."""
    pipeline.pass_manager(None, pipeline.DEV_STAGE, disable,
                          pass_options=pass_options).run(module)
    return module


def arg_specs(fn: Operation) -> list[InputSpec]:
    """A graph function's inputs, from its arguments' `graph.name` and `graph.dims`."""
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


def result_names(fn: Operation) -> list[str]:
    """A graph function's outputs, from its results' `graph.name`."""
    ftype = fn.properties["function_type"].value
    attrs = fn.properties.get("res_attrs")
    names = []
    for i in range(len(ftype.results)):
        d = attrs[i].value if attrs is not None else {}
        names.append(d["graph.name"].value if "graph.name" in d else f"result{i}")
    return names


class InterpreterEngine(Engine):
    """Runs a graph module's functions with the reference interpreter. A module that still
    holds derivative requests is copied and the copy expanded (the caller's module is left
    as it was); one without runs as it is."""

    name = "interpreter"

    def __init__(self, module: Operation, disable=(), pass_options: str = "") -> None:
        if has_derivatives(module):
            module = expand_derivatives(module.clone(), disable, pass_options)
        self.module = module
        self._state: dict = {}          # what ops keep across calls (the variables too)
        self._functions = {}
        for name in ("forward", "train_step"):
            fn = lookup_symbol_in(module, name)
            if fn is not None and fn.name == "func.func":
                self._functions[name] = fn

    @classmethod
    def from_module(cls, module: Operation, opt_level: int = 2,
                    threads: int = 0, disable=(),
                    pass_options: str = "") -> "InterpreterEngine":
        return cls(module, disable, pass_options)

    def functions(self) -> set[str]:
        return set(self._functions)

    def inputs(self, fn: str) -> list[InputSpec]:
        return arg_specs(self._functions[fn])

    def outputs(self, fn: str) -> list[str]:
        return result_names(self._functions[fn])

    def variables(self) -> dict[str, tuple[np.ndarray, tuple, np.dtype]]:
        out = {}
        for op in self.module.regions[0].blocks[0].ops:
            if isinstance(op, VariableOp):
                t = op.tensor_type
                out[op.var_name] = (op.initial_value(), t.shape, numpy_dtype(t.element))
        return out

    def run(self, fn: str, model_name: str, given: dict, store: dict) -> dict:
        func = self._functions[fn]
        specs = arg_specs(func)
        arrays = check_inputs(specs, given, f"{model_name}.{fn}")
        ftype = func.properties["function_type"].value
        args = [to_value(a, t, s.name) for a, t, s in zip(arrays, ftype.inputs, specs)]
        self._state["graph.variables"] = store
        with np.errstate(all="ignore"):
            values = Interpreter(self.module, self._state).call(func, args)
        return {n: np.asarray(v) for n, v in zip(result_names(func), values)}


# ---------------------------------------------------------------------------------------------
# Compiled code
# ---------------------------------------------------------------------------------------------


class CompiledEngine(Engine):
    """Calls compiled functions through a `CompiledRunner`; the variables' storage is one
    numpy array per variable, initialized from the lowered module's `graph.variables` as
    dev mode initializes them."""

    def __init__(self, runner: CompiledRunner, name: str,
                 module: Operation | IRText | None = None,
                 initial_values: dict | None = None) -> None:
        self.runner = runner
        self.name = name
        self._module = module
        #: variables' initial values drawn before (`ModelCode.initial_values`)
        self._initial_values = initial_values

    @property
    def module(self) -> Operation:
        """What `Model.module` shows: the graph module compiled in process, else the lowered
        one. Held as `IRText` by a warm start, and parsed only when asked for (10 ms of the
        example MLP's 0.1 s warm start went to parsing it for nobody)."""
        module = self._module
        if isinstance(module, IRText):
            self._module = module = module.op
        return module if module is not None else self.runner.module

    def functions(self) -> set[str]:
        return set(self.runner.entries)

    def inputs(self, fn: str) -> list[InputSpec]:
        graph_fn = self.runner.unlowered(fn)        # a JIT entry not called yet
        return arg_specs(graph_fn) if graph_fn is not None else self.runner.entries[fn].inputs

    def outputs(self, fn: str) -> list[str]:
        graph_fn = self.runner.unlowered(fn)
        return result_names(graph_fn) if graph_fn is not None else \
            self.runner.entries[fn].output_names

    def variables(self) -> dict[str, tuple[np.ndarray, tuple, np.dtype]]:
        return {name: (contiguous(np.asarray(value)), shape, dtype) for name, shape, dtype, value
                in variable_specs(self.runner.module, self._initial_values)}

    def run(self, fn: str, model_name: str, given: dict, store: dict) -> dict:
        return self.runner.run(fn, model_name, given, store)


class JitEngine(CompiledEngine):
    """"jit": the model lowered by every row of the pipeline table and compiled in process
    (`opt_level` 0..3). From a model file's text it goes through the compile cache: a warm
    start loads the object code and the model's interface, and runs nothing else."""

    def __init__(self, compiled: CompiledModels, model: str, threads: int = 0) -> None:
        mc = compiled.models[model]
        super().__init__(compiled.runner(model, threads), "jit", mc.module, mc.initial_values)

    @classmethod
    def from_module(cls, module: Operation, opt_level: int = 2,
                    threads: int = 0, disable=(), pass_options: str = "") -> "JitEngine":
        name = symbol_name(module) or "model"
        return cls(compile_models({name: module}, opt_level=opt_level, disable=disable,
                                  pass_options=pass_options), name, threads)

    @classmethod
    def from_source(cls, text: str, filename: str, model: str | None, opt_level: int = 2,
                    cache: bool = True, threads: int = 0, disable=(),
                    pass_options: str = "") -> tuple[str, "JitEngine"]:
        from irkit.diagnostics import SOURCES
        from irkit.runtime import tuning
        from irkit.runtime.compile_cache import cached_compile
        tuned = tuning.lookup(text)         # `irkit-compile --autotune`'s choices, if any

        def build() -> CompiledModels:
            from irkit.frontend.dsl import compile_source, model_modules
            models = model_modules(compile_source(text, filename))
            name = select_model(models, filename, model)
            tuning.apply(models, tuned)
            return compile_models({name: models[name]}, opt_level=opt_level, disable=disable,
                                  pass_options=pass_options)
        compiled = cached_compile(text, filename, model or "*", build, jit=True,
                                  options={"opt_level": opt_level,
                                           **pipeline.edits_record(disable, pass_options),
                                           **({"tuning": tuned} if tuned else {})},
                                  cache=cache)
        SOURCES.add(filename, text)         # run-time errors show the model's lines
        name = select_model(compiled.models, filename, model)
        return name, cls(compiled, name, threads)


#: the engines a Model is built on from a graph module or a model file, by name
ENGINES: dict[str, type[Engine]] = {
    "interpreter": InterpreterEngine,
    "jit": JitEngine,
}
