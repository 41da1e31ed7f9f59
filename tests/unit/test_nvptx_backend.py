"""The NVPTX backend without a GPU: kernels to PTX checked by ptxas (skipped where it is
missing), unsupported ops as located errors (never LLVM aborting the process), and the
runtime's launch path run against a fake driver (tests/fake_cuda.py) and compared with the
interpreter: argument packing, device memory, copies and the driver's status codes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irkit.backends.llvm_types import BackendError
from irkit.backends.nvptx import (
    check_arch, emit_kernel_llvm_ir, emit_ptx, find_ptxas, host_module, ptxas,
)
from irkit.dialects import register_all
from irkit.interpreter import Interpreter
from irkit.parser import parse_module
from irkit.runtime.compiled import IRText
from irkit.runtime.cuda import CudaEngine, GpuProgram
from irkit.runtime.model import Model
from irkit.symbols import lookup_symbol_in
from tests.fake_cuda import FakeDriver

register_all()

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas is not installed")

#: a kernel y = s * exp(x) over a 1-d grid, and a host function that allocates device
#: buffers, copies in, launches, copies out and frees (the model calling convention: an
#: input `x` of size N, an output of the same size)
SCALE = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<?xf32>, %b: memref<?xf32>, %n: index, %s: f32) kernel {
      %t = gpu.thread_id x
      %bi = gpu.block_id x
      %d = gpu.block_dim x
      %0 = arith.muli %bi, %d : index
      %i = arith.addi %0, %t : index
      %ok = arith.cmpi slt, %i, %n : index
      loop.if %ok {
        %x = memory.load %a[%i] : memref<?xf32>
        %e = math.exp %x : f32
        %y = arith.mulf %e, %s : f32
        memory.store %y, %b[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @forward(%x: memref<?xf32> {graph.name = "x", graph.dims = ["N"]},
                     %y: memref<?xf32> {graph.output = 0 : i64, graph.name = "y",
                                        graph.dims = ["N"]}) {
    %c1 = arith.constant 1 : index
    %c63 = arith.constant 63 : index
    %c64 = arith.constant 64 : index
    %s = arith.constant 2.0 : f32
    %n = memory.dim %x, 0 : memref<?xf32>
    %tmp = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %tmp, %x : memref<?xf32>, memref<?xf32>
    %n63 = arith.addi %n, %c63 : index
    %g = arith.divui %n63, %c64 : index
    gpu.launch_func @kernels::@scale blocks in (%g, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%tmp : memref<?xf32>, %y : memref<?xf32>, %n : index, %s : f32)
    gpu.dealloc %tmp : memref<?xf32>
    func.return
  }
}
"""


def _module(text: str = SCALE):
    m = parse_module(text, "scale.mlir")
    m.verify()
    return m


def _model(driver, text: str = SCALE) -> Model:
    """A Model of the hand-lowered module on `driver` (its PTX compiled here)."""
    lowered = _module(text)
    ptx, kernels = emit_ptx(lowered)
    empty = parse_module("module {}", "graph.mlir")
    program = GpuProgram("scale", "sm_90", ptx, [k.symbol for k in kernels], IRText(lowered),
                         IRText(empty), IRText(lowered))
    return Model.from_engine("scale", CudaEngine(program, driver))


# ---------------------------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------------------------


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_passes_ptxas(arch):
    ptx, kernels = emit_ptx(_module(), arch)
    assert [k.symbol for k in kernels] == ["kernels__scale"]
    assert f".target {arch}" in ptx
    assert ptxas(ptx, arch)[:4] == b"\x7fELF"


def test_math_is_libdevice_linked_and_internalized():
    """libdevice's expf is linked in and inlined (libdevice marks its functions
    alwaysinline), and the other ~570 functions are dropped, at -O0 as at -O2; the kernel is
    the only function left."""
    for level in (0, 2):
        text = emit_kernel_llvm_ir(_module(), opt_level=level)
        defined = [line for line in text.splitlines() if line.startswith("define")]
        assert len(defined) == 1 and "define ptx_kernel void @kernels__scale" in defined[0]
        assert "__nv_" not in text and "llvm.exp." not in text
        assert "llvm.nvvm.ex2.approx" in text            # the body of libdevice's expf


@needs_ptxas
def test_ptxas_rejection_is_a_backend_error():
    with pytest.raises(BackendError, match="ptxas -arch=sm_90 rejected"):
        ptxas(".version 8.0\n.target sm_90\n.address_size 64\nnot ptx\n")


def test_unknown_arch():
    with pytest.raises(ValueError, match="unknown GPU architecture 'sm_999'"):
        check_arch("sm_999")


def _kernel_with(body: str, args: str = "%a: memref<4xf32>") -> str:
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m {{
    gpu.func @k({args}) kernel {{
{body}
      gpu.return
    }}
  }}
}}"""


@pytest.mark.parametrize("body, message", [
    ("      %r = mpi.comm_rank : index",
     "4:12: error: 'mpi.comm_rank' op cannot be compiled for NVIDIA GPUs: it needs the C "
     "library function 'MPI_Comm_rank'"),
    ("      %c = arith.constant 3 : i32\n"
     "      %l, %h = arith.mului_extended %c, %c : i32",
     "5:16: error: 'arith.mului_extended' op cannot be translated to LLVM IR: no lowering"),
])
def test_unsupported_op_is_a_located_error(body, message):
    module = parse_module(_kernel_with(body, "%n: index"), "bad.mlir")
    with pytest.raises(BackendError) as info:
        emit_ptx(module)
    assert message in info.value.render()


# ---------------------------------------------------------------------------------------------
# The launch path, on a fake driver
# ---------------------------------------------------------------------------------------------


def test_host_code_launches_through_the_table():
    """The host function on the fake driver computes what the interpreter computes, with one
    launch of the grid it asked for and every device buffer freed."""
    driver = FakeDriver()
    m = _model(driver)
    x = np.linspace(-3, 3, 130).astype(np.float32)
    got = m.forward(x=x)["y"]
    want = np.empty_like(x)
    Interpreter(_module(), {}).call(lookup_symbol_in(_module(), "forward"), [x, want])
    np.testing.assert_array_equal(got, want)
    assert driver.launches == [("kernels__scale", (3, 1, 1), (64, 1, 1))]
    assert driver.errors == []
    # the runner's input and output buffers stay for the next call; the temporary is freed
    assert len(driver.buffers) == 2


def test_driver_failure_is_located_at_the_op():
    driver = FakeDriver()
    m = _model(driver)
    driver.fail["cuLaunchKernel"] = 701
    with pytest.raises(RuntimeError, match=r"scale.forward: scale.mlir:\d+:\d+: error: "
                                           r"'gpu.launch_func' op: the CUDA driver failed "
                                           r"with CUresult 701"):
        m.forward(x=np.ones(8, np.float32))
    m.forward(x=np.ones(8, np.float32))             # the status is reset for the next call


#: a block reverses 64 floats through workgroup memory, a barrier between its writes and
#: reads (`gpu.memcpy` first copies the input into the output buffer, device to device)
REVERSE = """
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @reverse(%a: memref<64xf32>)
        workgroup(%w : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c63 = arith.constant 63 : index
      %t = gpu.thread_id x
      %x = memory.load %a[%t] : memref<64xf32>
      memory.store %x, %w[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = arith.subi %c63, %t : index
      %y = memory.load %w[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memory.store %y, %a[%t] : memref<64xf32>
      gpu.return
    }
  }
  func.func @forward(%x: memref<64xf32> {graph.name = "x"},
                     %y: memref<64xf32> {graph.output = 0 : i64, graph.name = "y"}) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.memcpy %y, %x : memref<64xf32>, memref<64xf32>
    gpu.launch_func @m::@reverse blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%y : memref<64xf32>)
    func.return
  }
}
"""


def test_shared_memory_and_barrier():
    ptx, _ = emit_ptx(_module(REVERSE))
    assert re.search(r"\.shared \.align 16 \.b8 __irkit_shared_0\[256\]", ptx)
    assert re.search(r"bar\.sync\s+0;", ptx)
    assert "ld.shared" in ptx and "st.shared" in ptx     # generic addresses inferred back
    if find_ptxas() is not None:
        ptxas(ptx)
    driver = FakeDriver()
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(_model(driver, REVERSE).forward(x=x)["y"], x[::-1])


@needs_ptxas
def test_kernel_buffers():
    """A kernel's buffer of static size is a stack slot, one of dynamic size CUDA's device
    heap (`malloc`/`free`, which ptxas resolves)."""
    body = ("      %s = memory.alloc() : memref<4xf32>\n"
            "      %d = memory.alloc(%n) : memref<?xf32>\n"
            "      memory.dealloc %d : memref<?xf32>\n"
            "      memory.dealloc %s : memref<4xf32>")
    ptx, _ = emit_ptx(parse_module(_kernel_with(body, "%n: index"), "buffers.mlir"),
                      opt_level=0)
    assert ".local .align" in ptx
    assert re.search(r"call\.uni \(retval0\),\s+malloc", ptx) and "free," in ptx
    ptxas(ptx)


#: a kernel that checks its index against a bound: the run-time error channel of compiled
#: code (`memory.check` into the status buffer) from the GPU
CHECKED = """
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @check(%x: memref<4xi64>, %status: memref<3xi64>) kernel {
      %c3 = arith.constant 3 : i64
      %t = gpu.thread_id x
      %v = memory.load %x[%t] : memref<4xi64>
      %ok = arith.cmpi slt, %v, %c3 : i64
      memory.check %ok, %v, %c3, %status
          {code = 1 : i64, message = "label {value} is out of range for {bound} classes"}
          : memref<3xi64>
      gpu.return
    }
  }
  func.func @forward(%x: memref<4xi64> {graph.name = "x"},
                     %y: memref<4xi64> {graph.output = 0 : i64, graph.name = "y"},
                     %status: memref<3xi64> {graph.status}) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.memcpy %y, %x : memref<4xi64>, memref<4xi64>
    gpu.launch_func @m::@check blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1)
        args(%x : memref<4xi64>, %status : memref<3xi64>)
    func.return
  }
}
"""


def test_kernel_check_reaches_the_caller():
    """A failed `memory.check` in a kernel writes the status buffer on the device; the
    runtime copies it back and raises the check's located message, as the CPU's does."""
    m = _model(FakeDriver(), CHECKED)
    np.testing.assert_array_equal(m.forward(x=np.arange(4) % 3)["y"], np.arange(4) % 3)
    with pytest.raises(ValueError, match=r"scale.forward: scale.mlir:\d+:\d+: error: "
                                         r".*label 7 is out of range for 3 classes"):
        m.forward(x=np.array([0, 7, 1, 2]))


def test_host_module_drops_the_kernels():
    host = host_module(_module(), ["kernels__scale"])
    assert [op.name for op in host.regions[0].blocks[0].ops] == ["func.func"]
    assert [a.value for a in host.attributes["gpu.kernels"]] == ["kernels__scale"]
