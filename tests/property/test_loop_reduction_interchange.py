"""loop-reduction-interchange keeps every program's bits: random column reductions (the
nests the pass is for, which the random generics of test_loop_transforms.py make rarely)
run by the interpreter before and after the pass, and compiled after it.

A program sums the columns of a rows x cols buffer into one or two sums buffers (a plain
sum, and a sum of products with a second buffer), scalar or by vectors of 2 or 4 lanes,
with static or run-time extents, and may store an elementwise result per point as the
ReLU backward does. Each sum adds floats in a fixed order, so a pass that reordered one
sum's terms, or lost or repeated a row, changes the bits; the pass must also fire wherever
its rows are longer than one run, so that the property is about the transformed nest.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes.loop_reduction_interchange import LoopReductionInterchange

from tests.unit.test_lower_linalg_to_loop import run, same_bits


@st.composite
def column_sums(draw):
    """(source of @f, its arguments, whether the pass must fire at `run_bytes`, run_bytes)."""
    lanes = draw(st.sampled_from([1, 2, 4]))
    rows = draw(st.integers(0, 6))
    cols = lanes * draw(st.integers(1, 6))
    dyn_rows, dyn_cols = draw(st.booleans()), draw(st.booleans())
    two = draw(st.booleans())                  # a second sum: of products with %b
    store = draw(st.booleans())                # an elementwise result stored per point
    run_bytes = draw(st.sampled_from([4, 8, 16, 32]))
    shape = f"{'?' if dyn_rows else rows}x{'?' if dyn_cols else cols}"
    mat, vec = f"memref<{shape}xf32>", f"memref<{'?' if dyn_cols else cols}xf32>"
    t = "f32" if lanes == 1 else f"vector<{lanes}xf32>"

    def load(buf: str, memref: str, idx: str) -> str:
        if lanes == 1:
            return f"memory.load {buf}[{idx}] : {memref}"
        return f"memory.vector_load {buf}[{idx}] : {memref}, {t}"

    def save(value: str, buf: str, memref: str, idx: str) -> str:
        if lanes == 1:
            return f"memory.store {value}, {buf}[{idx}] : {memref}"
        return f"memory.vector_store {value}, {buf}[{idx}] : {memref}, {t}"

    inits = [f"%init0 = {load('%s0', vec, '%j')}"]
    iters, types = ["%acc0 = %init0"], [t]
    body = [f"%x = {load('%a', mat, '%i, %j')}", f"%n0 = arith.addf %acc0, %x : {t}"]
    yields, stores = ["%n0"], [save("%r#0", "%s0", vec, "%j")]
    if two:
        inits.append(f"%init1 = {load('%s1', vec, '%j')}")
        iters.append("%acc1 = %init1")
        types.append(t)
        body += [f"%y = {load('%b', mat, '%i, %j')}", f"%p = arith.mulf %x, %y : {t}",
                 f"%n1 = arith.addf %acc1, %p : {t}"]
        yields.append("%n1")
        stores.append(save("%r#1", "%s1", vec, "%j"))
    if store:
        body.append(save("%n0", "%out", mat, "%i, %j"))
    src = f"""
func.func @f(%a: {mat}, %b: {mat}, %s0: {vec}, %s1: {vec}, %out: {mat}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %step = arith.constant {lanes} : index
  %rows = {f"memory.dim %a, 0 : {mat}" if dyn_rows else f"arith.constant {rows} : index"}
  %cols = {f"memory.dim %a, 1 : {mat}" if dyn_cols else f"arith.constant {cols} : index"}
  loop.parallel (%j) = (%c0) to (%cols) step (%step) {{
    {chr(10).join(inits)}
    %r:{len(types)} = loop.for %i = %c0 to %rows step %c1 iter_args({', '.join(iters)}) \
-> ({', '.join(types)}) {{
      {chr(10).join(body)}
      loop.yield {', '.join(yields)} : {', '.join(types)}
    }}
    {chr(10).join(stores)}
  }}
  return
}}"""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    a, b, out = (rng.normal(size=(rows, cols)).astype(np.float32) for _ in range(3))
    s0, s1 = (rng.normal(size=cols).astype(np.float32) for _ in range(2))
    # the pass fires where a row is longer than one run, or where the columns are not known
    fires = dyn_cols or cols // lanes > max(1, run_bytes // (4 * lanes))
    return src, [a, b, s0, s1, out], fires, run_bytes


def _after(src: str, run_bytes: int):
    m = parse_module(src)
    p = LoopReductionInterchange(run_bytes=run_bytes)
    PassManager().add(p).run(m)
    return parse_module(str(m)), p.interchanged


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(column_sums())
def test_column_sums_keep_their_bits(case):
    src, args, fires, run_bytes = case
    want = run(parse_module(src), "f", args)
    after, interchanged = _after(src, run_bytes)
    assert interchanged == int(fires), f"run-bytes={run_bytes}\n{src}\nafter\n{after}"
    got = run(after, "f", args)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i}, run-bytes={run_bytes}, of\n{src}\nafter\n{after}")


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(column_sums())
def test_interchanged_sums_compile_to_the_interpreters_bits(case):
    pytest.importorskip("llvmlite")
    from irkit.backends.llvm_cpu import compile_module
    src, args, _, run_bytes = case
    after, _ = _after(src, run_bytes)
    want = run(after, "f", args)
    got = [a.copy() for a in args]
    compile_module(after).f(*got)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i} of\n{after}")
