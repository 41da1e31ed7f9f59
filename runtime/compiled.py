"""Compiled models: the graph module lowered by the pipeline table (`irkit.passes.pipeline`),
compiled by the LLVM backend, and run from Python.

    graph, lowered = lower_model_with_graph(model_module)   # loop/memory IR, self-describing
    runner = CompiledRunner.jit(lowered, graph=graph)        # MCJIT, in process

The JIT engine and libraries loaded with `irkit.load` both call their code through a
`CompiledRunner`; `irkit.exporters.library` writes the same lowered modules as a shared
library with a C header.

The lowered module describes its own calling convention (docs/lowering.md): a function's
arguments are its inputs (`graph.name`, `graph.dims`), its outputs (`graph.output = k`) and the
variables it touches (`graph.variable = "w"`); the module attribute `graph.variables` lists the
variables with their initializers. Lowering adds one thing the runtime needs: a `graph.dims`
attribute on each output argument, the output's shape in terms of the inputs' symbolic dims
(`["N", 10]`, `irkit.runtime.shapes.output_dims`); the C header documents it. To allocate
outputs, the runtime runs the same shape functions on the inputs' actual sizes over the graph
function (`concrete_output_shapes`, cached per input shapes), falling back to `graph.dims`
when it has no graph function. An output whose shape neither derives is a clear ValueError.

Run-time errors. A function that checks something the interpreter would raise on (an index
out of range, a size that does not divide) has a last argument marked `graph.status`: the
runner passes three zeroed i64s, and when the call leaves a nonzero code in the first, the
`memory.check` of that code in the function says what failed and where, and the call raises
`ValueError("model.fn: file:line:col: error: 'graph.op' failed: ...")` with the model's
source line and a caret, as the interpreter's `InterpreterError` reads.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, numpy_dtype
from irkit.diagnostics import SOURCES, Diagnostic, IRError, resolve_file_line_col
from irkit.dialects.memory import CheckOp
from irkit.ir import Operation
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.runtime.inputs import InputSpec, bind_dims, check_inputs, contiguous
from irkit.runtime.shapes import concrete_output_shapes, output_dims
from irkit.source_files import read_source
from irkit.types import I64


# ---------------------------------------------------------------------------------------------
# Lowering
# ---------------------------------------------------------------------------------------------


def lower_model_with_graph(module: Operation,
                           make_pm: Callable[[str | None, str], PassManager] | None = None
                           ) -> tuple[Operation, Operation]:
    """(graph module, lowered module): copies of one model's module (the caller's is left as
    it is) taken through the pipeline table, the first at its `GRAPH_STAGE` (derivatives
    expanded), the second at its last stage (what the backend compiles), with `graph.dims` on
    every output argument whose shape `output_dims` derives. `make_pm(start, stop)` builds
    the pass manager for the stages after `start` up to `stop` (default
    `pipeline.pass_manager`; the tools add their instrumentation)."""
    make_pm = make_pm or pipeline.pass_manager
    module = module.clone()
    make_pm(None, pipeline.GRAPH_STAGE).run(module)
    graph = module.clone()
    shapes = {fn.properties["sym_name"].value: output_dims(fn)
              for fn in module.regions[0].blocks[0].ops if fn.name == "func.func"
              and fn.regions[0].blocks}
    make_pm(pipeline.GRAPH_STAGE, pipeline.compiled_stage()).run(module)
    for fn in module.regions[0].blocks[0].ops:
        if fn.name != "func.func" or fn.properties["sym_name"].value not in shapes:
            continue
        outs = shapes[fn.properties["sym_name"].value]
        attrs = fn.properties.get("arg_attrs")
        if attrs is None:
            continue
        new = []
        for a in attrs:
            d = dict(a.value)
            if "graph.output" in d:
                k = d["graph.output"].value
                dims = outs[k] if k < len(outs) else None
                if dims is not None:
                    d["graph.dims"] = ArrayAttr([
                        StringAttr(x) if isinstance(x, str) else IntegerAttr(x, I64)
                        for x in dims])
            new.append(DictionaryAttr(d))
        fn.properties["arg_attrs"] = ArrayAttr(new)
    return graph, module


def lower_model(module: Operation, make_pm=None) -> Operation:
    """The lowered module of `lower_model_with_graph`."""
    return lower_model_with_graph(module, make_pm)[1]


# ---------------------------------------------------------------------------------------------
# Entry points of a lowered module
# ---------------------------------------------------------------------------------------------


class Entry:
    """One lowered function's calling convention, read from its argument attributes."""

    def __init__(self, fn: Operation, symbol: str | None = None) -> None:
        self.name = fn.properties["sym_name"].value
        self.symbol = symbol or self.name
        ftype = fn.properties["function_type"].value
        attrs = fn.properties.get("arg_attrs")
        self.inputs: list = []            # InputSpec
        self.outputs: list = []           # (k, name, type, dims or None)
        self.variables: list[str] = []    # variable names, in argument order
        # ("in", i) / ("out", k) / ("var", name) / ("status", None): the run-time error status
        self.order: list = []
        self.fn = fn                      # its `memory.check`s name a failure's site
        for i, t in enumerate(ftype.inputs):
            d = attrs[i].value if attrs is not None else {}
            dims = None
            if "graph.dims" in d:
                dims = tuple(a.value if isinstance(a, (IntegerAttr, StringAttr)) else None
                             for a in d["graph.dims"])
            if "graph.output" in d:
                k = d["graph.output"].value
                name = d["graph.name"].value if "graph.name" in d else f"result{k}"
                self.outputs.append((k, name, t, dims))
                self.order.append(("out", k))
            elif "graph.variable" in d:
                self.variables.append(d["graph.variable"].value)
                self.order.append(("var", d["graph.variable"].value))
            elif "graph.status" in d:
                self.order.append(("status", None))
            else:
                name = d["graph.name"].value if "graph.name" in d else f"arg{i}"
                if dims is None:
                    dims = tuple("?" if s is None else s for s in t.shape)
                self.inputs.append(InputSpec(name, np.dtype(numpy_dtype(t.element)), dims,
                                             str(t.element)))
                self.order.append(("in", len(self.inputs) - 1))
        self.outputs.sort(key=lambda o: o[0])
        self.output_names = [o[1] for o in self.outputs]
        if ftype.results:
            raise ValueError(f"@{self.name} has non-buffer results; the runtime only calls "
                             "functions whose results are output buffers")

    def run_time_error(self, status: np.ndarray, fn_name: str) -> ValueError:
        """The error a call reported in its status buffer (`memory.check`): the failing
        site's message with its value and bound, located at the model line it came from,
        rendered as the interpreter renders its errors (source line and caret)."""
        code, value, bound = (int(v) for v in status)
        site = next((op for op in self.fn.walk()
                     if isinstance(op, CheckOp) and op.code.value == code), None)
        if site is None:
            return ValueError(f"{fn_name}: run-time error with unknown code {code} (value "
                              f"{value}, bound {bound})")
        _load_source(site.location)
        text = Diagnostic("error", site.render(value, bound), site.location).render()
        return ValueError(f"{fn_name}: {text}")

    def output_shape(self, k: int, bound: dict, fn_name: str) -> tuple:
        _, name, t, dims = self.outputs[k]
        if dims is None:
            if all(s is not None for s in t.shape):
                return tuple(t.shape)
            raise ValueError(f"{fn_name}: cannot derive the shape of output {name!r} "
                             f"({t}) from the inputs' dims; the runtime cannot allocate it")
        shape = []
        for d, s in zip(dims, t.shape):
            if isinstance(d, int):
                shape.append(d)
            elif s is not None:
                shape.append(s)
            elif d in bound:
                shape.append(bound[d])
            else:
                raise ValueError(f"{fn_name}: the size {d!r} of output {name!r} is not bound "
                                 "by any input")
        return tuple(shape)


class CompiledRunner:
    """Calls the compiled functions of one lowered model: allocates the outputs, binds the
    variables' storage (`store`, name -> array, owned by the `Model`), returns a dict."""

    def __init__(self, lowered: Operation, functions, owner, prefix: str = "",
                 graph: Operation | None = None) -> None:
        self.module = lowered
        self.graph_functions = {}           # name -> graph func.func (concrete shapes)
        if graph is not None:
            for fn in graph.regions[0].blocks[0].ops:
                if fn.name == "func.func" and fn.regions[0].blocks:
                    self.graph_functions[fn.properties["sym_name"].value] = fn
        self._shape_cache: dict = {}
        self.entries = {}
        for fn in lowered.regions[0].blocks[0].ops:
            if fn.name == "func.func" and fn.regions[0].blocks \
                    and "graph.output_sizes_of" not in fn.attributes:
                e = Entry(fn)
                self.entries[e.name[len(prefix):] if prefix else e.name] = e
        self.functions = functions      # entry name -> JitFunction
        self._owner = owner

    @classmethod
    def jit(cls, lowered: Operation, opt_level: int = 2, threads: int = 1,
            graph: Operation | None = None) -> "CompiledRunner":
        from irkit.backends.llvm_cpu import compile_module
        jm = compile_module(lowered, opt_level=opt_level, threads=threads)
        return cls(lowered, dict(jm.functions), jm, graph=graph)

    def _output_shapes(self, name: str, e: "Entry", arrays, bound, fn_name) -> list[tuple]:
        """The graph function's shape functions on the inputs' sizes where it is known
        (exact, cached per input shapes), else the outputs' symbolic `graph.dims`. Sizes an
        op rejects are a ValueError that names the op and its model line."""
        fn = self.graph_functions.get(name)
        if fn is not None:
            key = (name, tuple(a.shape for a in arrays))
            if key not in self._shape_cache:
                try:
                    self._shape_cache[key] = concrete_output_shapes(
                        fn, [a.shape for a in arrays])
                except IRError as e:    # an op's rule rejects these sizes: name it
                    raise ValueError(f"{fn_name}: {e}") from None
            shapes = self._shape_cache[key]
            if shapes is not None and len(shapes) == len(e.outputs):
                return shapes
        return [e.output_shape(k, bound, fn_name) for k in range(len(e.outputs))]

    def run(self, name: str, model_name: str, given: dict, store: dict) -> dict:
        e = self.entries[name]
        fn_name = f"{model_name}.{name}"
        arrays = check_inputs(e.inputs, given, fn_name)
        arrays = [contiguous(a) for a in arrays]
        bound = bind_dims(e.inputs, arrays)
        shapes = self._output_shapes(name, e, arrays, bound, fn_name)
        outs = [np.empty(shape, _storage(e.outputs[k][2])) for k, shape in enumerate(shapes)]
        status = np.zeros(3, np.int64) if ("status", None) in e.order else None
        args = []
        for kind, key in e.order:
            if kind == "in":
                args.append(arrays[key])
            elif kind == "out":
                args.append(outs[key])
            elif kind == "var":
                args.append(store[key])
            else:
                args.append(status)
        self.functions[name](*args)
        if status is not None and status[0]:
            raise e.run_time_error(status, fn_name)
        return dict(zip(e.output_names, outs))


def _load_source(location) -> None:
    """Make the model file a location points into known to the diagnostics, when it is on
    disk and not known yet (a library loaded in a fresh process), so that its line shows."""
    flc = resolve_file_line_col(location)
    if flc is None or SOURCES.text(flc[0]) is not None or not os.path.isfile(flc[0]):
        return
    try:
        SOURCES.add(flc[0], read_source(flc[0]))
    except (OSError, IRError):      # unreadable, or not UTF-8: the message goes without it
        pass


def _storage(t) -> np.dtype:
    return np.dtype(numpy_dtype(t.element))
