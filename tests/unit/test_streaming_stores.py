"""Streaming (non-temporal) stores: `memory.vector_store {nontemporal = true}`, `memory.fence`,
their LLVM lowering, and `vector-streaming-stores` in the compile pipeline.

The lowering picks the store by the address's alignment at run time (whole vector, 16-byte
pieces, or an ordinary store), so every alignment of the output is run and compared with
the interpreter; a misaligned `movntps` would fault, a wrong piece would show as a wrong
element.
"""

from __future__ import annotations

import platform
import textwrap

import numpy as np
import pytest

from irkit.interpreter import interpret
from irkit.parser import parse_module
from irkit.pass_manager import PassManager
from irkit.passes import register_all
from irkit.backends.llvm_cpu import compile_module, emit_assembly, emit_llvm_ir

import irkit.dialects.arith  # noqa: F401
import irkit.dialects.loop  # noqa: F401
import irkit.dialects.memory  # noqa: F401

X86 = platform.machine() in ("x86_64", "AMD64")

#: y = x * 2 + 1 over 16-lane vectors, the stores marked streaming, the remainder scalar
KERNEL = textwrap.dedent("""
    func.func @f(%x: memref<?xf32>, %y: memref<?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %two = arith.constant dense<2.0> : vector<16xf32>
      %one = arith.constant dense<1.0> : vector<16xf32>
      %n = memory.dim %x, 0 : memref<?xf32>
      %r = arith.remsi %n, %c16 : index
      %m = arith.subi %n, %r : index
      loop.for %i = %c0 to %m step %c16 {
        %v = memory.vector_load %x[%i] : memref<?xf32>, vector<16xf32>
        %d = arith.mulf %v, %two : vector<16xf32>
        %e = arith.addf %d, %one : vector<16xf32>
        memory.vector_store %e, %y[%i] {nontemporal = true} : memref<?xf32>, vector<16xf32>
      }
      memory.fence
      loop.for %i = %m to %n step %c1 {
        %v = memory.load %x[%i] : memref<?xf32>
        %t = arith.constant 2.0 : f32
        %o = arith.constant 1.0 : f32
        %d = arith.mulf %v, %t : f32
        %e = arith.addf %d, %o : f32
        memory.store %e, %y[%i] : memref<?xf32>
      }
      return
    }
""")


def _at(n: int, offset_bytes: int) -> np.ndarray:
    """n float32 starting `offset_bytes` past a 64-byte boundary."""
    raw = np.zeros(n + 32, np.float32)
    start = (-raw.ctypes.data % 64 + offset_bytes) // 4
    out = raw[start:start + n]
    assert n == 0 or out.ctypes.data % 64 == offset_bytes
    return out


def test_vector_store_nontemporal_round_trips():
    m = parse_module(KERNEL)
    text = str(m)
    assert "{nontemporal = true}" in text
    assert "memory.fence" in text
    assert str(parse_module(text)) == text


def test_lowering_marks_the_stores_and_fences():
    ir = emit_llvm_ir(parse_module(KERNEL), 0)
    assert "!nontemporal" in ir
    if X86:
        assert "llvm.x86.sse.sfence" in ir
        asm = emit_assembly(parse_module(KERNEL), 2)
        assert "movntps" in asm and "sfence" in asm


@pytest.mark.parametrize("offset", [0, 4, 16, 32, 48, 60])
@pytest.mark.parametrize("n", [0, 15, 16, 100, 1000])
def test_every_alignment_stores_what_the_interpreter_does(offset, n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = _at(n, offset)
    compile_module(parse_module(KERNEL))["f"](x, got)
    want = np.zeros(n, np.float32)
    interpret(parse_module(KERNEL), "f", x, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x * np.float32(2) + np.float32(1))


def _streamed(src: str, pipeline: str):
    register_all()
    m = parse_module(textwrap.dedent(src))
    PassManager.parse(pipeline).run(m)
    return m


PARALLEL = """
    func.func @f(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = memory.dim %x, 0 : memref<?x?xf32>
      %m = memory.dim %x, 1 : memref<?x?xf32>
      loop.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
        %v = memory.load %x[%i, %j] : memref<?x?xf32>
        %w = arith.mulf %v, %v : f32
        memory.store %w, %y[%i, %j] : memref<?x?xf32>
      }
      return
    }
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 5), (7, 100), (64, 64), (33, 257)])
def test_parallel_chunks_with_fences_match_the_interpreter(threads, shape):
    """Vectorized, then streamed at any size (min-bytes=1) with chunks of 1 KiB, so that
    several chunks and fences run on each thread; both versions of the nest agree."""
    m = _streamed(PARALLEL, "loop-vectorize{width=8},vector-streaming-stores{min-bytes=1 "
                            "min-run-bytes=32 chunk-bytes=1024},canonicalize,cse")
    text = str(m)
    assert "nontemporal = true" in text and "memory.fence" in text
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    got = np.zeros(shape, np.float32)
    compile_module(m, threads=threads)["f"](x, got)
    want = np.zeros(shape, np.float32)
    interpret(m, "f", x, want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x * x)


MODELS = {
    "fused": """
model fused {
  input a: f32[N]
  input b: f32[N]
  input c: f32[N]
  input d: f32[N]
  e = d + (a + b) * c
  output e
}
""",
    # the exp loop stores and carries the sum (a loop.if with a result), then a second
    # loop scales in place
    "softmax": """
model softmax {
  input a: f32[N]
  input b: f32[N]
  input c: f32[N]
  input d: f32[N]
  e = softmax(a, axis=0) + b * c - d
  output e
}
""",
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_pipeline_streams_outputs_larger_than_the_cache(tmp_path, name, threads):
    """The compile pipeline's streaming version, taken for outputs past the last-level
    cache, gives exactly what the same model without the pass gives, on one thread and
    two; the fused model also exactly numpy's (the same float32 ops, no contraction)."""
    import irkit
    from irkit.target import host
    path = tmp_path / f"{name}.irk"
    path.write_text(MODELS[name])
    on, off = (irkit.load_model(path, engine="jit", cache=False, threads=threads,
                                disable=disable)
               for disable in ((), ("vector-streaming-stores",)))
    n = host().llc_bytes // 4 + 1001           # past the threshold, with a remainder
    rng = np.random.default_rng(0)
    inputs = dict(zip("abcd", (rng.standard_normal(n, dtype=np.float32) for _ in range(4))))
    e = on.forward(**inputs)["e"]
    np.testing.assert_array_equal(e, off.forward(**inputs)["e"])
    if name == "fused":
        a, b, c, d = (inputs[k] for k in "abcd")
        np.testing.assert_array_equal(e, d + (a + b) * c)
    small = {k: v[:1000] for k, v in inputs.items()}
    np.testing.assert_array_equal(on.forward(**small)["e"], off.forward(**small)["e"])
