"""The NVPTX backend: irkit's GPU code (`gpu.module`s of kernels and the host functions that
launch them) compiled for NVIDIA GPUs with llvmlite.

    ptx, kernels = emit_ptx(module, arch="sm_90")   # every kernel, one PTX text
    cubin = ptxas(ptx, arch="sm_90")                 # validated by NVIDIA's assembler
    host = host_module(module, kernels)              # the func.funcs, for the CPU backend

Parts, in the order code flows through them:

- `toolkit`: finding `ptxas` and libdevice, the architectures (`--gpu-arch`), running ptxas;
- `libdevice`: the `math` ops as libdevice calls, and linking libdevice into the kernels;
- `kernels`: `gpu.module` -> LLVM IR for `nvptx64-nvidia-cuda` -> PTX; the rules of the gpu
  ops, on top of the CPU backend's rules for `arith`, `loop`, `memory` and `vector`;
- `host`: `gpu.launch_func`, `gpu.alloc`, `gpu.dealloc`, `gpu.memcpy` in host functions as
  calls of the CUDA driver through a table the runtime fills (`irkit.runtime.cuda`).
"""

from irkit.backends.nvptx.toolkit import (
    DEFAULT_ARCH, GPU_ARCHS, check_arch, find_libdevice, find_ptxas, ptxas,
)
from irkit.backends.nvptx.kernels import (
    KernelInfo, emit_kernel_llvm_ir, emit_ptx, gpu_modules, kernel_symbol, nvptx_module,
)
from irkit.backends.nvptx.host import host_module, host_sites

__all__ = ["DEFAULT_ARCH", "GPU_ARCHS", "check_arch", "find_libdevice", "find_ptxas", "ptxas",
           "KernelInfo", "emit_kernel_llvm_ir", "emit_ptx", "gpu_modules", "kernel_symbol",
           "nvptx_module", "host_module", "host_sites"]
