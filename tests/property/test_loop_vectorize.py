"""loop-vectorize preserves meaning: random graph programs lowered to loops, run by the
interpreter before and after the pass, agree; compiled, the vectorized loops agree with the
interpreter.

Programs come from `test_lower_graph_programs.expr` (elementwise chains with broadcasting,
reductions, matmuls, softmax, transposes, casts, float or integer), built for a result shape
whose last axis is 1, 15, 17 or 33 long (rank 1 or 2, the other axis 1 to 3), and half of
the time summed or maximized over that last axis, so that vector loops of 4, 8 or 16 lanes
meet trip counts below, at and above a multiple of their width (remainder loops, and loops
too short to vectorize).

Exactness. Lane-wise vector ops are the scalar ops, and a `loop.for` carrying vectors
across a parallel dimension (the matmul shape) sums each lane in the original order, so a
vectorized module without `vector.reduction` must give the same bits. Where the pass made
partial sums (`vector.reduction` present), float sums and products are reassociated: the
sums of these programs are f64 sums of f32 terms (`graph.wide_sum`), whose reordering moves
the f64 result by a few f64 ulps, and the f32 value derived from it by at most one f32 ulp,
which later ops may amplify by cancellation: the comparison then is the one the lowering
tests use for rounding differences (rtol 1e-4 relative to the largest finite magnitude).
Integers are exact always (wrapping sums are associative).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.attributes import StringAttr, TypeAttr, numpy_dtype
from irkit.backends.llvm_cpu import compile_module
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import pipeline
from irkit.symbols import lookup_symbol_in
from irkit.types import F32, I32, FunctionType
from irkit.dialects.func import FuncOp, ReturnOp

from test_lower_graph_programs import Program, expr  # noqa: E402  (tests/property on sys.path)
from output_buffers import garbage_like

SIZES = (1, 15, 17, 33)


@st.composite
def programs(draw):
    """(graph module with `@f`, its input arrays)."""
    dtype = draw(st.sampled_from([F32, I32]))
    p = Program(dtype)
    last = draw(st.sampled_from(SIZES))
    shape = (last,) if draw(st.booleans()) else (draw(st.integers(1, 3)), last)
    root = draw(expr(p, shape, draw(st.integers(1, 4)), root=True))
    if draw(st.booleans()):
        name = draw(st.sampled_from(["reduce_sum", "reduce_max"]))
        root = p.op(f"graph.{name}", root, axes=[len(shape) - 1], keepdims=False)
    p.b.create(ReturnOp, [root], result_types=[])
    fn = FuncOp.build(result_types=[], sym_name=StringAttr("f"),
                      function_type=TypeAttr(FunctionType([a.type for a in p.block.args],
                                                          [root.type])))
    fn.regions[0].add_block(p.block)
    module = parse_module("")
    module.regions[0].blocks[0].append(fn)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    args = []
    for s, a in zip(p.shapes, p.block.args):
        dt = numpy_dtype(a.type.element)
        args.append(rng.normal(size=s).astype(dt) if np.dtype(dt).kind == "f"
                    else rng.integers(-50, 50, size=s).astype(dt))
    return module, args


def lowered(module, passes: str):
    m = parse_module(str(module))
    PassManager.parse(passes).run(m)
    return m


def call(module, args, outs, interpreted: bool = True) -> list[np.ndarray]:
    """Run `@f` with input `args` and fresh copies of the output buffers `outs` (plus a
    status buffer when the function has one); the output buffers after the call."""
    f = lookup_symbol_in(module, "f")
    attrs = f.properties.get("arg_attrs")
    status = [np.zeros(3, np.int64)] if attrs and "graph.status" in attrs[-1].value else []
    outs = [o.copy() for o in outs]
    inputs = [np.array(a, order="C") for a in args]
    with np.errstate(all="ignore"):
        if interpreted:
            Interpreter(module).call(f, inputs + outs + status)
        else:
            compile_module(module).f(*inputs, *outs, *status)
    assert all(s[0] == 0 for s in status), f"a run-time check failed: {status}"
    return outs


def assert_close(got, want, exact: bool, what: str) -> None:
    for g, w in zip(got, want):
        if exact or w.dtype.kind != "f":
            np.testing.assert_array_equal(g.reshape(-1).view(np.uint8),
                                          w.reshape(-1).view(np.uint8), err_msg=what)
            continue
        finite = np.isfinite(w)
        scale = max(1.0, float(np.max(np.abs(w[finite]), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, equal_nan=True,
                                   err_msg=what)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)


LOOPS = pipeline.passes_between(None, "loop")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.sampled_from([4, 8, 16]))
def test_vectorized_loops_keep_the_interpreters_results(case, width):
    module, args = case
    scalar = lowered(module, LOOPS)
    vector = lowered(scalar, f"loop-vectorize{{width={width}}},canonicalize,cse")
    text = str(vector)
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in Interpreter(module).call(
            lookup_symbol_in(module, "f"), list(args))]
    outs = [garbage_like(w) for w in want]
    before = call(scalar, args, outs)
    after = call(vector, args, outs)
    assert_close(after, before, "vector.reduction" not in text, f"width {width}\n{text}")


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_compiled_vector_loops_agree_with_the_interpreter(case):
    """The host's own width; then memory planning and the LLVM backend (vector.reduction's
    `reassoc` lets LLVM sum the lanes as a tree, math functions are libm's: the rounding
    tolerance)."""
    module, args = case
    vector = lowered(module, LOOPS + ",loop-vectorize,canonicalize,cse")
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in Interpreter(module).call(
            lookup_symbol_in(module, "f"), list(args))]
    outs = [garbage_like(w) for w in want]
    interpreted = call(vector, args, outs)
    planned = lowered(vector, "plan-memory,canonicalize,cse")
    compiled = call(planned, args, outs, interpreted=False)
    assert_close(compiled, interpreted, False, str(vector))


STRIDED = """
func.func @f(%in: memref<?xf32>, %out: memref<?xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = arith.constant {stride} : index
  %off = arith.constant {offset} : index
  %n = memory.dim %out, 0 : memref<?xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {{
    %si = arith.muli {lhs}, {rhs} : index
    %j = arith.addi %si, %off : index
    %a = memory.load %in[%j] : memref<?xf32>
    %j1 = arith.addi %j, %c1 : index
    %b = memory.load %in[%j1] : memref<?xf32>
    %d = arith.subf %a, %b : f32
    memory.store %d, %out[%i] : memref<?xf32>
  }}
  return
}}
"""


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 6), st.integers(0, 3), st.integers(1, 40), st.sampled_from([4, 8, 16]),
       st.booleans())
def test_strided_loads_keep_the_interpreters_results(stride, offset, n, width, swap):
    """`out[i] = in[s * i + c] - in[s * i + c + 1]`, `in` exactly as long as the last
    iteration needs: a load at stride 2-4 becomes a contiguous load reaching no further than
    the last lane's element (the interpreter rejects an index past the end) and a
    `vector.shuffle`; a larger stride stays scalar. Interpreted before and after, and
    compiled, the results are the same bits."""
    text = STRIDED.format(stride=stride, offset=offset, lhs="%s" if swap else "%i",
                          rhs="%i" if swap else "%s")
    scalar = parse_module(text)
    vector = lowered(scalar, f"loop-vectorize{{width={width}}},canonicalize,cse")
    printed = str(vector)
    assert ("vector.shuffle" in printed) == (2 <= stride <= 4), printed
    assert ("vector_load" in printed) == (stride <= 4), printed
    rng = np.random.default_rng(stride * 1000 + offset * 100 + n)
    x = rng.normal(size=stride * (n - 1) + offset + 2).astype(np.float32)
    want = np.empty(n, np.float32)
    Interpreter(scalar).call(lookup_symbol_in(scalar, "f"), [x, want])
    np.testing.assert_array_equal(want, x[offset::stride][:n] - x[offset + 1::stride][:n])
    got = np.empty(n, np.float32)
    Interpreter(vector).call(lookup_symbol_in(vector, "f"), [x, got])
    np.testing.assert_array_equal(got, want)
    compiled = np.empty(n, np.float32)
    compile_module(vector).f(x, compiled)
    np.testing.assert_array_equal(compiled, want)


STRIDED_MAX = """
func.func @f(%x: memref<?xf32>, %n: index) -> f32 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = arith.constant {stride} : index
  %off = arith.constant {offset} : index
  %init = arith.constant 0xFF800000 : f32
  %r = loop.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (f32) {{
    %si = arith.muli %i, %s : index
    %j = arith.addi %si, %off : index
    %v = memory.load %x[%j] : memref<?xf32>
    %m = arith.maximumf %acc, %v : f32
    loop.yield %m : f32
  }}
  return %r : f32
}}
"""


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 40), st.sampled_from([4, 8, 16]))
def test_strided_loads_in_a_reduction_loop(stride, offset, n, width):
    """The same strided load in a `loop.for` carrying a maximum (the reduction shape): the
    lanes' partial maxima read every `s`-th element through the shuffle, the buffer exactly
    as long as the last iteration needs; interpreted before and after, and compiled, the
    maximum is the same."""
    scalar = parse_module(STRIDED_MAX.format(stride=stride, offset=offset))
    vector = lowered(scalar, f"loop-vectorize{{width={width}}},canonicalize,cse")
    assert ("vector.shuffle" in str(vector)) == (stride > 1)
    x = np.random.default_rng(stride * 100 + n).normal(
        size=stride * max(n - 1, 0) + offset + 1).astype(np.float32)
    want = np.float32(np.max(x[offset::stride][:n], initial=-np.inf))
    for module in (scalar, vector):
        got = Interpreter(module).call(lookup_symbol_in(module, "f"), [x, n])[0]
        assert np.float32(got) == want
    assert np.float32(compile_module(vector).f(x, n)) == want



LANE_NUMBERS = """
func.func @f(%labels: memref<?xi32>, %out: memref<?x?xf32>, %lo: index) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = arith.constant {stride} : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %rows = memory.dim %out, 0 : memref<?x?xf32>
  %cols = memory.dim %out, 1 : memref<?x?xf32>
  loop.parallel (%r, %j) = (%c0, %lo) to (%rows, %cols) step (%c1, %c1) {{
    %l = memory.load %labels[%r] : memref<?xi32>
    %sj = arith.muli %j, %s : index
    %p = {cast} %sj : index to {itype}
    {label}
    %eq = arith.cmpi eq, %lt, %p : {itype}
    %v = arith.select %eq, %one, %zero : f32
    memory.store %v, %out[%r, %j] : memref<?x?xf32>
  }}
  return
}}
"""

#: the label (i32) in each compared type
_LABEL = {"i64": "%lt = arith.extsi %l : i32 to i64",
          "i32": "%lt = arith.addi %l, %l0 : i32",
          "i16": "%lt = arith.trunci %l : i32 to i16"}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 3), st.integers(0, 5), st.integers(1, 40), st.sampled_from([4, 8, 16]),
       st.sampled_from(["i64", "i32", "i16"]), st.booleans())
def test_lane_positions_as_integers(stride, lo, cols, width, itype, unsigned):
    """A one-hot by position, `out[r, j] = labels[r] == s * j` for j from a dynamic `lo`:
    the lane index cast to an integer becomes lane 0's cast splatted plus the constant
    [0, s, 2s, ...]; interpreted before and after, and compiled, the same bits."""
    cast = "arith.index_castui" if unsigned else "arith.index_cast"
    text = LANE_NUMBERS.format(stride=stride, cast=cast, itype=itype, label=_LABEL[itype])
    text = text.replace("%zero = arith.constant 0.0 : f32",
                        "%zero = arith.constant 0.0 : f32\n  %l0 = arith.constant 0 : i32")
    scalar = parse_module(text)
    vector = lowered(scalar, f"loop-vectorize{{width={width}}},canonicalize,cse")
    printed = str(vector)
    offsets = ", ".join(str(stride * k) for k in range(width))
    assert f"dense<[{offsets}]> : vector<{width}x{itype}>" in printed, printed
    assert "memory.vector_store" in printed, printed
    rows = 3
    lo = min(lo, cols)
    rng = np.random.default_rng(stride * 1000 + lo * 100 + cols)
    labels = rng.integers(-2, stride * cols + 2, size=rows).astype(np.int32)
    want = np.full((rows, cols), -1.0, np.float32)
    want[:, lo:] = labels[:, None] == stride * np.arange(lo, cols)[None, :]
    for module in (scalar, vector):
        got = np.full((rows, cols), -1.0, np.float32)
        Interpreter(module).call(lookup_symbol_in(module, "f"), [labels, got, lo])
        np.testing.assert_array_equal(got, want)
    got = np.full((rows, cols), -1.0, np.float32)
    compile_module(vector).f(labels, got, lo)
    np.testing.assert_array_equal(got, want)
