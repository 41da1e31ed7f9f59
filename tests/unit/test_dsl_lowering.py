"""The DSL's language features, each run by the interpreter against a numpy formula written
here: operators and precedence, literal typing, builtins, indexing, fn inlining, `if`."""

from __future__ import annotations

import numpy as np
import pytest

import irkit
from irkit.frontend.dsl import compile_source, find_model
from irkit.frontend.dsl.syntax import parse_program
from irkit.interpreter import DEAD

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype(np.float32)


def run(body: str, *args, inputs: str = "input x: f32[N, 4]", outputs: str = "y",
        prelude: str = ""):
    """Compile `body` as the statements of a model and run it on `args` (default X)."""
    src = f"{prelude}\nmodel t {{\n  {inputs}\n{body}\n  output {outputs}\n}}\n"
    m = find_model(compile_source(src, "t.irk"), "t")
    irkit.verify(m)
    return irkit.interpret(m, "forward", *(args or (X,)))


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


# ----- operators -------------------------------------------------------------------------------


def test_precedence_is_pythons():
    # ** binds tighter than unary minus; @ like *; comparisons below arithmetic
    close(run("y = -x ** 2 + 2 * x - 1"), -X ** 2 + 2 * X - 1)
    close(run("y = x - x / 2 * 3"), X - X / 2 * 3)
    close(run("y = 2 ** -x"), 2.0 ** -X)
    w = RNG.normal(size=(4, 4)).astype(np.float32)
    close(run("y = x @ w * 2", X, w, inputs="input x: f32[N, 4]; input w: f32[4, 4]"),
          (X @ w) * 2)


def test_comparisons_and_logic():
    got = run("y = x > 0 and not (x > 1) or x == 0")
    np.testing.assert_array_equal(got, ((X > 0) & ~(X > 1)) | (X == 0))
    assert got.dtype == np.bool_


def test_literals_take_the_other_operand_type():
    k = np.array([1, 2, 3], np.int32)
    got = run("y = k * 2 + 1", k, inputs="input k: i32[N]")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, k * 2 + 1)
    got = run("y = x * 2", np.float64(1.5), inputs="input x: f64")
    assert got.dtype == np.float64 and got == 3.0


def test_literal_alone_is_f32_or_i32():
    assert run("y = 1.5 + 0 * sum(x)").dtype == np.float32
    m = find_model(compile_source("model t { input x: f32; output y; y = 7 }", "t.irk"), "t")
    assert irkit.interpret(m, "forward", np.float32(0)).dtype == np.int32


def test_consts_lists_and_indexing_literals():
    prelude = "const scale = [[1, 2, 3, 4], [5, 6, 7, 8]]"
    close(run("y = x * scale[1] - scale[0, ::-1]", prelude=prelude),
          X * np.array([5, 6, 7, 8]) - np.array([4, 3, 2, 1]))


def test_list_of_tensors_stacks():
    close(run("y = [sum(x), max(x), 1.0]"), np.stack([X.sum(), X.max(), 1.0]))


# ----- builtins ------------------------------------------------------------------------------


@pytest.mark.parametrize("expr, want", [
    ("sum(x, axis=[0, 1])", X.sum()),
    ("mean(x, axis=0, keepdims=true)", X.mean(axis=0, keepdims=True)),
    ("max(x, axis=-1)", X.max(axis=-1)),
    ("min(x)", X.min()),
    ("exp(x) + log(abs(x)) + sqrt(abs(x)) + rsqrt(abs(x))",
     np.exp(X) + np.log(np.abs(X)) + np.sqrt(np.abs(X)) + 1 / np.sqrt(np.abs(X))),
    ("tanh(x) + sigmoid(x) + relu(x) + sin(x) * cos(x)",
     np.tanh(X) + 1 / (1 + np.exp(-X)) + np.maximum(X, 0) + np.sin(X) * np.cos(X)),
    ("softplus(x)", np.log1p(np.exp(X))),
    ("maximum(x, 0.5) + minimum(0, x)", np.maximum(X, 0.5) + np.minimum(0, X)),
    ("pow(abs(x), 1.5)", np.abs(X) ** 1.5),
    ("where(x > 0, x, 0)", np.where(X > 0, X, 0)),
    ("log_softmax(x)", X - X.max(1, keepdims=True)
     - np.log(np.exp(X - X.max(1, keepdims=True)).sum(1, keepdims=True))),
    ("mse(x, 1)", np.mean((X - 1) ** 2)),
    ("transpose(x)", X.T),
    ("transpose(x, perm=[1, 0])", X.T),
    ("reshape(x, [2, -1])", X.reshape(2, -1)),
    ("concat([x, x * 2], axis=1)", np.concatenate([X, 2 * X], axis=1)),
    ("slice(x, start=[1], stop=[3])", X[1:3]),
    ("slice(x, start=[0, 3], stop=[9223372036854775807, 0], step=[2, -1])", X[::2, 3:0:-1]),
    ("matmul(x, transpose(x))", X @ X.T),
])
def test_builtin(expr, want):
    close(run(f"y = {expr}"), want)


def test_argmax_cast_one_hot_gather():
    got = run("y = argmax(x, axis=1)")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, X.argmax(axis=1))
    np.testing.assert_array_equal(run("y = cast(x > 0, f32)"), (X > 0).astype(np.float32))
    idx = np.array([2, 0], np.int32)
    np.testing.assert_array_equal(run("y = one_hot(i, 3)", idx, inputs="input i: i32[K]"),
                                  np.eye(3, dtype=np.float32)[idx])
    table = RNG.normal(size=(5, 2)).astype(np.float32)
    close(run("y = gather(t, i)", table, idx, inputs="input t: f32[5, 2]; input i: i32[K]"),
          table[idx])


def test_split_and_tuple_assignment():
    a, b = run("a, b = split(x, 2, axis=1)", outputs="a, b")
    close(a, X[:, :2])
    close(b, X[:, 2:])


def test_broadcast_to_symbolic_size():
    v = np.arange(4, dtype=np.float32)
    got = run("y = broadcast_to(v, [N, 4])", X, v, inputs="input x: f32[N, 4]; input v: f32[4]")
    np.testing.assert_array_equal(got, np.broadcast_to(v, (3, 4)))


def test_normalizations_and_pooling():
    img = RNG.normal(size=(2, 3, 4, 4)).astype(np.float32)
    c = np.array([0.5, 1.0, 2.0], np.float32)
    got = run("y = batchnorm(x, c, c, c, c, eps=0.1)", img, c,
              inputs="input x: f32[B, 3, 4, 4]; input c: f32[3]")
    cc = c[:, None, None]
    close(got, (img - cc) / np.sqrt(cc + 0.1) * cc + cc)
    got = run("y = layernorm(x, c, c, axis=1)", img, c,
              inputs="input x: f32[B, 3, 4, 4]; input c: f32[3]")
    mu = img.mean(1, keepdims=True)
    var = ((img - mu) ** 2).mean(1, keepdims=True)
    close(got, (img - mu) / np.sqrt(var + 1e-5) * cc + cc)
    got = run("y = avg_pool2d(x, kernel=2)", img, inputs="input x: f32[B, 3, 4, 4]")
    close(got, img.reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5)))


# ----- indexing ------------------------------------------------------------------------------


@pytest.mark.parametrize("index, want", [
    ("x[1]", X[1]), ("x[-1]", X[-1]), ("x[:, 2]", X[:, 2]), ("x[1:, ::2]", X[1:, ::2]),
    ("x[::-1]", X[::-1]), ("x[0, -1]", X[0, -1]), ("x[-2:, 1:3]", X[-2:, 1:3]),
])
def test_indexing(index, want):
    close(run(f"y = {index}"), want)


def test_indexing_keeps_two_symbolic_dims():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    close(run("y = x[:, :, 1]", x, inputs="input x: f32[B, T, 4]"), x[:, :, 1])


# ----- fn and if -------------------------------------------------------------------------------


def test_fn_inlined_with_several_returns_and_keywords():
    prelude = "fn both(a, k) { s = a * k; return s, -s }\nfn twice(a) { return both(a, 2) }"
    p, n = run("p, n = twice(x)\nq, r = both(k=3, a=x)", outputs="p, n", prelude=prelude)
    close(p, 2 * X)
    close(n, -2 * X)
    m = find_model(compile_source(prelude + "\nmodel t { input x: f32; a, b = both(x, 1); "
                                  "output a }", "t.irk"), "t")
    assert not any(op.name == "func.call" for op in m.walk())


@pytest.mark.parametrize("shift", [-10.0, 0.0, 10.0])
def test_if_else_if_chain(shift):
    body = ("y = if sum(x) > 1.0 { a = x * 2; a + 1 } else if sum(x) < -1.0 { -x } "
            "else { x }")
    x = X + shift
    s = x.sum()
    want = x * 2 + 1 if s > 1 else (-x if s < -1 else x)
    close(run(body, x), want)


def test_if_with_param_and_literal_branches():
    src = ("model t {\n  input x: f32\n  param p: f32 = constant(4.0)\n"
           "  y = if x > 0.0 { p } else { 1.0 }\n  output y\n}\n")
    m = find_model(compile_source(src, "t.irk"), "t")
    assert irkit.interpret(m, "forward", np.float32(1)) == 4.0
    assert irkit.interpret(m, "forward", np.float32(-1)) == 1.0


def test_untaken_branch_sees_only_dead_values():
    """The else branch's log would be NaN for a negative input: it must not run at all."""
    from irkit.interpreter import Interpreter
    src = "model t { input x: f32; y = if x < 0.0 { -x } else { log(x) }; output y }"
    m = find_model(compile_source(src, "t.irk"), "t")
    fn = next(op for op in m.walk() if op.name == "func.func")
    seen = {}
    interp = Interpreter(m)
    out = interp.call(fn, [np.float32(-4.0)])
    assert out[0] == 4.0
    log_op = next(op for op in fn.walk() if op.name == "graph.log")
    env = interp.env
    seen["log"] = env.get(log_op.results[0])
    assert seen["log"] is DEAD


# ----- syntax details -------------------------------------------------------------------------


def test_newlines_inside_parentheses_and_semicolons():
    src = ("model t {\n  input x: f32[N, 4]; y = sum(\n    x,\n    axis=1,   # per row\n  )\n"
           "  output y\n}\n")
    m = find_model(compile_source(src, "t.irk"), "t")
    close(irkit.interpret(m, "forward", X), X.sum(axis=1))


def test_ast_positions():
    prog = parse_program("model m {\n  input x: f32\n  y = x +  x\n  output y\n}\n", "p.irk")
    assign = prog.items[0].body[1]
    assert assign.pos == (3, 3) and assign.value.pos == (3, 9)
    assert prog.items[0].body[0].type.dims == []
