"""The translation's constant folding (`llvm_lowering.FoldingBuilder`): an integer op on
constants folds to what LLVM computes for the same op at run time, and an op whose result is
poison or undefined (division by zero, signed `MIN / -1`, an `nsw`/`nuw` overflow) is left
to LLVM, emitted as an instruction."""

from __future__ import annotations

import ctypes
import itertools

import llvmlite.binding as llvm
import llvmlite.ir as ir
import pytest

from irkit.backends import llvm_cpu
from irkit.backends.llvm_lowering import FoldingBuilder

I8 = ir.IntType(8)
#: values of i8 where wrapping, signs and division's corner cases show
VALUES = [0, 1, 2, 3, 7, 64, 127, 128, 129, 200, 254, 255]
BINARY = ["add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and_", "or_", "xor"]
COMPARE = ["==", "!=", "<", "<=", ">", ">="]


def _folded(op: str, a: int, b: int, flags=()):
    """What FoldingBuilder makes of `op a, b` on i8 constants (a constant, or None: an
    instruction was emitted)."""
    fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), []), "f")
    bld = FoldingBuilder(fn.append_basic_block())
    if op in COMPARE:
        r = bld.icmp_unsigned(op, ir.Constant(I8, a), ir.Constant(I8, b))
    elif op.startswith("s") and op[1:] in COMPARE:
        r = bld.icmp_signed(op[1:], ir.Constant(I8, a), ir.Constant(I8, b))
    else:
        r = getattr(bld, op)(ir.Constant(I8, a), ir.Constant(I8, b), flags=flags)
    if isinstance(r, ir.Constant):
        return r.constant & ((1 << r.type.width) - 1)
    return None


@pytest.fixture(scope="module")
def computed():
    """`computed(op, a, b)`: the same op on i8 arguments, compiled by LLVM (plain
    IRBuilder) and run: the reference the folding must agree with."""
    llvm_cpu._initialize()
    mod = ir.Module()
    ops = BINARY + COMPARE + ["s" + c for c in COMPARE if c not in ("==", "!=")]
    for op in ops:
        fn = ir.Function(mod, ir.FunctionType(I8, [I8, I8]), _symbol(op))
        b = ir.IRBuilder(fn.append_basic_block())
        x, y = fn.args
        if op in BINARY:
            if op in ("udiv", "sdiv", "urem", "srem"):      # never divide by zero here
                y = b.select(b.icmp_unsigned("==", y, ir.Constant(I8, 0)),
                             ir.Constant(I8, 1), y)
            b.ret(getattr(b, op)(x, y))
        else:
            cmp = b.icmp_signed(op[1:], x, y) if op.startswith("s") else \
                b.icmp_unsigned(op, x, y)
            b.ret(b.zext(cmp, I8))
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)),
                                        llvm_cpu._new_target_machine(0, True))
    engine.finalize_object()
    calls = {op: ctypes.CFUNCTYPE(ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint8)(
        engine.get_function_address(_symbol(op))) for op in ops}
    yield lambda op, a, b: calls[op](a, b)
    del engine


def _symbol(op: str) -> str:
    return "f_" + "".join(c if c.isalnum() else f"_{ord(c)}" for c in op)


@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_fold_as_llvm_computes(op, computed):
    for a, b in itertools.product(VALUES, VALUES):
        got = _folded(op, a, b)
        if op in ("udiv", "urem") and b == 0 or \
                op in ("sdiv", "srem") and (b == 0 or (a, b) == (128, 255)):
            assert got is None, (op, a, b)      # undefined: left to LLVM
            continue
        assert got == computed(op, a, b), (op, a, b)


@pytest.mark.parametrize("op", COMPARE + ["s<", "s<=", "s>", "s>="])
def test_comparisons_fold_as_llvm_computes(op, computed):
    for a, b in itertools.product(VALUES, VALUES):
        assert _folded(op, a, b) == computed(op, a, b), (op, a, b)


def test_overflow_with_nsw_or_nuw_is_not_folded():
    assert _folded("add", 127, 1) == 128                      # wraps: plain add folds
    assert _folded("add", 127, 1, ["nsw"]) is None            # signed overflow: poison
    assert _folded("add", 255, 1, ["nuw"]) is None            # unsigned overflow: poison
    assert _folded("add", 100, 1, ["nsw"]) == 101
    assert _folded("mul", 16, 8, ["nsw"]) is None             # 128 > 127
    assert _folded("sub", 128, 1, ["nsw"]) is None            # -128 - 1
    assert _folded("sub", 0, 1, ["nuw"]) is None


def test_identities_and_selects():
    fn = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [I8, ir.IntType(1)]), "f")
    b = FoldingBuilder(fn.append_basic_block())
    x, c = fn.args
    zero, one = ir.Constant(I8, 0), ir.Constant(I8, 1)
    assert b.add(x, zero) is x and b.add(zero, x) is x and b.sub(x, zero) is x
    assert b.mul(x, one) is x and b.mul(one, x) is x
    assert b.udiv(x, one) is x and b.sdiv(x, one) is x
    assert b.select(ir.Constant(ir.IntType(1), 1), x, zero) is x
    assert b.select(ir.Constant(ir.IntType(1), 0), x, zero) is zero
    assert b.select(c, x, x) is x
    assert not isinstance(b.select(c, x, zero), ir.Constant)
    assert len(b.block.instructions) == 1                     # only the last select
    assert b.sext(ir.Constant(I8, 200), ir.IntType(16)).constant == 0xFFC8
    assert b.zext(ir.Constant(I8, 200), ir.IntType(16)).constant == 200
    assert b.trunc(ir.Constant(ir.IntType(16), 0x1FF), I8).constant == 255
