"""Every kind of DSL error, checked as the user sees it: `file:line:col: error: ...`, the
source line, and the caret under the offending token (notes included)."""

from __future__ import annotations

import textwrap

import pytest

from irkit.frontend.dsl import DSLError, DSLSyntaxError, compile_source

MODEL = """\
model m {
  input x: f32[N, 784]
  param W: f32[784, 10] = zeros
  param b: f32[10] = zeros
"""


def rendered(src: str, *, wrap: bool = False) -> str:
    """The rendered error of compiling `src` (with `wrap`, as statements of model m)."""
    src = textwrap.dedent(src)
    if wrap:
        src = MODEL + textwrap.indent(src, "  ") + "}\n"
    with pytest.raises(DSLError) as info:
        compile_source(src, "m.irk")
    return info.value.render()


def expect(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# ----- syntax ---------------------------------------------------------------------------------


def test_unexpected_end_of_line():
    assert rendered("h = x @ W +\noutput h\n", wrap=True) == expect("""
        m.irk:5:14: error: unexpected end of line; expected an expression
          h = x @ W +
                     ^""")
    with pytest.raises(DSLSyntaxError):
        compile_source("model m {\n  y = x +\n}\n")


def test_unexpected_token():
    assert rendered("y = x +* 2\noutput y\n", wrap=True) == expect("""
        m.irk:5:10: error: unexpected '*'; expected an expression
          y = x +* 2
                 ^""")


def test_unexpected_keyword_lists_what_fits():
    assert rendered("model m {\n  input x: f32[3\n  output x\n}\n") == expect("""
        m.irk:3:3: error: unexpected keyword 'output'; expected ',' or ']'
          output x
          ^""")


def test_unexpected_character():
    assert rendered("h = x @ W $ b\noutput h\n", wrap=True) == expect("""
        m.irk:5:13: error: unexpected character '$'
          h = x @ W $ b
                    ^""")


def test_unexpected_end_of_file():
    assert rendered("model m {\n  input x: f32[3]\n  output x\n") == expect("""
        m.irk:3:11: error: unexpected end of file; expected '}'
          output x
                  ^""")


# ----- misspelled keywords: named as such, at the word, with the closest keyword -------------


def test_misspelled_declaration_in_a_model():
    assert rendered("model m {\n  inptu x: f32[N, 4]\n  output x\n}\n") == expect("""
        m.irk:2:3: error: unknown declaration 'inptu'; did you mean 'input'?
          inptu x: f32[N, 4]
          ^""")


def test_misspelled_model_at_the_top_level():
    assert rendered("modle m {\n  input x: f32[N, 4]\n  output x\n}\n") == expect("""
        m.irk:1:1: error: unknown declaration 'modle'; did you mean 'model'?
        modle m {
        ^""")


@pytest.mark.parametrize("line, word, keyword", [
    ("parm v: f32[4] = zeros", "parm", "param"),
    ("outptu x", "outptu", "output"),
    ("cosnt k = 2", "cosnt", "const"),
    ("grda s wrt W", "grda", "grad"),
    ("trian s with sgd(0.1)", "trian", "train"),
])
def test_misspelled_statement_keywords(line, word, keyword):
    src = "y = x @ W\ns = sum(y)\noutput y\n" + line + "\n"
    first = rendered(src, wrap=True).split("\n")[0]
    assert first == f"m.irk:8:3: error: unknown declaration '{word}'; did you mean '{keyword}'?"


def test_misspelled_return_after_a_brace():
    assert rendered("fn f(a) { retrun a }\nmodel m { input x: f32; output x }\n") == expect("""
        m.irk:1:11: error: unknown declaration 'retrun'; did you mean 'return'?
        fn f(a) { retrun a }
                  ^""")


def test_misspelled_keyword_inside_a_statement():
    src = "y = x @ W\ns = sum(y)\ngrad s wtr W\noutput y\n"
    assert rendered(src, wrap=True).split("\n")[0] == \
        "m.irk:7:10: error: unexpected name 'wtr'; did you mean 'wrt'?"


def test_a_word_like_no_keyword_keeps_the_plain_message():
    assert rendered("zzz x\noutput x\n", wrap=True).split("\n")[0] == \
        "m.irk:5:7: error: unexpected name 'x'; expected ',' or '='"


def test_misspelled_builtin():
    assert rendered("y = rleu(x)\noutput y\n", wrap=True).split("\n")[0] == \
        "m.irk:5:7: error: unknown function 'rleu'; did you mean 'relu'?"


# ----- names and calls ------------------------------------------------------------------------


def test_unknown_name_did_you_mean():
    assert rendered("h = x @ W + bb\noutput h\n", wrap=True) == expect("""
        m.irk:5:15: error: unknown name 'bb'; did you mean 'b'?
          h = x @ W + bb
                      ^""")


def test_name_used_before_its_definition():
    assert rendered("""\
        model m {
          input x: f32[3]
          y = x + V
          param V: f32[3] = ones
          output y
        }
        """) == expect("""
        m.irk:3:11: error: unknown name 'V'
          y = x + V
                  ^
        m.irk:4:9: note: 'V' is defined later, here
          param V: f32[3] = ones
                ^""")


def test_unknown_function():
    assert rendered("h = softmx(x)\noutput h\n", wrap=True) == expect("""
        m.irk:5:7: error: unknown function 'softmx'; did you mean 'softmax'?
          h = softmx(x)
              ^""")


def test_too_many_arguments():
    assert rendered("h = softmax(x, 1, 2)\noutput h\n", wrap=True) == expect("""
        m.irk:5:21: error: 'softmax' takes 2 arguments (x, axis), got 3
          h = softmax(x, 1, 2)
                            ^""")


def test_unknown_keyword():
    assert rendered("h = softmax(x, axes=1)\noutput h\n", wrap=True) == expect("""
        m.irk:5:18: error: 'softmax' has no argument 'axes'; did you mean 'axis'?
          h = softmax(x, axes=1)
                         ^""")


def test_missing_argument():
    assert rendered("h = matmul(x)\noutput h\n", wrap=True) == expect("""
        m.irk:5:7: error: 'matmul' is missing argument 'b'
          h = matmul(x)
              ^""")


def test_argument_given_twice():
    assert rendered("h = softmax(x, axis=1, axis=0)\noutput h\n", wrap=True) == expect("""
        m.irk:5:26: error: 'softmax' got two values for argument 'axis'
          h = softmax(x, axis=1, axis=0)
                                 ^""")


def test_static_argument_must_be_literal():
    assert rendered("h = sum(x, axis=x)\noutput h\n", wrap=True) == expect("""
        m.irk:5:19: error: argument 'axis' of 'sum' must be an integer or a list of integers
          h = sum(x, axis=x)
                          ^""")


# ----- shapes and types -----------------------------------------------------------------------


def test_broadcast_error_points_at_operator():
    assert rendered("h = x + b\noutput h\n", wrap=True) == expect("""
        m.irk:5:9: error: cannot broadcast f32[N, 784] with f32[10]
          h = x + b
                ^""")


def test_symbol_cannot_unify_with_a_number():
    assert rendered("h = x @ x\noutput h\n", wrap=True) == expect("""
        m.irk:5:9: error: cannot multiply f32[N, 784] by f32[N, 784]: inner dimensions 784 and N differ
          h = x @ x
                ^""")


def test_param_with_symbolic_dimension():
    assert rendered("param V: f32[N, 10] = zeros\noutput x\n", wrap=True) == expect("""
        m.irk:5:16: error: param 'V' must have a static shape: 'N' is a symbolic dimension (only inputs may have them)
          param V: f32[N, 10] = zeros
                       ^""")


def test_dtype_mismatch():
    assert rendered("""\
        model m {
          input x: f32[N]
          input l: i32[N]
          z = x + l
          output z
        }
        """) == expect("""
        m.irk:4:9: error: element types differ: f32[N] and i32[N]
          z = x + l
                ^""")


def test_float_literal_into_integer_tensor():
    assert rendered("model m {\n  input k: i32[3]\n  y = k * 0.5\n  output y\n}\n") == expect("""
        m.irk:3:11: error: the literal 0.5 cannot be i32; write cast(..., f32) on the other operand
          y = k * 0.5
                  ^""")


def test_unknown_element_type():
    assert rendered("model m {\n  input x: f33[3]\n  output x\n}\n") == expect("""
        m.irk:2:12: error: unknown element type 'f33'; did you mean 'f32'?
          input x: f33[3]
                   ^""")


def test_reshape_with_symbol_says_use_minus_one():
    assert rendered("h = reshape(x, [N, 784])\noutput h\n", wrap=True) == expect("""
        m.irk:5:19: error: reshape sizes must be integers: write -1 for the dynamic dimension 'N'
          h = reshape(x, [N, 784])
                          ^""")


def test_index_out_of_range():
    assert rendered("h = x[:, 784]\noutput h\n", wrap=True) == expect("""
        m.irk:5:12: error: index 784 is out of range for axis 1 of size 784
          h = x[:, 784]
                   ^""")


# ----- definitions ----------------------------------------------------------------------------


def test_duplicate_definition_has_note():
    assert rendered("h = x @ W\nh = x @ W\noutput h\n", wrap=True) == expect("""
        m.irk:6:3: error: redefinition of 'h'
          h = x @ W
          ^
        m.irk:5:3: note: 'h' was first defined here
          h = x @ W
          ^""")


def test_duplicate_model():
    src = "model m {\n  input x: f32\n  output x\n}\n"
    assert rendered(src + src) == expect("""
        m.irk:5:7: error: redefinition of model 'm'
        model m {
              ^
        m.irk:1:7: note: 'm' was first defined here
        model m {
              ^""")


def test_undefined_output():
    assert rendered("h = x @ W\noutput hh\n", wrap=True) == expect("""
        m.irk:6:10: error: unknown name 'hh'; did you mean 'h'?
          output hh
                 ^""")


def test_model_without_output():
    assert rendered("h = x @ W\n", wrap=True) == expect("""
        m.irk:1:7: error: model 'm' has no output; add `output NAME`
        model m {
              ^""")


def test_grad_of_non_scalar():
    assert rendered("h = x @ W\ngrad h wrt W\noutput h\n", wrap=True) == expect("""
        m.irk:6:8: error: grad needs a scalar float value, but 'h' is f32[N, 10]
          grad h wrt W
               ^""")


def test_grad_wrt_computed_value():
    assert rendered("h = sum(x @ W)\ngrad h wrt h\noutput h\n", wrap=True) == expect("""
        m.irk:6:14: error: grad is taken with respect to inputs and params; 'h' is a computed value
          grad h wrt h
                     ^""")


def test_grad_wrt_unknown():
    assert rendered("h = sum(x @ W)\ngrad h wrt WW\noutput h\n", wrap=True) == expect("""
        m.irk:6:14: error: unknown name 'WW'; did you mean 'W'?
          grad h wrt WW
                     ^""")


def test_train_unknown_loss_and_optimizer():
    assert rendered("h = sum(x @ W)\ntrain hh with sgd(0.1)\noutput h\n", wrap=True) == expect("""
        m.irk:6:9: error: unknown name 'hh'; did you mean 'h'?
          train hh with sgd(0.1)
                ^""")
    assert rendered("h = sum(x @ W)\ntrain h with adm(0.1)\noutput h\n", wrap=True) == expect("""
        m.irk:6:16: error: unknown optimizer 'adm'; did you mean 'adam'?
          train h with adm(0.1)
                       ^""")


def test_train_without_params():
    assert rendered("model m {\n  input x: f32[3]\n  h = sum(x)\n  train h with sgd(1)\n"
                    "  output h\n}\n") == expect("""
        m.irk:4:3: error: train needs at least one param to update
          train h with sgd(1)
          ^""")


def test_train_with_only_integer_params():
    assert rendered("model m {\n  input x: f32[3]\n  param k: i32[3] = ones\n"
                    "  h = sum(x * cast(k, f32))\n  train h with sgd(1)\n  output h\n}\n") \
        == expect("""
        m.irk:5:3: error: train needs at least one floating-point param to update
          train h with sgd(1)
          ^""")


def test_gradient_output_clashes_with_an_output():
    assert rendered("h = sum(x @ W)\nd_W = W\noutput h, d_W\ngrad h wrt W\n",
                    wrap=True) == expect("""
        m.irk:8:14: error: the gradient with respect to 'W' is output 'd_W', but 'd_W' is already an output
          grad h wrt W
                     ^
        m.irk:7:13: note: the output is named here
          output h, d_W
                    ^""")
    assert rendered("h = sum(x @ W)\noutput h\ngrad h wrt W, W\n", wrap=True) == expect("""
        m.irk:7:17: error: the gradient with respect to 'W' is output 'd_W', but 'd_W' is already an output
          grad h wrt W, W
                        ^
        m.irk:7:14: note: the output is named here
          grad h wrt W, W
                     ^""")


def test_optimizer_hyperparameters_out_of_range():
    assert rendered("h = sum(x @ W)\noutput h\ntrain h with adam(0.1, beta2=1)\n",
                    wrap=True) == expect("""
        m.irk:7:32: error: argument 'beta2' of 'adam' must be in [0, 1), got 1
          train h with adam(0.1, beta2=1)
                                       ^""")
    assert rendered("h = sum(x @ W)\noutput h\ntrain h with sgd(-0.1)\n",
                    wrap=True) == expect("""
        m.irk:7:20: error: argument 'lr' of 'sgd' must not be negative, got -0.1
          train h with sgd(-0.1)
                           ^""")


def test_unknown_initializer_lists_them():
    assert rendered("param V: f32[3] = gaussian(seed=1)\noutput x\n", wrap=True) == expect("""
        m.irk:5:21: error: unknown initializer 'gaussian'; expected one of zeros, ones, constant, normal, uniform, glorot, he
          param V: f32[3] = gaussian(seed=1)
                            ^""")


# ----- fn ------------------------------------------------------------------------------------


def test_fn_recursion():
    assert rendered("""\
        fn f(a) { return f(a) }
        model m {
          input x: f32
          y = f(x)
          output y
        }
        """) == expect("""
        m.irk:1:18: error: recursive call of 'f': fn bodies are inlined, so a fn cannot call itself
        fn f(a) { return f(a) }
                         ^
        m.irk:1:4: note: 'f' is defined here
        fn f(a) { return f(a) }
           ^
        m.irk:4:7: note: in this call of 'f'
          y = f(x)
              ^""")


def test_error_inside_fn_notes_the_call():
    assert rendered("""\
        fn f(a) { return a + [1, 2] }
        model m {
          input x: f32[3]
          y = f(x)
          output y
        }
        """) == expect("""
        m.irk:1:20: error: cannot broadcast f32[3] with f32[2]
        fn f(a) { return a + [1, 2] }
                           ^
        m.irk:4:7: note: in this call of 'f'
          y = f(x)
              ^""")


def test_fn_arity():
    assert rendered("""\
        fn f(a) { return a }
        model m { input x: f32; y = f(x, 2); output y }
        """) == expect("""
        m.irk:2:34: error: fn 'f' takes 1 argument (a), got 2
        model m { input x: f32; y = f(x, 2); output y }
                                         ^""")


# ----- if ------------------------------------------------------------------------------------


def test_if_predicate_must_be_scalar_i1():
    assert rendered("y = if sum(x) { x } else { x }\noutput y\n", wrap=True) == expect("""
        m.irk:5:10: error: the condition of 'if' must be a scalar i1 (a comparison such as sum(x) < sum(y)), got f32
          y = if sum(x) { x } else { x }
                 ^""")


def test_if_branches_of_different_types():
    assert rendered("y = if sum(x) > 0 { x } else { sum(x) }\noutput y\n", wrap=True) == expect("""
        m.irk:5:7: error: the branches of 'if' give different types: f32[N, 784] (then) and f32 (else)
          y = if sum(x) > 0 { x } else { sum(x) }
              ^""")


def test_statement_in_the_wrong_place():
    assert rendered("model m { input x: f32; return x }") == expect("""
        m.irk:1:25: error: 'return' is only allowed in a fn (as its last statement)
        model m { input x: f32; return x }
                                ^""")
