"""The gpu dialect: its generic form read by the real mlir-opt, and its reference semantics --
grids run block by block, threads in lockstep between barriers (a shared-memory reversal and
a tree reduction with barriers in a loop), shared memory per block, ids, dynamic shared
memory, the host's alloc/memcpy/dealloc, and launches a GPU would refuse or barriers only some
threads reach reported as located errors. The verifier's rules are in
tests/filecheck/dialects/gpu/invalid.mlir, the custom and generic forms in ops.mlir."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from irkit.interpreter import InterpreterError, interpret
from irkit.parser import parse_module
from irkit.printer import print_op

OPS = Path(__file__).resolve().parents[1] / "filecheck" / "dialects" / "gpu" / "ops.mlir"
MLIR_OPT = shutil.which("/usr/lib/llvm-22/bin/mlir-opt") or shutil.which("mlir-opt")

#: a kernel over 8 floats in blocks of 4: each block reverses its 4 through shared memory;
#: BARRIER is where the threads must wait for each other's stores
REVERSE = """
module attributes {gpu.container_module} {
  func.func @reverse(%a: memref<8xf32>, %out: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @m::@rev blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%a : memref<8xf32>, %out : memref<8xf32>)
    return
  }
  gpu.module @m {
    gpu.func @rev(%a: memref<8xf32>, %out: memref<8xf32>)
        workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %c3 = arith.constant 3 : index
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %n = gpu.block_dim x
      %base = arith.muli %b, %n : index
      %i = arith.addi %base, %t : index
      %v = memory.load %a[%i] : memref<8xf32>
      memory.store %v, %w[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      BARRIER
      %r = arith.subi %c3, %t : index
      %u = memory.load %w[%r] : memref<4xf32, #gpu.address_space<workgroup>>
      memory.store %u, %out[%i] : memref<8xf32>
      gpu.return
    }
  }
}
"""


def _reverse(barrier: str) -> np.ndarray:
    module = parse_module(REVERSE.replace("BARRIER", barrier))
    module.verify()
    out = np.zeros(8, np.float32)
    interpret(module, "reverse", np.arange(8, dtype=np.float32), out)
    return out


def test_generic_form_is_what_mlir_opt_reads():
    """irkit's generic output of every op, read by MLIR 22 and printed generically again,
    reads back in irkit as the very same module."""
    if MLIR_OPT is None:
        pytest.skip("mlir-opt not found")
    module = parse_module(OPS.read_text(), str(OPS))
    ours = print_op(module, generic=True)
    out = subprocess.run([MLIR_OPT, "--mlir-print-op-generic", "-"], input=ours,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert re.search(r'"gpu\.launch_func"', out.stdout)
    assert print_op(parse_module(out.stdout), generic=True) == ours


def test_barrier_makes_the_shared_memory_reversal_right():
    np.testing.assert_array_equal(_reverse("gpu.barrier"), [3, 2, 1, 0, 7, 6, 5, 4])


def test_without_the_barrier_the_reversal_reads_unwritten_shared_memory():
    """Not required to be right: threads then run one after another here, so thread 0 reads
    what thread 3 has not stored yet (fresh shared memory is NaN)."""
    out = _reverse("")
    assert np.isnan(out[0]) and np.isnan(out[4])


def test_tree_reduction_with_barriers_in_a_loop():
    """Each block halves its shared array until one element holds the block's sum: the
    barrier inside the loop.for keeps all threads on the same step."""
    text = """
    module attributes {gpu.container_module} {
      func.func @sums(%a: memref<16xf32>, %out: memref<2xf32>) {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c8 = arith.constant 8 : index
        gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
                   threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1)
                   workgroup(%w : memref<8xf32, #gpu.address_space<workgroup>>) {
          %c0 = arith.constant 0 : index
          %c3 = arith.constant 3 : index
          %base = arith.muli %bx, %sx : index
          %i = arith.addi %base, %tx : index
          %v = memory.load %a[%i] : memref<16xf32>
          memory.store %v, %w[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
          gpu.barrier
          loop.for %k = %c0 to %c3 step %c1 {
            %e = arith.subi %c2, %k : index
            %half = arith.shli %c1, %e : index
            %active = arith.cmpi ult, %tx, %half : index
            loop.if %active {
              %j = arith.addi %tx, %half : index
              %x = memory.load %w[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
              %y = memory.load %w[%j] : memref<8xf32, #gpu.address_space<workgroup>>
              %s = arith.addf %x, %y : f32
              memory.store %s, %w[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
            }
            gpu.barrier
          }
          %first = arith.cmpi eq, %tx, %c0 : index
          loop.if %first {
            %s = memory.load %w[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
            memory.store %s, %out[%bx] : memref<2xf32>
          }
          gpu.terminator
        }
        return
      }
    }
    """
    module = parse_module(text)
    module.verify()
    a = np.random.default_rng(0).normal(size=16).astype(np.float32)
    out = np.zeros(2, np.float32)
    interpret(module, "sums", a, out)
    np.testing.assert_allclose(out, a.reshape(2, 8).sum(axis=1), rtol=1e-6)


def test_every_thread_sees_its_ids():
    """A 2x3x1 grid of 2x1x2 blocks: each thread stores its linear id where its coordinates
    say; the grid and block sizes come back too."""
    text = """
    module attributes {gpu.container_module} {
      func.func @ids(%out: memref<3x2x2x1x2xindex>, %sizes: memref<6xindex>) {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c3 = arith.constant 3 : index
        gpu.launch_func @m::@k blocks in (%c2, %c3, %c1) threads in (%c2, %c1, %c2)
            args(%out : memref<3x2x2x1x2xindex>, %sizes : memref<6xindex>)
        return
      }
      gpu.module @m {
        gpu.func @k(%out: memref<3x2x2x1x2xindex>, %sizes: memref<6xindex>) kernel {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c10 = arith.constant 10 : index
          %bx = gpu.block_id x
          %by = gpu.block_id y
          %tx = gpu.thread_id x
          %ty = gpu.thread_id y
          %tz = gpu.thread_id z
          %a = arith.muli %by, %c10 : index
          %b = arith.addi %a, %bx : index
          %c = arith.muli %b, %c10 : index
          %d = arith.addi %c, %tz : index
          memory.store %d, %out[%by, %bx, %tz, %ty, %tx] : memref<3x2x2x1x2xindex>
          %gx = gpu.grid_dim x
          %gy = gpu.grid_dim y
          %gz = gpu.grid_dim z
          %sx = gpu.block_dim x
          %sy = gpu.block_dim y
          %sz = gpu.block_dim z
          memory.store %gx, %sizes[%c0] : memref<6xindex>
          memory.store %gy, %sizes[%c1] : memref<6xindex>
          %c2 = arith.constant 2 : index
          %c3 = arith.constant 3 : index
          %c4 = arith.constant 4 : index
          %c5 = arith.constant 5 : index
          memory.store %gz, %sizes[%c2] : memref<6xindex>
          memory.store %sx, %sizes[%c3] : memref<6xindex>
          memory.store %sy, %sizes[%c4] : memref<6xindex>
          memory.store %sz, %sizes[%c5] : memref<6xindex>
          gpu.return
        }
      }
    }
    """
    module = parse_module(text)
    module.verify()
    out = np.full((3, 2, 2, 1, 2), -1, np.int64)
    sizes = np.zeros(6, np.int64)
    interpret(module, "ids", out, sizes)
    by, bx, tz = np.meshgrid(range(3), range(2), range(2), indexing="ij")
    want = (by * 10 + bx) * 10 + tz
    np.testing.assert_array_equal(out, np.broadcast_to(want[..., None, None], out.shape))
    np.testing.assert_array_equal(sizes, [2, 3, 1, 2, 1, 2])


def test_dynamic_shared_memory_is_per_block_bytes():
    """16 bytes of dynamic shared memory seen as 4 floats: each block's threads store and
    (after a barrier) load a neighbour's element."""
    text = """
    module attributes {gpu.container_module} {
      func.func @shift(%a: memref<8xf32>, %out: memref<8xf32>) {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c4 = arith.constant 4 : index
        %bytes = arith.constant 16 : i32
        gpu.launch_func @m::@k blocks in (%c2, %c1, %c1) threads in (%c4, %c1, %c1)
            dynamic_shared_memory_size %bytes args(%a : memref<8xf32>, %out : memref<8xf32>)
        return
      }
      gpu.module @m {
        gpu.func @k(%a: memref<8xf32>, %out: memref<8xf32>) kernel {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
          %w = memory.view %raw[%c0][] : memref<?xi8, #gpu.address_space<workgroup>>
              to memref<4xf32, #gpu.address_space<workgroup>>
          %t = gpu.thread_id x
          %b = gpu.block_id x
          %base = arith.muli %b, %c4 : index
          %i = arith.addi %base, %t : index
          %v = memory.load %a[%i] : memref<8xf32>
          memory.store %v, %w[%t] : memref<4xf32, #gpu.address_space<workgroup>>
          gpu.barrier
          %n = arith.addi %t, %c1 : index
          %j = arith.remui %n, %c4 : index
          %u = memory.load %w[%j] : memref<4xf32, #gpu.address_space<workgroup>>
          memory.store %u, %out[%i] : memref<8xf32>
          gpu.return
        }
      }
    }
    """
    module = parse_module(text)
    module.verify()
    out = np.zeros(8, np.float32)
    interpret(module, "shift", np.arange(8, dtype=np.float32), out)
    np.testing.assert_array_equal(out, [1, 2, 3, 0, 5, 6, 7, 4])


def test_host_alloc_memcpy_dealloc():
    text = """
    func.func @roundtrip(%h: memref<?xf32>, %back: memref<?xf32>) {
      %c0 = arith.constant 0 : index
      %n = memory.dim %h, 0 : memref<?xf32>
      %d = gpu.alloc (%n) : memref<?xf32>
      gpu.memcpy %d, %h : memref<?xf32>, memref<?xf32>
      gpu.memcpy %back, %d : memref<?xf32>, memref<?xf32>
      gpu.dealloc %d : memref<?xf32>
      return
    }
    """
    module = parse_module(text)
    module.verify()
    h = np.arange(5, dtype=np.float32)
    back = np.zeros(5, np.float32)
    interpret(module, "roundtrip", h, back)
    np.testing.assert_array_equal(back, h)
    twice = parse_module(text.replace("return", "gpu.dealloc %d : memref<?xf32>\n return"))
    with pytest.raises(InterpreterError, match="'gpu.dealloc' frees a buffer that was "
                                               "already deallocated"):
        interpret(twice, "roundtrip", h, back)


def test_barrier_only_some_threads_reach_is_an_error():
    barrier = """%c2 = arith.constant 2 : index
      %some = arith.cmpi ult, %t, %c2 : index
      loop.if %some {
        gpu.barrier
      }"""
    with pytest.raises(InterpreterError) as e:
        _reverse(barrier)
    assert "'gpu.barrier' is not reached by every thread of block (0, 0, 0): 2 of 4 threads " \
           "wait at a barrier, 2 returned without it" in str(e.value)


@pytest.mark.parametrize("grid,block,message", [
    ("%c0, %c1, %c1", "%c4, %c1, %c1", r"launches a grid of size \(0, 1, 1\): every "
                                       r"dimension must be at least 1"),
    ("%c1, %c1, %c1", "%c2048, %c1, %c1", r"launches a block of size \(2048, 1, 1\): "
                                          r"dimension x may be at most 1024"),
    ("%c1, %c1, %c1", "%c64, %c64, %c1", r"launches blocks of 4096 threads \(64, 64, 1\): a "
                                         r"block may have at most 1024"),
])
def test_launches_a_gpu_would_refuse_are_errors(grid, block, message):
    text = f"""
    module attributes {{gpu.container_module}} {{
      func.func @f() {{
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %c2048 = arith.constant 2048 : index
        gpu.launch_func @m::@k blocks in ({grid}) threads in ({block})
        return
      }}
      gpu.module @m {{
        gpu.func @k() kernel {{
          gpu.return
        }}
      }}
    }}
    """
    module = parse_module(text)
    module.verify()
    with pytest.raises(InterpreterError, match=f"'gpu.launch_func' {message}"):
        interpret(module, "f")
