#!/usr/bin/env python3
"""The GPU check: irkit's `engine="cuda"` on a machine with an NVIDIA GPU, one table.

    python bench/gpu_check.py [--steps 3] [--repeat 20] [--arch sm_90] [--quick]

1. Every example model (examples/*.irk): `forward` on the GPU against the same model compiled
   for this CPU (the JIT), then `--steps` training steps on each from the same variables,
   comparing the losses and the variables after the steps. Tolerance: |gpu - cpu| <= 1e-4 +
   1e-3 * |cpu| elementwise (float32 sums run in another order on the GPU, and libdevice's
   math differs from the CPU's polynomials by a few ulp).
2. Bandwidth: a fused elementwise kernel, `y = tanh(x * a + b)` over 2^26 float32, against a
   device-to-device copy of the same bytes (`cuMemcpyDtoD`): GB/s of each (bytes read plus
   written, over the median time), and their ratio (target: >= 80%).
3. Matmul: `c = a @ b` at 4096^3 float32, TFLOP/s, against cuBLAS SGEMM through CuPy or
   PyTorch when one is installed (target: >= 50% of cuBLAS).
4. The MLP training step (examples/mlp.irk, batch 1024) against the same model in PyTorch on
   CUDA when it is installed.

Timing: the median of `--repeat` runs after a warm-up, each ended by `cuCtxSynchronize`;
irkit's compiled host function is called on buffers already on the device
(`CudaRunner.call_device`), so host-device copies are not in the kernels' numbers.

What must travel to the GPU machine (it has no package registry): the working tree, installed
there without a registry (`pip install --no-deps --no-build-isolation --target DIR .`: the
source folders are mapped into the `irkit` package at install), and a Python 3.11+ with numpy, llvmlite (>= 0.44) and lark,
which irkit needs everywhere, plus NVIDIA's `cuda-bindings` (`pip install 'irkit[cuda]'`:
carry its wheel or an environment that has it). Neither ptxas nor libdevice is needed there
if they are missing: libdevice is linked at compile time here or there, and the driver JITs
the PTX. torch and cupy are optional (their rows say n/a without them). The script checks all
of this first and says what is missing, exit status 2.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

REQUIRED = {"numpy": "numpy", "llvmlite": "llvmlite", "lark": "lark",
            "cuda.bindings": "cuda-bindings (pip install 'irkit[cuda]')"}
RTOL, ATOL = 1e-3, 1e-4


def _missing() -> list[str]:
    import importlib
    out = []
    for module, what in REQUIRED.items():
        try:
            importlib.import_module(module)
        except ImportError:
            out.append(what)
    return out


def _optional(name: str):
    try:
        return __import__(name)
    except ImportError:
        return None


def _median_ms(fn, sync, repeat: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _batch(model, n: int, seed: int) -> dict:
    from irkit.runtime.inputs import random_inputs
    return random_inputs(model.inputs, n, seed)


def _worst(got: dict, want: dict) -> float:
    """The largest |got - want| / (ATOL + RTOL |want|) over every array: <= 1 passes."""
    import numpy as np
    worst = 0.0
    for k, w in want.items():
        g, w = np.asarray(got[k], np.float64), np.asarray(w, np.float64)
        worst = max(worst, float(np.max(np.abs(g - w) / (ATOL + RTOL * np.abs(w)),
                                        initial=0.0)))
    return worst


def check_examples(rows: list, driver, steps: int, arch: str) -> None:
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.runtime.cuda import CudaEngine
    from irkit.runtime.model import Model
    for path in sorted((ROOT / "examples").glob("*.irk")):
        for name, module in model_modules(compile_source(path.read_text(), str(path))).items():
            label = f"{path.stem}:{name}"
            try:
                gpu = Model.from_engine(name, CudaEngine.from_module(module, driver=driver,
                                                                     arch=arch))
                cpu = Model(module, "jit")
                batch = _batch(cpu, 32, 0)
                worst = _worst(gpu.forward(**batch), cpu.forward(**batch))
                if cpu.trainable:
                    for step in range(steps):
                        b = _batch(cpu, 32, step + 1)
                        worst = max(worst, _worst(gpu.train_step(**b), cpu.train_step(**b)))
                    worst = max(worst, _worst({v: gpu.variables[v] for v in cpu.variables},
                                              {v: cpu.variables[v] for v in cpu.variables}))
                verdict = "ok" if worst <= 1 else "DIFFERS"
                rows.append((f"example {label}", f"{worst:.3f} of tolerance", verdict))
            except Exception as e:          # a table row per model, whatever fails
                traceback.print_exc()
                rows.append((f"example {label}", f"{type(e).__name__}: {e}"[:90], "FAILED"))


def _device_program(source: str, driver, arch: str):
    """(runner, entry) of the one-model DSL `source` compiled for the GPU."""
    from irkit.frontend.dsl import compile_source, model_modules
    from irkit.runtime.cuda import CudaRunner, compile_gpu_model
    (_, module), = model_modules(compile_source(source, "gpu_check.irk")).items()
    runner = CudaRunner(compile_gpu_model(module, arch=arch), driver)
    return runner, runner.entries["forward"]


def _device_buffers(driver, runner, entry, sizes: dict) -> list[tuple[int, tuple]]:
    """A device buffer for every argument of `entry` (`sizes` binds the symbolic dims):
    inputs filled with ones, variables with their initial values, the status zeroed."""
    import numpy as np
    from irkit.dialects.graph import variable_specs
    variables = {name: value for name, _, _, value in variable_specs(runner.module)}
    out = []
    for kind, key in entry.order:
        if kind == "in":
            spec = entry.inputs[key]
            host = np.ones(tuple(sizes.get(d, d) for d in spec.dims), spec.dtype)
        elif kind == "out":
            host = np.empty(entry.output_shape(key, sizes, "forward"),
                            entry.output_dtypes[key])
        elif kind == "status":
            host = np.zeros(3, np.int64)
        else:
            host = np.ascontiguousarray(variables[key])
        ptr = driver.alloc(host.nbytes)
        driver.upload(ptr, host)
        out.append((ptr, host.shape))
    return out


def check_bandwidth(rows: list, driver, repeat: int, arch: str, n: int) -> None:
    runner, entry = _device_program(
        "model ew {\n input x: f32[N]\n param a: f32[1] = ones\n param b: f32[1] = zeros\n"
        " y = tanh(x * a + b)\n output y\n}\n", driver, arch)
    buffers = _device_buffers(driver, runner, entry, {"N": n})
    nbytes = 2 * 4 * n                  # x read, y written
    fused = _median_ms(lambda: runner.call_device("forward", buffers), driver.synchronize,
                       repeat)
    src, dst = driver.alloc(4 * n), driver.alloc(4 * n)
    copy = _median_ms(lambda: driver.copy(dst, src, 4 * n), driver.synchronize, repeat)
    fused_gbs, copy_gbs = nbytes / fused / 1e6, nbytes / copy / 1e6
    rows.append((f"fused elementwise tanh(x*a+b), {n} f32", f"{fused:.3f} ms, {fused_gbs:.0f} "
                 f"GB/s", f"{100 * fused_gbs / copy_gbs:.0f}% of copy"))
    rows.append(("device-to-device copy, same bytes", f"{copy:.3f} ms, {copy_gbs:.0f} GB/s",
                 "reference"))


def check_matmul(rows: list, driver, repeat: int, arch: str, n: int) -> None:
    runner, entry = _device_program(
        f"model mm {{\n input a: f32[{n}, {n}]\n input b: f32[{n}, {n}]\n c = a @ b\n"
        " output c\n}\n", driver, arch)
    buffers = _device_buffers(driver, runner, entry, {})
    ours = _median_ms(lambda: runner.call_device("forward", buffers), driver.synchronize,
                      repeat)
    flops = 2 * n ** 3
    ref, what = _cublas_ms(n, repeat)
    ratio = f"{100 * ref / ours:.0f}% of cuBLAS ({what})" if ref else "n/a (no cupy/torch)"
    rows.append((f"matmul {n}^3 f32", f"{ours:.2f} ms, {flops / ours / 1e9:.1f} TFLOP/s",
                 ratio))
    if ref:
        rows.append((f"cuBLAS SGEMM {n}^3 ({what})", f"{ref:.2f} ms, "
                     f"{flops / ref / 1e9:.1f} TFLOP/s", "reference"))


def _cublas_ms(n: int, repeat: int) -> tuple[float | None, str]:
    cupy = _optional("cupy")
    if cupy is not None:
        a = cupy.ones((n, n), cupy.float32)
        return _median_ms(lambda: a @ a, cupy.cuda.runtime.deviceSynchronize, repeat), "CuPy"
    torch = _optional("torch")
    if torch is not None and torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = False
        a = torch.ones((n, n), device="cuda")
        return _median_ms(lambda: a @ a, torch.cuda.synchronize, repeat), "PyTorch"
    return None, ""


def check_mlp(rows: list, driver, repeat: int, arch: str, batch: int) -> None:
    source = (ROOT / "examples" / "mlp.irk").read_text()
    runner, _ = _device_program(source, driver, arch)
    entry = runner.entries["train_step"]
    buffers = _device_buffers(driver, runner, entry, {"B": batch})
    ours = _median_ms(lambda: runner.call_device("train_step", buffers), driver.synchronize,
                      repeat)
    torch = _optional("torch")
    if torch is None or not torch.cuda.is_available():
        rows.append((f"MLP train_step B={batch}", f"{ours:.3f} ms", "n/a (no torch CUDA)"))
        return
    ref = _torch_mlp_ms(torch, batch, repeat)
    rows.append((f"MLP train_step B={batch}", f"{ours:.3f} ms", f"{ref / ours:.2f}x PyTorch"))
    rows.append((f"PyTorch CUDA MLP step B={batch}", f"{ref:.3f} ms", "reference"))


def _torch_mlp_ms(torch, batch: int, repeat: int) -> float:
    """examples/mlp.irk in PyTorch: 64-128-10, ReLU, mean cross-entropy, Adam lr 1e-3."""
    net = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10)).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(batch, 64, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    return _median_ms(step, torch.cuda.synchronize, repeat)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3, help="training steps per example")
    ap.add_argument("--repeat", type=int, default=20, help="timed runs per measurement")
    ap.add_argument("--arch", default="sm_90", help="the GPU architecture to compile for")
    ap.add_argument("--quick", action="store_true",
                    help="smaller sizes (2^22 elements, 1024^3 matmul), for a first try")
    args = ap.parse_args(argv)
    missing = _missing()
    if missing:
        sys.stderr.write("bench/gpu_check.py: missing " + ", ".join(missing) + ": these must "
                         "travel with the working tree (see the module docstring)\n")
        return 2
    from irkit.dialects import register_all
    from irkit.runtime.cuda import CudaDriver
    register_all()
    try:
        driver = CudaDriver()
    except RuntimeError as e:
        sys.stderr.write(f"bench/gpu_check.py: {e}\n")
        return 2
    rows: list = []
    checks = [
        ("examples", lambda: check_examples(rows, driver, args.steps, args.arch)),
        ("bandwidth", lambda: check_bandwidth(rows, driver, args.repeat, args.arch,
                                              1 << (22 if args.quick else 26))),
        ("matmul", lambda: check_matmul(rows, driver, args.repeat, args.arch,
                                        1024 if args.quick else 4096)),
        ("mlp", lambda: check_mlp(rows, driver, args.repeat, args.arch, 1024)),
    ]
    for what, run in checks:
        t0 = time.perf_counter()
        try:
            run()
        except Exception as e:
            traceback.print_exc()
            rows.append((what, f"{type(e).__name__}: {e}"[:90], "FAILED"))
        sys.stderr.write(f"[{what}: {time.perf_counter() - t0:.1f} s]\n")
    width = max(len(r[0]) for r in rows)
    print(f"| {'check':{width}} | result | verdict |\n|{'-' * (width + 2)}|---|---|")
    for check, result, verdict in rows:
        print(f"| {check:{width}} | {result} | {verdict} |")
    return 0 if all(r[2] not in ("FAILED", "DIFFERS") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
