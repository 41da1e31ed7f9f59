"""What the loop transformations need to know about the CPU they compile for.

A target here is a small description, not a code generator (tinygrad's renderers declare
vector width and registers the same way): the width of a vector register in bits and how
many there are. The vectorizer sizes its vectors from it (`lanes`: 16 f32 in a 512-bit
register, 8 in a 256-bit one), and a register-blocking schedule may size its tiles from the
register count.

It lives in the core, below the passes, because a pass must be able to read it without
importing a backend (layering: passes are below backends). `host()` reads the features LLVM
detects on this machine (llvmlite's `get_host_cpu_features`, the same detection the CPU
backend builds its target machine from), so code vectorized for the host and code compiled
for it agree on which registers exist. `from_features` makes one from any feature set, for
a `--cpu` other than the host's.

Compiling for another CPU (`irkit-compile --cpu=x86-64-v3`), the passes must size their code
for that CPU, not this one: vectors of 8 floats and register tiles for 16 registers on AVX2,
where an AVX-512 host would give 16 and 32 (LLVM then splits every vector in two and spills
the tiles: the MLP 784-256-10 step at B=128, an x86-64-v3 library run on this machine, took
2.87 ms sized for AVX-512 and 1.38 sized for AVX2). The driver says so in the IR, as MLIR's
target attributes do: the model module's `irkit.target` attribute (`attribute`), which
every pass reads through `of(op)` (the innermost module around `op` that has one, else
`host()`), so that `irkit-opt` on the IR sizes it the same way.

It says whether the CPU has a fused multiply-add (`fma`). x86-64's baseline (`--cpu=generic`,
SSE2) has none: there LLVM turns every `math.fma` into a call to the C library's `fmaf`, per
lane: that MLP step took 85 ms on this machine. Without one, the BLIS micro-kernel multiplies
and adds, and the polynomial math is written for a separate multiply and add (its own
reduction constants; `math-polynomial-approximation`): 4.3 ms, where the native build takes
1.2.

It also says how large the last-level cache is: a store stream larger than that cannot stay
in cache for a later reader anyway, so `vector-streaming-stores` writes it around the cache
(non-temporal stores, no read-for-ownership). `host()` reads Linux's cache description
(`/sys/devices/system/cpu/cpu0/cache`); where there is none, `DEFAULT_LLC_BYTES`. It counts
at most `MAX_LLC_SHARE` of it: a server's last-level cache is shared by all its cores and,
in a virtual machine, by other tenants, none of which Linux shows inside one. A 2-vCPU
Xeon VM reported 480 MiB; sized by that, the 40 MB output of `e = d + (a + b) * c` (10M
float32, bench/run.py's `fused`) was stored through the cache: 10.1 ms on 1 thread and 4.95
on 2, against 7.98 and 3.89 ms stored around it (same process, alternated, medians). 32 MiB
is the last-level cache one core group owns on the machines measured before (an AMD EPYC's
CCD), where the streams of that workload were already written around it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from irkit.attributes import BoolAttr, DictionaryAttr, IntegerAttr, StringAttr
from irkit.diagnostics import IRError
from irkit.types import I1, I64

if TYPE_CHECKING:
    from irkit.ir import Operation

#: the last-level cache assumed where the machine does not say (a server part's L3): large,
#: so that an unknown machine keeps ordinary stores for all but huge outputs
DEFAULT_LLC_BYTES = 32 << 20
#: the most of the last-level cache `host()` counts on (module docstring)
MAX_LLC_SHARE = 32 << 20


@dataclass(frozen=True)
class Target:
    """A CPU's vector registers: `vector_bits` wide, `vector_registers` of them; its
    last-level cache, `llc_bytes`; whether it has a fused multiply-add instruction, `fma`."""

    name: str
    vector_bits: int
    vector_registers: int
    llc_bytes: int = DEFAULT_LLC_BYTES
    fma: bool = True

    def lanes(self, element_bytes: int) -> int:
        """How many elements of `element_bytes` bytes fill one vector register (at least 1)."""
        return max(1, self.vector_bits // (8 * element_bytes))


def power_of_two_pieces(n: int, most: int | None = None) -> list[int]:
    """Widths that add up to `n`, each a power of two (and at most `most`, rounded down to
    one), largest first: how `n` lanes split into vectors of legal sizes (6: 4, 2; 10: 8,
    2; 16 at most 8: 8, 8)."""
    out = []
    width = 1 << (max(n if most is None else most, 1).bit_length() - 1)
    while n:
        while width > n:
            width >>= 1
        out.append(width)
        n -= width
    return out


#: (feature, bits, registers), widest first: the first feature a CPU has decides
_VECTOR_ISAS = (
    ("avx512f", 512, 32),
    ("avx", 256, 16),
    ("neon", 128, 32),
    ("sse2", 128, 16),
)
#: features (LLVM's names) that bring a fused multiply-add instruction: x86's FMA3 (every
#: x86-64-v3 CPU) and AVX-512's own, and the FP of ARMv8
_FMA_FEATURES = ("fma", "avx512f", "fp-armv8")
#: a CPU without any of them: scalar code, one lane
SCALAR = Target("scalar", 0, 0, fma=False)

#: the sizes of a BLIS nest that a cost model picks from a target and a tuner may override
#: (`linalg-matmul-blis`; `irkit-compile --autotune`), and the module attribute carrying the
#: overrides: `blis.configs = [{ordinal = N : i64, <knob> = N : i64, ...}]`
SCHEDULE_KNOBS = ("mr", "nr", "mc", "kc", "nc")
SCHEDULE_ATTRIBUTE = "blis.configs"


def from_features(name: str, features: dict[str, bool],
                  llc_bytes: int = DEFAULT_LLC_BYTES) -> Target:
    """The target of a CPU with `features` (LLVM's names: `avx512f`, `avx`, `neon`, ...)."""
    fma = any(features.get(f) for f in _FMA_FEATURES)
    for feature, bits, registers in _VECTOR_ISAS:
        if features.get(feature):
            return Target(name, bits, registers, llc_bytes, fma)
    return Target(SCALAR.name, 0, 0, llc_bytes, fma)


def cache_bytes(cache_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int:
    """The size of the highest-level data or unified cache Linux describes under
    `cache_dir` (`index*/level`, `type`, `size` as "32768K"), or `DEFAULT_LLC_BYTES`."""
    best = (0, DEFAULT_LLC_BYTES)
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    for index in sorted(cache_dir.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
            n = int(size[:-1]) * units[size[-1]] if size[-1:] in units else int(size)
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and n > 0:
            best = max(best, (level, n))
    return best[1]


@functools.cache
def host() -> Target:
    """This machine's target, as LLVM detects it, its cache at most `MAX_LLC_SHARE`."""
    import llvmlite.binding as llvm
    return from_features(llvm.get_host_cpu_name(), dict(llvm.get_host_cpu_features()),
                         min(cache_bytes(), MAX_LLC_SHARE))


#: the unit attribute `loop-vectorize` puts on each function it has run on: its loops are as
#: vectorized as irkit makes them, and the LLVM backend keeps LLVM's own loop vectorizer off
#: them (loop-vectorize's docstring); named here, below both, as `TARGET_ATTRIBUTE` is
VECTORIZED_ATTRIBUTE = "irkit.vectorized"

#: the module attribute naming the CPU the passes size code for where it is not this
#: machine (module docstring): {name = "x86-64-v3", vector_bits = 256 : i64,
#: vector_registers = 16 : i64, llc_bytes = 33554432 : i64, fma = true}; `fma` may be left
#: out (then true, as irkit assumed before the attribute said; the drivers always write it)
TARGET_ATTRIBUTE = "irkit.target"
_FIELDS = ("vector_bits", "vector_registers", "llc_bytes")


def attribute(target: Target) -> DictionaryAttr:
    """The `irkit.target` attribute describing `target`."""
    return DictionaryAttr({"name": StringAttr(target.name),
                           **{f: IntegerAttr(getattr(target, f), I64) for f in _FIELDS},
                           "fma": BoolAttr(target.fma)})


def of(op: Operation) -> Target:
    """The target `op` is compiled for: the `irkit.target` attribute of `op` or the innermost
    op around it that has one, else this machine's (`host`). A malformed attribute is an
    error at its op, not a silent default."""
    while op is not None:
        attr = op.attributes.get(TARGET_ATTRIBUTE)
        if attr is not None:
            return _parse(attr, op)
        op = op.parent_op
    return host()


def _parse(attr, op: Operation) -> Target:
    values = attr.value if isinstance(attr, DictionaryAttr) else None
    fma = values.get("fma", BoolAttr(True)) if values is not None else None
    if values is None or not isinstance(values.get("name"), StringAttr) or \
            set(values) - {"fma"} != {"name", *_FIELDS} or \
            not all(isinstance(values[f], IntegerAttr) and values[f].value >= 0
                    for f in _FIELDS) or \
            not (isinstance(fma, IntegerAttr) and fma.type == I1):
        raise IRError(f"'{TARGET_ATTRIBUTE}' must be a dictionary {{name = \"...\", "
                      f"{', '.join(f + ' = N : i64' for f in _FIELDS)}[, fma = true|false]}}"
                      f" (N >= 0), got {attr}", op.location)
    return Target(values["name"].value, *(values[f].value for f in _FIELDS), bool(fma.value))
