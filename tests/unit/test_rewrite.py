"""The rewrite engine: pattern roots, the rewriter's bookkeeping, folding, the greedy driver,
and declarative peepholes."""

import pytest

from irkit.dialects.arith import AddFOp, MulFOp, SubFOp
from irkit.dialects.arith.floating import NegFOp
from irkit.ir import Operation
from irkit.parser import parse_module
from irkit.peephole import peephole
from irkit.printer import print_op
from irkit.rewrite import (
    FrozenPatternSet, PatternRewriter, RewriteNotConverged, RewritePattern,
    apply_patterns_greedily, constant_value, insertion_region, is_trivially_dead,
)


def _func(module):
    return next(op for op in module.walk() if op.name == "func.func")


def _names(module):
    return [op.name for op in _func(module).regions[0].ops]


# ----- patterns ------------------------------------------------------------------------------


class DoubleNeg(RewritePattern):
    """-(-x) -> x"""

    def match_and_rewrite(self, op: NegFOp, rewriter: PatternRewriter) -> bool:
        inner = op.operand.owner_op
        if not isinstance(inner, NegFOp):
            return False
        rewriter.replace_op(op, [inner.operand])
        return True


class AnyOp(RewritePattern):
    def match_and_rewrite(self, op, rewriter) -> bool:
        return False


def test_root_comes_from_the_annotation():
    assert DoubleNeg.root == "arith.negf"
    assert AnyOp.root is None


def test_pattern_set_orders_by_benefit_and_adds_any_op_patterns():
    class Low(RewritePattern):
        benefit = 1

        def match_and_rewrite(self, op: AddFOp, rewriter) -> bool:
            return False

    class High(Low):
        benefit = 5

        def match_and_rewrite(self, op: AddFOp, rewriter) -> bool:
            return False

    low, high, anyp = Low(), High(), AnyOp()
    ps = FrozenPatternSet([low, anyp, high])
    assert ps.for_op("arith.addf")[0] is high
    assert set(ps.for_op("arith.addf")) == {low, high, anyp}
    assert ps.for_op("arith.mulf") == [anyp]


def test_driver_applies_pattern_and_erases_dead_producer():
    m = parse_module("""
      func.func @f(%a: f32) -> f32 {
        %0 = arith.negf %a : f32
        %1 = arith.negf %0 : f32
        return %1 : f32
      }""")
    changed = apply_patterns_greedily(m, [DoubleNeg()], fold=False)
    assert changed
    assert _names(m) == ["func.return"]
    assert _func(m).regions[0].blocks[0].last.operands[0] is _func(m).regions[0].blocks[0].args[0]
    m.verify()


def test_driver_reports_no_change():
    m = parse_module("func.func @f(%a: f32) -> f32 { return %a : f32 }")
    assert not apply_patterns_greedily(m, [DoubleNeg()])


def test_driver_cap_raises_with_the_looping_pattern_named():
    class Swap(RewritePattern):
        def match_and_rewrite(self, op: SubFOp, rewriter) -> bool:
            a, b = op.operands
            with rewriter.modify_op_in_place(op):
                op.set_operands([b, a])
            return True

    m = parse_module("""
      func.func @f(%a: f32, %b: f32) -> f32 {
        %0 = arith.subf %a, %b : f32
        return %0 : f32
      }""")
    with pytest.raises(RewriteNotConverged) as e:
        apply_patterns_greedily(m, [Swap()], max_iterations=2)
    msg = str(e.value)
    assert "did not converge" in msg
    assert "Swap on 'arith.subf'" in msg


def test_max_rewrites_stops_early():
    m = parse_module("""
      func.func @f(%a: f32) -> f32 {
        %0 = arith.negf %a : f32
        %1 = arith.negf %0 : f32
        %2 = arith.negf %1 : f32
        %3 = arith.negf %2 : f32
        return %3 : f32
      }""")
    apply_patterns_greedily(m, [DoubleNeg()], fold=False, max_rewrites=1, max_iterations=1)
    # One rewrite: %1 became %a, so %2 = negf %a; the driver stopped before erasing the now
    # dead %0 or rewriting %3.
    negs = [op for op in _func(m).regions[0].ops if op.name == "arith.negf"]
    assert len(negs) == 3
    assert not negs[0].results[0].uses
    assert negs[1].operands[0] is _func(m).regions[0].blocks[0].args[0]


# ----- folding ---------------------------------------------------------------------------------


def test_fold_materializes_one_constant_at_function_entry():
    m = parse_module("""
      func.func @f(%a: i32) -> (i32, i32) {
        %c1 = arith.constant 1 : i32
        %c2 = arith.constant 2 : i32
        %0 = arith.addi %c1, %c2 : i32
        %1 = arith.muli %a, %0 : i32
        %c3 = arith.constant 3 : i32
        %2 = arith.muli %a, %c3 : i32
        return %1, %2 : i32, i32
      }""")
    apply_patterns_greedily(m, [])
    consts = [op for op in _func(m).regions[0].ops if op.name == "arith.constant"]
    assert len(consts) == 1 and constant_value(consts[0].results[0]).value == 3
    assert _names(m)[0] == "arith.constant"
    # Both products now read the same constant.
    muls = [op for op in _func(m).regions[0].ops if op.name == "arith.muli"]
    assert all(op.operands[1] is consts[0].results[0] for op in muls)


def test_commutative_constant_moves_right_and_folds_identity():
    m = parse_module("""
      func.func @f(%a: f32) -> f32 {
        %one = arith.constant 1.0 : f32
        %0 = arith.mulf %one, %a : f32
        return %0 : f32
      }""")
    apply_patterns_greedily(m, [])
    assert _names(m) == ["func.return"]


def test_trivially_dead():
    m = parse_module("""
      func.func @f(%a: f32) {
        %0 = arith.addf %a, %a : f32
        return
      }""", allow_unregistered=False)
    add = next(op for op in m.walk() if op.name == "arith.addf")
    ret = next(op for op in m.walk() if op.name == "func.return")
    assert is_trivially_dead(add)
    assert not is_trivially_dead(ret)
    unreg = Operation.create("test.effect", [], [])
    assert not is_trivially_dead(unreg)


def test_insertion_region_is_the_isolated_function_body():
    m = parse_module("""
      func.func @f(%a: f32) -> f32 {
        %0 = arith.addf %a, %a : f32
        return %0 : f32
      }""")
    add = next(op for op in m.walk() if op.name == "arith.addf")
    assert insertion_region(add) is _func(m).regions[0]


# ----- rewriter bookkeeping -----------------------------------------------------------------


class Recorder:
    def __init__(self):
        self.events = []

    def on_inserted(self, op):
        self.events.append(("inserted", op.name))

    def on_modified(self, op):
        self.events.append(("modified", op.name))

    def on_replaced(self, op, values):
        self.events.append(("replaced", op.name))

    def on_erased(self, op):
        self.events.append(("erased", op.name))


def test_rewriter_notifies_and_keeps_uses_right():
    m = parse_module("""
      func.func @f(%a: f32, %b: f32) -> f32 {
        %0 = arith.addf %a, %b : f32
        %1 = arith.mulf %0, %0 : f32
        return %1 : f32
      }""")
    rec = Recorder()
    rw = PatternRewriter(rec)
    add = next(op for op in m.walk() if op.name == "arith.addf")
    new = rw.replace_op_with_new(add, SubFOp, *add.operands)
    assert rec.events == [("inserted", "arith.subf"), ("replaced", "arith.addf"),
                          ("erased", "arith.addf")]
    mul = next(op for op in m.walk() if op.name == "arith.mulf")
    assert mul.operands == [new.result, new.result]
    assert len(new.result.uses) == 2
    m.verify()


def test_inline_block_before_maps_arguments():
    m = parse_module("""
      func.func @f(%a: f32) -> f32 {
        %0 = "test.wrap"() ({
        ^bb0(%x: f32):
          %1 = arith.addf %x, %x : f32
          "test.yield"(%1) : (f32) -> ()
        }) : () -> f32
        return %0 : f32
      }""", allow_unregistered=True)
    wrap = next(op for op in m.walk() if op.name == "test.wrap")
    block = wrap.regions[0].blocks[0]
    a = _func(m).regions[0].blocks[0].args[0]
    rw = PatternRewriter()
    yield_op = block.last
    rw.inline_block_before(block, wrap, [a])
    assert not wrap.regions[0].blocks
    add = next(op for op in m.walk() if op.name == "arith.addf")
    assert add.operands == [a, a]
    rw.replace_op(wrap, [yield_op.operands[0]])
    rw.erase_op(yield_op)
    assert _names(m) == ["arith.addf", "func.return"]
    m.verify()


# ----- peepholes -------------------------------------------------------------------------------


def _canon(text, rules):
    m = parse_module(text)
    apply_patterns_greedily(m, [peephole(r) for r in rules])
    m.verify()
    return m


def test_peephole_matches_repeated_variable_by_identity():
    rule = "arith.addi(arith.subi(x, y), y) -> x"
    m = _canon("""
      func.func @f(%a: i32, %b: i32) -> (i32, i32) {
        %0 = arith.subi %a, %b : i32
        %1 = arith.addi %0, %b : i32
        %2 = arith.subi %a, %b : i32
        %3 = arith.addi %2, %a : i32
        return %1, %3 : i32, i32
      }""", [rule])
    ret = _func(m).regions[0].blocks[0].last
    assert ret.operands[0] is _func(m).regions[0].blocks[0].args[0]
    assert ret.operands[1].owner_op.name == "arith.addi"      # (a - b) + a: no match


def test_peephole_literals_distinguish_signed_zero():
    rule = "arith.addf(x, -0.0) -> x"
    m = _canon("""
      func.func @f(%a: f32) -> (f32, f32) {
        %nz = arith.constant -0.0 : f32
        %pz = arith.constant 0.0 : f32
        %0 = arith.addf %a, %nz : f32
        %1 = arith.addf %a, %pz : f32
        return %0, %1 : f32, f32
      }""", [rule])
    ret = _func(m).regions[0].blocks[0].last
    assert ret.operands[0] is _func(m).regions[0].blocks[0].args[0]
    assert ret.operands[1].owner_op.name == "arith.addf"


def test_peephole_builds_ops_and_folder_combines_constants():
    rule = "arith.muli(arith.muli(x, const(a)), const(b)) -> arith.muli(x, arith.muli(a, b))"
    m = _canon("""
      func.func @f(%x: i32) -> i32 {
        %c3 = arith.constant 3 : i32
        %c5 = arith.constant 5 : i32
        %0 = arith.muli %x, %c3 : i32
        %1 = arith.muli %0, %c5 : i32
        return %1 : i32
      }""", [rule])
    text = print_op(m)
    assert "arith.constant 15 : i32" in text
    assert text.count("arith.muli") == 1


def test_peephole_literal_result_makes_a_constant():
    m = _canon("""
      func.func @f(%x: i64) -> i64 {
        %0 = arith.subi %x, %x : i64
        return %0 : i64
      }""", ["arith.subi(x, x) -> 0"])
    assert "arith.constant 0 : i64" in print_op(m)


@pytest.mark.parametrize("rule, message", [
    ("arith.addi(x, y)", "expected one '->'"),
    ("x -> x", "the left side must be an op"),
    ("arith.addi(x, y) -> z", "'z' is not bound"),
    ("addi(x, y) -> x", "op names carry their dialect"),
    ("arith.addi(x, y=1) -> x", "unsupported call"),
])
def test_peephole_rejects_malformed_rules(rule, message):
    with pytest.raises(ValueError, match=message):
        peephole(rule)


def test_peephole_benefit_counts_matched_ops():
    assert peephole("arith.addi(arith.subi(x, y), y) -> x").benefit == 2
    assert peephole("arith.addi(x, 0) -> x").benefit == 1


def test_mulf_of_negations_pattern_on_the_op_class():
    assert any("arith.negf" in getattr(p, "rule", "") for p in MulFOp.canonicalization_patterns)


# ----- which ops the folder reads --------------------------------------------------------------


@pytest.fixture
def testfold_ops():
    """Two ops of a test-only dialect, neither with a folder of its own: `testfold.comm` is
    commutative, `testfold.plain` is not (registered for one test only, so the registry-driven
    contract tests never see them)."""
    from irkit.opdef import AnyType, Commutative, Dialect, Op, Operand, Pure, Result, \
        unregister_dialect
    testfold = Dialect("testfold", "Test-only ops without folders.")

    @testfold.op
    class CommOp(Op):
        """"testfold.comm"(%a, %b) : (f32, f32) -> f32"""

        name = "testfold.comm"
        lhs = Operand(AnyType)
        rhs = Operand(AnyType)
        result = Result(AnyType)
        traits = (Pure(), Commutative())

    @testfold.op
    class PlainOp(Op):
        """"testfold.plain"(%a, %b) : (f32, f32) -> f32"""

        name = "testfold.plain"
        lhs = Operand(AnyType)
        rhs = Operand(AnyType)
        result = Result(AnyType)
        traits = (Pure(),)

    yield CommOp, PlainOp
    unregister_dialect("testfold")


def test_folder_skips_ops_without_a_folder_but_not_commutative_ones(testfold_ops):
    """An op without a folder of its own is left as it is by the folder; a commutative one
    without a folder still has its constant operand moved to the right (MLIR's
    foldCommutative), which patterns rely on."""
    m = parse_module("""
      func.func @f(%a: f32) -> (f32, f32) {
        %c = arith.constant 2.0 : f32
        %0 = "testfold.comm"(%c, %a) : (f32, f32) -> f32
        %1 = "testfold.plain"(%c, %a) : (f32, f32) -> f32
        return %0, %1 : f32, f32
      }""")
    assert apply_patterns_greedily(m, [])
    ops = {op.name: op for op in m.walk()}
    const = ops["arith.constant"].results[0]
    comm, plain = ops["testfold.comm"], ops["testfold.plain"]
    assert (comm.lhs, comm.rhs) == (_func(m).regions[0].blocks[0].args[0], const)
    assert (plain.lhs, plain.rhs) == (const, _func(m).regions[0].blocks[0].args[0])
