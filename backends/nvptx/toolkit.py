"""NVIDIA's tools the NVPTX backend uses, found on this machine: `ptxas` (PTX -> machine code
for one GPU architecture: the check that the PTX is valid, and the cubin a driver could load)
and libdevice (`libdevice.10.bc`, NVIDIA's math library as LLVM bitcode).

Where they are looked for, in order (the first found wins):

- ptxas: `PATH`; `/usr/local/bin/ptxas`, `/usr/local/cuda/bin/ptxas`; the `nvidia-cuda-nvcc`
  wheel (`site-packages/nvidia/**/bin/ptxas`, CUDA 12's `cuda_nvcc/` and CUDA 13's `cu13/`);
- libdevice: `/usr/local/cuda/nvvm/libdevice/libdevice.10.bc`; the `nvidia-nvvm` or
  `nvidia-cuda-nvcc` wheel (`site-packages/nvidia/**/libdevice.10.bc`).

A missing tool is a `BackendError` that says what is missing and how to get it; nothing is
configured through environment variables (the caller may name a path explicitly).

The architecture (`--gpu-arch`) is `sm_XY` as NVIDIA spells it; the NVPTX target machine is
created for it with LLVM's default PTX version for that architecture, and `ptxas -arch=` is
given the same name.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from irkit.backends.llvm_types import BackendError

#: the GPU architectures code can be generated for (LLVM's NVPTX processors from Turing on:
#: CUDA 13's ptxas no longer accepts older ones)
GPU_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100",
             "sm_100a", "sm_101", "sm_120", "sm_120a")
DEFAULT_ARCH = "sm_90"

_PTXAS_PLACES = ("/usr/local/bin/ptxas", "/usr/local/cuda/bin/ptxas")
_LIBDEVICE_PLACES = ("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc",)


def check_arch(arch: str) -> str:
    """`arch` if it is one of `GPU_ARCHS`, else a ValueError listing them."""
    if arch not in GPU_ARCHS:
        raise ValueError(f"unknown GPU architecture {arch!r}; choose one of "
                         f"{', '.join(GPU_ARCHS)}")
    return arch


def _wheel_files(pattern: str) -> list[str]:
    """Files matching `pattern` under the `nvidia` namespace package of every site-packages
    directory on `sys.path` (where NVIDIA's wheels install)."""
    found = []
    for entry in sys.path:
        root = os.path.join(entry, "nvidia")
        if os.path.isdir(root):
            found += sorted(glob.glob(os.path.join(root, "**", pattern), recursive=True))
    return found


@functools.cache
def find_ptxas() -> str | None:
    """The path of a `ptxas` (see the module docstring), or None."""
    candidates = [shutil.which("ptxas"), *_PTXAS_PLACES, *_wheel_files("bin/ptxas")]
    return next((p for p in candidates if p and os.access(p, os.X_OK)), None)


@functools.cache
def find_libdevice() -> str | None:
    """The path of `libdevice.10.bc` (see the module docstring), or None."""
    candidates = [*_LIBDEVICE_PLACES, *_wheel_files("libdevice.10.bc")]
    return next((p for p in candidates if os.path.isfile(p)), None)


def require_ptxas() -> str:
    path = find_ptxas()
    if path is None:
        raise BackendError("ptxas was not found (looked on PATH, in /usr/local/bin, "
                           "/usr/local/cuda/bin and the nvidia-cuda-nvcc wheel): install the "
                           "CUDA toolkit or `pip install nvidia-cuda-nvcc`")
    return path


def require_libdevice() -> str:
    path = find_libdevice()
    if path is None:
        raise BackendError("libdevice.10.bc (NVIDIA's math library, which GPU code needs for "
                           "exp, log, tanh, ...) was not found in /usr/local/cuda/nvvm/"
                           "libdevice or the nvidia-nvvm wheel: install the CUDA toolkit or "
                           "`pip install nvidia-nvvm`")
    return path


def ptxas(ptx: str, arch: str = DEFAULT_ARCH, *, path: str | None = None,
          timeout: float = 120.0) -> bytes:
    """The cubin `ptxas -arch=ARCH` makes of the PTX text `ptx`; its diagnostics in a
    `BackendError` when it refuses it."""
    exe = path or require_ptxas()
    check_arch(arch)
    with tempfile.TemporaryDirectory(prefix="irkit-ptxas-") as tmp:
        src, out = os.path.join(tmp, "kernels.ptx"), os.path.join(tmp, "kernels.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        try:
            proc = subprocess.run([exe, f"-arch={arch}", "-o", out, src], capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BackendError(f"ptxas did not finish within {timeout:g} s") from None
        if proc.returncode != 0:
            raise BackendError(f"ptxas -arch={arch} rejected the PTX:\n"
                               f"{(proc.stderr or proc.stdout).strip()}")
        with open(out, "rb") as f:
            return f.read()
