"""graph-merge-matmuls on random shapes: x of rank 1 to 3 (each dim static or `?` in its
type), two to four weights of random widths (function arguments or constants), the pass with
the default or the smallest `min-rows`. The interpreter gives the same results before and
after (up to the summation order of numpy's matmul on a wider N: K <= 6 terms of size ~1,
so atol = 1e-5), and the pass merges exactly when its rule says so.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from irkit.dialects.graph import MatmulOp
from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import register_all


def _tensor(shape) -> str:
    return "tensor<" + "".join(("?" if d is None else str(d)) + "x" for d in shape) + "f32>"


def _dense(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=10**6,
                                      formatter={"float_kind": lambda v: f"{v:.6e}"}) + ">"


@st.composite
def cases(draw):
    rank = draw(st.integers(1, 3))
    k = draw(st.integers(1, 6))
    sizes = tuple(draw(st.integers(1, 4)) for _ in range(rank - 1)) + (k,)
    dynamic = tuple(draw(st.booleans()) for _ in range(rank))
    widths = draw(st.lists(st.integers(1, 5), min_size=2, max_size=4))
    constant = draw(st.lists(st.booleans(), min_size=len(widths), max_size=len(widths)))
    min_rows = draw(st.sampled_from([1, 16]))
    seed = draw(st.integers(0, 2**31 - 1))
    return sizes, dynamic, widths, constant, min_rows, seed


def _program(sizes, dynamic, widths, constant, rng) -> tuple[str, list]:
    """The function's text and its arguments: x, then the non-constant weights."""
    k = sizes[-1]
    x_type = _tensor(d if not dyn else None for d, dyn in zip(sizes, dynamic))
    params, args, body, results = [f"%x: {x_type}"], [rng.normal(size=sizes)], [], []
    for i, (n, const) in enumerate(zip(widths, constant)):
        w = rng.normal(size=(k, n)).astype(np.float32)
        if const:
            body.append(f"%w{i} = graph.constant {_dense(w)} : {_tensor((k, n))}")
        else:
            params.append(f"%w{i}: {_tensor((k, n))}")
            args.append(w)
        y_type = _tensor(tuple(d if not dyn else None
                               for d, dyn in zip(sizes[:-1], dynamic[:-1])) + (n,))
        body.append(f"%y{i} = graph.matmul %x, %w{i} : ({x_type}, {_tensor((k, n))}) "
                    f"-> {y_type}")
        results.append((f"%y{i}", y_type))
    text = (f"func.func @f({', '.join(params)}) -> ({', '.join(t for _, t in results)}) {{\n  "
            + "\n  ".join(body)
            + f"\n  return {', '.join(v for v, _ in results)} : "
            + f"{', '.join(t for _, t in results)}\n}}\n")
    return text, [np.asarray(a, np.float32) for a in args]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_merge_preserves_results(case):
    sizes, dynamic, widths, constant, min_rows, seed = case
    text, args = _program(sizes, dynamic, widths, constant, np.random.default_rng(seed))
    register_all()
    module = parse_module(text)
    want = interpret(module, "f", *args)
    PassManager.parse(f"graph-merge-matmuls{{min-rows={min_rows}}}").run(module)
    got = interpret(module, "f", *args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    # The rule: merged when every weight is constant, or x has a `?` row dim, or at least
    # min-rows rows.
    rows = int(np.prod(sizes[:-1]))
    expect = all(constant) or any(dynamic[:-1]) or rows >= min_rows
    matmuls = sum(1 for op in module.walk() if isinstance(op, MatmulOp))
    assert matmuls == (1 if expect else len(widths))
