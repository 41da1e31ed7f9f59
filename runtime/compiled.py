"""Compiled models: the graph module lowered by the pipeline table (`irkit.passes.pipeline`),
compiled by the LLVM backend, and run from Python.

    graph, lowered = lower_model_with_graph(model_module)   # loop/memory IR, self-describing
    compiled = compile_models({"mlp": model_module})          # + object code: CompiledModels
    runner = compiled.runner("mlp")                           # MCJIT, in process

The JIT engine and libraries loaded with `irkit.load` both call their code through a
`CompiledRunner`; `irkit.exporters.library` writes the same lowered modules as a shared
library with a C header.

What compiling produces (`CompiledModels`) is everything needed to run the models without
compiling again: the object code, and per model its modules (`ModelCode`) held as
`IRText`, an Operation or its text, each made from the other when first needed. That is
what the compile cache (`irkit.runtime.compile_cache`) stores, and a runner made from it
parses only what a call needs: the *interface* of the lowered module (`interface_module`:
every body reduced to a return, the signatures and argument roles kept), a few ms where the
whole lowered module takes 0.1-0.5 s; the graph module when outputs are first allocated; the
whole lowered module only when a run-time error must name its site.

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
runner passes three zeroed i64s (one array per thread, cleared after a call that set it),
and when the call leaves a nonzero code in the first, the `memory.check` of that code in the
function says what failed and where, and the call raises
`ValueError("model.fn: file:line:col: error: 'graph.op' failed: ...")` with the model's
source line and a caret, as the interpreter's `InterpreterError` reads.

The cost of a call. What Python does around the compiled code is per call, and a small
model's step is tens of microseconds: the logistic regression's step at batch 100 spent
about 11 us in Python around 30 us of compiled code. A call whose inputs have the
signature of an earlier one (`_signature`) skips the checks that signature already passed
and the output shapes it gave; the status array is reused, so its descriptor is kept as the
variables' are (backends/llvm_abi.py). Measured (timeit, best of 5, batch 1, same process):
`train_step` 18.9 -> 15.9 us, of which the compiled code is 7.5. Since then every entry is
called through its compiled Python entry (backends/llvm_pyentry.py: no ctypes, the arrays
read and checked by compiled code), and inputs whose names and shapes were checked before
go to it as given (`CompiledRunner.run`): 15.0 -> 8.5 us, around 5.5 of compiled code. Now
the whole call of a recorded shape is compiled (the entry's second Python entry, which
looks the arrays up by name, allocates the outputs and builds the dict): Python does only
the method calls that reach it.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Mapping

import numpy as np

from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, numpy_dtype
from irkit.builtin import ModuleOp
from irkit.diagnostics import SOURCES, Diagnostic, IRError, resolve_file_line_col
from irkit.dialects.func import ReturnOp
from irkit.ir import Block, Operation
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.printer import print_op
from irkit.runtime.inputs import InputSpec, bind_dims, check_inputs, contiguous
from irkit.runtime.outputs import MIN_BYTES, OutputArrays
from irkit.runtime.shapes import concrete_output_shapes, output_dims
from irkit.source_files import read_source
from irkit.symbols import lookup_symbol_in, symbol_name, symbol_uses
from irkit.target import TARGET_ATTRIBUTE
from irkit.target import attribute as target_attribute
from irkit.types import I64

if TYPE_CHECKING:
    from irkit.backends.llvm_cpu import ObjectCode


# ---------------------------------------------------------------------------------------------
# Lowering
# ---------------------------------------------------------------------------------------------


#: whether the default pipeline of `lower_model_with_graph` (the JIT's, the compile cache's)
#: verifies the module after every pass, as irkit-opt does and the test suite asks
#: (tests/conftest.py), or after every row of the pipeline table (`_run_rows`)
VERIFY_EACH_PASS = False


def lower_model_with_graph(module: Operation,
                           make_pm: Callable[[str | None, str], PassManager] | None = None,
                           disable=(), target: str = "cpu",
                           pass_options: str = "") -> tuple[Operation, Operation]:
    """(graph module, lowered module): copies of one model's module (the caller's is left as
    it is) taken through the pipeline table, the first at its `GRAPH_STAGE` (derivatives
    expanded, `graph_stage`), the second at its last stage (what the backend compiles,
    `lower_graph`), with `graph.dims` on every output argument whose shape `output_dims`
    derives. `make_pm(start, stop)` builds the pass manager for the stages after `start` up
    to `stop`, called once per row (default `pipeline.pass_manager` verifying after each
    row, not each pass, unless `VERIFY_EACH_PASS`: `_run_rows`; the tools add their
    instrumentation and verify as told), without the passes in `disable` and with the
    options `pass_options` sets (`pipeline.passes_between`), by the ladder of `target`
    (`pipeline.stages`: "nvptx" ends with the kernels outlined)."""
    make_pm = make_pm or default_make_pm(disable, target, pass_options)
    graph = graph_stage(module, make_pm, target)
    return graph, lower_graph(graph, make_pm, target)


def default_make_pm(disable=(), target: str = "cpu",
                    pass_options: str = "") -> Callable[[str | None, str], PassManager]:
    """The pass managers of the pipeline table's rows that `lower_model_with_graph` uses
    unless told otherwise."""
    return functools.partial(pipeline.pass_manager, disable=disable, target=target,
                             pass_options=pass_options, verify_each=VERIFY_EACH_PASS)


def graph_stage(module: Operation, make_pm, target: str = "cpu") -> Operation:
    """A copy of `module` taken through the pipeline table's rows up to `GRAPH_STAGE`
    (`make_pm` as for `lower_model_with_graph`)."""
    graph = module.clone()
    _run_rows(graph, None, pipeline.GRAPH_STAGE, make_pm, target)
    return graph


def _entries_left_out(module: Operation, keep: Collection[str]) -> list[Operation]:
    """The entries of `module` that neither are in `keep` nor are referenced, directly or
    through other symbols, by those that are."""
    top = {}
    for op in module.regions[0].blocks[0].ops:
        name = symbol_name(op)
        if name is not None:
            top[name] = op
    live = {top[n] for n in keep if n in top}
    work = list(live)
    while work:
        for _, _, ref in symbol_uses(work.pop()):
            target = top.get(ref.root)
            if target is not None and target not in live:
                live.add(target)
                work.append(target)
    return [op for op in top.values() if _is_entry(op) and op not in live]


def entry_names(module: Operation) -> list[str]:
    """The functions of `module` the runtime calls (`_is_entry`), in module order."""
    return [_sym(fn) for fn in module.regions[0].blocks[0].ops if _is_entry(fn)]


def lower_graph(graph: Operation, make_pm, target: str = "cpu",
                entries: Collection[str] | None = None) -> Operation:
    """A copy of the graph-stage module `graph` taken through the rest of the pipeline table
    (`make_pm` as for `lower_model_with_graph`), with `graph.dims` on the output arguments;
    of the entries (`entry_names`) only those in `entries` when given: the others are left
    out before lowering, unless one of those kept calls them (every other function stays),
    which is how the JIT lowers one entry at its first call (`CompiledModels
    .entry_modules`)."""
    module = graph.clone()
    if entries is not None:
        for fn in _entries_left_out(module, entries):
            fn.erase()
    shapes = {_sym(fn): output_dims(fn) for fn in module.regions[0].blocks[0].ops
              if fn.name == "func.func" and fn.regions[0].blocks}
    _run_rows(module, pipeline.GRAPH_STAGE, pipeline.compiled_stage(target), make_pm, target)
    for fn in module.regions[0].blocks[0].ops:
        if fn.name != "func.func" or _sym(fn) not in shapes:
            continue
        outs = shapes[_sym(fn)]
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
    return module


def _run_rows(module: Operation, start: str | None, stop: str, make_pm,
              target: str = "cpu") -> None:
    """Take `module` through the pipeline table's rows after `start` up to `stop`, one pass
    manager a row. One that does not verify after every pass (the JIT's and the cache's
    default) has the module verified after its row instead: verification between passes was
    a third of the pass time of the example models. Broken IR that the rest of its row
    leaves broken is still stopped there (`irkit-compile --emit=ROW` then names the pass);
    IR that a later pass of the row happens to mend goes unnoticed, which is why the test
    suite verifies after every pass (`VERIFY_EACH_PASS`)."""
    names = pipeline.stage_names(target)
    first = 0 if start is None else names.index(start) + 1
    for row in names[first:names.index(stop) + 1]:
        pm = make_pm(start, row)
        pm.run(module)
        if not pm.verify_each:
            try:
                module.verify()
            except IRError as e:
                e.diagnostics[0].attach_note(
                    f"the IR does not verify after the passes of the pipeline row '{row}' "
                    f"({pipeline.passes_between(start, row, target=target)})",
                    module.location)
                raise
        start = row


def lower_model(module: Operation, make_pm=None, disable=()) -> Operation:
    """The lowered module of `lower_model_with_graph`."""
    return lower_model_with_graph(module, make_pm, disable)[1]


# ---------------------------------------------------------------------------------------------
# What compiling produces
# ---------------------------------------------------------------------------------------------


class IRText:
    """One module held as an `Operation`, as its text, or both; each is made from the other
    the first time it is asked for (printed with locations, so that errors still name the
    model's lines)."""

    __slots__ = ("_op", "_text")

    def __init__(self, op: Operation | None = None, text: str | None = None) -> None:
        if op is None and text is None:
            raise ValueError("IRText needs an operation or its text")
        self._op, self._text = op, text

    @property
    def op(self) -> Operation:
        if self._op is None:
            from irkit.dialects import register_all
            from irkit.parser import parse_module
            register_all()
            # irkit printed it from a verified module (and the cache checked its digest):
            # verifying again would cost a third of the parse
            self._op = parse_module(self._text, "<compiled model>", verify=False)
        return self._op

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = print_op(self._op, debuginfo=True)
        return self._text


@dataclass
class EntryModules:
    """What the JIT lowered for one entry (`lower_graph` with `entries=[name]`): the lowered
    module (the entry, its `<name>_output_sizes` sibling, what they call) and its
    `interface_module`."""

    lowered: IRText
    interface: IRText


@dataclass
class ModelCode:
    """One compiled model's modules: `module`, its graph module as given to the compiler
    (what `Model.module` shows); `graph`, at the pipeline's `GRAPH_STAGE` (the shape
    functions). A library's (`jit=False`) has every function lowered at once: `lowered`,
    what the backend compiled (functions named as in the model), and `interface`, its
    `interface_module`. The JIT's lowers each entry at its first call instead, into
    `entries` (entry name -> `EntryModules`), as `jax.jit` traces and compiles a function
    when it is first called: the first training step of the example MLP does not wait for
    `forward`'s lowering (0.1 of its 0.27 s in the pipeline rows after `GRAPH_STAGE`). Its
    functions are the object code's symbols `prefix + name`. `initial_values`: variables'
    initial values already drawn (name -> array; the compile cache keeps the random ones,
    `variable_specs`' `known`)."""

    name: str
    prefix: str
    module: IRText
    graph: IRText
    lowered: IRText | None = None
    interface: IRText | None = None
    initial_values: dict | None = None
    entries: dict[str, EntryModules] = field(default_factory=dict)

    def variables_module(self) -> Operation:
        """A module whose `graph.variables` attribute lists the model's variables (what
        `variable_specs` reads), made from the graph module's declarations as bufferization
        makes it: a JIT model has no lowered module whose attribute it could read."""
        from irkit.dialects.graph import variables_attribute
        graph = self.graph.op
        top = ModuleOp.create_empty(graph.location)
        top.attributes.update(graph.attributes)
        attr = variables_attribute(graph)
        if attr is not None:
            top.attributes["graph.variables"] = attr
        return top


@dataclass
class CompiledModels:
    """What compiling models produces: each model's `ModelCode` and its object code.

    For a library (`jit=False`), `code` is every model's functions' position-independent
    object code, compiled at once. For the JIT, an entry is lowered (`entry_modules`) and
    compiled (`entry_object`) on its first call, as `jax.jit` compiles a function: the first
    training step does not wait for `forward`'s lowering nor for LLVM to compile it (a
    quarter of the example MLP's LLVM time). `entry_code` holds the object code of each
    entry compiled so far, by symbol; each entry's code holds the functions it calls
    (`llvm_cpu.entry_functions`), so that each loads on its own. `options` are what an entry
    is compiled with (`opt_level`, `cpu`, `disable`, `pass_options` where set); `make_pm`
    makes the pass managers of the pipeline rows that lower it (None: `default_make_pm` with
    those); `stored`, when set (by the compile cache), is called after each entry compiled,
    with these `CompiledModels`."""

    code: ObjectCode | None
    models: dict[str, ModelCode]
    jit: bool
    entry_code: dict[str, ObjectCode] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    stored: Callable[["CompiledModels"], None] | None = None
    make_pm: Callable | None = field(default=None, repr=False, compare=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def entry_modules(self, model: str, name: str) -> EntryModules:
        """The lowered module and interface of `model`'s entry `name`, lowered now from the
        graph module if not before (`lower_graph`). An error in the lowering is raised here,
        at the entry's first call, located at its model line."""
        mc = self.models[model]
        with self._lock:                # two threads' first calls lower it once
            found = mc.entries.get(name)
            if found is None:
                make_pm = self.make_pm or default_make_pm(
                    self.options.get("disable", ()),
                    pass_options=self.options.get("pass_options", ""))
                lowered = lower_graph(mc.graph.op, make_pm, entries=[name])
                found = mc.entries[name] = EntryModules(
                    IRText(lowered), IRText(interface_module(lowered)))
            return found

    def entry_object(self, model: str, name: str) -> ObjectCode:
        """The object code of `model`'s entry `name` (and of every function it calls): the
        one at hand, else compiled now from its lowered module (`entry_modules`), and
        handed to `stored`."""
        from irkit.backends.llvm_cpu import compile_object, entry_functions, run_interruptibly
        mc = self.models[model]
        symbol = mc.prefix + name
        with self._lock:            # two threads' first calls compile it once
            code = self.entry_code.get(symbol)
            if code is not None:
                return code
            lowered = self.entry_modules(model, name).lowered.op
            # On a helper thread, so that Ctrl-C acts at once; not verified again: the
            # pipeline's last row verified it (or irkit printed it, and the cache checked
            # the text's digest)
            code = run_interruptibly(compile_object, lowered, self.options.get("opt_level", 2),
                                     self.options.get("cpu", "native"), jit=True,
                                     verify=False, functions=entry_functions(lowered, symbol))
            self.entry_code[symbol] = code
        if self.stored is not None:
            self.stored(self)
        return code

    def runner(self, model: str, threads: int = 0) -> "CompiledRunner":
        """A runner of `model`'s functions, each entry lowered and compiled if need be on
        its first call (`entry_object`), its object code then loaded in process (MCJIT), its
        parallel loops on `threads` threads (`JitModule.set_threads`: 0, OpenMP's
        default)."""
        from irkit.backends.llvm_cpu import check_threads, load_object
        if not self.jit:
            raise ValueError("position-independent object code is for a library, not for "
                             "loading in process")
        check_threads(threads)
        mc = self.models[model]

        def load(name: str):
            symbol = mc.prefix + name
            jm = load_object(self.entry_object(model, name),
                             {symbol: lookup_symbol_in(self.entry_modules(model, name)
                                                       .interface.op, symbol)})
            jm.set_threads(threads)
            return jm.functions[symbol], jm

        def entry(name: str) -> Entry:
            modules = self.entry_modules(model, name)
            return Entry(lookup_symbol_in(modules.interface.op, mc.prefix + name),
                         bodies=modules.lowered)
        return CompiledRunner(mc.variables_module(), {}, None, graph=mc.graph, load=load,
                              entries=LazyEntries(entry_names(mc.graph.op), entry))


class LazyEntries(Mapping):
    """A runner's entries (name -> `Entry`) whose names are known and each of which is made
    (`make(name)`: the JIT lowers the entry then) when first looked up; `made(name)` is the
    entry if it was."""

    def __init__(self, names, make: Callable[[str], "Entry"]) -> None:
        self._names = list(names)
        self._made: dict = {}
        self._make = make

    def __getitem__(self, name: str) -> "Entry":
        e = self._made.get(name)
        if e is None:
            if name not in self._names:
                raise KeyError(name)
            e = self._made[name] = self._make(name)
        return e

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def made(self, name: str) -> "Entry | None":
        return self._made.get(name)


def compile_models(models: dict[str, Operation], *, opt_level: int = 2, cpu: str = "native",
                   jit: bool = True, make_pm=None, disable=(),
                   pass_options: str = "") -> CompiledModels:
    """Compile models for `cpu` (`irkit.backends.llvm_cpu.cpu_target`) by the pipeline
    table (`make_pm`, `disable` and `pass_options` as for `lower_model_with_graph`): for
    `jit`, one model taken to the `GRAPH_STAGE` now, each entry lowered and compiled on its
    first call (`CompiledModels.entry_modules`, `entry_object`; its functions' own names are
    the symbols); otherwise every model lowered now (`lower_model_with_graph`) and one flat
    module of every model's functions, named `<model>_<function>`
    (`irkit.exporters.library.flat_module`), as a library exports them, compiled now."""
    from irkit.backends.llvm_cpu import compile_object, cpu_target, llvm_level, \
        run_interruptibly
    from irkit.exporters.library import flat_module
    if jit and len(models) != 1:
        raise ValueError(f"the JIT compiles one model at a time, not {len(models)}")
    llvm_level(opt_level)       # an unknown level or CPU is refused here, not at a first call
    cpu_target(cpu)
    mark_target(models, cpu)
    options = {"opt_level": opt_level, "cpu": cpu,
               **pipeline.edits_record(disable, pass_options)}
    make_pm = make_pm or default_make_pm(disable, pass_options=pass_options)
    if jit:
        return CompiledModels(None, {
            name: ModelCode(name, "", IRText(module), IRText(graph_stage(module, make_pm)))
            for name, module in models.items()}, True, options=options, make_pm=make_pm)
    pairs = {name: lower_model_with_graph(mod, make_pm, disable, pass_options=pass_options)
             for name, mod in models.items()}
    lowered = {name: p[1] for name, p in pairs.items()}
    # On a helper thread, so that Ctrl-C acts at once; not verified again: `_run_rows` has
    # verified every lowered module after its last row (the flat module is their functions).
    code = run_interruptibly(compile_object, flat_module(lowered), opt_level, cpu,
                             jit=False, verify=False)
    return CompiledModels(code, {
        name: ModelCode(name, f"{name}_", IRText(models[name]), IRText(pairs[name][0]),
                        IRText(lowered[name]), IRText(interface_module(lowered[name])))
        for name in models}, False, options=options)


def mark_target(models: dict[str, Operation], cpu: str) -> None:
    """Give each model module the `irkit.target` attribute of `cpu` where that is not this
    machine, so that the passes size vectors and register tiles for it
    (`irkit.target`'s docstring; `irkit.backends.llvm_cpu.pass_target`)."""
    if cpu == "native":
        return
    from irkit.backends.llvm_cpu import pass_target
    attr = target_attribute(pass_target(cpu))
    for module in models.values():
        module.set_attr(TARGET_ATTRIBUTE, attr)


def interface_module(lowered: Operation) -> Operation:
    """A new module with `lowered`'s attributes (the variables) and its functions' names,
    types and attributes (the calling convention), each body reduced to a `func.return`:
    all a runner reads to call the compiled functions, small enough to parse in a few ms."""
    top = ModuleOp.create_empty(lowered.location)
    top.attributes.update(lowered.attributes)
    top.properties.update(lowered.properties)
    block = top.regions[0].blocks[0]
    for fn in lowered.regions[0].blocks[0].ops:
        if fn.name != "func.func":
            continue
        stub = Operation.create("func.func", properties=fn.properties,
                                attributes=fn.attributes, regions=1, location=fn.location)
        if fn.regions[0].blocks:
            ftype = fn.properties["function_type"].value
            if ftype.results:
                raise ValueError(f"@{_sym(fn)} has non-buffer results; the runtime only "
                                 "calls functions whose results are output buffers")
            body = stub.regions[0].add_block(Block(ftype.inputs))
            body.append(ReturnOp.build(result_types=[], location=fn.location))
        block.append(stub)
    return top


def _sym(fn: Operation) -> str:
    return fn.properties["sym_name"].value


def _is_entry(fn: Operation) -> bool:
    """A function the runtime calls: a public definition, not an output-sizes helper."""
    vis = fn.properties.get("sym_visibility")
    return (fn.name == "func.func" and bool(fn.regions[0].blocks)
            and (vis is None or vis.value == "public")
            and "graph.output_sizes_of" not in fn.attributes)


# ---------------------------------------------------------------------------------------------
# Entry points of a lowered module
# ---------------------------------------------------------------------------------------------


class Entry:
    """One lowered function's calling convention, read from its argument attributes;
    `bodies`, where set, the lowered module that holds its body (else the runner's)."""

    def __init__(self, fn: Operation, symbol: str | None = None,
                 bodies: IRText | None = None) -> None:
        self.bodies = bodies
        self.name = fn.properties["sym_name"].value
        self.symbol = symbol or self.name
        ftype = fn.properties["function_type"].value
        attrs = fn.properties.get("arg_attrs")
        self.inputs: list = []            # InputSpec
        self.outputs: list = []           # (k, name, type, dims or None)
        self.variables: list[str] = []    # variable names, in argument order
        # ("in", i) / ("out", k) / ("var", name) / ("status", None): the run-time error status
        self.order: list = []
        from irkit.backends.llvm_pyentry import argument_roles    # not on `import irkit`
        for i, (t, role) in enumerate(zip(ftype.inputs, argument_roles(fn))):
            d = attrs[i].value if attrs is not None else {}
            dims = None
            if "graph.dims" in d:
                dims = tuple(a.value if isinstance(a, (IntegerAttr, StringAttr)) else None
                             for a in d["graph.dims"])
            if role == "out":
                k = d["graph.output"].value
                name = d["graph.name"].value if "graph.name" in d else f"result{k}"
                self.outputs.append((k, name, t, dims))
                self.order.append(("out", k))
            elif role == "var":
                self.variables.append(d["graph.variable"].value)
                self.order.append(("var", d["graph.variable"].value))
            elif role == "status":
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
        self.output_dtypes = [_storage(o[2]) for o in self.outputs]
        self.has_status = ("status", None) in self.order
        #: per argument, where `CompiledRunner.run` finds it: (0, i) the inputs, (1, k) the
        #: outputs, (2, name) the variables, (3, 0) the status
        self.slots = [({"in": 0, "out": 1, "var": 2, "status": 3}[kind], key or 0)
                      for kind, key in self.order]
        if ftype.results:
            raise ValueError(f"@{self.name} has non-buffer results; the runtime only calls "
                             "functions whose results are output buffers")

    def argument_names(self) -> list[str | None]:
        """Per argument, the name a model's call finds it by (`JitFunction.model_call`): its
        input's, output's or variable's; None for the status."""
        outputs = {k: name for k, name, _, _ in self.outputs}
        return [self.inputs[key].name if kind == "in" else outputs[key] if kind == "out"
                else key for kind, key in self.order]

    def run_time_error(self, status: np.ndarray, fn_name: str, fn: Operation) -> ValueError:
        """The error a call reported in its status buffer (`memory.check`): the failing
        site's message with its value and bound, located at the model line it came from,
        rendered as the interpreter renders its errors (source line and caret). `fn` is this
        function with its body, whose `memory.check`s name the sites."""
        from irkit.dialects.memory import CheckOp   # a run-time error's: not on a warm start
        code, value, bound = (int(v) for v in status)
        site = next((op for op in fn.walk()
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


#: the input shapes whose output shapes a runner remembers; more distinct ones start over
_SHAPE_CACHE_LIMIT = 256


class CompiledRunner:
    """Calls the compiled functions of one lowered model: allocates the outputs, binds the
    variables' storage (`store`, name -> array, owned by the `Model`), returns a dict.

    `lowered` is the lowered module or its `interface_module`; then `bodies` holds the
    whole one, read only to name the site of a run-time error. `graph` (the model's
    graph-stage module, if known) is read when outputs are first allocated.

    `functions` maps entry names to their `JitFunction`s; an entry it lacks is asked of
    `load` on its first call (name -> (the function, what holds its code alive)), as the
    JIT compiles each entry then (`CompiledModels.entry_object`). `entries`, when given,
    are the entries (name -> `Entry`, a `LazyEntries` where the JIT lowers each at its first
    call) instead of `lowered`'s functions; `lowered` then holds the variables only."""

    def __init__(self, lowered: Operation, functions, owner, prefix: str = "",
                 graph: IRText | None = None, bodies: IRText | None = None,
                 load: Callable[[str], tuple] | None = None,
                 entries: Mapping[str, "Entry"] | None = None) -> None:
        self.module = lowered
        self._graph = graph
        self._graph_functions: dict | None = None
        self._bodies = bodies if bodies is not None else IRText(lowered)
        self._shape_cache: dict = {}
        self._signatures: dict = {}     # `_signature` -> per output (key, shape, dtype, small)
        #: entry name -> its compiled model call (`JitFunction.model_call`), where it has one
        self._calls: dict = {}
        self._local = threading.local()     # `_status`
        self._outputs = OutputArrays()
        self.entries = entries
        if entries is None:
            self.entries = {}
            for fn in lowered.regions[0].blocks[0].ops:
                if _is_entry(fn):
                    e = Entry(fn)
                    self.entries[e.name[len(prefix):] if prefix else e.name] = e
        self.functions = {}             # entry name -> JitFunction
        #: what holds the code alive: the engines, the library
        self._owners = [owner] if owner is not None else []
        self._load = load
        for name, fn in functions.items():
            self._add(name, fn)

    def _add(self, name: str, fn) -> None:
        e = self.entries.get(name)
        if e is not None:   # the variables and the status: the same arrays step after step
            fn.keep_descriptors([i for i, (kind, _) in enumerate(e.order)
                                 if kind in ("var", "status")])
            call = fn.model_call(e.argument_names())
            if call is not None:
                self._calls[name] = call
        self.functions[name] = fn

    def function(self, name: str):
        """The `JitFunction` of the entry `name`, loaded (and compiled) on first use."""
        fn = self.functions.get(name)
        if fn is None:
            if self._load is None or name not in self.entries:
                raise KeyError(name)
            fn, owner = self._load(name)
            self._owners.append(owner)
            self._add(name, fn)
        return fn

    def unlowered(self, name: str) -> Operation | None:
        """The graph function of entry `name` where the entry is not lowered yet (the JIT
        lowers it at its first call): what tells its inputs and outputs until then, as the
        lowered function would (tests/unit/test_lazy_lowering.py checks both agree)."""
        made = getattr(self.entries, "made", None)
        if made is None or made(name) is not None:
            return None
        return self.graph_functions.get(name)

    @property
    def graph_functions(self) -> dict[str, Operation]:
        """The graph module's functions by name (their shape functions give the outputs'
        sizes); empty without a graph module."""
        if self._graph_functions is None:
            self._graph_functions = {}
            if self._graph is not None:
                for fn in self._graph.op.regions[0].blocks[0].ops:
                    if fn.name == "func.func" and fn.regions[0].blocks:
                        self._graph_functions[_sym(fn)] = fn
        return self._graph_functions

    @classmethod
    def jit(cls, lowered: Operation, opt_level: int = 2, threads: int = 0,
            graph: Operation | None = None) -> "CompiledRunner":
        """An already lowered module compiled in process (MCJIT), its parallel loops on
        `threads` threads (0: OpenMP's default); no compile cache involved."""
        from irkit.backends.llvm_cpu import compile_module
        jm = compile_module(lowered, opt_level=opt_level, threads=threads)
        return cls(lowered, dict(jm.functions), jm,
                   graph=IRText(graph) if graph is not None else None)

    def _output_shapes(self, name: str, e: "Entry", arrays, fn_name) -> list[tuple]:
        """The outputs' shapes for these (checked) inputs, cached per input shapes: the
        graph function's shape functions and the outputs' `graph.dims` read nothing but the
        inputs' sizes (the element types are the declared ones once checked, and neither
        depends on the values), so equal sizes give equal shapes and a steady loop derives
        them once. An error is not cached: those sizes raise it again."""
        key = (name, *[a.shape for a in arrays])
        shapes = self._shape_cache.get(key)
        if shapes is None:
            shapes = self._derive_output_shapes(name, e, arrays, fn_name)
            if len(self._shape_cache) >= _SHAPE_CACHE_LIMIT:
                self._shape_cache.clear()
            self._shape_cache[key] = shapes
        return shapes

    def _derive_output_shapes(self, name: str, e: "Entry", arrays, fn_name) -> list[tuple]:
        """The graph function's shape functions on the inputs' sizes where it is known
        (exact), else the outputs' symbolic `graph.dims`. Sizes an op rejects are a
        ValueError that names the op and its model line."""
        fn = self.graph_functions.get(name)
        if fn is not None:
            try:
                shapes = concrete_output_shapes(fn, [a.shape for a in arrays])
            except IRError as err:    # an op's rule rejects these sizes: name it
                raise ValueError(f"{fn_name}: {err}") from None
            if shapes is not None and len(shapes) == len(e.outputs):
                return [tuple(s) for s in shapes]
        bound = bind_dims(e.inputs, arrays)
        return [e.output_shape(k, bound, fn_name) for k in range(len(e.outputs))]

    def prepare(self, name: str, model_name: str, given: dict) -> tuple:
        """(entry, "model.fn", the checked inputs, output arrays) of a call of `name`: new
        ones, or the last call's large ones nobody holds any more (`OutputArrays`).

        Inputs of a signature seen before (`_signature`) take a short path: what checking
        them, making them contiguous and deriving the outputs' shapes would give depends on
        nothing else, so it is looked up. A training step at batch 100 spent 2.4 us in
        `check_inputs` alone; the whole of this 0.6."""
        e = self.entries[name]
        fn_name = f"{model_name}.{name}"
        sig, given_arrays = _signature(name, e.inputs, given)
        known = self._signatures.get(sig) if sig is not None else None
        if known is not None:
            arrays = given_arrays
            get = self._outputs.get
            outs = [np.empty(shape, dtype) if small else get(key, shape, dtype)
                    for key, shape, dtype, small in known]
            return e, fn_name, arrays, outs
        checked = check_inputs(e.inputs, given, fn_name)
        arrays = [contiguous(a) for a in checked]
        shapes = self._output_shapes(name, e, arrays, fn_name)
        outs = [self._outputs.get((name, i), shape, dtype)
                for i, (shape, dtype) in enumerate(zip(shapes, e.output_dtypes))]
        # the arrays as given served: their signature stands for these checks and shapes
        if sig is not None and all(a is g for a, g in zip(arrays, given_arrays)):
            if len(self._signatures) >= _SHAPE_CACHE_LIMIT:
                self._signatures.clear()
            self._signatures[sig] = [
                ((name, i), shape, dtype, math.prod(shape) * dtype.itemsize < MIN_BYTES)
                for i, (shape, dtype) in enumerate(zip(shapes, e.output_dtypes))]
        return e, fn_name, arrays, outs

    def run(self, name: str, model_name: str, given: dict, store: dict) -> dict:
        """Call entry `name` with the inputs `given` (name -> array) and the variables in
        `store`; a dict from output name to array.

        First through the entry's compiled model call (`JitFunction.model_call`), which
        takes the inputs of the sizes a checked call recorded and does the rest in compiled
        code; where it calls nothing (other sizes, another dtype, a layout it does not take,
        no record yet), the checked path: `prepare` checks or converts the inputs and sizes
        the outputs, and the call records its sizes for the next one. Only calls whose
        outputs are all small are recorded: large ones come from `OutputArrays`, whose warm
        pages matter more than the microseconds. After a kernel has streamed its data through
        the caches, each Python bytecode of a call's set-up costs more: the logistic
        regression step (batch 100, 1 thread) spent 8.5 us in the Python path this replaced
        around 32 us of compiled code, 3 us in a loop that called nothing."""
        call = self._calls.get(name)
        if call is not None:
            try:
                status = self._local.status
            except AttributeError:
                status = self._status()
            out = call(given, store, status)
            if out.__class__ is dict:
                return out
            from irkit.backends.llvm_abi import CALL_ERROR      # loaded: it made `call`
            if out is CALL_ERROR:
                self._raise_status(self.entries[name], status, f"{model_name}.{name}")
        e, fn_name, arrays, outs = self.prepare(name, model_name, given)
        status = self._status() if e.has_status else None
        sources = (arrays, outs, store, (status,))
        fn = self.function(name)
        fn(*[sources[where][key] for where, key in e.slots])
        self._raise_status(e, status, fn_name)
        if name in self._calls and all(o.nbytes < MIN_BYTES for o in outs):
            fn.record([sources[where][key].shape for where, key in e.slots if where < 2])
        return dict(zip(e.output_names, outs))

    def _raise_status(self, e: "Entry", status, fn_name: str) -> None:
        """The run-time error a call left in its `status` buffer, if any (cleared)."""
        if status is not None and status[0]:
            try:
                raise e.run_time_error(status, fn_name,
                                       lookup_symbol_in((e.bodies or self._bodies).op, e.name))
            finally:
                status[:] = 0

    def _status(self) -> np.ndarray:
        """This thread's status buffer: all zeros, as every call must find it (a call that
        reports an error leaves it set; `run` clears it then). One per thread, passed call
        after call, so that its descriptor is kept (`keep_descriptors`)."""
        status = getattr(self._local, "status", None)
        if status is None:
            status = self._local.status = np.zeros(3, np.int64)
        return status


def _signature(name: str, specs: list, given: dict) -> tuple[tuple | None, list]:
    """(what a call's checks and output shapes depend on, the given inputs in declaration
    order): the entry and, per input, the given object's type, dtype, shape and strides
    (contiguity follows from them); (None, []) when an input is missing, unknown or not
    array-like (the full check then says why)."""
    if len(given) != len(specs):
        return None, []
    try:
        arrays = [given[s.name] for s in specs]
        return (name, *[(type(a), a.dtype, a.shape, a.strides) for a in arrays]), arrays
    except (KeyError, AttributeError):
        return None, []


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
