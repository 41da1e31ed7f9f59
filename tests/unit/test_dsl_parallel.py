"""Parallelism annotations in the DSL (issue 16): `grid`, placements of inputs and params,
`stage` blocks. The IR they produce, every error they can meet (rendered with file, line,
column and caret), and an annotated Megatron MLP trained on simulated ranks against the
unpartitioned program in the interpreter."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from irkit.frontend.dsl import DSLError, compile_source, find_model
from irkit.interpreter import Interpreter
from irkit.pass_manager import PassManager
from irkit.passes import register_all
from irkit.symbols import lookup_symbol_in
from irkit.dialects.parallel import (
    PARTIAL, REPLICATE, GridOp, Sharding, SimulatedRanks, Split, variable_shardings,
)

register_all()

MLP = """model mlp {
  grid g[data=2, model=2]
  input x: f32[B, 8] @ g(split(0), replicate)
  input labels: i32[B] @ g(data=split(0))
  param w1: f32[8, 16] = normal(std=0.5, seed=1) @ g(replicate, split(1))
  param b1: f32[16] = zeros @ g(model=split(0))
  param w2: f32[16, 4] = glorot(seed=2) @ g(model=split(0))
  param b2: f32[4] = zeros
  logits = relu(x @ w1 + b1) @ w2 + b2
  loss = cross_entropy(logits, labels)
  output loss
  train loss with adam(lr=0.05)
}"""


def _arg_sharding(fn, i: int):
    a = fn.properties["arg_attrs"].value[i].value.get("parallel.sharding")
    return None if a is None else Sharding.of_attr(a)


def test_grid_and_placements_lower_to_the_dialect():
    m = find_model(compile_source(MLP), "mlp")
    grids = [op for op in m.regions[0].blocks[0].ops if isinstance(op, GridOp)]
    assert [(g.info().shape, g.info().axes) for g in grids] == [((2, 2), ("data", "model"))]
    for name in ("forward", "train_step"):
        fn = lookup_symbol_in(m, name)
        assert _arg_sharding(fn, 0) == Sharding("g", (Split(0), REPLICATE))
        assert _arg_sharding(fn, 1) == Sharding("g", (Split(0), REPLICATE))
    assert variable_shardings(m) == {"w1": Sharding("g", (REPLICATE, Split(1))),
                                     "b1": Sharding("g", (REPLICATE, Split(0))),
                                     "w2": Sharding("g", (REPLICATE, Split(0)))}


def test_partial_placement_and_no_annotation():
    m = find_model(compile_source("""model m {
  grid g[r=2]
  input x: f32[4] @ g(partial(sum))
  input y: f32[4]
  output x, y
}"""), "m")
    fn = lookup_symbol_in(m, "forward")
    assert _arg_sharding(fn, 0) == Sharding("g", (PARTIAL,))
    assert _arg_sharding(fn, 1) is None
    assert "parallel.variables" not in m.attributes


def test_stage_blocks_mark_their_ops():
    m = find_model(compile_source("""model m {
  input x: f32[4, 8]
  param w: f32[8, 8] = zeros
  stage 0 { h = relu(x @ w) }
  stage 1 {
    y = h * 2
  }
  output y
}"""), "m")
    fn = lookup_symbol_in(m, "forward")
    stages = {op.name: op.attributes["parallel.stage"].value
              for op in fn.regions[0].blocks[0].ops if "parallel.stage" in op.attributes}
    assert stages == {"graph.matmul": 0, "graph.relu": 0, "graph.mul": 1,
                      "graph.constant": 1}


def rendered(src: str) -> str:
    with pytest.raises(DSLError) as info:
        compile_source(textwrap.dedent(src), "p.irk")
    return info.value.render()


def expect(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


HEAD = """\
model m {
  grid g[data=2, model=2]
"""


@pytest.mark.parametrize("line, message, at", [
    # a grid used but not declared
    ("input x: f32[4, 8] @ h(split(0), replicate)", "unknown grid 'h'", "h("),
    # a bad axis
    ("input x: f32[4, 8] @ g(mdoel=split(1))",
     "unknown axis of grid 'g' 'mdoel'; did you mean 'model'?", "mdoel"),
    ("input x: f32[4, 8] @ g(split(0), split(1), replicate)",
     "grid 'g' has 2 axes (data, model), but the placement gives 3 entries", "replicate"),
    ("input x: f32[4, 8] @ g(split(0))",
     "grid 'g' has 2 axes (data, model), but the placement gives 1; give one per axis or "
     "name the axes placed (the others replicate)", "g("),
    ("input x: f32[4, 8] @ g(model=split(0), data=replicate, model=split(1))",
     "grid axis 'model' is placed twice", "model=split(1)"),
    ("input x: f32[4, 8] @ g(data=split(0), split(1))",
     "a placement by position cannot follow one by axis name", "split(1)"),
    # a split dimension out of range
    ("input x: f32[4, 8] @ g(split(2), replicate)",
     "split(2) is out of range for input 'x' of rank 2 (f32[4, 8])", "2)"),
    ("param w: f32[8] = zeros @ g(replicate, split(1))",
     "split(1) is out of range for param 'w' of rank 1 (f32[8])", "1)"),
    # a static size that does not divide
    ("param w: f32[8, 7] = zeros @ g(replicate, split(1))",
     "dimension 1 of param 'w' (size 7) does not divide into 2 blocks over grid axis model",
     "split"),
    ("input x: f32[6, 8] @ g(split(0), split(0))",
     "dimension 0 of input 'x' (size 6) does not divide into 4 blocks over grid axes data, "
     "model", "split"),
    # placements
    ("input x: f32[4, 8] @ g(shard(0), replicate)",
     "unknown placement 'shard'; expected one of split, replicate, partial", "shard"),
    ("input x: f32[4, 8] @ g(split, replicate)",
     "split needs the dimension it splits, an integer: split(0)", "split"),
    ("input x: f32[4, 8] @ g(replicate(1), replicate)", "replicate takes no argument", "1)"),
    ("input x: f32[4, 8] @ g(partial(max), replicate)",
     "partial sums only: partial(sum), got partial(max)", "max"),
])
def test_placement_errors(line, message, at):
    """The error, its line and the caret under the text `at` (its first occurrence)."""
    col = 3 + line.index(at)
    got = rendered(HEAD + "  " + line + "\n  output x\n}\n")
    assert got.splitlines() == [f"p.irk:3:{col}: error: {message}", "  " + line,
                                " " * (col - 1) + "^"]


def test_placement_without_a_grid():
    got = rendered("model m {\n  input x: f32[4] @ g(split(0))\n  output x\n}\n")
    assert got.splitlines()[0] == ("p.irk:2:21: error: grid 'g' is not declared; declare it "
                                   "in the model, e.g. `grid g[data=2]`")


@pytest.mark.parametrize("src, first_line", [
    ("model m {\n  grid g[a=2, a=2]\n  input x: f32[4]\n  output x\n}\n",
     "p.irk:2:15: error: grid 'g' has two axes named 'a'"),
    ("model m {\n  grid g[a=0]\n  input x: f32[4]\n  output x\n}\n",
     "p.irk:2:12: error: the size of grid axis 'a' must be a positive integer, got 0"),
    ("model m {\n  grid g[a=2]\n  grid h[b=2]\n  input x: f32[4]\n  output x\n}\n",
     "p.irk:3:8: error: a model declares at most one grid"),
    ("model m {\n  input x: f32[4] * g(split(0))\n  output x\n}\n",
     "p.irk:2:19: error: unexpected '*'; expected '@' before a placement"),
    ("model m {\n  input x: f32[4]\n  stage 1 { y = x }\n  stage 0 { z = y }\n"
     "  output z\n}\n",
     "p.irk:4:3: error: stage 0 follows stage 1: stages come in increasing order"),
    ("model m {\n  input x: f32[4]\n  stage 0 { output x }\n}\n",
     "p.irk:3:13: error: 'output' is not allowed in a stage; a stage holds assignments"),
    ("fn f(a) {\n  stage 0 { b = a }\n  return b\n}\nmodel m {\n  input x: f32[4]\n"
     "  y = f(x)\n  output y\n}\n",
     "p.irk:2:3: error: 'stage' is only allowed in a model"),
])
def test_grid_and_stage_errors(src, first_line):
    assert rendered(src).splitlines()[0] == first_line


def test_annotated_megatron_mlp_trains_as_one_rank():
    """The annotated MLP (batch split on `data`, w1 by columns and w2 by rows on `model`,
    as in Megatron-LM) on 4 simulated ranks: three Adam steps give the losses and every
    variable of the same program run unpartitioned in the interpreter."""
    top = compile_source(MLP)
    PassManager.parse("builtin.module(autodiff,canonicalize,cse)").run(top)
    ref = find_model(top, "mlp").clone()
    m = find_model(top, "mlp")
    PassManager.parse("builtin.module(parallel-propagate,parallel-partition,"
                      "parallel-simplify)").run(top)
    step = lookup_symbol_in(m, "train_step")
    assert "parallel.all_reduce" in {op.name for op in step.walk()}
    sim = SimulatedRanks(m)
    state: dict = {}
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.normal(size=(8, 8)).astype(np.float32)
        y = rng.integers(0, 4, 8).astype(np.int32)
        got = sim.run("train_step", x, y)
        want = Interpreter(ref, state).call(lookup_symbol_in(ref, "train_step"), [x, y])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for name, v in sim.variables().items():
        np.testing.assert_allclose(v, state["graph.variables"][name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    # the weights really are cut: a rank holds half of w1's columns
    assert sim.rank_variables(0)["w1"].shape == (8, 8)
