"""A model's large variables on huge pages (irkit.runtime.param_pages).

- `place` copies the arrays of at least MIN_BYTES side by side into one mapping that starts
  at a huge page, values and dtypes kept, each at a cache line; smaller ones are the same
  objects;
- on Linux with transparent huge pages not off, the kernel reports that mapping eligible
  for them (/proc/self/smaps' THPeligible), and, where they are given only on advice, not
  a fresh mapping nobody advised;
- a model's large variables are placed at load, when assigned and when restored, and an
  assignment still leaves the replaced array alone.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import numpy as np
import pytest

import irkit
from irkit.runtime import param_pages
from irkit.runtime.param_pages import ALIGN, HUGE_PAGE, MIN_BYTES

MODEL = """
model wide {
  input x: f32[B, 512]
  input labels: i32[B]
  param w: f32[512, 256] = normal(std=0.05, seed=1)
  param b: f32[256] = zeros
  loss = cross_entropy(x @ w + b, labels)
  output loss
  train loss with sgd(lr=0.1)
}
"""

needs_advice = pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"),
                                  reason="this platform has no MADV_HUGEPAGE")


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _thp_eligible(a: np.ndarray) -> bool | None:
    """What /proc/self/smaps says of the mapping holding `a` (None: no such report)."""
    smaps = Path("/proc/self/smaps")
    if not smaps.exists():
        return None
    at, inside = _address(a), False
    for line in smaps.read_text().splitlines():
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if m:
            inside = int(m.group(1), 16) <= at < int(m.group(2), 16)
        elif inside and line.startswith("THPeligible:"):
            return line.split()[1] == "1"
    return None


def _thp_off() -> bool:
    path = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return not path.exists() or "[never]" in path.read_text()


@needs_advice
def test_large_arrays_share_one_huge_page_aligned_mapping():
    rng = np.random.default_rng(0)
    big = rng.standard_normal((512, 256)).astype(np.float32)          # 512 KB
    odd = rng.standard_normal(MIN_BYTES // 8 + 3)                      # f64, just large
    small = np.arange(10, dtype=np.int32)
    out = param_pages.place({"big": big, "odd": odd, "small": small})
    assert out["small"] is small
    for name, original in (("big", big), ("odd", odd)):
        assert out[name] is not original and out[name].dtype == original.dtype
        np.testing.assert_array_equal(out[name], original)
        assert out[name].flags.c_contiguous and out[name].flags.writeable
        assert _address(out[name]) % ALIGN == 0
    assert _address(out["big"]) % HUGE_PAGE == 0                       # the first one
    assert _address(out["odd"]) - _address(out["big"]) == big.nbytes  # side by side
    out["big"][0, 0] = 7.0                                             # a copy, not a view
    assert big[0, 0] != 7.0


def _thp_madvise_only() -> bool:
    path = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return path.exists() and "[madvise]" in path.read_text()


@needs_advice
@pytest.mark.skipif(_thp_off(), reason="transparent huge pages are off on this machine")
def test_the_kernel_takes_the_advice():
    big = param_pages.place({"w": np.ones((512, 256), np.float32)})["w"]
    eligible = _thp_eligible(big)
    if eligible is None:
        pytest.skip("/proc/self/smaps reports no THPeligible here")
    assert eligible
    if _thp_madvise_only():
        # the control: the same private mapping with and without the advice, where huge
        # pages come only on advice (a numpy array is no control: malloc may place it in a
        # region numpy advised for an earlier array of 4 MB or more; one was, in a CI run)
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        for advise in (True, False):
            region = mmap.mmap(-1, 3 * HUGE_PAGE, flags=flags)
            try:
                view = np.frombuffer(region, np.uint8)
                start = -view.ctypes.data % HUGE_PAGE
                if advise:
                    region.madvise(mmap.MADV_HUGEPAGE, start, HUGE_PAGE)
                view[start:start + HUGE_PAGE:4096] = 1                  # mapped in
                assert _thp_eligible(view[start:]) is advise
                del view
            finally:
                region.close()


@needs_advice
def test_a_models_large_variables_are_placed_at_load_assignment_and_restore(tmp_path):
    path = tmp_path / "wide.irk"
    path.write_text(MODEL)
    m = irkit.load_model(path, engine="jit", threads=1, cache=False)
    assert _address(m.variables["w"]) % HUGE_PAGE == 0
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 512)).astype(np.float32)
    labels = rng.integers(0, 256, 8).astype(np.int32)
    ref = irkit.load_model(path, engine="interpreter")
    for _ in range(2):
        np.testing.assert_allclose(m.train_step(x=x, labels=labels)["loss"],
                                   ref.train_step(x=x, labels=labels)["loss"], rtol=1e-5)
    np.testing.assert_allclose(m.variables["w"], ref.variables["w"], rtol=1e-5, atol=1e-6)
    old = m.variables["w"]
    kept = old.copy()
    m.variables["w"] = np.zeros((512, 256))                  # f64 in: converted and placed
    assert m.variables["w"].dtype == np.float32 and not m.variables["w"].any()
    assert _address(m.variables["w"]) % HUGE_PAGE == 0
    np.testing.assert_array_equal(old, kept)                 # the replaced array left alone
    m.save(tmp_path / "ckpt.npz")
    m.variables["w"] = np.ones((512, 256), np.float32)
    m.restore(tmp_path / "ckpt.npz")
    assert not m.variables["w"].any() and _address(m.variables["w"]) % HUGE_PAGE == 0
