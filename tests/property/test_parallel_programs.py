"""Partitioned programs equal the unpartitioned ones (issue 16): random graph programs with
random placements of their inputs and of some intermediate values, on simulated 1-D and 2-D
grids of 1 to 4 ranks, forward and gradients.

A program is a chain of graph ops over 2-D tensors of sizes 4 and 8 (so every placement
divides): elementwise ops (with a broadcast row), matmuls, transposes, sum / mean / max
reductions with keepdims, softmax, and a mean-squared loss; its gradient with respect to
every input is asked with `autodiff.grad`. The module is expanded by `autodiff` and then run
twice: as it is by the interpreter (a `parallel.shard` is the identity there), and
partitioned (`parallel-partition,parallel-simplify`) by the simulated ranks from the global
inputs; the assembled results must agree. The same programs with their ops on random stages
of a 2-stage pipeline (`parallel-pipeline`) must agree on every rank.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import register_all
from irkit.dialects.parallel import SimulatedRanks

register_all()

GRIDS = [(1,), (2,), (4,), (1, 2), (2, 2), (2, 1)]
_UNARY = ["tanh", "neg", "relu", "sigmoid"]
_BINARY = ["add", "sub", "mul"]


def _t(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>" if shape else "tensor<f32>"


@st.composite
def programs(draw, pipeline: bool = False):
    """(text, argument shapes, seed). `pipeline`: on a `pipe` axis of 2 ranks, each op
    marked with a random stage (any marks are a valid pipeline: values cross by send/recv),
    no placements."""
    grid = (2,) if pipeline else draw(st.sampled_from(GRIDS))
    n_axes = len(grid)
    lines, values = [], []
    args = []

    def staged(rhs: str) -> str:
        """`rhs` with a `parallel.stage` attribute, in its attribute dictionary."""
        if not pipeline:
            return rhs
        mark = f"parallel.stage = {draw(st.integers(0, 1))} : i64"
        head, types = rhs.rsplit(" : (", 1)
        if head.endswith("}"):
            return f"{head[:-1]}, {mark}}} : ({types}"
        return f"{head} {{{mark}}} : ({types}"

    def placement(shape) -> str:
        ps = [draw(st.sampled_from(["replicate"] + [f"split({d})" for d in range(len(shape))]))
              for _ in range(n_axes)]
        return f"#parallel.sharding<@g, [{', '.join(ps)}]>"

    counter = [0]

    def emit(rhs: str, shape) -> str:
        name = f"%v{counter[0]}"
        counter[0] += 1
        lines.append(f"    {name} = {staged(rhs)}")
        values.append((name, shape))
        return name

    for i in range(draw(st.integers(1, 3))):
        shape = (draw(st.sampled_from([4, 8])), draw(st.sampled_from([4, 8])))
        args.append((f"%a{i}", shape))
        if pipeline:
            values.append((f"%a{i}", shape))
        else:
            emit(f"parallel.shard %a{i} to {placement(shape)} : {_t(shape)}", shape)
    for _ in range(draw(st.integers(1, 6))):
        x, xs = draw(st.sampled_from(values))
        kind = draw(st.sampled_from(["unary", "binary", "row", "matmul", "transpose",
                                     "reduce", "softmax", "annotate"]))
        if kind == "unary":
            op = draw(st.sampled_from(_UNARY))
            emit(f"graph.{op} {x} : ({_t(xs)}) -> {_t(xs)}", xs)
        elif kind == "binary":
            same = [v for v in values if v[1] == xs]
            y, _ = draw(st.sampled_from(same))
            op = draw(st.sampled_from(_BINARY))
            emit(f"graph.{op} {x}, {y} : ({_t(xs)}, {_t(xs)}) -> {_t(xs)}", xs)
        elif kind == "row":
            r = emit(f"graph.reduce_mean {x} {{axes = array<i64: 0>, keepdims = true}} : "
                     f"({_t(xs)}) -> {_t((1, xs[1]))}", (1, xs[1]))
            emit(f"graph.sub {x}, {r} : ({_t(xs)}, {_t((1, xs[1]))}) -> {_t(xs)}", xs)
        elif kind == "matmul":
            cands = [v for v in values if len(v[1]) == 2 and v[1][0] == xs[1]]
            if not cands:
                continue
            y, ys = draw(st.sampled_from(cands))
            emit(f"graph.matmul {x}, {y} : ({_t(xs)}, {_t(ys)}) -> {_t((xs[0], ys[1]))}",
                 (xs[0], ys[1]))
        elif kind == "transpose":
            emit(f"graph.transpose {x} {{perm = array<i64: 1, 0>}} : ({_t(xs)}) -> "
                 f"{_t(xs[::-1])}", xs[::-1])
        elif kind == "reduce":
            op = draw(st.sampled_from(["reduce_sum", "reduce_mean", "reduce_max"]))
            axis = draw(st.integers(0, 1))
            out = (1, xs[1]) if axis == 0 else (xs[0], 1)
            emit(f"graph.{op} {x} {{axes = array<i64: {axis}>, keepdims = true}} : "
                 f"({_t(xs)}) -> {_t(out)}", out)
        elif kind == "softmax":
            axis = draw(st.integers(0, 1))
            emit(f"graph.softmax {x} {{axis = {axis} : i64}} : ({_t(xs)}) -> {_t(xs)}", xs)
        elif not pipeline and 1 not in xs:
            emit(f"parallel.shard {x} to {placement(xs)} : {_t(xs)}", xs)
    out, os_ = values[-1]
    target, ts = draw(st.sampled_from([v for v in values if v[1] == os_]))
    loss = emit(f"graph.mse {out}, {target} : ({_t(os_)}, {_t(ts)}) -> tensor<f32>", ())
    xs = ", ".join(a for a, _ in args)
    grad_types = ", ".join(_t(s) for _, s in args)
    lines.append(f"    %g:{len(args)} = autodiff.grad {loss} wrt {xs} : (tensor<f32>) -> "
                 f"({grad_types})")
    grads = ", ".join(f"%g#{i}" for i in range(len(args)))
    sig = ", ".join(f"{a}: {_t(s)}" for a, s in args)
    outs = ", ".join([_t(os_), "tensor<f32>"] + [_t(s) for _, s in args])
    axes = '"pipe"' if pipeline else ", ".join(f'"a{i}"' for i in range(n_axes))
    text = "\n".join([
        "module {",
        f"  parallel.grid @g(shape = {list(grid)}, axes = [{axes}])",
        f"  func.func @f({sig}) -> ({outs}) {{",
        *lines,
        f"    return {out}, {loss}, {grads} : {outs}",
        "  }",
        "}"])
    seed = draw(st.integers(0, 2 ** 16))
    return text, [s for _, s in args], seed


def _inputs_and_results(case) -> tuple:
    """The program's text, random inputs and the unpartitioned program's results on them."""
    text, shapes, seed = case
    rng = np.random.default_rng(seed)
    inputs = [rng.normal(size=s).astype(np.float32) for s in shapes]
    whole = parse_module(text)
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(whole)
    return text, inputs, interpret(whole, "f", *inputs)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_partitioned_program_equals_the_whole(case):
    text, inputs, want = _inputs_and_results(case)
    parts = parse_module(text)
    PassManager.parse("builtin.module(autodiff,canonicalize,cse,parallel-partition,"
                      "parallel-simplify)").run(parts)
    got = SimulatedRanks(parts).run("f", *inputs)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5,
                                   err_msg=f"result #{i} of\n{text}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(pipeline=True))
def test_pipelined_program_equals_the_whole(case):
    """The same programs, each op on a random one of 2 pipeline stages (after autodiff, so
    the backward ops take stages by `parallel-pipeline`'s rules), on simulated ranks: the
    results every rank returns equal the unpartitioned program's."""
    text, inputs, want = _inputs_and_results(case)
    parts = parse_module(text)
    PassManager.parse("builtin.module(autodiff,canonicalize,cse,parallel-pipeline)").run(parts)
    sim = SimulatedRanks(parts)
    per_rank = sim.run_per_rank("f", [inputs, inputs])
    for rank, got in enumerate(per_rank):
        for i, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5,
                                       err_msg=f"result #{i} on rank {rank} of\n{text}")
