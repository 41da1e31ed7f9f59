"""`memory.alloca` and promote-buffers-to-stack: a stack buffer's slot is taken once per
function (or outlined parallel body), so a loop of many iterations around it never grows
the stack; compiled code computes what the interpreter does, with and without the pass;
the CPU pipeline leaves no `malloc` in a loop body of the example models."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irkit.dialects.memory import AllocaOp
from irkit.interpreter import Interpreter, InterpreterError, interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.symbols import lookup_symbol_in
from irkit.tools import register_all

pytest.importorskip("llvmlite")
from irkit.backends.llvm_cpu import compile_module, optimized_module  # noqa: E402

register_all()

#: a 32 KiB buffer per iteration of a loop (sequential, or parallel over rows), freed in the
#: body: on the stack after the pass, a million iterations would need 32 GB if each took a
#: new slot
LOOPS = """
func.func @running(%out: memref<1xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  loop.for %i = %c0 to %n step %c1 {
    %buf = memory.alloc() : memref<8x1024xf32>
    %x = arith.index_cast %i : index to i64
    %f = arith.sitofp %x : i64 to f32
    memory.store %f, %buf[%c1, %c9] : memref<8x1024xf32>
    %y = memory.load %buf[%c1, %c9] : memref<8x1024xf32>
    %o = memory.load %out[%c0] : memref<1xf32>
    %s = arith.maximumf %o, %y : f32
    memory.store %s, %out[%c0] : memref<1xf32>
    memory.dealloc %buf : memref<8x1024xf32>
  }
  return
}

func.func @rows(%a: memref<?x64xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %n = memory.dim %a, 0 : memref<?x64xf32>
  loop.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memory.alloc() : memref<64xf32>
    loop.for %j = %c0 to %c64 step %c1 {
      %v = memory.load %a[%i, %j] : memref<?x64xf32>
      %w = arith.mulf %v, %v : f32
      memory.store %w, %t[%j] : memref<64xf32>
    }
    %s = loop.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %w = memory.load %t[%j] : memref<64xf32>
      %r = arith.addf %acc, %w : f32
      loop.yield %r : f32
    }
    memory.store %s, %out[%i] : memref<?xf32>
    memory.dealloc %t : memref<64xf32>
  }
  return
}
"""


def promoted():
    m = parse_module(LOOPS)
    PassManager.parse("promote-buffers-to-stack").run(m)
    return m


def test_the_pass_makes_stack_buffers_and_drops_their_deallocs():
    text = str(promoted())
    assert text.count("memory.alloca() : memref<8x1024xf32>") == 1
    assert text.count("memory.alloca() : memref<64xf32>") == 1
    assert "memory.alloc(" not in text and "memory.dealloc" not in text


def test_stack_slots_live_in_the_entry_block():
    """Every `alloca` LLVM sees is in its function's entry block (the outlined parallel
    body's own), none in a loop."""
    ir = str(optimized_module(promoted(), opt_level=0)[0])
    for fn in re.findall(r"define [^{]*\{(.*?)\n\}", ir, re.S):
        blocks = [blk for blk in re.split(r"\n(?=[\w.$-]+:)", fn) if blk.strip()]
        assert not any("alloca [" in blk for blk in blocks if not blk.startswith("entry:"))
    assert ir.count("alloca [8192 x float], align 64") == 1
    assert ir.count("alloca [64 x float], align 64") == 1


def test_a_million_iterations_reuse_one_slot():
    f = compile_module(promoted()).running
    out = np.full(1, -1.0, np.float32)
    f(out, 1_000_000)
    assert out[0] == np.float32(999_999)


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_equals_interpreted_with_and_without_the_pass(threads):
    a = np.random.default_rng(0).standard_normal((37, 64)).astype(np.float32)
    want = np.empty(37, np.float32)
    interpret(parse_module(LOOPS), "rows", a, want)
    np.testing.assert_allclose(want, (a.astype(np.float64) ** 2).sum(1), rtol=1e-5)
    for module in (parse_module(LOOPS), promoted()):
        got = np.empty(37, np.float32)
        interpreted = np.empty(37, np.float32)
        Interpreter(module).call(lookup_symbol_in(module, "rows"), [a, interpreted])
        compile_module(module, threads=threads).rows(a, got)
        np.testing.assert_array_equal(interpreted, want)
        np.testing.assert_array_equal(got, want)


def test_a_stack_buffer_is_not_deallocated():
    text = """
    func.func @f() {
      %a = memory.alloca() : memref<4xf32>
      memory.dealloc %a : memref<4xf32>
      return
    }"""
    with pytest.raises(InterpreterError, match="expects a buffer made by memory.alloc"):
        interpret(parse_module(text), "f")
    assert isinstance(lookup_symbol_in(parse_module(text), "f").regions[0].blocks[0].first,
                      AllocaOp)


@pytest.mark.parametrize("example", ["cnn", "logreg"])
def test_no_malloc_in_a_loop_body_of_the_examples(example):
    """After the CPU pipeline's memory row, every buffer of a loop body in the example
    models is on the stack: the BLIS nests' panels and tiles are static and freed where they
    are made."""
    from pathlib import Path

    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.passes import pipeline
    root = Path(__file__).resolve().parents[2]
    src = (root / "examples" / f"{example}.irk").read_text()
    (module,) = model_modules(compile_source(src, example)).values()
    pipeline.pass_manager(None, "memory").run(module)
    in_loops = [op for op in module.walk() if op.name == "memory.alloc" and
                any(p.name in ("loop.for", "loop.parallel") for p in _parents(op))]
    static = [op for op in in_loops if op.results[0].type.has_static_shape]
    assert not static, [str(op.results[0].type) for op in static]
    assert any(op.name == "memory.alloca" for op in module.walk())


def _parents(op):
    p = op.parent_op
    while p is not None:
        yield p
        p = p.parent_op
