"""Symbolic shapes: the output shapes of a compiled model's functions, from the graph ops'
own shape functions (`infer`).

A lowered function's outputs are buffers the caller allocates before the call, so their
shapes must be known from the inputs' alone. `output_dims` runs the shape functions of a
graph function on symbolic dims (`["N", 10]`): what the lowered module records as each
output argument's `graph.dims`, and what the C header documents. `concrete_output_shapes`
runs them on the inputs' actual sizes, exact also where the symbolic pass gives up (`x[:, 0]`
of a `?` axis); the runtime caches it per input shapes. Both carry the size a `graph.dim`
reads to the ops that take it as an operand (`TensorSpec.value`), so `broadcast_to(b, [N, 2])`
is `[N, 2]`. Sizes an op's shape function rejects on the call (an uneven `split`) are an
error located at that op, before the call; so is an output whose size depends on which branch
runs, the one kind of output compiled code cannot return.
"""

from __future__ import annotations

import numpy as np

from irkit.attributes import IntegerAttr, StringAttr
from irkit.diagnostics import IRError
from irkit.dialects.graph import MergeOp, ShapeError, SwitchOp, TensorSpec
from irkit.ir import Operation
from irkit.types import RankedTensorType


def _infer_results(op: Operation, spec) -> list | None:
    """The result specs of `op` by the graph op's own shape function (`infer`) on its
    operands' specs (`spec(v)`: dims as ints or symbols, and what a size operand holds where
    known), or None where there is none to run: not a graph op, an operand that is not a
    ranked tensor, or a rule that cannot compute on these dims (one written for static
    sizes). A ShapeError, the dims breaking the op's rule, propagates: on concrete sizes it
    is the error the op would raise at run time."""
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


def _walk_shapes(block, env: dict, step, ragged: dict | None = None) -> list | None:
    """The dims of what `block`'s terminator returns or yields, after `step(op)` has filled
    `env` for each op before it. An op with regions (`graph.if`) gets, per result, the dims
    its branches yield where they agree (unknown, `?`, where they do not); a result whose
    branches yield different known sizes is recorded in `ragged` (result -> (op, the
    branches' sizes)) when given. None if `step` gives up (returns False)."""
    for op in block.ops:
        if op.name in ("func.return", "return", "graph.yield"):
            return [env.get(v, tuple(v.type.shape)) if isinstance(v.type, RankedTensorType)
                    else () for v in op.operands]
        if op.regions:
            branches = [_walk_shapes(r.blocks[0], env, step, ragged)
                        for r in op.regions if r.blocks]
            if any(b is None for b in branches):
                return None
            for r in op.results:
                if isinstance(r.type, RankedTensorType):
                    alts = [b[r.index] for b in branches]
                    env[r] = _joined(alts)
                    if ragged is not None and None in env[r] \
                            and all(None not in a for a in alts):
                        ragged[r] = (op, alts)
            continue
        if step(op) is False:
            return None
    return None


def _conditions(op: Operation, cond: dict) -> frozenset:
    """The switch outputs that must be live for `op` to run, recorded in `cond` for its
    results: a `graph.switch` result adds itself; a `graph.merge` runs when any input is
    live, so it keeps only the conditions all its inputs share."""
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
    block = fn.regions[0].blocks[0]
    env = {a: tuple(s) for a, s in zip(block.args, shapes)}
    values: dict = {}           # 0-d integer value -> the size it holds (`graph.dim`)
    cond: dict = {}             # value -> the switch outputs it needs live
    ragged: dict = {}           # merge or if result -> (op, its inputs' differing sizes)

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

    out = _walk_shapes(block, env, step, ragged)
    if out is None or not all(all(isinstance(d, int) for d in s) for s in out):
        _check_ragged(fn, ragged)
        return None
    return [tuple(s) for s in out]


def _check_ragged(fn: Operation, ragged: dict) -> None:
    """Raise, located at the conditional, if a result of graph function `fn` is a merge
    whose inputs have different sizes on these inputs: its size depends on which branch
    runs, which compiled code, whose outputs the caller allocates before the call, cannot
    return."""
    ret = fn.regions[0].blocks[0].last
    attrs = fn.properties.get("res_attrs")
    for k, v in enumerate(ret.operands if ret is not None else ()):
        if v in ragged:
            d = attrs[k].value if attrs is not None else {}
            name = d["graph.name"].value if "graph.name" in d else f"result{k}"
            op, shapes = ragged[v]
            sizes = " or ".join(dict.fromkeys(str(list(s)) for s in sorted(shapes)))
            raise IRError(f"output {name!r} has shape {sizes} depending on which branch of "
                          "this conditional runs; compiled code allocates its outputs before "
                          "the call and cannot return it (the interpreter can)", op.location)


def output_dims(fn: Operation) -> list[list | None]:
    """Per result of a graph function: its shape as ints and input symbols, or None where
    some dim cannot be derived (the op's rule is unknown here, or two symbols meet)."""
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
