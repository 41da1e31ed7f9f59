"""The engines a `Model` runs on, behind one interface (`Engine`).

- `InterpreterEngine` ("interpreter"): dev mode, define-by-run. Every op runs through its
  numpy reference semantics, so what a model means can be inspected step by step. Derivative
  requests (`autodiff.grad`, from the DSL's `grad` and `train` clauses) are first expanded by
  the pipeline table's rows up to `DEV_STAGE` (the `autodiff` pass, then `canonicalize,cse`).
- `CompiledEngine`: compiled code called through a `CompiledRunner`: "jit" lowers the module
  by every row of the pipeline table and compiles it in process (`CompiledEngine.jit`);
  "shared" calls a library built by `irkit-compile -o model.so` (`irkit.load`).

A `Model` asks its engine which functions it has, their inputs and outputs, the variables'
initial values, and to run a function on checked inputs with the variables' storage; it never
asks which engine it is. A new engine is one class here and one entry in `ENGINES` (those a
`Model` can be built on from a graph module).
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import IntegerAttr, StringAttr, numpy_dtype
from irkit.dialects.graph import VariableOp, variable_specs
from irkit.interpreter import Interpreter, to_value
from irkit.ir import Operation
from irkit.passes import pipeline
from irkit.runtime.compiled import CompiledRunner, lower_model_with_graph
from irkit.runtime.inputs import InputSpec, check_inputs, contiguous
from irkit.symbols import lookup_symbol_in


class Engine:
    """How a `Model` runs its functions (see the module docstring); `name` is what
    `Model.engine` reports, `module` what `Model.module` shows."""

    name: str = ""
    module: Operation

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


# ---------------------------------------------------------------------------------------------
# Dev mode
# ---------------------------------------------------------------------------------------------


def has_derivatives(module: Operation) -> bool:
    return any(op.name.startswith("autodiff.") for op in module.walk())


def expand_derivatives(module: Operation) -> Operation:
    """Run the pipeline table's rows up to `DEV_STAGE` on `module` (in place), which
    expands its derivative requests into graph ops, and return it."""
    pipeline.pass_manager(None, pipeline.DEV_STAGE).run(module)
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

    def __init__(self, module: Operation) -> None:
        if has_derivatives(module):
            module = expand_derivatives(module.clone())
        self.module = module
        self._state: dict = {}          # what ops keep across calls (the variables too)
        self._functions = {}
        for name in ("forward", "train_step"):
            fn = lookup_symbol_in(module, name)
            if fn is not None and fn.name == "func.func":
                self._functions[name] = fn

    @classmethod
    def from_module(cls, module: Operation, opt_level: int = 2) -> "InterpreterEngine":
        return cls(module)

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
                 module: Operation | None = None) -> None:
        self.runner = runner
        self.name = name
        #: what `Model.module` shows: the graph module compiled in process, else the
        #: lowered one
        self.module = module if module is not None else runner.module

    @classmethod
    def jit(cls, module: Operation, opt_level: int = 2) -> "CompiledEngine":
        """The module lowered by every row of the pipeline table and compiled in process
        (`opt_level` 0..3)."""
        graph, lowered = lower_model_with_graph(module)
        return cls(CompiledRunner.jit(lowered, opt_level=opt_level, graph=graph), "jit",
                   module)

    def functions(self) -> set[str]:
        return set(self.runner.entries)

    def inputs(self, fn: str) -> list[InputSpec]:
        return self.runner.entries[fn].inputs

    def outputs(self, fn: str) -> list[str]:
        return self.runner.entries[fn].output_names

    def variables(self) -> dict[str, tuple[np.ndarray, tuple, np.dtype]]:
        return {name: (contiguous(np.asarray(value)), shape, dtype)
                for name, shape, dtype, value in variable_specs(self.runner.module)}

    def run(self, fn: str, model_name: str, given: dict, store: dict) -> dict:
        return self.runner.run(fn, model_name, given, store)


#: the engines a Model is built on from a graph module, by name: (module, opt_level) -> Engine
ENGINES = {
    "interpreter": InterpreterEngine.from_module,
    "jit": CompiledEngine.jit,
}
