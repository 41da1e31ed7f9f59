"""linalg-fuse-elementwise-ops preserves meaning: random programs lowered to linalg give the
same interpreter results before and after the pass, and the same results compiled with it.

The programs are `graph_programs()` of test_lower_graph_programs.py (elementwise chains with
broadcasting, reductions, softmax and log_softmax, matmuls, transposes, reshapes, argmax,
casts, `?` sizes, a second output that later ops also use) and the DSL's random models,
half of them with a conditional output (ops to fuse inside `graph.if` regions), lowered to
linalg without the fusion passes of the `linalg` row. Interpreted, the fused module must
agree bit for bit (NaN where NaN): fusion copies every body op with its types, so a
widening `extf` and its `truncf` stay where they were and the same scalars are computed,
only no longer stored in between. Compiled (lowered to linalg, this pass alone, then the
rows after `linalg`: bufferize, lower-linalg-to-loop, plan-memory; the LLVM backend), they
match the graph interpreter to the rounding the lowering allows (as in
test_compiled_programs.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings, strategies as st

from irkit.backends.llvm_cpu import compile_module
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.passes.linalg_fuse_elementwise import LinalgFuseElementwiseOps
from irkit.symbols import lookup_symbol_in

from test_compiled_programs import compile_and_compare  # noqa: E402  (tests/property)
from test_lower_graph_programs import (  # noqa: E402  (tests/property on sys.path)
    dsl_case, graph_programs)
from output_buffers import garbage_like

#: graph to linalg without the fusion passes the `linalg` row runs after the lowering
_LOWER = "lower-graph-to-linalg{full=true},canonicalize,cse"
_FUSE = "linalg-fuse-elementwise-ops,canonicalize,cse"


def _run(module, fn: str, args) -> list:
    with np.errstate(all="ignore"):
        return [np.asarray(v) for v in
                Interpreter(module).call(lookup_symbol_in(module, fn), list(args))]


def _to_linalg(module):
    linalg = parse_module(str(module))
    PassManager.parse(f"{pipeline.passes_between(None, 'autodiff')},{_LOWER}").run(linalg)
    return linalg


def _fused_equals_unfused(module, fn: str, args) -> None:
    linalg = _to_linalg(module)
    want = _run(linalg, fn, args)
    fuse = LinalgFuseElementwiseOps()
    PassManager().add(fuse).run(linalg)
    linalg.verify()
    event(f"fusions: {min(fuse.fusions, 3)}{'+' if fuse.fusions > 3 else ''}")
    got = _run(linalg, fn, args)
    text = str(linalg)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, text
        np.testing.assert_array_equal(g, w, err_msg=text)


def _compiled_equals_interpreted(module, fn: str, args) -> None:
    compile_and_compare(module, fn, args, ",".join([
        pipeline.passes_between(None, "autodiff"), _LOWER, _FUSE,
        pipeline.passes_between("linalg", pipeline.compiled_stage())]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_fused_graph_programs_interpret_as_before(case):
    module, args = case
    _fused_equals_unfused(module, "f", args)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fused_dsl_programs_interpret_as_before(data):
    module, args = dsl_case(data)
    _fused_equals_unfused(module, "forward", args)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph_programs())
def test_fused_graph_programs_compile_to_the_interpreters_results(case):
    module, args = case
    _compiled_equals_interpreted(module, "f", args)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fused_dsl_programs_compile_to_the_interpreters_results(data):
    module, args = dsl_case(data)
    _compiled_equals_interpreted(module, "forward", args)


# ---------------------------------------------------------------------------------------------
# Random linalg programs: what lowering from graph does not write
# ---------------------------------------------------------------------------------------------

#: the sizes of the axes a generated tensor may have (each at most once, in any order)
_SIZES = (2, 3, 4)
_BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.maximumf")
_UNARY = ("math.tanh", "math.exp", "arith.negf")


def _tensor(axes) -> str:
    return f"tensor<{''.join(f'{_SIZES[a]}x' for a in axes)}f32>"


def _affine(loops, axes) -> str:
    dims = ", ".join(f"d{i}" for i in range(len(loops)))
    return f"affine_map<({dims}) -> ({', '.join(f'd{loops.index(a)}' for a in axes)})>"


@st.composite
def _axes(draw, among=(0, 1, 2), min_size=0):
    return tuple(draw(st.permutations(among))[:draw(st.integers(min_size, len(among)))])


@st.composite
def _generic(draw, name: str, values: list, lines: list) -> tuple:
    """One `linalg.generic` reading earlier values: loops over the first input's axes and
    maybe more (in any order), other inputs through projected permutations, reduction loops
    among the first input's axes, the output written through a permutation of the parallel
    loops; a random elementwise body, maybe reading a loop index. Returns (name, axes)."""
    first = values[-1] if draw(st.booleans()) else draw(st.sampled_from(values))
    extra = draw(_axes(tuple(a for a in range(3) if a not in first[1])))
    loops = tuple(draw(st.permutations(first[1] + extra)))
    others = [v for v in values if set(v[1]) <= set(loops)]
    inputs = [first] + draw(st.lists(st.sampled_from(others), max_size=2))
    reduced = set(draw(_axes(first[1]))) if draw(st.integers(0, 2)) == 0 else set()
    out = tuple(draw(st.permutations([a for a in loops if a not in reduced])))
    n = len(inputs)
    body = [f"%v0 = {draw(st.sampled_from(_UNARY))} %x0 : f32"]
    for i in range(1, n):
        body.append(f"%v{i} = {draw(st.sampled_from(_BINARY))} %v{i - 1}, %x{i} : f32")
    value = f"%v{n - 1}"
    if loops and draw(st.booleans()):
        body += [f"%i = linalg.index {draw(st.integers(0, len(loops) - 1))} : index",
                 "%j = arith.index_cast %i : index to i64", "%k = arith.sitofp %j : i64 to f32",
                 f"%w = arith.addf {value}, %k : f32"]
        value = "%w"
    init = f"{name}_init"
    lines.append(f"{init} = tensor.empty() : {_tensor(out)}")
    if reduced:
        lines.append(f"{init}_0 = linalg.fill ins(%zero : f32) outs({init} : {_tensor(out)})"
                     f" -> {_tensor(out)}")
        init = f"{init}_0"
        body.append(f"%r = {draw(st.sampled_from(('arith.addf', 'arith.maximumf')))} %acc, "
                    f"{value} : f32")
        value = "%r"
    maps = ", ".join(_affine(loops, v[1]) for v in inputs + [(None, out)])
    iterators = ", ".join('"reduction"' if a in reduced else '"parallel"' for a in loops)
    args = ", ".join([f"%x{i}: f32" for i in range(n)] + ["%acc: f32"])
    lines.append(
        f"{name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}}"
        f" ins({', '.join(v[0] for v in inputs)} : {', '.join(_tensor(v[1]) for v in inputs)})"
        f" outs({init} : {_tensor(out)}) {{\n^bb0({args}):\n  " + "\n  ".join(body)
        + f"\n  linalg.yield {value} : f32\n}} -> {_tensor(out)}")
    return name, out


@st.composite
def linalg_programs(draw):
    """(module text, input arrays): `@f`, a few generics over tensors of axes of sizes 2, 3
    and 4, returning the last one and maybe an earlier one (a producer with two users)."""
    args = [(f"%a{i}", draw(_axes(min_size=1))) for i in range(draw(st.integers(1, 3)))]
    values, lines = list(args), ["%zero = arith.constant 0.0 : f32"]
    for k in range(draw(st.integers(2, 5))):
        values.append(draw(_generic(f"%g{k}", values, lines)))
    results = [values[-1]]
    made = values[len(args):-1]
    if made and draw(st.booleans()):
        results.append(draw(st.sampled_from(made)))
    params = ", ".join(f"{v}: {_tensor(a)}" for v, a in args)
    types = ", ".join(_tensor(a) for _, a in results)
    text = (f"func.func @f({params}) -> ({types}) {{\n" + "\n".join(lines)
            + f"\nreturn {', '.join(v for v, _ in results)} : {types}\n}}\n")
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return text, [rng.normal(size=[_SIZES[x] for x in a]).astype(np.float32) for _, a in args]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linalg_programs())
def test_fused_linalg_programs_interpret_as_before(case):
    text, args = case
    module = parse_module(text)
    module.verify()
    want = _run(module, "f", args)
    fuse = LinalgFuseElementwiseOps()
    PassManager().add(fuse).run(module)
    module.verify()
    event(f"fusions: {min(fuse.fusions, 3)}{'+' if fuse.fusions > 3 else ''}")
    for g, w in zip(_run(module, "f", args), want):
        np.testing.assert_array_equal(g, w, err_msg=f"{text}\n{module}")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(linalg_programs())
def test_fused_linalg_programs_compile_to_the_interpreters_results(case):
    text, args = case
    module = parse_module(text)
    want = _run(module, "f", args)
    PassManager.parse(f"{_FUSE},{pipeline.passes_between('linalg', 'memory')}").run(module)
    jit = compile_module(module)
    outs = [garbage_like(w) for w in want]
    with np.errstate(all="ignore"):
        jit["f"](*args, *outs)
    for g, w in zip(outs, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=text)
