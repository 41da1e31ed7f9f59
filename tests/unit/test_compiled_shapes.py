"""Every output the interpreter returns, the compiled engines return: output shapes with
symbolic dims (issue 12, defect 3), and run-time shape errors that name the op that fails and
its model line (defect 5).

The runtime allocates outputs from the graph ops' own shape functions run on the call's
sizes (`irkit.runtime.shapes.concrete_output_shapes`); the header documents them symbolically
(`output_dims`). A size read at run time (`graph.dim`, which a `broadcast_to` to `[N, 2]` and
the derivatives of reshape, concat and the losses use) is carried to the ops that take it, so
both derive. Expected values come from the interpreter and numpy, never from the runtime."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import irkit
from irkit.frontend.dsl import compile_source, model_modules
from irkit.runtime.model import Model

pytest.importorskip("llvmlite")

HAS_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))

BROADCAST = """model b {
  input x: f32[N, 2]
  param bb: f32[2] = normal(seed=3)
  y = broadcast_to(bb, [N, 2])
  output y
}
"""


def _compile_so(tmp_path, name: str, text: str):
    """`irkit-compile NAME.irk -o NAME.so`: the directory holding .so, .h and .so.json."""
    from irkit.tools.compile import main as compile_main
    if not HAS_CC:
        pytest.skip("no C compiler")
    src = tmp_path / f"{name}.irk"
    src.write_text(text)
    assert compile_main([str(src), "-o", str(tmp_path / f"{name}.so")]) == 0
    return tmp_path / f"{name}.so"


# ---------------------------------------------------------------------------------------------
# broadcast_to a symbolic size (the reported case)
# ---------------------------------------------------------------------------------------------


def _forward_fn(mod):
    return next(op for op in mod.regions[0].blocks[0].ops
                if op.name == "func.func" and op.properties["sym_name"].value == "forward")


def test_broadcast_to_symbolic_size_has_symbolic_output_dims():
    from irkit.runtime.shapes import output_dims
    mod = model_modules(compile_source(BROADCAST, "bc.irk"))["b"]
    assert output_dims(_forward_fn(mod)) == [["N", 2]]


@pytest.mark.parametrize("n", [3, 1, 0])
def test_broadcast_to_symbolic_size_runs_jit(n):
    mod = model_modules(compile_source(BROADCAST, "bc.irk"))["b"]
    x = np.zeros((n, 2), np.float32)
    dev, jit = Model(mod), Model(mod, engine="jit")
    want = dev.forward(x=x)["y"]
    got = jit.forward(x=x)["y"]
    assert got.shape == want.shape == (n, 2)
    np.testing.assert_array_equal(got, np.broadcast_to(dev.variables["bb"], (n, 2)))
    np.testing.assert_array_equal(got, want)


def test_broadcast_to_symbolic_size_runs_from_a_library(tmp_path):
    so = _compile_so(tmp_path, "bc", BROADCAST)
    header = so.with_suffix(".h").read_text()
    assert "output 0  y: f32[N, 2]" in header
    assert "shape not derived" not in header
    lib = irkit.load(so)
    dev = irkit.load_model(tmp_path / "bc.irk")
    for n in (4, 1):
        x = np.ones((n, 2), np.float32)
        got = lib.forward(x=x)["y"]
        assert got.shape == (n, 2)
        np.testing.assert_array_equal(got, dev.forward(x=x)["y"])


# ---------------------------------------------------------------------------------------------
# The sweep: every op the DSL emits with a symbolic dim in its output
# ---------------------------------------------------------------------------------------------


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _i(rng, hi, *shape):
    return rng.integers(0, hi, shape).astype(np.int32)


#: name -> (model body, inputs for a batch size n). Each body has an output `y`.
SWEEP = {
    "broadcast_param": ("input x: f32[N, 2]\n  param bb: f32[2] = normal(seed=1)\n"
                        "  y = broadcast_to(bb, [N, 2])\n  output y",
                        lambda r, n: {"x": _f(r, n, 2)}),
    "broadcast_two_symbols": ("input x: f32[N, 4]\n  input z: f32[M]\n"
                              "  y = broadcast_to(x[0], [M, N, 4])\n  output y",
                              lambda r, n: {"x": _f(r, n, 4), "z": _f(r, n + 1)}),
    "reshape_fill": ("input x: f32[N, 4]\n  y = reshape(x, [-1, 2])\n  output y",
                     lambda r, n: {"x": _f(r, n, 4)}),
    "reshape_flatten": ("input x: f32[N, M]\n  y = reshape(x, [-1])\n  output y",
                        lambda r, n: {"x": _f(r, n, 3)}),
    "reshape_keep_symbol": ("input x: f32[N, 6, 6]\n  y = reshape(x, [-1, 36])\n  output y",
                            lambda r, n: {"x": _f(r, n, 6, 6)}),
    "slices": ("input x: f32[N, 4]\n  y = x[1:]\n  a = x[:-1, 1:3]\n  b = x[::2]\n"
               "  c = x[::-1, 0]\n  d = x[0:2, :]\n  output y, a, b, c, d",
               lambda r, n: {"x": _f(r, n + 1, 4)}),
    "index_middle": ("input x: f32[B, T, 4]\n  y = x[:, 0]\n  output y",
                     lambda r, n: {"x": _f(r, n, 3, 4)}),
    "split_concat": ("input x: f32[N, 4]\n  a, b = split(x, 2)\n  y = concat([b, a, x])\n"
                     "  output y, a, b", lambda r, n: {"x": _f(r, 2 * n, 4)}),
    "split_axis1": ("input x: f32[N, M]\n  a, b, c = split(x, 3, axis=1)\n"
                    "  y = concat([c, a], axis=1)\n  output y, b",
                    lambda r, n: {"x": _f(r, 2, 3 * n)}),
    "concat_two_symbols": ("input x: f32[N, 3]\n  input z: f32[M, 3]\n  y = concat([x, z])\n"
                           "  output y", lambda r, n: {"x": _f(r, n, 3), "z": _f(r, 2, 3)}),
    "one_hot": ("input k: i32[N]\n  y = one_hot(k, 5)\n  output y",
                lambda r, n: {"k": _i(r, 5, n)}),
    "gather": ("input k: i32[N, 2]\n  param t: f32[10, 3] = normal(seed=2)\n"
               "  y = gather(t, k)\n  output y", lambda r, n: {"k": _i(r, 10, n, 2)}),
    "transpose": ("input x: f32[N, 3, M]\n  y = transpose(x)\n  z = transpose(x, [1, 2, 0])\n"
                  "  output y, z", lambda r, n: {"x": _f(r, n, 3, n + 2)}),
    "matmul": ("input x: f32[N, 3]\n  input w: f32[3, M]\n  y = x @ w\n"
               "  z = matmul(transpose(w), transpose(x))\n  output y, z",
               lambda r, n: {"x": _f(r, n, 3), "w": _f(r, 3, n + 3)}),
    "conv2d": ("input x: f32[N, 2, H, W]\n  param w: f32[4, 2, 3, 3] = normal(seed=3)\n"
               "  y = conv2d(x, w, stride=2, padding=1)\n  output y",
               lambda r, n: {"x": _f(r, n, 2, n + 5, 6)}),
    "pooling": ("input x: f32[N, C, H, W]\n  y = max_pool2d(x, [2, 2])\n"
                "  z = avg_pool2d(x, [3, 3], [1, 2])\n  output y, z",
                lambda r, n: {"x": _f(r, n, 3, 6, n + 5)}),
    "reductions_keepdims": ("input x: f32[N, M]\n  y = sum(x, axis=1, keepdims=true)\n"
                            "  a = mean(x, axis=0, keepdims=true)\n  b = max(x, axis=1)\n"
                            "  c = min(x, axis=0)\n  d = argmax(x, axis=1, keepdims=true)\n"
                            "  output y, a, b, c, d", lambda r, n: {"x": _f(r, n, n + 2)}),
    "normalizations": ("input x: f32[N, 4]\n  param g: f32[4] = ones\n"
                       "  param be: f32[4] = zeros\n  y = softmax(x)\n"
                       "  a = log_softmax(x, axis=0)\n  b = layernorm(x, g, be)\n"
                       "  output y, a, b", lambda r, n: {"x": _f(r, n, 4)}),
    "outer_broadcast": ("input x: f32[N, 1]\n  input z: f32[1, M]\n  y = maximum(x, z)\n"
                        "  a = where(x > z, x, z)\n  b = cast(x + z, i32)\n  output y, a, b",
                        lambda r, n: {"x": _f(r, n, 1), "z": _f(r, 1, n + 1)}),
    "conditional": ("input x: f32[N]\n  y = if sum(x) > 0.0 { x[1:] } else { x[:-1] }\n"
                    "  z = if sum(x) > 1.0 { x * 3.0 } else { x }\n  output y, z",
                    lambda r, n: {"x": _f(r, n + 1)}),
    # derivatives read run-time sizes with graph.dim (broadcast_to, sized reshape and split,
    # one_hot with a run-time depth)
    "grad_input": ("input x: f32[N, 3]\n  param w: f32[3] = ones\n  y = sum(x * w)\n"
                   "  output y\n  grad y wrt x", lambda r, n: {"x": _f(r, n, 3)}),
    "grad_reshape": ("input x: f32[N, M, 4]\n  y = sum(reshape(x, [-1, 4]) * 2.0)\n"
                     "  output y\n  grad y wrt x", lambda r, n: {"x": _f(r, n, 3, 4)}),
    "grad_concat": ("input x: f32[N, 2]\n  input z: f32[M, 2]\n"
                    "  y = sum(concat([x, z]) ** 2.0)\n  output y\n  grad y wrt x, z",
                    lambda r, n: {"x": _f(r, n, 2), "z": _f(r, 3, 2)}),
    "grad_cross_entropy": ("input x: f32[N, C]\n  input k: i32[N]\n"
                           "  y = cross_entropy(x, k)\n  output y\n  grad y wrt x",
                           lambda r, n: {"x": _f(r, n, 4), "k": _i(r, 4, n)}),
}


def _sweep_source() -> str:
    return "".join(f"model {name} {{\n  {body}\n}}\n" for name, (body, _) in SWEEP.items())


@pytest.fixture(scope="module")
def sweep_modules():
    return model_modules(compile_source(_sweep_source(), "sweep.irk"))


def _assert_like_interpreter(dev, compiled, inputs):
    want = dev.forward(**inputs)
    got = compiled.forward(**inputs)
    assert got.keys() == want.keys()
    for k in want:
        assert np.shape(got[k]) == np.shape(want[k]), k
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("name", list(SWEEP))
def test_jit_returns_every_symbolic_output(sweep_modules, name):
    mod = sweep_modules[name]
    dev, jit = Model(mod), Model(mod, engine="jit")
    rng = np.random.default_rng(0)
    for n in (2, 3, 2):                 # two sizes, then the first again (the cache)
        _assert_like_interpreter(dev, jit, SWEEP[name][1](rng, n))


@pytest.fixture(scope="module")
def sweep_library(tmp_path_factory):
    return _compile_so(tmp_path_factory.mktemp("sweep"), "sweep", _sweep_source())


@pytest.mark.parametrize("name", ["broadcast_two_symbols", "slices", "split_concat",
                                  "conv2d", "grad_concat", "grad_cross_entropy"])
def test_library_returns_symbolic_outputs(sweep_library, sweep_modules, name):
    lib = irkit.load(sweep_library, model=name)
    dev = Model(sweep_modules[name])
    rng = np.random.default_rng(1)
    for n in (3, 1):
        _assert_like_interpreter(dev, lib, SWEEP[name][1](rng, n))


def _header_block(text: str, fn: str) -> str:
    """The comment block that documents function `fn` in a header."""
    start = text.index(f"/* {fn}: call with")
    return text[start:text.index("*/", start)]


@pytest.mark.parametrize("fn, line", [
    ("broadcast_param_forward", "output 0  y: f32[N, 2]"),
    ("broadcast_two_symbols_forward", "output 0  y: f32[M, N, 4]"),
    ("reshape_keep_symbol_forward", "output 0  y: f32[N, 36]"),
    ("one_hot_forward", "output 0  y: f32[N, 5]"),
    ("gather_forward", "output 0  y: f32[N, 2, 3]"),
    ("transpose_forward", "output 1  z: f32[3, M, N]"),
    ("reductions_keepdims_forward", "output 4  d: i64[N, 1]"),
    ("grad_input_forward", "output 1  d_x: f32[N, 3]"),
    ("grad_cross_entropy_forward", "output 1  d_x: f32[N, C]"),
])
def test_header_documents_symbolic_dims(sweep_library, fn, line):
    """Outputs whose dims are input symbols are documented so, those of run-time sizes
    (`graph.dim`) included; the others (`N + M`, `N - 1` have no spelling) are allocated
    from the shape functions on the call's sizes by the Python runtime."""
    block = _header_block(sweep_library.with_suffix(".h").read_text(), fn)
    assert line in block


# ---------------------------------------------------------------------------------------------
# Run-time shape errors name the op that fails and its line
# ---------------------------------------------------------------------------------------------


SPLIT = """model s {
  input x: f32[N]
  a, b = split(x, 2)
  y = concat([a, b])
  output y
}
"""

RESHAPE = """model r {
  input x: f32[N]
  y = reshape(x, [-1, 2])
  output y
}
"""


def _interpreter_error(path, x) -> str:
    with pytest.raises(irkit.IRError) as e:
        irkit.load_model(path).forward(x=x)
    return str(e.value)


def _assert_located_like(message: str, model: str, reference: str, where: str, op: str):
    """`message` is `<model>.forward: ` then the interpreter's diagnostic: the same
    file:line:col and op, the same source line and caret."""
    head, line, caret = reference.split("\n")
    assert head.startswith(f"{where}: error: '{op}' failed")
    assert message.startswith(f"{model}.forward: {where}: error: '{op}' failed: ")
    assert message.endswith(f"\n{line}\n{caret}")
    assert caret.strip() == "^"


@pytest.mark.parametrize("text, model, where, op, line", [
    (SPLIT, "s", "3:10", "graph.split", "  a, b = split(x, 2)"),
    (RESHAPE, "r", "3:7", "graph.reshape", "  y = reshape(x, [-1, 2])"),
])
def test_shape_errors_name_the_op_and_line(tmp_path, text, model, where, op, line):
    path = tmp_path / f"{model}.irk"
    path.write_text(text)
    x = np.zeros(5, np.float32)
    reference = _interpreter_error(path, x)
    assert line in reference
    jit = irkit.load_model(path, engine="jit")
    with pytest.raises(ValueError) as e:
        jit.forward(x=x)
    _assert_located_like(str(e.value), model, reference, f"{path}:{where}", op)
    np.testing.assert_array_equal(jit.forward(x=np.arange(4, dtype=np.float32))["y"],
                                  irkit.load_model(path).forward(
                                      x=np.arange(4, dtype=np.float32))["y"])
    if HAS_CC:
        lib = irkit.load(_compile_so(tmp_path, model, text))
        with pytest.raises(ValueError) as e:
            lib.forward(x=x)
        _assert_located_like(str(e.value), model, reference, f"{path}:{where}", op)


def test_no_error_for_sizes_a_branch_not_taken_rejects():
    """The then-branch's reshape rejects 5 elements, but the else-branch runs: the shape
    functions of a branch that may not run do not raise."""
    src = """model g {
  input x: f32[N]
  y = if sum(x) > 0.0 { sum(reshape(x, [-1, 2])) } else { sum(x) }
  output y
}
"""
    mod = model_modules(compile_source(src, "g.irk"))["g"]
    x = -np.ones(5, np.float32)
    _assert_like_interpreter(Model(mod), Model(mod, engine="jit"), {"x": x})


def test_output_whose_size_depends_on_the_branch_taken_is_a_located_error():
    """Both branches are `f32[?]`, so the model is valid, but which size the output has
    depends on the data: compiled code, whose outputs are allocated before the call, cannot
    return it (a known limit, issue 12); the error names the conditional, not the output."""
    src = """model c {
  input x: f32[N]
  y = if sum(x) > 0.0 { x[1:] } else { x[2:] }
  output y
}
"""
    mod = model_modules(compile_source(src, "c.irk"))["c"]
    x = np.ones(4, np.float32)
    assert Model(mod).forward(x=x)["y"].shape == (3,)
    with pytest.raises(ValueError) as e:
        Model(mod, engine="jit").forward(x=x)
    assert str(e.value).startswith("c.forward: c.irk:3:7: error: output 'y' has shape [2] or "
                                   "[3] depending on which branch")
    assert str(e.value).endswith("\n      ^")
