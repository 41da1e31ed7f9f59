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
LOWERING_PIPELINE = "graph-raise-control-flow,lower-graph-to-loop,canonicalize,cse"
#: then each function's temporaries placed in one arena (`--emit=memory` and what is compiled)
PLANNING_PIPELINE = "plan-memory,canonicalize,cse"


# ---------------------------------------------------------------------------------------------
# Output shapes
# ---------------------------------------------------------------------------------------------


def _infer_symbolic(op: Operation, dims) -> dict | None:
    """result index -> symbolic shape, by the graph op's own shape function (`infer`, which
    computes with the DSL's symbolic dims), or None where the op has none or it fails."""
    infer = getattr(type(op), "infer", None)
    if infer is None or not hasattr(op, "props"):
        return None
    from irkit.types import RankedTensorType
    try:
        from irkit.dialects.graph import TensorSpec
        specs = [TensorSpec(tuple(dims(v)), v.type.element) for v in op.operands
                 if isinstance(v.type, RankedTensorType)]
        if len(specs) != len(op.operands):
            return None
        out = infer(specs, op.props())
    except Exception:           # no shape function, or one that needs static sizes
        return None
    return {i: [d if isinstance(d, (int, str)) else None for d in spec.shape]
            for i, spec in enumerate(out)}


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
                    yielded = [b[r.index] for b in branches]
                    env[r] = tuple(d if all(y[k] == d for y in yielded) else None
                                   for k, d in enumerate(yielded[0]))
            continue
        if step(op) is False:
            return None
    return None


def concrete_output_shapes(fn: Operation, shapes: list[tuple]) -> list[tuple] | None:
    """The results' shapes of graph function `fn` for inputs of these concrete shapes, by
    running every op's shape function on ints (exact where the symbolic pass is not:
    `x[:, 0]` of a `?` axis, reshape with -1). None if some op has no shape function, or
    the branches of a conditional may give different sizes."""
    from irkit.types import RankedTensorType
    block = fn.regions[0].blocks[0]
    env = {a: tuple(s) for a, s in zip(block.args, shapes)}

    def dims(v):
        return env[v] if v in env else tuple(v.type.shape)

    def step(op) -> bool:
        tensors = [r for r in op.results if isinstance(r.type, RankedTensorType)]
        if not tensors or all(all(d is not None for d in r.type.shape) for r in tensors):
            return True
        inferred = _infer_symbolic(op, dims)
        if inferred is None:
            return False
        for r in tensors:
            env[r] = tuple(inferred.get(r.index, r.type.shape))
        return True

    out = _walk_shapes(block, env, step)
    if out is None or not all(all(isinstance(d, int) for d in s) for s in out):
        return None
    return [tuple(s) for s in out]


def output_dims(fn: Operation) -> list[list | None]:
    """Per result of a graph function: its shape as ints and input symbols, or None where
    some dim cannot be derived (the op's rule is unknown here, or two symbols meet)."""
    from irkit.attributes import IntegerAttr, StringAttr
    from irkit.types import RankedTensorType
    env: dict = {}
    attrs = fn.properties.get("arg_attrs")
    block = fn.regions[0].blocks[0]
    for i, a in enumerate(block.args):
        d = attrs[i].value if attrs is not None else {}
        if "graph.dims" in d:
            env[a] = tuple(x.value if isinstance(x, (IntegerAttr, StringAttr)) else None
                           for x in d["graph.dims"])

    def dims(v) -> tuple:
        if v in env:
            return env[v]
        return tuple(v.type.shape) if isinstance(v.type, RankedTensorType) else ()

    def step(op) -> bool:
        inferred = _infer_symbolic(op, dims)
        for r in op.results:
            if not isinstance(r.type, RankedTensorType):
                continue
            shape = list(r.type.shape)
            if any(d is None for d in shape):
                cand = inferred.get(r.index) if inferred else None
                if cand is not None and len(cand) == len(shape):
                    shape = [d if d is not None else c for d, c in zip(shape, cand)]
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
        self.order: list = []             # ("in", i) / ("out", k) / ("var", name)
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
            if fn.name == "func.func" and fn.regions[0].blocks:
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
        (exact, cached per input shapes), else the outputs' symbolic `graph.dims`."""
        fn = self.graph_functions.get(name)
        if fn is not None:
            key = (name, tuple(a.shape for a in arrays))
            if key not in self._shape_cache:
                self._shape_cache[key] = concrete_output_shapes(fn, [a.shape for a in arrays])
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
        args = []
        for kind, key in e.order:
            if kind == "in":
                args.append(arrays[key])
            elif kind == "out":
                args.append(outs[key])
            else:
                args.append(store[key])
        self.functions[name](*args)
        return dict(zip(e.output_names, outs))


def contiguous(a: np.ndarray) -> np.ndarray:
    """`a`, or a row-major copy of it (np.ascontiguousarray would make a 0-d array 1-d)."""
    return a if a.flags.c_contiguous else np.array(a, order="C")


def _storage(t) -> np.dtype:
    from irkit.attributes import numpy_dtype
    return np.dtype(numpy_dtype(t.element))
