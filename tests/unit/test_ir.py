"""IR objects: use lists, erase, clone, moving, walk order, builder, predecessors, symbols."""

from __future__ import annotations

import pytest

from irkit.attributes import StringAttr, SymbolRefAttr
from irkit.builder import Builder, InsertionPoint
from irkit.diagnostics import VerifyError
from irkit.ir import Block, Operation, Region
from irkit.parser import parse_module
from irkit.printer import print_op
from irkit.symbols import SymbolTable, lookup_symbol, lookup_symbol_in
from irkit.types import F32, I32


def op(name, operands=(), results=(), **kw):
    return Operation.create(name, operands, results, **kw)


def block_with(*ops):
    b = Block()
    for o in ops:
        b.append(o)
    return b


def test_use_lists_add_remove_and_replace():
    a = op("t.a", results=[I32])
    b = op("t.b", results=[I32])
    u1 = op("t.u", [a.result, a.result])
    u2 = op("t.u", [a.result, b.result])
    assert [(u.owner, u.index) for u in a.result.uses] == [(u1, 0), (u1, 1), (u2, 0)]
    assert a.result.users == [u1, u2]
    assert b.result.has_one_use()
    u1.set_operand(1, b.result)
    assert [(u.owner, u.index) for u in a.result.uses] == [(u1, 0), (u2, 0)]
    a.result.replace_all_uses_with(b.result)
    assert not a.result.has_uses()
    assert u1.operands == [b.result, b.result] and u2.operands == [b.result, b.result]
    assert len(b.result.uses) == 4
    b.result.replace_uses_if(a.result, lambda use: use.owner is u2)
    assert u2.operands == [a.result, a.result] and u1.operands == [b.result, b.result]
    u2.set_operands([b.result])
    assert not a.result.has_uses() and len(b.result.uses) == 3
    u1.erase()
    assert len(b.result.uses) == 1


def test_replace_all_uses_with_self_is_a_no_op():
    a = op("t.a", results=[I32])
    u = op("t.u", [a.result])
    a.result.replace_all_uses_with(a.result)
    assert a.result.uses[0].owner is u


def test_op_replace_all_uses_checks_count():
    a = op("t.a", results=[I32, F32])
    with pytest.raises(ValueError):
        a.replace_all_uses_with([a.results[0]])


def test_erase_refuses_op_with_used_results():
    a = op("t.a", results=[I32])
    u = op("t.u", [a.result])
    block_with(a, u)
    with pytest.raises(ValueError, match="still has uses"):
        a.erase()
    assert a.parent is not None
    u.erase()
    a.erase()
    assert a.parent is None


def test_erase_drops_uses_of_nested_ops():
    m = parse_module('%0 = "t.a"() : () -> i32\n'
                     '"t.r"() ({\n  "t.u"(%0) : (i32) -> ()\n}) : () -> ()\n',
                     allow_unregistered=True)
    a, r = list(m.regions[0].blocks[0].ops)
    assert a.result.has_uses()
    r.erase()
    assert not a.result.has_uses()


def test_clone_with_mapping_remaps_nested_regions_and_successors():
    m = parse_module('''
%x = "t.x"() : () -> i32
"t.outer"() ({
^bb0(%a: i32):
  %0 = "t.add"(%a, %x) : (i32, i32) -> i32
  "t.br"(%0) [^bb1] : (i32) -> ()
^bb1:
  "t.inner"() ({
    "t.use"(%0, %x) : (i32, i32) -> ()
  }) : () -> ()
  "t.br"() [^bb1] : () -> ()
}) : () -> ()
''', allow_unregistered=True)
    x, outer = list(m.regions[0].blocks[0].ops)
    y = op("t.y", results=[I32])
    mapping = {x.result: y.result}
    copy = outer.clone(mapping)
    old_b0, old_b1 = outer.regions[0].blocks
    new_b0, new_b1 = copy.regions[0].blocks
    assert mapping[old_b0] is new_b0 and mapping[old_b1] is new_b1
    assert mapping[old_b0.args[0]] is new_b0.args[0]
    add = new_b0.first
    assert add.operands == [new_b0.args[0], y.result]
    assert add.next_op.successors == [new_b1]
    assert new_b1.last.successors == [new_b1]
    use = new_b1.first.regions[0].blocks[0].first
    assert use.operands == [add.result, y.result]
    # The original is untouched and the clone owns its own use lists.
    assert x.result.users == [outer.regions[0].blocks[0].first,
                              old_b1.first.regions[0].blocks[0].first]
    assert [u.owner for u in add.result.uses] == [add.next_op, use]
    assert copy.parent is None and copy.regions[0].parent is copy


def test_clone_keeps_name_attributes_and_location():
    m = parse_module('"t.a"() {k = 1 : i32} : () -> ()\n', "c.mlir", allow_unregistered=True)
    a = m.regions[0].blocks[0].first
    c = a.clone()
    assert c.name == "t.a" and c.attributes == a.attributes
    assert c.attributes is not a.attributes
    assert c.location == a.location


def test_move_before_and_after():
    a, b, c = op("t.a"), op("t.b"), op("t.c")
    blk = block_with(a, b, c)
    c.move_before(a)
    assert [o.name for o in blk.ops] == ["t.c", "t.a", "t.b"]
    assert c.is_before_in_block(a) and a.is_before_in_block(b)
    c.move_after(b)
    assert [o.name for o in blk.ops] == ["t.a", "t.b", "t.c"]
    assert not c.is_before_in_block(b) and b.is_before_in_block(c)
    other = block_with(op("t.d"))
    a.move_after(other.first)
    assert [o.name for o in blk.ops] == ["t.b", "t.c"]
    assert [o.name for o in other.ops] == ["t.d", "t.a"] and a.parent is other
    assert blk.first is b and blk.first.prev_op is None


def test_insert_into_second_block_is_refused():
    a = op("t.a")
    block_with(a)
    with pytest.raises(ValueError):
        Block().append(a)


WALK = '''
"t.1"() ({
  "t.2"() ({
    "t.3"() : () -> ()
  }) : () -> ()
  "t.4"() : () -> ()
}, {
  "t.5"() : () -> ()
}) : () -> ()
"t.6"() : () -> ()
'''


def test_walk_post_order_and_pre_order():
    m = parse_module(WALK, allow_unregistered=True)
    post = [o.name for o in m.walk()]
    assert post == ["t.3", "t.2", "t.4", "t.5", "t.1", "t.6", "builtin.module"]
    pre = [o.name for o in m.walk(post_order=False)]
    assert pre == ["builtin.module", "t.1", "t.2", "t.3", "t.4", "t.5", "t.6"]
    seen = []
    m.walk(lambda o: seen.append(o.name))
    assert seen == post


def test_walk_allows_erasing_the_visited_op():
    m = parse_module(WALK, allow_unregistered=True)
    for o in m.walk():
        if o.name in ("t.4", "t.6"):
            o.erase()
    assert [o.name for o in m.walk()] == ["t.3", "t.2", "t.5", "t.1", "builtin.module"]


def test_builder_insertion_points():
    blk = Block([I32])
    b = Builder.at_end(blk)
    x = b.create_generic("t.x", [blk.args[0]], [I32])
    z = b.create_generic("t.z", [x.result], [I32])
    b.set_insertion_point_before(z)
    y = b.create_generic("t.y", [], [F32])
    assert [o.name for o in blk.ops] == ["t.x", "t.y", "t.z"]
    b.set_insertion_point_after(z)
    b.create_generic("t.w")
    b.set_insertion_point_to_start(blk)
    b.create_generic("t.v")
    assert [o.name for o in blk.ops] == ["t.v", "t.x", "t.y", "t.z", "t.w"]
    with b.at(InsertionPoint(blk, y)):
        b.create_generic("t.in")
    b.create_generic("t.after_v")
    assert [o.name for o in blk.ops] == ["t.v", "t.after_v", "t.x", "t.in", "t.y", "t.z",
                                         "t.w"]
    after = Builder.after(x)
    after.create_generic("t.p")
    after.create_generic("t.q")
    assert [o.name for o in blk.ops][2:5] == ["t.x", "t.p", "t.q"]
    assert y.is_before_in_block(z) and x.is_before_in_block(y)


def test_builder_without_insertion_point_raises():
    with pytest.raises(ValueError):
        Builder().create_generic("t.x")


def test_builder_create_block_moves_insertion_point():
    r = Region()
    b = Builder()
    first = b.create_block(r, [I32])
    b.create_generic("t.a")
    second = b.create_block(r, insert_before=first)
    b.create_generic("t.b")
    assert r.blocks == [second, first]
    assert first.first.name == "t.a" and second.first.name == "t.b"


def test_block_predecessors_and_successors():
    m = parse_module('''
"t.f"() ({
  "t.cbr"() [^bb1, ^bb2] : () -> ()
^bb1:
  "t.br"() [^bb3] : () -> ()
^bb2:
  "t.cbr"() [^bb3, ^bb3] : () -> ()
^bb3:
  "t.ret"() : () -> ()
}) : () -> ()
''', allow_unregistered=True)
    b0, b1, b2, b3 = m.regions[0].blocks[0].first.regions[0].blocks
    assert b0.successors == [b1, b2]
    assert b0.predecessors == []
    assert b1.predecessors == [b0]
    assert b3.predecessors == [b1, b2, b2]
    assert b3.successors == []


def test_printer_pred_comments():
    text = '''"t.f"() ({
  "t.br"() [^bb1] : () -> ()
^bb1:  // 2 preds: ^bb0, ^bb1
  "t.br"() [^bb1] : () -> ()
}) : () -> ()
'''
    m = parse_module(text, allow_unregistered=True)
    out = print_op(m, generic=True)
    assert "^bb1:  // 2 preds: ^bb0, ^bb1\n" in out  # as mlir-opt writes it


SYMBOLS = '''
module @top {
  func.func private @f()
  module @a {
    module @b {
      func.func private @g()
    }
    func.func private @h()
  }
}
'''


def test_symbol_lookup_including_nested_refs():
    top = parse_module(SYMBOLS)
    body = top.regions[0].blocks[0]
    f, a = list(body.ops)
    b, h = list(a.regions[0].blocks[0].ops)
    g = b.regions[0].blocks[0].first
    assert lookup_symbol_in(top, "f") is f
    assert lookup_symbol_in(top, SymbolRefAttr("a", ["b", "g"])) is g
    assert lookup_symbol_in(top, SymbolRefAttr("a", ["h"])) is h
    assert lookup_symbol_in(top, SymbolRefAttr("a", ["g"])) is None
    assert lookup_symbol_in(top, "nope") is None
    # From inside @a::@b, @f resolves through the enclosing tables.
    assert lookup_symbol(g, "f") is f
    assert lookup_symbol(g, SymbolRefAttr("a", ["h"])) is h
    table = SymbolTable(a)
    assert table.lookup("b") is b and table.lookup("h") is h


def test_symbol_table_insert_redefinition_error():
    top = parse_module(SYMBOLS)
    table = SymbolTable(top)
    dup = top.regions[0].blocks[0].first.clone()
    with pytest.raises(ValueError, match="redefinition of symbol 'f'"):
        table.insert(dup)
    dup.properties["sym_name"] = StringAttr("f2")
    table.insert(dup)
    assert table.lookup("f2") is dup and top.regions[0].blocks[0].last is dup


def test_verifier_reports_duplicate_symbol_of_unregistered_op():
    text = '"t.s"() {sym_name = "g"} : () -> ()\n"t.s"() {sym_name = "g"} : () -> ()\n'
    with pytest.raises(VerifyError) as e:
        parse_module(text, "dup.mlir", allow_unregistered=True)
    assert e.value.render().startswith(
        "dup.mlir:2:1: error: 't.s' op redefinition of symbol named 'g'")
