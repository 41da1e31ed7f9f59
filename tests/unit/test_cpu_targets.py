"""Code for another CPU than this one (`--cpu`, backends/llvm_cpu.py `cpu_target`), and the
loaders' refusal of a CPU without the features a library was compiled for: Python's
(`irkit.load`, against LLVM's detection of this CPU, faked here) and the C API's
(`irkit_init`, CPUID: checked here against LLVM's detection of this very CPU).

Skips without llvmlite, off x86-64, or (for libraries) without a C compiler.
"""

from __future__ import annotations

import json
import re
import subprocess
import textwrap

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import irkit  # noqa: E402
from irkit.backends import llvm_cpu  # noqa: E402
from irkit.backends.llvm_cpu import (  # noqa: E402
    BackendError, compile_module, cpu_target, emit_assembly, find_c_compiler,
)
from irkit.exporters import library, library_c  # noqa: E402
from irkit.interpreter import interpret  # noqa: E402
from irkit.parser import parse_module  # noqa: E402
from irkit.tools.compile import main as irkit_compile  # noqa: E402

if not cpu_target()["triple"].startswith("x86_64"):
    pytest.skip("the --cpu levels are x86-64's", allow_module_level=True)

AXPY = """
func.func @axpy(%x: memref<?xf32>, %y: memref<?xf32>, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memory.dim %x, 0 : memref<?xf32>
  loop.for %i = %c0 to %n step %c1 {
    %u = memory.load %x[%i] : memref<?xf32>
    %v = memory.load %y[%i] : memref<?xf32>
    %w = arith.mulf %u, %a : f32
    %z = arith.addf %w, %v : f32
    memory.store %z, %y[%i] : memref<?xf32>
  }
  return
}
"""

REDUCE = """
model red {
  input x: f32[N, 96]
  param w: f32[96, 8] = normal(std=0.1, seed=3)
  h = x @ w
  s = sum(x * x, axis=1)
  m = mean(h, axis=1)
  output s, m, h
}
"""


def _features(target: dict) -> set[str]:
    return {f[1:] for f in target["features"].split(",") if f.startswith("+")}


def _host_features() -> dict[str, bool]:
    import llvmlite.binding as llvm
    return dict(llvm.get_host_cpu_features())


def test_levels_name_llvm_features():
    v3, v4, generic = (cpu_target(c) for c in ("x86-64-v3", "x86-64-v4", "generic"))
    assert (v3["cpu"], v4["cpu"], generic["cpu"]) == ("x86-64-v3", "x86-64-v4", "x86-64")
    assert {"avx2", "fma", "bmi2", "f16c", "sse4.2"} <= _features(v3)
    assert "avx512f" not in _features(v3)
    assert _features(v3) | {"avx512f", "avx512bw", "avx512cd", "avx512dq",
                            "avx512vl"} == _features(v4)
    assert "sse2" in _features(generic) and "avx" not in _features(generic)
    known = _host_features()            # every x86 feature LLVM knows, true or false
    assert _features(v4) <= set(known)
    assert cpu_target("native") == llvm_cpu.host_target()
    with pytest.raises(ValueError, match="unknown cpu 'pentium'"):
        cpu_target("pentium")


def test_code_for_a_level_uses_its_registers_only():
    module = parse_module(textwrap.dedent(AXPY))
    generic = emit_assembly(module, 2, cpu="generic")
    assert "%xmm" in generic and "%ymm" not in generic and "%zmm" not in generic
    v3 = emit_assembly(module, 2, cpu="x86-64-v3")
    assert "%ymm" in v3 and "%zmm" not in v3


@pytest.mark.parametrize("cpu", ["generic", "x86-64-v3"])
def test_jit_for_a_level_runs(cpu):
    if cpu != "generic" and not _host_features().get("avx2"):
        pytest.skip("this CPU has no AVX2")
    module = parse_module(textwrap.dedent(AXPY))
    jit = compile_module(module, 2, cpu=cpu)
    x = np.arange(37, dtype=np.float32)
    got, want = np.ones(37, np.float32), np.ones(37, np.float32)
    jit.axpy(x, got, np.float32(0.5))
    interpret(module, "axpy", x, want, np.float32(0.5))
    np.testing.assert_array_equal(got, want)


def test_passes_size_code_for_the_cpu_compiled_for(red_file, capsys):
    """`--cpu` reaches the passes through the model module's `irkit.target` attribute: the
    loops and the BLIS nest of a library for x86-64-v3 use vectors of 8 floats (AVX2's
    256-bit registers), for generic of 4 (SSE2), whatever this machine has; a native build
    carries no attribute and uses this machine's width. Built for x86-64-v3 and run here, it
    computes what the interpreter does."""
    from irkit.target import host, of
    widths = {}
    for cpu in ("x86-64-v3", "generic", "native"):
        out = red_file.parent / f"red-{cpu}.mlir"
        assert irkit_compile([str(red_file), "--emit=loop", f"--cpu={cpu}", "-o",
                              str(out)]) == 0
        text = out.read_text()
        # the arithmetic's vectors (a transpose's shuffles join several into longer ones)
        widths[cpu] = {int(w) for w in re.findall(
            r"= (?:math\.fma|arith\.mulf|arith\.addf) [^\n]*: vector<(\d+)xf32>", text)}
        assert ("irkit.target = {" in text) == (cpu != "native")
        assert of(parse_module(text).regions[0].blocks[0].first) == \
            llvm_cpu.pass_target(cpu)
    assert max(widths["x86-64-v3"]) == 8 and max(widths["generic"]) == 4
    assert max(widths["native"]) == host().lanes(4)
    if not _host_features().get("avx2"):
        pytest.skip("this CPU has no AVX2")
    lib = red_file.parent / "v3.so"
    assert irkit_compile([str(red_file), "-o", str(lib), "--cpu=x86-64-v3", "--no-cache"]) == 0
    x = np.random.default_rng(2).standard_normal((45, 96)).astype(np.float32)
    got, want = irkit.load(lib).forward(x=x), irkit.load_model(red_file).forward(x=x)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


SMOOTH = """
model smooth {
  input x: f32[N, 96]
  param w: f32[96, 16] = normal(std=0.1, seed=4)
  h = x @ w
  e = exp(h)
  t = tanh(h)
  l = log(h * h + 1.0)
  output e, t, l
}
"""


@pytest.mark.parametrize("cpu, fused", [("generic", False), ("x86-64-v3", True)])
def test_fma_only_where_the_cpu_has_it(tmp_path, cpu, fused):
    """x86-64's baseline has no fused multiply-add: the matmul and the polynomial math
    multiply and add (`mulps`, `addps`), never calling the C library's `fmaf` per lane; on
    x86-64-v3 they fuse (`vfmadd`). The target attribute says which."""
    from irkit.target import of
    (tmp_path / "smooth.irk").write_text(textwrap.dedent(SMOOTH))
    for emit in ("loop", "asm"):
        assert irkit_compile([str(tmp_path / "smooth.irk"), f"--emit={emit}", f"--cpu={cpu}",
                              "-o", str(tmp_path / emit)]) == 0
    loops = (tmp_path / "loop").read_text()
    asm = (tmp_path / "asm").read_text()
    assert of(parse_module(loops).regions[0].blocks[0].first).fma is fused
    assert ("math.fma" in loops) is fused
    assert "fmaf" not in asm
    assert ("vfmadd" in asm) is fused
    if not fused:
        assert "mulps" in asm and "addps" in asm


def test_a_malformed_target_attribute_is_an_error():
    from irkit.diagnostics import IRError
    from irkit.target import of
    module = parse_module('module attributes {irkit.target = {name = "x", vector_bits = 256 '
                          ': i64}} {\n}')
    with pytest.raises(IRError, match="'irkit.target' must be a dictionary"):
        of(module)


def _fake_host(monkeypatch, cpu: str = "fake-haswell") -> None:
    """This CPU seen as one with exactly x86-64-v3's features."""
    features = cpu_target("x86-64-v3")["features"]
    monkeypatch.setattr(llvm_cpu, "host_cpu", lambda: (cpu, features))


def test_jit_refuses_code_this_cpu_cannot_run(monkeypatch):
    _fake_host(monkeypatch)
    with pytest.raises(BackendError, match="compiled for cpu x86-64-v4 here: this CPU lacks "
                                           "avx512f, avx512bw"):
        compile_module(parse_module(textwrap.dedent(AXPY)), 2, cpu="x86-64-v4")


@pytest.fixture(scope="module")
def red_file(tmp_path_factory):
    if find_c_compiler() is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("cpu_targets")
    (folder / "red.irk").write_text(textwrap.dedent(REDUCE))
    return folder / "red.irk"


def test_a_library_for_generic_runs(red_file):
    lib = red_file.parent / "generic.so"
    assert irkit_compile([str(red_file), "-o", str(lib), "--cpu=generic"]) == 0
    meta = json.loads(lib.with_suffix(".so.json").read_text())
    assert meta["target"]["cpu"] == "x86-64"
    x = np.random.default_rng(1).standard_normal((33, 96)).astype(np.float32)
    got, want = irkit.load(lib).forward(x=x), irkit.load_model(red_file).forward(x=x)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_a_library_for_x86_64_v4_is_refused_by_a_cpu_without_avx512(red_file, monkeypatch):
    lib = red_file.parent / "v4.so"
    assert irkit_compile([str(red_file), "-o", str(lib), "--cpu=x86-64-v4"]) == 0
    _fake_host(monkeypatch)
    with pytest.raises(ValueError, match=r"v4\.so was built for CPU x86-64-v4 with features "
                                         r"this CPU \(fake-haswell\) lacks: \+avx512f, "
                                         r"\+avx512bw, \+avx512cd, \+avx512dq, \+avx512vl; "
                                         r"rebuild it here \(irkit-compile --cpu=native\)"):
        irkit.load(lib)


_C_PROGRAM = r"""
#include <stdio.h>
#include "all.h"
/* irkit_init's code and message, then the code of a _run call made without it. */
int main(void) {
  int rc = irkit_init(0);
  printf("%d\n%s\n", rc, irkit_last_error());
  float x[96] = {0}, s[1], m[1], h[8];
  irkit_memref_f32_2d dx = {x, x, 0, {1, 96}, {96, 1}}, dh = {h, h, 0, {1, 8}, {8, 1}};
  irkit_memref_f32_1d ds = {s, s, 0, {1}, {1}}, dm = {m, m, 0, {1}, {1}};
  printf("%d\n", red_forward_run(&dx, &ds, &dm, &dh));
  return 0;
}
"""


def test_c_init_refuses_a_cpu_without_the_features(red_file, monkeypatch):
    """A library recording every feature the C check knows: irkit_init names exactly those
    that LLVM does not detect on this CPU (which validates the CPUID table against LLVM's
    detection, bit by bit, for this machine), and a _run call refuses too."""
    listed = sorted(library_c._CPUID_FEATURES)
    real = library.library_metadata

    def recording_all(*args, **kwargs):
        meta = real(*args, **kwargs)
        meta["target"]["features"] = ",".join("+" + f for f in listed)
        return meta
    monkeypatch.setattr(library, "library_metadata", recording_all)
    folder = red_file.parent
    lib = folder / "all.so"
    assert irkit_compile([str(red_file), "-o", str(lib)]) == 0
    monkeypatch.undo()
    exe = folder / "all_main"
    (folder / "all_main.c").write_text(_C_PROGRAM)
    proc = subprocess.run([find_c_compiler(), "-std=c11", "-Wall", "-Werror", f"-I{folder}",
                           str(folder / "all_main.c"), str(lib), "-o", str(exe),
                           f"-Wl,-rpath,{folder}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rc, message, run_rc = out.stdout.splitlines()
    host = _host_features()
    lacking = [f for f in listed if not host.get(f)]
    if not lacking:
        assert (rc, run_rc) == ("0", "0")
        return
    assert (rc, run_rc) == ("2", "2")           # IRKIT_ERROR_CPU
    cpu = llvm_cpu.host_cpu()[0]
    assert message == (f"this library was compiled for CPU {cpu}, and this CPU lacks "
                       f"{', '.join(lacking)}: rebuild it with irkit-compile --cpu=native "
                       "(this machine) or --cpu=generic")
