"""Verifier errors: exact `file:line:col: error: message`, caret column, and notes.

Messages and locations are MLIR 22's: an op is located at its name (column 8 after `%0 = `),
and a dominance error carries no `'op' op` prefix and says where the definition is.
"""

from __future__ import annotations

import pytest

from irkit.diagnostics import IRError, VerifyError
from irkit.ir import Block, Operation
from irkit.parser import parse_module
from irkit.types import I32


def rendered(text: str) -> list[str]:
    with pytest.raises(VerifyError) as e:
        parse_module(text, "v.mlir", allow_unregistered=True)
    return e.value.render().split("\n")


def check(text: str, line: int, col: int, message: str) -> list[str]:
    out = rendered(text)
    assert out[0] == f"v.mlir:{line}:{col}: error: {message}"
    assert out[1] == text.split("\n")[line - 1]
    assert out[2] == " " * (col - 1) + "^"
    return out[3:]


def test_use_before_def_in_block():
    notes = check('func.func @f() {\n  "t.u"(%0) : (i32) -> ()\n  %0 = "t.c"() : () -> i32\n'
                  '  return\n}\n', 2, 3, "operand #0 does not dominate this use")
    assert notes == ["v.mlir:3:8: note: operand defined here (op in the same block)",
                     '  %0 = "t.c"() : () -> i32', "       ^"]


def test_self_use_does_not_dominate():
    check('func.func @f() {\n  %0 = "t.c"(%0) : (i32) -> i32\n  return\n}\n', 2, 8,
          "operand #0 does not dominate this use")


def test_non_dominating_use_across_blocks_has_note():
    text = ('func.func @f(%c: i1) {\n  "t.cbr"(%c) [^bb1, ^bb2] : (i1) -> ()\n^bb1:\n'
            '  %0 = "t.c"() : () -> i32\n  "t.br"() [^bb3] : () -> ()\n^bb2:\n'
            '  "t.br"() [^bb3] : () -> ()\n^bb3:\n  "t.u"(%0) : (i32) -> ()\n  return\n}\n')
    notes = check(text, 9, 3, "operand #0 does not dominate this use")
    assert notes == ["v.mlir:4:8: note: operand defined here (op in the same region)",
                     '  %0 = "t.c"() : () -> i32', "       ^"]


def test_dominating_use_across_blocks_is_fine():
    parse_module('func.func @f(%c: i1) {\n  %0 = "t.c"() : () -> i32\n'
                 '  "t.cbr"(%c) [^bb1, ^bb2] : (i1) -> ()\n^bb1:\n  "t.br"() [^bb2] : () -> ()\n'
                 '^bb2:\n  "t.u"(%0) : (i32) -> ()\n  return\n}\n', allow_unregistered=True)


def test_nested_use_lifted_to_ancestor():
    check('func.func @f() {\n  "t.r"() ({\n    "t.u"(%0) : (i32) -> ()\n  }) : () -> ()\n'
          '  %0 = "t.c"() : () -> i32\n  return\n}\n', 3, 5,
          "operand #0 does not dominate this use")


def test_graph_region_allows_use_before_def():
    parse_module('"t.u"(%0) : (i32) -> ()\n%0 = "t.c"() : () -> i32\n', allow_unregistered=True)


def test_use_crossing_isolated_from_above_op():
    m = parse_module('func.func @f(%a: i32) {\n  func.func @g() {\n    "t.u"() : () -> ()\n'
                     '    return\n  }\n  return\n}\n', "iso.mlir", allow_unregistered=True)
    f = m.regions[0].blocks[0].first
    g = f.regions[0].blocks[0].first
    use = g.regions[0].blocks[0].first
    use.set_operands([f.regions[0].blocks[0].args[0]])
    with pytest.raises(VerifyError) as e:
        m.verify()
    out = e.value.render().split("\n")
    assert out[0] == "iso.mlir:3:5: error: 't.u' op using value defined outside the region"
    assert out[3] == "iso.mlir:2:3: note: required by region isolation constraints"


def test_return_operand_types():
    check('func.func @f(%a: i32) -> f32 {\n  return %a : i32\n}\n', 2, 3,
          "'func.return' op type of return operand 0 ('i32') doesn't match function result "
          "type ('f32') in function @f")
    check('func.func @f(%a: i32) -> f32 {\n  return\n}\n', 2, 3,
          "'func.return' op has 0 operands, but enclosing function (@f) returns 1")


def test_call_operand_types():
    check('func.func private @g(f32) -> f32\nfunc.func @f(%a: i32) {\n'
          '  %0 = func.call @g(%a) : (i32) -> f32\n  return\n}\n', 3, 8,
          "'func.call' op operand type mismatch: expected operand type 'f32', but provided "
          "'i32' for operand number 0")


def test_call_undefined_symbol():
    check('func.func @f(%a: i32) {\n  %0 = func.call @nope(%a) : (i32) -> f32\n  return\n}\n',
          2, 8, "'func.call' op 'nope' does not reference a valid function")


def test_missing_terminator():
    check('func.func @f() {\n  %0 = func.constant @f : () -> ()\n}\n', 2, 8,
          "block with no terminator, has 'func.constant'")


def test_unregistered_op_may_terminate():
    parse_module('func.func @f() {\n  "t.end"() : () -> ()\n}\n', allow_unregistered=True)


def test_terminator_not_last():
    check('func.func @f() {\n  return\n  "t.c"() : () -> ()\n}\n', 2, 3,
          "'func.return' op must be the last operation in the parent block")


def test_duplicate_symbol_with_note():
    notes = check('func.func private @g()\nfunc.func private @g()\n', 2, 1,
                  "'func.func' op redefinition of symbol named 'g'")
    assert notes == ["v.mlir:1:1: note: see existing symbol definition here",
                     "func.func private @g()", "^"]


def test_public_declaration():
    check('func.func @g()\n', 1, 1,
          "'func.func' op symbol declaration cannot have public visibility")


def test_successor_in_other_region():
    m = parse_module('"t.a"() ({\n  "t.b"() : () -> ()\n}) : () -> ()\n', "s.mlir",
                     allow_unregistered=True)
    b = m.regions[0].blocks[0].first.regions[0].blocks[0].first
    b.successors = [Block()]
    with pytest.raises(VerifyError) as e:
        m.verify()
    assert e.value.render().startswith(
        "s.mlir:2:3: error: 't.b' op reference to block defined in another region")


def test_unreachable_block_uses_are_not_checked():
    parse_module('func.func @f() {\n  return\n^bb1:\n  "t.u"(%0) : (i32) -> ()\n'
                 '  %0 = "t.c"() : () -> i32\n  "t.br"() [^bb1] : () -> ()\n}\n',
                 allow_unregistered=True)


def test_detached_operand_definition():
    m = parse_module('func.func @f() {\n  "t.u"() : () -> ()\n  return\n}\n', "d.mlir",
                     allow_unregistered=True)
    use = m.regions[0].blocks[0].first.regions[0].blocks[0].first
    use.set_operands([Operation.create("t.c", [], [I32]).result])
    with pytest.raises(IRError) as e:
        m.verify()
    assert e.value.render().startswith("d.mlir:2:3: error: 't.u' op operand #0 is defined by an "
                                       "op that is not in any block")
