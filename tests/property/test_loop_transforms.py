"""The loop transformations keep every program's bits: loop-tile, loop-interchange,
loop-unroll, loop-unroll-and-jam, loop-reduction-interchange and
loop-invariant-code-motion, each with random options, on two kinds of random loop nests,
run by the interpreter before and after the pass; a sample is also compiled by the LLVM
backend and must match the interpreter.

- Lowered generics: `test_lower_linalg_to_loop_generics.generics` (random `linalg.generic`
  ops over static and dynamic memrefs) lowered to loops, with and without `loop.parallel`.
  These nests are what the passes meet in the pipeline: parallel loops around reductions
  carried in registers or stored every iteration.
- Stencils: bands of 1 to 3 `loop.for`s with constant or run-time bounds and steps 1 or 2,
  whose statements load from and store to two 8x8 buffers at indices `iv + offset` (any
  loop of the band in any dimension) or constants, some through an inner reduction loop.
  Most have loop-carried dependences through memory in all directions, which is what the
  passes' legality checks must find: an illegal reordering changes the bits (float sums
  of random values), so a pass that transforms what it should refuse fails here.

None of these passes reassociates, so the comparison is of bits, floats included.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.parser import parse_module
from irkit.pass_manager import PassManager

from test_lower_linalg_to_loop_generics import generics  # noqa: E402  (tests/property on path)
from tests.unit.test_lower_linalg_to_loop import lower, run, same_bits

N = 8           # the stencil buffers are N x N


@st.composite
def pass_texts(draw) -> str:
    """One of the passes, with random options."""
    kind = draw(st.sampled_from(["tile", "interchange", "unroll", "jam", "reduction", "licm"]))
    if kind == "tile":
        sizes = draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
        return f"loop-tile{{tile-sizes={','.join(map(str, sizes))}}}"
    if kind == "interchange":
        n = draw(st.integers(0, 3))
        if n == 0:
            return "loop-interchange"
        perm = draw(st.permutations(range(n)))
        return f"loop-interchange{{permutation={','.join(map(str, perm))}}}"
    if kind == "unroll":
        return (f"loop-unroll{{factor={draw(st.integers(1, 5))} "
                f"full-threshold={draw(st.integers(0, 4))}}}")
    if kind == "jam":
        return (f"loop-unroll-and-jam{{factor={draw(st.integers(2, 4))} "
                f"full-threshold={draw(st.integers(0, 2))}}}")
    if kind == "reduction":         # runs from one element up: the 8-wide rows are 32 bytes
        return f"loop-reduction-interchange{{run-bytes={draw(st.sampled_from([4, 8, 16]))}}}"
    return "loop-invariant-code-motion"


def transformed(module, passes: str):
    """A copy of `module` after `passes` (verified by the pass manager), read back from its
    text so that the printed form is what is run."""
    m = parse_module(str(module))
    PassManager.parse(passes).run(m)
    text = str(m)
    return parse_module(text)


# ---------------------------------------------------------------------------------------------
# Stencils
# ---------------------------------------------------------------------------------------------


@st.composite
def stencils(draw):
    """(source of @f, its arguments: two N x N f32 buffers, then the run-time bounds)."""
    depth = draw(st.integers(1, 3))
    dynamic = draw(st.booleans())
    lines, args = [], ["%A: memref<8x8xf32>", "%B: memref<8x8xf32>"]
    consts = {f"%c{v}": v for v in range(N + 1)}
    loops = []
    for k in range(depth):
        lb = draw(st.integers(2, 3))
        step = draw(st.sampled_from([1, 1, 2]))
        if dynamic:
            args.append(f"%n{k}: index")
            ub = f"%n{k}"
        else:
            ub = f"%c{draw(st.integers(2, 6))}"
        loops.append((f"%i{k}", f"%c{lb}", ub, f"%c{step}"))
    body, values, t = [], ["%one"], 0
    # Half of the programs read only B and write A at distinct loops' indices: few
    # dependences, so that the passes have legal bands to transform too.
    clean = draw(st.booleans())

    def index(loop: int | None = None) -> str:
        nonlocal t
        if loop is None and draw(st.integers(0, 4)) == 0:
            return f"%c{draw(st.integers(0, N - 1))}"
        iv = loops[draw(st.integers(0, depth - 1)) if loop is None else loop][0]
        off = draw(st.integers(-2, 2))
        if off == 0:
            return iv
        t += 1
        op = "arith.addi" if off > 0 else "arith.subi"
        body.append(f"%t{t} = {op} {iv}, %c{abs(off)} : index")
        return f"%t{t}"

    for s in range(draw(st.integers(1, 3))):
        buf = "%B" if clean else draw(st.sampled_from(["%A", "%B"]))
        i, j = index(), index()
        if draw(st.integers(0, 3)) == 0:        # an inner reduction over the last dimension
            body.append(f"%r{s} = loop.for %k{s} = %c0 to %c8 step %c1 "
                        f"iter_args(%a{s} = {draw(st.sampled_from(values))}) -> (f32) {{")
            body.append(f"  %x{s} = memory.load {buf}[{i}, %k{s}] : memref<8x8xf32>")
            body.append(f"  %s{s} = arith.addf %a{s}, %x{s} : f32")
            body.append(f"  loop.yield %s{s} : f32")
            body.append("}")
            values.append(f"%r{s}")
        else:
            body.append(f"%x{s} = memory.load {buf}[{i}, {j}] : memref<8x8xf32>")
            other = draw(st.sampled_from(values))
            op = draw(st.sampled_from(["arith.addf", "arith.mulf"]))
            body.append(f"%v{s} = {op} %x{s}, {other} : f32")
            values.append(f"%v{s}")
        if clean:
            first = draw(st.integers(0, depth - 1))
            second = (first + 1) % depth
            out, where = "%A", f"{index(first)}, {index(second)}"
        else:
            out, where = draw(st.sampled_from(["%A", "%B"])), f"{index()}, {index()}"
        body.append(f"memory.store {values[-1]}, {out}[{where}] : memref<8x8xf32>")
    text = "\n".join(f"%c{v} = arith.constant {v} : index" for v in consts.values())
    text += "\n%one = arith.constant 1.5 : f32\n"
    for iv, lb, ub, step in loops:
        lines.append(f"loop.for {iv} = {lb} to {ub} step {step} {{")
    lines += body + ["}"] * depth
    src = (f"func.func @f({', '.join(args)}) {{\n{text}" + "\n".join(lines)
           + "\nreturn\n}")
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    arrays = [rng.normal(size=(N, N)).astype(np.float32) for _ in range(2)]
    bounds = [draw(st.integers(0, 6)) for _ in range(depth)] if dynamic else []
    return src, arrays + bounds


# ---------------------------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------------------------


def _check_bits(module, args, passes: str, what: str):
    want = run(module, "f", args)
    after = transformed(module, passes)
    got = run(after, "f", args)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i}, {passes}, of\n{what}\nafter\n{after}")
    return after


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(stencils(), pass_texts())
def test_stencils_keep_their_bits(case, passes):
    src, args = case
    _check_bits(parse_module(src), args, passes, src)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(generics(), st.booleans(), pass_texts())
def test_lowered_generics_keep_their_bits(case, parallel, passes):
    src, arrays = case
    lowered = lower(src, parallel=parallel)
    _check_bits(lowered, arrays, passes, str(lowered))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(stencils(), generics()), pass_texts())
def test_transformed_loops_compile_to_the_interpreters_bits(case, passes):
    pytest.importorskip("llvmlite")
    from irkit.backends.llvm_cpu import compile_module
    src, args = case
    m = parse_module(src)
    if "linalg." in src:
        m = lower(src)
    after = transformed(m, passes)
    want = run(after, "f", args)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    compile_module(after).f(*got)
    for i, (g, w) in enumerate(zip(got, want)):
        same_bits(g, w, f"argument #{i}, {passes}, of\n{after}")
