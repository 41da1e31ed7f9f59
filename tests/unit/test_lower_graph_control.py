"""lower-graph-to-loop on `graph.if`: the interpreter on the graph function against the
interpreter (and the LLVM backend) on the lowered one, for both values of the predicate:
the gate model raised from the DSL's dataflow conditional, nested ifs, results returned
(destination passing) or not (static: a buffer before the `loop.if`; dynamic: a memref the
`loop.if` yields), and an assign inside a branch, which must happen only when it is taken.
The lowered runs also check that every buffer is freed (`run_lowered`).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from irkit.pass_manager import PassManager

from test_lower_graph import _backend, check, lower, rand, run_graph, same
from output_buffers import garbage

GATE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "gate.irk"

TRUE, FALSE = np.array(True), np.array(False)


def _ops(m) -> list[str]:
    return [op.name for op in m.walk()]


def _gate_source() -> str:
    from irkit.frontend.dsl import compile_file, model_modules
    top = compile_file(str(GATE))
    PassManager.parse("builtin.module(graph-raise-control-flow)").run(top)
    graph = model_modules(top)["gate"]
    assert "graph.if" in _ops(graph)
    return str(graph)


def _gate_args(taken: bool, n: int = 5):
    x, y, z = rand(n), rand(n, seed=1), rand(n, seed=2)
    x, y = np.abs(x), np.abs(y)
    if not taken:
        x, y = y + 1, x                 # sum(x) < sum(y) is false
    else:
        y = x + 1
    return x, y, z


def test_gate_model_both_branches():
    lowered = check(_gate_source(), _gate_args(True), _gate_args(False), _gate_args(True, 1),
                    fn="forward")
    names = _ops(lowered)
    assert "loop.if" in names and not any(n.startswith("graph.") for n in names)


def test_gate_model_computes_into_the_output():
    """The if's result is returned: each branch computes straight into the output buffer
    (no alloc in a branch, no copy)."""
    lowered = lower(_gate_source())
    assert "memory.copy" not in _ops(lowered)
    (lif,) = [op for op in lowered.walk() if op.name == "loop.if"]
    assert not lif.results and "memory.alloc" not in _ops(lif)


def test_compiled_gate_matches_the_interpreter():
    compile_module = _backend()
    src = _gate_source()
    from irkit.parser import parse_module
    graph = parse_module(src)
    jit = compile_module(lower(src))
    for taken in (True, False):
        args = _gate_args(taken, 7)
        want, _ = run_graph(graph, "forward", args)
        out = garbage(want[0].shape, want[0].dtype)
        jit.forward(*args, out)
        same(out, want[0], what=f"taken={taken}")


NESTED = """
func.func @f(%p: tensor<i1>, %q: tensor<i1>, %x: tensor<?x3xf32>, %y: tensor<3xf32>)
    -> tensor<?x3xf32> {
  %t = graph.exp %x : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %0 = graph.if %p -> (tensor<?x3xf32>) {
    %a = graph.add %t, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    %1 = graph.if %q -> (tensor<?x3xf32>) {
      %b = graph.mul %a, %a : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      graph.yield %b : tensor<?x3xf32>
    } else {
      graph.yield %t : tensor<?x3xf32>
    }
    %c = graph.sub %1, %a : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    graph.yield %c : tensor<?x3xf32>
  } else {
    %d = graph.neg %t : (tensor<?x3xf32>) -> tensor<?x3xf32>
    graph.yield %d : tensor<?x3xf32>
  }
  %r = graph.add %0, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}"""


@pytest.mark.parametrize("parallel", [True, False])
def test_nested_if(parallel):
    x, y = rand(4, 3), rand(3)
    lowered = check(NESTED, *[(p, q, x, y) for p in (TRUE, FALSE) for q in (TRUE, FALSE)],
                    parallel=parallel)
    assert _ops(lowered).count("loop.if") == 2


# One conditional, its results returned (RETURNED) or used by later ops (NOT_RETURNED).
_IF = """
func.func @f(%p: tensor<i1>, %x: tensor<?xf32>, %y: tensor<4xi32>)
    -> ({results}) {{
  %0, %1 = graph.if %p -> (tensor<?xf32>, tensor<4xi32>) {{
    %a = graph.exp %x : (tensor<?xf32>) -> tensor<?xf32>
    graph.yield %a, %y : tensor<?xf32>, tensor<4xi32>
  }} else {{
    %b = graph.neg %y : (tensor<4xi32>) -> tensor<4xi32>
    graph.yield %x, %b : tensor<?xf32>, tensor<4xi32>
  }}
{rest}
}}"""

RETURNED = _IF.format(
    results="tensor<?xf32>, tensor<4xi32>, tensor<?xf32>",
    rest="  return %0, %1, %0 : tensor<?xf32>, tensor<4xi32>, tensor<?xf32>")


def test_if_results_returned():
    """Destination passing: both results live in output buffers, written by each branch
    (computed in place or copied); the result returned twice is copied at the return."""
    x, y = rand(6), rand(4, dtype=np.int32)
    lowered = check(RETURNED, (TRUE, x, y), (FALSE, x, y))
    assert "memory.alloc" not in _ops(lowered)


NOT_RETURNED = _IF.format(results="tensor<?xf32>, tensor<4xi32>", rest="""\
  %2 = graph.add %0, %0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %3 = graph.mul %1, %1 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %2, %3 : tensor<?xf32>, tensor<4xi32>""")


def test_if_results_in_temporaries():
    """A static result gets a buffer before the loop.if, a dynamic one is yielded as a memref
    by the branch that made it; both are freed after their last use (run_lowered checks)."""
    x, y = rand(6), rand(4, dtype=np.int32)
    lowered = check(NOT_RETURNED, (TRUE, x, y), (FALSE, x, y))
    (lif,) = [op for op in lowered.walk() if op.name == "loop.if"]
    assert [str(r.type) for r in lif.results] == ["memref<?xf32>"]


def test_compiled_if_yielding_a_memref():
    compile_module = _backend()
    from irkit.parser import parse_module
    graph = parse_module(NOT_RETURNED)
    jit = compile_module(lower(NOT_RETURNED))
    x, y = rand(6), rand(4, dtype=np.int32)
    for p in (TRUE, FALSE):
        want, _ = run_graph(graph, "f", (p, x, y))
        outs = [garbage(w.shape, w.dtype) for w in want]
        jit.f(p, x, y, *outs)
        for i, (g, w) in enumerate(zip(outs, want)):
            same(g, w, what=f"p={p} result #{i}")


ASSIGN = """
graph.variable @v : tensor<3xf32> init normal {seed = 1 : i64}
func.func @f(%p: tensor<i1>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %old = graph.read @v : tensor<3xf32>
  %0 = graph.if %p -> (tensor<3xf32>) {
    %n = graph.add %old, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    graph.assign @v, %n : tensor<3xf32>
    graph.yield %n : tensor<3xf32>
  } else {
    graph.yield %x : tensor<3xf32>
  }
  %now = graph.read @v : tensor<3xf32>
  return %old, %now : tensor<3xf32>, tensor<3xf32>
}"""


def test_assign_inside_a_branch_happens_only_when_taken():
    """`check` compares the variable afterwards too: updated when p, untouched otherwise; the
    value read before the if is the old one either way (a snapshot, since the branch
    assigns the variable while it is still needed)."""
    x = rand(3)
    check(ASSIGN, (TRUE, x), (FALSE, x))
