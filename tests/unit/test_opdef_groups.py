"""Operand and result groups read through the op-definition descriptors (`op.lhs`): fixed,
variadic, optional and segmented groups at every position, each read back as built. The
accessors locate a group in O(1) from the layout `OpSpec` works out per class; these check
that layout against the counts the test itself gave."""

from __future__ import annotations

import itertools

import pytest

from irkit.ir import Block
from irkit.opdef import Op, Operand, OptOperand, Result, VarOperand, VarResult
from irkit.types import F32, I32


class _Middle(Op):
    name = "test_groups.middle"
    a = Operand()
    b = VarOperand()
    c = Operand()
    d = Operand()


class _OptionalFirst(Op):
    name = "test_groups.optional_first"
    a = OptOperand()
    b = Operand()
    c = Operand()


class _Segmented(Op):
    name = "test_groups.segmented"
    x = Operand()
    ins = VarOperand()
    outs = VarOperand()
    y = Operand()


class _Results(Op):
    name = "test_groups.results"
    first = Result()
    rest = VarResult()
    last = Result()


def _values(n: int) -> list:
    return list(Block([I32] * n).args)


@pytest.mark.parametrize("k", [0, 1, 3])
def test_one_variadic_group_in_the_middle(k):
    v = _values(3 + k)
    op = _Middle.build(v[0], v[1:1 + k], v[1 + k], v[2 + k], result_types=[])
    assert op.a is v[0] and op.b == v[1:1 + k] and op.c is v[1 + k] and op.d is v[2 + k]


@pytest.mark.parametrize("present", [False, True])
def test_optional_group_first(present):
    v = _values(3)
    op = _OptionalFirst.build(v[0] if present else None, v[1], v[2], result_types=[])
    assert op.a is (v[0] if present else None) and op.b is v[1] and op.c is v[2]


@pytest.mark.parametrize("n_ins, n_outs", list(itertools.product([0, 1, 2], [0, 2])))
def test_segmented_groups(n_ins, n_outs):
    v = _values(2 + n_ins + n_outs)
    ins, outs = v[1:1 + n_ins], v[1 + n_ins:1 + n_ins + n_outs]
    op = _Segmented.build(v[0], ins, outs, v[-1], result_types=[])
    assert op.properties["operandSegmentSizes"].value == (1, n_ins, n_outs, 1)
    assert op.x is v[0] and op.ins == ins and op.outs == outs and op.y is v[-1]


@pytest.mark.parametrize("k", [0, 2])
def test_variadic_results(k):
    op = _Results.build(result_types=[F32] + [I32] * k + [F32])
    r = op.results
    assert op.first is r[0] and op.rest == r[1:1 + k] and op.last is r[-1]
    assert op.last.index == k + 1


def test_setting_a_fixed_operand_after_a_variadic_group():
    v = _values(5)
    op = _Middle.build(v[0], v[1:3], v[3], v[3], result_types=[])
    op.d = v[4]
    assert op.d is v[4] and op.c is v[3] and [o.value for o in op._operands][-1] is v[4]
