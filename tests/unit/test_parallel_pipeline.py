"""parallel-pipeline (issue 16): a training step cut by its `stage` blocks into one program
per rank of a `pipe` axis, the batch into micro-batches (GPipe), run on simulated ranks
against the unpartitioned step in the interpreter; the schedule, the stage of each backward
op and variable, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

from irkit.diagnostics import IRError
from irkit.frontend.dsl import compile_source, find_model
from irkit.interpreter import Interpreter, InterpreterError
from irkit.pass_manager import PassManager, PassPipelineError
from irkit.passes import register_all
from irkit.symbols import lookup_symbol_in
from irkit.dialects.parallel import SimulatedRanks, variable_stages

register_all()


def _source(optimizer: str = "sgd(lr=0.1)", grid: str = "pipe=2", stages=(0, 1)) -> str:
    return f"""model mlp {{
  grid g[{grid}]
  input x: f32[B, 8]
  input labels: i32[B]
  param w1: f32[8, 16] = normal(std=0.5, seed=1)
  param b1: f32[16] = zeros
  param w2: f32[16, 4] = glorot(seed=2)
  param b2: f32[4] = zeros
  stage {stages[0]} {{ h = relu(x @ w1 + b1) }}
  stage {stages[1]} {{
    logits = h @ w2 + b2
    loss = cross_entropy(logits, labels)
  }}
  output logits, loss
  train loss with {optimizer}
}}"""


def _pipelined(micro_batches: int, optimizer: str = "sgd(lr=0.1)"):
    """(the model after autodiff, the same pipelined)."""
    top = compile_source(_source(optimizer))
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    ref = find_model(top, "mlp").clone()
    PassManager.parse(f"builtin.module(parallel-pipeline{{micro-batches={micro_batches}}})") \
        .run(top)
    return ref, find_model(top, "mlp")


def _batch(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 8)).astype(np.float32), rng.integers(0, 4, n).astype(np.int32)


@pytest.mark.parametrize("micro_batches", [1, 2, 4])
@pytest.mark.parametrize("optimizer", ["sgd(lr=0.1)", "adam(lr=0.05)"])
def test_two_stages_train_as_one_program(micro_batches, optimizer):
    """Three training steps on 2 simulated stages give the unpartitioned step's losses and
    variables (params and optimizer state), then `forward` its logits and loss (1e-5): the
    micro-batches' gradients are accumulated and their mean losses averaged."""
    ref, m = _pipelined(micro_batches, optimizer)
    sim = SimulatedRanks(m)
    state: dict = {}
    for step in range(3):
        x, y = _batch(8, step)
        got = sim.run("train_step", x, y)
        want = Interpreter(ref, state).call(lookup_symbol_in(ref, "train_step"), [x, y])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for name, value in sim.variables().items():
        np.testing.assert_allclose(value, state["graph.variables"][name], rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    x, y = _batch(8, 9)
    got = sim.run("forward", x, y)
    want = Interpreter(ref, state).call(lookup_symbol_in(ref, "forward"), [x, y])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _ops(m, name: str) -> list:
    return list(lookup_symbol_in(m, name).regions[0].blocks[0].ops)


def test_stages_own_their_layers_forward_and_backward():
    """Each variable lives on the stage of the layer that reads it, its update there too;
    stage 1 computes the backward of its matmul (w2's gradient: no weight crosses), and
    the stages exchange only activations forward and their gradients back: per micro-batch
    one send from each stage in the step, plus the loss sent to stage 0 at the end."""
    _, m = _pipelined(2)
    assert variable_stages(m) == {"w1": 0, "b1": 0, "w2": 1, "b2": 1}
    assigns = {s: [op.properties["variable"].root for op in _ops(m, f"train_step_stage{s}")
                   if op.name == "graph.assign"] for s in (0, 1)}
    assert assigns == {0: ["w1", "b1"], 1: ["w2", "b2"]}
    sends = {s: [op.operands[0].type for op in _ops(m, f"train_step_stage{s}")
                 if op.name == "parallel.send"] for s in (0, 1)}
    assert [str(t) for t in sends[0]] == ["tensor<?x16xf32>"] * 2
    assert [str(t) for t in sends[1]] == ["tensor<?x16xf32>"] * 2 + ["tensor<f32>"]


def test_gpipe_schedule_all_forwards_then_all_backwards():
    """Stage 0 sends every micro-batch's activations before it waits for any gradient
    (GPipe: the pipeline fills with forwards), and stage 1 receives them in the same order;
    its backward starts with the last micro-batch."""
    _, m = _pipelined(4)
    first = [op.name for op in _ops(m, "train_step_stage0")
             if op.name in ("parallel.send", "parallel.recv")]
    assert first == ["parallel.send"] * 4 + ["parallel.recv"] * 5
    second = [op for op in _ops(m, "train_step_stage1")
              if op.name in ("parallel.send", "parallel.recv", "graph.cross_entropy")]
    assert [op.name for op in second[:8]] == ["parallel.recv", "graph.cross_entropy"] * 4
    # the first gradient sent back is the last micro-batch's: its split piece #3
    ops = _ops(m, "train_step_stage1")
    recvs = [op.results[0] for op in ops if op.name == "parallel.recv"]
    send = next(op for op in ops if op.name == "parallel.send")
    producers, stack = set(), [send.operands[0]]
    while stack:
        v = stack.pop()
        if v in recvs:
            producers.add(recvs.index(v))
        elif v.owner in ops:
            stack += list(v.owner.operands)
    assert producers == {3}


def test_batch_must_divide_into_micro_batches():
    _, m = _pipelined(4)
    x, y = _batch(6, 0)
    with pytest.raises(InterpreterError):
        SimulatedRanks(m).run("train_step", x, y)


@pytest.mark.parametrize("grid, stages, message", [
    ("pipe=2", (0, 2), "stage 2 does not exist: grid '@g' has 2 ranks on axis 'pipe'"),
    ("data=2, pipe=2", (0, 1), "pipeline stages run on a grid of one axis"),
])
def test_stage_errors(grid, stages, message):
    top = compile_source(_source(grid=grid, stages=stages))
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    with pytest.raises(IRError, match=message):
        PassManager.parse("builtin.module(parallel-pipeline)").run(top)


def test_micro_batches_option_must_be_positive():
    with pytest.raises(PassPipelineError, match="micro-batches"):
        PassManager.parse("builtin.module(parallel-pipeline{micro-batches=0})").run(
            compile_source(_source()))


def test_report_counts_the_messages():
    """`collective_traffic` of the pipelined step against the count written out: with M
    micro-batches of a batch of B rows, stage 0 sends each micro-batch's hidden activations
    (B/M x 16 floats) and stage 1 their gradients back, each M times; stage 1 sends the
    loss (4 bytes) to stage 0 at the end. The totals do not depend on M."""
    from irkit.passes.parallel_report import collective_traffic
    for m in (1, 2, 4):
        _, module = _pipelined(m)
        step = [t for t in collective_traffic(module) if t.function.startswith("train_step")]
        assert {t.kind for t in step} == {"parallel.send"}
        by_stage = {s: [t for t in step if t.function == f"train_step_stage{s}"] for s in (0, 1)}
        assert [t.payload(64) for t in by_stage[0]] == [64 // m * 16 * 4] * m
        assert sorted(t.payload(64) for t in by_stage[1]) == [4] + [64 // m * 16 * 4] * m


def test_bufferized_send_recv_on_simulated_ranks():
    """Point to point lowered to buffers (what the JIT compiles: `mpi.send`, `mpi.probe`,
    `mpi.recv` to a peer computed from `mpi.comm_rank`) runs on 2 simulated ranks as the
    tensor form does: a received `?` size is the sender's, and a rank off the grid's edge
    receives zeros (the outputs start as NaN, so an unwritten one shows)."""
    from irkit.dialects.parallel import run_spmd
    from irkit.parser import parse_module
    from irkit.passes import pipeline
    from tests.unit.test_mpi_runtime import POINT_TO_POINT
    m = parse_module(POINT_TO_POINT)
    PassManager.parse(f"builtin.module({pipeline.passes_between(None, 'loop')})").run(m)
    ops = {op.name for op in m.walk()}
    assert {"mpi.send", "mpi.probe", "mpi.recv", "mpi.comm_rank"} <= ops
    assert not any(n.startswith("parallel.") and n != "parallel.grid" for n in ops)
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)]
    outs = [[np.full(3, np.nan, np.float32), np.full((2, 3), np.nan, np.float32)] for _ in xs]
    run_spmd(m, "forward", [[x, *o] for x, o in zip(xs, outs)])
    want = run_spmd(parse_module(POINT_TO_POINT), "forward", [[x] for x in xs])
    np.testing.assert_allclose(want[1][0], xs[0].sum(axis=0), rtol=1e-6)
    for r in range(2):
        for got, w in zip(outs[r], want[r]):
            np.testing.assert_allclose(got, w, rtol=1e-6, err_msg=f"rank {r}")
