"""Compiled models: the graph module lowered to loops, compiled by the LLVM backend, and run
from Python (`engine="jit"`, in process); `irkit.library` exports the same as a shared library
with a C header.

    lowered = lower_model(model_module)          # loop/memory IR, self-describing (below)
    runner = CompiledRunner.jit(lowered)         # MCJIT

The lowered module describes its own calling convention (docs/lowering.md): a function's
arguments are its inputs (`graph.name`, `graph.dims`), its outputs (`graph.output = k`) and the
variables it touches (`graph.variable = "w"`); the module attribute `graph.variables` lists the
variables with their initializers. This module adds one thing the runtime needs: a
`graph.dims` attribute on each output argument, the output's shape in terms of the inputs'
symbolic dims (`["N", 10]`), derived from the graph function by `output_dims` (the graph
ops' own shape functions, `infer`, run on symbolic dims); the C header documents it. To
allocate outputs, the runtime runs the same shape functions on the inputs' actual sizes over
the graph function (`concrete_output_shapes`, cached per input shapes: exact also where the
symbolic pass gives up, as for `x[:, 0]` of a `?` axis), falling back to `graph.dims` when
it has no graph function. An output whose shape neither derives is a clear ValueError.
Both passes carry the size a `graph.dim` reads to the ops that take it as an operand
(`TensorSpec.value`), so `broadcast_to(b, [N, 2])` is `[N, 2]`. Sizes an op's shape function
rejects on the call (an uneven `split`) are a ValueError located at that op, before the call;
so is an output whose size depends on which branch runs, the one kind of output compiled
code, whose outputs are allocated before the call, cannot return.

Run-time errors. A function that checks something the interpreter would raise on (an index
out of range, a size that does not divide) has a last argument marked `graph.status`: the
runner passes three zeroed i64s, and when the call leaves a nonzero code in the first, the
`memory.check` of that code in the function says what failed and where, and the call raises
`ValueError("model.fn: file:line:col: error: 'graph.op' failed: ...")` with the model's
source line and a caret, as the interpreter's `InterpreterError` reads.
"""

from __future__ import annotations


import numpy as np

from irkit.ir import Operation
from irkit.model import DERIVATIVES_PIPELINE as DEV_DERIVATIVES_PIPELINE, has_derivatives

#: the passes between the graph module and the loop/memory module. First switch/merge are
#: raised to `graph.if`, the only conditional with a loop form, and then derivatives are
#: expanded (dev mode's pipeline): the backward graph of a `graph.if` is `graph.if`s, while
#: that of switch/merge joins values across branches and cannot be raised afterwards.
DERIVATIVES_PIPELINE = f"graph-raise-control-flow,{DEV_DERIVATIVES_PIPELINE}"
#: then lowered and tidied (raising again for a module without derivatives)
#: (with each function's `<name>_output_sizes`, which libraries export for C callers)
LOWERING_PIPELINE = ("graph-raise-control-flow,lower-graph-to-loop{output-sizes=true},"
                     "canonicalize,cse")
#: then each function's temporaries placed in one arena (`--emit=memory` and what is compiled)
PLANNING_PIPELINE = "plan-memory,canonicalize,cse"


# ---------------------------------------------------------------------------------------------
# Output shapes
# ---------------------------------------------------------------------------------------------


def _infer_results(op: Operation, spec) -> list | None:
    """The result specs of `op` by the graph op's own shape function (`infer`) on its
    operands' specs (`spec(v)`: dims as ints or symbols, and what a size operand holds where
    known), or None where there is none to run: not a graph op, an operand that is not a
    ranked tensor, or a rule that cannot compute on these dims (one written for static
    sizes). A ShapeError, the dims breaking the op's rule, propagates: on concrete sizes it
    is the error the op would raise at run time."""
    from irkit.dialects.graph import ShapeError
    from irkit.types import RankedTensorType
    infer = getattr(type(op), "infer", None)
    if infer is None or not hasattr(op, "props") \
            or not all(isinstance(v.type, RankedTensorType) for v in op.operands):
        return None
    try:
        return list(infer([spec(v) for v in op.operands], op.props()))
    except ShapeError:
        raise
    except Exception:           # a rule that cannot compute on these dims: no answer
        return None


def _dims_of(spec) -> tuple:
    """A result spec's dims as ints and symbols, None where unknown."""
    return tuple(int(d) if isinstance(d, (int, np.integer)) else d if isinstance(d, str)
                 else None for d in spec.shape)


def _joined(shapes: list) -> tuple:
    """The dims several shapes of one value (a conditional's alternatives) agree on; unknown
    (None) where they differ."""
    return tuple(d if all(s[k] == d for s in shapes) else None
                 for k, d in enumerate(shapes[0]))


def _walk_shapes(block, env: dict, step) -> list | None:
    """The dims of what `block`'s terminator returns or yields, after `step(op)` has filled
    `env` for each op before it. An op with regions (`graph.if`) gets, per result, the dims
    its branches yield where they agree (unknown, `?`, where they do not); None if `step`
    gives up (returns False)."""
    from irkit.types import RankedTensorType
    for op in block.ops:
        if op.name in ("func.return", "return", "graph.yield"):
            return [env.get(v, tuple(v.type.shape)) if isinstance(v.type, RankedTensorType)
                    else () for v in op.operands]
        if op.regions:
            branches = [_walk_shapes(r.blocks[0], env, step) for r in op.regions if r.blocks]
            if any(b is None for b in branches):
                return None
            for r in op.results:
                if isinstance(r.type, RankedTensorType):
                    env[r] = _joined([b[r.index] for b in branches])
            continue
        if step(op) is False:
            return None
    return None


def _conditions(op: Operation, cond: dict) -> frozenset:
    """The switch outputs that must be live for `op` to run, recorded in `cond` for its
    results: a `graph.switch` result adds itself; a `graph.merge` runs when any input is
    live, so it keeps only the conditions all its inputs share."""
    from irkit.dialects.graph_control import MergeOp, SwitchOp
    sets = [cond.get(v, frozenset()) for v in op.operands]
    if isinstance(op, MergeOp):
        need = frozenset.intersection(*sets) if sets else frozenset()
    else:
        need = frozenset().union(*sets)
    for r in op.results:
        cond[r] = need | {r} if isinstance(op, SwitchOp) else need
    return need


def concrete_output_shapes(fn: Operation, shapes: list[tuple]) -> list[tuple] | None:
    """The results' shapes of graph function `fn` for inputs of these concrete shapes, by
    running every op's shape function on ints (exact where the symbolic pass is not:
    `x[:, 0]` of a `?` axis, reshape with -1). None if some op has no shape function, or
    the branches of a conditional may give different sizes.

    Sizes an op's rule rejects (an uneven `split`, a `reshape` whose element count does not
    fit) raise an IRError located at that op, worded as the interpreter's error, unless the
    op may not run (it sits in a `graph.if` branch or after a `graph.switch`): there the
    sizes are left unknown, and the run-time checks of the compiled code have the word."""
    from irkit.diagnostics import IRError
    from irkit.dialects.graph import ShapeError, TensorSpec
    from irkit.dialects.graph_control import MergeOp
    from irkit.types import RankedTensorType
    block = fn.regions[0].blocks[0]
    env = {a: tuple(s) for a, s in zip(block.args, shapes)}
    values: dict = {}           # 0-d integer value -> the size it holds (`graph.dim`)
    cond: dict = {}             # value -> the switch outputs it needs live
    ragged: dict = {}           # merge result -> (merge, its inputs' differing sizes)

    def spec(v):
        return TensorSpec(env[v] if v in env else tuple(v.type.shape), v.type.element,
                          values.get(v))

    def step(op) -> bool:
        may_not_run = bool(_conditions(op, cond)) or op.parent_op is not fn
        tensors = [r for r in op.results if isinstance(r.type, RankedTensorType)]
        unknown = any(None in r.type.shape for r in tensors)
        if isinstance(op, MergeOp):         # the live input's sizes: those all inputs share
            alts = [spec(v).shape for v in op.operands]
            env[op.results[0]] = _joined(alts)
            if None in env[op.results[0]] and all(None not in s for s in alts):
                ragged[op.results[0]] = (op, alts)
            return True
        if not unknown and not any(r.type.rank == 0 for r in tensors):
            return True                     # static, and not a size another op reads
        try:
            inferred = _infer_results(op, spec)
        except ShapeError as e:
            if not may_not_run:
                raise IRError(f"'{op.name}' failed: {e}", op.location) from None
            inferred = []                   # sizes of a branch that may not be taken
        if inferred is None or len(inferred) != len(op.results):
            if unknown and not may_not_run:
                return False
            inferred = [TensorSpec(r.type.shape, r.type.element) for r in op.results]
        for r in tensors:
            got = inferred[r.index]
            env[r] = tuple(t if t is not None else d
                           for t, d in zip(r.type.shape, _dims_of(got)))
            if got.value is not None:
                values[r] = got.value
        return True

    out = _walk_shapes(block, env, step)
    if out is None or not all(all(isinstance(d, int) for d in s) for s in out):
        _check_ragged(fn, ragged)
        return None
    return [tuple(s) for s in out]


def _check_ragged(fn: Operation, ragged: dict) -> None:
    """Raise, located at the conditional, if a result of graph function `fn` is a merge
    whose inputs have different sizes on these inputs: its size depends on which branch
    runs, which compiled code, whose outputs the caller allocates before the call, cannot
    return."""
    from irkit.diagnostics import IRError
    ret = fn.regions[0].blocks[0].last
    attrs = fn.properties.get("res_attrs")
    for k, v in enumerate(ret.operands if ret is not None else ()):
        if v in ragged:
            d = attrs[k].value if attrs is not None else {}
            name = d["graph.name"].value if "graph.name" in d else f"result{k}"
            op, shapes = ragged[v]
            sizes = " or ".join(dict.fromkeys(str(list(s)) for s in shapes))
            raise IRError(f"output {name!r} has shape {sizes} depending on which branch of "
                          "this conditional runs; compiled code allocates its outputs before "
                          "the call and cannot return it (the interpreter can)", op.location)


def output_dims(fn: Operation) -> list[list | None]:
    """Per result of a graph function: its shape as ints and input symbols, or None where
    some dim cannot be derived (the op's rule is unknown here, or two symbols meet)."""
    from irkit.attributes import IntegerAttr, StringAttr
    from irkit.dialects.graph import ShapeError, TensorSpec
    from irkit.types import RankedTensorType
    env: dict = {}
    values: dict = {}           # 0-d integer value -> the dim it holds (`graph.dim`)
    attrs = fn.properties.get("arg_attrs")
    block = fn.regions[0].blocks[0]
    for i, a in enumerate(block.args):
        d = attrs[i].value if attrs is not None else {}
        if "graph.dims" in d:
            env[a] = tuple(x.value if isinstance(x, (IntegerAttr, StringAttr)) else None
                           for x in d["graph.dims"])

    def spec(v) -> TensorSpec:
        shape = env[v] if v in env else tuple(v.type.shape)
        return TensorSpec(shape, v.type.element, values.get(v))

    def step(op) -> bool:
        try:
            inferred = _infer_results(op, spec)
        except ShapeError:      # symbols the rule cannot relate: the types' dims stand
            inferred = None
        if inferred is not None and len(inferred) != len(op.results):
            inferred = None
        for r in op.results:
            if not isinstance(r.type, RankedTensorType):
                continue
            shape = list(r.type.shape)
            cand = _dims_of(inferred[r.index]) if inferred else None
            if cand is not None and len(cand) == len(shape):
                shape = [d if d is not None else c for d, c in zip(shape, cand)]
            if inferred and inferred[r.index].value is not None:
                values[r] = inferred[r.index].value
            env[r] = tuple(shape)
        return True

    out = _walk_shapes(block, env, step) or []
    return [list(d) if all(x is not None for x in d) else None for d in out]


# ---------------------------------------------------------------------------------------------
# Lowering
# ---------------------------------------------------------------------------------------------


def lower_model_with_graph(module: Operation, pm=None) -> tuple[Operation, Operation]:
    """(graph module, lowered module): copies of one model's module (the caller's is left as
    it is), the first with its derivatives expanded, the second also lowered by
    `lower-graph-to-loop` and tidied, with `graph.dims` on every output argument whose shape
    `output_dims` derives. `pm` replaces the default pass manager (instrumentation)."""
    from irkit.attributes import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr
    from irkit.pass_manager import PassManager
    module = module.clone()
    if has_derivatives(module):
        PassManager.parse(DERIVATIVES_PIPELINE).run(module)
    graph = module.clone()
    shapes = {fn.properties["sym_name"].value: output_dims(fn)
              for fn in module.regions[0].blocks[0].ops if fn.name == "func.func"
              and fn.regions[0].blocks}
    (pm or PassManager.parse(f"{LOWERING_PIPELINE},{PLANNING_PIPELINE}")).run(module)
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
                        StringAttr(x) if isinstance(x, str) else IntegerAttr(x, _i64())
                        for x in dims])
            new.append(DictionaryAttr(d))
        fn.properties["arg_attrs"] = ArrayAttr(new)
    return graph, module


def lower_model(module: Operation, pm=None) -> Operation:
    """The lowered module of `lower_model_with_graph`."""
    return lower_model_with_graph(module, pm)[1]


def _i64():
    from irkit.types import IntegerType
    return IntegerType(64)


# ---------------------------------------------------------------------------------------------
# Entry points of a lowered module
# ---------------------------------------------------------------------------------------------


class Entry:
    """One lowered function's calling convention, read from its argument attributes."""

    def __init__(self, fn: Operation, symbol: str | None = None) -> None:
        from irkit.attributes import IntegerAttr, StringAttr, numpy_dtype
        from irkit.model import InputSpec
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
        from irkit.diagnostics import Diagnostic
        from irkit.dialects.memory_access import CheckOp
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


def bind_dims(specs, arrays) -> dict:
    """symbol -> size, from checked inputs (check_inputs made them consistent)."""
    bound = {}
    for s, a in zip(specs, arrays):
        for d, n in zip(s.dims, a.shape):
            if isinstance(d, str) and d != "?":
                bound.setdefault(d, n)
    return bound


def variable_specs(module: Operation) -> list[tuple[str, tuple, np.dtype, np.ndarray]]:
    """(name, shape, dtype, initial value) per entry of the module's `graph.variables`."""
    from irkit.attributes import numpy_dtype
    from irkit.dialects.graph import initial_value
    attr = module.attributes.get("graph.variables")
    out = []
    for entry in (attr.value if attr is not None else []):
        d = entry.value
        t = d["type"].value
        args = {k: v.value for k, v in d["init_args"].value.items()} if "init_args" in d else {}
        dtype = np.dtype(numpy_dtype(t.element))
        out.append((d["name"].value, tuple(t.shape), dtype,
                    initial_value(d["initializer"].value, args, tuple(t.shape), dtype)))
    return out


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
        from irkit.diagnostics import IRError
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
        from irkit.model import check_inputs
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
    import os
    from irkit.diagnostics import SOURCES, IRError, resolve_file_line_col
    from irkit.source_files import read_source
    flc = resolve_file_line_col(location)
    if flc is None or SOURCES.text(flc[0]) is not None or not os.path.isfile(flc[0]):
        return
    try:
        SOURCES.add(flc[0], read_source(flc[0]))
    except (OSError, IRError):      # unreadable, or not UTF-8: the message goes without it
        pass


def contiguous(a: np.ndarray) -> np.ndarray:
    """`a`, or a row-major copy of it (np.ascontiguousarray would make a 0-d array 1-d)."""
    return a if a.flags.c_contiguous else np.array(a, order="C")


def _storage(t) -> np.dtype:
    from irkit.attributes import numpy_dtype
    return np.dtype(numpy_dtype(t.element))
